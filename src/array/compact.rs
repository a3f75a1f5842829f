//! Compact string arrays, laid out as Arrow lays out strings: one buffer
//! holding every element's text back to back, and offsets into it, with
//! the array's shape. Reading a `<U`/`|S` file into them costs two
//! allocations whatever the element count, where `Array<String, D>` costs
//! one per element.
//!
//! Object-free and file-free: the `.npy` entry points (`read_npy`,
//! `write_npy`, ...) are in `npy/compact.rs`.

use crate::array::strings::{code_unit, string_dtype, string_mismatch, strip_nuls};
use crate::error::{Error, Result};
use crate::format::dtype::{ByteOrder, DType, Kind, Scalar};
use crate::format::header::{Header, Version};
use crate::io::source::{out_of_memory, Source};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use std::io::Write;

/// `<U` strings (NumPy's fixed-width Unicode) held as one UTF-8 buffer and
/// offsets, in C order of the shape, trailing NULs stripped as NumPy strips
/// them.
///
/// ```
/// use ndnpy::types::StringArray;
///
/// let words = StringArray::from_strs(&[2, 2], ["a", "bc", "", "δ"])?;
/// assert_eq!(words.shape(), [2, 2]);
/// assert_eq!(words.get(1), Some("bc"));
/// assert_eq!(words.values(), "abcδ");
/// assert_eq!(words.offsets(), [0, 1, 3, 3, 5]);
/// let bytes = words.to_npy_bytes()?;
/// assert_eq!(StringArray::from_npy_bytes(&bytes)?, words);
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringArray {
    shape: Vec<usize>,
    /// Characters per element in the dtype (`<U{width}`): kept from the
    /// file, so that writing back gives the bytes `np.save` gave.
    width: usize,
    data: String,
    offsets: Vec<usize>,
}

/// `|S` byte strings held as one buffer and offsets, in C order of the
/// shape, trailing NULs stripped as NumPy strips them.
///
/// ```
/// use ndnpy::types::BytesArray;
///
/// let codes = BytesArray::from_bytes(&[3], [&b"ab"[..], b"", b"xyz"])?;
/// assert_eq!(codes.get(2), Some(&b"xyz"[..]));
/// assert_eq!(codes.width(), 3);
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BytesArray {
    shape: Vec<usize>,
    width: usize,
    data: Vec<u8>,
    offsets: Vec<usize>,
}

/// Methods both layouts share, on their parts.
macro_rules! common {
    ($t:ty, $item:ty, $kind:expr) => {
        impl $t {
            /// The shape.
            pub fn shape(&self) -> &[usize] {
                &self.shape
            }

            /// The number of elements.
            pub fn len(&self) -> usize {
                self.offsets.len() - 1
            }

            /// Whether there are no elements.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The dtype's width: characters (`U`) or bytes (`S`) per
            /// element, at least the longest element's.
            pub fn width(&self) -> usize {
                self.width
            }

            /// Element `i`, counting in C order (the flat index).
            pub fn get(&self, i: usize) -> Option<&$item> {
                let (&start, &end) = (self.offsets.get(i)?, self.offsets.get(i + 1)?);
                Some(&self.data[start..end])
            }

            /// The elements in C order.
            pub fn iter(&self) -> impl ExactSizeIterator<Item = &$item> + '_ {
                self.offsets.windows(2).map(|w| &self.data[w[0]..w[1]])
            }

            /// Where each element starts in [`Self::values`], and where the
            /// last ends: `len() + 1` offsets.
            pub fn offsets(&self) -> &[usize] {
                &self.offsets
            }

            /// An array of borrowed elements (one pointer and length per
            /// element; the text stays where it is).
            pub fn view(&self) -> ArrayD<&$item> {
                ArrayD::from_shape_vec(IxDyn(&self.shape), self.iter().collect())
                    .expect("offsets match the shape")
            }

            /// The `.npy` header `np.save` writes for these elements.
            pub fn header(&self) -> Header {
                Header {
                    dtype: string_dtype($kind, self.width),
                    shape: self.shape.clone(),
                    fortran_order: false,
                    version: Version::V1,
                }
            }
        }
    };
}

common!(StringArray, str, Kind::Unicode);
common!(BytesArray, [u8], Kind::Bytes);

impl StringArray {
    /// Builds an array of `shape` from its elements in C order; the width
    /// is the longest element's in characters (at least 1, as NumPy's).
    pub fn from_strs<'a>(
        shape: &[usize],
        elements: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self> {
        let mut data = String::new();
        let mut offsets = vec![0];
        let mut width = 1;
        for s in elements {
            width = width.max(s.chars().count());
            data.push_str(s);
            offsets.push(data.len());
        }
        check_count(shape, offsets.len() - 1)?;
        Ok(StringArray {
            shape: shape.to_vec(),
            width,
            data,
            offsets,
        })
    }

    /// The text of all elements, back to back.
    pub fn values(&self) -> &str {
        &self.data
    }

    /// An owned array of `String`s (one allocation per element).
    pub fn to_array(&self) -> ArrayD<String> {
        ArrayD::from_shape_vec(IxDyn(&self.shape), self.iter().map(str::to_owned).collect())
            .expect("offsets match the shape")
    }

    /// Decodes the data of `header` from `source`.
    pub(crate) fn decode(header: &Header, source: &mut Source<'_>) -> Result<Self> {
        let s = scalar(header, Kind::Unicode, "StringArray")?;
        let n = header.num_elements()?;
        header.data_len()?;
        check_holdable(header)?;
        let swap = s.order != ByteOrder::NATIVE && s.order != ByteOrder::NotApplicable;
        let (mut data, mut offsets) = (Vec::new(), Vec::new());
        reserve(source, n, s.size / 4, &mut data, &mut offsets)?;
        offsets.push(0);
        let width = s.size / 4;
        // Reused for every chunk: the low byte of each code unit.
        let mut packed: Vec<u8> = Vec::new();
        source.read_chunks(n, s.size, |chunk, count| {
            if s.size == 0 {
                offsets.resize(offsets.len() + count, 0);
                return Ok(());
            }
            // Whole chunks of ASCII (the common case) in two tight passes:
            // every code unit's low byte, and whether any was above 0x7F;
            // then each element's bytes up to its last non-NUL.
            let ascii = if swap {
                pack_ascii::<true>(chunk, &mut packed)
            } else {
                pack_ascii::<false>(chunk, &mut packed)
            };
            if ascii {
                for item in packed.chunks_exact(width) {
                    data.extend_from_slice(&item[..text_len(item)]);
                    offsets.push(data.len());
                }
                grow_for_rest(&mut data, offsets.len() - 1, n);
                return Ok(());
            }
            for item in chunk.chunks_exact(s.size) {
                let index = offsets.len() - 1;
                if swap {
                    push_ucs4::<true>(item, &mut data, index)?;
                } else {
                    push_ucs4::<false>(item, &mut data, index)?;
                }
                offsets.push(data.len());
            }
            Ok(())
        })?;
        // SAFETY: `data` holds only whole characters: bytes of chunks that
        // `pack_ascii` found all below 0x80, and what `push_ucs4` appends
        // (bytes it checked are below 0x80, or `char::encode_utf8`). An
        // error returns before this point and drops `data`.
        let data = unsafe { String::from_utf8_unchecked(data) };
        let mut array = StringArray {
            shape: header.shape.clone(),
            width: s.size / 4,
            data,
            offsets,
        };
        if header.fortran_order && header.shape.len() > 1 {
            let (data, offsets) = to_c_order(&header.shape, array.data.as_bytes(), &array.offsets);
            array.data = String::from_utf8(data).expect("whole elements of valid text");
            array.offsets = offsets;
        }
        Ok(array)
    }

    /// Writes the data (`header()`'s dtype: UCS-4 in native order, each
    /// element padded with NULs to the width).
    pub(crate) fn encode_to<W: Write + ?Sized>(&self, out: &mut W) -> Result<()> {
        let mut buffer: Vec<u8> = Vec::with_capacity(CHUNK_BYTES + 4 * self.width);
        for s in self.iter() {
            let mut chars = 0;
            for c in s.chars() {
                buffer.extend_from_slice(&(c as u32).to_ne_bytes());
                chars += 1;
            }
            if chars > self.width {
                return Err(Error::Io(std::io::Error::other(format!(
                    "a string of {chars} characters is longer than the width {}",
                    self.width
                ))));
            }
            buffer.resize(buffer.len() + 4 * (self.width - chars), 0);
            if buffer.len() >= CHUNK_BYTES {
                out.write_all(&buffer)?;
                buffer.clear();
            }
        }
        out.write_all(&buffer)?;
        Ok(())
    }
}

impl BytesArray {
    /// Builds an array of `shape` from its elements in C order; the width
    /// is the longest element's (at least 1, as NumPy's).
    pub fn from_bytes<'a>(
        shape: &[usize],
        elements: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<Self> {
        let mut data = Vec::new();
        let mut offsets = vec![0];
        for b in elements {
            data.extend_from_slice(b);
            offsets.push(data.len());
        }
        check_count(shape, offsets.len() - 1)?;
        let width = offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
            .max(1);
        Ok(BytesArray {
            shape: shape.to_vec(),
            width,
            data,
            offsets,
        })
    }

    /// The bytes of all elements, back to back.
    pub fn values(&self) -> &[u8] {
        &self.data
    }

    /// An owned array of `Vec<u8>`s (one allocation per element).
    pub fn to_array(&self) -> ArrayD<Vec<u8>> {
        ArrayD::from_shape_vec(
            IxDyn(&self.shape),
            self.iter().map(<[u8]>::to_vec).collect(),
        )
        .expect("offsets match the shape")
    }

    /// Decodes the data of `header` from `source`.
    pub(crate) fn decode(header: &Header, source: &mut Source<'_>) -> Result<Self> {
        let s = scalar(header, Kind::Bytes, "BytesArray")?;
        let n = header.num_elements()?;
        header.data_len()?;
        check_holdable(header)?;
        let (mut data, mut offsets) = (Vec::new(), Vec::new());
        reserve(source, n, s.size, &mut data, &mut offsets)?;
        offsets.push(0);
        source.read_chunks(n, s.size, |chunk, count| {
            if s.size == 0 {
                offsets.resize(offsets.len() + count, 0);
                return Ok(());
            }
            for item in chunk.chunks_exact(s.size) {
                data.extend_from_slice(strip_nuls(item));
                offsets.push(data.len());
            }
            Ok(())
        })?;
        if header.fortran_order && header.shape.len() > 1 {
            (data, offsets) = to_c_order(&header.shape, &data, &offsets);
        }
        Ok(BytesArray {
            shape: header.shape.clone(),
            width: s.size,
            data,
            offsets,
        })
    }

    /// Writes the data (`|S{width}`, each element padded with NULs).
    pub(crate) fn encode_to<W: Write + ?Sized>(&self, out: &mut W) -> Result<()> {
        let mut buffer: Vec<u8> = Vec::with_capacity(CHUNK_BYTES + self.width);
        for b in self.iter() {
            if b.len() > self.width {
                return Err(Error::Io(std::io::Error::other(format!(
                    "a string of {} bytes is longer than the width {}",
                    b.len(),
                    self.width
                ))));
            }
            buffer.extend_from_slice(b);
            buffer.resize(buffer.len() + self.width - b.len(), 0);
            if buffer.len() >= CHUNK_BYTES {
                out.write_all(&buffer)?;
                buffer.clear();
            }
        }
        out.write_all(&buffer)?;
        Ok(())
    }
}

/// Elements are encoded into buffers of about this size before each write.
const CHUNK_BYTES: usize = 256 << 10;

fn scalar<'a>(header: &'a Header, kind: Kind, rust: &str) -> Result<&'a Scalar> {
    match &header.dtype {
        DType::Scalar(s) if s.kind == kind => Ok(s),
        other => Err(string_mismatch(rust, kind, other)),
    }
}

/// Refuses a header whose shape ndarray cannot hold (more than
/// `isize::MAX` elements in its non-zero dimensions, although a zero one
/// leaves it empty), which headers beyond NumPy's limits may give: an
/// error before any reading, as [`check_count`] gives the constructors.
fn check_holdable(header: &Header) -> Result<()> {
    if !crate::format::header::within_numpy_size(&header.shape, 1) {
        return Err(Error::Limit(crate::error::LimitError::LengthOverflow {
            shape: header.shape.iter().map(|&d| d as u64).collect(),
            itemsize: header.dtype.itemsize().unwrap_or(0),
        }));
    }
    Ok(())
}

/// Refuses `count` elements that do not fill `shape`, and a shape ndarray
/// cannot hold (more than `isize::MAX` elements in its non-zero
/// dimensions, although a zero one leaves it empty): `view`, `to_array`
/// and the Fortran-order decode build ndarray arrays of the shape.
fn check_count(shape: &[usize], count: usize) -> Result<()> {
    if !crate::format::header::within_numpy_size(shape, 1) {
        return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
            "{shape:?} has more elements than an ndarray array holds"
        ))));
    }
    let want = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if want != Some(count) {
        return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
            "{count} elements do not fill the shape {shape:?}"
        ))));
    }
    Ok(())
}

/// Reserves the offsets (and a guess of the text) up front when the source
/// vouches for holding the data; otherwise they grow as it arrives.
/// Elements of width 0 arrive all at once, from no bytes: their offsets
/// are reserved here whatever the source, as an error if they cannot be
/// (the header's parser bounds how many there are:
/// [`crate::ReadOptions::max_zero_size_elements`]).
fn reserve(
    source: &Source<'_>,
    n: usize,
    width: usize,
    data: &mut Vec<u8>,
    offsets: &mut Vec<usize>,
) -> Result<()> {
    if width == 0 {
        let more = n.checked_add(1).ok_or_else(|| out_of_memory(usize::MAX))?;
        return crate::io::source::reserve(offsets, more, more.saturating_mul(8));
    }
    let bytes = n as u64 * width as u64;
    if n > 0 && source.trusted_len() >= Some(bytes) {
        crate::io::source::reserve_huge(offsets, n + 1, (n + 1).saturating_mul(8))?;
        // Room for every element at full width in one byte per character
        // (ASCII text, or bytes), up to 1 GiB: address space, of which
        // only the pages the text reaches are ever touched. A smaller
        // guess costs a move of the whole buffer when it is outgrown, and
        // with huge pages the allocator cannot grow it in place.
        let guess = n.saturating_mul(width).min(1 << 30);
        // Only a guess: if that much address space cannot be had, the
        // buffer grows as the text arrives.
        let _ = crate::io::source::reserve_huge(data, guess, guess);
    }
    Ok(())
}

/// The length of `item` without its trailing NULs, eight bytes at a time.
#[inline]
fn text_len(item: &[u8]) -> usize {
    let mut end = item.len();
    while end >= 8 {
        let word = u64::from_le_bytes(item[end - 8..end].try_into().expect("8 bytes"));
        if word != 0 {
            // The highest non-zero byte of the little-endian word is the
            // last non-NUL byte.
            return end - (word.leading_zeros() / 8) as usize;
        }
        end -= 8;
    }
    item[..end]
        .iter()
        .rposition(|&b| b != 0)
        .map_or(0, |i| i + 1)
}

/// After the first chunk, reserves room for the rest of the text at the
/// rate seen so far (plus an eighth), so that the buffer is not copied as
/// it doubles.
fn grow_for_rest(data: &mut Vec<u8>, done: usize, n: usize) {
    if done > 0 && done < n {
        let expected = (data.len() as f64 / done as f64 * n as f64 * 1.125) as usize;
        if expected > data.capacity() {
            // At least half as much again: an estimate that creeps up chunk
            // by chunk (text that lengthens along the file) must not move
            // the whole buffer after every chunk.
            let target = expected.max(data.capacity().saturating_mul(3) / 2);
            let _ = crate::io::source::reserve_huge(data, target - data.len(), target);
        }
    }
}

/// Puts the low byte of every code unit of `chunk` in `packed`; whether
/// all code units are ASCII (below 0x80), and so `packed` is the text.
fn pack_ascii<const SWAP: bool>(chunk: &[u8], packed: &mut Vec<u8>) -> bool {
    packed.clear();
    packed.resize(chunk.len() / 4, 0);
    // Blocks of 16 code units with fixed bounds, which the compiler turns
    // into vector loads, ORs and packs; the tail one unit at a time.
    const BLOCK: usize = 16;
    let mut all = 0u32;
    let mut outs = packed.chunks_exact_mut(BLOCK);
    let mut ins = chunk.chunks_exact(4 * BLOCK);
    for (out, block) in (&mut outs).zip(&mut ins) {
        let out: &mut [u8; BLOCK] = out.try_into().expect("BLOCK bytes");
        let block: &[u8; 4 * BLOCK] = block.try_into().expect("4 * BLOCK bytes");
        let mut acc = 0u32;
        for i in 0..BLOCK {
            let u = code_unit::<SWAP>(&block[4 * i..4 * i + 4]);
            acc |= u;
            out[i] = u as u8;
        }
        all |= acc;
    }
    for (out, c) in outs
        .into_remainder()
        .iter_mut()
        .zip(ins.remainder().chunks_exact(4))
    {
        let u = code_unit::<SWAP>(c);
        all |= u;
        *out = u as u8;
    }
    all < 0x80
}

/// Appends one `<U` item as UTF-8, trailing NULs stripped: ASCII (the
/// common case) byte by byte, anything else checked character by character.
#[inline]
fn push_ucs4<const SWAP: bool>(item: &[u8], out: &mut Vec<u8>, index: usize) -> Result<()> {
    let mut end = item.len() / 4;
    while end > 0 && code_unit::<SWAP>(&item[4 * (end - 1)..4 * end]) == 0 {
        end -= 1;
    }
    let units = &item[..4 * end];
    let all = units
        .chunks_exact(4)
        .fold(0u32, |acc, c| acc | code_unit::<SWAP>(c));
    if all < 0x80 {
        out.extend(units.chunks_exact(4).map(|c| code_unit::<SWAP>(c) as u8));
        return Ok(());
    }
    for c in units.chunks_exact(4) {
        let value = code_unit::<SWAP>(c);
        let ch =
            char::from_u32(value).ok_or(Error::Data(crate::error::DataError::InvalidUnicode {
                index,
                value,
            }))?;
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    }
    Ok(())
}

/// Elements read in Fortran order (`shape`), rearranged into C order.
fn to_c_order(shape: &[usize], data: &[u8], offsets: &[usize]) -> (Vec<u8>, Vec<usize>) {
    // Element `k` of the file is at index `order[k]`... built through an
    // array of file positions laid out in Fortran order, read in C order.
    let n = offsets.len() - 1;
    let positions =
        ndarray::Array::from_shape_vec(IxDyn(shape).f(), (0..n).collect::<Vec<usize>>())
            .expect("n elements of the shape");
    let mut out = Vec::with_capacity(data.len());
    let mut out_offsets = Vec::with_capacity(n + 1);
    out_offsets.push(0);
    for &k in positions.iter() {
        out.extend_from_slice(&data[offsets[k]..offsets[k + 1]]);
        out_offsets.push(out.len());
    }
    (out, out_offsets)
}
