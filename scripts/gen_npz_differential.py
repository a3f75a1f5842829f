#!/usr/bin/env python3
"""Builds odd and hostile .npz archives with Python's zipfile/struct and
records what np.load makes of each, for tests/npz_differential.rs.

For every case NAME it writes NAME.npz and NAME.json:

    {"note": ...,
     "numpy": {"open_error": "..."}                      # np.load refused it
           or {"files": [...],                           # z.files, in order
               "arrays": {key: {"descr", "shape",        # z[key], and its values as
                                "le_hex"}                # little-endian C-order bytes
                           or {"error": "..."}}},        # z[key] raised
     "ours": {"open_error": Variant}                      # where ndnpy differs on
          or {"member_errors": {key: Variant}}}           # purpose (see note)

Usage: gen_npz_differential.py [--out DIR]   (default: fixtures/npz/differential)
The content is deterministic (fixed seeds), so rerunning changes nothing.
"""

import argparse
import io
import json
import os
import struct
import sys
import zipfile
import zlib

import numpy as np

RNG = np.random.default_rng(20261123)


def npy(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


class Builder:
    """Writes local headers and data, then a central directory of entries
    that may disagree with them."""

    def __init__(self, prefix=b""):
        self.out = bytearray(prefix)
        self.cd = []

    def add(self, name, payload, method=0, flags=0, local_name=None, cextra=b"",
            lextra=b"", crc=None, version=20):
        name = name if isinstance(name, bytes) else name.encode()
        local_name = name if local_name is None else local_name
        raw = payload
        if method == 8:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            raw = c.compress(payload) + c.flush()
        crc = zlib.crc32(payload) if crc is None else crc
        offset = len(self.out)
        self.out += struct.pack("<4s5H3L2H", b"PK\x03\x04", version, flags, method, 0, 0x21,
                                crc, len(raw), len(payload), len(local_name), len(lextra))
        self.out += local_name + lextra + raw
        entry = dict(name=name, flags=flags, method=method, crc=crc, csize=len(raw),
                     size=len(payload), offset=offset, extra=cextra, version=version)
        self.cd.append(entry)
        return entry

    def alias(self, entry, **changes):
        """Another directory entry for the same local header."""
        e = dict(entry)
        e.update(changes)
        self.cd.append(e)
        return e

    def finish(self, count=None, comment=b""):
        start = len(self.out)
        for e in self.cd:
            self.out += struct.pack("<4s4B4H3L5H2L", b"PK\x01\x02", 20, 3, e["version"], 0,
                                    e["flags"], e["method"], 0, 0x21, e["crc"], e["csize"],
                                    e["size"], len(e["name"]), len(e["extra"]), 0, 0, 0, 0,
                                    e["offset"])
            self.out += e["name"] + e["extra"]
        size = len(self.out) - start
        n = len(self.cd) if count is None else count
        self.out += struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, n, n, size, start, len(comment))
        self.out += comment
        return bytes(self.out)


def zipfile_archive(members, compression=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data, method in members:
            z.writestr(name, data, compress_type=method if method is not None else compression)
    return buf.getvalue()


def cases():
    i4 = np.arange(5, dtype="<i4")
    f8 = RNG.standard_normal(10)
    u8 = RNG.integers(0, 255, (3, 4), dtype=np.uint8)
    i8 = RNG.integers(-1000, 1000, 7, dtype="<i8")

    # Info-ZIP Unicode Path extra field (0x7075) naming another member,
    # with a correct CRC of the real name: NumPy ignores the field.
    b = Builder()
    b.add("b.npy", npy(i4))
    up = struct.pack("<BL", 1, zlib.crc32(b"a.npy")) + b"b.npy"
    b.add("a.npy", npy(f8), cextra=struct.pack("<HH", 0x7075, len(up)) + up)
    yield "unicode_path_extra", b.finish(), "0x7075 on a.npy says b.npy; NumPy ignores it", None

    # Local header name differs from the directory's.
    b = Builder()
    b.add("x.npy", npy(i4), local_name=b"y.npy")
    b.add("z.npy", npy(f8))
    yield "local_name_differs", b.finish(), "x.npy's local header says y.npy: BadZipFile for x only", None

    # Overlapping-entry zip bomb: several directory entries for one deflated
    # member (Python 3.12 refuses all but one; 3.11 reads every one).
    b = Builder()
    big = b.add("x.npy", npy(np.zeros(100_000)), method=8)
    for _ in range(3):
        b.alias(big)
    yield ("overlapping_aliases", b.finish(),
           "four entries share x.npy's bytes; NumPy's z['x'] reads the last entry, which "
           "ndnpy (like Python 3.12) refuses as overlapping",
           {"member_errors": {"x": "InvalidArchive"}})

    # An entry whose data runs over the next member's local header.
    b = Builder()
    first = b.add("x.npy", npy(i8))
    b.add("y.npy", npy(i4))
    first["csize"] += 40  # now covers the start of y's local header
    yield ("data_overlaps_next", b.finish(),
           "x.npy's compressed size reaches into y.npy's local header: NumPy 3.11 reads x "
           "(stored, it stops at the declared size); ndnpy refuses x as overlapping",
           {"member_errors": {"x": "InvalidArchive"}})

    # Names with NUL: Python cuts the name there, so NumPy's key is 'a'.
    b = Builder()
    b.add(b"a\0b.npy", npy(i4))
    b.add(b"c.npy\0junk", npy(f8))
    yield "nul_in_name", b.finish(), "names cut at NUL, as Python's ZipInfo does", None

    # Invalid UTF-8 under the UTF-8 flag: NumPy refuses the archive.
    b = Builder()
    b.add(b"\xff\xfe.npy", npy(i4), flags=0x800)
    yield "invalid_utf8_name", b.finish(), "UnicodeDecodeError at open", {"open_error": "InvalidArchive"}

    # CP437 names without the flag, UTF-8 with it.
    b = Builder()
    b.add(b"caf\x82.npy", npy(i4))
    b.add("naïve.npy".encode(), npy(f8), flags=0x800)
    yield "cp437_and_utf8_names", b.finish(), "CP437 without flag 11, UTF-8 with it", None

    # End record entry count disagrees with the directory: NumPy reads the
    # directory by its size.
    b = Builder()
    b.add("x.npy", npy(i4))
    b.add("y.npy", npy(f8))
    b.add("w.npy", npy(u8))
    yield "end_count_too_small", b.finish(count=1), "end record says 1 entry, directory has 3", None
    b = Builder()
    b.add("x.npy", npy(i4))
    yield "end_count_too_large", b.finish(count=9), "end record says 9 entries, directory has 1", None

    # Compression methods NumPy reads (bzip2, LZMA) or not (99), beside a
    # stored member.
    data = zipfile_archive([("s.npy", npy(i4), zipfile.ZIP_STORED),
                            ("bz.npy", npy(f8), zipfile.ZIP_BZIP2),
                            ("lz.npy", npy(i8), zipfile.ZIP_LZMA)])
    yield ("bzip2_lzma", data,
           "NumPy reads bzip2 and LZMA members; ndnpy with its features bzip2 and lzma too, without them it refuses them",
           {"member_errors_without": {"bz": ["bzip2", "UnsupportedMember"], "lz": ["lzma", "UnsupportedMember"]}})
    b = Builder()
    b.add("s.npy", npy(i4))
    b.add("aes.npy", npy(f8), method=99)
    yield "method_99", b.finish(), "method 99 (AES): NotImplementedError for that member", {
        "member_errors": {"aes": "UnsupportedMember"}}

    # A zip64 local header offset of 2^63 + 5.
    b = Builder()
    b.add("s.npy", npy(i4))
    e = b.add("far.npy", npy(f8))
    e["offset"] = 0xFFFFFFFF
    e["extra"] = struct.pack("<HHQ", 1, 8, (1 << 63) + 5)
    yield "zip64_offset_huge", b.finish(), "far.npy's offset is 2^63+5: error for that member only", {
        "member_errors": {"far": "InvalidArchive"}}

    # Repeated names: NumPy lists both and reads the last.
    b = Builder()
    b.add("x.npy", npy(i4))
    b.add("x.npy", npy(f8))
    yield "duplicate_names", b.finish(), "z['x'] is the last entry", None

    # Member 'x' (no suffix) beside 'x.npy': NumPy's z['x'] is the exact one.
    b = Builder()
    b.add("x", npy(i8))
    b.add("x.npy", npy(i4))
    b.add("y.npy.npy", npy(u8))
    yield "suffix_collisions", b.finish(), "exact name first, then name.npy", None

    # A zip version NumPy will not extract, and a corrupt extra field: both
    # make np.load refuse the whole archive.
    b = Builder()
    b.add("x.npy", npy(i4), version=64)
    yield "extract_version_64", b.finish(), "NotImplementedError at open", {"open_error": "InvalidArchive"}
    b = Builder()
    b.add("x.npy", npy(i4), cextra=struct.pack("<HH", 0x5455, 16))
    yield "corrupt_extra", b.finish(), "extra field longer than its space", {"open_error": "InvalidArchive"}

    # An archive comment that holds a stray end-record signature: Python
    # takes the last signature and fails.
    b = Builder()
    b.add("x.npy", npy(i4))
    yield ("comment_with_end_signature", b.finish(comment=b"PK\x05\x06" + bytes(range(1, 40))),
           "the last PK\\x05\\x06 is inside the comment", None)

    # Data before the archive: np.load does not recognise it as a zip file.
    b = Builder(prefix=b"#!/bin/sh\nexit 0\n")
    b.add("x.npy", npy(i4))
    yield "prepended_data", b.finish(), "np.load dispatches on the first bytes", {"open_error": "InvalidArchive"}

    # Fortran-order and big-endian members, stored and deflated.
    b = Builder()
    b.add("f.npy", npy(np.asfortranarray(RNG.standard_normal((3, 4)))), method=8)
    b.add("be.npy", npy(np.arange(6, dtype=">i4").reshape(2, 3)))
    yield "layouts", b.finish(), "Fortran order and big-endian data", None

    # A bad CRC on one member only.
    b = Builder()
    b.add("ok.npy", npy(i4))
    b.add("bad.npy", npy(f8), crc=12345)
    yield "bad_crc_one_member", b.finish(), "BadZipFile for bad only", None


def numpy_view(path):
    try:
        z = np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001 - any refusal counts
        return {"open_error": f"{type(e).__name__}: {e}"}
    view = {"files": list(z.files), "arrays": {}}
    for key in dict.fromkeys(z.files):
        try:
            a = z[key]
            if isinstance(a, np.ndarray):
                le = a.astype(a.dtype.newbyteorder("<"), order="C")
                view["arrays"][key] = {"descr": a.dtype.str, "shape": list(a.shape),
                                       "le_hex": le.tobytes().hex()}
            else:
                view["arrays"][key] = {"error": "not an array"}
        except Exception as e:  # noqa: BLE001
            view["arrays"][key] = {"error": f"{type(e).__name__}: {e}"[:300]}
    return view


def main():
    parser = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "fixtures", "npz", "differential"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    n = 0
    for name, data, note, ours in cases():
        path = os.path.join(args.out, name + ".npz")
        with open(path, "wb") as f:
            f.write(data)
        record = {"note": note, "numpy": numpy_view(path)}
        if ours:
            record["ours"] = ours
        with open(os.path.join(args.out, name + ".json"), "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
        n += 1
    print(f"wrote {n} archives to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
