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
    ///
    /// ```
    /// use ndnpy_store::{blocking, Location};
    ///
    /// let at = Location::parse("memory:///o.npy")?;
    /// blocking::write_npy(&at, &ndarray::array![1u8, 2, 3])?;
    /// // One request: the object is smaller than 64 KiB, so it is all in hand.
    /// let r = blocking::ObjectReader::open(&at)?;
    /// assert_eq!(r.head().len() as u64, r.len());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open(location: &Location) -> Result<ObjectReader> {
        Self::open_with(location, Config::default())
    }

    /// Like [`ObjectReader::open`]; `config`'s progress hook is told of
    /// every body byte fetched.
    ///
    /// ```
    /// use ndnpy_store::{blocking, Config, Location};
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    ///
    /// let at = Location::parse("memory:///o.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array1::<u8>::zeros(1000))?;
    /// let fetched = Arc::new(AtomicU64::new(0));
    /// let counter = fetched.clone();
    /// let config = Config::default().progress(Arc::new(move |n| {
    ///     counter.fetch_add(n, Ordering::Relaxed);
    /// }));
    /// let r = blocking::ObjectReader::open_with(&at, config)?;
    /// // The first GET brought the whole (small) object.
    /// assert_eq!(fetched.load(Ordering::Relaxed), r.len());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
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
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///o.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array1::<u16>::zeros(10))?;
    /// // A 128-byte preamble and header, then 10 two-byte elements.
    /// assert_eq!(blocking::ObjectReader::open(&at)?.len(), 128 + 20);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn len(&self) -> u64 {
        self.inner.size()
    }

    /// Whether the object is empty.
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///o.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array1::<u8>::zeros(0))?;
    /// // An empty array still has its header.
    /// assert!(!blocking::ObjectReader::open(&at)?.is_empty());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` with the bytes at `offset` (a positioned read: the
    /// cursor `Read` and `Seek` use does not move, but a later read that
    /// starts where this one ended continues its stream). A range that
    /// reaches past the object's end gives `UnexpectedEof` without a
    /// request.
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///o.npy")?;
    /// blocking::write_npy(&at, &ndarray::array![10u8, 20, 30])?;
    /// let mut r = blocking::ObjectReader::open(&at)?;
    /// let mut last = [0u8; 1];
    /// r.read_exact_at(&mut last, r.len() - 1)?;
    /// assert_eq!(last, [30]);
    /// // Past the end: an error, not a short read.
    /// assert!(r.read_exact_at(&mut last, r.len()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_exact_at(&mut self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }

    /// The first bytes of the object as fetched by [`ObjectReader::open`]
    /// (up to 64 KiB; all of a smaller object), for sniffing magic numbers.
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///o.npy")?;
    /// blocking::write_npy(&at, &ndarray::array![1i64])?;
    /// let r = blocking::ObjectReader::open(&at)?;
    /// // Tell a `.npy` from a zip (`.npz`) without another request.
    /// assert!(r.head().starts_with(b"\x93NUMPY"));
    /// assert!(!r.head().starts_with(b"PK"));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
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
///
/// ```
/// use ndnpy_store::{blocking, Location};
///
/// let at = Location::parse("memory:///m.npy")?;
/// blocking::write_npy(&at, &ndarray::Array2::<f32>::ones((4, 3)))?;
/// let npy = blocking::RemoteNpy::open(&at)?;
/// assert_eq!(npy.header().shape, [4, 3]);
/// // The async reader is inside, for callers who have a runtime after all.
/// assert_eq!(npy.0.len(), 4);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RemoteNpy(pub crate::RemoteNpy);

impl RemoteNpy {
    /// [`crate::RemoteNpy::open`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::array![1i32, 2])?;
    /// // One GET: the header (the data is not read yet).
    /// let npy = blocking::RemoteNpy::open(&at)?;
    /// assert_eq!(npy.header().dtype.to_string(), "<i4");
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open(location: &Location) -> Result<Self> {
        run(crate::RemoteNpy::open(location)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::open_url`].
    ///
    /// ```
    /// use ndnpy_store::{blocking, Location};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let url = format!("file://{}", dir.path().join("v.npy").display());
    /// blocking::write_npy(&Location::parse(&url)?, &ndarray::array![1.5f64, 2.5])?;
    /// let npy = blocking::RemoteNpy::open_url(&url)?;
    /// assert_eq!(npy.read::<f64, ndarray::Ix1>()?, ndarray::array![1.5, 2.5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_url(url: &str) -> Result<Self> {
        run(crate::RemoteNpy::open_url(url)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::open_with`].
    ///
    /// ```
    /// use ndnpy_store::{blocking, Config, Location};
    ///
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array1::<u64>::from_iter(0..100_000))?;
    /// // Smaller chunks, fewer at once: 800 KB in 64 KiB GETs, two in flight.
    /// let config = Config::default().chunk_size(64 << 10).concurrency(2);
    /// let npy = blocking::RemoteNpy::open_with(&at, config)?;
    /// assert_eq!(npy.read::<u64, ndarray::Ix1>()?[99_999], 99_999);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open_with(location: &Location, config: Config) -> Result<Self> {
        run(crate::RemoteNpy::open_with(location, config)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::header`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array3::<u8>::zeros((2, 3, 4)))?;
    /// let header = blocking::RemoteNpy::open(&at)?.header().clone();
    /// assert_eq!((header.shape, header.fortran_order), (vec![2, 3, 4], false));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn header(&self) -> &Header {
        self.0.header()
    }

    /// [`crate::RemoteNpy::len`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array2::<u8>::zeros((5, 2)))?;
    /// // Rows: the length of the axis `read_range` ranges over.
    /// assert_eq!(blocking::RemoteNpy::open(&at)?.len(), 5);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// [`crate::RemoteNpy::is_empty`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array2::<u8>::zeros((0, 2)))?;
    /// assert!(blocking::RemoteNpy::open(&at)?.is_empty());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// [`crate::RemoteNpy::read`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::array![[1u16, 2], [3, 4]])?;
    /// let npy = blocking::RemoteNpy::open(&at)?;
    /// assert_eq!(npy.read::<u16, ndarray::Ix2>()?, ndarray::array![[1, 2], [3, 4]]);
    /// // Another element type is refused, not reinterpreted.
    /// assert!(npy.read::<f32, ndarray::Ix2>().is_err());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read<T: LayoutElement, D: Dimension>(&self) -> Result<Array<T, D>> {
        run(self.0.read())
    }

    /// [`crate::RemoteNpy::read_range`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array1::<i32>::from_iter(0..1000))?;
    /// // Rows 500..503 by one GET of their 12 bytes.
    /// let rows = blocking::RemoteNpy::open(&at)?.read_range::<i32, ndarray::Ix1>(500..503)?;
    /// assert_eq!(rows, ndarray::array![500, 501, 502]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_range<T: Element, D: Dimension>(
        &self,
        rows: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        run(self.0.read_range(rows))
    }

    /// [`crate::RemoteNpy::read_any`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::array![true, false])?;
    /// // Whatever the dtype, without naming it first.
    /// let any = blocking::RemoteNpy::open(&at)?.read_any()?;
    /// assert_eq!(any, ndnpy::AnyArray::Bool(ndarray::array![true, false].into_dyn()));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_any(&self) -> Result<AnyArray> {
        run(self.0.read_any())
    }
}

/// [`crate::RemoteNpz`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Location};
///
/// let at = Location::parse("memory:///z.npz")?;
/// let mut w = blocking::NpzWriter::create(&at, true)?;
/// w.archive().add("x", &ndarray::array![1u8, 2])?;
/// w.finish()?;
/// let npz = blocking::RemoteNpz::open(&at)?;
/// assert_eq!(npz.read::<u8, ndarray::Ix1>("x")?, ndarray::array![1, 2]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RemoteNpz(pub crate::RemoteNpz);

impl RemoteNpz {
    /// [`crate::RemoteNpz::open`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = blocking::NpzWriter::create(&at, false)?;
    /// # w.archive().add("a", &ndarray::array![1u8])?;
    /// # w.finish()?;
    /// // The directory only: members are read when asked for.
    /// let npz = blocking::RemoteNpz::open(&at)?;
    /// assert_eq!(npz.names(), ["a"]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open(location: &Location) -> Result<Self> {
        run(crate::RemoteNpz::open(location)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::open_url`].
    ///
    /// ```
    /// use ndnpy_store::{blocking, Location};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let url = format!("file://{}", dir.path().join("z.npz").display());
    /// let mut w = blocking::NpzWriter::create(&Location::parse(&url)?, true)?;
    /// w.archive().add("a", &ndarray::array![1u8])?;
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpz::open_url(&url)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_url(url: &str) -> Result<Self> {
        run(crate::RemoteNpz::open_url(url)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::open_with`].
    ///
    /// ```
    /// use ndnpy_store::{blocking, Config, Location};
    ///
    /// let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = blocking::NpzWriter::create(&at, false)?;
    /// # w.archive().add("a", &ndarray::array![1u8])?;
    /// # w.finish()?;
    /// // The library's limits apply to every member read through it.
    /// let config = Config::default().read_options(ndnpy::ReadOptions::default());
    /// let npz = blocking::RemoteNpz::open_with(&at, config)?;
    /// assert_eq!(npz.read_any("a")?.shape(), [1]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open_with(location: &Location, config: Config) -> Result<Self> {
        run(crate::RemoteNpz::open_with(location, config)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::names`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, false)?;
    /// w.archive().add("b", &ndarray::array![1u8])?;
    /// w.archive().add("a", &ndarray::array![2u8])?;
    /// w.finish()?;
    /// // Archive order, without the `.npy` suffix.
    /// assert_eq!(blocking::RemoteNpz::open(&at)?.names(), ["b", "a"]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn names(&self) -> Vec<String> {
        self.0.names()
    }

    /// [`crate::RemoteNpz::len`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, false)?;
    /// w.archive().add("a", &ndarray::array![1u8])?;
    /// w.archive().add("b", &ndarray::array![2u8])?;
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpz::open(&at)?.len(), 2);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// [`crate::RemoteNpz::is_empty`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// // An archive with no members is still a valid archive.
    /// blocking::NpzWriter::create(&at, false)?.finish()?;
    /// assert!(blocking::RemoteNpz::open(&at)?.is_empty());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// [`crate::RemoteNpz::member_info`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("zeros", &ndarray::Array1::<f64>::zeros(10_000))?;
    /// w.finish()?;
    /// let info = blocking::RemoteNpz::open(&at)?.member_info("zeros")?;
    /// assert_eq!(info.compression, ndnpy::Compression::Deflated);
    /// assert!(info.compressed_size < info.size / 10); // zeros deflate well
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn member_info(&self, name: &str) -> Result<MemberInfo> {
        run(self.0.member_info(name))
    }

    /// [`crate::RemoteNpz::header`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("m", &ndarray::Array2::<i16>::zeros((3, 7)))?;
    /// w.finish()?;
    /// // Shape and dtype without reading the member's data.
    /// let header = blocking::RemoteNpz::open(&at)?.header("m")?;
    /// assert_eq!((header.shape, header.dtype.to_string()), (vec![3, 7], "<i2".to_string()));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn header(&self, name: &str) -> Result<Header> {
        run(self.0.header(name))
    }

    /// [`crate::RemoteNpz::read`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("x", &ndarray::array![[1.0f32, 2.0]])?;
    /// w.finish()?;
    /// let x = blocking::RemoteNpz::open(&at)?.read::<f32, ndarray::Ix2>("x")?;
    /// assert_eq!(x, ndarray::array![[1.0, 2.0]]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read<T: Element + Send, D: Dimension + 'static>(
        &self,
        name: &str,
    ) -> Result<Array<T, D>> {
        run(self.0.read(name))
    }

    /// [`crate::RemoteNpz::read_any`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("n", &ndarray::array![7i64])?;
    /// w.finish()?;
    /// let n = blocking::RemoteNpz::open(&at)?.read_any("n")?;
    /// assert_eq!(n.dtype().to_string(), "<i8");
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_any(&self, name: &str) -> Result<AnyArray> {
        run(self.0.read_any(name))
    }

    /// [`crate::RemoteNpz::read_range`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, false)?;
    /// w.archive().add("t", &ndarray::Array1::<u32>::from_iter(0..10_000))?;
    /// w.finish()?;
    /// // A stored member: one ranged GET of the rows' bytes.
    /// let rows = blocking::RemoteNpz::open(&at)?.read_range::<u32, ndarray::Ix1>("t", 9_998..)?;
    /// assert_eq!(rows, ndarray::array![9_998, 9_999]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_range<T: Element + Send, D: Dimension + 'static>(
        &self,
        name: &str,
        rows: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        run(self.0.read_range(name, rows))
    }

    /// [`crate::RemoteNpz::read_all`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("a", &ndarray::array![1u8])?;
    /// w.archive().add("b", &ndarray::array![2.0f64])?;
    /// w.finish()?;
    /// let all = blocking::RemoteNpz::open(&at)?.read_all()?;
    /// let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    /// assert_eq!(names, ["a", "b"]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_all(&self) -> Result<Vec<(String, AnyArray)>> {
        run(self.0.read_all())
    }

    /// [`crate::RemoteNpz::member_npy`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// // Stored, not compressed: the member's bytes lie in the archive as is.
    /// let mut w = blocking::NpzWriter::create(&at, false)?;
    /// w.archive().add("big", &ndarray::Array2::<u8>::zeros((1000, 8)))?;
    /// w.finish()?;
    /// let npy = blocking::RemoteNpz::open(&at)?.member_npy("big")?;
    /// assert_eq!(npy.len(), 1000);
    /// assert_eq!(npy.read_range::<u8, ndarray::Ix2>(10..12)?.dim(), (2, 8));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn member_npy(&self, name: &str) -> Result<RemoteNpy> {
        run(self.0.member_npy(name)).map(RemoteNpy)
    }
}

/// [`crate::list`], blocking: the paths of the objects below a location
/// taken as a folder, sorted as a folder walk sorts.
///
/// ```
/// use ndnpy_store::{blocking, Location};
///
/// let store = Location::parse("memory:///")?.store;
/// for path in ["ckpt/2.npy", "ckpt/10.npy"] {
///     blocking::write_npy(&Location::new(store.clone(), path), &ndarray::array![0u8])?;
/// }
/// let below = blocking::list(&Location::new(store, "ckpt"))?;
/// assert_eq!(below.len(), 2);
/// assert_eq!(below[0].as_ref(), "ckpt/10.npy");
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
pub fn list(location: &Location) -> Result<Vec<object_store::path::Path>> {
    run(crate::list(location))
}

/// [`crate::write_npy`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Location};
///
/// let at = Location::parse("memory:///w.npy")?;
/// blocking::write_npy(&at, &ndarray::array![[1i8, -1], [2, -2]])?;
/// // The object is a plain `.npy`, as `np.save` writes it.
/// let npy = blocking::RemoteNpy::open(&at)?;
/// assert_eq!(npy.read::<i8, ndarray::Ix2>()?, ndarray::array![[1, -1], [2, -2]]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
pub fn write_npy<T: Element, S: Data<Elem = T>, D: Dimension>(
    location: &Location,
    array: &ArrayBase<S, D>,
) -> Result<()> {
    run(crate::write_npy(location, array))
}

/// [`crate::write_npy_with`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Config, Location};
///
/// let at = Location::parse("memory:///w.npy")?;
/// // 12 MB in parts of 5 MiB (S3's least), one upload at a time.
/// let config = Config::default().part_size(5 << 20).parts_in_flight(1);
/// let a = ndarray::Array2::<f64>::zeros((1_500, 1_000));
/// blocking::write_npy_with(&at, &a, config)?;
/// assert_eq!(blocking::RemoteNpy::open(&at)?.header().shape, [1_500, 1_000]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
pub fn write_npy_with<T: Element, S: Data<Elem = T>, D: Dimension>(
    location: &Location,
    array: &ArrayBase<S, D>,
    config: Config,
) -> Result<()> {
    run(crate::write_npy_with(location, array, config))
}

/// [`crate::NpyWriter`], blocking.
///
/// ```
/// use ndnpy::Order;
/// use ndnpy_store::{blocking, Location};
///
/// let at = Location::parse("memory:///log.npy")?;
/// // Rows of 2 as they come; the row count goes into the header at the end.
/// let mut w = blocking::NpyWriter::<i32>::create(&at, &[2], Order::C)?;
/// for i in 0..3 {
///     w.write(&ndarray::array![[i, -i]])?;
/// }
/// w.finish()?;
/// let back = blocking::RemoteNpy::open(&at)?.read::<i32, ndarray::Ix2>()?;
/// assert_eq!(back, ndarray::array![[0, 0], [1, -1], [2, -2]]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
pub struct NpyWriter<T: Element>(crate::NpyWriter<T>);

impl<T: Element> NpyWriter<T> {
    /// [`crate::NpyWriter::create`].
    ///
    /// ```
    /// # use ndnpy::Order;
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///v.npy")?;
    /// // `&[]`: a 1-d array, one element per row.
    /// let mut w = blocking::NpyWriter::<u8>::create(&at, &[], Order::C)?;
    /// w.write(&ndarray::array![1, 2, 3])?;
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpy::open(&at)?.header().shape, [3]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn create(location: &Location, inner_shape: &[usize], order: Order) -> Result<Self> {
        run(crate::NpyWriter::create(location, inner_shape, order)).map(NpyWriter)
    }

    /// [`crate::NpyWriter::create_with`].
    ///
    /// ```
    /// # use ndnpy::Order;
    /// # use ndnpy_store::{blocking, Config, Location};
    /// let at = Location::parse("memory:///v.npy")?;
    /// let config = Config::default().part_size(8 << 20);
    /// let mut w = blocking::NpyWriter::<f32>::create_with(&at, &[], Order::C, config)?;
    /// w.write(&ndarray::Array1::<f32>::ones(10))?;
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpy::open(&at)?.len(), 10);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
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
    ///
    /// ```
    /// # use ndnpy::Order;
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///v.npy")?;
    /// let mut w = blocking::NpyWriter::<u16>::create(&at, &[3], Order::C)?;
    /// w.write(&ndarray::array![[1, 2, 3], [4, 5, 6]])?; // two rows
    /// w.write(&ndarray::array![7, 8, 9])?; // one row
    /// // A block whose rows are not 3 long is refused.
    /// assert!(w.write(&ndarray::array![[1, 2]]).is_err());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn write<S: Data<Elem = T>, D: Dimension>(
        &mut self,
        block: &ArrayBase<S, D>,
    ) -> Result<()> {
        run(self.0.write(block))
    }

    /// [`crate::NpyWriter::rows`].
    ///
    /// ```
    /// # use ndnpy::Order;
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///v.npy")?;
    /// let mut w = blocking::NpyWriter::<u8>::create(&at, &[4], Order::C)?;
    /// w.write(&ndarray::Array2::<u8>::zeros((5, 4)))?;
    /// assert_eq!(w.rows(), 5);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.0.rows()
    }

    /// [`crate::NpyWriter::finish`].
    ///
    /// ```
    /// # use ndnpy::Order;
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///v.npy")?;
    /// let mut w = blocking::NpyWriter::<u8>::create(&at, &[], Order::C)?;
    /// w.write(&ndarray::array![1, 2])?;
    /// // Nothing is there until the upload completes.
    /// assert!(blocking::RemoteNpy::open(&at).is_err());
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpy::open(&at)?.len(), 2);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn finish(self) -> Result<()> {
        run(self.0.finish())
    }
}

/// [`crate::NpzWriter`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Location};
///
/// let at = Location::parse("memory:///a.npz")?;
/// let mut w = blocking::NpzWriter::create(&at, true)?;
/// w.archive().add("x", &ndarray::array![1.0f64, 2.0])?;
/// w.archive().add("y", &ndarray::array![3u8])?;
/// w.finish()?;
/// assert_eq!(blocking::RemoteNpz::open(&at)?.names(), ["x", "y"]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
pub struct NpzWriter(crate::NpzWriter);

impl NpzWriter {
    /// [`crate::NpzWriter::create`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///a.npz")?;
    /// // `false`: stored members (`np.savez`), whose rows can be range-read.
    /// let mut w = blocking::NpzWriter::create(&at, false)?;
    /// w.archive().add("x", &ndarray::array![1u8])?;
    /// w.finish()?;
    /// let info = blocking::RemoteNpz::open(&at)?.member_info("x")?;
    /// assert_eq!(info.compression, ndnpy::Compression::Stored);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn create(location: &Location, compressed: bool) -> Result<Self> {
        crate::NpzWriter::create(location, compressed).map(NpzWriter)
    }

    /// [`crate::NpzWriter::archive`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///a.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// // Any array the library can write, by name.
    /// let any = ndnpy::AnyArray::U8(ndarray::array![1u8, 2].into_dyn());
    /// w.archive().add_any("bytes", &any)?;
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpz::open(&at)?.read_any("bytes")?, any);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn archive(&mut self) -> &mut ndnpy::NpzWriter<std::fs::File> {
        self.0.archive()
    }

    /// [`crate::NpzWriter::finish`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///a.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("x", &ndarray::array![1u8])?;
    /// // The archive is written to a temporary file, and uploaded only now.
    /// assert!(blocking::RemoteNpz::open(&at).is_err());
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpz::open(&at)?.len(), 1);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn finish(self) -> Result<()> {
        run(self.0.finish())
    }
}

/// [`crate::download`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Config, Location};
/// use std::io::{Read, Seek};
///
/// let at = Location::parse("memory:///d.npy")?;
/// blocking::write_npy(&at, &ndarray::Array1::<u8>::from_elem(1000, 7))?;
/// let mut file = tempfile::tempfile()?;
/// // The first 128 bytes (the header), then the rest.
/// let len = blocking::download(&at, &file, 128, |len, _| vec![128..len], Config::default())?;
/// assert_eq!(len, 1128);
/// let mut bytes = Vec::new();
/// file.rewind()?;
/// file.read_to_end(&mut bytes)?;
/// assert_eq!(bytes[1127], 7);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
///
/// ```
/// use ndnpy::WriteNpy;
/// use ndnpy_store::{blocking, Config, Location};
///
/// // A `.npy` written locally, then uploaded whole.
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("u.npy");
/// ndarray::array![1u32, 2, 3].write_npy(&path)?;
/// let at = Location::parse("memory:///u.npy")?;
/// blocking::upload(&at, std::fs::File::open(&path)?, Config::default())?;
/// let back = blocking::RemoteNpy::open(&at)?.read::<u32, ndarray::Ix1>()?;
/// assert_eq!(back, ndarray::array![1, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn upload(location: &Location, file: std::fs::File, config: Config) -> Result<()> {
    run(crate::upload(location, file, config))
}
