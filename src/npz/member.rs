//! Reading one member's bytes: at most its declared size, decompressed by
//! the codec of its method (`codec/`: one interface, whatever the method),
//! its CRC-32 checked at the end as Python's `zipfile` checks it.

use super::codec::{self, Decode, Plan};
use super::zip::directory::Entry;
use super::zip::input::FileAt;
use crate::error::Error;
use crate::io::source::{fill_zeroed, SizedRead};
use std::io::{self, BufRead, Read};
use std::mem::MaybeUninit;

/// A member's uncompressed bytes: at most its declared size, decompressed
/// by its codec, with the CRC-32 checked once all of them have been read
/// (as Python's `ZipExtFile` does). A CRC mismatch is an `io::Error`
/// carrying the crate's typed [`crate::error::ArchiveError::BadCrc`] (which `From<io::Error>`
/// takes back out). Data that ends before the declared size just ends: the
/// array readers then report the array's own truncation, and the public
/// member reader ([`crate::npz::NpzMemberReader`]) an [`crate::error::ArchiveError::CorruptMember`].
pub(crate) struct MemberReader<'a, R: BufRead> {
    body: Box<dyn Decode + 'a>,
    /// A read failed: every later read fails too, rather than giving bytes
    /// that were not checked.
    failed: bool,
    left: u64,
    crc: crc32fast::Hasher,
    expected_crc: u32,
    name: String,
    _input: std::marker::PhantomData<&'a mut R>,
}

impl<R: BufRead> MemberReader<'_, R> {
    /// Bytes of the declared size not read yet.
    pub(crate) fn left(&self) -> u64 {
        self.left
    }

    /// The member's name, for errors.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Whether the member is decompressed whole: then its bytes are all in
    /// memory at its declared size (or reading them fails), so that size
    /// can size one allocation.
    pub(crate) fn whole(&self) -> bool {
        self.body.whole()
    }
}

impl<'a, R: BufRead + 'a> MemberReader<'a, R> {
    /// Reads `entry`'s data from `reader`, positioned at its start
    /// (its method checked with [`crate::npz::zip::method::check_method`]), deflating with
    /// `inflater` (reset here; one per archive reader, so that reading many
    /// small members does not allocate an inflater's window each: those
    /// allocations, interleaved with the caller's, fragmented the heap by
    /// about 30 KB a member), as `plan` says: [`Plan::Head`] streams on
    /// this thread, never decompressed whole nor read ahead, so that the
    /// peek costs about the bytes it looks at; under [`Plan::Whole`] a
    /// compressed member of up to its bound (and not too small to pay) may
    /// be decompressed in one go at the first read, on every core when
    /// ndnpy wrote it (the streaming member reader passes a smaller bound
    /// than the array readers, which hold the array anyway);
    /// [`Plan::Range`] streams from the start, as [`Plan::Head`].
    /// `at`, when the archive is a file the reader can read by position,
    /// is where `reader` stands in it.
    pub(crate) fn open(
        entry: &Entry,
        reader: &'a mut R,
        inflater: &'a mut flate2::Decompress,
        plan: Plan,
        at: Option<FileAt>,
    ) -> Self {
        let raw = reader.take(entry.compressed_size);
        MemberReader {
            body: codec::open(entry, raw, inflater, plan, at),
            failed: false,
            left: entry.size,
            crc: crc32fast::Hasher::new(),
            expected_crc: entry.crc,
            name: entry.key().to_owned(),
            _input: std::marker::PhantomData,
        }
    }
}

impl<R: BufRead> Read for MemberReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.failed {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "an earlier read of this member failed",
            ));
        }
        if self.left == 0 || buf.is_empty() {
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let buf = &mut buf[..want];
        let result = self.read_checked(buf);
        if let Err(e) = &result {
            // An interrupted read of the archive may be retried; any other
            // error ends the member.
            self.failed = e.kind() != io::ErrorKind::Interrupted;
        }
        result
    }
}

impl<R: BufRead> MemberReader<'_, R> {
    /// Reads on from the codec and checks the CRC-32: its own, once the
    /// codec gives it, or the one computed here over every byte.
    fn read_checked(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len();
        let (n, crc) = self.body.read(buf)?;
        let n = crate::io::checked::checked_read_count(n, want)?;
        if self.body.checks_crc() {
            // Decompressed whole or a piece at a time, with the CRC
            // computed on the way (in parallel): checked once all of it is
            // known, not byte by byte.
            if crc.is_some_and(|crc| crc != self.expected_crc) {
                return Err(bad_crc(&self.name));
            }
            self.left -= n as u64;
            return Ok(n);
        }
        if n == 0 {
            return Ok(0);
        }
        self.crc.update(&buf[..n]);
        self.left -= n as u64;
        if self.left == 0 && self.crc.clone().finalize() != self.expected_crc {
            return Err(bad_crc(&self.name));
        }
        Ok(n)
    }
}

/// The error of a member whose bytes do not match its CRC-32.
fn bad_crc(name: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        Error::Archive(crate::error::ArchiveError::BadCrc {
            name: name.to_owned(),
        }),
    )
}

// SAFETY: `fill_whole` either falls back to `fill_zeroed` (zeroes before
// reading, counts checked), or hands `dst` to the codec's `fill_whole`,
// whose contract (`Decode`'s safety section) is that on success it
// initialised every byte; it returns `dst.len()` only then.
unsafe impl<R: BufRead> SizedRead for MemberReader<'_, R> {
    fn fills_whole(&self, len: u64) -> bool {
        !self.failed && len == self.left && self.body.fills_whole(len)
    }

    fn fill_whole(&mut self, dst: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        if !self.fills_whole(dst.len() as u64) {
            return fill_zeroed(self, dst);
        }
        // Whatever happens, the codec's state is used up: later reads give
        // nothing, or the error again.
        self.failed = true;
        if self.body.fill_whole(dst)? != self.expected_crc {
            return Err(bad_crc(&self.name));
        }
        self.failed = false;
        self.left = 0;
        Ok(dst.len())
    }

    fn whole_room(&self, len: u64) -> Option<usize> {
        match !self.failed && len == self.left {
            true => self.body.whole_room(len),
            false => None,
        }
    }

    fn fill_whole_in(&mut self, dst: &mut [u8], len: usize) -> io::Result<usize> {
        if self.whole_room(len as u64).is_none() {
            // Read as any reader is read, the CRC checked on the way.
            return crate::io::checked::read_full(self, &mut dst[..len]);
        }
        // Whatever happens, the codec's state is used up: later reads give
        // nothing, or the error again.
        self.failed = true;
        if self.body.fill_whole_in(dst, len)? != self.expected_crc {
            return Err(bad_crc(&self.name));
        }
        self.failed = false;
        self.left = 0;
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::npz::zip::directory::Directory;
    use std::io::{Cursor, Seek, SeekFrom};

    /// An archive of ndnpy's with one compressed member of six pieces, its
    /// directory, and the member's `.npy` bytes.
    fn archive() -> (Vec<u8>, Directory, Vec<u8>) {
        let a = ndarray::Array1::from_iter((0..700_000u64).map(|i| i * i % 1_000_003));
        // 5.6 MB: more than the 4 MiB a member needs to be read ahead.
        let npy = crate::WriteNpy::to_npy_bytes(&a).unwrap();
        let mut w =
            crate::NpzWriter::new(Cursor::new(Vec::new())).codec(crate::npz::Codec::deflate());
        w.add("a", &a).unwrap();
        let bytes = w.finish_into_inner().unwrap().into_inner();
        let dir = Directory::read(&mut Cursor::new(&bytes), bytes.len() as u64).unwrap();
        (bytes, dir, npy)
    }

    /// Reads the member streaming (not whole), as a member too large to
    /// inflate whole is read: a few pieces ahead on other threads.
    fn stream(bytes: &[u8], entry: &Entry) -> io::Result<Vec<u8>> {
        let mut input = io::BufReader::new(Cursor::new(bytes));
        let start = entry.data_start(&mut input, bytes.len() as u64).unwrap();
        input.seek(SeekFrom::Start(start)).unwrap();
        let mut inflater = flate2::Decompress::new(false);
        let mut member = MemberReader::open(entry, &mut input, &mut inflater, Plan::Whole(0), None);
        // Read ahead: the codec checks the CRC, and nothing is held whole.
        assert!(member.body.checks_crc() && !member.whole());
        let mut out = Vec::new();
        member.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn members_too_large_to_hold_stream_their_pieces_checked() {
        let (bytes, dir, npy) = archive();
        let entry = &dir.entries[0];
        assert!(entry.pieces.as_ref().unwrap().lengths.len() > 2);
        assert!(stream(&bytes, entry).unwrap() == npy);
        // The CRC is checked when the last piece is inflated.
        let mut lying = entry.clone();
        lying.crc ^= 1;
        let e = stream(&bytes, &lying).unwrap_err();
        assert!(
            matches!(Error::from(e), Error::Archive(crate::error::ArchiveError::BadCrc { ref name }) if name == "a"),
            "a CRC mismatch"
        );
    }
}
