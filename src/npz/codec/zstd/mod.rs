//! Zstandard (method 93): `zipfile.ZIP_ZSTANDARD` of Python 3.14 (and of
//! `backports.zstd` for older Pythons), and what ndnpy writes with
//! [`crate::npz::Codec::Zstd`].
//!
//! Python's `zipfile` reads one frame per member (its decompressor stops at
//! the first frame's end), so ndnpy writes one frame too, made of segments
//! compressed independently on every core (`write.rs`, as zstd's own
//! multithreaded compressor does without overlap): no segment refers to
//! another's bytes, repeat offsets or entropy tables. Their compressed
//! lengths are recorded as deflate's pieces are (the zip extra field `nd`,
//! `zip/pieces.rs`), so a reader can decode each segment on its own thread
//! (`frame.rs`); any other zstd decoder reads the frame as it is.
//!
//! The table is a claim of whoever wrote the archive, and the bytes a
//! member gives must be the standard decoder's. So a segment is decoded
//! alone only when it provably does not depend on the segments before it
//! (`frame.rs`, `independent.rs`), and the segments' result is accepted
//! only when its CRC-32 is the member's; otherwise (a segment that may
//! depend on another, one that fails alone, a CRC-32 that does not match)
//! the member is decoded again in one stream by zstd's streaming decoder,
//! and that decoding, CRC-checked as any, is the member's. For this the
//! compressed member is kept while its segments are decoded (it is read
//! anyway; typically a fraction of the member's size).
//!
//! Row ranges ([`crate::NpzReader::read_range`]) of members with a segment
//! table decode only the segments that hold their rows ([`range`]), each
//! alone only when it provably decodes as in the frame (as above) and to
//! exactly its declared bytes (a table that lies about them is an error);
//! a segment that may depend on the one before sends the range to the
//! standard decoder from the member's start, as members without a table
//! (one frame, as `zipfile` writes it) and ranges of all the rows are read:
//! the member reader checks their CRC-32 at the end.
//!
//! Other members are streamed through one decoder, which stops at the end
//! of the first frame as Python's does, with a window of at most 2^27
//! bytes (zstd's default limit, which Python keeps too).

mod frame;
mod independent;
pub(crate) mod write;

use super::decode::{corrupt, Decode, Plan, Raw};
use super::parallel::{decode_pieces, range_in_pieces, read_exactly};
use super::whole::{decode_whole, Whole, WholeCodec};
use crate::npz::zip::directory::Entry;
use crate::npz::zip::pieces::Pieces;
use frame::zstd_error;
use std::cell::RefCell;
use std::io::{self, BufRead, Read, Seek, SeekFrom};
use std::mem::MaybeUninit;
use std::ops::Range;
use std::rc::Rc;

/// The largest window a streamed frame may ask for: 2^27 bytes, zstd's
/// default (and Python's).
const WINDOW_LOG_MAX: u32 = 27;

/// Zstandard's largest expansion: a block of 128 KiB from 4 bytes (an RLE
/// block, its 3-byte header and the byte), 32 768 to 1. A member that
/// claims more than its compressed bytes can give is not believed (and not
/// allocated for: it is streamed, its memory growing with the bytes that
/// come).
const MAX_RATIO: u64 = 1 << 15;

/// The decoder of Zstandard member `entry`: its segments on every core
/// when ndnpy wrote it and it is to be read whole (up to `plan`'s bound,
/// and believable: [`decode_whole`] with [`MAX_RATIO`]), streamed
/// otherwise.
pub(crate) fn open<'a, R: BufRead + 'a>(
    entry: &Entry,
    raw: Raw<'a, R>,
    plan: Plan,
) -> Box<dyn Decode + 'a> {
    let pieces = entry
        .pieces
        .clone()
        .filter(|p| p.lengths.len() > 1 && p.fits(entry.size, entry.compressed_size));
    if let (Plan::Whole(limit), Some(pieces)) = (plan, pieces) {
        if decode_whole(entry.size, entry.compressed_size, limit, MAX_RATIO) {
            let kept = Rc::new(RefCell::new(Vec::new()));
            let codec = Zstd {
                header: frame::Header::default(),
                kept: Rc::clone(&kept),
                expected: entry.crc,
                block: pieces.block as usize,
                first: RefCell::new(None),
            };
            let raw = Keep { raw, kept };
            let whole = Whole::new(raw, Some(pieces), entry.size, entry.compressed_size, codec);
            return Box::new(whole);
        }
    }
    Box::new(Stream::new(raw))
}

/// Bytes `from..to` (some of the member's rows) of Zstandard member
/// `entry`, its data at `data_start` of `input`: from the segments that hold
/// them when ndnpy wrote it, decoded behind the frame's header; `None` when
/// the member is to be decoded from its start (no segment table, or a
/// segment that may depend on the one before: the standard decoder's bytes,
/// never a guess of ours).
pub(crate) fn range<I: Read + Seek>(
    entry: &Entry,
    input: &mut I,
    data_start: u64,
    from: u64,
    to: u64,
) -> io::Result<Option<Vec<u8>>> {
    let pieces = entry
        .pieces
        .as_ref()
        .filter(|p| p.lengths.len() > 1 && p.fits(entry.size, entry.compressed_size));
    let Some(pieces) = pieces else {
        return Ok(None);
    };
    let header = frame::Header::default();
    if from >= pieces.block as u64 {
        // The segments asked are decoded behind the frame's header, the
        // first bytes of the first segment (which is not decoded).
        input.seek(SeekFrom::Start(data_start))?;
        let mut first = Vec::new();
        read_exactly(input, frame::HEADER_LEN, &mut first)?;
        header.learn(&first)?;
    }
    match range_in_pieces(
        &header, input, data_start, pieces, entry.size, MAX_RATIO, from, to,
    ) {
        Err(e) if frame::not_independent(&e) => Ok(None),
        other => other.map(Some),
    }
}

/// Zstandard's whole-member decoding: segments on every core, or the
/// standard decoder in one stream when they cannot be trusted.
struct Zstd {
    /// The frame's header, as the first segment gave it.
    header: frame::Header,
    /// The compressed bytes read so far ([`Keep`]).
    kept: Rc<RefCell<Vec<u8>>>,
    /// The member's CRC-32, which the segments' result must have.
    expected: u32,
    /// Uncompressed bytes per segment.
    block: usize,
    /// The CRC-32 state of the first segment, once decoded.
    first: RefCell<Option<crc32fast::Hasher>>,
}

/// The member's compressed bytes, each kept as it is read, for the
/// decoding in one stream.
struct Keep<'a, R: BufRead> {
    raw: Raw<'a, R>,
    kept: Rc<RefCell<Vec<u8>>>,
}

impl<R: BufRead> Read for Keep<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.raw.read(buf)?;
        let mut kept = self.kept.borrow_mut();
        if kept.capacity() == 0 {
            // All of it at once (the compressed size lies inside the
            // archive), not doublings that copy it again; an error, not an
            // abort, if memory cannot hold it.
            let whole = usize::try_from(self.raw.limit()).unwrap_or(usize::MAX);
            kept.try_reserve_exact(whole.saturating_add(n))
                .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        }
        kept.try_reserve(n)
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        kept.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

// SAFETY: `decode_pieces` returns `Ok` only after every piece decoded
// into its part of `out`, which covers all of it (it checks that `out` is
// exactly the pieces' bytes); `in_one_stream` zeroes all of `out` before
// decoding into it.
unsafe impl WholeCodec for Zstd {
    fn pieces(
        &self,
        input: &mut dyn Read,
        pieces: &Pieces,
        which: Range<usize>,
        out: &mut [MaybeUninit<u8>],
        threads: usize,
    ) -> io::Result<crc32fast::Hasher> {
        let result = decode_pieces(&self.header, input, pieces, which.clone(), out, threads);
        if which.start == 0 {
            // The first segment starts the frame: decoded alone, it is
            // decoded as the standard decoder decodes it (an error there is
            // one for any decoder, or a table that lies about its end).
            let crc = result?;
            *self.first.borrow_mut() = Some(crc.clone());
            return Ok(crc);
        }
        // The rest: accepted only when the whole member's CRC-32 matches.
        let first = self.first.borrow().clone();
        if let (Ok(rest), Some(mut whole)) = (&result, first) {
            whole.combine(rest);
            if whole.finalize() == self.expected {
                return result;
            }
        }
        // The rest of the compressed member, then all of it in one stream.
        io::copy(input, &mut io::sink())?;
        self.in_one_stream(out)
    }

    fn whole(&self, _compressed: &[u8], _size: usize) -> io::Result<(Vec<u8>, u32)> {
        // Only members with a segment table are decoded whole.
        Err(io::Error::other(
            "internal error: a Zstandard member without segments decoded whole",
        ))
    }
}

impl Zstd {
    /// Decodes the compressed member kept, in one stream (the standard
    /// decoder, as [`Stream`]), into the bytes after the first segment,
    /// exactly `out`; checks that its first segment's bytes are those
    /// decoded (and maybe handed out) already; gives the CRC-32 of `out`.
    fn in_one_stream(&self, out: &mut [MaybeUninit<u8>]) -> io::Result<crc32fast::Hasher> {
        out.fill(MaybeUninit::new(0));
        // SAFETY: every byte of `out` was just initialised;
        // `MaybeUninit<u8>` has the layout of `u8`.
        let out: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast(), out.len()) };
        let kept = self.kept.borrow();
        let mut stream = Stream::new(&kept[..]);
        let mut head = vec![0u8; self.block];
        let mut fill = |buf: &mut [u8]| -> io::Result<()> {
            let mut at = 0;
            while at < buf.len() {
                match stream.read(&mut buf[at..])?.0 {
                    0 => return Err(corrupt("its Zstandard frame ends early")),
                    n => at += n,
                }
            }
            Ok(())
        };
        fill(&mut head)?;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&head);
        let first = self.first.borrow().clone();
        if first.map(|f| f.finalize()) != Some(crc.finalize()) {
            return Err(corrupt(
                "the member's first Zstandard segment decodes differently alone and in the frame",
            ));
        }
        fill(out)?;
        if stream.read(&mut [0u8; 1])?.0 != 0 {
            return Err(corrupt(
                "its Zstandard frame gives more bytes than the archive declares",
            ));
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(out);
        Ok(crc)
    }
}

/// A Zstandard member streamed on this thread: its first frame.
struct Stream<S: BufRead> {
    raw: S,
    state: Option<zstd_safe::DCtx<'static>>,
    ended: bool,
}

impl<S: BufRead> Stream<S> {
    fn new(raw: S) -> Self {
        Stream {
            raw,
            state: None,
            ended: false,
        }
    }
}

// SAFETY: `fill_whole` is the trait's own, which never succeeds.
unsafe impl<S: BufRead> Decode for Stream<S> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        if self.ended {
            return Ok((0, None));
        }
        let state = match &mut self.state {
            Some(state) => state,
            None => {
                let mut state = zstd_safe::DCtx::try_create()
                    .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
                state
                    .set_parameter(zstd_safe::DParameter::WindowLogMax(WINDOW_LOG_MAX))
                    .map_err(zstd_error)?;
                self.state.insert(state)
            }
        };
        loop {
            let (consumed, produced, hint, eof) = {
                let chunk = self.raw.fill_buf()?;
                let eof = chunk.is_empty();
                let mut input = zstd_safe::InBuffer::around(chunk);
                let mut output = zstd_safe::OutBuffer::around(&mut *out);
                let hint = state
                    .decompress_stream(&mut output, &mut input)
                    .map_err(zstd_error)?;
                (input.pos(), output.pos(), hint, eof)
            };
            self.raw.consume(consumed);
            if hint == 0 {
                // The frame is complete: the member ends here, as it does
                // for Python's decompressor.
                self.ended = true;
                return Ok((produced, None));
            }
            if produced > 0 {
                return Ok((produced, None));
            }
            if eof && consumed == 0 {
                return Err(corrupt("its Zstandard frame ends early"));
            }
        }
    }
}
