//! A folder of `.npy` shards in a store read as one array: a dask stack
//! (`0.npy`, `1.npy`, ... and `info`) or a plain folder of shards, as
//! `ndnpy::stack::NpyStack` reads them on a path. The checks and the plan
//! of a range (which shards, which rows, which bytes) are the library's
//! (`ndnpy::stack::plan`), so both read the same stacks the same way and
//! refuse the same ones; here they run on ranged GETs.

mod read;

use crate::config::Config;
use crate::error::{Result, StoreError};
use crate::location::Location;
use crate::npy::RemoteNpy;
use crate::object::Object;
use futures::{StreamExt, TryStreamExt};
use ndnpy::stack::plan::{self, StackCheck, StackPlan};
use object_store::path::Path;
use object_store::GetRange;

/// Bytes asked for by a shard's first GET: its header (`np.save` writes
/// 128 bytes of it; a longer one takes a second GET), not its rows.
const SHARD_PREFIX: u64 = 4 << 10;

/// Largest `info` read, as the library's (`ndnpy::stack`): far more than
/// any stack's chunk list needs, and refused before it is read whole.
const MAX_INFO_LEN: u64 = 64 << 20;

/// A folder of `.npy` shards in a store, read as one array: a dask stack
/// (`0.npy`, `1.npy`, ... and `info`) or a plain folder of shards, as
/// `ndnpy::stack::NpyStack` reads them on a path, by the library's checks
/// and plan. Opening reads its `info` (a dask stack) or its listing (a
/// plain folder, listed once), then every shard's header, one small GET
/// each.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy_store::RemoteNpyStack;
///
/// let dir = tempfile::tempdir()?;
/// let a = ndarray::Array2::from_shape_fn((10, 3), |(i, j)| (i * 3 + j) as f32);
/// ndnpy::stack::NpyStack::create(dir.path().join("x"), &a, 4)?; // 4 + 4 + 2 rows
/// let url = format!("file://{}", dir.path().join("x").display());
/// let stack = RemoteNpyStack::open_url(&url).await?;
/// assert_eq!((stack.shape(), stack.shards().len()), (&[10, 3][..], 3));
/// let rows = stack.read_range::<f32, ndarray::Ix2>(3..6).await?; // shards 0 and 1
/// assert_eq!(rows, a.slice(ndarray::s![3..6, ..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct RemoteNpyStack {
    shards: Vec<RemoteShard>,
    plan: StackPlan,
    config: Config,
}

/// One shard of a [`RemoteNpyStack`]: its reader, and where its rows lie
/// along the stacking axis.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let dir = tempfile::tempdir()?;
/// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::Array1::<u8>::zeros(5), 2)?;
/// # let url = format!("file://{}", dir.path().join("x").display());
/// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
/// let last = &stack.shards()[2];
/// assert!(last.path().as_ref().ends_with("x/2.npy"));
/// assert_eq!((last.start(), last.len(), last.is_empty()), (4, 1, false));
/// assert_eq!(last.npy().header().shape, [1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct RemoteShard {
    npy: RemoteNpy,
    path: Path,
    start: usize,
    len: usize,
}

impl RemoteShard {
    /// The shard's path in its store.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1u8], 1)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// assert_eq!(stack.shards()[0].path().filename(), Some("0.npy"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its first row along the stacking axis, in the stack's numbering.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1u8, 2, 3], 2)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// assert_eq!(stack.shards()[1].start(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn start(&self) -> usize {
        self.start
    }

    /// Its length along the stacking axis.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1u8, 2, 3], 2)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// assert_eq!(stack.shards()[1].len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no rows along the stacking axis.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1u8], 1)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// assert!(!stack.shards()[0].is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its reader, for anything of the shard alone (a shard is a `.npy`).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir()?;
    /// # ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1u8, 2, 3], 2)?;
    /// # let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// let second = stack.shards()[1].npy().read::<u8, ndarray::Ix1>().await?;
    /// assert_eq!(second, ndarray::array![3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn npy(&self) -> &RemoteNpy {
        &self.npy
    }
}

/// The `.npy` objects directly in the folder `dir`, natural order, from
/// one listing: hidden names (a leading `.`) and deeper objects left out.
async fn listed_shards(dir: &Location) -> Result<Vec<Path>> {
    let below = crate::list(dir).await?;
    let depth = dir.path.parts().count();
    let mut names: Vec<Path> = below
        .into_iter()
        .filter(|p| p.parts().count() == depth + 1)
        .filter(|p| {
            p.filename()
                .is_some_and(|n| n.ends_with(".npy") && !n.starts_with('.'))
        })
        .collect();
    if names.is_empty() {
        return Err(ndnpy::Error::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!(
                "{}: the folder holds no .npy object and no dask `info`, so it is not a stack",
                dir.path
            ),
        ))
        .into());
    }
    names.sort_by(|a, b| plan::natural_cmp(a.filename().unwrap_or(""), b.filename().unwrap_or("")));
    Ok(names)
}

/// The bytes of the `info` object in `dir`, or `None` when there is none.
async fn info_bytes(dir: &Location, config: &Config) -> Result<Option<bytes::Bytes>> {
    let path = dir.path.clone().join(plan::INFO);
    match Object::open(
        dir.store.clone(),
        path.clone(),
        GetRange::Bounded(0..MAX_INFO_LEN + 1),
        config.clone(),
    )
    .await
    {
        Ok((_, bytes)) if bytes.len() as u64 > MAX_INFO_LEN => Err(ndnpy::Error::Pickle(
            ndnpy::error::PickleError::MalformedPickle {
                pos: 0,
                reason: format!(
                    "{path}: more than the {MAX_INFO_LEN} bytes any stack's info needs"
                ),
            },
        )
        .into()),
        Ok((_, bytes)) => Ok(Some(bytes)),
        Err(StoreError::Store(object_store::Error::NotFound { .. })) => Ok(None),
        Err(e) => Err(e),
    }
}

impl RemoteNpyStack {
    /// Opens the stack in the folder `location`: a dask stack when it holds
    /// `info` (no listing: `info` gives the shard count, so an HTTP server
    /// that cannot list serves one), else its `.npy` objects in natural
    /// order, listed once.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{write_npy, Location, RemoteNpyStack};
    ///
    /// let store = Location::parse("memory:///")?.store;
    /// for (name, rows) in [("shard_2.npy", 2), ("shard_10.npy", 3)] {
    ///     let a = ndarray::Array1::from_elem(rows, name.len() as u8);
    ///     write_npy(&Location::new(store.clone(), format!("runs/{name}")), &a).await?;
    /// }
    /// let stack = RemoteNpyStack::open(&Location::new(store, "runs")).await?;
    /// assert!(!stack.is_dask());
    /// let all = stack.read::<u8, ndarray::Ix1>().await?;
    /// assert_eq!(all.to_vec(), [11, 11, 12, 12, 12]); // shard_2 before shard_10
    /// # Ok::<(), ndnpy_store::StoreError>(())
    /// # }).unwrap();
    /// ```
    pub async fn open(location: &Location) -> Result<RemoteNpyStack> {
        Self::open_with(location, Config::default()).await
    }

    /// Opens the stack in the folder a URL names ([`Location::parse`]).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let dir = tempfile::tempdir()?;
    /// ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1i64, 2, 3], 2)?;
    /// let url = format!("file://{}", dir.path().join("x").display());
    /// let stack = ndnpy_store::RemoteNpyStack::open_url(&url).await?;
    /// assert!(stack.is_dask());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn open_url(url: &str) -> Result<RemoteNpyStack> {
        Self::open(&Location::parse(url)?).await
    }

    /// Like [`RemoteNpyStack::open`], with request sizes, parallelism and
    /// the library's limits ([`Config::read_options`]) for every shard's
    /// header and every read.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use ndnpy_store::{Config, RemoteNpyStack};
    ///
    /// let dir = tempfile::tempdir()?;
    /// ndnpy::stack::NpyStack::create(dir.path().join("x"), &ndarray::array![1u8, 2], 1)?;
    /// let at = ndnpy_store::Location::parse(&format!("file://{}", dir.path().join("x").display()))?;
    /// let tight = Config::default().read_options(ndnpy::ReadOptions::default().max_header_len(10));
    /// assert!(RemoteNpyStack::open_with(&at, tight).await.is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn open_with(location: &Location, config: Config) -> Result<RemoteNpyStack> {
        let (mut check, paths) = match info_bytes(location, &config).await? {
            Some(info) => {
                let name = location.path.clone().join(plan::INFO).to_string();
                let check = StackCheck::dask(&info, &name)?;
                let count = check.shard_count().unwrap_or(0);
                let paths: Vec<Path> = (0..count)
                    .map(|i| location.path.clone().join(plan::dask_shard_name(i)))
                    .collect();
                (check, paths)
            }
            None => (StackCheck::plain(), listed_shards(location).await?),
        };
        // Headers in order, `concurrency` GETs in flight; the first that
        // fails or disagrees stops the rest (an `info` claiming a million
        // shards costs what is present up to the first missing one).
        let mut opened = futures::stream::iter(paths)
            .map(|path| {
                let at = Location::new(location.store.clone(), path.clone());
                let config = config.clone();
                async move {
                    let npy = RemoteNpy::open_prefix(&at, config, SHARD_PREFIX).await?;
                    Ok::<_, StoreError>((path, npy))
                }
            })
            .buffered(config.get_concurrency().max(1));
        let mut kept = Vec::new();
        while let Some((path, npy)) = opened.try_next().await? {
            check.push(path.as_ref(), npy.header())?;
            kept.push((path, npy));
        }
        drop(opened);
        let plan = check.finish()?;
        let shards = kept
            .into_iter()
            .zip(plan.spans())
            .map(|((path, npy), &(start, len))| RemoteShard {
                npy,
                path,
                start,
                len,
            })
            .collect();
        Ok(RemoteNpyStack {
            shards,
            plan,
            config,
        })
    }
}
