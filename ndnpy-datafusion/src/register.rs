//! Tables on a `SessionContext`: `register_npy` for a path or URL, and
//! `STORED AS NPY` / `STORED AS NPZ` for `CREATE EXTERNAL TABLE`.

use crate::format::{NpyFormat, NpyFormatFactory};
use crate::table::{NpyTable, NpyTableFactory};
use async_trait::async_trait;
use datafusion::datasource::listing::ListingOptions;
use datafusion::error::DataFusionError;
use datafusion::error::Result;
use datafusion::prelude::SessionContext;
use std::sync::Arc;

/// How [`SessionContextExt::register_npy`] lists a table's files.
///
/// ```
/// let options = ndnpy_datafusion::NpyReadOptions::default().extension("npz");
/// assert_eq!(options.extension.as_deref(), Some("npz"));
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct NpyReadOptions {
    /// The ending of the files a folder's table holds: `npy` unless the
    /// path names an `.npz`.
    pub extension: Option<String>,
}

impl NpyReadOptions {
    /// Lists files ending in `extension` (`"npz"` for a folder of archives).
    ///
    /// ```
    /// let options = ndnpy_datafusion::NpyReadOptions::default().extension(".npy");
    /// assert_eq!(options.extension.as_deref(), Some("npy"));
    /// ```
    pub fn extension(mut self, extension: &str) -> Self {
        self.extension = Some(extension.trim_start_matches('.').to_owned());
        self
    }
}

/// Registers `STORED AS NPY` and `STORED AS NPZ` on `ctx`, so that
/// `CREATE EXTERNAL TABLE t STORED AS NPY LOCATION '…'` makes a table
/// (`register_npy` calls it too).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy::WriteNpy;
/// let dir = tempfile::tempdir()?;
/// ndarray::array![3i32, 4].write_npy(dir.path().join("a.npy"))?;
/// let ctx = datafusion::prelude::SessionContext::new();
/// ndnpy_datafusion::register_formats(&ctx)?;
/// let sql = format!("CREATE EXTERNAL TABLE t STORED AS NPY LOCATION '{}/'", dir.path().display());
/// ctx.sql(&sql).await?;
/// let n = ctx.sql("SELECT count(*) FROM t").await?.count().await?;
/// assert_eq!(n, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub fn register_formats(ctx: &SessionContext) -> Result<()> {
    let state = ctx.state_ref();
    let mut state = state.write();
    for factory in [NpyFormatFactory::npy(), NpyFormatFactory::npz()] {
        let name = datafusion::common::GetExt::get_ext(&factory).to_uppercase();
        state.register_file_format(Arc::new(factory), true)?;
        state
            .table_factories_mut()
            .insert(name, Arc::new(NpyTableFactory::default()));
    }
    Ok(())
}

/// NumPy tables on a [`SessionContext`].
#[async_trait]
pub trait SessionContextExt {
    /// Registers table `name` over `path`: an `.npy` or `.npz` file, a
    /// folder (a dask stack, or shards; ending in `/`, or an existing
    /// local folder), a glob, or a URL of an object store registered on
    /// the context.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_datafusion::{NpyReadOptions, SessionContextExt};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("x.npz");
    /// let mut w = ndnpy::NpzWriter::create(&path)?;
    /// w.add("x", &ndarray::array![1i64, 2, 3])?;
    /// w.add("y", &ndarray::array![0.5f32, 1.5, 2.5])?;
    /// w.finish()?;
    /// let ctx = datafusion::prelude::SessionContext::new();
    /// ctx.register_npy("t", path.to_str().unwrap(), NpyReadOptions::default()).await?;
    /// let rows = ctx.sql("SELECT x FROM t WHERE y > 1").await?.count().await?;
    /// assert_eq!(rows, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    async fn register_npy(&self, name: &str, path: &str, options: NpyReadOptions) -> Result<()>;
}

#[async_trait]
impl SessionContextExt for SessionContext {
    async fn register_npy(&self, name: &str, path: &str, options: NpyReadOptions) -> Result<()> {
        register_formats(self)?;
        let lower = path.to_ascii_lowercase();
        let extension = match options.extension {
            Some(e) => e,
            None if lower.ends_with(".npz") => "npz".into(),
            None => "npy".into(),
        };
        let local_dir = !path.contains("://") && std::path::Path::new(path).is_dir();
        let path = if local_dir && !path.ends_with('/') {
            format!("{path}/")
        } else {
            path.to_owned()
        };
        let listing = ListingOptions::new(Arc::new(NpyFormat::with_extension(&extension)))
            .with_file_extension(format!(".{extension}"));
        self.register_listing_table(name, path, listing, None, None)
            .await?;
        // The same table as an `NpyTable`, which Ballista can send to a
        // scheduler (`table.rs`): one way to register, local or remote.
        let table = self
            .deregister_table(name)?
            .ok_or_else(|| DataFusionError::Internal(format!("table {name} vanished")))?;
        self.register_table(name, NpyTable::wrap(table)?)?;
        Ok(())
    }
}
