//! Carrying out a parsed command line: the files each command names, the
//! command's own module (`cmd/`) for each, and what is reported of it.

use crate::cli::{Cli, Command};
use crate::error::{CliError, CliResult, EXIT_PROBLEM};
use crate::output::{indented, progress_bar, Outcome};
use crate::targets::{expand, member_of, split_member};
use crate::{cmd, input, parquet, reinterpret, safetensors, settings, stack, stack_write, tables};
use serde_json::json;
use std::path::Path;

/// Carries out one parsed command, reporting into `o`: each command's
/// files in turn, a failed file recorded and the next one read.
pub(crate) fn run(cli: Cli, o: &mut Outcome) -> CliResult<()> {
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
            shard_rows,
            shard_size,
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
                None => ndnpy::npz::Codec::deflate(),
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
            let cut = match (shard_rows, shard_size) {
                (Some(n), _) => Some(stack_write::Cut::Rows(n)),
                (None, Some(b)) => Some(stack_write::Cut::Bytes(b)),
                (None, None) => None,
            };
            if let Some(cut) = cut {
                if to.is_some()
                    || compress.is_some()
                    || split
                    || order.is_some()
                    || byteorder.is_some()
                {
                    return Err(CliError::usage(
                        "--shard-rows and --shard-size write a dask stack (C order, native byte order); --to, --compress, --split, --order and --byteorder do not apply",
                    ));
                }
                o.document = Some(json!({ "written": [] }));
                let written = stack_write::convert(&inputs, Path::new(out), key.as_deref(), cut)?;
                o.document = Some(json!({ "written": written }));
                o.text(&format!("wrote {}\n", Path::new(out).display()));
                return Ok(());
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
                // A stack folder is one array (its shards checked as one).
                if stack::is_stack(&p) {
                    files.push(p);
                    continue;
                }
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
