//! The opener: one object (or one row range of it) as a stream of record
//! batches. Only the members behind the projected columns are read; a
//! stored member's rows are one ranged GET a batch (decoded by the
//! library from a header of that many rows and the bytes), a compressed
//! or Fortran-order member is read whole once and sliced. Batches are
//! made as the stream is polled, so `LIMIT` stops the reads early.

use crate::columns::to_columns;
use crate::error::{in_file, npy_error};
use crate::layout::{self, Data, Layout, Member};
use crate::ranges::RangeReader;
use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::error::{DataFusionError, Result};
use datafusion_datasource::file_stream::{FileOpenFuture, FileOpener};
use datafusion_datasource::{FileRange, PartitionedFile};
use futures::StreamExt;
use ndnpy::{AnyArray, NpzReader, ReadOptions};
use object_store::{path::Path, ObjectStore, ObjectStoreExt};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// The least data a GET of stored rows brings (when batches are narrow):
/// fewer, larger reads of local files and object stores alike.
const MIN_CHUNK_BYTES: u64 = 1 << 20;
/// The most data a GET of stored rows brings (when rows are large arrays):
/// a batch's memory stays bounded whatever a row holds.
const MAX_CHUNK_BYTES: u64 = 64 << 20;

/// Opens the objects of one partition.
pub(crate) struct NpyOpener {
    pub store: Arc<dyn ObjectStore>,
    pub file_schema: SchemaRef,
    /// The file columns to read, in output order.
    pub columns: Vec<usize>,
    pub batch_size: usize,
}

impl FileOpener for NpyOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let store = self.store.clone();
        let file_schema = self.file_schema.clone();
        let columns = self.columns.clone();
        let batch_size = self.batch_size.max(1);
        Ok(Box::pin(async move {
            let path = file.object_meta.location.to_string();
            let Some(layout) = layout::fetch(&store, &file.object_meta).await? else {
                return Ok(futures::stream::empty().boxed());
            };
            check_schema(&layout, &file_schema, &path)?;
            let rows = row_range(&layout, file.range.as_ref(), file.object_meta.size);
            let picks = pick(&layout, &columns)?;
            let row_bytes: u64 = picks
                .iter()
                .map(|&(m, _)| match layout.members[m].data {
                    Data::Rows { row_bytes, .. } => row_bytes,
                    Data::Whole { .. } => 0,
                })
                .sum();
            let row_bytes = row_bytes.max(1);
            let step = (MIN_CHUNK_BYTES / row_bytes)
                .max(batch_size as u64)
                .min((MAX_CHUNK_BYTES / row_bytes).max(1)) as usize;
            let scan = Scan {
                store,
                location: file.object_meta.location.clone(),
                size: file.object_meta.size,
                path,
                layout,
                picks,
                whole: HashMap::new(),
                schema: Arc::new(file_schema.project(&columns)?),
                next: rows.start,
                end: rows.end,
                step: step.max(1),
            };
            let stream = futures::stream::try_unfold(scan, |mut s| async move {
                if s.next >= s.end {
                    return Ok(None);
                }
                let (a, b) = (s.next, (s.next + s.step).min(s.end));
                s.next = b;
                let batch = s.batch(a, b).await?;
                Ok(Some((batch, s)))
            });
            Ok(stream.boxed())
        }))
    }
}

/// The object's columns must be the table's (a folder of `.npy` shards is
/// one table only when every shard has one dtype and trailing shape).
pub(crate) fn check_schema(layout: &Layout, schema: &SchemaRef, path: &str) -> Result<()> {
    let fields = layout.fields();
    let same = fields.len() == schema.fields().len()
        && fields
            .iter()
            .zip(schema.fields())
            .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
    if same {
        return Ok(());
    }
    let show = |f: &mut dyn Iterator<Item = (&String, String)>| {
        f.map(|(n, t)| format!("{n}: {t}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(in_file(
        path,
        DataFusionError::Execution(format!(
            "its columns ({}) are not the table's ({}): the files of a table share one dtype \
             and trailing shape",
            show(&mut fields.iter().map(|f| (f.name(), f.data_type().to_string()))),
            show(
                &mut schema
                    .fields()
                    .iter()
                    .map(|f| (f.name(), f.data_type().to_string()))
            ),
        )),
    ))
}

/// The rows of a partition's byte range: the rows whose first byte lies in
/// it (for an `.npy`), or the same share of the rows as of the bytes (for
/// an `.npz` of stored members). Consecutive ranges give consecutive rows,
/// each row once. A file with a member read whole (compressed, or in
/// Fortran order) is read by the range that starts it alone, so that no
/// member is decoded once per range.
pub(crate) fn row_range(layout: &Layout, range: Option<&FileRange>, size: u64) -> Range<usize> {
    let n = layout.rows as u64;
    let Some(r) = range else {
        return 0..layout.rows;
    };
    if layout
        .members
        .iter()
        .any(|m| matches!(m.data, Data::Whole { .. }))
    {
        return if r.start <= 0 { 0..layout.rows } else { 0..0 };
    }
    let at = |b: i64| -> usize {
        let b = b.max(0) as u64;
        let row = match layout.members.first().map(|m| &m.data) {
            Some(&Data::Rows { offset, row_bytes }) if !layout.archive && row_bytes > 0 => {
                b.saturating_sub(offset).div_ceil(row_bytes)
            }
            _ => (u128::from(n) * u128::from(b)).div_ceil(u128::from(size.max(1))) as u64,
        };
        row.min(n) as usize
    };
    at(r.start)..at(r.end).max(at(r.start))
}

/// For each projected column, its member and its place among the member's
/// columns.
fn pick(layout: &Layout, columns: &[usize]) -> Result<Vec<(usize, usize)>> {
    let mut all = Vec::new();
    for (m, member) in layout.members.iter().enumerate() {
        all.extend((0..member.fields.len()).map(|k| (m, k)));
    }
    columns
        .iter()
        .map(|&c| {
            all.get(c).copied().ok_or_else(|| {
                DataFusionError::Internal(format!("column {c} of {} requested", all.len()))
            })
        })
        .collect()
}

/// The state of one object's stream.
struct Scan {
    store: Arc<dyn ObjectStore>,
    location: Path,
    size: u64,
    path: String,
    layout: Layout,
    picks: Vec<(usize, usize)>,
    /// Members read whole, as their columns.
    whole: HashMap<usize, Vec<ArrayRef>>,
    schema: SchemaRef,
    next: usize,
    end: usize,
    step: usize,
}

impl Scan {
    /// Rows `a..b` of the projected columns.
    async fn batch(&mut self, a: usize, b: usize) -> Result<RecordBatch> {
        let mut read: HashMap<usize, Vec<ArrayRef>> = HashMap::new();
        for &(m, _) in &self.picks {
            if read.contains_key(&m) {
                continue;
            }
            let member = &self.layout.members[m];
            let columns = match member.data {
                Data::Rows { offset, row_bytes } => {
                    self.rows(member, offset, row_bytes, a, b).await?
                }
                Data::Whole { offset } => {
                    if !self.whole.contains_key(&m) {
                        let all = self.read_whole(member, offset).await?;
                        self.whole.insert(m, all);
                    }
                    self.whole[&m].iter().map(|c| c.slice(a, b - a)).collect()
                }
            };
            read.insert(m, columns);
        }
        let arrays = self
            .picks
            .iter()
            .map(|&(m, k)| read[&m][k].clone())
            .collect();
        let options = RecordBatchOptions::new().with_row_count(Some(b - a));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays,
            &options,
        )?)
    }

    /// Rows `a..b` of a member stored at `offset`: one GET, decoded with a
    /// header of `b - a` rows.
    async fn rows(
        &self,
        member: &Member,
        offset: u64,
        row_bytes: u64,
        a: usize,
        b: usize,
    ) -> Result<Vec<ArrayRef>> {
        let from = offset + a as u64 * row_bytes;
        let to = offset + b as u64 * row_bytes;
        let mut header = member.header.clone();
        header.shape[0] = b - a;
        let body = if to > from {
            self.store
                .get_range(&self.location, from..to)
                .await
                .map_err(|e| in_file(&self.path, e.into()))?
        } else {
            bytes::Bytes::new()
        };
        self.decode(member, header, &body)
    }

    /// A member read whole: a Fortran-order `.npy`'s data by one GET, a
    /// compressed member through the library on a blocking thread.
    async fn read_whole(&self, member: &Member, offset: Option<u64>) -> Result<Vec<ArrayRef>> {
        if let Some(offset) = offset {
            let len = member
                .header
                .data_len()
                .map_err(|e| npy_error(&self.path, e))? as u64;
            let body = self
                .store
                .get_range(&self.location, offset..offset + len)
                .await
                .map_err(|e| in_file(&self.path, e.into()))?;
            return self.decode(member, member.header.clone(), &body);
        }
        let (store, location, size) = (self.store.clone(), self.location.clone(), self.size);
        let (name, path) = (member.name.clone(), self.path.clone());
        let handle = tokio::runtime::Handle::current();
        let values = tokio::task::spawn_blocking(move || -> Result<AnyArray> {
            let reader = RangeReader::new(store, location, size, handle);
            let options = ReadOptions::default();
            let mut z = NpzReader::new_with(reader, &options).map_err(|e| npy_error(&path, e))?;
            z.read_any(&name).map_err(|e| npy_error(&path, e))
        })
        .await
        .map_err(|e| in_file(&self.path, DataFusionError::External(Box::new(e))))??;
        self.columns_of(member, values)
    }

    /// The columns of a member's `header` and data `body`.
    fn decode(
        &self,
        member: &Member,
        header: ndnpy::dtype::Header,
        body: &[u8],
    ) -> Result<Vec<ArrayRef>> {
        let mut bytes = header.to_bytes().map_err(|e| npy_error(&self.path, e))?;
        bytes.extend_from_slice(body);
        let values = AnyArray::from_npy_bytes_with(&bytes, &ReadOptions::default())
            .map_err(|e| npy_error(&self.path, e))?;
        self.columns_of(member, values)
    }

    fn columns_of(&self, member: &Member, values: AnyArray) -> Result<Vec<ArrayRef>> {
        let rows = values.shape().first().copied().unwrap_or(0);
        if values.shape() != [&[rows][..], &member.header.shape[1..]].concat() {
            return Err(in_file(
                &self.path,
                DataFusionError::Execution(format!(
                    "member `{}` read as shape {:?}, its header says {:?}",
                    member.name,
                    values.shape(),
                    member.header.shape
                )),
            ));
        }
        Ok(to_columns(&member.name, values)
            .map_err(|e| in_file(&self.path, e))?
            .into_iter()
            .map(|(_, c)| c)
            .collect())
    }
}
