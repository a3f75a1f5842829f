//! Writing a dask stack: shards and `info` in a hidden temporary folder
//! beside the target, checked by opening it as a stack, then renamed into
//! place, so the target is either absent or a whole stack.

use super::info::Info;
use super::NpyStack;
use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::npy::write::WriteNpy;
use ndarray::{ArrayRef, Axis, Dimension, Slice};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A temporary folder, removed with its contents unless kept.
pub(super) struct TempDir {
    pub(super) path: PathBuf,
    keep: bool,
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            // Best effort: an error here must not hide the write's own.
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Tells temporary folders of one process apart.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The error for arguments that cannot make a stack.
pub(super) fn invalid(what: String) -> Error {
    Error::Io(io::Error::new(io::ErrorKind::InvalidInput, what))
}

/// Makes a fresh hidden folder beside `target` (same file system, so the
/// final rename is atomic).
pub(super) fn temp_dir_beside(target: &Path) -> Result<TempDir> {
    let name = target
        .file_name()
        .ok_or_else(|| {
            invalid(format!(
                "{}: a stack's folder needs a name",
                target.display()
            ))
        })?
        .to_string_lossy()
        .into_owned();
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = parent.join(format!(".{name}.ndnpy-stack-{}-{n}", std::process::id()));
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(TempDir { path, keep: false }),
            // Left by a process of the same id that died: take another name.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < u64::MAX => continue,
            Err(e) => return Err(Error::Io(e).at_path(&parent)),
        }
    }
}

/// Refuses a target that exists, unless it is an empty folder (which the
/// rename replaces).
pub(super) fn check_target(target: &Path) -> Result<()> {
    match std::fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Io(e).at_path(target)),
        Ok(m) if m.is_dir() => {
            let mut entries =
                std::fs::read_dir(target).map_err(|e| Error::Io(e).at_path(target))?;
            if entries.next().is_none() {
                Ok(())
            } else {
                Err(Error::Io(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "the folder exists and is not empty; a stack is written only to a new or empty folder",
                ))
                .at_path(target))
            }
        }
        Ok(_) => Err(Error::Io(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "a file is in the way of the stack's folder",
        ))
        .at_path(target)),
    }
}

impl NpyStack {
    /// Writes `array` as a dask stack in the new folder `dir`, along axis 0
    /// with `rows_per_shard` rows per shard (the last may have fewer), and
    /// opens it. See [`NpyStack::create_along`].
    ///
    /// ```
    /// use ndnpy::stack::NpyStack;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let a = ndarray::Array2::<f64>::ones((1000, 4));
    /// let stack = NpyStack::create(dir.path().join("x"), &a, 256)?;
    /// assert_eq!(stack.shards().len(), 4);
    /// assert!(dir.path().join("x/info").exists() && dir.path().join("x/3.npy").exists());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create<P, T, D>(
        dir: P,
        array: &ArrayRef<T, D>,
        rows_per_shard: usize,
    ) -> Result<NpyStack>
    where
        P: AsRef<Path>,
        T: Element,
        D: Dimension,
    {
        Self::create_along(dir, array, 0, rows_per_shard)
    }

    /// Writes `array` as a dask stack in the new folder `dir`: shards
    /// `0.npy`, `1.npy`, ... of `per_shard` rows of `axis` each (the last
    /// may have fewer; an empty axis gives one empty shard), each as
    /// `np.save` writes it, and `info` as `da.to_npy_stack(dir, x, axis)`
    /// writes it, so `da.from_npy_stack(dir)` loads the array. Returns the
    /// stack, opened.
    ///
    /// Everything is written to a hidden folder beside `dir`
    /// (`.<name>.ndnpy-stack-<pid>-<n>`), opened there as a stack (so a
    /// stack that would not read back, such as `String` shards whose
    /// widths differ, is refused), and only then renamed to `dir`: `dir`
    /// never holds part of a stack. On an error the hidden folder is
    /// removed; a process killed part way leaves it behind (and `dir`
    /// absent). `dir` must not exist, or be an empty folder; a 0-d array,
    /// an `axis` out of range or `per_shard == 0` is refused
    /// ([`std::io::ErrorKind::InvalidInput`]).
    ///
    /// ```
    /// use ndarray::{Array3, Axis};
    /// use ndnpy::stack::NpyStack;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let a = Array3::from_shape_fn((2, 5, 3), |(i, j, k)| (i + j + k) as u32);
    /// let stack = NpyStack::create_along(dir.path().join("x"), &a, 1, 2)?;
    /// assert_eq!(stack.shards().iter().map(|s| s.len()).collect::<Vec<_>>(), [2, 2, 1]);
    /// assert_eq!(stack.read::<u32, ndarray::Ix3>()?, a);
    /// assert!(NpyStack::create_along(dir.path().join("x"), &a, 1, 2).is_err()); // exists
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create_along<P, T, D>(
        dir: P,
        array: &ArrayRef<T, D>,
        axis: usize,
        per_shard: usize,
    ) -> Result<NpyStack>
    where
        P: AsRef<Path>,
        T: Element,
        D: Dimension,
    {
        let target = dir.as_ref();
        let shape = array.shape().to_vec();
        if axis >= shape.len() {
            return Err(invalid(format!(
                "axis {axis} is out of range for an array of {} dimensions",
                shape.len()
            )));
        }
        if per_shard == 0 {
            return Err(invalid("a shard needs at least one row".into()));
        }
        check_target(target)?;
        let temp = temp_dir_beside(target)?;
        let n = shape[axis];
        let mut lens = Vec::with_capacity(n.div_ceil(per_shard).max(1));
        let mut start = 0usize;
        loop {
            let end = n.min(start.saturating_add(per_shard));
            let path = temp.path.join(format!("{}.npy", lens.len()));
            array
                .slice_axis(Axis(axis), Slice::from(start..end))
                .write_npy(&path)?;
            lens.push(end - start);
            start = end;
            if start >= n {
                break;
            }
        }
        seal(temp, target, &shape, axis, lens)
    }
}

/// Finishes a stack written to `temp` as shards `0.npy`... of `lens` rows
/// along `axis` (`shape` gives the other axes): writes `info`, opens the
/// folder as a stack (every shard checked), and renames it to `target`.
pub(super) fn seal(
    mut temp: TempDir,
    target: &Path,
    shape: &[usize],
    axis: usize,
    lens: Vec<usize>,
) -> Result<NpyStack> {
    let dtype = super::open_shard(
        &temp.path.join("0.npy"),
        &crate::options::ReadOptions::default(),
    )?
    .header
    .dtype;
    let info = Info {
        chunks: (0..shape.len())
            .map(|a| {
                if a == axis {
                    lens.clone()
                } else {
                    vec![shape[a]]
                }
            })
            .collect(),
        dtype,
        axis,
    };
    let pickle = info.to_pickle()?;
    crate::io::atomic::write_file(
        &temp.path.join(super::info::INFO),
        pickle.len() as u64,
        |w| Ok(w.write_all(&pickle)?),
    )?;
    let mut stack = NpyStack::open(&temp.path)?;
    std::fs::rename(&temp.path, target).map_err(|e| Error::Io(e).at_path(target))?;
    temp.keep = true;
    for (i, shard) in stack.shards.iter_mut().enumerate() {
        shard.path = target.join(format!("{i}.npy"));
    }
    Ok(stack)
}
