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
use ndarray::{Array, ArrayBase, Data, Dimension};
use ndnpy::{AnyArray, Element, Header, LayoutElement, MemberInfo, Order};
use std::future::Future;
use std::ops::RangeBounds;
use std::sync::OnceLock;

fn run<F: Future>(future: F) -> F::Output {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_name("ndnpy-store")
                .build()
                .expect("a tokio runtime")
        })
        .block_on(future)
}

/// [`crate::RemoteNpy`], blocking.
#[derive(Debug, Clone)]
pub struct RemoteNpy(pub crate::RemoteNpy);

impl RemoteNpy {
    /// [`crate::RemoteNpy::open`].
    pub fn open(location: &Location) -> Result<Self> {
        run(crate::RemoteNpy::open(location)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::open_url`].
    pub fn open_url(url: &str) -> Result<Self> {
        run(crate::RemoteNpy::open_url(url)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::open_with`].
    pub fn open_with(location: &Location, config: Config) -> Result<Self> {
        run(crate::RemoteNpy::open_with(location, config)).map(RemoteNpy)
    }

    /// [`crate::RemoteNpy::header`].
    pub fn header(&self) -> &Header {
        self.0.header()
    }

    /// [`crate::RemoteNpy::len`].
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// [`crate::RemoteNpy::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// [`crate::RemoteNpy::read`].
    pub fn read<T: LayoutElement, D: Dimension>(&self) -> Result<Array<T, D>> {
        run(self.0.read())
    }

    /// [`crate::RemoteNpy::read_range`].
    pub fn read_range<T: Element, D: Dimension>(
        &self,
        rows: impl RangeBounds<usize>,
    ) -> Result<Array<T, D>> {
        run(self.0.read_range(rows))
    }

    /// [`crate::RemoteNpy::read_any`].
    pub fn read_any(&self) -> Result<AnyArray> {
        run(self.0.read_any())
    }
}

/// [`crate::RemoteNpz`], blocking.
#[derive(Debug, Clone)]
pub struct RemoteNpz(pub crate::RemoteNpz);

impl RemoteNpz {
    /// [`crate::RemoteNpz::open`].
    pub fn open(location: &Location) -> Result<Self> {
        run(crate::RemoteNpz::open(location)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::open_url`].
    pub fn open_url(url: &str) -> Result<Self> {
        run(crate::RemoteNpz::open_url(url)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::open_with`].
    pub fn open_with(location: &Location, config: Config) -> Result<Self> {
        run(crate::RemoteNpz::open_with(location, config)).map(RemoteNpz)
    }

    /// [`crate::RemoteNpz::names`].
    pub fn names(&self) -> Vec<String> {
        self.0.names()
    }

    /// [`crate::RemoteNpz::len`].
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// [`crate::RemoteNpz::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// [`crate::RemoteNpz::member_info`].
    pub fn member_info(&self, name: &str) -> Result<MemberInfo> {
        run(self.0.member_info(name))
    }

    /// [`crate::RemoteNpz::header`].
    pub fn header(&self, name: &str) -> Result<Header> {
        run(self.0.header(name))
    }

    /// [`crate::RemoteNpz::read`].
    pub fn read<T: Element + Send, D: Dimension + 'static>(
        &self,
        name: &str,
    ) -> Result<Array<T, D>> {
        run(self.0.read(name))
    }

    /// [`crate::RemoteNpz::read_any`].
    pub fn read_any(&self, name: &str) -> Result<AnyArray> {
        run(self.0.read_any(name))
    }

    /// [`crate::RemoteNpz::member_npy`].
    pub fn member_npy(&self, name: &str) -> Result<RemoteNpy> {
        run(self.0.member_npy(name)).map(RemoteNpy)
    }
}

/// [`crate::write_npy`], blocking.
pub fn write_npy<T: Element, S: Data<Elem = T>, D: Dimension>(
    location: &Location,
    array: &ArrayBase<S, D>,
) -> Result<()> {
    run(crate::write_npy(location, array))
}

/// [`crate::write_npy_with`], blocking.
pub fn write_npy_with<T: Element, S: Data<Elem = T>, D: Dimension>(
    location: &Location,
    array: &ArrayBase<S, D>,
    config: Config,
) -> Result<()> {
    run(crate::write_npy_with(location, array, config))
}

/// [`crate::NpyWriter`], blocking.
pub struct NpyWriter<T: Element>(crate::NpyWriter<T>);

impl<T: Element> NpyWriter<T> {
    /// [`crate::NpyWriter::create`].
    pub fn create(location: &Location, inner_shape: &[usize], order: Order) -> Result<Self> {
        run(crate::NpyWriter::create(location, inner_shape, order)).map(NpyWriter)
    }

    /// [`crate::NpyWriter::create_with`].
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
    pub fn write<S: Data<Elem = T>, D: Dimension>(
        &mut self,
        block: &ArrayBase<S, D>,
    ) -> Result<()> {
        run(self.0.write(block))
    }

    /// [`crate::NpyWriter::rows`].
    pub fn rows(&self) -> usize {
        self.0.rows()
    }

    /// [`crate::NpyWriter::finish`].
    pub fn finish(self) -> Result<()> {
        run(self.0.finish())
    }
}

/// [`crate::NpzWriter`], blocking.
pub struct NpzWriter(crate::NpzWriter);

impl NpzWriter {
    /// [`crate::NpzWriter::create`].
    pub fn create(location: &Location, compressed: bool) -> Result<Self> {
        crate::NpzWriter::create(location, compressed).map(NpzWriter)
    }

    /// [`crate::NpzWriter::archive`].
    pub fn archive(&mut self) -> &mut ndnpy::NpzWriter<std::fs::File> {
        self.0.archive()
    }

    /// [`crate::NpzWriter::finish`].
    pub fn finish(self) -> Result<()> {
        run(self.0.finish())
    }
}

/// [`crate::download`], blocking.
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
pub fn upload(location: &Location, file: std::fs::File, config: Config) -> Result<()> {
    run(crate::upload(location, file, config))
}
