#!/usr/bin/env python3
"""NumPy <-> ndnpy interop check for .npz archives.

    python3 scripts/interop_npz.py            # from the repository root

1. NumPy writes archives with ``np.savez`` and ``np.savez_compressed``
   (many dtypes, both byte orders, C and Fortran order, 0-d and empty
   arrays, names with dots and slashes).
2. ``cargo run --example npz -- rewrite IN OUT`` reads each with ndnpy and
   writes it back as stored (64-byte aligned), compressed, unaligned and
   level-1 compressed archives, viewing every aligned member in place.
3. NumPy loads every archive ndnpy wrote and checks: same keys, values,
   dtypes (native byte order), Fortran order; each member byte-identical to
   what ``np.save`` writes for the same array; CRCs valid (``testzip``); and
   in the aligned archive, every member's array data at a multiple of 64
   bytes in the file.

Exits non-zero on any mismatch. Set CARGO to use another cargo binary and
NDNPY_CARGO_ARGS for extra arguments (e.g. "--release").
"""

import io
import os
import shlex
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


def sample_arrays():
    rng = np.random.default_rng(7)
    f = np.arange(35, dtype=np.float64).reshape(7, 5) / 3
    arrays = {
        "f64": f,
        "f64_fortran": np.asfortranarray(f),
        "f32_special": np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-38], dtype=np.float32),
        "i8": np.arange(-5, 5, dtype=np.int8),
        "i16_be": np.arange(12, dtype=">i2").reshape(3, 4),
        "i32": rng.integers(-(2**31), 2**31 - 1, size=(4, 3, 2), dtype=np.int32),
        "i64": np.array([-(2**63), 2**63 - 1, 0], dtype=np.int64),
        "u8": np.arange(256, dtype=np.uint8),
        "u16": np.arange(10, dtype=np.uint16),
        "u32_be": np.arange(5, dtype=">u4"),
        "u64": np.array([2**64 - 1, 1], dtype=np.uint64),
        "bool": np.array([[True, False], [False, True]]),
        "c64": np.array([1 + 2j, -3.5j], dtype=np.complex64),
        "c128_be": np.array([1 - 1j, 2 + 0.5j], dtype=">c16"),
        "zero_d": np.array(3.25),
        "empty": np.zeros((2, 0, 3), dtype=np.float32),
        "a.b": np.array([1, 2, 3], dtype=np.int16),
        "dir/x": np.ones(4, dtype=np.float64),
        "big": rng.standard_normal(100_000),
    }
    return arrays


def npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def native(a):
    return a.astype(a.dtype.newbyteorder("="), copy=False)


def data_offsets(path):
    """(member name, offset of the member's data in the file) for each member."""
    out = []
    with open(path, "rb") as fh, zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            fh.seek(info.header_offset)
            local = fh.read(30)
            sig, = struct.unpack("<I", local[:4])
            if sig != 0x04034B50:
                fail(f"{path}: bad local header for {info.filename}")
                continue
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            out.append((info.filename, info.header_offset + 30 + name_len + extra_len))
    return out


def check_written(path, originals, aligned):
    label = os.path.basename(path)
    with zipfile.ZipFile(path) as zf:
        bad = zf.testzip()
        if bad is not None:
            fail(f"{label}: CRC error in {bad}")
        for name, orig in originals.items():
            member = zf.read(name + ".npy")
            if member != npy_bytes(native(orig)):
                fail(f"{label}: member {name}.npy differs from np.save's bytes")
    with np.load(path) as z:
        if sorted(z.files) != sorted(originals):
            fail(f"{label}: keys {sorted(z.files)} != {sorted(originals)}")
        for name, orig in originals.items():
            got = z[name]
            if got.dtype != orig.dtype.newbyteorder("="):
                fail(f"{label}/{name}: dtype {got.dtype.str} vs {orig.dtype.str}")
            if got.shape != orig.shape:
                fail(f"{label}/{name}: shape {got.shape} vs {orig.shape}")
            elif not np.array_equal(got, orig, equal_nan=got.dtype.kind in "fc"):
                fail(f"{label}/{name}: values differ")
            if orig.ndim > 1 and orig.flags.f_contiguous != got.flags.f_contiguous:
                fail(f"{label}/{name}: Fortran order lost")
            if got.dtype.kind == "f":
                # -0.0 and NaN payloads survive bit for bit.
                if native(orig).tobytes(order="C") != got.tobytes(order="C"):
                    fail(f"{label}/{name}: bits differ")
    if aligned:
        with zipfile.ZipFile(path) as zf:
            for member, offset in data_offsets(path):
                with zf.open(member) as fh:
                    head = fh.read(10)
                hlen = (struct.unpack("<H", head[8:10])[0] + 10) if head[6] == 1 else None
                if hlen is None:
                    with zf.open(member) as fh:
                        head = fh.read(12)
                    hlen = struct.unpack("<I", head[8:12])[0] + 12
                if (offset + hlen) % 64:
                    fail(f"{label}/{member}: array data at offset {offset + hlen}, not 64-aligned")


def main():
    cargo = os.environ.get("CARGO", "cargo")
    extra = shlex.split(os.environ.get("NDNPY_CARGO_ARGS", ""))
    arrays = sample_arrays()
    with tempfile.TemporaryDirectory() as tmp:
        for kind, save in [("savez", np.savez), ("savez_compressed", np.savez_compressed)]:
            src = os.path.join(tmp, kind + ".npz")
            save(src, **arrays)
            out = os.path.join(tmp, kind + "_out")
            cmd = [cargo, "run", "--quiet", *extra, "--example", "npz", "--", "rewrite", src, out]
            result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if result.returncode != 0:
                fail(f"{' '.join(cmd)} failed:\n{result.stdout}{result.stderr}")
                continue
            for name, aligned in [
                ("stored.npz", True),
                ("compressed.npz", False),
                ("unaligned.npz", False),
                ("level1.npz", False),
            ]:
                check_written(os.path.join(out, name), arrays, aligned)
            print(f"{kind}: ndnpy read {len(arrays)} arrays and wrote 4 archives; checked")
    if FAILURES:
        print(f"{len(FAILURES)} npz interop failure(s)")
        return 1
    print("npz interop: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
