//! What a member costs in memory once the read-ahead has decoded it
//! (`prefetch.rs`): not its bytes but the values as Rust holds them. A
//! `<U1` member of 16 MiB is 4 Mi strings of one character, each a
//! `String` (24 bytes) and its own allocation: several times its bytes.
//! The estimate is taken from the member's `.npy` header, inflated from
//! its first compressed bytes before the member is read ahead, and errs
//! on the high side.

use crate::format::dtype::{DType, Kind};
use crate::format::header::{self, Header};
use crate::options::ReadOptions;

/// Compressed bytes inflated to find a member's header: headers are a
/// few hundred bytes, and deflate does not shrink text below a tenth.
pub(super) const PEEK_IN: u64 = 16 << 10;

/// The most header bytes looked for: a header longer than this (a record
/// of hundreds of fields) is not estimated, and its member is decoded by
/// the caller.
const PEEK_OUT: usize = 64 << 10;

/// Bytes one allocation of `len` bytes takes from the allocator at most:
/// glibc's chunk (an 8-byte header, 16-byte granules, 32 bytes at least);
/// other allocators take no more for small sizes.
fn allocation(len: u64) -> u64 {
    if len == 0 {
        0
    } else {
        (len.saturating_add(8 + 15) & !15).max(32)
    }
}

/// Bytes one element of `dtype` holds once read with `read_any`, or
/// `None` when its values are not bounded by its bytes (Python objects:
/// a pickle can refer to one value many times).
fn per_element(dtype: &DType) -> Option<u64> {
    match dtype {
        DType::Scalar(s) => {
            let size = s.size as u64;
            match s.kind {
                Kind::Object => None,
                // A `String` and its UTF-8 bytes: at most 4 per character,
                // and `size` is 4 bytes per character.
                Kind::Unicode => Some(std::mem::size_of::<String>() as u64 + allocation(size)),
                Kind::Bytes => Some(std::mem::size_of::<Vec<u8>>() as u64 + allocation(size)),
                // Numbers, datetimes, void: as many bytes as in the file
                // (long doubles are held in 16).
                _ => Some(size.max(if size > 8 { 16 } else { 0 })),
            }
        }
        // Records are held as their bytes (object fields are ruled out by
        // the caller).
        DType::Record(_) => dtype.itemsize().map(|n| n as u64),
        DType::SubArray(inner, sub) => {
            let n = sub.iter().fold(1u64, |n, &d| n.saturating_mul(d as u64));
            per_element(inner).map(|e| e.saturating_mul(n))
        }
    }
}

/// Bytes a member with `header` holds once decoded by `read_any`, or
/// `None` when that cannot be bounded from the header: Python objects,
/// and values of zero size (which cost memory their bytes do not show).
pub(super) fn decoded_bytes(header: &Header) -> Option<u64> {
    if header.dtype.has_object() || header.zero_size_count() > 0 {
        return None;
    }
    let elements = header
        .shape
        .iter()
        .fold(1u64, |n, &d| n.saturating_mul(d as u64));
    // The array's own allocation and shape: a little.
    Some(elements.saturating_mul(per_element(&header.dtype)?) + 1024)
}

/// The `.npy` header at the start of a member whose deflate stream starts
/// with `prefix`, or `None` if it is not all there (or not a header).
pub(super) fn peek_header(prefix: &[u8], options: &ReadOptions) -> Option<Header> {
    let mut inflater = flate2::Decompress::new(false);
    let mut out = Vec::with_capacity(PEEK_OUT);
    // A partial stream: `Sync` gives what the bytes present decode to.
    inflater
        .decompress_vec(prefix, &mut out, flate2::FlushDecompress::Sync)
        .ok()?;
    header::read_preamble(&mut &out[..], options)
        .ok()
        .map(|(h, _)| h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WriteNpy;
    use std::io::Write;

    fn header_of(npy: &[u8]) -> Header {
        header::read_preamble(&mut &npy[..], &ReadOptions::default())
            .unwrap()
            .0
    }

    #[test]
    fn strings_count_what_rust_holds_numbers_their_bytes() {
        let words = ndarray::Array1::from_elem(1000, "a".to_string());
        let npy = words.to_npy_bytes().unwrap();
        let held = decoded_bytes(&header_of(&npy)).unwrap();
        // 24-byte Strings and an allocation each, not 4 bytes an item.
        assert!(held >= 1000 * (24 + 1), "{held}");
        assert!(held > 10 * npy.len() as u64);
        let numbers = ndarray::Array2::<f64>::zeros((100, 10));
        let npy = numbers.to_npy_bytes().unwrap();
        let held = decoded_bytes(&header_of(&npy)).unwrap();
        assert!((8000..8000 + 2048).contains(&held), "{held}");
        let objects = ndarray::array![crate::pickle::PyValue::Int(1)];
        let npy = objects.to_npy_bytes().unwrap();
        assert_eq!(decoded_bytes(&header_of(&npy)), None);
    }

    #[test]
    fn headers_are_found_in_the_first_compressed_bytes() {
        let a = ndarray::Array1::from_iter(0..200_000u32);
        let npy = a.to_npy_bytes().unwrap();
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(&npy).unwrap();
        let z = e.finish().unwrap();
        let options = ReadOptions::default();
        let h = peek_header(&z[..(PEEK_IN as usize).min(z.len())], &options).unwrap();
        assert_eq!(h.shape, [200_000]);
        assert!(peek_header(&z[..4], &options).is_none());
        assert!(peek_header(b"not deflate at all", &options).is_none());
    }
}
