//! The one error type of this crate.

use std::fmt;

/// Everything that can go wrong reading or writing a frame.
///
/// ```
/// use ndarray::array;
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Column, Error, Frame};
///
/// // Columns of different lengths make no frame.
/// let err = Frame::new(vec![
///     Column::new("a", AnyArray::I32(array![1, 2].into_dyn())),
///     Column::new("b", AnyArray::I32(array![1].into_dyn())),
/// ])
/// .unwrap_err();
/// assert!(matches!(err, Error::Invalid(_)));
///
/// // A file that is not Parquet is refused by the Parquet layer.
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("x.parquet"), b"not parquet")?;
/// let err = Frame::read(dir.path().join("x.parquet")).unwrap_err();
/// assert!(matches!(err, Error::Parquet(_)), "{err}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system error (opening, reading or writing a file).
    Io(std::io::Error),
    /// The Parquet layer refused the file: truncated, corrupt or inconsistent.
    Parquet(String),
    /// The `pandas` key of the file is not valid JSON of the expected shape,
    /// or it contradicts the file (a column it names is missing, a RangeIndex
    /// whose length is not the row count, ...). Also a column's
    /// `arrow.fixed_shape_tensor` extension metadata that is wrong: not
    /// JSON, a shape that disagrees with the list size, a permutation that
    /// is not one.
    Metadata(String),
    /// A column holds a type this crate cannot represent.
    Unsupported {
        /// The column's name (empty for an unnamed Arrow array).
        column: String,
        /// What the type is and why it is not supported.
        reason: String,
    },
    /// Reading would take more memory than the limit in
    /// [`ReadOptions`](crate::ReadOptions) allows.
    TooLarge {
        /// Bytes the data needs (at least).
        needed: u64,
        /// The limit in force.
        limit: u64,
    },
    /// A frame built in Rust is inconsistent (columns of different lengths,
    /// a mask of the wrong length, categorical codes out of range, ...).
    Invalid(String),
    /// An error from `ndnpy` (the `.npz` mapping).
    Npy(ndnpy::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::Parquet(e) => write!(f, "invalid Parquet file: {e}"),
            Error::Metadata(e) => write!(f, "invalid pandas metadata: {e}"),
            // An unnamed array (the Arrow conversions) has an empty name.
            Error::Unsupported { column, reason } if column.is_empty() => {
                write!(f, "not supported: {reason}")
            }
            Error::Unsupported { column, reason } => {
                write!(f, "column {column:?} is not supported: {reason}")
            }
            Error::TooLarge { needed, limit } => write!(
                f,
                "the data needs at least {needed} bytes, over the limit of {limit} bytes (raise ReadOptions::max_bytes to read it)"
            ),
            Error::Invalid(e) => write!(f, "invalid frame: {e}"),
            Error::Npy(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Npy(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Self {
        match e {
            parquet::errors::ParquetError::External(inner) => {
                match inner.downcast::<std::io::Error>() {
                    Ok(io) => Error::Io(*io),
                    Err(other) => Error::Parquet(other.to_string()),
                }
            }
            other => Error::Parquet(other.to_string()),
        }
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        match e {
            arrow_schema::ArrowError::IoError(_, io) => Error::Io(io),
            other => Error::Parquet(other.to_string()),
        }
    }
}

impl From<ndnpy::Error> for Error {
    fn from(e: ndnpy::Error) -> Self {
        Error::Npy(e)
    }
}
