//! NumPy's pickled forms turned into the crate's types: `numpy.dtype`
//! (constructor plus `__setstate__` tuple) into [`DType`], `_reconstruct` /
//! `_frombuffer` plus state into [`AnyArray`], `scalar` into
//! [`NumpyScalar`].
//!
//! Numeric data inside a pickle goes through the crate's object-free
//! decoding (`crate::array::decode::array_from_bytes`), so nested raw arrays
//! support exactly the dtypes a `.npy` file does, objects excepted (as
//! `np.frombuffer` refuses them).

use super::arrays::{data_cost, object_array};
use super::machine::{self, Machine, Node, PendingArray};
use crate::array::any::AnyArray;
use crate::array::pyvalue::{NumpyScalar, PyValue};
use crate::error::{Error, Result};
use crate::format::dtype::{ByteOrder, DType, Field, Kind, Scalar};

/// `_reconstruct(cls, shape, dtype_code)`.
pub(crate) fn reconstruct(m: &mut Machine<'_>, args: &[usize]) -> Result<Node> {
    let [cls, _shape, _code] = args else {
        return Err(m.malformed("_reconstruct takes three arguments"));
    };
    match &m.arena[*cls] {
        Node::Global(super::globals::Global::NdArray) => Ok(Node::PendingArray(PendingArray)),
        Node::Global(g) => Err(Error::Pickle(crate::error::PickleError::UnsupportedPickle {
            what: format!("_reconstruct of {} (only numpy.ndarray)", g.name()),
        })),
        // A subclass (np.matrix, np.recarray ...): refused by name, or
        // opaque under ReadOptions::opaque_objects.
        Node::Ref(r) => Err(Error::Pickle(crate::error::PickleError::UnsupportedPickle {
            what: format!(
                "_reconstruct of {}.{} (only numpy.ndarray; ReadOptions::opaque_objects reads it as inert data)",
                r.0, r.1
            ),
        })),
        _ => Err(m.malformed("_reconstruct of something that is not a class")),
    }
}

/// `numpy.dtype(code, align, copy)`.
pub(crate) fn dtype_new(m: &mut Machine<'_>, args: &[usize]) -> Result<Node> {
    let Some(code) = args.first() else {
        return Err(m.malformed("numpy.dtype() needs a type code"));
    };
    if args.len() > 3 {
        return Err(m.malformed("numpy.dtype() takes at most three arguments"));
    }
    let text = match &m.arena[*code] {
        Node::Str(s) => Some(s.clone()),
        // Python 2's `str`, and `bytes` as np.load(encoding='bytes') passes
        // them: type codes are ASCII.
        Node::Py2Str(b) | Node::Bytes(b) if b.is_ascii() => {
            Some(String::from_utf8(b.clone()).expect("ASCII"))
        }
        _ => None,
    };
    match (&m.arena[*code], text) {
        (_, Some(s)) if s.len() <= 32 => Ok(Node::PendingDType(s)),
        (_, Some(_)) => Err(m.malformed("numpy.dtype() type code too long")),
        (other, None) => Err(m.malformed(format!(
            "numpy.dtype() of a {}, not a type code",
            other_name(other)
        ))),
    }
}

fn other_name(node: &Node) -> String {
    format!("{node:?}").chars().take(40).collect()
}

/// A dtype whose pickle never set its state: the constructor's type code
/// with native byte order, as `np.dtype(code)` gives.
pub(crate) fn dtype_without_state(m: &Machine<'_>, code: &str) -> Result<DType> {
    DType::parse(code).map_err(|e| m.malformed(format!("bad dtype code {code:?}: {e}")))
}

/// The dtype held by node `id`.
fn dtype_at(m: &Machine<'_>, id: usize) -> Result<DType> {
    match &m.arena[id] {
        Node::DType(d) => Ok(d.clone()),
        Node::PendingDType(code) => dtype_without_state(m, code),
        _ => Err(m.malformed("expected a numpy.dtype")),
    }
}

fn int_at(m: &Machine<'_>, id: usize, what: &str) -> Result<i64> {
    match &m.arena[id] {
        Node::Int(n) => Ok(*n),
        Node::Bool(b) => Ok(*b as i64),
        _ => Err(m.malformed(format!("{what} is not an int"))),
    }
}

fn tuple_at<'m>(m: &'m Machine<'_>, id: usize, what: &str) -> Result<&'m [usize]> {
    match &m.arena[id] {
        Node::Tuple(items) => Ok(items),
        _ => Err(m.malformed(format!("{what} is not a tuple"))),
    }
}

fn str_at<'m>(m: &'m Machine<'_>, id: usize, what: &str) -> Result<&'m str> {
    match &m.arena[id] {
        Node::Str(s) => Ok(s),
        // Python 2 spells names and byte-order marks as its `str`.
        Node::Py2Str(b) if b.is_ascii() => Ok(std::str::from_utf8(b).expect("ASCII")),
        _ => Err(m.malformed(format!("{what} is not a str"))),
    }
}

fn shape_at(m: &Machine<'_>, id: usize, what: &str) -> Result<Vec<usize>> {
    let items = match &m.arena[id] {
        Node::Tuple(items) | Node::List(items) => items.clone(),
        Node::Int(_) => vec![id],
        _ => return Err(m.malformed(format!("{what} is not a tuple of ints"))),
    };
    items
        .iter()
        .map(|&d| {
            let n = int_at(m, d, what)?;
            usize::try_from(n).map_err(|_| m.malformed(format!("{what} has a negative dimension")))
        })
        .collect()
}

/// `dtype.__setstate__(state)`: the tuple `(version, endian, subarray,
/// names, fields, elsize, alignment, flags[, metadata])` of NumPy's
/// `arraydescr_setstate` (versions 3 and 4, what NumPy has written since
/// 1.7).
pub(crate) fn dtype_setstate(m: &mut Machine<'_>, code: &str, state: usize) -> Result<DType> {
    let bad = |m: &Machine<'_>, why: String| m.malformed(format!("dtype state refused: {why}"));
    let items = tuple_at(m, state, "the dtype state")?.to_vec();
    if !matches!(items.len(), 8 | 9) {
        return Err(bad(
            m,
            format!("a tuple of {} items (NumPy writes 8 or 9)", items.len()),
        ));
    }
    let version = int_at(m, items[0], "dtype state version")?;
    if !matches!(version, 3 | 4) {
        return Err(Error::Pickle(
            crate::error::PickleError::UnsupportedPickle {
                what: format!(
                    "dtype state version {version} (NumPy has written 3 and 4 since 1.7)"
                ),
            },
        ));
    }
    let endian = str_at(m, items[1], "dtype byte order")?;
    let mark = match endian {
        "<" | ">" | "|" | "=" => endian.chars().next().expect("one char"),
        other => {
            return Err(bad(
                m,
                format!(
                    "byte order {:?} is not one of < > | =",
                    other.chars().take(8).collect::<String>()
                ),
            ))
        }
    };
    let elsize = int_at(m, items[5], "dtype item size")?;
    // Sub-array: `(base, shape)`.
    if !matches!(m.arena[items[2]], Node::None) {
        let sub = tuple_at(m, items[2], "dtype sub-array")?.to_vec();
        let [base, shape] = sub.as_slice() else {
            return Err(bad(m, "sub-array is not a (dtype, shape) pair".into()));
        };
        let base = dtype_at(m, *base)?;
        let shape = shape_at(m, *shape, "sub-array shape")?;
        let d = DType::SubArray(Box::new(base), shape);
        let size = d
            .itemsize()
            .ok_or_else(|| bad(m, "sub-array size overflows".into()))?;
        if elsize >= 0 && elsize as u64 != size as u64 {
            return Err(bad(
                m,
                format!("item size {elsize} for a sub-array of {size} bytes"),
            ));
        }
        return Ok(d);
    }
    // Record: `names` and `fields`.
    if !matches!(m.arena[items[3]], Node::None) {
        return record(m, items[3], items[4], elsize);
    }
    // A scalar type: the constructor's code, the state's byte order, size
    // and datetime unit, checked by the crate's type-string parser.
    let mut scalar = match DType::parse(code) {
        Ok(DType::Scalar(s)) => s,
        _ => return Err(bad(m, format!("type code {code:?}"))),
    };
    if matches!(scalar.kind, Kind::Bytes | Kind::Unicode | Kind::Void) {
        if elsize < 0 || elsize > i32::MAX as i64 {
            return Err(bad(m, format!("item size {elsize} of a flexible type")));
        }
        if scalar.kind == Kind::Unicode && elsize % 4 != 0 {
            return Err(bad(
                m,
                format!("str item size {elsize} is not a multiple of 4"),
            ));
        }
        if scalar.size != 0 && scalar.size as i64 != elsize {
            return Err(bad(m, format!("item size {elsize} for type code {code:?}")));
        }
        scalar.size = elsize as usize;
    } else if elsize != -1 && elsize != scalar.size as i64 {
        return Err(bad(m, format!("item size {elsize} for type code {code:?}")));
    }
    if matches!(scalar.kind, Kind::Datetime | Kind::Timedelta) {
        scalar.unit = datetime_unit(m, items.get(8).copied())?;
    }
    let mut text = String::new();
    text.push(mark);
    text.push_str(
        &Scalar {
            order: ByteOrder::NotApplicable,
            ..scalar.clone()
        }
        .type_str()[1..],
    );
    if scalar.kind == Kind::Unicode {
        // `type_str` writes characters; it was built from the byte size.
    }
    DType::parse(&text).map_err(|e| bad(m, e.to_string()))
}

/// The unit of a datetime dtype: state item 8 is `(metadata, (unit, num,
/// den, events))`.
fn datetime_unit(m: &Machine<'_>, item: Option<usize>) -> Result<Option<String>> {
    let bad = |why: &str| m.malformed(format!("dtype state refused: {why}"));
    let Some(item) = item else {
        return Err(bad("a datetime dtype without its unit (state version 4)"));
    };
    let pair = tuple_at(m, item, "datetime metadata")?;
    let [_, info] = pair else {
        return Err(bad("datetime metadata is not a pair"));
    };
    let info = tuple_at(m, *info, "datetime unit")?;
    let [unit, num, _den, _events] = info else {
        return Err(bad("datetime unit is not (unit, num, den, events)"));
    };
    let unit = match &m.arena[*unit] {
        Node::Bytes(b) | Node::Py2Str(b) => String::from_utf8(b.clone()).ok(),
        Node::Str(s) => Some(s.clone()),
        _ => None,
    }
    .ok_or_else(|| bad("datetime unit is not text"))?;
    let num = int_at(m, *num, "datetime unit multiplier")?;
    if !(1..=i32::MAX as i64).contains(&num) {
        return Err(bad("datetime unit multiplier out of range"));
    }
    let text = if unit == "generic" {
        "M8".to_string()
    } else {
        format!("M8[{num}{unit}]")
    };
    match DType::parse(&text) {
        Ok(DType::Scalar(s)) => Ok(s.unit),
        _ => Err(bad(&format!(
            "datetime unit {:?}",
            unit.chars().take(16).collect::<String>()
        ))),
    }
}

/// A record dtype from `names` (field order) and `fields` (name → `(dtype,
/// offset[, title])`), padding gaps as `('', '|Vn')` entries.
fn record(m: &mut Machine<'_>, names: usize, fields: usize, elsize: i64) -> Result<DType> {
    let bad = |m: &Machine<'_>, why: String| m.malformed(format!("dtype state refused: {why}"));
    let names = tuple_at(m, names, "dtype names")?.to_vec();
    let Node::Dict(pairs) = &m.arena[fields] else {
        return Err(bad(m, "fields is not a dict".into()));
    };
    let pairs = pairs.clone();
    if elsize < 0 || elsize > i32::MAX as i64 {
        return Err(bad(m, format!("record item size {elsize}")));
    }
    // Name → description, so that many fields cost linear time.
    let mut by_name = std::collections::HashMap::with_capacity(pairs.len());
    for (k, v) in &pairs {
        if let Ok(key) = str_at(m, *k, "a field name") {
            by_name.entry(key).or_insert(*v);
        }
    }
    let mut out: Vec<Field> = Vec::with_capacity(names.len());
    let mut cur: u64 = 0;
    let mut seen = std::collections::HashSet::new();
    for name_id in names {
        let name = str_at(m, name_id, "a field name")?.to_owned();
        if !seen.insert(name.clone()) {
            return Err(bad(m, format!("field {name:?} twice")));
        }
        let entry = by_name
            .get(name.as_str())
            .copied()
            .ok_or_else(|| bad(m, format!("field {name:?} is named but not described")))?;
        let entry = tuple_at(m, entry, "a field description")?.to_vec();
        let (dtype, offset, title) = match entry.as_slice() {
            [d, o] => (*d, *o, None),
            [d, o, t] => (*d, *o, Some(*t)),
            _ => {
                return Err(bad(
                    m,
                    format!("field {name:?} is not (dtype, offset[, title])"),
                ))
            }
        };
        let dtype = dtype_at(m, dtype)?;
        let offset = int_at(m, offset, "a field offset")?;
        let title = match title.map(|t| &m.arena[t]) {
            None | Some(Node::None) => None,
            Some(Node::Str(t)) => Some(t.clone()),
            Some(_) => {
                return Err(Error::Pickle(
                    crate::error::PickleError::UnsupportedPickle {
                        what: format!("a title of field {name:?} that is not a str"),
                    },
                ))
            }
        };
        let offset = u64::try_from(offset).map_err(|_| bad(m, "negative field offset".into()))?;
        if offset < cur {
            return Err(Error::Pickle(
                crate::error::PickleError::UnsupportedPickle {
                    what: format!(
                    "record field {name:?} overlaps or precedes the previous one (offset {offset})"
                ),
                },
            ));
        }
        if offset > cur {
            out.push(Field::padding((offset - cur) as usize));
        }
        let size = dtype
            .itemsize()
            .ok_or_else(|| bad(m, "field size overflows".into()))? as u64;
        cur = offset + size;
        out.push(Field { name, title, dtype });
    }
    let elsize = elsize as u64;
    if cur > elsize {
        return Err(bad(
            m,
            format!("fields end at byte {cur}, beyond the item size {elsize}"),
        ));
    }
    if elsize > cur {
        out.push(Field::padding((elsize - cur) as usize));
    }
    // NumPy refuses a title that repeats a name or another title ("title
    // already used as a name or title"); field lookups by name would
    // otherwise find the wrong field.
    let mut titles = std::collections::HashSet::new();
    for title in out.iter().filter_map(|f| f.title.as_deref()) {
        if seen.contains(title) || !titles.insert(title) {
            return Err(bad(
                m,
                format!("title {title:?} already used as a name or title"),
            ));
        }
    }
    Ok(DType::Record(out))
}

/// `ndarray.__setstate__((version, shape, dtype, is_fortran, data))`.
pub(crate) fn array_setstate(m: &mut Machine<'_>, _p: PendingArray, state: usize) -> Result<Node> {
    let items = tuple_at(m, state, "the ndarray state")?.to_vec();
    let (shape, dtype, fortran, data) = match items.as_slice() {
        [_version, s, d, f, x] => (*s, *d, *f, *x),
        [s, d, f, x] => (*s, *d, *f, *x),
        _ => return Err(m.malformed("the ndarray state is not a 4- or 5-tuple")),
    };
    let shape = shape_at(m, shape, "the ndarray shape")?;
    let fortran = match &m.arena[fortran] {
        Node::Bool(b) => *b,
        Node::Int(n) => *n != 0,
        _ => return Err(m.malformed("the ndarray order flag is not a bool")),
    };
    if let Node::StringDType { coerce, na } = m.arena[dtype] {
        // NumPy's StringDType elements are 16 bytes.
        check_shape(m, &shape, 16)?;
        let items = listed_items(m, data, &shape, "a StringDType")?;
        let array = super::stringdtype::array(m, coerce, na, &shape, fortran, items)?;
        m.charge(machine::ARRAY_COST)?;
        return Ok(machine::value_node(PyValue::Array(std::sync::Arc::new(
            array,
        ))));
    }
    let dtype = dtype_at(m, dtype)?;
    // An item size that overflows is refused as the array is read.
    check_shape(m, &shape, dtype.itemsize().unwrap_or(1))?;
    let array = if dtype.has_object() {
        let items = listed_items(m, data, &shape, "an object")?;
        let n = items.len();
        if dtype != object_dtype() {
            // Records with object fields: one tuple per record, C order
            // (kept: `RecordArray` holds C order whatever the file's).
            super::records::record_array(m, &dtype, &shape, &items)?
        } else {
            let mut values = Vec::with_capacity(n);
            for id in items {
                values.push(m.materialize(id)?);
            }
            AnyArray::Object(object_array(m, &shape, fortran, values)?)
        }
    } else {
        let pos = m.op_pos();
        let bytes = data_bytes(m, data)?;
        m.charge(data_cost(&dtype, &shape, &bytes))?;
        crate::array::decode::array_from_bytes(&dtype, &shape, fortran, &bytes, pos)?
    };
    // The data (or the elements) was charged as it was read.
    m.charge(machine::ARRAY_COST)?;
    Ok(machine::value_node(PyValue::Array(std::sync::Arc::new(
        array,
    ))))
}

/// Refuses a pickled array's shape that NumPy could not have made: items
/// of `itemsize` bytes times the product of its non-zero dimensions above
/// `isize::MAX` bytes, the rule `.npy` headers are held to
/// ([`crate::format::header::within_numpy_size`]). A zero dimension makes
/// the array empty, so its data (an empty list, empty bytes) matches the
/// shape's product, yet ndarray cannot hold the shape: an object array of
/// shape `(2**62, 2, 0)` must be an error here, not a panic where the
/// array is built. Always applied, whatever
/// `ReadOptions::allow_beyond_numpy_limits` says: that option relaxes the
/// header of a file, and NumPy pickles no such array. Items of no bytes
/// pass, as in headers; the raw readers refuse shapes ndarray cannot hold.
fn check_shape(m: &Machine<'_>, shape: &[usize], itemsize: usize) -> Result<()> {
    if !crate::format::header::within_numpy_size(shape, itemsize) {
        return Err(m.malformed(format!(
            "the ndarray shape {shape:?} overflows: its non-zero dimensions times \
             the item size ({itemsize} bytes) exceed isize::MAX bytes"
        )));
    }
    Ok(())
}

/// The items of an array pickled as a list (object and `StringDType`
/// arrays), checked against the number `shape` needs.
fn listed_items(m: &Machine<'_>, data: usize, shape: &[usize], what: &str) -> Result<Vec<usize>> {
    let Node::List(items) = &m.arena[data] else {
        return Err(m.malformed(format!("the data of {what} ndarray is not a list")));
    };
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| m.malformed("the ndarray shape overflows"))?;
    if items.len() != n {
        return Err(m.malformed(format!(
            "the ndarray data has {} items, its shape {shape:?} needs {n}",
            items.len()
        )));
    }
    Ok(items.clone())
}

fn object_dtype() -> DType {
    DType::parse("|O").expect("a valid type string")
}

/// Raw array data: bytes, a bytearray, or a Python 2 str.
fn data_bytes(m: &Machine<'_>, id: usize) -> Result<Vec<u8>> {
    match &m.arena[id] {
        Node::Bytes(b) | Node::ByteArray(b) | Node::Py2Str(b) => Ok(b.clone()),
        Node::Str(s) => s
            .chars()
            .map(|c| u8::try_from(c as u32).ok())
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(|| m.malformed("array data str is not latin-1")),
        _ => Err(m.malformed("array data is not bytes")),
    }
}

/// `_frombuffer(buffer, dtype, shape, order)` (protocol 5's in-band arrays).
pub(crate) fn frombuffer(m: &mut Machine<'_>, args: &[usize]) -> Result<Node> {
    let [buf, dtype, shape, order] = args else {
        return Err(m.malformed("_frombuffer takes four arguments"));
    };
    let dtype = dtype_at(m, *dtype)?;
    if dtype.has_object() {
        return Err(m.malformed("_frombuffer of an object dtype"));
    }
    let shape = shape_at(m, *shape, "the _frombuffer shape")?;
    check_shape(m, &shape, dtype.itemsize().unwrap_or(1))?;
    let fortran = match str_at(m, *order, "the _frombuffer order")? {
        "C" => false,
        "F" => true,
        _ => return Err(m.malformed("the _frombuffer order is not 'C' or 'F'")),
    };
    let bytes = data_bytes(m, *buf)?;
    m.charge(data_cost(&dtype, &shape, &bytes))?;
    let pos = m.op_pos();
    let array = crate::array::decode::array_from_bytes(&dtype, &shape, fortran, &bytes, pos)?;
    // The data (or the elements) was charged as it was read.
    m.charge(machine::ARRAY_COST)?;
    Ok(machine::value_node(PyValue::Array(std::sync::Arc::new(
        array,
    ))))
}

/// `scalar(dtype, bytes)`; for the object dtype, `scalar(dtype, obj)` is
/// `obj` itself.
pub(crate) fn scalar(m: &mut Machine<'_>, args: &[usize]) -> Result<Node> {
    let (dtype, data) = match args {
        [d, x] => (*d, Some(*x)),
        [d] => (*d, None),
        _ => return Err(m.malformed("scalar() takes one or two arguments")),
    };
    let dtype = dtype_at(m, dtype)?;
    if dtype == object_dtype() {
        let v = match data {
            Some(x) => m.materialize(x)?,
            None => PyValue::None,
        };
        return Ok(machine::value_node(v));
    }
    if dtype.has_object() {
        return Err(Error::UnsupportedDType {
            dtype: dtype.to_string(),
            reason: "NumPy scalars of records with object fields are not supported yet".into(),
        });
    }
    let Some(data) = data else {
        return Err(m.malformed("scalar() of a non-object dtype needs its bytes"));
    };
    let bytes = data_bytes(m, data)?;
    let size = dtype
        .itemsize()
        .ok_or_else(|| m.malformed("scalar dtype size overflows"))?;
    if bytes.len() != size {
        return Err(m.malformed(format!(
            "a scalar of {dtype} needs {size} bytes, the pickle has {}",
            bytes.len()
        )));
    }
    m.charge(bytes.len() as u64)?;
    Ok(machine::value_node(PyValue::Scalar(NumpyScalar {
        dtype,
        data: bytes,
    })))
}
