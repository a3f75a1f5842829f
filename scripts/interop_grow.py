#!/usr/bin/env python3
"""NumPy <-> ndnpy interop check for growing, streamed and range-read files.

    python3 scripts/interop_grow.py            # from the repository root

1. NumPy writes base arrays and blocks with ``np.save`` (every element type
   ndnpy reads, C and Fortran order, 1-d to 3-d, empty blocks), and files
   whose header has no spare room, as other tools write them.
2. ``cargo run -p ndnpy-examples --example grow_interop -- DIR`` appends the
   blocks in place (``NpyFile::append``), streams them into new files
   (``NpyWriter``), reads row ranges (``NpyFile::read_range``), reads in
   blocks from a stream (``NpyReader``), and runs ``make_appendable``.
3. NumPy loads every result and checks shape, dtype, order and values, and
   that every appended or streamed file is byte-identical to ``np.save`` of
   the final array.

Exits non-zero on any mismatch. Set CARGO to use another cargo binary and
NDNPY_CARGO_ARGS for extra arguments (e.g. "--release").
"""

import io
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


DTYPES = ["?", "i1", "<i2", "<i4", "<i8", "u1", "<u2", "<u4", "<u8",
          "<f2", "<f4", "<f8", "<c8", "<c16"]


def values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def save_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def main():
    rng = np.random.default_rng(11)
    ops = []
    expect = {}  # file name -> array it must hold, byte-identical to np.save
    ranges = {}  # file name -> array it must hold (values, dtype, shape)
    readers = {}  # prefix -> list of blocks
    with tempfile.TemporaryDirectory(prefix="ndnpy-grow-") as d:
        def save(name, a):
            np.save(os.path.join(d, name), a)
            return name

        n = 0
        for dtype in DTYPES:
            for order, inner in [("C", ()), ("C", (3,)), ("C", (2, 3)), ("F", (2, 3)), ("F", (4,))]:
                n += 1
                fortran = order == "F"
                def shaped(rows):
                    shape = inner + (rows,) if fortran else (rows,) + inner
                    a = values(rng, dtype, shape)
                    return np.asfortranarray(a) if fortran else a
                base = shaped(3)
                blocks = [shaped(r) for r in (2, 0, 1, 4)]
                axis = len(inner) if fortran else 0
                final = np.concatenate([base] + blocks, axis=axis)
                final = np.asfortranarray(final) if fortran else final
                names = [save(f"b{n}_{i}.npy", b) for i, b in enumerate(blocks)]
                # Append in place to a file np.save wrote.
                save(f"app{n}.npy", base)
                ops.append(f"append app{n}.npy " + " ".join(names))
                expect[f"app{n}.npy"] = final
                # Stream the base and blocks into a new file.
                save(f"base{n}.npy", base)
                inner_s = ",".join(map(str, inner)) or "-"
                ops.append(f"stream str{n}.npy {order} {inner_s} base{n}.npy " + " ".join(names))
                expect[f"str{n}.npy"] = final
                # Row ranges of a file np.save wrote.
                save(f"full{n}.npy", final)
                for k, (a, b) in enumerate([(0, 10), (2, 5), (9, 10), (4, 4)]):
                    ops.append(f"range full{n}.npy {a} {b} rng{n}_{k}.npy")
                    ranges[f"rng{n}_{k}.npy"] = np.take(final, range(a, b), axis=axis)
                # Blocks of a stream.
                ops.append(f"reader full{n}.npy 4 rd{n}")
                readers[f"rd{n}"] = [np.take(final, range(s, min(s + 4, 10)), axis=axis)
                                     for s in range(0, 10, 4)]

        # Headers without room: a header that is not padded as NumPy pads it.
        for k, (a, fortran) in enumerate([
            (np.arange(6, dtype="<i4").reshape(2, 3), False),
            (np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3)), True),
        ]):
            text = "{'descr':'%s','fortran_order':%s,'shape':%r}" % (
                a.dtype.str, fortran, a.shape)
            raw = b"\x93NUMPY\x01\x00" + (len(text) + 1).to_bytes(2, "little") + text.encode() + b"\n"
            data = a.tobytes(order="F" if fortran else "C")
            name = f"tight{k}.npy"
            with open(os.path.join(d, name), "wb") as f:
                f.write(raw + data)
            assert np.array_equal(np.load(os.path.join(d, name)), a)
            block = np.asfortranarray(a[:, :1] + 100) if fortran else a[:1] + 100
            save(f"tblock{k}.npy", block)
            ops.append(f"make_appendable {name}")
            ops.append(f"append {name} tblock{k}.npy")
            final = np.concatenate([a, block], axis=1 if fortran else 0)
            expect[name] = np.asfortranarray(final) if fortran else final

        with open(os.path.join(d, "ops.txt"), "w") as f:
            f.write("\n".join(ops) + "\n")

        cargo = os.environ.get("CARGO", "cargo")
        extra = shlex.split(os.environ.get("NDNPY_CARGO_ARGS", ""))
        cmd = [cargo, "run", "--quiet", *extra, "-p", "ndnpy-examples", "--all-features",
               "--example", "grow_interop", "--", d]
        subprocess.run(cmd, check=True, cwd=ROOT)

        for name, a in expect.items():
            path = os.path.join(d, name)
            got = np.load(path)
            if got.dtype != a.dtype or got.shape != a.shape or not np.array_equal(got, a):
                fail(f"{name}: got {got.dtype} {got.shape}, want {a.dtype} {a.shape}")
            with open(path, "rb") as f:
                if f.read() != save_bytes(a):
                    fail(f"{name}: not byte-identical to np.save of the final array")
        for name, a in ranges.items():
            got = np.load(os.path.join(d, name))
            if got.dtype != a.dtype or got.shape != a.shape or not np.array_equal(got, a):
                fail(f"{name}: got {got.dtype} {got.shape}, want {a.dtype} {a.shape}")
        for prefix, blocks in readers.items():
            for k, a in enumerate(blocks):
                got = np.load(os.path.join(d, f"{prefix}.{k}.npy"))
                if got.shape != a.shape or not np.array_equal(got, a):
                    fail(f"{prefix}.{k}: got {got.shape}, want {a.shape}")
            if os.path.exists(os.path.join(d, f"{prefix}.{len(blocks)}.npy")):
                fail(f"{prefix}: more blocks than rows")

    checked = len(expect) + len(ranges) + sum(len(b) for b in readers.values())
    if FAILURES:
        print(f"interop_grow: {len(FAILURES)} failures")
        sys.exit(1)
    print(f"interop_grow: {checked} files checked against NumPy, all match")


if __name__ == "__main__":
    main()
