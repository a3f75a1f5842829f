//! A blocking `Read + Seek` over an object, so that the library's archive
//! reader (`ndnpy::NpzReader`: its zip directory parser, NumPy's lookup
//! rules, inflate and CRC checks) runs unchanged on remote bytes, and so
//! that the CLI reads objects as it reads files. It runs on a blocking
//! thread and waits for the runtime's GETs.
//!
//! Requests follow what the caller asks for:
//! - a read inside the span announced by the plan (the member about to be
//!   read) opens one streaming GET to the span's end;
//! - a read that continues where an earlier one ended, or a little past
//!   it (a sequential scan, skipping a zip extra field or a data
//!   descriptor), opens a streaming GET of a window that doubles from
//!   1 MiB to 64 MiB, so that a long scan costs few requests and a scan
//!   given up early leaves at most one window in transfer. Up to four
//!   scans are followed at once, so reads that take turns between places
//!   (two members compared chunk by chunk) each keep their stream;
//! - any other read of 64 KiB or more streams exactly its bytes;
//! - a smaller one fetches 64 KiB into a cache of a few ranges (the
//!   archive's tail, local headers, a `.npy` header).
//!
//! Streamed bytes are kept once read, the latest [`RECENT`] bytes of
//! them, so that a read that steps back into them (a second reader of the
//! same archive a little behind the first: the CLI reads local headers
//! through the library's buffer, and `.npy` headers itself) needs no
//! request: no byte is fetched twice while it is kept.
//!
//! Every fetch stops where the next cached or kept range starts. A
//! download's end ends only its span: the next read fetches again. Empty
//! body chunks are
//! skipped, and a read returns 0 only at the object's end: a body shorter
//! than its range is an error ([`StoreError::BadAnswer`]), never an early
//! end of file.

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
/// Streamed bytes kept after they are read, at most (the latest).
pub(crate) const RECENT: u64 = 16 << 20;
/// The first window of a sequential scan, and the largest.
const MIN_WINDOW: u64 = 1 << 20;
const MAX_WINDOW: u64 = 64 << 20;

/// A streaming GET of `start..end` being consumed.
struct Body {
    start: u64,
    end: u64,
    /// Object offset of `pending[0]`.
    pos: u64,
    pending: Bytes,
    stream: BoxStream<'static, crate::error::Result<Bytes>>,
}

impl Body {
    /// Whether a read at `at` is this body's: inside its span, not past
    /// the bytes it has pulled by more than a skip (a zip extra field, a
    /// data descriptor); reads behind `pos` are served from the bytes kept
    /// (`recent`).
    fn covers(&self, at: u64) -> bool {
        at >= self.start
            && at < self.end
            && at - self.start <= self.pos - self.start + self.pending.len() as u64 + MIN_FETCH
    }

    /// Makes `pending` hold at least one byte (the body is not at its
    /// end); a chunk that arrives goes to `recent` too, at its offset.
    /// Empty chunks are skipped: they are no end. A stream that ends
    /// before the span does is an error (the checked stream says so
    /// itself; after one of its errors it only ends).
    fn fill(&mut self, handle: &Handle, object: &Object, recent: &mut Recent) -> io::Result<()> {
        while self.pending.is_empty() {
            match handle.block_on(self.stream.next()) {
                Some(Ok(bytes)) => {
                    if !bytes.is_empty() {
                        recent.keep(self.pos, bytes.clone());
                    }
                    self.pending = bytes
                }
                Some(Err(e)) => return Err(e.into()),
                None => {
                    return Err(StoreError::BadAnswer {
                        path: object.name(),
                        asked: self.start..self.end,
                        got: format!("a body of {} bytes", self.pos - self.start),
                    }
                    .into())
                }
            }
        }
        Ok(())
    }
}

/// Streamed chunks kept after they are read (the latest, [`RECENT`] bytes
/// at most), by offset.
#[derive(Default)]
struct Recent {
    chunks: VecDeque<(u64, Bytes)>,
    bytes: u64,
}

impl Recent {
    fn keep(&mut self, at: u64, chunk: Bytes) {
        self.bytes += chunk.len() as u64;
        self.chunks.push_back((at, chunk));
        while self.bytes > RECENT {
            let (_, old) = self.chunks.pop_front().expect("counted");
            self.bytes -= old.len() as u64;
        }
    }
}

/// Copies from the first of `ranges` holding `at` into `buf`: the count.
fn copy_from<'a>(
    mut ranges: impl Iterator<Item = &'a (u64, Bytes)>,
    buf: &mut [u8],
    at: u64,
) -> Option<usize> {
    ranges.find_map(|(start, bytes)| {
        let end = start + bytes.len() as u64;
        (at >= *start && at < end).then(|| {
            let from = (at - start) as usize;
            let n = buf.len().min(bytes.len() - from);
            buf[..n].copy_from_slice(&bytes[from..from + n]);
            n
        })
    })
}

/// `Read + Seek` over one object by ranged GETs pinned to its first
/// answer's version (see the module's documentation for which GETs).
pub(crate) struct RangeReader {
    object: Object,
    handle: Handle,
    /// The `Read`/`Seek` cursor.
    pos: u64,
    cache: VecDeque<(u64, Bytes)>,
    recent: Recent,
    /// The scans in progress, the most recently read first: several, so
    /// that reads taking turns between two places (two members compared
    /// chunk by chunk, a scan with a header read now and then) each keep
    /// their stream.
    scans: VecDeque<Scan>,
    plan: Plan,
}

/// Reads that follow each other.
struct Scan {
    /// Where the last of them ended: a read starting there, or a little
    /// past it, continues the scan.
    end: u64,
    /// The length of its next window; 0 until a read continues it.
    window: u64,
    body: Option<Body>,
}

/// Scans followed at once.
const SCANS: usize = 4;

/// The span about to be read, shared with the owner of the archive reader
/// (which holds the reader inside `ndnpy::NpzReader`).
pub(crate) type Plan = std::sync::Arc<std::sync::Mutex<Option<Range<u64>>>>;

impl std::fmt::Debug for RangeReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RangeReader")
            .field("path", &self.object.path)
            .field("size", &self.object.size())
            .field("pos", &self.pos)
            .field(
                "cached",
                &self
                    .cache
                    .iter()
                    .map(|(at, b)| *at..*at + b.len() as u64)
                    .collect::<Vec<_>>(),
            )
            .field(
                "streaming",
                &self
                    .scans
                    .iter()
                    .filter_map(|s| s.body.as_ref().map(|b| b.pos..b.end))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl RangeReader {
    /// A reader of `object` holding `held` (bytes at their offset, from the
    /// first request), which waits for GETs on `handle`.
    pub(crate) fn new(
        object: Object,
        handle: Handle,
        held: (u64, Bytes),
        plan: Plan,
    ) -> RangeReader {
        let mut cache = VecDeque::new();
        if !held.1.is_empty() {
            cache.push_back(held);
        }
        RangeReader {
            object,
            handle,
            pos: 0,
            cache,
            recent: Recent::default(),
            scans: VecDeque::new(),
            plan,
        }
    }

    /// Announces the span about to be read (`None`: none), as the owner
    /// of an archive reader does for a member.
    pub(crate) fn set_plan(&self, span: Option<Range<u64>>) {
        *self.plan.lock().unwrap_or_else(|p| p.into_inner()) = span;
    }

    /// The object's size.
    pub(crate) fn size(&self) -> u64 {
        self.object.size()
    }

    /// The object's path, for messages.
    pub(crate) fn name(&self) -> String {
        self.object.name()
    }

    /// Reads into `buf` from object offset `at`, without moving the cursor.
    /// Returns 0 only for an empty `buf` or at (or past) the object's end.
    pub(crate) fn read_at(&mut self, buf: &mut [u8], at: u64) -> io::Result<usize> {
        let size = self.size();
        if buf.is_empty() || at >= size {
            return Ok(0);
        }
        let len = buf
            .len()
            .min(usize::try_from(size - at).unwrap_or(usize::MAX));
        let buf = &mut buf[..len];
        // The scan this read continues, moved to the front (a new one when
        // it continues none, the oldest forgotten).
        let continues = |s: &Scan| {
            let near = |from: u64| at >= from && at - from <= MIN_FETCH;
            near(s.end) || s.body.as_ref().is_some_and(|b| b.covers(at))
        };
        let scan = match self.scans.iter().position(continues) {
            Some(i) => {
                let mut scan = self.scans.remove(i).expect("found");
                scan.window = scan.window.max(MIN_WINDOW);
                scan
            }
            None => Scan {
                end: at,
                window: 0,
                body: None,
            },
        };
        self.scans.push_front(scan);
        self.scans.truncate(SCANS);
        let result = self.read_inner(buf, at);
        match &result {
            Ok(n) => {
                debug_assert!(*n > 0, "a read before the end returned nothing");
                self.scans[0].end = at + *n as u64;
            }
            Err(_) => {
                // Whatever it was streaming is in an unknown state.
                self.scans.pop_front();
            }
        }
        result
    }

    /// Fills all of `buf` from object offset `at`, without moving the
    /// cursor; `UnexpectedEof` (and no request) when it reaches past the
    /// object's end.
    pub(crate) fn read_exact_at(&mut self, buf: &mut [u8], at: u64) -> io::Result<()> {
        let size = self.size();
        if at
            .checked_add(buf.len() as u64)
            .is_none_or(|end| end > size)
        {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: a read of {} bytes at offset {at} ends past the object's end ({size} bytes)",
                    self.name(),
                    buf.len()
                ),
            ));
        }
        let mut filled = 0;
        while filled < buf.len() {
            let n = self.read_at(&mut buf[filled..], at + filled as u64)?;
            if n == 0 {
                // read_at returns 0 only at the end, which was checked.
                return Err(io::Error::other(format!(
                    "{}: no bytes at offset {} of {size}",
                    self.name(),
                    at + filled as u64
                )));
            }
            filled += n;
        }
        Ok(())
    }

    /// `buf` is not empty and lies inside the object; `scans[0]` is the
    /// scan this read belongs to.
    fn read_inner(&mut self, buf: &mut [u8], at: u64) -> io::Result<usize> {
        if let Some(n) = self.read_cached(buf, at) {
            return Ok(n);
        }
        if let Some(n) = self.read_body(buf, at)? {
            return Ok(n);
        }
        self.fetch(buf.len() as u64, at)?;
        if let Some(n) = self.read_cached(buf, at) {
            return Ok(n);
        }
        match self.read_body(buf, at)? {
            Some(n) => Ok(n),
            // A fetch always covers `at` with at least one byte.
            None => Err(io::Error::other(format!(
                "{}: nothing fetched at offset {at}",
                self.name()
            ))),
        }
    }

    /// Copies from the cached ranges, or the streamed bytes kept.
    fn read_cached(&self, buf: &mut [u8], at: u64) -> Option<usize> {
        copy_from(self.cache.iter(), buf, at)
            .or_else(|| copy_from(self.recent.chunks.iter().rev(), buf, at))
    }

    /// Copies from the scan's streaming body when it is at `at` (or a
    /// little before it: the bytes between are skipped, as past a zip
    /// extra field or a data descriptor), as much as `buf` takes or the
    /// body holds. `None` when there is no such body.
    fn read_body(&mut self, buf: &mut [u8], at: u64) -> io::Result<Option<usize>> {
        let scan = &mut self.scans[0];
        let Some(body) = scan.body.as_mut().filter(|b| b.pos <= at && b.covers(at)) else {
            return Ok(None);
        };
        let recent = &mut self.recent;
        while body.pos < at {
            body.fill(&self.handle, &self.object, recent)?;
            let k = (at - body.pos).min(body.pending.len() as u64) as usize;
            body.pending = body.pending.slice(k..);
            body.pos += k as u64;
        }
        body.fill(&self.handle, &self.object, recent)?;
        let n = buf.len().min(body.pending.len());
        buf[..n].copy_from_slice(&body.pending[..n]);
        body.pending = body.pending.slice(n..);
        body.pos += n as u64;
        if body.pos >= body.end {
            // This span is done; the next read at its end fetches again.
            scan.body = None;
        }
        Ok(Some(n))
    }

    /// Fetches bytes at `at` for a read of `want` bytes: a streaming GET
    /// for the scan (planned span, a scan's next window, a large read) or
    /// a cached GET of at least 64 KiB.
    fn fetch(&mut self, want: u64, at: u64) -> io::Result<()> {
        let size = self.size();
        // Stop where held bytes start: they need no request.
        let limit = self
            .cache
            .iter()
            .chain(self.recent.chunks.iter())
            .map(|(start, _)| *start)
            .filter(|start| *start > at)
            .fold(size, u64::min);
        let planned = {
            let plan = self.plan.lock().unwrap_or_else(|p| p.into_inner());
            plan.clone().filter(|p| p.contains(&at))
        };
        let scan = &mut self.scans[0];
        // A read that continues a scan (a new one has no window yet).
        let sequential = scan.window > 0;
        let stream_to = if let Some(plan) = planned {
            Some(plan.end)
        } else if sequential {
            let len = scan.window.max(want);
            scan.window = (scan.window * 2).min(MAX_WINDOW);
            Some(at.saturating_add(len))
        } else {
            (want >= MIN_FETCH).then(|| at.saturating_add(want))
        };
        match stream_to {
            Some(end) => {
                let end = end.min(limit);
                let stream = self
                    .handle
                    .block_on(self.object.stream(at..end))
                    .map_err(io::Error::from)?;
                self.scans[0].body = Some(Body {
                    start: at,
                    end,
                    pos: at,
                    pending: Bytes::new(),
                    stream,
                });
            }
            None => {
                let end = at.saturating_add(want.max(MIN_FETCH)).min(limit);
                let bytes = self
                    .handle
                    .block_on(self.object.get(at..end))
                    .map_err(io::Error::from)?;
                if self.cache.len() == KEEP {
                    self.cache.pop_front();
                }
                self.cache.push_back((at, bytes));
            }
        }
        Ok(())
    }
}

impl Read for RangeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RangeReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let size = self.size();
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

    fn stream_position(&mut self) -> io::Result<u64> {
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
