#!/usr/bin/env python3
"""pandas interop check of ndnpy-parquet (needs pandas and pyarrow).

1. Every file of fixtures/parquet/valid is read and written again by
   ndnpy-parquet; pandas must read the rewrite as a frame equal
   (pd.testing.assert_frame_equal) to what it reads from the original.
2. Frames built in Rust (examples/parquet_interop.rs) must read in pandas as
   the frames built here.
3. The .npz mapping (ndnpy_parquet::convert): every fixture written as .npz
   loads in np.load (allow_pickle=False) with the expected member dtypes
   (<U, |S, <M8[unit], <m8[unit], numbers) and the values pandas reads;
   .npz files written by np.savez become Parquet files pandas reads as the
   expected frames.

Set NDNPY_CARGO_ARGS (e.g. --release) to pass options to cargo.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
VALID = os.path.join(ROOT, "fixtures", "parquet", "valid")
# Known differences, with the reason (none at present).
XFAIL = {}


def cargo(*args):
    extra = os.environ.get("NDNPY_CARGO_ARGS", "").split()
    subprocess.run(["cargo", "run", "-q", *extra, "-p", "ndnpy-parquet", "--example", "parquet_interop", "--", *args],
                   cwd=ROOT, check=True)


def expected_built():
    all_types = pd.DataFrame({
        "i64": np.array([1, -2, 3], dtype=np.int64),
        "u8": np.array([0, 255, 7], dtype=np.uint8),
        "f32": np.array([0.5, np.nan, -1.0], dtype=np.float32),
        "b": [True, False, True],
        "nullable": pd.array([10, None, 30], dtype="Int64"),
        "boolean": pd.array([True, False, None], dtype="boolean"),
        "s": pd.array(["a", None, "ç"], dtype="str"),
        "by": [b"\x00", b"xy", b""],
        "cat": pd.Categorical(["hi", None, "lo"], categories=["lo", "mid", "hi"], ordered=True),
        "bcat": pd.Categorical([b"y", b"y", None], categories=[b"x", b"y"]),
        "t": pd.to_datetime([0, None, 1_700_000_000_000_000], unit="us").as_unit("us"),
        "tz": pd.to_datetime([0, 1, 2], unit="ns", utc=True).tz_convert("Asia/Tokyo"),
        "td": pd.to_timedelta([1, None, -5], unit="s").as_unit("s"),
        # NumPy days are written in milliseconds, as pyarrow writes
        # datetime64[s]; pandas reads datetime64[ms] (NumPy's own cast).
        "days": np.array([0, 1, "NaT"], dtype="datetime64[D]").astype("datetime64[ms]"),
    }, index=pd.RangeIndex(100, 130, 10, name="row"))
    multi = pd.DataFrame({"k": [1.0, 2.0]}, index=pd.MultiIndex.from_arrays(
        [pd.Index(["x", "y"], dtype="str"), np.array([5, 6], dtype=np.int32)], names=["k", None]))
    cats = pd.DataFrame({"c": pd.Categorical.from_codes([2, -1, 0, 2], ["a", "b", "c"], ordered=True)})
    return {"all_types.parquet": all_types, "multiindex_zstd.parquet": multi,
            "categorical_row_groups.parquet": cats}


def check_npz(df, z):
    """Members of `z` (ndnpy's .npz of a frame) against the frame pandas reads."""
    files = set(z.files)
    for col in df.columns:
        key = str(col)
        s = df[col]
        dt = s.dtype
        if isinstance(dt, pd.CategoricalDtype):
            codes = z[key + ".codes"]
            assert codes.dtype.kind == "i", (key, codes.dtype)
            np.testing.assert_array_equal(codes, s.cat.codes.to_numpy(), err_msg=key)
            assert list(z[key + ".categories"]) == list(s.cat.categories), key
            assert (key + ".ordered" in files) == dt.ordered, key
            continue
        a = z[key]
        missing = s.isna().to_numpy()
        if isinstance(dt, pd.DatetimeTZDtype):
            assert a.dtype == np.dtype(f"M8[{dt.unit}]"), (key, a.dtype)
            assert str(z[key + ".tz"]) == str(dt.tz), key
            want = s.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
            np.testing.assert_array_equal(a.view("i8"), want.view("i8"), err_msg=key)
            assert key + ".valid" not in files, key
        elif dt.kind in "mM":
            assert a.dtype == dt, (key, a.dtype, dt)
            np.testing.assert_array_equal(a.view("i8"), s.to_numpy().view("i8"), err_msg=key)
            assert key + ".valid" not in files, key
        else:
            if dt == "str" or isinstance(dt, pd.StringDtype):
                assert a.dtype.kind == "U", (key, a.dtype)
                want = [x for x in s[~missing]]
            elif dt == object:
                assert a.dtype.kind == "S", (key, a.dtype)
                # NumPy strips trailing NULs from |S items.
                want = [x.rstrip(b"\0") for x in s[~missing]]
            elif isinstance(dt, pd.api.extensions.ExtensionDtype):
                assert a.dtype == dt.numpy_dtype, (key, a.dtype, dt)
                want = list(s[~missing].to_numpy(dtype=dt.numpy_dtype))
            elif key + ".valid" in files:
                # Numbers with missing values (Parquet nulls); pandas widens NumPy ints and bools
                # them (float64, object); the member keeps the file's type.
                assert a.dtype.kind in "iubf", (key, a.dtype)
                want = list(s[~missing].astype(a.dtype))
            else:
                assert a.dtype == dt, (key, a.dtype, dt)
                np.testing.assert_array_equal(a, s.to_numpy(), err_msg=key)
                continue
            assert list(a[~missing]) == want, key
            if missing.any():
                np.testing.assert_array_equal(z[key + ".valid"], ~missing, err_msg=key)
            else:
                assert key + ".valid" not in files, key
    idx = df.index
    if isinstance(idx, pd.RangeIndex):
        ranges = [f for f in files if f.startswith("__range_index__")]
        if (idx.start, idx.step, idx.name) == (0, 1, None):
            assert not ranges
        else:
            assert len(ranges) == 1
            np.testing.assert_array_equal(z[ranges[0]], [idx.start, idx.stop, idx.step])
    else:
        levels = [f for f in z.files if f.startswith("__index__.") and "." not in f[len("__index__."):]]
        assert len(levels) == idx.nlevels, (levels, idx.names)


def numpy_npz(path):
    """An .npz written by NumPy, and the frame pandas should read from its Parquet."""
    members = {
        "x": np.array([1.5, np.nan, 3.0]),
        "n": np.array([1, 0, 3], dtype=np.int16),
        "n.valid": np.array([True, False, True]),
        "s": np.array(["a", "", "ç€"]),
        "s.valid": np.array([True, False, True]),
        "by": np.array([b"x", b"yz", b""]),
        "t": np.array(["2020-01-01T00:00", "NaT", "1969-12-31T23:59:59.5"], dtype="M8[ns]"),
        "tz": np.array([0, 1_600_000_000_000, "NaT"], dtype="M8[ms]"),
        "tz.tz": np.array("Europe/Paris"),
        "td": np.array([1, "NaT", -7], dtype="m8[ms]"),
        "g.codes": np.array([2, -1, 0], dtype=np.int8),
        "g.categories": np.array(["lo", "mid", "hi"]),
        "g.ordered": np.array(True),
        "__index__.id": np.array([10, 20, 30], dtype=np.uint32),
    }
    np.savez(path, **members)
    want = pd.DataFrame({
        "x": [1.5, np.nan, 3.0],
        "n": np.array([1, np.nan, 3]),  # int16 with missing values: pandas widens
        "s": pd.array(["a", None, "ç€"], dtype="str"),
        "by": np.array([b"x", b"yz", b""], dtype=object),
        "t": members["t"],
        "tz": pd.Series(members["tz"]).dt.tz_localize("UTC").dt.tz_convert("Europe/Paris").array,
        "td": members["td"],
        "g": pd.Categorical.from_codes([2, -1, 0], ["lo", "mid", "hi"], ordered=True),
    }, index=pd.Index(np.array([10, 20, 30], dtype=np.uint32), name="id"))
    return want


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rt")
        cargo("roundtrip", VALID, out)
        for name in sorted(os.listdir(VALID)):
            try:
                ours = pd.read_parquet(os.path.join(out, name))
                theirs = pd.read_parquet(os.path.join(VALID, name))
                pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
                passed += 1
            except Exception as e:  # report every file, then fail
                if name in XFAIL:
                    print(f"XFAIL roundtrip {name}: {XFAIL[name]}")
                    continue
                failed += 1
                print(f"FAIL roundtrip {name}: {e}")
            else:
                if name in XFAIL:
                    failed += 1
                    print(f"XPASS roundtrip {name}: remove it from XFAIL")
        built = os.path.join(tmp, "built")
        cargo("write", built)
        for name, want in expected_built().items():
            try:
                got = pd.read_parquet(os.path.join(built, name))
                pd.testing.assert_frame_equal(got, want, check_exact=True)
                passed += 1
            except Exception as e:
                failed += 1
                print(f"FAIL built {name}: {e}")
        npz = os.path.join(tmp, "npz")
        cargo("to-npz", VALID, npz)
        for name in sorted(os.listdir(VALID)):
            stem = name[: -len(".parquet")]
            try:
                theirs = pd.read_parquet(os.path.join(VALID, name))
                with np.load(os.path.join(npz, stem + ".npz"), allow_pickle=False) as z:
                    check_npz(theirs, z)
                passed += 1
            except Exception as e:
                failed += 1
                print(f"FAIL npz {name}: {e!r}")
        from_numpy = os.path.join(tmp, "from_numpy")
        os.makedirs(from_numpy)
        want = numpy_npz(os.path.join(from_numpy, "numpy.npz"))
        out = os.path.join(tmp, "from_numpy_out")
        cargo("from-npz", from_numpy, out)
        try:
            got = pd.read_parquet(os.path.join(out, "numpy.parquet"))
            pd.testing.assert_frame_equal(got, want, check_exact=True)
            passed += 1
        except Exception as e:
            failed += 1
            print(f"FAIL npz from NumPy: {e!r}")
    print(f"interop_parquet: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
