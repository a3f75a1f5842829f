//! safetensors -> `.npz`: each tensor's bytes go from the (mapped) file
//! into a member as they are, behind the `.npy` header NumPy writes for
//! them.

use super::reader::TensorSource;
use super::{layout, SafetensorsOptions, METADATA_MEMBER};
use crate::array::any::AnyArray;
use crate::error::Result;
use crate::npz::NpzWriter;
use ndarray::Array2;
use std::io::{self, Write};
use std::path::Path;

/// Writes the tensors of `tensors` (a `&SafetensorsFile` or a `&mut
/// SafetensorsReader`, see [`TensorSource`]) as the members of the `.npz` archive
/// `path` (stored, as `np.savez` writes; replaced atomically: an error
/// leaves the old file, or none), with default [`SafetensorsOptions`].
///
/// Each member is the `.npy` file `np.save` writes for the tensor (for
/// bfloat16 and float8, what it writes for `ml_dtypes`' arrays), its data
/// copied from the file as it is, in bounded memory. The file's
/// `__metadata__` becomes the member [`METADATA_MEMBER`]. Members follow
/// the order of the tensors' data in the file. Every tensor's type is
/// checked before the archive is started.
///
/// ```
/// use ndnpy::safetensors::{safetensors_to_npz, SafetensorsFile};
/// use ndnpy::{AnyArray, NpzReader};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("model.npz");
/// let header = br#"{"__metadata__":{"format":"pt"},"w":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
/// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
/// bytes.extend_from_slice(header);
/// bytes.extend_from_slice(&[1, 0, 0xff, 0xff]);
/// let st = SafetensorsFile::new(bytes)?;
///
/// safetensors_to_npz(&st, &path)?;
/// let mut npz = NpzReader::open(&path)?;
/// assert_eq!(npz.names(), ["w", "__metadata__"]);
/// assert_eq!(npz.read::<i16, ndarray::Ix1>("w")?, ndarray::array![1, -1]);
/// let metadata = npz.read::<String, ndarray::Ix2>("__metadata__")?;
/// assert_eq!(metadata, ndarray::array![["format".to_owned(), "pt".to_owned()]]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn safetensors_to_npz<S: TensorSource, P: AsRef<Path>>(tensors: S, path: P) -> Result<()> {
    safetensors_to_npz_with(tensors, path, &SafetensorsOptions::default())
}

/// [`safetensors_to_npz`] with options: [`SafetensorsOptions::compressed`]
/// deflates the members (as `np.savez_compressed`, on every core).
///
/// ```
/// use ndnpy::safetensors::{safetensors_to_npz_with, SafetensorsFile, SafetensorsOptions};
/// use ndnpy::{npz::Compression, NpzReader};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("model.npz");
/// let header = br#"{"z":{"dtype":"F64","shape":[1000],"data_offsets":[0,8000]}}"#;
/// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
/// bytes.extend_from_slice(header);
/// bytes.resize(bytes.len() + 8000, 0);
/// let st = SafetensorsFile::new(bytes)?;
///
/// safetensors_to_npz_with(&st, &path, &SafetensorsOptions::default().compressed(true))?;
/// let mut npz = NpzReader::open(&path)?;
/// assert_eq!(npz.member_info("z")?.compression, Compression::Deflated);
/// assert_eq!(npz.read::<f64, ndarray::Ix1>("z")?.sum(), 0.0);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn safetensors_to_npz_with<S: TensorSource, P: AsRef<Path>>(
    mut tensors: S,
    path: P,
    options: &SafetensorsOptions,
) -> Result<()> {
    let index = tensors.tensor_index().clone();
    let names = index.names();
    let headers = names
        .iter()
        .map(|name| index.header(name))
        .collect::<Result<Vec<_>>>()?;
    let mut npz = NpzWriter::create(path)?.codec(if options.compressed {
        crate::npz::Codec::deflate()
    } else {
        crate::npz::Codec::Stored
    });
    for (name, header) in names.iter().zip(&headers) {
        let bools = index.dtype(name)? == "BOOL";
        npz.add_npy_data(name, header, |out| {
            // safetensors' bools should be 0 or 1; any other byte is True,
            // written as NumPy writes True.
            let result = match bools {
                true => tensors.copy_tensor(name, &mut CanonicalBools(out)),
                false => tensors.copy_tensor(name, out),
            };
            result.map_err(io::Error::from)
        })?;
    }
    if let Some(metadata) = index.metadata() {
        let mut entries: Vec<_> = metadata.iter().collect();
        entries.sort();
        let table = Array2::from_shape_fn((entries.len(), 2), |(i, j)| {
            let (k, v) = entries[i];
            if j == 0 { k } else { v }.clone()
        });
        npz.add_any(METADATA_MEMBER, &AnyArray::Str(table.into_dyn()))?;
    }
    npz.finish()
}

/// Writes `bool` bytes as 0 or 1.
struct CanonicalBools<'a>(&'a mut dyn Write);

impl Write for CanonicalBools<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut chunk = buf[..buf.len().min(1 << 16)].to_vec();
        layout::canonical_bools(&mut chunk);
        self.0.write_all(&chunk)?;
        Ok(chunk.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}
