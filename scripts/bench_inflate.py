#!/usr/bin/env python3
"""Reading compressed archives back: the compression suite's arrays
(scripts/bench_compress.py) as archives written by `ndnpy convert
--compress` (with ndnpy's piece table) and by `np.savez_compressed`, read by
`ndnpy stats` on every core and on one (`taskset -c 0`), beside `np.load`
touching every member, in one run, interleaved; median (min-max) of
`--repeats` (default 5). With `--old BIN`, the same `ndnpy stats` of an
older build too (to check that NumPy's archives are no slower).

    cargo build --release -p ndnpy-cli
    python3 scripts/bench_inflate.py [--repeats N] [--old OLD_NDNPY]

Numbers in BENCHMARKS.md, "Compressed archives on every core"."""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from bench_compress import suite  # noqa: E402


def timed(f):
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--old")
    args = ap.parse_args()
    exe = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "ndnpy")
    with tempfile.TemporaryDirectory() as d:
        ours, theirs = [], []
        for k, a in suite().items():
            npy = os.path.join(d, k + ".npy")
            np.save(npy, a)
            out = os.path.join(d, "ndnpy_" + k + ".npz")
            subprocess.run([exe, "convert", "--compress", npy, out], check=True, capture_output=True)
            ours.append(out)
            out = os.path.join(d, "numpy_" + k + ".npz")
            np.savez_compressed(out, **{k: a})
            theirs.append(out)
            os.remove(npy)
        total = sum(os.path.getsize(p) for p in ours)
        print(f"{len(ours)} archives, {total / 2**20:.1f} MiB compressed (ndnpy's)")

        def stats(binary, files, one_core=False):
            cmd = [binary, "stats", *files]
            if one_core:
                cmd = ["taskset", "-c", "0", *cmd]
            return lambda: subprocess.run(cmd, check=True, capture_output=True)

        def np_load(files):
            def run():
                for f in files:
                    with np.load(f) as z:
                        for name in z.files:
                            z[name]
            return run

        cases = {
            "ndnpy stats, ndnpy archives, all cores": stats(exe, ours),
            "ndnpy stats, ndnpy archives, 1 core": stats(exe, ours, True),
            "np.load every member, ndnpy archives": np_load(ours),
            "ndnpy stats, NumPy archives, all cores": stats(exe, theirs),
            "ndnpy stats, NumPy archives, 1 core": stats(exe, theirs, True),
            "np.load every member, NumPy archives": np_load(theirs),
        }
        if args.old:
            cases["old ndnpy stats, ndnpy archives"] = stats(args.old, ours)
            cases["old ndnpy stats, NumPy archives"] = stats(args.old, theirs)
        times = {name: [] for name in cases}
        for _ in range(args.repeats):
            for name, run in cases.items():
                times[name].append(timed(run))
        for name, ts in times.items():
            print(f"{name}: {statistics.median(ts) * 1e3:.0f} ms ({min(ts) * 1e3:.0f}-{max(ts) * 1e3:.0f})")
        med = {name: statistics.median(ts) for name, ts in times.items()}
        print(f"2 cores vs 1, ndnpy archives: {med['ndnpy stats, ndnpy archives, 1 core'] / med['ndnpy stats, ndnpy archives, all cores']:.2f}x")
        print(f"ndnpy stats vs np.load, ndnpy archives: {med['np.load every member, ndnpy archives'] / med['ndnpy stats, ndnpy archives, all cores']:.2f}x")
        print(f"ndnpy stats vs np.load, NumPy archives: {med['np.load every member, NumPy archives'] / med['ndnpy stats, NumPy archives, all cores']:.2f}x")


if __name__ == "__main__":
    main()
