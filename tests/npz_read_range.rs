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
            NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate())
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
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    w.add("a", &a).unwrap();
    w.add("zero_d", &ndarray::arr0(1.5f64)).unwrap();
    let objects = Array1::from(vec![
        ndnpy::pickle::PyValue::Int(1),
        ndnpy::pickle::PyValue::None,
    ]);
    w.add("words", &objects).unwrap();
    let mut npz = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
    assert!(matches!(
        npz.read_range::<f64, Ix2>("a", 990..1001),
        Err(Error::Rows(ndnpy::error::RowsError::RangeOutOfBounds {
            start: 990,
            end: 1001,
            len: 1000
        }))
    ));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = npz.read_range::<f64, Ix2>("a", 10..5);
    assert!(matches!(
        reversed,
        Err(Error::Rows(
            ndnpy::error::RowsError::RangeOutOfBounds { .. }
        ))
    ));
    assert!(matches!(
        npz.read_range::<f64, Ix1>("zero_d", 0..1),
        Err(Error::Rows(ndnpy::error::RowsError::NoGrowthAxis))
    ));
    let words = npz.read_range::<ndnpy::pickle::PyValue, Ix1>("words", 0..1);
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
        Err(Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. }))
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

/// Random 64-bit words: incompressible, so deflate keeps them in stored
/// blocks, where one changed byte changes one value and nothing else (no
/// error from the decoder, only the CRC-32 can tell).
fn noise(n: usize) -> Array1<u64> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    Array1::from_iter((0..n).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }))
}

/// `archive` with the byte at `at` changed.
fn flipped(mut archive: Vec<u8>, at: usize) -> Vec<u8> {
    archive[at] ^= 0x40;
    archive
}

/// The same values or an error: a whole read is an error (the CRC), and a
/// range of all rows must be one too, not the changed value.
fn all_rows_are_checked(npz: &mut NpzReader<impl std::io::Read + std::io::Seek>, n: usize) {
    assert!(
        matches!(
            npz.read::<u64, Ix1>("a"),
            Err(Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. }))
        ),
        "the whole read finds the change"
    );
    let got = npz.read_range::<u64, Ix1>("a", 0..n);
    assert!(
        matches!(
            got,
            Err(Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. }))
        ),
        "{got:?}"
    );
    let got = npz.read_range::<u64, Ix1>("a", ..);
    assert!(
        matches!(
            got,
            Err(Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. }))
        ),
        "{got:?}"
    );
}

#[test]
fn a_range_of_all_rows_is_checked_as_a_whole_read_in_every_kind_of_member() {
    let n = 400_000;
    let a = noise(n);
    // ndnpy's pieces (3.2 MB: four pieces), stored, and NumPy's deflate.
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    w.add("a", &a).unwrap();
    let ours = w.finish_into_inner().unwrap().into_inner();
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("a", &a).unwrap();
    let stored = w.finish_into_inner().unwrap().into_inner();
    let numpy = numpy_style(
        &[("a", a.to_npy_bytes().unwrap())],
        zip::CompressionMethod::Deflated,
    );
    for (kind, archive) in [("pieces", ours), ("stored", stored), ("numpy", numpy)] {
        // Intact: every row, every way.
        let mut npz = NpzReader::new(Cursor::new(archive.clone())).unwrap();
        assert_eq!(npz.read_range::<u64, Ix1>("a", ..).unwrap(), a, "{kind}");
        // A byte of data in the middle of the member (of a stored block's
        // bytes, for the deflated ones).
        let broken = flipped(archive, 1_600_123);
        let mut npz = NpzReader::new(Cursor::new(broken.clone())).unwrap();
        all_rows_are_checked(&mut npz, n);
        // A range of some rows cannot know: it gives the values there (the
        // changed one included), as documented; the index built by a read
        // to the end (NumPy's members) knows, once.
        let mut npz = NpzReader::new(Cursor::new(broken)).unwrap();
        let some = npz.read_range::<u64, Ix1>("a", 10..20);
        assert_eq!(some.unwrap(), a.slice(s![10..20]), "{kind}");
    }
}

#[test]
fn a_sidecar_never_lets_a_changed_byte_through_a_range_of_all_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rot.npz");
    // 10 MB of stored blocks (as zlib deflates noise at any level, and
    // `zipfile` anything at `compresslevel=0`): checkpoints every 4 MiB.
    let n = 1_250_000;
    let a = noise(n);
    let archive = numpy_style(
        &[("a", a.to_npy_bytes().unwrap())],
        zip::CompressionMethod::Deflated,
    );
    std::fs::write(&path, &archive).unwrap();
    {
        let mut npz = NpzReader::open(&path).unwrap();
        npz.use_index_sidecar(true).unwrap();
        // Read to the end: the index is complete, the sidecar saved.
        assert_eq!(npz.read_range::<u64, Ix1>("a", ..).unwrap(), a);
    }
    assert!(dir.path().join(".rot.npz.ndnpy-index").exists());
    // Bit rot (or `cp -p` after a rewrite): one byte changed in the last
    // span, the archive's length and modification time kept.
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let at = archive.len() - 1_000_000;
    std::fs::write(&path, flipped(archive, at)).unwrap();
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(mtime).unwrap();
    drop(file);
    let mut npz = NpzReader::open(&path).unwrap();
    npz.use_index_sidecar(true).unwrap();
    all_rows_are_checked(&mut npz, n);
    // Rows from a checkpoint whose span holds the change: the sidecar's
    // check finds the span changed, the index is rebuilt from the start,
    // and the rows are what decoding the archive's bytes gives.
    let mut npz = NpzReader::open(&path).unwrap();
    npz.use_index_sidecar(true).unwrap();
    let fresh = NpzReader::open(&path)
        .unwrap()
        .read_range::<u64, Ix1>("a", n - 200_000..n - 100_000)
        .unwrap();
    let got = npz
        .read_range::<u64, Ix1>("a", n - 200_000..n - 100_000)
        .unwrap();
    assert_eq!(got, fresh);
    assert_ne!(
        got,
        a.slice(s![n - 200_000..n - 100_000]),
        "the change shows"
    );
    all_rows_are_checked(&mut npz, n);
}

#[cfg(unix)]
#[test]
fn a_link_planted_at_the_sidecar_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.npz");
    let a = table(60_000);
    std::fs::write(
        &path,
        numpy_style(
            &[("a", a.to_npy_bytes().unwrap())],
            zip::CompressionMethod::Deflated,
        ),
    )
    .unwrap();
    // Someone who can write to the folder plants a link where the sidecar
    // goes, pointing at a file of the reader's.
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    let sidecar = dir.path().join(".l.npz.ndnpy-index");
    std::os::unix::fs::symlink(&victim, &sidecar).unwrap();
    let mut npz = NpzReader::open(&path).unwrap();
    npz.use_index_sidecar(true).unwrap();
    let got = npz.read_range::<f64, Ix2>("a", 50_000..50_010).unwrap();
    assert_eq!(got, a.slice(s![50_000..50_010, ..]));
    drop(npz);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    // The link was replaced by the reader's own file, private to it.
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(&sidecar).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    // Nothing else is left in the folder.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, [".l.npz.ndnpy-index", "l.npz", "victim.txt"]);
    // A sidecar others can write is not read: one made writable by all,
    // then doctored, changes nothing.
    let mut saved = std::fs::read(&sidecar).unwrap();
    let last = saved.len() - 1;
    saved[last] ^= 0xFF;
    std::fs::write(&sidecar, &saved).unwrap();
    std::fs::set_permissions(&sidecar, std::fs::Permissions::from_mode(0o666)).unwrap();
    let mut npz = NpzReader::open(&path).unwrap();
    npz.use_index_sidecar(true).unwrap();
    let got = npz.read_range::<f64, Ix2>("a", 50_000..50_010).unwrap();
    assert_eq!(got, a.slice(s![50_000..50_010, ..]));
}
