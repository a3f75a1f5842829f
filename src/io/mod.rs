//! Layer 0, I/O: bytes only, no dtype. Checked `Read`/`Write` counts,
//! positioned reads and file locks, atomic path writes, and [`source`]:
//! where the bytes of a `.npy` body come from (a file, a slice, a stream).
//!
//! May use: [`crate::error`] and [`crate::options`]. Nothing here knows what
//! the bytes mean; the layers above decide that.

pub(crate) mod atomic;
pub(crate) mod checked;
pub(crate) mod fs;
pub(crate) mod gather;
pub(crate) mod guard;
pub(crate) mod memory;
pub(crate) mod sized;
pub(crate) mod source;
pub(crate) mod spare;
pub(crate) mod target;
pub(crate) mod temp;
