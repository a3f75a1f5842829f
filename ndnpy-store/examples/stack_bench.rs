//! One timed read of a stack, for `scripts/bench_stack.py` (numbers in
//! BENCHMARKS.md, "Stacks of `.npy` shards"):
//!
//! `stack_bench DIR MODE START END REPEATS` reads the stack in the folder
//! `DIR` of `f64` rows, `REPEATS` times, whole (`MODE` `local-whole`,
//! `remote-whole`) or rows `START..END` (`local-range`, `remote-range`),
//! through `ndnpy::stack::NpyStack` (`local-*`) or
//! `ndnpy_store::RemoteNpyStack` on its `file://` URL (`remote-*`), and
//! prints one JSON line: the seconds of each read (opening included), and
//! the bytes the process read from files during the last one (`rchar` of
//! `/proc/self/io`: every `read` and `pread`, page cache or not).

use ndarray::{Array2, Ix2};
use ndnpy::stack::NpyStack;
use ndnpy_store::blocking::RemoteNpyStack;
use std::time::Instant;

/// Bytes this process has read by `read`-like calls so far.
fn rchar() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("rchar: ").map(|n| n.trim().parse().ok()))
                .flatten()
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, mode, start, end, repeats] = &args[..] else {
        eprintln!("usage: stack_bench DIR MODE START END REPEATS");
        std::process::exit(2);
    };
    let (start, end): (usize, usize) = (start.parse().unwrap(), end.parse().unwrap());
    let repeats: usize = repeats.parse().unwrap();
    let url = format!("file://{}", std::fs::canonicalize(dir).unwrap().display());
    let mut seconds = Vec::new();
    let mut read = 0;
    let mut check = 0.0;
    for _ in 0..repeats {
        let before = rchar();
        let t = Instant::now();
        let a: Array2<f64> = match mode.as_str() {
            "local-whole" => NpyStack::open(dir).unwrap().read::<f64, Ix2>().unwrap(),
            "local-range" => NpyStack::open(dir).unwrap().read_range(start..end).unwrap(),
            "remote-whole" => RemoteNpyStack::open_url(&url)
                .unwrap()
                .read::<f64, Ix2>()
                .unwrap(),
            "remote-range" => RemoteNpyStack::open_url(&url)
                .unwrap()
                .read_range::<f64, Ix2>(start..end)
                .unwrap(),
            other => panic!("unknown mode {other}"),
        };
        seconds.push(t.elapsed().as_secs_f64());
        read = rchar() - before;
        check = a[[0, 0]] + a[[a.nrows() - 1, a.ncols() - 1]];
        drop(a);
    }
    println!(
        "{{\"mode\": \"{mode}\", \"seconds\": {seconds:?}, \"rchar\": {read}, \"check\": {check}}}"
    );
}
