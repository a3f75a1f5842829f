//! Object arrays through the typed API: `Array<Option<String>, D>` and
//! `Array<PyValue, D>` read with `ReadNpy` / `NpzReader::read` and write
//! with `WriteNpy` / `NpzWriter::add`, against the NumPy-made fixtures of
//! fixtures/pickle/ (scripts/gen_pickle_fixtures.py).

use ndarray::{array, Array, Array1, Array2, ArrayD, Ix1, Ix2, IxDyn, ShapeBuilder};
use ndnpy::pickle::{self, PyValue};
use ndnpy::{
    dtype::Header, AnyArray, Error, NpyFile, NpyWriter, NpzReader, NpzWriter, Order, ReadNpy,
    ReadOptions, WriteNpy,
};
use serde_json::Value;
use std::fs;
use std::io::Cursor;
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

/// Python's `repr` of an optional string, through `PyValue`'s `Display`.
fn repr(v: &Option<String>) -> String {
    match v {
        Some(s) => PyValue::Str(s.clone()).to_string(),
        None => "None".into(),
    }
}

/// Every `.npy` fixture whose elements NumPy reports as all `str` or
/// `None` reads as `Option<String>` through the three `ReadNpy` entry
/// points with the values Python reports; every other object fixture is a
/// `DTypeMismatch` naming the first other element's index and type.
#[test]
fn option_string_reads_every_fixture_of_str_and_none() {
    let mut read = 0;
    let mut refused = 0;
    for (name, info) in &expected() {
        if !name.ends_with(".npy") || info.get("pending").is_some() {
            continue;
        }
        let path = dir().join(name);
        let bytes = fs::read(&path).unwrap();
        if info.get("fields").is_some() {
            // Records with object fields are not arrays of objects.
            let err = ArrayD::<Option<String>>::from_npy_bytes(&bytes).unwrap_err();
            assert!(
                matches!(err, Error::DTypeMismatch { .. }),
                "{name}: {err:?}"
            );
            continue;
        }
        let items = info["items"].as_array().unwrap();
        let first_other = items
            .iter()
            .position(|w| !matches!(w["type"].as_str(), Some("str" | "NoneType")));
        let results = [
            ArrayD::<Option<String>>::read_npy(&path),
            ArrayD::<Option<String>>::from_npy_bytes(&bytes),
            ArrayD::<Option<String>>::read_npy_from(&bytes[..]),
        ];
        for result in results {
            match first_other {
                None => {
                    let a = result.unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(a.len(), items.len(), "{name}");
                    for (i, (v, w)) in a.iter().zip(items).enumerate() {
                        assert_eq!(repr(v), w["repr"].as_str().unwrap(), "{name}[{i}]");
                    }
                    read += 1;
                }
                Some(i) => {
                    let err = result.unwrap_err();
                    assert!(
                        matches!(err, Error::DTypeMismatch { .. }),
                        "{name}: {err:?}"
                    );
                    let text = err.to_string();
                    let ty = items[i]["type"].as_str().unwrap_or("ndarray");
                    // The index is NumPy's (C order) multi-index.
                    let shape = info["shape"].as_array().unwrap();
                    let mut index = Vec::new();
                    let mut rest = i;
                    for d in shape.iter().rev() {
                        let d = d.as_u64().unwrap() as usize;
                        index.push(rest % d);
                        rest /= d;
                    }
                    index.reverse();
                    // Python's `type(x).__name__`, with its module for
                    // NumPy, datetime and decimal types.
                    let named = ["", "numpy.", "datetime.", "decimal."]
                        .iter()
                        .any(|m| text.ends_with(&format!("{index:?} is {m}{ty}`")));
                    assert!(named, "{name}: {text}");
                    refused += 1;
                }
            }
        }
    }
    // strings, none, zero_d, empty, empty_2d, in 8 spellings, 3 readers.
    assert_eq!(read, 5 * 8 * 3);
    assert!(refused > 0);
}

#[test]
fn option_string_reads_with_its_own_dimension_and_options() {
    let path = dir().join("none_p4.npy");
    let a = Array1::<Option<String>>::read_npy(&path).unwrap();
    assert_eq!(a, array![None, Some("x".to_string()), None]);
    // Wrong dimensionality.
    let err = Array2::<Option<String>>::read_npy(&path).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NdimMismatch {
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{err:?}"
    );
    // The opt-out refuses before parsing.
    let refused = ReadOptions::default().allow_objects(false);
    let err = Array1::<Option<String>>::read_npy_with(&path, &refused).unwrap_err();
    assert!(
        matches!(err, Error::Limit(ndnpy::error::LimitError::ObjectsRefused)),
        "{err:?}"
    );
    // Fortran order: the error names the logical index.
    let err = Array2::<Option<String>>::read_npy(dir().join("fortran_2d_p3.npy")).unwrap_err();
    assert!(err.to_string().contains("[0, 1] is int"), "{err}");
    // `<U` files read as all `Some`; numeric files are a dtype mismatch.
    let u = array!["a".to_string(), "bé".to_string()]
        .to_npy_bytes()
        .unwrap();
    assert_eq!(
        Array1::<Option<String>>::from_npy_bytes(&u).unwrap(),
        array![Some("a".to_string()), Some("bé".to_string())]
    );
    let f = array![1.5f64].to_npy_bytes().unwrap();
    let err = Array1::<Option<String>>::from_npy_bytes(&f).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }), "{err:?}");
    // A truncated pickle is an error, not a panic.
    let bytes = fs::read(&path).unwrap();
    let err = Array1::<Option<String>>::from_npy_bytes(&bytes[..bytes.len() - 3]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Pickle(ndnpy::error::PickleError::MalformedPickle { .. })
                | Error::Data(ndnpy::error::DataError::TruncatedData { .. })
        ),
        "{err:?}"
    );
}

#[test]
fn option_string_members_of_a_numpy_npz() {
    let mut npz = NpzReader::open(dir().join("objects.npz")).unwrap();
    let names = npz.read::<Option<String>, Ix1>("names").unwrap();
    assert_eq!(
        names,
        array![Some("alpha".to_string()), None, Some("gamma".to_string())]
    );
    // Strict String refuses None, naming it.
    let err = npz.read::<String, Ix1>("names").unwrap_err();
    assert!(err.to_string().contains("[1] is NoneType"), "{err}");
    // The archive's options reach typed reads too.
    let mut strict = NpzReader::open_with(
        dir().join("objects.npz"),
        &ReadOptions::default().allow_objects(false),
    )
    .unwrap();
    let err = strict.read::<Option<String>, Ix1>("names").unwrap_err();
    assert!(
        matches!(err, Error::Limit(ndnpy::error::LimitError::ObjectsRefused)),
        "{err:?}"
    );
    // Through AnyArray too.
    let any = npz.read_any("names").unwrap();
    assert_eq!(any.into_array::<Option<String>, Ix1>().unwrap(), names);
}

#[test]
fn option_string_arrays_write_as_object_arrays() {
    let a = array![
        [Some("a".to_string()), None],
        [Some("日本".to_string()), Some(String::new())]
    ];
    let bytes = a.to_npy_bytes().unwrap();
    let header = Header::read_from(&bytes[..]).unwrap();
    assert_eq!(header.dtype.to_string(), "|O");
    assert_eq!(header.shape, [2, 2]);
    assert!(!header.fortran_order);
    assert_eq!(Array2::<Option<String>>::from_npy_bytes(&bytes).unwrap(), a);
    let AnyArray::Object(o) = AnyArray::from_npy_bytes(&bytes).unwrap() else {
        panic!()
    };
    assert_eq!(o[[0, 1]], PyValue::None);
    assert_eq!(o[[1, 0]], PyValue::Str("日本".into()));
    // The same bytes as the PyValue writer gives for the same values.
    let as_values = a.mapv(|s| s.map_or(PyValue::None, PyValue::Str));
    assert_eq!(bytes, as_values.to_npy_bytes().unwrap());
    // Fortran layout: fortran_order, values in logical order.
    let mut f = Array2::from_elem((2, 2).f(), None);
    f.assign(&a);
    assert!(f.t().is_standard_layout());
    let fb = f.to_npy_bytes().unwrap();
    assert!(Header::read_from(&fb[..]).unwrap().fortran_order);
    assert_eq!(Array2::<Option<String>>::from_npy_bytes(&fb).unwrap(), a);
    // Paths, writers and archives.
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("o.npy");
    a.write_npy(&p).unwrap();
    assert_eq!(fs::read(&p).unwrap(), bytes);
    let mut out = Vec::new();
    a.view().write_npy_to(&mut out).unwrap();
    assert_eq!(out, bytes);
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("o", &a).unwrap();
    let mut r = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
    assert_eq!(r.read::<Option<String>, Ix2>("o").unwrap(), a);
    // A strided view is written in logical order.
    let s = a.slice(ndarray::s![.., 1]);
    let sb = s.to_npy_bytes().unwrap();
    assert_eq!(
        Array1::<Option<String>>::from_npy_bytes(&sb).unwrap(),
        array![None, Some(String::new())]
    );
}

#[test]
fn pyvalue_arrays_read_every_object_fixture() {
    let mut n = 0;
    for (name, info) in &expected() {
        if !name.ends_with(".npy") || info.get("pending").is_some() {
            continue;
        }
        let path = dir().join(name);
        if info.get("fields").is_some() {
            let err = ArrayD::<PyValue>::read_npy(&path).unwrap_err();
            assert!(
                matches!(err, Error::DTypeMismatch { .. }),
                "{name}: {err:?}"
            );
            continue;
        }
        let AnyArray::Object(want) = AnyArray::read_npy(&path).unwrap() else {
            panic!("{name}")
        };
        let got = ArrayD::<PyValue>::read_npy(&path).unwrap();
        // Debug compares NaN-blind but equal-for-equal, layout included.
        assert_eq!(format!("{got:?}"), format!("{want:?}"), "{name}");
        n += 1;
    }
    assert_eq!(n, 22 * 8);
    let a = Array1::<PyValue>::read_npy(dir().join("none_p5.npy")).unwrap();
    assert_eq!(
        a,
        array![PyValue::None, PyValue::Str("x".into()), PyValue::None]
    );
    let err = Array2::<PyValue>::read_npy(dir().join("none_p5.npy")).unwrap_err();
    assert!(matches!(err, Error::NdimMismatch { .. }), "{err:?}");
    // A numeric file holds no objects.
    let f = array![1u8].to_npy_bytes().unwrap();
    let err = Array1::<PyValue>::from_npy_bytes(&f).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }), "{err:?}");
    // A record with an object field is not an array of objects.
    let err = Array1::<PyValue>::read_npy(dir().join("record_with_object_p4.npy")).unwrap_err();
    assert!(
        matches!(
            err,
            Error::DTypeMismatch { .. } | Error::UnsupportedDType { .. }
        ),
        "{err:?}"
    );
    let refused = ReadOptions::default().allow_objects(false);
    let err = Array1::<PyValue>::read_npy_with(dir().join("none_p5.npy"), &refused).unwrap_err();
    assert!(
        matches!(err, Error::Limit(ndnpy::error::LimitError::ObjectsRefused)),
        "{err:?}"
    );
}

#[test]
fn pyvalue_arrays_write_through_write_npy_and_npz_add() {
    let c = Array::from_shape_vec(
        (2, 3),
        vec![
            PyValue::Str("a".into()),
            PyValue::Int(1),
            PyValue::None,
            PyValue::Float(2.5),
            PyValue::List(vec![PyValue::Bool(true)]),
            PyValue::Bytes(b"x".to_vec()),
        ],
    )
    .unwrap();
    let bytes = c.to_npy_bytes().unwrap();
    assert_eq!(bytes, c.to_npy_bytes().unwrap());
    assert_eq!(Array2::<PyValue>::from_npy_bytes(&bytes).unwrap(), c);
    let f = Array::from_shape_vec((2, 3).f(), c.t().iter().cloned().collect()).unwrap();
    assert_eq!(f, c);
    let fb = f.to_npy_bytes().unwrap();
    assert!(Header::read_from(&fb[..]).unwrap().fortran_order);
    let back = Array2::<PyValue>::read_npy_from(&fb[..]).unwrap();
    assert_eq!(back, c);
    assert!(back.t().is_standard_layout());

    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("v.npy");
    c.write_npy(&p).unwrap();
    assert_eq!(fs::read(&p).unwrap(), bytes);
    let durable = ndnpy::WriteOptions::default().durable(true);
    c.view().write_npy_with(&p, &durable).unwrap();
    assert_eq!(fs::read(&p).unwrap(), bytes);
    let mut out = Vec::new();
    c.write_npy_to(&mut out).unwrap();
    assert_eq!(out, bytes);

    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("c", &c).unwrap();
    w.add("col", &c.column(1)).unwrap();
    assert!(matches!(
        w.add("c", &c),
        Err(Error::Write(
            ndnpy::error::WriteError::DuplicateMember { .. }
        ))
    ));
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    w.add("c", &c).unwrap();
    w.add("col", &c.column(1)).unwrap();
    let mut r = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
    assert_eq!(r.read::<PyValue, Ix2>("c").unwrap(), c);
    assert_eq!(
        r.read::<PyValue, IxDyn>("col").unwrap(),
        array![PyValue::Int(1), PyValue::List(vec![PyValue::Bool(true)])].into_dyn()
    );
    assert_eq!(
        r.read_any("c").unwrap(),
        AnyArray::Object(c.clone().into_dyn())
    );

    // What the pickle writer cannot spell fails cleanly and poisons the archive.
    let deep = (0..pickle::MAX_DEPTH + 1).fold(PyValue::None, |acc, _| PyValue::List(vec![acc]));
    let bad = array![deep];
    assert!(matches!(
        bad.to_npy_bytes(),
        Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
    ));
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    assert!(matches!(
        w.add("bad", &bad),
        Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
    ));
    assert!(matches!(
        w.finish_into_inner(),
        Err(Error::Write(
            ndnpy::error::WriteError::IncompleteArchive { .. }
        ))
    ));
    let p2 = tmp.path().join("bad.npy");
    assert!(matches!(
        bad.write_npy(&p2),
        Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
    ));
    assert!(!p2.exists());
}

#[test]
fn object_elements_are_not_written_in_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("g.npy");
    let err = NpyWriter::<PyValue>::create(&p, &[], Order::C)
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, Error::UnsupportedDType { .. }), "{err:?}");
    let err = NpyWriter::<Option<String>>::create(&p, &[2], Order::C)
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, Error::UnsupportedDType { .. }), "{err:?}");
    assert!(!p.exists());
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    let err = w
        .add_streaming::<PyValue>("s", &[], Order::C)
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, Error::UnsupportedDType { .. }), "{err:?}");
    // Refused before anything was written: the archive is still usable.
    w.add("ok", &array![1u8]).unwrap();
    w.finish_into_inner().unwrap();
    // Appending objects to a numeric file.
    array![1.0f64].write_npy(&p).unwrap();
    let mut f = NpyFile::open_append(&p).unwrap();
    let err = f.append(&array![PyValue::None]).unwrap_err();
    assert!(matches!(err, Error::UnsupportedDType { .. }), "{err:?}");
    // Row ranges of an object file are not a byte range.
    let o = tmp.path().join("o.npy");
    array![Some("a".to_string())].write_npy(&o).unwrap();
    if let Ok(file) = NpyFile::open(&o) {
        assert!(file.read_range::<PyValue, Ix1>(0..1).is_err());
    }
}
