//! Streaming `.npy` in blocks of rows: [`NpyWriter`] writes an array of
//! unknown length, [`NpyReader`] reads one from any `io::Read`.

use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::format::header::{self, Header, Version};
use crate::io::atomic::TempFile;
use crate::io::checked::{CheckedRead, CheckedWrite};
use crate::io::source::Source;
use crate::npy::growth;
use crate::options::Order;
use crate::options::ReadOptions;
use crate::options::WriteOptions;
use ndarray::{Array, ArrayBase, Data, Dimension};
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::path::Path;

/// Small blocks are gathered into writes of this size.
const BUFFER: usize = 256 << 10;

/// The untyped part of a streaming writer: a header template whose growth
/// axis is patched at the end, rows counted as they are written.
struct RawWriter<W: Write + Seek> {
    out: BufWriter<CheckedWrite<W>>,
    /// The header with the growth axis at 0.
    template: Header,
    axis: usize,
    /// Where the header starts in the writer.
    start: u64,
    header_len: usize,
    rows: usize,
    /// For a path target: the temporary file renamed over it by `finish`.
    temp: Option<TempFile>,
}

impl<W: Write + Seek> RawWriter<W> {
    /// Writes a placeholder header for `template` (its growth axis is the
    /// one to count). The placeholder has the length of the final header:
    /// NumPy's padding leaves room for the digits of any length.
    fn new(mut writer: W, template: Header, temp: Option<TempFile>) -> Result<Self> {
        let axis = growth::axis(&template.shape, template.fortran_order)?;
        let start = writer.stream_position()?;
        // Placeholder as if the array will be long, which decides NumPy's
        // `fortran_order` flag in the common case (see `final_header`).
        let placeholder = final_header(&template, axis, 2);
        let bytes = placeholder.to_bytes()?;
        let mut out = BufWriter::with_capacity(BUFFER, CheckedWrite(writer));
        out.write_all(&bytes)?;
        Ok(RawWriter {
            out,
            template,
            axis,
            start,
            header_len: bytes.len(),
            rows: 0,
            temp,
        })
    }

    /// Continues an array whose header (`header_len` bytes at the writer's
    /// start) records `header`: rows go after the data, and the header is
    /// left as it is until `finish`.
    fn resume(mut writer: W, header: Header, header_len: usize, data_end: u64) -> Result<Self> {
        let axis = growth::axis(&header.shape, header.fortran_order)?;
        writer.seek(SeekFrom::Start(data_end))?;
        Ok(RawWriter {
            out: BufWriter::with_capacity(BUFFER, CheckedWrite(writer)),
            rows: header.shape[axis],
            template: header,
            axis,
            start: 0,
            header_len,
            temp: None,
        })
    }

    /// Patches the header with the row count and leaves the writer after
    /// the data.
    fn finish(self) -> Result<(W, Option<TempFile>)> {
        let header = final_header(&self.template, self.axis, self.rows);
        header.data_len()?;
        let bytes =
            growth::header_at_len(&header, self.header_len).ok_or_else(|| Error::NoHeaderRoom {
                needed: growth::min_header_len(&header),
                available: self.header_len,
            })?;
        let mut writer = self.out.into_inner().map_err(|e| e.into_error())?.0;
        let end = writer.stream_position()?;
        writer.seek(SeekFrom::Start(self.start))?;
        CheckedWrite(&mut writer).write_all(&bytes)?;
        writer.seek(SeekFrom::Start(end))?;
        writer.flush()?;
        Ok((writer, self.temp))
    }
}

/// The header for `rows` rows: `np.save` marks Fortran-order data
/// `fortran_order: True` only when it is not also C-contiguous.
fn final_header(template: &Header, axis: usize, rows: usize) -> Header {
    let mut header = growth::with_len(template, axis, rows);
    header.fortran_order = template.fortran_order && growth::numpy_fortran_flag(&header.shape);
    header
}

/// Creates the temporary file that becomes `path` at the end, with `len`
/// bytes reserved when known. The one place this module makes temporary
/// files.
fn create_temp(path: &Path, len: u64, options: &WriteOptions) -> Result<(File, TempFile)> {
    // Never in place: `rewrite` reads the old file while writing.
    let temp = TempFile::create_replacing(path, len, options)?;
    let file = temp.file().try_clone()?;
    Ok((file, temp))
}

/// Rewrites the file at `path` atomically: `header` as `np.save` pads it,
/// then `data_len` bytes of data from `data`.
pub(crate) fn rewrite(
    path: &Path,
    header: &Header,
    data: &mut dyn Read,
    data_len: u64,
) -> Result<()> {
    let bytes = header.to_bytes()?;
    let (file, temp) = create_temp(
        path,
        bytes.len() as u64 + data_len,
        &WriteOptions::default(),
    )?;
    let mut out = BufWriter::with_capacity(BUFFER, file);
    out.write_all(&bytes)?;
    let copied = io::copy(data, &mut out)?;
    if copied != data_len {
        return Err(Error::TruncatedData {
            expected: data_len,
            found: copied,
        });
    }
    drop(out.into_inner().map_err(|e| e.into_error())?);
    temp.commit()
}

/// Writes a `.npy` array of unknown length block by block, with memory use
/// independent of its size.
///
/// The shape is `(rows, inner_shape...)` in C order, or
/// `(inner_shape..., rows)` in Fortran order: rows grow along the growth
/// axis and come in blocks of any length and memory layout
/// ([`NpyWriter::write`]). [`NpyWriter::finish`] records the final length in
/// the header, which is then byte-identical to what `np.save` writes for the
/// whole array.
///
/// ```
/// use ndarray::{array, Array2};
/// use ndnpy::{NpyWriter, Order, ReadNpy};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("out.npy");
/// let mut w = NpyWriter::<f32>::create(&path, &[3], Order::C)?;
/// w.write(&array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])?;
/// w.write(&array![7.0, 8.0, 9.0])?;            // a single row
/// assert!(!path.exists());                     // appears only at `finish`
/// w.finish()?;
/// let a = Array2::<f32>::read_npy(&path)?;
/// assert_eq!(a.shape(), &[3, 3]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub struct NpyWriter<T: Element, W: Write + Seek = File> {
    raw: RawWriter<W>,
    _element: PhantomData<fn(T)>,
}

impl<T: Element> NpyWriter<T, File> {
    /// Starts writing the `.npy` file at `path`, with rows of `inner_shape`
    /// along the growth axis of `order` (`&[]` for a 1-d array).
    ///
    /// The data goes to a temporary file in the same folder, which
    /// [`NpyWriter::finish`] renames over `path`: until then (and if the
    /// writer is dropped without `finish`) `path` is untouched.
    pub fn create<P: AsRef<Path>>(path: P, inner_shape: &[usize], order: Order) -> Result<Self> {
        Self::create_with(path, inner_shape, order, &WriteOptions::default())
    }

    /// [`NpyWriter::create`] with options: [`WriteOptions::durable`] makes
    /// [`NpyWriter::finish`] `fsync` the file before renaming it over
    /// `path`, and the folder after, as [`crate::WriteNpy::write_npy_with`]
    /// does.
    ///
    /// ```
    /// use ndnpy::{NpyWriter, Order, WriteOptions};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("out.npy");
    /// let durable = WriteOptions::default().durable(true);
    /// let mut w = NpyWriter::<i64>::create_with(&path, &[], Order::C, &durable)?;
    /// w.write(&ndarray::array![1, 2, 3])?;
    /// w.finish()?; // on the disk when this returns
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn create_with<P: AsRef<Path>>(
        path: P,
        inner_shape: &[usize],
        order: Order,
        options: &WriteOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        create_temp(path, 0, options)
            .and_then(|(file, temp)| Self::with_temp(file, inner_shape, order, Some(temp)))
            .map_err(|e| e.at_path(path))
    }
}

impl<T: Element> NpyWriter<T, File> {
    /// Continues the existing `.npy` file at `path` in place: blocks are
    /// written after its data, and [`NpyWriter::finish`] records them in the
    /// header, so readers see the file as it was until then. If the process
    /// dies first, the file reads as before, and the next
    /// [`crate::NpyFile::open_append`] or `NpyWriter::append` writes over
    /// the partial tail.
    ///
    /// The file's dtype must be `T`'s ([`Error::AppendMismatch`] otherwise);
    /// its inner shape and order are the file's. Holds the append lock of
    /// [`crate::NpyFile::open_append`] until finished or dropped.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndnpy::{NpyWriter, Order, ReadNpy};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log.npy");
    /// let mut w = NpyWriter::<i32>::create(&path, &[2], Order::C)?;
    /// w.write(&array![[1, 2]])?;
    /// w.finish()?;
    /// let mut w = NpyWriter::<i32>::append(&path)?;
    /// w.write(&array![[3, 4], [5, 6]])?;
    /// w.finish()?;
    /// assert_eq!(ndarray::Array2::<i32>::read_npy(&path)?, array![[1, 2], [3, 4], [5, 6]]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn append<P: AsRef<Path>>(path: P) -> Result<Self> {
        crate::array::element::check_blockwise::<T>()?;
        let (file, header, data_offset, data_end) =
            crate::npy::file::NpyFile::open_append(path)?.into_parts();
        if header.dtype != T::dtype() {
            return Err(Error::AppendMismatch {
                what: "dtype",
                expected: format!("`{}`", header.dtype),
                found: format!(
                    "`{}` ({})",
                    T::dtype(),
                    crate::array::element::type_name::<T>()
                ),
            });
        }
        Ok(NpyWriter {
            raw: RawWriter::resume(file, header, data_offset as usize, data_end)?,
            _element: PhantomData,
        })
    }
}

impl<T: Element, W: Write + Seek> NpyWriter<T, W> {
    /// Starts writing a `.npy` array to `writer`, at its current position;
    /// [`NpyWriter::finish`] seeks back to patch the header.
    pub fn new(writer: W, inner_shape: &[usize], order: Order) -> Result<Self> {
        Self::with_temp(writer, inner_shape, order, None)
    }

    fn with_temp(
        writer: W,
        inner_shape: &[usize],
        order: Order,
        temp: Option<TempFile>,
    ) -> Result<Self> {
        crate::array::element::check_blockwise::<T>()?;
        let mut shape = inner_shape.to_vec();
        if order.is_fortran() {
            shape.push(0);
        } else {
            shape.insert(0, 0);
        }
        let template = Header {
            dtype: T::dtype(),
            shape,
            fortran_order: order.is_fortran(),
            version: Version::V1,
        };
        Ok(NpyWriter {
            raw: RawWriter::new(writer, template, temp)?,
            _element: PhantomData,
        })
    }

    /// Writes a block of rows: an array of the inner shape with the growth
    /// axis added (any length, any memory layout), or of the inner shape
    /// alone for a single row. Anything else is [`Error::AppendMismatch`].
    pub fn write<S: Data<Elem = T>, D: Dimension>(
        &mut self,
        block: &ArrayBase<S, D>,
    ) -> Result<()> {
        let raw = &mut self.raw;
        let rows = growth::check_block(&raw.template, raw.axis, block)?;
        let total = raw
            .rows
            .checked_add(rows.shape()[0])
            .ok_or_else(|| Error::LengthOverflow {
                shape: raw.template.shape.iter().map(|&d| d as u64).collect(),
                itemsize: raw.template.dtype.itemsize().unwrap_or(0),
            })?;
        let grown = growth::with_len(&raw.template, raw.axis, total);
        growth::check_grown(&grown)?;
        growth::write_rows(&rows, &mut raw.out)?;
        raw.rows = total;
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.raw.rows
    }

    /// Records the final shape in the header and, for [`NpyWriter::create`],
    /// moves the file into place. Returns the writer, positioned after the
    /// data (for `create`, the finished file).
    pub fn finish(self) -> Result<W> {
        let (writer, temp) = self.raw.finish()?;
        if let Some(temp) = temp {
            temp.commit()?;
        }
        Ok(writer)
    }
}

/// Reads a `.npy` array from any `io::Read` (a pipe, a socket, a compressed
/// archive member) a block of rows at a time, with memory bounded by the
/// block.
///
/// ```
/// use ndarray::{array, Array2};
/// use ndnpy::{NpyReader, WriteNpy};
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
    /// An error (a stream that ends early gives [`Error::TruncatedData`])
    /// leaves the reader at an unknown row: it should be dropped.
    pub fn read_rows<T: Element, D: Dimension>(&mut self, n: usize) -> Result<Option<Array<T, D>>> {
        let axis = self.axis.ok_or(Error::NoGrowthAxis)?;
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
