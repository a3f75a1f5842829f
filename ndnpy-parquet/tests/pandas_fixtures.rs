//! Every file of fixtures/parquet/valid against what `pd.read_parquet` gives
//! (fixtures/parquet/expected.json, written by scripts/gen_parquet_fixtures.py).

use ndnpy::AnyArray;
use ndnpy_parquet::{Column, Frame, Index, Values};
use serde_json::{json, Value};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/parquet")
}

fn expected() -> Value {
    let text = std::fs::read_to_string(root().join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The dtype pandas gives a column, by pandas' rules, from what we read.
fn pandas_dtype(c: &Column) -> String {
    let nt = c.numpy_type();
    match c.values() {
        Values::Categorical(_) => "category".into(),
        Values::Array(AnyArray::Datetime64 { unit, .. }) => {
            let unit = unit.as_deref().unwrap();
            match c.timezone() {
                Some(tz) => format!("datetime64[{unit}, {tz}]"),
                None => format!("datetime64[{unit}]"),
            }
        }
        Values::Array(AnyArray::Timedelta64 { unit, .. }) => {
            format!("timedelta64[{}]", unit.as_deref().unwrap())
        }
        Values::Array(AnyArray::Str(_)) if nt == "string" => "string".into(),
        Values::Array(AnyArray::Str(_)) => "str".into(),
        Values::Array(AnyArray::Bytes(_)) => "object".into(),
        Values::Array(a) => {
            if nt.starts_with(|ch: char| ch.is_ascii_uppercase()) || nt == "boolean" {
                nt
            } else if c.validity().is_some()
                && !matches!(a, AnyArray::F16(_) | AnyArray::F32(_) | AnyArray::F64(_))
            {
                // NumPy ints and bools have no missing value: pandas widens.
                if matches!(a, AnyArray::Bool(_)) {
                    "object".into()
                } else {
                    "float64".into()
                }
            } else {
                a.dtype()
                    .to_string()
                    .replace(['<', '|'], "")
                    .replace("b1", "bool")
                    .replace("f2", "float16")
                    .replace("f4", "float32")
                    .replace("f8", "float64")
                    .replace("i1", "int8")
                    .replace("i2", "int16")
                    .replace("i4", "int32")
                    .replace("i8", "int64")
                    .replace("u1", "uint8")
                    .replace("u2", "uint16")
                    .replace("u4", "uint32")
                    .replace("u8", "uint64")
            }
        }
        _ => "unknown".into(),
    }
}

fn entries(a: &AnyArray, valid: &dyn Fn(usize) -> bool) -> Vec<Value> {
    let n = a.shape()[0];
    (0..n)
        .map(|i| {
            if !valid(i) {
                return Value::Null;
            }
            {
                match a {
                    AnyArray::Bool(a) => json!(a[[i]]),
                    AnyArray::I8(a) => json!(a[[i]]),
                    AnyArray::I16(a) => json!(a[[i]]),
                    AnyArray::I32(a) => json!(a[[i]]),
                    AnyArray::I64(a) => json!(a[[i]]),
                    AnyArray::U8(a) => json!(a[[i]]),
                    AnyArray::U16(a) => json!(a[[i]]),
                    AnyArray::U32(a) => json!(a[[i]]),
                    AnyArray::U64(a) => json!(a[[i]]),
                    AnyArray::F16(a) => float(a[[i]].to_f64()),
                    AnyArray::F32(a) => float(a[[i]] as f64),
                    AnyArray::F64(a) => float(a[[i]]),
                    AnyArray::Str(v) => json!(v[[i]]),
                    AnyArray::Bytes(v) => {
                        json!({"hex": v[[i]].iter().map(|b| format!("{b:02x}")).collect::<String>()})
                    }
                    AnyArray::Datetime64 { array, .. } | AnyArray::Timedelta64 { array, .. } => {
                        json!(array[[i]])
                    }
                    other => panic!("unexpected {:?}", other.dtype()),
                }
            }
        })
        .collect()
}

fn float(x: f64) -> Value {
    if x.is_nan() {
        Value::Null
    } else {
        json!(x)
    }
}

/// Numbers compare by value (pandas widens ints with missing values).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        _ => a == b,
    }
}

fn check_column(file: &str, c: &Column, want: &Value) {
    let what = format!("{file}: column {:?}", c.name());
    assert_eq!(
        pandas_dtype(c),
        want["dtype"].as_str().unwrap(),
        "{what}: dtype"
    );
    match c.values() {
        Values::Categorical(cat) => {
            let codes: Vec<Value> = cat
                .codes_i64()
                .unwrap()
                .into_iter()
                .map(|x| json!(x))
                .collect();
            assert!(same(&Value::Array(codes), &want["codes"]), "{what}: codes");
            let cats = entries(&cat.categories, &|_| true);
            assert!(
                same(&Value::Array(cats), &want["categories"]),
                "{what}: categories"
            );
            assert_eq!(json!(cat.ordered), want["ordered"], "{what}: ordered");
        }
        Values::Array(v) => {
            if let AnyArray::Datetime64 { unit, .. } | AnyArray::Timedelta64 { unit, .. } = v {
                assert_eq!(unit.as_deref(), want["unit"].as_str(), "{what}: unit");
            }
            let got = Value::Array(entries(v, &|i| c.is_valid(i)));
            assert!(
                same(&got, &want["values"]),
                "{what}: values {got} != {}",
                want["values"]
            );
        }
        other => panic!("{what}: unexpected {other:?}"),
    }
}

#[test]
fn every_valid_fixture_reads_as_pandas_reads_it() {
    let exp = expected();
    let files = exp["files"].as_object().unwrap();
    assert!(files.len() >= 20);
    for (name, want) in files {
        let frame = Frame::read(root().join("valid").join(format!("{name}.parquet")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            frame.len() as u64,
            want["len"].as_u64().unwrap(),
            "{name}: len"
        );
        let cols = want["columns"].as_array().unwrap();
        let names: Vec<&str> = frame.columns().iter().map(|c| c.name().unwrap()).collect();
        let want_names: Vec<&str> = cols.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, want_names, "{name}: column names");
        for (c, w) in frame.columns().iter().zip(cols) {
            check_column(name, c, w);
        }
        let idx = &want["index"];
        match frame.index() {
            Index::Range(r) => {
                assert_eq!(idx["kind"], "range", "{name}: index kind");
                assert_eq!(
                    (json!(r.start), json!(r.stop), json!(r.step), json!(r.name)),
                    (
                        idx["start"].clone(),
                        idx["stop"].clone(),
                        idx["step"].clone(),
                        idx["name"].clone()
                    ),
                    "{name}: range"
                );
            }
            Index::Columns(levels) => {
                assert_eq!(idx["kind"], "levels", "{name}: index kind");
                let want_levels = idx["levels"].as_array().unwrap();
                assert_eq!(levels.len(), want_levels.len(), "{name}: levels");
                for (l, w) in levels.iter().zip(want_levels) {
                    assert_eq!(json!(l.name()), w["name"], "{name}: level name");
                    check_column(name, l, w);
                }
            }
        }
    }
}

#[test]
fn read_write_read_is_identity() {
    for entry in std::fs::read_dir(root().join("valid")).unwrap() {
        let path = entry.unwrap().path();
        let frame = Frame::read(&path).unwrap();
        let bytes = frame.to_bytes(&Default::default()).unwrap();
        let back = Frame::from_bytes(&bytes, &Default::default()).unwrap();
        let parts = |f: &Frame| {
            let levels = f.index().levels().iter();
            f.columns()
                .iter()
                .chain(levels)
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
        assert_eq!(parts(&back), parts(&frame), "{}", path.display());
        if let Index::Range(r) = frame.index() {
            assert_eq!(back.index(), &Index::Range(r.clone()), "{}", path.display());
        }
    }
}

#[test]
fn compressions_read_the_same() {
    let read =
        |c: &str| Frame::read(root().join(format!("valid/compression_{c}.parquet"))).unwrap();
    let base = read("none");
    for c in ["snappy", "zstd", "gzip"] {
        assert_eq!(read(c).columns(), base.columns(), "{c}");
    }
}
