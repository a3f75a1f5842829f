//! The [`Element`] trait: which Rust scalar types hold which NumPy dtypes.

use crate::any::AnyArray;
use crate::dtype::{ByteOrder, DType, Kind, Scalar};
use crate::error::{Error, Result};
use ndarray::ArrayD;

mod sealed {
    pub trait Sealed {}
}

/// A Rust scalar type that `.npy` data can be read into and written from.
///
/// Implemented for `bool`, `i8`–`i64`, `u8`–`u64`, `f32`, `f64`,
/// `num_complex::Complex<f32>` and `Complex<f64>` (feature `complex`, on by
/// default) and `half::f16` (feature `half`). The trait is sealed: its methods
/// rely on facts about the memory layout of exactly these types.
///
/// ```
/// use ndnpy::{DType, Element};
///
/// assert_eq!(<f64 as Element>::dtype(), DType::parse("<f8").unwrap());
/// assert_eq!(<bool as Element>::dtype().to_string(), "|b1");
/// ```
pub trait Element: bytemuck::NoUninit + Send + Sync + 'static + sealed::Sealed {
    /// NumPy's kind of this type.
    const KIND: Kind;
    /// Rust's name of the type, for error messages.
    const NAME: &'static str;

    /// The descriptor `np.save` writes for this type on this machine.
    fn dtype() -> DType {
        let size = std::mem::size_of::<Self>();
        DType::Scalar(Scalar {
            order: if size == 1 {
                ByteOrder::NotApplicable
            } else {
                ByteOrder::NATIVE
            },
            kind: Self::KIND,
            size,
            unit: None,
        })
    }

    /// Checks that data of `dtype` can be read as `Self`, returning whether
    /// its bytes must be swapped to native order.
    ///
    /// The error names the Rust type and the file's descriptor, or says that
    /// the descriptor cannot be read by this crate at all.
    fn check_dtype(dtype: &DType) -> Result<bool> {
        match dtype {
            DType::Scalar(s)
                if s.kind == Self::KIND
                    && s.size == std::mem::size_of::<Self>()
                    && s.unit.is_none() =>
            {
                Ok(s.order != ByteOrder::NATIVE && s.order != ByteOrder::NotApplicable)
            }
            other => {
                crate::any::check_supported(other)?;
                Err(Error::DTypeMismatch {
                    expected: format!("{} (`{}`)", Self::NAME, Self::dtype()),
                    found: other.to_string(),
                })
            }
        }
    }

    /// Swaps the byte order of every element of `data` in place.
    #[doc(hidden)]
    fn swap_bytes(data: &mut [Self]);

    /// Makes raw bytes read from a file valid values of `Self` (`bool`: any
    /// nonzero byte becomes 1, as NumPy reads it). A no-op for every type
    /// whose bit patterns are all valid.
    #[doc(hidden)]
    fn normalize_bytes(_bytes: &mut [u8]) {}

    /// Checks that raw bytes are valid values of `Self` without changing them
    /// (for views, which cannot fix them).
    #[doc(hidden)]
    fn validate_bytes(_bytes: &[u8]) -> Result<()> {
        Ok(())
    }

    /// Wraps an array of this type in the runtime-typed enum.
    #[doc(hidden)]
    fn into_any(array: ArrayD<Self>) -> AnyArray;

    /// Takes an array of this type back out of the runtime-typed enum.
    #[doc(hidden)]
    fn from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray>;

    /// Borrows an array of this type from the runtime-typed enum.
    #[doc(hidden)]
    fn ref_any(array: &AnyArray) -> Option<&ArrayD<Self>>;
}

/// Swaps each `N`-byte unit of `data` (an element, or half of a complex).
fn swap_units<T: bytemuck::Pod>(data: &mut [T], unit: usize) {
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(data);
    match unit {
        2 => bytemuck::cast_slice_mut::<u8, u16>(bytes)
            .iter_mut()
            .for_each(|x| *x = x.swap_bytes()),
        4 => bytemuck::cast_slice_mut::<u8, u32>(bytes)
            .iter_mut()
            .for_each(|x| *x = x.swap_bytes()),
        8 => bytemuck::cast_slice_mut::<u8, u64>(bytes)
            .iter_mut()
            .for_each(|x| *x = x.swap_bytes()),
        _ => {}
    }
}

macro_rules! element {
    ($t:ty, $kind:expr, $variant:ident, $unit:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const KIND: Kind = $kind;
            const NAME: &'static str = stringify!($t);

            fn swap_bytes(data: &mut [Self]) {
                swap_units(data, $unit);
            }

            fn into_any(array: ArrayD<Self>) -> AnyArray {
                AnyArray::$variant(array)
            }

            fn from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray> {
                match array {
                    AnyArray::$variant(a) => Ok(a),
                    other => Err(other),
                }
            }

            fn ref_any(array: &AnyArray) -> Option<&ArrayD<Self>> {
                match array {
                    AnyArray::$variant(a) => Some(a),
                    _ => None,
                }
            }
        }
    };
}

element!(i8, Kind::Int, I8, 1);
element!(i16, Kind::Int, I16, 2);
element!(i32, Kind::Int, I32, 4);
element!(i64, Kind::Int, I64, 8);
element!(u8, Kind::UInt, U8, 1);
element!(u16, Kind::UInt, U16, 2);
element!(u32, Kind::UInt, U32, 4);
element!(u64, Kind::UInt, U64, 8);
element!(f32, Kind::Float, F32, 4);
element!(f64, Kind::Float, F64, 8);
#[cfg(feature = "half")]
element!(half::f16, Kind::Float, F16, 2);
#[cfg(feature = "complex")]
element!(num_complex::Complex<f32>, Kind::Complex, C64, 4);
#[cfg(feature = "complex")]
element!(num_complex::Complex<f64>, Kind::Complex, C128, 8);

impl sealed::Sealed for bool {}
impl Element for bool {
    const KIND: Kind = Kind::Bool;
    const NAME: &'static str = "bool";

    fn swap_bytes(_data: &mut [Self]) {}

    fn normalize_bytes(bytes: &mut [u8]) {
        bytes.iter_mut().for_each(|b| *b = (*b != 0) as u8);
    }

    fn validate_bytes(bytes: &[u8]) -> Result<()> {
        // A fast all-valid check first; the position is found only on failure.
        if bytes.iter().fold(0u8, |acc, &b| acc | b) <= 1 {
            return Ok(());
        }
        let index = bytes.iter().position(|&b| b > 1).unwrap_or(0);
        Err(Error::InvalidBool {
            index,
            value: bytes[index],
        })
    }

    fn into_any(array: ArrayD<Self>) -> AnyArray {
        AnyArray::Bool(array)
    }

    fn from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray> {
        match array {
            AnyArray::Bool(a) => Ok(a),
            other => Err(other),
        }
    }

    fn ref_any(array: &AnyArray) -> Option<&ArrayD<Self>> {
        match array {
            AnyArray::Bool(a) => Some(a),
            _ => None,
        }
    }
}

/// Checks that `bytes` can be reinterpreted as `[T]`: aligned for `T`, a
/// whole number of elements, and (for `bool`) only 0s and 1s.
fn check_castable<T: Element>(bytes: &[u8]) -> Result<()> {
    debug_assert_eq!(bytes.len() % std::mem::size_of::<T>(), 0);
    let align = std::mem::align_of::<T>();
    let address = bytes.as_ptr() as usize;
    if !address.is_multiple_of(align) {
        return Err(Error::Misaligned {
            type_name: T::NAME,
            align,
            address,
        });
    }
    T::validate_bytes(bytes)
}

/// Reinterprets `bytes` as a slice of `T` without copying.
///
/// Refuses data that is misaligned or (for `bool`) holds bytes other than 0
/// and 1, before any `&[T]` exists.
pub(crate) fn cast_slice<T: Element>(bytes: &[u8]) -> Result<&[T]> {
    if bytes.is_empty() {
        return Ok(&[]);
    }
    check_castable::<T>(bytes)?;
    // SAFETY: the pointer is non-null (from a non-empty slice) and aligned for
    // `T`, and `bytes.len()` is a multiple of `size_of::<T>()` (both checked by
    // `check_castable`); `Element` is sealed to types whose every bit pattern
    // is valid except `bool`, whose bytes were just checked to be 0 or 1; the
    // result borrows `bytes`, so it cannot outlive it or alias a mutable
    // borrow of it.
    Ok(unsafe {
        std::slice::from_raw_parts(
            bytes.as_ptr().cast::<T>(),
            bytes.len() / std::mem::size_of::<T>(),
        )
    })
}

/// Mutable counterpart of [`cast_slice`].
pub(crate) fn cast_slice_mut<T: Element>(bytes: &mut [u8]) -> Result<&mut [T]> {
    if bytes.is_empty() {
        return Ok(&mut []);
    }
    check_castable::<T>(bytes)?;
    // SAFETY: as in `cast_slice`; in addition every value written through the
    // result is a valid `T`, so the bytes stay valid for any later reader, and
    // the exclusive borrow of `bytes` moves into the result.
    Ok(unsafe {
        std::slice::from_raw_parts_mut(
            bytes.as_mut_ptr().cast::<T>(),
            bytes.len() / std::mem::size_of::<T>(),
        )
    })
}
