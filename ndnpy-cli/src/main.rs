//! `ndnpy`: look inside, check, convert and compare NumPy `.npy`/`.npz`
//! files without loading them into memory or running pickled code.
#![forbid(unsafe_code)]

mod cmd;
mod error;
mod gather;
mod input;
mod output;
mod parquet;
mod reinterpret;
mod remote;
mod repr;
mod safetensors;
mod settings;
mod slice;
mod source;
mod tables;
mod values;

use clap::{Parser, Subcommand};
use error::{CliError, CliResult, EXIT_OK, EXIT_PROBLEM, EXIT_USAGE};
use output::{indented, progress_bar, Outcome};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The text after every command's help: its examples, then this.
macro_rules! exit_codes {
    () => {
        "Exit codes:
  0  success: every file is valid (and, for diff, the arrays are equal)
  1  a problem was found: an invalid or truncated file, a pickled object array (check), differences (diff)
  2  usage error, or a file that cannot be opened, read or written

FILE arguments may be glob patterns ('data/**/*.npy'), expanded by ndnpy when the shell did not.
Members of an .npz archive are named ARCHIVE:MEMBER in the output, and
ARCHIVE.npz:MEMBER is accepted wherever --key is.
FILE arguments may also be URLs (s3://, gs://, az://, https://, file://), read by
ranged GETs; outputs bound for a URL are uploaded once the command succeeds."
    };
}

const EXIT_CODES: &str = exit_codes!();

/// `--help` of one command: examples, then the exit codes.
macro_rules! help {
    ($($line:literal),+ $(,)?) => {
        concat!("Examples:\n", $("  ", $line, "\n",)+ "\n", exit_codes!())
    };
}

#[derive(Parser)]
#[command(name = "ndnpy", version, about = "Look inside, check, convert and compare NumPy .npy/.npz files (never loads whole files, never runs pickled code)", after_help = EXIT_CODES)]
struct Cli {
    /// Machine-readable output: one JSON document on stdout.
    #[arg(long, global = true)]
    json: bool,
    /// Longest .npy header accepted, in bytes (NumPy's max_header_size; default
    /// 10000, as np.load). Headers of wide record dtypes need more.
    #[arg(long, global = true, value_name = "BYTES")]
    max_header_size: Option<usize>,
    /// Most values of zero size (dtypes such as '|S0', '<U0', '|V0') accepted
    /// from headers: each costs memory although the file holds nothing for
    /// it (default 1048576; NumPy has no limit).
    #[arg(long, global = true, value_name = "COUNT")]
    max_zero_size_elements: Option<u64>,
    /// How Python 2 str values in object arrays are read (np.load's encoding):
    /// latin1 (the default here, what NumPy advises for Python 2 files), ascii
    /// (np.load's default: an error for other bytes) or bytes.
    #[arg(long, global = true, value_enum, default_value_t = EncodingArg::Latin1)]
    pickle_encoding: EncodingArg,
    /// Read objects of classes outside the pickle reader's closed list as inert
    /// data (class name, arguments and state; nothing is called), instead of
    /// refusing them; convert writes them back as equivalent pickles.
    #[arg(long, global = true)]
    opaque: bool,
    /// Read raw items as this ml_dtypes format, giving float32 values (what
    /// JAX sees): np.save writes bfloat16 as '<V2', float8_e4m3fn as '<V1'
    /// and float8_e5m2 as '<f1'. Other arrays are read as they are. Give it
    /// twice (a 2-byte and a 1-byte format) for files holding both.
    #[arg(long = "as", global = true, value_enum, value_name = "TYPE")]
    as_type: Vec<reinterpret::AsType>,
    #[command(subcommand)]
    command: Command,
}

/// `--pickle-encoding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum EncodingArg {
    Ascii,
    Latin1,
    Bytes,
}

#[derive(Subcommand)]
enum Command {
    /// Header facts: version, dtype (records as a tree), shape, order, data offset and
    /// alignment, room to grow in place, pickled or not; for .npz one row per member;
    /// for a Parquet file (pandas DataFrame) its columns with pandas types and the index.
    #[command(after_help = help!("ndnpy info weights.npy", "ndnpy info 'runs/**/*.npz'", "ndnpy --json info s3://bucket/ckpt.npz", "ndnpy info frame.parquet"))]
    Info {
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Print values as NumPy's repr does (summarised with ... beyond 1000 elements),
    /// reading only the bytes it prints (object arrays: the whole pickle, through
    /// ndnpy's own reader, which runs no code).
    #[command(after_help = help!("ndnpy show a.npy", "ndnpy show --slice '0:5, :, -1' a.npy", "ndnpy show suite.npz:smooth_f64", "ndnpy show --key x --full archive.npz"))]
    Show {
        #[arg(required = true)]
        files: Vec<String>,
        /// NumPy indexing, e.g. "0:5, :, -1" or "..., 2".
        #[arg(long, allow_hyphen_values = true)]
        slice: Option<String>,
        /// Only this member of an .npz archive.
        #[arg(long)]
        key: Option<String>,
        /// Print every element, never summarise.
        #[arg(long)]
        full: bool,
    },
    /// Count, min, max, mean, std, NaN/±inf per array and per record field, in one
    /// streaming pass with constant memory. Min/max ignore NaN; mean and std
    /// (population) are over the finite values.
    #[command(after_help = help!("ndnpy stats a.npy", "ndnpy stats suite.npz:random_f64", "ndnpy --json stats https://example.org/data.npz"))]
    Stats {
        #[arg(required = true)]
        files: Vec<String>,
        /// Only this member of an .npz archive.
        #[arg(long)]
        key: Option<String>,
    },
    /// Convert: .npy <-> .npz (stored, or --compress), several .npy into one .npz and
    /// back (--split), C <-> Fortran order, byte order, CSV for 1-D/2-D numbers,
    /// Parquet (pandas DataFrame) <-> .npz (one member per column; see
    /// ndnpy_parquet::convert for the mapping). The last argument is the output.
    #[command(after_help = help!("ndnpy convert --compress a.npy b.npy both.npz", "ndnpy convert --compress zstd:5 suite.npz suite_zstd.npz", "ndnpy convert --split both.npz out_dir/", "ndnpy convert suite.npz:image_u8 image.npy", "ndnpy convert --order F --byteorder big a.npy a_f.npy", "ndnpy convert frame.parquet frame.npz"))]
    Convert {
        /// Inputs, then the output (a file, or a folder with --split).
        #[arg(required = true, num_args = 2..)]
        paths: Vec<String>,
        /// Output format (default: from the output's extension).
        #[arg(long, value_enum)]
        to: Option<settings::Format>,
        /// Compress the members of an .npz output: deflate (np.savez_compressed, the
        /// default), or --compress zstd[:LEVEL] (Zstandard: smaller and faster; NumPy
        /// reads it with Python 3.14's zipfile or backports.zstd).
        #[arg(long, value_name = "METHOD", num_args = 0..=1, require_equals = true, default_missing_value = "deflate")]
        compress: Option<String>,
        /// Write each array to OUTPUT/NAME.npy.
        #[arg(long)]
        split: bool,
        /// Memory order of the output data.
        #[arg(long, value_enum)]
        order: Option<settings::OrderArg>,
        /// Byte order of the output data.
        #[arg(long, value_enum)]
        byteorder: Option<settings::ByteOrderArg>,
        /// Only this member of an .npz input.
        #[arg(long)]
        key: Option<String>,
    },
    /// Validate files and folders (recursively): headers, sizes, CRCs, decompression,
    /// pickle safety. One line per problem; exit code 1 if any.
    #[command(after_help = help!("ndnpy check data/", "ndnpy check --allow-pickle objects.npy", "ndnpy --json check s3://bucket/a.npz"))]
    Check {
        #[arg(required = true)]
        paths: Vec<String>,
        /// Accept object arrays (pickled Python objects) instead of reporting them.
        #[arg(long)]
        allow_pickle: bool,
    },
    /// Compare two arrays (or two archives member by member): dtype, shape, values,
    /// first differing indices.
    #[command(after_help = help!("ndnpy diff a.npy b.npy", "ndnpy diff --rtol 1e-6 old.npz new.npz", "ndnpy diff old.npz:w new.npz:w"))]
    Diff {
        a: String,
        b: String,
        /// Relative tolerance.
        #[arg(long, default_value_t = 0.0)]
        rtol: f64,
        /// Absolute tolerance.
        #[arg(long, default_value_t = 0.0)]
        atol: f64,
        /// Only this member of .npz inputs.
        #[arg(long)]
        key: Option<String>,
    },
}

/// Expands patterns the shell left alone; plain paths pass through.
fn expand(args: &[String]) -> CliResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    for a in args {
        let is_pattern =
            a.contains(['*', '?', '[']) && !ndnpy_store::is_url(a) && !Path::new(a).exists();
        if !is_pattern {
            out.push(PathBuf::from(a));
            continue;
        }
        let paths =
            glob::glob(a).map_err(|e| CliError::usage(format!("{a}: invalid pattern: {e}")))?;
        let mut found: Vec<PathBuf> = paths.filter_map(Result::ok).collect();
        if found.is_empty() {
            return Err(CliError::usage(format!(
                "{a}: no file matches this pattern"
            )));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// `ARCHIVE.npz:MEMBER`, as the output names a member: the archive and the
/// member, when the argument is not itself a file and the part before a
/// `.npz:` is an archive (a file, or a URL). Anything else is a path.
fn split_member(arg: &Path) -> (PathBuf, Option<String>) {
    let Some(text) = arg.to_str() else {
        return (arg.to_owned(), None);
    };
    // A name that is itself a file or an object is never split (colons are
    // legal in file names and object keys).
    if arg.exists() || (ndnpy_store::is_url(text) && source::Source::open(arg).is_ok()) {
        return (arg.to_owned(), None);
    }
    // A safetensors file's tensors are named as an archive's members are.
    for suffix in [".npz:", ".safetensors:"] {
        for (at, _) in text.match_indices(suffix) {
            let end = at + suffix.len() - 1;
            let (archive, member) = (&text[..end], &text[end + 1..]);
            if !member.is_empty() && (ndnpy_store::is_url(archive) || Path::new(archive).is_file())
            {
                return (PathBuf::from(archive), Some(member.to_owned()));
            }
        }
    }
    (arg.to_owned(), None)
}

/// The member to read: named by `--key` or in the argument (not both,
/// unless they agree).
fn member_of(path: &Path, key: Option<&str>) -> CliResult<(PathBuf, Option<String>)> {
    let (path, named) = split_member(path);
    match (named, key) {
        (Some(m), Some(k)) if m != k => Err(CliError::usage(format!(
            "{}:{m}: names member '{m}', and --key names '{k}'",
            path.display()
        ))),
        (Some(m), _) => Ok((path, Some(m))),
        (None, k) => Ok((path, k.map(str::to_owned))),
    }
}

fn run(cli: Cli, o: &mut Outcome) -> CliResult<()> {
    match cli.command {
        Command::Info { files } => {
            for path in expand(&files)? {
                if o.json {
                    // An archive's item is written member by member, as
                    // `to_string_pretty` would write the whole object (keys
                    // in order: format, members, path, sparse).
                    let mut head: Option<(String, String)> = None;
                    let mut members = 0usize;
                    let mut each = |m: &serde_json::Value| {
                        if m.get("count").is_some() {
                            o.begin_item();
                            o.raw("  {\n    \"format\": \"npz\",\n    \"members\": [");
                            head = Some((m["path"].to_string(), indented(&m["sparse"], 4)));
                            return;
                        }
                        o.raw(if members == 0 { "\n" } else { ",\n" });
                        o.raw(&indented(m, 6));
                        members += 1;
                    };
                    let result = cmd::info::info(&path, Some(&mut each));
                    if let Some((path, sparse)) = head {
                        let close = if members == 0 { "]" } else { "\n    ]" };
                        o.raw(&format!(
                            "{close},\n    \"path\": {path},\n    \"sparse\": {}\n  }}",
                            sparse.trim_start()
                        ));
                    }
                    match result {
                        Ok(v) if v["format"] != json!("npz") => {
                            if v["truncated"] == json!(true) {
                                o.code = o.code.max(EXIT_PROBLEM);
                            }
                            o.item(v);
                        }
                        Ok(_) => {}
                        Err(e) => o.fail(e),
                    }
                    continue;
                }
                // Text: an archive's members are written as they are read.
                let mut streamed = false;
                let mut each = |m: &serde_json::Value| {
                    if let Some(count) = m.get("count") {
                        streamed = true;
                        o.text(&format!("{}\n", m["path"].as_str().unwrap_or("")));
                        o.text(&cmd::info::render_npz_head(
                            count.as_u64().unwrap_or(0) as usize,
                            &m["sparse"],
                        ));
                    } else {
                        o.text(&cmd::info::render_member(m));
                    }
                };
                match cmd::info::info(&path, Some(&mut each)) {
                    Ok(v) => {
                        if v["truncated"] == json!(true) {
                            o.code = o.code.max(EXIT_PROBLEM);
                        }
                        if !streamed {
                            o.text(&cmd::info::render(&v));
                        }
                    }
                    Err(e) => o.fail(e),
                }
            }
            Ok(())
        }
        Command::Show {
            files,
            slice,
            key,
            full,
        } => {
            let paths = expand(&files)?;
            let many = paths.len() > 1;
            /// Writes one member's repr, with its label when labelled.
            fn emit(o: &mut Outcome, label: &str, shown: ShowResult, labelled: bool) {
                match shown {
                    Ok((text, shape)) => {
                        if labelled {
                            o.text(&format!("{label}:\n"));
                        }
                        o.text(&text);
                        o.text("\n");
                        o.item(json!({"name": label, "shape": shape, "repr": text}));
                    }
                    Err(e) => o.fail(e),
                }
            }
            type ShowResult = CliResult<(String, Vec<usize>)>;
            for path in paths {
                let (path, key) = member_of(&path, key.as_deref())?;
                // Labels are printed when there are several arrays (or an
                // archive): the first result waits until the second arrives
                // or the file ends; the others are written as they come.
                let mut pending: Option<(String, ShowResult)> = None;
                let mut count = 0usize;
                let r = tables::for_each_array(&path, key.as_deref(), |label, opened| {
                    let shown = opened.and_then(|mut op| {
                        cmd::show::show(&mut op, slice.as_deref(), full)
                            .map_err(|m| CliError::problem(format!("{label}: {m}")))
                    });
                    count += 1;
                    if count == 1 {
                        pending = Some((label.to_owned(), shown));
                        return Ok(());
                    }
                    if let Some((l, first)) = pending.take() {
                        emit(o, &l, first, true);
                    }
                    emit(o, label, shown, true);
                    Ok(())
                });
                if let Some((label, shown)) = pending.take() {
                    let labelled =
                        many || label.contains(".npz:") || label.contains(".safetensors:");
                    emit(o, &label, shown, labelled);
                }
                if let Err(e) = r {
                    o.fail(e);
                }
            }
            Ok(())
        }
        Command::Stats { files, key } => {
            let bar = progress_bar();
            for path in expand(&files)? {
                let (path, key) = member_of(&path, key.as_deref())?;
                let r =
                    tables::for_each_valid_array(&path, key.as_deref(), |label, opened, masked| {
                        let result = opened.and_then(|mut op| {
                            cmd::stats::stats(&mut op, &bar)
                                .map(|v| cmd::stats::with_missing(v, masked))
                                .map_err(|e| CliError::lib(&path, None, e))
                                .map_err(|e| CliError {
                                    message: e.message.replacen(
                                        &path.display().to_string(),
                                        label,
                                        1,
                                    ),
                                    code: e.code,
                                })
                        });
                        match result {
                            Ok(mut v) => {
                                // Not over the progress bar (drawn on a terminal).
                                bar.suspend(|| o.text(&cmd::stats::render(label, &v)));
                                v["name"] = json!(label);
                                o.item(v);
                            }
                            Err(e) => o.fail(e),
                        }
                        Ok(())
                    });
                if let Err(e) = r {
                    o.fail(e);
                }
            }
            bar.finish_and_clear();
            Ok(())
        }
        Command::Convert {
            paths,
            to,
            compress,
            split,
            order,
            byteorder,
            key,
        } => {
            // `--compress zstd a.npy out.npz`: the method, not a path.
            let mut paths = paths;
            let mut compress = compress;
            if compress.as_deref() == Some("deflate")
                && paths.len() > 2
                && settings::is_codec_spec(&paths[0])
            {
                compress = Some(paths.remove(0));
            }
            let codec = match &compress {
                Some(spec) => settings::parse_codec(spec).map_err(CliError::usage)?,
                None => ndnpy::Codec::default(),
            };
            let (out, inputs) = paths.split_last().expect("clap requires two paths");
            let mut inputs = expand(inputs)?;
            let mut key = key;
            if let [input] = &mut inputs[..] {
                let (path, member) = member_of(input, key.as_deref())?;
                *input = path;
                key = member;
            } else if let Some(p) = inputs.iter().find(|p| split_member(p).1.is_some()) {
                return Err(CliError::usage(format!(
                    "{}: name one member of one archive, or use --key",
                    p.display()
                )));
            }
            let opts = settings::Options {
                to,
                compress: compress.is_some(),
                codec,
                split,
                order,
                byteorder,
                key,
            };
            // What --json prints if the conversion fails: nothing written.
            o.document = Some(json!({ "written": [] }));
            let written = cmd::convert::convert(&inputs, Path::new(out), &opts)?;
            o.document = Some(json!({ "written": written }));
            for w in &written {
                o.text(&format!("wrote {w}\n"));
            }
            Ok(())
        }
        Command::Check {
            paths,
            allow_pickle,
        } => {
            let mut files = Vec::new();
            for p in expand(&paths)? {
                if let Err(e) = cmd::check::walk(&p, &mut files) {
                    o.fail(CliError::io(&p, e));
                }
            }
            let mut bad = 0;
            for f in &files {
                match cmd::check::check_file(f, allow_pickle) {
                    Ok(problems) => {
                        let ok = problems.is_empty();
                        bad += !ok as usize;
                        for p in &problems {
                            let place = match &p.member {
                                Some(m) => format!("{}:{m}", p.path.display()),
                                None => p.path.display().to_string(),
                            };
                            o.text(&format!("{place}: {}\n", p.message));
                            o.code = o.code.max(EXIT_PROBLEM);
                        }
                        o.item(json!({
                            "path": f.display().to_string(),
                            "ok": ok,
                            "problems": problems.iter().map(|p| json!({"member": p.member, "message": p.message})).collect::<Vec<_>>(),
                        }));
                    }
                    Err(e) => {
                        bad += 1;
                        o.fail(e);
                    }
                }
            }
            eprintln!("checked {} files: {} with problems", files.len(), bad);
            Ok(())
        }
        Command::Diff {
            a,
            b,
            rtol,
            atol,
            key,
        } => {
            let (pa, key_a) = member_of(Path::new(&a), key.as_deref())?;
            let (pb, key_b) = member_of(Path::new(&b), key.as_deref())?;
            // A member named on one side only (`a.npz:x b.npz`) is compared
            // with the member of the same name on the other.
            let (key_a, key_b) = match (key_a, key_b) {
                (Some(x), None) => (Some(x.clone()), Some(x)),
                (None, Some(y)) => (Some(y.clone()), Some(y)),
                both => both,
            };
            let tables = |p: &Path| parquet::is_parquet(p) || safetensors::is_safetensors(p);
            if tables(&pa) || tables(&pb) {
                if key_a != key_b {
                    return Err(CliError::usage(
                        "diff with a Parquet frame or a safetensors file compares arrays of the same name",
                    ));
                }
                return cmd::diff::tables(&pa, &pb, key_a.as_deref(), (rtol, atol), o);
            }
            let ka = input::container_of(&pa)?;
            let kb = input::container_of(&pb)?;
            // Each archive is opened once; members are visited in directory
            // order (those of `a`, then those only in `b`).
            let mut za = if ka == input::Container::Npz {
                Some(input::Npz::open(&pa)?)
            } else {
                None
            };
            let mut zb = if kb == input::Container::Npz {
                Some(input::Npz::open(&pb)?)
            } else {
                None
            };
            // (label, member of a, member of b)
            let mut pairs: Vec<(String, Option<String>, Option<String>)> = Vec::new();
            if let (Some(a), Some(b), None, None) = (&za, &zb, &key_a, &key_b) {
                let na = a.names();
                let in_a: std::collections::HashSet<&String> = na.iter().collect();
                for n in &na {
                    pairs.push((n.clone(), Some(n.clone()), Some(n.clone())));
                }
                for n in b.names().into_iter().filter(|n| !in_a.contains(n)) {
                    pairs.push((n.clone(), Some(n.clone()), Some(n)));
                }
            } else {
                pairs.push((String::new(), key_a.clone(), key_b.clone()));
            }
            let first =
                |z: &Option<input::Npz>| z.as_ref().and_then(|z| z.names().first().cloned());
            let (first_a, first_b) = (first(&za), first(&zb));
            for (name, member_a, member_b) in pairs {
                let label = if name.is_empty() {
                    format!("{} vs {}", pa.display(), pb.display())
                } else {
                    name.clone()
                };
                let ma = member_a.or_else(|| first_a.clone());
                let mb = member_b.or_else(|| first_b.clone());
                let present_a = za
                    .as_ref()
                    .is_none_or(|z| ma.as_ref().is_some_and(|m| z.reader.contains(m)));
                let present_b = zb
                    .as_ref()
                    .is_none_or(|z| mb.as_ref().is_some_and(|m| z.reader.contains(m)));
                if !present_a || !present_b {
                    o.code = o.code.max(EXIT_PROBLEM);
                    let which = if present_a {
                        pb.display()
                    } else {
                        pa.display()
                    };
                    o.text(&format!(
                        "{label}: only in one archive (missing from {which})\n"
                    ));
                    o.item(
                        json!({"name": label, "equal": false, "missing_from": which.to_string()}),
                    );
                    continue;
                }
                let mut oa = reinterpret::apply(match &mut za {
                    Some(z) => z.member(ma.as_deref().unwrap_or(""))?,
                    None => input::open_npy(&pa)?,
                });
                let mut ob = reinterpret::apply(match &mut zb {
                    Some(z) => z.member(mb.as_deref().unwrap_or(""))?,
                    None => input::open_npy(&pb)?,
                });
                cmd::diff::report(o, &label, &mut oa, &mut ob, (rtol, atol))?;
            }
            Ok(())
        }
    }
}

/// Puts a local stand-in in place of an output URL (see `remote.rs`);
/// inputs are read where they are (`source.rs`).
fn localize(mut cli: Cli, remote: &mut remote::Remote) -> CliResult<Cli> {
    if let Command::Convert { paths, .. } = &mut cli.command {
        if let Some(output) = paths.last_mut() {
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
            EncodingArg::Ascii => ndnpy::PickleEncoding::Ascii,
            EncodingArg::Latin1 => ndnpy::PickleEncoding::Latin1,
            EncodingArg::Bytes => ndnpy::PickleEncoding::Bytes,
        });
    input::set_read_options(options);
    if let Err(message) = reinterpret::set(&cli.as_type) {
        eprintln!("ndnpy: {message}");
        std::process::exit(EXIT_USAGE);
    }
    let mut outcome = Outcome::new(json);
    let mut remote = remote::Remote::new();
    let result = localize(cli, &mut remote).and_then(|cli| {
        outcome.aliases = remote.aliases();
        run(cli, &mut outcome)
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
