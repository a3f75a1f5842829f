//! Reading every member of an `.npz` with many small members (issue 13):
//! 65 536 arrays written by `np.savez`, read one by one by name with
//! `NpzReader::read_any`, read in archive order with `NpzReader::arrays`,
//! and by NumPy's `[z[k] for k in z.files]` (scripts/bench_many_members.py),
//! all in one run on the same file in the page cache. Each timed run
//! includes opening the archive.
//!
//! A plain timing harness (each run lasts from milliseconds to seconds, so
//! criterion's sampling adds nothing): prints min, median, p90 and max per
//! case. Environment: `NDNPY_BENCH_MEMBERS` (default 65536),
//! `NDNPY_BENCH_REPEATS` (runs per case, default 10; NumPy gets half as
//! many, at least 3), `NDNPY_BENCH_DIR` (see benches/common/mod.rs).
//! Run under `flock /tmp/ndnpy-heavy.lock` on a shared machine:
//!
//! ```text
//! flock /tmp/ndnpy-heavy.lock cargo bench -p ndnpy-bench --bench many_members
//! ```

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn summary(name: &str, runs: &mut [f64]) {
    runs.sort_by(f64::total_cmp);
    let at = |q: f64| runs[((runs.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name:<28} runs {:>3}  min {:>9.1} ms  median {:>9.1} ms  p90 {:>9.1} ms  max {:>9.1} ms",
        runs.len(),
        runs[0] * 1e3,
        at(0.5) * 1e3,
        at(0.9) * 1e3,
        runs[runs.len() - 1] * 1e3
    );
}

fn time_runs(repeats: usize, mut f: impl FnMut()) -> Vec<f64> {
    f(); // warm-up: page cache and allocator
    (0..repeats)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list` probes every bench target
    }
    let members = env_usize("NDNPY_BENCH_MEMBERS", 65536);
    let repeats = env_usize("NDNPY_BENCH_REPEATS", 10).max(1);
    let dir = match std::env::var_os("NDNPY_BENCH_DIR") {
        Some(d) => std::path::PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data"),
    };
    std::fs::create_dir_all(&dir).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/bench_many_members.py");
    let path = dir.join(format!("many_members_{members}.npz"));
    if !path.exists() {
        let status = Command::new("python3")
            .arg(&script)
            .args(["make"])
            .arg(&path)
            .args(["--members", &members.to_string()])
            .status()
            .expect("python3 with numpy makes the archive");
        assert!(status.success(), "np.savez failed");
    }
    println!(
        "{} members, {} bytes ({})",
        members,
        std::fs::metadata(&path).unwrap().len(),
        path.display()
    );

    let mut by_name = time_runs(repeats, || {
        let mut npz = ndnpy::NpzReader::open(&path).unwrap();
        let names = npz.names();
        for name in &names {
            std::hint::black_box(npz.read_any(name).unwrap());
        }
        assert_eq!(names.len(), members);
    });
    let mut in_order = time_runs(repeats, || {
        let mut npz = ndnpy::NpzReader::open(&path).unwrap();
        let mut n = 0;
        for (_, array) in npz.arrays() {
            std::hint::black_box(array.unwrap());
            n += 1;
        }
        assert_eq!(n, members);
    });
    let numpy_repeats = (repeats / 2).max(3);
    let output = Command::new("python3")
        .arg(&script)
        .args(["time"])
        .arg(&path)
        .args(["--repeats", &numpy_repeats.to_string()])
        .output()
        .expect("python3 with numpy times its loop");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let mut numpy: Vec<f64> = text
        .trim()
        .trim_matches(['[', ']'])
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect();
    summary("ndnpy read_any(name) loop", &mut by_name);
    summary("ndnpy arrays()", &mut in_order);
    summary("numpy [z[k] for k in z.files]", &mut numpy);
    let median = |v: &[f64]| v[(v.len() - 1) / 2];
    println!(
        "median ratios: numpy / read_any loop = {:.1}x, numpy / arrays() = {:.1}x",
        median(&numpy) / median(&by_name),
        median(&numpy) / median(&in_order)
    );
}
