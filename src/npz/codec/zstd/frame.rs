//! One segment of an ndnpy frame decoded on its own.
//!
//! The member is one frame: a header (magic, descriptor, window; no
//! content size, checksum or dictionary), then every segment's blocks, the
//! last block of the last segment marked last. The segment table (the
//! `nd` extra field) only claims where segments end; ndnpy's writer makes
//! segments whose blocks refer to nothing before them, and then a segment
//! decodes alone as a frame of its own: the member's header (written again
//! before every segment but the first) and its blocks, the last of them
//! marked last in the copy. Whether a segment really refers to nothing
//! before it is checked, not assumed: a match before its start or a reused
//! entropy table makes zstd fail, and its use of repeat offsets it did not
//! set is found by `independent.rs` before it is decoded. Anything else
//! (another header, blocks that cross a segment's end, a last block inside
//! the frame, a segment that may depend on the one before) is an error
//! here, and the member is then decoded in one stream by the standard
//! decoder (`mod.rs`): never a decoding of ndnpy's own.

use super::super::decode::corrupt;
use super::super::parallel::{read_exactly, PieceDecoder};
use super::independent::independent;
use crate::npz::zip::pieces::Pieces;
use std::cell::RefCell;
use std::io::{self, Read};
use std::mem::MaybeUninit;
use std::sync::OnceLock;
use zstd_safe::zstd_sys as sys;

/// Why a segment is not decoded alone: the member is then decoded in one
/// stream.
pub(super) const NOT_INDEPENDENT: &str =
    "a Zstandard segment may depend on the one before it (repeat offsets)";

/// Whether `e` is a segment's refusal to decode alone ([`NOT_INDEPENDENT`]):
/// the member is then decoded in one stream, not reported corrupt.
pub(super) fn not_independent(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::InvalidData
        && e.get_ref()
            .is_some_and(|r| r.to_string() == NOT_INDEPENDENT)
}

/// Zstandard's frame magic number.
pub(super) const MAGIC: [u8; 4] = 0xFD2F_B528u32.to_le_bytes();

/// A frame header ndnpy writes: magic, a descriptor with nothing in it
/// but the window descriptor's presence, the window descriptor.
pub(super) const HEADER_LEN: usize = 6;

/// The block header's length; the largest block.
const BLOCK_HEADER: usize = 3;
const MAX_BLOCK: usize = 128 << 10;

/// The member's frame header, learnt from the first segment: what every
/// other segment is decoded behind.
#[derive(Default)]
pub(super) struct Header(OnceLock<[u8; HEADER_LEN]>);

impl Header {
    /// Checks the header that starts `first` (the first segment, or its
    /// first [`HEADER_LEN`] bytes) and keeps it.
    pub(super) fn learn(&self, first: &[u8]) -> io::Result<[u8; HEADER_LEN]> {
        let header: [u8; HEADER_LEN] = first
            .get(..HEADER_LEN)
            .and_then(|h| h.try_into().ok())
            .ok_or_else(|| corrupt("its first Zstandard segment is cut short"))?;
        // Descriptor 0: no content size, not a single segment (so a window
        // descriptor follows), no checksum, no dictionary.
        if header[..4] != MAGIC || header[4] != 0 {
            return Err(corrupt(
                "its Zstandard frame does not match its segment table",
            ));
        }
        Ok(*self.0.get_or_init(|| header))
    }
}

// SAFETY: `decode_piece` returns `Ok` only when zstd reports that it wrote
// exactly `out.len()` bytes at the start of `out`.
unsafe impl PieceDecoder for Header {
    fn read_piece(
        &self,
        input: &mut dyn Read,
        pieces: &Pieces,
        piece: usize,
        buf: &mut Vec<u8>,
    ) -> io::Result<()> {
        let len = pieces.lengths[piece] as usize;
        buf.clear();
        let start = if piece == 0 {
            read_exactly(input, len, buf)?;
            self.learn(buf)?;
            HEADER_LEN
        } else {
            let header = self
                .0
                .get()
                .ok_or_else(|| io::Error::other("internal error: segment read before the first"))?;
            buf.extend_from_slice(header);
            read_exactly(input, len, buf)?;
            HEADER_LEN
        };
        end_segment(buf, start, piece + 1 == pieces.lengths.len())?;
        // The first segment starts the frame: it is decoded as any decoder
        // decodes it. Any other only if nothing it inherits can change it.
        if piece > 0 && !independent(&buf[start..]) {
            return Err(corrupt(NOT_INDEPENDENT));
        }
        Ok(())
    }

    fn decode_piece(&self, piece: &[u8], out: &mut [MaybeUninit<u8>]) -> io::Result<()> {
        thread_local! {
            // One decoder per thread, reused for its segments.
            static DCTX: RefCell<Option<Dctx>> = const { RefCell::new(None) };
        }
        DCTX.with(|cell| {
            let mut cell = cell.borrow_mut();
            let dctx = match &mut *cell {
                Some(dctx) => dctx,
                None => cell.insert(Dctx::new()?),
            };
            // Decoding straight into the segment's bytes, which nobody
            // zeroed: more is an error (zstd stops at the buffer's end),
            // fewer is checked here.
            // SAFETY: `dctx.0` is a live context of this thread; `out` is
            // writable for `out.len()` bytes, and zstd writes nothing past
            // the capacity it is given; `piece` is readable for its length.
            let n = unsafe {
                sys::ZSTD_decompressDCtx(
                    dctx.0,
                    out.as_mut_ptr().cast(),
                    out.len(),
                    piece.as_ptr().cast(),
                    piece.len(),
                )
            };
            // SAFETY: plain value in and out.
            if unsafe { sys::ZSTD_isError(n) } != 0 {
                return Err(zstd_error(n));
            }
            if n != out.len() {
                return Err(corrupt(format!(
                    "a Zstandard segment gave {n} bytes where {} were declared",
                    out.len()
                )));
            }
            Ok(())
        })
    }
}

/// A zstd decompression context, freed when dropped.
struct Dctx(*mut sys::ZSTD_DCtx);

impl Dctx {
    fn new() -> io::Result<Dctx> {
        // SAFETY: no arguments; a null result is checked.
        let dctx = unsafe { sys::ZSTD_createDCtx() };
        if dctx.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        Ok(Dctx(dctx))
    }
}

impl Drop for Dctx {
    fn drop(&mut self) {
        // SAFETY: created by `ZSTD_createDCtx`, freed once.
        unsafe { sys::ZSTD_freeDCtx(self.0) };
    }
}

/// Walks the blocks of a segment from `start` (after the frame header) to
/// the end of `buf`, and marks the segment's last block last (the member's
/// last segment has it marked already; no other block may be).
fn end_segment(buf: &mut [u8], start: usize, last_segment: bool) -> io::Result<()> {
    let mut at = start;
    let mut last_header = None;
    while at < buf.len() {
        let header = buf
            .get(at..at + BLOCK_HEADER)
            .ok_or_else(|| corrupt("a Zstandard block header crosses a segment's end"))?;
        let word = u32::from_le_bytes([header[0], header[1], header[2], 0]);
        let (last, kind, size) = (word & 1 == 1, (word >> 1) & 3, (word >> 3) as usize);
        let content = match kind {
            0 | 2 if size <= MAX_BLOCK => size,
            1 if size <= MAX_BLOCK => 1,
            _ => return Err(corrupt("a Zstandard block is malformed")),
        };
        last_header = Some(at);
        at += BLOCK_HEADER + content;
        if last && (!last_segment || at != buf.len()) {
            return Err(corrupt(
                "its Zstandard frame does not match its segment table",
            ));
        }
    }
    let Some(header) = last_header.filter(|_| at == buf.len()) else {
        return Err(corrupt("a Zstandard segment ends inside a block"));
    };
    if last_segment && buf[header] & 1 == 0 {
        return Err(corrupt("the Zstandard frame has no last block"));
    }
    buf[header] |= 1;
    Ok(())
}

/// A zstd error code as corrupt data.
pub(super) fn zstd_error(code: usize) -> io::Error {
    corrupt(format!(
        "corrupt Zstandard data ({})",
        zstd_safe::get_error_name(code)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_end_on_block_boundaries() {
        // Header, then a raw block of 2 bytes and an RLE block of 5.
        let raw = (2u32 << 3).to_le_bytes();
        let rle = ((5u32 << 3) | (1 << 1)).to_le_bytes();
        let mut seg = vec![0u8; HEADER_LEN];
        seg.extend_from_slice(&raw[..3]);
        seg.extend_from_slice(b"ab");
        seg.extend_from_slice(&rle[..3]);
        seg.push(b'z');
        let mut inner = seg.clone();
        end_segment(&mut inner, HEADER_LEN, false).unwrap();
        assert_eq!(
            inner[HEADER_LEN + 5] & 1,
            1,
            "the last block is marked last"
        );
        // The member's last segment must have its last block marked.
        assert!(end_segment(&mut seg.clone(), HEADER_LEN, true).is_err());
        // A block crossing the segment's end is refused.
        assert!(end_segment(&mut seg[..seg.len() - 1].to_vec(), HEADER_LEN, false).is_err());
        // A last block inside an inner segment is refused.
        let mut early = seg.clone();
        early[HEADER_LEN] |= 1;
        assert!(end_segment(&mut early, HEADER_LEN, false).is_err());
        // An empty segment has no block to end.
        assert!(end_segment(&mut [0u8; HEADER_LEN], HEADER_LEN, false).is_err());
    }
}
