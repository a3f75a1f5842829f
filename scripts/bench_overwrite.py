#!/usr/bin/env python3
"""NumPy's side of benches/overwrite.rs: the same series of `np.save` calls,
printed as JSON (one list of seconds per series).

Usage:
    python3 scripts/bench_overwrite.py DIR MIB RUNS [PAUSE_MS]

Series (each call timed alone with `time.perf_counter`, no `sync` between
calls, as a program saving a checkpoint over and over would do):
  new        remove the target (untimed), then `np.save` to it
  overwrite  `np.save` over the previous call's file, back to back
  spaced     the same after an untimed pause of PAUSE_MS (default 1000)
Each series also gives the pages the kernel allocated during each call
(`pgalloc_*` in /proc/vmstat, system-wide), as `<series>_pages`.
"""

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

COLS = 4096  # as in benches/overwrite.rs


def pages_allocated():
    try:
        with open("/proc/vmstat") as f:
            return sum(int(line.split()[1]) for line in f if line.startswith("pgalloc_"))
    except OSError:
        return 0


def series(runs, setup, call):
    os.sync()
    times, pages = [], []
    for _ in range(runs):
        setup()
        before = pages_allocated()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
        pages.append(pages_allocated() - before)
    return times, pages


def main():
    folder, mib, runs = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    pause = int(sys.argv[4]) / 1000 if len(sys.argv) > 4 else 1.0
    rows = mib * (1 << 20) // 8 // COLS
    a = (np.arange(rows * COLS, dtype=np.float64) * 0.5).reshape(rows, COLS)
    path = folder / "overwrite_numpy.npy"
    out = {}

    def remove():
        if path.exists():
            path.unlink()

    for key, setup in [("new", remove), ("overwrite", lambda: None), ("spaced", lambda: time.sleep(pause))]:
        out[key], out[key + "_pages"] = series(runs, setup, lambda: np.save(path, a))

    path.unlink()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
