//! Rows of compressed members over ranged GETs (`RemoteNpz::read_range`,
//! through the library's seek index), and every member at once
//! (`RemoteNpz::read_all`, read ahead on other cores): the same values as
//! the whole arrays, for NumPy-style and ndnpy-written archives.

use ndarray::{s, Array2, Ix2};
use ndnpy::{AnyArray, NpzWriter};
use ndnpy_store::{blocking, Location, RemoteNpz};
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt};
use std::io::Cursor;
use std::sync::Arc;

fn table(rows: usize, seed: usize) -> Array2<f64> {
    Array2::from_shape_fn((rows, 16), |(i, j)| {
        (((i * 16 + j) * (seed + 1)) as f64 * 1e-3).sin() + (i % 7) as f64
    })
}

/// As `np.savez_compressed` writes: one deflate stream per member. Made
/// from ndnpy's archive (whose pieces form one valid stream) by renaming
/// the piece table's extra field (id `nd`) in the central directory, so
/// that the reader does not know the pieces.
fn numpy_style(members: &[(&str, &Array2<f64>)]) -> Vec<u8> {
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    for (name, a) in members {
        w.add(name, *a).unwrap();
    }
    let mut bytes = w.finish_into_inner().unwrap().into_inner();
    let end = bytes.windows(4).rposition(|w| w == b"PK\x05\x06").unwrap();
    let cd = u32::from_le_bytes(bytes[end + 16..end + 20].try_into().unwrap()) as usize;
    let mut renamed = 0;
    for at in cd..end - 1 {
        if &bytes[at..at + 2] == b"nd" {
            bytes[at..at + 2].copy_from_slice(b"xx");
            renamed += 1;
        }
    }
    // "a" (12.8 MB) has a table; "b" (one piece) may too.
    assert!(renamed >= 1);
    bytes
}

async fn put(name: &str, bytes: Vec<u8>) -> Location {
    let store = Arc::new(InMemory::new());
    store.put(&name.into(), bytes.into()).await.unwrap();
    Location::new(store as Arc<dyn ObjectStore>, name)
}

#[tokio::test]
async fn rows_of_numpy_and_ndnpy_members() {
    let a = table(100_000, 1);
    let b = table(3_000, 2);
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    w.add("a", &a).unwrap();
    w.add("b", &b).unwrap();
    let ours = w.finish_into_inner().unwrap().into_inner();
    for (label, bytes) in [
        ("numpy", numpy_style(&[("a", &a), ("b", &b)])),
        ("ndnpy", ours),
    ] {
        let npz = RemoteNpz::open(&put("r.npz", bytes).await).await.unwrap();
        for (lo, hi) in [
            (60_000, 61_000),
            (10, 20),
            (99_990, 100_000),
            (59_000, 59_001),
        ] {
            let rows = npz.read_range::<f64, Ix2>("a", lo..hi).await.unwrap();
            assert_eq!(rows, a.slice(s![lo..hi, ..]), "{label} {lo}..{hi}");
        }
        let rows = npz.read_range::<f64, Ix2>("b", ..5).await.unwrap();
        assert_eq!(rows, b.slice(s![..5, ..]));
        assert!(npz.read_range::<f64, Ix2>("b", 0..3001).await.is_err());
        let all = npz.read_all().await.unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].1, AnyArray::F64(a.clone().into_dyn()));
        assert_eq!(all[1].1, AnyArray::F64(b.clone().into_dyn()));
    }
}

#[test]
fn the_blocking_api_reads_rows_too() {
    let a = table(20_000, 3);
    let at = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(put("rows.npz", numpy_style(&[("a", &a)])));
    let npz = blocking::RemoteNpz::open(&at).unwrap();
    let rows = npz.read_range::<f64, Ix2>("a", 12_000..12_003).unwrap();
    assert_eq!(rows, a.slice(s![12_000..12_003, ..]));
    assert_eq!(npz.read_all().unwrap().len(), 1);
}
