//! `ndnpy`: look inside, check, convert and compare NumPy `.npy`/`.npz`
//! files without loading them into memory or running pickled code.
#![forbid(unsafe_code)]

mod cli;
mod cmd;
mod error;
mod gather;
mod input;
mod output;
mod parquet;
mod reinterpret;
mod remote;
mod repr;
mod run;
mod safetensors;
mod settings;
mod slice;
mod source;
mod stack;
mod stack_write;
mod tables;
mod targets;
mod values;

use clap::Parser;
use cli::{Cli, Command, EncodingArg};
use error::{CliResult, EXIT_OK, EXIT_USAGE};
use output::Outcome;

/// Puts a local stand-in in place of an output URL (see `remote.rs`);
/// inputs are read where they are (`source.rs`).
fn localize(mut cli: Cli, remote: &mut remote::Remote) -> CliResult<Cli> {
    if let Command::Convert {
        paths,
        shard_rows,
        shard_size,
        ..
    } = &mut cli.command
    {
        if let Some(output) = paths.last_mut() {
            if (shard_rows.is_some() || shard_size.is_some()) && ndnpy_store::is_url(output) {
                return Err(error::CliError::usage(format!(
                    "{output}: a stack is written to a local folder (not to a URL)"
                )));
            }
            *output = remote.output(output)?;
        }
    }
    Ok(cli)
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    let json = cli.json;
    let mut options = ndnpy::ReadOptions::default();
    if let Some(n) = cli.max_header_size {
        options = options.max_header_len(n);
    }
    if let Some(n) = cli.max_zero_size_elements {
        options = options.max_zero_size_elements(n);
    }
    options = options
        .opaque_objects(cli.opaque)
        .pickle_encoding(match cli.pickle_encoding {
            EncodingArg::Ascii => ndnpy::pickle::PickleEncoding::Ascii,
            EncodingArg::Latin1 => ndnpy::pickle::PickleEncoding::Latin1,
            EncodingArg::Bytes => ndnpy::pickle::PickleEncoding::Bytes,
        });
    input::set_read_options(options);
    stack::set_forced(cli.stack);
    if let Err(message) = reinterpret::set(&cli.as_type) {
        eprintln!("ndnpy: {message}");
        std::process::exit(EXIT_USAGE);
    }
    let mut outcome = Outcome::new(json);
    let mut remote = remote::Remote::new();
    let result = localize(cli, &mut remote).and_then(|cli| {
        outcome.aliases = remote.aliases();
        run::run(cli, &mut outcome)
    });
    let result = match result {
        Ok(()) if outcome.code != EXIT_OK => Ok(()),
        Ok(()) => remote.finish(),
        Err(e) => Err(e),
    };
    source::cleanup();
    let (errors, mut code) = outcome.finish();
    for e in &errors {
        eprintln!("ndnpy: {e}");
    }
    if let Err(e) = result {
        eprintln!("ndnpy: {e}");
        code = code.max(e.code);
    }
    // For the tests that check each archive's directory is read once.
    if std::env::var_os("NDNPY_COUNT_OPENS").is_some() {
        eprintln!(
            "ndnpy: archives opened: {}",
            input::ARCHIVES_OPENED.load(std::sync::atomic::Ordering::Relaxed)
        );
        source::print_counts();
    }
    std::process::exit(code);
}
