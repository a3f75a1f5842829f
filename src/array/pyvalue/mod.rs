//! [`PyValue`]: the Python values an object array can hold, and their
//! Python `repr` as [`Display`](fmt::Display).

pub(crate) mod convert;
pub(crate) mod foreign;

use crate::array::any::AnyArray;
use crate::error::Result;
use crate::format::dtype::descr::python_str_repr;
use crate::format::dtype::{ByteOrder, DType, Kind};
use std::fmt::{self, Write as _};

/// A Python value read from (or written to) an object array.
///
/// Only plain data: the pickle reader builds these and nothing else, so a
/// value can never stand for code. [`Display`](fmt::Display) renders it as
/// Python's `repr` does (NumPy 2 style for NumPy scalars), except for the
/// cases listed on [`PyValue::Array`], [`PyValue::DType`] and
/// [`NumpyScalar`].
///
/// ```
/// use ndnpy::pickle::PyValue;
///
/// let v = PyValue::List(vec![
///     PyValue::Int(1),
///     PyValue::Str("a'b".into()),
///     PyValue::Tuple(vec![PyValue::Float(0.5)]),
///     PyValue::None,
/// ]);
/// assert_eq!(v.to_string(), r#"[1, "a'b", (0.5,), None]"#);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum PyValue {
    /// `None`
    #[default]
    None,
    /// `True` / `False`
    Bool(bool),
    /// An `int` that fits in `i64`.
    Int(i64),
    /// An `int` beyond `i64`, as its decimal text (`-` sign, no leading
    /// zeros), e.g. `"1000000000000000000000000000000"`.
    BigInt(String),
    /// A `float`.
    Float(f64),
    /// A `complex`: real and imaginary parts.
    Complex(f64, f64),
    /// A `str`.
    Str(String),
    /// A `bytes`.
    Bytes(Vec<u8>),
    /// A `bytearray`.
    ByteArray(Vec<u8>),
    /// A `list`.
    List(Vec<PyValue>),
    /// A `tuple`.
    Tuple(Vec<PyValue>),
    /// A `dict`, in insertion order.
    Dict(Vec<(PyValue, PyValue)>),
    /// A `set`, in the order the pickle lists its members.
    Set(Vec<PyValue>),
    /// A `frozenset`, in the order the pickle lists its members.
    FrozenSet(Vec<PyValue>),
    /// A `datetime.date`.
    Date(Date),
    /// A naive `datetime.datetime` (one with a `tzinfo` is refused).
    DateTime(DateTime),
    /// A `datetime.timedelta`, normalised as Python does.
    TimeDelta(TimeDelta),
    /// A `decimal.Decimal`, as its string (`str(d)`).
    Decimal(String),
    /// A nested NumPy array (a ragged array's rows, or an object array
    /// inside an object array). Its `Display` is `array(<elements as a
    /// nested list>, dtype=<descr>)`, not NumPy's line-wrapped repr.
    ///
    /// Shared (`Arc`), as in Python, so that a pickle referring to one
    /// array many times costs its memory once; `Arc::unwrap_or_clone` or
    /// `Arc::make_mut` give an owned or mutable one.
    Array(std::sync::Arc<AnyArray>),
    /// A NumPy scalar such as `np.float32(1.5)`.
    Scalar(NumpyScalar),
    /// A `numpy.dtype` object. Its `Display` is NumPy's repr
    /// (`dtype('int64')`, `dtype('>i2')`, `dtype('<U3')`); records show
    /// their `descr` list.
    DType(DType),
    /// A reference to a Python global (a class or function) stored as a
    /// value and never called, such as `range` in NumPy's own
    /// `py3-objarr.npy` (`<class 'range'>`). A name, not code: it is
    /// written back as the same reference.
    Global {
        /// The module, with Python 2 names mapped as Python 3 maps them
        /// (`__builtin__` is `builtins`).
        module: String,
        /// The attribute.
        name: String,
    },
    /// An object of another class, read as inert data under
    /// [`crate::ReadOptions::opaque_objects`] (refused otherwise).
    Opaque(Box<foreign::Opaque>),
    /// A `pandas.Timestamp`.
    Timestamp(foreign::Timestamp),
    /// A `pandas.Timedelta`.
    Timedelta(foreign::Timedelta),
    /// `pandas.NaT`.
    NaT,
    /// `pandas.NA`.
    NA,
    /// A time zone object (`datetime.timezone`, `zoneinfo.ZoneInfo`).
    TimeZone(foreign::TimeZone),
}

/// A `datetime.date`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Date {
    /// 1 to 9999.
    pub year: u16,
    /// 1 to 12.
    pub month: u8,
    /// 1 to the month's length.
    pub day: u8,
}

/// A naive `datetime.datetime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// The date.
    pub date: Date,
    /// 0 to 23.
    pub hour: u8,
    /// 0 to 59.
    pub minute: u8,
    /// 0 to 59.
    pub second: u8,
    /// 0 to 999 999.
    pub microsecond: u32,
    /// PEP 495's `fold` (0 or 1).
    pub fold: u8,
}

/// A `datetime.timedelta`: `days` may be negative, the others are in
/// `0..86400` and `0..1_000_000`, as Python normalises them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeDelta {
    /// Days, from -999 999 999 to 999 999 999.
    pub days: i32,
    /// Seconds, 0 to 86 399.
    pub seconds: u32,
    /// Microseconds, 0 to 999 999.
    pub microseconds: u32,
}

/// A NumPy scalar (`np.float32(1.5)`, `np.str_('a')`, `np.datetime64(..)`):
/// its dtype and its bytes as NumPy pickles them (the dtype's byte order).
///
/// [`NumpyScalar::to_array`] turns it into a 0-d [`AnyArray`] through the
/// crate's ordinary reading path, so it supports exactly the dtypes
/// [`AnyArray`] does. `Display` follows NumPy 2 (`np.int64(3)`,
/// `np.True_`, `np.str_('a')`), except: `datetime64` scalars are written
/// as `np.datetime64(<count>,'<unit>')` (an expression NumPy accepts, not
/// its calendar form), and `float16` values print with `float32` digits.
#[derive(Debug, Clone, PartialEq)]
pub struct NumpyScalar {
    /// The scalar's dtype.
    pub dtype: DType,
    /// Its bytes, exactly `dtype.itemsize()` of them.
    pub data: Vec<u8>,
}

impl NumpyScalar {
    /// The scalar as a 0-d array, read as a `.npy` file of this dtype
    /// would be.
    ///
    /// ```
    /// use ndnpy::pickle::NumpyScalar;
    /// use ndnpy::{AnyArray, dtype::DType};
    ///
    /// let s = NumpyScalar { dtype: DType::parse("<f4")?, data: 1.5f32.to_le_bytes().to_vec() };
    /// assert_eq!(s.to_string(), "np.float32(1.5)");
    /// let AnyArray::F32(a) = s.to_array()? else { panic!() };
    /// assert_eq!(a[[]], 1.5);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn to_array(&self) -> Result<AnyArray> {
        crate::array::decode::array_from_bytes(&self.dtype, &[], false, &self.data, 0)
    }
}

impl fmt::Display for PyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyValue::None => f.write_str("None"),
            PyValue::Bool(true) => f.write_str("True"),
            PyValue::Bool(false) => f.write_str("False"),
            PyValue::Int(n) => write!(f, "{n}"),
            PyValue::BigInt(s) => f.write_str(s),
            PyValue::Float(x) => f.write_str(&float_repr(*x)),
            PyValue::Complex(re, im) => f.write_str(&complex_repr(*re, *im, true)),
            PyValue::Str(s) => f.write_str(&python_str_repr(s)),
            PyValue::Bytes(b) => f.write_str(&bytes_repr(b)),
            PyValue::ByteArray(b) => write!(f, "bytearray({})", bytes_repr(b)),
            PyValue::List(items) => seq(f, "[", items, "]", false),
            PyValue::Tuple(items) => seq(f, "(", items, ")", items.len() == 1),
            PyValue::Dict(pairs) => {
                f.write_char('{')?;
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_char('}')
            }
            PyValue::Set(items) if items.is_empty() => f.write_str("set()"),
            PyValue::Set(items) => seq(f, "{", items, "}", false),
            PyValue::FrozenSet(items) if items.is_empty() => f.write_str("frozenset()"),
            PyValue::FrozenSet(items) => seq(f, "frozenset({", items, "})", false),
            PyValue::Global { module, name } => f.write_str(&foreign::global_repr(module, name)),
            PyValue::Opaque(o) => write!(f, "<{} object>", o.class_name()),
            PyValue::Timestamp(t) => write!(f, "{t}"),
            PyValue::Timedelta(t) => write!(f, "{t}"),
            PyValue::NaT => f.write_str("NaT"),
            PyValue::NA => f.write_str("<NA>"),
            PyValue::TimeZone(z) => write!(f, "{z}"),
            PyValue::Date(d) => write!(f, "datetime.date({}, {}, {})", d.year, d.month, d.day),
            PyValue::DateTime(t) => {
                let d = t.date;
                write!(
                    f,
                    "datetime.datetime({}, {}, {}, {}, {}",
                    d.year, d.month, d.day, t.hour, t.minute
                )?;
                if t.second != 0 || t.microsecond != 0 {
                    write!(f, ", {}", t.second)?;
                }
                if t.microsecond != 0 {
                    write!(f, ", {}", t.microsecond)?;
                }
                if t.fold != 0 {
                    write!(f, ", fold={}", t.fold)?;
                }
                f.write_char(')')
            }
            PyValue::TimeDelta(t) => {
                let mut parts = Vec::new();
                if t.days != 0 {
                    parts.push(format!("days={}", t.days));
                }
                if t.seconds != 0 {
                    parts.push(format!("seconds={}", t.seconds));
                }
                if t.microseconds != 0 {
                    parts.push(format!("microseconds={}", t.microseconds));
                }
                if parts.is_empty() {
                    parts.push("0".into());
                }
                write!(f, "datetime.timedelta({})", parts.join(", "))
            }
            PyValue::Decimal(s) => write!(f, "Decimal({})", python_str_repr(s)),
            PyValue::Array(a) => array_repr(f, a),
            PyValue::Scalar(s) => fmt::Display::fmt(s, f),
            PyValue::DType(d) => write!(f, "dtype({})", dtype_repr(d)),
        }
    }
}

/// NumPy's `repr(dtype)` argument: the type name for native or
/// order-free numeric types, the type string otherwise.
fn dtype_repr(d: &DType) -> String {
    let DType::Scalar(s) = d else {
        return d.descr();
    };
    let native = s.order == ByteOrder::NATIVE || s.order == ByteOrder::NotApplicable;
    let bits = s.size * 8;
    let name = match s.kind {
        Kind::Bool if native => Some("bool".to_string()),
        Kind::Int if native => Some(format!("int{bits}")),
        Kind::UInt if native => Some(format!("uint{bits}")),
        Kind::Float if native => Some(format!("float{bits}")),
        Kind::Complex if native => Some(format!("complex{bits}")),
        Kind::Object => Some("O".to_string()),
        Kind::Bytes | Kind::Void => Some(s.type_str()[1..].to_string()),
        _ => None,
    };
    python_str_repr(&name.unwrap_or_else(|| s.type_str()))
}

fn seq(
    f: &mut fmt::Formatter<'_>,
    open: &str,
    items: &[PyValue],
    close: &str,
    trailing_comma: bool,
) -> fmt::Result {
    f.write_str(open)?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    if trailing_comma {
        f.write_char(',')?;
    }
    f.write_str(close)
}

/// `array(<nested list>, dtype=<descr>)`.
fn array_repr(f: &mut fmt::Formatter<'_>, a: &AnyArray) -> fmt::Result {
    fn nested<T>(
        f: &mut fmt::Formatter<'_>,
        a: ndarray::ArrayViewD<'_, T>,
        show: &dyn Fn(&T) -> String,
    ) -> fmt::Result {
        if a.ndim() == 0 {
            return match a.iter().next() {
                Some(x) => f.write_str(&show(x)),
                None => Ok(()),
            };
        }
        f.write_char('[')?;
        for (i, sub) in a.outer_iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            nested(f, sub, show)?;
        }
        f.write_char(']')
    }
    f.write_str("array(")?;
    match a {
        AnyArray::Object(x) => nested(f, x.view(), &|v| v.to_string())?,
        AnyArray::StringDType(x) => {
            let na = x.na_object.clone().unwrap_or(PyValue::None);
            nested(f, x.values.view(), &|v| match v {
                Some(s) => python_str_repr(s),
                None => na.to_string(),
            })?;
            // NumPy's repr of the dtype.
            let mut args = Vec::new();
            if let Some(na) = &x.na_object {
                args.push(format!("na_object={na}"));
            }
            if !x.coerce {
                args.push("coerce=False".to_owned());
            }
            return write!(f, ", dtype=StringDType({}))", args.join(", "));
        }
        AnyArray::LongDouble(x) => nested(f, x.view(), &|v| float_repr(v.to_f64()))?,
        AnyArray::Bool(x) => nested(f, x.view(), &|v| if *v { "True" } else { "False" }.into())?,
        AnyArray::F32(x) => nested(f, x.view(), &|v| f32_repr(*v))?,
        AnyArray::F64(x) => nested(f, x.view(), &|v| float_repr(*v))?,
        #[cfg(feature = "complex")]
        AnyArray::C64(x) => nested(f, x.view(), &|v| {
            complex_repr(v.re as f64, v.im as f64, true)
        })?,
        #[cfg(feature = "complex")]
        AnyArray::C128(x) => nested(f, x.view(), &|v| complex_repr(v.re, v.im, true))?,
        other => {
            // Integers (and f16, shown through f32): `Debug` of the value
            // is its decimal text.
            crate::array::any::each_variant!(
                other,
                x => nested(f, x.map(|v| format!("{v:?}")).view(), &|v: &String| v.clone())?,
                raw r => write!(f, "<{} bytes of {}>", r.data.len(), r.dtype)?
            )
        }
    }
    write!(f, ", dtype={})", python_str_repr(&a.dtype().to_string()))
}

/// Python's `repr(float)`: the shortest digits that round-trip, positional
/// for exponents -4 to 15, scientific (`1e+16`, `1.5e-05`) otherwise.
pub(crate) fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    shortest_repr(format!("{x:e}"), true)
}

/// NumPy's repr of a `float32` value (shortest `f32` digits, same layout
/// rules as Python's float repr).
pub(crate) fn f32_repr(x: f32) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    shortest_repr(format!("{x:e}"), true)
}

/// Lays out Rust's shortest scientific form (`-1.5e-7`) as Python's `repr`
/// does; `add_dot_zero` adds `.0` to integral positional values.
fn shortest_repr(sci: String, add_dot_zero: bool) -> String {
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::from(sign);
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        } else {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                if add_dot_zero {
                    out.push_str(".0");
                }
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// A complex part as Python's complex repr writes it: like `repr(float)`
/// without the `.0`.
fn complex_part(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    shortest_repr(format!("{x:e}"), false)
}

/// Python's `repr(complex)`: `2j` when the real part is +0, otherwise
/// `(1+2j)` (the parentheses only when `parens`).
pub(crate) fn complex_repr(re: f64, im: f64, parens: bool) -> String {
    let im_text = complex_part(im);
    if re == 0.0 && re.is_sign_positive() {
        return format!("{im_text}j");
    }
    let sign = if im_text.starts_with('-') { "" } else { "+" };
    let body = format!("{}{sign}{im_text}j", complex_part(re));
    if parens {
        format!("({body})")
    } else {
        body
    }
}

/// Python's `repr(bytes)`.
pub(crate) fn bytes_repr(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    let mut out = String::with_capacity(b.len() + 3);
    out.push('b');
    out.push(quote as char);
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c as char);
            }
            0x20..=0x7e => out.push(c as char),
            c => {
                let _ = write!(out, "\\x{c:02x}");
            }
        }
    }
    out.push(quote as char);
    out
}

impl fmt::Display for NumpyScalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let DType::Scalar(s) = &self.dtype else {
            return write!(f, "np.void({})", bytes_repr(&self.data));
        };
        let native = |n: usize| -> Option<Vec<u8>> {
            let mut b = self.data.get(..n)?.to_vec();
            if s.order == ByteOrder::Big {
                b.reverse();
            }
            Some(b)
        };
        let le = |n: usize| -> Option<u128> {
            let b = native(n)?;
            Some(b.iter().rev().fold(0u128, |acc, &x| (acc << 8) | x as u128))
        };
        let bits = s.size * 8;
        let text = match (s.kind, s.size) {
            (Kind::Bool, 1) => {
                return f.write_str(if self.data.first().copied().unwrap_or(0) != 0 {
                    "np.True_"
                } else {
                    "np.False_"
                })
            }
            (Kind::Int, 1 | 2 | 4 | 8) => le(s.size).map(|v| {
                let shift = 128 - bits;
                format!("np.int{bits}({})", ((v << shift) as i128) >> shift)
            }),
            (Kind::UInt, 1 | 2 | 4 | 8) => le(s.size).map(|v| format!("np.uint{bits}({v})")),
            (Kind::Float, 2) => {
                le(2).map(|v| format!("np.float16({})", f32_repr(f16_to_f32(v as u16))))
            }
            (Kind::Float, 4) => {
                le(4).map(|v| format!("np.float32({})", f32_repr(f32::from_bits(v as u32))))
            }
            (Kind::Float, 8) => {
                le(8).map(|v| format!("np.float64({})", float_repr(f64::from_bits(v as u64))))
            }
            (Kind::Complex, 8) => le(8).map(|v| {
                let re = f32::from_bits(v as u32) as f64;
                let im = f32::from_bits((v >> 32) as u32) as f64;
                format!("np.complex64({})", complex_repr(re, im, false))
            }),
            (Kind::Complex, 16) => le(16).map(|v| {
                let re = f64::from_bits(v as u64);
                let im = f64::from_bits((v >> 64) as u64);
                format!("np.complex128({})", complex_repr(re, im, false))
            }),
            (Kind::Bytes, _) => {
                let end = self.data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
                Some(format!("np.bytes_({})", bytes_repr(&self.data[..end])))
            }
            (Kind::Unicode, _) => {
                let mut text = String::new();
                let mut ok = true;
                for chunk in self.data.chunks_exact(4) {
                    let mut b = [chunk[0], chunk[1], chunk[2], chunk[3]];
                    if s.order == ByteOrder::Big {
                        b.reverse();
                    }
                    match char::from_u32(u32::from_le_bytes(b)) {
                        Some(c) => text.push(c),
                        None => ok = false,
                    }
                }
                let text = text.trim_end_matches('\0');
                ok.then(|| format!("np.str_({})", python_str_repr(text)))
            }
            (Kind::Datetime | Kind::Timedelta, 8) => le(8).map(|v| {
                let name = if s.kind == Kind::Datetime {
                    "datetime64"
                } else {
                    "timedelta64"
                };
                let n = v as u64 as i64;
                match &s.unit {
                    Some(unit) => format!("np.{name}({n},'{unit}')"),
                    None => format!("np.{name}({n})"),
                }
            }),
            _ => None,
        };
        match text {
            Some(t) => f.write_str(&t),
            None => write!(f, "np.void({})", bytes_repr(&self.data)),
        }
    }
}

/// IEEE half to single precision (exact).
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let frac = (h & 0x3ff) as f32;
    sign * match exp {
        0 => frac * 2f32.powi(-24),
        0x1f if frac == 0.0 => f32::INFINITY,
        0x1f => f32::NAN,
        e => (1.0 + frac / 1024.0) * 2f32.powi(e as i32 - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_reprs_match_python() {
        for (x, want) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (-0.0, "-0.0"),
            (123.456, "123.456"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(float_repr(x), want);
        }
        assert_eq!(complex_repr(1.0, 2.0, true), "(1+2j)");
        assert_eq!(complex_repr(0.0, -2.5, true), "-2.5j");
        assert_eq!(complex_repr(-0.0, 0.0, true), "(-0+0j)");
        assert_eq!(complex_repr(1.0, f64::NAN, true), "(1+nanj)");
        assert_eq!(bytes_repr(b"a'\x00\xff"), r#"b"a'\x00\xff""#);
    }
}
