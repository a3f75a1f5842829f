//! A Ballista cluster of separate processes on this machine: a scheduler
//! and two executors (`ndnpy-ballista`), queries over a folder of `.npy`
//! shards of a record dtype and an `.npz`, answers equal to one local
//! `SessionContext`'s; both executors must have run tasks (each leaves its
//! shuffle files in its own work folder). `ndnpy-sql --ballista` too.
#![cfg(feature = "ballista")]

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{SessionConfig, SessionContext};
use ndnpy_datafusion::{ballista, NpyReadOptions, SessionContextExt};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

type Res<T = ()> = Result<T, Box<dyn std::error::Error>>;

const BIN: &str = env!("CARGO_BIN_EXE_ndnpy-ballista");

/// How long the cluster may take to come up before the test fails, saying
/// what each process wrote (a bound on waiting, not a speed check).
const STARTUP: Duration = Duration::from_secs(120);

/// The processes, killed when the test ends, passes or panics.
struct Cluster {
    children: Vec<(String, Child)>,
    logs: PathBuf,
    scheduler_port: u16,
    work_dirs: Vec<PathBuf>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A port nobody listens on now (the OS's pick; freed for the child).
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

impl Cluster {
    fn spawn(&mut self, name: &str, args: &[String]) -> Res {
        let out = std::fs::File::create(self.logs.join(format!("{name}.log")))?;
        let child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()?;
        self.children.push((name.to_owned(), child));
        Ok(())
    }

    /// What every process wrote, for failure messages.
    fn logs(&self) -> String {
        let mut all = String::new();
        for (name, _) in &self.children {
            let log = std::fs::read_to_string(self.logs.join(format!("{name}.log")));
            all += &format!("--- {name}:\n{}\n", log.unwrap_or_default());
        }
        all
    }

    /// A scheduler (ready once two executors registered) and two executors
    /// of one task slot each, so a stage of several tasks needs both.
    fn start(root: &Path) -> Res<Cluster> {
        let logs = root.join("logs");
        std::fs::create_dir_all(&logs)?;
        let mut cluster = Cluster {
            children: Vec::new(),
            logs,
            scheduler_port: free_port(),
            work_dirs: Vec::new(),
        };
        let port = cluster.scheduler_port.to_string();
        cluster.spawn(
            "scheduler",
            &["scheduler", "--port", &port, "--min-executors", "2"]
                .map(String::from)
                // Keep shuffle files: they show which executor ran tasks.
                .into_iter()
                .chain(["--job-data-cleanup-secs".into(), "0".into()])
                .collect::<Vec<_>>(),
        )?;
        for e in 0..2 {
            let work = root.join(format!("work{e}"));
            std::fs::create_dir_all(&work)?;
            let args = [
                "executor".to_owned(),
                "--port".into(),
                free_port().to_string(),
                "--grpc-port".into(),
                free_port().to_string(),
                "--scheduler".into(),
                format!("127.0.0.1:{port}"),
                "--slots".into(),
                "1".into(),
                "--work-dir".into(),
                work.to_str().unwrap().into(),
            ];
            cluster.spawn(&format!("executor{e}"), &args)?;
            cluster.work_dirs.push(work);
        }
        cluster.wait_ready()?;
        Ok(cluster)
    }

    /// Polls the scheduler's `GET /readyz` until it answers 200 (two
    /// executors registered); fails if a process exits or time runs out.
    fn wait_ready(&mut self) -> Res {
        let start = Instant::now();
        let mut last = String::new();
        while start.elapsed() < STARTUP {
            for (name, child) in &mut self.children {
                if let Some(status) = child.try_wait()? {
                    let name = name.clone();
                    return Err(format!("{name} exited ({status})\n{}", self.logs()).into());
                }
            }
            match readyz(self.scheduler_port) {
                Ok(answer) if answer.starts_with("HTTP/1.1 200") => return Ok(()),
                Ok(answer) => last = answer,
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(format!(
            "the cluster was not ready after {STARTUP:?}; last /readyz: {last}\n{}",
            self.logs()
        )
        .into())
    }
}

fn readyz(port: u16) -> std::io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut answer = String::new();
    s.read_to_string(&mut answer)?;
    Ok(answer)
}

/// An `.npy` (version 1.0) of `n` records `[('k', '<i4'), ('x', '<f8')]`.
fn records(rows: impl ExactSizeIterator<Item = (i32, f64)>) -> Vec<u8> {
    let dict = format!(
        "{{'descr': [('k', '<i4'), ('x', '<f8')], 'fortran_order': False, 'shape': ({},), }}",
        rows.len()
    );
    let mut h = dict.into_bytes();
    let total = (10 + h.len() + 1).div_ceil(64) * 64;
    h.resize(total - 10 - 1, b' ');
    h.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(&h);
    for (k, x) in rows {
        out.extend_from_slice(&k.to_le_bytes());
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// Eight shards of records (k in 0..7, x = i / 2, so every sum is exact in
/// any order) and an `.npz` of the keys' weights.
fn write_data(root: &Path) -> Res<(String, String)> {
    let shards = root.join("shards");
    std::fs::create_dir_all(&shards)?;
    for s in 0..8 {
        let rows = (s * 5000..(s + 1) * 5000).map(|i: i32| (i % 7, f64::from(i) * 0.5));
        std::fs::write(shards.join(format!("{s}.npy")), records(rows))?;
    }
    let npz = root.join("w.npz");
    let mut w = ndnpy::NpzWriter::create(&npz)?;
    w.add("k", &ndarray::Array1::from_iter(0..7i32))?;
    w.add(
        "w",
        &ndarray::Array1::from_iter((0..7).map(|k| (k % 3) as f64 + 0.5)),
    )?;
    w.finish()?;
    Ok((
        format!("{}/", shards.to_str().unwrap()),
        npz.to_str().unwrap().to_owned(),
    ))
}

const QUERIES: &[&str] = &[
    "SELECT count(*) AS n FROM t",
    "SELECT sum(x), avg(x), min(x), max(x), min(k), max(k) FROM t",
    "SELECT k, count(*), sum(x), avg(x) FROM t GROUP BY k ORDER BY k",
    "SELECT count(*), sum(x) FROM t WHERE x > 1000 AND k <> 3",
    "SELECT k, x FROM t ORDER BY x DESC LIMIT 5",
    "SELECT sum(w), count(*) FROM z",
    "SELECT z.w, count(*), sum(t.x) FROM t JOIN z ON t.k = z.k GROUP BY z.w ORDER BY z.w",
];

/// The `.arrow` files under `dir`.
fn arrow_files(dir: &Path) -> Res<usize> {
    let mut n = 0;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            n += arrow_files(&path)?;
        } else if path.extension().is_some_and(|e| e == "arrow") {
            n += 1;
        }
    }
    Ok(n)
}

fn config() -> SessionConfig {
    // Four partitions: the shards make stages of several tasks, more than
    // one executor's single slot.
    SessionConfig::new().with_target_partitions(4)
}

async fn answers(ctx: &SessionContext) -> Res<Vec<String>> {
    let mut out = Vec::new();
    for q in QUERIES {
        let batches = ctx.sql(q).await?.collect().await?;
        out.push(format!("{q}\n{}", pretty_format_batches(&batches)?));
    }
    Ok(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_and_two_executors_answer_as_one_process() -> Res {
    let root = tempfile::tempdir()?;
    let (shards, npz) = write_data(root.path())?;

    let local = SessionContext::new_with_config(config());
    local
        .register_npy("t", &shards, NpyReadOptions::default())
        .await?;
    local
        .register_npy("z", &npz, NpyReadOptions::default())
        .await?;
    let expected = answers(&local).await?;
    assert!(expected[0].contains("| 40000 |"), "{}", expected[0]);

    let cluster = Cluster::start(root.path())?;
    let url = format!("df://127.0.0.1:{}", cluster.scheduler_port);
    let remote = ballista::remote_context(&url, config()).await?;
    remote
        .register_npy("t", &shards, NpyReadOptions::default())
        .await?;
    remote
        .register_npy("z", &npz, NpyReadOptions::default())
        .await?;
    let got = answers(&remote).await;
    let got = got.map_err(|e| format!("{e}\n{}", cluster.logs()))?;
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g, e);
    }

    // `CREATE EXTERNAL TABLE … STORED AS NPY` on the client travels too.
    remote
        .sql(&format!(
            "CREATE EXTERNAL TABLE s STORED AS NPY LOCATION '{shards}'"
        ))
        .await?;
    let b = remote
        .sql("SELECT count(*) AS n FROM s")
        .await?
        .collect()
        .await?;
    assert_eq!(
        pretty_format_batches(&b)?.to_string(),
        expected[0].split_once('\n').unwrap().1
    );

    // Both executors ran tasks: each wrote shuffle output (`*.arrow` under
    // JOB/STAGE/PARTITION) in its own work folder, which holds nothing else
    // but DataFusion's empty spill folders.
    for dir in &cluster.work_dirs {
        let outputs = arrow_files(dir)?;
        assert!(
            outputs > 0,
            "no task ran on the executor of {}\n{}",
            dir.display(),
            cluster.logs()
        );
    }

    // The command line: the same answer from the cluster as in-process.
    let sql = |extra: &[&str]| -> Res<String> {
        let out = Command::new(env!("CARGO_BIN_EXE_ndnpy-sql"))
            .args(["-t", &format!("t={shards}"), "--format", "csv"])
            .args(extra)
            .arg(QUERIES[2])
            .output()?;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(String::from_utf8(out.stdout)?)
    };
    assert_eq!(sql(&["--ballista", &url])?, sql(&[])?);
    Ok(())
}

/// The codecs alone: a scan in row ranges of one file (and a projection and
/// filter) encoded and decoded reads the same rows; a table sent as the
/// client sends it reads the same; cut or garbled bytes behind our tag are
/// errors, not panics.
#[tokio::test]
async fn codecs_round_trip_and_refuse_garbage() -> Res {
    use datafusion::physical_plan::collect;
    use datafusion_proto::bytes::{
        logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
        physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
    };
    use datafusion_proto::logical_plan::LogicalExtensionCodec;
    use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};
    use ndnpy::WriteNpy;
    use ndnpy_datafusion::ballista::{NpyLogicalCodec, NpyPhysicalCodec};

    let dir = tempfile::tempdir()?;
    let file = dir.path().join("big.npy");
    ndarray::Array1::from_iter(0..100_000i64).write_npy(&file)?;
    let config = SessionConfig::new()
        .with_target_partitions(3)
        .with_repartition_file_min_size(1024);
    let ctx = SessionContext::new_with_config(config);
    ctx.register_npy("t", file.to_str().unwrap(), NpyReadOptions::default())
        .await?;
    let sql = "SELECT sum(value), count(*) FROM t WHERE value % 3 = 1";
    let df = ctx.sql(sql).await?;
    let expected = pretty_format_batches(&df.clone().collect().await?)?.to_string();
    let sum: i64 = (0..100_000i64).filter(|v| v % 3 == 1).sum();
    assert!(expected.contains(&format!("| {sum} ")), "{expected}");

    let physical = NpyPhysicalCodec::default();
    let plan = df.clone().create_physical_plan().await?;
    let bytes = physical_plan_to_bytes_with_extension_codec(plan, &physical)?;
    let plan = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &physical)?;
    let shown = datafusion::physical_plan::displayable(plan.as_ref())
        .indent(true)
        .to_string();
    assert!(shown.contains("3 groups"), "{shown}");
    let got = collect(plan, ctx.task_ctx()).await?;
    assert_eq!(pretty_format_batches(&got)?.to_string(), expected);

    let logical = NpyLogicalCodec::default();
    let bytes = logical_plan_to_bytes_with_extension_codec(df.logical_plan(), &logical)?;
    let plan = logical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &logical)?;
    let got = ctx.execute_logical_plan(plan).await?.collect().await?;
    assert_eq!(pretty_format_batches(&got)?.to_string(), expected);

    let schema = std::sync::Arc::new(datafusion::arrow::datatypes::Schema::empty());
    let task = ctx.task_ctx();
    for garbage in [
        &b"NDNPY1"[..],
        b"NDNPY1\x05\x00\x00\x00ab",
        b"NDNPY1\xff\xff\xff\xff",
        b"NDNPY1\x01\x00\x00\x00\xff\x00\x00\x00\x00",
    ] {
        let t = logical.try_decode_table_provider(garbage, &"t".into(), schema.clone(), &task);
        assert!(t.is_err(), "{garbage:?}");
        let p = physical.try_decode(
            &[garbage, b"\xff\x07"].concat(),
            &[],
            &task,
            &DefaultPhysicalProtoConverter {},
        );
        assert!(p.is_err(), "{garbage:?}");
    }
    Ok(())
}
