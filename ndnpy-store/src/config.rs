//! How reads and writes use the store: request sizes, how many run at
//! once, the library's read limits, and a progress hook.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A function told of every body byte received or part sent (for progress
/// bars).
pub type Progress = Arc<dyn Fn(u64) + Send + Sync>;

/// Request sizes and parallelism for one object.
///
/// ```
/// let config = ndnpy_store::Config::default()
///     .chunk_size(4 << 20)
///     .concurrency(16);
/// assert_eq!(config.get_concurrency(), 16);
/// ```
#[derive(Clone)]
pub struct Config {
    pub(crate) chunk_size: u64,
    pub(crate) concurrency: usize,
    pub(crate) part_size: usize,
    pub(crate) parts_in_flight: usize,
    pub(crate) read_options: ndnpy::ReadOptions,
    pub(crate) progress: Option<Progress>,
    pub(crate) held: Option<Arc<Held>>,
    pub(crate) requests: Option<Arc<AtomicU64>>,
}

/// Bytes of chunks being fetched or fetched and not yet copied out by
/// [`crate::RemoteNpy::read`], now and at their peak: a hook for tests of
/// its memory bound, not part of the API.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Held {
    now: AtomicU64,
    peak: AtomicU64,
}

impl Held {
    /// The most bytes held at once so far.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::SeqCst)
    }

    /// The bytes held now.
    pub fn now(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    pub(crate) fn add(&self, bytes: u64) {
        let now = self.now.fetch_add(bytes, Ordering::SeqCst) + bytes;
        self.peak.fetch_max(now, Ordering::SeqCst);
    }

    pub(crate) fn sub(&self, bytes: u64) {
        self.now.fetch_sub(bytes, Ordering::SeqCst);
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            chunk_size: 8 << 20,
            concurrency: 8,
            // S3 wants parts of at least 5 MiB (but the last), and at most
            // 10 000 of them: 16 MiB parts reach 160 GB.
            part_size: 16 << 20,
            parts_in_flight: 4,
            read_options: ndnpy::ReadOptions::default(),
            progress: None,
            held: None,
            requests: None,
        }
    }
}

impl Config {
    /// Bytes per ranged GET when a whole array is read (default 8 MiB; at
    /// least 64 KiB).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{write_npy, Config, Location, RemoteNpy};
    /// let at = Location::parse("memory:///c.npy")?;
    /// write_npy(&at, &ndarray::Array1::<u8>::zeros(1 << 20)).await?;
    /// // 1 MiB in 16 GETs: a chunk size of 1 byte is raised to 64 KiB.
    /// let npy = RemoteNpy::open_with(&at, Config::default().chunk_size(1)).await?;
    /// assert_eq!(npy.read::<u8, ndarray::Ix1>().await?.len(), 1 << 20);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn chunk_size(mut self, bytes: u64) -> Self {
        self.chunk_size = bytes.max(1 << 16);
        self
    }

    /// Ranged GETs in flight at once when a whole array is read (default
    /// 8). Beside the array, [`crate::RemoteNpy::read`] holds at most
    /// `2 * concurrency` chunks of [`Config::chunk_size`] bytes.
    ///
    /// ```
    /// let config = ndnpy_store::Config::default().concurrency(0);
    /// assert_eq!(config.get_concurrency(), 1); // at least one
    /// ```
    pub fn concurrency(mut self, requests: usize) -> Self {
        self.concurrency = requests.max(1);
        self
    }

    /// The configured number of GETs in flight.
    ///
    /// ```
    /// assert_eq!(ndnpy_store::Config::default().get_concurrency(), 8);
    /// ```
    pub fn get_concurrency(&self) -> usize {
        self.concurrency
    }

    /// Bytes per part of a multipart upload (default 16 MiB; at least the
    /// 5 MiB S3 requires).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{write_npy_with, Config, Location, RemoteNpy};
    /// let at = Location::parse("memory:///p.npy")?;
    /// // 1 KiB is raised to S3's 5 MiB least part: 6 MB go in two parts.
    /// let config = Config::default().part_size(1024);
    /// write_npy_with(&at, &ndarray::Array1::<u8>::zeros(6_000_000), config).await?;
    /// assert_eq!(RemoteNpy::open(&at).await?.len(), 6_000_000);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn part_size(mut self, bytes: usize) -> Self {
        self.part_size = bytes.max(5 << 20);
        self
    }

    /// Parts uploaded at once (default 4). Memory held by a writer is about
    /// `(parts_in_flight + 1) * part_size`.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{write_npy_with, Config, Location, RemoteNpy};
    /// let at = Location::parse("memory:///p.npy")?;
    /// // One part at a time: the least memory, the slowest upload.
    /// let config = Config::default().parts_in_flight(1);
    /// write_npy_with(&at, &ndarray::Array1::<u8>::zeros(10), config).await?;
    /// assert_eq!(RemoteNpy::open(&at).await?.len(), 10);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn parts_in_flight(mut self, parts: usize) -> Self {
        self.parts_in_flight = parts.max(1);
        self
    }

    /// The library's limits and choices for parsing (header length, object
    /// arrays, pickle encoding).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{Config, Location, RemoteNpy};
    /// # use ndnpy::pickle::PyValue;
    /// # use ndnpy::WriteNpy;
    /// # let mut file = tempfile::tempfile()?;
    /// # ndarray::array![PyValue::Int(1)].write_npy_to(&mut file)?;
    /// let at = Location::parse("memory:///o.npy")?;
    /// # ndnpy_store::upload(&at, file, Config::default()).await?;
    /// // An object (pickled) array, refused as `np.load(allow_pickle=False)` would.
    /// let strict = Config::default().read_options(ndnpy::ReadOptions::default().allow_objects(false));
    /// let npy = RemoteNpy::open_with(&at, strict).await?;
    /// assert!(npy.read_any().await.is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn read_options(mut self, options: ndnpy::ReadOptions) -> Self {
        self.read_options = options;
        self
    }

    /// Counts the bytes [`crate::RemoteNpy::read`] holds (a test hook).
    #[doc(hidden)]
    pub fn held(mut self, held: Arc<Held>) -> Self {
        self.held = Some(held);
        self
    }

    /// Counts the GETs made for an object (a test hook: the CLI's
    /// `NDNPY_COUNT_OPENS=1` prints them), not part of the API.
    #[doc(hidden)]
    pub fn requests(mut self, requests: Arc<AtomicU64>) -> Self {
        self.requests = Some(requests);
        self
    }

    /// Calls `progress` with the size of every body chunk received and of
    /// every part uploaded.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{write_npy, Config, Location, RemoteNpy};
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    ///
    /// let at = Location::parse("memory:///p.npy")?;
    /// write_npy(&at, &ndarray::Array1::<u8>::zeros(100_000)).await?;
    /// let seen = Arc::new(AtomicU64::new(0));
    /// let count = seen.clone();
    /// let config = Config::default().progress(Arc::new(move |n| {
    ///     count.fetch_add(n, Ordering::Relaxed);
    /// }));
    /// let npy = RemoteNpy::open_with(&at, config).await?;
    /// npy.read::<u8, ndarray::Ix1>().await?;
    /// // At least every byte of the array went past the hook.
    /// assert!(seen.load(Ordering::Relaxed) >= 100_000);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn progress(mut self, progress: Progress) -> Self {
        self.progress = Some(progress);
        self
    }
}

impl Config {
    /// Tells the request counter ([`Config::requests`]) of a GET.
    pub(crate) fn count_request(&self) {
        if let Some(n) = &self.requests {
            n.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("chunk_size", &self.chunk_size)
            .field("concurrency", &self.concurrency)
            .field("part_size", &self.part_size)
            .field("parts_in_flight", &self.parts_in_flight)
            .field("read_options", &self.read_options)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}
