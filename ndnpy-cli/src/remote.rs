//! Outputs bound for a store (`convert ... s3://bucket/out.npz`): written
//! to a local file first and uploaded by parts once the command has
//! succeeded, so that a failed command leaves no object behind. (Inputs are
//! read where they are: `source.rs`.)

use crate::error::{CliError, CliResult};
use ndnpy_store::{blocking, is_url, Config, Location};
use std::fs::File;
use std::path::PathBuf;
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
