//! [`Frame`], its [`Index`], and the options of reading and writing.

use crate::error::{Error, Result};
use crate::model::column::Column;
use serde_json::Value;

/// A pandas `RangeIndex`: `start, start + step, ...` up to `stop` (excluded).
///
/// ```
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Column, Frame, Index, RangeIndex};
///
/// // Rows labelled 10, 12, 14: stored as three numbers, not as a column.
/// let index = RangeIndex { start: 10, stop: 16, step: 2, name: Some("k".into()) };
/// let x = Column::new("x", AnyArray::U8(ndarray::arr1(&[1, 2, 3]).into_dyn()));
/// let f = Frame::with_index(vec![x], Index::Range(index.clone()))?;
/// assert_eq!(f.index(), &Index::Range(index));
/// assert_eq!(RangeIndex::default_for(3).len(), Some(3));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeIndex {
    /// The first label.
    pub start: i64,
    /// The end (excluded).
    pub stop: i64,
    /// The step, never 0.
    pub step: i64,
    /// The index's name.
    pub name: Option<String>,
}

impl RangeIndex {
    /// `0..len`, unnamed: pandas' default index.
    ///
    /// ```
    /// use ndnpy_parquet::RangeIndex;
    /// let r = RangeIndex::default_for(3);
    /// assert_eq!((r.start, r.stop, r.step, r.name), (0, 3, 1, None));
    /// ```
    pub fn default_for(len: usize) -> Self {
        RangeIndex {
            start: 0,
            stop: len as i64,
            step: 1,
            name: None,
        }
    }

    /// The number of labels, as Python's `len(range(start, stop, step))`
    /// (`None` when the step is 0 or the count overflows).
    ///
    /// ```
    /// use ndnpy_parquet::RangeIndex;
    /// let r = RangeIndex { start: 10, stop: 20, step: 3, name: None };
    /// assert_eq!(r.len(), Some(4)); // 10, 13, 16, 19
    /// ```
    pub fn len(&self) -> Option<u64> {
        let (start, stop, step) = (self.start as i128, self.stop as i128, self.step as i128);
        if step == 0 {
            return None;
        }
        let n = if step > 0 {
            (stop - start + step - 1).div_euclid(step)
        } else {
            (start - stop - step - 1).div_euclid(-step)
        };
        u64::try_from(n.max(0)).ok()
    }

    /// Checks that the index labels `rows` rows, as the file says.
    pub(crate) fn check_rows(&self, rows: u64) -> Result<()> {
        if self.len() != Some(rows) {
            let RangeIndex {
                start, stop, step, ..
            } = self;
            return Err(Error::Metadata(format!(
                "RangeIndex({start}, {stop}, {step}) has {:?} labels; the file has {rows} rows",
                self.len()
            )));
        }
        Ok(())
    }

    /// Whether the range is empty.
    ///
    /// ```
    /// use ndnpy_parquet::RangeIndex;
    /// // A step that walks away from `stop` labels nothing.
    /// assert!(RangeIndex { start: 5, stop: 10, step: -1, name: None }.is_empty());
    /// assert!(!RangeIndex::default_for(1).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }
}

/// The row labels of a frame.
///
/// ```
/// use ndarray::array;
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Column, Frame, Index};
///
/// // A two-level MultiIndex: one column per level.
/// let city = Column::new("city", ndnpy_parquet::Values::strings(["Oslo", "Oslo"]));
/// let year = Column::new("year", AnyArray::I64(array![2024, 2025].into_dyn()));
/// let pop = Column::new("pop", AnyArray::F64(array![0.71, 0.72].into_dyn()));
/// let f = Frame::with_index(vec![pop], Index::Columns(vec![city, year]))?;
/// assert_eq!(f.index().levels()[1].name(), Some("year"));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Index {
    /// Stored as metadata only.
    Range(RangeIndex),
    /// One column per level (more than one: a MultiIndex); each level's
    /// name is its column's name.
    Columns(Vec<Column>),
}

impl Index {
    /// The index's levels as columns, if it is not a range.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, Values};
    /// // The default index is a range: no level columns.
    /// let f = Frame::new(vec![Column::new("s", Values::strings(["a"]))])?;
    /// assert!(f.index().levels().is_empty());
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn levels(&self) -> &[Column] {
        match self {
            Index::Range(_) => &[],
            Index::Columns(c) => c,
        }
    }
}

/// How to write a file.
///
/// ```
/// use ndnpy_parquet::{Column, Compression, Frame, Values, WriteOptions};
///
/// let f = Frame::new(vec![Column::new("s", Values::strings(["abc"; 100]))])?;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.parquet");
/// let options = WriteOptions { compression: Compression::Zstd, ..WriteOptions::default() };
/// f.write_with(&path, &options)?;
/// let back = Frame::read(&path)?;
/// assert_eq!(back.column("s").unwrap().values(), f.column("s").unwrap().values());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Compression {
    /// No compression.
    None,
    /// Snappy (pandas' default).
    Snappy,
    /// Gzip at the default level.
    Gzip,
    /// Zstandard at level 1 (pyarrow's default level).
    Zstd,
}

/// Options of [`Frame::write_with`].
///
/// ```
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Column, Compression, Frame, WriteOptions};
///
/// let x = Column::new("x", AnyArray::I32(ndarray::Array1::from_iter(0..10).into_dyn()));
/// let f = Frame::new(vec![x])?;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.parquet");
/// // Uncompressed, in row groups of 4 rows (4 + 4 + 2).
/// let options = WriteOptions { compression: Compression::None, row_group_size: 4 };
/// f.write_with(&path, &options)?;
/// let back = Frame::read(&path)?;
/// assert_eq!(back.column("x").unwrap().values(), f.column("x").unwrap().values());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// The page compression (default: snappy, as pandas).
    pub compression: Compression,
    /// Rows per row group at most (default: 1 Mi rows, as pyarrow).
    pub row_group_size: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression: Compression::Snappy,
            row_group_size: 1 << 20,
        }
    }
}

/// Options of [`Frame::read_with`].
///
/// ```
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Column, Error, Frame, ReadOptions};
///
/// let x = Column::new("x", AnyArray::F64(ndarray::Array1::zeros(1000).into_dyn()));
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.parquet");
/// Frame::new(vec![x])?.write(&path)?;
/// // 8000 bytes of floats are over a limit of 1000 bytes.
/// let small = ReadOptions { max_bytes: Some(1000) };
/// let err = Frame::read_with(&path, &small).unwrap_err();
/// assert!(matches!(err, Error::TooLarge { limit: 1000, .. }), "{err}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// The most memory the decoded data may take, in bytes. `None` (the
    /// default) means 256 MiB or 64 times the file's size, whichever is
    /// larger: a hostile file cannot make a reader allocate much more than
    /// its own size, while compressed data that legitimately expands more
    /// than 64-fold needs an explicit limit.
    pub max_bytes: Option<u64>,
}

impl ReadOptions {
    pub(crate) fn limit_for(&self, file_len: u64) -> u64 {
        self.max_bytes
            .unwrap_or_else(|| (256u64 << 20).max(file_len.saturating_mul(64)))
    }
}

/// A pandas DataFrame: named 1-D columns of equal length and an index.
///
/// ```
/// use ndarray::array;
/// use ndnpy::AnyArray;
/// use ndnpy_parquet::{Column, Frame, Values};
///
/// let frame = Frame::new(vec![
///     Column::new("x", AnyArray::F64(array![1.0, 2.5].into_dyn())),
///     Column::new("name", Values::strings(["a", "b"])),
/// ])?;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.parquet");
/// frame.write(&path)?;
/// let back = Frame::read(&path)?;
/// assert_eq!(back.len(), 2);
/// assert_eq!(back.column("name").unwrap().values(), frame.column("name").unwrap().values());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub(crate) columns: Vec<Column>,
    pub(crate) index: Index,
    pub(crate) len: usize,
    /// `column_indexes` as read (describes the column labels' type).
    pub(crate) column_indexes: Option<Value>,
    /// `df.attrs` as read.
    pub(crate) attributes: Option<Value>,
}

impl Frame {
    /// A frame of `columns` with pandas' default index (`RangeIndex(0, len)`).
    /// The columns must have equal lengths and distinct names.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, Index, RangeIndex, Values};
    /// let f = Frame::new(vec![Column::new("s", Values::strings(["a", "b"]))])?;
    /// assert_eq!(f.index(), &Index::Range(RangeIndex::default_for(2)));
    /// // Two columns of one name are refused.
    /// let twice = vec![Column::new("s", Values::strings(["a"])), Column::new("s", Values::strings(["b"]))];
    /// assert!(Frame::new(twice).is_err());
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn new(columns: Vec<Column>) -> Result<Self> {
        let len = columns.first().map_or(0, Column::len);
        Frame::with_index(columns, Index::Range(RangeIndex::default_for(len)))
    }

    /// A frame of `columns` and `index`.
    ///
    /// ```
    /// use ndnpy::AnyArray;
    /// use ndnpy_parquet::{Column, Frame, Index, Values};
    /// let key = Column::new("key", Values::strings(["a", "b"]));
    /// let x = Column::new("x", AnyArray::F64(ndarray::arr1(&[1.0, 2.0]).into_dyn()));
    /// let f = Frame::with_index(vec![x.clone()], Index::Columns(vec![key]))?;
    /// assert_eq!((f.columns().len(), f.index().levels()[0].name()), (1, Some("key")));
    /// // An index of another length than the columns is refused.
    /// let short = Column::new("key", Values::strings(["a"]));
    /// assert!(Frame::with_index(vec![x], Index::Columns(vec![short])).is_err());
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn with_index(columns: Vec<Column>, index: Index) -> Result<Self> {
        let len = match &index {
            Index::Range(r) => r
                .len()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| Error::Invalid("RangeIndex with step 0".into()))?,
            Index::Columns(levels) => {
                if levels.is_empty() {
                    return Err(Error::Invalid("an index needs at least one level".into()));
                }
                levels[0].len()
            }
        };
        for c in columns.iter().chain(index.levels()) {
            c.check()?;
            if c.len() != len {
                return Err(Error::Invalid(format!(
                    "column {:?} has {} entries; the frame has {len} rows",
                    c.name(),
                    c.len()
                )));
            }
        }
        for (i, c) in columns.iter().enumerate() {
            if c.name().is_none() {
                return Err(Error::Invalid(format!("data column {i} has no name")));
            }
            if columns[..i].iter().any(|d| d.name() == c.name()) {
                return Err(Error::Invalid(format!(
                    "two columns are named {:?}",
                    c.name()
                )));
            }
        }
        Ok(Frame {
            columns,
            index,
            len,
            column_indexes: None,
            attributes: None,
        })
    }

    /// The data columns, in order.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, Values};
    /// let f = Frame::new(vec![
    ///     Column::new("b", Values::strings(["x"])),
    ///     Column::new("a", Values::strings(["y"])),
    /// ])?;
    /// let names: Vec<_> = f.columns().iter().map(|c| c.name().unwrap()).collect();
    /// assert_eq!(names, ["b", "a"]); // in order, not sorted
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The data column labelled `name`.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, Values};
    /// let f = Frame::new(vec![Column::new("s", Values::strings(["x"]))])?;
    /// assert!(f.column("s").is_some());
    /// assert!(f.column("t").is_none());
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name() == Some(name))
    }

    /// The index.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, Index, Values};
    /// let f = Frame::new(vec![Column::new("s", Values::strings(["x", "y"]))])?;
    /// let Index::Range(r) = f.index() else { panic!("the default index is a range") };
    /// assert_eq!(r.len(), Some(2));
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The number of rows.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, Values};
    /// let f = Frame::new(vec![Column::new("s", Values::strings(["x", "y", "z"]))])?;
    /// assert_eq!(f.len(), 3);
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the frame has no rows.
    ///
    /// ```
    /// use ndnpy_parquet::Frame;
    /// // No columns, no rows: what `pd.DataFrame()` is.
    /// assert!(Frame::new(vec![])?.is_empty());
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The data columns and the index, taken apart.
    ///
    /// ```
    /// use ndnpy_parquet::{Column, Frame, Index, Values};
    /// let f = Frame::new(vec![Column::new("s", Values::strings(["x"]))])?;
    /// let (columns, index) = f.into_parts();
    /// assert_eq!(columns[0].name(), Some("s"));
    /// assert!(matches!(index, Index::Range(_)));
    /// # Ok::<(), ndnpy_parquet::Error>(())
    /// ```
    pub fn into_parts(self) -> (Vec<Column>, Index) {
        (self.columns, self.index)
    }
}
