#!/usr/bin/env python3
"""NumPy's side of `benches/npy.rs`'s `read_c` / `read_big_endian` /
`read_f` groups: the same files, read into an array allocated (and faulted
in) once outside the timing, the way NumPy users do it without a
`read into` API (numpy #30777): `np.lib.format` reads the header, then
`readinto` fills the array's memory; a byte-swapped or Fortran file needs a
second pass (`arr[...] = tmp`). Beside it, `np.load` into a new array.

    NDNPY_BENCH_MIB=256 cargo bench -p ndnpy-bench --bench npy -- 'read_(c|f|big_endian)/'
    python3 scripts/bench_read_into.py [--mib 256] [--runs 10] [DIR]

DIR is the benchmark's folder (NDNPY_BENCH_DIR, default target/bench-data).
Prints median [min, max] in ms of `--runs` runs for each case.
"""

import argparse
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from bench_elements import spread  # noqa: E402


def read_into(path, out):
    """The header by `np.lib.format`, then the data straight into `out`
    when the file's layout is `out`'s, else through a temporary."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read_header(f)
        assert shape == out.shape
        if dtype == out.dtype and fortran == out.flags.f_contiguous:
            f.readinto(memoryview(out).cast("B"))
        else:
            tmp = np.empty(shape, dtype, order="F" if fortran else "C")
            f.readinto(memoryview(tmp.reshape(-1, order="A")).cast("B"))
            out[...] = tmp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=int(os.environ.get("NDNPY_BENCH_MIB", 256)))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("dir", nargs="?", default=os.environ.get(
        "NDNPY_BENCH_DIR", os.path.join(ROOT, "target", "bench-data")))
    args = ap.parse_args()
    for kind in ["c", "be", "f"]:
        path = os.path.join(args.dir, f"in_{kind}_{args.mib}.npy")
        if not os.path.exists(path):
            sys.exit(f"{path} is missing: run the cargo bench first")
        shape = np.load(path, mmap_mode="r").shape
        out = np.ones(shape, dtype=np.float64)  # C order, faulted in
        read_into(path, out)
        assert np.array_equal(out, np.load(path)), path
        print(f"{kind}: readinto an existing array {spread(lambda: read_into(path, out), args.runs)}; "
              f"np.load {spread(lambda: np.load(path), args.runs)}")


if __name__ == "__main__":
    sys.exit(main())
