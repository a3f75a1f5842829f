//! Integer literals of the header grammar: signs, bases, underscores, the
//! Python 2 `L` suffix, and the bound on their size.

use super::{describe_kind, is_ident_char, is_ident_start, overflow, Parser, Value, ValueKind};
use crate::error::Result;

impl Parser {
    /// One or more unary signs followed by an integer (or a parenthesised
    /// integer, as `-(3)`).
    pub(super) fn signed(&mut self) -> Result<Value> {
        let start = self.pos;
        let mut negative = false;
        while let Some(c @ ('+' | '-')) = self.peek() {
            if c == '-' {
                negative = !negative;
            }
            self.pos += 1;
            self.skip_ws()?;
        }
        let expected = "an integer after the sign";
        match self.peek() {
            Some('0'..='9') => {
                let magnitude = self.int_literal()?;
                let n = if negative {
                    if magnitude == 1u128 << 127 {
                        i128::MIN
                    } else {
                        -i128::try_from(magnitude).map_err(|_| overflow())?
                    }
                } else {
                    i128::try_from(magnitude).map_err(|_| overflow())?
                };
                Ok(Value {
                    pos: start,
                    kind: ValueKind::Int(n),
                })
            }
            Some('(') => {
                let inner_pos = self.pos;
                let inner = self.paren()?;
                match inner.kind {
                    ValueKind::Int(n) => {
                        let n = if negative {
                            n.checked_neg().ok_or_else(overflow)?
                        } else {
                            n
                        };
                        Ok(Value {
                            pos: start,
                            kind: ValueKind::Int(n),
                        })
                    }
                    _ => Err(self.malformed(inner_pos, expected, describe_kind(&inner.kind))),
                }
            }
            _ => {
                // Reuse the value parser only for its error message.
                match self.peek() {
                    Some(c) if is_ident_start(c) || c == '.' => {
                        let pos = self.pos;
                        let what = match self.token_text(pos).as_str() {
                            w @ ("True" | "False" | "None") => format!("'{w}'"),
                            w if c == '.' => format!("float literal '{w}'"),
                            w => format!("name '{w}'"),
                        };
                        Err(self.malformed(pos, expected, what))
                    }
                    _ => Err(self.error_here(expected)),
                }
            }
        }
    }

    /// An unsigned integer literal starting at a digit; returns its magnitude.
    pub(super) fn int_literal(&mut self) -> Result<u128> {
        let start = self.pos;
        let (radix, digits_start) = match (self.peek(), self.peek_at(1)) {
            (Some('0'), Some('x' | 'X')) => (16, start + 2),
            (Some('0'), Some('o' | 'O')) => (8, start + 2),
            (Some('0'), Some('b' | 'B')) => (2, start + 2),
            _ => (10, start),
        };
        let radix_name = match radix {
            16 => "hexadecimal",
            8 => "octal",
            2 => "binary",
            _ => "decimal",
        };
        let bad = |this: &Parser, reason: &str| {
            this.malformed(
                start,
                &format!("a valid {radix_name} integer"),
                format!("'{}' ({reason})", this.token_text(start)),
            )
        };
        self.pos = digits_start;
        // After a base prefix an underscore may come first: `0x_ff`.
        let mut prev_underscore = false;
        let mut allow_underscore = radix != 10;
        let mut ndigits = 0usize;
        let mut value: u128 = 0;
        let mut all_zero = true;
        let mut overflowed = false;
        while let Some(c) = self.peek() {
            if c == '_' {
                if !allow_underscore {
                    return Err(bad(self, "'_' is only allowed between digits"));
                }
                allow_underscore = false;
                prev_underscore = true;
                self.pos += 1;
                continue;
            }
            let Some(d) = c.to_digit(radix) else { break };
            if d != 0 {
                all_zero = false;
            }
            match value
                .checked_mul(radix as u128)
                .and_then(|v| v.checked_add(d as u128))
            {
                Some(v) => value = v,
                None => overflowed = true,
            }
            ndigits += 1;
            prev_underscore = false;
            allow_underscore = true;
            self.pos += 1;
        }
        if prev_underscore {
            return Err(bad(self, "'_' is only allowed between digits"));
        }
        if ndigits == 0 {
            return Err(bad(self, "no digits"));
        }
        if radix == 10 && ndigits > 1 && self.chars[start] == '0' && !all_zero {
            return Err(bad(
                self,
                "leading zeros are not allowed in decimal integers; use 0o for octal",
            ));
        }
        if self.allow_long_suffix && matches!(self.peek(), Some('L' | 'l')) {
            self.pos += 1;
        }
        // The literal must end here: `1.5`, `1e3`, `2j`, `3abc` are not integers.
        if let Some(c) = self.peek() {
            if is_ident_char(c) || c == '.' {
                let text = self.token_text(start);
                let what = if radix == 10 && (c == '.' || c == 'e' || c == 'E') {
                    format!("float literal '{text}'")
                } else if radix == 10 && (c == 'j' || c == 'J') {
                    format!("complex literal '{text}'")
                } else if c == 'L' || c == 'l' {
                    format!(
                        "'{text}' (the L suffix is only allowed in format versions 1.0 and 2.0)"
                    )
                } else if c.is_ascii_digit() {
                    return Err(bad(self, "invalid digit"));
                } else {
                    format!("'{text}'")
                };
                return Err(self.malformed(start, "an integer", what));
            }
        }
        if overflowed {
            return Err(overflow());
        }
        Ok(value)
    }
}
