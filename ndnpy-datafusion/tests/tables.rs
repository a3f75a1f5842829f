//! NumPy tables through DataFusion: folders of `.npy` shards, `.npz`
//! archives, records, tensors, strings and datetimes, row-range partitions,
//! `count(*)` from headers (bytes counted through a wrapping store), and
//! hostile files.

use async_trait::async_trait;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{Float64Type, Int64Type};
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::stream::BoxStream;
use ndarray::{array, Array1, Array2};
use ndnpy::WriteNpy;
use ndnpy_datafusion::{NpyReadOptions, SessionContextExt};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

type Res<T = ()> = Result<T, Box<dyn std::error::Error>>;

async fn query(ctx: &SessionContext, sql: &str) -> Res<Vec<RecordBatch>> {
    Ok(ctx.sql(sql).await?.collect().await?)
}

fn f64_at(batches: &[RecordBatch], col: usize) -> f64 {
    batches[0]
        .column(col)
        .as_primitive::<Float64Type>()
        .value(0)
}

fn i64_at(batches: &[RecordBatch], col: usize) -> i64 {
    batches[0].column(col).as_primitive::<Int64Type>().value(0)
}

fn path(p: &std::path::Path) -> String {
    p.to_str().unwrap().to_owned()
}

#[tokio::test]
async fn folder_of_shards_is_one_table() -> Res {
    let dir = tempfile::tempdir()?;
    let all: Vec<f64> = (0..10_000).map(|i| i as f64 * 0.5).collect();
    for (k, part) in all.chunks(3000).enumerate() {
        Array1::from(part.to_vec()).write_npy(dir.path().join(format!("{k}.npy")))?;
    }
    std::fs::write(dir.path().join("info"), b"not an array")?;
    let ctx = SessionContext::new();
    ctx.register_npy("t", &path(dir.path()), NpyReadOptions::default())
        .await?;
    let b = query(&ctx, "SELECT count(*), sum(value), max(value) FROM t").await?;
    assert_eq!(i64_at(&b, 0), 10_000);
    assert_eq!(f64_at(&b, 1), all.iter().sum::<f64>());
    assert_eq!(f64_at(&b, 2), 4999.5);
    let b = query(&ctx, "SELECT value FROM t ORDER BY value DESC LIMIT 2").await?;
    let v = b[0].column(0).as_primitive::<Float64Type>();
    assert_eq!((v.value(0), v.value(1)), (4999.5, 4999.0));
    Ok(())
}

#[tokio::test]
async fn one_large_file_in_row_ranges_counts_every_row_once() -> Res {
    let dir = tempfile::tempdir()?;
    let n = 300_001i64;
    Array1::from_iter(0..n).write_npy(dir.path().join("big.npy"))?;
    let config = SessionConfig::new()
        .with_target_partitions(7)
        .with_repartition_file_min_size(1024);
    let ctx = SessionContext::new_with_config(config);
    ctx.register_npy(
        "t",
        &path(&dir.path().join("big.npy")),
        NpyReadOptions::default(),
    )
    .await?;
    let plan = query(&ctx, "EXPLAIN SELECT sum(value) FROM t").await?;
    let shown = datafusion::arrow::util::pretty::pretty_format_batches(&plan)?.to_string();
    assert!(shown.contains("big.npy:0.."), "no row ranges in {shown}");
    let b = query(&ctx, "SELECT sum(value), count(value), min(value) FROM t").await?;
    assert_eq!(i64_at(&b, 0), n * (n - 1) / 2);
    assert_eq!(i64_at(&b, 1), n);
    assert_eq!(i64_at(&b, 2), 0);
    Ok(())
}

#[tokio::test]
async fn archives_in_row_ranges_count_every_row_once() -> Res {
    let dir = tempfile::tempdir()?;
    let n = 200_003i64;
    let x = Array1::from_iter(0..n);
    let y = x.mapv(|v| (v % 7) as f64);
    let fortran = Array2::from_shape_fn((n as usize, 2), |(i, j)| (i * 2 + j) as i64);
    for (name, codec) in [
        ("stored.npz", ndnpy::npz::Codec::Stored),
        ("deflated.npz", ndnpy::npz::Codec::deflate()),
    ] {
        let mut w = ndnpy::NpzWriter::create(dir.path().join(name))?.codec(codec);
        w.add("x", &x)?;
        w.add("y", &y)?;
        w.finish()?;
    }
    fortran
        .t()
        .as_standard_layout()
        .reversed_axes()
        .write_npy(dir.path().join("fortran.npy"))?;
    let config = SessionConfig::new()
        .with_target_partitions(5)
        .with_repartition_file_min_size(1024);
    let ctx = SessionContext::new_with_config(config);
    for t in ["stored", "deflated"] {
        let file = dir.path().join(format!("{t}.npz"));
        ctx.register_npy(t, &path(&file), NpyReadOptions::default())
            .await?;
        let plan = query(&ctx, &format!("EXPLAIN SELECT sum(x) FROM {t}")).await?;
        let shown = datafusion::arrow::util::pretty::pretty_format_batches(&plan)?.to_string();
        assert!(
            shown.contains(&format!("{t}.npz:0..")),
            "no ranges in {shown}"
        );
        let b = query(
            &ctx,
            &format!("SELECT sum(x), count(*), sum(y), max(x) FROM {t} WHERE x % 3 = 1"),
        )
        .await?;
        let want: Vec<i64> = (0..n).filter(|v| v % 3 == 1).collect();
        assert_eq!(i64_at(&b, 0), want.iter().sum::<i64>(), "{t}");
        assert_eq!(i64_at(&b, 1), want.len() as i64, "{t}");
        assert_eq!(
            f64_at(&b, 2),
            want.iter().map(|v| (v % 7) as f64).sum::<f64>(),
            "{t}"
        );
        assert_eq!(i64_at(&b, 3), *want.last().unwrap(), "{t}");
    }
    ctx.register_npy(
        "f",
        &path(&dir.path().join("fortran.npy")),
        NpyReadOptions::default(),
    )
    .await?;
    // A Fortran-order file is read whole, by the range that starts it only.
    let b = query(&ctx, "SELECT value FROM f").await?;
    assert_eq!(b.iter().map(|b| b.num_rows()).sum::<usize>(), n as usize);
    Ok(())
}

#[tokio::test]
async fn npz_members_are_columns_and_tensors() -> Res {
    let dir = tempfile::tempdir()?;
    for compressed in [false, true] {
        let file = dir.path().join(format!("{compressed}.npz"));
        let mut w = if compressed {
            ndnpy::NpzWriter::create(&file)?.codec(ndnpy::npz::Codec::deflate())
        } else {
            ndnpy::NpzWriter::create(&file)?
        };
        w.add("x", &array![1i64, 2, 3, 4])?;
        w.add("y", &array![0.5f64, 1.5, 2.5, 3.5])?;
        w.add(
            "m",
            &Array2::<f32>::from_shape_fn((4, 3), |(i, j)| (i * 3 + j) as f32),
        )?;
        w.finish()?;
        let ctx = SessionContext::new();
        ctx.register_npy("t", &path(&file), NpyReadOptions::default())
            .await?;
        let b = query(&ctx, "SELECT sum(x), avg(y) FROM t WHERE y > 1").await?;
        assert_eq!((i64_at(&b, 0), f64_at(&b, 1)), (9, 2.5));
        let b = query(&ctx, "SELECT m FROM t WHERE x = 2").await?;
        let field = b[0].schema().field(0).clone();
        assert!(ndnpy_parquet::arrow::is_tensor(&field), "{field:?}");
        let (row, _) = ndnpy_parquet::arrow::from_tensor(&field, b[0].column(0).clone())?;
        assert_eq!(row.shape(), &[1, 3]);
        assert_eq!(row.dtype().to_string(), "<f4");
    }
    Ok(())
}

#[tokio::test]
async fn records_strings_datetimes_and_objects() -> Res {
    let dir = tempfile::tempdir()?;
    // A record dtype: a column per field.
    let descr = "[('a', '<i4'), ('b', '<f8')]";
    let mut bytes = npy_header(descr, 2);
    for (a, b) in [(1i32, 0.25f64), (2, 0.75)] {
        bytes.extend_from_slice(&a.to_le_bytes());
        bytes.extend_from_slice(&b.to_le_bytes());
    }
    std::fs::write(dir.path().join("rec.npy"), &bytes)?;
    let ctx = SessionContext::new();
    ctx.register_npy(
        "r",
        &path(&dir.path().join("rec.npy")),
        NpyReadOptions::default(),
    )
    .await?;
    let b = query(&ctx, "SELECT sum(a), sum(b) FROM r").await?;
    assert_eq!(
        b[0].column(0)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0),
        3
    );
    assert_eq!(f64_at(&b, 1), 1.0);

    // Strings and datetimes with NaT.
    let mut s = npy_header("<U3", 3);
    for w in ["ab", "xyz", ""] {
        let mut cells = [0u32; 3];
        for (c, ch) in cells.iter_mut().zip(w.chars()) {
            *c = ch as u32;
        }
        cells
            .iter()
            .for_each(|c| s.extend_from_slice(&c.to_le_bytes()));
    }
    std::fs::write(dir.path().join("s.npy"), &s)?;
    ctx.register_npy(
        "s",
        &path(&dir.path().join("s.npy")),
        NpyReadOptions::default(),
    )
    .await?;
    let b = query(&ctx, "SELECT count(*) FROM s WHERE value = 'xyz'").await?;
    assert_eq!(i64_at(&b, 0), 1);
    let mut d = npy_header("<M8[s]", 3);
    for v in [0i64, i64::MIN, 86_400] {
        d.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(dir.path().join("d.npy"), &d)?;
    ctx.register_npy(
        "d",
        &path(&dir.path().join("d.npy")),
        NpyReadOptions::default(),
    )
    .await?;
    let b = query(&ctx, "SELECT count(value), count(*) FROM d").await?;
    assert_eq!((i64_at(&b, 0), i64_at(&b, 1)), (2, 3));

    // Objects: refused, naming the column.
    let mut o = npy_header("|O", 0);
    o.extend_from_slice(b"\x80\x02]q\x00.");
    std::fs::write(dir.path().join("o.npy"), &o)?;
    let err = ctx
        .register_npy(
            "o",
            &path(&dir.path().join("o.npy")),
            NpyReadOptions::default(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("column `value`") && err.contains("objects"),
        "{err}"
    );
    Ok(())
}

/// An `.npy` version 1.0 header of a 1-D array of `n` items of `descr`.
fn npy_header(descr: &str, n: usize) -> Vec<u8> {
    npy_header_shaped(descr, &format!("({n},)"))
}

/// An `.npy` version 1.0 header of `descr` and `shape` (a Python tuple).
fn npy_header_shaped(descr: &str, shape: &str) -> Vec<u8> {
    let descr = if descr.starts_with('[') {
        descr.to_owned()
    } else {
        format!("'{descr}'")
    };
    let dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
    let mut h = dict.into_bytes();
    let total = (10 + h.len() + 1).div_ceil(64) * 64;
    h.resize(total - 10 - 1, b' ');
    h.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(&h);
    out
}

#[tokio::test]
async fn hostile_files_are_errors() -> Res {
    let dir = tempfile::tempdir()?;
    let ctx = SessionContext::new();
    // A header claiming far more data than the file holds.
    let mut big = npy_header("<f8", 1 << 40);
    big.extend_from_slice(&[0u8; 16]);
    std::fs::write(dir.path().join("short.npy"), &big)?;
    let err = ctx
        .register_npy(
            "a",
            &path(&dir.path().join("short.npy")),
            NpyReadOptions::default(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("short.npy"), "{err}");
    // Garbage named .npy, a truncated header, a damaged archive.
    for (name, bytes) in [
        ("junk.npy", b"hello world".to_vec()),
        ("cut.npy", npy_header("<f8", 3)[..20].to_vec()),
        ("bad.npz", b"PK\x03\x04garbage".to_vec()),
        // 10^15 rows of no bytes: a scan without end, were it believed.
        (
            "empty_rows.npy",
            npy_header_shaped("<f8", "(1000000000000000, 0)"),
        ),
    ] {
        std::fs::write(dir.path().join(name), &bytes)?;
        let r = ctx
            .register_npy(
                "b",
                &path(&dir.path().join(name)),
                NpyReadOptions::default(),
            )
            .await;
        assert!(r.is_err(), "{name} was accepted");
    }
    // Shards of different dtypes in one folder.
    let mixed = dir.path().join("mixed");
    std::fs::create_dir(&mixed)?;
    array![1i32].write_npy(mixed.join("0.npy"))?;
    array![1.5f64].write_npy(mixed.join("1.npy"))?;
    let r = async {
        ctx.register_npy("m", &path(&mixed), NpyReadOptions::default())
            .await?;
        query(&ctx, "SELECT * FROM m").await
    }
    .await;
    assert!(r.is_err());
    Ok(())
}

#[tokio::test]
async fn create_external_table_stored_as_npy() -> Res {
    let dir = tempfile::tempdir()?;
    array![1u8, 2, 3].write_npy(dir.path().join("0.npy"))?;
    array![4u8].write_npy(dir.path().join("1.npy"))?;
    let ctx = SessionContext::new();
    ndnpy_datafusion::register_formats(&ctx)?;
    let sql = format!(
        "CREATE EXTERNAL TABLE t STORED AS NPY LOCATION '{}/'",
        dir.path().display()
    );
    ctx.sql(&sql).await?.collect().await?;
    let b = query(&ctx, "SELECT sum(value) FROM t").await?;
    let s = b[0].column(0);
    assert_eq!(
        s.as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
            .value(0),
        10
    );
    assert!(!s.is_null(0));
    Ok(())
}

/// A store that counts the bytes its GETs return.
#[derive(Debug)]
struct Counting {
    inner: InMemory,
    bytes: Arc<AtomicU64>,
}

impl std::fmt::Display for Counting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Counting")
    }
}

#[async_trait]
impl ObjectStore for Counting {
    async fn put_opts(
        &self,
        p: &Path,
        b: PutPayload,
        o: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(p, b, o).await
    }
    async fn put_multipart_opts(
        &self,
        p: &Path,
        o: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(p, o).await
    }
    async fn get_opts(&self, p: &Path, o: GetOptions) -> object_store::Result<GetResult> {
        // A HEAD (`o.head`) returns no body, whatever range it reports.
        let head = o.head;
        let r = self.inner.get_opts(p, o).await?;
        if !head {
            self.bytes
                .fetch_add(r.range.end - r.range.start, Ordering::Relaxed);
        }
        Ok(r)
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(&self, from: &Path, to: &Path, o: CopyOptions) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, o).await
    }
}

#[tokio::test]
async fn count_reads_headers_only_through_the_store() -> Res {
    let bytes = Arc::new(AtomicU64::new(0));
    let store = Counting {
        inner: InMemory::new(),
        bytes: bytes.clone(),
    };
    let files = 4u64;
    for k in 0..files {
        let mut buf = Vec::new();
        Array1::<f64>::from_elem(1 << 17, k as f64).write_npy_to(&mut buf)?;
        store
            .put(&Path::from(format!("shards/{k}.npy")), buf.into())
            .await?;
    }
    let ctx = SessionContext::new();
    let url = url::Url::parse("mem://bucket/")?;
    ctx.register_object_store(&url, Arc::new(store));
    ctx.register_npy("t", "mem://bucket/shards/", NpyReadOptions::default())
        .await?;
    bytes.store(0, Ordering::Relaxed);
    let b = query(&ctx, "SELECT count(*) FROM t").await?;
    assert_eq!(i64_at(&b, 0), (files << 17) as i64);
    let read = bytes.load(Ordering::Relaxed);
    // At most one 4 KiB prefix a file a pass (schema, statistics) of the
    // 1 MiB files: no data pages.
    assert!(read <= 2 * files * 4096, "count(*) read {read} bytes");
    // A sum reads the data, once.
    bytes.store(0, Ordering::Relaxed);
    let b = query(&ctx, "SELECT sum(value) FROM t").await?;
    assert_eq!(
        f64_at(&b, 0),
        (0..files).map(|k| (k << 17) as f64).sum::<f64>()
    );
    assert!(bytes.load(Ordering::Relaxed) >= (files * 8) << 17);
    Ok(())
}

#[tokio::test]
async fn fortran_order_rows_are_rows() -> Res {
    let dir = tempfile::tempdir()?;
    // [[1, 2, 3], [4, 5, 6]] in Fortran order: columns first.
    let mut bytes = npy_header_shaped("<i4", "(2, 3)");
    let at = bytes.windows(5).position(|w| w == b"False").unwrap();
    bytes[at..at + 5].copy_from_slice(b"True ");
    for v in [1i32, 4, 2, 5, 3, 6] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let file = dir.path().join("f.npy");
    std::fs::write(&file, &bytes)?;
    let ctx = SessionContext::new();
    ctx.register_npy("t", &path(&file), NpyReadOptions::default())
        .await?;
    let b = query(&ctx, "SELECT value FROM t").await?;
    let field = b[0].schema().field(0).clone();
    let (rows, _) = ndnpy_parquet::arrow::from_tensor(&field, b[0].column(0).clone())?;
    let ndnpy::AnyArray::I32(rows) = rows else {
        panic!("not i32: {rows:?}")
    };
    assert_eq!(rows, array![[1, 2, 3], [4, 5, 6]].into_dyn());
    Ok(())
}

#[tokio::test]
async fn projection_reads_only_the_members_asked() -> Res {
    let bytes = Arc::new(AtomicU64::new(0));
    let store = Counting {
        inner: InMemory::new(),
        bytes: bytes.clone(),
    };
    let n = 10_000usize;
    let mut w = ndnpy::NpzWriter::new(std::io::Cursor::new(Vec::new()));
    w.add("x", &Array1::from_iter((0..n).map(|i| i as f64)))?;
    // 5 MB of a member the query never names.
    w.add("big", &Array2::<f64>::zeros((n, 64)))?;
    let archive = w.finish_into_inner()?.into_inner();
    store.put(&Path::from("z.npz"), archive.into()).await?;
    let ctx = SessionContext::new();
    ctx.register_object_store(&url::Url::parse("mem://b/")?, Arc::new(store));
    ctx.register_npy("z", "mem://b/z.npz", NpyReadOptions::default())
        .await?;
    bytes.store(0, Ordering::Relaxed);
    let b = query(&ctx, "SELECT sum(x) FROM z").await?;
    assert_eq!(f64_at(&b, 0), (n * (n - 1) / 2) as f64);
    let read = bytes.load(Ordering::Relaxed);
    assert!(
        read < (n * 64 * 8 / 10) as u64,
        "read {read} bytes for an 80 kB column"
    );
    Ok(())
}

#[tokio::test]
async fn a_compressed_member_split_in_ranges_is_fetched_once() -> Res {
    // The archive is split into 5 row ranges; its deflated members are read
    // whole by the range that starts the file only. Were each range to
    // decode them and keep its share (same answers), the store would serve
    // the archive more than 5 times.
    let bytes = Arc::new(AtomicU64::new(0));
    let store = Counting {
        inner: InMemory::new(),
        bytes: bytes.clone(),
    };
    let n = 200_003i64;
    let x = Array1::from_iter((0..n).map(|v| v.wrapping_mul(2_654_435_761) % 1_000_003));
    let mut w =
        ndnpy::NpzWriter::new(std::io::Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    w.add("x", &x)?;
    w.add("y", &x.mapv(|v| (v % 7) as f64))?;
    let archive = w.finish_into_inner()?.into_inner();
    let size = archive.len() as u64;
    store.put(&Path::from("d.npz"), archive.into()).await?;
    let config = SessionConfig::new()
        .with_target_partitions(5)
        .with_repartition_file_min_size(1024);
    let ctx = SessionContext::new_with_config(config);
    ctx.register_object_store(&url::Url::parse("mem://b/")?, Arc::new(store));
    ctx.register_npy("d", "mem://b/d.npz", NpyReadOptions::default())
        .await?;
    let plan = query(&ctx, "EXPLAIN SELECT sum(x) FROM d").await?;
    let shown = datafusion::arrow::util::pretty::pretty_format_batches(&plan)?.to_string();
    assert!(shown.contains("d.npz:0.."), "no ranges in {shown}");
    bytes.store(0, Ordering::Relaxed);
    let b = query(&ctx, "SELECT sum(x), count(*), sum(y) FROM d").await?;
    assert_eq!(i64_at(&b, 0), x.sum());
    assert_eq!(i64_at(&b, 1), n);
    assert_eq!(f64_at(&b, 2), x.iter().map(|v| (v % 7) as f64).sum::<f64>());
    let read = bytes.load(Ordering::Relaxed);
    assert!(read >= size / 2, "read {read} of {size} bytes");
    // The members once (the range that starts the file), and the other 4
    // ranges opening the archive: its last 64 KiB (the end record's
    // search, as zipfile's) and each member's headers through the reader's
    // 32 KiB buffer: about 2.3 times the archive in all. Each range
    // decoding every member would ask for more than 5 times.
    assert!(
        read < 3 * size,
        "read {read} bytes of a {size}-byte archive"
    );
    Ok(())
}
