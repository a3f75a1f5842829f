#!/usr/bin/env python3
"""The `ndnpy` command against a real S3 protocol server on 127.0.0.1 (moto's
server): it reads what boto3 uploaded, and NumPy (through s3fs) reads what
it uploaded, equal. Run with the Python of a venv that has moto[server],
boto3, s3fs and numpy (.ci/run makes one); NDNPY_BIN names the binary."""

import io
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_server  # noqa: E402  (scripts/s3_server.py)
import boto3
import numpy as np
import s3fs

BIN = os.environ.get("NDNPY_BIN", "target/release/ndnpy")




def main():
    with s3_server.server() as endpoint:
        run(endpoint)


def ndnpy(env, *args):
    out = subprocess.run([BIN, *args], env=env, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        sys.exit(f"ndnpy {' '.join(args)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    return out.stdout


def run(endpoint):
    creds = dict(aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
    s3 = boto3.client("s3", endpoint_url=endpoint, **creds)
    s3.create_bucket(Bucket="arrays")
    env = dict(
        os.environ,
        AWS_ENDPOINT=endpoint,
        AWS_ALLOW_HTTP="true",
        AWS_ACCESS_KEY_ID="test",
        AWS_SECRET_ACCESS_KEY="test",
        AWS_REGION="us-east-1",
    )
    rng = np.random.default_rng(7)
    arrays = {
        "weights.npy": rng.standard_normal((5000, 1200)).astype(np.float32),  # 24 MB: several parts
        "be.npy": np.arange(1000, dtype=">i8").reshape(100, 10),
        "words.npy": np.array(["alpha", "βeta", ""]),
        "objects.npy": np.array([1, "two", None, [3.5]], dtype=object),
    }
    for name, a in arrays.items():
        buf = io.BytesIO()
        np.save(buf, a, allow_pickle=True)
        s3.put_object(Bucket="arrays", Key=name, Body=buf.getvalue())
    buf = io.BytesIO()
    np.savez_compressed(buf, a=arrays["be.npy"], b=arrays["words.npy"])
    s3.put_object(Bucket="arrays", Key="both.npz", Body=buf.getvalue())

    fs = s3fs.S3FileSystem(key="test", secret="test", client_kwargs={"endpoint_url": endpoint, "region_name": "us-east-1"})
    checks = 0

    # Reading what boto3 uploaded.
    info = json.loads(ndnpy(env, "--json", "info", "s3://arrays/weights.npy"))
    assert info[0]["shape"] == [5000, 1200], info
    assert info[0]["path"] == "s3://arrays/weights.npy", info
    checks += 1
    shown = ndnpy(env, "--json", "show", "--slice", "1000:1002, 0:3", "s3://arrays/weights.npy")
    assert json.loads(shown)[0]["shape"] == [2, 3], shown
    checks += 1
    ndnpy(env, "check", "--allow-pickle", "s3://arrays/objects.npy", "s3://arrays/both.npz")
    checks += 1
    diff = ndnpy(env, "diff", "s3://arrays/be.npy", "s3://arrays/be.npy")
    assert "equal" in diff, diff
    checks += 1

    # Writing: NumPy reads back through s3fs what the command uploaded.
    for src, dst, key in [
        ("weights.npy", "weights.npz", "weights"),
        ("objects.npy", "objects.npz", "objects"),
        ("words.npy", "words.npz", "words"),
    ]:
        ndnpy(env, "convert", "--compress", f"s3://arrays/{src}", f"s3://arrays/out/{dst}")
        with fs.open(f"arrays/out/{dst}", "rb") as f:
            got = np.load(io.BytesIO(f.read()), allow_pickle=True)[key]
        want = arrays[src]
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
        assert all(x == y for x, y in zip(got.ravel(), want.ravel())), src
        checks += 1
    ndnpy(env, "convert", "--key", "a", "s3://arrays/both.npz", "s3://arrays/out/a.npy")
    with fs.open("arrays/out/a.npy", "rb") as f:
        np.testing.assert_array_equal(np.load(io.BytesIO(f.read())), arrays["be.npy"])
    checks += 1
    # A local file uploaded, a remote one downloaded.
    with tempfile.TemporaryDirectory() as d:
        local = os.path.join(d, "w.npy")
        np.save(local, arrays["be.npy"])
        ndnpy(env, "convert", local, "s3://arrays/out/w.npz")
        ndnpy(env, "convert", "s3://arrays/out/w.npz", os.path.join(d, "back.npz"))
        np.testing.assert_array_equal(np.load(os.path.join(d, "back.npz"))["w"], arrays["be.npy"])
        checks += 1
    # A missing object is an error naming it.
    out = subprocess.run([BIN, "info", "s3://arrays/nope.npy"], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "s3://arrays/nope.npy" in out.stderr, out.stderr
    checks += 1
    checks += differential(env, s3)
    print(f"s3 interop: {checks} passed, 0 failed")


# Each command on an S3 URL gives what it gives on the local path of the
# same bytes (ndnpy-cli/tests/remote.rs runs the same comparison on file://
# URLs): stdout, stderr and exit code with the URL written back as the path,
# and the same output files.
COMMANDS = [
    ["info", "{}"], ["--json", "info", "{}"],
    ["show", "{}"], ["show", "--slice", "1:3", "{}"], ["show", "--slice", "-1", "{}"],
    ["--json", "show", "{}"], ["show", "--full", "{}"],
    ["stats", "{}"], ["--json", "stats", "{}"],
    ["check", "{}"], ["--json", "check", "{}"], ["check", "--allow-pickle", "{}"],
    ["diff", "{}", "{}"], ["--json", "diff", "{}", "{}"],
]
CONVERSIONS = [
    (["convert"], "out.npz"), (["convert", "--compress"], "out.npz"), (["convert"], "out.npy"),
    (["convert", "--split"], "out_dir"), (["convert"], "out.parquet"),
]


def differential_fixtures(d):
    """Fixtures of every kind, and large files made here (a 20 000 x 10
    array, archives of several MiB-sized members stored and compressed)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
    picked = []
    for sub, exts in [("cli", (".npy", ".npz")), ("npz/valid", (".npz",)), ("npz/invalid", (".npz",)),
                      ("pickle", (".npy",)), ("sparse", (".npz",)), ("parquet/valid", (".parquet",)),
                      ("npy/invalid_data", (".npy",))]:
        names = sorted(n for n in os.listdir(os.path.join(root, sub)) if n.endswith(exts))
        step = max(1, len(names) // 12) if sub in ("pickle", "parquet/valid", "npy/invalid_data") else 1
        picked += [os.path.abspath(os.path.join(root, sub, n)) for n in names[::step]]
    big = os.path.join(d, "big.npy")
    np.save(big, np.arange(200_000, dtype=np.int64).reshape(20_000, 10))
    rng = np.random.default_rng(3)
    members = {k: rng.integers(0, 1000, n).astype(np.float64) for k, n in
               [("a", 196_608), ("b", 196_608), ("c", 196_608), ("d", 786_432)]}
    np.savez(os.path.join(d, "many.npz"), **members)
    np.savez_compressed(os.path.join(d, "many_z.npz"), **members)
    return picked + [big, os.path.join(d, "many.npz"), os.path.join(d, "many_z.npz")]


def run_once(env, args, out):
    if out is not None:
        subprocess.run(["rm", "-rf", out], check=True)
    p = subprocess.run([BIN, *args], env=env, capture_output=True, timeout=300)
    files = []
    if out is not None and os.path.isdir(out):
        for top, dirs, names in sorted(os.walk(out)):
            for n in sorted(names):
                with open(os.path.join(top, n), "rb") as f:
                    files.append((os.path.relpath(os.path.join(top, n), out), f.read()))
    elif out is not None and os.path.exists(out):
        with open(out, "rb") as f:
            files.append(("", f.read()))
    return p.returncode, p.stdout, p.stderr, files


def differential(env, s3):
    failures, runs = [], 0
    with tempfile.TemporaryDirectory() as d:
        scratch = os.path.join(d, "scratch")
        os.mkdir(scratch)
        for i, path in enumerate(differential_fixtures(d)):
            key = f"diff/{i}/{os.path.basename(path)}"
            with open(path, "rb") as f:
                s3.put_object(Bucket="arrays", Key=key, Body=f.read())
            url = f"s3://arrays/{key}"
            back = lambda b: b.replace(url.encode(), path.encode())
            jobs = [([a.replace("{}", path) for a in c], [a.replace("{}", url) for a in c], None) for c in COMMANDS]
            jobs += [(c + [path, os.path.join(scratch, o)], c + [url, os.path.join(scratch, o)],
                      os.path.join(scratch, o)) for c, o in CONVERSIONS]
            for local_args, url_args, out in jobs:
                a = run_once(env, local_args, out)
                code, stdout, stderr, files = run_once(env, url_args, out)
                b = (code, back(stdout), back(stderr), files)
                runs += 1
                if a != b:
                    failures.append(f"{url_args}: path gave {a[0]} {a[1][:300]!r} {a[2][:300]!r}, "
                                    f"url gave {b[0]} {b[1][:300]!r} {b[2][:300]!r}")
        # `check` of a folder, and of the prefix its files are uploaded under.
        folder = os.path.join(d, "folder")
        os.makedirs(os.path.join(folder, "sub"))
        a = np.arange(12.0).reshape(4, 3)
        np.save(os.path.join(folder, "a.npy"), a)
        np.save(os.path.join(folder, "sub", "b.npy"), a)
        np.save(os.path.join(folder, "sub-x.npy"), a)
        np.savez(os.path.join(folder, "c.npz"), x=a)
        with open(os.path.join(folder, "a.npy"), "rb") as f:
            cut = f.read()[:-5]
        with open(os.path.join(folder, "sub", "cut.npy"), "wb") as f:
            f.write(cut)
        with open(os.path.join(folder, "notes.txt"), "w") as f:
            f.write("not an array")
        for top, _, names in os.walk(folder):
            for n in names:
                with open(os.path.join(top, n), "rb") as f:
                    key = "folder/" + os.path.relpath(os.path.join(top, n), folder)
                    s3.put_object(Bucket="arrays", Key=key, Body=f.read())
        for path, url in [(folder, "s3://arrays/folder"), (folder + "/", "s3://arrays/folder/")]:
            # `check` finds the cut file (exit 1); the others refuse a folder.
            for args, expected in ((["check"], 1), (["--json", "check"], 1), (["info"], 2), (["stats"], 2)):
                a = run_once(env, args + [path], None)
                code, stdout, stderr, files = run_once(env, args + [url], None)
                b = (code, stdout.replace(url.encode(), path.encode()),
                     stderr.replace(url.encode(), path.encode()), files)
                runs += 1
                if a != b or a[0] != expected:
                    failures.append(f"{args + [url]}: path gave {a[0]} {a[1][:300]!r} {a[2][:300]!r}, "
                                    f"url gave {b[0]} {b[1][:300]!r} {b[2][:300]!r}")
    if failures:
        sys.exit(f"{len(failures)} of {runs} commands differ on S3 URLs:\n" + "\n".join(failures[:20]))
    print(f"s3 differential: {runs} commands gave the same output on paths and S3 URLs")
    return 1


if __name__ == "__main__":
    main()
