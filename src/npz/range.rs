//! [`NpzReader::read_range`]: rows of a member without reading it whole.
//!
//! A row range is one byte range of the member's `.npy` bytes (rows lie
//! contiguously along the growth axis, `npy/growth.rs`), and the member's
//! codec says how it gives them (`codec/range.rs`): stored members are
//! read there directly; ndnpy's compressed members (deflate and Zstandard)
//! from the pieces or segments that hold the rows (their table); any other
//! deflated member from the nearest checkpoint of its seek index
//! (`seek/`), which is built on the way by the first reads and kept for
//! the reader's life (here, since it outlives a read); members of other
//! methods are decoded from their start.

use super::codec::range::Answer;
use super::codec::{self, Plan, Rows};
use super::reader::NpzReader;
use super::seek::{Failure, MemberKey, SeekIndex};
use super::{in_member, member_io_error};
use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::format::header::{self, Header};
use crate::io::source::Source;
use crate::npy::growth;
use ndarray::{Array, Dimension};
use std::io::{self, Read, Seek};
use std::ops::{Bound, RangeBounds};

impl<R: Read + Seek> NpzReader<R> {
    /// Reads the rows `rows` of member `name`'s growth axis (axis 0 for C
    /// order, the last axis for Fortran order), as
    /// [`crate::NpyFile::read_range`] does for a file: an array of the
    /// member's shape with that axis cut to the range, in the member's
    /// order.
    ///
    /// Only the bytes around the rows are read and decompressed:
    ///
    /// - a stored member (`np.savez`): exactly the rows' bytes;
    /// - a member ndnpy compressed: the pieces holding the rows (1 MiB
    ///   each for deflate; for Zstandard its segments, 2 MiB each by
    ///   default, each decoded alone only when it provably decodes as in
    ///   the frame and to exactly the size its table declares, else the
    ///   member is decoded from its start);
    /// - any other deflated member (`np.savez_compressed`): from the
    ///   nearest checkpoint of the member's *seek index* before the first
    ///   row: a block boundary of the deflate stream with the 32 KiB of
    ///   output before it, one every 4 MiB of output or so. The index is
    ///   built by the reads themselves: a read past its last checkpoint
    ///   decodes on from there, adding checkpoints (so the first read from
    ///   the middle of a member costs decoding up to it once, and later
    ///   ones at most 4 MiB and a block). The index is kept for the
    ///   reader's life: about 0.8 % of the member's size in memory; the
    ///   decoding itself takes about 8.5 MiB (its window, 4 MiB of output
    ///   between slides, 256 KiB of input) besides the rows. It can be
    ///   kept on disk between readers: [`NpzReader::use_index_sidecar`];
    /// - members of other compression methods: decoded from their start.
    ///
    /// What is checked: the member's CRC-32 covers all of its bytes, so
    ///
    /// - a range of **all** the rows is checked as [`NpzReader::read`]
    ///   checks it, on every path (stored, pieces, seek index, sidecar,
    ///   other methods): all of the member is read and decoded, and a
    ///   mismatch is [`crate::error::ArchiveError::BadCrc`];
    /// - a range of **some** rows cannot be checked against it: the rows
    ///   come from decoding the bytes that hold them, and a changed byte
    ///   there (bit rot, an edited file) can give changed values without an
    ///   error (deflate and stored data have no check of their own). What
    ///   is checked is that the compressed data decodes (corrupt data is
    ///   [`crate::error::ArchiveError::CorruptMember`]), that it does not decode past the
    ///   declared size, and that a place a saved sidecar says to start from
    ///   still lies on the archive's bytes (its CRC-32, else the index is
    ///   rebuilt from the member's start). A read that decodes on to the
    ///   member's end (building the seek index there, or a member of
    ///   another method decoded from its start) checks the CRC-32 then.
    ///
    /// A range reads the same bytes a whole read would: a range of some
    /// rows gives the values a whole read gives, or an error, unless the
    /// archive's bytes are damaged where the CRC-32 alone could tell.
    ///
    /// Errors as [`crate::NpyFile::read_range`]: a range beyond the axis
    /// is [`crate::error::RowsError::RangeOutOfBounds`], a 0-d member has no rows
    /// ([`crate::error::RowsError::NoGrowthAxis`]), object arrays are refused
    /// ([`Error::UnsupportedDType`]); and as [`NpzReader::read`].
    ///
    /// ```
    /// use ndarray::{s, Array2, Ix2};
    /// use ndnpy::{NpzReader, NpzWriter};
    /// use std::io::Cursor;
    ///
    /// let a = Array2::from_shape_fn((10_000, 4), |(i, j)| (i * 4 + j) as f32);
    /// let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    /// w.add("a", &a)?;
    /// let mut npz = NpzReader::new(w.finish_into_inner()?)?;
    /// let rows = npz.read_range::<f32, Ix2>("a", 5000..5010)?;
    /// assert_eq!(rows, a.slice(s![5000..5010, ..]));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn read_range<T: Element, D: Dimension>(
        &mut self,
        name: &str,
        rows: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        let index = self.index(name)?;
        let key = self.directory.entries[index].key().to_owned();
        let options = self.options;
        let (header, offset) = self.with_member(index, Plan::Head, |member, _, _| {
            header::read_preamble(member, &options)
        })?;
        let (sub, rows) = range_of(&header, offset as u64, rows)?;
        crate::array::decode::check_header::<T, D>(&sub)?;
        let bytes = self
            .member_bytes(index, rows)
            .map_err(|e| in_member(&key, e))?;
        crate::npy::read::read_array_with(&sub, &mut Source::slice(&bytes), &options)
            .map_err(|e| in_member(&key, e))
    }

    /// The bytes `rows` asks of member `index` (within its declared size);
    /// with `rows.all` (the range holds every row), all of the member is
    /// read and checked against its CRC-32, as a whole read checks it, on
    /// every path.
    fn member_bytes(&mut self, index: usize, rows: Rows) -> Result<Vec<u8>> {
        let Rows { start, end, all } = rows;
        let entry = &self.directory.entries[index];
        entry.check_supported()?;
        if end > entry.size {
            return Err(Error::Data(crate::error::DataError::TruncatedData {
                expected: end,
                found: entry.size,
            }));
        }
        if start == end && !all {
            return Ok(Vec::new());
        }
        let data_start = entry.data_start(&mut self.input, self.archive_len)?;
        let (size, crc, name) = (entry.size, entry.crc, entry.key().to_owned());
        let answer = codec::range::range(entry, &mut self.input, data_start, rows)?;
        let entry = &self.directory.entries[index];
        match answer {
            Answer::Bytes(mut bytes) => {
                // The rows out of the whole member, once its CRC-32 matched.
                if all {
                    if crc32fast::hash(&bytes) != crc {
                        return Err(Error::Archive(crate::error::ArchiveError::BadCrc { name }));
                    }
                    bytes.truncate(end as usize);
                    bytes.drain(..start as usize);
                }
                return Ok(bytes);
            }
            Answer::FromStart => {
                // Read to the member's end for all the rows: the member
                // reader checks the CRC-32 itself.
                let bytes = self.decoded_from_start(index, Plan::Range(rows), size)?;
                return Ok(match all {
                    true => bytes[start as usize..end as usize].to_vec(),
                    false => bytes,
                });
            }
            Answer::SeekIndex => {}
        }
        let key = MemberKey {
            data_start,
            compressed: entry.compressed_size,
            size: entry.size,
            crc: entry.crc,
        };
        self.load_sidecar(index, key);
        let NpzReader { input, indexes, .. } = self;
        let seek = indexes.entry(index).or_insert_with(|| SeekIndex::new(key));
        if seek.key != key {
            *seek = SeekIndex::new(key);
        }
        let (before, was_complete) = (seek.checkpoints.len(), seek.complete);
        // With `all`, decoded from the start and checked whatever the
        // index holds (it may have come from a sidecar).
        let result = seek.read(start, end, all, input, data_start);
        let grew = seek.checkpoints.len() != before || seek.complete != was_complete;
        let name = self.directory.entries[index].key().to_owned();
        let bytes = result.map_err(|f| match f {
            Failure::BadCrc => {
                Error::Archive(crate::error::ArchiveError::BadCrc { name: name.clone() })
            }
            Failure::Io(e) => member_io_error(&name, e),
        })?;
        if let Some(sidecar) = &mut self.sidecar {
            sidecar.dirty |= grew || before == 1;
        }
        self.save_sidecar();
        Ok(bytes)
    }

    /// The bytes `rows` asks of a member decoded from its start (its codec
    /// cannot start elsewhere): all of the member for `rows.all`, read to
    /// its end, so that the member reader checks its CRC-32.
    fn decoded_from_start(&mut self, index: usize, plan: Plan, size: u64) -> Result<Vec<u8>> {
        let (start, end) = match plan {
            Plan::Range(rows) if !rows.all => (rows.start, rows.end),
            _ => (0, size),
        };
        self.with_member(index, plan, |member, _, _| {
            let skipped = io::copy(&mut (&mut *member).take(start), &mut io::sink())?;
            let mut out = Vec::new();
            member.take(end - start).read_to_end(&mut out)?;
            if skipped < start || (out.len() as u64) < end - start {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the member's data ends before the rows",
                )
                .into());
            }
            Ok(out)
        })
    }
}

/// The header of rows `rows` of the member `header` describes (its data
/// at byte `offset`), and their bytes in the member.
fn range_of(header: &Header, offset: u64, rows: impl RangeBounds<usize>) -> Result<(Header, Rows)> {
    growth::check_fixed_rows(header)?;
    let axis = growth::axis(&header.shape, header.fortran_order)?;
    let len = header.shape[axis];
    let start = match rows.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match rows.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::Rows(crate::error::RowsError::RangeOutOfBounds {
            start,
            end,
            len,
        }));
    }
    header.data_len()?;
    let row = growth::row_bytes(header, axis)?;
    // Within a data length that fits (checked above): no overflow.
    Ok((
        growth::with_len(header, axis, end - start),
        Rows {
            start: offset + start as u64 * row,
            end: offset + end as u64 * row,
            all: start == 0 && end == len,
        },
    ))
}
