//! [`ReadNpy`]: `.npy` data into owned arrays.

use crate::array::any::AnyArray;
use crate::array::element::{Element, LayoutElement};
use crate::error::{Error, Result};
use crate::format::header::{self, Header};
use crate::io::source::Source;
use crate::options::ReadOptions;
use ndarray::{ArcArray, Array, ArrayRef, Dimension};
use std::io::Read;
use std::path::Path;

/// Reading `.npy` data into an owned array.
///
/// Implemented for [`ndarray::Array`] of every [`Element`] type and every
/// dimension type (`Ix0`…`Ix6`, `IxDyn`), and for [`ArcArray`], for arrays
/// shared between threads or owners (the read array is moved into the
/// shared one, not copied). Fortran-order files become
/// Fortran-layout arrays without a transposing copy, big-endian data is
/// swapped to native order, and bytes after the data are ignored.
///
/// ```
/// use ndarray::{array, Array2};
/// use ndnpy::{ReadNpy, WriteNpy};
///
/// let a = array![[1i32, 2, 3], [4, 5, 6]];
/// let bytes = a.to_npy_bytes()?;
/// let b = Array2::<i32>::from_npy_bytes(&bytes)?;
/// assert_eq!(a, b);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub trait ReadNpy: Sized {
    /// Reads the `.npy` file at `path`.
    fn read_npy<P: AsRef<Path>>(path: P) -> Result<Self> {
        Self::read_npy_with(path, &ReadOptions::default())
    }

    /// Reads a `.npy` stream from `reader`, leaving it after the data.
    ///
    /// The stream's length is not known in advance, so memory grows in
    /// bounded steps as data arrives rather than to the size the header
    /// claims.
    fn read_npy_from<R: Read>(reader: R) -> Result<Self> {
        Self::read_npy_from_with(reader, &ReadOptions::default())
    }

    /// Reads `.npy` data held in memory.
    fn from_npy_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_npy_bytes_with(bytes, &ReadOptions::default())
    }

    /// [`ReadNpy::read_npy`] with explicit limits.
    fn read_npy_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self>;

    /// [`ReadNpy::read_npy_from`] with explicit limits.
    fn read_npy_from_with<R: Read>(reader: R, options: &ReadOptions) -> Result<Self>;

    /// [`ReadNpy::from_npy_bytes`] with explicit limits.
    fn from_npy_bytes_with(bytes: &[u8], options: &ReadOptions) -> Result<Self>;
}

impl<T: Element, D: Dimension> ReadNpy for Array<T, D> {
    fn read_npy_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        read_path(path.as_ref(), options, |header, source| {
            read_array_with(header, source, options)
        })
    }

    fn read_npy_from_with<R: Read>(reader: R, options: &ReadOptions) -> Result<Self> {
        let mut reader = crate::io::checked::CheckedRead(reader);
        let (header, _) = header::read_preamble(&mut reader, options)?;
        read_array_with(
            &header,
            &mut Source::stream_with(&mut reader, options),
            options,
        )
    }

    fn from_npy_bytes_with(bytes: &[u8], options: &ReadOptions) -> Result<Self> {
        let (header, offset) = header::parse_slice(bytes, options)?;
        read_array_with(&header, &mut Source::slice(&bytes[offset..]), options)
    }
}

impl<T: Element, D: Dimension> ReadNpy for ArcArray<T, D> {
    /// Reads an owned array and shares it (no copy).
    ///
    /// ```
    /// use ndarray::{ArcArray2, Array2};
    /// use ndnpy::{ReadNpy, WriteNpy};
    ///
    /// let bytes = Array2::<f32>::eye(3).to_npy_bytes()?;
    /// let shared = ArcArray2::<f32>::from_npy_bytes(&bytes)?;
    /// let other_owner = shared.clone(); // shares the elements
    /// assert_eq!(other_owner[[2, 2]], 1.0);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    fn read_npy_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        Array::<T, D>::read_npy_with(path, options).map(Array::into_shared)
    }

    fn read_npy_from_with<R: Read>(reader: R, options: &ReadOptions) -> Result<Self> {
        Array::<T, D>::read_npy_from_with(reader, options).map(Array::into_shared)
    }

    fn from_npy_bytes_with(bytes: &[u8], options: &ReadOptions) -> Result<Self> {
        Array::<T, D>::from_npy_bytes_with(bytes, options).map(Array::into_shared)
    }
}

/// `crate::array::decode::read_array` under `options`, which decide whether a pickled (`|O`)
/// file may be parsed for the element types an object array can hold.
pub(crate) fn read_array_with<T: Element, D: Dimension>(
    header: &Header,
    source: &mut Source<'_>,
    options: &ReadOptions,
) -> Result<Array<T, D>> {
    if let (true, Some(convert)) = (header.dtype.has_object(), T::from_objects()) {
        let array = match crate::pickle::read_object_data(header, source, options)? {
            AnyArray::Object(objects) => convert(objects)?,
            // NumPy 2's StringDType: strings, and `None` where an element
            // is missing (whatever the dtype's `na_object`).
            AnyArray::StringDType(s) => convert(crate::array::stringdtype::as_objects(s))?,
            // A record with an object field: not a `T` array.
            other => {
                return Err(Error::DTypeMismatch {
                    expected: format!(
                        "an object array for {}",
                        crate::array::element::type_name::<T>()
                    ),
                    found: other.dtype().descr(),
                })
            }
        };
        let found = array.ndim();
        return array
            .into_dimensionality::<D>()
            .map_err(|_| Error::NdimMismatch {
                expected: D::NDIM.unwrap_or(found),
                found,
                shape: header.shape.clone(),
            });
    }
    crate::array::decode::read_array(header, source)
}

/// Reads the `.npy` file at `path` into an array the caller already has,
/// such as a slice of a preallocated batch buffer: its element type must
/// hold the file's dtype and its shape must be the file's
/// ([`Error::ShapeMismatch`] otherwise). Byte order, record fields and
/// memory order are converted (a C-order file into a Fortran-order view and
/// the reverse); nothing is allocated in proportion to the data. NumPy has
/// no equivalent (`np.load` always allocates). `out` is any mutable array
/// (`&mut Array`, `&mut ArrayViewMut`: both reach `&mut ArrayRef` by
/// deref).
///
/// On an error, `out` holds valid elements, some of them overwritten.
///
/// ```
/// use ndarray::{s, Array2, Array3};
/// use ndnpy::{npy::read_npy_into, WriteNpy};
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("a.npy");
///
/// Array2::from_shape_fn((2, 3), |(i, j)| (10 * i + j) as f32).write_npy(&path)?;
/// // Fill the second of four batch slots.
/// let mut batch = Array3::<f32>::zeros((4, 2, 3));
/// read_npy_into(&path, &mut batch.slice_mut(s![1, .., ..]))?;
/// assert_eq!(batch[[1, 1, 2]], 12.0);
/// assert_eq!(batch[[0, 1, 2]], 0.0);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn read_npy_into<T: LayoutElement, D: Dimension, P: AsRef<Path>>(
    path: P,
    out: &mut ArrayRef<T, D>,
) -> Result<()> {
    read_npy_into_with(path, out, &ReadOptions::default())
}

/// [`read_npy_into`] with explicit limits.
///
/// ```
/// use ndarray::Array2;
/// use ndnpy::{npy::read_npy_into_with, ReadOptions, WriteNpy};
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("a.npy");
///
/// Array2::<u8>::ones((2, 2)).write_npy(&path)?;
/// let mut out = Array2::<u8>::zeros((2, 2));
/// read_npy_into_with(&path, &mut out, &ReadOptions::default().max_header_len(1 << 20))?;
/// assert_eq!(out.sum(), 4);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn read_npy_into_with<T: LayoutElement, D: Dimension, P: AsRef<Path>>(
    path: P,
    out: &mut ArrayRef<T, D>,
    options: &ReadOptions,
) -> Result<()> {
    read_path(path.as_ref(), options, |header, source| {
        crate::array::decode::read_into(header, source, &mut out.view_mut())
    })
}

/// [`read_npy_into`] from a `.npy` stream.
///
/// ```
/// use ndarray::{array, Array1};
/// use ndnpy::{npy::read_npy_into_from, WriteNpy};
///
/// let bytes = array![1i32, 2, 3].to_npy_bytes()?;
/// let mut out = Array1::<i32>::zeros(3);
/// read_npy_into_from(&bytes[..], &mut out)?;
/// assert_eq!(out, array![1, 2, 3]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn read_npy_into_from<T: LayoutElement, D: Dimension, R: Read>(
    reader: R,
    out: &mut ArrayRef<T, D>,
) -> Result<()> {
    read_npy_into_from_with(reader, out, &ReadOptions::default())
}

/// [`read_npy_into_from`] with explicit limits (the stream limit
/// included).
///
/// ```
/// use ndarray::Array1;
/// use ndnpy::{npy::read_npy_into_from_with, ReadOptions, WriteNpy};
///
/// let bytes = Array1::<u16>::ones(100).to_npy_bytes()?;
/// let mut out = Array1::<u16>::zeros(100);
/// let small = ReadOptions::default().max_stream_len(64);
/// assert!(read_npy_into_from_with(&bytes[..], &mut out, &small).is_err());
/// read_npy_into_from_with(&bytes[..], &mut out, &ReadOptions::default())?;
/// assert_eq!(out.sum(), 100);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn read_npy_into_from_with<T: LayoutElement, D: Dimension, R: Read>(
    reader: R,
    out: &mut ArrayRef<T, D>,
    options: &ReadOptions,
) -> Result<()> {
    let mut reader = crate::io::checked::CheckedRead(reader);
    let (header, _) = header::read_preamble(&mut reader, options)?;
    crate::array::decode::read_into(
        &header,
        &mut Source::stream_with(&mut reader, options),
        &mut out.view_mut(),
    )
}

/// [`read_npy_into`] from `.npy` data held in memory.
///
/// ```
/// use ndarray::{array, Array2};
/// use ndnpy::{npy::from_npy_bytes_into, WriteNpy};
///
/// let bytes = array![[1.0f32, 2.0], [3.0, 4.0]].to_npy_bytes()?;
/// let mut out = Array2::<f32>::zeros((2, 2).f()); // any layout
/// from_npy_bytes_into(&bytes, &mut out)?;
/// assert_eq!(out, array![[1.0, 2.0], [3.0, 4.0]]);
/// # use ndarray::ShapeBuilder;
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn from_npy_bytes_into<T: LayoutElement, D: Dimension>(
    bytes: &[u8],
    out: &mut ArrayRef<T, D>,
) -> Result<()> {
    from_npy_bytes_into_with(bytes, out, &ReadOptions::default())
}

/// [`from_npy_bytes_into`] with explicit limits.
///
/// ```
/// use ndarray::Array1;
/// use ndnpy::{npy::from_npy_bytes_into_with, ReadOptions, WriteNpy};
///
/// let bytes = Array1::<i8>::from_elem(4, -1).to_npy_bytes()?;
/// let mut out = Array1::<i8>::zeros(4);
/// from_npy_bytes_into_with(&bytes, &mut out, &ReadOptions::default())?;
/// assert_eq!(out.sum(), -4);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn from_npy_bytes_into_with<T: LayoutElement, D: Dimension>(
    bytes: &[u8],
    out: &mut ArrayRef<T, D>,
    options: &ReadOptions,
) -> Result<()> {
    let (header, offset) = header::parse_slice(bytes, options)?;
    crate::array::decode::read_into(
        &header,
        &mut Source::slice(&bytes[offset..]),
        &mut out.view_mut(),
    )
}

/// [`read_npy_into`] from the data of a `.npy` file whose header was parsed
/// apart (for example from its first bytes, fetched on their own): `data`
/// holds the array's bytes as `header` describes them, from the first.
///
/// ```
/// use ndarray::{array, Array1};
/// use ndnpy::{npy::from_data_into, dtype::DType, dtype::Header, dtype::Version};
///
/// let header = Header {
///     dtype: DType::parse(">i2")?,
///     shape: vec![2],
///     fortran_order: false,
///     version: Version::V1,
/// };
/// let mut out = Array1::<i16>::zeros(2);
/// from_data_into(&header, &[0, 1, 1, 0], &mut out)?;
/// assert_eq!(out, array![1, 256]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn from_data_into<T: LayoutElement, D: Dimension>(
    header: &Header,
    data: &[u8],
    out: &mut ArrayRef<T, D>,
) -> Result<()> {
    crate::array::decode::read_into(header, &mut Source::slice(data), &mut out.view_mut())
}

/// Opens `path`, reads its header and hands the data to `read` (see
/// [`crate::io::source::read_file`]). I/O errors name the path.
pub(crate) fn read_path<X>(
    path: &Path,
    options: &ReadOptions,
    read: impl FnOnce(&Header, &mut Source<'_>) -> Result<X>,
) -> Result<X> {
    crate::io::source::read_file(
        path,
        options,
        |file| header::read_preamble(file, options),
        read,
    )
}

/// `AnyArray`'s file entry points, here rather than beside the type: they
/// open files and read object arrays' pickles.
impl AnyArray {
    /// Reads the `.npy` file at `path`, whatever its element type.
    pub fn read_npy<P: AsRef<Path>>(path: P) -> Result<Self> {
        Self::read_npy_with(path, &ReadOptions::default())
    }

    /// Reads a `.npy` stream, whatever its element type.
    pub fn read_npy_from<R: Read>(reader: R) -> Result<Self> {
        Self::read_npy_from_with(reader, &ReadOptions::default())
    }

    /// Reads `.npy` data held in memory, whatever its element type.
    pub fn from_npy_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_npy_bytes_with(bytes, &ReadOptions::default())
    }

    /// [`AnyArray::read_npy`] with explicit limits.
    pub fn read_npy_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        read_path(path.as_ref(), options, |h, s| {
            crate::pickle::read_any(h, s, options)
        })
    }

    /// [`AnyArray::read_npy_from`] with explicit limits.
    pub fn read_npy_from_with<R: Read>(reader: R, options: &ReadOptions) -> Result<Self> {
        let mut reader = crate::io::checked::CheckedRead(reader);
        let (header, _) = header::read_preamble(&mut reader, options)?;
        crate::pickle::read_any(
            &header,
            &mut Source::stream_with(&mut reader, options),
            options,
        )
    }

    /// [`AnyArray::from_npy_bytes`] with explicit limits.
    pub fn from_npy_bytes_with(bytes: &[u8], options: &ReadOptions) -> Result<Self> {
        let (header, offset) = header::parse_slice(bytes, options)?;
        crate::pickle::read_any(&header, &mut Source::slice(&bytes[offset..]), options)
    }
}

/// The trait's entry points are the type's own methods, so that generic
/// code over `ReadNpy` reads run-time typed arrays too.
impl ReadNpy for AnyArray {
    fn read_npy_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
        AnyArray::read_npy_with(path, options)
    }

    fn read_npy_from_with<R: Read>(reader: R, options: &ReadOptions) -> Result<Self> {
        AnyArray::read_npy_from_with(reader, options)
    }

    fn from_npy_bytes_with(bytes: &[u8], options: &ReadOptions) -> Result<Self> {
        AnyArray::from_npy_bytes_with(bytes, options)
    }
}
