//! `ReadNpy::from_npy_bytes` and `read_npy_from` (over a whole slice and over
//! a reader that trickles a few bytes per call and is sometimes interrupted)
//! into several element and dimension types: never panic, never allocate the
//! claimed size, and agree with each other.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarray::{Array, Dimension, Ix0, Ix1, Ix2, Ix3, Ix4, IxDyn};
use ndnpy::types::half::f16;
use ndnpy::types::num_complex::Complex;
use ndnpy::{Element, ReadNpy, WriteNpy};
use std::io::{self, Read};

/// Hands out at most `step` bytes per call, and fails every fifth call with
/// `Interrupted` (which readers must retry).
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
    calls: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.calls % 5 == 0 {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = buf.len().min(self.step).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
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

fn check<T: Element, D: Dimension>(data: &[u8]) {
    let from_bytes = Array::<T, D>::from_npy_bytes(data);
    let from_slice = Array::<T, D>::read_npy_from(data);
    let step = 1 + data.len() % 7;
    let from_trickle = Array::<T, D>::read_npy_from(Trickle {
        data,
        step,
        calls: 0,
    });
    match (&from_bytes, &from_slice, &from_trickle) {
        (Ok(a), Ok(b), Ok(c)) => {
            // Compare bytes (NaN != NaN), which also exercises the writer.
            let a = a.to_npy_bytes().expect("write what was read");
            assert_eq!(a, b.to_npy_bytes().unwrap());
            assert_eq!(a, c.to_npy_bytes().unwrap());
        }
        (Err(a), Err(b), Err(c)) => {
            assert!(same_error(a, b), "{a} / {b}");
            assert!(same_error(a, c), "{a} / {c}");
        }
        _ => panic!(
            "readers disagree: bytes {:?}, slice {:?}, trickle {:?}",
            from_bytes.err(),
            from_slice.err(),
            from_trickle.err()
        ),
    }
}

fuzz_target!(|data: &[u8]| {
    check::<f64, Ix2>(data);
    check::<u8, IxDyn>(data);
    check::<bool, Ix1>(data);
    check::<i16, Ix0>(data);
    check::<Complex<f32>, Ix3>(data);
    check::<f16, IxDyn>(data);
    check::<i64, Ix1>(data);
    check::<u32, Ix4>(data);
    check::<f32, IxDyn>(data);
});
