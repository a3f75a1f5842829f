//! Object arrays made by NumPy (fixtures/pickle/, written by
//! scripts/gen_pickle_fixtures.py) load with the values Python reports.

use ndarray::{Array1, Array2, Ix1, Ix2};
use ndnpy::pickle::{self, PyValue};
use ndnpy::{dtype::Header, AnyArray, Error, NpzReader, ReadNpy, ReadOptions, WriteNpy};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pickle")
}

fn expected() -> serde_json::Map<String, Value> {
    let text = fs::read_to_string(dir().join("expected.json")).unwrap();
    match serde_json::from_str(&text).unwrap() {
        Value::Object(m) => m,
        _ => panic!("expected.json is not an object"),
    }
}

fn shape_of(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

/// The array's data in C order, as NumPy's `tobytes()`.
fn c_bytes(a: &AnyArray) -> Vec<u8> {
    macro_rules! go {
        ($($v:ident),*) => {
            match a {
                $(AnyArray::$v(x) => {
                    let bytes = x.as_standard_layout().to_npy_bytes().unwrap();
                    let header = Header::read_from(&bytes[..]).unwrap();
                    bytes[bytes.len() - header.data_len().unwrap()..].to_vec()
                })*
                // Datetimes, records, void: C order, as the record
                // columns they come from.
                other => {
                    let bytes = other.to_npy_bytes().unwrap();
                    let header = Header::read_from(&bytes[..]).unwrap();
                    assert!(!header.fortran_order || other.shape().len() < 2);
                    bytes[bytes.len() - header.data_len().unwrap()..].to_vec()
                }
            }
        };
    }
    go!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128, Str, Bytes)
}

/// Checks `value` against its description from Python; `at` names it.
fn check(value: &PyValue, want: &Value, at: &str) {
    if let Some(nd) = want.get("ndarray") {
        let PyValue::Array(a) = value else {
            panic!("{at}: expected an ndarray, got {value}")
        };
        check_array(a, nd, at);
        return;
    }
    let text = value.to_string();
    let ours = want.get("ours").unwrap_or(&want["repr"]);
    assert_eq!(text, ours.as_str().unwrap(), "{at} ({})", want["type"]);
}

fn check_array(a: &AnyArray, nd: &Value, at: &str) {
    // NumPy spells a nested record's dtype `|V<size>`: compared by bytes.
    if !matches!(a, AnyArray::Record(_)) {
        assert_eq!(a.dtype().to_string(), nd["dtype"].as_str().unwrap(), "{at}");
    }
    assert_eq!(a.shape(), &shape_of(&nd["shape"])[..], "{at}");
    if let Some(hex) = nd.get("hex") {
        let hex = hex.as_str().unwrap();
        let got: String = c_bytes(a).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, hex, "{at}");
    } else {
        let AnyArray::Object(x) = a else {
            panic!("{at}: expected an object array")
        };
        let items = nd["items"].as_array().unwrap();
        assert_eq!(x.len(), items.len(), "{at}");
        for (i, (v, w)) in x.iter().zip(items).enumerate() {
            check(v, w, &format!("{at}[{i}]"));
        }
    }
}

#[test]
fn every_numpy_object_fixture_loads_with_its_values() {
    let expected = expected();
    let mut loaded = 0;
    let mut records = 0;
    let mut pending = 0;
    for (name, info) in &expected {
        if !name.ends_with(".npy") {
            continue;
        }
        let path = dir().join(name);
        let bytes = fs::read(&path).unwrap();
        let results = [
            AnyArray::read_npy(&path),
            AnyArray::from_npy_bytes(&bytes),
            AnyArray::read_npy_from(&bytes[..]),
        ];
        for result in results {
            if let Some(reason) = info.get("pending") {
                // Not loadable until the element model has this dtype; then
                // the entry in scripts/gen_pickle_fixtures.py goes away.
                match result {
                    Err(Error::UnsupportedDType { .. }) => {}
                    other => panic!("{name} ({reason}): {other:?}"),
                }
                pending += 1;
                continue;
            }
            let a = result.unwrap_or_else(|e| panic!("{name}: {e}"));
            if let Some(fields) = info.get("fields") {
                // A record with object fields: every field as NumPy's a[name].
                let AnyArray::Record(r) = &a else {
                    panic!("{name}: not a record array")
                };
                assert_eq!(r.shape(), &shape_of(&info["shape"])[..], "{name}");
                assert!(r.has_objects(), "{name}");
                let fields = fields.as_object().unwrap();
                assert_eq!(r.names().len(), fields.len(), "{name}");
                for (field, want) in fields {
                    let column = r.field(field).unwrap();
                    check_array(&column, &want["ndarray"], &format!("{name}[{field:?}]"));
                }
                records += 1;
                continue;
            }
            let AnyArray::Object(x) = &a else {
                panic!("{name}: not an object array")
            };
            assert_eq!(x.shape(), &shape_of(&info["shape"])[..], "{name}");
            // Fortran files come back in Fortran layout, C files in C layout.
            let fortran = info["fortran_order"].as_bool().unwrap();
            if x.ndim() > 1 && x.len() > 1 {
                assert_eq!(x.t().is_standard_layout(), fortran, "{name}");
                assert_eq!(x.is_standard_layout(), !fortran, "{name}");
            }
            let items = info["items"].as_array().unwrap();
            assert_eq!(x.len(), items.len(), "{name}");
            // `iter` walks in logical (C) order, as `ravel(order='C')`.
            for (i, (v, w)) in x.iter().zip(items).enumerate() {
                check(v, w, &format!("{name}[{i}]"));
            }
            loaded += 1;
        }
    }
    // 25 arrays × 8 files (protocols 0 to 5 + 2 NumPy-1.x spellings) × 3 readers.
    assert_eq!(loaded + records + pending, 25 * 8 * 3);
    assert_eq!(records, 3 * 8 * 3);
}

#[test]
fn numpy_1_and_2_spellings_give_the_same_array() {
    for name in ["nested", "ragged_float", "numpy_scalars", "fortran_2d"] {
        for p in [2, 4] {
            let a = AnyArray::read_npy(dir().join(format!("{name}_p{p}.npy"))).unwrap();
            let b = AnyArray::read_npy(dir().join(format!("{name}_np1_p{p}.npy"))).unwrap();
            // Debug compares NaN-blind but equal-for-equal.
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name} p{p}");
        }
    }
}

#[test]
fn an_object_member_inside_an_npz() {
    let expected = expected();
    let want = &expected["objects.npz"]["members"];
    let mut npz = NpzReader::open(dir().join("objects.npz")).unwrap();
    let AnyArray::Object(names) = npz.read_any("names").unwrap() else {
        panic!()
    };
    for (v, w) in names.iter().zip(want["names"]["items"].as_array().unwrap()) {
        check(v, w, "names");
    }
    let mut seen = Vec::new();
    for (name, array) in npz.arrays() {
        let array = array.unwrap();
        if name == "nums" {
            check_array(&array, &want["nums"]["ndarray"], "nums");
        } else {
            assert!(matches!(array, AnyArray::Object(_)));
        }
        seen.push(name);
    }
    assert_eq!(seen, ["names", "nums"]);
    // The switch reaches archives too.
    let mut strict = NpzReader::open_with(
        dir().join("objects.npz"),
        &ReadOptions::default().allow_objects(false),
    )
    .unwrap();
    assert!(matches!(
        strict.read_any("names"),
        Err(Error::Limit(ndnpy::error::LimitError::ObjectsRefused))
    ));
    assert!(strict.read_any("nums").is_ok());
}

#[test]
fn object_arrays_of_str_as_string_arrays() {
    let names: Array1<String> = Array1::<String>::read_npy(dir().join("strings_p4.npy")).unwrap();
    assert_eq!(names[2], "héllo");
    assert_eq!(names.len(), 8);
    let opt: Array1<Option<String>> =
        Array1::<Option<String>>::read_npy(dir().join("none_p3.npy")).unwrap();
    assert_eq!(opt.to_vec(), [None, Some("x".to_string()), None]);
    // None is not a str: the error names the index and the Python type.
    let err = Array1::<String>::read_npy(dir().join("none_p3.npy")).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }));
    assert!(err.to_string().contains("[0] is NoneType"), "{err}");
    let err = Array1::<Option<String>>::read_npy(dir().join("ints_p2.npy")).unwrap_err();
    assert!(err.to_string().contains("[0] is int"), "{err}");
    let err = Array2::<String>::read_npy(dir().join("strings_p4.npy")).unwrap_err();
    assert!(matches!(
        err,
        Error::NdimMismatch {
            expected: 2,
            found: 1,
            ..
        }
    ));
    // A numeric file is not an object array.
    let f = tempfile::NamedTempFile::new().unwrap();
    ndarray::array![1.0f64].write_npy(f.path()).unwrap();
    let err = Array1::<String>::read_npy(f.path()).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }));
    // A 2-D Fortran file keeps its logical order.
    let AnyArray::Object(a) = AnyArray::read_npy(dir().join("fortran_2d_p4.npy")).unwrap() else {
        panic!()
    };
    let err = pickle::strings_from_objects::<Ix2>(a).unwrap_err();
    assert!(err.to_string().contains("[0, 1] is int"), "{err}");
}

#[test]
fn typed_reads_of_object_files_are_dtype_errors() {
    let err = Array1::<f64>::read_npy(dir().join("floats_p4.npy")).unwrap_err();
    assert!(matches!(err, Error::UnsupportedDType { .. }), "{err}");
    let a = AnyArray::read_npy(dir().join("floats_p4.npy")).unwrap();
    assert_eq!(a.dtype().to_string(), "|O");
    assert!(matches!(
        a.into_array::<f64, Ix1>(),
        Err(Error::DTypeMismatch { .. })
    ));
    let _ = Array2::<f64>::zeros((1, 1));
}

#[test]
fn every_fixture_round_trips_through_our_writer() {
    let expected = expected();
    let mut n = 0;
    let mut records = 0;
    for (name, info) in &expected {
        if !name.ends_with(".npy") || info.get("pending").is_some() {
            continue;
        }
        let a = AnyArray::read_npy(dir().join(name)).unwrap();
        if info.get("fields").is_some() {
            // Records with object fields are pickled back whole (C order).
            let bytes = a.to_npy_bytes().unwrap();
            let header = Header::read_from(&bytes[..]).unwrap();
            assert_eq!(header.dtype, a.dtype(), "{name}");
            assert!(!header.fortran_order);
            let b = AnyArray::from_npy_bytes(&bytes).unwrap();
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
            let mut w = ndnpy::NpzWriter::new(std::io::Cursor::new(Vec::new()));
            w.add_any("r", &a).unwrap();
            let mut r = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
            let c = r.read_any("r").unwrap();
            assert_eq!(format!("{a:?}"), format!("{c:?}"), "{name}");
            records += 1;
            continue;
        }
        let AnyArray::Object(a) = a else { panic!() };
        let bytes = a.to_npy_bytes().unwrap();
        let header = Header::read_from(&bytes[..]).unwrap();
        assert_eq!(header.dtype.to_string(), "|O");
        assert_eq!(header.shape, a.shape());
        assert_eq!(
            header.fortran_order,
            info["fortran_order"].as_bool().unwrap() && a.len() > 1,
            "{name}"
        );
        let AnyArray::Object(b) = AnyArray::from_npy_bytes(&bytes).unwrap() else {
            panic!()
        };
        // Debug compares NaN-blind but equal-for-equal, layout included.
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
        // Every element alone through dumps/loads.
        for v in a.iter() {
            let back = pickle::loads(&pickle::dumps(v).unwrap()).unwrap();
            assert_eq!(format!("{v:?}"), format!("{back:?}"), "{name}");
        }
        n += 1;
    }
    assert_eq!(n, 22 * 8);
    assert_eq!(records, 3 * 8);
}

#[test]
fn writer_refuses_what_it_cannot_spell() {
    // Nesting beyond the reader's depth limit would write a file we could
    // not read back: refused.
    let deep = (0..pickle::MAX_DEPTH + 1).fold(PyValue::None, |acc, _| PyValue::List(vec![acc]));
    let err = pickle::dumps(&deep).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::PickleLimit { .. })
        ),
        "{err}"
    );
    // A BigInt that is not decimal text.
    let err = pickle::dumps(&PyValue::BigInt("12x".into())).unwrap_err();
    assert!(matches!(err, Error::UnsupportedDType { .. }), "{err}");
    // A record dtype as a value.
    let rec = PyValue::DType(ndnpy::dtype::DType::Record(vec![]));
    assert!(pickle::dumps(&rec).is_err());
}

#[test]
fn objects_in_npz_archives_round_trip() {
    let names = ndarray::array![
        [PyValue::Str("a".into()), PyValue::None],
        [PyValue::Int(3), PyValue::Float(0.5)]
    ];
    let mut w = ndnpy::NpzWriter::new(std::io::Cursor::new(Vec::new()));
    w.add("o", &names).unwrap();
    w.add("n", &ndarray::array![1u8]).unwrap();
    assert!(matches!(
        w.add("o", &names),
        Err(Error::Write(
            ndnpy::error::WriteError::DuplicateMember { .. }
        ))
    ));
    let bytes = w.finish_into_inner();
    assert!(matches!(
        bytes,
        Err(Error::Write(
            ndnpy::error::WriteError::IncompleteArchive { .. }
        ))
    ));
    let mut w = ndnpy::NpzWriter::new(std::io::Cursor::new(Vec::new()));
    w.add("o", &names).unwrap();
    w.add_any("again", &AnyArray::Object(names.clone().into_dyn()))
        .unwrap();
    let mut r = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
    assert_eq!(
        r.read_any("o").unwrap(),
        AnyArray::Object(names.clone().into_dyn())
    );
    assert_eq!(
        r.read_any("again").unwrap(),
        AnyArray::Object(names.into_dyn())
    );
}

/// `Array<String, D>::read_npy` reads both `<U` files and object arrays of
/// `str` (as NumPy users save lists of labels); other objects name their
/// index and Python type.
#[test]
fn typed_string_reads_accept_object_arrays_of_str() {
    use ndnpy::ReadNpy;
    let labels = ndarray::array![
        ndnpy::pickle::PyValue::Str("cat".into()),
        ndnpy::pickle::PyValue::Str("dög".into())
    ];
    let bytes = ndnpy::WriteNpy::to_npy_bytes(&labels).unwrap();
    let got = ndarray::Array1::<String>::from_npy_bytes(&bytes).unwrap();
    assert_eq!(got, ndarray::array!["cat".to_string(), "dög".to_string()]);
    let got = ndarray::Array1::<String>::read_npy_from(&bytes[..]).unwrap();
    assert_eq!(got.len(), 2);

    let refused = ndnpy::ReadOptions::default().allow_objects(false);
    let err = ndarray::Array1::<String>::from_npy_bytes_with(&bytes, &refused).unwrap_err();
    assert!(
        matches!(
            err,
            ndnpy::Error::Limit(ndnpy::error::LimitError::ObjectsRefused)
        ),
        "{err:?}"
    );

    let mixed = ndarray::array![
        ndnpy::pickle::PyValue::Str("a".into()),
        ndnpy::pickle::PyValue::Int(1)
    ];
    let bytes = ndnpy::WriteNpy::to_npy_bytes(&mixed).unwrap();
    let err = ndarray::Array1::<String>::from_npy_bytes(&bytes).unwrap_err();
    assert!(err.to_string().contains("[1] is int"), "{err}");
    // Other element types never start the pickle reader.
    let err = ndarray::Array1::<f64>::from_npy_bytes(&bytes).unwrap_err();
    assert!(
        matches!(
            err,
            ndnpy::Error::DTypeMismatch { .. } | ndnpy::Error::UnsupportedDType { .. }
        ),
        "{err:?}"
    );
}
