//! `.npz` -> safetensors: the header written (as the safetensors crate
//! lays it out, checked by its `Metadata`), then every member's bytes in
//! turn. Stored members already in safetensors' layout are written from the
//! mapped archive as they are; the others are read (inflated, swapped,
//! reordered) a chunk at a time when their turn comes.

use super::dtypes::{self, Conversion};
use super::{layout, SafetensorsOptions, METADATA_MEMBER};
use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use crate::format::header::Header;
use crate::npz::{Compression, NpzMmap, NpzReader};
use safetensors::Dtype;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Seek, Write};
use std::path::Path;

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
        return Err(Error::CorruptMember {
            name: name.to_owned(),
            reason: format!(
                "its header declares {len} bytes of data, more than the archive holds for it \
                 ({} bytes in the archive, {} once read)",
                info.compressed_size, info.size
            ),
        });
    }
    Ok(())
}

/// Writes the numeric members of the mapped archive `npz` as the tensors of
/// the safetensors file `path` (replaced atomically: an error leaves the
/// old file, or none), with default [`SafetensorsOptions`].
///
/// See the [module docs](super) for the types, layouts, names and metadata.
/// Memory holds at most one member that is not already in safetensors'
/// layout (compressed, big-endian or Fortran-order); stored members in that
/// layout are written from the mapping without a copy, after their CRC-32
/// is checked.
///
/// ```
/// use ndnpy::safetensors::{npz_to_safetensors, SafetensorsFile};
/// use ndnpy::{NpzMmap, NpzWriter};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let (npz_path, st_path) = (dir.path().join("ckpt.npz"), dir.path().join("model.safetensors"));
/// let mut w = NpzWriter::create(&npz_path)?;
/// w.add("params/dense/kernel", &ndarray::Array2::<f32>::ones((4, 3)))?;
/// w.add("params/dense/bias", &ndarray::Array1::<f32>::zeros(3))?;
/// w.finish()?;
///
/// // SAFETY: nothing writes or truncates the archive while it is mapped.
/// let npz = unsafe { NpzMmap::open(&npz_path)? };
/// npz_to_safetensors(&npz, &st_path)?;
///
/// let st = SafetensorsFile::new(std::fs::read(&st_path)?)?;
/// assert_eq!(st.dtype("params/dense/kernel")?, "F32");
/// assert_eq!(st.shape("params/dense/kernel")?, [4, 3]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn npz_to_safetensors<S: NpzSource, P: AsRef<Path>>(npz: S, path: P) -> Result<()> {
    npz_to_safetensors_with(npz, path, &SafetensorsOptions::default())
}

/// [`npz_to_safetensors`] with options: which `ml_dtypes` format raw
/// members hold ([`SafetensorsOptions::raw_as`]) and metadata entries
/// ([`SafetensorsOptions::metadata`]).
///
/// ```
/// use ndnpy::safetensors::{npz_to_safetensors_with, MlDtype, SafetensorsFile, SafetensorsOptions};
/// use ndnpy::{NpzMmap, NpzWriter};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let (npz_path, st_path) = (dir.path().join("ckpt.npz"), dir.path().join("model.safetensors"));
/// // What `np.savez` writes for an ml_dtypes.bfloat16 array: raw '<V2' items.
/// let bf16 = ndarray::arr1(&[half::bf16::from_f32(1.5), half::bf16::from_f32(-2.0)]);
/// let mut w = NpzWriter::create_compressed(&npz_path)?;
/// w.add("w", &bf16)?;
/// w.finish()?;
///
/// // SAFETY: nothing writes or truncates the archive while it is mapped.
/// let npz = unsafe { NpzMmap::open(&npz_path)? };
/// // Without saying what the raw items are, the member is refused.
/// let err = ndnpy::safetensors::npz_to_safetensors(&npz, &st_path).unwrap_err();
/// assert!(err.to_string().contains("--as bfloat16"));
///
/// let options = SafetensorsOptions::default()
///     .raw_as(MlDtype::Bfloat16)
///     .metadata([("format".to_owned(), "pt".to_owned())].into());
/// npz_to_safetensors_with(&npz, &st_path, &options)?;
/// let st = SafetensorsFile::new(std::fs::read(&st_path)?)?;
/// assert_eq!(st.dtype("w")?, "BF16");
/// assert_eq!(st.data("w")?, [0xC0, 0x3F, 0x00, 0xC0]);
/// assert_eq!(st.metadata().unwrap()["format"], "pt");
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn npz_to_safetensors_with<S: NpzSource, P: AsRef<Path>>(
    npz: S,
    path: P,
    options: &SafetensorsOptions,
) -> Result<()> {
    npz.to_safetensors(path.as_ref(), options)
}

/// Where [`npz_to_safetensors`] reads an archive: a mapped archive
/// (`&NpzMmap`: stored members in safetensors' layout are written from the
/// mapping, without a copy) or a reader (`&mut NpzReader<R>`, for archives
/// that are not files: each member is read into memory in turn).
///
/// ```
/// use ndnpy::safetensors::{npz_to_safetensors, SafetensorsFile};
/// use ndnpy::{NpzReader, NpzWriter};
/// use std::io::Cursor;
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("model.safetensors");
/// let mut w = NpzWriter::new(Cursor::new(Vec::new()));
/// w.add("x", &ndarray::array![1u16, 2])?;
/// let mut npz = NpzReader::new(w.finish_into_inner()?)?;
/// npz_to_safetensors(&mut npz, &path)?;
/// assert_eq!(SafetensorsFile::new(std::fs::read(&path)?)?.data("x")?, [1, 0, 2, 0]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub trait NpzSource: super::sealed::Sealed {
    /// Writes the archive's members as the safetensors file `path`.
    #[doc(hidden)]
    fn to_safetensors(self, path: &Path, options: &SafetensorsOptions) -> Result<()>;
}

impl super::sealed::Sealed for &NpzMmap {}

impl NpzSource for &NpzMmap {
    fn to_safetensors(self, path: &Path, options: &SafetensorsOptions) -> Result<()> {
        let mut reader = self.reader()?;
        convert(Some(self), &mut reader, path, options)
    }
}

impl<R: Read + Seek> super::sealed::Sealed for &mut NpzReader<R> {}

impl<R: Read + Seek> NpzSource for &mut NpzReader<R> {
    fn to_safetensors(self, path: &Path, options: &SafetensorsOptions) -> Result<()> {
        convert(None, self, path, options)
    }
}

/// The conversion, from the archive `reader` reads and, when it is mapped,
/// its map.
fn convert<R: Read + Seek>(
    map: Option<&NpzMmap>,
    reader: &mut NpzReader<R>,
    path: &Path,
    options: &SafetensorsOptions,
) -> Result<()> {
    let names = reader.names();
    let context = Context {
        map,
        reader: RefCell::new(reader),
    };
    // Everything that can be known from headers is checked before the
    // first byte is written.
    let mut metadata: HashMap<String, String> = HashMap::new();
    let mut tensors = Vec::new();
    let mut seen = HashSet::new();
    for name in names {
        if !seen.insert(name.clone()) {
            // Two members with one key (`x` and `x.npy`): np.load sees one.
            return Err(Error::DuplicateMember { name });
        }
        if name == METADATA_MEMBER {
            metadata.extend(read_metadata(&mut context.reader.borrow_mut())?);
            continue;
        }
        tensors.push(context.tensor(name, options)?);
    }
    metadata.extend(options.metadata.clone());

    // The same order as the crate's `serialize`: by descending alignment of
    // the type, then by name, so that every tensor starts aligned.
    tensors.sort_by(|a, b| {
        (b.conversion.dtype)
            .cmp(&a.conversion.dtype)
            .then_with(|| a.name.cmp(&b.name))
    });
    let (header, data_len) = header_bytes(&tensors, metadata)?;
    let total = (header.len() as u64)
        .checked_add(data_len as u64)
        .filter(|&t| t <= isize::MAX as u64)
        .ok_or_else(too_long)?;

    // Written through the library's path rules (`io::atomic`), as
    // `write_npy` writes: a regular file is replaced atomically, keeping
    // its mode and owner, through symbolic links; devices, FIFOs and
    // hard-linked files are written in place; durable on request. The
    // header and each tensor's bytes are written in turn, so at most one
    // converted member is in memory.
    let context = &context;
    crate::io::atomic::write_file_with(path, total, &options.write_options, |out| {
        out.write_all(&header)?;
        for tensor in &tensors {
            context.write_tensor(tensor, out)?;
        }
        Ok(())
    })
    .map_err(|e| e.at_path(path))
}

/// The error for tensors whose lengths, together, pass `isize::MAX`.
fn too_long() -> Error {
    super::invalid_file("the members' headers declare more data in all than isize::MAX bytes")
}

/// The safetensors file's first bytes (its length, then the JSON header
/// padded with spaces to a multiple of 8, as the crate pads it) for
/// `tensors` in file order, and the length of the data after it.
///
/// Written here rather than by the crate, which keeps `__metadata__` in a
/// `HashMap`: keys are sorted, so that one input always gives one file.
/// The crate's `Metadata::new` still checks the offsets and shapes.
fn header_bytes(
    tensors: &[Tensor<'_>],
    metadata: HashMap<String, String>,
) -> Result<(Vec<u8>, usize)> {
    use safetensors::tensor::{Metadata, TensorInfo};
    use std::collections::BTreeMap;
    let json = |e: serde_json::Error| super::invalid_file(e);
    let mut infos = Vec::with_capacity(tensors.len());
    let mut offset = 0usize;
    for t in tensors {
        // Header claims are summed with a check: the crate's own sum
        // overflows (a panic in debug builds) on claims past usize::MAX.
        let end = offset
            .checked_add(t.len)
            .filter(|&e| e <= isize::MAX as usize)
            .ok_or_else(too_long)?;
        infos.push((
            t.name.clone(),
            TensorInfo {
                dtype: t.conversion.dtype,
                shape: t.conversion.shape.clone(),
                data_offsets: (offset, end),
            },
        ));
        offset = end;
    }
    let mut text = String::from("{");
    if !metadata.is_empty() {
        let sorted: BTreeMap<&String, &String> = metadata.iter().collect();
        text.push_str("\"__metadata__\":");
        text.push_str(&serde_json::to_string(&sorted).map_err(json)?);
    }
    for (name, info) in &infos {
        if text.len() > 1 {
            text.push(',');
        }
        text.push_str(&serde_json::to_string(name).map_err(json)?);
        text.push(':');
        text.push_str(&serde_json::to_string(info).map_err(json)?);
    }
    text.push('}');
    let metadata = (!metadata.is_empty()).then_some(metadata);
    Metadata::new(metadata, infos).map_err(super::invalid_file)?;
    let mut header = text.into_bytes();
    header.resize(header.len().next_multiple_of(8), b' ');
    // The crate's limit on the header (`MAX_HEADER_SIZE`): readers built
    // on it refuse longer ones.
    if header.len() > 100_000_000 {
        return Err(super::invalid_file(format!(
            "the header would be {} bytes, more than the 100000000 safetensors readers accept",
            header.len()
        )));
    }
    let mut bytes = Vec::with_capacity(8 + header.len());
    bytes.extend_from_slice(&(header.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&header);
    Ok((bytes, offset))
}

/// What the tensors share: the archive's reader, and its map when it is
/// mapped.
struct Context<'m, 'r, R: Read + Seek> {
    map: Option<&'m NpzMmap>,
    reader: RefCell<&'r mut NpzReader<R>>,
}

/// One member on its way to becoming a tensor.
struct Tensor<'m> {
    name: String,
    conversion: Conversion,
    /// Bytes of the tensor's data.
    len: usize,
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
            false => Err(Error::BadCrc {
                name: tensor.name.clone(),
            }),
        }
    }
}

impl<'m, R: Read + Seek> Context<'m, '_, R> {
    /// Checks member `name` from its header and finds where its bytes come
    /// from.
    fn tensor(&self, name: String, options: &SafetensorsOptions) -> Result<Tensor<'m>> {
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
                return Err(Error::CorruptMember {
                    reason: format!(
                        "its data ends early: the header declares {len} bytes, the member holds {}",
                        npy.len() - start
                    ),
                    name,
                })
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
    fn write_tensor(&self, t: &Tensor<'_>, out: &mut dyn Write) -> Result<()> {
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
        let ends_early = |held: usize| Error::CorruptMember {
            name: name.to_owned(),
            reason: format!(
                "its data ends early: the header declares {} bytes, the member holds {held}",
                t.len
            ),
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

/// The entries of the archive's metadata member: an `(n, 2)` array of
/// strings.
fn read_metadata<R: Read + io::Seek>(reader: &mut NpzReader<R>) -> Result<Vec<(String, String)>> {
    let refuse = |dtype: String| {
        Error::UnsupportedDType {
        dtype,
        reason: format!(
            "member '{METADATA_MEMBER}' becomes the safetensors metadata, so it must be an (n, 2) array of strings (key, value)"
        ),
    }
    };
    match reader.read_any(METADATA_MEMBER)? {
        AnyArray::Str(a) if a.ndim() == 2 && a.shape()[1] == 2 => Ok(a
            .rows()
            .into_iter()
            .map(|row| (row[0].clone(), row[1].clone()))
            .collect()),
        other => Err(refuse(format!(
            "{} of shape {:?}",
            other.dtype(),
            other.shape()
        ))),
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
