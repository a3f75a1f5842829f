//! `read_npy_from` and `AnyArray::read_npy_from` over a reader that breaks
//! the `Read` contract on a schedule the fuzzer picks: counts above the
//! buffer (up to `usize::MAX`), short reads, `Interrupted`, `WouldBlock` and
//! errors at chosen calls. The result must be the truth (what the same bytes
//! give from a slice) or an error: never other data, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarray::{ArrayD, IxDyn};
use ndnpy::{AnyArray, ReadNpy, WriteNpy};
use std::io::{self, Read};

struct Misbehaving<'a> {
    data: &'a [u8],
    schedule: &'a [u8],
    calls: usize,
}

impl Read for Misbehaving<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // A reader interrupted forever would (rightly) be retried forever, as
        // `std::io::Read::read_exact` does: after many calls, be honest.
        let op = if self.schedule.is_empty() || self.calls > 10_000 {
            0
        } else {
            self.schedule[self.calls % self.schedule.len()]
        };
        self.calls += 1;
        let honest = buf.len().min(self.data.len());
        let short = honest.min(1 + op as usize / 8);
        let n = match op % 8 {
            0 | 1 => honest,
            2 => short,
            3 => return Err(io::ErrorKind::Interrupted.into()),
            4 => return Err(io::ErrorKind::WouldBlock.into()),
            5 => return Err(io::Error::other("injected")),
            6 => {
                // Copies honestly but over-reports.
                buf[..honest].copy_from_slice(&self.data[..honest]);
                self.data = &self.data[honest..];
                return Ok(if op & 0x80 != 0 {
                    usize::MAX
                } else {
                    buf.len() + 1 + op as usize
                });
            }
            _ => {
                // Claims a whole buffer after writing nothing new.
                return Ok(buf.len().saturating_add(op as usize));
            }
        };
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| {
    // The schedule is the input's last bytes (up to 16), which stay part of
    // the file too: readers ignore bytes after the data, so every seed
    // `.npy` file remains valid and the fuzzer steers the misbehaviour by
    // mutating its tail.
    let schedule = &data[data.len().saturating_sub(16)..];
    let reader = || Misbehaving {
        data,
        schedule,
        calls: 0,
    };

    if let Ok(got) = ArrayD::<u8>::read_npy_from(reader()) {
        let truth = ArrayD::<u8>::from_npy_bytes(data).expect("the reader invented a file");
        assert_eq!(got, truth);
    }
    if let Ok(got) = ndarray::Array::<f64, IxDyn>::read_npy_from(reader()) {
        let truth = ArrayD::<f64>::from_npy_bytes(data).expect("the reader invented a file");
        assert_eq!(got.to_npy_bytes().unwrap(), truth.to_npy_bytes().unwrap());
    }
    if let Ok(got) = AnyArray::read_npy_from(reader()) {
        let truth = AnyArray::from_npy_bytes(data).expect("the reader invented a file");
        assert_eq!(format!("{got:?}"), format!("{truth:?}"));
    }
});
