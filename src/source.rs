//! Where array bytes come from (a file of known length, a slice, a stream),
//! and how they land in a typed buffer without zeroing it first.

use crate::element::Element;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{self, Read};
use std::mem::MaybeUninit;

/// Buffers at least this large get transparent huge pages, as in NumPy.
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// A stream of unknown length starts its buffer at this size and then
/// doubles it, so memory follows the bytes that actually arrive (at most
/// twice what arrived, plus this step) and a stream cut short after a few
/// bytes costs kilobytes, not a large first step. Reallocating large
/// buffers is cheap (`mremap`, no copy).
const STREAM_STEP: usize = 64 << 10;

/// Byte-swapped data is read and swapped in pieces of this size, which stay
/// in the L2 cache between the kernel's copy and the swap.
const SWAP_PIECE: usize = 256 << 10;

/// A source of array data.
pub(crate) enum Source<'a> {
    /// A file positioned at the data, with the bytes left in it.
    File { file: &'a mut File, available: u64 },
    /// Bytes in memory.
    Slice(&'a [u8]),
    /// A reader of unknown length.
    Stream(&'a mut dyn Read),
    /// A reader that promises exactly this many bytes (e.g. a zip member
    /// whose size the archive declares). Read in bounded steps unless
    /// `trusted` (the bytes are known to exist, as for a stored zip member
    /// that lies inside the archive file), so a compressed member claiming a
    /// huge size costs only the memory of the bytes that really decompress.
    Sized {
        reader: &'a mut dyn Read,
        len: u64,
        trusted: bool,
    },
}

impl<'a> Source<'a> {
    pub(crate) fn file(file: &'a mut File, available: u64) -> Self {
        Source::File { file, available }
    }

    pub(crate) fn slice(bytes: &'a [u8]) -> Self {
        Source::Slice(bytes)
    }

    pub(crate) fn stream(reader: &'a mut dyn Read) -> Self {
        Source::Stream(reader)
    }

    /// Bytes known to be present, when the source can tell without reading.
    fn known_len(&self) -> Option<u64> {
        match self {
            Source::File { available, .. } => Some(*available),
            Source::Slice(bytes) => Some(bytes.len() as u64),
            Source::Sized { len, .. } => Some(*len),
            Source::Stream(_) => None,
        }
    }

    /// Whether the known length can be trusted to size one allocation.
    fn trusted(&self) -> bool {
        matches!(
            self,
            Source::File { .. } | Source::Slice(_) | Source::Sized { trusted: true, .. }
        )
    }

    /// Fills as much of `dst` as the source holds; returns the count.
    fn fill(&mut self, dst: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        match self {
            Source::Slice(bytes) => {
                let n = dst.len().min(bytes.len());
                let (head, rest) = bytes.split_at(n);
                // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, so a
                // `&[u8]` is a valid `&[MaybeUninit<u8>]` of the same length.
                let head: &[MaybeUninit<u8>] =
                    unsafe { std::slice::from_raw_parts(head.as_ptr().cast(), head.len()) };
                dst[..n].copy_from_slice(head);
                *bytes = rest;
                Ok(n)
            }
            #[cfg(unix)]
            Source::File { file, .. } => fill_from_fd(file, dst),
            #[cfg(not(unix))]
            Source::File { file, .. } => fill_zeroed(*file, dst),
            Source::Stream(reader) | Source::Sized { reader, .. } => fill_zeroed(*reader, dst),
        }
    }

    /// Reads `n` elements of `T`, swapping their bytes if `swap`.
    ///
    /// Never allocates more than the source is known to hold; a stream's
    /// buffer grows in steps as its bytes arrive.
    pub(crate) fn read_elements<T: Element>(&mut self, n: usize, swap: bool) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        let nbytes = n as u64 * size as u64;
        if let Some(available) = self.known_len() {
            if available < nbytes {
                return Err(Error::TruncatedData {
                    expected: nbytes,
                    found: available,
                });
            }
        }
        let step = if self.trusted() {
            n
        } else {
            (STREAM_STEP / size).max(1)
        };
        let mut data: Vec<T> = Vec::new();
        while data.len() < n {
            let start = data.len();
            let end = n.min(start + step.max(start));
            data.try_reserve_exact(end - start).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    format!("cannot allocate {} bytes for array data", end * size),
                )
            })?;
            // Advised again after each growth: a reallocation may move the
            // buffer, and the grown part needs the advice too.
            if end * size >= HUGE_PAGE_THRESHOLD {
                advise_huge_pages(data.as_mut_ptr().cast(), data.capacity() * size);
            }
            let spare = &mut data.spare_capacity_mut()[..end - start];
            // Data that needs swapping is read and swapped a cache-sized piece
            // at a time, so the swap finds the bytes still in cache instead of
            // making a second pass through memory (which cost ~30% over a
            // native read of a 256 MiB file; see BENCHMARKS.md).
            let piece_len = if swap {
                (SWAP_PIECE / size).max(1)
            } else {
                spare.len().max(1)
            };
            let mut done = start * size;
            for piece in spare.chunks_mut(piece_len) {
                // SAFETY: `MaybeUninit<T>` has the size of `T` and no validity
                // invariant, and neither has `MaybeUninit<u8>`; the byte slice
                // covers exactly the memory of `piece`, which it borrows.
                let bytes: &mut [MaybeUninit<u8>] = unsafe {
                    std::slice::from_raw_parts_mut(piece.as_mut_ptr().cast(), piece.len() * size)
                };
                let got = self.fill(bytes)?;
                if got < bytes.len() {
                    return Err(Error::TruncatedData {
                        expected: nbytes,
                        found: (done + got) as u64,
                    });
                }
                done += got;
                // SAFETY: `fill` initialised all of `bytes` (checked above).
                let bytes: &mut [u8] = unsafe {
                    std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), bytes.len())
                };
                T::normalize_bytes(bytes);
                if swap {
                    // SAFETY: the piece is initialised, and every byte pattern
                    // is now a valid `T` (`normalize_bytes` made `bool` bytes 0
                    // or 1; all other element types accept any bits).
                    let elements: &mut [T] = unsafe {
                        std::slice::from_raw_parts_mut(piece.as_mut_ptr().cast(), piece.len())
                    };
                    T::swap_bytes(elements);
                }
            }
            // SAFETY: elements `start..end` are initialised, and every byte
            // pattern is now a valid `T` (`normalize_bytes` made `bool` bytes
            // 0 or 1; all other element types accept any bits).
            unsafe { data.set_len(end) };
        }
        Ok(data)
    }
}

impl Source<'_> {
    /// All the bytes left (an object array's pickle), never allocating more
    /// than the source is known to hold or than has arrived.
    pub(crate) fn read_rest(&mut self) -> Result<Vec<u8>> {
        match self.known_len() {
            Some(len) => {
                let n = usize::try_from(len).map_err(|_| Error::LengthOverflow {
                    shape: vec![len],
                    itemsize: 1,
                })?;
                self.read_elements::<u8>(n, false)
            }
            None => {
                let mut out = Vec::new();
                if let Source::Stream(reader) = self {
                    let mut piece = vec![0u8; STREAM_STEP];
                    loop {
                        let got = crate::header::read_full(*reader, &mut piece)?;
                        out.extend_from_slice(&piece[..got]);
                        if got < piece.len() {
                            break;
                        }
                    }
                }
                Ok(out)
            }
        }
    }
}

/// Fills `dst` from a reader that needs initialised memory: zeroes a piece
/// at a time, just before the reader overwrites it, so it stays in cache.
fn fill_zeroed<R: Read + ?Sized>(reader: &mut R, dst: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
    const PIECE: usize = 256 << 10;
    let mut filled = 0;
    for piece in dst.chunks_mut(PIECE) {
        piece.fill(MaybeUninit::new(0));
        // SAFETY: every byte of `piece` was just initialised to zero.
        let piece: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(piece.as_mut_ptr().cast(), piece.len()) };
        let got = crate::header::read_full(reader, piece)?;
        filled += got;
        if got < piece.len() {
            break;
        }
    }
    Ok(filled)
}

/// Fills `dst` with `read(2)`, which writes into uninitialised memory.
#[cfg(unix)]
fn fill_from_fd(file: &mut File, dst: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    let mut filled = 0;
    while filled < dst.len() {
        // Linux caps one read at just under 2 GiB.
        let want = (dst.len() - filled).min(1 << 30);
        // SAFETY: the pointer and length describe the unfilled tail of `dst`,
        // which is valid for writes of `want` bytes; the kernel only writes.
        let n = unsafe { libc::read(fd, dst[filled..].as_mut_ptr().cast(), want) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if n == 0 {
            break;
        }
        filled += n as usize;
    }
    Ok(filled)
}

/// Asks the kernel for transparent huge pages on a large buffer (a hint:
/// failure changes nothing but speed).
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
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
fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}
