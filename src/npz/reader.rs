//! [`NpzReader`]: members of an `.npz` archive into owned arrays.

use super::codec::Plan;
use super::member::MemberReader;
use super::pool::{read_inflated, Output, Want};
use super::prefetch::ReadAhead;
use super::seek::{SeekIndex, Sidecar};
use super::zip::directory::{Directory, STORED};
use super::zip::input::{FileAt, Input};
use super::zip::names::key_of;
use super::{in_member, not_an_archive};
use crate::array::any::AnyArray;
use crate::array::compact::{BytesArray, StringArray};
use crate::array::element::{Element, LayoutElement};
use crate::error::{Error, Result};
use crate::format::header::{self, Header};
use crate::io::checked::CheckedRead;
use crate::io::source::{SizedRead, Source};
use crate::npy::read::read_array_with;
use crate::options::ReadOptions;
use ndarray::{Array, ArrayViewMut, Dimension};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// After an array's data, at most this many trailing member bytes are
/// decompressed so that the member's CRC-32 gets checked; NumPy ignores
/// such bytes, and a member could hold gigabytes of them.
const DRAIN_LIMIT: u64 = 1 << 20;

/// The archive is read through a buffer of this size, so that consecutive
/// small members cost one read of the file, not one per member.
const INPUT_BUFFER: usize = 32 << 10;

/// Reads the arrays of an `.npz` archive (what `np.savez` and
/// `np.savez_compressed` write).
///
/// Members may be stored or deflated, the archive may use zip64 records,
/// data descriptors or an archive comment. Arrays are named as NumPy names
/// them: the member `x.npy` is the array `x`, and both `"x"` and `"x.npy"`
/// find it. A member that is not a `.npy` file (NumPy checks the first
/// bytes, not the name) gives [`crate::error::ArchiveError::NotNpy`] when read as an array;
/// [`NpzReader::raw`] returns its bytes.
///
/// The archive is read as Python's `zipfile` reads it, so its arrays are
/// the ones `np.load` sees: the central directory is walked by its declared
/// size (not the end record's entry count); names are UTF-8 under the UTF-8
/// flag (invalid UTF-8 is refused) and CP437 otherwise; a name is cut at its
/// first NUL byte (NumPy's key); extra fields other than zip64's, such as
/// the Info-ZIP Unicode Path field, never rename a member; when a name
/// occurs twice, the last entry is the one read. A member whose local
/// header names another file, or whose data overlaps the next member or the
/// central directory (how overlapping-entry zip bombs work), is refused
/// with [`crate::error::ArchiveError::InvalidArchive`] when it is read; the other members stay
/// readable. Members are found by name in O(1) through an index built at
/// open.
///
/// Hostile archives give errors, not huge allocations: a member's data is
/// read in bounded steps and never beyond what its `.npy` header declares,
/// so a zip bomb costs no more memory than the array it claims to be.
///
/// ```
/// use ndarray::{array, Array1, Array2, Ix1};
/// use ndnpy::{NpzReader, NpzWriter};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("a.npz");
/// let mut writer = NpzWriter::create(&path)?;
/// writer.add("x", &array![1.0, 2.0, 3.0])?;
/// writer.add("y", &array![[1i32, 2], [3, 4]])?;
/// writer.finish()?;
///
/// let mut npz = NpzReader::open(&path)?;
/// assert_eq!(npz.names(), ["x", "y"]);
/// let x: Array1<f64> = npz.read("x")?;
/// let y: Array2<i32> = npz.read("y.npy")?;
/// assert_eq!(x, array![1.0, 2.0, 3.0]);
/// assert_eq!(y[[1, 0]], 3);
/// assert_eq!(npz.header("y")?.shape, vec![2, 2]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub struct NpzReader<R: Read + Seek> {
    pub(super) input: Input<CheckedRead<R>>,
    pub(super) directory: Directory,
    /// Member names in archive order.
    pub(super) members: Vec<String>,
    pub(super) options: ReadOptions,
    /// Length of the archive, which bounds what a stored member can hold.
    pub(super) archive_len: u64,
    /// The inflater, reset for each deflated member.
    pub(super) inflater: flate2::Decompress,
    /// The members announced to be read next, inflated ahead on other
    /// cores (`prefetch.rs`).
    pub(super) ahead: ReadAhead,
    /// Seek indexes of deflated members, by entry, built by `read_range`
    /// (`seek/`), and where they are kept on disk, if anywhere.
    pub(super) indexes: HashMap<usize, SeekIndex>,
    pub(super) sidecar: Option<Sidecar>,
    /// The archive's path, when opened from one.
    pub(super) path: Option<PathBuf>,
    /// The archive's length and modification time when it was opened from
    /// a path: what an index sidecar records (`seek/sidecar.rs`).
    pub(super) opened: Option<super::seek::Stamp>,
    /// The archive file, when opened from a path on Unix: read-ahead jobs
    /// read their members' compressed bytes from it themselves, by
    /// positioned reads (which leave the reader's own position alone).
    pub(super) file: Option<Arc<File>>,
}

impl NpzReader<BufReader<File>> {
    /// Opens the archive at `path`.
    ///
    /// Only the central directory is read here; members are read on demand.
    ///
    /// ```no_run
    /// let npz = ndnpy::NpzReader::open("weights.npz")?;
    /// println!("{:?}", npz.names());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn open<P: AsRef<Path>>(path: P) -> Result<Self> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// [`NpzReader::open`] with explicit limits, applied to every member
    /// read (for example a larger [`ReadOptions::max_header_len`] for big
    /// record dtypes).
    ///
    /// ```no_run
    /// use ndnpy::{NpzReader, ReadOptions};
    ///
    /// let options = ReadOptions::default().max_header_len(1 << 20);
    /// let npz = NpzReader::open_with("records.npz", &options)?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn open_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        let file = crate::error::open_file(path)?;
        // Taken from the file opened, before reading it: a sidecar never
        // describes other bytes than those this reader reads.
        let opened = file.metadata().ok().and_then(|m| super::seek::stamp_of(&m));
        // The reader buffers the archive itself (and knows where its buffer
        // lies in the file, which a `BufReader` forgets on every seek).
        // A second handle for positioned reads (on Unix: elsewhere a
        // positioned read moves the handle's shared position).
        let positioned = if cfg!(unix) {
            file.try_clone().ok().map(Arc::new)
        } else {
            None
        };
        let mut npz = Self::new_with(BufReader::with_capacity(0, file), options)
            .map_err(|e| e.at_path(path))?;
        npz.path = Some(path.to_path_buf());
        npz.opened = opened;
        npz.file = positioned;
        Ok(npz)
    }
}

impl<R: Read + Seek> NpzReader<R> {
    /// Reads the archive's central directory from `reader`.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndnpy::{NpzReader, NpzWriter};
    /// use std::io::Cursor;
    ///
    /// let mut writer = NpzWriter::new(Cursor::new(Vec::new()));
    /// writer.add("a", &array![1u8, 2])?;
    /// let bytes = writer.finish_into_inner()?.into_inner();
    ///
    /// let npz = NpzReader::new(Cursor::new(bytes))?;
    /// assert_eq!(npz.len(), 1);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn new(reader: R) -> Result<Self> {
        Self::new_with(reader, &ReadOptions::default())
    }

    /// [`NpzReader::new`] with explicit limits, applied to every member
    /// read.
    ///
    /// ```
    /// # use std::io::Cursor;
    /// # let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// # let bytes = w.finish_into_inner()?.into_inner();
    /// use ndnpy::{NpzReader, ReadOptions};
    ///
    /// let options = ReadOptions::default().max_header_len(1 << 20);
    /// let npz = NpzReader::new_with(Cursor::new(bytes), &options)?;
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn new_with(reader: R, options: &ReadOptions) -> Result<Self> {
        let mut reader = CheckedRead(reader);
        let archive_len = reader.seek(SeekFrom::End(0))?;
        reader.seek(SeekFrom::Start(0))?;
        let mut start = [0u8; 6];
        let got = crate::io::checked::read_full(&mut reader, &mut start)?;
        let mut input = Input::new(reader, INPUT_BUFFER)?;
        let directory = Directory::read(&mut input, archive_len)
            .map_err(|e| not_an_archive(&start[..got], e))?;
        let members = directory.entries.iter().map(|e| e.name.clone()).collect();
        Ok(NpzReader {
            input,
            directory,
            members,
            options: *options,
            archive_len,
            inflater: flate2::Decompress::new(false),
            ahead: ReadAhead::new(),
            indexes: HashMap::new(),
            sidecar: None,
            path: None,
            opened: None,
            file: None,
        })
    }

    /// The array names, in archive order: each member's name without its
    /// `.npy` suffix (the keys of NumPy's `NpzFile`). Members that are not
    /// `.npy` files are listed too, by their full name.
    ///
    /// ```
    /// # use ndarray::array;
    /// # use std::io::Cursor;
    /// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// w.add("b", &array![1u8])?;
    /// w.add("a.1", &array![2u8])?;
    /// let bytes = w.finish_into_inner()?.into_inner();
    /// let npz = ndnpy::NpzReader::new(Cursor::new(bytes))?;
    /// assert_eq!(npz.names(), ["b", "a.1"]);
    /// assert_eq!(npz.member_names(), ["b.npy", "a.1.npy"]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn names(&self) -> Vec<String> {
        self.members.iter().map(|m| key_of(m).to_owned()).collect()
    }

    /// The members' names as stored in the zip file, in archive order.
    pub fn member_names(&self) -> &[String] {
        &self.members
    }

    /// Number of members.
    ///
    /// ```
    /// # use std::io::Cursor;
    /// let w = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// let bytes = w.finish_into_inner()?.into_inner();
    /// let npz = ndnpy::NpzReader::new(Cursor::new(bytes))?;
    /// assert_eq!(npz.len(), 0);
    /// assert!(npz.is_empty());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the archive has no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Whether `name` (or `name.npy`) is a member.
    pub fn contains(&self, name: &str) -> bool {
        self.index(name).is_ok()
    }

    /// The archive's comment (empty if it has none).
    pub fn comment(&self) -> &[u8] {
        &self.directory.comment
    }

    /// The `.npy` header of member `name`: dtype, shape and order, read from
    /// the member's first bytes without reading its data.
    ///
    /// ```
    /// # use ndarray::Array3;
    /// # use std::io::Cursor;
    /// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    /// w.add("v", &Array3::<f32>::zeros((2, 3, 4)))?;
    /// let bytes = w.finish_into_inner()?.into_inner();
    /// let mut npz = ndnpy::NpzReader::new(Cursor::new(bytes))?;
    /// let header = npz.header("v")?;
    /// assert_eq!(header.shape, vec![2, 3, 4]);
    /// assert_eq!(header.dtype.to_string(), "<f4");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn header(&mut self, name: &str) -> Result<Header> {
        let index = self.index(name)?;
        let options = self.options;
        // Streamed on this thread: only the header's bytes are read and
        // inflated (never the first pieces of a large member ndnpy wrote).
        self.with_member(index, Plan::Head, |member, _, _| {
            header::read_preamble(member, &options).map(|(h, _)| h)
        })
    }

    /// [`NpzReader::header`], with where the data starts in the member's
    /// `.npy` bytes (the length of its preamble and header), read the same
    /// way: from the member's first bytes only, never decompressing more.
    ///
    /// ```
    /// # use ndarray::Array1;
    /// # use std::io::Cursor;
    /// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    /// w.add("v", &Array1::<f32>::zeros(10))?;
    /// let bytes = w.finish_into_inner()?.into_inner();
    /// let mut npz = ndnpy::NpzReader::new(Cursor::new(bytes))?;
    /// let (header, offset) = npz.header_with_offset("v")?;
    /// assert_eq!(header.shape, vec![10]);
    /// assert_eq!(offset, 128); // np.save aligns the data to 64 bytes
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn header_with_offset(&mut self, name: &str) -> Result<(Header, u64)> {
        let index = self.index(name)?;
        let options = self.options;
        self.with_member(index, Plan::Head, |member, _, _| {
            header::read_preamble(member, &options).map(|(h, len)| (h, len as u64))
        })
    }

    /// Reads member `name` into an array of `T` with dimension `D`.
    ///
    /// Errors: [`Error::MemberNotFound`], [`crate::error::ArchiveError::NotNpy`] for a member that
    /// is not a `.npy` file, [`Error::DTypeMismatch`] /
    /// [`Error::NdimMismatch`] when the member holds another type, and
    /// [`crate::error::ArchiveError::BadCrc`], [`crate::error::ArchiveError::CorruptMember`], [`crate::error::ArchiveError::Encrypted`],
    /// [`crate::error::DataError::TruncatedData`] for damaged members.
    ///
    /// ```
    /// # use ndarray::{array, Array2, Ix2};
    /// # use std::io::Cursor;
    /// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// w.add("m", &array![[1u16, 2], [3, 4]].reversed_axes())?;
    /// let bytes = w.finish_into_inner()?.into_inner();
    /// let mut npz = ndnpy::NpzReader::new(Cursor::new(bytes))?;
    /// let m = npz.read::<u16, Ix2>("m")?;
    /// assert_eq!(m, array![[1, 3], [2, 4]]);
    /// assert!(npz.read::<f64, Ix2>("m").is_err());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn read<T: Element, D: Dimension>(&mut self, name: &str) -> Result<Array<T, D>> {
        let index = self.index(name)?;
        let options = self.options;
        self.read_index(index, |h, s| read_array_with::<T, D>(h, s, &options))
    }

    /// Reads member `name` whatever its element type.
    ///
    /// ```
    /// # use ndarray::array;
    /// # use std::io::Cursor;
    /// use ndnpy::AnyArray;
    ///
    /// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// w.add("i", &array![1i64, 2, 3])?;
    /// let bytes = w.finish_into_inner()?.into_inner();
    /// let mut npz = ndnpy::NpzReader::new(Cursor::new(bytes))?;
    /// match npz.read_any("i")? {
    ///     AnyArray::I64(a) => assert_eq!(a.len(), 3),
    ///     other => panic!("unexpected {:?}", other.dtype()),
    /// }
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn read_any(&mut self, name: &str) -> Result<AnyArray> {
        let index = self.index(name)?;
        let planned = self.planned(index, Some(Want::Any(self.options)));
        self.any_from(index, planned)
    }

    /// Reads member `name` into `out`, an array the caller has (of the
    /// member's shape, any memory layout), as [`crate::npy::ReadNpyInto`] does:
    /// inflated and converted on the way, with no allocation in proportion
    /// to the data.
    pub fn read_into<T: LayoutElement, D: Dimension>(
        &mut self,
        name: &str,
        out: &mut ArrayViewMut<'_, T, D>,
    ) -> Result<()> {
        let index = self.index(name)?;
        self.read_index(index, |h, s| crate::array::decode::read_into(h, s, out))
    }

    /// Reads `<U` member `name` as a [`crate::types::StringArray`]: two
    /// allocations, not one per element.
    ///
    /// ```
    /// # use std::io::Cursor;
    /// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// w.add("words", &ndarray::array!["a".to_string(), "bc".into()])?;
    /// let mut npz = ndnpy::NpzReader::new(w.finish_into_inner()?)?;
    /// assert_eq!(npz.read_strings("words")?.values(), "abc");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn read_strings(&mut self, name: &str) -> Result<StringArray> {
        let index = self.index(name)?;
        self.read_index(index, StringArray::decode)
    }

    /// Reads `|S` member `name` as a [`crate::types::BytesArray`].
    pub fn read_byte_strings(&mut self, name: &str) -> Result<BytesArray> {
        let index = self.index(name)?;
        self.read_index(index, BytesArray::decode)
    }

    /// Positions the input at member `index`'s data (its local header
    /// checked against the directory) and returns its decompressing reader,
    /// its declared uncompressed size, and whether that size can be trusted
    /// to size one allocation (a stored member whose bytes lie inside the
    /// archive; a compressed member's size is only a claim).
    /// `plan` says how its bytes will be read.
    pub(super) fn open_member(
        &mut self,
        index: usize,
        plan: Plan,
    ) -> Result<(ArchiveMember<'_, R>, u64, bool)> {
        let entry = &self.directory.entries[index];
        let key = entry.key();
        let start = entry
            .data_start(&mut self.input, self.archive_len)
            .map_err(|e| in_member(key, e))?;
        entry.check_supported()?;
        self.input.seek(SeekFrom::Start(start))?;
        // The directory checked that a stored member's data lies inside
        // the archive.
        let stored = entry.method == STORED && entry.compressed_size == entry.size;
        let size = entry.size;
        let at = self.file.as_ref().map(|file| FileAt {
            file: Arc::clone(file),
            start,
        });
        let member = MemberReader::open(entry, &mut self.input, &mut self.inflater, plan, at);
        let trusted = stored || member.whole();
        Ok((member, size, trusted))
    }

    /// Gives back the underlying reader.
    pub fn into_inner(self) -> R {
        self.input.into_inner().0
    }

    /// The index of member `name`, by NumPy's rule: the exact member name
    /// first, then `name.npy` (and the last entry of a repeated name).
    pub(super) fn index(&self, name: &str) -> Result<usize> {
        self.directory
            .lookup(name)
            .ok_or_else(|| Error::MemberNotFound {
                name: name.to_owned(),
            })
    }

    /// Reads the array of member `index` with `read`, which gets the parsed
    /// header and a source bounded by the member's declared size.
    pub(super) fn read_index<A>(
        &mut self,
        index: usize,
        read: impl FnOnce(&Header, &mut Source<'_>) -> Result<A>,
    ) -> Result<A> {
        let options = self.options;
        match self.planned(index, Some(Want::Bytes)) {
            // Inflated ahead, checked: read from memory.
            Some(Ok(Output::Bytes(bytes))) => {
                let key = self.directory.entries[index].key().to_owned();
                let result = read_inflated(&bytes, &options, read).map_err(|e| in_member(&key, e));
                self.recycle(bytes);
                return result;
            }
            Some(Err(e)) => return Err(e),
            // Decoded already (the array iterator's jobs) or not planned.
            Some(Ok(Output::Any(_))) | None => {}
        }
        self.read_archived(index, read)
    }

    /// [`NpzReader::read_index`] from the archive, whatever the plan.
    pub(super) fn read_archived<A>(
        &mut self,
        index: usize,
        read: impl FnOnce(&Header, &mut Source<'_>) -> Result<A>,
    ) -> Result<A> {
        let options = self.options;
        self.with_member(index, Plan::Whole(WHOLE_LIMIT), |member, size, trusted| {
            let (header, offset) = header::read_preamble(member, &options)?;
            let available = size.saturating_sub(offset as u64);
            let array = read(
                &header,
                &mut Source::Sized {
                    reader: &mut *member,
                    len: available,
                    trusted,
                },
            )?;
            // Decompress what follows the data (normally nothing), so that
            // the member reader reaches the member's end and checks its CRC.
            let trailing = io::copy(&mut member.take(DRAIN_LIMIT), &mut io::sink())?;
            // A pickle is read to the member's end, so only fixed-size data
            // can leave trailing bytes to account for.
            if trailing < DRAIN_LIMIT && !header.dtype.has_object() {
                let data_len = header.data_len()? as u64;
                check_size(offset as u64 + data_len + trailing, size)?;
            }
            Ok(array)
        })
    }

    /// Opens member `index` ([`NpzReader::open_member`]) and runs `f` on
    /// its reader, declared size and trust; errors are mapped to name the
    /// member.
    pub(super) fn with_member<A>(
        &mut self,
        index: usize,
        plan: Plan,
        f: impl FnOnce(&mut dyn SizedRead, u64, bool) -> Result<A>,
    ) -> Result<A> {
        let key = self.directory.entries[index].key().to_owned();
        let (mut member, size, trusted) = self.open_member(index, plan)?;
        f(&mut member, size, trusted).map_err(|e| in_member(&key, e))
    }
}

/// The array readers hold the array anyway: members up to this size are
/// inflated whole (for archives other writers made, the inflated bytes and
/// the array, twice the member, at the peak; ndnpy's own archives inflate
/// straight into the array).
pub(super) const WHOLE_LIMIT: u64 = 1 << 30;

/// The member reader inflates members with a piece table up to this size
/// whole, on every core ([`NpzReader::member_reader`]).
pub(super) const STREAM_WHOLE_LIMIT: u64 = 256 << 20;

/// The reader of one member's bytes over the archive's buffered input.
pub(super) type ArchiveMember<'a, R> = MemberReader<'a, Input<CheckedRead<R>>>;

/// A member that ends before its declared size is corrupt (the member
/// reader itself stops at that size).
pub(super) fn check_size(got: u64, declared: u64) -> Result<()> {
    if got < declared {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the archive declares {declared} bytes, but its data ends after {got}"),
        )
        .into());
    }
    Ok(())
}

impl<R: Read + Seek> std::fmt::Debug for NpzReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzReader")
            .field("members", &self.members)
            .finish_non_exhaustive()
    }
}
