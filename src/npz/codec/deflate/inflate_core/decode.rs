//! The deflate decoder: blocks decoded into a buffer whose first part is
//! the window, from any block boundary.
//!
//! It is generic over the output symbol: `u8` when the 32 KiB before the
//! start are known (or there are none), `u16` when they are not: then the
//! buffer starts with 32 768 markers, `0x8000 + i` standing for byte `i`
//! of the unknown window, and back-references copy markers like any other
//! symbol, to be replaced once the window is known (`pinflate/resolve.rs`).
//!
//! The decoder stops at every block boundary (so that its caller can stop
//! at a chosen one), when the output reaches a soft limit (between
//! symbols), and after the last block. It never writes past the buffer: a
//! stream that would is an error ([`Bad::TooLong`]), as is one that needs
//! bits past the end of the input ([`Bad::Truncated`]). When the input is
//! only the part of the stream read so far (`stream.rs`), it also stops,
//! between symbols, at a byte of it its caller names
//! ([`Inflater::stop_input_at`]), and is paused and resumed on the next
//! part from the same bit ([`Inflater::pause`], [`Inflater::resume`]).

use super::bits::Bits;
use super::block::{Header, Tables};
use super::huffman::{
    bits, code_bits, extra_value, value, BAD, DIST_BITS, EOB, LIT, LITLEN_BITS, SUB,
};
use super::Bad;

/// An output symbol: a byte, or a byte or a window marker.
pub(crate) trait Sym: Copy + Send + Sync + 'static {
    /// The symbol of literal byte `b`.
    fn lit(b: u32) -> Self;
}

impl Sym for u8 {
    #[inline(always)]
    fn lit(b: u32) -> u8 {
        b as u8
    }
}

impl Sym for u16 {
    #[inline(always)]
    fn lit(b: u32) -> u16 {
        b as u16
    }
}

/// No output at all: for a walk over the blocks that needs only where
/// they are (`walk.rs`). A slice of `()` of any length takes no memory,
/// and writing to it costs nothing; distances are still checked against
/// the output's length.
impl Sym for () {
    #[inline(always)]
    fn lit(_: u32) {}
}

/// Where the decoder is in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At a block boundary: the next header is unread.
    Boundary,
    /// Inside a Huffman block.
    Huffman,
    /// Inside a stored block, with this many bytes left to copy.
    Stored(u32),
    /// After the last block.
    Done,
}

/// Why [`Inflater::run`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// A block ended; the next header is unread ([`Inflater::begin_block`]
    /// reads it).
    Boundary,
    /// The last block ended.
    End,
    /// The output reached the soft limit (between symbols).
    Full,
}

/// A deflate decoder positioned in a stream.
pub(crate) struct Inflater<'a> {
    /// The input, at the next unread bit.
    pub(crate) bits: Bits<'a>,
    /// The current block's codes.
    tables: Box<Tables>,
    /// Where in a block the decoder is.
    state: State,
    /// The current block is the stream's last.
    last: bool,
    /// While the input is only part of the stream: the byte at which the
    /// decoder stops between symbols ([`Stop::Full`] before the soft
    /// limit) and stored blocks stop at the input's end; `usize::MAX`
    /// when the input is the whole stream.
    stop_in: usize,
}

/// A decoder's state without its input: [`Inflater::pause`] and
/// [`Inflater::resume`].
pub(crate) struct Paused {
    tables: Box<Tables>,
    state: State,
    last: bool,
}

impl Paused {
    /// A decoder at a block header, with new tables.
    pub(crate) fn at_header() -> Paused {
        Paused {
            tables: Tables::new(),
            state: State::Boundary,
            last: false,
        }
    }
}

impl<'a> Inflater<'a> {
    /// A decoder at the block header at bit `bit` of `data`, with `tables`
    /// to reuse.
    pub(crate) fn at_header(data: &'a [u8], bit: u64, tables: Box<Tables>) -> Inflater<'a> {
        Inflater {
            bits: Bits::at(data, bit),
            tables,
            state: State::Boundary,
            last: false,
            stop_in: usize::MAX,
        }
    }

    /// The decoder `paused`, moved onto `data` at bit `bit` of it (the bit
    /// where it stood, in a slice that may start at another byte of the
    /// stream), with the input taken as the whole stream again.
    pub(crate) fn resume(data: &'a [u8], bit: u64, paused: Paused) -> Inflater<'a> {
        Inflater {
            bits: Bits::at(data, bit),
            tables: paused.tables,
            state: paused.state,
            last: paused.last,
            stop_in: usize::MAX,
        }
    }

    /// Its state without the input, to resume on another slice from the
    /// bit [`Bits::position`] gives now.
    pub(crate) fn pause(self) -> Paused {
        Paused {
            tables: self.tables,
            state: self.state,
            last: self.last,
        }
    }

    /// Takes the input as a part of the stream that more follows: decoding
    /// stops, between symbols, once it reaches byte `byte` (the caller
    /// keeps enough bytes after it for a symbol or a block header), and
    /// stored blocks stop at the input's end.
    pub(crate) fn stop_input_at(&mut self, byte: usize) {
        self.stop_in = byte;
    }

    /// Whether the decoder stands at a block boundary, the next header
    /// unread.
    pub(crate) fn at_boundary(&self) -> bool {
        self.state == State::Boundary
    }

    /// A decoder inside a stored block that is not the last, at its LEN
    /// field (byte `byte`): the lengths are read and checked.
    pub(crate) fn in_stored(
        data: &'a [u8],
        byte: u64,
        tables: Box<Tables>,
    ) -> Result<Inflater<'a>, (Bad, Box<Tables>)> {
        let mut inflater = Inflater::at_header(data, byte * 8, tables);
        match inflater.stored_lengths() {
            Ok(()) => Ok(inflater),
            Err(bad) => Err((bad, inflater.tables)),
        }
    }

    /// Gives the tables back for reuse.
    pub(crate) fn into_tables(self) -> Box<Tables> {
        self.tables
    }

    /// The header at the boundary the decoder stands at.
    pub(crate) fn peek_header(&mut self) -> Header {
        debug_assert_eq!(self.state, State::Boundary);
        Header::peek(&mut self.bits)
    }

    /// Reads the header of the block at the boundary the decoder stands
    /// at.
    pub(crate) fn begin_block(&mut self) -> Result<(), Bad> {
        debug_assert_eq!(self.state, State::Boundary);
        let header = Header::peek(&mut self.bits);
        self.bits.consume(3);
        self.last = header.last;
        match header.kind {
            0 => {
                self.bits.align();
                self.stored_lengths()?;
            }
            1 => {
                self.tables.set_fixed();
                self.state = State::Huffman;
            }
            2 => {
                self.tables.read_dynamic(&mut self.bits)?;
                self.state = State::Huffman;
            }
            _ => return Err(Bad::Corrupt("invalid block type")),
        }
        if self.bits.overran() {
            return Err(Bad::Truncated);
        }
        Ok(())
    }

    /// Reads a stored block's LEN and NLEN (the reader at a byte
    /// boundary) and enters it.
    fn stored_lengths(&mut self) -> Result<(), Bad> {
        let len = self.bits.take(16);
        let nlen = self.bits.take(16);
        if len ^ nlen != 0xFFFF {
            return Err(Bad::Corrupt("stored block lengths do not match"));
        }
        if self.bits.overran() {
            return Err(Bad::Truncated);
        }
        self.state = State::Stored(len);
        Ok(())
    }

    /// Ends the current block.
    fn end_block(&mut self) -> Stop {
        if self.last {
            self.state = State::Done;
            Stop::End
        } else {
            self.state = State::Boundary;
            Stop::Boundary
        }
    }

    /// Decodes into `out` from `*pos` (everything before is the window)
    /// until the current block ends or `*pos` reaches `soft` (between
    /// symbols; `usize::MAX` for no such stop). A symbol that does not fit
    /// in `out` is an error ([`Bad::TooLong`]).
    pub(crate) fn run<T: Sym>(
        &mut self,
        out: &mut [T],
        pos: &mut usize,
        soft: usize,
    ) -> Result<Stop, Bad> {
        match self.state {
            State::Boundary => Ok(Stop::Boundary),
            State::Done => Ok(Stop::End),
            State::Stored(left) => self.stored(out, pos, soft, left),
            State::Huffman => self.huffman(out, pos, soft),
        }
    }

    /// Copies a stored block's bytes.
    fn stored<T: Sym>(
        &mut self,
        out: &mut [T],
        pos: &mut usize,
        soft: usize,
        left: u32,
    ) -> Result<Stop, Bad> {
        let room = soft.min(out.len()).saturating_sub(*pos);
        let mut n = (left as usize).min(room);
        if n == 0 && left > 0 {
            if *pos >= out.len() {
                return Err(Bad::TooLong);
            }
            return Ok(Stop::Full);
        }
        let at = (self.bits.position() / 8) as usize;
        if self.stop_in != usize::MAX {
            // Part of the stream: what has been read of the block. An
            // empty block (a sync flush) ends here all the same: stopping
            // for input it does not need would stop at it forever.
            n = n.min(self.bits.data.len().saturating_sub(at));
            if n == 0 && left > 0 {
                return Ok(Stop::Full);
            }
        }
        let input = self.bits.data.get(at..at + n).ok_or(Bad::Truncated)?;
        for (o, &b) in out[*pos..*pos + n].iter_mut().zip(input) {
            *o = T::lit(b as u32);
        }
        *pos += n;
        self.bits.seek((at + n) as u64 * 8);
        let left = left - n as u32;
        if left > 0 {
            self.state = State::Stored(left);
            return Ok(Stop::Full);
        }
        Ok(self.end_block())
    }

    /// Decodes a Huffman block's symbols: the hot loop. The reader's state
    /// lives in locals (registers) and is written back on every exit.
    ///
    /// Two loops: a fast one while at least 16 input bytes and room for a
    /// longest match (plus the 16 symbols a match copy may write past its
    /// end) remain, with one refill per symbol or run of up to three
    /// literals; and a careful one, one symbol at a time, near the ends.
    fn huffman<T: Sym>(
        &mut self,
        out: &mut [T],
        pos: &mut usize,
        soft: usize,
    ) -> Result<Stop, Bad> {
        let data = self.bits.data;
        let litlen = &self.tables.litlen;
        let dists = &self.tables.dist;
        let mut buf = self.bits.buf;
        let mut count = self.bits.count;
        let mut next = self.bits.next;
        let mut p = *pos;
        let fast_out = soft.min(out.len().saturating_sub(FAST_ROOM));
        let fast_in = data.len().saturating_sub(16).min(self.stop_in);
        let stop_bits = self.stop_in.saturating_mul(8);
        const ROOT: u64 = (1 << LITLEN_BITS) - 1;
        // Loads 8 bytes (there are, in the fast loop): at least 56 bits.
        macro_rules! refill_fast {
            () => {{
                let word = u64::from_le_bytes(data[next..next + 8].try_into().expect("8 bytes"));
                buf |= word << count;
                next += ((63 - count) >> 3) as usize;
                count |= 56;
            }};
        }
        macro_rules! consume {
            ($n:expr) => {{
                let n = $n;
                buf >>= n;
                count -= n;
            }};
        }
        // Consumes an entry's bits: the shift takes the entry itself (the
        // shift count is masked to its low 6 bits, which are the bits to
        // consume: bit 5 is always clear), one operation fewer between
        // one table lookup and the next.
        macro_rules! consume_entry {
            ($e:expr) => {{
                let e: u32 = $e;
                buf = buf.wrapping_shr(e);
                count -= bits(e);
            }};
        }
        let result = 'decode: loop {
            while p < fast_out && next <= fast_in {
                refill_fast!();
                let mut e = litlen[(buf & ROOT) as usize];
                if e & LIT != 0 {
                    // A literal's root entry is at most 11 bits: three fit
                    // in the 56 bits, and three fit in the room.
                    consume_entry!(e);
                    out[p] = T::lit(value(e));
                    p += 1;
                    e = litlen[(buf & ROOT) as usize];
                    if e & LIT != 0 {
                        consume_entry!(e);
                        out[p] = T::lit(value(e));
                        p += 1;
                        e = litlen[(buf & ROOT) as usize];
                        if e & LIT != 0 {
                            consume_entry!(e);
                            out[p] = T::lit(value(e));
                            p += 1;
                            continue;
                        }
                    }
                    // `e` stays valid: a refill only adds bits above.
                    refill_fast!();
                }
                if e & SUB != 0 {
                    consume!(LITLEN_BITS);
                    e = litlen[value(e) as usize + (buf & ((1 << code_bits(e)) - 1)) as usize];
                }
                let saved = buf;
                consume_entry!(e);
                if e & LIT != 0 {
                    out[p] = T::lit(value(e));
                    p += 1;
                    continue;
                }
                if e & (EOB | BAD) != 0 {
                    if e & BAD != 0 {
                        break 'decode Err(Bad::Corrupt("invalid literal/length code"));
                    }
                    break 'decode Ok(self.end_block());
                }
                let len = value(e) as usize + extra_value(e, saved) as usize;
                let mut d = dists[(buf & ((1 << DIST_BITS) - 1)) as usize];
                if d & SUB != 0 {
                    consume!(DIST_BITS);
                    d = dists[value(d) as usize + (buf & ((1 << code_bits(d)) - 1)) as usize];
                }
                let saved = buf;
                consume_entry!(d);
                if d & BAD != 0 {
                    break 'decode Err(Bad::Corrupt("invalid distance code"));
                }
                let dist = value(d) as usize + extra_value(d, saved) as usize;
                if dist > p {
                    break 'decode Err(Bad::Corrupt("distance too far back"));
                }
                copy_match_fast(out, p, dist, len);
                p += len;
            }
            // Near an end: one symbol, every check.
            if p >= soft || next * 8 - count as usize >= stop_bits {
                break Ok(Stop::Full);
            }
            if next + 8 <= data.len() {
                refill_fast!();
            } else {
                while count <= 56 {
                    buf |= (data.get(next).copied().unwrap_or(0) as u64) << count;
                    next += 1;
                    count += 8;
                }
                // More than 8 zero bytes loaded past the end means some
                // were consumed: the stream is cut short.
                if next > data.len() + 8 {
                    break Err(Bad::Truncated);
                }
            }
            let mut e = litlen[(buf & ROOT) as usize];
            if e & SUB != 0 {
                consume!(LITLEN_BITS);
                e = litlen[value(e) as usize + (buf & ((1 << code_bits(e)) - 1)) as usize];
            }
            let saved = buf;
            consume_entry!(e);
            if e & LIT != 0 {
                match out.get_mut(p) {
                    Some(o) => *o = T::lit(value(e)),
                    None => break Err(Bad::TooLong),
                }
                p += 1;
                continue;
            }
            if e & (EOB | BAD) != 0 {
                if e & BAD != 0 {
                    break Err(Bad::Corrupt("invalid literal/length code"));
                }
                break Ok(self.end_block());
            }
            let len = value(e) as usize + extra_value(e, saved) as usize;
            let mut d = dists[(buf & ((1 << DIST_BITS) - 1)) as usize];
            if d & SUB != 0 {
                consume!(DIST_BITS);
                d = dists[value(d) as usize + (buf & ((1 << code_bits(d)) - 1)) as usize];
            }
            let saved = buf;
            consume_entry!(d);
            if d & BAD != 0 {
                break Err(Bad::Corrupt("invalid distance code"));
            }
            let dist = value(d) as usize + extra_value(d, saved) as usize;
            if dist > p {
                break Err(Bad::Corrupt("distance too far back"));
            }
            if p + len > out.len() {
                break Err(Bad::TooLong);
            }
            copy_match(out, p, dist, len);
            p += len;
        };
        self.bits.buf = buf;
        self.bits.count = count;
        self.bits.next = next;
        *pos = p;
        if result.is_ok() && self.bits.overran() {
            return Err(Bad::Truncated);
        }
        result
    }
}

/// Room the fast loop needs after the write position: a longest match,
/// plus what [`copy_match_fast`] may write past its end.
const FAST_ROOM: usize = 258 + 16;

/// [`copy_match`] where `FAST_ROOM` symbols of room remain: 8 symbols at a
/// time when the source is at least 8 back (each group is read before it
/// is overwritten, and earlier groups repeat as LZ77 means), writing up
/// to 7 symbols past the match, which later output overwrites.
#[inline(always)]
fn copy_match_fast<T: Sym>(out: &mut [T], at: usize, dist: usize, len: usize) {
    if dist >= 8 {
        let mut from = at - dist;
        let mut to = at;
        let end = at + len;
        while to < end {
            let group: [T; 8] = out[from..from + 8].try_into().expect("8 symbols");
            out[to..to + 8].copy_from_slice(&group);
            from += 8;
            to += 8;
        }
    } else {
        for i in 0..len {
            out[at + i] = out[at - dist + i];
        }
    }
}

/// Copies `len` symbols from `dist` back to `at`, as LZ77 means it: a
/// source that overlaps the destination repeats.
#[inline(always)]
fn copy_match<T: Sym>(out: &mut [T], at: usize, dist: usize, len: usize) {
    let from = at - dist;
    if dist >= len {
        out.copy_within(from..from + len, at);
    } else {
        for i in 0..len {
            out[at + i] = out[from + i];
        }
    }
}
