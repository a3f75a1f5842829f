//! `--as`: reading raw one- and two-byte items as the `ml_dtypes` number
//! formats they hold (bfloat16 is saved by `np.save` as `<V2`,
//! float8_e4m3fn as `<V1`, float8_e5m2 as `<f1`; the file cannot say which).
//! The array is then read as `float32` values, exactly the values JAX sees,
//! by every reading command (`show`, `stats`, `diff`, `convert`).

use crate::input::{DataSource, Opened};
use ndnpy::{dtype::DType, dtype::Kind, types::Float8E4M3Fn, types::Float8E5M2, types::MlFloat};
use std::io;

/// The formats `--as` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AsType {
    Bfloat16,
    #[value(name = "float8_e4m3fn")]
    Float8E4m3fn,
    #[value(name = "float8_e5m2")]
    Float8E5m2,
}

impl AsType {
    /// The raw item size of the format.
    fn size(self) -> usize {
        match self {
            AsType::Bfloat16 => 2,
            AsType::Float8E4m3fn | AsType::Float8E5m2 => 1,
        }
    }

    /// Decodes one raw item.
    fn decode(self, item: &[u8]) -> f32 {
        match self {
            AsType::Bfloat16 => {
                ndnpy::types::half::bf16::from_le_bytes([item[0], item[1]]).to_f32()
            }
            AsType::Float8E4m3fn => MlFloat::to_f32(Float8E4M3Fn::from_bits(item[0])),
            AsType::Float8E5m2 => MlFloat::to_f32(Float8E5M2::from_bits(item[0])),
        }
    }
}

/// The `--as` formats of this run (set once by `main`): at most one per
/// item size, so that bfloat16 ('<V2') and float8 ('<V1') arrays can be
/// read in one run.
static AS_TYPES: std::sync::OnceLock<Vec<AsType>> = std::sync::OnceLock::new();

/// Sets the `--as` formats of this run; the first call wins. Two formats
/// of one item size are refused (which would apply is not said).
pub fn set(as_types: &[AsType]) -> Result<(), String> {
    for (i, a) in as_types.iter().enumerate() {
        if let Some(b) = as_types[..i]
            .iter()
            .find(|b| b.size() == a.size() && *b != a)
        {
            return Err(format!(
                "--as {} and --as {} both name {}-byte items: give one format per item size",
                name(*b),
                name(*a),
                a.size()
            ));
        }
    }
    let _ = AS_TYPES.set(as_types.to_vec());
    Ok(())
}

/// The `--as` value spelling of `as_type`.
fn name(as_type: AsType) -> String {
    use clap::ValueEnum;
    as_type
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// The `--as` formats of this run (`convert` to safetensors writes raw
/// items as those types).
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
pub fn current() -> &'static [AsType] {
    AS_TYPES.get().map_or(&[], Vec::as_slice)
}

/// Whether `dtype` is raw items of `size` bytes: void, or (for one byte)
/// `ml_dtypes`'s `<f1`.
pub fn raw_items(dtype: &DType, size: usize) -> bool {
    match dtype {
        DType::Scalar(s) => {
            s.size == size && (s.kind == Kind::Void || (s.kind == Kind::Float && size == 1))
        }
        _ => false,
    }
}

/// The array as `--as` reads it: raw items of a format's size become
/// `float32` values; everything else is left alone.
pub fn apply(opened: Opened<'_>) -> Opened<'_> {
    // '<f1' is what ml_dtypes writes for float8_e5m2 alone: another
    // 1-byte format does not apply to it (its values would be wrong).
    let f1 = matches!(&opened.header.dtype, DType::Scalar(s) if s.kind == Kind::Float);
    let Some(as_type) = current()
        .iter()
        .copied()
        .find(|t| raw_items(&opened.header.dtype, t.size()) && (!f1 || *t == AsType::Float8E5m2))
    else {
        return opened;
    };
    let from = as_type.size();
    let mut header = opened.header.clone();
    header.dtype = DType::parse("<f4").expect("a valid dtype");
    Opened {
        header,
        data_offset: opened.data_offset,
        available: opened.available / from as u64 * 4,
        data: Box::new(Widened {
            inner: opened.data,
            as_type,
            from,
            raw: Vec::new(),
            swapped: opened.swapped_raw,
        }),
        swapped_raw: false,
    }
}

/// Raw items read as `float32`: offsets and lengths are in the `float32`
/// data (whole items, as every command asks).
struct Widened<'a> {
    inner: Box<dyn DataSource + 'a>,
    as_type: AsType,
    from: usize,
    raw: Vec<u8>,
    /// The items are big-endian (`'>V2'`): reversed before decoding.
    swapped: bool,
}

impl DataSource for Widened<'_> {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if !offset.is_multiple_of(4) || !buf.len().is_multiple_of(4) {
            return Err(io::Error::other("internal: a read of part of an item"));
        }
        let items = buf.len() / 4;
        self.raw.resize(items * self.from, 0);
        self.inner
            .read_at(offset / 4 * self.from as u64, &mut self.raw)?;
        for (out, item) in buf
            .chunks_exact_mut(4)
            .zip(self.raw.chunks_exact(self.from))
        {
            let value = if self.swapped {
                let mut little = [0u8; 2];
                little[..item.len()].copy_from_slice(item);
                little[..item.len()].reverse();
                self.as_type.decode(&little[..item.len()])
            } else {
                self.as_type.decode(item)
            };
            out.copy_from_slice(&value.to_le_bytes());
        }
        Ok(())
    }
}
