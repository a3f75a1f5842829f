//! The one error type of the crate, [`Error`], and the groups of its
//! variants ([`HeaderError`], [`ArchiveError`], [`LimitError`], ...).
//!
//! Most callers need only [`Error`] and [`ErrorKind`] (both at the root):
//! match on [`Error::kind`] to decide what to do, print the error for a
//! user. This module is for callers that match on a precise cause, such as
//! a CRC mismatch in an archive.
//!
//! ```
//! use ndnpy::error::HeaderError;
//! use ndnpy::{Error, ErrorKind, ReadNpy};
//!
//! let err = ndarray::Array1::<f64>::from_npy_bytes(b"not a numpy file").unwrap_err();
//! assert_eq!(err.kind(), ErrorKind::Malformed);
//! assert!(matches!(err, Error::Header(HeaderError::BadMagic { .. })));
//! ```

use std::io;
use std::path::{Path, PathBuf};

mod areas;
mod display;
mod kind;
mod text;

pub use areas::{
    ArchiveError, DataError, HeaderError, LimitError, PickleError, RowsError, ViewError, WriteError,
};
pub use kind::ErrorKind;
pub(crate) use text::capped;

/// Everything that can go wrong while reading, writing or viewing `.npy` and
/// `.npz` data.
///
/// Variants are grouped by what the caller does next: a damaged header
/// ([`Error::Header`]), a limit to raise ([`Error::Limit`]), damaged data
/// ([`Error::Data`]), a view to replace by a copy ([`Error::View`]), a
/// damaged or foreign archive ([`Error::Archive`]), a pickle the safe
/// reader refuses ([`Error::Pickle`]), a writer misused ([`Error::Write`]),
/// rows out of reach ([`Error::Rows`]), and the common mismatches and
/// I/O failures on their own. The details are the fields of the nested
/// enums in [`crate::error`]. [`Error::kind`] is the stable thing to match
/// on; the `Display` text tells a user what to fix.
///
/// ```
/// use ndnpy::{Error, ReadNpy};
/// use ndarray::Array1;
///
/// let err = Array1::<f64>::from_npy_bytes(b"not a numpy file").unwrap_err();
/// assert!(matches!(err, Error::Header(ndnpy::error::HeaderError::BadMagic { .. })));
/// ```
#[non_exhaustive]
pub enum Error {
    /// An I/O error from the underlying reader, writer or file system.
    Io(io::Error),

    /// An I/O error while opening or reading a file the caller named by its
    /// path (the functions that take a path give this instead of
    /// [`Error::Io`] when they read).
    ///
    /// ```
    /// let err = ndnpy::dtype::Header::open("no/such/file.npy").unwrap_err();
    /// assert!(matches!(&err, ndnpy::Error::IoPath { error, .. }
    ///     if error.kind() == std::io::ErrorKind::NotFound));
    /// assert!(err.to_string().starts_with("no/such/file.npy: "));
    /// ```
    IoPath {
        /// The path as the caller gave it.
        path: PathBuf,
        /// What the operating system reported.
        error: io::Error,
    },

    /// A `.npy` header (or the preamble before it) that is not valid: the input is not NumPy data, or it is damaged. Read another file, or repair this one.
    Header(HeaderError),

    /// A limit of [`ReadOptions`](crate::ReadOptions) was reached, or a refusal it sets applied. Raise the limit if the input is trusted.
    Limit(LimitError),

    /// The data after a valid header is damaged: cut short, changed while read, or holding values its type cannot (bool bytes other than 0 and 1, code units that are not Unicode).
    Data(DataError),

    /// A zero-copy view is impossible; reading by copy (or `view_or_copy`) works.
    View(ViewError),

    /// An `.npz` archive or one of its members is damaged, encrypted or compressed with a method this build does not read.
    Archive(ArchiveError),

    /// An object array's pickle is damaged or uses what the safe reader does not accept (nothing was executed).
    Pickle(PickleError),

    /// A writer was used in a way it refuses: a name added twice or not valid, or a call after an earlier failure left the output incomplete.
    Write(WriteError),

    /// A request about rows that the file cannot serve as asked: a range out of bounds, a row count other than declared, no axis to grow, an append that does not fit, or a file another appender holds.
    Rows(RowsError),

    /// The descriptor is valid but its data cannot be turned into Rust values.
    UnsupportedDType {
        /// The descriptor, in NumPy's spelling.
        dtype: String,
        /// Why it is unsupported.
        reason: String,
    },

    /// The file holds another element type than the one asked for.
    DTypeMismatch {
        /// The Rust type and descriptor that was asked for.
        expected: String,
        /// The descriptor in the file.
        found: String,
    },

    /// The file's shape has another number of dimensions than the array type.
    NdimMismatch {
        /// Dimensions of the requested array type.
        expected: usize,
        /// Dimensions in the file.
        found: usize,
        /// The shape in the file.
        shape: Vec<usize>,
    },

    /// A `scipy.sparse` archive whose members disagree (an index out of
    /// range, `indptr` not monotone, lengths that do not match).
    InvalidSparse {
        /// What is inconsistent.
        reason: String,
    },

    /// Not a valid safetensors file: the `safetensors` crate refused its
    /// header (its size, its JSON, offsets that do not tile the data).
    InvalidSafetensors {
        /// What the safetensors crate found wrong.
        reason: String,
    },

    /// The archive has no member with this name (neither `name` nor
    /// `name.npy`).
    MemberNotFound {
        /// The name that was asked for.
        name: String,
    },

    /// The array to read into has another shape than the file's.
    ShapeMismatch {
        /// The shape of the array given.
        expected: Vec<usize>,
        /// The shape the header declares.
        found: Vec<usize>,
    },
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::IoPath { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    /// An I/O error; or, when it carries one of the crate's own errors (how
    /// the streaming readers, such as [`crate::NpzReader::member_reader`],
    /// report a CRC mismatch through `io::Read`), that error.
    fn from(e: io::Error) -> Self {
        match typed_inside(e) {
            Ok(typed) => typed,
            Err(e) => Error::Io(e),
        }
    }
}

/// The crate's error that `e` carries, if it carries one; `e` back
/// otherwise.
pub(crate) fn typed_inside(e: io::Error) -> std::result::Result<Error, io::Error> {
    if e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
        let inner = e.into_inner().expect("checked above");
        return Ok(*inner.downcast::<Error>().expect("checked above"));
    }
    Err(e)
}

impl Error {
    /// The operating system's error behind an [`Error::Io`] or
    /// [`Error::IoPath`] (which adds the path), for checks of its kind.
    ///
    /// ```
    /// use ndnpy::{ReadNpy, WriteNpy};
    ///
    /// let err = ndarray::Array1::<f64>::read_npy("no/such/file.npy").unwrap_err();
    /// assert_eq!(err.io_error().map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));
    /// let err = ndarray::array![1.0].write_npy("no/such/folder/a.npy").unwrap_err();
    /// assert_eq!(err.io_error().map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));
    /// ```
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            Error::Io(error) | Error::IoPath { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Names `path` in a bare I/O error; other variants pass unchanged.
    pub(crate) fn at_path(self, path: &Path) -> Error {
        match self {
            Error::Io(error) => Error::IoPath {
                path: path.to_owned(),
                error,
            },
            other => other,
        }
    }
}

/// Opens `path` for reading, naming it in the error.
pub(crate) fn open_file(path: &Path) -> Result<std::fs::File> {
    std::fs::File::open(path).map_err(|e| Error::Io(e).at_path(path))
}

/// Shorthand for results whose error is [`Error`].
///
/// ```
/// fn shape_of(bytes: &[u8]) -> ndnpy::Result<Vec<usize>> {
///     Ok(ndnpy::dtype::Header::read_from(bytes)?.shape)
/// }
/// assert!(shape_of(b"not npy").is_err());
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;
