//! One style for the whole API:
//!
//! - every value that can be written (`AnyArray`, `RecordArray`,
//!   `StringArray`, `BytesArray`, typed arrays) has `write_npy`,
//!   `write_npy_with`, `write_npy_to` and `to_npy_bytes`, as its own
//!   methods and through `WriteNpy`, and they agree byte for byte;
//! - readers take options as `*_with(…, &ReadOptions)`.

use ndarray::{array, Array1, ArrayD};
use ndnpy::{
    pickle::PyValue, types::BytesArray, types::RecordArray, types::StringArray, AnyArray, NpyFile,
    NpyWriter, Order, ReadNpy, ReadOptions, WriteNpy, WriteOptions,
};
use std::io::Cursor;
use std::path::Path;

ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Particle { pos: [f32; 2], id: i64 }
}

/// Writes `value` through the four entry points (methods of the trait)
/// and checks that they agree, and that the file reads back as `T`.
fn check_entry_points<X, T>(value: &X, dir: &Path) -> T
where
    X: WriteNpy + ?Sized,
    T: ReadNpy,
{
    let bytes = value.to_npy_bytes().unwrap();
    let mut to = Vec::new();
    value.write_npy_to(&mut to).unwrap();
    assert_eq!(to, bytes);
    let path = dir.join("x.npy");
    value.write_npy(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let durable = WriteOptions::default().durable(true);
    value.write_npy_with(&path, &durable).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let options = ReadOptions::default();
    let a = T::read_npy_with(&path, &options).unwrap();
    let _ = T::read_npy_from_with(&bytes[..], &options).unwrap();
    let _ = T::from_npy_bytes_with(&bytes, &options).unwrap();
    a
}

#[test]
fn run_time_typed_values_have_the_write_entry_points_of_typed_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let typed = array![[1.5f64, 2.5], [3.5, 4.5]];
    let particles = array![
        Particle {
            pos: [1.0, 2.0],
            id: 7
        },
        Particle {
            pos: [3.0, 4.0],
            id: 8
        }
    ];
    let objects = array![PyValue::Str("a".into()), PyValue::None, PyValue::Int(3)];
    let dates = ndarray::array![ndnpy::types::Datetime64::<ndnpy::types::unit::D>::new(
        19_000
    )];
    let anys = [
        AnyArray::from_npy_bytes(&typed.to_npy_bytes().unwrap()).unwrap(),
        AnyArray::from_npy_bytes(&typed.t().to_npy_bytes().unwrap()).unwrap(),
        AnyArray::from_npy_bytes(&particles.to_npy_bytes().unwrap()).unwrap(),
        AnyArray::from_npy_bytes(&objects.to_npy_bytes().unwrap()).unwrap(),
        AnyArray::from_npy_bytes(&dates.to_npy_bytes().unwrap()).unwrap(),
        AnyArray::Str(array!["x".to_owned(), "yz".to_owned()].into_dyn()),
    ];
    for any in &anys {
        let back: AnyArray = check_entry_points(any, dir.path());
        assert_eq!(&back, any);
        // The methods without the trait give the same bytes.
        let mut to = Vec::new();
        AnyArray::write_npy_to(any, &mut to).unwrap();
        assert_eq!(to, AnyArray::to_npy_bytes(any).unwrap());
    }
    // Typed and run-time typed writes of the same array are the same bytes.
    assert_eq!(
        anys[0].to_npy_bytes().unwrap(),
        typed.to_npy_bytes().unwrap()
    );
    assert_eq!(
        anys[2].to_npy_bytes().unwrap(),
        particles.to_npy_bytes().unwrap()
    );

    let AnyArray::Record(records) = &anys[2] else {
        panic!("records")
    };
    let back: AnyArray = check_entry_points::<RecordArray, AnyArray>(records, dir.path());
    assert_eq!(&back, &anys[2]);
    let path = dir.path().join("r.npy");
    records.write_npy(&path).unwrap();
    assert_eq!(Array1::<Particle>::read_npy(&path).unwrap(), particles);
}

#[test]
fn compact_strings_have_every_entry_point_with_options() {
    let dir = tempfile::tempdir().unwrap();
    let s = StringArray::from_strs(&[3], ["ab", "", "cde"]).unwrap();
    let back: StringArray = check_entry_points(&s, dir.path());
    assert_eq!(back.to_array(), s.to_array());
    let b = BytesArray::from_bytes(&[2], [&b"x"[..], b"yz"]).unwrap();
    let back: BytesArray = check_entry_points(&b, dir.path());
    assert_eq!(back.to_array(), b.to_array());

    // The options apply: a tiny header limit refuses every source.
    let bytes = s.to_npy_bytes().unwrap();
    let tiny = ReadOptions::default().max_header_len(8);
    assert!(StringArray::from_npy_bytes_with(&bytes, &tiny).is_err());
    assert!(StringArray::read_npy_from_with(&bytes[..], &tiny).is_err());
    let path = dir.path().join("s.npy");
    s.write_npy_with(&path, &WriteOptions::default()).unwrap();
    assert!(StringArray::read_npy_with(&path, &tiny).is_err());
    assert_eq!(
        StringArray::read_npy(&path).unwrap().to_array(),
        ArrayD::from_shape_vec(vec![3], vec!["ab".to_owned(), "".into(), "cde".into()]).unwrap()
    );
}

#[test]
fn growth_entry_points_take_options() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.npy");
    array![1u32, 2].write_npy(&path).unwrap();
    let tiny = ReadOptions::default().max_header_len(8);
    assert!(NpyFile::open_append_with(&path, &tiny).is_err());
    assert!(NpyWriter::<u32>::append_with(&path, &tiny).is_err());
    assert!(NpyFile::make_appendable_with(&path, &tiny).is_err());
    let options = ReadOptions::default().max_header_len(1 << 20);
    let mut w = NpyWriter::<u32>::append_with(&path, &options).unwrap();
    w.write(&array![3u32]).unwrap();
    w.finish().unwrap();
    assert!(!NpyFile::make_appendable_with(&path, &options).unwrap());
    let mut f = NpyFile::open_append_with(&path, &options).unwrap();
    f.append(&array![4u32]).unwrap();
    assert_eq!(Array1::<u32>::read_npy(&path).unwrap(), array![1, 2, 3, 4]);
}

#[test]
fn typed_write_entry_points_to_a_writer_and_streaming_options() {
    let mut w = NpyWriter::<i8, _>::new(Cursor::new(Vec::new()), &[], Order::C).unwrap();
    w.write(&array![1i8, 2]).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let options = ReadOptions::default().max_stream_len(1);
    assert!(Array1::<i8>::read_npy_from_with(&bytes[..], &options).is_err());
    assert_eq!(Array1::<i8>::from_npy_bytes(&bytes).unwrap(), array![1, 2]);
}
