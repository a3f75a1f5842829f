//! The data model: a [`frame::Frame`] of [`column::Column`]s with its index,
//! and the pandas metadata that Parquet files carry beside them
//! ([`meta`]: parsed from and written to the `pandas` JSON).
//!
//! Within the folder, data flows one way: [`time`] (units, `NaT`) ←
//! [`values`] (a column's data) ← [`column`] (a column, and its own entry in
//! the `pandas` key) ← [`frame`]; [`meta`] (the `pandas` JSON) knows no
//! column, and a column holds the [`meta::ColumnMeta`] it was read with.
//!
//! May use: `crate::error` and the `ndnpy` library. Reading and writing
//! Parquet (`crate::read`, `crate::write`) and the conversion to and from
//! NumPy arrays (`crate::convert`) build on it.

pub(crate) mod column;
pub(crate) mod frame;
pub(crate) mod meta;
pub(crate) mod time;
pub(crate) mod values;
