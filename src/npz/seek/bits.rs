//! Reading a deflate stream bit by bit, least significant bit first
//! (RFC 1951, 3.1.1), from a `Read` in chunks, with the exact bit
//! position always known (the seek index records it).

use super::huffman::{Entry, Table, ROOT};
use super::inflate::corrupt;
use std::io::{self, Read};

/// Compressed bytes read per chunk.
const CHUNK: usize = 256 << 10;

/// Bits of the stream, least significant first, read from `input` in
/// chunks.
pub(super) struct Bits<R> {
    pub(super) input: R,
    pub(super) buf: Vec<u8>,
    /// The next byte of `buf` to load.
    pub(super) next: usize,
    /// Bits loaded, the next one lowest, and how many.
    pub(super) hold: u64,
    pub(super) count: u32,
    /// Position in the stream (bits) of `buf[0]`.
    pub(super) base: u64,
    /// Zero bytes loaded past the end of the input.
    pub(super) past_end: u32,
    /// The input has ended.
    pub(super) ended: bool,
}

impl<R: Read> Bits<R> {
    /// Reads from `input`, which stands at byte `byte` of the stream; the
    /// first `skip` bits (0..8) are dropped.
    pub(super) fn new(input: R, byte: u64, skip: u32) -> io::Result<Bits<R>> {
        let mut bits = Bits {
            input,
            buf: Vec::new(),
            next: 0,
            hold: 0,
            count: 0,
            base: byte * 8,
            past_end: 0,
            ended: false,
        };
        bits.need(skip)?;
        bits.drop_bits(skip);
        Ok(bits)
    }

    /// The position of the next bit not consumed.
    pub(super) fn position(&self) -> u64 {
        self.base + (self.next as u64 + self.past_end as u64) * 8 - self.count as u64
    }

    /// Reads the next chunk, keeping the bytes not loaded yet.
    pub(super) fn more(&mut self) -> io::Result<()> {
        self.buf.drain(..self.next);
        self.base += self.next as u64 * 8;
        self.next = 0;
        let have = self.buf.len();
        self.buf.resize(have + CHUNK, 0);
        let n = loop {
            match self.input.read(&mut self.buf[have..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        let n = crate::io::checked::checked_read_count(n, CHUNK)?;
        self.buf.truncate(have + n);
        self.ended = n == 0;
        Ok(())
    }

    /// Makes at least `n` (at most 56) bits available; past the input's
    /// end, zero bits (an error only if consumed: [`Bits::overran`]).
    ///
    /// Eight bytes are loaded at once where there are: the bits above
    /// `count` are then the stream's next bits, which later loads OR in
    /// again at the same places (so the extra bits are harmless).
    #[inline]
    pub(super) fn need(&mut self, n: u32) -> io::Result<()> {
        if self.count >= n {
            return Ok(());
        }
        if let Some(word) = self.buf.get(self.next..self.next + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            self.hold |= word << self.count;
            let bytes = (63 - self.count) / 8;
            self.next += bytes as usize;
            self.count += bytes * 8;
            return Ok(());
        }
        while self.count < n {
            if self.next >= self.buf.len() && !self.ended {
                self.more()?;
                continue;
            }
            let byte = match self.buf.get(self.next) {
                Some(&b) => {
                    self.next += 1;
                    b
                }
                None => {
                    self.past_end += 1;
                    0
                }
            };
            self.hold |= (byte as u64) << self.count;
            self.count += 8;
        }
        Ok(())
    }

    #[inline]
    pub(super) fn peek(&self, n: u32) -> u32 {
        (self.hold & ((1u64 << n) - 1)) as u32
    }

    #[inline]
    pub(super) fn drop_bits(&mut self, n: u32) {
        self.hold >>= n;
        self.count -= n;
    }

    /// The next `n` bits (at most 32), the caller having made them
    /// available.
    #[inline(always)]
    pub(super) fn take_held(&mut self, n: u32) -> u32 {
        debug_assert!(self.count >= n);
        let v = self.peek(n);
        self.drop_bits(n);
        v
    }

    pub(super) fn take(&mut self, n: u32) -> io::Result<u32> {
        self.need(n)?;
        let v = self.peek(n);
        self.drop_bits(n);
        Ok(v)
    }

    /// Whether bits past the input's end were consumed.
    pub(super) fn overran(&self) -> bool {
        self.past_end as u64 * 8 > self.count as u64
    }

    /// Drops the bits up to the next byte boundary.
    pub(super) fn align(&mut self) {
        let n = self.count % 8;
        self.drop_bits(n);
    }

    /// One symbol of `table`.
    #[inline]
    pub(super) fn decode(&mut self, table: &Table) -> io::Result<u16> {
        self.need(15)?;
        self.lookup(table)
    }

    /// One symbol of `table`, the caller having made 15 bits available.
    #[inline(always)]
    pub(super) fn lookup(&mut self, table: &Table) -> io::Result<u16> {
        debug_assert!(self.count >= 15);
        let mut e: Entry = table.entries[self.peek(ROOT) as usize];
        if e.sub {
            let sub =
                table.entries[e.value as usize + (self.peek(ROOT + e.len as u32) >> ROOT) as usize];
            self.drop_bits(ROOT);
            e = sub;
        }
        if e.len == 0 {
            return Err(corrupt("invalid Huffman code"));
        }
        self.drop_bits(e.len as u32);
        Ok(e.value)
    }
}
