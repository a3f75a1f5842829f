#!/usr/bin/env python3
"""SQL over NumPy files: ndnpy-sql (DataFusion) beside chDB's `file(…, Npy)`,
NumPy (`np.load` + the same arithmetic) and DataFusion on the same data as
Parquet (datafusion-python, the same engine built by its project), in one
run, on the same numbers.

The data (MiB in all, half x and half y, random float64 in [0, 1)):
- `shards/x/*.npy`, `shards/y/*.npy`: 16 one-dimensional shards a column
  (chDB's Npy reads one 1-D array a file, not records);
- `stored.npz` and `deflated.npz`: `np.savez` / `np.savez_compressed` of
  x and y, one table with a column a member;
- `parquet/*.parquet`: 16 files of columns x and y (pyarrow's defaults).

Each engine answers `sum(x) WHERE x > 0.5` and `avg(y)`, two scans, as
`SELECT (SELECT sum(x) FROM t WHERE x > 0.5), (SELECT avg(y) FROM t)` or
its equivalent. Each figure runs in a child process, on both cores and
under `taskset -c 0`; it reports the best wall time of the repeats (page
cache warm: one untimed run first) and the CPU time (user + system, every
thread) of that run.

Usage: python3 scripts/bench_sql.py [--sql PATH] [--mib 1024] [--repeats 3] [--dir DIR]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARDS = 16
Q = "SELECT (SELECT sum({x}) FROM {tx} WHERE {x} > 0.5), (SELECT avg({y}) FROM {ty})"


def make(d, mib):
    import numpy as np

    done = os.path.join(d, f"done-{mib}")
    if os.path.exists(done):
        return
    rng = np.random.default_rng(5)
    per = mib * (1 << 20) // 16 // SHARDS
    for sub in ("shards/x", "shards/y", "parquet"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    xs, ys = [], []
    for i in range(SHARDS):
        x, y = rng.random(per), rng.random(per)
        np.save(os.path.join(d, "shards/x", f"{i:03}.npy"), x)
        np.save(os.path.join(d, "shards/y", f"{i:03}.npy"), y)
        xs.append(x)
        ys.append(y)
    import pyarrow as pa
    import pyarrow.parquet as pq

    for i, (x, y) in enumerate(zip(xs, ys)):
        pq.write_table(pa.table({"x": x, "y": y}), os.path.join(d, "parquet", f"{i:03}.parquet"))
    x, y = np.concatenate(xs), np.concatenate(ys)
    np.savez(os.path.join(d, "stored.npz"), x=x, y=y)
    np.savez_compressed(os.path.join(d, "deflated.npz"), x=x, y=y)
    open(done, "w").close()


def child(engine, data, d, sql, repeats):
    """One engine on one dataset: best wall time and its CPU time."""
    import numpy as np

    if engine == "ndnpy-sql":
        if data == "shards":
            args = ["-t", f"x={d}/shards/x", "-t", f"y={d}/shards/y"]
            q = Q.format(x="value", y="value", tx="x", ty="y")
        else:
            args = ["-t", f"t={d}/{data}.npz"]
            q = Q.format(x="x", y="y", tx="t", ty="t")

        def run():
            out = subprocess.run([sql, *args, "--format", "csv", q], capture_output=True, text=True, check=True)
            return out.stdout.strip().splitlines()[-1]

        def cpu():
            r = resource.getrusage(resource.RUSAGE_CHILDREN)
            return r.ru_utime + r.ru_stime
    else:
        cpu = time.process_time
        if engine == "numpy" and data == "shards":

            def run():
                s, n, t = 0.0, 0, 0.0
                for f in sorted(os.listdir(f"{d}/shards/x")):
                    x = np.load(f"{d}/shards/x/{f}")
                    s += x[x > 0.5].sum()
                for f in sorted(os.listdir(f"{d}/shards/y")):
                    y = np.load(f"{d}/shards/y/{f}")
                    t += y.sum()
                    n += len(y)
                return f"{s},{t / n}"
        elif engine == "numpy":

            def run():
                with np.load(f"{d}/{data}.npz") as z:
                    x = z["x"]
                    s = x[x > 0.5].sum()
                    del x
                    return f"{s},{z['y'].mean()}"
        elif engine == "chdb":
            import chdb

            q = Q.format(x="array", y="array", tx=f"file('{d}/shards/x/*.npy', Npy)",
                         ty=f"file('{d}/shards/y/*.npy', Npy)")

            def run():
                return str(chdb.query(q, "CSV")).strip()
        elif engine == "datafusion":
            import datafusion

            ctx = datafusion.SessionContext()
            ctx.register_parquet("t", f"{d}/parquet/")
            q = Q.format(x="x", y="y", tx="t", ty="t")

            def run():
                b = ctx.sql(q).collect()[0]
                return f"{b.column(0)[0].as_py()},{b.column(1)[0].as_py()}"
        else:
            raise SystemExit(f"unknown engine {engine}")
    run()
    best = None
    for _ in range(repeats):
        c, t = cpu(), time.perf_counter()
        out = run()
        t, c = time.perf_counter() - t, cpu() - c
        if best is None or t < best[0]:
            best = (t, c, out)
    print(json.dumps({"wall": best[0], "cpu": best[1], "answer": best[2]}))


def measure(engine, data, a, one_core):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", engine, data, "--dir", a.dir, "--sql", a.sql,
           "--repeats", str(a.repeats)]
    if one_core:
        cmd = ["taskset", "-c", "0", *cmd]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1:] or ["failed"]
    return json.loads(out.stdout.strip().splitlines()[-1]), None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sql", default=os.path.join(ROOT, "ndnpy-datafusion", "target", "release", "ndnpy-sql"))
    p.add_argument("--mib", type=int, default=1024)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--dir", default=os.path.join(ROOT, "target", "bench-sql"))
    p.add_argument("--child", nargs=2)
    a = p.parse_args()
    if a.child:
        return child(*a.child, a.dir, a.sql, a.repeats)
    os.makedirs(a.dir, exist_ok=True)
    make(a.dir, a.mib)
    gb = a.mib * (1 << 20) / 1e9
    rows = [("ndnpy-sql", "shards"), ("chdb", "shards"), ("numpy", "shards"), ("ndnpy-sql", "stored"),
            ("numpy", "stored"), ("ndnpy-sql", "deflated"), ("numpy", "deflated"), ("datafusion", "parquet")]
    print(f"{a.mib} MiB of float64 (x and y), best of {a.repeats}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| engine | data | wall s, 2 cores | CPU s per GB | wall s, 1 core | 1→2 cores | answer |")
    print("|---|---|---:|---:|---:|---:|---|")
    for engine, data in rows:
        two, err = measure(engine, data, a, False)
        if two is None:
            print(f"| {engine} | {data} | failed: {err} | | | | |")
            continue
        one, _ = measure(engine, data, a, True)
        one_s = f"{one['wall']:.3f}" if one else "failed"
        scale = f"{one['wall'] / two['wall']:.2f}x" if one else ""
        print(f"| {engine} | {data} | {two['wall']:.3f} | {two['cpu'] / gb:.2f} | {one_s} | {scale} | "
              f"{two['answer']} |", flush=True)


if __name__ == "__main__":
    main()
