//! Zeroed buffers that cost nothing until written: the output (hundreds
//! of MiB) and the chunk buffers are allocated zeroed by the allocator
//! (fresh pages from the kernel, already zero), not zeroed by a pass of
//! our own. Allocation failure is an error, never an abort.
//!
//! No transparent huge pages: asked for with `MADV_HUGEPAGE`, they made
//! inflating 512 MiB take 1.3 to 2.5 s of CPU instead of a steady 1.5 s on
//! the 2-core machine (the kernel finding and clearing 2 MiB pages at the
//! first write).

use std::alloc::{alloc_zeroed, Layout};

/// A symbol type whose all-zero bytes are a valid value.
///
/// # Safety
///
/// The all-zero bit pattern must be a valid `Self` and `Self` must have a
/// nonzero size: `zeroed` hands `alloc_zeroed` memory to
/// `Vec::from_raw_parts` as initialised values.
pub(super) unsafe trait Zeroable: Copy {}

// SAFETY: integers of nonzero size; zero bytes are the value 0.
unsafe impl Zeroable for u8 {}
// SAFETY: as for `u8`.
unsafe impl Zeroable for u16 {}

/// A vector of `len` zeros, or `None` if memory cannot hold it.
pub(super) fn zeroed<T: Zeroable>(len: usize) -> Option<Vec<T>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = Layout::array::<T>(len).ok()?;
    // SAFETY: `layout` has a nonzero size (len > 0 and T is u8 or u16).
    let ptr = unsafe { alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout
    // of `[T; len]` (so `Vec`'s deallocation with capacity `len` matches
    // it), and all its `len` elements are initialised: zero bytes, a valid
    // `T` (`Zeroable`: u8 and u16 only).
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

#[cfg(test)]
mod tests {
    #[test]
    fn zeroed_buffers_are_zero_and_refused_when_too_large() {
        let v = super::zeroed::<u16>(5 << 20).unwrap();
        assert!(v.len() == 5 << 20 && v.iter().all(|&x| x == 0));
        assert!(super::zeroed::<u8>(0).unwrap().is_empty());
        assert!(super::zeroed::<u16>(usize::MAX / 2).is_none());
    }
}
