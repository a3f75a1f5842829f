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

use super::{in_member, member_io_error};
use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use crate::format::header;
use crate::io::source::{fill_zeroed, SizedRead, Source};
use crate::options::ReadOptions;
use std::io::{self, Read};
use std::mem::MaybeUninit;

/// The bytes of one whole deflate stream held in memory, inflated as they
/// are read, counted and checksummed.
struct Direct<'a> {
    input: &'a [u8],
    inflater: flate2::Decompress,
    crc: crc32fast::Hasher,
    /// Bytes of the declared size not produced yet.
    left: u64,
}

impl Direct<'_> {
    /// Inflates into `out` (at most `left` bytes); gives the count, 0 at
    /// the stream's end or where the input ends.
    fn inflate(&mut self, out: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        let want = out
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let consumed = self.inflater.total_in() as usize;
        let before = self.inflater.total_out();
        self.inflater
            .decompress_uninit(
                &self.input[consumed..],
                &mut out[..want],
                flate2::FlushDecompress::Finish,
            )
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let n = (self.inflater.total_out() - before) as usize;
        // SAFETY: the inflater initialised the `n` bytes it reports having
        // written to the front of `out` (`total_out` counts them), and
        // `MaybeUninit<u8>` has the layout of `u8`.
        let written: &[u8] = unsafe { std::slice::from_raw_parts(out.as_ptr().cast(), n) };
        self.crc.update(written);
        self.left -= n as u64;
        Ok(n)
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
    compressed: &[u8],
    size: u64,
    crc: u32,
    options: &ReadOptions,
) -> Result<Option<AnyArray>> {
    let mut member = Direct {
        input: compressed,
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
        return Err(Error::CorruptMember {
            name: name.to_owned(),
            reason: format!(
                "its data ends after {} of the {size} bytes the archive declares",
                size - member.left
            ),
        });
    }
    if member.crc.finalize() != crc {
        return Err(Error::BadCrc {
            name: name.to_owned(),
        });
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
        let got = read_any("m", &z, size, crc, &options).unwrap().unwrap();
        assert_eq!(got, AnyArray::F64(a.into_dyn()));
        assert!(matches!(
            read_any("m", &z, size, crc ^ 1, &options),
            Err(Error::BadCrc { .. })
        ));
        // Declared longer or shorter than the stream gives, cut short.
        assert!(read_any("m", &z, size + 5, crc, &options).is_err());
        assert!(read_any("m", &z, size - 5, crc, &options).is_err());
        assert!(read_any("m", &z[..z.len() / 2], size, crc, &options).is_err());
        // Trailing bytes after the data are read and checksummed.
        let mut longer = npy.clone();
        longer.extend_from_slice(b"tail");
        let z = deflated(&longer);
        let c = crc32fast::hash(&longer);
        assert!(read_any("m", &z, longer.len() as u64, c, &options).is_ok());
        assert!(read_any("m", &z, longer.len() as u64, c ^ 1, &options).is_err());
    }
}
