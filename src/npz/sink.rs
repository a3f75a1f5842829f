//! A member's data on its way into the archive: stored as it comes, or
//! cut into blocks deflated on several threads and written in order.

use super::deflate::{Deflater, BLOCK};
use super::inflate::Pieces;
use super::zipwrite::ZipOut;
use crc32fast::Hasher;
use std::io::{self, Seek, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A compressed block and the CRC state of its uncompressed bytes.
pub(crate) type Piece = (Vec<u8>, Hasher);

/// Compression settings shared by an archive's members.
pub(crate) struct Pool {
    level: u32,
    threads: usize,
    /// One compressor per thread, made on first use.
    deflaters: Vec<Deflater>,
}

impl Pool {
    pub(crate) fn new(level: u32, threads: usize) -> Pool {
        Pool {
            level,
            threads: threads.max(1),
            deflaters: Vec::new(),
        }
    }

    pub(crate) fn level(&self) -> u32 {
        self.level
    }

    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    pub(crate) fn set_level(&mut self, level: u32) {
        if level != self.level {
            self.level = level;
            self.deflaters.clear();
        }
    }

    pub(crate) fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
        self.deflaters.truncate(self.threads);
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

    /// Deflates `blocks` (the last one ends the stream when `last`),
    /// spreading them over the threads: each block's piece and CRC state,
    /// in order. The bytes do not depend on the number of threads.
    fn compress(&mut self, blocks: &[Vec<u8>], last: bool) -> io::Result<Vec<Piece>> {
        let n = blocks.len();
        self.compress_with(blocks, &|i| last && i + 1 == n)
    }

    /// Deflates each of `blocks` into a whole stream of its own (the
    /// members of one batch of small members).
    pub(crate) fn compress_each(&mut self, blocks: &[Vec<u8>]) -> io::Result<Vec<Piece>> {
        self.compress_with(blocks, &|_| true)
    }

    fn compress_with(
        &mut self,
        blocks: &[Vec<u8>],
        ends: &(dyn Fn(usize) -> bool + Sync),
    ) -> io::Result<Vec<Piece>> {
        let workers = self.threads.min(blocks.len()).max(1);
        while self.deflaters.len() < workers {
            self.deflaters.push(Deflater::new(self.level));
        }
        let one = |d: &mut Deflater, i: usize| -> io::Result<Piece> {
            let mut crc = Hasher::new();
            crc.update(&blocks[i]);
            let piece = d.compress(&blocks[i], ends(i))?;
            Ok((piece, crc))
        };
        if workers == 1 {
            let d = &mut self.deflaters[0];
            return (0..blocks.len()).map(|i| one(d, i)).collect();
        }
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<io::Result<Piece>>>> =
            Mutex::new((0..blocks.len()).map(|_| None).collect());
        let work = |d: &mut Deflater| loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= blocks.len() {
                break;
            }
            let r = one(d, i);
            results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
        };
        std::thread::scope(|scope| {
            let (first, rest) = self.deflaters[..workers]
                .split_first_mut()
                .expect("at least one worker");
            for d in rest {
                scope.spawn(|| work(d));
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
}

/// The state of one member's data between writes.
pub(crate) struct MemberData {
    deflate: bool,
    /// The block being filled (deflated members).
    current: Vec<u8>,
    /// Full blocks waiting to be compressed together; none is the last.
    pending: Vec<Vec<u8>>,
    crc: Hasher,
    len: u64,
    /// The compressed length of every piece written (deflated members).
    pieces: Vec<u32>,
}

impl MemberData {
    pub(crate) fn new(deflate: bool) -> MemberData {
        MemberData {
            deflate,
            current: Vec::new(),
            pending: Vec::new(),
            crc: Hasher::new(),
            len: 0,
            pieces: Vec::new(),
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

    /// Writes what is left (the end of the deflate stream): the member's
    /// CRC state, uncompressed length and piece table.
    pub(crate) fn finish<W: Write + Seek>(
        mut self,
        out: &mut ZipOut<W>,
        pool: &mut Pool,
    ) -> io::Result<(Hasher, u64, Option<Pieces>)> {
        if self.deflate {
            let mut blocks = std::mem::take(&mut self.pending);
            blocks.push(std::mem::take(&mut self.current));
            self.flush_blocks(&blocks, true, out, pool)?;
        }
        let pieces = (self.pieces.len() > 1).then_some(Pieces {
            block: BLOCK as u32,
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
        for (piece, crc) in pool.compress(blocks, last)? {
            out.write_all(&piece)?;
            self.crc.combine(&crc);
            // A piece over 4 GiB cannot be recorded: no table then.
            self.pieces.push(u32::try_from(piece.len()).unwrap_or(0));
        }
        Ok(())
    }
}

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
        if !data.deflate {
            self.out.write_all(buf)?;
            data.crc.update(buf);
            data.len += buf.len() as u64;
            return Ok(buf.len());
        }
        if data.current.len() == BLOCK {
            // More bytes follow, so the full block is not the last.
            let full = std::mem::replace(&mut data.current, Vec::with_capacity(BLOCK));
            data.pending.push(full);
            if data.pending.len() >= self.pool.batch() {
                let blocks = std::mem::take(&mut data.pending);
                data.flush_blocks(&blocks, false, self.out, self.pool)?;
            }
        }
        if data.current.capacity() == 0 {
            data.current.reserve_exact(BLOCK);
        }
        let n = buf.len().min(BLOCK - data.current.len());
        data.current.extend_from_slice(&buf[..n]);
        data.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
