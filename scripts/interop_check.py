#!/usr/bin/env python3
"""Checks the .npy files written by `examples/interop_write.rs` with NumPy.

Usage: python3 scripts/interop_check.py <dir>

For every file in <dir>/manifest.json:
  - the header (read with numpy.lib.format) has the expected dtype, shape and
    fortran_order;
  - np.load gives that dtype and shape, and its memory order agrees with the
    header (F-contiguous and not C-contiguous exactly when fortran_order);
  - the values are exactly the expected ones (bitwise for floats, so NaN
    payloads and -0.0 count);
  - np.save of the loaded array gives exactly the bytes of our file.

Prints `interop: N passed, M failed` and exits non-zero on any failure.
"""

import io
import json
import os
import sys

import numpy as np
from numpy.lib import format as npformat

UINT_OF_SIZE = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def read_header(path):
    with open(path, "rb") as f:
        version = npformat.read_magic(f)
        if version == (1, 0):
            shape, fortran_order, dtype = npformat.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran_order, dtype = npformat.read_array_header_2_0(f)
        else:
            # 3.0 has no public reader; the private one is what np.load uses.
            shape, fortran_order, dtype = npformat._read_array_header(f, version)
    return version, shape, fortran_order, dtype


def expected_values(entry, dtype, directory):
    """The expected flat C-order array, and for floats the expected bit patterns."""
    if "raw" in entry:
        with open(os.path.join(directory, entry["raw"]), "rb") as f:
            return np.frombuffer(f.read(), dtype=dtype), None
    values = entry["values"]
    kind = entry["kind"]
    if kind == "bool":
        return np.array(values, dtype=bool), None
    if kind == "int":
        return np.array(values, dtype=dtype).reshape(-1), None
    float_dtype = dtype if kind == "float" else np.dtype(dtype.str[0] + "f%d" % (dtype.itemsize // 2))
    if kind == "float":
        exp = np.array([float(v) for v in values], dtype=float_dtype)
    else:
        exp = np.array(
            [complex(float(re), float(im)) for re, im in values], dtype=dtype
        )
    bits = np.array(entry["bits"], dtype=UINT_OF_SIZE[float_dtype.itemsize])
    return exp, bits


def check(entry, directory):
    """Returns a list of problems with one file (empty when it is right)."""
    problems = []
    path = os.path.join(directory, entry["file"])
    want_dtype = np.dtype(entry["dtype"])
    want_shape = tuple(entry["shape"])
    want_fortran = entry["fortran_order"]

    version, shape, fortran_order, dtype = read_header(path)
    if dtype.str != entry["dtype"]:
        problems.append(f"header dtype {dtype.str} != expected {entry['dtype']}")
    if shape != want_shape:
        problems.append(f"header shape {shape} != expected {want_shape}")
    if fortran_order != want_fortran:
        problems.append(f"header fortran_order {fortran_order} != expected {want_fortran}")

    a = np.load(path)
    if a.dtype != want_dtype or a.dtype.str != entry["dtype"]:
        problems.append(f"loaded dtype {a.dtype.str} != expected {entry['dtype']}")
    if a.shape != want_shape:
        problems.append(f"loaded shape {a.shape} != expected {want_shape}")
    loaded_fortran = bool(a.flags.f_contiguous and not a.flags.c_contiguous)
    if loaded_fortran != fortran_order:
        problems.append(
            f"loaded array is {'F' if loaded_fortran else 'C'}-ordered "
            f"(c_contiguous={a.flags.c_contiguous}, f_contiguous={a.flags.f_contiguous}) "
            f"but the header says fortran_order={fortran_order}"
        )

    if not problems:
        flat = np.ascontiguousarray(a).reshape(-1)
        exp, bits = expected_values(entry, want_dtype, directory)
        if flat.shape != exp.shape:
            problems.append(f"{flat.size} values, expected {exp.size}")
        elif bits is not None:
            got_bits = flat.view(bits.dtype)
            if not np.array_equal(got_bits, bits):
                i = int(np.argmax(got_bits != bits))
                problems.append(
                    f"float bits differ first at unit {i}: {int(got_bits[i]):#x} != {int(bits[i]):#x}"
                )
            if not np.array_equal(flat, exp, equal_nan=True):
                problems.append("values differ from the manifest's decimal values")
            parts = [(flat, exp)] if entry["kind"] == "float" else [
                (flat.real, exp.real), (flat.imag, exp.imag)]
            for got, want in parts:
                if not np.array_equal(np.signbit(got), np.signbit(want)):
                    problems.append("signs differ (-0.0 or NaN sign)")
        elif not np.array_equal(flat, exp):
            i = int(np.argmax(flat != exp))
            problems.append(f"values differ first at {i}: {flat[i]!r} != {exp[i]!r}")

    with open(path, "rb") as f:
        ours = f.read()
    buf = io.BytesIO()
    np.save(buf, a)
    theirs = buf.getvalue()
    if ours != theirs:
        hl = len(theirs) - a.nbytes
        if ours[:hl] != theirs[:hl]:
            problems.append(
                f"header bytes differ from np.save: ours {ours[:hl]!r} vs numpy {theirs[:hl]!r}"
            )
        else:
            problems.append(
                f"data bytes differ from np.save ({len(ours)} vs {len(theirs)} bytes)"
            )
    return problems


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: interop_check.py <dir>")
    directory = sys.argv[1]
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    entries = manifest["files"]
    print(f"numpy {np.__version__}; {len(entries)} files in {directory}")

    listed = {e["file"] for e in entries}
    on_disk = {n for n in os.listdir(directory) if n.endswith(".npy")}
    passed = failed = 0
    for name in sorted(on_disk - listed):
        print(f"FAIL {name}: not in the manifest")
        failed += 1
    for entry in entries:
        try:
            problems = check(entry, directory)
        except Exception as exc:  # a file NumPy cannot load at all
            problems = [f"{type(exc).__name__}: {exc}"]
        if problems:
            failed += 1
            for p in problems:
                print(f"FAIL {entry['file']} ({entry['case']}): {p}")
        else:
            passed += 1
    print(f"interop: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
