//! [`WriteNpy`]: any array, in any memory layout, to `.npy`.

use crate::dtype::DType;
use crate::element::Element;
use crate::error::Result;
use crate::header::{Header, Version};
use crate::options::WriteOptions;
use ndarray::{ArrayBase, Data, Dimension};
use std::io::Write;
use std::path::Path;

/// Elements of a non-contiguous array are gathered into a buffer of this
/// many bytes before each write.
const CHUNK_BYTES: usize = 1 << 20;

/// Writing an array as `.npy`, byte-identical to what `np.save` writes.
///
/// Implemented for every [`ArrayBase`] whose elements are an [`Element`]:
/// owned arrays, views, slices with steps, reversed or broadcast axes.
/// Arrays of [`crate::pickle::PyValue`] and `Option<String>` are written as
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
    ///
    /// Durability: the default does not wait for the disk. After a power
    /// loss or crash soon after the call, the path may hold the old file,
    /// the new one, or (ext4, XFS) a file of the right length reading as
    /// zeros: the space reservation (`fallocate`, as `np.save` does too)
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
            return crate::atomic::write_file_with(path, bytes.len() as u64, options, |file| {
                Ok(file.write_all(&bytes)?)
            })
            .map_err(|e| e.at_path(path));
        }
        let header = npy_header(self);
        let (bytes, data_len) = header_bytes(&header)?;
        let total = bytes.len() as u64 + data_len as u64;
        let path = path.as_ref();
        crate::atomic::write_file_with(path, total, options, |file| {
            write_body_with(self, &header.dtype, &bytes, file)
        })
        .map_err(|e| e.at_path(path))
    }

    fn write_npy_to<W: Write>(&self, writer: W) -> Result<()> {
        if let Some(bytes) = T::object_npy(self) {
            let mut writer = crate::checked_io::CheckedWrite(writer);
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
            &mut crate::checked_io::CheckedWrite(writer),
        )
    }

    fn to_npy_bytes(&self) -> Result<Vec<u8>> {
        if let Some(bytes) = T::object_npy(self) {
            return bytes;
        }
        let header = npy_header(self);
        let (bytes, data_len) = header_bytes(&header)?;
        let mut out = Vec::new();
        out.try_reserve_exact(bytes.len().saturating_add(data_len))
            .map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::OutOfMemory,
                    "cannot allocate the .npy bytes",
                )
            })?;
        write_body_with(self, &header.dtype, &bytes, &mut out)?;
        Ok(out)
    }
}

/// The header bytes and the data length, refusing arrays (such as huge
/// broadcast views) whose byte count overflows or that no reader could
/// load.
#[allow(dead_code)] // kept for callers that only need the bytes
pub(crate) fn prepare<T: Element, S: Data<Elem = T>, D: Dimension>(
    array: &ArrayBase<S, D>,
) -> Result<(Vec<u8>, usize)> {
    header_bytes(&npy_header(array))
}

fn header_bytes(header: &Header) -> Result<(Vec<u8>, usize)> {
    let data_len = header.data_len()?;
    Ok((header.to_bytes()?, data_len))
}

/// How an array's elements lie in memory, as far as writing cares.
enum Layout<'a, T> {
    C(&'a [T]),
    F(&'a [T]),
    Strided,
}

fn layout<T, S: Data<Elem = T>, D: Dimension>(array: &ArrayBase<S, D>) -> Layout<'_, T> {
    if let Some(slice) = array.as_slice() {
        Layout::C(slice)
    } else if array.t().is_standard_layout() {
        match array.as_slice_memory_order() {
            Some(slice) => Layout::F(slice),
            None => Layout::Strided,
        }
    } else {
        Layout::Strided
    }
}

/// The header `np.save` writes for `array`.
pub(crate) fn npy_header<T: Element, S: Data<Elem = T>, D: Dimension>(
    array: &ArrayBase<S, D>,
) -> Header {
    Header {
        dtype: T::dtype_of(array.iter()),
        shape: array.shape().to_vec(),
        fortran_order: matches!(layout(array), Layout::F(_)),
        version: Version::V1,
    }
}

/// Writes the prepared header bytes and then the data.
pub(crate) fn write_body<T: Element, S: Data<Elem = T>, D: Dimension, W: Write + ?Sized>(
    array: &ArrayBase<S, D>,
    header: &[u8],
    writer: &mut W,
) -> Result<()> {
    write_body_with(array, &T::dtype_of(array.iter()), header, writer)
}

/// [`write_body`] when the data's dtype (the header's) is at hand.
pub(crate) fn write_body_with<T: Element, S: Data<Elem = T>, D: Dimension, W: Write + ?Sized>(
    array: &ArrayBase<S, D>,
    dtype: &DType,
    header: &[u8],
    writer: &mut W,
) -> Result<()> {
    writer.write_all(header)?;
    match layout(array) {
        Layout::C(slice) | Layout::F(slice) => T::write_slice(slice, dtype, writer)?,
        Layout::Strided => write_strided(array, dtype, writer)?,
    }
    writer.flush()?;
    Ok(())
}

/// Gathers the elements in C order into a bounded buffer, one row at a time.
fn write_strided<T: Element, S: Data<Elem = T>, D: Dimension, W: Write + ?Sized>(
    array: &ArrayBase<S, D>,
    dtype: &DType,
    writer: &mut W,
) -> Result<()> {
    let capacity = (CHUNK_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    let mut buffer: Vec<T> = Vec::with_capacity(capacity.min(array.len()));
    for row in array.rows() {
        if let Some(slice) = row.as_slice() {
            // Long contiguous rows skip the buffer.
            if slice.len() >= capacity {
                T::write_slice(&buffer, dtype, writer)?;
                buffer.clear();
                T::write_slice(slice, dtype, writer)?;
                continue;
            }
        }
        // Gather a run of the row at a time: `assign` copies a strided run
        // in one tight loop, where pushing element by element through the
        // iterator cost twice as much (BENCHMARKS.md, `write_*_strided`).
        let mut rest = row;
        while let Some(first) = rest.first() {
            if buffer.len() == capacity {
                T::write_slice(&buffer, dtype, writer)?;
                buffer.clear();
            }
            let start = buffer.len();
            let take = (capacity - start).min(rest.len());
            let (head, tail) = rest.split_at(ndarray::Axis(0), take);
            buffer.resize(start + take, first.clone());
            ndarray::ArrayViewMut1::from(&mut buffer[start..]).assign(&head);
            rest = tail;
        }
    }
    T::write_slice(&buffer, dtype, writer)
}
