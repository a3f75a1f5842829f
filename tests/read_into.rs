//! `read_npy_into` and its stream and bytes forms: every layout pairing,
//! conversions, and the errors, each against what `read_npy` gives.

use ndarray::{s, Array1, Array2, Array3, ShapeBuilder};
use ndnpy::{npy::ReadNpyInto, Error, ReadNpy, WriteNpy};

mod common;
use common::npy_v1;

fn c_array() -> Array2<f64> {
    Array2::from_shape_fn((37, 53), |(i, j)| (i * 1000 + j) as f64)
}

#[test]
fn every_layout_pairing_reads_the_same_values() {
    let c = c_array();
    let mut f = Array2::<f64>::zeros((37, 53).f());
    f.assign(&c);
    for file in [c.to_npy_bytes().unwrap(), f.to_npy_bytes().unwrap()] {
        // Into a C-order array, a Fortran-order array and a strided view.
        let mut into_c = Array2::<f64>::zeros((37, 53));
        into_c.view_mut().fill_from_npy_bytes(&file).unwrap();
        assert_eq!(into_c, c);
        let mut into_f = Array2::<f64>::zeros((37, 53).f());
        into_f.view_mut().fill_from_npy_bytes(&file).unwrap();
        assert_eq!(into_f, c);
        let mut wide = Array2::<f64>::from_elem((37, 106), -1.0);
        wide.slice_mut(s![.., ..;2])
            .fill_from_npy_bytes(&file)
            .unwrap();
        assert_eq!(wide.slice(s![.., ..;2]), c);
        assert!(wide.slice(s![.., 1..;2]).iter().all(|&v| v == -1.0));
        // From a stream as from bytes.
        let mut streamed = Array2::<f64>::zeros((37, 53));
        streamed.view_mut().fill_from_npy_reader(&file[..]).unwrap();
        assert_eq!(streamed, c);
    }
}

#[test]
fn a_file_fills_one_slot_of_a_batch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.npy");
    let c = c_array();
    c.write_npy(&path).unwrap();
    let mut batch = Array3::<f64>::zeros((3, 37, 53));
    batch.slice_mut(s![2, .., ..]).fill_from_npy(&path).unwrap();
    assert_eq!(batch.slice(s![2, .., ..]), c);
    assert!(batch.slice(s![..2, .., ..]).iter().all(|&v| v == 0.0));
}

#[test]
fn byte_order_and_bools_are_converted() {
    // Big-endian u32: the in-place plan swaps while reading.
    let data: Vec<u8> = (0u32..1000).flat_map(|v| v.to_be_bytes()).collect();
    let file = npy_v1(
        "{'descr': '>u4', 'fortran_order': False, 'shape': (1000,), }",
        &data,
    );
    let mut out = Array1::<u32>::zeros(1000);
    out.view_mut().fill_from_npy_bytes(&file).unwrap();
    assert_eq!(out, Array1::from_iter(0u32..1000));
    // Bytes other than 0 and 1 are `true`, as NumPy reads them.
    let file = npy_v1(
        "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
        &[0, 1, 2, 255],
    );
    let mut out = Array1::<bool>::from_elem(4, false);
    out.view_mut().fill_from_npy_bytes(&file).unwrap();
    assert_eq!(out, Array1::<bool>::from_file_default(&file));
}

/// What `read_npy` gives for the same bytes, as the reference.
trait FromFile: Sized {
    fn from_file_default(bytes: &[u8]) -> Self;
}

impl FromFile for Array1<bool> {
    fn from_file_default(bytes: &[u8]) -> Self {
        Array1::<bool>::from_npy_bytes(bytes).unwrap()
    }
}

#[test]
fn errors_say_what_is_wrong_and_leave_valid_elements() {
    let c = c_array();
    let file = c.to_npy_bytes().unwrap();
    let mut wrong_shape = Array2::<f64>::zeros((53, 37));
    let e = wrong_shape
        .view_mut()
        .fill_from_npy_bytes(&file)
        .unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "shape mismatch: the array to read into has shape [53, 37], the file's is [37, 53]"
    );
    let mut wrong_type = Array2::<f32>::zeros((37, 53));
    let e = wrong_type
        .view_mut()
        .fill_from_npy_bytes(&file)
        .unwrap_err();
    assert!(matches!(e, Error::DTypeMismatch { .. }), "{e}");
    // A truncated file: the error `read_npy` gives, and `out` still valid.
    let cut = &file[..file.len() - 100];
    let mut out = Array2::<f64>::from_elem((37, 53), 7.0);
    let e = out.view_mut().fill_from_npy_bytes(cut).unwrap_err();
    let reference = Array2::<f64>::from_npy_bytes(cut).unwrap_err();
    assert_eq!(e.to_string(), reference.to_string());
    let mut bools = Array1::<bool>::from_elem(4, true);
    let file = npy_v1(
        "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
        &[1, 2],
    );
    // Data of known length is checked before anything is written.
    assert!(bools.view_mut().fill_from_npy_bytes(&file).is_err());
    assert_eq!(bools, Array1::from_elem(4, true));
    // From a stream the shortfall shows only while reading: the piece being
    // read is then zeroed, not left half written (a byte 2 in a `bool`).
    assert!(bools.view_mut().fill_from_npy_reader(&file[..]).is_err());
    assert_eq!(bools, Array1::from_elem(4, false));
    // A missing file names its path.
    let e = out
        .view_mut()
        .fill_from_npy("/nonexistent/x.npy")
        .unwrap_err();
    assert!(e.to_string().starts_with("/nonexistent/x.npy: "), "{e}");
}

ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct Point { x: f64, y: i32 }
}

#[test]
fn record_fields_are_matched_by_name() {
    // The file lists the fields the other way round, big-endian, with an
    // extra field the type does not have.
    let mut data = Vec::new();
    for i in 0..5i32 {
        data.extend_from_slice(&i.to_be_bytes());
        data.extend_from_slice(&[9, 9]);
        data.extend_from_slice(&(i as f64 * 0.5).to_be_bytes());
    }
    let file = npy_v1(
        "{'descr': [('y', '>i4'), ('z', '|V2'), ('x', '>f8')], 'fortran_order': False, 'shape': (5,), }",
        &data,
    );
    let mut out = Array1::<Point>::default(5);
    out.view_mut().fill_from_npy_bytes(&file).unwrap();
    assert_eq!(out, Array1::<Point>::from_npy_bytes(&file).unwrap());
    assert_eq!(out[3], Point { x: 1.5, y: 3 });
}

#[test]
fn row_ranges_and_archive_members_read_into_arrays_the_caller_has() {
    use ndnpy::{NpyFile, NpzReader, NpzWriter};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.npy");
    let a = ndarray::Array2::from_shape_fn((100, 3), |(i, j)| (i * 3 + j) as i32);
    a.write_npy(&path).unwrap();
    let file = NpyFile::open(&path).unwrap();
    // Into a Fortran-order buffer.
    let mut out = ndarray::Array2::<i32>::zeros((10, 3).f());
    file.read_range_into(20..30, &mut out.view_mut()).unwrap();
    assert_eq!(out, a.slice(ndarray::s![20..30, ..]));
    let mut wrong = ndarray::Array2::<i32>::zeros((9, 3));
    let err = file
        .read_range_into(20..30, &mut wrong.view_mut())
        .unwrap_err();
    assert!(matches!(err, ndnpy::Error::ShapeMismatch { .. }), "{err:?}");
    let err = file
        .read_range_into(95..105, &mut out.view_mut())
        .unwrap_err();
    assert!(
        matches!(
            err,
            ndnpy::Error::Rows(ndnpy::error::RowsError::RangeOutOfBounds { .. })
        ),
        "{err:?}"
    );

    for compressed in [false, true] {
        let mut w = NpzWriter::new(std::io::Cursor::new(Vec::new())).codec(if compressed {
            ndnpy::npz::Codec::deflate()
        } else {
            ndnpy::npz::Codec::Stored
        });
        w.add("a", &a).unwrap();
        let mut npz = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
        let mut out = ndarray::Array3::<i32>::zeros((2, 100, 3));
        npz.read_into("a", &mut out.slice_mut(ndarray::s![1, .., ..]))
            .unwrap();
        assert_eq!(out.slice(ndarray::s![1, .., ..]), a);
        assert_eq!(out.slice(ndarray::s![0, .., ..]).sum(), 0);
        let err = npz
            .read_into("nope", &mut out.slice_mut(ndarray::s![1, .., ..]))
            .unwrap_err();
        assert!(
            matches!(err, ndnpy::Error::MemberNotFound { .. }),
            "{err:?}"
        );
    }
}

#[test]
fn long_and_short_lanes_in_the_other_order() {
    // Lanes (the file's contiguous runs) of 560 KB take the element path;
    // short ones the blocked transposition; both give read_npy's values.
    for (rows, cols) in [(70_000usize, 2usize), (2, 70_000), (300, 7), (1, 1)] {
        let c = Array2::from_shape_fn((rows, cols), |(i, j)| (i * cols + j) as f64);
        let mut f = Array2::<f64>::zeros((rows, cols).f());
        f.assign(&c);
        for bytes in [f.to_npy_bytes().unwrap(), c.to_npy_bytes().unwrap()] {
            let mut into_c = Array2::<f64>::zeros((rows, cols));
            into_c.view_mut().fill_from_npy_bytes(&bytes).unwrap();
            assert_eq!(into_c, c);
            let mut into_f = Array2::<f64>::zeros((rows, cols).f());
            into_f.view_mut().fill_from_npy_bytes(&bytes).unwrap();
            assert_eq!(into_f, c);
            // A strided, reversed view.
            let mut big = Array2::<f64>::zeros((rows, 2 * cols));
            let mut view = big.slice_mut(s![.., ..;-2]);
            view.fill_from_npy_bytes(&bytes).unwrap();
            assert_eq!(view, c);
        }
    }
}
