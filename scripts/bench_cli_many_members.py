#!/usr/bin/env python3
"""Every `ndnpy` command on a 65 536-member archive, beside NumPy loading
every member, in one run; then the commands' peak memory on a 1 GiB file.

    cargo build --release -p ndnpy-cli
    python3 scripts/bench_cli_many_members.py [--members N] [--repeats R] [--big]

Needs NumPy. The archive is written by `np.savez_compressed` (N members
`a0`..`a{N-1}`, four float64 each) in a temporary folder. Each command runs
R times (default 3); the table gives the median seconds, the ratio to
NumPy's median, and the peak resident memory (`/usr/bin/time -f %M`).
The reading commands run again on the same archive as `ndnpy convert
--compress` writes it (members with ndnpy's piece table, which `show`,
`stats`, `diff` and `check` inflate whole when under 256 MiB).
With --big, also a 1 GiB float64 `.npy` through `stats`, `diff`,
`convert --compress` and `convert` (peak memory, seconds), and the reading
commands on ndnpy's compressed archives of it (one member of 1 GiB, streamed)
and of its first 200 MiB (inflated whole on every core).
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
NDNPY = os.path.join(ROOT, "target", "release", "ndnpy")


def timed(cmd):
    """Seconds and peak RSS (KiB) of one run of `cmd`."""
    t = time.perf_counter()
    out = subprocess.run(
        ["/usr/bin/time", "-f", "%M"] + cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=True,
    )
    seconds = time.perf_counter() - t
    rss = int(out.stderr.decode().strip().splitlines()[-1])
    return seconds, rss


def numpy_load_all(path):
    t = time.perf_counter()
    with np.load(path) as z:
        arrays = [z[k] for k in z.files]
    assert arrays
    return time.perf_counter() - t


def reading(path):
    """The reading commands on `path` (`diff` with itself)."""
    return [
        ("show", ["show", path]),
        ("stats", ["stats", path]),
        ("check", ["check", path]),
        ("diff (itself)", ["diff", path, path]),
    ]


def run_all(commands, repeats, numpy):
    """Runs each `ndnpy` command `repeats` times; prints its median seconds,
    NumPy's time over it, and its peak memory."""
    for name, cmd in commands:
        runs = [timed([NDNPY] + cmd) for _ in range(repeats)]
        secs = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        print(f"{name:<28} {secs:>9.2f} {numpy / secs:>13.1f}x {rss / 1024:>8.0f} MiB")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--members", type=int, default=65536)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--big", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "many.npz")
        base = np.arange(4, dtype=np.float64)
        np.savez_compressed(path, **{f"a{i}": base + i for i in range(args.members)})
        size = os.path.getsize(path)
        numpy = statistics.median(numpy_load_all(path) for _ in range(args.repeats))
        print(f"archive: {args.members} deflated members, {size / 1e6:.1f} MB")
        print(f"NumPy np.load + every member: {numpy:.2f} s (median of {args.repeats})")
        print(f"{'command':<28} {'median s':>9} {'NumPy / ndnpy':>14} {'peak RSS':>10}")
        out = os.path.join(d, "out.npz")
        commands = [
            ("info", ["info", path]),
            ("show", ["show", path]),
            ("stats", ["stats", path]),
            ("check", ["check", path]),
            ("diff (itself)", ["diff", path, path]),
            ("convert to .npz", ["convert", path, out]),
            ("convert --compress", ["convert", "--compress", path, out]),
        ]
        run_all(commands, args.repeats, numpy)
        ours = os.path.join(d, "ours.npz")
        subprocess.run([NDNPY, "convert", "--compress", path, ours], check=True, stdout=subprocess.DEVNULL)
        numpy_ours = statistics.median(numpy_load_all(ours) for _ in range(args.repeats))
        print(f"the same archive from `ndnpy convert --compress`: {os.path.getsize(ours) / 1e6:.1f} MB; "
              f"NumPy every member {numpy_ours:.2f} s")
        run_all([("info", ["info", ours])] + reading(ours), args.repeats, numpy_ours)
        if args.big:
            big = os.path.join(d, "big.npy")
            a = np.lib.format.open_memmap(big, mode="w+", dtype=np.float64, shape=(1 << 27,))
            a[:] = np.arange(1 << 27, dtype=np.float64)
            a.flush()
            del a
            print("1 GiB float64 .npy:")
            for name, cmd in [
                ("stats", ["stats", big]),
                ("diff (itself)", ["diff", big, big]),
                ("convert --compress", ["convert", "--compress", big, out]),
                ("convert to .npz", ["convert", big, out]),
            ]:
                secs, rss = timed([NDNPY] + cmd)
                print(f"{name:<28} {secs:>9.2f} {'':>14} {rss / 1024:>8.0f} MiB")
            part = os.path.join(d, "part.npy")
            np.save(part, np.load(big, mmap_mode="r")[: 200 << 17])
            for label, src in [("1 GiB", big), ("200 MiB", part)]:
                packed = os.path.join(d, "packed.npz")
                subprocess.run([NDNPY, "convert", "--compress", src, packed], check=True, stdout=subprocess.DEVNULL)
                t = time.perf_counter()
                with np.load(packed) as z:
                    float(z[z.files[0]].sum())
                numpy_big = time.perf_counter() - t
                print(f"ndnpy's compressed archive of the {label} array "
                      f"({os.path.getsize(packed) / 2**20:.0f} MiB; NumPy np.load + sum {numpy_big:.2f} s):")
                run_all(reading(packed), 1, numpy_big)


if __name__ == "__main__":
    sys.exit(main())
