//! What a path names, as far as writing to it is concerned: a regular file
//! with one name (or nothing yet), replaced by rename; or anything else,
//! written through the path (`atomic.rs`).

use crate::io::fs::{is_pseudo_fs, links};
use crate::io::temp::no_file_name;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// What a path names, as far as writing to it is concerned.
pub(crate) enum Kind {
    /// No file, or a regular file with one name: replace by rename.
    Replace {
        target: PathBuf,
        old: Option<fs::Metadata>,
    },
    /// Anything else: write through `path`.
    InPlace { path: PathBuf, regular: bool },
}

/// Follows symbolic links by hand (so that a dangling link names the file
/// to create, as `open(O_CREAT)` would), except through `/proc`'s links
/// (such as `/dev/stdout`), which name open files rather than paths and are
/// left to the kernel.
pub(crate) fn classify(path: &Path) -> io::Result<Kind> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        let meta = match settled_metadata(&p) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if p.file_name().is_none() {
                    return Err(no_file_name());
                }
                return Ok(Kind::Replace {
                    target: p,
                    old: None,
                });
            }
            Err(e) => return Err(e),
        };
        if meta.file_type().is_symlink() {
            if is_pseudo_fs(&p) {
                return Ok(Kind::InPlace {
                    path: path.to_path_buf(),
                    regular: false,
                });
            }
            let link = fs::read_link(&p)?;
            p = match p.parent() {
                Some(parent) if link.is_relative() => parent.join(link),
                _ => link,
            };
            continue;
        }
        if meta.is_file() && links(&meta) == 1 && !is_pseudo_fs(&p) && p.file_name().is_some() {
            return Ok(Kind::Replace {
                target: p,
                old: Some(meta),
            });
        }
        let regular = meta.is_file();
        return Ok(Kind::InPlace { path: p, regular });
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{}: too many levels of symbolic links", path.display()),
    ))
}

/// Refuses a target the caller may not write, as `np.save`'s `open` would
/// (`PermissionError`): replacing it by rename needs only the folder's
/// permission and would silently overwrite a read-only file.
#[cfg(unix)]
pub(crate) fn check_writable(target: &Path, _old: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(target.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    let rc = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    Err(io::Error::new(
        err.kind(),
        format!(
            "cannot write {}: {err} (the file is not writable; it was left as it was)",
            target.display()
        ),
    ))
}

#[cfg(not(unix))]
pub(crate) fn check_writable(target: &Path, old: &fs::Metadata) -> io::Result<()> {
    if old.permissions().readonly() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("cannot write {}: the file is read-only", target.display()),
        ));
    }
    Ok(())
}

/// Refuses to rename over a target that became something other than a
/// regular file with one name since the write started.
pub(crate) fn check_still_replaceable(target: &Path) -> io::Result<()> {
    match settled_metadata(target) {
        Ok(meta) if !(meta.is_file() && links(&meta) == 1) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} changed into something other than a regular file with one name \
                 during the write; it was not replaced",
                target.display()
            ),
        )),
        _ => Ok(()),
    }
}

/// `symlink_metadata`, looked at again while it shows a regular file with
/// no name left: the file a concurrent writer's rename is replacing, seen
/// in the instant the kernel drops its last link (measured with four
/// writers of one path: taken for a hard-linked file, it turned an
/// atomic write into an in-place one, or refused it). The path names the
/// new file by the time the rename returns.
fn settled_metadata(path: &Path) -> io::Result<fs::Metadata> {
    let mut meta = fs::symlink_metadata(path)?;
    for _ in 0..1000 {
        if !(meta.is_file() && links(&meta) == 0) {
            break;
        }
        std::thread::yield_now();
        meta = fs::symlink_metadata(path)?;
    }
    Ok(meta)
}
