//! `ndnpy-sql`: SQL over NumPy files.
//!
//! ```text
//! ndnpy-sql -t t=PATH_OR_URL [-t u=…] [--format table|csv|json] [--ballista df://HOST:PORT] "SELECT …"
//! ```
//!
//! With `--ballista` (feature `ballista`) the query runs on a Ballista
//! cluster of `ndnpy-ballista` processes instead of in this one.
//!
//! A command of its own rather than a subcommand of `ndnpy`: DataFusion's
//! build (BENCHMARKS.md, "Build time": half an hour cold on the 2-core CI
//! machine, 210 crates) would weigh on every build of the CLI, and its
//! arrow 59 would meet the workspace's arrow 60 in one lockfile; so it lives
//! in its own workspace (`ndnpy-datafusion/`), as candle does.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{SessionConfig, SessionContext};
use ndnpy_datafusion::{NpyReadOptions, SessionContextExt};
use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "usage: ndnpy-sql -t NAME=PATH_OR_URL [-t NAME=…] [--format table|csv|json] \
     [--ballista df://HOST:PORT] \"SELECT …\"

Each -t registers a table: an .npy or .npz file, a folder of .npy shards (a dask stack
included), or a glob, as a path or a URL (s3://, gs://, az://, http(s)://; credentials
and endpoints from the environment, AWS_* / GOOGLE_* / AZURE_*); the query runs over them with DataFusion, in this process or, with
--ballista, on the Ballista cluster whose scheduler is there (ndnpy-ballista processes that
see the same paths; built with the `ballista` feature).";

/// What the command line asks.
struct Args {
    tables: Vec<(String, String)>,
    format: String,
    ballista: Option<String>,
    query: String,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut tables = Vec::new();
    let mut format = "table".to_owned();
    let mut query = None;
    let mut ballista = None;
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().ok_or(format!("{what} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "-t" | "--table" => {
                let spec = value(&arg)?;
                let (name, path) = spec
                    .split_once('=')
                    .ok_or(format!("-t {spec}: expected NAME=PATH_OR_URL"))?;
                tables.push((name.to_owned(), path.to_owned()));
            }
            "-f" | "--format" => format = value(&arg)?,
            "--ballista" => ballista = Some(value(&arg)?),
            a if a.starts_with("--format=") => format = a["--format=".len()..].to_owned(),
            a if a.starts_with('-') && a.len() > 1 => return Err(format!("unknown option {a}")),
            _ if query.is_some() => return Err("one query at a time".into()),
            _ => query = Some(arg),
        }
    }
    if !["table", "csv", "json"].contains(&format.as_str()) {
        return Err(format!("--format {format}: expected table, csv or json"));
    }
    let query = query.ok_or("no query given")?;
    Ok(Args {
        tables,
        format,
        ballista,
        query,
    })
}

fn write(batches: &[RecordBatch], format: &str) -> Result<(), Box<dyn std::error::Error>> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match format {
        "csv" => {
            let mut w = datafusion::arrow::csv::Writer::new(&mut out);
            for b in batches {
                w.write(b)?;
            }
        }
        "json" => {
            let mut w = datafusion::arrow::json::LineDelimitedWriter::new(&mut out);
            w.write_batches(&batches.iter().collect::<Vec<_>>())?;
            w.finish()?;
        }
        _ => writeln!(out, "{}", pretty_format_batches(batches)?)?,
    }
    Ok(())
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let config = SessionConfig::new().with_information_schema(true);
    if let Some(url) = &args.ballista {
        return run_remote(url, config, &args).await;
    }
    let ctx = context(config)?;
    ndnpy_datafusion::register_formats(&ctx)?;
    for (name, path) in &args.tables {
        check_url(path)?;
        ctx.register_npy(name, path, NpyReadOptions::default())
            .await?;
    }
    let batches = ctx.sql(&args.query).await?.collect().await?;
    write(&batches, &args.format)
}

/// A context whose object stores are made from the environment as table
/// URLs ask for them (feature `cloud`).
fn context(config: SessionConfig) -> Result<SessionContext, Box<dyn std::error::Error>> {
    #[cfg(feature = "cloud")]
    {
        let runtime = ndnpy_datafusion::EnvStoreRegistry::runtime()?;
        Ok(SessionContext::new_with_config_rt(config, runtime))
    }
    #[cfg(not(feature = "cloud"))]
    Ok(SessionContext::new_with_config(config))
}

/// The query on the Ballista cluster at `url`.
#[cfg(feature = "ballista")]
async fn run_remote(
    url: &str,
    config: SessionConfig,
    args: &Args,
) -> Result<(), Box<dyn std::error::Error>> {
    use ndnpy_datafusion::ballista;
    let ctx = ballista::remote_context(url, config).await?;
    for (name, path) in &args.tables {
        check_url(path)?;
        ctx.register_npy(name, path, NpyReadOptions::default())
            .await?;
    }
    let batches = ctx.sql(&args.query).await?.collect().await?;
    write(&batches, &args.format)
}

#[cfg(not(feature = "ballista"))]
async fn run_remote(
    url: &str,
    _config: SessionConfig,
    _args: &Args,
) -> Result<(), Box<dyn std::error::Error>> {
    Err(format!("--ballista {url}: this ndnpy-sql was built without the `ballista` feature").into())
}

/// Without the feature `cloud`, object storage URLs are refused here with
/// what would read them (DataFusion knows local paths and `file://`
/// itself). With it, the context's registry makes their stores
/// ([`ndnpy_datafusion::EnvStoreRegistry`]).
#[cfg(feature = "cloud")]
fn check_url(_path: &str) -> Result<(), String> {
    Ok(())
}

#[cfg(not(feature = "cloud"))]
fn check_url(path: &str) -> Result<(), String> {
    match path.split_once("://") {
        None | Some(("file", _)) => Ok(()),
        Some((scheme, _)) => Err(format!(
            "{path}: {scheme}:// needs ndnpy-sql built with the `cloud` feature \
             (local paths and file:// URLs are built in)"
        )),
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("ndnpy-sql: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ndnpy-sql: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ndnpy-sql: {e}");
            ExitCode::FAILURE
        }
    }
}
