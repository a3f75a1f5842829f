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
    /// [`crate::error::DataError::FileShrank`]): [`Error::io_error`] has the details.
    Io,
    /// The input is not valid NumPy data: not a `.npy` file or archive at
    /// all ([`crate::error::HeaderError::BadMagic`], [`crate::error::ArchiveError::NotNpy`]), or a damaged one (a
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
    /// [`Error::ShapeMismatch`], [`crate::error::RowsError::AppendMismatch`]): read it as
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
            Error::Io(_)
            | Error::IoPath { .. }
            | Error::Data(crate::error::DataError::FileShrank { .. }) => K::Io,
            Error::Header(crate::error::HeaderError::BadMagic { .. })
            | Error::Header(crate::error::HeaderError::TruncatedHeader { .. })
            | Error::Header(crate::error::HeaderError::HeaderEncoding { .. })
            | Error::Header(crate::error::HeaderError::MalformedHeader { .. })
            | Error::Header(crate::error::HeaderError::MissingKey(_))
            | Error::Header(crate::error::HeaderError::UnexpectedKey(_))
            | Error::Header(crate::error::HeaderError::BadShape(_))
            | Error::Header(crate::error::HeaderError::BadFortranOrder(_))
            | Error::Header(crate::error::HeaderError::BadDescr { .. })
            | Error::Data(crate::error::DataError::TruncatedData { .. })
            | Error::Archive(crate::error::ArchiveError::InvalidArchive { .. })
            | Error::InvalidSparse { .. }
            | Error::InvalidSafetensors { .. }
            | Error::Archive(crate::error::ArchiveError::NotNpy { .. })
            | Error::Archive(crate::error::ArchiveError::BadCrc { .. })
            | Error::Archive(crate::error::ArchiveError::CorruptMember { .. })
            | Error::Data(crate::error::DataError::InvalidUnicode { .. })
            | Error::Pickle(crate::error::PickleError::MalformedPickle { .. }) => K::Malformed,
            Error::Header(crate::error::HeaderError::UnsupportedVersion { .. })
            | Error::UnsupportedDType { .. }
            | Error::Archive(crate::error::ArchiveError::Encrypted { .. })
            | Error::Archive(crate::error::ArchiveError::UnsupportedMember { .. })
            | Error::Pickle(crate::error::PickleError::UnsupportedPickle { .. })
            | Error::Pickle(crate::error::PickleError::Py2StrNotAscii { .. })
            | Error::Rows(crate::error::RowsError::NoHeaderRoom { .. }) => K::Unsupported,
            Error::Limit(crate::error::LimitError::HeaderTooLarge { .. })
            | Error::Limit(crate::error::LimitError::ZeroSizeLimit { .. })
            | Error::Limit(crate::error::LimitError::NestingTooDeep { .. })
            | Error::Limit(crate::error::LimitError::LengthOverflow { .. })
            | Error::Limit(crate::error::LimitError::StreamLimit { .. })
            | Error::Limit(crate::error::LimitError::PickleLimit { .. })
            | Error::Limit(crate::error::LimitError::ObjectsRefused) => K::LimitExceeded,
            Error::DTypeMismatch { .. }
            | Error::NdimMismatch { .. }
            | Error::ShapeMismatch { .. }
            | Error::Rows(crate::error::RowsError::AppendMismatch { .. }) => K::TypeMismatch,
            Error::View(crate::error::ViewError::Misaligned { .. })
            | Error::View(crate::error::ViewError::NonNativeByteOrder { .. })
            | Error::Data(crate::error::DataError::InvalidBool { .. })
            | Error::View(crate::error::ViewError::ReadOnly)
            | Error::View(crate::error::ViewError::LayoutMismatch { .. })
            | Error::View(crate::error::ViewError::MisalignedMember { .. })
            | Error::View(crate::error::ViewError::CompressedMember { .. }) => K::NotViewable,
            Error::MemberNotFound { .. } => K::NotFound,
            Error::Write(crate::error::WriteError::DuplicateMember { .. })
            | Error::Write(crate::error::WriteError::InvalidName { .. })
            | Error::Write(crate::error::WriteError::IncompleteArchive { .. })
            | Error::Write(crate::error::WriteError::IncompleteWrite)
            | Error::Rows(crate::error::RowsError::RowCountMismatch { .. })
            | Error::Rows(crate::error::RowsError::RangeOutOfBounds { .. })
            | Error::Rows(crate::error::RowsError::NoGrowthAxis)
            | Error::Rows(crate::error::RowsError::Locked { .. }) => K::InvalidRequest,
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
            Error::Data(crate::error::DataError::FileShrank { .. })
            | Error::Header(crate::error::HeaderError::TruncatedHeader { .. })
            | Error::Data(crate::error::DataError::TruncatedData { .. }) => K::UnexpectedEof,
            Error::Limit(crate::error::LimitError::LengthOverflow { .. })
            | Error::Limit(crate::error::LimitError::ZeroSizeLimit { .. }) => K::OutOfMemory,
            Error::Limit(crate::error::LimitError::PickleLimit { what, .. })
                if what.starts_with("memory") =>
            {
                K::OutOfMemory
            }
            Error::MemberNotFound { .. } => K::NotFound,
            Error::Write(crate::error::WriteError::DuplicateMember { .. }) => K::AlreadyExists,
            Error::View(crate::error::ViewError::ReadOnly) => K::PermissionDenied,
            Error::Rows(crate::error::RowsError::Locked { .. }) => K::WouldBlock,
            Error::Write(crate::error::WriteError::IncompleteArchive { .. })
            | Error::Write(crate::error::WriteError::IncompleteWrite) => K::Other,
            Error::Write(crate::error::WriteError::InvalidName { .. })
            | Error::Rows(crate::error::RowsError::RowCountMismatch { .. })
            | Error::Rows(crate::error::RowsError::RangeOutOfBounds { .. })
            | Error::Rows(crate::error::RowsError::NoGrowthAxis)
            | Error::ShapeMismatch { .. }
            | Error::Rows(crate::error::RowsError::AppendMismatch { .. }) => K::InvalidInput,
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
    /// assert!(matches!(inner, Some(ndnpy::Error::Header(ndnpy::error::HeaderError::TruncatedHeader { .. }))));
    /// ```
    fn from(e: Error) -> io::Error {
        match e {
            Error::Io(e) => e,
            other => io::Error::new(other.io_kind(), other),
        }
    }
}
