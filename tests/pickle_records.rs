//! Records with object fields (NumPy pickles the whole record array): they
//! load as `AnyArray::Record` whose object fields are `AnyArray::Object`
//! columns; malformed ones fail with their exact error. The values are
//! checked against NumPy in tests/pickle.rs (every fixture); the bad
//! pickles come from scripts/gen_pickle_fixtures.py (fixtures/pickle_bad/records/).

use ndarray::Array1;
use ndnpy::pickle::PyValue;
use ndnpy::{AnyArray, Error, ReadNpy, ReadOptions};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pickle")
}

#[test]
fn every_bad_record_pickle_fails_with_its_error() {
    let bad = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pickle_bad/records");
    let text = std::fs::read_to_string(bad.join("errors.json")).unwrap();
    let errors: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(errors.len(), 14);
    for (name, want) in &errors {
        let bytes = std::fs::read(bad.join(name)).unwrap();
        for result in [
            AnyArray::read_npy(bad.join(name)),
            AnyArray::from_npy_bytes(&bytes),
            AnyArray::read_npy_from(&bytes[..]),
        ] {
            let err = result.unwrap_err();
            let got = match &err {
                Error::Pickle(ndnpy::error::PickleError::MalformedPickle { .. }) => {
                    "MalformedPickle"
                }
                Error::UnsupportedDType { .. } => "UnsupportedDType",
                Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }) => "PickleLimit",
                Error::Pickle(ndnpy::error::PickleError::UnsupportedPickle { .. }) => {
                    "UnsupportedPickle"
                }
                _ => "other",
            };
            assert_eq!(got, want.as_str().unwrap(), "{name}: {err}");
        }
    }
}

#[test]
fn objects_in_nested_records_load() {
    // Refused before round 3; NumPy loads it, and so does the reader now.
    let bad = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pickle_bad/records");
    let any = AnyArray::read_npy(bad.join("object_in_nested_record.npy")).unwrap();
    let AnyArray::Record(r) = &any else {
        panic!("{any:?}")
    };
    assert!(r.has_objects());
    let back = AnyArray::from_npy_bytes(&any.to_npy_bytes().unwrap()).unwrap();
    assert_eq!(back, any);
}

#[test]
fn bad_record_errors_say_what_is_wrong() {
    let bad = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pickle_bad/records");
    let msg = |name: &str| AnyArray::read_npy(bad.join(name)).unwrap_err().to_string();
    assert!(
        msg("title_repeats_earlier_name.npy").contains("title \"x\" already used"),
        "{}",
        msg("title_repeats_earlier_name.npy")
    );
    assert!(
        msg("int_out_of_range.npy").contains("300 is out of range for `|i1`"),
        "{}",
        msg("int_out_of_range.npy")
    );
    assert!(msg("str_too_long.npy").contains("\"abc\" is longer than `<U2`"));
    assert!(msg("str_for_a_float.npy").contains("field \"a\": a str cannot be a `<f8` value"));
    assert!(msg("tuple_too_short.npy").contains("record 0 has 1 values"));
    assert!(msg("count_disagrees_with_shape.npy").contains("2 items"));
}

#[test]
fn record_with_object_api() {
    let path = dir().join("record_with_object_p4.npy");
    let AnyArray::Record(r) = AnyArray::read_npy(&path).unwrap() else {
        panic!()
    };
    assert!(r.has_objects());
    assert_eq!(r.shape(), &[2]);
    assert_eq!(r.names(), ["a", "b", "c"]);
    assert_eq!(
        r.field("c")
            .unwrap()
            .cast::<f64>()
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        [1.5, -0.5]
    );
    let AnyArray::Object(b) = r.field("b").unwrap() else {
        panic!()
    };
    assert_eq!(
        b.into_raw_vec_and_offset().0,
        [PyValue::Str("x".into()), PyValue::None]
    );
    assert!(matches!(r.field("zz"), Err(Error::DTypeMismatch { .. })));
    // Written back pickled (the object values, not placeholder bytes).
    let bytes = r.to_npy_bytes().unwrap();
    assert_eq!(
        AnyArray::from_npy_bytes(&bytes).unwrap(),
        AnyArray::Record(r.clone())
    );
    // The str 'x' as pickled (BINUNICODE, length 1): the field names are
    // a, b and c, so only the object value writes it.
    assert!(bytes.windows(6).any(|w| w == b"X\x01\x00\x00\x00x"));
    // The opt-out reaches records with objects too.
    let strict = ReadOptions::default().allow_objects(false);
    assert!(matches!(
        AnyArray::read_npy_with(&path, &strict),
        Err(Error::Limit(ndnpy::error::LimitError::ObjectsRefused))
    ));
    // Typed reads of the whole file are dtype errors, not panics.
    assert!(matches!(
        Array1::<PyValue>::read_npy(&path),
        Err(Error::DTypeMismatch { .. })
    ));
    assert!(matches!(
        Array1::<Option<String>>::read_npy(&path),
        Err(Error::DTypeMismatch { .. })
    ));
    assert!(Array1::<f64>::read_npy(&path).is_err());
}

/// Record arrays inside object arrays (with and without object fields)
/// are pickled as nested ndarrays and read back equal.
#[test]
fn record_arrays_nested_in_object_arrays_round_trip() {
    use ndarray::array;
    use ndnpy::WriteNpy;
    use std::sync::Arc;
    let with_objects = AnyArray::read_npy(dir().join("record_fields_p4.npy")).unwrap();
    ndnpy::record! {
        #[derive(Clone, Copy)]
        struct P { x: f64, y: i16 }
    }
    let plain = AnyArray::Record(ndnpy::types::RecordArray::from_array(&array![
        P { x: 1.5, y: -2 },
        P { x: 0.0, y: 7 }
    ]));
    let a = array![
        PyValue::Array(Arc::new(with_objects.clone())),
        PyValue::Array(Arc::new(plain.clone())),
        PyValue::Int(3)
    ];
    let bytes = a.to_npy_bytes().unwrap();
    let back = Array1::<PyValue>::from_npy_bytes(&bytes).unwrap();
    // Debug compares NaN-blind (the record fixture holds a NaN).
    assert_eq!(format!("{back:?}"), format!("{a:?}"));
}

/// The plain fields of records with object fields convert to a declared
/// record type (fields matched by name, the object field left out).
#[test]
fn plain_fields_of_object_records_convert_to_declared_types() {
    ndnpy::record! {
        #[derive(Debug, Clone, Copy, PartialEq)]
        struct AC { a: i32, c: f64 }
    }
    let AnyArray::Record(r) = AnyArray::read_npy(dir().join("record_with_object_p2.npy")).unwrap()
    else {
        panic!()
    };
    let got = r.to_array::<AC, ndarray::Ix1>().unwrap();
    assert_eq!(
        got,
        ndarray::array![AC { a: 1, c: 1.5 }, AC { a: 2, c: -0.5 }]
    );
}
