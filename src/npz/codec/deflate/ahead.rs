//! Streaming a member ndnpy wrote, too large to inflate whole, with its
//! pieces inflated ahead on other threads while the caller works on the
//! bytes already given.
//!
//! The calling thread reads the compressed pieces in order (so the
//! caller's reader is only ever used from its own thread) and queues a few
//! more than there are threads; the other threads inflate them into
//! buffers of their own, each with its CRC-32. The caller takes the pieces
//! back in order, inflating queued ones itself while the next is not ready,
//! so that one core or a busy machine is no slower than inflating alone.
//! Memory stays a few pieces, whatever the member's size.

use super::inflate::{inflate_piece_into, read_piece, MAX_RATIO};
use crate::exec;
use crate::npz::zip::pieces::Pieces;
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Whether a member of `size` bytes in `pieces` (which [`Pieces::fits`])
/// is read ahead: large enough to pay for the threads, in pieces of a
/// sensible size (ndnpy writes 1 MiB; a hostile table could claim pieces
/// of gigabytes, each to be held), every piece's compressed length
/// believable for what it inflates to: no more than deflate can give from
/// it, and no longer than deflate's worst case for it (stored blocks), so
/// that a table cannot make one piece most of the archive. Other members
/// stream on one thread, in constant memory, where a lie about the size
/// only shows at the end.
pub(crate) fn suits(pieces: &Pieces, size: u64) -> bool {
    let block = pieces.block as u64;
    let count = pieces.lengths.len();
    let believable = |len: u32, out: u64| {
        let len = len as u64;
        out <= len.saturating_mul(MAX_RATIO) + (1 << 10) && len <= out + 5 * (out / 65_535 + 1) + 64
    };
    size >= 4 << 20
        && (64 << 10..=MAX_BLOCK).contains(&block)
        && count > 1
        && pieces.lengths[..count - 1]
            .iter()
            .all(|&l| believable(l, block))
        && believable(pieces.lengths[count - 1], size - block * (count as u64 - 1))
}

/// The largest piece read ahead (ndnpy writes 1 MiB).
const MAX_BLOCK: u64 = 4 << 20;

/// At most this many threads inflate, and at most this many bytes of
/// pieces are read or inflated ahead of the reader, whatever the cores.
const MAX_THREADS: usize = 8;
const AHEAD_BYTES: usize = 32 << 20;

/// The pieces of a member being read, inflated ahead of the reader.
pub(crate) struct Ahead<T: Read> {
    raw: T,
    pieces: Pieces,
    /// The next piece to read from `raw` and queue.
    queued: usize,
    /// The next piece to hand out.
    next: usize,
    current: io::Cursor<Vec<u8>>,
    /// The CRC-32 of the pieces handed out so far.
    crc: crc32fast::Hasher,
    sizes: Sizes,
    /// A read failed: every later one fails too (the failed piece is no
    /// longer in the pool, and waiting for it would never end).
    failed: bool,
    pool: Arc<Pool>,
    workers: Vec<exec::Thread>,
}

/// How many bytes each piece inflates to.
#[derive(Clone, Copy)]
struct Sizes {
    block: usize,
    count: usize,
    /// The last piece's (the member's size less the other pieces').
    last: usize,
}

impl Sizes {
    fn of(self, index: usize) -> usize {
        if index + 1 == self.count {
            self.last
        } else {
            self.block
        }
    }
}

/// What the reader and the inflating threads share.
struct Pool {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// Pieces read and waiting: index, compressed bytes (a whole stream).
    jobs: VecDeque<(usize, Vec<u8>)>,
    /// Pieces inflated, by index, with their CRC-32 state.
    done: HashMap<usize, io::Result<(Vec<u8>, crc32fast::Hasher)>>,
    /// Buffers to reuse for compressed and inflated bytes.
    spare: Vec<Vec<u8>>,
    /// Set when the reader is gone: the threads stop.
    closed: bool,
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Read> Ahead<T> {
    /// Reads the member of `size` bytes whose compressed bytes `raw` gives
    /// (all of them, from its first piece), described by `pieces` (checked
    /// with [`Pieces::fits`] against `size`), inflating on up to `threads`
    /// threads in all.
    pub(crate) fn new(raw: T, pieces: Pieces, size: u64, threads: usize) -> Self {
        let block = pieces.block as usize;
        let count = pieces.lengths.len();
        // `fits` checked that `size` needs exactly `count` blocks.
        let last = (size - block as u64 * (count as u64 - 1)) as usize;
        let sizes = Sizes { block, count, last };
        let pool = Arc::new(Pool {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let mut workers = Vec::new();
        for _ in 1..threads.clamp(1, pieces.lengths.len().min(MAX_THREADS)) {
            let pool = Arc::clone(&pool);
            // Fewer threads if the system has none to give: the reader
            // inflates what no thread takes.
            match exec::spawn("ndnpy-inflate", move || work(&pool, sizes, false)) {
                Some(handle) => workers.push(handle),
                None => break,
            }
        }
        Ahead {
            raw,
            pieces,
            queued: 0,
            next: 0,
            current: io::Cursor::new(Vec::new()),
            crc: crc32fast::Hasher::new(),
            sizes,
            failed: false,
            pool,
            workers,
        }
    }

    /// Reads on; gives the member's CRC-32 along with the first bytes of
    /// its last piece, once every piece is inflated (so that a mismatch is
    /// known before those bytes are handed out).
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        if self.failed {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "an earlier read of this member failed",
            ));
        }
        let result = self.read_on(buf);
        self.failed = result.is_err();
        result
    }

    fn read_on(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        let mut crc = None;
        if self.current.position() as usize == self.current.get_ref().len() {
            let count = self.pieces.lengths.len();
            if self.next == count {
                return Ok((0, None));
            }
            self.queue_ahead()?;
            let (bytes, piece_crc) = self.take(self.next)?;
            self.next += 1;
            self.crc.combine(&piece_crc);
            if self.next == count {
                crc = Some(self.crc.clone().finalize());
            }
            let old = std::mem::replace(&mut self.current, io::Cursor::new(bytes));
            self.pool.lock().spare.push(old.into_inner());
        }
        Ok((self.current.read(buf)?, crc))
    }

    /// Reads and queues pieces until a few more than the threads are
    /// waiting or read.
    fn queue_ahead(&mut self) -> io::Result<()> {
        let count = self.pieces.lengths.len();
        let budget = (AHEAD_BYTES / self.sizes.block).max(2);
        let ahead = (2 * (self.workers.len() + 1)).min(budget);
        while self.queued < count && self.queued < self.next + ahead {
            let piece = self.queued;
            let mut buf = self.pool.lock().spare.pop().unwrap_or_default();
            read_piece(&mut self.raw, &self.pieces, piece, &mut buf)?;
            self.pool.lock().jobs.push_back((piece, buf));
            self.pool.changed.notify_one();
            self.queued += 1;
        }
        Ok(())
    }

    /// Piece `index` inflated: taken from the threads, or inflated here
    /// while it is not ready and others wait in the queue.
    fn take(&mut self, index: usize) -> io::Result<(Vec<u8>, crc32fast::Hasher)> {
        loop {
            let mut s = self.pool.lock();
            if let Some(result) = s.done.remove(&index) {
                return result;
            }
            if s.jobs.is_empty() {
                // Queued, not done and not waiting: a thread has it.
                drop(self.pool.changed.wait(s).unwrap_or_else(|e| e.into_inner()));
                continue;
            }
            drop(s);
            // Never waits: there was a job.
            work(&self.pool, self.sizes, true);
        }
    }
}

impl<T: Read> Drop for Ahead<T> {
    fn drop(&mut self) {
        self.pool.lock().closed = true;
        self.pool.changed.notify_all();
        for w in self.workers.drain(..) {
            // A thread that panicked has already recorded it as its piece's
            // error; nothing more to pass on here.
            let _ = w.join();
        }
    }
}

/// How long a thread waits before it asks the budget again for a core,
/// while pieces are queued and other work holds every core (the reader
/// inflates queued pieces meanwhile, so nothing waits on this).
const BUDGET_RETRY: Duration = Duration::from_millis(2);

/// Inflates queued pieces: until the pool closes (a thread's loop, each
/// piece holding a core of the library's budget, `exec.rs`), or one piece
/// if there is one (`once`: the reader helping, on its own core).
fn work(pool: &Pool, sizes: Sizes, once: bool) {
    loop {
        let (index, input, mut out, core) = {
            let mut s = pool.lock();
            loop {
                if s.closed {
                    return;
                }
                if s.jobs.is_empty() {
                    if once {
                        return;
                    }
                    s = pool.changed.wait(s).unwrap_or_else(|e| e.into_inner());
                    continue;
                }
                let core = if once { None } else { exec::try_core() };
                if !once && core.is_none() {
                    s = pool
                        .changed
                        .wait_timeout(s, BUDGET_RETRY)
                        .map_or_else(|e| e.into_inner().0, |r| r.0);
                    continue;
                }
                let (index, input) = s.jobs.pop_front().expect("checked: not empty");
                let out = s.spare.pop().unwrap_or_default();
                break (index, input, out, core);
            }
        };
        // A panic while inflating still answers for the piece, so the
        // reader waiting for it gets an error instead of waiting forever.
        let guard = Answer { pool, index };
        let result = inflate_piece_into(&input, &mut out, sizes.of(index)).map(|()| {
            let mut crc = crc32fast::Hasher::new();
            crc.update(&out);
            (out, crc)
        });
        std::mem::forget(guard);
        let mut s = pool.lock();
        s.done.insert(index, result);
        s.spare.push(input);
        drop(s);
        drop(core);
        pool.changed.notify_all();
        if once {
            return;
        }
    }
}

/// Records a failure for piece `index` if dropped (a panic while it was
/// being inflated).
struct Answer<'a> {
    pool: &'a Pool,
    index: usize,
}

impl Drop for Answer<'_> {
    fn drop(&mut self) {
        self.pool.lock().done.insert(
            self.index,
            Err(io::Error::other("a thread inflating the member panicked")),
        );
        self.pool.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::npz::codec::deflate::inflate::deflate_in_pieces;

    fn data() -> Vec<u8> {
        (0..5_300_000u32)
            .map(|i| (i % 251) as u8 ^ (i >> 13) as u8)
            .collect()
    }

    /// Everything `ahead` gives, read `step` bytes at a time, and the
    /// CRC-32 it reported.
    fn drain<T: Read>(mut ahead: Ahead<T>, step: usize) -> io::Result<(Vec<u8>, Option<u32>)> {
        let (mut out, mut crc) = (Vec::new(), None);
        let mut buf = vec![0u8; step];
        loop {
            let (n, c) = ahead.read(&mut buf)?;
            crc = crc.or(c);
            if n == 0 {
                return Ok((out, crc));
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    #[test]
    fn pieces_come_back_in_order_on_any_number_of_threads() {
        let data = data();
        let (stream, pieces) = deflate_in_pieces(&data);
        assert_eq!(pieces.lengths.len(), 6);
        for threads in [1, 2, 3, 8] {
            for step in [1 << 20, 4099, 3 << 20] {
                let ahead = Ahead::new(&stream[..], pieces.clone(), data.len() as u64, threads);
                let (out, crc) = drain(ahead, step).unwrap();
                assert!(out == data, "{threads} threads, reads of {step}");
                assert_eq!(crc, Some(crc32fast::hash(&data)));
            }
        }
    }

    #[test]
    fn broken_and_short_input_are_errors_not_hangs() {
        let data = data();
        let (stream, pieces) = deflate_in_pieces(&data);
        let mut broken = stream.clone();
        let third = (pieces.lengths[0] + pieces.lengths[1]) as usize + 100;
        broken[third..third + 64].fill(0xFF);
        for threads in [1, 2, 4] {
            let ahead = Ahead::new(&broken[..], pieces.clone(), data.len() as u64, threads);
            let e = drain(ahead, 1 << 16).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
            // Read again after the error: the error again, not a wait for
            // the piece that failed.
            let mut ahead = Ahead::new(&broken[..], pieces.clone(), data.len() as u64, threads);
            let mut buf = vec![0u8; 1 << 16];
            while ahead.read(&mut buf).is_ok() {}
            assert!(ahead.read(&mut buf).is_err());
            let short = &stream[..stream.len() - 10];
            let ahead = Ahead::new(short, pieces.clone(), data.len() as u64, threads);
            let e = drain(ahead, 1 << 16).unwrap_err();
            assert!(e.to_string().contains("lies past its end"), "{e}");
        }
    }

    #[test]
    fn dropped_part_way_or_by_a_panicking_reader_the_threads_end() {
        let data = data();
        let (stream, pieces) = deflate_in_pieces(&data);
        let mut ahead = Ahead::new(&stream[..], pieces.clone(), data.len() as u64, 4);
        let mut buf = vec![0u8; 1000];
        ahead.read(&mut buf).unwrap();
        drop(ahead);
        /// Panics on its third read.
        struct Panics<'a>(&'a [u8], usize);
        impl Read for Panics<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.1 == 0 {
                    panic!("the caller's reader panics");
                }
                self.1 -= 1;
                let n = buf.len().min(1 << 20);
                self.0.read(&mut buf[..n])
            }
        }
        let result = std::panic::catch_unwind(|| {
            let ahead = Ahead::new(Panics(&stream, 3), pieces, data.len() as u64, 4);
            drain(ahead, 1 << 16).map(|_| ())
        });
        assert!(result.is_err(), "the panic was swallowed");
    }
}

#[cfg(test)]
mod suits_tests {
    use super::*;

    #[test]
    fn only_believable_tables_of_large_members_are_read_ahead() {
        let mib = 1u32 << 20;
        let table = |block: u32, lengths: &[u32]| Pieces {
            block,
            lengths: lengths.to_vec(),
        };
        assert!(suits(
            &table(mib, &[2000, 2000, 2000, 2000, 10]),
            (4 << 20) + 4096
        ));
        // Small members, one piece, tiny or huge blocks: streamed.
        assert!(!suits(&table(mib, &[2000, 2000]), 2 << 20));
        assert!(!suits(&table(mib, &[2000]), 5 << 20));
        assert!(!suits(&table(1 << 10, &[100; 8192]), 8 << 20));
        assert!(!suits(
            &table(u32::MAX, &[3_000_000, 10]),
            u32::MAX as u64 + 1
        ));
        // A piece claiming more than deflate gives from its bytes.
        assert!(!suits(
            &table(mib, &[2000, 20, 2000, 2000, 10]),
            (4 << 20) + 4096
        ));
        assert!(!suits(&table(mib, &[2000, 2000, 2000, 2000, 10]), 5 << 20));
    }
}
