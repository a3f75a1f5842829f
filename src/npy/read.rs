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

/// [`ReadNpyInto`](crate::npy::ReadNpyInto) from the data of a `.npy`
/// file whose header was parsed apart (for example from its first bytes, fetched on their own): `data`
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
