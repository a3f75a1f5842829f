//! Row ranges inside deflated members: a seek index of block boundaries
//! with their windows (`index.rs`), decoded from there by the library's
//! one deflate decoder (`npz/codec/deflate/inflate_core/`), kept on disk if asked
//! (`sidecar.rs`).

mod index;
mod sidecar;
mod sidecar_format;
mod sidecar_use;

pub(crate) use index::{Failure, MemberKey, SeekIndex};
pub(crate) use sidecar::{stamp_of, Sidecar, Stamp};
