#!/usr/bin/env python3
"""NumPy's side of `benches/elements.rs`: the same files, the same operations.

Usage: python3 scripts/bench_elements.py [dir]   (run under flock /tmp/ndnpy-heavy.lock)

Reads the files the Rust benchmark wrote (in NDNPY_BENCH_DIR, or the given
folder) and prints the median of 10 runs for each operation.
"""

import io
import os
import sys
import time

import numpy as np


def timings(f, runs=10):
    """Seconds of `runs` calls of `f`, sorted."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return sorted(times)


def median(f, runs=10):
    times = timings(f, runs)
    return times[len(times) // 2]


def spread(f, runs=10):
    """Median [min, max] of `runs` calls, in ms, as text."""
    times = timings(f, runs)
    return f"{times[len(times) // 2] * 1e3:.1f} ms [{times[0] * 1e3:.1f}, {times[-1] * 1e3:.1f}]"


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("NDNPY_BENCH_DIR", "/tmp/ndnpy-bench")
    n_str = int(os.environ.get("NDNPY_BENCH_STRINGS", 1_000_000))
    n_rec = int(os.environ.get("NDNPY_BENCH_RECORDS", 10_000_000))
    s = os.path.join(d, f"strings_U16_{n_str}.npy")
    a = np.load(s)
    print(f"strings_read np.load(f).tolist(): {spread(lambda: np.load(s).tolist())}")
    print(f"strings_read np.load(f): {spread(lambda: np.load(s))}")
    print(f"strings_write np.save (to memory): {median(lambda: np.save(io.BytesIO(), a)) * 1e3:.1f} ms")
    for name in ["rec24", "rec_packed", "rec_be", "rec_reordered"]:
        p = os.path.join(d, f"{name}_{n_rec}.npy")
        print(f"records_read np.load {name}: {median(lambda: np.load(p)) * 1e3:.1f} ms")
    r = np.load(os.path.join(d, f"rec_packed_{n_rec}.npy"))
    print(f"record_field a['a'].copy(): {median(lambda: r['a'].copy()) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
