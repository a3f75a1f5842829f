//! The write entry points of the run-time typed values ([`AnyArray`],
//! [`RecordArray`]): to a path, to a writer, to bytes, as typed arrays have
//! them through [`WriteNpy`]. Here rather than beside the types: they open
//! files and pickle object data.

use crate::array::any::{each_variant, AnyArray};
use crate::array::encode::{plain_npy_bytes, plain_record_npy_bytes};
use crate::array::record::RecordArray;
use crate::error::Result;
use crate::io::checked::CheckedWrite;
use crate::npy::write::WriteNpy;
use crate::options::WriteOptions;
use std::io::Write;
use std::path::Path;

/// Writes `parts` (a `.npy` file in pieces: a header, then its data) to
/// `path`, replacing it as [`WriteNpy::write_npy`] does.
pub(crate) fn parts_to_path(path: &Path, options: &WriteOptions, parts: &[&[u8]]) -> Result<()> {
    let len = parts.iter().map(|p| p.len() as u64).sum();
    crate::io::atomic::write_file_with(path, len, options, |file| {
        for part in parts {
            file.write_all(part)?;
        }
        Ok(())
    })
    .map_err(|e| e.at_path(path))
}

/// Writes `parts` to `writer`, whose counts are checked.
pub(crate) fn parts_to_writer<W: Write>(writer: W, parts: &[&[u8]]) -> Result<()> {
    let mut writer = CheckedWrite(writer);
    for part in parts {
        writer.write_all(part)?;
    }
    writer.flush()?;
    Ok(())
}

impl AnyArray {
    /// Writes the array to the `.npy` file at `path`, as `np.save` writes
    /// it, replacing the file as [`WriteNpy::write_npy`] does (object
    /// variants pickled, as `np.save` pickles them).
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// let any = AnyArray::read_npy_from(&ndnpy::WriteNpy::to_npy_bytes(&ndarray::array![1u16, 2])?[..])?;
    /// any.write_npy(&path)?;
    /// assert_eq!(AnyArray::read_npy(&path)?, any);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn write_npy<P: AsRef<Path>>(&self, path: P) -> Result<()> {
        self.write_npy_with(path, &WriteOptions::default())
    }

    /// [`AnyArray::write_npy`] with options (such as
    /// [`WriteOptions::durable`]).
    pub fn write_npy_with<P: AsRef<Path>>(&self, path: P, options: &WriteOptions) -> Result<()> {
        let path = path.as_ref();
        match self {
            AnyArray::Record(r) => r.write_npy_with(path, options),
            AnyArray::StringDType(_) | AnyArray::Object(_) => {
                parts_to_path(path, options, &[&self.to_npy_bytes()?])
            }
            _ => each_variant!(self, a => a.write_npy_with(path, options), raw r => {
                parts_to_path(path, options, &[&r.header().to_bytes()?, &r.data])
            }),
        }
    }

    /// Writes the array as a `.npy` stream to `writer`.
    ///
    /// ```
    /// use ndnpy::AnyArray;
    ///
    /// let any = AnyArray::F64(ndarray::ArrayD::zeros(vec![2, 2]));
    /// let mut out = Vec::new();
    /// any.write_npy_to(&mut out)?;
    /// assert_eq!(out, any.to_npy_bytes()?);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn write_npy_to<W: Write>(&self, writer: W) -> Result<()> {
        match self {
            AnyArray::Record(r) => r.write_npy_to(writer),
            AnyArray::StringDType(_) | AnyArray::Object(_) => {
                parts_to_writer(writer, &[&self.to_npy_bytes()?])
            }
            _ => each_variant!(self, a => a.write_npy_to(writer), raw r => {
                parts_to_writer(writer, &[&r.header().to_bytes()?, &r.data])
            }),
        }
    }

    /// The `.npy` bytes of the array, as `np.save` writes them.
    ///
    /// ```
    /// use ndnpy::AnyArray;
    ///
    /// let any = AnyArray::Str(ndarray::arr1(&["a".to_owned(), "bc".to_owned()]).into_dyn());
    /// let bytes = any.to_npy_bytes()?;
    /// assert_eq!(AnyArray::from_npy_bytes(&bytes)?, any);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn to_npy_bytes(&self) -> Result<Vec<u8>> {
        match self {
            AnyArray::Record(r) => r.to_npy_bytes(),
            AnyArray::StringDType(a) => crate::pickle::stringdtype_npy_bytes(a),
            AnyArray::Object(o) => crate::pickle::object_npy_bytes(o),
            plain => plain_npy_bytes(plain),
        }
    }
}

impl RecordArray {
    /// Writes the records to the `.npy` file at `path`, as `np.save` writes
    /// them, replacing the file as [`WriteNpy::write_npy`] does; records
    /// with object fields are pickled (see [`RecordArray::to_npy_bytes`]).
    ///
    /// ```
    /// use ndnpy::{AnyArray, types::RecordArray};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("r.npy");
    /// # ndnpy::record! { #[derive(Clone, Copy)] struct P { x: f32, id: i64 } }
    /// # ndnpy::WriteNpy::write_npy(&ndarray::array![P { x: 1.0, id: 2 }], &path)?;
    /// let AnyArray::Record(records) = AnyArray::read_npy(&path)? else { panic!() };
    /// records.write_npy(&path)?; // the same bytes back
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn write_npy<P: AsRef<Path>>(&self, path: P) -> Result<()> {
        self.write_npy_with(path, &WriteOptions::default())
    }

    /// [`RecordArray::write_npy`] with options (such as
    /// [`WriteOptions::durable`]).
    pub fn write_npy_with<P: AsRef<Path>>(&self, path: P, options: &WriteOptions) -> Result<()> {
        let path = path.as_ref();
        if self.dtype().has_object() {
            return parts_to_path(path, options, &[&self.to_npy_bytes()?]);
        }
        parts_to_path(
            path,
            options,
            &[&self.header().to_bytes()?, self.as_bytes()],
        )
    }

    /// Writes the records as a `.npy` stream to `writer`.
    pub fn write_npy_to<W: Write>(&self, writer: W) -> Result<()> {
        if self.dtype().has_object() {
            return parts_to_writer(writer, &[&self.to_npy_bytes()?]);
        }
        parts_to_writer(writer, &[&self.header().to_bytes()?, self.as_bytes()])
    }

    /// The `.npy` bytes of the records, as `np.save` writes them; records
    /// with object fields are pickled as `np.save` does (NumPy loads them
    /// with `allow_pickle=True`), objects inside nested records and
    /// sub-array fields included.
    pub fn to_npy_bytes(&self) -> Result<Vec<u8>> {
        if self.dtype().has_object() {
            return crate::pickle::record_npy_bytes(self);
        }
        plain_record_npy_bytes(self)
    }
}

/// The trait's entry points are the types' own methods.
macro_rules! write_npy_by_methods {
    ($($t:ty),*) => {$(
        impl WriteNpy for $t {
            fn write_npy<P: AsRef<Path>>(&self, path: P) -> Result<()> {
                <$t>::write_npy(self, path)
            }

            fn write_npy_with<P: AsRef<Path>>(&self, path: P, options: &WriteOptions) -> Result<()> {
                <$t>::write_npy_with(self, path, options)
            }

            fn write_npy_to<W: Write>(&self, writer: W) -> Result<()> {
                <$t>::write_npy_to(self, writer)
            }

            fn to_npy_bytes(&self) -> Result<Vec<u8>> {
                <$t>::to_npy_bytes(self)
            }
        }
    )*};
}

write_npy_by_methods!(
    AnyArray,
    RecordArray,
    crate::array::compact::StringArray,
    crate::array::compact::BytesArray
);
