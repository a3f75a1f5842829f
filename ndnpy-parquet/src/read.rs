//! Parquet → [`Frame`]: decode record batches into column accumulators, then
//! arrange them as the `pandas` key says.
//!
//! Memory: each batch is converted and dropped before the next is decoded,
//! and the total the accumulators hold is checked against
//! [`ReadOptions`](crate::ReadOptions) after every batch, so a file whose
//! footer claims more rows than its pages hold, or whose pages expand without
//! bound, fails with [`Error::TooLarge`] instead of exhausting memory.

use crate::column::{Categorical, Column, TimeUnit, Values, NAT};

use crate::error::{Error, Result};
use crate::frame::{Frame, Index, RangeIndex, ReadOptions};
use crate::meta::{self, ColumnMeta, IndexSpec};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field, TimeUnit as ArrowUnit};
use ndarray::Array1;
use ndnpy::AnyArray;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::file::reader::ChunkReader;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Rows per decoded batch: small enough that one batch of long strings stays
/// far below the memory limit before it is checked.
const BATCH_ROWS: usize = 4096;

pub(crate) fn read_path(path: &Path, options: &ReadOptions) -> Result<Frame> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    read_source(|| Ok(file.try_clone()?), len, options)
}

pub(crate) fn read_bytes(bytes: &[u8], options: &ReadOptions) -> Result<Frame> {
    let bytes = bytes::Bytes::copy_from_slice(bytes);
    read_source(|| Ok(bytes.clone()), bytes.len() as u64, options)
}

/// Decodes `source`, turning a panic of the Parquet/Arrow decoder into an
/// error: some corrupt files (found by `tests/hostile.rs`) make `parquet` 60
/// panic (e.g. "offset + len out of bounds" in `arrow-buffer`) instead of
/// returning an error. Builds with `panic = "abort"` still abort there.
fn read_source<T: ChunkReader + 'static>(
    source: impl Fn() -> Result<T>,
    file_len: u64,
    options: &ReadOptions,
) -> Result<Frame> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        decode(source, file_len, options)
    }))
    .unwrap_or_else(|panic| {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Error::Parquet(format!(
            "corrupt data (the decoder failed: {msg})"
        )))
    })
}

/// `source` gives a reader of the file each time it is called: one per row
/// group, since a batch that spans row groups with different dictionaries
/// comes out of the Arrow reader re-encoded (in order of appearance, with
/// entries for missing values), which would change categories.
fn decode<T: ChunkReader + 'static>(
    source: impl Fn() -> Result<T>,
    file_len: u64,
    options: &ReadOptions,
) -> Result<Frame> {
    let limit = options.limit_for(file_len);
    let arrow_meta = ArrowReaderMetadata::load(&source()?, Default::default())?;
    let metadata = arrow_meta.metadata().clone();
    let schema = arrow_meta.schema().clone();
    // The footer's key-value list, or else the metadata inside ARROW:schema.
    let pandas = metadata
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == "pandas"))
        .and_then(|k| k.value.as_deref())
        .or_else(|| schema.metadata().get("pandas").map(String::as_str))
        .map(meta::parse)
        .transpose()?;
    let mut rows: u64 = 0;
    for rg in metadata.row_groups() {
        let n = u64::try_from(rg.num_rows())
            .map_err(|_| Error::Parquet(format!("a row group claims {} rows", rg.num_rows())))?;
        rows = rows.saturating_add(n);
    }
    let metas: HashMap<String, ColumnMeta> = pandas
        .iter()
        .flat_map(|p| p.columns.iter())
        .map(|m| (m.field_name.clone(), m.clone()))
        .collect();
    let mut accs = schema
        .fields()
        .iter()
        .map(|f| Acc::new(f, metas.get(f.name().as_str())))
        .collect::<Result<Vec<_>>>()?;
    // What the claimed row count would take at the least: refuse before any
    // allocation when that is already over the limit; reserve when it is not.
    let width: u64 = accs.iter().map(Acc::min_row_bytes).sum();
    let claimed = rows.saturating_mul(width);
    if claimed > limit {
        return Err(Error::TooLarge {
            needed: claimed,
            limit,
        });
    }
    if let Ok(r) = usize::try_from(rows) {
        accs.iter_mut().for_each(|a| a.reserve(r));
    }
    check_dictionaries(source()?, limit)?;
    let mut read_rows: u64 = 0;
    let batches = (0..metadata.num_row_groups()).map(|rg| {
        ParquetRecordBatchReaderBuilder::new_with_metadata(source()?, arrow_meta.clone())
            .with_row_groups(vec![rg])
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(Error::from)
    });
    for batch in batches.flat_map(|reader| match reader {
        Ok(r) => Box::new(r.map(|b| b.map_err(Error::from)))
            as Box<dyn Iterator<Item = Result<arrow_array::RecordBatch>>>,
        Err(e) => Box::new(std::iter::once(Err(e))),
    }) {
        let batch = batch?;
        read_rows += batch.num_rows() as u64;
        let mut used = 0u64;
        for (acc, array) in accs.iter_mut().zip(batch.columns()) {
            acc.push(array.as_ref())?;
            used = used.saturating_add(acc.bytes);
        }
        if used > limit {
            return Err(Error::TooLarge {
                needed: used,
                limit,
            });
        }
    }
    if read_rows != rows {
        return Err(Error::Parquet(format!(
            "the footer claims {rows} rows, the pages hold {read_rows}"
        )));
    }
    let len = usize::try_from(rows).map_err(|_| Error::TooLarge {
        needed: rows,
        limit,
    })?;
    let mut columns: Vec<Option<Column>> = accs
        .into_iter()
        .map(|acc| acc.finish().map(Some))
        .collect::<Result<_>>()?;
    let Some(pandas) = pandas else {
        let columns = columns.into_iter().flatten().collect();
        return Ok(Frame {
            columns,
            index: Index::Range(RangeIndex::default_for(len)),
            len,
            column_indexes: None,
            attributes: None,
        });
    };
    let position = |field_name: &str| schema.fields().iter().position(|f| f.name() == field_name);
    for m in &pandas.columns {
        if position(&m.field_name).is_none() {
            return Err(Error::Metadata(format!(
                "the metadata describes a column {:?} that the file does not have",
                m.field_name
            )));
        }
    }
    let index = match pandas.index_columns.as_slice() {
        [] => Index::Range(RangeIndex::default_for(len)),
        [IndexSpec::Range {
            name,
            start,
            stop,
            step,
        }] => {
            let r = RangeIndex {
                start: *start,
                stop: *stop,
                step: *step,
                name: name.clone(),
            };
            if r.len() != Some(rows) {
                return Err(Error::Metadata(format!(
                    "RangeIndex({start}, {stop}, {step}) has {:?} labels; the file has {rows} rows",
                    r.len()
                )));
            }
            Index::Range(r)
        }
        specs => {
            let mut levels = Vec::with_capacity(specs.len());
            for spec in specs {
                let IndexSpec::Field(field_name) = spec else {
                    return Err(Error::Metadata(
                        "a RangeIndex can only be the whole index".into(),
                    ));
                };
                let Some(i) = position(field_name) else {
                    return Err(Error::Metadata(format!(
                        "index column {field_name:?} is not in the file"
                    )));
                };
                let Some(mut column) = columns[i].take() else {
                    return Err(Error::Metadata(format!(
                        "index column {field_name:?} is listed twice"
                    )));
                };
                let name = match metas.get(field_name.as_str()) {
                    Some(m) => m.name.clone(),
                    None if is_level_field(field_name) => None,
                    None => Some(field_name.clone()),
                };
                column.rename(name);
                levels.push(column);
            }
            Index::Columns(levels)
        }
    };
    Ok(Frame {
        columns: columns.into_iter().flatten().collect(),
        index,
        len,
        column_indexes: pandas.column_indexes,
        attributes: pandas.attributes,
    })
}

/// Refuses dictionary pages whose count of values their bytes cannot hold.
///
/// The Parquet decoder sizes a dictionary from its page header's count
/// before decoding it (`parquet` 60, `DictDecoder::set_dict`), so a page of
/// a few bytes claiming 10⁹ entries would make it allocate gigabytes (found
/// by fuzzing, `fixtures/parquet/hostile/fuzz_dictionary_count.parquet`).
/// The dictionary page of every column chunk is read here, decompressed
/// (what the decoder would do next anyway), and one anywhere but first in
/// its chunk is refused; a dictionary page must hold at least the
/// bytes its count needs in PLAIN encoding, and all dictionaries together
/// stay under the memory limit.
fn check_dictionaries<T: ChunkReader + 'static>(source: T, limit: u64) -> Result<()> {
    use parquet::basic::Type as Physical;
    use parquet::column::page::Page;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(source)?;
    let mut total: u64 = 0;
    for rg in 0..reader.num_row_groups() {
        let row_group = reader.get_row_group(rg)?;
        for col in 0..row_group.num_columns() {
            let descr = row_group.metadata().column(col).column_descr_ptr();
            let mut pages = row_group.get_column_page_reader(col)?;
            // Every page header is looked at (data pages are skipped, not
            // decompressed): the decoder takes a dictionary page wherever
            // it appears in the chunk, so one hidden after a data page or
            // a second one would escape a check of the first page alone.
            let mut first = true;
            while let Some(meta) = pages.peek_next_page()? {
                if !meta.is_dict {
                    pages.skip_next_page()?;
                    first = false;
                    continue;
                }
                if !first {
                    return Err(Error::Parquet(format!(
                        "column {:?}: a dictionary page that is not the chunk's first page",
                        descr.path().string()
                    )));
                }
                first = false;
                let Some(Page::DictionaryPage {
                    buf, num_values, ..
                }) = pages.get_next_page()?
                else {
                    continue;
                };
                // Bits per entry at the least, in PLAIN encoding.
                let bits: u64 = match descr.physical_type() {
                    Physical::BOOLEAN => 1,
                    Physical::INT32 | Physical::FLOAT => 32,
                    Physical::INT64 | Physical::DOUBLE => 64,
                    Physical::INT96 => 96,
                    Physical::BYTE_ARRAY => 32,
                    Physical::FIXED_LEN_BYTE_ARRAY => 8 * descr.type_length().max(0) as u64,
                };
                let needed = (num_values as u64 * bits).div_ceil(8);
                if needed > buf.len() as u64 {
                    return Err(Error::Parquet(format!(
                        "column {:?}: a dictionary page claims {num_values} entries in {} bytes",
                        descr.path().string(),
                        buf.len()
                    )));
                }
                // Decoded, an entry takes at least 8 bytes (an offset or a value).
                total = total.saturating_add((num_values as u64).saturating_mul(8));
                if total > limit {
                    return Err(Error::TooLarge {
                        needed: total,
                        limit,
                    });
                }
            }
        }
    }
    Ok(())
}

/// `__index_level_N__`: the field name pyarrow gives an unnamed index level.
fn is_level_field(name: &str) -> bool {
    name.strip_prefix("__index_level_")
        .and_then(|r| r.strip_suffix("__"))
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

fn unit(u: &ArrowUnit) -> TimeUnit {
    match u {
        ArrowUnit::Second => TimeUnit::Second,
        ArrowUnit::Millisecond => TimeUnit::Millisecond,
        ArrowUnit::Microsecond => TimeUnit::Microsecond,
        ArrowUnit::Nanosecond => TimeUnit::Nanosecond,
    }
}

/// Values being collected, by family.
enum Buf {
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
struct CatBuf {
    codes: Vec<i64>,
    categories: Acc,
    lookup: HashMap<Vec<u8>, i64>,
    /// The last dictionary and where its entries went.
    last: Option<(ArrayRef, Vec<i64>)>,
    ordered: bool,
}

/// One column being collected: values, validity, and the bytes held.
struct Acc {
    buf: Buf,
    valid: Option<Vec<bool>>,
    len: usize,
    bytes: u64,
    meta: Option<ColumnMeta>,
    name: String,
}

fn unsupported(field: &Field, meta: Option<&ColumnMeta>) -> Error {
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
    fn new(field: &Field, meta: Option<&ColumnMeta>) -> Result<Self> {
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

    fn buf_for(field: &Field, dt: &DataType, meta: Option<&ColumnMeta>) -> Result<Buf> {
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
                let tz = tz.as_deref().map(str::to_owned).or_else(|| {
                    meta.filter(|m| m.pandas_type == "datetimetz")
                        .and_then(|m| m.metadata.get("timezone"))
                        .and_then(|v| v.as_str())
                        .map(str::to_owned)
                });
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
    fn min_row_bytes(&self) -> u64 {
        match &self.buf {
            Buf::Bool(_) | Buf::I8(_) | Buf::U8(_) => 1,
            Buf::I16(_) | Buf::U16(_) | Buf::F16(_) => 2,
            Buf::I32(_) | Buf::U32(_) | Buf::F32(_) => 4,
            Buf::Str(_) | Buf::Bytes(_) => 24,
            _ => 8,
        }
    }

    fn reserve(&mut self, n: usize) {
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

    fn push(&mut self, array: &dyn Array) -> Result<()> {
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
    fn key(&self, i: usize) -> Vec<u8> {
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

    fn finish(self) -> Result<Column> {
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
                    codes: crate::convert::narrow_codes(c.codes, k),
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
    fn map_dictionary(&mut self, values: &dyn Array) -> Result<Vec<i64>> {
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

/// Reads a small fixed file (int, float, string, dictionary, timestamp,
/// duration columns) whose `pandas` key is `json`: the fuzz target over the
/// pandas JSON, without rewriting a file per input by hand.
pub fn read_with_pandas_json(json: &str) -> Result<Frame> {
    use arrow_array::{
        DictionaryArray, DurationMicrosecondArray, Float64Array, Int64Array, RecordBatch,
        StringArray, TimestampMicrosecondArray,
    };
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "a",
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])),
        ),
        ("b", Arc::new(Float64Array::from(vec![0.5, f64::NAN, 2.0]))),
        (
            "s",
            Arc::new(StringArray::from(vec![Some("x"), None, Some("z")])),
        ),
        (
            "c",
            Arc::new(DictionaryArray::<Int8Type>::from_iter(["p", "q", "p"])),
        ),
        (
            "t",
            Arc::new(
                TimestampMicrosecondArray::from(vec![Some(0), None, Some(7)]).with_timezone("UTC"),
            ),
        ),
        ("d", Arc::new(DurationMicrosecondArray::from(vec![1, 2, 3]))),
        (
            "__index_level_0__",
            Arc::new(Int64Array::from(vec![9, 8, 7])),
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns)?;
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "pandas".to_owned(),
            json.to_owned(),
        )]))
        .build();
    let mut writer = ArrowWriter::try_new(Vec::new(), batch.schema(), Some(props))?;
    writer.write(&batch)?;
    let bytes = writer.into_inner()?;
    read_bytes(&bytes, &ReadOptions::default())
}
