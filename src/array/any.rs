//! [`AnyArray`]: an array whose element type is known only at run time,
//! its decoding from raw bytes (`read_data`, objects excepted) and its
//! conversions. Reading files into it is `crate::npy::read`.

use crate::array::decode::read_array;
use crate::array::element::{Element, LayoutElement};
use crate::array::record::RecordArray;
use crate::error::{Error, Result};
use crate::format::dtype::{DType, Kind, Scalar};
use crate::format::header::Header;
use crate::io::source::Source;
use ndarray::{Array, ArrayD, Dimension, IxDyn};
use num_traits::AsPrimitive;

/// An owned array of any supported element type, as found in a file.
///
/// To write one, match on the variant (each numeric or string variant holds
/// an [`ArrayD`] that implements [`crate::WriteNpy`]), or call
/// [`AnyArray::to_npy_bytes`]; [`crate::NpzWriter::add_any`] does this for
/// archives. The enum does not implement `WriteNpy`, which would compile
/// every write path for every element type into every user's build.
///
/// ```
/// use ndarray::{array, Array2};
/// use ndnpy::{AnyArray, WriteNpy};
///
/// let bytes = array![[1u16, 2], [3, 4]].to_npy_bytes()?;
/// let any = AnyArray::from_npy_bytes(&bytes)?;
/// assert_eq!(any.dtype().to_string(), "<u2");
/// assert_eq!(any.shape(), &[2, 2]);
/// let typed: Array2<u16> = any.into_array()?;
/// assert_eq!(typed[[1, 1]], 4);
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AnyArray {
    /// `|b1`
    Bool(ArrayD<bool>),
    /// `|i1`
    I8(ArrayD<i8>),
    /// `<i2`
    I16(ArrayD<i16>),
    /// `<i4`
    I32(ArrayD<i32>),
    /// `<i8`
    I64(ArrayD<i64>),
    /// `|u1`
    U8(ArrayD<u8>),
    /// `<u2`
    U16(ArrayD<u16>),
    /// `<u4`
    U32(ArrayD<u32>),
    /// `<u8`
    U64(ArrayD<u64>),
    /// `<f2`
    #[cfg(feature = "half")]
    F16(ArrayD<half::f16>),
    /// `<f4`
    F32(ArrayD<f32>),
    /// `<f8`
    F64(ArrayD<f64>),
    /// `<c8`
    #[cfg(feature = "complex")]
    C64(ArrayD<num_complex::Complex<f32>>),
    /// `<c16`
    #[cfg(feature = "complex")]
    C128(ArrayD<num_complex::Complex<f64>>),
    /// `<f16`: x86-64's long double ([`crate::types::LongDouble`], exact).
    LongDouble(ArrayD<crate::array::longdouble::LongDouble>),
    /// `<c32`: x86-64's complex long double ([`crate::types::ComplexLongDouble`]).
    ComplexLongDouble(ArrayD<crate::array::longdouble::ComplexLongDouble>),
    /// `<U` strings (trailing NULs stripped, as NumPy does).
    Str(ArrayD<String>),
    /// `|S` byte strings (trailing NULs stripped, as NumPy does).
    Bytes(ArrayD<Vec<u8>>),
    /// `<M8[unit]`: counts of `unit` since 1970-01-01 (NaT is `i64::MIN`).
    Datetime64 {
        /// The counts.
        array: ArrayD<i64>,
        /// The unit as NumPy spells it between brackets, multiplier
        /// included (`ns`, `10ms`); `None` for the generic unit.
        unit: Option<String>,
    },
    /// `<m8[unit]`: durations in counts of `unit` (NaT is `i64::MIN`).
    Timedelta64 {
        /// The counts.
        array: ArrayD<i64>,
        /// The unit, as for [`AnyArray::Datetime64`].
        unit: Option<String>,
    },
    /// Records (structured dtypes), as native-order bytes with their dtype;
    /// the values of object (`O`) fields, which NumPy pickles, are
    /// [`AnyArray::Object`] columns of [`RecordArray::field`].
    Record(RecordArray),
    /// Unstructured void data (`|V4`): the raw bytes of each item, held as
    /// a [`RecordArray`] whose dtype is the void type.
    Void(RecordArray),
    /// `|O`: Python objects, read by the safe pickle reader
    /// ([`crate::pickle`]); an `ArrayD<PyValue>` writes them back with
    /// [`crate::WriteNpy`] (or [`AnyArray::to_npy_bytes`]).
    Object(ArrayD<crate::array::pyvalue::PyValue>),
    /// NumPy 2's variable-width strings (`np.dtypes.StringDType()`), which
    /// `np.save` writes as a `|O` header and a pickle; [`AnyArray::dtype`]
    /// says `|O`, as the header does.
    StringDType(crate::array::stringdtype::StringDTypeArray),
}

/// Evaluates `$body` with `$a` bound to the array inside any variant that
/// holds an `ArrayD` of an [`Element`]; object arrays take the `object` arm
/// and the variants without an element type (datetimes, records, void) the
/// `raw` arm, with `$raw` bound to their [`Raw`] form. An arm left out is
/// unreachable: callers that can see such a variant must give it.
macro_rules! each_variant {
    ($value:expr, $a:ident => $body:expr) => {
        $crate::array::any::each_variant!($value, $a => $body, object _o => unreachable!("object arrays are handled before each_variant!"), raw _r => unreachable!("raw variants are handled before each_variant!"))
    };
    ($value:expr, $a:ident => $body:expr, object $o:pat => $obj:expr) => {
        $crate::array::any::each_variant!($value, $a => $body, object $o => $obj, raw _r => unreachable!("raw variants are handled before each_variant!"))
    };
    ($value:expr, $a:ident => $body:expr, raw $raw:ident => $raw_body:expr) => {
        $crate::array::any::each_variant!($value, $a => $body, object _o => unreachable!("object arrays are handled before each_variant!"), raw $raw => $raw_body)
    };
    ($value:expr, $a:ident => $body:expr, object $o:pat => $obj:expr, raw $raw:ident => $raw_body:expr) => {
        match $value {
            AnyArray::Object($o) => $obj,
            AnyArray::StringDType(_) => unreachable!("StringDType arrays are handled before each_variant!"),
            AnyArray::Bool($a) => $body,
            AnyArray::I8($a) => $body,
            AnyArray::I16($a) => $body,
            AnyArray::I32($a) => $body,
            AnyArray::I64($a) => $body,
            AnyArray::U8($a) => $body,
            AnyArray::U16($a) => $body,
            AnyArray::U32($a) => $body,
            AnyArray::U64($a) => $body,
            #[cfg(feature = "half")]
            AnyArray::F16($a) => $body,
            AnyArray::F32($a) => $body,
            AnyArray::F64($a) => $body,
            #[cfg(feature = "complex")]
            AnyArray::C64($a) => $body,
            #[cfg(feature = "complex")]
            AnyArray::C128($a) => $body,
            AnyArray::LongDouble($a) => $body,
            AnyArray::ComplexLongDouble($a) => $body,
            AnyArray::Str($a) => $body,
            AnyArray::Bytes($a) => $body,
            other => {
                let $raw = other.raw();
                $raw_body
            }
        }
    };
}
pub(crate) use each_variant;

/// Calls `$body` with `$t` bound to the Rust type for `$dtype`'s scalar kind
/// and size, or evaluates `$otherwise`.
macro_rules! dispatch {
    ($dtype:expr, $t:ident => $body:expr, $otherwise:expr) => {{
        match $dtype {
            DType::Scalar(s) if s.unit.is_none() => match (s.kind, s.size) {
                (Kind::Bool, 1) => {
                    type $t = bool;
                    $body
                }
                (Kind::Int, 1) => {
                    type $t = i8;
                    $body
                }
                (Kind::Int, 2) => {
                    type $t = i16;
                    $body
                }
                (Kind::Int, 4) => {
                    type $t = i32;
                    $body
                }
                (Kind::Int, 8) => {
                    type $t = i64;
                    $body
                }
                (Kind::UInt, 1) => {
                    type $t = u8;
                    $body
                }
                (Kind::UInt, 2) => {
                    type $t = u16;
                    $body
                }
                (Kind::UInt, 4) => {
                    type $t = u32;
                    $body
                }
                (Kind::UInt, 8) => {
                    type $t = u64;
                    $body
                }
                (Kind::Float, 1) => {
                    type $t = crate::array::ml::Float8E5M2;
                    $body
                }
                #[cfg(feature = "half")]
                (Kind::Float, 2) => {
                    type $t = half::f16;
                    $body
                }
                (Kind::Float, 4) => {
                    type $t = f32;
                    $body
                }
                (Kind::Float, 8) => {
                    type $t = f64;
                    $body
                }
                #[cfg(feature = "complex")]
                (Kind::Complex, 8) => {
                    type $t = num_complex::Complex<f32>;
                    $body
                }
                #[cfg(feature = "complex")]
                (Kind::Complex, 16) => {
                    type $t = num_complex::Complex<f64>;
                    $body
                }
                (Kind::Float, 16) => {
                    type $t = crate::array::longdouble::LongDouble;
                    $body
                }
                (Kind::Complex, 32) => {
                    type $t = crate::array::longdouble::ComplexLongDouble;
                    $body
                }
                _ => $otherwise,
            },
            _ => $otherwise,
        }
    }};
}

/// A runtime-typed array that has no `ArrayD` of an element type: its
/// native-order C-order bytes, dtype and shape.
#[derive(Debug)]
pub(crate) struct Raw<'a> {
    pub(crate) dtype: DType,
    pub(crate) shape: &'a [usize],
    pub(crate) data: std::borrow::Cow<'a, [u8]>,
}

impl Raw<'_> {
    /// The `.npy` header for this data.
    pub(crate) fn header(&self) -> Header {
        Header {
            dtype: self.dtype.clone(),
            shape: self.shape.to_vec(),
            fortran_order: false,
            version: crate::format::header::Version::V1,
        }
    }
}

/// The default [`crate::types::LayoutElement::layout_into_any`]: through the
/// array's bytes, as a file of its dtype would load.
pub(crate) fn layout_into_any<T: LayoutElement>(array: ArrayD<T>) -> AnyArray {
    let standard = array.as_standard_layout();
    let elements = standard.as_slice().expect("standard layout is contiguous");
    let mut bytes = Vec::new();
    crate::array::encode::write_layout(elements, &mut bytes)
        .expect("writing to memory cannot fail");
    let header = Header {
        dtype: T::layout_dtype(),
        shape: array.shape().to_vec(),
        fortran_order: false,
        version: crate::format::header::Version::V1,
    };
    AnyArray::read_data(&header, &mut Source::slice(&bytes))
        .expect("a layout element's own bytes load as its dtype")
}

/// The default [`crate::types::LayoutElement::layout_from_any`]: converts the
/// variant's bytes with a plan, when it has bytes of a compatible dtype.
#[allow(clippy::result_large_err)] // handed back whole, as `Err`
pub(crate) fn layout_from_any<T: LayoutElement>(
    array: AnyArray,
) -> std::result::Result<ArrayD<T>, AnyArray> {
    let converted = match array.raw_any() {
        Some(raw) => {
            let header = raw.header();
            read_array::<T, IxDyn>(&header, &mut Source::slice(&raw.data)).ok()
        }
        None => None,
    };
    converted.ok_or(array)
}

impl AnyArray {
    /// Reads the data that follows `header` from `source`, whatever its
    /// element type (the entry point for nested and member arrays). Object
    /// arrays are not raw bytes and are refused here, as `np.frombuffer`
    /// refuses them: their pickles are read by `crate::pickle::read_any`.
    pub(crate) fn read_data(header: &Header, source: &mut Source<'_>) -> Result<Self> {
        if header.dtype.has_object() {
            return Err(Error::UnsupportedDType {
                dtype: header.dtype.to_string(),
                reason: "object arrays are pickled, not raw bytes".to_owned(),
            });
        }
        if let DType::SubArray(inner, sub) = &header.dtype {
            // As `np.load`: a sub-array dtype becomes trailing dimensions.
            let mut shape = header.shape.clone();
            shape.extend_from_slice(sub);
            let flat = Header {
                dtype: (**inner).clone(),
                shape,
                fortran_order: header.fortran_order && header.shape.len() <= 1,
                version: header.version,
            };
            if header.fortran_order && header.shape.len() > 1 {
                return Err(Error::UnsupportedDType {
                    dtype: header.dtype.to_string(),
                    reason: "a sub-array dtype in a multi-dimensional Fortran-order file (np.save never writes one)".to_owned(),
                });
            }
            return Self::read_data(&flat, source);
        }
        match &header.dtype {
            DType::Scalar(s) => match s.kind {
                Kind::Unicode => read_array::<String, IxDyn>(header, source).map(AnyArray::Str),
                Kind::Bytes => read_array::<Vec<u8>, IxDyn>(header, source).map(AnyArray::Bytes),
                Kind::Datetime | Kind::Timedelta => {
                    let mut as_int = header.clone();
                    as_int.dtype = DType::Scalar(Scalar {
                        kind: Kind::Int,
                        unit: None,
                        ..s.clone()
                    });
                    let array = read_array::<i64, IxDyn>(&as_int, source)?;
                    let unit = s.unit.clone();
                    Ok(if s.kind == Kind::Datetime {
                        AnyArray::Datetime64 { array, unit }
                    } else {
                        AnyArray::Timedelta64 { array, unit }
                    })
                }
                // `<f1` is ml_dtypes's float8_e5m2: raw bytes, as `V1`
                // ([`AnyArray::void_as`] reads them as numbers).
                Kind::Void | Kind::Float if s.kind == Kind::Void || s.size == 1 => {
                    RecordArray::read(header, source).map(AnyArray::Void)
                }
                _ => dispatch!(
                    &header.dtype,
                    T => read_array::<T, IxDyn>(header, source).map(T::into_any),
                    Err(crate::plan::support::unsupported(&header.dtype))
                ),
            },
            DType::Record(_) => {
                crate::plan::support::check_supported(&header.dtype)?;
                RecordArray::read(header, source).map(AnyArray::Record)
            }
            DType::SubArray(..) => unreachable!("flattened above"),
        }
    }

    /// The variant's data as native-order bytes, when it is not an array of
    /// a converted element (strings).
    #[inline] // codegen only where used: it instantiates every write path
    pub(crate) fn raw_any(&self) -> Option<Raw<'_>> {
        fn bytes<T: LayoutElement>(a: &ArrayD<T>) -> Raw<'_> {
            let data = match a.as_slice() {
                Some(s) => {
                    let mut out = Vec::new();
                    crate::array::encode::write_layout(s, &mut out)
                        .expect("writing to memory cannot fail");
                    out
                }
                None => {
                    let standard = a.as_standard_layout();
                    let mut out = Vec::new();
                    crate::array::encode::write_layout(
                        standard.as_slice().expect("standard"),
                        &mut out,
                    )
                    .expect("writing to memory cannot fail");
                    out
                }
            };
            Raw {
                dtype: T::layout_dtype(),
                shape: a.shape(),
                data: std::borrow::Cow::Owned(data),
            }
        }
        Some(match self {
            AnyArray::Str(_)
            | AnyArray::Bytes(_)
            | AnyArray::Object(_)
            | AnyArray::StringDType(_) => return None,
            AnyArray::Datetime64 { array, unit } | AnyArray::Timedelta64 { array, unit } => {
                let mut raw = bytes(array);
                raw.dtype = DType::Scalar(Scalar {
                    order: crate::format::dtype::ByteOrder::NATIVE,
                    kind: if matches!(self, AnyArray::Datetime64 { .. }) {
                        Kind::Datetime
                    } else {
                        Kind::Timedelta
                    },
                    size: 8,
                    unit: unit.clone(),
                });
                raw
            }
            AnyArray::Record(r) | AnyArray::Void(r) => Raw {
                dtype: r.dtype().clone(),
                shape: r.shape(),
                data: std::borrow::Cow::Borrowed(r.as_bytes()),
            },
            AnyArray::Bool(a) => bytes(a),
            AnyArray::I8(a) => bytes(a),
            AnyArray::I16(a) => bytes(a),
            AnyArray::I32(a) => bytes(a),
            AnyArray::I64(a) => bytes(a),
            AnyArray::U8(a) => bytes(a),
            AnyArray::U16(a) => bytes(a),
            AnyArray::U32(a) => bytes(a),
            AnyArray::U64(a) => bytes(a),
            #[cfg(feature = "half")]
            AnyArray::F16(a) => bytes(a),
            AnyArray::F32(a) => bytes(a),
            AnyArray::F64(a) => bytes(a),
            AnyArray::LongDouble(a) => bytes(a),
            AnyArray::ComplexLongDouble(a) => bytes(a),
            #[cfg(feature = "complex")]
            AnyArray::C64(a) => bytes(a),
            #[cfg(feature = "complex")]
            AnyArray::C128(a) => bytes(a),
        })
    }

    /// The raw form of a variant that `each_variant!` does not bind as an
    /// `ArrayD` (datetimes, records, void).
    #[inline]
    pub(crate) fn raw(&self) -> Raw<'_> {
        self.raw_any()
            .expect("only string variants have no raw form")
    }

    /// Converts a numeric variant to an array of `T` with Rust's `as`
    /// semantics (floats to integers truncate toward zero and saturate, NaN
    /// becomes 0; integers wrap or extend; `bool` is 0 or 1). Datetime and
    /// timedelta variants convert their `i64` counts. Other variants
    /// (complex, strings, records, void) are a [`Error::DTypeMismatch`].
    ///
    /// ```
    /// use ndnpy::AnyArray;
    ///
    /// let any = AnyArray::I16(ndarray::arr1(&[1i16, -2, 300]).into_dyn());
    /// assert_eq!(any.cast::<f64>()?, ndarray::arr1(&[1.0, -2.0, 300.0]).into_dyn());
    /// assert_eq!(any.cast::<u8>()?, ndarray::arr1(&[1u8, 254, 44]).into_dyn());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn cast<T>(&self) -> Result<ArrayD<T>>
    where
        T: Copy + 'static,
        u8: AsPrimitive<T>,
        i8: AsPrimitive<T>,
        i16: AsPrimitive<T>,
        i32: AsPrimitive<T>,
        i64: AsPrimitive<T>,
        u16: AsPrimitive<T>,
        u32: AsPrimitive<T>,
        u64: AsPrimitive<T>,
        f32: AsPrimitive<T>,
        f64: AsPrimitive<T>,
    {
        Ok(match self {
            AnyArray::Bool(a) => a.mapv(|x| (x as u8).as_()),
            AnyArray::I8(a) => a.mapv(|x| x.as_()),
            AnyArray::I16(a) => a.mapv(|x| x.as_()),
            AnyArray::I32(a) => a.mapv(|x| x.as_()),
            AnyArray::I64(a) => a.mapv(|x| x.as_()),
            AnyArray::U8(a) => a.mapv(|x| x.as_()),
            AnyArray::U16(a) => a.mapv(|x| x.as_()),
            AnyArray::U32(a) => a.mapv(|x| x.as_()),
            AnyArray::U64(a) => a.mapv(|x| x.as_()),
            #[cfg(feature = "half")]
            AnyArray::F16(a) => a.mapv(|x| x.to_f32().as_()),
            AnyArray::F32(a) => a.mapv(|x| x.as_()),
            AnyArray::F64(a) => a.mapv(|x| x.as_()),
            AnyArray::LongDouble(a) => a.mapv(|x| x.to_f64().as_()),
            AnyArray::Datetime64 { array, .. } | AnyArray::Timedelta64 { array, .. } => {
                array.mapv(|x| x.as_())
            }
            other => {
                return Err(Error::DTypeMismatch {
                    expected: format!("a numeric array to cast to {}", std::any::type_name::<T>()),
                    found: other.dtype().to_string(),
                })
            }
        })
    }

    /// The element type, as `np.save` would write it on this machine.
    pub fn dtype(&self) -> DType {
        fn of<T: Element>(a: &ArrayD<T>) -> DType {
            T::dtype_of(a.iter())
        }
        match self {
            AnyArray::Datetime64 { unit, .. } | AnyArray::Timedelta64 { unit, .. } => {
                DType::Scalar(Scalar {
                    order: crate::format::dtype::ByteOrder::NATIVE,
                    kind: if matches!(self, AnyArray::Datetime64 { .. }) {
                        Kind::Datetime
                    } else {
                        Kind::Timedelta
                    },
                    size: 8,
                    unit: unit.clone(),
                })
            }
            AnyArray::Record(r) | AnyArray::Void(r) => r.dtype().clone(),
            AnyArray::Object(_) | AnyArray::StringDType(_) => {
                DType::parse("|O").expect("a valid type string")
            }
            other => each_variant!(other, a => of(a), raw _r => unreachable!("covered above")),
        }
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            AnyArray::Datetime64 { array, .. } | AnyArray::Timedelta64 { array, .. } => {
                array.shape()
            }
            AnyArray::Record(r) | AnyArray::Void(r) => r.shape(),
            AnyArray::Object(a) => a.shape(),
            AnyArray::StringDType(a) => a.values.shape(),
            other => each_variant!(other, a => a.shape(), raw _r => unreachable!("covered above")),
        }
    }

    /// The typed array, if it holds `T` and has the dimensionality of `D`.
    pub fn into_array<T: Element, D: Dimension>(self) -> Result<Array<T, D>> {
        let found = self.dtype();
        let array = T::from_any(self).map_err(|_| Error::DTypeMismatch {
            expected: format!(
                "{} (`{}`)",
                crate::array::element::type_name::<T>(),
                T::dtype()
            ),
            found: found.to_string(),
        })?;
        let shape = array.shape().to_vec();
        array
            .into_dimensionality::<D>()
            .map_err(|_| Error::NdimMismatch {
                expected: D::NDIM.unwrap_or(shape.len()),
                found: shape.len(),
                shape,
            })
    }

    /// Borrows the array if it holds `T`.
    pub fn as_array<T: Element>(&self) -> Option<&ArrayD<T>> {
        T::ref_any(self)
    }
}

#[cfg(test)]
mod support_tests {
    use super::*;

    /// `crate::plan::support` names the scalars some element type holds
    /// without knowing the types; `dispatch!` is the list of those types.
    /// They must agree, for every kind and size.
    #[test]
    fn plan_support_agrees_with_dispatch() {
        let kinds = [
            Kind::Bool,
            Kind::Int,
            Kind::UInt,
            Kind::Float,
            Kind::Complex,
        ];
        for kind in kinds {
            for size in 0..=40 {
                let dtype = DType::Scalar(Scalar {
                    order: crate::format::dtype::ByteOrder::NATIVE,
                    kind,
                    size,
                    unit: None,
                });
                let typed =
                    dispatch!(&dtype, T => { let _ = std::marker::PhantomData::<T>; true }, false);
                assert_eq!(
                    typed,
                    crate::plan::support::check_supported(&dtype).is_ok(),
                    "{kind:?} of {size} bytes"
                );
            }
        }
    }
}
