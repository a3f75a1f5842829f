//! [`NpzWriter`]: arrays into an `.npz` archive that NumPy loads.

use crate::any::AnyArray;
use crate::atomic::TempFile;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::write::{npy_header, write_body};
use ndarray::{ArrayBase, Data, Dimension};
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use zip::result::ZipError;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// Members at least this large get zip64 size fields. Deflate can grow
/// incompressible data by a few bytes per 64 KiB block, so the margin below
/// 4 GiB is generous.
const ZIP64_THRESHOLD: u64 = 0xFF00_0000;

/// Stored members' data start at a multiple of this many bytes in the file
/// (when alignment is on); `.npy` headers are multiples of 64 bytes, so the
/// array data is aligned too.
const MEMBER_ALIGN: u16 = 64;

/// Writes arrays into an `.npz` archive, as `np.savez` (stored members) or
/// `np.savez_compressed` (deflated members) does.
///
/// Each array `name` becomes the member `name.npy`, written byte-for-byte as
/// [`crate::WriteNpy`] writes a `.npy` file, so NumPy's `np.load` returns it
/// under the key `name`. Members over 4 GiB get zip64 records
/// automatically.
///
/// - Writing to a path goes to a temporary file beside it that replaces the
///   target only when [`NpzWriter::finish`] succeeds; dropping the writer
///   unfinished, or any failed [`NpzWriter::add`], leaves the target as it
///   was.
/// - A failed `add` (a duplicate name, an I/O error) poisons the writer:
///   later `add`s and `finish` fail with [`Error::IncompleteArchive`], so
///   an archive missing a member is never passed off as complete.
/// - Stored members are aligned by default so that their data starts at a
///   multiple of 64 bytes in the file: [`crate::NpzMmap`] can then view
///   every member without copying. The padding is the zip "data stream
///   alignment" extra field (`0xa11e`, as Android's zipalign pads), which
///   `np.load` and other zip readers skip.
/// - Timestamps are fixed (1980-01-01), so the same arrays give the same
///   bytes.
///
/// ```
/// use ndarray::{array, Array2};
/// use ndnpy::{NpzReader, NpzWriter};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("out.npz");
/// let mut npz = NpzWriter::create_compressed(&path)?.compression_level(9);
/// npz.add("weights", &Array2::<f32>::zeros((64, 64)))?;
/// npz.add("bias", &array![0.5f32, -0.5])?;
/// npz.finish()?;
///
/// let mut back = NpzReader::open(&path)?;
/// assert_eq!(back.names(), ["weights", "bias"]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub struct NpzWriter<W: Write + Seek> {
    // Field order matters for drop: the zip writer finalizes into a closed
    // gate before the temporary file is removed.
    zip: Option<ZipWriter<Gate<W>>>,
    temp: Option<TempFile>,
    open: Arc<AtomicBool>,
    names: HashSet<String>,
    compressed: bool,
    level: Option<u32>,
    aligned: bool,
    failed: Option<String>,
}

impl NpzWriter<BufWriter<File>> {
    /// Creates an archive of stored (uncompressed) members at `path`, like
    /// `np.savez`. The target is replaced only by a successful
    /// [`NpzWriter::finish`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut npz = ndnpy::NpzWriter::create(&path)?;
    /// npz.add("x", &ndarray::array![1, 2, 3])?;
    /// assert!(!path.exists()); // not until finish
    /// npz.finish()?;
    /// assert!(path.exists());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn create<P: AsRef<Path>>(path: P) -> Result<Self> {
        let temp = TempFile::create(path.as_ref(), 0)?;
        let file = temp.file().try_clone()?;
        let mut writer = Self::with_writer(BufWriter::with_capacity(1 << 20, file), false);
        writer.temp = Some(temp);
        Ok(writer)
    }

    /// Creates an archive of deflated members at `path`, like
    /// `np.savez_compressed`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut npz = ndnpy::NpzWriter::create_compressed(&path)?;
    /// npz.add("zeros", &ndarray::Array1::<f64>::zeros(10_000))?;
    /// npz.finish()?;
    /// assert!(std::fs::metadata(&path)?.len() < 1_000);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn create_compressed<P: AsRef<Path>>(path: P) -> Result<Self> {
        Ok(Self::create(path)?.compressed(true))
    }
}

impl<W: Write + Seek> NpzWriter<W> {
    /// Writes an archive of stored members to `writer`.
    ///
    /// ```
    /// use std::io::Cursor;
    ///
    /// let mut npz = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// npz.add("x", &ndarray::array![1u8, 2])?;
    /// let bytes: Vec<u8> = npz.finish_into_inner()?.into_inner();
    /// assert_eq!(&bytes[..4], b"PK\x03\x04");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn new(writer: W) -> Self {
        Self::with_writer(writer, false)
    }

    /// Writes an archive of deflated members to `writer`.
    ///
    /// ```
    /// use std::io::Cursor;
    ///
    /// let mut npz = ndnpy::NpzWriter::new_compressed(Cursor::new(Vec::new()));
    /// npz.add("x", &ndarray::Array1::<u8>::zeros(1000))?;
    /// let bytes = npz.finish_into_inner()?.into_inner();
    /// assert!(bytes.len() < 500);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn new_compressed(writer: W) -> Self {
        Self::with_writer(writer, true)
    }

    fn with_writer(mut writer: W, compressed: bool) -> Self {
        let pos = writer.stream_position().unwrap_or(0);
        let open = Arc::new(AtomicBool::new(true));
        NpzWriter {
            zip: Some(ZipWriter::new(Gate {
                inner: writer,
                open: Arc::clone(&open),
                pos,
            })),
            temp: None,
            open,
            names: HashSet::new(),
            compressed,
            level: None,
            aligned: true,
            failed: None,
        }
    }

    /// Whether members added from now on are deflated (`true`) or stored.
    ///
    /// ```
    /// # use std::io::Cursor;
    /// let npz = ndnpy::NpzWriter::new(Cursor::new(Vec::new())).compressed(true);
    /// ```
    pub fn compressed(mut self, compressed: bool) -> Self {
        self.compressed = compressed;
        self
    }

    /// The deflate level for compressed members, from 1 (fastest) to 9
    /// (smallest); larger values count as 9. The default is zlib's 6, the
    /// level `np.savez_compressed` uses. Has no effect on stored members.
    ///
    /// ```
    /// # use std::io::Cursor;
    /// let npz = ndnpy::NpzWriter::new_compressed(Cursor::new(Vec::new())).compression_level(1);
    /// ```
    pub fn compression_level(mut self, level: u32) -> Self {
        self.level = Some(level.clamp(1, 9));
        self
    }

    /// Whether stored members are padded so that their data starts at a
    /// multiple of 64 bytes in the file (on by default). Without it, members
    /// lie where they fall, as in NumPy's own archives, and
    /// [`crate::NpzMmap::view`] may fail with [`Error::Misaligned`].
    ///
    /// ```
    /// # use std::io::Cursor;
    /// // Byte-for-byte the layout zip tools without alignment produce.
    /// let npz = ndnpy::NpzWriter::new(Cursor::new(Vec::new())).aligned(false);
    /// ```
    pub fn aligned(mut self, aligned: bool) -> Self {
        self.aligned = aligned;
        self
    }

    /// Adds `array` as the member `name.npy`, exactly as
    /// [`crate::WriteNpy`] would write it to a `.npy` file: any element type,
    /// any memory layout (non-contiguous arrays are written in bounded
    /// chunks, without first copying the whole array).
    ///
    /// Fails with [`Error::DuplicateMember`] if `name` was added before.
    /// After any failure the writer is poisoned: further calls and
    /// [`NpzWriter::finish`] return [`Error::IncompleteArchive`].
    ///
    /// ```
    /// use ndarray::{s, Array2};
    /// # use std::io::Cursor;
    ///
    /// let a = Array2::<f64>::ones((100, 100));
    /// let mut npz = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// npz.add("every_other_row", &a.slice(s![..;2, ..]))?;
    /// assert!(matches!(
    ///     npz.add("every_other_row", &a),
    ///     Err(ndnpy::Error::DuplicateMember { .. })
    /// ));
    /// assert!(npz.finish().is_err());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn add<T: Element, S: Data<Elem = T>, D: Dimension>(
        &mut self,
        name: &str,
        array: &ArrayBase<S, D>,
    ) -> Result<()> {
        if let Some(failed) = &self.failed {
            return Err(Error::IncompleteArchive {
                name: failed.clone(),
            });
        }
        let result = self.add_member(name, array);
        if result.is_err() {
            self.failed = Some(name.to_owned());
        }
        result
    }

    /// Adds a runtime-typed array, as [`NpzWriter::add`] adds a typed one.
    ///
    /// ```
    /// # use std::io::Cursor;
    /// use ndnpy::{AnyArray, NpzReader, NpzWriter};
    ///
    /// let any = AnyArray::F32(ndarray::ArrayD::zeros(vec![2, 3]));
    /// let mut npz = NpzWriter::new(Cursor::new(Vec::new()));
    /// npz.add_any("x", &any)?;
    /// let mut back = NpzReader::new(npz.finish_into_inner()?)?;
    /// assert_eq!(back.read_any("x")?, any);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn add_any(&mut self, name: &str, array: &AnyArray) -> Result<()> {
        crate::any::each_variant!(array, a => self.add(name, a), object a => self.add_object(name, a))
    }

    fn add_member<T: Element, S: Data<Elem = T>, D: Dimension>(
        &mut self,
        name: &str,
        array: &ArrayBase<S, D>,
    ) -> Result<()> {
        if self.names.contains(name) {
            return Err(Error::DuplicateMember {
                name: name.to_owned(),
            });
        }
        let header = npy_header(array).to_bytes()?;
        let size = (array.len() as u64)
            .saturating_mul(std::mem::size_of::<T>() as u64)
            .saturating_add(header.len() as u64);
        let options = self.member_options(size);
        let zip = self.zip.as_mut().expect("zip writer present until finish");
        zip.start_file(format!("{name}.npy"), options)
            .map_err(write_error)?;
        write_body(array, &header, zip)?;
        self.names.insert(name.to_owned());
        Ok(())
    }

    /// Adds an object array (`|O`), pickled as `np.save` does (see
    /// [`crate::pickle::to_object_npy_bytes`]).
    ///
    /// ```
    /// # use std::io::Cursor;
    /// use ndnpy::pickle::PyValue;
    /// use ndnpy::{AnyArray, NpzReader, NpzWriter};
    ///
    /// let names = ndarray::array![PyValue::Str("a".into()), PyValue::None];
    /// let mut npz = NpzWriter::new(Cursor::new(Vec::new()));
    /// npz.add_object("names", &names)?;
    /// let mut back = NpzReader::new(npz.finish_into_inner()?)?;
    /// assert_eq!(back.read_any("names")?, AnyArray::Object(names.into_dyn()));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn add_object<S: Data<Elem = crate::pickle::PyValue>, D: Dimension>(
        &mut self,
        name: &str,
        array: &ArrayBase<S, D>,
    ) -> Result<()> {
        if let Some(failed) = &self.failed {
            return Err(Error::IncompleteArchive {
                name: failed.clone(),
            });
        }
        let result = self.add_object_member(name, array);
        if result.is_err() {
            self.failed = Some(name.to_owned());
        }
        result
    }

    fn add_object_member<S: Data<Elem = crate::pickle::PyValue>, D: Dimension>(
        &mut self,
        name: &str,
        array: &ArrayBase<S, D>,
    ) -> Result<()> {
        if self.names.contains(name) {
            return Err(Error::DuplicateMember {
                name: name.to_owned(),
            });
        }
        let bytes = crate::pickle::to_object_npy_bytes(array)?;
        let options = self.member_options(bytes.len() as u64);
        let zip = self.zip.as_mut().expect("zip writer present until finish");
        zip.start_file(format!("{name}.npy"), options)
            .map_err(write_error)?;
        std::io::Write::write_all(zip, &bytes)?;
        self.names.insert(name.to_owned());
        Ok(())
    }

    /// Zip options for a member of `size` bytes.
    fn member_options(&self, size: u64) -> SimpleFileOptions {
        let mut options = SimpleFileOptions::default()
            .large_file(size >= ZIP64_THRESHOLD)
            .unix_permissions(0o644);
        if self.compressed {
            options = options
                .compression_method(CompressionMethod::Deflated)
                .compression_level(self.level.map(i64::from));
        } else {
            options = options.compression_method(CompressionMethod::Stored);
            if self.aligned {
                options = options.with_alignment(MEMBER_ALIGN);
            }
        }
        options
    }

    /// Writes the central directory and, for a path target, moves the
    /// finished archive into place.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut npz = ndnpy::NpzWriter::create(&path)?;
    /// npz.add("x", &ndarray::array![1.0])?;
    /// npz.finish()?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn finish(self) -> Result<()> {
        self.finish_into_inner().map(drop)
    }

    /// Like [`NpzWriter::finish`], and gives back the writer (for a path
    /// target: the flushed handle of the written file).
    ///
    /// ```
    /// use std::io::Cursor;
    ///
    /// let npz = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// let bytes = npz.finish_into_inner()?.into_inner();
    /// assert_eq!(bytes.len(), 22); // an empty archive: just the end record
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn finish_into_inner(mut self) -> Result<W> {
        if let Some(name) = self.failed.take() {
            return Err(Error::IncompleteArchive { name });
        }
        let zip = self.zip.take().expect("zip writer present until finish");
        let mut writer = match zip.finish() {
            Ok(gate) => gate.inner,
            Err(e) => {
                // Nothing more may reach the writer.
                self.open.store(false, Ordering::Relaxed);
                return Err(write_error(e));
            }
        };
        writer.flush()?;
        if let Some(temp) = self.temp.take() {
            temp.commit()?;
        }
        Ok(writer)
    }
}

impl<W: Write + Seek> Drop for NpzWriter<W> {
    fn drop(&mut self) {
        // An unfinished archive stays unfinished: the zip writer would
        // otherwise complete it on drop, passing off a partial archive as
        // whole. Closing the gate makes its final writes go nowhere.
        if self.zip.is_some() {
            self.open.store(false, Ordering::Relaxed);
        }
    }
}

impl<W: Write + Seek> std::fmt::Debug for NpzWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzWriter")
            .field("members", &self.names.len())
            .field("compressed", &self.compressed)
            .field("level", &self.level)
            .field("aligned", &self.aligned)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

fn write_error(err: ZipError) -> Error {
    match err {
        ZipError::Io(e) => Error::Io(e),
        other => Error::Io(io::Error::other(other)),
    }
}

/// The writer under the zip writer. Once closed (the archive is abandoned),
/// writes and seeks succeed without touching the writer, so that the zip
/// writer's finalization on drop cannot complete a partial archive.
struct Gate<W> {
    inner: W,
    open: Arc<AtomicBool>,
    /// Position of the pretend stream once closed.
    pos: u64,
}

impl<W> Gate<W> {
    fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    /// Closes the gate on the first error, so that the zip writer's retry
    /// on drop cannot write a second, complete-looking end of archive
    /// after a reported failure.
    fn guard<T>(&self, result: io::Result<T>) -> io::Result<T> {
        if result.is_err() {
            self.open.store(false, Ordering::Relaxed);
        }
        result
    }
}

impl<W: Write> Write for Gate<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = if self.is_open() {
            let result = self.inner.write(buf).and_then(|n| {
                if n > buf.len() {
                    Err(crate::checked_io::over_report("writer", n, buf.len()))
                } else {
                    Ok(n)
                }
            });
            self.guard(result)?
        } else {
            buf.len()
        };
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.is_open() {
            let result = self.inner.flush();
            self.guard(result)
        } else {
            Ok(())
        }
    }
}

impl<W: Seek> Seek for Gate<W> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        if self.is_open() {
            let result = self.inner.seek(pos);
            self.pos = self.guard(result)?;
        } else {
            self.pos = match pos {
                SeekFrom::Start(n) => n,
                SeekFrom::Current(d) | SeekFrom::End(d) => self.pos.saturating_add_signed(d),
            };
        }
        Ok(self.pos)
    }
}
