//! `ndnpy stats` on a 1 GiB `<f8` file: wall time and peak memory of the
//! binary, against summing the same file through a memory map in a plain
//! loop (the floor: every byte read once). Not a test; run with
//!
//! ```sh
//! flock /tmp/ndnpy-heavy.lock cargo bench -p ndnpy-cli --bench stats
//! ```
//!
//! `NDNPY_BENCH_DIR` picks the folder for the file (default: the system's
//! temporary folder). Both sides run with the file in the page cache.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const ELEMENTS: usize = 1 << 27; // 1 GiB of f64
const RUNS: usize = 5;

fn write_file(path: &Path) {
    let header = ndnpy::dtype::Header {
        dtype: ndnpy::dtype::DType::parse("<f8").unwrap(),
        shape: vec![ELEMENTS],
        fortran_order: false,
        version: ndnpy::dtype::Version::V1,
    };
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    w.write_all(&header.to_bytes().unwrap()).unwrap();
    // xorshift64*, fixed seed: values in [-1, 1).
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut block = Vec::with_capacity(1 << 20);
    for _ in 0..ELEMENTS / (1 << 17) {
        block.clear();
        for _ in 0..1 << 17 {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let v =
                (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 52) as f64 - 1.0;
            block.extend_from_slice(&v.to_le_bytes());
        }
        w.write_all(&block).unwrap();
    }
    w.flush().unwrap();
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn mmap_sum(path: &Path) -> (f64, f64) {
    let file = std::fs::File::open(path).unwrap();
    let start = Instant::now();
    // SAFETY: the benchmark created this file in its own folder and nothing
    // else writes or truncates it while it is mapped.
    let map = unsafe { memmap2::Mmap::map(&file).unwrap() };
    let data = &map[128..];
    let mut sum = 0.0f64;
    for chunk in data.chunks_exact(8) {
        sum += f64::from_le_bytes(chunk.try_into().unwrap());
    }
    (start.elapsed().as_secs_f64(), sum)
}

fn peak_rss_children_kib() -> i64 {
    // SAFETY: getrusage only writes the struct we pass it.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage.ru_maxrss
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dir = std::env::var_os("NDNPY_BENCH_DIR")
        .map(Into::into)
        .unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::tempdir_in(dir).unwrap();
    let path = dir.path().join("big.npy");
    write_file(&path);
    let bin = env!("CARGO_BIN_EXE_ndnpy");
    let run = || {
        let start = Instant::now();
        let out = Command::new(bin)
            .args(["stats", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        start.elapsed().as_secs_f64()
    };
    // The binary runs first: a child started while this process had the
    // whole file mapped would be charged this process's peak RSS (Linux
    // records the spawning address space's high-water mark at exec).
    run(); // warms the page cache
    let ours: Vec<f64> = (0..RUNS).map(|_| run()).collect();
    let rss = peak_rss_children_kib();
    let base: Vec<f64> = (0..RUNS)
        .map(|_| {
            let (t, sum) = mmap_sum(&path);
            std::hint::black_box(sum);
            t
        })
        .collect();
    let spread = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        format!("{lo:.3}–{hi:.3}")
    };
    let (base_spread, ours_spread) = (spread(&base), spread(&ours));
    let (b, o) = (median(base), median(ours));
    println!(
        "stats_1gib: {ELEMENTS} <f8 values ({} MiB), median of {RUNS} runs",
        (ELEMENTS * 8) >> 20
    );
    println!("| what | median (s) | min–max (s) | ratio | peak RSS |");
    println!("|---|---|---|---|---|");
    println!(
        "| mmap + plain sum loop (floor) | {b:.3} | {base_spread} | 1.00 | (maps the 1 GiB file) |"
    );
    println!(
        "| `ndnpy stats` (whole process) | {o:.3} | {ours_spread} | {:.2} | {:.1} MiB |",
        o / b,
        rss as f64 / 1024.0
    );
}
