//! How an [`Error`] prints: `Display` (the messages, one line per variant,
//! apart from the enum so that adding a variant's words does not grow its
//! definition) and `Debug`, which shows a grouped variant as the detailed
//! one it holds (`BadCrc { name: "x" }`, not `Archive(BadCrc { .. })`), as
//! it printed before the variants were grouped.

use super::text::{capped, looks_like};
use super::Error;
use std::fmt;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(v0) => write!(f, "I/O error: {v0}"),
            Error::IoPath { path, error } => write!(f, "{}: {error}", path.display()),
            Error::Header(crate::error::HeaderError::BadMagic { found }) => write!(f, "not a .npy file: {}", looks_like(found)),
            Error::Header(crate::error::HeaderError::UnsupportedVersion { major, minor }) => write!(f, "unsupported .npy format version {major}.{minor} (supported: 1.0, 2.0, 3.0)"),
            Error::Limit(crate::error::LimitError::HeaderTooLarge { len, max }) => write!(f, "header of {len} bytes exceeds the limit of {max} bytes (raise it with ReadOptions::max_header_len if the file is trusted)"),
            Error::Header(crate::error::HeaderError::TruncatedHeader { expected, found }) => write!(f, "truncated header: expected {expected} bytes, found {found}"),
            Error::Header(crate::error::HeaderError::HeaderEncoding { major, encoding }) => write!(f, "header text of version {major}.0 is not valid {encoding}"),
            Error::Header(crate::error::HeaderError::MalformedHeader { pos, expected, found }) => write!(f, "malformed header at character {pos}: expected {expected}, found {found}", expected = capped(expected), found = capped(found)),
            Error::Limit(crate::error::LimitError::ZeroSizeLimit { claimed, max }) => write!(f, "{claimed} values of zero size are declared (by a header, or by an archive's headers together), more than the limit of {max} (each costs memory although the file holds no data for it; raise ReadOptions::max_zero_size_elements if the file is trusted)"),
            Error::Limit(crate::error::LimitError::NestingTooDeep { max }) => write!(f, "header nests deeper than {max} levels"),
            Error::Header(crate::error::HeaderError::MissingKey(v0)) => write!(f, "header is missing the key '{v0}'"),
            Error::Header(crate::error::HeaderError::UnexpectedKey(v0)) => write!(f, "header has an unexpected key {v0}", v0 = capped(v0)),
            Error::Header(crate::error::HeaderError::BadShape(v0)) => write!(f, "invalid shape: {v0}", v0 = capped(v0)),
            Error::Header(crate::error::HeaderError::BadFortranOrder(v0)) => write!(f, "invalid fortran_order: expected True or False, found {v0}", v0 = capped(v0)),
            Error::Header(crate::error::HeaderError::BadDescr { descr, reason }) => write!(f, "invalid descr {descr}: {reason}", descr = capped(descr), reason = capped(reason)),
            Error::UnsupportedDType { dtype, reason } => write!(f, "unsupported dtype `{dtype}`: {reason}", dtype = capped(dtype), reason = capped(reason)),
            Error::DTypeMismatch { expected, found } => write!(f, "dtype mismatch: expected {expected}, found `{found}`", expected = capped(expected), found = capped(found)),
            Error::NdimMismatch { expected, found, shape } => write!(f, "dimension mismatch: expected {expected} dimensions, found {found} (shape {shape:?})"),
            Error::Limit(crate::error::LimitError::LengthOverflow { shape, itemsize }) => write!(f, "array too big: shape {:?} with {itemsize}-byte elements exceeds isize::MAX bytes (NumPy's limit, which ignores zero dimensions; ReadOptions::allow_beyond_numpy_limits reads such headers)", &shape[..shape.len().min(70)]),
            Error::Data(crate::error::DataError::FileShrank { needed, len }) => write!(f, "the file changed while it was read: it now ends at byte {len}, before byte {needed} of the data its header declares (another process truncated or rewrote it)"),
            Error::Data(crate::error::DataError::TruncatedData { expected, found }) => write!(f, "truncated data: the header declares {expected} bytes of data, found {found}"),
            Error::View(crate::error::ViewError::Misaligned { type_name, align, address }) => write!(f, "misaligned data: a view of {type_name} needs {align}-byte alignment, but the data starts at address {address:#x}"),
            Error::View(crate::error::ViewError::NonNativeByteOrder { dtype }) => write!(f, "cannot view `{dtype}` data without copying: it is not in native byte order (read it into an owned array instead)", dtype = capped(dtype)),
            Error::Data(crate::error::DataError::InvalidBool { index, value }) => write!(f, "invalid bool data: byte {value} at element {index} is neither 0 nor 1"),
            Error::ShapeMismatch { expected, found } => write!(f, "shape mismatch: the array to read into has shape {:?}, the file's is {:?}", &expected[..expected.len().min(70)], &found[..found.len().min(70)]),
            Error::View(crate::error::ViewError::LayoutMismatch { type_name, dtype, reason }) => write!(f, "cannot view `{dtype}` as {type_name} without copying: {reason}", dtype = capped(dtype), reason = capped(reason)),
            Error::Data(crate::error::DataError::InvalidUnicode { index, value }) => write!(f, "invalid unicode data: code unit {value:#x} in string {index} is not a Unicode scalar value"),
            Error::View(crate::error::ViewError::MisalignedMember { name, type_name, align, address }) => write!(f, "member `{name}` cannot be viewed as {type_name}: its data starts at address {address:#x}, not {align}-byte aligned (np.savez does not align members); use NpzMmap::view_or_copy, which copies when a view is impossible"),
            Error::View(crate::error::ViewError::ReadOnly) => write!(f, "the file is mapped read-only; open it with NpyMmap::open_rw or open_cow for a mutable view"),
            Error::Archive(crate::error::ArchiveError::InvalidArchive { reason }) => write!(f, "not a valid .npz (zip) archive: {reason} (the file may be truncated, or not an .npz file at all)", reason = capped(reason)),
            Error::InvalidSparse { reason } => write!(f, "not a valid scipy.sparse archive: {}", capped(reason)),
            Error::InvalidSafetensors { reason } => write!(f, "not a valid safetensors file: {}", capped(reason)),
            Error::Archive(crate::error::ArchiveError::NotNpy { name, found }) => write!(
                f,
                "archive member '{}' is not a .npy file (it starts with b\"{}\"); read its bytes with NpzReader::raw",
                capped(name),
                found.escape_ascii()
            ),
            Error::MemberNotFound { name } => write!(f, "the archive has no array named '{name}' (NpzReader::names lists the ones it has)", name = capped(name)),
            Error::Archive(crate::error::ArchiveError::BadCrc { name }) => write!(f, "archive member '{name}' is corrupt: its data does not match its CRC-32 checksum", name = capped(name)),
            Error::Archive(crate::error::ArchiveError::CorruptMember { name, reason }) => write!(f, "archive member '{name}' is corrupt: {reason}", name = capped(name), reason = capped(reason)),
            Error::Archive(crate::error::ArchiveError::Encrypted { name }) => write!(f, "archive member '{name}' is encrypted; decrypt the archive with a zip tool first", name = capped(name)),
            Error::Archive(crate::error::ArchiveError::UnsupportedMember { name, reason }) => write!(f, "archive member '{name}' cannot be read: {reason} (NumPy archives use only stored or deflate members; recompress it with np.savez)", name = capped(name), reason = capped(reason)),
            Error::View(crate::error::ViewError::CompressedMember { name }) => write!(f, "archive member '{name}' is compressed, so it cannot be viewed without copying; read it with NpzReader::read, or write the archive uncompressed (NpzWriter::create)", name = capped(name)),
            Error::Write(crate::error::WriteError::DuplicateMember { name }) => write!(f, "the archive already has an array named '{name}'; each name may be added once", name = capped(name)),
            Error::Limit(crate::error::LimitError::StreamLimit { claimed, max }) => write!(f, "the header declares {claimed} bytes of data to read from a stream, more than the limit of {max} (raise ReadOptions::max_stream_len if the stream is trusted)"),
            Error::Write(crate::error::WriteError::InvalidName { name, reason }) => write!(f, "cannot add an array named '{name}': {reason}", name = capped(&name.escape_debug().to_string()), reason = capped(reason)),
            Error::Write(crate::error::WriteError::IncompleteArchive { name }) => write!(f, "adding '{name}' to the archive failed earlier, so the archive is incomplete and was not finished (a path target was left untouched)", name = capped(name)),
            Error::Write(crate::error::WriteError::IncompleteWrite) => write!(f, "an earlier write to this NpyWriter failed part way, so the array is incomplete and was not finished (a path target was left untouched)"),
            Error::Rows(crate::error::RowsError::RowCountMismatch { declared, written }) => write!(f, "the shape declares {declared} rows along the growth axis, but {written} were written"),
            Error::Rows(crate::error::RowsError::RangeOutOfBounds { start, end, len }) => write!(f, "row range {start}..{end} is out of bounds for a growth axis of length {len}"),
            Error::Rows(crate::error::RowsError::NoGrowthAxis) => write!(f, "a 0-dimensional array has no axis to read in parts, append to or stream along"),
            Error::Rows(crate::error::RowsError::AppendMismatch { what, expected, found }) => write!(f, "cannot append: the {what} differs (the file has {expected}, the block has {found})"),
            Error::Rows(crate::error::RowsError::NoHeaderRoom { needed, available }) => write!(f, "the header has no room to grow in place ({needed} bytes needed, {available} present); rewrite it once with NpyFile::make_appendable"),
            Error::Rows(crate::error::RowsError::Locked { path }) => write!(f, "{} is locked by an appender (an open NpyFile::open_append, NpyWriter::append or make_appendable), or a path write under way holds it; it was left as it was: try again when it is closed", path.display()),
            Error::Pickle(crate::error::PickleError::UnsupportedPickle { what }) => write!(f, "object array pickle uses {what}, which the safe pickle reader does not accept (nothing was executed)"),
            Error::Pickle(crate::error::PickleError::Py2StrNotAscii { byte }) => write!(f, "object array pickle holds a Python 2 str with the byte 0x{byte:02x}, which is not ASCII (np.load's default encoding refuses it too): read it with ReadOptions::pickle_encoding(PickleEncoding::Latin1) or Bytes (np.load's encoding='latin1' or 'bytes'; the ndnpy command: --pickle-encoding)"),
            Error::Pickle(crate::error::PickleError::MalformedPickle { pos, reason }) => write!(f, "malformed object array pickle at byte {pos}: {reason}"),
            Error::Limit(crate::error::LimitError::PickleLimit { what, limit }) => write!(f, "object array pickle exceeds the reader's limit on {what} ({limit})"),
            Error::Limit(crate::error::LimitError::ObjectsRefused) => write!(f, "the file holds an object (pickled) array, and object arrays were refused by ReadOptions::allow_objects(false)"),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Header(e) => e.fmt(f),
            Error::Limit(e) => e.fmt(f),
            Error::Data(e) => e.fmt(f),
            Error::View(e) => e.fmt(f),
            Error::Archive(e) => e.fmt(f),
            Error::Pickle(e) => e.fmt(f),
            Error::Write(e) => e.fmt(f),
            Error::Rows(e) => e.fmt(f),
            Error::Io(e) => f.debug_tuple("Io").field(e).finish(),
            Error::IoPath { path, error } => f
                .debug_struct("IoPath")
                .field("path", path)
                .field("error", error)
                .finish(),
            Error::UnsupportedDType { dtype, reason } => f
                .debug_struct("UnsupportedDType")
                .field("dtype", dtype)
                .field("reason", reason)
                .finish(),
            Error::DTypeMismatch { expected, found } => f
                .debug_struct("DTypeMismatch")
                .field("expected", expected)
                .field("found", found)
                .finish(),
            Error::NdimMismatch {
                expected,
                found,
                shape,
            } => f
                .debug_struct("NdimMismatch")
                .field("expected", expected)
                .field("found", found)
                .field("shape", shape)
                .finish(),
            Error::InvalidSparse { reason } => f
                .debug_struct("InvalidSparse")
                .field("reason", reason)
                .finish(),
            Error::InvalidSafetensors { reason } => f
                .debug_struct("InvalidSafetensors")
                .field("reason", reason)
                .finish(),
            Error::MemberNotFound { name } => f
                .debug_struct("MemberNotFound")
                .field("name", name)
                .finish(),
            Error::ShapeMismatch { expected, found } => f
                .debug_struct("ShapeMismatch")
                .field("expected", expected)
                .field("found", found)
                .finish(),
        }
    }
}
