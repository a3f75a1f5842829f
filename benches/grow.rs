//! Growing, streaming and range-reading `.npy` files: a plain timing program
//! (no criterion: the cases are few, long and need their own process for
//! peak memory).
//!
//! ```text
//! cargo bench -p ndnpy-bench --bench grow -- append   # 1000 appends of 1 MiB vs File::write_all
//! cargo bench -p ndnpy-bench --bench grow -- range    # read_range of 1000 rows of a 2 GiB file
//! cargo bench -p ndnpy-bench --bench grow -- stream   # 4 GiB through NpyWriter, peak RSS
//! ```
//! Without a mode, all three run. Files go to `NDNPY_BENCH_DIR` (see
//! `benches/common/mod.rs`) and are deleted at the end. `NDNPY_GROW_RANGE_MIB`
//! (default 2048) and `NDNPY_GROW_STREAM_MIB` (default 4096) set the sizes;
//! `scripts/bench_grow_numpy.py` times `npy-append-array` on the same
//! appends.

mod common;

use common::{bench_dir, env_usize, sync_all};
use ndarray::Array2;
use ndnpy::{NpyFile, NpyWriter, Order, WriteNpy};
use std::fs::File;
use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// Columns of the `f32` arrays: a typical embedding width.
const COLS: usize = 384;

fn main() {
    let modes: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let all = modes.is_empty();
    let dir = bench_dir();
    if all || modes.iter().any(|m| m == "append") {
        append(&dir);
    }
    if all || modes.iter().any(|m| m == "range") {
        range(&dir);
    }
    if all || modes.iter().any(|m| m == "stream") {
        stream(&dir);
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// 1000 appends of a 1 MiB block (1024 rows of 256 `f32`), against writing
/// the same bytes with `File::write_all` in the same loop. Each run starts
/// from a fresh file of one block and a `sync`; runs alternate.
fn append(dir: &Path) {
    const BLOCKS: usize = 1000;
    let block = Array2::from_shape_fn((1024, 256), |(i, j)| (i * 256 + j) as f32);
    let bytes: &[u8] = bytemuck::cast_slice(block.as_slice().unwrap());
    assert_eq!(bytes.len(), 1 << 20);
    let path = dir.join("grow_append.npy");
    let raw = dir.join("grow_append.raw");
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for _ in 0..env_usize("NDNPY_GROW_APPEND_RUNS", 15) {
        let _ = std::fs::remove_file(&path);
        block.write_npy(&path).unwrap();
        sync_all();
        let start = Instant::now();
        let mut f = NpyFile::open_append(&path).unwrap();
        for _ in 0..BLOCKS {
            f.append(&block).unwrap();
        }
        drop(f);
        ours.push(start.elapsed());

        let _ = std::fs::remove_file(&raw);
        std::fs::write(&raw, bytes).unwrap();
        sync_all();
        let start = Instant::now();
        let mut f = std::fs::OpenOptions::new().append(true).open(&raw).unwrap();
        for _ in 0..BLOCKS {
            f.write_all(bytes).unwrap();
        }
        drop(f);
        base.push(start.elapsed());
    }
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        128 + (BLOCKS as u64 + 1) * (1 << 20)
    );
    let (o, b) = (median(ours.clone()), median(base.clone()));
    let (omin, bmin) = (*ours.iter().min().unwrap(), *base.iter().min().unwrap());
    println!("append 1000 x 1 MiB ({} alternating runs)", ours.len());
    println!("  NpyFile::append      median {}  min {}", ms(o), ms(omin));
    println!(
        "  File::write_all      median {}  min {}   ratio of medians {:.2}, of minima {:.2}",
        ms(b),
        ms(bmin),
        o.as_secs_f64() / b.as_secs_f64(),
        omin.as_secs_f64() / bmin.as_secs_f64()
    );
    println!(
        "  all runs ours: {:?}",
        ours.iter().map(|d| ms(*d)).collect::<Vec<_>>()
    );
    println!(
        "  all runs base: {:?}",
        base.iter().map(|d| ms(*d)).collect::<Vec<_>>()
    );
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_file(&raw).unwrap();
}

/// Writes an `f32` file of about `mib` MiB with `NpyWriter`, rows of COLS,
/// returning the row count and the time taken.
fn write_big(path: &Path, mib: usize) -> (usize, Duration) {
    const BLOCK_ROWS: usize = 1024;
    let rows = (mib << 20) / (COLS * 4) / BLOCK_ROWS * BLOCK_ROWS;
    let mut block = Array2::<f32>::zeros((BLOCK_ROWS, COLS));
    let start = Instant::now();
    let mut w = NpyWriter::<f32>::create(path, &[COLS], Order::C).unwrap();
    for b in 0..rows / BLOCK_ROWS {
        // Row r holds r in every column.
        for (i, mut row) in block.outer_iter_mut().enumerate() {
            row.fill((b * BLOCK_ROWS + i) as f32);
        }
        w.write(&block).unwrap();
    }
    w.finish().unwrap();
    (rows, start.elapsed())
}

/// `read_range` of 1000 rows at random positions of a warm 2 GiB file,
/// against `pread` of the same bytes into a fresh buffer.
fn range(dir: &Path) {
    const ROWS: usize = 1000;
    const READS: usize = 2000;
    let mib = env_usize("NDNPY_GROW_RANGE_MIB", 2048);
    let path = dir.join("grow_range.npy");
    let (rows, _) = write_big(&path, mib);
    // Warm the page cache.
    let _ = black_box(std::fs::read(&path).unwrap().len());
    let f = NpyFile::open(&path).unwrap();
    assert_eq!(f.len(), rows);
    let file = File::open(&path).unwrap();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        // xorshift: a fixed sequence of starts.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % (rows - ROWS) as u64) as usize
    };
    // Each method reads its own random rows, and the methods take turns at
    // going first, so none finds rows another just pulled into the CPU cache.
    let mut times: [Vec<Duration>; 3] = Default::default();
    for i in 0..READS {
        for k in 0..3 {
            let method = (i + k) % 3;
            let s = next();
            let start = Instant::now();
            match method {
                0 => {
                    let a = f.read_range::<f32, ndarray::Ix2>(s..s + ROWS).unwrap();
                    times[0].push(start.elapsed());
                    assert_eq!(a[[ROWS - 1, COLS - 1]], (s + ROWS - 1) as f32);
                }
                1 => {
                    let a = NpyFile::open(&path)
                        .unwrap()
                        .read_range::<f32, ndarray::Ix2>(s..s + ROWS)
                        .unwrap();
                    times[1].push(start.elapsed());
                    black_box(a);
                }
                _ => {
                    let mut buf = vec![0u8; ROWS * COLS * 4];
                    std::os::unix::fs::FileExt::read_exact_at(
                        &file,
                        &mut buf,
                        f.data_offset() + (s * COLS * 4) as u64,
                    )
                    .unwrap();
                    times[2].push(start.elapsed());
                    black_box(buf);
                }
            }
        }
    }
    let [ours, opened, base] = times;
    let show = |name: &str, mut v: Vec<Duration>| {
        v.sort();
        let q = |p: f64| v[((v.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e6;
        println!(
            "  {name:<28} min {:>6.0}  p50 {:>6.0}  p90 {:>6.0}  p99 {:>6.0}  max {:>6.0} µs",
            q(0.0),
            q(0.5),
            q(0.9),
            q(0.99),
            q(1.0)
        );
    };
    println!(
        "read_range of {ROWS} rows x {COLS} f32 ({:.2} MiB) from a {} MiB file, {READS} random starts, warm",
        (ROWS * COLS * 4) as f64 / (1 << 20) as f64,
        std::fs::metadata(&path).unwrap().len() >> 20
    );
    show("NpyFile::read_range", ours);
    show("open + read_range", opened);
    show("pread into a zeroed Vec", base);
    drop(f);
    std::fs::remove_file(&path).unwrap();
}

/// Streams `NDNPY_GROW_STREAM_MIB` (default 4096) MiB through `NpyWriter`
/// in blocks of 1024 rows, reporting time and the process's peak RSS
/// (`VmHWM`, which starts afresh at `exec`), against writing the same
/// blocks with `File::write_all` in the same loop.
fn stream(dir: &Path) {
    let mib = env_usize("NDNPY_GROW_STREAM_MIB", 4096);
    let path = dir.join("grow_stream.npy");
    let raw = dir.join("grow_stream.raw");
    let before = peak_rss_kib();
    sync_all();
    let (rows, took) = write_big(&path, mib);
    let after = peak_rss_kib();
    let len = std::fs::metadata(&path).unwrap().len();
    let f = NpyFile::open(&path).unwrap();
    assert_eq!(f.len(), rows);
    let last = f.read_range::<f32, ndarray::Ix2>(rows - 1..rows).unwrap();
    assert_eq!(last[[0, 0]], (rows - 1) as f32);
    drop(f);
    std::fs::remove_file(&path).unwrap();

    sync_all();
    let mut block = Array2::<f32>::zeros((1024, COLS));
    let start = Instant::now();
    let mut out = File::create(&raw).unwrap();
    for b in 0..rows / 1024 {
        for (i, mut row) in block.outer_iter_mut().enumerate() {
            row.fill((b * 1024 + i) as f32);
        }
        out.write_all(bytemuck::cast_slice(block.as_slice().unwrap()))
            .unwrap();
    }
    drop(out);
    let base = start.elapsed();
    std::fs::remove_file(&raw).unwrap();

    println!(
        "stream {} MiB ({rows} rows x {COLS} f32, blocks of 1024 rows)",
        len >> 20
    );
    println!(
        "  NpyWriter         {} ({:.2} GiB/s)",
        ms(took),
        len as f64 / took.as_secs_f64() / (1u64 << 30) as f64
    );
    println!(
        "  File::write_all   {} ({:.2} GiB/s)",
        ms(base),
        len as f64 / base.as_secs_f64() / (1u64 << 30) as f64
    );
    println!(
        "  peak RSS (VmHWM) after NpyWriter: {:.1} MiB (before: {:.1} MiB)",
        after as f64 / 1024.0,
        before as f64 / 1024.0
    );
}

/// The process's peak resident set (`VmHWM` in `/proc/self/status`), KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}
