//! A blocking `Read + Seek` over an object, so that the library's archive
//! reader (`ndnpy::NpzReader`: its zip directory parser, NumPy's lookup
//! rules, inflate and CRC checks) runs unchanged on remote bytes. It runs
//! on a blocking thread and waits for the runtime's GETs.
//!
//! Requests follow what the library asks for: a read outside what is held
//! fetches `max(read size, 64 KiB)` bytes at once (the directory is read in
//! one call of its exact size, so it costs one request), and a read inside
//! the span announced by [`RangeReader::plan`] (the member about to be
//! read) opens one streaming GET to the span's end, consumed as the
//! library reads.

use crate::error::StoreError;
use crate::object::Object;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use tokio::runtime::Handle;

/// Smallest fetch for a read outside the planned span.
const MIN_FETCH: u64 = 64 << 10;
/// Fetched ranges kept (the archive's tail, its first bytes, the last
/// local headers).
const KEEP: usize = 4;

/// A streaming GET being consumed.
struct Body {
    /// Object offset of `pending[0]`.
    pos: u64,
    pending: Bytes,
    stream: BoxStream<'static, crate::error::Result<Bytes>>,
}

pub(crate) struct RangeReader {
    object: Object,
    handle: Handle,
    pos: u64,
    cache: VecDeque<(u64, Bytes)>,
    body: Option<Body>,
    plan: Plan,
}

/// The span about to be read, shared with the owner of the archive reader
/// (which holds the reader inside `ndnpy::NpzReader`).
pub(crate) type Plan = std::sync::Arc<std::sync::Mutex<Option<Range<u64>>>>;

impl RangeReader {
    /// A reader of `object` holding `held` (bytes at their offset, from the
    /// first request), which waits for GETs on `handle`.
    pub(crate) fn new(
        object: Object,
        handle: Handle,
        held: (u64, Bytes),
        plan: Plan,
    ) -> RangeReader {
        RangeReader {
            object,
            handle,
            pos: 0,
            cache: VecDeque::from([held]),
            body: None,
            plan,
        }
    }

    /// The announced span, if the position is inside it.
    fn planned(&self) -> Option<Range<u64>> {
        let plan = self.plan.lock().unwrap_or_else(|p| p.into_inner());
        plan.clone().filter(|p| p.contains(&self.pos))
    }

    fn read_cached(&self, buf: &mut [u8]) -> Option<usize> {
        self.cache.iter().find_map(|(start, bytes)| {
            let end = start + bytes.len() as u64;
            (self.pos >= *start && self.pos < end).then(|| {
                let from = (self.pos - start) as usize;
                let n = buf.len().min(bytes.len() - from);
                buf[..n].copy_from_slice(&bytes[from..from + n]);
                n
            })
        })
    }

    fn read_body(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let Some(body) = self.body.as_mut().filter(|b| b.pos == self.pos) else {
            return Ok(None);
        };
        if body.pending.is_empty() {
            match self.handle.block_on(body.stream.next()) {
                Some(Ok(bytes)) => body.pending = bytes,
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(Some(0)),
            }
        }
        let n = buf.len().min(body.pending.len());
        buf[..n].copy_from_slice(&body.pending[..n]);
        body.pending = body.pending.slice(n..);
        body.pos += n as u64;
        Ok(Some(n))
    }
}

impl Read for RangeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let size = self.object.size();
        if buf.is_empty() || self.pos >= size {
            return Ok(0);
        }
        let n = if let Some(n) = self.read_cached(buf) {
            n
        } else if let Some(n) = self.read_body(buf)? {
            n
        } else if let Some(plan) = self.planned() {
            let end = plan.end.min(size);
            let stream = self
                .handle
                .block_on(self.object.stream(self.pos..end))
                .map_err(io::Error::from)?;
            self.body = Some(Body {
                pos: self.pos,
                pending: Bytes::new(),
                stream,
            });
            self.read_body(buf)?.unwrap_or(0)
        } else {
            let want = (buf.len() as u64).max(MIN_FETCH);
            let end = self.pos.saturating_add(want).min(size);
            let bytes = self
                .handle
                .block_on(self.object.get(self.pos..end))
                .map_err(io::Error::from)?;
            if self.cache.len() == KEEP {
                self.cache.pop_front();
            }
            self.cache.push_back((self.pos, bytes));
            self.read_cached(buf).unwrap_or(0)
        };
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RangeReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let size = self.object.size();
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::End(delta) => size.checked_add_signed(delta),
            SeekFrom::Current(delta) => self.pos.checked_add_signed(delta),
        };
        self.pos = target.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "seek to a negative offset")
        })?;
        Ok(self.pos)
    }
}

impl From<StoreError> for io::Error {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Io(e) => e,
            other => io::Error::other(other),
        }
    }
}
