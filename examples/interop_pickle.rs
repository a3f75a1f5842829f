//! The Rust half of the object-array interop check
//! (`scripts/interop_pickle.py` runs it):
//!
//! ```text
//! cargo run --release --example interop_pickle -- <dir>
//! ```
//!
//! 1. Reads every `<dir>/numpy/*.npy` (object arrays NumPy wrote), records
//!    the `Display` (Python `repr`) of each element in C order in
//!    `<dir>/read.json`, and writes the array back with
//!    `WriteNpy::write_npy` to `<dir>/roundtrip/<name>`. Files
//!    that read as `ArrayD<Option<String>>` (all `str` or `None`) also get
//!    the `repr`s of those values under `optional:<name>`, and are written
//!    back from the `Option<String>` array with `WriteNpy` to
//!    `<dir>/optional/<name>`. Records with object fields give the `repr`s
//!    of each object field under `record:<name>` and are written back
//!    (`AnyArray::to_npy_bytes`) to `<dir>/roundtrip/<name>`.
//! 2. Writes arrays built here from every kind of `PyValue` to
//!    `<dir>/built/<name>.npy` with `WriteNpy::write_npy` (plain,
//!    Fortran-order, 0-d, empty, `Option<String>` arrays, and members of an
//!    `.npz` added with `NpzWriter::add`), with the `repr` each element must
//!    have in NumPy in `<dir>/built.json`.

use ndarray::{arr0, Array, ArrayD, IxDyn, ShapeBuilder};
use ndnpy::pickle::{Date, DateTime, NumpyScalar, PyValue, TimeDelta};
use ndnpy::{dtype::DType, AnyArray, NpzWriter, ReadNpy, WriteNpy};
use serde_json::{json, Map, Value};
use std::fs;
use std::path::Path;
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: interop_pickle <dir>")?;
    let dir = Path::new(&dir);
    read_numpy_files(dir)?;
    write_built(dir)?;
    Ok(())
}

fn read_numpy_files(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let out = dir.join("roundtrip");
    fs::create_dir_all(&out)?;
    let mut read = Map::new();
    let mut names: Vec<_> = fs::read_dir(dir.join("numpy"))?
        .map(|e| e.map(|e| e.file_name().into_string().expect("UTF-8 names")))
        .collect::<Result<_, _>>()?;
    names.sort();
    for name in names {
        let a = match AnyArray::read_npy(dir.join("numpy").join(&name))? {
            AnyArray::Object(a) => a,
            AnyArray::Record(r) => {
                // Records with object fields: the reprs of each object
                // field (NumPy compares them with a[field]).
                let mut fields = Map::new();
                for field in r.names() {
                    if let AnyArray::Object(column) = r.field(field)? {
                        fields.insert(field.to_string(), reprs(&column));
                    }
                }
                read.insert(format!("record:{name}"), Value::Object(fields));
                fs::write(out.join(&name), AnyArray::Record(r).to_npy_bytes()?)?;
                continue;
            }
            _ => return Err(format!("{name}: not an object array").into()),
        };
        let reprs: Vec<Value> = a
            .iter()
            .map(|v| match v {
                PyValue::Array(_) => Value::Null,
                other => Value::String(other.to_string()),
            })
            .collect();
        read.insert(name.clone(), Value::Array(reprs));
        a.write_npy(out.join(&name))?;
        if let Ok(o) = ArrayD::<Option<String>>::read_npy(dir.join("numpy").join(&name)) {
            read.insert(format!("optional:{name}"), optional_reprs(&o));
            fs::create_dir_all(dir.join("optional"))?;
            o.write_npy(dir.join("optional").join(&name))?;
        }
    }
    fs::write(dir.join("read.json"), serde_json::to_string_pretty(&read)?)?;
    Ok(())
}

fn optional_reprs(a: &ArrayD<Option<String>>) -> Value {
    Value::Array(
        a.iter()
            .map(|v| match v {
                Some(x) => Value::String(s(x).to_string()),
                None => Value::String("None".into()),
            })
            .collect(),
    )
}

fn s(x: &str) -> PyValue {
    PyValue::Str(x.into())
}

fn every_kind() -> Vec<PyValue> {
    let f64_dtype = DType::parse("<f8").unwrap();
    vec![
        PyValue::None,
        PyValue::Bool(true),
        PyValue::Bool(false),
        PyValue::Int(0),
        PyValue::Int(-1),
        PyValue::Int(300),
        PyValue::Int(70_000),
        PyValue::Int(-3_000_000_000),
        PyValue::Int(i64::MIN),
        PyValue::Int(i64::MAX),
        PyValue::BigInt("123456789012345678901234567890".into()),
        PyValue::BigInt("-340282366920938463463374607431768211456".into()),
        PyValue::Float(1.5),
        PyValue::Float(-0.0),
        PyValue::Float(f64::NAN),
        PyValue::Float(f64::NEG_INFINITY),
        PyValue::Float(1e300),
        PyValue::Complex(1.0, -2.0),
        PyValue::Complex(0.0, 0.5),
        s(""),
        s("héllo 日本 🎉 'q' \"dq\" \\ \n\t\x00"),
        PyValue::Bytes(vec![]),
        PyValue::Bytes((0u8..=255).collect()),
        PyValue::ByteArray(b"ba".to_vec()),
        PyValue::List(vec![]),
        PyValue::List((0..2500).map(PyValue::Int).collect()),
        PyValue::Tuple(vec![]),
        PyValue::Tuple(vec![PyValue::Int(1)]),
        PyValue::Tuple(vec![
            s("a"),
            PyValue::None,
            PyValue::Float(2.0),
            PyValue::Int(4),
        ]),
        PyValue::Dict(vec![]),
        PyValue::Dict(vec![
            (s("k"), PyValue::List(vec![PyValue::Int(1)])),
            (PyValue::Int(3), PyValue::Tuple(vec![PyValue::Int(4)])),
            (
                PyValue::Tuple(vec![PyValue::Int(1), PyValue::Int(2)]),
                s("t"),
            ),
        ]),
        PyValue::Set(vec![]),
        PyValue::Set(vec![PyValue::Int(1), PyValue::Int(2), PyValue::Int(3)]),
        PyValue::FrozenSet(vec![PyValue::Int(7)]),
        PyValue::FrozenSet(vec![]),
        PyValue::Date(Date {
            year: 2024,
            month: 2,
            day: 29,
        }),
        PyValue::DateTime(DateTime {
            date: Date {
                year: 2020,
                month: 1,
                day: 2,
            },
            hour: 3,
            minute: 4,
            second: 5,
            microsecond: 6,
            fold: 0,
        }),
        PyValue::TimeDelta(TimeDelta {
            days: -1,
            seconds: 5,
            microseconds: 7,
        }),
        PyValue::Decimal("3.14159265358979323846".into()),
        PyValue::Decimal("-Infinity".into()),
        PyValue::Scalar(NumpyScalar {
            dtype: f64_dtype.clone(),
            data: 2.5f64.to_le_bytes().to_vec(),
        }),
        PyValue::Scalar(NumpyScalar {
            dtype: DType::parse(">i2").unwrap(),
            data: vec![0xff, 0x00],
        }),
        PyValue::Scalar(NumpyScalar {
            dtype: DType::parse("|b1").unwrap(),
            data: vec![1],
        }),
        PyValue::Scalar(NumpyScalar {
            dtype: DType::parse("<U3").unwrap(),
            data: "ab\0"
                .chars()
                .flat_map(|c| (c as u32).to_le_bytes())
                .collect(),
        }),
        PyValue::Scalar(NumpyScalar {
            dtype: DType::parse("|S2").unwrap(),
            data: b"xy".to_vec(),
        }),
        PyValue::Scalar(NumpyScalar {
            dtype: DType::parse("<m8[s]").unwrap(),
            data: 5i64.to_le_bytes().to_vec(),
        }),
        PyValue::DType(DType::parse("<f4").unwrap()),
    ]
}

/// Nested arrays: numeric in C and Fortran order, an object array, 0-d.
fn nested_arrays() -> Vec<PyValue> {
    let f = Array::from_shape_vec((2, 3).f(), (0..6).map(|x| x as f64 * 0.5).collect())
        .unwrap()
        .into_dyn();
    vec![
        PyValue::Array(Arc::new(AnyArray::I64(
            ArrayD::from_shape_vec(IxDyn(&[3]), vec![1, -2, 3]).unwrap(),
        ))),
        PyValue::Array(Arc::new(AnyArray::F64(f))),
        PyValue::Array(Arc::new(AnyArray::U8(
            ArrayD::from_shape_vec(IxDyn(&[0]), vec![]).unwrap(),
        ))),
        PyValue::Array(Arc::new(AnyArray::Bool(arr0(true).into_dyn()))),
        PyValue::Array(Arc::new(AnyArray::Object(
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![s("in"), PyValue::Int(1)]).unwrap(),
        ))),
        PyValue::Array(Arc::new(AnyArray::C128(
            ArrayD::from_shape_vec(
                IxDyn(&[1]),
                vec![ndnpy::types::num_complex::Complex::new(1.0, -1.0)],
            )
            .unwrap(),
        ))),
        // Records: plain (aligned layout), and with an object field.
        PyValue::Array(Arc::new(AnyArray::Record(
            ndnpy::types::RecordArray::from_array(&ndarray::array![
                Point { x: 1.5, y: -2 },
                Point { x: 0.0, y: 7 }
            ]),
        ))),
        PyValue::Array(Arc::new(
            AnyArray::from_npy_bytes(include_bytes!(
                "../fixtures/pickle/record_with_object_p3.npy"
            ))
            .unwrap(),
        )),
    ]
}

ndnpy::record! {
    #[derive(Clone, Copy)]
    struct Point { x: f64, y: i16 }
}

fn reprs(a: &ArrayD<PyValue>) -> Value {
    Value::Array(
        a.iter()
            .map(|v| match v {
                PyValue::Array(_) => Value::Null,
                other => Value::String(other.to_string()),
            })
            .collect(),
    )
}

fn write_built(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let out = dir.join("built");
    fs::create_dir_all(&out)?;
    let mut manifest = Map::new();
    let mut put = |name: &str, a: ArrayD<PyValue>, fortran: bool| -> ndnpy::Result<()> {
        a.write_npy(out.join(format!("{name}.npy")))?;
        manifest.insert(
            name.to_string(),
            json!({"shape": a.shape(), "fortran": fortran, "reprs": reprs(&a)}),
        );
        Ok(())
    };
    let kinds = every_kind();
    put(
        "every_kind",
        ArrayD::from_shape_vec(IxDyn(&[kinds.len()]), kinds.clone())?,
        false,
    )?;
    let nested = nested_arrays();
    put(
        "nested_arrays",
        ArrayD::from_shape_vec(IxDyn(&[nested.len()]), nested)?,
        false,
    )?;
    let grid: Vec<PyValue> = (0..12).map(|i| s(&format!("cell{i}"))).collect();
    put(
        "fortran_3x4",
        Array::from_shape_vec((3, 4).f(), grid.clone())?.into_dyn(),
        true,
    )?;
    put(
        "c_2x2x3",
        Array::from_shape_vec((2, 2, 3), grid)?.into_dyn(),
        false,
    )?;
    put("zero_d", arr0(s("only")).into_dyn(), false)?;
    put(
        "empty_0x2",
        ArrayD::from_shape_vec(IxDyn(&[0, 2]), vec![])?,
        false,
    )?;
    let deep = (0..100).fold(PyValue::Int(0), |acc, _| PyValue::List(vec![acc]));
    put("deep_100", arr0(deep).into_dyn(), false)?;
    // Strings with missing values, written from `Option<String>` arrays.
    let texts = [
        Some("a"),
        None,
        Some("héllo 🎉"),
        Some(""),
        None,
        Some("'\""),
    ];
    let opt = |i: usize| texts[i % texts.len()].map(str::to_owned);
    let optional: Vec<ArrayD<Option<String>>> = vec![
        Array::from_shape_fn(6, opt).into_dyn(),
        Array::from_shape_fn((2, 3).f(), |(i, j)| opt(i * 3 + j)).into_dyn(),
        arr0(None).into_dyn(),
        ArrayD::from_shape_vec(IxDyn(&[0]), vec![])?,
    ];
    for (i, a) in optional.iter().enumerate() {
        a.write_npy(out.join(format!("optional_{i}.npy")))?;
        manifest.insert(
            format!("optional_{i}"),
            json!({"shape": a.shape(), "fortran": i == 1, "reprs": optional_reprs(a)}),
        );
    }
    // Object members next to a numeric one in an archive, through `add`.
    let mut npz = NpzWriter::create(out.join("archive.npz"))?;
    let names = ndarray::array![s("alpha"), PyValue::None, s("gamma")];
    npz.add("names", &names)?;
    npz.add("nums", &ndarray::array![1i64, 2, 3])?;
    let labels = ndarray::array![[Some("x".to_string())], [None]];
    npz.add("labels", &labels)?;
    npz.finish()?;
    manifest.insert(
        "archive.npz".into(),
        json!({"names": reprs(&names.into_dyn()), "labels": optional_reprs(&labels.into_dyn())}),
    );
    fs::write(
        dir.join("built.json"),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    Ok(())
}
