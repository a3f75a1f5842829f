//! Arrow arrays and record batches ↔ ndnpy arrays, for Polars and
//! DataFusion users: 1-D [`AnyArray`](ndnpy::AnyArray)s ↔
//! [`ArrayRef`](arrow_array::ArrayRef) (with a validity mask beside the
//! values, since NumPy arrays have none), records ([`ndnpy::RecordArray`])
//! ↔ [`StructArray`](arrow_array::StructArray)/[`arrow_array::RecordBatch`],
//! and an `.npz` of 1-D members ↔ a record batch (`npz.rs`).
//!
//! One file a direction, since a record's fields are arrays in turn: the
//! way to Arrow (`encode.rs`: arrays, then records as structs) and the way
//! back (`decode.rs`: arrays, structs as records). Both, and `npz.rs`,
//! import only this file's `unsupported` error.
//!
//! | NumPy | Arrow |
//! |---|---|
//! | `bool`, `int8`…`uint64`, `float16/32/64` | the same primitive type; numbers move without a copy where the buffers allow ([`into_arrow`], [`from_arrow_owned`]) |
//! | `<U`, `\|S` | `Utf8` (`LargeUtf8` over 2 GiB), `Binary`; `Utf8View`, `LargeUtf8`, `LargeBinary`, `BinaryView`, `FixedSizeBinary` read too |
//! | `datetime64[s/ms/us/ns]`, `timedelta64[…]` | `Timestamp` (no time zone; a zone read is dropped: the values are UTC instants), `Duration`; `NaT` is null |
//! | `datetime64[D]` | `Date32` (and `Date64` reads as `datetime64[ms]`) |
//! | records | `Struct` (fields by name), or a `RecordBatch` of 1-D records |
//!
//! Nulls read into a mask (`Vec<bool>`, `true` = valid) beside values that
//! hold zeros (or `NaT`, or `""`) there. Other types (complex, objects,
//! long double, other datetime units, lists, dictionaries) are an
//! [`Error::Unsupported`].

use crate::error::Error;

mod decode;
mod encode;
mod npz;
mod parquet;
mod tensor;

pub use decode::{batch_to_records, from_arrow, from_arrow_owned, struct_to_records};
pub use encode::{into_arrow, records_to_batch, records_to_struct, to_arrow};
pub use npz::{batch_to_npz, npz_to_batch};
pub use parquet::{read_parquet, write_parquet};
pub use tensor::{from_tensor, into_tensor, is_tensor, FIXED_SHAPE_TENSOR};

/// The error for a type or shape Arrow and NumPy do not share.
fn unsupported(what: impl Into<String>) -> Error {
    Error::Unsupported {
        column: String::new(),
        reason: what.into(),
    }
}
