//! The closed list's constructors of plain data (containers, numbers,
//! dates, `Decimal`, `_codecs.encode`), applied by the machine's calls.

use super::text::truncate;
use super::values::check_hashable;
use super::*;
use crate::array::pyvalue::{Date, DateTime, TimeDelta};

impl Machine<'_> {
    // -- calls --------------------------------------------------------------

    /// Applies one of the whitelisted globals to `args`.
    pub(super) fn call(&mut self, g: Global, args: Vec<Id>) -> Result<Node> {
        match g {
            Global::Reconstruct
            | Global::FromBuffer
            | Global::Scalar
            | Global::DType
            | Global::Pandas(_)
            | Global::StringDType => (self.classes.call)(self, g, &args),
            Global::NdArray => Err(self
                .malformed("numpy.ndarray is only accepted as the first argument of _reconstruct")),
            Global::Encode => self.codecs_encode(&args),
            Global::Set | Global::FrozenSet => {
                let items = match args.as_slice() {
                    [] => Vec::new(),
                    [x] => self.iterable(*x)?,
                    _ => return Err(self.malformed("set() takes at most one argument")),
                };
                let mut members = Vec::with_capacity(items.len());
                for id in items {
                    let v = self.materialize(id)?;
                    check_hashable(self, &v)?;
                    members.push(v);
                }
                let v = if g == Global::Set {
                    PyValue::Set(members)
                } else {
                    PyValue::FrozenSet(members)
                };
                Ok(value_node(v))
            }
            Global::ByteArray => {
                let bytes = match args.as_slice() {
                    [] => Vec::new(),
                    [x] => match &self.arena[*x] {
                        Node::Bytes(b) | Node::ByteArray(b) => b.clone(),
                        _ => return Err(self.malformed("bytearray() of something not bytes")),
                    },
                    [s, enc] => {
                        let text = self.str_arg(*s, "bytearray")?;
                        let enc = self.str_arg(*enc, "bytearray")?;
                        self.encode_latin1(&text, &enc)?
                    }
                    _ => return Err(self.malformed("bytearray() takes at most two arguments")),
                };
                let cost = bytes.len() as u64;
                self.charge(cost)?;
                Ok(Node::ByteArray(bytes))
            }
            Global::Bytes => match args.as_slice() {
                [] => Ok(Node::Bytes(Vec::new())),
                [x] => match &self.arena[*x] {
                    Node::Bytes(b) | Node::ByteArray(b) => {
                        let b = b.clone();
                        self.charge(b.len() as u64)?;
                        Ok(Node::Bytes(b))
                    }
                    _ => Err(self.malformed("bytes() of something not bytes")),
                },
                _ => Err(self.malformed("bytes() from a pickle takes at most one argument")),
            },
            Global::Complex => {
                let part = |m: &Self, id: Id| -> Result<f64> {
                    match &m.arena[id] {
                        Node::Float(x) => Ok(*x),
                        Node::Int(n) => Ok(*n as f64),
                        Node::Bool(b) => Ok(*b as u8 as f64),
                        other => Err(m.malformed(format!("complex() of a {}", other.type_name()))),
                    }
                };
                let (re, im) = match args.as_slice() {
                    [] => (0.0, 0.0),
                    [r] => (part(self, *r)?, 0.0),
                    [r, i] => (part(self, *r)?, part(self, *i)?),
                    _ => return Err(self.malformed("complex() takes at most two arguments")),
                };
                Ok(value_node(PyValue::Complex(re, im)))
            }
            Global::Date => {
                let [state] = args.as_slice() else {
                    return Err(self.malformed("date() from a pickle takes one bytes argument"));
                };
                let b = self.state_bytes(*state, 4, "date")?;
                let date = self.date_from(&b)?;
                Ok(value_node(PyValue::Date(date)))
            }
            Global::DateTime => {
                let (state, tz) = match args.as_slice() {
                    [s] => (*s, None),
                    [s, tz] => (*s, Some(*tz)),
                    _ => return Err(self.malformed("datetime() from a pickle takes a bytes state")),
                };
                if let Some(tz) = tz {
                    if !matches!(self.arena[tz], Node::None) {
                        return Err(Error::Pickle(
                            crate::error::PickleError::UnsupportedPickle {
                                what: "a datetime with a tzinfo (only naive datetimes are read)"
                                    .into(),
                            },
                        ));
                    }
                }
                let b = self.state_bytes(state, 10, "datetime")?;
                let fold = b[2] >> 7;
                let date = self.date_from(&[b[0], b[1], b[2] & 0x7f, b[3]])?;
                let (hour, minute, second) = (b[4], b[5], b[6]);
                let microsecond = ((b[7] as u32) << 16) | ((b[8] as u32) << 8) | b[9] as u32;
                if hour > 23 || minute > 59 || second > 59 || microsecond > 999_999 {
                    return Err(self.malformed("datetime state out of range"));
                }
                Ok(value_node(PyValue::DateTime(DateTime {
                    date,
                    hour,
                    minute,
                    second,
                    microsecond,
                    fold,
                })))
            }
            Global::TimeDelta => {
                let mut parts = [0i128; 3];
                if args.len() > 3 {
                    return Err(self.malformed("timedelta() takes at most three arguments"));
                }
                for (slot, id) in parts.iter_mut().zip(&args) {
                    *slot = match &self.arena[*id] {
                        Node::Int(n) => *n as i128,
                        Node::Bool(b) => *b as i128,
                        _ => {
                            return Err(self.malformed("timedelta() arguments must be ints"));
                        }
                    };
                }
                let total = parts[0] * 86_400_000_000 + parts[1] * 1_000_000 + parts[2];
                let days = total.div_euclid(86_400_000_000);
                let rest = total.rem_euclid(86_400_000_000);
                if days.abs() > 999_999_999 {
                    return Err(self.malformed("timedelta out of range"));
                }
                Ok(value_node(PyValue::TimeDelta(TimeDelta {
                    days: days as i32,
                    seconds: (rest / 1_000_000) as u32,
                    microseconds: (rest % 1_000_000) as u32,
                })))
            }
            Global::Decimal => {
                let [s] = args.as_slice() else {
                    return Err(self.malformed("Decimal() from a pickle takes one str"));
                };
                let text = self.str_arg(*s, "Decimal")?;
                if !is_decimal_text(&text) {
                    return Err(self.malformed(format!("{:?} is not a Decimal", truncate(&text))));
                }
                Ok(value_node(PyValue::Decimal(text)))
            }
        }
    }

    /// `_codecs.encode(str, 'latin1')`: how protocols 0 to 2 spell bytes.
    pub(super) fn codecs_encode(&mut self, args: &[Id]) -> Result<Node> {
        let (s, enc) = match args {
            [s] => (*s, None),
            [s, e] => (*s, Some(*e)),
            _ => return Err(self.malformed("_codecs.encode takes one or two arguments")),
        };
        let text = self.str_arg(s, "_codecs.encode")?;
        let enc = match enc {
            Some(e) => self.str_arg(e, "_codecs.encode")?,
            None => "utf-8".to_owned(),
        };
        let bytes = self.encode_latin1(&text, &enc)?;
        Ok(Node::Bytes(bytes))
    }

    pub(super) fn encode_latin1(&self, text: &str, encoding: &str) -> Result<Vec<u8>> {
        match encoding.to_ascii_lowercase().replace('_', "-").as_str() {
            "latin1" | "latin-1" | "iso-8859-1" | "iso8859-1" | "l1" => text
                .chars()
                .map(|c| u8::try_from(c as u32).ok())
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| self.malformed("text not encodable as latin-1")),
            "utf-8" | "utf8" => Ok(text.as_bytes().to_vec()),
            other => Err(Error::Pickle(
                crate::error::PickleError::UnsupportedPickle {
                    what: format!("_codecs.encode to {:?}", truncate(other)),
                },
            )),
        }
    }

    /// A `str` argument (a Python 2 `str` is decoded as latin-1).
    pub(super) fn str_arg(&self, id: Id, what: &str) -> Result<String> {
        match &self.arena[id] {
            Node::Str(s) => Ok(s.clone()),
            Node::Py2Str(b) => Ok(b.iter().map(|&c| c as char).collect()),
            other => Err(self.malformed(format!("{what}() of a {}, not a str", other.type_name()))),
        }
    }

    /// The bytes state of a `date`/`datetime` (bytes, or a latin-1 str as
    /// Python 2 and protocol-0 pickles spell it).
    pub(super) fn state_bytes(&self, id: Id, len: usize, what: &str) -> Result<Vec<u8>> {
        let bytes = match &self.arena[id] {
            Node::Bytes(b) | Node::Py2Str(b) => b.clone(),
            Node::Str(s) => self.encode_latin1(s, "latin1")?,
            other => {
                return Err(self.malformed(format!(
                    "{what}() state is a {}, not bytes",
                    other.type_name()
                )))
            }
        };
        if bytes.len() != len {
            return Err(self.malformed(format!(
                "{what}() state has {} bytes, not {len}",
                bytes.len()
            )));
        }
        Ok(bytes)
    }

    pub(super) fn date_from(&self, b: &[u8]) -> Result<Date> {
        let year = u16::from_be_bytes([b[0], b[1]]);
        let (month, day) = (b[2], b[3]);
        let leap =
            year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
        let days_in_month = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => 0,
        };
        if !(1..=9999).contains(&year) || day == 0 || day > days_in_month {
            return Err(self.malformed(format!("invalid date {year}-{month}-{day}")));
        }
        Ok(Date { year, month, day })
    }

    /// The items of a list, tuple, set or frozenset argument.
    pub(crate) fn iterable(&self, id: Id) -> Result<Vec<Id>> {
        match &self.arena[id] {
            Node::List(v) | Node::Tuple(v) | Node::Set(v) | Node::FrozenSet(v) => Ok(v.clone()),
            other => Err(self.malformed(format!(
                "expected a list or tuple, found a {}",
                other.type_name()
            ))),
        }
    }
}

/// `Decimal(str)` accepts: sign, digits with an optional point and
/// exponent, or `Infinity`/`Inf`/`NaN`/`sNaN` (with payload digits).
fn is_decimal_text(s: &str) -> bool {
    let t = s.trim();
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    let lower = t.to_ascii_lowercase();
    if lower == "infinity" || lower == "inf" {
        return true;
    }
    for p in ["snan", "nan"] {
        if let Some(payload) = lower.strip_prefix(p) {
            return payload.bytes().all(|b| b.is_ascii_digit());
        }
    }
    let (mantissa, exp) = match lower.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (lower.as_str(), None),
    };
    let mut digits = 0;
    let mut dots = 0;
    for b in mantissa.bytes() {
        match b {
            b'0'..=b'9' | b'_' => digits += 1,
            b'.' => dots += 1,
            _ => return false,
        }
    }
    if digits == 0 || dots > 1 {
        return false;
    }
    match exp {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['+', '-']).unwrap_or(e);
            !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
        }
    }
}
