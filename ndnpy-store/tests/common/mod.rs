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
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What a wrapper does to the `n`th GET (counting from 1).
#[derive(Debug, Clone)]
pub enum Fault {
    /// Nothing.
    None,
    /// The GET fails with a store error.
    Error(usize),
    /// The body of the GET is cut to this many bytes.
    Short(usize, usize),
    /// Before the GET, the object is replaced with these bytes.
    Replace(usize, Bytes),
    /// The GET answers another range than asked (shifted by one byte).
    WrongRange(usize),
    /// The body ends with an error after this many bytes (a reset connection).
    Reset(usize, usize),
}

#[derive(Debug)]
pub struct Wrapped {
    pub inner: Arc<dyn ObjectStore>,
    pub gets: AtomicUsize,
    pub bytes: AtomicU64,
    pub fault: Mutex<Fault>,
}

impl Wrapped {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Arc<Wrapped> {
        Arc::new(Wrapped {
            inner,
            gets: AtomicUsize::new(0),
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
