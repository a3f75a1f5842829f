//! `ndnpy check`: validates files and folders (recursively): headers, data
//! sizes, CRCs, decompression, and pickle safety (object arrays are
//! reported unless `--allow-pickle`). One line per problem.

use crate::error::CliResult;
use crate::input::{container_of, open_npy, Container, Npz, Opened};

use std::io::Read;
use std::path::{Path, PathBuf};

/// One problem: where, and what.
pub struct Problem {
    pub path: PathBuf,
    pub member: Option<String>,
    pub message: String,
}

/// Files to check under `path`: itself if it is a file, else every
/// `.npy`/`.npz` below it (sorted, symbolic links to folders not followed;
/// for a URL, the objects below it in its store).
pub fn walk(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if crate::source::is_remote(path) {
        // A store's folder is the objects below it, listed in the order a
        // local folder is walked; anything else is checked as an object.
        match crate::source::objects_below(path) {
            Some(below) => out.extend(below.into_iter().filter(|p| has_npy_extension(p))),
            None => out.push(path.to_owned()),
        }
        return Ok(());
    }
    let meta = std::fs::metadata(path)?;
    if !meta.is_dir() {
        out.push(path.to_owned());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        let is_dir = std::fs::symlink_metadata(&p)?.is_dir();
        if is_dir {
            walk(&p, out)?;
        } else if has_npy_extension(&p) {
            out.push(p);
        }
    }
    Ok(())
}

/// Whether a file in a folder is one `check` looks at.
fn has_npy_extension(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("npy" | "npz")
    )
}

fn check_array(opened: &mut Opened<'_>, allow_pickle: bool) -> Option<String> {
    if let Err(e) = opened.check_complete() {
        return Some(e.to_string());
    }
    if opened.is_pickle() {
        // Parsed by ndnpy's own pickle reader (nothing runs): a pickle it
        // refuses is damaged or calls something outside NumPy's constructors.
        match crate::input::read_any(opened).map(drop) {
            // Values the library cannot hold yet (string arrays inside
            // objects) are no sign of damage or danger.
            Ok(()) | Err(ndnpy::Error::UnsupportedDType { .. }) => {}
            Err(e) => {
                return Some(format!(
                    "object array whose pickle cannot be read safely: {e}"
                ))
            }
        }
    }
    if !allow_pickle && opened.header.dtype.has_object() {
        return Some(
            "holds pickled Python objects: loading it with allow_pickle=True runs code (pass --allow-pickle to accept)"
                .into(),
        );
    }
    None
}

/// Checks one file, returning its problems (an unreadable file is one).
pub fn check_file(path: &Path, allow_pickle: bool) -> CliResult<Vec<Problem>> {
    let problem = |member: Option<&str>, message: String| Problem {
        path: path.to_owned(),
        member: member.map(str::to_owned),
        message,
    };
    let mut problems = Vec::new();
    if crate::parquet::is_parquet(path) {
        // A frame: the Parquet reader's checks (pages, sizes, the pandas
        // key), then each array as any other.
        match crate::parquet::arrays(path) {
            Ok(arrays) => {
                for (name, array) in arrays {
                    let message = match crate::tables::opened(&array) {
                        Ok(mut opened) => check_array(&mut opened, true),
                        Err(e) => Some(e.to_string()),
                    };
                    if let Some(m) = message {
                        problems.push(problem(Some(&name), m));
                    }
                }
            }
            Err(e) => problems.push(problem(None, strip_path(path, &e.message))),
        }
        return Ok(problems);
    }
    if crate::safetensors::is_safetensors(path) {
        // The header (read and checked whole), then each tensor as an
        // archive's member.
        let r = crate::safetensors::for_each(path, None, |name, opened| {
            let message = match opened {
                Ok(mut o) => check_array(&mut o, allow_pickle),
                Err(e) => Some(strip_member(&e.message)),
            };
            problems.extend(message.map(|m| problem(Some(name), m)));
            Ok(())
        });
        if let Err(e) = r {
            problems.push(problem(None, strip_path(path, &e.message)));
        }
        return Ok(problems);
    }
    let container = container_of(path)?;
    let ext = path.extension().and_then(|e| e.to_str());
    match (ext, container) {
        (Some("npz"), Container::Npy) => {
            problems.push(problem(None, "named .npz but holds a .npy file".into()))
        }
        (Some("npy"), Container::Npz) => problems.push(problem(
            None,
            "named .npy but holds a zip archive (.npz)".into(),
        )),
        _ => {}
    }
    match container {
        Container::Npy => match open_npy(path) {
            Ok(mut opened) => {
                problems.extend(check_array(&mut opened, allow_pickle).map(|m| problem(None, m)))
            }
            Err(e) => problems.push(problem(None, strip_path(path, &e.message))),
        },
        Container::Npz => {
            let mut npz = match Npz::open(path) {
                Ok(n) => n,
                Err(e) => {
                    problems.push(problem(None, strip_path(path, &e.message)));
                    return Ok(problems);
                }
            };
            for name in npz.names() {
                match npz.member(&name) {
                    Ok(mut opened) => {
                        if let Some(m) = check_array(&mut opened, allow_pickle) {
                            problems.push(problem(Some(&name), m));
                            continue;
                        }
                    }
                    // NumPy returns a member that is not a .npy file as raw
                    // bytes; only one that starts like a .npy file is damaged.
                    Err(e)
                        if e.message.contains("is not a .npy file")
                            && !e.message.contains("\\x93NUM") => {}
                    Err(e) => {
                        problems.push(problem(Some(&name), strip_member(&e.message)));
                        continue;
                    }
                }
                if let Some(m) = check_crc(&mut npz, &name) {
                    problems.push(problem(Some(&name), m));
                }
            }
        }
    }
    Ok(problems)
}

/// Reads member `name` to the end through the library's member reader,
/// which checks its size and CRC-32; memory stays one buffer.
fn check_crc(npz: &mut Npz, name: &str) -> Option<String> {
    let mut member = match npz.reader.member_reader(name) {
        Ok(m) => m,
        Err(e) => return Some(format!("cannot be read: {e}")),
    };
    let declared = member.size();
    let mut buf = vec![0u8; 1 << 16];
    let mut got = 0u64;
    loop {
        match member.read(&mut buf) {
            Ok(0) => return None,
            Ok(n) => got += n as u64,
            Err(e) => {
                return Some(match ndnpy::Error::from(e) {
                    ndnpy::Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. }) => {
                        "corrupt: its data does not match its CRC-32 checksum".into()
                    }
                    ndnpy::Error::Archive(ndnpy::error::ArchiveError::CorruptMember { .. })
                        if got < declared =>
                    {
                        format!("corrupt: the archive declares {declared} bytes, found {got}")
                    }
                    other => format!("corrupt: {other}"),
                })
            }
        }
    }
}

fn strip_path(path: &Path, message: &str) -> String {
    message
        .strip_prefix(&format!("{}: ", path.display()))
        .unwrap_or(message)
        .to_owned()
}

fn strip_member(message: &str) -> String {
    match message.find(": member '") {
        Some(p) => match message[p + 10..].find("': ") {
            Some(q) => message[p + 10 + q + 3..].to_owned(),
            None => message.to_owned(),
        },
        None => message.to_owned(),
    }
}
