//! Object-free encoding of arrays as `.npy` bytes: the header an array
//! gets, and its elements written in file order through
//! [`Element::write_slice`]. Object arrays are pickled above, in
//! `crate::pickle`.

use crate::array::any::{each_variant, AnyArray};
use crate::array::element::{Element, LayoutElement};
use crate::array::record::RecordArray;
use crate::error::{Error, Result};
use crate::format::dtype::DType;
use crate::format::header::{Header, Version};
use crate::plan::Plan;
use ndarray::{ArrayBase, Data, Dimension};
use std::io::Write;

/// Strided arrays are gathered into buffers of about this many bytes.
const CHUNK_BYTES: usize = 1 << 20;

/// The header bytes and the data length, refusing arrays (such as huge
/// broadcast views) whose byte count overflows or that no reader could
/// load.
pub(crate) fn header_bytes(header: &Header) -> Result<(Vec<u8>, usize)> {
    let data_len = header.data_len()?;
    Ok((header.to_bytes()?, data_len))
}

/// How an array's elements lie in memory, as far as writing cares.
enum Layout<'a, T> {
    C(&'a [T]),
    F(&'a [T]),
    Strided,
}

fn layout<T, S: Data<Elem = T>, D: Dimension>(array: &ArrayBase<S, D>) -> Layout<'_, T> {
    if let Some(slice) = array.as_slice() {
        Layout::C(slice)
    } else if array.t().is_standard_layout() {
        match array.as_slice_memory_order() {
            Some(slice) => Layout::F(slice),
            None => Layout::Strided,
        }
    } else {
        Layout::Strided
    }
}

/// The header `np.save` writes for `array`.
pub(crate) fn npy_header<T: Element, S: Data<Elem = T>, D: Dimension>(
    array: &ArrayBase<S, D>,
) -> Header {
    Header {
        dtype: T::dtype_of(array.iter()),
        shape: array.shape().to_vec(),
        fortran_order: matches!(layout(array), Layout::F(_)),
        version: Version::V1,
    }
}

/// Writes the prepared header bytes and then the data.
pub(crate) fn write_body<T: Element, S: Data<Elem = T>, D: Dimension, W: Write + ?Sized>(
    array: &ArrayBase<S, D>,
    header: &[u8],
    writer: &mut W,
) -> Result<()> {
    write_body_with(array, &T::dtype_of(array.iter()), header, writer)
}

/// [`write_body`] when the data's dtype (the header's) is at hand.
pub(crate) fn write_body_with<T: Element, S: Data<Elem = T>, D: Dimension, W: Write + ?Sized>(
    array: &ArrayBase<S, D>,
    dtype: &DType,
    header: &[u8],
    writer: &mut W,
) -> Result<()> {
    writer.write_all(header)?;
    match layout(array) {
        Layout::C(slice) | Layout::F(slice) => T::write_slice(slice, dtype, writer)?,
        Layout::Strided => write_strided(array, dtype, writer)?,
    }
    writer.flush()?;
    Ok(())
}

/// Gathers the elements in C order into a bounded buffer, one row at a time.
fn write_strided<T: Element, S: Data<Elem = T>, D: Dimension, W: Write + ?Sized>(
    array: &ArrayBase<S, D>,
    dtype: &DType,
    writer: &mut W,
) -> Result<()> {
    let capacity = (CHUNK_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    let mut buffer: Vec<T> = Vec::with_capacity(capacity.min(array.len()));
    for row in array.rows() {
        if let Some(slice) = row.as_slice() {
            // Long contiguous rows skip the buffer.
            if slice.len() >= capacity {
                T::write_slice(&buffer, dtype, writer)?;
                buffer.clear();
                T::write_slice(slice, dtype, writer)?;
                continue;
            }
        }
        // Gather a run of the row at a time: `assign` copies a strided run
        // in one tight loop, where pushing element by element through the
        // iterator cost twice as much (BENCHMARKS.md, `write_*_strided`).
        let mut rest = row;
        while let Some(first) = rest.first() {
            if buffer.len() == capacity {
                T::write_slice(&buffer, dtype, writer)?;
                buffer.clear();
            }
            let start = buffer.len();
            let take = (capacity - start).min(rest.len());
            let (head, tail) = rest.split_at(ndarray::Axis(0), take);
            buffer.resize(start + take, first.clone());
            ndarray::ArrayViewMut1::from(&mut buffer[start..]).assign(&head);
            rest = tail;
        }
    }
    T::write_slice(&buffer, dtype, writer)
}

/// The `.npy` bytes of an array that holds no Python objects; object
/// variants (and records with object fields) are refused: they are pickled.
pub(crate) fn plain_npy_bytes(any: &AnyArray) -> Result<Vec<u8>> {
    let refuse = || Error::UnsupportedDType {
        dtype: any.dtype().to_string(),
        reason: "object arrays are pickled, not raw bytes".to_owned(),
    };
    match any {
        AnyArray::StringDType(_) => Err(refuse()),
        AnyArray::Record(r) if r.dtype().has_object() => Err(refuse()),
        AnyArray::Record(r) => plain_record_npy_bytes(r),
        _ => each_variant!(any, a => array_npy_bytes(a), object _o => Err(refuse()), raw r => {
            let mut out = r.header().to_bytes()?;
            out.extend_from_slice(&r.data);
            Ok(out)
        }),
    }
}

/// The `.npy` bytes of an array of elements that are not Python objects.
pub(crate) fn array_npy_bytes<T: Element, S: Data<Elem = T>, D: Dimension>(
    array: &ArrayBase<S, D>,
) -> Result<Vec<u8>> {
    let header = npy_header(array);
    let (bytes, data_len) = header_bytes(&header)?;
    let mut out = Vec::new();
    out.try_reserve_exact(bytes.len().saturating_add(data_len))
        .map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                "cannot allocate the .npy bytes",
            )
        })?;
    write_body_with(array, &header.dtype, &bytes, &mut out)?;
    Ok(out)
}

/// The `.npy` bytes of records without object fields: the header, then the
/// records as they are held.
pub(crate) fn plain_record_npy_bytes(r: &RecordArray) -> Result<Vec<u8>> {
    let mut out = r.header().to_bytes()?;
    out.extend_from_slice(r.as_bytes());
    Ok(out)
}

/// Padded items are converted into buffers of about this size.
const PADDED_CHUNK_BYTES: usize = 256 << 10;

/// Writes layout elements: one write of their memory when they have no
/// padding, otherwise through the mirror plan into zeroed buffers, so that
/// padding is written as zeros and never read.
pub(crate) fn write_layout<T: LayoutElement, W: Write + ?Sized>(
    elements: &[T],
    out: &mut W,
) -> Result<()> {
    let size = std::mem::size_of::<T>();
    let plan = Plan::mirror(&T::layout_dtype())?;
    if plan.is_memcpy() {
        // SAFETY: the mirror plan is one move over whole items, so by
        // `LayoutElement`'s contract `T` has no padding: every byte of the
        // slice is initialised, and `u8` has no alignment or validity
        // requirement.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                elements.as_ptr().cast::<u8>(),
                std::mem::size_of_val(elements),
            )
        };
        out.write_all(bytes)?;
        return Ok(());
    }
    let per_chunk = (PADDED_CHUNK_BYTES / size.max(1)).max(1);
    let mut buffer = Vec::new();
    for chunk in elements.chunks(per_chunk) {
        buffer.clear();
        buffer.resize(std::mem::size_of_val(chunk), 0);
        // SAFETY: `chunk` is `chunk.len()` initialised `T`s, `size` bytes
        // each; the moves read only field bytes, which `LayoutElement`'s
        // contract places inside each item and which are initialised.
        unsafe { plan.convert(chunk.as_ptr().cast::<u8>(), chunk.len(), &mut buffer) };
        out.write_all(&buffer)?;
    }
    Ok(())
}
