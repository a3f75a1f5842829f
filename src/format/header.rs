//! The `.npy` preamble: magic string, version, and the header dictionary.
//!
//! Data flows bytes → [`Header`] here; everything after the header is the
//! array data, which [`crate::npy::read`], [`crate::npy::view`] and [`crate::npy::mmap`]
//! interpret with the header's dtype, shape and order.

use crate::error::{Error, Result};
use crate::format::dtype::DType;
use crate::format::literal::{self, Value, ValueKind};
use crate::io::checked::{read_full, read_full_vec};
use crate::options::ReadOptions;
use std::io::{self, Read, Write};

/// The six bytes every `.npy` file starts with.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// NumPy's `NPY_MAXDIMS`: arrays have at most 64 dimensions.
pub const NUMPY_MAX_DIMS: usize = 64;

/// Data of every `.npy` file starts at a multiple of this many bytes.
pub const ARRAY_ALIGN: usize = 64;

/// NumPy leaves room for this many digits in the growth axis of the shape.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// A `.npy` format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// 1.0: 2-byte header length, latin-1 header text.
    V1,
    /// 2.0: 4-byte header length, latin-1 header text.
    V2,
    /// 3.0: 4-byte header length, UTF-8 header text.
    V3,
}

impl Version {
    /// The (major, minor) pair written after the magic string.
    pub fn as_pair(self) -> (u8, u8) {
        match self {
            Version::V1 => (1, 0),
            Version::V2 => (2, 0),
            Version::V3 => (3, 0),
        }
    }

    fn from_pair(major: u8, minor: u8) -> Result<Version> {
        match (major, minor) {
            (1, 0) => Ok(Version::V1),
            (2, 0) => Ok(Version::V2),
            (3, 0) => Ok(Version::V3),
            _ => Err(Error::Header(
                crate::error::HeaderError::UnsupportedVersion { major, minor },
            )),
        }
    }

    /// Width of the header length field.
    fn len_field(self) -> usize {
        if self == Version::V1 {
            2
        } else {
            4
        }
    }
}

/// What a `.npy` header says: the element type, shape, memory order and
/// format version.
///
/// ```
/// use ndarray::array;
/// use ndnpy::{dtype::Header, WriteNpy};
///
/// let bytes = array![[1.0f32, 2.0], [3.0, 4.0]].to_npy_bytes().unwrap();
/// let header = Header::read_from(&bytes[..]).unwrap();
/// assert_eq!(header.dtype.to_string(), "<f4");
/// assert_eq!(header.shape, vec![2, 2]);
/// assert!(!header.fortran_order);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The element type.
    pub dtype: DType,
    /// The shape (empty for a 0-d array).
    pub shape: Vec<usize>,
    /// Whether the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// Format version of the file (on writing, the oldest version that can
    /// hold the header is chosen whatever this says).
    pub version: Version,
}

impl Header {
    /// Reads the preamble and header from `reader`, leaving it at the first
    /// byte of the data.
    pub fn read_from<R: Read>(reader: R) -> Result<Header> {
        Self::read_from_with(reader, &ReadOptions::default())
    }

    /// Like [`Header::read_from`], with explicit limits.
    pub fn read_from_with<R: Read>(reader: R, options: &ReadOptions) -> Result<Header> {
        let mut reader = crate::io::checked::CheckedRead(reader);
        read_preamble(&mut reader, options).map(|(header, _)| header)
    }

    /// Number of elements: the product of the shape (1 for a 0-d array).
    pub fn num_elements(&self) -> Result<usize> {
        self.shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| self.overflow())
    }

    /// Number of data bytes the header declares.
    ///
    /// At most `isize::MAX`, the largest allocation Rust allows.
    pub fn data_len(&self) -> Result<usize> {
        let itemsize = self.dtype.itemsize().ok_or_else(|| self.overflow())?;
        self.num_elements()?
            .checked_mul(itemsize)
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| self.overflow())
    }

    /// Refuses what NumPy cannot create (`PyArray_NewFromDescr`): more than
    /// [`NUMPY_MAX_DIMS`] dimensions, a dimension above `isize::MAX`, or an
    /// item size times the product of the non-zero dimensions above
    /// `isize::MAX` bytes (zero dimensions do not make it smaller).
    pub(crate) fn check_numpy_limits(&self) -> Result<()> {
        if self.shape.len() > NUMPY_MAX_DIMS {
            return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                "{} dimensions; NumPy arrays have at most {NUMPY_MAX_DIMS} (ReadOptions::allow_beyond_numpy_limits reads it anyway)",
                self.shape.len()
            ))));
        }
        let itemsize = self.dtype.itemsize().ok_or_else(|| self.overflow())?;
        if !within_numpy_size(&self.shape, itemsize) {
            return Err(self.overflow());
        }
        Ok(())
    }

    /// How many values the header declares that occupy no bytes of the
    /// data: elements of item size 0 (`|S0`, `<U0`, `|V0`, `[]`), and
    /// zero-size fields and sub-array items inside larger elements. Each
    /// costs a reader memory or time (a `String`, a `Vec`, an offset)
    /// although the file holds nothing for it; this is the count
    /// [`ReadOptions::max_zero_size_elements`] bounds per header. Readers
    /// that keep the arrays of many headers at once (every member of an
    /// archive) sum it over the headers to hold the same limit across them.
    /// Saturates at `u64::MAX`; a zero dimension makes it 0.
    ///
    /// ```
    /// let h = ndnpy::dtype::Header {
    ///     dtype: ndnpy::dtype::DType::parse("<U0")?,
    ///     shape: vec![3, 4],
    ///     fortran_order: false,
    ///     version: ndnpy::dtype::Version::V1,
    /// };
    /// assert_eq!(h.zero_size_count(), 12);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn zero_size_count(&self) -> u64 {
        zero_size_elements(&self.dtype, &self.shape)
    }

    /// Refuses a header that declares more than `max` values occupying no
    /// bytes of the data ([`zero_size_elements`]): each costs a reader
    /// memory or time although the file holds nothing for it (see
    /// [`ReadOptions::max_zero_size_elements`]).
    pub(crate) fn check_zero_size(&self, max: u64) -> Result<()> {
        let claimed = self.zero_size_count();
        if claimed > max {
            return Err(Error::Limit(crate::error::LimitError::ZeroSizeLimit {
                claimed,
                max,
            }));
        }
        Ok(())
    }

    fn overflow(&self) -> Error {
        Error::Limit(crate::error::LimitError::LengthOverflow {
            shape: self.shape.iter().map(|&d| d as u64).collect(),
            itemsize: self.dtype.itemsize().unwrap_or(0),
        })
    }

    /// The header as `np.save` writes it: preamble, dictionary text, padding
    /// and newline, a multiple of 64 bytes long.
    ///
    /// Fails with [`crate::error::HeaderError::BadShape`] (more than 64 dimensions) or
    /// [`crate::error::LimitError::LengthOverflow`] (too big) for a header NumPy could not load
    /// (see [`ReadOptions::allow_beyond_numpy_limits`]).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.check_numpy_limits()?;
        self.to_bytes_unchecked()
    }

    /// [`Header::to_bytes`] without NumPy's size limits: the growth code
    /// sizes a header for the longest axis it could ever record.
    pub(crate) fn to_bytes_unchecked(&self) -> Result<Vec<u8>> {
        let mut text = format!(
            "{{'descr': {}, 'fortran_order': {}, 'shape': {}, }}",
            self.dtype.descr(),
            if self.fortran_order { "True" } else { "False" },
            shape_repr(&self.shape)
        );
        let growth_axis = if self.fortran_order {
            self.shape.last()
        } else {
            self.shape.first()
        };
        if let Some(len) = growth_axis {
            let digits = len.to_string().len();
            text.extend(std::iter::repeat_n(
                ' ',
                GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits),
            ));
        }
        if let Some(latin1) = encode_latin1(&text) {
            if let Some(bytes) = wrap(&latin1, Version::V1) {
                return Ok(bytes);
            }
            if let Some(bytes) = wrap(&latin1, Version::V2) {
                return Ok(bytes);
            }
        } else if let Some(bytes) = wrap(text.as_bytes(), Version::V3) {
            return Ok(bytes);
        }
        Err(Error::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            "header text too long for any .npy version",
        )))
    }

    /// Writes [`Header::to_bytes`] to `writer`.
    pub fn write_to<W: Write>(&self, writer: W) -> Result<()> {
        crate::io::checked::CheckedWrite(writer).write_all(&self.to_bytes()?)?;
        Ok(())
    }
}

/// Whether NumPy's size rule (`PyArray_NewFromDescr`) admits an array of
/// `shape` with items of `itemsize` bytes: no dimension above
/// `isize::MAX`, and the item size times the product of the non-zero
/// dimensions at most `isize::MAX` bytes (a zero dimension does not make
/// the product smaller, so an array of no elements may be too big). Items
/// of no bytes bound nothing, as in NumPy (`np.empty((0, 2**62, 2**62),
/// 'V0')` exists). With `itemsize` 1 this is also whether ndarray can hold
/// the shape at all: it refuses more than `isize::MAX` elements in the
/// non-zero dimensions, however small the element.
pub(crate) fn within_numpy_size(shape: &[usize], itemsize: usize) -> bool {
    let mut bytes = itemsize.max(1) as u128;
    shape.iter().all(|&d| {
        if d != 0 {
            // Saturates: with zero-size items nothing bounds the product.
            bytes = bytes.saturating_mul(d as u128);
        }
        d <= isize::MAX as usize && (itemsize == 0 || bytes <= isize::MAX as u128)
    })
}

/// How many values `shape` elements of `dtype` declare that occupy no
/// bytes of the data: every element whose item size is 0 (`|S0`, `<U0`,
/// `|V0`, `[]`, `('<f8', (0,))`), and inside larger elements every
/// zero-size field and sub-array item (`[('a', '<i4'), ('b', '|S0')]`
/// declares one per element, `('|S0', (1000,))` a thousand). Saturates at
/// `u64::MAX`; a zero dimension makes it 0.
pub(crate) fn zero_size_elements(dtype: &DType, shape: &[usize]) -> u64 {
    let elements = shape.iter().fold(1u64, |n, &d| n.saturating_mul(d as u64));
    elements.saturating_mul(zero_size_values(dtype))
}

/// [`zero_size_elements`] of one element.
fn zero_size_values(dtype: &DType) -> u64 {
    let inside = match dtype {
        DType::Scalar(s) => u64::from(s.size == 0),
        DType::Record(fields) => fields
            .iter()
            .fold(0u64, |n, f| n.saturating_add(zero_size_values(&f.dtype))),
        DType::SubArray(inner, sub) => zero_size_elements(inner, sub),
    };
    // An element of no bytes is itself a value with nothing behind it,
    // even when it holds none (`[]`, a sub-array with a zero dimension).
    if dtype.itemsize() == Some(0) {
        inside.max(1)
    } else {
        inside
    }
}

/// Python's `repr` of a tuple of ints.
fn shape_repr(shape: &[usize]) -> String {
    match shape {
        [] => "()".to_owned(),
        [n] => format!("({n},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

fn encode_latin1(text: &str) -> Option<Vec<u8>> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect()
}

/// Adds preamble, padding and newline as NumPy's `_wrap_header` does, or
/// `None` when the text is too long for the version's length field.
fn wrap(text: &[u8], version: Version) -> Option<Vec<u8>> {
    let field = version.len_field();
    let hlen = text.len() + 1;
    let padlen = ARRAY_ALIGN - (MAGIC.len() + 2 + field + hlen) % ARRAY_ALIGN;
    let total_len = hlen + padlen;
    let limit = if field == 2 {
        u16::MAX as usize
    } else {
        u32::MAX as usize
    };
    if total_len > limit {
        return None;
    }
    let mut out = Vec::with_capacity(MAGIC.len() + 2 + field + total_len);
    out.extend_from_slice(MAGIC);
    let (major, minor) = version.as_pair();
    out.extend_from_slice(&[major, minor]);
    if field == 2 {
        out.extend_from_slice(&(total_len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(total_len as u32).to_le_bytes());
    }
    out.extend_from_slice(text);
    out.extend(std::iter::repeat_n(b' ', padlen));
    out.push(b'\n');
    Some(out)
}

/// Reads preamble and header, returning the header and the data offset.
pub(crate) fn read_preamble<R: Read + ?Sized>(
    reader: &mut R,
    options: &ReadOptions,
) -> Result<(Header, usize)> {
    let mut start = [0u8; 8];
    let got = read_full(reader, &mut start)?;
    if got < MAGIC.len() || &start[..6] != MAGIC {
        return Err(Error::Header(crate::error::HeaderError::BadMagic {
            found: start[..got.min(6)].to_vec(),
        }));
    }
    if got < 8 {
        return Err(Error::Header(crate::error::HeaderError::TruncatedHeader {
            expected: 10,
            found: got as u64,
        }));
    }
    let version = Version::from_pair(start[6], start[7])?;
    let field = version.len_field();
    let mut len_bytes = [0u8; 4];
    let got = read_full(reader, &mut len_bytes[..field])?;
    if got < field {
        return Err(Error::Header(crate::error::HeaderError::TruncatedHeader {
            expected: (8 + field) as u64,
            found: (8 + got) as u64,
        }));
    }
    let len = u32::from_le_bytes(len_bytes) as u64;
    if len > options.get_max_header_len() as u64 {
        return Err(Error::Limit(crate::error::LimitError::HeaderTooLarge {
            len,
            max: options.get_max_header_len(),
        }));
    }
    let len = len as usize;
    // The length is only a claim (up to 4 GiB when the limit is raised):
    // grow the buffer as the bytes arrive instead of allocating it up front.
    let mut text = Vec::with_capacity(len.min(1 << 16));
    let got = read_full_vec(reader, &mut text, len)?;
    let offset = 8 + field + len;
    if got < len {
        return Err(Error::Header(crate::error::HeaderError::TruncatedHeader {
            expected: offset as u64,
            found: (8 + field + got) as u64,
        }));
    }
    let header = parse_header_text(&text, version)?;
    if !options.get_allow_beyond_numpy_limits() {
        header.check_numpy_limits()?;
    }
    header.check_zero_size(options.get_max_zero_size_elements())?;
    Ok((header, offset))
}

/// Parses the preamble and header at the start of `bytes`.
pub(crate) fn parse_slice(bytes: &[u8], options: &ReadOptions) -> Result<(Header, usize)> {
    let mut cursor = bytes;
    read_preamble(&mut cursor, options)
}

fn parse_header_text(raw: &[u8], version: Version) -> Result<Header> {
    let text: String = if version == Version::V3 {
        String::from_utf8(raw.to_vec()).map_err(|_| {
            Error::Header(crate::error::HeaderError::HeaderEncoding {
                major: 3,
                encoding: "UTF-8",
            })
        })?
    } else {
        raw.iter().map(|&b| char::from(b)).collect()
    };
    let value = literal::parse(&text, version != Version::V3)?;
    let ValueKind::Dict(entries) = value.kind else {
        return Err(Error::Header(crate::error::HeaderError::MalformedHeader {
            pos: value.pos,
            expected: "a dictionary".into(),
            found: describe(&value),
        }));
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (key, val) in &entries {
        let slot = match &key.kind {
            ValueKind::Str(k) if k == "descr" => &mut descr,
            ValueKind::Str(k) if k == "fortran_order" => &mut fortran,
            ValueKind::Str(k) if k == "shape" => &mut shape,
            _ => {
                return Err(Error::Header(crate::error::HeaderError::UnexpectedKey(
                    describe(key),
                )))
            }
        };
        if slot.replace(val).is_some() {
            return Err(Error::Header(crate::error::HeaderError::UnexpectedKey(
                format!("{} (given twice)", describe(key)),
            )));
        }
    }
    let descr = descr.ok_or(Error::Header(crate::error::HeaderError::MissingKey(
        "descr",
    )))?;
    let fortran = fortran.ok_or(Error::Header(crate::error::HeaderError::MissingKey(
        "fortran_order",
    )))?;
    let shape = shape.ok_or(Error::Header(crate::error::HeaderError::MissingKey(
        "shape",
    )))?;
    let fortran_order = match fortran.kind {
        ValueKind::Bool(b) => b,
        _ => {
            return Err(Error::Header(crate::error::HeaderError::BadFortranOrder(
                describe(fortran),
            )))
        }
    };
    let shape = parse_shape(shape)?;
    let dtype = DType::from_value(descr)?;
    let header = Header {
        dtype,
        shape,
        fortran_order,
        version,
    };
    header.data_len()?;
    Ok(header)
}

fn parse_shape(value: &Value) -> Result<Vec<usize>> {
    let ValueKind::Tuple(items) = &value.kind else {
        return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
            "expected a tuple of non-negative integers, found {}",
            describe(value)
        ))));
    };
    let mut shape = Vec::with_capacity(items.len());
    for item in items {
        match item.kind {
            ValueKind::Int(n) if n < 0 => {
                return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                    "negative dimension {n}"
                ))))
            }
            ValueKind::Int(n) => match usize::try_from(n) {
                Ok(d) => shape.push(d),
                Err(_) => {
                    let mut claimed: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
                    claimed.push(u64::try_from(n).unwrap_or(u64::MAX));
                    return Err(Error::Limit(crate::error::LimitError::LengthOverflow {
                        shape: claimed,
                        itemsize: 0,
                    }));
                }
            },
            _ => {
                return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                    "expected an integer dimension, found {}",
                    describe(item)
                ))))
            }
        }
    }
    Ok(shape)
}

/// A short rendering of a value for error messages.
pub(crate) fn describe(value: &Value) -> String {
    match &value.kind {
        ValueKind::Dict(_) => "a dictionary".into(),
        ValueKind::Tuple(items) => format!("a tuple of {} items", items.len()),
        ValueKind::List(items) => format!("a list of {} items", items.len()),
        ValueKind::Str(s) => format!("{s:?}"),
        ValueKind::Int(n) => n.to_string(),
        ValueKind::Bool(b) => if *b { "True" } else { "False" }.into(),
        ValueKind::None => "None".into(),
    }
}
