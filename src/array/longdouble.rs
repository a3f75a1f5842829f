//! NumPy's `longdouble` and `clongdouble` as x86-64 stores them (`<f16`,
//! `<c32`): the 80-bit extended-precision format in 16 bytes, the last six
//! of which are padding.
//!
//! Rust has no 80-bit float, so [`LongDouble`] holds the bytes exactly and
//! converts to and from `f64` on request: reading and writing lose nothing.
//! NumPy writes the padding bytes as whatever memory held; this crate zeroes
//! them on every read and write, so equal values give equal files.
//!
//! The header alone cannot tell an x86-64 `<f16` from the IEEE quadruple
//! precision that NumPy calls `longdouble` on 64-bit ARM Linux (also
//! `<f16`): files from such machines read as nonsense here, as they do in
//! NumPy on x86-64. Other sizes (`<f12`, 32-bit x86) are not valid dtypes
//! here ([`crate::error::HeaderError::BadDescr`], as NumPy on x86-64 refuses them).

use std::fmt;

/// One NumPy `longdouble` of an x86-64 file (`<f16`): the 80-bit extended
/// precision value (64-bit significand with its explicit integer bit,
/// 15-bit exponent, sign), little-endian, then six zero bytes.
///
/// Equality compares the ten value bytes (so `NaN == NaN` when the bits
/// agree, and `0.0 != -0.0`): it is the identity of the stored data, not
/// IEEE comparison.
///
/// ```
/// use ndnpy::types::LongDouble;
///
/// let third = LongDouble::from_bits([0xab, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xfd, 0x3f]);
/// assert_eq!(third.to_f64(), 1.0 / 3.0);
/// assert_eq!(LongDouble::from_f64(1.5).to_f64(), 1.5);
/// assert_eq!(LongDouble::from_f64(-0.0).to_bits()[9], 0x80);
/// ```
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
pub struct LongDouble {
    bytes: [u8; 16],
}

impl LongDouble {
    /// The value whose ten 80-bit bytes (little-endian) are `bits`.
    pub fn from_bits(bits: [u8; 10]) -> Self {
        let mut bytes = [0u8; 16];
        bytes[..10].copy_from_slice(&bits);
        LongDouble { bytes }
    }

    /// The ten bytes of the 80-bit value, little-endian.
    pub fn to_bits(&self) -> [u8; 10] {
        let mut out = [0u8; 10];
        out.copy_from_slice(&self.bytes[..10]);
        out
    }

    /// The exact extended-precision value of `x` (every `f64` has one).
    pub fn from_f64(x: f64) -> Self {
        let bits = x.to_bits();
        let sign = (bits >> 63) as u16;
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1 << 52) - 1);
        let (e, m): (u16, u64) = match (exp, frac) {
            (0, 0) => (0, 0),
            (0x7ff, 0) => (0x7fff, 1 << 63),
            // NaN: the quiet bit and the payload move to the top.
            (0x7ff, f) => (0x7fff, (1 << 63) | (f << 11)),
            (0, f) => {
                // Subnormal: normalise (the extended exponent has room).
                let shift = f.leading_zeros() as i32 - 11;
                let e = -1022 - shift + 16383;
                (e as u16, f << (11 + shift))
            }
            (e, f) => ((e - 1023 + 16383) as u16, (1 << 63) | (f << 11)),
        };
        let mut out = [0u8; 10];
        out[..8].copy_from_slice(&m.to_le_bytes());
        out[8..].copy_from_slice(&((sign << 15) | e).to_le_bytes());
        LongDouble::from_bits(out)
    }

    /// The nearest `f64` (ties to even; beyond `f64`'s range, infinity or
    /// zero of the same sign; NaN stays NaN).
    pub fn to_f64(&self) -> f64 {
        let b = self.to_bits();
        let m = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        let se = u16::from_le_bytes([b[8], b[9]]);
        let negative = se & 0x8000 != 0;
        let exp = (se & 0x7fff) as i32;
        let signed = |x: f64| if negative { -x } else { x };
        if exp == 0x7fff {
            return if m << 1 == 0 {
                signed(f64::INFINITY)
            } else {
                signed(f64::NAN)
            };
        }
        if m == 0 {
            return signed(0.0);
        }
        // value = m * 2^(e - 63), e unbiased (denormals use 1 - bias).
        let e = if exp == 0 { 1 - 16383 } else { exp - 16383 };
        let top = 63 - m.leading_zeros() as i32; // highest set bit of m
        let e_top = e - 63 + top; // exponent of the leading 1
        if e_top > 1023 {
            return signed(f64::INFINITY);
        }
        // Bits of m below the last one kept: 52 fraction bits for a
        // normal result, fewer for a subnormal one.
        let kept_low = if e_top >= -1022 { e_top - 52 } else { -1074 };
        let shift = kept_low - (e - 63);
        let q = round_shift(m as u128, shift);
        // q * 2^kept_low; q may have carried into one more bit.
        let bits = if e_top >= -1022 {
            let (q, e_top) = if q >> 53 != 0 {
                (q >> 1, e_top + 1)
            } else {
                (q, e_top)
            };
            if e_top > 1023 {
                return signed(f64::INFINITY);
            }
            (((e_top + 1023) as u64) << 52) | (q as u64 & ((1 << 52) - 1))
        } else {
            // Subnormal: q is the fraction; a carry into bit 52 gives the
            // smallest normal, which the same bits encode.
            q as u64
        };
        signed(f64::from_bits(bits))
    }
}

/// `x / 2^shift` rounded to nearest, ties to even (`x * 2^-shift` for a
/// negative shift).
fn round_shift(x: u128, shift: i32) -> u128 {
    if shift <= 0 {
        return x << (-shift).min(64);
    }
    if shift > 100 {
        return 0;
    }
    let q = x >> shift;
    let rem = x & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

impl PartialEq for LongDouble {
    fn eq(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits()
    }
}

impl fmt::Debug for LongDouble {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LongDouble({:?})", self.to_f64())
    }
}

/// One NumPy `clongdouble` of an x86-64 file (`<c32`): two [`LongDouble`]s.
///
/// ```
/// use ndnpy::{types::ComplexLongDouble, types::LongDouble};
///
/// let z = ComplexLongDouble { re: LongDouble::from_f64(1.5), im: LongDouble::from_f64(-2.0) };
/// assert_eq!((z.re.to_f64(), z.im.to_f64()), (1.5, -2.0));
/// ```
#[derive(Clone, Copy, Default, PartialEq, Debug)]
#[repr(C)]
pub struct ComplexLongDouble {
    /// The real part.
    pub re: LongDouble,
    /// The imaginary part.
    pub im: LongDouble,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_round_trips_exactly() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -2.5,
            1.0 / 3.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            1e-310,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let y = LongDouble::from_f64(x).to_f64();
            assert_eq!(x.to_bits(), y.to_bits(), "{x}");
        }
        assert!(LongDouble::from_f64(f64::NAN).to_f64().is_nan());
    }

    #[test]
    fn rounding_to_f64() {
        // 1 + 2^-53 (a tie) rounds to even: 1.0; 1 + 2^-53 + 2^-63 rounds up.
        let m: u64 = (1 << 63) | (1 << 10);
        let mut b = [0u8; 10];
        b[..8].copy_from_slice(&m.to_le_bytes());
        b[8..].copy_from_slice(&16383u16.to_le_bytes());
        assert_eq!(LongDouble::from_bits(b).to_f64(), 1.0);
        let m = m | 1;
        b[..8].copy_from_slice(&m.to_le_bytes());
        assert_eq!(LongDouble::from_bits(b).to_f64(), 1.0 + f64::EPSILON);
        // The largest long double overflows; the smallest underflows.
        let max =
            LongDouble::from_bits([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x7f]);
        assert_eq!(max.to_f64(), f64::INFINITY);
        let tiny = LongDouble::from_bits([1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(tiny.to_f64(), 0.0);
    }
}
