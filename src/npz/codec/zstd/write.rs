//! Compressing a member's segments into one Zstandard frame, each segment
//! on its own (any thread) and independent of the others, as zstd's own
//! multithreaded compressor does without overlap (`ZSTDMT` with
//! `overlapLog` 1): a fresh compression state per segment, its repeat
//! offsets invalidated so that its first sequences never rely on the
//! offsets the previous segment left in the decoder. The first segment
//! begins with the frame header, the last ends the frame; the bytes do not
//! depend on the thread that compressed a segment.
//!
//! This uses zstd's buffer-less block API (`ZSTD_compressBegin_advanced`,
//! `ZSTD_compressContinue`, `ZSTD_compressEnd`, its experimental section)
//! and `ZSTD_invalidateRepCodes`, the internal function `ZSTDMT` calls for
//! the same purpose, from the zstd that `zstd-sys` compiles in (1.5.7);
//! the tests decode every segment alone to check the independence.

use super::frame::{HEADER_LEN, MAGIC};
use std::io;
use zstd_safe::zstd_sys as sys;

extern "C" {
    /// zstd's own (`lib/compress/zstd_compress.c`): resets the repeat
    /// offsets of `cctx` to none, so that the next block uses only offsets
    /// it sets itself. Linked from the static zstd that `zstd-sys` builds.
    fn ZSTD_invalidateRepCodes(cctx: *mut sys::ZSTD_CCtx);
}

/// The default level: see [`crate::npz::Codec::Zstd`] and BENCHMARKS.md.
pub(crate) const DEFAULT_LEVEL: i32 = 3;

/// Uncompressed bytes per segment (the last of a member may hold fewer):
/// large enough that a segment loses little to its own window (the
/// compression suite is 0.5% smaller than with 1 MiB, and 0.1% larger
/// than with 4 MiB), small enough to keep every core busy on members of a
/// few megabytes (BENCHMARKS.md, "Zstandard, and the other zip methods").
pub(crate) const SEGMENT: usize = 2 << 20;

/// The levels zstd offers beyond its fast ones.
pub(crate) const LEVELS: std::ops::RangeInclusive<i32> = 1..=22;

/// One thread's compressor of segments at one level.
pub(crate) struct SegmentCompressor {
    cctx: *mut sys::ZSTD_CCtx,
    level: i32,
    /// Uncompressed bytes per segment (the last may hold fewer): the
    /// parameters are zstd's for inputs of this size.
    segment: usize,
}

// SAFETY: a `ZSTD_CCtx` has no thread affinity; it is used by one thread
// at a time (`&mut self`).
unsafe impl Send for SegmentCompressor {}

impl SegmentCompressor {
    /// A compressor at `level` for segments of `segment` bytes.
    pub(crate) fn new(level: i32, segment: usize) -> io::Result<Self> {
        // SAFETY: no arguments; a null result is checked.
        let cctx = unsafe { sys::ZSTD_createCCtx() };
        if cctx.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        Ok(SegmentCompressor {
            cctx,
            level: level.clamp(*LEVELS.start(), *LEVELS.end()),
            segment,
        })
    }

    /// The parameters of every segment: zstd's for `segment`-byte inputs
    /// at the level, no content size (the frame's is not known when it
    /// starts), no checksum (the zip CRC-32 checks), no dictionary.
    fn params(&self) -> sys::ZSTD_parameters {
        // SAFETY: plain values in, a plain struct out.
        let mut params = unsafe { sys::ZSTD_getParams(self.level, self.segment as u64, 0) };
        // Matches of 4 bytes where the level's strategy would want 5 or
        // more (its fast ones): numbers repeat in 4-byte halves of float64s
        // and whole float32s, which deflate's 3-byte matches find; the
        // compression suite's smooth float64 grid is 5% smaller for 5%
        // more time (BENCHMARKS.md). The optimal parsers use 3 already.
        if (params.cParams.strategy as u32) < sys::ZSTD_strategy::ZSTD_btopt as u32 {
            params.cParams.minMatch = params.cParams.minMatch.min(4);
        }
        params.fParams.contentSizeFlag = 0;
        params.fParams.checksumFlag = 0;
        params.fParams.noDictIDFlag = 1;
        params
    }

    /// Compresses `data`, one segment of a member's frame: with the frame
    /// header first when `first`, ending the frame when `last` (one segment
    /// that is both is a whole frame).
    pub(crate) fn compress(&mut self, data: &[u8], first: bool, last: bool) -> io::Result<Vec<u8>> {
        // SAFETY: plain value in and out.
        let bound = unsafe { sys::ZSTD_compressBound(data.len()) };
        let mut out: Vec<u8> = Vec::new();
        out.try_reserve_exact(bound + HEADER_LEN + 16)
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let cap = out.capacity();
        let dst = out.as_mut_ptr();
        let params = self.params();
        // SAFETY: `cctx` is a live context owned by `self`; `dst` has
        // `cap` writable bytes, and every write below is at `pos <= cap`
        // with `cap - pos` bytes of room; `data` is read only, and stays
        // alive and unchanged until the context is begun again (zstd keeps
        // pointers into it as history, used only by this call's blocks).
        let written = unsafe {
            check(sys::ZSTD_compressBegin_advanced(
                self.cctx,
                std::ptr::null(),
                0,
                params,
                sys::ZSTD_CONTENTSIZE_UNKNOWN as u64,
            ))?;
            // A call without input writes the frame header, which only the
            // first segment keeps (as `ZSTDMT` does for its later jobs).
            let header = check(sys::ZSTD_compressContinue(
                self.cctx,
                dst.cast(),
                cap,
                data.as_ptr().cast(),
                0,
            ))?;
            let mut pos = if first { header } else { 0 };
            ZSTD_invalidateRepCodes(self.cctx);
            let end = if last {
                sys::ZSTD_compressEnd
            } else {
                sys::ZSTD_compressContinue
            };
            pos += check(end(
                self.cctx,
                dst.add(pos).cast(),
                cap - pos,
                data.as_ptr().cast(),
                data.len(),
            ))?;
            pos
        };
        // SAFETY: zstd wrote `written` bytes at the start of `out`, within
        // its capacity.
        unsafe { out.set_len(written) };
        if first && (written < HEADER_LEN || out[..4] != MAGIC || out[4] != 0) {
            return Err(io::Error::other(
                "internal error: zstd wrote an unexpected frame header",
            ));
        }
        Ok(out)
    }
}

impl Drop for SegmentCompressor {
    fn drop(&mut self) {
        // SAFETY: `cctx` was created by `ZSTD_createCCtx` and is freed once.
        unsafe { sys::ZSTD_freeCCtx(self.cctx) };
    }
}

/// A zstd result as an `io::Result`.
fn check(code: usize) -> io::Result<usize> {
    // SAFETY: plain value in and out.
    if unsafe { sys::ZSTD_isError(code) } != 0 {
        return Err(io::Error::other(format!(
            "zstd: {}",
            zstd_safe::get_error_name(code)
        )));
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::super::super::parallel::decode_pieces;
    use super::super::frame::Header;
    use super::*;
    use crate::npz::zip::pieces::Pieces;
    use std::mem::MaybeUninit;

    /// Data whose segments start with runs and repeats at distances 1, 4
    /// and 8, where a segment that trusted the decoder's repeat offsets
    /// would go wrong.
    fn data() -> Vec<u8> {
        (0..700_000u32)
            .map(|i| match i % 50_000 {
                0..=999 => 0,
                1000..=2999 => (i % 4) as u8,
                3000..=4999 => (i % 8) as u8 * 3,
                _ => ((i as f64 * 0.01).sin() * 40.0) as i8 as u8 ^ (i % 13 == 0) as u8,
            })
            .collect()
    }

    fn frame(data: &[u8], segment: usize, level: i32) -> (Vec<u8>, Pieces) {
        let mut c = SegmentCompressor::new(level, segment).unwrap();
        let chunks: Vec<&[u8]> = data.chunks(segment).collect();
        let (mut frame, mut lengths) = (Vec::new(), Vec::new());
        for (i, chunk) in chunks.iter().enumerate() {
            let piece = c.compress(chunk, i == 0, i + 1 == chunks.len()).unwrap();
            lengths.push(piece.len() as u32);
            frame.extend_from_slice(&piece);
        }
        let block = segment as u32;
        (frame, Pieces { block, lengths })
    }

    #[test]
    fn segments_make_one_frame_and_decode_alone() {
        let data = data();
        for level in [1, 3, 9, 19] {
            let (frame, pieces) = frame(&data, 64 << 10, level);
            assert!(pieces.lengths.len() > 5);
            // One frame, as any decoder (Python's) reads it.
            let mut out = vec![0u8; data.len()];
            let n = zstd_safe::decompress(&mut out[..], &frame).unwrap();
            assert_eq!(n, data.len(), "level {level}");
            assert!(out == data, "level {level}: one frame");
            assert_eq!(
                zstd_safe::find_frame_compressed_size(&frame),
                Ok(frame.len())
            );
            // Every segment alone, on two threads.
            let mut out = vec![MaybeUninit::new(0xAA); data.len()];
            let count = pieces.lengths.len();
            let crc = decode_pieces(
                &Header::default(),
                &mut &frame[..],
                &pieces,
                0..count,
                &mut out,
                2,
            )
            .unwrap();
            // SAFETY: initialised by `decode_pieces`.
            let out: Vec<u8> = out.iter().map(|b| unsafe { b.assume_init() }).collect();
            assert!(out == data, "level {level}: segments alone");
            assert_eq!(crc.finalize(), crc32fast::hash(&data));
        }
    }

    #[test]
    fn the_same_bytes_whatever_the_order_of_compression() {
        let data = data();
        let (frame, _) = frame(&data, 100_000, 3);
        // Segments compressed backwards by one compressor.
        let mut c = SegmentCompressor::new(3, 100_000).unwrap();
        let chunks: Vec<&[u8]> = data.chunks(100_000).collect();
        let mut pieces: Vec<Vec<u8>> = (0..chunks.len())
            .rev()
            .map(|i| {
                c.compress(chunks[i], i == 0, i + 1 == chunks.len())
                    .unwrap()
            })
            .collect();
        pieces.reverse();
        assert!(pieces.concat() == frame);
    }
}
