//! [`Column`]: one named, 1-D column of a frame, with its pandas type.

use crate::error::{Error, Result};
use crate::model::meta::ColumnMeta;
use ndarray::Array1;
use ndnpy::AnyArray;

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

/// The data of a column: a 1-D [`AnyArray`] or a categorical.
///
/// An array column holds numbers, bools, [`AnyArray::Str`],
/// [`AnyArray::Bytes`], or [`AnyArray::Datetime64`] /
/// [`AnyArray::Timedelta64`] with their unit (`"s"`, `"ms"`, `"us"` or
/// `"ns"` as Parquet stores them; other NumPy units are converted when
/// written, see [`Frame::write`](crate::Frame::write)). A datetime
/// column's time zone is kept beside it ([`Column::timezone`]). Missing entries are marked by the
/// column's validity mask (see [`Column::validity`]); the value stored in a
/// missing slot is NaN for floats, [`NAT`] for datetimes and timedeltas, and
/// zero or empty otherwise.
///
/// ```
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Categorical, Values};
///
/// let plain = Values::strings(["low", "high", "low"]);
/// assert!(plain.as_array().is_some());
/// // The same labels as a categorical: codes into two categories.
/// let codes = AnyArray::I8(ndarray::arr1(&[0, 1, 0]).into_dyn());
/// let cats = Values::strings(["low", "high"]).as_array().unwrap().clone();
/// let cat = Values::Categorical(Categorical::new(codes, cats, false)?);
/// assert_eq!((cat.len(), cat.as_array().is_none()), (3, true));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Values {
    /// A 1-D array.
    Array(AnyArray),
    /// A pandas categorical: integer codes into a list of categories.
    Categorical(Categorical),
}

/// A pandas `Categorical`: `codes[i]` indexes `categories`, −1 marks a missing
/// value.
///
/// ```
/// use ndarray::array;
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Categorical, Column, Frame};
///
/// // Codes must index the categories: 2 is out of range for two of them.
/// let cats = AnyArray::Str(array!["a".to_string(), "b".to_string()].into_dyn());
/// let bad = AnyArray::I8(array![0i8, 2].into_dyn());
/// assert!(Categorical::new(bad, cats.clone(), false).is_err());
///
/// let c = Categorical::new(AnyArray::I8(array![1i8, -1].into_dyn()), cats, false)?;
/// assert_eq!(c.num_categories(), 2);
/// let f = Frame::new(vec![Column::new("c", c)])?;
/// assert!(!f.column("c").unwrap().is_valid(1)); // code -1: missing
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Categorical {
    /// A 1-D array of a signed integer type (pandas uses the smallest that
    /// fits: `int8` for up to 127 categories).
    pub codes: AnyArray,
    /// The categories, in order: a 1-D array (strings, bytes, numbers, ...).
    pub categories: AnyArray,
    /// Whether the order of the categories is meaningful (`ordered=True`).
    pub ordered: bool,
}

impl Categorical {
    /// A categorical from codes (−1 for missing) and categories, checked.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::Categorical;
    ///
    /// let c = Categorical::new(
    ///     AnyArray::I8(array![0i8, -1, 1].into_dyn()),
    ///     AnyArray::Str(array!["low".to_string(), "high".to_string()].into_dyn()),
    ///     true,
    /// )?;
    /// assert_eq!(c.codes_i64()?, vec![0, -1, 1]);
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn new(codes: AnyArray, categories: AnyArray, ordered: bool) -> Result<Self> {
        let c = Categorical {
            codes,
            categories,
            ordered,
        };
        c.check()?;
        Ok(c)
    }

    /// The codes widened to `i64`, or an error if they are not a 1-D
    /// signed integer array.
    ///
    /// ```
    /// # use ndnpy::AnyArray;
    /// # use ndnpy_parquet::Categorical;
    /// // Whatever width pandas chose for the codes.
    /// let codes = AnyArray::I16(ndarray::arr1(&[1i16, -1]).into_dyn());
    /// let cats = AnyArray::U8(ndarray::arr1(&[10u8, 20]).into_dyn());
    /// assert_eq!(Categorical::new(codes, cats, false)?.codes_i64()?, vec![1, -1]);
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn codes_i64(&self) -> Result<Vec<i64>> {
        signed_codes(&self.codes)
    }

    /// The number of categories.
    ///
    /// ```
    /// # use ndnpy::AnyArray;
    /// # use ndnpy_parquet::Categorical;
    /// // Categories need not all be used.
    /// let codes = AnyArray::I8(ndarray::arr1(&[0i8, 0]).into_dyn());
    /// let cats = AnyArray::F64(ndarray::arr1(&[0.5, 1.5, 2.5]).into_dyn());
    /// assert_eq!(Categorical::new(codes, cats, true)?.num_categories(), 3);
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn num_categories(&self) -> usize {
        self.categories.shape().iter().product()
    }

    pub(crate) fn check(&self) -> Result<()> {
        if self.categories.shape().len() != 1 {
            return Err(Error::Invalid(format!(
                "categories of shape {:?}; they must be 1-D",
                self.categories.shape()
            )));
        }
        let k = self.num_categories() as i64;
        for c in self.codes_i64()? {
            if c < -1 || c >= k {
                return Err(Error::Invalid(format!(
                    "categorical code {c} is out of range for {k} categories"
                )));
            }
        }
        Ok(())
    }
}

impl Values {
    /// The number of entries.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::Values;
    /// let v = Values::Array(AnyArray::Str(array!["a".to_string(), "b".to_string()].into_dyn()));
    /// assert_eq!(v.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        match self {
            Values::Array(a) => a.shape().iter().product(),
            Values::Categorical(c) => c.codes.shape().iter().product(),
        }
    }

    /// Whether there are no entries.
    ///
    /// ```
    /// use ndnpy_parquet::Values;
    /// assert!(Values::strings(Vec::<String>::new()).is_empty());
    /// assert!(!Values::strings(["a"]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The array, unless the values are categorical.
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::Values;
    /// let v = Values::bytes([b"ab".to_vec()]);
    /// assert!(matches!(v.as_array(), Some(AnyArray::Bytes(_))));
    /// ```
    pub fn as_array(&self) -> Option<&AnyArray> {
        match self {
            Values::Array(a) => Some(a),
            Values::Categorical(_) => None,
        }
    }

    /// Strings (`<U`), from anything that gives `String`s.
    ///
    /// ```
    /// use ndnpy_parquet::Values;
    /// assert_eq!(Values::strings(["a", "b"]).len(), 2);
    /// ```
    pub fn strings<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Self {
        let v: Vec<String> = items.into_iter().map(Into::into).collect();
        Values::Array(AnyArray::Str(ndarray::Array1::from(v).into_dyn()))
    }

    /// Byte strings (`|S`).
    ///
    /// ```
    /// use ndnpy_parquet::Values;
    /// let v = Values::bytes([&b"\x00\x01"[..], b"xyz"]);
    /// // The width is the longest value's, as NumPy's `|S` dtype has it.
    /// assert_eq!(v.as_array().unwrap().dtype().to_string(), "|S3");
    /// ```
    pub fn bytes<B: Into<Vec<u8>>>(items: impl IntoIterator<Item = B>) -> Self {
        let v: Vec<Vec<u8>> = items.into_iter().map(Into::into).collect();
        Values::Array(AnyArray::Bytes(ndarray::Array1::from(v).into_dyn()))
    }

    /// Datetimes (`<M8[unit]`): counts of `unit` since 1970-01-01T00:00 UTC,
    /// [`NAT`] when missing.
    ///
    /// ```
    /// use ndnpy_parquet::{TimeUnit, Values, NAT};
    /// let t = Values::datetime64(vec![0, NAT], TimeUnit::Microsecond);
    /// assert_eq!(t.as_array().unwrap().dtype().to_string(), "<M8[us]");
    /// ```
    pub fn datetime64(values: Vec<i64>, unit: TimeUnit) -> Self {
        Values::Array(AnyArray::Datetime64 {
            array: ndarray::Array1::from(values).into_dyn(),
            unit: Some(unit.as_str().to_owned()),
        })
    }

    /// Durations (`<m8[unit]`): counts of `unit`, [`NAT`] when missing.
    ///
    /// ```
    /// use ndnpy_parquet::{TimeUnit, Values, NAT};
    /// let d = Values::timedelta64(vec![1_500, NAT], TimeUnit::Millisecond);
    /// assert_eq!(d.as_array().unwrap().dtype().to_string(), "<m8[ms]");
    /// ```
    pub fn timedelta64(values: Vec<i64>, unit: TimeUnit) -> Self {
        Values::Array(AnyArray::Timedelta64 {
            array: ndarray::Array1::from(values).into_dyn(),
            unit: Some(unit.as_str().to_owned()),
        })
    }
}

/// One named column: its values, an optional validity mask, and the pandas
/// dtype it came from or will be written as.
///
/// ```
/// use ndarray::array;
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Column, Values};
///
/// // A pandas `Int64` (nullable) column [1, <NA>, 3].
/// let c = Column::new("n", AnyArray::I64(array![1i64, 0, 3].into_dyn()))
///     .with_validity(vec![true, false, true])?
///     .with_pandas_dtype("Int64");
/// assert_eq!(c.len(), 3);
/// assert!(!c.is_valid(1));
/// assert_eq!(c.numpy_type(), "Int64");
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    name: Option<String>,
    values: Values,
    validity: Option<Vec<bool>>,
    tz: Option<String>,
    pandas_dtype: Option<String>,
    pub(crate) meta: Option<ColumnMeta>,
}

impl Column {
    /// A column without missing values, from an [`AnyArray`] or a
    /// [`Categorical`] (or [`Values`]).
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::Column;
    /// let c = Column::new("price", AnyArray::F64(ndarray::arr1(&[9.5, 10.0]).into_dyn()));
    /// assert_eq!((c.name(), c.len(), c.validity()), (Some("price"), 2, None));
    /// ```
    pub fn new(name: impl Into<String>, values: impl Into<Values>) -> Self {
        Column {
            name: Some(name.into()),
            values: values.into(),
            validity: None,
            tz: None,
            pandas_dtype: None,
            meta: None,
        }
    }

    /// An unnamed column (for unnamed index levels).
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::{Column, Frame, Index};
    /// // An index level without a name, as `df.set_index(pd.Index([...]))` makes.
    /// let level = Column::unnamed(AnyArray::I64(ndarray::arr1(&[5, 6]).into_dyn()));
    /// assert_eq!(level.name(), None);
    /// let x = Column::new("x", AnyArray::I8(ndarray::arr1(&[1, 2]).into_dyn()));
    /// let f = Frame::with_index(vec![x], Index::Columns(vec![level]))?;
    /// assert_eq!(f.index().levels().len(), 1);
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn unnamed(values: impl Into<Values>) -> Self {
        Column {
            name: None,
            values: values.into(),
            validity: None,
            tz: None,
            pandas_dtype: None,
            meta: None,
        }
    }

    pub(crate) fn from_parts(
        name: Option<String>,
        values: Values,
        validity: Option<Vec<bool>>,
        tz: Option<String>,
        meta: Option<ColumnMeta>,
    ) -> Self {
        Column {
            name,
            values,
            validity,
            tz,
            pandas_dtype: None,
            meta,
        }
    }

    /// Sets the time zone of a datetime column: its values stay instants
    /// counted from 1970-01-01T00:00 UTC, and pandas shows them in `tz` (an
    /// IANA name such as `"America/New_York"`, `"UTC"`, or a fixed offset
    /// such as `"+01:00"`). Other columns refuse a zone.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, TimeUnit, Values};
    /// let t = Column::new("t", Values::datetime64(vec![0], TimeUnit::Second))
    ///     .with_timezone("Europe/Paris")?;
    /// assert_eq!(t.timezone(), Some("Europe/Paris"));
    /// assert_eq!(t.pandas_type(), "datetimetz");
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn with_timezone(mut self, tz: impl Into<String>) -> Result<Self> {
        if !matches!(self.values, Values::Array(AnyArray::Datetime64 { .. })) {
            return Err(Error::Invalid(format!(
                "column {:?}: only datetime columns have a time zone",
                self.name
            )));
        }
        self.tz = Some(tz.into());
        self.meta = None;
        Ok(self)
    }

    /// The time zone of a datetime column (`None`: naive datetimes, or not a
    /// datetime column).
    ///
    /// ```
    /// use ndnpy_parquet::{Column, TimeUnit, Values};
    /// // Naive datetimes have no zone.
    /// let t = Column::new("t", Values::datetime64(vec![0], TimeUnit::Second));
    /// assert_eq!(t.timezone(), None);
    /// ```
    pub fn timezone(&self) -> Option<&str> {
        self.tz.as_deref()
    }

    /// Marks entries missing where `validity` is `false`.
    ///
    /// Categorical columns mark missing entries with the code −1 instead and
    /// refuse a mask.
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::Column;
    /// let x = Column::new("x", AnyArray::I32(ndarray::arr1(&[1, 0, 3]).into_dyn()));
    /// let x = x.with_validity(vec![true, false, true])?;
    /// assert!(!x.is_valid(1));
    /// // The mask must have one entry per value.
    /// assert!(x.clone().with_validity(vec![true]).is_err());
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn with_validity(mut self, validity: Vec<bool>) -> Result<Self> {
        if validity.len() != self.values.len() {
            return Err(Error::Invalid(format!(
                "validity mask of {} entries for a column of {}",
                validity.len(),
                self.values.len()
            )));
        }
        if matches!(self.values, Values::Categorical(_)) {
            return Err(Error::Invalid(
                "categorical columns mark missing values with code -1, not a mask".into(),
            ));
        }
        self.validity = if validity.iter().all(|&v| v) {
            None
        } else {
            Some(validity)
        };
        Ok(self)
    }

    /// Sets the pandas dtype written to the file's metadata (its
    /// `numpy_type`): e.g. `"Int64"`, `"boolean"` or `"Float64"` for pandas'
    /// nullable types, `"object"` for strings of object dtype. Without it the
    /// column gets the dtype pandas would give it by default.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Values};
    /// // Strings as pandas' `object` dtype rather than its default `str`.
    /// let s = Column::new("s", Values::strings(["a"])).with_pandas_dtype("object");
    /// assert_eq!(s.numpy_type(), "object");
    /// ```
    pub fn with_pandas_dtype(mut self, dtype: impl Into<String>) -> Self {
        self.pandas_dtype = Some(dtype.into());
        self.meta = None;
        self
    }

    /// The column's label (`None` for an unnamed index level).
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Values};
    /// assert_eq!(Column::new("city", Values::strings(["Oslo"])).name(), Some("city"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The values.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Values};
    /// let c = Column::new("s", Values::strings(["a", "b"]));
    /// assert_eq!(c.values(), &Values::strings(["a", "b"]));
    /// ```
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// The name, the values and the validity mask (read a datetime
    /// column's [`Column::timezone`] first).
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::Column;
    /// let c = Column::new("x", AnyArray::U8(ndarray::arr1(&[1, 0]).into_dyn()))
    ///     .with_validity(vec![true, false])?;
    /// let (name, values, validity) = c.into_parts();
    /// assert_eq!((name.as_deref(), values.len(), validity), (Some("x"), 2, Some(vec![true, false])));
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn into_parts(self) -> (Option<String>, Values, Option<Vec<bool>>) {
        (self.name, self.values, self.validity)
    }

    /// The validity mask: `None` when no entry is missing (categoricals use
    /// the code −1 instead).
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::Column;
    /// let c = Column::new("x", AnyArray::F32(ndarray::arr1(&[1.0, f32::NAN]).into_dyn()));
    /// assert_eq!(c.validity(), None); // NaN is a value, not a missing entry
    /// let c = c.with_validity(vec![true, false])?;
    /// assert_eq!(c.validity(), Some(&[true, false][..]));
    /// // An all-true mask is no mask.
    /// let c = c.with_validity(vec![true, true])?;
    /// assert_eq!(c.validity(), None);
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn validity(&self) -> Option<&[bool]> {
        self.validity.as_deref()
    }

    /// Whether entry `i` is present.
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::{Categorical, Column};
    /// // A categorical's missing entries are its −1 codes.
    /// let codes = AnyArray::I8(ndarray::arr1(&[-1i8, 0]).into_dyn());
    /// let cats = AnyArray::Str(ndarray::arr1(&["a".to_string()]).into_dyn());
    /// let c = Column::new("c", Categorical::new(codes, cats, false)?);
    /// assert!(!c.is_valid(0) && c.is_valid(1));
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn is_valid(&self, i: usize) -> bool {
        if let Values::Categorical(c) = &self.values {
            return match &c.codes {
                AnyArray::I8(a) => a[[i]] >= 0,
                AnyArray::I16(a) => a[[i]] >= 0,
                AnyArray::I32(a) => a[[i]] >= 0,
                AnyArray::I64(a) => a[[i]] >= 0,
                _ => false,
            };
        }
        self.validity.as_ref().is_none_or(|v| v[i])
    }

    /// The number of entries.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Values};
    /// assert_eq!(Column::new("s", Values::strings(["a", "b", "c"])).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the column is empty.
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::Column;
    /// assert!(Column::new("x", AnyArray::F64(ndarray::Array1::zeros(0).into_dyn())).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pandas logical type recorded in the file (`pandas_type`: `int64`,
    /// `datetimetz`, `categorical`, ...).
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::{Categorical, Column};
    /// assert_eq!(Column::new("x", AnyArray::I64(ndarray::arr1(&[1]).into_dyn())).pandas_type(), "int64");
    /// let codes = AnyArray::I8(ndarray::arr1(&[0i8]).into_dyn());
    /// let cats = AnyArray::Str(ndarray::arr1(&["a".to_string()]).into_dyn());
    /// let c = Column::new("c", Categorical::new(codes, cats, false)?);
    /// assert_eq!(c.pandas_type(), "categorical");
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn pandas_type(&self) -> String {
        match &self.meta {
            Some(m) => m.pandas_type.clone(),
            None => crate::model::meta::default_types(self).0,
        }
    }

    /// The pandas dtype recorded in the file (`numpy_type`: `int64`, `Int64`,
    /// `str`, `datetime64[us]`, the codes' type for a categorical, ...).
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::Column;
    /// let n = Column::new("n", AnyArray::U16(ndarray::arr1(&[1]).into_dyn()));
    /// assert_eq!(n.numpy_type(), "uint16");
    /// // pandas' nullable integer, when asked for.
    /// assert_eq!(n.with_pandas_dtype("UInt16").numpy_type(), "UInt16");
    /// ```
    pub fn numpy_type(&self) -> String {
        match &self.meta {
            Some(m) => m.numpy_type.clone(),
            None => crate::model::meta::default_types(self).1,
        }
    }

    pub(crate) fn pandas_dtype(&self) -> Option<&str> {
        self.pandas_dtype.as_deref()
    }

    pub(crate) fn rename(&mut self, name: Option<String>) {
        self.name = name;
    }

    pub(crate) fn check(&self) -> Result<()> {
        let n = self.values.len();
        if let Values::Array(a) = &self.values {
            if a.shape().len() != 1 {
                return Err(Error::Invalid(format!(
                    "column {:?} has shape {:?}; columns are 1-D",
                    self.name,
                    a.shape()
                )));
            }
            if matches!(
                a,
                AnyArray::Record(_) | AnyArray::Void(_) | AnyArray::Object(_)
            ) || matches!(a.dtype(), ndnpy::DType::Scalar(s) if s.kind == ndnpy::Kind::Complex)
            {
                return Err(Error::Unsupported {
                    column: self.name.clone().unwrap_or_default(),
                    reason: format!("{} arrays have no Parquet column type", a.dtype()),
                });
            }
        }
        if self.tz.is_some() && !matches!(self.values, Values::Array(AnyArray::Datetime64 { .. })) {
            return Err(Error::Invalid(format!(
                "column {:?}: only datetime columns have a time zone",
                self.name
            )));
        }
        if let Values::Categorical(c) = &self.values {
            c.check()?;
        }
        if let Some(v) = &self.validity {
            if v.len() != n {
                return Err(Error::Invalid(format!(
                    "column {:?}: mask of {} for {} values",
                    self.name,
                    v.len(),
                    n
                )));
            }
        }
        Ok(())
    }
}

impl From<AnyArray> for Values {
    fn from(a: AnyArray) -> Self {
        Values::Array(a)
    }
}

impl From<Categorical> for Values {
    fn from(c: Categorical) -> Self {
        Values::Categorical(c)
    }
}

pub(crate) fn signed_codes(codes: &AnyArray) -> Result<Vec<i64>> {
    if codes.shape().len() != 1 {
        return Err(Error::Invalid("categorical codes must be 1-D".into()));
    }
    Ok(match codes {
        AnyArray::I8(a) => a.iter().map(|&c| c as i64).collect(),
        AnyArray::I16(a) => a.iter().map(|&c| c as i64).collect(),
        AnyArray::I32(a) => a.iter().map(|&c| c as i64).collect(),
        AnyArray::I64(a) => a.iter().copied().collect(),
        other => {
            return Err(Error::Invalid(format!(
                "categorical codes must be signed integers, not {}",
                other.dtype()
            )))
        }
    })
}

/// Codes in the smallest signed type that holds `k` categories, as pandas.
pub(crate) fn narrow_codes(codes: Vec<i64>, k: usize) -> AnyArray {
    if k <= i8::MAX as usize {
        AnyArray::I8(Array1::from_iter(codes.iter().map(|&c| c as i8)).into_dyn())
    } else if k <= i16::MAX as usize {
        AnyArray::I16(Array1::from_iter(codes.iter().map(|&c| c as i16)).into_dyn())
    } else if k <= i32::MAX as usize {
        AnyArray::I32(Array1::from_iter(codes.iter().map(|&c| c as i32)).into_dyn())
    } else {
        AnyArray::I64(Array1::from(codes).into_dyn())
    }
}
