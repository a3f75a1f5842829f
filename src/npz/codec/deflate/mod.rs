//! Deflate (method 8), what `np.savez_compressed` writes: streamed through
//! one reusable `flate2` state per archive reader, inflated whole by
//! libdeflate (`inflate.rs`), on every core for members ndnpy wrote (their
//! piece table), and read a few pieces ahead when too large to hold
//! (`ahead.rs`). A row range is answered from the piece table, or else by
//! the member's seek index (`seek/`, which the archive reader keeps).
//!
//! This folder holds the deflate part whole: `inflate_core/`, the one
//! hand-written decoder (bit reader, Huffman tables, a block decoder that
//! starts at any boundary); `pinflate/`, one stream on every core on it;
//! `inflate.rs`, libdeflate for whole members and pieces; `ahead.rs`,
//! pieces read ahead; `compress.rs`, the writer's parallel deflate.

pub(crate) mod ahead;
pub(crate) mod compress;
pub(crate) mod inflate;
pub(crate) mod inflate_core;
pub(crate) mod pinflate;

use super::decode::{Answer, Decode, Plan, Raw};
use super::parallel::range_in_pieces;
use super::whole::{decode_whole, read_member, Whole, WholeCodec};
use crate::npz::zip::directory::Entry;
use crate::npz::zip::input::FileAt;
use crate::npz::zip::pieces::Pieces;
use ahead::Ahead;
use inflate::{inflate_pieces, DeflatePieces, MAX_RATIO};
use std::io::{self, BufRead, Read, Seek};
use std::mem::MaybeUninit;
use std::ops::Range;

/// Bytes `from..to` of deflated member `entry` (its data at `data_start`
/// of `input`): from the pieces that hold them when ndnpy wrote it (its
/// piece table), else from the nearest checkpoint of its seek index.
pub(crate) fn range<I: Read + Seek>(
    entry: &Entry,
    input: &mut I,
    data_start: u64,
    from: u64,
    to: u64,
) -> io::Result<Answer> {
    let pieces = entry
        .pieces
        .as_ref()
        .filter(|p| p.fits(entry.size, entry.compressed_size));
    let Some(pieces) = pieces else {
        return Ok(Answer::SeekIndex);
    };
    let codec = &DeflatePieces;
    range_in_pieces(
        codec, input, data_start, pieces, entry.size, MAX_RATIO, from, to,
    )
    .map(Answer::Bytes)
}

/// The decoder of deflated member `entry`: whole when it pays and is at
/// most `plan`'s bound, read ahead on every core when ndnpy wrote it and
/// it is larger, streamed otherwise (and always for [`Plan::Head`] and [`Plan::Range`]).
pub(crate) fn open<'a, R: BufRead + 'a>(
    entry: &Entry,
    raw: Raw<'a, R>,
    inflater: &'a mut flate2::Decompress,
    plan: Plan,
    at: Option<FileAt>,
) -> Box<dyn Decode + 'a> {
    let Plan::Whole(limit) = plan else {
        inflater.reset(false);
        return Box::new(Inflate { raw, inflater });
    };
    let pieces = entry
        .pieces
        .clone()
        .filter(|p| p.fits(entry.size, entry.compressed_size));
    if decode_whole(entry.size, entry.compressed_size, limit, MAX_RATIO) {
        let whole = Whole::new(raw, pieces, entry.size, entry.compressed_size, Deflate).at(at);
        return Box::new(whole);
    }
    if let Some(pieces) = pieces.filter(|p| ahead::suits(p, entry.size)) {
        let threads = crate::exec::cores();
        return Box::new(ReadAhead(Ahead::new(raw, pieces, entry.size, threads)));
    }
    inflater.reset(false);
    Box::new(Inflate { raw, inflater })
}

/// Deflate's whole-member decoding: libdeflate, on every core with a piece
/// table.
pub(crate) struct Deflate;

// SAFETY: `inflate_pieces` returns `Ok` only after every piece decoded
// into its part of `out`, which covers all of it (it checks that `out` is
// exactly the pieces' bytes).
unsafe impl WholeCodec for Deflate {
    fn pieces(
        &self,
        input: &mut dyn Read,
        pieces: &Pieces,
        which: Range<usize>,
        out: &mut [MaybeUninit<u8>],
        threads: usize,
    ) -> io::Result<crc32fast::Hasher> {
        inflate_pieces(input, pieces, which, out, threads)
    }

    fn whole(&self, compressed: &[u8], size: usize) -> io::Result<(Vec<u8>, u32)> {
        inflate::inflate(compressed, size)
    }

    fn straight_into(&self, compressed: usize, size: usize) -> bool {
        // On every core (`pinflate`) or, on one, with libdeflate: either
        // way straight into the array, not into a buffer then copied.
        pinflate::large(compressed, size)
    }

    fn whole_into(&self, compressed: &[u8], out: &mut [u8]) -> io::Result<u32> {
        let threads = pinflate::threads_for(compressed.len(), out.len());
        inflate_into(compressed, out, threads)
    }

    fn reads_windows(&self, compressed: usize, size: usize) -> bool {
        pinflate::threads_for(compressed, size).is_some()
    }

    fn whole_into_at(&self, at: &FileAt, len: usize, out: &mut [u8]) -> io::Result<u32> {
        match pinflate::threads_for(len, out.len()) {
            Some(threads) => {
                let input = pinflate::Input::File {
                    file: &at.file,
                    start: at.start,
                    len: len as u64,
                };
                pinflate::inflate_parallel_into(&input, out, threads)
            }
            // Other work took the cores meanwhile: libdeflate, which needs
            // the whole member in memory.
            None => inflate_into(&read_member(at, len)?, out, None),
        }
    }

    fn head(&self, compressed: &[u8], len: usize) -> io::Result<Vec<u8>> {
        let mut head = vec![0; len];
        let mut inflater = flate2::Decompress::new(false);
        inflater
            .decompress(compressed, &mut head, flate2::FlushDecompress::None)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        // Fewer bytes if the stream ends (or is cut short) first: the
        // whole stream's decoding reports that.
        head.truncate(inflater.total_out() as usize);
        Ok(head)
    }
}

/// Inflates the whole stream `compressed` into exactly `out` on `threads`
/// threads (`pinflate`), or, for `None` (one core, or other work holds
/// the others), on this one with libdeflate; gives the CRC-32.
fn inflate_into(compressed: &[u8], out: &mut [u8], threads: Option<usize>) -> io::Result<u32> {
    match threads {
        Some(threads) => {
            pinflate::inflate_parallel_into(&pinflate::Input::Bytes(compressed), out, threads)
        }
        None => {
            inflate::inflate_piece(compressed, out)?;
            Ok(crc32fast::hash(out))
        }
    }
}

/// A member too large to inflate whole, in pieces ndnpy wrote: inflated a
/// few pieces ahead on every core, its CRC-32 computed on the way.
struct ReadAhead<'a, R: BufRead>(Ahead<Raw<'a, R>>);

// SAFETY: `fill_whole` is the trait's own, which never succeeds.
unsafe impl<R: BufRead> Decode for ReadAhead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        self.0.read(buf)
    }

    fn checks_crc(&self) -> bool {
        true
    }
}

/// A deflated member streamed on this thread through the archive reader's
/// inflater.
struct Inflate<'a, R: BufRead> {
    raw: Raw<'a, R>,
    inflater: &'a mut flate2::Decompress,
}

// SAFETY: `fill_whole` is the trait's own, which never succeeds.
unsafe impl<R: BufRead> Decode for Inflate<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        Ok((inflate_stream(&mut self.raw, self.inflater, buf)?, None))
    }
}

/// Inflates from `input` into `out` as `flate2`'s buffered decoder does:
/// at least one byte unless the stream has ended or is cut short (0), or is
/// broken (an `InvalidInput` error).
fn inflate_stream<R: BufRead>(
    input: &mut R,
    inflater: &mut flate2::Decompress,
    out: &mut [u8],
) -> io::Result<usize> {
    loop {
        let (consumed, produced, status, eof) = {
            let chunk = input.fill_buf()?;
            let eof = chunk.is_empty();
            let (in_before, out_before) = (inflater.total_in(), inflater.total_out());
            let flush = if eof {
                flate2::FlushDecompress::Finish
            } else {
                flate2::FlushDecompress::None
            };
            let status = inflater
                .decompress(chunk, out, flush)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            (
                (inflater.total_in() - in_before) as usize,
                (inflater.total_out() - out_before) as usize,
                status,
                eof,
            )
        };
        input.consume(consumed);
        match status {
            flate2::Status::StreamEnd => return Ok(produced),
            _ if produced > 0 => return Ok(produced),
            // No progress on the last input: the stream is cut short, which
            // the member reader reports with the sizes.
            _ if eof && consumed == 0 => return Ok(0),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_and_several_inflate_into_the_array_alike() {
        // A stream as zlib writes it (one raw stream, no piece table), of
        // a few MiB: both ways give the bytes and their CRC-32, and a
        // stream cut short or a wrong size is an error either way.
        let data: Vec<u8> = (0..6_000_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> (i % 23)) as u8)
            .collect();
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        io::Write::write_all(&mut z, &data).unwrap();
        let compressed = z.finish().unwrap();
        for threads in [None, Some(1), Some(2)] {
            let mut out = vec![0xAA; data.len()];
            let crc = inflate_into(&compressed, &mut out, threads).unwrap();
            assert_eq!(crc, crc32fast::hash(&data), "{threads:?}");
            assert!(out == data, "{threads:?}");
            let cut = &compressed[..compressed.len() / 2];
            assert!(inflate_into(cut, &mut out, threads).is_err(), "{threads:?}");
            let mut short = vec![0; data.len() - 1];
            assert!(inflate_into(&compressed, &mut short, threads).is_err());
            let mut long = vec![0; data.len() + 1];
            assert!(inflate_into(&compressed, &mut long, threads).is_err());
        }
    }
}
