#!/usr/bin/env python3
"""Writes a corpus of .npy/.npz files as NumPy 1.x makes them.

Meant to run under ``numpy<2`` (e.g. /tmp/np1/bin/python, NumPy 1.26.4), where
pickles name ``numpy.core.multiarray`` and np.save pickles with protocol 3; it
also runs under NumPy 2 (then the files are NumPy 2's, ``numpy._core`` and
protocol 4), which is how the script itself is tested.

    /tmp/np1/bin/python scripts/gen_np1_fixtures.py --out /tmp/np1-corpus

Contents:
  obj_mixed_p{0..5}.npy  one object array (ints incl. bigints, floats, nan, str,
                         bytes, None, bool, lists, dicts, tuples, sets of ints,
                         nested object and numeric arrays, NumPy scalars,
                         date/datetime (naive and UTC), Decimal, complex) pickled
                         at protocols 0..5 (np.save's header, then
                         pickle.dump(a, protocol=p))
  obj_mixed_save.npy     the same array through np.save (protocol 3 on NumPy 1)
  obj_0d*, obj_empty*, obj_fortran*   0-d, empty and Fortran-ordered object arrays
  rec_obj*.npy           records with object fields (flat, nested, sub-array)
  str_*.npy              <U, >U, |S arrays (1-D, 2-D Fortran, empty strings)
  dt64_*.npy, td64_*.npy datetime64/timedelta64 in several units, with NaT
  savez_*.npz, savez_compressed_*.npz   archives with object and plain members
  memmap_*.npy           np.lib.format.open_memmap output, values written, flushed
  manifest.json          per file/member: numpy version, dtype, shape,
                         fortran_order, repr(a.tolist()) as loaded back by the
                         NumPy that wrote them (allow_pickle=True)

Deterministic: fixed values, sets hold only ints, np.savez writes the fixed
zip date 1980-01-01.
"""

import argparse
import datetime
import decimal
import io
import json
import os
import pickle
import shutil
import sys

import numpy as np


def header_bytes(a):
    """The header np.save writes for a (everything before the data)."""
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=True)
    raw = buf.getvalue()
    major = raw[6]
    if major == 1:
        return raw[: 10 + int.from_bytes(raw[8:10], "little")]
    return raw[: 12 + int.from_bytes(raw[8:12], "little")]


def save_protocol(path, a, protocol):
    with open(path, "wb") as f:
        f.write(header_bytes(a))
        pickle.dump(a, f, protocol=protocol)


def objarr(items, shape=None):
    a = np.empty(len(items), dtype=object)
    for i, x in enumerate(items):
        a[i] = x
    return a.reshape(shape) if shape is not None else a


def mixed_items():
    inner_obj = objarr([1, "two", None, [3]])
    inner_num = np.arange(4, dtype="<i2").reshape(2, 2)
    inner_f = np.asfortranarray(np.array([[1.5, 2.5], [3.5, 4.5]]))
    return [
        0, -1, 255, 2**31, -2**63, 2**70, -2**100,
        1.5, -0.0, float("nan"), float("inf"), 1e-310,
        "", "ascii", "é漢🎉",
        b"", b"bytes\x00\xff",
        None, True, False,
        [1, [2, "x"], []], {"k": 1, "n": None, 3: [4]}, (), (1, "tup"), {3, 1, 2},
        inner_obj, inner_num, inner_f,
        np.float64(2.5), np.int32(-7), np.bool_(True), np.complex128(1 - 2j), np.str_("np-str"),
        datetime.date(2020, 2, 29), datetime.datetime(2021, 3, 4, 5, 6, 7, 123456),
        datetime.datetime(2021, 3, 4, 5, 6, 7, tzinfo=datetime.timezone.utc),
        datetime.timedelta(days=-1, seconds=5),
        decimal.Decimal("1.10"), decimal.Decimal("-0.00"), decimal.Decimal("NaN"),
        complex(1, -2), complex(float("inf"), 0.0),
        bytearray(b"ba"),
    ]


def write_corpus(out):
    files = []

    def add(name):
        files.append(name)
        return os.path.join(out, name)

    mixed = objarr(mixed_items())
    for p in range(0, 6):
        if p > pickle.HIGHEST_PROTOCOL:
            continue
        save_protocol(add(f"obj_mixed_p{p}.npy"), mixed, p)
    np.save(add("obj_mixed_save.npy"), mixed)

    # 0-d, empty, Fortran
    zero_d = np.empty((), dtype=object)
    zero_d[()] = {"a": [1, 2], "b": "zero-d"}
    np.save(add("obj_0d.npy"), zero_d)
    save_protocol(add("obj_0d_p2.npy"), zero_d, 2)
    zero_d_none = np.empty((), dtype=object)
    np.save(add("obj_0d_none.npy"), zero_d_none)
    np.save(add("obj_empty.npy"), np.empty((0,), dtype=object))
    np.save(add("obj_empty_2d.npy"), np.empty((0, 3), dtype=object))
    fort = np.asfortranarray(objarr(["a", 1, None, [2], 3.5, b"b"], (2, 3)))
    assert fort.flags.f_contiguous and not fort.flags.c_contiguous
    np.save(add("obj_fortran.npy"), fort)
    save_protocol(add("obj_fortran_p0.npy"), fort, 0)
    save_protocol(add("obj_fortran_p2.npy"), fort, 2)
    np.save(add("obj_3d.npy"), objarr(list(range(24)), (2, 3, 4)))

    # records with object fields
    rec_dt = np.dtype([("id", "<i4"), ("obj", "O"), ("val", "<f8")])
    rec = np.zeros(3, dtype=rec_dt)
    rec["id"] = [1, 2, 3]
    rec["val"] = [0.5, -1.0, float("nan")]
    for i, v in enumerate(["text", None, [1, {"x": 2}]]):
        rec["obj"][i] = v
    np.save(add("rec_obj.npy"), rec)
    for p in (0, 2):
        save_protocol(add(f"rec_obj_p{p}.npy"), rec, p)
    nested_dt = np.dtype([("a", "<i2"), ("r", [("x", "<f4"), ("o", "O")]), ("s", "O", (2,))])
    nested = np.zeros(2, dtype=nested_dt)
    nested["a"] = [10, -20]
    nested["r"]["x"] = [1.25, 2.5]
    for i, v in enumerate(["n0", (1, 2)]):
        nested["r"]["o"][i] = v
    for i, pair in enumerate([("p", None), (b"q", 3)]):
        for j, v in enumerate(pair):
            nested["s"][i, j] = v
    np.save(add("rec_obj_nested.npy"), nested)
    rec0 = np.zeros((), dtype=rec_dt)
    rec0["id"] = 9
    rec0["obj"] = "zero-d record"
    rec0["val"] = 2.0
    np.save(add("rec_obj_0d.npy"), rec0)
    big_rec = np.zeros(2, dtype=[("a", ">i4"), ("o", "O"), ("b", ">f8")])
    big_rec["a"] = [1, -1]
    big_rec["b"] = [1.5, -2.5]
    big_rec["o"][0] = "big"
    big_rec["o"][1] = None
    np.save(add("rec_obj_big_endian.npy"), big_rec)

    # strings
    np.save(add("str_U.npy"), np.array(["", "a", "é漢", "🎉🎉🎉"], dtype="<U3"))
    np.save(add("str_U_be.npy"), np.array(["ab", "é", ""], dtype=">U2"))
    np.save(add("str_U_2d_f.npy"), np.asfortranarray(np.array([["ab", "c"], ["d", "efg"]], dtype="<U3")))
    np.save(add("str_S.npy"), np.array([b"", b"ab", b"\x00x", b"\xff\xfe"], dtype="|S2"))
    np.save(add("str_S_trailing_nul.npy"), np.array([b"a\x00\x00", b"abc"], dtype="|S3"))
    np.save(add("str_U_0d.npy"), np.array("zero", dtype="<U4"))

    # datetime64 / timedelta64
    for unit in ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns"):
        a = np.array(["1970-01-01", "2021-03-04", "1969-12-31", "NaT"], dtype="datetime64[D]").astype(f"datetime64[{unit}]")
        np.save(add(f"dt64_{unit}.npy"), a)
    np.save(add("dt64_ns_precise.npy"), np.array(["2021-03-04T05:06:07.123456789", "NaT"], dtype="datetime64[ns]"))
    np.save(add("dt64_10ms.npy"), np.array([0, 1, -1, 123], dtype="datetime64[10ms]"))
    np.save(add("dt64_be.npy"), np.array(["2000-01-01", "NaT"], dtype=">M8[s]"))
    for unit in ("D", "h", "s", "ms", "us", "ns"):
        np.save(add(f"td64_{unit}.npy"), np.array([0, 1, -1, 86400, "NaT"], dtype=f"timedelta64[{unit}]"))
    np.save(add("td64_generic.npy"), np.array([1, 2], dtype="m8"))

    # archives
    np.savez(add("savez_mixed.npz"),
             objs=objarr([1, "x", None, [2, 3]]),
             nums=np.arange(6, dtype="<i8").reshape(2, 3),
             strs=np.array(["a", "bc"]),
             rec=rec,
             zero_d=zero_d)
    np.savez(add("savez_positional.npz"), objarr([{"k": "v"}, b"b"]), np.linspace(0, 1, 5))
    np.savez_compressed(add("savez_compressed_mixed.npz"),
                        objs=mixed,
                        nums=np.arange(100, dtype="<f4"),
                        dts=np.array(["2020-01-01", "NaT"], dtype="M8[D]"))
    np.savez_compressed(add("savez_compressed_positional.npz"), objarr([None]), np.ones((2, 2), dtype=">i2"))

    # open_memmap
    mm = np.lib.format.open_memmap(add("memmap_f8.npy"), mode="w+", dtype="<f8", shape=(3, 4))
    mm[:] = np.arange(12, dtype="<f8").reshape(3, 4) / 4
    mm.flush()
    del mm
    mm = np.lib.format.open_memmap(add("memmap_fortran_i4.npy"), mode="w+", dtype=">i4", shape=(2, 3), fortran_order=True)
    mm[:] = [[1, 2, 3], [-4, -5, 2**31 - 1]]
    mm.flush()
    del mm
    mm = np.lib.format.open_memmap(add("memmap_rec.npy"), mode="w+", dtype=[("x", "<i2"), ("y", "<f4"), ("s", "S3")], shape=(3,))
    mm["x"] = [1, 2, 3]
    mm["y"] = [0.5, 1.5, -2.5]
    mm["s"] = [b"a", b"bb", b"ccc"]
    mm.flush()
    del mm
    mm = np.lib.format.open_memmap(add("memmap_v2.npy"), mode="w+", dtype="<u2", shape=(5,), version=(2, 0))
    mm[:] = [0, 1, 2, 65535, 7]
    mm.flush()
    del mm
    return files


def fortran_flag(raw):
    major = raw[6]
    hl = int.from_bytes(raw[8:10] if major == 1 else raw[8:12], "little")
    start = 10 if major == 1 else 12
    return b"'fortran_order': True" in raw[start:start + hl]


def manifest(out, files):
    import zipfile
    result = {"numpy_version": np.__version__,
              "python_version": sys.version.split()[0],
              "files": {}}
    for name in files:
        path = os.path.join(out, name)
        if name.endswith(".npz"):
            with zipfile.ZipFile(path) as zf:
                raws = {m[:-4]: zf.read(m) for m in zf.namelist()}
            with np.load(path, allow_pickle=True) as z:
                entries = {f"{name}::{k}": (z[k], raws[k]) for k in z.files}
        else:
            with open(path, "rb") as f:
                raw = f.read()
            entries = {name: (np.load(path, allow_pickle=True), raw)}
        for key, (a, raw) in entries.items():
            result["files"][key] = {
                "dtype": repr(a.dtype.descr) if a.dtype.names else a.dtype.str,
                "shape": list(a.shape),
                "fortran_order": fortran_flag(raw),
                "repr": repr(a.tolist()),
            }
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output folder (emptied first)")
    args = ap.parse_args()
    out = args.out
    if os.path.isdir(out):
        for n in os.listdir(out):
            p = os.path.join(out, n)
            if os.path.isfile(p) and n.endswith((".npy", ".npz", ".json")):
                os.remove(p)
    os.makedirs(out, exist_ok=True)
    files = write_corpus(out)
    manifest(out, files)
    total = sum(os.path.getsize(os.path.join(out, n)) for n in files)
    print(f"wrote {len(files)} files ({total} bytes) + manifest.json to {out} with NumPy {np.__version__}")


if __name__ == "__main__":
    main()
