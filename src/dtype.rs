//! NumPy type descriptors: parse and format the `descr` value of a header.
//!
//! (Interface fixed; implementation in progress.)

use crate::error::{Error, Result};
use crate::header::literal::Value;
use std::fmt;

/// Byte order of a scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// `<`
    Little,
    /// `>`
    Big,
    /// `|`: one-byte types, strings of bytes, void, object.
    NotApplicable,
}

impl ByteOrder {
    /// The byte order of the machine the code runs on.
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "little") {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
}

/// The kind character of a scalar type string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `b`
    Bool,
    /// `i`
    Int,
    /// `u`
    UInt,
    /// `f`
    Float,
    /// `c`
    Complex,
    /// `m`
    Timedelta,
    /// `M`
    Datetime,
    /// `S` (also spelled `a`)
    Bytes,
    /// `U`
    Unicode,
    /// `V`
    Void,
    /// `O`
    Object,
}

/// A scalar type such as `<f8`, `|S5` or `<M8[ns]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scalar {
    /// Byte order, normalised as NumPy does (`=` and no mark become native,
    /// one-byte and byte-order-free types become `|`).
    pub order: ByteOrder,
    /// The kind.
    pub kind: Kind,
    /// Item size in bytes (for `U`, four bytes per character).
    pub size: usize,
    /// Datetime / timedelta unit text between brackets, e.g. `ns` or `10ms`.
    pub unit: Option<String>,
}

/// One field of a record type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// Field name; empty for padding entries `('', '|V4')`.
    pub name: String,
    /// Title of a `(title, name)` pair.
    pub title: Option<String>,
    /// Field type; a `(name, descr, shape)` entry has a [`DType::SubArray`].
    pub dtype: DType,
}

/// A NumPy type descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DType {
    /// A scalar type string.
    Scalar(Scalar),
    /// A list of fields.
    Record(Vec<Field>),
    /// `(descr, shape)`: a fixed-shape block of the inner type.
    SubArray(Box<DType>, Vec<usize>),
}

impl DType {
    /// Parses a descriptor from a parsed header value.
    pub(crate) fn from_value(value: &Value) -> Result<DType> {
        let _ = value;
        Err(Error::BadDescr {
            descr: String::new(),
            reason: "stub".into(),
        })
    }

    /// Parses a type string such as `"<f8"`.
    pub fn parse(descr: &str) -> Result<DType> {
        let _ = descr;
        Err(Error::BadDescr {
            descr: descr.into(),
            reason: "stub".into(),
        })
    }

    /// Size of one element in bytes, or `None` on overflow.
    pub fn itemsize(&self) -> Option<usize> {
        None
    }

    /// The descriptor as Python's `repr` spells it in a header written by `np.save`.
    pub fn descr(&self) -> String {
        String::new()
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("")
    }
}
