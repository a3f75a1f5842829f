//! Reading a stack: the bytes of a range read in one pass into the array
//! where the shards' runs follow each other (`runs.rs`), else gathered
//! shard by shard into one C-order buffer, decoded once by the crate's `.npy` decoder (so a stack
//! reads exactly as one file of the same bytes would); object shards
//! (pickles, no rows at fixed offsets) read whole and concatenated.

use super::runs::Runs;
use super::{NpyStack, OpenShard};
use crate::array::any::AnyArray;
use crate::array::element::Element;
use crate::array::pyvalue::PyValue;
use crate::error::{Error, Result};
use crate::format::header::Header;
use crate::io::source::Source;
use crate::npy::mmap::NpyMmap;
use ndarray::{Array, ArrayD, Axis, Dimension, IxDyn, Slice};
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

impl NpyStack {
    /// Reads the whole array, as one `.npy` file of the same data would
    /// read ([`crate::ReadNpy`]'s conversions and checks).
    ///
    /// ```
    /// use ndarray::{array, Array2};
    /// use ndnpy::stack::NpyStack;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let a = array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]];
    /// let stack = NpyStack::create(dir.path().join("x"), &a, 2)?;
    /// assert_eq!(stack.read::<f32, ndarray::Ix2>()?, a);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read<T: Element, D: Dimension>(&self) -> Result<Array<T, D>> {
        self.read_range(0..self.len())
    }

    /// Reads the rows `rows` of the stacking axis: an array of the stack's
    /// shape with that axis cut to the range.
    ///
    /// Opens only the shards the range touches, each checked again against
    /// what the stack was opened with, and reads of each only the rows it
    /// needs when they are one run of bytes (the stacking axis is the
    /// shard's first in C order or its last in Fortran order); otherwise
    /// the shard's data whole. A range past [`NpyStack::len`] is
    /// [`crate::error::RowsError::RangeOutOfBounds`]. When the shards' runs follow each
    /// other in the result (stacked along the first axis in C order, or
    /// 1-D), they are read one after another straight into the array;
    /// otherwise the bytes of the range are gathered and then decoded, so
    /// memory peaks at about twice the result's.
    ///
    /// ```
    /// use ndarray::{s, Array2};
    /// use ndnpy::stack::NpyStack;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let a = Array2::from_shape_fn((3, 8), |(i, j)| (10 * i + j) as i64);
    /// let stack = NpyStack::create_along(dir.path().join("x"), &a, 1, 3)?; // columns 3 + 3 + 2
    /// let cols: Array2<i64> = stack.read_range(2..7)?;
    /// assert_eq!(cols, a.slice(s![.., 2..7]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_range<T: Element, D: Dimension>(&self, rows: Range<usize>) -> Result<Array<T, D>> {
        let header = self.plan.range_header(&rows)?;
        if self.dtype().has_object() {
            // Which element types a pickle converts to is known only once
            // it is read (as for one file); the dimensions are known now.
            if D::NDIM.is_some_and(|n| n != header.shape.len()) {
                return Err(ndim_mismatch::<D>(&header.shape));
            }
            return into_dim(self.read_objects::<T>(rows)?);
        }
        crate::array::decode::check_header::<T, D>(&header)?;
        if let Some(mut runs) = Runs::new(self, self.plan.pieces(&rows)) {
            let result = crate::npy::read::read_array_with(
                &header,
                &mut runs_source(&mut runs, &header)?,
                &self.options,
            );
            if !runs.not_a_run {
                return result;
            }
        }
        let bytes = self.gather(&header, rows)?;
        crate::npy::read::read_array_with(&header, &mut Source::Slice(&bytes), &self.options)
    }

    /// Reads the whole array whatever its dtype, as
    /// [`AnyArray::read_npy`](crate::AnyArray) reads one file.
    ///
    /// ```
    /// use ndnpy::stack::NpyStack;
    /// use ndnpy::AnyArray;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let stack = NpyStack::create(dir.path().join("x"), &ndarray::array![1u16, 2, 3], 2)?;
    /// let AnyArray::U16(a) = stack.read_any()? else { panic!() };
    /// assert_eq!(a.into_raw_vec_and_offset().0, [1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_any(&self) -> Result<AnyArray> {
        self.read_range_any(0..self.len())
    }

    /// Reads the rows `rows` of the stacking axis whatever the dtype, as
    /// [`NpyStack::read_range`] reads them.
    ///
    /// ```
    /// use ndnpy::stack::NpyStack;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let stack = NpyStack::create(dir.path().join("x"), &ndarray::array![1u16, 2, 3], 2)?;
    /// assert_eq!(stack.read_range_any(1..3)?.shape(), [2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_range_any(&self, rows: Range<usize>) -> Result<AnyArray> {
        let header = self.plan.range_header(&rows)?;
        if self.dtype().has_object() {
            return Ok(AnyArray::Object(self.read_objects::<PyValue>(rows)?));
        }
        if let Some(mut runs) = Runs::new(self, self.plan.pieces(&rows)) {
            let result = AnyArray::read_data(&header, &mut runs_source(&mut runs, &header)?);
            if !runs.not_a_run {
                return result;
            }
        }
        let bytes = self.gather(&header, rows)?;
        AnyArray::read_data(&header, &mut Source::Slice(&bytes))
    }

    /// Maps shard `i` read-only, after checking that it is still the shard
    /// the stack was opened with: a zero-copy view of its part of the stack
    /// ([`NpyMmap::view`]). `i` past the last shard is
    /// [`crate::error::RowsError::RangeOutOfBounds`].
    ///
    /// # Safety
    ///
    /// As for [`NpyMmap::open`]: until the map and its views are dropped,
    /// the shard's file must not be truncated or changed by anyone else.
    ///
    /// ```
    /// use ndnpy::stack::NpyStack;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let stack = NpyStack::create(dir.path().join("x"), &ndarray::array![1.0f64, 2.0, 3.0], 2)?;
    /// // SAFETY: nothing else writes or truncates the shard while it is mapped.
    /// let map = unsafe { stack.shard_mmap(1)? };
    /// assert_eq!(map.view::<f64, ndarray::Ix1>()?, ndarray::array![3.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn shard_mmap(&self, i: usize) -> Result<NpyMmap> {
        let Some(shard) = self.shards.get(i) else {
            return Err(Error::Rows(crate::error::RowsError::RangeOutOfBounds {
                start: i,
                end: i + 1,
                len: self.shards.len(),
            }));
        };
        // SAFETY: the caller upholds `NpyMmap::open`'s contract for this file.
        let map = unsafe { NpyMmap::open(&shard.path)? };
        let expected = self.shard_shape(i);
        if map.header().dtype != *self.dtype() || map.header().shape != expected {
            return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                "{}: the shard is now `{}` of shape {:?}, `{}` of shape {:?} when the stack was opened",
                shard.path.display(),
                map.header().dtype,
                &map.header().shape,
                self.dtype(),
                &expected
            ))));
        }
        Ok(map)
    }

    /// The data bytes of rows `rows` in C order, as `header` describes them:
    /// per shard, the bytes the plan names, read by one positioned read.
    fn gather(&self, header: &Header, rows: Range<usize>) -> Result<Vec<u8>> {
        // Every shard's data was found present when the stack was opened,
        // so this length is bounded by bytes that exist.
        let len = header.data_len()?;
        let mut out = vec![0u8; len];
        let mut buf = Vec::new();
        for piece in self.plan.pieces(&rows) {
            let shard = self.reopen(piece.shard)?;
            let path = &self.shards[piece.shard].path;
            let need = self.plan.piece_bytes(&shard.header, &piece)?;
            let n = (need.range.end - need.range.start) as usize;
            let mut file = &shard.file;
            file.seek(SeekFrom::Start(shard.data_offset + need.range.start))
                .map_err(|e| Error::Io(e).at_path(path))?;
            if self.plan.direct(&shard.header) {
                // A run into a run: read straight into place.
                let item_row = len / rows.len().max(1);
                let run = &mut out[piece.at * item_row..(piece.at + piece.rows.len()) * item_row];
                file.read_exact(run)
                    .map_err(|e| Error::Io(e).at_path(path))?;
                continue;
            }
            buf.resize(n, 0);
            file.read_exact(&mut buf)
                .map_err(|e| Error::Io(e).at_path(path))?;
            self.plan
                .place(&mut out, header, &shard.header, &piece, &buf)
                .map_err(|e| e.at_path(path))?;
        }
        Ok(out)
    }

    /// Rows `rows` of an object stack: each shard read whole (a pickle
    /// has no rows at fixed offsets), cut, and concatenated.
    fn read_objects<T: Element>(&self, rows: Range<usize>) -> Result<ArrayD<T>> {
        let mut parts: Vec<ArrayD<T>> = Vec::new();
        for piece in self.plan.pieces(&rows) {
            let shard = self.reopen(piece.shard)?;
            let path = &self.shards[piece.shard].path;
            let mut source = shard_source(&shard).map_err(|e| e.at_path(path))?;
            let whole: ArrayD<T> = crate::npy::read::read_array_with(
                &shard.header,
                &mut Source::File {
                    file: &mut source,
                    available: shard_available(&shard)?,
                },
                &self.options,
            )?;
            parts.push(
                whole
                    .slice_axis(Axis(self.axis()), Slice::from(piece.rows))
                    .to_owned(),
            );
        }
        if parts.is_empty() {
            let mut shape = self.shape().to_vec();
            shape[self.axis()] = rows.len();
            return Ok(ArrayD::from_shape_vec(IxDyn(&shape), Vec::new())
                .expect("an empty range has no elements"));
        }
        if parts.len() == 1 {
            return Ok(parts.pop().expect("one part"));
        }
        let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
        Ok(ndarray::concatenate(Axis(self.axis()), &views)
            .expect("the shards' shapes were checked"))
    }
}

/// The data of a range read in one pass ([`Runs`]). Trusted to size one
/// allocation: every shard's data was found present when the stack was
/// opened, and is checked again as each shard is reopened.
fn runs_source<'a>(runs: &'a mut Runs<'_>, header: &Header) -> Result<Source<'a>> {
    Ok(Source::Sized {
        reader: runs,
        len: header.data_len()? as u64,
        trusted: true,
    })
}

/// A second handle on a shard's file, for readers that take `&mut File`.
fn shard_source(shard: &OpenShard) -> Result<std::fs::File> {
    let mut file = shard.file.try_clone()?;
    file.seek(SeekFrom::Start(shard.data_offset))?;
    Ok(file)
}

/// The bytes of a shard's file after its header.
fn shard_available(shard: &OpenShard) -> Result<u64> {
    Ok(shard
        .file
        .metadata()?
        .len()
        .saturating_sub(shard.data_offset))
}

/// The error for an array of `shape` read as dimension `D`.
fn ndim_mismatch<D: Dimension>(shape: &[usize]) -> Error {
    Error::NdimMismatch {
        expected: D::NDIM.unwrap_or(shape.len()),
        found: shape.len(),
        shape: shape.to_vec(),
    }
}

/// Converts a dynamic-dimensional array to `D`, refused as a file would be.
fn into_dim<T, D: Dimension>(a: ArrayD<T>) -> Result<Array<T, D>> {
    let shape = a.shape().to_vec();
    a.into_dimensionality::<D>()
        .map_err(|_| ndim_mismatch::<D>(&shape))
}
