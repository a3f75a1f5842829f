//! NumPy files as DataFusion tables.
//!
//! A folder (or glob) of `.npy` files of one dtype and trailing shape is one
//! table whose rows are the files' first axis: one column `value`, a column
//! per field of a record dtype, an `arrow.fixed_shape_tensor` column for
//! rows that are arrays themselves (the Arrow bridge of `ndnpy-parquet`). A
//! dask stack (`da.to_npy_stack`) is such a folder. An `.npz` whose members
//! share their first axis (`np.savez(f, x=…, y=…)`) is a table with a
//! column per member. Strings, datetimes (`NaT` as null), booleans and
//! numbers are read; object arrays are refused, naming the column.
//!
//! Schemas and row counts come from the headers alone (a `count(*)` reads
//! no data), `.npy` files and `.npz` archives of stored members are split
//! into row ranges so one large file is read on every core (an archive
//! with a compressed member is inflated once, by the library's parallel
//! inflate), only the members behind the queried columns are read, and
//! stored data is read by ranged GETs from the `ObjectStore` DataFusion
//! was given (local files and object storage alike).
//!
//! The `ndnpy-sql` command (`ndnpy-sql -t t=PATH_OR_URL "SELECT …"`) runs a
//! query over such tables. With the default feature `cloud`,
//! `EnvStoreRegistry` makes S3, GCS, Azure and HTTP stores for `s3://`,
//! `gs://`, `az://` and `http(s)://` tables, configured from the
//! environment, as they are asked for: `ndnpy-sql`, Ballista clients
//! (`ballista::remote_context`) and the `ndnpy-ballista` scheduler and
//! executors use it.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use datafusion::prelude::SessionContext;
//! use ndnpy::WriteNpy;
//! use ndnpy_datafusion::{NpyReadOptions, SessionContextExt};
//!
//! let dir = tempfile::tempdir()?;
//! ndarray::array![1.0f64, 2.0, 3.0].write_npy(dir.path().join("0.npy"))?;
//! ndarray::array![4.0f64].write_npy(dir.path().join("1.npy"))?;
//!
//! let ctx = SessionContext::new();
//! let path = dir.path().to_str().unwrap();
//! ctx.register_npy("t", path, NpyReadOptions::default()).await?;
//! let batches = ctx.sql("SELECT sum(value) AS s FROM t").await?.collect().await?;
//! let s = batches[0].column(0).as_any().downcast_ref::<datafusion::arrow::array::Float64Array>().unwrap();
//! assert_eq!(s.value(0), 10.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Across machines with Ballista
//!
//! With the feature `ballista`, the same tables run on a
//! [Ballista](https://datafusion.apache.org/ballista/) cluster: start a
//! scheduler and executors of this crate's `ndnpy-ballista` binary (Ballista's
//! own, with the codecs that carry NumPy tables and scans in plans), and
//! query from `ballista::remote_context` or the command line:
//!
//! ```text
//! ndnpy-ballista scheduler --port 50050
//! ndnpy-ballista executor --scheduler localhost:50050 --port 50051 --grpc-port 50052
//! ndnpy-ballista executor --scheduler localhost:50050 --port 50061 --grpc-port 50062
//! ndnpy-sql --ballista df://localhost:50050 -t t=/shared/shards/ "SELECT avg(value) FROM t"
//! ```
//!
//! Every process opens the files by the table's path or URL (the scheduler
//! lists them and reads their headers as it plans; executors read the
//! rows), so they live on a shared folder or in object storage. The
//! feature builds DataFusion with its default features, which Ballista
//! asks for. See the `ballista` module.

#[cfg(feature = "ballista")]
pub mod ballista;
mod columns;
mod error;
mod format;
mod layout;
mod ranges;
mod register;
mod scan;
mod source;
#[cfg(feature = "cloud")]
mod stores;
mod table;

pub use format::{NpyFormat, NpyFormatFactory};
pub use layout::VALUE_COLUMN;
pub use register::{register_formats, NpyReadOptions, SessionContextExt};
pub use source::NpySource;
#[cfg(feature = "cloud")]
pub use stores::EnvStoreRegistry;
pub use table::NpyTable;
