//! A small, bounded parser for the Python-literal subset that `.npy` headers use.
//!
//! The grammar is the part of Python's literal syntax that `ast.literal_eval`
//! accepts and a header can contain: dicts, tuples, lists, strings, integers,
//! `True`, `False` and `None`. Floats, complex numbers, bytes literals and
//! names are refused with a [`crate::error::HeaderError::MalformedHeader`] that says what was found.
//!
//! The parser is a recursive descent over the characters of the text, but
//! every recursion goes through an opening bracket and the bracket depth is
//! capped at [`MAX_DEPTH`], so the stack use is bounded whatever the input.
//! Every character is looked at a bounded number of times, so the time is
//! linear in the length of the text.
//!
//! Deliberate differences from Python:
//! - newlines are whitespace everywhere, also outside brackets (Python's
//!   `eval` mode refuses `'a'\n'b'` at the top level);
//! - unary signs may repeat (`--3`), which `ast.literal_eval` refuses;
//! - `\uD800`-style lone surrogates are refused, since a Rust `String` cannot
//!   hold them.

use crate::error::{Error, Result};

mod numbers;
mod strings;

/// Deepest nesting of brackets the parser accepts: Python's tokenizer
/// allows 200 levels of brackets, so `np.load` reads headers up to that
/// depth (a record dtype nested 99 deep: 99 lists, 100 tuples and the
/// dict); one more level and NumPy cannot parse the header either.
pub(crate) const MAX_DEPTH: usize = 200;

/// A parsed literal with the character offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Value {
    /// Character offset (not byte offset) into the header text.
    pub pos: usize,
    /// What the literal is.
    pub kind: ValueKind,
}

/// The literal forms a header can contain.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ValueKind {
    /// `{k: v, ...}` in source order, duplicates kept.
    Dict(Vec<(Value, Value)>),
    /// `(a, b)`, `(a,)`, `()`.
    Tuple(Vec<Value>),
    /// `[a, b]`.
    List(Vec<Value>),
    /// A string literal, escapes resolved, adjacent literals concatenated.
    Str(String),
    /// An integer literal with an optional sign.
    Int(i128),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
}

/// Parses `text` as exactly one literal followed only by whitespace and
/// comments. `allow_long_suffix` accepts Python 2's `L` suffix on integers.
pub(crate) fn parse(text: &str, allow_long_suffix: bool) -> Result<Value> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
        depth: 0,
        allow_long_suffix,
    };
    p.skip_ws()?;
    let value = p.value("a value")?;
    p.skip_ws()?;
    if p.pos < p.chars.len() {
        return Err(
            p.error_here("end of header (only whitespace and comments may follow the value)")
        );
    }
    Ok(value)
}

/// Longest token text quoted in an error message.
const MAX_TOKEN_IN_MESSAGE: usize = 32;

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    allow_long_suffix: bool,
}

/// Describes one character for an error message: `'x'`, `'\n'`.
fn describe_char(c: char) -> String {
    format!("'{}'", c.escape_debug())
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn malformed(&self, pos: usize, expected: &str, found: String) -> Error {
        Error::Header(crate::error::HeaderError::MalformedHeader {
            pos,
            expected: expected.to_string(),
            found,
        })
    }

    /// Describes what is at the current position.
    fn found_here(&self) -> String {
        match self.peek() {
            None => "end of header".to_string(),
            Some(c) => describe_char(c),
        }
    }

    fn error_here(&self, expected: &str) -> Error {
        self.malformed(self.pos, expected, self.found_here())
    }

    /// The text of the token-like run starting at `start` (identifier chars,
    /// digits, `.`, and a sign right after an exponent), capped in length.
    fn token_text(&self, start: usize) -> String {
        let mut end = start;
        while let Some(&c) = self.chars.get(end) {
            let exp_sign = (c == '+' || c == '-')
                && end > start
                && matches!(self.chars[end - 1], 'e' | 'E')
                && self.chars[start].is_ascii_digit();
            if is_ident_char(c) || c == '.' || exp_sign {
                end += 1;
                if end - start > MAX_TOKEN_IN_MESSAGE {
                    let s: String = self.chars[start..end].iter().collect();
                    return format!("{s}...");
                }
            } else {
                break;
            }
        }
        self.chars[start..end].iter().collect()
    }

    /// Skips whitespace, `#` comments and backslash-newline continuations.
    fn skip_ws(&mut self) -> Result<()> {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' | '\r' | '\x0c' => self.pos += 1,
                '#' => {
                    while let Some(c) = self.peek() {
                        if c == '\n' || c == '\r' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                '\\' => match self.peek_at(1) {
                    Some('\n') => self.pos += 2,
                    Some('\r') => {
                        self.pos += 2;
                        if self.peek() == Some('\n') {
                            self.pos += 1;
                        }
                    }
                    _ => {
                        return Err(self.malformed(
                            self.pos,
                            "a newline after the line-continuation backslash",
                            match self.peek_at(1) {
                                None => "end of header".to_string(),
                                Some(c) => describe_char(c),
                            },
                        ))
                    }
                },
                _ => break,
            }
        }
        Ok(())
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::Limit(crate::error::LimitError::NestingTooDeep {
                max: MAX_DEPTH,
            }));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Parses one value at the current position (whitespace already skipped).
    /// `expected` describes the value for the error message when none is there.
    fn value(&mut self, expected: &str) -> Result<Value> {
        let start = self.pos;
        let Some(c) = self.peek() else {
            return Err(self.error_here(expected));
        };
        match c {
            '{' => self.dict(),
            '[' => self.list(),
            '(' => self.paren(),
            '\'' | '"' => self.strings(),
            '+' | '-' => self.signed(),
            '0'..='9' => {
                let magnitude = self.int_literal()?;
                let n = i128::try_from(magnitude).map_err(|_| overflow())?;
                Ok(Value {
                    pos: start,
                    kind: ValueKind::Int(n),
                })
            }
            '.' if self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) => Err(self.malformed(
                start,
                expected,
                format!("float literal '{}'", self.token_text(start)),
            )),
            c if is_ident_start(c) => self.name_or_prefixed_string(expected),
            _ => Err(self.error_here(expected)),
        }
    }

    /// `True`, `False`, `None`, or a string with a prefix (`u'..'`, `r'..'`).
    fn name_or_prefixed_string(&mut self, expected: &str) -> Result<Value> {
        let start = self.pos;
        let mut end = start;
        while end < self.chars.len() && is_ident_char(self.chars[end]) && end - start < 3 {
            end += 1;
        }
        // A string prefix is one or two letters directly followed by a quote.
        if end - start <= 2 && matches!(self.chars.get(end), Some('\'' | '"')) {
            let prefix: String = self.chars[start..end].iter().collect();
            return match prefix.to_ascii_lowercase().as_str() {
                "u" | "r" => self.strings(),
                "b" | "br" | "rb" => Err(self.malformed(
                    start,
                    expected,
                    format!("bytes literal (prefix '{prefix}'), which headers do not use"),
                )),
                "f" | "fr" | "rf" => Err(self.malformed(
                    start,
                    expected,
                    format!("f-string (prefix '{prefix}'), which is not a literal"),
                )),
                _ => Err(self.malformed(
                    start,
                    expected,
                    format!("invalid string prefix '{prefix}'"),
                )),
            };
        }
        let word = self.token_text(start);
        let kind = match word.as_str() {
            "True" => ValueKind::Bool(true),
            "False" => ValueKind::Bool(false),
            "None" => ValueKind::None,
            _ => return Err(self.malformed(start, expected, format!("name '{word}'"))),
        };
        self.pos = start + word.chars().count();
        Ok(Value { pos: start, kind })
    }

    /// `(`: a tuple, or a parenthesised single value.
    fn paren(&mut self) -> Result<Value> {
        let start = self.pos;
        self.enter()?;
        self.pos += 1;
        self.skip_ws()?;
        if self.peek() == Some(')') {
            self.pos += 1;
            self.leave();
            return Ok(Value {
                pos: start,
                kind: ValueKind::Tuple(Vec::new()),
            });
        }
        let first = self.value("a value or ')'")?;
        self.skip_ws()?;
        match self.peek() {
            Some(')') => {
                // `(x)` is just `x`, as in Python.
                self.pos += 1;
                self.leave();
                return Ok(first);
            }
            Some(',') => self.pos += 1,
            _ => return Err(self.error_here("',' or ')'")),
        }
        let mut items = vec![first];
        self.sequence(')', &mut items, |p| p.value("a value or ')'"))?;
        self.leave();
        Ok(Value {
            pos: start,
            kind: ValueKind::Tuple(items),
        })
    }

    /// `[a, b, ...]`.
    fn list(&mut self) -> Result<Value> {
        let start = self.pos;
        self.enter()?;
        self.pos += 1;
        let mut items = Vec::new();
        self.sequence(']', &mut items, |p| p.value("a value or ']'"))?;
        self.leave();
        Ok(Value {
            pos: start,
            kind: ValueKind::List(items),
        })
    }

    /// `{k: v, ...}`.
    fn dict(&mut self) -> Result<Value> {
        let start = self.pos;
        self.enter()?;
        self.pos += 1;
        let mut items = Vec::new();
        self.sequence('}', &mut items, |p| {
            let key = p.value("a key or '}'")?;
            p.skip_ws()?;
            if p.peek() != Some(':') {
                return Err(p.error_here("':'"));
            }
            p.pos += 1;
            p.skip_ws()?;
            Ok((key, p.value("a value")?))
        })?;
        self.leave();
        Ok(Value {
            pos: start,
            kind: ValueKind::Dict(items),
        })
    }

    /// Parses `item, item, ...` up to and including `close`, with an
    /// optional trailing comma; the opening bracket is already consumed.
    /// `item` is called at the first character of each item.
    fn sequence<T>(
        &mut self,
        close: char,
        items: &mut Vec<T>,
        mut item: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<()> {
        let separator = format!("',' or '{close}'");
        loop {
            self.skip_ws()?;
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(());
            }
            items.push(item(self)?);
            self.skip_ws()?;
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.error_here(&separator)),
            }
        }
    }
}

fn overflow() -> Error {
    Error::Limit(crate::error::LimitError::LengthOverflow {
        shape: vec![],
        itemsize: 0,
    })
}

/// A short description of a value's kind for error messages.
fn describe_kind(kind: &ValueKind) -> String {
    match kind {
        ValueKind::Dict(_) => "a dict".into(),
        ValueKind::Tuple(_) => "a tuple".into(),
        ValueKind::List(_) => "a list".into(),
        ValueKind::Str(_) => "a string".into(),
        ValueKind::Int(_) => "an integer".into(),
        ValueKind::Bool(b) => format!("'{}'", if *b { "True" } else { "False" }),
        ValueKind::None => "'None'".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders a value compactly: Python-like, with strings in Rust debug form.
    fn show(v: &Value) -> String {
        match &v.kind {
            ValueKind::Dict(items) => {
                let parts: Vec<String> = items
                    .iter()
                    .map(|(k, v)| format!("{}: {}", show(k), show(v)))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            ValueKind::Tuple(items) => {
                let parts: Vec<String> = items.iter().map(show).collect();
                if parts.len() == 1 {
                    format!("({},)", parts[0])
                } else {
                    format!("({})", parts.join(", "))
                }
            }
            ValueKind::List(items) => {
                let parts: Vec<String> = items.iter().map(show).collect();
                format!("[{}]", parts.join(", "))
            }
            ValueKind::Str(s) => format!("{s:?}"),
            ValueKind::Int(n) => n.to_string(),
            ValueKind::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            ValueKind::None => "None".to_string(),
        }
    }

    fn ok(text: &str) -> String {
        match parse(text, false) {
            Ok(v) => show(&v),
            Err(e) => panic!("{text:?} failed: {e}"),
        }
    }

    fn ok_long(text: &str) -> String {
        show(&parse(text, true).unwrap_or_else(|e| panic!("{text:?} failed: {e}")))
    }

    fn malformed(text: &str) -> (usize, String, String) {
        match parse(text, false) {
            Err(Error::Header(crate::error::HeaderError::MalformedHeader {
                pos,
                expected,
                found,
            })) => (pos, expected, found),
            other => panic!("{text:?}: expected MalformedHeader, got {other:?}"),
        }
    }

    fn is_malformed(text: &str) -> bool {
        matches!(
            parse(text, false),
            Err(Error::Header(
                crate::error::HeaderError::MalformedHeader { .. }
            ))
        )
    }

    #[test]
    fn typical_header() {
        let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }          \n";
        assert_eq!(
            ok(h),
            r#"{"descr": "<f8", "fortran_order": False, "shape": (3, 4)}"#
        );
    }

    #[test]
    fn containers() {
        assert_eq!(ok("()"), "()");
        assert_eq!(ok("(1,)"), "(1,)");
        assert_eq!(ok("(1, 2)"), "(1, 2)");
        assert_eq!(ok("(1, 2,)"), "(1, 2)");
        assert_eq!(ok("[]"), "[]");
        assert_eq!(ok("[1, 2,]"), "[1, 2]");
        assert_eq!(ok("{}"), "{}");
        assert_eq!(ok("{1: 2,}"), "{1: 2}");
        assert_eq!(ok("{'a': 1, 'a': 2}"), r#"{"a": 1, "a": 2}"#);
        assert_eq!(
            ok("[('a', '<i4'), ('b', [('c', '|b1')], (2, 3))]"),
            r#"[("a", "<i4"), ("b", [("c", "|b1")], (2, 3))]"#
        );
        assert_eq!(ok("(None, True, False)"), "(None, True, False)");
    }

    #[test]
    fn parenthesised_value_is_not_a_tuple() {
        assert_eq!(ok("(3)"), "3");
        assert_eq!(ok("((3))"), "3");
        assert_eq!(ok("((3),)"), "(3,)");
        assert_eq!(ok("('a')"), r#""a""#);
        assert_eq!(ok("(())"), "()");
        assert_eq!(ok("-(3)"), "-3");
    }

    #[test]
    fn container_errors() {
        assert_eq!(
            malformed("{'a': 1 'b': 2}"),
            (8, "',' or '}'".to_string(), "'''".replace("'''", "'\\''"))
        );
        assert_eq!(malformed("{'a' 1}").1, "':'");
        assert_eq!(malformed("(1 2)"), (3, "',' or ')'".into(), "'2'".into()));
        assert_eq!(malformed("[1 2]").1, "',' or ']'");
        assert_eq!(malformed("(,)").0, 1);
        assert!(is_malformed("[,]"));
        assert!(is_malformed("{,}"));
        assert!(is_malformed("(1,,)"));
        assert_eq!(
            malformed("(1, 2"),
            (5, "',' or ')'".into(), "end of header".into())
        );
        assert_eq!(malformed("{'a': }").1, "a value");
        assert_eq!(malformed("").2, "end of header");
        assert_eq!(malformed("   ").2, "end of header");
        assert!(is_malformed("{'a': 1}}"));
        assert!(is_malformed("(1) (2)"));
        assert!(is_malformed("1, 2"));
        assert!(is_malformed("{'a': 1"));
        assert!(is_malformed("(]"));
    }

    #[test]
    fn positions_are_char_offsets() {
        // 'é' is two bytes in UTF-8 but one character.
        let v = parse("{'é': (1, -2)}", false).unwrap();
        let ValueKind::Dict(items) = &v.kind else {
            panic!()
        };
        let (k, t) = &items[0];
        assert_eq!(k.pos, 1);
        assert_eq!(t.pos, 6);
        let ValueKind::Tuple(xs) = &t.kind else {
            panic!()
        };
        assert_eq!(xs[0].pos, 7);
        assert_eq!(xs[1].pos, 10);
        assert_eq!(malformed("{'é': x}").0, 6);
        assert_eq!(malformed("'ü' 'ö' 'x' ?").0, 12);
    }

    #[test]
    fn strings_quotes_and_prefixes() {
        assert_eq!(ok("'abc'"), r#""abc""#);
        assert_eq!(ok("\"a'c\""), r#""a'c""#);
        assert_eq!(ok("'a\"c'"), r#""a\"c""#);
        assert_eq!(ok("''"), r#""""#);
        assert_eq!(ok("u'x'"), r#""x""#);
        assert_eq!(ok("U\"x\""), r#""x""#);
        assert_eq!(ok("'''a'b\"c'''"), r#""a'b\"c""#);
        assert_eq!(ok("\"\"\"a\nb\"\"\""), r#""a\nb""#);
        assert_eq!(ok("'''a\r\nb\rc'''"), r#""a\nb\nc""#);
        assert_eq!(ok("'''a'''''"), r#""a""#);
        assert_eq!(ok("'é€😀'"), "\"é€😀\"");
    }

    #[test]
    fn raw_strings() {
        assert_eq!(ok(r"r'\n\x'"), r#""\\n\\x""#);
        assert_eq!(ok(r"R'\''"), r#""\\'""#);
        assert_eq!(ok("r'a\\\nb'"), r#""a\\\nb""#);
        assert_eq!(ok(r"r'\N{DASH}'"), r#""\\N{DASH}""#);
        assert!(is_malformed(r"r'\'"));
    }

    #[test]
    fn string_prefix_errors() {
        assert!(malformed("b'x'").2.contains("bytes literal"));
        assert!(malformed("B'x'").2.contains("bytes literal"));
        assert!(malformed("rb'x'").2.contains("bytes literal"));
        assert!(malformed("f'x'").2.contains("f-string"));
        assert!(malformed("ur'x'").2.contains("invalid string prefix"));
        assert!(malformed("'a' b'x'").2.contains("bytes literal"));
        assert_eq!(malformed("'a' b'x'").0, 4);
    }

    #[test]
    fn escapes() {
        assert_eq!(
            ok(r#"'\\ \' \" \a \b \f \n \r \t \v'"#),
            r#""\\ ' \" \u{7} \u{8} \u{c} \n \r \t \u{b}""#
        );
        assert_eq!(ok(r"'\0\101\1010\777\8'"), "\"\\0AA0\u{1ff}\\\\8\"");
        assert_eq!(ok(r"'\x41\u00e9\U0001F600'"), "\"Aé😀\"");
        assert_eq!(ok(r"'\q\ '"), r#""\\q\\ ""#);
        assert_eq!(ok("'ab\\\ncd'"), r#""abcd""#);
        assert_eq!(ok("'ab\\\r\ncd'"), r#""abcd""#);
        assert_eq!(ok("'''ab\\\ncd'''"), r#""abcd""#);
    }

    #[test]
    fn escape_errors() {
        assert!(is_malformed(r"'\x4'"));
        assert!(is_malformed(r"'\xg0'"));
        assert!(is_malformed(r"'\u12'"));
        assert!(is_malformed(r"'\U0011ffff'"));
        assert!(is_malformed(r"'\ud800'"));
        let (pos, expected, _) = malformed(r"'a\N{EM DASH}'");
        assert_eq!(pos, 2);
        assert!(expected.contains("\\N{...}"));
        assert!(is_malformed("'abc\\"));
    }

    #[test]
    fn unterminated_strings() {
        let (pos, _, found) = malformed("{'descr': '<f8}");
        assert_eq!(pos, 10);
        assert!(found.contains("unterminated"));
        assert!(malformed("'a\nb'").2.contains("newline"));
        assert!(malformed("'a\rb'").2.contains("newline"));
        assert!(is_malformed("'''abc''"));
        assert!(is_malformed("\"abc'"));
    }

    #[test]
    fn adjacent_strings_concatenate() {
        assert_eq!(ok("'a' \"b\""), r#""ab""#);
        assert_eq!(ok("'a'\"b\"u'c'r'\\d'"), r#""abc\\d""#);
        assert_eq!(ok("('<' # comment\n 'f8',)"), r#"("<f8",)"#);
        assert_eq!(ok("{'de' 'scr': 1}"), r#"{"descr": 1}"#);
        assert_eq!(parse("  'a' 'b'", false).unwrap().pos, 2);
    }

    #[test]
    fn integers() {
        assert_eq!(ok("0"), "0");
        assert_eq!(ok("00"), "0");
        assert_eq!(ok("0_0"), "0");
        assert_eq!(ok("1_000_000"), "1000000");
        assert_eq!(ok("0x1F"), "31");
        assert_eq!(ok("0X_ff"), "255");
        assert_eq!(ok("0o17"), "15");
        assert_eq!(ok("0O_7"), "7");
        assert_eq!(ok("0b101"), "5");
        assert_eq!(ok("0B1_0"), "2");
        assert_eq!(ok("-3"), "-3");
        assert_eq!(ok("+3"), "3");
        assert_eq!(ok("- 3"), "-3");
        assert_eq!(ok("--3"), "3");
        assert_eq!(ok("+-+3"), "-3");
        assert_eq!(ok("(-1, +2)"), "(-1, 2)");
        assert_eq!(
            ok("170141183460469231731687303715884105727"),
            i128::MAX.to_string()
        );
        assert_eq!(
            ok("-170141183460469231731687303715884105728"),
            i128::MIN.to_string()
        );
    }

    #[test]
    fn integer_errors() {
        assert!(malformed("012").2.contains("leading zeros"));
        assert!(is_malformed("0_1"));
        assert!(is_malformed("1__0"));
        assert!(is_malformed("1_"));
        assert!(is_malformed("0x_"));
        assert!(malformed("_1").2.contains("name"));
        assert!(is_malformed("0x"));
        assert!(is_malformed("0xg"));
        assert!(is_malformed("0b12"));
        assert!(is_malformed("0o8"));
        assert!(is_malformed("3abc"));
        assert!(is_malformed("-"));
        assert!(is_malformed("-'a'"));
        assert!(is_malformed("-True"));
        assert!(is_malformed("-(1,)"));
        assert_eq!(
            malformed("(1, 1.5)"),
            (4, "an integer".into(), "float literal '1.5'".into())
        );
        assert!(malformed("1e5").2.contains("float"));
        assert!(malformed("1e-5").2.contains("'1e-5'"));
        assert!(malformed(".5").2.contains("float"));
        assert!(malformed("-.5").2.contains("float"));
        assert!(malformed("2j").2.contains("complex"));
        assert_eq!(malformed("nan").2, "name 'nan'");
        assert_eq!(malformed("(foo)").2, "name 'foo'");
        assert_eq!(malformed("-inf").2, "name 'inf'");
        assert!(is_malformed("true"));
    }

    #[test]
    fn integer_overflow() {
        for text in [
            "170141183460469231731687303715884105728",
            "-170141183460469231731687303715884105729",
            "999999999999999999999999999999999999999999999999",
            "(1, 0xffffffffffffffffffffffffffffffffff)",
            "-(-170141183460469231731687303715884105728)",
        ] {
            assert!(
                matches!(
                    parse(text, false),
                    Err(Error::Limit(crate::error::LimitError::LengthOverflow { ref shape, itemsize: 0 })) if shape.is_empty()
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn long_suffix() {
        assert_eq!(ok_long("(3L, 4l)"), "(3, 4)");
        assert_eq!(ok_long("0x1fL"), "31");
        assert_eq!(ok_long("-5L"), "-5");
        assert!(malformed("3L").2.contains("L suffix"));
        assert!(matches!(
            parse("3LL", true),
            Err(Error::Header(
                crate::error::HeaderError::MalformedHeader { .. }
            ))
        ));
    }

    #[test]
    fn whitespace_and_comments() {
        assert_eq!(ok(" \t\n\r\x0c(1,\n2)\n"), "(1, 2)");
        assert_eq!(ok("(1, # one\n 2) # trailing"), "(1, 2)");
        assert_eq!(ok("{'a': 1, #\r'b': 2}"), r#"{"a": 1, "b": 2}"#);
        assert_eq!(ok("(1,\\\n 2)"), "(1, 2)");
        assert_eq!(ok("(1,\\\r\n 2)\\\n"), "(1, 2)");
        assert_eq!(ok("# only a comment first\n3"), "3");
        assert_eq!(ok("-\\\n3"), "-3");
        assert!(is_malformed("(1, \\ 2)"));
        assert!(is_malformed("1 \\"));
        assert!(is_malformed("# nothing"));
    }

    #[test]
    fn nesting_limit() {
        let ok_depth = format!("{}{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert_eq!(ok(&ok_depth), "()");
        let too_deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(matches!(
            parse(&too_deep, false),
            Err(Error::Limit(crate::error::LimitError::NestingTooDeep {
                max: MAX_DEPTH
            }))
        ));
        let mixed = "{1: [(".repeat(MAX_DEPTH / 3 + 1);
        assert!(matches!(
            parse(&mixed, false),
            Err(Error::Limit(
                crate::error::LimitError::NestingTooDeep { .. }
            ))
        ));
    }

    #[test]
    fn hundred_thousand_parens_fail_fast() {
        let start = std::time::Instant::now();
        let text = "(".repeat(100_000);
        assert!(matches!(
            parse(&text, false),
            Err(Error::Limit(crate::error::LimitError::NestingTooDeep {
                max: MAX_DEPTH
            }))
        ));
        let text = format!("{}1{}", "-(".repeat(100_000), ")".repeat(100_000));
        assert!(matches!(
            parse(&text, false),
            Err(Error::Limit(
                crate::error::LimitError::NestingTooDeep { .. }
            ))
        ));
        // Long runs of signs are handled iteratively.
        let text = format!("{}1", "-".repeat(100_001));
        assert_eq!(ok(&text), "-1");
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn large_inputs_are_linear() {
        let start = std::time::Instant::now();
        let big_list = format!("[{}]", "1, ".repeat(200_000));
        let ValueKind::List(items) = parse(&big_list, false).unwrap().kind else {
            panic!()
        };
        assert_eq!(items.len(), 200_000);
        let many_strings = "'ab' ".repeat(200_000);
        let ValueKind::Str(s) = parse(&many_strings, false).unwrap().kind else {
            panic!()
        };
        assert_eq!(s.len(), 400_000);
        let comment = format!("1 #{}", "x".repeat(1_000_000));
        assert_eq!(ok(&comment), "1");
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn error_messages_read_well() {
        let e = parse("{'descr': '<f8', 'shape': (3, x)}", false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed header at character 30: expected a value or ')', found name 'x'"
        );
        let e = parse("{'shape': (3,)", false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed header at character 14: expected ',' or '}', found end of header"
        );
    }
}
