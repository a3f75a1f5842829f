#!/usr/bin/env python3
"""Writes fixed-shape tensor columns with pyarrow, for ndnpy-parquet's
tests/tensor.rs (issue 40), so that cargo test checks what pyarrow writes
without Python:

    python3 scripts/gen_tensor_fixtures.py [--out fixtures/arrow]

Needs numpy and pyarrow. Writes:
  tensor.arrow          an Arrow IPC file of one table: `f32` (4, 3, 2)
                        and `u8` (4, 2, 2, 2) from
                        FixedShapeTensorArray.from_numpy_ndarray, `perm`
                        from a transposed array (stored with permutation
                        [1, 0]), `named` with dim_names ["H", "W"], and a
                        plain int16 column `plain`
  tensor.parquet        the same table, pq.write_table
  tensor.expected.npz   per column: to_numpy_ndarray() (to_numpy() for
                        `plain`), as NumPy holds them
"""

import argparse
import os

import numpy as np
import pyarrow as pa
import pyarrow.ipc
import pyarrow.parquet as pq


def table():
    f32 = (np.arange(4 * 3 * 2, dtype=np.float32) - 5.5).reshape(4, 3, 2)
    u8 = (np.arange(4 * 8, dtype=np.uint8) * 7).reshape(4, 2, 2, 2)
    perm = np.arange(4 * 2 * 3, dtype=np.float64).reshape(4, 2, 3).transpose(0, 2, 1)
    named = pa.fixed_shape_tensor(pa.int32(), (2, 3), dim_names=["H", "W"])
    storage = pa.FixedSizeListArray.from_arrays(pa.array(np.arange(24, dtype=np.int32) - 12), 6)
    cols = {
        "f32": pa.FixedShapeTensorArray.from_numpy_ndarray(f32),
        "u8": pa.FixedShapeTensorArray.from_numpy_ndarray(u8),
        "perm": pa.FixedShapeTensorArray.from_numpy_ndarray(perm),
        "named": pa.ExtensionArray.from_storage(named, storage),
        "plain": pa.array(np.array([3, -1, 0, 7], dtype=np.int16)),
    }
    assert list(cols["perm"].type.permutation) == [1, 0]
    return pa.table(cols)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "fixtures", "arrow"))
    out = ap.parse_args().out
    os.makedirs(out, exist_ok=True)
    t = table()
    with pa.OSFile(os.path.join(out, "tensor.arrow"), "wb") as sink, pa.ipc.new_file(sink, t.schema) as w:
        w.write_table(t)
    pq.write_table(t, os.path.join(out, "tensor.parquet"))
    expected = {}
    for name in t.column_names:
        col = t.column(name).combine_chunks()
        if isinstance(col.type, pa.FixedShapeTensorType):
            expected[name] = np.ascontiguousarray(col.to_numpy_ndarray())
        else:
            expected[name] = col.to_numpy()
    np.savez(os.path.join(out, "tensor.expected.npz"), **expected)
    print("wrote tensor.arrow, tensor.parquet, tensor.expected.npz to", out, "with pyarrow", pa.__version__)


if __name__ == "__main__":
    main()
