//! Protocol 0's text arguments: Python 2 string literals, raw-unicode-escape
//! text, float reprs; and cutting untrusted text short for messages.

pub(super) fn truncate(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_owned(),
    }
}

/// Python's `float()` of protocol 0's `F` text (repr of a float).
pub(super) fn parse_py_float(text: &str) -> Option<f64> {
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "nan" | "+nan" | "-nan" => return Some(f64::NAN),
        "inf" | "+inf" | "infinity" | "+infinity" => return Some(f64::INFINITY),
        "-inf" | "-infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    if t.bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        t.parse().ok()
    } else {
        None
    }
}

/// Decodes protocol 0's `UNICODE` argument (`raw-unicode-escape`: UTF-8
/// text, where `\uXXXX` and `\UXXXXXXXX` stand for code points).
pub(super) fn raw_unicode_escape(line: &[u8]) -> Option<String> {
    // Python writes the raw-unicode-escape codec: bytes are latin-1, and
    // only `\u`/`\U` escapes are special.
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        if c == b'\\' && i + 1 < line.len() && matches!(line[i + 1], b'u' | b'U') {
            let n = if line[i + 1] == b'u' { 4 } else { 8 };
            let hex = line.get(i + 2..i + 2 + n)?;
            let hex = std::str::from_utf8(hex).ok()?;
            let code = u32::from_str_radix(hex, 16).ok()?;
            out.push(char::from_u32(code)?);
            i += 2 + n;
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    Some(out)
}

/// Decodes protocol 0's `STRING` argument: a quoted Python 2 string literal
/// (`'abc'`, `"a'b"`, with `\x..`, `\n`, octal and the other escapes).
pub(super) fn py2_string_literal(line: &[u8]) -> Option<Vec<u8>> {
    let q = *line.first()?;
    if !(q == b'\'' || q == b'"') || line.len() < 2 || *line.last()? != q {
        return None;
    }
    let body = &line[1..line.len() - 1];
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let e = *body.get(i + 1)?;
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'\\' => out.push(b'\\'),
            b'\'' => out.push(b'\''),
            b'"' => out.push(b'"'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'\n' => {}
            b'x' => {
                let hex = std::str::from_utf8(body.get(i..i + 2)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b'0'..=b'7' => {
                let mut v = (e - b'0') as u32;
                let mut k = 0;
                while k < 2 && i < body.len() && (b'0'..=b'7').contains(&body[i]) {
                    v = v * 8 + (body[i] - b'0') as u32;
                    i += 1;
                    k += 1;
                }
                out.push(v as u8);
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    Some(out)
}
