//! Codecs: how a member's compressed bytes become its `.npy` bytes, one
//! file per zip compression method, behind one interface ([`Decode`]) that
//! the member reader (`member.rs`) drives without knowing the method.
//!
//! - stored (0) and deflate (8, `deflate.rs`): streamed through zlib-rs,
//!   inflated whole by libdeflate, on every core with ndnpy's piece table;
//! - bzip2 (12, `bzip2.rs`, feature `bzip2`), LZMA (14, `lzma.rs`, feature
//!   `lzma`): streamed, as Python's `zipfile` reads them;
//! - Zstandard (93, `zstd/`, feature `zstd`): streamed, or, for members
//!   ndnpy wrote (one frame of independently compressed segments and their
//!   table), decoded on every core; `zstd/write.rs` compresses them.
//!
//! Every codec keeps memory in proportion to the bytes that really
//! decompress: a member's declared size sizes one allocation only when the
//! codec could expand the compressed bytes that far (`whole.rs`). A
//! dictionary or window a stream claims is capped at the standard limit
//! (Zstandard: 2^27 bytes, as zstd and Python's `zipfile` accept), not by
//! the member's size: a compressor that is not told the size (`zipfile`
//! streams each member) declares its level's window whatever the data (8
//! MiB for a 132-byte member at level 19, `tests/zstd_window.rs`), and
//! such frames must read. The window costs memory as it is written, and
//! what is written stops at the member's declared size. The CRC-32 and the
//! declared size are checked by the member reader for every codec alike.
//!
//! Part of layer 6 (`npz/`); uses the piece table of `inflate.rs` and the
//! read-ahead of `ahead.rs`, nothing above.

mod choice;
pub(crate) mod deflate;
pub(crate) mod parallel;
mod whole;

#[cfg(feature = "bzip2")]
mod bzip2;
#[cfg(feature = "lzma")]
mod lzma;
#[cfg(feature = "zstd")]
pub(crate) mod zstd;

pub use choice::Codec;

use super::directory::{Entry, DEFLATED, STORED};
use std::io::{self, BufRead};
use std::mem::MaybeUninit;

/// Zip's method numbers for the codecs beyond stored and deflate.
pub(crate) const BZIP2: u16 = 12;
pub(crate) const LZMA: u16 = 14;
pub(crate) const ZSTD: u16 = 93;

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

/// How the member reader wants a member's bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mode {
    /// Its first bytes only (the `.npy` header): streamed on the calling
    /// thread, nothing decompressed ahead.
    Head,
    /// On to its end: a member of up to this many bytes may be
    /// decompressed whole (on every core when ndnpy wrote it).
    Whole(u64),
}

/// The compressed bytes of a member, positioned at its data and bounded by
/// its compressed size.
pub(crate) type Raw<'a, R> = io::Take<&'a mut R>;

/// The decoder of `entry`'s method over `raw`; `inflater` is the archive
/// reader's reusable deflate state. The method was checked with
/// [`check_method`].
pub(crate) fn open<'a, R: BufRead + 'a>(
    entry: &Entry,
    raw: Raw<'a, R>,
    inflater: &'a mut flate2::Decompress,
    mode: Mode,
) -> Box<dyn Decode + 'a> {
    match entry.method {
        DEFLATED => deflate::open(entry, raw, inflater, mode),
        #[cfg(feature = "bzip2")]
        BZIP2 => Box::new(bzip2::Bzip2::new(raw)),
        #[cfg(feature = "lzma")]
        LZMA => Box::new(lzma::Lzma::new(raw, entry.size, entry.compressed_size)),
        #[cfg(feature = "zstd")]
        ZSTD => zstd::open(entry, raw, mode),
        _ => Box::new(Stored(raw)),
    }
}

/// Refuses methods this build cannot decode, naming the cargo feature
/// that would, or `None` when it can.
pub(crate) fn check_method(method: u16) -> Option<String> {
    let (name, feature, enabled) = match method {
        STORED | DEFLATED => return None,
        BZIP2 => ("bzip2", "bzip2", cfg!(feature = "bzip2")),
        LZMA => ("LZMA", "lzma", cfg!(feature = "lzma")),
        ZSTD => ("Zstandard", "zstd", cfg!(feature = "zstd")),
        99 => {
            return Some(format!(
                "compression method {method} (AES encryption) is not supported"
            ))
        }
        _ => return Some(format!("compression method {method} is not supported")),
    };
    (!enabled).then(|| {
        format!("compression method {method} ({name}) needs ndnpy's `{feature}` cargo feature")
    })
}

/// A stored member: its bytes as they lie in the archive.
struct Stored<'a, R: BufRead>(Raw<'a, R>);

// SAFETY: `fill_whole` is the trait's own, which never succeeds.
unsafe impl<R: BufRead> Decode for Stored<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        Ok((io::Read::read(&mut self.0, buf)?, None))
    }
}

/// The error of a stream that is not valid data of its method.
#[cfg_attr(
    not(any(feature = "bzip2", feature = "lzma", feature = "zstd")),
    allow(dead_code)
)]
pub(crate) fn corrupt(what: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}
