//! Adding members to an [`NpzWriter`]: typed arrays, [`AnyArray`]s,
//! object arrays, `.npy` data written by a callback, and streamed members.

use super::{CountingWrite, NpzMemberWriter, NpzWriter};
use crate::array::any::AnyArray;
use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::options::Order;
use ndarray::{ArrayRef, Dimension};
use std::io::{Seek, Write};

impl<W: Write + Seek> NpzWriter<W> {
    /// Adds `array` as the member `name.npy`, exactly as
    /// [`crate::WriteNpy`] would write it to a `.npy` file: any element type,
    /// any memory layout (non-contiguous arrays are written in bounded
    /// chunks, without first copying the whole array).
    ///
    /// Fails with [`crate::error::WriteError::DuplicateMember`] if `name` was added before, and
    /// with [`crate::error::WriteError::InvalidName`] (without poisoning the writer) for a name
    /// NumPy could not give back: one with a NUL byte, one too long for a
    /// zip entry, or `n.npy` beside `n`. After any other failure the writer
    /// is poisoned: further calls and [`NpzWriter::finish`] return
    /// [`crate::error::WriteError::IncompleteArchive`].
    ///
    /// Takes any array through `&ArrayRef` (ndarray's type for functions
    /// that read an array): `&Array`, `&ArrayView`, `&ArcArray` and
    /// `&CowArray` reach it by deref. Arrays of
    /// [`PyValue`](crate::pickle::PyValue) and `Option<String>` are pickled as
    /// `np.savez` pickles object arrays.
    ///
    /// ```
    /// use ndarray::{s, Array2};
    /// # use std::io::Cursor;
    ///
    /// let a = Array2::<f64>::ones((100, 100));
    /// let mut npz = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// npz.add("every_other_row", &a.slice(s![..;2, ..]))?;
    /// assert!(matches!(
    ///     npz.add("every_other_row", &a),
    ///     Err(ndnpy::Error::Write(ndnpy::error::WriteError::DuplicateMember { .. }))
    /// ));
    /// assert!(npz.finish().is_err());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn add<T: Element, D: Dimension>(
        &mut self,
        name: &str,
        array: &ArrayRef<T, D>,
    ) -> Result<()> {
        self.check_open(name)?;
        let result = self.add_member(name, array);
        if result.is_err() {
            self.failed.get_or_insert_with(|| name.to_owned());
        }
        result
    }

    /// Adds a runtime-typed array, as [`NpzWriter::add`] adds a typed one.
    ///
    /// ```
    /// # use std::io::Cursor;
    /// use ndnpy::{AnyArray, NpzReader, NpzWriter};
    ///
    /// let any = AnyArray::F32(ndarray::ArrayD::zeros(vec![2, 3]));
    /// let mut npz = NpzWriter::new(Cursor::new(Vec::new()));
    /// npz.add_any("x", &any)?;
    /// let mut back = NpzReader::new(npz.finish_into_inner()?)?;
    /// assert_eq!(back.read_any("x")?, any);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn add_any(&mut self, name: &str, array: &AnyArray) -> Result<()> {
        let pickled_whole = match array {
            AnyArray::Record(r) => r.dtype().has_object(),
            AnyArray::StringDType(_) => true,
            _ => false,
        };
        if pickled_whole {
            // Pickled whole, as an object array is.
            self.check_open(name)?;
            let result = array.to_npy_bytes().and_then(|bytes| {
                self.claim(name)?;
                self.add_npy(name, &bytes, 0, |w| Ok(w.write_all(&bytes)?))
            });
            if result.is_err() {
                self.failed.get_or_insert_with(|| name.to_owned());
            }
            return result;
        }
        crate::array::any::each_variant!(
            array,
            a => self.add(name, a),
            object a => self.add(name, a),
            raw r => self.add_raw(name, &r.header(), &r.data)
        )
    }

    /// Starts the member `name.npy`, an array of element type `T` whose rows
    /// come in blocks: `inner_shape` is the shape without the growth axis
    /// (the first axis for [`Order::C`], the last for
    /// [`Order::Fortran`]). Write blocks with [`NpzMemberWriter::write`] and
    /// end the member with [`NpzMemberWriter::finish`]; memory stays
    /// bounded whatever the member's size, compressed or not.
    ///
    /// The member's `.npy` header is the one `np.save` writes for the final
    /// array: it is written first with NumPy's room for the growth axis and
    /// rewritten in place at the end, together with the zip sizes and CRC.
    /// Dropping the member writer unfinished poisons the archive, as a
    /// failed [`NpzWriter::add`] does.
    ///
    /// ```
    /// use ndarray::{Array2, Ix2};
    /// use ndnpy::{NpzReader, NpzWriter, Order};
    /// use std::io::Cursor;
    ///
    /// let mut npz = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    /// let mut member = npz.add_streaming::<f32>("embeddings", &[4], Order::C)?;
    /// for batch in 0..3 {
    ///     member.write(&Array2::<f32>::from_elem((10, 4), batch as f32))?;
    /// }
    /// member.finish()?;
    /// let mut back = NpzReader::new(npz.finish_into_inner()?)?;
    /// let e = back.read::<f32, Ix2>("embeddings")?;
    /// assert_eq!(e.dim(), (30, 4));
    /// assert_eq!(e[[29, 3]], 2.0);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn add_streaming<T: Element>(
        &mut self,
        name: &str,
        inner_shape: &[usize],
        order: Order,
    ) -> Result<NpzMemberWriter<'_, W, T>> {
        self.check_open(name)?;
        crate::array::element::check_blockwise::<T>()?;
        self.write_queued()?;
        NpzMemberWriter::start(self, name, inner_shape, order)
    }

    /// Adds member `name` (`name.npy`) from a header and a function that
    /// writes its data: exactly `header.data_len()` bytes, in the header's
    /// dtype, byte order and memory order, which are not checked. For
    /// tools that move `.npy` data they do not interpret (the `ndnpy`
    /// command copies, reorders and byte-swaps members this way, in bounded
    /// memory); typed arrays go through [`NpzWriter::add`]. Object dtypes,
    /// whose data is a pickle of no declared length, are refused: write
    /// them with [`NpzWriter::add_any`].
    ///
    /// ```
    /// use ndnpy::{dtype::DType, dtype::Header, NpzReader, NpzWriter, dtype::Version};
    /// use std::io::{Cursor, Write};
    ///
    /// let header = Header {
    ///     dtype: DType::parse(">u2")?,
    ///     shape: vec![2],
    ///     fortran_order: false,
    ///     version: Version::V1,
    /// };
    /// let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    /// w.add_npy_data("be", &header, |out| out.write_all(&[0, 1, 1, 0]))?;
    /// let mut npz = NpzReader::new(w.finish_into_inner()?)?;
    /// assert_eq!(npz.read::<u16, ndarray::Ix1>("be")?, ndarray::array![1, 256]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn add_npy_data(
        &mut self,
        name: &str,
        header: &crate::format::header::Header,
        data: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        self.check_open(name)?;
        if header.dtype.has_object() {
            return Err(Error::UnsupportedDType {
                dtype: header.dtype.to_string(),
                reason: "object data is a pickle: add it with NpzWriter::add_any".into(),
            });
        }
        let data_len = header.data_len()?;
        let bytes = header.to_bytes()?;
        self.claim(name)?;
        let result = self.add_npy(name, &bytes, data_len, |w| {
            w.write_all(&bytes)?;
            let mut counted = CountingWrite { inner: w, count: 0 };
            data(&mut counted)?;
            if counted.count != data_len as u64 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "member '{name}': {} data bytes written, the header declares {data_len}",
                        counted.count
                    ),
                )
                .into());
            }
            Ok(())
        });
        if result.is_err() {
            self.failed.get_or_insert_with(|| name.to_owned());
        }
        result
    }

    /// Refuses to add `name` to an archive that an earlier failure left
    /// incomplete, or a name NumPy could not give back. Checked before
    /// anything is written, so a refused name does not poison the writer.
    pub(super) fn check_open(&self, name: &str) -> Result<()> {
        if let Some(failed) = &self.failed {
            return Err(Error::Write(crate::error::WriteError::IncompleteArchive {
                name: failed.clone(),
            }));
        }
        crate::npz::zip::names::check_array_name(name, |n| self.names.contains(n))
    }

    pub(super) fn claim(&mut self, name: &str) -> Result<()> {
        if self.names.contains(name) {
            return Err(Error::Write(crate::error::WriteError::DuplicateMember {
                name: name.to_owned(),
            }));
        }
        self.names.insert(name.to_owned());
        Ok(())
    }

    /// Adds a member from a header and its data bytes (runtime-typed
    /// arrays without an element type: datetimes, records, void).
    pub(super) fn add_raw(
        &mut self,
        name: &str,
        header: &crate::format::header::Header,
        data: &[u8],
    ) -> Result<()> {
        self.check_open(name)?;
        let result = header.to_bytes().and_then(|header| {
            self.claim(name)?;
            self.add_npy(name, &header, data.len(), |w| {
                w.write_all(&header)?;
                w.write_all(data)?;
                Ok(())
            })
        });
        if result.is_err() {
            self.failed.get_or_insert_with(|| name.to_owned());
        }
        result
    }
}
