#!/usr/bin/env python3
"""The formats around NumPy files against their real producers (CI):
ml_dtypes (bfloat16, float8), SciPy (scipy.sparse archives) and pyarrow
(Arrow arrays), from PyPI.

1. Writes fresh fixtures with the installed ml_dtypes and SciPy (the
   committed scripts gen_ml_fixtures.py and gen_sparse_fixtures.py, into a
   temporary folder) and runs the library's and the CLI's tests on them
   (NDNPY_ML_FIXTURES, NDNPY_SPARSE_FIXTURES), so a change in what these
   packages write shows up here, not in users' hands.
2. Has those tests write our own files (NDNPY_INTEROP_OUT) and loads them
   with NumPy + ml_dtypes (`.view(ml_dtypes.bfloat16)`) and with
   `scipy.sparse.load_npz`, equal to what the producers hold.

    python scripts/interop_formats.py        # numpy, ml_dtypes, scipy installed

Exits non-zero on the first difference.
"""

import os
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np
import pyarrow as pa
import pyarrow.ipc
import scipy
import scipy.sparse as sp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, env=None):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True, env={**os.environ, **(env or {})})


def main():
    print(f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, scipy {scipy.__version__}")
    cargo = ["cargo", "test", "--release", "--all-features", "-q"]
    with tempfile.TemporaryDirectory() as d:
        ml, sparse, arrow, out = (os.path.join(d, n) for n in ("ml", "sparse", "arrow", "out"))
        run([sys.executable, "scripts/gen_ml_fixtures.py", "--out", ml])
        run([sys.executable, "scripts/gen_sparse_fixtures.py", "--out", sparse])
        run([sys.executable, "scripts/gen_arrow_fixtures.py", "--out", arrow])
        env = {
            "NDNPY_ML_FIXTURES": ml,
            "NDNPY_SPARSE_FIXTURES": sparse,
            "NDNPY_ARROW_FIXTURES": arrow,
            "NDNPY_INTEROP_OUT": out,
        }
        run(cargo + ["-p", "ndnpy", "--test", "ml_dtypes", "--test", "sparse"], env)
        run(cargo + ["-p", "ndnpy-parquet", "--test", "arrow"], env)

        checks = 0
        # bfloat16 / float8 written by ndnpy, read as JAX users read them.
        src = np.load(os.path.join(ml, "bf16_2d_f.npy")).view(ml_dtypes.bfloat16)
        for name, want in [("bf16_2d.npy", src), ("bf16_2d_t.npy", src.T)]:
            path = os.path.join(out, name)
            with open(path, "rb") as f:
                head = f.read(128)
            assert b"'descr': '<V2'" in head, (name, head)
            got = np.load(path).view(ml_dtypes.bfloat16)
            assert got.shape == want.shape and np.array_equal(
                got.view(np.uint16), np.ascontiguousarray(want).view(np.uint16)
            ), name
            checks += 1
        got = np.load(os.path.join(out, "bf16.npz"))["w"].view(ml_dtypes.bfloat16)
        assert np.array_equal(got.view(np.uint16), np.ascontiguousarray(src).view(np.uint16))
        checks += 1
        bits = np.arange(256, dtype=np.uint8)
        got = np.load(os.path.join(out, "f8e4m3fn.npy")).view(ml_dtypes.float8_e4m3fn)
        want = bits.view(ml_dtypes.float8_e4m3fn)
        assert np.array_equal(got.view(np.uint8), bits)
        assert np.array_equal(got.astype(np.float32), want.astype(np.float32), equal_nan=True)
        checks += 1
        # '<f1' (float8_e5m2): NumPy refuses to load it, as it refuses
        # ml_dtypes's own file; the bytes must still be ml_dtypes's.
        with open(os.path.join(out, "f8e5m2.npy"), "rb") as f:
            data = f.read()
        with open(os.path.join(ml, "f8e5m2.npy"), "rb") as f:
            theirs = f.read()
        assert data == theirs, "f8e5m2.npy differs from np.save's"
        checks += 1

        # scipy.sparse archives written by ndnpy.
        names = sorted(n[:-4] for n in os.listdir(out) if n.endswith(".npz") and n != "bf16.npz")
        assert len(names) >= 12, names
        for name in names:
            m = sp.load_npz(os.path.join(out, name + ".npz"))
            want = np.load(os.path.join(sparse, name + ".dense.npy"))
            assert m.shape == want.shape, name
            assert m.dtype == want.dtype, (name, m.dtype, want.dtype)
            assert np.array_equal(m.toarray(), want), name
            checks += 1
        # Arrow arrays made by ndnpy from NumPy's arrays, read by pyarrow
        # equal to what pyarrow wrote in the first place (time zones aside:
        # NumPy datetimes have none).
        theirs = pa.ipc.open_file(os.path.join(arrow, "table.arrow")).read_all()
        ours = pa.ipc.open_file(os.path.join(out, "ours.arrow")).read_all()
        for name in ours.column_names:
            a, b = ours.column(name), theirs.column(name)
            if pa.types.is_timestamp(b.type) or pa.types.is_duration(b.type) or pa.types.is_date32(b.type):
                # Compare the counts (to_pylist cannot hold nanoseconds).
                assert a.type.unit == b.type.unit if not pa.types.is_date32(b.type) else pa.types.is_date32(a.type), name
                counts = pa.int32() if pa.types.is_date32(b.type) else pa.int64()
                a, b = a.cast(counts), b.cast(counts)
            if pa.types.is_string_view(b.type) or pa.types.is_large_string(b.type):
                b = b.cast(pa.string())
            x, y = a.to_pylist(), b.to_pylist()
            same = all(p == q or (p != p and q != q) for p, q in zip(x, y)) and len(x) == len(y)
            assert same, (name, x, y)
            checks += 1
    print(f"interop_formats: {checks} checks passed")


if __name__ == "__main__":
    main()
