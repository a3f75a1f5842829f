//! Between this crate's columns and `ndnpy` arrays: the one place that knows
//! which column types `ndnpy::AnyArray` can hold.
//!
//! Until `AnyArray` has variants for strings, bytes, datetimes and
//! timedeltas, [`NpArray`] stands in for them; when it has, `NpArray` becomes
//! `AnyArray` and only this module changes.
//!
//! # The `.npz` mapping
//! [`to_arrays`] turns a [`Frame`] into named arrays, one `.npz` member each,
//! and [`from_arrays`] turns them back:
//! - a data column `NAME` is the member `NAME`;
//! - a categorical is `NAME.codes` (signed integers, −1 for missing) plus
//!   `NAME.categories`, and `NAME.ordered` (a 0-d bool `True`) when ordered;
//! - a column with missing values has `NAME.valid` (bool, `False` where
//!   missing) beside it; the missing slots hold NaN, `NaT`, 0 or "";
//! - index levels are `__index__.NAME` (`__index__.__level_N__` when
//!   unnamed), in level order, after the data columns;
//! - a RangeIndex other than the default `0..len` is the int64 member
//!   `__range_index__` (`[start, stop, step]`), `__range_index__.NAME` when
//!   named.

use crate::column::{Categorical, Column, TimeUnit, Values};
use crate::error::{Error, Result};
use crate::frame::{Frame, Index, RangeIndex};
use ndarray::{arr0, Array1};
use ndnpy::AnyArray;
use std::path::Path;

/// An array as a NumPy user sees it: an [`AnyArray`], or one of the dtypes
/// `AnyArray` does not hold yet.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NpArray {
    /// Numbers and bools.
    Any(AnyArray),
    /// `<U..` strings.
    Str(Vec<String>),
    /// `|S..` byte strings.
    Bytes(Vec<Vec<u8>>),
    /// `<M8[unit]`.
    Datetime64 {
        /// Counts of `unit` since the epoch (UTC), `NaT` as `i64::MIN`.
        values: Vec<i64>,
        /// The resolution.
        unit: TimeUnit,
    },
    /// `<m8[unit]`.
    Timedelta64 {
        /// Counts of `unit`, `NaT` as `i64::MIN`.
        values: Vec<i64>,
        /// The resolution.
        unit: TimeUnit,
    },
}

/// The prefix of index members.
pub const INDEX_PREFIX: &str = "__index__.";
/// The member name of a non-default RangeIndex.
pub const RANGE_MEMBER: &str = "__range_index__";

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

/// The values of a non-categorical column as a NumPy array (the time zone
/// of a datetime is dropped: NumPy datetimes are UTC).
pub fn values_to_array(values: &Values) -> Result<NpArray> {
    Ok(match values {
        Values::Array(a) => NpArray::Any(a.clone()),
        Values::Str(v) => NpArray::Str(v.clone()),
        Values::Bytes(v) => NpArray::Bytes(v.clone()),
        Values::Datetime { values, unit, .. } => NpArray::Datetime64 {
            values: values.clone(),
            unit: *unit,
        },
        Values::Timedelta { values, unit } => NpArray::Timedelta64 {
            values: values.clone(),
            unit: *unit,
        },
        Values::Categorical(_) => {
            return Err(Error::Invalid(
                "a categorical is two arrays: use to_arrays".into(),
            ))
        }
    })
}

/// A column's values from a NumPy array.
pub fn array_to_values(array: NpArray) -> Result<Values> {
    Ok(match array {
        NpArray::Any(a) => {
            if a.shape().len() != 1 {
                return Err(Error::Invalid(format!(
                    "arrays of shape {:?} are not columns",
                    a.shape()
                )));
            }
            Values::Array(a)
        }
        NpArray::Str(v) => Values::Str(v),
        NpArray::Bytes(v) => Values::Bytes(v),
        NpArray::Datetime64 { values, unit } => Values::Datetime {
            values,
            unit,
            tz: None,
        },
        NpArray::Timedelta64 { values, unit } => Values::Timedelta { values, unit },
    })
}

fn push_column(out: &mut Vec<(String, NpArray)>, name: String, column: &Column) -> Result<()> {
    match column.values() {
        Values::Categorical(c) => {
            out.push((format!("{name}.codes"), NpArray::Any(c.codes.clone())));
            out.push((
                format!("{name}.categories"),
                values_to_array(&c.categories)?,
            ));
            if c.ordered {
                out.push((
                    format!("{name}.ordered"),
                    NpArray::Any(AnyArray::Bool(arr0(true).into_dyn())),
                ));
            }
        }
        v => {
            out.push((name.clone(), values_to_array(v)?));
            if let Some(valid) = column.validity() {
                out.push((
                    format!("{name}.valid"),
                    NpArray::Any(AnyArray::Bool(Array1::from(valid.to_vec()).into_dyn())),
                ));
            }
        }
    }
    Ok(())
}

/// A frame as named NumPy arrays (the mapping of the module documentation).
///
/// ```
/// use ndarray::array;
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::convert::{from_arrays, to_arrays};
/// use ndnpy_parquet::{Column, Frame, Values};
///
/// let f = Frame::new(vec![Column::new("x", Values::Array(AnyArray::I32(array![1, 2].into_dyn())))])?;
/// let arrays = to_arrays(&f)?;
/// assert_eq!(arrays[0].0, "x");
/// assert_eq!(from_arrays(arrays)?.column("x"), f.column("x"));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
pub fn to_arrays(frame: &Frame) -> Result<Vec<(String, NpArray)>> {
    let mut out = Vec::new();
    for c in frame.columns() {
        push_column(&mut out, c.name().unwrap_or_default().to_owned(), c)?;
    }
    match frame.index() {
        Index::Range(r) => {
            if *r != RangeIndex::default_for(frame.len()) {
                let name = match &r.name {
                    Some(n) => format!("{RANGE_MEMBER}.{n}"),
                    None => RANGE_MEMBER.to_owned(),
                };
                let a = Array1::from(vec![r.start, r.stop, r.step]).into_dyn();
                out.push((name, NpArray::Any(AnyArray::I64(a))));
            }
        }
        Index::Columns(levels) => {
            for (i, level) in levels.iter().enumerate() {
                let name = match level.name() {
                    Some(n) => format!("{INDEX_PREFIX}{n}"),
                    None => format!("{INDEX_PREFIX}__level_{i}__"),
                };
                push_column(&mut out, name, level)?;
            }
        }
    }
    Ok(out)
}

/// A frame from named NumPy arrays (the inverse of [`to_arrays`]).
pub fn from_arrays(arrays: Vec<(String, NpArray)>) -> Result<Frame> {
    let names: Vec<String> = arrays.iter().map(|(n, _)| n.clone()).collect();
    let has = |n: &str| names.iter().any(|m| m == n);
    let mut slots: Vec<Option<NpArray>> = arrays.into_iter().map(|(_, a)| Some(a)).collect();
    let mut take = |n: &str| -> Option<NpArray> {
        let i = names.iter().position(|m| m == n)?;
        slots[i].take()
    };
    let mut columns = Vec::new();
    let mut levels = Vec::new();
    let mut range = None;
    for name in &names {
        if let Some(rest) = name.strip_prefix(RANGE_MEMBER) {
            if rest.is_empty() || rest.starts_with('.') {
                let Some(NpArray::Any(AnyArray::I64(a))) = take(name) else {
                    return Err(Error::Invalid(format!("{name} must be 3 int64 values")));
                };
                let [start, stop, step] = a.as_slice().unwrap_or(&[]) else {
                    return Err(Error::Invalid(format!("{name} must be 3 int64 values")));
                };
                range = Some(RangeIndex {
                    start: *start,
                    stop: *stop,
                    step: *step,
                    name: rest.strip_prefix('.').map(str::to_owned),
                });
                continue;
            }
        }
        let (base, categorical) = match name.strip_suffix(".codes") {
            Some(b) if has(&format!("{b}.categories")) => (b, true),
            _ => (name.as_str(), false),
        };
        if !categorical {
            let companion = [".categories", ".ordered", ".valid"].iter().any(|s| {
                name.strip_suffix(s)
                    .is_some_and(|b| has(b) || has(&format!("{b}.codes")))
            });
            if companion {
                continue;
            }
        }
        let values = if categorical {
            let Some(NpArray::Any(codes)) = take(name) else {
                return Err(Error::Invalid(format!("{name} must be integers")));
            };
            let categories = take(&format!("{base}.categories"))
                .ok_or_else(|| Error::Invalid(format!("{base}.categories is missing")))?;
            let ordered = match take(&format!("{base}.ordered")) {
                Some(NpArray::Any(AnyArray::Bool(b))) => b.iter().all(|&x| x),
                _ => false,
            };
            Values::Categorical(Categorical::new(
                codes,
                array_to_values(categories)?,
                ordered,
            )?)
        } else {
            let Some(a) = take(name) else { continue };
            array_to_values(a)?
        };
        let (label, level) = match base.strip_prefix(INDEX_PREFIX) {
            Some(l) if l.starts_with("__level_") && l.ends_with("__") => (None, true),
            Some(l) => (Some(l.to_owned()), true),
            None => (Some(base.to_owned()), false),
        };
        let mut column = match &label {
            Some(l) => Column::new(l.clone(), values),
            None => Column::unnamed(values),
        };
        if let Some(valid) = take(&format!("{base}.valid")) {
            let NpArray::Any(AnyArray::Bool(v)) = valid else {
                return Err(Error::Invalid(format!("{base}.valid must be bool")));
            };
            column = column.with_validity(v.iter().copied().collect())?;
        }
        if level {
            levels.push(column);
        } else {
            columns.push(column);
        }
    }
    let index = match (range, levels.is_empty()) {
        (Some(r), true) => Index::Range(r),
        (None, false) => Index::Columns(levels),
        (None, true) => {
            let len = columns.first().map_or(0, Column::len);
            Index::Range(RangeIndex::default_for(len))
        }
        (Some(_), false) => {
            return Err(Error::Invalid("both a RangeIndex and index columns".into()))
        }
    };
    Frame::with_index(columns, index)
}

/// Writes a frame as `.npz` (see the module documentation for the mapping).
///
/// Only members `AnyArray` holds can be written today: a frame with string,
/// bytes, datetime or timedelta columns gives [`Error::Unsupported`] until
/// `ndnpy` gains those dtypes.
pub fn write_npz<P: AsRef<Path>>(frame: &Frame, path: P) -> Result<()> {
    let arrays = to_arrays(frame)?;
    let mut w = ndnpy::NpzWriter::create(path)?;
    for (name, a) in &arrays {
        match a {
            NpArray::Any(a) => w.add_any(name, a)?,
            _ => {
                return Err(Error::Unsupported {
                    column: name.clone(),
                    reason: "ndnpy cannot write string, bytes, datetime or timedelta arrays yet"
                        .into(),
                })
            }
        }
    }
    w.finish()?;
    Ok(())
}

/// Reads a frame from `.npz` (see the module documentation for the mapping).
pub fn read_npz<P: AsRef<Path>>(path: P) -> Result<Frame> {
    let mut r = ndnpy::NpzReader::open(path)?;
    let mut arrays = Vec::new();
    for name in r.names() {
        let a = r.read_any(&name)?;
        arrays.push((name, NpArray::Any(a)));
    }
    from_arrays(arrays)
}
