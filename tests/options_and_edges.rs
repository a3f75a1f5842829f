//! Limits apply on every read path, and edge cases of paths and sizes.

use ndarray::{arr0, ArrayD, ArrayViewD};
use ndnpy::{dtype::Header, Error, NpyMmap, ReadNpy, ReadOptions, ViewNpy, WriteNpy};
use std::path::Path;

fn wide_fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/npy/elements/struct_wide_v2.npy")
}

#[test]
fn a_raised_header_limit_reaches_views_maps_and_inspect() {
    // np.save wrote this 5000-field record with a 96 KB header (version 2.0).
    let path = wide_fixture();
    let bytes = std::fs::read(&path).unwrap();
    let options = ReadOptions::default().max_header_len(1 << 20);

    let err = ndnpy::dtype::Header::open(&path).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::HeaderTooLarge { .. })
        ),
        "{err}"
    );
    let header = ndnpy::dtype::Header::open_with(&path, &options).unwrap();
    assert_eq!(header.shape, vec![1]);

    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let err = unsafe { NpyMmap::open(&path) }.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::HeaderTooLarge { .. })
        ),
        "{err}"
    );
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { NpyMmap::open_with(&path, &options) }.unwrap();
    assert_eq!(map.header(), &header);
    assert_eq!(map.data().len(), 5000 * 4);

    let err = ArrayViewD::<u8>::view_npy(&bytes).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::HeaderTooLarge { .. })
        ),
        "{err}"
    );
    // Past the limit, the record dtype itself is what cannot be viewed as u8.
    let err = ArrayViewD::<u8>::view_npy_with(&bytes, &options).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }), "{err}");
    let any = ndnpy::AnyArray::from_npy_bytes_with(&bytes, &options).unwrap();
    assert!(matches!(any, ndnpy::AnyArray::Record(ref r) if r.names().len() == 5000));
}

#[test]
fn a_map_created_with_a_long_header_reopens_itself() {
    let header = Header::read_from_with(
        &std::fs::read(wide_fixture()).unwrap()[..],
        &ReadOptions::default().max_header_len(1 << 20),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.npy");
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { NpyMmap::create_with_header(&path, &header) }.unwrap();
    assert_eq!(map.header().dtype, header.dtype);
    drop(map);
    // Byte-identical to what np.save wrote for the same (zeroed) array.
    assert_eq!(
        std::fs::read(&path).unwrap(),
        std::fs::read(wide_fixture()).unwrap()
    );
}

#[test]
fn an_array_too_large_for_any_reader_is_refused_on_write() {
    let huge = arr0(1.0f64);
    let view = huge.broadcast(vec![1usize << 31, 1 << 31]).unwrap();
    for err in [
        view.to_npy_bytes().unwrap_err(),
        view.write_npy_to(std::io::sink()).unwrap_err(),
    ] {
        assert!(
            matches!(
                err,
                Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
            ),
            "{err}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let err = view.write_npy(dir.path().join("x.npy")).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
        ),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[cfg(unix)]
#[test]
fn a_fifo_is_read_as_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pipe.npy");
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a plain system call with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let a = ndarray::Array2::<i32>::from_shape_fn((30, 7), |(i, j)| (i * 7 + j) as i32);
    let bytes = a.to_npy_bytes().unwrap();
    let writer_path = path.clone();
    let writer = std::thread::spawn(move || std::fs::write(writer_path, bytes).unwrap());
    let b = ArrayD::<i32>::read_npy(&path).unwrap();
    writer.join().unwrap();
    assert_eq!(a.into_dyn(), b);
}
