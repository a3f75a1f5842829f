//! What `RemoteNpy::read` holds, what a dropped or failed writer leaves,
//! what a failed first request means, and how an object without an ETag is
//! pinned: bounds and decisions checked by counting, never by timing.

mod common;

use common::{Aborts, AbortsStore, Fault, NoETag, Wrapped};
use futures::FutureExt;
use ndarray::{Array, Array2, Array3, Dimension, Ix2, ShapeBuilder};
use ndnpy::{
    dtype::DType, dtype::Header, dtype::Version, types::FixedBytes, types::LayoutElement, Order,
    WriteNpy,
};
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

/// A `.npy` file of `descr` and `shape` whose data is `data`, as stored.
fn npy_file(descr: &str, shape: &[usize], fortran_order: bool, data: &[u8]) -> Vec<u8> {
    let header = Header {
        dtype: DType::parse(descr).unwrap(),
        shape: shape.to_vec(),
        fortran_order,
        version: Version::V1,
    };
    let mut file = header.to_bytes().unwrap();
    file.extend_from_slice(data);
    file
}

/// Reads `file` with chunks of 64 KiB, two GETs at a time, and checks the
/// values and the bound on what was held (256 KiB beside the output); then
/// again with bodies that arrive in pieces of 999 bytes, which end inside
/// elements and are gathered into one buffer per chunk.
async fn read_in_chunks<T, D>(file: Vec<u8>, expected: &Array<T, D>)
where
    T: LayoutElement + PartialEq + std::fmt::Debug,
    D: Dimension,
{
    let store = Wrapped::new(Arc::new(InMemory::new()));
    let at = put(&store, "r.npy", file).await;
    for fault in [Fault::None, Fault::Pieces(1, 999)] {
        store.with_fault(fault);
        let held = Arc::new(Held::default());
        let config = Config::default()
            .chunk_size(64 << 10)
            .concurrency(2)
            .held(held.clone());
        let npy = RemoteNpy::open_with(&at, config).await.unwrap();
        let back = npy.read::<T, D>().await.unwrap();
        assert_eq!(&back, expected);
        assert_eq!(back.is_standard_layout(), !npy.header().fortran_order);
        assert_eq!(held.now(), 0);
        let bound = 2 * 2 * (64 << 10);
        assert!(held.peak() > 0);
        assert!(
            held.peak() <= bound,
            "{} bytes held at once, more than {bound}",
            held.peak()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_longer_than_a_chunk_are_read_in_chunks() {
    // The shape of the review's (2**27, 2) Fortran array, scaled down: two
    // rows (columns) of 512 KiB against chunks of 64 KiB. A GET per row
    // would hold both rows, 1 MiB, at once. Big-endian, so every element
    // is swapped on its way into the output.
    let n = 1 << 16;
    let a = Array2::from_shape_fn((n, 2).f(), |(i, j)| (i * 2 + j) as f64 + 0.5);
    let data: Vec<u8> = a.t().iter().flat_map(|x| x.to_be_bytes()).collect();
    read_in_chunks(npy_file(">f8", &[n, 2], true, &data), &a).await;

    // C order, rows of 200 002 bytes: chunks of whole elements that start
    // and end inside rows.
    let a = Array2::from_shape_fn((3, 100_001), |(i, j)| (i * 7 + j) as u16);
    let data: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
    read_in_chunks(npy_file("<u2", &[3, 100_001], false, &data), &a).await;

    // Elements of 3 bytes, which no chunk of 64 KiB holds a whole number
    // of: every chunk ends on an element's end, none splits one.
    let a = Array3::from_shape_fn((2, 3, 40_000), |(i, j, k)| {
        FixedBytes::new([i as u8, j as u8, k as u8])
    });
    let data: Vec<u8> = a.iter().flat_map(|x| *x.as_bytes()).collect();
    read_in_chunks(npy_file("|S3", &[2, 3, 40_000], false, &data), &a).await;

    // bools stored as bytes other than 0 and 1 are normalised in every
    // chunk, as the library reads them from a file.
    let stored: Vec<u8> = (0..300_000u32).map(|i| (i % 3) as u8).collect();
    let a = Array2::from_shape_fn((2, 150_000).f(), |(i, j)| (j * 2 + i) % 3 != 0);
    read_in_chunks(npy_file("|b1", &[2, 150_000], true, &stored), &a).await;

    // A Fortran 3-D array of one row of 240 000 bytes.
    let a = Array3::from_shape_fn((200, 300, 1).f(), |(i, j, _)| (i * 300 + j) as i32);
    let data: Vec<u8> = a.t().iter().flat_map(|x| x.to_le_bytes()).collect();
    read_in_chunks(npy_file("<i4", &[200, 300, 1], true, &data), &a).await;
}

/// Makes `store` fail completions, part uploads, both or neither.
fn failing(store: &Arc<Aborts>, complete: bool, parts: bool) {
    store.fail_complete.store(complete, Ordering::SeqCst);
    store.fail_parts.store(parts, Ordering::SeqCst);
}

// A current-thread runtime: an abort only spawned on it cannot run before
// this test's task yields, so the counts read right after `finish` show
// whether `finish` itself waited for the abort.
#[tokio::test]
async fn a_failed_finish_has_aborted_its_upload_when_it_returns() {
    let store = Aborts::new();
    let at = multipart(&store, "w.npy");
    let config = Config::default().part_size(5 << 20);

    // The completion fails, one part uploaded before `finish`.
    let mut w = ndnpy_store::NpyWriter::<f32>::create_with(&at, &[1024], Order::C, config.clone())
        .await
        .unwrap();
    w.write(&rows(2048)).await.unwrap();
    failing(&store, true, false);
    assert!(w.finish().await.is_err());
    assert_eq!(store.aborts(), 1);

    // A part sent by `finish` (the header's) fails.
    failing(&store, false, false);
    let mut w = ndnpy_store::NpyWriter::<f32>::create_with(&at, &[1024], Order::C, config)
        .await
        .unwrap();
    w.write(&rows(16)).await.unwrap();
    failing(&store, false, true);
    assert!(w.finish().await.is_err());
    assert_eq!(store.aborts(), 2);

    // An archive whose completion fails.
    failing(&store, false, false);
    let npz = multipart(&store, "a.npz");
    let mut w = ndnpy_store::NpzWriter::create(&npz, false).unwrap();
    w.archive().add("x", &rows(8)).unwrap();
    failing(&store, true, false);
    assert!(w.finish().await.is_err());
    assert_eq!(store.aborts(), 3);

    // Nothing appeared, and no abort is left to run.
    for name in ["w.npy", "a.npz"] {
        let err = store.inner.head(&name.into()).await.unwrap_err();
        assert!(
            matches!(err, object_store::Error::NotFound { .. }),
            "{err:?}"
        );
    }
    tokio::task::yield_now().await;
    assert_eq!(store.aborts(), 3);
}

#[test]
fn a_failed_blocking_finish_has_aborted_its_upload_when_it_returns() {
    // A program that returns `finish`'s error from `main` exits right
    // after: the abort must have been sent by then.
    let store = Aborts::new();
    let at = multipart(&store, "w.npy");
    let mut w = blocking::NpyWriter::<f32>::create(&at, &[1024], Order::C).unwrap();
    w.write(&rows(16)).unwrap();
    failing(&store, true, false);
    assert!(w.finish().is_err());
    assert_eq!(store.aborts(), 1);

    let npz = multipart(&store, "a.npz");
    let mut w = blocking::NpzWriter::create(&npz, true).unwrap();
    w.archive().add("x", &rows(8)).unwrap();
    assert!(w.finish().is_err());
    assert_eq!(store.aborts(), 2);
}

#[tokio::test]
async fn an_object_without_an_etag_is_pinned_by_its_size_and_time() {
    let inner = Arc::new(InMemory::new());
    let store = NoETag::new(inner.clone());
    let at = Location::new(store.clone() as Arc<dyn ObjectStore>, "a.npy");
    let path = "a.npy".into();
    // 256 KiB: more than the first GET's 64 KiB, so reading needs more.
    let a = rows(64);
    let put = |array: Array2<f32>| {
        let inner = inner.clone();
        async move {
            inner
                .put(&"a.npy".into(), array.to_npy_bytes().unwrap().into())
                .await
                .unwrap()
        }
    };

    // Replaced by a longer object while the store reports the same time:
    // only the size tells.
    put(a.clone()).await;
    *store.frozen.lock().unwrap() = Some(inner.head(&path).await.unwrap());
    let npy = RemoteNpy::open(&at).await.unwrap();
    assert_eq!(npy.read::<f32, Ix2>().await.unwrap(), a);
    put(rows(65) * 2.0).await;
    let err = npy.read::<f32, Ix2>().await.unwrap_err();
    assert!(matches!(err, StoreError::Changed { .. }), "{err:?}");
    let err = npy.read_range::<f32, Ix2>(60..64).await.unwrap_err();
    assert!(matches!(err, StoreError::Changed { .. }), "{err:?}");

    // Replaced by one of the same size: only the time tells.
    *store.frozen.lock().unwrap() = None;
    put(a.clone()).await;
    let first = inner.head(&path).await.unwrap();
    let npy = RemoteNpy::open(&at).await.unwrap();
    assert_eq!(npy.read::<f32, Ix2>().await.unwrap(), a);
    // Put until the store's clock has moved on (it almost always has).
    loop {
        put(&a * 3.0).await;
        let now = inner.head(&path).await.unwrap();
        assert_eq!(now.size, first.size);
        if now.last_modified != first.last_modified {
            break;
        }
    }
    let err = npy.read::<f32, Ix2>().await.unwrap_err();
    assert!(matches!(err, StoreError::Changed { .. }), "{err:?}");
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
        matches!(
            err,
            StoreError::Npy(ndnpy::Error::Header(
                ndnpy::error::HeaderError::BadMagic { .. }
            ))
        ),
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
