//! Independent pieces of a member decoded on every core, for codecs whose
//! writer leaves a piece table (deflate's pieces, `deflate/inflate.rs`; Zstandard's
//! segments, `zstd/frame.rs`).
//!
//! The calling thread reads the pieces, a few ahead, into buffers that are
//! reused (the compressed member is never held whole), and decodes too
//! when enough are waiting; up to `threads - 1` more threads decode. Each
//! decodes straight into its piece of the output, which nobody zeroed
//! ahead (the decoder's writes fault its pages in, on every core), and
//! computes the piece's CRC-32 while it is in cache.
//!
//! A row range takes only the pieces that hold its bytes, whatever the
//! codec ([`range_in_pieces`]).

use crate::npz::zip::pieces::Pieces;
use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom};
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::{Condvar, Mutex};

/// How one codec reads and decodes a piece on its own.
///
/// # Safety
///
/// [`PieceDecoder::decode_piece`] returning `Ok` must have initialised
/// every byte of its output (the pieces are then handed on as written).
pub(crate) unsafe trait PieceDecoder: Sync {
    /// Reads piece `piece` of `pieces` from `input` (positioned at it) into
    /// `buf`, replacing what it held, made decodable on its own.
    fn read_piece(
        &self,
        input: &mut dyn Read,
        pieces: &Pieces,
        piece: usize,
        buf: &mut Vec<u8>,
    ) -> io::Result<()>;

    /// Decodes a piece [`PieceDecoder::read_piece`] read into exactly
    /// `out`, every byte of it initialised on success (more or fewer bytes
    /// are an error).
    fn decode_piece(&self, piece: &[u8], out: &mut [MaybeUninit<u8>]) -> io::Result<()>;
}

/// Decodes pieces `which` of a member (its table `pieces`, checked with
/// [`Pieces::fits`]), reading their compressed bytes in order from `input`
/// (positioned at piece `which.start`), into `out`, which must be exactly
/// their bytes (a block each, the member's last piece what is left). On
/// success all of `out` is initialised. Gives the CRC-32 state of `out`.
pub(crate) fn decode_pieces(
    codec: &dyn PieceDecoder,
    input: &mut dyn Read,
    pieces: &Pieces,
    which: Range<usize>,
    out: &mut [MaybeUninit<u8>],
    threads: usize,
) -> io::Result<crc32fast::Hasher> {
    let block = pieces.block as usize;
    if block == 0
        || which.is_empty()
        || which.end > pieces.lengths.len()
        || out.len().div_ceil(block) != which.len()
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the piece table does not match the member",
        ));
    }
    let count = which.len();
    let threads = threads.clamp(1, count);
    let targets: Vec<&mut [MaybeUninit<u8>]> = out.chunks_mut(block).collect();
    let shared = Mutex::new(Shared {
        queue: VecDeque::new(),
        spare: Vec::new(),
        done: false,
        failed: None,
        crcs: vec![None; count],
    });
    let ready = Condvar::new();
    let lock = || shared.lock().unwrap_or_else(|e| e.into_inner());
    // Runs queued pieces: `Wait` waits for more until the reader is done,
    // `Drain` returns once the queue is empty, `One` after one piece.
    let work = |mode: Work| loop {
        let job = {
            let mut s = lock();
            loop {
                if s.failed.is_some() {
                    return;
                }
                if let Some(job) = s.queue.pop_front() {
                    break job;
                }
                if s.done || mode != Work::Wait {
                    return;
                }
                s = ready.wait(s).unwrap_or_else(|e| e.into_inner());
            }
        };
        let Job {
            index,
            input,
            target,
        } = job;
        let result = decode_into(codec, &input, target);
        let mut s = lock();
        match result {
            Ok(crc) => s.crcs[index] = Some(crc),
            Err(e) => s.failed = Some(e),
        }
        s.spare.push(input);
        ready.notify_all();
        if mode == Work::One {
            return;
        }
    };
    let read = |input: &mut dyn Read| -> io::Result<()> {
        for ((index, piece), target) in which.clone().enumerate().zip(targets) {
            let mut buf = lock().spare.pop().unwrap_or_default();
            codec.read_piece(input, pieces, piece, &mut buf)?;
            let mut s = lock();
            if s.failed.is_some() {
                return Ok(());
            }
            s.queue.push_back(Job {
                index,
                input: buf,
                target,
            });
            ready.notify_one();
            // Enough waiting for every thread: decode one here rather than
            // read further ahead.
            let busy = s.queue.len() >= threads;
            drop(s);
            if busy {
                work(Work::One);
            }
        }
        Ok(())
    };
    let helpers = crate::exec::scope(|scope| {
        // Ends the waiting of the other threads however this one leaves,
        // a panic of the caller's reader included (the scope waits for
        // them before passing the panic on).
        let mut finish = Finish {
            shared: &shared,
            ready: &ready,
            reading: true,
        };
        for _ in 1..threads {
            // Fewer threads if the budget of cores or the system has none
            // to give: the caller decodes what they do not take.
            if !scope.spawn("ndnpy-pieces", || work(Work::Wait)) {
                break;
            }
        }
        let result = read(input);
        finish.reading = false;
        if let Err(e) = result {
            lock().failed.get_or_insert(e);
        }
        drop(finish);
        work(Work::Drain);
    });
    let mut s = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Err(e) = helpers {
        // A helper panicked: its piece has no CRC, and the error says why.
        s.failed.get_or_insert(e);
    }
    if let Some(e) = s.failed {
        return Err(e);
    }
    let mut crc = crc32fast::Hasher::new();
    for piece in s.crcs {
        crc.combine(&piece.ok_or_else(|| io::Error::other("a decoding thread failed"))?);
    }
    Ok(crc)
}

/// Bytes `from..to` of a member with a piece table (`pieces`, checked
/// with [`Pieces::fits`]; `size` its declared size, `to <= size`), from the
/// pieces that hold them only: `input` is sought to the first of them
/// (the member's data starts at `data_start`), and each is read and decoded
/// by `codec` on this thread, to exactly the bytes the table declares for it
/// (more or fewer are an error). A piece that claims more than `max_ratio`
/// times its compressed bytes can give is not believed, nor allocated for.
/// Memory: the bytes asked, one piece, and its compressed bytes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn range_in_pieces<I: Read + Seek>(
    codec: &dyn PieceDecoder,
    input: &mut I,
    data_start: u64,
    pieces: &Pieces,
    size: u64,
    max_ratio: u64,
    from: u64,
    to: u64,
) -> io::Result<Vec<u8>> {
    if from >= to {
        return Ok(Vec::new());
    }
    let block = pieces.block as u64;
    let count = pieces.lengths.len();
    let (first, last) = match block {
        0 => (count, count),
        _ => ((from / block) as usize, ((to - 1) / block) as usize),
    };
    if last >= count || to > size {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the piece table does not match the member",
        ));
    }
    let len_of = |piece: usize| match piece + 1 == count {
        true => size - block * (count as u64 - 1),
        false => block,
    };
    for piece in first..=last {
        // A table may claim more than its bytes can give: not believed
        // (and not allocated for).
        if len_of(piece) > pieces.lengths[piece] as u64 * max_ratio + (1 << 10) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a piece of the member claims more than its method can give",
            ));
        }
    }
    let skip: u64 = pieces.lengths[..first].iter().map(|&l| l as u64).sum();
    input.seek(SeekFrom::Start(data_start + skip))?;
    let oom = |_| io::Error::from(io::ErrorKind::OutOfMemory);
    let mut out = Vec::new();
    out.try_reserve_exact((to - from) as usize).map_err(oom)?;
    let mut decoded: Vec<u8> = Vec::new();
    for piece in first..=last {
        let len = len_of(piece) as usize;
        decoded.clear();
        decoded.try_reserve_exact(len).map_err(oom)?;
        decode_pieces(
            codec,
            input,
            pieces,
            piece..piece + 1,
            &mut decoded.spare_capacity_mut()[..len],
            1,
        )?;
        // SAFETY: `decode_pieces` succeeded, so every one of the `len`
        // bytes after the (empty) start of `decoded` is initialised.
        unsafe { decoded.set_len(len) };
        let at = piece as u64 * block;
        let (a, b) = (from.max(at) - at, to.min(at + len as u64) - at);
        out.extend_from_slice(&decoded[a as usize..b as usize]);
    }
    Ok(out)
}

/// Reads `len` bytes of `input` into `buf` after what it holds; fewer is
/// an error (the piece would lie past the member's end).
pub(crate) fn read_exactly(input: &mut dyn Read, len: usize, buf: &mut Vec<u8>) -> io::Result<()> {
    // The length is the table's claim, bounded by the archive's length
    // (`Pieces::fits`): an error, not an abort, if it cannot be had.
    buf.try_reserve_exact(len)
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    let before = buf.len();
    input.take(len as u64).read_to_end(buf)?;
    if buf.len() - before != len {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a piece of the member lies past its end",
        ));
    }
    Ok(())
}

/// How [`decode_pieces`]'s workers take pieces.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Work {
    Wait,
    Drain,
    One,
}

/// Marks the reading done when dropped (on return or unwinding), and
/// wakes the waiting threads; dropped while still `reading`, it was a
/// panic of the reader: a failure.
struct Finish<'a, 'o> {
    shared: &'a Mutex<Shared<'o>>,
    ready: &'a Condvar,
    reading: bool,
}

impl Drop for Finish<'_, '_> {
    fn drop(&mut self) {
        let mut s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        if self.reading {
            s.failed
                .get_or_insert_with(|| io::Error::other("reading the member panicked"));
        }
        s.done = true;
        self.ready.notify_all();
    }
}

/// What the decoding threads share: pieces read and waiting, buffers to
/// reuse, whether the reader is done, the first error, each piece's CRC.
struct Shared<'o> {
    queue: VecDeque<Job<'o>>,
    spare: Vec<Vec<u8>>,
    done: bool,
    failed: Option<io::Error>,
    crcs: Vec<Option<crc32fast::Hasher>>,
}

/// One piece to decode: its place among the pieces asked for, its
/// compressed bytes, its output.
struct Job<'o> {
    index: usize,
    input: Vec<u8>,
    target: &'o mut [MaybeUninit<u8>],
}

/// Decodes `piece` into exactly `target`, and gives its CRC.
fn decode_into(
    codec: &dyn PieceDecoder,
    piece: &[u8],
    target: &mut [MaybeUninit<u8>],
) -> io::Result<crc32fast::Hasher> {
    codec.decode_piece(piece, target)?;
    // SAFETY: `decode_piece` succeeded, so it initialised every byte of
    // `target` (the trait's contract); `MaybeUninit<u8>` has the layout of
    // `u8`.
    let target: &[u8] = unsafe { std::slice::from_raw_parts(target.as_ptr().cast(), target.len()) };
    let mut crc = crc32fast::Hasher::new();
    crc.update(target);
    Ok(crc)
}
