//! The zip container of an archive being written: local headers, patched
//! in place once a member's sizes and CRC are known, then the central
//! directory, with zip64 records where sizes, offsets or the member count
//! need them.
//!
//! Written by hand rather than through `zip::ZipWriter` so that a member's
//! data can arrive as independently compressed pieces (from several
//! threads) and so that a streamed member can have its `.npy` header
//! rewritten after its data.

use super::pieces::{Pieces, BLOCKS_ID};
use crate::io::checked::CheckedWrite;
use std::io::{self, Seek, SeekFrom, Write};

/// Zip's "no 32-bit value" marker: the real value is in a zip64 field.
const MAX32: u64 = 0xFFFF_FFFF;
/// 1980-01-01 00:00 in MS-DOS format, so the same arrays give the same bytes.
const DOS_DATE: u16 = (1 << 5) | 1;
const DOS_TIME: u16 = 0;
/// Regular file, rw-r--r--, in the central directory's Unix attributes.
const EXTERNAL_ATTRS: u32 = 0o100644 << 16;
/// "Made by" Unix (3), zip spec 4.5.
const MADE_BY: u16 = (3 << 8) | 45;
/// The zip64 extra field (id, size, uncompressed size, compressed size).
const ZIP64_LOCAL_EXTRA: usize = 20;
/// The data stream alignment extra field's id (as Android's zipalign
/// writes it, and the `zip` crate): `np.load` and other readers skip it.
const ALIGN_ID: u16 = 0xa11e;

/// How a member is stored.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Method {
    Stored,
    Deflated,
    /// Zstandard (`codec/zstd/`).
    #[cfg(feature = "zstd")]
    Zstd,
}

impl Method {
    fn code(self) -> u16 {
        match self {
            Method::Stored => 0,
            Method::Deflated => 8,
            #[cfg(feature = "zstd")]
            Method::Zstd => 93,
        }
    }

    /// The zip version needed to extract the member, `zip64` or not: 6.3
    /// for Zstandard (the zip specification's, which Python's `zipfile`
    /// writes too).
    fn needed(self, zip64: bool) -> u16 {
        match self {
            #[cfg(feature = "zstd")]
            Method::Zstd => 63,
            _ if zip64 => 45,
            _ => 20,
        }
    }
}

/// A member whose local header is written and whose data is being written.
#[derive(Debug)]
pub(crate) struct Open {
    index: usize,
    /// Offset of the first data byte in the file.
    pub(crate) data_start: u64,
    /// Whether the local header carries a zip64 extra field.
    zip64: bool,
    /// Whether the zip64 field may be turned into padding at the end
    /// (sizes unknown when the header was written).
    tentative: bool,
}

/// What the central directory records about a member.
#[derive(Debug)]
struct Entry {
    name: Vec<u8>,
    method: Method,
    offset: u64,
    crc: u32,
    compressed: u64,
    uncompressed: u64,
    zip64_local: bool,
    /// The table of independently deflated pieces (`codec/deflate/inflate.rs`).
    pieces: Option<Pieces>,
}

/// The archive being written into `W`, tracking the write position itself.
pub(crate) struct ZipOut<W> {
    /// `None` once [`ZipOut::take_inner`] gave it back.
    inner: Option<W>,
    /// Position in `inner` (the next byte written lands here).
    pub(crate) pos: u64,
    entries: Vec<Entry>,
}

impl<W: Write + Seek> ZipOut<W> {
    /// The archive from `inner`'s current position on. Offsets are
    /// positions in `inner`, as zip readers expect of an archive that
    /// follows other data.
    pub(crate) fn new(mut inner: W) -> Result<ZipOut<W>, (W, io::Error)> {
        match inner.stream_position() {
            Ok(pos) => Ok(ZipOut::at(inner, pos)),
            Err(e) => Err((inner, e)),
        }
    }

    /// The archive from position `pos` of `inner` on.
    pub(crate) fn at(inner: W, pos: u64) -> ZipOut<W> {
        ZipOut {
            inner: Some(inner),
            pos,
            entries: Vec::new(),
        }
    }

    /// Gives the writer back (once: the archive is done with it). A
    /// `ZipOut` whose writer was taken writes nothing more.
    pub(crate) fn take_inner(&mut self) -> Option<W> {
        self.inner.take()
    }

    /// The writer, or an error once it was given back.
    fn w(&mut self) -> io::Result<&mut W> {
        self.inner
            .as_mut()
            .ok_or_else(|| io::Error::other("internal error: the archive's writer was given back"))
    }

    /// Writes `bytes` at the current position.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        // The caller's writer may claim more bytes than it was given.
        CheckedWrite(self.w()?).write_all(bytes)?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Writes the local header of member `name`. `zip64` asks for zip64
    /// sizes (a member that may reach 4 GiB); `tentative` reserves them
    /// for a member of unknown size, to be resolved at [`ZipOut::close`].
    /// Stored members with `align` start their data at a multiple of it.
    pub(crate) fn open(
        &mut self,
        name: &str,
        method: Method,
        zip64: bool,
        tentative: bool,
        align: Option<u16>,
    ) -> io::Result<Open> {
        if name.len() > u16::MAX as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a member name is longer than zip allows (65 535 bytes)",
            ));
        }
        let offset = self.pos;
        let zip64 = zip64 || tentative;
        let mut extra = Vec::new();
        if zip64 {
            extra.extend_from_slice(&1u16.to_le_bytes());
            extra.extend_from_slice(&16u16.to_le_bytes());
            extra.extend_from_slice(&[0u8; 16]);
        }
        if let Some(align) = align.filter(|_| method == Method::Stored) {
            let unpadded = self.pos + 30 + name.len() as u64 + extra.len() as u64 + 6;
            let pad = (align as u64 - unpadded % align as u64) % align as u64;
            extra.extend_from_slice(&ALIGN_ID.to_le_bytes());
            extra.extend_from_slice(&(2 + pad as u16).to_le_bytes());
            extra.extend_from_slice(&align.to_le_bytes());
            extra.resize(extra.len() + pad as usize, 0);
        }
        let mut header = Vec::with_capacity(30 + name.len() + extra.len());
        header.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        header.extend_from_slice(&method.needed(zip64).to_le_bytes());
        header.extend_from_slice(&flags(name).to_le_bytes());
        header.extend_from_slice(&method.code().to_le_bytes());
        header.extend_from_slice(&DOS_TIME.to_le_bytes());
        header.extend_from_slice(&DOS_DATE.to_le_bytes());
        // CRC and sizes: patched by `close`.
        header.extend_from_slice(&[0u8; 12]);
        header.extend_from_slice(&(name.len() as u16).to_le_bytes());
        header.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        header.extend_from_slice(name.as_bytes());
        header.extend_from_slice(&extra);
        self.write_all(&header)?;
        self.entries.push(Entry {
            name: name.as_bytes().to_vec(),
            method,
            offset,
            crc: 0,
            compressed: 0,
            uncompressed: 0,
            zip64_local: zip64,
            pieces: None,
        });
        Ok(Open {
            index: self.entries.len() - 1,
            data_start: self.pos,
            zip64,
            tentative,
        })
    }

    /// Overwrites bytes at absolute position `at` (inside data already
    /// written) and comes back to the end.
    pub(crate) fn patch(&mut self, at: u64, bytes: &[u8]) -> io::Result<()> {
        self.write_at(at, bytes)?;
        let pos = self.pos;
        self.w()?.seek(SeekFrom::Start(pos))?;
        Ok(())
    }

    /// Writes `bytes` at `at`, checking that they landed there: a file
    /// opened with `append(true)` puts every write at its end.
    fn write_at(&mut self, at: u64, bytes: &[u8]) -> io::Result<()> {
        self.w()?.seek(SeekFrom::Start(at))?;
        CheckedWrite(self.w()?).write_all(bytes)?;
        crate::npy::stream::raw::check_patched(self.w()?, at, bytes.len())
    }

    /// Records the member's CRC and sizes (the data ends at the current
    /// position) in its local header.
    pub(crate) fn close(
        &mut self,
        open: Open,
        crc: u32,
        uncompressed: u64,
        pieces: Option<Pieces>,
    ) -> io::Result<()> {
        let compressed = self.pos - open.data_start;
        let entry = &mut self.entries[open.index];
        entry.pieces = pieces;
        entry.crc = crc;
        entry.compressed = compressed;
        entry.uncompressed = uncompressed;
        let header_at = entry.offset;
        let entry_method = entry.method;
        let name_len = entry.name.len() as u64;
        let fits = compressed < MAX32 && uncompressed < MAX32;
        if !open.zip64 && !fits {
            return Err(io::Error::other(
                "internal error: a member grew past 4 GiB without zip64 sizes",
            ));
        }
        let mut fixed = Vec::with_capacity(12);
        fixed.extend_from_slice(&crc.to_le_bytes());
        let zip64 = open.zip64 && !(open.tentative && fits);
        if zip64 {
            fixed.extend_from_slice(&(MAX32 as u32).to_le_bytes());
            fixed.extend_from_slice(&(MAX32 as u32).to_le_bytes());
        } else {
            fixed.extend_from_slice(&(compressed as u32).to_le_bytes());
            fixed.extend_from_slice(&(uncompressed as u32).to_le_bytes());
        }
        self.write_at(header_at + 14, &fixed)?;
        if open.zip64 {
            let mut field = Vec::with_capacity(ZIP64_LOCAL_EXTRA);
            if zip64 {
                field.extend_from_slice(&1u16.to_le_bytes());
                field.extend_from_slice(&16u16.to_le_bytes());
                field.extend_from_slice(&uncompressed.to_le_bytes());
                field.extend_from_slice(&compressed.to_le_bytes());
            } else {
                // Sizes fit after all: the reserved field becomes padding
                // that readers skip, and the version needed drops back.
                field.extend_from_slice(&ALIGN_ID.to_le_bytes());
                field.extend_from_slice(&16u16.to_le_bytes());
                field.extend_from_slice(&1u16.to_le_bytes());
                field.extend_from_slice(&[0u8; 14]);
                let needed = entry_method.needed(false);
                self.write_at(header_at + 4, &needed.to_le_bytes())?;
            }
            self.write_at(header_at + 30 + name_len, &field)?;
        }
        self.entries[open.index].zip64_local = zip64;
        let pos = self.pos;
        self.w()?.seek(SeekFrom::Start(pos))?;
        Ok(())
    }

    /// Writes the central directory and the end records.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        let cd_start = self.pos;
        let mut cd = Vec::new();
        let entries = std::mem::take(&mut self.entries);
        for e in &entries {
            let mut extra = Vec::new();
            let big_u = e.uncompressed >= MAX32;
            let big_c = e.compressed >= MAX32;
            let big_o = e.offset >= MAX32;
            // The order zip readers (Python's zipfile included) expect.
            if big_u {
                extra.extend_from_slice(&e.uncompressed.to_le_bytes());
            }
            if big_c {
                extra.extend_from_slice(&e.compressed.to_le_bytes());
            }
            if big_o {
                extra.extend_from_slice(&e.offset.to_le_bytes());
            }
            if !extra.is_empty() {
                let len = extra.len() as u16;
                extra.splice(0..0, [1u16.to_le_bytes(), len.to_le_bytes()].concat());
            }
            // The piece table, for readers that inflate on every core.
            if let Some(table) = e.pieces.as_ref().and_then(Pieces::encode) {
                extra.extend_from_slice(&BLOCKS_ID.to_le_bytes());
                extra.extend_from_slice(&(table.len() as u16).to_le_bytes());
                extra.extend_from_slice(&table);
            }
            let needed = e.method.needed(e.zip64_local || !extra.is_empty());
            let clamp = |v: u64| v.min(MAX32) as u32;
            cd.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            cd.extend_from_slice(&MADE_BY.to_le_bytes());
            cd.extend_from_slice(&needed.to_le_bytes());
            cd.extend_from_slice(&flags_bytes(&e.name).to_le_bytes());
            cd.extend_from_slice(&e.method.code().to_le_bytes());
            cd.extend_from_slice(&DOS_TIME.to_le_bytes());
            cd.extend_from_slice(&DOS_DATE.to_le_bytes());
            cd.extend_from_slice(&e.crc.to_le_bytes());
            cd.extend_from_slice(&clamp(e.compressed).to_le_bytes());
            cd.extend_from_slice(&clamp(e.uncompressed).to_le_bytes());
            cd.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            cd.extend_from_slice(&(extra.len() as u16).to_le_bytes());
            cd.extend_from_slice(&0u16.to_le_bytes()); // comment
            cd.extend_from_slice(&0u16.to_le_bytes()); // disk
            cd.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
            cd.extend_from_slice(&EXTERNAL_ATTRS.to_le_bytes());
            cd.extend_from_slice(&clamp(e.offset).to_le_bytes());
            cd.extend_from_slice(&e.name);
            cd.extend_from_slice(&extra);
            if cd.len() >= 1 << 20 {
                self.write_all(&cd)?;
                cd.clear();
            }
        }
        self.write_all(&cd)?;
        let cd_end = self.pos;
        let cd_size = cd_end - cd_start;
        let count = entries.len() as u64;
        self.entries = entries;
        let mut end = Vec::new();
        if count >= 0xFFFF || cd_start >= MAX32 || cd_size >= MAX32 {
            end.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
            end.extend_from_slice(&44u64.to_le_bytes());
            end.extend_from_slice(&MADE_BY.to_le_bytes());
            end.extend_from_slice(&45u16.to_le_bytes());
            end.extend_from_slice(&0u32.to_le_bytes()); // this disk
            end.extend_from_slice(&0u32.to_le_bytes()); // disk of the directory
            end.extend_from_slice(&count.to_le_bytes());
            end.extend_from_slice(&count.to_le_bytes());
            end.extend_from_slice(&cd_size.to_le_bytes());
            end.extend_from_slice(&cd_start.to_le_bytes());
            end.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
            end.extend_from_slice(&0u32.to_le_bytes());
            end.extend_from_slice(&cd_end.to_le_bytes());
            end.extend_from_slice(&1u32.to_le_bytes());
        }
        end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        end.extend_from_slice(&0u16.to_le_bytes());
        end.extend_from_slice(&0u16.to_le_bytes());
        end.extend_from_slice(&(count.min(0xFFFF) as u16).to_le_bytes());
        end.extend_from_slice(&(count.min(0xFFFF) as u16).to_le_bytes());
        end.extend_from_slice(&(cd_size.min(MAX32) as u32).to_le_bytes());
        end.extend_from_slice(&(cd_start.min(MAX32) as u32).to_le_bytes());
        end.extend_from_slice(&0u16.to_le_bytes()); // comment
        self.write_all(&end)?;
        self.w()?.flush()
    }
}

/// General purpose flags: bit 11 (names are UTF-8) for non-ASCII names.
fn flags(name: &str) -> u16 {
    flags_bytes(name.as_bytes())
}

fn flags_bytes(name: &[u8]) -> u16 {
    if name.is_ascii() {
        0
    } else {
        1 << 11
    }
}
