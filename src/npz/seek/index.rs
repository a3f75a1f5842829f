//! The seek index of one deflated member: block boundaries every
//! [`SPAN`] bytes of output or so, each with its bit position and the
//! 32 KiB of output before it, so that any byte range can be decoded
//! starting at most a span (plus a block) before it.
//!
//! It is built on demand, as far as a read needs: a read past its last
//! checkpoint decodes on from there, adding checkpoints and the CRC-32 of
//! everything decoded so far, and a decoding that reaches the member's
//! end checks its size and CRC-32 (then the index is complete, and every
//! checkpoint is known to lie on the true decoding). Reads behind the last
//! checkpoint start at the nearest one before them.
//!
//! A read that asks for it (`verify`: a range that covers the whole
//! member) decodes from the member's start and checks the CRC-32 whatever
//! the index says, as a whole read does. Checkpoints that came from a
//! sidecar are not trusted until used: each carries the CRC-32 of its
//! window and of the compressed bytes from it to the next checkpoint
//! ([`SeekIndex::span_end`]), which the first read that starts there
//! checks against the archive's bytes; a mismatch throws the whole index
//! away (it was made for other bytes) and the read starts from the
//! member's start.

use crate::npz::codec::deflate::inflate_core::{Stop, StreamInflater, WINDOW};
use std::io::{self, Read, Seek, SeekFrom};

/// Output between checkpoints: a read decodes at most this much (plus one
/// block) before its first byte. The index holds 32 KiB per span (0.8 %
/// of the member).
pub(crate) const SPAN: u64 = 4 << 20;

/// Output decoded before the buffer is slid back to its window: the
/// decoder's memory.
const FLUSH: usize = 4 << 20;

/// What went wrong (mapped by the caller to the member's error).
fn corrupt(why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("corrupt deflate data ({why})"),
    )
}

/// A place to start decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checkpoint {
    /// Output position (bytes of the member before it).
    pub(crate) out: u64,
    /// Bit position of the block header, from the member's first
    /// compressed byte.
    pub(crate) bit: u64,
    /// CRC-32 of the output before it.
    pub(crate) crc: u32,
    /// The output's last `min(out, 32 KiB)` bytes before it.
    pub(crate) window: Box<[u8]>,
    /// The CRC-32 of the window and of the compressed bytes from this
    /// checkpoint to its span's end ([`SeekIndex::span_end`]), and that
    /// end: what a sidecar records, computed when it is saved.
    pub(crate) check: Option<(u64, u32)>,
    /// Built by this reader, or checked against the archive's bytes since
    /// it was loaded from a sidecar.
    pub(crate) trusted: bool,
}

impl Checkpoint {
    /// Whether two checkpoints describe the same place (what a sidecar
    /// round trip keeps).
    #[cfg(test)]
    pub(crate) fn same_place(&self, other: &Checkpoint) -> bool {
        (self.out, self.bit, self.crc, &self.window)
            == (other.out, other.bit, other.crc, &other.window)
    }
}

/// What a member's index is for: its data offset, sizes and CRC-32 (a
/// sidecar's entry must match them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct MemberKey {
    pub(crate) data_start: u64,
    pub(crate) compressed: u64,
    pub(crate) size: u64,
    pub(crate) crc: u32,
}

/// A member's seek index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeekIndex {
    pub(crate) key: MemberKey,
    /// In order of output position; the first is the member's start.
    pub(crate) checkpoints: Vec<Checkpoint>,
    /// Decoded to its end once, size and CRC-32 checked.
    pub(crate) complete: bool,
}

/// How a decoding ended, for errors.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The member's bytes do not match its CRC-32.
    BadCrc,
    /// Anything else: an `InvalidData` error saying what.
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Io(e)
    }
}

impl SeekIndex {
    /// An index holding only the member's start.
    pub(crate) fn new(key: MemberKey) -> SeekIndex {
        SeekIndex {
            key,
            checkpoints: vec![Checkpoint {
                out: 0,
                bit: 0,
                crc: 0,
                window: Box::new([]),
                check: None,
                trusted: true,
            }],
            complete: false,
        }
    }

    /// Where checkpoint `i`'s span of compressed bytes ends (exclusive):
    /// the byte holding the next checkpoint's first bit, the member's end
    /// after the last checkpoint of a complete index, else the byte holding
    /// its own first bit (a span that checks only the window).
    pub(crate) fn span_end(&self, i: usize) -> u64 {
        match self.checkpoints.get(i + 1) {
            Some(next) => next.bit.div_ceil(8),
            None if self.complete => self.key.compressed,
            None => self.checkpoints[i].bit.div_ceil(8),
        }
    }

    /// The member's compressed bytes from byte `byte` on, from `input`
    /// (the archive, the member's data at `data_start`).
    fn open<'a, I: Read + Seek>(
        &self,
        input: &'a mut I,
        data_start: u64,
        byte: u64,
    ) -> io::Result<io::Take<&'a mut I>> {
        input.seek(SeekFrom::Start(data_start + byte))?;
        Ok(input.take(self.key.compressed.saturating_sub(byte)))
    }

    /// The CRC-32 of checkpoint `i`'s window and of its span of compressed
    /// bytes, read from `input` (as [`SeekIndex::read`]'s).
    pub(crate) fn span_crc<I: Read + Seek>(
        &self,
        i: usize,
        input: &mut I,
        data_start: u64,
    ) -> io::Result<u32> {
        let cp = &self.checkpoints[i];
        let (from, to) = (cp.bit / 8, self.span_end(i));
        let mut crc = crc32fast::Hasher::new();
        crc.update(&cp.window);
        let mut input = self
            .open(input, data_start, from)?
            .take(to.saturating_sub(from));
        let mut buf = vec![0u8; 256 << 10];
        let mut got = 0;
        loop {
            let n = match input.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            crc.update(&buf[..n]);
            got += n as u64;
        }
        if got != to.saturating_sub(from) {
            return Err(corrupt("its data ends inside a span of its seek index"));
        }
        Ok(crc.finalize())
    }

    /// Checks checkpoint `i` (loaded from a sidecar) against the archive's
    /// bytes; a checkpoint that does not match makes the whole index one
    /// of the member's start only.
    fn check_loaded<I: Read + Seek>(
        &mut self,
        i: usize,
        input: &mut I,
        data_start: u64,
    ) -> io::Result<()> {
        if self.checkpoints[i].trusted {
            return Ok(());
        }
        let ok = match self.checkpoints[i].check {
            Some((end, crc)) => {
                end == self.span_end(i) && self.span_crc(i, input, data_start)? == crc
            }
            None => false,
        };
        if ok {
            self.checkpoints[i].trusted = true;
        } else {
            *self = SeekIndex::new(self.key);
        }
        Ok(())
    }

    /// Bytes `start..end` of the member (within its declared size),
    /// decoded from the nearest checkpoint before `start`, extending the
    /// index when that is its last one; with `verify`, decoded from the
    /// member's start to its end, the size and CRC-32 checked (whatever
    /// the index holds). `input` is the archive, the member's compressed
    /// bytes at `data_start`.
    pub(crate) fn read<I: Read + Seek>(
        &mut self,
        start: u64,
        end: u64,
        verify: bool,
        input: &mut I,
        data_start: u64,
    ) -> Result<Vec<u8>, Failure> {
        debug_assert!(start <= end && end <= self.key.size);
        let mut at = match verify {
            true => 0,
            false => self.checkpoints.partition_point(|c| c.out <= start) - 1,
        };
        if !verify {
            self.check_loaded(at, input, data_start)?;
        }
        if at >= self.checkpoints.len() {
            // Thrown away: from the start.
            at = 0;
        }
        let extend = at + 1 == self.checkpoints.len() && !self.complete;
        // A whole-member read hashes everything from the start, and reads
        // on to the end to check it.
        let (hash, end_at) = match verify {
            true => (true, self.key.size),
            false => (extend, end),
        };
        let want_end = end;
        let end = end_at;
        let cp = &self.checkpoints[at];
        let source = self.open(input, data_start, cp.bit / 8)?;
        let mut inflater = StreamInflater::at(source, cp.bit, &cp.window, cp.out);
        let mut crc = crc32fast::Hasher::new_with_initial(cp.crc);
        let mut last = cp.out;
        let mut got = Vec::new();
        // The bytes arrive as decoded: memory follows them, whatever the
        // header claims.
        got.try_reserve((end - start).min(64 << 20) as usize)
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let mut done = cp.out;
        loop {
            let stop = inflater.run(WINDOW + FLUSH)?;
            // The decoder's memory stays a window and a flush or two.
            debug_assert!(inflater.out().len() <= WINDOW + 2 * FLUSH + 258);
            let total = inflater.total_out();
            if total > self.key.size {
                return Err(corrupt("it inflates past the size the archive declares").into());
            }
            // The new bytes: output positions `done..total`.
            let new = &inflater.out()[(done - inflater.out_base()) as usize..];
            let (from, to) = (start.max(done), want_end.min(total));
            if from < to {
                got.extend_from_slice(&new[(from - done) as usize..(to - done) as usize]);
            }
            if hash {
                crc.update(new);
            }
            done = total;
            match stop {
                Stop::Boundary => {
                    if extend && total >= last + SPAN {
                        let out = inflater.out();
                        let window = out[out.len() - out.len().min(WINDOW)..].into();
                        self.checkpoints.push(Checkpoint {
                            out: total,
                            bit: inflater.position(),
                            crc: crc.clone().finalize(),
                            window,
                            check: None,
                            trusted: true,
                        });
                        last = total;
                    }
                    if total >= end {
                        return Ok(got);
                    }
                    // Not at every boundary: a slide moves the window.
                    if inflater.out().len() >= FLUSH {
                        inflater.slide();
                    }
                }
                Stop::Full => inflater.slide(),
                Stop::End => {
                    if total < end || (hash && total != self.key.size) {
                        return Err(corrupt(&format!(
                            "its data ends after {total} of the {} bytes the archive declares",
                            self.key.size
                        ))
                        .into());
                    }
                    if hash {
                        if crc.finalize() != self.key.crc {
                            // Checkpoints past a corrupt stretch are no
                            // better than it.
                            self.checkpoints.truncate(1);
                            self.complete = false;
                            return Err(Failure::BadCrc);
                        }
                        self.complete |= extend;
                    }
                    return Ok(got);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn data() -> Vec<u8> {
        (0..11_000_000u32)
            .map(|i| ((i / 3) % 251) as u8 ^ ((i >> 15) as u8).wrapping_mul(7))
            .collect()
    }

    fn deflated(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn key(data: &[u8], stream: &[u8]) -> MemberKey {
        MemberKey {
            data_start: 0,
            compressed: stream.len() as u64,
            size: data.len() as u64,
            crc: crc32fast::hash(data),
        }
    }

    #[test]
    fn ranges_anywhere_come_back_exactly_and_build_the_index_on_the_way() {
        let data = data();
        let stream = deflated(&data);
        let mut index = SeekIndex::new(key(&data, &stream));
        let n = data.len() as u64;
        // From the middle first: the index grows to there.
        let got = index
            .read(
                5_000_000,
                5_001_000,
                false,
                &mut io::Cursor::new(&stream[..]),
                0,
            )
            .unwrap();
        assert!(got == data[5_000_000..5_001_000]);
        let built = index.checkpoints.len();
        assert!(built >= 2 && !index.complete, "{built}");
        assert!(index.checkpoints.last().unwrap().out <= 5_001_000 + SPAN);
        // Behind it: from a checkpoint, nothing added.
        for (a, b) in [(0, 10), (4_200_000, 4_300_000), (1, 5_000_000), (3, 3)] {
            assert!(
                index
                    .read(a, b, false, &mut io::Cursor::new(&stream[..]), 0)
                    .unwrap()
                    == data[a as usize..b as usize]
            );
        }
        assert_eq!(index.checkpoints.len(), built);
        // To the end: complete, CRC checked.
        assert!(
            index
                .read(n - 5, n, false, &mut io::Cursor::new(&stream[..]), 0)
                .unwrap()
                == data[data.len() - 5..]
        );
        assert!(index.complete);
        let spans = index.checkpoints.len() as u64;
        assert!(spans >= n / SPAN && spans <= n / SPAN + 1, "{spans}");
        for w in index.checkpoints.windows(2) {
            assert!(w[1].out >= w[0].out + SPAN);
            assert_eq!(w[1].crc, crc32fast::hash(&data[..w[1].out as usize]));
        }
        assert!(
            index
                .read(9_999_000, n, false, &mut io::Cursor::new(&stream[..]), 0)
                .unwrap()
                == data[9_999_000..]
        );
    }

    #[test]
    fn a_whole_member_read_checks_the_crc_even_when_the_index_is_complete() {
        let data = data();
        let stream = deflated(&data);
        let n = data.len() as u64;
        let mut index = SeekIndex::new(key(&data, &stream));
        assert!(index
            .read(n - 1, n, false, &mut io::Cursor::new(&stream[..]), 0)
            .is_ok());
        assert!(index.complete);
        // The same index, over a CRC that no longer matches (the archive's
        // bytes changed after the index was made): a range of some rows
        // cannot tell, the whole member can.
        index.key.crc ^= 1;
        assert!(index
            .read(10, 20, false, &mut io::Cursor::new(&stream[..]), 0)
            .is_ok());
        assert!(matches!(
            index.read(0, n, true, &mut io::Cursor::new(&stream[..]), 0),
            Err(Failure::BadCrc)
        ));
        index.key.crc ^= 1;
        assert!(
            index
                .read(0, n, true, &mut io::Cursor::new(&stream[..]), 0)
                .unwrap()
                == data
        );
    }

    #[test]
    fn a_wrong_crc_or_size_is_found_when_the_end_is_reached() {
        let data = data();
        let stream = deflated(&data);
        let n = data.len() as u64;
        let mut k = key(&data, &stream);
        k.crc ^= 1;
        let mut index = SeekIndex::new(k);
        assert!(index
            .read(0, 100, false, &mut io::Cursor::new(&stream[..]), 0)
            .is_ok());
        assert!(matches!(
            index.read(n - 1, n, false, &mut io::Cursor::new(&stream[..]), 0),
            Err(Failure::BadCrc)
        ));
        assert_eq!(index.checkpoints.len(), 1);
        let mut k = key(&data, &stream);
        k.size += 10;
        let mut index = SeekIndex::new(k);
        assert!(matches!(
            index.read(n, n + 10, false, &mut io::Cursor::new(&stream[..]), 0),
            Err(Failure::Io(_))
        ));
        let mut k = key(&data, &stream);
        k.size -= 10;
        let mut index = SeekIndex::new(k);
        assert!(matches!(
            index.read(n - 20, n - 10, false, &mut io::Cursor::new(&stream[..]), 0),
            Err(Failure::Io(_))
        ));
        // Cut short.
        let short = &stream[..stream.len() / 2];
        let mut index = SeekIndex::new(key(&data, &stream));
        let r = index.read(n - 10, n, false, &mut io::Cursor::new(short), 0);
        assert!(matches!(r, Err(Failure::Io(_))));
    }
}
