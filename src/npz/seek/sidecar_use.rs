//! The reader's side of the seek index sidecar ([`NpzReader::use_index_sidecar`]:
//! what it loads and saves; the file itself, and why it is trusted, in
//! `sidecar.rs`). Apart from `sidecar.rs` so that the reader can hold a
//! [`Sidecar`] without a circle of files.

use super::index::{MemberKey, SeekIndex};
use super::sidecar::Sidecar;
use super::sidecar_format::{encode, parse};
use crate::error::{Error, Result};
use crate::npz::reader::NpzReader;
use std::io::{self, Read, Seek};
use std::path::Path;

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
        let mut sidecar = Sidecar::open(folder, name, archive_len, mtime)
            .map_err(|e| Error::from(e).at_path(folder))?;
        sidecar.dirty = !self.indexes.is_empty();
        self.sidecar = Some(sidecar);
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
        let Ok(bytes) = sidecar.read(limit) else {
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
        let _ = sidecar.save(&bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::npz::seek::sidecar::stamp_of;
    use std::time::UNIX_EPOCH;
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
}
