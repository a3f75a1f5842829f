//! [`RemoteNpyStack`](crate::RemoteNpyStack), blocking: each call run on
//! the module's runtime.

use super::run;
use crate::{Config, Location, RemoteShard, Result};
use ndarray::{Array, Dimension};
use ndnpy::{dtype::DType, AnyArray, Element};
use std::ops::RangeBounds;

/// [`crate::RemoteNpyStack`], blocking.
///
/// ```
/// use ndnpy_store::blocking;
///
/// let dir = tempfile::tempdir()?;
/// let a = ndarray::Array2::from_shape_fn((7, 2), |(i, j)| (i * 2 + j) as i32);
/// ndnpy::stack::NpyStack::create(dir.path().join("x"), &a, 3)?;
/// let url = format!("file://{}", dir.path().join("x").display());
/// let stack = blocking::RemoteNpyStack::open_url(&url)?;
/// assert_eq!(stack.read_range::<i32, ndarray::Ix2>(2..4)?, a.slice(ndarray::s![2..4, ..]));
/// // The async reader is inside.
/// assert_eq!(stack.0.shards().len(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct RemoteNpyStack(pub crate::RemoteNpyStack);

impl RemoteNpyStack {
    /// [`crate::RemoteNpyStack::open`].
    ///
    /// ```
    /// use ndnpy_store::{blocking, Location};
    ///
    /// let store = Location::parse("memory:///")?.store;
    /// blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert_eq!(stack.len(), 1);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open(location: &Location) -> Result<Self> {
        run(crate::RemoteNpyStack::open(location)).map(RemoteNpyStack)
    }

    /// [`crate::RemoteNpyStack::open_url`].
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1u8, 2], 1)?;
    /// let url = format!("file://{}", dir.path().join("x").display());
    /// assert!(ndnpy_store::blocking::RemoteNpyStack::open_url(&url)?.is_dask());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_url(url: &str) -> Result<Self> {
        run(crate::RemoteNpyStack::open_url(url)).map(RemoteNpyStack)
    }

    /// [`crate::RemoteNpyStack::open_with`].
    ///
    /// ```
    /// use ndnpy_store::{blocking, Config, Location};
    ///
    /// let store = Location::parse("memory:///")?.store;
    /// blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8])?;
    /// let config = Config::default().concurrency(2);
    /// let stack = blocking::RemoteNpyStack::open_with(&Location::new(store, "s"), config)?;
    /// assert_eq!(stack.shape(), [1]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn open_with(location: &Location, config: Config) -> Result<Self> {
        run(crate::RemoteNpyStack::open_with(location, config)).map(RemoteNpyStack)
    }

    /// [`crate::RemoteNpyStack::shape`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// # let store = Location::parse("memory:///")?.store;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![[1u8, 2]])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert_eq!(stack.shape(), [1, 2]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.0.shape()
    }

    /// [`crate::RemoteNpyStack::dtype`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// # let store = Location::parse("memory:///")?.store;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert_eq!(stack.dtype().to_string(), "|u1");
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn dtype(&self) -> &DType {
        self.0.dtype()
    }

    /// [`crate::RemoteNpyStack::len`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// # let store = Location::parse("memory:///")?.store;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8, 2])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert_eq!(stack.len(), 2);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// [`crate::RemoteNpyStack::is_empty`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// # let store = Location::parse("memory:///")?.store;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert!(!stack.is_empty());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// [`crate::RemoteNpyStack::is_dask`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// # let store = Location::parse("memory:///")?.store;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert!(!stack.is_dask()); // no info: a plain folder
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn is_dask(&self) -> bool {
        self.0.is_dask()
    }

    /// [`crate::RemoteNpyStack::shards`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// # let store = Location::parse("memory:///")?.store;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert_eq!(stack.shards()[0].path().as_ref(), "s/a.npy");
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn shards(&self) -> &[RemoteShard] {
        self.0.shards()
    }

    /// [`crate::RemoteNpyStack::read`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// # let store = Location::parse("memory:///")?.store;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8])?;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/b.npy"), &ndarray::array![2u8])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert_eq!(stack.read::<u8, ndarray::Ix1>()?, ndarray::array![1, 2]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read<T: Element, D: Dimension>(&self) -> Result<Array<T, D>> {
        run(self.0.read())
    }

    /// [`crate::RemoteNpyStack::read_range`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// # let store = Location::parse("memory:///")?.store;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8])?;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/b.npy"), &ndarray::array![2u8])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert_eq!(stack.read_range::<u8, ndarray::Ix1>(1..)?, ndarray::array![2]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_range<T: Element, D: Dimension>(
        &self,
        range: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        run(self.0.read_range(range))
    }

    /// [`crate::RemoteNpyStack::read_any`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// # let store = Location::parse("memory:///")?.store;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert_eq!(stack.read_any()?.dtype().to_string(), "|u1");
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_any(&self) -> Result<AnyArray> {
        run(self.0.read_any())
    }

    /// [`crate::RemoteNpyStack::read_range_any`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// # let store = Location::parse("memory:///")?.store;
    /// # blocking::write_npy(&Location::new(store.clone(), "s/a.npy"), &ndarray::array![1u8, 2])?;
    /// let stack = blocking::RemoteNpyStack::open(&Location::new(store, "s"))?;
    /// assert_eq!(stack.read_range_any(..1)?.shape(), [1]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn read_range_any(&self, range: impl RangeBounds<usize>) -> Result<AnyArray> {
        run(self.0.read_range_any(range))
    }
}
