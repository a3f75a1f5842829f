//! The sidecar's format (little-endian): `NDNPYIDX`, version (u32, 2),
//! the archive's length (u64) and modification time (i64 seconds, u32
//! nanoseconds), the number of members (u32); per member its name (u16
//! length, UTF-8), data offset, compressed size, size (u64 each), CRC-32
//! (u32), whether its index is complete (u8), the number of checkpoints
//! (u32); per checkpoint its output position and bit position (u64), the
//! CRC-32 of the output before it (u32), the CRC-32 of its window and of
//! the compressed bytes of its span (u32, `SeekIndex::span_end`), its
//! window's length (u16, at most 32 768) and the window deflated (u32
//! length, then the bytes).

use super::index::{Checkpoint, MemberKey, SeekIndex};
use crate::npz::codec::deflate::inflate::inflate_piece;
use crate::npz::codec::deflate::inflate_core::WINDOW;
use std::collections::HashMap;

const MAGIC: &[u8; 8] = b"NDNPYIDX";
/// Version 2 added each checkpoint's span CRC-32.
const VERSION: u32 = 2;

/// The bytes of a sidecar holding `members`' indexes (each checkpoint's
/// `check` computed), for an archive of `archive_len` bytes modified at
/// `mtime`.
pub(super) fn encode(
    members: &[(&str, &SeekIndex)],
    archive_len: u64,
    mtime: (i64, u32),
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&archive_len.to_le_bytes());
    out.extend_from_slice(&mtime.0.to_le_bytes());
    out.extend_from_slice(&mtime.1.to_le_bytes());
    out.extend_from_slice(&(members.len() as u32).to_le_bytes());
    let mut deflater = libdeflater::Compressor::new(libdeflater::CompressionLvl::default());
    for (name, index) in members {
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        let k = index.key;
        for v in [k.data_start, k.compressed, k.size] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&k.crc.to_le_bytes());
        out.push(index.complete as u8);
        out.extend_from_slice(&(index.checkpoints.len() as u32).to_le_bytes());
        for cp in &index.checkpoints {
            out.extend_from_slice(&cp.out.to_le_bytes());
            out.extend_from_slice(&cp.bit.to_le_bytes());
            out.extend_from_slice(&cp.crc.to_le_bytes());
            out.extend_from_slice(&cp.check.map_or(0, |c| c.1).to_le_bytes());
            out.extend_from_slice(&(cp.window.len() as u16).to_le_bytes());
            let mut packed = vec![0u8; deflater.deflate_compress_bound(cp.window.len())];
            let n = deflater
                .deflate_compress(&cp.window, &mut packed)
                .unwrap_or(0);
            out.extend_from_slice(&(n as u32).to_le_bytes());
            out.extend_from_slice(&packed[..n]);
        }
    }
    out
}

/// A reader of the sidecar's fields, every read checked.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.bytes(2)?.try_into().ok()?))
    }
}

/// The indexes a sidecar holds, by member name, if it is well formed and
/// records the archive's length and modification time.
pub(super) fn parse(
    bytes: &[u8],
    archive_len: u64,
    mtime: (i64, u32),
) -> Option<HashMap<String, SeekIndex>> {
    let mut f = Fields(bytes);
    if f.bytes(8)? != MAGIC || f.u32()? != VERSION || f.u64()? != archive_len {
        return None;
    }
    if (f.u64()? as i64, f.u32()?) != mtime {
        return None;
    }
    let count = f.u32()?;
    let mut out = HashMap::new();
    for _ in 0..count {
        let len = f.u16()? as usize;
        let name = std::str::from_utf8(f.bytes(len)?).ok()?.to_owned();
        let key = MemberKey {
            data_start: f.u64()?,
            compressed: f.u64()?,
            size: f.u64()?,
            crc: f.u32()?,
        };
        let complete = f.bytes(1)?[0] == 1;
        let n = f.u32()? as usize;
        // Each checkpoint takes at least 30 bytes of the file.
        if n == 0 || n > f.0.len() / 30 + 1 {
            return None;
        }
        let mut checkpoints: Vec<Checkpoint> = Vec::with_capacity(n);
        for _ in 0..n {
            let (out_at, bit, crc, check) = (f.u64()?, f.u64()?, f.u32()?, f.u32()?);
            let window_len = f.u16()? as usize;
            let packed_len = f.u32()? as usize;
            let packed = f.bytes(packed_len)?;
            let believable = window_len as u64 == out_at.min(WINDOW as u64)
                && out_at <= key.size
                && bit <= key.compressed.saturating_mul(8)
                && checkpoints
                    .last()
                    .is_none_or(|p| p.out < out_at && p.bit < bit);
            if !believable {
                return None;
            }
            let mut window = vec![0u8; window_len];
            if window_len > 0 {
                inflate_piece(packed, &mut window).ok()?;
            }
            checkpoints.push(Checkpoint {
                out: out_at,
                bit,
                crc,
                window: window.into(),
                // The span's end once the index is whole (below).
                check: Some((0, check)),
                // Not until checked against the archive's bytes.
                trusted: false,
            });
        }
        if (checkpoints[0].out, checkpoints[0].bit, checkpoints[0].crc) != (0, 0, 0) {
            return None;
        }
        let mut index = SeekIndex {
            key,
            checkpoints,
            complete,
        };
        for i in 0..index.checkpoints.len() {
            let end = index.span_end(i);
            if let Some(check) = &mut index.checkpoints[i].check {
                check.0 = end;
            }
        }
        out.insert(name, index);
    }
    f.0.is_empty().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> SeekIndex {
        let mut index = SeekIndex::new(MemberKey {
            data_start: 100,
            compressed: 5000,
            size: 80_000,
            crc: 7,
        });
        index.checkpoints.push(Checkpoint {
            out: 40_000,
            bit: 20_003,
            crc: 9,
            window: (0..WINDOW).map(|i| (i % 7) as u8).collect(),
            check: Some((5000, 11)),
            trusted: true,
        });
        index
    }

    #[test]
    fn sidecars_round_trip_and_anything_else_is_ignored() {
        let index = index();
        let bytes = encode(&[("a.npy", &index)], 1234, (5, 6));
        let back = &parse(&bytes, 1234, (5, 6)).unwrap()["a.npy"];
        assert_eq!((back.key, back.complete), (index.key, index.complete));
        for (a, b) in back.checkpoints.iter().zip(&index.checkpoints) {
            assert!(a.same_place(b) && !a.trusted);
        }
        // The span checks come back, ends worked out from the index.
        assert_eq!(back.checkpoints[1].check, Some((2501, 11)));
        assert_eq!(back.checkpoints[0].check, Some((2501, 0)));
        // Another archive length or time: stale.
        assert!(parse(&bytes, 1235, (5, 6)).is_none());
        assert!(parse(&bytes, 1234, (5, 7)).is_none());
        // Every truncation and every flipped byte: refused or still
        // believable, never a panic.
        for cut in 0..bytes.len() {
            assert!(parse(&bytes[..cut], 1234, (5, 6)).is_none());
        }
        for at in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x5A;
            let _ = parse(&bad, 1234, (5, 6));
        }
        // Checkpoints out of order are refused.
        let mut twisted = index.clone();
        twisted.checkpoints.swap(0, 1);
        assert!(parse(&encode(&[("a.npy", &twisted)], 1, (0, 0)), 1, (0, 0)).is_none());
    }
}
