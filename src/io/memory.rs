//! Memory for array data: reserved as an error rather than an abort,
//! backed by huge pages when large, zeroed a piece at a time just before
//! a reader that needs initialised memory overwrites it; and the fixes run
//! over bytes as they arrive. Shared by the sources (`source.rs`) and the
//! sized readers (`sized.rs`), below both.

use crate::error::{Error, Result};
use std::io::{self, Read};
use std::mem::MaybeUninit;

/// Buffers at least this large get transparent huge pages, as in NumPy.
pub(super) const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// Byte-swapped data is read and swapped in pieces of this size, which stay
/// in the L2 cache between the kernel's copy and the swap.
pub(super) const SWAP_PIECE: usize = 256 << 10;

/// A fix run over each piece of bytes as it arrives (byte swaps, `bool`
/// normalisation), in place.
pub(crate) type Fix<'a> = &'a dyn Fn(&mut [u8]);

/// `n` values of a zero-sized type, refusing counts that cannot be held.
///
/// # Safety
///
/// A `T` made from no bytes must be valid: `T` is plain data.
pub(crate) unsafe fn zero_sized<T>(n: usize) -> Result<Vec<T>> {
    let mut data: Vec<T> = Vec::new();
    reserve(&mut data, n, 0)?;
    // SAFETY: `T` is zero-sized: it has no bytes, so none can be invalid
    // (the callers' element types are plain data, never a type whose
    // zero-sized values carry an invariant).
    unsafe { data.set_len(n) };
    Ok(data)
}

/// Like [`reserve`], then asks for huge pages on the whole capacity (for
/// buffers filled once, front to back: fewer page faults).
pub(crate) fn reserve_huge<T>(data: &mut Vec<T>, more: usize, total_bytes: usize) -> Result<()> {
    reserve(data, more, total_bytes)?;
    advise_huge_pages(
        data.as_mut_ptr().cast(),
        data.capacity() * std::mem::size_of::<T>(),
    );
    Ok(())
}

/// Reserves room for `more` elements, as an error rather than an abort.
pub(crate) fn reserve<T>(data: &mut Vec<T>, more: usize, total_bytes: usize) -> Result<()> {
    data.try_reserve_exact(more)
        .map_err(|_| out_of_memory(total_bytes))
}

pub(crate) fn out_of_memory(total_bytes: usize) -> Error {
    Error::Io(io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!("cannot allocate {total_bytes} bytes for array data"),
    ))
}

/// Fills `dst` from a reader that needs initialised memory: zeroes a piece
/// at a time, just before the reader overwrites it, so it stays in cache.
pub(crate) fn fill_zeroed<R: Read + ?Sized>(
    reader: &mut R,
    dst: &mut [MaybeUninit<u8>],
) -> io::Result<usize> {
    const PIECE: usize = 256 << 10;
    let mut filled = 0;
    for piece in dst.chunks_mut(PIECE) {
        piece.fill(MaybeUninit::new(0));
        // SAFETY: every byte of `piece` was just initialised to zero.
        let piece: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(piece.as_mut_ptr().cast(), piece.len()) };
        let got = crate::io::checked::read_full(reader, piece)?;
        filled += got;
        if got < piece.len() {
            break;
        }
    }
    Ok(filled)
}

/// Asks the kernel for transparent huge pages on a large buffer (a hint:
/// failure changes nothing but speed).
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge_pages(ptr: *mut u8, len: usize) {
    const HUGE: usize = 2 << 20;
    let start = (ptr as usize).div_ceil(HUGE) * HUGE;
    let end = (ptr as usize + len) / HUGE * HUGE;
    if end > start {
        // SAFETY: `start..end` lies inside the allocation `ptr..ptr + len`
        // that the caller owns; MADV_HUGEPAGE only changes how the kernel
        // backs those pages, never their contents or validity.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}
