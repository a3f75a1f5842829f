//! [`NpzMmap`]: zero-copy views of the stored members of a mapped archive.

use super::zip::directory::{Directory, Entry, STORED};
use super::{in_member, not_an_archive, NpzReader};
use crate::array::element::LayoutElement;
use crate::error::{Error, Result};
use crate::format::header::{self, Header};
use crate::npy::view::view_data;
use crate::options::ReadOptions;
use memmap2::Mmap;
use ndarray::{ArrayView, Dimension};
use std::io::Cursor;
use std::path::Path;

/// An `.npz` archive mapped into memory, whose stored members can be viewed
/// as arrays without copying.
///
/// Opening reads the central directory (as [`NpzReader`] does, with the
/// same name rules and an O(1) name index); a view then checks that
/// member's local header and parses its `.npy` header, whatever the array's
/// size. A damaged member gives its error when it is viewed, so the rest of
/// the archive stays usable (as in `np.load`). A view needs the member to be stored (not compressed), its data in
/// native byte order and aligned for the element type. Archives written by
/// [`crate::NpzWriter::create`] align every stored member to 64 bytes; the
/// members of NumPy's own archives lie at arbitrary offsets, so views of
/// them may fail with [`crate::error::ViewError::Misaligned`] (read them instead).
///
/// Views do not check the members' CRC-32 (that would read all the data);
/// [`NpzMmap::reader`] reads members with the check. As with every memory
/// map, nobody may truncate the file or change its bytes while views of it
/// exist (see the contract on [`crate::NpyMmap`]).
///
/// ```
/// use ndarray::{Array2, Ix2};
/// use ndnpy::{NpzMmap, NpzWriter};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("a.npz");
/// let mut npz = NpzWriter::create(&path)?;
/// npz.add("a", &Array2::<f64>::from_elem((1000, 8), 1.5))?;
/// npz.finish()?;
///
/// // SAFETY: nothing else writes or truncates this file while it is mapped.
/// let map = unsafe { NpzMmap::open(&path)? };
/// let a = map.view::<f64, Ix2>("a")?;
/// assert_eq!(a[[999, 7]], 1.5);
/// // The view points into the mapping: no copy was made.
/// let bytes = map.as_bytes().as_ptr_range();
/// assert!(bytes.contains(&a.as_ptr().cast()));
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub struct NpzMmap {
    map: Mmap,
    directory: Directory,
    options: ReadOptions,
}

impl NpzMmap {
    /// Maps the archive at `path` read-only and indexes its members.
    ///
    /// # Safety
    ///
    /// Until the map and every view of it are dropped, the archive must not
    /// be truncated or changed (by another process, another map or a write
    /// through the path): views would see data change under shared
    /// references, or the process is killed by `SIGBUS`. See
    /// [`NpyMmap`](crate::NpyMmap) for the same contract.
    ///
    /// ```no_run
    /// // SAFETY: nothing changes or truncates the archive while it is mapped.
    /// let map = unsafe { ndnpy::NpzMmap::open("embeddings.npz")? };
    /// let vectors = map.view::<f32, ndarray::Ix2>("vectors")?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub unsafe fn open<P: AsRef<Path>>(path: P) -> Result<Self> {
        // SAFETY: the caller upholds `open`'s contract, which is `open_with`'s.
        unsafe { Self::open_with(path, &ReadOptions::default()) }
    }

    /// [`NpzMmap::open`] with explicit limits for parsing member headers
    /// (for example a larger [`ReadOptions::max_header_len`] for big record
    /// dtypes).
    ///
    /// # Safety
    ///
    /// As for [`NpzMmap::open`].
    ///
    /// ```no_run
    /// use ndnpy::{NpzMmap, ReadOptions};
    ///
    /// let options = ReadOptions::default().max_header_len(1 << 20);
    /// // SAFETY: nothing changes or truncates the archive while it is mapped.
    /// let map = unsafe { NpzMmap::open_with("records.npz", &options)? };
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub unsafe fn open_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        let file = crate::error::open_file(path.as_ref())?;
        // SAFETY: memmap2 requires that the file not be modified or truncated
        // by others while mapped, which is this function's own contract.
        let map = unsafe { Mmap::map(&file)? };
        let directory = Directory::read(&mut Cursor::new(&map[..]), map.len() as u64)
            .map_err(|e| not_an_archive(&map[..map.len().min(6)], e))?;
        Ok(NpzMmap {
            map,
            directory,
            options: *options,
        })
    }

    /// The array names in archive order (member names without `.npy`), as
    /// [`NpzReader::names`] gives them.
    pub fn names(&self) -> Vec<String> {
        self.directory
            .entries
            .iter()
            .map(|e| e.key().to_owned())
            .collect()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.directory.entries.len()
    }

    /// Whether the archive has no members.
    pub fn is_empty(&self) -> bool {
        self.directory.entries.is_empty()
    }

    /// Whether member `name` is stored uncompressed (and so can be viewed).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut npz = ndnpy::NpzWriter::create(&path)?.codec(ndnpy::npz::Codec::deflate());
    /// npz.add("z", &ndarray::array![1u8])?;
    /// npz.finish()?;
    /// // SAFETY: nothing else writes or truncates this file while it is mapped.
    /// let map = unsafe { ndnpy::NpzMmap::open(&path)? };
    /// assert!(!map.is_stored("z")?);
    /// assert!(matches!(
    ///     map.view::<u8, ndarray::Ix1>("z"),
    ///     Err(ndnpy::Error::View(ndnpy::error::ViewError::CompressedMember { .. }))
    /// ));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn is_stored(&self, name: &str) -> Result<bool> {
        let entry = self.member(name)?;
        entry.check_supported()?;
        Ok(entry.method == STORED)
    }

    /// The `.npy` header of stored member `name`.
    pub fn header(&self, name: &str) -> Result<Header> {
        let (member, bytes) = self.stored_bytes(name)?;
        header::parse_slice(bytes, &self.options)
            .map(|(h, _)| h)
            .map_err(|e| in_member(member.key(), e))
    }

    /// A view of stored member `name` as an array of `T` with dimension `D`,
    /// pointing into the mapped file.
    ///
    /// Errors: [`crate::error::ViewError::CompressedMember`] for a deflated member (use
    /// [`NpzMmap::reader`] or [`NpzReader`] to read it),
    /// [`crate::error::ViewError::Misaligned`], [`crate::error::ViewError::NonNativeByteOrder`], and the
    /// dtype, shape and truncation errors of a `.npy` view.
    pub fn view<T: LayoutElement, D: Dimension>(&self, name: &str) -> Result<ArrayView<'_, T, D>> {
        let (member, bytes) = self.stored_bytes(name)?;
        let key = member.key();
        let (header, offset) =
            header::parse_slice(bytes, &self.options).map_err(|e| in_member(key, e))?;
        view_data(&header, &bytes[offset..]).map_err(|e| match e {
            Error::View(crate::error::ViewError::Misaligned {
                type_name,
                align,
                address,
            }) => Error::View(crate::error::ViewError::MisalignedMember {
                name: key.to_owned(),
                type_name,
                align,
                address,
            }),
            e => in_member(key, e),
        })
    }

    /// Member `name` as an array of `T`: a view when the member is stored,
    /// aligned, in native byte order and in `T`'s own layout, otherwise an
    /// owned copy (decompressed and converted as [`NpzReader::read`] would).
    ///
    /// Archives written by `np.savez` do not align their members, so this
    /// is the way to load them with a view whenever one is possible.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut npz = ndnpy::NpzWriter::create(&path)?.codec(ndnpy::npz::Codec::deflate());
    /// npz.add("z", &ndarray::array![1.5f64, 2.5])?;
    /// npz.finish()?;
    /// // SAFETY: nothing else writes or truncates this file while it is mapped.
    /// let map = unsafe { ndnpy::NpzMmap::open(&path)? };
    /// let z = map.view_or_copy::<f64, ndarray::Ix1>("z")?;
    /// assert!(!z.is_view()); // compressed: copied
    /// assert_eq!(z, ndarray::array![1.5, 2.5]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn view_or_copy<T: LayoutElement, D: Dimension>(
        &self,
        name: &str,
    ) -> Result<ndarray::CowArray<'_, T, D>> {
        match self.view::<T, D>(name) {
            Ok(v) => Ok(v.into()),
            Err(Error::MemberNotFound { name }) => Err(Error::MemberNotFound { name }),
            Err(_) => self.reader()?.read::<T, D>(name).map(Into::into),
        }
    }

    /// A reader over the same mapping, to read members (compressed ones
    /// too) into owned arrays, with CRC checks.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut npz = ndnpy::NpzWriter::create(&path)?.codec(ndnpy::npz::Codec::deflate());
    /// npz.add("z", &ndarray::array![1u8, 2])?;
    /// npz.finish()?;
    /// // SAFETY: nothing else writes or truncates this file while it is mapped.
    /// let map = unsafe { ndnpy::NpzMmap::open(&path)? };
    /// let z = map.reader()?.read::<u8, ndarray::Ix1>("z")?;
    /// assert_eq!(z, ndarray::array![1, 2]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn reader(&self) -> Result<NpzReader<Cursor<&[u8]>>> {
        NpzReader::new_with(Cursor::new(self.as_bytes()), &self.options)
    }

    /// The whole mapped file.
    pub fn as_bytes(&self) -> &[u8] {
        &self.map
    }

    fn member(&self, name: &str) -> Result<&Entry> {
        self.directory
            .lookup(name)
            .map(|i| &self.directory.entries[i])
            .ok_or_else(|| Error::MemberNotFound {
                name: name.to_owned(),
            })
    }

    /// The bytes of a stored, unencrypted member whose local header agrees
    /// with the directory.
    pub(crate) fn stored_bytes(&self, name: &str) -> Result<(&Entry, &[u8])> {
        let member = self.member(name)?;
        let key = member.key();
        let start = member
            .data_start(&mut Cursor::new(&self.map[..]), self.map.len() as u64)
            .map_err(|e| in_member(key, e))?;
        member.check_supported()?;
        if member.method != STORED {
            return Err(Error::View(crate::error::ViewError::CompressedMember {
                name: key.to_owned(),
            }));
        }
        if member.compressed_size != member.size {
            return Err(Error::Archive(crate::error::ArchiveError::InvalidArchive {
                reason: format!(
                    "member '{}' is stored but its sizes differ",
                    crate::error::capped(key)
                ),
            }));
        }
        // `data_start` checked that the data lies inside the file.
        let start = start as usize;
        Ok((member, &self.map[start..start + member.size as usize]))
    }
}

impl std::fmt::Debug for NpzMmap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzMmap")
            .field("len", &self.map.len())
            .field("members", &self.directory.entries.len())
            .finish_non_exhaustive()
    }
}
