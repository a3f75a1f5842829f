//! One style for the whole API:
//!
//! - every value that can be written (`AnyArray`, `RecordArray`,
//!   `StringArray`, `BytesArray`, typed arrays) has `write_npy`,
//!   `write_npy_with`, `write_npy_to` and `to_npy_bytes`, as its own
//!   methods and through `WriteNpy`, and they agree byte for byte;
//! - readers take options as `*_with(…, &ReadOptions)`;
//! - the folded duplicates (`add_object`, `pickle::read_str_npy`,
//!   `write_object_npy`, `with_options`, ...) still compile as deprecated
//!   aliases and do what their replacements do.

use ndarray::{array, Array1, ArrayD, Ix1};
use ndnpy::{
    AnyArray, BytesArray, NpyFile, NpyWriter, NpzReader, NpzWriter, Order, PyValue, ReadNpy,
    ReadOptions, RecordArray, StringArray, WriteNpy, WriteOptions,
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
    let dates = ndarray::array![ndnpy::Datetime64::<ndnpy::unit::D>::new(19_000)];
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
#[allow(deprecated)]
fn deprecated_aliases_do_what_their_replacements_do() {
    let dir = tempfile::tempdir().unwrap();
    let names = array![PyValue::Str("ab".into()), PyValue::Str("c".into())];
    let strings = array!["ab".to_owned(), "c".to_owned()];

    // pickle::to_object_npy_bytes / write_object_npy(_to) = WriteNpy.
    let bytes = names.to_npy_bytes().unwrap();
    assert_eq!(ndnpy::pickle::to_object_npy_bytes(&names).unwrap(), bytes);
    let mut to = Vec::new();
    ndnpy::pickle::write_object_npy_to(&names, &mut to).unwrap();
    assert_eq!(to, bytes);
    let path = dir.path().join("o.npy");
    ndnpy::pickle::write_object_npy(&names, &path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);

    // pickle::read_str_npy / read_optional_str_npy = ReadNpy.
    let a = ndnpy::pickle::read_str_npy::<Ix1, _>(&path).unwrap();
    assert_eq!(a, Array1::<String>::read_npy(&path).unwrap());
    assert_eq!(a, strings);
    let o = ndnpy::pickle::read_optional_str_npy::<Ix1, _>(&path).unwrap();
    assert_eq!(o, Array1::<Option<String>>::read_npy(&path).unwrap());

    // add_object = add.
    let mut w1 = NpzWriter::new(Cursor::new(Vec::new()));
    w1.add_object("n", &names).unwrap();
    let mut w2 = NpzWriter::new(Cursor::new(Vec::new()));
    w2.add("n", &names).unwrap();
    let archive = w1.finish_into_inner().unwrap().into_inner();
    assert_eq!(archive, w2.finish_into_inner().unwrap().into_inner());

    // with_options = new_with / open_with.
    let tiny = ReadOptions::default().max_header_len(8);
    let mut old = NpzReader::new(Cursor::new(archive.clone()))
        .unwrap()
        .with_options(tiny);
    let mut new = NpzReader::new_with(Cursor::new(archive.clone()), &tiny).unwrap();
    assert_eq!(
        old.header("n").unwrap_err().to_string(),
        new.header("n").unwrap_err().to_string()
    );
    let npz = dir.path().join("a.npz");
    std::fs::write(&npz, &archive).unwrap();
    // SAFETY: nothing else changes the archive during the test.
    let map = unsafe { ndnpy::NpzMmap::open(&npz).unwrap() }.with_options(tiny);
    assert!(map.header("n").is_err());
    // SAFETY: as above.
    let map = unsafe { ndnpy::NpzMmap::open_with(&npz, &tiny).unwrap() };
    assert!(map.header("n").is_err());

    // MmapNpy = NpyMmap.
    // SAFETY: as above.
    let m = unsafe { ndnpy::MmapNpy::open(&path).unwrap() };
    assert_eq!(m.header().shape, [2]);
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
