//! Whether a segment of a Zstandard frame provably decodes alone as it
//! decodes inside the frame.
//!
//! A segment decoded as a frame of its own starts from a fresh decoder:
//! no earlier output, no entropy tables, repeat offsets 1, 4 and 8. Inside
//! the frame it starts from whatever the segments before left. Three
//! things carry over, and only one of them silently:
//!
//! - a match reaching back before the segment: alone, there is nothing
//!   there, and zstd reports corrupt data;
//! - literals or sequences that reuse the previous block's Huffman or FSE
//!   tables (treeless literals, repeat mode): alone, there are none, and
//!   zstd reports corrupt data;
//! - a sequence that uses a repeat offset the segment did not set itself:
//!   alone, it gets 1, 4 or 8 and decodes *other bytes*, without error.
//!
//! So a segment is decoded alone only when its sequences provably never
//! use a repeat offset they inherit: this walks the segment's blocks,
//! decoding the sequence headers and the sequences' codes (not the
//! literals or the output), and follows which of the three repeat offsets
//! the segment has set itself, until all three are (then nothing inherited
//! can be reached any more) or the segment ends. ndnpy's writer resets the
//! repeat offsets at each segment (`write.rs`), so its first sequences set
//! offsets of their own: the walk stops after a few sequences. Anything
//! this cannot follow counts as not proven (the member is then decoded by
//! the standard decoder, in one stream).
//!
//! The format is RFC 8878's; the tables are zstd's (`zstd_internal.h`).

/// Extra bits of each literal-length code.
const LL_BITS: [u8; 36] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11,
    12, 13, 14, 15, 16,
];

/// Extra bits of each match-length code.
const ML_BITS: [u8; 53] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
];

/// The predefined distributions (accuracy logs 6, 6, 5).
const LL_DEFAULT: [i16; 36] = [
    4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
    -1, -1, -1, -1,
];
const ML_DEFAULT: [i16; 53] = [
    1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
];
const OF_DEFAULT: [i16; 29] = [
    1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1,
];

/// One kind of code: its largest symbol, largest accuracy log, default.
struct Kind {
    max_symbol: usize,
    max_log: u32,
    default: &'static [i16],
    default_log: u32,
}

const LL: Kind = Kind {
    max_symbol: 35,
    max_log: 9,
    default: &LL_DEFAULT,
    default_log: 6,
};
const OF: Kind = Kind {
    max_symbol: 31,
    max_log: 8,
    default: &OF_DEFAULT,
    default_log: 5,
};
const ML: Kind = Kind {
    max_symbol: 52,
    max_log: 9,
    default: &ML_DEFAULT,
    default_log: 6,
};

/// An FSE decoding table: per state, its symbol, the bits to read for the
/// next state, and the next state's base.
#[derive(Clone)]
struct Table {
    log: u32,
    entries: Vec<(u8, u8, u16)>,
}

impl Table {
    /// The table of normalized counts `norm` at accuracy `log` (zstd's
    /// `FSE_buildDTable`).
    fn build(norm: &[i16], log: u32) -> Option<Table> {
        let size = 1usize << log;
        let mut symbols = vec![0u8; size];
        let mut next = vec![0u32; norm.len()];
        let mut high = size - 1;
        for (s, &n) in norm.iter().enumerate() {
            if n == -1 {
                symbols[high] = s as u8;
                high = high.checked_sub(1)?;
                next[s] = 1;
            } else {
                next[s] = n.max(0) as u32;
            }
        }
        let step = (size >> 1) + (size >> 3) + 3;
        let mut pos = 0;
        for (s, &n) in norm.iter().enumerate() {
            for _ in 0..n.max(0) {
                symbols[pos] = s as u8;
                pos = (pos + step) & (size - 1);
                while pos > high {
                    pos = (pos + step) & (size - 1);
                }
            }
        }
        if pos != 0 {
            return None;
        }
        let mut entries = Vec::with_capacity(size);
        for &s in &symbols {
            let state = next[s as usize];
            next[s as usize] += 1;
            if state == 0 {
                return None;
            }
            let bits = log.checked_sub(31 - state.leading_zeros())?;
            let base = (state << bits).checked_sub(size as u32)?;
            entries.push((s, bits as u8, base as u16));
        }
        Some(Table { log, entries })
    }

    /// A table of one symbol (RLE mode).
    fn single(symbol: u8) -> Table {
        Table {
            log: 0,
            entries: vec![(symbol, 0, 0)],
        }
    }
}

/// Bits read forwards, least significant first (FSE table descriptions).
struct Forward<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Forward<'_> {
    fn peek(&self, n: u32) -> u32 {
        (0..n as usize).fold(0, |v, i| {
            let at = self.pos + i;
            let bit = self.data.get(at / 8).map_or(0, |b| (b >> (at % 8)) & 1);
            v | (bit as u32) << i
        })
    }

    fn read(&mut self, n: u32) -> u32 {
        let v = self.peek(n);
        self.pos += n as usize;
        v
    }
}

/// Reads an FSE table description at the start of `data` (zstd's
/// `FSE_readNCount`): the table and the bytes it took.
fn read_table(data: &[u8], kind: &Kind) -> Option<(Table, usize)> {
    let mut bits = Forward { data, pos: 0 };
    let log = bits.read(4) + 5;
    if log > kind.max_log {
        return None;
    }
    let mut remaining = (1i32 << log) + 1;
    let mut threshold = 1i32 << log;
    let mut nbits = log + 1;
    let mut norm = vec![0i16; kind.max_symbol + 1];
    let mut symbol = 0;
    loop {
        let max = (2 * threshold - 1) - remaining;
        let peek = bits.peek(nbits) as i32;
        let mut count = if (peek & (threshold - 1)) < max {
            bits.pos += nbits as usize - 1;
            peek & (threshold - 1)
        } else {
            bits.pos += nbits as usize;
            let c = peek & (2 * threshold - 1);
            if c >= threshold {
                c - max
            } else {
                c
            }
        };
        count -= 1;
        remaining -= count.abs();
        *norm.get_mut(symbol)? = count as i16;
        symbol += 1;
        if remaining < threshold {
            if remaining <= 1 {
                break;
            }
            nbits = 32 - (remaining as u32).leading_zeros();
            threshold = 1 << (nbits - 1);
        }
        if symbol > kind.max_symbol {
            break;
        }
        if count == 0 {
            loop {
                let repeat = bits.read(2) as usize;
                symbol += repeat;
                if repeat != 3 {
                    break;
                }
            }
            if symbol > kind.max_symbol {
                return None;
            }
        }
    }
    let used = bits.pos.div_ceil(8);
    if remaining != 1 || used > data.len() {
        return None;
    }
    Some((Table::build(&norm, log)?, used))
}

/// Bits read backwards from the end (the sequences' bitstream).
struct Backward<'a> {
    data: &'a [u8],
    /// Bits not read yet: those below this position.
    pos: usize,
}

impl<'a> Backward<'a> {
    fn new(data: &'a [u8]) -> Option<Backward<'a>> {
        let last = *data.last()?;
        if last == 0 {
            return None;
        }
        // Above the highest set bit of the last byte: padding, and the bit.
        let pos = (data.len() - 1) * 8 + (7 - last.leading_zeros() as usize);
        Some(Backward { data, pos })
    }

    fn read(&mut self, n: u32) -> Option<u32> {
        self.pos = self.pos.checked_sub(n as usize)?;
        Some((0..n as usize).fold(0, |v, i| {
            let at = self.pos + i;
            v | (((self.data[at / 8] >> (at % 8)) & 1) as u32) << i
        }))
    }
}

/// Whether the blocks `blocks` (a segment after its frame header, its
/// blocks as the frame has them) provably decode alone as they do after
/// any earlier segments: none of their sequences uses a repeat offset the
/// segment did not set (false also when this cannot be followed).
pub(super) fn independent(blocks: &[u8]) -> bool {
    walk(blocks).unwrap_or(false)
}

fn walk(blocks: &[u8]) -> Option<bool> {
    // Which repeat offsets the segment has set itself.
    let mut own = [false; 3];
    let mut tables: [Option<Table>; 3] = [None, None, None];
    let mut at = 0;
    while at < blocks.len() {
        let header = blocks.get(at..at + 3)?;
        let word = u32::from_le_bytes([header[0], header[1], header[2], 0]);
        let (last, kind, size) = (word & 1 == 1, (word >> 1) & 3, (word >> 3) as usize);
        let content = match kind {
            0 => size,
            1 => 1,
            2 => size,
            _ => return None,
        };
        let body = blocks.get(at + 3..at + 3 + content)?;
        if kind == 2 && sequences(body, &mut tables, &mut own)? {
            return Some(true);
        }
        at += 3 + content;
        if last {
            break;
        }
    }
    // The segment ended without using an offset it did not set.
    Some(true)
}

/// Follows the sequences of one compressed block; `Some(true)` once all
/// three repeat offsets are the segment's own, `Some(false)` while not
/// yet, `None` when one inherited is used (or the block cannot be read).
fn sequences(block: &[u8], tables: &mut [Option<Table>; 3], own: &mut [bool; 3]) -> Option<bool> {
    // The literals section: skipped.
    let b0 = *block.first()?;
    let (kind, format) = (b0 & 3, (b0 >> 2) & 3);
    let literals = match kind {
        0 | 1 => {
            let (header, size) = match format {
                0 | 2 => (1, (b0 >> 3) as usize),
                1 => (2, (b0 >> 4) as usize + ((*block.get(1)? as usize) << 4)),
                _ => (
                    3,
                    (b0 >> 4) as usize
                        + ((*block.get(1)? as usize) << 4)
                        + ((*block.get(2)? as usize) << 12),
                ),
            };
            header + if kind == 0 { size } else { 1 }
        }
        _ => {
            let (header, bits) = match format {
                0 | 1 => (3, 10),
                2 => (4, 14),
                _ => (5, 18),
            };
            let mut v = 0u64;
            for i in 0..header {
                v |= (*block.get(i)? as u64) << (8 * i);
            }
            let compressed = ((v >> 4 >> bits) & ((1 << bits) - 1)) as usize;
            header + compressed
        }
    };
    let rest = block.get(literals..)?;
    // The sequences section's header.
    let b0 = *rest.first()? as usize;
    let (count, mut at) = match b0 {
        0 => return Some(false),
        1..=127 => (b0, 1),
        128..=254 => (((b0 - 128) << 8) + *rest.get(1)? as usize, 2),
        _ => (
            *rest.get(1)? as usize + ((*rest.get(2)? as usize) << 8) + 0x7F00,
            3,
        ),
    };
    let modes = *rest.get(at)?;
    at += 1;
    if modes & 3 != 0 {
        return None;
    }
    // Tables in the order LL, OF, ML; kept for later blocks' repeat mode.
    for (slot, (kind, shift)) in [(&LL, 6), (&OF, 4), (&ML, 2)].into_iter().enumerate() {
        let table = match (modes >> shift) & 3 {
            0 => Table::build(kind.default, kind.default_log)?,
            1 => {
                let symbol = *rest.get(at)?;
                at += 1;
                if symbol as usize > kind.max_symbol {
                    return None;
                }
                Table::single(symbol)
            }
            2 => {
                let (table, used) = read_table(rest.get(at..)?, kind)?;
                at += used;
                table
            }
            // Repeat: the segment's own earlier table, or not provable.
            _ => tables[slot].clone()?,
        };
        tables[slot] = Some(table);
    }
    let [Some(ll), Some(of), Some(ml)] = &*tables else {
        return None;
    };
    let mut bits = Backward::new(rest.get(at..)?)?;
    let mut state = [bits.read(ll.log)?, bits.read(of.log)?, bits.read(ml.log)?];
    for n in 0..count {
        let (ll_code, ll_bits, ll_base) = *ll.entries.get(state[0] as usize)?;
        let (of_code, of_bits, of_base) = *of.entries.get(state[1] as usize)?;
        let (ml_code, ml_bits, ml_base) = *ml.entries.get(state[2] as usize)?;
        if of_code > 31 || ll_code as usize > LL.max_symbol || ml_code as usize > ML.max_symbol {
            return None;
        }
        let extra = bits.read(of_code as u32)?;
        let ll0 = ll_code == 0;
        // Which of the three offsets the sequence uses (zstd's
        // `ZSTD_decodeSequence`), and the new order.
        let [r0, r1, r2] = *own;
        *own = match of_code {
            0 => {
                let used = if ll0 { r1 } else { r0 };
                if !used {
                    return None;
                }
                if ll0 {
                    [r1, r0, r2]
                } else {
                    [r0, r1, r2]
                }
            }
            1 => {
                let v = 1 + ll0 as u32 + extra;
                let used = match v {
                    1 => r1,
                    2 => r2,
                    _ => r0,
                };
                if !used {
                    return None;
                }
                match v {
                    1 => [used, r0, r2],
                    _ => [used, r0, r1],
                }
            }
            _ => [true, r0, r1],
        };
        if own.iter().all(|&o| o) {
            return Some(true);
        }
        bits.read(ML_BITS[ml_code as usize] as u32)?;
        bits.read(LL_BITS[ll_code as usize] as u32)?;
        if n + 1 < count {
            state[0] = ll_base as u32 + bits.read(ll_bits as u32)?;
            state[2] = ml_base as u32 + bits.read(ml_bits as u32)?;
            state[1] = of_base as u32 + bits.read(of_bits as u32)?;
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of 12 bytes, slowly changing, with noise: zstd's compressor
    /// repeats offset 12 (and its neighbours) across its blocks.
    fn records(n: usize) -> Vec<u8> {
        let mut x = 0x9E37_79B9u32;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let base = ((i % 12) as u32 * 7 + (i / 4096) as u32) as u8;
                if x.is_multiple_of(23) {
                    x as u8
                } else {
                    base
                }
            })
            .collect()
    }

    /// One standard frame of `data` (no content size, checksum or
    /// dictionary id: ndnpy's header), as any zstd writer makes it: repeat
    /// offsets carried from block to block.
    fn standard_frame(data: &[u8], level: i32) -> Vec<u8> {
        let mut cctx = zstd_safe::CCtx::create();
        cctx.set_parameter(zstd_safe::CParameter::CompressionLevel(level))
            .unwrap();
        cctx.set_parameter(zstd_safe::CParameter::ContentSizeFlag(false))
            .unwrap();
        cctx.set_parameter(zstd_safe::CParameter::ChecksumFlag(false))
            .unwrap();
        cctx.set_parameter(zstd_safe::CParameter::DictIdFlag(false))
            .unwrap();
        let mut out = vec![0u8; zstd_safe::compress_bound(data.len())];
        let n = cctx.compress2(&mut out[..], data).unwrap();
        out.truncate(n);
        out
    }

    /// Where the blocks after a 6-byte frame header start.
    fn block_starts(frame: &[u8]) -> Vec<usize> {
        let mut starts = Vec::new();
        let mut at = 6;
        while at < frame.len() {
            starts.push(at);
            let w = u32::from_le_bytes([frame[at], frame[at + 1], frame[at + 2], 0]);
            let size = (w >> 3) as usize;
            at += 3 + if (w >> 1) & 3 == 1 { 1 } else { size };
        }
        starts
    }

    fn decode(frame: &[u8], max: usize) -> Option<Vec<u8>> {
        let mut out = vec![0u8; max];
        let n = zstd_safe::decompress(&mut out[..], frame).ok()?;
        out.truncate(n);
        Some(out)
    }

    #[test]
    fn a_segment_is_independent_only_when_alone_it_decodes_as_in_the_frame() {
        let data = records(3 << 20);
        let (mut proven, mut refused, mut differ) = (0, 0, 0);
        for level in [1, 3, 7, 19] {
            let frame = standard_frame(&data, level);
            assert_eq!(&frame[..5], &[0x28, 0xB5, 0x2F, 0xFD, 0]);
            let starts = block_starts(&frame);
            assert!(starts.len() > 10, "{}", starts.len());
            for &start in &starts[1..] {
                // The output before the block: the frame up to it, its
                // last block marked last.
                let mut head = frame[..start].to_vec();
                let last = *block_starts(&head).last().unwrap();
                head[last] |= 1;
                let before = decode(&head, data.len()).unwrap().len();
                let mut alone = frame[..6].to_vec();
                alone.extend_from_slice(&frame[start..]);
                let decoded = decode(&alone, data.len());
                let same = decoded.as_deref() == Some(&data[before..]);
                if decoded.is_some() && !same {
                    differ += 1;
                }
                if independent(&frame[start..]) {
                    // Sound: proven means the same bytes (or zstd's error,
                    // for what is found without this walk).
                    assert!(same || decoded.is_none(), "level {level} at {start}");
                    proven += 1;
                } else {
                    refused += 1;
                }
            }
        }
        // The walk is not vacuous: some blocks provably decode alone as
        // in the frame, others not.
        assert!(proven > 0 && refused > 0, "{proven} {refused} {differ}");
    }

    /// Bytes `first` then `second` in one standard frame, the blocks of
    /// `first` flushed (so they end where it ends): the frame, and where
    /// `second`'s blocks start.
    pub(crate) fn flushed_frame(first: &[u8], second: &[u8]) -> (Vec<u8>, usize) {
        use zstd_safe::zstd_sys::ZSTD_EndDirective::{ZSTD_e_end, ZSTD_e_flush};
        use zstd_safe::{CParameter, InBuffer, OutBuffer};
        let mut cctx = zstd_safe::CCtx::create();
        cctx.set_parameter(CParameter::CompressionLevel(3)).unwrap();
        cctx.set_parameter(CParameter::ContentSizeFlag(false))
            .unwrap();
        cctx.set_parameter(CParameter::ChecksumFlag(false)).unwrap();
        cctx.set_parameter(CParameter::DictIdFlag(false)).unwrap();
        let mut out = vec![0u8; zstd_safe::compress_bound(first.len() + second.len()) + 64];
        let mut split = 0;
        let mut output = OutBuffer::around(&mut out[..]);
        for (part, end) in [(first, ZSTD_e_flush), (second, ZSTD_e_end)] {
            let mut input = InBuffer::around(part);
            while cctx.compress_stream2(&mut output, &mut input, end).unwrap() != 0 {}
            if split == 0 {
                split = output.pos();
            }
        }
        let n = output.pos();
        out.truncate(n);
        (out, split)
    }

    /// Twelve bytes of `alphabet`, repeated: offset 12 everywhere.
    pub(crate) fn periodic(alphabet: u8, n: usize) -> Vec<u8> {
        (0..n).map(|i| alphabet + (i % 12) as u8).collect()
    }

    #[test]
    fn a_segment_that_uses_the_frames_repeat_offset_is_not_independent() {
        // The second part repeats at offset 12 too, with bytes of its own:
        // the compressor's first match there is a repeat of offset 12,
        // which the first part set.
        let (a, b) = (periodic(b'a', 200_000), periodic(b'A', 100_000));
        let (frame, split) = flushed_frame(&a, &b);
        let whole = decode(&frame, 400_000).unwrap();
        assert!(whole[..a.len()] == a[..] && whole[a.len()..] == b[..]);
        // Alone, the repeat offset is 1: other bytes, no error.
        let mut alone = frame[..6].to_vec();
        alone.extend_from_slice(&frame[split..]);
        let other = decode(&alone, 400_000).unwrap();
        assert_eq!(other.len(), b.len());
        assert!(other != b, "decoded alone, the second part differs");
        assert!(!independent(&frame[split..]));
    }

    #[test]
    fn predefined_tables_are_zstds() {
        for (norm, log) in [
            (&LL_DEFAULT[..], 6),
            (&ML_DEFAULT[..], 6),
            (&OF_DEFAULT[..], 5),
        ] {
            let sum: i32 = norm.iter().map(|&n| (n as i32).abs()).sum();
            assert_eq!(sum, 1 << log);
            assert_eq!(Table::build(norm, log).unwrap().entries.len(), 1 << log);
        }
    }

    #[test]
    fn anything_malformed_is_not_proven_and_never_panics() {
        let data = records(400_000);
        let frame = standard_frame(&data, 3);
        let blocks = &frame[6..];
        for cut in 0..blocks.len().min(3000) {
            let _ = independent(&blocks[..cut]);
        }
        for at in 0..blocks.len().min(3000) {
            let mut bad = blocks.to_vec();
            bad[at] ^= 0x5A;
            let _ = independent(&bad);
        }
        assert!(!independent(&[0xFF, 0xFF, 0xFF]));
    }

    #[test]
    fn parts_that_decode_alone_are_told_apart_from_those_that_differ() {
        use zstd_safe::zstd_sys::ZSTD_EndDirective::{ZSTD_e_end, ZSTD_e_flush};
        use zstd_safe::{CParameter, InBuffer, OutBuffer};
        // Parts of bytes of their own (nothing to match in earlier parts),
        // each with a period: the same as the part before (its first match
        // repeats the offset the frame holds) or another (a new offset).
        let periods = [
            12, 12, 7, 9, 9, 5, 12, 3, 3, 11, 4, 4, 6, 10, 10, 8, 2, 12, 12, 7,
        ];
        let parts: Vec<Vec<u8>> = periods
            .iter()
            .enumerate()
            .map(|(k, &p)| {
                let mut x = k as u32 * 7919 + 1;
                (0..30_000)
                    .map(|i| {
                        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                        // A little noise, so matches end and start again.
                        let noise = (x >> 16).is_multiple_of(97);
                        (12 * k + (i % p) + noise as usize) as u8
                    })
                    .collect()
            })
            .collect();
        let mut differ_anywhere = 0;
        for level in [1, 3, 6, 12, 19] {
            let mut cctx = zstd_safe::CCtx::create();
            cctx.set_parameter(CParameter::CompressionLevel(level))
                .unwrap();
            cctx.set_parameter(CParameter::ContentSizeFlag(false))
                .unwrap();
            cctx.set_parameter(CParameter::ChecksumFlag(false)).unwrap();
            cctx.set_parameter(CParameter::DictIdFlag(false)).unwrap();
            let mut out = vec![0u8; 2 << 20];
            let mut output = OutBuffer::around(&mut out[..]);
            let mut splits = Vec::new();
            for (k, part) in parts.iter().enumerate() {
                let end = if k + 1 == parts.len() {
                    ZSTD_e_end
                } else {
                    ZSTD_e_flush
                };
                splits.push(output.pos());
                let mut input = InBuffer::around(part);
                while cctx.compress_stream2(&mut output, &mut input, end).unwrap() != 0 {}
            }
            let n = output.pos();
            let frame = &out[..n];
            let (mut proven, mut differ) = (0, 0);
            for (k, &split) in splits.iter().enumerate().skip(1) {
                let mut alone = frame[..6].to_vec();
                alone.extend_from_slice(&frame[split..splits.get(k + 1).copied().unwrap_or(n)]);
                // Not the frame's last part: its last block marked last.
                if k + 1 < splits.len() {
                    let last = *block_starts(&alone).last().unwrap();
                    alone[last] |= 1;
                }
                let decoded = decode(&alone, 1 << 20);
                let same = decoded.as_deref() == Some(&parts[k][..]);
                if decoded.is_some() && !same {
                    differ += 1;
                }
                let blocks = &frame[split..splits.get(k + 1).copied().unwrap_or(n)];
                if independent(blocks) {
                    assert!(same || decoded.is_none(), "level {level}, part {k}");
                    proven += decoded.is_some() as usize;
                }
            }
            assert!(proven > 0, "level {level}: {proven} {differ}");
            differ_anywhere += differ;
        }
        // Some parts do decode to other bytes alone (the hazard is real
        // at the fast levels), and every one of them was refused above.
        assert!(differ_anywhere > 0);
    }
}
