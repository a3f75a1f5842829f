#!/usr/bin/env python3
"""Every zip method `zipfile` reads, checked against the real producer.

    python3 scripts/interop_zip_methods.py             # the interop check (CI)
    python3 scripts/interop_zip_methods.py fixtures    # rewrite the fixtures

Needs NumPy and `backports.zstd` (`pip install backports.zstd`), whose
`zipfile` is Python 3.14's: it writes and reads Zstandard members
(`ZIP_ZSTANDARD`) besides stored, deflate, bzip2 and LZMA.

``fixtures`` writes the small archives `tests/zip_methods.rs` reads
(fixtures/zip_methods/):

- valid/: for each of bzip2, LZMA and Zstandard, an archive of members of
  every kind (numbers, booleans, strings, records, objects, 0-d, empty, one
  larger member of several blocks) written with that method, one written
  through ``ZipFile.open(..., "w")`` (a data descriptor and zip64 sizes,
  as ``np.savez`` streams members), and one archive mixing all five
  methods; beside them ``expected.npz`` (``np.savez_compressed`` of the
  same arrays) and a .json naming each member's method;
- invalid/: hostile variants of each method (streams cut short, corrupt
  bytes, sizes that lie either way, bombs: a few bytes that decompress to
  megabytes, or claim gigabytes; LZMA properties and dictionaries, zstd
  windows), each with the error ndnpy gives and what NumPy does.

The check (no argument):

1. writes the same archives afresh with this Python's `zipfile`, and has
   ``ndnpy convert`` rewrite each as a stored archive: NumPy loads the
   rewrite equal to its own view of the original (ndnpy read every member
   as NumPy reads it);
2. has ``ndnpy convert --compress zstd[:LEVEL]`` rewrite each, then NumPy,
   with ``sys.modules['zipfile'] = backports.zstd.zipfile`` before NumPy
   is imported, loads the Zstandard archive equal to the original, and
   ``zipfile.testzip`` finds every CRC right.

CARGO and NDNPY_CARGO_ARGS as in interop_npz.py. Exits non-zero on any
mismatch.
"""

import io
import json
import os
import shlex
import struct
import subprocess
import sys
import tempfile
import zlib

# NumPy must see the Zstandard-capable zipfile from its first import.
from backports.zstd import zipfile  # noqa: E402

sys.modules["zipfile"] = zipfile

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures", "zip_methods")
FAILURES = []

METHODS = {
    "stored": zipfile.ZIP_STORED,
    "deflate": zipfile.ZIP_DEFLATED,
    "bzip2": zipfile.ZIP_BZIP2,
    "lzma": zipfile.ZIP_LZMA,
    "zstd": zipfile.ZIP_ZSTANDARD,
}


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


def arrays():
    """Members of every kind, small but for one of several blocks."""
    rec = np.zeros(4, dtype=[("id", "<i4"), ("pos", "<f8", (2,)), ("tag", "S3")])
    rec["id"] = [1, 2, 3, 4]
    rec["pos"] = [[0.5, 1.5], [2.5, 3.5], [4.5, 5.5], [6.5, 7.5]]
    rec["tag"] = [b"a", b"bc", b"def", b""]
    objects = np.empty(4, dtype=object)
    objects[:] = ["text", None, 3, [1.5, "x"]]
    i = np.arange(100_000)
    return {
        "floats": np.linspace(-1, 1, 60).reshape(6, 10),
        "fortran": np.asfortranarray(np.arange(24, dtype=np.int16).reshape(4, 6)),
        "big_endian": np.arange(10, dtype=">u4"),
        "bools": np.arange(17) % 3 == 0,
        "words": np.array(["alpha", "β", "", "gamma delta"]),
        "bytes": np.array([b"x", b"yz", b""]),
        "records": rec,
        "objects": objects,
        "zero_d": np.array(3.25),
        "empty": np.zeros((0, 3), dtype=np.float32),
        # 800 kB, compressible: streams span many of the reader's buffers
        # (and bzip2 blocks).
        "series": ((i % 1000) * 0.25 + (i // 1000)).astype(np.float64),
    }


def npy_bytes(a):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, allow_pickle=True)
    return buf.getvalue()


def write_archive(path, members, streamed=()):
    """`members`: name -> (array, method name). Names in `streamed` go
    through ZipFile.open(..., "w") with zip64, as np.savez writes."""
    with zipfile.ZipFile(path, "w") as z:
        for name, (a, method) in members.items():
            data = npy_bytes(a)
            if name in streamed:
                info = zipfile.ZipInfo(name + ".npy")
                info.compress_type = METHODS[method]
                with z.open(info, "w", force_zip64=True) as f:
                    f.write(data)
            else:
                z.writestr(name + ".npy", data, compress_type=METHODS[method])


def archives(out):
    """Writes the valid archives into `out`; gives {file: {member: method}}."""
    made = {}
    arrs = arrays()
    for method in ("bzip2", "lzma", "zstd"):
        name = f"{method}.npz"
        write_archive(os.path.join(out, name), {k: (a, method) for k, a in arrs.items()})
        made[name] = {k: method for k in arrs}
        name = f"{method}_streamed.npz"
        members = {k: (a, method) for k, a in arrs.items() if k in ("series", "records", "objects")}
        write_archive(os.path.join(out, name), members, streamed=set(members))
        made[name] = {k: method for k in members}
    order = ["stored", "deflate", "bzip2", "lzma", "zstd"]
    mixed = {k: (a, order[n % len(order)]) for n, (k, a) in enumerate(arrs.items())}
    mixed["series"] = (arrs["series"], "zstd")
    write_archive(os.path.join(out, "mixed.npz"), mixed)
    made["mixed.npz"] = {k: m for k, (_, m) in mixed.items()}
    return made


# -- hostile variants -------------------------------------------------------


def build_zip(members):
    """A zip archive from (name, method, flags, crc, size, payload) tuples,
    with zip64 sizes where they need them."""
    out = bytearray()
    central = bytearray()
    for name, method, flags, crc, size, payload in members:
        name = name.encode()
        zip64 = size >= 0xFFFFFFFF or len(payload) >= 0xFFFFFFFF
        extra = struct.pack("<HHQQ", 1, 16, size, len(payload)) if zip64 else b""
        s32 = 0xFFFFFFFF if zip64 else size
        c32 = 0xFFFFFFFF if zip64 else len(payload)
        version = 63 if method == 93 else (45 if zip64 else 20)
        offset = len(out)
        out += struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, version, flags, method, 0, 33, crc, c32, s32, len(name), len(extra)
        )
        out += name + extra + payload
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50, version, version, flags, method, 0, 33, crc, c32, s32,
            len(name), len(extra), 0, 0, 0, 0, offset,
        )
        central += name + extra
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(out), 0)
    return bytes(out + central + end)


def compress(method, data):
    """`data` compressed as zipfile stores it for `method`."""
    c = zipfile._get_compressor(METHODS[method])
    return c.compress(data) + c.flush()


def hostile():
    """name -> (zip bytes, member, accepted errors, note)."""
    x = np.zeros(10_000)
    x[::7] = np.arange(len(x[::7]))
    data = npy_bytes(x)
    crc = zlib.crc32(data)
    code = {m: METHODS[m] for m in ("bzip2", "lzma", "zstd")}
    # A member that decompresses to 24 MB of zeros from a few hundred
    # bytes, under a header claiming 2**31 float64 (16 GiB).
    header = npy_bytes(np.zeros(0))
    header = header.replace(b"(0,)", b"(2147483648,)")
    header = header[: len(header)]
    bomb_body = b"\0" * (24 << 20)
    out = {}
    for m in ("bzip2", "lzma", "zstd"):
        body = compress(m, data)
        mid = len(body) // 2
        corrupt = bytearray(body)
        for k in range(mid, min(mid + 16, len(body))):
            corrupt[k] ^= 0xA5
        lzma_flag = 2 if m == "lzma" else 0
        cases = {
            f"{m}_truncated": (
                build_zip([("x.npy", code[m], lzma_flag, crc, len(data), body[:mid])]),
                ["CorruptMember", "TruncatedData", "BadCrc"],
                "the compressed stream cut in half (sizes as declared for the whole)",
            ),
            f"{m}_corrupt": (
                build_zip([("x.npy", code[m], lzma_flag, crc, len(data), bytes(corrupt))]),
                ["CorruptMember", "BadCrc", "TruncatedData"],
                "16 bytes in the middle of the stream flipped",
            ),
            f"{m}_size_too_small": (
                build_zip([("x.npy", code[m], lzma_flag, crc, len(data) // 3, body)]),
                ["TruncatedData", "BadCrc", "CorruptMember"],
                "the stream decompresses past the size the archive declares",
            ),
            f"{m}_claims_huge": (
                build_zip([("x.npy", code[m], lzma_flag, crc, 1 << 36, body)]),
                ["CorruptMember", "TruncatedData", "BadCrc"],
                "a member of a few kB declaring 64 GiB (zip64)",
            ),
            f"{m}_bomb": (
                build_zip([("x.npy", code[m], lzma_flag, 0, (1 << 34) + len(header), compress(m, header + bomb_body))]),
                ["CorruptMember", "TruncatedData", "BadCrc"],
                "a header claiming 16 GiB of float64, a stream of 24 MB of zeros from a few hundred bytes, 16 GiB declared",
            ),
        }
        out.update({k: (v[0], "x", v[1], v[2]) for k, v in cases.items()})
    # zipfile's LZMA header: properties of another size than 5; a
    # dictionary of 1.5 GiB on a tiny member that declares 8 GiB.
    body = compress("lzma", data)
    bad_props = body[:2] + struct.pack("<H", 4) + body[4:]
    out["lzma_properties_size"] = (
        build_zip([("x.npy", 14, 2, crc, len(data), bad_props)]),
        "x", ["CorruptMember"], "zipfile's LZMA header says the properties take 4 bytes",
    )
    huge_dict = body[:5] + struct.pack("<I", 0x60000000) + body[9:]
    out["lzma_huge_dictionary"] = (
        build_zip([("x.npy", 14, 2, crc, 1 << 33, huge_dict)]),
        "x", ["CorruptMember", "TruncatedData", "BadCrc"],
        "the properties claim a 1.5 GiB dictionary, the archive 8 GiB of data",
    )
    # A zstd frame whose window is 2**31 bytes (the descriptor byte).
    frame = bytearray(compress("zstd", data))
    descriptor = frame[4]
    if descriptor & 0x20 == 0:  # a window descriptor follows
        frame[5] = (31 - 10) << 3
    out["zstd_window_too_large"] = (
        build_zip([("x.npy", 93, 0, crc, len(data), bytes(frame))]),
        "x", ["CorruptMember"], "the frame asks for a 2 GiB window (zstd's default limit is 128 MiB)",
    )
    return out


def numpy_verdict(path, member):
    try:
        with np.load(path, allow_pickle=True) as z:
            z[member]
        return "loads"
    except Exception as e:  # noqa: BLE001
        return f"error: {type(e).__name__}: {str(e)[:120]}"


def write_fixtures():
    valid = os.path.join(FIXTURES, "valid")
    invalid = os.path.join(FIXTURES, "invalid")
    os.makedirs(valid, exist_ok=True)
    os.makedirs(invalid, exist_ok=True)
    np.savez_compressed(os.path.join(valid, "expected.npz"), **arrays())
    for name, methods in archives(valid).items():
        path = os.path.join(valid, name)
        check_numpy(path, name)
        note = {"expected": "expected.npz", "methods": methods}
        with open(path[:-4] + ".json", "w") as f:
            json.dump(note, f, indent=1, ensure_ascii=False)
            f.write("\n")
    for name, (data, member, errors, note) in hostile().items():
        path = os.path.join(invalid, name + ".npz")
        with open(path, "wb") as f:
            f.write(data)
        with open(path[:-4] + ".json", "w") as f:
            entry = {"error": errors, "member": member, "note": note, "numpy": numpy_verdict(path, member)}
            json.dump(entry, f, indent=1)
            f.write("\n")
    total = sum(os.path.getsize(os.path.join(d, n)) for d in (valid, invalid) for n in os.listdir(d))
    print(f"fixtures written to {FIXTURES} ({total} bytes)")


# -- the check --------------------------------------------------------------


def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.hasobject:
        return all(repr(x) == repr(y) for x, y in zip(a.ravel(), b.ravel()))
    return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def check_numpy(path, context, want=None):
    """NumPy (with backports' zipfile) loads `path`; equal to `want` if given."""
    want = arrays() if want is None else want
    with np.load(path, allow_pickle=True) as z:
        for k in z.files:
            if k in want and not same(z[k], want[k]):
                fail(f"{context}: NumPy's {k} is not the array written")
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
        if bad:
            fail(f"{context}: zipfile finds a bad CRC in {bad}")


def ndnpy(*args):
    cargo = os.environ.get("CARGO", "cargo")
    extra = shlex.split(os.environ.get("NDNPY_CARGO_ARGS", ""))
    cmd = [cargo, "run", "--quiet", *extra, "-p", "ndnpy-cli", "--features", "zip-methods", "--", *args]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"ndnpy {' '.join(args)}: {result.stderr.strip()[:400]}")
    return result.returncode == 0


def check():
    with tempfile.TemporaryDirectory() as tmp:
        made = archives(tmp)
        for name in made:
            src = os.path.join(tmp, name)
            with np.load(src, allow_pickle=True) as z:
                want = {k: z[k] for k in z.files}
            stored = os.path.join(tmp, "stored_" + name)
            if ndnpy("convert", src, stored):
                check_numpy(stored, f"{name} read by ndnpy", want)
            for spec in ("zstd", "zstd:1", "zstd:19"):
                out = os.path.join(tmp, f"{spec.replace(':', '_')}_{name}")
                if ndnpy("convert", "--compress", spec, src, out):
                    check_numpy(out, f"{name} written by ndnpy with {spec}", want)
                    with zipfile.ZipFile(out) as z:
                        methods = {i.compress_type for i in z.infolist()}
                    if methods != {zipfile.ZIP_ZSTANDARD}:
                        fail(f"{name} written with {spec}: methods {methods}")
            print(f"ok: {name}")
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        sys.exit(1)
    print("every method read as NumPy reads it; NumPy loads ndnpy's Zstandard archives")


if __name__ == "__main__":
    if sys.argv[1:] == ["fixtures"]:
        write_fixtures()
        sys.exit(1 if FAILURES else 0)
    check()
