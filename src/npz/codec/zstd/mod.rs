//! Zstandard (method 93): `zipfile.ZIP_ZSTANDARD` of Python 3.14 (and of
//! `backports.zstd` for older Pythons), and what ndnpy writes with
//! [`crate::Codec::Zstd`].
//!
//! Python's `zipfile` reads one frame per member (its decompressor stops at
//! the first frame's end), so ndnpy writes one frame too, made of segments
//! compressed independently on every core (`write.rs`, as zstd's own
//! multithreaded compressor does without overlap): no segment refers to
//! another's bytes, repeat offsets or entropy tables. Their compressed
//! lengths are recorded as deflate's pieces are (the zip extra field `nd`,
//! `inflate.rs`), so a reader can decode each segment on its own thread
//! (`frame.rs`); any other zstd decoder reads the frame as it is.
//!
//! Other members are streamed through one decoder, which stops at the end
//! of the first frame as Python's does, with a window of at most 2^27
//! bytes (zstd's default limit, which Python keeps too).

mod frame;
pub(crate) mod write;

use super::parallel::decode_pieces;
use super::whole::{decode_whole, Whole, WholeCodec};
use super::{corrupt, Decode, Mode, Raw};
use crate::npz::directory::Entry;
use crate::npz::inflate::Pieces;
use std::io::{self, BufRead, Read};
use std::mem::MaybeUninit;
use std::ops::Range;

/// The largest window a streamed frame may ask for: 2^27 bytes, zstd's
/// default (and Python's).
const WINDOW_LOG_MAX: u32 = 27;

/// Zstandard's largest expansion: a block of 128 KiB from 4 bytes (an RLE
/// block, its 3-byte header and the byte), 32 768 to 1. A member that
/// claims more than its compressed bytes can give is not believed (and not
/// allocated for: it is streamed, its memory growing with the bytes that
/// come).
const MAX_RATIO: u64 = 1 << 15;

/// The decoder of Zstandard member `entry`: its segments on every core
/// when ndnpy wrote it and it is to be read whole (up to `mode`'s bound,
/// and believable: [`decode_whole`] with [`MAX_RATIO`]), streamed
/// otherwise.
pub(crate) fn open<'a, R: BufRead + 'a>(
    entry: &Entry,
    raw: Raw<'a, R>,
    mode: Mode,
) -> Box<dyn Decode + 'a> {
    let pieces = entry
        .pieces
        .clone()
        .filter(|p| p.lengths.len() > 1 && p.fits(entry.size, entry.compressed_size));
    if let (Mode::Whole(limit), Some(pieces)) = (mode, pieces) {
        if decode_whole(entry.size, entry.compressed_size, limit, MAX_RATIO) {
            let codec = Zstd::default();
            let whole = Whole::new(raw, Some(pieces), entry.size, entry.compressed_size, codec);
            return Box::new(whole);
        }
    }
    Box::new(Stream::new(raw))
}

/// Zstandard's whole-member decoding: segments on every core.
#[derive(Default)]
struct Zstd {
    /// The frame's header, as the first segment gave it.
    header: frame::Header,
}

// SAFETY: `decode_pieces` returns `Ok` only after every piece decoded
// into its part of `out`, which covers all of it (it checks that `out` is
// exactly the pieces' bytes).
unsafe impl WholeCodec for Zstd {
    fn pieces(
        &self,
        input: &mut dyn Read,
        pieces: &Pieces,
        which: Range<usize>,
        out: &mut [MaybeUninit<u8>],
        threads: usize,
    ) -> io::Result<crc32fast::Hasher> {
        decode_pieces(&self.header, input, pieces, which, out, threads)
    }

    fn whole(&self, _compressed: &[u8], _size: usize) -> io::Result<(Vec<u8>, u32)> {
        // Only members with a segment table are decoded whole.
        Err(io::Error::other(
            "internal error: a Zstandard member without segments decoded whole",
        ))
    }
}

/// A Zstandard member streamed on this thread: its first frame.
struct Stream<'a, R: BufRead> {
    raw: Raw<'a, R>,
    state: Option<zstd_safe::DCtx<'static>>,
    ended: bool,
}

impl<'a, R: BufRead> Stream<'a, R> {
    fn new(raw: Raw<'a, R>) -> Self {
        Stream {
            raw,
            state: None,
            ended: false,
        }
    }
}

// SAFETY: `fill_whole` is the trait's own, which never succeeds.
unsafe impl<R: BufRead> Decode for Stream<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        if self.ended {
            return Ok((0, None));
        }
        let state = match &mut self.state {
            Some(state) => state,
            None => {
                let mut state = zstd_safe::DCtx::try_create()
                    .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
                state
                    .set_parameter(zstd_safe::DParameter::WindowLogMax(WINDOW_LOG_MAX))
                    .map_err(zstd_error)?;
                self.state.insert(state)
            }
        };
        loop {
            let (consumed, produced, hint, eof) = {
                let chunk = self.raw.fill_buf()?;
                let eof = chunk.is_empty();
                let mut input = zstd_safe::InBuffer::around(chunk);
                let mut output = zstd_safe::OutBuffer::around(&mut *out);
                let hint = state
                    .decompress_stream(&mut output, &mut input)
                    .map_err(zstd_error)?;
                (input.pos(), output.pos(), hint, eof)
            };
            self.raw.consume(consumed);
            if hint == 0 {
                // The frame is complete: the member ends here, as it does
                // for Python's decompressor.
                self.ended = true;
                return Ok((produced, None));
            }
            if produced > 0 {
                return Ok((produced, None));
            }
            if eof && consumed == 0 {
                return Err(corrupt("its Zstandard frame ends early"));
            }
        }
    }
}

/// A zstd error code as corrupt data.
fn zstd_error(code: usize) -> io::Error {
    corrupt(format!(
        "corrupt Zstandard data ({})",
        zstd_safe::get_error_name(code)
    ))
}
