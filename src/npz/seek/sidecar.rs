//! Seek indexes kept on disk beside the archive, between readers: the
//! sidecar file `.<archive name>.ndnpy-index` (`NpzReader::use_index_sidecar`,
//! in `sidecar_use.rs`; off by default; its format in `sidecar_format.rs`).
//!
//! A file beside a user's archive may have been put there by anyone who
//! can write to that folder (a shared dataset folder, `/tmp`), so it is
//! used as ours or not at all:
//!
//! - it is opened relative to the archive's folder (opened once, by
//!   descriptor) without following a symlink (`O_NOFOLLOW`), and read
//!   only if it is a regular file owned by the reading user and writable
//!   by nobody else;
//! - it is saved as a new file of mode 0600 made in that folder
//!   (`O_CREAT | O_EXCL`, never through a link), renamed over the
//!   sidecar's name in the same folder (`renameat`, which replaces a link
//!   put there rather than writing through it); a failed save removes its
//!   temporary file;
//! - its stamp (the archive's length and modification time) is the one the
//!   archive had when the reader opened it, so that a sidecar never
//!   describes other bytes than those the reader read;
//! - every checkpoint it brings is checked against the archive's bytes
//!   before a read starts there (the CRC-32 of its window and compressed
//!   span, `index.rs`), and a range over a whole member decodes and checks
//!   all of it, as a whole read does.
//!
//! On systems other than Unix the sidecar is neither read nor written.

use std::fs::Metadata;
use std::io;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// The archive's length and modification time (seconds and nanoseconds
/// since the epoch), as they were when a reader opened it.
pub(crate) type Stamp = (u64, (i64, u32));

/// The stamp of an archive whose metadata is `meta`.
pub(crate) fn stamp_of(meta: &Metadata) -> Option<Stamp> {
    let mtime = meta.modified().ok()?;
    let t = match mtime.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, d.subsec_nanos()),
        Err(e) => (
            -(e.duration().as_secs() as i64),
            e.duration().subsec_nanos(),
        ),
    };
    Some((meta.len(), t))
}

/// Where a reader keeps its sidecar, and what the archive looked like
/// when it was opened.
#[derive(Debug)]
pub(crate) struct Sidecar {
    folder: ours::Folder,
    /// The sidecar's name in the folder.
    name: String,
    pub(crate) archive_len: u64,
    pub(crate) mtime: (i64, u32),
    /// Read once, at the first index needed.
    pub(crate) loaded: bool,
    /// Indexes changed since the last save.
    pub(crate) dirty: bool,
}

impl Sidecar {
    /// The sidecar `name` in the archive's `folder` (opened now, once), for
    /// an archive of `archive_len` bytes modified at `mtime` when the
    /// reader opened it; not read yet, nothing to save.
    pub(crate) fn open(
        folder: &Path,
        name: String,
        archive_len: u64,
        mtime: (i64, u32),
    ) -> io::Result<Sidecar> {
        Ok(Sidecar {
            folder: ours::Folder::open(folder)?,
            name,
            archive_len,
            mtime,
            loaded: false,
            dirty: false,
        })
    }

    /// The sidecar's bytes, at most `limit`, if the file is ours.
    pub(crate) fn read(&self, limit: u64) -> io::Result<Vec<u8>> {
        self.folder.read_ours(&self.name, limit)
    }

    /// Replaces the sidecar with `bytes`, as a new file of ours.
    pub(crate) fn save(&self, bytes: &[u8]) -> io::Result<()> {
        self.folder.save_ours(&self.name, bytes)
    }
}

#[cfg(unix)]
mod ours {
    //! The sidecar's file, opened and replaced relative to the archive's
    //! folder, never through a link.

    use std::ffi::CString;
    use std::fs::File;
    use std::io::{self, Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    /// The archive's folder, opened once: the sidecar is found and
    /// replaced relative to it, whatever happens to the path later.
    #[derive(Debug)]
    pub(super) struct Folder(OwnedFd);

    fn c_name(name: &str) -> io::Result<CString> {
        CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }

    impl Folder {
        pub(super) fn open(path: &Path) -> io::Result<Folder> {
            let c = CString::new(path.as_os_str().as_bytes())
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            // SAFETY: `c` is a NUL-terminated path that outlives the call;
            // the result is checked.
            let fd = unsafe {
                libc::open(
                    c.as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                )
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `fd` is a descriptor just opened, owned by nobody else.
            Ok(Folder(unsafe { OwnedFd::from_raw_fd(fd) }))
        }

        /// The file `name` in the folder, at most `limit` bytes, if it is
        /// ours: a regular file (not reached through a link), owned by
        /// this process's user, writable by nobody else.
        pub(super) fn read_ours(&self, name: &str, limit: u64) -> io::Result<Vec<u8>> {
            let c = c_name(name)?;
            // SAFETY: the folder's descriptor is open; `c` is NUL-terminated
            // and outlives the call; the result is checked. `O_NONBLOCK`:
            // opening a FIFO put there does not wait for a writer.
            let fd = unsafe {
                libc::openat(
                    self.0.as_raw_fd(),
                    c.as_ptr(),
                    libc::O_RDONLY
                        | libc::O_NOFOLLOW
                        | libc::O_CLOEXEC
                        | libc::O_NONBLOCK
                        | libc::O_NOCTTY,
                )
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `fd` is a descriptor just opened, owned by nobody else.
            let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
            let meta = file.metadata()?;
            // SAFETY: no arguments, cannot fail.
            let me = unsafe { libc::geteuid() };
            if !meta.file_type().is_file() || meta.uid() != me || meta.mode() & 0o022 != 0 {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "the index sidecar is not the reading user's own file",
                ));
            }
            let mut out = Vec::new();
            file.take(limit + 1).read_to_end(&mut out)?;
            if out.len() as u64 > limit {
                return Err(io::ErrorKind::InvalidData.into());
            }
            Ok(out)
        }

        /// Replaces the file `name` in the folder with `bytes`: a new file
        /// of mode 0600 beside it, renamed over it.
        pub(super) fn save_ours(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
            let dir = self.0.as_raw_fd();
            let target = c_name(name)?;
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            for attempt in 0..16u32 {
                let temp = c_name(&format!(
                    "{name}.{}.{:x}.tmp",
                    std::process::id(),
                    nanos.wrapping_add(attempt.wrapping_mul(0x9E37_79B9))
                ))?;
                // SAFETY: the folder's descriptor is open; `temp` is
                // NUL-terminated and outlives the call; the result is
                // checked. `O_EXCL` with `O_NOFOLLOW`: a new file, never
                // one (or a link) that was there.
                let fd = unsafe {
                    libc::openat(
                        dir,
                        temp.as_ptr(),
                        libc::O_WRONLY
                            | libc::O_CREAT
                            | libc::O_EXCL
                            | libc::O_NOFOLLOW
                            | libc::O_CLOEXEC,
                        0o600 as libc::c_uint,
                    )
                };
                if fd < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::AlreadyExists {
                        continue;
                    }
                    return Err(e);
                }
                // SAFETY: `fd` is a descriptor just opened, owned by nobody
                // else.
                let mut file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
                let written = file.write_all(bytes);
                drop(file);
                // SAFETY: both names are NUL-terminated and outlive the
                // call; the folder's descriptor is open.
                let renamed = written.and_then(|()| {
                    match unsafe { libc::renameat(dir, temp.as_ptr(), dir, target.as_ptr()) } {
                        0 => Ok(()),
                        _ => Err(io::Error::last_os_error()),
                    }
                });
                if renamed.is_err() {
                    // SAFETY: as above; a failure leaves nothing worse.
                    unsafe { libc::unlinkat(dir, temp.as_ptr(), 0) };
                }
                return renamed;
            }
            Err(io::ErrorKind::AlreadyExists.into())
        }
    }
}

#[cfg(not(unix))]
mod ours {
    //! Elsewhere: no sidecar (no way here to open it without following
    //! links, or to check its owner).

    use std::io;
    use std::path::Path;

    #[derive(Debug)]
    pub(super) struct Folder;

    impl Folder {
        pub(super) fn open(_path: &Path) -> io::Result<Folder> {
            Ok(Folder)
        }

        pub(super) fn read_ours(&self, _name: &str, _limit: u64) -> io::Result<Vec<u8>> {
            Err(io::ErrorKind::Unsupported.into())
        }

        pub(super) fn save_ours(&self, _name: &str, _bytes: &[u8]) -> io::Result<()> {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn only_our_own_regular_file_is_read() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let folder = ours::Folder::open(dir.path()).unwrap();
        folder.save_ours("x", b"ours").unwrap();
        assert_eq!(folder.read_ours("x", 100).unwrap(), b"ours");
        let mode = |name: &str| {
            let meta = std::fs::metadata(dir.path().join(name)).unwrap();
            meta.permissions().mode() & 0o777
        };
        assert_eq!(mode("x"), 0o600);
        // Too large, through a link, writable by others, not a file.
        assert!(folder.read_ours("x", 3).is_err());
        std::os::unix::fs::symlink(dir.path().join("x"), dir.path().join("l")).unwrap();
        assert!(folder.read_ours("l", 100).is_err());
        std::fs::write(dir.path().join("w"), b"ours").unwrap();
        std::fs::set_permissions(dir.path().join("w"), PermissionsExt::from_mode(0o646)).unwrap();
        assert!(folder.read_ours("w", 100).is_err());
        std::fs::create_dir(dir.path().join("d")).unwrap();
        assert!(folder.read_ours("d", 100).is_err());
        let fifo = std::ffi::CString::new(dir.path().join("f").to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(
            folder.read_ours("f", 100).is_err(),
            "refused, without waiting"
        );
        // Saving over a link replaces the link, not what it points at.
        std::fs::write(dir.path().join("victim"), b"precious").unwrap();
        std::os::unix::fs::symlink(dir.path().join("victim"), dir.path().join("v")).unwrap();
        folder.save_ours("v", b"ours").unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("victim")).unwrap(),
            b"precious"
        );
        assert_eq!(folder.read_ours("v", 100).unwrap(), b"ours");
    }
}
