//! Folders of `.npy` shards (`ndnpy::stack`) read by every command as the
//! one `.npy` file of the same shape and dtype would be: a dask stack
//! (`da.to_npy_stack`, recognised by its `info`) always, any folder of
//! shards under `--stack`; local folders, and folders in stores (a URL
//! that ends in `/` or whose last part has no `.`: `s3://bucket/stack`).
//!
//! The library opens the stack (`NpyStack`, or `ndnpy_store`'s
//! `RemoteNpyStack` for a URL, which checks it by the same plan: so a
//! missing shard, an `info` that lies or shards that disagree give its
//! errors), and the commands then read the
//! whole array's data bytes in C (or Fortran) order through [`StackData`],
//! which maps each byte range onto the shards. Stacking along axis `k` of
//! C-order shards, the whole array's bytes are, for each index of the axes
//! before `k`, each shard's block of `len * (row bytes after k)` in turn:
//! arithmetic, never a copy of the whole stack, so `stats` and `show`
//! stream a stack as they stream a file, with at most
//! [`OPEN_SHARDS`] shards open (a few, for objects: each has a reader's
//! buffers). A shard is read through [`Source`], as any input is: by
//! positioned reads of a file, or ranged GETs pinned to one version of an
//! object.

use crate::error::{CliError, CliResult, EXIT_USAGE};
use crate::source::Source;
use ndnpy::stack::NpyStack;
use ndnpy::{dtype::DType, dtype::Header, dtype::Version, ReadOptions};
use serde_json::{json, Value};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// `--stack`: any local folder is read as a stack of its `.npy` files.
static FORCED: AtomicBool = AtomicBool::new(false);

/// Sets `--stack` for this run.
pub fn set_forced(on: bool) {
    FORCED.store(on, Ordering::Relaxed);
}

/// Whether `path` is read as one stacked array: a folder holding a dask
/// `info` file, or under `--stack` any folder (local, or a URL with
/// objects below it).
pub fn is_stack(path: &Path) -> bool {
    if crate::source::is_remote(path) {
        return remote_is_stack(path);
    }
    path.is_dir() && (FORCED.load(Ordering::Relaxed) || path.join("info").is_file())
}

/// What [`remote_is_stack`] found for each URL asked about (a command asks
/// several times per input; each answer costs a GET or a listing).
static KNOWN: Mutex<Vec<(PathBuf, bool)>> = Mutex::new(Vec::new());

/// Whether the URL `path` names a stack: it looks like a folder (ends in
/// `/`, or its last part has no `.`, so `s3://b/a.npy` costs nothing
/// more), and `info` is below it (one GET), or, under `--stack`, objects
/// are (one listing).
fn remote_is_stack(path: &Path) -> bool {
    let Some(url) = path.to_str() else {
        return false;
    };
    let base = url.trim_end_matches('/');
    let last = base.rsplit('/').next().unwrap_or("");
    if !url.ends_with('/') && last.contains('.') {
        return false;
    }
    let mut known = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, is)) = known.iter().find(|(p, _)| p == path) {
        return *is;
    }
    let has_info = ndnpy_store::Location::parse(&format!("{base}/info"))
        .and_then(|at| ndnpy_store::blocking::ObjectReader::open(&at))
        .is_ok();
    let is = has_info
        || (FORCED.load(Ordering::Relaxed) && crate::source::objects_below(path).is_some());
    known.push((path.to_owned(), is));
    is
}

/// A shard as the check saw it: its path (or URL), its length along the
/// axis, and, for an object, its header and data offset.
type CheckedShard = (PathBuf, usize, Option<(Header, u64)>);

/// A stack as the library checked it, local or remote.
struct Checked {
    dask: bool,
    axis: usize,
    shape: Vec<usize>,
    dtype: DType,
    shards: Vec<CheckedShard>,
}

/// The error of a stack the library refused: exit code 2 (`check`
/// reports it as a problem), the path named once.
fn refused_by_library(path: &Path, text: String) -> CliError {
    let p = path.display().to_string();
    let message = if text.contains(&p) {
        text
    } else {
        format!("{p}: {text}")
    };
    CliError {
        message,
        code: EXIT_USAGE,
    }
}

/// Opens and checks the stack at `path` (a folder or a URL).
fn checked(path: &Path, options: &ReadOptions) -> CliResult<Checked> {
    if !crate::source::is_remote(path) {
        let stack = open_library(path, options)?;
        return Ok(Checked {
            dask: stack.is_dask(),
            axis: stack.axis(),
            shape: stack.shape().to_vec(),
            dtype: stack.dtype().clone(),
            shards: stack
                .shards()
                .iter()
                .map(|s| (s.path().to_owned(), s.len(), None))
                .collect(),
        });
    }
    let url = path.to_str().unwrap_or_default();
    let location = ndnpy_store::Location::parse(url).map_err(|e| CliError::usage(e.to_string()))?;
    let counted = std::sync::Arc::new(|n| {
        crate::source::FETCHED.fetch_add(n, Ordering::Relaxed);
    });
    let requests = crate::source::REQUESTS
        .get_or_init(Default::default)
        .clone();
    let config = ndnpy_store::Config::default()
        .read_options(*options)
        .progress(counted)
        .requests(requests);
    let stack = ndnpy_store::blocking::RemoteNpyStack::open_with(&location, config)
        .map_err(|e| refused_by_library(path, e.to_string()))?;
    let base = url.trim_end_matches('/');
    let folder = location.path.as_ref();
    let shards = stack
        .shards()
        .iter()
        .map(|s| {
            let inside = s.path().as_ref();
            let name = match folder.is_empty() {
                true => inside,
                false => inside
                    .strip_prefix(folder)
                    .map_or(inside, |n| n.trim_start_matches('/')),
            };
            let npy = s.npy();
            (
                PathBuf::from(format!("{base}/{name}")),
                s.len(),
                Some((npy.header().clone(), npy.data_offset())),
            )
        })
        .collect();
    Ok(Checked {
        dask: stack.is_dask(),
        axis: stack.0.axis(),
        shape: stack.shape().to_vec(),
        dtype: stack.dtype().clone(),
        shards,
    })
}

/// The facts `info` adds for the stack last opened (its path, then the
/// JSON), kept so that `info` does not read every shard's header twice.
static FACTS: Mutex<Option<(PathBuf, Value)>> = Mutex::new(None);

/// What `info` says of a stack beyond the header of its whole array.
pub fn facts(path: &Path, options: &ReadOptions) -> CliResult<Value> {
    if let Some((p, v)) = FACTS.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        if p == path {
            return Ok(v.clone());
        }
    }
    let stack = checked(path, options)?;
    Ok(facts_of(&stack))
}

fn facts_of(stack: &Checked) -> Value {
    json!({
        "kind": if stack.dask { "dask" } else { "folder" },
        "shards": stack.shards.len(),
        "axis": stack.axis,
    })
}

/// The library's stack on a path, with this run's read options; its
/// errors are exit code 2 (`check` reports them as problems).
fn open_library(path: &Path, options: &ReadOptions) -> CliResult<NpyStack> {
    NpyStack::open_with(path, options).map_err(|e| refused_by_library(path, e.to_string()))
}

/// One shard as the data reader sees it.
struct Part {
    path: PathBuf,
    /// Its header as the stack was opened with it, and its data offset.
    header: Header,
    base: u64,
    /// The bytes it gives to each run of the outer axes.
    block: u64,
}

/// The data bytes of a whole stack, read from its shards (see the module
/// docs). Offsets are from the first data byte of the whole array.
pub struct StackData {
    parts: Vec<Part>,
    /// `starts[s]`: where shard `s`'s block begins within one outer run;
    /// the last entry is the run's length.
    starts: Vec<u64>,
    options: ReadOptions,
    /// The shards open now, oldest first (at most [`OPEN_SHARDS`], or
    /// [`OPEN_OBJECTS`]): a stack along an inner axis visits every shard
    /// in each outer run, so one open file would be reopened (and its
    /// header read) per block.
    open: Vec<(usize, Source)>,
    keep: usize,
}

/// How many shards' files a stack keeps open.
const OPEN_SHARDS: usize = 64;

/// How many shards' objects a remote stack keeps open (each reader holds
/// its buffers).
const OPEN_OBJECTS: usize = 4;

/// Counts what the header parser consumes: the data offset.
struct Counting<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// Reads a [`Source`] from a position on.
struct At<'a> {
    source: &'a Source,
    pos: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.source.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// A shard's file or object, its header and data offset.
fn shard_header(path: &Path, options: &ReadOptions) -> io::Result<(Source, Header, u64)> {
    let source = Source::open(path).map_err(|e| io::Error::other(e.message))?;
    let mut counting = Counting {
        inner: io::BufReader::with_capacity(
            4096,
            At {
                source: &source,
                pos: 0,
            },
        ),
        count: 0,
    };
    // Counted above the buffer: the bytes the parser consumed.
    let header = Header::read_from_with(&mut counting, options).map_err(io::Error::other)?;
    let offset = counting.count;
    drop(counting);
    Ok((source, header, offset))
}

/// The error for a stack the commands cannot read as one file.
fn refused(path: &Path, why: &str) -> CliError {
    CliError::usage(format!("{}: {why}", path.display()))
}

/// Opens the stack at `path`: the header of its whole array, and its data.
pub fn open(path: &Path, options: &ReadOptions) -> CliResult<(Header, StackData)> {
    let stack = checked(path, options)?;
    *FACTS.lock().unwrap_or_else(|p| p.into_inner()) = Some((path.to_owned(), facts_of(&stack)));
    if stack.dtype.has_object() {
        return Err(refused(
            path,
            "a stack of object arrays (pickles) cannot be read as one array by the CLI; read it with ndnpy::stack::NpyStack::read_any",
        ));
    }
    let ndim = stack.shape.len();
    let mut parts = Vec::with_capacity(stack.shards.len());
    let mut fortran = None;
    for (p, _, seen) in &stack.shards {
        let (header, base) = match seen {
            Some(seen) => seen.clone(),
            None => {
                let (_, header, base) = shard_header(p, options).map_err(|e| CliError::io(p, e))?;
                (header, base)
            }
        };
        let f = header.fortran_order && ndim > 1;
        if *fortran.get_or_insert(f) != f {
            return Err(refused(
                path,
                "its shards mix C and Fortran order, so its bytes are no one file's; read it with ndnpy::stack::NpyStack::read",
            ));
        }
        parts.push(Part {
            path: p.to_owned(),
            header,
            base,
            block: 0,
        });
    }
    let fortran = fortran.unwrap_or(false);
    let header = Header {
        dtype: stack.dtype.clone(),
        shape: stack.shape.clone(),
        fortran_order: fortran,
        version: Version::V1,
    };
    let itemsize = header.dtype.itemsize().unwrap_or(0) as u64;
    // The axes after the stacking axis in memory order: those after it in
    // C order, those before it in Fortran order.
    let axis = stack.axis;
    let after: &[usize] = if fortran {
        &stack.shape[..axis]
    } else {
        &stack.shape[axis + 1..]
    };
    let too_big = || refused(path, "its shape's size overflows");
    let inner = after
        .iter()
        .try_fold(itemsize, |acc, &n| acc.checked_mul(n as u64))
        .ok_or_else(too_big)?;
    let mut starts = vec![0u64];
    for (part, (_, len, _)) in parts.iter_mut().zip(&stack.shards) {
        part.block = (*len as u64).checked_mul(inner).ok_or_else(too_big)?;
        let end = starts[starts.len() - 1]
            .checked_add(part.block)
            .ok_or_else(too_big)?;
        starts.push(end);
    }
    header
        .data_len()
        .map_err(|e| CliError::lib(path, None, e))?;
    Ok((
        header,
        StackData {
            parts,
            starts,
            options: *options,
            open: Vec::new(),
            keep: match crate::source::is_remote(path) {
                true => OPEN_OBJECTS,
                false => OPEN_SHARDS,
            },
        },
    ))
}

impl StackData {
    /// Shard `s`'s file, opened again (a few kept open) and checked against
    /// the header the stack was opened with: a shard replaced since is an
    /// error, never other values.
    fn file(&mut self, s: usize) -> io::Result<&Source> {
        if let Some(at) = self.open.iter().position(|(i, _)| *i == s) {
            return Ok(&self.open[at].1);
        }
        let part = &self.parts[s];
        let (file, header, base) = shard_header(&part.path, &self.options)?;
        if header != part.header || base != part.base {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: the shard changed since the stack was opened",
                    part.path.display()
                ),
            ));
        }
        if self.open.len() == self.keep {
            self.open.remove(0);
        }
        self.open.push((s, file));
        Ok(&self.open[self.open.len() - 1].1)
    }

    /// Fills `buf` with the whole array's data bytes from `offset`.
    pub fn read_at(&mut self, mut offset: u64, mut buf: &mut [u8]) -> io::Result<()> {
        let run = self.starts[self.starts.len() - 1];
        while !buf.is_empty() {
            if run == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let (outer, within_run) = (offset / run, offset % run);
            // The last shard whose block starts at or before the byte (an
            // empty block never holds it).
            let s = self.starts.partition_point(|&x| x <= within_run) - 1;
            let part = &self.parts[s];
            let within = within_run - self.starts[s];
            let n = (part.block - within).min(buf.len() as u64) as usize;
            let at = part.base + outer * part.block + within;
            let path = part.path.clone();
            let (now, rest) = std::mem::take(&mut buf).split_at_mut(n);
            let source = self.file(s)?;
            source
                .read_exact_at(now, at)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            buf = rest;
            offset += n as u64;
        }
        Ok(())
    }
}
