//! Opening what the user named: `.npy` files and `.npz` members, local or
//! remote (`source.rs`), read with positioned reads (never mapped: a file
//! someone truncates while we read it gives an error, not `SIGBUS`) or, for
//! compressed members, streamed.

use crate::error::{CliError, CliResult};
use crate::source::{Source, SourceReader};
use ndnpy::{dtype::Header, npz::Compression, NpzReader, ReadOptions};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// What a path holds, judged by its first bytes (then by its extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    Npy,
    Npz,
}

/// How every command reads, from the global options (set once by `main`).
static READ_OPTIONS: std::sync::OnceLock<ReadOptions> = std::sync::OnceLock::new();

/// Sets the read options of this run; the first call wins.
pub fn set_read_options(options: ReadOptions) {
    let _ = READ_OPTIONS.set(options);
}

/// The read options of this run. The default header limit is NumPy's
/// (`np.load` refuses longer headers unless given `max_header_size`), so
/// that `check` accepts what NumPy loads; `--max-header-size` raises it
/// as `max_header_size` does.
pub fn read_options() -> ReadOptions {
    READ_OPTIONS.get().cloned().unwrap_or_default()
}

pub fn container_of(path: &Path) -> CliResult<Container> {
    if crate::stack::is_stack(path) {
        // A folder of shards, read as the one `.npy` file it stands for.
        return Ok(Container::Npy);
    }
    let source = Source::open(path)?;
    let mut start = [0u8; 6];
    let got = source
        .read_at(&mut start, 0)
        .map_err(|e| CliError::io(path, e))?;
    let start = &start[..got];
    if start.starts_with(b"\x93NUMPY") {
        return Ok(Container::Npy);
    }
    if start.starts_with(b"PK") {
        return Ok(Container::Npz);
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("npz") => Ok(Container::Npz),
        _ => Ok(Container::Npy),
    }
}

/// Random access to an array's data bytes (offsets from the first data
/// byte). A streamed source only moves forward: callers ask for ascending,
/// non-overlapping ranges.
pub trait DataSource {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()>;

    /// The file and the offset of the first data byte, when the data is
    /// read by positioned reads (which other threads can then issue).
    fn positioned(&self) -> Option<(&File, u64)> {
        None
    }
}

/// Positioned reads of a file or an object: each read says where, so
/// nothing is mapped and no shared cursor moves.
pub struct Positioned {
    pub source: Source,
    pub base: u64,
}

impl DataSource for Positioned {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.source.read_exact_at(buf, self.base + offset)
    }

    fn positioned(&self) -> Option<(&File, u64)> {
        self.source.file().map(|file| (file, self.base))
    }
}

impl DataSource for crate::stack::StackData {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        crate::stack::StackData::read_at(self, offset, buf)
    }
}

/// A forward-only stream (a compressed member being inflated).
pub struct Streamed<R: Read> {
    pub reader: R,
    pub pos: u64,
}

impl<R: Read> DataSource for Streamed<R> {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if offset < self.pos {
            return Err(io::Error::other("internal: a stream cannot go back"));
        }
        let skip = offset - self.pos;
        let skipped = io::copy(&mut (&mut self.reader).take(skip), &mut io::sink())?;
        if skipped < skip {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.reader.read_exact(buf)?;
        self.pos = offset + buf.len() as u64;
        Ok(())
    }
}

/// Counts the bytes the header parser consumes, which gives the data
/// offset.
struct Counting<R> {
    inner: R,
    count: u64,
    /// The header's bytes (at most [`SEEN`]): the parsed dtype drops the
    /// byte order of raw items (`'>V2'`), which `--as` needs.
    seen: Vec<u8>,
}

/// How much of a header [`Counting`] keeps.
const SEEN: usize = 1 << 20;

impl<R> Counting<R> {
    fn new(inner: R) -> Counting<R> {
        Counting {
            inner,
            count: 0,
            seen: Vec::new(),
        }
    }

    /// Whether the header read spells a big-endian raw item (`'>V2'`:
    /// ml_dtypes' bfloat16 saved byte-swapped), whose bytes `--as` must
    /// swap.
    fn swapped_raw(&self) -> bool {
        self.seen.windows(3).any(|w| w == b"'>V" || w == b"\">V")
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let n = n.min(buf.len());
        self.count += n as u64;
        if self.seen.len() < SEEN {
            self.seen.extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }
}

/// A reader over a file or an object from an offset, by positioned reads.
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

/// Parses a preamble from `reader`, returning the header and its length.
pub fn read_header<R: Read>(reader: R) -> ndnpy::Result<(Header, u64)> {
    read_header_marked(reader).map(|(header, offset, _)| (header, offset))
}

/// [`read_header`], and whether the header spells a big-endian raw item
/// (see [`Opened::swapped_raw`]).
fn read_header_marked<R: Read>(reader: R) -> ndnpy::Result<(Header, u64, bool)> {
    let mut counting = Counting::new(reader);
    let header = Header::read_from_with(&mut counting, &read_options())?;
    Ok((header, counting.count, counting.swapped_raw()))
}

/// One array ready to be read: its header, where its data starts in its
/// `.npy` bytes, how many data bytes are really there, and the bytes.
pub struct Opened<'a> {
    pub header: Header,
    pub data_offset: u64,
    /// Data bytes present after the header (a truncated file has fewer than
    /// the header declares).
    pub available: u64,
    pub data: Box<dyn DataSource + 'a>,
    /// The header spells a big-endian raw item (`'>V2'`), which the parsed
    /// dtype cannot say: `--as` swaps its bytes.
    pub swapped_raw: bool,
}

impl Opened<'_> {
    /// Whether the data is a pickle (an object array), whose length the
    /// header does not say.
    pub fn is_pickle(&self) -> bool {
        self.header.dtype.has_object()
    }

    /// Fails unless all the data the header declares is present.
    pub fn check_complete(&self) -> ndnpy::Result<()> {
        if self.is_pickle() {
            return Ok(());
        }
        let expected = self.header.data_len()? as u64;
        if self.available < expected {
            return Err(ndnpy::Error::Data(ndnpy::error::DataError::TruncatedData {
                expected,
                found: self.available,
            }));
        }
        Ok(())
    }
}

/// The data of an opened array as a stream, from its first byte to the
/// last byte present (`available`), through positioned reads or the
/// member's inflater.
struct DataReader<'o, 'a> {
    opened: &'o mut Opened<'a>,
    pos: u64,
}

impl Read for DataReader<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.opened.available.saturating_sub(self.pos);
        let n = (buf.len() as u64).min(left) as usize;
        if n == 0 {
            return Ok(0);
        }
        self.opened.data.read_at(self.pos, &mut buf[..n])?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Reads the whole array through the library, whatever its dtype: how
/// object arrays (whose pickle has no length in the header) are read.
/// The library's limits apply, as to any stream.
pub fn read_any(opened: &mut Opened<'_>) -> ndnpy::Result<ndnpy::AnyArray> {
    let header = opened.header.to_bytes()?;
    let data = DataReader { opened, pos: 0 };
    ndnpy::AnyArray::read_npy_from_with(io::Cursor::new(header).chain(data), &read_options())
}

/// Opens a `.npy` file (or object).
pub fn open_npy(path: &Path) -> CliResult<Opened<'static>> {
    if crate::stack::is_stack(path) {
        let (header, data) = crate::stack::open(path, &read_options())?;
        let bytes = header
            .to_bytes()
            .map_err(|e| CliError::lib(path, None, e))?;
        let len = header
            .data_len()
            .map_err(|e| CliError::lib(path, None, e))?;
        return Ok(Opened {
            data_offset: bytes.len() as u64,
            available: len as u64,
            header,
            data: Box::new(data),
            swapped_raw: false,
        });
    }
    let source = Source::open(path)?;
    let len = source.len().map_err(|e| CliError::io(path, e))?;
    let (header, offset, swapped_raw) = read_header_marked(At {
        source: &source,
        pos: 0,
    })
    .map_err(|e| CliError::lib(path, None, e))?;
    Ok(Opened {
        swapped_raw,
        available: len.saturating_sub(offset),
        data_offset: offset,
        header,
        data: Box::new(Positioned {
            source,
            base: offset,
        }),
    })
}

/// An open `.npz` archive: its central directory read once by the
/// library's reader (the one zip reader of the workspace), and the file or
/// object for positioned reads of stored members.
pub struct Npz {
    pub path: PathBuf,
    pub reader: NpzReader<BufReader<SourceReader>>,
    source: Source,
}

/// Archives opened by this process (`NDNPY_COUNT_OPENS=1` prints the count
/// on exit): the tests check that each command reads an archive's directory
/// once.
pub static ARCHIVES_OPENED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Npz {
    pub fn open(path: &Path) -> CliResult<Npz> {
        let source = Source::open(path)?;
        // The library buffers the archive itself (and knows where its
        // buffer lies, which a `BufReader` forgets on every seek).
        let reader = NpzReader::new_with(
            BufReader::with_capacity(0, source.reader()),
            &read_options(),
        )
        .map_err(|e| CliError::lib(path, None, e))?;
        ARCHIVES_OPENED.fetch_add(1, Ordering::Relaxed);
        Ok(Npz {
            path: path.to_owned(),
            reader,
            source,
        })
    }

    pub fn names(&self) -> Vec<String> {
        self.reader.names()
    }

    /// Opens member `name`: positioned reads for a stored member, the
    /// library's inflating member reader for a compressed one.
    pub fn member(&mut self, name: &str) -> CliResult<Opened<'_>> {
        let path = self.path.clone();
        let err = |e| CliError::lib(&path, Some(name), e);
        let info = self.reader.member_info(name).map_err(err)?;
        if info.encrypted {
            return Err(err(ndnpy::Error::Archive(
                ndnpy::error::ArchiveError::Encrypted {
                    name: name.to_owned(),
                },
            )));
        }
        if info.compression == Compression::Stored {
            let (header, offset, swapped_raw) = read_header_marked(At {
                source: &self.source,
                pos: info.data_start,
            })
            .map_err(|e| err(in_member(name, e)))?;
            return Ok(Opened {
                swapped_raw,
                available: info.size.saturating_sub(offset),
                data_offset: offset,
                header,
                data: Box::new(Positioned {
                    source: self.source.clone(),
                    base: info.data_start + offset,
                }),
            });
        }
        let member = self
            .reader
            .member_reader(name)
            .map_err(|e| CliError::lib(&path, Some(name), e))?;
        let mut counting = Counting::new(member);
        let header = Header::read_from_with(&mut counting, &read_options())
            .map_err(|e| CliError::lib(&path, Some(name), in_member(name, e)))?;
        let offset = counting.count;
        let swapped_raw = counting.swapped_raw();
        Ok(Opened {
            swapped_raw,
            available: info.size.saturating_sub(offset),
            data_offset: offset,
            header,
            data: Box::new(Streamed {
                reader: counting.inner,
                pos: 0,
            }),
        })
    }
}

/// A member's header, where its data starts, and how many data bytes are
/// there, without its data.
pub struct Head {
    pub header: Header,
    pub data_offset: u64,
    pub available: u64,
}

impl Npz {
    /// Member `name`'s header only: read from the member's first bytes (a
    /// large compressed member is never read ahead or inflated whole for
    /// it), with the same errors as [`Npz::member`].
    pub fn member_head(&mut self, name: &str) -> CliResult<Head> {
        let info = self
            .reader
            .member_info(name)
            .map_err(|e| CliError::lib(&self.path, Some(name), e))?;
        if info.compression == Compression::Stored || info.encrypted {
            let opened = self.member(name)?;
            return Ok(Head {
                header: opened.header,
                data_offset: opened.data_offset,
                available: opened.available,
            });
        }
        let (header, data_offset) = self
            .reader
            .header_with_offset(name)
            .map_err(|e| CliError::lib(&self.path, Some(name), in_member(name, e)))?;
        Ok(Head {
            header,
            data_offset,
            available: info.size.saturating_sub(data_offset),
        })
    }
}

/// A member that does not start with the magic string is not an array.
fn in_member(name: &str, e: ndnpy::Error) -> ndnpy::Error {
    match e {
        ndnpy::Error::Header(ndnpy::error::HeaderError::BadMagic { found }) => {
            ndnpy::Error::Archive(ndnpy::error::ArchiveError::NotNpy {
                name: name.to_owned(),
                found,
            })
        }
        other => other,
    }
}

/// Reads the data in chunks of whole elements (about 256 KiB, so that a
/// second pass over a chunk finds it in the CPU's cache), calling `f` with
/// each; `progress` is told how many bytes went by.
pub fn for_each_chunk(
    opened: &mut Opened<'_>,
    mut progress: impl FnMut(u64),
    mut f: impl FnMut(&[u8]),
) -> ndnpy::Result<()> {
    opened.check_complete()?;
    let (total, chunk) = chunking(opened)?;
    let mut buf = vec![0u8; chunk.min(total) as usize];
    let mut pos = 0;
    while pos < total {
        let n = chunk.min(total - pos) as usize;
        opened.data.read_at(pos, &mut buf[..n])?;
        f(&buf[..n]);
        pos += n as u64;
        progress(n as u64);
    }
    Ok(())
}

/// The data's length and the chunk size: whole elements, about 256 KiB.
///
/// `NDNPY_CHUNK_BYTES` (1 byte to 16 MiB; other values are ignored) changes
/// the size. It exists for the tests, which set it small so that their small
/// fixtures span many chunks, stripes and threads.
fn chunking(opened: &Opened<'_>) -> ndnpy::Result<(u64, u64)> {
    let total = opened.header.data_len()? as u64;
    let itemsize = opened.header.dtype.itemsize().unwrap_or(1).max(1) as u64;
    let target = std::env::var("NDNPY_CHUNK_BYTES")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&n| (1..=16 << 20).contains(&n))
        .unwrap_or(1 << 18);
    Ok((total, (target / itemsize).max(1) * itemsize))
}

/// Threads for [`fold_chunks`]: a power of two (so that each owns the same
/// number of stripes), at most the available parallelism and [`STRIPES`].
/// `NDNPY_THREADS` (1 to 8) overrides the count, for the tests that check
/// the results do not depend on it.
fn worker_threads() -> usize {
    let wanted = std::env::var("NDNPY_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| (1..=STRIPES).contains(n))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let capped = wanted.clamp(1, STRIPES);
    1 << capped.ilog2()
}

/// Chunk `c` goes into state `c % STRIPES`, whatever the number of threads,
/// so that results folded from the states in order do not depend on the
/// machine.
const STRIPES: usize = 8;

/// Folds the data's chunks into [`STRIPES`] states, chunk `c` into state
/// `c % STRIPES` in ascending order, and returns the states in order (the
/// caller merges them). A file is read on up to `STRIPES` threads, each
/// issuing its own positioned reads so that each chunk is worked on by the
/// core that copied it out of the page cache (handing chunks from a reader
/// thread to a worker measured no faster than one thread). A stream is
/// read on this thread.
pub fn fold_chunks<S: Send>(
    opened: &mut Opened<'_>,
    progress: &(impl Fn(u64) + Sync),
    init: impl Fn() -> S,
    f: &(impl Fn(&mut S, &[u8]) + Sync),
) -> ndnpy::Result<Vec<S>> {
    opened.check_complete()?;
    let (total, chunk) = chunking(opened)?;
    let mut states: Vec<S> = (0..STRIPES).map(|_| init()).collect();
    let Some((file, base)) = opened.data.positioned() else {
        let mut c = 0;
        for_each_chunk(opened, progress, |bytes| {
            f(&mut states[c % STRIPES], bytes);
            c += 1;
        })?;
        return Ok(states);
    };
    let chunks = total.div_ceil(chunk.max(1)) as usize;
    let threads = worker_threads().min(chunks.max(1).next_power_of_two());
    // Thread `t` owns the stripes `t, t + threads, …` (`threads` divides
    // `STRIPES`), that is the chunks `t, t + threads, …`: each thread goes
    // through the file in ascending order, so the threads advance roughly
    // together and the kernel sees nearly sequential reads.
    let mut owned: Vec<Vec<(usize, S)>> = (0..threads).map(|_| Vec::new()).collect();
    for (stripe, state) in states.into_iter().enumerate() {
        owned[stripe % threads].push((stripe, state));
    }
    // Set by a thread whose read failed, so that the others stop too.
    let failed = AtomicBool::new(false);
    let results: Vec<io::Result<Vec<(usize, S)>>> = std::thread::scope(|scope| {
        let failed = &failed;
        let workers: Vec<_> = owned
            .into_iter()
            .enumerate()
            .map(|(t, mut mine)| {
                scope.spawn(move || {
                    let mut buf = vec![0u8; chunk.min(total) as usize];
                    for c in (t..chunks).step_by(threads) {
                        if failed.load(Ordering::Relaxed) {
                            break;
                        }
                        let pos = c as u64 * chunk;
                        let n = chunk.min(total - pos) as usize;
                        if let Err(e) =
                            crate::source::read_exact_at(file, &mut buf[..n], base + pos)
                        {
                            failed.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                        f(&mut mine[c % STRIPES / threads].1, &buf[..n]);
                        progress(n as u64);
                    }
                    Ok(mine)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut states: Vec<(usize, S)> = Vec::with_capacity(STRIPES);
    for result in results {
        states.extend(result?);
    }
    states.sort_by_key(|(s, _)| *s);
    Ok(states.into_iter().map(|(_, state)| state).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.npy` of 1 MiB of f64 at `path`.
    fn write_npy(path: &Path) {
        let header = ndnpy::dtype::Header {
            dtype: ndnpy::dtype::DType::parse("<f8").unwrap(),
            shape: vec![1 << 17],
            fortran_order: false,
            version: ndnpy::dtype::Version::V1,
        };
        let mut bytes = header.to_bytes().unwrap();
        bytes.resize(bytes.len() + (1 << 20), 0);
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn a_file_truncated_after_it_was_opened_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        for fold in [false, true] {
            write_npy(&path);
            let mut opened = open_npy(&path).unwrap();
            // Another process truncates the file between the header and the
            // data reads.
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(4096)
                .unwrap();
            let err = if fold {
                fold_chunks(&mut opened, &|_| {}, || 0u64, &|n, c| *n += c.len() as u64)
                    .map(drop)
                    .unwrap_err()
            } else {
                for_each_chunk(&mut opened, |_| {}, |_| {}).unwrap_err()
            };
            assert!(
                matches!(
                    err,
                    ndnpy::Error::Data(ndnpy::error::DataError::FileShrank { len: 4096, .. })
                ),
                "{err}"
            );
            assert!(
                err.to_string().contains("changed while it was read"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_file_extended_or_replaced_while_open_reads_what_was_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        write_npy(&path);
        let mut opened = open_npy(&path).unwrap();
        // Bytes appended after the data are not data (as NumPy ignores them).
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, &[1u8; 4096]).unwrap();
        let mut total = 0;
        for_each_chunk(&mut opened, |_| {}, |c| total += c.len()).unwrap();
        assert_eq!(total, 1 << 20);
        // A file renamed over the path: the open file is still the old one.
        let other = dir.path().join("b.npy");
        std::fs::write(&other, b"not npy").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let mut total = 0;
        for_each_chunk(&mut opened, |_| {}, |c| total += c.len()).unwrap();
        assert_eq!(total, 1 << 20);
    }
}
