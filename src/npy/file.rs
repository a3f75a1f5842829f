//! [`NpyFile`]: an open `.npy` file, read in row ranges and grown in place.

use crate::array::element::{Element, LayoutElement};
use crate::error::{Error, Result};
use crate::format::header::{self, Header};
use crate::io::source::Source;
use crate::npy::growth::{self, ReadAt, WriteAt};
use crate::options::ReadOptions;
use ndarray::{Array, ArrayRef, Dimension};
use std::fs::{File, OpenOptions};
use std::io;
use std::ops::{Bound, RangeBounds};
use std::path::{Path, PathBuf};

/// An open `.npy` file: its header, where its data starts, and positioned
/// reads of any row range; opened with [`NpyFile::open_append`], it also
/// grows in place.
///
/// Rows lie along the *growth axis*: axis 0 for C-order files, the last axis
/// for Fortran-order files. Either way a row range is one contiguous run of
/// bytes, read with one positioned read (`pread`) into memory proportional
/// to the range; nothing is mapped.
///
/// ```
/// use ndarray::{array, Array2};
/// use ndnpy::{NpyFile, WriteNpy};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("a.npy");
/// array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]].write_npy(&path)?;
///
/// let mut f = NpyFile::open_append(&path)?;
/// f.append(&array![[7.0f32, 8.0]])?;         // in place: the data does not move
/// assert_eq!(f.len(), 4);
/// let rows: Array2<f32> = f.read_range(1..3)?; // reads only those bytes
/// assert_eq!(rows, array![[3.0, 4.0], [5.0, 6.0]]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug)]
pub struct NpyFile {
    file: File,
    path: PathBuf,
    header: Header,
    data_offset: u64,
    /// The growth axis, `None` for a 0-d array.
    axis: Option<usize>,
    /// Bytes per row along the growth axis.
    row_bytes: u64,
    /// Opened with `open_append` (and holding the append lock).
    append: bool,
    /// `fdatasync` after the rows and after the header of each append.
    durable: bool,
    /// The limits the file was opened with, applied to every read.
    options: ReadOptions,
}

impl NpyFile {
    /// Opens the `.npy` file at `path` for reading and reads its header.
    ///
    /// Reading does not take the append lock, so readers never wait for (or
    /// block) an appender; a reader sees the rows its header snapshot
    /// records ([`NpyFile::refresh`] takes a new snapshot).
    ///
    /// ```
    /// use ndnpy::{NpyFile, WriteNpy};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// ndarray::Array2::<u8>::zeros((10, 3)).write_npy(&path)?;
    /// let f = NpyFile::open(&path)?;
    /// assert_eq!((f.len(), f.data_offset()), (10, 128));
    /// assert_eq!(f.header().shape, [10, 3]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn open<P: AsRef<Path>>(path: P) -> Result<NpyFile> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// [`NpyFile::open`] with explicit limits.
    pub fn open_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<NpyFile> {
        let path = path.as_ref();
        let file = crate::error::open_file(path)?;
        Self::from_file(file, path, options, false).map_err(|e| e.at_path(path))
    }

    /// Opens the `.npy` file at `path` for appending rows in place with
    /// [`NpyFile::append`] (and reading).
    ///
    /// Takes an advisory exclusive lock (`flock`) for as long as the handle
    /// lives, so a second appender, in this process or another, gets
    /// [`crate::error::RowsError::Locked`] instead of interleaving its rows; readers are not
    /// affected. (On platforms without `flock`, and on file systems without
    /// locks, nothing is locked.) While the handle lives, a path write
    /// over the file ([`crate::WriteNpy::write_npy`],
    /// [`crate::NpzWriter::create`], ...) fails with [`crate::error::RowsError::Locked`] and
    /// leaves it as it was; while such a write is under way, this call
    /// fails with [`crate::error::RowsError::Locked`] in turn. Should the path come to name
    /// another file all the same (another program renames a file over it,
    /// or removes it), [`NpyFile::append`] refuses with an error rather
    /// than append rows nobody would read.
    ///
    /// The header must have room to record a growth axis of up to 21 digits
    /// at its present length, which every file written by `np.save` or this
    /// crate has; a header written by other tools may not, which gives
    /// [`crate::error::RowsError::NoHeaderRoom`] (see [`NpyFile::make_appendable`]).
    ///
    /// Bytes after the data (the partial tail of an append that was
    /// interrupted by a crash) are cut off here, so the file continues from
    /// the last complete append.
    pub fn open_append<P: AsRef<Path>>(path: P) -> Result<NpyFile> {
        Self::open_append_with(path, &ReadOptions::default())
    }

    /// [`NpyFile::open_append`] with explicit limits (for example a larger
    /// [`ReadOptions::max_header_len`] for a file of a big record dtype).
    ///
    /// ```
    /// use ndnpy::{NpyFile, ReadOptions, WriteNpy};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// ndarray::array![1u8, 2].write_npy(&path)?;
    /// let options = ReadOptions::default().max_header_len(1 << 20);
    /// NpyFile::open_append_with(&path, &options)?.append(&ndarray::array![3u8])?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn open_append_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<NpyFile> {
        let path = path.as_ref();
        Self::open_append_at(path, options).map_err(|e| e.at_path(path))
    }

    fn open_append_at(path: &Path, options: &ReadOptions) -> Result<NpyFile> {
        let file = loop {
            let file = OpenOptions::new().read(true).write(true).open(path)?;
            crate::io::fs::lock_appender(&file, path)?;
            // `make_appendable` may have replaced the file while we opened it.
            if crate::io::fs::still_at(&file, path)? {
                break file;
            }
        };
        let f = Self::from_file(file, path, options, true)?;
        growth::check_fixed_rows(&f.header)?;
        let axis = f
            .axis
            .ok_or(Error::Rows(crate::error::RowsError::NoGrowthAxis))?;
        check_room(&f.header, axis, f.data_offset)?;
        let end = f.data_end()?;
        let file_len = f.file.metadata()?.len();
        if file_len < end {
            return Err(Error::Data(crate::error::DataError::TruncatedData {
                expected: end - f.data_offset,
                found: file_len - f.data_offset,
            }));
        }
        if file_len > end {
            f.file.set_len(end)?;
        }
        Ok(f)
    }

    /// Rewrites the `.npy` file at `path`, once, so that its header has
    /// NumPy's room to grow: the same dtype, shape and data, with the header
    /// `np.save` would write. Returns `false` (and changes nothing) when the
    /// header already has room.
    ///
    /// The new file is written beside the old one and renamed over it, so a
    /// failure leaves the old file as it was. It holds the append lock of
    /// the old file while copying, so it fails with [`crate::error::RowsError::Locked`] while
    /// an appender is open.
    ///
    /// ```
    /// use ndnpy::NpyFile;
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// # let mut bytes = b"\x93NUMPY\x01\x00\x36\x00{'descr':'<i4','fortran_order':False,'shape':(1,)}".to_vec();
    /// # bytes.resize(63, b' '); bytes.push(b'\n'); bytes.extend_from_slice(&7i32.to_le_bytes());
    /// # std::fs::write(&path, &bytes).unwrap();
    /// // `path` holds a file whose header has no spare room.
    /// assert!(matches!(NpyFile::open_append(&path), Err(ndnpy::Error::Rows(ndnpy::error::RowsError::NoHeaderRoom { .. }))));
    /// assert!(NpyFile::make_appendable(&path)?);
    /// NpyFile::open_append(&path)?.append(&ndarray::array![8i32])?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn make_appendable<P: AsRef<Path>>(path: P) -> Result<bool> {
        Self::make_appendable_with(path, &ReadOptions::default())
    }

    /// [`NpyFile::make_appendable`] with explicit limits for reading the
    /// old header.
    pub fn make_appendable_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<bool> {
        let path = path.as_ref();
        Self::make_appendable_at(path, options).map_err(|e| e.at_path(path))
    }

    fn make_appendable_at(path: &Path, options: &ReadOptions) -> Result<bool> {
        let file = File::open(path)?;
        crate::io::fs::lock_appender(&file, path)?;
        let f = Self::from_file(file, path, options, false)?;
        growth::check_fixed_rows(&f.header)?;
        let axis = f
            .axis
            .ok_or(Error::Rows(crate::error::RowsError::NoGrowthAxis))?;
        if check_room(&f.header, axis, f.data_offset).is_ok() {
            return Ok(false);
        }
        let data_len = f.data_end()? - f.data_offset;
        let available = f.file.metadata()?.len().saturating_sub(f.data_offset);
        if available < data_len {
            return Err(Error::Data(crate::error::DataError::TruncatedData {
                expected: data_len,
                found: available,
            }));
        }
        let mut reader = io::Read::take(
            ReadAt {
                file: &f.file,
                pos: f.data_offset,
            },
            data_len,
        );
        crate::npy::stream::raw::rewrite(path, &f.header, &mut reader, data_len, &f.file)?;
        Ok(true)
    }

    fn from_file(file: File, path: &Path, options: &ReadOptions, append: bool) -> Result<NpyFile> {
        let (header, offset) = header::read_preamble(
            &mut ReadAt {
                file: &file,
                pos: 0,
            },
            options,
        )?;
        header.data_len()?;
        let axis = growth::axis(&header.shape, header.fortran_order).ok();
        let row_bytes = match axis {
            Some(axis) => growth::row_bytes(&header, axis)?,
            None => 0,
        };
        Ok(NpyFile {
            file,
            path: path.to_path_buf(),
            header,
            data_offset: offset as u64,
            axis,
            row_bytes,
            append,
            durable: false,
            options: *options,
        })
    }

    /// The header as it stands (after any appends through this handle).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Where the data starts: the byte length of the preamble and header.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// The length of the growth axis: axis 0 for C order, the last axis for
    /// Fortran order; 1 for a 0-d array (its single element).
    pub fn len(&self) -> usize {
        self.axis.map_or(1, |axis| self.header.shape[axis])
    }

    /// Whether the growth axis is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads the header again, to see rows another process appended since
    /// this handle was opened.
    pub fn refresh(&mut self) -> Result<()> {
        let (header, offset) = header::read_preamble(
            &mut ReadAt {
                file: &self.file,
                pos: 0,
            },
            &self.options,
        )?;
        header.data_len()?;
        let axis = growth::axis(&header.shape, header.fortran_order).ok();
        if offset as u64 != self.data_offset || axis != self.axis {
            return Err(io::Error::other("the file's header changed its length or order").into());
        }
        self.row_bytes = match axis {
            Some(axis) => growth::row_bytes(&header, axis)?,
            None => 0,
        };
        self.header = header;
        Ok(())
    }

    /// Reads the whole array, as [`crate::ReadNpy::read_npy`] does.
    pub fn read<T: Element, D: Dimension>(&self) -> Result<Array<T, D>> {
        self.read_at(&self.header, self.data_offset)
    }

    /// Reads the rows `range` of the growth axis: an array of the file's
    /// shape with the growth axis cut to the range, in the file's order.
    ///
    /// Reads exactly those bytes with positioned reads, into memory
    /// proportional to the range. A range beyond [`NpyFile::len`] is
    /// [`crate::error::RowsError::RangeOutOfBounds`]; a file shorter than its header says is
    /// [`crate::error::DataError::TruncatedData`].
    pub fn read_range<T: Element, D: Dimension>(
        &self,
        range: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        let (sub, offset) = self.range_header(range)?;
        self.read_at(&sub, offset)
    }

    /// Reads the rows `range` of the growth axis into `out`, an array the
    /// caller has (of the range's shape, any memory layout), as
    /// [`crate::npy::ReadNpyInto`] does: exactly those bytes, converted on the
    /// way, with no allocation in proportion to them.
    ///
    /// ```
    /// use ndarray::{s, Array2};
    /// use ndnpy::{NpyFile, WriteNpy};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// Array2::from_shape_fn((100, 3), |(i, j)| (i * 3 + j) as f32).write_npy(&path)?;
    /// let file = NpyFile::open(&path)?;
    /// let mut batch = Array2::<f32>::zeros((10, 3));
    /// file.read_range_into(40..50, &mut batch)?;
    /// assert_eq!(batch[[0, 0]], 120.0);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn read_range_into<T: LayoutElement, D: Dimension>(
        &self,
        range: impl RangeBounds<usize>,
        out: &mut ArrayRef<T, D>,
    ) -> Result<()> {
        let (sub, offset) = self.range_header(range)?;
        self.with_source(offset, |source| {
            crate::array::decode::read_into(&sub, source, &mut out.view_mut())
        })
    }

    /// Runs `read` on the file's bytes from `offset` to its end, read with
    /// positioned reads.
    fn with_source<X>(
        &self,
        offset: u64,
        read: impl FnOnce(&mut Source<'_>) -> Result<X>,
    ) -> Result<X> {
        let available = self.file.metadata()?.len().saturating_sub(offset);
        let mut reader = ReadAt {
            file: &self.file,
            pos: offset,
        };
        read(&mut Source::Sized {
            reader: &mut reader,
            len: available,
            trusted: true,
        })
    }

    /// The header of rows `range` of the growth axis and where they start.
    fn range_header(&self, range: impl RangeBounds<usize>) -> Result<(Header, u64)> {
        let axis = self
            .axis
            .ok_or(Error::Rows(crate::error::RowsError::NoGrowthAxis))?;
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
            return Err(Error::Rows(crate::error::RowsError::RangeOutOfBounds {
                start,
                end,
                len,
            }));
        }
        if self.header.dtype.has_object() {
            return Err(Error::UnsupportedDType {
                dtype: self.header.dtype.descr(),
                reason: "a pickled object array has no rows at fixed offsets: read it whole with NpyFile::read".into(),
            });
        }
        let sub = growth::with_len(&self.header, axis, end - start);
        // In bounds of a header whose byte length fits, so no overflow.
        let offset = self.data_offset + start as u64 * self.row_bytes;
        Ok((sub, offset))
    }

    /// Reads the data of `header` starting at byte `offset`.
    fn read_at<T: Element, D: Dimension>(
        &self,
        header: &Header,
        offset: u64,
    ) -> Result<Array<T, D>> {
        // A pickle is checked by `read_array_with`, which knows which
        // element types an object array can be read as.
        if !header.dtype.has_object() {
            crate::array::decode::check_header::<T, D>(header)?;
        }
        self.with_source(offset, |source| {
            crate::npy::read::read_array_with(header, source, &self.options)
        })
    }

    /// Appends `block` along the growth axis, in place.
    ///
    /// `block` is any array (any memory layout) whose dtype and other
    /// dimensions match the file's; one with a dimension fewer is a single
    /// row. Otherwise [`crate::error::RowsError::AppendMismatch`] says what differs.
    ///
    /// The rows are written after the data first, and only then is the
    /// header rewritten at its existing length to record them, so a process
    /// killed in between leaves a file that every reader sees as it was
    /// before this call (the partial tail is ignored, and cut off by the next
    /// [`NpyFile::open_append`]). When the file was written by `np.save` or
    /// this crate, the new header is byte-identical to what `np.save` writes
    /// for the grown array.
    ///
    /// By default nothing is flushed to the storage device, which protects
    /// against the process dying but not against a power failure (the
    /// kernel may write the header before the rows); see
    /// [`NpyFile::set_durable`].
    pub fn append<T: Element, D: Dimension>(&mut self, block: &ArrayRef<T, D>) -> Result<()> {
        if !self.append {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "the file was opened for reading; use NpyFile::open_append to append",
            )
            .into());
        }
        let axis = self
            .axis
            .ok_or(Error::Rows(crate::error::RowsError::NoGrowthAxis))?;
        let block = block.view();
        let rows = growth::check_block(&self.header, axis, &block)?;
        let new_len = rows.shape()[0]
            .checked_add(self.len())
            .ok_or_else(|| self.overflow())?;
        let grown = growth::with_len(&self.header, axis, new_len);
        growth::check_grown(&grown)?;
        let end = self.data_end()?;
        let header = growth::header_at_len(&grown, self.data_offset as usize).ok_or_else(|| {
            Error::Rows(crate::error::RowsError::NoHeaderRoom {
                needed: growth::min_header_len(&grown),
                available: self.data_offset as usize,
            })
        })?;
        // Rows written into a file the path no longer names would be lost
        // with `Ok` (the library's own path writes do not replace a file an
        // appender holds; anything else may).
        self.check_still_at_path("nothing was appended")?;
        let mut data = WriteAt {
            file: &self.file,
            pos: end,
        };
        growth::write_rows(&rows, &mut crate::io::checked::CheckedWrite(&mut data))?;
        if self.durable {
            self.file.sync_data()?;
        }
        io::Write::write_all(
            &mut WriteAt {
                file: &self.file,
                pos: 0,
            },
            &header,
        )?;
        if self.durable {
            self.file.sync_data()?;
        }
        self.header = grown;
        // Replaced while the rows were going in: they are in a file nobody
        // will read through this path.
        self.check_still_at_path("the rows went into the file it named before")
    }

    /// Refuses to go on when the path this appender was opened at no
    /// longer names its file (something renamed another file over it,
    /// moved or removed it).
    fn check_still_at_path(&self, what: &str) -> Result<()> {
        if crate::io::fs::still_at(&self.file, &self.path).unwrap_or(false) {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{} no longer names the file this appender holds (it was replaced, \
                 moved or removed since NpyFile::open_append); {what}: open it again",
                self.path.display()
            ),
        )
        .into())
    }

    /// Makes every later [`NpyFile::append`] flush the rows to the storage
    /// device (`fdatasync`) before writing the header, and the header after,
    /// so that the file survives a power failure as it survives a crash:
    /// as of the last complete append. Costs two device flushes per append.
    pub fn set_durable(&mut self, durable: bool) {
        self.durable = durable;
    }

    /// Flushes appended rows and the header to the storage device
    /// (`fdatasync`).
    pub fn sync(&self) -> Result<()> {
        self.file.sync_data()?;
        Ok(())
    }

    /// The path the file was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open file (with its append lock), header, data offset and data
    /// end, for a writer that continues the file.
    pub(crate) fn into_parts(self) -> (File, Header, u64, u64) {
        let end = self.data_end().unwrap_or(u64::MAX);
        (self.file, self.header, self.data_offset, end)
    }

    /// The byte offset just past the data the header records.
    fn data_end(&self) -> Result<u64> {
        let rows = match self.axis {
            Some(axis) => self.header.shape[axis] as u64,
            None => 1,
        };
        rows.checked_mul(self.row_bytes)
            .and_then(|n| n.checked_add(self.data_offset))
            .ok_or_else(|| self.overflow())
    }

    fn overflow(&self) -> Error {
        Error::Limit(crate::error::LimitError::LengthOverflow {
            shape: self.header.shape.iter().map(|&d| d as u64).collect(),
            itemsize: self.header.dtype.itemsize().unwrap_or(0),
        })
    }
}

/// Checks that the header can record any growth-axis length (up to 21
/// digits, as NumPy's padding allows) at its present length.
fn check_room(header: &Header, axis: usize, data_offset: u64) -> Result<()> {
    let largest = growth::with_len(header, axis, usize::MAX);
    match growth::header_at_len(&largest, data_offset as usize) {
        Some(_) => Ok(()),
        None => Err(Error::Rows(crate::error::RowsError::NoHeaderRoom {
            needed: growth::min_header_len(&largest),
            available: data_offset as usize,
        })),
    }
}
