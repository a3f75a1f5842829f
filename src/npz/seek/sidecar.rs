//! Seek indexes kept on disk beside the archive, between readers: the
//! sidecar file `.<archive name>.ndnpy-index` ([`NpzReader::use_index_sidecar`],
//! off by default; its format in `sidecar_format.rs`).
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

use super::index::{MemberKey, SeekIndex};
use super::sidecar_format::{encode, parse};
use crate::error::{Error, Result};
use crate::npz::reader::NpzReader;
use std::fs::Metadata;
use std::io::{self, Read, Seek};
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
    loaded: bool,
    /// Indexes changed since the last save.
    pub(crate) dirty: bool,
}

impl<R: Read + Seek> NpzReader<R> {
    /// Keeps the seek indexes that [`NpzReader::read_range`] builds in a
    /// file beside the archive, `.<archive name>.ndnpy-index`, and uses
    /// one found there (default: off), so that a later reader of the same
    /// archive reads rows from the middle of compressed members without
    /// decoding up to them first.
    ///
    /// The file records the archive's length and modification time (when
    /// this reader opened it), and each member's offset, sizes and CRC-32:
    /// it is ignored (and replaced) when any of them changed, or when it is
    /// malformed. It is used only if it is ours: a regular file (never
    /// through a symbolic link), owned by the reading user, writable by
    /// nobody else; it is written as a new file of mode 0600 in the
    /// archive's folder and renamed into place, after each read that
    /// extended an index. Each place it records to start decoding from is
    /// checked against the archive's bytes (a CRC-32 of the compressed
    /// bytes that follow it and of its window) before a read starts there,
    /// and a range that covers a whole member is decoded whole and checked
    /// against its CRC-32 whatever the file says. (Saving reads the
    /// compressed bytes each new checkpoint's span covers once more, for
    /// that CRC-32; the first read from a loaded checkpoint reads its span
    /// once before decoding.) Only for readers opened
    /// from a path ([`NpzReader::open`]); others get an error. On systems
    /// other than Unix the file is neither read nor written.
    ///
    /// ```
    /// use ndarray::{Array2, Ix2};
    /// use ndnpy::{NpzReader, NpzWriter};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut w = NpzWriter::create(&path)?.codec(ndnpy::npz::Codec::deflate());
    /// w.add("a", &Array2::<f64>::zeros((1000, 8)))?;
    /// w.finish()?;
    /// let mut npz = NpzReader::open(&path)?;
    /// npz.use_index_sidecar(true)?;
    /// let rows = npz.read_range::<f64, Ix2>("a", 500..510)?;
    /// assert_eq!(rows.nrows(), 10);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn use_index_sidecar(&mut self, on: bool) -> Result<()> {
        if !on {
            self.sidecar = None;
            return Ok(());
        }
        let (Some(archive), Some((archive_len, mtime))) = (self.path.as_deref(), self.opened)
        else {
            return Err(Error::Io(io::Error::new(
                io::ErrorKind::Unsupported,
                "an index sidecar needs a reader opened from a path (NpzReader::open)",
            )));
        };
        let name = archive
            .file_name()
            .and_then(|n| n.to_str())
            .map(|n| format!(".{n}.ndnpy-index"))
            .ok_or_else(|| {
                Error::Io(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the archive's path has no file name",
                ))
            })?;
        let folder = match archive.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let folder = ours::Folder::open(folder).map_err(|e| Error::from(e).at_path(folder))?;
        self.sidecar = Some(Sidecar {
            folder,
            name,
            archive_len,
            mtime,
            loaded: false,
            dirty: !self.indexes.is_empty(),
        });
        Ok(())
    }

    /// Reads the sidecar (once), taking the indexes it holds for members
    /// that match; called before member `index`'s index is needed.
    pub(crate) fn load_sidecar(&mut self, _index: usize, _key: MemberKey) {
        let Some(sidecar) = self.sidecar.as_mut().filter(|s| !s.loaded) else {
            return;
        };
        sidecar.loaded = true;
        let limit = sidecar.archive_len / 4 + (1 << 20);
        let Ok(bytes) = sidecar.folder.read_ours(&sidecar.name, limit) else {
            return;
        };
        let Some(found) = parse(&bytes, sidecar.archive_len, sidecar.mtime) else {
            return;
        };
        for (name, index) in found {
            let Some(i) = self.directory.lookup(&name) else {
                continue;
            };
            if self.directory.entries[i].name != name {
                continue;
            }
            let entry = &self.directory.entries[i];
            let k = index.key;
            if (k.compressed, k.size, k.crc) == (entry.compressed_size, entry.size, entry.crc) {
                let data_start = entry.data_start(&mut self.input, self.archive_len).ok();
                if data_start == Some(k.data_start) {
                    self.indexes.entry(i).or_insert(index);
                }
            }
        }
    }

    /// Writes the sidecar with every index held, if any changed since the
    /// last save (best effort: a sidecar that cannot be written is no
    /// worse than none). Each checkpoint's span CRC-32 is computed here
    /// from the archive's bytes, once per span.
    pub(crate) fn save_sidecar(&mut self) {
        let Some(sidecar) = self.sidecar.as_mut().filter(|s| s.dirty) else {
            return;
        };
        sidecar.dirty = false;
        for index in self.indexes.values_mut() {
            for i in 0..index.checkpoints.len() {
                let end = index.span_end(i);
                if index.checkpoints[i].check.is_some_and(|c| c.0 == end) {
                    continue;
                }
                let data_start = index.key.data_start;
                let Ok(crc) = index.span_crc(i, &mut self.input, data_start) else {
                    // Not all of the archive can be read: no sidecar.
                    return;
                };
                index.checkpoints[i].check = Some((end, crc));
            }
        }
        let mut members: Vec<(&str, &SeekIndex)> = self
            .indexes
            .iter()
            .map(|(&i, index)| (self.directory.entries[i].name.as_str(), index))
            .collect();
        members.sort_by_key(|m| m.1.key.data_start);
        let bytes = encode(&members, sidecar.archive_len, sidecar.mtime);
        let _ = sidecar.folder.save_ours(&sidecar.name, &bytes);
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
    #[test]
    fn a_second_reader_starts_with_the_first_readers_index() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.npz");
        let a = ndarray::Array1::from_iter((0..3_000_000u64).map(|i| i * i % 977));
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("a.npy", options).unwrap();
        zip.write_all(&crate::WriteNpy::to_npy_bytes(&a).unwrap())
            .unwrap();
        std::fs::write(&path, zip.finish().unwrap().into_inner()).unwrap();
        let mut first = NpzReader::open(&path).unwrap();
        first.use_index_sidecar(true).unwrap();
        first
            .read_range::<u64, ndarray::Ix1>("a", 2_900_000..2_900_010)
            .unwrap();
        let built = first.indexes[&0].checkpoints.len();
        assert!(built > 3, "{built}");
        // The second reader's first read, near the start, needs nothing
        // past the first checkpoint, yet holds them all: from the file.
        let mut second = NpzReader::open(&path).unwrap();
        second.use_index_sidecar(true).unwrap();
        let rows = second.read_range::<u64, ndarray::Ix1>("a", 5..7).unwrap();
        assert_eq!(rows, a.slice(ndarray::s![5..7]));
        let (got, made) = (&second.indexes[&0], &first.indexes[&0]);
        assert_eq!(got.checkpoints.len(), made.checkpoints.len());
        for (a, b) in got.checkpoints.iter().zip(&made.checkpoints) {
            assert!(a.same_place(b));
        }
        // Only the checkpoint the read started at was checked against the
        // archive's bytes.
        let trusted: Vec<bool> = got.checkpoints.iter().map(|c| c.trusted).collect();
        assert!(
            trusted[0] && !trusted[1..].iter().any(|&t| t),
            "{trusted:?}"
        );
        // Without the sidecar it starts from nothing.
        let mut third = NpzReader::open(&path).unwrap();
        third.read_range::<u64, ndarray::Ix1>("a", 5..7).unwrap();
        assert_eq!(third.indexes[&0].checkpoints.len(), 1);
    }

    /// An archive of one deflated member of 3 M `u64` (24 MB: several
    /// checkpoints) at `path`, and the array.
    fn archive(path: &Path) -> (ndarray::Array1<u64>, Vec<u8>) {
        use std::io::Write;
        let a = ndarray::Array1::from_iter((0..3_000_000u64).map(|i| i * i % 977));
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("a.npy", options).unwrap();
        zip.write_all(&crate::WriteNpy::to_npy_bytes(&a).unwrap())
            .unwrap();
        let bytes = zip.finish().unwrap().into_inner();
        std::fs::write(path, &bytes).unwrap();
        (a, bytes)
    }

    #[test]
    fn the_stamp_is_the_archives_when_it_was_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.npz");
        archive(&path);
        let before = stamp_of(&std::fs::metadata(&path).unwrap()).unwrap();
        let mut npz = NpzReader::open(&path).unwrap();
        // Changed after the reader opened it (and read its directory).
        let file = std::fs::File::options().append(true).open(&path).unwrap();
        file.set_modified(UNIX_EPOCH + std::time::Duration::from_secs(1_000_000))
            .unwrap();
        file.set_len(before.0 + 10).unwrap();
        drop(file);
        npz.use_index_sidecar(true).unwrap();
        let s = npz.sidecar.as_ref().unwrap();
        assert_eq!((s.archive_len, s.mtime), before);
    }

    #[test]
    fn a_checkpoint_whose_bytes_changed_throws_the_loaded_index_away() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.npz");
        let (a, bytes) = archive(&path);
        let mut first = NpzReader::open(&path).unwrap();
        first.use_index_sidecar(true).unwrap();
        first
            .read_range::<u64, ndarray::Ix1>("a", 2_900_000..2_900_010)
            .unwrap();
        let made = first.indexes[&0].checkpoints.len();
        drop(first);
        // Intact: the second reader starts at a loaded checkpoint, checks
        // it, and trusts it (and no other yet).
        let mut second = NpzReader::open(&path).unwrap();
        second.use_index_sidecar(true).unwrap();
        second
            .read_range::<u64, ndarray::Ix1>("a", 2_000_000..2_000_010)
            .unwrap();
        let trusted = second.indexes[&0]
            .checkpoints
            .iter()
            .filter(|c| c.trusted)
            .count();
        assert_eq!((second.indexes[&0].checkpoints.len(), trusted), (made, 1));
        // The same length and time, one compressed byte changed in the
        // span after the checkpoint the read starts at: thrown away, the
        // index rebuilt from the start (all of it this reader's own).
        let index = &second.indexes[&0];
        let at = index.checkpoints.partition_point(|c| c.out <= 16_000_080) - 1;
        let byte = (index.checkpoints[at].bit / 8 + 100 + index.key.data_start) as usize;
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        let mut changed = bytes.clone();
        changed[byte] ^= 1;
        std::fs::write(&path, &changed).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(mtime).unwrap();
        drop(file);
        let mut third = NpzReader::open(&path).unwrap();
        third.use_index_sidecar(true).unwrap();
        let _ = third.read_range::<u64, ndarray::Ix1>("a", 2_000_000..2_000_010);
        let index = &third.indexes[&0];
        assert!(index.checkpoints.iter().all(|c| c.trusted));
        assert!(index.checkpoints.len() < made);
        let _ = a;
    }

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
