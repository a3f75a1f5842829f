//! NumPy type descriptors: parse and format the `descr` value of a header.
//!
//! Parsing follows what `numpy.lib.format.descr_to_dtype` (and so `np.load`)
//! accepts, and [`DType::descr`] spells a descriptor exactly as `np.save`
//! writes it, `repr(numpy.lib.format.dtype_to_descr(dtype))`, as checked
//! against NumPy 2.x on 64-bit Linux.
//!
//! Deliberate differences from NumPy:
//! - type strings with stray signs, spaces or old-style datetime units
//!   (`'<i+8'`, `'i 8'`, `'M8[ 2ms]'`, `'M8[ns/2]'`), which `np.dtype`
//!   tolerates through C library quirks, are refused;
//! - a top-level sub-array `('<f8', (2,))` is formatted as such, where NumPy
//!   would write the opaque `'|V16'` (`np.save` never writes one: it turns a
//!   sub-array dtype into extra array dimensions);
//! - field titles must be strings (NumPy takes any Python object);
//! - NumPy 2's variable-width string dtype (`'T'`) is refused: it never
//!   appears in a `.npy` header (NumPy saves it as an object array).

use crate::error::{Error, Result};
use crate::format::literal::{Value, ValueKind};
use std::fmt;

/// Byte order of a scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// `<`
    Little,
    /// `>`
    Big,
    /// `|`: one-byte types, strings of bytes, void, object.
    NotApplicable,
}

impl ByteOrder {
    /// The byte order of the machine the code runs on.
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "little") {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };

    /// The mark NumPy writes for this order: `<`, `>` or `|`.
    pub fn mark(self) -> char {
        match self {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        }
    }
}

/// The kind character of a scalar type string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `b`
    Bool,
    /// `i`
    Int,
    /// `u`
    UInt,
    /// `f`
    Float,
    /// `c`
    Complex,
    /// `m`
    Timedelta,
    /// `M`
    Datetime,
    /// `S` (also spelled `a`)
    Bytes,
    /// `U`
    Unicode,
    /// `V`
    Void,
    /// `O`
    Object,
}

impl Kind {
    /// The kind character NumPy writes in a type string.
    pub fn char(self) -> char {
        match self {
            Kind::Bool => 'b',
            Kind::Int => 'i',
            Kind::UInt => 'u',
            Kind::Float => 'f',
            Kind::Complex => 'c',
            Kind::Timedelta => 'm',
            Kind::Datetime => 'M',
            Kind::Bytes => 'S',
            Kind::Unicode => 'U',
            Kind::Void => 'V',
            Kind::Object => 'O',
        }
    }
}

/// A scalar type such as `<f8`, `|S5` or `<M8[ns]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scalar {
    /// Byte order, normalised as NumPy does (`=` and no mark become native,
    /// one-byte and byte-order-free types become `|`).
    pub order: ByteOrder,
    /// The kind.
    pub kind: Kind,
    /// Item size in bytes (for `U`, four bytes per character).
    pub size: usize,
    /// Datetime / timedelta unit text between brackets, e.g. `ns` or `10ms`.
    ///
    /// Normalised as NumPy does: a multiplier of 1 and leading zeros are
    /// dropped, `μs` becomes `us`, and the generic unit is `None`.
    pub unit: Option<String>,
}

impl Scalar {
    /// The type string NumPy writes, e.g. `<f8`, `|S5`, `<U7`, `|O`, `<M8[ns]`.
    pub fn type_str(&self) -> String {
        let mut s = String::new();
        s.push(self.order.mark());
        s.push(self.kind.char());
        match self.kind {
            Kind::Object => {}
            Kind::Unicode => s.push_str(&(self.size / 4).to_string()),
            Kind::Datetime | Kind::Timedelta => {
                s.push_str(&self.size.to_string());
                if let Some(unit) = &self.unit {
                    s.push('[');
                    s.push_str(unit);
                    s.push(']');
                }
            }
            _ => s.push_str(&self.size.to_string()),
        }
        s
    }
}

/// One field of a record type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// Field name; empty for padding entries `('', '|V4')`.
    pub name: String,
    /// Title of a `(title, name)` pair.
    pub title: Option<String>,
    /// Field type; a `(name, descr, shape)` entry has a [`DType::SubArray`].
    pub dtype: DType,
}

/// A NumPy type descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DType {
    /// A scalar type string.
    Scalar(Scalar),
    /// A list of fields.
    Record(Vec<Field>),
    /// `(descr, shape)`: a fixed-shape block of the inner type.
    SubArray(Box<DType>, Vec<usize>),
}

/// Largest item size NumPy allows for a flexible type or sub-array
/// dimension (a C `int`).
const MAX_C_INT: usize = i32::MAX as usize;

/// Longest descriptor rendering quoted in an error message.
const MAX_DESCR_IN_MESSAGE: usize = 120;

fn bad(descr: impl Into<String>, reason: impl Into<String>) -> Error {
    Error::BadDescr {
        descr: descr.into(),
        reason: reason.into(),
    }
}

impl DType {
    /// Parses a descriptor from a parsed header value.
    pub(crate) fn from_value(value: &Value) -> Result<DType> {
        match &value.kind {
            ValueKind::Str(s) => DType::parse(s),
            ValueKind::List(entries) => record_from_values(value, entries),
            ValueKind::Tuple(items) => {
                if items.len() != 2 {
                    return Err(bad(
                        render_value(value),
                        format!(
                            "a sub-array descriptor is a pair (descr, shape), not a tuple of {} items",
                            items.len()
                        ),
                    ));
                }
                let inner = DType::from_value(&items[0])?;
                let shape = shape_from_value(&items[1], value)?;
                Ok(sub_array(inner, shape))
            }
            _ => Err(bad(
                render_value(value),
                "expected a type string, a list of fields or a (descr, shape) pair",
            )),
        }
    }

    /// Parses a type string such as `"<f8"`.
    pub fn parse(descr: &str) -> Result<DType> {
        parse_type_str(descr).map(DType::Scalar)
    }

    /// Whether any part of the dtype is `O` (a Python object), so that
    /// NumPy pickles the data and its length is not the header's.
    ///
    /// ```
    /// use ndnpy::DType;
    ///
    /// assert!(DType::parse("|O")?.has_object());
    /// assert!(!DType::parse("<f8")?.has_object());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn has_object(&self) -> bool {
        match self {
            DType::Scalar(s) => s.kind == Kind::Object,
            DType::Record(fields) => fields.iter().any(|f| f.dtype.has_object()),
            DType::SubArray(inner, _) => inner.has_object(),
        }
    }

    /// Size of one element in bytes, or `None` on overflow.
    pub fn itemsize(&self) -> Option<usize> {
        match self {
            DType::Scalar(s) => Some(s.size),
            DType::Record(fields) => fields
                .iter()
                .try_fold(0usize, |acc, f| acc.checked_add(f.dtype.itemsize()?)),
            DType::SubArray(inner, shape) => shape
                .iter()
                .try_fold(inner.itemsize()?, |acc, &d| acc.checked_mul(d)),
        }
    }

    /// The descriptor as Python's `repr` spells it in a header written by `np.save`.
    pub fn descr(&self) -> String {
        let mut out = String::new();
        write_descr(self, &mut out);
        out
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DType::Scalar(s) => f.write_str(&s.type_str()),
            _ => f.write_str(&self.descr()),
        }
    }
}

// ---------------------------------------------------------------------------
// Type strings

/// Parses a type string: an optional byte-order mark, then a kind and size,
/// a one-character code, or a NumPy type name.
fn parse_type_str(descr: &str) -> Result<Scalar> {
    let quoted = || python_str_repr(&truncate(descr, MAX_DESCR_IN_MESSAGE));
    if let Some(s) = scalar_from_name(descr) {
        return s.map_err(|reason| bad(quoted(), reason));
    }
    let (mark, rest) = match descr.chars().next() {
        Some(c @ ('<' | '>' | '=' | '|')) => (Some(c), &descr[1..]),
        _ => (None, descr),
    };
    let mut chars = rest.chars();
    let Some(code) = chars.next() else {
        return Err(bad(quoted(), "empty type string"));
    };
    let tail = chars.as_str();
    let (kind, size, unit) = kind_and_size(code, tail).map_err(|reason| bad(quoted(), reason))?;
    Ok(normalise(mark, kind, size, unit))
}

/// Applies NumPy's byte-order normalisation.
fn normalise(mark: Option<char>, kind: Kind, size: usize, unit: Option<String>) -> Scalar {
    let has_order = match kind {
        Kind::Bool | Kind::Bytes | Kind::Void | Kind::Object => false,
        Kind::Int | Kind::UInt => size > 1,
        _ => true,
    };
    let order = if !has_order {
        ByteOrder::NotApplicable
    } else {
        match mark {
            Some('<') => ByteOrder::Little,
            Some('>') => ByteOrder::Big,
            // `=`, `|` (meaningless for these types) and no mark: native.
            _ => ByteOrder::NATIVE,
        }
    };
    Scalar {
        order,
        kind,
        size,
        unit,
    }
}

/// The size of a pointer, which is the item size of object arrays.
const POINTER_SIZE: usize = std::mem::size_of::<usize>();

type KindSize = (Kind, usize, Option<String>);

/// Interprets the text after the byte-order mark: a code character and the
/// rest (a size, a datetime unit, or nothing).
fn kind_and_size(code: char, tail: &str) -> std::result::Result<KindSize, String> {
    if tail.is_empty() {
        return one_char_code(code);
    }
    let kind = match code {
        'b' => Kind::Bool,
        'i' => Kind::Int,
        'u' => Kind::UInt,
        'f' => Kind::Float,
        'c' => Kind::Complex,
        'S' | 'a' => Kind::Bytes,
        'U' => Kind::Unicode,
        'V' => Kind::Void,
        'O' => Kind::Object,
        'M' => Kind::Datetime,
        'm' => Kind::Timedelta,
        _ => {
            return Err(format!(
                "'{code}' is not a type kind that takes a size (expected one of b i u f c S a U V O M m)"
            ))
        }
    };
    // Datetime: `M8` or `M8[unit]`.
    let (digits, unit_text) = match tail.find('[') {
        Some(i) if matches!(kind, Kind::Datetime | Kind::Timedelta) => {
            (&tail[..i], Some(&tail[i..]))
        }
        _ => (tail, None),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{tail}' is not a valid item size"));
    }
    let n: usize = digits
        .trim_start_matches('0')
        .parse()
        .or_else(|_| {
            if digits.bytes().all(|b| b == b'0') {
                Ok(0)
            } else {
                Err(())
            }
        })
        .map_err(|_| format!("item size {digits} is too large"))?;
    let size_error = |allowed: &str| {
        Err(format!(
            "{n} is not a valid size for kind '{code}' (allowed: {allowed})"
        ))
    };
    let size = match kind {
        Kind::Bool if n == 1 => 1,
        Kind::Bool => return size_error("1"),
        Kind::Int | Kind::UInt if matches!(n, 1 | 2 | 4 | 8) => n,
        Kind::Int | Kind::UInt => return size_error("1, 2, 4, 8"),
        Kind::Float if matches!(n, 2 | 4 | 8 | 16) => n,
        Kind::Float => return size_error("2, 4, 8, 16"),
        Kind::Complex if matches!(n, 8 | 16 | 32) => n,
        Kind::Complex => return size_error("8, 16, 32"),
        Kind::Object if n == 8 || n == POINTER_SIZE || n == 4 => POINTER_SIZE,
        Kind::Object => return size_error("4, 8"),
        Kind::Datetime | Kind::Timedelta if n == 8 => 8,
        Kind::Datetime | Kind::Timedelta => return size_error("8"),
        Kind::Bytes | Kind::Void if n <= MAX_C_INT => n,
        Kind::Bytes | Kind::Void => {
            return Err(format!(
                "item size {n} exceeds NumPy's limit of {MAX_C_INT} bytes"
            ))
        }
        Kind::Unicode if n <= MAX_C_INT / 4 => n * 4,
        Kind::Unicode => {
            return Err(format!(
                "{n} characters exceed NumPy's limit of {} characters",
                MAX_C_INT / 4
            ))
        }
    };
    let unit = match unit_text {
        Some(text) => parse_unit(text)?,
        None => None,
    };
    Ok((kind, size, unit))
}

/// NumPy's one-character type codes (64-bit Linux meanings).
fn one_char_code(code: char) -> std::result::Result<KindSize, String> {
    let (kind, size) = match code {
        '?' => (Kind::Bool, 1),
        'b' => (Kind::Int, 1),
        'B' => (Kind::UInt, 1),
        'h' => (Kind::Int, 2),
        'H' => (Kind::UInt, 2),
        'i' => (Kind::Int, 4),
        'I' => (Kind::UInt, 4),
        'l' | 'q' | 'p' | 'n' => (Kind::Int, 8),
        'L' | 'Q' | 'P' | 'N' => (Kind::UInt, 8),
        'e' => (Kind::Float, 2),
        'f' => (Kind::Float, 4),
        'd' => (Kind::Float, 8),
        'g' => (Kind::Float, 16),
        'F' => (Kind::Complex, 8),
        'D' => (Kind::Complex, 16),
        'G' => (Kind::Complex, 32),
        'S' | 'a' => (Kind::Bytes, 0),
        'c' => (Kind::Bytes, 1),
        'U' => (Kind::Unicode, 0),
        'V' => (Kind::Void, 0),
        'O' => (Kind::Object, POINTER_SIZE),
        'M' => (Kind::Datetime, 8),
        'm' => (Kind::Timedelta, 8),
        _ => return Err(format!("'{code}' is not a NumPy type code")),
    };
    Ok((kind, size, None))
}

/// Parses `[unit]` after `M8`/`m8`: an optional multiplier and a unit.
/// Returns the normalised unit text, `None` for the generic unit.
fn parse_unit(text: &str) -> std::result::Result<Option<String>, String> {
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .filter(|t| !t.contains(['[', ']']))
        .ok_or_else(|| format!("invalid datetime unit '{text}' (expected e.g. [ns] or [10ms])"))?;
    let split = inner
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(inner.len());
    let (digits, unit) = inner.split_at(split);
    let unit = match unit {
        "Y" | "M" | "W" | "D" | "h" | "m" | "s" | "ms" | "us" | "ns" | "ps" | "fs" | "as"
        | "generic" => unit,
        "μs" => "us",
        _ => {
            return Err(format!(
                "invalid datetime unit '{text}' (units: Y M W D h m s ms us ns ps fs as generic, \
                 with an optional multiplier as in [10ms])"
            ))
        }
    };
    if unit == "generic" {
        return Ok(None);
    }
    if digits.is_empty() {
        return Ok(Some(unit.to_string()));
    }
    let trimmed = digits.trim_start_matches('0');
    let multiplier: u64 = if trimmed.is_empty() {
        0
    } else {
        trimmed
            .parse()
            .ok()
            .filter(|&m| m <= i32::MAX as u64)
            .ok_or_else(|| format!("datetime unit multiplier {digits} is too large"))?
    };
    Ok(Some(if multiplier == 1 {
        unit.to_string()
    } else {
        format!("{multiplier}{unit}")
    }))
}

/// NumPy type names (`float64`, `int32`, `datetime64[ns]`, ...); `None` if
/// `name` is not one.
fn scalar_from_name(name: &str) -> Option<std::result::Result<Scalar, String>> {
    let (base, unit_text) = match name.find('[') {
        Some(i) => (&name[..i], Some(&name[i..])),
        None => (name, None),
    };
    let (kind, size) = match base {
        "bool" | "bool_" => (Kind::Bool, 1),
        "int8" | "byte" => (Kind::Int, 1),
        "int16" | "short" => (Kind::Int, 2),
        "int32" | "intc" => (Kind::Int, 4),
        "int64" | "int" | "intp" | "long" | "longlong" => (Kind::Int, 8),
        "uint8" | "ubyte" => (Kind::UInt, 1),
        "uint16" | "ushort" => (Kind::UInt, 2),
        "uint32" | "uintc" => (Kind::UInt, 4),
        "uint64" | "uint" | "uintp" | "ulong" | "ulonglong" => (Kind::UInt, 8),
        "float16" | "half" => (Kind::Float, 2),
        "float32" | "single" => (Kind::Float, 4),
        "float64" | "float" | "double" => (Kind::Float, 8),
        "float128" | "longdouble" => (Kind::Float, 16),
        "complex64" | "csingle" => (Kind::Complex, 8),
        "complex128" | "complex" | "cdouble" => (Kind::Complex, 16),
        "complex256" | "clongdouble" => (Kind::Complex, 32),
        "bytes" | "bytes_" => (Kind::Bytes, 0),
        "str" | "str_" | "unicode" => (Kind::Unicode, 0),
        "void" => (Kind::Void, 0),
        "object" | "object_" => (Kind::Object, POINTER_SIZE),
        "datetime64" => (Kind::Datetime, 8),
        "timedelta64" => (Kind::Timedelta, 8),
        _ => return None,
    };
    let unit = match unit_text {
        None => None,
        Some(_) if !matches!(kind, Kind::Datetime | Kind::Timedelta) => return None,
        Some(text) => match parse_unit(text) {
            Ok(u) => u,
            Err(e) => return Some(Err(e)),
        },
    };
    Some(Ok(normalise(None, kind, size, unit)))
}

// ---------------------------------------------------------------------------
// Records and sub-arrays

/// Builds a sub-array, collapsing an empty shape to the inner type as NumPy does.
fn sub_array(inner: DType, shape: Vec<usize>) -> DType {
    if shape.is_empty() {
        inner
    } else {
        DType::SubArray(Box::new(inner), shape)
    }
}

/// A sub-array shape: a non-negative int or a tuple (or list) of them;
/// `None` means no shape, as in NumPy.
fn shape_from_value(shape: &Value, whole: &Value) -> Result<Vec<usize>> {
    let dim = |v: &Value| -> Result<usize> {
        match v.kind {
            ValueKind::Int(n) if n < 0 => Err(bad(
                render_value(whole),
                format!("sub-array dimension {n} is negative"),
            )),
            ValueKind::Int(n) if n > MAX_C_INT as i128 => Err(bad(
                render_value(whole),
                format!("sub-array dimension {n} exceeds NumPy's limit of {MAX_C_INT}"),
            )),
            ValueKind::Int(n) => Ok(n as usize),
            _ => Err(bad(
                render_value(whole),
                format!(
                    "sub-array shape must be an int or a tuple of ints, found {}",
                    render_value(shape)
                ),
            )),
        }
    };
    match &shape.kind {
        ValueKind::Int(_) => Ok(vec![dim(shape)?]),
        // `np.dtype((t, None))` is `t`, like an empty shape.
        ValueKind::None => Ok(Vec::new()),
        ValueKind::Tuple(items) | ValueKind::List(items) => items.iter().map(dim).collect(),
        _ => Err(bad(
            render_value(whole),
            format!(
                "sub-array shape must be an int or a tuple of ints, found {}",
                render_value(shape)
            ),
        )),
    }
}

/// A padding entry as `descr_to_dtype` recognises it: an empty name (not a
/// title pair) and a void type without fields (a sub-array counts).
fn is_padding(field: &Field) -> bool {
    field.title.is_none()
        && field.name.is_empty()
        && match &field.dtype {
            DType::Scalar(s) => s.kind == Kind::Void,
            DType::SubArray(..) => true,
            DType::Record(_) => false,
        }
}

fn record_from_values(whole: &Value, entries: &[Value]) -> Result<DType> {
    let mut fields: Vec<Field> = Vec::with_capacity(entries.len());
    let mut seen = std::collections::HashSet::new();
    for entry in entries {
        let field = field_from_value(entry)?;
        if is_padding(&field) {
            // NumPy turns padding into a gap in the offsets and writes one
            // `('', '|Vn')` entry per gap: merge adjacent padding.
            let size = field
                .dtype
                .itemsize()
                .ok_or_else(|| bad(render_value(entry), "padding size overflows"))?;
            if let Some(last) = fields.last_mut().filter(|f| is_padding(f)) {
                let DType::Scalar(s) = &mut last.dtype else {
                    unreachable!("merged padding is always a void scalar")
                };
                s.size = s
                    .size
                    .checked_add(size)
                    .ok_or_else(|| bad(render_value(whole), "padding size overflows"))?;
            } else {
                fields.push(Field {
                    name: String::new(),
                    title: None,
                    dtype: DType::Scalar(Scalar {
                        order: ByteOrder::NotApplicable,
                        kind: Kind::Void,
                        size,
                        unit: None,
                    }),
                });
            }
            continue;
        }
        for key in field.title.iter().chain(std::iter::once(&field.name)) {
            if !seen.insert(key.clone()) {
                return Err(bad(
                    render_value(whole),
                    format!(
                        "field name or title {} is used twice",
                        python_str_repr(&truncate(key, MAX_DESCR_IN_MESSAGE))
                    ),
                ));
            }
        }
        fields.push(field);
    }
    // Zero-size padding leaves no gap, so NumPy writes nothing for it.
    fields.retain(|f| !(is_padding(f) && f.dtype.itemsize() == Some(0)));
    let record = DType::Record(fields);
    if record.itemsize().is_none() {
        return Err(bad(render_value(whole), "record size overflows"));
    }
    Ok(record)
}

/// One record entry: `(name, descr)` or `(name, descr, shape)`, where name is
/// a string or a `(title, name)` pair.
fn field_from_value(entry: &Value) -> Result<Field> {
    let items = match &entry.kind {
        // `descr_to_dtype` only unpacks the entry, so a list works too.
        ValueKind::Tuple(items) | ValueKind::List(items) if matches!(items.len(), 2 | 3) => items,
        _ => {
            return Err(bad(
                render_value(entry),
                "a record field must be a tuple (name, descr) or (name, descr, shape)",
            ))
        }
    };
    let (name, title) = match &items[0].kind {
        ValueKind::Str(name) => (name.clone(), None),
        ValueKind::Tuple(pair) if pair.len() == 2 => match (&pair[0].kind, &pair[1].kind) {
            (ValueKind::Str(title), ValueKind::Str(name)) => (name.clone(), Some(title.clone())),
            _ => {
                return Err(bad(
                    render_value(entry),
                    "a field's (title, name) pair must hold two strings",
                ))
            }
        },
        _ => {
            return Err(bad(
                render_value(entry),
                "a field name must be a string or a (title, name) pair of strings",
            ))
        }
    };
    if title.as_deref() == Some(name.as_str()) {
        return Err(bad(
            render_value(entry),
            "a field's title must differ from its name",
        ));
    }
    let mut dtype = DType::from_value(&items[1])?;
    if let Some(shape) = items.get(2) {
        dtype = sub_array(dtype, shape_from_value(shape, entry)?);
    }
    if dtype.itemsize().is_none() {
        return Err(bad(render_value(entry), "field size overflows"));
    }
    Ok(Field { name, title, dtype })
}

// ---------------------------------------------------------------------------
// Formatting

fn write_descr(dtype: &DType, out: &mut String) {
    match dtype {
        DType::Scalar(s) => out.push_str(&python_str_repr(&s.type_str())),
        DType::Record(fields) => {
            out.push('[');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('(');
                match &field.title {
                    Some(title) => {
                        out.push('(');
                        out.push_str(&python_str_repr(title));
                        out.push_str(", ");
                        out.push_str(&python_str_repr(&field.name));
                        out.push(')');
                    }
                    None => out.push_str(&python_str_repr(&field.name)),
                }
                out.push_str(", ");
                match &field.dtype {
                    DType::SubArray(inner, shape) => {
                        write_descr(inner, out);
                        out.push_str(", ");
                        write_shape(shape, out);
                    }
                    other => write_descr(other, out),
                }
                out.push(')');
            }
            out.push(']');
        }
        DType::SubArray(inner, shape) => {
            out.push('(');
            write_descr(inner, out);
            out.push_str(", ");
            write_shape(shape, out);
            out.push(')');
        }
    }
}

/// Python's tuple repr: `(3,)`, `(2, 3)`, `()`.
fn write_shape(shape: &[usize], out: &mut String) {
    out.push('(');
    for (i, d) in shape.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&d.to_string());
    }
    if shape.len() == 1 {
        out.push(',');
    }
    out.push(')');
}

/// Whether Python's `str.isprintable` is false for `c`.
///
/// An approximation of Python's table: control characters, the Latin-1
/// controls and no-break space, soft hyphen, the other space, line and
/// paragraph separators, common format characters and private-use areas.
/// Unassigned code points (which Python also escapes) are not detected.
fn python_unprintable(c: char) -> bool {
    matches!(c as u32,
        0x00..=0x1f
        | 0x7f..=0xa0
        | 0xad
        | 0x600..=0x605
        | 0x61c
        | 0x6dd
        | 0x70f
        | 0x1680
        | 0x180e
        | 0x2000..=0x200f
        | 0x2028..=0x202f
        | 0x205f..=0x2064
        | 0x2066..=0x206f
        | 0x3000
        | 0xd800..=0xf8ff
        | 0xfeff
        | 0xfff9..=0xfffb
        | 0xfffe..=0xffff
        | 0x110bd
        | 0x1d173..=0x1d17a
        | 0xe0001
        | 0xe0020..=0xe007f
        | 0xf0000..=0x10ffff)
}

/// Python's `repr` of a string: single quotes unless the text has `'` and no
/// `"`; `\\`, the quote, `\n`, `\r`, `\t` escaped; other unprintable
/// characters as `\xhh`, `\uhhhh` or `\Uhhhhhhhh`; the rest kept as is.
pub(crate) fn python_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if python_unprintable(c) => {
                let n = c as u32;
                if n < 0x100 {
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Cuts `s` to at most `max` characters, marking the cut with `...`.
fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// A short Python-like rendering of a header value for error messages,
/// cut at about [`MAX_DESCR_IN_MESSAGE`] characters.
fn render_value(value: &Value) -> String {
    let mut out = String::new();
    let complete = render_into(value, &mut out, MAX_DESCR_IN_MESSAGE);
    if complete {
        out
    } else {
        truncate(&out, MAX_DESCR_IN_MESSAGE)
    }
}

/// Appends a rendering of `value`; stops (returning false) once `out` is
/// longer than `budget` bytes, so the cost stays bounded.
fn render_into(value: &Value, out: &mut String, budget: usize) -> bool {
    if out.len() > budget {
        return false;
    }
    let seq = |items: &[Value], open: &str, close: &str, out: &mut String| -> bool {
        out.push_str(open);
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            if !render_into(item, out, budget) {
                return false;
            }
        }
        if open == "(" && items.len() == 1 {
            out.push(',');
        }
        out.push_str(close);
        true
    };
    match &value.kind {
        ValueKind::Dict(items) => {
            out.push('{');
            for (i, (k, v)) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if !render_into(k, out, budget) {
                    return false;
                }
                out.push_str(": ");
                if !render_into(v, out, budget) {
                    return false;
                }
            }
            out.push('}');
        }
        ValueKind::Tuple(items) => return seq(items, "(", ")", out),
        ValueKind::List(items) => return seq(items, "[", "]", out),
        ValueKind::Str(s) => out.push_str(&python_str_repr(&truncate(s, budget))),
        ValueKind::Int(n) => out.push_str(&n.to_string()),
        ValueKind::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        ValueKind::None => out.push_str("None"),
    }
    out.len() <= budget
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::literal;

    // The tables below were generated by a one-off Python script with
    // NumPy 2.4.6 (64-bit Linux); the expected strings are what NumPy 2.x
    // `repr(numpy.lib.format.dtype_to_descr(descr_to_dtype(spelling)))`
    // printed, i.e. what `np.save` writes for the dtype `np.load` builds.
    // Generated by a one-off Python script with NumPy 2.4.6: for each spelling,
    // repr(numpy.lib.format.dtype_to_descr(numpy.lib.format.descr_to_dtype(s))) and
    // the itemsize, or None when NumPy raised.
    const TYPE_STRINGS: &[(&str, Option<(&str, usize)>)] = &[
        ("<f8", Some(("'<f8'", 8))),
        (">i4", Some(("'>i4'", 4))),
        ("|b1", Some(("'|b1'", 1))),
        ("=f8", Some(("'<f8'", 8))),
        ("f8", Some(("'<f8'", 8))),
        ("<c16", Some(("'<c16'", 16))),
        ("|S5", Some(("'|S5'", 5))),
        ("<U7", Some(("'<U7'", 28))),
        ("<M8[ns]", Some(("'<M8[ns]'", 8))),
        ("<m8[s]", Some(("'<m8[s]'", 8))),
        ("|V8", Some(("'|V8'", 8))),
        ("|O", Some(("'|O'", 8))),
        ("O", Some(("'|O'", 8))),
        ("O8", Some(("'|O'", 8))),
        ("<O8", Some(("'|O'", 8))),
        ("O4", Some(("'|O'", 8))),
        ("b1", Some(("'|b1'", 1))),
        ("<b1", Some(("'|b1'", 1))),
        (">b1", Some(("'|b1'", 1))),
        ("?", Some(("'|b1'", 1))),
        ("<?", Some(("'|b1'", 1))),
        (">?", Some(("'|b1'", 1))),
        ("b", Some(("'|i1'", 1))),
        ("|b", Some(("'|i1'", 1))),
        ("B", Some(("'|u1'", 1))),
        ("h", Some(("'<i2'", 2))),
        ("H", Some(("'<u2'", 2))),
        ("i", Some(("'<i4'", 4))),
        ("I", Some(("'<u4'", 4))),
        ("l", Some(("'<i8'", 8))),
        ("L", Some(("'<u8'", 8))),
        ("q", Some(("'<i8'", 8))),
        ("Q", Some(("'<u8'", 8))),
        ("p", Some(("'<i8'", 8))),
        ("P", Some(("'<u8'", 8))),
        ("n", Some(("'<i8'", 8))),
        ("N", Some(("'<u8'", 8))),
        ("e", Some(("'<f2'", 2))),
        ("f", Some(("'<f4'", 4))),
        ("d", Some(("'<f8'", 8))),
        ("g", Some(("'<f16'", 16))),
        ("F", Some(("'<c8'", 8))),
        ("D", Some(("'<c16'", 16))),
        ("G", Some(("'<c32'", 32))),
        ("S", Some(("'|S0'", 0))),
        ("U", Some(("'<U0'", 0))),
        ("V", Some(("'|V0'", 0))),
        ("M", Some(("'<M8'", 8))),
        ("m", Some(("'<m8'", 8))),
        ("c", Some(("'|S1'", 1))),
        ("<c", Some(("'|S1'", 1))),
        ("S0", Some(("'|S0'", 0))),
        ("U0", Some(("'<U0'", 0))),
        ("V0", Some(("'|V0'", 0))),
        ("a5", Some(("'|S5'", 5))),
        ("<a5", Some(("'|S5'", 5))),
        ("a", Some(("'|S0'", 0))),
        ("a0", Some(("'|S0'", 0))),
        ("<S5", Some(("'|S5'", 5))),
        ("<S01", Some(("'|S1'", 1))),
        ("U007", Some(("'<U7'", 28))),
        ("<U0", Some(("'<U0'", 0))),
        (">U0", Some(("'>U0'", 0))),
        ("|U0", Some(("'<U0'", 0))),
        ("|U7", Some(("'<U7'", 28))),
        (">U7", Some(("'>U7'", 28))),
        ("=U3", Some(("'<U3'", 12))),
        ("M8", Some(("'<M8'", 8))),
        ("<M8", Some(("'<M8'", 8))),
        ("m8", Some(("'<m8'", 8))),
        ("=m8", Some(("'<m8'", 8))),
        ("|m8", Some(("'<m8'", 8))),
        (">M8[ns]", Some(("'>M8[ns]'", 8))),
        ("|M8[ns]", Some(("'<M8[ns]'", 8))),
        ("<M8[generic]", Some(("'<M8'", 8))),
        ("<m8[generic]", Some(("'<m8'", 8))),
        ("M8[5generic]", Some(("'<M8'", 8))),
        ("M8[10ms]", Some(("'<M8[10ms]'", 8))),
        ("M8[010ms]", Some(("'<M8[10ms]'", 8))),
        ("<m8[10ms]", Some(("'<m8[10ms]'", 8))),
        ("<M8[2D]", Some(("'<M8[2D]'", 8))),
        ("M8[1ns]", Some(("'<M8[ns]'", 8))),
        ("M8[0ns]", Some(("'<M8[0ns]'", 8))),
        ("M8[μs]", Some(("'<M8[us]'", 8))),
        ("M8[Y]", Some(("'<M8[Y]'", 8))),
        ("M8[M]", Some(("'<M8[M]'", 8))),
        ("M8[W]", Some(("'<M8[W]'", 8))),
        ("M8[D]", Some(("'<M8[D]'", 8))),
        ("M8[h]", Some(("'<M8[h]'", 8))),
        ("M8[m]", Some(("'<M8[m]'", 8))),
        ("M8[s]", Some(("'<M8[s]'", 8))),
        ("M8[ms]", Some(("'<M8[ms]'", 8))),
        ("M8[us]", Some(("'<M8[us]'", 8))),
        ("M8[ps]", Some(("'<M8[ps]'", 8))),
        ("M8[fs]", Some(("'<M8[fs]'", 8))),
        ("M8[as]", Some(("'<M8[as]'", 8))),
        ("M8[2147483647ns]", Some(("'<M8[2147483647ns]'", 8))),
        ("<i1", Some(("'|i1'", 1))),
        (">u1", Some(("'|u1'", 1))),
        ("|u2", Some(("'<u2'", 2))),
        ("|i4", Some(("'<i4'", 4))),
        ("|f8", Some(("'<f8'", 8))),
        ("|c8", Some(("'<c8'", 8))),
        ("<u2", Some(("'<u2'", 2))),
        ("<u4", Some(("'<u4'", 4))),
        (">u8", Some(("'>u8'", 8))),
        ("<i2", Some(("'<i2'", 2))),
        ("<i8", Some(("'<i8'", 8))),
        ("<f2", Some(("'<f2'", 2))),
        (">f4", Some(("'>f4'", 4))),
        ("<f16", Some(("'<f16'", 16))),
        ("<c8", Some(("'<c8'", 8))),
        ("<c32", Some(("'<c32'", 32))),
        (">c32", Some(("'>c32'", 32))),
        ("<e", Some(("'<f2'", 2))),
        ("<d", Some(("'<f8'", 8))),
        ("<V4", Some(("'|V4'", 4))),
        (">V4", Some(("'|V4'", 4))),
        ("<S1", Some(("'|S1'", 1))),
        ("<U1", Some(("'<U1'", 4))),
        ("S2147483647", Some(("'|S2147483647'", 2147483647))),
        ("<U536870911", Some(("'<U536870911'", 2147483644))),
        ("bool", Some(("'|b1'", 1))),
        ("bool_", Some(("'|b1'", 1))),
        ("int8", Some(("'|i1'", 1))),
        ("int16", Some(("'<i2'", 2))),
        ("int32", Some(("'<i4'", 4))),
        ("int64", Some(("'<i8'", 8))),
        ("uint8", Some(("'|u1'", 1))),
        ("uint16", Some(("'<u2'", 2))),
        ("uint32", Some(("'<u4'", 4))),
        ("uint64", Some(("'<u8'", 8))),
        ("float16", Some(("'<f2'", 2))),
        ("float32", Some(("'<f4'", 4))),
        ("float64", Some(("'<f8'", 8))),
        ("float128", Some(("'<f16'", 16))),
        ("complex64", Some(("'<c8'", 8))),
        ("complex128", Some(("'<c16'", 16))),
        ("complex256", Some(("'<c32'", 32))),
        ("byte", Some(("'|i1'", 1))),
        ("ubyte", Some(("'|u1'", 1))),
        ("short", Some(("'<i2'", 2))),
        ("ushort", Some(("'<u2'", 2))),
        ("intc", Some(("'<i4'", 4))),
        ("uintc", Some(("'<u4'", 4))),
        ("int", Some(("'<i8'", 8))),
        ("long", Some(("'<i8'", 8))),
        ("longlong", Some(("'<i8'", 8))),
        ("intp", Some(("'<i8'", 8))),
        ("uint", Some(("'<u8'", 8))),
        ("ulong", Some(("'<u8'", 8))),
        ("ulonglong", Some(("'<u8'", 8))),
        ("uintp", Some(("'<u8'", 8))),
        ("half", Some(("'<f2'", 2))),
        ("single", Some(("'<f4'", 4))),
        ("double", Some(("'<f8'", 8))),
        ("float", Some(("'<f8'", 8))),
        ("longdouble", Some(("'<f16'", 16))),
        ("csingle", Some(("'<c8'", 8))),
        ("cdouble", Some(("'<c16'", 16))),
        ("complex", Some(("'<c16'", 16))),
        ("clongdouble", Some(("'<c32'", 32))),
        ("bytes", Some(("'|S0'", 0))),
        ("bytes_", Some(("'|S0'", 0))),
        ("str", Some(("'<U0'", 0))),
        ("str_", Some(("'<U0'", 0))),
        ("unicode", Some(("'<U0'", 0))),
        ("void", Some(("'|V0'", 0))),
        ("object", Some(("'|O'", 8))),
        ("object_", Some(("'|O'", 8))),
        ("datetime64", Some(("'<M8'", 8))),
        ("timedelta64", Some(("'<m8'", 8))),
        ("datetime64[ns]", Some(("'<M8[ns]'", 8))),
        ("timedelta64[10s]", Some(("'<m8[10s]'", 8))),
        ("<f3", None),
        ("<i3", None),
        ("<b2", None),
        ("<c4", None),
        ("<u16", None),
        ("<i16", None),
        ("i0", None),
        ("O0", None),
        ("O16", None),
        ("b8", None),
        ("?1", None),
        ("e2", None),
        ("d8", None),
        ("f12", None),
        ("M4", None),
        ("m4", None),
        ("M[ns]", None),
        ("<M8[xx]", None),
        ("M8[]", None),
        ("M8[B]", None),
        ("<M8[ns", None),
        ("<m8[s]x", None),
        ("<M8[ns][ms]", None),
        ("M8[Y2]", None),
        ("M8[2 ms]", None),
        ("<M8[-1ns]", None),
        ("M8[2147483648ns]", None),
        ("<i4[ns]", None),
        ("f8[2]", None),
        ("<z8", None),
        ("x", None),
        ("", None),
        ("<", None),
        ("=", None),
        ("S-1", None),
        ("U-1", None),
        ("<i8x", None),
        ("S5 ", None),
        ("float64 ", None),
        ("Float64", None),
        ("<int32", None),
        ("=int64", None),
        ("int0", None),
        ("S2147483648", None),
        ("V2147483648", None),
        ("<U536870912", None),
        ("S99999999999999999999", None),
        ("datetime64[xx]", None),
        ("float64[ns]", None),
    ];
    const DESCRS: &[(&str, Option<(&str, usize)>)] = &[
        ("[('a','<i4'),('b','<f8',(2,3))]", Some(("[('a', '<i4'), ('b', '<f8', (2, 3))]", 52))),
        ("[(('title','name'),'<f8')]", Some(("[(('title', 'name'), '<f8')]", 8))),
        ("[('x',[('a','<i4')])]", Some(("[('x', [('a', '<i4')])]", 4))),
        ("[('a','<f8',3)]", Some(("[('a', '<f8', (3,))]", 24))),
        ("[('a','<f8',1)]", Some(("[('a', '<f8', (1,))]", 8))),
        ("[('a','<f8',())]", Some(("[('a', '<f8')]", 8))),
        ("[('a','<f8',(0,))]", Some(("[('a', '<f8', (0,))]", 0))),
        ("[('a','<f8',(2,0))]", Some(("[('a', '<f8', (2, 0))]", 0))),
        ("[('a','<f8',(1,1))]", Some(("[('a', '<f8', (1, 1))]", 8))),
        ("[('a','<f8',[2,3])]", Some(("[('a', '<f8', (2, 3))]", 48))),
        ("[('a','<i4'),('','|V4'),('b','<i8')]", Some(("[('a', '<i4'), ('', '|V4'), ('b', '<i8')]", 16))),
        ("[('','|V4'),('a','<i4')]", Some(("[('', '|V4'), ('a', '<i4')]", 8))),
        ("[('a','<i4'),('','|V4')]", Some(("[('a', '<i4'), ('', '|V4')]", 8))),
        ("[('a','<i4'),('','|V4'),('','|V4')]", Some(("[('a', '<i4'), ('', '|V8')]", 12))),
        ("[('','|V4',2),('a','<i4')]", Some(("[('', '|V8'), ('a', '<i4')]", 12))),
        ("[('a','<i4'),('','|V0')]", Some(("[('a', '<i4')]", 4))),
        ("[('','<i4')]", Some(("[('', '<i4')]", 4))),
        ("[(('','a'),'<i4')]", Some(("[(('', 'a'), '<i4')]", 4))),
        ("[(('t',''),'<i4')]", Some(("[(('t', ''), '<i4')]", 4))),
        ("[('a',('<f8',(2,)))]", Some(("[('a', '<f8', (2,))]", 16))),
        ("[('a',('<f8',(2,)),(3,))]", Some(("[('a', ('<f8', (2,)), (3,))]", 48))),
        ("[('a',[])]", Some(("[('a', [])]", 0))),
        ("[]", Some(("[]", 0))),
        ("[['a','<i4']]", Some(("[('a', '<i4')]", 4))),
        ("[('a','|V4')]", Some(("[('a', '|V4')]", 4))),
        ("[('a','|S5'),('b','<U3'),('c','|O'),('d','<M8[ns]'),('e','|b1')]", Some(("[('a', '|S5'), ('b', '<U3'), ('c', '|O'), ('d', '<M8[ns]'), ('e', '|b1')]", 34))),
        ("[(\"it's\",'<i4')]", Some(("[(\"it's\", '<i4')]", 4))),
        ("[('a\"b\\'c','<i4')]", Some(("[('a\"b\\'c', '<i4')]", 4))),
        ("[('é\\n\\t\\\\\\x01\\x7f\\x85\\xa0\\xad','<i4')]", Some(("[('é\\n\\t\\\\\\x01\\x7f\\x85\\xa0\\xad', '<i4')]", 4))),
        ("[('a','>f8'),('b','=i4'),('c','i1'),('d','f8')]", Some(("[('a', '>f8'), ('b', '<i4'), ('c', '|i1'), ('d', '<f8')]", 21))),
        ("[('x',[('a','<i4'),('','|V4'),('b',[(('T','c'),'>u2',(2,))])],(2,)),('y','<c16')]", Some(("[('x', [('a', '<i4'), ('', '|V4'), ('b', [(('T', 'c'), '>u2', (2,))])], (2,)), ('y', '<c16')]", 40))),
        ("{'descr': 1}", None),
        ("'<f8'", Some(("'<f8'", 8))),
        ("('<f8',())", Some(("'<f8'", 8))),
        ("[('a','<f8',-1)]", None),
        ("[('a','<f8',(2147483648,))]", None),
        ("[('a','<f8',True)]", None),
        ("[('','<i4'),('','<i4')]", None),
        ("[('a','<i4'),('a','<i4')]", None),
        ("[(('a','b'),'<i4'),('a','<i4')]", None),
        ("[(('a','a'),'<i4')]", None),
        ("[('a','<i4',(2,),5)]", None),
        ("[('a',)]", None),
        ("[(1,'<i4')]", None),
        ("[('a',1)]", None),
        ("[('a','<f3')]", None),
        ("[('a','<f8','x')]", None),
        ("[('a','<f8',(2,'x'))]", None),
        ("[('a','<f8',None)]", Some(("[('a', '<f8')]", 8))),
        ("['<f8']", None),
        ("[('a',None)]", None),
        ("3", None),
        ("None", None),
        ("[(('a',),'<i4')]", None),
    ];

    fn from_text(text: &str) -> Result<DType> {
        DType::from_value(&literal::parse(text, false).expect("test literal parses"))
    }

    #[test]
    fn type_strings_match_numpy() {
        for &(spelling, expected) in TYPE_STRINGS {
            let got = DType::parse(spelling);
            match (expected, got) {
                (Some((descr, itemsize)), Ok(dt)) => {
                    assert_eq!(dt.descr(), descr, "descr of {spelling:?}");
                    assert_eq!(dt.itemsize(), Some(itemsize), "itemsize of {spelling:?}");
                }
                (None, Err(Error::BadDescr { descr, reason })) => {
                    assert!(!reason.is_empty());
                    assert!(descr.starts_with('\''), "{descr}");
                }
                (expected, got) => panic!("{spelling:?}: expected {expected:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn descrs_match_numpy() {
        for &(text, expected) in DESCRS {
            match (expected, from_text(text)) {
                (Some((descr, itemsize)), Ok(dt)) => {
                    assert_eq!(dt.descr(), descr, "descr of {text}");
                    assert_eq!(dt.itemsize(), Some(itemsize), "itemsize of {text}");
                    // What we write parses back to the same type.
                    assert_eq!(from_text(&dt.descr()).unwrap(), dt, "round trip of {text}");
                }
                (None, Err(Error::BadDescr { descr, reason })) => {
                    assert!(!reason.is_empty() && !descr.is_empty(), "{text}");
                }
                (expected, got) => panic!("{text}: expected {expected:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn scalar_fields() {
        let dt = DType::parse("=f8").unwrap();
        assert_eq!(
            dt,
            DType::Scalar(Scalar {
                order: ByteOrder::NATIVE,
                kind: Kind::Float,
                size: 8,
                unit: None
            })
        );
        let DType::Scalar(s) = DType::parse("<U7").unwrap() else {
            panic!()
        };
        assert_eq!(
            (s.order, s.kind, s.size),
            (ByteOrder::Little, Kind::Unicode, 28)
        );
        let DType::Scalar(s) = DType::parse(">S5").unwrap() else {
            panic!()
        };
        assert_eq!(
            (s.order, s.kind, s.size),
            (ByteOrder::NotApplicable, Kind::Bytes, 5)
        );
        let DType::Scalar(s) = DType::parse("<i1").unwrap() else {
            panic!()
        };
        assert_eq!(s.order, ByteOrder::NotApplicable);
        let DType::Scalar(s) = DType::parse("<m8[10ms]").unwrap() else {
            panic!()
        };
        assert_eq!((s.kind, s.unit.as_deref()), (Kind::Timedelta, Some("10ms")));
        let DType::Scalar(s) = DType::parse("M8[generic]").unwrap() else {
            panic!()
        };
        assert_eq!((s.kind, s.unit), (Kind::Datetime, None));
        let DType::Scalar(s) = DType::parse("|O").unwrap() else {
            panic!()
        };
        assert_eq!((s.kind, s.size), (Kind::Object, 8));
    }

    #[test]
    fn records_with_titles_padding_and_nesting() {
        let dt =
            from_text("[(('My title', 'a'), '<i4'), ('', '|V4'), ('n', [('x', '>f8', (2,))])]")
                .unwrap();
        let DType::Record(fields) = &dt else { panic!() };
        assert_eq!(fields.len(), 3);
        assert_eq!(fields[0].name, "a");
        assert_eq!(fields[0].title.as_deref(), Some("My title"));
        assert_eq!(fields[1].name, "");
        assert_eq!(fields[1].dtype, DType::parse("|V4").unwrap());
        let DType::Record(inner) = &fields[2].dtype else {
            panic!()
        };
        assert_eq!(
            inner[0].dtype,
            DType::SubArray(Box::new(DType::parse(">f8").unwrap()), vec![2])
        );
        assert_eq!(dt.itemsize(), Some(24));
        assert_eq!(
            dt.descr(),
            "[(('My title', 'a'), '<i4'), ('', '|V4'), ('n', [('x', '>f8', (2,))])]"
        );
        assert_eq!(dt.to_string(), dt.descr());
    }

    #[test]
    fn top_level_sub_arrays() {
        let dt = from_text("('<f8', (2,))").unwrap();
        assert_eq!(
            dt,
            DType::SubArray(Box::new(DType::parse("<f8").unwrap()), vec![2])
        );
        assert_eq!(dt.descr(), "('<f8', (2,))");
        assert_eq!(dt.itemsize(), Some(16));
        assert_eq!(from_text("('<f8', 3)").unwrap().descr(), "('<f8', (3,))");
        let dt = from_text("([('a', '<i4')], (2, 3))").unwrap();
        assert_eq!(dt.descr(), "([('a', '<i4')], (2, 3))");
        assert_eq!(dt.itemsize(), Some(24));
        let dt = from_text("(('<i2', (2,)), (3,))").unwrap();
        assert_eq!(dt.descr(), "(('<i2', (2,)), (3,))");
        assert_eq!(dt.itemsize(), Some(12));
        // An empty shape is no sub-array at all.
        assert_eq!(
            from_text("('<f8', ())").unwrap(),
            DType::parse("<f8").unwrap()
        );
        assert!(matches!(from_text("('<f8',)"), Err(Error::BadDescr { .. })));
        assert!(matches!(
            from_text("('<f8', (2,), 1)"),
            Err(Error::BadDescr { .. })
        ));
    }

    #[test]
    fn display() {
        assert_eq!(DType::parse("U7").unwrap().to_string(), "<U7");
        assert_eq!(DType::parse("<M8[ns]").unwrap().to_string(), "<M8[ns]");
        assert_eq!(DType::parse("?").unwrap().to_string(), "|b1");
        assert_eq!(DType::parse("<f8").unwrap().descr(), "'<f8'");
        assert_eq!(
            from_text("[('a', '<i4')]").unwrap().to_string(),
            "[('a', '<i4')]"
        );
    }

    #[test]
    fn itemsize_overflow_is_none() {
        let huge = DType::SubArray(
            Box::new(DType::parse("<f8").unwrap()),
            vec![usize::MAX / 2, 3],
        );
        assert_eq!(huge.itemsize(), None);
        let rec = DType::Record(vec![
            Field {
                name: "a".into(),
                title: None,
                dtype: DType::parse("|V2147483647").unwrap(),
            };
            3
        ]);
        assert_eq!(rec.itemsize(), Some(3 * 2147483647));
        let over = DType::Record(vec![Field {
            name: "a".into(),
            title: None,
            dtype: huge.clone(),
        }]);
        assert_eq!(over.itemsize(), None);
        // Sub-array dimensions are capped like NumPy's (C int), and the
        // product is checked.
        assert!(
            from_text("[('a', '<f8', (2147483647, 2147483647, 2147483647, 2147483647))]").is_err()
        );
    }

    #[test]
    fn error_messages_name_the_descriptor() {
        match DType::parse("<f3") {
            Err(e @ Error::BadDescr { .. }) => {
                let msg = e.to_string();
                assert!(msg.starts_with("invalid descr '<f3': "), "{msg}");
                assert!(msg.contains("2, 4, 8, 16"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
        match from_text("[('a', '<f8', -1)]") {
            Err(Error::BadDescr { descr, reason }) => {
                assert_eq!(descr, "('a', '<f8', -1)");
                assert!(reason.contains("negative"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        match from_text("[('a', '<i4'), ('a', '<f8')]") {
            Err(Error::BadDescr { descr, reason }) => {
                assert_eq!(descr, "[('a', '<i4'), ('a', '<f8')]");
                assert!(reason.contains("'a'"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        match from_text("{'descr': '<f8'}") {
            Err(Error::BadDescr { descr, .. }) => assert_eq!(descr, "{'descr': '<f8'}"),
            other => panic!("{other:?}"),
        }
        // Long descriptors are cut short in messages.
        let long = format!("[{}('a', 1)]", "('x', '<f8'), ".repeat(100));
        match from_text(&long) {
            Err(Error::BadDescr { descr, .. }) => {
                assert!(descr.chars().count() <= MAX_DESCR_IN_MESSAGE + 3, "{descr}");
            }
            other => panic!("{other:?}"),
        }
        match DType::parse(&"x".repeat(10_000)) {
            Err(Error::BadDescr { descr, .. }) => assert!(descr.len() < 200),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn python_string_repr() {
        // Expected values printed by Python's repr().
        assert_eq!(python_str_repr("abc"), "'abc'");
        assert_eq!(python_str_repr("it's"), "\"it's\"");
        assert_eq!(python_str_repr("a\"b'c"), "'a\"b\\'c'");
        assert_eq!(python_str_repr("a\"b"), "'a\"b'");
        assert_eq!(
            python_str_repr("\\\n\r\t\x00\x1b\x7f"),
            "'\\\\\\n\\r\\t\\x00\\x1b\\x7f'"
        );
        assert_eq!(python_str_repr("é€😀\u{85}\u{a0}"), "'é€😀\\x85\\xa0'");
        assert_eq!(
            python_str_repr("\u{ad}\u{2028}\u{200b}\u{feff}\u{3000}\u{e0001}\u{e000}"),
            "'\\xad\\u2028\\u200b\\ufeff\\u3000\\U000e0001\\ue000'"
        );
    }
}
