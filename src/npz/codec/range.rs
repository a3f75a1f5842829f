//! Ranges as a codec capability: how the bytes of some rows of a member
//! are had without decoding all of it ([`crate::NpzReader::read_range`]).
//! Each method answers from what it knows of its member: stored bytes are
//! sought; deflate answers from its piece table (`deflate/`), or names the
//! seek index the archive reader keeps for the member; Zstandard from its
//! segment table (`zstd/`); the others (bzip2, LZMA, and any member whose
//! codec cannot start inside it) are decoded from their start by the member
//! reader. The pieces and segments share one walk, `parallel.rs`'s
//! `range_in_pieces`.

pub(crate) use super::decode::Answer;
use super::decode::Rows;
use crate::npz::zip::directory::{Entry, DEFLATED, STORED};
use std::io::{self, Read, Seek, SeekFrom};

/// How member `entry` (its data at `data_start` of `input`, its method
/// checked) gives the bytes `rows` asks.
pub(crate) fn range<I: Read + Seek>(
    entry: &Entry,
    input: &mut I,
    data_start: u64,
    rows: Rows,
) -> io::Result<Answer> {
    // What is read: the rows, or all of the member to check it.
    let (from, to) = match rows.all {
        true => (0, entry.size),
        false => (rows.start, rows.end),
    };
    if entry.method == STORED && entry.size == entry.compressed_size {
        // Inside the archive (`data_start` checked): the bytes exist.
        input.seek(SeekFrom::Start(data_start + from))?;
        let mut out = vec![0u8; (to - from) as usize];
        input.read_exact(&mut out)?;
        return Ok(Answer::Bytes(out));
    }
    match entry.method {
        DEFLATED => super::deflate::range(entry, input, data_start, from, to),
        // All the rows: the standard decoder, in one stream, checked.
        #[cfg(feature = "zstd")]
        crate::npz::zip::method::ZSTD if !rows.all => Ok(
            match super::zstd::range(entry, input, data_start, from, to)? {
                Some(bytes) => Answer::Bytes(bytes),
                None => Answer::FromStart,
            },
        ),
        _ => Ok(Answer::FromStart),
    }
}
