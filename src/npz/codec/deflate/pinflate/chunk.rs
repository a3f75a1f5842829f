//! Decoding one chunk of a stream without its window: from the first
//! candidate block start in the chunk's range that decodes, up to the
//! first boundary at or after the next chunk's range where that chunk
//! could start (so that, when both are right, one ends exactly where the
//! other begins).
//!
//! The output begins as 16-bit symbols in a buffer that starts with the
//! 32 768 window markers (`inflate_core/decode.rs`); as soon as the last 32 KiB decoded
//! hold no marker, nothing later can reach one, and decoding goes on in
//! bytes. Markers are replaced once the window is known (`resolve.rs`).

use super::super::inflate_core::WINDOW;
use super::super::inflate_core::{Inflater, Stop, Tables};
use super::finder::Finder;
use super::input::Input;
use super::key::{Key, Window};
use super::memory::zeroed;

/// One chunk's output buffers, reused from chunk to chunk (fresh memory
/// costs page faults; these are written before they are read, so they are
/// zeroed only once, when allocated).
pub(super) struct Buffers {
    /// 16-bit symbols: [`WINDOW`] markers, then the output up to the
    /// switch to bytes.
    pub(super) head: Vec<u16>,
    /// Bytes: [`WINDOW`] bytes of window (the last of `head`), then the
    /// output after the switch.
    pub(super) tail: Vec<u8>,
    /// Tables for the decoder (taken while a candidate is decoded).
    tables: Option<Box<Tables>>,
    /// Tables the block finder checks candidate headers with.
    scratch: Option<Box<Tables>>,
}

impl Buffers {
    /// Buffers for chunks of up to `cap` output symbols: the buffers hold
    /// `cap` plus a margin of 4 MiB (what a block that ends past the cap
    /// may still add) before a chunk is given up. `None` if memory cannot
    /// hold them.
    pub(super) fn new(cap: usize) -> Option<Buffers> {
        let len = WINDOW + cap + MARGIN;
        let mut head: Vec<u16> = zeroed(len)?;
        // The window's markers, written once: decoding writes the head
        // only from `WINDOW` on, so they hold for every candidate and
        // every chunk these buffers serve. (Written per candidate, they
        // made each rejected candidate cost 32 768 stores: a stream
        // crafted to be full of candidates burnt 66x the sequential time.)
        for (i, m) in head[..WINDOW].iter_mut().enumerate() {
            *m = MARKER + i as u16;
        }
        Some(Buffers {
            head,
            tail: zeroed(len)?,
            tables: Some(Tables::new()),
            scratch: Some(Tables::new()),
        })
    }
}

/// Output past the soft cap a chunk may reach inside the block where it
/// crosses it.
const MARGIN: usize = 4 << 20;

/// A chunk decoded: from `start` to `end`, its output in `buffers`
/// (`head[WINDOW..head_end]`, then `tail[WINDOW..tail_end]`).
pub(super) struct Chunk {
    /// The candidate it was decoded from.
    pub(super) start: Key,
    /// Where decoding stopped: a boundary, or `None` after the last block.
    pub(super) end: Option<Key>,
    /// The end of the 16-bit output in `buffers.head`.
    pub(super) head_end: usize,
    /// The end of the byte output in `buffers.tail`.
    pub(super) tail_end: usize,
    /// The buffers holding the output, back to the pool once written.
    pub(super) buffers: Buffers,
}

impl Chunk {
    /// The 16-bit part of the output (markers possible).
    pub(super) fn head(&self) -> &[u16] {
        &self.buffers.head[WINDOW..self.head_end]
    }

    /// The byte part of the output.
    pub(super) fn tail(&self) -> &[u8] {
        &self.buffers.tail[WINDOW..self.tail_end]
    }
}

/// What decoding a chunk gave.
pub(super) enum Outcome {
    /// A candidate decoded to the chunk's end.
    Found(Chunk),
    /// No candidate decoded, or the chunk failed after one did (corrupt
    /// data, or over its cap): the resolver decodes its range itself.
    Nothing(Buffers),
}

/// Where chunk decoding stops.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Stop at the first boundary at or past this bit where a chunk may
    /// start ([`Key::may_start_chunk`]).
    pub(super) until: u64,
    /// Or at the first boundary after this many output symbols.
    pub(super) cap: usize,
    /// The work a chunk may spend on candidates that turn out not to be
    /// block starts before it gives up (the resolver then decodes its
    /// range sequentially), in units of about one decoded symbol.
    pub(super) waste: usize,
    /// Bytes read past the range: where decoding must reach the next
    /// boundary, or the chunk fails ([`decode_chunk`]).
    pub(super) slack: u64,
}

/// What trying one candidate costs beyond the symbols it decodes, in the
/// units of [`Limits::waste`] (about a decoded symbol each): setting up the
/// decoder and reading the header again, which for a dynamic header builds
/// its tables (a few thousand entries); a stored candidate with `LEN = 0`
/// followed by an invalid header decodes nothing, yet is not free.
const ATTEMPT_COST: usize = 1024;

/// Decodes the chunk whose candidates lie in bits `from..to` of `input`
/// (read into `bytes`, the thread's buffer, if from a file).
///
/// It reads only a window of the stream: from [`LOOK_BACK`] bytes before
/// `from` to [`Limits::slack`] bytes past `to`. A chunk whose last block ends
/// past the window (or so near its end that the next header is not all
/// in it) fails like one that runs into corrupt data: the resolver
/// decodes its range.
///
/// `window` gives the real window before a start, once the resolver knows
/// it (the chunks before are joined and end there): the decoder asks at
/// its start and every 128 K symbols, and from then on decodes in bytes.
///
/// `stop` says when the chunk is no longer wanted (the stream is done, an
/// error stopped the others, or the inflate fell back to one thread): it
/// is asked between candidates and every 128 K symbols, and a chunk told
/// to stop gives [`Outcome::Nothing`]. Gives the outcome and the work
/// spent on anything but the outcome's own output (in the units of
/// [`Limits::waste`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn decode_chunk(
    input: &Input,
    bytes: &mut Vec<u8>,
    from: u64,
    to: u64,
    limits: Limits,
    mut buffers: Buffers,
    window: &dyn Fn(Key) -> Option<Window>,
    stop: &dyn Fn() -> bool,
) -> (Outcome, usize) {
    let first = (from / 8).saturating_sub(LOOK_BACK);
    let last = (to / 8).saturating_add(limits.slack);
    let (found, wasted) = match input.window(first, last, bytes) {
        Ok((data, whole)) => {
            let view = View {
                data,
                base: first * 8,
                whole,
            };
            find_and_decode(&view, from, to, limits, &mut buffers, window, stop)
        }
        // The resolver reads the range again, and reports the error.
        Err(_) => (None, 0),
    };
    let outcome = match found {
        Some((start, (end, head_end, tail_end))) => Outcome::Found(Chunk {
            start,
            end,
            head_end,
            tail_end,
            buffers,
        }),
        None => Outcome::Nothing(buffers),
    };
    (outcome, wasted)
}

/// Bytes read before a chunk's range: what the block finder may look at
/// before a candidate.
const LOOK_BACK: u64 = 64;

/// A window of the stream that a chunk (or the resolver) decodes.
pub(super) struct View<'d> {
    /// The window's bytes.
    pub(super) data: &'d [u8],
    /// Where it starts in the stream, in bits.
    pub(super) base: u64,
    /// It reaches the stream's end.
    pub(super) whole: bool,
}

impl View<'_> {
    /// Whether a boundary at window bit `bit` has its header in the
    /// window, with room for a stored block's lengths: otherwise the
    /// decoder reads zeros past the window for it.
    pub(super) fn holds_header_at(&self, bit: u64) -> bool {
        self.whole || bit / 8 + 16 <= self.data.len() as u64
    }
}

/// The search and the decoding of [`decode_chunk`], on a window; gives
/// the chunk's start, end (in the stream's bits) and output ends, and
/// the work wasted.
#[allow(clippy::type_complexity)]
fn find_and_decode(
    view: &View,
    from: u64,
    to: u64,
    limits: Limits,
    buffers: &mut Buffers,
    window: &dyn Fn(Key) -> Option<Window>,
    stop: &dyn Fn() -> bool,
) -> (Option<(Key, (Option<Key>, usize, usize))>, usize) {
    // Everything spent on candidates that were not block starts (the
    // search, header checks, decoder set-ups, symbols decoded from them)
    // is bounded, so that a hostile stream full of near-valid headers, or
    // one with no block the search finds, costs at most about one chunk's
    // decoding more, whatever it holds.
    let base = view.base;
    let scratch = buffers.scratch.take().expect("scratch");
    let mut finder = Finder::new(view.data, from - base, to - base, limits.waste, scratch);
    let in_stream = |key: Key| window(key.in_stream(base));
    let mut found = None;
    while let Some(start) = finder.next_candidate() {
        finder.charge(ATTEMPT_COST);
        if stop() {
            break;
        }
        let tables = buffers.tables.take().expect("tables");
        // The candidate may spend what is left of the budget.
        let waste = limits.waste.saturating_sub(finder.spent());
        let tried = Limits {
            waste,
            until: limits.until - base,
            ..limits
        };
        match attempt(view, start, tried, buffers, tables, &in_stream, stop) {
            Attempt::Done((end, head_end, tail_end)) => {
                let end = end.map(|key| key.in_stream(base));
                found = Some((start.in_stream(base), (end, head_end, tail_end)));
                break;
            }
            Attempt::Rejected(symbols) => finder.charge(symbols),
            Attempt::Failed(symbols) => {
                finder.charge(symbols);
                break;
            }
        }
    }
    let wasted = finder.spent();
    buffers.scratch = Some(finder.into_tables());
    (found, wasted)
}

/// How decoding from one candidate went.
enum Attempt {
    /// Decoded to its end (boundary or last block), the head's and the
    /// tail's ends.
    Done((Option<Key>, usize, usize)),
    /// Not a block start after all; this many symbols were decoded.
    Rejected(usize),
    /// Accepted, then failed (corrupt data, over the cap) or told to
    /// stop; this many symbols were decoded.
    Failed(usize),
}

/// Decodes from candidate `start`. The candidate is accepted once a block
/// after it has begun (a whole block decoded and the next header read);
/// an error before that rejects it.
fn attempt(
    view: &View,
    start: Key,
    limits: Limits,
    buffers: &mut Buffers,
    tables: Box<Tables>,
    window: &dyn Fn(Key) -> Option<Window>,
    stop: &dyn Fn() -> bool,
) -> Attempt {
    let mut inflater = match start {
        Key::Header(bit) => {
            let mut inflater = Inflater::at_header(view.data, bit, tables);
            if inflater.begin_block().is_err() {
                buffers.tables = Some(inflater.into_tables());
                return Attempt::Rejected(0);
            }
            inflater
        }
        Key::Stored(bit) => match Inflater::in_stored(view.data, bit / 8, tables) {
            Ok(inflater) => inflater,
            Err((_, tables)) => {
                buffers.tables = Some(tables);
                return Attempt::Rejected(0);
            }
        },
    };
    let result = decode_from(&mut inflater, view, start, limits, buffers, window, stop);
    buffers.tables = Some(inflater.into_tables());
    match result {
        Ok(done) => Attempt::Done(done),
        Err((false, symbols)) => Attempt::Rejected(symbols),
        Err((true, symbols)) => Attempt::Failed(symbols),
    }
}

/// The decoding loop of [`attempt`]. On error: whether the candidate had
/// been accepted, and the symbols decoded.
fn decode_from(
    inflater: &mut Inflater,
    view: &View,
    start: Key,
    limits: Limits,
    buffers: &mut Buffers,
    window: &dyn Fn(Key) -> Option<Window>,
    stop: &dyn Fn() -> bool,
) -> Result<(Option<Key>, usize, usize), (bool, usize)> {
    // The markers in `head[..WINDOW]` were written with the buffers, and
    // decoding writes the head only from `WINDOW` on.
    let Buffers { head, tail, .. } = buffers;
    let mut head_end = WINDOW;
    let mut tail_end = WINDOW;
    // The head up to `scanned` has been looked at for markers; the last
    // one found is just before `clean_from`.
    let mut scanned = WINDOW;
    let mut clean_from = WINDOW;
    let mut in_bytes = false;
    let mut accepted = false;
    let mut known = window(start);
    loop {
        if let (false, Some(window)) = (in_bytes, known.take()) {
            // The real window is known (the chunks before are joined, and
            // this one starts where they end): the markers so far are
            // replaced, and decoding goes on in bytes.
            tail[..WINDOW].copy_from_slice(&window[..]);
            let n = head_end - WINDOW;
            for (b, &v) in tail[WINDOW..WINDOW + n]
                .iter_mut()
                .zip(&head[WINDOW..head_end])
            {
                let from_window = window[v as usize & (WINDOW - 1)];
                *b = if v >= MARKER { from_window } else { v as u8 };
            }
            tail_end = WINDOW + n;
            head_end = WINDOW;
            in_bytes = true;
            #[cfg(test)]
            SWITCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        if stop() {
            // Treated as accepted: the chunk is given up, not the
            // candidate.
            return Err((true, head_end + tail_end - 2 * WINDOW));
        }
        let step = if in_bytes {
            // A soft stop every 128 K symbols only to ask `stop`: a block
            // that runs past the buffer fails (`TooLong`), and the cap is
            // checked at boundaries.
            let soft = tail_end + 4 * WINDOW;
            inflater.run(&mut tail[..], &mut tail_end, soft)
        } else {
            // Stops every 128 K symbols to look for markers.
            let soft = head_end + 4 * WINDOW;
            let step = inflater.run(&mut head[..], &mut head_end, soft);
            if let Some(i) = head[scanned..head_end].iter().rposition(|&v| v >= MARKER) {
                clean_from = scanned + i + 1;
            }
            scanned = head_end;
            if head_end - clean_from >= WINDOW {
                // No marker in the last 32 KiB: none can appear again.
                for (b, &v) in tail[..WINDOW]
                    .iter_mut()
                    .zip(&head[head_end - WINDOW..head_end])
                {
                    *b = v as u8;
                }
                in_bytes = true;
            } else {
                known = window(start);
            }
            step
        };
        let produced = head_end + tail_end - 2 * WINDOW;
        if !accepted && produced > limits.waste {
            // A candidate whose first block outruns what is left of the
            // budget is given up, as one that fails would be.
            return Err((false, produced));
        }
        match step {
            Err(_) => return Err((accepted, produced)),
            Ok(Stop::Full) => {}
            Ok(Stop::End) => return Ok((None, head_end, tail_end)),
            Ok(Stop::Boundary) => {
                let (key, may_start) = Key::at_boundary(inflater);
                if !view.holds_header_at(key.pos()) {
                    // The next block is past the window: as if corrupt.
                    return Err((accepted, produced));
                }
                if (may_start && key.pos() >= limits.until) || produced >= limits.cap {
                    return Ok((Some(key), head_end, tail_end));
                }
                if inflater.begin_block().is_err() {
                    return Err((accepted, produced));
                }
                // A whole block decoded and the next header read.
                accepted = true;
            }
        }
    }
}

/// How many chunks switched to bytes on a window from the resolver (for
/// tests: the path is taken).
#[cfg(test)]
pub(super) static SWITCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The first marker: `MARKER + i` stands for byte `i` of the unknown
/// 32 KiB window (byte 0 the oldest).
pub(super) const MARKER: u16 = 0x8000;
