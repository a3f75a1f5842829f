//! [`StackWriter`]: rows streamed into a new dask stack, a new shard every
//! N rows, for arrays that never are whole in memory.

use super::write::{check_target, invalid, seal, temp_dir_beside, TempDir};
use super::NpyStack;
use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::npy::stream::NpyWriter;
use crate::options::Order;
use ndarray::{ArrayRef, ArrayViewD, Axis, Dimension, Slice};
use std::path::{Path, PathBuf};

/// Writes blocks of rows as a dask stack along axis 0, starting a new
/// shard every `rows_per_shard` rows, whatever the blocks' sizes; at
/// [`StackWriter::finish`] writes `info` and moves the folder into place.
///
/// Memory stays at one block: each shard is streamed by an
/// [`NpyWriter`](crate::NpyWriter). Everything goes to a hidden folder
/// beside the target, as for [`NpyStack::create`]; a writer dropped without
/// `finish` removes it and leaves the target as it was (absent or empty),
/// the rule of the crate's other path writers.
///
/// ```
/// use ndarray::{array, Array2};
/// use ndnpy::stack::StackWriter;
///
/// let dir = tempfile::tempdir()?;
/// let mut w = StackWriter::<f32>::create(dir.path().join("x"), &[2], 3)?;
/// for i in 0..4 {
///     w.write(&Array2::from_elem((2, 2), i as f32))?; // 8 rows in blocks of 2
/// }
/// w.write(&array![9.0f32, 9.0])?; // one row
/// let stack = w.finish()?;
/// let lens: Vec<usize> = stack.shards().iter().map(|s| s.len()).collect();
/// assert_eq!(lens, [3, 3, 3]);
/// assert_eq!(stack.read::<f32, ndarray::Ix2>()?.row(8), array![9.0, 9.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "the stack appears only at `finish` (dropped, nothing is left)"]
pub struct StackWriter<T: Element> {
    temp: TempDir,
    target: PathBuf,
    inner: Vec<usize>,
    per_shard: usize,
    /// The shard being written, until it is full.
    current: Option<NpyWriter<T>>,
    /// The rows of each finished shard.
    lens: Vec<usize>,
    /// A write failed part way: the stack would miss rows.
    failed: bool,
}

impl<T: Element> std::fmt::Debug for StackWriter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StackWriter")
            .field("target", &self.target)
            .field("inner", &self.inner)
            .field("per_shard", &self.per_shard)
            .field("rows", &self.rows())
            .finish()
    }
}

impl<T: Element> StackWriter<T> {
    /// Starts a stack in the new folder `dir` (absent, or an empty folder)
    /// of rows of `inner_shape` (`&[]` for a 1-d array), `rows_per_shard`
    /// rows to a shard. `rows_per_shard == 0` is refused
    /// ([`std::io::ErrorKind::InvalidInput`]).
    ///
    /// ```
    /// use ndnpy::stack::StackWriter;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let w = StackWriter::<u8>::create(dir.path().join("x"), &[], 100)?;
    /// drop(w); // not finished: nothing appears
    /// assert!(!dir.path().join("x").exists());
    /// assert_eq!(std::fs::read_dir(dir.path())?.count(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create<P: AsRef<Path>>(
        dir: P,
        inner_shape: &[usize],
        rows_per_shard: usize,
    ) -> Result<StackWriter<T>> {
        let target = dir.as_ref();
        if rows_per_shard == 0 {
            return Err(invalid("a shard needs at least one row".into()));
        }
        check_target(target)?;
        Ok(StackWriter {
            temp: temp_dir_beside(target)?,
            target: target.to_path_buf(),
            inner: inner_shape.to_vec(),
            per_shard: rows_per_shard,
            current: None,
            lens: Vec::new(),
            failed: false,
        })
    }

    /// Writes a block of rows: an array of the inner shape with axis 0
    /// added (any length, any memory layout), or of the inner shape alone
    /// for one row. Another shape is [`crate::error::RowsError::AppendMismatch`] and writes
    /// nothing; a failure part way (an I/O error) makes later calls fail
    /// with [`crate::error::WriteError::IncompleteWrite`].
    ///
    /// ```
    /// use ndnpy::stack::StackWriter;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let mut w = StackWriter::<i64>::create(dir.path().join("x"), &[3], 10)?;
    /// assert!(w.write(&ndarray::array![[1, 2]]).is_err()); // 2 columns, not 3
    /// w.write(&ndarray::array![[1, 2, 3]])?;
    /// assert_eq!(w.rows(), 1);
    /// # let _ = w.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write<D: Dimension>(&mut self, block: &ArrayRef<T, D>) -> Result<()> {
        if self.failed {
            return Err(Error::Write(crate::error::WriteError::IncompleteWrite));
        }
        let mut rows: ArrayViewD<'_, T> = block.view().into_dyn();
        if rows.ndim() == self.inner.len() {
            rows.insert_axis_inplace(Axis(0));
        }
        if rows.ndim() != self.inner.len() + 1 || rows.shape()[1..] != self.inner[..] {
            return Err(Error::Rows(crate::error::RowsError::AppendMismatch {
                what: "shape",
                expected: format!("rows of {:?}", self.inner),
                found: format!("{:?}", block.shape()),
            }));
        }
        let result = self.write_rows(rows);
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    /// Rows written so far.
    ///
    /// ```
    /// use ndnpy::stack::StackWriter;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let mut w = StackWriter::<u8>::create(dir.path().join("x"), &[], 2)?;
    /// w.write(&ndarray::array![1, 2, 3])?;
    /// assert_eq!(w.rows(), 3);
    /// # let _ = w.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.lens.iter().sum::<usize>() + self.current.as_ref().map_or(0, |w| w.rows())
    }

    /// Finishes the last shard, writes `info`, checks the folder as a
    /// stack and renames it to the target; returns the stack, opened. No
    /// rows at all make one empty shard, as dask writes an empty array.
    ///
    /// ```
    /// use ndnpy::stack::StackWriter;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let w = StackWriter::<f64>::create(dir.path().join("x"), &[4], 2)?;
    /// let stack = w.finish()?;
    /// assert_eq!((stack.shape(), stack.shards().len()), (&[0, 4][..], 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(mut self) -> Result<NpyStack> {
        if self.failed {
            return Err(Error::Write(crate::error::WriteError::IncompleteWrite));
        }
        if self.current.is_some() || self.lens.is_empty() {
            self.finish_shard()?;
        }
        let mut shape = vec![0];
        shape.extend_from_slice(&self.inner);
        let StackWriter {
            temp, target, lens, ..
        } = self;
        seal(temp, &target, &shape, 0, lens)
    }

    /// Writes `rows` into the shards, starting new ones as they fill.
    fn write_rows(&mut self, rows: ArrayViewD<'_, T>) -> Result<()> {
        let n = rows.len_of(Axis(0));
        let mut start = 0;
        while start < n {
            let writer = match &mut self.current {
                Some(w) => w,
                None => {
                    let path = self.temp.path.join(format!("{}.npy", self.lens.len()));
                    self.current
                        .insert(NpyWriter::create(path, &self.inner, Order::C)?)
                }
            };
            let take = (self.per_shard - writer.rows()).min(n - start);
            writer.write(&rows.slice_axis(Axis(0), Slice::from(start..start + take)))?;
            start += take;
            if writer.rows() == self.per_shard {
                self.finish_shard()?;
            }
        }
        Ok(())
    }

    /// Finishes the shard being written (or writes an empty one).
    fn finish_shard(&mut self) -> Result<()> {
        let writer = match self.current.take() {
            Some(w) => w,
            None => {
                let path = self.temp.path.join(format!("{}.npy", self.lens.len()));
                NpyWriter::create(path, &self.inner, Order::C)?
            }
        };
        self.lens.push(writer.rows());
        writer.finish()?;
        Ok(())
    }
}
