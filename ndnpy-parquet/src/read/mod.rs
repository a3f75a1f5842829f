//! Parquet → [`Frame`]: decode record batches into column accumulators, then
//! arrange them as the `pandas` key says.
//!
//! Memory: each batch is converted and dropped before the next is decoded,
//! and the total the accumulators hold is checked against
//! [`ReadOptions`](crate::ReadOptions) after every batch, so a file whose
//! footer claims more rows than its pages hold, or whose pages expand without
//! bound, fails with [`Error::TooLarge`] instead of exhausting memory.

use crate::model::column::Column;

use crate::error::{Error, Result};
use crate::model::frame::{Frame, Index, RangeIndex, ReadOptions};
use crate::model::meta::{self, ColumnMeta, IndexSpec};
use arrow_array::types::*;
use arrow_array::ArrayRef;
use arrow_schema::Schema;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::ChunkReader;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

mod columns;
use columns::Acc;

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

/// What a footer says of the frame: its `pandas` key parsed (from the
/// footer's key-value list, or else from the metadata inside
/// ARROW:schema; refused if it describes a column the schema lacks), and
/// the rows its row groups claim in all.
pub(crate) fn footer(
    metadata: &ParquetMetaData,
    schema: &Schema,
) -> Result<(Option<meta::PandasMeta>, u64)> {
    let pandas = metadata
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == "pandas"))
        .and_then(|k| k.value.as_deref())
        .or_else(|| schema.metadata().get("pandas").map(String::as_str))
        .map(meta::parse)
        .transpose()?;
    let names: std::collections::HashSet<&str> =
        schema.fields().iter().map(|f| f.name().as_str()).collect();
    for m in pandas.iter().flat_map(|p| &p.columns) {
        if !names.contains(m.field_name.as_str()) {
            return Err(Error::Metadata(format!(
                "the metadata describes a column {:?} that the file does not have",
                m.field_name
            )));
        }
    }
    let mut rows: u64 = 0;
    for rg in metadata.row_groups() {
        let n = u64::try_from(rg.num_rows())
            .map_err(|_| Error::Parquet(format!("a row group claims {} rows", rg.num_rows())))?;
        rows = rows.saturating_add(n);
    }
    Ok((pandas, rows))
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
    let (pandas, rows) = footer(&metadata, &schema)?;
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
            r.check_rows(rows)?;
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
pub(crate) fn check_dictionaries<T: ChunkReader + 'static>(source: T, limit: u64) -> Result<()> {
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

/// `Frame`'s readers, here rather than beside the type: they parse files.
impl Frame {
    /// Reads a Parquet file; see the crate documentation for what is kept.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, Values};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f.parquet");
    /// Frame::new(vec![Column::new("s", Values::strings(["a", "b"]))])?.write(&path)?;
    /// let f = Frame::read(&path)?;
    /// assert_eq!(f.column("s").unwrap().values(), &Values::strings(["a", "b"]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read<P: AsRef<Path>>(path: P) -> Result<Self> {
        Self::read_with(path, &ReadOptions::default())
    }
    /// [`Frame::read`] with explicit options.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, ReadOptions, Values};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f.parquet");
    /// Frame::new(vec![Column::new("s", Values::strings(["a"]))])?.write(&path)?;
    /// // A generous limit for a file known to expand a lot.
    /// let options = ReadOptions { max_bytes: Some(1 << 30) };
    /// assert_eq!(Frame::read_with(&path, &options)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        read_path(path.as_ref(), options)
    }
    /// Reads a Parquet file held in memory.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, ReadOptions, Values, WriteOptions};
    /// // A file fetched over the network, say: no temporary file needed.
    /// let f = Frame::new(vec![Column::new("s", Values::strings(["a"]))])?;
    /// let bytes = f.to_bytes(&WriteOptions::default())?;
    /// let back = Frame::from_bytes(&bytes, &ReadOptions::default())?;
    /// assert_eq!(back.column("s").unwrap().values(), f.column("s").unwrap().values());
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8], options: &ReadOptions) -> Result<Self> {
        read_bytes(bytes, options)
    }
}
