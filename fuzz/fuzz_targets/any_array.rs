//! `AnyArray::from_npy_bytes` and `AnyArray::read_npy_from` over arbitrary
//! bytes: never panic, agree with each other and with `Header::read_from`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarray::IxDyn;
use ndnpy::{AnyArray, dtype::Header};

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
    let from_bytes = AnyArray::from_npy_bytes(data);
    let from_reader = AnyArray::read_npy_from(data);
    match (&from_bytes, &from_reader) {
        (Ok(a), Ok(b)) => {
            // Debug text compares NaN payload-blind but equal-for-equal.
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            let header = Header::read_from(data).expect("a readable file has a header");
            assert_eq!(a.shape(), &header.shape[..]);
            // The typed array comes back out of the enum for its own type.
            let shape = a.shape().to_vec();
            let dtype = a.dtype();
            match a.clone() {
                AnyArray::F64(x) => assert_eq!(x.shape(), &shape[..]),
                other => {
                    let _ = other
                        .into_array::<f64, IxDyn>()
                        .map(|_| panic!("into_array::<f64> accepted {dtype}"));
                }
            }
        }
        (Err(a), Err(b)) => {
            assert!(same_error(a, b), "{a} / {b}");
        }
        _ => panic!(
            "readers disagree: bytes {:?}, reader {:?}",
            from_bytes.err(),
            from_reader.err()
        ),
    }
});
