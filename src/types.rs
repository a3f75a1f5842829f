//! Element and string types beyond Rust's own numbers, `bool`, `String`
//! and `Vec<u8>`: NumPy's fixed-width strings ([`FixedUnicode`],
//! [`FixedBytes`]) and their compact arrays ([`StringArray`],
//! [`BytesArray`]), dates and durations ([`Datetime64`], [`Timedelta64`]
//! with [`unit`](mod@unit) markers), x86-64's long double ([`LongDouble`],
//! [`ComplexLongDouble`]), the 8-bit floats of ML checkpoints
//! ([`Float8E4M3Fn`], [`Float8E5M2`], [`MlFloat`]), records
//! ([`RecordArray`] at run time, [`record!`](crate::record) at compile
//! time) and [`LayoutElement`], the types a view or a map can borrow.
//! The crates `half` and `num_complex` are re-exported here (features
//! `half` and `complex`) so that their versions match ndnpy's.
//!
//! You need this module when a file holds something other than plain
//! numbers or strings, or when you write generic code over viewable types.
//!
//! ```
//! use ndnpy::types::{unit, Datetime64};
//! use ndnpy::{ReadNpy, WriteNpy};
//! let days = ndarray::array![Datetime64::<unit::D>::new(19_000)];
//! let back = ndarray::Array1::<Datetime64<unit::D>>::from_npy_bytes(&days.to_npy_bytes()?)?;
//! assert_eq!(back, days);
//! # Ok::<(), ndnpy::Error>(())
//! ```

pub use crate::array::compact::{BytesArray, StringArray};
pub use crate::array::datetime::{unit, Datetime64, Timedelta64};
pub use crate::array::element::LayoutElement;
pub use crate::array::longdouble::{ComplexLongDouble, LongDouble};
pub use crate::array::ml::{Float8E4M3Fn, Float8E5M2, MlFloat};
pub use crate::array::record::RecordArray;
pub use crate::array::strings::{FixedBytes, FixedUnicode};

#[cfg(feature = "half")]
pub use half;
#[cfg(feature = "complex")]
pub use num_complex;
