//! Arrow conversions: every NumPy type there and back, numbers without a
//! copy, validity masks, records as struct arrays, `.npz` ↔ record batch;
//! and the Arrow arrays pyarrow wrote (the Parquet fixtures, decoded by
//! Arrow's own reader) against what this crate's pandas reader gives.

use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch, StringViewArray};
use ndarray::ArrayD;
use ndnpy::{AnyArray, WriteNpy};
use ndnpy_parquet::arrow::{
    batch_to_npz, batch_to_records, from_arrow, from_arrow_owned, into_arrow, npz_to_batch,
    records_to_batch, to_arrow,
};
use std::sync::Arc;

fn d<T>(v: Vec<T>) -> ArrayD<T> {
    ndarray::Array1::from(v).into_dyn()
}

fn arr1<T: Clone>(v: &[T]) -> ndarray::Array1<T> {
    ndarray::Array1::from(v.to_vec())
}

#[test]
fn every_type_goes_there_and_back() {
    let cases = vec![
        AnyArray::Bool(d(vec![true, false, true])),
        AnyArray::I8(d(vec![-1i8, 0, 7])),
        AnyArray::I16(d(vec![-300i16, 0, 7])),
        AnyArray::I32(d(vec![i32::MIN, 0, 7])),
        AnyArray::I64(d(vec![i64::MAX, 0, 7])),
        AnyArray::U8(d(vec![255u8, 0, 7])),
        AnyArray::U16(d(vec![65535u16, 0, 7])),
        AnyArray::U32(d(vec![u32::MAX, 0, 7])),
        AnyArray::U64(d(vec![u64::MAX, 0, 7])),
        AnyArray::F16(d(vec![
            half::f16::from_f32(1.5),
            half::f16::ZERO,
            half::f16::NAN,
        ])),
        AnyArray::F32(d(vec![1.5f32, -0.0, f32::INFINITY])),
        AnyArray::F64(d(vec![1.5f64, f64::MIN_POSITIVE, -2.0])),
        AnyArray::Str(d(vec![
            "ä".to_owned(),
            String::new(),
            "long text".to_owned(),
        ])),
        AnyArray::Bytes(d(vec![b"\x00\xff".to_vec(), Vec::new(), b"abc".to_vec()])),
        AnyArray::Datetime64 {
            array: d(vec![0, 86_400, 1]),
            unit: Some("s".into()),
        },
        AnyArray::Datetime64 {
            array: d(vec![0, 1, i64::MIN + 1]),
            unit: Some("ns".into()),
        },
        AnyArray::Datetime64 {
            array: d(vec![0, 19_000, -1]),
            unit: Some("D".into()),
        },
        AnyArray::Timedelta64 {
            array: d(vec![0, -5, 5]),
            unit: Some("us".into()),
        },
        AnyArray::Timedelta64 {
            array: d(vec![0, -5, 5]),
            unit: Some("ms".into()),
        },
    ];
    for values in cases {
        let arrow = to_arrow(&values, None).unwrap();
        assert_eq!(arrow.len(), 3);
        let (back, validity) = from_arrow(arrow.as_ref()).unwrap();
        assert_eq!(validity, None, "{}", values.dtype());
        match (&back, &values) {
            (AnyArray::F16(a), AnyArray::F16(b)) => {
                assert_eq!(a.mapv(|x| x.to_bits()), b.mapv(|x| x.to_bits()))
            }
            _ => assert_eq!(back, values, "{}", values.dtype()),
        }
        // With a mask: the masked entry is null in Arrow and comes back
        // masked, holding a zero (NaT for times).
        let mask = [true, false, true];
        let arrow = to_arrow(&values, Some(&mask)).unwrap();
        assert!(arrow.is_null(1), "{}", values.dtype());
        let (_, validity) = from_arrow(arrow.as_ref()).unwrap();
        assert_eq!(validity.as_deref(), Some(&mask[..]), "{}", values.dtype());
    }
}

#[test]
fn nat_is_null_and_null_is_nat() {
    let t = AnyArray::Datetime64 {
        array: d(vec![5, i64::MIN]),
        unit: Some("ms".into()),
    };
    let arrow = to_arrow(&t, None).unwrap();
    assert!(arrow.is_null(1));
    let (back, validity) = from_arrow(arrow.as_ref()).unwrap();
    assert_eq!((back, validity), (t, Some(vec![true, false])));
}

#[test]
fn numbers_move_without_a_copy() {
    let v: Vec<f64> = (0..1000).map(f64::from).collect();
    let ptr = v.as_ptr();
    let arrow = into_arrow(
        AnyArray::F64(ArrayD::from_shape_vec(vec![1000], v).unwrap()),
        None,
    )
    .unwrap();
    let floats = arrow.as_any().downcast_ref::<Float64Array>().unwrap();
    assert_eq!(floats.values().as_ptr(), ptr, "into_arrow copied");
    let (back, _) = from_arrow_owned(arrow).unwrap();
    let AnyArray::F64(back) = back else { panic!() };
    assert_eq!(back.as_ptr(), ptr, "from_arrow_owned copied");
    // A buffer someone else holds is copied, not taken.
    let shared: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 2.0]));
    let keep = shared.clone();
    let (back, _) = from_arrow_owned(shared).unwrap();
    assert_eq!(back, AnyArray::F64(d(vec![1.0, 2.0])));
    assert_eq!(keep.len(), 2);
}

#[test]
fn other_string_layouts_read() {
    let view: ArrayRef = Arc::new(StringViewArray::from(vec![
        Some("a"),
        None,
        Some("a longer string than twelve"),
    ]));
    let (back, validity) = from_arrow(view.as_ref()).unwrap();
    assert_eq!(
        back,
        AnyArray::Str(d(vec![
            "a".into(),
            String::new(),
            "a longer string than twelve".into()
        ]))
    );
    assert_eq!(validity, Some(vec![true, false, true]));
}

#[test]
fn records_are_struct_arrays_and_batches() {
    ndnpy::record! {
        #[derive(Clone, Copy)]
        struct P { x: f64, id: i32, flag: bool, name: ndnpy::types::FixedUnicode<4> }
    }
    let p = |x, id, flag, name: &str| {
        let mut units = [0u32; 4];
        for (u, c) in units.iter_mut().zip(name.chars()) {
            *u = c as u32;
        }
        P {
            x,
            id,
            flag,
            name: ndnpy::types::FixedUnicode::new(units),
        }
    };
    let bytes = ndarray::arr1(&[p(0.5, 1, true, "ab"), p(-1.0, 2, false, "wxyz")])
        .to_npy_bytes()
        .unwrap();
    let AnyArray::Record(records) = AnyArray::from_npy_bytes(&bytes).unwrap() else {
        panic!()
    };
    let batch = records_to_batch(&records).unwrap();
    assert_eq!(batch.num_columns(), 4);
    assert_eq!(
        batch.schema().field(3).data_type(),
        &arrow_schema::DataType::Utf8
    );
    // Back as packed records (as `np.rec.fromarrays` packs them: the
    // struct's padding is not Arrow's to keep), field for field equal.
    let back = batch_to_records(&batch).unwrap();
    assert_eq!(back.names(), records.names());
    for name in records.names() {
        assert_eq!(
            back.field(name).unwrap(),
            records.field(name).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn an_npz_of_columns_is_a_record_batch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cols.npz");
    let mut w = ndnpy::NpzWriter::create(&path).unwrap();
    w.add("x", &arr1(&[1.0f64, 2.0, 3.0])).unwrap();
    w.add("n", &arr1(&[1i64, 2, 3])).unwrap();
    w.add_any(
        "s",
        &AnyArray::Str(d(vec!["a".into(), "bb".into(), "".into()])),
    )
    .unwrap();
    w.finish().unwrap();
    let batch = npz_to_batch(&path).unwrap();
    assert_eq!((batch.num_rows(), batch.num_columns()), (3, 3));
    let out = dir.path().join("back.npz");
    batch_to_npz(&batch, &out).unwrap();
    let mut a = ndnpy::NpzReader::open(&path).unwrap();
    let mut b = ndnpy::NpzReader::open(&out).unwrap();
    assert_eq!(a.names(), b.names());
    for n in a.names() {
        assert_eq!(a.read_any(&n).unwrap(), b.read_any(&n).unwrap(), "{n}");
    }
    // Nulls: NaN in floats; refused in integers.
    let nulls = RecordBatch::try_from_iter([(
        "f",
        Arc::new(Float64Array::from(vec![Some(1.0), None])) as ArrayRef,
    )])
    .unwrap();
    batch_to_npz(&nulls, &out).unwrap();
    let f = ndnpy::NpzReader::open(&out)
        .unwrap()
        .read::<f64, ndarray::Ix1>("f")
        .unwrap();
    assert!(f[1].is_nan());
    let ints = RecordBatch::try_from_iter([(
        "i",
        Arc::new(arrow_array::Int32Array::from(vec![Some(1), None])) as ArrayRef,
    )])
    .unwrap();
    assert_eq!(
        batch_to_npz(&ints, &out).unwrap_err().to_string(),
        "not supported: column `i` (<i4) has nulls, which an .npz member cannot hold"
    );
}

#[test]
fn what_arrow_cannot_hold_is_refused() {
    let two_d = AnyArray::F64(ArrayD::zeros(vec![2, 2]));
    assert_eq!(
        to_arrow(&two_d, None).unwrap_err().to_string(),
        "not supported: an array of shape [2, 2]: Arrow arrays are one-dimensional"
    );
    let f = AnyArray::F64(d(vec![1.0, 2.0]));
    assert_eq!(
        to_arrow(&f, Some(&[true])).unwrap_err().to_string(),
        "not supported: a validity mask of 1 entries for 2 values"
    );
    let years = AnyArray::Datetime64 {
        array: d(vec![1]),
        unit: Some("Y".into()),
    };
    assert!(to_arrow(&years, None)
        .unwrap_err()
        .to_string()
        .contains("datetime64[Y]"));
    let list: ArrayRef = Arc::new(arrow_array::ListArray::new_null(
        Arc::new(arrow_schema::Field::new(
            "item",
            arrow_schema::DataType::Int32,
            true,
        )),
        2,
    ));
    assert!(from_arrow(list.as_ref())
        .unwrap_err()
        .to_string()
        .starts_with("not supported: Arrow type List"));
}

/// The Parquet fixtures pandas (pyarrow) wrote, decoded by Arrow's own
/// Parquet reader: every plain column converts to the values this crate's
/// pandas reader gives.
#[test]
fn pyarrow_columns_convert_as_the_pandas_reader_reads_them() {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/parquet/valid");
    let mut compared = 0;
    for name in ["numeric", "strings", "datetimes", "nullable", "row_groups"] {
        let path = dir.join(format!("{name}.parquet"));
        let frame = ndnpy_parquet::Frame::read(&path).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
        let batch = arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap();
        for column in frame.columns() {
            let ndnpy_parquet::Values::Array(want) = column.values() else {
                continue;
            };
            let Some(arrow) = batch.column_by_name(column.name().unwrap_or("")) else {
                continue;
            };
            let Ok((got, validity)) = from_arrow(arrow.as_ref()) else {
                continue;
            };
            assert_eq!(
                validity.as_deref(),
                column.validity(),
                "{name}:{:?}",
                column.name()
            );
            let same = match (&got, want) {
                (AnyArray::Datetime64 { array: a, .. }, AnyArray::Datetime64 { array: b, .. }) => {
                    a == b
                }
                (AnyArray::F64(a), AnyArray::F64(b)) => a.iter().zip(b).all(|(x, y)| {
                    x == y || (x.is_nan() && y.is_nan()) || (*x == 0.0 && y.is_nan())
                }),
                _ => &got == want,
            };
            assert!(same, "{name}:{:?}: {got:?} vs {want:?}", column.name());
            compared += 1;
        }
    }
    assert!(compared >= 10, "only {compared} columns compared");
}

/// Slices (buffers that start inside an allocation) convert to their own
/// values, never the allocation's; buffers shorter than their length are
/// refused by Arrow's own validation before any conversion sees them.
#[test]
fn sliced_and_truncated_buffers() {
    let whole: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0, 4.0]));
    let part = whole.slice(1, 2);
    let want = AnyArray::F64(d(vec![2.0, 3.0]));
    assert_eq!(from_arrow(part.as_ref()).unwrap().0, want);
    drop(whole);
    assert_eq!(from_arrow_owned(part).unwrap().0, want);
    let strings: ArrayRef = Arc::new(arrow_array::StringArray::from(vec!["a", "bc", "def"]));
    let (s, _) = from_arrow(strings.slice(1, 2).as_ref()).unwrap();
    assert_eq!(s, AnyArray::Str(d(vec!["bc".into(), "def".into()])));
    let short = arrow_data::ArrayData::builder(arrow_schema::DataType::Float64)
        .len(4)
        .add_buffer(arrow_buffer::Buffer::from_vec(vec![1.0f64, 2.0]))
        .build();
    assert!(short.is_err(), "Arrow accepted a buffer of 2 values for 4");
}

/// pyarrow as the producer: every column of `fixtures/arrow/table.arrow`
/// (`scripts/gen_arrow_fixtures.py`) converts to what NumPy holds for it
/// (`table.expected.npz`: values with nulls filled, `NAME.valid` masks).
/// With `NDNPY_INTEROP_OUT` (CI), also writes those NumPy arrays back as
/// an Arrow IPC file for `scripts/interop_formats.py` to compare in pyarrow.
#[test]
fn pyarrow_ipc_columns_read_as_numpy_holds_them() {
    // The committed fixtures, or (CI) ones the current pyarrow wrote.
    let dir = match std::env::var_os("NDNPY_ARROW_FIXTURES") {
        Some(d) => std::path::PathBuf::from(d),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/arrow"),
    };
    let file = std::fs::File::open(dir.join("table.arrow")).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    let mut expected = ndnpy::NpzReader::open(dir.join("table.expected.npz")).unwrap();
    let mut checked = 0;
    let mut fields: Vec<(String, ArrayRef)> = Vec::new();
    for batch in &batches {
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            let name = field.name();
            let (got, validity) = from_arrow(column.as_ref()).unwrap();
            if let AnyArray::Record(r) = &got {
                for f in r.names() {
                    let want = expected.read_any(&format!("{name}.{f}")).unwrap();
                    assert_eq!(r.field(f).unwrap(), want, "{name}.{f}");
                }
                checked += 1;
                continue;
            }
            let want = expected.read_any(name).unwrap();
            let same = match (&got, &want) {
                (AnyArray::F16(a), AnyArray::F16(b)) => {
                    a.mapv(|x| x.to_bits()) == b.mapv(|x| x.to_bits())
                }
                (AnyArray::F32(a), AnyArray::F32(b)) => a
                    .iter()
                    .zip(b)
                    .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())),
                _ => got == want,
            };
            assert!(same, "{name}: {got:?} vs {want:?}");
            let want_valid = expected
                .read::<bool, ndarray::Ix1>(&format!("{name}.valid"))
                .ok()
                .map(|v| v.to_vec());
            assert_eq!(validity, want_valid, "{name}: validity");
            fields.push((
                name.clone(),
                to_arrow(&want, want_valid.as_deref()).unwrap(),
            ));
            checked += 1;
        }
    }
    assert_eq!(checked, 23);
    if let Some(out) = std::env::var_os("NDNPY_INTEROP_OUT") {
        let out = std::path::PathBuf::from(out);
        std::fs::create_dir_all(&out).unwrap();
        let batch = RecordBatch::try_from_iter(fields).unwrap();
        let file = std::fs::File::create(out.join("ours.arrow")).unwrap();
        let mut w = arrow_ipc::writer::FileWriter::try_new(file, &batch.schema()).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
    }
}

/// An owned array that is a slice of its allocation converts to its own
/// elements only.
#[test]
fn owned_slices_convert_to_their_own_elements() {
    let mut a = ndarray::Array1::from(vec![1.0f64, 2.0, 3.0, 4.0]);
    a.slice_collapse(ndarray::s![1..3]);
    let arrow = into_arrow(AnyArray::F64(a.into_dyn()), Some(&[true, false])).unwrap();
    let floats = arrow.as_any().downcast_ref::<Float64Array>().unwrap();
    assert_eq!(
        (floats.len(), floats.value(0), floats.is_null(1)),
        (2, 2.0, true)
    );
}

/// Latin-1 field names survive the trip into records (a version 1 header
/// is Latin-1, not UTF-8); others are refused.
#[test]
fn field_names_keep_their_letters() {
    let batch = RecordBatch::try_from_iter([
        ("é", Arc::new(Float64Array::from(vec![1.0])) as ArrayRef),
        ("x", Arc::new(Float64Array::from(vec![2.0])) as ArrayRef),
    ])
    .unwrap();
    assert_eq!(batch_to_records(&batch).unwrap().names(), ["é", "x"]);
    let batch =
        RecordBatch::try_from_iter([("名", Arc::new(Float64Array::from(vec![1.0])) as ArrayRef)])
            .unwrap();
    assert!(batch_to_records(&batch)
        .unwrap_err()
        .to_string()
        .contains("Latin-1"));
}
