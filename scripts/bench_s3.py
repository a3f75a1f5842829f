#!/usr/bin/env python3
"""read_range of 1000 rows of a 1 GiB .npy on a local S3 protocol server
(moto's, on 127.0.0.1): ndnpy-store (one ranged GET of exactly those rows)
beside s3fs + NumPy doing the same with their default block size, in one
run. Run with the Python of the venv .ci/run makes (moto[server], boto3,
s3fs, numpy):

    cargo build --release -p ndnpy-store --example store_bench
    target/venv-s3/bin/python scripts/bench_s3.py [MiB]

Numbers in BENCHMARKS.md, "Object storage"."""

import io
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_server  # noqa: E402  (scripts/s3_server.py)
import boto3
import numpy as np
import s3fs

ROWS, COLS = 1000, 256


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    with s3_server.server() as endpoint:
        run(endpoint, mib)


def run(endpoint, mib):
    creds = dict(aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
    s3 = boto3.client("s3", endpoint_url=endpoint, **creds)
    s3.create_bucket(Bucket="bench")
    rows = mib * 2**20 // (COLS * 4)
    a = np.arange(rows * COLS, dtype=np.float32).reshape(rows, COLS)
    buf = io.BytesIO()
    np.save(buf, a)
    s3.put_object(Bucket="bench", Key="big.npy", Body=buf.getvalue())
    del buf
    print(f"uploaded {mib} MiB ({rows} x {COLS} float32) to moto at {endpoint}")

    env = dict(os.environ, AWS_ENDPOINT=endpoint, AWS_ALLOW_HTTP="true", AWS_ACCESS_KEY_ID="test",
               AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1")
    print("ndnpy-store (RemoteNpy::open + read_range):")
    first = rows // 2
    print(f"rows {first}..{first + ROWS}")
    subprocess.run(["target/release/examples/store_bench", "--url", "s3://bench/big.npy", str(ROWS), str(first)],
                   env=env, check=True)

    print(f"s3fs {s3fs.__version__} + NumPy {np.__version__} (default block size):")
    fetched = []
    original = s3fs.core.S3File._fetch_range

    def counting(self, start, end):
        fetched.append(end - start)
        return original(self, start, end)

    s3fs.core.S3File._fetch_range = counting
    for round in range(5):
        fs = s3fs.S3FileSystem(key="test", secret="test",
                               client_kwargs={"endpoint_url": endpoint, "region_name": "us-east-1"})
        fetched.clear()
        start = time.perf_counter()
        with fs.open("bench/big.npy", "rb") as f:
            version = np.lib.format.read_magic(f)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read_header(f)
            offset = f.tell()
            t_open = time.perf_counter() - start
            opened = (len(fetched), sum(fetched))
            fetched.clear()
            start = time.perf_counter()
            row = COLS * dtype.itemsize
            f.seek(offset + first * row)
            part = np.frombuffer(f.read(ROWS * row), dtype=dtype).reshape(ROWS, COLS)
            t_range = time.perf_counter() - start
        assert part[0, 0] == a[first, 0]
        print(f"round {round}: open {opened[0]} GET {opened[1]} B {t_open * 1e3:.1f} ms; "
              f"seek+read {len(fetched)} GET {sum(fetched)} B {t_range * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
