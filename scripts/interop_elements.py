#!/usr/bin/env python3
"""Checks the files written by `examples/interop_elements.rs` with NumPy.

Usage: python3 scripts/interop_elements.py <dir>

For each manifest entry (a file and a Python expression building the
equivalent NumPy array):
  - np.load gives the expected dtype, shape, memory order and values;
  - np.save of the expected array writes exactly our header (same descr,
    shape and order), and its data when the dtype has no padding;
  - np.save of what np.load gave writes exactly our bytes.

Prints `interop_elements: N passed, M failed`; exits non-zero on failure.
"""

import io
import json
import os
import sys

import numpy as np


def save(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def same(a, b):
    if a.dtype.names is not None:
        return all(same(a[n], b[n]) for n in a.dtype.names)
    if a.dtype.kind in "Mm":
        return np.array_equal(a.view("i8"), b.view("i8"))
    if a.dtype.kind in "fc":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def has_padding(dt):
    if dt.names is None:
        return dt.subdtype is not None and has_padding(dt.subdtype[0])
    used = sum(dt.fields[n][0].itemsize for n in dt.names)
    return used != dt.itemsize or any(has_padding(dt.fields[n][0]) for n in dt.names)


def main():
    directory = sys.argv[1]
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    passed = failed = 0
    for entry in manifest:
        path = os.path.join(directory, entry["file"])
        problems = []
        ours = open(path, "rb").read()
        exp = eval(entry["expect"], {"np": np})  # our own manifest
        got = np.load(path)
        if got.dtype != exp.dtype:
            problems.append(f"dtype {got.dtype!r} != {exp.dtype!r}")
        elif got.shape != exp.shape:
            problems.append(f"shape {got.shape} != {exp.shape}")
        elif not same(got, exp):
            problems.append(f"values {got!r} != {exp!r}")
        if got.flags.f_contiguous != exp.flags.f_contiguous:
            problems.append("memory order differs")
        theirs = save(exp)
        header_len = len(theirs) - exp.nbytes
        if theirs[:header_len] != ours[:header_len]:
            problems.append(f"header {ours[:header_len]!r} != np.save's {theirs[:header_len]!r}")
        elif not has_padding(exp.dtype) and exp.dtype.kind != "V" and theirs != ours:
            problems.append("data differs from np.save of the expected array")
        if save(got) != ours:
            problems.append("np.save of the loaded array differs from our bytes")
        if problems:
            failed += 1
            print(f"FAIL {entry['file']}: " + "; ".join(problems))
        else:
            passed += 1
    print(f"interop_elements: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
