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
use ndnpy::{AnyArray, Compression, Element, Header, MemberInfo, NpzReader};
use object_store::GetRange;
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
/// let mut w = NpzWriter::new_compressed(Cursor::new(Vec::new()));
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
    pub async fn open(location: &Location) -> Result<RemoteNpz> {
        Self::open_with(location, Config::default()).await
    }

    /// Opens the archive a URL names ([`Location::parse`]).
    pub async fn open_url(url: &str) -> Result<RemoteNpz> {
        Self::open(&Location::parse(url)?).await
    }

    /// Like [`RemoteNpz::open`], with request sizes and limits.
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
    pub fn names(&self) -> Vec<String> {
        self.names.as_ref().clone()
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the archive has no members.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// How member `name` (or `name.npy`) is stored: one GET of its local
    /// header unless already held.
    pub async fn member_info(&self, name: &str) -> Result<MemberInfo> {
        let name = name.to_owned();
        self.with_reader(move |npz| Ok(npz.member_info(&name)?))
            .await
    }

    /// The header of member `name`.
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
    pub async fn read_any(&self, name: &str) -> Result<AnyArray> {
        let name = name.to_owned();
        let span = self.plan.clone();
        self.with_reader(move |npz| {
            plan(npz, &span, &name, None)?;
            Ok(npz.read_any(&name)?)
        })
        .await
    }

    /// Member `name` as a [`RemoteNpy`], when it is stored uncompressed:
    /// then its rows can be read by ranged GETs
    /// ([`RemoteNpy::read_range`]) and the whole of it by parallel ones.
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
