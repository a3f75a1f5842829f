//! An object in the store DataFusion was given, as the `Read + Seek` the
//! library's `NpzReader` reads archives through: each read outside the
//! bytes held becomes one ranged GET of a window from that position, small
//! (4 KiB) after a seek and doubling while reads continue one another, so
//! opening an archive costs its tail, central directory and members'
//! headers, and a member read whole streams by windows of up to 64 MiB. Runs on a blocking thread (`spawn_blocking`), whose
//! GETs wait on the runtime's handle.

use bytes::Bytes;
use object_store::{path::Path, ObjectStore, ObjectStoreExt};
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Arc;
use tokio::runtime::Handle;

/// The GET after a seek: a member's local and `.npy` headers fit, so
/// reading headers costs little beyond them.
const MIN_WINDOW: u64 = 4 << 10;
/// The largest GET: a whole member read in one `read` call is fetched in
/// windows of this size rather than all at once.
const MAX_WINDOW: u64 = 64 << 20;

/// A `Read + Seek` over `path` in `store`, `size` bytes long.
pub(crate) struct RangeReader {
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
    pos: u64,
    /// The window last fetched and where it starts.
    held: (u64, Bytes),
    /// The size of the next GET that continues the last one.
    window: u64,
    handle: Handle,
}

impl RangeReader {
    /// A reader at offset 0; `handle` runs its GETs.
    pub(crate) fn new(store: Arc<dyn ObjectStore>, path: Path, size: u64, handle: Handle) -> Self {
        RangeReader {
            store,
            path,
            size,
            pos: 0,
            held: (0, Bytes::new()),
            window: MIN_WINDOW,
            handle,
        }
    }
}

impl Read for RangeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let (start, bytes) = &self.held;
        let end = start + bytes.len() as u64;
        if self.pos < *start || self.pos >= end {
            self.window = if self.pos == end && end > 0 {
                (self.window * 2).min(MAX_WINDOW)
            } else {
                MIN_WINDOW
            };
            let want = (buf.len() as u64).clamp(self.window, MAX_WINDOW);
            let range = self.pos..(self.pos.saturating_add(want)).min(self.size);
            let store = self.store.clone();
            let path = self.path.clone();
            let got = self
                .handle
                .block_on(async move { store.get_range(&path, range).await })
                .map_err(io::Error::other)?;
            if got.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the object ended before its listed size",
                ));
            }
            self.held = (self.pos, got);
        }
        let (start, bytes) = &self.held;
        let at = (self.pos - start) as usize;
        let n = buf.len().min(bytes.len() - at);
        buf[..n].copy_from_slice(&bytes[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RangeReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the object's start",
            )
        })?;
        Ok(self.pos)
    }
}
