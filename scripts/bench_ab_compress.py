#!/usr/bin/env python3
"""Interleaved A/B of the compression writer: two builds of
``benches/compress_suite.rs`` (say, before and after a change) on the arrays
of ``scripts/bench_compress.py``, taking turns, so both see the same machine.

    python3 scripts/bench_ab_compress.py BEFORE_EXE AFTER_EXE [--repeats N]

Build each side with ``cargo build --release -p ndnpy-bench --bin
compress_suite`` and copy the binary aside. Prints, per kind and for the
whole suite, the median seconds of each side at 1 thread and at every core,
with min and max, and the ratio of the medians (after / before); checks that
both sides write archives of the same size.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_compress import suite  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    threads = os.cpu_count() or 1
    times = {}
    sizes = {}
    with tempfile.TemporaryDirectory(dir=os.environ.get("NDNPY_BENCH_DIR")) as d:
        for k, a in suite().items():
            np.save(os.path.join(d, k + ".npy"), a)
        for _ in range(args.repeats):
            for side, exe in (("before", args.before), ("after", args.after)):
                run = subprocess.run([exe, d, "1", str(threads)], check=True,
                                     capture_output=True, text=True)
                for line in run.stdout.splitlines():
                    r = json.loads(line)
                    times.setdefault((r["kind"], r["threads"], side), []).append(r["seconds"])
                    sizes.setdefault((r["kind"], side), r["bytes"])
    kinds = sorted({k for k, _, _ in times})
    bad = [k for k in kinds if sizes[(k, "before")] != sizes[(k, "after")]]
    print(f"{'kind':12} {'t':>2} {'before s: median (min-max)':>30} {'after s: median (min-max)':>30} {'after/before':>12}")
    for t in (1, threads):
        total = {s: [sum(times[(k, t, s)][i] for k in kinds) for i in range(args.repeats)]
                 for s in ("before", "after")}
        for k, series in [(k, {s: times[(k, t, s)] for s in ("before", "after")}) for k in kinds] + [("whole suite", total)]:
            b, a = series["before"], series["after"]
            f = lambda xs: f"{statistics.median(xs):8.3f} ({min(xs):.3f}-{max(xs):.3f})"
            print(f"{k:12} {t:>2} {f(b):>30} {f(a):>30} {statistics.median(a) / statistics.median(b):12.3f}")
    for k in bad:
        print(f"{k}: sizes differ: {sizes[(k, 'before')]} before, {sizes[(k, 'after')]} after")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
