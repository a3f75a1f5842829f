//! The same operations for callers without an async runtime: each call
//! runs on a runtime this module owns. Do not call these from inside an
//! async task (they block the thread; tokio refuses).
//!
//! ```
//! use ndnpy_store::{blocking, Location};
//!
//! let at = Location::parse("memory:///v.npy")?;
//! blocking::write_npy(&at, &ndarray::array![1u16, 2, 3])?;
//! let v = blocking::RemoteNpy::open(&at)?.read::<u16, ndarray::Ix1>()?;
//! assert_eq!(v, ndarray::array![1, 2, 3]);
//! # Ok::<(), ndnpy_store::StoreError>(())
//! ```

use crate::{Config, Location, Result};
use ndarray::{ArrayBase, Data, Dimension};
use ndnpy::{Element, Order};
use std::future::Future;

fn run<F: Future>(future: F) -> F::Output {
    crate::runtime::runtime().block_on(future)
}

mod object_reader;
mod remote;
mod stack;

pub use object_reader::ObjectReader;
pub use remote::{RemoteNpy, RemoteNpz};
pub use stack::RemoteNpyStack;

/// [`crate::list`], blocking: the paths of the objects below a location
/// taken as a folder, sorted as a folder walk sorts.
///
/// ```
/// use ndnpy_store::{blocking, Location};
///
/// let store = Location::parse("memory:///")?.store;
/// for path in ["ckpt/2.npy", "ckpt/10.npy"] {
///     blocking::write_npy(&Location::new(store.clone(), path), &ndarray::array![0u8])?;
/// }
/// let below = blocking::list(&Location::new(store, "ckpt"))?;
/// assert_eq!(below.len(), 2);
/// assert_eq!(below[0].as_ref(), "ckpt/10.npy");
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
pub fn list(location: &Location) -> Result<Vec<object_store::path::Path>> {
    run(crate::list(location))
}

/// [`crate::write_npy`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Location};
///
/// let at = Location::parse("memory:///w.npy")?;
/// blocking::write_npy(&at, &ndarray::array![[1i8, -1], [2, -2]])?;
/// // The object is a plain `.npy`, as `np.save` writes it.
/// let npy = blocking::RemoteNpy::open(&at)?;
/// assert_eq!(npy.read::<i8, ndarray::Ix2>()?, ndarray::array![[1, -1], [2, -2]]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
pub fn write_npy<T: Element, S: Data<Elem = T>, D: Dimension>(
    location: &Location,
    array: &ArrayBase<S, D>,
) -> Result<()> {
    run(crate::write_npy(location, array))
}

/// [`crate::write_npy_with`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Config, Location};
///
/// let at = Location::parse("memory:///w.npy")?;
/// // 12 MB in parts of 5 MiB (S3's least), one upload at a time.
/// let config = Config::default().part_size(5 << 20).parts_in_flight(1);
/// let a = ndarray::Array2::<f64>::zeros((1_500, 1_000));
/// blocking::write_npy_with(&at, &a, config)?;
/// assert_eq!(blocking::RemoteNpy::open(&at)?.header().shape, [1_500, 1_000]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
pub fn write_npy_with<T: Element, S: Data<Elem = T>, D: Dimension>(
    location: &Location,
    array: &ArrayBase<S, D>,
    config: Config,
) -> Result<()> {
    run(crate::write_npy_with(location, array, config))
}

/// [`crate::NpyWriter`], blocking.
///
/// ```
/// use ndnpy::Order;
/// use ndnpy_store::{blocking, Location};
///
/// let at = Location::parse("memory:///log.npy")?;
/// // Rows of 2 as they come; the row count goes into the header at the end.
/// let mut w = blocking::NpyWriter::<i32>::create(&at, &[2], Order::C)?;
/// for i in 0..3 {
///     w.write(&ndarray::array![[i, -i]])?;
/// }
/// w.finish()?;
/// let back = blocking::RemoteNpy::open(&at)?.read::<i32, ndarray::Ix2>()?;
/// assert_eq!(back, ndarray::array![[0, 0], [1, -1], [2, -2]]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
pub struct NpyWriter<T: Element>(crate::NpyWriter<T>);

impl<T: Element> NpyWriter<T> {
    /// [`crate::NpyWriter::create`].
    ///
    /// ```
    /// # use ndnpy::Order;
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///v.npy")?;
    /// // `&[]`: a 1-d array, one element per row.
    /// let mut w = blocking::NpyWriter::<u8>::create(&at, &[], Order::C)?;
    /// w.write(&ndarray::array![1, 2, 3])?;
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpy::open(&at)?.header().shape, [3]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn create(location: &Location, inner_shape: &[usize], order: Order) -> Result<Self> {
        run(crate::NpyWriter::create(location, inner_shape, order)).map(NpyWriter)
    }

    /// [`crate::NpyWriter::create_with`].
    ///
    /// ```
    /// # use ndnpy::Order;
    /// # use ndnpy_store::{blocking, Config, Location};
    /// let at = Location::parse("memory:///v.npy")?;
    /// let config = Config::default().part_size(8 << 20);
    /// let mut w = blocking::NpyWriter::<f32>::create_with(&at, &[], Order::C, config)?;
    /// w.write(&ndarray::Array1::<f32>::ones(10))?;
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpy::open(&at)?.len(), 10);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn create_with(
        location: &Location,
        inner_shape: &[usize],
        order: Order,
        config: Config,
    ) -> Result<Self> {
        run(crate::NpyWriter::create_with(
            location,
            inner_shape,
            order,
            config,
        ))
        .map(NpyWriter)
    }

    /// [`crate::NpyWriter::write`].
    ///
    /// ```
    /// # use ndnpy::Order;
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///v.npy")?;
    /// let mut w = blocking::NpyWriter::<u16>::create(&at, &[3], Order::C)?;
    /// w.write(&ndarray::array![[1, 2, 3], [4, 5, 6]])?; // two rows
    /// w.write(&ndarray::array![7, 8, 9])?; // one row
    /// // A block whose rows are not 3 long is refused.
    /// assert!(w.write(&ndarray::array![[1, 2]]).is_err());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn write<S: Data<Elem = T>, D: Dimension>(
        &mut self,
        block: &ArrayBase<S, D>,
    ) -> Result<()> {
        run(self.0.write(block))
    }

    /// [`crate::NpyWriter::rows`].
    ///
    /// ```
    /// # use ndnpy::Order;
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///v.npy")?;
    /// let mut w = blocking::NpyWriter::<u8>::create(&at, &[4], Order::C)?;
    /// w.write(&ndarray::Array2::<u8>::zeros((5, 4)))?;
    /// assert_eq!(w.rows(), 5);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.0.rows()
    }

    /// [`crate::NpyWriter::finish`].
    ///
    /// ```
    /// # use ndnpy::Order;
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///v.npy")?;
    /// let mut w = blocking::NpyWriter::<u8>::create(&at, &[], Order::C)?;
    /// w.write(&ndarray::array![1, 2])?;
    /// // Nothing is there until the upload completes.
    /// assert!(blocking::RemoteNpy::open(&at).is_err());
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpy::open(&at)?.len(), 2);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn finish(self) -> Result<()> {
        run(self.0.finish())
    }
}

/// [`crate::NpzWriter`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Location};
///
/// let at = Location::parse("memory:///a.npz")?;
/// let mut w = blocking::NpzWriter::create(&at, true)?;
/// w.archive().add("x", &ndarray::array![1.0f64, 2.0])?;
/// w.archive().add("y", &ndarray::array![3u8])?;
/// w.finish()?;
/// assert_eq!(blocking::RemoteNpz::open(&at)?.names(), ["x", "y"]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// ```
pub struct NpzWriter(crate::NpzWriter);

impl NpzWriter {
    /// [`crate::NpzWriter::create`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///a.npz")?;
    /// // `false`: stored members (`np.savez`), whose rows can be range-read.
    /// let mut w = blocking::NpzWriter::create(&at, false)?;
    /// w.archive().add("x", &ndarray::array![1u8])?;
    /// w.finish()?;
    /// let info = blocking::RemoteNpz::open(&at)?.member_info("x")?;
    /// assert_eq!(info.compression, ndnpy::npz::Compression::Stored);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn create(location: &Location, compressed: bool) -> Result<Self> {
        crate::NpzWriter::create(location, compressed).map(NpzWriter)
    }

    /// [`crate::NpzWriter::archive`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///a.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// // Any array the library can write, by name.
    /// let any = ndnpy::AnyArray::U8(ndarray::array![1u8, 2].into_dyn());
    /// w.archive().add_any("bytes", &any)?;
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpz::open(&at)?.read_any("bytes")?, any);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn archive(&mut self) -> &mut ndnpy::NpzWriter<std::fs::File> {
        self.0.archive()
    }

    /// [`crate::NpzWriter::finish`].
    ///
    /// ```
    /// # use ndnpy_store::{blocking, Location};
    /// let at = Location::parse("memory:///a.npz")?;
    /// let mut w = blocking::NpzWriter::create(&at, true)?;
    /// w.archive().add("x", &ndarray::array![1u8])?;
    /// // The archive is written to a temporary file, and uploaded only now.
    /// assert!(blocking::RemoteNpz::open(&at).is_err());
    /// w.finish()?;
    /// assert_eq!(blocking::RemoteNpz::open(&at)?.len(), 1);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// ```
    pub fn finish(self) -> Result<()> {
        run(self.0.finish())
    }
}

/// [`crate::download`], blocking.
///
/// ```
/// use ndnpy_store::{blocking, Config, Location};
/// use std::io::{Read, Seek};
///
/// let at = Location::parse("memory:///d.npy")?;
/// blocking::write_npy(&at, &ndarray::Array1::<u8>::from_elem(1000, 7))?;
/// let mut file = tempfile::tempfile()?;
/// // The first 128 bytes (the header), then the rest.
/// let len = blocking::download(&at, &file, 128, |len, _| vec![128..len], Config::default())?;
/// assert_eq!(len, 1128);
/// let mut bytes = Vec::new();
/// file.rewind()?;
/// file.read_to_end(&mut bytes)?;
/// assert_eq!(bytes[1127], 7);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn download(
    location: &Location,
    file: &std::fs::File,
    first: u64,
    more: impl FnOnce(u64, &[u8]) -> Vec<std::ops::Range<u64>>,
    config: Config,
) -> Result<u64> {
    run(crate::download(location, file, first, more, config))
}

/// [`crate::upload`], blocking.
///
/// ```
/// use ndnpy::WriteNpy;
/// use ndnpy_store::{blocking, Config, Location};
///
/// // A `.npy` written locally, then uploaded whole.
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("u.npy");
/// ndarray::array![1u32, 2, 3].write_npy(&path)?;
/// let at = Location::parse("memory:///u.npy")?;
/// blocking::upload(&at, std::fs::File::open(&path)?, Config::default())?;
/// let back = blocking::RemoteNpy::open(&at)?.read::<u32, ndarray::Ix1>()?;
/// assert_eq!(back, ndarray::array![1, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn upload(location: &Location, file: std::fs::File, config: Config) -> Result<()> {
    run(crate::upload(location, file, config))
}
