#!/usr/bin/env python3
"""The compression suite: ``NpzWriter::create_compressed`` against
``np.savez_compressed`` on the same arrays, in one run.

    python3 scripts/bench_compress.py [--repeats N] [--json OUT.json]

Writes nine arrays (fixed seed) as ``.npy`` files into a temporary folder,
then, ``--repeats`` times (default 5), interleaved so that both sides see
the same machine state: ``np.savez_compressed`` of each array alone, then
the Rust program ``benches/compress_suite.rs`` (built with ``cargo build
--release -p ndnpy-bench --bin compress_suite``) writing the same array
with ``NpzWriter::create_compressed`` at 1 thread and at the default thread
count. Before each write the target is removed and dirty data flushed
(``os.sync()``), untimed, on both sides.

Prints per kind: archive sizes and their ratio (ndnpy / NumPy, must be
<= 1.01), and the time ratio NumPy / ndnpy (speed-up) as the median with
min and max over the repeats (each repeat's speed-up pairs that repeat's
runs), and the ratio of the best times of each side ("best"), which is
the least disturbed by other load on a shared machine. Exits non-zero if a size bound fails or NumPy cannot load an archive.
Run under ``flock /tmp/ndnpy-heavy.lock`` on a shared machine.
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


def suite():
    rng = np.random.default_rng(2026)
    n = 4_000_000
    x = np.linspace(0, 40 * np.pi, 2000)
    words = np.array("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi "
                     "omicron pi rho sigma tau upsilon phi chi psi omega".split())
    yy, xx = np.mgrid[0:2048, 0:2048]
    img = 128 + 60 * np.sin(xx / 50.0) * np.cos(yy / 70.0) + rng.normal(0, 4, (2048, 2048))
    i, j = np.mgrid[0:2048, 0:2048]
    return {
        "random_f64": rng.random(n),
        "smooth_f64": np.sin(x)[:, None] * np.cos(0.7 * x)[None, :],
        "small_ints": np.repeat(rng.integers(0, 200, n // 4, dtype=np.int64), 4),
        "sparse_f64": np.where(rng.random(n) < 0.01, rng.normal(size=n), 0.0),
        "bool_mask": rng.random((4000, 4000)) < 0.2,
        "image_u8": np.stack([np.clip(img + k * 10, 0, 255).astype(np.uint8) for k in range(3)], axis=-1),
        "strings_U": np.char.add(rng.choice(words, n // 16), rng.integers(0, 1000, n // 16).astype(str)),
        # The two arrays of the issue that found the old default 1.53x larger.
        "issue_f64": ((i * 8192 + j) % 1000 * 0.25).astype(np.float64),
        "issue_f32": ((i ^ j) % 7).astype(np.float32),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    cargo = os.environ.get("CARGO", "cargo")
    subprocess.run([cargo, "build", "--quiet", "--release", "-p", "ndnpy-bench", "--bin", "compress_suite"],
                   cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    exe = os.path.join(target, "release", "compress_suite")
    threads = os.cpu_count() or 1
    arrays = suite()
    results = {k: {"numpy": [], "t1": [], "tn": []} for k in arrays}
    sizes = {}
    failures = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("NDNPY_BENCH_DIR")) as d:
        for k, a in arrays.items():
            np.save(os.path.join(d, k + ".npy"), a)
        out = os.path.join(d, "numpy_out.npz")
        if os.path.exists(os.path.join(d, "numpy_out.npy")):
            os.remove(os.path.join(d, "numpy_out.npy"))
        for rep in range(args.repeats):
            for k, a in arrays.items():
                if os.path.exists(out):
                    os.remove(out)
                os.sync()
                t = time.perf_counter()
                np.savez_compressed(out, **{k: a})
                results[k]["numpy"].append(time.perf_counter() - t)
                sizes.setdefault(k, {})["numpy"] = os.path.getsize(out)
            run = subprocess.run([exe, d, "1", str(threads)], check=True, capture_output=True, text=True)
            for line in run.stdout.splitlines():
                r = json.loads(line)
                key = "t1" if r["threads"] == 1 else "tn"
                results[r["kind"]][key].append(r["seconds"])
                sizes[r["kind"]][key] = r["bytes"]
        # NumPy loads what ndnpy wrote (the last archive of each kind).
        for k, a in arrays.items():
            with np.load(os.path.join(d, f"ndnpy_{k}.npz")) as z:
                back = z[k]
            want = a.view(np.uint32).reshape(a.shape + (-1,)) if a.dtype.kind == "U" else a
            if back.dtype != want.dtype or not np.array_equal(back, want):
                failures.append(f"{k}: np.load gives other values")
    rows = []
    print(f"compression suite: {args.repeats} repeats, ndnpy threads 1 and {threads}")
    print(f"{'kind':12} {'MB':>6} {'numpy B':>10} {'ndnpy B':>10} {'size':>6} "
          f"{'numpy s':>8} {'1 thread: median (min-max)':>28} {'best':>6} "
          f"{f'{threads} threads: median (min-max)':>28} {'best':>6}")
    for k, r in results.items():
        s = sizes[k]
        ratio = s["tn"] / s["numpy"]
        if s["t1"] != s["tn"]:
            failures.append(f"{k}: {s['t1']} bytes with 1 thread, {s['tn']} with {threads}")
        if ratio > 1.01:
            failures.append(f"{k}: {ratio:.4f}x NumPy's size")
        up1 = [a / b for a, b in zip(r["numpy"], r["t1"])]
        upn = [a / b for a, b in zip(r["numpy"], r["tn"])]
        rows.append({"kind": k, "mb": arrays[k].nbytes / 1e6, "sizes": s, "size_ratio": ratio,
                     "numpy_s": r["numpy"], "t1_s": r["t1"], "tn_s": r["tn"], "threads": threads})
        print(f"{k:12} {arrays[k].nbytes / 1e6:6.1f} {s['numpy']:>10} {s['tn']:>10} {ratio:6.3f} "
              f"{statistics.median(r['numpy']):8.3f} "
              f"{statistics.median(up1):>14.2f}x ({min(up1):.2f}-{max(up1):.2f}) "
              f"{min(r['numpy']) / min(r['t1']):5.2f}x"
              f"{statistics.median(upn):>14.2f}x ({min(upn):.2f}-{max(upn):.2f}) "
              f"{min(r['numpy']) / min(r['tn']):5.2f}x")
    tot = lambda key: [sum(results[k][key][i] for k in results) for i in range(args.repeats)]
    n, t1, tn = tot("numpy"), tot("t1"), tot("tn")
    up1 = [a / b for a, b in zip(n, t1)]
    upn = [a / b for a, b in zip(n, tn)]
    print(f"{'whole suite':12} {sum(a.nbytes for a in arrays.values()) / 1e6:6.1f} "
          f"{sum(s['numpy'] for s in sizes.values()):>10} {sum(s['tn'] for s in sizes.values()):>10} "
          f"{sum(s['tn'] for s in sizes.values()) / sum(s['numpy'] for s in sizes.values()):6.3f} "
          f"{statistics.median(n):8.3f} {statistics.median(up1):>14.2f}x ({min(up1):.2f}-{max(up1):.2f}) "
          f"{min(n) / min(t1):5.2f}x"
          f"{statistics.median(upn):>14.2f}x ({min(upn):.2f}-{max(upn):.2f}) "
          f"{min(n) / min(tn):5.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    for msg in failures:
        print("FAIL:", msg)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
