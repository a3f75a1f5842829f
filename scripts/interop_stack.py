#!/usr/bin/env python3
"""dask interop check for ndnpy::stack (folders of .npy shards).

1. dask writes stacks (da.to_npy_stack: axis 0, 1 and 2, uneven chunks,
   several dtypes, an empty one); ndnpy reads each (NpyStack::open:
   read_any, a typed read, and read_range across shard boundaries) equal
   to dask's own array (examples/interop_stack.rs).
2. ndnpy writes stacks (NpyStack::create_along, and StackWriter fed
   blocks of 3 rows); da.from_npy_stack(dir)
   .compute() equals the source, with its dtype, and `info` unpickles to
   the dict dask's to_npy_stack writes for the same array and chunks.
3. A plain folder of numbered shards (np.save'd shard_00000.npy ...) and
   an explicit list read as np.concatenate of them.

    python3 scripts/interop_stack.py

Skips (exit 0, saying why) when dask is not installed, unless CI=true,
where that is a failure. Set NDNPY_CARGO_ARGS (e.g. --release) to pass
extra cargo arguments.
"""

import os
import pickle
import shlex
import subprocess
import sys
import tempfile

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as e:
    if os.environ.get("CI") == "true":
        print(f"FAIL dask is required in CI: {e}")
        sys.exit(1)
    print(f"SKIP interop_stack: dask is not installed ({e}); python3 -m pip install dask")
    sys.exit(0)

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL", msg)


def same(got, want):
    """Equal shape and values, of the same kind and element size. A read
    gives numbers in native byte order and strings as wide as their longest
    (as ndnpy reads one file); values compare exactly, NaN equal to NaN,
    records and datetimes byte for byte."""
    if got.shape != want.shape or got.dtype.kind != want.dtype.kind:
        return False
    if want.dtype.kind in "US":
        return np.array_equal(got, want)
    if got.dtype.itemsize != want.dtype.itemsize:
        return False
    if want.dtype.kind in "fc":
        return np.array_equal(got, want, equal_nan=True)
    return got.astype(want.dtype).tobytes() == want.tobytes()


# Typed reads the example dispatches (others are read with read_any only).
TYPED = {"|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f4", "<f8",
         ">f8", ">i4", "<c8", "<c16", "<U1", "<U3"}


def dask_cases(rng):
    """(name, array, chunks along axis, axis)."""
    a = np.arange(24, dtype="<f8").reshape(6, 4) * 1.5
    a[1, 2] = np.nan
    yield "f8_axis0", a, (2, 3, 1), 0
    yield "i4_axis1", (np.arange(15, dtype="<i4").reshape(3, 5) - 7), (2, 2, 1), 1
    yield "u2_axis2", np.arange(84, dtype="<u2").reshape(4, 7, 3), (1, 2), 2
    yield "bool_axis0", rng.random(11) < 0.5, (4, 4, 3), 0
    yield "c16_axis0", (rng.standard_normal((5, 2)) + 1j * rng.standard_normal((5, 2))), (3, 2), 0
    yield "big_endian_axis1", np.arange(12, dtype=">f8").reshape(2, 6), (1, 4, 1), 1
    yield "unicode_axis0", np.array(["a", "bb", "ccc", "", "dd"], dtype="<U3"), (2, 3), 0
    yield "datetime_axis0", np.arange(7).astype("M8[ns]"), (3, 3, 1), 0
    rec = np.zeros(6, dtype=[("a", "<i4"), ("b", "<f8"), ("c", "S3")])
    rec["a"] = np.arange(6)
    rec["b"] = np.arange(6) / 3
    rec["c"] = [b"x", b"yy", b"zzz", b"", b"w", b"v"]
    yield "record_axis0", rec, (4, 2), 0
    yield "empty_axis0", np.zeros((0, 3), dtype="<i8"), (0,), 0


def ndnpy_cases(rng):
    """(name, array, axis, rows per shard)."""
    yield "w_f8", rng.standard_normal((10, 3)), 0, 4
    yield "w_i2_axis1", np.arange(-20, 20, dtype="<i2").reshape(4, 10), 1, 3
    yield "w_u1_axis2", np.arange(60, dtype="|u1").reshape(3, 4, 5), 2, 2
    yield "w_c8", (np.arange(7) + 1j).astype("<c8"), 0, 7
    yield "w_bool", rng.random(9) < 0.3, 0, 100
    yield "w_f4_fortran", np.asfortranarray(rng.standard_normal((6, 5)).astype("<f4")), 0, 4
    yield "w_empty", np.zeros((0, 2), dtype="<f8"), 0, 3


def ranges(n):
    """Ranges that start, end and cross shard boundaries."""
    out = {(0, n), (0, 0), (n, n)}
    for s in range(n + 1):
        out.add((s, min(n, s + 2)))
        out.add((s, n))
    return sorted(out)


def main():
    rng = np.random.default_rng(40)
    cargo_args = shlex.split(os.environ.get("NDNPY_CARGO_ARGS", ""))
    print("numpy", np.__version__, "dask", dask.__version__)
    with tempfile.TemporaryDirectory() as d:
        ops = []
        expect = []  # (out file, expected array)
        for name, a, chunks, axis in dask_cases(rng):
            full = tuple(chunks if i == axis else (n,) for i, n in enumerate(a.shape))
            x = da.from_array(a, chunks=full)
            da.to_npy_stack(os.path.join(d, name), x, axis=axis)
            truth = x.compute()
            typed = a.dtype.str in TYPED
            t = f"{name}.typed.npy" if typed else "-"
            ops.append(f"read {name} {name}.any.npy {t}")
            expect.append((f"{name}.any.npy", truth))
            if typed:
                expect.append((t, truth))
            for s, e in ranges(a.shape[axis]):
                base = f"{name}.{s}_{e}"
                t = f"{base}.typed.npy" if typed else "-"
                ops.append(f"range {name} {s} {e} {base}.any.npy {t}")
                want = truth[(slice(None),) * axis + (slice(s, e),)]
                expect.append((f"{base}.any.npy", want))
                if typed:
                    expect.append((t, want))
        written = []
        for name, a, axis, per in ndnpy_cases(rng):
            np.save(os.path.join(d, f"{name}.src.npy"), a)
            ops.append(f"create {name}.src.npy {name} {axis} {per}")
            written.append((name, a, axis, per))
            if axis == 0:
                ops.append(f"stream {name}.src.npy {name}.stream {per} 3")
                written.append((name + ".stream", a, axis, per))
        # Plain folder of numbered shards, and an explicit list.
        plain = os.path.join(d, "plain")
        os.mkdir(plain)
        parts = [rng.integers(0, 100, size=(n, 2)).astype("<i8") for n in (3, 1, 4, 2, 5, 1, 2, 3, 1, 2, 4, 1)]
        for i, p in enumerate(parts):
            np.save(os.path.join(plain, f"shard_{i:05d}.npy"), p)
        ops.append("read plain plain.any.npy plain.typed.npy")
        expect.append(("plain.any.npy", np.concatenate(parts)))
        expect.append(("plain.typed.npy", np.concatenate(parts)))
        ops.append("files list.any.npy plain/shard_00011.npy plain/shard_00002.npy")
        expect.append(("list.any.npy", np.concatenate([parts[11], parts[2]])))

        with open(os.path.join(d, "ops.txt"), "w") as f:
            f.write("\n".join(ops) + "\n")
        subprocess.run(["cargo", "run", "--quiet", *cargo_args, "-p", "ndnpy-examples",
                        "--example", "interop_stack", "--", d], check=True)

        for out, want in expect:
            got = np.load(os.path.join(d, out))
            if not same(got, want):
                fail(f"{out}: ndnpy read {got.dtype} {got.shape} {got!r:.200}, dask has {want.dtype} {want.shape} {want!r:.200}")
        print(f"ndnpy read {len(expect)} arrays and ranges of dask's stacks and plain folders")

        for name, a, axis, per in written:
            path = os.path.join(d, name)
            got = da.from_npy_stack(path).compute()
            if not (same(got, a) and got.dtype == a.dtype):
                fail(f"{name}: dask read {got.dtype} {got.shape} {got!r:.200}, wrote {a.dtype} {a.shape}")
            n = a.shape[axis]
            lens = tuple(min(per, n - s) for s in range(0, n, per)) or (0,)
            want = {"chunks": tuple(lens if i == axis else (m,) for i, m in enumerate(a.shape)),
                    "dtype": a.dtype, "axis": axis}
            with open(os.path.join(path, "info"), "rb") as f:
                info = pickle.load(f)
            if info != want or type(info["dtype"]) is not type(a.dtype):
                fail(f"{name}: info is {info}, dask writes {want}")
            # What dask itself writes for the same array and chunks.
            x = da.from_array(a, chunks=want["chunks"])
            theirs = os.path.join(d, name + ".dask")
            da.to_npy_stack(theirs, x, axis=axis)
            with open(os.path.join(theirs, "info"), "rb") as f:
                if pickle.load(f) != info:
                    fail(f"{name}: dask's own info differs from ours")
        print(f"dask read {len(written)} stacks ndnpy wrote, info as dask writes it")

    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("interop_stack: all checks passed")


if __name__ == "__main__":
    main()
