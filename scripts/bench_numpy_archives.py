#!/usr/bin/env python3
"""Archives written by `np.savez_compressed` (one zlib stream per member,
no piece table), read back by ndnpy and by NumPy in one run, interleaved,
`--repeats` rounds; median (min-max) wall seconds, peak memory (max RSS)
and minor page faults of each read, each read in a process of its own.

    python3 scripts/bench_numpy_archives.py [--repeats 5] [--only suite|range]
        [--range-mib 1024]

- suite: one archive of six kinds (image_u8, ints_i64, mask_b1, random_f64,
  smooth_f64, sparse_f32; about 224 MB), every member read:
  `NpzReader::arrays()` (members read ahead on other cores), the same on one
  core (`taskset -c 0`), `read_any` one member after another without a plan,
  and `np.load` touching every member.
- range: one `float64` member of `--range-mib` MiB, (rows, 16): 1 000 rows
  from the middle with `NpzReader::read_range` (the first call, which builds
  the seek index as far as the rows, and later calls), against inflating the
  whole member (`read_any`) and `np.load`.

The archives are kept in NDNPY_BENCH_DIR (default: a temporary directory).
Numbers in BENCHMARKS.md, "NumPy's archives on every core"."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def suite():
    rng = np.random.default_rng(2026)
    n = 5_000_000
    x = np.linspace(0, 40 * np.pi, 2236)
    yy, xx = np.mgrid[0:2900, 0:4000]
    img = 128 + 60 * np.sin(xx / 50.0) * np.cos(yy / 70.0) + rng.normal(0, 4, (2900, 4000))
    return {
        "image_u8": np.stack([np.clip(img + k * 10, 0, 255).astype(np.uint8) for k in range(3)], axis=-1),
        "ints_i64": np.repeat(rng.integers(0, 200, n // 4, dtype=np.int64), 4),
        "mask_b1": rng.random((5300, 5300)) < 0.2,
        "random_f64": rng.random(n),
        "smooth_f64": np.sin(x)[:, None] * np.cos(0.7 * x)[None, :],
        "sparse_f32": np.where(rng.random(2 * n) < 0.01, rng.normal(size=2 * n), 0.0).astype(np.float32),
    }


def run(cmd):
    """Runs `cmd` under /usr/bin/time (so that its peak RSS is its own, not
    this process's at the fork); gives its JSON output, peak RSS (MiB) and
    minor page faults."""
    with tempfile.NamedTemporaryFile("r") as usage:
        p = subprocess.run(["/usr/bin/time", "-o", usage.name, "-f", "%M %R", *cmd],
                           stdout=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise SystemExit(f"{cmd} failed ({p.returncode})")
        rss, faults = usage.read().split()[-2:]
    return json.loads(p.stdout.strip().splitlines()[-1]), int(rss) / 1024, int(faults)


NUMPY_ALL = """
import json, sys, time, numpy as np
t = time.perf_counter()
with np.load(sys.argv[1]) as z:
    n = sum(z[k].size for k in z.files)
print(json.dumps({"wall": time.perf_counter() - t}))
"""

NUMPY_ONE = """
import json, sys, time, numpy as np
t = time.perf_counter()
with np.load(sys.argv[1]) as z:
    a = z[sys.argv[2]]
w = time.perf_counter() - t
rows = a[int(sys.argv[3]):int(sys.argv[3]) + 1000]
print(json.dumps({"wall": w}))
"""


def summary(xs):
    return f"{statistics.median(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})"


def table(results, base):
    print("| read | wall s, median (min-max) | vs np.load | peak RSS MiB | minor faults |")
    print("|---|---:|---:|---:|---:|")
    ref = statistics.median(results[base]["wall"])
    for case, r in results.items():
        m = statistics.median(r["wall"])
        print(f"| {case} | {summary(r['wall'])} | {ref / m:.2f}x | {statistics.median(r['rss']):.0f} "
              f"| {statistics.median(r['faults']):.0f} |")


def record(results, case, measured):
    out, rss, faults = measured
    r = results.setdefault(case, {"wall": [], "rss": [], "faults": []})
    r["wall"].append(out["wall"])
    r["rss"].append(rss)
    r["faults"].append(faults)
    return out


def bench_suite(exe, d, repeats):
    path = os.path.join(d, "numpy_suite.npz")
    if not os.path.exists(path):
        np.savez_compressed(path, **suite())
    with np.load(path) as z:
        size, count = sum(z[k].nbytes for k in z.files), len(z.files)
    print(f"suite: {size / 1e6:.1f} MB in {count} members, "
          f"{os.path.getsize(path) / 1e6:.1f} MB compressed")
    results = {}
    for _ in range(repeats):
        record(results, "np.load, every member", run([sys.executable, "-c", NUMPY_ALL, path]))
        record(results, "ndnpy arrays() (read ahead)", run([exe, "arrays", path]))
        record(results, "ndnpy arrays(), one core", run(["taskset", "-c", "0", exe, "arrays", path]))
        record(results, "ndnpy read_any in turn (no plan)", run([exe, "sequential", path]))
    table(results, "np.load, every member")


def bench_range(exe, d, repeats, mib):
    path = os.path.join(d, f"numpy_range_{mib}.npz")
    rows = mib * 2**20 // (16 * 8)
    if not os.path.exists(path):
        x = np.linspace(0, 200 * np.pi, rows * 16)
        noise = np.random.default_rng(7).normal(0, 1e-3, rows * 16)
        np.savez_compressed(path, a=(np.sin(x) + noise).reshape(rows, 16))
    print(f"range: one (rows, 16) float64 member of {mib} MiB, "
          f"{os.path.getsize(path) / 2**20:.0f} MiB compressed; 1000 rows from row {rows // 2}")
    results, ranges = {}, {}
    for _ in range(repeats):
        record(results, "np.load of the member", run([sys.executable, "-c", NUMPY_ONE, path, "a", str(rows // 2)]))
        record(results, "ndnpy read_any (whole member)", run([exe, "whole", path, "a"]))
        out, rss, faults = run([exe, "range", path, "a", str(rows // 2), "1000", "9"])
        for key in ("first", "indexed"):
            ranges.setdefault(key, []).append(out[key])
        r = results.setdefault("ndnpy read_range, first call (index built)", {"wall": [], "rss": [], "faults": []})
        r["wall"].append(out["first"])
        r["rss"].append(rss)
        r["faults"].append(faults)
        r = results.setdefault("ndnpy read_range, index built (median of 9)", {"wall": [], "rss": [], "faults": []})
        r["wall"].append(out["indexed"])
        r["rss"].append(rss)
        r["faults"].append(faults)
    table(results, "np.load of the member")
    whole = statistics.median(results["ndnpy read_any (whole member)"]["wall"])
    indexed = statistics.median(ranges["indexed"])
    print(f"read_range with the index built / inflating the whole member: {100 * indexed / whole:.2f} %")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", choices=["suite", "range"])
    ap.add_argument("--range-mib", type=int, default=1024)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "ndnpy-bench", "--bin", "numpy_archives"],
                   cwd=ROOT, check=True)
    exe = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release",
                       "numpy_archives")
    print(f"uptime: {os.getloadavg()}")
    keep = os.environ.get("NDNPY_BENCH_DIR")
    with tempfile.TemporaryDirectory() as tmp:
        d = keep or tmp
        start = time.time()
        if args.only in (None, "suite"):
            bench_suite(exe, d, args.repeats)
        if args.only in (None, "range"):
            bench_range(exe, d, args.repeats, args.range_mib)
        print(f"({time.time() - start:.0f} s; uptime after: {os.getloadavg()})")


if __name__ == "__main__":
    main()
