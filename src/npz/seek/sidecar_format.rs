//! Seek indexes kept on disk beside the archive, between readers: the
//! sidecar file `.<archive name>.ndnpy-index` ([`NpzReader::use_index_sidecar`],
//! off by default).
//!
//! Format (little-endian): `NDNPYIDX`, version (u32, 1), the archive's
//! length (u64) and modification time (i64 seconds, u32 nanoseconds),
//! the number of members (u32); per member its name (u16 length, UTF-8),
//! data offset, compressed size, size (u64 each), CRC-32 (u32), whether
//! its index is complete (u8), the number of checkpoints (u32); per
//! checkpoint its output position and bit position (u64), the CRC-32 of
//! the output before it (u32), its window's length (u16, at most 32 768)
//! and the window deflated (u32 length, then the bytes).
//!
//! A sidecar is used only if the archive's length and modification time
//! are those it records, and only for members whose offset, sizes and
//! CRC-32 are those it records: any change to the archive makes it stale,
//! and a stale or malformed one is ignored (and replaced by the next
//! save). It is a cache: whoever can write it can make `read_range` give
//! wrong rows, as whoever can write the archive can.

use super::index::{Checkpoint, MemberKey, SeekIndex};
use super::inflate::WINDOW;
use crate::error::{Error, Result};
use crate::npz::inflate::inflate_piece;
use crate::npz::reader::NpzReader;
use std::collections::HashMap;
use std::io::{self, Read, Seek};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

const MAGIC: &[u8; 8] = b"NDNPYIDX";
const VERSION: u32 = 1;

/// Where a reader keeps its sidecar, and what the archive looked like
/// when it was opened.
#[derive(Debug)]
pub(crate) struct Sidecar {
    path: PathBuf,
    archive_len: u64,
    mtime: (i64, u32),
    /// Read once, at the first index needed.
    loaded: bool,
    /// Indexes changed since the last save.
    pub(crate) dirty: bool,
}

/// The sidecar's name for the archive at `archive`.
fn sidecar_path(archive: &Path) -> Option<PathBuf> {
    let name = archive.file_name()?.to_str()?;
    let file = format!(".{name}.ndnpy-index");
    Some(match archive.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.join(file),
        _ => PathBuf::from(file),
    })
}

/// The archive's length and modification time now.
fn stamp(archive: &Path) -> io::Result<(u64, (i64, u32))> {
    let meta = std::fs::metadata(archive)?;
    let mtime = meta.modified()?;
    let t = match mtime.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, d.subsec_nanos()),
        Err(e) => (
            -(e.duration().as_secs() as i64),
            e.duration().subsec_nanos(),
        ),
    };
    Ok((meta.len(), t))
}

impl<R: Read + Seek> NpzReader<R> {
    /// Keeps the seek indexes that [`NpzReader::read_range`] builds in a
    /// file beside the archive, `.<archive name>.ndnpy-index`, and uses
    /// one found there (default: off), so that a later reader of the same
    /// archive reads rows from the middle of compressed members without
    /// decoding up to them first.
    ///
    /// The file records the archive's length and modification time, and
    /// each member's offset, sizes and CRC-32: it is ignored (and
    /// replaced) when any of them changed, or when it is malformed. It is
    /// written atomically, after each read that extended an index. Only
    /// for readers opened from a path ([`NpzReader::open`]); others get an
    /// error. The file is trusted as a cache of the archive: a sidecar
    /// altered to match the archive's records could make `read_range` give
    /// wrong rows (never undefined behaviour or a crash), as an altered
    /// archive could.
    ///
    /// ```
    /// use ndarray::{Array2, Ix2};
    /// use ndnpy::{NpzReader, NpzWriter};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut w = NpzWriter::create_compressed(&path)?;
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
        let archive = self.path.clone().ok_or_else(|| {
            Error::Io(io::Error::new(
                io::ErrorKind::Unsupported,
                "an index sidecar needs a reader opened from a path (NpzReader::open)",
            ))
        })?;
        let path = sidecar_path(&archive).ok_or_else(|| {
            Error::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the archive's path has no file name",
            ))
        })?;
        let (archive_len, mtime) = stamp(&archive).map_err(|e| Error::from(e).at_path(&archive))?;
        self.sidecar = Some(Sidecar {
            path,
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
        let Ok(bytes) = read_limited(&sidecar.path, sidecar.archive_len / 4 + (1 << 20)) else {
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
    /// worse than none).
    pub(crate) fn save_sidecar(&mut self) {
        let Some(sidecar) = self.sidecar.as_mut().filter(|s| s.dirty) else {
            return;
        };
        sidecar.dirty = false;
        let mut members: Vec<(&str, &SeekIndex)> = self
            .indexes
            .iter()
            .map(|(&i, index)| (self.directory.entries[i].name.as_str(), index))
            .collect();
        members.sort_by_key(|m| m.1.key.data_start);
        let bytes = encode(&members, sidecar.archive_len, sidecar.mtime);
        let _ = crate::io::atomic::write_file(&sidecar.path, bytes.len() as u64, |w| {
            io::Write::write_all(w, &bytes)?;
            Ok(())
        });
    }
}

/// The whole file, if it has at most `limit` bytes.
fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(io::ErrorKind::InvalidData.into());
    }
    Ok(out)
}

fn encode(members: &[(&str, &SeekIndex)], archive_len: u64, mtime: (i64, u32)) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&archive_len.to_le_bytes());
    out.extend_from_slice(&mtime.0.to_le_bytes());
    out.extend_from_slice(&mtime.1.to_le_bytes());
    out.extend_from_slice(&(members.len() as u32).to_le_bytes());
    let mut deflater = libdeflater::Compressor::new(libdeflater::CompressionLvl::default());
    for (name, index) in members {
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        let k = index.key;
        for v in [k.data_start, k.compressed, k.size] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&k.crc.to_le_bytes());
        out.push(index.complete as u8);
        out.extend_from_slice(&(index.checkpoints.len() as u32).to_le_bytes());
        for cp in &index.checkpoints {
            out.extend_from_slice(&cp.out.to_le_bytes());
            out.extend_from_slice(&cp.bit.to_le_bytes());
            out.extend_from_slice(&cp.crc.to_le_bytes());
            out.extend_from_slice(&(cp.window.len() as u16).to_le_bytes());
            let mut packed = vec![0u8; deflater.deflate_compress_bound(cp.window.len())];
            let n = deflater
                .deflate_compress(&cp.window, &mut packed)
                .unwrap_or(0);
            out.extend_from_slice(&(n as u32).to_le_bytes());
            out.extend_from_slice(&packed[..n]);
        }
    }
    out
}

/// A reader of the sidecar's fields, every read checked.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.bytes(2)?.try_into().ok()?))
    }
}

/// The indexes a sidecar holds, by member name, if it is well formed and
/// records the archive's length and modification time.
fn parse(bytes: &[u8], archive_len: u64, mtime: (i64, u32)) -> Option<HashMap<String, SeekIndex>> {
    let mut f = Fields(bytes);
    if f.bytes(8)? != MAGIC || f.u32()? != VERSION || f.u64()? != archive_len {
        return None;
    }
    if (f.u64()? as i64, f.u32()?) != mtime {
        return None;
    }
    let count = f.u32()?;
    let mut out = HashMap::new();
    for _ in 0..count {
        let len = f.u16()? as usize;
        let name = std::str::from_utf8(f.bytes(len)?).ok()?.to_owned();
        let key = MemberKey {
            data_start: f.u64()?,
            compressed: f.u64()?,
            size: f.u64()?,
            crc: f.u32()?,
        };
        let complete = f.bytes(1)?[0] == 1;
        let n = f.u32()? as usize;
        // Each checkpoint takes at least 26 bytes of the file.
        if n == 0 || n > f.0.len() / 26 + 1 {
            return None;
        }
        let mut checkpoints: Vec<Checkpoint> = Vec::with_capacity(n);
        for _ in 0..n {
            let (out_at, bit, crc) = (f.u64()?, f.u64()?, f.u32()?);
            let window_len = f.u16()? as usize;
            let packed_len = f.u32()? as usize;
            let packed = f.bytes(packed_len)?;
            let believable = window_len as u64 == out_at.min(WINDOW as u64)
                && out_at <= key.size
                && bit <= key.compressed.saturating_mul(8)
                && checkpoints
                    .last()
                    .is_none_or(|p| p.out < out_at && p.bit < bit);
            if !believable {
                return None;
            }
            let mut window = vec![0u8; window_len];
            if window_len > 0 {
                inflate_piece(packed, &mut window).ok()?;
            }
            checkpoints.push(Checkpoint {
                out: out_at,
                bit,
                crc,
                window: window.into(),
            });
        }
        if (checkpoints[0].out, checkpoints[0].bit, checkpoints[0].crc) != (0, 0, 0) {
            return None;
        }
        out.insert(
            name,
            SeekIndex {
                key,
                checkpoints,
                complete,
            },
        );
    }
    f.0.is_empty().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> SeekIndex {
        let mut index = SeekIndex::new(MemberKey {
            data_start: 100,
            compressed: 5000,
            size: 80_000,
            crc: 7,
        });
        index.checkpoints.push(Checkpoint {
            out: 40_000,
            bit: 20_003,
            crc: 9,
            window: (0..WINDOW).map(|i| (i % 7) as u8).collect(),
        });
        index
    }

    #[test]
    fn sidecars_round_trip_and_anything_else_is_ignored() {
        let index = index();
        let bytes = encode(&[("a.npy", &index)], 1234, (5, 6));
        let back = parse(&bytes, 1234, (5, 6)).unwrap();
        assert_eq!(back["a.npy"], index);
        // Another archive length or time: stale.
        assert!(parse(&bytes, 1235, (5, 6)).is_none());
        assert!(parse(&bytes, 1234, (5, 7)).is_none());
        // Every truncation and every flipped byte: refused or still
        // believable, never a panic.
        for cut in 0..bytes.len() {
            assert!(parse(&bytes[..cut], 1234, (5, 6)).is_none());
        }
        for at in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x5A;
            let _ = parse(&bad, 1234, (5, 6));
        }
        // Checkpoints out of order are refused.
        let mut twisted = index.clone();
        twisted.checkpoints.swap(0, 1);
        assert!(parse(&encode(&[("a.npy", &twisted)], 1, (0, 0)), 1, (0, 0)).is_none());
    }

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
        assert_eq!(second.indexes[&0], first.indexes[&0]);
        // Without the sidecar it starts from nothing.
        let mut third = NpzReader::open(&path).unwrap();
        third.read_range::<u64, ndarray::Ix1>("a", 5..7).unwrap();
        assert_eq!(third.indexes[&0].checkpoints.len(), 1);
    }
}
