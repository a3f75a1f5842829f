//! [`ErrorKind`]: the crate's error variants grouped by what a caller can
//! do about them, and the conversion into `std::io::Error`.

use super::Error;
use std::io;

/// What kind of failure an [`Error`] is, for callers that decide what to do
/// without naming each of [`Error`]'s variants ([`Error::kind`]).
///
/// Like [`Error`], this enum may gain variants: match it with a `_` arm.
///
/// ```
/// use ndarray::Array1;
/// use ndnpy::{ErrorKind, ReadNpy, WriteNpy};
///
/// let bytes = Array1::<f32>::zeros(3).to_npy_bytes()?;
/// for input in [&bytes[..], b"PK\x03\x04 not npy", &bytes[..20]] {
///     match Array1::<f64>::from_npy_bytes(input).map_err(|e| e.kind()) {
///         Ok(_) => unreachable!(),
///         Err(ErrorKind::TypeMismatch) => {} // f4 data: read it as f32, or as AnyArray
///         Err(ErrorKind::Malformed) => {}    // not a .npy file, or a damaged one
///         Err(other) => panic!("{other:?}"),
///     }
/// }
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The operating system, a reader or a writer failed, or a file changed
    /// while it was read ([`Error::Io`], [`Error::IoPath`],
    /// [`Error::FileShrank`]): [`Error::io_error`] has the details.
    Io,
    /// The input is not valid NumPy data: not a `.npy` file or archive at
    /// all ([`Error::BadMagic`], [`Error::NotNpy`]), or a damaged one (a
    /// malformed header, truncated data, a bad CRC, a broken pickle...).
    Malformed,
    /// Valid data this crate does not read or cannot do this with: an
    /// unknown format version, a dtype without a Rust type, an encrypted or
    /// foreign-compressed member, a pickle outside the closed set of
    /// globals, a header with no room to grow in place.
    Unsupported,
    /// A limit was reached or a refusal set in
    /// [`ReadOptions`](crate::ReadOptions) applied: header length, nesting,
    /// stream length, pickle memory, NumPy's size limits, object arrays
    /// refused. Raise the limit if the input is trusted.
    LimitExceeded,
    /// The data is fine but not of the element type, dimensions or shape
    /// asked for ([`Error::DTypeMismatch`], [`Error::NdimMismatch`],
    /// [`Error::ShapeMismatch`], [`Error::AppendMismatch`]): read it as
    /// another type, or as [`AnyArray`](crate::AnyArray).
    TypeMismatch,
    /// A zero-copy view is impossible (misaligned, non-native byte order,
    /// a compressed member, a layout other than the type's, a read-only
    /// map); reading by copy works.
    NotViewable,
    /// An archive has no member of that name ([`Error::MemberNotFound`]).
    NotFound,
    /// The call cannot be done as asked: a duplicate or invalid member
    /// name, rows out of range or beyond a declared count, no growth axis,
    /// a file locked by another appender, a writer after an earlier
    /// failure.
    InvalidRequest,
}

impl Error {
    /// What kind of failure this is, so that callers can decide what to do
    /// without listing every variant.
    ///
    /// ```
    /// use ndnpy::{ErrorKind, NpzReader, NpzWriter};
    /// use std::io::Cursor;
    ///
    /// let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    /// w.add("x", &ndarray::array![1u8])?;
    /// let mut npz = NpzReader::new(w.finish_into_inner()?)?;
    /// assert_eq!(npz.read_any("y").unwrap_err().kind(), ErrorKind::NotFound);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn kind(&self) -> ErrorKind {
        use ErrorKind as K;
        match self {
            Error::Io(_) | Error::IoPath { .. } | Error::FileShrank { .. } => K::Io,
            Error::BadMagic { .. }
            | Error::TruncatedHeader { .. }
            | Error::HeaderEncoding { .. }
            | Error::MalformedHeader { .. }
            | Error::MissingKey(_)
            | Error::UnexpectedKey(_)
            | Error::BadShape(_)
            | Error::BadFortranOrder(_)
            | Error::BadDescr { .. }
            | Error::TruncatedData { .. }
            | Error::InvalidArchive { .. }
            | Error::InvalidSparse { .. }
            | Error::InvalidSafetensors { .. }
            | Error::NotNpy { .. }
            | Error::BadCrc { .. }
            | Error::CorruptMember { .. }
            | Error::InvalidUnicode { .. }
            | Error::MalformedPickle { .. } => K::Malformed,
            Error::UnsupportedVersion { .. }
            | Error::UnsupportedDType { .. }
            | Error::Encrypted { .. }
            | Error::UnsupportedMember { .. }
            | Error::UnsupportedPickle { .. }
            | Error::Py2StrNotAscii { .. }
            | Error::NoHeaderRoom { .. } => K::Unsupported,
            Error::HeaderTooLarge { .. }
            | Error::ZeroSizeLimit { .. }
            | Error::NestingTooDeep { .. }
            | Error::LengthOverflow { .. }
            | Error::StreamLimit { .. }
            | Error::PickleLimit { .. }
            | Error::ObjectsRefused => K::LimitExceeded,
            Error::DTypeMismatch { .. }
            | Error::NdimMismatch { .. }
            | Error::ShapeMismatch { .. }
            | Error::AppendMismatch { .. } => K::TypeMismatch,
            Error::Misaligned { .. }
            | Error::NonNativeByteOrder { .. }
            | Error::InvalidBool { .. }
            | Error::ReadOnly
            | Error::LayoutMismatch { .. }
            | Error::MisalignedMember { .. }
            | Error::CompressedMember { .. } => K::NotViewable,
            Error::MemberNotFound { .. } => K::NotFound,
            Error::DuplicateMember { .. }
            | Error::InvalidName { .. }
            | Error::IncompleteArchive { .. }
            | Error::IncompleteWrite
            | Error::RowCountMismatch { .. }
            | Error::RangeOutOfBounds { .. }
            | Error::NoGrowthAxis
            | Error::Locked { .. } => K::InvalidRequest,
        }
    }

    /// The `std::io::ErrorKind` that fits: an I/O error keeps its own; data
    /// that ends early is `UnexpectedEof`; malformed, unsupported and
    /// mismatched data is `InvalidData`; sizes beyond memory are
    /// `OutOfMemory`; a missing member is `NotFound`.
    fn io_kind(&self) -> io::ErrorKind {
        use io::ErrorKind as K;
        match self {
            Error::Io(e) | Error::IoPath { error: e, .. } => e.kind(),
            Error::FileShrank { .. }
            | Error::TruncatedHeader { .. }
            | Error::TruncatedData { .. } => K::UnexpectedEof,
            Error::LengthOverflow { .. } | Error::ZeroSizeLimit { .. } => K::OutOfMemory,
            Error::PickleLimit { what, .. } if what.starts_with("memory") => K::OutOfMemory,
            Error::MemberNotFound { .. } => K::NotFound,
            Error::DuplicateMember { .. } => K::AlreadyExists,
            Error::ReadOnly => K::PermissionDenied,
            Error::Locked { .. } => K::WouldBlock,
            Error::IncompleteArchive { .. } | Error::IncompleteWrite => K::Other,
            Error::InvalidName { .. }
            | Error::RowCountMismatch { .. }
            | Error::RangeOutOfBounds { .. }
            | Error::NoGrowthAxis
            | Error::ShapeMismatch { .. }
            | Error::AppendMismatch { .. } => K::InvalidInput,
            _ => K::InvalidData,
        }
    }
}

impl From<Error> for io::Error {
    /// An `io::Error` of the kind that fits (see [`Error::kind`]; I/O
    /// errors keep theirs), for code that returns `io::Result`. An
    /// [`Error::Io`] becomes the `io::Error` it holds; every other error is
    /// carried inside, so that it can be downcast back (and
    /// `ndnpy::Error::from` gives it back whole).
    ///
    /// ```
    /// use ndarray::Array1;
    /// use ndnpy::ReadNpy;
    ///
    /// fn load(bytes: &[u8]) -> std::io::Result<Array1<f64>> {
    ///     Ok(Array1::<f64>::from_npy_bytes(bytes)?)
    /// }
    ///
    /// let err = load(b"\x93NUMPY\x01\x00").unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
    /// let inner = err.get_ref().and_then(|e| e.downcast_ref::<ndnpy::Error>());
    /// assert!(matches!(inner, Some(ndnpy::Error::TruncatedHeader { .. })));
    /// ```
    fn from(e: Error) -> io::Error {
        match e {
            Error::Io(e) => e,
            other => io::Error::new(other.io_kind(), other),
        }
    }
}
