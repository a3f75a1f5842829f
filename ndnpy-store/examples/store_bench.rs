//! Requests, bytes, time and memory of the remote readers and writers:
//! `cargo run --release -p ndnpy-store --example store_bench [MiB]`
//! (default 1024) against an in-memory store (counted) and a throttled one
//! (20 ms per request, about 100 MB/s per stream); with `--url URL ROWS`,
//! `read_range` of ROWS rows at row 1000 of a remote `.npy` (for
//! `scripts/bench_s3.py`). Numbers in BENCHMARKS.md, "Object storage".

#[path = "../tests/common/mod.rs"]
mod common;

use async_trait::async_trait;
use common::Wrapped;
use ndarray::{Array2, Ix2};
use ndnpy::WriteNpy;
use ndnpy_store::object_store::memory::InMemory;
use ndnpy_store::object_store::multipart::{MultipartStore, PartId};
use ndnpy_store::object_store::path::Path;
use ndnpy_store::object_store::throttle::{ThrottleConfig, ThrottledStore};
use ndnpy_store::object_store::{MultipartId, ObjectStore, ObjectStoreExt, PutPayload, PutResult};
use ndnpy_store::{Config, Location, RemoteNpy};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A part-by-index upload target that keeps nothing (to measure the
/// writer's own memory).
#[derive(Debug, Default)]
struct Discard {
    bytes: AtomicU64,
}

#[async_trait]
impl MultipartStore for Discard {
    async fn create_multipart(&self, _: &Path) -> ndnpy_store::object_store::Result<MultipartId> {
        Ok("upload".into())
    }

    async fn put_part(
        &self,
        _: &Path,
        _: &MultipartId,
        part_idx: usize,
        data: PutPayload,
    ) -> ndnpy_store::object_store::Result<PartId> {
        self.bytes
            .fetch_add(data.content_length() as u64, Ordering::Relaxed);
        Ok(PartId {
            content_id: part_idx.to_string(),
        })
    }

    async fn complete_multipart(
        &self,
        _: &Path,
        _: &MultipartId,
        _: Vec<PartId>,
    ) -> ndnpy_store::object_store::Result<PutResult> {
        Ok(PutResult {
            e_tag: None,
            version: None,
            extensions: Default::default(),
        })
    }

    async fn abort_multipart(
        &self,
        _: &Path,
        _: &MultipartId,
    ) -> ndnpy_store::object_store::Result<()> {
        Ok(())
    }
}

/// Peak resident memory so far (Linux), in MiB.
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

async fn remote_range(url: &str, rows: usize, first: usize) {
    let at = Location::parse(url).unwrap();
    let counted = Wrapped::new(at.store.clone());
    let at = Location::new(counted.clone() as Arc<dyn ObjectStore>, at.path);
    for round in 0..5 {
        counted.take();
        let start = Instant::now();
        let npy = RemoteNpy::open(&at).await.unwrap();
        let t_open = start.elapsed();
        let opened = counted.take();
        let start = Instant::now();
        let part = npy
            .read_range::<f32, Ix2>(first..first + rows)
            .await
            .unwrap();
        let t_range = start.elapsed();
        let ranged = counted.take();
        assert_eq!(part.nrows(), rows);
        println!(
            "round {round}: open {} GET {} B {:.1} ms; read_range {} GET {} B {:.1} ms",
            opened.0,
            opened.1,
            t_open.as_secs_f64() * 1e3,
            ranged.0,
            ranged.1,
            t_range.as_secs_f64() * 1e3
        );
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--url") {
        let rows = args.get(3).map_or(1000, |r| r.parse().unwrap());
        let first = args.get(4).map_or(1000, |r| r.parse().unwrap());
        return remote_range(&args[2], rows, first).await;
    }
    let mib: usize = args.get(1).map_or(1024, |a| a.parse().unwrap());
    let cols = 256;
    let rows = mib * (1 << 20) / (cols * 4);
    let a = Array2::<f32>::from_shape_fn((rows, cols), |(i, j)| (i ^ j) as f32);

    // Writing by multipart upload: the writer's memory beyond the array.
    let before = peak_mib();
    let discard = Arc::new(Discard::default());
    let at = Location::new(Arc::new(InMemory::new()) as Arc<dyn ObjectStore>, "w.npy")
        .with_multipart(discard.clone());
    let start = Instant::now();
    ndnpy_store::write_npy(&at, &a).await.unwrap();
    println!(
        "write_npy {mib} MiB by parts: {:?}, {} bytes uploaded, peak memory {:.0} MiB -> {:.0} MiB (+{:.0} MiB)",
        start.elapsed(),
        discard.bytes.load(Ordering::Relaxed),
        before,
        peak_mib(),
        peak_mib() - before
    );

    let bytes = a.to_npy_bytes().unwrap();
    let memory = Arc::new(InMemory::new());
    memory.put(&"a.npy".into(), bytes.into()).await.unwrap();
    let counted = Wrapped::new(memory.clone());
    let at = Location::new(counted.clone() as Arc<dyn ObjectStore>, "a.npy");
    let npy = RemoteNpy::open(&at).await.unwrap();
    let (gets, got) = counted.take();
    println!("open (header): {gets} GET, {got} bytes");
    let start = Instant::now();
    let part = npy.read_range::<f32, Ix2>(1000..2000).await.unwrap();
    let t = start.elapsed();
    let (gets, got) = counted.take();
    println!(
        "read_range 1000 rows: {gets} GET, {got} bytes ({} wanted), {t:?}",
        1000 * cols * 4
    );
    assert_eq!(part[[0, 0]], a[[1000, 0]]);
    let start = Instant::now();
    let back = npy.read::<f32, Ix2>().await.unwrap();
    let t = start.elapsed();
    let (gets, got) = counted.take();
    println!("read() unthrottled: {gets} GETs, {got} bytes, {t:?}");
    assert_eq!(back, a);
    drop(back);

    // Throttled: 20 ms per request, 10 ns per byte (about 100 MB/s per
    // stream).
    let throttle = ThrottleConfig {
        wait_get_per_call: Duration::from_millis(20),
        wait_get_per_byte: Duration::from_nanos(10),
        ..ThrottleConfig::default()
    };
    let slow: Arc<dyn ObjectStore> = Arc::new(ThrottledStore::new(memory.clone(), throttle));
    let at = Location::new(slow.clone(), "a.npy");
    let sequential = {
        let start = Instant::now();
        let got = slow
            .get(&"a.npy".into())
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(got.len() as u64, npy.object_size());
        start.elapsed()
    };
    println!("one sequential GET of {mib} MiB: {sequential:?}");
    for (concurrency, chunk) in [(8usize, 8u64 << 20), (8, 4 << 20), (16, 8 << 20)] {
        let config = Config::default().concurrency(concurrency).chunk_size(chunk);
        let npy = RemoteNpy::open_with(&at, config).await.unwrap();
        let mut times = Vec::new();
        for _ in 0..3 {
            let start = Instant::now();
            let back = npy.read::<f32, Ix2>().await.unwrap();
            times.push(start.elapsed());
            assert_eq!(back, a);
        }
        times.sort();
        println!(
            "read(): {concurrency} in flight, {} MiB chunks: median {:?} of 3 (min {:?}, max {:?}), {:.1}x the sequential GET",
            chunk >> 20,
            times[1],
            times[0],
            times[2],
            sequential.as_secs_f64() / times[1].as_secs_f64()
        );
    }
}
