#!/usr/bin/env python3
"""Writes the pandas Parquet fixtures of ndnpy-parquet (fixtures/parquet/).

Each `valid/NAME.parquet` is a DataFrame written by `df.to_parquet` (pyarrow
engine); `expected.json` records what `pd.read_parquet` gives back for each
(dtypes, index, values), which the Rust tests compare against without needing
pandas. `hostile/` holds files whose `pandas` key lies. Fixed seeds; small.

Usage: python3 scripts/gen_parquet_fixtures.py  (pandas 3.1.1, pyarrow 26.0.1)
"""
import json
import os
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "parquet")
VALID = os.path.join(ROOT, "valid")
HOSTILE = os.path.join(ROOT, "hostile")


def frames():
    rng = np.random.default_rng(20261123)
    n = 7
    out = {}
    num = {f"i{b}": rng.integers(-100, 100, n).astype(f"int{b}") for b in (8, 16, 32, 64)}
    num.update({f"u{b}": rng.integers(0, 200, n).astype(f"uint{b}") for b in (8, 16, 32, 64)})
    num["u64big"] = np.array([2**64 - 1, 0, 1, 2**63, 5, 6, 7], dtype=np.uint64)
    num["f16"] = rng.standard_normal(n).astype(np.float16)
    num["f32"] = rng.standard_normal(n).astype(np.float32)
    f64 = rng.standard_normal(n)
    f64[[1, 4]] = np.nan
    num["f64"] = f64
    num["b"] = rng.integers(0, 2, n).astype(bool)
    out["numeric"] = (pd.DataFrame(num), {})
    out["strings"] = (pd.DataFrame({
        "s": ["alpha", None, "", "ünï", "x" * 40, "b", None],
        "so": pd.Series(["a", "b", None, "d", "e", "f", "g"], dtype=object),
        "by": [b"\x00\x01", None, b"", b"abc", b"\xff" * 3, b"z", b"q"],
    }), {})
    out["categoricals"] = (pd.DataFrame({
        "cat": pd.Categorical(["b", "a", None, "c", "a", "b", "b"], categories=["c", "b", "a", "unused"]),
        "ord": pd.Categorical(["lo", "hi", "mid", None, "lo", "hi", "mid"], categories=["lo", "mid", "hi"], ordered=True),
        "icat": pd.Categorical([3, 1, 2, 3, 1, 2, 3]),
    }), {})
    # Categories in order of first appearance, none unused: the case
    # ndnpy-parquet writes back exactly (see XFAIL in interop_parquet.py).
    out["categoricals_appearance_order"] = (pd.DataFrame({
        "cat": pd.Categorical(["b", "a", None, "c", "a"], categories=["b", "a", "c"]),
        "ord": pd.Categorical(["lo", "mid", None, "hi", "lo"], categories=["lo", "mid", "hi"], ordered=True),
    }), {})
    t = pd.to_datetime(["2020-01-01 00:00:00.123456", None, "1969-12-31 23:59:59", "2038-01-19 03:14:07",
                        "2000-02-29 12:00", "1900-01-01", "2262-04-11"], format="ISO8601")
    out["datetimes"] = (pd.DataFrame({
        "naive_us": t,
        "naive_ns": pd.Series(t.where(t.year < 2262)).dt.as_unit("ns"),
        "ny": t.tz_localize("America/New_York", nonexistent="shift_forward", ambiguous="NaT"),
        "utc": t.tz_localize("UTC"),
        "td": pd.to_timedelta([1, None, -3, 86400 * 400, 0, 5, 7], unit="s"),
        "td_ns": pd.to_timedelta([1, 2, 3, None, 5, 6, 7], unit="ns").as_unit("ns"),
    }), {})
    out["range_index"] = (pd.DataFrame({"x": np.arange(5, dtype=np.int64)},
                                       index=pd.RangeIndex(10, 20, 2, name="r")), {})
    out["range_index_negative_step"] = (pd.DataFrame({"x": np.arange(4.0)},
                                                     index=pd.RangeIndex(7, -1, -2)), {})
    out["int_index"] = (pd.DataFrame({"v": [1.5, 2.5, 3.5]}, index=pd.Index([30, 10, 20], name="id")), {})
    out["string_index"] = (pd.DataFrame({"v": [1, 2, 3]}, index=pd.Index(["x", "y", "z"])), {})
    out["multiindex"] = (pd.DataFrame({"v": [1.0, 2.0, 3.0, 4.0]}, index=pd.MultiIndex.from_arrays(
        [["a", "a", "b", "b"], [1, 2, 1, 2]], names=["key", None])), {})
    out["index_named_like_column"] = (pd.DataFrame({"a": [1, 2, 3]}, index=pd.Index([7, 8, 9], name="a")), {})
    out["nullable"] = (pd.DataFrame({
        "I64": pd.array([1, None, 3, -4], dtype="Int64"),
        "I8": pd.array([None, 2, 3, 4], dtype="Int8"),
        "U32": pd.array([1, 2, None, 4], dtype="UInt32"),
        "B": pd.array([True, None, False, True], dtype="boolean"),
        "F": pd.array([1.5, None, 2.5, 3.0], dtype="Float64"),
        "S": pd.array(["a", None, "c", "d"], dtype="string"),
    }), {})
    out["int_column_names"] = (pd.DataFrame({0: [1, 2], 1: [3.0, 4.0], 2: ["a", "b"]}), {})
    out["many_columns"] = (pd.DataFrame({f"c{i:03}": rng.integers(0, 9, 3) for i in range(150)}), {})
    big = 5000
    out["row_groups"] = (pd.DataFrame({
        "i": np.arange(big, dtype=np.int64),
        "f": rng.standard_normal(big),
        "s": [f"s{i % 97}" if i % 13 else None for i in range(big)],
        "c": pd.Categorical([["x", "y", "z"][i % 3] for i in range(big)]),
        "t": pd.date_range("2024-01-01", periods=big, freq="min", tz="Europe/Paris"),
    }), {"row_group_size": 700})
    base = pd.DataFrame({"x": rng.standard_normal(50), "s": [f"v{i}" for i in range(50)]})
    for comp in ("snappy", "zstd", "gzip", "none"):
        out[f"compression_{comp}"] = (base, {"compression": comp})
    out["empty"] = (pd.DataFrame(), {})
    out["empty_with_columns"] = (pd.DataFrame({"a": pd.Series([], dtype=np.int64),
                                               "s": pd.Series([], dtype="str")}), {})
    return out


def encode(series):
    """What a column holds, JSON-able: missing entries are null."""
    d = series.dtype
    if isinstance(d, pd.CategoricalDtype):
        return {"codes": series.cat.codes.astype(int).tolist(),
                "categories": encode(pd.Series(d.categories))["values"],
                "ordered": bool(d.ordered)}
    na = series.isna().tolist()
    if d.kind in "mM":
        ints = series.array.asi8 if hasattr(series.array, "asi8") else series.values.view("i8")
        vals = [None if m else int(v) for v, m in zip(ints, na)]
        unit = np.datetime_data(series.values.dtype if d.kind == "m" else d.base if hasattr(d, "base") else d)[0] \
            if not hasattr(d, "unit") else d.unit
        return {"values": vals, "unit": unit}
    out = []
    for v, m in zip(series.tolist(), na):
        if m:
            out.append(None)
        elif isinstance(v, bytes):
            out.append({"hex": v.hex()})
        elif isinstance(v, (bool, np.bool_)):
            out.append(bool(v))
        elif isinstance(v, (int, np.integer)):
            out.append(int(v))
        elif isinstance(v, (float, np.floating)):
            out.append(float(v))
        else:
            out.append(str(v))
    return {"values": out}


def describe(df):
    idx = df.index
    if isinstance(idx, pd.RangeIndex):
        index = {"kind": "range", "start": idx.start, "stop": idx.stop, "step": idx.step, "name": idx.name}
    else:
        levels = []
        for i in range(idx.nlevels):
            s = pd.Series(idx.get_level_values(i))
            levels.append({"name": idx.names[i], "dtype": str(s.dtype), **encode(s)})
        index = {"kind": "levels", "levels": levels}
    return {
        "len": len(df),
        "columns": [{"name": str(c), "dtype": str(df[c].dtype), **encode(df[c])} for c in df.columns],
        "index": index,
    }


def hostile(valid_path):
    """Files whose `pandas` key lies about a valid file's data."""
    table = pq.read_table(valid_path)
    meta = json.loads(table.schema.metadata[b"pandas"])

    def write(name, text):
        t = table.replace_schema_metadata({"pandas": text})
        pq.write_table(t, os.path.join(HOSTILE, name + ".parquet"))

    m = json.loads(json.dumps(meta)); m["columns"][0]["pandas_type"] = "quaternion"
    write("unknown_pandas_type", json.dumps(m))
    m = json.loads(json.dumps(meta)); m["index_columns"] = ["no_such_column"]
    write("missing_index_column", json.dumps(m))
    m = json.loads(json.dumps(meta)); m["index_columns"] = [{"kind": "range", "name": None, "start": 0, "stop": 10**12, "step": 1}]
    write("range_length_mismatch", json.dumps(m))
    m = json.loads(json.dumps(meta)); m["index_columns"] = [{"kind": "range", "name": None, "start": 0, "stop": 5, "step": 0}]
    write("range_step_zero", json.dumps(m))
    m = json.loads(json.dumps(meta))
    for c in m["columns"]:
        if c["pandas_type"] == "categorical":
            c["metadata"]["num_categories"] = 2**62
    write("huge_num_categories", json.dumps(m))
    write("not_json", "{\"index_columns\": [")
    write("json_not_object", "[1, 2, 3]")
    m = json.loads(json.dumps(meta)); m["columns"].append({"name": "ghost", "field_name": "ghost", "pandas_type": "int64", "numpy_type": "int64", "metadata": None})
    write("ghost_column", json.dumps(m))


def main():
    for d in (VALID, HOSTILE):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    expected = {}
    for name, (df, kwargs) in frames().items():
        path = os.path.join(VALID, name + ".parquet")
        df.to_parquet(path, **kwargs)
        expected[name] = describe(pd.read_parquet(path))
    # A file from another tool: plain columns, no `pandas` key.
    t = pa.table({"a": pa.array([1, None, 3], pa.int32()), "b": pa.array(["x", "y", None]),
                  "t": pa.array([0, 1, None], pa.timestamp("ms"))})
    pq.write_table(t, os.path.join(VALID, "no_pandas_metadata.parquet"))
    expected["no_pandas_metadata"] = describe(pd.read_parquet(os.path.join(VALID, "no_pandas_metadata.parquet")))
    hostile(os.path.join(VALID, "categoricals.parquet"))
    with open(os.path.join(ROOT, "expected.json"), "w") as f:
        json.dump({"pandas": pd.__version__, "pyarrow": pa.__version__, "files": expected}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
