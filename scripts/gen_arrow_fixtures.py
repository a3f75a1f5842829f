#!/usr/bin/env python3
"""Writes an Arrow IPC file with pyarrow (the producer Polars and DataFusion
users share arrays with) and what NumPy makes of each column, for the Arrow
conversions of ndnpy-parquet (ndnpy_parquet::arrow; tests/arrow.rs).

    python3 scripts/gen_arrow_fixtures.py [--out fixtures/arrow]

Needs numpy and pyarrow. Writes:
  table.arrow          one record batch: numbers of every width, float16,
                       bool, strings (utf8, large_utf8, utf8_view) and binary
                       with nulls, timestamps (s, ms, us, ns; one with a time
                       zone), durations, date32, a struct column
  table.expected.npz   per column NAME: the values as NumPy holds them, nulls
                       filled (0, False, "", b"", NaT), and NAME.valid (the
                       validity mask) for columns with nulls; the struct
                       column as its fields NAME.FIELD
"""

import argparse
import os

import numpy as np
import pyarrow as pa
import pyarrow.ipc


def columns():
    n = 5
    ints = [1, -2, None, 4, 5]
    return {
        "i8": pa.array(ints, pa.int8()),
        "i16": pa.array([1, -300, 3, 4, 5], pa.int16()),
        "i32": pa.array([2**31 - 1, 0, -(2**31), 7, 8], pa.int32()),
        "i64": pa.array([2**63 - 1, 0, 1, None, -1], pa.int64()),
        "u8": pa.array([255, 0, 1, 2, 3], pa.uint8()),
        "u16": pa.array([65535, 0, 1, 2, 3], pa.uint16()),
        "u32": pa.array([2**32 - 1, 0, 1, 2, 3], pa.uint32()),
        "u64": pa.array([2**64 - 1, 0, 1, 2, 3], pa.uint64()),
        "f16": pa.array(np.array([1.5, -0.0, np.inf, 0.25, 65504], np.float16)),
        "f32": pa.array([1.5, None, float("nan"), -1e30, 0.0], pa.float32()),
        "f64": pa.array([1e-300, -2.5, None, float("inf"), 3.0], pa.float64()),
        "flag": pa.array([True, False, None, True, True]),
        "s": pa.array(["a", "ünï", None, "", "long text here"], pa.string()),
        "ls": pa.array(["x", None, "yy", "zzz", ""], pa.large_string()),
        "sv": pa.array(["short", "a string longer than twelve bytes", None, "", "z"], pa.string_view()),
        "b": pa.array([b"\x00\xff", None, b"", b"abc", b"\x01"], pa.binary()),
        "ts_s": pa.array([0, 86400, None, -1, 1], pa.timestamp("s")),
        "ts_ms": pa.array([0, 1, 2, None, 4], pa.timestamp("ms")),
        "ts_us_tz": pa.array([0, 1, 2, 3, None], pa.timestamp("us", tz="Europe/Paris")),
        "ts_ns": pa.array([1, 2, 3, 4, 5], pa.timestamp("ns")),
        "dur_us": pa.array([0, -5, None, 5, 1], pa.duration("us")),
        "d32": pa.array([0, 19000, None, -1, 1], pa.date32()),
        "rec": pa.StructArray.from_arrays(
            [pa.array([1.5, 2.5, 3.5, 4.5, 5.5]), pa.array([1, 2, 3, 4, 5], pa.int32())],
            names=["x", "id"],
        ),
    }, n


def numpy_of(arr):
    """The values NumPy holds for a column (nulls filled) and its mask."""
    valid = np.array(arr.is_valid().to_pylist(), dtype=bool)
    t = arr.type
    if pa.types.is_boolean(t):
        values = np.array([bool(v) if v is not None else False for v in arr.to_pylist()])
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        values = np.array([v if v is not None else "" for v in arr.to_pylist()], dtype=str)
    elif pa.types.is_binary(t):
        values = np.array([v if v is not None else b"" for v in arr.to_pylist()], dtype=bytes)
    elif pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_date32(t):
        kind = "m8" if pa.types.is_duration(t) else "M8"
        unit = "D" if pa.types.is_date32(t) else t.unit
        ints = arr.cast(pa.int32() if pa.types.is_date32(t) else pa.int64()).to_numpy(zero_copy_only=False)
        ints = np.where(valid, np.nan_to_num(ints.astype(float), nan=0), 0).astype(np.int64)
        values = ints.view(f"{kind}[{unit}]").copy()
        values[~valid] = np.array("NaT", dtype=f"{kind}[{unit}]")
    else:
        values = arr.fill_null(0).to_numpy(zero_copy_only=False)
    return values, valid


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "fixtures", "arrow"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cols, n = columns()
    batch = pa.RecordBatch.from_pydict(cols)
    path = os.path.join(args.out, "table.arrow")
    with pa.ipc.new_file(path, batch.schema) as w:
        w.write_batch(batch)
    expected = {}
    for name, arr in cols.items():
        if pa.types.is_struct(arr.type):
            for i, f in enumerate(arr.type):
                expected[f"{name}.{f.name}"] = arr.field(i).to_numpy(zero_copy_only=False)
            continue
        values, valid = numpy_of(arr)
        expected[name] = values
        if not valid.all():
            expected[name + ".valid"] = valid
    np.savez(os.path.join(args.out, "table.expected.npz"), **expected)
    print(f"wrote {path} ({len(cols)} columns, {n} rows, pyarrow {pa.__version__}) and table.expected.npz")


if __name__ == "__main__":
    main()
