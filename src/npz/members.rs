//! The archive reader's streams: [`NpzMemberReader`], one member's bytes,
//! and [`NpzArrays`], every member as an array.

use super::codec::Plan;
use super::in_member;
use super::pool::{read_inflated, Output, Want};
use super::reader::{check_size, ArchiveMember, NpzReader, STREAM_WHOLE_LIMIT, WHOLE_LIMIT};
use super::zip::names::key_of;
use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use crate::format::header::Header;
use crate::io::source::Source;
use std::io::{self, Read, Seek};

impl<R: Read + Seek> NpzReader<R> {
    /// Member `index` read with `read_any`, from what its read-ahead job
    /// gave (`planned`) if it had one.
    pub(super) fn any_from(
        &mut self,
        index: usize,
        planned: Option<Result<Output>>,
    ) -> Result<AnyArray> {
        let options = self.options;
        let read = |h: &Header, s: &mut Source<'_>| crate::pickle::read_any(h, s, &options);
        match planned {
            Some(Ok(Output::Any(array))) => Ok(array),
            Some(Ok(Output::Bytes(bytes))) => {
                let key = self.directory.entries[index].key().to_owned();
                let result = read_inflated(&bytes, &options, read).map_err(|e| in_member(&key, e));
                self.recycle(bytes);
                result
            }
            Some(Err(e)) => Err(e),
            None => self.read_archived(index, read),
        }
    }

    /// An iterator over all members in archive order, each read with
    /// [`NpzReader::read_any`]: `(name, result)` pairs, where a member that
    /// is not a `.npy` file (or is damaged) gives its error without ending
    /// the iteration.
    ///
    /// ```
    /// # use ndarray::array;
    /// # use std::io::Cursor;
    /// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// w.add("a", &array![1.0f32])?;
    /// w.add("b", &array![[1u8]])?;
    /// let bytes = w.finish_into_inner()?.into_inner();
    /// let mut npz = ndnpy::NpzReader::new(Cursor::new(bytes))?;
    /// for (name, array) in npz.arrays() {
    ///     let array = array?;
    ///     println!("{name}: {} {:?}", array.dtype(), array.shape());
    /// }
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn arrays(&mut self) -> NpzArrays<'_, R> {
        NpzArrays::new(self)
    }

    /// The decompressed bytes of member `name`, whatever it holds (NumPy
    /// returns members that are not `.npy` files this way).
    ///
    /// The member's CRC-32 is checked; bytes beyond the size the archive
    /// declares for it are ignored, as Python's `zipfile` does.
    ///
    /// ```
    /// # use std::io::{Cursor, Write};
    /// // An archive with a text member, as another tool might write it.
    /// let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    /// zip.start_file("notes.txt", zip::write::SimpleFileOptions::default()).unwrap();
    /// zip.write_all(b"hello").unwrap();
    /// let bytes = zip.finish().unwrap().into_inner();
    ///
    /// let mut npz = ndnpy::NpzReader::new(Cursor::new(bytes))?;
    /// assert_eq!(npz.raw("notes.txt")?, b"hello");
    /// assert!(matches!(
    ///     npz.read_any("notes.txt"),
    ///     Err(ndnpy::Error::Archive(ndnpy::error::ArchiveError::NotNpy { .. }))
    /// ));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn raw(&mut self, name: &str) -> Result<Vec<u8>> {
        let index = self.index(name)?;
        match self.planned(index, Some(Want::Bytes)) {
            Some(Ok(Output::Bytes(bytes))) => return Ok(bytes),
            Some(Err(e)) => return Err(e),
            Some(Ok(Output::Any(_))) | None => {}
        }
        self.with_member(index, Plan::Whole(WHOLE_LIMIT), |member, size, _| {
            // Grows with the bytes that arrive, never to the declared size
            // up front; the member reader stops at the declared size.
            let mut out = Vec::new();
            member.read_to_end(&mut out)?;
            check_size(out.len() as u64, size)?;
            Ok(out)
        })
    }

    /// A streaming reader of member `name`'s bytes (the `.npy` file it
    /// holds, header included), found by NumPy's rule (`name`, then
    /// `name.npy`): a deflated member is inflated as it is read, in bounded
    /// memory (except that a member ndnpy wrote, up to 256 MiB, is inflated
    /// on every core into memory of its size once its first megabyte has
    /// been read); the bytes stop at the size the archive declares. Once all of
    /// them have been read their CRC-32 is checked: a mismatch is an
    /// `io::Error` carrying [`crate::error::ArchiveError::BadCrc`], and data that ends early one
    /// carrying [`crate::error::ArchiveError::CorruptMember`] (`ndnpy::Error::from` gives those
    /// variants back).
    ///
    /// ```
    /// use ndnpy::{Error, dtype::Header, NpzReader, NpzWriter};
    /// use std::io::{Cursor, Read};
    ///
    /// let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    /// w.add("x", &ndarray::Array1::<f64>::zeros(1000))?;
    /// let mut bytes = w.finish_into_inner()?.into_inner();
    /// let mut npz = NpzReader::new(Cursor::new(bytes.clone()))?;
    /// let mut member = npz.member_reader("x")?;
    /// assert_eq!(member.size(), 8128);
    /// let header = Header::read_from(&mut member)?;
    /// assert_eq!(header.shape, [1000]);
    /// let mut data = Vec::new();
    /// member.read_to_end(&mut data)?;
    /// assert_eq!(data.len(), 8000);
    ///
    /// // A CRC-32 that does not match the data: a typed error at the end.
    /// let at = bytes.windows(4).position(|w| w == b"PK\x01\x02").unwrap() + 16;
    /// bytes[at] ^= 1;
    /// let mut npz = NpzReader::new(Cursor::new(bytes))?;
    /// let err = npz.member_reader("x")?.read_to_end(&mut Vec::new()).unwrap_err();
    /// assert!(matches!(Error::from(err), Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn member_reader(&mut self, name: &str) -> Result<NpzMemberReader<'_, R>> {
        let index = self.index(name)?;
        match self.planned(index, None) {
            // Inflated ahead (`NpzReader::read_ahead`), checked.
            Some(Ok(Output::Bytes(bytes))) => {
                let size = bytes.len() as u64;
                return Ok(NpzMemberReader {
                    inner: Inner::Memory(io::Cursor::new(bytes)),
                    size,
                });
            }
            Some(Err(e)) => return Err(e),
            Some(Ok(Output::Any(_))) | None => {}
        }
        // A member ndnpy wrote (with a piece table) of up to 256 MiB is
        // inflated on every core: its first piece at the first read (so a
        // peek at the header stays cheap), the rest, into a buffer of its
        // own, when the first piece is used up. Other members stream, in
        // constant memory.
        let entry = &self.directory.entries[index];
        let pieces = entry.pieces.as_ref();
        let whole = if pieces.is_some_and(|p| p.fits(entry.size, entry.compressed_size)) {
            STREAM_WHOLE_LIMIT
        } else {
            0
        };
        let (inner, size, _) = self.open_member(index, Plan::Whole(whole))?;
        Ok(NpzMemberReader {
            inner: Inner::Archive(inner),
            size,
        })
    }
}

/// The bytes of one member, inflated as they are read, checked against
/// the member's size and CRC-32 at the end ([`NpzReader::member_reader`]).
pub struct NpzMemberReader<'a, R: Read + Seek> {
    inner: Inner<'a, R>,
    size: u64,
}

/// Where a member reader's bytes come from.
enum Inner<'a, R: Read + Seek> {
    /// The archive, inflated as they are read.
    Archive(ArchiveMember<'a, R>),
    /// Memory: inflated ahead and checked (`NpzReader::read_ahead`).
    Memory(io::Cursor<Vec<u8>>),
}

impl<R: Read + Seek> NpzMemberReader<'_, R> {
    /// The member's uncompressed size as the archive declares it: the most
    /// bytes the reader gives.
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl<R: Read + Seek> Read for NpzMemberReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let inner = match &mut self.inner {
            Inner::Memory(bytes) => return bytes.read(buf),
            Inner::Archive(inner) => inner,
        };
        let n = inner.read(buf)?;
        if n == 0 && !buf.is_empty() && inner.left() > 0 {
            let got = self.size - inner.left();
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                Error::Archive(crate::error::ArchiveError::CorruptMember {
                    name: inner.name().to_owned(),
                    reason: format!(
                        "its data ends after {got} of the {} bytes the archive declares",
                        self.size
                    ),
                }),
            ));
        }
        Ok(n)
    }
}

impl<R: Read + Seek> std::fmt::Debug for NpzMemberReader<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzMemberReader")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

/// Iterator over the arrays of an archive, made by [`NpzReader::arrays`]:
/// yields each member's name and the result of reading it. The next
/// members are inflated and decoded on other cores meanwhile (as
/// [`NpzReader::read_ahead`] describes, with its memory bound).
pub struct NpzArrays<'a, R: Read + Seek> {
    reader: &'a mut NpzReader<R>,
    next: usize,
}

impl<'a, R: Read + Seek> NpzArrays<'a, R> {
    pub(super) fn new(reader: &'a mut NpzReader<R>) -> Self {
        reader.plan_arrays();
        NpzArrays { reader, next: 0 }
    }
}

impl<R: Read + Seek> Drop for NpzArrays<'_, R> {
    fn drop(&mut self) {
        // Members not taken are not inflated for nothing.
        self.reader.end_plan();
    }
}

impl<R: Read + Seek> Iterator for NpzArrays<'_, R> {
    type Item = (String, Result<AnyArray>);

    fn next(&mut self) -> Option<Self::Item> {
        let name = key_of(self.reader.members.get(self.next)?).to_owned();
        self.next += 1;
        // The member NumPy's `z[name]` reads (the last of a repeated name).
        let index = match self.reader.index(&name) {
            Ok(index) => index,
            Err(e) => return Some((name, Err(e))),
        };
        let planned = self.reader.planned(index, None);
        let result = self.reader.any_from(index, planned);
        Some((name, result))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.reader.members.len() - self.next;
        (left, Some(left))
    }
}

impl<R: Read + Seek> ExactSizeIterator for NpzArrays<'_, R> {}
