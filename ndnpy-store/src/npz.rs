//! An `.npz` object: the library's archive reader over ranged GETs. The
//! tail and the central directory take a handful of requests whatever the
//! member count; each member is then one streaming GET (plus one for its
//! local header when that is not already held), inflated as it arrives.

use crate::config::Config;
use crate::error::{Result, StoreError};
use crate::location::Location;
use crate::npy::{RemoteNpy, PREFIX_LEN};
use crate::object::Object;
use crate::reader::{Plan, RangeReader};
use ndarray::{Array, Dimension};
use ndnpy::{dtype::Header, npz::Compression, npz::MemberInfo, AnyArray, Element, NpzReader};
use object_store::GetRange;
use std::ops::RangeBounds;
use std::sync::{Arc, Mutex};

/// What the first request asks for: the end record, searched for in the
/// last 64 KiB + 22 bytes as `zipfile` searches, and with it the whole
/// directory of small archives.
const TAIL_LEN: u64 = (1 << 16) + 22;

/// An `.npz` archive in object storage, its directory read.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy::NpzWriter;
/// use ndnpy_store::{Location, RemoteNpz};
/// use object_store::{memory::InMemory, ObjectStoreExt};
/// use std::{io::Cursor, sync::Arc};
///
/// let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
/// w.add("x", &ndarray::array![1.0f64, 2.0])?;
/// let bytes = w.finish_into_inner()?.into_inner();
/// let store = Arc::new(InMemory::new());
/// store.put(&"a.npz".into(), bytes.into()).await?;
///
/// let npz = RemoteNpz::open(&Location::new(store, "a.npz")).await?;
/// assert_eq!(npz.names(), ["x"]);
/// let x = npz.read::<f64, ndarray::Ix1>("x").await?;
/// assert_eq!(x, ndarray::array![1.0, 2.0]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct RemoteNpz {
    object: Object,
    names: Arc<Vec<String>>,
    reader: Arc<Mutex<NpzReader<RangeReader>>>,
    plan: Plan,
}

impl std::fmt::Debug for RemoteNpz {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteNpz")
            .field("path", &self.object.path)
            .field("members", &self.names.len())
            .finish()
    }
}

impl RemoteNpz {
    /// Opens the archive at `location`: a GET of its last 64 KiB (the whole
    /// of a small archive), one of its first bytes, and one of the central
    /// directory when the first did not hold it.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// # let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = NpzWriter::create(&at, true)?;
    /// # w.archive().add("x", &ndarray::array![1u8])?;
    /// # w.finish().await?;
    /// let npz = RemoteNpz::open(&at).await?;
    /// assert_eq!(npz.names(), ["x"]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn open(location: &Location) -> Result<RemoteNpz> {
        Self::open_with(location, Config::default()).await
    }

    /// Opens the archive a URL names ([`Location::parse`]).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let url = format!("file://{}", dir.path().join("z.npz").display());
    /// let mut w = NpzWriter::create(&Location::parse(&url)?, true)?;
    /// w.archive().add("x", &ndarray::array![1u8])?;
    /// w.finish().await?;
    /// assert_eq!(RemoteNpz::open_url(&url).await?.names(), ["x"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn open_url(url: &str) -> Result<RemoteNpz> {
        Self::open(&Location::parse(url)?).await
    }

    /// Like [`RemoteNpz::open`], with request sizes and limits.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// # let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = NpzWriter::create(&at, true)?;
    /// # w.archive().add("x", &ndarray::array![1u8])?;
    /// # w.finish().await?;
    /// use ndnpy_store::Config;
    /// let npz = RemoteNpz::open_with(&at, Config::default().chunk_size(1 << 20)).await?;
    /// assert_eq!(npz.len(), 1);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn open_with(location: &Location, config: Config) -> Result<RemoteNpz> {
        let (object, tail) = Object::open(
            location.store.clone(),
            location.path.clone(),
            GetRange::Suffix(TAIL_LEN),
            config,
        )
        .await?;
        let held = (object.size() - tail.len() as u64, tail);
        let for_reader = object.clone();
        let options = object.config.read_options;
        let plan = Plan::default();
        let for_plan = plan.clone();
        let reader = blocking(move |handle| {
            let reader = RangeReader::new(for_reader, handle, held, for_plan);
            Ok(NpzReader::new_with(reader, &options)?)
        })
        .await?;
        Ok(RemoteNpz {
            object,
            names: Arc::new(reader.names()),
            reader: Arc::new(Mutex::new(reader)),
            plan,
        })
    }

    /// The array names, in archive order (as `NpzFile.files`).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// # let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = NpzWriter::create(&at, false)?;
    /// # w.archive().add("w", &ndarray::array![1u8])?;
    /// # w.archive().add("b", &ndarray::array![2u8])?;
    /// # w.finish().await?;
    /// assert_eq!(RemoteNpz::open(&at).await?.names(), ["w", "b"]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn names(&self) -> Vec<String> {
        self.names.as_ref().clone()
    }

    /// The number of members.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// # let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = NpzWriter::create(&at, false)?;
    /// # w.archive().add("w", &ndarray::array![1u8])?;
    /// # w.archive().add("b", &ndarray::array![2u8])?;
    /// # w.finish().await?;
    /// assert_eq!(RemoteNpz::open(&at).await?.len(), 2);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the archive has no members.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// # let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = NpzWriter::create(&at, false)?;
    /// # w.finish().await?;
    /// assert!(RemoteNpz::open(&at).await?.is_empty());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// How member `name` (or `name.npy`) is stored: one GET of its local
    /// header unless already held.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// # let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = NpzWriter::create(&at, false)?;
    /// # w.archive().add("x", &ndarray::Array1::<u8>::zeros(1000))?;
    /// # w.finish().await?;
    /// // `x` or `x.npy`: NumPy's lookup rules.
    /// let info = RemoteNpz::open(&at).await?.member_info("x.npy").await?;
    /// assert_eq!((info.compression, info.size), (ndnpy::npz::Compression::Stored, 1128));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn member_info(&self, name: &str) -> Result<MemberInfo> {
        let name = name.to_owned();
        self.with_reader(move |npz| Ok(npz.member_info(&name)?))
            .await
    }

    /// The header of member `name`.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// # let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = NpzWriter::create(&at, true)?;
    /// # w.archive().add("m", &ndarray::Array2::<f64>::zeros((2, 3)))?;
    /// # w.finish().await?;
    /// let h = RemoteNpz::open(&at).await?.header("m").await?;
    /// assert_eq!(h.shape, [2, 3]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn header(&self, name: &str) -> Result<Header> {
        let name = name.to_owned();
        let span = self.plan.clone();
        self.with_reader(move |npz| {
            plan(npz, &span, &name, Some(PREFIX_LEN))?;
            Ok(npz.header(&name)?)
        })
        .await
    }

    /// Reads member `name` (or `name.npy`) as an array, as
    /// [`ndnpy::NpzReader::read`] does, streaming its bytes through one GET.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// # let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = NpzWriter::create(&at, true)?;
    /// # w.archive().add("m", &ndarray::array![[1u8, 2], [3, 4]])?;
    /// # w.finish().await?;
    /// let npz = RemoteNpz::open(&at).await?;
    /// assert_eq!(npz.read::<u8, ndarray::Ix2>("m").await?, ndarray::array![[1, 2], [3, 4]]);
    /// assert!(npz.read::<u8, ndarray::Ix2>("missing").await.is_err());
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn read<T: Element + Send, D: Dimension + 'static>(
        &self,
        name: &str,
    ) -> Result<Array<T, D>> {
        let name = name.to_owned();
        let span = self.plan.clone();
        self.with_reader(move |npz| {
            plan(npz, &span, &name, None)?;
            Ok(npz.read::<T, D>(&name)?)
        })
        .await
    }

    /// Reads member `name` whatever its dtype, object arrays included.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// # let at = Location::parse("memory:///z.npz")?;
    /// # let mut w = NpzWriter::create(&at, true)?;
    /// # w.archive().add("b", &ndarray::array![true])?;
    /// # w.finish().await?;
    /// let any = RemoteNpz::open(&at).await?.read_any("b").await?;
    /// assert_eq!(any, ndnpy::AnyArray::Bool(ndarray::array![true].into_dyn()));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn read_any(&self, name: &str) -> Result<AnyArray> {
        let name = name.to_owned();
        let span = self.plan.clone();
        self.with_reader(move |npz| {
            plan(npz, &span, &name, None)?;
            Ok(npz.read_any(&name)?)
        })
        .await
    }

    /// Reads rows `rows` of member `name`'s growth axis, as
    /// [`ndnpy::NpzReader::read_range`] does: for a stored member one GET
    /// of their bytes; for a compressed one the bytes from the nearest
    /// checkpoint of the member's seek index (built by the first reads,
    /// which fetch the member up to the rows once; kept while this
    /// `RemoteNpz` lives, for every clone of it).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndarray::{s, Array2, Ix2};
    /// use ndnpy_store::{Location, RemoteNpz};
    /// use object_store::{memory::InMemory, ObjectStoreExt};
    /// use std::{io::Cursor, sync::Arc};
    ///
    /// let a = Array2::from_shape_fn((5000, 3), |(i, j)| (i * 3 + j) as i32);
    /// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    /// w.add("a", &a)?;
    /// let store = Arc::new(InMemory::new());
    /// store.put(&"r.npz".into(), w.finish_into_inner()?.into_inner().into()).await?;
    ///
    /// let npz = RemoteNpz::open(&Location::new(store, "r.npz")).await?;
    /// let rows = npz.read_range::<i32, Ix2>("a", 2000..2010).await?;
    /// assert_eq!(rows, a.slice(s![2000..2010, ..]));
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn read_range<T: Element + Send, D: Dimension + 'static>(
        &self,
        name: &str,
        rows: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        let rows = (rows.start_bound().cloned(), rows.end_bound().cloned());
        let name = name.to_owned();
        let span = self.plan.clone();
        self.with_reader(move |npz| {
            // Positioned reads: each a GET of its bytes, or a scan's window.
            *span.lock().unwrap_or_else(|p| p.into_inner()) = None;
            Ok(npz.read_range::<T, D>(&name, rows)?)
        })
        .await
    }

    /// Reads every member, in archive order, as
    /// [`ndnpy::NpzReader::arrays`] does: the archive's members stream in one
    /// GET, and the next members are inflated on other cores while earlier
    /// ones are decoded (in the memory bound of
    /// [`ndnpy::NpzReader::read_ahead`]). The first member that cannot be
    /// read ends it with its error.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{Location, RemoteNpz};
    /// use object_store::{memory::InMemory, ObjectStoreExt};
    /// use std::{io::Cursor, sync::Arc};
    ///
    /// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    /// w.add("x", &ndarray::array![1.0f64, 2.0])?;
    /// w.add("y", &ndarray::array![3u8])?;
    /// let store = Arc::new(InMemory::new());
    /// store.put(&"all.npz".into(), w.finish_into_inner()?.into_inner().into()).await?;
    ///
    /// let npz = RemoteNpz::open(&Location::new(store, "all.npz")).await?;
    /// let all = npz.read_all().await?;
    /// assert_eq!(all.len(), 2);
    /// assert_eq!(all[1].0, "y");
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn read_all(&self) -> Result<Vec<(String, AnyArray)>> {
        let span = self.plan.clone();
        let size = self.object.size();
        self.with_reader(move |npz| {
            let set = |to: Option<std::ops::Range<u64>>| {
                *span.lock().unwrap_or_else(|p| p.into_inner()) = to;
            };
            set(Some(0..size));
            let all: std::result::Result<Vec<_>, _> =
                npz.arrays().map(|(n, a)| a.map(|a| (n, a))).collect();
            set(None);
            Ok(all?)
        })
        .await
    }

    /// Member `name` as a [`RemoteNpy`], when it is stored uncompressed:
    /// then its rows can be read by ranged GETs
    /// ([`RemoteNpy::read_range`]) and the whole of it by parallel ones.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{Location, NpzWriter, RemoteNpz};
    /// let at = Location::parse("memory:///z.npz")?;
    /// let mut w = NpzWriter::create(&at, false)?; // stored members
    /// w.archive().add("x", &ndarray::Array1::<i32>::from_iter(0..1000))?;
    /// w.finish().await?;
    /// let x = RemoteNpz::open(&at).await?.member_npy("x").await?;
    /// assert_eq!(x.read_range::<i32, ndarray::Ix1>(10..12).await?, ndarray::array![10, 11]);
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn member_npy(&self, name: &str) -> Result<RemoteNpy> {
        let info = self.member_info(name).await?;
        if info.compression != Compression::Stored
            || info.encrypted
            || info.size != info.compressed_size
        {
            return Err(StoreError::Range(format!(
                "member '{}' is compressed: its rows have no fixed offsets (read it whole)",
                info.name
            )));
        }
        let first_end = info.data_start + info.size.min(PREFIX_LEN);
        let first = self.object.get(info.data_start..first_end).await?;
        RemoteNpy::from_first(self.object.clone(), info.data_start, info.size, first).await
    }

    /// Runs `f` on the library's reader on a blocking thread.
    async fn with_reader<X: Send + 'static>(
        &self,
        f: impl FnOnce(&mut NpzReader<RangeReader>) -> Result<X> + Send + 'static,
    ) -> Result<X> {
        let reader = self.reader.clone();
        blocking(move |_| {
            let mut npz = reader
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            f(&mut npz)
        })
        .await
    }
}

/// Announces member `name`'s bytes (the first `limit` of them, or all) to
/// the reader, so that reading it is one streaming GET.
fn plan(
    npz: &mut NpzReader<RangeReader>,
    span: &Plan,
    name: &str,
    limit: Option<u64>,
) -> Result<()> {
    let info = npz.member_info(name)?;
    let len = limit.map_or(info.compressed_size, |l| l.min(info.compressed_size));
    *span.lock().unwrap_or_else(|p| p.into_inner()) = Some(info.data_start..info.data_start + len);
    Ok(())
}

/// Runs blocking work (the library's reader, waiting for GETs) off the
/// async threads.
pub(crate) async fn blocking<X: Send + 'static>(
    f: impl FnOnce(tokio::runtime::Handle) -> Result<X> + Send + 'static,
) -> Result<X> {
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || f(handle))
        .await
        .map_err(|e| StoreError::Io(std::io::Error::other(e)))?
}
