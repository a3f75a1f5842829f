//! `.npz` archives: zip files of `.npy` members, as `np.savez` and
//! `np.savez_compressed` write them.
//!
//! - [`NpzReader`] reads members into owned arrays (stored or deflated,
//!   zip64, data descriptors, archive comments), with NumPy's naming rule.
//! - [`NpzWriter`] writes archives NumPy loads, stored or compressed,
//!   atomically when the target is a path.
//! - [`NpzMmap`] maps an archive and views its stored members without
//!   copying.
//!
//! Archives are read as Python's `zipfile` reads them (`zip/directory.rs`), so
//! that every archive means the same thing here and in `np.load`. They are
//! written by our own zip container (`zip/write.rs`), so that members can be
//! deflated in parallel (`sink.rs`, `codec/deflate/compress.rs`) and streamed. Everything inside
//! a member goes through the same preamble parser and element conversion as
//! a `.npy` file.
//!
//! Layer 6, the top. May use every layer below: `crate::npy` and
//! `crate::pickle` to read members, `crate::array::encode` to write them.

mod codec;
mod compressed;
mod direct;
mod held;
mod info;
mod member;
mod members;
mod mmap;
mod pool;
mod prefetch;
mod range;
mod read_ahead;
mod reader;
mod seek;
mod sink;
mod writer;
mod zip;

/// The parallel inflater of one deflate stream, for the fuzz target and
/// the benchmark only: not a public API.
#[doc(hidden)]
pub use codec::deflate::pinflate::__inflate_parallel;
pub use codec::Codec;
pub use info::{Compression, MemberInfo};
pub use members::{NpzArrays, NpzMemberReader};
pub use mmap::NpzMmap;
pub use reader::NpzReader;
pub use writer::{NpzMemberWriter, NpzWriter};

use crate::error::Error;
use std::io;

/// The error for data that is not a zip archive (`start` holds its first
/// bytes), pointing to the right reader when it is a `.npy` file.
pub(crate) fn not_an_archive(start: &[u8], err: Error) -> Error {
    if start.starts_with(crate::format::header::MAGIC) {
        return Error::Archive(crate::error::ArchiveError::InvalidArchive {
            reason: "this is a .npy file, not an .npz archive (read it with ReadNpy or AnyArray::read_npy)"
                .into(),
        });
    }
    err
}

/// Turns an I/O error met while decompressing member `name` into the
/// specific variant it stands for: the member reader's own typed errors
/// (CRC mismatch, early end) come back out as they are; `flate2` reports a
/// broken deflate stream as an `io::Error` of a kind that a file read does
/// not produce.
pub(crate) fn member_io_error(name: &str, err: io::Error) -> Error {
    let err = match crate::error::typed_inside(err) {
        Ok(typed) => return typed,
        Err(err) => err,
    };
    let name = name.to_owned();
    let text = err.to_string();
    match err.kind() {
        io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput => {
            Error::Archive(crate::error::ArchiveError::CorruptMember { name, reason: text })
        }
        io::ErrorKind::UnexpectedEof => Error::Archive(crate::error::ArchiveError::CorruptMember {
            name,
            reason: format!("its data ends early ({text})"),
        }),
        _ => Error::Io(err),
    }
}

/// Applies [`member_io_error`] to the I/O errors inside a crate error.
pub(crate) fn in_member(name: &str, err: Error) -> Error {
    match err {
        Error::Io(e) => member_io_error(name, e),
        Error::Header(crate::error::HeaderError::BadMagic { found }) => {
            Error::Archive(crate::error::ArchiveError::NotNpy {
                name: name.to_owned(),
                found,
            })
        }
        other => other,
    }
}
