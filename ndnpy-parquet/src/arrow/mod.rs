//! Arrow arrays and record batches ↔ ndnpy arrays, for Polars and
//! DataFusion users: 1-D [`AnyArray`](ndnpy::AnyArray)s ↔
//! [`ArrayRef`](arrow_array::ArrayRef) (with a validity mask beside the
//! values, since NumPy arrays have none), records ([`ndnpy::types::RecordArray`])
//! ↔ [`StructArray`](arrow_array::StructArray)/[`arrow_array::RecordBatch`],
//! `(n, d1, …, dk)` arrays ↔ `arrow.fixed_shape_tensor` columns
//! ([`into_tensor`], [`from_tensor`]), an `.npz` ↔ a record batch (1-D
//! members as plain columns, N-d ones as tensor columns; `npz.rs`), and
//! record batches ↔ Parquet through the Arrow writer and reader
//! ([`write_parquet`], [`read_parquet`]; the tensor extension kept in
//! `ARROW:schema`, as pyarrow keeps it).
//!
//! One file a direction, since a record's fields are arrays in turn: the
//! way to Arrow (`encode.rs`: arrays, then records as structs) and the way
//! back (`decode.rs`: arrays, structs as records). Both import only this
//! file's `unsupported` error; `tensor.rs` and `npz.rs` build on their
//! re-exports here, `parquet.rs` on neither.
//!
//! | NumPy | Arrow |
//! |---|---|
//! | `bool`, `int8`…`uint64`, `float16/32/64` | the same primitive type; numbers move without a copy where the buffers allow ([`into_arrow`], [`from_arrow_owned`]) |
//! | `<U`, `\|S` | `Utf8` (`LargeUtf8` over 2 GiB), `Binary`; `Utf8View`, `LargeUtf8`, `LargeBinary`, `BinaryView`, `FixedSizeBinary` read too |
//! | `datetime64[s/ms/us/ns]`, `timedelta64[…]` | `Timestamp` (no time zone; a zone read is dropped: the values are UTC instants), `Duration`; `NaT` is null |
//! | `datetime64[D]` | `Date32` (and `Date64` reads as `datetime64[ms]`) |
//! | records | `Struct` (fields by name), or a `RecordBatch` of 1-D records |
//! | `(n, d1, …, dk)` arrays of the types above (not records) | `arrow.fixed_shape_tensor`: `FixedSizeList<value, d1·…·dk>`, `{"shape": [d1, …, dk]}`; numbers in standard layout move without a copy, other layouts are copied in C order |
//!
//! Nulls read into a mask (`Vec<bool>`, `true` = valid) beside values that
//! hold zeros (or `NaT`, or `""`) there. Other types (complex, objects,
//! long double, other datetime units, lists other than tensors,
//! dictionaries) are an
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
