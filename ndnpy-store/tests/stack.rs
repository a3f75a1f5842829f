//! `RemoteNpyStack`: stacks in a store read as one array. Every remote read
//! is compared with the library's `NpyStack` read of the same folder on
//! disk (same values, or both an error); a range reads only its shards and
//! only their rows' bytes (counted); hostile stacks are refused in
//! proportion to what is present; and the same against a real S3 protocol
//! server (moto's, when `moto_server` is on PATH; skipped with a reason
//! otherwise, failed under CI=true).

mod common;

use common::Wrapped;
use ndarray::{Array1, Array2, ArrayD, Axis, IxDyn, ShapeBuilder};
use ndnpy::stack::NpyStack;
use ndnpy::{pickle::PyValue, WriteNpy};
use ndnpy_store::{blocking, Location, RemoteNpyStack, StoreError};
use object_store::local::LocalFileSystem;
use object_store::{ObjectStore, ObjectStoreExt};
use std::path::Path;
use std::sync::Arc;

fn url_of(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// A dask-style info pickle (the library's pickler, as `tests/stack.rs`).
fn info_of(chunks: &str, dtype: &str, axis: i64) -> Vec<u8> {
    let tuple = |s: &str| {
        PyValue::Tuple(
            s.split(',')
                .filter(|t| !t.is_empty())
                .map(|t| PyValue::Int(t.trim().parse().unwrap()))
                .collect(),
        )
    };
    let chunks = PyValue::Tuple(chunks.split(';').map(tuple).collect());
    ndnpy::pickle::dumps(&PyValue::Dict(vec![
        (PyValue::Str("chunks".into()), chunks),
        (
            PyValue::Str("dtype".into()),
            PyValue::DType(ndnpy::dtype::DType::parse(dtype).unwrap()),
        ),
        (PyValue::Str("axis".into()), PyValue::Int(axis)),
    ]))
    .unwrap()
}

/// The folder `dir` read by `NpyStack` and through a store by
/// `RemoteNpyStack`: both open, or both refuse; when open, the same
/// shape, dtype, axis, shards, whole array and every range (or both
/// refuse it).
fn compare(dir: &Path) -> Option<NpyStack> {
    let local = NpyStack::open(dir);
    let remote = blocking::RemoteNpyStack::open_url(&url_of(dir));
    let (local, remote) = match (local, remote) {
        (Ok(l), Ok(r)) => (l, r),
        (Err(l), Err(r)) => {
            eprintln!("both refuse {}: {l} | {r}", dir.display());
            return None;
        }
        (l, r) => panic!("{}: local {l:?}, remote {r:?}", dir.display()),
    };
    assert_eq!(local.shape(), remote.shape());
    assert_eq!(local.dtype(), remote.dtype());
    assert_eq!(local.axis(), remote.0.axis());
    assert_eq!(local.is_dask(), remote.is_dask());
    let spans = |l: &NpyStack| -> Vec<(usize, usize)> {
        l.shards().iter().map(|s| (s.start(), s.len())).collect()
    };
    let remote_spans: Vec<(usize, usize)> = remote
        .shards()
        .iter()
        .map(|s| (s.start(), s.len()))
        .collect();
    assert_eq!(spans(&local), remote_spans);
    assert_eq!(local.read_any().ok(), remote.read_any().ok());
    let n = local.len();
    let step = (n / 9).max(1);
    for start in (0..=n).step_by(step) {
        for end in (start..=n + 1).step_by(step) {
            let l = local.read_range_any(start..end);
            let r = remote.read_range_any(start..end);
            match (l, r) {
                (Ok(l), Ok(r)) => assert_eq!(l, r, "rows {start}..{end}"),
                (Err(_), Err(_)) => {}
                (l, r) => panic!("rows {start}..{end}: local {l:?}, remote {r:?}"),
            }
        }
    }
    if !local.dtype().has_object() {
        let l = local.read::<f64, IxDyn>();
        let r = remote.read::<f64, IxDyn>();
        assert_eq!(l.is_ok(), r.is_ok(), "{l:?} {r:?}");
        if let (Ok(l), Ok(r)) = (l, r) {
            assert_eq!(l, r);
        }
    }
    Some(local)
}

fn dask_folder<T: ndnpy::Element>(dir: &Path, a: &ArrayD<T>, axis: usize, lens: &[usize]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut start = 0;
    for (i, &n) in lens.iter().enumerate() {
        a.slice_axis(Axis(axis), (start..start + n).into())
            .write_npy(dir.join(format!("{i}.npy")))
            .unwrap();
        start += n;
    }
    let mut chunks: Vec<String> = a.shape().iter().map(|n| n.to_string()).collect();
    chunks[axis] = lens
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let descr = <T as ndnpy::Element>::dtype().to_string();
    std::fs::write(
        dir.join("info"),
        info_of(&chunks.join(";"), &descr, axis as i64),
    )
    .unwrap();
}

#[test]
fn file_urls_read_as_the_library_reads_the_folder() {
    let root = tempfile::tempdir().unwrap();
    // Dask stacks along each axis, C and Fortran shards.
    let a = ArrayD::from_shape_fn(IxDyn(&[9, 4, 3]), |d| {
        (d[0] * 100 + d[1] * 10 + d[2]) as f64
    });
    for axis in 0..3 {
        let dir = root.path().join(format!("axis{axis}"));
        let n = a.shape()[axis];
        let lens: Vec<usize> = match n {
            9 => vec![2, 0, 4, 3],
            4 => vec![1, 3],
            _ => vec![1, 1, 1],
        };
        assert_eq!(lens.iter().sum::<usize>(), n);
        dask_folder(&dir, &a, axis, &lens);
        compare(&dir).unwrap();
    }
    let dir = root.path().join("fortran");
    let f = Array2::from_shape_vec((6, 3).f(), (0..18i32).collect::<Vec<_>>()).unwrap();
    dask_folder(&dir, &f.clone().into_dyn(), 1, &[2, 1]);
    compare(&dir).unwrap();
    let dir = root.path().join("fortran0");
    dask_folder(&dir, &f.into_dyn(), 0, &[4, 2]);
    compare(&dir).unwrap();
    // Written by the library (its own info), and big-endian shards.
    let dir = root.path().join("written");
    let b = Array2::from_shape_fn((50, 7), |(i, j)| (i * 7 + j) as u16);
    NpyStack::create(&dir, &b, 8).unwrap();
    compare(&dir).unwrap();
    // A plain folder in natural order, hidden files and sub-folders left out.
    let dir = root.path().join("plain");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    for (name, rows) in [("shard_10.npy", 3), ("shard_2.npy", 2), ("shard_1.npy", 1)] {
        Array2::from_elem((rows, 2), name.len() as i64)
            .mapv(|x| x.to_be())
            .write_npy(dir.join(name))
            .unwrap();
    }
    Array1::<u8>::zeros(3)
        .write_npy(dir.join(".hidden.npy"))
        .unwrap();
    Array1::<u8>::zeros(3)
        .write_npy(dir.join("sub/x.npy"))
        .unwrap();
    std::fs::write(dir.join("notes.txt"), b"not a shard").unwrap();
    let local = compare(&dir).unwrap();
    assert_eq!(local.shards().len(), 3);
    // Strings and objects.
    let dir = root.path().join("strings");
    std::fs::create_dir_all(&dir).unwrap();
    ndarray::array!["a".to_string(), "bc".into()]
        .write_npy(dir.join("0.npy"))
        .unwrap();
    ndarray::array!["de".to_string()]
        .write_npy(dir.join("1.npy"))
        .unwrap();
    compare(&dir).unwrap();
    let dir = root.path().join("objects");
    std::fs::create_dir_all(&dir).unwrap();
    let objects = |v: Vec<PyValue>| Array1::from(v);
    objects(vec![PyValue::Int(1), PyValue::Str("two".into())])
        .write_npy(dir.join("0.npy"))
        .unwrap();
    objects(vec![PyValue::None])
        .write_npy(dir.join("1.npy"))
        .unwrap();
    compare(&dir).unwrap();
}

#[test]
fn hostile_folders_are_refused_by_both() {
    let root = tempfile::tempdir().unwrap();
    let good = |name: &str| {
        let dir = root.path().join(name);
        let a = ArrayD::from_shape_fn(IxDyn(&[6, 4]), |d| (d[0] * 4 + d[1]) as f64);
        dask_folder(&dir, &a, 0, &[2, 3, 1]);
        dir
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("chunks", info_of("3,2,1;4", "<f8", 0)),
        ("width", info_of("2,3,1;5", "<f8", 0)),
        ("dtype", info_of("2,3,1;4", ">f8", 0)),
        ("axis", info_of("2,3,1;4", "<f8", 7)),
        ("two_axes", info_of("2,3,1;2,2", "<f8", 0)),
        ("none", info_of(";4", "<f8", 0)),
        ("missing", info_of("2,3,1,1;4", "<f8", 0)),
        ("garbage", b"\x80\x04not a pickle".to_vec()),
        (
            "a_list",
            ndnpy::pickle::dumps(&PyValue::List(vec![])).unwrap(),
        ),
    ];
    for (name, info) in cases {
        let dir = good(name);
        std::fs::write(dir.join("info"), info).unwrap();
        assert!(compare(&dir).is_none(), "{name}");
    }
    // Shards that disagree, without info.
    let dir = root.path().join("disagree");
    std::fs::create_dir_all(&dir).unwrap();
    Array2::<f32>::zeros((2, 3))
        .write_npy(dir.join("0.npy"))
        .unwrap();
    Array2::<f32>::zeros((2, 4))
        .write_npy(dir.join("1.npy"))
        .unwrap();
    assert!(compare(&dir).is_none());
    std::fs::remove_file(dir.join("1.npy")).unwrap();
    Array2::<f64>::zeros((2, 3))
        .write_npy(dir.join("1.npy"))
        .unwrap();
    assert!(compare(&dir).is_none());
    // A shard shorter than its header says.
    std::fs::remove_file(dir.join("1.npy")).unwrap();
    let bytes = Array2::<f32>::zeros((2, 3)).to_npy_bytes().unwrap();
    std::fs::write(dir.join("1.npy"), &bytes[..bytes.len() - 1]).unwrap();
    assert!(compare(&dir).is_none());
    // A 0-d shard, an empty folder, a folder with no shard.
    let dir = root.path().join("zero_d");
    std::fs::create_dir_all(&dir).unwrap();
    ndarray::arr0(1u8).write_npy(dir.join("0.npy")).unwrap();
    assert!(compare(&dir).is_none());
    let dir = root.path().join("empty");
    std::fs::create_dir_all(&dir).unwrap();
    assert!(compare(&dir).is_none());
}

/// A store over a local folder whose GETs are counted.
fn counted(dir: &Path) -> (Arc<Wrapped>, Location) {
    let inner: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
    let wrapped = Wrapped::new(inner);
    let store: Arc<dyn ObjectStore> = wrapped.clone();
    (wrapped, Location::new(store, "x"))
}

#[test]
fn a_range_gets_only_its_shards_and_their_rows() {
    let root = tempfile::tempdir().unwrap();
    let a = Array2::from_shape_fn((64 * 100, 16), |(i, j)| (i * 16 + j) as f32);
    NpyStack::create(root.path().join("x"), &a, 100).unwrap(); // 64 shards of 100 rows
    let (counter, at) = counted(root.path());
    let stack = blocking::RemoteNpyStack::open(&at).unwrap();
    // Opening: the info, and one small GET of each shard's header; no
    // listing (info names the shards).
    let (gets, bytes) = counter.take();
    assert_eq!(gets, 1 + 64);
    assert!(bytes < 64 * 4096 + 4096, "{bytes}");
    // 1 000 rows across shards 9..=19 (rows 950..1950): one GET per shard,
    // of exactly the rows' bytes.
    let rows: Array2<f32> = stack.read_range(950..1950).unwrap();
    assert_eq!(rows, a.slice(ndarray::s![950..1950, ..]));
    let (gets, bytes) = counter.take();
    assert_eq!(gets, 11);
    assert_eq!(bytes, 1000 * 16 * 4);
    // Across one boundary: two GETs, the rows' bytes only.
    let rows: Array2<f32> = stack.read_range(199..201).unwrap();
    assert_eq!(rows, a.slice(ndarray::s![199..201, ..]));
    assert_eq!(counter.take(), (2, 2 * 16 * 4));
    // A wrong element type or dimension: refused before any GET.
    assert!(stack.read_range::<f32, ndarray::Ix2>(0..10).is_ok());
    counter.take();
    assert!(matches!(
        stack.read_range::<f32, ndarray::Ix1>(0..10),
        Err(StoreError::Npy(_))
    ));
    assert!(matches!(
        stack.read_range::<String, ndarray::Ix2>(0..10),
        Err(StoreError::Npy(_))
    ));
    assert_eq!(counter.take().0, 0);
    // A plain folder: the GET that finds no info, one listing, a header
    // GET per shard.
    std::fs::remove_file(root.path().join("x/info")).unwrap();
    let stack = blocking::RemoteNpyStack::open(&at).unwrap();
    assert!(!stack.is_dask());
    assert_eq!(counter.take().0, 1 + 64);
    assert_eq!(stack.read::<f32, ndarray::Ix2>().unwrap(), a);
}

#[test]
fn a_shard_replaced_after_open_is_an_error_not_other_values() {
    let root = tempfile::tempdir().unwrap();
    let a = Array1::from_iter(0..20u32);
    NpyStack::create(root.path().join("x"), &a, 5).unwrap();
    let stack = blocking::RemoteNpyStack::open_url(&url_of(&root.path().join("x"))).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    Array1::from_iter(100..105u32)
        .write_npy(root.path().join("x/1.npy"))
        .unwrap();
    let err = stack.read_range::<u32, ndarray::Ix1>(4..6).unwrap_err();
    assert!(matches!(err, StoreError::Changed { .. }), "{err}");
}

#[test]
fn many_shards_and_claims_of_more_cost_what_is_present() {
    // Shards of 300 rows: chunk lengths a pickle holds in 3 bytes each
    // (see the note on one-byte lengths below).
    let (n, rows) = (20_000, 300);
    let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let wrapped = Wrapped::new(store);
    let store: Arc<dyn ObjectStore> = wrapped.clone();
    let bytes = Array1::from_elem(rows, 7u8).to_npy_bytes().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        for i in 0..n {
            store
                .put(&format!("s/{i}.npy").into(), bytes.clone().into())
                .await
                .unwrap();
        }
    });
    let at = Location::new(store.clone(), "s");
    let stack = blocking::RemoteNpyStack::open(&at).unwrap();
    assert_eq!((stack.len(), stack.shards().len()), (n * rows, n));
    assert_eq!(
        stack.shards()[n / 2].path().filename(),
        Some(&*format!("{}.npy", n / 2))
    );
    let r: Array1<u8> = stack.read_range(n * rows - 3..n * rows).unwrap();
    assert_eq!(r.to_vec(), [7, 7, 7]);
    // An info claiming 100 000 shards, with 20 000 present: the first
    // missing one is named, after no more GETs than the present shards,
    // the info and the requests in flight.
    let claim = vec!["300"; 100_000].join(",");
    rt.block_on(store.put(&"s/info".into(), info_of(&claim, "|u1", 0).into()))
        .unwrap();
    wrapped.take();
    let err = blocking::RemoteNpyStack::open(&at).unwrap_err();
    assert!(err.to_string().contains("20000.npy"), "{err}");
    let (gets, _) = wrapped.take();
    assert!(gets <= n + 1 + 64, "{gets}");
    // An info claiming 1 000 000 shards of 2^40 rows: refused at the first.
    let claim = vec![(1u64 << 40).to_string(); 1_000_000].join(",");
    rt.block_on(store.put(&"s/info".into(), info_of(&claim, "|u1", 0).into()))
        .unwrap();
    let err = blocking::RemoteNpyStack::open(&at).unwrap_err();
    assert!(err.to_string().contains("0.npy"), "{err}");
}

#[test]
fn read_options_apply_to_every_shard() {
    let root = tempfile::tempdir().unwrap();
    NpyStack::create(root.path().join("x"), &ndarray::array![1u8, 2, 3], 2).unwrap();
    let at = Location::parse(&url_of(&root.path().join("x"))).unwrap();
    let tight = ndnpy_store::Config::default()
        .read_options(ndnpy::ReadOptions::default().max_header_len(10));
    assert!(blocking::RemoteNpyStack::open_with(&at, tight).is_err());
    let local = NpyStack::open_with(
        root.path().join("x"),
        &ndnpy::ReadOptions::default().max_header_len(10),
    );
    assert!(local.is_err());
    // Objects refused when the options say so, on both sides.
    let dir = root.path().join("o");
    std::fs::create_dir_all(&dir).unwrap();
    Array1::from(vec![PyValue::Int(1)])
        .write_npy(dir.join("0.npy"))
        .unwrap();
    let strict = ndnpy::ReadOptions::default().allow_objects(false);
    let local = NpyStack::open_with(&dir, &strict).and_then(|s| s.read_any());
    let remote = blocking::RemoteNpyStack::open_with(
        &Location::parse(&url_of(&dir)).unwrap(),
        ndnpy_store::Config::default().read_options(strict),
    )
    .and_then(|s| s.read_any());
    assert!(local.is_err() && remote.is_err(), "{local:?} {remote:?}");
}

/// moto's S3 server on a free port, killed when dropped; `None` (with the
/// reason printed) when `moto_server` is not on PATH, unless CI=true.
struct Moto(std::process::Child, u16);

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn moto() -> Option<Moto> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new("moto_server")
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "moto_server is needed under CI: {e}"
            );
            eprintln!("skipped: moto_server not found ({e}); pip install 'moto[server]'");
            return None;
        }
    };
    let server = Moto(child, port);
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(server);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("moto_server did not start on port {port}");
}

/// Creates `bucket` by an unsigned `PUT /bucket`, which moto accepts.
fn create_bucket(port: u16, bucket: &str) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn s3_stacks_read_as_the_library_reads_the_folder() {
    let Some(server) = moto() else { return };
    create_bucket(server.1, "stacks");
    let options = ndnpy_store::UrlOptions {
        options: [
            ("aws_endpoint", format!("http://127.0.0.1:{}", server.1)),
            ("aws_allow_http", "true".into()),
            ("aws_region", "us-east-1".into()),
            ("aws_access_key_id", "test".into()),
            ("aws_secret_access_key", "test".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        ..Default::default()
    };
    let s3 = Location::parse_with("s3://stacks/", &options)
        .unwrap()
        .store;
    let wrapped = Wrapped::new(s3);
    let store: Arc<dyn ObjectStore> = wrapped.clone();
    let root = tempfile::tempdir().unwrap();
    let a = ArrayD::from_shape_fn(IxDyn(&[300, 5]), |d| (d[0] * 5 + d[1]) as i64);
    let dask = root.path().join("dask");
    dask_folder(&dask, &a, 0, &[100, 0, 120, 80]);
    let plain = root.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    for i in [10, 2, 1] {
        Array2::from_elem((i, 3), i as f32)
            .write_npy(plain.join(format!("part{i}.npy")))
            .unwrap();
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    for (dir, name) in [(&dask, "dask"), (&plain, "plain")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let key = format!("{name}/{}", entry.file_name().to_str().unwrap());
            let body = std::fs::read(entry.path()).unwrap();
            rt.block_on(store.put(&key.into(), body.into())).unwrap();
        }
    }
    for (dir, name) in [(&dask, "dask"), (&plain, "plain")] {
        let local = NpyStack::open(dir).unwrap();
        let remote = blocking::RemoteNpyStack::open(&Location::new(store.clone(), name)).unwrap();
        assert_eq!(local.shape(), remote.shape());
        assert_eq!(local.read_any().unwrap(), remote.read_any().unwrap());
        for range in [0..0, 0..1, 99..101, 50..250, 0..local.len()] {
            if range.end > local.len() {
                continue;
            }
            assert_eq!(
                local.read_range_any(range.clone()).unwrap(),
                remote.read_range_any(range.clone()).unwrap(),
                "{name} {range:?}"
            );
        }
    }
    // A range across one boundary: two GETs of exactly its rows.
    let remote = blocking::RemoteNpyStack::open(&Location::new(store.clone(), "dask")).unwrap();
    wrapped.take();
    let rows = remote.read_range::<i64, ndarray::Ix2>(90..130).unwrap();
    assert_eq!(rows, a.slice(ndarray::s![90..130, ..]));
    assert_eq!(wrapped.take(), (2, 40 * 5 * 8));
    // A missing shard, named.
    rt.block_on(store.delete(&"dask/2.npy".into())).unwrap();
    let err = blocking::RemoteNpyStack::open(&Location::new(store.clone(), "dask")).unwrap_err();
    assert!(err.to_string().contains("2.npy"), "{err}");
    drop(server);
    let _ = RemoteNpyStack::open; // the async type is the same reader
}
