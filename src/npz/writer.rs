//! [`NpzWriter`]: arrays into an `.npz` archive that NumPy loads.

use super::deflate::{BLOCK, DEFAULT_LEVEL};
use super::sink::{MemberData, Pool};
use super::zipwrite::{Method, Open, ZipOut};
use crate::array::any::AnyArray;
use crate::io::atomic::TempFile;
use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::format::header::{Header, Version};
use crate::options::WriteOptions;
use crate::options::Order;
use crate::array::encode::{npy_header, write_body};
use crc32fast::Hasher;
use ndarray::{ArrayBase, Data, Dimension};
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::marker::PhantomData;
use std::path::Path;

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

    /// Like [`NpzWriter::create_compressed`], with options.
    ///
    /// ```
    /// use ndnpy::{NpzWriter, WriteOptions};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let durable = WriteOptions::default().durable(true);
    /// let mut npz = NpzWriter::create_compressed_with(&path, &durable)?;
    /// npz.add("x", &ndarray::array![1, 2, 3])?;
    /// npz.finish()?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn create_compressed_with<P: AsRef<Path>>(path: P, options: &WriteOptions) -> Result<Self> {
        Ok(Self::create_with(path, options)?.compressed(true))
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
    /// [`NpzWriter::add`] fail with [`Error::IncompleteArchive`]).
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
        Self::infallible(writer, true)
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
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        NpzWriter {
            out,
            temp: None,
            names: HashSet::new(),
            compressed,
            aligned: true,
            pool: Pool::new(DEFAULT_LEVEL, threads),
            queued: Vec::new(),
            failed,
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
    /// (smallest); larger values count as 9. The default, 7, gives archives
    /// no larger than `np.savez_compressed` (zlib's level 6) on every kind
    /// of data we measured, in a fraction of its time. Has no effect on
    /// stored members.
    ///
    /// ```
    /// # use std::io::Cursor;
    /// let npz = ndnpy::NpzWriter::new_compressed(Cursor::new(Vec::new())).compression_level(1);
    /// ```
    pub fn compression_level(mut self, level: u32) -> Self {
        self.pool.set_level(level.clamp(1, 9));
        self
    }

    /// How many threads compress members (default: the available
    /// parallelism; `0` counts as 1). A member is deflated in blocks of
    /// 1 MiB, each on its own, so the archive's bytes are the same for any
    /// number of threads.
    ///
    /// ```
    /// use ndarray::Array1;
    /// use std::io::Cursor;
    ///
    /// let a = Array1::from_shape_fn(3_000_000, |i| (i % 1000) as f32);
    /// let write = |threads| -> ndnpy::Result<Vec<u8>> {
    ///     let mut npz = ndnpy::NpzWriter::new_compressed(Cursor::new(Vec::new())).threads(threads);
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
    /// Fails with [`Error::DuplicateMember`] if `name` was added before, and
    /// with [`Error::InvalidName`] (without poisoning the writer) for a name
    /// NumPy could not give back: one with a NUL byte, one too long for a
    /// zip entry, or `n.npy` beside `n`. After any other failure the writer is poisoned: further calls and
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
        self.check_open(name)?;
        let result = self.add_member(name, array);
        if result.is_err() {
            self.failed.get_or_insert_with(|| name.to_owned());
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
        let pickled_whole = match array {
            AnyArray::Record(r) => r.dtype().has_object(),
            AnyArray::StringDType(_) => true,
            _ => false,
        };
        if pickled_whole {
            // Pickled whole, as an object array is.
            self.check_open(name)?;
            let result = array.to_npy_bytes().and_then(|bytes| {
                self.claim(name)?;
                self.add_npy(name, &bytes, 0, |w| Ok(w.write_all(&bytes)?))
            });
            if result.is_err() {
                self.failed.get_or_insert_with(|| name.to_owned());
            }
            return result;
        }
        crate::array::any::each_variant!(
            array,
            a => self.add(name, a),
            object a => self.add_object(name, a),
            raw r => self.add_raw(name, &r.header(), &r.data)
        )
    }

    /// Starts the member `name.npy`, an array of element type `T` whose rows
    /// come in blocks: `inner_shape` is the shape without the growth axis
    /// (the first axis for [`Order::C`], the last for
    /// [`Order::Fortran`]). Write blocks with [`NpzMemberWriter::write`] and
    /// end the member with [`NpzMemberWriter::finish`]; memory stays
    /// bounded whatever the member's size, compressed or not.
    ///
    /// The member's `.npy` header is the one `np.save` writes for the final
    /// array: it is written first with NumPy's room for the growth axis and
    /// rewritten in place at the end, together with the zip sizes and CRC.
    /// Dropping the member writer unfinished poisons the archive, as a
    /// failed [`NpzWriter::add`] does.
    ///
    /// ```
    /// use ndarray::{Array2, Ix2};
    /// use ndnpy::{NpzReader, NpzWriter, Order};
    /// use std::io::Cursor;
    ///
    /// let mut npz = NpzWriter::new_compressed(Cursor::new(Vec::new()));
    /// let mut member = npz.add_streaming::<f32>("embeddings", &[4], Order::C)?;
    /// for batch in 0..3 {
    ///     member.write(&Array2::<f32>::from_elem((10, 4), batch as f32))?;
    /// }
    /// member.finish()?;
    /// let mut back = NpzReader::new(npz.finish_into_inner()?)?;
    /// let e = back.read::<f32, Ix2>("embeddings")?;
    /// assert_eq!(e.dim(), (30, 4));
    /// assert_eq!(e[[29, 3]], 2.0);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn add_streaming<T: Element>(
        &mut self,
        name: &str,
        inner_shape: &[usize],
        order: Order,
    ) -> Result<NpzMemberWriter<'_, W, T>> {
        self.check_open(name)?;
        crate::array::element::check_blockwise::<T>()?;
        self.write_queued()?;
        NpzMemberWriter::start(self, name, inner_shape, order)
    }

    /// Adds member `name` (`name.npy`) from a header and a function that
    /// writes its data: exactly `header.data_len()` bytes, in the header's
    /// dtype, byte order and memory order, which are not checked. For
    /// tools that move `.npy` data they do not interpret (the `ndnpy`
    /// command copies, reorders and byte-swaps members this way, in bounded
    /// memory); typed arrays go through [`NpzWriter::add`]. Object dtypes,
    /// whose data is a pickle of no declared length, are refused: write
    /// them with [`NpzWriter::add_any`].
    ///
    /// ```
    /// use ndnpy::{DType, Header, NpzReader, NpzWriter, Version};
    /// use std::io::{Cursor, Write};
    ///
    /// let header = Header {
    ///     dtype: DType::parse(">u2")?,
    ///     shape: vec![2],
    ///     fortran_order: false,
    ///     version: Version::V1,
    /// };
    /// let mut w = NpzWriter::new_compressed(Cursor::new(Vec::new()));
    /// w.add_npy_data("be", &header, |out| out.write_all(&[0, 1, 1, 0]))?;
    /// let mut npz = NpzReader::new(w.finish_into_inner()?)?;
    /// assert_eq!(npz.read::<u16, ndarray::Ix1>("be")?, ndarray::array![1, 256]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn add_npy_data(
        &mut self,
        name: &str,
        header: &crate::Header,
        data: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        self.check_open(name)?;
        if header.dtype.has_object() {
            return Err(Error::UnsupportedDType {
                dtype: header.dtype.to_string(),
                reason: "object data is a pickle: add it with NpzWriter::add_any".into(),
            });
        }
        let data_len = header.data_len()?;
        let bytes = header.to_bytes()?;
        self.claim(name)?;
        let result = self.add_npy(name, &bytes, data_len, |w| {
            w.write_all(&bytes)?;
            let mut counted = CountingWrite { inner: w, count: 0 };
            data(&mut counted)?;
            if counted.count != data_len as u64 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "member '{name}': {} data bytes written, the header declares {data_len}",
                        counted.count
                    ),
                )
                .into());
            }
            Ok(())
        });
        if result.is_err() {
            self.failed.get_or_insert_with(|| name.to_owned());
        }
        result
    }

    /// Refuses to add `name` to an archive that an earlier failure left
    /// incomplete, or a name NumPy could not give back. Checked before
    /// anything is written, so a refused name does not poison the writer.
    fn check_open(&self, name: &str) -> Result<()> {
        if let Some(failed) = &self.failed {
            return Err(Error::IncompleteArchive {
                name: failed.clone(),
            });
        }
        super::names::check_array_name(name, |n| self.names.contains(n))
    }

    fn claim(&mut self, name: &str) -> Result<()> {
        if self.names.contains(name) {
            return Err(Error::DuplicateMember {
                name: name.to_owned(),
            });
        }
        self.names.insert(name.to_owned());
        Ok(())
    }

    /// Adds a member from a header and its data bytes (runtime-typed
    /// arrays without an element type: datetimes, records, void).
    fn add_raw(&mut self, name: &str, header: &crate::Header, data: &[u8]) -> Result<()> {
        self.check_open(name)?;
        let result = header.to_bytes().and_then(|header| {
            self.claim(name)?;
            self.add_npy(name, &header, data.len(), |w| {
                w.write_all(&header)?;
                w.write_all(data)?;
                Ok(())
            })
        });
        if result.is_err() {
            self.failed.get_or_insert_with(|| name.to_owned());
        }
        result
    }

    /// Adds an object array (`|O`), pickled as `np.save` does (see
    /// [`crate::pickle::to_object_npy_bytes`]); the same as
    /// [`NpzWriter::add`] of a [`crate::array::pyvalue::PyValue`] array.
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
    pub fn add_object<S: Data<Elem = crate::array::pyvalue::PyValue>, D: Dimension>(
        &mut self,
        name: &str,
        array: &ArrayBase<S, D>,
    ) -> Result<()> {
        self.add(name, array)
    }

    fn method(&self) -> Method {
        if self.compressed {
            Method::Deflated
        } else {
            Method::Stored
        }
    }

    fn align(&self) -> Option<u16> {
        self.aligned.then_some(MEMBER_ALIGN)
    }

    fn add_member<T: Element, S: Data<Elem = T>, D: Dimension>(
        &mut self,
        name: &str,
        array: &ArrayBase<S, D>,
    ) -> Result<()> {
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
        if method == Method::Deflated && size <= BLOCK as u64 {
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
        let mut data = MemberData::new(method == Method::Deflated);
        body(&mut data.sink(&mut self.out, &mut self.pool))?;
        let (crc, len) = data.finish(&mut self.out, &mut self.pool)?;
        self.out.close(open, crc.finalize(), len)?;
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
                .open(&format!("{name}.npy"), Method::Deflated, false, false, None)
                .and_then(|open| {
                    self.out.write_all(&piece)?;
                    self.out.close(open, crc.finalize(), block.len() as u64)
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
        if let Some(name) = self.failed.take() {
            return Err(Error::IncompleteArchive { name });
        }
        self.write_queued()?;
        self.out.finish()?;
        if let Some(temp) = self.temp.take() {
            temp.commit()?;
        }
        Ok(self.out.into_inner())
    }
}

impl<W: Write + Seek> std::fmt::Debug for NpzWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzWriter")
            .field("members", &self.names.len())
            .field("compressed", &self.compressed)
            .field("level", &self.pool.level())
            .field("threads", &self.pool.threads())
            .field("aligned", &self.aligned)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

/// One member of an [`NpzWriter`] written in blocks of rows, from
/// [`NpzWriter::add_streaming`]: memory stays bounded whatever the
/// member's size.
///
/// ```
/// use ndarray::{Array1, Array2, Ix2};
/// use ndnpy::{NpzReader, NpzWriter, Order};
/// use std::io::Cursor;
///
/// let mut npz = NpzWriter::new(Cursor::new(Vec::new()));
/// // Fortran order: blocks are columns, appended along the last axis.
/// let mut m = npz.add_streaming::<i32>("cols", &[3], Order::Fortran)?;
/// m.write(&Array2::<i32>::ones((3, 2)))?;
/// m.write(&Array1::<i32>::zeros(3))?; // one column
/// assert_eq!(m.rows(), 3);
/// m.finish()?;
/// let mut back = NpzReader::new(npz.finish_into_inner()?)?;
/// assert_eq!(back.read::<i32, Ix2>("cols")?.dim(), (3, 3));
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub struct NpzMemberWriter<'a, W: Write + Seek, T: Element> {
    npz: &'a mut NpzWriter<W>,
    m: Started,
    _element: PhantomData<fn(T)>,
}

/// A streamed member's state.
struct Started {
    name: String,
    /// The header for the shape so far (growth axis at `axis`).
    header: Header,
    axis: usize,
    rows: usize,
    /// Where the header's bytes lie in the file: (position, length) runs.
    header_at: Vec<(u64, usize)>,
    header_len: usize,
    open: Option<Open>,
    data: Option<MemberData>,
}

impl<'a, W: Write + Seek, T: Element> NpzMemberWriter<'a, W, T> {
    fn start(
        npz: &'a mut NpzWriter<W>,
        name: &str,
        inner_shape: &[usize],
        order: Order,
    ) -> Result<Self> {
        match Self::begin(npz, name, inner_shape, order) {
            Ok(m) => Ok(NpzMemberWriter {
                npz,
                m,
                _element: PhantomData,
            }),
            Err(e) => {
                npz.failed = Some(name.to_owned());
                Err(e)
            }
        }
    }

    /// Writes the member's local header and `.npy` header.
    fn begin(
        npz: &mut NpzWriter<W>,
        name: &str,
        inner_shape: &[usize],
        order: Order,
    ) -> Result<Started> {
        npz.claim(name)?;
        let mut shape = inner_shape.to_vec();
        let axis = if order.is_fortran() {
            shape.push(0);
            shape.len() - 1
        } else {
            shape.insert(0, 0);
            0
        };
        let header = Header {
            dtype: T::dtype(),
            shape,
            fortran_order: order.is_fortran(),
            version: Version::V1,
        };
        let bytes = header.to_bytes()?;
        let method = npz.method();
        let align = npz.align();
        let open = npz
            .out
            .open(&format!("{name}.npy"), method, false, true, align)?;
        let mut header_at = Vec::new();
        if method == Method::Deflated {
            // Stored deflate blocks hold the header, so that it can be
            // rewritten in place; the data's blocks follow.
            for run in bytes.chunks(u16::MAX as usize) {
                let len = run.len() as u16;
                let mut prefix = vec![0u8];
                prefix.extend_from_slice(&len.to_le_bytes());
                prefix.extend_from_slice(&(!len).to_le_bytes());
                npz.out.write_all(&prefix)?;
                header_at.push((npz.out.pos, run.len()));
                npz.out.write_all(run)?;
            }
        } else {
            header_at.push((npz.out.pos, bytes.len()));
            npz.out.write_all(&bytes)?;
        }
        Ok(Started {
            name: name.to_owned(),
            header,
            axis,
            rows: 0,
            header_at,
            header_len: bytes.len(),
            open: Some(open),
            data: Some(MemberData::new(method == Method::Deflated)),
        })
    }

    /// Appends `block`: rows along the growth axis (any number, any memory
    /// layout), with the other dimensions equal to the inner shape; a block
    /// with one dimension fewer is a single row.
    ///
    /// A block whose shape does not fit is refused with
    /// [`Error::Io`] of kind `InvalidInput` and leaves the member as it
    /// was; an I/O failure poisons the archive.
    ///
    /// ```
    /// # use ndnpy::{NpzWriter, Order};
    /// # use std::io::Cursor;
    /// let mut npz = NpzWriter::new(Cursor::new(Vec::new()));
    /// let mut m = npz.add_streaming::<u8>("x", &[2], Order::C)?;
    /// assert!(m.write(&ndarray::array![[1u8, 2, 3]]).is_err()); // 3 columns, not 2
    /// m.write(&ndarray::array![[1u8, 2]])?;
    /// m.finish()?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn write<S: Data<Elem = T>, D: Dimension>(
        &mut self,
        block: &ArrayBase<S, D>,
    ) -> Result<()> {
        let rows = crate::npy::growth::check_block(&self.m.header, self.m.axis, block)?;
        let total = self.m.rows.checked_add(rows.shape()[0]);
        let grown = total.map(|t| self.with_rows(t));
        let fits = grown.as_ref().map(crate::npy::growth::check_grown);
        let Some(Ok(_)) = fits else {
            return Err(Error::LengthOverflow {
                shape: self.m.header.shape.iter().map(|&d| d as u64).collect(),
                itemsize: self.m.header.dtype.itemsize().unwrap_or(0),
            });
        };
        let data = self.m.data.as_mut().expect("data present until finish");
        let result =
            crate::npy::growth::write_rows(&rows, &mut data.sink(&mut self.npz.out, &mut self.npz.pool));
        if result.is_err() {
            self.npz.failed = Some(self.m.name.clone());
        }
        result?;
        self.m.rows = total.unwrap_or(self.m.rows);
        Ok(())
    }

    /// Rows written so far (the length of the growth axis).
    pub fn rows(&self) -> usize {
        self.m.rows
    }

    /// Ends the member: the final header and the zip sizes and CRC are
    /// written in place.
    pub fn finish(mut self) -> Result<()> {
        let result = self.end();
        if result.is_err() {
            self.npz.failed = Some(self.m.name.clone());
        }
        result
    }

    fn end(&mut self) -> Result<()> {
        let header = self.with_rows(self.m.rows).to_bytes()?;
        if header.len() != self.m.header_len {
            // Only a growth axis of more than 21 digits could change it.
            return Err(Error::Io(io::Error::other(
                "internal error: the final .npy header does not fit the reserved room",
            )));
        }
        let data = self.m.data.take().expect("data present until finish");
        let open = self.m.open.take().expect("open until finish");
        let out = &mut self.npz.out;
        let (data_crc, data_len) = data.finish(out, &mut self.npz.pool)?;
        let mut done = 0;
        for &(at, len) in &self.m.header_at {
            out.patch(at, &header[done..done + len])?;
            done += len;
        }
        let mut crc = Hasher::new();
        crc.update(&header);
        crc.combine(&data_crc);
        out.close(open, crc.finalize(), header.len() as u64 + data_len)?;
        Ok(())
    }

    fn with_rows(&self, rows: usize) -> Header {
        let mut header = self.m.header.clone();
        header.shape[self.m.axis] = rows;
        header
    }
}

impl<W: Write + Seek, T: Element> Drop for NpzMemberWriter<'_, W, T> {
    fn drop(&mut self) {
        // An unfinished member leaves the archive incomplete.
        if self.m.open.is_some() {
            self.npz.failed.get_or_insert_with(|| self.m.name.clone());
        }
    }
}

impl<W: Write + Seek, T: Element> std::fmt::Debug for NpzMemberWriter<'_, W, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzMemberWriter")
            .field("name", &self.m.name)
            .field("shape", &self.with_rows(self.m.rows).shape)
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
