//! Layer 5, `.npy` operations: reading ([`read`]: `ReadNpy`, `AnyArray::read_npy`),
//! writing ([`write`]: `WriteNpy`), zero-copy views ([`view`]), memory maps
//! ([`mmap`]), [`file::NpyFile`], the streaming [`reader::NpyReader`] and
//! [`stream::NpyWriter`], growth of files in place ([`growth`]) and
//! [`inspect::inspect`].
//!
//! May use every layer below: [`crate::error`], [`crate::options`],
//! [`crate::io`], [`crate::format`], [`crate::plan`], [`crate::array`] and
//! [`crate::pickle`]. Archives ([`crate::npz`]) build on this layer.

pub(crate) mod compact;
pub(crate) mod file;
pub(crate) mod growth;
pub(crate) mod inspect;
pub(crate) mod mmap;
pub(crate) mod read;
pub(crate) mod reader;
pub(crate) mod stream;
pub(crate) mod view;
pub(crate) mod write;
pub(crate) mod write_any;
