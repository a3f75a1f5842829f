//! `NpzReader::read_range`: rows of archive members without reading them
//! whole, for stored members, ndnpy's pieces, and NumPy's single deflate
//! streams through the seek index (and its sidecar): every range gives the
//! rows of the whole array, errors are those of `NpyFile::read_range`.

use ndarray::{s, Array1, Array2, Array3, ArrayD, Ix1, Ix2, Ix3, IxDyn, ShapeBuilder};
use ndnpy::{Error, NpzReader, NpzWriter, WriteNpy};
use std::io::{Cursor, Write};

/// A 2-D `f64` array of `rows` rows of 16: smooth values with noise, so
/// that deflate makes many blocks of every kind.
fn table(rows: usize) -> Array2<f64> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    Array2::from_shape_fn((rows, 16), |(i, j)| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (i / 5000) % 2 == 0 {
            ((i * 16 + j) as f64 * 1e-3).sin()
        } else {
            (x >> 40) as f64
        }
    })
}

/// An archive as `np.savez_compressed` writes it (one deflate stream per
/// member, no piece table), of `.npy` members.
fn numpy_style(members: &[(&str, Vec<u8>)], method: zip::CompressionMethod) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, npy) in members {
        let options = zip::write::SimpleFileOptions::default().compression_method(method);
        zip.start_file(format!("{name}.npy"), options).unwrap();
        zip.write_all(npy).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// Ranges to try on an axis of `len`: ends, middles, empty, whole.
fn ranges(len: usize) -> Vec<(usize, usize)> {
    vec![
        (len / 2, len / 2 + 1000.min(len / 2)),
        (0, 10.min(len)),
        (len - 7.min(len), len),
        (len / 3, len / 3),
        (len / 5, len / 5 + 3),
        (0, len),
        (len / 2 - 100.min(len / 2), len / 2 + 100.min(len / 2)),
    ]
}

#[test]
fn numpy_members_read_from_the_seek_index() {
    // 1.6 M rows x 16 x 8 bytes: about 200 MiB would be slow in a test;
    // 120 000 rows (15 MiB) span several checkpoints.
    let a = table(120_000);
    let f = Array2::from_shape_fn((16, 30_000).f(), |(i, j)| (i * 7 + j) as f32);
    let v = Array1::from_iter((0..700_000).map(|i| i as u16));
    let archive = numpy_style(
        &[
            ("a", a.to_npy_bytes().unwrap()),
            ("f", f.to_npy_bytes().unwrap()),
            ("v", v.to_npy_bytes().unwrap()),
        ],
        zip::CompressionMethod::Deflated,
    );
    let mut npz = NpzReader::new(Cursor::new(archive)).unwrap();
    for (lo, hi) in ranges(a.nrows()) {
        let got = npz.read_range::<f64, Ix2>("a", lo..hi).unwrap();
        assert_eq!(got, a.slice(s![lo..hi, ..]), "a {lo}..{hi}");
    }
    // Fortran order: the last axis, and the result in Fortran order.
    for (lo, hi) in ranges(f.ncols()) {
        let got = npz.read_range::<f32, Ix2>("f", lo..hi).unwrap();
        assert_eq!(got, f.slice(s![.., lo..hi]), "f {lo}..{hi}");
        assert!(got.is_empty() || got.t().is_standard_layout());
    }
    for (lo, hi) in ranges(v.len()) {
        let got = npz
            .read_range::<u16, Ix1>("v.npy", lo..=hi.saturating_sub(1).max(lo))
            .unwrap();
        let want = v.slice(s![lo..(hi.max(lo + 1)).min(v.len())]);
        assert_eq!(got, want, "v {lo}..{hi}");
    }
    let dynamic: ArrayD<f64> = npz.read_range::<f64, IxDyn>("a", ..3).unwrap();
    assert_eq!(dynamic.shape(), &[3, 16]);
    // A whole read afterwards still checks the member's CRC-32.
    assert_eq!(npz.read::<f64, Ix2>("a").unwrap(), a);
}

#[test]
fn stored_and_ndnpy_members_read_only_their_rows() {
    let a = table(200_000);
    let c = Array3::from_shape_fn((3000, 20, 7), |(i, j, k)| (i * 140 + j * 7 + k) as i32);
    for compressed in [false, true] {
        let mut w = if compressed {
            NpzWriter::new_compressed(Cursor::new(Vec::new()))
        } else {
            NpzWriter::new(Cursor::new(Vec::new()))
        };
        w.add("a", &a).unwrap();
        w.add("c", &c).unwrap();
        let mut npz = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
        for (lo, hi) in ranges(a.nrows()) {
            let got = npz.read_range::<f64, Ix2>("a", lo..hi).unwrap();
            assert_eq!(got, a.slice(s![lo..hi, ..]), "{compressed}: a {lo}..{hi}");
        }
        // Ranges across 1 MiB pieces (560 bytes a row).
        for (lo, hi) in [(1870, 1880), (0, 3000), (2999, 3000), (1000, 2900)] {
            let got = npz.read_range::<i32, Ix3>("c", lo..hi).unwrap();
            assert_eq!(
                got,
                c.slice(s![lo..hi, .., ..]),
                "{compressed}: c {lo}..{hi}"
            );
        }
    }
    // A stored NumPy-style archive too (zip's stored method).
    let archive = numpy_style(
        &[("a", a.to_npy_bytes().unwrap())],
        zip::CompressionMethod::Stored,
    );
    let mut npz = NpzReader::new(Cursor::new(archive)).unwrap();
    let got = npz.read_range::<f64, Ix2>("a", 150_000..150_010).unwrap();
    assert_eq!(got, a.slice(s![150_000..150_010, ..]));
}

#[test]
fn errors_are_those_of_the_file_reader() {
    let a = table(1000);
    let mut w = NpzWriter::new_compressed(Cursor::new(Vec::new()));
    w.add("a", &a).unwrap();
    w.add("zero_d", &ndarray::arr0(1.5f64)).unwrap();
    let objects = Array1::from(vec![ndnpy::PyValue::Int(1), ndnpy::PyValue::None]);
    w.add("words", &objects).unwrap();
    let mut npz = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
    assert!(matches!(
        npz.read_range::<f64, Ix2>("a", 990..1001),
        Err(Error::RangeOutOfBounds {
            start: 990,
            end: 1001,
            len: 1000
        })
    ));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = npz.read_range::<f64, Ix2>("a", 10..5);
    assert!(matches!(reversed, Err(Error::RangeOutOfBounds { .. })));
    assert!(matches!(
        npz.read_range::<f64, Ix1>("zero_d", 0..1),
        Err(Error::NoGrowthAxis)
    ));
    let words = npz.read_range::<ndnpy::PyValue, Ix1>("words", 0..1);
    assert!(
        matches!(words, Err(Error::UnsupportedDType { .. })),
        "{words:?}"
    );
    assert!(matches!(
        npz.read_range::<f32, Ix2>("a", 0..1),
        Err(Error::DTypeMismatch { .. })
    ));
    assert!(matches!(
        npz.read_range::<f64, Ix1>("a", 0..1),
        Err(Error::NdimMismatch { .. })
    ));
    assert!(matches!(
        npz.read_range::<f64, Ix2>("nope", 0..1),
        Err(Error::MemberNotFound { .. })
    ));
}

#[test]
fn a_wrong_crc_shows_once_the_index_reaches_the_end() {
    let a = table(60_000);
    let mut archive = numpy_style(
        &[("a", a.to_npy_bytes().unwrap())],
        zip::CompressionMethod::Deflated,
    );
    // The CRC-32 in the central directory entry.
    let cd = archive
        .windows(4)
        .rposition(|w| w == b"PK\x01\x02")
        .unwrap();
    archive[cd + 16] ^= 1;
    let mut npz = NpzReader::new(Cursor::new(archive.clone())).unwrap();
    let got = npz.read_range::<f64, Ix2>("a", 100..200).unwrap();
    assert_eq!(got, a.slice(s![100..200, ..]));
    assert!(matches!(
        npz.read_range::<f64, Ix2>("a", 59_990..60_000),
        Err(Error::BadCrc { .. })
    ));
    // Corrupt data in the middle: rows past it may come out wrong (deflate
    // has no check of its own), but reading on to the end finds it.
    let mut broken = archive;
    broken[cd + 16] ^= 1;
    let mid = broken.len() / 2;
    broken[mid..mid + 64].fill(0x55);
    let mut npz = NpzReader::new(Cursor::new(broken)).unwrap();
    let _ = npz.read_range::<f64, Ix2>("a", 50_000..50_010);
    assert!(npz.read_range::<f64, Ix2>("a", 59_990..60_000).is_err());
}

#[test]
fn the_sidecar_keeps_the_index_between_readers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.npz");
    let a = table(120_000);
    std::fs::write(
        &path,
        numpy_style(
            &[("a", a.to_npy_bytes().unwrap())],
            zip::CompressionMethod::Deflated,
        ),
    )
    .unwrap();
    let sidecar = dir.path().join(".t.npz.ndnpy-index");
    {
        let mut npz = NpzReader::open(&path).unwrap();
        npz.read_range::<f64, Ix2>("a", 100_000..100_010).unwrap();
        assert!(!sidecar.exists(), "off by default");
        npz.use_index_sidecar(true).unwrap();
        let got = npz.read_range::<f64, Ix2>("a", 110_000..110_010).unwrap();
        assert_eq!(got, a.slice(s![110_000..110_010, ..]));
    }
    assert!(sidecar.exists());
    let saved = std::fs::read(&sidecar).unwrap();
    assert!(
        saved.len() < a.len() * 8 / 20,
        "small: {} bytes",
        saved.len()
    );
    for (lo, hi) in ranges(a.nrows()) {
        let mut npz = NpzReader::open(&path).unwrap();
        npz.use_index_sidecar(true).unwrap();
        let got = npz.read_range::<f64, Ix2>("a", lo..hi).unwrap();
        assert_eq!(got, a.slice(s![lo..hi, ..]), "{lo}..{hi}");
    }
    // A damaged sidecar is ignored; a changed archive makes it stale.
    std::fs::write(&sidecar, &saved[..saved.len() / 2]).unwrap();
    let mut npz = NpzReader::open(&path).unwrap();
    npz.use_index_sidecar(true).unwrap();
    assert_eq!(
        npz.read_range::<f64, Ix2>("a", 7..9).unwrap(),
        a.slice(s![7..9, ..])
    );
    let b = table(130_000) * 2.0;
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(
        &path,
        numpy_style(
            &[("a", b.to_npy_bytes().unwrap())],
            zip::CompressionMethod::Deflated,
        ),
    )
    .unwrap();
    let mut npz = NpzReader::open(&path).unwrap();
    npz.use_index_sidecar(true).unwrap();
    let got = npz.read_range::<f64, Ix2>("a", 125_000..125_005).unwrap();
    assert_eq!(got, b.slice(s![125_000..125_005, ..]));
    // Readers without a path cannot have one.
    let mut npz = NpzReader::new(Cursor::new(std::fs::read(&path).unwrap())).unwrap();
    assert!(npz.use_index_sidecar(true).is_err());
    npz.use_index_sidecar(false).unwrap();
}
