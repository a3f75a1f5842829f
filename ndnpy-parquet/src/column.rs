//! [`Column`]: one named, 1-D column of a frame, with its pandas type.

use crate::error::{Error, Result};
use crate::meta::ColumnMeta;
use ndnpy::AnyArray;

/// The resolution of a datetime or timedelta column, as NumPy spells it
/// (`datetime64[s]`, `[ms]`, `[us]`, `[ns]`: the units Parquet and pandas share).
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

/// NumPy's value for a missing datetime or timedelta (`NaT`).
pub const NAT: i64 = i64::MIN;

/// The data of a column.
///
/// Numbers and bools are [`AnyArray`]s. Strings, bytes, datetimes and
/// timedeltas are carried by small types of this crate until `ndnpy`'s
/// `AnyArray` has variants for them; [`crate::convert`] is the one place that
/// maps between the two. Missing entries are marked by the column's validity
/// mask (see [`Column::validity`]); the value stored in a missing slot is
/// NaN for floats, [`NAT`] for datetimes and timedeltas, and zero or empty
/// otherwise.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Values {
    /// A 1-D array of numbers or bools.
    Array(AnyArray),
    /// UTF-8 strings.
    Str(Vec<String>),
    /// Byte strings.
    Bytes(Vec<Vec<u8>>),
    /// Instants as counts of `unit` since 1970-01-01T00:00 UTC; `tz` is the
    /// time zone pandas shows them in (`None`: a naive datetime).
    Datetime {
        /// Counts of `unit` since the epoch, [`NAT`] when missing.
        values: Vec<i64>,
        /// The resolution.
        unit: TimeUnit,
        /// An IANA zone name such as `"America/New_York"`, `"UTC"`, or a
        /// fixed offset such as `"+01:00"`.
        tz: Option<String>,
    },
    /// Durations as counts of `unit`.
    Timedelta {
        /// Counts of `unit`, [`NAT`] when missing.
        values: Vec<i64>,
        /// The resolution.
        unit: TimeUnit,
    },
    /// A pandas categorical: integer codes into a list of categories.
    Categorical(Categorical),
}

/// A pandas `Categorical`: `codes[i]` indexes `categories`, −1 marks a missing
/// value.
#[derive(Debug, Clone, PartialEq)]
pub struct Categorical {
    /// A 1-D array of a signed integer type (pandas uses the smallest that
    /// fits: `int8` for up to 127 categories).
    pub codes: AnyArray,
    /// The categories, in order; never categorical themselves.
    pub categories: Box<Values>,
    /// Whether the order of the categories is meaningful (`ordered=True`).
    pub ordered: bool,
}

impl Categorical {
    /// A categorical from codes (−1 for missing) and categories, checked.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::{Categorical, Values};
    ///
    /// let c = Categorical::new(
    ///     AnyArray::I8(array![0i8, -1, 1].into_dyn()),
    ///     Values::Str(vec!["low".into(), "high".into()]),
    ///     true,
    /// )?;
    /// assert_eq!(c.codes_i64()?, vec![0, -1, 1]);
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn new(codes: AnyArray, categories: Values, ordered: bool) -> Result<Self> {
        let c = Categorical {
            codes,
            categories: Box::new(categories),
            ordered,
        };
        c.check()?;
        Ok(c)
    }

    /// The codes widened to `i64`, or an error if they are not a 1-D
    /// signed integer array.
    pub fn codes_i64(&self) -> Result<Vec<i64>> {
        crate::convert::signed_codes(&self.codes)
    }

    pub(crate) fn check(&self) -> Result<()> {
        if matches!(*self.categories, Values::Categorical(_)) {
            return Err(Error::Invalid("categories cannot be categorical".into()));
        }
        let k = self.categories.len() as i64;
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
    /// use ndnpy_parquet::Values;
    /// assert_eq!(Values::Str(vec!["a".into(), "b".into()]).len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        match self {
            Values::Array(a) => a.shape().iter().product(),
            Values::Str(v) => v.len(),
            Values::Bytes(v) => v.len(),
            Values::Datetime { values, .. } | Values::Timedelta { values, .. } => values.len(),
            Values::Categorical(c) => c.codes.shape().iter().product(),
        }
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
/// let c = Column::new("n", Values::Array(AnyArray::I64(array![1i64, 0, 3].into_dyn())))
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
    pandas_dtype: Option<String>,
    pub(crate) meta: Option<ColumnMeta>,
}

impl Column {
    /// A column without missing values.
    pub fn new(name: impl Into<String>, values: Values) -> Self {
        Column {
            name: Some(name.into()),
            values,
            validity: None,
            pandas_dtype: None,
            meta: None,
        }
    }

    /// An unnamed column (for unnamed index levels).
    pub fn unnamed(values: Values) -> Self {
        Column {
            name: None,
            values,
            validity: None,
            pandas_dtype: None,
            meta: None,
        }
    }

    pub(crate) fn from_parts(
        name: Option<String>,
        values: Values,
        validity: Option<Vec<bool>>,
        meta: Option<ColumnMeta>,
    ) -> Self {
        Column {
            name,
            values,
            validity,
            pandas_dtype: None,
            meta,
        }
    }

    /// Marks entries missing where `validity` is `false`.
    ///
    /// Categorical columns mark missing entries with the code −1 instead and
    /// refuse a mask.
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
    pub fn with_pandas_dtype(mut self, dtype: impl Into<String>) -> Self {
        self.pandas_dtype = Some(dtype.into());
        self.meta = None;
        self
    }

    /// The column's label (`None` for an unnamed index level).
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The values.
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// The values, the validity mask and the name.
    pub fn into_parts(self) -> (Option<String>, Values, Option<Vec<bool>>) {
        (self.name, self.values, self.validity)
    }

    /// The validity mask: `None` when no entry is missing (categoricals use
    /// the code −1 instead).
    pub fn validity(&self) -> Option<&[bool]> {
        self.validity.as_deref()
    }

    /// Whether entry `i` is present.
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
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the column is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pandas logical type recorded in the file (`pandas_type`: `int64`,
    /// `datetimetz`, `categorical`, ...).
    pub fn pandas_type(&self) -> String {
        match &self.meta {
            Some(m) => m.pandas_type.clone(),
            None => crate::meta::default_types(&self.values, self.pandas_dtype.as_deref()).0,
        }
    }

    /// The pandas dtype recorded in the file (`numpy_type`: `int64`, `Int64`,
    /// `str`, `datetime64[us]`, the codes' type for a categorical, ...).
    pub fn numpy_type(&self) -> String {
        match &self.meta {
            Some(m) => m.numpy_type.clone(),
            None => crate::meta::default_types(&self.values, self.pandas_dtype.as_deref()).1,
        }
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
            if matches!(a.dtype(), ndnpy::DType::Scalar(s) if s.kind == ndnpy::Kind::Complex) {
                return Err(Error::Unsupported {
                    column: self.name.clone().unwrap_or_default(),
                    reason: "complex numbers have no Parquet type".into(),
                });
            }
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
