//! `RemoteNpz` reads bzip2, LZMA and Zstandard members (feature
//! `zip-methods`) as the local reader does: Python's archives of every
//! method (fixtures/zip_methods) and ndnpy's Zstandard archives, whose
//! segments decode on every core over ranged GETs.

mod common;

use common::Wrapped;
use ndarray::{Array2, Ix2};
use ndnpy::{npz::Codec, npz::Compression, NpzReader, NpzWriter};
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

#[tokio::test]
async fn every_method_reads_as_locally() {
    let store = Wrapped::new(Arc::new(InMemory::new()));
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/zip_methods/valid");
    for file in ["mixed.npz", "bzip2.npz", "lzma_streamed.npz", "zstd.npz"] {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let mut local = NpzReader::new(Cursor::new(bytes.clone())).unwrap();
        let remote = RemoteNpz::open(&put(&store, file, bytes).await)
            .await
            .unwrap();
        assert_eq!(remote.names(), local.names(), "{file}");
        for name in local.names() {
            let want = local.read_any(&name).unwrap();
            assert_eq!(remote.read_any(&name).await.unwrap(), want, "{file}/{name}");
            let info = remote.member_info(&name).await.unwrap();
            assert_eq!(
                info.compression,
                local.member_info(&name).unwrap().compression
            );
        }
    }
}

#[tokio::test]
async fn ndnpy_zstd_archives_read_over_ranged_gets() {
    let big = Array2::from_shape_fn((3000, 500), |(i, j)| ((i * 31 + j * 7) % 977) as f64);
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(Codec::zstd());
    w.add("big", &big).unwrap();
    w.add("small", &ndarray::array![[1u8, 2], [3, 4]]).unwrap();
    let bytes = w.finish_into_inner().unwrap().into_inner();
    let store = Wrapped::new(Arc::new(InMemory::new()));
    let remote = RemoteNpz::open(&put(&store, "z.npz", bytes).await)
        .await
        .unwrap();
    assert_eq!(
        remote.member_info("big").await.unwrap().compression,
        Compression::Zstd
    );
    assert_eq!(remote.header("big").await.unwrap().shape, [3000, 500]);
    assert_eq!(remote.read::<f64, Ix2>("big").await.unwrap(), big);
    assert_eq!(
        remote.read::<u8, Ix2>("small").await.unwrap(),
        ndarray::array![[1u8, 2], [3, 4]]
    );
}
