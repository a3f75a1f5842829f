#!/usr/bin/env python3
"""`ndnpy-sql` over s3:// URLs (moto's S3 server on 127.0.0.1) gives the
same answers as over the same files on a local path, and as NumPy: a folder
of .npy shards, an .npz stored and deflated, a join of a URL table with a
local one, and a missing object as a clear error. Given the
`ndnpy-ballista` binary too, the same s3:// tables through a Ballista
scheduler and two executors (`ndnpy-sql --ballista`), each process making
its S3 store from the same environment.

Run with the Python of a venv that has moto[server], boto3 and numpy
(.ci/run's target/venv-s3).
Usage: python3 scripts/interop_sql_s3.py path/to/ndnpy-sql [path/to/ndnpy-ballista]
"""
import io
import json
import socket
import time
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_server  # noqa: E402  (scripts/s3_server.py)
import boto3  # noqa: E402
import numpy as np  # noqa: E402

SQL = sys.argv[1]
BALLISTA = sys.argv[2] if len(sys.argv) > 2 else None


def run(env, tables, query, extra=()):
    args = [SQL, *extra]
    for name, path in tables.items():
        args += ["-t", f"{name}={path}"]
    out = subprocess.run(args + ["--format", "json", query], env=env, capture_output=True, text=True,
                         timeout=300)
    return out.returncode, out.stdout, out.stderr


def rows(env, tables, query, extra=()):
    code, out, err = run(env, tables, query, extra)
    if code != 0:
        sys.exit(f"interop_sql_s3: ndnpy-sql failed on {query!r} over {tables}:\n{err}")
    return [list(json.loads(line).values()) for line in out.splitlines() if line.strip()]


def same(a, b):
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            if isinstance(x, float) or isinstance(y, float):
                if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
                    return False
            elif x != y:
                return False
    return True


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster(env, tmp):
    """A scheduler and two executors of `ndnpy-ballista` in `env`; gives the
    processes and the scheduler's port once its /readyz answers 200."""
    port = free_port()
    procs = []
    with open(f"{tmp}/ballista.log", "w") as logs:
        try:
            procs.append(subprocess.Popen([BALLISTA, "scheduler", "--port", str(port), "--min-executors", "2"],
                                          env=env, stdout=logs, stderr=logs))
            for e in range(2):
                os.mkdir(f"{tmp}/work{e}")
                procs.append(subprocess.Popen(
                    [BALLISTA, "executor", "--port", str(free_port()), "--grpc-port", str(free_port()),
                     "--scheduler", f"127.0.0.1:{port}", "--slots", "1", "--work-dir", f"{tmp}/work{e}"],
                    env=env, stdout=logs, stderr=logs))
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if any(p.poll() is not None for p in procs):
                    break
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                        s.sendall(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                        if s.recv(64).startswith(b"HTTP/1.1 200"):
                            return procs, port
                except OSError:
                    pass
                time.sleep(0.5)
        except BaseException:
            stop(procs)
            raise
    stop(procs)
    sys.exit("interop_sql_s3: the Ballista cluster did not start:\n" + log_tail(tmp))


def stop(procs):
    for p in procs:
        p.kill()
        p.wait()


def log_tail(tmp):
    with open(f"{tmp}/ballista.log") as f:
        return f.read()[-4000:]


def main():
    rng = np.random.default_rng(11)
    shards = [rng.standard_normal(50_000 + 1000 * i) for i in range(5)]
    x = np.concatenate(shards)
    k = rng.integers(0, 7, len(x)).astype(np.int64)
    with tempfile.TemporaryDirectory() as tmp, s3_server.server() as endpoint:
        creds = dict(aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
        s3 = boto3.client("s3", endpoint_url=endpoint, **creds)
        s3.create_bucket(Bucket="arrays")
        os.mkdir(f"{tmp}/shards")
        files = {}
        for i, a in enumerate(shards):
            files[f"shards/{i:02}.npy"] = a
        for name, a in files.items():
            np.save(f"{tmp}/{name}", a)
        np.savez(f"{tmp}/stored.npz", x=x, k=k)
        np.savez_compressed(f"{tmp}/deflated.npz", x=x, k=k)
        for name in [*files, "stored.npz", "deflated.npz"]:
            with open(f"{tmp}/{name}", "rb") as f:
                s3.put_object(Bucket="arrays", Key=name, Body=f.read())
        env = dict(os.environ, AWS_ENDPOINT=endpoint, AWS_ALLOW_HTTP="true", AWS_ACCESS_KEY_ID="test",
                   AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1")
        checks = 0
        pos = x[x > 0]
        queries = [
            ({"t": "shards/"}, "SELECT count(*), sum(value), min(value), max(value) FROM t",
             [[len(x), x.sum(), x.min(), x.max()]]),
            ({"t": "shards/"}, "SELECT value FROM t ORDER BY value DESC LIMIT 3",
             [[v] for v in np.sort(x)[::-1][:3]]),
        ]
        for arc in ("stored.npz", "deflated.npz"):
            groups = [[int(g), int((k == g).sum()), x[k == g].sum()] for g in range(7)]
            queries += [
                ({"t": arc}, "SELECT count(*), avg(x) FROM t WHERE x > 0", [[len(pos), pos.mean()]]),
                ({"t": arc}, "SELECT k, count(*), sum(x) FROM t GROUP BY k ORDER BY k", groups),
            ]
        for tables, q, want in queries:
            local = {n: f"{tmp}/{p}" for n, p in tables.items()}
            url = {n: f"s3://arrays/{p}" for n, p in tables.items()}
            a, b = rows(env, url, q), rows(env, local, q)
            if not same(a, b) or not same(a, want):
                sys.exit(f"interop_sql_s3: {q!r} over {tables}: URL {a}, path {b}, NumPy {want}")
            checks += 1
        # A join of a URL table and a local one.
        q = "SELECT count(*) FROM a JOIN b ON a.value = b.value"
        got = rows(env, {"a": "s3://arrays/shards/", "b": f"{tmp}/shards/"}, q)
        _, counts = np.unique(x, return_counts=True)
        if got != [[int((counts * counts).sum())]]:
            sys.exit(f"interop_sql_s3: join gave {got}, NumPy {int((counts * counts).sum())}")
        checks += 1
        # A missing object is an error that names it, not an empty table.
        code, out, err = run(env, {"t": "s3://arrays/missing.npy"}, "SELECT count(*) FROM t")
        if code == 0 or "missing.npy" not in err:
            sys.exit(f"interop_sql_s3: a missing object gave {code}: {out} {err}")
        checks += 1
        if BALLISTA:
            procs, port = cluster(env, tmp)
            try:
                ballista = ["--ballista", f"df://127.0.0.1:{port}"]
                for tables, q, want in queries:
                    url = {n: f"s3://arrays/{p}" for n, p in tables.items()}
                    code, out, err = run(env, url, q, ballista)
                    got = [list(json.loads(line).values()) for line in out.splitlines() if line.strip()]
                    if code != 0 or not same(got, want):
                        sys.exit(f"interop_sql_s3: {q!r} over {tables} on Ballista: {got}, NumPy {want}\n"
                                 f"{err}\n--- scheduler and executors:\n{log_tail(tmp)}")
                    checks += 1
            finally:
                stop(procs)
        where = " and on a Ballista cluster" if BALLISTA else ""
        print(f"interop_sql_s3: {checks} checks, s3:// answers equal to local paths and NumPy{where}")


if __name__ == "__main__":
    main()
