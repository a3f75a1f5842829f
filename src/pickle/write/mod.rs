//! Pickling [`PyValue`] arrays as NumPy object arrays.
//!
//! The pickle is protocol 3 (NumPy 1.x and 2.x on any Python 3 load it),
//! names `numpy.core.multiarray._reconstruct` (importable without a warning
//! in NumPy 1.x and 2.x alike), uses no memo, and lists the elements in C
//! order, as NumPy does. Nested numeric arrays are written through the
//! crate's `.npy` writer, so their bytes are exactly what `np.save` writes.

use crate::array::pyvalue::PyValue;
use crate::error::{Error, Result};
use crate::format::dtype::{DType, Kind};
use crate::format::header::{Header, Version};
use ndarray::{ArrayBase, Data, Dimension};

/// Appends opcodes to a buffer.
struct Pickler {
    out: Vec<u8>,
}

fn unsupported(what: impl Into<String>) -> Error {
    Error::UnsupportedDType {
        dtype: "|O".into(),
        reason: what.into(),
    }
}

/// A missing element needs the dtype's `na_object` to stand for it
/// (without one, NumPy would store `None` as the string `'None'`).
fn check_missing(a: &crate::array::stringdtype::StringDTypeArray) -> Result<()> {
    if a.na_object.is_none() && a.values.iter().any(Option::is_none) {
        return Err(unsupported(
            "a missing element in a StringDType array without na_object",
        ));
    }
    Ok(())
}

/// pandas' resolution code for a unit.
fn resolution(unit: &str) -> Result<i64> {
    crate::array::pyvalue::foreign::RESOLUTIONS
        .iter()
        .find(|(_, u)| *u == unit)
        .map(|(c, _)| *c)
        .ok_or_else(|| unsupported(format!("the pandas unit {unit:?} (s, ms, us or ns)")))
}

/// NumPy's `dtype.flags` for `d` (what its pickled state carries):
/// `NPY_OBJECT_DTYPE_FLAGS` for objects, `NPY_NEEDS_INIT` for str, and for a
/// record `NPY_NEEDS_PYAPI` plus its fields' flags within
/// `NPY_FROM_FIELDS`.
fn flags_of(d: &DType) -> i64 {
    const NEEDS_PYAPI: i64 = 0x10;
    const FROM_FIELDS: i64 = 0x08 | 0x02 | 0x01 | 0x10;
    match d {
        DType::Scalar(s) => match s.kind {
            Kind::Object => 63,
            Kind::Unicode => 8,
            _ => 0,
        },
        DType::Record(fields) => fields.iter().fold(NEEDS_PYAPI, |acc, f| {
            acc | (flags_of(&f.dtype) & FROM_FIELDS)
        }),
        DType::SubArray(inner, _) => flags_of(inner),
    }
}

/// NumPy's `dtype.alignment` (records as packed, which is how they are
/// pickled unless built with `align=True`).
fn alignment_of(d: &DType) -> usize {
    match d {
        DType::Scalar(s) => match s.kind {
            Kind::Bool | Kind::Bytes | Kind::Void => 1,
            Kind::Complex => s.size / 2,
            Kind::Unicode => 4,
            Kind::Object | Kind::Datetime | Kind::Timedelta => 8,
            _ => s.size.max(1),
        },
        DType::Record(_) => 1,
        DType::SubArray(inner, _) => alignment_of(inner),
    }
}

/// The `.npy` file of records with object fields: their dtype's header,
/// then the records pickled as `np.save` does (one tuple of field values
/// per record, C order).
pub(crate) fn record_npy_bytes(r: &crate::array::record::RecordArray) -> Result<Vec<u8>> {
    let header = Header {
        dtype: r.dtype().clone(),
        shape: r.shape().to_vec(),
        fortran_order: false,
        version: Version::V1,
    };
    let mut p = Pickler {
        out: header.to_bytes()?,
    };
    p.out.extend_from_slice(&[0x80, 3]);
    p.reconstruct()?;
    p.shape(r.shape());
    p.any_dtype(r.dtype())?;
    p.out.push(0x89);
    p.record_rows(r, 0)?;
    p.out.extend_from_slice(b"tb.");
    Ok(p.out)
}

/// NumPy's rule for `fortran_order`: Fortran-contiguous and not C-contiguous.
fn fortran_only<S: Data, D: Dimension>(array: &ArrayBase<S, D>) -> bool {
    array.ndim() > 1 && array.t().is_standard_layout() && !array.is_standard_layout()
}

/// The pickle of `value` alone (protocol 3), as `pickle.dumps(value,
/// protocol=3)` would load it back.
///
/// ```
/// use ndnpy::pickle::{dumps, loads, PyValue};
///
/// let v = PyValue::Dict(vec![(PyValue::Str("k".into()), PyValue::BigInt("-99999999999999999999".into()))]);
/// assert_eq!(loads(&dumps(&v)?)?, v);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn dumps(value: &PyValue) -> Result<Vec<u8>> {
    let mut p = Pickler { out: vec![0x80, 3] };
    p.value(value, 0)?;
    p.out.push(b'.');
    Ok(p.out)
}

/// The `.npy` file of an object array: a `|O` header, then the array
/// pickled as `np.save` does (NumPy loads it with `allow_pickle=True`).
/// What `WriteNpy` writes for arrays of [`PyValue`].
pub(crate) fn object_npy_bytes<S, D>(array: &ArrayBase<S, D>) -> Result<Vec<u8>>
where
    S: Data<Elem = PyValue>,
    D: Dimension,
{
    object_npy_bytes_with(array, object_dtype, |p, v| p.value(v, 1))
}

/// The `.npy` file of an array of optional strings, as an object array of
/// `str` and `None` (what `np.save(np.array(["a", None]))` writes).
pub(crate) fn optional_strings_npy_bytes<S, D>(array: &ArrayBase<S, D>) -> Result<Vec<u8>>
where
    S: Data<Elem = Option<String>>,
    D: Dimension,
{
    object_npy_bytes_with(array, object_dtype, |p, v| match v {
        Some(s) => p.str(s),
        None => {
            p.out.push(b'N');
            Ok(())
        }
    })
}

/// The `|O` dtype in a pickle.
fn object_dtype(p: &mut Pickler) -> Result<()> {
    p.dtype(&DType::parse("|O").expect("valid"))
}

/// The `.npy` file of a NumPy 2 `StringDType` array, as `np.save` writes
/// it (a `|O` header, then the pickled array; protocol 3, which NumPy 2
/// loads as well as the protocol 4 it writes).
pub(crate) fn stringdtype_npy_bytes(
    a: &crate::array::stringdtype::StringDTypeArray,
) -> Result<Vec<u8>> {
    check_missing(a)?;
    let na = a.na_object.clone().unwrap_or(PyValue::None);
    object_npy_bytes_with(
        &a.values,
        |p| p.string_dtype(a),
        |p, v| match v {
            Some(s) => p.str(s),
            None => p.value(&na, 1),
        },
    )
}

/// The `.npy` file of an object array whose elements `item` pickles, and
/// whose dtype `dtype` pickles.
fn object_npy_bytes_with<T, S, D>(
    array: &ArrayBase<S, D>,
    dtype: impl FnOnce(&mut Pickler) -> Result<()>,
    item: impl FnMut(&mut Pickler, &T) -> Result<()>,
) -> Result<Vec<u8>>
where
    S: Data<Elem = T>,
    D: Dimension,
{
    let fortran = array.ndim() > 1 && array.t().is_standard_layout() && !array.is_standard_layout();
    let header = Header {
        dtype: DType::parse("|O").expect("valid"),
        shape: array.shape().to_vec(),
        fortran_order: fortran,
        version: Version::V1,
    };
    let mut p = Pickler {
        out: header.to_bytes()?,
    };
    // np.save writes protocol 3 before NumPy 2.1.
    p.out.extend_from_slice(&[0x80, 3]);
    p.reconstruct()?;
    p.shape(array.shape());
    dtype(&mut p)?;
    p.out.push(if fortran { 0x88 } else { 0x89 });
    p.list_with(array.iter(), item)?;
    p.out.extend_from_slice(b"tb.");
    Ok(p.out)
}

mod values;
