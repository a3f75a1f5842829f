//! [`AnyArray`]: reading a file whose element type is known only at run time.

use crate::dtype::{DType, Kind};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::header::{self, Header, ReadOptions};
use crate::read::read_array;
use crate::source::Source;
use ndarray::{Array, ArrayD, Dimension, IxDyn};
use std::io::Read;
use std::path::Path;

/// An owned array of any supported element type, as found in a file.
///
/// To write one, match on the variant: each holds an [`ArrayD`] that
/// implements [`crate::WriteNpy`] ([`crate::NpzWriter::add_any`] does this
/// for archives). The enum itself does not implement it, which would compile
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
    /// `|O`: Python objects, read by the safe pickle reader
    /// ([`crate::pickle`]); write them with [`crate::pickle::write_object_npy`].
    Object(ArrayD<crate::pickle::PyValue>),
}

/// Evaluates `$body` with `$a` bound to the array inside any variant of
/// an [`Element`] type; object arrays take the `object` arm (by default
/// unreachable: callers that can see one must give it).
macro_rules! each_variant {
    ($value:expr, $a:ident => $body:expr) => {
        $crate::any::each_variant!($value, $a => $body, object _o => unreachable!("object arrays are handled before each_variant!"))
    };
    ($value:expr, $a:ident => $body:expr, object $o:pat => $obj:expr) => {
        match $value {
            AnyArray::Object($o) => $obj,
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
                _ => $otherwise,
            },
            _ => $otherwise,
        }
    }};
}

/// Succeeds if some [`Element`] type can hold `dtype`; otherwise explains
/// why none can.
pub(crate) fn check_supported(dtype: &DType) -> Result<()> {
    dispatch!(dtype, T => { let _ = std::marker::PhantomData::<T>; Ok(()) }, Err(unsupported(dtype)))
}

fn unsupported(dtype: &DType) -> Error {
    let reason = match dtype {
        DType::Scalar(s) => match s.kind {
            Kind::Object => "object arrays hold pickled Python objects: read them with AnyArray::read_npy (AnyArray::Object) or ndnpy::pickle".to_owned(),
            Kind::Unicode | Kind::Bytes => "string arrays have no ndarray element type here; view or map the raw bytes instead".to_owned(),
            Kind::Datetime | Kind::Timedelta => "datetime and timedelta arrays are not supported yet; they are stored as int64 counts of their unit".to_owned(),
            Kind::Void => "raw void data has no element type".to_owned(),
            Kind::Float if s.size == 2 => "enable the `half` feature to read float16 data".to_owned(),
            Kind::Complex if s.size == 8 || s.size == 16 => "enable the `complex` feature to read complex data".to_owned(),
            _ => format!("no Rust element type holds {}-byte {:?} values", s.size, s.kind),
        },
        DType::Record(_) => "record (structured) arrays are not supported; map the file and interpret the bytes instead".to_owned(),
        DType::SubArray(..) => "sub-array dtypes are not supported".to_owned(),
    };
    Error::UnsupportedDType {
        dtype: dtype.to_string(),
        reason,
    }
}

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
        crate::read::read_path(path.as_ref(), options, |h, s| {
            Self::read_data_with(h, s, options)
        })
    }

    /// [`AnyArray::read_npy_from`] with explicit limits.
    pub fn read_npy_from_with<R: Read>(reader: R, options: &ReadOptions) -> Result<Self> {
        let mut reader = crate::checked_io::CheckedRead(reader);
        let (header, _) = header::read_preamble(&mut reader, options)?;
        Self::read_data_with(&header, &mut Source::stream(&mut reader), options)
    }

    /// [`AnyArray::from_npy_bytes`] with explicit limits.
    pub fn from_npy_bytes_with(bytes: &[u8], options: &ReadOptions) -> Result<Self> {
        let (header, offset) = header::parse_slice(bytes, options)?;
        Self::read_data_with(&header, &mut Source::slice(&bytes[offset..]), options)
    }

    pub(crate) fn read_data(header: &Header, source: &mut Source<'_>) -> Result<Self> {
        Self::read_data_with(header, source, &ReadOptions::default())
    }

    /// [`AnyArray::read_data`], refusing object arrays if `options` say so.
    pub(crate) fn read_data_with(
        header: &Header,
        source: &mut Source<'_>,
        options: &ReadOptions,
    ) -> Result<Self> {
        if crate::pickle::is_pickled(&header.dtype) {
            return crate::pickle::read_object_data(header, source, options);
        }
        dispatch!(
            &header.dtype,
            T => read_array::<T, IxDyn>(header, source).map(T::into_any),
            Err(unsupported(&header.dtype))
        )
    }

    /// The element type, as `np.save` would write it on this machine.
    pub fn dtype(&self) -> DType {
        fn of<T: Element>(_: &ArrayD<T>) -> DType {
            T::dtype()
        }
        each_variant!(self, a => of(a), object _ => DType::parse("|O").expect("a valid type string"))
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        each_variant!(self, a => a.shape(), object a => a.shape())
    }

    /// The typed array, if it holds `T` and has the dimensionality of `D`.
    pub fn into_array<T: Element, D: Dimension>(self) -> Result<Array<T, D>> {
        let found = self.dtype();
        let array = T::from_any(self).map_err(|_| Error::DTypeMismatch {
            expected: format!("{} (`{}`)", T::NAME, T::dtype()),
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
