//! bzip2, LZMA and Zstandard members (issue 33). Input starting with a zip
//! signature is an archive (the fixtures of `fixtures/zip_methods` seed
//! it); any other input is one member's compressed stream, of the method
//! its first byte picks, wrapped in an archive with the declared size and
//! CRC-32 its next bytes give (now and then a zip64 size of 64 GiB). Every
//! way in never panics and never allocates what the member claims; and the
//! input's bytes written by ndnpy with `Codec::Zstd` read back equal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarray::{Array1, Ix1, IxDyn};
use ndnpy::{npz::Codec, NpzReader, NpzWriter};
use std::io::{Cursor, Read};

fuzz_target!(|data: &[u8]| {
    if data.starts_with(b"PK\x03\x04") {
        read_all(data);
        return;
    }
    let Some((&[pick, s0, s1, s2, s3, flags], payload)) = data.split_first_chunk::<6>() else {
        return;
    };
    let method = [12u16, 14, 93][pick as usize % 3];
    let size = if flags & 0x80 != 0 {
        1u64 << 36
    } else {
        u32::from_le_bytes([s0, s1, s2, s3 & 0x0F]) as u64
    };
    let crc = u32::from_le_bytes([s3, s2, s1, s0]);
    read_all(&zip_of(method, flags & 2, crc, size, payload));

    // ndnpy's own Zstandard members read back as written.
    let a = Array1::from_iter(payload.iter().copied());
    let level = (pick % 5) as i32 + 1;
    let mut w = NpzWriter::new(Cursor::new(Vec::new()))
        .codec(Codec::Zstd { level })
        .threads(1 + (flags as usize % 3));
    w.add("a", &a).unwrap();
    let bytes = w.finish_into_inner().unwrap().into_inner();
    let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
    assert_eq!(npz.read::<u8, Ix1>("a").unwrap(), a);
});

/// Every way into every member (of the first 16) of `archive`.
fn read_all(archive: &[u8]) {
    let Ok(mut npz) = NpzReader::new(Cursor::new(archive)) else {
        return;
    };
    for name in npz.names().iter().take(16) {
        let _ = npz.member_info(name);
        let header = npz.header(name);
        let any = npz.read_any(name);
        if let (Ok(any), Ok(header)) = (&any, &header) {
            assert_eq!(any.shape(), &header.shape[..]);
        }
        let _ = npz.read::<f64, IxDyn>(name);
        let _ = npz.raw(name);
        if let Ok(mut member) = npz.member_reader(name) {
            let _ = member.read_to_end(&mut Vec::new());
        }
    }
}

/// A one-member archive `x.npy` of `method` with these claims.
fn zip_of(method: u16, flags: u8, crc: u32, size: u64, payload: &[u8]) -> Vec<u8> {
    let zip64 = size >= u32::MAX as u64;
    let mut extra = Vec::new();
    if zip64 {
        extra.extend_from_slice(&1u16.to_le_bytes());
        extra.extend_from_slice(&16u16.to_le_bytes());
        extra.extend_from_slice(&size.to_le_bytes());
        extra.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    }
    let (s32, c32) = if zip64 {
        (u32::MAX, u32::MAX)
    } else {
        (size as u32, payload.len() as u32)
    };
    let name = b"x.npy";
    let fixed = |sig: u32, central: bool| {
        let mut h = Vec::new();
        h.extend_from_slice(&sig.to_le_bytes());
        if central {
            h.extend_from_slice(&63u16.to_le_bytes());
        }
        h.extend_from_slice(&63u16.to_le_bytes());
        h.extend_from_slice(&(flags as u16).to_le_bytes());
        h.extend_from_slice(&method.to_le_bytes());
        h.extend_from_slice(&[0, 0, 33, 0]);
        h.extend_from_slice(&crc.to_le_bytes());
        h.extend_from_slice(&c32.to_le_bytes());
        h.extend_from_slice(&s32.to_le_bytes());
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        if central {
            h.extend_from_slice(&[0; 14]);
        }
        h
    };
    let mut out = fixed(0x0403_4b50, false);
    out.extend_from_slice(name);
    out.extend_from_slice(&extra);
    out.extend_from_slice(payload);
    let cd_start = out.len();
    out.extend_from_slice(&fixed(0x0201_4b50, true));
    out.extend_from_slice(name);
    out.extend_from_slice(&extra);
    let cd_len = out.len() - cd_start;
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
    out.extend_from_slice(&(cd_len as u32).to_le_bytes());
    out.extend_from_slice(&(cd_start as u32).to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}
