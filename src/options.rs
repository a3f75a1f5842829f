//! [`WriteOptions`]: how a write to a path reaches the disk; and
//! [`PickleEncoding`], how Python 2 strings in pickles are read.

/// Options for writing to a path: [`crate::WriteNpy::write_npy_with`],
/// [`crate::NpzWriter::create_with`] and
/// [`crate::NpzWriter::create_compressed_with`].
///
/// The default is what [`crate::WriteNpy::write_npy`] does: the new file
/// replaces the old one atomically for every other process (it sees the
/// whole old file or the whole new one, never a mix), and an error, a panic
/// or a killed process leaves the old file as it was. It does not wait for
/// the disk: after a power loss or an operating system crash shortly after
/// the write, the path may hold the old file, the new one, or (on ext4 and
/// other file systems that allocate lazily) a file whose data reads as
/// zeros. `np.save` promises no more (less: it truncates the old file
/// first).
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
    /// The bytes themselves, as [`crate::pickle::PyValue::Bytes`]
    /// (`encoding='bytes'`).
    Bytes,
}
