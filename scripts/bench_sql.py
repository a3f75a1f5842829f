#!/usr/bin/env python3
"""`SELECT sum(x), avg(y) FROM t WHERE …` over .npy shards: ndnpy-sql
(DataFusion) beside chDB's `file(…, Npy)` and NumPy (`np.load` + the same
arithmetic), in one run, on the same files.

x and y are two folders of 1-D float64 shards (chDB's Npy reads one 1-D
array a file, not records), and each engine is asked `sum(x) WHERE x > 0.5`
and `avg(y)`: two scans, the same for all three.

Usage: python3 scripts/bench_sql.py [ndnpy-sql] [MiB=256] [repeats=3]
Wall seconds, best of the repeats, page cache warm (one untimed run first).
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SQL = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "ndnpy-datafusion", "target", "release", "ndnpy-sql")
MIB = int(sys.argv[2]) if len(sys.argv) > 2 else 256
REPEATS = int(sys.argv[3]) if len(sys.argv) > 3 else 3


def best(f):
    f()
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    rows = MIB * (1 << 20) // 16  # two float64 columns
    shards = 16
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as tmp:
        for col in ("x", "y"):
            os.mkdir(os.path.join(tmp, col))
        per = rows // shards
        for i in range(shards):
            np.save(os.path.join(tmp, "x", f"{i:03}.npy"), rng.random(per))
            np.save(os.path.join(tmp, "y", f"{i:03}.npy"), rng.random(per))
        xd, yd = os.path.join(tmp, "x"), os.path.join(tmp, "y")
        q = ("SELECT (SELECT sum(value) FROM x WHERE value > 0.5), (SELECT avg(value) FROM y)")

        def ours():
            out = subprocess.run([SQL, "-t", f"x={xd}", "-t", f"y={yd}", "--format", "csv", q],
                                 capture_output=True, text=True, check=True)
            return out.stdout.strip().splitlines()[-1]

        def numpy():
            x = np.concatenate([np.load(os.path.join(xd, f)) for f in sorted(os.listdir(xd))])
            y = np.concatenate([np.load(os.path.join(yd, f)) for f in sorted(os.listdir(yd))])
            return f"{x[x > 0.5].sum()},{y.mean()}"

        results = {"ndnpy-sql (DataFusion)": best(ours), "NumPy (np.load + arithmetic)": best(numpy)}
        try:
            import chdb
        except ImportError as e:
            print(f"skip chdb: {e}")
        else:
            cq = (f"SELECT (SELECT sum(array) FROM file('{xd}/*.npy', Npy) WHERE array > 0.5), "
                  f"(SELECT avg(array) FROM file('{yd}/*.npy', Npy))")
            results["chDB file(…, Npy)"] = best(lambda: str(chdb.query(cq, "CSV")).strip())
        base = results["ndnpy-sql (DataFusion)"][0]
        print(f"{MIB} MiB of .npy shards ({shards}+{shards} files, {rows} rows), best of {REPEATS}, "
              f"{os.cpu_count()} cores")
        print("| engine | seconds | GB/s | vs ndnpy-sql | answer |")
        print("|---|---|---|---|---|")
        for name, (t, out) in results.items():
            print(f"| {name} | {t:.3f} | {MIB / 1024 * 1.073741824 / t:.2f} | {t / base:.2f}x | {out} |")


if __name__ == "__main__":
    main()
