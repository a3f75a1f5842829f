//! Arrow IPC streams (as pyarrow writes them) through `ndnpy_parquet::arrow`:
//! every column Arrow's reader accepts converts to a NumPy array or is
//! refused with an error, never a panic; what converts goes back to Arrow
//! with the same length and nulls, and back again to the same array. Each
//! batch converts to records or is refused.
#![no_main]

use arrow_array::Array;
use libfuzzer_sys::fuzz_target;
use ndnpy::{DType, Kind};
use ndnpy_parquet::arrow::{batch_to_records, from_arrow, from_arrow_owned, to_arrow};

fuzz_target!(|data: &[u8]| {
    // The file format (pyarrow's `.arrow` files, the seeds), else a stream.
    let batches: Vec<_> = match arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(data), None) {
        Ok(reader) => reader.take(8).collect(),
        Err(_) => match arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(data), None) {
            Ok(reader) => reader.take(8).collect(),
            Err(_) => return,
        },
    };
    for batch in batches {
        let Ok(batch) = batch else {
            return;
        };
        for column in batch.columns() {
            let Ok((values, validity)) = from_arrow(column.as_ref()) else {
                continue;
            };
            let n: usize = values.shape().iter().product();
            assert_eq!(n, column.len());
            if let Some(v) = &validity {
                assert_eq!(v.len(), n);
                assert_eq!(v.iter().filter(|&&b| !b).count(), column.logical_null_count());
            }
            // The owned conversion agrees with the borrowed one.
            let (owned, owned_validity) = from_arrow_owned(column.clone()).expect("converted once");
            assert_eq!(owned_validity, validity);
            assert_eq!(owned.dtype(), values.dtype());
            // Back to Arrow, and back again: the same array.
            let back = to_arrow(&values, validity.as_deref()).expect("our arrays convert");
            assert_eq!(back.len(), n);
            let (again, again_validity) = from_arrow(back.as_ref()).expect("our Arrow arrays convert");
            // NaT is null on the way back even where Arrow had a value.
            if !matches!(values.dtype(), DType::Scalar(s) if matches!(s.kind, Kind::Datetime | Kind::Timedelta)) {
                assert_eq!(again_validity, validity);
            }
            assert_eq!(again.dtype(), values.dtype());
        }
        let _ = batch_to_records(&batch);
    }
});
