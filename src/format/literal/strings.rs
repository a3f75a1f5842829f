//! String literals of the header grammar: quotes, prefixes, escapes, and
//! adjacent literals concatenated.

use super::{is_ident_start, Parser, Value, ValueKind};
use crate::error::Result;

impl Parser {
    /// One or more adjacent string literals, concatenated.
    pub(super) fn strings(&mut self) -> Result<Value> {
        let start = self.pos;
        let mut out = String::new();
        self.string_literal(&mut out)?;
        loop {
            let save = self.pos;
            self.skip_ws()?;
            match (self.peek(), self.peek_at(1), self.peek_at(2)) {
                (Some('\'' | '"'), _, _) => self.string_literal(&mut out)?,
                (Some('u' | 'U' | 'r' | 'R'), Some('\'' | '"'), _) => {
                    self.string_literal(&mut out)?
                }
                (Some(c), Some(d), Some('\'' | '"')) if is_ident_start(c) && is_ident_start(d) => {
                    // A two-letter prefix: let the value parser report it.
                    self.name_or_prefixed_string("a string literal")?;
                }
                (Some(c), Some('\'' | '"'), _) if is_ident_start(c) => {
                    self.name_or_prefixed_string("a string literal")?;
                }
                _ => {
                    self.pos = save;
                    break;
                }
            }
        }
        Ok(Value {
            pos: start,
            kind: ValueKind::Str(out),
        })
    }

    /// One string literal with an optional `u`/`r` prefix, appended to `out`.
    pub(super) fn string_literal(&mut self, out: &mut String) -> Result<()> {
        let start = self.pos;
        let mut raw = false;
        if let Some(c @ ('u' | 'U' | 'r' | 'R')) = self.peek() {
            raw = matches!(c, 'r' | 'R');
            self.pos += 1;
        }
        let quote = self.peek().expect("caller checked the quote");
        self.pos += 1;
        let triple = self.peek() == Some(quote) && self.peek_at(1) == Some(quote);
        if triple {
            self.pos += 2;
        }
        let unterminated = |this: &Parser| {
            let q = if triple {
                format!("{quote}{quote}{quote}")
            } else {
                quote.to_string()
            };
            this.malformed(
                start,
                &format!("a string closed by {q}"),
                "an unterminated string (it runs to the end of the header)".to_string(),
            )
        };
        loop {
            let Some(c) = self.peek() else {
                return Err(unterminated(self));
            };
            match c {
                c if c == quote => {
                    if !triple {
                        self.pos += 1;
                        return Ok(());
                    }
                    if self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote) {
                        self.pos += 3;
                        return Ok(());
                    }
                    out.push(c);
                    self.pos += 1;
                }
                '\n' | '\r' => {
                    if !triple {
                        return Err(self.malformed(
                            start,
                            &format!("a string closed by {quote} on the same line"),
                            "a newline inside the string (use a triple-quoted string or \\n)"
                                .to_string(),
                        ));
                    }
                    self.newline(out);
                }
                '\\' => {
                    if raw {
                        // In a raw string a backslash escapes the next
                        // character (so `r'\''` does not end), but both stay.
                        out.push('\\');
                        self.pos += 1;
                        match self.peek() {
                            None => return Err(unterminated(self)),
                            Some('\n' | '\r') => self.newline(out),
                            Some(c) => {
                                out.push(c);
                                self.pos += 1;
                            }
                        }
                    } else {
                        self.escape(out)?;
                    }
                }
                c => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// Consumes `\n`, `\r\n` or `\r` and appends `\n`, as Python's tokenizer
    /// normalises line ends.
    pub(super) fn newline(&mut self, out: &mut String) {
        if self.peek() == Some('\r') && self.peek_at(1) == Some('\n') {
            self.pos += 1;
        }
        self.pos += 1;
        out.push('\n');
    }

    /// One backslash escape in a non-raw string; the current char is `\`.
    pub(super) fn escape(&mut self, out: &mut String) -> Result<()> {
        let start = self.pos;
        self.pos += 1;
        let Some(c) = self.peek() else {
            return Err(self.malformed(
                start,
                "a character after the backslash",
                "end of header".to_string(),
            ));
        };
        self.pos += 1;
        let simple = match c {
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            return Ok(());
        }
        match c {
            '\n' => {}
            '\r' => {
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
            }
            '0'..='7' => {
                let mut v = c.to_digit(8).unwrap();
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            self.pos += 1;
                        }
                        None => break,
                    }
                }
                // At most 0o777, always a valid scalar value.
                out.push(char::from_u32(v).expect("octal escape below 0o1000"));
            }
            'x' | 'u' | 'U' => {
                let n = match c {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                for _ in 0..n {
                    match self.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            self.pos += 1;
                        }
                        None => {
                            return Err(self.malformed(
                                start,
                                &format!("\\{c} followed by {n} hexadecimal digits"),
                                {
                                    let end = (self.pos + 1).min(self.chars.len());
                                    let text: String = self.chars[start..end].iter().collect();
                                    format!("'{}'", text.escape_debug())
                                },
                            ))
                        }
                    }
                }
                match char::from_u32(v) {
                    Some(ch) => out.push(ch),
                    None => {
                        return Err(self.malformed(
                            start,
                            "a valid Unicode code point (not a surrogate, at most \\U0010ffff)",
                            format!("\\{c}{:0width$x}", v, width = n),
                        ))
                    }
                }
            }
            'N' => {
                return Err(self.malformed(
                    start,
                    "a supported escape (\\N{...} named characters are not supported)",
                    "'\\N'".to_string(),
                ))
            }
            other => {
                // Unknown escapes keep the backslash, as in Python.
                out.push('\\');
                out.push(other);
            }
        }
        Ok(())
    }
}
