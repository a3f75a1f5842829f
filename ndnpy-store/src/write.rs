//! Writing to a store by multipart upload, in bounded memory. The object
//! appears only when the upload completes; a failed or dropped writer
//! aborts it.
//!
//! `.npy` data goes through the library's streaming `ndnpy::NpyWriter`,
//! whose header is known only at the end (it records the row count). The
//! first part, which holds the header, is therefore kept in memory and
//! uploaded last: stores with part-by-index uploads (S3, GCS, Azure,
//! memory) take the other parts as they fill, at most
//! [`Config::parts_in_flight`] at a time. Other stores (local files, HTTP)
//! get the later parts spooled to a temporary file and uploaded in order at
//! the end. Archives are written by the library's `ndnpy::NpzWriter`,
//! which patches each member's local header after its data, into a
//! temporary file uploaded by parts at the end.

use crate::config::Config;
use crate::error::{Result, StoreError};
use crate::location::Location;
use crate::upload::{upload_in_order, PartSink, Upload};
use ndarray::{ArrayBase, Axis, Data, Dimension, Slice};
use ndnpy::{Element, Order};
use std::fs::File;
use std::io::{Seek, SeekFrom};

/// Writes `array` as a `.npy` object at `location`, as `np.save` writes it
/// (C order), by multipart upload in bounded memory: rows are encoded a
/// part at a time.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy_store::{write_npy, Location, RemoteNpy};
///
/// let at = Location::parse("memory:///x.npy")?;
/// write_npy(&at, &ndarray::Array2::<i32>::zeros((3, 4))).await?;
/// let back = RemoteNpy::open(&at).await?.read::<i32, ndarray::Ix2>().await?;
/// assert_eq!(back.dim(), (3, 4));
/// # Ok::<(), ndnpy_store::StoreError>(())
/// # }).unwrap();
/// ```
pub async fn write_npy<T: Element, S: Data<Elem = T>, D: Dimension>(
    location: &Location,
    array: &ArrayBase<S, D>,
) -> Result<()> {
    write_npy_with(location, array, Config::default()).await
}

/// [`write_npy`] with part sizes and parallelism.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy_store::{write_npy_with, Config, Location, RemoteNpy};
///
/// let at = Location::parse("memory:///big.npy")?;
/// // 16 MB in 5 MiB parts, two in flight: about 11 MiB of memory at most.
/// let config = Config::default().part_size(5 << 20).parts_in_flight(2);
/// write_npy_with(&at, &ndarray::Array2::<f64>::ones((2_000, 1_000)), config).await?;
/// let npy = RemoteNpy::open(&at).await?;
/// assert_eq!(npy.header().shape, [2_000, 1_000]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// # }).unwrap();
/// ```
pub async fn write_npy_with<T: Element, S: Data<Elem = T>, D: Dimension>(
    location: &Location,
    array: &ArrayBase<S, D>,
    config: Config,
) -> Result<()> {
    let shape = array.shape();
    if shape.is_empty() {
        // A 0-d array: one element, one part.
        let mut writer = NpyWriter::<T>::create_with(location, &[], Order::C, config).await?;
        writer
            .write(&array.view().into_shape_with_order(1).expect("one element"))
            .await?;
        return writer.finish().await;
    }
    let part_size = config.part_size;
    let mut writer = NpyWriter::<T>::create_with(location, &shape[1..], Order::C, config).await?;
    let row_elems: usize = shape[1..].iter().product::<usize>().max(1);
    let item = std::mem::size_of::<T>().max(1);
    let rows_per_block = (part_size / (row_elems * item)).max(1);
    let mut start = 0;
    while start < shape[0] {
        let end = (start + rows_per_block).min(shape[0]);
        writer
            .write(&array.slice_axis(Axis(0), Slice::from(start..end)))
            .await?;
        start = end;
    }
    writer.finish().await
}

/// A `.npy` object written in blocks of rows whose count is known only at
/// the end, as [`ndnpy::NpyWriter`] writes a file: the upload's first part,
/// with the header, is sent last, once the shape is known.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy::Order;
/// use ndnpy_store::{Location, NpyWriter, RemoteNpy};
///
/// let at = Location::parse("memory:///log.npy")?;
/// let mut w = NpyWriter::<f32>::create(&at, &[2], Order::C).await?;
/// w.write(&ndarray::array![[1.0, 2.0], [3.0, 4.0]]).await?;
/// w.write(&ndarray::array![5.0, 6.0]).await?;
/// w.finish().await?;
/// let back = RemoteNpy::open(&at).await?;
/// assert_eq!(back.header().shape, [3, 2]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// # }).unwrap();
/// ```
pub struct NpyWriter<T: Element> {
    inner: ndnpy::NpyWriter<T, PartSink>,
    sink: PartSink,
    upload: Upload,
}

impl<T: Element> NpyWriter<T> {
    /// Starts the upload of a `.npy` object with rows of `inner_shape`
    /// along the growth axis of `order` (`&[]` for a 1-d array).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy::Order;
    /// use ndnpy_store::{Location, NpyWriter};
    /// let at = Location::parse("memory:///w.npy")?;
    /// // Rows of 3×2; the first axis grows.
    /// let mut w = NpyWriter::<f64>::create(&at, &[3, 2], Order::C).await?;
    /// w.write(&ndarray::Array3::<f64>::zeros((4, 3, 2))).await?;
    /// w.finish().await?;
    /// assert_eq!(ndnpy_store::RemoteNpy::open(&at).await?.header().shape, [4, 3, 2]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn create(location: &Location, inner_shape: &[usize], order: Order) -> Result<Self> {
        Self::create_with(location, inner_shape, order, Config::default()).await
    }

    /// [`NpyWriter::create`] with part sizes and parallelism.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy::Order;
    /// use ndnpy_store::{Config, Location, NpyWriter};
    /// let at = Location::parse("memory:///w.npy")?;
    /// let config = Config::default().part_size(5 << 20).parts_in_flight(2);
    /// let mut w = NpyWriter::<u8>::create_with(&at, &[], Order::C, config).await?;
    /// w.write(&ndarray::Array1::<u8>::zeros(12 << 20)).await?; // three parts
    /// w.finish().await?;
    /// assert_eq!(ndnpy_store::RemoteNpy::open(&at).await?.len(), 12 << 20);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn create_with(
        location: &Location,
        inner_shape: &[usize],
        order: Order,
        config: Config,
    ) -> Result<Self> {
        let (mut upload, sink) = Upload::start(location, config).await?;
        let inner = match ndnpy::NpyWriter::new(sink.clone(), inner_shape, order) {
            Ok(inner) => inner,
            Err(e) => {
                // Refused (an element type that cannot be written in
                // blocks of rows, a shape too large): the upload just
                // begun is aborted before the error is returned, as in
                // `finish`, not left to `Drop`'s spawned abort.
                upload.abort().await;
                return Err(e.into());
            }
        };
        Ok(NpyWriter {
            inner,
            sink,
            upload,
        })
    }

    /// Writes a block of rows (as [`ndnpy::NpyWriter::write`]) and uploads
    /// the parts it fills.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy::Order;
    /// use ndnpy_store::{Location, NpyWriter, RemoteNpy};
    /// let at = Location::parse("memory:///w.npy")?;
    /// let mut w = NpyWriter::<i32>::create(&at, &[2], Order::C).await?;
    /// w.write(&ndarray::array![[1, 2]]).await?;
    /// w.write(&ndarray::array![3, 4]).await?; // one row may come as 1-d
    /// w.finish().await?;
    /// let back = RemoteNpy::open(&at).await?.read::<i32, ndarray::Ix2>().await?;
    /// assert_eq!(back, ndarray::array![[1, 2], [3, 4]]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn write<S: Data<Elem = T>, D: Dimension>(
        &mut self,
        block: &ArrayBase<S, D>,
    ) -> Result<()> {
        self.inner.write(block)?;
        self.upload.drain(&self.sink).await
    }

    /// Rows written so far.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy::Order;
    /// use ndnpy_store::{Location, NpyWriter};
    /// let at = Location::parse("memory:///w.npy")?;
    /// let mut w = NpyWriter::<u16>::create(&at, &[], Order::C).await?;
    /// w.write(&ndarray::array![1, 2, 3]).await?;
    /// assert_eq!(w.rows(), 3);
    /// w.finish().await?;
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn rows(&self) -> usize {
        self.inner.rows()
    }

    /// Records the final shape, uploads the last parts and the first, and
    /// completes the upload: the object appears now. On an error the
    /// upload's abort has been sent and answered by the time this returns
    /// (a program may return the error from `main` at once); the object
    /// does not appear.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy::Order;
    /// use ndnpy_store::{Location, NpyWriter, RemoteNpy};
    /// let at = Location::parse("memory:///w.npy")?;
    /// let mut w = NpyWriter::<u8>::create(&at, &[], Order::C).await?;
    /// w.write(&ndarray::array![7]).await?;
    /// // Dropped without `finish`, a writer leaves no object behind.
    /// assert!(RemoteNpy::open(&at).await.is_err());
    /// w.finish().await?;
    /// assert_eq!(RemoteNpy::open(&at).await?.len(), 1);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn finish(self) -> Result<()> {
        let NpyWriter {
            inner, mut upload, ..
        } = self;
        match inner.finish() {
            Ok(sink) => upload.finish(sink).await,
            Err(e) => {
                upload.abort().await;
                Err(e.into())
            }
        }
    }
}

/// An `.npz` archive written by the library's [`ndnpy::NpzWriter`] to a
/// temporary file (constant memory) and uploaded by parts by
/// [`NpzWriter::finish`]: the archive appears then.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy_store::{Location, NpzWriter, RemoteNpz};
///
/// let at = Location::parse("memory:///a.npz")?;
/// let mut w = NpzWriter::create(&at, true)?;
/// w.archive().add("x", &ndarray::array![1u8, 2, 3])?;
/// w.finish().await?;
/// # Ok::<(), ndnpy_store::StoreError>(())
/// # }).unwrap();
/// ```
pub struct NpzWriter {
    archive: ndnpy::NpzWriter<File>,
    location: Location,
    config: Config,
}

impl NpzWriter {
    /// Starts an archive at `location`, its members deflated (as
    /// `np.savez_compressed`) or stored (as `np.savez`).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// let at = Location::parse("memory:///a.npz")?;
    /// let mut w = NpzWriter::create(&at, true)?; // as np.savez_compressed
    /// w.archive().add("x", &ndarray::Array1::<f64>::zeros(1000))?;
    /// w.finish().await?;
    /// let info = RemoteNpz::open(&at).await?.member_info("x").await?;
    /// assert_eq!(info.compression, ndnpy::npz::Compression::Deflated);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn create(location: &Location, compressed: bool) -> Result<Self> {
        Self::create_with(location, compressed, Config::default())
    }

    /// [`NpzWriter::create`] with part sizes and parallelism.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{Config, Location, NpzWriter, RemoteNpz};
    /// let at = Location::parse("memory:///a.npz")?;
    /// let mut w = NpzWriter::create_with(&at, false, Config::default().parts_in_flight(1))?;
    /// w.archive().add("x", &ndarray::array![1u8])?;
    /// w.finish().await?;
    /// assert_eq!(RemoteNpz::open(&at).await?.names(), ["x"]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn create_with(location: &Location, compressed: bool, config: Config) -> Result<Self> {
        let file = tempfile::tempfile()?;
        let archive = ndnpy::NpzWriter::new(file);
        let archive = if compressed {
            archive.codec(ndnpy::npz::Codec::deflate())
        } else {
            archive
        };
        Ok(NpzWriter {
            archive,
            location: location.clone(),
            config,
        })
    }

    /// The library's archive writer: add members with its `add`, `add_any`,
    /// `add_streaming`...
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// let at = Location::parse("memory:///a.npz")?;
    /// let mut w = NpzWriter::create(&at, true)?;
    /// // The library's writer: typed arrays, any arrays, streamed members.
    /// w.archive().add("a", &ndarray::array![1i32])?;
    /// w.archive().add_any("b", &ndnpy::AnyArray::F64(ndarray::array![0.5].into_dyn()))?;
    /// w.finish().await?;
    /// assert_eq!(RemoteNpz::open(&at).await?.len(), 2);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn archive(&mut self) -> &mut ndnpy::NpzWriter<File> {
        &mut self.archive
    }

    /// Finishes the archive and uploads it. On an error the upload, if it
    /// had begun, has been aborted by the time this returns.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// let at = Location::parse("memory:///a.npz")?;
    /// let mut w = NpzWriter::create(&at, false)?;
    /// w.archive().add("a", &ndarray::array![1u8])?;
    /// // The members are in a local temporary file until now.
    /// assert!(RemoteNpz::open(&at).await.is_err());
    /// w.finish().await?;
    /// assert!(RemoteNpz::open(&at).await.is_ok());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn finish(self) -> Result<()> {
        let mut file = self.archive.finish_into_inner()?;
        file.seek(SeekFrom::Start(0))?;
        upload_in_order(
            &*self.location.store,
            &self.location.path,
            &self.config,
            Vec::new(),
            file,
            Vec::new(),
        )
        .await
    }
}

impl From<StoreError> for ndnpy::Error {
    fn from(e: StoreError) -> Self {
        ndnpy::Error::Io(e.into())
    }
}
