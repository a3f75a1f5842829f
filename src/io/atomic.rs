//! Writing a file to a path without breaking what the path is.
//!
//! A regular file with one name is replaced atomically: the new data goes
//! to a temporary file beside the final target (symbolic links resolved),
//! with the old file's mode and owner, which is then renamed over it.
//! Anything else (devices, FIFOs, sockets, `/proc` and `/sys` entries, files
//! with several hard links) is written in place through the path, as
//! `np.save` does: renaming over it would replace the device, or split the
//! links. The exact rules are documented on `WriteNpy::write_npy`.
//!
//! Temporary files are anonymous (`O_TMPFILE`) where the file system allows
//! it, so a killed process leaves nothing behind; they get a name only for
//! the moment between `linkat` and `rename`. Elsewhere they are named
//! `.<name>.<k>.ndnpy-tmp` from the start. Either way the writer holds an
//! exclusive `flock` on it, and the next write to the same target removes
//! any such file nobody holds a lock on (its writer died: the kernel drops
//! a dead process's locks).

use crate::error::Result;
use crate::io::fs::{
    copy_identity, is_pseudo_fs, links, lock, reserve, same_file, sync_if_supported, unlock,
};
use crate::options::WriteOptions;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Temporary names tried per target: `.<name>.0.ndnpy-tmp` to
/// `.<name>.15.ndnpy-tmp`. The next write probes each for a stale file.
const SLOTS: u32 = 16;

/// Suffix of every temporary file name.
const TMP_SUFFIX: &str = ".ndnpy-tmp";

/// The file a path write goes to: a temporary file that replaces the target
/// on [`TempFile::commit`] (removed if dropped uncommitted), or the target
/// itself, opened in place.
pub(crate) struct TempFile {
    file: Option<File>,
    mode: Mode,
    durable: bool,
}

enum Mode {
    /// Rename over `target` on commit.
    Replace {
        /// The final target: symbolic links resolved.
        target: PathBuf,
        /// The temporary file's name; `None` while it is anonymous
        /// (`O_TMPFILE`), and again once committed.
        path: Option<PathBuf>,
    },
    /// Writing through the path; nothing to do on commit but flush.
    InPlace,
}

impl TempFile {
    /// Like [`TempFile::create`], but refuses (before touching anything) a
    /// target that would be written in place: for callers that read the
    /// old file while writing the new one, where truncating it in place
    /// would destroy the input.
    pub(crate) fn create_replacing(
        target: &Path,
        len: u64,
        options: &WriteOptions,
    ) -> Result<TempFile> {
        TempFile::open(target, len, options, false)
    }

    /// Opens the destination of a write of `len` bytes to `target`: a
    /// temporary file beside it, or the target itself for a file that must
    /// not be replaced. `len` bytes are reserved when `len > 0`.
    pub(crate) fn create_with(target: &Path, len: u64, options: &WriteOptions) -> Result<TempFile> {
        TempFile::open(target, len, options, true)
    }

    fn open(
        target: &Path,
        len: u64,
        options: &WriteOptions,
        allow_in_place: bool,
    ) -> Result<TempFile> {
        let durable = options.is_durable();
        let kind = classify(target)?;
        if let (Kind::InPlace { path, .. }, false) = (&kind, allow_in_place) {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{} is not a regular file with one name (a device, FIFO or \
                     hard-linked file): it cannot be rewritten atomically",
                    path.display()
                ),
            )
            .into());
        }
        match kind {
            Kind::Replace { target, old } => {
                if let Some(old) = &old {
                    check_writable(&target, old)?;
                }
                match create_temp(&target) {
                    Ok((file, path)) => {
                        let temp = TempFile {
                            file: Some(file),
                            mode: Mode::Replace { target, path },
                            durable,
                        };
                        if let Some(old) = &old {
                            copy_identity(temp.file(), old)?;
                        }
                        reserve(temp.file(), len)?;
                        Ok(temp)
                    }
                    // A writable file in a folder we may not create files
                    // in: np.save writes it in place, and so do we.
                    Err(e)
                        if e.kind() == io::ErrorKind::PermissionDenied
                            && old.is_some()
                            && allow_in_place =>
                    {
                        open_in_place(&target, len, true, durable)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            Kind::InPlace { path, regular } => open_in_place(&path, len, regular, durable),
        }
    }

    /// The open file.
    pub(crate) fn file(&self) -> &File {
        self.file.as_ref().expect("file is open until commit")
    }

    /// Mutable access to the open file.
    pub(crate) fn file_mut(&mut self) -> &mut File {
        self.file.as_mut().expect("file is open until commit")
    }

    /// Whether the target is written in place (not replaced on commit).
    pub(crate) fn in_place(&self) -> bool {
        matches!(self.mode, Mode::InPlace)
    }

    /// Puts the written file in place: renames it over the target (or, for
    /// an in-place write, only flushes it when durable).
    pub(crate) fn commit(mut self) -> Result<()> {
        let file = self.file.take().expect("file is open until commit");
        let durable = self.durable;
        let Mode::Replace { target, path } = &mut self.mode else {
            if durable {
                sync_if_supported(&file)?;
            }
            return Ok(());
        };
        if durable {
            file.sync_all()?;
        }
        if path.is_none() {
            *path = Some(link_anonymous(&file, target)?);
        }
        let from = path.clone().expect("named by now");
        check_still_replaceable(target)?;
        let replaced = open_replaced(target);
        fs::rename(&from, target.as_path())?;
        *path = None;
        // Released explicitly, not left to the last descriptor: a process
        // forked meanwhile by another thread holds a copy of it until its
        // `exec`, and the lock would stay on the file that now has the
        // target's name (an appender opening it would find it locked).
        unlock(&file);
        drop(file);
        if durable {
            sync_dir(target)?;
        }
        if let Some(old) = replaced {
            release_later(old);
        }
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Mode::Replace {
            path: Some(path), ..
        } = &self.mode
        {
            // Unlink first, while the lock still guards the name.
            let _ = fs::remove_file(path);
        }
        drop(self.file.take());
    }
}

/// What a path names, as far as writing to it is concerned.
enum Kind {
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
fn classify(path: &Path) -> io::Result<Kind> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        let meta = match fs::symlink_metadata(&p) {
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

fn no_file_name() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "path has no file name")
}

/// Refuses a target the caller may not write, as `np.save`'s `open` would
/// (`PermissionError`): replacing it by rename needs only the folder's
/// permission and would silently overwrite a read-only file.
#[cfg(unix)]
fn check_writable(target: &Path, _old: &fs::Metadata) -> io::Result<()> {
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
fn check_writable(target: &Path, old: &fs::Metadata) -> io::Result<()> {
    if old.permissions().readonly() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("cannot write {}: the file is read-only", target.display()),
        ));
    }
    Ok(())
}

/// Opens `path` for writing in place, truncating it as `np.save`'s
/// `open(path, "wb")` does. Space is reserved only in regular files.
fn open_in_place(path: &Path, len: u64, regular: bool, durable: bool) -> Result<TempFile> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    if regular {
        reserve(&file, len)?;
    }
    Ok(TempFile {
        file: Some(file),
        mode: Mode::InPlace,
        durable,
    })
}

fn folder(target: &Path) -> &Path {
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

/// Creates the locked temporary file for `target`, anonymous where
/// possible, after removing stale ones.
fn create_temp(target: &Path) -> io::Result<(File, Option<PathBuf>)> {
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
        lock(&file, true)?;
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
fn remove_stale(target: &Path) {
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
fn remove_stale(_target: &Path) {}

/// Refuses to rename over a target that became something other than a
/// regular file with one name since the write started.
fn check_still_replaceable(target: &Path) -> io::Result<()> {
    match fs::symlink_metadata(target) {
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

/// Flushes the folder holding `target`, so the rename itself is durable.
#[cfg(unix)]
fn sync_dir(target: &Path) -> io::Result<()> {
    let dir = File::open(folder(target))?;
    sync_if_supported(&dir)
}

#[cfg(not(unix))]
fn sync_dir(_target: &Path) -> io::Result<()> {
    Ok(())
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

/// Writes a file of `len` bytes at `target` with `body`, with the default
/// options.
pub(crate) fn write_file<F>(target: &Path, len: u64, body: F) -> Result<()>
where
    F: FnOnce(&mut io::BufWriter<&mut File>) -> Result<()>,
{
    write_file_with(target, len, &WriteOptions::default(), body)
}

/// Writes a file of `len` bytes at `target` with `body`: atomically for a
/// regular file, in place for anything else (see the module docs).
pub(crate) fn write_file_with<F>(
    target: &Path,
    len: u64,
    options: &WriteOptions,
    body: F,
) -> Result<()>
where
    F: FnOnce(&mut io::BufWriter<&mut File>) -> Result<()>,
{
    let mut temp = TempFile::create_with(target, len, options)?;
    {
        // Small pieces (headers, strided chunks) are coalesced; large slices
        // go straight through.
        let mut writer = io::BufWriter::with_capacity(64 << 10, temp.file_mut());
        body(&mut writer)?;
        writer.flush()?;
    }
    temp.commit()
}

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
            lock(&file, true)?;
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
fn link_anonymous(file: &File, target: &Path) -> io::Result<PathBuf> {
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
fn link_anonymous(_file: &File, _target: &Path) -> io::Result<PathBuf> {
    unreachable!("no anonymous temporary files outside Linux")
}

use std::io::Write as _;
