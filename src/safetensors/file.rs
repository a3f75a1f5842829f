//! [`SafetensorsFile`]: the tensors of a safetensors file, as `.npy`
//! headers, raw bytes and [`AnyArray`]s.

use super::index::SafetensorsIndex;
use crate::array::any::AnyArray;
use crate::array::element::LayoutElement;
use crate::array::ml::{Float8E4M3Fn, Float8E5M2};
use crate::array::record::RecordArray;
use crate::error::{Error, Result};
use crate::format::header::Header;
use crate::npy::read::from_data_into;
use memmap2::Mmap;
use ndarray::{ArrayD, IxDyn};
use safetensors::Dtype;
use std::collections::HashMap;
use std::path::Path;

/// A safetensors file, checked whole by the safetensors crate when opened
/// (header size, JSON, offsets that tile the data exactly), whose tensors
/// read as the `.npy` members [`super::safetensors_to_npz`] would write:
/// [`SafetensorsFile::header`] gives the header, [`SafetensorsFile::data`]
/// the bytes (little-endian, C order) and [`SafetensorsFile::read_any`] the
/// array.
///
/// ```
/// use ndnpy::safetensors::SafetensorsFile;
/// use ndnpy::AnyArray;
///
/// // A file with one tensor "x": two little-endian float32s (0.5, 2.0).
/// let header = br#"{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
/// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
/// bytes.extend_from_slice(header);
/// bytes.extend_from_slice(&[0, 0, 0, 0x3f, 0, 0, 0, 0x40]);
///
/// let st = SafetensorsFile::new(bytes)?;
/// assert_eq!(st.names(), ["x"]);
/// assert_eq!(st.header("x")?.dtype.to_string(), "<f4");
/// assert_eq!(st.read_any("x")?, AnyArray::F32(ndarray::arr1(&[0.5f32, 2.0]).into_dyn()));
/// assert!(st.metadata().is_none());
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub struct SafetensorsFile {
    bytes: Bytes,
    index: SafetensorsIndex,
}

/// Where the file's bytes are.
enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(map) => map,
            Bytes::Owned(bytes) => bytes,
        }
    }
}

impl SafetensorsFile {
    /// Maps the safetensors file at `path` read-only and checks its header.
    /// Tensors are then read from the mapping: [`SafetensorsFile::data`]
    /// copies nothing, whatever the file's size.
    ///
    /// # Safety
    ///
    /// Until the value and every slice it gave are dropped, the file must
    /// not be truncated or changed (by another process, another map or a
    /// write through the path): slices would see data change under shared
    /// references, or the process is killed by `SIGBUS`. The same contract
    /// as [`crate::NpyMmap::open`].
    ///
    /// ```no_run
    /// // SAFETY: nothing changes or truncates the file while it is mapped.
    /// let st = unsafe { ndnpy::safetensors::SafetensorsFile::open("model.safetensors")? };
    /// println!("{:?}", st.names());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub unsafe fn open<P: AsRef<Path>>(path: P) -> Result<Self> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|e| Error::Io(e).at_path(path))?;
        // SAFETY: memmap2 requires that the file not be modified or
        // truncated while mapped, which is this function's own contract.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::Io(e).at_path(path))?;
        Self::from_bytes(Bytes::Mapped(map))
    }

    /// A safetensors file held in memory.
    ///
    /// ```
    /// let err = ndnpy::safetensors::SafetensorsFile::new(b"not a safetensors file".to_vec());
    /// assert!(matches!(err, Err(ndnpy::Error::InvalidSafetensors { .. })));
    /// ```
    pub fn new(bytes: Vec<u8>) -> Result<Self> {
        Self::from_bytes(Bytes::Owned(bytes))
    }

    fn from_bytes(bytes: Bytes) -> Result<Self> {
        let index = SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64)?;
        Ok(SafetensorsFile { bytes, index })
    }

    /// The file's header: what [`SafetensorsIndex`] says about it.
    ///
    /// ```
    /// let header = br#"{"x":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.push(7);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.index().data_range("x")?, 8 + header.len() as u64..9 + header.len() as u64);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn index(&self) -> &SafetensorsIndex {
        &self.index
    }

    /// The tensor names, in the order of their data in the file
    /// ([`SafetensorsIndex::names`]).
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.names(), ["x"]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn names(&self) -> Vec<String> {
        self.index.names()
    }

    /// Number of tensors.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.len(), 1);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the file holds no tensor.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert!(!st.is_empty());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Whether the file has a tensor named `name`.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert!(st.contains("x") && !st.contains("y"));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn contains(&self, name: &str) -> bool {
        self.index.contains(name)
    }

    /// The file's `__metadata__`, if it has one
    /// ([`SafetensorsIndex::metadata`]).
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.metadata().unwrap()["k"], "v");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn metadata(&self) -> Option<&HashMap<String, String>> {
        self.index.metadata()
    }

    /// The safetensors type of tensor `name` ([`SafetensorsIndex::dtype`]).
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.dtype("x")?, "I16");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn dtype(&self, name: &str) -> Result<String> {
        self.index.dtype(name)
    }

    /// The shape of tensor `name`.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.shape("x")?, [2]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn shape(&self, name: &str) -> Result<&[usize]> {
        self.index.shape(name)
    }

    /// The `.npy` header of tensor `name` as a member of an archive
    /// ([`SafetensorsIndex::header`]).
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.header("x")?.dtype.descr(), "'<i2'");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn header(&self, name: &str) -> Result<Header> {
        self.index.header(name)
    }

    /// The bytes of tensor `name`: little-endian items in C order.
    ///
    /// ```
    /// let header = br#"{"b":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.extend_from_slice(&[0x80, 0x3f]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.data("b")?, [0x80, 0x3f]);
    /// assert_eq!(st.header("b")?.dtype.to_string(), "<V2");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn data(&self, name: &str) -> Result<&[u8]> {
        let range = self.index.data_range(name)?;
        // The index checked that the offsets tile the data area, which
        // ends at the end of these bytes.
        Ok(&self.bytes[range.start as usize..range.end as usize])
    }

    /// Tensor `name` as an array: the numeric variants for NumPy's types,
    /// and for bfloat16 and float8 the [`AnyArray::Void`] that reading the
    /// member `np.save` writes for them gives (see [`AnyArray::void_as`]).
    ///
    /// ```
    /// use ndnpy::AnyArray;
    ///
    /// let header = br#"{"b":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.extend_from_slice(&[0x80, 0x3f]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// let b = st.read_any("b")?.void_as::<half::bf16>()?;
    /// assert_eq!(b[[0]].to_f32(), 1.0);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn read_any(&self, name: &str) -> Result<AnyArray> {
        any_from(&self.index, name, self.data(name)?)
    }

    /// The whole file.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let bytes_len = bytes.len();
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.as_bytes().len(), bytes_len);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Tensor `name` of `index` as an array, from its bytes.
pub(super) fn any_from(index: &SafetensorsIndex, name: &str, data: &[u8]) -> Result<AnyArray> {
    let header = index.header(name)?;
    let info = index.info(name)?;
    Ok(match info.dtype {
        Dtype::BOOL => AnyArray::Bool(typed(&header, data)?),
        Dtype::I8 => AnyArray::I8(typed(&header, data)?),
        Dtype::I16 => AnyArray::I16(typed(&header, data)?),
        Dtype::I32 => AnyArray::I32(typed(&header, data)?),
        Dtype::I64 => AnyArray::I64(typed(&header, data)?),
        Dtype::U8 => AnyArray::U8(typed(&header, data)?),
        Dtype::U16 => AnyArray::U16(typed(&header, data)?),
        Dtype::U32 => AnyArray::U32(typed(&header, data)?),
        Dtype::U64 => AnyArray::U64(typed(&header, data)?),
        Dtype::F16 => AnyArray::F16(typed(&header, data)?),
        Dtype::F32 => AnyArray::F32(typed(&header, data)?),
        Dtype::F64 => AnyArray::F64(typed(&header, data)?),
        #[cfg(feature = "complex")]
        Dtype::C64 => AnyArray::C64(typed(&header, data)?),
        Dtype::BF16 => raw(&typed::<half::bf16>(&header, data)?),
        Dtype::F8_E4M3 => raw(&typed::<Float8E4M3Fn>(&header, data)?),
        Dtype::F8_E5M2 => raw(&typed::<Float8E5M2>(&header, data)?),
        other => {
            return Err(Error::UnsupportedDType {
                dtype: other.to_string(),
                reason: format!(
                "tensor '{}': no array type here holds it (the crate feature `complex` reads C64)",
                crate::error::capped(name)
            ),
            })
        }
    })
}

/// The array `header` describes, from its data.
fn typed<T: LayoutElement + Clone + Default>(header: &Header, data: &[u8]) -> Result<ArrayD<T>> {
    // ndarray's own rule (its constructors panic otherwise): the product of
    // the non-zero axes, in bytes, within isize::MAX. A zero-size tensor
    // has no data to bound its other axes, so the header alone says them.
    let itemsize = std::mem::size_of::<T>();
    if !crate::format::header::within_numpy_size(&header.shape, itemsize) {
        return Err(Error::Limit(crate::error::LimitError::LengthOverflow {
            shape: header.shape.iter().map(|&d| d as u64).collect(),
            itemsize,
        }));
    }
    let mut out = ArrayD::from_elem(IxDyn(&header.shape), T::default());
    from_data_into(header, data, &mut out.view_mut())?;
    Ok(out)
}

/// Raw items, as [`AnyArray`] holds the `ml_dtypes` formats.
fn raw<T: LayoutElement>(array: &ArrayD<T>) -> AnyArray {
    AnyArray::Void(RecordArray::from_array(array))
}

impl std::fmt::Debug for SafetensorsFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SafetensorsFile")
            .field("len", &self.bytes.len())
            .field("tensors", &self.index.len())
            .finish_non_exhaustive()
    }
}
