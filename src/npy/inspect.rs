//! [`Header::open`]: the header of the `.npy` file at a path, without its
//! data (here, above `format`, because it opens files).

use crate::error::Result;
use crate::format::header::Header;
use crate::options::ReadOptions;
use std::io;
use std::path::Path;

impl Header {
    /// Reads the header of the `.npy` file at `path` without reading its data.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// use ndnpy::WriteNpy;
    ///
    /// ndarray::Array2::<i16>::zeros((3, 4)).write_npy(&path).unwrap();
    /// let header = ndnpy::dtype::Header::open(&path).unwrap();
    /// assert_eq!(header.shape, vec![3, 4]);
    /// assert_eq!(header.version, ndnpy::dtype::Version::V1);
    /// ```
    pub fn open<P: AsRef<Path>>(path: P) -> Result<Header> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// [`Header::open`] with explicit limits.
    ///
    /// ```
    /// use ndnpy::{dtype::Header, ReadOptions, WriteNpy};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    /// ndarray::array![1u8].write_npy(&path)?;
    /// let tiny = ReadOptions::default().max_header_len(16);
    /// assert!(matches!(Header::open_with(&path, &tiny), Err(ndnpy::Error::Limit(ndnpy::error::LimitError::HeaderTooLarge { .. }))));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn open_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Header> {
        let path = path.as_ref();
        let file = crate::error::open_file(path)?;
        Header::read_from_with(io::BufReader::with_capacity(4096, file), options)
            .map_err(|e| e.at_path(path))
    }
}
