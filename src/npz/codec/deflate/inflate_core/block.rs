//! Deflate block headers (RFC 1951, 3.2.3 to 3.2.7): stored, fixed and
//! dynamic Huffman blocks, read into decoding tables and checked as zlib
//! checks them. The block finder (`finder.rs`) runs the same checks on
//! every candidate position, so a header is accepted there exactly when
//! the decoder would accept it.

use super::bits::Bits;
use super::huffman::{
    build, dist_entry, litlen_entry, precode_entry, Fill, DIST_BITS, DIST_SIZE, LITLEN_BITS,
    LITLEN_SIZE, PRECODE_BITS, PRECODE_SIZE,
};
use super::Bad;

/// The order in which a dynamic header sends the code-length code's
/// lengths (3.2.7).
pub(crate) const PRECODE_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// The decoding tables of the current block (boxed by the owner: about
/// 18 KiB, reused from block to block).
pub(crate) struct Tables {
    /// Literal/length table ([`LITLEN_BITS`] root bits).
    pub(crate) litlen: [u32; LITLEN_SIZE],
    /// Distance table ([`DIST_BITS`] root bits).
    pub(crate) dist: [u32; DIST_SIZE],
    /// Scratch for the code-length code.
    precode: [u32; PRECODE_SIZE],
    /// Scratch for the code lengths.
    lengths: [u8; 320],
}

impl Tables {
    /// Empty tables, on the heap.
    pub(crate) fn new() -> Box<Tables> {
        Box::new(Tables {
            litlen: [0; LITLEN_SIZE],
            dist: [0; DIST_SIZE],
            precode: [0; PRECODE_SIZE],
            lengths: [0; 320],
        })
    }

    /// The fixed Huffman codes (3.2.6).
    pub(crate) fn set_fixed(&mut self) {
        let mut lengths = [8u8; 288];
        lengths[144..256].fill(9);
        lengths[256..280].fill(7);
        let ok = build(&mut self.litlen, LITLEN_BITS, &lengths, litlen_entry, &[]);
        debug_assert!(ok);
        let ok = build(&mut self.dist, DIST_BITS, &[5; 32], dist_entry, &[]);
        debug_assert!(ok);
    }

    /// Reads a dynamic block's code definitions (after the 3 header bits)
    /// and builds the tables; refuses what zlib refuses: more than 286
    /// literal/length or 30 distance codes, an incomplete or
    /// over-subscribed code-length code, a repeat with nothing to repeat
    /// or running past the lengths, no end-of-block code, literal/length
    /// or distance codes over-subscribed or incomplete (except a single
    /// one-bit code, or no distance code at all).
    pub(crate) fn read_dynamic(&mut self, bits: &mut Bits) -> Result<(), Bad> {
        bits.refill();
        let nlen = bits.take(5) as usize + 257;
        let ndist = bits.take(5) as usize + 1;
        let ncode = bits.take(4) as usize + 4;
        if nlen > 286 || ndist > 30 {
            return Err(Bad::Corrupt("too many length or distance codes"));
        }
        let mut pre = [0u8; 19];
        for &sym in &PRECODE_ORDER[..ncode] {
            pre[sym] = bits.take(3) as u8;
        }
        if !build(&mut self.precode, PRECODE_BITS, &pre, precode_entry, &[]) {
            return Err(Bad::Corrupt("invalid code-length code"));
        }
        let total = nlen + ndist;
        let mut i = 0;
        while i < total {
            if bits.count < 16 {
                bits.refill();
            }
            let e = self.precode[bits.peek(PRECODE_BITS) as usize];
            bits.consume(e & 0x1F);
            let sym = (e >> 16) as u8;
            let (value, times) = match sym {
                0..=15 => (sym, 1),
                16 => {
                    if i == 0 {
                        return Err(Bad::Corrupt("a length repeat with nothing to repeat"));
                    }
                    (self.lengths[i - 1], 3 + bits.take(2) as usize)
                }
                17 => (0, 3 + bits.take(3) as usize),
                _ => (0, 11 + bits.take(7) as usize),
            };
            if i + times > total {
                return Err(Bad::Corrupt("code lengths repeat past their end"));
            }
            self.lengths[i..i + times].fill(value);
            i += times;
        }
        let (lit, dist) = self.lengths[..total].split_at(nlen);
        if lit[256] == 0 {
            return Err(Bad::Corrupt("no end-of-block code"));
        }
        if !build(
            &mut self.litlen,
            LITLEN_BITS,
            lit,
            litlen_entry,
            &[Fill::Single],
        ) {
            return Err(Bad::Corrupt("invalid literal/length code"));
        }
        if !build(
            &mut self.dist,
            DIST_BITS,
            dist,
            dist_entry,
            &[Fill::Single, Fill::Empty],
        ) {
            return Err(Bad::Corrupt("invalid distance code"));
        }
        Ok(())
    }
}

/// The code-length code of a dynamic header starting at the 64 bits
/// `after` (the bits after the 13 bits of BFINAL, BTYPE, HLIT and HDIST):
/// whether it is complete, as [`Tables::read_dynamic`] requires. A quick
/// filter for the block finder, on registers only.
#[inline]
pub(crate) fn precode_complete(after: u64) -> bool {
    // 2^(7 - length): a code of each length's share of the code space,
    // in 1/128ths (length 0: none).
    const SHARE: [u32; 8] = [0, 64, 32, 16, 8, 4, 2, 1];
    let ncode = (after & 15) as u32 + 4;
    let lens = after >> 4;
    let mut sum = 0u32;
    for i in 0..ncode {
        sum += SHARE[((lens >> (3 * i)) & 7) as usize];
    }
    sum == 128
}

/// What starts at a block boundary, read from its first 3 bits (not
/// consumed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// BFINAL: the stream's last block.
    pub(crate) last: bool,
    /// BTYPE: 0 stored, 1 fixed, 2 dynamic, 3 invalid.
    pub(crate) kind: u32,
}

impl Header {
    /// The header at the reader's position.
    pub(crate) fn peek(bits: &mut Bits) -> Header {
        if bits.count < 3 {
            bits.refill();
        }
        let v = bits.peek(3);
        Header {
            last: v & 1 != 0,
            kind: v >> 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_precode_filter_agrees_with_the_full_check() {
        // Random 64-bit words: the register filter says complete exactly
        // when building the code-length code succeeds.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut complete = 0;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Bias towards short lengths so that complete codes occur.
            let w = x & 0x9249_2492_4924_9249_u64.rotate_left((x % 3) as u32) | (x & 0xF);
            let ncode = (w & 15) as usize + 4;
            let mut pre = [0u8; 19];
            for (k, &sym) in PRECODE_ORDER[..ncode].iter().enumerate() {
                pre[sym] = ((w >> (4 + 3 * k)) & 7) as u8;
            }
            let mut table = [0u32; PRECODE_SIZE];
            let built = build(&mut table, PRECODE_BITS, &pre, precode_entry, &[]);
            assert_eq!(precode_complete(w), built, "{w:#x}");
            complete += built as usize;
        }
        assert!(complete > 100, "too few complete codes tried: {complete}");
    }
}
