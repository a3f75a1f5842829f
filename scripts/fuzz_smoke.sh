#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ once over its seeds (the fixtures and the
# saved crash regressions), without mutating: a quick check for CI that the
# targets build and that no seed crashes. Real fuzzing: see fuzz/README.md.
#
# Works on the stable toolchain: RUSTC_BOOTSTRAP=1 lets stable rustc accept
# the -Zsanitizer=address flag cargo-fuzz passes (the ASan runtime ships with
# stable's rust-std). Set FUZZ_SANITIZER=none to build without ASan.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz_smoke: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

export RUSTC_BOOTSTRAP=1
sanitizer="${FUZZ_SANITIZER:-address}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

npy_seeds=(fixtures/npy/valid fixtures/npy/invalid fixtures/npy/unsupported fixtures/npy/elements fixtures/npy/invalid_data fixtures/claimed_sizes fuzz/regressions)
npz_seeds=(fixtures/npz/valid fixtures/npz/invalid fixtures/npz/differential fixtures/claimed_sizes fuzz/regressions)
pickle_seeds=(fixtures/pickle fixtures/pickle_bad/records fixtures/npy/unsupported fixtures/wild/numpy_testdata fixtures/wild/stringdtype fixtures/wild/pandas fixtures/wild/opaque fixtures/wild/nested_objects fixtures/wild/longdouble fixtures/claimed_sizes fuzz/regressions)

# Each target gets the dictionary of its input's tokens (fuzz/dicts/): the
# smoke run checks that the dictionaries parse, real runs use them too.
run() {
    local target="$1"
    local dict="$PWD/fuzz/dicts/$2.dict"
    shift 2
    local seeds=()
    for dir in "$@"; do
        [ -d "$dir" ] && seeds+=("$dir")
    done
    mkdir -p "$scratch/$target"
    echo "fuzz_smoke: $target over ${seeds[*]}"
    # The empty scratch corpus comes first, so libFuzzer writes nothing into
    # the seed folders; -runs=0 executes the seeds and stops.
    local log="$scratch/$target.log"
    local status=0
    cargo fuzz run --sanitizer "$sanitizer" -a "$target" "$scratch/$target" "${seeds[@]}" -- \
        -dict="$dict" -runs=0 -max_len=1048576 -rss_limit_mb=4096 -malloc_limit_mb=1024 -timeout=30 >"$log" 2>&1 || status=$?
    grep -E "INITED|DONE" "$log" || true
    if [ "$status" -ne 0 ]; then
        tail -n 60 "$log"
        echo "fuzz_smoke: $target FAILED (exit $status)"
        exit 1
    fi
}

cargo fuzz build --sanitizer "$sanitizer" -a
run header npy "${npy_seeds[@]}"
run read_bytes npy "${npy_seeds[@]}"
run view npy "${npy_seeds[@]}"
run any_array npy "${npy_seeds[@]}"
run npz npz "${npz_seeds[@]}"
run misbehaving_reader npy "${npy_seeds[@]}"
run npz_model npz "${npz_seeds[@]}"
run record_plan npy "${npy_seeds[@]}"
run pickle pickle "${pickle_seeds[@]}"
run store npz "${npy_seeds[@]}" "${npz_seeds[@]}"
run sparse npz fixtures/sparse fixtures/sparse/bad fixtures/claimed_sizes fuzz/regressions
# Streams crafted against the block finder (fixtures/pinflate/README.md):
# an input slower than the timeout is a finding, as a crash is.
run pinflate deflate "${npz_seeds[@]}" fuzz/seeds/pinflate
run zip_methods npz fixtures/zip_methods/valid fixtures/zip_methods/invalid "${npz_seeds[@]}"
echo "fuzz_smoke: 12 passed, 0 failed"
