//! Outputs bound for a store (`convert ... s3://bucket/out.npz`): written
//! to a local file first and uploaded by parts once the command has
//! succeeded, so that a failed command leaves no object behind. (Inputs are
//! read where they are: `source.rs`.)

use crate::error::{CliError, CliResult};
use ndnpy_store::{blocking, is_url, Config, Location};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

    /// A local path for the output `arg` when it is a URL, uploaded by
    /// [`Remote::finish`].
    pub(crate) fn output(&mut self, arg: &str) -> CliResult<String> {
        if !is_url(arg) {
            return Ok(arg.to_owned());
        }
        let path = self.local_path(arg)?;
        self.uploads.push((path.clone(), arg.to_owned()));
        let local = path.display().to_string();
        // A folder's URL may end with `/`; the files in it are named with
        // one `/` after it.
        self.aliases
            .push((local.clone(), arg.trim_end_matches('/').to_owned()));
        Ok(local)
    }

    /// (local stand-in, URL) pairs, for output to name the URLs.
    pub(crate) fn aliases(&self) -> Vec<(String, String)> {
        self.aliases.clone()
    }

    /// Uploads the outputs bound for stores: a file as the object it
    /// stands for, a folder (`convert --split`) as one object per file
    /// under the URL, at the file's path inside the folder.
    pub(crate) fn finish(self) -> CliResult<()> {
        for (path, url) in &self.uploads {
            if !path.is_dir() {
                upload(path, url)?;
                continue;
            }
            let mut files = Vec::new();
            walk(path, &mut files).map_err(|e| CliError::io(path, e))?;
            for file in files {
                let inside = file.strip_prefix(path).expect("walked from the folder");
                let name = inside
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                upload(&file, &format!("{}/{name}", url.trim_end_matches('/')))?;
            }
        }
        Ok(())
    }
}

/// The files below `dir`, sorted.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

/// One local file uploaded by parts to `url`.
fn upload(path: &Path, url: &str) -> CliResult<()> {
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
    result.map_err(|e| CliError::usage(format!("{url}: {e}")))
}
