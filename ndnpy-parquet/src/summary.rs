//! What a Parquet file holds, from its footer alone (the schema, the row
//! groups' counts and statistics, the `pandas` key): no page is read, so
//! describing a file of any size costs one read of its end.

use crate::error::{Error, Result};
use crate::model::frame::RangeIndex;
use crate::model::meta::{self, ColumnMeta, IndexSpec};
use arrow_schema::{DataType, Field, TimeUnit as ArrowUnit};
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use std::path::Path;

/// A frame as its footer describes it ([`Summary::read`]).
///
/// ```
/// use ndnpy_parquet::{Column, Frame, IndexSummary, RangeIndex, Summary, Values};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.parquet");
/// Frame::new(vec![Column::new("s", Values::strings(["a", "b", "c"]))])?.write(&path)?;
/// // Rows, columns and index, without reading a page.
/// let s = Summary::read(&path)?;
/// assert_eq!(s.rows, 3);
/// assert_eq!(s.columns[0].name.as_deref(), Some("s"));
/// assert_eq!(s.index, IndexSummary::Range(RangeIndex::default_for(3)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Rows, the sum of the row groups' counts.
    pub rows: u64,
    /// The data columns, in order.
    pub columns: Vec<ColumnSummary>,
    /// The index: a RangeIndex, or the columns that hold its levels.
    pub index: IndexSummary,
}

/// The index of a [`Summary`].
///
/// ```
/// use ndarray::array;
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Column, Frame, Index, IndexSummary, Summary};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.parquet");
/// let id = Column::new("id", AnyArray::I64(array![7, 9].into_dyn()));
/// let x = Column::new("x", AnyArray::F32(array![0.5, 1.5].into_dyn()));
/// Frame::with_index(vec![x], Index::Columns(vec![id]))?.write(&path)?;
/// // An index stored as data: its levels are described as columns are.
/// let IndexSummary::Levels(levels) = Summary::read(&path)?.index else {
///     panic!("not a RangeIndex")
/// };
/// assert_eq!(levels[0].name.as_deref(), Some("id"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum IndexSummary {
    /// Labels without data.
    Range(RangeIndex),
    /// One column per level.
    Levels(Vec<ColumnSummary>),
}

/// One column as the footer describes it.
///
/// ```
/// use ndarray::array;
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Column, Frame, Summary};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.parquet");
/// let x = Column::new("x", AnyArray::F64(array![1.0, f64::NAN, 3.0].into_dyn()))
///     .with_validity(vec![true, false, true])?;
/// Frame::new(vec![x])?.write(&path)?;
/// let c = &Summary::read(&path)?.columns[0];
/// assert_eq!((c.pandas_type.as_str(), c.numpy_type.as_str()), ("float64", "float64"));
/// // The missing count comes from the row groups' statistics.
/// assert_eq!(c.missing, Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSummary {
    /// The column's label (`None` for an unnamed index level).
    pub name: Option<String>,
    /// pandas' `pandas_type` (from the `pandas` key, or what pandas would
    /// infer from the Arrow type).
    pub pandas_type: String,
    /// pandas' `numpy_type`.
    pub numpy_type: String,
    /// The dtype of the `.npz` member `convert` writes (`<U`/`|S` without
    /// a width: that needs the data); for a categorical, its codes', sized
    /// from the `pandas` key's category count (`<i8` when the key has none,
    /// where `convert`, which sees the dictionary, may write narrower
    /// codes).
    pub npz_dtype: String,
    /// Missing values, from the row groups' statistics (`None` when a row
    /// group has none).
    pub missing: Option<u64>,
    /// A datetime column's time zone.
    pub timezone: Option<String>,
    /// A categorical's number of categories (from the `pandas` key; `None`
    /// when it does not say, or claims more than the column's bytes hold).
    pub categories: Option<u64>,
    /// A categorical's categories' dtype.
    pub categories_dtype: Option<String>,
    /// Whether a categorical is ordered.
    pub ordered: Option<bool>,
}

impl Summary {
    /// Reads the footer of the Parquet file at `path`.
    ///
    /// ```
    /// # use ndnpy::AnyArray;
    /// # use ndnpy_parquet::{Column, Frame, Summary};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f.parquet");
    /// let x = Column::new("x", AnyArray::F64(ndarray::arr1(&[1.0, 2.0]).into_dyn()));
    /// Frame::new(vec![x])?.write(&path)?;
    /// let s = Summary::read(&path)?;
    /// assert_eq!((s.rows, s.columns[0].npz_dtype.as_str()), (2, "<f8"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read<P: AsRef<Path>>(path: P) -> Result<Summary> {
        let file = std::fs::File::open(path.as_ref())?;
        let arrow = ArrowReaderMetadata::load(&file, Default::default())?;
        let metadata = arrow.metadata();
        let schema = arrow.schema();
        let (pandas, rows) = crate::read::footer(metadata, schema)?;
        // Flat schemas only (the frame reader refuses nested ones): field i
        // is leaf column i.
        let missing = |i: usize| -> Option<u64> {
            if rows == 0 {
                return Some(0);
            }
            metadata.row_groups().iter().try_fold(0u64, |acc, rg| {
                let stats = rg.columns().get(i)?.statistics()?;
                acc.checked_add(stats.null_count_opt()?)
            })
        };
        let metas: Vec<&ColumnMeta> = pandas.iter().flat_map(|p| p.columns.iter()).collect();
        let mut summaries: Vec<(String, ColumnSummary)> = Vec::new();
        for (i, field) in schema.fields().iter().enumerate() {
            let meta = metas
                .iter()
                .find(|m| m.field_name == *field.name())
                .copied();
            // A string dictionary entry takes at least its 4-byte length:
            // a claim of more categories than the column's bytes could
            // hold is not believed (the frame reader never uses it).
            let room = metadata
                .row_groups()
                .iter()
                .filter_map(|rg| rg.columns().get(i))
                .map(|c| u64::try_from(c.uncompressed_size()).unwrap_or(0) / 4)
                .fold(0u64, u64::saturating_add);
            summaries.push((field.name().clone(), column(field, meta, missing(i), room)?));
        }
        let index = match pandas.as_ref().map(|p| &p.index_columns[..]) {
            Some(
                [IndexSpec::Range {
                    name,
                    start,
                    stop,
                    step,
                }],
            ) => {
                let range = RangeIndex {
                    start: *start,
                    stop: *stop,
                    step: *step,
                    name: name.clone(),
                };
                // The one check on data the footer allows (the frame
                // reader makes it too).
                range.check_rows(rows)?;
                IndexSummary::Range(range)
            }
            Some(specs) if !specs.is_empty() => {
                let mut levels = Vec::new();
                for spec in specs {
                    let IndexSpec::Field(field) = spec else {
                        return Err(Error::Metadata(
                            "a RangeIndex among several index levels".to_owned(),
                        ));
                    };
                    let at = summaries
                        .iter()
                        .position(|(f, _)| f == field)
                        .ok_or_else(|| {
                            Error::Metadata(format!("index column {field:?} is not in the file"))
                        })?;
                    let (f, mut level) = summaries.remove(at);
                    // pyarrow's name for an unnamed level, when no pandas
                    // entry names it.
                    if f.starts_with("__index_level_") && !metas.iter().any(|m| m.field_name == f) {
                        level.name = None;
                    }
                    levels.push(level);
                }
                IndexSummary::Levels(levels)
            }
            _ => IndexSummary::Range(RangeIndex::default_for(rows as usize)),
        };
        Ok(Summary {
            rows,
            columns: summaries.into_iter().map(|(_, c)| c).collect(),
            index,
        })
    }
}

/// The `.npy` type string of an Arrow type, as the frame reader stores it.
fn npz_dtype(dt: &DataType) -> Option<String> {
    let unit = |u: &ArrowUnit| match u {
        ArrowUnit::Second => "s",
        ArrowUnit::Millisecond => "ms",
        ArrowUnit::Microsecond => "us",
        ArrowUnit::Nanosecond => "ns",
    };
    Some(match dt {
        DataType::Boolean => "|b1".into(),
        DataType::Int8 => "|i1".into(),
        DataType::Int16 => "<i2".into(),
        DataType::Int32 => "<i4".into(),
        DataType::Int64 => "<i8".into(),
        DataType::UInt8 => "|u1".into(),
        DataType::UInt16 => "<u2".into(),
        DataType::UInt32 => "<u4".into(),
        DataType::UInt64 => "<u8".into(),
        DataType::Float16 => "<f2".into(),
        DataType::Float32 => "<f4".into(),
        DataType::Float64 => "<f8".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "<U".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "|S".into(),
        DataType::Timestamp(u, _) => format!("<M8[{}]", unit(u)),
        DataType::Duration(u) => format!("<m8[{}]", unit(u)),
        _ => return None,
    })
}

/// pandas' names of a plain dtype (`pandas_type`, `numpy_type`) when the
/// file has no `pandas` key, as the frame reader infers them.
fn default_types(dt: &DataType, tz: bool) -> (String, String) {
    let s = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => s("object", "str"),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => s("bytes", "object"),
        DataType::Timestamp(..) => {
            let pt = if tz { "datetimetz" } else { "datetime" };
            (
                pt.to_owned(),
                format!(
                    "datetime64[{}]",
                    &npz_dtype(dt).unwrap_or_default()[4..].trim_end_matches(']')
                ),
            )
        }
        DataType::Duration(..) => (
            "object".to_owned(),
            format!(
                "timedelta64[{}]",
                &npz_dtype(dt).unwrap_or_default()[4..].trim_end_matches(']')
            ),
        ),
        other => {
            let name = match other {
                DataType::Boolean => "bool",
                DataType::Int8 => "int8",
                DataType::Int16 => "int16",
                DataType::Int32 => "int32",
                DataType::Int64 => "int64",
                DataType::UInt8 => "uint8",
                DataType::UInt16 => "uint16",
                DataType::UInt32 => "uint32",
                DataType::UInt64 => "uint64",
                DataType::Float16 => "float16",
                DataType::Float32 => "float32",
                _ => "float64",
            };
            s(name, name)
        }
    }
}

/// Whether `pandas_type` still describes values of Arrow type `dt`
/// (`categorical`: a dictionary of strings).
fn fits(pandas_type: &str, dt: &DataType, categorical: bool) -> bool {
    if categorical || pandas_type == "categorical" {
        return categorical && pandas_type == "categorical";
    }
    match dt {
        DataType::Timestamp(..) => matches!(pandas_type, "datetime" | "datetimetz"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            matches!(pandas_type, "unicode" | "string" | "object" | "mixed")
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            matches!(pandas_type, "bytes" | "object" | "mixed")
        }
        DataType::Duration(..) => matches!(pandas_type, "timedelta" | "object"),
        other => default_types(other, false).0 == pandas_type,
    }
}

fn column(
    field: &Field,
    meta: Option<&ColumnMeta>,
    missing: Option<u64>,
    room: u64,
) -> Result<ColumnSummary> {
    let unsupported = || Error::Unsupported {
        column: field.name().clone(),
        reason: format!("Arrow type {} has no NumPy dtype here", field.data_type()),
    };
    let meta_value = |key: &str| meta.and_then(|m| m.metadata.get(key));
    let (mut dt, mut categories, mut categories_dtype, mut ordered) =
        (field.data_type(), None, None, None);
    if let DataType::Dictionary(_, value) = dt {
        let strings = matches!(
            value.as_ref(),
            DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
        );
        if strings {
            categories = meta_value("num_categories")
                .and_then(|v| v.as_u64())
                .filter(|&k| k <= room);
            categories_dtype = npz_dtype(value);
            ordered = Some(
                field.dict_is_ordered().unwrap_or(false)
                    || meta_value("ordered")
                        .and_then(|v| v.as_bool())
                        .unwrap_or(false),
            );
        }
        // Dictionaries of anything else read as plain values.
        dt = value.as_ref();
    }
    let timezone = match dt {
        DataType::Timestamp(_, tz) => meta::time_zone(tz.as_deref(), meta),
        _ => None,
    };
    let mut npz = npz_dtype(dt).ok_or_else(unsupported)?;
    if ordered.is_some() {
        // Codes in the smallest signed type for the categories, as pandas.
        npz = match categories {
            Some(k) if k <= i8::MAX as u64 => "|i1",
            Some(k) if k <= i16::MAX as u64 => "<i2",
            Some(k) if k <= i32::MAX as u64 => "<i4",
            _ => "<i8",
        }
        .to_owned();
    }
    // A pandas entry that no longer describes the values (a categorical of
    // integers pyarrow stored as plain ints) is ignored, as the frame
    // reader ignores it.
    let name = match meta {
        Some(m) => m.name.clone(),
        None => Some(field.name().clone()),
    };
    let meta = meta.filter(|m| fits(&m.pandas_type, dt, ordered.is_some()));
    let (pandas_type, numpy_type) = match meta {
        Some(m) => (m.pandas_type.clone(), m.numpy_type.clone()),
        None if ordered.is_some() => ("categorical".to_owned(), "int8".to_owned()),
        None => default_types(dt, timezone.is_some()),
    };
    Ok(ColumnSummary {
        name,
        pandas_type,
        numpy_type,
        npz_dtype: npz,
        missing,
        timezone,
        categories,
        categories_dtype,
        ordered,
    })
}
