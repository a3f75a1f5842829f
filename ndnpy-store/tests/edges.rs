//! What `RemoteNpy::read` holds, what a dropped writer leaves, and what a
//! failed first request means: bounds and decisions checked by counting,
//! never by timing.

mod common;

use common::{Aborts, AbortsStore, Fault, Wrapped};
use futures::FutureExt;
use ndarray::{Array2, Ix2};
use ndnpy::{Order, WriteNpy};
use ndnpy_store::{blocking, Config, Held, Location, RemoteNpy, StoreError};
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt};
use std::sync::atomic::Ordering;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_holds_at_most_twice_the_concurrency_in_chunks() {
    // 16 MiB of rows of 1 KiB, in chunks of 64 KiB, 4 GETs at a time:
    // copying a chunk into the output takes longer than a GET from memory,
    // so without a bound finished GETs pile up.
    let a = Array2::from_shape_fn((16 << 10, 128), |(i, j)| (i * 128 + j) as f64);
    let store = Arc::new(InMemory::new());
    store
        .put(&"a.npy".into(), a.to_npy_bytes().unwrap().into())
        .await
        .unwrap();
    let held = Arc::new(Held::default());
    let config = Config::default()
        .chunk_size(64 << 10)
        .concurrency(4)
        .held(held.clone());
    let at = Location::new(store as Arc<dyn ObjectStore>, "a.npy");
    let npy = RemoteNpy::open_with(&at, config).await.unwrap();
    for _ in 0..3 {
        assert_eq!(npy.read::<f64, Ix2>().await.unwrap(), a);
        assert_eq!(held.now(), 0);
    }
    let bound = 2 * 4 * (64 << 10);
    assert!(held.peak() > 0);
    assert!(
        held.peak() <= bound,
        "{} bytes held at once, more than {bound}",
        held.peak()
    );
}

fn multipart(store: &Arc<Aborts>, name: &str) -> Location {
    let both = Arc::new(AbortsStore(store.clone()));
    Location::new(both.clone() as Arc<dyn ObjectStore>, name).with_multipart(both)
}

fn rows(n: usize) -> Array2<f32> {
    Array2::from_shape_fn((n, 1024), |(i, j)| (i + j) as f32)
}

#[test]
fn a_dropped_blocking_writer_aborts_its_upload() {
    // No runtime here: the blocking wrappers are dropped outside one.
    let store = Aborts::new();
    let at = multipart(&store, "w.npy");
    let config = Config::default().part_size(5 << 20);
    let mut w =
        blocking::NpyWriter::<f32>::create_with(&at, &[1024], Order::C, config.clone()).unwrap();
    // 8 MiB of rows: one part is uploaded before the drop.
    w.write(&rows(2048)).unwrap();
    assert_eq!(store.aborts(), 0);
    drop(w);
    assert_eq!(store.aborts(), 1);

    // Dropped before any part was sent: the upload exists all the same.
    let w = blocking::NpyWriter::<f32>::create_with(&at, &[1024], Order::C, config).unwrap();
    drop(w);
    assert_eq!(store.aborts(), 2);
    let finished = blocking::NpyWriter::<f32>::create(&at, &[1024], Order::C).unwrap();
    finished.finish().unwrap();
    assert_eq!(store.aborts(), 2);
}

#[tokio::test]
async fn a_dropped_async_writer_aborts_its_upload() {
    let store = Aborts::new();
    let at = multipart(&store, "w.npy");
    let mut w = ndnpy_store::NpyWriter::<f32>::create(&at, &[1024], Order::C)
        .await
        .unwrap();
    w.write(&rows(16)).await.unwrap();
    drop(w);
    // Spawned on this runtime: wait for it (a guard against a hang, not a
    // measure).
    tokio::time::timeout(std::time::Duration::from_secs(60), store.wait_for(1))
        .await
        .expect("the abort never ran");
    assert_eq!(store.aborts(), 1);
}

#[test]
fn a_cancelled_archive_upload_aborts() {
    // The archive goes up by put_multipart at finish; its future dropped
    // while parts are in flight (they never finish here) aborts the
    // upload, outside a runtime too.
    let store = Aborts::new();
    let at = multipart(&store, "a.npz");
    let mut w = ndnpy_store::NpzWriter::create(&at, false).unwrap();
    w.archive().add("x", &rows(8)).unwrap();
    store.hang.store(true, Ordering::SeqCst);
    assert!(w.finish().now_or_never().is_none());
    assert_eq!(store.aborts(), 1);
}

async fn put(store: &Arc<Wrapped>, name: &str, bytes: Vec<u8>) -> Location {
    store.inner.put(&name.into(), bytes.into()).await.unwrap();
    store.take();
    Location::new(store.clone() as Arc<dyn ObjectStore>, name)
}

#[tokio::test]
async fn a_416_in_an_error_message_is_not_an_empty_object() {
    let store = Wrapped::new(Arc::new(InMemory::new()));
    let a = rows(4096);
    let at = put(&store, "runs/416/x.npy", a.to_npy_bytes().unwrap()).await;
    store.with_fault(Fault::ErrorText(
        1,
        "GET https://bucket.s3.amazonaws.com/runs/416/x.npy: 503 Service Unavailable",
    ));
    let err = RemoteNpy::open(&at).await.unwrap_err();
    assert!(matches!(err, StoreError::Store(_)), "{err:?}");
    assert!(err.to_string().contains("503"), "{err}");
    // One GET of the first 64 KiB and one HEAD; never the whole object.
    assert_eq!(store.whole.load(Ordering::SeqCst), 0);
    assert_eq!(store.heads.load(Ordering::SeqCst), 1);
    assert_eq!(store.take(), (1, 0));

    // Errors that say what they are need no HEAD.
    let gone = Location::new(store.clone() as Arc<dyn ObjectStore>, "runs/416/none.npy");
    store.with_fault(Fault::None);
    let err = RemoteNpy::open(&gone).await.unwrap_err();
    assert!(
        matches!(err, StoreError::Store(object_store::Error::NotFound { .. })),
        "{err:?}"
    );
    assert_eq!(store.heads.load(Ordering::SeqCst), 1);

    // A really empty object opens (and is no .npy file).
    let empty = put(&store, "runs/416/empty.npy", Vec::new()).await;
    let err = RemoteNpy::open(&empty).await.unwrap_err();
    assert!(
        matches!(err, StoreError::Npy(ndnpy::Error::BadMagic { .. })),
        "{err:?}"
    );
    assert_eq!(store.whole.load(Ordering::SeqCst), 0);
    let reader = tokio::task::spawn_blocking(move || blocking::ObjectReader::open(&empty))
        .await
        .unwrap()
        .unwrap();
    assert!(reader.is_empty());
    assert_eq!(reader.head(), b"");
    assert_eq!(store.whole.load(Ordering::SeqCst), 0);

    // An empty local file, whose store refuses the range in its own words.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("e.npy"), b"").unwrap();
    let local =
        Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let at = Location::new(local as Arc<dyn ObjectStore>, "e.npy");
    let reader = tokio::task::spawn_blocking(move || blocking::ObjectReader::open(&at))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reader.len(), 0);
}
