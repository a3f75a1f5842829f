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
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use ndarray::{ArrayBase, Axis, Data, Dimension, Slice};
use ndnpy::{Element, Order};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{MultipartId, MultipartUpload, ObjectStore, PutPayload};
use std::fs::File;
use std::future::Future;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

type PartFuture = Pin<Box<dyn Future<Output = Result<(usize, PartId)>> + Send>>;

/// The parts of the object being written: part 0 (the header) kept until
/// the end, later parts handed out as they fill (or spooled to a file).
#[derive(Debug)]
struct Parts {
    part_size: usize,
    head: Vec<u8>,
    /// The part being filled (index `index`).
    current: Vec<u8>,
    index: usize,
    /// Full parts not yet uploaded.
    ready: Vec<(usize, Vec<u8>)>,
    /// Where later parts go when the store has no part-by-index upload.
    spool: Option<File>,
    pos: u64,
    len: u64,
}

/// The synchronous end: `Write + Seek` for the library's writers. Seeking
/// back is allowed into part 0 only (the header patch).
#[derive(Debug, Clone)]
struct PartSink(Arc<Mutex<Parts>>);

impl PartSink {
    fn parts(&self) -> std::sync::MutexGuard<'_, Parts> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Write for PartSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut p = self.parts();
        let part_size = p.part_size as u64;
        if p.pos < part_size {
            // Inside part 0: overwrite or extend it.
            let at = p.pos as usize;
            let n = buf.len().min(p.part_size - at);
            if at > p.head.len() {
                return Err(io::Error::other("a gap in part 0"));
            }
            let end = at + n;
            if end > p.head.len() {
                p.head.resize(end, 0);
            }
            p.head[at..end].copy_from_slice(&buf[..n]);
            p.pos += n as u64;
            p.len = p.len.max(p.pos);
            return Ok(n);
        }
        if p.pos != p.len {
            return Err(io::Error::other(
                "cannot rewrite bytes of a part already uploaded",
            ));
        }
        let n = buf.len().min(p.part_size - p.current.len());
        p.current.extend_from_slice(&buf[..n]);
        p.pos += n as u64;
        p.len = p.pos;
        if p.current.len() == p.part_size {
            let full = std::mem::take(&mut p.current);
            let index = p.index;
            p.index += 1;
            match p.spool.as_mut() {
                Some(file) => file.write_all(&full)?,
                None => p.ready.push((index, full)),
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for PartSink {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let mut p = self.parts();
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::End(d) => p.len.checked_add_signed(d),
            SeekFrom::Current(d) => p.pos.checked_add_signed(d),
        }
        .filter(|&t| t <= p.len)
        .ok_or_else(|| io::Error::other("seek outside the bytes written"))?;
        p.pos = target;
        Ok(target)
    }
}

/// The asynchronous end: one multipart upload.
struct Upload {
    store: Arc<dyn ObjectStore>,
    path: Path,
    by_index: Option<(Arc<dyn MultipartStore>, MultipartId)>,
    in_flight: FuturesUnordered<PartFuture>,
    done: Vec<(usize, PartId)>,
    config: Config,
    finished: bool,
}

impl Upload {
    async fn start(location: &Location, config: Config) -> Result<(Upload, PartSink)> {
        let by_index = match &location.multipart {
            Some(mp) => Some((mp.clone(), mp.create_multipart(&location.path).await?)),
            None => None,
        };
        let spool = match by_index {
            Some(_) => None,
            None => Some(tempfile::tempfile()?),
        };
        let sink = PartSink(Arc::new(Mutex::new(Parts {
            part_size: config.part_size,
            head: Vec::new(),
            current: Vec::new(),
            index: 1,
            ready: Vec::new(),
            spool,
            pos: 0,
            len: 0,
        })));
        let upload = Upload {
            store: location.store.clone(),
            path: location.path.clone(),
            by_index,
            in_flight: FuturesUnordered::new(),
            done: Vec::new(),
            config,
            finished: false,
        };
        Ok((upload, sink))
    }

    /// Uploads the parts the sink has filled, keeping at most
    /// `parts_in_flight` requests (and so parts in memory) at once.
    async fn drain(&mut self, sink: &PartSink) -> Result<()> {
        let ready = std::mem::take(&mut sink.parts().ready);
        for (index, bytes) in ready {
            self.send(index, bytes).await?;
        }
        Ok(())
    }

    async fn send(&mut self, index: usize, bytes: Vec<u8>) -> Result<()> {
        while self.in_flight.len() >= self.config.parts_in_flight {
            self.wait_one().await?;
        }
        let (mp, id) = self
            .by_index
            .clone()
            .expect("only parts by index are sent early");
        let path = self.path.clone();
        let progress = self.config.progress.clone();
        let len = bytes.len() as u64;
        self.in_flight.push(
            async move {
                let part = mp
                    .put_part(&path, &id, index, PutPayload::from(bytes))
                    .await?;
                if let Some(p) = progress {
                    p(len);
                }
                Ok((index, part))
            }
            .boxed(),
        );
        Ok(())
    }

    async fn wait_one(&mut self) -> Result<()> {
        if let Some(done) = self.in_flight.next().await {
            self.done.push(done?);
        }
        Ok(())
    }

    /// Uploads what is left and completes the upload; on any error, aborts
    /// it before returning.
    async fn finish(mut self, sink: PartSink) -> Result<()> {
        match self.complete(sink).await {
            Ok(()) => {
                self.finished = true;
                Ok(())
            }
            Err(e) => {
                self.abort().await;
                Err(e)
            }
        }
    }

    /// Aborts the upload, waiting for the store's answer: a caller that
    /// returns the error from `main` exits right after, and an abort only
    /// spawned (what `Drop` can do inside a runtime) would never be sent.
    /// Parts still in transfer are dropped first, as `upload_in_order`
    /// drops its own. The abort's own failure is not reported: the error
    /// that led here is the one to report, and `Drop` has nothing left to
    /// do either way.
    async fn abort(&mut self) {
        self.in_flight = FuturesUnordered::new();
        if let Some((mp, id)) = self.by_index.take() {
            let _ = mp.abort_multipart(&self.path, &id).await;
        }
    }

    /// [`Upload::finish`]'s work, which may stop at an error.
    async fn complete(&mut self, sink: PartSink) -> Result<()> {
        self.drain(&sink).await?;
        let (head, last, last_index, spool) = {
            let mut p = sink.parts();
            (
                std::mem::take(&mut p.head),
                std::mem::take(&mut p.current),
                p.index,
                p.spool.take(),
            )
        };
        match self.by_index.clone() {
            Some((mp, id)) => {
                if !last.is_empty() {
                    self.send(last_index, last).await?;
                }
                self.send(0, head).await?;
                while !self.in_flight.is_empty() {
                    self.wait_one().await?;
                }
                let mut done = std::mem::take(&mut self.done);
                done.sort_by_key(|(index, _)| *index);
                let parts = done.into_iter().map(|(_, part)| part).collect();
                mp.complete_multipart(&self.path, &id, parts).await?;
            }
            None => {
                let mut spool = spool.expect("a spool without part-by-index uploads");
                spool.seek(SeekFrom::Start(0))?;
                upload_in_order(&*self.store, &self.path, &self.config, head, spool, last).await?;
            }
        }
        Ok(())
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        // A dropped or failed writer must not leave parts behind (on S3 an
        // open upload is stored, and billed, until a lifecycle rule ends
        // it).
        if self.finished {
            return;
        }
        if let Some((mp, id)) = self.by_index.take() {
            let path = self.path.clone();
            abort_dropped(async move {
                let _ = mp.abort_multipart(&path, &id).await;
            });
        }
    }
}

/// Runs the abort of an upload whose writer was dropped: the fallback for
/// writers that never reached `finish` (a failing `create` or `finish`
/// awaits its abort before returning). Inside a runtime (an async writer
/// dropped in a task, or a `finish` future cancelled) it is spawned there,
/// as a destructor must not block a task. Outside one (a blocking wrapper
/// dropped by its owner) nothing would ever poll a spawned task, so it
/// runs to its end here on the blocking wrappers' runtime.
fn abort_dropped(abort: impl Future<Output = ()> + Send + 'static) {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => {
            handle.spawn(abort);
        }
        Err(_) => crate::blocking::runtime().block_on(abort),
    }
}

/// A multipart upload begun by `put_multipart_opts`, aborted if dropped
/// before it completes (a cancelled or failed upload).
struct OpenUpload(Option<Box<dyn MultipartUpload>>);

impl OpenUpload {
    fn get(&mut self) -> &mut Box<dyn MultipartUpload> {
        self.0.as_mut().expect("an open upload")
    }

    async fn complete(mut self) -> Result<()> {
        let mut upload = self.0.take().expect("an open upload");
        if let Err(e) = upload.complete().await {
            let _ = upload.abort().await;
            return Err(e.into());
        }
        Ok(())
    }

    async fn abort(mut self) {
        if let Some(mut upload) = self.0.take() {
            let _ = upload.abort().await;
        }
    }
}

impl Drop for OpenUpload {
    fn drop(&mut self) {
        if let Some(mut upload) = self.0.take() {
            abort_dropped(async move {
                let _ = upload.abort().await;
            });
        }
    }
}

/// Uploads `head`, then `spool`'s bytes, then `tail`, as one object by
/// parts in order (for stores without part-by-index uploads).
pub(crate) async fn upload_in_order(
    store: &dyn ObjectStore,
    path: &Path,
    config: &Config,
    head: Vec<u8>,
    mut spool: File,
    tail: Vec<u8>,
) -> Result<()> {
    let mut upload = OpenUpload(Some(
        store.put_multipart_opts(path, Default::default()).await?,
    ));
    let result: Result<()> = async {
        let mut in_flight = FuturesUnordered::new();
        let mut next = Some(head);
        let mut tail = Some(tail);
        loop {
            let part = match next.take() {
                Some(part) => part,
                None => {
                    let mut buf = vec![0u8; config.part_size];
                    let n = read_full(&mut spool, &mut buf)?;
                    buf.truncate(n);
                    if n == 0 {
                        match tail.take() {
                            Some(t) if !t.is_empty() => t,
                            _ => break,
                        }
                    } else {
                        buf
                    }
                }
            };
            if part.is_empty() {
                continue;
            }
            while in_flight.len() >= config.parts_in_flight {
                if let Some(r) = in_flight.next().await {
                    r?;
                }
            }
            let len = part.len() as u64;
            let progress = config.progress.clone();
            let fut = upload.get().put_part(PutPayload::from(part));
            in_flight.push(async move {
                fut.await?;
                if let Some(p) = progress {
                    p(len);
                }
                Ok::<_, object_store::Error>(())
            });
        }
        while let Some(r) = in_flight.next().await {
            r?;
        }
        Ok(())
    }
    .await;
    match result {
        Ok(()) => upload.complete().await,
        Err(e) => {
            upload.abort().await;
            Err(e)
        }
    }
}

fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

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
