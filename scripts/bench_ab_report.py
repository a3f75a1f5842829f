#!/usr/bin/env python3
"""Table of an interleaved A/B run of benches/npy.rs (see scripts/bench_ab.sh):
the criterion median of every case in every run of each side, and the ratio
of the best medians (after / before)."""
import glob
import re
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/ndnpy-ab"
def parse(p):
    s=open(p).read()
    out={}
    for m in re.finditer(r'(?m)^(\S+)\s*\n?\s*time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]',s):
        v=float(m.group(2)); u=m.group(3)
        v*= {'ns':1e-6,'µs':1e-3,'us':1e-3,'ms':1,'s':1e3}[u]
        out[m.group(1)]=v
    return out
runs={v:[parse(p) for p in sorted(glob.glob(f'{OUT}/ab_{v}_*.txt'))] for v in ('before','after')}
names=sorted(set().union(*[r.keys() for r in runs['before']]))
print(f"{'case':45s} {'before (ms)':>22s} {'after (ms)':>22s} {'after/before':>12s}")
for n in names:
    b=[r[n] for r in runs['before'] if n in r]; a=[r[n] for r in runs['after'] if n in r]
    if not b or not a: continue
    fmt=lambda xs: ' / '.join(f'{x:.4g}' for x in xs)
    print(f"{n:45s} {fmt(b):>22s} {fmt(a):>22s} {min(a)/min(b):12.3f}")
