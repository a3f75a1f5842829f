#!/usr/bin/env python3
"""Writes the object-array (pickle) fixtures under fixtures/pickle/.

Every array is made by NumPy and saved as ``np.save`` does (a ``|O``
header, then ``pickle.dump(array, protocol=p)``) for pickle protocols 0 to 5
(``np.save`` itself uses 3 or 4); ``*_np1_p*`` files are the same pickles with NumPy 1.x's module
names (``numpy.core.multiarray`` instead of ``numpy._core.multiarray``),
crafted by rewriting the module name in the pickle bytes.

``expected.json`` describes each file with values produced by Python: the
shape, the Fortran flag, and each element in C order as
``{"repr": repr(x), "type": type(x).__name__}`` or, for a nested ndarray,
``{"ndarray": {"dtype": a.dtype.str, "shape": [...], "hex": C-order bytes}}``
(``"items"`` instead of ``"hex"`` for object arrays). Record arrays (with
object fields) list ``"fields"``: each field ``a[name]`` encoded so, in
native byte order. Entries with
``"pending"`` are files the crate cannot load yet (the reason says why); the
test requires them to fail with ``UnsupportedDType`` until it can.

Deterministic: no randomness beyond a fixed-seed generator, sets hold only
ints (whose iteration order does not depend on PYTHONHASHSEED), and pickles
do not depend on the time.

    python3 scripts/gen_pickle_fixtures.py
"""

import datetime
import decimal
import io
import json
import os
import pickle
import pickletools
import sys
import zipfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "pickle")
PROTOCOLS = (0, 1, 2, 3, 4, 5)


def obj(items, shape=None):
    """An object array holding exactly `items` (no broadcasting of lists)."""
    a = np.empty(len(items), dtype=object)
    for i, x in enumerate(items):
        a[i] = x
    return a.reshape(shape) if shape is not None else a


def cases():
    rng = np.random.default_rng(20260101)
    c = {}
    c["strings"] = obj(["", "a", "héllo", "日本語", "tab\tnew\nline", "quote'\"", "\x00nul", "emoji 🎉"])
    c["none"] = obj([None, "x", None])
    c["ints"] = obj([0, 1, -1, 255, 256, 65535, 65536, 2**31 - 1, -2**31, 2**63 - 1, -2**63,
                     2**63, -2**63 - 1, 10**30, -10**40, 2**200, True, False])
    c["floats"] = obj([0.0, -0.0, 1.5, 0.1, 1e16, 1e-5, 1e300, 5e-324, float("nan"), float("inf"),
                       float("-inf")] + [float(x) for x in rng.standard_normal(5)])
    c["complex"] = obj([1 + 2j, -1.5j, complex(0, 0), complex(float("inf"), float("nan")), complex(-0.0, 1)])
    c["bytes"] = obj([b"", b"abc", bytes(range(256)), bytearray(b"xy\x00"), b"'", b"\"'"])
    c["nested"] = obj([[1, [2, [3]]], (1,), (), (1, "a", None), {"k": [1, 2], 3: (4,)}, {1, 2, 3},
                       frozenset({7}), set(), frozenset(), [], {}, [[[]]], {(1, 2): "tuple key"}])
    c["ragged_int"] = obj([np.arange(3), np.arange(5, dtype=np.int32), np.array([], dtype=np.int64)])
    c["ragged_float"] = obj([rng.standard_normal(4), np.array([np.nan, np.inf], dtype=np.float32),
                             np.array([[1.0, 2.0], [3.0, 4.0]])])
    c["ragged_fortran"] = obj([np.asfortranarray(np.arange(6, dtype=np.uint16).reshape(2, 3)), np.array(True)])
    c["ragged_str"] = obj([np.array(["a", "bc"]), np.array(["def"])])
    c["nested_object"] = obj([obj(["x", 1]), obj([obj([None])]), obj([[1], [2]], shape=None)])
    c["numpy_scalars"] = obj([np.float64(1.5), np.float32(0.1), np.int64(-3), np.int8(7), np.uint32(4000000000),
                              np.bool_(True), np.bool_(False), np.complex128(1 - 2j), np.complex64(0.5j),
                              np.str_("np str"), np.bytes_(b"np bytes"), np.timedelta64(5, "s"),
                              np.int16(-300), np.uint8(255), np.float16(0.5)])
    c["datetime64_scalars"] = obj([np.datetime64("2024-01-02", "D"), np.datetime64("2020-01-01T00:00:01", "s")])
    c["dates"] = obj([datetime.date(2024, 2, 29), datetime.date(1, 1, 1), datetime.date(9999, 12, 31),
                      datetime.datetime(2020, 1, 2, 3, 4, 5, 6), datetime.datetime(2020, 1, 2),
                      datetime.datetime(2020, 1, 2, 0, 0, 7), datetime.timedelta(0), datetime.timedelta(days=-1, seconds=5),
                      datetime.timedelta(microseconds=1), datetime.timedelta(days=999999999, seconds=86399)])
    c["decimal"] = obj([decimal.Decimal("1.5"), decimal.Decimal("-0.000"), decimal.Decimal("1E+100"),
                        decimal.Decimal("NaN"), decimal.Decimal("-Infinity"), decimal.Decimal("3.14159265358979323846")])
    c["fortran_2d"] = np.asfortranarray(obj(["a", 1, None, 2.5, "e", (6,)], shape=(2, 3)))
    c["c_3d"] = obj(list(range(24)), shape=(2, 3, 4))
    c["zero_d"] = obj(["only"]).reshape(())
    c["empty"] = np.empty((0,), dtype=object)
    c["empty_2d"] = np.empty((3, 0), dtype=object)
    c["record_with_object"] = np.array([(1, "x", 1.5), (2, None, -0.5)],
                                       dtype=[("a", "<i4"), ("b", "O"), ("c", "<f8")])
    c["repeated"] = obj(["same"] * 50 + [("t",)] * 3)
    c["record_fields"] = record_fields()
    c["record_titles"] = np.array([(1, "x"), (-2, [3])], dtype=[(("the title", "t"), "<i2"), ("o", "O")])
    return c


def record_fields():
    """Records with two object fields beside every other kind of field
    (big-endian, datetimes of several units, sub-array, nested record),
    2-D in Fortran order."""
    dt = [("b", "?"), ("i", ">i2"), ("u", "<u8"), ("f", "<f4"), ("c", "<c16"), ("s", "S3"),
          ("U", "<U2"), ("v", "V2"), ("D", "<M8[D]"), ("ns", "<M8[ns]"), ("us", "<M8[us]"),
          ("Y", "<M8[Y]"), ("td", "<m8[s]"), ("tdns", "<m8[ns]"), ("sub", "<i4", (2,)),
          ("rec", [("x", "<f8"), ("y", "|S1")]), ("o", "O"), ("o2", "O")]
    r = np.zeros(4, dtype=dt)
    r[0] = (True, -3, 2**64 - 1, 1.5, 1 + 2j, b"ab", "é", b"xy", "2024-01-02",
            "2024-01-02T00:00:00.000000001", "2024-01-02T03:04:05.000006", "2024", "NaT", 5,
            [1, 2], (2.5, b"z"), {"k": 1}, None)
    r[1] = (False, 32767, 0, -np.inf, complex(0, -1), b"", "", b"\0\0", "NaT",
            "1969-12-31T23:59:59.999999999", "1900-03-01T00:00:00", "1969", 86400 * 3 + 7, -1,
            [-1, 2**31 - 1], (np.nan, b""), [1, (2,)], "s")
    r[2] = (True, -32768, 2**63, 1e-3, complex(np.inf, 0), b"abc", "日本", b"\xff\x00",
            "1600-02-29", "2262-04-11T23:47:16.854775807", "0001-01-01T00:00:00", "2400", -5,
            2**63 - 1, [0, -2**31], (-0.0, b"q"), obj([1, None]), 2.5)
    return np.asfortranarray(r.reshape(2, 2))


PENDING = {}


def encode(x):
    if isinstance(x, np.ndarray):
        d = {"dtype": x.dtype.str, "shape": list(x.shape)}
        if x.dtype.hasobject:
            if x.dtype.names is None:
                d["items"] = [encode(v) for v in x.ravel(order="C")]
        else:
            d["hex"] = x.tobytes(order="C").hex()
        return {"ndarray": d}
    e = {"repr": repr(x), "type": type(x).__name__}
    if isinstance(x, np.datetime64):
        unit = np.datetime_data(x.dtype)[0]
        e["ours"] = f"np.datetime64({x.astype(np.int64)},'{unit}')"
    return e


def numpy1_names(data):
    """The pickle with NumPy 1.x's module names, re-framed."""
    out = data.replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")
    out = out.replace(b"\x8c\x16numpy._core.multiarray", b"\x8c\x15numpy.core.multiarray")
    out = out.replace(b"\x8c\x13numpy._core.numeric", b"\x8c\x12numpy.core.numeric")
    if out[:2] in (b"\x80\x04", b"\x80\x05"):
        out = pickletools.optimize(out)
    assert b"numpy._core" not in out
    return out


def save(path, a, data):
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, np.lib.format.header_data_from_array_1_0(a))
        f.write(data)
    back = np.load(path, allow_pickle=True)
    assert back.shape == a.shape and back.dtype == a.dtype, path


class _Crafted:
    """Pickles as ndarray.__reduce__ would, with a state of our choosing."""

    def __init__(self, state):
        self.state = state

    def __reduce__(self):
        return (np._core.multiarray._reconstruct, (np.ndarray, (0,), b"b"), self.state)


def bad_records():
    """Record pickles NumPy-style but wrong, each with the error the crate
    must give: {name: (dtype, shape, records, error variant)}."""
    i4o = [("a", "<i4"), ("o", "O")]
    return {
        "tuple_too_short": (i4o, (1,), [(1,)], "MalformedPickle"),
        "record_not_a_tuple": (i4o, (1,), [[1, "x"]], "MalformedPickle"),
        "int_out_of_range": ([("a", "i1"), ("o", "O")], (1,), [(300, None)], "MalformedPickle"),
        "negative_unsigned": ([("a", "<u4"), ("o", "O")], (1,), [(-1, None)], "MalformedPickle"),
        "str_too_long": ([("a", "<U2"), ("o", "O")], (1,), [("abc", None)], "MalformedPickle"),
        "str_for_a_float": ([("a", "<f8"), ("o", "O")], (1,), [("1.5", None)], "MalformedPickle"),
        "void_wrong_length": ([("a", "V2"), ("o", "O")], (1,), [(b"x", None)], "MalformedPickle"),
        "subarray_wrong_shape": ([("a", "<i4", (2,)), ("o", "O")], (1,),
                                 [(np.arange(3, dtype="<i4"), None)], "MalformedPickle"),
        "str_for_a_date": ([("d", "<M8[D]"), ("o", "O")], (1,), [("2024", None)], "MalformedPickle"),
        "count_disagrees_with_shape": (i4o, (3,), [(1, None), (2, None)], "MalformedPickle"),
        "object_in_nested_record": ([("r", [("x", "O")])], (1,), [((1,),)], "UnsupportedDType"),
        "wide_record_claim": ([("v", "V100000000"), ("o", "O")], (1,), [(b"", None)], "PickleLimit"),
        # One tuple, memoized, stands for 4 000 records of 1 600 bytes.
        "shared_record_tuples": ([(f"f{i}", "<i8") for i in range(199)] + [("o", "O")], (4000,),
                                 [tuple(range(199)) + (None,)] * 4000, "PickleLimit"),
    }


def write_bad_records():
    # Beside fixtures/pickle/, whose files all load (the CLI checks them).
    bad = os.path.join(ROOT, "..", "pickle_bad", "records")
    os.makedirs(bad, exist_ok=True)
    for name in os.listdir(bad):
        os.remove(os.path.join(bad, name))
    manifest = {}
    for name, (dt, shape, records, error) in bad_records().items():
        dt = np.dtype(dt)
        state = (1, shape, dt, False, records)
        with open(os.path.join(bad, name + ".npy"), "wb") as f:
            np.lib.format.write_array_header_1_0(
                f, {"descr": np.lib.format.dtype_to_descr(dt), "fortran_order": False, "shape": shape})
            f.write(pickle.dumps(_Crafted(state), protocol=3))
        manifest[name + ".npy"] = error
    # A record array inside an object array whose title repeats another
    # field's name (NumPy cannot build such a dtype; the pickle is edited):
    # a lookup by name would find the wrong field. In this dict order the
    # title's entry shadows the name's and the field seems to overlap; the
    # reader also refuses repeated titles whatever the order.
    inner = np.array([(1, None)], dtype=[(("t", "a"), "<i4"), ("x", "O")])
    outer = np.empty(1, dtype=object)
    outer[0] = inner
    data = pickle.dumps(outer, protocol=3)
    title = b"X\x01\x00\x00\x00t"
    assert data.count(title) == 1
    data = data.replace(title, b"X\x01\x00\x00\x00x")
    with open(os.path.join(bad, "title_repeats_name.npy"), "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "|O", "fortran_order": False, "shape": (1,)})
        f.write(data)
    manifest["title_repeats_name.npy"] = "UnsupportedPickle"
    # The same with the title repeating an earlier field's name: the
    # name's own entry comes first, nothing overlaps, and the title check
    # is what refuses it.
    inner = np.array([(1, 2.0, None)], dtype=[("x", "<i4"), (("t", "y"), "<f8"), ("o", "O")])
    outer = np.empty(1, dtype=object)
    outer[0] = inner
    data = pickle.dumps(outer, protocol=3)
    assert data.count(title) == 1
    data = data.replace(title, b"X\x01\x00\x00\x00x")
    with open(os.path.join(bad, "title_repeats_earlier_name.npy"), "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "|O", "fortran_order": False, "shape": (1,)})
        f.write(data)
    manifest["title_repeats_earlier_name.npy"] = "MalformedPickle"
    with open(os.path.join(bad, "errors.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    os.makedirs(ROOT, exist_ok=True)
    write_bad_records()
    for name in os.listdir(ROOT):
        if name.endswith((".npy", ".npz", ".json")):
            os.remove(os.path.join(ROOT, name))
    expected = {}
    for name, a in cases().items():
        info = {
            "shape": list(a.shape),
            "fortran_order": bool(a.flags.f_contiguous and not a.flags.c_contiguous),
            "dtype": a.dtype.str if a.dtype.names is None else str(a.dtype.descr),
        }
        if name in PENDING:
            info["pending"] = PENDING[name]
        if a.dtype.names is None:
            info["items"] = [encode(v) for v in a.ravel(order="C")]
        else:
            # Each field as NumPy gives it (a[name]), in native byte order.
            info["fields"] = {}
            for field in a.dtype.names:
                v = a[field]
                if not v.dtype.hasobject:
                    v = v.astype(v.dtype.newbyteorder("="))
                info["fields"][field] = encode(v)
        for p in PROTOCOLS:
            data = pickle.dumps(a, protocol=p)
            fname = f"{name}_p{p}.npy"
            save(os.path.join(ROOT, fname), a, data)
            expected[fname] = info
            if p in (2, 4):
                fname = f"{name}_np1_p{p}.npy"
                save(os.path.join(ROOT, fname), a, numpy1_names(data))
                expected[fname] = info
    # An object member inside an .npz, written as np.savez does but with a
    # fixed member time so the file does not change between runs.
    names = obj(["alpha", None, "gamma"])
    with zipfile.ZipFile(os.path.join(ROOT, "objects.npz"), "w", zipfile.ZIP_DEFLATED) as z:
        for key, value in (("names", names), ("nums", np.arange(3, dtype=np.int64))):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, value, allow_pickle=True)
            info = zipfile.ZipInfo(key + ".npy", date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, buf.getvalue())
    with np.load(os.path.join(ROOT, "objects.npz"), allow_pickle=True) as z:
        assert list(z["names"]) == ["alpha", None, "gamma"]
    expected["objects.npz"] = {
        "members": {
            "names": {"shape": [3], "items": [encode(v) for v in names]},
            "nums": {"ndarray": encode(np.arange(3, dtype=np.int64))["ndarray"]},
        }
    }
    with open(os.path.join(ROOT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(expected)} fixtures to {os.path.normpath(ROOT)} with numpy {np.__version__}, "
          f"python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
