//! Deflating a member in independent blocks that join into one stream.
//!
//! A member's bytes are cut into blocks of [`BLOCK`] bytes (a fixed size,
//! so the output does not depend on how many threads compress them). Each
//! block is compressed on its own by libdeflate, which compresses faster
//! and smaller than zlib at the same level (BENCHMARKS.md, "Compression
//! suite") but only whole buffers, always ending its output with a final
//! block. To join the pieces into one deflate stream, every piece but the
//! member's last is "unfinalized": [`unfinalize`] walks its blocks to find
//! the final one (with the library's one deflate decoder,
//! `inflate_core/`), clears its `BFINAL` bit, and ends the piece with an empty
//! stored block, which byte-aligns it (the sync marker pigz and zlib's
//! `Z_SYNC_FLUSH` write).
//!
//! Blocks are compressed without the previous block's window as a
//! dictionary (libdeflate has none); at 1 MiB a block loses at most a few
//! hundred bytes to that, well under the 1% the size bound allows.

use super::inflate_core::last_block;
use std::io;

/// Uncompressed bytes per independently compressed block.
pub(crate) const BLOCK: usize = 1 << 20;

/// The default level: the lowest of libdeflate's levels whose archives are
/// no larger than zlib's level 6 (what `np.savez_compressed` uses) on every
/// kind of the compression suite (BENCHMARKS.md); at 6, masks of booleans,
/// sparse arrays and `<U` strings come out 2-6% larger.
pub(crate) const DEFAULT_LEVEL: u32 = 7;

/// One thread's compressor.
pub(crate) struct Deflater {
    inner: libdeflater::Compressor,
}

impl Deflater {
    /// A compressor at `level` (1 to 9).
    pub(crate) fn new(level: u32) -> Deflater {
        let level = libdeflater::CompressionLvl::new(level.clamp(1, 9) as i32)
            .unwrap_or_else(|_| libdeflater::CompressionLvl::default());
        Deflater {
            inner: libdeflater::Compressor::new(level),
        }
    }

    /// Deflates `data` into a piece of a stream: the end of the stream when
    /// `last`, otherwise a byte-aligned, non-final piece that the next
    /// piece continues.
    pub(crate) fn compress(&mut self, data: &[u8], last: bool) -> io::Result<Vec<u8>> {
        let bound = self.inner.deflate_compress_bound(data.len());
        let mut out = vec![0u8; bound];
        let n = self
            .inner
            .deflate_compress(data, &mut out)
            .map_err(|e| io::Error::other(format!("libdeflate: {e:?}")))?;
        out.truncate(n);
        if !last {
            unfinalize(&mut out)?;
        }
        Ok(out)
    }
}

/// The bytes of an empty, non-final stored block after its 3 header bits
/// and the padding to a byte: LEN = 0, NLEN = !0.
const SYNC_TAIL: [u8; 4] = [0x00, 0x00, 0xFF, 0xFF];

/// Turns a complete deflate stream into a non-final, byte-aligned piece:
/// clears the final block's `BFINAL` bit and appends an empty stored block.
pub(crate) fn unfinalize(stream: &mut Vec<u8>) -> io::Result<()> {
    let (final_start, end) = walk(stream)?;
    stream[final_start / 8] &= !(1u8 << (final_start % 8));
    // A stored block header (BFINAL = 0, BTYPE = 00) at bit `end`, then
    // padding to the next byte: all zero bits.
    let header_end = end + 3;
    stream.resize(header_end.div_ceil(8), 0);
    let last = end / 8;
    stream[last] &= (1u16 << (end % 8)).wrapping_sub(1) as u8;
    for byte in &mut stream[last + 1..] {
        *byte = 0;
    }
    stream.extend_from_slice(&SYNC_TAIL);
    Ok(())
}

fn bad(reason: &str) -> io::Error {
    io::Error::other(format!(
        "internal error: deflate output not understood ({reason})"
    ))
}

/// Where the stream's final block starts and where it ends (bit
/// positions), found by the library's deflate decoder.
fn walk(stream: &[u8]) -> io::Result<(usize, usize)> {
    let (start, end) = last_block(stream).map_err(|e| bad(&e.into_io().to_string()))?;
    let bits = stream.len() as u64 * 8;
    if end > bits {
        return Err(bad("runs past its end"));
    }
    Ok((start as usize, end as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn inflate(stream: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::DeflateDecoder::new(stream)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    fn samples() -> Vec<Vec<u8>> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut noise = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        vec![
            vec![],
            vec![7],
            b"abcabcabcabc".repeat(1000),
            (0..300_000).map(|_| noise() as u8).collect(),
            (0..2_000_000)
                .map(|i| (noise() % 3 + i / 5000) as u8)
                .collect(),
            (0..700_000u32)
                .flat_map(|i| (i / 7).to_le_bytes())
                .collect(),
        ]
    }

    #[test]
    fn joined_pieces_inflate_to_the_concatenation() {
        for level in [1, 6, 9] {
            let mut d = Deflater::new(level);
            let parts = samples();
            let mut stream = Vec::new();
            for (i, part) in parts.iter().enumerate() {
                stream.extend(d.compress(part, i + 1 == parts.len()).unwrap());
            }
            assert_eq!(inflate(&stream), parts.concat(), "level {level}");
        }
    }

    #[test]
    fn walk_finds_the_end_of_every_stream() {
        let mut d = Deflater::new(6);
        for part in samples() {
            let whole = d.compress(&part, true).unwrap();
            let (_, end) = walk(&whole).unwrap();
            assert_eq!(end.div_ceil(8), whole.len());
            assert!(walk(&whole[..whole.len() / 2]).is_err() || whole.len() < 4);
        }
    }
}
