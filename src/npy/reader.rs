//! [`NpyReader`]: a `.npy` array read from any `io::Read` a block of rows
//! at a time.

use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::format::header::{self, Header};
use crate::io::checked::CheckedRead;
use crate::io::source::Source;
use crate::npy::growth;
use crate::options::ReadOptions;
use ndarray::{Array, Dimension};
use std::io::Read;

/// Reads a `.npy` array from any `io::Read` (a pipe, a socket, a compressed
/// archive member) a block of rows at a time, with memory bounded by the
/// block.
///
/// ```
/// use ndarray::{array, Array2};
/// use ndnpy::{npy::NpyReader, WriteNpy};
///
/// let bytes = array![[1u8, 2], [3, 4], [5, 6]].to_npy_bytes()?;
/// let mut r = NpyReader::new(&bytes[..])?;
/// assert_eq!(r.header().shape, vec![3, 2]);
/// let mut blocks = Vec::new();
/// while let Some(block) = r.read_rows::<u8, ndarray::Ix2>(2)? {
///     blocks.push(block);
/// }
/// assert_eq!(blocks, vec![array![[1, 2], [3, 4]], array![[5, 6]]]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub struct NpyReader<R: Read> {
    reader: CheckedRead<R>,
    header: Header,
    axis: Option<usize>,
    /// Rows not yet read (for a 0-d array, its one element).
    left: usize,
    /// The limits the reader was made with, applied to every block.
    options: ReadOptions,
}

impl<R: Read> NpyReader<R> {
    /// Reads the header from `reader`, leaving it at the data.
    ///
    /// ```
    /// use ndnpy::{npy::NpyReader, WriteNpy};
    ///
    /// let bytes = ndarray::Array2::<f32>::zeros((5, 2)).to_npy_bytes()?;
    /// let r = NpyReader::new(&bytes[..])?;
    /// assert_eq!((r.header().shape.clone(), r.rows_left()), (vec![5, 2], 5));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn new(reader: R) -> Result<Self> {
        Self::new_with(reader, &ReadOptions::default())
    }

    /// [`NpyReader::new`] with explicit limits, which apply to every
    /// [`NpyReader::read_rows`] (the stream limit to each block).
    pub fn new_with(reader: R, options: &ReadOptions) -> Result<Self> {
        let mut reader = CheckedRead(reader);
        let (header, _) = header::read_preamble(&mut reader, options)?;
        header.data_len()?;
        let axis = growth::axis(&header.shape, header.fortran_order).ok();
        let left = axis.map_or(1, |axis| header.shape[axis]);
        Ok(NpyReader {
            reader,
            header,
            axis,
            left,
            options: *options,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Rows along the growth axis not yet read.
    pub fn rows_left(&self) -> usize {
        self.left
    }

    /// Reads the next (up to) `n` rows along the growth axis, or `None` when
    /// all rows have been read. Each block has the file's shape with the
    /// growth axis cut to the rows it holds, in the file's order.
    ///
    /// An error (a stream that ends early gives [`crate::error::DataError::TruncatedData`])
    /// leaves the reader at an unknown row: it should be dropped.
    pub fn read_rows<T: Element, D: Dimension>(&mut self, n: usize) -> Result<Option<Array<T, D>>> {
        let axis = self
            .axis
            .ok_or(Error::Rows(crate::error::RowsError::NoGrowthAxis))?;
        crate::array::decode::check_header::<T, D>(&self.header)?;
        if self.left == 0 {
            return Ok(None);
        }
        let take = n.min(self.left);
        let sub = growth::with_len(&self.header, axis, take);
        let mut source = Source::stream_with(&mut self.reader, &self.options);
        let block = crate::npy::read::read_array_with(&sub, &mut source, &self.options)?;
        self.left -= take;
        Ok(Some(block))
    }

    /// The underlying reader, positioned after the rows read so far.
    pub fn into_inner(self) -> R {
        self.reader.0
    }
}
