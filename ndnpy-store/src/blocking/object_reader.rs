//! [`ObjectReader`]: a blocking `Read + Seek` over one object (the CLI's
//! reader of URLs), on the ranged reader of `reader.rs`.

use super::run;
use crate::runtime::runtime;
use crate::{Config, Location, Result};

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
/// - any other read of 64 KiB or more streams exactly its bytes;
/// - streamed bytes are kept once read (the last 16 MiB), so a read that
///   steps back into them (a second reader a little behind the first)
///   fetches nothing, and a fetch stops where kept bytes start;
/// - [`ObjectReader::will_read`] announces a span read in order: it is
///   streamed in one GET.
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

    /// Announces that most of the bytes of `span` are about to be read, in
    /// order (an archive's members, one after another): the next read
    /// inside it that needs a request streams one GET to the span's end
    /// (stopping where bytes already fetched start), instead of a small
    /// fetch and then windows that double. `None` ends the announcement.
    /// Bytes streamed are kept a while once read (the last 16 MiB), so a
    /// second reader a little behind the first fetches nothing.
    ///
    /// ```
    /// use ndnpy_store::{blocking, Config, Location};
    /// use std::io::{Read, Seek, SeekFrom};
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    ///
    /// let at = Location::parse("memory:///o.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array1::<u8>::zeros(5 << 20))?;
    /// let requests = Arc::new(AtomicU64::new(0));
    /// let config = Config::default().requests(requests.clone());
    /// let mut r = blocking::ObjectReader::open_with(&at, config)?;
    /// let len = r.len();
    /// r.will_read(Some(0..len));
    /// // Small reads all the way: one GET after the first.
    /// let mut buf = [0u8; 100];
    /// r.seek(SeekFrom::Start(1 << 20))?;
    /// while r.read(&mut buf)? > 0 {}
    /// assert_eq!(requests.load(Ordering::Relaxed), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn will_read(&mut self, span: Option<std::ops::Range<u64>>) {
        self.inner.set_plan(span);
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
