//! Steady overwrite: the latency of every call in a series of writes of one
//! large array to the same path, side by side with `np.save` in the same run
//! (scripts/bench_overwrite.py), as a distribution (median, p90, max), not
//! just a median.
//!
//! ```sh
//! flock /tmp/ndnpy-heavy.lock cargo bench -p ndnpy-bench --bench overwrite
//! ```
//!
//! Series, each of `NDNPY_OVERWRITE_RUNS` calls (default 30) of a
//! `NDNPY_BENCH_MIB` (default 256) MiB `f64` array, in `NDNPY_BENCH_DIR`:
//! - `new`: the target is removed (untimed) before each call: the
//!   new-file baseline;
//! - `overwrite`: back-to-back calls over the previous call's file, with
//!   nothing in between: no `sync`, no waiting for ndnpy's clean-up, as a
//!   program saving a checkpoint over and over would do;
//! - `overwrite, durable(true)`: the same with `WriteOptions::durable`
//!   (`fsync` of the file and the folder): the cost of durability;
//! - `overwrite, spaced`: a pause of `NDNPY_OVERWRITE_PAUSE_MS` (default
//!   1000) before each call, untimed, as a training loop saving its
//!   checkpoint does (back-to-back calls hide the cost of fresh memory:
//!   memory freed a moment ago is still backed, memory idle for seconds
//!   is not, BENCHMARKS.md); by default (every version to a fresh file)
//!   and with `WriteOptions::spare(true)` (each version written over the
//!   one before the last, flushed before the swap);
//! - `overwrite, spare(true)`: back to back with the spare;
//! - the same series for `np.save`, when `python3` with NumPy is available
//!   (set `NDNPY_BENCH_NUMPY=0` to skip).
//!
//! Besides the times, each call's page allocations are counted: the
//! system-wide `pgalloc_*` counters of `/proc/vmstat` before and after it
//! (the machine should be otherwise idle), which is how many fresh pages
//! the page cache took for the new file (a write into the page cache does
//! not fault in the writer, so its minor faults say nothing).
//!
//! Each series starts after an untimed `sync()`. The table is printed as
//! Markdown, ready for BENCHMARKS.md.

mod common;

use common::{bench_dir, big_mib, env_usize, sync_all};
use ndarray::Array2;
use ndnpy::{WriteNpy, WriteOptions};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const COLS: usize = 4096;

/// Pages the kernel has allocated so far (all zones), from `/proc/vmstat`;
/// 0 where it cannot be read.
fn pages_allocated() -> u64 {
    std::fs::read_to_string("/proc/vmstat")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("pgalloc_"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

/// One series: each call's seconds and pages allocated.
type Series = (Vec<f64>, Vec<f64>);

/// Times `runs` calls of `call`, each after an untimed `setup`.
fn series(runs: usize, mut setup: impl FnMut(), mut call: impl FnMut()) -> Series {
    sync_all();
    (0..runs)
        .map(|_| {
            setup();
            let pages = pages_allocated();
            let start = Instant::now();
            call();
            let t = start.elapsed().as_secs_f64();
            (t, pages_allocated().saturating_sub(pages) as f64)
        })
        .unzip()
}

/// Median, 90th percentile (nearest rank) and maximum, in seconds.
fn summary(times: &[f64]) -> (f64, f64, f64, f64) {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    let rank = |q: f64| t[((q * t.len() as f64).ceil() as usize).clamp(1, t.len()) - 1];
    let median = if t.len() % 2 == 1 {
        t[t.len() / 2]
    } else {
        (t[t.len() / 2 - 1] + t[t.len() / 2]) / 2.0
    };
    (t[0], median, rank(0.9), t[t.len() - 1])
}

fn numpy(dir: &Path, mib: usize, runs: usize, pause: u64) -> Option<Vec<(String, Series)>> {
    if std::env::var("NDNPY_BENCH_NUMPY").is_ok_and(|v| v == "0") {
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/bench_overwrite.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(dir)
        .arg(mib.to_string())
        .arg(runs.to_string())
        .arg(pause.to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "NumPy series skipped: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let list = |key: &str| -> Option<Vec<f64>> {
        let start = text.find(&format!("\"{key}\": ["))? + key.len() + 5;
        let end = start + text[start..].find(']')?;
        text[start..end]
            .split(',')
            .map(|s| s.trim().parse().ok())
            .collect()
    };
    let both = |key: &str| Some((list(key)?, list(&format!("{key}_pages"))?));
    Some(vec![
        ("np.save new file".into(), both("new")?),
        ("np.save overwrite".into(), both("overwrite")?),
        ("np.save overwrite, spaced".into(), both("spaced")?),
    ])
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let mib = big_mib();
    let runs = env_usize("NDNPY_OVERWRITE_RUNS", 30).max(1);
    let dir = bench_dir();
    let rows = mib * (1 << 20) / 8 / COLS;
    let a = Array2::from_shape_fn((rows, COLS), |(i, j)| (i * COLS + j) as f64 * 0.5);
    let path = dir.join("overwrite_ndnpy.npy");

    let new = series(
        runs,
        || {
            let _ = std::fs::remove_file(&path);
        },
        || a.write_npy(&path).expect("write"),
    );
    let overwrite = series(runs, || {}, || a.write_npy(&path).expect("write"));
    let durable_options = WriteOptions::default().durable(true);
    let durable = series(
        runs,
        || {},
        || a.write_npy_with(&path, &durable_options).expect("write"),
    );
    let pause = env_usize("NDNPY_OVERWRITE_PAUSE_MS", 1000) as u64;
    let wait = || std::thread::sleep(std::time::Duration::from_millis(pause));
    let spaced = series(runs, wait, || a.write_npy(&path).expect("write"));
    let spare_options = WriteOptions::default().spare(true);
    let spare = series(
        runs,
        || {},
        || a.write_npy_with(&path, &spare_options).expect("write"),
    );
    let spare_spaced = series(runs, wait, || {
        a.write_npy_with(&path, &spare_options).expect("write")
    });
    // A default write removes the spare.
    a.write_npy(&path).expect("write");
    let _ = std::fs::remove_file(&path);

    let mut rows_out: Vec<(String, Series)> = vec![
        ("ndnpy new file".into(), new),
        ("ndnpy overwrite".into(), overwrite),
        ("ndnpy overwrite, durable(true)".into(), durable),
        ("ndnpy overwrite, spaced".into(), spaced),
        ("ndnpy overwrite, spare(true)".into(), spare),
        ("ndnpy overwrite, spaced, spare(true)".into(), spare_spaced),
    ];
    if let Some(numpy) = numpy(&dir, mib, runs, pause) {
        rows_out.extend(numpy);
    }
    println!("{runs} calls of {mib} MiB each, {}", dir.display());
    println!();
    println!("| series | min | median | p90 | max | pages allocated per call (median) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, (times, pages)) in &rows_out {
        let (min, med, p90, max) = summary(times);
        let (_, pages, _, _) = summary(pages);
        println!(
            "| {name} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {pages:.0} |",
            min * 1e3,
            med * 1e3,
            p90 * 1e3,
            max * 1e3
        );
    }
    if std::env::var("NDNPY_OVERWRITE_RAW").is_ok_and(|v| v == "1") {
        for (name, (times, _)) in &rows_out {
            let ms: Vec<String> = times.iter().map(|t| format!("{:.0}", t * 1e3)).collect();
            println!("{name}: {}", ms.join(" "));
        }
    }
}
