//! Writing descriptors as `np.save` spells them, and Python `repr`s of
//! strings and parsed values for error messages.

use super::*;

// `DType::descr`, here beside what it calls, so that `mod.rs` (the
// model) imports neither of its text files.
impl DType {
    /// The descriptor as Python's `repr` spells it in a header written by `np.save`.
    pub fn descr(&self) -> String {
        let mut out = String::new();
        write_descr(self, &mut out);
        out
    }
}

pub(super) fn write_descr(dtype: &DType, out: &mut String) {
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
pub(super) fn write_shape(shape: &[usize], out: &mut String) {
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
pub(super) fn python_unprintable(c: char) -> bool {
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
pub(super) fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// A short Python-like rendering of a header value for error messages,
/// cut at about [`MAX_DESCR_IN_MESSAGE`] characters.
pub(super) fn render_value(value: &Value) -> String {
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
pub(super) fn render_into(value: &Value, out: &mut String, budget: usize) -> bool {
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
    use super::python_str_repr;

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
