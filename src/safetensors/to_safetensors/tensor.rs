//! One member on its way to becoming a tensor: checked from its header
//! before anything is written (its type, its layout, its claimed length
//! against what the archive holds), then written from the mapping as it is
//! or read and converted a chunk at a time, its CRC-32 checked either way.

use crate::error::{Error, Result};
use crate::format::header::Header;
use crate::npz::{Compression, NpzMmap, NpzReader};
use crate::safetensors::dtypes::{self, Conversion};
use crate::safetensors::{layout, SafetensorsOptions};
use safetensors::Dtype;
use std::cell::RefCell;
use std::io::{self, Read, Seek, Write};

/// Deflate turns one compressed byte into at most 1032 bytes (258-byte
/// matches coded in 2 bits): a member claiming more data than this ratio
/// allows is corrupt, and its claim is not allocated. Other methods
/// (bzip2, LZMA, Zstandard: zeros compress 20000:1 and more) are bounded
/// by the directory's size alone, which the member reader enforces.
const DEFLATE_MAX_RATIO: u64 = 1032;

/// Checks the data length member `name`'s header claims against what the
/// archive can hold for it: the directory's size of its `.npy` file
/// (stored or decompressed; the member reader holds the stream to it) and,
/// deflated, what its compressed bytes can inflate to. Done for every
/// member before anything is written, so that a claim sizes neither the
/// output file nor a buffer.
fn within_member(name: &str, header: &Header, info: &crate::npz::MemberInfo) -> Result<()> {
    let len = header.data_len()? as u64;
    let mut room = info.size;
    if info.compression == Compression::Deflated {
        room = room.min(info.compressed_size.saturating_mul(DEFLATE_MAX_RATIO));
    }
    if len > room {
        return Err(Error::Archive(crate::error::ArchiveError::CorruptMember {
            name: name.to_owned(),
            reason: format!(
                "its header declares {len} bytes of data, more than the archive holds for it \
                 ({} bytes in the archive, {} once read)",
                info.compressed_size, info.size
            ),
        }));
    }
    Ok(())
}

/// What the tensors share: the archive's reader, and its map when it is
/// mapped.
pub(super) struct Context<'m, 'r, R: Read + Seek> {
    pub(super) map: Option<&'m NpzMmap>,
    pub(super) reader: RefCell<&'r mut NpzReader<R>>,
}

/// One member on its way to becoming a tensor.
pub(super) struct Tensor<'m> {
    pub(super) name: String,
    pub(super) conversion: Conversion,
    /// Bytes of the tensor's data.
    pub(super) len: usize,
    /// The member in the mapping when its data is already the tensor's
    /// bytes; `None` when it must be read and converted.
    mapped: Option<Mapped<'m>>,
}

/// A stored member in the mapped archive whose data is the tensor's bytes
/// as they are: written from the mapping, its CRC-32 checked on the way
/// (the reader's check, without a second pass over the bytes).
struct Mapped<'m> {
    /// The member's `.npy` file.
    npy: &'m [u8],
    /// Where its data starts, after the `.npy` header.
    start: usize,
    /// The CRC-32 the archive records for the member.
    crc: u32,
}

impl<'m> Mapped<'m> {
    /// The tensor's `len` bytes (checked to lie in the member).
    fn data(&self, len: usize) -> &'m [u8] {
        &self.npy[self.start..self.start + len]
    }

    /// The CRC-32 state of the member's bytes before its data.
    fn crc_before_data(&self) -> crc32fast::Hasher {
        let mut crc = crc32fast::Hasher::new();
        crc.update(&self.npy[..self.start]);
        crc
    }

    /// Finishes `crc` (the state after the tensor's data) with the
    /// member's bytes after the data, and compares it with the archive's.
    fn check(&self, mut crc: crc32fast::Hasher, tensor: &Tensor<'_>) -> Result<()> {
        crc.update(&self.npy[self.start + tensor.len..]);
        match crc.finalize() == self.crc {
            true => Ok(()),
            false => Err(Error::Archive(crate::error::ArchiveError::BadCrc {
                name: tensor.name.clone(),
            })),
        }
    }
}

impl<'m, R: Read + Seek> Context<'m, '_, R> {
    /// Checks member `name` from its header and finds where its bytes come
    /// from.
    pub(super) fn tensor(&self, name: String, options: &SafetensorsOptions) -> Result<Tensor<'m>> {
        let in_member = |e| crate::npz::in_member(&name, e);
        let info = self.reader.borrow_mut().member_info(&name)?;
        let stored = info.compression == Compression::Stored;
        let (header, data, big) = match stored.then(|| self.npy_bytes(&name)) {
            Some(Some((npy, crc))) => {
                // `read_from` leaves the slice at the first byte of data.
                let mut rest = npy;
                let header = Header::read_from(&mut rest).map_err(in_member)?;
                let start = npy.len() - rest.len();
                let big = raw_pairs(&header) && says_big(&npy[..start]);
                (header, Some((npy, start, crc)), big)
            }
            _ => {
                let header = self.reader.borrow_mut().header(&name)?;
                let big = raw_pairs(&header) && {
                    let mut reader = self.reader.borrow_mut();
                    let mut member = Recording {
                        inner: reader.member_reader(&name)?,
                        seen: Vec::new(),
                    };
                    Header::read_from(&mut member).map_err(in_member)?;
                    says_big(&member.seen)
                };
                (header, None, big)
            }
        };
        let raw_as = options.raw_format(raw_itemsize(&header));
        let mut conversion = dtypes::to_safetensors(&name, &header, raw_as)?;
        if big && conversion.dtype == Dtype::BF16 {
            // ml_dtypes writes '>V2' for a byte-swapped bfloat16 array;
            // the parsed dtype drops the mark (NumPy's rule for raw items),
            // the header's text keeps it.
            conversion.swap = Some(2);
        }
        let len = header.data_len()?;
        let mapped = match data {
            Some((npy, start, _)) if npy.len() - start < len => {
                return Err(Error::Archive(crate::error::ArchiveError::CorruptMember {
                    reason: format!(
                        "its data ends early: the header declares {len} bytes, the member holds {}",
                        npy.len() - start
                    ),
                    name,
                }))
            }
            Some((npy, start, crc)) if conversion.in_place() => Some(Mapped { npy, start, crc }),
            _ => None,
        }
        .filter(|m| !conversion.bools || layout::bools_are_canonical(m.data(len)));
        within_member(&name, &header, &info)?;
        Ok(Tensor {
            name,
            conversion,
            len,
            mapped,
        })
    }

    /// The `.npy` file of stored member `name` in the map, with the CRC-32
    /// the archive records for it, if the archive is mapped and the member
    /// passes the map's checks for viewing it in place (supported, not
    /// encrypted, its stored and declared sizes equal, inside the file);
    /// any other member is read through the reader, which reports what is
    /// wrong with it.
    fn npy_bytes(&self, name: &str) -> Option<(&'m [u8], u32)> {
        let (entry, npy) = self.map?.stored_bytes(name).ok()?;
        Some((npy, entry.crc))
    }
}

impl<R: Read + Seek> Context<'_, '_, R> {
    /// Writes `t`'s bytes to `out`, checking its member's CRC-32 as
    /// np.load checks it: from the mapping as they are, or read from the
    /// member and converted. Memory stays a chunk's worth, but for a
    /// Fortran-order member, which is reordered whole.
    pub(super) fn write_tensor(&self, t: &Tensor<'_>, out: &mut dyn Write) -> Result<()> {
        /// Chunks as large as the output's buffer, so that they are written
        /// past it, each checksummed while it is in cache.
        const CHUNK: usize = 1 << 20;
        let name = t.name.as_str();
        if let Some(mapped) = &t.mapped {
            let mut crc = mapped.crc_before_data();
            for chunk in mapped.data(t.len).chunks(CHUNK) {
                out.write_all(chunk)?;
                crc.update(chunk);
            }
            return mapped.check(crc, t);
        }
        let io_error = |e| crate::npz::member_io_error(name, e);
        let ends_early = |held: usize| {
            Error::Archive(crate::error::ArchiveError::CorruptMember {
                name: name.to_owned(),
                reason: format!(
                    "its data ends early: the header declares {} bytes, the member holds {held}",
                    t.len
                ),
            })
        };
        let mut reader = self.reader.borrow_mut();
        let mut member = reader.member_reader(name)?;
        Header::read_from(&mut member).map_err(|e| crate::npz::in_member(name, e))?;
        let c = &t.conversion;
        if c.transpose {
            // The length was checked against the directory's sizes
            // (`within_member`); the buffer still grows only as bytes
            // arrive, so that a member whose stream ends early costs what
            // it holds.
            let mut data = Vec::new();
            data.try_reserve_exact(t.len.min(64 << 20))
                .map_err(|_| Error::Io(io::ErrorKind::OutOfMemory.into()))?;
            (&mut member)
                .take(t.len as u64)
                .read_to_end(&mut data)
                .map_err(io_error)?;
            if data.len() < t.len {
                return Err(ends_early(data.len()));
            }
            if let Some(unit) = c.swap {
                layout::swap_bytes(&mut data, unit);
            }
            let mut data = layout::fortran_to_c(&data, &c.shape, c.itemsize);
            if c.bools {
                layout::canonical_bools(&mut data);
            }
            out.write_all(&data)?;
        } else {
            // A chunk at a time; a multiple of every item size swapped.
            let mut buf = Vec::new();
            let mut done = 0;
            while done < t.len {
                let want = (t.len - done).min(CHUNK);
                buf.clear();
                (&mut member)
                    .take(want as u64)
                    .read_to_end(&mut buf)
                    .map_err(io_error)?;
                if buf.len() < want {
                    return Err(ends_early(done + buf.len()));
                }
                if let Some(unit) = c.swap {
                    layout::swap_bytes(&mut buf, unit);
                }
                if c.bools {
                    layout::canonical_bools(&mut buf);
                }
                out.write_all(&buf)?;
                done += want;
            }
        }
        // To the end, so that the CRC-32 is checked.
        io::copy(&mut member, &mut io::sink()).map_err(io_error)?;
        Ok(())
    }
}

/// The item size of `header`'s raw items (`V1`, `V2`, alone or as a
/// sub-array's items), 0 for any other dtype: which of the formats of
/// [`SafetensorsOptions`] applies.
fn raw_itemsize(header: &Header) -> usize {
    use crate::format::dtype::{DType, Kind};
    match &header.dtype {
        DType::Scalar(s) if s.kind == Kind::Void => s.size,
        DType::SubArray(inner, _) => match &**inner {
            DType::Scalar(s) if s.kind == Kind::Void => s.size,
            _ => 0,
        },
        _ => 0,
    }
}

/// Whether `header` is of raw 2-byte items (`V2`, alone or as a
/// sub-array's items): those whose byte order only the header's text says.
fn raw_pairs(header: &Header) -> bool {
    use crate::format::dtype::{DType, Kind, Scalar};
    let scalar = match &header.dtype {
        DType::Scalar(s) => s,
        DType::SubArray(inner, _) => match &**inner {
            DType::Scalar(s) => s,
            _ => return false,
        },
        DType::Record(_) => return false,
    };
    matches!(
        scalar,
        Scalar {
            kind: Kind::Void,
            size: 2,
            ..
        }
    )
}

/// Whether the header at the start of `npy` (a `.npy` file's first bytes)
/// marks raw items big-endian (`'>V2'`). Only the header's text is read:
/// the data after it may hold any bytes.
fn says_big(npy: &[u8]) -> bool {
    let (start, len): (usize, _) = match npy.get(6) {
        Some(1) => (
            10,
            npy.get(8..10)
                .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize),
        ),
        Some(_) => (
            12,
            npy.get(8..12)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
        ),
        None => (0, None),
    };
    let Some(len) = len else { return false };
    let end = start.saturating_add(len).min(npy.len());
    npy.get(start..end)
        .is_some_and(|text| text.windows(2).any(|w| w == b">V"))
}

/// A reader that keeps what it read (a member's first bytes, for its
/// header's text).
struct Recording<R> {
    inner: R,
    seen: Vec<u8>,
}

impl<R: Read> Read for Recording<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.seen.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::dtype::DType;
    use crate::format::header::Version;

    #[test]
    fn stored_members_in_layout_are_handed_over_from_the_map() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npz");
        let mut w = crate::npz::NpzWriter::create(&path).unwrap();
        w.add("le", &ndarray::Array2::<f32>::ones((64, 3))).unwrap();
        let header = Header {
            dtype: DType::parse(">f4").unwrap(),
            shape: vec![2],
            fortran_order: false,
            version: Version::V1,
        };
        w.add_npy_data("be", &header, |out| {
            out.write_all(&[0x3f, 0x80, 0, 0, 0x40, 0, 0, 0])
        })
        .unwrap();
        w.finish().unwrap();
        // SAFETY: nothing changes the file while it is mapped.
        let npz = unsafe { NpzMmap::open(&path).unwrap() };
        let mut reader = npz.reader().unwrap();
        let context = Context {
            map: Some(&npz),
            reader: RefCell::new(&mut reader),
        };
        let options = SafetensorsOptions::default();
        let written = |t: &Tensor<'_>| {
            let mut out = Vec::new();
            context.write_tensor(t, &mut out).unwrap();
            out
        };

        let le = context.tensor("le".into(), &options).unwrap();
        let mapped = le.mapped.as_ref().expect("handed over from the map");
        assert!(npz.as_bytes().as_ptr_range().contains(&mapped.npy.as_ptr()));
        assert_eq!(written(&le), [0u8, 0, 0x80, 0x3f].repeat(64 * 3));

        let be = context.tensor("be".into(), &options).unwrap();
        assert!(be.mapped.is_none());
        assert_eq!(written(&be), [0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]);
    }
}
