//! Between frames and named `ndnpy` arrays: the `.npz` mapping.
//!
//! # The `.npz` mapping
//! [`to_arrays`] turns a [`Frame`] into named [`AnyArray`]s, one `.npz`
//! member each, and [`from_arrays`] turns them back:
//! - a data column `NAME` is the member `NAME`, of the column's NumPy dtype:
//!   numbers and bools as they are, strings `<U` (the longest string's
//!   width), bytes `|S`, datetimes `<M8[unit]` and timedeltas `<m8[unit]`
//!   (`NaT` where missing);
//! - a datetime column with a time zone has `NAME.tz` beside it (a 0-d `<U`
//!   string such as `'America/New_York'`); the datetimes themselves are UTC
//!   instants, as NumPy's datetimes are;
//! - a categorical is `NAME.codes` (signed integers, −1 for missing) plus
//!   `NAME.categories` (1-D, any of the types above), and `NAME.ordered` (a
//!   0-d bool `True`) when ordered;
//! - a column with missing values has `NAME.valid` (bool, `False` where
//!   missing) beside it; the missing slots hold NaN, 0 or "". Datetimes and
//!   timedeltas need no `.valid`: `NaT` marks their missing values (a
//!   `.valid` member is written only when the mask says more than the
//!   `NaT`s do);
//! - index levels are `__index__.NAME` (`__index__.__level_N__` when
//!   unnamed), in level order, after the data columns;
//! - a RangeIndex other than the default `0..len` is the int64 member
//!   `__range_index__` (`[start, stop, step]`), `__range_index__.NAME` when
//!   named.
//!
//! What `.npz` cannot carry: the pandas dtype of a column beyond its NumPy
//! dtype (`Int64` vs `int64` with a mask, `str` vs `object` strings),
//! `df.attrs`, and, as NumPy strips them, trailing NUL characters of
//! strings and bytes. An `.npz` → Parquet → `.npz` round trip gives the
//! same arrays, with these exceptions where Parquet or pandas lack the type
//! (see the crate documentation): datetime and timedelta units Parquet does
//! not have (`datetime64[s]` and `[D]` become `[ms]`, `timedelta64[D]`
//! becomes `[s]`), categoricals whose categories are not strings or bytes
//! (renumbered in order of appearance), and empty categoricals (their
//! categories are lost).

use crate::error::{Error, Result};
use crate::model::column::Column;
use crate::model::frame::{Frame, Index, RangeIndex};
use crate::model::values::{Categorical, Values};
use ndarray::{arr0, Array1};
use ndnpy::AnyArray;
use std::path::Path;

/// The prefix of index members.
pub const INDEX_PREFIX: &str = "__index__.";
/// The member name of a non-default RangeIndex.
pub const RANGE_MEMBER: &str = "__range_index__";

fn push_column(out: &mut Vec<(String, AnyArray)>, name: String, column: &Column) {
    match column.values() {
        Values::Categorical(c) => {
            out.push((format!("{name}.codes"), c.codes.clone()));
            out.push((format!("{name}.categories"), c.categories.clone()));
            if c.ordered {
                out.push((
                    format!("{name}.ordered"),
                    AnyArray::Bool(arr0(true).into_dyn()),
                ));
            }
        }
        Values::Array(a) => {
            out.push((name.clone(), a.clone()));
            if let Some(tz) = column.timezone() {
                out.push((
                    format!("{name}.tz"),
                    AnyArray::Str(arr0(tz.to_owned()).into_dyn()),
                ));
            }
            if let Some(valid) = column.validity() {
                if nat_mask(a).as_deref() != Some(valid) {
                    out.push((
                        format!("{name}.valid"),
                        AnyArray::Bool(Array1::from(valid.to_vec()).into_dyn()),
                    ));
                }
            }
        }
    }
}

/// For a datetime or timedelta array, `false` where it holds NaT: the
/// validity NumPy users read from the values themselves.
fn nat_mask(a: &AnyArray) -> Option<Vec<bool>> {
    match a {
        AnyArray::Datetime64 { array, .. } | AnyArray::Timedelta64 { array, .. } => Some(
            array
                .iter()
                .map(|&v| v != crate::model::time::NAT)
                .collect(),
        ),
        _ => None,
    }
}

/// A frame as named NumPy arrays (the mapping of the module documentation).
///
/// ```
/// use ndarray::array;
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::convert::{from_arrays, to_arrays};
/// use ndnpy_parquet::{Column, Frame, TimeUnit, Values};
///
/// let f = Frame::new(vec![
///     Column::new("x", AnyArray::I32(array![1, 2].into_dyn())),
///     Column::new("t", Values::datetime64(vec![0, 60], TimeUnit::Second)).with_timezone("UTC")?,
/// ])?;
/// let arrays = to_arrays(&f)?;
/// let names: Vec<&str> = arrays.iter().map(|(n, _)| n.as_str()).collect();
/// assert_eq!(names, ["x", "t", "t.tz"]);
/// assert_eq!(arrays[1].1.dtype().to_string(), "<M8[s]");
/// assert_eq!(from_arrays(arrays)?, f);
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
pub fn to_arrays(frame: &Frame) -> Result<Vec<(String, AnyArray)>> {
    let mut out = Vec::new();
    for c in frame.columns() {
        push_column(&mut out, c.name().unwrap_or_default().to_owned(), c);
    }
    match frame.index() {
        Index::Range(r) => {
            if *r != RangeIndex::default_for(frame.len()) {
                let name = match &r.name {
                    Some(n) => format!("{RANGE_MEMBER}.{n}"),
                    None => RANGE_MEMBER.to_owned(),
                };
                let a = Array1::from(vec![r.start, r.stop, r.step]).into_dyn();
                out.push((name, AnyArray::I64(a)));
            }
        }
        Index::Columns(levels) => {
            for (i, level) in levels.iter().enumerate() {
                let name = match level.name() {
                    Some(n) => format!("{INDEX_PREFIX}{n}"),
                    None => format!("{INDEX_PREFIX}__level_{i}__"),
                };
                push_column(&mut out, name, level);
            }
        }
    }
    Ok(out)
}

/// A frame from named NumPy arrays (the inverse of [`to_arrays`]).
///
/// ```
/// use ndarray::array;
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::convert::from_arrays;
///
/// // `x.valid` is not a column of its own: it is `x`'s mask.
/// let f = from_arrays(vec![
///     ("x".to_string(), AnyArray::F64(array![1.0, f64::NAN].into_dyn())),
///     ("x.valid".to_string(), AnyArray::Bool(array![true, false].into_dyn())),
/// ])?;
/// assert_eq!(f.columns().len(), 1);
/// assert_eq!(f.column("x").unwrap().validity(), Some(&[true, false][..]));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
pub fn from_arrays(arrays: Vec<(String, AnyArray)>) -> Result<Frame> {
    let names: Vec<String> = arrays.iter().map(|(n, _)| n.clone()).collect();
    let has = |n: &str| names.iter().any(|m| m == n);
    let mut slots: Vec<Option<AnyArray>> = arrays.into_iter().map(|(_, a)| Some(a)).collect();
    let mut take = |n: &str| -> Option<AnyArray> {
        let i = names.iter().position(|m| m == n)?;
        slots[i].take()
    };
    let mut columns = Vec::new();
    let mut levels = Vec::new();
    let mut range = None;
    for name in &names {
        if let Some(rest) = name.strip_prefix(RANGE_MEMBER) {
            if rest.is_empty() || rest.starts_with('.') {
                let Some(AnyArray::I64(a)) = take(name) else {
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
            let companion = [".categories", ".ordered", ".valid", ".tz"]
                .iter()
                .any(|s| {
                    name.strip_suffix(s)
                        .is_some_and(|b| has(b) || has(&format!("{b}.codes")))
                });
            if companion {
                continue;
            }
        }
        let values = if categorical {
            let Some(codes) = take(name) else {
                return Err(Error::Invalid(format!("{name} must be integers")));
            };
            let categories = take(&format!("{base}.categories"))
                .ok_or_else(|| Error::Invalid(format!("{base}.categories is missing")))?;
            let ordered = match take(&format!("{base}.ordered")) {
                Some(AnyArray::Bool(b)) => b.iter().all(|&x| x),
                _ => false,
            };
            Values::Categorical(Categorical::new(codes, categories, ordered)?)
        } else {
            let Some(a) = take(name) else { continue };
            if a.shape().len() != 1 {
                return Err(Error::Invalid(format!(
                    "{name} has shape {:?}; columns are 1-D",
                    a.shape()
                )));
            }
            Values::Array(a)
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
            let AnyArray::Bool(v) = valid else {
                return Err(Error::Invalid(format!("{base}.valid must be bool")));
            };
            column = column.with_validity(v.iter().copied().collect())?;
        } else if let Some(mask) = column.values().as_array().and_then(nat_mask) {
            column = column.with_validity(mask)?;
        }
        if let Some(tz) = take(&format!("{base}.tz")) {
            let zone = match &tz {
                AnyArray::Str(t) if t.len() == 1 => t.iter().next().cloned(),
                _ => None,
            };
            let Some(zone) = zone else {
                return Err(Error::Invalid(format!("{base}.tz must be one string")));
            };
            column = column.with_timezone(zone)?;
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

/// Writes a frame as `.npz`, members stored (see the module documentation
/// for the mapping).
///
/// ```
/// use ndnpy_parquet::convert::{read_npz, write_npz};
/// use ndnpy_parquet::{Column, Frame, Values};
///
/// let f = Frame::new(vec![Column::new("s", Values::strings(["a", "bc"]))])?;
/// let dir = tempfile::tempdir()?;
/// write_npz(&f, dir.path().join("f.npz"))?;
/// let member = ndnpy::NpzReader::open(dir.path().join("f.npz"))?.read_any("s")?;
/// assert_eq!(member.dtype().to_string(), "<U2");
/// assert_eq!(read_npz(dir.path().join("f.npz"))?, f);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_npz<P: AsRef<Path>>(frame: &Frame, path: P) -> Result<()> {
    write_npz_with(frame, path, false)
}

/// [`write_npz`], with the members deflated when `compressed` (as
/// `np.savez_compressed`).
///
/// ```
/// use ndnpy_parquet::convert::{read_npz, write_npz_with};
/// use ndnpy_parquet::{Column, Frame, Values};
///
/// let f = Frame::new(vec![Column::new("s", Values::strings(["x"; 1000]))])?;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.npz");
/// write_npz_with(&f, &path, true)?;
/// // 1000 repeated strings deflate to far less than their 4000 bytes.
/// assert!(std::fs::metadata(&path)?.len() < 1000);
/// assert_eq!(read_npz(&path)?, f);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_npz_with<P: AsRef<Path>>(frame: &Frame, path: P, compressed: bool) -> Result<()> {
    let arrays = to_arrays(frame)?;
    let mut w = if compressed {
        ndnpy::NpzWriter::create(path)?.codec(ndnpy::npz::Codec::deflate())
    } else {
        ndnpy::NpzWriter::create(path)?
    };
    for (name, a) in &arrays {
        w.add_any(name, a)?;
    }
    w.finish()?;
    Ok(())
}

/// Reads a frame from `.npz` (see the module documentation for the mapping).
///
/// Every member is held until the frame is built, so the values that
/// occupy no bytes of the data (`<U0`, `|S0` ...) are limited across the
/// archive, not only per member: more than
/// [`ndnpy::ReadOptions::max_zero_size_elements`]' default (2²⁰) in all
/// is [`ndnpy::error::LimitError::ZeroSizeLimit`], found from the members' headers
/// before any member is read.
///
/// ```
/// use ndarray::array;
/// use ndnpy_parquet::convert::read_npz;
///
/// // An archive as NumPy users write it: a column and its mask.
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.npz");
/// let mut w = ndnpy::NpzWriter::new(std::fs::File::create(&path)?);
/// w.add("n", &array![10i64, 0, 30])?;
/// w.add("n.valid", &array![true, false, true])?;
/// w.finish()?;
/// let f = read_npz(&path)?;
/// assert_eq!(f.len(), 3);
/// assert!(!f.column("n").unwrap().is_valid(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_npz<P: AsRef<Path>>(path: P) -> Result<Frame> {
    let options = ndnpy::ReadOptions::default();
    let mut r = ndnpy::NpzReader::open_with(path, &options)?;
    let names = r.names();
    check_zero_size_total(&mut r, &names, options.get_max_zero_size_elements())?;
    let mut arrays = Vec::new();
    for name in names {
        let a = r.read_any(&name)?;
        arrays.push((name, a));
    }
    from_arrays(arrays)
}

/// Refuses an archive whose members `names` together declare more than
/// `max` values that occupy no bytes of the data
/// ([`ndnpy::dtype::Header::zero_size_count`]), for readers that hold every
/// member at once: ndnpy holds each header to the limit, but a few KiB of
/// deflated members, each just within it, would otherwise make gigabytes
/// of empty strings. Reads headers only. A member whose header cannot be
/// read is passed over here: reading it reports the problem.
pub(crate) fn check_zero_size_total<R: std::io::Read + std::io::Seek>(
    r: &mut ndnpy::NpzReader<R>,
    names: &[String],
    max: u64,
) -> Result<()> {
    let mut claimed: u64 = 0;
    for name in names {
        if let Ok(header) = r.header(name) {
            claimed = claimed.saturating_add(header.zero_size_count());
        }
    }
    if claimed > max {
        return Err(
            ndnpy::Error::Limit(ndnpy::error::LimitError::ZeroSizeLimit { claimed, max }).into(),
        );
    }
    Ok(())
}
