//! One deflate stream inflated on several cores, as rapidgzip (Knespel
//! and Brunst, HPDC 2023) and pugz do it: for the members that
//! `np.savez_compressed` writes, one raw deflate stream each, with no
//! piece table to split them by.
//!
//! The compressed bytes are cut into chunks of about 4 MiB of output
//! (`driver.rs`, `Plan`). For each chunk but the first, a thread looks for
//! a block start in the chunk's range by trial (`finder.rs`: dynamic
//! Huffman and stored block headers that are not the last, checked as the
//! decoder checks them) and decodes from there with the 32 KiB window
//! unknown: back-references into it become 16-bit markers (`chunk.rs`),
//! until 32 KiB pass with none or the real window arrives, and then plain
//! bytes. It stops at the first boundary at or past the next chunk's
//! range where a chunk may start. The resolver (`resolve.rs`) joins the
//! chunks in order: a chunk is taken only if it starts exactly where the
//! true decoding before it ended (same bit, same kind of boundary), so a
//! false start of the block finder is dropped, never trusted; what no
//! chunk covers, the resolver decodes itself, sequentially, from the last
//! true boundary, straight into the output. The resolver carries only the
//! window forward; copying a taken chunk into the output with its markers
//! replaced, and its CRC-32, is a task for any thread. The whole output's
//! CRC-32 (pieces joined with `combine`) and length are what the caller
//! checks against the zip directory.
//!
//! Cost: for any input, a small multiple of the sequential decoding's.
//! What a chunk spends on anything the output does not use (the block
//! search, header checks and their tables, candidates that decode and are
//! rejected, each candidate held to what is left) counts, in units of
//! about a decoded symbol, against a budget of about one chunk's own
//! decoding (`chunk.rs`, `finder.rs`): a chunk that spends it gives up,
//! and the resolver decodes its range sequentially. Once chunks have
//! wasted more than half the output decoded so far (a stream whose blocks
//! the finder cannot find, or one crafted against it), no chunk is handed
//! out any more and the resolver decodes the rest on its own; chunks
//! still running stop at their next candidate or within 128 K symbols (as
//! they do when the stream ends or fails). The units are estimates of
//! time, so the bound is a multiple, measured in BENCHMARKS.md, not an
//! exact factor. The
//! tests hold the chunks' work to twice the output on streams crafted
//! for this (`tests/hostile.rs`, `fixtures/pinflate/`), and the fuzz
//! target treats a slow input as a finding.
//!
//! Input: the compressed stream in memory, or in the archive file
//! (`input.rs`): then each chunk reads its range, from 64 bytes before it
//! to as much again past it (64 KiB to 1 MiB: where its last block must
//! end, or it fails and the resolver decodes its range), into its
//! thread's buffer, and the resolver reads windows from where it stands,
//! stopping 1 KiB before each window's end and going on in the next from
//! the same bit. So the member is never copied whole into fresh memory,
//! whose first touch cost as much as a third of the decoding on 2 cores
//! (BENCHMARKS.md, "Round 8").
//!
//! Memory: the output (the declared size, which the caller has checked
//! against deflate's largest expansion, 1032:1, and which the stream may
//! not exceed), plus, read from a file, a window per thread (a chunk's
//! range and as much again) and the resolver's (at most 64 times that),
//! plus at most `3 × threads` sets of chunk buffers, each a
//! `u16` and a `u8` buffer of `cap + 4 MiB + 32 KiB` symbols, where `cap`
//! is four times a chunk's expected output (1 to 64 MiB; 16 MiB with the
//! default plan). Buffers are allocated zeroed and reused, so only what
//! chunks write is resident: about 5 MiB a set for the members measured
//! (BENCHMARKS.md), at worst `3 × (cap + 4 MiB + 32 KiB)` bytes a set (a
//! chunk all markers, then one all bytes). Plus 40 KiB of tables a set and
//! 32 KiB per published window.
//!
//! The decoder is the library's own (`npz/codec/deflate/inflate_core/`, shared with
//! the seek index and the writer), needed for the markers: libdeflate
//! can neither start mid-stream at a bit nor keep unknown window bytes;
//! on one core it runs about as fast as libdeflate on NumPy's float
//! arrays. This folder holds only the parallel machinery: the block
//! finder, chunks, the resolver and the driver.

mod chunk;
mod driver;
mod finder;
mod input;
mod key;
mod memory;
mod resolve;
#[cfg(test)]
mod tests;

use super::inflate_core::Bad;
pub(crate) use input::Input;
use key::MAX_THREADS;
use std::io;

/// Members smaller than this are inflated on one thread (libdeflate):
/// below it the threads, the chunk buffers' first page faults and the
/// markers do not pay. Measured on 2 cores: 2 threads beat libdeflate by
/// 1.5x on 16 MiB of random floats, but lose by up to 1.8x on 32 MiB of a
/// rounded random walk (whose markers never die out) when the other core
/// is busy, and win from 64 MiB on.
const MIN_PARALLEL: usize = 32 << 20;

/// How many threads to inflate a member of `size` bytes (`compressed` in
/// the archive) on, when more than one pays: `None` for a small member, a
/// single core, or when other work holds every core of the library's
/// budget (`exec.rs`; then one thread inflates it, with libdeflate).
pub(crate) fn threads_for(compressed: usize, size: usize) -> Option<usize> {
    let threads = crate::exec::free_threads().min(MAX_THREADS);
    (threads > 1 && large(compressed, size)).then_some(threads)
}

/// Whether a member of `size` bytes (`compressed` in the archive) is large
/// enough to inflate on several threads when there are cores for it.
pub(crate) fn large(compressed: usize, size: usize) -> bool {
    size >= MIN_PARALLEL && compressed >= 1 << 20
}

/// Inflates the raw deflate stream `compressed` into exactly `size`
/// bytes on up to `threads` threads, and gives them with their CRC-32
/// (which the caller checks). A stream that is corrupt, ends early, or
/// gives more or fewer than `size` bytes is an `InvalidData` error.
/// Bytes after the stream's last block are ignored, as the sequential
/// inflaters ignore them.
pub(crate) fn inflate_parallel(
    compressed: &[u8],
    size: usize,
    threads: usize,
) -> io::Result<(Vec<u8>, u32)> {
    driver::inflate(
        compressed,
        size,
        driver::Plan::new(compressed.len(), size, threads),
    )
}

/// [`inflate_parallel`] of `input` (in memory, or read from the archive
/// file a window at a time: `input.rs`) into the caller's `out` (exactly
/// the declared size: an array's own memory, say, so that the bytes are
/// not copied again); gives the CRC-32. On error, `out` holds unspecified
/// bytes.
pub(crate) fn inflate_parallel_into(
    input: &Input,
    out: &mut [u8],
    threads: usize,
) -> io::Result<u32> {
    if out.len() as u64 > input.len().saturating_mul(1032) + 1024 {
        return Err(Bad::TooLong.into_io());
    }
    let compressed = usize::try_from(input.len()).map_err(|_| Bad::TooLong.into_io())?;
    let mut plan = driver::Plan::new(compressed, out.len(), threads);
    if let Input::File { .. } = input {
        plan = plan.reading_file();
    }
    driver::inflate_into(input, out, plan).map_err(Bad::into_io)
}

/// [`inflate_parallel`] with chunks of `chunk` compressed bytes (0: the
/// default), for the fuzz target and the benchmark. Not a public API.
#[doc(hidden)]
pub fn __inflate_parallel(
    compressed: &[u8],
    size: usize,
    threads: usize,
    chunk: usize,
) -> io::Result<(Vec<u8>, u32)> {
    let mut plan = driver::Plan::new(compressed.len(), size, threads);
    if chunk > 0 {
        plan = plan.with_chunk(chunk);
    }
    driver::inflate(compressed, size, plan)
}
