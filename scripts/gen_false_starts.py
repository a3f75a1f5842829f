#!/usr/bin/env python3
"""Writes valid raw deflate streams whose compressed bytes are almost all
the 5-byte pattern `07 00 00 FF FF`, repeated: a worst case for the block
finder of a parallel inflater (src/npz/codec/deflate/pinflate/).

Each `00 00 FF FF` in it is a stored-block candidate (LEN 0, NLEN 0xFFFF,
byte-aligned, the byte before it, 0x07, has its top 3 bits zero); reading
that 0x07 as the header before it gives BFINAL=1, BTYPE=3, invalid, so the
finder must reject it: one candidate every 5 compressed bytes. Every bit
window that starts a dynamic-Huffman header (BFINAL=0, BTYPE=2) is followed
by HLIT=31 (> 29), invalid too. The stream's real block boundaries sit only
where asked: by default 32 KiB before each multiple of 4 MiB of compressed
bytes, so a chunk's finder has to reject all but its last 32 KiB.

    python3 scripts/gen_false_starts.py OUT.deflate OUT.raw [--size BYTES]
        [--boundary-every N] [--boundary-offset M] [--one-block]
        [--npz OUT.npz] [--no-npy-header] [--min-len A --max-len B]
        [--search] [--no-verify]

Defaults: --size 64 MiB of inflated bytes, --boundary-every 4 MiB and
--boundary-offset 32 KiB of compressed bytes. --one-block puts the whole
pattern region in one dynamic block (no boundary the finder could find).

How: the pattern's bits, LSB first per byte, are periodic (period 40:
19 ones, 21 zeros). A complete canonical literal/length code is chosen
(brute force over Kraft-complete length counts) so that decoding that bit
sequence from some phase only ever yields literals: any code word of at
most 15 bits holds at most one 0/1 change of the pattern, so an EOB whose
code word has two changes (e.g. 0000101) can never be decoded from it.
The block's data is then nothing but the pattern's bits, from the phase
that puts `07 00 00 FF FF` on byte boundaries; a few filler literals after
the header fix the phase when needed, and the block ends (EOB, then the
next dynamic header, BFINAL=0 except the last) at the symbol boundary just
before the asked position. Inflated bytes are whatever those literals are.

By default the inflated bytes are a valid .npy file: the .npy header of a
1-d uint8 array is coded by a first fixed-Huffman block (at offset 0),
the array's bytes by the pattern blocks, so --size is the .npy file's
size. --npz writes a zip with one member x.npy, method 8, whose data are
exactly OUT.deflate (so `np.load(OUT.npz)['x']` works and reads the
hostile stream). --no-npy-header: all inflated bytes come from the pattern.

Checks (unless --no-verify): zlib.decompressobj(-15) gives OUT.raw exactly
and ends the stream at its last byte; libz's inflate(Z_BLOCK) (via ctypes)
stops at exactly the recorded block boundaries; the npz passes
ZipFile.testzip() and np.load. It prints JSON stats: block boundaries
(byte, bit), fraction of compressed bytes inside the periodic pattern,
stored-block candidates and dynamic-header candidates (BFINAL=0, BTYPE=2,
HLIT<=29) per boundary-every chunk. Stdlib + numpy; deterministic.
"""

import argparse
import ctypes
import ctypes.util
import io
import json
import struct
import sys
import time
import zlib

import numpy as np

PATTERN = bytes([0x07, 0x00, 0x00, 0xFF, 0xFF])
PERIOD = 8 * len(PATTERN)  # 40 bits
# The pattern's bits in stream order (deflate reads bytes LSB first).
PBITS = [(PATTERN[i // 8] >> (i % 8)) & 1 for i in range(PERIOD)]
PSTR = "".join(map(str, PBITS)) * 2  # enough to read 15 bits from any phase
EOB = 256

# ---------------------------------------------------------------- codes


def canonical_codes(lengths):
    """RFC 1951 3.2.2: {symbol: (code, length)} for lengths {symbol: len>0}."""
    maxlen = max(lengths.values())
    bl_count = [0] * (maxlen + 1)
    for n in lengths.values():
        bl_count[n] += 1
    next_code = [0] * (maxlen + 2)
    code = 0
    for bits in range(1, maxlen + 1):
        code = (code + bl_count[bits - 1]) << 1 if bits > 1 else 0
        next_code[bits] = code
    out = {}
    for sym in sorted(lengths):
        n = lengths[sym]
        out[sym] = (next_code[n], n)
        next_code[n] += 1
    return out


def kraft_ok(lengths):
    return sum(2.0 ** (15 - n) for n in lengths.values()) == 2.0**15


class PatternCode:
    """A literal/length code (symbols 0..256) plus its parse of the pattern."""

    def __init__(self, lengths):
        assert EOB in lengths and kraft_ok(lengths), "code must be complete"
        assert all(s <= EOB for s in lengths), "no length codes are used"
        self.lengths = dict(lengths)
        self.codes = canonical_codes(self.lengths)
        self.table = {
            format(c, "0%db" % n): s for s, (c, n) in self.codes.items()
        }
        self.minlen = min(self.lengths.values())
        self.maxlen = max(self.lengths.values())
        # One decode step from each phase of the pattern.
        self.step = []
        for ph in range(PERIOD):
            for n in range(self.minlen, self.maxlen + 1):
                s = self.table.get(PSTR[ph : ph + n])
                if s is not None:
                    self.step.append((s, n, (ph + n) % PERIOD))
                    break
            else:  # impossible for a complete code
                raise AssertionError("undecodable phase")
        self.good = set()  # phases whose whole forward parse is literals
        for ph in range(PERIOD):
            seen, p, ok = set(), ph, True
            while p not in seen:
                seen.add(p)
                s, _, p = self.step[p]
                if s >= EOB:
                    ok = False
                    break
            if ok:
                self.good.add(ph)
        self.good_residues = {p % 8 for p in self.good}

    def trajectory(self, ph):
        """(prefix syms, prefix lens, cycle syms, cycle lens) from phase ph."""
        order, first = [], {}
        p = ph
        while p not in first:
            first[p] = len(order)
            order.append(p)
            p = self.step[p][2]
        k = first[p]
        syms = [self.step[q][0] for q in order]
        lens = [self.step[q][1] for q in order]
        return syms[:k], lens[:k], syms[k:], lens[k:]

    def bits_per_literal(self):
        if not self.good:
            return 0.0
        _, _, cs, cl = self.trajectory(min(self.good))
        return sum(cl) / len(cs)

    def literal_of_length(self):
        """One literal symbol for each code length that has one."""
        out = {}
        for s, n in sorted(self.lengths.items()):
            if s < EOB:
                out.setdefault(n, s)
        return out

    def filler(self, residue):
        """Fewest literals whose code lengths sum to r (mod 8) with r+residue
        a good phase residue: returns a list of symbols."""
        byl = self.literal_of_length()
        best = {residue % 8: []}
        frontier = [residue % 8]
        while frontier:
            nxt = []
            for r in frontier:
                if r in self.good_residues:
                    return best[r]
                for n, s in sorted(byl.items()):
                    r2 = (r + n) % 8
                    if r2 not in best:
                        best[r2] = best[r] + [s]
                        nxt.append(r2)
            frontier = nxt
        raise ValueError("no filler reaches a good phase")

    def describe(self):
        counts = {}
        for n in self.lengths.values():
            counts[n] = counts.get(n, 0) + 1
        c, n = self.codes[EOB]
        return {
            "length_counts": {str(k): counts[k] for k in sorted(counts)},
            "eob_code": format(c, "0%db" % n),
            "good_phases": len(self.good),
            "bits_per_literal": round(self.bits_per_literal(), 4),
        }


def code_from_counts(counts, eob_len):
    """Symbols in canonical slot order: literals 0,1,2,... in order of
    length, EOB last among the code words of length eob_len."""
    lengths, sym = {}, 0
    for n in sorted(counts):
        k = counts[n] - (1 if n == eob_len else 0)
        for _ in range(k):
            lengths[sym] = n
            sym += 1
        if n == eob_len:
            lengths[EOB] = n
    return lengths


def search_codes(min_len, max_len, window=3):
    """All complete codes with lengths in `window` consecutive values of
    [min_len, max_len] and at most 256 literals + EOB, scored."""
    found = []
    seen = set()
    for lo in range(min_len, max_len + 1):
        hi = min(max_len, lo + window - 1)
        ls = list(range(lo, hi + 1))
        unit = 1 << hi

        def rec(i, left, counts):
            if i == len(ls) - 1:
                n = ls[i]
                per = 1 << (hi - n)
                if left % per:
                    return
                c = left // per
                full = {**counts, **({n: c} if c else {})}
                tot = sum(full.values())
                if 2 <= tot <= 257:
                    yield full
                return
            n = ls[i]
            per = 1 << (hi - n)
            for c in range(0, left // per + 1):
                more = {**counts, **({n: c} if c else {})}
                yield from rec(i + 1, left - c * per, more)

        for counts in rec(0, unit, {}):
            key = tuple(sorted(counts.items()))
            if key in seen:
                continue
            seen.add(key)
            if sum(counts.values()) - 1 > 256:
                continue
            for e in counts:
                try:
                    pc = PatternCode(code_from_counts(counts, e))
                except AssertionError:
                    continue
                if pc.good:
                    found.append(pc)
    # Best: every phase good (no filler ever), most bits per literal (the
    # most compressed bytes per inflated byte), then the fewest symbols.
    found.sort(
        key=lambda pc: (
            -len(pc.good_residues),
            -len(pc.good),
            -round(pc.bits_per_literal(), 6),
            len(pc.lengths),
        )
    )
    return found


# ------------------------------------------------------------ bit writer


class BitWriter:
    def __init__(self):
        self.out = bytearray()
        self.buf = 0
        self.n = 0

    @property
    def bitpos(self):
        return len(self.out) * 8 + self.n

    def bits(self, value, nbits):
        """Writes nbits of value, LSB first (deflate's header fields)."""
        self.buf |= value << self.n
        self.n += nbits
        while self.n >= 8:
            self.out.append(self.buf & 0xFF)
            self.buf >>= 8
            self.n -= 8

    def huff(self, code, nbits):
        """Writes a Huffman code word, MSB first."""
        rev = int(format(code, "0%db" % nbits)[::-1], 2) if nbits else 0
        self.bits(rev, nbits)

    def aligned(self, data):
        assert self.n == 0
        self.out += data

    def finish(self):
        if self.n:
            self.out.append(self.buf & 0xFF)
            self.buf, self.n = 0, 0
        return bytes(self.out)


# ------------------------------------------------------- block headers


def limited_huffman(freqs, maxlen):
    """Package-merge: code lengths <= maxlen for {sym: freq>0}; complete."""
    syms = sorted(s for s, f in freqs.items() if f > 0)
    if len(syms) == 1:  # a complete code needs two words
        other = 0 if syms[0] != 0 else 1
        return {syms[0]: 1, other: 1}
    leaves = sorted(((freqs[s], [s]) for s in syms), key=lambda t: t[0])
    pkgs = list(leaves)
    for _ in range(maxlen - 1):
        merged = [
            (pkgs[i][0] + pkgs[i + 1][0], pkgs[i][1] + pkgs[i + 1][1])
            for i in range(0, len(pkgs) - 1, 2)
        ]
        pkgs = sorted(leaves + merged, key=lambda t: t[0])
    out = {s: 0 for s in syms}
    for _, ss in pkgs[: 2 * len(syms) - 2]:
        for s in ss:
            out[s] += 1
    return out


def rle_lengths(lens):
    """Code length symbols (sym, extra value, extra bits) for RFC 1951 3.2.7."""
    out, i, n = [], 0, len(lens)
    while i < n:
        v = lens[i]
        run = 1
        while i + run < n and lens[i + run] == v:
            run += 1
        i += run
        if v == 0:
            while run >= 11:
                r = min(run, 138)
                out.append((18, r - 11, 7))
                run -= r
            if run >= 3:
                out.append((17, run - 3, 3))
                run = 0
            out.extend([(0, 0, 0)] * run)
        else:
            out.append((v, 0, 0))
            run -= 1
            while run >= 3:
                r = min(run, 6)
                out.append((16, r - 3, 2))
                run -= r
            out.extend([(v, 0, 0)] * run)
    return out


CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]


def dynamic_header(w, lengths, bfinal):
    """Writes a dynamic block header: literal/length code `lengths`
    (symbols 0..256), two distance codes of 1 bit (complete, never used)."""
    lit = [lengths.get(s, 0) for s in range(257)]
    dist = [1, 1]
    syms = rle_lengths(lit + dist)
    freqs = {}
    for s, _, _ in syms:
        freqs[s] = freqs.get(s, 0) + 1
    cl = limited_huffman(freqs, 7)
    clcodes = canonical_codes({s: n for s, n in cl.items() if n})
    cl_perm = [cl.get(s, 0) for s in CL_ORDER]
    hclen = 19
    while hclen > 4 and cl_perm[hclen - 1] == 0:
        hclen -= 1
    w.bits(bfinal, 1)
    w.bits(2, 2)
    w.bits(0, 5)  # HLIT: 257 codes
    w.bits(len(dist) - 1, 5)  # HDIST
    w.bits(hclen - 4, 4)
    for n in cl_perm[:hclen]:
        w.bits(n, 3)
    for s, ev, eb in syms:
        w.huff(*clcodes[s])
        if eb:
            w.bits(ev, eb)


def header_bits(lengths):
    w = BitWriter()
    dynamic_header(w, lengths, 0)
    return w.bitpos


def fixed_block(w, data, bfinal):
    w.bits(bfinal, 1)
    w.bits(1, 2)
    for b in data:
        if b < 144:
            w.huff(0x30 + b, 8)
        else:
            w.huff(0x190 + b - 144, 9)
    w.huff(0, 7)  # EOB


def npy_header(n):
    """The .npy (format 1.0) header of a 1-d uint8 array of n elements."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "|u1", "fortran_order": False, "shape": (n,)}
    )
    return buf.getvalue()


# ------------------------------------------------------------- stream


def write_pattern(w, start, phase, nbits):
    """Writes nbits of the pattern's bits from stream bit `start`, where the
    pattern index is phase; bytes that are whole go out aligned, so they are
    exactly a rotation of 07 00 00 FF FF."""
    assert w.bitpos == start
    end = start + nbits

    def idx(b):
        return (b - start + phase) % PERIOD

    while w.bitpos < end and w.n:
        w.bits(PBITS[idx(w.bitpos)], 1)
    nbytes = (end - w.bitpos) // 8
    if nbytes:
        i = idx(w.bitpos)
        assert i % 8 == 0
        k = i // 8
        rot = PATTERN[k:] + PATTERN[:k]
        w.aligned((rot * (nbytes // 5 + 1))[:nbytes])
    while w.bitpos < end:
        w.bits(PBITS[idx(w.bitpos)], 1)


class Parse:
    """Cumulative offsets and literals of the parse from one phase."""

    def __init__(self, code, phase):
        ps, pl, cs, cl = code.trajectory(phase)
        self.ps, self.cs = bytes(ps), bytes(cs)
        self.pcum = [0]
        for n in pl:
            self.pcum.append(self.pcum[-1] + n)
        self.ccum = [0]
        for n in cl:
            self.ccum.append(self.ccum[-1] + n)
        self.C = self.ccum[-1]  # bits per cycle (a multiple of 40)

    def offset(self, k):
        npre = len(self.ps)
        if k <= npre:
            return self.pcum[k]
        q, r = divmod(k - npre, len(self.cs))
        return self.pcum[-1] + q * self.C + self.ccum[r]

    def max_symbols(self, budget):
        """Most symbols whose bits fit in budget (>= 0)."""
        lo, hi = 0, 1
        while self.offset(hi) <= budget:
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.offset(mid) <= budget:
                lo = mid
            else:
                hi = mid
        return lo

    def literals(self, k):
        npre = len(self.ps)
        if k <= npre:
            return self.ps[:k]
        q, r = divmod(k - npre, len(self.cs))
        return self.ps + self.cs * q + self.cs[:r]


def generate(
    size,
    boundary_every=4 << 20,
    boundary_offset=32 << 10,
    one_block=False,
    npy=True,
    code=None,
):
    """Returns (deflate bytes, inflated bytes, info)."""
    if code is None:
        code = default_code()
    # Inflated layout: [npy header][n_data pattern literals].
    if npy:
        n_data = size - len(npy_header(size))
        hdr = npy_header(n_data)
        n_data = size - len(hdr)
        hdr = npy_header(n_data)
        if n_data < 0 or len(hdr) + n_data != size:
            raise ValueError("size too small for a .npy header")
    else:
        hdr, n_data = b"", size
    w = BitWriter()
    raw = []
    blocks = []  # dicts: kind, start bit
    small = n_data < 4096
    if hdr or small:
        # Tiny sizes: everything in the fixed block (still valid).
        data = hdr + (bytes(n_data) if small else b"")
        blocks.append({"kind": "fixed", "bit": 0, "literals": len(data)})
        fixed_block(w, data, 1 if small else 0)
        raw.append(data)
        if small:
            info = {"blocks": blocks, "code": code.describe(), "end_bit": w.bitpos}
            return w.finish(), b"".join(raw), info
    H = header_bits(code.lengths)
    eob_code, eob_len = code.codes[EOB]
    targets = []
    if not one_block:
        k = 1
        while True:
            t = k * boundary_every - boundary_offset
            if t >= 0:
                targets.append(8 * t)
            # Stop once past what the stream could reach (~1 byte/literal).
            if t > 2 * size + (1 << 20):
                break
            k += 1
    remaining = n_data
    max_fill = 8
    ti = 0
    pattern_bits = 0
    while True:
        start = w.bitpos
        fill = code.filler(start + H)
        fbits = sum(code.lengths[s] for s in fill)
        s = start + H + fbits
        goods = sorted(p for p in code.good if p % 8 == s % 8)
        phase = goods[0]
        parse = Parse(code, phase)
        while ti < len(targets) and targets[ti] < s + eob_len + 64:
            ti += 1  # too close to this block's start: skip
        final = ti >= len(targets)
        if not final:
            k = parse.max_symbols(targets[ti] - eob_len - s)
            if remaining - len(fill) - k < max_fill + 64:
                final = True
        if final:
            k = remaining - len(fill)
            if k < 0:
                raise ValueError("size too small")
        dynamic_header(w, code.lengths, 1 if final else 0)
        assert w.bitpos == start + H
        for sym in fill:
            w.huff(*code.codes[sym])
        nbits = parse.offset(k)
        write_pattern(w, s, phase, nbits)
        pattern_bits += nbits
        w.huff(eob_code, eob_len)
        lits = bytes(fill) + parse.literals(k)
        raw.append(lits)
        remaining -= len(lits)
        blocks.append(
            {
                "kind": "dynamic",
                "bit": start,
                "final": final,
                "filler": len(fill),
                "phase": phase,
                "literals": len(lits),
                "target_bit": None if final else targets[ti],
            }
        )
        ti += 1
        if final:
            break
    assert remaining == 0
    info = {"blocks": blocks, "code": code.describe(), "header_bits": H,
            "end_bit": w.bitpos}
    return w.finish(), b"".join(raw), info


_DEFAULT = {}


# What search_codes(1, 9) ranks first (about 15 s of CPU to redo it):
# 63 words of 7 bits, 129 of 8, 2 of 9, EOB the last 7-bit word, 0111110,
# which has two 0/1 changes, so no phase of the pattern decodes to it; the
# parse costs 8 bits per literal, so compressed ~= inflated size.
DEFAULT_CODE = ({7: 63, 8: 129, 9: 2}, 7)


def default_code(min_len=1, max_len=9):
    key = (min_len, max_len)
    if key == (1, 9) and key not in _DEFAULT:
        pc = PatternCode(code_from_counts(*DEFAULT_CODE))
        assert len(pc.good) == PERIOD  # checked, not trusted
        _DEFAULT[key] = pc
    if key not in _DEFAULT:
        found = search_codes(min_len, max_len)
        if not found:
            raise SystemExit("no code of lengths %d..%d parses the pattern" % key)
        _DEFAULT[key] = found[0]
    return _DEFAULT[key]


# ---------------------------------------------------------------- zip


def write_npz(path, deflated, raw, name="x.npy"):
    """A zip with one member `name`, method 8, data = deflated (ours)."""
    crc = zlib.crc32(raw) & 0xFFFFFFFF
    if len(raw) > 0xFFFFFFFE or len(deflated) > 0xFFFFFFFE:
        raise ValueError("zip64 not implemented: keep sizes under 4 GiB")
    fname = name.encode()
    dostime, dosdate = 0, (1980 - 1980) << 9 | 1 << 5 | 1  # 1980-01-01
    local = struct.pack(
        "<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, dostime, dosdate, crc,
        len(deflated), len(raw), len(fname), 0,
    ) + fname
    central = struct.pack(
        "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, dostime, dosdate, crc,
        len(deflated), len(raw), len(fname), 0, 0, 0, 0, 0, 0,
    ) + fname
    cd_off = len(local) + len(deflated)
    end = struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), cd_off, 0
    )
    with open(path, "wb") as f:
        f.write(local)
        f.write(deflated)
        f.write(central)
        f.write(end)
    return len(local)


# ------------------------------------------------------------- checks


class ZStream(ctypes.Structure):
    _fields_ = [
        ("next_in", ctypes.c_void_p), ("avail_in", ctypes.c_uint),
        ("total_in", ctypes.c_ulong), ("next_out", ctypes.c_void_p),
        ("avail_out", ctypes.c_uint), ("total_out", ctypes.c_ulong),
        ("msg", ctypes.c_char_p), ("state", ctypes.c_void_p),
        ("zalloc", ctypes.c_void_p), ("zfree", ctypes.c_void_p),
        ("opaque", ctypes.c_void_p), ("data_type", ctypes.c_int),
        ("adler", ctypes.c_ulong), ("reserved", ctypes.c_ulong),
    ]


def zlib_block_boundaries(deflated, out_size):
    """Bit offsets where libz's inflate(Z_BLOCK) stops after an end-of-block
    code, i.e. where each next block header starts; None without libz."""
    path = ctypes.util.find_library("z")
    if not path:
        return None
    lib = ctypes.CDLL(path)
    lib.zlibVersion.restype = ctypes.c_char_p
    st = ZStream()
    inb = ctypes.create_string_buffer(deflated, len(deflated))
    outb = ctypes.create_string_buffer(max(out_size, 1))
    if lib.inflateInit2_(ctypes.byref(st), -15, lib.zlibVersion(), ctypes.sizeof(st)):
        raise RuntimeError("inflateInit2 failed")
    st.next_in = ctypes.addressof(inb)
    st.avail_in = len(deflated)
    st.next_out = ctypes.addressof(outb)
    st.avail_out = max(out_size, 1)
    stops = []
    try:
        while True:
            ret = lib.inflate(ctypes.byref(st), 5)  # Z_BLOCK
            if ret == 1:  # Z_STREAM_END
                break
            if ret != 0:
                raise RuntimeError("inflate: %d %s" % (ret, st.msg))
            if st.data_type & 128:
                stops.append(st.total_in * 8 - (st.data_type & 7))
    finally:
        lib.inflateEnd(ctypes.byref(st))
    out = []
    for b in stops:  # the first stop may be before any block
        if not out or out[-1] != b:
            out.append(b)
    return out


def pattern_mask(seg):
    """Bytes of seg inside a run of >= 10 bytes that follows 07 00 00 FF FF
    periodically (any rotation)."""
    n = len(seg)
    mask = np.zeros(n, dtype=bool)
    pat = np.frombuffer(PATTERN * (n // 5 + 2), np.uint8)
    for r in range(5):
        ok = np.empty(n + 2, dtype=np.int8)
        ok[0] = ok[-1] = 0
        ok[1:-1] = seg == pat[r : r + n]
        d = np.diff(ok)
        starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]
        keep = ends - starts >= 10
        mark = np.zeros(n + 1, dtype=np.int64)
        np.add.at(mark, starts[keep], 1)
        np.add.at(mark, ends[keep], -1)
        mask |= np.cumsum(mark[:n]) > 0
    return mask


def stored_candidates(b, lo, hi):
    """Positions i in [lo, hi), i >= 1: LEN at i, NLEN == ~LEN at i+2, and
    byte i-1 has its top 3 bits zero. Returns (positions, bytes before)."""
    lo = max(lo, 1)
    hi = min(hi, len(b) - 3)
    if hi <= lo:
        return np.zeros(0, np.int64), np.zeros(0, np.uint8)
    seg = b[lo - 1 : hi + 3].astype(np.uint16)
    m = hi - lo
    ln = seg[1 : 1 + m] | (seg[2 : 2 + m] << 8)
    nl = seg[3 : 3 + m] | (seg[4 : 4 + m] << 8)
    ok = ((ln ^ nl) == 0xFFFF) & ((seg[:m] & 0xE0) == 0)
    pos = np.nonzero(ok)[0]
    return pos + lo, seg[pos].astype(np.uint8)


def dynamic_candidates(b, lo, hi):
    """Bit offsets in [8*lo, 8*hi) with BFINAL=0, BTYPE=2 and HLIT <= 29."""
    hi = min(hi, len(b))
    seg = b[lo : min(hi + 1, len(b))].astype(np.uint16)
    m = hi - lo
    pair = seg[:m].copy()
    pair[: len(seg) - 1] |= seg[1 : m + 1] << 8 if len(seg) > m else seg[1:] << 8
    n = 0
    for j in range(8):  # header starting at bit j of each byte
        v = (pair >> j) & 0xFF
        n += int((((v & 7) == 4) & ((v >> 3) <= 29)).sum())
    return n


def stats(deflated, chunk):
    """Per `chunk` compressed bytes: stored-block and dynamic-header
    candidates, and the share of bytes inside the periodic pattern."""
    b = np.frombuffer(deflated, dtype=np.uint8)
    per_chunk, tot_pat, tot_cand, tot_odd = [], 0, 0, 0
    step = min(chunk, 4 << 20)  # bounded memory
    for lo in range(0, len(b), chunk):
        hi = min(lo + chunk, len(b))
        pat = cand = odd = dyn = 0
        for a in range(lo, hi, step):
            z = min(a + step, hi)
            e0, e1 = max(a - 16, 0), min(z + 16, len(b))
            pat += int(pattern_mask(b[e0:e1])[a - e0 : z - e0].sum())
            pos, prev = stored_candidates(b, a, z)
            cand += len(pos)
            odd += int((prev != 0x07).sum())
            dyn += dynamic_candidates(b, a, z)
        tot_pat, tot_cand, tot_odd = tot_pat + pat, tot_cand + cand, tot_odd + odd
        per_chunk.append(
            {
                "chunk": lo // chunk,
                "bytes": hi - lo,
                "stored_candidates": cand,
                "stored_candidates_prev_not_07": odd,
                "dynamic_candidates_hlit_ok": dyn,
                "pattern_fraction": round(pat / (hi - lo), 6),
            }
        )
    return {
        "compressed_bytes": len(b),
        "pattern_bytes": tot_pat,
        "pattern_fraction": round(tot_pat / max(len(b), 1), 6),
        "stored_candidates": tot_cand,
        "stored_candidates_prev_not_07": tot_odd,
        "per_chunk": per_chunk,
    }


def verify(deflated, raw, info, npz_path=None, npy=True):
    d = zlib.decompressobj(-15)
    out = d.decompress(deflated)
    assert d.eof, "stream does not end"
    assert d.unused_data == b"", "bytes after the stream"
    assert out == raw, "inflated bytes differ (%d vs %d)" % (len(out), len(raw))
    res = {"zlib_inflate": "ok", "inflated_bytes": len(out)}
    stops = zlib_block_boundaries(deflated, len(raw))
    if stops is not None:
        # Z_BLOCK stops after every EOB: at each next header, and at the
        # end of the last block.
        want = [blk["bit"] for blk in info["blocks"]][1:] + [info["end_bit"]]
        assert stops == want, "Z_BLOCK stops %r != %r" % (stops[:8], want[:8])
        res["zlib_Z_BLOCK_boundaries"] = "match (%d)" % len(stops)
    if npy:
        arr = np.load(io.BytesIO(raw))
        assert arr.dtype == np.uint8 and arr.ndim == 1
        res["npy_load"] = "ok, shape %r" % (arr.shape,)
    if npz_path:
        import zipfile

        with zipfile.ZipFile(npz_path) as z:
            bad = z.testzip()
            assert bad is None, "testzip: %s" % bad
            zi = z.getinfo("x.npy")
            assert zi.compress_type == 8
        with np.load(npz_path) as f:
            x = f["x"]
        hdr_len = len(raw) - x.size
        assert x.tobytes() == raw[hdr_len:]
        res["npz"] = "testzip ok, np.load ok, x.shape %r" % (x.shape,)
    return res


# ---------------------------------------------------------------- cli


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_deflate", nargs="?")
    ap.add_argument("out_raw", nargs="?")
    ap.add_argument("--size", type=int, default=64 << 20,
                    help="inflated bytes (default 64 MiB)")
    ap.add_argument("--boundary-every", type=int, default=4 << 20,
                    help="compressed bytes between real boundaries (4 MiB)")
    ap.add_argument("--boundary-offset", type=int, default=32 << 10,
                    help="each boundary this many bytes before the multiple")
    ap.add_argument("--one-block", action="store_true",
                    help="one dynamic block for the whole pattern region")
    ap.add_argument("--npz", help="also write a .npz with member x.npy")
    ap.add_argument("--no-npy-header", action="store_true",
                    help="inflated bytes are pattern literals only")
    ap.add_argument("--min-len", type=int, default=1)
    ap.add_argument("--max-len", type=int, default=9)
    ap.add_argument("--search", action="store_true",
                    help="list the best codes of the length range and exit")
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--stats", help="write the JSON stats here too")
    a = ap.parse_args(argv)
    if not (1 <= a.min_len <= a.max_len <= 15):
        ap.error("need 1 <= --min-len <= --max-len <= 15")
    t0 = time.time()
    if a.search:
        found = search_codes(a.min_len, a.max_len)
        print("%d codes parse the pattern without EOB from some phase" % len(found))
        for pc in found[:15]:
            print(json.dumps(pc.describe()))
        return 0
    if not a.out_deflate or not a.out_raw:
        ap.error("OUT.deflate and OUT.raw are required")
    npy = not a.no_npy_header
    if a.npz and not npy:
        ap.error("--npz needs the .npy header (drop --no-npy-header)")
    code = default_code(a.min_len, a.max_len)
    deflated, raw, info = generate(
        a.size, a.boundary_every, a.boundary_offset, a.one_block, npy, code
    )
    with open(a.out_deflate, "wb") as f:
        f.write(deflated)
    with open(a.out_raw, "wb") as f:
        f.write(raw)
    npz_off = None
    if a.npz:
        npz_off = write_npz(a.npz, deflated, raw)
    report = {
        "code": info["code"],
        "dynamic_header_bits": info.get("header_bits"),
        "blocks": [
            dict(blk, byte=blk["bit"] // 8, bit_in_byte=blk["bit"] % 8)
            for blk in info["blocks"]
        ],
        "ratio_compressed_per_inflated": round(len(deflated) / max(len(raw), 1), 4),
    }
    if npz_off is not None:
        report["npz_data_offset"] = npz_off
    report.update(stats(deflated, a.boundary_every))
    if not a.no_verify:
        report["verify"] = verify(deflated, raw, info, a.npz, npy)
    report["seconds"] = round(time.time() - t0, 2)
    text = json.dumps(report, indent=1)
    if a.stats:
        with open(a.stats, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
