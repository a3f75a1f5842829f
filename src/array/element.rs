//! The element traits: which Rust types hold which NumPy dtypes.
//!
//! [`Element`] is every type an array can be read into or written from.
//! [`LayoutElement`] is the subset whose memory a dtype describes exactly
//! (scalars, fixed-width strings, datetimes, sub-arrays `[T; N]`, records
//! declared with [`crate::record!`]): only those can be viewed or mapped.
//! Both kinds read through the same conversion plans ([`crate::plan`]).

use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use crate::format::dtype::{ByteOrder, DType, Kind, Scalar};
use crate::io::source::Source;
use crate::plan::Plan;
use ndarray::{ArrayBase, ArrayD, Data, Dimension};
use std::io::Write;

pub(crate) mod sealed {
    /// Keeps [`super::Element`] closed to the crate: layout types join it
    /// through [`super::LayoutElement`], whose contract is explicit.
    pub trait Sealed {}
}

/// A Rust type that `.npy` data can be read into and written from.
///
/// Implemented for every [`LayoutElement`] (the numeric scalars, `bool`,
/// [`crate::types::FixedBytes`], [`crate::types::FixedUnicode`], [`crate::types::Datetime64`],
/// [`crate::types::Timedelta64`], arrays `[T; N]` of them and records declared with
/// [`crate::record!`]), for the *converted* elements `String` (`<U`, or an
/// object array of `str`) and `Vec<u8>` (`|S`), which are built value by
/// value and cannot be viewed, and for the object elements
/// [`crate::array::pyvalue::PyValue`] and `Option<String>` (`|O`), read and written
/// whole through the safe pickle reader and writer.
///
/// ```
/// use ndnpy::{dtype::DType, Element};
///
/// assert_eq!(<f64 as Element>::dtype(), DType::parse("<f8").unwrap());
/// assert_eq!(<bool as Element>::dtype().to_string(), "|b1");
/// assert_eq!(<[i16; 2] as Element>::dtype().descr(), "('<i2', (2,))");
/// ```
pub trait Element: Clone + Send + Sync + 'static + sealed::Sealed {
    /// The descriptor `np.save` writes for this type on this machine (for
    /// `String` and `Vec<u8>`, whose width follows the data, the one-wide
    /// type `<U1` / `|S1`).
    fn dtype() -> DType;

    /// The descriptor for an array holding `elements` (the width of a string
    /// type is that of its longest element).
    #[doc(hidden)]
    fn dtype_of<'a, I: Iterator<Item = &'a Self>>(_elements: I) -> DType
    where
        Self: 'a,
    {
        Self::dtype()
    }

    /// Checks that data of `dtype` can be read as `Self`.
    #[doc(hidden)]
    fn check_dtype(dtype: &DType) -> Result<()>;

    /// Reads `n` elements of file type `dtype` from `source`.
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn read_vec(dtype: &DType, n: usize, source: &mut Source<'_>) -> Result<Vec<Self>>;

    /// Writes `elements` as data of `dtype` (which [`Element::dtype_of`]
    /// gave for an array holding them).
    #[doc(hidden)]
    fn write_slice<W: Write + ?Sized>(elements: &[Self], dtype: &DType, out: &mut W) -> Result<()>;

    /// Wraps an array of this type in the runtime-typed enum.
    #[doc(hidden)]
    fn into_any(array: ArrayD<Self>) -> AnyArray;

    /// Takes an array of this type back out of the runtime-typed enum.
    #[doc(hidden)]
    #[allow(clippy::result_large_err)] // handed back whole, as `Err`
    fn from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray>;

    /// Borrows an array of this type from the runtime-typed enum.
    #[doc(hidden)]
    fn ref_any(_array: &AnyArray) -> Option<&ArrayD<Self>> {
        None
    }

    /// How to convert an object array's values, for the types a pickled
    /// (`|O`) file can hold (`String`); `None` for every other type, which
    /// then never starts the pickle reader.
    #[doc(hidden)]
    #[allow(clippy::type_complexity)]
    fn from_objects() -> Option<fn(ArrayD<crate::array::pyvalue::PyValue>) -> Result<ArrayD<Self>>>
    {
        None
    }

    /// The whole `.npy` file of `array`, for the types NumPy stores as a
    /// pickled object array ([`crate::array::pyvalue::PyValue`], `Option<String>`):
    /// a pickle lists the elements in C order after the shape, so it cannot
    /// be written slice by slice. `None` for every other type, whose data
    /// [`Element::write_slice`] writes.
    #[doc(hidden)]
    fn object_npy<S: Data<Elem = Self>, D: Dimension>(
        _array: &ArrayBase<S, D>,
    ) -> Option<Result<Vec<u8>>> {
        None
    }
}

/// Refuses to write `T` in blocks (growing files, streamed members) when it
/// is stored as a pickled object array, which is written whole.
pub(crate) fn check_blockwise<T: Element>() -> Result<()> {
    if T::dtype().has_object() {
        return Err(Error::UnsupportedDType {
            dtype: T::dtype().to_string(),
            reason: format!(
                "{} arrays are pickled whole (write them with WriteNpy or NpzWriter::add), \
                 not in blocks",
                type_name::<T>()
            ),
        });
    }
    Ok(())
}

/// An element whose memory a NumPy dtype describes exactly, so that file
/// bytes of that dtype *are* values of the type: it can be viewed in place
/// ([`crate::ViewNpy`], [`crate::NpyMmap`]) and is converted from other
/// layouts (byte order, field order, padding) by a compiled plan of byte
/// moves.
///
/// Implement it with [`crate::record!`], which derives the dtype from the
/// struct's own offsets.
///
/// # Safety
///
/// [`LayoutElement::layout_dtype`] must describe `Self`'s memory exactly, in
/// native byte order: its item size is `size_of::<Self>()`, every named
/// field lies at its offset in `Self`, and every byte outside the named
/// fields (a `('', '|Vn')` padding entry) is padding of `Self`. Every bit
/// pattern of each scalar field must be a valid value of the Rust field,
/// except that `|b1` fields are Rust `bool`s (the crate only ever stores 0
/// or 1 there). `Self` must have no interior mutability.
pub unsafe trait LayoutElement: Copy + Send + Sync + 'static {
    /// The dtype describing `Self`'s memory, as `np.save` writes it.
    fn layout_dtype() -> DType;

    /// Wraps an array in the runtime-typed enum (by default through its
    /// bytes, as a record, string, datetime... array).
    #[doc(hidden)]
    fn layout_into_any(array: ArrayD<Self>) -> AnyArray {
        crate::array::any::layout_into_any(array)
    }

    /// Takes an array back out of the runtime-typed enum (by default by
    /// converting its bytes with a plan).
    #[doc(hidden)]
    #[allow(clippy::result_large_err)] // handed back whole, as `Err`
    fn layout_from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray> {
        crate::array::any::layout_from_any(array)
    }

    /// Borrows an array from the runtime-typed enum, when a variant holds
    /// exactly this type.
    #[doc(hidden)]
    fn layout_ref_any(_array: &AnyArray) -> Option<&ArrayD<Self>> {
        None
    }
}

impl<T: LayoutElement> sealed::Sealed for T {}

impl<T: LayoutElement> Element for T {
    fn dtype() -> DType {
        T::layout_dtype()
    }

    fn check_dtype(dtype: &DType) -> Result<()> {
        Plan::compile(dtype, &T::layout_dtype(), type_name::<T>()).map(|_| ())
    }

    #[allow(private_interfaces)]
    fn read_vec(dtype: &DType, n: usize, source: &mut Source<'_>) -> Result<Vec<Self>> {
        let plan = Plan::compile(dtype, &T::layout_dtype(), type_name::<T>())?;
        crate::array::decode::read_planned::<T>(source, n, &plan)
    }

    fn write_slice<W: Write + ?Sized>(
        elements: &[Self],
        _dtype: &DType,
        out: &mut W,
    ) -> Result<()> {
        crate::array::encode::write_layout(elements, out)
    }

    fn into_any(array: ArrayD<Self>) -> AnyArray {
        T::layout_into_any(array)
    }

    fn from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray> {
        T::layout_from_any(array)
    }

    fn ref_any(array: &AnyArray) -> Option<&ArrayD<Self>> {
        T::layout_ref_any(array)
    }
}

/// Rust's name of `T`, for error messages.
pub(crate) fn type_name<T>() -> &'static str {
    std::any::type_name::<T>()
}

/// The scalar dtype of a numeric type of `size` bytes, in native order.
pub(crate) fn scalar_dtype(kind: Kind, size: usize) -> DType {
    let order = match kind {
        Kind::Bool | Kind::Bytes | Kind::Void => ByteOrder::NotApplicable,
        Kind::Int | Kind::UInt if size == 1 => ByteOrder::NotApplicable,
        _ => ByteOrder::NATIVE,
    };
    DType::Scalar(Scalar {
        order,
        kind,
        size,
        unit: None,
    })
}

macro_rules! scalar_element {
    ($t:ty, $kind:expr, $variant:ident) => {
        // SAFETY: a scalar dtype of the type's kind and size describes it
        // exactly; every bit pattern is valid for these types, and `bool`
        // is `|b1`, which the contract allows.
        unsafe impl LayoutElement for $t {
            fn layout_dtype() -> DType {
                scalar_dtype($kind, std::mem::size_of::<$t>())
            }

            fn layout_into_any(array: ArrayD<Self>) -> AnyArray {
                AnyArray::$variant(array)
            }

            fn layout_from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray> {
                match array {
                    AnyArray::$variant(a) => Ok(a),
                    other => Err(other),
                }
            }

            fn layout_ref_any(array: &AnyArray) -> Option<&ArrayD<Self>> {
                match array {
                    AnyArray::$variant(a) => Some(a),
                    _ => None,
                }
            }
        }
    };
}

scalar_element!(bool, Kind::Bool, Bool);
scalar_element!(i8, Kind::Int, I8);
scalar_element!(i16, Kind::Int, I16);
scalar_element!(i32, Kind::Int, I32);
scalar_element!(i64, Kind::Int, I64);
scalar_element!(u8, Kind::UInt, U8);
scalar_element!(u16, Kind::UInt, U16);
scalar_element!(u32, Kind::UInt, U32);
scalar_element!(u64, Kind::UInt, U64);
scalar_element!(f32, Kind::Float, F32);
scalar_element!(f64, Kind::Float, F64);
#[cfg(feature = "half")]
scalar_element!(half::f16, Kind::Float, F16);
#[cfg(feature = "complex")]
scalar_element!(num_complex::Complex<f32>, Kind::Complex, C64);
#[cfg(feature = "complex")]
scalar_element!(num_complex::Complex<f64>, Kind::Complex, C128);
// x86-64's long double: 16 bytes, align 16, any bytes valid (`[u8; 16]`
// inside); the plan zeroes the six padding bytes of each value.
scalar_element!(
    crate::array::longdouble::LongDouble,
    Kind::Float,
    LongDouble
);
scalar_element!(
    crate::array::longdouble::ComplexLongDouble,
    Kind::Complex,
    ComplexLongDouble
);

// SAFETY: `[T; N]` is `N` values of `T` back to back with no padding
// (Rust guarantees array stride == size_of::<T>()), which is exactly the
// sub-array dtype `(T, (N,))`; validity follows from `T`'s contract.
unsafe impl<T: LayoutElement, const N: usize> LayoutElement for [T; N] {
    fn layout_dtype() -> DType {
        match T::layout_dtype() {
            // `[[T; N]; M]` is NumPy's `(T, (M, N))`.
            DType::SubArray(inner, mut shape) => {
                shape.insert(0, N);
                DType::SubArray(inner, shape)
            }
            inner => DType::SubArray(Box::new(inner), vec![N]),
        }
    }
}

/// Reinterprets `bytes` as a slice of `T` without copying, when the data is
/// aligned for `T` and holds valid values (`bool` bytes 0 or 1, as `plan`
/// lists them).
pub(crate) fn cast_slice<'a, T: LayoutElement>(bytes: &'a [u8], plan: &Plan) -> Result<&'a [T]> {
    if bytes.is_empty() || std::mem::size_of::<T>() == 0 {
        return Ok(&[]);
    }
    check_castable::<T>(bytes, plan)?;
    // SAFETY: the pointer is non-null (from a non-empty slice) and aligned
    // for `T`, `bytes.len()` is a multiple of `size_of::<T>()` (checked by
    // `check_castable`); by `LayoutElement`'s contract the plan's identity
    // means the bytes are valid `T`s, `bool` bytes having just been checked;
    // the result borrows `bytes`, so it cannot outlive it or alias a
    // mutable borrow of it.
    Ok(unsafe {
        std::slice::from_raw_parts(
            bytes.as_ptr().cast::<T>(),
            bytes.len() / std::mem::size_of::<T>(),
        )
    })
}

/// Mutable counterpart of [`cast_slice`].
pub(crate) fn cast_slice_mut<'a, T: LayoutElement>(
    bytes: &'a mut [u8],
    plan: &Plan,
) -> Result<&'a mut [T]> {
    if bytes.is_empty() || std::mem::size_of::<T>() == 0 {
        return Ok(&mut []);
    }
    check_castable::<T>(bytes, plan)?;
    // SAFETY: as in `cast_slice`; every value written through the result is
    // a valid `T`, so the bytes stay valid for any later reader, and the
    // exclusive borrow of `bytes` moves into the result.
    Ok(unsafe {
        std::slice::from_raw_parts_mut(
            bytes.as_mut_ptr().cast::<T>(),
            bytes.len() / std::mem::size_of::<T>(),
        )
    })
}

fn check_castable<T: LayoutElement>(bytes: &[u8], plan: &Plan) -> Result<()> {
    let size = std::mem::size_of::<T>();
    if !bytes.len().is_multiple_of(size) {
        return Err(Error::Data(crate::error::DataError::TruncatedData {
            expected: bytes.len().div_ceil(size) as u64 * size as u64,
            found: bytes.len() as u64,
        }));
    }
    let align = std::mem::align_of::<T>();
    let address = bytes.as_ptr() as usize;
    if !address.is_multiple_of(align) {
        return Err(Error::View(crate::error::ViewError::Misaligned {
            type_name: type_name::<T>(),
            align,
            address,
        }));
    }
    plan.validate_bools(bytes)
}
