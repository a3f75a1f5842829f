//! What one object of a table holds, from its headers alone: the members
//! (one for an `.npy`, one per array for an `.npz`), their headers, the
//! columns each makes, the row count, and where each stored member's data
//! lies in the object. Nothing here reads array data.

use crate::columns::fields_of;
use crate::error::{in_file, npy_error};
use crate::ranges::RangeReader;
use datafusion::arrow::datatypes::Field;
use datafusion::error::{DataFusionError, Result};
use ndnpy::{dtype::Header, npz::Compression, NpzReader, ReadOptions};
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use std::sync::Arc;

/// The first GET of an `.npy`: NumPy's headers are far shorter (128 bytes
/// for most arrays); a longer one costs a second GET. Small, since this is
/// all a `count(*)` or a schema reads of each file.
const PREFIX: u64 = 4 << 10;

/// The column of an `.npy` of a plain dtype.
pub const VALUE_COLUMN: &str = "value";

/// Where a member's data is and how it is read.
#[derive(Debug, Clone)]
pub(crate) enum Data {
    /// Bytes at `offset` in the object, `row_bytes` a row (C order, or
    /// one dimension): any rows are one ranged GET.
    Rows { offset: u64, row_bytes: u64 },
    /// The member read whole: a Fortran-order `.npy` at `offset` (rows
    /// are not contiguous), or a compressed `.npz` member (the library
    /// inflates it through ranged GETs).
    Whole { offset: Option<u64> },
}

/// One array of an object, and the columns it makes.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    /// The array's name in its archive (`value` for an `.npy`).
    pub name: String,
    pub header: Header,
    pub fields: Vec<Field>,
    pub data: Data,
}

/// What an object holds.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub members: Vec<Member>,
    /// The first axis, shared by every member.
    pub rows: usize,
    /// Whether the object is an `.npz`.
    pub archive: bool,
}

impl Layout {
    /// Every column, in order.
    pub(crate) fn fields(&self) -> Vec<Field> {
        self.members.iter().flat_map(|m| m.fields.clone()).collect()
    }
}

/// The layout of `meta`, or `None` for an object that is no NumPy file and
/// whose name does not say it is one (dask's `info` beside its shards).
pub(crate) async fn fetch(
    store: &Arc<dyn ObjectStore>,
    meta: &ObjectMeta,
) -> Result<Option<Layout>> {
    let path = meta.location.as_ref();
    let named = |ext: &str| path.to_ascii_lowercase().ends_with(ext);
    let first = store
        .get_range(&meta.location, 0..PREFIX.min(meta.size))
        .await
        .map_err(|e| in_file(path, e.into()))?;
    if first.starts_with(b"\x93NUMPY") {
        return npy(store, meta, first).await.map(Some);
    }
    if first.starts_with(b"PK") {
        return npz(store.clone(), meta.clone()).await.map(Some);
    }
    if named(".npy") || named(".npz") {
        return Err(in_file(
            path,
            DataFusionError::Execution(
                "neither an .npy file (magic \\x93NUMPY) nor an .npz archive (magic PK)".into(),
            ),
        ));
    }
    Ok(None)
}

/// An `.npy`'s header, from `first` (its first bytes) and, for a longer
/// header, one more GET.
async fn npy(
    store: &Arc<dyn ObjectStore>,
    meta: &ObjectMeta,
    first: bytes::Bytes,
) -> Result<Layout> {
    let path = meta.location.as_ref();
    let options = ReadOptions::default();
    let (header, offset) = match parse(&first, &options) {
        Ok(parsed) => parsed,
        Err(ndnpy::Error::Header(ndnpy::error::HeaderError::TruncatedHeader {
            expected, ..
        })) if expected > first.len() as u64 && meta.size >= expected => {
            let all = store
                .get_range(&meta.location, 0..expected)
                .await
                .map_err(|e| in_file(path, e.into()))?;
            parse(&all, &options).map_err(|e| npy_error(path, e))?
        }
        Err(e) => return Err(npy_error(path, e)),
    };
    let member = stored_member(VALUE_COLUMN, header, offset, meta.size, path)?;
    Ok(Layout {
        rows: member.header.shape[0],
        members: vec![member],
        archive: false,
    })
}

/// The header at the start of `bytes` and where the data starts.
fn parse(bytes: &[u8], options: &ReadOptions) -> ndnpy::Result<(Header, u64)> {
    let mut rest = bytes;
    let header = Header::read_from_with(&mut rest, options)?;
    Ok((header, (bytes.len() - rest.len()) as u64))
}

/// A member whose `.npy` data starts at `offset` of an object of `size`
/// bytes: its data must be there in full.
fn stored_member(name: &str, header: Header, offset: u64, size: u64, path: &str) -> Result<Member> {
    let fields = fields_of(name, &header, path)?;
    check_empty_rows(&header, path)?;
    let data_len = header.data_len().map_err(|e| npy_error(path, e))? as u64;
    let present = size.saturating_sub(offset);
    if present < data_len {
        return Err(npy_error(
            path,
            ndnpy::Error::Data(ndnpy::error::DataError::TruncatedData {
                expected: data_len,
                found: present,
            }),
        ));
    }
    let rows = header.shape[0] as u64;
    let data = if header.fortran_order && header.shape.len() > 1 {
        Data::Whole {
            offset: Some(offset),
        }
    } else {
        Data::Rows {
            offset,
            row_bytes: data_len.checked_div(rows).unwrap_or(0),
        }
    };
    Ok(Member {
        name: name.to_owned(),
        header,
        fields,
        data,
    })
}

/// Rows of no bytes (a zero-size dtype or trailing axis) cost nothing to
/// claim: as many as the library reads (`max_zero_size_elements`), so a
/// 12-byte header cannot make a scan of 10^18 empty rows.
fn check_empty_rows(header: &Header, path: &str) -> Result<()> {
    let limit = ReadOptions::default().get_max_zero_size_elements();
    let empty = header.data_len().map_err(|e| npy_error(path, e))? == 0;
    if empty
        && header
            .shape
            .first()
            .is_some_and(|&rows| rows as u64 > limit)
    {
        return Err(in_file(
            path,
            DataFusionError::Execution(format!(
                "{} rows of no bytes each: more than the {limit} the reader allows",
                header.shape[0]
            )),
        ));
    }
    Ok(())
}

/// An `.npz`'s members, read by the library's `NpzReader` through ranged
/// GETs on a blocking thread: the archive's directory, then each member's
/// header (stored members' data positions checked against the object).
async fn npz(store: Arc<dyn ObjectStore>, meta: ObjectMeta) -> Result<Layout> {
    let path = meta.location.to_string();
    let handle = tokio::runtime::Handle::current();
    let at = path.clone();
    let task = tokio::task::spawn_blocking(move || -> Result<Layout> {
        let reader = RangeReader::new(store, meta.location.clone(), meta.size, handle);
        let mut z =
            NpzReader::new_with(reader, &ReadOptions::default()).map_err(|e| npy_error(&at, e))?;
        let mut members = Vec::new();
        for name in z.names() {
            let info = z.member_info(&name).map_err(|e| npy_error(&at, e))?;
            let (header, len) = z.header_with_offset(&name).map_err(|e| npy_error(&at, e))?;
            let member = if info.compression == Compression::Stored && !info.encrypted {
                let end = info.data_start.saturating_add(info.size).min(meta.size);
                let offset = info.data_start.saturating_add(len);
                stored_member(&name, header, offset, end, &at)?
            } else {
                check_empty_rows(&header, &at)?;
                Member {
                    fields: fields_of(&name, &header, &at)?,
                    name,
                    header,
                    data: Data::Whole { offset: None },
                }
            };
            members.push(member);
        }
        equal_rows(&members, &at)
    });
    task.await
        .map_err(|e| in_file(&path, DataFusionError::External(Box::new(e))))?
}

/// The members as one table: every member has rows, and as many.
fn equal_rows(members: &[Member], path: &str) -> Result<Layout> {
    let Some(first) = members.first() else {
        return Err(in_file(
            path,
            DataFusionError::Execution("an archive with no arrays is no table".into()),
        ));
    };
    let rows = first.header.shape[0];
    if let Some(other) = members.iter().find(|m| m.header.shape[0] != rows) {
        return Err(in_file(
            path,
            DataFusionError::Execution(format!(
                "member `{}` has {} rows and `{}` {rows}: the members of a table share their \
                 first axis",
                other.name, other.header.shape[0], first.name
            )),
        ));
    }
    Ok(Layout {
        members: members.to_vec(),
        rows,
        archive: true,
    })
}
