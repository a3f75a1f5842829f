//! [`NpyWriter`]: a `.npy` array written block by block: to a path, to any
//! `Write + Seek` (the header patched at the end), or to any `Write` when
//! the shape is known before the first row; and [`rewrite`], the atomic
//! rewrite of a file with a new header.

use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::format::header::{Header, Version, MAGIC};
use crate::io::atomic::TempFile;
use crate::io::checked::CheckedWrite;
use crate::npy::growth;
use crate::options::Order;
use crate::options::{ReadOptions, WriteOptions};
use ndarray::{ArrayRef, Dimension};
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::path::Path;

/// Small blocks are gathered into writes of this size.
const BUFFER: usize = 256 << 10;

/// Writes `bytes` at `start` and comes back to the end: how a writer that
/// seeks records the final shape. A plain function pointer, made where
/// `W: Seek` is known, so that the writer itself needs only `Write` (and
/// [`NpyWriter::new_sized`] takes writers that cannot seek).
type Patch<W> = fn(&mut W, u64, &[u8]) -> io::Result<()>;

fn patch<W: Write + Seek>(writer: &mut W, start: u64, bytes: &[u8]) -> io::Result<()> {
    let end = writer.stream_position()?;
    writer.seek(SeekFrom::Start(start))?;
    CheckedWrite(&mut *writer).write_all(bytes)?;
    check_patched(writer, start, bytes.len())?;
    writer.seek(SeekFrom::Start(end))?;
    Ok(())
}

/// Checks that `len` bytes written after seeking to `start` landed there.
/// A file opened with `append(true)` (`O_APPEND`) moves every write to its
/// end whatever the seek said: the patch would go after the data and the
/// output stay unreadable while `finish` returned `Ok`. Only a position
/// past the patch's end tells that: a character device (`/dev/null`, a
/// terminal) has no position and reports 0 whatever was written.
pub(crate) fn check_patched<W: Seek>(writer: &mut W, start: u64, len: usize) -> io::Result<()> {
    let at = writer.stream_position()?;
    if at > start.saturating_add(len as u64) {
        return Err(io::Error::other(format!(
            "a header rewritten at byte {start} landed elsewhere (the writer \
             is at {at}, not {}): a file opened in append mode writes only at \
             its end; open it without `append(true)`",
            start.saturating_add(len as u64)
        )));
    }
    Ok(())
}

/// Where a writer's bytes go, which decides what dropping it unfinished
/// does (the crate docs' drop rule).
enum Target {
    /// A temporary file that `finish` renames over the path; dropped, it is
    /// removed and the path is left as it was.
    Path(TempFile),
    /// An existing file continued in place ([`NpyWriter::append`]): its
    /// header records the new rows only at `finish`.
    Append,
    /// The caller's writer. Dropped, its rows are flushed; only a writer
    /// of declared rows ([`NpyWriter::new_sized`]) can be complete then.
    Writer,
}

/// How the header learns the row count.
enum Rows<W> {
    /// Patched at `finish`: the header (`header_len` bytes at `start`) is
    /// rewritten with the final shape.
    Patched {
        start: u64,
        header_len: usize,
        patch: Patch<W>,
    },
    /// Written first with the final shape, which declares this many rows.
    Declared(usize),
}

/// The untyped part of a streaming writer: a header template whose growth
/// axis is patched at the end (or declared at the start), rows counted as
/// they are written.
struct RawWriter<W: Write> {
    out: BufWriter<CheckedWrite<W>>,
    /// The header with the growth axis at 0 (patched) or at its declared
    /// length.
    template: Header,
    axis: usize,
    rows: usize,
    mode: Rows<W>,
    target: Target,
    /// A block failed part way: what was written is incomplete.
    failed: bool,
}

impl<W: Write> RawWriter<W> {
    /// Writes a placeholder header for `template` (its growth axis is the
    /// one to count), to be patched by `finish`. The placeholder has the
    /// length of the final header (NumPy's padding leaves room for the
    /// digits of any length) and no magic string, so output left unfinished
    /// (a panic, an error, a killed process) is never read as an array.
    fn patched(mut writer: W, template: Header, target: Target, patch: Patch<W>) -> Result<Self>
    where
        W: Seek,
    {
        let axis = growth::axis(&template.shape, template.fortran_order)?;
        let start = writer.stream_position()?;
        // Placeholder as if the array will be long, which decides NumPy's
        // `fortran_order` flag in the common case (see `final_header`).
        let mut bytes = final_header(&template, axis, 2).to_bytes()?;
        bytes[..MAGIC.len()].fill(0);
        let mut out = BufWriter::with_capacity(BUFFER, CheckedWrite(writer));
        out.write_all(&bytes)?;
        Ok(RawWriter {
            out,
            template,
            axis,
            rows: 0,
            mode: Rows::Patched {
                start,
                header_len: bytes.len(),
                patch,
            },
            target,
            failed: false,
        })
    }

    /// Writes the final header of `header` (whose growth axis declares the
    /// rows to come) and expects exactly that many rows.
    fn sized(writer: W, header: Header) -> Result<Self> {
        let axis = growth::axis(&header.shape, header.fortran_order)?;
        let declared = header.shape[axis];
        let final_header = final_header(&header, axis, declared);
        final_header.data_len()?;
        final_header.check_numpy_limits()?;
        let mut out = BufWriter::with_capacity(BUFFER, CheckedWrite(writer));
        out.write_all(&final_header.to_bytes()?)?;
        Ok(RawWriter {
            out,
            template: header,
            axis,
            rows: 0,
            mode: Rows::Declared(declared),
            target: Target::Writer,
            failed: false,
        })
    }

    /// Checks `block` and writes its rows. A block that does not fit is
    /// refused before anything is written; a failure while writing marks
    /// the writer failed.
    fn write<T: Element, D: Dimension>(&mut self, block: &ArrayRef<T, D>) -> Result<()> {
        if self.failed {
            return Err(Error::IncompleteWrite);
        }
        let block = block.view();
        let rows = growth::check_block(&self.template, self.axis, &block)?;
        let total =
            self.rows
                .checked_add(rows.shape()[0])
                .ok_or_else(|| Error::LengthOverflow {
                    shape: self.template.shape.iter().map(|&d| d as u64).collect(),
                    itemsize: self.template.dtype.itemsize().unwrap_or(0),
                })?;
        match self.mode {
            Rows::Declared(declared) if total > declared => {
                return Err(Error::RowCountMismatch {
                    declared,
                    written: total,
                })
            }
            Rows::Declared(_) => {}
            Rows::Patched { .. } => {
                growth::check_grown(&growth::with_len(&self.template, self.axis, total))?
            }
        }
        if let Err(e) = growth::write_rows(&rows, &mut self.out) {
            self.failed = true;
            return Err(e);
        }
        self.rows = total;
        Ok(())
    }

    /// Records the row count (patches the header, or checks the declared
    /// count) and flushes; gives back the writer, after the data, and the
    /// target.
    fn finish(self) -> Result<(W, Target)> {
        if self.failed {
            return Err(Error::IncompleteWrite);
        }
        let header = match self.mode {
            Rows::Patched { header_len, .. } => {
                let header = final_header(&self.template, self.axis, self.rows);
                header.data_len()?;
                Some(growth::header_at_len(&header, header_len).ok_or_else(|| {
                    Error::NoHeaderRoom {
                        needed: growth::min_header_len(&header),
                        available: header_len,
                    }
                })?)
            }
            Rows::Declared(declared) if declared != self.rows => {
                return Err(Error::RowCountMismatch {
                    declared,
                    written: self.rows,
                })
            }
            Rows::Declared(_) => None,
        };
        let mut writer = self.out.into_inner().map_err(|e| e.into_error())?.0;
        if let (Some(bytes), Rows::Patched { start, patch, .. }) = (header, self.mode) {
            patch(&mut writer, start, &bytes)?;
        }
        writer.flush()?;
        Ok((writer, self.target))
    }
}

impl RawWriter<File> {
    /// Continues an array whose header (`header_len` bytes at the file's
    /// start) records `header`: rows go after the data (at `data_end`), and
    /// the header is left as it is until `finish`.
    fn resume(mut file: File, header: Header, header_len: usize, data_end: u64) -> Result<Self> {
        let axis = growth::axis(&header.shape, header.fortran_order)?;
        file.seek(SeekFrom::Start(data_end))?;
        Ok(RawWriter {
            out: BufWriter::with_capacity(BUFFER, CheckedWrite(file)),
            rows: header.shape[axis],
            template: header,
            axis,
            mode: Rows::Patched {
                start: 0,
                header_len,
                patch: patch::<File>,
            },
            target: Target::Append,
            failed: false,
        })
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
fn create_temp(
    path: &Path,
    len: u64,
    options: &WriteOptions,
    held: Option<&File>,
) -> Result<(File, TempFile)> {
    // Never in place: `rewrite` reads the old file while writing.
    let temp = TempFile::create_replacing(path, len, options, held)?;
    let file = temp.file().try_clone()?;
    Ok((file, temp))
}

/// Rewrites the file at `path` atomically: `header` as `np.save` pads it,
/// then `data_len` bytes of data from `data`. `held` is the file at `path`,
/// open with its appender lock held by the caller.
pub(crate) fn rewrite(
    path: &Path,
    header: &Header,
    data: &mut dyn Read,
    data_len: u64,
    held: &File,
) -> Result<()> {
    let bytes = header.to_bytes()?;
    let (file, temp) = create_temp(
        path,
        bytes.len() as u64 + data_len,
        &WriteOptions::default(),
        Some(held),
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

/// Writes a `.npy` array block by block, with memory use independent of
/// its size: to a path, to any `Write + Seek`, or (when the shape is known
/// before the first row) to any `Write`, such as a pipe, a socket or an
/// HTTP body.
///
/// The shape is `(rows, inner_shape...)` in C order, or
/// `(inner_shape..., rows)` in Fortran order: rows grow along the growth
/// axis and come in blocks of any length and memory layout
/// ([`NpyWriter::write`]). [`NpyWriter::finish`] records the final length in
/// the header (or, for [`NpyWriter::new_sized`], checks that the declared
/// rows came), which is then byte-identical to what `np.save` writes for
/// the whole array.
///
/// # Dropped without `finish`
///
/// As every writer of this crate (see the crate docs, "Writers"), a
/// dropped writer never yields a shorter array than was meant: a loop such
/// as `for b in src { w.write(&b?)? }` that stops on the *source's* error
/// leaves output that no reader accepts. A writer to a path
/// ([`NpyWriter::create`], [`NpyWriter::append`]) leaves the path as it
/// was, and its temporary file is removed. A streamed writer to the
/// caller's `Write` ([`NpyWriter::new`]) leaves its placeholder header
/// without the magic string, with the rows written after it: not a `.npy`
/// file. A sized writer ([`NpyWriter::new_sized`]) flushes what was
/// written: whole if every declared row came, otherwise short data that
/// readers refuse as truncated. Call `finish` to end an array and to learn
/// of errors.
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
#[must_use = "the array is written only by `finish` (dropped, a path is left as it was)"]
pub struct NpyWriter<T: Element, W: Write = File> {
    /// Present until `finish` or drop.
    raw: Option<RawWriter<W>>,
    _element: PhantomData<fn(T)>,
}

impl<T: Element> NpyWriter<T, File> {
    /// Starts writing the `.npy` file at `path`, with rows of `inner_shape`
    /// along the growth axis of `order` (`&[]` for a 1-d array).
    ///
    /// The data goes to a temporary file in the same folder, which
    /// [`NpyWriter::finish`] renames over `path`: until then (and if the
    /// writer is dropped without `finish`) `path` is untouched.
    ///
    /// ```
    /// use ndnpy::{NpyWriter, Order};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("out.npy");
    /// let mut w = NpyWriter::<u8>::create(&path, &[], Order::C)?;
    /// w.write(&ndarray::array![1, 2, 3])?;
    /// drop(w); // not finished: nothing appears
    /// assert!(!path.exists());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
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
        create_temp(path, 0, options, None)
            .and_then(|(file, temp)| {
                let template = template::<T>(inner_shape, order)?;
                let raw = RawWriter::patched(file, template, Target::Path(temp), patch::<File>)?;
                Ok(Self::from_raw(raw))
            })
            .map_err(|e| e.at_path(path))
    }

    /// Continues the existing `.npy` file at `path` in place: blocks are
    /// written after its data, and [`NpyWriter::finish`] records them in the
    /// header, so readers see the file as it was until then. If the writer
    /// is dropped unfinished or the process dies first, the file reads as
    /// before, and the next [`crate::NpyFile::open_append`] or
    /// `NpyWriter::append` writes over the partial tail.
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
        Self::append_with(path, &ReadOptions::default())
    }

    /// [`NpyWriter::append`] with explicit limits for reading the file's
    /// header (as [`crate::NpyFile::open_append_with`]).
    pub fn append_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        crate::array::element::check_blockwise::<T>()?;
        let (file, header, data_offset, data_end) =
            crate::npy::file::NpyFile::open_append_with(path, options)?.into_parts();
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
        let raw = RawWriter::resume(file, header, data_offset as usize, data_end)?;
        Ok(Self::from_raw(raw))
    }
}

impl<T: Element, W: Write + Seek> NpyWriter<T, W> {
    /// Starts writing a `.npy` array to `writer`, at its current position;
    /// [`NpyWriter::finish`] seeks back to patch the header. Until then the
    /// header has no magic string, so an unfinished output is not a `.npy`
    /// file, and a writer dropped without `finish` leaves it so, whatever
    /// rows it wrote (see [`NpyWriter`]).
    ///
    /// `writer` must write where it seeks: a [`File`] opened with
    /// `append(true)` writes only at its end, and `finish` then fails
    /// rather than leave an unreadable file behind an `Ok`.
    ///
    /// ```
    /// use ndarray::{array, Array2};
    /// use ndnpy::{NpyWriter, Order, ReadNpy};
    /// use std::io::Cursor;
    ///
    /// let mut w = NpyWriter::<u16, _>::new(Cursor::new(Vec::new()), &[2], Order::C)?;
    /// w.write(&array![[1, 2], [3, 4]])?;
    /// let bytes = w.finish()?.into_inner();
    /// assert_eq!(Array2::<u16>::from_npy_bytes(&bytes)?, array![[1, 2], [3, 4]]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn new(writer: W, inner_shape: &[usize], order: Order) -> Result<Self> {
        let template = template::<T>(inner_shape, order)?;
        let raw = RawWriter::patched(writer, template, Target::Writer, patch::<W>)?;
        Ok(Self::from_raw(raw))
    }
}

impl<T: Element, W: Write> NpyWriter<T, W> {
    /// Starts writing a `.npy` array of the full `shape` to any `writer`
    /// (a pipe, a socket, an HTTP body: nothing is sought), for when the
    /// shape is known before the first row. The header goes out first, as
    /// `np.save` writes it for that shape; rows along the growth axis of
    /// `order` follow in blocks, and the output is byte-identical to
    /// `np.save`'s for the same array.
    ///
    /// A block that would pass the declared rows is refused, and
    /// [`NpyWriter::finish`] refuses fewer rows, with
    /// [`Error::RowCountMismatch`]. Dropped unfinished, the writer flushes
    /// what was written: a short output that readers refuse as truncated.
    ///
    /// ```
    /// use ndarray::{array, Array2};
    /// use ndnpy::{Error, NpyWriter, Order, ReadNpy, WriteNpy};
    ///
    /// let mut out = Vec::new(); // any `Write`
    /// let mut w = NpyWriter::<f64, _>::new_sized(&mut out, &[3, 2], Order::C)?;
    /// w.write(&array![[1.0, 2.0], [3.0, 4.0]])?;
    /// assert!(matches!(
    ///     w.write(&array![[5.0, 6.0], [7.0, 8.0]]), // 4 rows of 3
    ///     Err(Error::RowCountMismatch { declared: 3, written: 4 })
    /// ));
    /// w.write(&array![5.0, 6.0])?;
    /// w.finish()?;
    /// let whole = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    /// assert_eq!(out, whole.to_npy_bytes()?); // what np.save writes
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn new_sized(writer: W, shape: &[usize], order: Order) -> Result<Self> {
        crate::array::element::check_blockwise::<T>()?;
        let header = Header {
            dtype: T::dtype(),
            shape: shape.to_vec(),
            fortran_order: order.is_fortran(),
            version: Version::V1,
        };
        Ok(Self::from_raw(RawWriter::sized(writer, header)?))
    }

    fn from_raw(raw: RawWriter<W>) -> Self {
        NpyWriter {
            raw: Some(raw),
            _element: PhantomData,
        }
    }

    fn raw(&self) -> &RawWriter<W> {
        self.raw.as_ref().expect("present until finish or drop")
    }

    /// Writes a block of rows: an array of the inner shape with the growth
    /// axis added (any length, any memory layout), or of the inner shape
    /// alone for a single row. Anything else is [`Error::AppendMismatch`],
    /// and leaves the writer as it was; a failure part way (an I/O error)
    /// makes later calls fail with [`Error::IncompleteWrite`].
    ///
    /// Takes any array through `&ArrayRef` (owned arrays and views reach
    /// it by deref).
    ///
    /// ```
    /// use ndarray::{array, s};
    /// use ndnpy::{NpyWriter, Order};
    /// use std::io::Cursor;
    ///
    /// let mut w = NpyWriter::<i32, _>::new(Cursor::new(Vec::new()), &[2], Order::C)?;
    /// let a = array![[1, 2, 3], [4, 5, 6]];
    /// w.write(&a.slice(s![.., ..;2]))?; // a strided view: rows [1, 3] and [4, 6]
    /// assert!(w.write(&a).is_err()); // 3 columns, not 2
    /// assert_eq!(w.rows(), 2);
    /// # let _ = w.finish()?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn write<D: Dimension>(&mut self, block: &ArrayRef<T, D>) -> Result<()> {
        self.raw
            .as_mut()
            .expect("present until finish or drop")
            .write(block)
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.raw().rows
    }

    /// Records the final shape in the header (or checks the rows
    /// [`NpyWriter::new_sized`] declared) and, for [`NpyWriter::create`],
    /// moves the file into place. Returns the writer, positioned after the
    /// data (for `create`, the finished file). On an error a path target is
    /// left as it was.
    pub fn finish(mut self) -> Result<W> {
        let raw = self.raw.take().expect("present until finish or drop");
        let (writer, target) = raw.finish()?;
        if let Target::Path(temp) = target {
            temp.commit()?;
        }
        Ok(writer)
    }
}

/// The header of an empty array whose rows have `inner_shape`, growing
/// along `order`'s growth axis.
fn template<T: Element>(inner_shape: &[usize], order: Order) -> Result<Header> {
    crate::array::element::check_blockwise::<T>()?;
    let mut shape = inner_shape.to_vec();
    if order.is_fortran() {
        shape.push(0);
    } else {
        shape.insert(0, 0);
    }
    Ok(Header {
        dtype: T::dtype(),
        shape,
        fortran_order: order.is_fortran(),
        version: Version::V1,
    })
}

impl<T: Element, W: Write> Drop for NpyWriter<T, W> {
    /// The drop rule (crate docs, "Writers"): a dropped writer never makes
    /// an array of the rows so far. A loop such as `for b in src { w.write(&b?)? }`
    /// that stops on the *source's* error drops the writer, and a header
    /// patched here would record a short array that reads as whole. So a
    /// streamed writer ([`NpyWriter::new`]) keeps its placeholder header
    /// without the magic string; a sized one ([`NpyWriter::new_sized`]) is
    /// flushed, its header already declaring every row, so that short data
    /// is refused as truncated. A path target's temporary file is removed
    /// with it; an append target's header is left as it was.
    fn drop(&mut self) {
        let Some(raw) = self.raw.take() else {
            return;
        };
        let declared = matches!(raw.mode, Rows::Declared(_));
        if declared
            && matches!(raw.target, Target::Writer)
            && !raw.failed
            && !std::thread::panicking()
        {
            // Errors cannot be reported from here: `finish` reports them.
            // With every declared row this is the whole array; with fewer
            // it fails its row check, and the buffer is flushed when `raw`
            // drops.
            let _ = raw.finish();
        }
    }
}

impl<T: Element, W: Write> std::fmt::Debug for NpyWriter<T, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("NpyWriter");
        if let Some(raw) = &self.raw {
            d.field("dtype", &raw.template.dtype.descr())
                .field(
                    "shape",
                    &final_header(&raw.template, raw.axis, raw.rows).shape,
                )
                .field("rows", &raw.rows)
                .field("failed", &raw.failed);
            if let Rows::Declared(declared) = raw.mode {
                d.field("declared_rows", &declared);
            }
        }
        d.finish_non_exhaustive()
    }
}
