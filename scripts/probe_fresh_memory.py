"""Fresh-memory cost after idle (BENCHMARKS.md, "Steady overwrite"): touches a new 256 MiB
array right after freeing the previous one, and after 0.5-5 s idle. On a VM with free page
reporting, memory idle for ~2 s is returned to the host and costs ~10x to touch again.
Usage: flock /tmp/ndnpy-heavy.lock python3 scripts/probe_fresh_memory.py"""
import numpy as np, time
def touch():
    t=time.perf_counter(); a=np.ones(32<<20); t=time.perf_counter()-t; del a; return t*1e3
print("warm", [round(touch()) for _ in range(4)])
for s in [0.5, 1, 2, 3, 5]:
    time.sleep(s); print(f"after {s}s idle", round(touch()), "then", round(touch()))
