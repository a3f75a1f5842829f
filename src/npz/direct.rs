//! A member inflated straight into the array it holds: the array iterator's
//! jobs (`pool.rs`) decode NumPy's members this way, so that the only fresh
//! memory a member costs is its array, as in `np.load`.
//!
//! libdeflate is faster per byte but writes the whole member (header and
//! data) into one buffer, which would be a second copy of every member to
//! fault in: on the benchmark machine fresh memory is often dearer than
//! inflating into it (BENCHMARKS.md, "NumPy's archives on every core"). So
//! here zlib-rs (flate2) inflates the header into a small buffer, and then
//! the data directly into the array's memory ([`SizedRead::fill_whole`]).

use super::compressed::Compressed;
use super::{in_member, member_io_error};
use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use crate::format::header;
use crate::io::source::{fill_zeroed, SizedRead, Source};
use crate::options::ReadOptions;
use std::fs::File;
use std::io::{self, Read};
use std::mem::MaybeUninit;

/// Where the compressed bytes come from: memory, or the archive file by
/// positioned reads in chunks (no copy of the member held).
enum Feed<'a> {
    Slice(&'a [u8]),
    File {
        file: &'a File,
        /// The next byte to read, and where the member ends.
        pos: u64,
        end: u64,
        buf: Box<[u8]>,
        at: usize,
        filled: usize,
    },
}

/// Compressed bytes read from the file per chunk.
const CHUNK: usize = 256 << 10;

impl Feed<'_> {
    /// The input not consumed yet (empty at the end), and whether it is
    /// all that is left.
    fn chunk(&mut self) -> io::Result<(&[u8], bool)> {
        match self {
            Feed::Slice(bytes) => Ok((bytes, true)),
            Feed::File {
                file,
                pos,
                end,
                buf,
                at,
                filled,
            } => {
                if at == filled && pos < end {
                    let want = buf.len().min((*end - *pos) as usize);
                    let n = loop {
                        match crate::io::fs::read_at(file, &mut buf[..want], *pos) {
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                            other => break other?,
                        }
                    };
                    let n = crate::io::checked::checked_read_count(n, want)?;
                    if n == 0 {
                        // The file is shorter than the member: its end.
                        *end = *pos;
                    }
                    *pos += n as u64;
                    (*at, *filled) = (0, n);
                }
                Ok((&buf[*at..*filled], *pos >= *end))
            }
        }
    }

    fn consume(&mut self, n: usize) {
        match self {
            Feed::Slice(bytes) => *bytes = &bytes[n..],
            Feed::File { at, .. } => *at += n,
        }
    }
}

/// The bytes of one whole deflate stream, inflated as they are read,
/// counted and checksummed.
struct Direct<'a> {
    /// The member's key and declared size, for the error when its data
    /// ends early.
    name: &'a str,
    size: u64,
    input: Feed<'a>,
    inflater: flate2::Decompress,
    crc: crc32fast::Hasher,
    /// Bytes of the declared size not produced yet.
    left: u64,
}

impl Direct<'_> {
    /// Inflates into `out` (at most `left` bytes); gives the count, 0 only
    /// when `out` is empty or all of the declared bytes have been given.
    /// A stream (or its input) that ends before the declared size is the
    /// member's [`crate::error::ArchiveError::CorruptMember`], as on the member reader's path,
    /// whatever was being read then (header, data).
    fn inflate(&mut self, out: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        let n = self.inflate_some(out)?;
        if n == 0 && !out.is_empty() && self.left > 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                Error::Archive(crate::error::ArchiveError::CorruptMember {
                    name: self.name.to_owned(),
                    // In the words of a whole inflate (`codec/deflate/inflate.rs`).
                    reason: format!(
                        "deflate data gave {} bytes where {} were declared",
                        self.size - self.left,
                        self.size
                    ),
                }),
            ));
        }
        Ok(n)
    }

    /// [`Direct::inflate`], with 0 at the stream's end or where the input
    /// ends.
    fn inflate_some(&mut self, out: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        let want = out
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        loop {
            let (input, last) = self.input.chunk()?;
            let flush = if last {
                flate2::FlushDecompress::Finish
            } else {
                flate2::FlushDecompress::None
            };
            let (in_before, out_before) = (self.inflater.total_in(), self.inflater.total_out());
            let status = self
                .inflater
                .decompress_uninit(input, &mut out[..want], flush)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            let consumed = (self.inflater.total_in() - in_before) as usize;
            let n = (self.inflater.total_out() - out_before) as usize;
            self.input.consume(consumed);
            // SAFETY: the inflater initialised the `n` bytes it reports
            // having written to the front of `out` (`total_out` counts
            // them), and `MaybeUninit<u8>` has the layout of `u8`.
            let written: &[u8] = unsafe { std::slice::from_raw_parts(out.as_ptr().cast(), n) };
            self.crc.update(written);
            self.left -= n as u64;
            // Input taken without output (block headers at a chunk's end)
            // goes on with the next chunk; no progress at the end is the
            // stream's end, or its input's.
            if n > 0 || want == 0 || status == flate2::Status::StreamEnd || (consumed == 0 && last)
            {
                return Ok(n);
            }
        }
    }
}

impl Read for Direct<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `&mut [u8]` is a valid `&mut [MaybeUninit<u8>]` of the
        // same length; `inflate` only writes initialised bytes into it.
        let out: &mut [MaybeUninit<u8>] =
            unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast(), buf.len()) };
        self.inflate(out)
    }
}

// SAFETY: `fill_whole` returns a count only of bytes `inflate` wrote
// (initialised, reported by the inflater), and falls back to `fill_zeroed`
// for any other length.
unsafe impl SizedRead for Direct<'_> {
    fn fills_whole(&self, len: u64) -> bool {
        len == self.left
    }

    fn fill_whole(&mut self, dst: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        if !self.fills_whole(dst.len() as u64) {
            return fill_zeroed(self, dst);
        }
        let mut filled = 0;
        while filled < dst.len() {
            let n = self.inflate(&mut dst[filled..])?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        Ok(filled)
    }
}

/// Reads the member `name` whose deflate stream is `compressed` (declared
/// `size` bytes, CRC-32 `crc`) with `read_any`, inflating its data straight
/// into the array. The size and CRC-32 are checked after the data.
///
/// `None` for a member whose header declares values of zero size: they
/// cost memory its bytes do not bound, so the caller decodes it when it
/// takes it, never ahead.
pub(super) fn read_any(
    name: &str,
    compressed: &Compressed,
    size: u64,
    crc: u32,
    options: &ReadOptions,
) -> Result<Option<AnyArray>> {
    let input = match compressed {
        Compressed::Bytes(bytes) => Feed::Slice(bytes),
        Compressed::File { file, start, len } => Feed::File {
            file,
            pos: *start,
            end: start + len,
            buf: vec![0u8; CHUNK.min(*len as usize)].into_boxed_slice(),
            at: 0,
            filled: 0,
        },
    };
    let mut member = Direct {
        name,
        size,
        input,
        inflater: flate2::Decompress::new(false),
        crc: crc32fast::Hasher::new(),
        left: size,
    };
    let (head, offset) =
        header::read_preamble(&mut member, options).map_err(|e| in_member(name, e))?;
    if head.zero_size_count() > 0 {
        return Ok(None);
    }
    let array = crate::pickle::read_any(
        &head,
        &mut Source::Sized {
            len: size.saturating_sub(offset as u64),
            reader: &mut member,
            trusted: true,
        },
        options,
    )
    .map_err(|e| in_member(name, e))?;
    // Whatever follows the data (normally nothing), so that all of the
    // declared bytes are counted and checksummed.
    io::copy(&mut member.by_ref().take(u64::MAX), &mut io::sink())
        .map_err(|e| member_io_error(name, e))?;
    if member.left > 0 {
        return Err(Error::Archive(crate::error::ArchiveError::CorruptMember {
            name: name.to_owned(),
            reason: format!(
                "its data ends after {} of the {size} bytes the archive declares",
                size - member.left
            ),
        }));
    }
    if member.crc.finalize() != crc {
        return Err(Error::Archive(crate::error::ArchiveError::BadCrc {
            name: name.to_owned(),
        }));
    }
    Ok(Some(array))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflated(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn members_decode_into_their_arrays_checked() {
        let a = ndarray::Array2::from_shape_fn((700, 300), |(i, j)| (i * 300 + j) as f64);
        let npy = crate::WriteNpy::to_npy_bytes(&a).unwrap();
        let z = deflated(&npy);
        let (size, crc) = (npy.len() as u64, crc32fast::hash(&npy));
        let options = ReadOptions::default();
        let bytes = |z: &[u8]| Compressed::Bytes(z.to_vec());
        let got = read_any("m", &bytes(&z), size, crc, &options)
            .unwrap()
            .unwrap();
        assert_eq!(got, AnyArray::F64(a.into_dyn()));
        assert!(matches!(
            read_any("m", &bytes(&z), size, crc ^ 1, &options),
            Err(Error::Archive(crate::error::ArchiveError::BadCrc { .. }))
        ));
        // Declared longer or shorter than the stream gives, cut short.
        assert!(read_any("m", &bytes(&z), size + 5, crc, &options).is_err());
        assert!(read_any("m", &bytes(&z), size - 5, crc, &options).is_err());
        assert!(read_any("m", &bytes(&z[..z.len() / 2]), size, crc, &options).is_err());
        // Trailing bytes after the data are read and checksummed.
        let mut longer = npy.clone();
        longer.extend_from_slice(b"tail");
        let z = deflated(&longer);
        let c = crc32fast::hash(&longer);
        assert!(read_any("m", &bytes(&z), longer.len() as u64, c, &options).is_ok());
        assert!(read_any("m", &bytes(&z), longer.len() as u64, c ^ 1, &options).is_err());
    }

    #[test]
    fn members_in_the_file_are_read_in_chunks_by_position() {
        // Noise: several chunks of compressed bytes.
        let mut x = 1u64;
        let a = ndarray::Array1::from_iter((0..400_000).map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            x >> 11
        }));
        let npy = crate::WriteNpy::to_npy_bytes(&a).unwrap();
        let z = deflated(&npy);
        assert!(z.len() > 3 * CHUNK);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("archive");
        let mut content = vec![7u8; 1000];
        content.extend_from_slice(&z);
        content.extend_from_slice(b"PK and the rest of the archive");
        std::fs::write(&path, &content).unwrap();
        let file = std::sync::Arc::new(File::open(&path).unwrap());
        let at = |len| Compressed::File {
            file: file.clone(),
            start: 1000,
            len,
        };
        let (size, crc) = (npy.len() as u64, crc32fast::hash(&npy));
        let options = ReadOptions::default();
        let got = read_any("m", &at(z.len() as u64), size, crc, &options)
            .unwrap()
            .unwrap();
        assert_eq!(got, AnyArray::U64(a.into_dyn()));
        // A member said to end early, or a file that ends early: errors.
        assert!(read_any("m", &at(z.len() as u64 / 2), size, crc, &options).is_err());
        std::fs::write(&path, &content[..1000 + z.len() / 2]).unwrap();
        assert!(read_any("m", &at(z.len() as u64), size, crc, &options).is_err());
    }
}
