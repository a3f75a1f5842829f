//! Element bytes into values, one match arm per element family, so a new
//! family (as the library's element model grows) is one more arm here.

use ndnpy::{dtype::ByteOrder, dtype::DType, dtype::Kind, dtype::Scalar};

/// Width of a float type: its shortest round-trip digits depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    F16,
    F32,
    F64,
}

/// Decoded elements of one scalar type (or record), in display order.
#[derive(Debug, Clone)]
pub enum Values {
    Bool(Vec<bool>),
    Int(Vec<i64>),
    UInt(Vec<u64>),
    Float(Vec<f64>, Width),
    Complex(Vec<(f64, f64)>, Width),
    Bytes(Vec<Vec<u8>>),
    Str(Vec<String>),
    /// Counts of `unit` since 1970-01-01; `i64::MIN` is NaT.
    Datetime(Vec<i64>, String),
    Timedelta(Vec<i64>),
    /// One column per named field, and the element count (a record
    /// without fields still has elements).
    Record(Vec<(String, Values)>, usize),
    /// A sub-array field: `count` values per element, flattened, of `shape`.
    SubArray(Box<Values>, Vec<usize>),
    Void(Vec<Vec<u8>>),
    /// Python objects, already rendered as `repr` does.
    Object(Vec<String>),
}

/// Why a dtype cannot be shown or summarised.
pub fn unsupported(dtype: &DType) -> Option<String> {
    match dtype {
        DType::Scalar(s) => match (s.kind, s.size) {
            (Kind::Object, _) => {
                Some("pickled Python objects inside a record are not printed yet".into())
            }
            (Kind::Float, 1 | 2 | 4 | 8) | (Kind::Complex, 8 | 16) => None,
            (Kind::Float | Kind::Complex, n) => Some(format!(
                "{n}-byte floats (long double) depend on the machine that wrote them"
            )),
            _ => None,
        },
        DType::Record(fields) => fields
            .iter()
            .filter(|f| !f.name.is_empty())
            .find_map(|f| field_unsupported(&f.dtype)),
        DType::SubArray(..) => Some("a top-level sub-array dtype (NumPy never saves one)".into()),
    }
}

/// [`unsupported`] for a record field, where sub-arrays (of any depth) are
/// ordinary.
fn field_unsupported(dtype: &DType) -> Option<String> {
    match dtype {
        DType::SubArray(inner, _) => field_unsupported(inner),
        other => unsupported(other),
    }
}

fn take<const N: usize>(b: &[u8], order: ByteOrder) -> [u8; N] {
    let mut a: [u8; N] = b[..N].try_into().expect("N bytes");
    if order == ByteOrder::Big {
        a.reverse();
    }
    a
}

pub fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits >> 15 == 1 { -1.0 } else { 1.0 };
    let exp = ((bits >> 10) & 0x1f) as i32;
    let frac = (bits & 0x3ff) as f64;
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + frac / 1024.0) * 2f64.powi(exp - 15),
    }
}

/// One scalar's value as a float, for statistics and comparisons (`None`
/// for types without a numeric value).
pub fn scalar_f64(s: &Scalar, b: &[u8]) -> Option<f64> {
    let o = s.order;
    Some(match (s.kind, s.size) {
        // Only ml_dtypes writes `<f1`, for float8_e5m2 (NumPy cannot even
        // load it): its values, not NaN.
        (Kind::Float, 1) => {
            ndnpy::types::MlFloat::to_f32(ndnpy::types::Float8E5M2::from_bits(b[0])) as f64
        }
        (Kind::Float, 2) => f16_to_f64(u16::from_le_bytes(take(b, o))),
        (Kind::Float, 4) => f32::from_le_bytes(take(b, o)) as f64,
        (Kind::Float, 8) => f64::from_le_bytes(take(b, o)),
        // Integers through their exact value: an `i128` of an `i64` or
        // `u64` rounds to the same `f64` as the narrower type does.
        _ => scalar_i128(s, b)? as f64,
    })
}

/// An exact integer value, for integer kinds.
pub fn scalar_i128(s: &Scalar, b: &[u8]) -> Option<i128> {
    let o = s.order;
    Some(match (s.kind, s.size) {
        (Kind::Bool, 1) => (b[0] != 0) as i128,
        (Kind::Int, 1) => b[0] as i8 as i128,
        (Kind::Int, 2) => i16::from_le_bytes(take(b, o)) as i128,
        (Kind::Int, 4) => i32::from_le_bytes(take(b, o)) as i128,
        (Kind::Int | Kind::Datetime | Kind::Timedelta, 8) => i64::from_le_bytes(take(b, o)) as i128,
        (Kind::UInt, 1) => b[0] as i128,
        (Kind::UInt, 2) => u16::from_le_bytes(take(b, o)) as i128,
        (Kind::UInt, 4) => u32::from_le_bytes(take(b, o)) as i128,
        (Kind::UInt, 8) => u64::from_le_bytes(take(b, o)) as i128,
        _ => return None,
    })
}

/// Decodes `elements` (each one item's bytes) of type `dtype`.
pub fn decode(dtype: &DType, elements: &[&[u8]]) -> Result<Values, String> {
    if let Some(why) = field_unsupported(dtype) {
        return Err(why);
    }
    match dtype {
        DType::Scalar(s) => Ok(decode_scalar(s, elements)),
        DType::Record(fields) => {
            let mut offset = 0;
            let mut columns = Vec::new();
            for f in fields {
                let size = f.dtype.itemsize().unwrap_or(0);
                if !f.name.is_empty() {
                    let column: Vec<&[u8]> =
                        elements.iter().map(|e| &e[offset..offset + size]).collect();
                    columns.push((f.name.clone(), decode(&f.dtype, &column)?));
                }
                offset += size;
            }
            Ok(Values::Record(columns, elements.len()))
        }
        DType::SubArray(inner, shape) => {
            // A zero dimension empties the sub-array, whatever the others.
            let count: usize = if shape.contains(&0) {
                0
            } else {
                shape.iter().product()
            };
            let size = inner.itemsize().unwrap_or(0);
            let flat: Vec<&[u8]> = elements
                .iter()
                .flat_map(|e| (0..count).map(move |i| &e[i * size..(i + 1) * size]))
                .collect();
            Ok(Values::SubArray(
                Box::new(decode(inner, &flat)?),
                shape.clone(),
            ))
        }
    }
}

fn decode_scalar(s: &Scalar, elements: &[&[u8]]) -> Values {
    let o = s.order;
    let map = |f: &dyn Fn(&[u8]) -> f64| elements.iter().map(|e| f(e)).collect::<Vec<f64>>();
    match s.kind {
        Kind::Bool => Values::Bool(elements.iter().map(|e| e[0] != 0).collect()),
        Kind::Int => Values::Int(
            elements
                .iter()
                .map(|e| scalar_i128(s, e).unwrap_or(0) as i64)
                .collect(),
        ),
        Kind::UInt => Values::UInt(
            elements
                .iter()
                .map(|e| scalar_i128(s, e).unwrap_or(0) as u64)
                .collect(),
        ),
        Kind::Float => {
            let width = match s.size {
                2 => Width::F16,
                4 => Width::F32,
                _ => Width::F64,
            };
            Values::Float(map(&|e| scalar_f64(s, e).unwrap_or(f64::NAN)), width)
        }
        Kind::Complex => {
            let half = s.size / 2;
            let part = Scalar {
                order: s.order,
                kind: Kind::Float,
                size: half,
                unit: None,
            };
            let width = if half == 4 { Width::F32 } else { Width::F64 };
            Values::Complex(
                elements
                    .iter()
                    .map(|e| {
                        (
                            scalar_f64(&part, &e[..half]).unwrap_or(f64::NAN),
                            scalar_f64(&part, &e[half..]).unwrap_or(f64::NAN),
                        )
                    })
                    .collect(),
                width,
            )
        }
        Kind::Datetime | Kind::Timedelta => {
            let v: Vec<i64> = elements
                .iter()
                .map(|e| i64::from_le_bytes(take(e, o)))
                .collect();
            let unit = s.unit.clone().unwrap_or_default();
            if s.kind == Kind::Datetime {
                Values::Datetime(v, unit)
            } else {
                Values::Timedelta(v)
            }
        }
        Kind::Bytes => Values::Bytes(
            elements
                .iter()
                .map(|e| {
                    let end = e.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                    e[..end].to_vec()
                })
                .collect(),
        ),
        Kind::Unicode => Values::Str(
            elements
                .iter()
                .map(|e| {
                    let units: Vec<u32> = e
                        .chunks_exact(4)
                        .map(|c| u32::from_le_bytes(take(c, o)))
                        .collect();
                    let end = units.iter().rposition(|&u| u != 0).map_or(0, |p| p + 1);
                    units[..end]
                        .iter()
                        .map(|&u| char::from_u32(u).unwrap_or('\u{fffd}'))
                        .collect()
                })
                .collect(),
        ),
        Kind::Void | Kind::Object => Values::Void(elements.iter().map(|e| e.to_vec()).collect()),
    }
}

/// `YYYY-MM-DD` for a day count since 1970-01-01 (proleptic Gregorian).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn year_str(y: i64) -> String {
    if y < 0 {
        format!("-{:04}", -y)
    } else {
        format!("{y:04}")
    }
}

/// NumPy's `datetime_as_string` for a value in `unit` (`ns`, `D`, `10ms`, ...).
pub fn datetime_str(value: i64, unit: &str) -> String {
    if value == i64::MIN {
        return "NaT".into();
    }
    let digits_end = unit.find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
    let mult: i128 = unit[..digits_end].parse().unwrap_or(1);
    let base = &unit[digits_end..];
    let v = value as i128 * mult;
    let (per_day, frac_digits): (i128, usize) = match base {
        "Y" => return year_str(1970 + v as i64),
        "M" => {
            let y = 1970 + v.div_euclid(12) as i64;
            return format!("{}-{:02}", year_str(y), v.rem_euclid(12) + 1);
        }
        "W" => (1, 0),
        "D" => (1, 0),
        "h" => (24, 0),
        "m" => (1440, 0),
        "s" => (86_400, 0),
        "ms" => (86_400_000, 3),
        "us" => (86_400_000_000, 6),
        "ns" => (86_400_000_000_000, 9),
        "ps" => (86_400_000_000_000_000, 12),
        "fs" => (86_400_000_000_000_000_000, 15),
        "as" => (86_400_000_000_000_000_000_000, 18),
        _ => return format!("{value} {unit}"),
    };
    let v = if base == "W" { v * 7 } else { v };
    let days = v.div_euclid(per_day) as i64;
    let rest = v.rem_euclid(per_day);
    let (y, m, d) = civil(days);
    let date = format!("{}-{m:02}-{d:02}", year_str(y));
    match base {
        "W" | "D" => date,
        "h" => format!("{date}T{rest:02}"),
        "m" => format!("{date}T{:02}:{:02}", rest / 60, rest % 60),
        _ => {
            let scale = 10i128.pow(frac_digits as u32);
            let secs = rest / scale;
            let frac = rest % scale;
            let hms = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
            if frac_digits == 0 {
                format!("{date}T{hms}")
            } else {
                format!("{date}T{hms}.{frac:0frac_digits$}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(-1), (1969, 12, 31));
        assert_eq!(civil(18262), (2020, 1, 1));
        assert_eq!(datetime_str(18262, "D"), "2020-01-01");
        assert_eq!(datetime_str(1, "ms"), "1970-01-01T00:00:00.001");
        assert_eq!(datetime_str(3600, "s"), "1970-01-01T01:00:00");
        assert_eq!(datetime_str(i64::MIN, "s"), "NaT");
        assert_eq!(datetime_str(13, "M"), "1971-02");
    }

    #[test]
    fn half() {
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0xc000), -2.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert!(f16_to_f64(0x7e00).is_nan());
    }
}
