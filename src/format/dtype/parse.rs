//! Parsing descriptors: type strings (`"<f8"`, `"M8[ns]"`, NumPy type
//! names), record field lists and sub-array pairs, with NumPy's rules and
//! limits.

use super::descr::{python_str_repr, render_value, truncate};
use super::*;

// The parsing entry points of `DType`, here beside what they call, so
// that `mod.rs` (the model) imports neither of its text files.
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
}

/// Parses a type string: an optional byte-order mark, then a kind and size,
/// a one-character code, or a NumPy type name.
pub(super) fn parse_type_str(descr: &str) -> Result<Scalar> {
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
pub(super) fn normalise(
    mark: Option<char>,
    kind: Kind,
    size: usize,
    unit: Option<String>,
) -> Scalar {
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
pub(super) const POINTER_SIZE: usize = std::mem::size_of::<usize>();

pub(super) type KindSize = (Kind, usize, Option<String>);

/// Interprets the text after the byte-order mark: a code character and the
/// rest (a size, a datetime unit, or nothing).
pub(super) fn kind_and_size(code: char, tail: &str) -> std::result::Result<KindSize, String> {
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
        // `f1`: ml_dtypes's float8_e5m2 (`<f1`), which NumPy cannot load;
        // read as raw one-byte items (`AnyArray::Void`).
        Kind::Float if matches!(n, 1 | 2 | 4 | 8 | 16) => n,
        Kind::Float => return size_error("1, 2, 4, 8, 16"),
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
pub(super) fn one_char_code(code: char) -> std::result::Result<KindSize, String> {
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
pub(super) fn parse_unit(text: &str) -> std::result::Result<Option<String>, String> {
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
pub(super) fn scalar_from_name(name: &str) -> Option<std::result::Result<Scalar, String>> {
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
        // The name some writers put in place of ml_dtypes's `<V2` (ml_dtypes
        // issue 41): two bytes of bfloat16, which NumPy cannot load.
        "bfloat16" => (Kind::Void, 2),
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

/// Builds a sub-array, collapsing an empty shape to the inner type as NumPy does.
pub(super) fn sub_array(inner: DType, shape: Vec<usize>) -> DType {
    if shape.is_empty() {
        inner
    } else {
        DType::SubArray(Box::new(inner), shape)
    }
}

/// A sub-array shape: a non-negative int or a tuple (or list) of them;
/// `None` means no shape, as in NumPy.
pub(super) fn shape_from_value(shape: &Value, whole: &Value) -> Result<Vec<usize>> {
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
pub(super) fn is_padding(field: &Field) -> bool {
    field.title.is_none()
        && field.name.is_empty()
        && match &field.dtype {
            DType::Scalar(s) => s.kind == Kind::Void,
            DType::SubArray(..) => true,
            DType::Record(_) => false,
        }
}

pub(super) fn record_from_values(whole: &Value, entries: &[Value]) -> Result<DType> {
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
                fields.push(Field::padding(size));
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
pub(super) fn field_from_value(entry: &Value) -> Result<Field> {
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
