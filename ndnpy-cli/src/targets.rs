//! File arguments as paths: glob patterns the shell left alone expanded,
//! and `ARCHIVE.npz:MEMBER` (or `.safetensors:`) split into the archive and
//! the member.

use crate::error::{CliError, CliResult};
use crate::source;
use std::path::{Path, PathBuf};

/// Expands patterns the shell left alone; plain paths pass through.
pub(crate) fn expand(args: &[String]) -> CliResult<Vec<PathBuf>> {
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
pub(crate) fn split_member(arg: &Path) -> (PathBuf, Option<String>) {
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
pub(crate) fn member_of(path: &Path, key: Option<&str>) -> CliResult<(PathBuf, Option<String>)> {
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
