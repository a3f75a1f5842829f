//! The `.npz` mapping: npz → Frame → Parquet → Frame → npz gives the same arrays.

use ndarray::{arr0, array};
use ndnpy::{AnyArray, NpzReader, NpzWriter};
use ndnpy_parquet::convert::{from_arrays, read_npz, to_arrays, write_npz, NpArray};
use ndnpy_parquet::{Frame, Index, Values};

fn members(path: &std::path::Path) -> Vec<(String, AnyArray)> {
    let mut r = NpzReader::open(path).unwrap();
    r.names()
        .into_iter()
        .map(|n| {
            let a = r.read_any(&n).unwrap();
            (n, a)
        })
        .collect()
}

#[test]
fn npz_parquet_npz_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("in.npz");
    let mut w = NpzWriter::create(&npz).unwrap();
    w.add("x", &array![1.5f64, f64::NAN, 3.0]).unwrap();
    w.add("n", &array![1i64, 0, 3]).unwrap();
    w.add("n.valid", &array![true, false, true]).unwrap();
    w.add("flag", &array![true, false, true]).unwrap();
    w.add("__index__.id", &array![7u32, 8, 9]).unwrap();
    w.add("__index__.__level_1__", &array![0.5f32, 1.5, 2.5])
        .unwrap();
    w.finish().unwrap();

    let frame = read_npz(&npz).unwrap();
    assert_eq!(frame.len(), 3);
    assert_eq!(frame.columns().len(), 3);
    let Index::Columns(levels) = frame.index() else {
        panic!("expected levels")
    };
    assert_eq!((levels[0].name(), levels[1].name()), (Some("id"), None));
    assert!(!frame.column("n").unwrap().is_valid(1));

    let pq = dir.path().join("mid.parquet");
    frame.write(&pq).unwrap();
    let back = Frame::read(&pq).unwrap();
    let out = dir.path().join("out.npz");
    write_npz(&back, &out).unwrap();
    let (a, b) = (members(&npz), members(&out));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

#[test]
fn range_index_and_strings_map_to_named_members() {
    let f = Frame::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/parquet/valid/range_index.parquet"
    ))
    .unwrap();
    let arrays = to_arrays(&f).unwrap();
    assert_eq!(arrays[1].0, "__range_index__.r");
    assert_eq!(
        arrays[1].1,
        NpArray::Any(AnyArray::I64(array![10i64, 20, 2].into_dyn()))
    );
    let f = Frame::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/parquet/valid/strings.parquet"
    ))
    .unwrap();
    let arrays = to_arrays(&f).unwrap();
    let names: Vec<&str> = arrays.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["s", "s.valid", "so", "so.valid", "by", "by.valid"]);
    // Until ndnpy writes strings, such a frame cannot become an .npz.
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        write_npz(&f, dir.path().join("s.npz")),
        Err(ndnpy_parquet::Error::Unsupported { .. })
    ));
}

#[test]
fn categoricals_are_codes_and_categories() {
    let arrays = vec![
        (
            "grade.codes".to_owned(),
            NpArray::Any(AnyArray::I8(array![2i8, -1, 0].into_dyn())),
        ),
        (
            "grade.categories".to_owned(),
            NpArray::Str(vec!["a".into(), "b".into(), "c".into()]),
        ),
        (
            "grade.ordered".to_owned(),
            NpArray::Any(AnyArray::Bool(arr0(true).into_dyn())),
        ),
    ];
    let frame = from_arrays(arrays.clone()).unwrap();
    let Values::Categorical(c) = frame.column("grade").unwrap().values() else {
        panic!()
    };
    assert!(c.ordered);
    assert_eq!(c.codes_i64().unwrap(), [2, -1, 0]);
    assert_eq!(to_arrays(&frame).unwrap(), arrays);
    // Codes out of range are refused.
    let bad = vec![
        (
            "g.codes".to_owned(),
            NpArray::Any(AnyArray::I8(array![3i8].into_dyn())),
        ),
        ("g.categories".to_owned(), NpArray::Str(vec!["a".into()])),
    ];
    assert!(matches!(
        from_arrays(bad),
        Err(ndnpy_parquet::Error::Invalid(_))
    ));
}
