//! ndarray 0.17's idiom: functions that read an array take `&ArrayRef`,
//! functions that fill one take `&mut ArrayRef`, and shared arrays are
//! `ArcArray`s. Each entry point that reads or fills a caller's array
//! accepts them, and every `ArrayBase` still reaches it by deref.

use ndarray::{array, ArcArray2, Array1, Array2, ArrayD, ArrayRef, CowArray, Ix1, Ix2, IxDyn};
use ndnpy::{npy::ReadNpyInto, NpyFile, NpyWriter, NpzReader, NpzWriter, Order, ReadNpy, WriteNpy};
use std::io::Cursor;
use std::path::Path;

/// The example, as ndarray's docs tell library authors to write it.
fn save(a: &ArrayRef<f64, Ix2>, path: &Path) -> ndnpy::Result<()> {
    a.write_npy(path)
}

fn add_to(npz: &mut NpzWriter<Cursor<Vec<u8>>>, name: &str, a: &ArrayRef<f64, Ix2>) {
    npz.add(name, a).unwrap();
}

/// Generic code over anything writable, `ArrayRef` (unsized) included.
fn bytes_of<X: WriteNpy + ?Sized>(x: &X) -> Vec<u8> {
    x.to_npy_bytes().unwrap()
}

#[test]
fn a_function_taking_array_ref_writes_every_kind_of_array() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let a = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let shared: ArcArray2<f64> = a.to_shared();
    let cow = CowArray::from(a.view());
    for (what, r) in [
        ("owned", &*a),
        ("view", &*a.view()),
        ("transposed", &*a.t()),
        ("shared", &*shared),
        ("cow", &*cow),
    ] {
        save(r, &path).unwrap();
        let back = Array2::<f64>::read_npy(&path).unwrap();
        assert_eq!(back, r, "{what}");
        // Byte-identical to the ArrayBase path (fortran_order included).
        assert_eq!(
            std::fs::read(&path).unwrap(),
            r.view().to_npy_bytes().unwrap()
        );
        assert_eq!(bytes_of(r), bytes_of(&r.view()));
        let mut to = Vec::new();
        r.write_npy_to(&mut to).unwrap();
        assert_eq!(to, bytes_of(r));
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        a.to_npy_bytes().unwrap(),
        "the last write was of the same values in C order"
    );
}

#[test]
fn archives_and_growth_writers_take_array_refs() {
    let a = array![[1.0, 2.0], [3.0, 4.0]];
    let mut npz = NpzWriter::new(Cursor::new(Vec::new()));
    add_to(&mut npz, "a", &a);
    add_to(&mut npz, "t", &a.t());
    npz.add("shared", &a.to_shared()).unwrap();
    let mut m = npz.add_streaming::<f64>("rows", &[2], Order::C).unwrap();
    let block: &ArrayRef<f64, Ix2> = &a;
    m.write(block).unwrap();
    m.finish().unwrap();
    let mut back = NpzReader::new(npz.finish_into_inner().unwrap()).unwrap();
    assert_eq!(back.read::<f64, Ix2>("t").unwrap(), a.t());
    assert_eq!(back.read::<f64, Ix2>("shared").unwrap(), a);
    assert_eq!(back.read::<f64, Ix2>("rows").unwrap(), a);

    let mut w = NpyWriter::<f64, _>::new(Cursor::new(Vec::new()), &[2], Order::C).unwrap();
    w.write(block).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    assert_eq!(bytes, a.to_npy_bytes().unwrap());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.npy");
    a.write_npy(&path).unwrap();
    let mut f = NpyFile::open_append(&path).unwrap();
    f.append(block).unwrap();
    drop(f);
    assert_eq!(Array2::<f64>::read_npy(&path).unwrap().dim(), (4, 2));
}

#[test]
fn arc_arrays_are_read_without_a_copy_of_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let a = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as u32);
    a.write_npy(&path).unwrap();
    let bytes = a.to_npy_bytes().unwrap();
    let from_path = ArcArray2::<u32>::read_npy(&path).unwrap();
    let from_reader = ArcArray2::<u32>::read_npy_from(&bytes[..]).unwrap();
    let from_bytes = ndarray::ArcArray::<u32, IxDyn>::from_npy_bytes(&bytes).unwrap();
    assert_eq!(from_path, a);
    assert_eq!(from_reader, a);
    assert_eq!(from_bytes, a.clone().into_dyn());
    // Shared, not copied, between clones.
    let other = from_path.clone();
    assert_eq!(other.as_ptr(), from_path.as_ptr());
}

#[test]
fn reads_into_take_any_mutable_array() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let a = array![1i16, 2, 3];
    a.write_npy(&path).unwrap();
    let bytes = a.to_npy_bytes().unwrap();

    let mut owned = Array1::<i16>::zeros(3);
    owned.fill_from_npy(&path).unwrap();
    assert_eq!(owned, a);

    let mut batch = Array2::<i16>::zeros((2, 3));
    batch.row_mut(1).fill_from_npy_reader(&bytes[..]).unwrap();
    assert_eq!(batch.row(1), a);

    let mut dynamic = ArrayD::<i16>::zeros(vec![3]);
    dynamic.fill_from_npy_bytes(&bytes).unwrap();
    assert_eq!(dynamic, a.clone().into_dyn());

    let file = NpyFile::open(&path).unwrap();
    let mut two = Array1::<i16>::zeros(2);
    file.read_range_into(1..3, &mut two).unwrap();
    assert_eq!(two, array![2, 3]);
    let _: Array1<i16> = file.read_range::<i16, Ix1>(..).unwrap();
}
