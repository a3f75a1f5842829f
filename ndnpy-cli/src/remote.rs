//! URLs wherever a command takes a path (`s3://`, `gs://`, `az://`,
//! `https://`, `file://`, `memory://`; globs excepted). The commands work
//! on local files, so an object is copied into a local file of its own
//! length at its own offsets, holding only what the command will read: a
//! `.npy` header for `info` (one GET of 64 KiB), the header and the rows a
//! `show --slice` prints (two GETs), everything for the other commands
//! (parallel ranged GETs). Outputs bound for a store are written locally
//! and uploaded by parts once the command has succeeded.

use crate::error::{CliError, CliResult};
use ndnpy_store::{blocking, is_url, Config, Location};
use std::fs::File;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

/// What a command will read of an input.
pub(crate) enum Need<'a> {
    /// The `.npy` header only (`info`).
    Header,
    /// What `show` prints, with this `--slice`.
    Show(Option<&'a str>),
    /// Everything.
    All,
}

/// The first GET: a `.npy` header (and the first rows) whole.
const FIRST: u64 = 64 << 10;

/// The local stand-ins of this run's URLs.
pub(crate) struct Remote {
    dir: Option<tempfile::TempDir>,
    count: usize,
    uploads: Vec<(PathBuf, String)>,
    /// (local stand-in, URL) pairs.
    aliases: Vec<(String, String)>,
}

impl Remote {
    pub(crate) fn new() -> Remote {
        Remote {
            dir: None,
            count: 0,
            uploads: Vec::new(),
            aliases: Vec::new(),
        }
    }

    /// A fresh local path with the URL's file name (so that formats are
    /// still told by extension).
    fn local_path(&mut self, url: &str) -> CliResult<PathBuf> {
        if self.dir.is_none() {
            self.dir = Some(
                tempfile::Builder::new()
                    .prefix("ndnpy-remote")
                    .tempdir()
                    .map_err(|e| CliError::usage(format!("cannot make a temporary folder: {e}")))?,
            );
        }
        let dir = self
            .dir
            .as_ref()
            .expect("made above")
            .path()
            .join(self.count.to_string());
        self.count += 1;
        std::fs::create_dir_all(&dir).map_err(|e| CliError::io(&dir, e))?;
        let name = url
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .filter(|n| !n.is_empty())
            .unwrap_or("object");
        Ok(dir.join(name))
    }

    /// `arg` itself when it is not a URL; else a local file holding what
    /// `need` says of the object.
    pub(crate) fn input(&mut self, arg: &str, need: Need<'_>) -> CliResult<String> {
        if !is_url(arg) {
            return Ok(arg.to_owned());
        }
        let location = Location::parse(arg).map_err(|e| CliError::usage(e.to_string()))?;
        let path = self.local_path(arg)?;
        let file = File::create(&path).map_err(|e| CliError::io(&path, e))?;
        let npy = arg.ends_with(".npy");
        let bar = crate::output::progress_bar();
        let shown = bar.clone();
        let config = Config::default().progress(Arc::new(move |n| shown.inc(n)));
        let result = blocking::download(
            &location,
            &file,
            FIRST,
            |len, head| {
                bar.set_length(len);
                match need {
                    Need::Header if npy => Vec::new(),
                    Need::Show(slice) if npy => show_ranges(len, head, slice),
                    // The first GET brought the first bytes already.
                    _ => std::iter::once(FIRST.min(len)..len).collect(),
                }
            },
            config,
        );
        bar.finish_and_clear();
        result.map_err(|e| CliError::usage(format!("{arg}: {e}")))?;
        let local = path.display().to_string();
        self.aliases.push((local.clone(), arg.to_owned()));
        Ok(local)
    }

    /// A local path for the output `arg` when it is a URL, uploaded by
    /// [`Remote::finish`].
    pub(crate) fn output(&mut self, arg: &str) -> CliResult<String> {
        if !is_url(arg) {
            return Ok(arg.to_owned());
        }
        let path = self.local_path(arg)?;
        self.uploads.push((path.clone(), arg.to_owned()));
        let local = path.display().to_string();
        self.aliases.push((local.clone(), arg.to_owned()));
        Ok(local)
    }

    /// (local stand-in, URL) pairs, for output to name the URLs.
    pub(crate) fn aliases(&self) -> Vec<(String, String)> {
        self.aliases.clone()
    }

    /// Uploads the outputs bound for stores.
    pub(crate) fn finish(self) -> CliResult<()> {
        for (path, url) in &self.uploads {
            let location = Location::parse(url).map_err(|e| CliError::usage(e.to_string()))?;
            let file = File::open(path).map_err(|e| CliError::io(path, e))?;
            let bar = crate::output::progress_bar();
            if let Ok(meta) = file.metadata() {
                bar.set_length(meta.len());
            }
            let shown = bar.clone();
            let config = Config::default().progress(Arc::new(move |n| shown.inc(n)));
            let result = blocking::upload(&location, file, config);
            bar.finish_and_clear();
            result.map_err(|e| CliError::usage(format!("{url}: {e}")))?;
        }
        Ok(())
    }
}

/// The byte ranges `show` reads of a C-order `.npy`: the rows the first
/// component of `slice` picks, or, without a slice, the first and last three
/// rows that a summarised repr prints. Anything else: everything.
fn show_ranges(len: u64, head: &[u8], slice: Option<&str>) -> Vec<Range<u64>> {
    let all: Vec<Range<u64>> = std::iter::once(0..len).collect();
    let mut rest = head;
    let Ok(header) = ndnpy::Header::read_from(&mut rest) else {
        return all;
    };
    let offset = (head.len() - rest.len()) as u64;
    if header.fortran_order || header.shape.is_empty() || header.dtype.has_object() {
        return all;
    }
    let (Ok(data_len), Ok(count)) = (header.data_len(), header.num_elements()) else {
        return all;
    };
    let rows = header.shape[0] as i64;
    if rows == 0 || data_len == 0 {
        return Vec::new();
    }
    let row = data_len as u64 / rows as u64;
    let picked: Vec<Range<i64>> = match slice {
        None if count <= 1000 || rows <= 6 => std::iter::once(0..rows).collect(),
        None => vec![0..3, rows - 3..rows],
        Some(s) => match first_rows(s.split(',').next().unwrap_or("").trim(), rows) {
            Some(r) => vec![r],
            None => return all,
        },
    };
    picked
        .into_iter()
        .filter(|r| r.start < r.end)
        .map(|r| offset + r.start as u64 * row..offset + r.end as u64 * row)
        .collect()
}

/// The rows of axis 0 that one slice component picks (`i`, `a:b`, `a:`,
/// `:b`, negative counting from the end); `None` for anything else.
fn first_rows(part: &str, rows: i64) -> Option<Range<i64>> {
    let at = |text: &str, default: i64| -> Option<i64> {
        let text = text.trim();
        if text.is_empty() {
            return Some(default);
        }
        let v: i64 = text.parse().ok()?;
        Some(if v < 0 {
            (rows + v).max(0)
        } else {
            v.min(rows)
        })
    };
    if part.is_empty() {
        return Some(0..rows);
    }
    match part.split(':').collect::<Vec<_>>()[..] {
        [i] => {
            let i = at(i, 0)?;
            (i < rows).then_some(i..i + 1)
        }
        [a, b] => Some(at(a, 0)?..at(b, rows)?),
        [a, b, ""] => Some(at(a, 0)?..at(b, rows)?),
        _ => None,
    }
}
