//! `ndnpy_parquet::arrow` over Arrow arrays built from the fuzzer's bytes:
//! a data type from the list `from_arrow` knows (and a few it refuses), a
//! length, an offset into the buffers, a validity bitmap or none, and
//! buffers cut from the input. Arrow's full validation decides which arrays
//! exist (as it does for every array a caller could hand us); each of them
//! converts to a NumPy array or is refused with an error, never a panic;
//! what converts has the array's length and nulls, the owned conversion
//! agrees, and it goes back to Arrow and back again to the same dtype and
//! nulls. Struct arrays convert to records or are refused.
//!
//! (A first version read Arrow IPC bytes; arrow-ipc 60 itself panics on
//! some messages and zero-fills whatever body length a block claims, so the
//! fuzzer spent its time in Arrow's reader rather than ours.)
#![no_main]

use arrow_array::{make_array, Array, ArrayRef, StructArray};
use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, TimeUnit};
use libfuzzer_sys::fuzz_target;
use ndnpy::{dtype::DType, dtype::Kind};
use ndnpy_parquet::arrow::{from_arrow, from_arrow_owned, struct_to_records, to_arrow};
use std::sync::Arc;

/// The input, taken a piece at a time (zeros once it runs out).
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }

    fn take(&mut self, n: usize) -> Vec<u8> {
        let k = n.min(self.0.len());
        let mut out = self.0[..k].to_vec();
        self.0 = &self.0[k..];
        out.resize(n, 0);
        out
    }
}

fn unit(b: u8) -> TimeUnit {
    [
        TimeUnit::Second,
        TimeUnit::Millisecond,
        TimeUnit::Microsecond,
        TimeUnit::Nanosecond,
    ][b as usize % 4]
}

fn data_type(input: &mut Bytes) -> DataType {
    let zones = [
        None,
        Some("UTC"),
        Some("+05:30"),
        Some("Europe/Paris"),
        Some("Not/AZone"),
    ];
    match input.byte() % 24 {
        0 => DataType::Int8,
        1 => DataType::Int16,
        2 => DataType::Int32,
        3 => DataType::Int64,
        4 => DataType::UInt8,
        5 => DataType::UInt16,
        6 => DataType::UInt32,
        7 => DataType::UInt64,
        8 => DataType::Float16,
        9 => DataType::Float32,
        10 => DataType::Float64,
        11 => DataType::Boolean,
        12 => DataType::Utf8,
        13 => DataType::LargeUtf8,
        14 => DataType::Binary,
        15 => DataType::LargeBinary,
        16 => {
            let zone = zones[input.byte() as usize % zones.len()];
            DataType::Timestamp(unit(input.byte()), zone.map(Arc::from))
        }
        17 => DataType::Date32,
        18 => DataType::Date64,
        19 => DataType::Duration(unit(input.byte())),
        20 => DataType::FixedSizeBinary(1 + (input.byte() % 16) as i32),
        21 => DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        22 => DataType::Time64(TimeUnit::Microsecond),
        _ => DataType::Interval(arrow_schema::IntervalUnit::DayTime),
    }
}

/// An array of `dt` with `len` elements from `offset`, its buffers cut
/// from the input; `None` when Arrow's validation refuses it.
fn array(dt: DataType, len: usize, offset: usize, input: &mut Bytes) -> Option<ArrayRef> {
    let total = len + offset;
    let nulls = (input.byte() % 2 == 1).then(|| Buffer::from(input.take(total.div_ceil(8))));
    let mut builder = ArrayData::builder(dt.clone())
        .len(len)
        .offset(offset)
        .null_bit_buffer(nulls);
    builder = match &dt {
        DataType::Boolean => builder.add_buffer(Buffer::from(input.take(total.div_ceil(8)))),
        DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary => {
            // Offsets from lengths of 0..8, so most arrays are valid; the
            // text is whatever the input holds (UTF-8 checked by Arrow).
            let lengths: Vec<usize> = (0..total).map(|_| (input.byte() % 9) as usize).collect();
            let mut ends = vec![0usize];
            for l in &lengths {
                ends.push(ends.last().unwrap() + l);
            }
            let values = input.take(*ends.last().unwrap());
            let offsets = match dt {
                DataType::Utf8 | DataType::Binary => {
                    Buffer::from_iter(ends.iter().map(|&e| e as i32))
                }
                _ => Buffer::from_iter(ends.iter().map(|&e| e as i64)),
            };
            builder.add_buffer(offsets).add_buffer(Buffer::from(values))
        }
        DataType::FixedSizeBinary(w) => {
            builder.add_buffer(Buffer::from(input.take(total * *w as usize)))
        }
        DataType::Dictionary(..) => {
            let keys: Vec<i32> = (0..total).map(|_| (input.byte() % 5) as i32).collect();
            let values = arrow_array::StringArray::from(vec!["a", "bb", "", "é"]);
            builder
                .add_buffer(Buffer::from_iter(keys))
                .add_child_data(values.into_data())
        }
        other => {
            let width = other.primitive_width().unwrap_or(8);
            builder.add_buffer(Buffer::from(input.take(total * width)))
        }
    };
    builder.build().ok().map(make_array)
}

fn check(column: &ArrayRef) {
    let Ok((values, validity)) = from_arrow(column.as_ref()) else {
        return;
    };
    let n: usize = values.shape().iter().product();
    assert_eq!(n, column.len());
    match &validity {
        Some(v) => {
            assert_eq!(v.len(), n);
            assert_eq!(
                v.iter().filter(|&&b| !b).count(),
                column.logical_null_count()
            );
        }
        // No mask: no nulls dropped on the way.
        None => assert_eq!(column.logical_null_count(), 0),
    }
    let (owned, owned_validity) = from_arrow_owned(column.clone()).expect("converted once");
    assert_eq!(owned_validity, validity);
    assert_eq!(owned.dtype(), values.dtype());
    let back = to_arrow(&values, validity.as_deref()).expect("our arrays convert");
    assert_eq!(back.len(), n);
    let (again, again_validity) = from_arrow(back.as_ref()).expect("our Arrow arrays convert");
    // NaT is null on the way back even where Arrow had a value.
    let times = matches!(values.dtype(), DType::Scalar(s) if matches!(s.kind, Kind::Datetime | Kind::Timedelta));
    if !times {
        assert_eq!(again_validity, validity);
    }
    assert_eq!(again.dtype(), values.dtype());
}

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes(data);
    let len = (input.byte() % 40) as usize;
    let offset = (input.byte() % 9) as usize;
    let (a, b) = (data_type(&mut input), data_type(&mut input));
    let first = array(a.clone(), len, offset, &mut input);
    let second = array(b.clone(), len, 0, &mut input);
    for column in first.iter().chain(&second) {
        check(column);
    }
    if let (Some(x), Some(y)) = (first, second) {
        let fields = vec![Field::new("x", a, true), Field::new("y", b, true)];
        if let Ok(s) = StructArray::try_new(fields.into(), vec![x, y], None) {
            if let Ok(records) = struct_to_records(&s) {
                assert_eq!(records.len(), len);
            }
        }
    }
});
