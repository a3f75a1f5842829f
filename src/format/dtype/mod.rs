//! NumPy type descriptors: parse and format the `descr` value of a header.
//!
//! Parsing follows what `numpy.lib.format.descr_to_dtype` (and so `np.load`)
//! accepts, and [`DType::descr`] spells a descriptor exactly as `np.save`
//! writes it, `repr(numpy.lib.format.dtype_to_descr(dtype))`, as checked
//! against NumPy 2.x on 64-bit Linux.
//!
//! This file is the model (`DType`, `Scalar`, their rules); the text is in
//! `parse.rs` (`DType::parse`, `DType::from_value`) and `descr.rs`
//! (`DType::descr`), which import this file and not the other way round.
//!
//! Deliberate differences from NumPy:
//! - type strings with stray signs, spaces or old-style datetime units
//!   (`'<i+8'`, `'i 8'`, `'M8[ 2ms]'`, `'M8[ns/2]'`), which `np.dtype`
//!   tolerates through C library quirks, are refused;
//! - a top-level sub-array `('<f8', (2,))` is formatted as such, where NumPy
//!   would write the opaque `'|V16'` (`np.save` never writes one: it turns a
//!   sub-array dtype into extra array dimensions);
//! - field titles must be strings (NumPy takes any Python object);
//! - NumPy 2's variable-width string dtype (`'T'`) is refused: it never
//!   appears in a `.npy` header (NumPy saves it as an object array).

use crate::error::{Error, Result};
use crate::format::literal::{Value, ValueKind};
use std::fmt;

pub(crate) mod descr;
mod parse;

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

    /// The mark NumPy writes for this order: `<`, `>` or `|`.
    pub fn mark(self) -> char {
        match self {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        }
    }
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

impl Kind {
    /// The kind character NumPy writes in a type string.
    pub fn char(self) -> char {
        match self {
            Kind::Bool => 'b',
            Kind::Int => 'i',
            Kind::UInt => 'u',
            Kind::Float => 'f',
            Kind::Complex => 'c',
            Kind::Timedelta => 'm',
            Kind::Datetime => 'M',
            Kind::Bytes => 'S',
            Kind::Unicode => 'U',
            Kind::Void => 'V',
            Kind::Object => 'O',
        }
    }
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
    ///
    /// Normalised as NumPy does: a multiplier of 1 and leading zeros are
    /// dropped, `μs` becomes `us`, and the generic unit is `None`.
    pub unit: Option<String>,
}

impl Scalar {
    /// The type string NumPy writes, e.g. `<f8`, `|S5`, `<U7`, `|O`, `<M8[ns]`.
    pub fn type_str(&self) -> String {
        let mut s = String::new();
        s.push(self.order.mark());
        s.push(self.kind.char());
        match self.kind {
            Kind::Object => {}
            Kind::Unicode => s.push_str(&(self.size / 4).to_string()),
            Kind::Datetime | Kind::Timedelta => {
                s.push_str(&self.size.to_string());
                if let Some(unit) = &self.unit {
                    s.push('[');
                    s.push_str(unit);
                    s.push(']');
                }
            }
            _ => s.push_str(&self.size.to_string()),
        }
        s
    }
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

impl Field {
    /// An unnamed `|V{size}` field: the padding NumPy's descriptors list
    /// as `('', '|V4')`.
    pub(crate) fn padding(size: usize) -> Field {
        Field {
            name: String::new(),
            title: None,
            dtype: DType::Scalar(Scalar {
                order: ByteOrder::NotApplicable,
                kind: Kind::Void,
                size,
                unit: None,
            }),
        }
    }
}

/// Largest item size NumPy allows for a flexible type or sub-array
/// dimension (a C `int`).
const MAX_C_INT: usize = i32::MAX as usize;

/// Longest descriptor rendering quoted in an error message.
const MAX_DESCR_IN_MESSAGE: usize = 120;

fn bad(descr: impl Into<String>, reason: impl Into<String>) -> Error {
    Error::Header(crate::error::HeaderError::BadDescr {
        descr: descr.into(),
        reason: reason.into(),
    })
}

impl DType {
    /// Whether any part of the dtype is `O` (a Python object), so that
    /// NumPy pickles the data and its length is not the header's.
    ///
    /// ```
    /// use ndnpy::dtype::DType;
    ///
    /// assert!(DType::parse("|O")?.has_object());
    /// assert!(!DType::parse("<f8")?.has_object());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn has_object(&self) -> bool {
        match self {
            DType::Scalar(s) => s.kind == Kind::Object,
            DType::Record(fields) => fields.iter().any(|f| f.dtype.has_object()),
            DType::SubArray(inner, _) => inner.has_object(),
        }
    }

    /// Size of one element in bytes, or `None` on overflow.
    pub fn itemsize(&self) -> Option<usize> {
        match self {
            DType::Scalar(s) => Some(s.size),
            DType::Record(fields) => fields
                .iter()
                .try_fold(0usize, |acc, f| acc.checked_add(f.dtype.itemsize()?)),
            DType::SubArray(inner, shape) => shape
                .iter()
                .try_fold(inner.itemsize()?, |acc, &d| acc.checked_mul(d)),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DType::Scalar(s) => f.write_str(&s.type_str()),
            _ => f.write_str(&self.descr()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::literal;

    // The tables below were generated by a one-off Python script with
    // NumPy 2.4.6 (64-bit Linux); the expected strings are what NumPy 2.x
    // `repr(numpy.lib.format.dtype_to_descr(descr_to_dtype(spelling)))`
    // printed, i.e. what `np.save` writes for the dtype `np.load` builds.
    // Generated by a one-off Python script with NumPy 2.4.6: for each spelling,
    // repr(numpy.lib.format.dtype_to_descr(numpy.lib.format.descr_to_dtype(s))) and
    // the itemsize, or None when NumPy raised.
    const TYPE_STRINGS: &[(&str, Option<(&str, usize)>)] = &[
        ("<f8", Some(("'<f8'", 8))),
        (">i4", Some(("'>i4'", 4))),
        ("|b1", Some(("'|b1'", 1))),
        ("=f8", Some(("'<f8'", 8))),
        ("f8", Some(("'<f8'", 8))),
        ("<c16", Some(("'<c16'", 16))),
        ("|S5", Some(("'|S5'", 5))),
        ("<U7", Some(("'<U7'", 28))),
        ("<M8[ns]", Some(("'<M8[ns]'", 8))),
        ("<m8[s]", Some(("'<m8[s]'", 8))),
        ("|V8", Some(("'|V8'", 8))),
        ("|O", Some(("'|O'", 8))),
        ("O", Some(("'|O'", 8))),
        ("O8", Some(("'|O'", 8))),
        ("<O8", Some(("'|O'", 8))),
        ("O4", Some(("'|O'", 8))),
        ("b1", Some(("'|b1'", 1))),
        ("<b1", Some(("'|b1'", 1))),
        (">b1", Some(("'|b1'", 1))),
        ("?", Some(("'|b1'", 1))),
        ("<?", Some(("'|b1'", 1))),
        (">?", Some(("'|b1'", 1))),
        ("b", Some(("'|i1'", 1))),
        ("|b", Some(("'|i1'", 1))),
        ("B", Some(("'|u1'", 1))),
        ("h", Some(("'<i2'", 2))),
        ("H", Some(("'<u2'", 2))),
        ("i", Some(("'<i4'", 4))),
        ("I", Some(("'<u4'", 4))),
        ("l", Some(("'<i8'", 8))),
        ("L", Some(("'<u8'", 8))),
        ("q", Some(("'<i8'", 8))),
        ("Q", Some(("'<u8'", 8))),
        ("p", Some(("'<i8'", 8))),
        ("P", Some(("'<u8'", 8))),
        ("n", Some(("'<i8'", 8))),
        ("N", Some(("'<u8'", 8))),
        ("e", Some(("'<f2'", 2))),
        ("f", Some(("'<f4'", 4))),
        ("d", Some(("'<f8'", 8))),
        ("g", Some(("'<f16'", 16))),
        ("F", Some(("'<c8'", 8))),
        ("D", Some(("'<c16'", 16))),
        ("G", Some(("'<c32'", 32))),
        ("S", Some(("'|S0'", 0))),
        ("U", Some(("'<U0'", 0))),
        ("V", Some(("'|V0'", 0))),
        ("M", Some(("'<M8'", 8))),
        ("m", Some(("'<m8'", 8))),
        ("c", Some(("'|S1'", 1))),
        ("<c", Some(("'|S1'", 1))),
        ("S0", Some(("'|S0'", 0))),
        ("U0", Some(("'<U0'", 0))),
        ("V0", Some(("'|V0'", 0))),
        ("a5", Some(("'|S5'", 5))),
        ("<a5", Some(("'|S5'", 5))),
        ("a", Some(("'|S0'", 0))),
        ("a0", Some(("'|S0'", 0))),
        ("<S5", Some(("'|S5'", 5))),
        ("<S01", Some(("'|S1'", 1))),
        ("U007", Some(("'<U7'", 28))),
        ("<U0", Some(("'<U0'", 0))),
        (">U0", Some(("'>U0'", 0))),
        ("|U0", Some(("'<U0'", 0))),
        ("|U7", Some(("'<U7'", 28))),
        (">U7", Some(("'>U7'", 28))),
        ("=U3", Some(("'<U3'", 12))),
        ("M8", Some(("'<M8'", 8))),
        ("<M8", Some(("'<M8'", 8))),
        ("m8", Some(("'<m8'", 8))),
        ("=m8", Some(("'<m8'", 8))),
        ("|m8", Some(("'<m8'", 8))),
        (">M8[ns]", Some(("'>M8[ns]'", 8))),
        ("|M8[ns]", Some(("'<M8[ns]'", 8))),
        ("<M8[generic]", Some(("'<M8'", 8))),
        ("<m8[generic]", Some(("'<m8'", 8))),
        ("M8[5generic]", Some(("'<M8'", 8))),
        ("M8[10ms]", Some(("'<M8[10ms]'", 8))),
        ("M8[010ms]", Some(("'<M8[10ms]'", 8))),
        ("<m8[10ms]", Some(("'<m8[10ms]'", 8))),
        ("<M8[2D]", Some(("'<M8[2D]'", 8))),
        ("M8[1ns]", Some(("'<M8[ns]'", 8))),
        ("M8[0ns]", Some(("'<M8[0ns]'", 8))),
        ("M8[μs]", Some(("'<M8[us]'", 8))),
        ("M8[Y]", Some(("'<M8[Y]'", 8))),
        ("M8[M]", Some(("'<M8[M]'", 8))),
        ("M8[W]", Some(("'<M8[W]'", 8))),
        ("M8[D]", Some(("'<M8[D]'", 8))),
        ("M8[h]", Some(("'<M8[h]'", 8))),
        ("M8[m]", Some(("'<M8[m]'", 8))),
        ("M8[s]", Some(("'<M8[s]'", 8))),
        ("M8[ms]", Some(("'<M8[ms]'", 8))),
        ("M8[us]", Some(("'<M8[us]'", 8))),
        ("M8[ps]", Some(("'<M8[ps]'", 8))),
        ("M8[fs]", Some(("'<M8[fs]'", 8))),
        ("M8[as]", Some(("'<M8[as]'", 8))),
        ("M8[2147483647ns]", Some(("'<M8[2147483647ns]'", 8))),
        ("<i1", Some(("'|i1'", 1))),
        (">u1", Some(("'|u1'", 1))),
        ("|u2", Some(("'<u2'", 2))),
        ("|i4", Some(("'<i4'", 4))),
        ("|f8", Some(("'<f8'", 8))),
        ("|c8", Some(("'<c8'", 8))),
        ("<u2", Some(("'<u2'", 2))),
        ("<u4", Some(("'<u4'", 4))),
        (">u8", Some(("'>u8'", 8))),
        ("<i2", Some(("'<i2'", 2))),
        ("<i8", Some(("'<i8'", 8))),
        ("<f2", Some(("'<f2'", 2))),
        (">f4", Some(("'>f4'", 4))),
        ("<f16", Some(("'<f16'", 16))),
        ("<c8", Some(("'<c8'", 8))),
        ("<c32", Some(("'<c32'", 32))),
        (">c32", Some(("'>c32'", 32))),
        ("<e", Some(("'<f2'", 2))),
        ("<d", Some(("'<f8'", 8))),
        ("<V4", Some(("'|V4'", 4))),
        (">V4", Some(("'|V4'", 4))),
        ("<S1", Some(("'|S1'", 1))),
        ("<U1", Some(("'<U1'", 4))),
        ("S2147483647", Some(("'|S2147483647'", 2147483647))),
        ("<U536870911", Some(("'<U536870911'", 2147483644))),
        ("bool", Some(("'|b1'", 1))),
        ("bool_", Some(("'|b1'", 1))),
        ("int8", Some(("'|i1'", 1))),
        ("int16", Some(("'<i2'", 2))),
        ("int32", Some(("'<i4'", 4))),
        ("int64", Some(("'<i8'", 8))),
        ("uint8", Some(("'|u1'", 1))),
        ("uint16", Some(("'<u2'", 2))),
        ("uint32", Some(("'<u4'", 4))),
        ("uint64", Some(("'<u8'", 8))),
        ("float16", Some(("'<f2'", 2))),
        ("float32", Some(("'<f4'", 4))),
        ("float64", Some(("'<f8'", 8))),
        ("float128", Some(("'<f16'", 16))),
        ("complex64", Some(("'<c8'", 8))),
        ("complex128", Some(("'<c16'", 16))),
        ("complex256", Some(("'<c32'", 32))),
        ("byte", Some(("'|i1'", 1))),
        ("ubyte", Some(("'|u1'", 1))),
        ("short", Some(("'<i2'", 2))),
        ("ushort", Some(("'<u2'", 2))),
        ("intc", Some(("'<i4'", 4))),
        ("uintc", Some(("'<u4'", 4))),
        ("int", Some(("'<i8'", 8))),
        ("long", Some(("'<i8'", 8))),
        ("longlong", Some(("'<i8'", 8))),
        ("intp", Some(("'<i8'", 8))),
        ("uint", Some(("'<u8'", 8))),
        ("ulong", Some(("'<u8'", 8))),
        ("ulonglong", Some(("'<u8'", 8))),
        ("uintp", Some(("'<u8'", 8))),
        ("half", Some(("'<f2'", 2))),
        ("single", Some(("'<f4'", 4))),
        ("double", Some(("'<f8'", 8))),
        ("float", Some(("'<f8'", 8))),
        ("longdouble", Some(("'<f16'", 16))),
        ("csingle", Some(("'<c8'", 8))),
        ("cdouble", Some(("'<c16'", 16))),
        ("complex", Some(("'<c16'", 16))),
        ("clongdouble", Some(("'<c32'", 32))),
        ("bytes", Some(("'|S0'", 0))),
        ("bytes_", Some(("'|S0'", 0))),
        ("str", Some(("'<U0'", 0))),
        ("str_", Some(("'<U0'", 0))),
        ("unicode", Some(("'<U0'", 0))),
        ("void", Some(("'|V0'", 0))),
        ("object", Some(("'|O'", 8))),
        ("object_", Some(("'|O'", 8))),
        ("datetime64", Some(("'<M8'", 8))),
        ("timedelta64", Some(("'<m8'", 8))),
        ("datetime64[ns]", Some(("'<M8[ns]'", 8))),
        ("timedelta64[10s]", Some(("'<m8[10s]'", 8))),
        ("<f3", None),
        ("<i3", None),
        ("<b2", None),
        ("<c4", None),
        ("<u16", None),
        ("<i16", None),
        ("i0", None),
        ("O0", None),
        ("O16", None),
        ("b8", None),
        ("?1", None),
        ("e2", None),
        ("d8", None),
        ("f12", None),
        ("M4", None),
        ("m4", None),
        ("M[ns]", None),
        ("<M8[xx]", None),
        ("M8[]", None),
        ("M8[B]", None),
        ("<M8[ns", None),
        ("<m8[s]x", None),
        ("<M8[ns][ms]", None),
        ("M8[Y2]", None),
        ("M8[2 ms]", None),
        ("<M8[-1ns]", None),
        ("M8[2147483648ns]", None),
        ("<i4[ns]", None),
        ("f8[2]", None),
        ("<z8", None),
        ("x", None),
        ("", None),
        ("<", None),
        ("=", None),
        ("S-1", None),
        ("U-1", None),
        ("<i8x", None),
        ("S5 ", None),
        ("float64 ", None),
        ("Float64", None),
        ("<int32", None),
        ("=int64", None),
        ("int0", None),
        ("S2147483648", None),
        ("V2147483648", None),
        ("<U536870912", None),
        ("S99999999999999999999", None),
        ("datetime64[xx]", None),
        ("float64[ns]", None),
    ];
    const DESCRS: &[(&str, Option<(&str, usize)>)] = &[
        ("[('a','<i4'),('b','<f8',(2,3))]", Some(("[('a', '<i4'), ('b', '<f8', (2, 3))]", 52))),
        ("[(('title','name'),'<f8')]", Some(("[(('title', 'name'), '<f8')]", 8))),
        ("[('x',[('a','<i4')])]", Some(("[('x', [('a', '<i4')])]", 4))),
        ("[('a','<f8',3)]", Some(("[('a', '<f8', (3,))]", 24))),
        ("[('a','<f8',1)]", Some(("[('a', '<f8', (1,))]", 8))),
        ("[('a','<f8',())]", Some(("[('a', '<f8')]", 8))),
        ("[('a','<f8',(0,))]", Some(("[('a', '<f8', (0,))]", 0))),
        ("[('a','<f8',(2,0))]", Some(("[('a', '<f8', (2, 0))]", 0))),
        ("[('a','<f8',(1,1))]", Some(("[('a', '<f8', (1, 1))]", 8))),
        ("[('a','<f8',[2,3])]", Some(("[('a', '<f8', (2, 3))]", 48))),
        ("[('a','<i4'),('','|V4'),('b','<i8')]", Some(("[('a', '<i4'), ('', '|V4'), ('b', '<i8')]", 16))),
        ("[('','|V4'),('a','<i4')]", Some(("[('', '|V4'), ('a', '<i4')]", 8))),
        ("[('a','<i4'),('','|V4')]", Some(("[('a', '<i4'), ('', '|V4')]", 8))),
        ("[('a','<i4'),('','|V4'),('','|V4')]", Some(("[('a', '<i4'), ('', '|V8')]", 12))),
        ("[('','|V4',2),('a','<i4')]", Some(("[('', '|V8'), ('a', '<i4')]", 12))),
        ("[('a','<i4'),('','|V0')]", Some(("[('a', '<i4')]", 4))),
        ("[('','<i4')]", Some(("[('', '<i4')]", 4))),
        ("[(('','a'),'<i4')]", Some(("[(('', 'a'), '<i4')]", 4))),
        ("[(('t',''),'<i4')]", Some(("[(('t', ''), '<i4')]", 4))),
        ("[('a',('<f8',(2,)))]", Some(("[('a', '<f8', (2,))]", 16))),
        ("[('a',('<f8',(2,)),(3,))]", Some(("[('a', ('<f8', (2,)), (3,))]", 48))),
        ("[('a',[])]", Some(("[('a', [])]", 0))),
        ("[]", Some(("[]", 0))),
        ("[['a','<i4']]", Some(("[('a', '<i4')]", 4))),
        ("[('a','|V4')]", Some(("[('a', '|V4')]", 4))),
        ("[('a','|S5'),('b','<U3'),('c','|O'),('d','<M8[ns]'),('e','|b1')]", Some(("[('a', '|S5'), ('b', '<U3'), ('c', '|O'), ('d', '<M8[ns]'), ('e', '|b1')]", 34))),
        ("[(\"it's\",'<i4')]", Some(("[(\"it's\", '<i4')]", 4))),
        ("[('a\"b\\'c','<i4')]", Some(("[('a\"b\\'c', '<i4')]", 4))),
        ("[('é\\n\\t\\\\\\x01\\x7f\\x85\\xa0\\xad','<i4')]", Some(("[('é\\n\\t\\\\\\x01\\x7f\\x85\\xa0\\xad', '<i4')]", 4))),
        ("[('a','>f8'),('b','=i4'),('c','i1'),('d','f8')]", Some(("[('a', '>f8'), ('b', '<i4'), ('c', '|i1'), ('d', '<f8')]", 21))),
        ("[('x',[('a','<i4'),('','|V4'),('b',[(('T','c'),'>u2',(2,))])],(2,)),('y','<c16')]", Some(("[('x', [('a', '<i4'), ('', '|V4'), ('b', [(('T', 'c'), '>u2', (2,))])], (2,)), ('y', '<c16')]", 40))),
        ("{'descr': 1}", None),
        ("'<f8'", Some(("'<f8'", 8))),
        ("('<f8',())", Some(("'<f8'", 8))),
        ("[('a','<f8',-1)]", None),
        ("[('a','<f8',(2147483648,))]", None),
        ("[('a','<f8',True)]", None),
        ("[('','<i4'),('','<i4')]", None),
        ("[('a','<i4'),('a','<i4')]", None),
        ("[(('a','b'),'<i4'),('a','<i4')]", None),
        ("[(('a','a'),'<i4')]", None),
        ("[('a','<i4',(2,),5)]", None),
        ("[('a',)]", None),
        ("[(1,'<i4')]", None),
        ("[('a',1)]", None),
        ("[('a','<f3')]", None),
        ("[('a','<f8','x')]", None),
        ("[('a','<f8',(2,'x'))]", None),
        ("[('a','<f8',None)]", Some(("[('a', '<f8')]", 8))),
        ("['<f8']", None),
        ("[('a',None)]", None),
        ("3", None),
        ("None", None),
        ("[(('a',),'<i4')]", None),
    ];

    fn from_text(text: &str) -> Result<DType> {
        DType::from_value(&literal::parse(text, false).expect("test literal parses"))
    }

    #[test]
    fn type_strings_match_numpy() {
        for &(spelling, expected) in TYPE_STRINGS {
            let got = DType::parse(spelling);
            match (expected, got) {
                (Some((descr, itemsize)), Ok(dt)) => {
                    assert_eq!(dt.descr(), descr, "descr of {spelling:?}");
                    assert_eq!(dt.itemsize(), Some(itemsize), "itemsize of {spelling:?}");
                }
                (
                    None,
                    Err(Error::Header(crate::error::HeaderError::BadDescr { descr, reason })),
                ) => {
                    assert!(!reason.is_empty());
                    assert!(descr.starts_with('\''), "{descr}");
                }
                (expected, got) => panic!("{spelling:?}: expected {expected:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn descrs_match_numpy() {
        for &(text, expected) in DESCRS {
            match (expected, from_text(text)) {
                (Some((descr, itemsize)), Ok(dt)) => {
                    assert_eq!(dt.descr(), descr, "descr of {text}");
                    assert_eq!(dt.itemsize(), Some(itemsize), "itemsize of {text}");
                    // What we write parses back to the same type.
                    assert_eq!(from_text(&dt.descr()).unwrap(), dt, "round trip of {text}");
                }
                (
                    None,
                    Err(Error::Header(crate::error::HeaderError::BadDescr { descr, reason })),
                ) => {
                    assert!(!reason.is_empty() && !descr.is_empty(), "{text}");
                }
                (expected, got) => panic!("{text}: expected {expected:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn scalar_fields() {
        let dt = DType::parse("=f8").unwrap();
        assert_eq!(
            dt,
            DType::Scalar(Scalar {
                order: ByteOrder::NATIVE,
                kind: Kind::Float,
                size: 8,
                unit: None
            })
        );
        let DType::Scalar(s) = DType::parse("<U7").unwrap() else {
            panic!()
        };
        assert_eq!(
            (s.order, s.kind, s.size),
            (ByteOrder::Little, Kind::Unicode, 28)
        );
        let DType::Scalar(s) = DType::parse(">S5").unwrap() else {
            panic!()
        };
        assert_eq!(
            (s.order, s.kind, s.size),
            (ByteOrder::NotApplicable, Kind::Bytes, 5)
        );
        let DType::Scalar(s) = DType::parse("<i1").unwrap() else {
            panic!()
        };
        assert_eq!(s.order, ByteOrder::NotApplicable);
        let DType::Scalar(s) = DType::parse("<m8[10ms]").unwrap() else {
            panic!()
        };
        assert_eq!((s.kind, s.unit.as_deref()), (Kind::Timedelta, Some("10ms")));
        let DType::Scalar(s) = DType::parse("M8[generic]").unwrap() else {
            panic!()
        };
        assert_eq!((s.kind, s.unit), (Kind::Datetime, None));
        let DType::Scalar(s) = DType::parse("|O").unwrap() else {
            panic!()
        };
        assert_eq!((s.kind, s.size), (Kind::Object, 8));
    }

    #[test]
    fn records_with_titles_padding_and_nesting() {
        let dt =
            from_text("[(('My title', 'a'), '<i4'), ('', '|V4'), ('n', [('x', '>f8', (2,))])]")
                .unwrap();
        let DType::Record(fields) = &dt else { panic!() };
        assert_eq!(fields.len(), 3);
        assert_eq!(fields[0].name, "a");
        assert_eq!(fields[0].title.as_deref(), Some("My title"));
        assert_eq!(fields[1].name, "");
        assert_eq!(fields[1].dtype, DType::parse("|V4").unwrap());
        let DType::Record(inner) = &fields[2].dtype else {
            panic!()
        };
        assert_eq!(
            inner[0].dtype,
            DType::SubArray(Box::new(DType::parse(">f8").unwrap()), vec![2])
        );
        assert_eq!(dt.itemsize(), Some(24));
        assert_eq!(
            dt.descr(),
            "[(('My title', 'a'), '<i4'), ('', '|V4'), ('n', [('x', '>f8', (2,))])]"
        );
        assert_eq!(dt.to_string(), dt.descr());
    }

    #[test]
    fn top_level_sub_arrays() {
        let dt = from_text("('<f8', (2,))").unwrap();
        assert_eq!(
            dt,
            DType::SubArray(Box::new(DType::parse("<f8").unwrap()), vec![2])
        );
        assert_eq!(dt.descr(), "('<f8', (2,))");
        assert_eq!(dt.itemsize(), Some(16));
        assert_eq!(from_text("('<f8', 3)").unwrap().descr(), "('<f8', (3,))");
        let dt = from_text("([('a', '<i4')], (2, 3))").unwrap();
        assert_eq!(dt.descr(), "([('a', '<i4')], (2, 3))");
        assert_eq!(dt.itemsize(), Some(24));
        let dt = from_text("(('<i2', (2,)), (3,))").unwrap();
        assert_eq!(dt.descr(), "(('<i2', (2,)), (3,))");
        assert_eq!(dt.itemsize(), Some(12));
        // An empty shape is no sub-array at all.
        assert_eq!(
            from_text("('<f8', ())").unwrap(),
            DType::parse("<f8").unwrap()
        );
        assert!(matches!(
            from_text("('<f8',)"),
            Err(Error::Header(crate::error::HeaderError::BadDescr { .. }))
        ));
        assert!(matches!(
            from_text("('<f8', (2,), 1)"),
            Err(Error::Header(crate::error::HeaderError::BadDescr { .. }))
        ));
    }

    #[test]
    fn display() {
        assert_eq!(DType::parse("U7").unwrap().to_string(), "<U7");
        assert_eq!(DType::parse("<M8[ns]").unwrap().to_string(), "<M8[ns]");
        assert_eq!(DType::parse("?").unwrap().to_string(), "|b1");
        assert_eq!(DType::parse("<f8").unwrap().descr(), "'<f8'");
        assert_eq!(
            from_text("[('a', '<i4')]").unwrap().to_string(),
            "[('a', '<i4')]"
        );
    }

    #[test]
    fn itemsize_overflow_is_none() {
        let huge = DType::SubArray(
            Box::new(DType::parse("<f8").unwrap()),
            vec![usize::MAX / 2, 3],
        );
        assert_eq!(huge.itemsize(), None);
        let rec = DType::Record(vec![
            Field {
                name: "a".into(),
                title: None,
                dtype: DType::parse("|V2147483647").unwrap(),
            };
            3
        ]);
        assert_eq!(rec.itemsize(), Some(3 * 2147483647));
        let over = DType::Record(vec![Field {
            name: "a".into(),
            title: None,
            dtype: huge.clone(),
        }]);
        assert_eq!(over.itemsize(), None);
        // Sub-array dimensions are capped like NumPy's (C int), and the
        // product is checked.
        assert!(
            from_text("[('a', '<f8', (2147483647, 2147483647, 2147483647, 2147483647))]").is_err()
        );
    }

    #[test]
    fn error_messages_name_the_descriptor() {
        match DType::parse("<f3") {
            Err(e @ Error::Header(crate::error::HeaderError::BadDescr { .. })) => {
                let msg = e.to_string();
                assert!(msg.starts_with("invalid descr '<f3': "), "{msg}");
                assert!(msg.contains("1, 2, 4, 8, 16"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
        match from_text("[('a', '<f8', -1)]") {
            Err(Error::Header(crate::error::HeaderError::BadDescr { descr, reason })) => {
                assert_eq!(descr, "('a', '<f8', -1)");
                assert!(reason.contains("negative"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        match from_text("[('a', '<i4'), ('a', '<f8')]") {
            Err(Error::Header(crate::error::HeaderError::BadDescr { descr, reason })) => {
                assert_eq!(descr, "[('a', '<i4'), ('a', '<f8')]");
                assert!(reason.contains("'a'"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        match from_text("{'descr': '<f8'}") {
            Err(Error::Header(crate::error::HeaderError::BadDescr { descr, .. })) => {
                assert_eq!(descr, "{'descr': '<f8'}")
            }
            other => panic!("{other:?}"),
        }
        // Long descriptors are cut short in messages.
        let long = format!("[{}('a', 1)]", "('x', '<f8'), ".repeat(100));
        match from_text(&long) {
            Err(Error::Header(crate::error::HeaderError::BadDescr { descr, .. })) => {
                assert!(descr.chars().count() <= MAX_DESCR_IN_MESSAGE + 3, "{descr}");
            }
            other => panic!("{other:?}"),
        }
        match DType::parse(&"x".repeat(10_000)) {
            Err(Error::Header(crate::error::HeaderError::BadDescr { descr, .. })) => {
                assert!(descr.len() < 200)
            }
            other => panic!("{other:?}"),
        }
    }
}
