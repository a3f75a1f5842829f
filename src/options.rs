//! [`WriteOptions`]: how a write to a path reaches the disk; and
//! [`PickleEncoding`], how Python 2 strings in pickles are read.

/// Options for writing to a path: [`crate::WriteNpy::write_npy_with`],
/// [`crate::NpzWriter::create_with`] (any codec).
///
/// The default is what [`crate::WriteNpy::write_npy`] does: the new file
/// replaces the old one atomically for every other process (it sees the
/// whole old file or the whole new one, never a mix), and an error, a panic
/// or a killed process leaves the old file as it was. It does not wait for
/// the disk: after a power loss or an operating system crash shortly after
/// the write, the path may hold the old file, the new one, or (on ext4 and
/// other file systems that allocate lazily) a file whose data reads as
/// zeros. `np.save` promises no more (less: it truncates the old file
/// first). It leaves exactly the target behind, whether it succeeds or
/// fails: no temporary file, no hidden copy of an earlier version (so that
/// deleting the file frees its space and deletes its data); it fails with
/// [`crate::error::RowsError::Locked`], leaving the file as it was, when an appender
/// ([`crate::NpyFile::open_append`]) holds the file.
///
/// [`WriteOptions::durable`] adds that promise: the call returns only once
/// the new file's data and its name are on the disk.
///
/// ```
/// use ndnpy::{WriteNpy, WriteOptions};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("weights.npy");
/// let weights = ndarray::Array2::<f32>::zeros((64, 64));
/// weights.write_npy_with(&path, &WriteOptions::default().durable(true))?;
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    durable: bool,
    spare: bool,
}

impl WriteOptions {
    /// Whether the write waits until the data is on the disk (default
    /// `false`).
    ///
    /// When `true`, the new file is flushed to the disk (`fsync`) before it
    /// takes the target's name, and the folder is flushed after, so that
    /// once the call returns, a power loss leaves the new file in place.
    /// Files written in place (devices, FIFOs, hard-linked files: see
    /// [`crate::WriteNpy::write_npy`]) are flushed with `fsync` where the
    /// kind of file supports it. The cost is the time the disk takes to
    /// store the data: for 256 MiB on the benchmark machine, a median of
    /// ~0.26 s per overwrite against ~0.1–0.2 s without (BENCHMARKS.md,
    /// "Steady overwrite").
    ///
    /// ```
    /// let options = ndnpy::WriteOptions::default().durable(true);
    /// assert!(options.is_durable());
    /// ```
    pub fn durable(mut self, durable: bool) -> Self {
        self.durable = durable;
        self
    }

    /// Whether [`WriteOptions::durable`] is set.
    ///
    /// ```
    /// assert!(!ndnpy::WriteOptions::default().is_durable());
    /// ```
    pub fn is_durable(&self) -> bool {
        self.durable
    }

    /// Whether an overwrite keeps the version it replaces as a hidden spare,
    /// and writes the next version over it (default `false`: a write leaves
    /// exactly its target, and removes a spare an earlier write kept).
    ///
    /// On Linux, when a regular file of 16 MiB or more is replaced by a
    /// version of 16 MiB or more, the old version is kept beside it under
    /// a hidden name, `.<name>.ndnpy-spare`; the next such write goes over
    /// the spare's pages and disk blocks (already in memory and allocated,
    /// as `np.save` reuses the file it truncates) and then swaps it with
    /// the target in one atomic rename, so that the spare is again the
    /// version just replaced. Where fresh memory is expensive (some
    /// virtual machines: BENCHMARKS.md, "Overwrites over the spare") this
    /// saves most of an overwrite's cost.
    ///
    /// The costs, which is why it is off by default:
    /// - **A hidden file as large as the target**, holding the previous
    ///   version, kept until the next write to the path (which writes over
    ///   it, or removes it when it does not keep spares) or until you
    ///   remove it. Deleting or moving the target does not delete it: the
    ///   space is not freed and the old data stays readable on the disk
    ///   (with the mode it had as the target) until then.
    /// - **A flush per write over the spare**: its data is flushed to the
    ///   disk (`fdatasync`) before the swap, even when the write is not
    ///   [`durable`](WriteOptions::durable). The spare's blocks are
    ///   overwritten in place, and without the flush a power cut after the
    ///   swap could leave the target naming a mix of two versions (ext4
    ///   does not order such overwrites before a rename); with it, a crash
    ///   leaves the old version or the new one. The flush takes the time
    ///   the disk needs to store the file.
    ///
    /// And its rules: a spare that some process still has open or mapped is
    /// never written over (the kernel is asked: a write lease), nor one of
    /// another owner; while it is written over, it holds part of an old
    /// version, and its permission bits are then those both the old and the
    /// target's have (never wider than either); it takes the target's
    /// mode and owner only once it holds nothing but the new version; a
    /// write over it that fails removes it (a killed one cannot: the next
    /// write to the path writes over it or removes it). See
    /// [`crate::WriteNpy::write_npy`] and the crate docs, "Files on disk".
    ///
    /// ```
    /// let options = ndnpy::WriteOptions::default().spare(true);
    /// assert!(options.keeps_spare());
    /// assert!(!ndnpy::WriteOptions::default().keeps_spare());
    /// ```
    pub fn spare(mut self, spare: bool) -> Self {
        self.spare = spare;
        self
    }

    /// Whether [`WriteOptions::spare`] is on (default `false`).
    pub fn keeps_spare(&self) -> bool {
        self.spare
    }
}

/// How the pickle reader turns Python 2 `str` values (the `STRING`,
/// `BINSTRING` and `SHORT_BINSTRING` opcodes, bytes without an encoding)
/// into values: `np.load`'s `encoding` argument. Set with
/// [`crate::ReadOptions::pickle_encoding`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PickleEncoding {
    /// ASCII text, an error for any other byte (`encoding='ASCII'`,
    /// NumPy's default).
    #[default]
    Ascii,
    /// Latin-1 text: every byte is the code point of the same number
    /// (`encoding='latin1'`, what NumPy advises for Python 2 files; text
    /// that was UTF-8 comes out as mojibake, as in NumPy).
    Latin1,
    /// The bytes themselves, as [`crate::array::pyvalue::PyValue::Bytes`]
    /// (`encoding='bytes'`).
    Bytes,
}

/// Default limit on the header length, as in NumPy (`max_header_size=10000`).
pub const DEFAULT_MAX_HEADER_LEN: usize = 10_000;

/// Default of [`ReadOptions::max_stream_len`]: 64 GiB, more than any
/// array one would pipe between processes, far less than the 10¹⁵ bytes a
/// hostile header may claim.
pub const DEFAULT_MAX_STREAM_LEN: u64 = 64 << 30;

/// Default of [`ReadOptions::max_zero_size_elements`]: 2²⁰ (1 048 576)
/// values that occupy no bytes of the data, about 24 MiB as `String`s.
pub const DEFAULT_MAX_ZERO_SIZE_ELEMENTS: u64 = 1 << 20;

/// Options for reading untrusted files.
///
/// ```
/// use ndnpy::ReadOptions;
///
/// let options = ReadOptions::default().max_header_len(1 << 20);
/// assert_eq!(options.get_max_header_len(), 1 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    max_header_len: usize,
    max_stream_len: u64,
    max_zero_size_elements: u64,
    beyond_numpy_limits: bool,
    allow_objects: bool,
    pickle_encoding: PickleEncoding,
    opaque_objects: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_header_len: DEFAULT_MAX_HEADER_LEN,
            max_stream_len: DEFAULT_MAX_STREAM_LEN,
            max_zero_size_elements: DEFAULT_MAX_ZERO_SIZE_ELEMENTS,
            beyond_numpy_limits: false,
            allow_objects: true,
            pickle_encoding: PickleEncoding::Ascii,
            opaque_objects: false,
        }
    }
}

impl ReadOptions {
    /// Sets the longest header text accepted, in bytes. Headers of large
    /// record dtypes can exceed the default of 10 000 bytes (as in NumPy,
    /// whose `np.load` takes `max_header_size`).
    pub fn max_header_len(mut self, len: usize) -> Self {
        self.max_header_len = len;
        self
    }

    /// The longest header text accepted, in bytes.
    pub fn get_max_header_len(&self) -> usize {
        self.max_header_len
    }

    /// Sets the most data bytes read from a stream of unknown length (a
    /// pipe, a socket, any `Read` given to `read_npy_from`): a header that
    /// declares more gives [`crate::error::LimitError::StreamLimit`](crate::Error::Limit(ndnpy::error::LimitError::StreamLimit)) before anything is read,
    /// so a FIFO fed endless data ends with an error instead of growing
    /// memory until allocation fails. Files, byte slices and archive
    /// members have a known length and are not affected. Default
    /// [`DEFAULT_MAX_STREAM_LEN`] (64 GiB; lower it where memory is smaller
    /// and the stream is not trusted).
    ///
    /// ```
    /// use ndarray::Array1;
    /// use ndnpy::{Error, ReadNpy, ReadOptions, WriteNpy};
    ///
    /// let bytes = Array1::<f64>::zeros(1000).to_npy_bytes()?;
    /// let small = ReadOptions::default().max_stream_len(4096);
    /// let err = Array1::<f64>::read_npy_from_with(&bytes[..], &small).unwrap_err();
    /// assert!(matches!(err, Error::Limit(ndnpy::error::LimitError::StreamLimit { claimed: 8000, max: 4096 })));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn max_stream_len(mut self, len: u64) -> Self {
        self.max_stream_len = len;
        self
    }

    /// The most data bytes read from a stream of unknown length.
    pub fn get_max_stream_len(&self) -> u64 {
        self.max_stream_len
    }

    /// Sets the most values a header may declare that occupy no bytes of
    /// the data: elements of an item size of 0 (`|S0`, `<U0`, `|V0`,
    /// records without fields, sub-arrays such as `('<f8', (0,))`), and
    /// each zero-size field or sub-array item inside an element (a record
    /// with a `|S0` field, `('|S0', (1000,))`). A header that declares
    /// more gives [`crate::error::LimitError::ZeroSizeLimit`](crate::Error::Limit(ndnpy::error::LimitError::ZeroSizeLimit)) as
    /// it is parsed, whatever reads it: arrays, views, streams, archive
    /// members.
    ///
    /// Every other value is paid for by the bytes that hold it, so memory
    /// and time follow the size of the input; these cost a `String`, a
    /// `Vec`, an offset or a turn of a loop each although the file holds
    /// nothing for them: a 128-byte file may declare 2⁶¹ empty strings.
    /// NumPy loads such files at no cost (its arrays of zero-size items
    /// hold no memory), so this limit is where ndnpy differs from
    /// `np.load`: files of more than [`DEFAULT_MAX_ZERO_SIZE_ELEMENTS`]
    /// (2²⁰) such values are refused unless the limit is raised.
    ///
    /// The limit is per header: each member of an archive is held to it as
    /// it is read. [`crate::NpzReader`] carries no budget across members,
    /// [`crate::NpzReader::arrays`] included: it hands the members over
    /// one at a time and the caller decides which it keeps together, so a
    /// budget across the archive would refuse archives read member by
    /// member whose values are never held at once. A caller that keeps
    /// every member sums [`crate::dtype::Header::zero_size_count`] over their
    /// headers ([`crate::NpzReader::header`] reads a header and nothing
    /// more) and holds the total to this limit, as `ndnpy-parquet`'s
    /// conversions of an archive to a frame or a record batch do.
    ///
    /// ```
    /// use ndarray::Array1;
    /// use ndnpy::{Error, ReadNpy, ReadOptions};
    ///
    /// // Headers written by hand: `n` empty strings, no data.
    /// let npy = |n: u64| {
    ///     let text = format!("{{'descr': '|S0', 'fortran_order': False, 'shape': ({n},), }}");
    ///     let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    ///     npy.extend_from_slice(&(text.len() as u16 + 1).to_le_bytes());
    ///     npy.extend_from_slice(text.as_bytes());
    ///     npy.push(b'\n');
    ///     npy
    /// };
    /// let err = Array1::<Vec<u8>>::from_npy_bytes(&npy((1 << 61) - 1)).unwrap_err();
    /// assert!(matches!(err, Error::Limit(ndnpy::error::LimitError::ZeroSizeLimit { claimed: 2305843009213693951, .. })));
    ///
    /// let small = ReadOptions::default().max_zero_size_elements(1000);
    /// let empty = Array1::<Vec<u8>>::from_npy_bytes_with(&npy(1000), &small)?;
    /// assert_eq!(empty.len(), 1000);
    /// assert!(Array1::<Vec<u8>>::from_npy_bytes_with(&npy(1001), &small).is_err());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn max_zero_size_elements(mut self, count: u64) -> Self {
        self.max_zero_size_elements = count;
        self
    }

    /// The most values a header may declare that occupy no bytes of the
    /// data (see [`ReadOptions::max_zero_size_elements`]).
    pub fn get_max_zero_size_elements(&self) -> u64 {
        self.max_zero_size_elements
    }

    /// Accepts headers beyond NumPy's limits, which `np.load` refuses: more
    /// than 64 dimensions, or a shape whose size in bytes, ignoring zero
    /// dimensions, exceeds `isize::MAX` (such as `(0, 2**62)` of `f8`: an
    /// empty array NumPy cannot create). Off by default, so that what reads
    /// here also reads in NumPy; the writers always keep to these limits.
    ///
    /// ```
    /// use ndnpy::{AnyArray, Error, ReadOptions};
    ///
    /// // A header written by hand: shape (0, 2**62) of f8.
    /// let text = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': (0, {}), }}", 1u64 << 62);
    /// let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    /// npy.extend_from_slice(&(text.len() as u16 + 1).to_le_bytes());
    /// npy.extend_from_slice(text.as_bytes());
    /// npy.push(b'\n');
    ///
    /// assert!(matches!(AnyArray::from_npy_bytes(&npy), Err(Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. }))));
    /// let relaxed = ReadOptions::default().allow_beyond_numpy_limits(true);
    /// let empty = AnyArray::from_npy_bytes_with(&npy, &relaxed)?;
    /// assert_eq!(empty.shape(), &[0, 1 << 62]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn allow_beyond_numpy_limits(mut self, allow: bool) -> Self {
        self.beyond_numpy_limits = allow;
        self
    }

    /// Whether headers beyond NumPy's limits are accepted.
    pub fn get_allow_beyond_numpy_limits(&self) -> bool {
        self.beyond_numpy_limits
    }

    /// Whether object arrays (`|O`, and records with an `O` field) are read.
    ///
    /// The default is `true`. Unlike NumPy's `allow_pickle`, reading an
    /// object array here cannot run code: [`crate::pickle`] is a closed
    /// stack machine that builds plain values and never imports or calls
    /// anything, and its memory and depth are bounded by the input's size.
    /// Refusing objects is for services that want no pickle parsing at all
    /// (a smaller attack surface, or a policy that object data is never
    /// accepted): such files then fail with [`crate::error::LimitError::ObjectsRefused`]
    /// before any pickle byte is read.
    ///
    /// ```
    /// use ndnpy::{AnyArray, Error, pickle::PyValue, ReadOptions, WriteNpy};
    ///
    /// // A 0-d object array holding None, as `np.save` writes it.
    /// let bytes = ndarray::arr0(PyValue::None).to_npy_bytes()?;
    /// assert!(AnyArray::from_npy_bytes(&bytes).is_ok());
    /// let strict = ReadOptions::default().allow_objects(false);
    /// assert!(matches!(
    ///     AnyArray::from_npy_bytes_with(&bytes, &strict),
    ///     Err(Error::Limit(ndnpy::error::LimitError::ObjectsRefused))
    /// ));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn allow_objects(mut self, allow: bool) -> Self {
        self.allow_objects = allow;
        self
    }

    /// Whether object arrays are read (see [`ReadOptions::allow_objects`]).
    pub fn get_allow_objects(&self) -> bool {
        self.allow_objects
    }

    /// How Python 2 `str` values in a pickle are read, as `np.load`'s
    /// `encoding`: [`crate::pickle::PickleEncoding::Ascii`] by default (NumPy's default,
    /// an error for non-ASCII bytes), `Latin1` (what NumPy advises for
    /// Python 2 files, and what the `ndnpy` command uses) or `Bytes`.
    /// Only values are affected: dtype codes and other names a pickle
    /// spells as Python 2 strings are read whatever the choice.
    ///
    /// ```
    /// use ndnpy::pickle::{loads_with, PyValue};
    /// use ndnpy::{pickle::PickleEncoding, ReadOptions};
    ///
    /// // A Python 2 pickle of the str '\xe9' (SHORT_BINSTRING).
    /// let p = b"\x80\x02U\x01\xe9q\x00.";
    /// assert!(loads_with(p, &ReadOptions::default()).is_err());
    /// let latin1 = ReadOptions::default().pickle_encoding(PickleEncoding::Latin1);
    /// assert_eq!(loads_with(p, &latin1)?, PyValue::Str("é".into()));
    /// let bytes = ReadOptions::default().pickle_encoding(PickleEncoding::Bytes);
    /// assert_eq!(loads_with(p, &bytes)?, PyValue::Bytes(vec![0xe9]));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn pickle_encoding(mut self, encoding: PickleEncoding) -> Self {
        self.pickle_encoding = encoding;
        self
    }

    /// How Python 2 `str` values are read (see
    /// [`ReadOptions::pickle_encoding`]).
    pub fn get_pickle_encoding(&self) -> PickleEncoding {
        self.pickle_encoding
    }

    /// Reads objects of classes outside the pickle reader's closed list as
    /// inert data ([`crate::array::pyvalue::PyValue::Opaque`]: the class's name,
    /// the arguments and the state the pickle gives), instead of refusing
    /// them (the default). Nothing is imported or called either way; an
    /// opaque object costs memory in proportion to its pickle, like any
    /// other value, and is written back as an equivalent pickle.
    pub fn opaque_objects(mut self, opaque: bool) -> Self {
        self.opaque_objects = opaque;
        self
    }

    /// Whether objects of other classes are read as inert data (see
    /// [`ReadOptions::opaque_objects`]).
    pub fn get_opaque_objects(&self) -> bool {
        self.opaque_objects
    }
}

/// Where consecutive elements of the data lie: NumPy's `order='C'` (the last
/// axis varies fastest, `fortran_order: False`) or `order='F'` (the first
/// axis varies fastest, `fortran_order: True`).
///
/// ```
/// use ndnpy::Order;
/// assert!(Order::Fortran.is_fortran());
/// assert_eq!(Order::from_fortran(false), Order::C);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Row-major: the last axis varies fastest.
    #[default]
    C,
    /// Column-major: the first axis varies fastest.
    Fortran,
}

impl Order {
    /// The order a header's `fortran_order` flag names.
    pub fn from_fortran(fortran_order: bool) -> Self {
        if fortran_order {
            Order::Fortran
        } else {
            Order::C
        }
    }

    /// The header's `fortran_order` flag for this order.
    pub fn is_fortran(self) -> bool {
        self == Order::Fortran
    }
}
