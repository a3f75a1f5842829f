//! Deflating a member in independent blocks that join into one stream.
//!
//! A member's bytes are cut into blocks of [`BLOCK`] bytes (a fixed size,
//! so the output does not depend on how many threads compress them). Each
//! block is compressed on its own by libdeflate, which compresses faster
//! and smaller than zlib at the same level (BENCHMARKS.md, "Compression
//! suite") but only whole buffers, always ending its output with a final
//! block. To join the pieces into one deflate stream, every piece but the
//! member's last is "unfinalized": [`unfinalize`] walks its blocks to find
//! the final one, clears its `BFINAL` bit, and ends the piece with an empty
//! stored block, which byte-aligns it (the sync marker pigz and zlib's
//! `Z_SYNC_FLUSH` write).
//!
//! Blocks are compressed without the previous block's window as a
//! dictionary (libdeflate has none); at 1 MiB a block loses at most a few
//! hundred bytes to that, well under the 1% the size bound allows.

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

/// Little-endian bit reader over a deflate stream.
struct Bits<'a> {
    data: &'a [u8],
    /// Position in bits.
    pos: usize,
}

impl Bits<'_> {
    /// The next up to 32 bits without consuming them (zeros past the end).
    fn peek(&self) -> u32 {
        let byte = self.pos / 8;
        let mut word = [0u8; 8];
        let avail = self.data.len().saturating_sub(byte).min(8);
        word[..avail].copy_from_slice(&self.data[byte..byte + avail]);
        (u64::from_le_bytes(word) >> (self.pos % 8)) as u32
    }

    fn take(&mut self, n: u32) -> io::Result<u32> {
        let v = if n == 0 {
            0
        } else {
            self.peek() & (u32::MAX >> (32 - n))
        };
        self.skip(n as usize)?;
        Ok(v)
    }

    fn skip(&mut self, n: usize) -> io::Result<()> {
        self.pos += n;
        if self.pos > self.data.len() * 8 {
            return Err(bad("runs past its end"));
        }
        Ok(())
    }
}

/// A canonical Huffman decoding table indexed by the next `bits` bits:
/// each entry is `symbol << 4 | length`.
struct Table {
    entries: Vec<u16>,
    bits: u32,
}

impl Table {
    fn new(lengths: &[u8]) -> io::Result<Table> {
        let bits = lengths.iter().copied().max().unwrap_or(0).max(1) as u32;
        let mut count = [0u16; 16];
        for &l in lengths {
            count[l as usize] += 1;
        }
        count[0] = 0;
        let mut next = [0u32; 16];
        let mut code = 0u32;
        for len in 1..16 {
            code = (code + count[len - 1] as u32) << 1;
            next[len] = code;
        }
        let mut entries = vec![0u16; 1 << bits];
        for (symbol, &len) in lengths.iter().enumerate() {
            if len == 0 {
                continue;
            }
            let len = len as u32;
            let code = next[len as usize];
            next[len as usize] += 1;
            if code >= 1 << len {
                return Err(bad("oversubscribed code"));
            }
            let reversed = code.reverse_bits() >> (32 - len);
            let entry = ((symbol as u16) << 4) | len as u16;
            let mut i = reversed as usize;
            while i < entries.len() {
                entries[i] = entry;
                i += 1 << len;
            }
        }
        Ok(Table { entries, bits })
    }

    fn decode(&self, bits: &mut Bits<'_>) -> io::Result<u16> {
        let entry = self.entries[(bits.peek() & ((1 << self.bits) - 1)) as usize];
        let len = entry & 15;
        if len == 0 {
            return Err(bad("no such code"));
        }
        bits.skip(len as usize)?;
        Ok(entry >> 4)
    }
}

/// Order of the code length code lengths in a dynamic block header.
const CL_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// Walks the blocks of a complete deflate stream: the bit position where
/// the final block starts and the bit position just after it.
fn walk(stream: &[u8]) -> io::Result<(usize, usize)> {
    let mut bits = Bits {
        data: stream,
        pos: 0,
    };
    loop {
        let start = bits.pos;
        let header = bits.take(3)?;
        match header >> 1 {
            0 => {
                bits.pos = bits.pos.div_ceil(8) * 8;
                let len = bits.take(16)? as usize;
                bits.skip(16 + 8 * len)?;
            }
            1 => {
                let mut lengths = [0u8; 288 + 32];
                lengths[..144].fill(8);
                lengths[144..256].fill(9);
                lengths[256..280].fill(7);
                lengths[280..288].fill(8);
                lengths[288..].fill(5);
                let lit = Table::new(&lengths[..288])?;
                let dist = Table::new(&lengths[288..])?;
                skip_symbols(&mut bits, &lit, &dist)?;
            }
            2 => {
                let hlit = bits.take(5)? as usize + 257;
                let hdist = bits.take(5)? as usize + 1;
                let hclen = bits.take(4)? as usize + 4;
                let mut cl = [0u8; 19];
                for &i in &CL_ORDER[..hclen] {
                    cl[i] = bits.take(3)? as u8;
                }
                let cl = Table::new(&cl)?;
                let mut lengths = vec![0u8; hlit + hdist];
                let mut i = 0;
                while i < lengths.len() {
                    let (value, repeat) = match cl.decode(&mut bits)? {
                        sym @ 0..=15 => (sym as u8, 1),
                        16 => {
                            let prev = *lengths[..i].last().ok_or_else(|| bad("repeat first"))?;
                            (prev, 3 + bits.take(2)? as usize)
                        }
                        17 => (0, 3 + bits.take(3)? as usize),
                        _ => (0, 11 + bits.take(7)? as usize),
                    };
                    let end = i + repeat;
                    if end > lengths.len() {
                        return Err(bad("lengths overflow"));
                    }
                    lengths[i..end].fill(value);
                    i = end;
                }
                let lit = Table::new(&lengths[..hlit])?;
                let dist = Table::new(&lengths[hlit..])?;
                skip_symbols(&mut bits, &lit, &dist)?;
            }
            _ => return Err(bad("reserved block type")),
        }
        if header & 1 == 1 {
            return Ok((start, bits.pos));
        }
    }
}

/// Skips a compressed block's symbols up to and including end-of-block.
fn skip_symbols(bits: &mut Bits<'_>, lit: &Table, dist: &Table) -> io::Result<()> {
    loop {
        let sym = lit.decode(bits)?;
        match sym {
            0..=255 => {}
            256 => return Ok(()),
            257..=285 => {
                let extra = if (265..285).contains(&sym) {
                    (sym - 261) / 4
                } else {
                    0
                };
                bits.skip(extra as usize)?;
                let d = dist.decode(bits)?;
                if d >= 30 {
                    return Err(bad("distance code"));
                }
                let extra = if d < 4 { 0 } else { (d - 2) / 2 };
                bits.skip(extra as usize)?;
            }
            _ => return Err(bad("length code")),
        }
    }
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
