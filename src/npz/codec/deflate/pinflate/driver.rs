//! The threads: chunks handed out in order, decoded on every thread, and
//! joined by whichever thread is free when the next one is ready.
//!
//! There is no thread of its own for joining: the resolver (`resolve.rs`)
//! is a token in the shared state. A free thread first advances the
//! resolver if it can (decoding up to the next chunk, or taking that
//! chunk once decoded), else decodes the next chunk, else waits. Chunks
//! are handed out at most `ahead` past the one the resolver waits for, so
//! that finished chunks waiting to be joined stay few (bounded memory).

use super::super::inflate_core::Bad;
use super::chunk::{decode_chunk, Buffers, Limits, Outcome};
use super::input::Input;
use super::key::{Key, Window, MAX_THREADS};
use super::memory::zeroed;
use super::resolve::{Finish, Resolver, Until};
use crc32fast::Hasher;
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// How a stream is cut and decoded.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    /// Threads in all, the caller's included.
    threads: usize,
    /// Compressed bytes per chunk.
    chunk: usize,
    /// Output symbols after which a chunk stops at the next boundary (the
    /// resolver decodes the rest of its range).
    cap: usize,
    /// Chunks handed out past the one the resolver waits for.
    ahead: usize,
    /// What a chunk may spend on false candidates ([`Limits::waste`]).
    waste: usize,
    /// Bytes read past a range ([`Limits::slack`]).
    slack: u64,
    /// The stream's compressed size.
    compressed: usize,
    /// The stream's inflated size.
    size: usize,
}

impl Plan {
    /// The plan for `compressed` bytes inflating to `size` on `threads`:
    /// chunks of about 4 MiB of output, from 256 KiB to 8 MiB compressed.
    /// Small enough that a chunk's buffer is still in the shared cache
    /// when its task copies it into the output (with 16 MiB chunks the
    /// copies cost more than the decoding on the 2-core machine), large
    /// enough that the block search and the markers at its start (about
    /// a millisecond) stay a few percent.
    pub(super) fn new(compressed: usize, size: usize, threads: usize) -> Plan {
        let threads = threads.clamp(1, MAX_THREADS);
        let plan = Plan {
            threads,
            chunk: 1,
            cap: 0,
            waste: 0,
            slack: u64::MAX,
            ahead: 2 * threads,
            compressed,
            size,
        };
        let chunk = plan.compressed_for(4 << 20).clamp(256 << 10, 8 << 20);
        plan.with_chunk(chunk)
    }

    /// Compressed bytes that inflate to about `out` bytes, at the
    /// stream's average ratio.
    fn compressed_for(&self, out: usize) -> usize {
        (out as u128 * self.compressed as u128 / self.size.max(1) as u128) as usize
    }

    /// The same plan for a stream read from a file a window at a time
    /// (`input.rs`): each chunk reads its range and as much again past
    /// it, from 64 KiB to [`SLACK`]; in memory, a chunk decodes past its
    /// range as far as it needs.
    pub(super) fn reading_file(self) -> Plan {
        let slack = (self.chunk as u64).clamp(64 << 10, SLACK);
        self.with_slack(slack)
    }

    /// The same plan reading `slack` bytes past each range (tests use
    /// tiny ones, so that chunks and the resolver run past the windows
    /// they read).
    pub(super) fn with_slack(mut self, slack: u64) -> Plan {
        self.slack = slack;
        self
    }

    /// The same plan with chunks of `chunk` compressed bytes (tests use
    /// tiny ones, so that every stream spans many chunks).
    pub(super) fn with_chunk(mut self, chunk: usize) -> Plan {
        self.chunk = chunk.max(1);
        // Room for four times a chunk's expected output, from 1 to 64 MiB.
        let expected = self.chunk as u128 * self.size as u128 / self.compressed.max(1) as u128;
        self.cap = (4 * expected).clamp(1 << 20, 64 << 20) as usize;
        // About one chunk's own decoding: what a chunk may spend looking
        // for its start before the resolver decodes its range instead.
        self.waste = expected.clamp(256 << 10, 16 << 20) as usize;
        self
    }
}

/// The most bytes read past a chunk's range when the stream is read from
/// a file a window at a time (`input.rs`): where its decoding must reach
/// the next boundary. zlib's blocks are tens of KiB, libdeflate's at most
/// a few hundred; a longer one makes the chunk fail, and the resolver
/// decode its range.
const SLACK: u64 = 1 << 20;

/// What the threads share.
struct State<'a> {
    /// The next chunk to hand out (chunk 0 is the resolver's own).
    next: usize,
    /// Decoded chunks waiting for the resolver, by index.
    results: Vec<Option<Outcome>>,
    /// The resolver, when no thread holds it.
    resolver: Option<Resolver<'a>>,
    /// The chunk the resolver takes next.
    wanted: usize,
    /// The real window before where the resolver stands, for the chunk it
    /// takes next, which may switch to bytes when it starts there.
    window: Option<(usize, Key, Window)>,
    /// Taken chunks to write into the output, with their CRC slot.
    tasks: VecDeque<(usize, Finish<'a>)>,
    /// CRC-32 of each piece of the output, in order (`None` while its
    /// task runs).
    crcs: Vec<Option<Hasher>>,
    /// Buffers of finished chunks.
    pool: Vec<Buffers>,
    /// How many sets of buffers exist in all (at most `ahead + threads`).
    buffers: usize,
    /// The last block is decoded.
    finished: bool,
    /// The first error: every thread stops.
    failed: Option<Bad>,
    /// Work chunks spent on nothing the output uses (false candidates,
    /// chunks dropped), in about one unit a decoded symbol.
    wasted: usize,
    /// Symbols of the chunks taken.
    used: usize,
}

/// The shared state and its signal.
struct Shared<'a> {
    /// The state.
    state: Mutex<State<'a>>,
    /// Signalled whenever the state changes in a way a waiting thread may
    /// act on.
    changed: Condvar,
    /// Set once no chunk being decoded can be used any more (the stream
    /// is done, a thread failed, or the rest is decoded sequentially):
    /// chunks ask it often and stop.
    stop: AtomicBool,
}

impl<'a> Shared<'a> {
    fn lock(&self) -> MutexGuard<'_, State<'a>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a thread does with the resolver, decided under the lock.
enum Step {
    /// Decode sequentially up to a boundary.
    Decode(Until),
    /// Join (or drop) a decoded chunk.
    Take(Outcome),
}

/// Inflates `data` into exactly `size` bytes by `plan`; gives them and
/// their CRC-32.
pub(super) fn inflate(data: &[u8], size: usize, plan: Plan) -> io::Result<(Vec<u8>, u32)> {
    // The caller checked `size` against deflate's largest expansion of
    // `data`; still refused here rather than allocated.
    if size as u64 > (data.len() as u64).saturating_mul(1032) + 1024 {
        return Err(Bad::TooLong.into_io());
    }
    let mut out = zeroed(size).ok_or(Bad::NoMemory.into_io())?;
    let crc = inflate_into(&Input::Bytes(data), &mut out, plan).map_err(Bad::into_io)?;
    Ok((out, crc))
}

/// Inflates `input` into exactly `out` by `plan`; gives the CRC-32.
pub(super) fn inflate_into(input: &Input, out: &mut [u8], plan: Plan) -> Result<u32, Bad> {
    inflate_counting(input, out, plan).0
}

/// [`inflate_into`], also giving the work the chunks spent (decoded
/// symbols, header checks and candidate set-ups, in about one unit a
/// symbol; the resolver's own decoding not counted): what the tests hold
/// to a multiple of the output's size.
pub(super) fn inflate_counting(
    input: &Input,
    out: &mut [u8],
    plan: Plan,
) -> (Result<u32, Bad>, usize) {
    let size = out.len();
    let count = input.len().div_ceil(plan.chunk as u64).max(1) as usize;
    let starts = |k: usize| (k as u64).saturating_mul(plan.chunk as u64 * 8);
    let shared = Shared {
        state: Mutex::new(State {
            next: 1,
            results: (0..count).map(|_| None).collect(),
            resolver: Some(Resolver::new(input, out, plan.slack)),
            wanted: 1,
            window: None,
            tasks: VecDeque::new(),
            crcs: Vec::new(),
            pool: Vec::new(),
            buffers: 0,
            finished: false,
            failed: None,
            wasted: 0,
            used: 0,
        }),
        changed: Condvar::new(),
        stop: AtomicBool::new(false),
    };
    let work = || {
        let _guard = PanicGuard(&shared);
        // This thread's window of the stream, when read from a file.
        let mut bytes = Vec::new();
        let mut s = shared.lock();
        loop {
            if s.failed.is_some() || (s.finished && s.tasks.is_empty()) {
                // Chunks still being decoded elsewhere are of no use.
                shared.stop.store(true, Ordering::Relaxed);
                return;
            }
            if let Some(step) = resolver_step(&mut s, count, starts) {
                let mut resolver = s.resolver.take().expect("checked by resolver_step");
                drop(s);
                let result = advance(&mut resolver, step);
                s = shared.lock();
                match result {
                    Ok(done) => done.record(&mut s),
                    Err(bad) => {
                        s.failed.get_or_insert(bad);
                    }
                }
                s.finished |= resolver.at.is_none();
                fall_back_if_wasted(&mut s, resolver.len, count, plan.waste, &shared.stop);
                if s.finished || s.failed.is_some() || s.wanted >= count {
                    shared.stop.store(true, Ordering::Relaxed);
                }
                if let (Some(at), true) = (resolver.at, s.wanted < count) {
                    let wanted = s.wanted;
                    s.window = resolver.window().map(|w| (wanted, at, w));
                }
                s.resolver = Some(resolver);
                shared.changed.notify_all();
                continue;
            }
            if let Some((slot, task)) = s.tasks.pop_front() {
                drop(s);
                let result = task.run();
                s = shared.lock();
                match result {
                    Ok((crc, buffers)) => {
                        s.crcs[slot] = Some(crc);
                        s.pool.push(buffers);
                    }
                    Err(bad) => {
                        s.failed.get_or_insert(bad);
                    }
                }
                shared.changed.notify_all();
                continue;
            }
            let may_allocate = s.buffers < plan.ahead + plan.threads;
            if s.next < count
                && s.next < s.wanted + plan.ahead
                && (!s.pool.is_empty() || may_allocate)
            {
                let k = s.next;
                s.next += 1;
                let buffers = s.pool.pop();
                s.buffers += buffers.is_none() as usize;
                drop(s);
                let limits = Limits {
                    until: starts(k + 1),
                    cap: plan.cap,
                    waste: plan.waste,
                    slack: plan.slack,
                };
                let window = |start: Key| {
                    let s = shared.lock();
                    let (index, at, window) = s.window.as_ref()?;
                    (*index == k && *at == start).then(|| window.clone())
                };
                let stop = || shared.stop.load(Ordering::Relaxed);
                let outcome = buffers.or_else(|| Buffers::new(plan.cap)).map(|b| {
                    let (from, to) = (starts(k), starts(k + 1));
                    decode_chunk(input, &mut bytes, from, to, limits, b, &window, &stop)
                });
                s = shared.lock();
                match outcome {
                    Some((outcome, wasted)) => {
                        s.wasted += wasted;
                        s.results[k] = Some(outcome);
                        // Judged here too, not only when the resolver moves:
                        // it may be waiting for another chunk meanwhile.
                        if let Some(resolver) = &s.resolver {
                            let len = resolver.len;
                            fall_back_if_wasted(&mut s, len, count, plan.waste, &shared.stop);
                        }
                    }
                    None => {
                        s.failed.get_or_insert(Bad::NoMemory);
                    }
                }
                shared.changed.notify_all();
                continue;
            }
            s = shared.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    };
    let helpers = crate::exec::scope(|scope| {
        for _ in 1..plan.threads.min(count) {
            // Fewer threads if the budget of cores or the system has none
            // to give: the chunks go to whoever takes them.
            if !scope.spawn("ndnpy-pinflate", work) {
                break;
            }
        }
        work();
    });
    let mut state = shared.state.into_inner().unwrap_or_else(|e| e.into_inner());
    if helpers.is_err() {
        // Recorded by its `PanicGuard` too, which stopped the others.
        state
            .failed
            .get_or_insert(Bad::Corrupt("an inflating thread panicked"));
    }
    let work = state.wasted + state.used;
    (finish(state, size), work)
}

/// The result of a run whose threads have all returned.
fn finish(state: State, size: usize) -> Result<u32, Bad> {
    if let Some(bad) = state.failed {
        return Err(bad);
    }
    let resolver = state.resolver.expect("returned by its last holder");
    if resolver.at.is_some() {
        return Err(Bad::Truncated);
    }
    if resolver.len != size {
        return Err(Bad::Short(resolver.len));
    }
    let mut crc = Hasher::new();
    for piece in state.crcs {
        crc.combine(&piece.expect("every task ran"));
    }
    Ok(crc.finalize())
}

/// Once chunks have wasted more than half the output decoded so far (plus
/// two chunks' budgets), the stream's blocks are not ones the finder finds
/// (fixed Huffman, or one block for the whole stream), or it was made to
/// defeat the search; either way parallel decoding does not pay: no chunk
/// is handed out or taken any more, chunks still running are told to stop,
/// and the resolver decodes on to the end.
fn fall_back_if_wasted(s: &mut State, len: usize, count: usize, waste: usize, stop: &AtomicBool) {
    if s.wasted > len / 2 + 2 * waste && s.wanted < count {
        s.wanted = count;
        s.next = count;
        stop.store(true, Ordering::Relaxed);
    }
}

/// What the resolver wrote or handed out in one step.
enum Done<'a> {
    /// Bytes it decoded, by their CRC-32.
    Decoded(Hasher),
    /// A chunk dropped, after decoding towards it (these bytes' CRC-32)
    /// or not: its buffers, and the symbols it had decoded (wasted).
    Dropped(Option<Hasher>, Buffers, usize),
    /// A chunk taken: the CRC-32 of what the resolver wrote before it (a
    /// decode up to the chunk), its rest (a task, or its buffers back),
    /// the CRC-32 of what the resolver wrote of it, and its symbols.
    Taken(Option<Hasher>, Result<Finish<'a>, Buffers>, Hasher, usize),
}

impl<'a> Done<'a> {
    /// Puts the CRC pieces in order, the task in the queue, the buffers
    /// in the pool.
    fn record(self, s: &mut State<'a>) {
        match self {
            Done::Decoded(crc) => s.crcs.push(Some(crc)),
            Done::Dropped(crc, buffers, decoded) => {
                s.wasted += decoded;
                s.crcs.extend(crc.map(Some));
                s.pool.push(buffers);
            }
            Done::Taken(before, task, after, decoded) => {
                s.used += decoded;
                s.crcs.extend(before.map(Some));
                match task {
                    Ok(task) => {
                        s.tasks.push_back((s.crcs.len(), task));
                        s.crcs.push(None);
                    }
                    Err(buffers) => s.pool.push(buffers),
                }
                s.crcs.push(Some(after));
            }
        }
    }
}

/// What the resolver can do next, if it is free and can make progress:
/// decode up to where chunk `wanted` may start, or take that chunk once
/// decoded (which moves `wanted` on).
fn resolver_step(s: &mut State, count: usize, starts: impl Fn(usize) -> u64) -> Option<Step> {
    let at = s.resolver.as_ref()?.at?;
    let target = if s.wanted < count {
        starts(s.wanted)
    } else {
        u64::MAX
    };
    if at.pos() < target {
        return Some(Step::Decode(Until::Chunk(target)));
    }
    let outcome = s.results.get_mut(s.wanted)?.take()?;
    s.wanted += 1;
    Some(Step::Take(outcome))
}

/// Carries out a resolver step.
fn advance<'a>(resolver: &mut Resolver<'a>, step: Step) -> Result<Done<'a>, Bad> {
    match step {
        Step::Decode(until) => resolver.decode(until).map(Done::Decoded),
        Step::Take(Outcome::Nothing(buffers)) => Ok(Done::Dropped(None, buffers, 0)),
        Step::Take(Outcome::Found(chunk)) => {
            let decoded = chunk.head().len() + chunk.tail().len();
            let at = resolver.at.expect("checked by resolver_step");
            let mut before = None;
            if chunk.start.pos() > at.pos() {
                // The finder missed a boundary (a fixed block, say): decode
                // on to the chunk's start, which is right if reached.
                before = Some(resolver.decode(Until::Reach(chunk.start.pos()))?);
            }
            if resolver.at != Some(chunk.start) {
                return Ok(Done::Dropped(before, chunk.buffers, decoded));
            }
            let (task, after) = resolver.append(chunk)?;
            Ok(Done::Taken(before, task, after, decoded))
        }
    }
}

/// Stops the other threads if this one panics (they would wait for it
/// forever); the scope then gives the panic as an error.
struct PanicGuard<'s, 'a>(&'s Shared<'a>);

impl Drop for PanicGuard<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut s = self.0.lock();
            s.failed
                .get_or_insert(Bad::Corrupt("an inflating thread panicked"));
            self.0.stop.store(true, Ordering::Relaxed);
            self.0.changed.notify_all();
        }
    }
}
