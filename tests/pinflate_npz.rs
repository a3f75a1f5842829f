//! Large members written as NumPy writes them (one deflate stream, no
//! piece table) are inflated on every core (`src/npz/pinflate/`): the
//! arrays read back exactly, and a wrong CRC-32, a wrong declared size or
//! corrupt data is an error, never other values.

use ndarray::{Array1, Ix1};
use ndnpy::{Error, NpzReader, WriteNpy};
use std::io::{Cursor, Write};

/// An archive with one deflated member `a.npy` (zip's deflate: one raw
/// stream, as `np.savez_compressed` writes), over 32 MiB so that it is
/// inflated in parallel; the array and the member's `.npy` bytes.
fn archive() -> (Vec<u8>, Array1<f64>, Vec<u8>) {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let a: Array1<f64> = (0..4_300_000)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Smooth stretches and noise: dynamic blocks of both kinds.
            if i % 100_000 < 50_000 {
                (i as f64 * 1e-3).sin()
            } else {
                (x >> 11) as f64 / (1u64 << 53) as f64
            }
        })
        .collect();
    let npy = a.to_npy_bytes().unwrap();
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("a.npy", options).unwrap();
    zip.write_all(&npy).unwrap();
    (zip.finish().unwrap().into_inner(), a, npy)
}

/// Replaces every occurrence of `from` in the archive's headers (its
/// first 64 and last 200 bytes) with `to`.
fn patch_headers(bytes: &mut [u8], from: [u8; 4], to: [u8; 4]) -> usize {
    let len = bytes.len();
    let mut n = 0;
    for start in (0..60).chain(len - 200..len - 4) {
        if bytes[start..start + 4] == from {
            bytes[start..start + 4].copy_from_slice(&to);
            n += 1;
        }
    }
    n
}

#[test]
fn large_numpy_style_members_read_exactly_on_every_core() {
    let (bytes, a, npy) = archive();
    assert!(npy.len() > 32 << 20);
    let mut npz = NpzReader::new(Cursor::new(bytes.clone())).unwrap();
    assert_eq!(npz.read::<f64, Ix1>("a").unwrap(), a);
    assert!(npz.raw("a").unwrap() == npy);
    let any = npz.read_any("a").unwrap();
    assert_eq!(any.shape(), &[a.len()]);
}

#[test]
fn a_wrong_crc_is_an_error() {
    let (mut bytes, _, npy) = archive();
    let crc = crc32fast::hash(&npy).to_le_bytes();
    let wrong = (crc32fast::hash(&npy) ^ 0x10).to_le_bytes();
    assert!(patch_headers(&mut bytes, crc, wrong) >= 2);
    let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
    let err = npz.read::<f64, Ix1>("a").unwrap_err();
    assert!(matches!(err, Error::BadCrc { .. }), "{err}");
}

#[test]
fn a_wrong_declared_size_is_an_error() {
    let (bytes, _, npy) = archive();
    let size = (npy.len() as u32).to_le_bytes();
    for delta in [-8i64, -1, 1, 4096] {
        let mut bytes = bytes.clone();
        let other = ((npy.len() as i64 + delta) as u32).to_le_bytes();
        assert!(patch_headers(&mut bytes, size, other) >= 2);
        let Ok(mut npz) = NpzReader::new(Cursor::new(bytes)) else {
            continue;
        };
        assert!(npz.raw("a").is_err(), "size off by {delta}");
    }
}

#[test]
fn corrupt_data_is_an_error() {
    let (bytes, a, _) = archive();
    for at in [bytes.len() / 3, bytes.len() / 2, bytes.len() - 1000] {
        let mut bytes = bytes.clone();
        bytes[at] ^= 0x5A;
        bytes[at + 1] ^= 0xA5;
        let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
        match npz.read::<f64, Ix1>("a") {
            Ok(b) => panic!("corrupt data read as an array (equal: {})", b == a),
            Err(Error::BadCrc { .. } | Error::CorruptMember { .. }) => {}
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
}
