//! Reading one member's bytes: at most its declared size, inflated when
//! deflated (one reusable `flate2` state per archive reader), its CRC-32
//! checked at the end as Python's `zipfile` checks it.

use super::ahead::Ahead;
use super::directory::{Entry, DEFLATED};
use super::inflate::{self as whole, inflate_pieces, inflate_whole, Pieces};
use crate::error::Error;
use crate::io::source::{fill_zeroed, SizedRead};
use std::io::{self, BufRead, Read};
use std::mem::MaybeUninit;

/// A member's uncompressed bytes: at most its declared size, decompressed
/// if deflated, with the CRC-32 checked once all of them have been read (as
/// Python's `ZipExtFile` does). A CRC mismatch is an `io::Error` carrying
/// the crate's typed [`Error::BadCrc`] (which `From<io::Error>` takes back
/// out). Data that ends before the declared size just ends: the array
/// readers then report the array's own truncation, and the public member
/// reader ([`crate::NpzMemberReader`]) an [`Error::CorruptMember`].
pub(crate) struct MemberReader<'a, R: BufRead> {
    body: Body<'a, R>,
    left: u64,
    crc: crc32fast::Hasher,
    expected_crc: u32,
    name: String,
}

impl<R: BufRead> MemberReader<'_, R> {
    /// Bytes of the declared size not read yet.
    pub(crate) fn left(&self) -> u64 {
        self.left
    }

    /// The member's name, for errors.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Whether the member is inflated whole: then its bytes are all in
    /// memory at its declared size (or reading them fails), so that size
    /// can size one allocation.
    pub(crate) fn whole(&self) -> bool {
        matches!(self.body, Body::Whole(_))
    }
}

enum Body<'a, R: BufRead> {
    Stored(io::Take<&'a mut R>),
    Deflated(io::Take<&'a mut R>, &'a mut flate2::Decompress),
    /// Inflated whole at the first read (`inflate.rs`), then served from
    /// memory.
    Whole(Whole<'a, R>),
    /// Too large to inflate whole, but in pieces ndnpy wrote: inflated a
    /// few pieces ahead on every core (`ahead.rs`).
    Ahead(Box<Ahead<io::Take<&'a mut R>>>),
}

/// A member to inflate whole: its compressed bytes still in the archive,
/// then (with a piece table) its first piece inflated, then its bytes.
enum Whole<'a, R: BufRead> {
    Pending(io::Take<&'a mut R>, Option<Pieces>, u64),
    Head(Box<Head<'a, R>>),
    Ready(io::Cursor<Vec<u8>>),
    /// A read failed (corrupt data, a CRC mismatch): every later read
    /// fails too, rather than giving bytes that were not checked.
    Failed,
}

/// A member with a piece table whose first piece (the `.npy` header and
/// the data's first bytes) is inflated and being read; the other pieces
/// wait, compressed, for a destination: the array itself when the reader
/// asks for all the data at once ([`SizedRead::fill_whole`]), else a
/// buffer of their own.
struct Head<'a, R: BufRead> {
    raw: io::Take<&'a mut R>,
    pieces: Pieces,
    first: io::Cursor<Vec<u8>>,
    crc: crc32fast::Hasher,
    size: u64,
}

impl<'a, R: BufRead> MemberReader<'a, R> {
    /// Reads `entry`'s data from `reader`, positioned at its start,
    /// inflating with `inflater` (reset here; one per archive reader, so
    /// that reading many small members does not allocate an inflater's
    /// window each: those allocations, interleaved with the caller's,
    /// fragmented the heap by about 30 KB a member).
    ///
    /// A deflated member of up to `whole` bytes (and not too small to pay)
    /// is inflated in one go at the first read (`inflate::inflate_whole`),
    /// on every core when ndnpy wrote it; the streaming member reader
    /// passes a smaller bound than the array readers, which hold the array
    /// anyway.
    pub(crate) fn new(
        entry: &Entry,
        reader: &'a mut R,
        inflater: &'a mut flate2::Decompress,
        whole: u64,
    ) -> Self {
        let pieces = entry
            .pieces
            .clone()
            .filter(|p| entry.method == DEFLATED && p.fits(entry.size, entry.compressed_size));
        let body = if entry.method == DEFLATED
            && inflate_whole(entry.size, entry.compressed_size, whole)
        {
            let raw = reader.take(entry.compressed_size);
            Body::Whole(Whole::Pending(raw, pieces, entry.size))
        } else if let Some(pieces) = pieces.filter(|p| super::ahead::suits(p, entry.size)) {
            let raw = reader.take(entry.compressed_size);
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            Body::Ahead(Box::new(Ahead::new(raw, pieces, entry.size, threads)))
        } else {
            return Self::head(entry, reader, inflater);
        };
        Self::with_body(entry, body)
    }

    /// Reads `entry`'s data as [`MemberReader::new`] does, for a reader
    /// that wants its first bytes only (the `.npy` header): streamed on
    /// this thread, never inflated whole nor read ahead, so that the peek
    /// costs about the bytes it looks at, not the first pieces of the
    /// member.
    pub(crate) fn head(
        entry: &Entry,
        reader: &'a mut R,
        inflater: &'a mut flate2::Decompress,
    ) -> Self {
        let raw = reader.take(entry.compressed_size);
        let body = if entry.method == DEFLATED {
            inflater.reset(false);
            Body::Deflated(raw, inflater)
        } else {
            Body::Stored(raw)
        };
        Self::with_body(entry, body)
    }

    fn with_body(entry: &Entry, body: Body<'a, R>) -> Self {
        MemberReader {
            body,
            left: entry.size,
            crc: crc32fast::Hasher::new(),
            expected_crc: entry.crc,
            name: entry.key().to_owned(),
        }
    }
}

impl<R: BufRead> Read for MemberReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 || buf.is_empty() {
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let buf = &mut buf[..want];
        let n = match &mut self.body {
            Body::Stored(r) => r.read(buf)?,
            Body::Deflated(r, inflater) => inflate(r, inflater, buf)?,
            Body::Whole(_) | Body::Ahead(_) => {
                // Inflated whole, or a piece at a time, with the CRC
                // computed on the way (in parallel): checked once all of
                // it is known, not byte by byte.
                let result = match &mut self.body {
                    Body::Whole(whole) => whole.read(buf),
                    Body::Ahead(ahead) => ahead.read(buf),
                    _ => unreachable!("matched above"),
                };
                let result = result.and_then(|(n, crc)| {
                    if crc.is_some_and(|crc| crc != self.expected_crc) {
                        return Err(bad_crc(&self.name));
                    }
                    crate::io::checked::checked_read_count(n, want)
                });
                return match result {
                    Ok(n) => {
                        self.left -= n as u64;
                        Ok(n)
                    }
                    Err(e) => {
                        // Never the bytes of a failed member afterwards.
                        self.body = Body::Whole(Whole::Failed);
                        Err(e)
                    }
                };
            }
        };
        let n = crate::io::checked::checked_read_count(n, want)?;
        if n == 0 {
            return Ok(0);
        }
        self.crc.update(&buf[..n]);
        self.left -= n as u64;
        if self.left == 0 && self.crc.clone().finalize() != self.expected_crc {
            return Err(bad_crc(&self.name));
        }
        Ok(n)
    }
}

/// The error of a member whose bytes do not match its CRC-32.
fn bad_crc(name: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        Error::BadCrc {
            name: name.to_owned(),
        },
    )
}

impl<R: BufRead> Whole<'_, R> {
    /// Reads on, inflating the member first (its first piece only, when
    /// it has a piece table); gives its CRC-32 once all of it is inflated.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        let mut crc = None;
        if let Whole::Pending(raw, pieces, size) = self {
            // The compressed bytes lie inside the archive (the directory
            // checked), and the size is at most deflate's largest expansion
            // of them (`inflate_whole`).
            let size = *size;
            match pieces.take() {
                // More than one piece (the guard), so more than a block;
                // `fits` checked that the pieces add up to the compressed
                // size.
                Some(pieces) if pieces.lengths.len() > 1 => {
                    let (first, crc) = inflated(pieces.block as usize, |out| {
                        inflate_pieces(raw, &pieces, 0..1, out, 1)
                    })?;
                    let Whole::Pending(raw, ..) =
                        std::mem::replace(self, Whole::Ready(Default::default()))
                    else {
                        unreachable!("pending above");
                    };
                    *self = Whole::Head(Box::new(Head {
                        raw,
                        pieces,
                        first: io::Cursor::new(first),
                        crc,
                        size,
                    }));
                }
                _ => {
                    // One allocation of the compressed size, not doublings.
                    // The compressed size lies inside the archive; still an
                    // error, not an abort, if memory cannot hold it.
                    let mut compressed = Vec::new();
                    compressed
                        .try_reserve_exact(usize::try_from(raw.limit()).unwrap_or(usize::MAX))
                        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
                    raw.read_to_end(&mut compressed)?;
                    let (bytes, sum) = whole::inflate(&compressed, size as usize)?;
                    crc = Some(sum);
                    *self = Whole::Ready(io::Cursor::new(bytes));
                }
            }
        }
        if let Whole::Head(head) = self {
            if head.first_left() > 0 {
                return Ok((head.first.read(buf)?, None));
            }
            // Read on in pieces: the rest goes to a buffer of its own.
            let len = (head.size - head.pieces.block as u64) as usize;
            let (rest, sum) = inflated(len, |out| head.inflate_rest(out))?;
            crc = Some(sum);
            *self = Whole::Ready(io::Cursor::new(rest));
        }
        match self {
            Whole::Ready(cursor) => Ok((cursor.read(buf)?, crc)),
            Whole::Failed => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "an earlier read of this member failed",
            )),
            _ => unreachable!("inflated above"),
        }
    }
}

impl<R: BufRead> Head<'_, R> {
    /// Bytes of the first piece not read yet.
    fn first_left(&self) -> usize {
        self.first.get_ref().len() - self.first.position() as usize
    }

    /// Inflates the pieces after the first into `rest` (exactly their
    /// bytes) on every core; gives the member's CRC-32.
    fn inflate_rest(&mut self, rest: &mut [MaybeUninit<u8>]) -> io::Result<u32> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let count = self.pieces.lengths.len();
        let tail = inflate_pieces(&mut self.raw, &self.pieces, 1..count, rest, threads)?;
        let mut crc = self.crc.clone();
        crc.combine(&tail);
        Ok(crc.finalize())
    }

    /// Fills `dst`, exactly the bytes left, with what is left of the first
    /// piece and then the other pieces, inflated straight into it; gives
    /// the member's CRC-32.
    fn fill(&mut self, dst: &mut [MaybeUninit<u8>]) -> io::Result<u32> {
        let (head, rest) = dst.split_at_mut(self.first_left());
        head.fill(MaybeUninit::new(0));
        // SAFETY: every byte of `head` was just initialised to zero;
        // `MaybeUninit<u8>` has the layout of `u8`.
        let head: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(head.as_mut_ptr().cast(), head.len()) };
        self.first.read_exact(head)?;
        self.inflate_rest(rest)
    }
}

/// A buffer of `len` bytes filled by `fill` (which initialises all of it
/// on success, as [`inflate_pieces`] does), and what `fill` gave.
fn inflated<X>(
    len: usize,
    fill: impl FnOnce(&mut [MaybeUninit<u8>]) -> io::Result<X>,
) -> io::Result<(Vec<u8>, X)> {
    let mut out = Vec::new();
    out.try_reserve_exact(len)
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    let x = fill(&mut out.spare_capacity_mut()[..len])?;
    // SAFETY: `fill` succeeded, so it initialised all `len` bytes.
    unsafe { out.set_len(len) };
    Ok((out, x))
}

// SAFETY: `fill_whole` either falls back to `fill_zeroed` (zeroes before
// reading, counts checked), or inflates through `Head::fill`, which zeroes
// the first part before copying into it and returns only after
// `inflate_pieces` initialised every byte of the rest; it returns
// `dst.len()` only then.
unsafe impl<R: BufRead> SizedRead for MemberReader<'_, R> {
    fn fills_whole(&self, len: u64) -> bool {
        len == self.left && matches!(self.body, Body::Whole(Whole::Head(_)))
    }

    fn fill_whole(&mut self, dst: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        if !self.fills_whole(dst.len() as u64) {
            return fill_zeroed(self, dst);
        }
        let Body::Whole(whole) = &mut self.body else {
            unreachable!("checked by fills_whole");
        };
        let Whole::Head(head) = whole else {
            unreachable!("checked by fills_whole");
        };
        let result = head.fill(dst);
        // Whatever happened, the first piece is used up: later reads give
        // nothing, or the error again.
        *whole = Whole::Failed;
        if result? != self.expected_crc {
            return Err(bad_crc(&self.name));
        }
        *whole = Whole::Ready(io::Cursor::new(Vec::new()));
        self.left = 0;
        Ok(dst.len())
    }
}

/// Inflates from `input` into `out` as `flate2`'s buffered decoder does:
/// at least one byte unless the stream has ended or is cut short (0), or is
/// broken (an `InvalidInput` error).
fn inflate<R: BufRead>(
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
    use crate::npz::directory::Directory;
    use std::io::{Cursor, Seek, SeekFrom};

    /// An archive of ndnpy's with one compressed member of six pieces, its
    /// directory, and the member's `.npy` bytes.
    fn archive() -> (Vec<u8>, Directory, Vec<u8>) {
        let a = ndarray::Array1::from_iter((0..700_000u64).map(|i| i * i % 1_000_003));
        // 5.6 MB: more than the 4 MiB a member needs to be read ahead.
        let npy = crate::WriteNpy::to_npy_bytes(&a).unwrap();
        let mut w = crate::NpzWriter::new_compressed(Cursor::new(Vec::new()));
        w.add("a", &a).unwrap();
        let bytes = w.finish_into_inner().unwrap().into_inner();
        let dir = Directory::read(&mut Cursor::new(&bytes), bytes.len() as u64).unwrap();
        (bytes, dir, npy)
    }

    /// Reads the member streaming (not whole), as a member too large to
    /// inflate whole is read: a few pieces ahead on other threads.
    fn stream(bytes: &[u8], entry: &Entry) -> io::Result<Vec<u8>> {
        let mut input = io::BufReader::new(Cursor::new(bytes));
        let start = entry.data_start(&mut input, bytes.len() as u64).unwrap();
        input.seek(SeekFrom::Start(start)).unwrap();
        let mut inflater = flate2::Decompress::new(false);
        let mut member = MemberReader::new(entry, &mut input, &mut inflater, 0);
        assert!(matches!(member.body, Body::Ahead(_)));
        let mut out = Vec::new();
        member.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn members_too_large_to_hold_stream_their_pieces_checked() {
        let (bytes, dir, npy) = archive();
        let entry = &dir.entries[0];
        assert!(entry.pieces.as_ref().unwrap().lengths.len() > 2);
        assert!(stream(&bytes, entry).unwrap() == npy);
        // The CRC is checked when the last piece is inflated.
        let mut lying = entry.clone();
        lying.crc ^= 1;
        let e = stream(&bytes, &lying).unwrap_err();
        assert!(
            matches!(Error::from(e), Error::BadCrc { ref name } if name == "a"),
            "a CRC mismatch"
        );
    }
}
