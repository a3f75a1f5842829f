//! bzip2 (method 12), as Python's `zipfile` writes it (`ZIP_BZIP2`): one
//! bzip2 stream, decoded as it is read by libbzip2 (the `bzip2` crate on
//! `bzip2-sys`, the C library Python uses). Memory is the decoder's, at
//! most about 3.6 MB whatever the member claims (bzip2's largest block is
//! 900 kB).
//! The stream ends the member, as for Python's `BZ2Decompressor`: bytes
//! after it are ignored, and a member shorter than declared is cut short;
//! compressed bytes that end before the stream does are corrupt.

use super::decode::{corrupt, Decode, Raw};
use std::io::{self, BufRead};

/// A bzip2 member streamed on this thread.
pub(super) struct Bzip2<'a, R: BufRead> {
    raw: Raw<'a, R>,
    state: bzip2::Decompress,
    ended: bool,
}

impl<'a, R: BufRead> Bzip2<'a, R> {
    pub(super) fn new(raw: Raw<'a, R>) -> Self {
        Bzip2 {
            raw,
            // The fast decoder (`small` false): its memory is bounded by
            // the stream's block size all the same.
            state: bzip2::Decompress::new(false),
            ended: false,
        }
    }
}

// SAFETY: `fill_whole` is the trait's own, which never succeeds.
unsafe impl<R: BufRead> Decode for Bzip2<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        loop {
            if self.ended {
                return Ok((0, None));
            }
            let (consumed, produced, status, eof) = {
                let chunk = self.raw.fill_buf()?;
                let eof = chunk.is_empty();
                let (in_before, out_before) = (self.state.total_in(), self.state.total_out());
                let status = self
                    .state
                    .decompress(chunk, out)
                    .map_err(|e| corrupt(format!("corrupt bzip2 data ({e})")))?;
                (
                    (self.state.total_in() - in_before) as usize,
                    (self.state.total_out() - out_before) as usize,
                    status,
                    eof,
                )
            };
            self.raw.consume(consumed);
            match status {
                bzip2::Status::StreamEnd => {
                    self.ended = true;
                    return Ok((produced, None));
                }
                bzip2::Status::MemNeeded => {
                    return Err(io::Error::from(io::ErrorKind::OutOfMemory));
                }
                _ if produced > 0 => return Ok((produced, None)),
                // No progress on the last input: the stream is cut short
                // (bzip2 gives nothing of a block until all of it came).
                _ if eof && consumed == 0 => {
                    return Err(corrupt("its bzip2 stream ends early"));
                }
                _ => {}
            }
        }
    }
}
