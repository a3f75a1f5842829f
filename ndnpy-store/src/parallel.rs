//! What `RemoteNpy::read`'s parallel GETs hold: the output, zeroed by the
//! allocator so that pages are resident only once written; a memory slot
//! per chunk, held from before its GET until it is copied out; and the
//! task that starts the GETs, aborted when the read stops.

use crate::error::{Result, StoreError};
use ndarray::{Array, Dimension};
use ndnpy::types::LayoutElement;
use std::sync::Arc;

/// An array of `n` elements whose bytes are all zero, in memory from the
/// allocator's zeroed allocation: the operating system hands out zero
/// pages as they are first written, so nothing is written here, and pages
/// a failed read never reached are never resident.
pub(crate) fn zeroed<T: LayoutElement, D: Dimension>(
    shape: ndarray::Shape<D>,
    n: usize,
) -> Result<Array<T, D>> {
    let too_big = || {
        StoreError::Npy(ndnpy::Error::Io(std::io::Error::from(
            std::io::ErrorKind::OutOfMemory,
        )))
    };
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| too_big())?;
    assert!(layout.size() > 0, "callers pass n > 0 and a sized T");
    // SAFETY: `layout` has a non-zero size (checked above). The memory comes
    // from the global allocator with exactly the layout `Vec<T>` of
    // capacity `n` uses (`Layout::array::<T>(n)`: T's alignment, n times its
    // size), so the Vec may own and free it. All `n` elements are
    // initialised: every byte is zero, and `LayoutElement`'s contract makes
    // every bit pattern of its scalar fields valid (bools are 0 or 1, and 0
    // is false), so all-zero bytes are a valid `T`; padding bytes carry no
    // validity requirement.
    let vec = unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<T>();
        if ptr.is_null() {
            return Err(too_big());
        }
        Vec::from_raw_parts(ptr, n, n)
    };
    Array::from_shape_vec(shape, vec).map_err(|e| {
        StoreError::Npy(ndnpy::Error::Header(ndnpy::error::HeaderError::BadShape(
            format!("{e}"),
        )))
    })
}

/// A chunk's memory slot, held from before its GET until its bytes have
/// been copied out (and counted by the test hook, when there is one).
pub(crate) struct HeldSlot {
    _slot: tokio::sync::OwnedSemaphorePermit,
    held: Option<Arc<crate::config::Held>>,
    len: u64,
}

impl HeldSlot {
    pub(crate) fn new(
        slot: tokio::sync::OwnedSemaphorePermit,
        held: Option<Arc<crate::config::Held>>,
        len: u64,
    ) -> HeldSlot {
        if let Some(h) = &held {
            h.add(len);
        }
        HeldSlot {
            _slot: slot,
            held,
            len,
        }
    }
}

impl Drop for HeldSlot {
    fn drop(&mut self) {
        if let Some(h) = &self.held {
            h.sub(self.len);
        }
    }
}

/// Aborts a task when dropped.
pub(crate) struct AbortOnDrop(pub(crate) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
