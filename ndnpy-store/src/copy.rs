//! Whole objects to and from local files: what tools that work on local
//! paths (the `ndnpy` command) need to run on objects. A download lands
//! at the object's offsets in a file of the object's length (sparse where
//! nothing was asked for), so a tool reading only a header or some rows
//! finds them where the file format says.

use crate::config::Config;
use crate::error::Result;
use crate::location::Location;
use crate::object::Object;
use futures::{StreamExt, TryStreamExt};
use object_store::GetRange;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::ops::Range;

/// Copies bytes of the object at `location` into `file`, at their offsets:
/// the first `first` bytes (one GET, which also tells the object's size
/// and version), then the ranges `more` picks from the size and those first
/// bytes, by ranged GETs ([`Config::chunk_size`] each,
/// [`Config::concurrency`] at a time) pinned to the first answer's version.
/// The file is set to the object's length. Returns that length.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy_store::{download, Config, Location};
///
/// let at = Location::parse("memory:///x.npy")?;
/// ndnpy_store::write_npy(&at, &ndarray::Array1::<u8>::zeros(1000)).await?;
/// let file = tempfile::tempfile()?;
/// let len = download(&at, &file, 128, |len, _| vec![128..len], Config::default()).await?;
/// assert_eq!(len, 1128);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// # }).unwrap();
/// ```
pub async fn download(
    location: &Location,
    file: &File,
    first: u64,
    more: impl FnOnce(u64, &[u8]) -> Vec<Range<u64>>,
    config: Config,
) -> Result<u64> {
    let (object, head) = Object::open(
        location.store.clone(),
        location.path.clone(),
        GetRange::Bounded(0..first.max(1)),
        config,
    )
    .await?;
    let mut out = file;
    out.set_len(object.size())?;
    out.seek(SeekFrom::Start(0))?;
    out.write_all(&head)?;
    let chunk = object.config.chunk_size;
    let pieces: Vec<Range<u64>> = more(object.size(), &head)
        .into_iter()
        .map(|r| r.start.min(object.size())..r.end.min(object.size()))
        .flat_map(|r| {
            (r.start..r.end)
                .step_by(chunk as usize)
                .map(move |at| at..(at + chunk).min(r.end))
        })
        .collect();
    let object = &object;
    let mut arrived = futures::stream::iter(pieces)
        .map(|r| async move { Ok::<_, crate::StoreError>((r.start, object.get(r).await?)) })
        .buffer_unordered(object.config.concurrency);
    while let Some((at, bytes)) = arrived.try_next().await? {
        out.seek(SeekFrom::Start(at))?;
        out.write_all(&bytes)?;
    }
    Ok(object.size())
}

/// Uploads the whole of `file` (from its start) as the object at
/// `location`, by multipart upload ([`Config::part_size`] parts,
/// [`Config::parts_in_flight`] at a time): the object appears when the
/// upload completes, and a failed upload is aborted.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy::WriteNpy;
/// use ndnpy_store::{upload, Config, Location, RemoteNpy};
///
/// // A `.npy` written to a local file first, then uploaded as it is.
/// let mut file = tempfile::tempfile()?;
/// ndarray::array![1.0f32, 2.0].write_npy_to(&mut file)?;
/// let at = Location::parse("memory:///up.npy")?;
/// upload(&at, file, Config::default()).await?;
/// let back = RemoteNpy::open(&at).await?.read::<f32, ndarray::Ix1>().await?;
/// assert_eq!(back, ndarray::array![1.0, 2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub async fn upload(location: &Location, mut file: File, config: Config) -> Result<()> {
    file.seek(SeekFrom::Start(0))?;
    crate::upload::upload_in_order(
        &*location.store,
        &location.path,
        &config,
        Vec::new(),
        file,
        Vec::new(),
    )
    .await
}
