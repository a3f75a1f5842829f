//! Codecs: how a member's compressed bytes become its `.npy` bytes, one
//! file per zip compression method, behind one interface ([`Decode`]) that
//! the member reader (`member.rs`) drives without knowing the method.
//!
//! - stored (0) and deflate (8, `deflate/`): streamed through zlib-rs,
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
//! Part of layer 6 (`npz/`); uses the container (`npz/zip/`: entries, the
//! method numbers, the piece table, positioned input) and nothing else of
//! `npz/`: the deflate part, its own decoder included, is `deflate/`. The
//! interface is in `decode.rs`, apart from the dispatch here, so that the
//! codecs do not import this file back.

mod choice;
mod decode;
pub(crate) mod deflate;
pub(crate) mod parallel;
pub(crate) mod range;
mod whole;

#[cfg(feature = "bzip2")]
mod bzip2;
#[cfg(feature = "lzma")]
mod lzma;
#[cfg(feature = "zstd")]
pub(crate) mod zstd;

pub use choice::Codec;

pub(crate) use decode::{Decode, Plan, Rows};

use super::zip::directory::{Entry, DEFLATED};
use super::zip::input::FileAt;
use decode::Raw;
use std::io::{self, BufRead};

/// The decoder of `entry`'s method over `raw`; `inflater` is the archive
/// reader's reusable deflate state; `at`, where `raw` starts in the archive
/// file when it can be read by position (a large deflated member decoded
/// whole reads its compressed bytes so, on every core). The method was
/// checked with [`super::zip::method::check_method`].
pub(crate) fn open<'a, R: BufRead + 'a>(
    entry: &Entry,
    raw: Raw<'a, R>,
    inflater: &'a mut flate2::Decompress,
    plan: Plan,
    at: Option<FileAt>,
) -> Box<dyn Decode + 'a> {
    match entry.method {
        DEFLATED => deflate::open(entry, raw, inflater, plan, at),
        #[cfg(feature = "bzip2")]
        super::zip::method::BZIP2 => Box::new(bzip2::Bzip2::new(raw)),
        #[cfg(feature = "lzma")]
        super::zip::method::LZMA => {
            Box::new(lzma::Lzma::new(raw, entry.size, entry.compressed_size))
        }
        #[cfg(feature = "zstd")]
        super::zip::method::ZSTD => zstd::open(entry, raw, plan),
        _ => Box::new(Stored(raw)),
    }
}

/// A stored member: its bytes as they lie in the archive.
struct Stored<'a, R: BufRead>(Raw<'a, R>);

// SAFETY: `fill_whole` is the trait's own, which never succeeds.
unsafe impl<R: BufRead> Decode for Stored<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        Ok((io::Read::read(&mut self.0, buf)?, None))
    }
}
