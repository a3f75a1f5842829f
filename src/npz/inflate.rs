//! Inflating a deflated member whole, rather than streaming it: with
//! libdeflate, which is about twice as fast as streaming zlib but needs the
//! whole input and output in memory, and, for members ndnpy wrote, on every
//! core.
//!
//! ndnpy's writer deflates a member in independent 1 MiB blocks
//! (`deflate.rs`), each piece byte-aligned. It records the compressed
//! length of every piece in a zip extra field of its own ([`BLOCKS_ID`],
//! in the central directory; Python's `zipfile`, and so NumPy, skip extra
//! fields they do not know). With that table each piece can be inflated on
//! its own thread into its own megabyte of the output.

use std::io;

/// The extra field id of the piece table: "nd" in the file.
pub(crate) const BLOCKS_ID: u16 = u16::from_le_bytes(*b"nd");

/// Deflate's largest expansion: a stream cannot inflate to more than about
/// 1032 times its length, so a member that claims more is not believed
/// (and not allocated for).
const MAX_RATIO: u64 = 1032;

/// The piece table of a member: uncompressed bytes per piece (all but the
/// last), and each piece's compressed length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pieces {
    pub(crate) block: u32,
    pub(crate) lengths: Vec<u32>,
}

impl Pieces {
    /// The extra field's data (without id and size), or `None` when the
    /// table does not fit in one extra field.
    pub(crate) fn encode(&self) -> Option<Vec<u8>> {
        let len = 4 + 4 * self.lengths.len();
        if len > u16::MAX as usize - 64 {
            return None;
        }
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&self.block.to_le_bytes());
        for l in &self.lengths {
            out.extend_from_slice(&l.to_le_bytes());
        }
        Some(out)
    }

    /// Reads a table back; `None` if malformed.
    pub(crate) fn decode(data: &[u8]) -> Option<Pieces> {
        if data.len() < 8 || !data.len().is_multiple_of(4) {
            return None;
        }
        let word = |i: usize| u32::from_le_bytes(data[4 * i..4 * i + 4].try_into().expect("4"));
        Some(Pieces {
            block: word(0),
            lengths: (1..data.len() / 4).map(word).collect(),
        })
    }

    /// Whether the table describes a member of `size` bytes deflated into
    /// `compressed` bytes.
    pub(crate) fn fits(&self, size: u64, compressed: u64) -> bool {
        let total: u64 = self.lengths.iter().map(|&l| l as u64).sum();
        self.block > 0
            && total == compressed
            && size.div_ceil(self.block as u64) == self.lengths.len() as u64
            && self.lengths.iter().all(|&l| l > 0)
    }
}

/// Whether a deflated member of `size` bytes (`compressed` in the archive)
/// is inflated whole: large enough for it to pay, at most `limit`, and not
/// claiming more than deflate can expand to.
pub(crate) fn inflate_whole(size: u64, compressed: u64, limit: u64) -> bool {
    (1 << 16..=limit).contains(&size) && size <= compressed.saturating_mul(MAX_RATIO) + (1 << 10)
}

/// Inflates the whole member `compressed` into exactly `size` bytes and
/// computes their CRC-32: piece by piece on up to `threads` threads when
/// `pieces` is given, else in one call. A stream that is corrupt or does not
/// give exactly `size` bytes is an `InvalidData` error.
pub(crate) fn inflate(
    compressed: &[u8],
    size: usize,
    pieces: Option<&Pieces>,
    threads: usize,
) -> io::Result<(Vec<u8>, u32)> {
    let mut out = vec![0u8; size];
    let Some(pieces) = pieces.filter(|p| p.lengths.len() > 1 && threads > 1) else {
        inflate_piece(compressed, &mut out, true)?;
        let crc = crc32fast::hash(&out);
        return Ok((out, crc));
    };
    let block = pieces.block as usize;
    let mut jobs = Vec::with_capacity(pieces.lengths.len());
    let mut at = 0usize;
    let last = pieces.lengths.len() - 1;
    for (i, (piece, target)) in pieces.lengths.iter().zip(out.chunks_mut(block)).enumerate() {
        let end = at + *piece as usize;
        jobs.push((&compressed[at..end], target, i == last));
        at = end;
    }
    let jobs = std::sync::Mutex::new(jobs.into_iter().enumerate());
    let failed = std::sync::Mutex::new(None);
    // Each piece's CRC, combined in order at the end.
    let crcs = std::sync::Mutex::new(vec![None; pieces.lengths.len()]);
    let work = || loop {
        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).next();
        let Some((i, (piece, target, last))) = job else {
            return;
        };
        if let Err(e) = inflate_piece(piece, target, last) {
            *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
            return;
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(target);
        crcs.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(crc);
    };
    std::thread::scope(|scope| {
        for _ in 1..threads.min(pieces.lengths.len()) {
            scope.spawn(work);
        }
        work();
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let mut crc = crc32fast::Hasher::new();
    for piece in crcs.into_inner().unwrap_or_else(|e| e.into_inner()) {
        crc.combine(&piece.ok_or_else(|| io::Error::other("an inflating thread failed"))?);
    }
    Ok((out, crc.finalize()))
}

/// Inflates one piece into exactly `out`. A piece other than the last ends
/// byte-aligned without a final block: an empty final block (fixed
/// Huffman, end-of-block only: `03 00`) makes it a whole stream.
fn inflate_piece(piece: &[u8], out: &mut [u8], last: bool) -> io::Result<()> {
    let mut decompressor = libdeflater::Decompressor::new();
    let owned;
    let input = if last {
        piece
    } else {
        owned = [piece, &[0x03, 0x00]].concat();
        &owned
    };
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
        let mut deflater = crate::npz::deflate::Deflater::new(6);
        let mut stream = Vec::new();
        let mut lengths = Vec::new();
        let chunks: Vec<&[u8]> = data.chunks(1 << 20).collect();
        for (i, chunk) in chunks.iter().enumerate() {
            let piece = deflater.compress(chunk, i == chunks.len() - 1).unwrap();
            lengths.push(piece.len() as u32);
            stream.extend_from_slice(&piece);
        }
        let pieces = Pieces {
            block: 1 << 20,
            lengths,
        };
        let whole = (data.clone(), crc32fast::hash(&data));
        assert_eq!(
            inflate(&stream, data.len(), Some(&pieces), 2).unwrap(),
            whole
        );
        assert_eq!(inflate(&stream, data.len(), None, 1).unwrap(), whole);
        let err = inflate(&stream, data.len() + 1, None, 1).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let mut broken = stream.clone();
        broken[100] ^= 0xFF;
        broken[101] ^= 0x55;
        assert!(inflate(&broken, data.len(), Some(&pieces), 2).is_err());
    }
}
