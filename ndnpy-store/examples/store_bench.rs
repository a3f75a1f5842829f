//! Requests, bytes and time of the remote readers, against an in-memory
//! store (counted) and a throttled one (20 ms per request, a per-stream
//! bandwidth): `cargo run --release -p ndnpy-store --example store_bench
//! [MiB]` (default 1024). Numbers in BENCHMARKS.md, "Object storage".

use ndarray::{Array2, Ix2};
use ndnpy::WriteNpy;
use ndnpy_store::object_store::memory::InMemory;
use ndnpy_store::object_store::throttle::{ThrottleConfig, ThrottledStore};
use ndnpy_store::object_store::{ObjectStore, ObjectStoreExt};
use ndnpy_store::{Config, Location, RemoteNpy};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let mib: usize = std::env::args().nth(1).map_or(1024, |a| a.parse().unwrap());
    let cols = 256;
    let rows = mib * (1 << 20) / (cols * 4);
    let a = Array2::<f32>::from_shape_fn((rows, cols), |(i, j)| (i ^ j) as f32);
    let bytes = a.to_npy_bytes().unwrap();
    let memory = Arc::new(InMemory::new());
    memory.put(&"a.npy".into(), bytes.into()).await.unwrap();

    // Counted requests and bytes, through the progress hook (body bytes).
    let body = Arc::new(AtomicU64::new(0));
    let seen = body.clone();
    let config = Config::default().progress(Arc::new(move |n| {
        seen.fetch_add(n, Ordering::Relaxed);
    }));
    let at = Location::new(memory.clone() as Arc<dyn ObjectStore>, "a.npy");
    let npy = RemoteNpy::open_with(&at, config.clone()).await.unwrap();
    println!(
        "open (header): {} body bytes",
        body.swap(0, Ordering::Relaxed)
    );
    let start = Instant::now();
    let part = npy.read_range::<f32, Ix2>(1000..2000).await.unwrap();
    println!(
        "read_range 1000 rows: {} body bytes ({} wanted), {:?}",
        body.swap(0, Ordering::Relaxed),
        1000 * cols * 4,
        start.elapsed()
    );
    assert_eq!(part[[0, 0]], a[[1000, 0]]);

    let start = Instant::now();
    let back = npy.read::<f32, Ix2>().await.unwrap();
    println!("read() unthrottled: {:?}", start.elapsed());
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
    for (concurrency, chunk) in [(8usize, 8u64 << 20), (16, 8 << 20), (8, 4 << 20)] {
        let config = Config::default().concurrency(concurrency).chunk_size(chunk);
        let npy = RemoteNpy::open_with(&at, config).await.unwrap();
        let start = Instant::now();
        let back = npy.read::<f32, Ix2>().await.unwrap();
        let t = start.elapsed();
        assert_eq!(back, a);
        println!(
            "read(): {concurrency} in flight, {} MiB chunks: {t:?} ({:.1}x the sequential GET)",
            chunk >> 20,
            sequential.as_secs_f64() / t.as_secs_f64()
        );
    }
}
