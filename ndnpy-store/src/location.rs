//! From a URL the user typed to a store and a path in it: `s3://`,
//! `gs://`, `az://` (and the other spellings `object_store` knows),
//! `https://`, `file://` and `memory://`. Credentials, regions and
//! endpoints come from the standard environment variables (`AWS_*`,
//! `GOOGLE_*`, `AZURE_*`), as the cloud providers' own tools read them,
//! then from explicit options.

use crate::error::{Result, StoreError};
use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreScheme};
use std::sync::Arc;
use url::Url;

/// A store and a path in it, as a URL names them.
///
/// ```
/// let at = ndnpy_store::Location::parse("memory:///arrays/a.npy")?;
/// assert_eq!(at.path.as_ref(), "arrays/a.npy");
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
#[derive(Clone)]
pub struct Location {
    /// The store.
    pub store: Arc<dyn ObjectStore>,
    /// The object's path in the store.
    pub path: Path,
    /// The same store's part-by-index upload interface, where it has one
    /// (S3, GCS, Azure, memory): the streaming writer uploads the part that
    /// holds the header last through it.
    pub multipart: Option<Arc<dyn MultipartStore>>,
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Location")
            .field("store", &self.store)
            .field("path", &self.path)
            .field("multipart", &self.multipart.is_some())
            .finish()
    }
}

/// Settings for stores opened by URL, beyond the environment.
///
/// ```
/// use ndnpy_store::{Location, UrlOptions};
///
/// // An S3-compatible server on this machine (MinIO, say). Nothing is
/// // sent until the location is read or written.
/// let options = UrlOptions {
///     options: vec![
///         ("aws_endpoint".into(), "http://localhost:9000".into()),
///         ("aws_allow_http".into(), "true".into()),
///         ("aws_region".into(), "us-east-1".into()),
///     ],
///     ..UrlOptions::default()
/// };
/// let at = Location::parse_with("s3://bucket/data/a.npy", &options)?;
/// assert_eq!(at.path.as_ref(), "data/a.npy");
///
/// // A key `object_store` does not know is refused, not ignored.
/// let typo = UrlOptions { options: vec![("aws_endpiont".into(), "x".into())], ..UrlOptions::default() };
/// assert!(Location::parse_with("s3://bucket/a.npy", &typo).is_err());
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct UrlOptions {
    /// Builder options as `object_store` names them (`"aws_endpoint"`,
    /// `"aws_allow_http"`, `"timeout"`, ...), applied after the
    /// environment's.
    pub options: Vec<(String, String)>,
    /// How transient errors (5xx, timeouts) are retried; `object_store`'s
    /// default (up to 10 retries within 3 minutes) when `None`.
    #[cfg(any(feature = "aws", feature = "gcp", feature = "azure", feature = "http"))]
    pub retry: Option<object_store::RetryConfig>,
}

/// Whether `text` is a URL this crate opens (rather than a local path):
/// it has a scheme of two or more letters followed by `://` or `:/`.
///
/// ```
/// assert!(ndnpy_store::is_url("s3://bucket/a.npy"));
/// assert!(!ndnpy_store::is_url("data/a.npy"));
/// assert!(!ndnpy_store::is_url("C:/data/a.npy"));
/// ```
pub fn is_url(text: &str) -> bool {
    match text.split_once(':') {
        Some((scheme, rest)) => {
            scheme.len() >= 2
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.')
                && rest.starts_with('/')
        }
        None => false,
    }
}

/// Applies `options` (builder keys, then retries) to an `object_store`
/// builder.
#[cfg(any(feature = "aws", feature = "gcp", feature = "azure", feature = "http"))]
macro_rules! configure {
    ($builder:expr, $options:expr, $unknown:expr) => {{
        let mut builder = $builder;
        for (key, value) in &$options.options {
            builder = builder.with_config(key.parse().map_err(|_| $unknown(key))?, value);
        }
        if let Some(retry) = &$options.retry {
            builder = builder.with_retry(retry.clone());
        }
        builder
    }};
}

impl Location {
    /// A store and path from `url`, with credentials and settings from the
    /// environment.
    ///
    /// ```
    /// use ndnpy_store::Location;
    /// // Credentials and regions come from the environment (AWS_*, ...).
    /// let at = Location::parse("s3://bucket/runs/7/weights.npy")?;
    /// assert_eq!(at.path.as_ref(), "runs/7/weights.npy");
    /// assert!(at.multipart.is_some()); // S3 uploads parts by index
    /// let local = Location::parse("file:///tmp/a.npy")?;
    /// assert!(local.multipart.is_none());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn parse(url: &str) -> Result<Location> {
        Self::parse_with(url, &UrlOptions::default())
    }

    /// Like [`Location::parse`], with explicit options and retries.
    ///
    /// ```
    /// use ndnpy_store::{Location, UrlOptions};
    /// use ndnpy_store::object_store::RetryConfig;
    /// // A public bucket read anonymously, giving up after 3 retries.
    /// let options = UrlOptions {
    ///     options: vec![("aws_skip_signature".into(), "true".into())],
    ///     retry: Some(RetryConfig { max_retries: 3, ..RetryConfig::default() }),
    /// };
    /// let at = Location::parse_with("s3://bucket/a.npz", &options)?;
    /// assert_eq!(at.path.as_ref(), "a.npz");
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn parse_with(url: &str, options: &UrlOptions) -> Result<Location> {
        let parsed =
            Url::parse(url).map_err(|e| StoreError::Url(format!("{url} is not a URL: {e}")))?;
        let (scheme, path) = ObjectStoreScheme::parse(&parsed)
            .map_err(|e| StoreError::Url(format!("{url}: {e}")))?;
        let unknown = |key: &str| StoreError::Url(format!("{url}: unknown store option '{key}'"));
        #[cfg(feature = "tls")]
        if !matches!(scheme, ObjectStoreScheme::Local | ObjectStoreScheme::Memory) {
            install_tls_provider();
        }
        let _ = (&unknown, options);
        let (store, multipart): (Arc<dyn ObjectStore>, Option<Arc<dyn MultipartStore>>) =
            match scheme {
                ObjectStoreScheme::Local => {
                    let path = parsed.to_file_path().map_err(|()| {
                        StoreError::Url(format!("{url} is not a local file path"))
                    })?;
                    let path = Path::from_absolute_path(&path)
                        .map_err(|e| StoreError::Url(format!("{url}: {e}")))?;
                    return Ok(Location {
                        store: Arc::new(object_store::local::LocalFileSystem::new()),
                        path,
                        multipart: None,
                    });
                }
                ObjectStoreScheme::Memory => {
                    let store = Arc::new(object_store::memory::InMemory::new());
                    (store.clone(), Some(store))
                }
                #[cfg(feature = "aws")]
                ObjectStoreScheme::AmazonS3 => {
                    let builder = configure!(object_store::aws::AmazonS3Builder::from_env().with_url(url), options, unknown);
                    let store = Arc::new(builder.build()?);
                    (store.clone(), Some(store))
                }
                #[cfg(feature = "gcp")]
                ObjectStoreScheme::GoogleCloudStorage => {
                    let builder = configure!(object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url), options, unknown);
                    let store = Arc::new(builder.build()?);
                    (store.clone(), Some(store))
                }
                #[cfg(feature = "azure")]
                ObjectStoreScheme::MicrosoftAzure => {
                    let builder = configure!(object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url), options, unknown);
                    let store = Arc::new(builder.build()?);
                    (store.clone(), Some(store))
                }
                #[cfg(feature = "http")]
                ObjectStoreScheme::Http => {
                    let base = &parsed[..url::Position::BeforePath];
                    let builder = configure!(object_store::http::HttpBuilder::new().with_url(base), options, unknown);
                    (Arc::new(builder.build()?), None)
                }
                #[allow(unreachable_patterns)]
                other => {
                    return Err(StoreError::Url(format!(
                        "{url}: this build of ndnpy-store has no {other:?} support (enable its cargo feature)"
                    )))
                }
            };
        Ok(Location {
            store,
            path,
            multipart,
        })
    }

    /// A location in a store the caller built (with its own credentials,
    /// retries or wrappers). Without a part-by-index upload interface, the
    /// streaming writer spools to a temporary file.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::Location;
    /// use object_store::{memory::InMemory, ObjectStoreExt};
    /// use std::sync::Arc;
    ///
    /// // A store built (and shared) by the caller.
    /// let store = Arc::new(InMemory::new());
    /// let at = Location::new(store.clone(), "dir/a.npy");
    /// ndnpy_store::write_npy(&at, &ndarray::array![1u8, 2]).await?;
    /// assert_eq!(store.head(&"dir/a.npy".into()).await?.size, 130);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn new(store: Arc<dyn ObjectStore>, path: impl Into<Path>) -> Location {
        Location {
            store,
            path: path.into(),
            multipart: None,
        }
    }

    /// Adds the store's part-by-index upload interface (for stores built by
    /// the caller that have one).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{Location, NpyWriter, RemoteNpy};
    /// use object_store::memory::InMemory;
    /// use std::sync::Arc;
    ///
    /// // The store's own multipart interface: the streaming writer then needs
    /// // no temporary file.
    /// let store = Arc::new(InMemory::new());
    /// let at = Location::new(store.clone(), "w.npy").with_multipart(store);
    /// let mut w = NpyWriter::<u32>::create(&at, &[], ndnpy::Order::C).await?;
    /// w.write(&ndarray::array![1, 2, 3]).await?;
    /// w.finish().await?;
    /// assert_eq!(RemoteNpy::open(&at).await?.len(), 3);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn with_multipart(mut self, multipart: Arc<dyn MultipartStore>) -> Location {
        self.multipart = Some(multipart);
        self
    }
}

/// Makes ring rustls's crypto provider the process's default, unless one is
/// installed already (by the application, or by an earlier call): reqwest,
/// built without a provider of its own (`tls` in Cargo.toml), takes the
/// process's default when a store's HTTP client is built, and panics
/// without one.
#[cfg(feature = "tls")]
fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // An error means another thread installed one meanwhile: fine.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
    });
}
