//! What the parts of the parallel inflate share: a place where decoding
//! can start ([`Key`]), the window handed from chunk to chunk, and the cap
//! on threads. Apart from `mod.rs`, which holds the entry points and
//! imports the parts, so that the parts import this and not the entry
//! points (no circle of files).

use super::super::inflate_core::{Inflater, WINDOW};

/// The real 32 KiB before a point of the output, shared between threads.
pub(super) type Window = std::sync::Arc<[u8; WINDOW]>;

/// At most this many threads, whatever the cores (as the read-ahead of
/// ndnpy's own pieces, `ahead.rs`).
pub(super) const MAX_THREADS: usize = 8;

/// A place in the stream where decoding can start: a block boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    /// The block header at this bit (any block but a stored one that is
    /// not the last).
    Header(u64),
    /// Inside a stored block that is not the last, at its LEN field
    /// (this bit, a byte boundary): the header before it may sit at
    /// several bits, because of the padding, so the LEN field names it.
    Stored(u64),
}

impl Key {
    /// The bit this key names.
    pub(super) fn pos(self) -> u64 {
        match self {
            Key::Header(bit) | Key::Stored(bit) => bit,
        }
    }

    /// The same boundary named in the stream, for a key found in a
    /// window of it that starts `base` bits in ([`Key::pos`] counting
    /// from the window's start).
    pub(super) fn in_stream(self, base: u64) -> Key {
        self.map(|bit| bit + base)
    }

    /// The same boundary named in a window of the stream that starts
    /// `base` bits in (at or before it).
    pub(super) fn in_window(self, base: u64) -> Key {
        self.map(|bit| bit - base)
    }

    fn map(self, f: impl Fn(u64) -> u64) -> Key {
        match self {
            Key::Header(bit) => Key::Header(f(bit)),
            Key::Stored(bit) => Key::Stored(f(bit)),
        }
    }

    /// The key of the boundary a decoder stands at, and whether a chunk
    /// may start there: a dynamic or stored block that is not the last,
    /// which is what the block finder looks for.
    pub(super) fn at_boundary(inflater: &mut Inflater) -> (Key, bool) {
        let bit = inflater.bits.position();
        let header = inflater.peek_header();
        let may_start = !header.last && (header.kind == 0 || header.kind == 2);
        if !header.last && header.kind == 0 {
            (Key::Stored((bit + 3).div_ceil(8) * 8), may_start)
        } else {
            (Key::Header(bit), may_start)
        }
    }
}
