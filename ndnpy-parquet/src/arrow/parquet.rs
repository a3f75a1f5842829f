//! Record batches ↔ Parquet files as the Arrow writer and reader make them,
//! without the `pandas` key: the way N-dimensional members (fixed-shape
//! tensor columns, which a pandas frame cannot hold) reach Parquet.

use crate::error::{Error, Result};
use crate::model::frame::ReadOptions;
use arrow_array::RecordBatch;
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use std::path::Path;

/// Writes `batch` as a Parquet file at `path` through the Arrow writer,
/// whose `ARROW:schema` key keeps each field's metadata: a tensor column
/// ([`into_tensor`](super::into_tensor)) reads back in pyarrow as
/// `pa.fixed_shape_tensor`. The file is written beside `path` and renamed,
/// so a failed write leaves no truncated file under its name.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.parquet");
/// let x = ndnpy::AnyArray::F64(ndarray::Array3::<f64>::ones((3, 2, 2)).into_dyn());
/// let (field, column) = ndnpy_parquet::arrow::into_tensor("x", x.clone())?;
/// let schema = std::sync::Arc::new(arrow_schema::Schema::new(vec![field]));
/// let batch = arrow_array::RecordBatch::try_new(schema, vec![column])?;
/// ndnpy_parquet::arrow::write_parquet(&batch, &path)?;
///
/// let back = ndnpy_parquet::arrow::read_parquet(&path, &Default::default())?;
/// let field = back.schema().field(0).clone();
/// let (values, _) = ndnpy_parquet::arrow::from_tensor(&field, back.column(0).clone())?;
/// assert_eq!(values, x);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_parquet<P: AsRef<Path>>(batch: &RecordBatch, path: P) -> Result<()> {
    let path = path.as_ref();
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("batch"),
        std::process::id()
    ));
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut writer = ArrowWriter::try_new(file, batch.schema(), None)?;
        writer.write(batch)?;
        let file = writer.into_inner()?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Bytes one row of `data_type` takes at the least, decoded: its width,
/// an offset (4 bytes) for strings and other variable types, none for
/// bits.
fn row_bytes(data_type: &DataType) -> u64 {
    match data_type {
        DataType::FixedSizeList(item, n) => u64::try_from(*n)
            .unwrap_or(0)
            .saturating_mul(row_bytes(item.data_type())),
        DataType::Struct(fields) => fields.iter().map(|f| row_bytes(f.data_type())).sum(),
        DataType::Boolean | DataType::Null => 0,
        other => other.primitive_width().map_or(4, |w| w as u64),
    }
}

/// Reads a Parquet file as one record batch, its fields' metadata (the
/// tensor extension among it) restored from the file's `ARROW:schema`, as
/// pyarrow writes it (`pq.write_table` of a table with
/// `pa.fixed_shape_tensor` columns). Decoded data beyond
/// [`ReadOptions::max_bytes`] is [`Error::TooLarge`] (refused from the
/// footer's claims where they already exceed it, else found batch by
/// batch, and for dictionary pages before they are decoded, as
/// [`Frame::read`](crate::Frame::read) does); a decoder panic on a corrupt
/// file is an [`Error::Parquet`]. A file of several batches (over 16 MiB
/// or 4096 rows) is joined into one, so the peak is then about twice the
/// data.
///
/// ```
/// use arrow_array::{ArrayRef, Int32Array, RecordBatch};
/// use std::sync::Arc;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("b.parquet");
/// let v: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
/// ndnpy_parquet::arrow::write_parquet(&RecordBatch::try_from_iter([("v", v)])?, &path)?;
/// let back = ndnpy_parquet::arrow::read_parquet(&path, &Default::default())?;
/// assert_eq!(back.num_rows(), 3);
///
/// let tiny = ndnpy_parquet::ReadOptions { max_bytes: Some(8) };
/// assert!(ndnpy_parquet::arrow::read_parquet(&path, &tiny).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_parquet<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<RecordBatch> {
    let file = std::fs::File::open(path)?;
    let limit = options.limit_for(file.metadata()?.len());
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode(file, limit))).unwrap_or_else(
        |panic| {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(Error::Parquet(format!(
                "corrupt data (the decoder failed: {msg})"
            )))
        },
    )
}

/// Decodes the file with the checks `Frame::read` makes before it lets
/// the decoder allocate: the rows the footer claims times the least width
/// of a row, and every dictionary page's count against its bytes
/// (`check_dictionaries`); then the decoded batches against the limit as
/// they come, and the rows read against the rows claimed.
fn decode(file: std::fs::File, limit: u64) -> Result<RecordBatch> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(file.try_clone()?)?;
    let schema = builder.schema().clone();
    let width: u64 = schema
        .fields()
        .iter()
        .map(|f| row_bytes(f.data_type()))
        .fold(0u64, u64::saturating_add);
    let claimed: u64 = builder
        .metadata()
        .row_groups()
        .iter()
        .map(|rg| u64::try_from(rg.num_rows()).unwrap_or(u64::MAX))
        .fold(0u64, u64::saturating_add);
    if claimed.saturating_mul(width) > limit {
        return Err(Error::TooLarge {
            needed: claimed.saturating_mul(width),
            limit,
        });
    }
    crate::read::check_dictionaries(file, limit)?;
    // Batches of about 16 MiB, so that one batch of wide tensor rows is not
    // far over the limit before it is counted.
    let rows = ((16u64 << 20) / width.max(1)).clamp(1, 4096) as usize;
    let reader = builder.with_batch_size(rows).build()?;
    let mut batches = Vec::new();
    let mut used: u64 = 0;
    let mut read: u64 = 0;
    for batch in reader {
        let batch = batch?;
        read += batch.num_rows() as u64;
        used = used.saturating_add(batch.get_array_memory_size() as u64);
        if used > limit {
            return Err(Error::TooLarge {
                needed: used,
                limit,
            });
        }
        batches.push(batch);
    }
    if read != claimed {
        return Err(Error::Parquet(format!(
            "the footer claims {claimed} rows, the pages hold {read}"
        )));
    }
    // One batch is the result as it is (no copy); several are joined.
    if batches.len() == 1 {
        return Ok(batches.remove(0).with_schema(schema)?);
    }
    Ok(arrow_select::concat::concat_batches(&schema, &batches)?)
}
