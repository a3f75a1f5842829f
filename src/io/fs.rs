//! File system calls the layers above share: advisory locks, file
//! identity, positioned reads and writes, preallocation and `fsync`, each
//! with its fallback where the platform lacks it.

use crate::error::{Error, Result};
use std::fs::{self, File};
use std::io;
use std::path::Path;

#[cfg(unix)]
pub(crate) fn links(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
pub(crate) fn links(_meta: &fs::Metadata) -> u64 {
    1
}

/// Releases the `flock` of `file`'s open file description, whichever
/// descriptors (a forked child's copies included) still refer to it.
#[cfg(unix)]
pub(crate) fn unlock(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: plain system call on a descriptor we own; an error leaves the
    // lock to be released with the last descriptor, as before.
    unsafe {
        libc::flock(file.as_raw_fd(), libc::LOCK_UN);
    }
}

#[cfg(not(unix))]
pub(crate) fn unlock(_file: &File) {}

/// Takes an exclusive `flock` (waiting for it when `wait`); `Ok(false)` if
/// another descriptor holds it.
#[cfg(unix)]
pub(crate) fn lock(file: &File, wait: bool) -> io::Result<bool> {
    flock(file, libc::LOCK_EX, wait)
}

#[cfg(not(unix))]
pub(crate) fn lock(_file: &File, _wait: bool) -> io::Result<bool> {
    Ok(true)
}

/// Takes a shared `flock` (waiting for it when `wait`); `Ok(false)` if
/// another descriptor holds an exclusive one (an appender). Path writes
/// hold it on the file they replace (`guard.rs`): any number of writers at
/// once, but never while an appender holds the file.
#[cfg(unix)]
pub(crate) fn lock_shared(file: &File, wait: bool) -> io::Result<bool> {
    flock(file, libc::LOCK_SH, wait)
}

/// `flock(kind)`, retried when interrupted; `Ok(false)` if it would block
/// (and `wait` is off). On file systems without locks (`ENOLCK`) the lock
/// is taken as held: there is nothing to guard with, so the name is ours.
#[cfg(unix)]
fn flock(file: &File, kind: libc::c_int, wait: bool) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let op = if wait { kind } else { kind | libc::LOCK_NB };
    loop {
        // SAFETY: plain system call on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(false),
            _ if err.raw_os_error() == Some(libc::ENOLCK) => return Ok(true),
            _ => return Err(err),
        }
    }
}

#[cfg(not(unix))]
pub(crate) fn lock_shared(_file: &File, _wait: bool) -> io::Result<bool> {
    Ok(true)
}

/// Whether `path` still names the open `file`.
#[cfg(unix)]
pub(crate) fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
pub(crate) fn same_file(_file: &File, _path: &Path) -> bool {
    true
}

/// `fsync`, ignoring kinds of file that do not support it (FIFOs, some
/// devices).
pub(crate) fn sync_if_supported(file: &File) -> io::Result<()> {
    match file.sync_all() {
        Err(e) if e.kind() == io::ErrorKind::InvalidInput || is_unsupported(&e) => Ok(()),
        other => other,
    }
}

#[cfg(unix)]
pub(crate) fn is_unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::EROFS))
}

#[cfg(not(unix))]
pub(crate) fn is_unsupported(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
}

/// Reserves `len` bytes for `file`, so that a full disk is reported before
/// any data is written and ext4 need not allocate blocks piecemeal.
#[cfg(target_os = "linux")]
pub(crate) fn reserve(file: &File, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    if len == 0 {
        return Ok(());
    }
    let Ok(len) = libc::off_t::try_from(len) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "file too large",
        ));
    };
    // SAFETY: plain system call on a file descriptor we own.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        // File systems without fallocate: write without a reservation.
        Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) | Some(libc::EINVAL) => Ok(()),
        _ => Err(err),
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn reserve(_file: &File, _len: u64) -> io::Result<()> {
    Ok(())
}

#[cfg(unix)]
pub(crate) fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, pos)
}

#[cfg(windows)]
pub(crate) fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, pos)
}

/// Bytes a part of [`read_full_at`] reads at least: below this, one more
/// thread costs more than it saves.
const PART: usize = 32 << 20;

/// Reads `buf` from `file` at `pos` by positioned reads (which, on Unix,
/// leave the handle's own position alone), in parts on as many cores as the budget
/// gives now (`crate::exec`) when `buf` is large; gives how many bytes
/// from the start of `buf` were read, fewer only where the file ends.
///
/// Why parts: reading a few hundred MiB from the page cache (a copy, and
/// the first touch of the fresh pages it lands in) is otherwise a serial
/// step before a member's parallel decoding can start, and on 2 cores it
/// was an eighth of reading one large member (BENCHMARKS.md).
pub(crate) fn read_full_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    read_full_at_in(file, buf, pos, PART)
}

/// [`read_full_at`] in parts of at least `least` bytes.
fn read_full_at_in(file: &File, buf: &mut [u8], pos: u64, least: usize) -> io::Result<usize> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let count = (buf.len() / least.max(1)).clamp(1, crate::exec::free_threads());
    let size = buf.len().div_ceil(count).max(1);
    // Each part, where it starts, and what reading it gave.
    let parts: Vec<Mutex<Part<'_>>> = buf
        .chunks_mut(size)
        .enumerate()
        .map(|(i, part)| Mutex::new((part, pos.saturating_add((i * size) as u64), None)))
        .collect();
    let next = AtomicUsize::new(0);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(part) = parts.get(i) else { return };
        let mut part = part.lock().unwrap_or_else(|e| e.into_inner());
        let (bytes, at, result) = &mut *part;
        *result = Some(read_part_at(file, bytes, *at));
    };
    crate::exec::scope(|workers| {
        for _ in 1..parts.len() {
            // Fewer helpers when the budget has no core to give: the parts
            // go to whoever takes them, this thread included.
            if !workers.spawn("ndnpy-read", work) {
                break;
            }
        }
        work();
    })?;
    let mut done = 0;
    for part in parts {
        let (bytes, _, result) = part.into_inner().unwrap_or_else(|e| e.into_inner());
        let n = result.unwrap_or_else(|| Err(io::Error::other("a part was not read")))?;
        done += n;
        if n < bytes.len() {
            // The file ends here: what later parts read (nothing, unless
            // the file grew meanwhile) is not contiguous with it.
            break;
        }
    }
    Ok(done)
}

/// A part of [`read_full_at_in`]'s buffer, where it starts in the file,
/// and what reading it gave (`None` until it is read).
type Part<'a> = (&'a mut [u8], u64, Option<io::Result<usize>>);

/// Reads `buf` at `pos` until it is full or the file ends; gives the count.
pub(crate) fn read_part_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match read_at(file, &mut buf[done..], pos.saturating_add(done as u64)) {
            Ok(0) => break,
            Ok(n) => done += crate::io::checked::checked_read_count(n, buf.len() - done)?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(unix)]
pub(crate) fn write_at(file: &File, buf: &[u8], pos: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::write_at(file, buf, pos)
}

#[cfg(windows)]
pub(crate) fn write_at(file: &File, buf: &[u8], pos: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_write(file, buf, pos)
}

/// Takes the advisory exclusive lock that marks the one appender of a file,
/// without waiting. Readers never take it, so they are not blocked. Where
/// the platform or the file system has no `flock`, appenders are not
/// serialised (documented on `NpyFile::open_append`).
pub(crate) fn lock_appender(file: &File, path: &Path) -> Result<()> {
    if lock(file, false)? {
        Ok(())
    } else {
        Err(Error::Rows(crate::error::RowsError::Locked {
            path: path.to_path_buf(),
        }))
    }
}

/// Whether `file` is still the file at `path` (a concurrent
/// `make_appendable` may have renamed a new one over it while we waited).
#[cfg(unix)]
pub(crate) fn still_at(file: &File, path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let (a, b) = (file.metadata()?, std::fs::metadata(path)?);
    Ok(a.dev() == b.dev() && a.ino() == b.ino())
}

#[cfg(not(unix))]
pub(crate) fn still_at(_file: &File, _path: &Path) -> io::Result<bool> {
    Ok(true)
}

/// Whether `path` lies on a kernel interface file system (`/proc`, `/sys`,
/// ...), whose "files" are not data and cannot be replaced.
#[cfg(target_os = "linux")]
pub(crate) fn is_pseudo_fs(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    const PSEUDO: &[i64] = &[
        0x9fa0,     // proc
        0x62656572, // sysfs
        0x64626720, // debugfs
        0x74726163, // tracefs
        0x27e0eb,   // cgroup
        0x63677270, // cgroup2
        0x73636673, // securityfs
        0x62656570, // configfs
        0xcafe4a11, // bpf
        0x6165676c, // pstore
        0xde5e81e4, // efivarfs
        0x1cd1,     // devpts
    ];
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated string and `st` a properly sized,
    // zeroed out-parameter that `statfs` fills.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the pointers are valid for the call.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    #[allow(clippy::unnecessary_cast)]
    PSEUDO.contains(&(st.f_type as i64))
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn is_pseudo_fs(_path: &Path) -> bool {
    false
}

/// Gives the temporary file the old file's permission bits and, where the
/// caller may, its owner and group. When the owner or group cannot be kept,
/// the set-user-ID or set-group-ID bit is dropped rather than handed to the
/// caller's identity.
#[cfg(unix)]
pub(crate) fn copy_identity(file: &File, old: &fs::Metadata) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let new = file.metadata()?;
    let mut mode = old.mode() & 0o7777;
    if new.uid() != old.uid() || new.gid() != old.gid() {
        let fd = file.as_raw_fd();
        // SAFETY: plain system calls on a descriptor we own.
        let kept_both = unsafe { libc::fchown(fd, old.uid(), old.gid()) } == 0;
        if !kept_both {
            // An ordinary user may still give the file the old group.
            // SAFETY: as above; `uid_t::MAX` (-1) leaves the owner.
            let kept_group = unsafe { libc::fchown(fd, libc::uid_t::MAX, old.gid()) } == 0
                || new.gid() == old.gid();
            if new.uid() != old.uid() {
                mode &= !0o4000;
            }
            if !kept_group {
                mode &= !0o2000;
            }
        }
    }
    // After `fchown`, which clears the set-ID bits.
    file.set_permissions(fs::Permissions::from_mode(mode))
}

/// Narrows `file`'s permission bits to those `old` has too (no set-ID
/// bits): a spare that still holds an old version while a new one is
/// written over it is no more readable than either (`atomic.rs`).
#[cfg(unix)]
pub(crate) fn narrow_mode(file: &File, old: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mode = file.metadata()?.mode() & old.mode() & 0o777;
    file.set_permissions(fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
pub(crate) fn narrow_mode(_file: &File, _old: &fs::Metadata) -> io::Result<()> {
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn copy_identity(file: &File, old: &fs::Metadata) -> io::Result<()> {
    file.set_permissions(old.permissions())
        .or_else(|e| match e.kind() {
            io::ErrorKind::Unsupported => Ok(()),
            _ => Err(e),
        })
}

#[cfg(test)]
mod read_tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_in_parts_give_the_files_bytes_and_stop_where_it_ends() {
        let data: Vec<u8> = (0..300_000u32)
            .map(|i| (i.wrapping_mul(40_503) >> 7) as u8)
            .collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&data).unwrap();
        for (pos, len) in [
            (0, 300_000),
            (1, 299_999),
            (7, 100_000),
            (250_000, 100_000),
            (300_000, 10),
            (400_000, 10),
            (0, 0),
        ] {
            for least in [1, 4096, 1 << 20] {
                let mut buf = vec![0xAA; len];
                let n = read_full_at_in(&file, &mut buf, pos as u64, least).unwrap();
                let want = data
                    .get(pos.min(data.len())..(pos + len).min(data.len()))
                    .unwrap();
                assert_eq!(n, want.len(), "{pos} {len} {least}");
                assert!(buf[..n] == *want, "{pos} {len} {least}");
            }
        }
    }
}
