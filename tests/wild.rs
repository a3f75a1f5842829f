//! Files written by others (fixtures/wild: NumPy's own Python 2 and 3 test
//! data, NumPy 2 `StringDType`, pandas 3 objects, classes of the standard
//! library and SciPy, x86-64 long doubles, objects inside nested records),
//! read and compared with what NumPy loaded (each folder's expected.json,
//! from scripts/gen_wild_fixtures.py), then written back and read again.

use ndnpy::pickle::{PyValue, StringDTypeArray};
use ndnpy::{pickle::PickleEncoding, AnyArray, Error, NpzReader, ReadNpy, ReadOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;

fn dir(group: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/wild")
        .join(group)
}

fn expected(group: &str) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(dir(group).join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Reads `key` (`file` or `file.npz::member`) of `group`.
fn read(group: &str, key: &str, options: &ReadOptions) -> ndnpy::Result<AnyArray> {
    match key.split_once("::") {
        Some((file, member)) => {
            NpzReader::open_with(dir(group).join(file), options)?.read_any(member)
        }
        None => AnyArray::read_npy_with(dir(group).join(key), options),
    }
}

/// Python's `repr(a.tolist())` of an object or `StringDType` array.
fn tolist_repr(any: &AnyArray) -> String {
    let values: Vec<PyValue> = match any {
        AnyArray::Object(a) => a.iter().cloned().collect(),
        AnyArray::StringDType(StringDTypeArray {
            values, na_object, ..
        }) => values
            .iter()
            .map(|v| match v {
                Some(s) => PyValue::Str(s.clone()),
                None => na_object.clone().unwrap_or(PyValue::None),
            })
            .collect(),
        other => panic!("not an object array: {other:?}"),
    };
    nest(&values, any.shape()).to_string()
}

fn nest(values: &[PyValue], shape: &[usize]) -> PyValue {
    match shape {
        [] => values[0].clone(),
        [n, rest @ ..] => {
            let step = rest.iter().product::<usize>();
            PyValue::List(
                (0..*n)
                    .map(|i| nest(&values[i * step..(i + 1) * step], rest))
                    .collect(),
            )
        }
    }
}

/// Writes `any` back and reads it again, as a `.npy` file and as a member
/// of a deflated archive: the same array (compared by `Debug`, where NaN
/// equals NaN). Its repr as a nested value is printable.
fn round_trips(key: &str, any: &AnyArray, options: &ReadOptions) {
    let bytes = any.to_npy_bytes().unwrap();
    let back = AnyArray::from_npy_bytes_with(&bytes, options).unwrap();
    assert_eq!(format!("{back:?}"), format!("{any:?}"), "{key}");
    let mut w =
        ndnpy::NpzWriter::new(std::io::Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    w.add_any("m", any).unwrap();
    let mut z = NpzReader::new_with(w.finish_into_inner().unwrap(), options).unwrap();
    let back = z.read_any("m").unwrap();
    assert_eq!(
        format!("{back:?}"),
        format!("{any:?}"),
        "{key} in an archive"
    );
    let nested = PyValue::Array(std::sync::Arc::new(any.clone())).to_string();
    assert!(nested.starts_with("array("), "{key}: {nested}");
}

#[test]
fn numpy_python2_and_python3_test_data() {
    let latin1 = ReadOptions::default().pickle_encoding(PickleEncoding::Latin1);
    let bytes = ReadOptions::default().pickle_encoding(PickleEncoding::Bytes);
    for (key, want) in expected("numpy_testdata") {
        if want["dtype"] != "|O" {
            assert!(read("numpy_testdata", &key, &latin1).is_ok(), "{key}");
            continue;
        }
        let any = read("numpy_testdata", &key, &latin1).unwrap();
        assert_eq!(tolist_repr(&any), want["repr"], "{key} (latin1)");
        round_trips(&key, &any, &latin1);
        let any = read("numpy_testdata", &key, &bytes).unwrap();
        assert_eq!(tolist_repr(&any), want["repr_bytes"], "{key} (bytes)");
        // NumPy's default encoding ('ASCII') fails on Python 2's non-ASCII
        // str, and so does ours, naming the way out.
        let ascii = read("numpy_testdata", &key, &ReadOptions::default());
        if want["ascii_error"].is_null() {
            assert!(ascii.is_ok(), "{key}");
        } else {
            let err = ascii.unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Pickle(ndnpy::error::PickleError::Py2StrNotAscii { byte: 0xe4 })
                ),
                "{key}: {err}"
            );
            assert!(err.to_string().contains("pickle_encoding"), "{err}");
        }
    }
}

#[test]
fn numpy2_stringdtype() {
    let options = ReadOptions::default();
    let cases = expected("stringdtype");
    assert!(cases.len() >= 12);
    for (key, want) in cases {
        let any = read("stringdtype", &key, &options).unwrap();
        let AnyArray::StringDType(a) = &any else {
            panic!("{key}: {any:?}")
        };
        assert_eq!(tolist_repr(&any), want["repr"], "{key}");
        let coerce = !want["dtype_repr"]
            .as_str()
            .unwrap()
            .contains("coerce=False");
        assert_eq!(a.coerce, coerce, "{key}");
        assert_eq!(
            a.na_object.is_some(),
            want["dtype_repr"].as_str().unwrap().contains("na_object"),
            "{key}"
        );
        round_trips(&key, &any, &options);
    }
}

#[test]
fn stringdtype_reads_into_string_arrays() {
    // NumPy 2's default string type, read as the typed API's strings.
    let names = ndarray::Array1::<String>::read_npy(dir("stringdtype").join("sd_unicode.npy"));
    assert!(names.unwrap().iter().any(|s| s.contains('é')));
    let maybe =
        ndarray::Array1::<Option<String>>::read_npy(dir("stringdtype").join("sd_na_nan.npy"))
            .unwrap();
    assert_eq!(
        maybe,
        ndarray::array![Some("a".into()), None, Some("c".into())]
    );
    // A missing element is not a String.
    let err =
        ndarray::Array1::<String>::read_npy(dir("stringdtype").join("sd_na_none.npy")).unwrap_err();
    assert!(err.to_string().contains("[1] is NoneType"), "{err}");
}

#[test]
fn pandas_objects() {
    let options = ReadOptions::default();
    for (key, want) in expected("pandas") {
        let any = read("pandas", &key, &options).unwrap();
        // A zone given by key prints its UTC time (no zone rules here).
        if key != "ts_paris.npy" {
            assert_eq!(tolist_repr(&any), want["repr"], "{key}");
        }
        round_trips(&key, &any, &options);
    }
    let any = read("pandas", "ts_paris.npy", &options).unwrap();
    let AnyArray::Object(a) = &any else { panic!() };
    let PyValue::Timestamp(t) = &a[[0]] else {
        panic!("{:?}", a[[0]])
    };
    assert_eq!(
        t.tz,
        Some(ndnpy::pickle::TimeZone::Zone("Europe/Paris".into()))
    );
}

#[test]
fn other_classes_are_refused_or_opaque() {
    let opaque = ReadOptions::default().opaque_objects(true);
    for (key, want) in expected("opaque") {
        // Refused by default, naming the class.
        let err = read("opaque", &key, &ReadOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Pickle(ndnpy::error::PickleError::UnsupportedPickle { .. })
            ),
            "{key}: {err}"
        );
        assert!(err.to_string().contains("opaque_objects"), "{key}: {err}");
        let any = read("opaque", &key, &opaque).unwrap();
        if let Some(types) = want.get("element_types") {
            let AnyArray::Object(a) = &any else { panic!() };
            let names: Vec<String> = a
                .iter()
                .map(|v| match v {
                    PyValue::Opaque(o) => o.class_name(),
                    other => panic!("{key}: {other:?}"),
                })
                .collect();
            let types: Vec<String> = types
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect();
            assert_eq!(names, types, "{key}");
        }
        round_trips(&key, &any, &opaque);
    }
}

fn hex(bits: [u8; 10]) -> String {
    bits.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn x86_long_doubles() {
    let options = ReadOptions::default();
    for (key, want) in expected("longdouble") {
        let path = dir("longdouble").join(&key);
        let any = AnyArray::read_npy(&path).unwrap();
        let elements = want["elements"].as_array().unwrap();
        let check = |x: &ndnpy::types::LongDouble, w: &Value| {
            assert_eq!(hex(x.to_bits()), w["hex"], "{key}");
            assert_eq!(PyValue::Float(x.to_f64()).to_string(), w["float"], "{key}");
        };
        match &any {
            AnyArray::LongDouble(a) => {
                let c: Vec<_> = a.iter().collect();
                assert_eq!(c.len(), elements.len(), "{key}");
                for (x, w) in c.into_iter().zip(elements) {
                    check(x, w);
                }
                assert_eq!(any.cast::<f64>().unwrap().len(), elements.len(), "{key}");
            }
            AnyArray::ComplexLongDouble(a) => {
                for (z, w) in a.iter().zip(elements) {
                    check(&z.re, &w["re"]);
                    check(&z.im, &w["im"]);
                }
            }
            AnyArray::Record(r) => {
                let x = r.field("x").unwrap();
                let AnyArray::LongDouble(x) = x else {
                    panic!("{x:?}")
                };
                for (x, w) in x.iter().zip(elements) {
                    check(x, &w["x"]);
                }
            }
            other => panic!("{key}: {other:?}"),
        }
        // The files' padding is zero: writing back gives the same bytes
        // (little-endian C order; the others are checked for values only).
        if want["fortran_order"] == false && !key.contains("_be") {
            let file = std::fs::read(&path).unwrap();
            assert_eq!(any.to_npy_bytes().unwrap(), file, "{key}");
        }
        round_trips(&key, &any, &options);
    }
}

#[test]
fn long_double_padding_is_zeroed_and_other_sizes_refused() {
    // NumPy writes the six padding bytes as whatever memory held.
    let header = ndnpy::dtype::Header {
        dtype: ndnpy::dtype::DType::parse("<f16").unwrap(),
        shape: vec![1],
        fortran_order: false,
        version: ndnpy::dtype::Version::V1,
    };
    let mut file = header.to_bytes().unwrap();
    let mut value = ndnpy::types::LongDouble::from_f64(2.5).to_bits().to_vec();
    value.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0x12, 0x34]);
    file.extend_from_slice(&value);
    let any = AnyArray::from_npy_bytes(&file).unwrap();
    let again = any.to_npy_bytes().unwrap();
    assert_eq!(&again[again.len() - 6..], &[0; 6]);
    let typed: ndarray::Array1<ndnpy::types::LongDouble> =
        ndnpy::ReadNpy::from_npy_bytes(&file).unwrap();
    assert_eq!(typed[0].to_f64(), 2.5);
    // 32-bit x86 writes 12-byte long doubles: refused with the reason (as
    // NumPy on x86-64 refuses the descr).
    let file = common::npy_v1(
        "{'descr': '<f12', 'fortran_order': False, 'shape': (1,), }",
        &[0; 12],
    );
    let err = AnyArray::from_npy_bytes(&file).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Header(ndnpy::error::HeaderError::BadDescr { .. })
        ),
        "{err}"
    );
}

#[test]
fn objects_in_nested_records_and_sub_arrays() {
    let options = ReadOptions::default();
    for (key, _) in expected("nested_objects") {
        let any = read("nested_objects", &key, &options).unwrap();
        assert!(matches!(any, AnyArray::Record(_)), "{key}");
        round_trips(&key, &any, &options);
    }
}

#[test]
fn every_truncation_of_a_wild_pickle_is_an_error() {
    // A pickle ends with STOP: any file cut before it must fail,
    // never panic or return part of an array.
    let opaque = ReadOptions::default()
        .opaque_objects(true)
        .pickle_encoding(PickleEncoding::Latin1);
    let mut files = 0;
    for group in [
        "numpy_testdata",
        "stringdtype",
        "pandas",
        "opaque",
        "nested_objects",
    ] {
        for entry in std::fs::read_dir(dir(group)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "npy") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let header = ndnpy::dtype::Header::read_from(&bytes[..]).unwrap();
            if !header.dtype.has_object() {
                continue;
            }
            files += 1;
            let start = header.to_bytes().unwrap().len().min(bytes.len());
            // The STOP opcode: NumPy's Python 2 files have a newline after it.
            let stop = bytes.iter().rposition(|&b| b == b'.').unwrap();
            assert!(bytes.len() - stop <= 2, "{}", path.display());
            for cut in start..=stop {
                assert!(
                    AnyArray::from_npy_bytes_with(&bytes[..cut], &opaque).is_err(),
                    "{} cut at {cut}",
                    path.display()
                );
            }
        }
    }
    assert!(files >= 40, "{files}");
}
