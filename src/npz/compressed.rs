//! Where a read-ahead job's compressed bytes are (`pool.rs` runs the
//! jobs, `direct.rs` inflates one straight into its array), and the fresh
//! buffers they are read and inflated into. Apart from both so that
//! neither imports the other.

use std::fs::File;
use std::io;
use std::sync::Arc;

/// Where a job's compressed bytes are.
pub(super) enum Compressed {
    /// Read into memory by the caller.
    Bytes(Vec<u8>),
    /// Bytes `start..start + len` of the archive file, which the job reads
    /// itself by positioned reads (readers opened from a path, on Unix): no
    /// copy of the member is held while the job waits, and the caller does
    /// not read it.
    File {
        file: Arc<File>,
        start: u64,
        len: u64,
    },
}

impl Compressed {
    /// The bytes in memory: read into `buf` (a buffer to reuse) if they
    /// are in the file. A file shorter than the member is an error.
    pub(super) fn into_bytes(self, mut buf: Vec<u8>) -> io::Result<Vec<u8>> {
        let (file, start, len) = match self {
            Compressed::Bytes(bytes) => return Ok(bytes),
            Compressed::File { file, start, len } => (file, start, len),
        };
        // Inside the archive (the caller checked), so no larger than it.
        if buf.capacity() < len as usize {
            buf = fresh(len as usize)?;
        }
        buf.resize(len as usize, 0);
        let mut done = 0;
        while done < buf.len() {
            match crate::io::fs::read_at(&file, &mut buf[done..], start + done as u64) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the archive ends inside the member",
                    ))
                }
                Ok(n) => done += crate::io::checked::checked_read_count(n, buf.len() - done)?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(buf)
    }
}

/// A buffer of `len` zero bytes from fresh memory the allocator gives
/// zeroed (not written here), backed by transparent huge pages where Linux
/// allows, so that its first use takes one page fault per 2 MiB, not 512.
/// An error, not an abort, if memory cannot hold it.
pub(super) fn fresh(len: usize) -> io::Result<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(len)
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    // SAFETY: `layout` has a nonzero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(io::ErrorKind::OutOfMemory.into());
    }
    crate::io::source::advise_huge_pages(ptr, len);
    // SAFETY: `ptr` comes from the global allocator with the layout of
    // `[u8; len]`, which is what `Vec<u8>` of capacity `len` frees it with,
    // and its `len` bytes are initialised (zeroed by `alloc_zeroed`).
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}
