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
//! Temporary files (`temp.rs`) are anonymous (`O_TMPFILE`) where the file
//! system allows it, so a killed process leaves nothing behind; they get a
//! name only for the moment between `linkat` and `rename`. Elsewhere they
//! are named `.<name>.<k>.ndnpy-tmp` from the start. Either way the writer
//! holds an exclusive `flock` on it, and the next write to the same target
//! removes any such file nobody holds a lock on (its writer died: the
//! kernel drops a dead process's locks).
//!
//! Large files keep the version they replace as a spare (`spare.rs`): the
//! rename becomes an exchange that leaves the old version under
//! `.<name>.ndnpy-spare`, and the next write of a known length goes over
//! that file's pages and is exchanged with the target in turn.

use crate::error::Result;
use crate::io::fs::{
    copy_identity, is_pseudo_fs, links, lock, reserve, same_file, sync_if_supported, unlock,
};
use crate::io::spare::{self, Renamed, SPARE_MIN};
use crate::io::temp::{create_temp, folder, link_anonymous, no_file_name, remove_stale};
use crate::options::WriteOptions;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

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
        /// Whether the version replaced is kept as the spare (`spare.rs`):
        /// both it and the new one are large, and spares are wanted.
        park: bool,
    },
    /// Writing over the spare at `path` (`spare.rs`), locked; swapped with
    /// `target` on commit. Dropped uncommitted, it stays the spare.
    Spare { target: PathBuf, path: PathBuf },
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
    /// temporary file beside it (or the spare, `spare.rs`), or the target
    /// itself for a file that must not be replaced. `len`, when not 0, is
    /// the exact length the file will have: that many bytes are reserved
    /// (which sets the length), and a spare is written over only then.
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
                let spares = options.keeps_spare() && len >= SPARE_MIN;
                if let Some(old) = old.as_ref().filter(|_| spares) {
                    if let Some((file, path)) = spare::take(&target, old, len) {
                        // As `create_temp` does: a writer killed between
                        // its exchange and its park left a named file.
                        remove_stale(&target);
                        let temp = TempFile {
                            file: Some(file),
                            mode: Mode::Spare { target, path },
                            durable,
                        };
                        copy_identity(temp.file(), old)?;
                        // Its blocks are mostly allocated already: the
                        // reservation only sets the length.
                        temp.file()
                            .set_len(len.min(temp.file().metadata()?.len()))?;
                        reserve(temp.file(), len)?;
                        return Ok(temp);
                    }
                }
                match create_temp(&target) {
                    Ok((file, path)) => {
                        let park = spares && old.as_ref().is_some_and(|o| o.len() >= SPARE_MIN);
                        let temp = TempFile {
                            file: Some(file),
                            mode: Mode::Replace { target, path, park },
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

    /// Puts the written file in place: renames it over the target (or
    /// swaps it with the target, when it is the spare: the target's old
    /// version becomes the spare), or, for an in-place write, only flushes
    /// it when durable.
    pub(crate) fn commit(mut self) -> Result<()> {
        let file = self.file.take().expect("file is open until commit");
        let durable = self.durable;
        let (target, path, park) = match &mut self.mode {
            Mode::InPlace => {
                if durable {
                    sync_if_supported(&file)?;
                }
                return Ok(());
            }
            Mode::Spare { target, path } => return commit_spare(file, target, path, durable),
            Mode::Replace { target, path, park } => (target, path, *park),
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
        if park {
            if let Some(old) = replaced.as_ref().filter(|old| parkable(old, &file, target)) {
                if spare::exchange(&from, target)? == Renamed::Done {
                    // `from` names the old version, locked by us.
                    *path = None;
                    let (kept, freed) = spare::park(&from, target);
                    finish(file, target, durable)?;
                    unlock(old);
                    freed.into_iter().for_each(release_later);
                    if !kept {
                        release_later(replaced.expect("checked above"));
                    }
                    return Ok(());
                }
                unlock(old);
            }
        }
        fs::rename(&from, target.as_path())?;
        *path = None;
        finish(file, target, durable)?;
        if let Some(old) = replaced {
            release_later(old);
        }
        if !park {
            // A spare left by earlier, larger writes would only take disk
            // space now.
            spare::discard(target).into_iter().for_each(release_later);
        }
        Ok(())
    }
}

/// Whether the version being replaced (`old`, just opened at `target`) can
/// become the spare: we hold its lock (no appender or other writer has
/// it), it is still the target, and leases work on this file system (a
/// spare could not be checked later otherwise), tested on our own new
/// file, `new`.
fn parkable(old: &File, new: &File, target: &Path) -> bool {
    matches!(lock(old, false), Ok(true))
        && same_file(old, target)
        && spare::held_elsewhere(new) == Some(false)
}

/// Commits a write over the spare (`path`): swapped with `target`, whose
/// old version becomes the spare. Where the swap cannot be made (the
/// target is gone, or the file system has no `RENAME_EXCHANGE`), renamed
/// over it.
fn commit_spare(file: File, target: &Path, path: &Path, durable: bool) -> Result<()> {
    if durable {
        file.sync_all()?;
    }
    check_still_replaceable(target)?;
    if spare::exchange(path, target)? != Renamed::Done {
        let replaced = open_replaced(target);
        fs::rename(path, target)?;
        finish(file, target, durable)?;
        replaced.into_iter().for_each(release_later);
        return Ok(());
    }
    finish(file, target, durable)
}

/// After the rename: releases the new file's lock and closes it, and
/// flushes the folder when durable.
fn finish(file: File, target: &Path, durable: bool) -> Result<()> {
    // Released explicitly, not left to the last descriptor: a process
    // forked meanwhile by another thread holds a copy of it until its
    // `exec`, and the lock would stay on the file that now has the
    // target's name (an appender opening it would find it locked).
    unlock(&file);
    drop(file);
    if durable {
        sync_dir(target)?;
    }
    Ok(())
}

impl Drop for TempFile {
    fn drop(&mut self) {
        match &self.mode {
            Mode::Replace {
                path: Some(path), ..
            } => {
                // Unlink first, while the lock still guards the name.
                let _ = fs::remove_file(path);
            }
            // Left as it is: still the spare (its bytes were never
            // anything but the spare's).
            Mode::Spare { .. } => {
                if let Some(file) = &self.file {
                    unlock(file);
                }
            }
            _ => {}
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

use std::io::Write as _;
