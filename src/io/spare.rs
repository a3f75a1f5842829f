//! The spare: the version of a file that the last path write replaced,
//! kept under a hidden name beside it (`.<name>.ndnpy-spare`), so that the
//! next write goes over its pages instead of fresh ones. Opt-in
//! (`WriteOptions::spare(true)`): it is a hidden full-size copy of an old
//! version, which a user who deletes the target would not expect to stay.
//!
//! `np.save` truncates the old file and writes the new one into the page
//! cache it just freed; an atomic replacement must keep the old file whole
//! until the new one is complete, so every overwrite needs fresh memory
//! and fresh blocks, which cost several times the copy on the benchmark
//! machine (BENCHMARKS.md, "Overwrites over the spare"). With a spare, an
//! overwrite writes into the spare's cached pages and allocated blocks,
//! then swaps it with the target in one `renameat2(RENAME_EXCHANGE)`: the
//! target names the new version, the spare name the one it replaced,
//! ready for the next write. Readers of the target never see a mix (the
//! swap is atomic), and a crash before it leaves the target as it was.
//!
//! The spare is written over only when nobody else has it open or mapped:
//! it is the version before the current one, which a reader may still
//! hold. The kernel knows: a write lease (`F_SETLEASE`) is granted only on
//! a file no other descriptor or mapping refers to, in any process. The
//! lease is taken and given back at once, as a test (a lease broken in
//! between sends `SIGURG`, whose default is to be ignored, rather than
//! `SIGIO`, which would end the process); a spare someone holds is removed
//! instead (the holder keeps its copy) and the write uses a fresh file.
//! Writers take an exclusive `flock` on the spare they write and on the
//! version they park as the spare, and rename nothing onto or from the
//! spare's name without holding the lock of the file it names, so that
//! concurrent writers never swap one another's files.
//!
//! While a write goes over the spare, the spare holds part of an old
//! version: its permission bits are narrowed to those the target has too,
//! and it gets the target's mode and owner only once it holds the new
//! version alone; its data is flushed before the swap (a crash then leaves
//! the old version or the new one, never a mix); a failed write removes it
//! (`atomic.rs`).
//!
//! Linux only (leases, `renameat2`), for files of at least [`SPARE_MIN`]
//! bytes whose new version is as large; elsewhere writes go to fresh files
//! as before.

use crate::io::fs::{lock, same_file, unlock};
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Files smaller than this are written to fresh files: their pages cost
/// little, and a spare would keep a second copy on the disk for nothing.
pub(crate) const SPARE_MIN: u64 = 16 << 20;

/// Suffix of a spare's name.
pub(crate) const SPARE_SUFFIX: &str = ".ndnpy-spare";

/// `.<name>.ndnpy-spare` beside `target`.
pub(crate) fn spare_path(target: &Path) -> Option<PathBuf> {
    let name = target.file_name()?;
    let mut spare = OsString::from(".");
    spare.push(name);
    spare.push(SPARE_SUFFIX);
    Some(match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.join(spare),
        _ => PathBuf::from(spare),
    })
}

/// Whether the spare mechanism can work here at all: Linux on an
/// architecture whose `F_SETSIG` we know.
pub(crate) fn supported() -> bool {
    SETSIG.is_some()
}

#[cfg(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "aarch64",
        target_arch = "arm",
        target_arch = "riscv64",
        target_arch = "powerpc64",
        target_arch = "s390x",
        target_arch = "loongarch64"
    )
))]
const SETSIG: Option<libc::c_int> = Some(10);

#[cfg(not(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "aarch64",
        target_arch = "arm",
        target_arch = "riscv64",
        target_arch = "powerpc64",
        target_arch = "s390x",
        target_arch = "loongarch64"
    )
)))]
const SETSIG: Option<i32> = None;

/// Whether another descriptor or mapping refers to `file` (in this process
/// or any other): `Some(false)` only when the kernel grants a write lease,
/// which it does only then. `None` when it cannot tell (no leases on this
/// file system, a file of another owner): then the file is not written
/// over.
#[cfg(target_os = "linux")]
pub(crate) fn held_elsewhere(file: &File) -> Option<bool> {
    use std::os::fd::AsRawFd;
    let setsig = SETSIG?;
    let fd = file.as_raw_fd();
    // SAFETY: plain `fcntl` calls on a descriptor we own. F_SETSIG makes a
    // lease break (another open in the instant the test lease is held)
    // send SIGURG, ignored by default, instead of SIGIO, which ends the
    // process by default.
    unsafe {
        if libc::fcntl(fd, setsig, libc::SIGURG) != 0 {
            return None;
        }
        if libc::fcntl(fd, libc::F_SETLEASE, libc::F_WRLCK) == 0 {
            libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK);
            return Some(false);
        }
    }
    match io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EBUSY) => Some(true),
        _ => None,
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn held_elsewhere(_file: &File) -> Option<bool> {
    None
}

/// Whether `file` carries extended attributes other than `security.*`
/// (SELinux and similar labels, which a fresh file would get too). A spare
/// with any is not used: a fresh file would not have them, and the writer
/// does not copy them (`WriteNpy::write_npy`).
#[cfg(target_os = "linux")]
fn has_own_xattrs(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: with a null buffer of size 0, `flistxattr` only returns the
    // size the list of names needs.
    let len = unsafe { libc::flistxattr(fd, std::ptr::null_mut(), 0) };
    if len <= 0 {
        // None, or unsupported (then none either).
        return len < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::ENOTSUP);
    }
    let mut names = vec![0u8; len as usize + 256];
    // SAFETY: `names` is a writable buffer of the length passed.
    let got = unsafe { libc::flistxattr(fd, names.as_mut_ptr().cast(), names.len()) };
    if got < 0 {
        return true;
    }
    names[..got as usize]
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .any(|n| !n.starts_with(b"security."))
}

#[cfg(not(target_os = "linux"))]
fn has_own_xattrs(_file: &File) -> bool {
    true
}

/// The spare of `target` (a regular file with one name, `old`), opened,
/// locked and checked, ready to be written over by a write of `len` bytes;
/// `None` if there is none that may be used (and then the write goes to a
/// fresh file). A spare that someone else holds open is removed on the way
/// (they keep their copy); one that is not ours is left alone.
#[cfg(unix)]
pub(crate) fn take(target: &Path, old: &fs::Metadata, len: u64) -> Option<(File, PathBuf)> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    if !supported() || len < SPARE_MIN || old.len() < SPARE_MIN {
        return None;
    }
    let path = spare_path(target)?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .ok()?;
    let meta = file.metadata().ok()?;
    // SAFETY: `geteuid` has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.nlink() != 1 || meta.dev() != old.dev() || meta.uid() != me {
        return None;
    }
    // Another writer is writing it, or parking a version over it.
    if !matches!(lock(&file, false), Ok(true)) {
        return None;
    }
    if !same_file(&file, &path) {
        return None;
    }
    if held_elsewhere(&file) != Some(false) || has_own_xattrs(&file) {
        // Held by a reader (or not ours to judge): of no use as a spare.
        // Its name goes, under our lock; the reader keeps its file.
        let _ = fs::remove_file(&path);
        unlock(&file);
        return None;
    }
    Some((file, path))
}

#[cfg(not(unix))]
pub(crate) fn take(_target: &Path, _old: &fs::Metadata, _len: u64) -> Option<(File, PathBuf)> {
    None
}

/// How `renameat2` went.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Renamed {
    Done,
    /// The flag is not supported here (old kernel, file system).
    Unsupported,
    /// The destination exists (`RENAME_NOREPLACE`) or the target is gone
    /// (`RENAME_EXCHANGE`).
    Conflict,
}

/// `renameat2(from, to, flags)`.
#[cfg(target_os = "linux")]
fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> io::Result<Renamed> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: both paths are valid NUL-terminated strings for the call;
    // the system call only reads them.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        return Ok(Renamed::Done);
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => {
            Ok(Renamed::Unsupported)
        }
        Some(libc::EEXIST) | Some(libc::ENOENT) => Ok(Renamed::Conflict),
        _ => Err(err),
    }
}

#[cfg(not(target_os = "linux"))]
fn renameat2(_from: &Path, _to: &Path, _flags: u32) -> io::Result<Renamed> {
    Ok(Renamed::Unsupported)
}

/// Swaps the files `a` and `b` name, atomically.
pub(crate) fn exchange(a: &Path, b: &Path) -> io::Result<Renamed> {
    #[cfg(target_os = "linux")]
    return renameat2(a, b, libc::RENAME_EXCHANGE);
    #[cfg(not(target_os = "linux"))]
    return renameat2(a, b, 0);
}

/// Moves the version of `target` just replaced (locked by the caller,
/// named `slot`) to the spare's name. If a spare is there and nobody
/// writes it, it is replaced (its file handed back to be closed off the
/// calling thread: its blocks are freed then); if one is being written,
/// or anything fails, the retired version is removed instead. Gives
/// whether it was kept, and the file to release, if any.
#[cfg(unix)]
pub(crate) fn park(slot: &Path, target: &Path) -> (bool, Option<File>) {
    use std::os::unix::fs::OpenOptionsExt;
    let removed = || {
        let _ = fs::remove_file(slot);
        (false, None)
    };
    let Some(spare) = spare_path(target) else {
        return removed();
    };
    #[cfg(target_os = "linux")]
    match renameat2(slot, &spare, libc::RENAME_NOREPLACE) {
        Ok(Renamed::Done) => return (true, None),
        Ok(Renamed::Conflict) => {}
        _ => return removed(),
    }
    // A spare is there: replaced only under its lock.
    let current = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&spare);
    let replaced = match current {
        Ok(file)
            if file.metadata().is_ok_and(|m| m.is_file())
                && matches!(lock(&file, false), Ok(true))
                && same_file(&file, &spare) =>
        {
            file
        }
        _ => return removed(),
    };
    let kept = fs::rename(slot, &spare).is_ok();
    if !kept {
        let _ = fs::remove_file(slot);
    }
    unlock(&replaced);
    (kept, Some(replaced))
}

#[cfg(not(unix))]
pub(crate) fn park(slot: &Path, _target: &Path) -> (bool, Option<File>) {
    let _ = fs::remove_file(slot);
    (false, None)
}

/// Removes the spare of `target`, if there is one nobody writes: after a
/// write too small to use it, so that a second copy does not stay on the
/// disk. Gives its file, to be closed off the calling thread.
#[cfg(unix)]
pub(crate) fn discard(target: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let spare = spare_path(target)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&spare)
        .ok()?;
    if file.metadata().is_ok_and(|m| m.is_file())
        && matches!(lock(&file, false), Ok(true))
        && same_file(&file, &spare)
    {
        let _ = fs::remove_file(&spare);
        unlock(&file);
        return Some(file);
    }
    None
}

#[cfg(not(unix))]
pub(crate) fn discard(_target: &Path) -> Option<File> {
    None
}
