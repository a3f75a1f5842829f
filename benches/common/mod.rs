//! Shared set-up for the benchmarks: sizes and folder from the environment,
//! untimed `sync`, the one-copy baseline, timing loops that leave set-up and
//! drops out of the measurement.
//!
//! Environment:
//! - `NDNPY_BENCH_MIB`: size of the large arrays in MiB (default 256); a
//!   small value such as 8 gives a quick smoke run.
//! - `NDNPY_BENCH_DIR`: folder for the benchmark files (default
//!   `target/bench-data` in the crate, on the same disk as the build).
//! - `NDNPY_BENCH_SAMPLES`: criterion samples for the large cases (default 10).
#![allow(dead_code)]

use criterion::{BenchmarkGroup, SamplingMode};
use std::fs::File;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Reads an environment variable as a number, or `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, not {v:?}")),
        Err(_) => default,
    }
}

/// Size of the large arrays, in MiB.
pub fn big_mib() -> usize {
    env_usize("NDNPY_BENCH_MIB", 256).max(1)
}

/// The folder holding benchmark files (created if missing).
pub fn bench_dir() -> PathBuf {
    let dir = match std::env::var_os("NDNPY_BENCH_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data"),
    };
    std::fs::create_dir_all(&dir).expect("create the benchmark folder");
    dir
}

/// Settings for groups whose cases move hundreds of MiB: few samples, each
/// of one or a few calls, so the whole suite stays within minutes.
pub fn configure_large<M: criterion::measurement::Measurement>(g: &mut BenchmarkGroup<'_, M>) {
    g.sample_size(env_usize("NDNPY_BENCH_SAMPLES", 10).max(10));
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
}

/// Flushes all dirty data to disk, so that every timed write starts from the
/// same state instead of paying for the write-back of the previous one.
pub fn sync_all() {
    #[cfg(unix)]
    // SAFETY: `sync` takes no arguments and cannot fail.
    unsafe {
        libc::sync()
    };
}

/// Waits until no `ndnpy-release` thread is left: ndnpy closes a file it
/// replaced on such a thread (src/atomic.rs), and the next timed write must
/// not overlap the freeing of the previous file's blocks.
pub fn wait_for_background_release() {
    let busy = || {
        std::fs::read_dir("/proc/self/task")
            .into_iter()
            .flatten()
            .flatten()
            .any(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|name| name.trim() == "ndnpy-release")
            })
    };
    while busy() {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Times `iters` calls of `f`, each returning a value that is dropped after
/// the clock stops (a 256 MiB buffer takes milliseconds to unmap; NumPy's
/// timings do not include freeing the array either).
pub fn time_each<T>(iters: u64, mut f: impl FnMut() -> T) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let start = Instant::now();
        let out = black_box(f());
        total += start.elapsed();
        drop(out);
    }
    total
}

/// Whether a write benchmark starts each call with no file at the target or
/// with the previous call's file still there.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Target {
    New,
    Existing,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::New => "new",
            Target::Existing => "existing",
        }
    }
}

/// Times `iters` calls of `write(path)`. Before each call, untimed: the
/// target is removed (`Target::New`) or made to exist (`Target::Existing`,
/// written once by `write` itself), then all dirty data is synced.
pub fn time_writes(
    iters: u64,
    path: &Path,
    target: Target,
    mut write: impl FnMut(&Path),
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        match target {
            Target::New => {
                let _ = std::fs::remove_file(path);
            }
            Target::Existing => {
                if !path.exists() {
                    write(path);
                }
            }
        }
        wait_for_background_release();
        sync_all();
        let start = Instant::now();
        write(path);
        total += start.elapsed();
    }
    total
}

/// The one-copy baseline: the file's bytes read with `read(2)` into a fresh,
/// uninitialised buffer given transparent huge pages, as a program that
/// knew the layout in advance would do.
pub fn read_one_copy(path: &Path) -> Vec<u8> {
    let file = File::open(path).expect("open");
    let len = file.metadata().expect("metadata").len() as usize;
    let mut buf: Vec<u8> = Vec::with_capacity(len);
    advise_huge_pages(buf.as_mut_ptr(), len);
    let mut filled = 0;
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        while filled < len {
            let want = (len - filled).min(1 << 30);
            // SAFETY: the range lies in the unfilled spare capacity of `buf`.
            let n =
                unsafe { libc::read(file.as_raw_fd(), buf.as_mut_ptr().add(filled).cast(), want) };
            assert!(n > 0, "read failed or file shrank");
            filled += n as usize;
        }
    }
    #[cfg(not(unix))]
    {
        use std::io::Read;
        buf.resize(len, 0);
        (&file).read_exact(&mut buf).expect("read");
        filled = len;
    }
    // SAFETY: `read` initialised the first `filled == len` bytes.
    unsafe { buf.set_len(filled) };
    buf
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    const HUGE: usize = 2 << 20;
    let start = (ptr as usize).div_ceil(HUGE) * HUGE;
    let end = (ptr as usize + len) / HUGE * HUGE;
    if end > start {
        // SAFETY: the range lies inside the allocation; the advice changes
        // only how the kernel backs it.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}

/// A `.npy` preamble written by hand (so that the input files do not depend
/// on the writer under test): magic, version 1.0, header padded to 64 bytes.
pub fn preamble(descr: &str, fortran_order: bool, shape: &[usize]) -> Vec<u8> {
    let shape_text = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let order = if fortran_order { "True" } else { "False" };
    let mut text =
        format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape_text}, }}");
    while (10 + text.len() + 1) % 64 != 0 {
        text.push(' ');
    }
    text.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(text.len() as u16).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// Writes `parts` to `path` unless a file of that exact length is there.
pub fn ensure_file(path: &Path, parts: &[&[u8]]) {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    if std::fs::metadata(path).ok().map(|m| m.len() as usize) == Some(len) {
        return;
    }
    use std::io::Write;
    let mut f = std::io::BufWriter::new(File::create(path).expect("create input file"));
    for p in parts {
        f.write_all(p).expect("write input file");
    }
    f.flush().expect("flush input file");
}

/// "256 MiB" for labels.
pub fn mib_label(mib: usize) -> String {
    format!("{mib}MiB")
}
