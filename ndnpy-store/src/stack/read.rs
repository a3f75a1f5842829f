//! Reading a remote stack: the pieces of a range the library's plan names,
//! fetched by ranged GETs of just their bytes (in chunks of at most
//! [`Config::chunk_size`](crate::Config::chunk_size), `concurrency` at a
//! time), placed into one buffer behind the range's header, and decoded
//! once by the library, as one `.npy` of the same bytes would be.

use super::RemoteNpyStack;
use crate::error::{Result, StoreError};
use futures::{StreamExt, TryStreamExt};
use ndarray::{Array, ArrayD, Axis, Dimension, IxDyn, Slice};
use ndnpy::{dtype::DType, dtype::Header, pickle::PyValue, AnyArray, Element, ReadNpy};
use std::ops::{Range, RangeBounds};

/// One GET of a range: the piece it serves, where its bytes go in the
/// output when they go straight there, and its bytes in the shard's object.
struct Get {
    piece: usize,
    at: Option<usize>,
    bytes: Range<u64>,
}

impl RemoteNpyStack {
    /// The shape of the whole array.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create_along(dir.path().join("x"), &ndarray::Array2::<u8>::zeros((2, 5)), 1, 2)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// assert_eq!((stack.shape(), stack.axis(), stack.len()), (&[2, 5][..], 1, 5));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.plan.shape()
    }

    /// The dtype of every shard.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1i16], 1)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// assert_eq!(stack.dtype().to_string(), "<i2");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn dtype(&self) -> &DType {
        self.plan.dtype()
    }

    /// The stacking axis: dask's `axis`, 0 for a plain folder.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1i16], 1)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// assert_eq!(ndnpy_store::RemoteNpyStack::open_url(&url).await?.axis(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn axis(&self) -> usize {
        self.plan.axis()
    }

    /// The length of the stacking axis.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1i16, 2, 3], 2)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// assert_eq!(ndnpy_store::RemoteNpyStack::open_url(&url).await?.len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn len(&self) -> usize {
        self.plan.len()
    }

    /// Whether the stacking axis is empty.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::Array1::<u8>::zeros(0), 2)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// assert!(ndnpy_store::RemoteNpyStack::open_url(&url).await?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn is_empty(&self) -> bool {
        self.plan.is_empty()
    }

    /// Whether it is a dask stack (its folder has `info`).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1i16], 1)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// assert!(ndnpy_store::RemoteNpyStack::open_url(&url).await?.is_dask());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn is_dask(&self) -> bool {
        self.plan.is_dask()
    }

    /// The shards in order.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::Array1::<u8>::zeros(5), 3)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// let lens: Vec<usize> = stack.shards().iter().map(|s| s.len()).collect();
    /// assert_eq!(lens, [3, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn shards(&self) -> &[super::RemoteShard] {
        &self.shards
    }

    /// Reads the whole array ([`RemoteNpyStack::read_range`] of every row).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// let a = ndarray::array![[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]];
    /// ndnpy::stack::NpyStack::create(dir.path().join("x"), &a, 2)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// assert_eq!(stack.read::<f64, ndarray::Ix2>().await?, a);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn read<T: Element, D: Dimension>(&self) -> Result<Array<T, D>> {
        self.read_range(..).await
    }

    /// Reads rows `range` of the stacking axis: an array of the stack's
    /// shape with that axis cut to the range, as `NpyStack::read_range`
    /// reads it from a path. Only the shards the range touches are read,
    /// and of each only the bytes of its rows when they are one run (the
    /// stacking axis is the shard's first in C order, its last in Fortran
    /// order; otherwise its data whole). The element type and dimension are
    /// checked before any GET. Object (pickled) stacks are read by
    /// [`RemoteNpyStack::read_any`].
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// let a = ndarray::Array2::from_shape_fn((10, 2), |(i, j)| (i * 2 + j) as u32);
    /// ndnpy::stack::NpyStack::create(dir.path().join("x"), &a, 4)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// let rows = stack.read_range::<u32, ndarray::Ix2>(3..=4).await?; // shards 0 and 1
    /// assert_eq!(rows, ndarray::array![[6, 7], [8, 9]]);
    /// assert!(stack.read_range::<u32, ndarray::Ix2>(9..11).await.is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn read_range<T: Element, D: Dimension>(
        &self,
        range: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        let rows = self.rows(range)?;
        let header = self.plan.range_header(&rows)?;
        let options = &self.config.read_options;
        if self.dtype().has_object() {
            return Err(ndnpy::Error::UnsupportedDType {
                dtype: self.dtype().descr(),
                reason:
                    "a pickled object array has no rows at fixed offsets: read it with read_any"
                        .into(),
            }
            .into());
        }
        // The type and dimensions checked on a header of no rows: the
        // library's refusal, before anything is fetched.
        let mut none = header.clone();
        none.shape[self.axis()] = 0;
        Array::<T, D>::from_npy_bytes_with(&none.to_bytes()?, options)?;
        let bytes = self.gather(&header, rows).await?;
        Ok(Array::from_npy_bytes_with(&bytes, options)?)
    }

    /// Reads the whole array whatever its dtype, object stacks included.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1u16, 2, 3], 2)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// let ndnpy::AnyArray::U16(a) = stack.read_any().await? else { panic!() };
    /// assert_eq!(a.into_raw_vec_and_offset().0, [1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn read_any(&self) -> Result<AnyArray> {
        self.read_range_any(..).await
    }

    /// Reads rows `range` whatever the dtype: fixed-size data as
    /// [`RemoteNpyStack::read_range`] reads it, an object stack's shards
    /// (pickles, no rows at fixed offsets) whole, then cut and joined.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1u16, 2, 3], 2)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// assert_eq!(stack.read_range_any(1..3).await?.shape(), [2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn read_range_any(&self, range: impl RangeBounds<usize>) -> Result<AnyArray> {
        let rows = self.rows(range)?;
        let header = self.plan.range_header(&rows)?;
        if self.dtype().has_object() {
            return Ok(AnyArray::Object(self.read_objects(&header, rows).await?));
        }
        let bytes = self.gather(&header, rows).await?;
        Ok(AnyArray::from_npy_bytes_with(
            &bytes,
            &self.config.read_options,
        )?)
    }

    /// The rows a range names, refused past the end.
    fn rows(&self, range: impl RangeBounds<usize>) -> Result<Range<usize>> {
        crate::npy::rows_in(range, self.len())
    }

    /// The `.npy` bytes of rows `rows`: `header`, then the C-order data
    /// gathered from the pieces' GETs.
    async fn gather(&self, header: &Header, rows: Range<usize>) -> Result<Vec<u8>> {
        let head = header.to_bytes()?;
        // Every shard's data was found present when the stack was opened,
        // so this length is bounded by bytes that exist.
        let len = header.data_len()?;
        let out_row = len.checked_div(rows.len()).unwrap_or(0);
        let pieces = self.plan.pieces(&rows);
        let chunk = self.config.chunk_size.max(1);
        let mut gets = Vec::new();
        for (k, piece) in pieces.iter().enumerate() {
            let npy = &self.shards[piece.shard].npy;
            let need = self.plan.piece_bytes(npy.header(), piece)?;
            let data = npy.base + npy.data_offset();
            if self.plan.direct(npy.header()) {
                // A run into a run: in chunks, each straight into place.
                let mut from = need.range.start;
                while from < need.range.end {
                    let to = need.range.end.min(from + chunk);
                    gets.push(Get {
                        piece: k,
                        at: Some(piece.at * out_row + (from - need.range.start) as usize),
                        bytes: data + from..data + to,
                    });
                    from = to;
                }
            } else {
                gets.push(Get {
                    piece: k,
                    at: None,
                    bytes: data + need.range.start..data + need.range.end,
                });
            }
        }
        let mut out = vec![0u8; head.len() + len];
        out[..head.len()].copy_from_slice(&head);
        let pieces = &pieces;
        let mut arrived = futures::stream::iter(gets)
            .map(|get| async move {
                let npy = &self.shards[pieces[get.piece].shard].npy;
                let bytes = npy.object.get(get.bytes.clone()).await?;
                Ok::<_, StoreError>((get, bytes))
            })
            .buffer_unordered(self.config.get_concurrency().max(1));
        let data = &mut out[head.len()..];
        while let Some((get, bytes)) = arrived.try_next().await? {
            let piece = &pieces[get.piece];
            match get.at {
                Some(at) => data[at..at + bytes.len()].copy_from_slice(&bytes),
                None => {
                    let npy = &self.shards[piece.shard].npy;
                    self.plan.place(data, header, npy.header(), piece, &bytes)?
                }
            }
        }
        drop(arrived);
        Ok(out)
    }

    /// Rows `rows` of an object stack: each shard it touches read whole
    /// (its pickle), cut, and joined.
    async fn read_objects(&self, header: &Header, rows: Range<usize>) -> Result<ArrayD<PyValue>> {
        let axis = Axis(self.axis());
        let mut parts = Vec::new();
        for piece in self.plan.pieces(&rows) {
            let npy = &self.shards[piece.shard].npy;
            let AnyArray::Object(whole) = npy.read_any().await? else {
                return Err(
                    ndnpy::Error::Header(ndnpy::error::HeaderError::BadShape(format!(
                        "{}: an object shard read as another dtype",
                        self.shards[piece.shard].path
                    )))
                    .into(),
                );
            };
            parts.push(whole.slice_axis(axis, Slice::from(piece.rows)).to_owned());
        }
        if parts.len() == 1 {
            return Ok(parts.pop().expect("one part"));
        }
        if parts.is_empty() {
            return Ok(
                ArrayD::from_shape_vec(IxDyn(&header.shape), Vec::new()).map_err(|e| {
                    ndnpy::Error::Header(ndnpy::error::HeaderError::BadShape(e.to_string()))
                })?,
            );
        }
        let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
        Ok(ndarray::concatenate(axis, &views).map_err(|e| {
            ndnpy::Error::Header(ndnpy::error::HeaderError::BadShape(e.to_string()))
        })?)
    }
}
