#!/usr/bin/env python3
"""NumPy's side of benches/many_members.rs: an .npz of many small members.

    bench_many_members.py make PATH [--members N]
        writes the archive with np.savez: N members a0..a{N-1}, each a small
        float64 array (4 values, deterministic), default N = 65536;
    bench_many_members.py time PATH [--repeats R]
        times `z = np.load(PATH); [z[k] for k in z.files]` R times (default 5)
        and prints one JSON list of seconds per run on stdout.
"""

import argparse
import json
import sys
import time

import numpy as np


def make(path, members):
    base = np.arange(4, dtype=np.float64)
    np.savez(path, **{f"a{i}": base + i for i in range(members)})


def time_loop(path, repeats):
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        with np.load(path) as z:
            arrays = [z[k] for k in z.files]
        runs.append(time.perf_counter() - t)
        assert len(arrays) > 0
        del arrays
    return runs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["make", "time"])
    p.add_argument("path")
    p.add_argument("--members", type=int, default=65536)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    if a.what == "make":
        make(a.path, a.members)
    else:
        json.dump(time_loop(a.path, a.repeats), sys.stdout)
        print()


if __name__ == "__main__":
    main()
