//! Limits on hostile input, each with the exact error variant it gives:
//! header length (default and configured), nesting depth, checked size
//! arithmetic, claimed sizes beyond the data, the zip-bomb guard, and every
//! input the fuzzers ever found (`fuzz/regressions/`).

use ndarray::{Array1, Array2, ArrayD, ArrayView1, ArrayViewD, IxDyn};
use ndnpy::{
    dtype::Header, npy::DEFAULT_MAX_HEADER_LEN, AnyArray, Error, NpyMmap, NpzReader, ReadNpy,
    ReadOptions, ViewNpy,
};
use std::io::Cursor;

mod common;
use common::{npy_v1, npy_v2};
use std::path::{Path, PathBuf};

fn dict(descr: &str, shape: &str) -> String {
    format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}")
}

/// A header of exactly `len` bytes (text padded with spaces, then newline).
fn padded(text: &str, len: usize) -> String {
    let mut t = text.to_owned();
    while t.len() + 1 < len {
        t.push(' ');
    }
    t
}

fn temp_file(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

// ---------------------------------------------------------------- header length

#[test]
fn header_len_default_limit_is_numpy_like() {
    assert_eq!(DEFAULT_MAX_HEADER_LEN, 10_000);
    assert_eq!(ReadOptions::default().get_max_header_len(), 10_000);
    let text = dict("'<f8'", "(2,)");
    let data = [0u8; 16];

    // Exactly at the limit: accepted.
    let at = npy_v2(&padded(&text, 10_000), &data);
    let a = Array1::<f64>::from_npy_bytes(&at).unwrap();
    assert_eq!(a.len(), 2);

    // One byte over: refused with both numbers, by every entry point.
    let over = npy_v2(&padded(&text, 10_001), &data);
    let check = |e: Error| {
        assert!(
            matches!(
                e,
                Error::Limit(ndnpy::error::LimitError::HeaderTooLarge {
                    len: 10_001,
                    max: 10_000
                })
            ),
            "{e:?}"
        )
    };
    check(Header::read_from(&over[..]).unwrap_err());
    check(Array1::<f64>::from_npy_bytes(&over).unwrap_err());
    check(Array1::<f64>::read_npy_from(&over[..]).unwrap_err());
    check(ArrayView1::<f64>::view_npy(&over).unwrap_err());
    check(AnyArray::from_npy_bytes(&over).unwrap_err());
    let (_dir, path) = temp_file(&over);
    check(Array1::<f64>::read_npy(&path).unwrap_err());
    check(ndnpy::dtype::Header::open(&path).unwrap_err());
}

#[test]
fn header_len_configured_limit() {
    let text = dict("'<i4'", "(3,)");
    let file = npy_v1(&padded(&text, 118), &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);

    let small = ReadOptions::default().max_header_len(100);
    let check = |e: Error| {
        assert!(
            matches!(
                e,
                Error::Limit(ndnpy::error::LimitError::HeaderTooLarge { len: 118, max: 100 })
            ),
            "{e:?}"
        )
    };
    check(Header::read_from_with(&file[..], &small).unwrap_err());
    check(Array1::<i32>::from_npy_bytes_with(&file, &small).unwrap_err());
    check(Array1::<i32>::read_npy_from_with(&file[..], &small).unwrap_err());
    let (_dir, path) = temp_file(&file);
    check(Array1::<i32>::read_npy_with(&path, &small).unwrap_err());

    let exact = ReadOptions::default().max_header_len(118);
    let a = Array1::<i32>::from_npy_bytes_with(&file, &exact).unwrap();
    assert_eq!(a.to_vec(), vec![1, 2, 3]);

    // A trusted, larger limit reads headers beyond the default.
    let big_text = padded(&dict("'<i4'", "(3,)"), 50_000);
    let big = npy_v2(&big_text, &[0u8; 12]);
    assert!(matches!(
        Array1::<i32>::from_npy_bytes(&big).unwrap_err(),
        Error::Limit(ndnpy::error::LimitError::HeaderTooLarge {
            len: 50_000,
            max: 10_000
        })
    ));
    let raised = ReadOptions::default().max_header_len(1 << 20);
    assert_eq!(
        Array1::<i32>::from_npy_bytes_with(&big, &raised)
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn header_len_field_beyond_the_data() {
    // v2 claims a 4 GiB header in a 16-byte file.
    let mut file = b"\x93NUMPY\x02\x00".to_vec();
    file.extend_from_slice(&u32::MAX.to_le_bytes());
    file.extend_from_slice(b"{'descr'");
    assert!(matches!(
        Header::read_from(&file[..]).unwrap_err(),
        Error::Limit(ndnpy::error::LimitError::HeaderTooLarge {
            len: 4_294_967_295,
            max: 10_000
        })
    ));
    // With the limit lifted, the short file is reported, not allocated for
    // (tests/alloc_bound.rs measures the allocation).
    let unlimited = ReadOptions::default().max_header_len(usize::MAX);
    let err = Header::read_from_with(&file[..], &unlimited).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Header(ndnpy::error::HeaderError::TruncatedHeader {
                expected: 4_294_967_307,
                found: 20
            })
        ),
        "{err:?}"
    );
}

// ---------------------------------------------------------------- nesting depth

#[test]
fn nesting_depth_is_bounded() {
    let options = ReadOptions::default().max_header_len(1 << 20);
    for open in ["(", "[", "{"] {
        // 100 000 open brackets: an error, not a stack overflow.
        let text = format!("{{'descr': {}", open.repeat(100_000));
        let file = npy_v2(&text, &[]);
        let err = Header::read_from_with(&file[..], &options).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Limit(ndnpy::error::LimitError::NestingTooDeep { .. })
            ),
            "{open}: {err:?}"
        );
        let err = ArrayD::<f64>::from_npy_bytes_with(&file, &options).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Limit(ndnpy::error::LimitError::NestingTooDeep { .. })
            ),
            "{open}: {err:?}"
        );
    }
    // Deep but closed nesting in the shape: also refused by depth.
    let deep = format!("{}1{}", "(".repeat(1000), ")".repeat(1000));
    let file = npy_v2(&dict("'<f8'", &deep), &[]);
    let err = Header::read_from_with(&file[..], &options).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::NestingTooDeep { .. })
        ),
        "{err:?}"
    );

    // Nested records up to a realistic depth still parse.
    let mut descr = "'<f8'".to_owned();
    for i in 0..8 {
        descr = format!("[('f{i}', {descr})]");
    }
    let file = npy_v1(&dict(&descr, "(1,)"), &[0u8; 8]);
    let header = Header::read_from(&file[..]).unwrap();
    assert_eq!(header.shape, vec![1]);
}

#[test]
fn nesting_depth_limit_value() {
    let options = ReadOptions::default().max_header_len(1 << 20);
    let file = npy_v2(&format!("{{'descr': {}", "[".repeat(10_000)), &[]);
    match Header::read_from_with(&file[..], &options).unwrap_err() {
        Error::Limit(ndnpy::error::LimitError::NestingTooDeep { max }) => {
            assert!((8..=1000).contains(&max), "{max}")
        }
        e => panic!("{e:?}"),
    }
}

// ---------------------------------------------------------------- checked arithmetic

fn overflow(descr: &str, shape: &str) -> Error {
    let file = npy_v1(&dict(descr, shape), &[0u8; 64]);
    let err = Header::read_from(&file[..]).unwrap_err();
    // Every reader gives the same answer.
    for other in [
        ArrayD::<u8>::from_npy_bytes(&file).map(drop).unwrap_err(),
        ArrayD::<f64>::read_npy_from(&file[..])
            .map(drop)
            .unwrap_err(),
        ArrayViewD::<u8>::view_npy(&file).map(drop).unwrap_err(),
        AnyArray::from_npy_bytes(&file).map(drop).unwrap_err(),
    ] {
        assert_eq!(
            std::mem::discriminant(&err),
            std::mem::discriminant(&other),
            "{err:?} vs {other:?}"
        );
    }
    err
}

#[test]
fn element_count_overflow() {
    // 2^32 · 2^32 = 2^64 elements: the product does not fit in usize.
    let err = overflow("'|u1'", "(4294967296, 4294967296)");
    match err {
        Error::Limit(ndnpy::error::LimitError::LengthOverflow { shape, itemsize }) => {
            assert_eq!(shape, vec![1 << 32, 1 << 32]);
            assert_eq!(itemsize, 1);
        }
        e => panic!("{e:?}"),
    }
    // Many small factors.
    let shape = format!("({})", ["65536"; 5].join(", "));
    assert!(matches!(
        overflow("'|u1'", &shape),
        Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
    ));
}

#[test]
fn byte_count_overflow() {
    // 2^62 elements fit, 2^62 · 8 bytes do not.
    match overflow("'<f8'", "(4611686018427387904,)") {
        Error::Limit(ndnpy::error::LimitError::LengthOverflow { shape, itemsize }) => {
            assert_eq!(shape, vec![1 << 62]);
            assert_eq!(itemsize, 8);
        }
        e => panic!("{e:?}"),
    }
    // 2^61 · 4 = 2^63 bytes: fits u64 but exceeds isize::MAX.
    assert!(matches!(
        overflow("'<f4'", "(2305843009213693952,)"),
        Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
    ));
    // Sub-array itemsize overflow: (2^31-1)^3 blocks of f8.
    assert!(matches!(
        overflow("('<f8', (2147483647, 2147483647, 2147483647))", "(1,)"),
        Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
    ));
}

#[test]
fn dimension_beyond_u64() {
    match overflow("'<f8'", "(3, 36893488147419103232)") {
        Error::Limit(ndnpy::error::LimitError::LengthOverflow { shape, .. }) => {
            assert_eq!(shape[0], 3)
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn zero_length_with_huge_other_axes() {
    // Zero elements, but the other axes' product overflows isize: ndarray
    // cannot represent it, so the readers refuse it instead of panicking.
    let file = npy_v1(&dict("'<f8'", "(0, 4294967296, 4294967296)"), &[]);
    let err = ArrayD::<f64>::from_npy_bytes(&file).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
        ),
        "{err:?}"
    );
    let err = ArrayViewD::<f64>::view_npy(&file).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
        ),
        "{err:?}"
    );
    // A plain empty array still reads.
    let file = npy_v1(&dict("'<f8'", "(0, 1000000000)"), &[]);
    let a = Array2::<f64>::from_npy_bytes(&file).unwrap();
    assert_eq!(a.shape(), &[0, 1_000_000_000]);
}

// ---------------------------------------------------------------- claimed size beyond data

#[test]
fn enormous_shape_in_tiny_file() {
    let file = npy_v1(&dict("'<f8'", "(4000000000,)"), &[0u8; 72]);
    assert!(file.len() < 256);
    let check = |e: Error| {
        assert!(
            matches!(
                e,
                Error::Data(ndnpy::error::DataError::TruncatedData {
                    expected: 32_000_000_000,
                    found: 72
                })
            ),
            "{e:?}"
        )
    };
    check(Array1::<f64>::from_npy_bytes(&file).unwrap_err());
    check(Array1::<f64>::read_npy_from(&file[..]).unwrap_err());
    check(ArrayView1::<f64>::view_npy(&file).map(drop).unwrap_err());
    check(AnyArray::from_npy_bytes(&file).unwrap_err());
    let (_dir, path) = temp_file(&file);
    check(Array1::<f64>::read_npy(&path).unwrap_err());
    check(AnyArray::read_npy(&path).unwrap_err());
}

#[test]
fn memory_map_limits() {
    let dir = tempfile::tempdir().unwrap();
    // Creating a file whose size overflows: refused before the file is made.
    let path = dir.path().join("huge.npy");
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let err = unsafe { NpyMmap::create::<f64, _>(&path, &[1 << 62], ndnpy::Order::C) }
        .map(drop)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
        ),
        "{err:?}"
    );
    let err =
        // SAFETY: nothing else writes or truncates this file while it is mapped.
        unsafe { NpyMmap::create::<u8, _>(&path, &[1 << 32, 1 << 32], ndnpy::Order::Fortran) }
            .map(drop)
            .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
        ),
        "{err:?}"
    );
    assert!(!path.exists());
    // Mapping a tiny file that claims 32 GB: truncated, nothing allocated.
    let (_dir, path) = temp_file(&npy_v1(&dict("'<f8'", "(4000000000,)"), &[0u8; 72]));
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let err = unsafe { NpyMmap::open(&path) }.map(drop).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData {
                expected: 32_000_000_000,
                found: 72
            })
        ),
        "{err:?}"
    );
}

// ---------------------------------------------------------------- fuzz regressions

fn regression_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.retain(|p| {
        p.extension()
            .is_some_and(|e| e == "npy" || e == "npz" || e == "bin")
    });
    files.sort();
    files
}

/// Every crash input the fuzzers found: each reader gives an answer (any
/// `Result`) instead of panicking, and the readers agree.
#[test]
fn fuzz_regressions_do_not_panic() {
    for path in regression_files() {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.display();
        let _ = Header::read_from(&bytes[..]);
        let owned = ArrayD::<f64>::from_npy_bytes(&bytes);
        let streamed = ArrayD::<f64>::read_npy_from(&bytes[..]);
        assert_eq!(owned.is_ok(), streamed.is_ok(), "{name}");
        let _ = ArrayD::<u8>::from_npy_bytes(&bytes);
        let _ = ArrayD::<bool>::from_npy_bytes(&bytes);
        let _ = Array1::<i16>::from_npy_bytes(&bytes);
        let _ = ArrayViewD::<f64>::view_npy(&bytes).map(|v| v.sum());
        let _ = ArrayViewD::<bool>::view_npy(&bytes).map(|v| v.len());
        let _ = AnyArray::from_npy_bytes(&bytes);
        let _ = ArrayD::<f64>::from_npy_bytes(&bytes).map(|a| a.into_dimensionality::<IxDyn>());
        check_npz_regression(&bytes);
    }
}

fn check_npz_regression(bytes: &[u8]) {
    let Ok(mut npz) = NpzReader::new(Cursor::new(bytes)) else {
        return;
    };
    for name in npz.names() {
        let _ = npz.header(&name);
        let _ = npz.read_any(&name);
        let _ = npz.read::<f64, IxDyn>(&name);
        let _ = npz.raw(&name);
    }
}

// ---------------------------------------------------------------- zip bombs

/// An archive with one member `name` holding `member`, stored or deflated.
fn zip_with(name: &str, member: &[u8], deflated: bool) -> Vec<u8> {
    use std::io::Write;
    let method = if deflated {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    zip.start_file(name, options).unwrap();
    zip.write_all(member).unwrap();
    zip.finish().unwrap().into_inner()
}

/// Overwrites the uncompressed size recorded for the (only) member in the
/// local header and the central directory.
fn lie_about_size(archive: &mut [u8], size: u32) {
    assert_eq!(&archive[..4], b"PK\x03\x04");
    archive[22..26].copy_from_slice(&size.to_le_bytes());
    let cd = archive
        .windows(4)
        .rposition(|w| w == b"PK\x01\x02")
        .expect("central directory entry");
    archive[cd + 24..cd + 28].copy_from_slice(&size.to_le_bytes());
}

#[test]
fn zip_bomb_trailing_bytes_are_not_decompressed() {
    // A ten-element array followed by 16 MiB of zeros that deflate to ~16 KB:
    // the reader takes the array, drains at most a bounded amount past it,
    // and neither allocates nor spends time on the rest.
    let mut member = npy_v1(&dict("'<f8'", "(10,)"), &[0u8; 80]);
    member.resize(member.len() + (16 << 20), 0);
    let archive = zip_with("x.npy", &member, true);
    assert!(archive.len() < 1 << 20, "{}", archive.len());
    drop(member);
    let mut npz = NpzReader::new(Cursor::new(&archive[..])).unwrap();
    let started = std::time::Instant::now();
    let x = npz.read::<f64, ndarray::Ix1>("x").unwrap();
    assert_eq!(x, Array1::<f64>::zeros(10));
    assert!(matches!(npz.read_any("x").unwrap(), AnyArray::F64(_)));
    // Reading is far quicker than inflating 16 MiB (generous for debug builds).
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn zip_bomb_member_larger_than_declared() {
    // The header claims 500 000 f64 and the deflate stream really holds
    // them, but the archive declares only 300 bytes for the member: the
    // declared size bounds what is read, so this is truncated data.
    let mut member = npy_v1(&dict("'<f8'", "(500000,)"), &[]);
    member.resize(member.len() + 4_000_000, 0);
    let mut archive = zip_with("x.npy", &member, true);
    lie_about_size(&mut archive, 300);
    let mut npz = NpzReader::new(Cursor::new(&archive[..])).unwrap();
    let err = npz.read::<f64, ndarray::Ix1>("x").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData {
                expected: 4_000_000,
                ..
            })
        ),
        "{err:?}"
    );
    // Raw bytes: the zip reader stops at the declared size or reports the
    // member as corrupt, never returns megabytes.
    match npz.raw("x") {
        Ok(bytes) => assert!(bytes.len() <= 300, "{}", bytes.len()),
        Err(e) => assert!(
            matches!(
                e,
                Error::Archive(ndnpy::error::ArchiveError::CorruptMember { .. })
                    | Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
            ),
            "{e:?}"
        ),
    }
}

#[test]
fn npz_member_reader_names_a_member_that_ends_early() {
    let member = npy_v1(&dict("'<f8'", "(512,)"), &[1u8; 4096]);
    let mut archive = zip_with("x.npy", &member, true);
    lie_about_size(&mut archive, 1 << 20);
    let mut npz = NpzReader::new(Cursor::new(&archive[..])).unwrap();
    let mut reader = npz.member_reader("x").unwrap();
    assert_eq!(reader.size(), 1 << 20);
    let err = std::io::Read::read_to_end(&mut reader, &mut Vec::new()).unwrap_err();
    let err = Error::from(err);
    assert!(
        matches!(&err, Error::Archive(ndnpy::error::ArchiveError::CorruptMember { reason, .. }) if reason.contains(&format!("ends after {} of the 1048576 bytes", member.len()))),
        "{err:?}"
    );
}

#[test]
fn npz_member_claiming_more_than_it_holds() {
    // Declared 4 GiB, header claims 4·10⁹ bytes, the stream holds 4 KB.
    let member = npy_v1(&dict("'<f8'", "(500000000,)"), &[1u8; 4096]);
    let mut archive = zip_with("x.npy", &member, true);
    lie_about_size(&mut archive, u32::MAX - 1);
    let mut npz = NpzReader::new(Cursor::new(&archive[..])).unwrap();
    let err = npz.read::<f64, ndarray::Ix1>("x").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData { .. })
                | Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
        ),
        "{err:?}"
    );
    let err = npz.read_any("x").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData { .. })
                | Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
        ),
        "{err:?}"
    );
    // Stored, with the archive's declared size smaller than the header's claim.
    let member = npy_v1(&dict("'<f8'", "(4000000000,)"), &[0u8; 64]);
    let archive = zip_with("x.npy", &member, false);
    let mut npz = NpzReader::new(Cursor::new(&archive[..])).unwrap();
    let err = npz.read::<f64, ndarray::Ix1>("x").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData {
                expected: 32_000_000_000,
                found: 64
            })
        ),
        "{err:?}"
    );
}
