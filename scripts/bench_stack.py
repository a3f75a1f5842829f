#!/usr/bin/env python3
"""Reading a 1 GiB dask stack of 64 shards, whole and as a 1 000-row range
across a shard boundary: ndnpy (`NpyStack`, and `RemoteNpyStack` on the
folder's file:// URL) beside `da.from_npy_stack(...).compute()` and a loop
of `np.load`, in one run. BENCHMARKS.md, "Stacks of `.npy` shards".

    cargo build --release -p ndnpy-store --example stack_bench
    python3 scripts/bench_stack.py [--dir DIR] [--repeats N]

The stack is written once by `da.to_npy_stack` (float64, (1 048 576, 128),
chunks of 16 384 rows) and then read warm (in the page cache), as every
reader is. Times are the best and the median of N reads in one process
each (opening included; process start-up excluded). The timed part runs
under `flock /tmp/ndnpy-heavy.lock`, taken by this script, so that other
heavy jobs on the machine do not run at the same time; other processes
still do. The bytes each range read takes from files are counted
(`rchar` of /proc/self/io: every read and pread)."""

import argparse
import fcntl
import json
import os
import statistics
import subprocess
import sys
import time

try:
    import numpy as np
    import dask.array as da
except ImportError as e:  # pragma: no cover
    if os.environ.get("CI") == "true":
        raise
    print(f"skipped: {e} (needs numpy and dask)")
    sys.exit(0)

ROWS, COLS, SHARD = 1 << 20, 128, 16_384  # 1 GiB of float64, 64 shards
RANGE = (10 * SHARD - 500, 10 * SHARD + 500)  # 1 000 rows across shards 9 and 10
BIN = os.environ.get("NDNPY_STACK_BENCH", "target/release/examples/stack_bench")


def rchar():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def timed(fn, repeats):
    seconds, read = [], 0
    for _ in range(repeats):
        before = rchar()
        t = time.perf_counter()
        a = fn()
        seconds.append(time.perf_counter() - t)
        read = rchar() - before
        del a
    return seconds, read


def ours(directory, mode, repeats):
    start, end = RANGE
    out = subprocess.run([BIN, directory, mode, str(start), str(end), str(repeats)],
                         capture_output=True, text=True, check=True)
    v = json.loads(out.stdout)
    return v["seconds"], v["rchar"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", default="/tmp/ndnpy_bench_stack")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    directory = args.dir
    if not os.path.exists(os.path.join(directory, "info")):
        x = da.random.default_rng(7).random((ROWS, COLS), chunks=(SHARD, COLS))
        da.to_npy_stack(directory, x, axis=0)
    files = [os.path.join(directory, f"{i}.npy") for i in range(ROWS // SHARD)]
    start, end = RANGE
    first, last = start // SHARD, (end - 1) // SHARD

    def np_whole():
        return np.concatenate([np.load(f) for f in files])

    def np_range():
        parts = [np.load(files[i]) for i in range(first, last + 1)]
        return np.concatenate(parts)[start - first * SHARD:end - first * SHARD]

    def np_range_mmap():
        parts = [np.load(files[i], mmap_mode="r") for i in range(first, last + 1)]
        return np.concatenate([
            parts[0][start - first * SHARD:],
            parts[-1][:end - last * SHARD],
        ])

    def dask_whole():
        return da.from_npy_stack(directory).compute()

    def dask_range():
        return da.from_npy_stack(directory)[start:end].compute()

    # Equal results first (not timed).
    want = np_range()
    assert np.array_equal(dask_range(), want)
    assert np.array_equal(np_range_mmap(), want)

    rows = []
    with open("/tmp/ndnpy-heavy.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # Warm the page cache with one whole read.
        np_whole()
        for name, what, fn in [
            ("ndnpy NpyStack::read", "whole", lambda r: ours(directory, "local-whole", r)),
            ("ndnpy RemoteNpyStack::read (file://)", "whole", lambda r: ours(directory, "remote-whole", r)),
            ("da.from_npy_stack(...).compute()", "whole", lambda r: timed(dask_whole, r)),
            ("np.load loop + np.concatenate", "whole", lambda r: timed(np_whole, r)),
            ("ndnpy NpyStack::read_range", "range", lambda r: ours(directory, "local-range", r)),
            ("ndnpy RemoteNpyStack::read_range (file://)", "range", lambda r: ours(directory, "remote-range", r)),
            ("da.from_npy_stack(...)[a:b].compute()", "range", lambda r: timed(dask_range, r)),
            ("np.load of the 2 shards + slice", "range", lambda r: timed(np_range, r)),
            ("np.load(mmap_mode='r') of the 2 shards + slice", "range", lambda r: timed(np_range_mmap, r)),
        ]:
            seconds, read = fn(args.repeats)
            rows.append((name, what, min(seconds), statistics.median(seconds), read))
        fcntl.flock(lock, fcntl.LOCK_UN)

    # Ratios as BENCHMARKS.md gives them: the reader's median / ndnpy's.
    base = {what: next(r[3] for r in rows if r[1] == what) for what in ("whole", "range")}
    print(f"1 GiB stack: {ROWS} x {COLS} float64 in {ROWS // SHARD} shards of {SHARD} rows; "
          f"range = rows {start}..{end} (shards {first} and {last}); {args.repeats} reads each, warm cache")
    print(f"{'reader':50} {'what':6} {'best s':>9} {'median s':>9} {'ratio':>8} {'bytes read':>14}")
    for name, what, best, median, read in rows:
        print(f"{name:50} {what:6} {best:9.4f} {median:9.4f} {median / base[what]:8.2f} {read:14,}")
    print(f"the range's own bytes: {(end - start) * COLS * 8:,}")


if __name__ == "__main__":
    main()
