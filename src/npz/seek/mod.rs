//! Row ranges inside deflated members: a seek index of block boundaries
//! with their windows (`index.rs`), and the decoder that starts at them
//! (`inflate.rs`, tables in `huffman.rs`), kept on disk if asked
//! (`sidecar.rs`).

mod bits;
mod huffman;
mod index;
mod inflate;
mod sidecar;
mod sidecar_format;
mod sidecar_use;

pub(crate) use index::{Failure, MemberKey, SeekIndex};
pub(crate) use sidecar::{stamp_of, Sidecar, Stamp};
