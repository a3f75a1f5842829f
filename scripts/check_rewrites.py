"""Checks that files rewritten by `ndnpy` load in NumPy equal to their input.

Usage: python3 scripts/check_rewrites.py MANIFEST.json

The manifest is a list of cases, each
`{"input": path, "output": path, "mode": "same" | "byteorder"}`; a path may
name an archive member as `archive.npz::name`. Both sides are loaded with
`np.load(allow_pickle=True, encoding="latin1")` (how NumPy reads Python 2
pickles) and compared: dtype (exactly, or up to byte order for mode
"byteorder"), shape and values, object arrays element by element and
recursively. Prints a JSON object: `failures` (empty when all agree) and
`skipped`, the inputs this NumPy cannot load itself (a NumPy 1.x without
StringDType, a Python without pandas or SciPy), with the reason.
"""

import json
import math
import sys

import numpy as np


def load(path):
    if "::" in path:
        archive, name = path.split("::", 1)
        with np.load(archive, allow_pickle=True, encoding="latin1") as z:
            return z[name]
    return np.load(path, allow_pickle=True, encoding="latin1")


def same_object(a, b, where):
    if type(a) is not type(b):
        return f"{where}: {type(a).__name__} became {type(b).__name__}"
    if isinstance(a, np.ndarray):
        return same_array(a, b, where, "same")
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{where}: length {len(a)} became {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            why = same_object(x, y, f"{where}[{i}]")
            if why:
                return why
        return None
    if isinstance(a, dict):
        if list(a.keys()) != list(b.keys()):
            return f"{where}: keys {list(a.keys())!r} became {list(b.keys())!r}"
        for k in a:
            why = same_object(a[k], b[k], f"{where}[{k!r}]")
            if why:
                return why
        return None
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return None
    if isinstance(a, np.generic):
        if a.dtype != b.dtype:
            return f"{where}: scalar dtype {a.dtype} became {b.dtype}"
        if a.tobytes() == b.tobytes():
            return None
    try:
        equal = bool(a == b) or repr(a) == repr(b)
    except Exception:  # values that cannot be compared: compare their text
        equal = repr(a) == repr(b)
    return None if equal else f"{where}: {a!r} became {b!r}"


def same_array(a, b, where, mode):
    if a.shape != b.shape:
        return f"{where}: shape {a.shape} became {b.shape}"
    if a.dtype != b.dtype:
        if mode == "byteorder" and a.dtype.newbyteorder("=") == b.dtype.newbyteorder("="):
            b = b.astype(a.dtype)
        elif not (a.dtype.hasobject and a.dtype.names and a.dtype.newbyteorder("=") == b.dtype.newbyteorder("=")):
            return f"{where}: dtype {a.dtype} became {b.dtype}"
    if a.dtype.names:
        for name in a.dtype.names:
            why = same_array(a[name], b[name], f"{where}.{name}", "byteorder")
            if why:
                return why
        return None
    if a.dtype.hasobject:
        for i, (x, y) in enumerate(zip(a.flat, b.flat)):
            why = same_object(x, y, f"{where}.flat[{i}]")
            if why:
                return why
        return None
    if a.dtype.kind in "mM":
        # As counts: NaT compares unequal to itself, and astype between
        # byte orders of the generic unit is a no-op in NumPy.
        def counts(x):
            return x.view(np.dtype(np.int64).newbyteorder(x.dtype.byteorder)).astype(np.int64)
        return None if np.array_equal(counts(a), counts(b)) else f"{where}: values differ"
    if a.dtype.kind in "fc":
        # NaN and NaT compare unequal to themselves: compare the bytes.
        left = np.ascontiguousarray(a).tobytes()
        right = np.ascontiguousarray(b.astype(a.dtype)).tobytes()
        return None if left == right else f"{where}: values differ"
    if a.dtype.kind == "V":
        return None if np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes() else f"{where}: bytes differ"
    return None if np.array_equal(a, b) else f"{where}: values differ"


def main():
    cases = json.load(open(sys.argv[1]))
    failures = []
    skipped = []
    for case in cases:
        label = f"{case['input']} -> {case['output']}"
        try:
            a = load(case["input"])
        except Exception as e:  # NumPy itself cannot load the input: nothing to compare
            skipped.append(f"{case['input']}: {type(e).__name__}: {e}")
            continue
        try:
            b = load(case["output"])
        except Exception as e:
            failures.append(f"{label}: NumPy cannot load the output: {type(e).__name__}: {e}")
            continue
        if isinstance(a, np.ndarray) != isinstance(b, np.ndarray):
            failures.append(f"{label}: {type(a).__name__} became {type(b).__name__}")
            continue
        why = same_array(a, b, "array", case["mode"]) if isinstance(a, np.ndarray) else same_object(a, b, "value")
        if why:
            failures.append(f"{label}: {why}")
    print(json.dumps({"failures": failures, "skipped": skipped}))


if __name__ == "__main__":
    main()
