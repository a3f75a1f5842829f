//! Readers and writers that break the `Read`/`Write` contract in safe code
//! (counts larger than the buffer, `usize::MAX`, errors mid-stream) must give
//! the true array or an error: never uninitialised memory, never a panic.
mod common;

use ndarray::{Array1, ArrayD};
use ndnpy::{dtype::Header, AnyArray, NpzReader, NpzWriter, ReadNpy, WriteNpy};
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};

/// 2 MiB of zeros as a `.npy` stream.
fn zeros_npy() -> Vec<u8> {
    Array1::<u8>::zeros(2 << 20).to_npy_bytes().unwrap()
}

/// Serves `data` honestly, except that the `lie_at`-th call reports `claim`
/// bytes (while copying only what fits) and every later call reports the end.
struct OverReporter {
    data: Cursor<Vec<u8>>,
    calls: usize,
    lie_at: usize,
    claim: fn(usize) -> usize,
}

impl Read for OverReporter {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.calls > self.lie_at {
            return Ok(0);
        }
        let n = self.data.read(buf)?;
        if self.calls == self.lie_at {
            return Ok((self.claim)(buf.len()).max(n));
        }
        Ok(n)
    }
}

impl Seek for OverReporter {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.data.seek(pos)
    }
}

fn liar(lie_at: usize, claim: fn(usize) -> usize) -> OverReporter {
    OverReporter {
        data: Cursor::new(zeros_npy()),
        calls: 0,
        lie_at,
        claim,
    }
}

fn assert_invalid_data<T: std::fmt::Debug>(result: ndnpy::Result<T>) {
    match result {
        Err(ndnpy::Error::Io(e)) => assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}"),
        other => panic!("expected an InvalidData I/O error, got {other:?}"),
    }
}

#[test]
fn over_reported_reads_are_errors_not_uninitialised_memory() {
    // The reported case: 1 MiB claimed for a 256 KiB piece, then end of stream.
    for lie_at in 1..6 {
        assert_invalid_data(Array1::<u8>::read_npy_from(liar(lie_at, |_| 1 << 20)));
        assert_invalid_data(AnyArray::read_npy_from(liar(lie_at, |_| 1 << 20)));
        assert_invalid_data(ArrayD::<u8>::read_npy_from(liar(lie_at, |len| len + 1)));
    }
}

#[test]
fn usize_max_counts_do_not_overflow() {
    for lie_at in 1..6 {
        assert_invalid_data(Array1::<u8>::read_npy_from(liar(lie_at, |_| usize::MAX)));
        assert_invalid_data(AnyArray::read_npy_from(liar(lie_at, |_| usize::MAX)));
    }
    assert_invalid_data(Header::read_from(liar(1, |_| usize::MAX)));
}

#[test]
fn over_reporting_archive_readers_are_errors() {
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("a", &Array1::<u8>::zeros(1 << 20)).unwrap();
    let bytes = w.finish_into_inner().unwrap().into_inner();
    for lie_at in 1..40 {
        let reader = OverReporter {
            data: Cursor::new(bytes.clone()),
            calls: 0,
            lie_at,
            claim: |_| usize::MAX,
        };
        // Whichever call lies, the result is an error or the true zeros.
        let result = NpzReader::new(reader).and_then(|mut z| z.read::<u8, ndarray::Ix1>("a"));
        if let Ok(a) = result {
            assert!(a.iter().all(|&x| x == 0), "call {lie_at} gave wrong data");
        }
    }
}

/// Claims to have written more than it was given.
struct OverWriter(Vec<u8>, usize);

impl Write for OverWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len().saturating_add(self.1))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for OverWriter {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match pos {
            SeekFrom::Current(0) | SeekFrom::End(0) => Ok(self.0.len() as u64),
            _ => Err(io::ErrorKind::Unsupported.into()),
        }
    }
}

#[test]
fn over_reported_writes_are_errors_not_panics() {
    let a = Array1::<f64>::linspace(0.0, 1.0, 1000);
    for extra in [1, usize::MAX] {
        assert_invalid_data(a.write_npy_to(OverWriter(Vec::new(), extra)));
        let header = Header::read_from(&a.to_npy_bytes().unwrap()[..]).unwrap();
        assert_invalid_data(header.write_to(OverWriter(Vec::new(), extra)));
        let mut w = NpzWriter::new(OverWriter(Vec::new(), extra));
        let result = w
            .add("a", &a)
            .and_then(|()| w.finish_into_inner().map(drop));
        assert!(
            result.is_err(),
            "an over-reporting writer must fail the archive"
        );
    }
}
