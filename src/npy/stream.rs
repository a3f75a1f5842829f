//! [`NpyWriter`]: a `.npy` array written block by block: to a path, to any
//! `Write + Seek` (the header patched at the end), or to any `Write` when
//! the shape is known before the first row; and [`rewrite`], the atomic
//! rewrite of a file with a new header.
//!
//! This file is the typed writer and its drop rule; the untyped part
//! (headers, row counts, the temporary file, `rewrite`) is `stream/raw.rs`,
//! which `NpyFile` (`file.rs`) uses without importing the writer.

use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::format::header::{Header, Version};
use crate::options::Order;
use crate::options::{ReadOptions, WriteOptions};
use ndarray::{ArrayRef, Dimension};
use std::fs::File;
use std::io::{Seek, Write};
use std::marker::PhantomData;
use std::path::Path;

pub(crate) mod raw;

use raw::{create_temp, final_header, patch, RawWriter, Rows, Target};

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
    /// The file's dtype must be `T`'s ([`crate::error::RowsError::AppendMismatch`] otherwise);
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
            return Err(Error::Rows(crate::error::RowsError::AppendMismatch {
                what: "dtype",
                expected: format!("`{}`", header.dtype),
                found: format!(
                    "`{}` ({})",
                    T::dtype(),
                    crate::array::element::type_name::<T>()
                ),
            }));
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
    /// [`crate::error::RowsError::RowCountMismatch`]. Dropped unfinished, the writer flushes
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
    ///     Err(Error::Rows(ndnpy::error::RowsError::RowCountMismatch { declared: 3, written: 4 }))
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
    /// alone for a single row. Anything else is [`crate::error::RowsError::AppendMismatch`],
    /// and leaves the writer as it was; a failure part way (an I/O error)
    /// makes later calls fail with [`crate::error::WriteError::IncompleteWrite`].
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
