//! Errors of the scan: NumPy's errors carried in DataFusion's, with the
//! object they came from.

use datafusion::error::DataFusionError;

/// `e`, said to be about the object at `path`.
pub(crate) fn in_file(path: &str, e: DataFusionError) -> DataFusionError {
    DataFusionError::Context(format!("reading `{path}`"), Box::new(e))
}

/// A library error about the object at `path`.
pub(crate) fn npy_error(path: &str, e: ndnpy::Error) -> DataFusionError {
    in_file(path, DataFusionError::External(Box::new(e)))
}
