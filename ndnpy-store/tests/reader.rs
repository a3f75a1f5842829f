//! The archive reader over ranged GETs reads any member in any order:
//! the end of one download is not the end of the object, empty body chunks
//! are skipped, and a short answer is an error.

mod common;

use common::{Fault, Wrapped};
use ndarray::{Array2, Ix2};
use ndnpy::NpzWriter;
use ndnpy_store::{Location, RemoteNpz};
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt};
use std::io::Cursor;
use std::sync::Arc;

async fn put(store: &Arc<Wrapped>, name: &str, bytes: Vec<u8>) -> Location {
    store.inner.put(&name.into(), bytes.into()).await.unwrap();
    store.take();
    Location::new(store.clone() as Arc<dyn ObjectStore>, name)
}

fn memory() -> Arc<Wrapped> {
    Wrapped::new(Arc::new(InMemory::new()))
}

/// Values that deflate barely shrinks (a 64-bit LCG's high bits).
fn noise(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    Array2::from_shape_fn((rows, cols), |_| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 11) as f64
    })
}

fn archive(members: &[(&str, Array2<f64>)], compressed: bool) -> Vec<u8> {
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(if compressed {
        ndnpy::npz::Codec::deflate()
    } else {
        ndnpy::npz::Codec::Stored
    });
    for (name, a) in members {
        w.add(name, a).unwrap();
    }
    w.finish_into_inner().unwrap().into_inner()
}

#[tokio::test]
async fn stored_members_read_one_after_another_and_again() {
    // Three members of 3 MiB: no local header but the last one's sits in
    // the cached tail.
    let members: Vec<(&str, Array2<f64>)> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, name)| (*name, noise(3 << 10, 128, i as u64)))
        .collect();
    let store = memory();
    let at = put(&store, "s.npz", archive(&members, false)).await;
    let npz = RemoteNpz::open(&at).await.unwrap();
    for name in ["a", "b", "c", "a", "c", "b"] {
        let want = &members.iter().find(|(n, _)| *n == name).unwrap().1;
        assert_eq!(&npz.read::<f64, Ix2>(name).await.unwrap(), want, "{name}");
        assert_eq!(npz.header(name).await.unwrap().shape, [3 << 10, 128]);
    }
}

#[tokio::test]
async fn header_of_a_large_member_ndnpy_compressed() {
    // Over 4 MiB: the writer deflates it in pieces and records their table,
    // and the header read follows the table past the first 64 KiB.
    let big = noise(5 << 10, 128, 7);
    let members = vec![("big", big.clone()), ("small", noise(4, 4, 8))];
    let store = memory();
    let at = put(&store, "c.npz", archive(&members, true)).await;
    let npz = RemoteNpz::open(&at).await.unwrap();
    assert_eq!(npz.header("big").await.unwrap().shape, [5 << 10, 128]);
    assert_eq!(npz.read::<f64, Ix2>("big").await.unwrap(), big);
    assert_eq!(npz.header("big").await.unwrap().shape, [5 << 10, 128]);
    assert_eq!(npz.read::<f64, Ix2>("small").await.unwrap(), members[1].1);
}

#[tokio::test]
async fn empty_body_chunks_are_skipped() {
    let members: Vec<(&str, Array2<f64>)> =
        vec![("a", noise(1 << 10, 128, 1)), ("b", noise(1 << 10, 128, 2))];
    for compressed in [false, true] {
        let store = memory();
        let at = put(&store, "e.npz", archive(&members, compressed)).await;
        let npz = RemoteNpz::open(&at).await.unwrap();
        store.with_fault(Fault::EmptyChunks(1));
        for (name, want) in &members {
            assert_eq!(&npz.read::<f64, Ix2>(name).await.unwrap(), want, "{name}");
        }
        // From the first request on, too.
        store.take();
        let npz = RemoteNpz::open(&at).await.unwrap();
        assert_eq!(npz.read::<f64, Ix2>("a").await.unwrap(), members[0].1);
        store.with_fault(Fault::None);
    }
}

#[tokio::test]
async fn a_short_member_body_is_an_error_not_a_value() {
    let members: Vec<(&str, Array2<f64>)> =
        vec![("a", noise(1 << 10, 128, 1)), ("b", noise(1 << 10, 128, 2))];
    for compressed in [false, true] {
        let store = memory();
        let at = put(&store, "t.npz", archive(&members, compressed)).await;
        let npz = RemoteNpz::open(&at).await.unwrap();
        // The next body cut short (GETs are counted from here).
        store.take();
        store.with_fault(Fault::Short(1, 1000));
        let err = npz.read::<f64, Ix2>("a").await.unwrap_err();
        assert!(
            err.to_string().contains("asked for bytes"),
            "{compressed}: {err}"
        );
        store.with_fault(Fault::None);
        // The reader recovers: the next read asks again.
        assert_eq!(npz.read::<f64, Ix2>("a").await.unwrap(), members[0].1);
        assert_eq!(npz.read::<f64, Ix2>("b").await.unwrap(), members[1].1);
    }
}
