//! Deflate's canonical Huffman codes (RFC 1951, 3.2.2) as lookup tables.
//!
//! A table is indexed by the next `root` bits of the stream (deflate sends
//! codes most significant bit first inside a least-significant-first bit
//! stream, so each code is stored bit-reversed). A code longer than `root`
//! bits points to a subtable indexed by the bits after the root bits. Every
//! entry is one `u32`: the bits to consume (low 5 bits: the code and, for
//! lengths and distances, its extra bits, so that one shift consumes both
//! and the next lookup waits on one shift only), the code's own length
//! (bits 8 to 11), a kind (flags), and a value in the high half: a
//! literal, a length or distance base, or a subtable's place.
//!
//! Which codes are accepted is zlib's rule (and so flate2's), so that the
//! parallel decoder refuses exactly the streams the sequential one does:
//! over-subscribed codes never; incomplete codes only when they have a
//! single code of one bit (or no code at all, for distances); the code of
//! the code lengths must be complete.

/// Bits indexing the literal/length table's root (the rest in subtables).
pub(super) const LITLEN_BITS: u32 = 11;
/// Bits indexing the distance table's root.
pub(super) const DIST_BITS: u32 = 8;
/// Bits of the code-length code's table (its codes are at most 7 bits).
pub(super) const PRECODE_BITS: u32 = 7;

/// Entries of the literal/length table: the root, plus subtables. A
/// complete code puts a subtable of `2^k` entries (k at most 15 - 11 = 4)
/// under a root entry only when at least `k + 1` codes share that root
/// entry, so 288 codes need at most 288 * 16 / 5 < 922 subtable entries.
pub(super) const LITLEN_SIZE: usize = (1 << LITLEN_BITS) + 928;
/// Entries of the distance table: subtables of up to `2^7` entries need 8
/// codes each, so 32 codes fill at most 512.
pub(super) const DIST_SIZE: usize = (1 << DIST_BITS) + 512;
/// Entries of the code-length code's table (no subtables).
pub(super) const PRECODE_SIZE: usize = 1 << PRECODE_BITS;

/// Flag: the entry points to a subtable (value: its start; bits 8..12:
/// its index bits; low bits: the root bits to consume first).
pub(super) const SUB: u32 = 1 << 12;
/// Flag: end of block.
pub(super) const EOB: u32 = 1 << 13;
/// Flag: a symbol that must not occur (literal/length 286 and 287,
/// distance 30 and 31, or no code at all in an incomplete code).
pub(super) const BAD: u32 = 1 << 14;
/// Flag: a literal byte (value: the byte).
pub(super) const LIT: u32 = 1 << 15;

/// Bits to consume for an entry: its code and the extra bits after it
/// (at most 28; bits 5 to 7 of an entry are always clear, so a shift by
/// the whole entry, masked to 6 bits, shifts by this).
#[inline(always)]
pub(super) fn bits(entry: u32) -> u32 {
    entry & 0x1F
}

/// The length of an entry's code alone (the extra bits follow it); for a
/// subtable pointer, the subtable's index bits.
#[inline(always)]
pub(super) fn code_bits(entry: u32) -> u32 {
    (entry >> 8) & 0xF
}

/// An entry's value (a literal, a base, a subtable's start).
#[inline(always)]
pub(super) fn value(entry: u32) -> u32 {
    entry >> 16
}

/// The extra bits' value of a length or distance entry, from the bits as
/// they were before the entry was consumed.
#[inline(always)]
pub(super) fn extra_value(entry: u32, before: u64) -> u32 {
    ((before & ((1u64 << bits(entry)) - 1)) >> code_bits(entry)) as u32
}

/// The table entry of a symbol whose meaning is `meaning` (with its extra
/// bits in bits 8 to 11) and whose code has `len` bits.
#[inline(always)]
fn entry_of(meaning: u32, len: u32) -> u32 {
    let extra = (meaning >> 8) & 0xF;
    let entry = (meaning & !0xFFF) | (len + extra) | len << 8;
    debug_assert_eq!(entry & 0xE0, 0, "bits 5 to 7 must stay clear");
    entry
}

/// Lengths 3..258 of the literal/length symbols 257..285: base, extra bits.
const LENGTHS: [(u16, u8); 29] = [
    (3, 0),
    (4, 0),
    (5, 0),
    (6, 0),
    (7, 0),
    (8, 0),
    (9, 0),
    (10, 0),
    (11, 1),
    (13, 1),
    (15, 1),
    (17, 1),
    (19, 2),
    (23, 2),
    (27, 2),
    (31, 2),
    (35, 3),
    (43, 3),
    (51, 3),
    (59, 3),
    (67, 4),
    (83, 4),
    (99, 4),
    (115, 4),
    (131, 5),
    (163, 5),
    (195, 5),
    (227, 5),
    (258, 0),
];

/// Distances 1..32768 of the distance symbols 0..29: base, extra bits.
const DISTANCES: [(u16, u8); 30] = [
    (1, 0),
    (2, 0),
    (3, 0),
    (4, 0),
    (5, 1),
    (7, 1),
    (9, 2),
    (13, 2),
    (17, 3),
    (25, 3),
    (33, 4),
    (49, 4),
    (65, 5),
    (97, 5),
    (129, 6),
    (193, 6),
    (257, 7),
    (385, 7),
    (513, 8),
    (769, 8),
    (1025, 9),
    (1537, 9),
    (2049, 10),
    (3073, 10),
    (4097, 11),
    (6145, 11),
    (8193, 12),
    (12289, 12),
    (16385, 13),
    (24577, 13),
];

/// What a literal/length symbol decodes to.
pub(super) fn litlen_entry(sym: usize) -> u32 {
    match sym {
        0..=255 => LIT | (sym as u32) << 16,
        256 => EOB,
        257..=285 => {
            let (base, extra) = LENGTHS[sym - 257];
            (base as u32) << 16 | (extra as u32) << 8
        }
        _ => BAD,
    }
}

/// What a distance symbol decodes to.
pub(super) fn dist_entry(sym: usize) -> u32 {
    match DISTANCES.get(sym) {
        Some(&(base, extra)) => (base as u32) << 16 | (extra as u32) << 8,
        None => BAD,
    }
}

/// What a code-length symbol decodes to: itself.
pub(super) fn precode_entry(sym: usize) -> u32 {
    (sym as u32) << 16
}

/// How a set of code lengths fills the code space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fill {
    /// No code at all.
    Empty,
    /// Exactly one code, of one bit (half the space unused).
    Single,
    /// Every bit string starts a code.
    Complete,
    /// Some bit strings start no code (other than [`Fill::Single`]).
    Incomplete,
    /// More codes than the space holds: not a prefix code.
    Over,
}

/// Checks code lengths (each at most 15) without building anything.
#[cfg(test)]
pub(super) fn fill(lengths: &[u8]) -> Fill {
    let mut count = [0u32; 16];
    for &l in lengths {
        count[l as usize & 15] += 1;
    }
    fill_of(&count)
}

/// [`fill`] from the count of codes of each length (`count[0]`: symbols
/// without a code).
fn fill_of(count: &[u32; 16]) -> Fill {
    let mut left: i64 = 1;
    for &c in &count[1..] {
        left = left * 2 - c as i64;
        if left < 0 {
            return Fill::Over;
        }
    }
    let used: u32 = count[1..].iter().sum();
    match (left, used) {
        (0, _) => Fill::Complete,
        (_, 0) => Fill::Empty,
        (_, 1) if count[1] == 1 => Fill::Single,
        _ => Fill::Incomplete,
    }
}

/// Builds the table of the code with `lengths` (symbol `i` has code length
/// `lengths[i]`, at most 15, 0 for none) into `table`, with `root` index
/// bits and each symbol's meaning from `entry`. Refuses (false) codes that
/// are not accepted: over-subscribed, or incomplete beyond what `allow`
/// admits. Entries no code reaches are [`BAD`].
///
/// This runs for every dynamic block (thousands per member), so the root
/// table is filled as libdeflate and zlib-ng fill theirs: the codes of
/// each length are written once into a table of that many index bits,
/// which is then doubled (copied onto its second half) for the next
/// length, rather than each code written at every index it owns.
pub(super) fn build(
    table: &mut [u32],
    root: u32,
    lengths: &[u8],
    entry: impl Fn(usize) -> u32,
    allow: &[Fill],
) -> bool {
    let mut count = [0u32; 16];
    for &l in lengths {
        count[l as usize & 15] += 1;
    }
    let fill = fill_of(&count);
    if fill != Fill::Complete && !allow.contains(&fill) {
        return false;
    }
    // The first code of each length, canonically (3.2.2), and the
    // symbols in canonical order: by length, then by symbol (a counting
    // sort).
    let mut next = [0u32; 16];
    let mut offset = [0usize; 16];
    let mut code = 0u32;
    for len in 1..16 {
        next[len] = code;
        code = (code + count[len]) << 1;
        if len < 15 {
            offset[len + 1] = offset[len] + count[len] as usize;
        }
    }
    let mut sorted = [0u16; 320];
    for (sym, &len) in lengths.iter().enumerate() {
        if len > 0 {
            sorted[offset[len as usize & 15]] = sym as u16;
            offset[len as usize & 15] += 1;
        }
    }
    let mut sorted = sorted.iter().map(|&s| s as usize);
    // The root table, doubled from 2 entries up to 2^root.
    table[..2].fill(BAD | root);
    let mut size = 2;
    for len in 1..=root {
        if len > 1 {
            table.copy_within(0..size, size);
            size *= 2;
        }
        for _ in 0..count[len as usize] {
            let sym = sorted.next().expect("counted");
            let reversed = next[len as usize].reverse_bits() >> (32 - len);
            next[len as usize] += 1;
            table[reversed as usize] = entry_of(entry(sym), len);
        }
    }
    // Longer codes, in subtables: the subtable being filled has its root
    // entry (the first `root` bits, reversed), start, and index bits.
    let mut sub: Option<(usize, usize, u32)> = None;
    let mut end = size;
    for len in root + 1..16 {
        for _ in 0..count[len as usize] {
            let sym = sorted.next().expect("counted");
            let reversed = next[len as usize].reverse_bits() >> (32 - len);
            next[len as usize] += 1;
            let head = (reversed & ((1 << root) - 1)) as usize;
            let (start, bits) = match sub {
                Some((h, start, bits)) if h == head => (start, bits),
                _ => {
                    // A new subtable: as many index bits as the codes
                    // under this root entry need (zlib's rule: the codes
                    // still to place, in canonical order, fill it).
                    let mut bits = len - root;
                    let mut left: i64 = 1 << bits;
                    while root + bits < 15 {
                        left -= count[(root + bits) as usize] as i64;
                        if left <= 0 {
                            break;
                        }
                        bits += 1;
                        left <<= 1;
                    }
                    let start = end;
                    end += 1 << bits;
                    if end > table.len() {
                        // Cannot happen for an accepted code (see the
                        // sizes).
                        return false;
                    }
                    table[start..end].fill(BAD);
                    table[head] = SUB | (start as u32) << 16 | bits << 8 | root;
                    sub = Some((head, start, bits));
                    (start, bits)
                }
            };
            // Codes of this length still to place, for the next
            // subtable's size.
            count[len as usize] -= 1;
            let meaning = entry_of(entry(sym), len - root);
            let mut at = (reversed >> root) as usize;
            while at < 1 << bits {
                table[start + at] = meaning;
                at += 1 << (len - root);
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes one symbol from `bits` (LSB first) with a built table: the
    /// symbol's entry and the bits used.
    fn decode(table: &[u32], root: u32, bits: u32) -> (u32, u32) {
        let e = table[(bits & ((1 << root) - 1)) as usize];
        if e & SUB == 0 {
            return (e & !0xFFF, code_bits(e));
        }
        let sub_bits = code_bits(e);
        let s = table[value(e) as usize + ((bits >> root) & ((1 << sub_bits) - 1)) as usize];
        (s & !0xFFF, root + code_bits(s))
    }

    #[test]
    fn codes_decode_canonically_with_subtables() {
        // The fixed literal/length code, and a skewed complete code with
        // lengths up to 15 (subtables) over 288 symbols.
        let mut fixed = [8u8; 288];
        fixed[144..256].fill(9);
        fixed[256..280].fill(7);
        let mut skewed = [0u8; 288];
        for (i, l) in skewed.iter_mut().enumerate().take(14) {
            *l = i as u8 + 1;
        }
        skewed[14] = 15;
        skewed[15] = 15;
        for lengths in [&fixed[..], &skewed[..]] {
            assert_eq!(fill(lengths), Fill::Complete);
            let mut table = vec![0u32; LITLEN_SIZE];
            assert!(build(&mut table, LITLEN_BITS, lengths, litlen_entry, &[]));
            // Every symbol's canonical code, sent LSB first, decodes to it.
            let mut code = 0u32;
            let mut prev_len = 0;
            let mut order: Vec<(u8, usize)> = lengths
                .iter()
                .enumerate()
                .filter(|(_, &l)| l > 0)
                .map(|(s, &l)| (l, s))
                .collect();
            order.sort();
            for (n, &(len, sym)) in order.iter().enumerate() {
                if n > 0 {
                    code = (code + 1) << (len - prev_len);
                }
                prev_len = len;
                let sent = code.reverse_bits() >> (32 - len as u32);
                let (e, used) = decode(&table, LITLEN_BITS, sent | 0xFFFF_0000 << len);
                assert_eq!(used, len as u32, "symbol {sym}");
                assert_eq!(e, litlen_entry(sym) & !0xFFF, "symbol {sym}");
            }
        }
    }

    #[test]
    fn acceptance_follows_zlib() {
        assert_eq!(fill(&[0, 0, 0]), Fill::Empty);
        assert_eq!(fill(&[0, 1, 0]), Fill::Single);
        assert_eq!(fill(&[1, 1]), Fill::Complete);
        assert_eq!(fill(&[2, 2, 2]), Fill::Incomplete);
        assert_eq!(fill(&[1, 1, 1]), Fill::Over);
        let mut t = vec![0u32; DIST_SIZE];
        assert!(!build(
            &mut t,
            DIST_BITS,
            &[1, 1, 1],
            dist_entry,
            &[Fill::Single]
        ));
        assert!(!build(
            &mut t,
            DIST_BITS,
            &[2, 2, 2],
            dist_entry,
            &[Fill::Single]
        ));
        assert!(build(
            &mut t,
            DIST_BITS,
            &[0, 1],
            dist_entry,
            &[Fill::Single]
        ));
        // The missing half decodes as an error.
        assert_eq!(t[1] & BAD, BAD);
        assert_eq!(t[0] & !0xFFF, dist_entry(1) & !0xFFF);
        assert!(build(
            &mut t,
            DIST_BITS,
            &[0, 0],
            dist_entry,
            &[Fill::Empty]
        ));
        assert!(t[..256].iter().all(|e| e & BAD != 0));
    }
}
