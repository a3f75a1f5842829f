//! The crate's one error type: the library's errors, the store's errors,
//! and what can go wrong between the two (an object that changed, a body
//! that does not match what was asked for).

use std::fmt;
use std::ops::Range;

/// What went wrong reading or writing an array in object storage.
///
/// ```
/// use ndnpy_store::{blocking, Location, StoreError};
///
/// // A scheme no store answers to.
/// assert!(matches!(Location::parse("ftp://host/a.npy"), Err(StoreError::Url(_))));
///
/// // A missing object: the store's own error.
/// let at = Location::parse("memory:///missing.npy")?;
/// assert!(matches!(blocking::RemoteNpy::open(&at), Err(StoreError::Store(_))));
///
/// // An array of another type than asked for: the library's error.
/// blocking::write_npy(&at, &ndarray::array![1i32])?;
/// let npy = blocking::RemoteNpy::open(&at)?;
/// assert!(matches!(npy.read::<f64, ndarray::Ix1>(), Err(StoreError::Npy(_))));
/// # Ok::<(), StoreError>(())
/// ```
#[derive(Debug)]
pub enum StoreError {
    /// The bytes are not a valid `.npy`/`.npz`, or the array does not fit
    /// the requested type: the library's error.
    Npy(ndnpy::Error),
    /// The store refused or failed a request (after its retries).
    Store(object_store::Error),
    /// The object was replaced between two requests (its ETag, version or
    /// size, or, from a store that gives neither ETag nor version, its
    /// modification time, no longer matches the first answer's): reading
    /// on would stitch one array from two versions.
    Changed {
        /// The object's path in its store.
        path: String,
    },
    /// The store answered a ranged GET with other bytes than were asked
    /// for: another range, or a body shorter or longer than the range.
    BadAnswer {
        /// The object's path in its store.
        path: String,
        /// The byte range that was asked for.
        asked: Range<u64>,
        /// What came back instead.
        got: String,
    },
    /// The URL could not be understood or names no store this build has.
    Url(String),
    /// Local I/O (temporary files, the runtime).
    Io(std::io::Error),
    /// A row range outside the array, or an array that has no rows to range
    /// over.
    Range(String),
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, StoreError>;

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Npy(e) => write!(f, "{e}"),
            StoreError::Store(e) => write!(f, "object store: {e}"),
            StoreError::Changed { path } => write!(
                f,
                "{path} changed while it was being read (its ETag, version, size or time no longer matches); \
                 read it again"
            ),
            StoreError::BadAnswer { path, asked, got } => write!(
                f,
                "{path}: asked for bytes {}..{} and got {got}",
                asked.start, asked.end
            ),
            StoreError::Url(why) => write!(f, "{why}"),
            StoreError::Io(e) => write!(f, "{e}"),
            StoreError::Range(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Npy(e) => Some(e),
            StoreError::Store(e) => Some(e),
            StoreError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ndnpy::Error> for StoreError {
    fn from(e: ndnpy::Error) -> Self {
        // The synchronous reader (npz) carries store errors through
        // `std::io::Error`: unwrap them back to what they were.
        if let ndnpy::Error::Io(io) = &e {
            if io.get_ref().is_some_and(|inner| inner.is::<StoreError>()) {
                let ndnpy::Error::Io(io) = e else {
                    unreachable!()
                };
                return *io
                    .into_inner()
                    .expect("checked above")
                    .downcast::<StoreError>()
                    .expect("checked above");
            }
        }
        StoreError::Npy(e)
    }
}

impl From<object_store::Error> for StoreError {
    fn from(e: object_store::Error) -> Self {
        StoreError::Store(e)
    }
}

impl From<std::io::Error> for StoreError {
    fn from(e: std::io::Error) -> Self {
        if e.get_ref().is_some_and(|inner| inner.is::<StoreError>()) {
            return *e
                .into_inner()
                .expect("checked above")
                .downcast::<StoreError>()
                .expect("checked above");
        }
        StoreError::Io(e)
    }
}
