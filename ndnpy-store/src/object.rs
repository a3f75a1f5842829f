//! One object pinned to the version its first answer came from: every later
//! GET carries that ETag (`If-Match`) or version (or, with neither, its
//! modification time), every answer's ETag, version, size and (with
//! neither ETag nor version) modification time are compared with the
//! first's, and every body is checked against the range that was asked
//! for, so an array is never stitched from two versions of an object or
//! from a short body.

use crate::config::Config;
use crate::error::{Result, StoreError};
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    GetOptions, GetRange, GetResult, GetResultPayload, ObjectMeta, ObjectStore, ObjectStoreExt,
};
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::Arc;

/// An object as its first answer described it.
#[derive(Debug, Clone)]
pub(crate) struct Object {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) path: Path,
    pub(crate) meta: ObjectMeta,
    pub(crate) config: Config,
}

impl Object {
    /// The first request: a GET of `range` (clipped to the object), which
    /// also tells the object's size and version.
    pub(crate) async fn open(
        store: Arc<dyn ObjectStore>,
        path: Path,
        range: GetRange,
        config: Config,
    ) -> Result<(Object, Bytes)> {
        let options = GetOptions {
            range: Some(range.clone()),
            ..GetOptions::default()
        };
        config.count_request();
        let result = match store.get_opts(&path, options).await {
            Ok(result) => result,
            Err(e) => {
                // An empty object has no byte 0 to range over: S3 answers
                // 416, and other stores fail in their own words. Which
                // failure it was is not visible through object_store's
                // error types (its HTTP status sits in a private type), and
                // its text names paths and URLs: a HEAD tells the size.
                return match empty_object(&*store, &path, e).await {
                    Ok(meta) => Ok((
                        Object {
                            store,
                            path,
                            meta,
                            config,
                        },
                        Bytes::new(),
                    )),
                    Err(e) => Err(map_error(e, path.as_ref())),
                };
            }
        };
        let asked = range;
        let object = Object {
            store,
            path,
            meta: result.meta.clone(),
            config,
        };
        // The answer must be the asked range as the object's size resolves
        // it: its bytes are placed by offset from here on.
        let size = object.size();
        let expected = asked.as_range(size).unwrap_or(0..0);
        if result.range != expected && !(size == 0 && result.range.is_empty()) {
            return Err(StoreError::BadAnswer {
                path: object.name(),
                asked: expected,
                got: format!("bytes {}..{}", result.range.start, result.range.end),
            });
        }
        let bytes = object.collect(result, expected).await?;
        Ok((object, bytes))
    }

    /// The object's size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.meta.size
    }

    /// The path, for messages.
    pub(crate) fn name(&self) -> String {
        self.path.to_string()
    }

    /// Options that pin the version of the first answer.
    fn pinned(&self, range: Range<u64>) -> GetOptions {
        GetOptions {
            if_match: self.meta.e_tag.clone(),
            // Without an ETag, the modification time is the best there is.
            if_unmodified_since: match self.meta.e_tag {
                Some(_) => None,
                None => Some(self.meta.last_modified),
            },
            version: self.meta.version.clone(),
            range: Some(GetRange::Bounded(range)),
            ..GetOptions::default()
        }
    }

    /// A GET of exactly `range`, whole.
    pub(crate) async fn get(&self, range: Range<u64>) -> Result<Bytes> {
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let result = self.request(range.clone()).await?;
        self.collect(result, range).await
    }

    /// A GET of exactly `range`, appended to a copy of `prefix` (a `.npy`
    /// header, so that the library parses header and body as one slice).
    /// The buffer grows as the body arrives: memory follows the bytes
    /// present, not the size the store declares.
    pub(crate) async fn get_after(&self, prefix: &[u8], range: Range<u64>) -> Result<Vec<u8>> {
        let expected = range.end - range.start;
        let mut out = Vec::with_capacity(prefix.len() + expected.min(1 << 26) as usize);
        out.extend_from_slice(prefix);
        let mut body = self.stream(range).await?;
        while let Some(bytes) = body.next().await {
            out.extend_from_slice(&bytes?);
        }
        Ok(out)
    }

    /// A GET of exactly `range` whose body arrives as a stream; the stream
    /// ends with an error if the body is shorter or longer than the range.
    pub(crate) async fn stream(
        &self,
        range: Range<u64>,
    ) -> Result<BoxStream<'static, Result<Bytes>>> {
        if range.is_empty() {
            return Ok(futures::stream::empty().boxed());
        }
        let result = self.request(range.clone()).await?;
        Ok(self.checked(result, range))
    }

    /// The body of `result`, which answers `range`: progress reported, and
    /// an error instead of the end if it is shorter or longer than the
    /// range (or the connection fails).
    fn checked(&self, result: GetResult, range: Range<u64>) -> BoxStream<'static, Result<Bytes>> {
        let expected = range.end - range.start;
        let path = self.name();
        let progress = self.config.progress.clone();
        let mut got = 0u64;
        let mut done = false;
        body(result)
            .map(Some)
            .chain(futures::stream::iter([None]))
            .filter_map(move |item| {
                let out = match item {
                    _ if done => None,
                    Some(Ok(bytes)) => {
                        got += bytes.len() as u64;
                        if let Some(p) = &progress {
                            p(bytes.len() as u64);
                        }
                        if got > expected {
                            done = true;
                            Some(Err(short(&path, &range, got)))
                        } else {
                            Some(Ok(bytes))
                        }
                    }
                    Some(Err(e)) => {
                        done = true;
                        Some(Err(map_error(e, &path)))
                    }
                    None if got != expected => Some(Err(short(&path, &range, got))),
                    None => None,
                };
                std::future::ready(out)
            })
            .boxed()
    }

    async fn request(&self, range: Range<u64>) -> Result<GetResult> {
        self.config.count_request();
        let result = self
            .store
            .get_opts(&self.path, self.pinned(range.clone()))
            .await
            .map_err(|e| map_error(e, &self.name()))?;
        if result.range != range {
            return Err(StoreError::BadAnswer {
                path: self.name(),
                asked: range,
                got: format!("bytes {}..{}", result.range.start, result.range.end),
            });
        }
        if self.changed(&result.meta) {
            return Err(StoreError::Changed { path: self.name() });
        }
        Ok(result)
    }

    /// Whether an answer's metadata shows another object than the first
    /// answer's. The request was pinned (`If-Match`, the version, or
    /// `If-Unmodified-Since`), but not every store honours a condition or
    /// reports an ETag (some HTTP servers and S3-like stores do neither),
    /// so the answer is checked too: another ETag or version, another
    /// size, or, with neither ETag nor version to go by, another
    /// modification time. A store that answers without an ETag or version
    /// is not taken to have changed for that alone.
    fn changed(&self, meta: &ObjectMeta) -> bool {
        let first = &self.meta;
        if meta.size != first.size {
            return true;
        }
        if meta.e_tag.is_some() && meta.e_tag != first.e_tag {
            return true;
        }
        if meta.version.is_some() && meta.version != first.version {
            return true;
        }
        // Nothing names the version: the time is all there is. (An answer
        // with an ETag or version was compared by them above; its time may
        // differ in precision between requests, so it is not compared.)
        let named = |m: &ObjectMeta| m.e_tag.is_some() || m.version.is_some();
        !named(first) && !named(meta) && meta.last_modified != first.last_modified
    }

    /// Reads a whole body, checking its length against `range`. A body
    /// that arrives in one piece (from memory, or a small local read) is
    /// returned as it is, uncopied. A body in pieces is gathered into one
    /// buffer of the range's size, started by the second piece, each piece
    /// dropped once copied: the body is held once (plus a piece), not as
    /// its pieces and then again as their concatenation. The buffer cannot
    /// outgrow the range: the checked stream ends with an error before a
    /// piece that would take the body past it.
    async fn collect(&self, result: GetResult, range: Range<u64>) -> Result<Bytes> {
        let expected = range.end - range.start;
        let mut body = self.checked(result, range);
        let mut first: Option<Bytes> = None;
        let mut gathered: Option<Vec<u8>> = None;
        while let Some(bytes) = body.next().await {
            let bytes = bytes?;
            if bytes.is_empty() {
                continue;
            }
            if let Some(all) = gathered.as_mut() {
                all.extend_from_slice(&bytes);
            } else if let Some(one) = first.take() {
                let mut all = Vec::with_capacity(expected as usize);
                all.extend_from_slice(&one);
                all.extend_from_slice(&bytes);
                gathered = Some(all);
            } else {
                first = Some(bytes);
            }
        }
        Ok(match (gathered, first) {
            (Some(all), _) => Bytes::from(all),
            (None, Some(one)) => one,
            (None, None) => Bytes::new(),
        })
    }
}

/// The body of `result` as a stream. A local file's body is read in
/// pieces of 1 MiB on the blocking threads: `object_store` reads it in
/// pieces of 8 KiB, one hop to a blocking thread each, which costs more
/// than the reading when a large array or a long scan comes from a
/// `file://` URL. Memory stays at one piece.
fn body(result: GetResult) -> BoxStream<'static, object_store::Result<Bytes>> {
    const PIECE: u64 = 1 << 20;
    let range = result.range.clone();
    match result.payload {
        GetResultPayload::File(file, path) => {
            futures::stream::try_unfold((file, range.start), move |(mut file, at)| {
                let path = path.clone();
                let end = range.end;
                async move {
                    if at >= end {
                        return Ok(None);
                    }
                    let want = (end - at).min(PIECE);
                    let read = tokio::task::spawn_blocking(move || {
                        let mut piece = Vec::with_capacity(want as usize);
                        file.seek(SeekFrom::Start(at))?;
                        (&mut file).take(want).read_to_end(&mut piece)?;
                        Ok::<_, std::io::Error>((file, piece))
                    })
                    .await;
                    let local = |e: Box<dyn std::error::Error + Send + Sync>| {
                        object_store::Error::Generic {
                            store: "LocalFileSystem",
                            source: format!("reading {}: {e}", path.display()).into(),
                        }
                    };
                    let (file, piece) = read
                        .map_err(|e| local(e.into()))?
                        .map_err(|e| local(e.into()))?;
                    if piece.is_empty() {
                        // The file is shorter than the range: the checked
                        // stream reports the short body.
                        return Ok(None);
                    }
                    let next = at + piece.len() as u64;
                    Ok(Some((Bytes::from(piece), (file, next))))
                }
            })
            .boxed()
        }
        GetResultPayload::Stream(stream) => stream,
    }
}

fn short(path: &str, range: &Range<u64>, got: u64) -> StoreError {
    StoreError::BadAnswer {
        path: path.to_owned(),
        asked: range.clone(),
        got: format!("a body of {got} bytes"),
    }
}

/// A failed precondition means the object is no longer the one first read.
fn map_error(e: object_store::Error, path: &str) -> StoreError {
    match e {
        object_store::Error::Precondition { .. } | object_store::Error::NotModified { .. } => {
            StoreError::Changed {
                path: path.to_owned(),
            }
        }
        e => StoreError::Store(e),
    }
}

/// The metadata of an empty object, when `failed` (the first ranged GET's
/// error) may be a store refusing a range of an empty object and a HEAD
/// says it is empty; else `failed` itself. Errors that say what they are
/// (not found, a failed precondition, no permission) are returned as they
/// are, without the HEAD.
async fn empty_object(
    store: &dyn ObjectStore,
    path: &Path,
    failed: object_store::Error,
) -> std::result::Result<ObjectMeta, object_store::Error> {
    if !matches!(failed, object_store::Error::Generic { .. }) {
        return Err(failed);
    }
    match store.head(path).await {
        Ok(meta) if meta.size == 0 => Ok(meta),
        _ => Err(failed),
    }
}
