#!/usr/bin/env python3
"""NumPy's side of benches/overwrite.rs: the same series of `np.save` calls,
printed as JSON (one list of seconds per series).

Usage:
    python3 scripts/bench_overwrite.py DIR MIB RUNS

Series (each call timed alone with `time.perf_counter`, no `sync` between
calls, as a program saving a checkpoint over and over would do):
  new        remove the target (untimed), then `np.save` to it
  overwrite  `np.save` over the previous call's file, back to back
"""

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

COLS = 4096  # as in benches/overwrite.rs


def main():
    folder, mib, runs = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    rows = mib * (1 << 20) // 8 // COLS
    a = (np.arange(rows * COLS, dtype=np.float64) * 0.5).reshape(rows, COLS)
    path = folder / "overwrite_numpy.npy"
    out = {}

    os.sync()
    times = []
    for _ in range(runs):
        if path.exists():
            path.unlink()
        start = time.perf_counter()
        np.save(path, a)
        times.append(time.perf_counter() - start)
    out["new"] = times

    os.sync()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        np.save(path, a)
        times.append(time.perf_counter() - start)
    out["overwrite"] = times

    path.unlink()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
