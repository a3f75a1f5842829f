//! Readers that deliver a known number of bytes all at once (a compressed
//! zip member whose pieces inflate on every core straight into the
//! array), and reading items from them into memory nobody zeroed ahead.

use super::memory::{reserve, Fix, HUGE_PAGE_THRESHOLD, SWAP_PIECE};
use crate::error::{Error, Result};
use std::io::{self, Read};
use std::mem::MaybeUninit;

/// A reader of a known number of bytes that may deliver all of them at
/// once better than piece by piece: a compressed zip member whose pieces
/// inflate on every core straight into the array (`npz/member.rs`).
///
/// # Safety
///
/// [`SizedRead::fill_whole`]'s count is trusted to say how many bytes of
/// its destination are initialised (the items are then taken as written):
/// when it returns `Ok(n)`, the first `n` bytes of `dst` must have been
/// written with initialised bytes, and `n <= dst.len()`.
pub(crate) unsafe trait SizedRead: Read {
    /// Whether [`SizedRead::fill_whole`] takes a destination of exactly
    /// `len` bytes at once (rather than piece by piece, as `read` does).
    fn fills_whole(&self, _len: u64) -> bool {
        false
    }

    /// Fills `dst` with the next `dst.len()` bytes; gives how many it
    /// filled (less than `dst.len()` means the bytes ended early). The
    /// first that many bytes of `dst` are initialised on return. A reader
    /// that [`SizedRead::fills_whole`] fills it all at once, zeroing each
    /// piece just before writing it (on the thread that writes it), so
    /// nobody zeroes the destination ahead.
    fn fill_whole(&mut self, dst: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        super::memory::fill_zeroed(self, dst)
    }

    /// For a reader that delivers the next `len` bytes (all that is left)
    /// best into zeroed memory with room after them, decoding into that
    /// memory more than the bytes asked for (a compressed stream inflated
    /// on every core, header and all, the data then moved to the front):
    /// how many bytes of room. `None` for any other reader.
    fn whole_room(&self, _len: u64) -> Option<usize> {
        None
    }

    /// Fills the first `len` bytes of `dst` (at least `len` plus the room
    /// [`SizedRead::whole_room`] asked for) with the next `len` bytes;
    /// gives how many it filled (fewer means the bytes ended early). The
    /// rest of `dst` holds unspecified bytes afterwards.
    fn fill_whole_in(&mut self, dst: &mut [u8], len: usize) -> io::Result<usize> {
        super::checked::read_full(self, &mut dst[..len])
    }
}

/// `n` items of `size_of::<T>()` bytes (`n > 0`, not zero-sized) from a
/// reader that wants `room` bytes after them ([`SizedRead::whole_room`]),
/// in zeroed memory (fresh pages: nobody writes zeros, and they are faulted
/// in by the threads that decode into them). `fix` runs over cache-sized
/// pieces afterwards. The vector keeps the room as spare capacity.
///
/// # Safety
///
/// As [`read_whole`].
pub(super) unsafe fn read_whole_in<T>(
    reader: &mut dyn SizedRead,
    n: usize,
    room: usize,
    fix: Option<Fix<'_>>,
) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    let nbytes = n * size;
    let capacity = n
        .checked_add(room.div_ceil(size))
        .ok_or_else(|| super::memory::out_of_memory(usize::MAX))?;
    let mut data: Vec<T> = zeroed_capacity(capacity)?;
    // SAFETY: the allocation holds `capacity` items of `T`, all zero bytes
    // (`zeroed_capacity`), so all `capacity * size` bytes are initialised
    // `u8`s; the slice borrows `data`'s buffer exclusively and `data`
    // (length 0) reads none of it until `set_len` below.
    let bytes: &mut [u8] =
        unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast(), capacity * size) };
    let got = reader.fill_whole_in(bytes, nbytes)?;
    if got != nbytes {
        return Err(Error::Data(crate::error::DataError::TruncatedData {
            expected: nbytes as u64,
            found: got as u64,
        }));
    }
    if let Some(fix) = fix {
        bytes[..nbytes]
            .chunks_mut((SWAP_PIECE / size).max(1) * size)
            .for_each(fix);
    }
    // SAFETY: the first `n` items hold the bytes the reader gave (then
    // fixed), which the caller vouches are valid `T`s.
    unsafe { data.set_len(n) };
    Ok(data)
}

/// An empty vector with room for `capacity` items (`T` not zero-sized),
/// its memory zeroed by the allocator: fresh pages from the kernel for a
/// large one, already zero, so nothing is written ahead.
fn zeroed_capacity<T>(capacity: usize) -> Result<Vec<T>> {
    let layout = std::alloc::Layout::array::<T>(capacity)
        .map_err(|_| super::memory::out_of_memory(usize::MAX))?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout has a nonzero size (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(super::memory::out_of_memory(layout.size()));
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout
    // of `capacity` items of `T` (its size and alignment), which is what a
    // `Vec<T>` of that capacity frees; length 0 claims no initialised item.
    Ok(unsafe { Vec::from_raw_parts(ptr.cast(), 0, capacity) })
}

/// `n` items of `size_of::<T>()` bytes (`n > 0`, not zero-sized) from a
/// reader that fills them all at once ([`SizedRead::fill_whole`]), on
/// every core, into memory nobody zeroed ahead. `fix` runs over cache-sized
/// pieces afterwards.
///
/// # Safety
///
/// As [`Source::read_items`]: every byte pattern that `fix` leaves (or,
/// without `fix`, that the reader may give) must be a valid `T`.
pub(super) unsafe fn read_whole<T>(
    reader: &mut dyn SizedRead,
    n: usize,
    fix: Option<Fix<'_>>,
) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    let nbytes = n * size;
    let mut data: Vec<T> = Vec::new();
    reserve(&mut data, n, nbytes)?;
    if nbytes >= HUGE_PAGE_THRESHOLD {
        super::memory::advise_huge_pages(data.as_mut_ptr().cast(), nbytes);
    }
    let spare = &mut data.spare_capacity_mut()[..n];
    // SAFETY: `MaybeUninit<T>` has the size of `T` and no validity
    // invariant, and neither has `MaybeUninit<u8>`; the byte slice covers
    // exactly the memory of `spare`, which it borrows.
    let bytes: &mut [MaybeUninit<u8>] =
        unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast(), nbytes) };
    fill_whole_fixed(reader, bytes, size, fix)?;
    // SAFETY: all `n` items are initialised (filled, then fixed), and the
    // caller vouches that such bytes are valid `T`s.
    unsafe { data.set_len(n) };
    Ok(data)
}

/// Fills all of `bytes` at once ([`SizedRead::fill_whole`]), then runs
/// `fix` over cache-sized pieces of whole `size`-byte items. Bytes that end
/// early are a [`crate::error::DataError::TruncatedData`]. On success every byte of `bytes`
/// is initialised.
pub(super) fn fill_whole_fixed(
    reader: &mut dyn SizedRead,
    bytes: &mut [MaybeUninit<u8>],
    size: usize,
    fix: Option<Fix<'_>>,
) -> Result<()> {
    let got = reader.fill_whole(bytes)?;
    if got != bytes.len() {
        return Err(Error::Data(crate::error::DataError::TruncatedData {
            expected: bytes.len() as u64,
            found: got as u64,
        }));
    }
    if let Some(fix) = fix {
        // SAFETY: `fill_whole` initialised all of `bytes` (checked above);
        // `MaybeUninit<u8>` has the layout of `u8`.
        let bytes: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), bytes.len()) };
        bytes
            .chunks_mut((SWAP_PIECE / size).max(1) * size)
            .for_each(fix);
    }
    Ok(())
}
