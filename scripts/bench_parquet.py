#!/usr/bin/env python3
"""ndnpy-parquet vs pandas (pyarrow engine), same data, same run.

A 2 M-row frame of int64, float64, float32, bool and datetime64[us] columns
(fixed seed) is written by pandas (`to_parquet`, snappy); then pandas and
ndnpy-parquet each read it and write it, best of REPS wall times; peak RSS
of one read (and one read + write) in a fresh process of each.
Run under `flock /tmp/ndnpy-heavy.lock`. Prints a Markdown table.
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ROWS = 2_000_000
REPS = 5


def frame():
    rng = np.random.default_rng(14)
    return pd.DataFrame({
        "i64": rng.integers(-2**40, 2**40, ROWS),
        "f64": rng.standard_normal(ROWS),
        "f32": rng.standard_normal(ROWS).astype(np.float32),
        "b": rng.integers(0, 2, ROWS).astype(bool),
        "t": pd.to_datetime(rng.integers(0, 2**50, ROWS), unit="us"),
    })


def best(f):
    times = []
    for _ in range(REPS):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


# VmHWM, not ru_maxrss: on Linux a child's ru_maxrss starts from its parent's.
PANDAS_RSS = """
import sys, pandas as pd, pyarrow.parquet
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
base = hwm()
df = pd.read_parquet(sys.argv[1])
if len(sys.argv) > 2:
    df.to_parquet(sys.argv[2])
print(base, hwm())
"""


def main():
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "ndnpy-parquet", "--example", "parquet_bench"],
                   cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    exe = os.path.join(target, "release", "examples", "parquet_bench")
    df = frame()
    data_bytes = int(sum(df[c].values.nbytes for c in df.columns))
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "ref.parquet")
        out = os.path.join(tmp, "out.parquet")
        pd_write = best(lambda: df.to_parquet(src))
        pd_read = best(lambda: pd.read_parquet(src))
        run = lambda *a: subprocess.run([exe, *a], check=True, capture_output=True, text=True).stdout.split()
        rs_read = float(run("read", src, str(REPS))[0])
        rs_write = float(run("write", src, out, str(REPS))[0])
        pd.testing.assert_frame_equal(pd.read_parquet(out), pd.read_parquet(src))
        rs_rss = int(run("rss", src)[0])
        rs_rss_w = int(run("rss-write", src, out)[0])
        py = lambda *a: [int(x) for x in subprocess.run([sys.executable, "-c", PANDAS_RSS, *a], check=True,
                                                        capture_output=True, text=True).stdout.split()]
        pd_base, pd_rss = py(src)
        pd_base_w, pd_rss_w = py(src, out)
        file_bytes = os.path.getsize(src)
    mb = lambda b: f"{b / 2**20:.0f} MiB"
    print(f"2 M rows x 5 columns (int64, float64, float32, bool, datetime64[us]); data {mb(data_bytes)}, "
          f"file {mb(file_bytes)} (snappy); pandas {pd.__version__}, best of {REPS}")
    print()
    print("| | pandas + pyarrow | ndnpy-parquet | ratio |")
    print("|---|---|---|---|")
    print(f"| read | {pd_read * 1e3:.0f} ms | {rs_read * 1e3:.0f} ms | {rs_read / pd_read:.2f} |")
    print(f"| write | {pd_write * 1e3:.0f} ms | {rs_write * 1e3:.0f} ms | {rs_write / pd_write:.2f} |")
    print(f"| peak RSS, read | {mb(pd_rss)} ({mb(pd_rss - pd_base)} over the imports) | {mb(rs_rss)} "
          f"({rs_rss / data_bytes:.2f}x data) | |")
    print(f"| peak RSS, read + write | {mb(pd_rss_w)} ({mb(pd_rss_w - pd_base_w)} over the imports) | {mb(rs_rss_w)} ({rs_rss_w / data_bytes:.2f}x data) | |")


if __name__ == "__main__":
    main()
