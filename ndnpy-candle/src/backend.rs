//! [`NpzBackend`]: candle's `VarBuilder` over a mapped `.npz` archive.

use crate::convert::any_to_tensor_with;
use crate::{wrap, CandleOptions, MlDtype};
use candle_core::{DType, Device, Error, Result, Shape, Tensor, WithDType};
use candle_nn::var_builder::SimpleBackend;
use candle_nn::VarBuilder;
use float8::F8E4M3;
use ndnpy::types::half::{bf16, f16};
use ndnpy::{dtype::ByteOrder, npz::Compression, dtype::DType as NpyDType, dtype::Header, dtype::Kind, NpzMmap, NpzReader};
use std::io::Cursor;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

/// The tensors of an `.npz` archive for candle's `VarBuilder`
/// (`VarBuilder::from_backend(Box::new(backend), dtype, device)`).
///
/// The archive is mapped and its directory read once. A tensor is loaded
/// when the model asks for it, in the member's own type (see
/// [`crate::any_to_tensor_with`]), then converted to the `VarBuilder`'s
/// dtype:
/// - a stored member in little-endian C order (what `np.savez` writes on
///   every common machine) is copied once, from the mapping, into the
///   tensor's buffer, whatever its alignment in the archive;
/// - any other member (compressed, big-endian, Fortran order, a sub-array
///   dtype) is read by [`NpzReader`], which inflates, checks its CRC-32,
///   swaps and reorders it, and the result moves into the tensor.
///
/// Stored members' CRC-32s are not checked (that would read every byte
/// twice; candle's own loaders check nothing either).
pub struct NpzBackend {
    map: Arc<NpzMmap>,
    /// The reader for members that are not loaded from the mapping; one
    /// at a time, as a reader has one position.
    reader: Mutex<NpzReader<Cursor<Shared>>>,
    options: CandleOptions,
}

/// The mapping, shared by the backend and its reader.
struct Shared(Arc<NpzMmap>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl NpzBackend {
    /// Maps the archive at `path` with default [`CandleOptions`] (raw
    /// `ml_dtypes` members refused, names looked up as candle gives them).
    ///
    /// # Safety
    ///
    /// Until the backend (and every `VarBuilder` holding it) is dropped, the
    /// archive must not be truncated or changed, by this process or
    /// another: the mapping would see its data change under shared
    /// references, or the process is killed by `SIGBUS` (the contract of
    /// [`NpzMmap::open`], and of candle's
    /// `VarBuilder::from_mmaped_safetensors`).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// # let mut w = ndnpy::NpzWriter::create(&path)?;
    /// # w.add("w", &ndarray::array![1.0f64])?;
    /// # w.finish()?;
    /// // SAFETY: nothing writes or truncates the archive while it is mapped.
    /// let backend = unsafe { ndnpy_candle::NpzBackend::open(&path)? };
    /// assert_eq!(backend.names(), ["w"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn open<P: AsRef<Path>>(path: P) -> Result<Self> {
        // SAFETY: the caller's contract is this function's.
        unsafe { Self::open_with(path, &CandleOptions::default()) }
    }

    /// [`NpzBackend::open`] with options: the format of raw members
    /// ([`CandleOptions::raw_as`]) and the separator of the archive's
    /// names ([`CandleOptions::separator`]).
    ///
    /// # Safety
    ///
    /// As for [`NpzBackend::open`].
    ///
    /// ```
    /// use candle_core::{DType, Device};
    /// use candle_nn::VarBuilder;
    /// use ndnpy_candle::{CandleOptions, MlDtype, NpzBackend};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// // A JAX checkpoint: bfloat16 saved as raw '<V2' items, '/' in names.
    /// let kernel = ndarray::Array2::from_elem((2, 3), ndnpy::types::half::bf16::from_f32(0.5));
    /// let mut w = ndnpy::NpzWriter::create(&path)?;
    /// w.add("params/dense/kernel", &kernel)?;
    /// w.finish()?;
    ///
    /// let options = CandleOptions::default().raw_as(MlDtype::Bfloat16).separator('/');
    /// // SAFETY: nothing writes or truncates the archive while it is mapped.
    /// let backend = unsafe { NpzBackend::open_with(&path, &options)? };
    /// let vb = VarBuilder::from_backend(Box::new(backend), DType::F32, Device::Cpu);
    /// let k = vb.pp("params").pp("dense").get((2, 3), "kernel")?;
    /// assert_eq!(k.dtype(), DType::F32);
    /// assert_eq!(k.sum_all()?.to_scalar::<f32>()?, 3.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn open_with<P: AsRef<Path>>(path: P, options: &CandleOptions) -> Result<Self> {
        // SAFETY: the caller's contract is NpzMmap::open's.
        let map = Arc::new(unsafe { NpzMmap::open(path) }.map_err(wrap)?);
        let reader = NpzReader::new(Cursor::new(Shared(map.clone()))).map_err(wrap)?;
        Ok(NpzBackend {
            map,
            reader: Mutex::new(reader),
            options: options.clone(),
        })
    }

    /// The archive's array names (members without `.npy`), in archive
    /// order.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut w = ndnpy::NpzWriter::create(&path)?;
    /// w.add("b", &ndarray::array![1u8])?;
    /// w.add("a", &ndarray::array![2u8])?;
    /// w.finish()?;
    /// // SAFETY: nothing writes or truncates the archive while it is mapped.
    /// let backend = unsafe { ndnpy_candle::NpzBackend::open(&path)? };
    /// assert_eq!(backend.names(), ["b", "a"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn names(&self) -> Vec<String> {
        self.map.names()
    }

    /// Tensor `name` (a name as candle asks for it, see
    /// [`CandleOptions::separator`]) on `device`, in the member's own type.
    ///
    /// ```
    /// use candle_core::{DType, Device};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.npz");
    /// let mut w = ndnpy::NpzWriter::create(&path)?;
    /// w.add("ids", &ndarray::array![[1i64, 2], [3, 4]].reversed_axes())?; // Fortran order
    /// w.finish()?;
    /// // SAFETY: nothing writes or truncates the archive while it is mapped.
    /// let backend = unsafe { ndnpy_candle::NpzBackend::open(&path)? };
    /// let ids = backend.load("ids", &Device::Cpu)?;
    /// assert_eq!(ids.dtype(), DType::I64);
    /// assert_eq!(ids.to_vec2::<i64>()?, [[1, 3], [2, 4]]);
    /// assert!(backend.load("nope", &Device::Cpu).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(&self, name: &str, device: &Device) -> Result<Tensor> {
        let key = self.key(name);
        let mut reader = self.reader.lock().unwrap_or_else(PoisonError::into_inner);
        if !reader.contains(&key) {
            return Err(Error::CannotFindTensor {
                path: name.to_owned(),
            }
            .bt());
        }
        let info = reader.member_info(&key).map_err(wrap)?;
        if info.compression == Compression::Stored && !info.encrypted {
            let start = usize::try_from(info.data_start).ok();
            let len = usize::try_from(info.size).ok();
            let npy = start
                .zip(len)
                .and_then(|(s, n)| self.map.as_bytes().get(s..s.checked_add(n)?));
            if let Some(npy) = npy {
                // `read_from` leaves the slice at the first byte of data.
                let mut data = npy;
                let header = Header::read_from(&mut data).map_err(wrap)?;
                if raw_pairs(&header) && says_big(&npy[..npy.len() - data.len()]) {
                    return Err(big_raw(&key));
                }
                if let Some(tensor) = from_mapped(&header, data, self.options.raw_as, device)? {
                    return Ok(tensor);
                }
            }
        } else if raw_pairs(&reader.header(&key).map_err(wrap)?) {
            let mut prefix = Vec::new();
            let member = reader.member_reader(&key).map_err(wrap)?;
            // The header is at most a few kilobytes past the magic and
            // length (ndnpy's reader refused it otherwise).
            std::io::Read::read_to_end(&mut std::io::Read::take(member, 1 << 20), &mut prefix)
                .map_err(Error::wrap)?;
            if says_big(&prefix) {
                return Err(big_raw(&key));
            }
        }
        let array = reader.read_any(&key).map_err(wrap)?;
        drop(reader);
        any_to_tensor_with(&array, device, &self.options)
    }

    /// The archive's name for candle's `name`.
    fn key(&self, name: &str) -> String {
        match self.options.separator {
            Some(separator) => name.replace('.', separator.encode_utf8(&mut [0; 4])),
            None => name.to_owned(),
        }
    }
}

/// Whether `header` is of raw 2-byte items (`V2`): those whose byte order
/// only the header's text says (the parsed dtype drops it, as NumPy does).
fn raw_pairs(header: &Header) -> bool {
    let s = match &header.dtype {
        NpyDType::Scalar(s) => s,
        NpyDType::SubArray(inner, _) => match &**inner {
            NpyDType::Scalar(s) => s,
            _ => return false,
        },
        _ => return false,
    };
    s.kind == Kind::Void && s.size == 2
}

/// Whether the header at the start of `npy` marks raw items big-endian
/// (`'>V2'`, what ml_dtypes writes for a byte-swapped bfloat16 array).
/// Only the header's text is read: the data after it may hold any bytes.
fn says_big(npy: &[u8]) -> bool {
    let (start, len): (usize, _) = match npy.get(6) {
        Some(1) => (
            10,
            npy.get(8..10)
                .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize),
        ),
        Some(_) => (
            12,
            npy.get(8..12)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
        ),
        None => (0, None),
    };
    let Some(len) = len else { return false };
    let end = start.saturating_add(len).min(npy.len());
    npy.get(start..end)
        .is_some_and(|text| text.windows(2).any(|w| w == b">V"))
}

/// The refusal of big-endian raw items: decoded as little-endian (all the
/// reader can do once the mark is dropped) their values would be wrong.
fn big_raw(key: &str) -> Error {
    Error::Msg(format!(
        "member '{key}' holds big-endian raw items ('>V2', a byte-swapped ml_dtypes array), \
         which would be read with their bytes swapped; save it little-endian \
         (arr.astype(arr.dtype.newbyteorder('<'))) or convert it with ndnpy's safetensors conversion"
    ))
    .bt()
}

/// A tensor decoded straight from a stored member's bytes in the mapping,
/// when they are little-endian (or single bytes) in C order; `None` for
/// every other member, which the reader reads (and refuses with the right
/// error, when it does).
fn from_mapped(
    header: &Header,
    data: &[u8],
    raw_as: Option<MlDtype>,
    device: &Device,
) -> Result<Option<Tensor>> {
    let NpyDType::Scalar(s) = &header.dtype else {
        return Ok(None);
    };
    let long_dims = header.shape.iter().filter(|&&d| d > 1).count();
    let c_order = !header.fortran_order || long_dims <= 1;
    let little = s.order != ByteOrder::Big || s.size == 1;
    let Some(data) = header.data_len().ok().and_then(|n| data.get(..n)) else {
        return Ok(None);
    };
    if !c_order || !little {
        return Ok(None);
    }
    let shape = header.shape.as_slice();
    let tensor = match (s.kind, s.size, raw_as) {
        (Kind::Bool, 1, _) => decode(data, shape, device, |[b]| u8::from(b != 0)),
        (Kind::Int, 1, _) => decode(data, shape, device, |[b]| i16::from(b as i8)),
        (Kind::Int, 2, _) => decode(data, shape, device, i16::from_le_bytes),
        (Kind::Int, 4, _) => decode(data, shape, device, i32::from_le_bytes),
        (Kind::Int, 8, _) => decode(data, shape, device, i64::from_le_bytes),
        (Kind::UInt, 1, _) => decode(data, shape, device, |[b]| b),
        (Kind::UInt, 2, _) => decode(data, shape, device, |b| u32::from(u16::from_le_bytes(b))),
        (Kind::UInt, 4, _) => decode(data, shape, device, u32::from_le_bytes),
        (Kind::Float, 2, _) => decode(data, shape, device, f16::from_le_bytes),
        (Kind::Float, 4, _) => decode(data, shape, device, f32::from_le_bytes),
        (Kind::Float, 8, _) => decode(data, shape, device, f64::from_le_bytes),
        (Kind::Void, 2, Some(MlDtype::Bfloat16)) => {
            decode(data, shape, device, bf16::from_le_bytes)
        }
        // ml_dtypes writes '<f1' for float8_e5m2 alone, whatever raw_as
        // says about raw ('<V1') items.
        (Kind::Float, 1, _) | (Kind::Void, 1, Some(MlDtype::Float8E5M2)) => {
            decode(data, shape, device, |[b]| f16::from_bits(u16::from(b) << 8))
        }
        (Kind::Void, 1, Some(MlDtype::Float8E4M3Fn)) => {
            decode(data, shape, device, |[b]| F8E4M3::from_bits(b))
        }
        _ => return Ok(None),
    };
    tensor.map(Some)
}

/// A tensor of the items `data` holds, `N` bytes each, decoded by `item`:
/// one pass from the mapping into the tensor's buffer, whatever `data`'s
/// alignment.
fn decode<T: WithDType, const N: usize>(
    data: &[u8],
    shape: &[usize],
    device: &Device,
    item: impl Fn([u8; N]) -> T,
) -> Result<Tensor> {
    let (items, _) = data.as_chunks::<N>();
    Tensor::from_vec(
        items.iter().map(|&b| item(b)).collect::<Vec<T>>(),
        shape,
        device,
    )
}

impl SimpleBackend for NpzBackend {
    fn get(
        &self,
        s: Shape,
        name: &str,
        _: candle_nn::Init,
        dtype: DType,
        dev: &Device,
    ) -> Result<Tensor> {
        let tensor = self.load(name, dev)?;
        if tensor.shape() != &s {
            return Err(Error::UnexpectedShape {
                msg: format!("shape mismatch for {name}"),
                expected: s,
                got: tensor.shape().clone(),
            }
            .bt());
        }
        tensor.to_dtype(dtype)
    }

    fn get_unchecked(&self, name: &str, dtype: DType, dev: &Device) -> Result<Tensor> {
        self.load(name, dev)?.to_dtype(dtype)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        let key = self.key(name);
        self.reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&key)
    }
}

/// A `VarBuilder` over the archive at `path`: [`NpzBackend::open_with`]
/// handed to `VarBuilder::from_backend`, whose tensors come out in `dtype`
/// on `device`.
///
/// # Safety
///
/// As for [`NpzBackend::open`]: the archive must not change while the
/// `VarBuilder` (or anything built from it that still maps it) lives.
///
/// ```
/// use candle_core::{DType, Device};
/// use ndnpy_candle::CandleOptions;
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("a.npz");
/// let mut w = ndnpy::NpzWriter::create(&path)?.codec(ndnpy::npz::Codec::deflate());
/// w.add("bias", &ndarray::array![1.0f64, 2.0])?;
/// w.finish()?;
/// // SAFETY: nothing writes or truncates the archive while it is mapped.
/// let vb = unsafe {
///     ndnpy_candle::npz_var_builder(&path, &CandleOptions::default(), DType::F16, &Device::Cpu)?
/// };
/// assert!(vb.contains_tensor("bias"));
/// assert_eq!(vb.get(2, "bias")?.dtype(), DType::F16);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub unsafe fn npz_var_builder<P: AsRef<Path>>(
    path: P,
    options: &CandleOptions,
    dtype: DType,
    device: &Device,
) -> Result<VarBuilder<'static>> {
    // SAFETY: the caller's contract is this function's.
    let backend = unsafe { NpzBackend::open_with(path, options)? };
    Ok(VarBuilder::from_backend(
        Box::new(backend),
        dtype,
        device.clone(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndnpy::dtype::Version;

    fn header(descr: &str, shape: &[usize], fortran_order: bool) -> Header {
        Header {
            dtype: NpyDType::parse(descr).unwrap(),
            shape: shape.to_vec(),
            fortran_order,
            version: Version::V1,
        }
    }

    #[test]
    fn only_little_endian_c_order_bytes_are_decoded_in_place() {
        let dev = Device::Cpu;
        // Six bytes from an odd address: the decoder needs no alignment.
        let bytes = [0u8, 1, 0, 2, 0, 3, 0];
        let t = from_mapped(&header("<i2", &[3], false), &bytes[1..], None, &dev)
            .unwrap()
            .unwrap();
        assert_eq!(t.to_vec1::<i16>().unwrap(), [1, 2, 3]);
        let column = from_mapped(&header("<i2", &[3, 1], true), &bytes[1..], None, &dev);
        assert!(column.unwrap().is_some());
        // Data shorter than the header declares: left to the reader's error.
        let short = from_mapped(&header("<i2", &[3], false), &bytes[1..5], None, &dev);
        assert!(short.unwrap().is_none());
        assert!(
            from_mapped(&header(">i2", &[3], false), &bytes[1..], None, &dev)
                .unwrap()
                .is_none()
        );
        assert!(
            from_mapped(&header("<i2", &[1, 3], true), &bytes[1..], None, &dev)
                .unwrap()
                .is_some()
        );
        assert!(
            from_mapped(&header("<u1", &[2, 3], true), &bytes[1..], None, &dev)
                .unwrap()
                .is_none()
        );
        // Raw items only with a format, and of its size.
        let raw = header("<V2", &[3], false);
        assert!(from_mapped(&raw, &bytes[1..], None, &dev)
            .unwrap()
            .is_none());
        let bf16 = from_mapped(&raw, &bytes[1..], Some(MlDtype::Bfloat16), &dev).unwrap();
        assert_eq!(bf16.unwrap().dtype(), DType::BF16);
        let f8 = from_mapped(&raw, &bytes[1..], Some(MlDtype::Float8E4M3Fn), &dev).unwrap();
        assert!(f8.is_none());
    }

    #[test]
    fn f1_is_float8_e5m2_whatever_raw_as_says() {
        let dev = Device::Cpu;
        // 0x3C is 1.0 as float8_e5m2 (1.5 as float8_e4m3fn).
        let f1 = header("<f1", &[1], false);
        for raw_as in [None, Some(MlDtype::Float8E4M3Fn), Some(MlDtype::Float8E5M2)] {
            let t = from_mapped(&f1, &[0x3C], raw_as, &dev).unwrap().unwrap();
            assert_eq!(t.dtype(), DType::F16, "{raw_as:?}");
            assert_eq!(
                t.to_dtype(DType::F32).unwrap().to_vec1::<f32>().unwrap(),
                [1.0]
            );
        }
    }
}
