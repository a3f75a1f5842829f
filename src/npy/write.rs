//! [`WriteNpy`]: any array, in any memory layout, to `.npy`.

use crate::array::element::Element;
use crate::array::encode::{array_npy_bytes, header_bytes, npy_header, write_body_with};
use crate::error::Result;
use crate::options::WriteOptions;
use ndarray::{ArrayBase, ArrayRef, Data, Dimension};
use std::io::Write;
use std::path::Path;

/// Writing an array as `.npy`, byte-identical to what `np.save` writes.
///
/// Implemented for every [`ArrayBase`] whose elements are an [`Element`]
/// (owned arrays, views, slices with steps, reversed or broadcast axes),
/// and for ndarray's [`ArrayRef`], the type ndarray 0.17 recommends for
/// functions that read an array (every `ArrayBase` derefs to it):
///
/// ```
/// use ndarray::{ArrayRef, Ix2};
/// use ndnpy::WriteNpy;
///
/// fn save(a: &ArrayRef<f64, Ix2>, path: &std::path::Path) -> ndnpy::Result<()> {
///     a.write_npy(path)
/// }
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("a.npy");
/// let a = ndarray::array![[1.0, 2.0], [3.0, 4.0]];
/// save(&a, &path)?;          // an owned array
/// save(&a.t(), &path)?;      // a view
/// save(&a.to_shared(), &path)?; // an ArcArray
/// # Ok::<(), ndnpy::Error>(())
/// ```
///
/// Also implemented for [`AnyArray`](crate::AnyArray),
/// [`RecordArray`](crate::types::RecordArray), [`StringArray`](crate::types::StringArray)
/// and [`BytesArray`](crate::types::BytesArray), so every value that can be
/// written has the same entry points (each also has them as its own
/// methods, which need no import).
/// Arrays of [`crate::array::pyvalue::PyValue`] and `Option<String>` are written as
/// object arrays (`|O`, pickled as `np.save` does); `String` arrays as `<U`.
/// C-contiguous arrays are written in C order and Fortran-contiguous ones in
/// Fortran order, each with a single write of their memory; any other layout
/// is written in C order in bounded chunks, never copying the whole array.
///
/// ```
/// use ndarray::{array, s};
/// use ndnpy::WriteNpy;
///
/// let a = array![[1u8, 2, 3], [4, 5, 6]];
/// let every_other_column = a.slice(s![.., ..;2]);
/// let bytes = every_other_column.to_npy_bytes()?;
/// assert_eq!(&bytes[bytes.len() - 4..], &[1, 3, 4, 6]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub trait WriteNpy {
    /// Writes the array to `path`, as `np.save` would, without breaking
    /// what the path is:
    ///
    /// - **No file, or a regular file with one name:** replaced atomically.
    ///   The data goes to a temporary file in the same folder (anonymous,
    ///   `O_TMPFILE`, where the file system allows; otherwise named
    ///   `.<name>.<k>.ndnpy-tmp`), whose space is reserved first, and which
    ///   is then renamed over the target. Other processes see the whole old
    ///   file or the whole new one; if anything fails (or the process is
    ///   killed), the old file is left as it was. The new file keeps the old
    ///   one's permission bits and, where the caller may set them, its owner
    ///   and group (if not, the set-user-ID/set-group-ID bits are dropped).
    ///   Extended attributes and ACLs are not copied.
    /// - **Not writable by the caller** (e.g. mode `0444` for a non-root
    ///   user): refused with an [`Error::Io`](crate::Error::Io) of kind
    ///   `PermissionDenied` (`np.save` raises `PermissionError`); the file
    ///   is left as it was.
    /// - **A symbolic link:** followed (also when dangling, which creates its
    ///   target, as `np.save` does); the final file is handled by these
    ///   rules and the link stays a link.
    /// - **Anything else is written in place through the path**, as
    ///   `np.save` does, and never renamed over: character and block
    ///   devices (`/dev/null`), FIFOs, `/dev/stdout` and other `/proc`
    ///   links, entries of `/proc`, `/sys` and similar kernel file systems,
    ///   and regular files with several hard links (every name sees the new
    ///   data). Such writes are not atomic: the file is truncated (where
    ///   that means anything) and written from the start, so a failure
    ///   leaves it partly written. Sockets and directories cannot be opened
    ///   and give an error. A writable regular file in a folder the caller
    ///   cannot create files in is also written in place.
    /// - Temporary files left by a killed writer (only possible for named
    ///   ones) are removed by the next write to the same target: each
    ///   writer holds a `flock` on its own, and one nobody holds is stale.
    /// - **A file an appender holds** ([`crate::NpyFile::open_append`],
    ///   [`crate::NpyWriter::append`]): refused with
    ///   [`crate::error::RowsError::Locked`](crate::Error::Rows(ndnpy::error::RowsError::Locked)), naming the file; it is
    ///   left as it was and the appender goes on. The write holds a shared
    ///   lock on the file it replaces until the rename, so no appender
    ///   starts on it meanwhile.
    /// - **Nothing else is left beside the target**, whether the write
    ///   succeeds or fails: no hidden copy of an earlier version.
    /// - **The spare** (Linux; opt-in, [`WriteOptions::spare`]`(true)`):
    ///   when a regular file of 16 MiB or more is replaced by a version of
    ///   16 MiB or more, the replaced version stays beside it as
    ///   `.<name>.ndnpy-spare`, and the next such write goes over that
    ///   file (its pages and blocks), flushes it, and swaps it with the
    ///   target in one `renameat2(RENAME_EXCHANGE)`: the same atomicity,
    ///   without fresh memory. The spare is the version before the current
    ///   one, a hidden full-size copy that stays until the next write or
    ///   until you remove it (deleting the target does not). It is written
    ///   over only when no process has it open or mapped (the kernel grants
    ///   a write lease only then), otherwise its name is removed (the
    ///   holder keeps its file) and the write uses a fresh file. Do not
    ///   open spares yourself. While written over, a spare has only the
    ///   permission bits both it and the target have; it gets the target's
    ///   mode and owner once it holds only the new version; a failed write
    ///   removes it. One owned by another user, with several names, or with
    ///   extended attributes other than `security.*`, is never written
    ///   over, and a link under its name is never followed. Writers lock
    ///   the spare, so concurrent writers of one path never swap each
    ///   other's files. A smaller write, or any write without
    ///   `spare(true)`, removes it.
    ///
    /// Durability: the default does not wait for the disk. After a power
    /// loss or crash soon after the call, the path may hold the old file,
    /// the new one, or (ext4, XFS) a file of the right length reading as
    /// zeros (never a mix of two versions: a write over the spare flushes
    /// its data before the swap): the space reservation (`fallocate`, as `np.save` does too)
    /// leaves no delayed allocation, so ext4's `auto_da_alloc` heuristic,
    /// which starts writing a file renamed over another, does not fire
    /// (measured: BENCHMARKS.md, "Steady overwrite"; starting the write-back
    /// ourselves cost ~100 ms per 256 MiB, so it is not the default). For a
    /// file that must survive a crash, use [`WriteNpy::write_npy_with`] with
    /// [`WriteOptions::durable`]: `fsync` of the file before the rename and
    /// of the folder after it. Files written in place are not flushed
    /// unless durable.
    ///
    /// ```
    /// use ndnpy::WriteNpy;
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// ndarray::array![1.0, 2.0].write_npy(&path)?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    fn write_npy<P: AsRef<Path>>(&self, path: P) -> Result<()>;

    /// Like [`WriteNpy::write_npy`], with options (such as
    /// [`WriteOptions::durable`]).
    ///
    /// ```
    /// use ndnpy::{WriteNpy, WriteOptions};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// let durable = WriteOptions::default().durable(true);
    /// ndarray::array![1u8, 2].write_npy_with(&path, &durable)?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    fn write_npy_with<P: AsRef<Path>>(&self, path: P, options: &WriteOptions) -> Result<()>;

    /// Writes the array to `writer`.
    fn write_npy_to<W: Write>(&self, writer: W) -> Result<()>;

    /// The bytes of the `.npy` file.
    fn to_npy_bytes(&self) -> Result<Vec<u8>>;
}

impl<T: Element, S: Data<Elem = T>, D: Dimension> WriteNpy for ArrayBase<S, D> {
    fn write_npy<P: AsRef<Path>>(&self, path: P) -> Result<()> {
        self.write_npy_with(path, &WriteOptions::default())
    }

    fn write_npy_with<P: AsRef<Path>>(&self, path: P, options: &WriteOptions) -> Result<()> {
        if let Some(bytes) = T::object_npy(self) {
            let bytes = bytes?;
            let path = path.as_ref();
            return crate::io::atomic::write_file_with(path, bytes.len() as u64, options, |file| {
                Ok(file.write_all(&bytes)?)
            })
            .map_err(|e| e.at_path(path));
        }
        let header = npy_header(self);
        let (bytes, data_len) = header_bytes(&header)?;
        let total = bytes.len() as u64 + data_len as u64;
        let path = path.as_ref();
        crate::io::atomic::write_file_with(path, total, options, |file| {
            write_body_with(self, &header.dtype, &bytes, file)
        })
        .map_err(|e| e.at_path(path))
    }

    fn write_npy_to<W: Write>(&self, writer: W) -> Result<()> {
        if let Some(bytes) = T::object_npy(self) {
            let mut writer = crate::io::checked::CheckedWrite(writer);
            writer.write_all(&bytes?)?;
            writer.flush()?;
            return Ok(());
        }
        let header = npy_header(self);
        let (bytes, _) = header_bytes(&header)?;
        write_body_with(
            self,
            &header.dtype,
            &bytes,
            &mut crate::io::checked::CheckedWrite(writer),
        )
    }

    fn to_npy_bytes(&self) -> Result<Vec<u8>> {
        if let Some(bytes) = T::object_npy(self) {
            return bytes;
        }
        array_npy_bytes(self)
    }
}

impl<T: Element, D: Dimension> WriteNpy for ArrayRef<T, D> {
    fn write_npy<P: AsRef<Path>>(&self, path: P) -> Result<()> {
        self.view().write_npy(path)
    }

    fn write_npy_with<P: AsRef<Path>>(&self, path: P, options: &WriteOptions) -> Result<()> {
        self.view().write_npy_with(path, options)
    }

    fn write_npy_to<W: Write>(&self, writer: W) -> Result<()> {
        self.view().write_npy_to(writer)
    }

    fn to_npy_bytes(&self) -> Result<Vec<u8>> {
        self.view().to_npy_bytes()
    }
}
