//! Files that grow, stream and are read in parts: `NpyFile` (range reads,
//! in-place append, `make_appendable`), `NpyWriter` and `NpyReader`.
//!
//! Every result is checked against an array built in memory and against
//! `to_npy_bytes` of the final array (itself byte-identical to `np.save`,
//! which `tests/fixtures.rs` and `scripts/interop_grow.py` check against
//! NumPy).

mod common;

use ndarray::{s, Array, ArrayD, Axis, Ix1, Ix2, Ix3, IxDyn, ShapeBuilder};
use ndnpy::types::num_complex::Complex;
use ndnpy::{npy::NpyReader, Element, Error, NpyFile, NpyWriter, Order, ReadNpy, WriteNpy};
use std::io::{BufRead, Cursor, Seek, SeekFrom, Write};
use std::path::Path;

/// A distinct value for each index, exactly representable in every type.
trait Val: Element + std::fmt::Debug {
    fn val(i: usize) -> Self;
}
macro_rules! val_num {
    ($($t:ty),*) => {$(
        impl Val for $t {
            fn val(i: usize) -> Self {
                (i % 100) as $t
            }
        }
    )*};
}
val_num!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
impl Val for bool {
    fn val(i: usize) -> Self {
        i.is_multiple_of(3)
    }
}
impl Val for Complex<f32> {
    fn val(i: usize) -> Self {
        Complex::new(i as f32, -(i as f32))
    }
}
impl Val for Complex<f64> {
    fn val(i: usize) -> Self {
        Complex::new(i as f64, 0.5)
    }
}
#[cfg(feature = "half")]
impl Val for ndnpy::types::half::f16 {
    fn val(i: usize) -> Self {
        ndnpy::types::half::f16::from_f32((i % 100) as f32)
    }
}

/// An array of `shape` in `order` whose elements count up in C order.
fn counting<T: Val>(shape: &[usize], start: usize, order: Order) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    let c = Array::from_shape_vec(IxDyn(shape), (start..start + n).map(T::val).collect()).unwrap();
    match order {
        Order::C => c,
        Order::Fortran => {
            let mut f = Array::from_elem(IxDyn(shape).f(), T::val(0));
            f.assign(&c);
            f
        }
    }
}

/// `a` in the memory layout of `order`.
fn in_order<T: Val>(a: &ArrayD<T>, order: Order) -> ArrayD<T> {
    let mut out = match order {
        Order::C => Array::from_elem(a.raw_dim(), T::val(0)),
        Order::Fortran => Array::from_elem(a.raw_dim().f(), T::val(0)),
    };
    out.assign(a);
    out
}

fn other(order: Order) -> Order {
    match order {
        Order::C => Order::Fortran,
        Order::Fortran => Order::C,
    }
}

/// Grows an array along the growth axis of `order` through `NpyWriter` (in
/// blocks of every layout) and through `NpyFile::append`, and checks both
/// against the array built in memory, byte for byte.
fn grow_roundtrip<T: Val + PartialEq>(order: Order) {
    let dir = tempfile::tempdir().unwrap();
    let inner = [3usize, 2];
    let axis = if order.is_fortran() { 2 } else { 0 };
    let shape_of = |rows: usize| -> Vec<usize> {
        match order {
            Order::C => vec![rows, inner[0], inner[1]],
            Order::Fortran => vec![inner[0], inner[1], rows],
        }
    };
    let blocks: Vec<ArrayD<T>> = [2usize, 0, 1, 5, 3]
        .iter()
        .scan(0, |start, &rows| {
            let b = counting::<T>(&shape_of(rows), *start, order);
            *start += b.len();
            Some(b)
        })
        .collect();
    let views: Vec<_> = blocks.iter().map(|b| b.view()).collect();
    let expected = in_order(&ndarray::concatenate(Axis(axis), &views).unwrap(), order);
    let expected_bytes = expected.to_npy_bytes().unwrap();

    // NpyWriter, with blocks in every layout.
    let path = dir.path().join("w.npy");
    let mut w = NpyWriter::<T>::create(&path, &inner, order).unwrap();
    for (i, b) in blocks.iter().enumerate() {
        match i % 3 {
            0 => w.write(b).unwrap(),
            1 => w.write(&in_order(b, other(order))).unwrap(),
            _ => {
                let doubled: Vec<usize> = b.shape().iter().map(|&d| d * 2).collect();
                let mut wide = Array::from_elem(doubled, T::val(0));
                wide.slice_each_axis_mut(|_| ndarray::Slice::new(0, None, 2))
                    .assign(b);
                w.write(&wide.slice_each_axis(|_| ndarray::Slice::new(0, None, 2)))
                    .unwrap()
            }
        }
    }
    assert!(!path.exists());
    assert_eq!(w.rows(), 11);
    w.finish().unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        expected_bytes,
        "{}",
        std::any::type_name::<T>()
    );
    assert_eq!(ArrayD::<T>::read_npy(&path).unwrap(), expected);

    // NpyFile::append onto a file written by write_npy.
    let path = dir.path().join("a.npy");
    blocks[0].write_npy(&path).unwrap();
    let mut f = NpyFile::open_append(&path).unwrap();
    for b in &blocks[1..] {
        f.append(&in_order(b, other(order))).unwrap();
    }
    assert_eq!(f.len(), 11);
    drop(f);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        expected_bytes,
        "{}",
        std::any::type_name::<T>()
    );

    // Range reads.
    let f = NpyFile::open(&path).unwrap();
    assert_eq!(f.read::<T, IxDyn>().unwrap(), expected);
    for (a, b) in [(0, 11), (0, 0), (3, 7), (10, 11), (11, 11)] {
        let got = f.read_range::<T, IxDyn>(a..b).unwrap();
        let want = expected.slice_axis(Axis(axis), ndarray::Slice::from(a..b));
        assert_eq!(got, want, "{} rows {a}..{b}", std::any::type_name::<T>());
        assert!(got.is_empty() || got.is_standard_layout() != order.is_fortran());
    }

    // NpyReader over a stream.
    let mut r = NpyReader::new(Cursor::new(expected_bytes)).unwrap();
    let mut start = 0;
    while let Some(block) = r.read_rows::<T, IxDyn>(4).unwrap() {
        let rows = block.shape()[axis];
        let want = expected.slice_axis(Axis(axis), ndarray::Slice::from(start..start + rows));
        assert_eq!(block, want);
        start += rows;
    }
    assert_eq!(start, 11);
}

macro_rules! roundtrips {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            grow_roundtrip::<$t>(Order::C);
            grow_roundtrip::<$t>(Order::Fortran);
        }
    )*};
}
roundtrips!(
    roundtrip_bool: bool,
    roundtrip_i8: i8,
    roundtrip_i16: i16,
    roundtrip_i32: i32,
    roundtrip_i64: i64,
    roundtrip_u8: u8,
    roundtrip_u16: u16,
    roundtrip_u32: u32,
    roundtrip_u64: u64,
    roundtrip_f32: f32,
    roundtrip_f64: f64,
    roundtrip_c64: Complex<f32>,
    roundtrip_c128: Complex<f64>,
);
#[cfg(feature = "half")]
roundtrips!(roundtrip_f16: ndnpy::types::half::f16);

#[test]
fn one_dimensional_and_single_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let mut w = NpyWriter::<i64>::create(&path, &[], Order::C).unwrap();
    for i in 0..5 {
        w.write(&ndarray::arr0(i)).unwrap();
    }
    w.write(&ndarray::array![5, 6]).unwrap();
    w.finish().unwrap();
    let mut f = NpyFile::open_append(&path).unwrap();
    f.append(&ndarray::arr0(7i64)).unwrap();
    f.append(&ndarray::array![8i64, 9].slice(s![..;-1]))
        .unwrap();
    drop(f);
    let want = ndarray::array![0i64, 1, 2, 3, 4, 5, 6, 7, 9, 8];
    assert_eq!(std::fs::read(&path).unwrap(), want.to_npy_bytes().unwrap());
}

#[test]
fn fortran_writer_with_few_rows_is_still_valid() {
    // `np.save` calls an array of one column C-ordered; the header written
    // in place must still parse and hold the data.
    for rows in 0..3 {
        let mut out = Cursor::new(Vec::new());
        let mut w = NpyWriter::<f64, _>::new(&mut out, &[2, 3], Order::Fortran).unwrap();
        let block = counting::<f64>(&[2, 3, rows], 0, Order::Fortran);
        w.write(&block).unwrap();
        w.finish().unwrap();
        let bytes = out.into_inner();
        assert_eq!(bytes.len() % 64, (rows * 6 * 8) % 64);
        assert_eq!(ArrayD::<f64>::from_npy_bytes(&bytes).unwrap(), block);
        if rows >= 2 {
            assert_eq!(bytes, block.to_npy_bytes().unwrap());
        }
    }
}

#[test]
fn writer_at_an_offset_of_a_seekable_writer() {
    let mut out = Cursor::new(b"prefix".to_vec());
    out.seek(SeekFrom::End(0)).unwrap();
    let mut w = NpyWriter::<u16, _>::new(out, &[2], Order::C).unwrap();
    w.write(&ndarray::array![[1u16, 2], [3, 4]]).unwrap();
    let mut out = w.finish().unwrap();
    assert_eq!(out.stream_position().unwrap(), out.get_ref().len() as u64);
    out.write_all(b"suffix").unwrap();
    let bytes = out.into_inner();
    assert_eq!(&bytes[..6], b"prefix");
    let a = ndarray::Array2::<u16>::from_npy_bytes(&bytes[6..]).unwrap();
    assert_eq!(a, ndarray::array![[1u16, 2], [3, 4]]);
}

#[test]
fn dropped_writer_leaves_no_file_and_keeps_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let mut w = NpyWriter::<f32>::create(&path, &[2], Order::C).unwrap();
    w.write(&ndarray::array![[1.0f32, 2.0]]).unwrap();
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    ndarray::array![9u8].write_npy(&path).unwrap();
    let mut w = NpyWriter::<f32>::create(&path, &[2], Order::C).unwrap();
    w.write(&ndarray::array![[1.0f32, 2.0]]).unwrap();
    assert_eq!(
        ndarray::Array1::<u8>::read_npy(&path).unwrap(),
        ndarray::array![9u8]
    );
    w.finish().unwrap();
    assert_eq!(
        ndarray::Array2::<f32>::read_npy(&path).unwrap(),
        ndarray::array![[1.0f32, 2.0]]
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn mismatched_blocks_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    ndarray::Array2::<f32>::zeros((2, 3))
        .write_npy(&path)
        .unwrap();
    let mut f = NpyFile::open_append(&path).unwrap();
    let err = f
        .append(&ndarray::Array2::<f64>::zeros((1, 3)))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Rows(ndnpy::error::RowsError::AppendMismatch { what: "dtype", .. })
        ),
        "{err}"
    );
    let err = f
        .append(&ndarray::Array2::<f32>::zeros((1, 4)))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Rows(ndnpy::error::RowsError::AppendMismatch { what: "shape", .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("(_, 3)"), "{err}");
    let err = f
        .append(&ndarray::Array3::<f32>::zeros((1, 1, 3)))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Rows(ndnpy::error::RowsError::AppendMismatch {
                what: "number of dimensions",
                ..
            })
        ),
        "{err}"
    );
    // Nothing was written.
    drop(f);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        ndarray::Array2::<f32>::zeros((2, 3))
            .to_npy_bytes()
            .unwrap()
    );

    let mut w = NpyWriter::<f32>::create(dir.path().join("b.npy"), &[3], Order::C).unwrap();
    let err = w.write(&ndarray::Array2::<f32>::zeros((2, 2))).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Rows(ndnpy::error::RowsError::AppendMismatch { what: "shape", .. })
        ),
        "{err}"
    );
}

#[test]
fn ranges_out_of_bounds_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    ndarray::Array2::<i32>::zeros((4, 3))
        .write_npy(&path)
        .unwrap();
    let f = NpyFile::open(&path).unwrap();
    for (a, b) in [(0, 5), (5, 5), (3, 2), (usize::MAX, usize::MAX)] {
        let err = f.read_range::<i32, Ix2>(a..b).unwrap_err();
        assert!(
            matches!(err, Error::Rows(ndnpy::error::RowsError::RangeOutOfBounds { start, end, len: 4 }) if start == a && end == b),
            "{err}"
        );
    }
    let err = f.read_range::<i32, Ix2>(..=usize::MAX).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Rows(ndnpy::error::RowsError::RangeOutOfBounds { .. })
        ),
        "{err}"
    );
    assert_eq!(f.read_range::<i32, Ix2>(2..).unwrap().shape(), &[2, 3]);
    assert_eq!(f.read_range::<i32, Ix2>(..).unwrap().shape(), &[4, 3]);
    let err = f.read_range::<i32, Ix1>(0..1).unwrap_err();
    assert!(matches!(err, Error::NdimMismatch { .. }), "{err}");
    let err = f.read_range::<f32, Ix2>(0..1).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }), "{err}");
}

#[test]
fn zero_dimensional_arrays_have_no_growth_axis() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    ndarray::arr0(5i32).write_npy(&path).unwrap();
    let f = NpyFile::open(&path).unwrap();
    assert_eq!(f.len(), 1);
    assert_eq!(f.read::<i32, ndarray::Ix0>().unwrap(), ndarray::arr0(5));
    assert!(matches!(
        f.read_range::<i32, IxDyn>(0..1),
        Err(Error::Rows(ndnpy::error::RowsError::NoGrowthAxis))
    ));
    assert!(matches!(
        NpyFile::open_append(&path),
        Err(Error::Rows(ndnpy::error::RowsError::NoGrowthAxis))
    ));
    assert!(matches!(
        NpyWriter::<i32, _>::new(Cursor::new(Vec::new()), &[], Order::Fortran)
            .and_then(|mut w| w.write(&ndarray::arr0(1))),
        Ok(())
    ));
}

#[test]
fn truncated_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let bytes = counting::<u32>(&[10, 4], 0, Order::C)
        .to_npy_bytes()
        .unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 20]).unwrap();
    let f = NpyFile::open(&path).unwrap();
    assert_eq!(f.len(), 10);
    // Rows wholly present read fine; the cut row does not.
    assert_eq!(f.read_range::<u32, Ix2>(0..8).unwrap().shape(), &[8, 4]);
    let err = f.read_range::<u32, Ix2>(8..9).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData {
                expected: 16,
                found: 12
            })
        ),
        "{err}"
    );
    assert!(matches!(
        f.read::<u32, Ix2>(),
        Err(Error::Data(ndnpy::error::DataError::TruncatedData { .. }))
    ));
    assert!(matches!(
        NpyFile::open_append(&path),
        Err(Error::Data(ndnpy::error::DataError::TruncatedData {
            expected: 160,
            found: 140
        }))
    ));
    // A cut header.
    std::fs::write(&path, &bytes[..40]).unwrap();
    assert!(matches!(
        NpyFile::open(&path),
        Err(Error::Header(
            ndnpy::error::HeaderError::TruncatedHeader { .. }
        ))
    ));
    let mut r = NpyReader::new(&bytes[..bytes.len() - 20]).unwrap();
    assert_eq!(
        r.read_rows::<u32, Ix2>(8).unwrap().unwrap().shape(),
        &[8, 4]
    );
    assert!(matches!(
        r.read_rows::<u32, Ix2>(8),
        Err(Error::Data(ndnpy::error::DataError::TruncatedData { .. }))
    ));
}

/// A header with no spare room, as some tools write it.
fn tight_file(path: &Path) {
    let bytes = common::npy_v1(
        "{'descr':'<i2','fortran_order':False,'shape':(2,3)}",
        &[1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0],
    );
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn headers_without_room_need_make_appendable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    tight_file(&path);
    let err = NpyFile::open_append(&path).unwrap_err();
    assert!(
        matches!(err, Error::Rows(ndnpy::error::RowsError::NoHeaderRoom { available: 62, needed }) if needed > 62),
        "{err}"
    );
    assert!(err.to_string().contains("make_appendable"));
    // Reading needs no room.
    let f = NpyFile::open(&path).unwrap();
    assert_eq!(
        f.read_range::<i16, Ix2>(1..2).unwrap(),
        ndarray::array![[4i16, 5, 6]]
    );
    drop(f);

    assert!(NpyFile::make_appendable(&path).unwrap());
    let want = ndarray::array![[1i16, 2, 3], [4, 5, 6]];
    assert_eq!(std::fs::read(&path).unwrap(), want.to_npy_bytes().unwrap());
    assert!(!NpyFile::make_appendable(&path).unwrap());
    NpyFile::open_append(&path)
        .unwrap()
        .append(&ndarray::array![7i16, 8, 9])
        .unwrap();
    let want = ndarray::array![[1i16, 2, 3], [4, 5, 6], [7, 8, 9]];
    assert_eq!(std::fs::read(&path).unwrap(), want.to_npy_bytes().unwrap());

    // A truncated file is not rewritten.
    let bytes = common::npy_v1(
        "{'descr':'<i2','fortran_order':False,'shape':(9,)}",
        &[0; 4],
    );
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(
        NpyFile::make_appendable(&path),
        Err(Error::Data(ndnpy::error::DataError::TruncatedData {
            expected: 18,
            found: 4
        }))
    ));
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn headers_with_extra_room_keep_their_length() {
    // A version 2.0 header padded to 256 bytes: appends rewrite it at that
    // length, so the data never moves.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let text = format!(
        "{:<243}",
        "{'descr': '<u1', 'fortran_order': False, 'shape': (2,), }"
    );
    let bytes = common::npy_v2(&text, &[1, 2]);
    assert_eq!(bytes.len(), 258);
    std::fs::write(&path, &bytes).unwrap();
    let mut f = NpyFile::open_append(&path).unwrap();
    assert_eq!(f.data_offset(), 256);
    f.append(&ndarray::array![3u8, 4, 5]).unwrap();
    drop(f);
    let f = NpyFile::open(&path).unwrap();
    assert_eq!(f.data_offset(), 256);
    assert_eq!(
        f.read::<u8, Ix1>().unwrap(),
        ndarray::array![1u8, 2, 3, 4, 5]
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 261);
}

#[test]
fn a_second_appender_is_refused_and_readers_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    ndarray::array![1.0f64].write_npy(&path).unwrap();
    let mut first = NpyFile::open_append(&path).unwrap();
    let err = NpyFile::open_append(&path).unwrap_err();
    assert!(
        matches!(&err, Error::Rows(ndnpy::error::RowsError::Locked { path: p }) if p == &path),
        "{err}"
    );
    assert!(matches!(
        NpyFile::make_appendable(&path),
        Err(Error::Rows(ndnpy::error::RowsError::Locked { .. }))
    ));
    first.append(&ndarray::array![2.0f64]).unwrap();
    let reader = NpyFile::open(&path).unwrap();
    assert_eq!(
        reader.read::<f64, Ix1>().unwrap(),
        ndarray::array![1.0, 2.0]
    );
    // A reader handle cannot append.
    let mut reader = reader;
    assert!(matches!(
        reader.append(&ndarray::array![0.0f64]),
        Err(Error::Io(_))
    ));
    first.append(&ndarray::array![3.0f64]).unwrap();
    assert_eq!(reader.len(), 2);
    reader.refresh().unwrap();
    assert_eq!(reader.len(), 3);
    drop(first);
    NpyFile::open_append(&path).unwrap();
}

#[test]
fn partial_tail_is_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    ndarray::array![[1u32, 2]].write_npy(&path).unwrap();
    // What a crash in the middle of writing rows leaves behind.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(&[0xAB; 13]).unwrap();
    drop(file);
    assert_eq!(
        ndarray::Array2::<u32>::read_npy(&path).unwrap(),
        ndarray::array![[1u32, 2]]
    );
    let mut f = NpyFile::open_append(&path).unwrap();
    f.set_durable(true);
    f.append(&ndarray::array![3u32, 4]).unwrap();
    f.sync().unwrap();
    drop(f);
    let want = ndarray::array![[1u32, 2], [3, 4]];
    assert_eq!(std::fs::read(&path).unwrap(), want.to_npy_bytes().unwrap());
}

const CHILD_ENV: &str = "NDNPY_GROW_KILL_CHILD";
const CHILD_ROW: usize = 1 << 17;
const PATTERN: u32 = 0xA5A5_5A5A;

/// `rows` rows of `CHILD_ROW` elements: the row's index, then a pattern.
/// Built by copying a template, so that the child spends its time writing.
fn numbered_rows(
    template: &ndarray::Array2<u32>,
    start: usize,
    rows: usize,
) -> ndarray::Array2<u32> {
    let mut block = template.slice(s![..rows, ..]).to_owned();
    for r in 0..rows {
        block[[r, 0]] = (start + r) as u32;
    }
    block
}

fn template() -> ndarray::Array2<u32> {
    let mut t = ndarray::Array2::zeros((7, CHILD_ROW));
    t.fill(PATTERN);
    t
}

/// In the child process of `killed_mid_append`: appends blocks of numbered
/// rows until killed, reporting each complete append.
#[test]
fn kill_child_appender() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let template = template();
    let mut f = NpyFile::open_append(&path).unwrap();
    let mut out = std::io::stdout();
    for step in 0.. {
        let block = numbered_rows(&template, f.len(), 1 + step % 7);
        f.append(&block).unwrap();
        writeln!(out, "appended {}", f.len()).unwrap();
        out.flush().unwrap();
    }
}

#[cfg(unix)]
#[test]
fn killed_mid_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let template = template();
    numbered_rows(&template, 0, 1).write_npy(&path).unwrap();
    // Kill rounds go on until one has landed inside an append (a partial
    // tail on disk), which about every third does.
    let mut tails = 0;
    for round in 0..20 {
        if round >= 4 && tails > 0 {
            break;
        }
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "kill_child_appender",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut last = 0;
        let mut reported = 0;
        while reported < 3 + (round % 4) * 2 {
            let line = lines.next().unwrap().unwrap();
            if let Some(n) = line.strip_prefix("appended ") {
                last = n.parse::<usize>().unwrap();
                reported += 1;
            }
        }
        // The child holds the append lock while it runs.
        assert!(matches!(
            NpyFile::open_append(&path),
            Err(Error::Rows(ndnpy::error::RowsError::Locked { .. }))
        ));
        // Land the kill at varying points of an append.
        std::thread::sleep(std::time::Duration::from_micros(700 * (round % 5) as u64));
        // SIGKILL, with no chance to clean up.
        child.kill().unwrap();
        child.wait().unwrap();

        let f = NpyFile::open(&path).unwrap();
        let rows = f.len();
        let tail = std::fs::metadata(&path).unwrap().len()
            - (f.data_offset() + rows as u64 * CHILD_ROW as u64 * 4);
        eprintln!("round {round}: {rows} rows, a partial tail of {tail} bytes");
        tails += usize::from(tail > 0);
        assert!(rows >= last, "{rows} rows after {last} were reported");
        let a = f.read::<u32, Ix2>().unwrap();
        for (i, row) in a.outer_iter().enumerate() {
            assert_eq!(row[0], i as u32);
            assert!(
                row.iter().skip(1).all(|&v| v == PATTERN),
                "row {i} of {rows}"
            );
        }
        // The next appender continues after the last complete append.
        let mut g = NpyFile::open_append(&path).unwrap();
        assert_eq!(g.len(), rows);
        let next = numbered_rows(&template, rows, 2);
        g.append(&next).unwrap();
        drop(g);
        let size = std::fs::metadata(&path).unwrap().len();
        let f = NpyFile::open(&path).unwrap();
        assert_eq!(
            size,
            f.data_offset() + (rows as u64 + 2) * CHILD_ROW as u64 * 4
        );
        assert_eq!(f.read_range::<u32, Ix2>(rows..rows + 2).unwrap(), next);
    }
    assert!(tails > 0, "no kill landed inside an append");
}

#[test]
fn reader_blocks_fortran_and_types() {
    let a = counting::<i16>(&[2, 3, 7], 0, Order::Fortran);
    let bytes = a.to_npy_bytes().unwrap();
    let mut r = NpyReader::new(&bytes[..]).unwrap();
    assert_eq!(r.rows_left(), 7);
    assert!(matches!(
        r.read_rows::<i32, Ix3>(1),
        Err(Error::DTypeMismatch { .. })
    ));
    assert!(matches!(
        r.read_rows::<i16, Ix2>(1),
        Err(Error::NdimMismatch { .. })
    ));
    let first = r.read_rows::<i16, Ix3>(5).unwrap().unwrap();
    assert_eq!(first, a.slice(s![.., .., 0..5]));
    assert!(first.t().is_standard_layout());
    assert_eq!(r.rows_left(), 2);
    let empty = r.read_rows::<i16, Ix3>(0).unwrap().unwrap();
    assert_eq!(empty.shape(), &[2, 3, 0]);
    assert_eq!(
        r.read_rows::<i16, Ix3>(5).unwrap().unwrap(),
        a.slice(s![.., .., 5..])
    );
    assert!(r.read_rows::<i16, Ix3>(5).unwrap().is_none());
    assert!(r.into_inner().is_empty());
}

mod model {
    //! Appends and range reads interleaved at random, against a `Vec` model.
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        /// Append this many rows, from a block in this layout (0: C,
        /// 1: Fortran, 2: stepped), or as a single row.
        Append(usize, u8),
        Read(usize, usize),
        Reopen,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0usize..6, 0u8..4).prop_map(|(n, l)| Op::Append(n, l)),
            (0usize..40, 0usize..40).prop_map(|(a, b)| Op::Read(a, b)),
            Just(Op::Reopen),
        ]
    }

    /// `open_append`, retried while the lock is held: the kill test in this
    /// binary forks children, and a child between `fork` and `exec` holds a
    /// copy of every descriptor, our just-dropped lock included.
    fn reopen_append(path: &std::path::Path) -> NpyFile {
        for _ in 0..500 {
            match NpyFile::open_append(path) {
                Err(Error::Rows(ndnpy::error::RowsError::Locked { .. })) => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                other => return other.unwrap(),
            }
        }
        panic!("{} stayed locked", path.display());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn appends_and_range_reads_match_a_model(
            fortran in any::<bool>(),
            initial in 2usize..5,
            ops in proptest::collection::vec(op(), 1..25),
        ) {
            const INNER: usize = 3;
            let axis = if fortran { 1 } else { 0 };
            let block = |start: usize, rows: usize, layout: u8| -> ArrayD<i32> {
                let c = Array::from_shape_fn((rows, INNER), |(r, c)| ((start + r) * INNER + c) as i32);
                let c = if fortran { c.reversed_axes() } else { c };
                match layout {
                    0 => c.into_dyn(),
                    1 => {
                        let mut f = Array::zeros(c.raw_dim().f());
                        f.assign(&c);
                        f.into_dyn()
                    }
                    _ => {
                        let mut twice = Array::zeros(c.raw_dim() * 2);
                        twice.slice_mut(s![..;2, ..;2]).assign(&c);
                        twice.slice(s![..;2, ..;2]).to_owned().into_dyn()
                    }
                }
            };
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("m.npy");
            let mut model = initial;
            let first = block(0, initial, if fortran { 1 } else { 0 });
            first.write_npy(&path).unwrap();
            let mut f = NpyFile::open_append(&path).unwrap();
            for op in ops {
                match op {
                    Op::Append(n, layout) => {
                        if layout == 3 {
                            let row = block(model, 1, 0);
                            let row = row.index_axis(Axis(axis), 0);
                            f.append(&row).unwrap();
                            model += 1;
                        } else {
                            f.append(&block(model, n, layout)).unwrap();
                            model += n;
                        }
                    }
                    Op::Read(a, b) => {
                        let got = f.read_range::<i32, Ix2>(a..b);
                        if a <= b && b <= model {
                            let got = got.unwrap();
                            prop_assert_eq!(got.into_dyn(), block(a, b - a, 0));
                        } else {
                            let is_range_error = matches!(got, Err(Error::Rows(ndnpy::error::RowsError::RangeOutOfBounds { .. })));
                            prop_assert!(is_range_error);
                        }
                    }
                    Op::Reopen => {
                        drop(f);
                        f = reopen_append(&path);
                    }
                }
                prop_assert_eq!(f.len(), model);
            }
            drop(f);
            let want = block(0, model, if fortran { 1 } else { 0 });
            prop_assert_eq!(std::fs::read(&path).unwrap(), want.to_npy_bytes().unwrap());
        }
    }
}

#[test]
fn writer_append_grows_only_at_finish() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let first = counting::<f32>(&[2, 3, 2], 0, Order::Fortran);
    first.write_npy(&path).unwrap();
    let before = std::fs::read(&path).unwrap();

    let mut w = NpyWriter::<f32>::append(&path).unwrap();
    assert_eq!(w.rows(), 2);
    assert!(matches!(
        NpyFile::open_append(&path),
        Err(Error::Rows(ndnpy::error::RowsError::Locked { .. }))
    ));
    let more = counting::<f32>(&[2, 3, 3], 12, Order::C);
    w.write(&more).unwrap();
    // Readers see the file as it was; dropping without `finish` keeps it so.
    assert_eq!(ArrayD::<f32>::read_npy(&path).unwrap(), first);
    drop(w);
    assert_eq!(ArrayD::<f32>::read_npy(&path).unwrap(), first);
    assert_eq!(NpyFile::open_append(&path).unwrap().len(), 2);
    assert_eq!(std::fs::read(&path).unwrap(), before);

    let mut w = NpyWriter::<f32>::append(&path).unwrap();
    w.write(&more).unwrap();
    w.write(&more.index_axis(Axis(2), 0)).unwrap();
    w.finish().unwrap();
    let want = ndarray::concatenate(
        Axis(2),
        &[
            first.view(),
            more.view(),
            more.slice(s![.., .., ..1]).into_dyn(),
        ],
    )
    .unwrap();
    let want = in_order(&want, Order::Fortran);
    assert_eq!(std::fs::read(&path).unwrap(), want.to_npy_bytes().unwrap());

    let err = NpyWriter::<f64>::append(&path).err().unwrap();
    assert!(
        matches!(
            err,
            Error::Rows(ndnpy::error::RowsError::AppendMismatch { what: "dtype", .. })
        ),
        "{err}"
    );
}

#[test]
fn object_arrays_are_not_cut_or_appended() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.npy");
    let values =
        ndarray::arr1(&[ndnpy::pickle::PyValue::None, ndnpy::pickle::PyValue::None]).into_dyn();
    let bytes = ndnpy::WriteNpy::to_npy_bytes(&values).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    for err in [
        NpyFile::open_append(&path).unwrap_err(),
        NpyFile::make_appendable(&path).unwrap_err(),
    ] {
        assert!(matches!(err, Error::UnsupportedDType { .. }), "{err}");
    }
    // The pickle, longer than 2 pointers, is left whole.
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn read_options_apply_to_every_read() {
    use ndnpy::ReadOptions;
    // A stream limit holds for each block of an NpyReader.
    let bytes = Array::from_elem((100, 10), 1.0f64).to_npy_bytes().unwrap();
    let small = ReadOptions::default().max_stream_len(1000);
    let mut r = NpyReader::new_with(Cursor::new(&bytes), &small).unwrap();
    assert!(r.read_rows::<f64, Ix2>(10).unwrap().is_some()); // 800 bytes
    let err = r.read_rows::<f64, Ix2>(20).unwrap_err(); // 1600 bytes
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::StreamLimit {
                claimed: 1600,
                max: 1000
            })
        ),
        "{err:?}"
    );

    // Refused object arrays stay refused through NpyFile.
    let path = "fixtures/pickle/strings_p4.npy";
    let all = NpyFile::open(path)
        .unwrap()
        .read::<String, IxDyn>()
        .unwrap();
    assert!(!all.is_empty());
    let strict = ReadOptions::default().allow_objects(false);
    let err = NpyFile::open_with(path, &strict)
        .unwrap()
        .read::<String, IxDyn>()
        .unwrap_err();
    assert!(
        matches!(err, Error::Limit(ndnpy::error::LimitError::ObjectsRefused)),
        "{err:?}"
    );
}

#[test]
fn object_arrays_read_whole_not_in_ranges() {
    let f = NpyFile::open("fixtures/pickle/strings_p4.npy").unwrap();
    let err = f.read_range::<String, IxDyn>(0..1).unwrap_err();
    assert!(matches!(err, Error::UnsupportedDType { .. }), "{err:?}");
    let err = f.read::<f64, IxDyn>().unwrap_err();
    assert!(matches!(err, Error::UnsupportedDType { .. }), "{err:?}");
}

/// Issue 37 item 6: a path write over a file an appender holds fails,
/// names the file and says an appender holds it, and leaves the file as it
/// was; the appender goes on, and its rows are in the file.
#[test]
fn a_path_write_over_an_appenders_file_fails_and_the_appender_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    ndarray::array![1.0f64, 2.0].write_npy(&path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let mut appender = NpyFile::open_append(&path).unwrap();
    let err = ndarray::array![9.0f64].write_npy(&path).unwrap_err();
    assert!(
        matches!(&err, Error::Rows(ndnpy::error::RowsError::Locked { path: p }) if p == &path),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()) && text.contains("appender"),
        "{text}"
    );
    let npz = ndnpy::NpzWriter::create(&path).and_then(|mut npz| {
        npz.add("x", &ndarray::array![9.0f64])?;
        npz.finish()
    });
    assert!(
        matches!(
            npz,
            Err(Error::Rows(ndnpy::error::RowsError::Locked { .. }))
        ),
        "{npz:?}"
    );
    let streamed = NpyWriter::<f64>::create(&path, &[], Order::C).and_then(|mut w| {
        w.write(&ndarray::array![9.0f64])?;
        w.finish().map(drop)
    });
    assert!(
        matches!(
            streamed,
            Err(Error::Rows(ndnpy::error::RowsError::Locked { .. }))
        ),
        "{streamed:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "the file as it was");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "nothing left beside it"
    );
    appender.append(&ndarray::array![3.0f64]).unwrap();
    drop(appender);
    assert_eq!(
        ndarray::Array1::<f64>::read_npy(&path).unwrap(),
        ndarray::array![1.0, 2.0, 3.0]
    );
    // Once the appender is gone, the path write goes through.
    ndarray::array![9.0f64].write_npy(&path).unwrap();
    assert_eq!(
        ndarray::Array1::<f64>::read_npy(&path).unwrap(),
        ndarray::array![9.0]
    );
}

/// The second guard: an appender whose path no longer names its file
/// (something else renamed a file over it, or removed it) refuses to
/// append, instead of appending rows nobody will see.
#[test]
fn an_appender_whose_file_was_replaced_refuses_to_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let other = dir.path().join("b.npy");
    ndarray::array![1.0f64, 2.0].write_npy(&path).unwrap();
    ndarray::array![7.0f64].write_npy(&other).unwrap();
    let mut appender = NpyFile::open_append(&path).unwrap();
    std::fs::rename(&other, &path).unwrap();
    let err = appender.append(&ndarray::array![3.0f64]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()) && text.contains("no longer"),
        "{text}"
    );
    assert_eq!(
        ndarray::Array1::<f64>::read_npy(&path).unwrap(),
        ndarray::array![7.0]
    );
    // Removed: the same.
    let mut appender = NpyFile::open_append(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(appender.append(&ndarray::array![3.0f64]).is_err());
}

/// While a path write is under way, an appender cannot take the file it
/// will replace (it would be stranded by the rename); once the write is
/// done, the appender opens the new file.
#[test]
fn an_appender_cannot_start_during_a_path_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    ndarray::array![1.0f64].write_npy(&path).unwrap();
    let mut writer = NpyWriter::<f64>::create(&path, &[], Order::C).unwrap();
    writer.write(&ndarray::array![5.0f64, 6.0]).unwrap();
    assert!(matches!(
        NpyFile::open_append(&path),
        Err(Error::Rows(ndnpy::error::RowsError::Locked { .. }))
    ));
    writer.finish().unwrap();
    let mut appender = NpyFile::open_append(&path).unwrap();
    appender.append(&ndarray::array![7.0f64]).unwrap();
    drop(appender);
    assert_eq!(
        ndarray::Array1::<f64>::read_npy(&path).unwrap(),
        ndarray::array![5.0, 6.0, 7.0]
    );
}

/// Files on disk: an appender opened through a symbolic link appends to
/// the file the link names; a path write through the link, the file's own
/// name or another hard link of it fails while the appender holds it
/// (a hard-linked file is written in place: locked before it is
/// truncated).
#[cfg(unix)]
#[test]
fn appends_through_links_and_writes_over_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let link = dir.path().join("l.npy");
    ndarray::array![1.0f64].write_npy(&path).unwrap();
    std::os::unix::fs::symlink("a.npy", &link).unwrap();
    let mut appender = NpyFile::open_append(&link).unwrap();
    appender.append(&ndarray::array![2.0f64]).unwrap();
    for p in [&path, &link] {
        let err = ndarray::array![9.0f64].write_npy(p).unwrap_err();
        assert!(
            matches!(err, Error::Rows(ndnpy::error::RowsError::Locked { .. })),
            "{err:?}"
        );
    }
    let hard = dir.path().join("h.npy");
    std::fs::hard_link(&path, &hard).unwrap();
    let err = ndarray::array![9.0f64].write_npy(&hard).unwrap_err();
    assert!(
        matches!(err, Error::Rows(ndnpy::error::RowsError::Locked { .. })),
        "{err:?}"
    );
    appender.append(&ndarray::array![3.0f64]).unwrap();
    drop(appender);
    for p in [&path, &link, &hard] {
        assert_eq!(
            ndarray::Array1::<f64>::read_npy(p).unwrap(),
            ndarray::array![1.0, 2.0, 3.0]
        );
    }
}
