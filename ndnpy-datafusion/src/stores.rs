//! Object stores made from the environment for tables at `s3://`, `gs://`,
//! `az://` and `http(s)://` URLs (feature `cloud`).
//!
//! Every process that reads a table opens its files by the table's URL:
//! `ndnpy-sql`, a Ballista client as it plans, and the scheduler and
//! executors of `ndnpy-ballista`. One registry serves them all, so that a
//! URL that reads in one reads in the others: a store is made the first
//! time a URL of its bucket (or host) is asked for, by object_store's
//! builders configured from the environment (`AWS_*`, `GOOGLE_*`,
//! `AZURE_*`), and kept.

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::http::HttpBuilder;
use object_store::ObjectStore;
use std::sync::Arc;
use url::Url;

/// An [`ObjectStoreRegistry`] that makes the store of an `s3://` (`s3a://`),
/// `gs://`, `az://` (`azure://`, `abfs://`, `abfss://`) or `http(s)://`
/// URL from the environment the first time it is asked for, beside the
/// stores registered on it and local files (DataFusion's default registry).
///
/// ```
/// use datafusion::execution::object_store::ObjectStoreRegistry;
/// use datafusion::prelude::{SessionConfig, SessionContext};
/// use ndnpy_datafusion::EnvStoreRegistry;
///
/// // Tables at s3://… URLs read with the credentials in AWS_*; the store of
/// // an http:// host is made as it is asked for; other schemes are not
/// // stores.
/// let registry = EnvStoreRegistry::default();
/// assert!(registry.get_store(&url::Url::parse("http://example.com/arrays/")?).is_ok());
/// assert!(registry.get_store(&url::Url::parse("ftp://example.com/")?).is_err());
///
/// let ctx = SessionContext::new_with_config_rt(SessionConfig::new(), EnvStoreRegistry::runtime()?);
/// # drop(ctx);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct EnvStoreRegistry {
    known: DefaultObjectStoreRegistry,
}

impl ObjectStoreRegistry for EnvStoreRegistry {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.known.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.known.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        if let Ok(store) = self.known.get_store(url) {
            return Ok(store);
        }
        let Some(store) = from_env(url)? else {
            return Err(DataFusionError::Configuration(format!(
                "{url}: {}:// is not an object store ndnpy knows \
                 (s3, s3a, gs, az, azure, abfs, abfss, http, https; local paths and file://)",
                url.scheme()
            )));
        };
        // Two threads may both make it; either store serves.
        self.known.register_store(url, Arc::clone(&store));
        Ok(store)
    }
}

/// The store of `url`'s bucket or host, configured from the environment;
/// `None` for a scheme that is not an object store's.
fn from_env(url: &Url) -> Result<Option<Arc<dyn ObjectStore>>> {
    let base = format!("{}://{}", url.scheme(), url.authority());
    let built: object_store::Result<Arc<dyn ObjectStore>> = match url.scheme() {
        "s3" | "s3a" => AmazonS3Builder::from_env()
            .with_url(&base)
            .build()
            .map(|s| Arc::new(s) as _),
        "gs" => GoogleCloudStorageBuilder::from_env()
            .with_url(&base)
            .build()
            .map(|s| Arc::new(s) as _),
        "az" | "azure" | "abfs" | "abfss" => MicrosoftAzureBuilder::from_env()
            .with_url(&base)
            .build()
            .map(|s| Arc::new(s) as _),
        "http" | "https" => HttpBuilder::new()
            .with_url(&base)
            .build()
            .map(|s| Arc::new(s) as _),
        _ => return Ok(None),
    };
    // The error names the URL: a store is made when a plan first needs it,
    // far from where the table was named.
    built
        .map(Some)
        .map_err(|e| DataFusionError::Configuration(format!("the store of {base}: {e}")))
}

impl EnvStoreRegistry {
    /// A runtime whose registry is a new [`EnvStoreRegistry`]: what
    /// `ndnpy-sql`, Ballista clients and the `ndnpy-ballista` processes run
    /// on.
    ///
    /// ```
    /// let runtime = ndnpy_datafusion::EnvStoreRegistry::runtime()?;
    /// let url = url::Url::parse("http://example.com/")?;
    /// assert!(runtime.object_store_registry.get_store(&url).is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn runtime() -> Result<Arc<RuntimeEnv>> {
        RuntimeEnvBuilder::new()
            .with_object_store_registry(Arc::new(EnvStoreRegistry::default()))
            .build_arc()
    }
}
