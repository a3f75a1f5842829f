//! [`Values`]: a column's data, a 1-D array or a [`Categorical`].

use crate::error::{Error, Result};
use crate::model::time::TimeUnit;
use ndarray::Array1;
use ndnpy::AnyArray;

/// The data of a column: a 1-D [`AnyArray`] or a categorical.
///
/// An array column holds numbers, bools, [`AnyArray::Str`],
/// [`AnyArray::Bytes`], or [`AnyArray::Datetime64`] /
/// [`AnyArray::Timedelta64`] with their unit (`"s"`, `"ms"`, `"us"` or
/// `"ns"` as Parquet stores them; other NumPy units are converted when
/// written, see [`Frame::write`](crate::Frame::write)). A datetime
/// column's time zone is kept beside it ([`Column::timezone`](crate::Column::timezone)). Missing entries are marked by the
/// column's validity mask (see [`Column::validity`](crate::Column::validity)); the value stored in a
/// missing slot is NaN for floats, [`NAT`](crate::NAT) for datetimes and timedeltas, and
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
    /// [`NAT`](crate::NAT) when missing.
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

    /// Durations (`<m8[unit]`): counts of `unit`, [`NAT`](crate::NAT) when missing.
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
