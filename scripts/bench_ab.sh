#!/bin/bash
# Interleaved A/B of the single-array benchmarks (benches/npy.rs) between a
# revision and the working tree, so that both sides see the same machine:
#
#     scripts/bench_ab.sh REV [ROUNDS]     # e.g. scripts/bench_ab.sh ac9d2c9 2
#
# Builds the `npy` bench at REV (in a worktree) and here, into one target
# folder (target-bench), keeps both binaries, then runs before, after,
# before, after ... on 64 MiB arrays, ndnpy's cases and the floors
# (one_copy, std_fs_write, memmap2) only. Prints scripts/bench_ab_report.py.
set -euo pipefail
rev=$1
rounds=${2:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
out=/tmp/ndnpy-ab
export CARGO_TARGET_DIR=$root/target-bench
mkdir -p "$out" "$out/data"
rm -f "$out"/ab_*.txt
bin() {
    cargo bench -p ndnpy-bench --bench npy --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "npy" and m.get("executable"):
        print(m["executable"])'
}
rm -rf "$out/before-tree"
git -C "$root" worktree add -f "$out/before-tree" "$rev" >/dev/null
(cd "$out/before-tree" && cp "$(bin)" "$out/npy-before")
git -C "$root" worktree remove --force "$out/before-tree"
(cd "$root" && cp "$(bin)" "$out/npy-after")
export NDNPY_BENCH_DIR=$out/data NDNPY_BENCH_MIB=64
filter='/(ndnpy|ndnpy_native_c|one_copy|std_fs_write|memmap2)(/|$)'
for r in $(seq "$rounds"); do
    for v in before after; do
        (cd "$root/benches" && "$out/npy-$v" --bench "$filter" --noplot > "$out/ab_${v}_$r.txt" 2>&1)
    done
done
python3 "$root/scripts/bench_ab_report.py" "$out"
