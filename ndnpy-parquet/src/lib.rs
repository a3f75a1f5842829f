//! Read and write pandas DataFrames stored in Parquet, as `ndnpy` arrays.
//!
//! pandas (pyarrow engine) stores a DataFrame as plain Parquet columns plus a
//! `pandas` key in the file's metadata that says how to rebuild it: which
//! columns form the index (or a RangeIndex kept as numbers only), the
//! original labels, categoricals, time zones and nullable dtypes. [`Frame`]
//! follows that key when reading and writes it back, so
//! `pd.read_parquet(path)` of a frame read and written here equals that of
//! the original.
//!
//! ```
//! use ndarray::array;
//! use ndnpy::AnyArray;
//! use ndnpy_parquet::{Column, Frame, Index, TimeUnit, Values};
//!
//! let t = Column::new("t", Values::datetime64(vec![0, 1_000_000], TimeUnit::Microsecond))
//!     .with_timezone("Europe/Paris")?;
//! let x = Column::new("x", AnyArray::F32(array![0.5f32, 1.5].into_dyn()));
//! let s = Column::new("s", Values::strings(["a", ""])).with_validity(vec![true, false])?;
//! let frame = Frame::new(vec![t, x, s])?;
//! let bytes = frame.to_bytes(&Default::default())?;
//! let back = Frame::from_bytes(&bytes, &Default::default())?;
//! assert_eq!(back.column("t").unwrap().pandas_type(), "datetimetz");
//! assert_eq!(back.column("t").unwrap().timezone(), Some("Europe/Paris"));
//! assert_eq!(back.column("s").unwrap().validity(), Some(&[true, false][..]));
//! assert!(matches!(back.index(), Index::Range(r) if r.stop == 2));
//! # Ok::<(), ndnpy_parquet::Error>(())
//! ```
//!
//! # Columns
//! Each column is a 1-D [`ndnpy::AnyArray`] (numbers, bools, `Str`, `Bytes`,
//! `Datetime64`/`Timedelta64` with their unit) or a [`Categorical`], with an
//! optional validity mask; a datetime column's time zone is kept beside it
//! ([`Column::timezone`]). [`convert`] maps a frame to and from `.npz`.
//!
//! # What is kept
//! - Index: a RangeIndex (start, stop, step, name) rebuilt without data, or
//!   index columns (a MultiIndex when several), `__index_level_N__` fields
//!   becoming unnamed levels; on writing, pyarrow's naming rule.
//! - Columns in order with their labels; the description of the column
//!   labels' type (`column_indexes`, e.g. integer labels) and `df.attrs`.
//! - Categoricals with string or bytes categories (codes with −1 for
//!   missing, categories, `ordered`), merged across row groups; like
//!   pyarrow, dictionaries of other types read as plain values.
//! - Missing values as a validity mask, and each column's pandas dtype
//!   (`Int64`, `boolean`, `Float64`, `string`, `str`, ...) for writing back.
//! - Datetimes (s, ms, us, ns) with their time zone, timedeltas.
//! - Snappy, zstd, gzip and uncompressed files, any number of row groups.
//!   Files without a `pandas` key read as plain columns with a default
//!   RangeIndex.
//!
//! # Limits
//! - Not supported (a clear [`Error::Unsupported`]): columns of arbitrary
//!   Python objects (pickled `object` columns), decimals, intervals,
//!   periods, sparse arrays, nested types (lists, structs), dates and times
//!   of day, complex numbers, columns of only `None` (Arrow `null`).
//!   N-dimensional arrays (`arrow.fixed_shape_tensor` columns) are not
//!   frame columns: they go through record batches instead
//!   ([`arrow::npz_to_batch`], [`arrow::write_parquet`],
//!   [`arrow::read_parquet`], [`arrow::batch_to_npz`]).
//! - Categoricals of strings or bytes keep their categories exactly (order,
//!   unused ones, `ordered`): their column chunks are written page by page,
//!   since the Arrow Rust writer re-encodes dictionaries in order of first
//!   appearance. Categoricals of other types are written through that
//!   writer (pyarrow reads them back as plain values anyway); an ordered one
//!   whose categories would be renumbered is refused
//!   ([`Error::Unsupported`]). A frame without rows has no row group, so an
//!   empty categorical reads back without categories.
//! - Reading needs at most [`ReadOptions::max_bytes`] of decoded data
//!   (default: 256 MiB or 64 times the file's size, whichever is larger).
//! - Datetimes are written in ms, us or ns (Parquet's units); NumPy's
//!   seconds, minutes, hours, days and weeks become milliseconds (as pyarrow
//!   writes pandas' `datetime64[s]`). Timedeltas keep s, ms, us, ns and
//!   turn minutes to weeks into seconds. Other units (years, months, ps, fs,
//!   as, generic) are refused.
#![deny(missing_docs)]

pub mod arrow;
pub mod convert;
mod dictionary;
mod error;
mod model;
mod read;
mod summary;
mod write;

pub use error::{Error, Result};
pub use model::column::Column;
pub use model::frame::{Compression, Frame, Index, RangeIndex, ReadOptions, WriteOptions};
pub use model::time::{TimeUnit, NAT};
pub use model::values::{Categorical, Values};
pub use summary::{ColumnSummary, IndexSummary, Summary};

/// Entry points for the fuzz targets (`fuzz/fuzz_targets/parquet_*.rs`); not
/// part of the API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::read::read_with_pandas_json;
}
