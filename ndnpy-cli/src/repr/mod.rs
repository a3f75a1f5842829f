//! NumPy's `repr` of an array, with its default print options (precision 8,
//! threshold 1000, edge items 3, line width 75): the port of
//! `numpy/_core/arrayprint.py` for the element types ndnpy reads.

use crate::values::{datetime_str, f16_to_f64, Values, Width};
use ndnpy::pickle::PyValue;
use ndnpy::{dtype::ByteOrder, dtype::DType, dtype::Kind};

mod float;
use float::FloatFormat;

pub const THRESHOLD: usize = 1000;
pub const EDGE: usize = 3;
const LINE_WIDTH: usize = 75;

/// Python's `repr` of a `str`.
pub fn py_str(s: &str) -> String {
    // The library's repr (through `PyValue`'s `Display`), so that the
    // command and the library quote strings alike.
    PyValue::Str(s.to_owned()).to_string()
}

/// Python's `repr` of `bytes`.
pub fn py_bytes(b: &[u8]) -> String {
    PyValue::Bytes(b.to_vec()).to_string()
}

fn pad_right_all(words: Vec<String>) -> Vec<String> {
    let w = words.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    words.into_iter().map(|s| format!("{s:>w$}")).collect()
}

/// Each value as NumPy's format function for the whole (shown) data
/// renders it. `zero_d` is true for a 0-d array.
pub fn format_values(values: &Values, zero_d: bool) -> Vec<String> {
    match values {
        Values::Bool(v) => v
            .iter()
            .map(|&b| match (b, zero_d) {
                (true, true) => "True".to_owned(),
                (true, false) => " True".to_owned(),
                (false, _) => "False".to_owned(),
            })
            .collect(),
        Values::Int(v) => pad_right_all(v.iter().map(i64::to_string).collect()),
        Values::UInt(v) => pad_right_all(v.iter().map(u64::to_string).collect()),
        Values::Float(v, w) => {
            let f = FloatFormat::new(v, *w, false);
            v.iter().map(|&x| f.format(x)).collect()
        }
        Values::Complex(v, w) => {
            let re: Vec<f64> = v.iter().map(|c| c.0).collect();
            let im: Vec<f64> = v.iter().map(|c| c.1).collect();
            let fr = FloatFormat::new(&re, *w, false);
            let fi = FloatFormat::new(&im, *w, true);
            v.iter()
                .map(|&(r, i)| {
                    let i = fi.format(i);
                    let sp = i.trim_end().len();
                    format!("{}{}j{}", fr.format(r), &i[..sp], &i[sp..])
                })
                .collect()
        }
        Values::Bytes(v) => v.iter().map(|b| py_bytes(b)).collect(),
        Values::Str(v) => v.iter().map(|s| py_str(s)).collect(),
        Values::Object(v) => v.clone(),
        Values::Void(v) => v
            .iter()
            .map(|b| {
                let hex: String = b.iter().map(|x| format!("\\x{x:02X}")).collect();
                format!("b'{hex}'")
            })
            .collect(),
        Values::Datetime(v, unit) => timelike(v, |x| format!("'{}'", datetime_str(x, unit))),
        Values::Timedelta(v) => timelike(v, |x| x.to_string()),
        Values::SubArray(inner, shape) => {
            let words = format_values(inner, false);
            // A zero dimension empties the sub-array, whatever the others.
            let count: usize = if shape.contains(&0) {
                0
            } else {
                shape.iter().product()
            };
            words
                .chunks(count.max(1))
                .map(|w| nested(w, shape))
                .collect()
        }
        Values::Record(columns, n) => {
            // A 0-d record prints its fields as scalars (`True`, not
            // ` True`), as NumPy's 0-d repr does.
            let formatted: Vec<Vec<String>> = columns
                .iter()
                .map(|(_, c)| format_values(c, zero_d))
                .collect();
            (0..*n)
                .map(|i| {
                    let parts: Vec<&str> = formatted.iter().map(|c| c[i].as_str()).collect();
                    if parts.is_empty() {
                        "()".to_owned()
                    } else if parts.len() == 1 {
                        format!("({},)", parts[0])
                    } else {
                        format!("({})", parts.join(", "))
                    }
                })
                .collect()
        }
    }
}

/// NumPy's `SubArrayFormat`: nested brackets, `", "` between items.
fn nested(words: &[String], shape: &[usize]) -> String {
    match shape {
        [] => words.first().cloned().unwrap_or_default(),
        [n, rest @ ..] => {
            let step = rest.iter().product::<usize>();
            let items: Vec<String> = (0..*n)
                .map(|i| nested(&words[i * step..(i + 1) * step], rest))
                .collect();
            format!("[{}]", items.join(", "))
        }
    }
}

/// NumPy's `TimelikeFormat`: right-aligned to the widest of max and min,
/// with room for `'NaT'`.
fn timelike(v: &[i64], f: impl Fn(i64) -> String) -> Vec<String> {
    let non_nat: Vec<i64> = v.iter().copied().filter(|&x| x != i64::MIN).collect();
    let mut width = match (non_nat.iter().max(), non_nat.iter().min()) {
        (Some(&a), Some(&b)) => f(a).len().max(f(b).len()),
        _ => 0,
    };
    if non_nat.len() < v.len() {
        width = width.max(5);
    }
    v.iter()
        .map(|&x| {
            let s = if x == i64::MIN {
                "'NaT'".to_owned()
            } else {
                f(x)
            };
            format!("{s:>width$}")
        })
        .collect()
}

/// Indices shown along an axis of length `n` (`None` for the `...`).
pub fn shown_indices(n: usize, summarize: bool) -> Vec<Option<usize>> {
    if summarize && n > 2 * EDGE {
        (0..EDGE)
            .map(Some)
            .chain(std::iter::once(None))
            .chain((n - EDGE..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    }
}

fn extend_line(s: &mut String, line: &mut String, word: &str, width: usize, prefix: &str) {
    // Python measures in characters, not bytes.
    let line_len = line.chars().count();
    let needs_wrap = line_len + word.chars().count() > width && line_len > prefix.len();
    if needs_wrap {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = prefix.to_owned();
    }
    line.push_str(word);
}

/// NumPy's `_formatArray`: `words` are the formatted elements in C order
/// of the shown indices.
fn format_array(
    words: &mut dyn Iterator<Item = String>,
    axes: &[Vec<Option<usize>>],
    hanging: &str,
    width: usize,
) -> String {
    if axes.is_empty() {
        return words.next().unwrap_or_default();
    }
    let next_hanging = format!("{hanging} ");
    let next_width = width - 1;
    let items = &axes[0];
    let mut s = String::new();
    if axes.len() == 1 {
        let elem_width = width - 1;
        let mut line = hanging.to_owned();
        let last = items.len().saturating_sub(1);
        for (k, item) in items.iter().enumerate() {
            let word = match item {
                Some(_) => format_array(words, &axes[1..], &next_hanging, next_width),
                None => "...".to_owned(),
            };
            extend_line(&mut s, &mut line, &word, elem_width, hanging);
            if k != last {
                line.push_str(", ");
            }
        }
        s.push_str(&line);
    } else {
        let line_sep = format!(",{}", "\n".repeat(axes.len() - 1));
        let last = items.len().saturating_sub(1);
        for (k, item) in items.iter().enumerate() {
            s.push_str(hanging);
            match item {
                Some(_) => s.push_str(&format_array(words, &axes[1..], &next_hanging, next_width)),
                None => s.push_str("..."),
            }
            if k != last {
                s.push_str(&line_sep);
            }
        }
    }
    format!("[{}]", &s[hanging.len()..])
}

/// Python's `repr` of a shape tuple.
pub fn shape_repr(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// NumPy's `dtype_short_repr`, or `None` when the dtype is implied by the
/// values (float64, int64, complex128, bool in native order).
pub fn dtype_repr(dtype: &DType) -> Option<String> {
    let s = match dtype {
        DType::Scalar(s) => s,
        other => return Some(record_str(other)),
    };
    let native = s.order == ByteOrder::NATIVE || s.order == ByteOrder::NotApplicable;
    if matches!(s.kind, Kind::Bytes | Kind::Unicode | Kind::Void) {
        return Some(format!("'{}'", s.type_str()));
    }
    if !native {
        return Some(format!("'{}'", s.type_str()));
    }
    let name = match (s.kind, s.size) {
        (Kind::Bool, _) | (Kind::Int, 8) | (Kind::Float, 8) | (Kind::Complex, 16) => return None,
        (Kind::Int, n) => format!("int{}", n * 8),
        (Kind::UInt, n) => format!("uint{}", n * 8),
        (Kind::Float, n) => format!("float{}", n * 8),
        (Kind::Complex, n) => format!("complex{}", n * 8),
        (Kind::Datetime, _) => match &s.unit {
            Some(u) => format!("'datetime64[{u}]'"),
            None => "datetime64".to_owned(),
        },
        (Kind::Timedelta, _) => match &s.unit {
            Some(u) => format!("'timedelta64[{u}]'"),
            None => "timedelta64".to_owned(),
        },
        (Kind::Object, _) => "object".to_owned(),
        _ => format!("'{}'", s.type_str()),
    };
    Some(name)
}

/// A type string as `str(dtype)` spells it inside a record: `?` for bool,
/// no `|` mark.
fn short_type(dtype: &DType) -> String {
    match dtype {
        DType::Scalar(s) if s.kind == Kind::Bool => "?".to_owned(),
        DType::Scalar(s) => s.type_str().trim_start_matches('|').to_owned(),
        other => record_str(other),
    }
}

/// A field's type inside a record's `str(dtype)`: a quoted type string, a
/// nested record's list, or a nested sub-array's `(type, shape)`.
fn field_type(dtype: &DType) -> String {
    match dtype {
        DType::Scalar(_) => py_str(&short_type(dtype)),
        DType::Record(_) => record_str(dtype),
        DType::SubArray(inner, shape) => {
            format!("({}, {})", field_type(inner), shape_repr(shape))
        }
    }
}

/// `str(dtype)` of a record: a list of fields, or NumPy's dictionary form
/// when padding makes offsets explicit.
fn record_str(dtype: &DType) -> String {
    let DType::Record(fields) = dtype else {
        return dtype.descr();
    };
    if fields.iter().any(|f| f.name.is_empty()) {
        let (mut names, mut formats, mut offsets) = (vec![], vec![], vec![]);
        let mut offset = 0;
        for f in fields {
            if !f.name.is_empty() {
                names.push(py_str(&f.name));
                formats.push(py_str(&short_type(&f.dtype)));
                offsets.push(offset.to_string());
            }
            offset += f.dtype.itemsize().unwrap_or(0);
        }
        return format!(
            "{{'names': [{}], 'formats': [{}], 'offsets': [{}], 'itemsize': {offset}}}",
            names.join(", "),
            formats.join(", "),
            offsets.join(", ")
        );
    }
    let items: Vec<String> = fields
        .iter()
        .map(|f| {
            let name = match &f.title {
                Some(t) => format!("({}, {})", py_str(t), py_str(&f.name)),
                None => py_str(&f.name),
            };
            match &f.dtype {
                DType::SubArray(inner, shape) => {
                    format!("({name}, {}, {})", field_type(inner), shape_repr(shape))
                }
                other => format!("({name}, {})", field_type(other)),
            }
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// The whole `repr`: `words` are the formatted shown elements.
pub fn array_repr(
    shape: &[usize],
    axes: &[Vec<Option<usize>>],
    words: Vec<String>,
    dtype: &DType,
) -> String {
    array_repr_with(shape, axes, words, dtype, None)
}

/// [`array_repr`] whose `dtype=` text is `dtype_text` when given (a dtype
/// the header does not show, such as NumPy 2's `StringDType()` behind a
/// `|O` header).
pub fn array_repr_with(
    shape: &[usize],
    axes: &[Vec<Option<usize>>],
    words: Vec<String>,
    dtype: &DType,
    dtype_text: Option<String>,
) -> String {
    let size: usize = if shape.contains(&0) {
        0
    } else {
        shape.iter().product()
    };
    let prefix = "array(";
    let lst = if size == 0 {
        "[]".to_owned()
    } else {
        let hanging = " ".repeat(prefix.len() + 1);
        format_array(&mut words.into_iter(), axes, &hanging, LINE_WIDTH - 1)
    };
    let mut extras = Vec::new();
    if (size == 0 && shape != [0]) || size > THRESHOLD {
        extras.push(format!("shape={}", shape_repr(shape)));
    }
    match dtype_text.or_else(|| dtype_repr(dtype)) {
        Some(d) => extras.push(format!("dtype={d}")),
        None if size == 0 => extras.push("dtype=float64".replace(
            "float64",
            match dtype {
                DType::Scalar(s) => match s.kind {
                    Kind::Bool => "bool",
                    Kind::Int => "int64",
                    Kind::Complex => "complex128",
                    _ => "float64",
                },
                _ => "float64",
            },
        )),
        None => {}
    }
    if extras.is_empty() {
        return format!("{prefix}{lst})");
    }
    let arr = format!("{prefix}{lst},");
    let extra = format!("{})", extras.join(", "));
    let last_line = arr[arr.rfind('\n').map_or(0, |p| p + 1)..].chars().count();
    let spacer = if last_line + extra.len() + 1 > LINE_WIDTH {
        format!("\n{}", " ".repeat(prefix.len()))
    } else {
        " ".to_owned()
    };
    format!("{arr}{spacer}{extra}")
}

/// Python's `repr` of a float (shortest digits, as `repr(float(x))`).
pub fn py_float(x: f64) -> String {
    PyValue::Float(x).to_string()
}

/// The shortest repr of a float16 value given as bits (for tests).
#[allow(dead_code)]
pub fn f16_repr(bits: u16) -> String {
    FloatFormat::new(&[f16_to_f64(bits)], Width::F16, false).format(f16_to_f64(bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(v: &[f64]) -> Vec<String> {
        format_values(&Values::Float(v.to_vec(), Width::F64), false)
    }

    #[test]
    fn floats_as_numpy() {
        // Expected strings from NumPy 2.4 (`repr` of the same arrays).
        assert_eq!(fmt(&[1.0, 2.5]), ["1. ", "2.5"]);
        assert_eq!(fmt(&[0.1 + 0.2]), ["0.3"]);
        assert_eq!(fmt(&[1e-5, 1.0]), ["1.e-05", "1.e+00"]);
        assert_eq!(fmt(&[f64::NAN, f64::NEG_INFINITY]), [" nan", "-inf"]);
        assert_eq!(fmt(&[-0.0, 1.0]), ["-0.", " 1."]);
        assert_eq!(py_float(1e16), "1e+16");
        assert_eq!(py_float(0.1), "0.1");
        assert_eq!(py_float(-2.0), "-2.0");
        assert_eq!(f16_repr(0x2e66), "0.1");
    }

    #[test]
    fn strings_as_python() {
        assert_eq!(py_str("it's"), "\"it's\"");
        assert_eq!(py_str("a\nb"), "'a\\nb'");
        assert_eq!(py_bytes(b"a\x00\xff'"), "b\"a\\x00\\xff'\"");
    }
}
