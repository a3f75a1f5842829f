//! Values from outside NumPy and Python's builtins that object arrays from
//! the wild hold: bare references to globals, pandas' timestamps,
//! timedeltas and missing-value markers, time zones, and (under an explicit
//! opt-in) objects of any other class kept as inert data.
//!
//! Each is plain data here: nothing is imported or called. The writer
//! ([`super::write`]) pickles them back through the same constructors, so
//! that Python rebuilds what it first pickled.

use super::{PyValue, TimeDelta};
use std::fmt;

/// An object of a class outside the reader's closed list, read as inert
/// data because [`crate::ReadOptions::opaque_objects`] asked for it: the
/// callable the pickle named, the arguments it passed, and the state,
/// items and entries it set afterwards. Nothing was called; writing it back
/// gives a pickle that makes Python build the same object.
///
/// ```
/// use ndnpy::pickle::{loads_with, PyValue};
/// use ndnpy::ReadOptions;
///
/// // pickle.dumps(fractions.Fraction(3, 4), protocol=2)
/// let p = b"\x80\x02cfractions\nFraction\nX\x03\x00\x00\x003/4\x85R.";
/// let v = loads_with(p, &ReadOptions::default().opaque_objects(true))?;
/// let PyValue::Opaque(o) = &v else { panic!() };
/// assert_eq!(o.class_name(), "fractions.Fraction");
/// assert_eq!(v.to_string(), "<fractions.Fraction object>");
/// // Refused by default, naming the class.
/// assert!(loads_with(p, &ReadOptions::default()).unwrap_err().to_string().contains("fractions Fraction"));
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Opaque {
    /// What the pickle called, almost always a [`PyValue::Global`].
    pub callable: PyValue,
    /// The arguments of the call.
    pub args: Vec<PyValue>,
    /// `NEWOBJ` (`cls.__new__(cls, *args)`) rather than a call.
    pub new_object: bool,
    /// The state given to `__setstate__` (the `BUILD` opcode), if any.
    pub state: Option<PyValue>,
    /// Items appended to the object (a `list` subclass).
    pub items: Vec<PyValue>,
    /// Entries set on the object (a `dict` subclass).
    pub entries: Vec<(PyValue, PyValue)>,
}

impl Opaque {
    /// The dotted name of the object's class: the callable's, or for
    /// `copyreg._reconstructor(cls, base, state)` (how protocols 0 and 1
    /// pickle instances) the class it reconstructs.
    pub fn class_name(&self) -> String {
        let dotted = |v: &PyValue| match v {
            PyValue::Global { module, name } => Some(format!("{module}.{name}")),
            _ => None,
        };
        if let (PyValue::Global { module, name }, Some(cls)) = (&self.callable, self.args.first()) {
            if module == "copyreg" && name == "_reconstructor" {
                if let Some(d) = dotted(cls) {
                    return d;
                }
            }
        }
        dotted(&self.callable).unwrap_or_else(|| "object".to_owned())
    }
}

/// A `pandas.Timestamp`: a count of `unit` since 1970-01-01 UTC and its
/// time zone (`None` for a naive timestamp, whose count is wall time).
#[derive(Debug, Clone, PartialEq)]
pub struct Timestamp {
    /// The count, as pandas stores it.
    pub value: i64,
    /// `"s"`, `"ms"`, `"us"` or `"ns"` (pandas' resolutions).
    pub unit: String,
    /// The time zone.
    pub tz: Option<TimeZone>,
}

/// A `pandas.Timedelta`: a count of `unit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timedelta {
    /// The count.
    pub value: i64,
    /// `"s"`, `"ms"`, `"us"` or `"ns"`.
    pub unit: String,
}

/// A time zone as pandas pickles one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeZone {
    /// `datetime.timezone(offset[, name])`, `datetime.timezone.utc`
    /// included (offset zero, no name).
    Fixed {
        /// The offset from UTC.
        offset: TimeDelta,
        /// The name given to the constructor, if any.
        name: Option<String>,
    },
    /// `zoneinfo.ZoneInfo(key)`, such as `"Europe/Paris"` (the rules are
    /// the reader's system's; only the key is stored).
    Zone(String),
}

/// pandas' resolution codes (NumPy's `NPY_DATETIMEUNIT`) and their units.
pub(crate) const RESOLUTIONS: [(i64, &str); 4] = [(7, "s"), (8, "ms"), (9, "us"), (10, "ns")];

/// Units per second.
fn per_second(unit: &str) -> i64 {
    match unit {
        "s" => 1,
        "ms" => 1_000,
        "us" => 1_000_000,
        _ => 1_000_000_000,
    }
}

/// The offset in seconds of a fixed zone.
fn offset_seconds(t: &TimeDelta) -> i64 {
    t.days as i64 * 86_400 + t.seconds as i64
}

/// `(y, m, d)` of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    // Day counts of `i64` seconds fit in far less than `i64`.
    let z = z.saturating_add(719_468);
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

/// Fractional seconds as pandas prints them: nine digits when there are
/// nanoseconds, six for micro- or milliseconds, none otherwise.
fn fraction(nanos: i64) -> String {
    if nanos == 0 {
        String::new()
    } else if nanos % 1000 != 0 {
        format!(".{nanos:09}")
    } else {
        format!(".{:06}", nanos / 1000)
    }
}

impl fmt::Display for Timestamp {
    /// pandas' repr (`Timestamp('2021-03-04 05:06:07.123456789')`); a
    /// zone given by key prints its UTC time, since its rules are not here.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per = per_second(&self.unit);
        let offset = match &self.tz {
            Some(TimeZone::Fixed { offset, .. }) => offset_seconds(offset),
            _ => 0,
        };
        // i128: a count near i64's ends plus an offset must not overflow.
        let secs = self.value.div_euclid(per) as i128 + offset as i128;
        let nanos = self.value.rem_euclid(per) * (1_000_000_000 / per);
        let (y, m, d) = civil_from_days(secs.div_euclid(86_400) as i64);
        let s = secs.rem_euclid(86_400) as i64;
        write!(
            f,
            "Timestamp('{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}{}",
            s / 3600,
            s / 60 % 60,
            s % 60,
            fraction(nanos)
        )?;
        match &self.tz {
            None => f.write_str("')"),
            Some(TimeZone::Fixed { offset, name }) => {
                let o = offset_seconds(offset);
                let sign = if o < 0 { '-' } else { '+' };
                let (h, mi) = (o.abs() / 3600, o.abs() / 60 % 60);
                let tz = match name {
                    Some(n) => n.clone(),
                    None if o == 0 => "UTC".to_owned(),
                    None => format!("UTC{sign}{h:02}:{mi:02}"),
                };
                write!(f, "{sign}{h:02}{mi:02}', tz='{tz}')")
            }
            Some(TimeZone::Zone(key)) => write!(f, " UTC', tz='{key}')"),
        }
    }
}

impl fmt::Display for Timedelta {
    /// pandas' repr: `Timedelta('0 days 00:00:05')`,
    /// `Timedelta('-1 days +23:59:55')`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per = per_second(&self.unit);
        let secs = self.value.div_euclid(per);
        let nanos = self.value.rem_euclid(per) * (1_000_000_000 / per);
        let days = secs.div_euclid(86_400);
        let s = secs.rem_euclid(86_400);
        let sign = if days < 0 { "+" } else { "" };
        write!(
            f,
            "Timedelta('{days} days {sign}{:02}:{:02}:{:02}{}')",
            s / 3600,
            s / 60 % 60,
            s % 60,
            fraction(nanos)
        )
    }
}

impl fmt::Display for TimeZone {
    /// Python's repr of the zone object.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeZone::Fixed { offset, name: None } if offset_seconds(offset) == 0 => {
                f.write_str("datetime.timezone.utc")
            }
            TimeZone::Fixed { offset, name } => {
                write!(f, "datetime.timezone({}", PyValue::TimeDelta(*offset))?;
                if let Some(n) = name {
                    write!(f, ", {}", PyValue::Str(n.clone()))?;
                }
                f.write_str(")")
            }
            TimeZone::Zone(key) => {
                write!(f, "zoneinfo.ZoneInfo(key={})", PyValue::Str(key.clone()))
            }
        }
    }
}

/// Python's repr of a global held as a value: builtins by their bare name
/// (`<class 'range'>`), others dotted.
pub(crate) fn global_repr(module: &str, name: &str) -> String {
    if module == "builtins" {
        format!("<class '{name}'>")
    } else {
        format!("<class '{module}.{name}'>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pandas_reprs() {
        let t = Timestamp {
            value: 1_614_834_367_123_456_789,
            unit: "ns".into(),
            tz: None,
        };
        assert_eq!(t.to_string(), "Timestamp('2021-03-04 05:06:07.123456789')");
        let utc = Timestamp {
            value: 1_614_816_000_000_000,
            unit: "us".into(),
            tz: Some(TimeZone::Fixed {
                offset: TimeDelta {
                    days: 0,
                    seconds: 0,
                    microseconds: 0,
                },
                name: None,
            }),
        };
        assert_eq!(
            utc.to_string(),
            "Timestamp('2021-03-04 00:00:00+0000', tz='UTC')"
        );
        let d = Timedelta {
            value: -5,
            unit: "s".into(),
        };
        assert_eq!(d.to_string(), "Timedelta('-1 days +23:59:55')");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }
}
