//! The `pandas` key over arbitrary text, on a small fixed file: a lying key
//! is an error, never a panic or a large allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(init: {
    // As in parquet_bytes: decoder panics are caught by `Frame`.
    std::panic::set_hook(Box::new(|_| {}));
}, |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(frame) = ndnpy_parquet::fuzzing::read_with_pandas_json(text) {
        assert_eq!(frame.len(), 3);
        let _ = frame.to_bytes(&Default::default());
    }
});
