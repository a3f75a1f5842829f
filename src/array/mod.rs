//! Layer 3, the value model: the [`element::Element`] and
//! [`element::LayoutElement`] traits with their scalar, string, datetime and
//! long-double types, records ([`record::RecordArray`] and `record!`),
//! [`any::AnyArray`], and [`pyvalue::PyValue`], the Python values of object
//! arrays. `AnyArray::Object` holds `PyValue`s and `PyValue::Array` holds an
//! `AnyArray`: that type recursion is why they share this folder.
//!
//! May use: [`crate::error`], [`crate::options`], [`crate::io`] (a
//! [`crate::io::source::Source`] to decode array bytes from),
//! [`crate::format`] and [`crate::plan`]. Never opens a file and never
//! pickles: object arrays are decoded and encoded in [`crate::pickle`], and
//! file entry points such as `AnyArray::read_npy` are `impl` blocks in
//! [`crate::npy`].

pub(crate) mod any;
pub(crate) mod compact;
pub(crate) mod datetime;
pub(crate) mod decode;
pub(crate) mod element;
pub(crate) mod encode;
pub(crate) mod longdouble;
pub(crate) mod ml;
pub(crate) mod pyvalue;
pub(crate) mod record;
pub(crate) mod stringdtype;
pub(crate) mod strings;
pub(crate) mod transpose;
