//! Tensors <-> `ndarray` arrays and [`AnyArray`]s.

use crate::{wrap, CandleOptions, MlDtype};
use candle_core::{DType, Device, Error, Result, Tensor, WithDType};
use float8::F8E4M3;
use ndarray::{Array, ArrayD, ArrayRef, Dimension, IxDyn};
use ndnpy::types::half::{bf16, f16};
use ndnpy::{AnyArray, types::Float8E4M3Fn, types::Float8E5M2, types::RecordArray};

/// A tensor on `device` holding `array`'s elements with its shape, in C
/// order whatever the array's memory layout (one copy).
///
/// ```
/// use candle_core::Device;
///
/// let a = ndarray::array![[1.0f32, 2.0], [3.0, 4.0]];
/// let t = ndnpy_candle::array_to_tensor(&a.t(), &Device::Cpu)?;
/// assert_eq!(t.to_vec2::<f32>()?, [[1.0, 3.0], [2.0, 4.0]]);
/// # Ok::<(), candle_core::Error>(())
/// ```
pub fn array_to_tensor<T: WithDType, D: Dimension>(
    array: &ArrayRef<T, D>,
    device: &Device,
) -> Result<Tensor> {
    let standard = array.as_standard_layout();
    let data = standard
        .as_slice()
        .expect("an array in standard layout is one slice");
    Tensor::from_slice(data, array.shape(), device)
}

/// The elements of `tensor` as an array of `T` with dimension `D`; the
/// tensor's dtype must be `T`'s (convert it with `Tensor::to_dtype` first).
///
/// ```
/// use candle_core::{Device, Tensor};
/// use ndarray::Ix2;
///
/// let t = Tensor::arange(0u32, 6, &Device::Cpu)?.reshape((2, 3))?;
/// let a = ndnpy_candle::tensor_to_array::<u32, Ix2>(&t)?;
/// assert_eq!(a, ndarray::array![[0, 1, 2], [3, 4, 5]]);
/// assert!(ndnpy_candle::tensor_to_array::<f32, Ix2>(&t).is_err());
/// # Ok::<(), candle_core::Error>(())
/// ```
pub fn tensor_to_array<T: WithDType, D: Dimension>(tensor: &Tensor) -> Result<Array<T, D>> {
    if tensor.dtype() != T::DTYPE {
        return Err(Error::msg(format!(
            "the tensor holds {:?}, not {:?}: convert it with Tensor::to_dtype first",
            tensor.dtype(),
            T::DTYPE
        )));
    }
    let data = tensor.flatten_all()?.to_vec1::<T>()?;
    ArrayD::from_shape_vec(IxDyn(tensor.dims()), data)
        .map_err(Error::wrap)?
        .into_dimensionality::<D>()
        .map_err(Error::wrap)
}

/// [`any_to_tensor_with`] with default options (raw `ml_dtypes` items
/// refused).
///
/// ```
/// use candle_core::{DType, Device};
/// use ndnpy::AnyArray;
///
/// let any = AnyArray::Bool(ndarray::array![true, false].into_dyn());
/// let t = ndnpy_candle::any_to_tensor(&any, &Device::Cpu)?;
/// assert_eq!(t.dtype(), DType::U8);
/// assert_eq!(t.to_vec1::<u8>()?, [1, 0]);
/// # Ok::<(), candle_core::Error>(())
/// ```
pub fn any_to_tensor(array: &AnyArray, device: &Device) -> Result<Tensor> {
    any_to_tensor_with(array, device, &CandleOptions::default())
}

/// A tensor on `device` holding `array`'s values: candle's own type for
/// `u8`, `u32`, `i16`, `i32`, `i64`, `f16`, `f32`, `f64`; `bool` as `u8`
/// (0 or 1), `int8` as `i16`, `uint16` as `u32`; raw items as
/// [`CandleOptions::raw_as`] says (bfloat16 as `BF16`, float8_e4m3fn as
/// `F8E4M3`, float8_e5m2 as `F16`, which holds each of its values). Other
/// types are an error that names the type.
///
/// ```
/// use candle_core::{DType, Device};
/// use ndnpy::types::half::bf16;
/// use ndnpy::{AnyArray, types::RecordArray};
/// use ndnpy_candle::{CandleOptions, MlDtype};
///
/// // What reading np.save's file of an ml_dtypes.bfloat16 array gives.
/// let raw = AnyArray::Void(RecordArray::from_array(&ndarray::array![bf16::from_f32(1.5)]));
/// assert!(ndnpy_candle::any_to_tensor(&raw, &Device::Cpu).is_err());
/// let options = CandleOptions::default().raw_as(MlDtype::Bfloat16);
/// let t = ndnpy_candle::any_to_tensor_with(&raw, &Device::Cpu, &options)?;
/// assert_eq!(t.dtype(), DType::BF16);
/// assert_eq!(t.to_vec1::<bf16>()?, [bf16::from_f32(1.5)]);
/// # Ok::<(), candle_core::Error>(())
/// ```
pub fn any_to_tensor_with(
    array: &AnyArray,
    device: &Device,
    options: &CandleOptions,
) -> Result<Tensor> {
    match array {
        AnyArray::Bool(a) => owned(a.mapv(u8::from), device),
        AnyArray::I8(a) => owned(a.mapv(i16::from), device),
        AnyArray::I16(a) => array_to_tensor(a, device),
        AnyArray::I32(a) => array_to_tensor(a, device),
        AnyArray::I64(a) => array_to_tensor(a, device),
        AnyArray::U8(a) => array_to_tensor(a, device),
        AnyArray::U16(a) => owned(a.mapv(u32::from), device),
        AnyArray::U32(a) => array_to_tensor(a, device),
        AnyArray::F16(a) => array_to_tensor(a, device),
        AnyArray::F32(a) => array_to_tensor(a, device),
        AnyArray::F64(a) => array_to_tensor(a, device),
        AnyArray::Void(_) => raw_to_tensor(array, device, options),
        other => Err(Error::msg(format!(
            "candle has no type for `{}`{}",
            other.dtype(),
            match other {
                AnyArray::U64(_) => " (uint64: its values beyond i64's range would change)",
                _ => "",
            }
        ))),
    }
}

/// Raw `ml_dtypes` items as the tensor type `options.raw_as` says.
fn raw_to_tensor(array: &AnyArray, device: &Device, options: &CandleOptions) -> Result<Tensor> {
    // '<f1' is what ml_dtypes writes for float8_e5m2 alone: raw_as names
    // the format of raw ('<V1', '<V2') items only.
    let f1 = matches!(
        array.dtype(),
        ndnpy::dtype::DType::Scalar(s) if s.kind == ndnpy::dtype::Kind::Float && s.size == 1
    );
    let format = if f1 {
        Some(MlDtype::Float8E5M2)
    } else {
        options.raw_as
    };
    let Some(format) = format else {
        return Err(Error::msg(format!(
            "`{}` holds raw items, as np.save writes ml_dtypes' bfloat16 and float8 formats; \
             say which with CandleOptions::raw_as",
            array.dtype()
        )));
    };
    match format {
        MlDtype::Bfloat16 => owned(array.void_as::<bf16>().map_err(wrap)?, device),
        MlDtype::Float8E4M3Fn => owned(
            array
                .void_as::<Float8E4M3Fn>()
                .map_err(wrap)?
                .mapv(|x| F8E4M3::from_bits(x.to_bits())),
            device,
        ),
        // e5m2 is the upper byte of an IEEE half: exact in f16.
        MlDtype::Float8E5M2 => owned(
            array
                .void_as::<Float8E5M2>()
                .map_err(wrap)?
                .mapv(|x| f16::from_bits(u16::from(x.to_bits()) << 8)),
            device,
        ),
        other => Err(Error::msg(format!("candle has no type for {other}"))),
    }
}

/// A tensor from an array of ours: its buffer is moved when it is in C
/// order already.
fn owned<T: WithDType>(array: ArrayD<T>, device: &Device) -> Result<Tensor> {
    let shape = array.shape().to_vec();
    let array = if array.is_standard_layout() {
        array
    } else {
        array.as_standard_layout().into_owned()
    };
    let len = array.len();
    let (data, offset) = array.into_raw_vec_and_offset();
    if offset.unwrap_or(0) == 0 && data.len() == len {
        Tensor::from_vec(data, shape, device)
    } else {
        Tensor::from_slice(&data[offset.unwrap_or(0)..][..len], shape, device)
    }
}

/// `tensor`'s values as the [`AnyArray`] that reading them from a `.npy`
/// file gives: the numeric variants, and for `BF16` and `F8E4M3` the raw
/// items (`'<V2'`, `'<V1'`) `np.save` writes for `ml_dtypes`' types (so
/// that writing the array gives the file JAX writes).
///
/// ```
/// use candle_core::{DType, Device, Tensor};
/// use ndnpy::types::half::bf16;
/// use ndnpy::AnyArray;
///
/// let t = Tensor::new(&[1.0f32, 2.5], &Device::Cpu)?;
/// assert_eq!(ndnpy_candle::tensor_to_any(&t)?, AnyArray::F32(ndarray::array![1.0f32, 2.5].into_dyn()));
/// let any = ndnpy_candle::tensor_to_any(&t.to_dtype(DType::BF16)?)?;
/// assert_eq!(any.dtype().descr(), "'<V2'");
/// assert_eq!(any.void_as::<bf16>().unwrap()[[1]].to_f32(), 2.5);
/// # Ok::<(), candle_core::Error>(())
/// ```
pub fn tensor_to_any(tensor: &Tensor) -> Result<AnyArray> {
    Ok(match tensor.dtype() {
        DType::U8 => AnyArray::U8(tensor_to_array(tensor)?),
        DType::U32 => AnyArray::U32(tensor_to_array(tensor)?),
        DType::I16 => AnyArray::I16(tensor_to_array(tensor)?),
        DType::I32 => AnyArray::I32(tensor_to_array(tensor)?),
        DType::I64 => AnyArray::I64(tensor_to_array(tensor)?),
        DType::F16 => AnyArray::F16(tensor_to_array(tensor)?),
        DType::F32 => AnyArray::F32(tensor_to_array(tensor)?),
        DType::F64 => AnyArray::F64(tensor_to_array(tensor)?),
        DType::BF16 => AnyArray::Void(RecordArray::from_array(&tensor_to_array::<bf16, IxDyn>(
            tensor,
        )?)),
        DType::F8E4M3 => {
            let a = tensor_to_array::<F8E4M3, IxDyn>(tensor)?;
            AnyArray::Void(RecordArray::from_array(
                &a.mapv(|x| Float8E4M3Fn::from_bits(x.to_bits())),
            ))
        }
        other => {
            return Err(Error::msg(format!(
                "NumPy files have no type for candle's {other:?}"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widened_types_keep_every_value() {
        let dev = Device::Cpu;
        let i8s = AnyArray::I8(ndarray::array![-128i8, 127].into_dyn());
        assert_eq!(
            any_to_tensor(&i8s, &dev).unwrap().to_vec1::<i16>().unwrap(),
            [-128, 127]
        );
        let u16s = AnyArray::U16(ndarray::array![65535u16].into_dyn());
        assert_eq!(
            any_to_tensor(&u16s, &dev)
                .unwrap()
                .to_vec1::<u32>()
                .unwrap(),
            [65535]
        );
        let e5 = AnyArray::Void(RecordArray::from_array(&ndarray::array![
            Float8E5M2::from_bits(0x3C),
            Float8E5M2::from_bits(0xFC)
        ]));
        let options = CandleOptions::default().raw_as(MlDtype::Float8E5M2);
        let t = any_to_tensor_with(&e5, &dev, &options).unwrap();
        assert_eq!(
            t.to_dtype(DType::F32).unwrap().to_vec1::<f32>().unwrap(),
            [1.0, f32::NEG_INFINITY]
        );
        let e4 = AnyArray::Void(RecordArray::from_array(&ndarray::array![
            Float8E4M3Fn::from_bits(0x7E)
        ]));
        let options = CandleOptions::default().raw_as(MlDtype::Float8E4M3Fn);
        let t = any_to_tensor_with(&e4, &dev, &options).unwrap();
        assert_eq!(t.dtype(), DType::F8E4M3);
        assert_eq!(
            t.to_dtype(DType::F32).unwrap().to_vec1::<f32>().unwrap(),
            [448.0]
        );
        // And back: the same raw byte.
        let back = tensor_to_any(&t).unwrap();
        assert_eq!(back.void_as::<Float8E4M3Fn>().unwrap()[[0]].to_bits(), 0x7E);
    }

    #[test]
    fn refusals_name_the_type() {
        let dev = Device::Cpu;
        let u64s = AnyArray::U64(ndarray::array![1u64].into_dyn());
        let err = any_to_tensor(&u64s, &dev).unwrap_err().to_string();
        assert!(err.contains("<u8") && err.contains("uint64"), "{err}");
        let strings = AnyArray::Str(ndarray::array!["a".to_owned()].into_dyn());
        assert!(any_to_tensor(&strings, &dev)
            .unwrap_err()
            .to_string()
            .contains("<U1"));
        let raw = AnyArray::Void(RecordArray::from_array(&ndarray::array![bf16::ONE]));
        let err = any_to_tensor(&raw, &dev).unwrap_err().to_string();
        assert!(err.contains("raw_as"), "{err}");
        // Raw items of the wrong size for the format.
        let options = CandleOptions::default().raw_as(MlDtype::Float8E4M3Fn);
        assert!(any_to_tensor_with(&raw, &dev, &options).is_err());
    }

    #[test]
    fn every_candle_type_goes_round() {
        let dev = Device::Cpu;
        let t = Tensor::arange(0f32, 12.0, &dev)
            .unwrap()
            .reshape((3, 4))
            .unwrap();
        for dtype in [
            DType::U8,
            DType::U32,
            DType::I16,
            DType::I32,
            DType::I64,
            DType::F16,
            DType::BF16,
            DType::F32,
            DType::F64,
            DType::F8E4M3,
        ] {
            let t = t.to_dtype(dtype).unwrap();
            let any = tensor_to_any(&t).unwrap();
            assert_eq!(any.shape(), [3, 4]);
            let options = CandleOptions::default().raw_as(match dtype {
                DType::F8E4M3 => MlDtype::Float8E4M3Fn,
                _ => MlDtype::Bfloat16,
            });
            let back = any_to_tensor_with(&any, &dev, &options).unwrap();
            assert_eq!(back.dtype(), dtype);
            // Compared as f32, which holds 0..12 exactly (candle's F8E4M3 ->
            // F64 conversion overflows the stack in candle 0.11.1).
            let diff = (back.to_dtype(DType::F32).unwrap() - t.to_dtype(DType::F32).unwrap())
                .unwrap()
                .abs()
                .unwrap()
                .sum_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert_eq!(diff, 0.0, "{dtype:?}");
        }
    }
}
