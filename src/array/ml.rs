//! The machine-learning number formats of `ml_dtypes` (JAX's dtypes):
//! bfloat16 and two float8 formats, as they reach `.npy` files.
//!
//! NumPy has no such types, so `ml_dtypes` registers them as raw bytes:
//! `np.save` of a bfloat16 array writes the descriptor `'<V2'`,
//! float8_e4m3fn `'<V1'` and float8_e5m2 `'<f1'` (which NumPy itself then
//! refuses to load). Nothing in the file says which format two void bytes
//! hold; the reader says so by the type it asks for. Typed reads of
//! [`half::bf16`] (feature `half`), [`Float8E4M3Fn`] and [`Float8E5M2`]
//! accept those descriptors (and `'bfloat16'`, a name some writers put
//! instead), and writes give the descriptors `ml_dtypes` gives, so that
//! `np.load(...).view(ml_dtypes.bfloat16)` (or `jnp.load`) sees the same
//! values. [`crate::AnyArray`] keeps such data as [`crate::AnyArray::Void`];
//! [`crate::AnyArray::void_as`] reinterprets it.
//!
//! Void bytes are never byte-swapped, and `ml_dtypes` writes little-endian
//! bfloat16 (its descriptor always says `<`): on a big-endian machine a
//! `bf16` read this way would need its bytes swapped by the caller.

use crate::array::any::AnyArray;
use crate::array::element::LayoutElement;
use crate::error::{Error, Result};
use crate::format::dtype::{ByteOrder, DType, Kind, Scalar};
use crate::format::header::{Header, Version};
use crate::io::source::Source;
use ndarray::{ArrayD, IxDyn};

/// A number format of `ml_dtypes` that `.npy` files hold as raw bytes:
/// [`half::bf16`](https://docs.rs/half/2/half/struct.bf16.html), [`Float8E4M3Fn`],
/// [`Float8E5M2`].
pub trait MlFloat: LayoutElement + sealed::Sealed {
    /// `ml_dtypes`'s name of the type, e.g. `"bfloat16"`.
    const NAME: &'static str;

    /// The value as an `f32` (exact: every value of these formats is one).
    fn to_f32(self) -> f32;
}

mod sealed {
    pub trait Sealed {}
}

fn ml_dtype(kind: Kind, size: usize) -> DType {
    // `ml_dtypes` gives these types a little-endian mark even for `V`,
    // which NumPy otherwise writes as `|V`; kept so that the header is
    // byte-identical to `np.save`'s.
    DType::Scalar(Scalar {
        order: ByteOrder::Little,
        kind,
        size,
        unit: None,
    })
}

#[cfg(feature = "half")]
impl sealed::Sealed for half::bf16 {}

#[cfg(feature = "half")]
// SAFETY: `bf16` is a `#[repr(transparent)]` `u16`: two bytes, every bit
// pattern a valid value, no interior mutability. The dtype `<V2` has item
// size 2 and no byte order the plans act on (void bytes are never
// swapped), so the bytes of the file are the value's bytes on the
// little-endian machines `ml_dtypes` writes for (its descriptor always says
// `<`).
unsafe impl LayoutElement for half::bf16 {
    fn layout_dtype() -> DType {
        ml_dtype(Kind::Void, 2)
    }
}

#[cfg(feature = "half")]
impl MlFloat for half::bf16 {
    const NAME: &'static str = "bfloat16";

    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
}

/// `ml_dtypes.float8_e4m3fn`: 1 sign bit, 4 exponent bits (bias 7), 3
/// mantissa bits; no infinities, NaN is `S.1111.111`; largest value 448.
/// Stored as `'<V1'`.
///
/// ```
/// use ndnpy::types::Float8E4M3Fn;
///
/// assert_eq!(Float8E4M3Fn::from_bits(0x38).to_f32(), 1.0);
/// assert_eq!(Float8E4M3Fn::from_bits(0x7E).to_f32(), 448.0);
/// assert!(Float8E4M3Fn::from_bits(0x7F).to_f32().is_nan());
/// assert_eq!(Float8E4M3Fn::from_bits(0x01).to_f32(), 2f32.powi(-9));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Float8E4M3Fn(u8);

/// `ml_dtypes.float8_e5m2`: 1 sign bit, 5 exponent bits (bias 15), 2
/// mantissa bits, with infinities and NaNs as IEEE's (the upper byte of a
/// float16). Stored as `'<f1'`, which NumPy cannot load but ndnpy reads.
///
/// ```
/// use ndnpy::types::Float8E5M2;
///
/// assert_eq!(Float8E5M2::from_bits(0x3C).to_f32(), 1.0);
/// assert_eq!(Float8E5M2::from_bits(0x7B).to_f32(), 57344.0);
/// assert_eq!(Float8E5M2::from_bits(0xFC).to_f32(), f32::NEG_INFINITY);
/// assert_eq!(Float8E5M2::from_bits(0x01).to_f32(), 2f32.powi(-16));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Float8E5M2(u8);

macro_rules! float8 {
    ($t:ident, $name:literal, $kind:expr, $decode:expr) => {
        impl $t {
            /// The value with these bits.
            pub const fn from_bits(bits: u8) -> Self {
                $t(bits)
            }

            /// The value's bits.
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// The value as an `f32` (exact).
            pub fn to_f32(self) -> f32 {
                let decode: fn(u8) -> f32 = $decode;
                decode(self.0)
            }
        }

        impl sealed::Sealed for $t {}

        // SAFETY: a `#[repr(transparent)]` `u8`: one byte, every bit
        // pattern valid, no interior mutability; the dtype has item size 1
        // and is never byte-swapped.
        unsafe impl LayoutElement for $t {
            fn layout_dtype() -> DType {
                ml_dtype($kind, 1)
            }
        }

        impl MlFloat for $t {
            const NAME: &'static str = $name;

            fn to_f32(self) -> f32 {
                $t::to_f32(self)
            }
        }
    };
}

float8!(Float8E4M3Fn, "float8_e4m3fn", Kind::Void, |b| {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = (b >> 3) & 0x0F;
    let man = (b & 0x07) as f32;
    if exp == 0x0F && b & 0x07 == 0x07 {
        return f32::NAN;
    }
    if exp == 0 {
        return sign * man / 8.0 * 2f32.powi(-6);
    }
    sign * (1.0 + man / 8.0) * 2f32.powi(exp as i32 - 7)
});

float8!(Float8E5M2, "float8_e5m2", Kind::Float, |b| {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = (b >> 2) & 0x1F;
    let man = b & 0x03;
    if exp == 0x1F {
        return if man == 0 {
            sign * f32::INFINITY
        } else {
            f32::NAN
        };
    }
    if exp == 0 {
        return sign * man as f32 / 4.0 * 2f32.powi(-14);
    }
    sign * (1.0 + man as f32 / 4.0) * 2f32.powi(exp as i32 - 15)
});

impl AnyArray {
    /// Reinterprets raw items (how `ml_dtypes`'s types reach `.npy` files:
    /// [`AnyArray::Void`] of `V2` for bfloat16, `V1` for the float8 formats,
    /// or `<f1` for float8_e5m2) as the [`MlFloat`] type `T`, as
    /// `np.load(...).view(ml_dtypes.bfloat16)` does. The item size must be
    /// `T`'s; any other variant is a [`Error::DTypeMismatch`].
    ///
    /// ```
    /// use ndnpy::{AnyArray, types::Float8E4M3Fn, WriteNpy};
    ///
    /// // The file `np.save` writes for
    /// // `np.array([1, 448], ml_dtypes.float8_e4m3fn)`: descr '<V1'.
    /// let typed = ndarray::arr1(&[Float8E4M3Fn::from_bits(0x38), Float8E4M3Fn::from_bits(0x7E)]);
    /// let bytes = typed.to_npy_bytes()?;
    /// assert!(bytes.windows(14).any(|w| w == b"'descr': '<V1'"));
    /// let any = AnyArray::from_npy_bytes(&bytes)?;
    /// assert!(matches!(any, AnyArray::Void(_)));
    /// let values = any.void_as::<Float8E4M3Fn>()?.mapv(|x| x.to_f32());
    /// assert_eq!(values, ndarray::arr1(&[1.0f32, 448.0]).into_dyn());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn void_as<T: MlFloat>(&self) -> Result<ArrayD<T>> {
        let mismatch = || Error::DTypeMismatch {
            expected: format!(
                "{} ({} raw byte{} per item)",
                T::NAME,
                std::mem::size_of::<T>(),
                if std::mem::size_of::<T>() == 1 {
                    ""
                } else {
                    "s"
                }
            ),
            found: self.dtype().to_string(),
        };
        let AnyArray::Void(raw) = self else {
            return Err(mismatch());
        };
        // '<f1' is what ml_dtypes writes for float8_e5m2 alone (its other
        // 1-byte formats are '<V1'): read as any other format, its values
        // would be wrong.
        let raw_bytes = match raw.dtype() {
            DType::Scalar(Scalar {
                kind: Kind::Void, ..
            }) => true,
            DType::Scalar(Scalar {
                kind: Kind::Float,
                size: 1,
                ..
            }) => T::NAME == Float8E5M2::NAME,
            _ => false,
        };
        if !raw_bytes || raw.dtype().itemsize() != Some(std::mem::size_of::<T>()) {
            return Err(mismatch());
        }
        let header = Header {
            dtype: T::layout_dtype(),
            shape: raw.shape().to_vec(),
            fortran_order: false,
            version: Version::V1,
        };
        crate::array::decode::read_array::<T, IxDyn>(&header, &mut Source::slice(raw.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float8_decodes_every_bit_pattern_as_ml_dtypes() {
        // e5m2 is the upper byte of an IEEE half.
        #[cfg(feature = "half")]
        for b in 0..=255u8 {
            let want = half::f16::from_bits((b as u16) << 8).to_f32();
            let got = Float8E5M2::from_bits(b).to_f32();
            assert!(got == want || (got.is_nan() && want.is_nan()), "{b:#x}");
        }
        // e4m3fn: 0x7F and 0xFF are the only NaNs; the rest are finite.
        let nans = (0..=255u8)
            .filter(|&b| Float8E4M3Fn::from_bits(b).to_f32().is_nan())
            .count();
        assert_eq!(nans, 2);
        assert_eq!(Float8E4M3Fn::from_bits(0xFE).to_f32(), -448.0);
        assert_eq!(Float8E4M3Fn::from_bits(0x08).to_f32(), 2f32.powi(-6));
    }
}
