//! Where an input's bytes come from: a local file, read by positioned
//! reads, or an object in a store (a URL: `s3://`, `gs://`, `az://`,
//! `https://`, `file://`, `memory://`), read by ranged GETs that are all
//! pinned to the version the first GET saw (`ndnpy_store`'s
//! `ObjectReader`).
//!
//! Both are read through the same calls, so every command reads the same
//! bytes of a URL as of a path and gives the same output: a command that
//! reads one header fetches one header, `info` of an archive fetches its
//! directory, and `stats` streams the data. Nothing is staged in a local
//! copy whose unfetched parts would read as zeros. (Parquet frames are the
//! one exception: `ndnpy-parquet` reads paths, so a remote frame is first
//! downloaded whole, and only then read; see [`Source::local_path`].)

use crate::error::{CliError, CliResult};
use ndnpy_store::blocking::ObjectReader;
use ndnpy_store::{is_url, Location};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Bytes fetched from stores by this run (`NDNPY_COUNT_OPENS=1` prints
/// them on exit): the tests check that a command fetches what it reads
/// (an archive's directory for `info`), not whole objects.
pub static FETCHED: AtomicU64 = AtomicU64::new(0);

/// GETs made by this run (`NDNPY_COUNT_OPENS=1` prints them).
pub static REQUESTS: OnceLock<Arc<AtomicU64>> = OnceLock::new();

/// Prints the bytes fetched and the GETs made (for the tests).
pub fn print_counts() {
    eprintln!("ndnpy: bytes fetched: {}", FETCHED.load(Ordering::Relaxed));
    let requests = REQUESTS.get().map_or(0, |n| n.load(Ordering::Relaxed));
    eprintln!("ndnpy: requests: {requests}");
}

/// An input's bytes. Cheap to clone: clones share the open file or the
/// object's reader (and with it the version every read is pinned to).
#[derive(Clone)]
pub enum Source {
    File(Arc<File>),
    Object(Arc<Mutex<ObjectReader>>),
}

/// Whether the argument names an object in a store rather than a path.
pub fn is_remote(path: &Path) -> bool {
    path.to_str().is_some_and(is_url)
}

/// The objects below the URL `path` taken as a folder (a prefix of their
/// paths), as URLs, sorted as a local folder walk sorts; `None` when the
/// URL cannot be listed or nothing is below it (it names an object, or
/// nothing: opening it reports which).
pub fn objects_below(path: &Path) -> Option<Vec<PathBuf>> {
    let url = path.to_str().filter(|p| is_url(p))?;
    let location = Location::parse(url).ok()?;
    let below = ndnpy_store::blocking::list(&location).ok()?;
    let base = url.trim_end_matches('/');
    let folder = location.path.as_ref();
    let urls: Vec<PathBuf> = below
        .iter()
        .filter_map(|object| {
            let inside = match folder.is_empty() {
                true => object.as_ref(),
                false => object.as_ref().strip_prefix(folder)?.strip_prefix('/')?,
            };
            Some(PathBuf::from(format!("{base}/{inside}")))
        })
        .collect();
    (!urls.is_empty()).then_some(urls)
}

/// The objects this run opened last, by URL: a command that opens an
/// input twice (to tell its kind, then to read it) makes one first request
/// and reads one version of the object. Only the last few are kept (a
/// reader holds its open streams and buffers): a command goes through its
/// inputs one or two at a time, so older ones are done with.
fn objects() -> &'static Mutex<Vec<(String, Shared)>> {
    static OBJECTS: OnceLock<Mutex<Vec<(String, Shared)>>> = OnceLock::new();
    OBJECTS.get_or_init(Default::default)
}

/// An object's reader, shared by the opens of one URL.
type Shared = Arc<Mutex<ObjectReader>>;

/// How many readers [`objects`] keeps (`diff` holds two inputs at once).
const KEPT: usize = 4;

impl Source {
    /// Opens a path or a URL (one GET of the object's first bytes, which
    /// also learns its size and version).
    pub fn open(path: &Path) -> CliResult<Source> {
        let Some(url) = path.to_str().filter(|p| is_url(p)) else {
            let file = File::open(path).map_err(|e| CliError::io(path, e))?;
            let meta = file.metadata().map_err(|e| CliError::io(path, e))?;
            if meta.is_dir() {
                return Err(CliError::io(path, io::Error::other("is a directory")));
            }
            return Ok(Source::File(Arc::new(file)));
        };
        let mut objects = objects().lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, reader)) = objects.iter().find(|(u, _)| u == url) {
            return Ok(Source::Object(reader.clone()));
        }
        let location = Location::parse(url).map_err(|e| CliError::usage(e.to_string()))?;
        let counted = Arc::new(|n| {
            FETCHED.fetch_add(n, Ordering::Relaxed);
        });
        let requests = REQUESTS.get_or_init(Default::default).clone();
        let config = ndnpy_store::Config::default()
            .progress(counted)
            .requests(requests);
        let reader = match ObjectReader::open_with(&location, config) {
            Ok(reader) => reader,
            // A store's folder (objects below the URL, none at it) is
            // refused as a local folder is, in the same words.
            Err(_) if objects_below(path).is_some() => {
                return Err(CliError::io(path, io::Error::other("is a directory")));
            }
            Err(e) => return Err(CliError::usage(format!("{url}: {e}"))),
        };
        let reader = Arc::new(Mutex::new(reader));
        if objects.len() == KEPT {
            objects.remove(0);
        }
        objects.push((url.to_owned(), reader.clone()));
        Ok(Source::Object(reader))
    }

    fn object(reader: &Mutex<ObjectReader>) -> std::sync::MutexGuard<'_, ObjectReader> {
        reader.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The length in bytes now (a local file may change while it is read).
    pub fn len(&self) -> io::Result<u64> {
        match self {
            Source::File(file) => Ok(file.metadata()?.len()),
            Source::Object(reader) => Ok(Self::object(reader).len()),
        }
    }

    /// Reads what is there at `at`, up to `buf.len()` bytes (0 at the end).
    pub fn read_at(&self, buf: &mut [u8], at: u64) -> io::Result<usize> {
        match self {
            Source::File(file) => file.read_at(buf, at),
            Source::Object(reader) => {
                // What one fetched range or body chunk holds (as a file's
                // read gives what is there): a buffered reader's read of
                // 64 KiB at a member's local header, the last one before
                // the directory, fetches none of the directory again.
                let mut reader = Self::object(reader);
                reader.seek(SeekFrom::Start(at))?;
                reader.read(buf)
            }
        }
    }

    /// Fills `buf` from `at`. When a local file has become shorter than
    /// the bytes asked for since it was opened, the error carries
    /// [`ndnpy::error::DataError::FileShrank`] (never "failed to fill whole buffer").
    pub fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        match self {
            Source::File(file) => read_exact_at(file, buf, at),
            Source::Object(reader) => Self::object(reader).read_exact_at(buf, at),
        }
    }

    /// Announces that most of `span` is about to be read, in order: an
    /// object streams it in one GET (see `ObjectReader::will_read`); a
    /// file needs nothing.
    pub fn will_read(&self, span: std::ops::Range<u64>) {
        if let Source::Object(reader) = self {
            Self::object(reader).will_read(Some(span));
        }
    }

    /// The local file, when there is one: other threads may then issue
    /// their own positioned reads of it.
    pub fn file(&self) -> Option<&File> {
        match self {
            Source::File(file) => Some(file),
            Source::Object(_) => None,
        }
    }

    /// A `Read + Seek` over the bytes from offset 0 (for the library's
    /// archive reader).
    pub fn reader(&self) -> SourceReader {
        SourceReader {
            source: self.clone(),
            pos: 0,
        }
    }
}

/// [`Source`] as `Read + Seek`, with a cursor of its own.
pub struct SourceReader {
    source: Source,
    pos: u64,
}

impl Read for SourceReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.source.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for SourceReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::End(delta) => self.source.len()?.checked_add_signed(delta),
            SeekFrom::Current(delta) => self.pos.checked_add_signed(delta),
        };
        self.pos = target.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "seek to a negative offset")
        })?;
        Ok(self.pos)
    }
}

/// Remote inputs downloaded whole for the readers that take only paths
/// (Parquet), removed by [`cleanup`].
fn downloads() -> &'static Mutex<Vec<tempfile::TempDir>> {
    static DOWNLOADS: OnceLock<Mutex<Vec<tempfile::TempDir>>> = OnceLock::new();
    DOWNLOADS.get_or_init(Default::default)
}

impl Source {
    /// A local path holding all of the input's bytes: the path itself, or,
    /// for a URL, a complete download (every byte fetched, checked against
    /// the object's length and version) into a temporary folder that
    /// [`cleanup`] removes. For the readers that take only paths.
    #[cfg(feature = "parquet")]
    pub fn local_path(path: &Path) -> CliResult<PathBuf> {
        if !is_remote(path) {
            return Ok(path.to_owned());
        }
        let source = Source::open(path)?;
        let len = source.len().map_err(|e| CliError::io(path, e))?;
        let dir = tempfile::Builder::new()
            .prefix("ndnpy-remote")
            .tempdir()
            .map_err(|e| CliError::usage(format!("cannot make a temporary folder: {e}")))?;
        // The URL's file name, so that formats are still told by extension.
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty())
            .unwrap_or("object");
        let local = dir.path().join(name);
        let mut out = File::create(&local).map_err(|e| CliError::io(&local, e))?;
        let copied = io::copy(&mut source.reader().take(len), &mut out)
            .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
        if copied != len {
            return Err(CliError::usage(format!(
                "{}: the object ended after {copied} of its {len} bytes",
                path.display()
            )));
        }
        downloads()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(dir);
        Ok(local)
    }
}

/// Removes this run's downloads (the process exits without running
/// destructors of statics).
pub fn cleanup() {
    downloads()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clear();
}

/// `read_exact_at`, saying what happened when the file has become shorter
/// than its header said since it was opened: an `io::Error` carrying
/// [`ndnpy::error::DataError::FileShrank`] (never "failed to fill whole buffer").
pub fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    file.read_exact_at(buf, at).map_err(|e| {
        if e.kind() != io::ErrorKind::UnexpectedEof {
            return e;
        }
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            ndnpy::Error::Data(ndnpy::error::DataError::FileShrank {
                needed: at + buf.len() as u64,
                len,
            }),
        )
    })
}
