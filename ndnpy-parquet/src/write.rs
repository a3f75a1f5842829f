//! [`Frame`] → Parquet: Arrow arrays per row group and column through the
//! Arrow column writers (categoricals of strings and bytes page by page, see
//! `dictionary.rs`), the `pandas` key, and the `ARROW:schema` key pyarrow
//! takes dictionary types, time zones and durations from.

use crate::error::{Error, Result};
use crate::model::column::{self, Column};
use crate::model::frame::{Compression, Frame, Index, WriteOptions};
use crate::model::meta;
use crate::model::time::{parquet_unit, TimeUnit, NAT};
use crate::model::values::Values;
use arrow_array::types::*;
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, DictionaryArray, LargeStringArray, PrimitiveArray,
    StringArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Schema, TimeUnit as ArrowUnit};
use ndnpy::AnyArray;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowRowGroupWriterFactory};
use parquet::arrow::{add_encoded_arrow_schema_to_metadata, ArrowSchemaConverter};
use parquet::basic::{GzipLevel, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// Rows per Arrow batch handed to the writer.
const BATCH_ROWS: usize = 64 * 1024;

pub(crate) fn write_path(frame: &Frame, path: &Path, options: &WriteOptions) -> Result<()> {
    // Stream to a sibling file and rename, so a failed write never leaves a
    // truncated file under the target's name.
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("frame"),
        std::process::id()
    ));
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        let file = write_to(
            frame,
            std::io::BufWriter::with_capacity(1 << 20, file),
            options,
        )?;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

pub(crate) fn write_to<W: Write + Send>(
    frame: &Frame,
    out: W,
    options: &WriteOptions,
) -> Result<W> {
    let data_names: HashSet<&str> = frame.columns.iter().filter_map(|c| c.name()).collect();
    let mut stored: Vec<(&Column, String)> = frame
        .columns
        .iter()
        .map(|c| (c, c.name().unwrap_or_default().to_owned()))
        .collect();
    let mut index_columns = Vec::new();
    match &frame.index {
        Index::Range(r) => index_columns.push(json!({
            "kind": "range", "name": r.name, "start": r.start, "stop": r.stop, "step": r.step,
        })),
        Index::Columns(levels) => {
            let mut taken = HashSet::new();
            for (i, level) in levels.iter().enumerate() {
                // pyarrow's rule: a level keeps its name as field name unless
                // it is unnamed or collides with a data column.
                let field = match level.name() {
                    Some(n) if !data_names.contains(n) && !taken.contains(n) => n.to_owned(),
                    _ => format!("__index_level_{i}__"),
                };
                taken.insert(field.clone());
                index_columns.push(Value::String(field.clone()));
                stored.push((level, field));
            }
        }
    }
    for (c, _) in &stored {
        check_categories_survive(c)?;
    }
    let entries: Vec<Value> = stored
        .iter()
        .map(|(c, f)| column::column_entry(c, f))
        .collect();
    let document = meta::document(
        index_columns,
        frame
            .column_indexes
            .clone()
            .unwrap_or_else(meta::default_column_indexes),
        entries,
        frame.attributes.clone(),
    );
    let fields: Vec<Field> = stored
        .iter()
        .map(|(c, f)| field(c, f))
        .collect::<Result<_>>()?;
    // In the footer's key-value list, where pyarrow and other tools look,
    // and in ARROW:schema.
    let kv = vec![KeyValue::new("pandas".to_owned(), document.clone())];
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        HashMap::from([("pandas".to_owned(), document)]),
    ));
    let compression = match options.compression {
        Compression::None => parquet::basic::Compression::UNCOMPRESSED,
        Compression::Snappy => parquet::basic::Compression::SNAPPY,
        Compression::Gzip => parquet::basic::Compression::GZIP(GzipLevel::default()),
        Compression::Zstd => parquet::basic::Compression::ZSTD(ZstdLevel::try_new(1)?),
    };
    let rg = options.row_group_size.max(1);
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_key_value_metadata(Some(kv))
        .set_max_row_group_row_count(Some(rg))
        .build();
    let mut props = props;
    add_encoded_arrow_schema_to_metadata(&schema, &mut props);
    let props = Arc::new(props);
    let parquet_schema = ArrowSchemaConverter::new()
        .with_coerce_types(props.coerce_types())
        .convert(&schema)?;
    let mut writer =
        SerializedFileWriter::new(out, parquet_schema.root_schema_ptr(), props.clone())?;
    let factory = ArrowRowGroupWriterFactory::new(&writer, schema.clone());
    // One row group at a time, one column at a time; Arrow arrays are built
    // for a slice of rows at a time, so the copy never exceeds one batch.
    // Categoricals of strings or bytes get hand-made chunks (dictionary.rs);
    // the rest goes through the Arrow column writers.
    let mut rg_start = 0;
    let mut rg_index = 0;
    // A frame without stored columns has rows only in its (metadata) index:
    // one (empty) row group, however many rows it claims, so a hostile
    // length cannot make the loop below spin.
    let step = if stored.is_empty() {
        frame.len.max(1)
    } else {
        rg
    };
    let prepared = stored
        .iter()
        .map(|(c, _)| match c.values() {
            Values::Categorical(cat) if crate::dictionary::handles(cat) => {
                crate::dictionary::prepare(cat).map(Some)
            }
            _ => Ok(None),
        })
        .collect::<Result<Vec<_>>>()?;
    while rg_start < frame.len {
        let rg_end = rg_start.saturating_add(step).min(frame.len);
        let column_writers = factory.create_column_writers(rg_index)?;
        let mut rg_writer = writer.next_row_group()?;
        for (i, ((c, _), cw)) in stored.iter().zip(column_writers).enumerate() {
            let mut cw = cw;
            if let Some(p) = &prepared[i] {
                let (bytes, close) =
                    crate::dictionary::chunk(parquet_schema.column(i), p, rg_start, rg_end)?;
                rg_writer.append_column(&bytes, close)?;
                continue;
            }
            let field = schema.field(i);
            let mut start = rg_start;
            while start < rg_end {
                let end = (start + BATCH_ROWS).min(rg_end);
                let array = array(c, start, end)?;
                for leaf in compute_leaves(field, &array)? {
                    cw.write(&leaf)?;
                }
                start = end;
            }
            cw.close()?.append_to_row_group(&mut rg_writer)?;
        }
        rg_writer.close()?;
        rg_start = rg_end;
        rg_index += 1;
    }
    Ok(writer.into_inner()?)
}

fn arrow_unit(u: TimeUnit) -> ArrowUnit {
    match u {
        TimeUnit::Second => ArrowUnit::Second,
        TimeUnit::Millisecond => ArrowUnit::Millisecond,
        TimeUnit::Microsecond => ArrowUnit::Microsecond,
        TimeUnit::Nanosecond => ArrowUnit::Nanosecond,
    }
}

fn unsupported(column: &Column, reason: String) -> Error {
    Error::Unsupported {
        column: column.name().unwrap_or_default().to_owned(),
        reason,
    }
}

/// The Parquet unit of a datetime or timedelta column and the factor from
/// its NumPy unit (see [`parquet_unit`]).
fn time_unit(unit: &Option<String>, column: &Column, datetime: bool) -> Result<(TimeUnit, i64)> {
    parquet_unit(unit.as_deref(), datetime).ok_or_else(|| {
        unsupported(
            column,
            format!(
                "the time unit {:?} has no Parquet counterpart (ms, us, ns; seconds, minutes, \
                 hours, days and weeks are converted)",
                unit.as_deref().unwrap_or("generic")
            ),
        )
    })
}

/// pyarrow stores pandas' `str` and `string` dtypes as `large_string` and
/// object columns of strings as `string`; doing the same keeps the
/// `ARROW:schema` of a rewritten file identical.
fn large_strings(column: &Column) -> bool {
    column.numpy_type() != "object"
}

fn any_type(a: &AnyArray, column: &Column, tz: Option<&str>) -> Result<DataType> {
    Ok(match a {
        AnyArray::Bool(_) => DataType::Boolean,
        AnyArray::I8(_) => DataType::Int8,
        AnyArray::I16(_) => DataType::Int16,
        AnyArray::I32(_) => DataType::Int32,
        AnyArray::I64(_) => DataType::Int64,
        AnyArray::U8(_) => DataType::UInt8,
        AnyArray::U16(_) => DataType::UInt16,
        AnyArray::U32(_) => DataType::UInt32,
        AnyArray::U64(_) => DataType::UInt64,
        AnyArray::F16(_) => DataType::Float16,
        AnyArray::F32(_) => DataType::Float32,
        AnyArray::F64(_) => DataType::Float64,
        AnyArray::Str(_) if large_strings(column) => DataType::LargeUtf8,
        AnyArray::Str(_) => DataType::Utf8,
        AnyArray::Bytes(_) => DataType::Binary,
        AnyArray::Datetime64 { unit, .. } => DataType::Timestamp(
            arrow_unit(time_unit(unit, column, true)?.0),
            tz.map(Arc::from),
        ),
        AnyArray::Timedelta64 { unit, .. } => {
            DataType::Duration(arrow_unit(time_unit(unit, column, false)?.0))
        }
        _ => {
            return Err(unsupported(
                column,
                format!("{} has no Parquet type", a.dtype()),
            ))
        }
    })
}

fn values_type(values: &Values, column: &Column) -> Result<DataType> {
    Ok(match values {
        Values::Array(a) => any_type(a, column, column.timezone())?,
        Values::Categorical(c) => {
            let key = any_type(&c.codes, column, None)?;
            let value = match &c.categories {
                // Categories of strings are `string` in pyarrow's schema.
                AnyArray::Str(_) => DataType::Utf8,
                other => any_type(other, column, None)?,
            };
            DataType::Dictionary(Box::new(key), Box::new(value))
        }
    })
}

fn field(column: &Column, name: &str) -> Result<Field> {
    let dt = values_type(column.values(), column)?;
    let mut f = Field::new(name, dt, true);
    if let Values::Categorical(c) = column.values() {
        f = f.with_dict_is_ordered(c.ordered);
    }
    Ok(f)
}

fn nulls(validity: Option<&[bool]>, start: usize, end: usize) -> Option<NullBuffer> {
    validity.map(|v| NullBuffer::from(&v[start..end]))
}

fn slice<T: Clone>(a: &ndarray::ArrayD<T>, start: usize, end: usize) -> Vec<T> {
    match a.as_slice() {
        Some(s) => s[start..end].to_vec(),
        None => a.iter().skip(start).take(end - start).cloned().collect(),
    }
}

/// Entries `start..end` of a 1-D array, by reference.
fn items<T>(a: &ndarray::ArrayD<T>, start: usize, end: usize) -> Box<dyn Iterator<Item = &T> + '_> {
    match a.as_slice() {
        Some(s) => Box::new(s[start..end].iter()),
        None => Box::new(a.iter().skip(start).take(end - start)),
    }
}

/// Counts in `unit` converted to the Parquet unit (NaT stays NaT); a value
/// that overflows is an error, never a wrapped instant.
fn times(
    a: &ndarray::ArrayD<i64>,
    (unit, datetime): (&Option<String>, bool),
    column: &Column,
    start: usize,
    end: usize,
) -> Result<(TimeUnit, Vec<i64>)> {
    let (target, factor) = time_unit(unit, column, datetime)?;
    let mut v = slice(a, start, end);
    if factor != 1 {
        for x in v.iter_mut().filter(|x| **x != NAT) {
            *x = x.checked_mul(factor).filter(|y| *y != NAT).ok_or_else(|| {
                unsupported(
                    column,
                    format!(
                        "{x} {} does not fit in 64-bit {}",
                        unit.as_deref().unwrap_or(""),
                        target.as_str()
                    ),
                )
            })?;
        }
    }
    Ok((target, v))
}

fn array(column: &Column, start: usize, end: usize) -> Result<ArrayRef> {
    match column.values() {
        Values::Array(a) => any_array(a, column.validity(), column, column.timezone(), start, end),
        Values::Categorical(c) => {
            let codes = c.codes_i64()?;
            let codes = &codes[start..end];
            let keep: Vec<bool> = codes.iter().map(|&k| k >= 0).collect();
            let key_nulls = (!keep.iter().all(|&k| k)).then(|| NullBuffer::from(keep));
            let n = c.num_categories();
            // Categories of strings are `string` in pyarrow's schema.
            let plain =
                Column::new("", Values::strings(Vec::<String>::new())).with_pandas_dtype("object");
            let cat_column = if matches!(c.categories, AnyArray::Str(_)) {
                &plain
            } else {
                column
            };
            let dict = any_array(&c.categories, None, cat_column, None, 0, n)?;
            macro_rules! dict {
                ($t:ty, $native:ty) => {{
                    let keys: Vec<$native> = codes.iter().map(|&k| k.max(0) as $native).collect();
                    Arc::new(DictionaryArray::<$t>::try_new(
                        PrimitiveArray::<$t>::new(keys.into(), key_nulls),
                        dict,
                    )?) as ArrayRef
                }};
            }
            Ok(match &c.codes {
                AnyArray::I8(_) => dict!(Int8Type, i8),
                AnyArray::I16(_) => dict!(Int16Type, i16),
                AnyArray::I32(_) => dict!(Int32Type, i32),
                _ => dict!(Int64Type, i64),
            })
        }
    }
}

fn any_array(
    a: &AnyArray,
    validity: Option<&[bool]>,
    column: &Column,
    tz: Option<&str>,
    start: usize,
    end: usize,
) -> Result<ArrayRef> {
    let nulls = nulls(validity, start, end);
    let valid = |i: usize| validity.is_none_or(|m| m[start + i]);
    macro_rules! prim {
        ($t:ty, $a:expr) => {
            Arc::new(PrimitiveArray::<$t>::new(
                slice($a, start, end).into(),
                nulls,
            )) as ArrayRef
        };
    }
    Ok(match a {
        AnyArray::Bool(a) => Arc::new(BooleanArray::new(
            slice(a, start, end).into_iter().collect(),
            nulls,
        )),
        AnyArray::I8(a) => prim!(Int8Type, a),
        AnyArray::I16(a) => prim!(Int16Type, a),
        AnyArray::I32(a) => prim!(Int32Type, a),
        AnyArray::I64(a) => prim!(Int64Type, a),
        AnyArray::U8(a) => prim!(UInt8Type, a),
        AnyArray::U16(a) => prim!(UInt16Type, a),
        AnyArray::U32(a) => prim!(UInt32Type, a),
        AnyArray::U64(a) => prim!(UInt64Type, a),
        AnyArray::F16(a) => prim!(Float16Type, a),
        AnyArray::F32(a) => prim!(Float32Type, a),
        AnyArray::F64(a) => prim!(Float64Type, a),
        AnyArray::Str(v) => {
            let items = items(v, start, end)
                .enumerate()
                .map(|(i, s)| valid(i).then_some(s.as_str()));
            if large_strings(column) {
                Arc::new(items.collect::<LargeStringArray>())
            } else {
                Arc::new(items.collect::<StringArray>())
            }
        }
        AnyArray::Bytes(v) => Arc::new(
            items(v, start, end)
                .enumerate()
                .map(|(i, s)| valid(i).then_some(s.as_slice()))
                .collect::<BinaryArray>(),
        ),
        AnyArray::Datetime64 { array, unit } => {
            let (unit, v) = times(array, (unit, true), column, start, end)?;
            let nulls = nat_nulls(&v, nulls);
            let tz: Option<Arc<str>> = tz.map(Arc::from);
            match unit {
                TimeUnit::Second => Arc::new(
                    PrimitiveArray::<TimestampSecondType>::new(v.into(), nulls)
                        .with_timezone_opt(tz),
                ),
                TimeUnit::Millisecond => Arc::new(
                    PrimitiveArray::<TimestampMillisecondType>::new(v.into(), nulls)
                        .with_timezone_opt(tz),
                ),
                TimeUnit::Microsecond => Arc::new(
                    PrimitiveArray::<TimestampMicrosecondType>::new(v.into(), nulls)
                        .with_timezone_opt(tz),
                ),
                TimeUnit::Nanosecond => Arc::new(
                    PrimitiveArray::<TimestampNanosecondType>::new(v.into(), nulls)
                        .with_timezone_opt(tz),
                ),
            }
        }
        AnyArray::Timedelta64 { array, unit } => {
            let (unit, v) = times(array, (unit, false), column, start, end)?;
            let nulls = nat_nulls(&v, nulls);
            match unit {
                TimeUnit::Second => {
                    Arc::new(PrimitiveArray::<DurationSecondType>::new(v.into(), nulls))
                }
                TimeUnit::Millisecond => Arc::new(PrimitiveArray::<DurationMillisecondType>::new(
                    v.into(),
                    nulls,
                )),
                TimeUnit::Microsecond => Arc::new(PrimitiveArray::<DurationMicrosecondType>::new(
                    v.into(),
                    nulls,
                )),
                TimeUnit::Nanosecond => Arc::new(PrimitiveArray::<DurationNanosecondType>::new(
                    v.into(),
                    nulls,
                )),
            }
        }
        _ => return Err(any_type(a, column, tz).unwrap_err()),
    })
}

/// `NaT` values are missing in Parquet, as pandas writes them.
fn nat_nulls(values: &[i64], nulls: Option<NullBuffer>) -> Option<NullBuffer> {
    if !values.contains(&NAT) {
        return nulls;
    }
    let keep = values
        .iter()
        .enumerate()
        .map(|(i, &v)| v != NAT && nulls.as_ref().is_none_or(|n| n.is_valid(i)));
    Some(NullBuffer::from_iter(keep))
}

/// The Arrow writer re-encodes a dictionary in order of first appearance and
/// drops unused entries. Categories of strings and bytes do not go through
/// it (dictionary.rs); pyarrow reads other categoricals as plain values, so
/// for an unordered one nothing is lost, and an ordered one whose order
/// would change is refused.
fn check_categories_survive(column: &Column) -> Result<()> {
    let Values::Categorical(c) = column.values() else {
        return Ok(());
    };
    if !c.ordered || crate::dictionary::handles(c) {
        return Ok(());
    }
    let mut next = 0i64;
    for code in c.codes_i64()? {
        if code == next {
            next += 1;
        } else if code > next {
            break;
        }
    }
    if next as usize == c.num_categories() {
        return Ok(());
    }
    Err(Error::Unsupported {
        column: column.name().unwrap_or_default().to_owned(),
        reason: "an ordered categorical whose categories do not all appear, in order of first \
                 appearance, cannot be written exactly (the Parquet writer re-encodes dictionaries \
                 in order of appearance, which would change the order)"
            .into(),
    })
}

/// `Frame`'s writers, here rather than beside the type: they write files.
impl Frame {
    /// Writes a Parquet file that pandas reads back into an equal DataFrame
    /// (snappy-compressed, as pandas does).
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, Values};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f.parquet");
    /// Frame::new(vec![Column::new("s", Values::strings(["a"]))])?.write(&path)?;
    /// // A Parquet file starts (and ends) with the magic `PAR1`.
    /// assert!(std::fs::read(&path)?.starts_with(b"PAR1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write<P: AsRef<Path>>(&self, path: P) -> Result<()> {
        self.write_with(path, &WriteOptions::default())
    }
    /// [`Frame::write`] with explicit options.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Compression, Frame, Values, WriteOptions};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f.parquet");
    /// let f = Frame::new(vec![Column::new("s", Values::strings(["a"]))])?;
    /// f.write_with(&path, &WriteOptions { compression: Compression::Gzip, ..WriteOptions::default() })?;
    /// assert_eq!(Frame::read(&path)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_with<P: AsRef<Path>>(&self, path: P, options: &WriteOptions) -> Result<()> {
        write_path(self, path.as_ref(), options)
    }
    /// Writes the Parquet file into memory.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, Values, WriteOptions};
    /// let f = Frame::new(vec![Column::new("s", Values::strings(["a"]))])?;
    /// let bytes = f.to_bytes(&WriteOptions::default())?;
    /// assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn to_bytes(&self, options: &WriteOptions) -> Result<Vec<u8>> {
        write_to(self, Vec::new(), options)
    }
}
