//! Accumulating one column across record batches: Arrow arrays of each
//! supported type into the buffers of a [`Column`], categoricals with
//! their dictionaries merged, checked against the pandas metadata.

use crate::error::{Error, Result};
use crate::model::column::Column;
use crate::model::meta::{self, ColumnMeta};
use crate::model::time::{TimeUnit, NAT};
use crate::model::values::{Categorical, Values};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field, TimeUnit as ArrowUnit};
use ndarray::Array1;
use ndnpy::AnyArray;
use std::collections::HashMap;
use std::sync::Arc;

/// The unit of an Arrow timestamp or duration.
fn unit(u: &ArrowUnit) -> TimeUnit {
    match u {
        ArrowUnit::Second => TimeUnit::Second,
        ArrowUnit::Millisecond => TimeUnit::Millisecond,
        ArrowUnit::Microsecond => TimeUnit::Microsecond,
        ArrowUnit::Nanosecond => TimeUnit::Nanosecond,
    }
}

/// Whether a pandas column entry still describes the values (it does not,
/// e.g., for a categorical of integers that pyarrow stored as plain ints).
fn meta_fits(m: &ColumnMeta, values: &Values) -> bool {
    let t = m.pandas_type.as_str();
    match values {
        Values::Categorical(_) => t == "categorical",
        Values::Array(a) => match a {
            AnyArray::Datetime64 { .. } => t == "datetime" || t == "datetimetz",
            AnyArray::Str(_) => matches!(t, "unicode" | "string" | "object" | "mixed"),
            AnyArray::Bytes(_) => matches!(t, "bytes" | "object" | "mixed"),
            AnyArray::Timedelta64 { .. } => matches!(t, "timedelta" | "object"),
            a => t == meta::array_type_name(a),
        },
    }
}

/// Values being collected, by family.
pub(super) enum Buf {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F16(Vec<half::f16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Str(Vec<String>),
    Bytes(Vec<Vec<u8>>),
    Datetime(Vec<i64>, TimeUnit, Option<String>),
    Timedelta(Vec<i64>, TimeUnit),
    Categorical(Box<CatBuf>),
}

/// A categorical being collected: each batch's dictionary is mapped onto
/// the categories seen so far (row groups may carry different dictionaries).
pub(super) struct CatBuf {
    codes: Vec<i64>,
    categories: Acc,
    lookup: HashMap<Vec<u8>, i64>,
    /// The last dictionary and where its entries went.
    last: Option<(ArrayRef, Vec<i64>)>,
    ordered: bool,
}

/// One column being collected: values, validity, and the bytes held.
pub(super) struct Acc {
    buf: Buf,
    valid: Option<Vec<bool>>,
    len: usize,
    pub(super) bytes: u64,
    meta: Option<ColumnMeta>,
    name: String,
}

pub(super) fn unsupported(field: &Field, meta: Option<&ColumnMeta>) -> Error {
    let pandas = meta.map_or(String::new(), |m| {
        format!(" (pandas type {:?})", m.pandas_type)
    });
    Error::Unsupported {
        column: field.name().clone(),
        reason: format!(
            "Arrow type {}{pandas} has no column type here",
            field.data_type()
        ),
    }
}

impl Acc {
    pub(super) fn new(field: &Field, meta: Option<&ColumnMeta>) -> Result<Self> {
        let buf = Self::buf_for(field, field.data_type(), meta)?;
        Ok(Acc {
            buf,
            valid: None,
            len: 0,
            bytes: 0,
            meta: meta.cloned(),
            name: field.name().clone(),
        })
    }

    pub(super) fn buf_for(field: &Field, dt: &DataType, meta: Option<&ColumnMeta>) -> Result<Buf> {
        Ok(match dt {
            DataType::Boolean => Buf::Bool(Vec::new()),
            DataType::Int8 => Buf::I8(Vec::new()),
            DataType::Int16 => Buf::I16(Vec::new()),
            DataType::Int32 => Buf::I32(Vec::new()),
            DataType::Int64 => Buf::I64(Vec::new()),
            DataType::UInt8 => Buf::U8(Vec::new()),
            DataType::UInt16 => Buf::U16(Vec::new()),
            DataType::UInt32 => Buf::U32(Vec::new()),
            DataType::UInt64 => Buf::U64(Vec::new()),
            DataType::Float16 => Buf::F16(Vec::new()),
            DataType::Float32 => Buf::F32(Vec::new()),
            DataType::Float64 => Buf::F64(Vec::new()),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Buf::Str(Vec::new()),
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
                Buf::Bytes(Vec::new())
            }
            DataType::Timestamp(u, tz) => {
                // Without ARROW:schema the zone is only in the pandas key.
                let tz = meta::time_zone(tz.as_deref(), meta);
                Buf::Datetime(Vec::new(), unit(u), tz)
            }
            DataType::Duration(u) => Buf::Timedelta(Vec::new(), unit(u)),
            // pyarrow reads dictionaries of anything but strings and bytes as
            // plain values (pandas gives int64 for integer categories).
            DataType::Dictionary(key, value)
                if key.is_dictionary_key_type()
                    && !matches!(
                        value.as_ref(),
                        DataType::Utf8
                            | DataType::LargeUtf8
                            | DataType::Utf8View
                            | DataType::Binary
                            | DataType::LargeBinary
                            | DataType::BinaryView
                    ) =>
            {
                Self::buf_for(field, value, meta)?
            }
            DataType::Dictionary(key, value) if key.is_dictionary_key_type() => {
                let ordered = field.dict_is_ordered().unwrap_or(false)
                    || meta
                        .and_then(|m| m.metadata.get("ordered"))
                        .and_then(|v| v.as_bool())
                        .unwrap_or(false);
                let inner = Field::new(field.name(), value.as_ref().clone(), true);
                let categories = Acc {
                    buf: Self::buf_for(&inner, value, None)?,
                    valid: None,
                    len: 0,
                    bytes: 0,
                    meta: None,
                    name: field.name().clone(),
                };
                if matches!(categories.buf, Buf::Categorical(_)) {
                    return Err(unsupported(field, meta));
                }
                Buf::Categorical(Box::new(CatBuf {
                    codes: Vec::new(),
                    categories,
                    lookup: HashMap::new(),
                    last: None,
                    ordered,
                }))
            }
            _ => return Err(unsupported(field, meta)),
        })
    }

    /// Bytes one row takes at the least.
    pub(super) fn min_row_bytes(&self) -> u64 {
        match &self.buf {
            Buf::Bool(_) | Buf::I8(_) | Buf::U8(_) => 1,
            Buf::I16(_) | Buf::U16(_) | Buf::F16(_) => 2,
            Buf::I32(_) | Buf::U32(_) | Buf::F32(_) => 4,
            Buf::Str(_) | Buf::Bytes(_) => 24,
            _ => 8,
        }
    }

    pub(super) fn reserve(&mut self, n: usize) {
        match &mut self.buf {
            Buf::Bool(v) => v.reserve(n),
            Buf::I8(v) => v.reserve(n),
            Buf::I16(v) => v.reserve(n),
            Buf::I32(v) => v.reserve(n),
            Buf::I64(v) => v.reserve(n),
            Buf::U8(v) => v.reserve(n),
            Buf::U16(v) => v.reserve(n),
            Buf::U32(v) => v.reserve(n),
            Buf::U64(v) => v.reserve(n),
            Buf::F16(v) => v.reserve(n),
            Buf::F32(v) => v.reserve(n),
            Buf::F64(v) => v.reserve(n),
            Buf::Datetime(v, ..) | Buf::Timedelta(v, _) => v.reserve(n),
            Buf::Categorical(c) => c.codes.reserve(n),
            // Strings: their count says little about their size.
            Buf::Str(_) | Buf::Bytes(_) => {}
        }
    }

    pub(super) fn push(&mut self, array: &dyn Array) -> Result<()> {
        if !matches!(self.buf, Buf::Categorical(_)) {
            if let DataType::Dictionary(..) = array.data_type() {
                let dict = array.as_any_dictionary();
                let plain = arrow_select::take::take(dict.values().as_ref(), dict.keys(), None)?;
                return self.push(plain.as_ref());
            }
        }
        let n = array.len();
        let nulls = array.logical_nulls().filter(|b| b.null_count() > 0);
        macro_rules! prim {
            ($v:expr, $t:ty) => {{
                let start = $v.len();
                $v.extend_from_slice(array.as_primitive::<$t>().values());
                // Slots of missing values hold whatever the file had: zero
                // them (floats and times get NaN and NaT below).
                if let Some(nulls) = &nulls {
                    for (i, ok) in nulls.iter().enumerate() {
                        if !ok {
                            $v[start + i] = Default::default();
                        }
                    }
                }
                self.bytes +=
                    (n * std::mem::size_of::<<$t as ArrowPrimitiveType>::Native>()) as u64;
            }};
        }
        match &mut self.buf {
            Buf::Bool(v) => {
                let values = array.as_boolean().values();
                match &nulls {
                    Some(b) => v.extend(values.iter().zip(b.iter()).map(|(x, ok)| x && ok)),
                    None => v.extend(values.iter()),
                }
                self.bytes += n as u64;
            }
            Buf::I8(v) => prim!(v, Int8Type),
            Buf::I16(v) => prim!(v, Int16Type),
            Buf::I32(v) => prim!(v, Int32Type),
            Buf::I64(v) => prim!(v, Int64Type),
            Buf::U8(v) => prim!(v, UInt8Type),
            Buf::U16(v) => prim!(v, UInt16Type),
            Buf::U32(v) => prim!(v, UInt32Type),
            Buf::U64(v) => prim!(v, UInt64Type),
            Buf::F16(v) => {
                let start = v.len();
                prim!(v, Float16Type);
                if let Some(nulls) = &nulls {
                    nulls
                        .iter()
                        .enumerate()
                        .filter(|(_, ok)| !ok)
                        .for_each(|(i, _)| v[start + i] = half::f16::NAN);
                }
            }
            Buf::F32(v) => {
                let start = v.len();
                prim!(v, Float32Type);
                if let Some(nulls) = &nulls {
                    nulls
                        .iter()
                        .enumerate()
                        .filter(|(_, ok)| !ok)
                        .for_each(|(i, _)| v[start + i] = f32::NAN);
                }
            }
            Buf::F64(v) => {
                let start = v.len();
                prim!(v, Float64Type);
                if let Some(nulls) = &nulls {
                    nulls
                        .iter()
                        .enumerate()
                        .filter(|(_, ok)| !ok)
                        .for_each(|(i, _)| v[start + i] = f64::NAN);
                }
            }
            Buf::Str(v) => {
                let mut add = |s: Option<&str>| {
                    let s = s.unwrap_or("");
                    self.bytes += 24 + s.len() as u64;
                    v.push(s.to_owned());
                };
                match array.data_type() {
                    DataType::Utf8 => array.as_string::<i32>().iter().for_each(&mut add),
                    DataType::LargeUtf8 => array.as_string::<i64>().iter().for_each(&mut add),
                    _ => array.as_string_view().iter().for_each(&mut add),
                }
            }
            Buf::Bytes(v) => {
                let mut add = |s: Option<&[u8]>| {
                    let s = s.unwrap_or(b"");
                    self.bytes += 24 + s.len() as u64;
                    v.push(s.to_owned());
                };
                match array.data_type() {
                    DataType::Binary => array.as_binary::<i32>().iter().for_each(&mut add),
                    DataType::LargeBinary => array.as_binary::<i64>().iter().for_each(&mut add),
                    _ => array.as_binary_view().iter().for_each(&mut add),
                }
            }
            Buf::Datetime(v, ..) | Buf::Timedelta(v, _) => {
                let start = v.len();
                match array.data_type() {
                    DataType::Timestamp(ArrowUnit::Second, _) => prim!(v, TimestampSecondType),
                    DataType::Timestamp(ArrowUnit::Millisecond, _) => {
                        prim!(v, TimestampMillisecondType)
                    }
                    DataType::Timestamp(ArrowUnit::Microsecond, _) => {
                        prim!(v, TimestampMicrosecondType)
                    }
                    DataType::Timestamp(ArrowUnit::Nanosecond, _) => {
                        prim!(v, TimestampNanosecondType)
                    }
                    DataType::Duration(ArrowUnit::Second) => prim!(v, DurationSecondType),
                    DataType::Duration(ArrowUnit::Millisecond) => prim!(v, DurationMillisecondType),
                    DataType::Duration(ArrowUnit::Microsecond) => prim!(v, DurationMicrosecondType),
                    _ => prim!(v, DurationNanosecondType),
                }
                if let Some(nulls) = &nulls {
                    nulls
                        .iter()
                        .enumerate()
                        .filter(|(_, ok)| !ok)
                        .for_each(|(i, _)| v[start + i] = NAT);
                }
            }
            Buf::Categorical(c) => {
                let dict = array.as_any_dictionary();
                let values = dict.values();
                let same = c.last.as_ref().is_some_and(|(prev, _)| {
                    Arc::ptr_eq(prev, values) || prev.to_data() == values.to_data()
                });
                if !same {
                    let map = c.map_dictionary(values.as_ref())?;
                    c.last = Some((values.clone(), map));
                }
                let map = &c.last.as_ref().expect("set above").1;
                let keys = dict.normalized_keys();
                c.codes.extend(keys.iter().enumerate().map(|(i, &k)| {
                    if nulls.as_ref().is_some_and(|b| b.is_null(i)) {
                        -1
                    } else {
                        map.get(k).copied().unwrap_or(-1)
                    }
                }));
                self.bytes = (c.codes.len() * 8) as u64 + c.categories.bytes;
                self.len += n;
                // Missing values are code -1, not a mask.
                return Ok(());
            }
        }
        match (&mut self.valid, &nulls) {
            (Some(valid), Some(b)) => valid.extend(b.iter()),
            (Some(valid), None) => valid.resize(valid.len() + n, true),
            (None, Some(b)) => {
                let mut valid = vec![true; self.len];
                valid.extend(b.iter());
                self.valid = Some(valid);
            }
            (None, None) => {}
        }
        self.len += n;
        Ok(())
    }

    /// A byte string that identifies entry `i` (for merging dictionaries).
    pub(super) fn key(&self, i: usize) -> Vec<u8> {
        match &self.buf {
            Buf::Bool(v) => vec![v[i] as u8],
            Buf::I8(v) => v[i].to_le_bytes().to_vec(),
            Buf::I16(v) => v[i].to_le_bytes().to_vec(),
            Buf::I32(v) => v[i].to_le_bytes().to_vec(),
            Buf::I64(v) => v[i].to_le_bytes().to_vec(),
            Buf::U8(v) => v[i].to_le_bytes().to_vec(),
            Buf::U16(v) => v[i].to_le_bytes().to_vec(),
            Buf::U32(v) => v[i].to_le_bytes().to_vec(),
            Buf::U64(v) => v[i].to_le_bytes().to_vec(),
            Buf::F16(v) => v[i].to_le_bytes().to_vec(),
            Buf::F32(v) => v[i].to_le_bytes().to_vec(),
            Buf::F64(v) => v[i].to_le_bytes().to_vec(),
            Buf::Str(v) => v[i].as_bytes().to_vec(),
            Buf::Bytes(v) => v[i].clone(),
            Buf::Datetime(v, ..) | Buf::Timedelta(v, _) => v[i].to_le_bytes().to_vec(),
            Buf::Categorical(_) => Vec::new(),
        }
    }

    pub(super) fn finish(self) -> Result<Column> {
        fn any<T>(v: Vec<T>) -> ndarray::ArrayD<T> {
            Array1::from(v).into_dyn()
        }
        let mut tz = None;
        let values = Values::Array(match self.buf {
            Buf::Bool(v) => AnyArray::Bool(any(v)),
            Buf::I8(v) => AnyArray::I8(any(v)),
            Buf::I16(v) => AnyArray::I16(any(v)),
            Buf::I32(v) => AnyArray::I32(any(v)),
            Buf::I64(v) => AnyArray::I64(any(v)),
            Buf::U8(v) => AnyArray::U8(any(v)),
            Buf::U16(v) => AnyArray::U16(any(v)),
            Buf::U32(v) => AnyArray::U32(any(v)),
            Buf::U64(v) => AnyArray::U64(any(v)),
            Buf::F16(v) => AnyArray::F16(any(v)),
            Buf::F32(v) => AnyArray::F32(any(v)),
            Buf::F64(v) => AnyArray::F64(any(v)),
            Buf::Str(v) => AnyArray::Str(any(v)),
            Buf::Bytes(v) => AnyArray::Bytes(any(v)),
            Buf::Datetime(v, unit, zone) => {
                tz = zone;
                AnyArray::Datetime64 {
                    array: any(v),
                    unit: Some(unit.as_str().to_owned()),
                }
            }
            Buf::Timedelta(v, unit) => AnyArray::Timedelta64 {
                array: any(v),
                unit: Some(unit.as_str().to_owned()),
            },
            Buf::Categorical(c) => {
                let k = c.categories.len;
                let Values::Array(categories) = c.categories.finish()?.into_parts().1 else {
                    unreachable!("categories are never categorical (checked in buf_for)")
                };
                let values = Values::Categorical(Categorical {
                    codes: crate::model::values::narrow_codes(c.codes, k),
                    categories,
                    ordered: c.ordered,
                });
                let meta = self.meta.filter(|m| meta_fits(m, &values));
                return Ok(Column::from_parts(
                    Some(self.name),
                    values,
                    None,
                    None,
                    meta,
                ));
            }
        });
        let meta = self.meta.filter(|m| meta_fits(m, &values));
        Ok(Column::from_parts(
            Some(self.name),
            values,
            self.valid,
            tz,
            meta,
        ))
    }
}

impl CatBuf {
    /// Where each entry of a batch's dictionary goes among the categories
    /// (−1 for a missing entry), adding the new ones.
    pub(super) fn map_dictionary(&mut self, values: &dyn Array) -> Result<Vec<i64>> {
        let mut local = Acc {
            buf: Acc::buf_for(
                &Field::new("", values.data_type().clone(), true),
                values.data_type(),
                None,
            )?,
            valid: None,
            len: 0,
            bytes: 0,
            meta: None,
            name: String::new(),
        };
        local.push(values)?;
        let mut map = Vec::with_capacity(local.len);
        for i in 0..local.len {
            if local.valid.as_ref().is_some_and(|v| !v[i]) {
                map.push(-1);
                continue;
            }
            let key = local.key(i);
            let next = self.lookup.len() as i64;
            let code = *self.lookup.entry(key).or_insert(next);
            if code == next {
                self.categories.push(&values.slice(i, 1))?;
            }
            map.push(code);
        }
        Ok(map)
    }
}
