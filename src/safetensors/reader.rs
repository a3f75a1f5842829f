//! [`SafetensorsReader`]: a safetensors file read through any `Read +
//! Seek`, a tensor at a time; and [`TensorSource`], what
//! [`super::safetensors_to_npz`] reads from.

use super::file::{any_from, SafetensorsFile};
use super::index::SafetensorsIndex;
use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use std::io::{Read, Seek, SeekFrom, Write};

/// A safetensors file read through a reader (a file, a network object, an
/// in-memory cursor): its header when opened, each tensor's bytes when
/// asked for, by a seek and a read of exactly those bytes. The reader's
/// counterpart of [`SafetensorsFile`], which maps the file.
///
/// ```
/// use ndnpy::safetensors::SafetensorsReader;
/// use std::io::Cursor;
///
/// let header = br#"{"x":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}"#;
/// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
/// bytes.extend_from_slice(header);
/// bytes.extend_from_slice(&[1, 2, 3]);
///
/// let mut st = SafetensorsReader::new(Cursor::new(bytes))?;
/// assert_eq!(st.index().names(), ["x"]);
/// assert_eq!(st.read_any("x")?, ndnpy::AnyArray::U8(ndarray::arr1(&[1u8, 2, 3]).into_dyn()));
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub struct SafetensorsReader<R: Read + Seek> {
    reader: R,
    index: SafetensorsIndex,
}

impl<R: Read + Seek> SafetensorsReader<R> {
    /// Reads the header of the safetensors file `reader` holds (from its
    /// start to its end).
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let mut st = ndnpy::safetensors::SafetensorsReader::new(std::io::Cursor::new(bytes))?;
    /// assert_eq!(st.index().dtype("x")?, "I16");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn new(mut reader: R) -> Result<Self> {
        let len = reader.seek(SeekFrom::End(0))?;
        reader.seek(SeekFrom::Start(0))?;
        let index = SafetensorsIndex::read_from(&mut reader, len)?;
        Ok(SafetensorsReader { reader, index })
    }

    /// The file's header.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let mut st = ndnpy::safetensors::SafetensorsReader::new(std::io::Cursor::new(bytes))?;
    /// assert_eq!(st.index().names(), ["x"]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn index(&self) -> &SafetensorsIndex {
        &self.index
    }

    /// Tensor `name` as an array, as [`SafetensorsFile::read_any`] gives it.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let mut st = ndnpy::safetensors::SafetensorsReader::new(std::io::Cursor::new(bytes))?;
    /// assert_eq!(st.read_any("x")?, ndnpy::AnyArray::I16(ndarray::arr1(&[1i16, 2]).into_dyn()));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn read_any(&mut self, name: &str) -> Result<AnyArray> {
        // The index checked that the file holds every tensor's bytes, so
        // their length can be allocated.
        let len = self.index.data_range(name)?;
        let mut data = Vec::with_capacity((len.end - len.start) as usize);
        self.write_data(name, &mut data)?;
        any_from(&self.index, name, &data)
    }

    /// Gives back the reader.
    ///
    /// ```
    /// # let header = br#"{"__metadata__":{"k":"v"},"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
    /// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// # bytes.extend_from_slice(header);
    /// # bytes.extend_from_slice(&[1, 0, 2, 0]);
    /// let mut st = ndnpy::safetensors::SafetensorsReader::new(std::io::Cursor::new(bytes))?;
    /// assert_eq!(st.into_inner().into_inner().len(), 8 + header.len() + 4);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn into_inner(self) -> R {
        self.reader
    }

    /// Copies tensor `name`'s bytes to `out`.
    fn write_data(&mut self, name: &str, out: &mut dyn Write) -> Result<()> {
        let range = self.index.data_range(name)?;
        self.reader.seek(SeekFrom::Start(range.start))?;
        let want = range.end - range.start;
        // A megabyte at a time (io::copy's 8 KiB would be a system call
        // each way per 8 KiB), a chunk that `NpzWriter` writes past its
        // buffer; the buffer grows only as bytes arrive.
        let mut buf = Vec::new();
        let mut copied = 0;
        while copied < want {
            let chunk = (want - copied).min(1 << 20);
            buf.clear();
            (&mut self.reader).take(chunk).read_to_end(&mut buf)?;
            out.write_all(&buf)?;
            copied += buf.len() as u64;
            if (buf.len() as u64) < chunk {
                return Err(Error::Data(crate::error::DataError::FileShrank {
                    needed: range.end,
                    len: range.start + copied,
                }));
            }
        }
        Ok(())
    }
}

impl<R: Read + Seek> std::fmt::Debug for SafetensorsReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SafetensorsReader")
            .field("tensors", &self.index.len())
            .finish_non_exhaustive()
    }
}

/// Where [`super::safetensors_to_npz`] reads tensors: a
/// [`SafetensorsFile`] (`&SafetensorsFile`, mapped or in memory) or a
/// [`SafetensorsReader`] (`&mut SafetensorsReader<R>`).
///
/// ```
/// use ndnpy::safetensors::{safetensors_to_npz, SafetensorsReader};
/// use std::io::Cursor;
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("out.npz");
/// let header = br#"{"x":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}}"#;
/// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
/// bytes.extend_from_slice(header);
/// bytes.extend_from_slice(&[0xff, 1]);
/// safetensors_to_npz(&mut SafetensorsReader::new(Cursor::new(bytes))?, &path)?;
/// let x = ndnpy::NpzReader::open(&path)?.read::<i8, ndarray::Ix1>("x")?;
/// assert_eq!(x, ndarray::array![-1, 1]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub trait TensorSource: super::sealed::Sealed {
    /// The file's header.
    #[doc(hidden)]
    fn tensor_index(&self) -> &SafetensorsIndex;

    /// Copies tensor `name`'s bytes to `out`.
    #[doc(hidden)]
    fn copy_tensor(&mut self, name: &str, out: &mut dyn Write) -> Result<()>;
}

impl super::sealed::Sealed for &SafetensorsFile {}

impl TensorSource for &SafetensorsFile {
    fn tensor_index(&self) -> &SafetensorsIndex {
        self.index()
    }

    fn copy_tensor(&mut self, name: &str, out: &mut dyn Write) -> Result<()> {
        Ok(out.write_all(self.data(name)?)?)
    }
}

impl<R: Read + Seek> super::sealed::Sealed for &mut SafetensorsReader<R> {}

impl<R: Read + Seek> TensorSource for &mut SafetensorsReader<R> {
    fn tensor_index(&self) -> &SafetensorsIndex {
        &self.index
    }

    fn copy_tensor(&mut self, name: &str, out: &mut dyn Write) -> Result<()> {
        self.write_data(name, out)
    }
}
