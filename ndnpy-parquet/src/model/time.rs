//! Time units: [`TimeUnit`] (the units Parquet and pandas share), how a
//! NumPy unit is written in Parquet, and [`NAT`].

/// The resolution of a datetime or timedelta column, as NumPy spells it
/// (`datetime64[s]`, `[ms]`, `[us]`, `[ns]`: the units Parquet and pandas share).
///
/// ```
/// use ndnpy_parquet::{Column, TimeUnit, Values};
///
/// let t = Column::new("t", Values::datetime64(vec![1_000], TimeUnit::Millisecond));
/// assert_eq!(t.numpy_type(), "datetime64[ms]");
/// assert_eq!(TimeUnit::parse("ns"), Some(TimeUnit::Nanosecond));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// Seconds (`s`).
    Second,
    /// Milliseconds (`ms`).
    Millisecond,
    /// Microseconds (`us`), pandas 3's default.
    Microsecond,
    /// Nanoseconds (`ns`).
    Nanosecond,
}

impl TimeUnit {
    /// NumPy's spelling: `"s"`, `"ms"`, `"us"` or `"ns"`.
    ///
    /// ```
    /// assert_eq!(ndnpy_parquet::TimeUnit::Microsecond.as_str(), "us");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
        }
    }

    /// The unit NumPy spells `s` (one of `"s"`, `"ms"`, `"us"`, `"ns"`).
    ///
    /// ```
    /// use ndnpy_parquet::TimeUnit;
    /// assert_eq!(TimeUnit::parse("ns"), Some(TimeUnit::Nanosecond));
    /// assert_eq!(TimeUnit::parse("D"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "s" => TimeUnit::Second,
            "ms" => TimeUnit::Millisecond,
            "us" => TimeUnit::Microsecond,
            "ns" => TimeUnit::Nanosecond,
            _ => return None,
        })
    }
}

/// The Parquet unit a NumPy unit (`"ns"`, `"10ms"`, `"D"`, ...) is written
/// in, and the factor from one to the other: ms/us/ns (with a multiplier)
/// keep their base unit; seconds, minutes, hours, days and weeks become
/// seconds for timedeltas and milliseconds for datetimes (Parquet has no
/// timestamp in seconds: pyarrow writes pandas' `datetime64[s]` in
/// milliseconds too, and pandas reads it back as `datetime64[ms]`). Years,
/// months, units finer than ns and the generic unit have no exact Parquet
/// counterpart (`None`).
pub(crate) fn parquet_unit(unit: Option<&str>, datetime: bool) -> Option<(TimeUnit, i64)> {
    let unit = unit?;
    let digits = unit.bytes().take_while(u8::is_ascii_digit).count();
    let mult: i64 = if digits == 0 {
        1
    } else {
        unit[..digits].parse().ok().filter(|&m| m > 0)?
    };
    let (base, factor) = match &unit[digits..] {
        "s" => (TimeUnit::Second, 1),
        "ms" => (TimeUnit::Millisecond, 1),
        "us" | "μs" => (TimeUnit::Microsecond, 1),
        "ns" => (TimeUnit::Nanosecond, 1),
        "m" => (TimeUnit::Second, 60),
        "h" => (TimeUnit::Second, 3_600),
        "D" => (TimeUnit::Second, 86_400),
        "W" => (TimeUnit::Second, 604_800),
        _ => return None,
    };
    let factor = mult.checked_mul(factor)?;
    Some(match base {
        TimeUnit::Second if datetime => (TimeUnit::Millisecond, factor.checked_mul(1000)?),
        _ => (base, factor),
    })
}

/// NumPy's value for a missing datetime or timedelta (`NaT`).
///
/// ```
/// use ndnpy_parquet::{Column, Frame, Summary, TimeUnit, Values, NAT};
///
/// // A NaT needs no mask: it is written as a null.
/// let t = Column::new("t", Values::timedelta64(vec![5, NAT], TimeUnit::Second));
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.parquet");
/// Frame::new(vec![t])?.write(&path)?;
/// assert_eq!(Summary::read(&path)?.columns[0].missing, Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const NAT: i64 = i64::MIN;
