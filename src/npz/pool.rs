//! The threads that inflate (and decode) whole members ahead of the
//! archive reader: `prefetch.rs` reads a member's compressed bytes and
//! hands them over as a job; the reader takes the results back in the
//! order it reads the members, running queued jobs itself while the one
//! it needs is being inflated elsewhere, so that the calling thread is
//! never idle while there is work, and one core is never slower than no
//! read-ahead.
//!
//! A job inflates one member on one thread: several members at once use
//! the cores better than one member split up (`pinflate`), which the
//! caller uses only for a large member with no other work beside it. A
//! job that returns bytes inflates with libdeflate into a buffer kept for
//! reuse; one that returns the array (the iterator's) inflates straight
//! into the array (`direct.rs`).

use super::compressed::{fresh, Compressed};
use super::{in_member, member_io_error};
use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use crate::exec;
use crate::format::header;
use crate::io::source::Source;
use crate::npz::codec::deflate::inflate::{inflate, inflate_piece};
use crate::options::ReadOptions;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// What a job gives back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Want {
    /// The member's bytes (its `.npy` file), CRC-checked.
    Bytes,
    /// The member read with `read_any` under these options (the array
    /// iterator, which decodes on the worker too).
    Any(ReadOptions),
}

/// One member to inflate: its key (for errors), its compressed bytes (a
/// whole deflate stream), its declared size (checked by the caller
/// against deflate's largest expansion), and its CRC-32.
pub(super) struct Work {
    pub(super) name: String,
    pub(super) compressed: Compressed,
    pub(super) size: usize,
    pub(super) crc: u32,
    pub(super) want: Want,
}

/// A job's result.
pub(super) enum Output {
    Bytes(Vec<u8>),
    Any(AnyArray),
}

/// A job, by number.
pub(super) type JobId = u64;

/// Buffers kept for reuse: faulting in fresh memory costs about as much as
/// inflating into it on the benchmark machine (BENCHMARKS.md), so
/// compressed and inflated bytes go to buffers already mapped. At most
/// this many are kept, each at most [`KEEP_MAX`] bytes, [`KEEP_BYTES`] in
/// all.
const KEEP_BUFFERS: usize = 8;
const KEEP_MAX: usize = 64 << 20;
const KEEP_BYTES: usize = 256 << 20;

#[derive(Default)]
struct State {
    /// Jobs not started, in the order they were submitted.
    queue: VecDeque<JobId>,
    work: HashMap<JobId, Work>,
    /// Jobs being run (on a worker, or by the caller helping).
    running: HashSet<JobId>,
    done: HashMap<JobId, Result<Output>>,
    /// Running jobs whose result nobody wants any more.
    discard: HashSet<JobId>,
    spare: Vec<Vec<u8>>,
    next: JobId,
    closed: bool,
}

impl State {
    fn recycle(&mut self, buf: Vec<u8>) {
        let kept: usize = self.spare.iter().map(Vec::capacity).sum();
        if buf.capacity() > 0
            && buf.capacity() <= KEEP_MAX
            && kept + buf.capacity() <= KEEP_BYTES
            && self.spare.len() < KEEP_BUFFERS
        {
            self.spare.push(buf);
        }
    }

    /// The smallest buffer kept that holds `len` bytes, else the largest
    /// (to be replaced, so that its memory goes back), else a new one.
    fn fit(&mut self, len: usize) -> Vec<u8> {
        let best = (0..self.spare.len())
            .filter(|&i| self.spare[i].capacity() >= len)
            .min_by_key(|&i| self.spare[i].capacity());
        match best {
            Some(i) => self.spare.swap_remove(i),
            None => Vec::new(),
        }
    }
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The worker threads and their jobs. Threads start with the first jobs
/// (at most `threads - 1`: the caller is the last one) and end when the
/// pool is dropped or retired (when its plan is over); idle, they wait
/// without spinning. A thread runs a job only with a core of the library's
/// budget (`exec.rs`): while other work holds the cores, the caller runs
/// the jobs itself, as on one core.
pub(super) struct Pool {
    shared: Arc<Shared>,
    pub(super) workers: Vec<exec::Thread>,
    threads: usize,
}

impl Pool {
    /// A pool for `threads` threads in all, the caller's included.
    pub(super) fn new(threads: usize) -> Pool {
        Pool {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                changed: Condvar::new(),
            }),
            workers: Vec::new(),
            threads: threads.max(1),
        }
    }

    /// An empty buffer with room for `len` bytes (compressed bytes to read
    /// into): one kept for reuse, or fresh memory.
    pub(super) fn buffer(&self, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = self.shared.lock().fit(len);
        if buf.capacity() < len {
            buf = fresh(len)?;
        }
        buf.clear();
        Ok(buf)
    }

    /// Takes a buffer back for reuse.
    pub(super) fn recycle(&self, buf: Vec<u8>) {
        self.shared.lock().recycle(buf);
    }

    /// Queues `work`; a worker starts it when one is free.
    pub(super) fn submit(&mut self, work: Work) -> JobId {
        let mut s = self.shared.lock();
        let id = s.next;
        s.next += 1;
        s.queue.push_back(id);
        s.work.insert(id, work);
        let busy = s.running.len() + s.queue.len();
        drop(s);
        self.shared.changed.notify_one();
        if self.workers.len() + 1 < self.threads && self.workers.len() < busy {
            let shared = Arc::clone(&self.shared);
            // Fewer threads if the system has none to give: the caller
            // runs what no worker takes.
            if let Some(handle) = exec::spawn("ndnpy-members", move || work_loop(&shared)) {
                self.workers.push(handle);
            }
        }
        id
    }

    /// The result of job `id`: taken when done, run here if not started
    /// (on every core through `pinflate` when nothing else is queued or
    /// running and it pays), else waited for, running other queued jobs
    /// meanwhile.
    pub(super) fn take(&self, id: JobId) -> Result<Output> {
        let mut s = self.shared.lock();
        loop {
            if let Some(result) = s.done.remove(&id) {
                return result;
            }
            if let Some(at) = s.queue.iter().position(|&j| j == id) {
                s.queue.remove(at);
                let work = s.work.remove(&id).expect("queued jobs have work");
                let alone = s.queue.is_empty() && s.running.is_empty();
                let out = s.fit(work.size);
                drop(s);
                let threads = if alone { self.threads } else { 1 };
                let (result, spent) = run(work, out, threads);
                let mut s = self.shared.lock();
                spent.into_iter().for_each(|b| s.recycle(b));
                return result;
            }
            if !s.running.contains(&id) {
                return Err(io::Error::other("a read-ahead job was lost").into());
            }
            // Another thread has it: help with the next queued job, or
            // wait.
            if let Some(other) = s.queue.pop_front() {
                s = run_one(&self.shared, s, other);
                continue;
            }
            s = self
                .shared
                .changed
                .wait(s)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Drops job `id` and its result, whatever its state.
    pub(super) fn cancel(&self, id: JobId) {
        let mut s = self.shared.lock();
        if let Some(at) = s.queue.iter().position(|&j| j == id) {
            s.queue.remove(at);
            if let Some(Work {
                compressed: Compressed::Bytes(buf),
                ..
            }) = s.work.remove(&id)
            {
                s.recycle(buf);
            }
        } else if s.running.contains(&id) {
            s.discard.insert(id);
        } else if let Some(Ok(Output::Bytes(buf))) = s.done.remove(&id) {
            s.recycle(buf);
        }
    }

    /// Jobs queued or running.
    #[cfg(test)]
    pub(super) fn busy(&self) -> usize {
        let s = self.shared.lock();
        s.queue.len() + s.running.len()
    }
}

impl Pool {
    /// Ends the pool without waiting for its threads: idle ones exit now,
    /// one running a (cancelled) job when it is done. For a plan that is
    /// over, so that no thread stays until the reader is dropped.
    pub(super) fn retire(mut self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
        // Detached: each holds the shared state until it returns.
        self.workers.clear();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
        for w in self.workers.drain(..) {
            // A worker's panic was caught and became its job's error.
            let _ = w.join();
        }
    }
}

/// How long a worker waits before it asks the budget again for a core,
/// while jobs are queued and other work holds every core (the caller runs
/// queued jobs meanwhile, so nothing waits on this).
const BUDGET_RETRY: Duration = Duration::from_millis(2);

/// A worker: runs queued jobs, each holding a core of the budget, until
/// the pool closes.
fn work_loop(shared: &Shared) {
    let mut s = shared.lock();
    loop {
        if s.closed {
            return;
        }
        if s.queue.is_empty() {
            s = shared.changed.wait(s).unwrap_or_else(|e| e.into_inner());
            continue;
        }
        let Some(core) = exec::try_core() else {
            s = shared
                .changed
                .wait_timeout(s, BUDGET_RETRY)
                .map_or_else(|e| e.into_inner().0, |r| r.0);
            continue;
        };
        let id = s.queue.pop_front().expect("checked: not empty");
        s = run_one(shared, s, id);
        drop(core);
    }
}

/// Runs queued job `id` (just taken off the queue) on this thread, with
/// the lock released meanwhile; records its result.
fn run_one<'a>(
    shared: &'a Shared,
    mut s: MutexGuard<'a, State>,
    id: JobId,
) -> MutexGuard<'a, State> {
    let work = s.work.remove(&id).expect("queued jobs have work");
    let out = s.fit(work.size);
    s.running.insert(id);
    drop(s);
    let (result, spent) = run(work, out, 1);
    let mut s = shared.lock();
    s.running.remove(&id);
    spent.into_iter().for_each(|b| s.recycle(b));
    if s.discard.remove(&id) {
        if let Ok(Output::Bytes(buf)) = result {
            s.recycle(buf);
        }
    } else {
        s.done.insert(id, result);
    }
    shared.changed.notify_all();
    s
}

/// Runs a job, catching a panic as its error (so that nobody waits for a
/// result that never comes); gives the buffers it is done with.
fn run(work: Work, out: Vec<u8>, threads: usize) -> (Result<Output>, Vec<Vec<u8>>) {
    let name = work.name.clone();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        inflate_job(work, out, threads)
    }))
    .unwrap_or_else(|_| {
        let e = Error::Archive(crate::error::ArchiveError::CorruptMember {
            name,
            reason: "a thread inflating it panicked".into(),
        });
        (Err(e), Vec::new())
    })
}

/// Inflates a job's member into `out` (a buffer to reuse) and checks its
/// size and CRC-32, then decodes it if asked.
fn inflate_job(work: Work, mut out: Vec<u8>, threads: usize) -> (Result<Output>, Vec<Vec<u8>>) {
    let Work {
        name,
        compressed,
        size,
        crc,
        want,
    } = work;
    if let (Want::Any(options), 1) = (&want, threads) {
        // Straight into the array: no buffer of the member's size.
        match super::direct::read_any(&name, &compressed, size as u64, crc, options) {
            Ok(Some(any)) => return (Ok(Output::Any(any)), spent_with(compressed, out)),
            Err(e) => return (Err(e), spent_with(compressed, out)),
            // Values of zero size: handed over as bytes (below).
            Ok(None) => {}
        }
    }
    let compressed = match compressed.into_bytes(Vec::new()) {
        Ok(bytes) => bytes,
        Err(e) => return (Err(member_io_error(&name, e)), vec![out]),
    };
    let inflated = if threads > 1 {
        // May run on every core (`pinflate`), into memory of its own.
        inflate(&compressed, size).map(|(bytes, sum)| {
            let spare = std::mem::replace(&mut out, bytes);
            (spare, sum)
        })
    } else {
        inflate_reusing(&compressed, &mut out, size).map(|()| (Vec::new(), crc32fast::hash(&out)))
    };
    let mut spent = vec![compressed];
    let result = inflated
        .map_err(|e| member_io_error(&name, e))
        .and_then(|(spare, sum)| {
            spent.push(spare);
            if sum == crc {
                Ok(())
            } else {
                Err(Error::Archive(crate::error::ArchiveError::BadCrc {
                    name: name.clone(),
                }))
            }
        });
    let result = match (result, want) {
        (Err(e), _) => {
            spent.push(out);
            Err(e)
        }
        (Ok(()), Want::Bytes) => Ok(Output::Bytes(out)),
        // Values of no bytes cost memory the member's bytes do not bound
        // (2**20 empty strings from a few KiB): decoded by the caller when
        // it takes the member, never several ahead at once.
        (Ok(()), Want::Any(options)) if claims_zero_size(&out, &options) => Ok(Output::Bytes(out)),
        (Ok(()), Want::Any(options)) => {
            let any = read_inflated(&out, &options, |h, s| {
                crate::pickle::read_any(h, s, &options)
            })
            .map_err(|e| in_member(&name, e));
            spent.push(out);
            any.map(Output::Any)
        }
    };
    (result, spent)
}

/// Whether the `.npy` bytes' header declares values of zero size
/// (`|S0`, `<U0`, `|V0`, empty records or sub-arrays).
fn claims_zero_size(npy: &[u8], options: &ReadOptions) -> bool {
    crate::format::header::read_preamble(&mut &npy[..], options)
        .is_ok_and(|(header, _)| header.zero_size_count() > 0)
}

/// The buffers a job is done with: `out`, and the compressed bytes if
/// they were in memory.
fn spent_with(compressed: Compressed, out: Vec<u8>) -> Vec<Vec<u8>> {
    match compressed {
        Compressed::Bytes(bytes) => vec![bytes, out],
        Compressed::File { .. } => vec![out],
    }
}

/// Inflates the whole stream `compressed` into `out`, made exactly `size`
/// bytes: truncated if longer (no writes), grown with zeros if shorter
/// (only the new part is written), replaced by fresh memory if it has not
/// the room, so that a reused buffer costs no second pass.
fn inflate_reusing(compressed: &[u8], out: &mut Vec<u8>, size: usize) -> io::Result<()> {
    if out.capacity() < size {
        *out = fresh(size)?;
    }
    out.resize(size, 0);
    inflate_piece(compressed, out)
}

/// Reads the `.npy` file in `bytes` (a whole member, checked) with `read`,
/// as the archive reader reads a member from the archive: the header
/// parsed with `options`, the data from the bytes after it.
pub(super) fn read_inflated<A>(
    bytes: &[u8],
    options: &ReadOptions,
    read: impl FnOnce(&header::Header, &mut Source<'_>) -> Result<A>,
) -> Result<A> {
    let mut head = bytes;
    let (header, offset) = header::read_preamble(&mut head, options)?;
    read(&header, &mut Source::slice(&bytes[offset..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deflated(data: &[u8]) -> Vec<u8> {
        let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(6).unwrap());
        let mut out = vec![0u8; c.deflate_compress_bound(data.len())];
        let n = c.deflate_compress(data, &mut out).unwrap();
        out.truncate(n);
        out
    }

    fn job(data: &[u8], crc: u32) -> Work {
        Work {
            name: "m".into(),
            compressed: Compressed::Bytes(deflated(data)),
            size: data.len(),
            crc,
            want: Want::Bytes,
        }
    }

    fn bytes(out: Result<Output>) -> Result<Vec<u8>> {
        out.map(|o| match o {
            Output::Bytes(b) => b,
            Output::Any(_) => panic!("bytes asked for"),
        })
    }

    #[test]
    fn results_come_back_by_job_whoever_runs_them() {
        let members: Vec<Vec<u8>> = (0..9u32)
            .map(|k| {
                (0..300_000u32)
                    .map(|i| ((i * (k + 1)) >> 7) as u8)
                    .collect()
            })
            .collect();
        for threads in [1, 2, 4] {
            let mut pool = Pool::new(threads);
            let ids: Vec<JobId> = members
                .iter()
                .map(|m| pool.submit(job(m, crc32fast::hash(m))))
                .collect();
            // Taken out of order too.
            for &k in &[3usize, 0, 1, 2, 8, 4, 5, 6, 7] {
                assert!(bytes(pool.take(ids[k])).unwrap() == members[k]);
            }
            assert_eq!(pool.busy(), 0);
        }
    }

    #[test]
    fn wrong_crcs_and_broken_streams_are_the_member_errors() {
        let data = vec![7u8; 100_000];
        let mut pool = Pool::new(2);
        let a = pool.submit(job(&data, crc32fast::hash(&data) ^ 1));
        let mut broken = job(&data, crc32fast::hash(&data));
        if let Compressed::Bytes(bytes) = &mut broken.compressed {
            bytes.truncate(bytes.len() / 2);
        }
        let b = pool.submit(broken);
        let mut long = job(&data, crc32fast::hash(&data));
        long.size -= 1;
        let c = pool.submit(long);
        assert!(
            matches!(pool.take(a), Err(Error::Archive(crate::error::ArchiveError::BadCrc { ref name })) if name == "m")
        );
        assert!(matches!(
            pool.take(b),
            Err(Error::Archive(
                crate::error::ArchiveError::CorruptMember { .. }
            ))
        ));
        assert!(matches!(
            pool.take(c),
            Err(Error::Archive(
                crate::error::ArchiveError::CorruptMember { .. }
            ))
        ));
    }

    #[test]
    fn a_retired_pool_ends_its_threads_without_waiting_for_them() {
        let data: Vec<u8> = (0..2_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut pool = Pool::new(3);
        let ids: Vec<JobId> = (0..4)
            .map(|_| pool.submit(job(&data, crc32fast::hash(&data))))
            .collect();
        for &id in &ids {
            assert!(bytes(pool.take(id)).unwrap() == data);
        }
        assert!(!pool.workers.is_empty());
        let shared = Arc::downgrade(&pool.shared);
        pool.retire();
        // Each thread holds the shared state until it returns.
        while shared.upgrade().is_some() {
            std::thread::yield_now();
        }
    }

    #[test]
    fn cancelled_jobs_leave_nothing_waiting_and_drops_end_the_threads() {
        let data: Vec<u8> = (0..2_000_000u32).map(|i| (i % 253) as u8).collect();
        let mut pool = Pool::new(3);
        let ids: Vec<JobId> = (0..6)
            .map(|_| pool.submit(job(&data, crc32fast::hash(&data))))
            .collect();
        for &id in &ids[..5] {
            pool.cancel(id);
        }
        assert!(bytes(pool.take(ids[5])).unwrap() == data);
        // Running jobs finish and are dropped; nothing is left.
        while pool.busy() > 0 {
            std::thread::yield_now();
        }
        assert!(pool.shared.lock().done.is_empty());
        drop(pool);
    }
}
