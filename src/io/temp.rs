//! Temporary files for path writes: anonymous (`O_TMPFILE`) where the
//! file system allows, named `.<name>.<k>.ndnpy-tmp` beside the target
//! elsewhere (and for the moment between `linkat` and `rename`), each
//! locked by its writer; stale ones (nobody holds their lock) are removed
//! by the next write to the same target.

use crate::io::fs::{lock, lock_shared, same_file};
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Temporary names tried per target: `.<name>.0.ndnpy-tmp` to
/// `.<name>.15.ndnpy-tmp`. The next write probes each for a stale file.
const SLOTS: u32 = 16;

/// Suffix of every temporary file name.
const TMP_SUFFIX: &str = ".ndnpy-tmp";

pub(crate) fn no_file_name() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "path has no file name")
}

pub(crate) fn folder(target: &Path) -> &Path {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `.<name>.<slot>.ndnpy-tmp` beside `target`.
fn slot_path(target: &Path, slot: &str) -> io::Result<PathBuf> {
    let name = target.file_name().ok_or_else(no_file_name)?;
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(".");
    tmp.push(slot);
    tmp.push(TMP_SUFFIX);
    Ok(folder(target).join(tmp))
}

/// A unique name for when every slot is taken.
fn overflow_slot() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Marks a temporary file as a live writer's: a shared `flock`, which the
/// clean-up's exclusive one cannot take. Shared, not exclusive, because
/// the file becomes the target at the rename and keeps the lock for an
/// instant after it: a path write that meets it then (`guard.rs`) must not
/// take it for an appender's.
fn lock_live(file: &File) -> io::Result<()> {
    // Waits only for a clean-up that opened the name first (and then sees
    // it is not stale, or removes the name: the caller checks).
    lock_shared(file, true).map(drop)
}

/// Creates the locked temporary file for `target`, anonymous where
/// possible, after removing stale ones.
pub(crate) fn create_temp(target: &Path) -> io::Result<(File, Option<PathBuf>)> {
    remove_stale(target);
    if let Some(file) = create_anonymous(target)? {
        return Ok((file, None));
    }
    for slot in (0..SLOTS)
        .map(|k| k.to_string())
        .chain(std::iter::once(overflow_slot()))
    {
        let path = slot_path(target, &slot)?;
        let file = match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        lock_live(&file)?;
        // A concurrent writer's clean-up may have taken the name between
        // creating and locking it: then take another.
        if same_file(&file, &path) {
            return Ok((file, Some(path)));
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("no free temporary name beside {}", target.display()),
    ))
}

/// Removes temporary files of earlier writes to `target` whose writers are
/// gone: a regular file in one of the slots that nobody holds a lock on.
/// Best effort: whatever cannot be checked is left alone.
#[cfg(unix)]
pub(crate) fn remove_stale(target: &Path) {
    use std::os::unix::fs::OpenOptionsExt;
    for k in 0..SLOTS {
        let Ok(path) = slot_path(target, &k.to_string()) else {
            return;
        };
        let Ok(file) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
        else {
            continue;
        };
        let regular = file.metadata().is_ok_and(|m| m.is_file());
        if regular && matches!(lock(&file, false), Ok(true)) && same_file(&file, &path) {
            // Nobody writes it: a live writer holds its lock from before
            // the name exists (anonymous files) or checks it still owns the
            // name after locking (named ones).
            let _ = fs::remove_file(&path);
        }
    }
}

#[cfg(not(unix))]
pub(crate) fn remove_stale(_target: &Path) {}

/// An unnamed, locked file in the target's folder (`O_TMPFILE`), if the
/// file system supports it and `/proc/self/fd` is there to name it later.
#[cfg(target_os = "linux")]
fn create_anonymous(target: &Path) -> io::Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    if !Path::new("/proc/self/fd").is_dir() {
        return Ok(None);
    }
    match OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o666)
        .open(folder(target))
    {
        Ok(file) => {
            lock_live(&file)?;
            Ok(Some(file))
        }
        // Not supported by this kernel or file system.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL)
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn create_anonymous(_target: &Path) -> io::Result<Option<File>> {
    Ok(None)
}

/// Gives the anonymous file a temporary name beside `target`.
#[cfg(target_os = "linux")]
pub(crate) fn link_anonymous(file: &File, target: &Path) -> io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let proc_path = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .expect("no NUL in a number");
    for slot in (0..SLOTS)
        .map(|k| k.to_string())
        .chain(std::iter::once(overflow_slot()))
    {
        let path = slot_path(target, &slot)?;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: both paths are valid NUL-terminated strings for the call.
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                proc_path.as_ptr(),
                libc::AT_FDCWD,
                c.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc == 0 {
            return Ok(path);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::AlreadyExists {
            return Err(err);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("no free temporary name beside {}", target.display()),
    ))
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn link_anonymous(_file: &File, _target: &Path) -> io::Result<PathBuf> {
    unreachable!("no anonymous temporary files outside Linux")
}
