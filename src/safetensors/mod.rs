//! safetensors (Hugging Face's format for model weights) beside `.npz`:
//! [`npz_to_safetensors`] and [`safetensors_to_npz`] convert whole
//! checkpoints in both directions, [`SafetensorsFile`] reads the
//! tensors of a safetensors file as [`AnyArray`](crate::AnyArray)s, and [`SafetensorsIndex`]
//! reads its header alone (for positioned reads). The format itself (the
//! JSON header, offsets, alignment, validation) is the `safetensors`
//! crate's, the Hub's own implementation; nothing here parses or spells it.
//!
//! **Types.** Both directions carry `bool`, the integers of 8 to 64 bits,
//! `float16`, `float32`, `float64` and `complex64` as they are. NumPy has
//! no bfloat16 or float8: `ml_dtypes` saves them as raw items (`'<V2'` for
//! bfloat16, `'<V1'` for float8_e4m3fn and its other 1-byte formats,
//! `'<f1'` for float8_e5m2), and nothing in the file says which format
//! they hold. [`SafetensorsOptions::raw_as`] says it ([`MlDtype`]; the
//! CLI's `--as`); without it such members are refused with an error that
//! says so. The other way, `BF16` tensors become `'<V2'` members,
//! `F8_E4M3` `'<V1'` and `F8_E5M2` `'<f1'`, the bytes `np.save` writes for
//! `ml_dtypes`' arrays (read them with `np.load(...).view(ml_dtypes.bfloat16)`
//! or with [`AnyArray::void_as`](crate::AnyArray::void_as)). Strings, records, objects, datetimes,
//! `complex128` and long doubles have no safetensors type and are refused
//! with an error naming the member; so are the safetensors types NumPy
//! files have no spelling for (`F8_E8M0`, the `FNUZ` formats, `F4`, `F6`).
//!
//! **Layout.** safetensors holds little-endian, C-order data. From a
//! mapped archive ([`crate::NpzMmap`]), stored members already in that form
//! are written straight from the mapping, without a copy; big-endian and
//! Fortran-order members are converted, and compressed members inflated,
//! one at a time, so memory holds at most one member's data whatever the
//! size of the checkpoint. An [`crate::NpzReader`] works too ([`NpzSource`]),
//! each member then read into memory in turn; the other way, a
//! [`SafetensorsFile`] (mapped) or a [`SafetensorsReader`] (any `Read +
//! Seek`) ([`TensorSource`]) hands each tensor's bytes to the archive in
//! bounded memory.
//!
//! **Names** are kept as they are (`params/encoder/layer_0/kernel` stays
//! so). safetensors keeps tensors in its own order (by alignment, then
//! name); an archive written back from it follows that order.
//!
//! **Metadata.** A safetensors file may carry `__metadata__`, a map of
//! strings. [`SafetensorsFile::metadata`] returns it; [`safetensors_to_npz`]
//! writes it as the member [`METADATA_MEMBER`], an `(n, 2)` array of
//! strings (`dict(np.load(path)["__metadata__"])` in Python); and
//! [`npz_to_safetensors`] turns such a member back into the file's
//! metadata, merged with [`SafetensorsOptions::metadata`].
//!
//! Layer 7, above the archives (beside `sparse/`): uses `crate::npz` to read
//! and write members, `crate::format` for their headers and `crate::array`
//! for values. Nothing below imports it.

mod dtypes;
mod file;
mod index;
mod layout;
mod reader;
mod to_npz;
mod to_safetensors;

pub use file::SafetensorsFile;
pub use index::SafetensorsIndex;
pub use reader::{SafetensorsReader, TensorSource};
pub use to_npz::{safetensors_to_npz, safetensors_to_npz_with};
pub use to_safetensors::{npz_to_safetensors, npz_to_safetensors_with, NpzSource};

use crate::error::Error;
use crate::options::WriteOptions;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// The `.npz` member that holds a safetensors file's `__metadata__`: an
/// `(n, 2)` array of strings, one `(key, value)` row per entry, sorted by
/// key.
///
/// ```
/// assert_eq!(ndnpy::safetensors::METADATA_MEMBER, "__metadata__");
/// ```
pub const METADATA_MEMBER: &str = "__metadata__";

/// The `ml_dtypes` number format that raw `.npy` items hold (see the
/// [module docs](self)): what `np.save` wrote as `'<V2'`, `'<V1'` or
/// `'<f1'` because NumPy has no such type.
///
/// ```
/// use ndnpy::safetensors::MlDtype;
///
/// let t: MlDtype = "bfloat16".parse()?;
/// assert_eq!(t, MlDtype::Bfloat16);
/// assert_eq!(t.name(), "bfloat16");
/// assert_eq!(t.itemsize(), 2);
/// assert!("float8_e4m3".parse::<MlDtype>().is_err());
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MlDtype {
    /// `ml_dtypes.bfloat16` (saved as `'<V2'`): safetensors' `BF16`.
    Bfloat16,
    /// `ml_dtypes.float8_e4m3fn` (saved as `'<V1'`): safetensors' `F8_E4M3`.
    Float8E4M3Fn,
    /// `ml_dtypes.float8_e5m2` (saved as `'<f1'`): safetensors' `F8_E5M2`.
    Float8E5M2,
}

impl MlDtype {
    /// Every format, in the order of their names in error messages.
    ///
    /// ```
    /// use ndnpy::safetensors::MlDtype;
    /// assert!(MlDtype::ALL.iter().all(|t| t.name().parse::<MlDtype>().ok() == Some(*t)));
    /// ```
    pub const ALL: [MlDtype; 3] = [
        MlDtype::Bfloat16,
        MlDtype::Float8E4M3Fn,
        MlDtype::Float8E5M2,
    ];

    /// `ml_dtypes`' name of the format (also the CLI's `--as` value).
    ///
    /// ```
    /// assert_eq!(ndnpy::safetensors::MlDtype::Float8E5M2.name(), "float8_e5m2");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            MlDtype::Bfloat16 => "bfloat16",
            MlDtype::Float8E4M3Fn => "float8_e4m3fn",
            MlDtype::Float8E5M2 => "float8_e5m2",
        }
    }

    /// Bytes per item.
    ///
    /// ```
    /// assert_eq!(ndnpy::safetensors::MlDtype::Float8E4M3Fn.itemsize(), 1);
    /// ```
    pub fn itemsize(self) -> usize {
        match self {
            MlDtype::Bfloat16 => 2,
            MlDtype::Float8E4M3Fn | MlDtype::Float8E5M2 => 1,
        }
    }
}

impl fmt::Display for MlDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MlDtype {
    type Err = Error;

    /// Parses `ml_dtypes`' name of a format (`bfloat16`, `float8_e4m3fn`,
    /// `float8_e5m2`).
    fn from_str(s: &str) -> Result<Self, Error> {
        MlDtype::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| Error::UnsupportedDType {
                dtype: s.to_owned(),
                reason: format!(
                    "not an ml_dtypes format ndnpy converts (one of: {})",
                    MlDtype::ALL.map(MlDtype::name).join(", ")
                ),
            })
    }
}

/// Options of the conversions ([`npz_to_safetensors_with`],
/// [`safetensors_to_npz_with`]); the default converts every member whose
/// type is unambiguous, writes no extra metadata and writes archives
/// uncompressed (as `np.savez`).
///
/// Each field has a builder method of the same name; read the field to get
/// the value back.
///
/// ```
/// use ndnpy::safetensors::{MlDtype, SafetensorsOptions};
///
/// let options = SafetensorsOptions::default()
///     .raw_as(MlDtype::Bfloat16)
///     .metadata([("format".to_owned(), "pt".to_owned())].into())
///     .compressed(true);
/// assert_eq!(options.raw_as, Some(MlDtype::Bfloat16));
/// assert_eq!(options.metadata["format"], "pt");
/// assert!(options.compressed);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SafetensorsOptions {
    /// The format of raw members (`'<V2'`, `'<V1'`) of its item size when
    /// writing safetensors; `None` (the default) refuses them. A raw
    /// member of another item size is refused too, unless
    /// [`SafetensorsOptions::raw_as_also`] gives a format of its size.
    /// (`'<f1'` is always float8_e5m2: ml_dtypes writes no other format so.)
    pub raw_as: Option<MlDtype>,
    /// A second format, for raw members of the other item size than
    /// [`SafetensorsOptions::raw_as`]'s: one file may hold bfloat16
    /// (`'<V2'`) and float8_e4m3fn (`'<V1'`) members. Set by a second
    /// [`SafetensorsOptions::raw_as`] call with a format of the other size.
    pub raw_as_also: Option<MlDtype>,
    /// Entries for the safetensors file's `__metadata__`, over (replacing
    /// keys of) those of the archive's [`METADATA_MEMBER`].
    pub metadata: HashMap<String, String>,
    /// Whether [`safetensors_to_npz_with`] deflates the members (as
    /// `np.savez_compressed`); the default stores them (as `np.savez`), so
    /// that the archive can be mapped and viewed without copying.
    pub compressed: bool,
    /// How [`npz_to_safetensors_with`] writes its file: durably
    /// ([`WriteOptions::durable`]) or not, keeping a spare
    /// ([`WriteOptions::spare`], off by default) or not. The
    /// path is written as `write_npy` writes one (symbolic links followed,
    /// devices and hard-linked files written in place, mode and owner
    /// kept).
    pub write_options: WriteOptions,
}

impl SafetensorsOptions {
    /// Sets [`SafetensorsOptions::raw_as`].
    ///
    /// ```
    /// use ndnpy::safetensors::{MlDtype, SafetensorsOptions};
    /// let o = SafetensorsOptions::default().raw_as(MlDtype::Float8E5M2);
    /// assert_eq!(o.raw_as, Some(MlDtype::Float8E5M2));
    /// ```
    ///
    /// Called again with a format of the other item size, it sets
    /// [`SafetensorsOptions::raw_as_also`]: each item size has its format.
    ///
    /// ```
    /// use ndnpy::safetensors::{MlDtype, SafetensorsOptions};
    /// let o = SafetensorsOptions::default()
    ///     .raw_as(MlDtype::Bfloat16)
    ///     .raw_as(MlDtype::Float8E4M3Fn);
    /// assert_eq!(o.raw_as, Some(MlDtype::Bfloat16));
    /// assert_eq!(o.raw_as_also, Some(MlDtype::Float8E4M3Fn));
    /// ```
    pub fn raw_as(mut self, format: MlDtype) -> Self {
        match self.raw_as {
            Some(first) if first.itemsize() != format.itemsize() => self.raw_as_also = Some(format),
            _ => self.raw_as = Some(format),
        }
        self
    }

    /// The format for raw items of `itemsize` bytes: the one of that size,
    /// or else [`SafetensorsOptions::raw_as`] (whose size the caller's
    /// error then names), or none.
    pub(crate) fn raw_format(&self, itemsize: usize) -> Option<MlDtype> {
        [self.raw_as, self.raw_as_also]
            .into_iter()
            .flatten()
            .find(|f| f.itemsize() == itemsize)
            .or(self.raw_as)
    }

    /// Sets [`SafetensorsOptions::metadata`].
    ///
    /// ```
    /// let o = ndnpy::safetensors::SafetensorsOptions::default()
    ///     .metadata([("format".to_owned(), "np".to_owned())].into());
    /// assert_eq!(o.metadata.len(), 1);
    /// ```
    pub fn metadata(mut self, metadata: HashMap<String, String>) -> Self {
        self.metadata = metadata;
        self
    }

    /// Sets [`SafetensorsOptions::compressed`].
    ///
    /// ```
    /// assert!(ndnpy::safetensors::SafetensorsOptions::default().compressed(true).compressed);
    /// ```
    pub fn compressed(mut self, compressed: bool) -> Self {
        self.compressed = compressed;
        self
    }

    /// Sets [`SafetensorsOptions::write_options`].
    ///
    /// ```
    /// use ndnpy::{safetensors::SafetensorsOptions, WriteOptions};
    /// let o = SafetensorsOptions::default().write_options(WriteOptions::default().durable(true));
    /// assert!(o.write_options.is_durable());
    /// ```
    pub fn write_options(mut self, options: WriteOptions) -> Self {
        self.write_options = options;
        self
    }
}

/// Keeps the source traits ([`NpzSource`], [`TensorSource`]) to the types
/// implemented here.
mod sealed {
    pub trait Sealed {}
}

/// The error for a file that the safetensors crate refuses.
fn invalid_file(reason: impl fmt::Display) -> Error {
    Error::InvalidSafetensors {
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for t in MlDtype::ALL {
            assert_eq!(t.name().parse::<MlDtype>().unwrap(), t);
            assert_eq!(t.to_string(), t.name());
        }
        let err = "int4".parse::<MlDtype>().unwrap_err().to_string();
        assert!(
            err.contains("bfloat16, float8_e4m3fn, float8_e5m2"),
            "{err}"
        );
    }
}
