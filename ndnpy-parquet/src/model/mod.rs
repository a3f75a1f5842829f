//! The data model: a [`frame::Frame`] of [`column::Column`]s with its index,
//! and the pandas metadata that Parquet files carry beside them
//! ([`meta`]: parsed from and written to the `pandas` JSON). Columns hold
//! their metadata and the metadata is built from columns, which is why the
//! three share this folder.
//!
//! May use: `crate::error` and the `ndnpy` library. Reading and writing
//! Parquet (`crate::read`, `crate::write`) and the conversion to and from
//! NumPy arrays (`crate::convert`) build on it.

pub(crate) mod column;
pub(crate) mod frame;
pub(crate) mod meta;
