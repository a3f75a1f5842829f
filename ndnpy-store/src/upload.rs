//! The multipart upload under the writers (`write.rs`) and `upload`
//! (`copy.rs`): parts filled by the library's synchronous writers through
//! a `Write + Seek` sink, uploaded by index as they fill (S3, GCS, Azure,
//! memory) or spooled to a file and uploaded in order at the end (local
//! files, HTTP); aborted when dropped before it completes.
//!
//! See `write.rs` for why the first part (the header) is kept until the end.

use crate::config::Config;
use crate::error::Result;
use crate::location::Location;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
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
pub(crate) struct PartSink(Arc<Mutex<Parts>>);

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
pub(crate) struct Upload {
    store: Arc<dyn ObjectStore>,
    path: Path,
    by_index: Option<(Arc<dyn MultipartStore>, MultipartId)>,
    in_flight: FuturesUnordered<PartFuture>,
    done: Vec<(usize, PartId)>,
    config: Config,
    finished: bool,
}

impl Upload {
    pub(crate) async fn start(location: &Location, config: Config) -> Result<(Upload, PartSink)> {
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
    pub(crate) async fn drain(&mut self, sink: &PartSink) -> Result<()> {
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
    pub(crate) async fn finish(mut self, sink: PartSink) -> Result<()> {
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
    pub(crate) async fn abort(&mut self) {
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
        Err(_) => crate::runtime::runtime().block_on(abort),
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
