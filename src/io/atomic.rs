//! Writing a file to a path without breaking what the path is.
//!
//! A regular file with one name is replaced atomically: the new data goes
//! to a temporary file beside the final target (symbolic links resolved),
//! with the old file's mode and owner, which is then renamed over it.
//! Anything else (devices, FIFOs, sockets, `/proc` and `/sys` entries, files
//! with several hard links) is written in place through the path, as
//! `np.save` does: renaming over it would replace the device, or split the
//! links (`target.rs` tells which). The exact rules are documented on
//! `WriteNpy::write_npy`, and file by file in the crate docs, "Files on
//! disk".
//!
//! Temporary files (`temp.rs`) are anonymous (`O_TMPFILE`) where the file
//! system allows it, so a killed process leaves nothing behind; they get a
//! name only for the moment between `linkat` and `rename`. Elsewhere they
//! are named `.<name>.<k>.ndnpy-tmp` from the start. Either way the writer
//! holds a (shared) `flock` on it, and the next write to the same target
//! removes any such file nobody holds a lock on (its writer died: the
//! kernel drops a dead process's locks).
//!
//! Every write holds a shared lock on the file it replaces (`guard.rs`), so
//! that it never replaces a file an appender holds.
//!
//! With [`WriteOptions::spare`] (off by default), large files keep the
//! version they replace as a spare (`spare.rs`): the rename becomes an
//! exchange that leaves the old version under `.<name>.ndnpy-spare`, and
//! the next write of a known length goes over that file's pages and is
//! exchanged with the target in turn. Without it, a write removes any spare
//! an earlier one left.

use crate::error::{Error, Result};
use crate::io::fs::{
    copy_identity, lock_shared, narrow_mode, reserve, same_file, sync_if_supported, unlock,
};
use crate::io::guard::Guard;
use crate::io::spare::{self, Renamed, SPARE_MIN};
use crate::io::target::{check_still_replaceable, check_writable, classify, Kind};
use crate::io::temp::{create_temp, folder, link_anonymous, remove_stale};
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
    /// The lock on the file being replaced that keeps appenders out.
    guard: Guard,
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
    /// `target` on commit, and then given `old`'s (the target's) mode and
    /// owner. Dropped uncommitted, it is removed: it holds part of the new
    /// version and part of an old one.
    Spare {
        target: PathBuf,
        path: PathBuf,
        old: Box<fs::Metadata>,
    },
    /// Writing through the path; nothing to do on commit but flush.
    InPlace,
}

impl TempFile {
    /// Like [`TempFile::create`], but refuses (before touching anything) a
    /// target that would be written in place: for callers that read the
    /// old file while writing the new one, where truncating it in place
    /// would destroy the input. `held`, when given, is the caller's open
    /// target, on which it holds the appender lock itself
    /// (`make_appendable`): the write goes through that lock.
    pub(crate) fn create_replacing(
        target: &Path,
        len: u64,
        options: &WriteOptions,
        held: Option<&File>,
    ) -> Result<TempFile> {
        TempFile::open(target, len, options, false, held)
    }

    /// Opens the destination of a write of `len` bytes to `target`: a
    /// temporary file beside it (or the spare, `spare.rs`), or the target
    /// itself for a file that must not be replaced. `len`, when not 0, is
    /// the exact length the file will have: that many bytes are reserved
    /// (which sets the length), and a spare is written over only then.
    /// [`crate::error::RowsError::Locked`] if an appender holds the target.
    pub(crate) fn create_with(target: &Path, len: u64, options: &WriteOptions) -> Result<TempFile> {
        TempFile::open(target, len, options, true, None)
    }

    fn open(
        target: &Path,
        len: u64,
        options: &WriteOptions,
        allow_in_place: bool,
        held: Option<&File>,
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
        let (target, old) = match kind {
            Kind::Replace { target, old } => (target, old),
            Kind::InPlace { path, regular } => {
                return open_in_place(&path, len, regular, durable);
            }
        };
        if let Some(old) = &old {
            check_writable(&target, old)?;
        }
        let guard = match held {
            Some(held) => Guard::held_by_caller(held)?,
            None => Guard::take(&target)?,
        };
        if !options.keeps_spare() {
            // A spare an earlier opt-in write left is a hidden copy of an
            // old version: gone before this write can fail.
            spare::discard(&target).into_iter().for_each(release_later);
        }
        let spares = options.keeps_spare() && len >= SPARE_MIN;
        if let Some(old) = old.as_ref().filter(|_| spares && guard.ours().is_some()) {
            if let Some((file, path)) = spare::take(&target, old, len) {
                // As `create_temp` does: a writer killed between its
                // exchange and its park left a named file.
                remove_stale(&target);
                let temp = TempFile {
                    file: Some(file),
                    mode: Mode::Spare {
                        target,
                        path,
                        old: Box::new(old.clone()),
                    },
                    durable,
                    guard,
                };
                // Until it holds only new data (commit), the spare is no
                // more readable than the old version it holds, nor than
                // the new one; a failure below removes it (drop).
                narrow_mode(temp.file(), old)?;
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
                    guard,
                };
                // A fresh file: it holds nothing before the new data.
                if let Some(old) = &old {
                    copy_identity(temp.file(), old)?;
                }
                reserve(temp.file(), len)?;
                Ok(temp)
            }
            // A writable file in a folder we may not create files in:
            // np.save writes it in place, and so do we.
            Err(e)
                if e.kind() == io::ErrorKind::PermissionDenied
                    && old.is_some()
                    && allow_in_place =>
            {
                drop(guard);
                open_in_place(&target, len, true, durable)
            }
            Err(e) => Err(e.into()),
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
            Mode::Spare { target, path, old } => {
                return commit_spare(file, target, path, old, durable, &mut self.guard);
            }
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
        self.guard.recheck(target)?;
        let parked = park
            && self
                .guard
                .ours()
                .is_some_and(|old| parkable(old, &file, target));
        if parked && spare::exchange(&from, target)? == Renamed::Done {
            // `from` names the old version, locked (shared) by our guard:
            // no other writer takes it, nor the spare it becomes.
            *path = None;
            let (kept, freed) = spare::park(&from, target);
            finish(file, target, durable)?;
            let old = self.guard.release();
            freed.into_iter().for_each(release_later);
            if !kept {
                old.into_iter().for_each(release_replaced);
            }
            // Kept: closed here, so that the next write finds the spare
            // held by nobody.
            return Ok(());
        }
        fs::rename(&from, target.as_path())?;
        *path = None;
        finish(file, target, durable)?;
        self.guard.release().into_iter().for_each(release_replaced);
        if !park {
            // A spare left by earlier, larger writes would only take disk
            // space now.
            spare::discard(target).into_iter().for_each(release_later);
        }
        Ok(())
    }
}

/// Whether the version being replaced (`old`, the guarded file at
/// `target`) can become the spare: it is still the target, and leases work
/// on this file system (a spare could not be checked later otherwise),
/// tested on our own new file, `new`. The guard's shared lock keeps other
/// writers' exclusive takes (`spare::take`, `discard`, `park`) off it.
fn parkable(old: &File, new: &File, target: &Path) -> bool {
    same_file(old, target) && spare::held_elsewhere(new) == Some(false)
}

/// Commits a write over the spare (`path`): given the target's mode and
/// owner, flushed, and swapped with `target`, whose old version becomes the
/// spare. Where the swap cannot be made (the target is gone, or the file
/// system has no `RENAME_EXCHANGE`), renamed over it. If anything fails
/// before the swap, the spare is removed.
///
/// The flush (`fdatasync`) comes before the swap even when the write is not
/// durable: the spare's blocks are allocated already, and ext4 (in its
/// default `data=ordered`) does not order overwrites of allocated blocks
/// before a rename, nor does `auto_da_alloc` start write-back for an
/// exchange. Without it, a power cut after the swap could leave the target
/// naming a mix of this version and the one the spare held: silent wrong
/// values. A fresh file has no such hazard (its blocks are new: at worst it
/// reads as zeros, as the default's docs say), so only the spare pays the
/// flush, which is part of its documented cost ([`WriteOptions::spare`]).
fn commit_spare(
    file: File,
    target: &Path,
    path: &Path,
    old: &fs::Metadata,
    durable: bool,
    guard: &mut Guard,
) -> Result<()> {
    let swapped = (|| -> Result<Renamed> {
        // Only new data in it now: the target's identity is its own.
        copy_identity(&file, old)?;
        if durable {
            file.sync_all()?;
        } else {
            file.sync_data()?;
        }
        check_still_replaceable(target)?;
        guard.recheck(target)?;
        match spare::exchange(path, target)? {
            Renamed::Done => Ok(Renamed::Done),
            _ => {
                let replaced = guard.release();
                fs::rename(path, target)?;
                replaced.into_iter().for_each(release_replaced);
                Ok(Renamed::Unsupported)
            }
        }
    })();
    match swapped {
        Ok(_) => {
            finish(file, target, durable)?;
            // The old version, now the spare: closed here, so that the
            // next write finds it held by nobody.
            drop(guard.release());
            Ok(())
        }
        Err(e) => {
            remove_spare(&file, path);
            Err(e)
        }
    }
}

/// Removes the spare at `path` that `file` (locked by us) is, after a
/// failed write over it: it holds parts of two versions.
fn remove_spare(file: &File, path: &Path) {
    // Unlinked while our lock still guards the name: nobody renames onto
    // or from it without holding the lock of the file it names.
    if same_file(file, path) {
        let _ = fs::remove_file(path);
    }
    unlock(file);
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
            Mode::Spare { path, .. } => {
                // Uncommitted (commit takes the file and cleans up itself):
                // half written over, of use to nobody.
                if let Some(file) = &self.file {
                    remove_spare(file, path);
                }
            }
            _ => {}
        }
        drop(self.file.take());
    }
}

/// Opens `path` for writing in place, truncating it as `np.save`'s
/// `open(path, "wb")` does. Space is reserved only in regular files. A
/// regular file is locked (shared) before it is truncated, and refused
/// with [`crate::error::RowsError::Locked`] if an appender holds it; the lock stays until the
/// file is closed, so that no appender starts on it meanwhile.
fn open_in_place(path: &Path, len: u64, regular: bool, durable: bool) -> Result<TempFile> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(!regular)
        .open(path)?;
    if regular {
        if let Ok(false) = lock_shared(&file, false) {
            return Err(Error::Rows(crate::error::RowsError::Locked {
                path: path.to_path_buf(),
            }));
        }
        file.set_len(0)?;
        reserve(&file, len)?;
    }
    Ok(TempFile {
        file: Some(file),
        mode: Mode::InPlace,
        durable,
        guard: Guard::none(),
    })
}

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

/// Closes `old`, the file a rename just replaced (the guard's, its last
/// reference): off the calling thread if it is large ([`release_later`]).
fn release_replaced(old: File) {
    if old.metadata().is_ok_and(|m| m.len() >= RELEASE_LATER_MIN) {
        release_later(old);
    }
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
    // Holds no core of the budget: the kernel's work, not ours. Detached.
    drop(crate::exec::spawn("ndnpy-release", move || drop(old)));
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
