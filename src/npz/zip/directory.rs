//! The zip structure of an archive, read the way Python's `zipfile` (and so
//! `np.load`) reads it, so that an archive means the same thing here and in
//! NumPy.
//!
//! The rules, all from CPython's `zipfile` and `np.load`:
//! - the file starts with a local header or an end record (`np.load`
//!   dispatches on these bytes; a zip with data prepended is not an archive
//!   to it);
//! - the end record is the last 22 bytes, or else the last occurrence of its
//!   signature in the final 64 KiB + 22 bytes; a zip64 locator just before
//!   it replaces the directory's size and offset;
//! - the central directory is read entry by entry until its declared *size*
//!   is consumed; the end record's entry count is ignored;
//! - names are UTF-8 when flag bit 11 says so (invalid UTF-8 refuses the
//!   archive), CP437 otherwise; a name is cut at its first NUL byte (that is
//!   NumPy's key), and extra fields other than zip64's are ignored (notably
//!   the Info-ZIP Unicode Path field 0x7075, which would rename a member);
//! - when a member is opened, its local header must carry the directory's
//!   name, and (Python 3.12's zip-bomb check) its data must end before the
//!   next local header or the central directory: entries that share or
//!   overlap another's bytes are refused, one by one, when read.
//!
//! Everything is bounded by the archive's length, and all offsets are
//! computed with checked or wide arithmetic, so hostile directories give
//! [`crate::error::ArchiveError::InvalidArchive`], never a panic or a huge allocation.

use super::names::key_of;
use super::pieces::{Pieces, BLOCKS_ID};
use crate::error::{Error, Result};
use crate::io::checked::{read_full, read_full_vec};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};

const END_SIG: &[u8; 4] = b"PK\x05\x06";
const END_LEN: usize = 22;
const LOCATOR_SIG: &[u8; 4] = b"PK\x06\x07";
const LOCATOR_LEN: u64 = 20;
const END64_SIG: &[u8; 4] = b"PK\x06\x06";
const END64_LEN: u64 = 56;
const CENTRAL_SIG: &[u8; 4] = b"PK\x01\x02";
const CENTRAL_LEN: usize = 46;
const LOCAL_SIG: &[u8; 4] = b"PK\x03\x04";
const LOCAL_LEN: usize = 30;
/// The newest zip version Python's `zipfile` extracts (6.3).
const MAX_EXTRACT_VERSION: u8 = 63;
/// Flag bits: encrypted, compressed patched data, strong encryption, UTF-8.
const FLAG_ENCRYPTED: u16 = 1;
const FLAG_PATCHED: u16 = 1 << 5;
const FLAG_STRONG_ENCRYPTION: u16 = 1 << 6;
const FLAG_UTF8: u16 = 1 << 11;
/// Compression methods (defined beside the codecs' other method numbers).
pub(crate) use super::method::{DEFLATED, STORED};

/// One central directory entry.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The name as stored (decoded), which the local header must repeat.
    orig_name: String,
    /// The member's name: `orig_name` cut at its first NUL, as Python's
    /// `ZipInfo` does.
    pub(crate) name: String,
    flags: u16,
    pub(crate) method: u16,
    pub(crate) crc: u32,
    pub(crate) compressed_size: u64,
    pub(crate) size: u64,
    /// Offset of the local header, if it is a file offset at all.
    header_offset: Option<u64>,
    /// Where the next local header (or the central directory) starts: the
    /// member's bytes must end here.
    end_offset: u64,
    /// ndnpy's table of independently deflated pieces, if the writer left
    /// one (`codec/deflate/inflate.rs`).
    pub(crate) pieces: Option<Pieces>,
}

impl Entry {
    /// The member's key (its name without `.npy`).
    pub(crate) fn key(&self) -> &str {
        key_of(&self.name)
    }

    /// Whether the member is encrypted (traditional or strong encryption).
    pub(crate) fn encrypted(&self) -> bool {
        self.flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION) != 0
    }

    /// Refuses members this crate cannot decode: encrypted ones and
    /// compression methods without a codec in this build (`codec/`).
    pub(crate) fn check_supported(&self) -> Result<()> {
        let name = || self.key().to_owned();
        if self.encrypted() {
            return Err(Error::Archive(crate::error::ArchiveError::Encrypted {
                name: name(),
            }));
        }
        if self.flags & FLAG_PATCHED != 0 {
            return Err(Error::Archive(
                crate::error::ArchiveError::UnsupportedMember {
                    name: name(),
                    reason: "it holds compressed patched data (flag bit 5)".into(),
                },
            ));
        }
        if let Some(reason) = super::method::check_method(self.method) {
            return Err(Error::Archive(
                crate::error::ArchiveError::UnsupportedMember {
                    name: name(),
                    reason,
                },
            ));
        }
        Ok(())
    }

    /// Reads and checks the member's local header through `reader` (an
    /// archive of `archive_len` bytes) and returns the offset of its data,
    /// which is known to end inside the member's own range.
    pub(crate) fn data_start<R: Read + Seek + ?Sized>(
        &self,
        reader: &mut R,
        archive_len: u64,
    ) -> Result<u64> {
        let invalid = |what: String| {
            Error::Archive(crate::error::ArchiveError::InvalidArchive {
                reason: format!("member '{}' {what}", crate::error::capped(self.key())),
            })
        };
        let offset = self
            .header_offset
            .filter(|&o| {
                o.checked_add(LOCAL_LEN as u64)
                    .is_some_and(|e| e <= archive_len)
            })
            .ok_or_else(|| invalid("has a local header offset outside the file".into()))?;
        reader.seek(SeekFrom::Start(offset))?;
        let mut fixed = [0u8; LOCAL_LEN];
        read_exact_or(reader, &mut fixed, || {
            invalid("has a truncated local header".into())
        })?;
        if &fixed[..4] != LOCAL_SIG {
            return Err(invalid("has no local header (bad signature)".into()));
        }
        let flags = u16_at(&fixed, 6);
        let name_len = u16_at(&fixed, 26) as u64;
        let extra_len = u16_at(&fixed, 28) as u64;
        let start = offset + LOCAL_LEN as u64 + name_len + extra_len;
        if start > archive_len {
            return Err(invalid("has a truncated local header".into()));
        }
        let mut raw = vec![0u8; name_len as usize];
        read_exact_or(reader, &mut raw, || {
            invalid("has a truncated local header".into())
        })?;
        let local = decode_name(&raw, flags)
            .ok_or_else(|| invalid("has a local header name that is not valid UTF-8".into()))?;
        if local != self.orig_name {
            return Err(invalid(format!(
                "is named '{}' in its local header (NumPy refuses such archives)",
                crate::error::capped(&local)
            )));
        }
        // The next entry's offset bounds the data, and so does the file's
        // end: a later entry may claim an offset past it.
        if start
            .checked_add(self.compressed_size)
            .is_none_or(|end| end > self.end_offset.min(archive_len))
        {
            return Err(invalid(
                "overlaps the next member or the central directory (a possible zip bomb)".into(),
            ));
        }
        Ok(start)
    }
}

/// The parsed central directory, with a name index.
#[derive(Debug)]
pub(crate) struct Directory {
    pub(crate) entries: Vec<Entry>,
    /// Member name → index of the last entry with that name (Python's
    /// `NameToInfo` keeps the last).
    by_name: HashMap<String, usize>,
    pub(crate) comment: Vec<u8>,
}

impl Directory {
    /// Reads the directory of the archive of `len` bytes behind `reader`.
    pub(crate) fn read<R: Read + Seek + ?Sized>(reader: &mut R, len: u64) -> Result<Directory> {
        let not_zip = || {
            Error::Archive(crate::error::ArchiveError::InvalidArchive {
                reason: "no end of central directory record was found".into(),
            })
        };
        // np.load takes a file for an archive only when it starts with a
        // local header (or is an empty archive); anything else, such as a
        // zip with data prepended, is not one to NumPy.
        reader.seek(SeekFrom::Start(0))?;
        let mut magic = [0u8; 4];
        if read_full(reader, &mut magic)? < 4 || (&magic != LOCAL_SIG && &magic != END_SIG) {
            return Err(Error::Archive(crate::error::ArchiveError::InvalidArchive {
                reason: "it does not start with a zip signature (PK\\x03\\x04), so np.load would not read it as an archive".into(),
            }));
        }
        // The end record: the last 22 bytes when there is no comment, or
        // the last signature in the final 64 KiB + 22 bytes.
        let tail_start = len.saturating_sub((1 << 16) + END_LEN as u64);
        reader.seek(SeekFrom::Start(tail_start))?;
        // One read call of the exact size (at most 64 KiB + 22 bytes): a
        // reader that fetches what it is asked for (ndnpy-store's ranged
        // GETs) then makes one request, not one per growth step.
        let mut tail = vec![0u8; (len - tail_start) as usize];
        let got = read_full(reader, &mut tail)?;
        tail.truncate(got);
        let n = tail.len();
        let at = if n >= END_LEN
            && &tail[n - END_LEN..n - END_LEN + 4] == END_SIG
            && tail[n - 2..] == [0, 0]
        {
            n - END_LEN
        } else {
            let at = tail
                .windows(4)
                .rposition(|w| w == END_SIG)
                .ok_or_else(not_zip)?;
            if at + END_LEN > n {
                return Err(not_zip());
            }
            at
        };
        let record = &tail[at..at + END_LEN];
        let comment_len = u16_at(record, 20) as usize;
        let comment = tail[at + END_LEN..n.min(at + END_LEN + comment_len)].to_vec();
        let location = tail_start + at as u64;
        let mut size_cd = u32_at(record, 12) as u64;
        let mut offset_cd = u32_at(record, 16) as u64;
        let mut zip64 = false;
        if location >= LOCATOR_LEN {
            reader.seek(SeekFrom::Start(location - LOCATOR_LEN))?;
            let mut locator = [0u8; LOCATOR_LEN as usize];
            if read_full(reader, &mut locator)? == locator.len() && &locator[..4] == LOCATOR_SIG {
                if u32_at(&locator, 4) != 0 || u32_at(&locator, 16) > 1 {
                    return Err(Error::Archive(crate::error::ArchiveError::InvalidArchive {
                        reason: "archives that span several disks are not supported".into(),
                    }));
                }
                if location >= LOCATOR_LEN + END64_LEN {
                    reader.seek(SeekFrom::Start(location - LOCATOR_LEN - END64_LEN))?;
                    let mut end64 = [0u8; END64_LEN as usize];
                    if read_full(reader, &mut end64)? == end64.len() && &end64[..4] == END64_SIG {
                        size_cd = u64_at(&end64, 40);
                        offset_cd = u64_at(&end64, 48);
                        zip64 = true;
                    }
                }
            }
        }
        // Data prepended to the archive shifts every offset by `concat`.
        let mut concat = location as i128 - size_cd as i128 - offset_cd as i128;
        if zip64 {
            concat -= (LOCATOR_LEN + END64_LEN) as i128;
        }
        let start_dir = offset_cd as i128 + concat;
        if start_dir < 0 {
            return Err(Error::Archive(crate::error::ArchiveError::InvalidArchive {
                reason: "the central directory's offset or size is impossible".into(),
            }));
        }
        let start_dir = start_dir as u64; // <= location, so it fits
        reader.seek(SeekFrom::Start(start_dir))?;
        // size_cd <= location <= len: the claim is bounded by the archive's
        // length. Up to 64 MiB (a million members) is asked for in one read
        // call, as for the tail; beyond, the buffer grows as bytes arrive.
        let mut cd = vec![0u8; size_cd.min(1 << 26) as usize];
        let got = read_full(reader, &mut cd)?;
        cd.truncate(got);
        if got as u64 == size_cd.min(1 << 26) && size_cd > got as u64 {
            read_full_vec(reader, &mut cd, (size_cd - got as u64) as usize)?;
        }
        let (entries, by_name) = parse_entries(&cd, size_cd, concat)?;
        let mut directory = Directory {
            entries,
            by_name,
            comment,
        };
        directory.set_end_offsets(start_dir);
        Ok(directory)
    }

    /// Python 3.12's overlap rule: sorted by local header offset, each entry
    /// must end where the next begins (the central directory for the
    /// last); of entries sharing an offset, only the first in directory
    /// order keeps a non-empty range.
    fn set_end_offsets(&mut self, start_dir: u64) {
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by_key(|&i| self.entries[i].header_offset.unwrap_or(u64::MAX));
        let mut end = start_dir;
        let mut i = order.len();
        while i > 0 {
            // The run of entries sharing one offset: the first of them (in
            // directory order) ends at `end`, the others where they start.
            let offset = self.entries[order[i - 1]].header_offset;
            let mut j = i - 1;
            while j > 0 && self.entries[order[j - 1]].header_offset == offset {
                j -= 1;
            }
            for (k, &index) in order[j..i].iter().enumerate() {
                let start = offset.unwrap_or(0);
                self.entries[index].end_offset = if k == 0 { end } else { start };
            }
            if let Some(offset) = offset {
                end = offset;
            }
            i = j;
        }
    }

    /// The entry NumPy reads for `name`: the member named exactly `name`,
    /// else the member `name.npy`.
    pub(crate) fn lookup(&self, name: &str) -> Option<usize> {
        if let Some(&i) = self.by_name.get(name) {
            return Some(i);
        }
        let mut with_suffix = String::with_capacity(name.len() + 4);
        with_suffix.push_str(name);
        with_suffix.push_str(".npy");
        self.by_name.get(&with_suffix).copied()
    }
}

type Parsed = (Vec<Entry>, HashMap<String, usize>);

/// Parses central directory entries until `size_cd` bytes are consumed.
fn parse_entries(cd: &[u8], size_cd: u64, concat: i128) -> Result<Parsed> {
    let invalid =
        |reason: String| Error::Archive(crate::error::ArchiveError::InvalidArchive { reason });
    let truncated = || invalid("the central directory is truncated".into());
    let mut entries = Vec::new();
    let mut by_name = HashMap::new();
    let mut pos = 0usize;
    while (pos as u64) < size_cd {
        let fixed = cd.get(pos..pos + CENTRAL_LEN).ok_or_else(truncated)?;
        if &fixed[..4] != CENTRAL_SIG {
            return Err(invalid(format!(
                "bad signature for central directory entry {}",
                entries.len()
            )));
        }
        let extract_version = fixed[6];
        let flags = u16_at(fixed, 8);
        let method = u16_at(fixed, 10);
        let crc = u32_at(fixed, 16);
        let mut compressed_size = u32_at(fixed, 20) as u64;
        let mut size = u32_at(fixed, 24) as u64;
        let name_len = u16_at(fixed, 28) as usize;
        let extra_len = u16_at(fixed, 30) as usize;
        let comment_len = u16_at(fixed, 32) as usize;
        let mut header_offset = u32_at(fixed, 42) as u64;
        let name_start = pos + CENTRAL_LEN;
        let raw_name = cd
            .get(name_start..name_start + name_len)
            .ok_or_else(truncated)?;
        let extra = cd
            .get(name_start + name_len..name_start + name_len + extra_len)
            .ok_or_else(truncated)?;
        let orig_name = decode_name(raw_name, flags).ok_or_else(|| {
            invalid(format!(
                "the name of central directory entry {} is not valid UTF-8 although its UTF-8 flag is set",
                entries.len()
            ))
        })?;
        if extract_version > MAX_EXTRACT_VERSION {
            return Err(invalid(format!(
                "member '{}' needs zip version {}.{}, newer than NumPy reads",
                crate::error::capped(&orig_name),
                extract_version / 10,
                extract_version % 10
            )));
        }
        decode_zip64(extra, &mut size, &mut compressed_size, &mut header_offset).map_err(
            |what| {
                invalid(format!(
                    "member '{}' has a corrupt extra field ({what})",
                    crate::error::capped(&orig_name)
                ))
            },
        )?;
        let name = match orig_name.find('\0') {
            Some(nul) => orig_name[..nul].to_owned(),
            None => orig_name.clone(),
        };
        let offset = header_offset as i128 + concat;
        by_name.insert(name.clone(), entries.len());
        entries.push(Entry {
            orig_name,
            name,
            flags,
            method,
            crc,
            compressed_size,
            size,
            header_offset: u64::try_from(offset).ok(),
            end_offset: 0,
            pieces: find_pieces(extra),
        });
        pos = name_start + name_len + extra_len + comment_len;
    }
    Ok((entries, by_name))
}

/// Python's `_decodeExtra`: walks the extra fields (a field running past
/// the end is corrupt) and takes the zip64 values for the fields that are
/// saturated. Every other field, 0x7075 included, is ignored.
fn decode_zip64(
    mut extra: &[u8],
    size: &mut u64,
    compressed_size: &mut u64,
    header_offset: &mut u64,
) -> std::result::Result<(), &'static str> {
    while extra.len() >= 4 {
        let tag = u16_at(extra, 0);
        let len = u16_at(extra, 2) as usize;
        if len + 4 > extra.len() {
            return Err("a field runs past the end");
        }
        if tag == 0x0001 {
            let mut data = &extra[4..4 + len];
            let mut take = |what| -> std::result::Result<u64, &'static str> {
                let value = data.get(..8).map(|b| u64_at(b, 0)).ok_or(what)?;
                data = &data[8..];
                Ok(value)
            };
            if *size == 0xFFFF_FFFF {
                *size = take("zip64 file size missing")?;
            }
            if *compressed_size == 0xFFFF_FFFF {
                *compressed_size = take("zip64 compressed size missing")?;
            }
            if *header_offset == 0xFFFF_FFFF {
                *header_offset = take("zip64 header offset missing")?;
            }
        }
        extra = &extra[4 + len..];
    }
    Ok(())
}

/// ndnpy's piece table among the extra fields (already checked to be
/// well-formed by `decode_zip64`).
fn find_pieces(mut extra: &[u8]) -> Option<Pieces> {
    while extra.len() >= 4 {
        let tag = u16_at(extra, 0);
        let len = u16_at(extra, 2) as usize;
        let data = extra.get(4..4 + len)?;
        if tag == BLOCKS_ID {
            return Pieces::decode(data);
        }
        extra = &extra[4 + len..];
    }
    None
}

/// Decodes a stored name: UTF-8 under flag bit 11 (`None` if invalid),
/// CP437 otherwise.
fn decode_name(raw: &[u8], flags: u16) -> Option<String> {
    if flags & FLAG_UTF8 != 0 {
        return String::from_utf8(raw.to_vec()).ok();
    }
    if raw.is_ascii() {
        // CP437 agrees with ASCII on its lower half.
        return Some(String::from_utf8(raw.to_vec()).expect("ASCII is UTF-8"));
    }
    Some(
        raw.iter()
            .map(|&b| match b {
                0..=127 => b as char,
                _ => CP437_HIGH[b as usize - 128],
            })
            .collect(),
    )
}

/// CP437's upper half (bytes 128..=255).
const CP437_HIGH: [char; 128] = [
    'Ç', 'ü', 'é', 'â', 'ä', 'à', 'å', 'ç', 'ê', 'ë', 'è', 'ï', 'î', 'ì', 'Ä', 'Å', 'É', 'æ', 'Æ',
    'ô', 'ö', 'ò', 'û', 'ù', 'ÿ', 'Ö', 'Ü', '¢', '£', '¥', '₧', 'ƒ', 'á', 'í', 'ó', 'ú', 'ñ', 'Ñ',
    'ª', 'º', '¿', '⌐', '¬', '½', '¼', '¡', '«', '»', '░', '▒', '▓', '│', '┤', '╡', '╢', '╖', '╕',
    '╣', '║', '╗', '╝', '╜', '╛', '┐', '└', '┴', '┬', '├', '─', '┼', '╞', '╟', '╚', '╔', '╩', '╦',
    '╠', '═', '╬', '╧', '╨', '╤', '╥', '╙', '╘', '╒', '╓', '╫', '╪', '┘', '┌', '█', '▄', '▌', '▐',
    '▀', 'α', 'ß', 'Γ', 'π', 'Σ', 'σ', 'µ', 'τ', 'Φ', 'Θ', 'Ω', 'δ', '∞', 'φ', 'ε', '∩', '≡', '±',
    '≥', '≤', '⌠', '⌡', '÷', '≈', '°', '∙', '·', '√', 'ⁿ', '²', '■', '\u{a0}',
];

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn read_exact_or<R: Read + ?Sized>(
    reader: &mut R,
    buf: &mut [u8],
    err: impl FnOnce() -> Error,
) -> Result<()> {
    if read_full(reader, buf)? < buf.len() {
        return Err(err());
    }
    Ok(())
}
