//! Reading a deflate stream bit by bit, least significant bit first
//! (RFC 1951, 3.1.1), from any bit offset, with the exact bit position
//! always known: the parallel decoder compares block boundaries found by
//! different threads bit for bit.
//!
//! The buffer holds up to 64 bits; a refill loads 8 bytes at once while at
//! least 8 remain and byte by byte near the end, where bytes past the end
//! read as zeros. Reading past the end is never an error here (the decoder
//! reads ahead of what it consumes); the decoder checks [`Bits::overran`]
//! wherever it stops.

/// A bit reader over a compressed stream, or a window of one.
#[derive(Clone)]
pub(crate) struct Bits<'a> {
    /// The stream.
    pub(crate) data: &'a [u8],
    /// The next byte to load into `buf` (may pass `data.len()` by the zero
    /// bytes loaded past the end).
    pub(crate) next: usize,
    /// Loaded bits, the next one lowest.
    pub(crate) buf: u64,
    /// How many bits of `buf` are loaded (the bits above are zero or
    /// copies of bytes not yet counted as loaded).
    pub(crate) count: u32,
}

impl<'a> Bits<'a> {
    /// A reader at bit `bit` of `data` (which may lie past its end: then
    /// everything reads as zeros and [`Bits::overran`] says so).
    pub(crate) fn at(data: &'a [u8], bit: u64) -> Bits<'a> {
        let byte = usize::try_from(bit / 8).unwrap_or(usize::MAX);
        let mut bits = Bits {
            data,
            next: byte,
            buf: 0,
            count: 0,
        };
        bits.refill();
        bits.consume((bit % 8) as u32);
        bits
    }

    /// The position of the next bit to be consumed, in bits from the
    /// stream's start.
    #[inline]
    pub(crate) fn position(&self) -> u64 {
        self.next as u64 * 8 - self.count as u64
    }

    /// Whether bits past the stream's end have been consumed: the stream
    /// is cut short.
    #[inline]
    pub(crate) fn overran(&self) -> bool {
        self.position() > self.data.len() as u64 * 8
    }

    /// Loads bytes until at least 56 bits are held.
    #[inline]
    pub(crate) fn refill(&mut self) {
        if let Some(word) = self.data.get(self.next..self.next.wrapping_add(8)) {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            self.buf |= word << self.count;
            self.next += ((63 - self.count) >> 3) as usize;
            self.count |= 56;
        } else {
            self.refill_slow();
        }
    }

    /// [`Bits::refill`] near the end: one byte at a time, zeros past it.
    #[cold]
    fn refill_slow(&mut self) {
        while self.count <= 56 {
            let byte = self.data.get(self.next).copied().unwrap_or(0);
            self.buf |= (byte as u64) << self.count;
            self.next = self.next.saturating_add(1);
            self.count += 8;
        }
    }

    /// The next `n` bits (at most 32, and no more than are held), not
    /// consumed.
    #[inline]
    pub(crate) fn peek(&self, n: u32) -> u32 {
        (self.buf & ((1u64 << n) - 1)) as u32
    }

    /// Drops `n` bits (no more than are held).
    #[inline]
    pub(crate) fn consume(&mut self, n: u32) {
        debug_assert!(n <= self.count);
        self.buf >>= n;
        self.count -= n;
    }

    /// Reads `n` bits (at most 32), refilling first when needed.
    #[inline]
    pub(crate) fn take(&mut self, n: u32) -> u32 {
        if self.count < n {
            self.refill();
        }
        let v = self.peek(n);
        self.consume(n);
        v
    }

    /// Skips to the next byte boundary (the padding before a stored
    /// block's lengths).
    pub(crate) fn align(&mut self) {
        let n = self.count % 8;
        self.consume(n);
    }

    /// Moves to bit `bit`, dropping what was loaded.
    pub(crate) fn seek(&mut self, bit: u64) {
        *self = Bits::at(self.data, bit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_exact_at_every_offset_and_past_the_end() {
        let data: Vec<u8> = (0..40u32).map(|i| (i * 37 + 11) as u8).collect();
        // Bit i of the stream, as deflate numbers them.
        let bit = |i: u64| -> u32 {
            data.get((i / 8) as usize)
                .map_or(0, |b| ((b >> (i % 8)) & 1) as u32)
        };
        for start in 0..(data.len() as u64 * 8 + 20) {
            let mut bits = Bits::at(&data, start);
            let mut at = start;
            for n in [1u32, 3, 7, 13, 5, 16, 2, 32, 9] {
                assert_eq!(bits.position(), at);
                let want = (0..n as u64).fold(0u32, |v, k| v | (bit(at + k) << k));
                assert_eq!(bits.take(n), want, "start {start}, at {at}, n {n}");
                at += n as u64;
            }
            assert_eq!(bits.overran(), at > data.len() as u64 * 8);
            bits.align();
            assert_eq!(bits.position(), at.div_ceil(8) * 8);
        }
    }
}
