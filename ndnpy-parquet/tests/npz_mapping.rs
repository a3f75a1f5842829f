//! The `.npz` mapping: npz → Frame → Parquet → Frame → npz gives the same
//! arrays, strings, bytes, datetimes and timedeltas included.

use ndarray::{arr0, array, ArrayD};
use ndnpy::{AnyArray, NpzReader, NpzWriter};
use ndnpy_parquet::convert::{from_arrays, read_npz, to_arrays, write_npz};
use ndnpy_parquet::{Error, Frame, Index, Values, NAT};
use std::path::Path;

fn members(path: &Path) -> Vec<(String, String, AnyArray)> {
    let mut r = NpzReader::open(path).unwrap();
    r.names()
        .into_iter()
        .map(|n| {
            let a = r.read_any(&n).unwrap();
            (n, a.dtype().to_string(), a)
        })
        .collect()
}

fn fixture(name: &str) -> Frame {
    Frame::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../fixtures/parquet/valid/{name}.parquet")),
    )
    .unwrap()
}

fn strings(v: &[&str]) -> ArrayD<String> {
    v.iter()
        .map(|s| s.to_string())
        .collect::<ndarray::Array1<_>>()
        .into_dyn()
}

fn dt(v: ndarray::Array1<i64>, unit: &str) -> AnyArray {
    AnyArray::Datetime64 {
        array: v.into_dyn(),
        unit: Some(unit.into()),
    }
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
    w.add_any("s", &AnyArray::Str(strings(&["a", "", "çé€𝄞"])))
        .unwrap();
    w.add("s.valid", &array![true, false, true]).unwrap();
    let by = array![b"\x00a".to_vec(), b"xy".to_vec(), Vec::new()].into_dyn();
    w.add_any("by", &AnyArray::Bytes(by)).unwrap();
    w.add_any("t", &dt(array![0, NAT, 1_700_000_000_000_000_000], "ns"))
        .unwrap();
    w.add_any("tz", &dt(array![-5, 0, 7], "ms")).unwrap();
    w.add_any(
        "tz.tz",
        &AnyArray::Str(
            strings(&["America/New_York"])
                .into_shape_with_order(ndarray::IxDyn(&[]))
                .unwrap(),
        ),
    )
    .unwrap();
    let td = AnyArray::Timedelta64 {
        array: array![1i64, NAT, -5].into_dyn(),
        unit: Some("s".into()),
    };
    w.add_any("td", &td).unwrap();
    // Categories out of order of appearance, one unused.
    w.add("grade.codes", &array![2i8, -1, 0]).unwrap();
    w.add_any(
        "grade.categories",
        &AnyArray::Str(strings(&["lo", "mid", "hi"])),
    )
    .unwrap();
    w.add("__index__.id", &array![7u32, 8, 9]).unwrap();
    w.add("__index__.__level_1__", &array![0.5f32, 1.5, 2.5])
        .unwrap();
    w.finish().unwrap();

    let frame = read_npz(&npz).unwrap();
    assert_eq!(frame.len(), 3);
    assert_eq!(frame.columns().len(), 9);
    let Index::Columns(levels) = frame.index() else {
        panic!("expected levels")
    };
    assert_eq!((levels[0].name(), levels[1].name()), (Some("id"), None));
    assert!(!frame.column("n").unwrap().is_valid(1));
    assert!(!frame.column("s").unwrap().is_valid(1));
    assert_eq!(
        frame.column("tz").unwrap().timezone(),
        Some("America/New_York")
    );
    assert_eq!(frame.column("tz").unwrap().pandas_type(), "datetimetz");
    assert_eq!(frame.column("td").unwrap().numpy_type(), "timedelta64[s]");
    assert!(matches!(
        frame.column("grade").unwrap().values(),
        Values::Categorical(_)
    ));

    let pq = dir.path().join("mid.parquet");
    frame.write(&pq).unwrap();
    let back = Frame::read(&pq).unwrap();
    let out = dir.path().join("out.npz");
    write_npz(&back, &out).unwrap();
    let (a, b) = (members(&npz), members(&out));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let dtypes: Vec<&str> = b.iter().map(|(_, d, _)| d.as_str()).collect();
    assert_eq!(
        dtypes,
        [
            "<f8", "<i8", "|b1", "|b1", "<U4", "|b1", "|S2", "<M8[ns]", "<M8[ms]", "<U16",
            "<m8[s]", "|i1", "<U3", "<u4", "<f4"
        ]
    );
}

#[test]
fn string_and_datetime_fixtures_become_npz_and_back() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "strings",
        "datetimes",
        "nullable",
        "row_groups",
        "multiindex",
    ] {
        let f = fixture(name);
        let npz = dir.path().join(format!("{name}.npz"));
        write_npz(&f, &npz).unwrap();
        let back = read_npz(&npz).unwrap();
        let parts = |f: &Frame| {
            f.columns()
                .iter()
                .chain(f.index().levels())
                .map(|c| {
                    format!(
                        "{:?} {:?} {:?} {:?}",
                        c.name(),
                        c.values(),
                        c.validity(),
                        c.timezone()
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(parts(&back), parts(&f), "{name}");
    }
    let m = members(&dir.path().join("datetimes.npz"));
    let got: Vec<(&str, &str)> = m.iter().map(|(n, d, _)| (n.as_str(), d.as_str())).collect();
    assert_eq!(
        got,
        [
            ("naive_us", "<M8[us]"),
            ("naive_ns", "<M8[ns]"),
            ("ny", "<M8[us]"),
            ("ny.tz", "<U16"),
            ("utc", "<M8[us]"),
            ("utc.tz", "<U3"),
            ("td", "<m8[us]"),
            ("td_ns", "<m8[ns]"),
        ]
    );
}

#[test]
fn range_index_and_strings_map_to_named_members() {
    let arrays = to_arrays(&fixture("range_index")).unwrap();
    assert_eq!(arrays[1].0, "__range_index__.r");
    assert_eq!(arrays[1].1, AnyArray::I64(array![10i64, 20, 2].into_dyn()));
    let arrays = to_arrays(&fixture("strings")).unwrap();
    let names: Vec<&str> = arrays.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["s", "s.valid", "so", "so.valid", "by", "by.valid"]);
    assert!(matches!(arrays[0].1, AnyArray::Str(_)));
    assert!(matches!(arrays[4].1, AnyArray::Bytes(_)));
}

#[test]
fn categoricals_are_codes_and_categories() {
    let arrays = vec![
        (
            "grade.codes".to_owned(),
            AnyArray::I8(array![2i8, -1, 0].into_dyn()),
        ),
        (
            "grade.categories".to_owned(),
            AnyArray::Str(strings(&["a", "b", "c"])),
        ),
        (
            "grade.ordered".to_owned(),
            AnyArray::Bool(arr0(true).into_dyn()),
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
        ("g.codes".to_owned(), AnyArray::I8(array![3i8].into_dyn())),
        ("g.categories".to_owned(), AnyArray::Str(strings(&["a"]))),
    ];
    assert!(matches!(from_arrays(bad), Err(Error::Invalid(_))));
}

#[test]
fn bad_companions_are_refused() {
    let t = ("t".to_owned(), dt(array![0, 1], "s"));
    // A zone on something that is not a datetime.
    let x = ("x".to_owned(), AnyArray::I64(array![0i64, 1].into_dyn()));
    let zone = |n: &str| {
        (
            format!("{n}.tz"),
            AnyArray::Str(arr0("UTC".to_owned()).into_dyn()),
        )
    };
    assert!(matches!(
        from_arrays(vec![x.clone(), zone("x")]),
        Err(Error::Invalid(_))
    ));
    // A zone that is not one string.
    let two = ("t.tz".to_owned(), AnyArray::Str(strings(&["UTC", "UTC"])));
    assert!(matches!(
        from_arrays(vec![t.clone(), two]),
        Err(Error::Invalid(_))
    ));
    // A 2-D member is not a column.
    let m = (
        "m".to_owned(),
        AnyArray::F64(ndarray::Array2::<f64>::zeros((2, 2)).into_dyn()),
    );
    assert!(matches!(from_arrays(vec![m]), Err(Error::Invalid(_))));
    assert!(from_arrays(vec![t, zone("t")]).is_ok());
}

#[test]
fn numpy_units_without_a_parquet_unit() {
    // Days are written in milliseconds (pandas reads datetime64[ms]), as
    // pyarrow writes datetime64[s]...
    let f = from_arrays(vec![("d".to_owned(), dt(array![0, 1, NAT], "D"))]).unwrap();
    let back = Frame::from_bytes(
        &f.to_bytes(&Default::default()).unwrap(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(
        back.column("d").unwrap().values(),
        &Values::Array(dt(array![0, 86_400_000, NAT], "ms"))
    );
    // ...and timedelta days in seconds.
    let td = AnyArray::Timedelta64 {
        array: array![2i64, NAT].into_dyn(),
        unit: Some("D".into()),
    };
    let f = from_arrays(vec![("d".to_owned(), td)]).unwrap();
    let back = Frame::from_bytes(
        &f.to_bytes(&Default::default()).unwrap(),
        &Default::default(),
    )
    .unwrap();
    let want = AnyArray::Timedelta64 {
        array: array![172_800i64, NAT].into_dyn(),
        unit: Some("s".into()),
    };
    assert_eq!(back.column("d").unwrap().values(), &Values::Array(want));
    // ...with a multiplier too; a value that would overflow is refused.
    let f = from_arrays(vec![("d".to_owned(), dt(array![3], "10ms"))]).unwrap();
    let back = Frame::from_bytes(
        &f.to_bytes(&Default::default()).unwrap(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(
        back.column("d").unwrap().values(),
        &Values::Array(dt(array![30], "ms"))
    );
    let f = from_arrays(vec![("d".to_owned(), dt(array![i64::MAX / 2], "D"))]).unwrap();
    assert!(matches!(
        f.to_bytes(&Default::default()),
        Err(Error::Unsupported { column, .. }) if column == "d"
    ));
    // Years, months and generic datetimes have no fixed length in seconds.
    for unit in ["Y", "M", "ps"] {
        let f = from_arrays(vec![("d".to_owned(), dt(array![1], unit))]).unwrap();
        assert!(
            matches!(
                f.to_bytes(&Default::default()),
                Err(Error::Unsupported { .. })
            ),
            "{unit}"
        );
    }
}

#[test]
fn categories_keep_their_order_and_unused_entries() {
    let arrays = vec![
        (
            "g.codes".to_owned(),
            AnyArray::I8(array![2i8, -1, 0].into_dyn()),
        ),
        (
            "g.categories".to_owned(),
            AnyArray::Str(strings(&["lo", "mid", "hi"])),
        ),
        (
            "g.ordered".to_owned(),
            AnyArray::Bool(arr0(true).into_dyn()),
        ),
    ];
    let f = from_arrays(arrays.clone()).unwrap();
    let back = Frame::from_bytes(
        &f.to_bytes(&Default::default()).unwrap(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(to_arrays(&back).unwrap(), arrays);
}
