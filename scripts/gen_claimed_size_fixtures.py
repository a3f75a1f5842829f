#!/usr/bin/env python3
"""Writes small files whose headers claim sizes their bytes do not hold.

Each file is a few hundred bytes to a few KiB, and each claims work or
memory out of proportion to it: elements of item size 0 (which no data
byte pays for), empty dimensions beside huge ones, object arrays whose
header shape the pickle does not have, and scipy.sparse archives whose
matrix shape or block height only a header says. tests/claimed_sizes.rs
runs every reader of the crate on each, under a counting allocator: no
input here may make a reader allocate 64 MiB or give anything but the
answer expected.json records. The fuzz smoke run uses the folder as seeds.

    python3 scripts/gen_claimed_size_fixtures.py [--out fixtures/claimed_sizes]

Needs numpy; scipy (optional) to record what scipy.sparse.load_npz does
with the sparse archives. expected.json, for each file:

  errors   the crate `Error` variants its readers may give (every reader
           gives one of them), "ok" where a reader may succeed
  numpy    what np.load does with it (allow_pickle=True), run here
  scipy    for the sparse archives, what scipy.sparse.load_npz does
  note     what the file claims

Deterministic: hand-made headers, fixed zip dates; deflated members
depend on the zlib version.
"""

import argparse
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import zipfile

import numpy as np

HUGE = 2**61 - 1


def npy(descr, shape, data=b"", fortran=False):
    """A version 1.0 .npy file with this header, padded as np.save pads."""
    text = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr,
        "True" if fortran else "False",
        repr(tuple(shape)),
    )
    header = text.encode("latin1")
    pad = (64 - (10 + len(header) + 1) % 64) % 64
    header += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + data


def archive(members, method):
    """A zip of (name, bytes) members, as np.savez writes them."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)
    return out.getvalue()


def saved(array):
    out = io.BytesIO()
    np.save(out, array, allow_pickle=True)
    return out.getvalue()


def numpy_result(path):
    """What np.load does with the file, in a child process (a claimed
    size may make NumPy itself allocate)."""
    code = (
        "import numpy as np, sys\n"
        "r = np.load(sys.argv[1], allow_pickle=True)\n"
        "if hasattr(r, 'files'):\n"
        "    print('loads:', ', '.join('%s %s %s' % (k, r[k].dtype, r[k].shape) for k in r.files))\n"
        "else:\n"
        "    print('loads: %s %s' % (r.dtype, r.shape))\n"
    )
    return child(code, path)


def scipy_result(path):
    code = (
        "import scipy.sparse as sp, sys\n"
        "m = sp.load_npz(sys.argv[1])\n"
        "print('loads: %s shape %s nnz %d' % (type(m).__name__, m.shape, m.nnz))\n"
    )
    return child(code, path)


def child(code, path):
    try:
        p = subprocess.run(
            [sys.executable, "-c", code, path],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
    except subprocess.TimeoutExpired:
        return "runs over a minute (killed)"
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["killed"])[-1]
        return "refuses: " + last if p.returncode == 1 else "crashes (%d): %s" % (p.returncode, last)
    out = p.stdout.strip()
    # A dtype of 250 fields prints long: its start says enough.
    return out if len(out) <= 240 else out[:240] + "..."



def object_array_holding(value):
    a = np.empty(1, dtype=object)
    a[0] = value
    return saved(a)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="fixtures/claimed_sizes")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    limit = ["ZeroSizeLimit"]
    files = {}

    def add(name, data, errors, note, sparse=False):
        path = os.path.join(args.out, name)
        with open(path, "wb") as f:
            f.write(data)
        entry = {"errors": errors, "note": note, "numpy": numpy_result(path)}
        if sparse:
            try:
                import scipy  # noqa: F401

                entry["scipy"] = scipy_result(path)
            except ImportError:
                entry["scipy"] = "not run (no scipy)"
        files[name] = entry

    # Items of size 0: no data byte pays for any of them.
    add("s0_2e61.npy", npy("'|S0'", (HUGE,)), limit, "2**61 - 1 empty byte strings")
    add("u0_2e61.npy", npy("'<U0'", (HUGE,)), limit, "2**61 - 1 empty strings")
    add("v0_2e61.npy", npy("'|V0'", (HUGE,)), limit, "2**61 - 1 void items of no bytes")
    add("record_empty_2e61.npy", npy("[]", (HUGE,)), limit, "records without fields")
    add(
        "record_s0_field_2e61.npy",
        npy("[('a', '|S0'), ('b', '<U0')]", (HUGE,)),
        limit,
        "records of two zero-size fields",
    )
    add(
        "sub_f8_0_2e61.npy",
        npy("('<f8', (0,))", (HUGE,)),
        limit,
        "sub-arrays of no items: shape (2**61 - 1, 0) once expanded",
    )
    add(
        "sub_s0_1000_2e20.npy",
        npy("('|S0', (1000,))", (2**20,)),
        limit,
        "2**20 elements of 1000 empty strings each: 2**30 values from no bytes",
    )
    fields = ", ".join("('f%d', '|S0')" % i for i in range(250))
    add(
        "record_i1_250_s0_fields.npy",
        npy("[('a', '|i1'), %s]" % fields, (4200,), bytes(4200)),
        limit,
        "4200 records of one byte, each with 250 zero-size fields: 1 050 000 values",
    )
    add(
        "s0_fortran_2e30x2e30.npy",
        npy("'|S0'", (2**30, 2**30), fortran=True),
        limit,
        "2**60 empty strings in Fortran order",
    )
    add(
        "s0_2e62x2.npy",
        npy("'|S0'", (2**62, 2)),
        limit,
        "2**63 elements: more than ndarray (isize::MAX) holds",
    )
    add(
        "u0_2e20.npy",
        npy("'<U0'", (2**20,)),
        ["ok"],
        "exactly ReadOptions::max_zero_size_elements' default: loads (24 MiB of Strings)",
    )
    add(
        "u0_2e20_plus_1.npy",
        npy("'<U0'", (2**20 + 1,)),
        limit,
        "one more than the default limit",
    )
    # Empty dimensions beside huge ones.
    add(
        "f8_0x2e62.npy",
        npy("'<f8'", (0, 2**62)),
        ["LengthOverflow"],
        "no elements, but 2**62 * 8 bytes by NumPy's rule (which ignores zero dimensions)",
    )
    add("f8_2e40x0.npy", npy("'<f8'", (2**40, 0)), ["ok"], "no elements")
    add("s0_0x2e62.npy", npy("'|S0'", (0, 2**62)), ["ok"], "no elements of no size")
    # Object arrays: the header's shape is only a claim, the pickle builds.
    add(
        "object_holding_s0_2e61.npy",
        object_array_holding(np.ndarray((HUGE,), "S0")),
        ["PickleLimit", "DTypeMismatch"],
        "an object array whose one element is an ndarray of 2**61 - 1 empty strings",
    )
    short = saved(np.array([None], dtype=object))
    claimed = npy("'|O'", (2**40,)) + short[short.index(b"\n") + 1 :]
    add(
        "object_2e40_short_pickle.npy",
        claimed,
        ["MalformedPickle", "DTypeMismatch"],
        "header shape (2**40,), pickle of one None (np.load returns the pickle's array)",
    )
    # Archives of such members, stored and deflated.
    members = [
        ("s0.npy", npy("'|S0'", (HUGE,))),
        ("u0.npy", npy("'<U0'", (HUGE,))),
        ("v0.npy", npy("'|V0'", (HUGE,))),
        ("records.npy", npy("[]", (HUGE,))),
    ]
    for label, method in [("stored", zipfile.ZIP_STORED), ("deflated", zipfile.ZIP_DEFLATED)]:
        add(
            "zero_size_members_%s.npz" % label,
            archive(members, method),
            limit,
            "members of 2**61 - 1 zero-size items, %s" % label,
        )

    # scipy.sparse archives (np.savez_compressed of the members, as
    # save_npz writes them).
    def sparse(name, errors, note, **members):
        out = io.BytesIO()
        np.savez_compressed(out, **members)
        add(name, out.getvalue(), errors, note, sparse=True)

    for exp in (28, 40):
        rows = 2**exp
        sparse(
            "bsr_claimed_height_2e%d.npz" % exp,
            ["InvalidSparse"],
            "BSR, no blocks stored, blocks of 2**%d x 1: CSR needs 2**%d row pointers" % (exp, exp),
            indices=np.empty(0, "<i4"),
            indptr=np.array([0, 0], "<i4"),
            format=np.array(b"bsr"),
            shape=np.array([rows, 1], "<i8"),
            data=np.empty((0, rows, 1)),
        )
    side = 1400
    sparse(
        "bsr_quadratic.npz",
        ["InvalidSparse"],
        "BSR of 1400 block rows of 1400 rows, one block stored: 1.96 M rows from 2802 values",
        indices=np.array([0], "<i4"),
        indptr=np.array([0] + [1] * side, "<i4"),
        format=np.array(b"bsr"),
        shape=np.array([side * side, 1], "<i8"),
        data=np.ones((1, side, 1)),
    )
    sparse(
        "csr_claimed_rows_2e40.npz",
        ["InvalidSparse"],
        "CSR of 2**40 rows whose indptr has 2 entries",
        indices=np.empty(0, "<i4"),
        indptr=np.array([0, 0], "<i4"),
        format=np.array(b"csr"),
        shape=np.array([2**40, 1], "<i8"),
        data=np.empty(0),
    )
    sparse(
        "coo_claimed_shape_2e62.npz",
        ["ok"],
        "COO of shape (2**62, 2**62), no entries: nothing is allocated per row",
        row=np.empty(0, "<i4"),
        col=np.empty(0, "<i4"),
        format=np.array(b"coo"),
        shape=np.array([2**62, 2**62], "<i8"),
        data=np.empty(0),
    )
    sparse(
        "dia_claimed_length_2e40.npz",
        ["ok"],
        "DIA of no diagonals of length 2**40",
        offsets=np.empty(0, "<i4"),
        format=np.array(b"dia"),
        shape=np.array([2**40, 2**40], "<i8"),
        data=np.empty((0, 2**40)),
    )

    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump(files, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote %d files to %s" % (len(files), args.out))


if __name__ == "__main__":
    main()
