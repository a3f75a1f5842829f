//! Which dtypes the crate can hold in memory: some element type (or
//! `AnyArray` variant) for every scalar kind and size listed here. The list
//! of the types themselves is `dispatch!` in `crate::array::any`; a test
//! there checks that the two agree.

use crate::error::{Error, Result};
use crate::format::dtype::{DType, Kind};

/// Whether some Rust element type holds a scalar of `kind` and `size`
/// bytes (strings, void, datetimes and objects aside).
fn has_element_type(kind: Kind, size: usize) -> bool {
    match (kind, size) {
        (Kind::Bool, 1) => true,
        (Kind::Int | Kind::UInt, 1 | 2 | 4 | 8) => true,
        // ml_dtypes's float8_e5m2 (`<f1`), held by `Float8E5M2`.
        (Kind::Float, 1) => true,
        (Kind::Float, 2) => cfg!(feature = "half"),
        (Kind::Float, 4 | 8) => true,
        (Kind::Complex, 8 | 16) => cfg!(feature = "complex"),
        // x86-64's long double and its complex pair, held as bytes.
        (Kind::Float, 16) | (Kind::Complex, 32) => true,
        _ => false,
    }
}

/// Succeeds if some element type (or [`AnyArray`] variant) can hold
/// `dtype`; otherwise explains why none can.
pub(crate) fn check_supported(dtype: &DType) -> Result<()> {
    match dtype {
        DType::Scalar(s) => match s.kind {
            Kind::Unicode | Kind::Bytes | Kind::Void | Kind::Datetime | Kind::Timedelta => Ok(()),
            _ if s.unit.is_none() && has_element_type(s.kind, s.size) => Ok(()),
            _ => Err(unsupported(dtype)),
        },
        DType::Record(fields) => fields
            .iter()
            .try_for_each(|f| check_supported(&f.dtype).map_err(|_| unsupported(dtype))),
        DType::SubArray(inner, _) => check_supported(inner).map_err(|_| unsupported(dtype)),
    }
}

pub(crate) fn unsupported(dtype: &DType) -> Error {
    let reason = match dtype {
        DType::Scalar(s) => match s.kind {
            Kind::Object => "object arrays hold pickled Python objects: read them with AnyArray::read_npy (AnyArray::Object) or ndnpy::pickle".to_owned(),
            Kind::Float if s.size == 2 => "enable the `half` feature to read float16 data".to_owned(),
            Kind::Complex if s.size == 8 || s.size == 16 => "enable the `complex` feature to read complex data".to_owned(),
            Kind::Float | Kind::Complex if s.size > 8 => format!(
                "a {}-byte long double: only x86-64's (<f16, <c32: 80-bit extended precision in 16 bytes) is read",
                if s.kind == Kind::Complex { s.size / 2 } else { s.size }
            ),
            _ => format!("no Rust element type holds {}-byte {:?} values", s.size, s.kind),
        },
        DType::Record(_) => "a field of the record has an unsupported type".to_owned(),
        DType::SubArray(..) => "the sub-array's element type is unsupported".to_owned(),
    };
    Error::UnsupportedDType {
        dtype: dtype.to_string(),
        reason,
    }
}

/// A hint naming the Rust types that fit a file dtype, for mismatch errors.
pub(super) fn fits_hint(src: &DType) -> String {
    match src {
        DType::Scalar(s) => match s.kind {
            Kind::Unicode => format!("; `{src}` reads as String or FixedUnicode<{}>", s.size / 4),
            Kind::Bytes => format!("; `{src}` reads as Vec<u8> or FixedBytes<{}>", s.size),
            Kind::Datetime | Kind::Timedelta => {
                let wrapper = if s.kind == Kind::Datetime {
                    "Datetime64"
                } else {
                    "Timedelta64"
                };
                match s.unit.as_deref() {
                    Some(u) if u.starts_with(|c: char| c.is_ascii_digit()) => format!(
                        "; `{src}` has a unit multiplier, which no Rust type carries: read it with AnyArray"
                    ),
                    Some(u) => format!("; `{src}` reads as {wrapper}<unit::{}>", if u == "as" { "as_" } else { u }),
                    None => format!("; `{src}` has the generic unit: read it with AnyArray"),
                }
            }
            _ => String::new(),
        },
        DType::Record(_) => "; read a record file into a type declared with ndnpy::record! whose fields it has, or as AnyArray".to_owned(),
        DType::SubArray(..) => String::new(),
    }
}
