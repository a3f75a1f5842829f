//! A `.npy` object: its header from one ranged GET, then the whole array by
//! parallel ranged GETs, any run of rows by one GET, or any dtype (object
//! arrays included) through the library's runtime-typed reader.

use crate::config::Config;
use crate::error::{Result, StoreError};
use crate::location::Location;
use crate::object::Object;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use ndarray::{Array, Axis, Dimension, ShapeBuilder, Slice};
use ndnpy::{AnyArray, Element, Header, LayoutElement, ReadNpy};
use object_store::GetRange;
use std::ops::{Bound, Range, RangeBounds};

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
    object: Object,
    /// Where the `.npy` starts in the object (an archive member's offset)
    /// and how many bytes it has there.
    base: u64,
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
    pub async fn open(location: &Location) -> Result<RemoteNpy> {
        Self::open_with(location, Config::default()).await
    }

    /// Opens the `.npy` object a URL names ([`Location::parse`]).
    pub async fn open_url(url: &str) -> Result<RemoteNpy> {
        Self::open(&Location::parse(url)?).await
    }

    /// Like [`RemoteNpy::open`], with request sizes, parallelism and limits.
    pub async fn open_with(location: &Location, config: Config) -> Result<RemoteNpy> {
        let (object, first) = Object::open(
            location.store.clone(),
            location.path.clone(),
            GetRange::Bounded(0..PREFIX_LEN),
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
            Err(ndnpy::Error::TruncatedHeader { expected, .. })
                if expected > first.len() as u64 && extent >= expected =>
            {
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
        let head = bytes.slice(..offset);
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
                return Err(ndnpy::Error::TruncatedData {
                    expected: data_len,
                    found: present,
                }
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
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The number of rows: the length of axis 0 in C order, of the last axis
    /// in Fortran order (the axis whose rows are contiguous); 1 for a 0-d
    /// array. As [`ndnpy::NpyFile::len`].
    pub fn len(&self) -> usize {
        self.axis.map_or(1, |axis| self.header.shape[axis])
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the data starts: the byte length of the preamble and header.
    pub fn data_offset(&self) -> u64 {
        self.head.len() as u64
    }

    /// The `.npy` file's size in bytes, as the store reported it.
    pub fn object_size(&self) -> u64 {
        self.extent
    }

    /// Reads the whole array by ranged GETs of [`Config::chunk_size`] bytes
    /// (whole rows), [`Config::concurrency`] at a time, each decoded into its
    /// rows of the output as it arrives. The output is in the file's order.
    /// Object arrays are read by [`RemoteNpy::read_any`].
    pub async fn read<T: LayoutElement, D: Dimension>(&self) -> Result<Array<T, D>> {
        self.check_fixed_rows("read them with read_any")?;
        let options = self.object.config.read_options;
        let Some(axis) = self.axis.filter(|_| self.row_bytes > 0) else {
            // A 0-d or empty array: one small GET at most.
            let body = self.data_range(0, self.len()).await?;
            return Ok(Array::from_npy_bytes_with(&body, &options)?);
        };
        let rows = self.len();
        let per_chunk = (self.object.config.chunk_size / self.row_bytes).max(1) as usize;
        // The first chunk fixes the element the output starts filled with
        // (a LayoutElement has no zero), and checks T and D.
        let first_end = per_chunk.min(rows);
        let first: Array<T, D> =
            Array::from_npy_bytes_with(&self.data_range(0, first_end).await?, &options)?;
        let Some(&fill) = first.iter().next() else {
            // Rows of bytes that hold no element of T (a dtype the library
            // maps to an empty shape): no chunks to place, read it at once.
            let all = self.data_range(0, rows).await?;
            return Ok(Array::from_npy_bytes_with(&all, &options)?);
        };
        let mut dim = first.raw_dim();
        dim.slice_mut()[axis] = rows;
        let mut out = Array::from_elem(dim.set_f(self.header.fortran_order), fill);
        out.slice_axis_mut(Axis(axis), Slice::from(0..first_end))
            .assign(&first);
        drop(first);
        let chunks = (first_end..rows)
            .step_by(per_chunk)
            .map(|start| start..(start + per_chunk).min(rows));
        // Each GET is a task of its own, so that bodies keep arriving on
        // the runtime's other threads while this one decodes.
        let mut arrived = futures::stream::iter(chunks)
            .map(|rows| {
                let this = self.clone();
                tokio::spawn(async move {
                    let bytes = this.data_range(rows.start, rows.end).await?;
                    Ok::<_, StoreError>((rows, bytes))
                })
            })
            .buffer_unordered(self.object.config.concurrency)
            .map(|joined| joined.map_err(|e| StoreError::Io(std::io::Error::other(e)))?);
        while let Some((rows, bytes)) = arrived.try_next().await? {
            let mut part = out.slice_axis_mut(Axis(axis), Slice::from(rows));
            ndnpy::from_npy_bytes_into(&bytes, &mut part)?;
        }
        Ok(out)
    }

    /// Reads rows `range` (of the axis [`RemoteNpy::len`] counts) with one
    /// GET of exactly their bytes: an array of the file's shape with that
    /// axis cut to the range, in the file's order. As
    /// [`ndnpy::NpyFile::read_range`].
    pub async fn read_range<T: Element, D: Dimension>(
        &self,
        range: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        if self.axis.is_none() {
            return Err(ndnpy::Error::NoGrowthAxis.into());
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
        let mut all = Vec::with_capacity(self.head.len() + data_len);
        all.extend_from_slice(&self.head);
        all.resize(self.head.len() + data_len, 0);
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

    /// The `.npy` bytes of rows `start..end`: a header for that many rows,
    /// then their data, fetched by one GET.
    async fn data_range(&self, start: usize, end: usize) -> Result<Vec<u8>> {
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
        let head = header.to_bytes()?;
        self.object.get_after(&head, from..to).await
    }

    fn rows(&self, range: impl RangeBounds<usize>) -> Result<Range<usize>> {
        let len = self.len();
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
            return Err(ndnpy::Error::RangeOutOfBounds { start, end, len }.into());
        }
        Ok(start..end)
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
