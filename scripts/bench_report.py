#!/usr/bin/env python3
"""Prints the benchmark tables of BENCHMARKS.md from a finished run.

Usage:
    python3 scripts/bench_report.py [NUMPY_JSON]

Reads criterion's medians from target/criterion/*/new/ (written by
`cargo bench`) and, if given, the JSON written by
`scripts/bench_numpy.py --json NUMPY_JSON`, and prints one Markdown table per
operation: median time, throughput where the group has one, and the ratio to
the group's baseline (the first case listed in BASELINES).
"""

import json
import sys
from pathlib import Path

CRATE = Path(__file__).resolve().parent.parent
CRITERION = CRATE / "target" / "criterion"

# Baseline case of each group (ratios are to it).
BASELINES = {
    "read_c": "one_copy",
    "read_f": "one_copy",
    "read_big_endian": "one_copy",
    "mmap_sum": "memmap2",
    "npz_write_stored": "std_fs_write",
    "npz_write_compressed": "deflate_then_std_fs_write",
    "npz_read_stored": "one_copy",
    "npz_read_compressed": "one_copy_then_inflate",
}
ORDER = [
    "read_c",
    "read_f",
    "read_big_endian",
    "write_new_c",
    "write_new_f",
    "write_new_strided",
    "write_existing_c",
    "write_existing_f",
    "write_existing_strided",
    "mmap_open_view",
    "mmap_sum",
    "npz_write_stored",
    "npz_read_stored",
    "npz_write_compressed",
    "npz_read_compressed",
]


def fmt_time(ns):
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def load_criterion():
    """{group: {case: (median_ns, bytes or None)}}"""
    out = {}
    for bench in CRITERION.glob("**/new/benchmark.json"):
        meta = json.loads(bench.read_text())
        est = json.loads((bench.parent / "estimates.json").read_text())
        group = meta["group_id"]
        case = meta["function_id"] or ""
        if meta.get("value_str"):
            case = f"{case}/{meta['value_str']}"
        tp = meta.get("throughput") or {}
        nbytes = tp.get("Bytes") or tp.get("BytesDecimal")
        out.setdefault(group, {})[case] = (est["median"]["point_estimate"], nbytes)
    return out


def main():
    crit = load_criterion()
    numpy = {}
    if len(sys.argv) > 1:
        numpy = json.loads(Path(sys.argv[1]).read_text())["results_ns"]
    for name, ns in numpy.items():
        group, case = name.split("/", 1)
        if not group.startswith("npz_size"):
            crit.setdefault(group, {})[case] = (ns, None)

    groups = [g for g in ORDER if g in crit] + sorted(set(crit) - set(ORDER))
    for group in groups:
        cases = crit[group]
        nbytes = next((b for _, b in cases.values() if b), None)
        if group == "mmap_open_view":
            sizes = sorted({c.split("/")[1] for c in cases}, key=lambda s: int(s[:-3]))
            print(f"\n#### {group}\n")
            print("| case | " + " | ".join(sizes) + " |")
            print("|---|" + "---:|" * len(sizes))
            for impl in ("memmap2", "memmap2_touch", "ndnpy", "ndarray_npy", "npyz", "numpy"):
                row = [fmt_time(cases[f"{impl}/{s}"][0]) if f"{impl}/{s}" in cases else "–" for s in sizes]
                print(f"| {impl} | " + " | ".join(row) + " |")
            continue
        base = BASELINES.get(group, "std_fs_write")
        base_ns = cases.get(base, (None,))[0]
        print(f"\n#### {group}\n")
        print("| case | median | throughput | ratio to baseline |")
        print("|---|---:|---:|---:|")
        order = [base] + [c for c in ("ndnpy_native_c", "ndnpy", "ndnpy_mmap_views", "ndarray_npy", "npyz") if c in cases]
        order += [c for c in sorted(cases) if c not in order]
        for case in order:
            if case not in cases:
                continue
            ns, _ = cases[case]
            tput = f"{nbytes / (ns / 1e9) / 2**30:.2f} GiB/s" if nbytes else ""
            ratio = f"{ns / base_ns:.2f}×" if base_ns else ""
            label = f"{case} (baseline)" if case == base else case
            print(f"| {label} | {fmt_time(ns)} | {tput} | {ratio} |")

    sizes_path = CRATE / "target" / "bench-data" / "npz_sizes.json"
    sizes = json.loads(sizes_path.read_text()) if sizes_path.exists() else {}
    sizes.update({k: v for k, v in numpy.items() if k.startswith("npz_size")})
    if sizes:
        print("\n#### npz archive sizes (bytes)\n")
        print("| archive | bytes | ratio to NumPy |")
        print("|---|---:|---:|")
        for key in sorted(sizes):
            kind = key.split("/")[0]
            ref = sizes.get(f"{kind}/numpy")
            ratio = f"{sizes[key] / ref:.4f}" if ref else ""
            print(f"| {key} | {int(sizes[key])} | {ratio} |")


if __name__ == "__main__":
    main()
