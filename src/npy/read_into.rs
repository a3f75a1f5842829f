//! [`ReadNpyInto`]: `.npy` data into an array the caller already has.

use crate::array::element::LayoutElement;
use crate::error::Result;
use crate::format::header;
use crate::io::source::Source;
use crate::npy::read::read_path;
use crate::options::ReadOptions;
use ndarray::{ArrayRef, Dimension};
use std::io::Read;
use std::path::Path;

/// Reading `.npy` data into an array the caller already has, such as a
/// slice of a preallocated batch buffer: the one way to reuse an
/// allocation. Implemented for every mutable array (`&mut Array`,
/// `&mut ArrayViewMut`, a `slice_mut`: all reach [`ArrayRef`] by deref) of
/// a [`LayoutElement`](crate::types::LayoutElement) type.
///
/// The array's element type must hold the file's dtype and its shape must
/// be the file's ([`Error::ShapeMismatch`](crate::Error::ShapeMismatch)
/// otherwise). Byte order, record fields and memory order are converted (a
/// C-order file into a Fortran-order view and the reverse); nothing is
/// allocated in proportion to the data. NumPy has no equivalent (`np.load`
/// always allocates). On an error, the array holds valid elements, some of
/// them overwritten.
///
/// ```
/// use ndarray::{s, Array2, Array3};
/// use ndnpy::{npy::ReadNpyInto, WriteNpy};
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("a.npy");
///
/// Array2::from_shape_fn((2, 3), |(i, j)| (10 * i + j) as f32).write_npy(&path)?;
/// // Fill the second of four batch slots.
/// let mut batch = Array3::<f32>::zeros((4, 2, 3));
/// batch.slice_mut(s![1, .., ..]).fill_from_npy(&path)?;
/// assert_eq!(batch[[1, 1, 2]], 12.0);
/// assert_eq!(batch[[0, 1, 2]], 0.0);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub trait ReadNpyInto {
    /// Reads the `.npy` file at `path` into `self`.
    fn fill_from_npy<P: AsRef<Path>>(&mut self, path: P) -> Result<()> {
        self.fill_from_npy_with(path, &ReadOptions::default())
    }

    /// [`ReadNpyInto::fill_from_npy`] with explicit limits.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use ndnpy::{npy::ReadNpyInto, ReadOptions, WriteNpy};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npy");
    ///
    /// Array2::<u8>::ones((2, 2)).write_npy(&path)?;
    /// let mut out = Array2::<u8>::zeros((2, 2));
    /// out.fill_from_npy_with(&path, &ReadOptions::default().max_header_len(1 << 20))?;
    /// assert_eq!(out.sum(), 4);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    fn fill_from_npy_with<P: AsRef<Path>>(&mut self, path: P, options: &ReadOptions) -> Result<()>;

    /// Reads a `.npy` stream into `self`.
    ///
    /// ```
    /// use ndarray::{array, Array1};
    /// use ndnpy::{npy::ReadNpyInto, WriteNpy};
    ///
    /// let bytes = array![1i32, 2, 3].to_npy_bytes()?;
    /// let mut out = Array1::<i32>::zeros(3);
    /// out.fill_from_npy_reader(&bytes[..])?;
    /// assert_eq!(out, array![1, 2, 3]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    fn fill_from_npy_reader<R: Read>(&mut self, reader: R) -> Result<()> {
        self.fill_from_npy_reader_with(reader, &ReadOptions::default())
    }

    /// [`ReadNpyInto::fill_from_npy_reader`] with explicit limits (the
    /// stream limit included).
    ///
    /// ```
    /// use ndarray::Array1;
    /// use ndnpy::{npy::ReadNpyInto, ReadOptions, WriteNpy};
    ///
    /// let bytes = Array1::<u16>::ones(100).to_npy_bytes()?;
    /// let mut out = Array1::<u16>::zeros(100);
    /// let small = ReadOptions::default().max_stream_len(64);
    /// assert!(out.fill_from_npy_reader_with(&bytes[..], &small).is_err());
    /// out.fill_from_npy_reader_with(&bytes[..], &ReadOptions::default())?;
    /// assert_eq!(out.sum(), 100);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    fn fill_from_npy_reader_with<R: Read>(
        &mut self,
        reader: R,
        options: &ReadOptions,
    ) -> Result<()>;

    /// Reads `.npy` data held in memory into `self`.
    ///
    /// ```
    /// use ndarray::{array, Array2, ShapeBuilder};
    /// use ndnpy::{npy::ReadNpyInto, WriteNpy};
    ///
    /// let bytes = array![[1.0f32, 2.0], [3.0, 4.0]].to_npy_bytes()?;
    /// let mut out = Array2::<f32>::zeros((2, 2).f()); // any layout
    /// out.fill_from_npy_bytes(&bytes)?;
    /// assert_eq!(out, array![[1.0, 2.0], [3.0, 4.0]]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    fn fill_from_npy_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        self.fill_from_npy_bytes_with(bytes, &ReadOptions::default())
    }

    /// [`ReadNpyInto::fill_from_npy_bytes`] with explicit limits.
    ///
    /// ```
    /// use ndarray::Array1;
    /// use ndnpy::{npy::ReadNpyInto, ReadOptions, WriteNpy};
    ///
    /// let bytes = Array1::<i8>::from_elem(4, -1).to_npy_bytes()?;
    /// let mut out = Array1::<i8>::zeros(4);
    /// out.fill_from_npy_bytes_with(&bytes, &ReadOptions::default())?;
    /// assert_eq!(out.sum(), -4);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    fn fill_from_npy_bytes_with(&mut self, bytes: &[u8], options: &ReadOptions) -> Result<()>;
}

impl<T: LayoutElement, D: Dimension> ReadNpyInto for ArrayRef<T, D> {
    fn fill_from_npy_with<P: AsRef<Path>>(&mut self, path: P, options: &ReadOptions) -> Result<()> {
        read_path(path.as_ref(), options, |header, source| {
            crate::array::decode::read_into(header, source, &mut self.view_mut())
        })
    }

    fn fill_from_npy_reader_with<R: Read>(
        &mut self,
        reader: R,
        options: &ReadOptions,
    ) -> Result<()> {
        let mut reader = crate::io::checked::CheckedRead(reader);
        let (header, _) = header::read_preamble(&mut reader, options)?;
        crate::array::decode::read_into(
            &header,
            &mut Source::stream_with(&mut reader, options),
            &mut self.view_mut(),
        )
    }

    fn fill_from_npy_bytes_with(&mut self, bytes: &[u8], options: &ReadOptions) -> Result<()> {
        let (header, offset) = header::parse_slice(bytes, options)?;
        crate::array::decode::read_into(
            &header,
            &mut Source::slice(&bytes[offset..]),
            &mut self.view_mut(),
        )
    }
}
