//! [`Column`]: one named, 1-D column of a frame, with its pandas type, and
//! what a column says of itself in the `pandas` key (its entry, and the
//! types pandas 3 would give it).

use crate::error::{Error, Result};
use crate::model::meta::{array_type_name, ColumnMeta};
use crate::model::time::parquet_unit;
use crate::model::values::Values;
use ndnpy::AnyArray;
use serde_json::{json, Value};

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
    /// [`Categorical`](crate::Categorical) (or [`Values`]).
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
            None => default_types(self).0,
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
            None => default_types(self).1,
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
            ) || matches!(a.dtype(), ndnpy::dtype::DType::Scalar(s) if s.kind == ndnpy::dtype::Kind::Complex)
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

/// `(pandas_type, numpy_type)` pandas 3 writes for `column` (whose pandas
/// dtype, e.g. `Int64`, may have been chosen by the user).
pub(crate) fn default_types(column: &Column) -> (String, String) {
    let dtype = column.pandas_dtype();
    let time = |unit: &Option<String>, datetime: bool| {
        parquet_unit(unit.as_deref(), datetime)
            .map(|(u, _)| u.as_str().to_owned())
            .or_else(|| unit.clone())
            .unwrap_or_default()
    };
    let (pt, nt) = match column.values() {
        Values::Array(AnyArray::Str(_)) => match dtype {
            Some("object") => ("unicode".to_owned(), "object".to_owned()),
            Some(d) => ("object".to_owned(), d.to_owned()),
            None => ("object".to_owned(), "str".to_owned()),
        },
        Values::Array(AnyArray::Bytes(_)) => ("bytes".to_owned(), "object".to_owned()),
        Values::Array(AnyArray::Datetime64 { unit, .. }) => (
            if column.timezone().is_some() {
                "datetimetz"
            } else {
                "datetime"
            }
            .to_owned(),
            format!("datetime64[{}]", time(unit, true)),
        ),
        Values::Array(AnyArray::Timedelta64 { unit, .. }) => (
            "object".to_owned(),
            format!("timedelta64[{}]", time(unit, false)),
        ),
        Values::Array(a) => {
            let name = array_type_name(a);
            (name.to_owned(), dtype.unwrap_or(name).to_owned())
        }
        Values::Categorical(c) => (
            "categorical".to_owned(),
            array_type_name(&c.codes).to_owned(),
        ),
    };
    (pt, nt)
}

/// The `metadata` value of a column entry.
fn column_metadata(column: &Column) -> Value {
    if let Some(tz) = column.timezone() {
        return json!({ "timezone": tz });
    }
    match column.values() {
        Values::Categorical(c) => json!({
            "num_categories": c.num_categories(),
            "ordered": c.ordered,
        }),
        _ => Value::Null,
    }
}

/// The entry for `column` stored under `field_name`.
pub(crate) fn column_entry(column: &Column, field_name: &str) -> Value {
    let (pandas_type, numpy_type, metadata) = match &column.meta {
        Some(m) => (
            m.pandas_type.clone(),
            m.numpy_type.clone(),
            m.metadata.clone(),
        ),
        None => (
            column.pandas_type(),
            column.numpy_type(),
            column_metadata(column),
        ),
    };
    json!({
        "name": column.name(),
        "field_name": field_name,
        "pandas_type": pandas_type,
        "numpy_type": numpy_type,
        "metadata": metadata,
    })
}
