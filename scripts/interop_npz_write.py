#!/usr/bin/env python3
"""NumPy checks the archives ndnpy compresses in parallel and streams.

    python3 scripts/interop_npz_write.py        # from the repository root

1. ``cargo run --example npz -- stream OUT`` writes ``threads{1,2,4}.npz``
   (multi-block compressed members: contiguous, strided, Fortran order,
   noise) and ``streamed.npz`` / ``streamed_stored.npz`` (members written in
   blocks of rows with ``NpzWriter::add_streaming``, C and Fortran order,
   empty, 0-d rows, then an ordinary member after them).
2. NumPy checks: the three ``threads`` archives are byte-identical; every
   archive passes ``testzip`` (CRCs) and loads with ``np.load`` to the
   expected values; every member is byte-identical to ``np.save`` of the
   expected array (so the streamed headers are NumPy's); stored members'
   data start at a multiple of 64 bytes.

Exits non-zero on any mismatch. CARGO and NDNPY_CARGO_ARGS as in
interop_npz.py.
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


def expected_threads():
    i = np.arange(600_000)
    ij = np.arange(700 * 1000, dtype=np.uint64).reshape(700, 1000)
    noise = (ij * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    i3, j3, k3 = np.meshgrid(np.arange(64), np.arange(64), np.arange(64), indexing="ij")
    cube = (i3 * j3 + k3).astype(np.int32)
    return {
        "big": (i % 1000) * 0.25,
        "noise": noise,
        "cube_strided": cube[::2, :, ::-1],
        "cube_f": cube.T,
        "small": np.array([1, 2, 3], dtype=np.uint8),
    }


def expected_streamed():
    r = np.arange(5000)[:, None]
    c = np.arange(384)[None, :]
    k = np.arange(3)[:, None]
    col = np.arange(70_000)[None, :]
    return {
        "rows": (r * 384 + c).astype(np.float32),
        "cols": np.asfortranarray(((k + 3 * col) % 30000).astype(np.int16)),
        "empty": np.zeros((0, 2, 5), dtype=np.uint8),
        "one_by_one": np.arange(10, dtype=np.float64),
        "after": np.array([7], dtype=np.int64),
    }


def has_field(extra, tag):
    """Whether the zip extra fields `extra` hold one with id `tag`."""
    while len(extra) >= 4:
        ident, size = extra[:2], struct.unpack("<H", extra[2:4])[0]
        if ident == tag:
            return True
        extra = extra[4 + size:]
    return False


def check(path, expected, aligned):
    label = os.path.basename(path)
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
        if bad is not None:
            fail(f"{label}: bad CRC in {bad}")
        names = [i.filename for i in z.infolist()]
        if names != [k + ".npy" for k in expected]:
            fail(f"{label}: members {names}")
        for info in z.infolist():
            key = info.filename[:-4]
            want = io.BytesIO()
            np.save(want, expected[key])
            if z.read(info) != want.getvalue():
                fail(f"{label}/{key}: member bytes differ from np.save's")
            if aligned and info.compress_type == zipfile.ZIP_STORED:
                with open(path, "rb") as fh:
                    fh.seek(info.header_offset + 26)
                    n, m = struct.unpack("<HH", fh.read(4))
                start = info.header_offset + 30 + n + m
                if start % 64:
                    fail(f"{label}/{key}: data at {start}, not 64-aligned")
            # Members deflated in several pieces carry ndnpy's piece table
            # (extra field "nd"), which zipfile skips: testzip above and
            # the loads below pass with it.
            if info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > (1 << 20):
                if not has_field(info.extra, b"nd"):
                    if "stream" not in label:
                        fail(f"{label}/{key}: no piece table in the central directory")
    with np.load(path) as z:
        for key, want in expected.items():
            got = z[key]
            if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
                fail(f"{label}/{key}: loads as {got.dtype} {got.shape}, not {want.dtype} {want.shape}")
            fortran = lambda a: a.flags.f_contiguous and not a.flags.c_contiguous
            if fortran(got) != fortran(want):
                fail(f"{label}/{key}: Fortran order differs")


def main():
    cargo = os.environ.get("CARGO", "cargo")
    extra = shlex.split(os.environ.get("NDNPY_CARGO_ARGS", ""))
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [cargo, "run", "--quiet", *extra, "-p", "ndnpy-examples", "--example", "npz", "--", "stream", tmp]
        result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"{' '.join(cmd)} failed:\n{result.stdout}{result.stderr}")
        else:
            blobs = [open(os.path.join(tmp, f"threads{t}.npz"), "rb").read() for t in (1, 2, 4)]
            if not (blobs[0] == blobs[1] == blobs[2]):
                fail("threads 1, 2 and 4 wrote different bytes")
            check(os.path.join(tmp, "threads1.npz"), expected_threads(), False)
            check(os.path.join(tmp, "streamed.npz"), expected_streamed(), False)
            check(os.path.join(tmp, "streamed_stored.npz"), expected_streamed(), True)
    if FAILURES:
        print(f"{len(FAILURES)} npz write interop failure(s)")
        return 1
    print("npz write interop (threads, streaming): OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
