//! Issue 30 in the Arrow bridge: `NaT` in an `.npz` of columns becomes a
//! null, as pyarrow makes it, and Arrow arrays whose length no buffer backs
//! (`Null`, `FixedSizeBinary(0)`, structs without fields) cost nothing in
//! proportion to that length.
//!
//! A counting global allocator records the largest single request (a
//! refused one counts too); tests are serialised by a lock so that their
//! measurements do not mix.

use arrow_array::{Array, ArrayRef, FixedSizeBinaryArray, NullArray, StructArray};
use arrow_schema::DataType;
use ndnpy::AnyArray;
use ndnpy_parquet::arrow::{from_arrow, from_arrow_owned, npz_to_batch};
use ndnpy_parquet::Error;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

struct Counting;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` unchanged; the counter is an
// atomic and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), SeqCst);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), SeqCst);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, SeqCst);
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

static SERIAL: Mutex<()> = Mutex::new(());

/// `f`'s result and the largest single allocation request it made.
fn largest<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.store(0, SeqCst);
    let out = f();
    (out, LARGEST.load(SeqCst))
}

fn times(variant: &str, values: Vec<i64>, unit: &str) -> AnyArray {
    let array = ndarray::Array1::from(values).into_dyn();
    let unit = Some(unit.to_owned());
    match variant {
        "M" => AnyArray::Datetime64 { array, unit },
        _ => AnyArray::Timedelta64 { array, unit },
    }
}

#[test]
fn nat_in_an_npz_of_columns_is_null_in_a_nullable_field() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.npz");
    let mut w = ndnpy::NpzWriter::create(&path).unwrap();
    // pa.array(np.array(['2024-01-01', 'NaT', ...], 'M8[ns]')) is
    // [2024-01-01, null, ...]; the same for timedelta64.
    let nat = i64::MIN;
    w.add_any(
        "t",
        &times("M", vec![1_704_067_200 * 1_000_000_000, nat, 0], "ns"),
    )
    .unwrap();
    w.add_any("d", &times("m", vec![nat, 5, nat], "s")).unwrap();
    w.add_any("day", &times("M", vec![19_723, 0, nat], "D"))
        .unwrap();
    w.add("x", &ndarray::arr1(&[1.0f64, f64::NAN, 3.0]))
        .unwrap();
    w.finish().unwrap();

    let batch = npz_to_batch(&path).unwrap();
    assert_eq!(batch.num_rows(), 3);
    for (name, nulls) in [
        ("t", vec![false, true, false]),
        ("d", vec![true, false, true]),
        ("day", vec![false, false, true]),
        // A NaN is a value, as in pyarrow (from_pandas aside).
        ("x", vec![false, false, false]),
    ] {
        let schema = batch.schema();
        let (index, field) = schema.column_with_name(name).unwrap();
        assert!(field.is_nullable(), "{name}");
        let column = batch.column(index);
        let found: Vec<bool> = (0..3).map(|i| column.is_null(i)).collect();
        assert_eq!(found, nulls, "{name}");
    }
    assert_eq!(
        batch.schema().field(0).data_type(),
        &DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, None)
    );
}

#[test]
fn columns_of_different_lengths_are_named_not_blamed_on_parquet() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ragged.npz");
    let mut w = ndnpy::NpzWriter::create(&path).unwrap();
    w.add("a", &ndarray::arr1(&[1i32, 2])).unwrap();
    w.add("b", &ndarray::arr1(&[1i32, 2, 3])).unwrap();
    w.finish().unwrap();
    let err = npz_to_batch(&path).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "invalid frame: member `b` has 3 rows and `a` 2: the columns of a record batch are \
         all of one length"
    );
    // A member Arrow cannot hold is named (a 2-D one is a tensor column
    // since issue 40; years have no Arrow timestamp unit).
    let mut w = ndnpy::NpzWriter::create(&path).unwrap();
    let years = AnyArray::Datetime64 {
        array: ndarray::arr1(&[1i64]).into_dyn(),
        unit: Some("Y".into()),
    };
    w.add_any("m", &years).unwrap();
    w.finish().unwrap();
    let err = npz_to_batch(&path).unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported { column, .. } if column == "m"),
        "{err:?}"
    );
}

/// Arrays of `len` values that hold no bytes, as Arrow validates them.
fn claimed(len: usize) -> Vec<(&'static str, ArrayRef)> {
    let fixed = arrow_data::ArrayData::builder(DataType::FixedSizeBinary(0))
        .len(len)
        .add_buffer(arrow_buffer::Buffer::from(Vec::<u8>::new()))
        .build()
        .unwrap();
    let fixed: ArrayRef = Arc::new(FixedSizeBinaryArray::from(fixed));
    let nested = StructArray::try_new(
        vec![arrow_schema::Field::new(
            "z",
            DataType::FixedSizeBinary(0),
            false,
        )]
        .into(),
        vec![Arc::clone(&fixed)],
        None,
    )
    .unwrap();
    vec![
        ("Null", Arc::new(NullArray::new(len))),
        ("FixedSizeBinary(0)", fixed),
        (
            "Struct {}",
            Arc::new(StructArray::new_empty_fields(len, None)),
        ),
        ("Struct { FixedSizeBinary(0) }", Arc::new(nested)),
    ]
}

#[test]
fn arrow_lengths_no_buffer_backs_cost_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for (what, array) in claimed(1 << 40) {
        assert_eq!(array.len(), 1 << 40, "{what}");
        let (r, request) = largest(|| from_arrow(array.as_ref()).map(drop));
        let err = r.unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{what}: {err:?}");
        assert!(request < 1 << 20, "{what}: a request of {request} bytes");
        let (r, request) = largest(|| from_arrow_owned(Arc::clone(&array)).map(drop));
        assert!(r.is_err(), "{what}");
        assert!(request < 1 << 20, "{what}: a request of {request} bytes");
    }
    // Within ndnpy's limit on values of no bytes, they read.
    for (what, array) in claimed(1000) {
        let r = from_arrow(array.as_ref());
        match what {
            "Null" => assert!(r.is_err(), "{what}"),
            _ => assert_eq!(r.unwrap().0.shape(), [1000], "{what}"),
        }
    }
}
