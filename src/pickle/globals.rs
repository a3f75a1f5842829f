//! The closed list of globals a pickle may name.
//!
//! A pickle names a global by module and attribute (`GLOBAL`,
//! `STACK_GLOBAL`, `INST`); Python imports the module and calls whatever it
//! finds, which is how pickles run code. Here a name is only compared with
//! the table below: a match yields a [`Global`] tag whose behaviour is
//! implemented by the reader itself (building plain data). Anything else
//! is a name and stays one: data when it is never called, and
//! [`crate::error::PickleError::UnsupportedPickle`] naming it when it is (or, under
//! `ReadOptions::opaque_objects`, an inert record of the call). Nothing is
//! ever imported, called or emulated beyond this table.
//!
//! | global | why it is here | what the reader does (all pure data) |
//! |---|---|---|
//! | `numpy._core.multiarray _reconstruct`, `numpy.core.multiarray _reconstruct` | every pickled ndarray (NumPy 2 / 1) starts with it | makes an empty array awaiting its `BUILD` state; only `ndarray` itself as the class |
//! | `numpy ndarray` | the class argument of `_reconstruct` | nothing on its own (not callable here) |
//! | `numpy dtype` | dtypes of arrays and scalars | builds a [`crate::dtype::DType`] from the state tuple, validated by the crate's dtype parser |
//! | `numpy._core.multiarray scalar`, `numpy.core.multiarray scalar` | NumPy scalars inside object arrays | keeps dtype and bytes ([`super::NumpyScalar`]) |
//! | `numpy._core.numeric _frombuffer`, `numpy.core.numeric _frombuffer` | how protocol 5 pickles nested numeric arrays | reads the in-band bytes as an array of that dtype and shape |
//! | `builtins set`, `frozenset`, `bytearray`, `complex` | containers and numbers with no opcode of their own in older protocols | builds the value |
//! | `builtins bytes` | how protocols 0–2 spell an empty `bytes` (`bytes()`) | the empty bytes (or a copy of a bytes argument) |
//! | `_codecs encode` | how protocols 0–2 spell `bytes` (`encode(text, 'latin1')`) | latin-1 (or UTF-8) encoding of a string |
//! | `datetime date`, `datetime datetime`, `datetime timedelta` | common object-array contents | decodes the pickled state; a `tzinfo` is refused |
//! | `decimal Decimal` | common object-array contents | keeps the validated decimal text |
//! | `numpy.core._internal _reconstruct` | NumPy 0.x's spelling (NumPy's own `py2-np0-objarr.npy`) | as `_reconstruct` |
//! | `numpy._core._internal _convert_to_stringdtype_kwargs` | NumPy 2's `StringDType` | the dtype of a string array ([`super::stringdtype`]) |
//! | pandas' reconstructors, `datetime timezone`, `zoneinfo ZoneInfo` | `df.to_numpy()` contents | see [`super::pandas`] |
//! | `builtins getattr` | `zoneinfo.ZoneInfo._unpickle`, and dotted names below protocol 4 | an attribute of a name is a longer name (data until called) |
//!
//! Python 2 module names (`__builtin__`, `copy_reg`, `xrange` ...) are
//! mapped as Python's own unpickler maps them (`fix_imports`). Anything
//! else (`copyreg _reconstructor` included: the general-purpose door to
//! constructing arbitrary classes) is a [`Node::Ref`](super::machine::Node)
//! to the machine: data if never called, refused (or opaque, on opt-in) if
//! called.

use crate::error::Error;

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
    /// `numpy._core._internal._convert_to_stringdtype_kwargs(coerce,
    /// na_object)`: NumPy 2's `StringDType`, as `np.save` pickles it.
    StringDType,
    /// pandas' reconstructors ([`super::pandas`]).
    Pandas(PandasGlobal),
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
            Global::StringDType => "numpy._core._internal._convert_to_stringdtype_kwargs",
            Global::Pandas(p) => p.name(),
        }
    }
}

impl Global {
    /// The global held as a value (never called): pandas' `NA` is the
    /// missing-value marker, any other a reference by module and name.
    pub(crate) fn as_value(self) -> crate::array::pyvalue::PyValue {
        if let Global::Pandas(p) = self {
            if let Some(v) = p.as_value() {
                return v;
            }
        }
        let dotted = self.name();
        let (module, name) = match self {
            // A class attribute: the module is `zoneinfo`.
            Global::Pandas(PandasGlobal::ZoneInfoUnpickle) => ("zoneinfo", "ZoneInfo._unpickle"),
            _ => dotted.rsplit_once('.').unwrap_or(("builtins", dotted)),
        };
        crate::array::pyvalue::PyValue::Global {
            module: module.to_owned(),
            name: name.to_owned(),
        }
    }
}

/// A pandas (or time-zone) global of the closed list (what a call of one
/// does is [`super::pandas`]'s; the names are here, with the rest of the list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PandasGlobal {
    UnpickleTimestamp,
    UnpickleTimedelta,
    UnpickleNaT,
    NA,
    TimeZone,
    GetAttr,
    ZoneInfo,
    ZoneInfoUnpickle,
}

impl PandasGlobal {
    /// The Python name, for messages and references.
    pub(crate) fn name(self) -> &'static str {
        match self {
            PandasGlobal::UnpickleTimestamp => "pandas._libs.tslibs.timestamps._unpickle_timestamp",
            PandasGlobal::UnpickleTimedelta => "pandas._libs.tslibs.timedeltas._timedelta_unpickle",
            PandasGlobal::UnpickleNaT => "pandas._libs.tslibs.nattype._nat_unpickle",
            PandasGlobal::NA => "pandas.NA",
            PandasGlobal::TimeZone => "datetime.timezone",
            PandasGlobal::GetAttr => "builtins.getattr",
            PandasGlobal::ZoneInfo => "zoneinfo.ZoneInfo",
            PandasGlobal::ZoneInfoUnpickle => "zoneinfo.ZoneInfo._unpickle",
        }
    }

    /// The value of a global that is one (pandas' `NA`).
    pub(crate) fn as_value(self) -> Option<crate::array::pyvalue::PyValue> {
        (self == PandasGlobal::NA).then_some(crate::array::pyvalue::PyValue::NA)
    }
}

/// Looks up pandas' and the time zones' globals.
fn pandas_lookup(module: &str, name: &str) -> Option<Global> {
    let p = match (module, name) {
        ("pandas._libs.tslibs.timestamps", "_unpickle_timestamp") => {
            PandasGlobal::UnpickleTimestamp
        }
        ("pandas._libs.tslibs.timedeltas", "_timedelta_unpickle") => {
            PandasGlobal::UnpickleTimedelta
        }
        ("pandas._libs.tslibs.nattype", "_nat_unpickle") => PandasGlobal::UnpickleNaT,
        ("pandas" | "pandas._libs.missing", "NA") => PandasGlobal::NA,
        ("datetime", "timezone") => PandasGlobal::TimeZone,
        ("builtins", "getattr") => PandasGlobal::GetAttr,
        ("zoneinfo", "ZoneInfo") => PandasGlobal::ZoneInfo,
        _ => return None,
    };
    Some(Global::Pandas(p))
}

/// Python 2 spellings of modules and names, mapped as Python 3's unpickler
/// maps them (`fix_imports`, from `_compat_pickle`), for the ones that
/// NumPy-era pickles use.
pub(crate) fn fix_py2_name<'a>(module: &'a str, name: &'a str) -> (&'a str, &'a str) {
    match (module, name) {
        ("__builtin__", "xrange") => ("builtins", "range"),
        ("__builtin__", "unicode" | "basestring") => ("builtins", "str"),
        ("__builtin__", "long") => ("builtins", "int"),
        ("__builtin__", "unichr") => ("builtins", "chr"),
        ("__builtin__", "reduce") => ("functools", "reduce"),
        ("__builtin__", "intern") => ("sys", "intern"),
        ("__builtin__" | "exceptions", n) => ("builtins", n),
        ("copy_reg", n) => ("copyreg", n),
        ("UserDict", "UserDict") => ("collections", "UserDict"),
        (m, n) => (m, n),
    }
}

/// Looks `module name` up in the closed list (after mapping Python 2
/// names); `None` for any other global, which the machine keeps as a
/// reference (data) and refuses to call.
pub(crate) fn lookup(module: &str, name: &str) -> Option<Global> {
    let (module, name) = fix_py2_name(module, name);
    let g = match (module, name) {
        // NumPy 0.x pickled arrays through `numpy.core._internal`.
        (
            "numpy._core.multiarray" | "numpy.core.multiarray" | "numpy.core._internal",
            "_reconstruct",
        ) => Global::Reconstruct,
        ("numpy._core.multiarray" | "numpy.core.multiarray", "scalar") => Global::Scalar,
        ("numpy._core.numeric" | "numpy.core.numeric", "_frombuffer") => Global::FromBuffer,
        ("numpy._core._internal" | "numpy.core._internal", "_convert_to_stringdtype_kwargs") => {
            Global::StringDType
        }
        ("numpy", "ndarray") => Global::NdArray,
        ("numpy", "dtype") => Global::DType,
        ("builtins", "set") => Global::Set,
        ("builtins", "frozenset") => Global::FrozenSet,
        ("builtins", "bytearray") => Global::ByteArray,
        ("builtins", "bytes") => Global::Bytes,
        ("builtins", "complex") => Global::Complex,
        ("_codecs", "encode") => Global::Encode,
        ("datetime", "date") => Global::Date,
        ("datetime", "datetime") => Global::DateTime,
        ("datetime", "timedelta") => Global::TimeDelta,
        ("decimal", "Decimal") => Global::Decimal,
        _ => return pandas_lookup(module, name),
    };
    Some(g)
}

/// The error for calling a global outside the closed list.
pub(crate) fn refused(module: &str, name: &str) -> Error {
    Error::Pickle(crate::error::PickleError::UnsupportedPickle {
        what: format!(
            "global '{} {}' (not called: read it as inert data with ReadOptions::opaque_objects)",
            clip(module),
            clip(name)
        ),
    })
}

/// Names in messages are cut short: they come from untrusted input.
fn clip(s: &str) -> String {
    match s.char_indices().nth(100) {
        Some((i, _)) => format!("{}...", s[..i].escape_debug()),
        None => s.escape_debug().to_string(),
    }
}
