//! Members read ahead on other cores (`NpzReader::read_ahead`, the array
//! iterator): whatever the order of the reads, the plan, the mix of
//! members (NumPy's single streams, stored, small, ndnpy's pieces) and
//! the damage, every read gives what reading that member alone gives.

use ndarray::{Array1, Array2, Ix1, Ix2};
use ndnpy::{AnyArray, Error, NpzReader, NpzWriter, WriteNpy};
use std::io::{Cursor, Read, Write};

/// A member's array: `k` picks the values, `n` the length.
fn array(k: usize, n: usize) -> Array1<f64> {
    Array1::from_iter((0..n).map(|i| ((i * (k + 3)) % 1000) as f64 * 0.5 + k as f64))
}

/// An archive as `np.savez_compressed` writes it (one deflate stream per
/// member, no piece table) through the zip crate, with `members` of the
/// given lengths; `stored` names members written uncompressed.
fn numpy_style(lengths: &[usize], stored: &[usize]) -> (Vec<u8>, Vec<Array1<f64>>) {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let mut arrays = Vec::new();
    for (k, &n) in lengths.iter().enumerate() {
        let a = array(k, n);
        let method = if stored.contains(&k) {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(method)
            .large_file(false);
        zip.start_file(format!("m{k}.npy"), options).unwrap();
        zip.write_all(&a.to_npy_bytes().unwrap()).unwrap();
        arrays.push(a);
    }
    (zip.finish().unwrap().into_inner(), arrays)
}

/// Lengths around the read-ahead's bounds: small (streamed), middling, and
/// one of ndnpy's piece-table size classes.
const LENGTHS: [usize; 9] = [
    200_000, 5_000, 300_000, 150_000, 20, 400_000, 100_000, 250_000, 90_000,
];

#[test]
fn the_iterator_gives_what_each_read_gives() {
    let (bytes, arrays) = numpy_style(&LENGTHS, &[3]);
    let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
    let got: Vec<(String, AnyArray)> = npz.arrays().map(|(n, a)| (n, a.unwrap())).collect();
    assert_eq!(got.len(), arrays.len());
    for (k, (name, a)) in got.into_iter().enumerate() {
        assert_eq!(name, format!("m{k}"));
        assert_eq!(a, AnyArray::F64(arrays[k].clone().into_dyn()));
    }
    // Taken part way and dropped, then again from the start.
    let mut it = npz.arrays();
    it.next().unwrap().1.unwrap();
    it.next().unwrap().1.unwrap();
    drop(it);
    assert_eq!(npz.arrays().count(), arrays.len());
}

#[test]
fn planned_reads_in_order_out_of_order_and_skipped() {
    let (bytes, arrays) = numpy_style(&LENGTHS, &[]);
    let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
    let names = npz.names();
    npz.read_ahead(&names).unwrap();
    // In order, each kind of read.
    assert_eq!(npz.read::<f64, Ix1>("m0").unwrap(), arrays[0]);
    let AnyArray::F64(a) = npz.read_any("m1").unwrap() else {
        panic!("f64")
    };
    assert_eq!(a, arrays[1].clone().into_dyn());
    let raw = npz.raw("m2").unwrap();
    assert!(raw == arrays[2].to_npy_bytes().unwrap());
    let mut member = npz.member_reader("m3").unwrap();
    let mut streamed = Vec::new();
    member.read_to_end(&mut streamed).unwrap();
    assert!(streamed == arrays[3].to_npy_bytes().unwrap());
    drop(member);
    // A member outside the plan's way, then a skip ahead, then back.
    let mut into = Array1::<f64>::zeros(arrays[8].len());
    npz.read_into("m8", &mut into.view_mut()).unwrap();
    assert_eq!(into, arrays[8]);
    assert_eq!(npz.read::<f64, Ix1>("m6").unwrap(), arrays[6]);
    assert_eq!(npz.read::<f64, Ix1>("m7").unwrap(), arrays[7]);
    assert_eq!(npz.read::<f64, Ix1>("m4").unwrap(), arrays[4]);
    assert_eq!(npz.read::<f64, Ix1>("m5").unwrap(), arrays[5]);
    // A wrong type for a planned member is the usual error.
    npz.read_ahead(["m0", "m1"]).unwrap();
    assert!(matches!(
        npz.read::<f64, Ix2>("m0"),
        Err(Error::NdimMismatch { .. })
    ));
    assert_eq!(npz.read::<f64, Ix1>("m1").unwrap(), arrays[1]);
    // Unknown names leave the plan as it was; an empty plan ends it.
    assert!(matches!(
        npz.read_ahead(["m0", "nope"]),
        Err(Error::MemberNotFound { .. })
    ));
    npz.read_ahead(Vec::<String>::new()).unwrap();
    assert_eq!(npz.read::<f64, Ix1>("m2").unwrap(), arrays[2]);
}

#[test]
fn damaged_members_fail_alone_with_their_own_errors() {
    let (mut bytes, arrays) = numpy_style(&LENGTHS, &[]);
    // The CRC-32 of m2 in the central directory (names are m0.npy ...).
    let central = bytes.windows(4).rposition(|w| w == b"PK\x05\x06").unwrap();
    let cd_start =
        u32::from_le_bytes(bytes[central + 16..central + 20].try_into().unwrap()) as usize;
    let mut at = cd_start;
    for _ in 0..2 {
        let name_len = u16::from_le_bytes([bytes[at + 28], bytes[at + 29]]) as usize;
        let extra_len = u16::from_le_bytes([bytes[at + 30], bytes[at + 31]]) as usize;
        let comment_len = u16::from_le_bytes([bytes[at + 32], bytes[at + 33]]) as usize;
        at += 46 + name_len + extra_len + comment_len;
    }
    assert_eq!(&bytes[at + 46..at + 52], b"m2.npy");
    bytes[at + 16] ^= 1;
    // And m5's compressed bytes broken in the middle.
    let m5 = bytes.windows(6).position(|w| w == b"m5.npy").unwrap();
    for b in &mut bytes[m5 + 200..m5 + 400] {
        *b = 0xFF;
    }
    let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
    let results: Vec<(String, ndnpy::Result<AnyArray>)> = npz.arrays().collect();
    for (k, (name, r)) in results.iter().enumerate() {
        match k {
            2 => assert!(
                matches!(r, Err(Error::Archive(ndnpy::error::ArchiveError::BadCrc { name })) if name == "m2"),
                "{name}"
            ),
            5 => assert!(
                matches!(
                    r,
                    Err(Error::Archive(
                        ndnpy::error::ArchiveError::CorruptMember { .. }
                    ))
                ),
                "{name}: {r:?}"
            ),
            _ => assert_eq!(
                r.as_ref().unwrap(),
                &AnyArray::F64(arrays[k].clone().into_dyn())
            ),
        }
    }
    // The same through a plan and the member reader: the error at open.
    let names = npz.names();
    npz.read_ahead(&names).unwrap();
    for (k, array) in arrays.iter().enumerate() {
        let r = npz.read::<f64, Ix1>(&format!("m{k}"));
        match k {
            2 => assert!(matches!(
                r,
                Err(Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. }))
            )),
            5 => assert!(matches!(
                r,
                Err(Error::Archive(
                    ndnpy::error::ArchiveError::CorruptMember { .. }
                ))
            )),
            _ => assert_eq!(&r.unwrap(), array),
        }
    }
}

#[test]
fn ndnpy_archives_with_piece_tables_and_stored_members_mix_in() {
    // Pieces of 1 MiB: members over 1 MiB have a table and are read on
    // every core by themselves; the others are single streams.
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    let mut arrays = Vec::new();
    for (k, n) in [300_000usize, 2_000_000, 100_000, 700_000, 10]
        .into_iter()
        .enumerate()
    {
        let a = Array2::from_shape_fn((n / 10 + 1, 10), |(i, j)| (i * 10 + j + k) as i64);
        w.add(&format!("a{k}"), &a).unwrap();
        arrays.push(a);
    }
    let bytes = w.finish_into_inner().unwrap().into_inner();
    let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
    for (k, (_, a)) in npz.arrays().enumerate() {
        assert_eq!(a.unwrap(), AnyArray::I64(arrays[k].clone().into_dyn()));
    }
    let names = npz.names();
    npz.read_ahead(names.iter().rev()).unwrap();
    for k in (0..arrays.len()).rev() {
        assert_eq!(npz.read::<i64, Ix2>(&format!("a{k}")).unwrap(), arrays[k]);
    }
    // Stored archives: nothing to inflate, the plan is harmless.
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("s", &arrays[0]).unwrap();
    let mut npz = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
    npz.read_ahead(["s", "s"]).unwrap();
    assert_eq!(npz.read::<i64, Ix2>("s").unwrap(), arrays[0]);
    assert_eq!(npz.read::<i64, Ix2>("s").unwrap(), arrays[0]);
}

#[test]
fn readers_of_files_read_ahead_by_position_even_when_the_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    let (bytes, arrays) = numpy_style(&LENGTHS, &[3]);
    std::fs::write(&path, &bytes).unwrap();
    let mut npz = NpzReader::open(&path).unwrap();
    for (k, (name, a)) in npz.arrays().enumerate() {
        assert_eq!(name, format!("m{k}"));
        assert_eq!(a.unwrap(), AnyArray::F64(arrays[k].clone().into_dyn()));
    }
    let names = npz.names();
    npz.read_ahead(&names).unwrap();
    for (k, name) in names.iter().enumerate() {
        assert_eq!(npz.read::<f64, Ix1>(name).unwrap(), arrays[k]);
    }
    // Cut short under an open reader: errors, never a hang or a panic.
    let mut npz = NpzReader::open(&path).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(bytes.len() as u64 / 3).unwrap();
    let results: Vec<_> = npz.arrays().collect();
    assert_eq!(results.len(), LENGTHS.len());
    assert!(results.iter().any(|(_, r)| r.is_err()));
}

/// Sets the declared size and CRC-32 of member `name` (written by the zip
/// crate, without data descriptors) in its local header and its central
/// directory entry.
fn declare(bytes: &mut [u8], name: &[u8], size: u32, crc: u32) {
    let local = bytes.windows(name.len()).position(|w| w == name).unwrap() - 30;
    let central = bytes.windows(name.len()).rposition(|w| w == name).unwrap() - 46;
    assert_eq!(&bytes[local..local + 4], b"PK\x03\x04");
    assert_eq!(&bytes[central..central + 4], b"PK\x01\x02");
    for at in [local + 14, central + 16] {
        bytes[at..at + 4].copy_from_slice(&crc.to_le_bytes());
    }
    for at in [local + 22, central + 24] {
        bytes[at..at + 4].copy_from_slice(&size.to_le_bytes());
    }
}

#[test]
fn a_member_whose_data_ends_early_is_corrupt_on_every_path() {
    // A member whose deflate stream ends (cleanly) before the size the
    // archive declares: in the data, and in the header.
    let (_, arrays) = numpy_style(&[300_000], &[]);
    let npy = arrays[0].to_npy_bytes().unwrap();
    for cut in [npy.len() / 2, 60] {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(false);
        // Ahead of it, a member read ahead as well.
        zip.start_file("a.npy", options).unwrap();
        zip.write_all(&npy).unwrap();
        zip.start_file("b.npy", options).unwrap();
        zip.write_all(&npy[..cut]).unwrap();
        let mut bytes = zip.finish().unwrap().into_inner();
        declare(
            &mut bytes,
            b"b.npy",
            npy.len() as u32,
            crc32fast::hash(&npy),
        );
        let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
        let plain = npz.read_any("b").unwrap_err();
        // (Cut inside the header, the plain read says `TruncatedHeader`.)
        assert!(
            matches!(&plain, Error::Archive(ndnpy::error::ArchiveError::CorruptMember { name, .. }) if name == "b")
                || matches!(plain, Error::Header(ndnpy::error::HeaderError::TruncatedHeader { .. }) if cut < 128),
            "cut at {cut}: {plain:?}"
        );
        // The iterator on one thread: each member decoded straight into
        // its array (`direct.rs`); on two, as it comes.
        for threads in [1, 2] {
            npz.__read_ahead_limits(threads, 256 << 20);
            let got: Vec<_> = npz.arrays().collect();
            let first = got[0].1.as_ref().unwrap();
            assert_eq!(first, &AnyArray::F64(arrays[0].clone().into_dyn()));
            // The plain read's error: the member's, by name, for data cut
            // short.
            let err = got[1].1.as_ref().unwrap_err();
            assert_eq!(err.to_string(), plain.to_string(), "{threads} threads");
        }
    }
}
