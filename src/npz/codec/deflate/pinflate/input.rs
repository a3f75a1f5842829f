//! Where the compressed stream is: in memory, or in the archive file,
//! read by position a window at a time.
//!
//! Why windows: a member of hundreds of MiB read whole into memory before
//! decoding is a copy into as many fresh pages, whose first touch costs
//! as much as a third of the decoding on 2 cores (BENCHMARKS.md, "Round
//! 8"). Read by position, each chunk reads only its own range (plus a
//! margin) into its thread's buffer, and the resolver only what it
//! decodes itself; both are in cache when decoded. A window is a plain
//! slice of the stream, so the decoder, the block finder and the resolver
//! work the same on either kind of input; the in-memory kind hands out
//! sub-slices (the whole rest of the stream unless a test asks for small
//! windows, so that the window logic runs on every test stream).

use super::super::inflate_core::Bad;
use std::fs::File;

/// The compressed stream.
pub(crate) enum Input<'a> {
    /// In memory.
    Bytes(&'a [u8]),
    /// Bytes `start..start + len` of a file.
    File {
        file: &'a File,
        start: u64,
        len: u64,
    },
}

impl Input<'_> {
    /// The stream's length in bytes.
    pub(super) fn len(&self) -> u64 {
        match self {
            Input::Bytes(data) => data.len() as u64,
            Input::File { len, .. } => *len,
        }
    }

    /// Bytes `from..to` of the stream (`to` clamped to its end): a slice
    /// of it in memory, or read into `buf` from the file (a buffer the
    /// caller reuses: it only grows, and is not zeroed again). A file
    /// that ends early gives fewer bytes (the decoder then finds the
    /// stream cut short); a failed read is an error. Also says whether
    /// the window is all there is from `from` on: it reaches the stream's
    /// end, or the file's.
    pub(super) fn window<'s>(
        &'s self,
        from: u64,
        to: u64,
        buf: &'s mut Vec<u8>,
    ) -> Result<(&'s [u8], bool), Bad> {
        let to = to.min(self.len());
        let from = from.min(to);
        let end = to == self.len();
        match self {
            Input::Bytes(data) => Ok((&data[from as usize..to as usize], end)),
            Input::File { file, start, .. } => {
                let n = (to - from) as usize;
                if buf.len() < n {
                    buf.try_reserve_exact(n - buf.len())
                        .map_err(|_| Bad::NoMemory)?;
                    buf.resize(n, 0);
                }
                let got = crate::io::fs::read_part_at(file, &mut buf[..n], start + from)
                    .map_err(|e| Bad::Read(e.kind()))?;
                Ok((&buf[..got], end || got < n))
            }
        }
    }
}
