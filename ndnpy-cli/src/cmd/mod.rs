//! The commands, one module each. Each takes its parsed arguments and
//! writes through [`crate::output`]; they share the helpers beside this
//! folder (`input`, `gather`, `slice`, `values`, `repr`, `settings`) and the
//! Parquet bridge (`parquet`), and never import one another.

pub(crate) mod check;
pub(crate) mod convert;
pub(crate) mod diff;
pub(crate) mod info;
pub(crate) mod show;
pub(crate) mod stats;
