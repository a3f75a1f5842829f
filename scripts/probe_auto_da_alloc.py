"""Does reserving space defeat ext4 auto_da_alloc? (BENCHMARKS.md, "Steady overwrite").
Writes 64 MiB three ways (plain, fallocate, fallocate + sync_file_range), renames each over an
existing file and shows the extents (filefrag -v) before and 1 s after the rename.
Usage: flock /tmp/ndnpy-heavy.lock python3 scripts/probe_auto_da_alloc.py FOLDER_ON_EXT4"""
import os, subprocess, time, sys, ctypes
D = sys.argv[1]
MIB = 64
data = os.urandom(1 << 20) * MIB
libc = ctypes.CDLL("libc.so.6", use_errno=True)
def flags(path):
    out = subprocess.run(["filefrag", "-v", path], capture_output=True, text=True).stdout
    lines = [l for l in out.splitlines() if ":" in l and l.strip()[:1].isdigit()]
    kinds = {"delalloc": 0, "unwritten": 0, "written": 0}
    for l in lines:
        if "delalloc" in l: kinds["delalloc"] += 1
        elif "unwritten" in l: kinds["unwritten"] += 1
        else: kinds["written"] += 1
    return kinds
def dirty():
    for l in open("/proc/meminfo"):
        if l.startswith("Dirty:"): d = int(l.split()[1]) // 1024
        if l.startswith("Writeback:"): w = int(l.split()[1]) // 1024
    return d, w
for mode in ["plain", "fallocate", "fallocate+sync_file_range"]:
    target = os.path.join(D, "t.bin"); tmp = os.path.join(D, ".t.tmp")
    with open(target, "wb") as f: f.write(b"x" * 4096)
    os.sync()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    if mode != "plain": os.posix_fallocate(fd, 0, len(data))
    os.write(fd, data)
    if mode == "fallocate+sync_file_range":
        libc.sync_file_range(fd, ctypes.c_longlong(0), ctypes.c_longlong(0), 2)
    os.close(fd)
    before = flags(tmp)
    os.rename(tmp, target)
    time.sleep(1.0)
    after = flags(target)
    print(f"{mode:28s} before rename extents {before}; 1 s after rename {after}; Dirty/Writeback MiB {dirty()}")
    os.unlink(target); os.sync()
