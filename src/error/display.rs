//! The messages: `Display` for [`Error`], one line per variant, apart from
//! the enum so that adding a variant's words does not grow its definition.

use super::text::{capped, looks_like};
use super::Error;
use std::fmt;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(v0) => write!(f, "I/O error: {v0}"),
            Error::IoPath { path, error } => write!(f, "{}: {error}", path.display()),
            Error::BadMagic { found } => write!(f, "not a .npy file: {}", looks_like(found)),
            Error::UnsupportedVersion { major, minor } => write!(f, "unsupported .npy format version {major}.{minor} (supported: 1.0, 2.0, 3.0)"),
            Error::HeaderTooLarge { len, max } => write!(f, "header of {len} bytes exceeds the limit of {max} bytes (raise it with ReadOptions::max_header_len if the file is trusted)"),
            Error::TruncatedHeader { expected, found } => write!(f, "truncated header: expected {expected} bytes, found {found}"),
            Error::HeaderEncoding { major, encoding } => write!(f, "header text of version {major}.0 is not valid {encoding}"),
            Error::MalformedHeader { pos, expected, found } => write!(f, "malformed header at character {pos}: expected {expected}, found {found}", expected = capped(expected), found = capped(found)),
            Error::ZeroSizeLimit { claimed, max } => write!(f, "{claimed} values of zero size are declared (by a header, or by an archive's headers together), more than the limit of {max} (each costs memory although the file holds no data for it; raise ReadOptions::max_zero_size_elements if the file is trusted)"),
            Error::NestingTooDeep { max } => write!(f, "header nests deeper than {max} levels"),
            Error::MissingKey(v0) => write!(f, "header is missing the key '{v0}'"),
            Error::UnexpectedKey(v0) => write!(f, "header has an unexpected key {v0}", v0 = capped(v0)),
            Error::BadShape(v0) => write!(f, "invalid shape: {v0}", v0 = capped(v0)),
            Error::BadFortranOrder(v0) => write!(f, "invalid fortran_order: expected True or False, found {v0}", v0 = capped(v0)),
            Error::BadDescr { descr, reason } => write!(f, "invalid descr {descr}: {reason}", descr = capped(descr), reason = capped(reason)),
            Error::UnsupportedDType { dtype, reason } => write!(f, "unsupported dtype `{dtype}`: {reason}", dtype = capped(dtype), reason = capped(reason)),
            Error::DTypeMismatch { expected, found } => write!(f, "dtype mismatch: expected {expected}, found `{found}`", expected = capped(expected), found = capped(found)),
            Error::NdimMismatch { expected, found, shape } => write!(f, "dimension mismatch: expected {expected} dimensions, found {found} (shape {shape:?})"),
            Error::LengthOverflow { shape, itemsize } => write!(f, "array too big: shape {:?} with {itemsize}-byte elements exceeds isize::MAX bytes (NumPy's limit, which ignores zero dimensions; ReadOptions::allow_beyond_numpy_limits reads such headers)", &shape[..shape.len().min(70)]),
            Error::FileShrank { needed, len } => write!(f, "the file changed while it was read: it now ends at byte {len}, before byte {needed} of the data its header declares (another process truncated or rewrote it)"),
            Error::TruncatedData { expected, found } => write!(f, "truncated data: the header declares {expected} bytes of data, found {found}"),
            Error::Misaligned { type_name, align, address } => write!(f, "misaligned data: a view of {type_name} needs {align}-byte alignment, but the data starts at address {address:#x}"),
            Error::NonNativeByteOrder { dtype } => write!(f, "cannot view `{dtype}` data without copying: it is not in native byte order (read it into an owned array instead)", dtype = capped(dtype)),
            Error::InvalidBool { index, value } => write!(f, "invalid bool data: byte {value} at element {index} is neither 0 nor 1"),
            Error::ShapeMismatch { expected, found } => write!(f, "shape mismatch: the array to read into has shape {:?}, the file's is {:?}", &expected[..expected.len().min(70)], &found[..found.len().min(70)]),
            Error::LayoutMismatch { type_name, dtype, reason } => write!(f, "cannot view `{dtype}` as {type_name} without copying: {reason}", dtype = capped(dtype), reason = capped(reason)),
            Error::InvalidUnicode { index, value } => write!(f, "invalid unicode data: code unit {value:#x} in string {index} is not a Unicode scalar value"),
            Error::MisalignedMember { name, type_name, align, address } => write!(f, "member `{name}` cannot be viewed as {type_name}: its data starts at address {address:#x}, not {align}-byte aligned (np.savez does not align members); use NpzMmap::view_or_copy, which copies when a view is impossible"),
            Error::ReadOnly => write!(f, "the file is mapped read-only; open it with NpyMmap::open_rw or open_cow for a mutable view"),
            Error::InvalidArchive { reason } => write!(f, "not a valid .npz (zip) archive: {reason} (the file may be truncated, or not an .npz file at all)", reason = capped(reason)),
            Error::InvalidSparse { reason } => write!(f, "not a valid scipy.sparse archive: {}", capped(reason)),
            Error::InvalidSafetensors { reason } => write!(f, "not a valid safetensors file: {}", capped(reason)),
            Error::NotNpy { name, found } => write!(
                f,
                "archive member '{}' is not a .npy file (it starts with b\"{}\"); read its bytes with NpzReader::raw",
                capped(name),
                found.escape_ascii()
            ),
            Error::MemberNotFound { name } => write!(f, "the archive has no array named '{name}' (NpzReader::names lists the ones it has)", name = capped(name)),
            Error::BadCrc { name } => write!(f, "archive member '{name}' is corrupt: its data does not match its CRC-32 checksum", name = capped(name)),
            Error::CorruptMember { name, reason } => write!(f, "archive member '{name}' is corrupt: {reason}", name = capped(name), reason = capped(reason)),
            Error::Encrypted { name } => write!(f, "archive member '{name}' is encrypted; decrypt the archive with a zip tool first", name = capped(name)),
            Error::UnsupportedMember { name, reason } => write!(f, "archive member '{name}' cannot be read: {reason} (NumPy archives use only stored or deflate members; recompress it with np.savez)", name = capped(name), reason = capped(reason)),
            Error::CompressedMember { name } => write!(f, "archive member '{name}' is compressed, so it cannot be viewed without copying; read it with NpzReader::read, or write the archive uncompressed (NpzWriter::create)", name = capped(name)),
            Error::DuplicateMember { name } => write!(f, "the archive already has an array named '{name}'; each name may be added once", name = capped(name)),
            Error::StreamLimit { claimed, max } => write!(f, "the header declares {claimed} bytes of data to read from a stream, more than the limit of {max} (raise ReadOptions::max_stream_len if the stream is trusted)"),
            Error::InvalidName { name, reason } => write!(f, "cannot add an array named '{name}': {reason}", name = capped(&name.escape_debug().to_string()), reason = capped(reason)),
            Error::IncompleteArchive { name } => write!(f, "adding '{name}' to the archive failed earlier, so the archive is incomplete and was not finished (a path target was left untouched)", name = capped(name)),
            Error::IncompleteWrite => write!(f, "an earlier write to this NpyWriter failed part way, so the array is incomplete and was not finished (a path target was left untouched)"),
            Error::RowCountMismatch { declared, written } => write!(f, "the shape declares {declared} rows along the growth axis, but {written} were written"),
            Error::RangeOutOfBounds { start, end, len } => write!(f, "row range {start}..{end} is out of bounds for a growth axis of length {len}"),
            Error::NoGrowthAxis => write!(f, "a 0-dimensional array has no axis to read in parts, append to or stream along"),
            Error::AppendMismatch { what, expected, found } => write!(f, "cannot append: the {what} differs (the file has {expected}, the block has {found})"),
            Error::NoHeaderRoom { needed, available } => write!(f, "the header has no room to grow in place ({needed} bytes needed, {available} present); rewrite it once with NpyFile::make_appendable"),
            Error::Locked { path } => write!(f, "{} is locked by an appender (an open NpyFile::open_append, NpyWriter::append or make_appendable), or a path write under way holds it; it was left as it was: try again when it is closed", path.display()),
            Error::UnsupportedPickle { what } => write!(f, "object array pickle uses {what}, which the safe pickle reader does not accept (nothing was executed)"),
            Error::Py2StrNotAscii { byte } => write!(f, "object array pickle holds a Python 2 str with the byte 0x{byte:02x}, which is not ASCII (np.load's default encoding refuses it too): read it with ReadOptions::pickle_encoding(PickleEncoding::Latin1) or Bytes (np.load's encoding='latin1' or 'bytes'; the ndnpy command: --pickle-encoding)"),
            Error::MalformedPickle { pos, reason } => write!(f, "malformed object array pickle at byte {pos}: {reason}"),
            Error::PickleLimit { what, limit } => write!(f, "object array pickle exceeds the reader's limit on {what} ({limit})"),
            Error::ObjectsRefused => write!(f, "the file holds an object (pickled) array, and object arrays were refused by ReadOptions::allow_objects(false)"),
        }
    }
}
