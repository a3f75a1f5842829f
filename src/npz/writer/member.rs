//! [`NpzMemberWriter`]: one archive member written in blocks of rows, its
//! local header patched with the final shape and sizes when it ends.

use super::NpzWriter;
use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::format::header::{Header, Version};
use crate::npz::sink::MemberData;
use crate::npz::zip::write::{Method, Open};
use crate::options::Order;
use crc32fast::Hasher;
use ndarray::{ArrayRef, Dimension};
use std::io::{self, Seek, Write};
use std::marker::PhantomData;

/// One member of an [`NpzWriter`] written in blocks of rows, from
/// [`NpzWriter::add_streaming`]: memory stays bounded whatever the
/// member's size.
///
/// Dropped without [`NpzMemberWriter::finish`], it poisons its archive
/// (crate docs, "Writers"): the rows written so far are not ended as a
/// member, since a loop such as `for b in src { m.write(&b?)? }` that stops
/// on the source's error would otherwise leave a whole-looking but short
/// array. Later [`NpzWriter::add`]s and [`NpzWriter::finish`] fail with
/// [`crate::error::WriteError::IncompleteArchive`], and the archive's own drop writes no
/// central directory, so no reader opens it (a path target is left as it
/// was).
///
/// ```
/// use ndarray::{Array1, Array2, Ix2};
/// use ndnpy::{NpzReader, NpzWriter, Order};
/// use std::io::Cursor;
///
/// let mut npz = NpzWriter::new(Cursor::new(Vec::new()));
/// // Fortran order: blocks are columns, appended along the last axis.
/// let mut m = npz.add_streaming::<i32>("cols", &[3], Order::Fortran)?;
/// m.write(&Array2::<i32>::ones((3, 2)))?;
/// m.write(&Array1::<i32>::zeros(3))?; // one column
/// assert_eq!(m.rows(), 3);
/// m.finish()?;
/// let mut back = NpzReader::new(npz.finish_into_inner()?)?;
/// assert_eq!(back.read::<i32, Ix2>("cols")?.dim(), (3, 3));
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[must_use = "a member is complete only after `finish`"]
pub struct NpzMemberWriter<'a, W: Write + Seek, T: Element> {
    npz: &'a mut NpzWriter<W>,
    m: Started,
    _element: PhantomData<fn(T)>,
}

/// A streamed member's state.
struct Started {
    name: String,
    /// The header for the shape so far (growth axis at `axis`).
    header: Header,
    axis: usize,
    rows: usize,
    /// Where the header's bytes lie in the file: (position, length) runs.
    header_at: Vec<(u64, usize)>,
    header_len: usize,
    open: Option<Open>,
    data: Option<MemberData>,
}

impl<'a, W: Write + Seek, T: Element> NpzMemberWriter<'a, W, T> {
    pub(super) fn start(
        npz: &'a mut NpzWriter<W>,
        name: &str,
        inner_shape: &[usize],
        order: Order,
    ) -> Result<Self> {
        match Self::begin(npz, name, inner_shape, order) {
            Ok(m) => Ok(NpzMemberWriter {
                npz,
                m,
                _element: PhantomData,
            }),
            Err(e) => {
                npz.failed = Some(name.to_owned());
                Err(e)
            }
        }
    }

    /// Writes the member's local header and `.npy` header.
    fn begin(
        npz: &mut NpzWriter<W>,
        name: &str,
        inner_shape: &[usize],
        order: Order,
    ) -> Result<Started> {
        npz.claim(name)?;
        let mut shape = inner_shape.to_vec();
        let axis = if order.is_fortran() {
            shape.push(0);
            shape.len() - 1
        } else {
            shape.insert(0, 0);
            0
        };
        let header = Header {
            dtype: T::dtype(),
            shape,
            fortran_order: order.is_fortran(),
            version: Version::V1,
        };
        let bytes = header.to_bytes()?;
        let method = npz.method();
        let align = npz.align();
        let open = npz
            .out
            .open(&format!("{name}.npy"), method, false, true, align)?;
        let mut header_at = Vec::new();
        #[cfg_attr(not(feature = "zstd"), allow(unused_mut))]
        let mut data = MemberData::new(method != Method::Stored);
        #[cfg(feature = "zstd")]
        if method == Method::Zstd {
            // The frame's header, then the `.npy` header in raw blocks, so
            // that it can be rewritten in place; the data's segments
            // follow in the same frame.
            let frame = npz.pool.stream_header()?;
            npz.out.write_all(&frame)?;
            for run in bytes.chunks(u16::MAX as usize) {
                let block = ((run.len() as u32) << 3).to_le_bytes();
                npz.out.write_all(&block[..3])?;
                header_at.push((npz.out.pos, run.len()));
                npz.out.write_all(run)?;
            }
            data = MemberData::continuing();
        }
        if method == Method::Deflated {
            // Stored deflate blocks hold the header, so that it can be
            // rewritten in place; the data's blocks follow.
            for run in bytes.chunks(u16::MAX as usize) {
                let len = run.len() as u16;
                let mut prefix = vec![0u8];
                prefix.extend_from_slice(&len.to_le_bytes());
                prefix.extend_from_slice(&(!len).to_le_bytes());
                npz.out.write_all(&prefix)?;
                header_at.push((npz.out.pos, run.len()));
                npz.out.write_all(run)?;
            }
        } else if method == Method::Stored {
            header_at.push((npz.out.pos, bytes.len()));
            npz.out.write_all(&bytes)?;
        }
        Ok(Started {
            name: name.to_owned(),
            header,
            axis,
            rows: 0,
            header_at,
            header_len: bytes.len(),
            open: Some(open),
            data: Some(data),
        })
    }

    /// Appends `block`: rows along the growth axis (any number, any memory
    /// layout), with the other dimensions equal to the inner shape; a block
    /// with one dimension fewer is a single row.
    ///
    /// A block whose shape does not fit is refused with
    /// [`crate::error::RowsError::AppendMismatch`] (or [`crate::error::LimitError::LengthOverflow`] if the
    /// member would grow past what a `.npy` header can describe) and
    /// leaves the member as it was; an I/O failure poisons the archive
    /// (later calls fail with [`crate::error::WriteError::IncompleteArchive`]).
    ///
    /// ```
    /// # use ndnpy::{NpzWriter, Order};
    /// # use std::io::Cursor;
    /// let mut npz = NpzWriter::new(Cursor::new(Vec::new()));
    /// let mut m = npz.add_streaming::<u8>("x", &[2], Order::C)?;
    /// assert!(m.write(&ndarray::array![[1u8, 2, 3]]).is_err()); // 3 columns, not 2
    /// m.write(&ndarray::array![[1u8, 2]])?;
    /// m.finish()?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn write<D: Dimension>(&mut self, block: &ArrayRef<T, D>) -> Result<()> {
        if self.npz.failed.is_some() {
            return Err(Error::Write(crate::error::WriteError::IncompleteArchive {
                name: self.m.name.clone(),
            }));
        }
        let block = block.view();
        let rows = crate::npy::growth::check_block(&self.m.header, self.m.axis, &block)?;
        let total = self.m.rows.checked_add(rows.shape()[0]);
        let grown = total.map(|t| self.with_rows(t));
        let fits = grown.as_ref().map(crate::npy::growth::check_grown);
        let Some(Ok(_)) = fits else {
            return Err(Error::Limit(crate::error::LimitError::LengthOverflow {
                shape: self.m.header.shape.iter().map(|&d| d as u64).collect(),
                itemsize: self.m.header.dtype.itemsize().unwrap_or(0),
            }));
        };
        let data = self.m.data.as_mut().expect("data present until finish");
        let result = crate::npy::growth::write_rows(
            &rows,
            &mut data.sink(&mut self.npz.out, &mut self.npz.pool),
        );
        if result.is_err() {
            self.npz.failed = Some(self.m.name.clone());
        }
        result?;
        self.m.rows = total.unwrap_or(self.m.rows);
        Ok(())
    }

    /// Rows written so far (the length of the growth axis).
    pub fn rows(&self) -> usize {
        self.m.rows
    }

    /// Ends the member: the final header and the zip sizes and CRC are
    /// written in place.
    pub fn finish(mut self) -> Result<()> {
        if let Some(name) = &self.npz.failed {
            return Err(Error::Write(crate::error::WriteError::IncompleteArchive {
                name: name.clone(),
            }));
        }
        let result = self.end();
        if result.is_err() {
            self.npz.failed = Some(self.m.name.clone());
        }
        result
    }

    fn end(&mut self) -> Result<()> {
        let header = self.with_rows(self.m.rows).to_bytes()?;
        if header.len() != self.m.header_len {
            // Only a growth axis of more than 21 digits could change it.
            return Err(Error::Io(io::Error::other(
                "internal error: the final .npy header does not fit the reserved room",
            )));
        }
        let data = self.m.data.take().expect("data present until finish");
        let open = self.m.open.take().expect("open until finish");
        let out = &mut self.npz.out;
        // The header is written apart from the data's pieces, so a piece
        // table would not describe the member: none.
        let (data_crc, data_len, _) = data.finish(out, &mut self.npz.pool)?;
        let mut done = 0;
        for &(at, len) in &self.m.header_at {
            out.patch(at, &header[done..done + len])?;
            done += len;
        }
        let mut crc = Hasher::new();
        crc.update(&header);
        crc.combine(&data_crc);
        out.close(open, crc.finalize(), header.len() as u64 + data_len, None)?;
        Ok(())
    }

    fn with_rows(&self, rows: usize) -> Header {
        let mut header = self.m.header.clone();
        header.shape[self.m.axis] = rows;
        header
    }
}

impl<W: Write + Seek, T: Element> Drop for NpzMemberWriter<'_, W, T> {
    /// The drop rule (crate docs, "Writers"): a streamed member's row
    /// count is known only to its caller, so a dropped one may be short
    /// (its source failed) and is never ended: the archive is poisoned,
    /// and its own drop then writes no central directory.
    fn drop(&mut self) {
        if self.m.open.is_none() {
            return;
        }
        self.npz.failed.get_or_insert_with(|| self.m.name.clone());
    }
}

impl<W: Write + Seek, T: Element> std::fmt::Debug for NpzMemberWriter<'_, W, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzMemberWriter")
            .field("name", &self.m.name)
            .field("shape", &self.with_rows(self.m.rows).shape)
            .finish_non_exhaustive()
    }
}
