//! Errors as a user meets them: I/O errors from functions that take a path
//! name the path, `BadMagic` says what the bytes look like, and
//! `NpzReader::member_info` reports what NumPy's archives record.

use ndarray::Array1;
use ndnpy::{npz::Compression, AnyArray, Error, NpyMmap, NpzMmap, NpzReader, ReadNpy};
use std::io::ErrorKind;
use std::path::Path;

const MISSING: &str = "fixtures/no/such/file.npy";

fn assert_names_path(err: Error) {
    let text = err.to_string();
    assert!(
        matches!(&err, Error::IoPath { path, error }
            if path == Path::new(MISSING) && error.kind() == ErrorKind::NotFound),
        "{err:?}"
    );
    assert!(text.starts_with(&format!("{MISSING}: ")), "{text}");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn io_errors_from_paths_name_the_path() {
    assert_names_path(Array1::<f64>::read_npy(MISSING).unwrap_err());
    assert_names_path(AnyArray::read_npy(MISSING).unwrap_err());
    assert_names_path(ndnpy::dtype::Header::open(MISSING).unwrap_err());
    assert_names_path(NpzReader::open(MISSING).unwrap_err());
    // SAFETY: the file does not exist, so nothing is mapped.
    assert_names_path(unsafe { NpyMmap::open(MISSING) }.unwrap_err());
    // SAFETY: as above.
    assert_names_path(unsafe { NpzMmap::open(MISSING) }.unwrap_err());
}

#[test]
fn io_errors_from_writing_and_growing_name_the_path() {
    use ndnpy::{NpyFile, NpyWriter, NpzWriter, Order, WriteNpy};
    assert_names_path(NpyFile::open(MISSING).unwrap_err());
    assert_names_path(NpyFile::open_append(MISSING).unwrap_err());
    assert_names_path(NpyFile::make_appendable(MISSING).unwrap_err());
    // SAFETY: the file does not exist, so nothing is mapped.
    assert_names_path(unsafe { NpyMmap::open_rw(MISSING) }.unwrap_err());
    // Writing into a folder that does not exist.
    let names = |err: Error| {
        assert!(
            matches!(&err, Error::IoPath { path, error }
                if path == Path::new(MISSING) && error.kind() == ErrorKind::NotFound),
            "{err:?}"
        );
    };
    names(ndarray::array![1.0f64].write_npy(MISSING).unwrap_err());
    names(NpzWriter::create(MISSING).unwrap_err());
    names(
        NpzWriter::create(MISSING)
            .map(|w| w.codec(ndnpy::npz::Codec::deflate()))
            .unwrap_err(),
    );
    names(
        NpyWriter::<f32>::create(MISSING, &[2], Order::C)
            .err()
            .unwrap(),
    );
    // SAFETY: creation fails, so nothing is mapped.
    names(unsafe { NpyMmap::create::<f64, _>(MISSING, &[2], Order::C) }.unwrap_err());
}

#[test]
fn reading_a_folder_names_it() {
    let err = Array1::<f64>::read_npy("fixtures").unwrap_err();
    assert!(
        matches!(&err, Error::IoPath { path, .. } if path == Path::new("fixtures")),
        "{err:?}"
    );
}

#[test]
fn non_io_errors_keep_their_variants() {
    let err = Array1::<f64>::read_npy("fixtures/npy/invalid/truncated_data.npy").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData { .. })
        ),
        "{err:?}"
    );
    let err = Array1::<f64>::read_npy("fixtures/npy/invalid/bad_magic_zip.npy").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Header(ndnpy::error::HeaderError::BadMagic { .. })
        ),
        "{err:?}"
    );
}

fn magic_message(path: &str) -> String {
    let err = ndnpy::dtype::Header::open(path).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Header(ndnpy::error::HeaderError::BadMagic { .. })
        ),
        "{path}: {err:?}"
    );
    err.to_string()
}

#[test]
fn bad_magic_says_what_the_bytes_look_like() {
    let zip = magic_message("fixtures/npy/invalid/bad_magic_zip.npy");
    assert!(zip.contains("zip archive (.npz): use NpzReader"), "{zip}");
    assert!(zip.contains("b\"PK\\x03\\x04"), "{zip}");
    let text = magic_message("fixtures/npy/invalid/bad_magic_text.npy");
    assert!(text.contains("looks like text"), "{text}");
    let empty = magic_message("fixtures/npy/invalid/empty_file.npy");
    assert!(empty.contains("empty"), "{empty}");
    let short = magic_message("fixtures/npy/invalid/shorter_than_magic.npy");
    assert!(short.contains("truncated"), "{short}");
    let gzip = Array1::<f64>::from_npy_bytes(b"\x1f\x8b\x08\x00\x00\x00").unwrap_err();
    assert!(gzip.to_string().contains("gzip"), "{gzip}");
    let hdf5 = Array1::<f64>::from_npy_bytes(b"\x89HDF\r\n\x1a\n").unwrap_err();
    assert!(hdf5.to_string().contains("HDF5"), "{hdf5}");
    let pickle = Array1::<f64>::from_npy_bytes(b"\x80\x04\x95\x00\x00").unwrap_err();
    assert!(pickle.to_string().contains("pickle"), "{pickle}");
    let other = Array1::<f64>::from_npy_bytes(b"\x00\x01\x02\xff\xfe\xfd").unwrap_err();
    assert!(other.to_string().contains("\\x93NUMPY"), "{other}");
}

#[test]
fn member_info_of_numpy_archives() {
    // np.savez_compressed deflates every member; np.savez stores them.
    let mut z = NpzReader::open("fixtures/npz/valid/savez_compressed.npz").unwrap();
    let x = z.member_info("x").unwrap();
    assert_eq!(x.name, "x");
    assert_eq!(x.compression, Compression::Deflated);
    // The fixture's x is a 10x10 <f4 array: a 128-byte header, 400 data bytes.
    assert_eq!(x.size, 128 + 400);
    assert!(!x.encrypted);
    let mut z = NpzReader::open("fixtures/npz/valid/savez_named.npz").unwrap();
    for name in z.names() {
        let info = z.member_info(&name).unwrap();
        assert_eq!(info.compression, Compression::Stored, "{name}");
        assert_eq!(info.compressed_size, info.size, "{name}");
        // A stored member's bytes are its .npy file, in place.
        let bytes = std::fs::read("fixtures/npz/valid/savez_named.npz").unwrap();
        let start = info.data_start as usize;
        assert_eq!(&bytes[start..start + 6], b"\x93NUMPY", "{name}");
    }
    assert!(matches!(
        z.member_info("nope"),
        Err(Error::MemberNotFound { .. })
    ));
}
