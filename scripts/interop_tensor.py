#!/usr/bin/env python3
"""pyarrow interop check for fixed-shape tensor columns (ndnpy_parquet::arrow,
issue 40): N-dimensional arrays as `arrow.fixed_shape_tensor`.

1. pyarrow writes tables with tensor columns (pa.FixedShapeTensorArray
   .from_numpy_ndarray of float32, int64, uint8, bool and float64 arrays;
   one from a transposed array, which pyarrow stores with a `permutation`;
   one with `dim_names`; one of zero rows; beside a plain 1-D column) as an
   Arrow IPC file and as Parquet (pq.write_table); ndnpy reads each
   (examples/tensor_interop.rs: from-ipc, from-parquet) into an .npz whose
   members equal `to_numpy_ndarray()` (and the 1-D column's to_numpy()),
   dtype and shape included.
2. ndnpy writes .npz files of (n, ...) members (np.savez here; numbers,
   a Fortran-order one, bool, float16, strings, datetime64[ms]) as IPC and
   Parquet (to-ipc, to-parquet); pyarrow reads each tensor column as a
   pa.FixedShapeTensorType whose shape is the member's inner shape and
   whose to_numpy_ndarray() equals the member (for bool, strings and
   datetimes, which to_numpy_ndarray refuses, the storage's values).

    python3 scripts/interop_tensor.py

Skips (exit 0, saying why) when pyarrow is not installed, unless CI=true,
where that is a failure. Set NDNPY_CARGO_ARGS (e.g. --release) to pass
extra cargo arguments.
"""

import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

try:
    import pyarrow as pa
    import pyarrow.ipc
    import pyarrow.parquet as pq
except ImportError as e:
    if os.environ.get("CI") == "true":
        print(f"FAIL pyarrow is required in CI: {e}")
        sys.exit(1)
    print(f"SKIP interop_tensor: pyarrow is not installed ({e}); python3 -m pip install pyarrow")
    sys.exit(0)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL", msg)


def cargo(*args):
    extra = shlex.split(os.environ.get("NDNPY_CARGO_ARGS", ""))
    subprocess.run(["cargo", "run", "-q", *extra, "-p", "ndnpy-parquet", "--example",
                    "tensor_interop", "--", *args], cwd=ROOT, check=True)


def same(name, got, want):
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        fail(f"{name}: got {got.dtype} {got.shape}, want {want.dtype} {want.shape}")
    else:
        print(f"ok   {name}: {want.dtype} {want.shape}")


def sources():
    rng = np.random.default_rng(40)
    return {
        "f32": rng.standard_normal((5, 3, 4)).astype(np.float32),
        "i64": np.arange(5 * 2 * 2 * 2, dtype=np.int64).reshape(5, 2, 2, 2) * -7,
        "u8": rng.integers(0, 256, (5, 2, 3, 3), dtype=np.uint8),
        "f64": rng.standard_normal((5, 6)),
        "b": rng.integers(0, 2, (5, 2, 2)).astype(bool),
    }


def pyarrow_table():
    cols = {}
    for name, x in sources().items():
        if name == "b":
            continue  # from_numpy_ndarray takes numbers only
        cols[name] = pa.FixedShapeTensorArray.from_numpy_ndarray(x[:4])
    # A transposed array: pyarrow stores its buffer as is, with a permutation.
    t = np.arange(4 * 3 * 5, dtype=np.float32).reshape(4, 3, 5).transpose(0, 2, 1)
    cols["perm"] = pa.FixedShapeTensorArray.from_numpy_ndarray(t)
    assert list(cols["perm"].type.permutation) == [1, 0], cols["perm"].type.permutation
    named = pa.fixed_shape_tensor(pa.int32(), (2, 3), dim_names=["H", "W"])
    storage = pa.FixedSizeListArray.from_arrays(pa.array(np.arange(24, dtype=np.int32)), 6)
    cols["named"] = pa.ExtensionArray.from_storage(named, storage)
    cols["plain"] = pa.array(np.arange(4, dtype=np.int16))
    return pa.table(cols)


def expected(table):
    out = {}
    for name in table.column_names:
        col = table.column(name).combine_chunks()
        if isinstance(col.type, pa.FixedShapeTensorType):
            out[name] = col.to_numpy_ndarray()
        else:
            out[name] = col.to_numpy()
    return out


def check_reading(tmp):
    table = pyarrow_table()
    want = expected(table)
    ipc = os.path.join(tmp, "py.arrow")
    with pa.OSFile(ipc, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    parquet = os.path.join(tmp, "py.parquet")
    pq.write_table(table, parquet)
    # pyarrow itself reads the tensor type back from its Parquet file.
    assert isinstance(pq.read_table(parquet).column("f32").type, pa.FixedShapeTensorType)
    # No rows (from_numpy_ndarray refuses an empty array: built from storage).
    empty_type = pa.fixed_shape_tensor(pa.float32(), (2, 3))
    empty_storage = pa.FixedSizeListArray.from_arrays(pa.array([], pa.float32()), 6)
    empty = pa.table({"e": pa.ExtensionArray.from_storage(empty_type, empty_storage)})
    empty_parquet = os.path.join(tmp, "empty.parquet")
    pq.write_table(empty, empty_parquet)
    for kind, path, want_here in [("from-ipc", ipc, want), ("from-parquet", parquet, want),
                                  ("from-parquet", empty_parquet, {"e": np.zeros((0, 2, 3), np.float32)})]:
        out = path + ".npz"
        cargo(kind, path, out)
        with np.load(out, allow_pickle=False) as z:
            if sorted(z.files) != sorted(want_here):
                fail(f"{kind} {os.path.basename(path)}: members {z.files}, want {list(want_here)}")
            for name, w in want_here.items():
                if name in z.files:
                    same(f"pyarrow {kind} {os.path.basename(path)} {name}", z[name], w)


def check_writing(tmp):
    src = sources()
    src["plain"] = np.arange(5, dtype=np.float32)
    src["fortran"] = np.asfortranarray(np.arange(5 * 3 * 2, dtype=np.int32).reshape(5, 3, 2))
    # Types pyarrow's to_numpy_ndarray does not take (it reads the column's
    # type all the same): compared through the storage's values.
    src["f16"] = (np.arange(5 * 4) / 8).astype(np.float16).reshape(5, 2, 2)
    src["s"] = np.array([f"s{i}" * (i % 3) for i in range(10)]).reshape(5, 2)
    src["t"] = (np.arange(10, dtype=np.int64) * 1000).astype("M8[ms]").reshape(5, 2)
    npz = os.path.join(tmp, "np.npz")
    np.savez(npz, **src)
    for kind, ext in [("to-ipc", "arrow"), ("to-parquet", "parquet")]:
        out = os.path.join(tmp, f"nd.{ext}")
        cargo(kind, npz, out)
        if ext == "arrow":
            with pa.memory_map(out) as f:
                table = pa.ipc.open_file(f).read_all()
        else:
            table = pq.read_table(out)
        for name, x in src.items():
            col = table.column(name).combine_chunks()
            if x.ndim == 1:
                same(f"ndnpy {kind} {name}", col.to_numpy(), x)
                continue
            if not isinstance(col.type, pa.FixedShapeTensorType):
                fail(f"ndnpy {kind} {name}: type {col.type}, not a fixed_shape_tensor")
                continue
            if tuple(col.type.shape) != x.shape[1:]:
                fail(f"ndnpy {kind} {name}: shape {col.type.shape}, want {x.shape[1:]}")
            if x.dtype.kind in "bUM":
                # to_numpy_ndarray takes numbers only; the storage's values.
                flat = col.storage.flatten().to_numpy(zero_copy_only=False)
                got = np.asarray(flat, dtype=x.dtype).reshape(x.shape)
            else:
                got = col.to_numpy_ndarray()
            same(f"ndnpy {kind} {name}", np.ascontiguousarray(got), np.ascontiguousarray(x))


def main():
    print("pyarrow", pa.__version__, "numpy", np.__version__)
    with tempfile.TemporaryDirectory() as tmp:
        check_reading(tmp)
        check_writing(tmp)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("interop_tensor: all checks passed")


if __name__ == "__main__":
    main()
