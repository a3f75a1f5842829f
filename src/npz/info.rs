//! [`MemberInfo`]: what an archive's directory says about one member.

use super::zip::directory::{DEFLATED, STORED};
use super::zip::method::{BZIP2, LZMA, ZSTD};
use super::{in_member, NpzReader};
use crate::error::Result;
use std::io::{Read, Seek};

/// How a member's bytes are stored in the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// Uncompressed (`np.savez`): the member's bytes lie in the file as is.
    Stored,
    /// Deflate (`np.savez_compressed`).
    Deflated,
    /// bzip2 (zip method 12, `zipfile.ZIP_BZIP2`): read with the cargo
    /// feature `bzip2`.
    Bzip2,
    /// LZMA (zip method 14, `zipfile.ZIP_LZMA`): read with the cargo
    /// feature `lzma`.
    Lzma,
    /// Zstandard (zip method 93, Python 3.14's `zipfile.ZIP_ZSTANDARD`):
    /// read and written ([`crate::npz::Codec`]) with the cargo feature `zstd`.
    Zstd,
    /// Any other zip method (NumPy writes none; reading such members fails
    /// with [`crate::error::ArchiveError::UnsupportedMember`]).
    Other,
}

/// What the archive records about one member, read from its directory
/// entries without decompressing anything: see [`NpzReader::member_info`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemberInfo {
    /// The array name (the member name without `.npy`).
    pub name: String,
    /// How the member is stored.
    pub compression: Compression,
    /// Bytes the member takes in the archive.
    pub compressed_size: u64,
    /// Bytes of the member once decompressed (its `.npy` file).
    pub size: u64,
    /// Offset in the archive of the member's first (possibly compressed)
    /// byte: for a stored member, where its `.npy` file starts.
    pub data_start: u64,
    /// Whether the member is encrypted.
    pub encrypted: bool,
}

impl<R: Read + Seek> NpzReader<R> {
    /// The compression method, sizes and position of member `name` (or
    /// `name.npy`), as the archive records them.
    ///
    /// A stored, unencrypted member whose array data starts at a multiple of
    /// 64 bytes can be viewed in place with [`crate::NpzMmap`].
    ///
    /// ```
    /// use ndarray::array;
    /// use ndnpy::{npz::Compression, NpzReader, NpzWriter};
    /// use std::io::Cursor;
    ///
    /// let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    /// w.add("z", &ndarray::Array1::<f64>::zeros(1000))?;
    /// let bytes = w.finish_into_inner()?.into_inner();
    ///
    /// let mut npz = NpzReader::new(Cursor::new(bytes))?;
    /// let info = npz.member_info("z")?;
    /// assert_eq!(info.name, "z");
    /// assert_eq!(info.compression, Compression::Deflated);
    /// assert_eq!(info.size, 128 + 8000);
    /// assert!(info.compressed_size < info.size);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn member_info(&mut self, name: &str) -> Result<MemberInfo> {
        let index = self.index(name)?;
        let entry = &self.directory.entries[index];
        // Reading the local header also checks it against the directory, so
        // what is reported is what a read would see.
        let data_start = entry
            .data_start(&mut self.input, self.archive_len)
            .map_err(|e| in_member(entry.key(), e))?;
        let compression = match entry.method {
            STORED => Compression::Stored,
            DEFLATED => Compression::Deflated,
            BZIP2 => Compression::Bzip2,
            LZMA => Compression::Lzma,
            ZSTD => Compression::Zstd,
            _ => Compression::Other,
        };
        Ok(MemberInfo {
            name: entry.key().to_owned(),
            compression,
            compressed_size: entry.compressed_size,
            size: entry.size,
            data_start,
            encrypted: entry.encrypted(),
        })
    }
}
