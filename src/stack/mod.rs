// Layer 7 (see ARCHITECTURE.md), beside `sparse/`: arrays across files.
// Uses `crate::npy` (headers, maps, typed decoding) and `crate::pickle`
// (dask's `info`); nothing below uses it.
//! Arrays stored as folders of `.npy` shards, read and written as one array.
//!
//! [`NpyStack`] opens
//!
//! - a **dask stack**, the folder `da.to_npy_stack(dir, x, axis)` writes:
//!   `0.npy`, `1.npy`, ... (one per chunk along `axis`) and `info`, a
//!   pickle of `{'chunks': ..., 'dtype': ..., 'axis': ...}`. `info` is read
//!   by the crate's own pickle reader ([`crate::pickle`]), which imports
//!   and runs nothing; only a dict of that shape is accepted. The array
//!   is the shards concatenated along `axis`;
//! - a **plain folder of shards** (`shard_00000.npy`, ... or `0.npy`, ...
//!   without `info`): its `.npy` files in natural order (`2.npy` before
//!   `10.npy`, `shard_00002.npy` before `shard_00010.npy`), concatenated
//!   along axis 0; or an explicit list of files ([`NpyStack::from_files`]).
//!
//! Opening reads every shard's header (not its data) and checks it against
//! `info` or against the first shard: same dtype, same shape off the
//! stacking axis, data present in full. What a stack then reads, it checks
//! again (a shard replaced since is an error, never other values), and
//! [`NpyStack::read_range`] opens only the shards the range touches and
//! reads only the rows it needs of each (one contiguous read per shard
//! when the stacking axis is the shard's row axis: axis 0 of a C-order
//! file, the last of a Fortran-order one; otherwise the whole shard).
//!
//! Hostile stacks give errors, never panics, and memory in proportion to
//! what is present: an `info` that is no such dict or whose axis is out of
//! range is [`crate::error::PickleError::MalformedPickle`]; a shard whose shape disagrees with
//! `info` or with the other shards is [`crate::error::HeaderError::BadShape`] naming it; a
//! dtype that differs is [`Error::DTypeMismatch`]; a missing shard or a
//! link loop is [`Error::IoPath`]; a shard shorter than its header says is
//! [`crate::error::DataError::TruncatedData`].
//!
//! Writing ([`NpyStack::create`], [`NpyStack::create_along`], and
//! [`StackWriter`] for rows streamed a block at a time) makes a dask
//! stack that `da.from_npy_stack` loads, in a hidden temporary folder
//! beside the target that is renamed into place only when every shard and
//! `info` are written and read back, so a partial stack is never visible
//! at the target.
//!
//! ```
//! use ndarray::{array, s, Array2};
//! use ndnpy::stack::NpyStack;
//!
//! let dir = tempfile::tempdir()?;
//! let a = Array2::from_shape_fn((10, 3), |(i, j)| (i * 3 + j) as f64);
//! let stack = NpyStack::create(dir.path().join("x"), &a, 4)?; // 4 + 4 + 2 rows
//! assert_eq!(stack.shape(), [10, 3]);
//! let rows: Array2<f64> = stack.read_range(3..6)?; // across shards 0 and 1
//! assert_eq!(rows, a.slice(s![3..6, ..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod folder;
mod info;
#[doc(hidden)]
pub mod plan;
mod read;
mod runs;
mod write;
mod writer;

pub use writer::StackWriter;

use crate::error::{Error, Result};
use crate::format::dtype::DType;
use crate::format::header::{read_preamble, Header};
use crate::options::ReadOptions;
use info::Info;
use plan::{StackCheck, StackPlan};
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

/// A folder of `.npy` shards read as one array (see the [module
/// docs](self)).
///
/// ```
/// use ndarray::{array, Array1};
/// use ndnpy::stack::NpyStack;
/// use ndnpy::WriteNpy;
///
/// let dir = tempfile::tempdir()?;
/// array![1i32, 2].write_npy(dir.path().join("shard_2.npy"))?;
/// array![3i32].write_npy(dir.path().join("shard_10.npy"))?;
/// let stack = NpyStack::open(dir.path())?;
/// assert_eq!(stack.read::<i32, ndarray::Ix1>()?, array![1, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct NpyStack {
    shards: Vec<Shard>,
    plan: StackPlan,
    options: ReadOptions,
}

/// One shard of a stack: its file, and where its rows lie along the
/// stacking axis.
///
/// ```
/// use ndnpy::stack::NpyStack;
///
/// let dir = tempfile::tempdir()?;
/// let stack = NpyStack::create(dir.path().join("x"), &ndarray::Array1::<u8>::zeros(5), 2)?;
/// let lens: Vec<_> = stack.shards().iter().map(|s| (s.start(), s.len())).collect();
/// assert_eq!(lens, [(0, 2), (2, 2), (4, 1)]);
/// assert!(stack.shards()[2].path().ends_with("2.npy"));
/// assert!(!stack.shards()[2].is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    path: PathBuf,
    start: usize,
    len: usize,
}

impl Shard {
    /// The shard's file.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let a = ndarray::Array1::<u8>::zeros(5);
    /// let stack = ndnpy::stack::NpyStack::create(dir.path().join("x"), &a, 3)?;
    /// let last = &stack.shards()[1];
    /// assert_eq!(last.path(), dir.path().join("x").join("1.npy"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its first row along the stacking axis, in the stack's numbering.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let a = ndarray::Array1::<u8>::zeros(5);
    /// let stack = ndnpy::stack::NpyStack::create(dir.path().join("x"), &a, 3)?;
    /// let last = &stack.shards()[1];
    /// assert_eq!(last.start(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start(&self) -> usize {
        self.start
    }

    /// Its length along the stacking axis.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let a = ndarray::Array1::<u8>::zeros(5);
    /// let stack = ndnpy::stack::NpyStack::create(dir.path().join("x"), &a, 3)?;
    /// let last = &stack.shards()[1];
    /// assert_eq!(last.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no rows along the stacking axis.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let a = ndarray::Array1::<u8>::zeros(5);
    /// let stack = ndnpy::stack::NpyStack::create(dir.path().join("x"), &a, 3)?;
    /// let last = &stack.shards()[1];
    /// assert!(!last.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A shard's file, opened, with its header and where its data starts.
pub(crate) struct OpenShard {
    pub(crate) file: File,
    pub(crate) header: Header,
    pub(crate) data_offset: u64,
}

/// Opens the shard at `path`, reads its header, and checks that its file
/// holds all the data the header declares (so no later allocation rests on
/// a claim alone).
pub(crate) fn open_shard(path: &Path, options: &ReadOptions) -> Result<OpenShard> {
    let file = crate::error::open_file(path)?;
    let mut reader = BufReader::with_capacity(4096, &file);
    let (header, offset) = read_preamble(&mut reader, options).map_err(|e| e.at_path(path))?;
    let data_len = header.data_len()? as u64;
    let file_len = file
        .metadata()
        .map_err(|e| Error::Io(e).at_path(path))?
        .len();
    let available = file_len.saturating_sub(offset as u64);
    if !header.dtype.has_object() && available < data_len {
        return Err(Error::Data(crate::error::DataError::TruncatedData {
            expected: data_len,
            found: available,
        }));
    }
    Ok(OpenShard {
        file,
        header,
        data_offset: offset as u64,
    })
}

impl NpyStack {
    /// Opens the stack in the folder `path`: a dask stack when the folder
    /// holds `info`, otherwise its `.npy` files in natural order,
    /// concatenated along axis 0 (see the [module docs](self)).
    ///
    /// ```
    /// use ndnpy::stack::NpyStack;
    ///
    /// let dir = tempfile::tempdir()?;
    /// NpyStack::create(dir.path().join("x"), &ndarray::Array2::<f32>::zeros((6, 2)), 4)?;
    /// let stack = NpyStack::open(dir.path().join("x"))?;
    /// assert!(stack.is_dask());
    /// assert_eq!((stack.shape(), stack.shards().len()), (&[6, 2][..], 2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open<P: AsRef<Path>>(path: P) -> Result<NpyStack> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Like [`NpyStack::open`], with the limits and options of `options`
    /// for every shard's header and every read (as
    /// [`crate::ReadNpy::read_npy_with`] takes them for one file).
    ///
    /// ```
    /// use ndnpy::stack::NpyStack;
    /// use ndnpy::ReadOptions;
    ///
    /// let dir = tempfile::tempdir()?;
    /// NpyStack::create(dir.path().join("x"), &ndarray::array![1u8, 2, 3], 2)?;
    /// let tight = ReadOptions::default().max_header_len(10);
    /// assert!(NpyStack::open_with(dir.path().join("x"), &tight).is_err());
    /// let stack = NpyStack::open_with(dir.path().join("x"), &ReadOptions::default())?;
    /// assert_eq!(stack.len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<NpyStack> {
        let dir = path.as_ref();
        let info_path = dir.join(info::INFO);
        match std::fs::metadata(&info_path) {
            Ok(_) => Self::open_dask(dir, Info::read(&info_path)?, options),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Self::from_files_with(folder::npy_files(dir)?, options)
            }
            Err(e) => Err(Error::Io(e).at_path(&info_path)),
        }
    }

    /// The stack `info` describes, its shards checked against it.
    fn open_dask(dir: &Path, info: Info, options: &ReadOptions) -> Result<NpyStack> {
        let mut check = StackCheck::from_info(info);
        let count = check.shard_count().unwrap_or(0);
        let mut paths = Vec::new();
        for i in 0..count {
            let path = dir.join(plan::dask_shard_name(i));
            let shard = open_shard(&path, options)?;
            check.push(&path.display().to_string(), &shard.header)?;
            paths.push(path);
        }
        Ok(Self::from_plan(paths, check.finish()?, options))
    }

    /// The stack of checked shards.
    fn from_plan(paths: Vec<PathBuf>, plan: StackPlan, options: &ReadOptions) -> NpyStack {
        let shards = paths
            .into_iter()
            .zip(plan.spans())
            .map(|(path, &(start, len))| Shard { path, start, len })
            .collect();
        NpyStack {
            shards,
            plan,
            options: *options,
        }
    }

    /// The stack of the `.npy` files `paths`, in this order, concatenated
    /// along axis 0: every file needs at least one dimension, the dtype of
    /// the first and its shape after axis 0.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndnpy::stack::NpyStack;
    /// use ndnpy::WriteNpy;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    /// array![[1u8, 2]].write_npy(&a)?;
    /// array![[3u8, 4], [5, 6]].write_npy(&b)?;
    /// let stack = NpyStack::from_files([&b, &a])?;
    /// assert_eq!(stack.read::<u8, ndarray::Ix2>()?, array![[3, 4], [5, 6], [1, 2]]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_files<I, P>(paths: I) -> Result<NpyStack>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        Self::from_files_with(paths, &ReadOptions::default())
    }

    /// Like [`NpyStack::from_files`], with the limits and options of
    /// `options` (as [`NpyStack::open_with`]).
    ///
    /// ```
    /// use ndnpy::stack::NpyStack;
    /// use ndnpy::{ReadOptions, WriteNpy};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let a = dir.path().join("a.npy");
    /// ndarray::array![1u8].write_npy(&a)?;
    /// let stack = NpyStack::from_files_with([&a], &ReadOptions::default())?;
    /// assert_eq!(stack.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_files_with<I, P>(paths: I, options: &ReadOptions) -> Result<NpyStack>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let mut check = StackCheck::plain();
        let mut kept = Vec::new();
        for path in paths {
            let path = path.as_ref().to_path_buf();
            let header = open_shard(&path, options)?.header;
            check.push(&path.display().to_string(), &header)?;
            kept.push(path);
        }
        Ok(Self::from_plan(kept, check.finish()?, options))
    }

    /// The shape of the whole array.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let a = ndarray::Array3::<u8>::zeros((2, 5, 3));
    /// let stack = ndnpy::stack::NpyStack::create_along(dir.path().join("x"), &a, 1, 2)?;
    /// assert_eq!(stack.shape(), [2, 5, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.plan.shape()
    }

    /// The dtype every shard's header declares, as [`crate::NpyFile`]'s
    /// header gives it.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let stack = ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1i16, 2], 1)?;
    /// assert_eq!(stack.dtype().to_string(), "<i2");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dtype(&self) -> &DType {
        self.plan.dtype()
    }

    /// The stacking axis: dask's `axis`, 0 for a plain folder or list.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let a = ndarray::Array2::<u8>::zeros((2, 5));
    /// let stack = ndnpy::stack::NpyStack::create_along(dir.path().join("x"), &a, 1, 2)?;
    /// assert_eq!((stack.axis(), stack.len()), (1, 5));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn axis(&self) -> usize {
        self.plan.axis()
    }

    /// The length of the stacking axis.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let stack = ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::Array1::<u8>::zeros(7), 3)?;
    /// assert_eq!(stack.len(), 7);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.plan.len()
    }

    /// Whether the stacking axis is empty.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let stack = ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::Array1::<u8>::zeros(0), 3)?;
    /// assert!(stack.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shards in order, with their paths and lengths along the axis.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let stack = ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::Array1::<u8>::zeros(5), 3)?;
    /// let lens: Vec<usize> = stack.shards().iter().map(|s| s.len()).collect();
    /// assert_eq!(lens, [3, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// Whether the stack is dask's (its folder has `info`), which
    /// `da.from_npy_stack` can load, rather than a plain folder or list.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let stack = ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1u8], 1)?;
    /// assert!(stack.is_dask());
    /// let plain = ndnpy::stack::NpyStack::from_files([stack.shards()[0].path()])?;
    /// assert!(!plain.is_dask());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_dask(&self) -> bool {
        self.plan.is_dask()
    }

    /// The shape shard `i` must have.
    pub(crate) fn shard_shape(&self, i: usize) -> Vec<usize> {
        self.plan.shard_shape(i)
    }

    /// Opens shard `i` again and checks that it is still what the stack
    /// was opened with (same dtype and shape, data present).
    pub(crate) fn reopen(&self, i: usize) -> Result<OpenShard> {
        let path = &self.shards[i].path;
        let shard = open_shard(path, &self.options)?;
        self.plan
            .check_again(i, &path.display().to_string(), &shard.header)?;
        Ok(shard)
    }
}
