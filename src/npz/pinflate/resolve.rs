//! Joining chunks into the output, in order, decoding sequentially
//! wherever a chunk cannot be trusted.
//!
//! The resolver owns the output (the member's declared size, exactly) and
//! stands at a boundary of the stream it has decoded truly: from the
//! stream's start, with the real window. A chunk decoded in parallel is
//! taken only if it started exactly there (same bit, same kind of
//! boundary); then, by induction, it decoded the true blocks, and its
//! markers are replaced by the bytes of the real window. A chunk that
//! started anywhere else (a false candidate, a missed boundary), or failed,
//! is dropped, and the resolver decodes its range itself. So a false
//! positive of the block finder costs time, never a wrong byte.

use super::block::Tables;
use super::chunk::{Chunk, MARKER};
use super::decode::{Inflater, Stop};
use super::{Bad, Key, WINDOW};

/// The output so far and where the true decoding stands.
pub(super) struct Resolver<'a> {
    data: &'a [u8],
    /// The member's bytes: `out[..len]` decoded.
    pub(super) out: Vec<u8>,
    pub(super) len: usize,
    /// The boundary where decoding continues; `None` after the last
    /// block.
    pub(super) at: Option<Key>,
    /// CRC-32 of `out[..len]`.
    pub(super) crc: crc32fast::Hasher,
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

impl<'a> Resolver<'a> {
    /// A resolver at the start of `data`, decoding into `out`.
    pub(super) fn new(data: &'a [u8], out: Vec<u8>) -> Resolver<'a> {
        Resolver {
            data,
            out,
            len: 0,
            at: Some(Key::Header(0)),
            crc: crc32fast::Hasher::new(),
            tables: Some(Tables::new()),
        }
    }

    /// Decodes from where the resolver stands, into the output, until
    /// `until` (or the last block's end).
    pub(super) fn decode(&mut self, until: Until) -> Result<(), Bad> {
        let Some(at) = self.at else {
            return Ok(());
        };
        let tables = self.tables.take().expect("tables");
        let mut inflater = match at {
            Key::Header(bit) => Inflater::at_header(self.data, bit, tables),
            Key::Stored(bit) => Inflater::in_stored(self.data, bit / 8, tables).map_err(|e| e.0)?,
        };
        let from = self.len;
        let result = self.decode_with(&mut inflater, at, until);
        self.crc.update(&self.out[from..self.len]);
        self.tables = Some(inflater.into_tables());
        result
    }

    /// The loop of [`Resolver::decode`].
    fn decode_with(&mut self, inflater: &mut Inflater, at: Key, until: Until) -> Result<(), Bad> {
        // Where decoding starts is a boundary too (unless inside a stored
        // block), and may already be far enough.
        let mut first = matches!(at, Key::Header(_));
        loop {
            let stop = if first {
                first = false;
                Stop::Boundary
            } else {
                inflater.run(&mut self.out, &mut self.len, usize::MAX)?
            };
            match stop {
                // Only from a stored block that filled the output: the
                // next call fails with `TooLong`.
                Stop::Full => {}
                Stop::End => {
                    self.at = None;
                    return Ok(());
                }
                Stop::Boundary => {
                    let (key, may_start) = Key::at_boundary(inflater);
                    let reached = match until {
                        Until::Chunk(bit) => may_start && key.pos() >= bit,
                        Until::Reach(bit) => key.pos() >= bit,
                    };
                    self.at = Some(key);
                    if reached {
                        return Ok(());
                    }
                    inflater.begin_block()?;
                }
            }
        }
    }

    /// Appends a chunk that starts where the resolver stands: its markers
    /// replaced from the window, its CRC-32 joined.
    pub(super) fn append(&mut self, chunk: &Chunk) -> Result<(), Bad> {
        debug_assert_eq!(Some(chunk.start), self.at);
        let (head, tail) = (chunk.head(), chunk.tail());
        let len = self.len;
        let end = len + head.len() + tail.len();
        if end > self.out.len() {
            return Err(Bad::TooLong);
        }
        let (window, rest) = self.out.split_at_mut(len);
        let (dst_head, dst_tail) = rest[..end - len].split_at_mut(head.len());
        if len >= WINDOW {
            // Every marker names a byte of the window.
            let window = &window[len - WINDOW..];
            for (o, &v) in dst_head.iter_mut().zip(head) {
                *o = if v < MARKER {
                    v as u8
                } else {
                    window[(v - MARKER) as usize]
                };
            }
        } else {
            // Near the start: a marker before the stream's first byte is
            // a distance too far back.
            for (o, &v) in dst_head.iter_mut().zip(head) {
                *o = if v < MARKER {
                    v as u8
                } else {
                    let back = WINDOW - (v - MARKER) as usize;
                    if back > len {
                        return Err(Bad::Corrupt("distance too far back"));
                    }
                    window[len - back]
                };
            }
        }
        dst_tail.copy_from_slice(tail);
        self.crc.update(dst_head);
        self.crc.combine(&chunk.tail_crc);
        self.len = end;
        self.at = chunk.end;
        Ok(())
    }
}
