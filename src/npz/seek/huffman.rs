//! Canonical Huffman decoding tables for deflate (RFC 1951, 3.2.2): a root
//! table indexed by the next [`ROOT`] bits of the stream (least significant
//! first), whose entries are either a symbol with its code length or a
//! pointer to a second-level table for the longer codes sharing that
//! prefix. Built from a list of code lengths, refusing over-subscribed
//! codes; the slots of an incomplete code stay invalid, and decoding one
//! is an error.

/// Bits of the root table.
pub(super) const ROOT: u32 = 10;

/// An entry: `len` bits consumed for `value` (a symbol); or, with `sub`,
/// `value` is the offset of a second-level table indexed by the next
/// `len` bits after the root's. `len == 0` marks an invalid slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) value: u16,
    pub(super) len: u8,
    pub(super) sub: bool,
}

/// A decoding table.
#[derive(Clone, Debug)]
pub(super) struct Table {
    pub(super) entries: Vec<Entry>,
}

/// Why a table could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BadCode {
    /// More codes of some length than the lengths before leave room for.
    OverSubscribed,
}

/// `code`'s lowest `len` bits in reverse order (deflate sends Huffman
/// codes most significant bit first, in a stream read least significant
/// bit first).
fn reverse(code: u32, len: u32) -> u32 {
    code.reverse_bits() >> (32 - len)
}

impl Table {
    /// The table for code lengths `lengths` (0: symbol unused; at most 15).
    pub(super) fn build(lengths: &[u8]) -> Result<Table, BadCode> {
        let mut count = [0u32; 16];
        for &l in lengths {
            count[l as usize] += 1;
        }
        count[0] = 0;
        // Kraft: no length may have more codes than the room left.
        let mut room = 1i64;
        for &c in &count[1..] {
            room = room * 2 - c as i64;
            if room < 0 {
                return Err(BadCode::OverSubscribed);
            }
        }
        let mut next = [0u32; 16];
        let mut code = 0u32;
        for len in 1..16 {
            code = (code + count[len - 1]) << 1;
            next[len] = code;
        }
        // Each symbol's code, bit-reversed for reading.
        let codes: Vec<(usize, u32, u32)> = lengths
            .iter()
            .enumerate()
            .filter(|(_, &l)| l > 0)
            .map(|(sym, &l)| {
                let l = l as u32;
                let c = next[l as usize];
                next[l as usize] += 1;
                (sym, reverse(c, l), l)
            })
            .collect();
        // The longest code under each root prefix sizes its sub-table.
        let mut longest = vec![0u32; 1 << ROOT];
        for &(_, code, len) in &codes {
            if len > ROOT {
                let prefix = (code & ((1 << ROOT) - 1)) as usize;
                longest[prefix] = longest[prefix].max(len);
            }
        }
        let mut entries = vec![Entry::default(); 1 << ROOT];
        let mut offsets = vec![0usize; 1 << ROOT];
        for prefix in 0..1usize << ROOT {
            if longest[prefix] > 0 {
                let bits = longest[prefix] - ROOT;
                offsets[prefix] = entries.len();
                entries[prefix] = Entry {
                    value: entries.len() as u16,
                    len: bits as u8,
                    sub: true,
                };
                entries.resize(entries.len() + (1 << bits), Entry::default());
            }
        }
        for &(sym, code, len) in &codes {
            let entry = Entry {
                value: sym as u16,
                len: len as u8,
                sub: false,
            };
            if len <= ROOT {
                let mut at = code as usize;
                while at < 1 << ROOT {
                    entries[at] = entry;
                    at += 1 << len;
                }
            } else {
                let prefix = (code & ((1 << ROOT) - 1)) as usize;
                let bits = longest[prefix] - ROOT;
                let rest = (code >> ROOT) as usize;
                let step = 1usize << (len - ROOT);
                let mut at = rest;
                while at < 1 << bits {
                    entries[offsets[prefix] + at] = Entry {
                        len: (len - ROOT) as u8,
                        ..entry
                    };
                    at += step;
                }
            }
        }
        Ok(Table { entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_found_by_their_reversed_bits() {
        // RFC 1951's example: lengths 3 3 3 3 3 2 4 4 for A..H.
        let t = Table::build(&[3, 3, 3, 3, 3, 2, 4, 4]).unwrap();
        // F = 00, A = 010, H = 1111 (most significant bit first).
        let at = |code: u32, len: u32| t.entries[reverse(code, len) as usize];
        assert_eq!((at(0b00, 2).value, at(0b00, 2).len), (5, 2));
        assert_eq!((at(0b010, 3).value, at(0b010, 3).len), (0, 3));
        assert_eq!((at(0b1111, 4).value, at(0b1111, 4).len), (7, 4));
        assert_eq!(
            Table::build(&[1, 1, 1]).unwrap_err(),
            BadCode::OverSubscribed
        );
        // Codes longer than the root go to a sub-table.
        let mut lengths = vec![15u8; 2];
        lengths.extend([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
        let t = Table::build(&lengths).unwrap();
        let root = t.entries[reverse(0b11_1111_1111, 10) as usize];
        assert!(root.sub && root.len == 5);
        // An incomplete code leaves invalid slots.
        let t = Table::build(&[1]).unwrap();
        assert_eq!(t.entries[1].len, 0);
    }
}
