//! Reading a stack: the bytes of a range gathered shard by shard into one
//! C-order buffer, decoded once by the crate's `.npy` decoder (so a stack
//! reads exactly as one file of the same bytes would); object shards
//! (pickles, no rows at fixed offsets) read whole and concatenated.

use super::{NpyStack, OpenShard};
use crate::array::any::AnyArray;
use crate::array::element::Element;
use crate::array::pyvalue::PyValue;
use crate::error::{Error, Result};
use crate::format::header::{Header, Version};
use crate::io::source::Source;
use crate::npy::mmap::NpyMmap;
use crate::options::ReadOptions;
use ndarray::{Array, ArrayD, ArrayViewMutD, Axis, Dimension, IxDyn, Slice};
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

/// The part of one shard a range needs: the shard, its rows (in the
/// shard's numbering), and where they go in the output.
struct Piece {
    shard: usize,
    rows: Range<usize>,
    at: usize,
}

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
    /// [`crate::error::RowsError::RangeOutOfBounds`]. The bytes of the range are gathered
    /// and then decoded, so memory peaks at about twice the result's.
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
        let header = self.range_header(&rows)?;
        if self.dtype.has_object() {
            // Which element types a pickle converts to is known only once
            // it is read (as for one file); the dimensions are known now.
            if D::NDIM.is_some_and(|n| n != header.shape.len()) {
                return Err(ndim_mismatch::<D>(&header.shape));
            }
            return into_dim(self.read_objects::<T>(rows)?);
        }
        crate::array::decode::check_header::<T, D>(&header)?;
        let bytes = self.gather(&header, rows)?;
        crate::npy::read::read_array_with(
            &header,
            &mut Source::Slice(&bytes),
            &ReadOptions::default(),
        )
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
        let header = self.range_header(&rows)?;
        if self.dtype.has_object() {
            return Ok(AnyArray::Object(self.read_objects::<PyValue>(rows)?));
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
        if map.header().dtype != self.dtype || map.header().shape != expected {
            return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                "{}: the shard is now `{}` of shape {:?}, `{}` of shape {:?} when the stack was opened",
                shard.path.display(),
                map.header().dtype,
                &map.header().shape,
                self.dtype,
                &expected
            ))));
        }
        Ok(map)
    }

    /// The header of rows `rows` as one C-order array.
    fn range_header(&self, rows: &Range<usize>) -> Result<Header> {
        if rows.start > rows.end || rows.end > self.len() {
            return Err(Error::Rows(crate::error::RowsError::RangeOutOfBounds {
                start: rows.start,
                end: rows.end,
                len: self.len(),
            }));
        }
        let mut shape = self.shape.clone();
        shape[self.axis] = rows.len();
        Ok(Header {
            dtype: self.dtype.clone(),
            shape,
            fortran_order: false,
            version: Version::V1,
        })
    }

    /// The shards `rows` touches, with their parts of it.
    fn pieces(&self, rows: &Range<usize>) -> Vec<Piece> {
        let first = self
            .shards
            .partition_point(|s| s.start + s.len <= rows.start);
        self.shards[first..]
            .iter()
            .enumerate()
            .take_while(|(_, s)| s.start < rows.end)
            .filter(|(_, s)| s.len > 0)
            .map(|(k, s)| {
                let from = rows.start.max(s.start);
                let to = rows.end.min(s.start + s.len);
                Piece {
                    shard: first + k,
                    rows: from - s.start..to - s.start,
                    at: from - rows.start,
                }
            })
            .collect()
    }

    /// The data bytes of rows `rows` in C order, as `header` describes them.
    fn gather(&self, header: &Header, rows: Range<usize>) -> Result<Vec<u8>> {
        let item = self.dtype.itemsize().ok_or_else(|| {
            Error::Limit(crate::error::LimitError::LengthOverflow {
                shape: self.shape.iter().map(|&n| n as u64).collect(),
                itemsize: 0,
            })
        })?;
        // Every shard's data was found present when the stack was opened,
        // so this length is bounded by bytes that exist.
        let len = header.data_len()?;
        let mut out = vec![0u8; len];
        let mut shape = header.shape.clone();
        shape.push(item);
        let overflow = || {
            Error::Limit(crate::error::LimitError::LengthOverflow {
                shape: header.shape.iter().map(|&n| n as u64).collect(),
                itemsize: item,
            })
        };
        // Bytes per row of the stacking axis in the output (C order).
        let out_row = header.shape[self.axis + 1..].iter().product::<usize>() * item;
        for piece in self.pieces(&rows) {
            let shard = self.reopen(piece.shard)?;
            let path = &self.shards[piece.shard].path;
            if (self.axis == 0 && !shard.header.fortran_order) || header.shape.len() == 1 {
                // The rows are one run in the shard and one in the output:
                // read straight into place.
                let run = &mut out[piece.at * out_row..(piece.at + piece.rows.len()) * out_row];
                let mut file = &shard.file;
                file.seek(SeekFrom::Start(
                    shard.data_offset + (piece.rows.start * out_row) as u64,
                ))
                .and_then(|_| file.read_exact(run))
                .map_err(|e| Error::Io(e).at_path(path))?;
                continue;
            }
            let part = read_part(shard, self.axis, item, piece.rows.clone())
                .map_err(|e| e.at_path(path))?;
            ArrayViewMutD::from_shape(IxDyn(&shape), &mut out[..])
                .map_err(|_| overflow())?
                .slice_axis_mut(
                    Axis(self.axis),
                    Slice::from(piece.at..piece.at + piece.rows.len()),
                )
                .assign(&part);
        }
        Ok(out)
    }

    /// Rows `rows` of an object stack: each shard read whole (a pickle
    /// has no rows at fixed offsets), cut, and concatenated.
    fn read_objects<T: Element>(&self, rows: Range<usize>) -> Result<ArrayD<T>> {
        let mut parts: Vec<ArrayD<T>> = Vec::new();
        for piece in self.pieces(&rows) {
            let shard = self.reopen(piece.shard)?;
            let path = &self.shards[piece.shard].path;
            let mut source = shard_source(&shard).map_err(|e| e.at_path(path))?;
            let whole: ArrayD<T> = crate::npy::read::read_array_with(
                &shard.header,
                &mut Source::File {
                    file: &mut source,
                    available: shard_available(&shard)?,
                },
                &ReadOptions::default(),
            )?;
            parts.push(
                whole
                    .slice_axis(Axis(self.axis), Slice::from(piece.rows))
                    .to_owned(),
            );
        }
        if parts.is_empty() {
            let mut shape = self.shape.clone();
            shape[self.axis] = rows.len();
            return Ok(ArrayD::from_shape_vec(IxDyn(&shape), Vec::new())
                .expect("an empty range has no elements"));
        }
        if parts.len() == 1 {
            return Ok(parts.pop().expect("one part"));
        }
        let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
        Ok(ndarray::concatenate(Axis(self.axis), &views).expect("the shards' shapes were checked"))
    }
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

/// Rows `rows` along `axis` of an open shard, as bytes: an array of the
/// part's shape plus a last axis of `item` bytes per element (any memory
/// layout). One positioned read of just those rows when they are a run of
/// bytes in the file, else one read of the whole data.
fn read_part(shard: OpenShard, axis: usize, item: usize, rows: Range<usize>) -> Result<ArrayD<u8>> {
    let h = &shard.header;
    let ndim = h.shape.len();
    // The axis whose rows are runs of bytes.
    let run_axis = if h.fortran_order { ndim - 1 } else { 0 };
    let row_bytes = |axis: usize| -> usize {
        h.shape
            .iter()
            .enumerate()
            .filter(|&(a, _)| a != axis)
            .map(|(_, &n)| n)
            .product::<usize>()
            * item
    };
    let (mut shape, offset, cut) = if axis == run_axis {
        let mut shape = h.shape.clone();
        shape[axis] = rows.len();
        (shape, (rows.start * row_bytes(axis)) as u64, None)
    } else {
        (h.shape.clone(), 0, Some(rows))
    };
    let len = shape.iter().product::<usize>() * item;
    let mut bytes = vec![0u8; len];
    let mut file = &shard.file;
    file.seek(SeekFrom::Start(shard.data_offset + offset))?;
    file.read_exact(&mut bytes)?;
    let part = if h.fortran_order {
        // Column-major elements of `item` bytes each: C order of the
        // reversed shape, its file axes then turned back.
        let mut reversed: Vec<usize> = shape.iter().rev().copied().collect();
        reversed.push(item);
        let order: Vec<usize> = (0..ndim).rev().chain([ndim]).collect();
        ArrayD::from_shape_vec(IxDyn(&reversed), bytes).map(|a| a.permuted_axes(IxDyn(&order)))
    } else {
        shape.push(item);
        ArrayD::from_shape_vec(IxDyn(&shape), bytes)
    }
    .map_err(|_| {
        Error::Limit(crate::error::LimitError::LengthOverflow {
            shape: h.shape.iter().map(|&n| n as u64).collect(),
            itemsize: item,
        })
    })?;
    Ok(match cut {
        Some(rows) => part.slice_axis(Axis(axis), Slice::from(rows)).to_owned(),
        None => part,
    })
}
