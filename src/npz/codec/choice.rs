//! [`Codec`]: how [`crate::NpzWriter`] compresses members.

/// How [`crate::NpzWriter`] writes members: the one choice of
/// compression, with its level ([`crate::NpzWriter::codec`]). Members are
/// stored unless a codec is chosen.
///
/// - [`Codec::Stored`] is what `np.savez` writes.
/// - [`Codec::Deflate`] is what `np.savez_compressed` writes: every NumPy
///   on every Python loads it.
/// - `Codec::Zstd` (cargo feature `zstd`) writes Zstandard members (zip
///   method 93), compressed and decompressed on every core: on the
///   compression suite of BENCHMARKS.md, written 15× faster than
///   `np.savez_compressed` at 1.1× its size, and read 1.2× faster than
///   ndnpy's deflate (twice as fast on noisy floats, slower on very
///   repetitive data, where deflate's long matches copy faster). NumPy
///   loads them only
///   through a `zipfile` that reads Zstandard: Python 3.14's own
///   (`zipfile.ZIP_ZSTANDARD`), or, for older Pythons, the one of the
///   `backports.zstd` package put in its place before NumPy is imported
///   (`import sys, backports.zstd.zipfile; sys.modules["zipfile"] =
///   backports.zstd.zipfile`). Choose it when you control both ends.
///
/// ```
/// use ndnpy::{npz::Codec, npz::Compression, NpzReader, NpzWriter};
/// use std::io::Cursor;
///
/// let mut npz = NpzWriter::new(Cursor::new(Vec::new())).codec(Codec::Deflate { level: 9 });
/// npz.add("x", &ndarray::Array1::<f64>::zeros(1000))?;
/// let mut back = NpzReader::new(npz.finish_into_inner()?)?;
/// assert_eq!(back.member_info("x")?.compression, Compression::Deflated);
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Codec {
    /// No compression (`np.savez`): what [`NpzWriter::create`](crate::NpzWriter::create)
    /// and [`NpzWriter::new`](crate::NpzWriter::new) write unless told otherwise.
    Stored,
    /// Deflate at `level`, from 1 (fastest) to 9 (smallest); the default,
    /// 7, gives archives no larger than `np.savez_compressed`'s.
    Deflate {
        /// The compression level (values beyond 1 to 9 are clamped).
        level: u32,
    },
    /// Zstandard at `level`, from 1 (fastest) to 22 (smallest); the
    /// default, 3, gives the compression suite at 1.1× the size of
    /// `np.savez_compressed`'s, 15× faster (level 6: the same size, 7×
    /// faster; BENCHMARKS.md, "Zstandard, and the other zip methods").
    ///
    /// ```
    /// use ndnpy::{npz::Codec, npz::Compression, NpzReader, NpzWriter};
    /// use std::io::Cursor;
    ///
    /// let a = ndarray::Array1::from_shape_fn(100_000, |i| (i % 1000) as f32);
    /// let mut npz = NpzWriter::new(Cursor::new(Vec::new())).codec(Codec::zstd());
    /// npz.add("a", &a)?;
    /// let mut back = NpzReader::new(npz.finish_into_inner()?)?;
    /// assert_eq!(back.member_info("a")?.compression, Compression::Zstd);
    /// assert_eq!(back.read::<f32, ndarray::Ix1>("a")?, a);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    #[cfg(feature = "zstd")]
    Zstd {
        /// The compression level (values beyond 1 to 22 are clamped).
        level: i32,
    },
}

impl Codec {
    /// Deflate at its default level (7).
    ///
    /// ```
    /// assert_eq!(ndnpy::npz::Codec::deflate(), ndnpy::npz::Codec::Deflate { level: 7 });
    /// ```
    pub fn deflate() -> Self {
        Codec::Deflate {
            level: crate::npz::codec::deflate::compress::DEFAULT_LEVEL,
        }
    }

    /// Zstandard at its default level (3).
    ///
    /// ```
    /// assert_eq!(ndnpy::npz::Codec::zstd(), ndnpy::npz::Codec::Zstd { level: 3 });
    /// ```
    #[cfg(feature = "zstd")]
    pub fn zstd() -> Self {
        Codec::Zstd {
            level: super::zstd::write::DEFAULT_LEVEL,
        }
    }

    /// The codec with its level inside its range.
    pub(crate) fn clamped(self) -> Self {
        match self {
            Codec::Deflate { level } => Codec::Deflate {
                level: level.clamp(1, 9),
            },
            Codec::Stored => Codec::Stored,
            #[cfg(feature = "zstd")]
            Codec::Zstd { level } => {
                let levels = super::zstd::write::LEVELS;
                Codec::Zstd {
                    level: level.clamp(*levels.start(), *levels.end()),
                }
            }
        }
    }
}

impl Default for Codec {
    /// [`Codec::Stored`], as `np.savez` writes.
    fn default() -> Self {
        Codec::Stored
    }
}
