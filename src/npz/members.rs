//! The archive reader's streams: [`NpzMemberReader`], one member's bytes,
//! and [`NpzArrays`], every member as an array.

use super::key_of;
use super::reader::{ArchiveMember, NpzReader};
use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use std::io::{self, Read, Seek};

/// The bytes of one member, inflated as they are read, checked against
/// the member's size and CRC-32 at the end ([`NpzReader::member_reader`]).
pub struct NpzMemberReader<'a, R: Read + Seek> {
    inner: ArchiveMember<'a, R>,
    size: u64,
}

impl<'a, R: Read + Seek> NpzMemberReader<'a, R> {
    pub(super) fn new(inner: ArchiveMember<'a, R>, size: u64) -> Self {
        NpzMemberReader { inner, size }
    }

    /// The member's uncompressed size as the archive declares it: the most
    /// bytes the reader gives.
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl<R: Read + Seek> Read for NpzMemberReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() && self.inner.left() > 0 {
            let got = self.size - self.inner.left();
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                Error::CorruptMember {
                    name: self.inner.name().to_owned(),
                    reason: format!(
                        "its data ends after {got} of the {} bytes the archive declares",
                        self.size
                    ),
                },
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
/// yields each member's name and the result of reading it.
pub struct NpzArrays<'a, R: Read + Seek> {
    reader: &'a mut NpzReader<R>,
    next: usize,
}

impl<'a, R: Read + Seek> NpzArrays<'a, R> {
    pub(super) fn new(reader: &'a mut NpzReader<R>) -> Self {
        NpzArrays { reader, next: 0 }
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
        let options = self.reader.options;
        Some((
            name,
            self.reader
                .read_index(index, |h, s| crate::pickle::read_any(h, s, &options)),
        ))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.reader.members.len() - self.next;
        (left, Some(left))
    }
}

impl<R: Read + Seek> ExactSizeIterator for NpzArrays<'_, R> {}
