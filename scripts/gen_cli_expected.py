#!/usr/bin/env python3
"""Makes the CLI's extra fixtures (fixtures/cli/, fixed seed) and the
expected outputs its tests compare with (ndnpy-cli/tests/expected.json),
all computed by NumPy:

- "show": repr(np.load(file)) with default print options, and
  repr(a[slice]) for the slice cases;
- "stats": count, np.nanmin/np.nanmax, NaN/±inf counts, and mean/std
  (ddof=0) over the finite values.

Run from the repository root: python3 scripts/gen_cli_expected.py
"""
import glob
import math
import json
import os

import numpy as np

OUT = "fixtures/cli"
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(12)

# Large arrays, so that repr summarises; mixed magnitudes; F order; slices.
np.save(f"{OUT}/big_f64.npy", rng.standard_normal(2000))
np.save(f"{OUT}/big_2d_i32.npy", rng.integers(-500, 500, size=(50, 40), dtype=np.int32))
np.save(f"{OUT}/big_3d_f32.npy", rng.standard_normal((12, 10, 11)).astype(np.float32))
np.save(f"{OUT}/wide_u8.npy", rng.integers(0, 255, size=(4, 30), dtype=np.uint8))
np.save(f"{OUT}/fortran_f64.npy", np.asfortranarray(rng.standard_normal((6, 7))))
np.save(f"{OUT}/mixed_f64.npy", np.array([1e-9, 1.0, 123456.0, np.nan, -np.inf]))
np.save(f"{OUT}/small_f64.npy", np.array([0.5, 0.25, 100.125, -3.0]))
np.save(f"{OUT}/empty_2d.npy", np.zeros((2, 0)))
np.save(f"{OUT}/empty_1d_i2.npy", np.zeros(0, dtype=np.int16))
np.save(f"{OUT}/c64.npy", (rng.standard_normal(5) + 1j * rng.standard_normal(5)).astype(np.complex64))
np.save(f"{OUT}/f16.npy", np.array([0.1, 1.5, -2.25, 65504, np.nan], dtype=np.float16))
np.save(f"{OUT}/bool_2d.npy", rng.integers(0, 2, size=(3, 4)).astype(bool))
np.save(f"{OUT}/strings_S.npy", np.array([b"a", b"it's", b"\x00x", b"tab\t"]))
np.save(f"{OUT}/timedelta.npy", np.array([1, -20, 300], dtype="m8[s]"))
np.save(f"{OUT}/dates_D.npy", np.array(["2020-02-29", "1969-12-31", "NaT"], dtype="M8[D]"))
np.savez(f"{OUT}/pair.npz", a=np.arange(6.0).reshape(2, 3), b=np.arange(4, dtype=np.int16))
np.savez_compressed(f"{OUT}/pair_compressed.npz", a=np.arange(6.0).reshape(2, 3), b=np.arange(4, dtype=np.int16))
# Two arrays that differ in a few places, for diff.
base = rng.standard_normal((5, 4))
np.save(f"{OUT}/diff_a.npy", base)
other = base.copy()
other[1, 2] += 1e-3
other[4, 0] = 7.0
np.save(f"{OUT}/diff_b.npy", other)
np.save(f"{OUT}/diff_a_fortran.npy", np.asfortranarray(base))

SLICES = [
    ("fixtures/cli/big_2d_i32.npy", "0:5, :, "),
    ("fixtures/cli/big_2d_i32.npy", "-1"),
    ("fixtures/cli/big_2d_i32.npy", "::-7, 3"),
    ("fixtures/cli/big_3d_f32.npy", "..., 2"),
    ("fixtures/cli/big_3d_f32.npy", "1:3, 0:2, -1"),
    ("fixtures/cli/fortran_f64.npy", "1:4, ::2"),
    ("fixtures/cli/big_f64.npy", "10:20"),
    ("fixtures/npy/valid/fortran_3d.npy", ":, 1, :"),
]


def loadable(path):
    try:
        a = np.load(path, allow_pickle=False)
    except Exception:
        return None
    if isinstance(a, np.lib.npyio.NpzFile):
        return None
    return a


def index(spec):
    parts = []
    for item in spec.split(","):
        item = item.strip()
        if item == "":
            continue
        if item == "...":
            parts.append(Ellipsis)
        elif ":" in item:
            nums = [int(x) if x.strip() else None for x in item.split(":")]
            parts.append(slice(*nums))
        else:
            parts.append(int(item))
    return tuple(parts)


def number(x):
    x = float(x)
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def stats(a):
    if a.dtype.kind not in "biuf" or a.dtype.itemsize > 8:
        return None
    flat = a.ravel()
    out = {"count": int(flat.size)}
    if a.dtype.kind == "f":
        f = flat.astype(np.float64)
        finite = f[np.isfinite(f)]
        notnan = f[~np.isnan(f)]
        out["nan"] = int(np.isnan(f).sum())
        out["pos_inf"] = int(np.isposinf(f).sum())
        out["neg_inf"] = int(np.isneginf(f).sum())
        out["min"] = number(np.nanmin(f)) if notnan.size else None
        out["max"] = number(np.nanmax(f)) if notnan.size else None
    else:
        finite = flat.astype(np.float64)
        out["min"] = int(flat.min()) if flat.size else None
        out["max"] = int(flat.max()) if flat.size else None
    # The correctly rounded mean (np.mean's pairwise sum loses the small
    # values next to +-1.8e308 in the f64 fixtures).
    out["mean"] = number(math.fsum(finite) / finite.size) if finite.size else None
    out["std"] = number(np.std(finite)) if finite.size else None
    return out


expected = {"show": {}, "slices": [], "stats": {}}
files = sorted(
    glob.glob("fixtures/npy/valid/*.npy")
    + glob.glob("fixtures/npy/unsupported/*.npy")
    + glob.glob("fixtures/npy/elements/*.npy")
    + glob.glob("fixtures/cli/*.npy")
)
for path in files:
    a = loadable(path)
    if a is None:
        continue
    expected["show"][path] = repr(a)
    s = stats(a)
    if s is not None:
        expected["stats"][path] = s
# Object arrays (fixtures/pickle/, made by scripts/gen_pickle_fixtures.py):
# `show` reads them with ndnpy's own pickle reader. Families whose elements
# are NumPy arrays or scalars are left out: their element reprs come from
# the library's PyValue Display, which spells them differently.
expected["show_objects"] = {}
SKIP = ("datetime64_scalars", "nested_object", "ragged_", "record_with_object")
for path in sorted(glob.glob("fixtures/pickle/*.npy")):
    if any(os.path.basename(path).startswith(s) for s in SKIP):
        continue
    try:
        a = np.load(path, allow_pickle=True)
    except Exception:
        continue
    expected["show_objects"][path] = repr(a)
for path, spec in SLICES:
    a = np.load(path)
    expected["slices"].append({"path": path, "slice": spec, "repr": repr(a[index(spec)])})

with open("ndnpy-cli/tests/expected.json", "w") as f:
    json.dump(expected, f, indent=1, ensure_ascii=False, sort_keys=True)
    f.write("\n")
print(f"{len(expected['show'])} show, {len(expected['show_objects'])} objects, {len(expected['slices'])} slices, {len(expected['stats'])} stats")
