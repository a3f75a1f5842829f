//! Which `.npy` dtype is which safetensors dtype, both ways, with the
//! reason when one has no counterpart.

use super::MlDtype;
use crate::array::element::LayoutElement;
use crate::array::ml::{Float8E4M3Fn, Float8E5M2};
use crate::error::{Error, Result};
use crate::format::dtype::{ByteOrder, DType, Kind, Scalar};
use crate::format::header::Header;
use safetensors::Dtype;

/// What a `.npy` member becomes in a safetensors file, and what its bytes
/// need on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Conversion {
    /// The tensor's type.
    pub dtype: Dtype,
    /// The tensor's shape: the member's, with a sub-array dtype's
    /// dimensions appended (as `np.load` gives them).
    pub shape: Vec<usize>,
    /// Bytes per item of the member's data (a sub-array's whole block).
    pub itemsize: usize,
    /// Byte-swap unit for big-endian data (`None`: already little-endian,
    /// or nothing to swap).
    pub swap: Option<usize>,
    /// Whether the data is in Fortran order with more than one dimension
    /// longer than 1 (otherwise C and Fortran order are the same bytes).
    pub transpose: bool,
    /// Whether items are `bool`s, which safetensors wants as 0 or 1 while
    /// a `.npy` file may hold any nonzero byte for `True`.
    pub bools: bool,
}

impl Conversion {
    /// Whether the member's bytes are already the tensor's bytes (they may
    /// still hold `bool` bytes other than 0 and 1: see
    /// [`Conversion::bools`]).
    pub fn in_place(&self) -> bool {
        self.swap.is_none() && !self.transpose
    }
}

/// How member `name`, described by `header`, becomes a tensor; the error
/// names the member and says why when it cannot.
pub(super) fn to_safetensors(
    name: &str,
    header: &Header,
    raw_as: Option<MlDtype>,
) -> Result<Conversion> {
    let refuse = |reason: String| Error::UnsupportedDType {
        dtype: header.dtype.to_string(),
        reason: format!("member '{}': {reason}", crate::error::capped(name)),
    };
    let mut shape = header.shape.clone();
    let scalar = match &header.dtype {
        DType::Scalar(s) => s,
        DType::SubArray(inner, dims) => match &**inner {
            // As `np.load` reads them: trailing dimensions. A Fortran-order
            // file of sub-arrays is one `np.save` never writes.
            DType::Scalar(s) if !(header.fortran_order && header.shape.len() > 1) => {
                shape.extend_from_slice(dims);
                s
            }
            _ => return Err(refuse("a nested or Fortran-order sub-array dtype".into())),
        },
        DType::Record(_) => {
            return Err(refuse(
                "records (structured dtypes) have no safetensors type; save each field as a member of its own".into(),
            ))
        }
    };
    let (dtype, swap_unit) = scalar_type(scalar, raw_as).map_err(refuse)?;
    let itemsize = header
        .dtype
        .itemsize()
        .ok_or_else(|| refuse("no item size".into()))?;
    let swap = (scalar.order == ByteOrder::Big && swap_unit > 1).then_some(swap_unit);
    let long_dims = header.shape.iter().filter(|&&d| d > 1).count();
    Ok(Conversion {
        dtype,
        shape,
        itemsize,
        swap,
        transpose: header.fortran_order && long_dims > 1,
        bools: dtype == Dtype::BOOL,
    })
}

/// The safetensors type of a scalar dtype and its byte-swap unit, or why
/// there is none.
fn scalar_type(s: &Scalar, raw_as: Option<MlDtype>) -> std::result::Result<(Dtype, usize), String> {
    let size = s.size;
    let dtype = match (s.kind, size) {
        (Kind::Bool, 1) => Dtype::BOOL,
        (Kind::Int, 1) => Dtype::I8,
        (Kind::Int, 2) => Dtype::I16,
        (Kind::Int, 4) => Dtype::I32,
        (Kind::Int, 8) => Dtype::I64,
        (Kind::UInt, 1) => Dtype::U8,
        (Kind::UInt, 2) => Dtype::U16,
        (Kind::UInt, 4) => Dtype::U32,
        (Kind::UInt, 8) => Dtype::U64,
        (Kind::Float, 2) => Dtype::F16,
        (Kind::Float, 4) => Dtype::F32,
        (Kind::Float, 8) => Dtype::F64,
        // Two little-endian float32s: swapped as such.
        (Kind::Complex, 8) => return Ok((Dtype::C64, 4)),
        // ml_dtypes gives only float8_e5m2 a float descriptor ('<f1');
        // its other 1-byte formats are raw ('<V1'), so `raw_as` is not
        // asked here.
        (Kind::Float, 1) => Dtype::F8_E5M2,
        (Kind::Void, 1 | 2) => return raw_type(s, raw_as).map(|d| (d, 1)),
        (Kind::Complex, 16) => {
            return Err("complex128 has no safetensors type (complex64 has: C64)".into())
        }
        (Kind::Float, _) | (Kind::Complex, _) => {
            return Err("long double has no safetensors type".into())
        }
        (Kind::Unicode | Kind::Bytes, _) => return Err("strings have no safetensors type".into()),
        (Kind::Datetime | Kind::Timedelta, _) => {
            return Err("datetimes have no safetensors type (view them as int64 first)".into())
        }
        (Kind::Object, _) => return Err("Python objects have no safetensors type".into()),
        (Kind::Void, n) => {
            return Err(format!(
                "raw items of {n} bytes are none of the ml_dtypes formats safetensors holds"
            ))
        }
        _ => return Err("no safetensors type".into()),
    };
    Ok((dtype, size))
}

/// The tensor type of raw items (`V1`, `V2`), as `raw_as` says.
fn raw_type(s: &Scalar, raw_as: Option<MlDtype>) -> std::result::Result<Dtype, String> {
    let size = s.size;
    let Some(format) = raw_as else {
        // float8_e5m2 is never raw: ml_dtypes writes it as '<f1'.
        let (what, flag) = match size {
            2 => ("ml_dtypes' bfloat16", "--as bfloat16"),
            _ => ("ml_dtypes' float8_e4m3fn", "--as float8_e4m3fn"),
        };
        return Err(format!(
            "raw {size}-byte items, as np.save writes {what}: nothing in the file says which format \
             they hold; say it with SafetensorsOptions::raw_as (the ndnpy command: {flag})"
        ));
    };
    if format.itemsize() != size {
        return Err(format!(
            "raw {size}-byte items cannot be {format} ({} byte{} per item, from SafetensorsOptions::raw_as or --as)",
            format.itemsize(),
            if format.itemsize() == 1 { "" } else { "s" },
        ));
    }
    Ok(match format {
        MlDtype::Bfloat16 => Dtype::BF16,
        MlDtype::Float8E4M3Fn => Dtype::F8_E4M3,
        MlDtype::Float8E5M2 => Dtype::F8_E5M2,
    })
}

/// The `.npy` dtype for tensor `name` of type `dtype`: NumPy's own
/// little-endian spelling, or for bfloat16 and float8 the descriptor
/// `np.save` writes for `ml_dtypes`' arrays.
pub(super) fn to_npy(name: &str, dtype: Dtype) -> Result<DType> {
    let scalar = |kind, size| {
        DType::Scalar(Scalar {
            order: if size == 1 {
                ByteOrder::NotApplicable
            } else {
                ByteOrder::Little
            },
            kind,
            size,
            unit: None,
        })
    };
    Ok(match dtype {
        Dtype::BOOL => scalar(Kind::Bool, 1),
        Dtype::I8 => scalar(Kind::Int, 1),
        Dtype::I16 => scalar(Kind::Int, 2),
        Dtype::I32 => scalar(Kind::Int, 4),
        Dtype::I64 => scalar(Kind::Int, 8),
        Dtype::U8 => scalar(Kind::UInt, 1),
        Dtype::U16 => scalar(Kind::UInt, 2),
        Dtype::U32 => scalar(Kind::UInt, 4),
        Dtype::U64 => scalar(Kind::UInt, 8),
        Dtype::F16 => scalar(Kind::Float, 2),
        Dtype::F32 => scalar(Kind::Float, 4),
        Dtype::F64 => scalar(Kind::Float, 8),
        Dtype::C64 => scalar(Kind::Complex, 8),
        Dtype::BF16 => <half::bf16 as LayoutElement>::layout_dtype(),
        Dtype::F8_E4M3 => Float8E4M3Fn::layout_dtype(),
        Dtype::F8_E5M2 => Float8E5M2::layout_dtype(),
        other => {
            return Err(Error::UnsupportedDType {
                dtype: other.to_string(),
                reason: format!(
                    "tensor '{}': NumPy files have no spelling for this safetensors type",
                    crate::error::capped(name)
                ),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::header::Version;

    fn header(descr: &str, shape: &[usize], fortran_order: bool) -> Header {
        let dtype = match descr {
            "sub" => DType::SubArray(Box::new(DType::parse("<f4").unwrap()), vec![2, 3]),
            "record" => DType::Record(vec![crate::format::dtype::Field {
                name: "a".into(),
                title: None,
                dtype: DType::parse("<f4").unwrap(),
            }]),
            _ => DType::parse(descr).unwrap(),
        };
        Header {
            dtype,
            shape: shape.to_vec(),
            fortran_order,
            version: Version::V1,
        }
    }

    #[test]
    fn every_safetensors_type_maps_back_to_itself() {
        let all = [
            Dtype::BOOL,
            Dtype::I8,
            Dtype::I16,
            Dtype::I32,
            Dtype::I64,
            Dtype::U8,
            Dtype::U16,
            Dtype::U32,
            Dtype::U64,
            Dtype::F16,
            Dtype::F32,
            Dtype::F64,
            Dtype::C64,
            Dtype::BF16,
            Dtype::F8_E4M3,
            Dtype::F8_E5M2,
        ];
        for dtype in all {
            let npy = to_npy("t", dtype).unwrap();
            let raw_as = match dtype {
                Dtype::BF16 => Some(MlDtype::Bfloat16),
                Dtype::F8_E4M3 => Some(MlDtype::Float8E4M3Fn),
                Dtype::F8_E5M2 => Some(MlDtype::Float8E5M2),
                _ => None,
            };
            let h = Header {
                dtype: npy,
                shape: vec![3],
                fortran_order: false,
                version: Version::V1,
            };
            let c = to_safetensors("t", &h, raw_as).unwrap();
            assert_eq!(c.dtype, dtype);
            assert!(c.in_place());
            assert_eq!(c.itemsize * 8, dtype.bitsize());
        }
        for dtype in [Dtype::F8_E8M0, Dtype::F8_E4M3FNUZ, Dtype::F4] {
            let err = to_npy("t", dtype).unwrap_err().to_string();
            assert!(err.contains("tensor 't'"), "{err}");
        }
    }

    #[test]
    fn ml_descriptors_are_what_ml_dtypes_writes() {
        assert_eq!(to_npy("t", Dtype::BF16).unwrap().descr(), "'<V2'");
        assert_eq!(to_npy("t", Dtype::F8_E4M3).unwrap().descr(), "'<V1'");
        assert_eq!(to_npy("t", Dtype::F8_E5M2).unwrap().descr(), "'<f1'");
        assert_eq!(to_npy("t", Dtype::U8).unwrap().descr(), "'|u1'");
        assert_eq!(to_npy("t", Dtype::F32).unwrap().descr(), "'<f4'");
    }

    #[test]
    fn byte_order_and_memory_order() {
        let c = to_safetensors("t", &header(">f4", &[2, 3], true), None).unwrap();
        assert_eq!((c.swap, c.transpose), (Some(4), true));
        let c = to_safetensors("t", &header(">c8", &[1, 3], true), None).unwrap();
        assert_eq!((c.swap, c.transpose), (Some(4), false));
        let c = to_safetensors("t", &header("|u1", &[2, 2], true), None).unwrap();
        assert_eq!((c.swap, c.transpose), (None, true));
        let c = to_safetensors("t", &header("<i2", &[4], true), None).unwrap();
        assert!(c.in_place());
        let c = to_safetensors("t", &header("sub", &[5], false), None).unwrap();
        assert_eq!(
            (c.dtype, c.shape, c.itemsize),
            (Dtype::F32, vec![5, 2, 3], 24)
        );
    }

    #[test]
    fn refusals_name_the_member_and_the_way_out() {
        let err = |descr: &str, raw_as| {
            to_safetensors("params/w", &header(descr, &[2], false), raw_as)
                .unwrap_err()
                .to_string()
        };
        for descr in ["<U3", "|S2", "|O", "<M8[ns]", "<c16", "record", "|V4"] {
            let text = err(descr, None);
            assert!(text.contains("member 'params/w'"), "{descr}: {text}");
        }
        let text = err("<V2", None);
        assert!(
            text.contains("--as bfloat16") && text.contains("raw_as"),
            "{text}"
        );
        let text = err("<V1", None);
        assert!(
            text.contains("--as float8_e4m3fn") && !text.contains("float8_e5m2"),
            "{text}"
        );
        let text = err("<V1", Some(MlDtype::Bfloat16));
        assert!(text.contains("cannot be bfloat16"), "{text}");
        let c = to_safetensors("w", &header("<f1", &[2], false), Some(MlDtype::Float8E5M2));
        assert_eq!(c.unwrap().dtype, Dtype::F8_E5M2);
    }
}
