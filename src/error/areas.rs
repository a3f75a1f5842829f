//! The groups of [`Error`](super::Error)'s variants, one enum per area (what the caller does next),
//! with the details in fields. `Display` and [`ErrorKind`](super::ErrorKind) are `Error`'s.

/// A `.npy` header (or the preamble before it) that is not valid: the input is not NumPy data, or it is damaged. Read another file, or repair this one.
///
/// Reached as `Error::Header(..)`; [`Error::kind`](super::Error::kind) says what kind of failure each is.
#[derive(Debug)]
#[non_exhaustive]
pub enum HeaderError {
    /// The data does not start with `\x93NUMPY`.
    BadMagic {
        /// The first bytes that were found instead (at most six).
        found: Vec<u8>,
    },

    /// The format version is not 1.0, 2.0 or 3.0.
    UnsupportedVersion {
        /// Major version byte.
        major: u8,
        /// Minor version byte.
        minor: u8,
    },

    /// The data ends before the header does.
    TruncatedHeader {
        /// Bytes the preamble and header need.
        expected: u64,
        /// Bytes that were present.
        found: u64,
    },

    /// The header text is not valid in its version's encoding (UTF-8 for 3.0).
    HeaderEncoding {
        /// Major version of the file.
        major: u8,
        /// The encoding that was expected.
        encoding: &'static str,
    },

    /// The header text is not the Python dictionary literal it should be.
    MalformedHeader {
        /// Character offset into the header text.
        pos: usize,
        /// What the parser expected there.
        expected: String,
        /// What it found instead.
        found: String,
    },

    /// A required key (`descr`, `fortran_order` or `shape`) is absent.
    MissingKey(&'static str),

    /// The header has a key other than `descr`, `fortran_order`, `shape`, or
    /// has one of them twice.
    UnexpectedKey(String),

    /// `shape` is not a tuple of non-negative integers.
    BadShape(String),

    /// `fortran_order` is not `True` or `False`.
    BadFortranOrder(String),

    /// `descr` is not a type descriptor NumPy would accept.
    BadDescr {
        /// The offending descriptor text.
        descr: String,
        /// Why it was refused.
        reason: String,
    },
}

/// A limit of [`ReadOptions`](crate::ReadOptions) was reached, or a refusal it sets applied. Raise the limit if the input is trusted.
///
/// Reached as `Error::Limit(..)`; [`Error::kind`](super::Error::kind) says what kind of failure each is.
#[derive(Debug)]
#[non_exhaustive]
pub enum LimitError {
    /// The header length field exceeds the configured limit.
    HeaderTooLarge {
        /// Length claimed by the file.
        len: u64,
        /// The limit in force.
        max: usize,
    },

    /// The header declares more values that occupy no bytes of the data
    /// (elements, fields or sub-array items of item size 0, such as `|S0`)
    /// than [`crate::ReadOptions::max_zero_size_elements`] allows: each
    /// would cost memory or time although the file holds nothing for it.
    ZeroSizeLimit {
        /// The values the header declares.
        claimed: u64,
        /// The limit in force.
        max: u64,
    },

    /// The header literal nests deeper than the parser allows.
    NestingTooDeep {
        /// The depth limit.
        max: usize,
    },

    /// The element count or byte size of the shape does not fit in memory
    /// arithmetic.
    LengthOverflow {
        /// The shape (or the prefix of it that could be read).
        shape: Vec<u64>,
        /// Size of one element in bytes.
        itemsize: usize,
    },

    /// A stream of unknown length declares more data than
    /// [`crate::ReadOptions::max_stream_len`] allows.
    StreamLimit {
        /// Data bytes the header declares.
        claimed: u64,
        /// The limit.
        max: u64,
    },

    /// An object array's pickle would exceed a resource limit of the reader
    /// (nesting depth, or memory in proportion to its size; see
    /// [`crate::pickle`]).
    PickleLimit {
        /// Which limit.
        what: &'static str,
        /// The limit in force.
        limit: u64,
    },

    /// The file holds an object array and the reader was told to refuse them
    /// ([`crate::ReadOptions::allow_objects`]).
    ObjectsRefused,
}

/// The data after a valid header is damaged: cut short, changed while read, or holding values its type cannot (bool bytes other than 0 and 1, code units that are not Unicode).
///
/// Reached as `Error::Data(..)`; [`Error::kind`](super::Error::kind) says what kind of failure each is.
#[derive(Debug)]
#[non_exhaustive]
pub enum DataError {
    /// Fewer data bytes are present than the header declares.
    TruncatedData {
        /// Bytes the shape and dtype require.
        expected: u64,
        /// Bytes actually present.
        found: u64,
    },

    /// A file became shorter while it was being read (another process
    /// truncated it): its data now ends at byte `len`, before byte `needed`
    /// that its header promised. Reported by readers that come back to a
    /// file they opened earlier (the `ndnpy` command's positioned reads);
    /// nothing read before is returned.
    FileShrank {
        /// The end of the bytes being read, as an offset in the file.
        needed: u64,
        /// The file's length when the read came up short.
        len: u64,
    },

    /// A `bool` view was requested over bytes other than 0 and 1.
    InvalidBool {
        /// Index of the first offending element (in memory order).
        index: usize,
        /// Its byte value.
        value: u8,
    },

    /// `<U` data holds a code unit that is not a Unicode scalar value (a
    /// surrogate, or a value above 0x10FFFF).
    InvalidUnicode {
        /// Index of the offending string (in file order).
        index: usize,
        /// The code unit.
        value: u32,
    },
}

/// A zero-copy view is impossible; reading by copy (or `view_or_copy`) works.
///
/// Reached as `Error::View(..)`; [`Error::kind`](super::Error::kind) says what kind of failure each is.
#[derive(Debug)]
#[non_exhaustive]
pub enum ViewError {
    /// A view was requested over data that is not aligned for its element type.
    Misaligned {
        /// Name of the element type.
        type_name: &'static str,
        /// Alignment the type needs.
        align: usize,
        /// Address where the data starts.
        address: usize,
    },

    /// A view was requested over data that is not in the machine's byte order.
    NonNativeByteOrder {
        /// The descriptor in the file.
        dtype: String,
    },

    /// A mutable view was requested from a read-only mapping.
    ReadOnly,

    /// A zero-copy view was requested of a compressed member.
    CompressedMember {
        /// The member's name.
        name: String,
    },

    /// A view was requested of records (or sub-arrays) whose layout in the
    /// file is not the Rust type's own; reading by copy converts them.
    LayoutMismatch {
        /// Name of the element type.
        type_name: &'static str,
        /// The descriptor in the file.
        dtype: String,
        /// How the layouts differ and what to do instead.
        reason: String,
    },

    /// A view of an `.npz` member was requested, but the member's data is
    /// not aligned for the element type (`np.savez` does not align members).
    MisalignedMember {
        /// The member's name.
        name: String,
        /// Name of the element type.
        type_name: &'static str,
        /// Alignment the type needs.
        align: usize,
        /// Address where the data starts.
        address: usize,
    },
}

/// An `.npz` archive or one of its members is damaged, encrypted or compressed with a method this build does not read.
///
/// Reached as `Error::Archive(..)`; [`Error::kind`](super::Error::kind) says what kind of failure each is.
#[derive(Debug)]
#[non_exhaustive]
pub enum ArchiveError {
    /// The data is not a readable zip archive: no end-of-central-directory
    /// record, a central directory that is cut short or points outside the
    /// file, or a local header that does not match it.
    InvalidArchive {
        /// What the zip reader found wrong.
        reason: String,
    },

    /// A member was read as an array but is not a `.npy` file (it does not
    /// start with `\x93NUMPY`). NumPy hands such members back as raw bytes.
    NotNpy {
        /// The member's name as given by [`crate::NpzReader::names`].
        name: String,
        /// Its first bytes (at most six).
        found: Vec<u8>,
    },

    /// A member's data does not match the CRC-32 checksum the archive
    /// records for it.
    BadCrc {
        /// The member's name.
        name: String,
    },

    /// A member's compressed data cannot be decompressed, or decompresses to
    /// more bytes than the archive declares.
    CorruptMember {
        /// The member's name.
        name: String,
        /// What the decompressor reported.
        reason: String,
    },

    /// A member is encrypted; NumPy never writes encrypted archives and this
    /// crate does not decrypt them.
    Encrypted {
        /// The member's name.
        name: String,
    },

    /// A member uses a compression method other than stored or deflate (the
    /// only two NumPy writes).
    UnsupportedMember {
        /// The member's name.
        name: String,
        /// Which feature it needs.
        reason: String,
    },
}

/// An object array's pickle is damaged or uses what the safe reader does not accept (nothing was executed).
///
/// Reached as `Error::Pickle(..)`; [`Error::kind`](super::Error::kind) says what kind of failure each is.
#[derive(Debug)]
#[non_exhaustive]
pub enum PickleError {
    /// An object array's pickle uses a global, opcode or feature outside
    /// the closed set the pickle reader accepts (see [`crate::pickle`]).
    /// Nothing named here was imported, called or emulated.
    UnsupportedPickle {
        /// What was refused, e.g. `global 'os system'`.
        what: String,
    },

    /// A Python 2 pickle holds a `str` with bytes beyond ASCII, which
    /// [`crate::pickle::PickleEncoding::Ascii`] (the default, as `np.load`'s
    /// `encoding='ASCII'`) cannot decode: choose `Latin1` or `Bytes` with
    /// [`crate::ReadOptions::pickle_encoding`].
    Py2StrNotAscii {
        /// The first byte beyond ASCII.
        byte: u8,
    },

    /// An object array's pickle is damaged or inconsistent: cut short, a
    /// stack or memo reference that does not exist, an argument of the wrong
    /// type, a recursive structure, data that disagrees with its shape.
    MalformedPickle {
        /// Byte offset of the opcode at fault, from the start of the pickle.
        pos: usize,
        /// What is wrong.
        reason: String,
    },
}

/// A writer was used in a way it refuses: a name added twice or not valid, or a call after an earlier failure left the output incomplete.
///
/// Reached as `Error::Write(..)`; [`Error::kind`](super::Error::kind) says what kind of failure each is.
#[derive(Debug)]
#[non_exhaustive]
pub enum WriteError {
    /// [`crate::NpzWriter::add`] was given a name that is already in the
    /// archive.
    DuplicateMember {
        /// The repeated name.
        name: String,
    },

    /// [`crate::NpzWriter::add`] was given a name that NumPy could not give
    /// back from the archive (a NUL byte, too long for a zip entry, or `n.npy`
    /// beside `n`).
    InvalidName {
        /// The name.
        name: String,
        /// Why NumPy could not read it back.
        reason: String,
    },

    /// An earlier [`crate::NpzWriter::add`] failed, so the archive would be
    /// incomplete; the writer refuses further members and `finish`.
    IncompleteArchive {
        /// The name of the member whose `add` failed.
        name: String,
    },

    /// An earlier [`crate::NpyWriter::write`] failed part way (an I/O
    /// error), so the array written is incomplete; the writer refuses
    /// further blocks and `finish`.
    IncompleteWrite,
}

/// A request about rows that the file cannot serve as asked: a range out of bounds, a row count other than declared, no axis to grow, an append that does not fit, or a file another appender holds.
///
/// Reached as `Error::Rows(..)`; [`Error::kind`](super::Error::kind) says what kind of failure each is.
#[derive(Debug)]
#[non_exhaustive]
pub enum RowsError {
    /// A [`crate::NpyWriter::new_sized`] writer was given another number of
    /// rows than its shape declares: more in a block (refused, nothing of
    /// it written), or fewer at `finish`.
    RowCountMismatch {
        /// Rows along the growth axis that the shape declares.
        declared: usize,
        /// Rows written (with the refused block, when one was refused).
        written: usize,
    },

    /// A row range reaches past the growth axis of the array.
    RangeOutOfBounds {
        /// First row asked for.
        start: usize,
        /// One past the last row asked for.
        end: usize,
        /// Length of the growth axis.
        len: usize,
    },

    /// The array is 0-dimensional, so it has no growth axis to read in
    /// parts, append to or stream along.
    NoGrowthAxis,

    /// A block cannot be appended or streamed into the file: its dtype,
    /// dimensions or shape differ from the file's.
    AppendMismatch {
        /// What differs (`"dtype"`, `"number of dimensions"`, `"shape"`).
        what: &'static str,
        /// What the file needs.
        expected: String,
        /// What the block has.
        found: String,
    },

    /// The header has no room to record a longer growth axis in place (the
    /// file was written by a tool that does not pad headers as NumPy does).
    NoHeaderRoom {
        /// Header bytes a growable header needs.
        needed: usize,
        /// Header bytes the file has.
        available: usize,
    },

    /// Another handle (in this or another process) holds the append lock on
    /// the file: a second appender, or a path write (`write_npy`,
    /// `NpzWriter::create`, ...) over a file an appender holds, which
    /// would strand the appender's rows. Also given to an appender opened
    /// while a path write over its file is under way.
    Locked {
        /// The file.
        path: std::path::PathBuf,
    },
}
