//! `Error::kind` groups the variants by what a caller can do, and
//! `From<ndnpy::Error> for std::io::Error` gives the fitting
//! `io::ErrorKind`, keeping the error inside so that it can be downcast
//! (and `ndnpy::Error::from` gives it back whole).

use ndarray::{Array1, Array2, Ix1};
use ndnpy::{
    AnyArray, Error, ErrorKind, NpyFile, NpzReader, NpzWriter, ReadNpy, ReadOptions, WriteNpy,
};
use std::io::{self, Cursor};

/// Code written for `io::Result`, as `npyz` users' is: `?` converts.
fn load_io(bytes: &[u8]) -> io::Result<Array1<f64>> {
    Ok(Array1::<f64>::from_npy_bytes(bytes)?)
}

fn io_kind(e: Error) -> io::ErrorKind {
    io::Error::from(e).kind()
}

fn archive() -> Vec<u8> {
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("x", &ndarray::array![1.0f64]).unwrap();
    w.finish_into_inner().unwrap().into_inner()
}

#[test]
fn each_group_has_its_kind_and_io_kind() {
    let f8 = Array1::<f64>::zeros(4).to_npy_bytes().unwrap();

    // Malformed: not a .npy file, a truncated one.
    let e = Array1::<f64>::from_npy_bytes(b"hello world").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Malformed);
    assert_eq!(io_kind(e), io::ErrorKind::InvalidData);
    let e = Array1::<f64>::from_npy_bytes(&f8[..f8.len() - 1]).unwrap_err();
    assert!(matches!(
        e,
        Error::Data(ndnpy::error::DataError::TruncatedData { .. })
    ));
    assert_eq!(e.kind(), ErrorKind::Malformed);
    assert_eq!(io_kind(e), io::ErrorKind::UnexpectedEof);

    // TypeMismatch.
    let e = Array1::<i32>::from_npy_bytes(&f8).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch);
    assert_eq!(io_kind(e), io::ErrorKind::InvalidData);
    let e = Array2::<f64>::from_npy_bytes(&f8).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch);

    // LimitExceeded.
    let small = ReadOptions::default().max_header_len(10);
    let e = AnyArray::from_npy_bytes_with(&f8, &small).unwrap_err();
    assert!(matches!(
        e,
        Error::Limit(ndnpy::error::LimitError::HeaderTooLarge { .. })
    ));
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    assert_eq!(io_kind(e), io::ErrorKind::InvalidData);
    let e = Array1::<f64>::read_npy_from_with(&f8[..], &ReadOptions::default().max_stream_len(8))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);

    // Unsupported.
    let mut v3 = f8.clone();
    v3[6] = 9;
    let e = AnyArray::from_npy_bytes(&v3).unwrap_err();
    assert!(matches!(
        e,
        Error::Header(ndnpy::error::HeaderError::UnsupportedVersion { major: 9, .. })
    ));
    assert_eq!(e.kind(), ErrorKind::Unsupported);

    // NotViewable: a mutable view of a read-only map.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    Array1::<f64>::zeros(4).write_npy(&path).unwrap();
    // SAFETY: nothing else changes the file during the test.
    let mut map = unsafe { ndnpy::NpyMmap::open(&path).unwrap() };
    let e = map.view_mut::<f64, Ix1>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotViewable);
    assert_eq!(io_kind(e), io::ErrorKind::PermissionDenied);

    // NotFound.
    let mut npz = NpzReader::new(Cursor::new(archive())).unwrap();
    let e = npz.read::<f64, Ix1>("nope").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(io_kind(e), io::ErrorKind::NotFound);

    // InvalidRequest.
    let f = NpyFile::open(&path).unwrap();
    let e = f.read_range::<f64, Ix1>(2..9).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    assert_eq!(io_kind(e), io::ErrorKind::InvalidInput);
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("x", &ndarray::array![1u8]).unwrap();
    let e = w.add("x", &ndarray::array![1u8]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    assert_eq!(io_kind(e), io::ErrorKind::AlreadyExists);
    let e = w.finish().unwrap_err();
    assert!(matches!(
        e,
        Error::Write(ndnpy::error::WriteError::IncompleteArchive { .. })
    ));
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
}

#[test]
fn io_errors_keep_their_kind_and_path() {
    let e = Array1::<f64>::read_npy("no/such/dir/a.npy").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    let text = e.to_string();
    let io = io::Error::from(e);
    assert_eq!(io.kind(), io::ErrorKind::NotFound);
    // The path stays in the message, and the error can be downcast.
    assert_eq!(io.to_string(), text);
    let inner = io.get_ref().unwrap().downcast_ref::<Error>().unwrap();
    assert!(matches!(inner, Error::IoPath { .. }));

    // A bare I/O error becomes the io::Error it holds.
    let original = io::Error::new(io::ErrorKind::BrokenPipe, "pipe closed");
    let io = io::Error::from(Error::Io(original));
    assert_eq!(io.kind(), io::ErrorKind::BrokenPipe);
    assert_eq!(io.to_string(), "pipe closed");
}

#[test]
fn errors_survive_a_round_trip_through_io_error() {
    let e = load_io(b"\x93NUMPY\x01\x00").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    // The typed error comes back out whole.
    let back = Error::from(e);
    assert!(
        matches!(
            back,
            Error::Header(ndnpy::error::HeaderError::TruncatedHeader { .. })
        ),
        "{back:?}"
    );
    assert_eq!(back.kind(), ErrorKind::Malformed);

    let f8 = Array1::<f64>::zeros(2).to_npy_bytes().unwrap();
    assert_eq!(load_io(&f8).unwrap(), Array1::<f64>::zeros(2));
}

#[test]
fn kinds_match_with_a_wildcard() {
    // ErrorKind is non-exhaustive: callers match what they handle.
    let what = |e: &Error| match e.kind() {
        ErrorKind::Io => "retry or report the OS error",
        ErrorKind::LimitExceeded => "raise the limit if trusted",
        ErrorKind::Malformed | ErrorKind::Unsupported => "reject the file",
        _ => "other",
    };
    let e = AnyArray::from_npy_bytes(b"").unwrap_err();
    assert_eq!(what(&e), "reject the file");
}
