//! [`ViewNpy`] / [`ViewMutNpy`]: zero-copy array views of `.npy` bytes.

use crate::array::decode::dimension;
use crate::array::element::{cast_slice, cast_slice_mut, type_name, LayoutElement};
use crate::error::{Error, Result};
use crate::format::header::{self, Header};
use crate::options::ReadOptions;
use crate::plan::Plan;
use ndarray::{ArrayView, ArrayViewMut, CowArray, Dimension, ShapeBuilder};

/// Borrowing `.npy` bytes (for example a memory-mapped file) as an array
/// view, without copying the data.
///
/// The cost is that of parsing the header, whatever the array's size. The
/// data must be in native byte order and aligned for the element type
/// (`np.save` aligns data to 64 bytes within the file, so page-aligned
/// memory maps always are); `bool` data must be all 0s and 1s.
///
/// ```
/// use ndarray::{array, ArrayView2};
/// use ndnpy::{ViewNpy, WriteNpy};
///
/// let bytes = array![[1u8, 2], [3, 4]].to_npy_bytes()?;
/// let view = ArrayView2::<u8>::view_npy(&bytes)?;
/// assert_eq!(view[[1, 0]], 3);
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub trait ViewNpy<'a>: Sized {
    /// Views the `.npy` data in `bytes`.
    fn view_npy(bytes: &'a [u8]) -> Result<Self> {
        Self::view_npy_with(bytes, &ReadOptions::default())
    }

    /// [`ViewNpy::view_npy`] with explicit limits.
    fn view_npy_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self>;
}

/// Borrowing `.npy` bytes mutably as an array view, so that changes to the
/// view change the bytes (and, through a writable memory map, the file).
///
/// ```
/// use ndarray::{array, ArrayViewMut1};
/// use ndnpy::{ViewMutNpy, WriteNpy};
///
/// let mut bytes = array![1i32, 2, 3].to_npy_bytes()?;
/// let mut view = ArrayViewMut1::<i32>::view_npy_mut(&mut bytes)?;
/// view[0] = 10;
/// assert_eq!(&bytes[bytes.len() - 12..bytes.len() - 8], &10i32.to_ne_bytes());
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub trait ViewMutNpy<'a>: Sized {
    /// Views the `.npy` data in `bytes` mutably.
    fn view_npy_mut(bytes: &'a mut [u8]) -> Result<Self> {
        Self::view_npy_mut_with(bytes, &ReadOptions::default())
    }

    /// [`ViewMutNpy::view_npy_mut`] with explicit limits.
    fn view_npy_mut_with(bytes: &'a mut [u8], options: &ReadOptions) -> Result<Self>;
}

impl<'a, T: LayoutElement, D: Dimension> ViewNpy<'a> for ArrayView<'a, T, D> {
    fn view_npy_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let (header, offset) = header::parse_slice(bytes, options)?;
        view_data(&header, &bytes[offset..])
    }
}

impl<'a, T: LayoutElement, D: Dimension> ViewMutNpy<'a> for ArrayViewMut<'a, T, D> {
    fn view_npy_mut_with(bytes: &'a mut [u8], options: &ReadOptions) -> Result<Self> {
        let (header, offset) = header::parse_slice(bytes, options)?;
        view_data_mut(&header, &mut bytes[offset..])
    }
}

/// Checks `header` against `T` and `D` and returns the shape, the byte
/// length of the data and the (identity) plan, refusing layouts that need
/// converting, non-native data and short buffers.
fn check_view<T: LayoutElement, D: Dimension>(
    header: &Header,
    available: usize,
) -> Result<(D, usize, Plan)> {
    let plan = view_plan::<T>(&header.dtype)?;
    let dim = dimension::<D>(&header.shape)?;
    let len = header.data_len()?;
    if available < len {
        return Err(Error::Data(crate::error::DataError::TruncatedData {
            expected: len as u64,
            found: available as u64,
        }));
    }
    Ok((dim, len, plan))
}

/// The plan from `dtype` to `T`, which must be the identity for a view.
pub(crate) fn view_plan<T: LayoutElement>(dtype: &crate::format::dtype::DType) -> Result<Plan> {
    let target = T::layout_dtype();
    let plan = Plan::compile(dtype, &target, type_name::<T>())?;
    if plan.is_identity() {
        return Ok(plan);
    }
    if plan.swaps() && plan.in_place() {
        return Err(Error::View(crate::error::ViewError::NonNativeByteOrder {
            dtype: dtype.to_string(),
        }));
    }
    let packed_hint = if dtype.itemsize() < target.itemsize() {
        " (the file's records are packed, NumPy's default layout: declare the struct \
         with #[repr(C, packed)] in ndnpy::record! to view it)"
    } else {
        ""
    };
    Err(Error::View(crate::error::ViewError::LayoutMismatch {
        type_name: type_name::<T>(),
        dtype: dtype.descr(),
        reason: format!(
            "the file's layout differs from the type's own (`{}`){packed_hint}; read it by copy \
             (ReadNpy, or view_or_copy) instead",
            target.descr()
        ),
    }))
}

/// Views `data` (the bytes after the header) as described by `header`.
pub(crate) fn view_data<'a, T: LayoutElement, D: Dimension>(
    header: &Header,
    data: &'a [u8],
) -> Result<ArrayView<'a, T, D>> {
    let (dim, len, plan) = check_view::<T, D>(header, data.len())?;
    let elements = cast_slice::<T>(&data[..len], &plan)?;
    ArrayView::from_shape(dim.set_f(header.fortran_order), elements)
        .map_err(|_| overflow::<T>(header))
}

/// Mutable counterpart of [`view_data`].
pub(crate) fn view_data_mut<'a, T: LayoutElement, D: Dimension>(
    header: &Header,
    data: &'a mut [u8],
) -> Result<ArrayViewMut<'a, T, D>> {
    let (dim, len, plan) = check_view::<T, D>(header, data.len())?;
    let elements = cast_slice_mut::<T>(&mut data[..len], &plan)?;
    ArrayViewMut::from_shape(dim.set_f(header.fortran_order), elements)
        .map_err(|_| overflow::<T>(header))
}

fn overflow<T>(header: &Header) -> Error {
    Error::Limit(crate::error::LimitError::LengthOverflow {
        shape: header.shape.iter().map(|&d| d as u64).collect(),
        itemsize: std::mem::size_of::<T>(),
    })
}

/// A view of `data` when `T` can view it, otherwise an owned copy converted
/// as a read would.
pub(crate) fn view_or_copy<'a, T: LayoutElement, D: Dimension>(
    header: &Header,
    data: &'a [u8],
) -> Result<CowArray<'a, T, D>> {
    match view_data::<T, D>(header, data) {
        Ok(view) => Ok(view.into()),
        Err(
            Error::View(crate::error::ViewError::Misaligned { .. })
            | Error::View(crate::error::ViewError::NonNativeByteOrder { .. })
            | Error::View(crate::error::ViewError::LayoutMismatch { .. })
            | Error::Data(crate::error::DataError::InvalidBool { .. }),
        ) => crate::array::decode::read_array::<T, D>(
            header,
            &mut crate::io::source::Source::slice(data),
        )
        .map(Into::into),
        Err(e) => Err(e),
    }
}
