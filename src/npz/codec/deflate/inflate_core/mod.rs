//! The library's one deflate decoder (RFC 1951): one bit reader
//! (`bits.rs`), one Huffman table builder (`huffman.rs`), one block
//! header reader (`block.rs`) and one block decoder (`decode.rs`) that
//! starts at any block boundary, with the 32 KiB window before it known
//! (bytes) or unknown (16-bit markers), and stops at every boundary with
//! its exact bit position.
//!
//! Three parts of `npz/` run it, where libdeflate (whole streams only)
//! and flate2 (no bit positions, no preset window for a raw stream
//! resumed mid-stream) cannot serve:
//!
//! - the parallel single-stream inflate (`pinflate/`), on the compressed
//!   member in memory or read from the archive file a window at a time,
//!   with the window unknown in chunks that start mid-stream;
//! - the seek index (`seek/index.rs`), through [`StreamInflater`]
//!   (`stream.rs`): compressed bytes read from the archive in chunks, the
//!   output in a buffer that keeps the window;
//! - the writer's `unfinalize` (`codec/deflate/compress.rs`), through [`last_block`]
//!   (`walk.rs`): where a complete stream's last block starts and ends,
//!   every symbol decoded into output of no size.
//!
//! Whole members are inflated by libdeflate and streamed by flate2, which
//! are faster there; this decoder accepts and refuses exactly the streams
//! they do (zlib's rules, `huffman.rs`). It imports nothing else of the
//! crate but `crate::io::checked`.

mod bits;
mod block;
mod decode;
mod huffman;
mod stream;
mod walk;

pub(crate) use bits::Bits;
#[cfg(test)]
pub(crate) use block::PRECODE_ORDER;
pub(crate) use block::{precode_complete, Tables};
pub(crate) use decode::{Inflater, Paused, Stop};
pub(crate) use stream::{StreamInflater, MARGIN};
pub(crate) use walk::last_block;

use std::io;

/// Deflate's window: how far back a distance reaches.
pub(crate) const WINDOW: usize = 32 * 1024;

/// What went wrong in a stream (mapped to `InvalidData` errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bad {
    /// Not a valid deflate stream.
    Corrupt(&'static str),
    /// More output than the declared size (or, inside a chunk, than its
    /// buffers hold).
    TooLong,
    /// The stream needs bits past the end of the input.
    Truncated,
    /// Memory for the output or a chunk's buffers could not be had.
    NoMemory,
    /// The stream ended after this many bytes, fewer than declared.
    Short(usize),
    /// Reading the compressed bytes from the archive failed.
    Read(io::ErrorKind),
}

impl Bad {
    /// The `io::Error` that says what went wrong.
    pub(crate) fn into_io(self) -> io::Error {
        let text = match self {
            Bad::Corrupt(why) => format!("corrupt deflate data ({why})"),
            Bad::TooLong => "deflate data inflates past the declared size".to_owned(),
            Bad::Truncated => "deflate data ends early".to_owned(),
            Bad::NoMemory => return io::Error::from(io::ErrorKind::OutOfMemory),
            Bad::Short(n) => format!("deflate data gave {n} bytes, fewer than declared"),
            Bad::Read(kind) => {
                return io::Error::new(kind, "reading the member's compressed bytes failed")
            }
        };
        io::Error::new(io::ErrorKind::InvalidData, text)
    }
}
