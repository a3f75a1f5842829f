#!/usr/bin/env python3
"""One large member written by `np.savez_compressed` (one deflate stream,
no piece table), read back: ndnpy's parallel inflater (src/npz/codec/deflate/pinflate/)
on 1 and 2 threads, flate2 (zlib-rs) streaming, libdeflate whole,
`NpzReader::read_any` of the archive (on every core, and on one with
`taskset -c 0`), and `np.load`, interleaved in one run,
`--repeats` rounds; median (min-max) wall seconds, and CPU seconds per GB
inflated.

    flock /tmp/ndnpy-heavy.lock python3 scripts/bench_pinflate.py [--repeats 5] [--mib 512]
        [--kind random|walk|both] [--threads 1 2]

Arrays (float64, `--mib` MiB): `random` is rng.random(n) (uniform in
[0, 1): mantissas do not compress, deflate keeps 94 % of it), `walk` is a
random walk rounded to 3 decimals, as a sensor logs it (deflate keeps
about 38 %). `crafted` and `crafted-one-block` are members made by
scripts/gen_false_starts.py against the parallel inflater's block finder
(a false stored-block start every 5 compressed bytes, the real boundaries
32 KiB before each 4 MiB chunk's end; or one block for everything): the
parallel path must stay within a small factor of a sequential inflate.
The archives are kept
in NDNPY_BENCH_DIR (default: a temporary directory). Numbers in
BENCHMARKS.md (".npz archives / One large member NumPy wrote, on every
core"); its history in docs/benchmarks-history.md ("One deflate stream on
many cores")."""

import argparse
import json
import os
import statistics
import struct
import subprocess
import tempfile
import time
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def array(kind, mib):
    n = mib * 2**20 // 8
    rng = np.random.default_rng(2026)
    if kind == "random":
        return rng.random(n)
    return np.cumsum(rng.standard_normal(n)).round(3)


def raw_member(path, out):
    """Writes the archive's only member's deflate stream to `out`; gives
    its inflated size."""
    with zipfile.ZipFile(path) as z:
        info = z.infolist()[0]
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        local = f.read(30)
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        data = f.read(info.compress_size)
    with open(out, "wb") as f:
        f.write(data)
    return info.file_size, info.compress_size


def summary(xs):
    return f"{statistics.median(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--kind", default="both",
                    choices=["random", "walk", "both", "crafted", "crafted-one-block"])
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "ndnpy-bench", "--bin", "pinflate"],
                   cwd=ROOT, check=True)
    exe = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "pinflate")
    kinds = ["random", "walk"] if args.kind == "both" else [args.kind]
    keep = os.environ.get("NDNPY_BENCH_DIR")
    with tempfile.TemporaryDirectory() as tmp:
        d = keep or tmp
        for kind in kinds:
            npz = os.path.join(d, f"pinflate_{kind}_{args.mib}.npz")
            if not os.path.exists(npz) and kind.startswith("crafted"):
                gen = [os.path.join(ROOT, "scripts", "gen_false_starts.py"),
                       os.path.join(tmp, "crafted.deflate"), os.path.join(tmp, "crafted.raw"),
                       "--size", str(args.mib * 2**20), "--npz", npz, "--no-verify"]
                gen += ["--one-block"] if kind == "crafted-one-block" else []
                subprocess.run(["python3", *gen], check=True, capture_output=True)
            elif not os.path.exists(npz):
                np.savez_compressed(npz, a=array(kind, args.mib))
            raw = os.path.join(tmp, "member.deflate")
            size, compressed = raw_member(npz, raw)
            print(f"{kind}: {size / 2**20:.0f} MiB inflated from {compressed / 2**20:.1f} MiB "
                  f"(ratio {size / compressed:.2f})")
            walls, cpus = {}, {}
            for _ in range(args.repeats):
                cmd = [exe, raw, str(size), npz, "1", *map(str, args.threads)]
                for line in subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines():
                    r = json.loads(line)
                    walls.setdefault(r["case"], []).append(r["wall"])
                    cpus.setdefault(r["case"], []).append(r["cpu"])
                # The same read on one core: the path the library picks
                # there (libdeflate whole), for the 1 -> 2 cores figure a
                # user sees.
                one = subprocess.run(["taskset", "-c", "0", *cmd], check=True, capture_output=True, text=True,
                                     env={**os.environ, "PINFLATE_ONLY": "NpzReader::read_any"})
                for line in one.stdout.splitlines():
                    r = json.loads(line)
                    case = r["case"] + ", one core (taskset -c 0)"
                    walls.setdefault(case, []).append(r["wall"])
                    cpus.setdefault(case, []).append(r["cpu"])
                start = time.perf_counter()
                with np.load(npz) as z:
                    a = z[z.files[0]]
                walls.setdefault("np.load", []).append(time.perf_counter() - start)
                del a
            numpy = statistics.median(walls["np.load"])
            print(f"| case | wall s, median (min-max) of {args.repeats} | CPU s per GB | np.load / this |")
            print("|---|---:|---:|---:|")
            for case, w in walls.items():
                per_gb = (f"{statistics.median(cpus[case]) / (size / 1e9):.2f}" if case in cpus else "")
                print(f"| {case} | {summary(w)} | {per_gb} | {numpy / statistics.median(w):.2f}x |")
            any_case = "NpzReader::read_any (file to array)"
            one_core = statistics.median(walls[any_case + ", one core (taskset -c 0)"])
            print(f"read_any, every core vs one core: {one_core / statistics.median(walls[any_case]):.2f}x")
            if len(args.threads) > 1:
                t = args.threads
                one = statistics.median(walls[f"ndnpy pinflate, {t[0]} threads"])
                for n in t[1:]:
                    many = statistics.median(walls[f"ndnpy pinflate, {n} threads"])
                    print(f"pinflate {n} threads vs {t[0]}: {one / many:.2f}x")


if __name__ == "__main__":
    main()
