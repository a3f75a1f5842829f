#!/usr/bin/env bash
# NumPy interop check for .npy: the crate writes arrays of every element type
# and layout (examples/interop_write.rs), NumPy loads and compares them
# (scripts/interop_check.py), including byte-identity with np.save.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d "${TMPDIR:-/tmp}/ndnpy-interop.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cargo run --quiet --release --all-features --example interop_write -- "$dir"
python3 scripts/interop_check.py "$dir"
cargo run --quiet --release --all-features --example interop_elements -- "$dir/elements"
python3 scripts/interop_elements.py "$dir/elements"
