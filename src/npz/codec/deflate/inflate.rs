//! Inflating a deflated member whole, rather than streaming it: with
//! libdeflate, which is about twice as fast as streaming zlib but needs the
//! whole input and output in memory, and, for members ndnpy wrote, on every
//! core.
//!
//! ndnpy's writer deflates a member in independent 1 MiB blocks
//! (`compress.rs`), each piece byte-aligned. It records the compressed
//! length of every piece in a zip extra field of its own (`BLOCKS_ID`,
//! `npz/zip/pieces.rs`,
//! in the central directory; Python's `zipfile`, and so NumPy, skip extra
//! fields they do not know). With that table each piece can be inflated on
//! its own thread into its own megabyte of the output.

use crate::npz::zip::pieces::Pieces;
use std::io;
use std::mem::MaybeUninit;
use std::ops::Range;

/// Deflate's largest expansion: a stream cannot inflate to more than about
/// 1032 times its length, so a member that claims more is not believed
/// (and not allocated for).
pub(crate) const MAX_RATIO: u64 = 1032;

/// Whether a deflated member of `size` bytes (`compressed` in the archive)
/// is inflated whole: large enough for it to pay, at most `limit`, and not
/// claiming more than deflate can expand to.
pub(crate) fn inflate_whole(size: u64, compressed: u64, limit: u64) -> bool {
    (1 << 16..=limit).contains(&size) && size <= compressed.saturating_mul(MAX_RATIO) + (1 << 10)
}

/// Inflates the whole deflate stream `compressed` into exactly `size`
/// bytes, in one call, and computes their CRC-32. A stream that is corrupt
/// or does not give exactly `size` bytes is an `InvalidData` error. A
/// large stream (NumPy's members: one stream, no piece table) is inflated
/// on every core by `pinflate`.
pub(crate) fn inflate(compressed: &[u8], size: usize) -> io::Result<(Vec<u8>, u32)> {
    if let Some(threads) = super::pinflate::threads_for(compressed.len(), size) {
        return super::pinflate::inflate_parallel(compressed, size, threads);
    }
    let mut out = vec![0u8; size];
    inflate_piece(compressed, &mut out)?;
    let crc = crc32fast::hash(&out);
    Ok((out, crc))
}

/// Inflates pieces `which` of a member (its table `pieces`, checked with
/// [`Pieces::fits`]), reading their compressed bytes in order from `input`
/// (positioned at piece `which.start`), into `out`, which must be exactly
/// their bytes (a block each, the member's last piece what is left).
///
/// The calling thread reads the pieces, a few ahead, into buffers that are
/// reused (so the compressed member is never held whole: fresh memory is
/// costly to fault in), and inflates too when enough are waiting; up to
/// `threads - 1` more threads inflate. Each zeroes its piece of `out` just
/// before inflating into it (libdeflate writes into initialised memory),
/// so the output's pages are faulted in on every core and in cache. On
/// success all of `out` is initialised. Gives the CRC-32 state of `out`.
pub(crate) fn inflate_pieces(
    input: &mut dyn io::Read,
    pieces: &Pieces,
    which: Range<usize>,
    out: &mut [MaybeUninit<u8>],
    threads: usize,
) -> io::Result<crc32fast::Hasher> {
    // The reading, queueing and threads are the codecs' shared ones
    // (`codec/parallel.rs`); deflate brings how a piece is read and
    // inflated.
    crate::npz::codec::parallel::decode_pieces(&DeflatePieces, input, pieces, which, out, threads)
}

/// Deflate's pieces for [`crate::npz::codec::parallel::decode_pieces`]:
/// each completed as a whole stream ([`read_piece`]), inflated by
/// libdeflate into its zeroed output.
pub(crate) struct DeflatePieces;

// SAFETY: `decode_piece` zeroes all of `out` before inflating into it, so
// on `Ok` (as on any return) every byte is initialised.
unsafe impl crate::npz::codec::parallel::PieceDecoder for DeflatePieces {
    fn read_piece(
        &self,
        input: &mut dyn io::Read,
        pieces: &Pieces,
        piece: usize,
        buf: &mut Vec<u8>,
    ) -> io::Result<()> {
        read_piece(input, pieces, piece, buf)
    }

    fn decode_piece(&self, piece: &[u8], out: &mut [MaybeUninit<u8>]) -> io::Result<()> {
        // libdeflate writes into initialised memory: zeroed here, on the
        // thread that inflates, so its pages are faulted in where used.
        out.fill(MaybeUninit::new(0));
        // SAFETY: every byte of `out` was just initialised to zero;
        // `MaybeUninit<u8>` has the layout of `u8`.
        let out: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast(), out.len()) };
        inflate_piece(piece, out)
    }
}

/// Reads piece `piece` of `pieces` from `input` (positioned at it) into
/// `buf`, replacing what it held, completed as a whole deflate stream.
pub(crate) fn read_piece(
    input: &mut dyn io::Read,
    pieces: &Pieces,
    piece: usize,
    buf: &mut Vec<u8>,
) -> io::Result<()> {
    let len = pieces.lengths[piece] as usize;
    buf.clear();
    // Room for the final block too, so that completing the piece does not
    // move it.
    buf.try_reserve_exact(len.saturating_add(2))
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    crate::npz::codec::parallel::read_exactly(input, len, buf)?;
    if piece + 1 != pieces.lengths.len() {
        // A piece other than the last ends byte-aligned without a final
        // block: an empty final block (fixed Huffman, end-of-block only)
        // makes it a whole stream.
        buf.extend_from_slice(&[0x03, 0x00]);
    }
    Ok(())
}

/// Inflates one piece (completed with its final block) into `out`, made
/// exactly `len` bytes.
pub(crate) fn inflate_piece_into(input: &[u8], out: &mut Vec<u8>, len: usize) -> io::Result<()> {
    out.clear();
    out.try_reserve_exact(len)
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    out.resize(len, 0);
    inflate_piece(input, out)
}

/// Inflates one whole deflate stream (a piece completed with its final
/// block by the caller) into exactly `out`.
pub(crate) fn inflate_piece(input: &[u8], out: &mut [u8]) -> io::Result<()> {
    let mut decompressor = libdeflater::Decompressor::new();
    let n = decompressor.deflate_decompress(input, out).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("corrupt deflate data ({e:?})"),
        )
    })?;
    if n != out.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "deflate data gave {n} bytes where {} were declared",
                out.len()
            ),
        ));
    }
    Ok(())
}

/// `data` deflated as ndnpy's writer does it: independent 1 MiB pieces
/// back to back, and their table (for tests here and in `ahead.rs`).
#[cfg(test)]
pub(crate) fn deflate_in_pieces(data: &[u8]) -> (Vec<u8>, Pieces) {
    let mut deflater = crate::npz::codec::deflate::compress::Deflater::new(6);
    let (mut stream, mut lengths) = (Vec::new(), Vec::new());
    let chunks: Vec<&[u8]> = data.chunks(1 << 20).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        let piece = deflater.compress(chunk, i == chunks.len() - 1).unwrap();
        lengths.push(piece.len() as u32);
        stream.extend_from_slice(&piece);
    }
    let block = 1 << 20;
    (stream, Pieces { block, lengths })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_round_trip_and_are_checked() {
        let p = Pieces {
            block: 1 << 20,
            lengths: vec![10, 20, 5],
        };
        let back = Pieces::decode(&p.encode().unwrap()).unwrap();
        assert_eq!(back, p);
        assert!(p.fits(2 * (1 << 20) + 1, 35));
        assert!(!p.fits(2 * (1 << 20), 35));
        assert!(!p.fits(2 * (1 << 20) + 1, 36));
        assert!(Pieces::decode(&[1, 2, 3]).is_none());
    }

    #[test]
    fn pieces_inflate_in_parallel_as_one_stream() {
        let data: Vec<u8> = (0..3_500_000u32)
            .map(|i| (i % 251) as u8 ^ (i >> 12) as u8)
            .collect();
        let (stream, pieces) = deflate_in_pieces(&data);
        let whole = (data.clone(), crc32fast::hash(&data));
        let lengths0 = pieces.lengths[0] as usize;
        assert_eq!(inflate(&stream, data.len()).unwrap(), whole);
        // Piece 0 alone, then the rest on two threads: one stream's bytes
        // and CRC.
        let mut out = vec![MaybeUninit::new(0xAA); data.len()];
        let (head, rest) = out.split_at_mut(1 << 20);
        let mut crc = inflate_pieces(&mut &stream[..], &pieces, 0..1, head, 1).unwrap();
        crc.combine(&inflate_pieces(&mut &stream[lengths0..], &pieces, 1..4, rest, 2).unwrap());
        // SAFETY: initialised above.
        let out: Vec<u8> = out.iter().map(|b| unsafe { b.assume_init() }).collect();
        assert_eq!((out, crc.finalize()), whole);
        // Outputs that do not match the pieces asked for are refused.
        let mut short = vec![MaybeUninit::new(0); 1 << 20];
        assert!(inflate_pieces(&mut &stream[lengths0..], &pieces, 1..4, &mut short, 2).is_err());
        let err = inflate(&stream, data.len() + 1).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let mut broken = stream.clone();
        broken[100] ^= 0xFF;
        broken[101] ^= 0x55;
        let mut out = vec![MaybeUninit::new(0); data.len()];
        assert!(inflate_pieces(&mut &broken[..], &pieces, 0..4, &mut out, 2).is_err());
    }

    /// A reader that panics part way: the panic reaches the caller (no
    /// thread is left waiting for pieces that never come).
    #[test]
    fn a_panicking_reader_does_not_hang_the_threads() {
        struct Panics<'a>(&'a [u8], usize);
        impl io::Read for Panics<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.1 == 0 {
                    panic!("the caller's reader panicked");
                }
                self.1 -= 1;
                let n = buf.len().min(4096);
                self.0.read(&mut buf[..n])
            }
        }
        let data: Vec<u8> = (0..3_500_000u32).map(|i| (i % 251) as u8).collect();
        let (stream, pieces) = deflate_in_pieces(&data);
        let result = std::panic::catch_unwind(|| {
            let mut out = vec![MaybeUninit::new(0); data.len()];
            inflate_pieces(&mut Panics(&stream, 3), &pieces, 0..4, &mut out, 2).map(|_| ())
        });
        assert!(result.is_err(), "the panic was swallowed");
    }
}
