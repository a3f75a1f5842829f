//! Replacing a file atomically: write a temporary file beside the target,
//! with its space reserved first, then rename it over the target.

use crate::error::Result;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temporary file in the target's folder, removed unless committed.
pub(crate) struct TempFile {
    path: PathBuf,
    target: PathBuf,
    file: Option<File>,
}

impl TempFile {
    /// Creates a new temporary file next to `target`, with the permissions
    /// of an existing target, and `len` bytes reserved when `len > 0`.
    pub(crate) fn create(target: &Path, len: u64) -> Result<TempFile> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
        let mut attempt = 0;
        let (path, file) = loop {
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(
                ".{}.{}.tmp",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            let path = dir.join(tmp_name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => break (path, file),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(e) => return Err(e.into()),
            }
        };
        let temp = TempFile {
            path,
            target: target.to_path_buf(),
            file: Some(file),
        };
        if let Ok(meta) = fs::metadata(target) {
            temp.file()
                .set_permissions(meta.permissions())
                .or_else(ignore_unsupported)?;
        }
        reserve(temp.file(), len)?;
        Ok(temp)
    }

    /// The open temporary file.
    pub(crate) fn file(&self) -> &File {
        self.file
            .as_ref()
            .expect("temporary file is open until commit")
    }

    /// Mutable access to the open temporary file.
    pub(crate) fn file_mut(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("temporary file is open until commit")
    }

    /// Closes the file and renames it over the target.
    pub(crate) fn commit(mut self) -> Result<()> {
        drop(self.file.take());
        let replaced = open_replaced(&self.target);
        fs::rename(&self.path, &self.target)?;
        // Nothing left to clean up.
        self.path = PathBuf::new();
        if let Some(old) = replaced {
            release_later(old);
        }
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            drop(self.file.take());
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Replaced files at least this large are released on a background thread.
const RELEASE_LATER_MIN: u64 = 16 << 20;

/// Opens the file that renaming over `target` will replace, if it is a large
/// regular file with no other name, so that [`release_later`] can drop its
/// last reference. `O_NONBLOCK` guards against a FIFO swapped in meanwhile.
#[cfg(unix)]
fn open_replaced(target: &Path) -> Option<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let meta = fs::symlink_metadata(target).ok()?;
    if !meta.is_file() || meta.nlink() != 1 || meta.len() < RELEASE_LATER_MIN {
        return None;
    }
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(target)
        .ok()
}

/// Elsewhere a replaced file cannot be held open across the rename.
#[cfg(not(unix))]
fn open_replaced(_target: &Path) -> Option<File> {
    None
}

/// Closes the replaced file (its last reference, now that the rename took
/// its name) on a short-lived background thread.
///
/// The kernel frees a file's blocks when its last reference goes. With the
/// rename holding that reference, the freeing happens inside `rename(2)`:
/// on ext4 mounted with `discard` (common on cloud VMs) it includes a
/// synchronous discard of every block, ~350 ms for a 256 MiB file on the
/// benchmark machine, more than writing the new file took. `np.save` pays the
/// same inside `open(O_TRUNC)`. Closing off the calling thread lets
/// `write_npy` over an existing file return as fast as one to a new file
/// (BENCHMARKS.md, `write_existing_*`); the new file is already in place, so
/// nothing about the result depends on when the old blocks are freed. If no
/// thread can be started, the file is closed here.
fn release_later(old: File) {
    let _ = std::thread::Builder::new()
        .name("ndnpy-release".into())
        .spawn(move || drop(old));
}

fn ignore_unsupported(e: io::Error) -> io::Result<()> {
    if e.kind() == io::ErrorKind::Unsupported {
        Ok(())
    } else {
        Err(e)
    }
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

/// Writes a file of `len` bytes at `target` atomically with `body`.
pub(crate) fn write_file<F>(target: &Path, len: u64, body: F) -> Result<()>
where
    F: FnOnce(&mut io::BufWriter<&mut File>) -> Result<()>,
{
    let mut temp = TempFile::create(target, len)?;
    {
        // Small pieces (headers, strided chunks) are coalesced; large slices
        // go straight through.
        let mut writer = io::BufWriter::with_capacity(64 << 10, temp.file_mut());
        body(&mut writer)?;
        writer.flush()?;
    }
    temp.commit()
}

use std::io::Write as _;
