//! A member's data on its way into the archive: stored as it comes, or
//! cut into blocks compressed on several threads (deflate pieces that join
//! into one stream, or Zstandard segments of one frame) and written in
//! order.

use super::codec::Codec;
use super::zip::pieces::Pieces;
use super::zip::write::{Method, ZipOut};
use crate::npz::codec::deflate::compress::{Deflater, BLOCK};
use crc32fast::Hasher;
use std::io::{self, Seek, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A compressed block and the CRC state of its uncompressed bytes.
pub(crate) type Piece = (Vec<u8>, Hasher);

/// Compression settings shared by an archive's members.
pub(crate) struct Pool {
    codec: Codec,
    threads: usize,
    /// One compressor per thread, made on first use.
    compressors: Vec<Compressor>,
}

/// One thread's compressor for the pool's codec.
enum Compressor {
    Deflate(Deflater),
    #[cfg(feature = "zstd")]
    Zstd(super::codec::zstd::write::SegmentCompressor),
}

impl Compressor {
    fn new(codec: Codec) -> io::Result<Compressor> {
        Ok(match codec {
            Codec::Deflate { level } => Compressor::Deflate(Deflater::new(level)),
            // The writer stores such members itself, never through a pool.
            Codec::Stored => return Err(io::Error::other("stored members are not compressed")),
            #[cfg(feature = "zstd")]
            Codec::Zstd { level } => {
                use super::codec::zstd::write::{SegmentCompressor, SEGMENT};
                Compressor::Zstd(SegmentCompressor::new(level, SEGMENT)?)
            }
        })
    }

    /// Compresses `data`, the piece of a member that starts its stream
    /// when `first` and ends it when `last`.
    fn compress(&mut self, data: &[u8], first: bool, last: bool) -> io::Result<Vec<u8>> {
        match self {
            // A deflate stream has no header: only its end is marked.
            Compressor::Deflate(d) => {
                let _ = first;
                d.compress(data, last)
            }
            #[cfg(feature = "zstd")]
            Compressor::Zstd(z) => z.compress(data, first, last),
        }
    }
}

impl Pool {
    /// Deflate at `level` on `threads` threads.
    pub(crate) fn new(level: u32, threads: usize) -> Pool {
        Pool {
            codec: Codec::Deflate { level },
            threads: threads.max(1),
            compressors: Vec::new(),
        }
    }

    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// Compresses with `codec` from now on.
    pub(crate) fn set_codec(&mut self, codec: Codec) {
        let codec = codec.clamped();
        if codec != self.codec && codec != Codec::Stored {
            self.codec = codec;
            self.compressors.clear();
        }
    }

    pub(crate) fn codec(&self) -> Codec {
        self.codec
    }

    /// The zip method of the members this pool compresses.
    pub(crate) fn method(&self) -> Method {
        match self.codec {
            Codec::Deflate { .. } => Method::Deflated,
            Codec::Stored => Method::Stored,
            #[cfg(feature = "zstd")]
            Codec::Zstd { .. } => Method::Zstd,
        }
    }

    /// Uncompressed bytes per independently compressed piece: a fixed
    /// size per codec, so that the archive's bytes do not depend on the
    /// number of threads.
    pub(crate) fn block(&self) -> usize {
        match self.codec {
            Codec::Deflate { .. } | Codec::Stored => BLOCK,
            #[cfg(feature = "zstd")]
            Codec::Zstd { .. } => super::codec::zstd::write::SEGMENT,
        }
    }

    pub(crate) fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
        self.compressors.truncate(self.threads);
    }

    /// Blocks gathered before they are compressed together: several per
    /// thread, so that the threads idle little while the batch's last
    /// blocks finish (the batch size does not change the bytes).
    pub(crate) fn batch(&self) -> usize {
        if self.threads == 1 {
            1
        } else {
            (4 * self.threads).max(8)
        }
    }

    /// Compresses `blocks` (the first one starts the stream when `first`,
    /// the last one ends it when `last`), spreading them over the threads:
    /// each block's piece and CRC state, in order. The bytes do not depend
    /// on the number of threads.
    fn compress(&mut self, blocks: &[Vec<u8>], first: bool, last: bool) -> io::Result<Vec<Piece>> {
        let n = blocks.len();
        self.compress_with(blocks, &|i| first && i == 0, &|i| last && i + 1 == n)
    }

    /// Compresses each of `blocks` into a whole stream of its own (the
    /// members of one batch of small members).
    pub(crate) fn compress_each(&mut self, blocks: &[Vec<u8>]) -> io::Result<Vec<Piece>> {
        self.compress_with(blocks, &|_| true, &|_| true)
    }

    fn compress_with(
        &mut self,
        blocks: &[Vec<u8>],
        starts: &(dyn Fn(usize) -> bool + Sync),
        ends: &(dyn Fn(usize) -> bool + Sync),
    ) -> io::Result<Vec<Piece>> {
        let workers = self.threads.min(blocks.len()).max(1);
        while self.compressors.len() < workers {
            self.compressors.push(Compressor::new(self.codec)?);
        }
        let one = |c: &mut Compressor, i: usize| -> io::Result<Piece> {
            let mut crc = Hasher::new();
            crc.update(&blocks[i]);
            let piece = c.compress(&blocks[i], starts(i), ends(i))?;
            Ok((piece, crc))
        };
        if workers == 1 {
            let c = &mut self.compressors[0];
            return (0..blocks.len()).map(|i| one(c, i)).collect();
        }
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<io::Result<Piece>>>> =
            Mutex::new((0..blocks.len()).map(|_| None).collect());
        let work = |c: &mut Compressor| loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= blocks.len() {
                break;
            }
            let r = one(c, i);
            results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
        };
        // Helpers as the budget of cores allows (`exec.rs`); the caller
        // compresses what they do not take. A helper's panic leaves its
        // block without a result: an error below.
        let _ = crate::exec::scope(|scope| {
            let (first, rest) = self.compressors[..workers]
                .split_first_mut()
                .expect("at least one worker");
            for c in rest {
                if !scope.spawn("ndnpy-deflate", || work(c)) {
                    break;
                }
            }
            work(first);
        });
        results
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(io::Error::other("a compression thread failed"))))
            .collect()
    }

    /// The start of a member's stream written before its pieces, when the
    /// codec has one (Zstandard's frame header; deflate has none).
    #[cfg_attr(not(feature = "zstd"), allow(dead_code))]
    pub(crate) fn stream_header(&mut self) -> io::Result<Vec<u8>> {
        if self.compressors.is_empty() {
            self.compressors.push(Compressor::new(self.codec)?);
        }
        match &mut self.compressors[0] {
            Compressor::Deflate(_) => Ok(Vec::new()),
            #[cfg(feature = "zstd")]
            Compressor::Zstd(z) => z.compress(&[], true, false),
        }
    }
}

/// The state of one member's data between writes.
pub(crate) struct MemberData {
    compress: bool,
    /// The next piece starts the member's stream (its codec writes a
    /// header first).
    first: bool,
    /// The block being filled (compressed members).
    current: Vec<u8>,
    /// Full blocks waiting to be compressed together; none is the last.
    pending: Vec<Vec<u8>>,
    crc: Hasher,
    len: u64,
    /// The compressed length of every piece written (compressed members).
    pieces: Vec<u32>,
}

impl MemberData {
    /// A member's data, compressed (by the pool's codec) or stored.
    pub(crate) fn new(compress: bool) -> MemberData {
        MemberData {
            compress,
            first: true,
            current: Vec::new(),
            pending: Vec::new(),
            crc: Hasher::new(),
            len: 0,
            pieces: Vec::new(),
        }
    }

    /// A compressed member's data whose stream was started already (its
    /// header written, with the `.npy` header stored after it).
    #[cfg_attr(not(feature = "zstd"), allow(dead_code))]
    pub(crate) fn continuing() -> MemberData {
        MemberData {
            first: false,
            ..MemberData::new(true)
        }
    }

    /// The sink that writes into `out`.
    pub(crate) fn sink<'a, W: Write + Seek>(
        &'a mut self,
        out: &'a mut ZipOut<W>,
        pool: &'a mut Pool,
    ) -> Sink<'a, W> {
        Sink {
            data: self,
            out,
            pool,
        }
    }

    /// Writes what is left (the end of the stream): the member's CRC
    /// state, uncompressed length and piece table.
    pub(crate) fn finish<W: Write + Seek>(
        mut self,
        out: &mut ZipOut<W>,
        pool: &mut Pool,
    ) -> io::Result<(Hasher, u64, Option<Pieces>)> {
        if self.compress {
            let mut blocks = std::mem::take(&mut self.pending);
            blocks.push(std::mem::take(&mut self.current));
            self.flush_blocks(&blocks, true, out, pool)?;
        }
        let pieces = (self.pieces.len() > 1).then_some(Pieces {
            block: pool.block() as u32,
            lengths: self.pieces,
        });
        Ok((self.crc, self.len, pieces))
    }

    fn flush_blocks<W: Write + Seek>(
        &mut self,
        blocks: &[Vec<u8>],
        last: bool,
        out: &mut ZipOut<W>,
        pool: &mut Pool,
    ) -> io::Result<()> {
        let first = std::mem::replace(&mut self.first, false);
        for (piece, crc) in pool.compress(blocks, first, last)? {
            out.write_all(&piece)?;
            self.crc.combine(&crc);
            // A piece over 4 GiB cannot be recorded: no table then.
            self.pieces.push(u32::try_from(piece.len()).unwrap_or(0));
        }
        Ok(())
    }
}

/// How much of a stored member's data [`Sink`] writes at a time.
const STORED_CHUNK: usize = 1 << 20;

/// `io::Write` into a member: what `write_body` writes an array through.
pub(crate) struct Sink<'a, W> {
    data: &'a mut MemberData,
    out: &'a mut ZipOut<W>,
    pool: &'a mut Pool,
}

impl<W: Write + Seek> Write for Sink<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let data = &mut *self.data;
        if !data.compress {
            // A chunk at a time, so that the CRC reads what was just
            // written while it is in cache: a tensor of hundreds of MiB
            // written whole and then checksummed is two passes over
            // memory. A chunk as large as `NpzWriter`'s buffer is written
            // past it, not copied into it.
            let n = buf.len().min(STORED_CHUNK);
            self.out.write_all(&buf[..n])?;
            data.crc.update(&buf[..n]);
            data.len += n as u64;
            return Ok(n);
        }
        let block = self.pool.block();
        if data.current.len() == block {
            // More bytes follow, so the full block is not the last.
            let full = std::mem::replace(&mut data.current, Vec::with_capacity(block));
            data.pending.push(full);
            if data.pending.len() >= self.pool.batch() {
                let blocks = std::mem::take(&mut data.pending);
                data.flush_blocks(&blocks, false, self.out, self.pool)?;
            }
        }
        if data.current.capacity() == 0 {
            data.current.reserve_exact(block);
        }
        let n = buf.len().min(block - data.current.len());
        data.current.extend_from_slice(&buf[..n]);
        data.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
