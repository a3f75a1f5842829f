#!/usr/bin/env python3
"""NumPy's side of the benchmarks in benches/: the same operations, sizes and
files, timed as the median of repeated runs.

Usage:
    python3 scripts/bench_numpy.py [--json OUT.json]

Environment (the same variables as `cargo bench`, see BENCHMARKS.md):
    NDNPY_BENCH_MIB      size of the large arrays in MiB (default 256)
    NDNPY_BENCH_DIR      folder of the benchmark files (default
                         target/bench-data in the crate: the folder the Rust
                         benchmarks use, so both read the same files on the
                         same disk)
    NDNPY_BENCH_REPEATS  runs of each large case (default 10)

Conventions, matching the Rust harness (benches/common/mod.rs):
  * reads time `np.load` of a file already in the page cache; freeing the
    array is not timed;
  * before each timed write, the target is removed ("new") or left from the
    previous run ("existing"), then all dirty data is flushed with
    `os.sync()`; neither is timed;
  * names are the criterion ids `group/case`, with case `numpy`.
"""

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

COLS = 4096  # as in benches/npy.rs
NPZ_MEMBERS = 10
NPZ_MEMBER_ELEMS = (1 << 20) // 8  # 1 MiB of f64


def env_int(name, default):
    value = os.environ.get(name)
    return int(value) if value else default


MIB = max(1, env_int("NDNPY_BENCH_MIB", 256))
REPEATS = max(3, env_int("NDNPY_BENCH_REPEATS", 10))
CRATE = Path(__file__).resolve().parent.parent
DIR = Path(os.environ.get("NDNPY_BENCH_DIR") or CRATE / "target" / "bench-data")


def values(rows):
    return (np.arange(rows * COLS, dtype=np.float64) * 0.5).reshape(rows, COLS)


def npz_arrays():
    """The ten 1 MiB arrays of the npz benchmarks (benches/npz.rs makes the
    same values): small integers in f64, moderately compressible."""
    i = np.arange(NPZ_MEMBER_ELEMS, dtype=np.uint64)
    return {
        f"a{k}": ((i * np.uint64(2654435761) + np.uint64(k)) % np.uint64(4096)).astype(
            np.float64
        )
        for k in range(NPZ_MEMBERS)
    }


def median_of(fn, repeats, setup=None):
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        t1 = time.perf_counter()
        del out
        times.append(t1 - t0)
    return statistics.median(times)


def ensure(path, array):
    """Writes `array` to `path` with np.save unless a file of the right
    length is there (the Rust benchmarks write the same bytes)."""
    expected = 128 + array.nbytes
    if not path.exists() or path.stat().st_size != expected:
        np.save(path, array)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="write the results to this file as JSON")
    args = ap.parse_args()

    DIR.mkdir(parents=True, exist_ok=True)
    rows = MIB * 32
    c = values(rows)
    f = np.asfortranarray(c)
    strided = c[:, ::2]
    assert not strided.flags.c_contiguous and not strided.flags.f_contiguous

    c_path = DIR / f"in_c_{MIB}.npy"
    f_path = DIR / f"in_f_{MIB}.npy"
    be_path = DIR / f"in_be_{MIB}.npy"
    small_path = DIR / "in_c_1.npy"
    ensure(c_path, c)
    ensure(f_path, f)
    ensure(be_path, c.astype(">f8"))
    ensure(small_path, values(32))

    results = {}

    def record(name, seconds):
        results[name] = seconds * 1e9  # ns, like criterion's estimates
        print(f"{name:45s} {seconds * 1e3:12.3f} ms", flush=True)

    # Warm the page cache for the inputs.
    for p in (c_path, f_path, be_path, small_path):
        p.read_bytes()

    # Reads.
    for group, path in (("read_c", c_path), ("read_f", f_path), ("read_big_endian", be_path)):
        a = np.load(path)
        assert np.array_equal(a, c) and (a.flags.f_contiguous if path == f_path else True)
        del a
        record(f"{group}/numpy", median_of(lambda: np.load(path), REPEATS))
    # np.load keeps big-endian data big-endian; ndnpy returns native values,
    # so this is the like-for-like figure.
    record(
        "read_big_endian/numpy_to_native",
        median_of(lambda: np.load(be_path).astype("=f8"), REPEATS),
    )

    # Writes.
    for target in ("new", "existing"):
        for layout, array in (("c", c), ("f", f), ("strided", strided)):
            group = f"write_{target}_{layout}"
            out = DIR / f"out_{group}_numpy.npy"
            if out.exists():
                out.unlink()

            def setup(out=out, array=array, target=target):
                if target == "new":
                    if out.exists():
                        out.unlink()
                elif not out.exists():
                    np.save(out, array)
                os.sync()

            record(
                f"{group}/numpy",
                median_of(lambda out=out, array=array: np.save(out, array), REPEATS, setup),
            )
            assert np.array_equal(np.load(out, mmap_mode="r"), array)
            out.unlink()

    # Memory maps: open and view at two sizes, then open, view and sum.
    for mib, path in ((1, small_path), (MIB, c_path)):
        record(
            f"mmap_open_view/numpy/{mib}MiB",
            median_of(lambda path=path: np.load(path, mmap_mode="r"), max(REPEATS, 1000)),
        )
    expected = c.sum()
    record(
        "mmap_sum/numpy",
        median_of(lambda: np.load(c_path, mmap_mode="r").sum(), REPEATS),
    )
    assert np.load(c_path, mmap_mode="r").sum() == expected
    record("mmap_sum/numpy_in_memory_array", median_of(lambda: c.sum(), REPEATS))

    # .npz: ten 1 MiB arrays, stored and compressed (zlib's default level).
    arrays = npz_arrays()
    npz_repeats = max(REPEATS, 20)
    sizes = {}
    for kind, save in (("stored", np.savez), ("compressed", np.savez_compressed)):
        out = DIR / f"out_npz_{kind}_numpy.npz"

        def setup(out=out):
            if out.exists():
                out.unlink()
            os.sync()

        record(
            f"npz_write_{kind}/numpy",
            median_of(lambda out=out, save=save: save(out, **arrays), npz_repeats, setup),
        )
        sizes[kind] = out.stat().st_size

        def read_all(out=out):
            with np.load(out) as z:
                return [z[name] for name in z.files]

        got = read_all()
        assert all(np.array_equal(g, arrays[f"a{k}"]) for k, g in enumerate(got))
        record(f"npz_read_{kind}/numpy", median_of(read_all, npz_repeats))
        out.unlink()
    for kind, size in sizes.items():
        results[f"npz_size_{kind}/numpy"] = size
        print(f"npz_size_{kind}/numpy{'':26s} {size:12d} bytes")

    meta = {
        "numpy": np.__version__,
        "python": sys.version.split()[0],
        "mib": MIB,
        "repeats": REPEATS,
        "dir": str(DIR),
    }
    print(json.dumps(meta))
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "results_ns": results}, indent=1))


if __name__ == "__main__":
    main()
