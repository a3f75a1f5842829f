//! The archive readers' buffered, position-aware input.

use std::fs::File;
use std::io::{self, BufRead, Read, Seek, SeekFrom};
use std::sync::Arc;

/// Where a member's compressed bytes start in the archive file, for
/// readers opened from a path (on Unix): a member decoded whole reads them
/// by positioned reads on every core ([`crate::io::fs::read_full_at`]), or
/// leaves them to the parallel inflate to read a window at a time,
/// rather than through the reader's stream on one.
#[derive(Clone)]
pub(crate) struct FileAt {
    pub(crate) file: Arc<File>,
    pub(crate) start: u64,
}

impl FileAt {
    /// Fills `buf` from the member's start; gives the count, fewer only
    /// where the file ends.
    pub(crate) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        crate::io::fs::read_full_at(&self.file, buf, self.start)
    }
}

/// A buffered reader that knows its position in the archive, so that
/// moving to a member that is already in the buffer costs nothing (reading
/// many small members one after another touches the file once per buffer,
/// not once per member). Reads as large as the buffer bypass it.
pub(crate) struct Input<R> {
    inner: R,
    buf: Box<[u8]>,
    /// File offset of `buf[0]`; the inner reader stands at `base + filled`.
    base: u64,
    pos: usize,
    filled: usize,
}

impl<R: Read + Seek> Input<R> {
    pub(crate) fn new(mut inner: R, capacity: usize) -> io::Result<Self> {
        let base = inner.stream_position()?;
        Ok(Input {
            inner,
            buf: vec![0; capacity].into_boxed_slice(),
            base,
            pos: 0,
            filled: 0,
        })
    }

    pub(crate) fn into_inner(self) -> R {
        self.inner
    }

    /// Moves to `offset`, inside the buffer when it can.
    fn seek_to(&mut self, offset: u64) -> io::Result<u64> {
        if offset >= self.base && offset <= self.base + self.filled as u64 {
            self.pos = (offset - self.base) as usize;
        } else {
            self.base = self.inner.seek(SeekFrom::Start(offset))?;
            self.pos = 0;
            self.filled = 0;
        }
        Ok(offset)
    }
}

impl<R: Read> Read for Input<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.filled && out.len() >= self.buf.len() {
            let n = self.inner.read(out)?;
            let n = crate::io::checked::checked_read_count(n, out.len())?;
            self.base += (self.filled + n) as u64;
            self.pos = 0;
            self.filled = 0;
            return Ok(n);
        }
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Input<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.filled {
            let n = loop {
                match self.inner.read(&mut self.buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other?,
                }
            };
            let n = crate::io::checked::checked_read_count(n, self.buf.len())?;
            self.base += self.filled as u64;
            self.pos = 0;
            self.filled = n;
        }
        Ok(&self.buf[self.pos..self.filled])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.filled);
    }
}

impl<R: Read + Seek> Seek for Input<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match pos {
            SeekFrom::Start(offset) => self.seek_to(offset),
            other => {
                // Relative seeks are not used by this module's callers;
                // resolve them through the inner reader.
                let here = self.base + self.pos as u64;
                self.inner.seek(SeekFrom::Start(here))?;
                self.base = self.inner.seek(other)?;
                self.pos = 0;
                self.filled = 0;
                Ok(self.base)
            }
        }
    }
}
