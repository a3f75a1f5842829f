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

mod columns;
mod error;
mod format;
mod layout;
mod ranges;
mod register;
mod scan;
mod source;

pub use format::{NpyFormat, NpyFormatFactory};
pub use layout::VALUE_COLUMN;
pub use register::{register_formats, NpyReadOptions, SessionContextExt};
pub use source::NpySource;
