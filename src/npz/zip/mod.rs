//! The zip container, as `.npz` archives use it: the central directory
//! read as Python's `zipfile` reads it (`directory.rs`: entries, zip64,
//! data descriptors, names), the compression method numbers and which of
//! them this build decodes (`method.rs`), ndnpy's piece table, an extra
//! field (`pieces.rs`), the buffered, positioned input the readers share
//! (`input.rs`), member names (`names.rs`), and the writer's local headers
//! and directory (`write.rs`).
//!
//! The bottom of the archive pipeline: imports nothing else of `npz/`
//! (only `crate::error` and `crate::io`, and `write.rs` `crate::npy`'s
//! check of a patched header), so that the codecs, the member
//! reader and the public types above all build on it.

pub(crate) mod directory;
pub(crate) mod input;
pub(crate) mod method;
pub(crate) mod names;
pub(crate) mod pieces;
pub(crate) mod write;
