#!/usr/bin/env python3
"""NumPy interop check for object arrays (pickles).

1. NumPy writes object arrays (the cases of gen_pickle_fixtures.py that the
   crate reads, with np.save's own protocol); the crate reads them
   (examples/interop_pickle.rs) and its Display of every element must equal
   Python's repr.
2. The crate writes each of them back (ndnpy::pickle::write_object_npy);
   NumPy loads the result with allow_pickle=True and it must equal the
   original exactly: types, values (NaN-aware), nested array dtypes, shapes,
   bytes and memory order.
3. The crate writes arrays it built from every kind of PyValue and
   Option<String> arrays (WriteNpy), and an .npz with object members
   (NpzWriter::add); NumPy loads them and each element's repr must be what
   the crate's Display says.
4. Records with object fields read as RecordArray; each object field's
   reprs must be Python's for a[field]; written back by the crate, NumPy
   loads every field equal to the original's.
5. Files of str and None read as Array<Option<String>> with Python's values
   (and no other file does); written back from that array, NumPy loads them
   equal to the original.

    python3 scripts/interop_pickle.py          # builds and runs the example

Set NDNPY_CARGO_ARGS (e.g. --release) to pass extra cargo arguments.
"""

import math
import os
import shlex
import subprocess
import sys
import tempfile

import decimal
import json
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_pickle_fixtures  # noqa: E402

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL", msg)


def same(a, b):
    """Exact equality of what pickle gives back: types, values, NaN payload-blind."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.ndim > 1 and a.size > 1 and (a.flags.f_contiguous, a.flags.c_contiguous) != (
                b.flags.f_contiguous, b.flags.c_contiguous):
            return False
        if a.dtype.hasobject:
            return all(same(x, y) for x, y in zip(a.ravel(order="C"), b.ravel(order="C")))
        return a.tobytes(order="C") == b.tobytes(order="C")
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, complex):
        return same(a.real, b.real) and same(a.imag, b.imag)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return len(a) == len(b) and all(same(k1, k2) and same(v1, v2)
                                        for (k1, v1), (k2, v2) in zip(a.items(), b.items()))
    if isinstance(a, decimal.Decimal):
        return str(a) == str(b)
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    return a == b


def expected_repr(x):
    if isinstance(x, np.datetime64):
        return f"np.datetime64({x.astype(np.int64)},'{np.datetime_data(x.dtype)[0]}')"
    return repr(x)


def main():
    cargo_args = shlex.split(os.environ.get("NDNPY_CARGO_ARGS", ""))
    with tempfile.TemporaryDirectory(prefix="ndnpy-pickle-interop.") as d:
        os.makedirs(os.path.join(d, "numpy"))
        originals = {}
        for name, a in gen_pickle_fixtures.cases().items():
            if name in gen_pickle_fixtures.PENDING:
                continue
            fname = name + ".npy"
            np.save(os.path.join(d, "numpy", fname), a, allow_pickle=True)
            originals[fname] = a
        subprocess.run(["cargo", "run", "--quiet", *cargo_args, "--example", "interop_pickle", "--", d],
                       check=True, cwd=os.path.join(HERE, ".."))
        with open(os.path.join(d, "read.json"), encoding="utf-8") as f:
            read = json.load(f)
        checked = 0
        optional_files = 0
        records = 0
        for fname, a in originals.items():
            if a.dtype.names is not None:
                # Records with object fields: each object field's reprs.
                ours = read.get("record:" + fname)
                want = {f: [expected_repr(x) if not isinstance(x, np.ndarray) else None
                            for x in a[f].ravel(order="C")]
                        for f in a.dtype.names if a.dtype[f] == object}
                if ours != want:
                    fail(f"record {fname}: ours {ours!r}, Python {want!r}")
                # Written back by the crate (C order, native byte order):
                # every field equal to the original's.
                back = np.load(os.path.join(d, "roundtrip", fname), allow_pickle=True)
                if back.shape != a.shape or back.dtype != a.dtype.newbyteorder("="):
                    fail(f"record roundtrip {fname}: {back.dtype} {back.shape}")
                else:
                    for f in a.dtype.names:
                        x, y = a[f], back[f]
                        if not x.dtype.hasobject:
                            x = x.astype(x.dtype.newbyteorder("="))
                        if x.dtype != y.dtype or not same(np.ascontiguousarray(x), np.ascontiguousarray(y)):
                            fail(f"record roundtrip {fname}[{f!r}]: NumPy loaded {y!r}, expected {x!r}")
                records += 1
                continue
            ours = read[fname]
            for i, (x, r) in enumerate(zip(a.ravel(order="C"), ours)):
                if isinstance(x, np.ndarray):
                    continue
                checked += 1
                if r != expected_repr(x):
                    fail(f"read {fname}[{i}]: ours {r!r}, Python {expected_repr(x)!r}")
            back = np.load(os.path.join(d, "roundtrip", fname), allow_pickle=True)
            if not same(a, back):
                fail(f"roundtrip {fname}: NumPy loaded {back!r}, expected {a!r}")
            # Option<String>: exactly the files of str and None read, with
            # their values, and are written back equal.
            all_str = all(x is None or type(x) is str for x in a.ravel(order="C"))
            opt = read.get("optional:" + fname)
            if all_str != (opt is not None):
                fail(f"{fname}: read as Option<String>: {opt is not None}, all str/None: {all_str}")
            if opt is not None:
                optional_files += 1
                if opt != [repr(x) for x in a.ravel(order="C")]:
                    fail(f"optional {fname}: ours {opt!r}")
                back = np.load(os.path.join(d, "optional", fname), allow_pickle=True)
                if not same(a, back):
                    fail(f"optional roundtrip {fname}: NumPy loaded {back!r}, expected {a!r}")
        if records < 2:
            fail(f"only {records} record files")
        if optional_files < 4:
            fail(f"only {optional_files} files read as Option<String>")
        print(f"interop_pickle: NumPy -> ndnpy: {len(originals)} files, {checked} element reprs; "
              f"ndnpy -> NumPy round trip of each; {optional_files} as Option<String>; "
              f"{records} records with object fields")

        with open(os.path.join(d, "built.json"), encoding="utf-8") as f:
            built = json.load(f)
        n = 0
        for name, info in built.items():
            if name.endswith(".npz"):
                with np.load(os.path.join(d, "built", name), allow_pickle=True) as z:
                    got = z["names"]
                    if [repr(x) for x in got] != info["names"]:
                        fail(f"{name}: {got!r}")
                    if not same(z["nums"], np.array([1, 2, 3], dtype=np.int64)):
                        fail(f"{name}: nums {z['nums']!r}")
                    labels = z["labels"]
                    if labels.dtype != object or labels.shape != (2, 1) or \
                            [repr(x) for x in labels.ravel()] != info["labels"]:
                        fail(f"{name}: labels {labels!r}")
                continue
            a = np.load(os.path.join(d, "built", name + ".npy"), allow_pickle=True)
            if a.dtype != object or list(a.shape) != info["shape"]:
                fail(f"{name}: dtype {a.dtype} shape {a.shape}")
                continue
            if a.ndim > 1 and a.size > 1 and a.flags.f_contiguous != info["fortran"]:
                fail(f"{name}: fortran {a.flags.f_contiguous}")
            for i, (x, r) in enumerate(zip(a.ravel(order="C"), info["reprs"])):
                n += 1
                if r is None:
                    if not isinstance(x, np.ndarray):
                        fail(f"{name}[{i}]: expected an ndarray, got {x!r}")
                    continue
                if repr(x) != r:
                    fail(f"{name}[{i}]: NumPy {x!r}, ours {r}")
        nested = np.load(os.path.join(d, "built", "nested_arrays.npy"), allow_pickle=True)
        want = [np.array([1, -2, 3], dtype=np.int64),
                np.asfortranarray(np.arange(6, dtype=np.float64).reshape(3, 2).T * 0.5),
                np.array([], dtype=np.uint8), np.array(True), gen_pickle_fixtures.obj(["in", 1]),
                np.array([1 - 1j]),
                np.array([(1.5, -2), (0.0, 7)],
                         dtype={"names": ["x", "y"], "formats": ["<f8", "<i2"], "offsets": [0, 8], "itemsize": 16}),
                np.array([(1, "x", 1.5), (2, None, -0.5)], dtype=[("a", "<i4"), ("b", "O"), ("c", "<f8")])]
        if len(nested) != len(want):
            fail(f"nested_arrays: {len(nested)} items")
        for i, (x, w) in enumerate(zip(nested, want)):
            if x.dtype != w.dtype or x.shape != w.shape or not same(x.tolist(), w.tolist()):
                fail(f"nested_arrays[{i}]: {x!r} != {w!r}")
        print(f"interop_pickle: ndnpy -> NumPy: {len(built)} files, {n} elements")
    if failures:
        print(f"interop_pickle: {len(failures)} FAILED")
        sys.exit(1)
    print("interop_pickle: all passed")


if __name__ == "__main__":
    main()
