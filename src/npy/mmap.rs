//! Memory-mapped `.npy` files: open one and view its data in place, or
//! create one of a given dtype and shape and fill it through a view.

use crate::array::element::LayoutElement;
use crate::error::{Error, Result};
use crate::format::header::{self, Header, Version};
use crate::npy::view::{view_data, view_data_mut};
use crate::options::Order;
use crate::options::ReadOptions;
use memmap2::{Mmap, MmapMut, MmapOptions};
use ndarray::{ArrayView, ArrayViewMut, CowArray, Dimension};
use std::fs::OpenOptions;
use std::path::Path;

enum Map {
    ReadOnly(Mmap),
    Writable(MmapMut),
}

/// A `.npy` file mapped into memory.
///
/// Opening costs the same for a kilobyte or fifty gigabytes: the header is
/// parsed and checked against the file's length, and views point straight
/// into the mapping. The kernel pages data in as it is touched.
///
/// # The contract of a memory map
///
/// Views borrow the mapped file as ordinary Rust slices, so while one exists
/// nobody else (another process, or another mapping in this one) may
/// truncate the file (the OS would signal `SIGBUS`) or change the viewed
/// bytes: Rust assumes the data behind `&[T]` does not change, and a `bool`
/// view is checked for 0/1 bytes only when it is made. The crate cannot
/// enforce this, so the constructors that map are `unsafe fn`, as in
/// `memmap2`; NumPy's `np.memmap` has the same contract without saying so.
/// Processes that fill one array together through [`NpyMmap::open_rw`]
/// (NumPy's `open_memmap` use case) share memory outside what Rust's borrow
/// rules can see: each must write only its own region and must not read the
/// others' until they are done.
///
/// Mapping outside `unsafe` does not compile:
///
/// ```compile_fail
/// let map = ndnpy::NpyMmap::open("a.npy")?;
/// # Ok::<(), ndnpy::Error>(())
/// ```
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("big.npy");
/// use ndarray::Ix2;
/// use ndnpy::{NpyMmap, Order};
///
/// // Create a file NumPy can open, fill it through a mutable view...
/// // SAFETY: no other process or mapping touches this new file.
/// let mut map = unsafe { NpyMmap::create::<f32, _>(&path, &[1000, 3], Order::C)? };
/// map.view_mut::<f32, Ix2>()?.row_mut(7).fill(1.5);
/// map.flush()?;
/// drop(map);
///
/// // ...and open it again without reading it.
/// // SAFETY: nothing changes or truncates the file while it is mapped.
/// let map = unsafe { NpyMmap::open(&path)? };
/// let view = map.view::<f32, Ix2>()?;
/// assert_eq!(view[[7, 2]], 1.5);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub struct NpyMmap {
    map: Map,
    header: Header,
    offset: usize,
}

impl std::fmt::Debug for NpyMmap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpyMmap")
            .field("header", &self.header)
            .field("writable", &matches!(self.map, Map::Writable(_)))
            .field("len", &self.as_bytes().len())
            .finish()
    }
}

impl NpyMmap {
    /// Maps the file at `path` read-only.
    ///
    /// # Safety
    ///
    /// Until the map and every view of it are dropped, the file must not be
    /// truncated, and its mapped bytes must not be changed except through
    /// this map's own views (not by another process, another map or a
    /// write through the path). Breaking this is undefined behaviour: views
    /// would see data change under shared references, or the process is
    /// killed by `SIGBUS`.
    pub unsafe fn open<P: AsRef<Path>>(path: P) -> Result<Self> {
        // SAFETY: the caller upholds `open`'s contract, which is `open_with`'s.
        unsafe { Self::open_with(path, &ReadOptions::default()) }
    }

    /// [`NpyMmap::open`] with explicit limits (e.g. a record dtype whose
    /// header exceeds the default length limit).
    ///
    /// # Safety
    ///
    /// As for [`NpyMmap::open`].
    pub unsafe fn open_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        let file = crate::error::open_file(path.as_ref())?;
        // SAFETY: memmap2 requires that the file not be modified or truncated
        // by others while mapped, which is this function's own contract.
        let map = unsafe { Mmap::map(&file)? };
        Self::from_map(Map::ReadOnly(map), options)
    }

    /// Maps the file at `path` copy-on-write: views can be changed, but the
    /// changes stay in this process and never reach the file (NumPy's
    /// `mmap_mode='c'`).
    ///
    /// # Safety
    ///
    /// As for [`NpyMmap::open`]: a private mapping still shows changes made
    /// to the file by others until a page is first written here.
    pub unsafe fn open_cow<P: AsRef<Path>>(path: P) -> Result<Self> {
        // SAFETY: the caller upholds `open_cow`'s contract, which is
        // `open_cow_with`'s.
        unsafe { Self::open_cow_with(path, &ReadOptions::default()) }
    }

    /// [`NpyMmap::open_cow`] with explicit limits (e.g. a record dtype whose
    /// header exceeds the default length limit).
    ///
    /// # Safety
    ///
    /// As for [`NpyMmap::open_cow`].
    ///
    /// ```
    /// use ndarray::Ix1;
    /// use ndnpy::{NpyMmap, ReadOptions, WriteNpy};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// ndarray::array![1.0f64, 2.0].write_npy(&path)?;
    /// let options = ReadOptions::default().max_header_len(1 << 20);
    /// // SAFETY: nothing else writes or truncates this file while it is mapped.
    /// let mut map = unsafe { NpyMmap::open_cow_with(&path, &options)? };
    /// map.view_mut::<f64, Ix1>()?[0] = 9.0; // only in this process
    /// assert_eq!(ndarray::Array1::<f64>::read_npy(&path)?[0], 1.0);
    /// # use ndnpy::ReadNpy;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub unsafe fn open_cow_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        let file = crate::error::open_file(path.as_ref())?;
        // SAFETY: the caller upholds `open`'s contract; a private mapping
        // never writes to the file.
        let map = unsafe { MmapOptions::new().map_copy(&file)? };
        Self::from_map(Map::Writable(map), options)
    }

    /// Maps the file at `path` for reading and writing: changes made through
    /// [`NpyMmap::view_mut`] reach the file (NumPy's `mmap_mode='r+'`).
    ///
    /// # Safety
    ///
    /// As for [`NpyMmap::open`]. Several processes may map one file for
    /// writing only if each writes a region no other reads or writes.
    ///
    /// ```
    /// use ndarray::Ix1;
    /// use ndnpy::{NpyMmap, ReadNpy, WriteNpy};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// ndarray::array![1.0f32, 2.0].write_npy(&path)?;
    /// // SAFETY: no other map or process uses this file meanwhile.
    /// let mut map = unsafe { NpyMmap::open_rw(&path)? };
    /// map.view_mut::<f32, Ix1>()?.mapv_inplace(|x| x * 10.0);
    /// map.flush()?;
    /// drop(map);
    /// assert_eq!(ndarray::Array1::<f32>::read_npy(&path)?, ndarray::array![10.0, 20.0]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub unsafe fn open_rw<P: AsRef<Path>>(path: P) -> Result<Self> {
        // SAFETY: the caller upholds `open_rw`'s contract, which is
        // `open_rw_with`'s.
        unsafe { Self::open_rw_with(path, &ReadOptions::default()) }
    }

    /// [`NpyMmap::open_rw`] with explicit limits: a file whose header is
    /// longer than the default limit (such as one
    /// [`NpyMmap::create_with_header`] made for a large record dtype) opens
    /// with a larger [`ReadOptions::max_header_len`].
    ///
    /// # Safety
    ///
    /// As for [`NpyMmap::open_rw`].
    ///
    /// ```
    /// use ndarray::Ix1;
    /// use ndnpy::{NpyMmap, ReadNpy, ReadOptions, WriteNpy};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// ndarray::array![1u8, 2].write_npy(&path)?;
    /// let options = ReadOptions::default().max_header_len(1 << 20);
    /// // SAFETY: no other map or process uses this file meanwhile.
    /// let mut map = unsafe { NpyMmap::open_rw_with(&path, &options)? };
    /// map.view_mut::<u8, Ix1>()?[1] = 7;
    /// map.flush()?;
    /// drop(map);
    /// assert_eq!(ndarray::Array1::<u8>::read_npy(&path)?, ndarray::array![1, 7]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub unsafe fn open_rw_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| Error::Io(e).at_path(path))?;
        // SAFETY: the caller upholds `open`'s contract.
        let map = unsafe { MmapMut::map_mut(&file)? };
        Self::from_map(Map::Writable(map), options)
    }

    /// Creates (or truncates, as NumPy does: maps of the old file then break)
    /// the file at `path` as a `.npy` file of `T` with `shape` in `order`,
    /// all zeros, and maps it for writing (NumPy's
    /// `open_memmap(mode='w+')`).
    ///
    /// The header is the one `np.save` would write for such an array. The
    /// file's blocks are reserved (`fallocate`) before it is mapped, so a
    /// full disk is an error here rather than a `SIGBUS` at the first write;
    /// [`NpyMmap::create_sparse`] reserves nothing, as NumPy does.
    ///
    /// # Safety
    ///
    /// As for [`NpyMmap::open`]; in particular no live map or view of the
    /// file at `path` may exist, since it is truncated.
    pub unsafe fn create<T: LayoutElement, P: AsRef<Path>>(
        path: P,
        shape: &[usize],
        order: Order,
    ) -> Result<Self> {
        let header = Header {
            dtype: T::layout_dtype(),
            shape: shape.to_vec(),
            fortran_order: order.is_fortran(),
            version: Version::V1,
        };
        // SAFETY: the caller upholds `create`'s contract, which is this one's.
        unsafe { Self::create_with_header(path, &header) }
    }

    /// Like [`NpyMmap::create`], for any header (for example a record dtype
    /// that this crate can map but not convert).
    ///
    /// # Safety
    ///
    /// As for [`NpyMmap::create`].
    pub unsafe fn create_with_header<P: AsRef<Path>>(path: P, header: &Header) -> Result<Self> {
        // SAFETY: the caller upholds `create`'s contract, which is this one's.
        unsafe { Self::create_at(path.as_ref(), header, true) }
    }

    /// Like [`NpyMmap::create`], but the file is sparse, as NumPy's
    /// `open_memmap(mode='w+')` and `ndarray-npy`'s `write_zeroed_npy`
    /// make it: no disk space is reserved, blocks are allocated as pages
    /// are first written, and a 64 GiB scratch array costs nothing until
    /// it is filled.
    ///
    /// The price is NumPy's: if the disk fills up while pages are written,
    /// the process gets `SIGBUS` at the write instead of an error here.
    /// Use [`NpyMmap::create`] for arrays that will be filled whole.
    ///
    /// # Safety
    ///
    /// As for [`NpyMmap::create`], and the file system must have room for
    /// the pages that will be written (a full disk is `SIGBUS`, which Rust
    /// cannot turn into an error).
    ///
    /// ```
    /// use ndarray::Ix2;
    /// use ndnpy::{NpyMmap, Order};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("scratch.npy");
    /// // 64 MiB of zeros that take no disk space until written.
    /// // SAFETY: no other map or process uses this file; the page written
    /// // below fits on the disk.
    /// let mut map = unsafe { NpyMmap::create_sparse::<f64, _>(&path, &[8192, 1024], Order::C)? };
    /// map.view_mut::<f64, Ix2>()?[[1234, 6]] = 1.5;
    /// map.flush()?;
    /// assert_eq!(std::fs::metadata(&path)?.len(), 128 + (64 << 20));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub unsafe fn create_sparse<T: LayoutElement, P: AsRef<Path>>(
        path: P,
        shape: &[usize],
        order: Order,
    ) -> Result<Self> {
        let header = Header {
            dtype: T::layout_dtype(),
            shape: shape.to_vec(),
            fortran_order: order.is_fortran(),
            version: Version::V1,
        };
        // SAFETY: the caller upholds `create_sparse`'s contract, which is
        // `create`'s plus room on the disk for what is written.
        unsafe { Self::create_at(path.as_ref(), &header, false) }
    }

    /// Creates, sizes and (when `reserve`) reserves the file for `header`,
    /// writes the header and maps the file.
    ///
    /// # Safety
    ///
    /// As for [`NpyMmap::create`].
    unsafe fn create_at(path: &Path, header: &Header, reserve: bool) -> Result<Self> {
        let bytes = header.to_bytes()?;
        let total = (bytes.len() as u64)
            .checked_add(header.data_len()? as u64)
            .ok_or(Error::Limit(crate::error::LimitError::LengthOverflow {
                shape: header.shape.iter().map(|&d| d as u64).collect(),
                itemsize: header.dtype.itemsize().unwrap_or(0),
            }))?;
        let at = |e: Error| e.at_path(path);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| at(e.into()))?;
        file.set_len(total).map_err(|e| at(e.into()))?;
        if reserve {
            crate::io::fs::reserve(&file, total).map_err(|e| at(e.into()))?;
        }
        // SAFETY: the caller upholds `open`'s contract; the file was just
        // sized (and, unless sparse, its blocks reserved) to hold the
        // mapping.
        let mut map = unsafe { MmapMut::map_mut(&file)? };
        map[..bytes.len()].copy_from_slice(&bytes);
        // Our own header, however long, is trusted.
        let options = ReadOptions::default().max_header_len(bytes.len());
        Self::from_map(Map::Writable(map), &options)
    }

    fn from_map(map: Map, options: &ReadOptions) -> Result<Self> {
        let bytes: &[u8] = match &map {
            Map::ReadOnly(m) => m,
            Map::Writable(m) => m,
        };
        let (header, offset) = header::parse_slice(bytes, options)?;
        let len = header.data_len()?;
        let available = bytes.len() - offset;
        if available < len {
            return Err(Error::Data(crate::error::DataError::TruncatedData {
                expected: len as u64,
                found: available as u64,
            }));
        }
        Ok(NpyMmap {
            map,
            header,
            offset,
        })
    }

    /// The file's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The whole mapped file, header included.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.map {
            Map::ReadOnly(m) => m,
            Map::Writable(m) => m,
        }
    }

    /// The array data, without the header.
    pub fn data(&self) -> &[u8] {
        &self.as_bytes()[self.offset..]
    }

    /// The array data as bytes that can be changed, without the header: for
    /// dtypes that have no Rust type (such as a record
    /// [`NpyMmap::create_with_header`] made). Fails with [`crate::error::ViewError::ReadOnly`]
    /// for a map made by [`NpyMmap::open`].
    ///
    /// ```
    /// use ndnpy::{dtype::DType, dtype::Header, NpyMmap, dtype::Version};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// let header = Header {
    ///     dtype: DType::parse("<f2")?, // a half float, with or without the `half` feature
    ///     shape: vec![2],
    ///     fortran_order: false,
    ///     version: Version::V1,
    /// };
    /// // SAFETY: a new file that nothing else maps or changes.
    /// let mut map = unsafe { NpyMmap::create_with_header(&path, &header)? };
    /// map.data_mut()?.copy_from_slice(&[0x00, 0x3c, 0x00, 0x40]); // 1.0, 2.0
    /// map.flush()?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn data_mut(&mut self) -> Result<&mut [u8]> {
        match &mut self.map {
            Map::ReadOnly(_) => Err(Error::View(crate::error::ViewError::ReadOnly)),
            Map::Writable(m) => Ok(&mut m[self.offset..]),
        }
    }

    /// A view of the data as an array of `T` with dimension `D`, without
    /// copying.
    pub fn view<T: LayoutElement, D: Dimension>(&self) -> Result<ArrayView<'_, T, D>> {
        view_data(&self.header, self.data())
    }

    /// The data as an array of `T`: a view when the data is aligned, in
    /// native byte order and in `T`'s own layout, otherwise an owned copy
    /// converted as [`crate::ReadNpy`] would (byte order swapped, record
    /// fields matched by name).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// use ndnpy::WriteNpy;
    /// ndarray::array![[1.0f64, 2.0], [3.0, 4.0]].write_npy(&path)?;
    /// // SAFETY: nothing else writes or truncates this file while it is mapped.
    /// let map = unsafe { ndnpy::NpyMmap::open(&path)? };
    /// let a = map.view_or_copy::<f64, ndarray::Ix2>()?;
    /// assert!(a.is_view());
    /// assert_eq!(a[[1, 0]], 3.0);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn view_or_copy<T: LayoutElement, D: Dimension>(&self) -> Result<CowArray<'_, T, D>> {
        crate::npy::view::view_or_copy(&self.header, self.data())
    }

    /// A mutable view of the data. Fails with [`crate::error::ViewError::ReadOnly`] for a map
    /// made by [`NpyMmap::open`].
    pub fn view_mut<T: LayoutElement, D: Dimension>(&mut self) -> Result<ArrayViewMut<'_, T, D>> {
        match &mut self.map {
            Map::ReadOnly(_) => Err(Error::View(crate::error::ViewError::ReadOnly)),
            Map::Writable(m) => view_data_mut(&self.header, &mut m[self.offset..]),
        }
    }

    /// Writes changes made through a read-write map to the file.
    pub fn flush(&self) -> Result<()> {
        if let Map::Writable(m) = &self.map {
            m.flush()?;
        }
        Ok(())
    }
}
