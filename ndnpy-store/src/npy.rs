//! A `.npy` object: its header from one ranged GET, then the whole array by
//! parallel ranged GETs, any run of rows by one GET, or any dtype (object
//! arrays included) through the library's runtime-typed reader.

use crate::config::Config;
use crate::error::{Result, StoreError};
use crate::location::Location;
use crate::object::Object;
use crate::parallel::{zeroed, AbortOnDrop, HeldSlot};
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use ndarray::{Array, Dimension, ShapeBuilder};
use ndnpy::{dtype::Header, types::LayoutElement, AnyArray, Element, ReadNpy};
use object_store::GetRange;
use std::ops::{Bound, Range, RangeBounds};
use std::sync::Arc;

/// Bytes asked for by the first request: the preamble and header of any
/// ordinary file, and the first rows.
pub(crate) const PREFIX_LEN: u64 = 64 << 10;

/// A `.npy` file in object storage, its header read.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy::WriteNpy;
/// use ndnpy_store::{Location, RemoteNpy};
/// use object_store::{memory::InMemory, ObjectStoreExt};
/// use std::sync::Arc;
///
/// let store = Arc::new(InMemory::new());
/// let bytes = ndarray::Array2::<f32>::ones((100, 4)).to_npy_bytes()?;
/// store.put(&"w.npy".into(), bytes.into()).await?;
///
/// let npy = RemoteNpy::open(&Location::new(store, "w.npy")).await?;
/// assert_eq!(npy.header().shape, [100, 4]);
/// let rows = npy.read_range::<f32, ndarray::Ix2>(10..20).await?;
/// assert_eq!(rows.dim(), (10, 4));
/// # Ok::<(), ndnpy_store::StoreError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct RemoteNpy {
    pub(crate) object: Object,
    /// Where the `.npy` starts in the object (an archive member's offset)
    /// and how many bytes it has there.
    pub(crate) base: u64,
    extent: u64,
    header: Header,
    /// The preamble and header as stored.
    head: Bytes,
    /// The axis whose rows are contiguous: 0 in C order, the last in
    /// Fortran order; `None` for a 0-d array.
    axis: Option<usize>,
    /// Bytes per row of that axis (0 for object arrays).
    row_bytes: u64,
}

impl RemoteNpy {
    /// Opens the `.npy` object at `location`: one ranged GET of its first
    /// 64 KiB (a second only when the header is longer).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{write_npy, Location, RemoteNpy};
    /// # let at = Location::parse("memory:///a.npy")?;
    /// # write_npy(&at, &ndarray::Array2::<f64>::zeros((3, 2))).await?;
    /// // The header only: nothing of the data is read yet.
    /// let npy = RemoteNpy::open(&at).await?;
    /// assert_eq!(npy.header().shape, [3, 2]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn open(location: &Location) -> Result<RemoteNpy> {
        Self::open_with(location, Config::default()).await
    }

    /// Opens the `.npy` object a URL names ([`Location::parse`]).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{write_npy, Location, RemoteNpy};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let url = format!("file://{}", dir.path().join("a.npy").display());
    /// write_npy(&Location::parse(&url)?, &ndarray::array![1i16, 2]).await?;
    /// assert_eq!(RemoteNpy::open_url(&url).await?.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn open_url(url: &str) -> Result<RemoteNpy> {
        Self::open(&Location::parse(url)?).await
    }

    /// Like [`RemoteNpy::open`], with request sizes, parallelism and limits.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{write_npy, Location, RemoteNpy};
    /// # let at = Location::parse("memory:///a.npy")?;
    /// # write_npy(&at, &ndarray::Array1::<f32>::zeros(50_000)).await?;
    /// use ndnpy_store::Config;
    /// // 200 kB in four 64 KiB GETs, all in flight at once.
    /// let npy = RemoteNpy::open_with(&at, Config::default().chunk_size(64 << 10).concurrency(4)).await?;
    /// assert_eq!(npy.read::<f32, ndarray::Ix1>().await?.len(), 50_000);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn open_with(location: &Location, config: Config) -> Result<RemoteNpy> {
        Self::open_prefix(location, config, PREFIX_LEN).await
    }

    /// Like [`RemoteNpy::open_with`], its first GET of `prefix` bytes (a
    /// stack's shards: their headers, not their first rows).
    pub(crate) async fn open_prefix(
        location: &Location,
        config: Config,
        prefix: u64,
    ) -> Result<RemoteNpy> {
        let (object, first) = Object::open(
            location.store.clone(),
            location.path.clone(),
            GetRange::Bounded(0..prefix),
            config,
        )
        .await?;
        let extent = object.size();
        Self::from_first(object, 0, extent, first).await
    }

    /// The `.npy` file stored at `base..base + extent` of `object` (a stored
    /// archive member), whose first bytes `first` have been fetched.
    pub(crate) async fn from_first(
        object: Object,
        base: u64,
        extent: u64,
        first: Bytes,
    ) -> Result<RemoteNpy> {
        let options = object.config.read_options;
        let (header, offset, bytes) = match parse(&first, &options) {
            Ok((header, offset)) => (header, offset, first),
            Err(ndnpy::Error::Header(ndnpy::error::HeaderError::TruncatedHeader {
                expected,
                ..
            })) if expected > first.len() as u64 && extent >= expected => {
                let rest = object
                    .get(base + first.len() as u64..base + expected)
                    .await?;
                let mut all = first.to_vec();
                all.extend_from_slice(&rest);
                let (header, offset) = parse(&all, &options)?;
                (header, offset, Bytes::from(all))
            }
            Err(e) => return Err(e.into()),
        };
        // A copy: a slice would hold the whole first answer for as long as
        // the reader lives (a stack keeps a reader per shard).
        let head = Bytes::copy_from_slice(&bytes[..offset]);
        let axis = match header.shape.len() {
            0 => None,
            n if header.fortran_order => Some(n - 1),
            _ => Some(0),
        };
        let mut row_bytes = 0;
        if !header.dtype.has_object() {
            let data_len = header.data_len()? as u64;
            let present = extent.saturating_sub(offset as u64);
            if present < data_len {
                return Err(ndnpy::Error::Data(ndnpy::error::DataError::TruncatedData {
                    expected: data_len,
                    found: present,
                })
                .into());
            }
            if let Some(axis) = axis {
                let rows = header.shape[axis] as u64;
                row_bytes = data_len.checked_div(rows).unwrap_or_else(|| {
                    // No rows: any row size will do, compute it anyway.
                    let itemsize = header.dtype.itemsize().unwrap_or(0) as u64;
                    header
                        .shape
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| i != axis)
                        .fold(itemsize, |acc, (_, &d)| acc.saturating_mul(d as u64))
                });
            }
        }
        Ok(RemoteNpy {
            object,
            base,
            extent,
            header,
            head,
            axis,
            row_bytes,
        })
    }

    /// The header.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{write_npy, Location, RemoteNpy};
    /// # let at = Location::parse("memory:///a.npy")?;
    /// # write_npy(&at, &ndarray::Array2::<u32>::zeros((2, 5)).reversed_axes()).await?;
    /// // A transposed array is written as the array it is, in C order.
    /// let h = RemoteNpy::open(&at).await?.header().clone();
    /// assert_eq!((h.shape, h.fortran_order, h.dtype.to_string()), (vec![5, 2], false, "<u4".into()));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The number of rows: the length of axis 0 in C order, of the last axis
    /// in Fortran order (the axis whose rows are contiguous); 1 for a 0-d
    /// array. As [`ndnpy::NpyFile::len`].
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{write_npy, Location, RemoteNpy};
    /// # let at = Location::parse("memory:///a.npy")?;
    /// # write_npy(&at, &ndarray::Array3::<u8>::zeros((4, 2, 2))).await?;
    /// assert_eq!(RemoteNpy::open(&at).await?.len(), 4); // rows of 2×2
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn len(&self) -> usize {
        self.axis.map_or(1, |axis| self.header.shape[axis])
    }

    /// Whether there are no rows.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{write_npy, Location, RemoteNpy};
    /// # let at = Location::parse("memory:///a.npy")?;
    /// # write_npy(&at, &ndarray::Array1::<u8>::zeros(0)).await?;
    /// assert!(RemoteNpy::open(&at).await?.is_empty());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the data starts: the byte length of the preamble and header.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{write_npy, Location, RemoteNpy};
    /// # let at = Location::parse("memory:///a.npy")?;
    /// # write_npy(&at, &ndarray::array![1u8, 2]).await?;
    /// // np.save pads the header so that the data starts on 64 bytes.
    /// assert_eq!(RemoteNpy::open(&at).await?.data_offset() % 64, 0);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn data_offset(&self) -> u64 {
        self.head.len() as u64
    }

    /// The `.npy` file's size in bytes, as the store reported it.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{write_npy, Location, RemoteNpy};
    /// # let at = Location::parse("memory:///a.npy")?;
    /// # write_npy(&at, &ndarray::Array1::<u64>::zeros(10)).await?;
    /// let npy = RemoteNpy::open(&at).await?;
    /// assert_eq!(npy.object_size(), npy.data_offset() + 80);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn object_size(&self) -> u64 {
        self.extent
    }

    /// Reads the whole array by ranged GETs of at most
    /// [`Config::chunk_size`] bytes (whole elements, however long a row),
    /// [`Config::concurrency`] at a time, each decoded into its elements of
    /// the output as it arrives. The output is in the file's order.
    /// Beside the output, at most `2 * concurrency` chunks are held at once
    /// (in transfer or waiting to be copied), so at most
    /// `2 * concurrency * chunk_size` bytes (unless one element is longer
    /// than a chunk: then a chunk is that element). Object arrays are read
    /// by [`RemoteNpy::read_any`].
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{write_npy, Location, RemoteNpy};
    /// # let at = Location::parse("memory:///a.npy")?;
    /// # write_npy(&at, &ndarray::array![[1i64, 2], [3, 4]]).await?;
    /// let npy = RemoteNpy::open(&at).await?;
    /// assert_eq!(npy.read::<i64, ndarray::Ix2>().await?, ndarray::array![[1, 2], [3, 4]]);
    /// // The dimension must match too.
    /// assert!(npy.read::<i64, ndarray::Ix1>().await.is_err());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn read<T: LayoutElement, D: Dimension>(&self) -> Result<Array<T, D>> {
        self.check_fixed_rows("read them with read_any")?;
        let options = self.object.config.read_options;
        let rows = self.len();
        let shape = &self.header.shape;
        let n = self.header.num_elements()?;
        let item = self.header.dtype.itemsize().unwrap_or(0) as u64;
        if self.axis.is_none() || item == 0 || n == 0 || std::mem::size_of::<T>() == 0 {
            // A 0-d or empty array: one small GET at most.
            let body = self.data_range(0, rows).await?;
            return Ok(Array::from_npy_bytes_with(&body, &options)?);
        }
        let dim = D::from_dimension(&ndarray::IxDyn(shape)).ok_or_else(|| {
            ndnpy::Error::NdimMismatch {
                expected: D::NDIM.unwrap_or(shape.len()),
                found: shape.len(),
                shape: shape.clone(),
            }
        })?;
        let mut out = zeroed::<T, D>(dim.set_f(self.header.fortran_order), n)?;
        // The output's memory is in the file's order (C or Fortran, as the
        // header says), as the data is: element `i` of the data is element
        // `i` of this slice. So any run of whole elements of the data, a
        // row or a part of one, decodes into the run of the slice at the
        // same place, as a 1-d array of its own: a chunk need not be whole
        // rows, and a row longer than a chunk (a Fortran `(2**27, 2)` has
        // two rows of 1 GiB) is read in chunks like any other bytes.
        let all = out
            .as_slice_memory_order_mut()
            .expect("zeroed() allocates one contiguous array");
        let mut flat = Header {
            dtype: self.header.dtype.clone(),
            shape: vec![0],
            fortran_order: false,
            version: self.header.version,
        };
        let per_chunk = (self.object.config.chunk_size / item).max(1) as usize;
        let chunks: Vec<Range<usize>> = (0..n)
            .step_by(per_chunk)
            .map(|start| start..(start + per_chunk).min(n))
            .collect();
        let data_start = self.base + self.data_offset();
        // Each GET is a task of its own, started as soon as one of the
        // `concurrency` request slots frees (when a body has arrived, not
        // when it has been copied), so requests keep flowing while this
        // task copies. A chunk also holds one of `2 * concurrency` memory
        // slots from before its GET starts until it has been copied into
        // the output: at most twice `concurrency` chunks are held at once,
        // however slow the copying.
        let concurrency = self.object.config.concurrency;
        let requests = Arc::new(tokio::sync::Semaphore::new(concurrency));
        let memory = Arc::new(tokio::sync::Semaphore::new(2 * concurrency));
        // Never full: a sender holds a memory slot.
        let (sender, mut receiver) = tokio::sync::mpsc::channel(2 * concurrency);
        let count = chunks.len();
        let object = self.object.clone();
        let held = self.object.config.held.clone();
        let producer = tokio::spawn(async move {
            for elements in chunks {
                let Ok(memory) = memory.clone().acquire_owned().await else {
                    return;
                };
                let Ok(request) = requests.clone().acquire_owned().await else {
                    return;
                };
                let object = object.clone();
                let sender = sender.clone();
                let held = held.clone();
                tokio::spawn(async move {
                    let from = data_start + elements.start as u64 * item;
                    let to = data_start + elements.end as u64 * item;
                    let slot = HeldSlot::new(memory, held, to - from);
                    let fetched = object.get(from..to).await;
                    drop(request);
                    // A closed channel: the reader stopped at an error.
                    let _ = sender
                        .send(fetched.map(|bytes| (elements, bytes, slot)))
                        .await;
                });
            }
        });
        // Dropped on return (an error included): no new GETs start.
        let _stop = AbortOnDrop(producer);
        for _ in 0..count {
            let fetched = receiver
                .recv()
                .await
                .ok_or_else(|| StoreError::Io(std::io::Error::other("a GET task ended")))?;
            let (elements, bytes, slot) = fetched?;
            flat.shape[0] = elements.len();
            let mut part = ndarray::ArrayViewMut1::from(&mut all[elements]);
            // The body goes straight from the GET's buffer into the output
            // (one copy; a byte swap, a cast or `bool`s made 0 or 1 on the
            // way, element by element, when the file's dtype is not T's).
            ndnpy::npy::from_data_into(&flat, &bytes, &mut part)?;
            drop(bytes);
            drop(slot);
        }
        Ok(out)
    }

    /// Reads rows `range` (of the axis [`RemoteNpy::len`] counts) with one
    /// GET of exactly their bytes: an array of the file's shape with that
    /// axis cut to the range, in the file's order. As
    /// [`ndnpy::NpyFile::read_range`].
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{write_npy, Location, RemoteNpy};
    /// # let at = Location::parse("memory:///a.npy")?;
    /// # write_npy(&at, &ndarray::Array2::from_shape_fn((1000, 4), |(i, j)| (i * 4 + j) as u32)).await?;
    /// let npy = RemoteNpy::open(&at).await?;
    /// // Rows 998 and 999: one GET of their 32 bytes.
    /// let tail = npy.read_range::<u32, ndarray::Ix2>(998..).await?;
    /// assert_eq!(tail.row(1).to_vec(), [3996, 3997, 3998, 3999]);
    /// // Rows past the end are an error.
    /// assert!(npy.read_range::<u32, ndarray::Ix2>(999..1001).await.is_err());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn read_range<T: Element, D: Dimension>(
        &self,
        range: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        if self.axis.is_none() {
            return Err(ndnpy::Error::Rows(ndnpy::error::RowsError::NoGrowthAxis).into());
        }
        self.check_fixed_rows("read them whole with read_any")?;
        let rows = self.rows(range)?;
        let body = self.data_range(rows.start, rows.end).await?;
        Ok(Array::from_npy_bytes_with(
            &body,
            &self.object.config.read_options,
        )?)
    }

    /// Reads the array whatever its dtype ([`ndnpy::AnyArray`]): fixed-size
    /// data by parallel ranged GETs, an object array's pickle by one GET.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{write_npy, Location, RemoteNpy};
    /// # let at = Location::parse("memory:///a.npy")?;
    /// # write_npy(&at, &ndarray::array![0.5f32]).await?;
    /// let any = RemoteNpy::open(&at).await?.read_any().await?;
    /// assert_eq!(any.dtype().to_string(), "<f4");
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn read_any(&self) -> Result<AnyArray> {
        let options = self.object.config.read_options;
        if self.header.dtype.has_object() {
            let all = self
                .object
                .get_after(
                    &self.head,
                    self.base + self.data_offset()..self.base + self.extent,
                )
                .await?;
            return Ok(AnyArray::from_npy_bytes_with(&all, &options)?);
        }
        let data_len = self.header.data_len()?;
        // Zeroed by the allocator: pages are touched only as bodies land.
        let mut all = vec![0u8; self.head.len() + data_len];
        all[..self.head.len()].copy_from_slice(&self.head);
        let chunk = self.object.config.chunk_size;
        let start = self.base + self.data_offset();
        let ranges = (0..data_len as u64)
            .step_by(chunk as usize)
            .map(|at| at..(at + chunk).min(data_len as u64));
        let mut arrived = futures::stream::iter(ranges)
            .map(|r| async move {
                let bytes = self.object.get(start + r.start..start + r.end).await?;
                Ok::<_, StoreError>((r, bytes))
            })
            .buffer_unordered(self.object.config.concurrency);
        let head = self.head.len();
        while let Some((r, bytes)) = arrived.try_next().await? {
            all[head + r.start as usize..head + r.end as usize].copy_from_slice(&bytes);
        }
        Ok(AnyArray::from_npy_bytes_with(&all, &options)?)
    }

    /// A header for rows `start..end` and the byte range of their data.
    fn chunk(&self, start: usize, end: usize) -> Result<(Header, Range<u64>)> {
        let mut header = self.header.clone();
        let mut from = self.base + self.data_offset();
        let mut to = from;
        match self.axis {
            Some(axis) => {
                header.shape[axis] = end - start;
                from += start as u64 * self.row_bytes;
                to = from + (end - start) as u64 * self.row_bytes;
            }
            None => to += self.header.data_len()? as u64,
        }
        Ok((header, from..to))
    }

    /// The `.npy` bytes of rows `start..end`: a header for that many rows,
    /// then their data, fetched by one GET.
    async fn data_range(&self, start: usize, end: usize) -> Result<Vec<u8>> {
        let (header, range) = self.chunk(start, end)?;
        self.object.get_after(&header.to_bytes()?, range).await
    }

    fn rows(&self, range: impl RangeBounds<usize>) -> Result<Range<usize>> {
        rows_in(range, self.len())
    }

    fn check_fixed_rows(&self, instead: &str) -> Result<()> {
        if self.header.dtype.has_object() {
            return Err(ndnpy::Error::UnsupportedDType {
                dtype: self.header.dtype.descr(),
                reason: format!("a pickled object array has no rows at fixed offsets: {instead}"),
            }
            .into());
        }
        Ok(())
    }
}

/// The header at the start of `bytes` and where the data starts.
pub(crate) fn parse(bytes: &[u8], options: &ndnpy::ReadOptions) -> ndnpy::Result<(Header, usize)> {
    let mut rest = bytes;
    let header = Header::read_from_with(&mut rest, options)?;
    Ok((header, bytes.len() - rest.len()))
}

/// The rows `range` names of `len`, refused past the end (the remote
/// arrays' and stacks' one rule).
pub(crate) fn rows_in(range: impl RangeBounds<usize>, len: usize) -> Result<Range<usize>> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(
            ndnpy::Error::Rows(ndnpy::error::RowsError::RangeOutOfBounds { start, end, len })
                .into(),
        );
    }
    Ok(start..end)
}
