//! Large members written as NumPy writes them (one deflate stream, no
//! piece table) are inflated on every core (`src/npz/codec/deflate/pinflate/`): the
//! arrays read back exactly, and a wrong CRC-32, a wrong declared size or
//! corrupt data is an error, never other values.

use ndarray::{Array1, Ix1};
use ndnpy::{Error, NpzReader, WriteNpy};
use std::io::{Cursor, Write};

/// An archive with one deflated member `a.npy` (zip's deflate: one raw
/// stream, as `np.savez_compressed` writes), over 32 MiB so that it is
/// inflated in parallel; the array and the member's `.npy` bytes.
fn archive() -> (Vec<u8>, Array1<f64>, Vec<u8>) {
    let a = values();
    let npy = a.to_npy_bytes().unwrap();
    (zip_of(&npy), a, npy)
}

/// The archive's values.
fn values() -> Array1<f64> {
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
    a
}

/// An archive of one deflated member `a.npy` holding `npy`.
fn zip_of(npy: &[u8]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("a.npy", options).unwrap();
    zip.write_all(npy).unwrap();
    zip.finish().unwrap().into_inner()
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
    // Decoded straight into the array's memory, the header moved out of
    // the way (`read_any`, typed reads), or into a buffer of its own and
    // copied (into an existing array): the same values.
    let any = npz.read_any("a").unwrap();
    assert_eq!(any, ndnpy::AnyArray::F64(a.clone().into_dyn()));
    let mut into = Array1::<f64>::zeros(a.len());
    npz.read_into("a", &mut into.view_mut()).unwrap();
    assert_eq!(into, a);
    // Big-endian data, swapped after the decoding.
    let mut big = npy.clone();
    let at = big.windows(5).position(|w| w == b"'<f8'").unwrap();
    big[at + 1] = b'>';
    big[128..].chunks_mut(8).for_each(|x| x.reverse());
    let mut npz = NpzReader::new(Cursor::new(zip_of(&big))).unwrap();
    assert_eq!(npz.read::<f64, Ix1>("a").unwrap(), a);
}

#[test]
fn a_header_longer_than_the_part_decoded_apart_reads_on_from_the_whole() {
    // A version 2 header of 70 000 bytes (padded with spaces, as NumPy
    // pads), past the 64 KiB decoded apart before the whole stream.
    let a = values();
    let npy = a.to_npy_bytes().unwrap();
    let (magic, dict, data) = (&npy[..6], &npy[10..128], &npy[128..]);
    let dict = std::str::from_utf8(dict).unwrap().trim_end();
    let total = 70_016usize;
    let mut long = magic.to_vec();
    long.extend_from_slice(&[2, 0]);
    long.extend_from_slice(&((total - 12) as u32).to_le_bytes());
    long.extend_from_slice(dict.as_bytes());
    long.resize(total - 1, b' ');
    long.push(b'\n');
    long.extend_from_slice(data);
    let options = ndnpy::ReadOptions::default().max_header_len(100_000);
    let mut npz = NpzReader::new_with(Cursor::new(zip_of(&long)), &options).unwrap();
    assert_eq!(npz.read::<f64, Ix1>("a").unwrap(), a);
    assert_eq!(
        npz.read_any("a").unwrap(),
        ndnpy::AnyArray::F64(a.into_dyn())
    );
}

#[test]
fn a_wrong_crc_is_an_error() {
    let (mut bytes, _, npy) = archive();
    let crc = crc32fast::hash(&npy).to_le_bytes();
    let wrong = (crc32fast::hash(&npy) ^ 0x10).to_le_bytes();
    assert!(patch_headers(&mut bytes, crc, wrong) >= 2);
    let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
    let err = npz.read::<f64, Ix1>("a").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
        ),
        "{err}"
    );
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
        assert!(npz.read::<f64, Ix1>("a").is_err(), "size off by {delta}");
        assert!(npz.read_any("a").is_err(), "size off by {delta}");
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
            Err(
                Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
                | Error::Archive(ndnpy::error::ArchiveError::CorruptMember { .. }),
            ) => {}
            Err(e) => panic!("unexpected error: {e}"),
        }
        assert!(npz.read_any("a").is_err());
    }
}

#[test]
fn from_a_path_the_compressed_bytes_read_by_position_give_the_same_values() {
    // A reader opened from a path reads a large member's compressed bytes
    // by positioned reads (on every core), not through its stream: the same
    // values as from memory, and a file cut or damaged after opening is an
    // error, never other values.
    let (bytes, a, _) = archive();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    std::fs::write(&path, &bytes).unwrap();
    let mut npz = NpzReader::open(&path).unwrap();
    assert_eq!(npz.read::<f64, Ix1>("a").unwrap(), a);
    assert_eq!(
        npz.read_any("a").unwrap(),
        ndnpy::AnyArray::F64(a.clone().into_dyn())
    );

    let mut damaged = bytes.clone();
    let at = bytes.len() / 2;
    damaged[at] ^= 0x5A;
    std::fs::write(&path, &damaged).unwrap();
    let mut npz = NpzReader::open(&path).unwrap();
    assert!(npz.read_any("a").is_err());

    std::fs::write(&path, &bytes).unwrap();
    let mut npz = NpzReader::open(&path).unwrap();
    // Cut inside the member once the directory is read.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(bytes.len() as u64 / 2)
        .unwrap();
    assert!(npz.read_any("a").is_err());
    assert!(npz.read::<f64, Ix1>("a").is_err());
}
