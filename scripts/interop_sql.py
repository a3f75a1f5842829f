#!/usr/bin/env python3
"""SQL over NumPy files: `ndnpy-sql` (DataFusion) against NumPy's own answers,
and chDB's `Npy` format on the same .npy files where chDB reads them.

Data made by NumPy (and dask, if importable): a folder of .npy shards, an
.npz (stored and deflated), a dask stack. Queries: count, sum, avg, min/max,
filter, group by, order by + limit, a join of two tables. Each answer must
equal NumPy's computation (floats to a relative 1e-9: sums run in another
order).

Usage: python3 scripts/interop_sql.py [path/to/ndnpy-sql]
(default: ndnpy-datafusion/target/debug/ndnpy-sql, or $NDNPY_SQL).
A missing package (chdb, dask) is skipped with a reason, unless CI=true.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

CI = os.environ.get("CI") == "true"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SQL = (sys.argv[1] if len(sys.argv) > 1 else None) or os.environ.get(
    "NDNPY_SQL", os.path.join(ROOT, "ndnpy-datafusion", "target", "debug", "ndnpy-sql"))

failures = []
checked = 0


def skip(what, why):
    if CI:
        sys.exit(f"interop_sql: {what} needed in CI: {why}")
    print(f"  skip {what}: {why}")


def ndnpy_sql(tables, query):
    args = [SQL]
    for name, path in tables.items():
        args += ["-t", f"{name}={path}"]
    out = subprocess.run(args + ["--format", "json", query], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"ndnpy-sql failed on {query!r}: {out.stderr}")
    return [list(json.loads(line).values()) for line in out.stdout.splitlines() if line.strip()]


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def check(label, got, want):
    global checked
    checked += 1
    ok = len(got) == len(want) and all(
        len(g) == len(w) and all(same(x, y) for x, y in zip(g, w)) for g, w in zip(got, want))
    if not ok:
        failures.append(f"{label}: got {got[:5]} want {want[:5]}")
        print(f"  FAIL {label}")


def numpy_answers(x, key):
    """The answers of QUERIES over a column `x` (float64) and `key` = floor(x*10)."""
    keys, counts = np.unique(key, return_counts=True)
    sums = np.array([x[key == k].sum() for k in keys])
    top = np.sort(x)[::-1][:5]
    return {
        "count": [[len(x)]],
        "sum_avg": [[float(x.sum()), float(x.mean())]],
        "min_max": [[float(x.min()), float(x.max())]],
        "filter": [[int((x > 0.5).sum()), float(x[x > 0.5].sum())]],
        "group": [[int(k), int(c), float(s)] for k, c, s in zip(keys, counts, sums)],
        "top": [[float(v)] for v in top],
    }


def queries(col, table):
    k = f"CAST(floor({col} * 10) AS BIGINT)"
    return {
        "count": f"SELECT count(*) FROM {table}",
        "sum_avg": f"SELECT sum({col}), avg({col}) FROM {table}",
        "min_max": f"SELECT min({col}), max({col}) FROM {table}",
        "filter": f"SELECT count(*), sum({col}) FROM {table} WHERE {col} > 0.5",
        "group": f"SELECT {k} AS k, count(*), sum({col}) FROM {table} GROUP BY {k} ORDER BY k",
        "top": f"SELECT {col} FROM {table} ORDER BY {col} DESC LIMIT 5",
    }


def main():
    if not os.path.exists(SQL):
        sys.exit(f"interop_sql: {SQL} not built (cargo build in ndnpy-datafusion)")
    rng = np.random.default_rng(41)
    n = 200_003
    x = rng.random(n)
    key = np.floor(x * 10).astype(np.int64)
    want = numpy_answers(x, key)
    with tempfile.TemporaryDirectory() as tmp:
        shards = os.path.join(tmp, "shards")
        os.mkdir(shards)
        bounds = [0, 1, 50_000, 50_000, 120_000, 199_999, n]
        for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
            np.save(os.path.join(shards, f"part-{i:02}.npy"), x[a:b])

        print("== .npy shards (a folder as one table)")
        for label, sql in queries("value", "t").items():
            check(f"shards {label}", ndnpy_sql({"t": shards}, sql), want[label])
        print("== the same folder as a file:// URL")
        check("url sum_avg", ndnpy_sql({"t": "file://" + shards + "/"}, queries("value", "t")["sum_avg"]),
              want["sum_avg"])

        print("== .npz (members as columns), stored and deflated")
        y = rng.integers(-5, 5, n).astype(np.int32)
        m = rng.random((n, 3)).astype(np.float32)
        for save in (np.savez, np.savez_compressed):
            path = os.path.join(tmp, f"{save.__name__}.npz")
            save(path, x=x, y=y, m=m)
            for label, sql in queries("x", "z").items():
                check(f"{save.__name__} {label}", ndnpy_sql({"z": path}, sql), want[label])
            got = ndnpy_sql({"z": path}, "SELECT y, count(*), sum(x) FROM z WHERE y >= 0 GROUP BY y ORDER BY y")
            ys = np.unique(y[y >= 0])
            check(f"{save.__name__} group by member", got,
                  [[int(v), int((y == v).sum()), float(x[y == v].sum())] for v in ys])

        print("== a join of two tables (.npy keys, .npz facts)")
        ids = rng.permutation(1000).astype(np.int64)[:600]
        np.save(os.path.join(tmp, "keys.npy"), ids)
        fid = rng.integers(0, 1000, n).astype(np.int64)
        np.savez(os.path.join(tmp, "facts.npz"), id=fid, w=x)
        got = ndnpy_sql({"k": os.path.join(tmp, "keys.npy"), "f": os.path.join(tmp, "facts.npz")},
                        "SELECT count(*), sum(f.w) FROM f JOIN k ON f.id = k.value")
        hit = np.isin(fid, ids)
        check("join", got, [[int(hit.sum()), float(x[hit].sum())]])

        print("== dask stack")
        try:
            import dask.array as da
        except ImportError as e:
            skip("dask", str(e))
        else:
            stack = os.path.join(tmp, "stack")
            da.to_npy_stack(stack, da.from_array(x, chunks=33_333))
            for label, sql in queries("value", "t").items():
                check(f"dask {label}", ndnpy_sql({"t": stack}, sql), want[label])

        print("== chDB's Npy format on the same shards")
        try:
            import chdb
        except ImportError as e:
            skip("chdb", str(e))
        else:
            for label, sql in queries("array", f"file('{shards}/*.npy', Npy)").items():
                rows = chdb.query(sql, "JSONCompact")
                got = json.loads(str(rows))["data"] if str(rows).strip() else []
                got = [[float(v) if isinstance(v, float) else int(v) if isinstance(v, str) and v.lstrip('-').isdigit() else v
                        for v in row] for row in got]
                check(f"chdb {label}", got, want[label])

    print(f"interop_sql: {checked} answers checked, {len(failures)} differ")
    if failures:
        print("\n".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
