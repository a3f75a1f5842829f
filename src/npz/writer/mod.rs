//! [`NpzWriter`]: arrays into an `.npz` archive that NumPy loads.

use super::codec::deflate::compress::DEFAULT_LEVEL;
use super::codec::Codec;
use super::sink::{MemberData, Pool};
use super::zip::write::{Method, ZipOut};
use crate::array::element::Element;
use crate::array::encode::{npy_header, write_body};
use crate::error::{Error, Result};
use crate::io::atomic::TempFile;
use crate::options::WriteOptions;
use ndarray::{ArrayRef, Dimension};
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::path::Path;

mod add;
mod member;
pub use member::NpzMemberWriter;

/// Members at least this large get zip64 size fields. Deflate can grow
/// incompressible data by a few bytes per 64 KiB block, so the margin below
/// 4 GiB is generous.
const ZIP64_THRESHOLD: u64 = 0xFF00_0000;

/// Bytes counted for a member's `.npy` header when choosing zip64.
const HEADER_ALLOWANCE: u64 = 1 << 16;

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
///   was (and removes the temporary file).
/// - Writing to the caller's writer ([`NpzWriter::new`]), a writer dropped
///   without `finish` finishes the archive best-effort, as the `zip`
///   crate's and `ndarray-npy`'s writers do: every member it holds was
///   added whole, so the bytes written are a complete archive of them. Not
///   while panicking, nor after a failed `add`, nor after an
///   [`NpzMemberWriter`] was dropped unfinished (its rows may be short):
///   the archive is then left without its central directory, so that no
///   reader takes it for complete. Call `finish` to learn of errors. (This
///   is the crate's one drop rule: see the crate docs, "Writers".)
/// - A failed `add` (a duplicate name, an I/O error) poisons the writer:
///   later `add`s and `finish` fail with [`crate::error::WriteError::IncompleteArchive`], so
///   an archive missing a member is never passed off as complete.
/// - Stored members are aligned by default so that their data starts at a
///   multiple of 64 bytes in the file: [`crate::NpzMmap`] can then view
///   every member without copying. The padding is the zip "data stream
///   alignment" extra field (`0xa11e`, as Android's zipalign pads), which
///   `np.load` and other zip readers skip.
/// - Timestamps are fixed (1980-01-01), so the same arrays give the same
///   bytes, whatever the number of [`NpzWriter::threads`].
/// - Compressed members are deflated with libdeflate in blocks of 1 MiB on
///   several threads and joined into one standard deflate stream (as
///   `pigz` does): at the default level, no larger than
///   `np.savez_compressed`'s and several times faster (BENCHMARKS.md).
/// - A member too large for memory can be written in blocks of rows with
///   [`NpzWriter::add_streaming`].
///
/// ```
/// use ndarray::{array, Array2};
/// use ndnpy::{npz::Codec, NpzReader, NpzWriter};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("out.npz");
/// // np.savez_compressed, at deflate's smallest level:
/// let mut npz = NpzWriter::create(&path)?.codec(Codec::Deflate { level: 9 });
/// npz.add("weights", &Array2::<f32>::zeros((64, 64)))?;
/// npz.add("bias", &array![0.5f32, -0.5])?;
/// npz.finish()?;
///
/// let mut back = NpzReader::open(&path)?;
/// assert_eq!(back.names(), ["weights", "bias"]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[must_use = "an archive is complete only after `finish` (dropped, a path target is left as it was)"]
pub struct NpzWriter<W: Write + Seek> {
    out: ZipOut<W>,
    temp: Option<TempFile>,
    names: HashSet<String>,
    compressed: bool,
    aligned: bool,
    pool: Pool,
    /// Small compressed members (name, `.npy` bytes) waiting to be
    /// compressed together, one per thread, and written in order.
    queued: Vec<(String, Vec<u8>)>,
    failed: Option<String>,
    /// `finish` began: dropping must not finish again.
    ended: bool,
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
        Self::create_with(path, &WriteOptions::default())
    }

    /// Like [`NpzWriter::create`], with options (such as
    /// [`WriteOptions::durable`]). The path is handled as
    /// [`crate::WriteNpy::write_npy`] documents: a regular file is replaced
    /// atomically; a device such as `/dev/null` or a hard-linked file is
    /// written in place; a FIFO, a pipe or anything else that cannot seek
    /// is refused (a zip archive is written out of order).
    ///
    /// ```
    /// use ndnpy::{NpzWriter, WriteOptions};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut npz = NpzWriter::create_with(&path, &WriteOptions::default().durable(true))?;
    /// npz.add("x", &ndarray::array![1, 2, 3])?;
    /// npz.finish()?; // on the disk when this returns
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn create_with<P: AsRef<Path>>(path: P, options: &WriteOptions) -> Result<Self> {
        let path = path.as_ref();
        Self::create_at(path, options).map_err(|e| e.at_path(path))
    }

    fn create_at(path: &Path, options: &WriteOptions) -> Result<Self> {
        let temp = TempFile::create_with(path, 0, options)?;
        if temp.in_place() {
            check_seekable(temp.file(), path)?;
        }
        let file = temp.file().try_clone()?;
        let mut writer = Self::with_writer(BufWriter::with_capacity(1 << 20, file), false)?;
        writer.temp = Some(temp);
        Ok(writer)
    }
}

/// A zip archive is written out of order (sizes are filled in after each
/// member), so its destination must seek.
fn check_seekable(file: &File, path: &Path) -> Result<()> {
    match (&*file).stream_position() {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::Io(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "cannot write an .npz archive to {}: it cannot seek ({e}); \
                 write to a regular file",
                path.display()
            ),
        ))),
    }
}

impl<W: Write + Seek> NpzWriter<W> {
    /// Writes an archive of stored members to `writer`, from its current
    /// position (a writer whose position cannot be read makes every
    /// [`NpzWriter::add`] fail with [`crate::error::WriteError::IncompleteArchive`]).
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
        Self::infallible(writer, false)
    }

    fn infallible(writer: W, compressed: bool) -> Self {
        let mut failed = None;
        let out = ZipOut::new(writer).unwrap_or_else(|(writer, e)| {
            failed = Some(format!("(the writer's position: {e})"));
            ZipOut::at(writer, 0)
        });
        Self::with_out(out, compressed, failed)
    }

    fn with_writer(writer: W, compressed: bool) -> Result<Self> {
        let out = ZipOut::new(writer).map_err(|(_, e)| Error::Io(e))?;
        Ok(Self::with_out(out, compressed, None))
    }

    fn with_out(out: ZipOut<W>, compressed: bool, failed: Option<String>) -> Self {
        let threads = crate::exec::cores();
        NpzWriter {
            out,
            temp: None,
            names: HashSet::new(),
            compressed,
            aligned: true,
            pool: Pool::new(DEFAULT_LEVEL, threads),
            queued: Vec::new(),
            failed,
            ended: false,
        }
    }

    /// Writes members added from now on with `codec`, the one choice of
    /// compression and its level (members are stored unless a codec is
    /// chosen): [`Codec::Stored`] (`np.savez`), [`Codec::Deflate`]
    /// (`np.savez_compressed`, which every NumPy reads; [`Codec::deflate`]
    /// is level 7, no larger than NumPy's and several times faster), or
    /// `Codec::Zstd` (feature `zstd`), smaller and several times faster to
    /// read, which NumPy reads only through a `zipfile` that reads
    /// Zstandard (Python 3.14's, or `backports.zstd`'s: see [`Codec`]).
    ///
    /// Zstandard members are one frame, as Python's `zipfile` needs, made
    /// of segments compressed on every core and recorded in a table (the
    /// zip extra field `nd`, which `zipfile` skips) so that ndnpy decodes
    /// them on every core too; the bytes are the same for any number of
    /// threads.
    ///
    /// ```
    /// use ndnpy::{npz::Codec, NpzReader, NpzWriter};
    /// use std::io::Cursor;
    ///
    /// let a = ndarray::Array2::from_shape_fn((1000, 50), |(i, j)| (i * j % 97) as i32);
    /// # #[cfg(feature = "zstd")]
    /// let codec = Codec::zstd();
    /// # #[cfg(not(feature = "zstd"))]
    /// # let codec = Codec::deflate();
    /// let mut npz = NpzWriter::new(Cursor::new(Vec::new())).codec(codec);
    /// npz.add("a", &a)?;
    /// let bytes = npz.finish_into_inner()?.into_inner();
    /// assert!(bytes.len() < 50_000);
    /// let mut back = NpzReader::new(Cursor::new(bytes))?;
    /// assert_eq!(back.read::<i32, ndarray::Ix2>("a")?, a);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn codec(mut self, codec: Codec) -> Self {
        self.compressed = codec != Codec::Stored;
        self.pool.set_codec(codec);
        self
    }

    /// How many threads compress members, at most (default: the available
    /// parallelism; `0` counts as 1). The threads beside the caller's take
    /// cores from the library's one budget, so fewer run while its other
    /// parallel work (an archive read ahead, another writer) holds them.
    /// A member is deflated in blocks of
    /// 1 MiB, each on its own, so the archive's bytes are the same for any
    /// number of threads.
    ///
    /// ```
    /// use ndarray::Array1;
    /// use std::io::Cursor;
    ///
    /// let a = Array1::from_shape_fn(3_000_000, |i| (i % 1000) as f32);
    /// let write = |threads| -> ndnpy::Result<Vec<u8>> {
    ///     let mut npz = ndnpy::NpzWriter::new(Cursor::new(Vec::new()))
    ///         .codec(ndnpy::npz::Codec::deflate())
    ///         .threads(threads);
    ///     npz.add("a", &a)?;
    ///     Ok(npz.finish_into_inner()?.into_inner())
    /// };
    /// assert_eq!(write(1)?, write(4)?);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn threads(mut self, threads: usize) -> Self {
        self.pool.set_threads(threads);
        self
    }

    /// Whether stored members are padded so that their data starts at a
    /// multiple of 64 bytes in the file (on by default). Without it, members
    /// lie where they fall, as in NumPy's own archives, and
    /// [`crate::NpzMmap::view`] may fail with [`crate::error::ViewError::Misaligned`].
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

    fn method(&self) -> Method {
        if self.compressed {
            self.pool.method()
        } else {
            Method::Stored
        }
    }

    fn align(&self) -> Option<u16> {
        self.aligned.then_some(MEMBER_ALIGN)
    }

    fn add_member<T: Element, D: Dimension>(
        &mut self,
        name: &str,
        array: &ArrayRef<T, D>,
    ) -> Result<()> {
        let array = &array.view();
        if let Some(bytes) = T::object_npy(array) {
            let bytes = bytes?;
            self.claim(name)?;
            return self.add_npy(name, &bytes, 0, |w| Ok(w.write_all(&bytes)?));
        }
        self.claim(name)?;
        let header = npy_header(array);
        let data_len = header.data_len()?;
        let header = header.to_bytes()?;
        self.add_npy(name, &header, data_len, |w| write_body(array, &header, w))
    }

    /// Adds member `name.npy` whose bytes `body` writes: `header` and then
    /// `data_len` bytes (or the whole file in `header`, `data_len` 0).
    fn add_npy(
        &mut self,
        name: &str,
        header: &[u8],
        data_len: usize,
        body: impl FnOnce(&mut dyn Write) -> Result<()>,
    ) -> Result<()> {
        let size = (data_len as u64).saturating_add(header.len() as u64);
        let method = self.method();
        if method != Method::Stored && size <= self.pool.block() as u64 {
            // Members of one block are compressed several at a time, one
            // per thread: an archive of many small arrays is parallel too.
            let mut bytes = Vec::with_capacity(size as usize);
            body(&mut bytes)?;
            self.queued.push((name.to_owned(), bytes));
            if self.queued.len() >= self.pool.batch() {
                self.write_queued()?;
            }
            return Ok(());
        }
        self.write_queued()?;
        let open = self.out.open(
            &format!("{name}.npy"),
            method,
            size.saturating_add(HEADER_ALLOWANCE) >= ZIP64_THRESHOLD,
            false,
            self.align(),
        )?;
        let mut data = MemberData::new(method != Method::Stored);
        body(&mut data.sink(&mut self.out, &mut self.pool))?;
        let (crc, len, pieces) = data.finish(&mut self.out, &mut self.pool)?;
        self.out.close(open, crc.finalize(), len, pieces)?;
        Ok(())
    }

    /// Compresses and writes the queued small members. A failure poisons
    /// the archive under the name of the member that failed.
    fn write_queued(&mut self) -> Result<()> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let queued = std::mem::take(&mut self.queued);
        let (names, blocks): (Vec<String>, Vec<Vec<u8>>) = queued.into_iter().unzip();
        let pieces = match self.pool.compress_each(&blocks) {
            Ok(pieces) => pieces,
            Err(e) => {
                self.failed = Some(names[0].clone());
                return Err(e.into());
            }
        };
        for ((name, block), (piece, crc)) in names.iter().zip(&blocks).zip(pieces) {
            let result = self
                .out
                .open(
                    &format!("{name}.npy"),
                    self.pool.method(),
                    false,
                    false,
                    None,
                )
                .and_then(|open| {
                    self.out.write_all(&piece)?;
                    self.out
                        .close(open, crc.finalize(), block.len() as u64, None)
                });
            if let Err(e) = result {
                self.failed = Some(name.clone());
                return Err(e.into());
            }
        }
        Ok(())
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
        self.ended = true;
        if let Some(name) = self.failed.take() {
            return Err(Error::Write(crate::error::WriteError::IncompleteArchive {
                name,
            }));
        }
        self.write_queued()?;
        self.out.finish()?;
        if let Some(temp) = self.temp.take() {
            temp.commit()?;
        }
        self.out
            .take_inner()
            .ok_or_else(|| io::Error::other("internal error: the archive's writer is gone").into())
    }

    /// Whether the archive goes to a path (a temporary file until
    /// `finish`), rather than to the caller's writer.
    pub(super) fn to_path(&self) -> bool {
        self.temp.is_some()
    }
}

impl<W: Write + Seek> Drop for NpzWriter<W> {
    /// The drop rule (crate docs, "Writers"): an archive written to the
    /// caller's writer is finished best-effort, since every member it holds
    /// is whole, unless it is poisoned (a failed `add`, a streamed member
    /// dropped unfinished) or the thread is panicking; an archive written
    /// to a path is not (its temporary file is removed with `temp`).
    fn drop(&mut self) {
        if self.ended || self.to_path() || self.failed.is_some() || std::thread::panicking() {
            return;
        }
        // Errors cannot be reported from here: `finish` reports them.
        let _ = self.write_queued();
        if self.failed.is_none() {
            let _ = self.out.finish();
        }
    }
}

impl<W: Write + Seek> std::fmt::Debug for NpzWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzWriter")
            .field("members", &self.names.len())
            .field("compressed", &self.compressed)
            .field("codec", &self.pool.codec())
            .field("threads", &self.pool.threads())
            .field("aligned", &self.aligned)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

/// Counts the bytes written through it.
struct CountingWrite<'a> {
    inner: &'a mut dyn Write,
    count: u64,
}

impl Write for CountingWrite<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n.min(buf.len()) as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
