//! Readers that deliver a known number of bytes all at once (a compressed
//! zip member whose pieces inflate on every core straight into the
//! array), and reading items from them into memory nobody zeroed ahead.

use super::source::{reserve, Fix, HUGE_PAGE_THRESHOLD, SWAP_PIECE};
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
        super::source::fill_zeroed(self, dst)
    }
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
        super::source::advise_huge_pages(data.as_mut_ptr().cast(), nbytes);
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
/// early are a [`Error::TruncatedData`]. On success every byte of `bytes`
/// is initialised.
pub(super) fn fill_whole_fixed(
    reader: &mut dyn SizedRead,
    bytes: &mut [MaybeUninit<u8>],
    size: usize,
    fix: Option<Fix<'_>>,
) -> Result<()> {
    let got = reader.fill_whole(bytes)?;
    if got != bytes.len() {
        return Err(Error::TruncatedData {
            expected: bytes.len() as u64,
            found: got as u64,
        });
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
