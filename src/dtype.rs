//! The header's description of an array: [`Header`] (dtype, shape, order,
//! version), [`DType`] and its parts ([`Field`], [`Scalar`], [`Kind`],
//! [`ByteOrder`]). [`Header::open`] reads a file's header without its data
//! ([`Header::read_from`] from any reader).
//!
//! You need this module when the element type is known only at run time
//! (to choose what to read, or to print what a file holds), or to build a
//! header by hand for [`NpyMmap::create_with_header`](crate::NpyMmap::create_with_header).
//!
//! ```
//! use ndnpy::dtype::{DType, Header, Version};
//! use ndnpy::WriteNpy;
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("a.npy");
//! ndarray::Array2::<f32>::zeros((3, 4)).write_npy(&path)?;
//! let h = Header::open(&path)?;
//! assert_eq!((h.dtype, h.shape, h.version), (DType::parse("<f4")?, vec![3, 4], Version::V1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use crate::format::dtype::{ByteOrder, DType, Field, Kind, Scalar};
pub use crate::format::header::{Header, Version, NUMPY_MAX_DIMS};
