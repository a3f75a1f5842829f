//! The interface every codec gives the member reader: [`Decode`], the one
//! decode plan of a member ([`Plan`]: what the reader wants of it), the
//! compressed bytes a codec reads ([`Raw`]), and the error of data that is
//! not valid for its method.

use std::io;
use std::mem::MaybeUninit;

/// A member's decompressed bytes, as one codec gives them.
///
/// # Safety
///
/// [`Decode::fill_whole`] returning `Ok` must have initialised every byte
/// of its destination (the member reader hands the bytes on as written).
pub(crate) unsafe trait Decode {
    /// Reads the next decompressed bytes into `buf` (not empty, no longer
    /// than the bytes left of the declared size): 0 only when the data ends
    /// (or is cut short: the member reader reports the sizes). A codec that
    /// computes the member's CRC-32 itself ([`Decode::checks_crc`]) gives it
    /// with the read that completes its knowledge of the member.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)>;

    /// Whether the codec computes the member's CRC-32 itself (decoding
    /// pieces on several threads); otherwise the member reader hashes
    /// every byte `read` gives.
    fn checks_crc(&self) -> bool {
        false
    }

    /// Whether the member is decompressed whole: then its bytes are all in
    /// memory at its declared size (or reading them fails), so that size
    /// can size one allocation.
    fn whole(&self) -> bool {
        false
    }

    /// Whether [`Decode::fill_whole`] takes the rest of the member, `len`
    /// bytes, at once.
    fn fills_whole(&self, _len: u64) -> bool {
        false
    }

    /// Fills `dst`, exactly the rest of the member, at once (when
    /// [`Decode::fills_whole`] said so), every byte initialised on
    /// success; gives the member's CRC-32.
    fn fill_whole(&mut self, _dst: &mut [MaybeUninit<u8>]) -> io::Result<u32> {
        Err(io::Error::other(
            "internal error: this codec does not fill whole",
        ))
    }

    /// Whether the rest of the member, `len` bytes, is best decoded at
    /// once into zeroed memory with room after it
    /// ([`Decode::fill_whole_in`]), and how many bytes of room.
    fn whole_room(&self, _len: u64) -> Option<usize> {
        None
    }

    /// Fills the first `len` bytes of `dst` (at least `len` plus the room
    /// [`Decode::whole_room`] asked for) with the rest of the member, at
    /// once; the room holds unspecified bytes afterwards. Gives the
    /// member's CRC-32.
    fn fill_whole_in(&mut self, _dst: &mut [u8], _len: usize) -> io::Result<u32> {
        Err(io::Error::other(
            "internal error: this codec does not fill whole",
        ))
    }
}

/// A member's decode plan: how its bytes will be read, which decides how
/// its codec decodes them. The one plan of every path (the archive reader,
/// the member reader, row ranges).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Plan {
    /// Its first bytes only (the `.npy` header): streamed on the calling
    /// thread, nothing decompressed ahead, so that a peek costs about the
    /// bytes it looks at.
    Head,
    /// On to its end: a member of up to this many bytes may be
    /// decompressed whole (on every core when ndnpy wrote it; a larger
    /// deflated one ndnpy wrote a few pieces ahead, `deflate/ahead.rs`); others
    /// stream.
    Whole(u64),
    /// The bytes of some rows: the codec answers from the part of the
    /// member that holds them when it can (`codec/range.rs`); otherwise
    /// the member is streamed from its start, nothing decompressed ahead.
    Range(Rows),
}

/// Bytes `start..end` of a member's `.npy` bytes (within its declared
/// size): what a row range asks for. `all` when they are all its rows:
/// then all of the member is read and checked against its CRC-32, as a
/// whole read checks it, on every path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rows {
    /// The first byte asked.
    pub(crate) start: u64,
    /// One past the last byte asked.
    pub(crate) end: u64,
    /// Whether the rows are all of the member's.
    pub(crate) all: bool,
}

/// How a member's codec answers a range.
pub(crate) enum Answer {
    /// The bytes asked (all of the member's for [`Rows::all`]), decoded
    /// from the part of the member that holds them; a whole member is not
    /// checked yet (its CRC-32 is the caller's to check).
    Bytes(Vec<u8>),
    /// A deflated member without a piece table: from the nearest checkpoint
    /// of its seek index, which the archive reader keeps for its life.
    SeekIndex,
    /// From the member's start, by the member reader (which checks the
    /// CRC-32 of a member read to its end).
    FromStart,
}

/// The compressed bytes of a member, positioned at its data and bounded by
/// its compressed size.
pub(crate) type Raw<'a, R> = io::Take<&'a mut R>;

/// The error of a stream that is not valid data of its method.
#[cfg_attr(
    not(any(feature = "bzip2", feature = "lzma", feature = "zstd")),
    allow(dead_code)
)]
pub(crate) fn corrupt(what: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}
