#!/usr/bin/env python3
"""The `append` case of benches/grow.rs with the `npy-append-array` package
(pip install npy-append-array) and with a plain file write in the same loop:
1000 appends of a 1 MiB block (1024 x 256 float32) to a file of one block,
after an untimed sync; 15 alternating runs (NDNPY_GROW_APPEND_RUNS).

    flock /tmp/ndnpy-heavy.lock python3 scripts/bench_grow_numpy.py

Files go to NDNPY_BENCH_DIR (default target/bench-data) and are deleted.
"""

import os
import statistics
import time

import numpy as np
from npy_append_array import NpyAppendArray

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR = os.environ.get("NDNPY_BENCH_DIR", os.path.join(ROOT, "target", "bench-data"))
BLOCKS = 1000


def main():
    os.makedirs(DIR, exist_ok=True)
    block = np.arange(1024 * 256, dtype=np.float32).reshape(1024, 256)
    raw = block.tobytes()
    path = os.path.join(DIR, "grow_append_py.npy")
    raw_path = os.path.join(DIR, "grow_append_py.raw")
    ours, base = [], []
    for _ in range(int(os.environ.get("NDNPY_GROW_APPEND_RUNS", "15"))):
        if os.path.exists(path):
            os.remove(path)
        np.save(path, block)
        os.sync()
        start = time.perf_counter()
        with NpyAppendArray(path) as f:
            for _ in range(BLOCKS):
                f.append(block)
        ours.append(time.perf_counter() - start)

        with open(raw_path, "wb") as f:
            f.write(raw)
        os.sync()
        start = time.perf_counter()
        with open(raw_path, "ab") as f:
            for _ in range(BLOCKS):
                f.write(raw)
        base.append(time.perf_counter() - start)
    assert np.load(path, mmap_mode="r").shape == (1024 * (BLOCKS + 1), 256)
    os.remove(path)
    os.remove(raw_path)
    print(f"append 1000 x 1 MiB, {len(ours)} alternating runs")
    print(f"  npy-append-array       median {statistics.median(ours) * 1e3:.1f} ms  min {min(ours) * 1e3:.1f} ms")
    print(f"  python file.write      median {statistics.median(base) * 1e3:.1f} ms  min {min(base) * 1e3:.1f} ms")
    print("  all runs npy-append-array:", [f"{t * 1e3:.1f}" for t in ours])


if __name__ == "__main__":
    main()
