#!/usr/bin/env python3
"""Zstandard archives and the other zip methods, timed (issue 33).

    cargo build --release -p ndnpy-bench --features zip-methods --bin compress_suite --bin read_suite
    python3 scripts/bench_zstd.py [--repeats N] [--levels 1,3] [--methods]

Needs `backports.zstd` (Python 3.14's zipfile) for the last part.

1. Writing: the compression suite's arrays (scripts/bench_compress.py), each
   the only member of its archive, by `np.savez_compressed` and by
   `compress_suite` (`NpzWriter` with `Codec::Zstd`, on every core), both
   from memory, the file removed and dirty data flushed before each write,
   interleaved, median of --repeats; sizes of the suite as a whole.
2. Reading: `read_suite` (NpzReader::read_any of every member) over ndnpy's
   Zstandard archives and over ndnpy's deflate archives of the same arrays
   (default level), median of its 5 passes, --repeats times.
3. With --methods: bzip2 and LZMA archives written by Python's `zipfile` of
   three kinds (smooth_f64, small_ints, image_u8), read by `read_suite`
   and by `zipfile.ZipFile.read` of every member (what `np.load` does).

Numbers in BENCHMARKS.md, "Zstandard and the other zip methods".
"""

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
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from bench_compress import suite  # noqa: E402

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
COMPRESS_SUITE = os.path.join(TARGET, "release", "compress_suite")
READ_SUITE = os.path.join(TARGET, "release", "read_suite")


def timed(f):
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def read_suite(files):
    out = subprocess.run([READ_SUITE, *files], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["median"]


def compress_suite(d, codec):
    """Writes DIR/ndnpy_KIND.npz for every DIR/KIND.npy: {kind: seconds}."""
    env = dict(os.environ)
    env.pop("NDNPY_CODEC", None)
    if codec:
        env["NDNPY_CODEC"] = codec
    threads = str(os.cpu_count() or 1)
    run = subprocess.run([COMPRESS_SUITE, d, threads], check=True, capture_output=True, text=True, env=env)
    return {r["kind"]: r["seconds"] for r in map(json.loads, run.stdout.splitlines())}


def keep(d, kinds, prefix):
    for k in kinds:
        os.replace(os.path.join(d, f"ndnpy_{k}.npz"), os.path.join(d, f"{prefix}_{k}.npz"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--levels", default="3")
    ap.add_argument("--methods", action="store_true")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    arrays = suite()
    with tempfile.TemporaryDirectory(dir=os.environ.get("NDNPY_BENCH_DIR")) as d:
        npys = {}
        for k, a in arrays.items():
            npys[k] = os.path.join(d, k + ".npy")
            np.save(npys[k], a)
        # 1. Writing, and sizes.
        times = {"numpy": {k: [] for k in arrays}}
        times.update({f"zstd:{lv}": {k: [] for k in arrays} for lv in levels})
        sizes = {name: {} for name in times}
        sizes["deflate"] = {}
        for _ in range(args.repeats):
            for k, a in arrays.items():
                out = os.path.join(d, f"numpy_{k}.npz")
                if os.path.exists(out):
                    os.remove(out)
                os.sync()
                times["numpy"][k].append(timed(lambda: np.savez_compressed(out, **{k: a})))
                sizes["numpy"][k] = os.path.getsize(out)
            for lv in levels:
                for k, t in compress_suite(d, f"zstd:{lv}").items():
                    times[f"zstd:{lv}"][k].append(t)
                keep(d, arrays, f"zstd{lv}")
                for k in arrays:
                    sizes[f"zstd:{lv}"][k] = os.path.getsize(os.path.join(d, f"zstd{lv}_{k}.npz"))
        compress_suite(d, None)
        keep(d, arrays, "deflate")
        for k in arrays:
            sizes["deflate"][k] = os.path.getsize(os.path.join(d, f"deflate_{k}.npz"))
        print(f"{'kind':12} {'MB':>6} {'numpy B':>10} {'deflate B':>10}"
              + "".join(f" {f'zstd:{lv} B':>10} {'ratio':>6} {'write x':>8}" for lv in levels))
        for k, a in arrays.items():
            row = f"{k:12} {a.nbytes / 1e6:6.1f} {sizes['numpy'][k]:>10} {sizes['deflate'][k]:>10}"
            for lv in levels:
                z = sizes[f"zstd:{lv}"][k]
                speed = statistics.median(times["numpy"][k]) / statistics.median(times[f"zstd:{lv}"][k])
                row += f" {z:>10} {z / sizes['numpy'][k]:6.3f} {speed:7.2f}x"
            print(row)
        total = lambda name: sum(sizes[name].values())
        suite_time = lambda name: [sum(times[name][k][i] for k in arrays) for i in range(args.repeats)]
        row = f"{'whole suite':12} {sum(a.nbytes for a in arrays.values()) / 1e6:6.1f} {total('numpy'):>10} {total('deflate'):>10}"
        for lv in levels:
            n, z = suite_time("numpy"), suite_time(f"zstd:{lv}")
            ups = [a / b for a, b in zip(n, z)]
            row += f" {total(f'zstd:{lv}'):>10} {total(f'zstd:{lv}') / total('numpy'):6.3f} {statistics.median(ups):7.2f}x"
        print(row)
        print(f"np.savez_compressed, whole suite: {statistics.median(suite_time('numpy')):.3f} s; "
              + ", ".join(f"zstd:{lv} {statistics.median(suite_time(f'zstd:{lv}')):.3f} s" for lv in levels))
        # 2. Reading.
        deflate = [os.path.join(d, f"deflate_{k}.npz") for k in arrays]
        reads = {"deflate": []}
        reads.update({f"zstd:{lv}": [] for lv in levels})
        for _ in range(args.repeats):
            reads["deflate"].append(read_suite(deflate))
            for lv in levels:
                reads[f"zstd:{lv}"].append(read_suite([os.path.join(d, f"zstd{lv}_{k}.npz") for k in arrays]))
        base = statistics.median(reads["deflate"])
        for name, ts in reads.items():
            m = statistics.median(ts)
            print(f"read_suite, ndnpy's {name} archives: {m * 1e3:.0f} ms ({min(ts) * 1e3:.0f}-{max(ts) * 1e3:.0f}), "
                  f"{base / m:.2f}x deflate's")
        # Each kind alone (the medians of one read_suite run each).
        for k in arrays:
            row = f"  {k:12} deflate {read_suite([os.path.join(d, f'deflate_{k}.npz')]) * 1e3:6.1f} ms"
            for lv in levels:
                row += f", zstd:{lv} {read_suite([os.path.join(d, f'zstd{lv}_{k}.npz')]) * 1e3:6.1f} ms"
            print(row)
        # 3. bzip2 and LZMA against Python's zipfile.
        if args.methods:
            import zipfile
            kinds = ["smooth_f64", "small_ints", "image_u8"]
            for method, code in (("bzip2", zipfile.ZIP_BZIP2), ("lzma", zipfile.ZIP_LZMA)):
                files = []
                for k in kinds:
                    out = os.path.join(d, f"{method}_{k}.npz")
                    with zipfile.ZipFile(out, "w", compression=code) as z:
                        z.write(npys[k], k + ".npy")
                    files.append(out)

                def python_read():
                    for f in files:
                        with zipfile.ZipFile(f) as z:
                            for name in z.namelist():
                                z.read(name)

                ours, theirs = [], []
                for _ in range(args.repeats):
                    ours.append(read_suite(files))
                    theirs.append(timed(python_read))
                mb = sum(arrays[k].nbytes for k in kinds) / 1e6
                csize = sum(os.path.getsize(f) for f in files) / 1e6
                print(f"{method} ({mb:.0f} MB in {csize:.1f} MB): read_suite {statistics.median(ours) * 1e3:.0f} ms, "
                      f"zipfile.read {statistics.median(theirs) * 1e3:.0f} ms, "
                      f"{statistics.median(theirs) / statistics.median(ours):.2f}x")


if __name__ == "__main__":
    main()
