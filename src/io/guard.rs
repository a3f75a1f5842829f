//! The appender guard: a path write holds a shared `flock` on the file it
//! is about to replace, from the start of the write until the rename.
//!
//! An appender (`NpyFile::open_append`, `NpyWriter::append`,
//! `NpyFile::make_appendable`) holds an exclusive `flock` on its file for
//! as long as it lives. Renaming another file over that one would strand
//! it: its next rows would go, with `Ok`, into a file no name leads to. So
//! a path write first takes a shared lock on the file it will replace. If
//! an appender holds the file, the write fails with [`crate::error::RowsError::Locked`]
//! before anything is written, and the file stays as it was. While the
//! write holds the lock, no appender can start on the file
//! (`open_append` gets `crate::error::RowsError::Locked`; one that opened the file just
//! before and locks it just after the rename finds that its path no longer
//! names the file, and opens the new one). The lock is shared so that
//! writers never exclude each other (the last rename wins, as before).
//!
//! Just before the rename the guard is checked again: the path may name
//! another file by then (another writer's rename), and that one is guarded
//! in turn. What remains is the instant between that check and the rename;
//! an appender that starts on the file in that instant is caught by its own
//! check (`NpyFile::append` refuses once its path no longer names its
//! file).

use crate::error::{Error, Result};
use crate::io::fs::{lock_shared, same_file, unlock};
use std::fs::File;
use std::io;
use std::path::Path;

/// Times the file at the target is found locked exclusively before the
/// write gives up ([`crate::error::RowsError::Locked`]), a millisecond apart.
const HELD_TURNS: u32 = 20;

/// Turns in all, those where the target changed under us included.
const LOCK_TURNS: u32 = HELD_TURNS + 8;

/// The lock a path write holds on the file at its target, if any.
pub(crate) struct Guard {
    file: Option<File>,
    /// Whether the lock is ours (a shared one, released with the guard) or
    /// the caller's (a duplicate of the descriptor of an appender that
    /// rewrites its own file, `make_appendable`: released by the caller).
    ours: bool,
}

impl Guard {
    /// Locks the file at `target` (a regular file, symbolic links already
    /// resolved) against appenders: an empty guard if there is no file
    /// there, or it cannot be opened, or the file system has no locks;
    /// [`crate::error::RowsError::Locked`] if an appender holds it.
    pub(crate) fn take(target: &Path) -> Result<Guard> {
        let mut held_turns = 0;
        // Turns that end early when another writer renamed a file over the
        // target between our open and our lock. Temporary files are locked
        // shared (`temp.rs`), so a fresh one just renamed over the target
        // never looks like an appender's; a spare just swapped in is
        // locked exclusively (writers must not share it) until its writer
        // lets go (`atomic::finish`), which takes an instant where an
        // appender holds on: a lock still held after all the turns (20,
        // a millisecond apart) is taken for an appender's.
        for _ in 0..LOCK_TURNS {
            let Some(file) = open(target) else {
                return Ok(Guard::none());
            };
            match lock_shared(&file, false) {
                Ok(true) => {}
                Ok(false) => {
                    if !same_file(&file, target) {
                        continue;
                    }
                    held_turns += 1;
                    if held_turns >= HELD_TURNS {
                        return Err(Error::Rows(crate::error::RowsError::Locked {
                            path: target.to_path_buf(),
                        }));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    continue;
                }
                // No locks on this file system: nothing to guard with.
                Err(_) => return Ok(Guard::none()),
            }
            if same_file(&file, target) {
                return Ok(Guard {
                    file: Some(file),
                    ours: true,
                });
            }
            unlock(&file);
        }
        Ok(Guard::none())
    }

    /// The guard of a caller that holds the target's appender lock itself
    /// (`held` is its open file).
    pub(crate) fn held_by_caller(held: &File) -> io::Result<Guard> {
        Ok(Guard {
            file: Some(held.try_clone()?),
            ours: false,
        })
    }

    /// No guard: nothing at the target, or nothing to lock it with.
    pub(crate) fn none() -> Guard {
        Guard {
            file: None,
            ours: true,
        }
    }

    /// Checks, just before the rename, that the file at `target` is the
    /// one guarded; if it is another (or there was none and now is one),
    /// guards that one instead: [`crate::error::RowsError::Locked`] if an appender holds it.
    pub(crate) fn recheck(&mut self, target: &Path) -> Result<()> {
        if let Some(file) = &self.file {
            if same_file(file, target) {
                return Ok(());
            }
        } else if std::fs::symlink_metadata(target).is_err() {
            return Ok(());
        }
        let new = Guard::take(target)?;
        self.release();
        *self = new;
        Ok(())
    }

    /// The guarded file, when the lock is ours.
    pub(crate) fn ours(&self) -> Option<&File> {
        self.file.as_ref().filter(|_| self.ours)
    }

    /// Releases the lock (when ours) and gives back the file, to be closed
    /// by the caller (off its thread, for a large file just replaced).
    pub(crate) fn release(&mut self) -> Option<File> {
        let file = self.file.take()?;
        if !self.ours {
            // The caller's lock: closing our duplicate leaves it held.
            return None;
        }
        // Released explicitly, not left to the last descriptor: a process
        // forked meanwhile holds a copy until its `exec`.
        unlock(&file);
        Some(file)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.release();
    }
}

/// Opens the regular file at `target` to lock it: for reading, or (a file
/// we may write but not read) for writing, which changes nothing in it.
/// `O_NOFOLLOW`: `target` has its links resolved, and a link planted since
/// is not followed. `O_NONBLOCK`: a FIFO planted since does not block.
#[cfg(unix)]
fn open(target: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(target)
        .or_else(|e| match e.kind() {
            io::ErrorKind::PermissionDenied => std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(flags)
                .open(target),
            _ => Err(e),
        })
        .ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

/// Elsewhere no appender locks are taken (see `lock_appender`).
#[cfg(not(unix))]
fn open(_target: &Path) -> Option<File> {
    None
}
