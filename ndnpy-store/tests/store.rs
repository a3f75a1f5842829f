//! Reading and writing through stores that count every request and byte,
//! and through stores that fail: exact request counts, exact errors.

mod common;

use common::{Fault, Wrapped};
use ndarray::{s, Array1, Array2, Array3, Ix1, Ix2, Ix3, ShapeBuilder};
use ndnpy::{AnyArray, NpzWriter, Order, WriteNpy};
use ndnpy_store::{Config, Location, RemoteNpy, RemoteNpz, StoreError};
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

fn big() -> Array2<f64> {
    Array2::from_shape_fn((4096, 64), |(i, j)| (i * 64 + j) as f64)
}

#[tokio::test]
async fn header_is_one_request_of_at_most_64_kib() {
    let store = memory();
    let at = put(&store, "a.npy", big().to_npy_bytes().unwrap()).await;
    let npy = RemoteNpy::open(&at).await.unwrap();
    assert_eq!(npy.header().shape, [4096, 64]);
    assert_eq!(npy.len(), 4096);
    assert_eq!(store.take(), (1, 64 << 10));
}

#[tokio::test]
async fn a_long_header_takes_a_second_request() {
    // A record dtype with enough fields to push the header past 64 KiB.
    let fields: Vec<String> = (0..5000)
        .map(|i| format!("('field_{i:05}', '<f4')"))
        .collect();
    let descr = format!("[{}]", fields.join(", "));
    let text = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': (3,), }}");
    let mut header = text.into_bytes();
    while (header.len() + 13) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut file = b"\x93NUMPY\x02\x00".to_vec();
    file.extend_from_slice(&(header.len() as u32).to_le_bytes());
    file.extend_from_slice(&header);
    file.extend(std::iter::repeat_n(0u8, 3 * 5000 * 4));
    let store = memory();
    let at = put(&store, "wide.npy", file).await;
    let config =
        Config::default().read_options(ndnpy::ReadOptions::default().max_header_len(1 << 20));
    let npy = RemoteNpy::open_with(&at, config).await.unwrap();
    assert_eq!(npy.header().shape, [3]);
    assert_eq!(store.take().0, 2);
}

#[tokio::test]
async fn read_range_is_one_get_of_exactly_the_rows() {
    let store = memory();
    let a = big();
    let at = put(&store, "a.npy", a.to_npy_bytes().unwrap()).await;
    let npy = RemoteNpy::open(&at).await.unwrap();
    store.take();
    let rows = npy.read_range::<f64, Ix2>(1000..1010).await.unwrap();
    assert_eq!(rows, a.slice(s![1000..1010, ..]));
    assert_eq!(store.take(), (1, 10 * 64 * 8));
    let err = npy.read_range::<f64, Ix2>(4000..5000).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "row range 4000..5000 is out of bounds for a growth axis of length 4096"
    );
    assert_eq!(store.take().0, 0);
}

#[tokio::test]
async fn read_whole_by_chunks_in_any_order_and_type() {
    let store = memory();
    let a = big();
    let at = put(&store, "a.npy", a.to_npy_bytes().unwrap()).await;
    let config = Config::default().chunk_size(1 << 16).concurrency(4);
    let npy = RemoteNpy::open_with(&at, config.clone()).await.unwrap();
    store.take();
    let back = npy.read::<f64, Ix2>().await.unwrap();
    assert_eq!(back, a);
    // 2 MiB of data in 64 KiB chunks (128 rows each): 32 GETs, each byte once.
    assert_eq!(store.take(), (32, 4096 * 64 * 8));

    // Big-endian, Fortran order, into another type.
    let be: Vec<u8> = {
        let mut f = Array2::<f64>::zeros(a.raw_dim().f()); // same values, Fortran layout
        f.assign(&a);
        let mut bytes = f.to_npy_bytes().unwrap();
        // swap to big-endian by rewriting the header and the data
        let (header, offset) = {
            let mut rest: &[u8] = &bytes;
            let h = ndnpy::dtype::Header::read_from(&mut rest).unwrap();
            (h, bytes.len() - rest.len())
        };
        assert!(header.fortran_order);
        let mut h = header.clone();
        h.dtype = ndnpy::dtype::DType::parse(">f8").unwrap();
        let mut out = h.to_bytes().unwrap();
        assert_eq!(out.len(), offset);
        for chunk in bytes[offset..].chunks_mut(8) {
            chunk.reverse();
            out.extend_from_slice(chunk);
        }
        bytes.clear();
        out
    };
    let at = put(&store, "be.npy", be).await;
    let npy = RemoteNpy::open_with(&at, config).await.unwrap();
    assert_eq!(npy.len(), 64); // the last axis, in Fortran order
    let back = npy.read::<f64, Ix2>().await.unwrap();
    assert_eq!(back, a);
    let cols = npy.read_range::<f64, Ix2>(3..5).await.unwrap();
    assert_eq!(cols, a.slice(s![.., 3..5]));
}

#[tokio::test]
async fn read_any_reads_strings_and_objects_in_one_get() {
    let store = memory();
    let words = Array1::from(vec!["alpha".to_string(), "beta".into(), "γ".into()]);
    let at = put(&store, "s.npy", words.to_npy_bytes().unwrap()).await;
    let npy = RemoteNpy::open(&at).await.unwrap();
    assert_eq!(
        npy.read_range::<String, Ix1>(1..3).await.unwrap(),
        words.slice(s![1..3])
    );
    let any = npy.read_any().await.unwrap();
    assert_eq!(any.shape(), [3]);

    let objects = Array1::from(vec![
        ndnpy::pickle::PyValue::Int(1),
        ndnpy::pickle::PyValue::Str("two".into()),
        ndnpy::pickle::PyValue::None,
    ]);
    let at = put(&store, "o.npy", objects.to_npy_bytes().unwrap()).await;
    let npy = RemoteNpy::open(&at).await.unwrap();
    store.take();
    let any = npy.read_any().await.unwrap();
    assert!(matches!(any, AnyArray::Object(_)));
    // Small: the pickle came with the first GET's range again, in one GET.
    assert_eq!(store.take().0, 1);
    let err = npy.read::<f64, Ix1>().await.unwrap_err();
    assert!(err.to_string().contains("read them with read_any"), "{err}");
}

fn archive(members: usize, compressed: bool) -> Vec<u8> {
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(if compressed {
        ndnpy::npz::Codec::deflate()
    } else {
        ndnpy::npz::Codec::Stored
    });
    for i in 0..members {
        w.add(&format!("m{i}"), &Array1::from_elem(4, i as i32))
            .unwrap();
    }
    w.add("big", &big()).unwrap();
    w.finish_into_inner().unwrap().into_inner()
}

#[tokio::test]
async fn npz_directory_of_many_members_in_a_few_requests() {
    let store = memory();
    let at = put(&store, "many.npz", archive(20_000, false)).await;
    let npz = RemoteNpz::open(&at).await.unwrap();
    assert_eq!(npz.len(), 20_001);
    let (gets, _) = store.take();
    assert!(gets <= 3, "{gets} requests to list the archive");

    // A member: its local header (held or one GET) and one GET of its data.
    let m = npz.read::<i32, Ix1>("m7").await.unwrap();
    assert_eq!(m, Array1::from_elem(4, 7));
    let b = npz.read::<f64, Ix2>("big").await.unwrap();
    assert_eq!(b, big());
    let (gets, bytes) = store.take();
    assert!(gets <= 4, "{gets}");
    assert!(bytes < 4096 * 64 * 8 + (300 << 10), "{bytes}");

    // Stored members' rows by ranged GET.
    let member = npz.member_npy("big").await.unwrap();
    store.take();
    let rows = member.read_range::<f64, Ix2>(10..12).await.unwrap();
    assert_eq!(rows, big().slice(s![10..12, ..]));
    assert_eq!(store.take(), (1, 2 * 64 * 8));
}

#[tokio::test]
async fn npz_compressed_members_stream_through_the_inflater() {
    let store = memory();
    let at = put(&store, "c.npz", archive(3, true)).await;
    let npz = RemoteNpz::open(&at).await.unwrap();
    assert_eq!(npz.names(), ["m0", "m1", "m2", "big"]);
    assert_eq!(npz.read::<f64, Ix2>("big.npy").await.unwrap(), big());
    assert_eq!(npz.header("m2").await.unwrap().shape, [4]);
    let err = npz.member_npy("big").await.unwrap_err();
    assert!(err.to_string().contains("is compressed"), "{err}");
    let err = npz.read::<f64, Ix2>("nope").await.unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
}

#[tokio::test]
async fn an_object_replaced_between_requests_is_an_error() {
    let store = memory();
    let a = big();
    let at = put(&store, "a.npy", a.to_npy_bytes().unwrap()).await;
    let npy = RemoteNpy::open(&at).await.unwrap();
    let other = (&a * 2.0).to_npy_bytes().unwrap();
    store.with_fault(Fault::Replace(2, other.into()));
    let err = npy.read::<f64, Ix2>().await.unwrap_err();
    assert!(matches!(err, StoreError::Changed { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "a.npy changed while it was being read (its ETag, version, size or time no longer matches); read it again"
    );
}

#[tokio::test]
async fn short_bodies_wrong_ranges_and_failures_are_errors() {
    let store = memory();
    let a = big();
    let at = put(&store, "a.npy", a.to_npy_bytes().unwrap()).await;
    let npy = RemoteNpy::open(&at).await.unwrap();

    store.with_fault(Fault::Short(1, 100));
    store.take();
    let err = npy.read_range::<f64, Ix2>(0..10).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "a.npy: asked for bytes 128..5248 and got a body of 100 bytes"
    );

    store.with_fault(Fault::WrongRange(1));
    store.take();
    let err = npy.read_range::<f64, Ix2>(0..10).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "a.npy: asked for bytes 128..5248 and got bytes 129..5249"
    );

    store.with_fault(Fault::Error(1));
    store.take();
    let err = npy.read_range::<f64, Ix2>(0..10).await.unwrap_err();
    assert!(matches!(err, StoreError::Store(_)), "{err:?}");

    store.with_fault(Fault::Reset(1, 1000));
    store.take();
    let err = npy.read::<f64, Ix2>().await.unwrap_err();
    assert!(
        matches!(err, StoreError::BadAnswer { .. } | StoreError::Store(_)),
        "{err:?}"
    );

    // A truncated object: its header promises more than it has.
    let mut bytes = a.to_npy_bytes().unwrap();
    bytes.truncate(bytes.len() - 8);
    let at = put(&store, "cut.npy", bytes).await;
    store.with_fault(Fault::None);
    let err = RemoteNpy::open(&at).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "truncated data: the header declares 2097152 bytes of data, found 2097144"
    );
}

#[tokio::test]
async fn writes_are_multipart_and_appear_only_at_the_end() {
    let store = Arc::new(InMemory::new());
    let at =
        Location::new(store.clone() as Arc<dyn ObjectStore>, "w.npy").with_multipart(store.clone());
    let a = Array3::from_shape_fn((300, 100, 100), |(i, j, k)| (i + j * k) as f32);
    let config = Config::default().part_size(5 << 20).parts_in_flight(2);
    ndnpy_store::write_npy_with(&at, &a, config.clone())
        .await
        .unwrap();
    let back = RemoteNpy::open(&at)
        .await
        .unwrap()
        .read::<f32, Ix3>()
        .await
        .unwrap();
    assert_eq!(back, a);
    assert_eq!(
        store
            .get(&"w.npy".into())
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap(),
        a.to_npy_bytes().unwrap()
    );

    // The streaming writer: nothing until finish, then the right shape.
    let at =
        Location::new(store.clone() as Arc<dyn ObjectStore>, "s.npy").with_multipart(store.clone());
    let mut w = ndnpy_store::NpyWriter::<f32>::create_with(&at, &[100, 100], Order::C, config)
        .await
        .unwrap();
    for i in 0..3 {
        w.write(&a.slice(s![i * 100..(i + 1) * 100, .., ..]))
            .await
            .unwrap();
    }
    assert!(store.head(&"s.npy".into()).await.is_err());
    w.finish().await.unwrap();
    let back = RemoteNpy::open(&at)
        .await
        .unwrap()
        .read::<f32, Ix3>()
        .await
        .unwrap();
    assert_eq!(back, a);

    // A dropped writer leaves nothing.
    let at =
        Location::new(store.clone() as Arc<dyn ObjectStore>, "d.npy").with_multipart(store.clone());
    let mut w = ndnpy_store::NpyWriter::<f32>::create(&at, &[100, 100], Order::C)
        .await
        .unwrap();
    w.write(&a).await.unwrap();
    drop(w);
    assert!(store.head(&"d.npy".into()).await.is_err());
}

#[tokio::test]
async fn writes_to_local_files_and_archives() {
    let dir = tempfile::tempdir().unwrap();
    let local =
        Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let a = big();
    let at = Location::new(local.clone() as Arc<dyn ObjectStore>, "x.npy");
    ndnpy_store::write_npy(&at, &a).await.unwrap();
    assert_eq!(
        Array2::<f64>::from_npy_bytes_via(&dir.path().join("x.npy")),
        a
    );

    let at = Location::new(local as Arc<dyn ObjectStore>, "x.npz");
    let mut w = ndnpy_store::NpzWriter::create(&at, true).unwrap();
    w.archive().add("a", &a).unwrap();
    w.archive().add("b", &ndarray::array![1u8, 2]).unwrap();
    w.finish().await.unwrap();
    let npz = RemoteNpz::open(&at).await.unwrap();
    assert_eq!(npz.read::<f64, Ix2>("a").await.unwrap(), a);
}

trait ViaPath: Sized {
    fn from_npy_bytes_via(path: &std::path::Path) -> Self;
}

impl ViaPath for Array2<f64> {
    fn from_npy_bytes_via(path: &std::path::Path) -> Self {
        ndnpy::ReadNpy::read_npy(path).unwrap()
    }
}

#[tokio::test]
async fn the_first_answer_is_checked_too() {
    let store = memory();
    let at = put(&store, "a.npy", big().to_npy_bytes().unwrap()).await;
    store.with_fault(Fault::WrongRange(1));
    let err = RemoteNpy::open(&at).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "a.npy: asked for bytes 0..65536 and got bytes 1..65537"
    );
    store.take();
    store.with_fault(Fault::Short(1, 10));
    let err = RemoteNpy::open(&at).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "a.npy: asked for bytes 0..65536 and got a body of 10 bytes"
    );
    // The archive reader's first request is a suffix range.
    let at = put(&store, "c.npz", archive(3, true)).await;
    store.with_fault(Fault::WrongRange(1));
    let err = RemoteNpz::open(&at).await.unwrap_err();
    assert!(matches!(err, StoreError::BadAnswer { .. }), "{err:?}");
    // An empty object is an empty answer, and not a .npy file.
    let at = put(&store, "empty.npy", Vec::new()).await;
    store.with_fault(Fault::None);
    let err = RemoteNpy::open(&at).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Npy(ndnpy::Error::Header(
                ndnpy::error::HeaderError::BadMagic { .. }
            ))
        ),
        "{err:?}"
    );
}
