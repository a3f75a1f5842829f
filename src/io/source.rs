//! Where array bytes come from (a file of known length, a slice, a stream),
//! and how they land in a typed buffer without zeroing it first.

use crate::error::{Error, Result};
use crate::options::ReadOptions;
use std::fs::File;
use std::io::{self, Read};
use std::mem::MaybeUninit;
use std::path::Path;

pub(crate) use super::memory::{
    advise_huge_pages, fill_zeroed, out_of_memory, reserve, reserve_huge, zero_sized, Fix,
};
use super::memory::{HUGE_PAGE_THRESHOLD, SWAP_PIECE};
pub(crate) use super::sized::SizedRead;
use super::sized::{fill_whole_fixed, read_whole, read_whole_in};

/// A stream of unknown length starts its buffer at this size and then
/// doubles it, so memory follows the bytes that actually arrive (at most
/// twice what arrived, plus this step) and a stream cut short after a few
/// bytes costs kilobytes, not a large first step. Reallocating large
/// buffers is cheap (`mremap`, no copy).
const STREAM_STEP: usize = 64 << 10;

/// A source of array data.
pub(crate) enum Source<'a> {
    /// A file positioned at the data, with the bytes left in it.
    File { file: &'a mut File, available: u64 },
    /// Bytes in memory.
    Slice(&'a [u8]),
    /// A reader of unknown length, from which at most `max_len` data bytes
    /// are read ([`crate::ReadOptions::max_stream_len`]).
    Stream {
        reader: &'a mut dyn Read,
        max_len: u64,
    },
    /// A reader that promises exactly this many bytes (e.g. a zip member
    /// whose size the archive declares). Read in bounded steps unless
    /// `trusted` (the bytes are known to exist, as for a stored zip member
    /// that lies inside the archive file), so a compressed member claiming a
    /// huge size costs only the memory of the bytes that really decompress.
    Sized {
        reader: &'a mut dyn SizedRead,
        len: u64,
        trusted: bool,
    },
    /// One field of in-memory records: `size` bytes at `offset` of each
    /// `itemsize`-byte record of `records` (whole records only), read as
    /// one contiguous column from byte `pos` of it on.
    Gather {
        records: &'a [u8],
        itemsize: usize,
        offset: usize,
        size: usize,
        pos: usize,
    },
}

impl<'a> Source<'a> {
    pub(crate) fn file(file: &'a mut File, available: u64) -> Self {
        Source::File { file, available }
    }

    pub(crate) fn slice(bytes: &'a [u8]) -> Self {
        Source::Slice(bytes)
    }

    /// A stream read with the limits of `options`.
    pub(crate) fn stream_with(
        reader: &'a mut dyn Read,
        options: &crate::options::ReadOptions,
    ) -> Self {
        Source::Stream {
            reader,
            max_len: options.get_max_stream_len(),
        }
    }

    /// Bytes known to be present, when the source can tell without reading.
    fn known_len(&self) -> Option<u64> {
        match self {
            Source::File { available, .. } => Some(*available),
            Source::Slice(bytes) => Some(bytes.len() as u64),
            Source::Sized { len, .. } => Some(*len),
            Source::Gather {
                records,
                itemsize,
                size,
                pos,
                ..
            } => Some(((records.len() / (*itemsize).max(1)) * size - pos) as u64),
            Source::Stream { .. } => None,
        }
    }

    /// The known length, when it can be trusted to size one allocation.
    pub(crate) fn trusted_len(&self) -> Option<u64> {
        if self.trusted() {
            self.known_len()
        } else {
            None
        }
    }

    /// Whether the known length can be trusted to size one allocation.
    fn trusted(&self) -> bool {
        matches!(
            self,
            Source::File { .. }
                | Source::Slice(_)
                | Source::Sized { trusted: true, .. }
                | Source::Gather { .. }
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
            Source::Stream { reader, .. } => fill_zeroed(*reader, dst),
            Source::Sized { reader, .. } => fill_zeroed(&mut **reader, dst),
            Source::Gather {
                records,
                itemsize,
                offset,
                size,
                pos,
            } => Ok(super::gather::gather(
                records, *itemsize, *offset, *size, pos, dst,
            )),
        }
    }

    /// Checks that `nbytes` can be present, and that a stream is allowed to
    /// deliver them, before anything is allocated.
    fn check_available(&self, nbytes: u64) -> Result<()> {
        if let Source::Stream { max_len, .. } = *self {
            if nbytes > max_len {
                return Err(Error::Limit(crate::error::LimitError::StreamLimit {
                    claimed: nbytes,
                    max: max_len,
                }));
            }
        }
        if let Some(available) = self.known_len() {
            if available < nbytes {
                return Err(Error::Data(crate::error::DataError::TruncatedData {
                    expected: nbytes,
                    found: available,
                }));
            }
        }
        Ok(())
    }

    /// Reads `len` raw bytes.
    pub(crate) fn read_bytes(&mut self, len: usize) -> Result<Vec<u8>> {
        // SAFETY: every byte pattern is a valid `u8`.
        unsafe { self.read_items::<u8>(len, None) }
    }

    /// Reads `n` items of `size_of::<T>()` bytes each straight into the
    /// memory of a new `Vec<T>` (never zeroed first), running `fix` over
    /// each cache-sized piece just after it arrives, so that the fix finds
    /// its bytes still in cache instead of making a second pass through
    /// memory (which cost ~30% over a native read of a 256 MiB file; see
    /// BENCHMARKS.md).
    ///
    /// Never allocates more than the source is known to hold; a stream's
    /// buffer grows in steps as its bytes arrive.
    ///
    /// # Safety
    ///
    /// Every byte pattern that `fix` leaves (or, without `fix`, that the
    /// source may hold) must be a valid `T`: the caller vouches for the
    /// bytes, this function only moves them. (Every byte of the result is
    /// initialised, padding included: `fill` must write all of each piece
    /// before the length is set, or the read fails.)
    pub(crate) unsafe fn read_items<T>(
        &mut self,
        n: usize,
        fix: Option<Fix<'_>>,
    ) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        if size == 0 {
            // SAFETY: the caller vouches for `T`'s values, bytes or none.
            return unsafe { zero_sized(n) };
        }
        let nbytes = n as u64 * size as u64;
        self.check_available(nbytes)?;
        if let Source::Sized {
            reader,
            trusted: true,
            ..
        } = self
        {
            if n > 0 {
                if let Some(room) = reader.whole_room(nbytes) {
                    // SAFETY: the caller's contract is this function's.
                    return unsafe { read_whole_in(&mut **reader, n, room, fix) };
                }
                if reader.fills_whole(nbytes) {
                    // SAFETY: the caller's contract is this function's.
                    return unsafe { read_whole(&mut **reader, n, fix) };
                }
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
            reserve(&mut data, end - start, end * size)?;
            // Advised again after each growth: a reallocation may move the
            // buffer, and the grown part needs the advice too.
            if end * size >= HUGE_PAGE_THRESHOLD {
                advise_huge_pages(data.as_mut_ptr().cast(), data.capacity() * size);
            }
            let spare = &mut data.spare_capacity_mut()[..end - start];
            let piece_len = if fix.is_some() {
                (SWAP_PIECE / size).max(1)
            } else {
                spare.len().max(1)
            };
            let mut done = start * size;
            for piece in spare.chunks_mut(piece_len) {
                // SAFETY: `MaybeUninit<T>` has the size of `T` and no
                // validity invariant, and neither has `MaybeUninit<u8>`; the
                // byte slice covers exactly the memory of `piece`, which it
                // borrows.
                let bytes: &mut [MaybeUninit<u8>] = unsafe {
                    std::slice::from_raw_parts_mut(piece.as_mut_ptr().cast(), piece.len() * size)
                };
                let got = self.fill(bytes)?;
                if got < bytes.len() {
                    return Err(Error::Data(crate::error::DataError::TruncatedData {
                        expected: nbytes,
                        found: (done + got) as u64,
                    }));
                }
                done += got;
                // SAFETY: `fill` initialised all of `bytes` (checked above).
                let bytes: &mut [u8] = unsafe {
                    std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), bytes.len())
                };
                if let Some(fix) = fix {
                    fix(bytes);
                }
            }
            // SAFETY: elements `start..end` are initialised, and the caller
            // vouches (this function's contract) that the bytes, fixed, are
            // valid `T`s.
            unsafe { data.set_len(end) };
        }
        Ok(data)
    }

    /// Overwrites `dst` with the next `dst.len()` items of the source,
    /// running `fix` over each cache-sized piece just after it arrives (as
    /// [`Source::read_items`] does), without allocating. On any error (or a
    /// panic of the caller's reader) the piece being read is zeroed, so
    /// `dst` never holds a partly written item that `fix` has not seen. A
    /// reader that fills everything at once ([`SizedRead::fills_whole`]:
    /// a compressed member inflated on every core) is one piece: `fix`
    /// runs after the whole fill, and an error zeroes all of `dst`.
    ///
    /// # Safety
    ///
    /// Every byte pattern that `fix` leaves (or, without `fix`, that the
    /// source may hold) must be a valid `T`, and so must all-zero bytes.
    pub(crate) unsafe fn read_items_into<T>(
        &mut self,
        dst: &mut [T],
        fix: Option<Fix<'_>>,
    ) -> Result<()> {
        let size = std::mem::size_of::<T>();
        if size == 0 || dst.is_empty() {
            return Ok(());
        }
        let nbytes = dst.len() as u64 * size as u64;
        self.check_available(nbytes)?;
        if let Source::Sized { reader, .. } = self {
            if reader.fills_whole(nbytes) {
                // SAFETY: the byte slice covers exactly the memory of `dst`
                // (initialised `T`s, so initialised bytes), which it
                // borrows exclusively; `MaybeUninit<u8>` has the layout of
                // `u8`, and `fill_whole` writes only initialised bytes.
                // What it writes is fixed, or zeroed (on an error or a
                // panic: `Unfixed`), before `dst` can be read again.
                let bytes: &mut [MaybeUninit<u8>] = unsafe {
                    std::slice::from_raw_parts_mut(
                        dst.as_mut_ptr().cast(),
                        std::mem::size_of_val(dst),
                    )
                };
                let mut guard = Unfixed { bytes, done: false };
                fill_whole_fixed(&mut **reader, guard.bytes, size, fix)?;
                guard.done = true;
                return Ok(());
            }
        }
        let piece_len = if fix.is_some() {
            (SWAP_PIECE / size).max(1)
        } else {
            dst.len()
        };
        let mut done = 0u64;
        for piece in dst.chunks_mut(piece_len) {
            // SAFETY: the byte slice covers exactly the memory of `piece`
            // (initialised `T`s, so initialised bytes), which it borrows
            // exclusively; `MaybeUninit<u8>` has the layout of `u8`. Bytes
            // written through it are made valid `T`s below (fixed, or
            // zeroed on an error or a panic: `Unfixed`) before `piece` can
            // be read again.
            let bytes: &mut [MaybeUninit<u8>] = unsafe {
                std::slice::from_raw_parts_mut(
                    piece.as_mut_ptr().cast(),
                    std::mem::size_of_val(piece),
                )
            };
            let guard = Unfixed { bytes, done: false };
            let got = self.fill(guard.bytes)?;
            if got < guard.bytes.len() {
                return Err(Error::Data(crate::error::DataError::TruncatedData {
                    expected: nbytes,
                    found: done + got as u64,
                }));
            }
            done += got as u64;
            let mut guard = guard;
            // SAFETY: `fill` wrote every byte (checked above).
            let bytes: &mut [u8] = unsafe {
                std::slice::from_raw_parts_mut(guard.bytes.as_mut_ptr().cast(), guard.bytes.len())
            };
            if let Some(fix) = fix {
                fix(bytes);
            }
            guard.done = true;
        }
        Ok(())
    }

    /// Whether the source's length is known and its bytes are all there
    /// (a file, a slice, a sized member), so that a buffer for a claimed
    /// length may be allocated at once.
    pub(crate) fn is_trusted(&self) -> bool {
        self.trusted()
    }

    /// Fails with the error a read of `nbytes` would meet (a stream limit,
    /// or fewer bytes than claimed), before anything is allocated.
    pub(crate) fn check_len(&self, nbytes: u64) -> Result<()> {
        self.check_available(nbytes)
    }

    /// Reads `n` items of `item` bytes each and hands them to `each` in
    /// cache-sized chunks of whole items (with the number of items).
    pub(crate) fn read_chunks(
        &mut self,
        n: usize,
        item: usize,
        mut each: impl FnMut(&[u8], usize) -> Result<()>,
    ) -> Result<()> {
        let nbytes = n as u64 * item as u64;
        self.check_available(nbytes)?;
        if item == 0 {
            return each(&[], n);
        }
        let per_chunk = (SWAP_PIECE / item).max(1);
        let trusted = self.trusted();
        // Reused across chunks: every chunk overwrites what it uses. From a
        // source of unknown length the buffer grows only as bytes arrive,
        // so a header claiming a huge item costs no huge allocation.
        let mut buffer: Vec<u8> = Vec::new();
        let mut done = 0usize;
        while done < n {
            let count = per_chunk.min(n - done);
            let need = count * item;
            let mut filled = 0;
            while filled < need {
                let upto = if trusted {
                    need
                } else {
                    need.min(filled + STREAM_STEP.max(filled))
                };
                if buffer.len() < upto {
                    buffer
                        .try_reserve(upto - buffer.len())
                        .map_err(|_| out_of_memory(upto))?;
                    buffer.resize(upto, 0);
                }
                let part = &mut buffer[filled..upto];
                // SAFETY: `MaybeUninit<u8>` has the layout of `u8`; the
                // slice covers exactly `part`'s initialised bytes, which it
                // borrows.
                let raw: &mut [MaybeUninit<u8>] =
                    unsafe { std::slice::from_raw_parts_mut(part.as_mut_ptr().cast(), part.len()) };
                let got = self.fill(raw)?;
                if got < raw.len() {
                    return Err(Error::Data(crate::error::DataError::TruncatedData {
                        expected: nbytes,
                        found: (done * item + filled + got) as u64,
                    }));
                }
                filled = upto;
            }
            let scratch = &buffer[..need];
            each(scratch, count)?;
            done += count;
        }
        Ok(())
    }
}

/// Opens `path`, lets `preamble` read the header at its start (returning
/// it and the offset of the data), and hands the rest to `read`: as a file of
/// known length when it is a regular file, otherwise (a FIFO, `/dev/stdin`)
/// as a stream of unknown length under `options`' stream limit. I/O errors
/// name the path.
pub(crate) fn read_file<H, X>(
    path: &Path,
    options: &ReadOptions,
    preamble: impl FnOnce(&mut File) -> Result<(H, usize)>,
    read: impl FnOnce(&H, &mut Source<'_>) -> Result<X>,
) -> Result<X> {
    let inner = || {
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        let (header, offset) = preamble(&mut file)?;
        if meta.is_file() {
            let available = meta.len().saturating_sub(offset as u64);
            read(&header, &mut Source::file(&mut file, available))
        } else {
            // A FIFO or device: its length is unknown, so the stream limit holds.
            read(&header, &mut Source::stream_with(&mut file, options))
        }
    };
    inner().map_err(|e| e.at_path(path))
}

impl Source<'_> {
    /// All the bytes left (an object array's pickle), never allocating more
    /// than the source is known to hold or than has arrived.
    pub(crate) fn read_rest(&mut self) -> Result<Vec<u8>> {
        match self.known_len() {
            Some(len) => {
                let n = usize::try_from(len).map_err(|_| {
                    Error::Limit(crate::error::LimitError::LengthOverflow {
                        shape: vec![len],
                        itemsize: 1,
                    })
                })?;
                self.read_bytes(n)
            }
            None => {
                let mut out = Vec::new();
                if let Source::Stream { reader, max_len } = self {
                    let mut piece = vec![0u8; STREAM_STEP];
                    loop {
                        let got = crate::io::checked::read_full(*reader, &mut piece)?;
                        out.extend_from_slice(&piece[..got]);
                        // A pickle declares no length: the limit is checked
                        // as the bytes arrive.
                        if out.len() as u64 > *max_len {
                            return Err(Error::Limit(crate::error::LimitError::StreamLimit {
                                claimed: out.len() as u64,
                                max: *max_len,
                            }));
                        }
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

/// Bytes of the caller's `T`s being overwritten by a source: zeroed when
/// dropped before `done` (an error, or a panic of the caller's reader part
/// way), so no half-written or unfixed item (a `bool` that is not 0 or 1)
/// is ever left to be read, even after `catch_unwind`.
struct Unfixed<'a> {
    bytes: &'a mut [MaybeUninit<u8>],
    done: bool,
}

impl Drop for Unfixed<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.bytes.fill(MaybeUninit::new(0));
        }
    }
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
