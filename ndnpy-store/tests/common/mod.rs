//! Stores that wrap another: one counts requests and bytes, one injects
//! faults (errors, short bodies, an object replaced between requests).

#![allow(dead_code)]

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What a wrapper does to the `n`th GET (counting from 1).
#[derive(Debug, Clone)]
pub enum Fault {
    /// Nothing.
    None,
    /// The GET fails with a store error.
    Error(usize),
    /// The GET fails with a store error of this text (which may contain
    /// a status code without being one).
    ErrorText(usize, &'static str),
    /// The body of the GET is cut to this many bytes.
    Short(usize, usize),
    /// Before the GET, the object is replaced with these bytes.
    Replace(usize, Bytes),
    /// The GET answers another range than asked (shifted by one byte).
    WrongRange(usize),
    /// The body ends with an error after this many bytes (a reset connection).
    Reset(usize, usize),
    /// The bodies of this GET and every later one start with an empty
    /// chunk and have an empty chunk after every chunk (as some HTTP stacks
    /// deliver them).
    EmptyChunks(usize),
    /// The bodies of this GET and every later one arrive in pieces of at
    /// most this many bytes (as an HTTP body arrives in frames).
    Pieces(usize, usize),
}

#[derive(Debug)]
pub struct Wrapped {
    pub inner: Arc<dyn ObjectStore>,
    pub gets: AtomicUsize,
    /// HEAD requests (`GetOptions::head`), not counted in `gets`.
    pub heads: AtomicUsize,
    /// GETs without a range (of the whole object).
    pub whole: AtomicUsize,
    pub bytes: AtomicU64,
    pub fault: Mutex<Fault>,
}

impl Wrapped {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Arc<Wrapped> {
        Arc::new(Wrapped {
            inner,
            gets: AtomicUsize::new(0),
            heads: AtomicUsize::new(0),
            whole: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
            fault: Mutex::new(Fault::None),
        })
    }

    pub fn with_fault(self: &Arc<Self>, fault: Fault) {
        *self.fault.lock().unwrap() = fault;
    }

    /// (GETs, bytes of their ranges) since the last call.
    pub fn take(&self) -> (usize, u64) {
        (
            self.gets.swap(0, Ordering::SeqCst),
            self.bytes.swap(0, Ordering::SeqCst),
        )
    }
}

impl fmt::Display for Wrapped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Wrapped({})", self.inner)
    }
}

fn stream_of(result: GetResult) -> BoxStream<'static, Result<Bytes>> {
    match result.payload {
        GetResultPayload::Stream(s) => s,
        other => GetResult {
            payload: other,
            ..result
        }
        .into_stream(),
    }
}

#[async_trait]
impl ObjectStore for Wrapped {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if options.head {
            self.heads.fetch_add(1, Ordering::SeqCst);
            return self.inner.get_opts(location, options).await;
        }
        if options.range.is_none() {
            self.whole.fetch_add(1, Ordering::SeqCst);
        }
        let n = self.gets.fetch_add(1, Ordering::SeqCst) + 1;
        let fault = self.fault.lock().unwrap().clone();
        if let Fault::Replace(at, bytes) = &fault {
            if *at == n {
                self.inner
                    .put_opts(location, bytes.clone().into(), PutOptions::default())
                    .await?;
            }
        }
        if let Fault::Error(at) = fault {
            if at == n {
                return Err(object_store::Error::Generic {
                    store: "Wrapped",
                    source: "injected failure".into(),
                });
            }
        }
        if let Fault::ErrorText(at, text) = fault {
            if at == n {
                return Err(object_store::Error::Generic {
                    store: "Wrapped",
                    source: text.into(),
                });
            }
        }
        let result = self.inner.get_opts(location, options).await?;
        self.bytes
            .fetch_add(result.range.end - result.range.start, Ordering::SeqCst);
        let meta = result.meta.clone();
        let range = result.range.clone();
        let attributes = result.attributes.clone();
        let extensions = result.extensions.clone();
        let body = stream_of(result);
        let (range, body) = match fault {
            Fault::Short(at, keep) if at == n => {
                let mut left = keep;
                let body = body
                    .map(move |b| {
                        b.map(|b| {
                            let k = left.min(b.len());
                            left -= k;
                            b.slice(..k)
                        })
                    })
                    .boxed();
                (range, body)
            }
            Fault::WrongRange(at) if at == n => (range.start + 1..range.end + 1, body),
            Fault::EmptyChunks(at) if n >= at => {
                let body = futures::stream::once(async { Ok(Bytes::new()) })
                    .chain(body.flat_map(|b| futures::stream::iter([b, Ok(Bytes::new())])))
                    .boxed();
                (range, body)
            }
            Fault::Pieces(at, size) if n >= at => {
                let body = body
                    .flat_map(move |b| {
                        let pieces: Vec<Result<Bytes>> = match b {
                            Ok(b) => (0..b.len())
                                .step_by(size)
                                .map(|i| Ok(b.slice(i..(i + size).min(b.len()))))
                                .collect(),
                            Err(e) => vec![Err(e)],
                        };
                        futures::stream::iter(pieces)
                    })
                    .boxed();
                (range, body)
            }
            Fault::Reset(at, keep) if at == n => {
                let mut left = keep;
                let body = body
                    .map(move |b| {
                        let b = b?;
                        if left == 0 {
                            return Err(object_store::Error::Generic {
                                store: "Wrapped",
                                source: "connection reset".into(),
                            });
                        }
                        let k = left.min(b.len());
                        left -= k;
                        Ok(b.slice(..k))
                    })
                    .boxed();
                (range, body)
            }
            _ => (range, body),
        };
        Ok(GetResult {
            payload: GetResultPayload::Stream(body),
            meta,
            range,
            attributes,
            extensions,
        })
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// A memory store that counts aborted multipart uploads (both interfaces:
/// `MultipartStore::abort_multipart` and `MultipartUpload::abort`), and
/// whose part uploads can be made to never finish.
#[derive(Debug, Default)]
pub struct Aborts {
    pub inner: object_store::memory::InMemory,
    pub aborts: Arc<AtomicUsize>,
    /// Part uploads wait forever (to cancel an upload in the middle).
    pub hang: std::sync::atomic::AtomicBool,
    /// Completing an upload fails (both interfaces).
    pub fail_complete: std::sync::atomic::AtomicBool,
    /// Part uploads fail (both interfaces).
    pub fail_parts: std::sync::atomic::AtomicBool,
    /// Told of every abort.
    pub aborted: Arc<tokio::sync::Notify>,
}

impl Aborts {
    pub fn new() -> Arc<Aborts> {
        Arc::new(Aborts::default())
    }

    pub fn aborts(&self) -> usize {
        self.aborts.load(Ordering::SeqCst)
    }

    /// Waits until at least `n` uploads have been aborted (for aborts
    /// spawned on a runtime).
    pub async fn wait_for(&self, n: usize) {
        loop {
            let told = self.aborted.notified();
            if self.aborts() >= n {
                return;
            }
            told.await;
        }
    }

    fn hangs(&self) -> bool {
        self.hang.load(Ordering::SeqCst)
    }

    /// The error of a request this store was told to fail.
    fn refuse(&self, what: &'static str, on: &AtomicBool) -> Result<()> {
        if on.load(Ordering::SeqCst) {
            return Err(object_store::Error::Generic {
                store: "Aborts",
                source: format!("injected failure of {what}").into(),
            });
        }
        Ok(())
    }

    fn count(&self) {
        self.aborts.fetch_add(1, Ordering::SeqCst);
        self.aborted.notify_waiters();
    }
}

impl fmt::Display for Aborts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Aborts")
    }
}

#[derive(Debug)]
struct CountedUpload {
    inner: Box<dyn MultipartUpload>,
    store: Arc<Aborts>,
}

#[async_trait]
impl MultipartUpload for CountedUpload {
    fn put_part(&mut self, data: PutPayload) -> object_store::UploadPart {
        if self.store.hangs() {
            return Box::pin(futures::future::pending());
        }
        if let Err(e) = self.store.refuse("a part", &self.store.fail_parts) {
            return Box::pin(async move { Err(e) });
        }
        self.inner.put_part(data)
    }

    async fn complete(&mut self) -> Result<PutResult> {
        self.store.refuse("complete", &self.store.fail_complete)?;
        self.inner.complete().await
    }

    async fn abort(&mut self) -> Result<()> {
        self.store.count();
        self.inner.abort().await
    }
}

/// `Aborts` behind an `Arc`, so that uploads it hands out can count.
#[derive(Debug, Clone)]
pub struct AbortsStore(pub Arc<Aborts>);

impl fmt::Display for AbortsStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AbortsStore")
    }
}

#[async_trait]
impl ObjectStore for AbortsStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.0.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        let inner = self.0.inner.put_multipart_opts(location, opts).await?;
        Ok(Box::new(CountedUpload {
            inner,
            store: self.0.clone(),
        }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.0.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.0.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.0.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.0.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.0.inner.copy_opts(from, to, options).await
    }
}

#[async_trait]
impl object_store::multipart::MultipartStore for AbortsStore {
    async fn create_multipart(&self, path: &Path) -> Result<object_store::MultipartId> {
        self.0.inner.create_multipart(path).await
    }

    async fn put_part(
        &self,
        path: &Path,
        id: &object_store::MultipartId,
        part_idx: usize,
        data: PutPayload,
    ) -> Result<object_store::multipart::PartId> {
        if self.0.hangs() {
            futures::future::pending::<()>().await;
        }
        self.0.refuse("a part", &self.0.fail_parts)?;
        self.0.inner.put_part(path, id, part_idx, data).await
    }

    async fn complete_multipart(
        &self,
        path: &Path,
        id: &object_store::MultipartId,
        parts: Vec<object_store::multipart::PartId>,
    ) -> Result<PutResult> {
        self.0.refuse("complete", &self.0.fail_complete)?;
        self.0.inner.complete_multipart(path, id, parts).await
    }

    async fn abort_multipart(&self, path: &Path, id: &object_store::MultipartId) -> Result<()> {
        self.0.count();
        self.0.inner.abort_multipart(path, id).await
    }
}

/// A store that gives no ETag or version and ignores every condition (as
/// some HTTP servers and S3-like stores do): only the size and the
/// modification time of an answer can tell that the object changed.
#[derive(Debug)]
pub struct NoETag {
    pub inner: Arc<dyn ObjectStore>,
    /// When set, every answer reports this metadata's modification time
    /// instead of the object's (a store whose times are too coarse to see
    /// a replacement), so that only the size can tell.
    pub frozen: Mutex<Option<ObjectMeta>>,
}

impl NoETag {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Arc<NoETag> {
        Arc::new(NoETag {
            inner,
            frozen: Mutex::new(None),
        })
    }

    fn strip(&self, mut meta: ObjectMeta) -> ObjectMeta {
        meta.e_tag = None;
        meta.version = None;
        if let Some(frozen) = &*self.frozen.lock().unwrap() {
            meta.last_modified = frozen.last_modified;
        }
        meta
    }
}

impl fmt::Display for NoETag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NoETag({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for NoETag {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        // Conditions ignored: the answer is whatever the object is now.
        let options = GetOptions {
            range: options.range,
            head: options.head,
            ..GetOptions::default()
        };
        let mut result = self.inner.get_opts(location, options).await?;
        result.meta = self.strip(result.meta);
        Ok(result)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}
