#!/usr/bin/env python3
"""Writes the "in the wild" fixtures under fixtures/wild/.

Files that real NumPy/pandas/SciPy users produce and that the crate meets in
practice, beyond what scripts/gen_fixtures.py and gen_pickle_fixtures.py make:

  stringdtype/      NumPy 2 ``StringDType`` arrays (np.save pickles them under
                    a ``|O`` header) and a .npz of two of them; PICKLES.md.
  pandas/           object arrays from ``Series/DataFrame.to_numpy()`` holding
                    Timestamp (naive, UTC, zoneinfo, fixed offset, s/ns units),
                    Timedelta, NaT, NA, Decimal; PICKLES.md.
  opaque/           object arrays of stdlib classes (Fraction, OrderedDict,
                    Counter, UUID, PurePosixPath, SimpleNamespace) at pickle
                    protocols 2 and 4 (and 0), and a .npz with SciPy sparse
                    matrices in 0-d object members.
  longdouble/       ``<f16``/``>f16``/``<c32``/``>c32`` arrays (x86-64 80-bit
                    extended precision, 6 zero padding bytes per value), a
                    record with a long double field.
  numpy_testdata/   copies of numpy/lib/tests/data/*.npy|npz (NumPy's own
                    Python 2 / Python 3 pickle test files) with LICENSE.txt.
  nested_objects/   records with object fields inside nested records and
                    sub-array fields.

Every group has ``expected.json``: file name (or ``file.npz::member``) ->
``{"dtype": a.dtype.str (repr(a.dtype.descr) for records), "shape": [...],
"fortran_order": header flag, "repr": repr(a.tolist()), "globals": [[module,
name], ...]}`` from ``np.load(allow_pickle=True, encoding='latin1')``;
``globals`` lists the (module, name) pairs the pickle asks for, in order of
first use (empty for files without a pickle). Groups add keys of their own
(see the README.md written next to them).

Deterministic: fixed values only, long double padding bytes are zeroed,
np.savez writes the fixed zip date 1980-01-01. Needs NumPy >= 2 (StringDType),
pandas >= 3 (zoneinfo time zones, non-nano Timestamps) and SciPy, on x86-64
Linux (80-bit long double).

    /tmp/np2/bin/python scripts/gen_wild_fixtures.py
"""

import ast
import collections
import datetime
import decimal
import fractions
import glob
import importlib.metadata
import io
import json
import os
import pathlib
import pickle
import pickletools
import platform
import re
import shutil
import sys
import types
import uuid
import warnings
import zipfile

import numpy as np
import pandas as pd
import scipy
import scipy.sparse

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "wild")
NUMPY_TESTDATA = os.environ.get("NUMPY_TESTDATA", "/tmp/nptest/numpy/lib/tests/data")
NUMPY_TESTDATA_VERSION = os.environ.get("NUMPY_TESTDATA_VERSION", "2.3.5")
GROUPS = ("stringdtype", "pandas", "opaque", "longdouble", "numpy_testdata", "nested_objects", "scipy")

warnings.filterwarnings("ignore", message="Custom dtypes are saved")
warnings.filterwarnings("ignore", message="Reading `.npy` or `.npz` file required additional header parsing")

# --------------------------------------------------------------------------
# helpers


def gdir(group):
    return os.path.join(ROOT, group)


def npy_body(raw):
    """Splits .npy bytes into (header dict text, body bytes)."""
    assert raw[:6] == b"\x93NUMPY", raw[:10]
    major = raw[6]
    if major == 1:
        hl = int.from_bytes(raw[8:10], "little")
        start = 10
    else:
        hl = int.from_bytes(raw[8:12], "little")
        start = 12
    return raw[start:start + hl].decode("latin1"), raw[start + hl:]


class RecordingUnpickler(pickle.Unpickler):
    """Unpickler that records every (module, name) asked for, unmapped."""

    def __init__(self, f, **kw):
        super().__init__(f, **kw)
        self.seen = []

    def find_class(self, module, name):
        if [module, name] not in self.seen:
            self.seen.append([module, name])
        return super().find_class(module, name)


def header_dtype(raw_npy):
    hdr, _ = npy_body(raw_npy)
    hdr = re.sub(r"(\d)L\b", r"\1", hdr)   # Python 2 headers spell longs as 2L
    return np.lib.format.descr_to_dtype(ast.literal_eval(hdr)["descr"])


def pickle_globals(raw_npy, encoding="latin1"):
    if not header_dtype(raw_npy).hasobject:
        return []
    _, body = npy_body(raw_npy)
    u = RecordingUnpickler(io.BytesIO(body), encoding=encoding)
    u.load()
    return u.seen


def header_fortran(raw_npy):
    hdr, _ = npy_body(raw_npy)
    return "'fortran_order': True" in hdr


def members(path):
    """Yields (key, raw npy bytes) for a .npy or each member of a .npz."""
    name = os.path.basename(path)
    if path.endswith(".npz"):
        with zipfile.ZipFile(path) as z:
            for m in z.namelist():
                yield f"{name}::{m[:-4] if m.endswith('.npy') else m}", z.read(m)
    else:
        with open(path, "rb") as f:
            yield name, f.read()


def load_all(path, **kw):
    """Dict key -> loaded array, keys as in members()."""
    name = os.path.basename(path)
    if path.endswith(".npz"):
        with np.load(path, allow_pickle=True, **kw) as z:
            return {f"{name}::{k}": z[k] for k in z.files}
    return {name: np.load(path, allow_pickle=True, **kw)}


def dtype_str(dt):
    return repr(dt.descr) if dt.names else dt.str


def describe(a, raw):
    return {
        "dtype": dtype_str(a.dtype),
        "shape": list(a.shape),
        "fortran_order": header_fortran(raw),
        "repr": repr(a.tolist()),
        "globals": pickle_globals(raw),
    }


def dumps(obj, level=0):
    """JSON with one key per line but short lists/dicts kept on one line."""
    flat = json.dumps(obj, ensure_ascii=False, sort_keys=True)
    if not isinstance(obj, (dict, list)) or len(flat) + 2 * level <= 100:
        return flat
    pad, inner = " " * level, " " * (level + 1)
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {dumps(obj[k], level + 1)}" for k in sorted(obj)]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    items = [inner + dumps(v, level + 1) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def write_expected(group, extra=None):
    """Builds <group>/expected.json from every .npy/.npz in the folder."""
    out = {}
    for path in sorted(glob.glob(os.path.join(gdir(group), "*.np[yz]"))):
        raws = dict(members(path))
        for key, a in load_all(path, encoding="latin1").items():
            out[key] = describe(a, raws[key])
            if extra:
                out[key].update(extra(key, a, raws[key]))
    with open(os.path.join(gdir(group), "expected.json"), "w", encoding="utf-8") as f:
        f.write(dumps(out) + "\n")
    return out


def save_protocol(path, a, protocol):
    """What np.save writes, but with the given pickle protocol.

    np.save (NumPy 2) always pickles with protocol 4 and takes no
    pickle_kwargs; np.lib.format.write_array passes protocol=4 itself. So:
    np.save's own header, then pickle.dump(a, protocol=protocol)."""
    buf = io.BytesIO()
    np.save(buf, a)
    raw = buf.getvalue()
    hdr, body = npy_body(raw)
    head = raw[: len(raw) - len(body)]
    with open(path, "wb") as f:
        f.write(head)
        pickle.dump(a, f, protocol=protocol)


def element_dis(x, protocol=4):
    """pickletools disassembly of one element pickled alone (memo stripped)."""
    out = io.StringIO()
    pickletools.dis(pickletools.optimize(pickle.dumps(x, protocol=protocol)), out=out, annotate=0)
    return out.getvalue().rstrip()


def file_dis(path):
    with open(path, "rb") as f:
        _, body = npy_body(f.read())
    out = io.StringIO()
    pickletools.dis(body, out=out, annotate=0)
    return out.getvalue().rstrip()


def globals_md(group):
    lines = []
    for path in sorted(glob.glob(os.path.join(gdir(group), "*.np[yz]"))):
        for key, raw in members(path):
            g = ", ".join(f"`{m}.{n}`" for m, n in pickle_globals(raw))
            lines.append(f"| `{key}` | {g} |")
    return "| file | globals (module.name, order of first use) |\n|---|---|\n" + "\n".join(lines)


# --------------------------------------------------------------------------
# stringdtype

SD = np.dtypes.StringDType


def gen_stringdtype():
    d = gdir("stringdtype")
    sd = SD()
    files = {
        "sd_ascii.npy": np.array(["apple", "banana", "cherry", "a string longer than fifteen bytes"], dtype=sd),
        "sd_unicode.npy": np.array(["é", "漢字", "🎉", "mixé漢🎉", "\u00ff\u0100"], dtype=sd),
        "sd_empty_strings.npy": np.array(["", "x", ""], dtype=sd),
        "sd_0d.npy": np.array("zero-d", dtype=sd),
        "sd_empty.npy": np.array([], dtype=sd),
        "sd_2d_c.npy": np.array([["a", "bb", "ccc"], ["dddd", "", "é"]], dtype=sd),
        "sd_2d_f.npy": np.asfortranarray(np.array([["a", "bb", "ccc"], ["dddd", "", "é"]], dtype=sd)),
        "sd_na_none.npy": np.array(["a", None, "c"], dtype=SD(na_object=None)),
        "sd_na_nan.npy": np.array(["a", np.nan, "c"], dtype=SD(na_object=np.nan)),
        "sd_na_pdna.npy": np.array(["a", pd.NA, "c", pd.NA], dtype=SD(na_object=pd.NA)),
        "sd_no_coerce.npy": np.array(["x", "yz"], dtype=SD(coerce=False)),
        "sd_na_str_no_coerce.npy": np.array(["x", "NA", "y"], dtype=SD(na_object="NA", coerce=False)),
    }
    for name, a in files.items():
        np.save(os.path.join(d, name), a)
        # The BUILD list is always in logical C order, Fortran or not.
        state = a.__reduce_ex__(4)[2]
        assert state[0] == 1 and state[4] == a.ravel(order="C").tolist(), name
    np.savez(os.path.join(d, "sd_archive.npz"),
             names=np.array(["alpha", "βeta", ""], dtype=sd),
             maybe=np.array([None, "present"], dtype=SD(na_object=None)))

    def extra(key, a, raw):
        return {"dtype_repr": repr(a.dtype), "dtype_reduce_args": repr(a.dtype.__reduce__()[1])}

    write_expected("stringdtype", extra)

    md = [
        "# How np.save pickles StringDType arrays",
        "",
        f"Generated by scripts/gen_wild_fixtures.py with NumPy {np.__version__}, "
        f"pandas {pd.__version__}, Python {platform.python_version()}.",
        "",
        "## Header",
        "",
        "`np.save` writes the ordinary header with `'descr': '|O'` (dtype_to_descr",
        "warns \"Custom dtypes are saved as python objects using the pickle",
        "protocol\"), the real `fortran_order` flag and shape, then",
        "`pickle.dump(array, protocol=4)` (np.save always uses protocol 4 and has no",
        "pickle_kwargs). The header alone cannot tell a StringDType file from an",
        "object array: only the dtype inside the pickle can. NumPy 1.x cannot load",
        "these files (no `numpy._core._internal` / StringDType).",
        "",
        "## Pickle structure (all files)",
        "",
        "```",
        "GLOBAL numpy._core.multiarray._reconstruct",
        "REDUCE  (numpy.ndarray, (0,), b'b')          # GLOBAL numpy.ndarray; SHORT_BINBYTES b'b'",
        "BUILD   (1, shape, DTYPE, is_fortran, LIST)   # 5-tuple via MARK..TUPLE",
        "  shape      tuple of ints (EMPTY_TUPLE for 0-d)",
        "  is_fortran NEWTRUE/NEWFALSE (header fortran_order, same meaning)",
        "  LIST       EMPTY_LIST + APPENDS of every element in LOGICAL C ORDER,",
        "             even when is_fortran is True (ndarray list pickles iterate in",
        "             C order); str -> SHORT_BINUNICODE/BINUNICODE; a missing value",
        "             is the na_object itself (NONE / BINFLOAT nan / pandas.NA global).",
        "             Empty array -> EMPTY_LIST with no APPENDS.",
        "DTYPE = GLOBAL numpy._core._internal._convert_to_stringdtype_kwargs",
        "        REDUCE with args:",
        "  StringDType()                          -> (1,)          BININT1 1  TUPLE1",
        "  StringDType(na_object=None)            -> (1, None)     BININT1 1, NONE  TUPLE2",
        "  StringDType(na_object=np.nan)          -> (1, nan)      BININT1 1, BINFLOAT nan  TUPLE2",
        "  StringDType(na_object=pd.NA)           -> (1, pandas.NA) BININT1 1, STACK_GLOBAL('pandas','NA')  TUPLE2",
        "  StringDType(coerce=False)              -> (0,)          BININT1 0  TUPLE1",
        "  StringDType(na_object='NA', coerce=False) -> (0, 'NA')",
        "  i.e. _convert_to_stringdtype_kwargs(coerce: int 0/1, na_object=<absent>)",
        "  (coerce is an int, not a bool; na_object is any picklable object and is",
        "  omitted entirely, not None, when the dtype has none).",
        "  No BUILD follows the dtype REDUCE (unlike numpy.dtype('O8', False, True)",
        "  + BUILD (3, '|', ...) for object arrays).",
        "```",
        "",
        "Source (NumPy):",
        "",
        "```python",
        "def _convert_to_stringdtype_kwargs(coerce, na_object=_NoValue):",
        "    if na_object is _NoValue:",
        "        return StringDType(coerce=coerce)",
        "    return StringDType(coerce=coerce, na_object=na_object)",
        "```",
        "",
        "`.npz` members are the same .npy bytes (np.savez -> format.write_array).",
        "",
        "## Globals per file",
        "",
        globals_md("stringdtype"),
        "",
    ]
    for name in ("sd_ascii.npy", "sd_na_none.npy", "sd_na_nan.npy", "sd_no_coerce.npy", "sd_na_pdna.npy", "sd_2d_f.npy"):
        md += [f"## Disassembly: {name} (body after the header)", "", "```", file_dis(os.path.join(d, name)), "```", ""]
    with open(os.path.join(d, "PICKLES.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))


# --------------------------------------------------------------------------
# pandas


def gen_pandas():
    d = gdir("pandas")
    ts = pd.Timestamp
    plus0530 = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
    arrays = {
        # Naive datetimes: Series.to_numpy() would give datetime64; ask for object.
        "ts_naive.npy": pd.Series([ts("2021-03-04 05:06:07.123456789"), ts("1969-12-31 23:59:59.999999999")]).to_numpy(dtype=object),
        "ts_utc.npy": pd.Series([ts("2021-03-04 05:06:07", tz="UTC"), ts("1999-12-31 23:59:59.5", tz="UTC")]).to_numpy(),
        "ts_paris.npy": pd.Series([ts("2021-03-04 05:06:07", tz="Europe/Paris"), ts("2021-07-14 12:00:00", tz="Europe/Paris")]).to_numpy(),
        "ts_fixed_offset.npy": pd.Series([ts("2021-03-04 05:06:07", tz=plus0530), ts("2000-01-01", tz=plus0530)]).to_numpy(),
        "ts_unit_s.npy": np.array([ts("2020-01-01").as_unit("s"), ts("1900-06-15 12:34:56").as_unit("s")], dtype=object),
        "ts_unit_ns.npy": np.array([ts("2020-01-01").as_unit("ns"), ts("2020-01-01 00:00:00.000000001")], dtype=object),
        "td_ns.npy": pd.Series([pd.Timedelta(days=1, nanoseconds=5), pd.Timedelta(-1, unit="ns")]).to_numpy(dtype=object),
        "td_s.npy": np.array([pd.Timedelta(seconds=90).as_unit("s"), pd.Timedelta(days=-2).as_unit("s")], dtype=object),
        "nat.npy": pd.Series([ts("2021-01-01"), pd.NaT]).to_numpy(dtype=object),
        "na.npy": pd.Series([1, pd.NA, 3], dtype="Int64").to_numpy(dtype=object),
        "decimal.npy": pd.Series([decimal.Decimal("1.10"), decimal.Decimal("NaN"), decimal.Decimal("-0.00"),
                                  decimal.Decimal("1E+5"), decimal.Decimal("-Infinity"), decimal.Decimal("sNaN")]).to_numpy(),
        "mixed_df.npy": pd.DataFrame({"a": [1, 2], "b": ["x", None],
                                      "c": [ts("2021-03-04 05:06:07.123456789"), pd.NaT]}).to_numpy(),
    }
    for name, a in arrays.items():
        assert a.dtype == object, name
        np.save(os.path.join(d, name), a)

    def describe_el(x):
        t = type(x)
        e = {"type": f"{t.__module__}.{t.__qualname__}", "repr": repr(x)}
        if isinstance(x, (pd.Timestamp, pd.Timedelta, decimal.Decimal, type(pd.NaT))) or x is pd.NA:
            r = x.__reduce__()
            e["reduce_args"] = repr(r[1]) if isinstance(r, tuple) else repr(r)
        if isinstance(x, (pd.Timestamp, pd.Timedelta)) and x is not pd.NaT:
            e["unit"] = x.unit
            e["value_ns"] = x.as_unit("ns")._value if x.unit != "ns" else x._value
        if isinstance(x, pd.Timestamp) and x is not pd.NaT:
            e["tz"] = None if x.tz is None else str(x.tz)
            e["isoformat"] = x.isoformat()
        return e

    def extra(key, a, raw):
        return {"elements": [describe_el(x) for x in a.ravel(order="C")]}

    write_expected("pandas", extra)

    samples = [
        ("Timestamp naive, unit ns", arrays["ts_naive.npy"][0]),
        ("Timestamp tz UTC (pandas 3: datetime.timezone.utc), unit us", arrays["ts_utc.npy"][0]),
        ("Timestamp tz Europe/Paris (pandas 3: zoneinfo.ZoneInfo), unit us", arrays["ts_paris.npy"][0]),
        ("Timestamp tz datetime.timezone(timedelta(hours=5, minutes=30)), unit us", arrays["ts_fixed_offset.npy"][0]),
        ("Timestamp unit s", arrays["ts_unit_s.npy"][0]),
        ("Timestamp unit ns", arrays["ts_unit_ns.npy"][1]),
        ("Timedelta unit ns", arrays["td_ns.npy"][0]),
        ("Timedelta unit s", arrays["td_s.npy"][0]),
        ("NaT", pd.NaT),
        ("NA", pd.NA),
        ("Decimal('NaN')", decimal.Decimal("NaN")),
    ]
    md = [
        "# How pandas objects are pickled inside np.save'd object arrays",
        "",
        f"Generated by scripts/gen_wild_fixtures.py with pandas {pd.__version__}, "
        f"NumPy {np.__version__}, Python {platform.python_version()}.",
        "",
        "Every file is an ordinary object array (`'descr': '|O'`), pickled by np.save",
        "at protocol 4: `numpy._core.multiarray._reconstruct(numpy.ndarray, (0,), b'b')`",
        "then BUILD `(1, shape, numpy.dtype('O8', False, True) [BUILD (3, '|', None,",
        "None, None, -1, -1, 63)], is_fortran, [elements in logical C order])`.",
        "Elements are pickled as below (STACK_GLOBAL with SHORT_BINUNICODE module and",
        "name; repeated globals/strings come back through MEMOIZE/BINGET).",
        "",
        "## Summary",
        "",
        "```",
        "Timestamp  pandas._libs.tslibs.timestamps._unpickle_timestamp",
        "           REDUCE (value: int, freq: None, tz, reso: int)      # 4-tuple, MARK..TUPLE",
        "  value  count of `reso` units since 1970-01-01T00:00 UTC (the UTC instant,",
        "         also for tz-aware stamps; any int opcode: BININT1/BININT2/BININT",
        "         when it fits in a signed 32-bit int, LONG1 otherwise)",
        "  freq   always None in pandas 3",
        "  reso   NPY_DATETIMEUNIT code: 7 = s, 8 = ms, 9 = us, 10 = ns",
        "         (pandas 3 parses strings without sub-microsecond digits to us = 9;",
        "         Timestamps from datetime64[ns] columns are 10)",
        "  tz     None                                    naive",
        "         datetime.timezone(datetime.timedelta(0, 0, 0))   'UTC' (timezone.utc):",
        "             GLOBAL datetime.timezone, REDUCE (TD,)  with",
        "             TD = GLOBAL datetime.timedelta REDUCE (days, seconds, microseconds)",
        "         datetime.timezone(datetime.timedelta(0, 19800, 0))  fixed +05:30, same shape",
        "             (a named timezone would have args (TD, name))",
        "         zoneinfo: GLOBAL builtins.getattr REDUCE (GLOBAL zoneinfo.ZoneInfo, '_unpickle')",
        "             -> the classmethod; then REDUCE ('Europe/Paris', 1)",
        "             i.e. zoneinfo.ZoneInfo._unpickle(key: str, from_cache: int 1)",
        "Timedelta  pandas._libs.tslibs.timedeltas._timedelta_unpickle",
        "           REDUCE (value: int, reso: int)   # value in reso units (7 = s, 10 = ns)",
        "NaT        pandas._libs.tslibs.nattype._nat_unpickle  REDUCE (None,)",
        "NA         GLOBAL pandas.NA   (bare global, no REDUCE; a singleton)",
        "Decimal    decimal.Decimal  REDUCE (str,)   e.g. ('NaN',), ('-0.00',), ('1E+5',),",
        "           ('-Infinity',), ('sNaN',), ('1.10',)",
        "```",
        "",
        "mixed_df.npy: `DataFrame.to_numpy()` of int64/str/datetime64[ns] columns is an",
        "object array that is Fortran-ordered (header `fortran_order: True`, BUILD",
        "is_fortran True; list still in C order). In pandas 3 the `str` column turns",
        "None into float nan, NaT stays `NaT`, ints are Python ints.",
        "`Series(..., dtype='Int64').to_numpy()` gives float64 with nan in pandas 3,",
        "so na.npy uses `to_numpy(dtype=object)`; naive datetime/timedelta Series",
        "likewise need `dtype=object` (they would give datetime64/timedelta64).",
        "",
        "expected.json adds `elements`: per element (C order) type, repr,",
        "`reduce_args` (repr of the reconstructor's argument tuple), unit,",
        "value_ns, tz (str) and isoformat.",
        "",
        "## Globals per file",
        "",
        globals_md("pandas"),
        "",
    ]
    for title, x in samples:
        r = x.__reduce__()
        md += [f"## {title}", "", f"`{r[0].__module__}.{r[0].__name__}{r[1]!r}`" if isinstance(r, tuple) else f"reduce -> {r!r}",
               "", "```", element_dis(x), "```", ""]
    with open(os.path.join(d, "PICKLES.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))


# --------------------------------------------------------------------------
# opaque


def objarr(items):
    a = np.empty(len(items), dtype=object)
    for i, x in enumerate(items):
        a[i] = x
    return a


def gen_opaque():
    d = gdir("opaque")
    kinds = {
        "fraction": [fractions.Fraction(3, 4), fractions.Fraction(-7, 2), fractions.Fraction(0)],
        "ordereddict": [collections.OrderedDict([("b", 1), ("a", [2, 3])]), collections.OrderedDict()],
        "counter": [collections.Counter({"x": 3, "y": 1}), collections.Counter()],
        "uuid": [uuid.UUID("12345678-1234-5678-1234-567812345678"), uuid.UUID(int=0)],
        "purepath": [pathlib.PurePosixPath("a/b"), pathlib.PurePosixPath("/etc/x.txt")],
        "namespace": [types.SimpleNamespace(x=1), types.SimpleNamespace(x=1, y="two")],
    }
    for kind, items in kinds.items():
        for p in (2, 4):
            save_protocol(os.path.join(d, f"{kind}_p{p}.npy"), objarr(items), p)
    save_protocol(os.path.join(d, "fraction_p0.npy"), objarr(kinds["fraction"]), 0)
    save_protocol(os.path.join(d, "all_p0.npy"), objarr([v[0] for v in kinds.values()]), 0)

    # SciPy sparse matrices in 0-d object members, as in
    # scipy/sparse/linalg/tests/propack_test_data.npz (copied to scipy/ by
    # gen_scipy() only when under 200 KB; SciPy 1.17's is 600 KB).
    dense = np.array([[1.0, 0.0, 2.5, 0.0], [0.0, 0.0, -3.0, 0.0], [4.0, 0.0, 0.0, 0.5]])
    cdense = np.array([[1 + 2j, 0], [0, -1j], [3, 0]])
    np.savez(os.path.join(d, "scipy_sparse.npz"),
             A_csr=np.array(scipy.sparse.csr_matrix(dense), dtype=object),
             A_coo=np.array(scipy.sparse.coo_matrix(dense), dtype=object),
             A_complex=np.array(scipy.sparse.csc_matrix(cdense), dtype=object))

    def extra(key, a, raw):
        e = {"element_types": [f"{type(x).__module__}.{type(x).__qualname__}" for x in a.ravel(order="C")],
             "protocol": pickle_protocol(raw)}
        if key.startswith("scipy_sparse.npz::"):
            m = a[()]
            e["sparse"] = {"format": m.format, "shape": list(m.shape), "nnz": int(m.nnz),
                           "dtype": m.dtype.str, "dense": repr(m.toarray().tolist()),
                           "state_keys": sorted(vars(m))}
        return e

    write_expected("opaque", extra)


def pickle_protocol(raw):
    _, body = npy_body(raw)
    return body[1] if body[:1] == b"\x80" else 0


PROPACK = os.path.join(os.path.dirname(scipy.__file__), "sparse", "linalg", "tests", "propack_test_data.npz")


def gen_scipy():
    """Copies SciPy's propack_test_data.npz if it is small enough."""
    if not os.path.exists(PROPACK) or os.path.getsize(PROPACK) > 200 * 1024:
        return False
    d = gdir("scipy")
    os.makedirs(d)
    shutil.copyfile(PROPACK, os.path.join(d, "propack_test_data.npz"))
    dist = importlib.metadata.distribution("scipy")
    lic = next(f for f in dist.files if os.path.basename(str(f)).upper().startswith("LICENSE"))
    with open(os.path.join(d, "LICENSE.txt"), "w") as f:
        f.write(f"propack_test_data.npz is copied unchanged from SciPy {scipy.__version__}\n"
                f"(scipy/sparse/linalg/tests/propack_test_data.npz, https://github.com/scipy/scipy),\n"
                f"distributed under SciPy's BSD-3-Clause license:\n\n")
        f.write(lic.read_text().split("\n----")[0].rstrip() + "\n")
    write_expected("scipy")
    return True


# --------------------------------------------------------------------------
# longdouble

LE_REAL, LE_CPLX = "<f16", "<c32"


def ld_clean(a):
    """Copy of a (native <f16/<c32) with the 6 padding bytes of every 80-bit value zeroed."""
    shape = a.shape
    a = np.ascontiguousarray(a)   # (makes 0-d arrays 1-d, hence `shape`)
    u = a.view(np.uint8).reshape(-1, 16).copy()
    u[:, 10:] = 0
    return u.reshape(-1).view(a.dtype).reshape(shape)


def ld_big_endian(a):
    """Big-endian copy of a clean little-endian array, byte for byte."""
    shape = a.shape
    a = np.ascontiguousarray(a)
    u = a.view(np.uint8).reshape(-1, 16)[:, ::-1].copy()
    be = np.frombuffer(u.tobytes(), dtype=a.dtype.newbyteorder(">")).reshape(shape)
    assert be.astype(a.dtype).tobytes() == a.tobytes()
    return be


def ld_hex10(a):
    """10 data bytes (little-endian) of each 80-bit value of a, C order."""
    le = np.ascontiguousarray(a).astype(LE_CPLX if a.dtype.kind == "c" else LE_REAL)
    return [bytes(r).hex() for r in le.view(np.uint8).reshape(-1, 16)[:, :10]]


def check_padding(path):
    with open(path, "rb") as f:
        hdr, body = npy_body(f.read())
    if "'x'" in hdr:   # record [('a','<i4'),('x','<f16')]
        rows = [body[i:i + 20] for i in range(0, len(body), 20)]
        assert all(r[14:20] == bytes(6) for r in rows), path
        return
    big = "'>" in hdr
    for i in range(0, len(body), 16):
        chunk = body[i:i + 16]
        assert (chunk[:6] if big else chunk[10:]) == bytes(6), (path, i)


def gen_longdouble():
    assert np.dtype(np.longdouble).str == "<f16" and np.finfo(np.longdouble).nmant == 63, \
        "needs x86-64 80-bit long double"
    d = gdir("longdouble")
    fi = np.finfo(np.longdouble)
    one = np.longdouble(1)
    vals = [one, np.longdouble("-0.0"), one / 3, np.longdouble("nan"), np.longdouble("inf"),
            -np.longdouble("inf"), fi.smallest_subnormal, fi.max]
    real = ld_clean(np.array(vals, dtype=np.longdouble))
    cplx_pairs = [(vals[0], vals[1]), (vals[2], vals[3]), (vals[4], vals[5]), (vals[6], vals[7])]
    cplx = np.empty(len(cplx_pairs), dtype=np.clongdouble)
    for i, (re, im) in enumerate(cplx_pairs):
        cplx.real[i] = re
        cplx.imag[i] = im
    cplx = ld_clean(cplx)
    rec_dt = np.dtype([("a", "<i4"), ("x", "<f16")])
    rec = np.zeros(3, dtype=rec_dt)
    rec["a"] = [1, -2, 2**31 - 1]
    rec["x"] = real[[0, 2, 7]]
    files = {
        "ld_values.npy": real,
        "ld_values_be.npy": ld_big_endian(real),
        "ld_0d.npy": ld_clean(np.array(one / 3, dtype=np.longdouble)),
        "ld_0d_be.npy": ld_big_endian(ld_clean(np.array(-one / 3, dtype=np.longdouble))),
        "ld_2d_f.npy": np.asfortranarray(real.reshape(2, 4)),
        "ld_empty.npy": np.zeros((0,), dtype=np.longdouble),
        "ld_record.npy": rec,
        "cld_values.npy": cplx,
        "cld_values_be.npy": ld_big_endian(cplx),
        "cld_0d.npy": ld_clean(np.array(complex(1.5, -2.25), dtype=np.clongdouble)),
        "cld_2d_f.npy": np.asfortranarray(cplx.reshape(2, 2)),
        "cld_empty.npy": np.zeros((0, 2), dtype=np.clongdouble),
    }
    assert files["ld_2d_f.npy"].flags.f_contiguous and not files["ld_2d_f.npy"].flags.c_contiguous
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, a in files.items():
            path = os.path.join(d, name)
            np.save(path, a)
            check_padding(path)

        def real_el(x, h):
            return {"hex": h, "float": repr(float(x)), "str": str(x)}

        def extra(key, a, raw):
            if a.dtype.names:
                hx = ld_hex10(a["x"])
                els = [{"a": int(r["a"]), "x": real_el(r["x"], h)} for r, h in zip(a.ravel(order="C"), hx)]
            elif a.dtype.kind == "c":
                hx = ld_hex10(a)
                flat = np.ascontiguousarray(a).reshape(-1)
                els = [{"re": real_el(z.real, hx[2 * i]), "im": real_el(z.imag, hx[2 * i + 1])}
                       for i, z in enumerate(flat)]
            else:
                hx = ld_hex10(a)
                els = [real_el(x, h) for x, h in zip(np.ascontiguousarray(a).reshape(-1), hx)]
            return {"elements": els}

        write_expected("longdouble", extra)


# --------------------------------------------------------------------------
# numpy_testdata

NUMPY_TESTDATA_FILES = ("py2-np0-objarr.npy", "py2-objarr.npy", "py2-objarr.npz", "py3-objarr.npy",
                        "py3-objarr.npz", "python3.npy", "win64python2.npy")


def numpy_license_text():
    dist = importlib.metadata.distribution("numpy")
    for f in dist.files:
        if os.path.basename(str(f)).upper().startswith("LICENSE") and "dist-info" in str(f) and "/numpy/" not in str(f):
            text = f.read_text()
            # Keep NumPy's own BSD-3-Clause text; drop the bundled third-party licenses.
            return text.split("\n----")[0].rstrip() + "\n"
    raise SystemExit("no LICENSE in the numpy dist-info")


def gen_numpy_testdata():
    d = gdir("numpy_testdata")
    for name in NUMPY_TESTDATA_FILES:
        shutil.copyfile(os.path.join(NUMPY_TESTDATA, name), os.path.join(d, name))
    with open(os.path.join(d, "LICENSE.txt"), "w") as f:
        f.write(
            "The files in this folder,\n\n" + "".join(f"  {n}\n" for n in NUMPY_TESTDATA_FILES) + "\nare "
            f"copied unchanged from NumPy's test data, numpy/lib/tests/data/ in the\n"
            f"NumPy {NUMPY_TESTDATA_VERSION} wheel (https://github.com/numpy/numpy,\n"
            f"numpy/lib/tests/data/). They are distributed under NumPy's license:\n\n")
        f.write(numpy_license_text())

    def extra(key, a, raw):
        e = {}
        fname = key.split("::")[0]
        path = os.path.join(d, fname)
        b = load_all(path, encoding="bytes")[key]
        e["repr_bytes"] = repr(b.tolist())
        try:
            load_all(path)[key]
            e["ascii_error"] = None
        except Exception as ex:   # noqa: BLE001 - the type is the point
            e["ascii_error"] = type(ex).__name__
        e["protocol"] = pickle_protocol(raw) if pickle_globals(raw) else None
        return e

    write_expected("numpy_testdata", extra)


# --------------------------------------------------------------------------
# nested_objects


def gen_nested_objects():
    d = gdir("nested_objects")
    d1 = np.dtype([("a", "<i4"), ("r", [("x", "<f8"), ("o", "O")])])
    d2 = np.dtype([("a", "<i4"), ("o", "O", (2,))])
    d3 = np.dtype([("s", [("o", "O")], (2,))])
    def build(dt, shape, fill):
        a = np.zeros(shape, dtype=dt)
        fill(a.reshape(-1) if shape else a[()])
        return a

    def f1(a):   # 3 records: a, r.x, r.o
        a["a"] = [1, 2, 3]
        a["r"]["x"] = [1.5, -0.0, 2.0]
        for i, v in enumerate(["str", None, [1, "two", None]]):
            a["r"]["o"][i] = v

    def f1_0d(r):
        r["a"] = 7
        r["r"]["x"] = 0.25
        r["r"]["o"] = {"k": [1, 2]}

    def f2(a):
        a["a"] = [1, 2, -3]
        for i, pair in enumerate([("a", None), ([1, 2], 3), ("é", b"raw")]):
            for j, v in enumerate(pair):
                a["o"][i, j] = v

    def f2_0d(r):
        r["a"] = 9
        r["o"][0] = None
        r["o"][1] = "x"

    def f3(a):
        for i, pair in enumerate([("p", None), (1, [2, 3]), ("q", "r")]):
            for j, v in enumerate(pair):
                a["s"][i, j]["o"] = v

    def f3_0d(r):
        r["s"][0]["o"] = 10
        r["s"][1]["o"] = "ten"

    files = {
        "nested_record.npy": build(d1, (3,), f1),
        "nested_record_0d.npy": build(d1, (), f1_0d),
        "subarray_obj.npy": build(d2, (3,), f2),
        "subarray_obj_0d.npy": build(d2, (), f2_0d),
        "subarray_of_records.npy": build(d3, (3,), f3),
        "subarray_of_records_0d.npy": build(d3, (), f3_0d),
    }
    for name, a in files.items():
        np.save(os.path.join(d, name), a)

    def extra(key, a, raw):
        return {"descr_repr": repr(a.dtype.descr), "itemsize": a.dtype.itemsize}

    write_expected("nested_objects", extra)


# --------------------------------------------------------------------------


README = """# Wild fixtures

Generated by `scripts/gen_wild_fixtures.py` (NumPy {np}, pandas {pd}, SciPy
{sp}, Python {py}, x86-64); do not edit by hand. Deterministic: rerunning
gives the same bytes.

Every group has `expected.json`: key = file name, or `file.npz::member`;
value = `dtype` (`a.dtype.str`, or `repr(a.dtype.descr)` for records),
`shape`, `fortran_order` (header flag), `repr` (`repr(a.tolist())` after
`np.load(allow_pickle=True, encoding='latin1')`), `globals` (the
`[module, name]` pairs the pickle looks up, first use order, names as in the
pickle before Python 2 name mapping; `[]` without a pickle), plus:

| group | extra keys |
|---|---|
| `stringdtype/` | `dtype_repr`, `dtype_reduce_args` (args of `_convert_to_stringdtype_kwargs`); see PICKLES.md |
| `pandas/` | `elements`: per element (C order) `type`, `repr`, `reduce_args`, `unit`, `value_ns`, `tz`, `isoformat`; see PICKLES.md |
| `opaque/` | `element_types`, `protocol` (pickle protocol of the body); for `scipy_sparse.npz` members `sparse` (`format`, `shape`, `nnz`, `dtype`, `dense` repr, `state_keys`) |
| `longdouble/` | `elements`: per element (C order) `hex` (the 10 data bytes of the 80-bit value, little-endian, whatever the file's byte order), `float` (`repr(float(x))`), `str` (`str(x)`, NumPy's shortest repr); complex `re`/`im`; record `a`/`x`. Padding bytes in the files are zero. |
| `numpy_testdata/` | `repr_bytes` (loaded with `encoding='bytes'`), `ascii_error` (exception type with the default `encoding='ASCII'`, or null), `protocol` |
| `nested_objects/` | `descr_repr`, `itemsize` |

`opaque/*_p{{0,2,4}}.npy` are np.save's header followed by
`pickle.dump(array, protocol=p)` (np.save itself always uses protocol 4).
SciPy's `sparse/linalg/tests/propack_test_data.npz` (600 KB: a NumPy 1.x,
protocol 3 pickle of `scipy.sparse._coo.coo_matrix` / `scipy.sparse._csc.csc_matrix`
in 0-d object members) is too large to copy; `opaque/scipy_sparse.npz` has
the same shape of content, made with np.savez.
"""


def main():
    os.makedirs(ROOT, exist_ok=True)
    for g in GROUPS:
        shutil.rmtree(gdir(g), ignore_errors=True)
    for g in GROUPS:
        if g != "scipy":
            os.makedirs(gdir(g))
    gen_stringdtype()
    gen_pandas()
    gen_opaque()
    gen_scipy()
    gen_longdouble()
    gen_numpy_testdata()
    gen_nested_objects()
    with open(os.path.join(ROOT, "README.md"), "w") as f:
        f.write(README.format(np=np.__version__, pd=pd.__version__, sp=scipy.__version__,
                              py=platform.python_version()))
    total = 0
    count = 0
    for dirpath, _, names in os.walk(ROOT):
        for n in names:
            size = os.path.getsize(os.path.join(dirpath, n))
            total += size
            count += 1
            if n.endswith((".npy", ".npz")) and size > 4096:
                print(f"warning: {os.path.join(dirpath, n)} is {size} bytes", file=sys.stderr)
    print(f"wrote {count} files, {total} bytes, under {os.path.normpath(ROOT)}")


if __name__ == "__main__":
    main()
