//! [`SafetensorsIndex`]: a safetensors file's header, read apart from its
//! data by the safetensors crate's own header type.

use super::dtypes;
use crate::error::{Error, Result};
use crate::format::header::{Header, Version};
use safetensors::tensor::{Metadata, TensorInfo};
use std::collections::HashMap;
use std::io::Read;
use std::ops::Range;

/// The largest header the safetensors crate reads (its `MAX_HEADER_SIZE`).
const MAX_HEADER_LEN: u64 = 100_000_000;

/// The header of a safetensors file, read without its data: the tensors'
/// names, types, shapes and where their bytes lie, and the metadata. For
/// tools that read tensors by positioned reads of a file or an object
/// ([`SafetensorsIndex::data_range`]); [`super::SafetensorsFile`] holds
/// one beside the bytes.
///
/// The header is parsed and checked by the safetensors crate (its
/// `Metadata`: JSON, offsets that tile the data from 0, sizes that match
/// shapes and types, no overflow), and the file's length must be exactly
/// what it accounts for, as the crate's own reader requires.
///
/// ```
/// use ndnpy::safetensors::SafetensorsIndex;
///
/// let header = br#"{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
/// let mut file = (header.len() as u64).to_le_bytes().to_vec();
/// file.extend_from_slice(header);
/// file.extend_from_slice(&[0; 8]);
///
/// let index = SafetensorsIndex::read_from(&file[..], file.len() as u64)?;
/// assert_eq!(index.names(), ["x"]);
/// assert_eq!(index.data_range("x")?, 8 + header.len() as u64..file.len() as u64);
/// // A file longer or shorter than its header accounts for is refused.
/// assert!(SafetensorsIndex::read_from(&file[..], file.len() as u64 + 1).is_err());
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SafetensorsIndex {
    /// Offset of the data area (8 bytes of length, then the header).
    data_start: u64,
    metadata: Metadata,
    /// Tensor names in the order of their data.
    names: Vec<String>,
}

impl SafetensorsIndex {
    /// Reads the header from the start of a safetensors file of `file_len`
    /// bytes: the reader is left after the header. What the header claims
    /// is allocated only once the file is known to hold it.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let index = ndnpy::safetensors::SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64)?;
    /// assert_eq!(index.len(), 1);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn read_from<R: Read>(mut reader: R, file_len: u64) -> Result<Self> {
        let mut len = [0u8; 8];
        reader
            .read_exact(&mut len)
            .map_err(|e| eof_as(e, "the file is shorter than 8 bytes"))?;
        let header_len = u64::from_le_bytes(len);
        if header_len > MAX_HEADER_LEN {
            return Err(super::invalid_file(format!(
                "a header of {header_len} bytes, more than the {MAX_HEADER_LEN} the safetensors crate reads"
            )));
        }
        if 8 + header_len > file_len {
            return Err(super::invalid_file(format!(
                "a header of {header_len} bytes in a file of {file_len}"
            )));
        }
        let mut text = vec![0u8; header_len as usize];
        reader
            .read_exact(&mut text)
            .map_err(|e| eof_as(e, "the header ends early"))?;
        let text = std::str::from_utf8(&text)
            .map_err(|e| super::invalid_file(format!("the header is not UTF-8: {e}")))?;
        let metadata: Metadata = serde_json::from_str(text).map_err(super::invalid_file)?;
        let data_start = 8 + header_len;
        let end = data_start.checked_add(metadata.data_len() as u64);
        if end != Some(file_len) {
            return Err(super::invalid_file(format!(
                "the tensors take {} bytes after the header, the file has {}",
                metadata.data_len(),
                file_len - data_start
            )));
        }
        let names = metadata.offset_keys();
        Ok(SafetensorsIndex {
            data_start,
            metadata,
            names,
        })
    }

    /// The tensor names, in the order of their data in the file.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let index = ndnpy::safetensors::SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64)?;
    /// assert_eq!(index.names(), ["x"]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// Number of tensors.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let index = ndnpy::safetensors::SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64)?;
    /// assert_eq!(index.len(), 1);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the file holds no tensor.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let index = ndnpy::safetensors::SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64)?;
    /// assert!(!index.is_empty());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether the file has a tensor named `name`.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let index = ndnpy::safetensors::SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64)?;
    /// assert!(index.contains("x"));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn contains(&self, name: &str) -> bool {
        self.metadata.info(name).is_some()
    }

    /// The file's `__metadata__`, if it has one.
    ///
    /// ```
    /// let header = br#"{"__metadata__":{"format":"pt"}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.metadata().unwrap()["format"], "pt");
    /// assert!(st.is_empty());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn metadata(&self) -> Option<&HashMap<String, String>> {
        self.metadata.metadata().as_ref()
    }

    /// The safetensors type of tensor `name`, as the file spells it
    /// (`"F32"`, `"BF16"`, `"F8_E4M3"`, ...).
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let index = ndnpy::safetensors::SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64)?;
    /// assert_eq!(index.dtype("x")?, "I16");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn dtype(&self, name: &str) -> Result<String> {
        Ok(self.info(name)?.dtype.to_string())
    }

    /// The shape of tensor `name`.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let index = ndnpy::safetensors::SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64)?;
    /// assert_eq!(index.shape("x")?, [2]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn shape(&self, name: &str) -> Result<&[usize]> {
        Ok(&self.info(name)?.shape)
    }

    /// The `.npy` header of tensor `name` as a member of an archive: NumPy's
    /// little-endian dtype (for bfloat16 and float8, `ml_dtypes`' raw
    /// descriptors), its shape, C order. Types NumPy files cannot spell are
    /// an [`Error::UnsupportedDType`] naming the tensor.
    ///
    /// ```
    /// let header = br#"{"b":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.extend_from_slice(&[0x80, 0x3f]);
    /// let st = ndnpy::safetensors::SafetensorsFile::new(bytes)?;
    /// assert_eq!(st.header("b")?.dtype.descr(), "'<V2'");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn header(&self, name: &str) -> Result<Header> {
        let info = self.info(name)?;
        Ok(Header {
            dtype: dtypes::to_npy(name, info.dtype)?,
            shape: info.shape.clone(),
            fortran_order: false,
            version: Version::V1,
        })
    }

    /// Where tensor `name`'s bytes lie in the file (offsets from its
    /// first byte).
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let index = ndnpy::safetensors::SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64)?;
    /// let range = index.data_range("x")?;
    /// assert_eq!(&bytes[range.start as usize..range.end as usize], [1, 0, 2, 0]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn data_range(&self, name: &str) -> Result<Range<u64>> {
        let (start, end) = self.info(name)?.data_offsets;
        Ok(self.data_start + start as u64..self.data_start + end as u64)
    }

    pub(super) fn info(&self, name: &str) -> Result<&TensorInfo> {
        self.metadata
            .info(name)
            .ok_or_else(|| Error::MemberNotFound {
                name: name.to_owned(),
            })
    }
}

/// An early end of the file as the malformed file it is; other I/O errors
/// as they are.
fn eof_as(err: std::io::Error, what: &str) -> Error {
    if err.kind() == std::io::ErrorKind::UnexpectedEof {
        super::invalid_file(what)
    } else {
        Error::Io(err)
    }
}
