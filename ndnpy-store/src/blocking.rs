//! The same operations for callers without an async runtime: each call
//! runs on a runtime this module owns. Do not call these from inside an
//! async task (they block the thread; tokio refuses).
//!
//! ```
//! use ndnpy_store::{blocking, Location};
//!
//! let at = Location::parse("memory:///v.npy")?;
//! blocking::write_npy(&at, &ndarray::array![1u16, 2, 3])?;
//! let v = blocking::RemoteNpy::open(&at)?.read::<u16, ndarray::Ix1>()?;
//! assert_eq!(v, ndarray::array![1, 2, 3]);
//! # Ok::<(), ndnpy_store::StoreError>(())
//! ```

use crate::{Config, Location, Result};
use ndarray::{Array, ArrayBase, Data, Dimension};
use ndnpy::{AnyArray, Element, Header, LayoutElement, MemberInfo, Order};
use std::future::Future;
use std::ops::RangeBounds;
use std::sync::OnceLock;

/// The runtime this module's calls (and the readers it hands out) wait
/// on, started by the first of them.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("ndnpy-store")
            .build()
            .expect("a tokio runtime")
    })
}

fn run<F: Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

/// `Read + Seek` over one object, pinned to its first version (ETag):
/// ranged GETs, and a read that continues where the last ended streams
/// one GET.
///
/// [`ObjectReader::open`] makes one request, a GET of the first 64 KiB,
/// which also learns the object's size and ETag (or version); every later
/// GET carries them, so an object replaced while it is read gives
/// [`crate::StoreError::Changed`] instead of bytes of two versions.
/// Reads are served so that both ways of reading files cost few requests:
///
/// - small reads anywhere (a zip directory at the tail, local headers, a
///   `.npy` header) fetch 64 KiB at least, and the last few ranges fetched
///   are kept, so nearby reads need no request;
/// - a read that starts where an earlier one ended, or up to 64 KiB past
///   it (a scan), streams one GET of a window that doubles from 1 MiB up
///   to 64 MiB: a scan of 1 GiB takes about 20 requests, memory stays at
///   one body chunk (1 MiB at most for local files), and a scan given up
///   early leaves at most one window in transfer. Up to four scans are
///   followed at once (two members compared chunk by chunk each stream);
/// - any other read of 64 KiB or more streams exactly its bytes.
///
/// Every error is an [`std::io::Error`] wrapping the [`crate::StoreError`]
/// (`Changed`, `BadAnswer`, `Store`), whose message names the object; a
/// short or empty body chunk never reads as the end of the object: `read`
/// returns 0 only at (or past) the object's end.
///
/// It blocks on this module's runtime: do not use it from inside an async
/// task (use it on a blocking thread there).
///
/// ```
/// use ndnpy_store::{blocking, Location};
/// use std::io::{Read, Seek, SeekFrom};
///
/// let at = Location::parse("memory:///r.npy")?;
/// blocking::write_npy(&at, &ndarray::Array1::<u32>::from_iter(0..100_000))?;
/// let mut r = blocking::ObjectReader::open(&at)?;
/// assert_eq!(r.len(), 128 + 400_000);
/// assert_eq!(&r.head()[..6], b"\x93NUMPY");
///
/// // Element 50 000, by a positioned read.
/// let mut four = [0u8; 4];
/// r.read_exact_at(&mut four, 128 + 4 * 50_000)?;
/// assert_eq!(u32::from_le_bytes(four), 50_000);
///
/// // The whole object through Read (one stream from byte 64 Ki on).
/// r.seek(SeekFrom::Start(0))?;
/// let mut all = Vec::new();
/// r.read_to_end(&mut all)?;
/// assert_eq!(all.len() as u64, r.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ObjectReader {
    inner: crate::reader::RangeReader,
    head: bytes::Bytes,
}

impl std::fmt::Debug for ObjectReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectReader")
            .field("reader", &self.inner)
            .field("head", &self.head.len())
            .finish()
    }
}

impl ObjectReader {
    /// Opens the object at `location`: one GET of its first 64 KiB.
    pub fn open(location: &Location) -> Result<ObjectReader> {
        Self::open_with(location, Config::default())
    }

    /// Like [`ObjectReader::open`]; `config`'s progress hook is told of
    /// every body byte fetched.
    pub fn open_with(location: &Location, config: Config) -> Result<ObjectReader> {
        let (object, head) = run(crate::object::Object::open(
            location.store.clone(),
            location.path.clone(),
            object_store::GetRange::Bounded(0..crate::npy::PREFIX_LEN),
            config,
        ))?;
        let inner = crate::reader::RangeReader::new(
            object,
            runtime().handle().clone(),
            (0, head.clone()),
            crate::reader::Plan::default(),
        );
        Ok(ObjectReader { inner, head })
    }

    /// The object's size in bytes (from the first answer).
    pub fn len(&self) -> u64 {
        self.inner.size()
    }

    /// Whether the object is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` with the bytes at `offset` (a positioned read: the
    /// cursor `Read` and `Seek` use does not move, but a later read that
    /// starts where this one ended continues its stream). A range that
    /// reaches past the object's end gives `UnexpectedEof` without a
    /// request.
    pub fn read_exact_at(&mut self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }

    /// The first bytes of the object as fetched by [`ObjectReader::open`]
    /// (up to 64 KiB; all of a smaller object), for sniffing magic numbers.
    pub fn head(&self) -> &[u8] {
        &self.head
    }
}

impl std::io::Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf)
    }
}

impl std::io::Seek for ObjectReader {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(to)
    }

    fn stream_position(&mut self) -> std::io::Result<u64> {
        self.inner.stream_position()
    }
}

/// [`crate::RemoteNpy`], blocking.
#[derive(Debug, Clone)]
pub struct RemoteNpy(pub crate::RemoteNpy);

impl RemoteNpy {
    /// [`crate::RemoteNpy::open`].
    pub fn open(location: &Location) -> Result<Self> {
        run(crate::RemoteNpy::open(location)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::open_url`].
    pub fn open_url(url: &str) -> Result<Self> {
        run(crate::RemoteNpy::open_url(url)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::open_with`].
    pub fn open_with(location: &Location, config: Config) -> Result<Self> {
        run(crate::RemoteNpy::open_with(location, config)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::header`].
    pub fn header(&self) -> &Header {
        self.0.header()
    }

    /// [`crate::RemoteNpy::len`].
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// [`crate::RemoteNpy::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// [`crate::RemoteNpy::read`].
    pub fn read<T: LayoutElement, D: Dimension>(&self) -> Result<Array<T, D>> {
        run(self.0.read())
    }

    /// [`crate::RemoteNpy::read_range`].
    pub fn read_range<T: Element, D: Dimension>(
        &self,
        rows: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        run(self.0.read_range(rows))
    }

    /// [`crate::RemoteNpy::read_any`].
    pub fn read_any(&self) -> Result<AnyArray> {
        run(self.0.read_any())
    }
}

/// [`crate::RemoteNpz`], blocking.
#[derive(Debug, Clone)]
pub struct RemoteNpz(pub crate::RemoteNpz);

impl RemoteNpz {
    /// [`crate::RemoteNpz::open`].
    pub fn open(location: &Location) -> Result<Self> {
        run(crate::RemoteNpz::open(location)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::open_url`].
    pub fn open_url(url: &str) -> Result<Self> {
        run(crate::RemoteNpz::open_url(url)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::open_with`].
    pub fn open_with(location: &Location, config: Config) -> Result<Self> {
        run(crate::RemoteNpz::open_with(location, config)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::names`].
    pub fn names(&self) -> Vec<String> {
        self.0.names()
    }

    /// [`crate::RemoteNpz::len`].
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// [`crate::RemoteNpz::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// [`crate::RemoteNpz::member_info`].
    pub fn member_info(&self, name: &str) -> Result<MemberInfo> {
        run(self.0.member_info(name))
    }

    /// [`crate::RemoteNpz::header`].
    pub fn header(&self, name: &str) -> Result<Header> {
        run(self.0.header(name))
    }

    /// [`crate::RemoteNpz::read`].
    pub fn read<T: Element + Send, D: Dimension + 'static>(
        &self,
        name: &str,
    ) -> Result<Array<T, D>> {
        run(self.0.read(name))
    }

    /// [`crate::RemoteNpz::read_any`].
    pub fn read_any(&self, name: &str) -> Result<AnyArray> {
        run(self.0.read_any(name))
    }

    /// [`crate::RemoteNpz::read_range`].
    pub fn read_range<T: Element + Send, D: Dimension + 'static>(
        &self,
        name: &str,
        rows: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        run(self.0.read_range(name, rows))
    }

    /// [`crate::RemoteNpz::read_all`].
    pub fn read_all(&self) -> Result<Vec<(String, AnyArray)>> {
        run(self.0.read_all())
    }

    /// [`crate::RemoteNpz::member_npy`].
    pub fn member_npy(&self, name: &str) -> Result<RemoteNpy> {
        run(self.0.member_npy(name)).map(RemoteNpy)
    }
}

/// [`crate::write_npy`], blocking.
pub fn write_npy<T: Element, S: Data<Elem = T>, D: Dimension>(
    location: &Location,
    array: &ArrayBase<S, D>,
) -> Result<()> {
    run(crate::write_npy(location, array))
}

/// [`crate::write_npy_with`], blocking.
pub fn write_npy_with<T: Element, S: Data<Elem = T>, D: Dimension>(
    location: &Location,
    array: &ArrayBase<S, D>,
    config: Config,
) -> Result<()> {
    run(crate::write_npy_with(location, array, config))
}

/// [`crate::NpyWriter`], blocking.
pub struct NpyWriter<T: Element>(crate::NpyWriter<T>);

impl<T: Element> NpyWriter<T> {
    /// [`crate::NpyWriter::create`].
    pub fn create(location: &Location, inner_shape: &[usize], order: Order) -> Result<Self> {
        run(crate::NpyWriter::create(location, inner_shape, order)).map(NpyWriter)
    }

    /// [`crate::NpyWriter::create_with`].
    pub fn create_with(
        location: &Location,
        inner_shape: &[usize],
        order: Order,
        config: Config,
    ) -> Result<Self> {
        run(crate::NpyWriter::create_with(
            location,
            inner_shape,
            order,
            config,
        ))
        .map(NpyWriter)
    }

    /// [`crate::NpyWriter::write`].
    pub fn write<S: Data<Elem = T>, D: Dimension>(
        &mut self,
        block: &ArrayBase<S, D>,
    ) -> Result<()> {
        run(self.0.write(block))
    }

    /// [`crate::NpyWriter::rows`].
    pub fn rows(&self) -> usize {
        self.0.rows()
    }

    /// [`crate::NpyWriter::finish`].
    pub fn finish(self) -> Result<()> {
        run(self.0.finish())
    }
}

/// [`crate::NpzWriter`], blocking.
pub struct NpzWriter(crate::NpzWriter);

impl NpzWriter {
    /// [`crate::NpzWriter::create`].
    pub fn create(location: &Location, compressed: bool) -> Result<Self> {
        crate::NpzWriter::create(location, compressed).map(NpzWriter)
    }

    /// [`crate::NpzWriter::archive`].
    pub fn archive(&mut self) -> &mut ndnpy::NpzWriter<std::fs::File> {
        self.0.archive()
    }

    /// [`crate::NpzWriter::finish`].
    pub fn finish(self) -> Result<()> {
        run(self.0.finish())
    }
}

/// [`crate::download`], blocking.
pub fn download(
    location: &Location,
    file: &std::fs::File,
    first: u64,
    more: impl FnOnce(u64, &[u8]) -> Vec<std::ops::Range<u64>>,
    config: Config,
) -> Result<u64> {
    run(crate::download(location, file, first, more, config))
}

/// [`crate::upload`], blocking.
pub fn upload(location: &Location, file: std::fs::File, config: Config) -> Result<()> {
    run(crate::upload(location, file, config))
}
