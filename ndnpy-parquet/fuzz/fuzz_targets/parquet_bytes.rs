//! `ndnpy_parquet::Frame::from_bytes` over arbitrary bytes: never panics and
//! never allocates what the file merely claims; a frame that reads writes
//! and reads back to the same columns.
//!
//! `parquet` 60 panics on some corrupt footers (e.g. "column start and
//! length should not be negative"); `Frame` catches those and returns
//! `Error::Parquet`. libFuzzer's panic hook would abort before that catch, so
//! the target puts back a silent hook: a panic that escapes `Frame` still
//! fails the run (libfuzzer-sys aborts on it).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndnpy_parquet::{Frame, ReadOptions};

fuzz_target!(init: {
    std::panic::set_hook(Box::new(|_| {}));
}, |data: &[u8]| {
    let options = ReadOptions {
        max_bytes: Some(64 << 20),
    };
    let Ok(frame) = Frame::from_bytes(data, &options) else {
        return;
    };
    let Ok(bytes) = frame.to_bytes(&Default::default()) else {
        return;
    };
    let back = Frame::from_bytes(&bytes, &options).expect("our own file reads");
    assert_eq!(back.len(), frame.len());
    assert_eq!(back.columns().len(), frame.columns().len());
});
