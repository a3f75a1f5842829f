//! Finding where deflate blocks may start in the middle of a stream,
//! without decoding what comes before (the block finder of rapidgzip and
//! pugz, written anew).
//!
//! Only blocks that are not the stream's last are looked for, of two
//! kinds, as rapidgzip does:
//! - dynamic Huffman blocks: BFINAL 0, BTYPE 2, at most 286 literal/length
//!   and 30 distance codes (a 13-bit table rejects about 89 % of bit
//!   positions), a complete code-length code (checked on registers), then
//!   the whole header read and checked as the decoder checks it: code
//!   lengths that decode, codes neither over-subscribed nor incomplete,
//!   an end-of-block code;
//! - stored blocks, found by their byte-aligned LEN and NLEN = !LEN, with
//!   the three bits before them zero (BFINAL 0, BTYPE 0 or zero padding).
//!
//! Fixed Huffman blocks are not looked for: three bits say too little.
//! A candidate is only a candidate: the chunk decoder (`chunk.rs`) decodes
//! from it, and the resolver (`resolve.rs`) accepts a chunk only where the
//! decoding before it really ends.

use super::super::inflate_core::{precode_complete, Bits, Tables};
use super::key::Key;

/// For each 13-bit value: whether it can begin a dynamic block header
/// that is not the last (BFINAL 0, BTYPE 2, HLIT at most 29, HDIST at
/// most 29).
static DYNAMIC_START: [bool; 1 << 13] = dynamic_starts();

/// Computes [`DYNAMIC_START`].
const fn dynamic_starts() -> [bool; 1 << 13] {
    let mut table = [false; 1 << 13];
    let mut v = 0;
    while v < 1 << 13 {
        table[v] = v & 7 == 0b100 && (v >> 3) & 31 <= 29 && (v >> 8) & 31 <= 29;
        v += 1;
    }
    table
}

/// The 64 bits of `data` from bit `bit` on (zeros past the end).
#[inline]
fn bits_at(data: &[u8], bit: u64) -> u64 {
    let byte = (bit / 8) as usize;
    let mut word = [0u8; 8];
    if let Some(src) = data.get(byte..byte + 8) {
        word.copy_from_slice(src);
    } else if let Some(src) = data.get(byte..) {
        word[..src.len()].copy_from_slice(src);
    }
    let lo = u64::from_le_bytes(word) >> (bit % 8);
    let high = data.get(byte + 8).copied().unwrap_or(0) as u64;
    if bit.is_multiple_of(8) {
        lo
    } else {
        lo | high << (64 - bit % 8)
    }
}

/// Candidate block starts in a range of a stream, in increasing order.
///
/// Both kinds are searched in step, a window of [`STEP`] bits at a time,
/// so that finding the first candidate costs in proportion to how far it
/// lies, not to the range (searched one kind after the other, a stream of
/// stored blocks had each chunk scan its whole range for dynamic headers
/// first: 30x the sequential time). The search charges its work to a
/// budget shared with the caller's trials ([`Finder::charge`]) and ends
/// when the budget is spent.
pub(super) struct Finder<'a> {
    /// The stream.
    data: &'a [u8],
    /// The next bit to try as a dynamic header.
    dynamic: u64,
    /// The next byte to try as a stored block's LEN.
    stored: u64,
    /// Candidates end before this bit.
    end: u64,
    /// Both kinds are searched up to this bit (but for the candidates
    /// held in `next_*`).
    frontier: u64,
    /// The next dynamic candidate, once found.
    next_dynamic: Option<u64>,
    /// The next stored candidate (its LEN's byte), once found.
    next_stored: Option<u64>,
    /// Scratch tables for checking whole headers.
    tables: Box<Tables>,
    /// Work spent: by the search (a unit per bit position scanned for a
    /// dynamic header, per byte scanned for a stored one, per bit read
    /// checking a whole header) and by the caller's trials.
    spent: usize,
    /// No candidate is given once `spent` passes this.
    budget: usize,
}

/// What building a header's tables costs, in the units of `spent` (about a
/// decoded symbol each).
const TABLES_COST: usize = 512;

/// Bits searched for both kinds of block before either is given.
const STEP: u64 = 32 * 1024 * 8;

impl<'a> Finder<'a> {
    /// Candidates at bits `from..end` of `data` (a stored block's position
    /// is that of its LEN field), searched for with at most `budget`
    /// units of work (see `spent`).
    pub(super) fn new(
        data: &'a [u8],
        from: u64,
        end: u64,
        budget: usize,
        tables: Box<Tables>,
    ) -> Finder<'a> {
        let end = end.min(data.len() as u64 * 8);
        Finder {
            data,
            dynamic: from,
            stored: from.div_ceil(8),
            end,
            frontier: from,
            next_dynamic: None,
            next_stored: None,
            tables,
            spent: 0,
            budget,
        }
    }

    /// Adds work done on a candidate (its trial) to the budget's count.
    pub(super) fn charge(&mut self, units: usize) {
        self.spent = self.spent.saturating_add(units);
    }

    /// The work spent so far, search and trials.
    pub(super) fn spent(&self) -> usize {
        self.spent
    }

    /// Whether the budget is spent.
    pub(super) fn exhausted(&self) -> bool {
        self.spent > self.budget
    }

    /// Gives the scratch tables back.
    pub(super) fn into_tables(self) -> Box<Tables> {
        self.tables
    }

    /// The next candidate after those given so far; `None` at the range's
    /// end or once the budget is spent.
    pub(super) fn next_candidate(&mut self) -> Option<Key> {
        loop {
            if self.exhausted() {
                return None;
            }
            let step_end = self.frontier.saturating_add(STEP).min(self.end);
            if self.next_dynamic.is_none() {
                self.next_dynamic = self.find_dynamic(step_end);
            }
            if self.next_stored.is_none() {
                self.next_stored = self.find_stored(step_end);
            }
            // Each kind is searched up to `step_end` or holds a candidate
            // before it: the smaller candidate is the next one.
            match (self.next_dynamic, self.next_stored) {
                (Some(d), Some(s)) if s * 8 <= d => {
                    self.next_stored = None;
                    return Some(Key::Stored(s * 8));
                }
                (Some(d), _) => {
                    self.next_dynamic = None;
                    return Some(Key::Header(d));
                }
                (None, Some(s)) => {
                    self.next_stored = None;
                    return Some(Key::Stored(s * 8));
                }
                (None, None) if self.exhausted() || step_end >= self.end => return None,
                (None, None) => self.frontier = step_end,
            }
        }
    }

    /// The next position from `self.dynamic`, before `limit`, whose
    /// dynamic header (not the last block's) reads and checks.
    fn find_dynamic(&mut self, limit: u64) -> Option<u64> {
        while self.dynamic < limit && !self.exhausted() {
            let at = self.dynamic;
            // 48 positions per load: the 13 bits of each lie within the
            // 64 loaded.
            let word = bits_at(self.data, at);
            let last = 48.min(limit - at) as u32;
            self.spent += last as usize;
            let mut hits = 0u64;
            for shift in 0..last {
                hits |= (DYNAMIC_START[((word >> shift) & 0x1FFF) as usize] as u64) << shift;
            }
            while hits != 0 {
                let bit = at + hits.trailing_zeros() as u64;
                hits &= hits - 1;
                if precode_complete(bits_at(self.data, bit + 13)) && self.header_reads(bit) {
                    self.dynamic = bit + 1;
                    return Some(bit);
                }
            }
            self.dynamic = at + last as u64;
        }
        None
    }

    /// Whether the dynamic header at `bit` reads and checks as the
    /// decoder would read it.
    fn header_reads(&mut self, bit: u64) -> bool {
        let mut bits = Bits::at(self.data, bit + 3);
        let ok = self.tables.read_dynamic(&mut bits).is_ok() && !bits.overran();
        // The bits read, plus the tables a header that reads this far
        // builds (code-length, literal/length and distance tables).
        self.spent += bits.position().saturating_sub(bit + 3) as usize + TABLES_COST;
        ok
    }

    /// The next byte from `self.stored`, with its LEN field before bit
    /// `limit`, that may be a stored block's LEN field (not the last
    /// block's).
    fn find_stored(&mut self, limit: u64) -> Option<u64> {
        let data = self.data;
        let end = (limit.div_ceil(8) as usize).min(data.len().saturating_sub(3));
        let mut i = (self.stored as usize).max(1);
        let from = i;
        while i < end {
            let w = u32::from_le_bytes(data[i..i + 4].try_into().expect("4 bytes"));
            if (w ^ (w >> 16)) & 0xFFFF == 0xFFFF && data[i - 1] >> 5 == 0 {
                self.spent += i + 1 - from;
                self.stored = i as u64 + 1;
                return Some(i as u64);
            }
            i += 1;
        }
        self.spent += end.saturating_sub(from);
        self.stored = self.stored.max(end as u64);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_at_reads_any_offset() {
        let data: Vec<u8> = (0..20u8).map(|i| i.wrapping_mul(73) ^ 0x5A).collect();
        for bit in 0..200u64 {
            let want = (0..64u64).fold(0u64, |v, k| {
                let i = bit + k;
                let b = data
                    .get((i / 8) as usize)
                    .map_or(0, |b| ((b >> (i % 8)) & 1) as u64);
                v | b << k
            });
            assert_eq!(bits_at(&data, bit), want, "bit {bit}");
        }
    }
}
