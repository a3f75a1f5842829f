#!/usr/bin/env python3
"""A 1 GiB checkpoint of stored float32 members converted to safetensors
and back by `ndnpy convert`, beside plain copies of the same bytes, in one
run, interleaved (issue 34).

    cargo build --release -p ndnpy-cli --features safetensors
    python3 scripts/bench_safetensors.py [--repeats 7] [--mib 1024] [--compare OTHER_NDNPY]

Cases, each a process of its own with its output removed before and
`sync` after (untimed), so that no run pays for the last one's dirty pages:
- `cp` (coreutils: `copy_file_range`, the copy done in the kernel) and
  `cat A > B` (read and write through a 128 KiB buffer) of the `.npz`;
- `ndnpy convert model.npz model.safetensors`;
- the same two copies of the `.safetensors`, and `ndnpy convert
  model.safetensors back.npz`.

`--compare` adds both conversions by another build of the CLI (an older
commit's, say), interleaved with the rest. For each: wall seconds, median (min-max) and 90th percentile, the ratio to
each copy at the median, and the peak anonymous memory (`RssAnon` of
/proc/PID/status, polled every 5 ms: the mapped input's pages are the page
cache's, not the process's own). The archive is written by `np.savez`
(stored members, as the issue's target says), 16 members named the way a
Flax checkpoint names them. Numbers in BENCHMARKS.md, "Model checkpoints".
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
NDNPY = os.environ.get("NDNPY_BIN", os.path.join(TARGET, "release", "ndnpy"))


def timed(cmd, out, shell=False):
    """Runs `cmd` with `out` removed first; wall seconds and peak RssAnon
    (MiB), then `sync`."""
    if os.path.exists(out):
        os.remove(out)
    subprocess.run(["sync"], check=True)
    start = time.perf_counter()
    p = subprocess.Popen(cmd, shell=shell)
    peak = 0
    status = f"/proc/{p.pid}/status"
    while p.poll() is None:
        try:
            with open(status) as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.005)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed ({p.returncode})")
    subprocess.run(["sync"], check=True)
    return wall, peak / 1024


def p90(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.9 * (len(xs) - 1)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--compare", help="another ndnpy binary whose conversions are timed too")
    args = ap.parse_args()
    if not os.path.exists(NDNPY):
        raise SystemExit(f"{NDNPY}: build it first (cargo build --release -p ndnpy-cli --features safetensors)")
    print(f"uptime: {os.getloadavg()}")
    members = 16
    per = args.mib * 2**20 // members // 4
    with tempfile.TemporaryDirectory(dir=os.environ.get("NDNPY_BENCH_DIR")) as d:
        npz = os.path.join(d, "model.npz")
        st = os.path.join(d, "model.safetensors")
        rng = np.random.default_rng(34)
        np.savez(npz, **{f"params/encoder/layer_{i:02}/kernel": rng.standard_normal(per, dtype=np.float32)
                         .reshape(-1, 1024) for i in range(members)})
        subprocess.run([NDNPY, "convert", npz, st], check=True)
        print(f"{members} members, {os.path.getsize(npz) / 2**20:.0f} MiB .npz, "
              f"{os.path.getsize(st) / 2**20:.0f} MiB .safetensors")
        copy_out = os.path.join(d, "copy")
        cases = {
            "cp model.npz": (["cp", npz, copy_out], copy_out, False),
            "cat model.npz > copy": (f"cat '{npz}' > '{copy_out}'", copy_out, True),
            "npz -> safetensors": ([NDNPY, "convert", npz, os.path.join(d, "out.safetensors")],
                                   os.path.join(d, "out.safetensors"), False),
            "cp model.safetensors": (["cp", st, copy_out], copy_out, False),
            "cat model.safetensors > copy": (f"cat '{st}' > '{copy_out}'", copy_out, True),
            "safetensors -> npz": ([NDNPY, "convert", st, os.path.join(d, "back.npz")],
                                   os.path.join(d, "back.npz"), False),
        }
        if args.compare:
            cases["npz -> safetensors (compared)"] = (
                [args.compare, "convert", npz, os.path.join(d, "out.safetensors")],
                os.path.join(d, "out.safetensors"), False)
            cases["safetensors -> npz (compared)"] = (
                [args.compare, "convert", st, os.path.join(d, "back.npz")],
                os.path.join(d, "back.npz"), False)
        results = {k: ([], []) for k in cases}
        # One untimed pass, so that every input is in the page cache.
        for cmd, out, shell in cases.values():
            timed(cmd, out, shell)
        for _ in range(args.repeats):
            for name, (cmd, out, shell) in cases.items():
                wall, anon = timed(cmd, out, shell)
                results[name][0].append(wall)
                results[name][1].append(anon)
        print("| case | wall s, median (min-max) | p90 | vs cp | vs cat | peak anon MiB |")
        print("|---|---:|---:|---:|---:|---:|")
        pairs = {"npz -> safetensors": ("cp model.npz", "cat model.npz > copy"),
                 "safetensors -> npz": ("cp model.safetensors", "cat model.safetensors > copy")}
        pairs["npz -> safetensors (compared)"] = pairs["npz -> safetensors"]
        pairs["safetensors -> npz (compared)"] = pairs["safetensors -> npz"]
        for name, (walls, anons) in results.items():
            m = statistics.median(walls)
            vs = ""
            if name in pairs:
                cp, cat = (statistics.median(results[b][0]) for b in pairs[name])
                vs = f"{m / cp:.2f}x | {m / cat:.2f}x"
            else:
                vs = " | "
            print(f"| {name} | {m:.3f} ({min(walls):.3f}-{max(walls):.3f}) | {p90(walls):.3f} | {vs} "
                  f"| {max(anons):.1f} |")
    print(f"uptime after: {os.getloadavg()}")


if __name__ == "__main__":
    sys.exit(main())
