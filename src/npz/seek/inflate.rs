//! A deflate decoder (RFC 1951) that can start at any block boundary with
//! the 32 KiB before it given, and says where the boundaries are: what a
//! seek index needs, and what neither libdeflate (whole streams only) nor
//! flate2 (no bit positions, no preset window for raw streams resumed
//! mid-stream) offers.
//!
//! The compressed bytes come from a `Read` (the archive, positioned at the
//! byte holding the first bit), in chunks; the output goes to a buffer
//! whose first part is the window, which the caller drains. Bit positions
//! are counted from the member's first byte. Hostile input gives errors:
//! every table, length and distance is checked, and the output never
//! grows past the buffer's high-water mark by more than one match.

use super::bits::Bits;
use super::huffman::{Table, ROOT};
use std::io::{self, Read};

/// How far back a distance reaches.
pub(super) const WINDOW: usize = 32 << 10;

const LEN_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];
/// The order of the code length code lengths in a dynamic header.
const CL_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// What went wrong (mapped by the caller to the member's error).
pub(super) fn corrupt(why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("corrupt deflate data ({why})"),
    )
}

/// Where the decoder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before a block header.
    Boundary,
    /// Inside a Huffman block.
    Huffman,
    /// Inside a stored block, with this many bytes to copy.
    Stored(u32),
    /// After the last block.
    Done,
}

/// Why [`Inflater::run`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// At a block boundary: [`Inflater::position`] is where its header
    /// starts.
    Boundary,
    /// The output buffer reached the mark asked for.
    Full,
    /// After the last block.
    End,
}

/// A deflate decoder.
pub(super) struct Inflater<R> {
    bits: Bits<R>,
    state: State,
    last: bool,
    litlen: Table,
    dist: Table,
    /// The window (up to 32 KiB of earlier output), then the output not
    /// drained yet.
    pub(super) out: Vec<u8>,
    /// Output position (bytes from the member's start) of `out[0]`.
    pub(super) out_base: u64,
}

impl<R: Read> Inflater<R> {
    /// A decoder at the block header at bit `bit` of the stream, reading
    /// from `input` (standing at byte `bit / 8`), after the output `window`
    /// (the up to 32 KiB before output position `out`).
    pub(super) fn at(input: R, bit: u64, window: &[u8], out: u64) -> io::Result<Inflater<R>> {
        let mut buf = Vec::with_capacity(WINDOW + (4 << 20));
        buf.extend_from_slice(window);
        Ok(Inflater {
            bits: Bits::new(input, bit / 8, (bit % 8) as u32)?,
            state: State::Boundary,
            last: false,
            litlen: Table {
                entries: Vec::new(),
            },
            dist: Table {
                entries: Vec::new(),
            },
            out: buf,
            out_base: out - window.len() as u64,
        })
    }

    /// The position of the next bit, from the stream's start.
    pub(super) fn position(&self) -> u64 {
        self.bits.position()
    }

    /// The output position after the bytes decoded so far.
    pub(super) fn total_out(&self) -> u64 {
        self.out_base + self.out.len() as u64
    }

    /// Drops the drained output but the last 32 KiB (the window).
    pub(super) fn slide(&mut self) {
        let keep = self.out.len().min(WINDOW);
        let cut = self.out.len() - keep;
        self.out.drain(..cut);
        self.out_base += cut as u64;
    }

    /// Decodes until a block boundary, the end, or `out.len()` reaching
    /// `mark` (between symbols; a match may pass it by up to 258 bytes).
    pub(super) fn run(&mut self, mark: usize) -> io::Result<Stop> {
        loop {
            match self.state {
                State::Done => return Ok(Stop::End),
                State::Boundary => {
                    self.begin_block()?;
                    continue;
                }
                State::Stored(left) => {
                    if self.out.len() >= mark {
                        return Ok(Stop::Full);
                    }
                    self.stored(left, mark)?;
                }
                State::Huffman => {
                    if self.out.len() >= mark {
                        return Ok(Stop::Full);
                    }
                    self.huffman(mark)?;
                }
            }
            if self.state == State::Boundary {
                return Ok(Stop::Boundary);
            }
            if self.state == State::Done {
                return Ok(Stop::End);
            }
        }
    }

    fn end_block(&mut self) {
        self.state = if self.last {
            State::Done
        } else {
            State::Boundary
        };
    }

    fn begin_block(&mut self) -> io::Result<()> {
        let header = self.bits.take(3)?;
        self.last = header & 1 == 1;
        match header >> 1 {
            0 => {
                self.bits.align();
                let len = self.bits.take(16)?;
                let nlen = self.bits.take(16)?;
                if len ^ nlen != 0xFFFF {
                    return Err(corrupt("stored block lengths do not match"));
                }
                self.state = State::Stored(len);
                if len == 0 {
                    self.end_block();
                }
            }
            1 => {
                let mut lengths = [0u8; 288 + 32];
                lengths[..144].fill(8);
                lengths[144..256].fill(9);
                lengths[256..280].fill(7);
                lengths[280..288].fill(8);
                lengths[288..].fill(5);
                self.tables(&lengths[..288], &lengths[288..])?;
                self.state = State::Huffman;
            }
            2 => {
                self.dynamic()?;
                self.state = State::Huffman;
            }
            _ => return Err(corrupt("invalid block type")),
        }
        if self.bits.overran() {
            return Err(corrupt("the stream ends early"));
        }
        Ok(())
    }

    fn tables(&mut self, litlen: &[u8], dist: &[u8]) -> io::Result<()> {
        self.litlen = Table::build(litlen).map_err(|_| corrupt("bad literal/length code"))?;
        self.dist = Table::build(dist).map_err(|_| corrupt("bad distance code"))?;
        Ok(())
    }

    /// Reads a dynamic block's code lengths and builds its tables.
    fn dynamic(&mut self) -> io::Result<()> {
        let hlit = self.bits.take(5)? as usize + 257;
        let hdist = self.bits.take(5)? as usize + 1;
        let hclen = self.bits.take(4)? as usize + 4;
        if hlit > 286 || hdist > 30 {
            return Err(corrupt("too many codes"));
        }
        let mut cl = [0u8; 19];
        for &at in &CL_ORDER[..hclen] {
            cl[at] = self.bits.take(3)? as u8;
        }
        let cl = Table::build(&cl).map_err(|_| corrupt("bad code length code"))?;
        let mut lengths = [0u8; 286 + 30];
        let mut i = 0;
        while i < hlit + hdist {
            let sym = self.bits.decode(&cl)?;
            let (value, repeat) = match sym {
                0..=15 => (sym as u8, 1),
                16 => {
                    let prev = *lengths[..i]
                        .last()
                        .ok_or_else(|| corrupt("repeat with no length before"))?;
                    (prev, 3 + self.bits.take(2)? as usize)
                }
                17 => (0, 3 + self.bits.take(3)? as usize),
                _ => (0, 11 + self.bits.take(7)? as usize),
            };
            if i + repeat > hlit + hdist {
                return Err(corrupt("code lengths overflow"));
            }
            lengths[i..i + repeat].fill(value);
            i += repeat;
        }
        if lengths[256] == 0 {
            return Err(corrupt("no end-of-block code"));
        }
        let (lit, dist) = lengths[..hlit + hdist].split_at(hlit);
        self.tables(lit, dist)
    }

    /// Copies stored bytes, up to the mark.
    fn stored(&mut self, left: u32, mark: usize) -> io::Result<()> {
        let n = (left as usize).min(mark.saturating_sub(self.out.len()).max(1));
        // Whole bytes held in the bit buffer go first (after `align`, the
        // count is a multiple of 8).
        let mut done = 0;
        while done < n && self.bits.count >= 8 {
            let b = self.bits.take(8)? as u8;
            self.out.push(b);
            done += 1;
        }
        if self.bits.overran() {
            return Err(corrupt("the stream ends early"));
        }
        if done < n {
            // The rest is copied from the input directly: the bits held
            // beyond the count are bytes about to be copied.
            self.bits.hold = 0;
        }
        while done < n {
            if self.bits.next >= self.bits.buf.len() {
                if self.bits.ended {
                    return Err(corrupt("the stream ends early"));
                }
                self.bits.more()?;
                continue;
            }
            let from = self.bits.next;
            let take = (n - done).min(self.bits.buf.len() - from);
            self.out
                .extend_from_slice(&self.bits.buf[from..from + take]);
            self.bits.next += take;
            done += take;
        }
        let left = left - n as u32;
        self.state = State::Stored(left);
        if left == 0 {
            self.end_block();
        }
        Ok(())
    }

    /// Decodes a Huffman block's symbols up to its end or the mark.
    fn huffman(&mut self, mark: usize) -> io::Result<()> {
        let Inflater {
            bits,
            litlen,
            dist,
            out,
            ..
        } = self;
        // Pushes never reallocate: at most a match past the mark.
        out.reserve((mark + 258).saturating_sub(out.len()));
        let mut ended = false;
        while out.len() < mark {
            // A symbol's bits at most: length code and extra bits (20),
            // distance code and extra bits (28).
            bits.need(48)?;
            let sym = bits.lookup(litlen)?;
            if sym < 256 {
                out.push(sym as u8);
                // More literals from the bits held, while their codes fit
                // the root table (no refill, no second level).
                while bits.count >= 15 && out.len() < mark {
                    let e = litlen.entries[bits.peek(ROOT) as usize];
                    if e.sub || e.len == 0 || e.value >= 256 {
                        break;
                    }
                    bits.drop_bits(e.len as u32);
                    out.push(e.value as u8);
                }
                continue;
            }
            if sym == 256 {
                ended = true;
                break;
            }
            let k = sym as usize - 257;
            if k >= 29 {
                return Err(corrupt("invalid length code"));
            }
            let len = LEN_BASE[k] as usize + bits.take_held(LEN_EXTRA[k] as u32) as usize;
            let d = bits.lookup(dist)? as usize;
            if d >= 30 {
                return Err(corrupt("invalid distance code"));
            }
            let dist = DIST_BASE[d] as usize + bits.take_held(DIST_EXTRA[d] as u32) as usize;
            let have = out.len();
            if dist > have {
                return Err(corrupt("distance too far back"));
            }
            let from = have - dist;
            if dist >= len {
                out.extend_from_within(from..from + len);
            } else {
                // Overlapping: the source repeats, a period of `dist`.
                let mut copied = 0;
                while copied < len {
                    let n = (len - copied).min(out.len() - from - copied);
                    let at = from + copied;
                    out.extend_from_within(at..at + n);
                    copied += n;
                }
            }
        }
        if ended {
            self.end_block();
        }
        if self.bits.overran() {
            return Err(corrupt("the stream ends early"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block boundaries met: bit and output position.
    type Marks = Vec<(u64, u64)>;

    /// Decodes all of `stream` from its start; gives the bytes and the
    /// boundaries met.
    fn decode_all(stream: &[u8]) -> io::Result<(Vec<u8>, Marks)> {
        let mut inf = Inflater::at(stream, 0, &[], 0)?;
        let (mut out, mut marks) = (Vec::new(), Vec::new());
        loop {
            let stop = inf.run(1 << 20)?;
            match stop {
                Stop::Boundary => marks.push((inf.position(), inf.total_out())),
                Stop::Full => {}
                Stop::End => {
                    let from = out.len() - inf.out_base as usize;
                    out.extend_from_slice(&inf.out[from..]);
                    return Ok((out, marks));
                }
            }
            let from = out.len() - inf.out_base as usize;
            out.extend_from_slice(&inf.out[from..]);
            inf.slide();
        }
    }

    fn data() -> Vec<u8> {
        let mut x = 12345u32;
        (0..3_000_000u32)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                if (i / 50_000) % 3 == 0 {
                    (x >> 24) as u8
                } else {
                    ((i / 7) % 23) as u8
                }
            })
            .collect()
    }

    fn zlib(data: &[u8], level: u32) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn every_level_decodes_exactly_and_resumes_at_every_boundary() {
        let data = data();
        for level in [0, 1, 6, 9] {
            let stream = zlib(&data, level);
            let (out, marks) = decode_all(&stream).unwrap();
            assert!(out == data, "level {level}");
            // zlib-rs's level 1 may write one block for everything.
            assert!(
                level == 1 || marks.len() > 3,
                "level {level}: {} boundaries",
                marks.len()
            );
            // From any boundary with its window, the rest decodes exactly.
            for &(bit, at) in marks.iter().step_by(marks.len() / 4 + 1) {
                let at = at as usize;
                let window = &data[at.saturating_sub(WINDOW)..at];
                let byte = (bit / 8) as usize;
                let mut inf = Inflater::at(&stream[byte..], bit, window, at as u64).unwrap();
                let mut got = Vec::new();
                loop {
                    let stop = inf.run(1 << 20).unwrap();
                    let from = at + got.len() - inf.out_base as usize;
                    got.extend_from_slice(&inf.out[from..]);
                    if stop == Stop::End {
                        break;
                    }
                    inf.slide();
                }
                assert!(got == data[at..], "level {level}, boundary at {at}");
            }
        }
    }

    #[test]
    fn libdeflate_streams_and_fixed_blocks_decode() {
        let data = data();
        for level in [1, 6, 12] {
            let mut c =
                libdeflater::Compressor::new(libdeflater::CompressionLvl::new(level).unwrap());
            let mut stream = vec![0u8; c.deflate_compress_bound(data.len())];
            let n = c.deflate_compress(&data, &mut stream).unwrap();
            stream.truncate(n);
            assert!(decode_all(&stream).unwrap().0 == data, "libdeflate {level}");
        }
        // A short input deflates to one fixed block.
        let small = b"abcabcabcabcabcabc hello hello hello";
        assert_eq!(decode_all(&zlib(small, 6)).unwrap().0, small);
        assert!(decode_all(&zlib(b"", 6)).unwrap().0.is_empty());
    }

    #[test]
    fn broken_streams_are_errors_never_panics() {
        let data = data();
        let stream = zlib(&data[..400_000], 6);
        assert!(decode_all(&stream[..stream.len() / 2]).is_err());
        let mut x = 7u64;
        for _ in 0..300 {
            let mut bad = stream.clone();
            for _ in 0..4 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let at = (x >> 33) as usize % bad.len();
                bad[at] ^= 1 << ((x >> 29) & 7);
            }
            // Either an error or some output: never a panic or a hang.
            let _ = decode_all(&bad);
        }
        for len in 0..64 {
            let random: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let _ = decode_all(&random);
        }
    }
}
