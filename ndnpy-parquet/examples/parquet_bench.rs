//! Timing helper of `scripts/bench_parquet.py` (see BENCHMARKS.md):
//! `parquet_bench read PATH REPS` and `parquet_bench write PATH OUT REPS`
//! print the best wall time in seconds; `parquet_bench rss PATH` reads once
//! and prints the peak resident set size in bytes.

use ndnpy_parquet::Frame;
use std::time::Instant;

fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("read") => {
            let reps: usize = args[3].parse()?;
            let mut best = f64::INFINITY;
            for _ in 0..reps {
                let t = Instant::now();
                let f = Frame::read(&args[2])?;
                best = best.min(t.elapsed().as_secs_f64());
                assert!(!f.is_empty());
            }
            println!("{best}");
        }
        Some("write") => {
            let f = Frame::read(&args[2])?;
            let reps: usize = args[4].parse()?;
            let mut best = f64::INFINITY;
            for _ in 0..reps {
                let t = Instant::now();
                f.write(&args[3])?;
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!("{best}");
        }
        Some("rss") => {
            let f = Frame::read(&args[2])?;
            assert!(!f.is_empty());
            println!("{}", peak_rss());
        }
        Some("rss-write") => {
            let f = Frame::read(&args[2])?;
            f.write(&args[3])?;
            println!("{}", peak_rss());
        }
        _ => return Err("usage: parquet_bench read PATH REPS | write PATH OUT REPS | rss PATH | rss-write PATH OUT".into()),
    }
    Ok(())
}
