//! The object-array pickle reader over arbitrary bytes: `pickle::loads`,
//! and `AnyArray` over `.npy` files whose data is a pickle.
//!
//! Never a panic or an allocation beyond the reader's budget; a value that
//! loads can be written back (`pickle::dumps`), reads back the same (by its
//! Python repr), and an object-array file reads the same from bytes and
//! from a stream.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndnpy::pickle::{self, PyValue};
use ndnpy::{AnyArray, Error, pickle::PickleEncoding, ReadOptions};

/// The reader's settings the target runs under: NumPy's defaults, and
/// opaque objects with each way of reading Python 2 strings.
fn settings() -> [ReadOptions; 3] {
    let opaque = ReadOptions::default().opaque_objects(true);
    [
        ReadOptions::default(),
        opaque.pickle_encoding(PickleEncoding::Latin1),
        opaque.pickle_encoding(PickleEncoding::Bytes),
    ]
}

fn check_value(v: &PyValue, options: &ReadOptions) {
    let text = v.to_string();
    match pickle::dumps(v) {
        Ok(bytes) => {
            let back = pickle::loads_with(&bytes, options).expect("what we write reads back");
            assert_eq!(back.to_string(), text);
        }
        // Dtypes the writer cannot spell (records), nesting at the limit,
        // or a global whose name cannot be written.
        Err(Error::UnsupportedDType { .. } | Error::Limit(ndnpy::error::LimitError::PickleLimit { .. })) => {}
        Err(e) => panic!("dumps failed: {e}"),
    }
}

fn check_pickle(data: &[u8]) {
    for options in settings() {
        if let Ok(v) = pickle::loads_with(data, &options) {
            check_value(&v, &options);
        }
    }
}

/// Whether two readers' errors mean the same: the same variant, or a
/// truncation seen in bytes of known length against the stream limit that
/// a reader of unknown length meets first for the same oversized header.
fn same_error(known_len: &ndnpy::Error, stream: &ndnpy::Error) -> bool {
    use ndnpy::error::{DataError::TruncatedData, LimitError::StreamLimit};
    use ndnpy::Error::{Data, Limit};
    std::mem::discriminant(known_len) == std::mem::discriminant(stream)
        || matches!((known_len, stream), (Data(TruncatedData { expected, .. }), Limit(StreamLimit { claimed, .. })) if expected == claimed)
}

fuzz_target!(|data: &[u8]| {
    if data.starts_with(b"\x93NUMPY") {
        let from_bytes = AnyArray::from_npy_bytes(data);
        let from_reader = AnyArray::read_npy_from(data);
        match (&from_bytes, &from_reader) {
            (Ok(a), Ok(b)) => {
                assert_eq!(format!("{a:?}"), format!("{b:?}"));
                // Records with object fields are written back pickled and
                // read back the same.
                if let AnyArray::Record(r) = a {
                    match r.to_npy_bytes() {
                        Ok(bytes) => {
                            let c = AnyArray::from_npy_bytes(&bytes)
                                .expect("records we write read back");
                            assert_eq!(format!("{a:?}"), format!("{c:?}"));
                        }
                        Err(Error::UnsupportedDType { .. } | Error::Limit(ndnpy::error::LimitError::PickleLimit { .. })) => {}
                        Err(e) => panic!("writing records failed: {e}"),
                    }
                }
                if let AnyArray::Object(x) = a {
                    let bytes = ndnpy::WriteNpy::to_npy_bytes(x);
                    if let Ok(bytes) = bytes {
                        let AnyArray::Object(y) =
                            AnyArray::from_npy_bytes(&bytes).expect("what we write reads back")
                        else {
                            panic!("not an object array")
                        };
                        let show = |a: &ndarray::ArrayD<PyValue>| {
                            a.iter().map(|v| v.to_string()).collect::<Vec<_>>()
                        };
                        assert_eq!(show(x), show(&y));
                        assert_eq!(x.shape(), y.shape());
                    }
                }
            }
            (Err(a), Err(b)) => assert!(same_error(a, b), "{a} / {b}"),
            _ => panic!(
                "readers disagree: bytes {:?}, reader {:?}",
                from_bytes.err(),
                from_reader.err()
            ),
        }
        // The pickle after a version 1.0 header, on its own.
        if data.len() > 10 && data[6] == 1 {
            let len = u16::from_le_bytes([data[8], data[9]]) as usize;
            if let Some(body) = data.get(10 + len..) {
                check_pickle(body);
            }
        }
    } else {
        check_pickle(data);
    }
});
