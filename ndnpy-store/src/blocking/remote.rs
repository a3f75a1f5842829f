//! [`RemoteNpy`] and [`RemoteNpz`], blocking: the async readers, each
//! call run on the module's runtime.

use super::run;
use crate::{Config, Location, Result};
use ndarray::{Array, Dimension};
use ndnpy::{dtype::Header, npz::MemberInfo, types::LayoutElement, AnyArray, Element};
use std::ops::RangeBounds;

/// [`crate::RemoteNpy`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Location};
///
/// let at = Location::parse("memory:///m.npy")?;
/// blocking::write_npy(&at, &ndarray::Array2::<f32>::ones((4, 3)))?;
/// let npy = blocking::RemoteNpy::open(&at)?;
/// assert_eq!(npy.header().shape, [4, 3]);
/// // The async reader is inside, for callers who have a runtime after all.
/// assert_eq!(npy.0.len(), 4);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RemoteNpy(pub crate::RemoteNpy);

impl RemoteNpy {
    /// [`crate::RemoteNpy::open`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::array![1i32, 2])?;
    /// // One GET: the header (the data is not read yet).
    /// let npy = blocking::RemoteNpy::open(&at)?;
    /// assert_eq!(npy.header().dtype.to_string(), "<i4");
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open(location: &Location) -> Result<Self> {
        run(crate::RemoteNpy::open(location)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::open_url`].
    ///
    /// ```
    /// use ndnpy_store::{blocking, Location};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let url = format!("file://{}", dir.path().join("v.npy").display());
    /// blocking::write_npy(&Location::parse(&url)?, &ndarray::array![1.5f64, 2.5])?;
    /// let npy = blocking::RemoteNpy::open_url(&url)?;
    /// assert_eq!(npy.read::<f64, ndarray::Ix1>()?, ndarray::array![1.5, 2.5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_url(url: &str) -> Result<Self> {
        run(crate::RemoteNpy::open_url(url)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::open_with`].
    ///
    /// ```
    /// use ndnpy_store::{blocking, Config, Location};
    ///
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array1::<u64>::from_iter(0..100_000))?;
    /// // Smaller chunks, fewer at once: 800 KB in 64 KiB GETs, two in flight.
    /// let config = Config::default().chunk_size(64 << 10).concurrency(2);
    /// let npy = blocking::RemoteNpy::open_with(&at, config)?;
    /// assert_eq!(npy.read::<u64, ndarray::Ix1>()?[99_999], 99_999);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open_with(location: &Location, config: Config) -> Result<Self> {
        run(crate::RemoteNpy::open_with(location, config)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::header`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array3::<u8>::zeros((2, 3, 4)))?;
    /// let header = blocking::RemoteNpy::open(&at)?.header().clone();
    /// assert_eq!((header.shape, header.fortran_order), (vec![2, 3, 4], false));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn header(&self) -> &Header {
        self.0.header()
    }

    /// [`crate::RemoteNpy::len`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array2::<u8>::zeros((5, 2)))?;
    /// // Rows: the length of the axis `read_range` ranges over.
    /// assert_eq!(blocking::RemoteNpy::open(&at)?.len(), 5);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// [`crate::RemoteNpy::is_empty`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array2::<u8>::zeros((0, 2)))?;
    /// assert!(blocking::RemoteNpy::open(&at)?.is_empty());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// [`crate::RemoteNpy::read`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::array![[1u16, 2], [3, 4]])?;
    /// let npy = blocking::RemoteNpy::open(&at)?;
    /// assert_eq!(npy.read::<u16, ndarray::Ix2>()?, ndarray::array![[1, 2], [3, 4]]);
    /// // Another element type is refused, not reinterpreted.
    /// assert!(npy.read::<f32, ndarray::Ix2>().is_err());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read<T: LayoutElement, D: Dimension>(&self) -> Result<Array<T, D>> {
        run(self.0.read())
    }

    /// [`crate::RemoteNpy::read_range`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::Array1::<i32>::from_iter(0..1000))?;
    /// // Rows 500..503 by one GET of their 12 bytes.
    /// let rows = blocking::RemoteNpy::open(&at)?.read_range::<i32, ndarray::Ix1>(500..503)?;
    /// assert_eq!(rows, ndarray::array![500, 501, 502]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_range<T: Element, D: Dimension>(
        &self,
        rows: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        run(self.0.read_range(rows))
    }

    /// [`crate::RemoteNpy::read_any`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///m.npy")?;
    /// blocking::write_npy(&at, &ndarray::array![true, false])?;
    /// // Whatever the dtype, without naming it first.
    /// let any = blocking::RemoteNpy::open(&at)?.read_any()?;
    /// assert_eq!(any, ndnpy::AnyArray::Bool(ndarray::array![true, false].into_dyn()));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_any(&self) -> Result<AnyArray> {
        run(self.0.read_any())
    }
}

/// [`crate::RemoteNpz`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Location};
///
/// let at = Location::parse("memory:///z.npz")?;
/// let mut w = blocking::NpzWriter::create(&at, true)?;
/// w.archive().add("x", &ndarray::array![1u8, 2])?;
/// w.finish()?;
/// let npz = blocking::RemoteNpz::open(&at)?;
/// assert_eq!(npz.read::<u8, ndarray::Ix1>("x")?, ndarray::array![1, 2]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RemoteNpz(pub crate::RemoteNpz);

impl RemoteNpz {
    /// [`crate::RemoteNpz::open`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = blocking::NpzWriter::create(&at, false)?;
    /// # w.archive().add("a", &ndarray::array![1u8])?;
    /// # w.finish()?;
    /// // The directory only: members are read when asked for.
    /// let npz = blocking::RemoteNpz::open(&at)?;
    /// assert_eq!(npz.names(), ["a"]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open(location: &Location) -> Result<Self> {
        run(crate::RemoteNpz::open(location)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::open_url`].
    ///
    /// ```
    /// use ndnpy_store::{blocking, Location};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let url = format!("file://{}", dir.path().join("z.npz").display());
    /// let mut w = blocking::NpzWriter::create(&Location::parse(&url)?, true)?;
    /// w.archive().add("a", &ndarray::array![1u8])?;
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpz::open_url(&url)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_url(url: &str) -> Result<Self> {
        run(crate::RemoteNpz::open_url(url)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::open_with`].
    ///
    /// ```
    /// use ndnpy_store::{blocking, Config, Location};
    ///
    /// let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = blocking::NpzWriter::create(&at, false)?;
    /// # w.archive().add("a", &ndarray::array![1u8])?;
    /// # w.finish()?;
    /// // The library's limits apply to every member read through it.
    /// let config = Config::default().read_options(ndnpy::ReadOptions::default());
    /// let npz = blocking::RemoteNpz::open_with(&at, config)?;
    /// assert_eq!(npz.read_any("a")?.shape(), [1]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open_with(location: &Location, config: Config) -> Result<Self> {
        run(crate::RemoteNpz::open_with(location, config)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::names`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, false)?;
    /// w.archive().add("b", &ndarray::array![1u8])?;
    /// w.archive().add("a", &ndarray::array![2u8])?;
    /// w.finish()?;
    /// // Archive order, without the `.npy` suffix.
    /// assert_eq!(blocking::RemoteNpz::open(&at)?.names(), ["b", "a"]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn names(&self) -> Vec<String> {
        self.0.names()
    }

    /// [`crate::RemoteNpz::len`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, false)?;
    /// w.archive().add("a", &ndarray::array![1u8])?;
    /// w.archive().add("b", &ndarray::array![2u8])?;
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpz::open(&at)?.len(), 2);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// [`crate::RemoteNpz::is_empty`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// // An archive with no members is still a valid archive.
    /// blocking::NpzWriter::create(&at, false)?.finish()?;
    /// assert!(blocking::RemoteNpz::open(&at)?.is_empty());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// [`crate::RemoteNpz::member_info`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("zeros", &ndarray::Array1::<f64>::zeros(10_000))?;
    /// w.finish()?;
    /// let info = blocking::RemoteNpz::open(&at)?.member_info("zeros")?;
    /// assert_eq!(info.compression, ndnpy::npz::Compression::Deflated);
    /// assert!(info.compressed_size < info.size / 10); // zeros deflate well
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn member_info(&self, name: &str) -> Result<MemberInfo> {
        run(self.0.member_info(name))
    }

    /// [`crate::RemoteNpz::header`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("m", &ndarray::Array2::<i16>::zeros((3, 7)))?;
    /// w.finish()?;
    /// // Shape and dtype without reading the member's data.
    /// let header = blocking::RemoteNpz::open(&at)?.header("m")?;
    /// assert_eq!((header.shape, header.dtype.to_string()), (vec![3, 7], "<i2".to_string()));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn header(&self, name: &str) -> Result<Header> {
        run(self.0.header(name))
    }

    /// [`crate::RemoteNpz::read`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("x", &ndarray::array![[1.0f32, 2.0]])?;
    /// w.finish()?;
    /// let x = blocking::RemoteNpz::open(&at)?.read::<f32, ndarray::Ix2>("x")?;
    /// assert_eq!(x, ndarray::array![[1.0, 2.0]]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read<T: Element + Send, D: Dimension + 'static>(
        &self,
        name: &str,
    ) -> Result<Array<T, D>> {
        run(self.0.read(name))
    }

    /// [`crate::RemoteNpz::read_any`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("n", &ndarray::array![7i64])?;
    /// w.finish()?;
    /// let n = blocking::RemoteNpz::open(&at)?.read_any("n")?;
    /// assert_eq!(n.dtype().to_string(), "<i8");
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_any(&self, name: &str) -> Result<AnyArray> {
        run(self.0.read_any(name))
    }

    /// [`crate::RemoteNpz::read_range`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, false)?;
    /// w.archive().add("t", &ndarray::Array1::<u32>::from_iter(0..10_000))?;
    /// w.finish()?;
    /// // A stored member: one ranged GET of the rows' bytes.
    /// let rows = blocking::RemoteNpz::open(&at)?.read_range::<u32, ndarray::Ix1>("t", 9_998..)?;
    /// assert_eq!(rows, ndarray::array![9_998, 9_999]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_range<T: Element + Send, D: Dimension + 'static>(
        &self,
        name: &str,
        rows: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        run(self.0.read_range(name, rows))
    }

    /// [`crate::RemoteNpz::read_all`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("a", &ndarray::array![1u8])?;
    /// w.archive().add("b", &ndarray::array![2.0f64])?;
    /// w.finish()?;
    /// let all = blocking::RemoteNpz::open(&at)?.read_all()?;
    /// let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    /// assert_eq!(names, ["a", "b"]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_all(&self) -> Result<Vec<(String, AnyArray)>> {
        run(self.0.read_all())
    }

    /// [`crate::RemoteNpz::member_npy`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///z.npz")?;
    /// // Stored, not compressed: the member's bytes lie in the archive as is.
    /// let mut w = blocking::NpzWriter::create(&at, false)?;
    /// w.archive().add("big", &ndarray::Array2::<u8>::zeros((1000, 8)))?;
    /// w.finish()?;
    /// let npy = blocking::RemoteNpz::open(&at)?.member_npy("big")?;
    /// assert_eq!(npy.len(), 1000);
    /// assert_eq!(npy.read_range::<u8, ndarray::Ix2>(10..12)?.dim(), (2, 8));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn member_npy(&self, name: &str) -> Result<RemoteNpy> {
        run(self.0.member_npy(name)).map(RemoteNpy)
    }
}
