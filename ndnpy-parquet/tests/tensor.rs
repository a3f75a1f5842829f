//! N-dimensional arrays as `arrow.fixed_shape_tensor` columns: every
//! element type there and back, layouts (Fortran order, slices,
//! permutations), nulls, `.npz` ↔ record batch ↔ Parquet, and hostile
//! extension metadata (clear errors naming the column, no panic).

use arrow_array::{Array, ArrayRef, FixedSizeListArray, Float32Array, Int32Array, RecordBatch};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Schema};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use ndnpy::AnyArray;
use ndnpy_parquet::arrow::{
    batch_to_npz, from_tensor, into_tensor, is_tensor, npz_to_batch, read_parquet, write_parquet,
};
use ndnpy_parquet::Error;
use std::collections::HashMap;
use std::sync::Arc;

fn nd<T: Clone>(shape: &[usize], f: impl Fn(usize) -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(f).collect()).unwrap()
}

fn roundtrip(a: &AnyArray) -> AnyArray {
    let (field, column) = into_tensor("t", a.clone()).unwrap();
    assert!(is_tensor(&field));
    assert_eq!(column.len(), a.shape()[0]);
    let (back, validity) = from_tensor(&field, column).unwrap();
    assert_eq!(validity, None);
    back
}

#[test]
fn every_element_type_goes_there_and_back() {
    let s = [3usize, 2, 4];
    let cases = vec![
        AnyArray::Bool(nd(&s, |i| i % 3 == 0)),
        AnyArray::I8(nd(&s, |i| i as i8 - 12)),
        AnyArray::I16(nd(&s, |i| (i as i16 - 12) * 300)),
        AnyArray::I32(nd(&s, |i| i as i32 * 70_000)),
        AnyArray::I64(nd(&s, |i| i as i64 * (i64::MAX / 30))),
        AnyArray::U8(nd(&s, |i| i as u8 * 10)),
        AnyArray::U16(nd(&s, |i| i as u16 * 2000)),
        AnyArray::U32(nd(&s, |i| i as u32 * 100_000_000)),
        AnyArray::U64(nd(&s, |i| u64::MAX - i as u64)),
        AnyArray::F16(nd(&s, |i| half::f16::from_f32(i as f32 / 4.0))),
        AnyArray::F32(nd(&s, |i| i as f32 * -0.5)),
        AnyArray::F64(nd(&s, |i| (i as f64).sqrt())),
        AnyArray::Str(nd(&s, |i| "ä".repeat(i % 4))),
        AnyArray::Bytes(nd(&s, |i| vec![i as u8; i % 3])),
        AnyArray::Datetime64 {
            array: nd(&s, |i| i as i64 * 1_000),
            unit: Some("ms".into()),
        },
        AnyArray::Datetime64 {
            array: nd(&s, |i| i as i64 - 5),
            unit: Some("D".into()),
        },
        AnyArray::Timedelta64 {
            array: nd(&s, |i| i as i64),
            unit: Some("ns".into()),
        },
    ];
    for a in cases {
        assert_eq!(roundtrip(&a), a, "{}", a.dtype());
    }
}

#[test]
fn shapes_from_two_to_five_dimensions_and_empty_ones() {
    for shape in [
        vec![4, 1],
        vec![2, 3, 224, 5],
        vec![2, 1, 2, 1, 3],
        vec![0, 3, 4],
        vec![5, 0],
        vec![3, 2, 0, 4],
    ] {
        let a = AnyArray::F32(nd(&shape, |i| i as f32));
        let back = roundtrip(&a);
        assert_eq!(back.shape(), &shape[..]);
        assert_eq!(back, a, "{shape:?}");
    }
}

#[test]
fn one_dimensional_arrays_records_and_complex_are_refused() {
    let err = into_tensor("v", AnyArray::I32(nd(&[4], |i| i as i32))).unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported { column, .. } if column == "v"),
        "{err}"
    );
    assert!(err.to_string().contains("two or more dimensions"), "{err}");
    ndnpy::record! {
        #[derive(Clone, Copy)]
        struct P { x: f32 }
    }
    let records = ndnpy::types::RecordArray::from_array(&nd(&[2, 2], |i| P { x: i as f32 }));
    let err = into_tensor("c", AnyArray::Record(records)).unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported { column, .. } if column == "c"),
        "{err}"
    );
}

#[test]
fn fortran_order_and_views_are_written_in_c_order() {
    let c = nd(&[3, 4, 5], |i| i as f64);
    let mut f = ArrayD::<f64>::zeros(IxDyn(&[3, 4, 5]).f());
    f.assign(&c);
    assert!(!f.is_standard_layout());
    let (_, column) = into_tensor("f", AnyArray::F64(f.clone())).unwrap();
    let list = column
        .as_any()
        .downcast_ref::<FixedSizeListArray>()
        .unwrap();
    let values = list
        .values()
        .as_any()
        .downcast_ref::<arrow_array::Float64Array>()
        .unwrap();
    // C order: the second row starts at c[1, 0, 0] = 20.
    assert_eq!(
        values.values()[..],
        c.iter().copied().collect::<Vec<_>>()[..]
    );
    assert_eq!(
        list.value(1)
            .as_any()
            .downcast_ref::<arrow_array::Float64Array>()
            .unwrap()
            .value(0),
        20.0
    );
    assert_eq!(roundtrip(&AnyArray::F64(f)), AnyArray::F64(c.clone()));
    // A transposed and sliced view.
    let view = c.view().permuted_axes(IxDyn(&[0, 2, 1]));
    let view = view.slice_each_axis(|ax| {
        ndarray::Slice::new(0, None, if ax.axis.index() == 2 { 2 } else { 1 })
    });
    let owned = view.to_owned();
    assert_eq!(
        roundtrip(&AnyArray::F64(
            view.to_owned().reversed_axes().reversed_axes()
        )),
        AnyArray::F64(owned)
    );
}

/// A tensor column of `rows` rows of `inner` f32 values `0..`, with
/// `metadata` as its extension metadata.
fn column_with(metadata: &str, inner: i32, rows: usize) -> (Field, ArrayRef) {
    let values = Float32Array::from_iter_values((0..rows * inner as usize).map(|i| i as f32));
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let list = FixedSizeListArray::try_new(item, inner, Arc::new(values), None).unwrap();
    let field = Field::new("img", list.data_type().clone(), true).with_metadata(HashMap::from([
        (
            "ARROW:extension:name".to_owned(),
            "arrow.fixed_shape_tensor".to_owned(),
        ),
        ("ARROW:extension:metadata".to_owned(), metadata.to_owned()),
    ]));
    (field, Arc::new(list))
}

#[test]
fn a_permutation_reads_as_pyarrows_to_numpy_ndarray_and_dim_names_are_accepted() {
    // pyarrow: shape (3, 4) with permutation [1, 0] reads as (n, 4, 3),
    // the physical rows transposed.
    let (field, column) = column_with(r#"{"shape": [3, 4], "permutation": [1, 0]}"#, 12, 2);
    let (back, _) = from_tensor(&field, column).unwrap();
    let physical = nd(&[2, 3, 4], |i| i as f32);
    let expected = physical.permuted_axes(IxDyn(&[0, 2, 1]));
    assert_eq!(back.shape(), &[2, 4, 3]);
    assert_eq!(back, AnyArray::F32(expected));

    let (field, column) = column_with(
        r#"{"shape": [2, 3, 2], "permutation": [2, 0, 1], "dim_names": ["C", "H", "W"]}"#,
        12,
        3,
    );
    let (back, _) = from_tensor(&field, column).unwrap();
    let expected = nd(&[3, 2, 3, 2], |i| i as f32).permuted_axes(IxDyn(&[0, 3, 1, 2]));
    assert_eq!(back, AnyArray::F32(expected));
}

#[test]
fn a_sliced_column_reads_its_own_rows() {
    let (field, column) = into_tensor("s", AnyArray::I32(nd(&[5, 2, 2], |i| i as i32))).unwrap();
    let (back, _) = from_tensor(&field, column.slice(2, 2)).unwrap();
    assert_eq!(back, AnyArray::I32(nd(&[2, 2, 2], |i| i as i32 + 8)));
}

#[test]
fn null_rows_and_null_elements_read_into_the_mask() {
    let values = Int32Array::from(vec![Some(0), Some(1), None, Some(3), Some(4), Some(5)]);
    let item = Arc::new(Field::new("item", DataType::Int32, true));
    let nulls = NullBuffer::from(vec![true, true, false]);
    let list = FixedSizeListArray::try_new(item, 2, Arc::new(values), Some(nulls)).unwrap();
    let field = Field::new("m", list.data_type().clone(), true).with_metadata(HashMap::from([
        (
            "ARROW:extension:name".to_owned(),
            "arrow.fixed_shape_tensor".to_owned(),
        ),
        (
            "ARROW:extension:metadata".to_owned(),
            r#"{"shape":[2,1]}"#.to_owned(),
        ),
    ]));
    let (back, validity) = from_tensor(&field, Arc::new(list.clone())).unwrap();
    assert_eq!(back.shape(), &[3, 2, 1]);
    assert_eq!(validity, Some(vec![true, true, false, true, false, false]));
    // The null row's slots (4 and 5 underneath) hold zeros, as a 1-D
    // column's nulls do.
    assert_eq!(
        back,
        AnyArray::I32(nd(&[3, 2, 1], |i| [0, 1, 0, 3, 0, 0][i]))
    );

    // Integers with nulls have no .npz member; the error names the column.
    let dir = tempfile::tempdir().unwrap();
    let batch =
        RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![Arc::new(list)]).unwrap();
    let err = batch_to_npz(&batch, dir.path().join("m.npz")).unwrap_err();
    assert!(err.to_string().contains("`m`"), "{err}");
}

#[test]
fn null_floats_become_nan_in_the_npz_as_for_1d_columns() {
    let values = Float32Array::from(vec![Some(0.5), None, Some(2.5), Some(3.5)]);
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let list = FixedSizeListArray::try_new(item, 2, Arc::new(values), None).unwrap();
    let field = Field::new("f", list.data_type().clone(), true).with_metadata(HashMap::from([
        (
            "ARROW:extension:name".to_owned(),
            "arrow.fixed_shape_tensor".to_owned(),
        ),
        (
            "ARROW:extension:metadata".to_owned(),
            r#"{"shape":[2]}"#.to_owned(),
        ),
    ]));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.npz");
    let batch =
        RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![Arc::new(list)]).unwrap();
    batch_to_npz(&batch, &path).unwrap();
    let f = ndnpy::NpzReader::open(&path)
        .unwrap()
        .read::<f32, ndarray::Ix2>("f")
        .unwrap();
    assert_eq!(f.shape(), &[2, 2]);
    assert!(f[[0, 1]].is_nan() && f[[1, 1]] == 3.5);
}

#[test]
fn npz_batch_and_parquet_round_trip_with_tensor_and_plain_columns() {
    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("in.npz");
    let images = nd(&[6, 3, 4, 2], |i| (i % 251) as u8);
    let labels = nd(&[6], |i| i as i64);
    let emb = nd(&[6, 8], |i| i as f32 / 8.0);
    let mut w = ndnpy::NpzWriter::create(&npz).unwrap();
    w.add_any("images", &AnyArray::U8(images.clone())).unwrap();
    w.add_any("labels", &AnyArray::I64(labels.clone())).unwrap();
    w.add_any("emb", &AnyArray::F32(emb.clone())).unwrap();
    w.finish().unwrap();

    let batch = npz_to_batch(&npz).unwrap();
    assert_eq!(batch.num_rows(), 6);
    let schema = batch.schema();
    assert!(
        is_tensor(schema.field(0)) && !is_tensor(schema.field(1)) && is_tensor(schema.field(2))
    );
    assert_eq!(
        schema.field(0).metadata()["ARROW:extension:metadata"],
        r#"{"shape":[3,4,2]}"#
    );

    let parquet = dir.path().join("t.parquet");
    write_parquet(&batch, &parquet).unwrap();
    let back = read_parquet(&parquet, &Default::default()).unwrap();
    assert_eq!(back.schema(), batch.schema());
    assert_eq!(back, batch);

    let out = dir.path().join("out.npz");
    batch_to_npz(&back, &out).unwrap();
    let mut z = ndnpy::NpzReader::open(&out).unwrap();
    assert_eq!(z.read_any("images").unwrap(), AnyArray::U8(images));
    assert_eq!(z.read_any("labels").unwrap(), AnyArray::I64(labels));
    assert_eq!(z.read_any("emb").unwrap(), AnyArray::F32(emb));
}

#[test]
fn members_of_different_first_axes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("bad.npz");
    let mut w = ndnpy::NpzWriter::create(&npz).unwrap();
    w.add_any("a", &AnyArray::F64(nd(&[3, 2], |i| i as f64)))
        .unwrap();
    w.add_any("b", &AnyArray::F64(nd(&[4], |i| i as f64)))
        .unwrap();
    w.finish().unwrap();
    let err = npz_to_batch(&npz).unwrap_err();
    assert!(
        err.to_string().contains("member `b` has 4 rows and `a` 3"),
        "{err}"
    );
}

#[test]
fn read_parquet_keeps_to_its_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (field, column) =
        into_tensor("z", AnyArray::F64(ArrayD::zeros(IxDyn(&[1000, 64])))).unwrap();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![column]).unwrap();
    let path = dir.path().join("z.parquet");
    write_parquet(&batch, &path).unwrap();
    let small = ndnpy_parquet::ReadOptions {
        max_bytes: Some(100_000),
    };
    let err = read_parquet(&path, &small).unwrap_err();
    assert!(
        matches!(err, Error::TooLarge { limit: 100_000, .. }),
        "{err}"
    );
}

#[test]
fn hostile_metadata_gives_clear_errors_naming_the_column() {
    let cases: &[(&str, &str)] = &[
        ("not json", "not JSON"),
        ("[3, 4]", "not a JSON object"),
        ("{}", "no `shape`"),
        (r#"{"shape": 12}"#, "not a list"),
        (r#"{"shape": [3, -4]}"#, "not a non-negative integer"),
        (r#"{"shape": [3, 4.5]}"#, "not a non-negative integer"),
        (r#"{"shape": ["3", 4]}"#, "not a non-negative integer"),
        (r#"{"shape": [5, 3]}"#, "holds 15 values a row"),
        (
            r#"{"shape": [4294967296, 4294967296, 16]}"#,
            "more than usize::MAX",
        ),
        (
            r#"{"shape": [18446744073709551615]}"#,
            "holds 18446744073709551615 values",
        ),
        (r#"{"shape": [1e300]}"#, "not a non-negative integer"),
        (
            r#"{"shape": [3, 4], "permutation": [0, 0]}"#,
            "not a permutation",
        ),
        (
            r#"{"shape": [3, 4], "permutation": [1, 2]}"#,
            "not a permutation",
        ),
        (
            r#"{"shape": [3, 4], "permutation": [1]}"#,
            "not a permutation",
        ),
        (
            r#"{"shape": [3, 4], "permutation": [-1, 0]}"#,
            "not a non-negative integer",
        ),
        (r#"{"shape": [3, 4], "permutation": "01"}"#, "not a list"),
        (r#"{"shape": [3, 4], "dim_names": ["H"]}"#, "`dim_names`"),
        (r#"{"shape": [3, 4], "dim_names": ["H", 1]}"#, "`dim_names`"),
    ];
    for (metadata, expected) in cases {
        let (field, column) = column_with(metadata, 12, 2);
        let err = from_tensor(&field, column).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("`img`"), "{metadata}: {text}");
        assert!(text.contains(expected), "{metadata}: {text}");
    }
    // A size-0 list whose shape multiplies to 0 but whose dimensions overflow
    // together with the row count: an error, not an allocation or a panic.
    let (field, column) = column_with(r#"{"shape": [0, 4611686018427387904, 4]}"#, 0, 0);
    let err = from_tensor(&field, column).unwrap_err();
    assert!(err.to_string().contains("`img`"), "{err}");
}

#[test]
fn fields_that_are_not_tensors_are_refused() {
    let (field, column) = column_with(r#"{"shape":[12]}"#, 12, 1);
    let plain = Field::new("img", field.data_type().clone(), true);
    let err = from_tensor(&plain, column.clone()).unwrap_err();
    assert!(
        err.to_string().contains("arrow.fixed_shape_tensor"),
        "{err}"
    );
    // Extension name, but no metadata.
    let mut m = field.metadata().clone();
    m.remove("ARROW:extension:metadata");
    let err = from_tensor(&field.clone().with_metadata(m), column).unwrap_err();
    assert!(err.to_string().contains("`img`"), "{err}");
    // Extension name on an Int32 column.
    let ints: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    let f = Field::new("img", DataType::Int32, true).with_metadata(field.metadata().clone());
    let err = from_tensor(&f, ints).unwrap_err();
    assert!(err.to_string().contains("not a FixedSizeList"), "{err}");
}

#[test]
fn numbers_in_standard_layout_move_without_a_copy_both_ways() {
    let x = nd(&[64, 4, 4], |i| i as f32);
    let ptr = x.as_ptr();
    let (field, column) = into_tensor("x", AnyArray::F32(x)).unwrap();
    let list = column
        .as_any()
        .downcast_ref::<FixedSizeListArray>()
        .unwrap();
    let values = list
        .values()
        .as_any()
        .downcast_ref::<Float32Array>()
        .unwrap();
    assert_eq!(values.values().as_ptr(), ptr, "into_tensor copied");
    let (back, _) = from_tensor(&field, column).unwrap();
    let AnyArray::F32(back) = back else {
        panic!("{}", back.dtype())
    };
    assert_eq!(back.as_ptr(), ptr, "from_tensor copied");
}

fn parquet_fixture(dir: &str, name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../fixtures/parquet/{dir}/{name}.parquet"))
}

#[test]
fn read_parquet_refuses_what_frame_read_refuses_without_allocating_it() {
    // 40 bytes of dictionary page claiming 1389363199 int64 entries.
    match read_parquet(
        parquet_fixture("hostile", "fuzz_dictionary_count"),
        &Default::default(),
    ) {
        Err(Error::Parquet(msg)) => assert!(msg.contains("claims 1389363199 entries"), "{msg}"),
        other => panic!("expected Error::Parquet, got {other:?}"),
    }
    // parquet 60 panics on this footer; the panic is an error here too.
    match read_parquet(
        parquet_fixture("hostile", "fuzz_negative_column_start"),
        &Default::default(),
    ) {
        Err(Error::Parquet(msg)) => assert!(msg.contains("negative"), "{msg}"),
        other => panic!("expected Error::Parquet, got {other:?}"),
    }
    // A footer whose rows already exceed the limit: refused before decoding.
    let small = ndnpy_parquet::ReadOptions {
        max_bytes: Some(10_000),
    };
    let err = read_parquet(parquet_fixture("valid", "row_groups"), &small).unwrap_err();
    assert!(
        matches!(err, Error::TooLarge { limit: 10_000, .. }),
        "{err}"
    );
}

#[test]
fn corrupt_tensor_files_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let x = AnyArray::F32(nd(&[40, 3, 2], |i| i as f32));
    let (field, column) = into_tensor("x", x).unwrap();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![column]).unwrap();
    let good = dir.path().join("good.parquet");
    write_parquet(&batch, &good).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let bad = dir.path().join("bad.parquet");
    let opts = ndnpy_parquet::ReadOptions {
        max_bytes: Some(64 << 20),
    };
    for len in (0..bytes.len()).step_by(7) {
        std::fs::write(&bad, &bytes[..len]).unwrap();
        assert!(read_parquet(&bad, &opts).is_err(), "truncated to {len}");
    }
    let step = (bytes.len() / 150).max(1);
    for pos in (0..bytes.len()).step_by(step) {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[pos] ^= flip;
            std::fs::write(&bad, &b).unwrap();
            // Either an error or a batch; when a batch, its tensor column
            // reads or is refused, never a panic.
            if let Ok(batch) = read_parquet(&bad, &opts) {
                let schema = batch.schema();
                for (f, c) in schema.fields().iter().zip(batch.columns()) {
                    if is_tensor(f) {
                        let _ = from_tensor(f, c.clone());
                    }
                }
            }
        }
    }
}

/// pyarrow as the producer: `fixtures/arrow/tensor.{arrow,parquet}`
/// (scripts/gen_tensor_fixtures.py) read equal to pyarrow's own
/// `to_numpy_ndarray()`, saved beside them.
#[test]
fn pyarrow_tensor_columns_read_equal_to_to_numpy_ndarray() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/arrow");
    let mut expected = ndnpy::NpzReader::open(dir.join("tensor.expected.npz")).unwrap();
    let file = std::fs::File::open(dir.join("tensor.arrow")).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    let ipc = arrow_select::concat::concat_batches(&schema, &batches).unwrap();
    let parquet = read_parquet(dir.join("tensor.parquet"), &Default::default()).unwrap();
    for batch in [ipc, parquet] {
        let schema = batch.schema();
        assert_eq!(schema.fields().len(), 5);
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            let want = expected.read_any(field.name()).unwrap();
            let got = if is_tensor(field) {
                let (got, validity) = from_tensor(field, column.clone()).unwrap();
                assert_eq!(validity, None);
                got
            } else {
                assert_eq!(field.name(), "plain");
                ndnpy_parquet::arrow::from_arrow(column.as_ref()).unwrap().0
            };
            assert_eq!(got, want, "{}", field.name());
        }
        // And on to an .npz: the members np.load would give.
        let out = tempfile::tempdir().unwrap();
        batch_to_npz(&batch, out.path().join("t.npz")).unwrap();
        let mut z = ndnpy::NpzReader::open(out.path().join("t.npz")).unwrap();
        assert_eq!(
            z.read_any("perm").unwrap(),
            expected.read_any("perm").unwrap()
        );
        assert_eq!(z.read_any("perm").unwrap().shape(), &[4, 3, 2]);
    }
}

#[test]
fn a_null_row_of_datetimes_reads_as_nat() {
    let values = arrow_array::TimestampMillisecondArray::from(vec![1, 2, 3, 4]);
    let item = Arc::new(Field::new("item", values.data_type().clone(), true));
    let nulls = NullBuffer::from(vec![false, true]);
    let list = FixedSizeListArray::try_new(item, 2, Arc::new(values), Some(nulls)).unwrap();
    let field = Field::new("t", list.data_type().clone(), true).with_metadata(HashMap::from([
        (
            "ARROW:extension:name".to_owned(),
            "arrow.fixed_shape_tensor".to_owned(),
        ),
        (
            "ARROW:extension:metadata".to_owned(),
            r#"{"shape":[2]}"#.to_owned(),
        ),
    ]));
    let (back, validity) = from_tensor(&field, Arc::new(list)).unwrap();
    assert_eq!(validity, Some(vec![false, false, true, true]));
    let want = AnyArray::Datetime64 {
        array: nd(&[2, 2], |i| [i64::MIN, i64::MIN, 3, 4][i]),
        unit: Some("ms".into()),
    };
    assert_eq!(back, want);
}

#[test]
fn a_parquet_file_of_several_batches_reads_as_one() {
    let dir = tempfile::tempdir().unwrap();
    // 9000 rows: three batches of at most 4096 rows on reading.
    let x = AnyArray::I16(nd(&[9000, 2, 3], |i| (i % 30000) as i16));
    let (field, column) = into_tensor("x", x.clone()).unwrap();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![column]).unwrap();
    let path = dir.path().join("x.parquet");
    write_parquet(&batch, &path).unwrap();
    let back = read_parquet(&path, &Default::default()).unwrap();
    let schema = back.schema();
    let (values, _) = from_tensor(schema.field(0), back.column(0).clone()).unwrap();
    assert_eq!(values, x);
}
