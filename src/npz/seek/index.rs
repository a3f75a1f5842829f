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

use super::inflate::{corrupt, Inflater, Stop, WINDOW};
use std::io::{self, Read};

/// Output between checkpoints: a read decodes at most this much (plus one
/// block) before its first byte. The index holds 32 KiB per span (0.8 %
/// of the member).
pub(crate) const SPAN: u64 = 4 << 20;

/// Output decoded before the buffer is slid back to its window: the
/// decoder's memory.
const FLUSH: usize = 4 << 20;

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
            }],
            complete: false,
        }
    }

    /// Bytes `start..end` of the member (within its declared size),
    /// decoded from the nearest checkpoint before `start`, extending the
    /// index when that is its last one. `open(byte)` gives the member's
    /// compressed bytes from byte `byte` on.
    pub(crate) fn read<R: Read>(
        &mut self,
        start: u64,
        end: u64,
        open: impl FnOnce(u64) -> io::Result<R>,
    ) -> Result<Vec<u8>, Failure> {
        debug_assert!(start <= end && end <= self.key.size);
        let at = self.checkpoints.partition_point(|c| c.out <= start) - 1;
        let extend = at + 1 == self.checkpoints.len() && !self.complete;
        let cp = &self.checkpoints[at];
        let mut inflater = Inflater::at(open(cp.bit / 8)?, cp.bit, &cp.window, cp.out)?;
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
            debug_assert!(inflater.out.len() <= WINDOW + 2 * FLUSH + 258);
            let total = inflater.total_out();
            if total > self.key.size {
                return Err(corrupt("it inflates past the size the archive declares").into());
            }
            // The new bytes: output positions `done..total`.
            let new = &inflater.out[(done - inflater.out_base) as usize..];
            let (from, to) = (start.max(done), end.min(total));
            if from < to {
                got.extend_from_slice(&new[(from - done) as usize..(to - done) as usize]);
            }
            if extend {
                crc.update(new);
            }
            done = total;
            match stop {
                Stop::Boundary => {
                    if extend && total >= last + SPAN {
                        let keep = inflater.out.len().min(WINDOW);
                        let window = inflater.out[inflater.out.len() - keep..].into();
                        self.checkpoints.push(Checkpoint {
                            out: total,
                            bit: inflater.position(),
                            crc: crc.clone().finalize(),
                            window,
                        });
                        last = total;
                    }
                    if total >= end {
                        return Ok(got);
                    }
                    // Not at every boundary: a slide moves the window.
                    if inflater.out.len() >= FLUSH {
                        inflater.slide();
                    }
                }
                Stop::Full => inflater.slide(),
                Stop::End => {
                    if total < end || (extend && total != self.key.size) {
                        return Err(corrupt(&format!(
                            "its data ends after {total} of the {} bytes the archive declares",
                            self.key.size
                        ))
                        .into());
                    }
                    if extend {
                        if crc.finalize() != self.key.crc {
                            // Checkpoints past a corrupt stretch are no
                            // better than it.
                            self.checkpoints.truncate(1);
                            return Err(Failure::BadCrc);
                        }
                        self.complete = true;
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
        let open = |byte: u64| Ok(&stream[byte as usize..]);
        let n = data.len() as u64;
        // From the middle first: the index grows to there.
        let got = index.read(5_000_000, 5_001_000, open).unwrap();
        assert!(got == data[5_000_000..5_001_000]);
        let built = index.checkpoints.len();
        assert!(built >= 2 && !index.complete, "{built}");
        assert!(index.checkpoints.last().unwrap().out <= 5_001_000 + SPAN);
        // Behind it: from a checkpoint, nothing added.
        for (a, b) in [(0, 10), (4_200_000, 4_300_000), (1, 5_000_000), (3, 3)] {
            assert!(index.read(a, b, open).unwrap() == data[a as usize..b as usize]);
        }
        assert_eq!(index.checkpoints.len(), built);
        // To the end: complete, CRC checked.
        assert!(index.read(n - 5, n, open).unwrap() == data[data.len() - 5..]);
        assert!(index.complete);
        let spans = index.checkpoints.len() as u64;
        assert!(spans >= n / SPAN && spans <= n / SPAN + 1, "{spans}");
        for w in index.checkpoints.windows(2) {
            assert!(w[1].out >= w[0].out + SPAN);
            assert_eq!(w[1].crc, crc32fast::hash(&data[..w[1].out as usize]));
        }
        assert!(index.read(9_999_000, n, open).unwrap() == data[9_999_000..]);
    }

    #[test]
    fn a_wrong_crc_or_size_is_found_when_the_end_is_reached() {
        let data = data();
        let stream = deflated(&data);
        let open = |byte: u64| Ok(&stream[byte as usize..]);
        let n = data.len() as u64;
        let mut k = key(&data, &stream);
        k.crc ^= 1;
        let mut index = SeekIndex::new(k);
        assert!(index.read(0, 100, open).is_ok());
        assert!(matches!(index.read(n - 1, n, open), Err(Failure::BadCrc)));
        assert_eq!(index.checkpoints.len(), 1);
        let mut k = key(&data, &stream);
        k.size += 10;
        let mut index = SeekIndex::new(k);
        assert!(matches!(index.read(n, n + 10, open), Err(Failure::Io(_))));
        let mut k = key(&data, &stream);
        k.size -= 10;
        let mut index = SeekIndex::new(k);
        assert!(matches!(
            index.read(n - 20, n - 10, open),
            Err(Failure::Io(_))
        ));
        // Cut short.
        let short = &stream[..stream.len() / 2];
        let mut index = SeekIndex::new(key(&data, &stream));
        let r = index.read(n - 10, n, |byte| {
            Ok(&short[(byte as usize).min(short.len())..])
        });
        assert!(matches!(r, Err(Failure::Io(_))));
    }
}
