//! A small deflate encoder for tests: streams whose block types, block
//! sizes and match distances the test chooses (zlib and libdeflate pick
//! their own): stored, fixed and dynamic Huffman blocks in any order,
//! matches up to the full 32 KiB back, so that chunks of the parallel
//! decoder start in every kind of block and reach back into unknown
//! windows.

/// Bits written least significant first.
#[derive(Default)]
pub(crate) struct BitWriter {
    pub(crate) bytes: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    pub(crate) fn put(&mut self, v: u32, n: u32) {
        self.acc |= (v as u64) << self.n;
        self.n += n;
        while self.n >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code: sent most significant bit first.
    fn code(&mut self, code: u32, len: u8) {
        let reversed = code.reverse_bits() >> (32 - len as u32);
        self.put(reversed, len as u32);
    }

    pub(crate) fn align(&mut self) {
        if self.n > 0 {
            self.put(0, 8 - self.n);
        }
    }

    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.align();
        self.bytes
    }
}

/// A symbol of LZ77: a literal, or a match (length 3..=258, distance
/// 1..=32768).
#[derive(Clone, Copy)]
pub(crate) enum Token {
    Lit(u8),
    Match(u16, u16),
}

/// Greedy LZ77 of `data[from..to]` with `data[..from]` as history: the
/// longest match among a few earlier positions with the same 3 bytes.
fn tokens(data: &[u8], from: usize, to: usize) -> Vec<Token> {
    let mut last: std::collections::HashMap<[u8; 3], Vec<usize>> = Default::default();
    let start = from.saturating_sub(32768);
    for i in start..from.min(data.len().saturating_sub(2)) {
        last.entry([data[i], data[i + 1], data[i + 2]])
            .or_default()
            .push(i);
    }
    let mut out = Vec::new();
    let mut i = from;
    while i < to {
        let mut best = (0usize, 0usize);
        if i + 3 <= to {
            let key = [data[i], data[i + 1], data[i + 2]];
            if let Some(list) = last.get(&key) {
                for &j in list.iter().rev().take(8) {
                    if i - j > 32768 {
                        break;
                    }
                    let len = (0..258.min(to - i))
                        .take_while(|&k| data[j + k] == data[i + k])
                        .count();
                    if len > best.0 {
                        best = (len, i - j);
                    }
                }
            }
        }
        let step = if best.0 >= 3 {
            out.push(Token::Match(best.0 as u16, best.1 as u16));
            best.0
        } else {
            out.push(Token::Lit(data[i]));
            1
        };
        for k in i..i + step {
            if k + 3 <= data.len() {
                last.entry([data[k], data[k + 1], data[k + 2]])
                    .or_default()
                    .push(k);
            }
        }
        i += step;
    }
    out
}

/// Length symbol (257..=285) and extra bits of a match length.
fn length_code(len: u16) -> (usize, u32, u32) {
    const BASE: [u16; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const EXTRA: [u32; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    let i = BASE.iter().rposition(|&b| b <= len).expect("len >= 3");
    (257 + i, (len - BASE[i]) as u32, EXTRA[i])
}

/// Distance symbol (0..=29) and extra bits of a distance.
fn dist_code(dist: u16) -> (usize, u32, u32) {
    let d = dist as u32 - 1;
    if d < 4 {
        return (d as usize, 0, 0);
    }
    let top = 31 - d.leading_zeros();
    let extra = top - 1;
    let sym = 2 * top + ((d >> extra) & 1);
    let base = (2 + ((d >> extra) & 1)) << extra;
    (sym as usize, d - base, extra)
}

/// Huffman code lengths (at most `max`) for `freq`: the textbook
/// algorithm, with frequencies flattened until the longest code fits.
fn lengths(freq: &[u32], max: u8) -> Vec<u8> {
    let mut f: Vec<u64> = freq.iter().map(|&x| x as u64).collect();
    loop {
        let used: Vec<usize> = (0..f.len()).filter(|&i| f[i] > 0).collect();
        let mut len = vec![0u8; f.len()];
        if used.len() == 1 {
            len[used[0]] = 1;
            return len;
        }
        // Nodes: (weight, leaves under it).
        let mut nodes: Vec<(u64, Vec<usize>)> = used.iter().map(|&i| (f[i], vec![i])).collect();
        while nodes.len() > 1 {
            nodes.sort_by_key(|n| std::cmp::Reverse(n.0));
            let (wa, a) = nodes.pop().expect("two");
            let (wb, b) = nodes.pop().expect("two");
            for &i in a.iter().chain(&b) {
                len[i] += 1;
            }
            nodes.push((wa + wb, [a, b].concat()));
        }
        if len.iter().all(|&l| l <= max) {
            return len;
        }
        for x in f.iter_mut().filter(|x| **x > 0) {
            *x = x.div_ceil(2);
        }
    }
}

/// Canonical codes for `lengths`.
fn codes(lengths: &[u8]) -> Vec<u32> {
    let mut count = [0u32; 16];
    for &l in lengths {
        count[l as usize] += 1;
    }
    count[0] = 0;
    let mut next = [0u32; 16];
    let mut code = 0;
    for len in 1..16 {
        code = (code + count[len - 1]) << 1;
        next[len] = code;
    }
    lengths
        .iter()
        .map(|&l| {
            if l == 0 {
                return 0;
            }
            let c = next[l as usize];
            next[l as usize] += 1;
            c
        })
        .collect()
}

/// The kind of a block to write.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    Stored,
    Fixed,
    Dynamic,
}

/// Deflates `data` as blocks of the given kinds and sizes (bytes of
/// input each), in order, the last block final.
pub(crate) fn encode(data: &[u8], blocks: &[(Kind, usize)]) -> Vec<u8> {
    let mut w = BitWriter::default();
    let mut at = 0;
    for (n, &(kind, size)) in blocks.iter().enumerate() {
        let end = if n + 1 == blocks.len() {
            data.len()
        } else {
            (at + size).min(data.len())
        };
        let last = (n + 1 == blocks.len()) as u32;
        match kind {
            Kind::Stored => write_stored(&mut w, &data[at..end], last == 1),
            Kind::Fixed => write_fixed(&mut w, &tokens(data, at, end), last == 1),
            Kind::Dynamic => {
                let toks = tokens(data, at, end);
                w.put(last, 1);
                w.put(2, 2);
                let (lit, dist) = dynamic_lengths(&toks);
                write_dynamic_header(&mut w, &lit, &dist);
                write_tokens(&mut w, &toks, &lit, &dist);
            }
        }
        at = end;
    }
    w.finish()
}

/// Writes `bytes` as stored blocks (at most 65 535 bytes each), the last
/// one final if `last`.
pub(crate) fn write_stored(w: &mut BitWriter, bytes: &[u8], last: bool) {
    let mut from = 0;
    loop {
        let to = (from + 65_535).min(bytes.len());
        w.put((last && to == bytes.len()) as u32, 1);
        w.put(0, 2);
        w.align();
        let len = (to - from) as u32;
        w.put(len, 16);
        w.put(!len & 0xFFFF, 16);
        for &b in &bytes[from..to] {
            w.put(b as u32, 8);
        }
        from = to;
        if to == bytes.len() {
            return;
        }
    }
}

/// Writes `toks` as one fixed Huffman block, final if `last`: any
/// tokens, valid or not (a distance past the start, say).
pub(crate) fn write_fixed(w: &mut BitWriter, toks: &[Token], last: bool) {
    w.put(last as u32, 1);
    w.put(1, 2);
    let mut lit = vec![8u8; 288];
    lit[144..256].fill(9);
    lit[256..280].fill(7);
    let dist = vec![5u8; 30];
    write_tokens(w, toks, &lit, &dist);
}

/// Writes tokens and the end-of-block code with the given code lengths.
fn write_tokens(w: &mut BitWriter, toks: &[Token], lit_len: &[u8], dist_len: &[u8]) {
    let (lit_codes, dist_codes) = (codes(lit_len), codes(dist_len));
    for &t in toks {
        match t {
            Token::Lit(b) => w.code(lit_codes[b as usize], lit_len[b as usize]),
            Token::Match(len, dist) => {
                let (s, e, n) = length_code(len);
                w.code(lit_codes[s], lit_len[s]);
                w.put(e, n);
                let (s, e, n) = dist_code(dist);
                w.code(dist_codes[s], dist_len[s]);
                w.put(e, n);
            }
        }
    }
    w.code(lit_codes[256], lit_len[256]);
}

/// Code lengths of a dynamic block for its tokens: at least two codes in
/// each code, as zlib makes them, so that both are complete.
fn dynamic_lengths(toks: &[Token]) -> (Vec<u8>, Vec<u8>) {
    let mut lit = vec![0u32; 286];
    let mut dist = vec![0u32; 30];
    for t in toks {
        match *t {
            Token::Lit(b) => lit[b as usize] += 1,
            Token::Match(len, d) => {
                lit[length_code(len).0] += 1;
                dist[dist_code(d).0] += 1;
            }
        }
    }
    lit[256] += 1;
    for f in [&mut lit, &mut dist] {
        while f.iter().filter(|&&x| x > 0).count() < 2 {
            let i = f.iter().position(|&x| x == 0).expect("room");
            f[i] = 1;
        }
    }
    (lengths(&lit, 15), lengths(&dist, 15))
}

/// A dynamic header (after BTYPE): counts, the code-length code, and the
/// lengths sent with runs of zeros (17, 18) and repeats (16).
fn write_dynamic_header(w: &mut BitWriter, lit: &[u8], dist: &[u8]) {
    let all: Vec<u8> = lit.iter().chain(dist).copied().collect();
    // (symbol, extra value, extra bits)
    let mut syms: Vec<(usize, u32, u32)> = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let run = all[i..].iter().take_while(|&&l| l == all[i]).count();
        if all[i] == 0 && run >= 11 {
            let n = run.min(138);
            syms.push((18, (n - 11) as u32, 7));
            i += n;
        } else if all[i] == 0 && run >= 3 {
            syms.push((17, (run - 3) as u32, 3));
            i += run;
        } else if i > 0 && all[i] == all[i - 1] && run >= 3 {
            let n = run.min(6);
            syms.push((16, (n - 3) as u32, 2));
            i += n;
        } else {
            syms.push((all[i] as usize, 0, 0));
            i += 1;
        }
    }
    let mut freq = vec![0u32; 19];
    for &(s, ..) in &syms {
        freq[s] += 1;
    }
    while freq.iter().filter(|&&x| x > 0).count() < 2 {
        let i = freq.iter().position(|&x| x == 0).expect("room");
        freq[i] = 1;
    }
    let pre_len = lengths(&freq, 7);
    let pre_codes = codes(&pre_len);
    // The decoder's order, spelled in one place of the library.
    use super::super::super::inflate_core::PRECODE_ORDER as ORDER;
    let ncode = (4..=19)
        .rev()
        .find(|&n| pre_len[ORDER[n - 1]] != 0)
        .unwrap_or(4);
    w.put((lit.len() - 257) as u32, 5);
    w.put((dist.len() - 1) as u32, 5);
    w.put((ncode - 4) as u32, 4);
    for &s in &ORDER[..ncode] {
        w.put(pre_len[s] as u32, 3);
    }
    for (s, e, n) in syms {
        w.code(pre_codes[s], pre_len[s]);
        w.put(e, n);
    }
}
