//! `.npz` -> safetensors: the header written (as the safetensors crate
//! lays it out, checked by its `Metadata`), then every member's bytes in
//! turn. Stored members already in safetensors' layout are written from the
//! mapped archive as they are; the others are read (inflated, swapped,
//! reordered) a chunk at a time when their turn comes.
//!
//! This file is the conversion's order of work (every member checked,
//! then the header, then the tensors) and the header's bytes; one member's
//! checks and bytes are `to_safetensors/tensor.rs`.

mod tensor;

use super::{SafetensorsOptions, METADATA_MEMBER};
use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use crate::npz::{NpzMmap, NpzReader};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Seek, Write};
use std::path::Path;
use tensor::{Context, Tensor};

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
/// let mut w = NpzWriter::create(&npz_path)?.codec(ndnpy::npz::Codec::deflate());
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
            return Err(Error::Write(crate::error::WriteError::DuplicateMember {
                name,
            }));
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
