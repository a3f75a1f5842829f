//! `ndnpy-ballista`: Ballista's scheduler and executor, with the codecs
//! that carry NumPy tables and scans in their plans.
//!
//! ```text
//! ndnpy-ballista scheduler [--bind HOST] [--port 50050] [--min-executors 1]
//!                          [--job-data-cleanup-secs 300]
//! ndnpy-ballista executor  [--bind HOST] [--port 50051] [--grpc-port 50052]
//!                          [--scheduler HOST:50050] [--slots N] [--work-dir DIR]
//! ```
//!
//! With the default feature `cloud`, tables at `s3://`, `gs://`, `az://`
//! and `http(s)://` URLs read in both: each process makes their stores
//! from its own environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`) as plans ask
//! for them ([`ndnpy_datafusion::EnvStoreRegistry`]).
//!
//! One binary with two subcommands rather than two binaries: both link
//! DataFusion and Ballista, and one link of that size is what a build pays
//! (twice the disk and link time otherwise), for two thin `main`s.

use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use ndnpy_datafusion::ballista::{NpyLogicalCodec, NpyPhysicalCodec};
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

const USAGE: &str = "usage:
  ndnpy-ballista scheduler [--bind HOST] [--port 50050] [--min-executors 1] [--job-data-cleanup-secs 300]
  ndnpy-ballista executor  [--bind HOST] [--port 50051] [--grpc-port 50052] [--scheduler HOST:50050]
                           [--slots N] [--work-dir DIR]

Ballista's scheduler and executor with the codecs of NumPy tables (ndnpy-datafusion).
--min-executors: executors registered before the scheduler's GET /readyz answers 200.
--job-data-cleanup-secs: when executors drop a finished job's shuffle files (0: never).
--slots: tasks an executor runs at once (default: its cores).
Tables at s3://, gs://, az:// and http(s):// URLs read with the credentials and endpoints in
this process's environment (AWS_* / GOOGLE_* / AZURE_*), as in ndnpy-sql.";

/// `--flag value` pairs after the subcommand.
fn flags(args: &[String], known: &[&str]) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let name = flag.trim_start_matches("--");
        if !flag.starts_with("--") || !known.contains(&name) {
            return Err(format!("unknown option {flag}"));
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        out.insert(name.to_owned(), value.clone());
    }
    Ok(out)
}

fn number<T: std::str::FromStr>(
    f: &HashMap<String, String>,
    name: &str,
    default: T,
) -> Result<T, String> {
    match f.get(name) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| format!("--{name} {v}: not a number")),
    }
}

async fn scheduler(args: &[String]) -> Result<(), String> {
    let f = flags(
        args,
        &["bind", "port", "min-executors", "job-data-cleanup-secs"],
    )?;
    let bind = f.get("bind").cloned().unwrap_or_else(|| "127.0.0.1".into());
    let port = number(&f, "port", 50050u16)?;
    let config = SchedulerConfig {
        bind_host: bind.clone(),
        external_host: bind.clone(),
        bind_port: port,
        min_ready_executors: number(&f, "min-executors", 1usize)?,
        finished_job_data_clean_up_interval_seconds: number(&f, "job-data-cleanup-secs", 300u64)?,
        override_logical_codec: Some(Arc::new(NpyLogicalCodec::default())),
        override_physical_codec: Some(Arc::new(NpyPhysicalCodec::default())),
        // The scheduler lists a table's files as it plans: object storage
        // URLs need their stores here too.
        #[cfg(feature = "cloud")]
        override_session_builder: Some(Arc::new(|config| {
            let state = ballista_core::utils::default_session_builder(config)?;
            Ok(
                datafusion::execution::SessionStateBuilder::new_from_existing(state)
                    .with_runtime_env(ndnpy_datafusion::EnvStoreRegistry::runtime()?)
                    .build(),
            )
        })),
        ..SchedulerConfig::default()
    };
    let addr = format!("{bind}:{port}")
        .parse()
        .map_err(|e| format!("--bind {bind}: {e}"))?;
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(|e| e.to_string())?;
    start_server(cluster, addr, Arc::new(config))
        .await
        .map_err(|e| e.to_string())
}

async fn executor(args: &[String]) -> Result<(), String> {
    let known = [
        "bind",
        "port",
        "grpc-port",
        "scheduler",
        "slots",
        "work-dir",
    ];
    let f = flags(args, &known)?;
    let bind = f.get("bind").cloned().unwrap_or_else(|| "127.0.0.1".into());
    let scheduler = f
        .get("scheduler")
        .cloned()
        .unwrap_or_else(|| "localhost:50050".into());
    let (scheduler_host, scheduler_port) = match scheduler.rsplit_once(':') {
        Some((host, port)) => (
            host.to_owned(),
            port.parse()
                .map_err(|_| format!("--scheduler {scheduler}: bad port"))?,
        ),
        None => (scheduler.clone(), 50050),
    };
    let work_dir = f.get("work-dir").cloned();
    #[cfg(feature = "cloud")]
    let stores: Arc<dyn datafusion::execution::object_store::ObjectStoreRegistry> =
        Arc::new(ndnpy_datafusion::EnvStoreRegistry::default());
    let config = ExecutorProcessConfig {
        bind_host: bind.clone(),
        external_host: Some(bind),
        port: number(&f, "port", 50051u16)?,
        grpc_port: number(&f, "grpc-port", 50052u16)?,
        scheduler_host,
        scheduler_port,
        // Started beside its scheduler, it retries for a while.
        scheduler_connect_timeout_seconds: 60,
        vcores: number(&f, "slots", 0usize)?,
        work_dir: work_dir.clone(),
        override_logical_codec: Some(Arc::new(NpyLogicalCodec::default())),
        override_physical_codec: Some(Arc::new(NpyPhysicalCodec::default())),
        // Executors read the rows by the table's URLs: their stores are
        // made from the environment as tasks ask for them, one registry for
        // every session (its clients kept). Spill files go to the work
        // folder when one is given, else to the system's temporary folder.
        #[cfg(feature = "cloud")]
        override_runtime_producer: Some(Arc::new(move |_| {
            let runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
                .with_object_store_registry(stores.clone());
            let runtime = match &work_dir {
                Some(dir) => runtime.with_temp_file_path(dir),
                None => runtime,
            };
            runtime.build_arc()
        })),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = match args.split_first() {
        Some((c, rest)) if c == "scheduler" || c == "executor" => (c.clone(), rest.to_vec()),
        Some((c, _)) if c == "-h" || c == "--help" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ndnpy-ballista: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        if command == "scheduler" {
            scheduler(&rest).await
        } else {
            executor(&rest).await
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ndnpy-ballista {command}: {e}");
            ExitCode::FAILURE
        }
    }
}
