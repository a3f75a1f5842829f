//! The closed list of globals a pickle may name.
//!
//! A pickle names a global by module and attribute (`GLOBAL`,
//! `STACK_GLOBAL`, `INST`); Python imports the module and calls whatever it
//! finds, which is how pickles run code. Here a name is only compared with
//! the table below: a match yields a [`Global`] tag whose behaviour is
//! implemented by the reader itself (building plain data), and anything
//! else is [`Error::UnsupportedPickle`] naming the global. Nothing is ever
//! imported, called or emulated beyond this table.
//!
//! | global | why it is here | what the reader does (all pure data) |
//! |---|---|---|
//! | `numpy._core.multiarray _reconstruct`, `numpy.core.multiarray _reconstruct` | every pickled ndarray (NumPy 2 / 1) starts with it | makes an empty array awaiting its `BUILD` state; only `ndarray` itself as the class |
//! | `numpy ndarray` | the class argument of `_reconstruct` | nothing on its own (not callable here) |
//! | `numpy dtype` | dtypes of arrays and scalars | builds a [`crate::DType`] from the state tuple, validated by the crate's dtype parser |
//! | `numpy._core.multiarray scalar`, `numpy.core.multiarray scalar` | NumPy scalars inside object arrays | keeps dtype and bytes ([`super::NumpyScalar`]) |
//! | `numpy._core.numeric _frombuffer`, `numpy.core.numeric _frombuffer` | how protocol 5 pickles nested numeric arrays | reads the in-band bytes as an array of that dtype and shape |
//! | `builtins set`, `frozenset`, `bytearray`, `complex` | containers and numbers with no opcode of their own in older protocols | builds the value |
//! | `builtins bytes` | how protocols 0–2 spell an empty `bytes` (`bytes()`) | the empty bytes (or a copy of a bytes argument) |
//! | `_codecs encode` | how protocols 0–2 spell `bytes` (`encode(text, 'latin1')`) | latin-1 (or UTF-8) encoding of a string |
//! | `datetime date`, `datetime datetime`, `datetime timedelta` | common object-array contents | decodes the pickled state; a `tzinfo` is refused |
//! | `decimal Decimal` | common object-array contents | keeps the validated decimal text |
//!
//! Python 2 module names (`__builtin__`) are accepted as Python's own
//! unpickler maps them (`fix_imports`). `copyreg _reconstructor` is not in
//! the table: NumPy's own output never needs it (protocols 0 and 1 pickle
//! arrays and every type above through `__reduce__`), and it is the
//! general-purpose door to constructing arbitrary classes.

use crate::error::{Error, Result};

/// A global from the closed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Global {
    Reconstruct,
    NdArray,
    DType,
    Scalar,
    FromBuffer,
    Set,
    FrozenSet,
    ByteArray,
    Bytes,
    Complex,
    Encode,
    Date,
    DateTime,
    TimeDelta,
    Decimal,
}

impl Global {
    /// The Python name, for messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Global::Reconstruct => "numpy._core.multiarray._reconstruct",
            Global::NdArray => "numpy.ndarray",
            Global::DType => "numpy.dtype",
            Global::Scalar => "numpy._core.multiarray.scalar",
            Global::FromBuffer => "numpy._core.numeric._frombuffer",
            Global::Set => "builtins.set",
            Global::FrozenSet => "builtins.frozenset",
            Global::ByteArray => "builtins.bytearray",
            Global::Bytes => "builtins.bytes",
            Global::Complex => "builtins.complex",
            Global::Encode => "_codecs.encode",
            Global::Date => "datetime.date",
            Global::DateTime => "datetime.datetime",
            Global::TimeDelta => "datetime.timedelta",
            Global::Decimal => "decimal.Decimal",
        }
    }
}

/// Looks `module name` up in the closed list.
pub(crate) fn resolve(module: &str, name: &str) -> Result<Global> {
    let g = match (module, name) {
        ("numpy._core.multiarray" | "numpy.core.multiarray", "_reconstruct") => Global::Reconstruct,
        ("numpy._core.multiarray" | "numpy.core.multiarray", "scalar") => Global::Scalar,
        ("numpy._core.numeric" | "numpy.core.numeric", "_frombuffer") => Global::FromBuffer,
        ("numpy", "ndarray") => Global::NdArray,
        ("numpy", "dtype") => Global::DType,
        ("builtins" | "__builtin__", "set") => Global::Set,
        ("builtins" | "__builtin__", "frozenset") => Global::FrozenSet,
        ("builtins" | "__builtin__", "bytearray") => Global::ByteArray,
        ("builtins" | "__builtin__", "bytes") => Global::Bytes,
        ("builtins" | "__builtin__", "complex") => Global::Complex,
        ("_codecs", "encode") => Global::Encode,
        ("datetime", "date") => Global::Date,
        ("datetime", "datetime") => Global::DateTime,
        ("datetime", "timedelta") => Global::TimeDelta,
        ("decimal", "Decimal") => Global::Decimal,
        _ => {
            return Err(Error::UnsupportedPickle {
                what: format!("global '{} {}'", clip(module), clip(name)),
            })
        }
    };
    Ok(g)
}

/// Names in messages are cut short: they come from untrusted input.
fn clip(s: &str) -> String {
    match s.char_indices().nth(100) {
        Some((i, _)) => format!("{}...", s[..i].escape_debug()),
        None => s.escape_debug().to_string(),
    }
}
