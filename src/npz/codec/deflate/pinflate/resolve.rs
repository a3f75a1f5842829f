//! Joining chunks into the output, in order, decoding sequentially
//! wherever a chunk cannot be trusted.
//!
//! The resolver stands at a boundary of the stream it has decoded truly:
//! from the stream's start, with the real window. A chunk decoded in
//! parallel is taken only if it started exactly there (same bit, same
//! kind of boundary); then, by induction, it decoded the true blocks. A
//! chunk that started anywhere else (a false candidate, a missed
//! boundary), or failed, is dropped, and the resolver decodes its range
//! itself. So a false positive of the block finder costs time, never a
//! wrong byte.
//!
//! Only the window has to be carried from chunk to chunk in order: the
//! resolver writes each taken chunk's last 32 KiB itself (markers replaced
//! from the window before it), and leaves the rest of the chunk to a
//! [`Finish`] task that any thread runs with a copy of that window. The
//! output is split as it goes (`split_at_mut`): the resolver keeps the
//! part from its window on, each task gets its own part.

use super::super::inflate_core::{Bad, WINDOW};
use super::super::inflate_core::{Inflater, Paused, Stop, Tables, MARGIN};
use super::chunk::{Buffers, Chunk, View, MARKER};
use super::input::Input;
use super::key::{Key, Window};
use crc32fast::Hasher;

/// The output from the resolver's window on, and where the true decoding
/// stands.
pub(super) struct Resolver<'a> {
    /// The compressed stream.
    input: &'a Input<'a>,
    /// The window of it being decoded, when read from a file.
    bytes: Vec<u8>,
    /// Bytes read past the boundary to decode to: enough for the block
    /// that crosses it, as a chunk reads ([`super::chunk::Limits::slack`]).
    slack: u64,
    /// The output from byte `base` on: its first `len - base` bytes are
    /// decoded (the window: all the output so far, or its last 32 KiB at
    /// least), the rest is to come.
    rest: &'a mut [u8],
    /// Where `rest` starts in the output.
    base: usize,
    /// Bytes of output decoded or handed to tasks.
    pub(super) len: usize,
    /// The boundary where decoding continues; `None` after the last
    /// block.
    pub(super) at: Option<Key>,
    /// Decoding tables, kept from one decode to the next.
    tables: Option<Box<Tables>>,
}

/// How far [`Resolver::decode`] goes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Until {
    /// To the first boundary at or past this bit where a chunk may start.
    Chunk(u64),
    /// To the first boundary at or past this bit, of any kind.
    Reach(u64),
}

/// The part of a taken chunk the resolver leaves to another thread: its
/// symbols but the last 32 KiB, markers to replace from `window`, into
/// `dst`.
pub(super) struct Finish<'a> {
    /// The chunk, whose symbols but the last 32 KiB are still to write.
    chunk: Chunk,
    /// The output before the chunk: its last 32 KiB, or all of it if
    /// shorter (a marker before it is a distance too far back).
    window: Vec<u8>,
    /// Where they go: the chunk's part of the output, but its last 32 KiB.
    dst: &'a mut [u8],
}

impl<'a> Resolver<'a> {
    /// A resolver at the start of `input`, decoding into `out` (exactly the
    /// declared size).
    pub(super) fn new(input: &'a Input<'a>, out: &'a mut [u8], slack: u64) -> Resolver<'a> {
        Resolver {
            input,
            bytes: Vec::new(),
            slack: slack.max(1),
            rest: out,
            base: 0,
            len: 0,
            at: Some(Key::Header(0)),
            tables: Some(Tables::new()),
        }
    }

    /// Decodes from where the resolver stands, into the output, until
    /// `until` (or the last block's end); gives the CRC-32 of what it
    /// wrote.
    ///
    /// The stream is read a window at a time: from where the resolver
    /// stands to `slack` bytes past the target, at most [`MAX_READ`]
    /// times that at once, at least twice [`MARGIN`]. Unless a window
    /// reaches the stream's end, the decoder stops between symbols
    /// [`MARGIN`] bytes before its end (more than a symbol or a block
    /// header needs, so nothing it decodes reads past it), and goes on in
    /// the next window from the very bit: no byte is decoded twice.
    pub(super) fn decode(&mut self, until: Until) -> Result<Hasher, Bad> {
        let mut crc = Hasher::new();
        let from = self.len - self.base;
        let mut pos = from;
        let target = match until {
            Until::Chunk(bit) | Until::Reach(bit) => bit,
        };
        let input = self.input;
        let mut bytes = std::mem::take(&mut self.bytes);
        // The decoder between windows, inside a block, and its bit.
        let mut paused: Option<(Paused, u64)> = None;
        let result = loop {
            let Some(at) = self.at else { break Ok(()) };
            let bit = paused.as_ref().map_or(at.pos(), |(_, bit)| *bit);
            let first = bit / 8;
            let last = (target / 8)
                .saturating_add(self.slack)
                .min(first.saturating_add(self.slack.saturating_mul(MAX_READ)))
                .max(first.saturating_add(2 * MARGIN as u64));
            let (data, whole) = match input.window(first, last, &mut bytes) {
                Ok(window) => window,
                Err(bad) => break Err(bad),
            };
            let view = View {
                data,
                base: first * 8,
                // (Shorter than asked only at the end: the stream's or the
                // file's. Taken as the end also if not, so that the
                // decoder always moves on.)
                whole: whole || data.len() < 2 * MARGIN,
            };
            let mut inflater = match paused.take() {
                Some((paused, bit)) => Inflater::resume(view.data, bit - view.base, paused),
                None => {
                    let tables = self.tables.take().unwrap_or_else(Tables::new);
                    match at.in_window(view.base) {
                        Key::Header(bit) => Inflater::at_header(view.data, bit, tables),
                        Key::Stored(bit) => match Inflater::in_stored(view.data, bit / 8, tables) {
                            Ok(inflater) => inflater,
                            Err((bad, tables)) => {
                                self.tables = Some(tables);
                                break Err(bad);
                            }
                        },
                    }
                }
            };
            if !view.whole {
                inflater.stop_input_at(view.data.len() - MARGIN);
            }
            let at_boundary = inflater.at_boundary();
            match self.decode_with(&mut inflater, &view, &mut pos, at_boundary, until) {
                Ok(true) => {
                    self.tables = Some(inflater.into_tables());
                    break Ok(());
                }
                Ok(false) => {
                    let bit = view.base + inflater.bits.position();
                    paused = Some((inflater.pause(), bit));
                }
                Err(bad) => {
                    self.tables = Some(inflater.into_tables());
                    break Err(bad);
                }
            }
        };
        self.bytes = bytes;
        crc.update(&self.rest[from..pos]);
        self.len = self.base + pos;
        result.map(|()| crc)
    }

    /// The loop of [`Resolver::decode`] in one window, writing `self.rest`
    /// from `*pos`, from a boundary (`at_boundary`) or not: `Ok(true)`
    /// once done, `Ok(false)` where the decoder stopped for the window's
    /// end.
    fn decode_with(
        &mut self,
        inflater: &mut Inflater,
        view: &View,
        pos: &mut usize,
        mut at_boundary: bool,
        until: Until,
    ) -> Result<bool, Bad> {
        loop {
            let stop = if at_boundary {
                at_boundary = false;
                Stop::Boundary
            } else {
                inflater.run(self.rest, pos, usize::MAX)?
            };
            match stop {
                // At the window's end; or, in a stored block that filled the
                // output, where the next call fails with `TooLong`.
                Stop::Full if !view.whole => return Ok(false),
                Stop::Full => {}
                Stop::End => {
                    self.at = None;
                    return Ok(true);
                }
                Stop::Boundary => {
                    // A stored block copied up to the window's end ends
                    // there: the next header is read in the next window.
                    let byte = inflater.bits.position() / 8;
                    if !view.whole && byte + MARGIN as u64 > view.data.len() as u64 {
                        return Ok(false);
                    }
                    let (key, may_start) = Key::at_boundary(inflater);
                    let key = key.in_stream(view.base);
                    let reached = match until {
                        Until::Chunk(bit) => may_start && key.pos() >= bit,
                        Until::Reach(bit) => key.pos() >= bit,
                    };
                    self.at = Some(key);
                    if reached {
                        return Ok(true);
                    }
                    inflater.begin_block()?;
                }
            }
        }
    }

    /// The real window before where the resolver stands (`None` before
    /// 32 KiB of output), for chunks still decoding that start there.
    pub(super) fn window(&self) -> Option<Window> {
        let end = self.len - self.base;
        let window: &[u8; WINDOW] = self
            .rest
            .get(end.checked_sub(WINDOW)?..end)?
            .try_into()
            .ok()?;
        Some(Window::new(*window))
    }

    /// Takes a chunk that starts where the resolver stands: writes its
    /// last 32 KiB (markers replaced from the window) and gives the CRC-32
    /// of those, and, for a longer chunk, the task that writes the rest
    /// (which comes first in the output), or the chunk's buffers back.
    pub(super) fn append(
        &mut self,
        chunk: Chunk,
    ) -> Result<(Result<Finish<'a>, Buffers>, Hasher), Bad> {
        debug_assert_eq!(Some(chunk.start), self.at);
        let n = chunk.head().len() + chunk.tail().len();
        let start = self.len - self.base;
        if n > self.rest.len() - start {
            return Err(Bad::TooLong);
        }
        // The window before the chunk (shorter at the stream's start).
        let have = start.min(WINDOW);
        let window = &self.rest[start - have..start];
        // The symbols the resolver writes: the chunk's last 32 KiB.
        let own = n.min(WINDOW);
        let mut bytes = [0u8; WINDOW];
        let mut crc = Hasher::new();
        resolve_into(&chunk, n - own..n, window, &mut bytes[..own])?;
        crc.update(&bytes[..own]);
        let window = window.to_vec();
        // Keep the output from the new window on (the chunk's last 32 KiB,
        // or more of the old window after a short chunk); a longer chunk's
        // first part goes to the task.
        let new_base = self.base.max((self.len + n).saturating_sub(WINDOW));
        let (before, kept) = std::mem::take(&mut self.rest).split_at_mut(new_base - self.base);
        let dst = before.get_mut(start..).unwrap_or_default();
        let own_at = self.len + n - own - new_base;
        kept[own_at..own_at + own].copy_from_slice(&bytes[..own]);
        self.rest = kept;
        self.base = new_base;
        self.len += n;
        self.at = chunk.end;
        let task = if n > own {
            Ok(Finish { chunk, window, dst })
        } else {
            Err(chunk.buffers)
        };
        Ok((task, crc))
    }
}

impl Finish<'_> {
    /// Writes the chunk's symbols but its last 32 KiB into the output;
    /// gives their CRC-32 and the chunk's buffers.
    pub(super) fn run(self) -> Result<(Hasher, Buffers), Bad> {
        let Finish { chunk, window, dst } = self;
        let mut crc = Hasher::new();
        // In pieces that stay in cache between writing and checksumming.
        let mut at = 0;
        for piece in dst.chunks_mut(PIECE) {
            resolve_into(&chunk, at..at + piece.len(), &window, piece)?;
            crc.update(piece);
            at += piece.len();
        }
        Ok((crc, chunk.buffers))
    }
}

/// The most the resolver reads at once, in units of the slack: the rest
/// of the stream, when no chunk can help, is read in pieces.
const MAX_READ: u64 = 64;

/// Bytes a [`Finish`] task writes and then checksums at a time.
const PIECE: usize = 128 << 10;

/// Writes symbols `range` of a chunk's output (head, then tail) into
/// `dst`, markers replaced from `window` (the output before the chunk, at
/// most 32 KiB; shorter only at the stream's start, where a marker before
/// it is an error).
fn resolve_into(
    chunk: &Chunk,
    range: std::ops::Range<usize>,
    window: &[u8],
    dst: &mut [u8],
) -> Result<(), Bad> {
    let (head, tail) = (chunk.head(), chunk.tail());
    let split = range.start.clamp(0, head.len())..range.end.min(head.len());
    let (dst_head, dst_tail) = dst.split_at_mut(split.len());
    let head = &head[split];
    if window.len() == WINDOW {
        // Every marker names a byte of the window.
        let window: &[u8; WINDOW] = window.try_into().expect("32 KiB");
        // Without branches: markers can be half the symbols (data that
        // repeats the window's bytes copies them on and on).
        for (o, &v) in dst_head.iter_mut().zip(head) {
            let from_window = window[v as usize & (WINDOW - 1)];
            *o = if v >= MARKER { from_window } else { v as u8 };
        }
    } else {
        let missing = WINDOW - window.len();
        for (o, &v) in dst_head.iter_mut().zip(head) {
            *o = if v < MARKER {
                v as u8
            } else {
                let i = (v - MARKER) as usize;
                if i < missing {
                    return Err(Bad::Corrupt("distance too far back"));
                }
                window[i - missing]
            };
        }
    }
    let from = range.start.saturating_sub(chunk.head().len());
    let to = range.end.saturating_sub(chunk.head().len());
    dst_tail.copy_from_slice(&tail[from..to]);
    Ok(())
}
