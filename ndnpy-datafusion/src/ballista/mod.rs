//! NumPy tables across machines with [Ballista](https://datafusion.apache.org/ballista/)
//! (feature `ballista`).
//!
//! Ballista sends a client's logical plan to a scheduler, which plans it and
//! sends stages of the physical plan to executors, all as protobuf.
//! DataFusion's protobuf knows only its built-in formats, so NumPy tables
//! travel through Ballista's extension codecs: [`NpyLogicalCodec`] carries a
//! table ([`crate::NpyTable`]: paths and extensions) to the scheduler, and
//! [`NpyPhysicalCodec`] carries scans (files, row ranges, projection) to the
//! executors. Both hand everything else to Ballista's own codecs.
//!
//! The scheduler and executors must use these codecs: the `ndnpy-ballista`
//! binary is Ballista's scheduler (`ndnpy-ballista scheduler`) and executor
//! (`ndnpy-ballista executor`) with them. Clients use [`remote_context`] and
//! register tables on it as on any context
//! ([`crate::SessionContextExt::register_npy`]), or `ndnpy-sql --ballista
//! df://HOST:PORT`. Every
//! process reads the files by the same path or URL, so they live on a
//! shared folder or in object storage.
//!
//! ```no_run
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use datafusion::prelude::SessionConfig;
//! use ndnpy_datafusion::{ballista, NpyReadOptions, SessionContextExt};
//!
//! // `ndnpy-ballista scheduler --port 50050` and executors are running.
//! let ctx = ballista::remote_context("df://localhost:50050", SessionConfig::new()).await?;
//! ctx.register_npy("t", "/shared/shards/", NpyReadOptions::default()).await?;
//! ctx.sql("SELECT count(*), avg(value) FROM t").await?.show().await?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod logical;
mod physical;
mod tag;

pub use logical::NpyLogicalCodec;
pub use physical::NpyPhysicalCodec;

use crate::register::register_formats;
use ballista_core::extension::{SessionConfigExt, SessionStateExt};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::sync::Arc;

/// The scheduler's address as Ballista's client dials it: `df://host:port`
/// (Ballista's form), `http://host:port` or `host:port`; port 50050 (the
/// scheduler's default) when none is given.
fn scheduler_url(url: &str) -> Result<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.contains('/') {
        return Err(DataFusionError::Configuration(format!(
            "{url}: expected a scheduler address, df://HOST:PORT"
        )));
    }
    let has_port = rest
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok());
    Ok(if has_port {
        format!("http://{rest}")
    } else {
        format!("http://{rest}:50050")
    })
}

/// A context whose queries run on the Ballista cluster whose scheduler is
/// at `url` (`df://host:port`), with `config`'s settings (partitions, batch
/// size…), our codecs, and `STORED AS NPY`/`NPZ` for `CREATE EXTERNAL
/// TABLE` ([`crate::register_formats`]). Nothing is dialled until a query runs.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use datafusion::prelude::SessionConfig;
/// let ctx = ndnpy_datafusion::ballista::remote_context("df://localhost:50050", SessionConfig::new()).await?;
/// assert_eq!(ctx.state().config().target_partitions(), SessionConfig::new().target_partitions());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub async fn remote_context(url: &str, config: SessionConfig) -> Result<SessionContext> {
    let scheduler = scheduler_url(url)?;
    let config = SessionConfigExt::upgrade_for_ballista(config)
        .with_ballista_logical_extension_codec(Arc::new(NpyLogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(NpyPhysicalCodec::default()));
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features();
    // The client lists a table's files and reads their headers as it
    // plans: object storage URLs need their stores here too.
    #[cfg(feature = "cloud")]
    let state = state.with_runtime_env(crate::EnvStoreRegistry::runtime()?);
    let state = state.build();
    let state = SessionStateExt::upgrade_for_ballista(state, scheduler)?;
    let ctx = SessionContext::new_with_state(state);
    register_formats(&ctx)?;
    Ok(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_addresses() {
        assert_eq!(scheduler_url("df://h:1").unwrap(), "http://h:1");
        assert_eq!(scheduler_url("h").unwrap(), "http://h:50050");
        assert_eq!(scheduler_url("http://[::1]:7/").unwrap(), "http://[::1]:7");
        assert!(scheduler_url("df://").is_err());
        assert!(scheduler_url("df://h:1/x").is_err());
    }
}
