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

/// Little-endian bit reader over a deflate stream, buffering up to 64
/// bits (the walk decodes every symbol, so this loop is what it costs).
struct Bits<'a> {
    data: &'a [u8],
    /// Next byte to load into `buf`.
    next: usize,
    buf: u64,
    /// Valid bits in `buf`.
    count: u32,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8]) -> Self {
        Bits {
            data,
            next: 0,
            buf: 0,
            count: 0,
        }
    }

    /// Position in bits.
    fn pos(&self) -> usize {
        self.next * 8 - self.count as usize
    }

    fn refill(&mut self) {
        if let Some(word) = self.data.get(self.next..self.next + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            self.buf |= word << self.count;
            let bytes = (63 - self.count) / 8;
            self.next += bytes as usize;
            self.count += bytes * 8;
        } else {
            while self.count <= 56 && self.next < self.data.len() {
                self.buf |= (self.data[self.next] as u64) << self.count;
                self.next += 1;
                self.count += 8;
            }
        }
    }

    /// The next 32 bits without consuming them (zeros past the end).
    #[inline]
    fn peek(&mut self) -> u32 {
        if self.count < 32 {
            self.refill();
        }
        self.buf as u32
    }

    /// Consumes `n` (at most 32) bits.
    #[inline]
    fn skip(&mut self, n: u32) -> io::Result<()> {
        if n > self.count {
            self.refill();
            if n > self.count {
                return Err(bad("runs past its end"));
            }
        }
        self.buf >>= n;
        self.count -= n;
        Ok(())
    }

    fn take(&mut self, n: u32) -> io::Result<u32> {
        let v = if n == 0 {
            0
        } else {
            self.peek() & (u32::MAX >> (32 - n))
        };
        self.skip(n)?;
        Ok(v)
    }

    /// Moves to bit position `pos`.
    fn seek(&mut self, pos: usize) -> io::Result<()> {
        if pos > self.data.len() * 8 {
            return Err(bad("runs past its end"));
        }
        self.next = pos / 8;
        self.buf = 0;
        self.count = 0;
        self.skip((pos % 8) as u32)
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

    #[inline]
    fn decode(&self, bits: &mut Bits<'_>) -> io::Result<u16> {
        let entry = self.entries[(bits.peek() & ((1 << self.bits) - 1)) as usize];
        let len = entry & 15;
        if len == 0 {
            return Err(bad("no such code"));
        }
        bits.skip(len as u32)?;
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
    let mut bits = Bits::new(stream);
    loop {
        let start = bits.pos();
        let header = bits.take(3)?;
        match header >> 1 {
            0 => {
                bits.seek(bits.pos().div_ceil(8) * 8)?;
                let len = bits.take(16)? as usize;
                bits.seek(bits.pos() + 16 + 8 * len)?;
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
            return Ok((start, bits.pos()));
        }
    }
}

/// Skips a compressed block's symbols up to and including end-of-block.
fn skip_symbols(bits: &mut Bits<'_>, lit: &Table, dist: &Table) -> io::Result<()> {
    loop {
        // A symbol with its extra bits and distance takes at most 48 bits:
        // with that many buffered, no step needs a bounds check.
        if bits.count < 48 {
            bits.refill();
            if bits.count < 48 {
                if skip_symbol(bits, lit, dist)? {
                    return Ok(());
                }
                continue;
            }
        }
        let entry = lit.entries[(bits.buf & ((1 << lit.bits) - 1)) as usize];
        let len = (entry & 15) as u32;
        if len == 0 {
            return Err(bad("no such code"));
        }
        bits.buf >>= len;
        bits.count -= len;
        let sym = entry >> 4;
        if sym < 256 {
            continue;
        }
        if sym == 256 {
            return Ok(());
        }
        let extra = length_extra(sym)?;
        bits.buf >>= extra;
        bits.count -= extra;
        let entry = dist.entries[(bits.buf & ((1 << dist.bits) - 1)) as usize];
        let len = (entry & 15) as u32;
        if len == 0 {
            return Err(bad("no such code"));
        }
        bits.buf >>= len;
        bits.count -= len;
        let extra = distance_extra(entry >> 4)?;
        bits.buf >>= extra;
        bits.count -= extra;
    }
}

/// Skips one symbol near the end of the data, checking every step: whether
/// it was end-of-block.
fn skip_symbol(bits: &mut Bits<'_>, lit: &Table, dist: &Table) -> io::Result<bool> {
    match lit.decode(bits)? {
        0..=255 => Ok(false),
        256 => Ok(true),
        sym => {
            bits.skip(length_extra(sym)?)?;
            let d = dist.decode(bits)?;
            bits.skip(distance_extra(d)?)?;
            Ok(false)
        }
    }
}

/// Extra bits after length symbol `sym` (257 to 285).
fn length_extra(sym: u16) -> io::Result<u32> {
    match sym {
        257..=264 | 285 => Ok(0),
        265..=284 => Ok(((sym - 261) / 4) as u32),
        _ => Err(bad("length code")),
    }
}

/// Extra bits after distance symbol `d` (0 to 29).
fn distance_extra(d: u16) -> io::Result<u32> {
    match d {
        0..=3 => Ok(0),
        4..=29 => Ok(((d - 2) / 2) as u32),
        _ => Err(bad("distance code")),
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
