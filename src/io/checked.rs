//! Holds caller-supplied readers and writers to the `Read`/`Write` contract.
//!
//! `Read::read` and `Write::write` are safe to implement, and their docs
//! warn that callers must not trust a returned count for memory safety: an
//! implementation may claim more bytes than the buffer it was given. Every
//! reader or writer that crosses the public API is wrapped here once, so the
//! rest of the crate (and the zip crate underneath) only ever sees counts
//! that fit the buffer; a count that does not is an `InvalidData` error.

use std::io::{self, IoSlice, Read, Seek, SeekFrom, Write};

/// The error for a count larger than the buffer it describes.
pub(crate) fn over_report(what: &str, n: usize, len: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the {what} reported {n} bytes for a buffer of {len}"),
    )
}

/// Checks a count returned by `read` against the buffer it filled.
pub(crate) fn checked_read_count(n: usize, len: usize) -> io::Result<usize> {
    if n > len {
        Err(over_report("reader", n, len))
    } else {
        Ok(n)
    }
}

/// A reader whose counts never exceed the buffer.
#[derive(Debug)]
pub(crate) struct CheckedRead<R>(pub(crate) R);

impl<R: Read> Read for CheckedRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let len = buf.len();
        let n = self.0.read(buf)?;
        checked_read_count(n, len)
    }
}

impl<R: Seek> Seek for CheckedRead<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.0.seek(pos)
    }
}

/// A writer whose counts never exceed the buffer.
#[derive(Debug)]
pub(crate) struct CheckedWrite<W>(pub(crate) W);

impl<W: Write> Write for CheckedWrite<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.0.write(buf)?;
        if n > buf.len() {
            return Err(over_report("writer", n, buf.len()));
        }
        Ok(n)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let total = bufs
            .iter()
            .map(|b| b.len())
            .fold(0usize, usize::saturating_add);
        let n = self.0.write_vectored(bufs)?;
        if n > total {
            return Err(over_report("writer", n, total));
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Reads as many bytes as are available up to `buf.len()`, returning the count.
pub(crate) fn read_full<R: Read + ?Sized>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += checked_read_count(n, buf.len() - filled)?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Appends up to `len` bytes from `reader` to `buf`, growing it in bounded
/// steps as bytes arrive; returns the count read.
pub(crate) fn read_full_vec<R: Read + ?Sized>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    len: usize,
) -> io::Result<usize> {
    const STEP: usize = 1 << 16;
    let start = buf.len();
    while buf.len() - start < len {
        let old = buf.len();
        let want = (len - (old - start)).min(STEP.max(old - start));
        buf.resize(old + want, 0);
        let got = read_full(reader, &mut buf[old..])?;
        buf.truncate(old + got);
        if got < want {
            break;
        }
    }
    Ok(buf.len() - start)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Liar;
    impl Read for Liar {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            Ok(buf.len() + 1)
        }
    }
    impl Write for Liar {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Ok(usize::MAX)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn over_reports_are_errors() {
        let mut buf = [0u8; 4];
        let err = CheckedRead(Liar).read(&mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let err = CheckedWrite(Liar).write_all(b"abc").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }
}
