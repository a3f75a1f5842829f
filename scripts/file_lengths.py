#!/usr/bin/env python3
"""No code file over 600 lines, tests excluded (the house style).

    python3 scripts/file_lengths.py [--max 600] DIR...

Counts each `.rs` file's lines before its test module (`#[cfg(test)]`
followed by `mod ...`); files in a `tests/` folder, and the crates'
`tests/`, `benches/` and `fuzz/` folders, are tests and not counted.
Exits 1 listing the files over the limit."""

import argparse
import os
import re
import sys

TEST_MOD = re.compile(r"^\s*#\[cfg\(test\)\]\s*$")
MOD = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?mod\s+\w+")


def code_lines(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if TEST_MOD.match(line):
            # The attribute may be followed by others (`#[allow]`) before `mod`.
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith("#["):
                j += 1
            if j < len(lines) and MOD.match(lines[j]):
                return i
    return len(lines) - (1 if lines and lines[-1] == "" else 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=600)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    over = []
    count = 0
    for d in args.dirs:
        for root, dirs, files in os.walk(d):
            dirs[:] = [x for x in dirs if x not in ("tests", "target")]
            for f in files:
                if f.endswith(".rs"):
                    path = os.path.join(root, f)
                    count += 1
                    n = code_lines(path)
                    if n > args.max:
                        over.append((n, path))
    for n, path in sorted(over, reverse=True):
        print(f"{path}: {n} lines of code (limit {args.max})")
    print(f"{count} files, {len(over)} over {args.max} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
