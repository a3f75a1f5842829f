//! The one error type of the crate.

use std::io;

/// Everything that can go wrong while reading, writing or viewing `.npy` and
/// `.npz` data.
///
/// Each variant names one distinct failure, so callers can match on the cause
/// and the `Display` text tells a user what to fix.
///
/// ```
/// use ndnpy::{Error, ReadNpy};
/// use ndarray::Array1;
///
/// let err = Array1::<f64>::from_npy_bytes(b"not a numpy file").unwrap_err();
/// assert!(matches!(err, Error::BadMagic { .. }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error from the underlying reader, writer or file system.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),

    /// The data does not start with `\x93NUMPY`.
    #[error("not a .npy file: expected the magic string \\x93NUMPY, found {found:?}")]
    BadMagic {
        /// The first bytes that were found instead (at most six).
        found: Vec<u8>,
    },

    /// The format version is not 1.0, 2.0 or 3.0.
    #[error("unsupported .npy format version {major}.{minor} (supported: 1.0, 2.0, 3.0)")]
    UnsupportedVersion {
        /// Major version byte.
        major: u8,
        /// Minor version byte.
        minor: u8,
    },

    /// The header length field exceeds the configured limit.
    #[error("header of {len} bytes exceeds the limit of {max} bytes (raise it with ReadOptions::max_header_len if the file is trusted)")]
    HeaderTooLarge {
        /// Length claimed by the file.
        len: u64,
        /// The limit in force.
        max: usize,
    },

    /// The data ends before the header does.
    #[error("truncated header: expected {expected} bytes, found {found}")]
    TruncatedHeader {
        /// Bytes the preamble and header need.
        expected: u64,
        /// Bytes that were present.
        found: u64,
    },

    /// The header text is not valid in its version's encoding (UTF-8 for 3.0).
    #[error("header text of version {major}.0 is not valid {encoding}")]
    HeaderEncoding {
        /// Major version of the file.
        major: u8,
        /// The encoding that was expected.
        encoding: &'static str,
    },

    /// The header text is not the Python dictionary literal it should be.
    #[error("malformed header at character {pos}: expected {expected}, found {found}")]
    MalformedHeader {
        /// Character offset into the header text.
        pos: usize,
        /// What the parser expected there.
        expected: String,
        /// What it found instead.
        found: String,
    },

    /// The header literal nests deeper than the parser allows.
    #[error("header nests deeper than {max} levels")]
    NestingTooDeep {
        /// The depth limit.
        max: usize,
    },

    /// A required key (`descr`, `fortran_order` or `shape`) is absent.
    #[error("header is missing the key '{0}'")]
    MissingKey(&'static str),

    /// The header has a key other than `descr`, `fortran_order`, `shape`, or
    /// has one of them twice.
    #[error("header has an unexpected key {0}")]
    UnexpectedKey(String),

    /// `shape` is not a tuple of non-negative integers.
    #[error("invalid shape: {0}")]
    BadShape(String),

    /// `fortran_order` is not `True` or `False`.
    #[error("invalid fortran_order: expected True or False, found {0}")]
    BadFortranOrder(String),

    /// `descr` is not a type descriptor NumPy would accept.
    #[error("invalid descr {descr}: {reason}")]
    BadDescr {
        /// The offending descriptor text.
        descr: String,
        /// Why it was refused.
        reason: String,
    },

    /// The descriptor is valid but its data cannot be turned into Rust values.
    #[error("unsupported dtype `{dtype}`: {reason}")]
    UnsupportedDType {
        /// The descriptor, in NumPy's spelling.
        dtype: String,
        /// Why it is unsupported.
        reason: String,
    },

    /// The file holds another element type than the one asked for.
    #[error("dtype mismatch: expected {expected}, found `{found}`")]
    DTypeMismatch {
        /// The Rust type and descriptor that was asked for.
        expected: String,
        /// The descriptor in the file.
        found: String,
    },

    /// The file's shape has another number of dimensions than the array type.
    #[error("dimension mismatch: expected {expected} dimensions, found {found} (shape {shape:?})")]
    NdimMismatch {
        /// Dimensions of the requested array type.
        expected: usize,
        /// Dimensions in the file.
        found: usize,
        /// The shape in the file.
        shape: Vec<usize>,
    },

    /// The element count or byte size of the shape does not fit in memory
    /// arithmetic.
    #[error("array size overflows: shape {shape:?} with {itemsize}-byte elements")]
    LengthOverflow {
        /// The shape (or the prefix of it that could be read).
        shape: Vec<u64>,
        /// Size of one element in bytes.
        itemsize: usize,
    },

    /// Fewer data bytes are present than the header declares.
    #[error("truncated data: the header declares {expected} bytes of data, found {found}")]
    TruncatedData {
        /// Bytes the shape and dtype require.
        expected: u64,
        /// Bytes actually present.
        found: u64,
    },

    /// A view was requested over data that is not aligned for its element type.
    #[error("misaligned data: a view of {type_name} needs {align}-byte alignment, but the data starts at address {address:#x}")]
    Misaligned {
        /// Name of the element type.
        type_name: &'static str,
        /// Alignment the type needs.
        align: usize,
        /// Address where the data starts.
        address: usize,
    },

    /// A view was requested over data that is not in the machine's byte order.
    #[error("cannot view `{dtype}` data without copying: it is not in native byte order (read it into an owned array instead)")]
    NonNativeByteOrder {
        /// The descriptor in the file.
        dtype: String,
    },

    /// A `bool` view was requested over bytes other than 0 and 1.
    #[error("invalid bool data: byte {value} at element {index} is neither 0 nor 1")]
    InvalidBool {
        /// Index of the first offending element (in memory order).
        index: usize,
        /// Its byte value.
        value: u8,
    },

    /// A mutable view was requested from a read-only mapping.
    #[error("the file is mapped read-only; open it with MmapNpy::open_rw or open_cow for a mutable view")]
    ReadOnly,

    /// The data is not a readable zip archive: no end-of-central-directory
    /// record, a central directory that is cut short or points outside the
    /// file, or a local header that does not match it.
    #[error("not a valid .npz (zip) archive: {reason} (the file may be truncated, or not an .npz file at all)")]
    InvalidArchive {
        /// What the zip reader found wrong.
        reason: String,
    },

    /// The archive has no member with this name (neither `name` nor
    /// `name.npy`).
    #[error("the archive has no array named '{name}' (NpzReader::names lists the ones it has)")]
    MemberNotFound {
        /// The name that was asked for.
        name: String,
    },

    /// A member was read as an array but is not a `.npy` file (it does not
    /// start with `\x93NUMPY`). NumPy hands such members back as raw bytes.
    #[error("archive member '{name}' is not a .npy file (it starts with b\"{}\"); read its bytes with NpzReader::raw", .found.escape_ascii())]
    NotNpy {
        /// The member's name as given by [`crate::NpzReader::names`].
        name: String,
        /// Its first bytes (at most six).
        found: Vec<u8>,
    },

    /// A member's data does not match the CRC-32 checksum the archive
    /// records for it.
    #[error("archive member '{name}' is corrupt: its data does not match its CRC-32 checksum")]
    BadCrc {
        /// The member's name.
        name: String,
    },

    /// A member's compressed data cannot be decompressed, or decompresses to
    /// more bytes than the archive declares.
    #[error("archive member '{name}' is corrupt: {reason}")]
    CorruptMember {
        /// The member's name.
        name: String,
        /// What the decompressor reported.
        reason: String,
    },

    /// A member is encrypted; NumPy never writes encrypted archives and this
    /// crate does not decrypt them.
    #[error("archive member '{name}' is encrypted; decrypt the archive with a zip tool first")]
    Encrypted {
        /// The member's name.
        name: String,
    },

    /// A member uses a compression method other than stored or deflate (the
    /// only two NumPy writes).
    #[error("archive member '{name}' cannot be read: {reason} (NumPy archives use only stored or deflate members; recompress it with np.savez)")]
    UnsupportedMember {
        /// The member's name.
        name: String,
        /// Which feature it needs.
        reason: String,
    },

    /// A zero-copy view was requested of a compressed member.
    #[error("archive member '{name}' is compressed, so it cannot be viewed without copying; read it with NpzReader::read, or write the archive uncompressed (NpzWriter::create)")]
    CompressedMember {
        /// The member's name.
        name: String,
    },

    /// [`crate::NpzWriter::add`] was given a name that is already in the
    /// archive.
    #[error("the archive already has an array named '{name}'; each name may be added once")]
    DuplicateMember {
        /// The repeated name.
        name: String,
    },

    /// An earlier [`crate::NpzWriter::add`] failed, so the archive would be
    /// incomplete; the writer refuses further members and `finish`.
    #[error("adding '{name}' to the archive failed earlier, so the archive is incomplete and was not finished (a path target was left untouched)")]
    IncompleteArchive {
        /// The name of the member whose `add` failed.
        name: String,
    },
}

/// Shorthand for results whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
