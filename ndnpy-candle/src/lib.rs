//! NumPy files in [candle](https://github.com/huggingface/candle), read by
//! ndnpy.
//!
//! - [`array_to_tensor`] / [`tensor_to_array`]: typed `ndarray` arrays and
//!   candle tensors, both ways, for every element type candle has (`u8`,
//!   `u32`, `i16`, `i32`, `i64`, `f16`, `bf16`, `f32`, `f64`, `F8E4M3`).
//! - [`any_to_tensor`] / [`tensor_to_any`]: [`ndnpy::AnyArray`]s (what a
//!   `.npy` file or `.npz` member holds, whatever its type) and tensors.
//!   NumPy types candle lacks are widened where no value changes (`bool` to
//!   `u8`, `int8` to `i16`, `uint16` to `u32`, float8_e5m2 to `f16`) and
//!   refused otherwise (`uint64`, complex, strings...). bfloat16 and
//!   float8_e4m3fn, which `ml_dtypes` saves as raw `'<V2'`/`'<V1'` items,
//!   become `BF16`/`F8E4M3` tensors when [`CandleOptions::raw_as`] says
//!   which format they hold.
//! - [`NpzBackend`]: a [`candle_nn::var_builder::SimpleBackend`] over a
//!   mapped `.npz` archive, so that `VarBuilder::from_backend` loads
//!   NumPy checkpoints that candle's own `.npz` reader refuses (Fortran
//!   order, big-endian data, version 3 headers, bfloat16 as `'<V2'`,
//!   archives of JAX/Flax, PaliGemma, big_vision). Stored members are
//!   copied once, from the mapping, into tensors; compressed ones are
//!   inflated (on every core for archives ndnpy wrote) with their CRC-32
//!   checked.
//!
//! ```
//! use candle_core::{DType, Device};
//! use candle_nn::VarBuilder;
//! use ndnpy_candle::NpzBackend;
//!
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("checkpoint.npz");
//! let mut npz = ndnpy::NpzWriter::create(&path)?;
//! npz.add("params/dense/kernel", &ndarray::Array2::<f32>::ones((3, 2)))?;
//! npz.finish()?;
//!
//! // SAFETY: nothing writes or truncates the checkpoint while it is mapped.
//! let backend = unsafe { NpzBackend::open(&path)? };
//! let vb = VarBuilder::from_backend(Box::new(backend), DType::F32, Device::Cpu);
//! let kernel = vb.get((3, 2), "params/dense/kernel")?;
//! assert_eq!(kernel.sum_all()?.to_scalar::<f32>()?, 6.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod backend;
mod convert;

pub use backend::{npz_var_builder, NpzBackend};
pub use convert::{
    any_to_tensor, any_to_tensor_with, array_to_tensor, tensor_to_any, tensor_to_array,
};
pub use ndnpy::safetensors::MlDtype;

/// Options of the conversions ([`any_to_tensor_with`]) and of
/// [`NpzBackend::open_with`]. The default converts every array whose type
/// is unambiguous and looks members up by the names candle asks for.
///
/// Each field has a builder method of the same name; read the field to get
/// the value back.
///
/// ```
/// use ndnpy_candle::{CandleOptions, MlDtype};
///
/// let options = CandleOptions::default().raw_as(MlDtype::Bfloat16).separator('/');
/// assert_eq!(options.raw_as, Some(MlDtype::Bfloat16));
/// assert_eq!(options.separator, Some('/'));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CandleOptions {
    /// The `ml_dtypes` format raw items hold (`'<V2'`: bfloat16, `'<V1'`:
    /// float8_e4m3fn, `'<f1'`: float8_e5m2); `None` refuses them.
    pub raw_as: Option<MlDtype>,
    /// For [`NpzBackend`]: the character that separates the parts of the
    /// archive's names, put in place of the `.` candle joins a
    /// `VarBuilder`'s path with (`Some('/')` reads JAX's
    /// `params/encoder/kernel` as `vb.pp("params").pp("encoder")`);
    /// `None` (the default) looks names up as candle gives them.
    pub separator: Option<char>,
}

impl CandleOptions {
    /// Sets [`CandleOptions::raw_as`].
    ///
    /// ```
    /// use ndnpy_candle::{CandleOptions, MlDtype};
    /// assert_eq!(CandleOptions::default().raw_as(MlDtype::Float8E4M3Fn).raw_as, Some(MlDtype::Float8E4M3Fn));
    /// ```
    pub fn raw_as(mut self, format: MlDtype) -> Self {
        self.raw_as = Some(format);
        self
    }

    /// Sets [`CandleOptions::separator`].
    ///
    /// ```
    /// assert_eq!(ndnpy_candle::CandleOptions::default().separator('/').separator, Some('/'));
    /// ```
    pub fn separator(mut self, separator: char) -> Self {
        self.separator = Some(separator);
        self
    }
}

/// An ndnpy error as a candle error, so that `?` works in candle code.
fn wrap(err: ndnpy::Error) -> candle_core::Error {
    candle_core::Error::wrap(err)
}
