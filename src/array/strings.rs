//! Fixed-width strings: the layout elements [`FixedBytes`] (`|SN`) and
//! [`FixedUnicode`] (`<UN`), and the converted elements `Vec<u8>` and
//! `String`, built value by value.

use crate::array::any::AnyArray;
use crate::array::element::{sealed, Element, LayoutElement};
use crate::error::{Error, Result};
use crate::format::dtype::{ByteOrder, DType, Kind, Scalar};
use crate::io::source::Source;
use ndarray::ArrayD;
use std::io::Write;

/// `N` bytes of a NumPy `|SN` string, NUL padding included: a layout
/// element, so `|S` data can be viewed and mapped.
///
/// ```
/// use ndnpy::types::FixedBytes;
///
/// let s = FixedBytes::new(*b"ab\0\0");
/// assert_eq!(s.as_bytes(), b"ab\0\0");
/// assert_eq!(s.to_vec(), b"ab");
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FixedBytes<const N: usize>([u8; N]);

impl<const N: usize> FixedBytes<N> {
    /// Wraps the bytes.
    pub const fn new(bytes: [u8; N]) -> Self {
        FixedBytes(bytes)
    }

    /// All `N` bytes, NUL padding included.
    pub fn as_bytes(&self) -> &[u8; N] {
        &self.0
    }

    /// The bytes without trailing NULs, as NumPy reads them.
    pub fn to_vec(&self) -> Vec<u8> {
        strip_nuls(&self.0).to_vec()
    }
}

impl<const N: usize> Default for FixedBytes<N> {
    fn default() -> Self {
        FixedBytes([0; N])
    }
}

impl<const N: usize> std::fmt::Debug for FixedBytes<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "FixedBytes<{N}>({:?})",
            self.to_vec().escape_ascii().to_string()
        )
    }
}

// SAFETY: `FixedBytes<N>` is `#[repr(transparent)]` over `[u8; N]`, which
// `|SN` describes exactly; every bit pattern is valid.
unsafe impl<const N: usize> LayoutElement for FixedBytes<N> {
    fn layout_dtype() -> DType {
        DType::Scalar(Scalar {
            order: ByteOrder::NotApplicable,
            kind: Kind::Bytes,
            size: N,
            unit: None,
        })
    }
}

/// `N` UCS-4 code units of a NumPy `<UN` string, NUL padding included: a
/// layout element, so `<U` data can be viewed and mapped.
///
/// ```
/// use ndnpy::types::FixedUnicode;
///
/// let s = FixedUnicode::new(['h' as u32, 'é' as u32, 0]);
/// assert_eq!(s.as_code_units(), &[104, 233, 0]);
/// assert_eq!(s.to_string()?, "hé");
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FixedUnicode<const N: usize>([u32; N]);

impl<const N: usize> FixedUnicode<N> {
    /// Wraps the code units.
    pub const fn new(units: [u32; N]) -> Self {
        FixedUnicode(units)
    }

    /// All `N` code units, NUL padding included.
    pub fn as_code_units(&self) -> &[u32; N] {
        &self.0
    }

    /// The string without trailing NULs, as NumPy reads it; a code unit
    /// that is not a Unicode scalar value is [`crate::error::DataError::InvalidUnicode`].
    #[allow(clippy::inherent_to_string_shadow_display)]
    pub fn to_string(&self) -> Result<String> {
        let end = self.0.iter().rposition(|&u| u != 0).map_or(0, |i| i + 1);
        self.0[..end]
            .iter()
            .map(|&u| {
                char::from_u32(u).ok_or(Error::Data(crate::error::DataError::InvalidUnicode {
                    index: 0,
                    value: u,
                }))
            })
            .collect()
    }
}

impl<const N: usize> Default for FixedUnicode<N> {
    fn default() -> Self {
        FixedUnicode([0; N])
    }
}

impl<const N: usize> std::fmt::Debug for FixedUnicode<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.to_string() {
            Ok(s) => write!(f, "FixedUnicode<{N}>({s:?})"),
            Err(_) => write!(f, "FixedUnicode<{N}>({:?})", &self.0[..]),
        }
    }
}

// SAFETY: `FixedUnicode<N>` is `#[repr(transparent)]` over `[u32; N]`,
// which `<UN` (native order) describes exactly; every bit pattern is valid.
unsafe impl<const N: usize> LayoutElement for FixedUnicode<N> {
    fn layout_dtype() -> DType {
        DType::Scalar(Scalar {
            order: ByteOrder::NATIVE,
            kind: Kind::Unicode,
            size: 4 * N,
            unit: None,
        })
    }
}

pub(crate) fn strip_nuls(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    &bytes[..end]
}

pub(crate) fn string_dtype(kind: Kind, width: usize) -> DType {
    DType::Scalar(Scalar {
        order: if kind == Kind::Unicode {
            ByteOrder::NATIVE
        } else {
            ByteOrder::NotApplicable
        },
        kind,
        size: if kind == Kind::Unicode {
            4 * width
        } else {
            width
        },
        unit: None,
    })
}

pub(crate) fn string_mismatch(rust: &str, wanted: Kind, found: &DType) -> Error {
    if let Err(e) = crate::plan::support::check_supported(found) {
        return e;
    }
    let hint = match found {
        DType::Scalar(s) if s.kind == Kind::Bytes => {
            format!(
                "; `{found}` holds bytes: read it as Vec<u8> or FixedBytes<{}>",
                s.size
            )
        }
        DType::Scalar(s) if s.kind == Kind::Unicode => {
            format!(
                "; `{found}` holds text: read it as String or FixedUnicode<{}>",
                s.size / 4
            )
        }
        _ => String::new(),
    };
    Error::DTypeMismatch {
        expected: format!(
            "{rust} (`{}`){hint}",
            string_dtype(wanted, 1).to_string().replace('1', "N")
        ),
        found: found.to_string(),
    }
}

impl sealed::Sealed for String {}

/// `<U` strings, decoded from UCS-4 with trailing NULs stripped (as NumPy
/// does); written as `<U{n}`, `n` the longest string in characters (at
/// least 1), as `np.save(np.array(list_of_str))` writes them.
impl Element for String {
    fn dtype() -> DType {
        string_dtype(Kind::Unicode, 1)
    }

    fn from_objects() -> Option<fn(ArrayD<crate::array::pyvalue::PyValue>) -> Result<ArrayD<Self>>>
    {
        Some(crate::array::pyvalue::convert::strings_from_objects)
    }

    fn dtype_of<'a, I: Iterator<Item = &'a Self>>(elements: I) -> DType {
        let width = elements.map(|s| s.chars().count()).max().unwrap_or(0);
        string_dtype(Kind::Unicode, width.max(1))
    }

    fn check_dtype(dtype: &DType) -> Result<()> {
        match dtype {
            DType::Scalar(s) if s.kind == Kind::Unicode => Ok(()),
            other => Err(string_mismatch("String", Kind::Unicode, other)),
        }
    }

    #[allow(private_interfaces)]
    fn read_vec(dtype: &DType, n: usize, source: &mut Source<'_>) -> Result<Vec<Self>> {
        Self::check_dtype(dtype)?;
        let DType::Scalar(s) = dtype else {
            unreachable!("checked above")
        };
        let swap = s.order != ByteOrder::NATIVE;
        let mut out: Vec<String> = Vec::new();
        if n > 0 && (s.size == 0 || source.trusted_len() >= Some(n as u64 * s.size as u64)) {
            crate::io::source::reserve(&mut out, n, n.saturating_mul(24))?;
        }
        source.read_chunks(n, s.size, |chunk, count| {
            if s.size == 0 {
                out.resize(count, String::new());
                return Ok(());
            }
            out.try_reserve(count).map_err(|_| {
                Error::Io(std::io::Error::new(
                    std::io::ErrorKind::OutOfMemory,
                    "cannot allocate the strings",
                ))
            })?;
            for item in chunk.chunks_exact(s.size) {
                let index = out.len();
                out.push(decode_ucs4(item, swap, index)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    fn write_slice<W: Write + ?Sized>(elements: &[Self], dtype: &DType, out: &mut W) -> Result<()> {
        let width = dtype.itemsize().unwrap_or(0) / 4;
        let per_chunk = (CHUNK_BYTES / (4 * width).max(1)).max(1);
        let mut buffer: Vec<u8> = Vec::new();
        for chunk in elements.chunks(per_chunk) {
            buffer.clear();
            buffer.resize(chunk.len() * 4 * width, 0);
            for (s, slot) in chunk.iter().zip(buffer.chunks_exact_mut(4 * width)) {
                let mut units = slot.chunks_exact_mut(4);
                for c in s.chars() {
                    let unit = units
                        .next()
                        .ok_or_else(|| too_long(s.chars().count(), width))?;
                    unit.copy_from_slice(&(c as u32).to_ne_bytes());
                }
            }
            out.write_all(&buffer)?;
        }
        Ok(())
    }

    fn into_any(array: ArrayD<Self>) -> AnyArray {
        AnyArray::Str(array)
    }

    fn from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray> {
        match array {
            AnyArray::Str(a) => Ok(a),
            other => Err(other),
        }
    }

    fn ref_any(array: &AnyArray) -> Option<&ArrayD<Self>> {
        match array {
            AnyArray::Str(a) => Some(a),
            _ => None,
        }
    }
}

fn too_long(len: usize, width: usize) -> Error {
    Error::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("a string of length {len} is longer than the dtype's width {width}"),
    ))
}

/// Strings are encoded into buffers of about this size before each write.
const CHUNK_BYTES: usize = 256 << 10;

/// Decodes one `<U` item: UCS-4 code units, trailing NULs stripped.
pub(crate) fn decode_ucs4(item: &[u8], swap: bool, index: usize) -> Result<String> {
    if swap {
        decode::<true>(item, index)
    } else {
        decode::<false>(item, index)
    }
}

#[inline(always)]
pub(crate) fn code_unit<const SWAP: bool>(c: &[u8]) -> u32 {
    let bytes = [c[0], c[1], c[2], c[3]];
    if SWAP {
        u32::from_ne_bytes(bytes).swap_bytes()
    } else {
        u32::from_ne_bytes(bytes)
    }
}

fn decode<const SWAP: bool>(item: &[u8], index: usize) -> Result<String> {
    // One pass finds the length (trailing NULs stripped) and whether the
    // text is ASCII, the common case, which is then copied byte by byte.
    let mut end = 0;
    let mut all = 0u32;
    for (i, c) in item.chunks_exact(4).enumerate() {
        let u = code_unit::<SWAP>(c);
        all |= u;
        if u != 0 {
            end = i + 1;
        }
    }
    let units = &item[..4 * end];
    if all < 0x80 {
        let bytes: Vec<u8> = units
            .chunks_exact(4)
            .map(|c| code_unit::<SWAP>(c) as u8)
            .collect();
        return Ok(String::from_utf8(bytes).unwrap_or_default());
    }
    let mut s = String::with_capacity(end);
    for c in units.chunks_exact(4) {
        let value = code_unit::<SWAP>(c);
        s.push(char::from_u32(value).ok_or(Error::Data(
            crate::error::DataError::InvalidUnicode { index, value },
        ))?);
    }
    Ok(s)
}

impl sealed::Sealed for Vec<u8> {}

/// `|S` byte strings with trailing NULs stripped (as NumPy does); written
/// as `|S{n}`, `n` the longest in bytes (at least 1).
impl Element for Vec<u8> {
    fn dtype() -> DType {
        string_dtype(Kind::Bytes, 1)
    }

    fn dtype_of<'a, I: Iterator<Item = &'a Self>>(elements: I) -> DType {
        let width = elements.map(Vec::len).max().unwrap_or(0);
        string_dtype(Kind::Bytes, width.max(1))
    }

    fn check_dtype(dtype: &DType) -> Result<()> {
        match dtype {
            DType::Scalar(s) if s.kind == Kind::Bytes => Ok(()),
            other => Err(string_mismatch("Vec<u8>", Kind::Bytes, other)),
        }
    }

    #[allow(private_interfaces)]
    fn read_vec(dtype: &DType, n: usize, source: &mut Source<'_>) -> Result<Vec<Self>> {
        Self::check_dtype(dtype)?;
        let size = dtype.itemsize().unwrap_or(0);
        let mut out: Vec<Vec<u8>> = Vec::new();
        if n > 0 && size == 0 {
            crate::io::source::reserve(&mut out, n, n.saturating_mul(24))?;
        }
        source.read_chunks(n, size, |chunk, count| {
            if size == 0 {
                out.resize(count, Vec::new());
                return Ok(());
            }
            out.extend(chunk.chunks_exact(size).map(|b| strip_nuls(b).to_vec()));
            Ok(())
        })?;
        Ok(out)
    }

    fn write_slice<W: Write + ?Sized>(elements: &[Self], dtype: &DType, out: &mut W) -> Result<()> {
        let width = dtype.itemsize().unwrap_or(0);
        let per_chunk = (CHUNK_BYTES / width.max(1)).max(1);
        let mut buffer: Vec<u8> = Vec::new();
        for chunk in elements.chunks(per_chunk) {
            buffer.clear();
            buffer.resize(chunk.len() * width, 0);
            for (s, slot) in chunk.iter().zip(buffer.chunks_exact_mut(width.max(1))) {
                if s.len() > width {
                    return Err(too_long(s.len(), width));
                }
                slot[..s.len()].copy_from_slice(s);
            }
            out.write_all(&buffer)?;
        }
        Ok(())
    }

    fn into_any(array: ArrayD<Self>) -> AnyArray {
        AnyArray::Bytes(array)
    }

    fn from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray> {
        match array {
            AnyArray::Bytes(a) => Ok(a),
            other => Err(other),
        }
    }

    fn ref_any(array: &AnyArray) -> Option<&ArrayD<Self>> {
        match array {
            AnyArray::Bytes(a) => Some(a),
            _ => None,
        }
    }
}
