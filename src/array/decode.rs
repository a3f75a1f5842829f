//! Object-free decoding of array bytes: a [`Source`] into typed arrays
//! through a conversion [`Plan`], and into an [`AnyArray`] of whatever
//! element type the header names. Object arrays are decoded above, in
//! `crate::pickle`; this module refuses them.

use crate::array::any::AnyArray;
use crate::array::element::{type_name, Element, LayoutElement};
use crate::error::{Error, Result};
use crate::format::dtype::DType;
use crate::format::header::{Header, Version};
use crate::io::source::{out_of_memory, reserve, zero_sized, Fix, Source};
use crate::plan::Plan;
use ndarray::{Array, ArrayViewMut, Dimension, ShapeBuilder};

/// Reads `n` items of `plan`'s source dtype as `T`s.
///
/// Never allocates more than the source is known to hold; a stream's
/// buffer grows in steps as its bytes arrive.
pub(crate) fn read_planned<T: LayoutElement>(
    source: &mut Source<'_>,
    n: usize,
    plan: &Plan,
) -> Result<Vec<T>> {
    debug_assert_eq!(plan.dst_size(), std::mem::size_of::<T>());
    if plan.in_place() {
        let fix = |bytes: &mut [u8]| plan.fix_in_place(bytes);
        let fix: Option<Fix<'_>> = if plan.has_fixups() { Some(&fix) } else { None };
        // SAFETY: an in-place plan's source has the destination's offsets
        // and types, so by `LayoutElement`'s contract any bits are valid
        // there once `fix_in_place` has swapped them to native order, made
        // `bool` bytes 0 or 1 and zeroed long-double padding; a plan
        // without fixups needs none of that. Padding bytes of `T` hold the
        // file's bytes: initialised, and never read as a field.
        unsafe { source.read_items::<T>(n, fix) }
    } else {
        read_converted(source, n, plan)
    }
}

/// Reads `n` items through a cache-sized scratch buffer and converts
/// them item by item into zeroed destination memory.
fn read_converted<T: LayoutElement>(
    source: &mut Source<'_>,
    n: usize,
    plan: &Plan,
) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    if size == 0 {
        // Still consume the source bytes, so a stream stays in step.
        source.read_chunks(n, plan.src_size(), |_, _| Ok(()))?;
        // SAFETY: by `LayoutElement`'s contract a zero-sized `T` has no
        // bytes to be invalid.
        return unsafe { zero_sized(n) };
    }
    let mut data: Vec<T> = Vec::new();
    if source.is_trusted() {
        source.check_len(n as u64 * plan.src_size() as u64)?;
        reserve(&mut data, n, n.saturating_mul(size))?;
    }
    source.read_chunks(n, plan.src_size(), |chunk, count| {
        let start = data.len();
        data.try_reserve(count)
            .map_err(|_| out_of_memory((start + count).saturating_mul(size)))?;
        let spare = &mut data.spare_capacity_mut()[..count];
        // SAFETY: `spare` is `count` uninitialised `T`s; the byte slice
        // covers exactly their memory (`count * size` bytes, borrowed from
        // `spare`), and `write_bytes` initialises every byte of it first.
        let bytes: &mut [u8] = unsafe {
            let ptr = spare.as_mut_ptr().cast::<u8>();
            std::ptr::write_bytes(ptr, 0, count * size);
            std::slice::from_raw_parts_mut(ptr, count * size)
        };
        plan.convert_slice(chunk, bytes);
        // SAFETY: every destination field was written from a source
        // field of the same type (the plan matched them), in native
        // order; `bool` bytes were normalised; the remaining bytes are
        // the destination's padding (zero). By `LayoutElement`'s
        // contract these are valid `T`s.
        unsafe { data.set_len(start + count) };
        Ok(())
    })?;
    Ok(data)
}

/// Checks that `header` describes an array of `T` with the dimensionality of
/// `D`, returning the dimension.
pub(crate) fn check_header<T: Element, D: Dimension>(header: &Header) -> Result<D> {
    T::check_dtype(&header.dtype)?;
    let dim = dimension::<D>(&header.shape)?;
    header.data_len()?;
    Ok(dim)
}

/// The shape as a `D`, or the error naming both dimensionalities.
pub(crate) fn dimension<D: Dimension>(shape: &[usize]) -> Result<D> {
    if let Some(ndim) = D::NDIM {
        if ndim != shape.len() {
            return Err(Error::NdimMismatch {
                expected: ndim,
                found: shape.len(),
                shape: shape.to_vec(),
            });
        }
    }
    let mut dim = D::zeros(shape.len());
    dim.slice_mut().copy_from_slice(shape);
    Ok(dim)
}

/// Reads the data that follows `header` from `source` into an owned array
/// of `T` (object arrays excepted: `T::check_dtype` refuses them here).
pub(crate) fn read_array<T: Element, D: Dimension>(
    header: &Header,
    source: &mut Source<'_>,
) -> Result<Array<T, D>> {
    let dim = check_header::<T, D>(header)?;
    let data = T::read_vec(&header.dtype, header.num_elements()?, source)?;
    Array::from_shape_vec(dim.set_f(header.fortran_order), data).map_err(|_| {
        Error::Limit(crate::error::LimitError::LengthOverflow {
            shape: header.shape.iter().map(|&d| d as u64).collect(),
            itemsize: std::mem::size_of::<T>(),
        })
    })
}

/// An array of `dtype` and `shape` from exactly its bytes, through the
/// crate's `.npy` reading path (a pickled array's data, or a NumPy
/// scalar's; `pos` is where the pickle held it, for errors).
pub(crate) fn array_from_bytes(
    dtype: &DType,
    shape: &[usize],
    fortran: bool,
    bytes: &[u8],
    pos: usize,
) -> Result<AnyArray> {
    let header = Header {
        dtype: dtype.clone(),
        shape: shape.to_vec(),
        fortran_order: fortran,
        version: Version::V1,
    };
    let need = header.data_len().map_err(|_| {
        Error::Pickle(crate::error::PickleError::MalformedPickle {
            pos,
            reason: format!("the array shape {shape:?} of {dtype} overflows"),
        })
    })?;
    if bytes.len() != need {
        return Err(Error::Pickle(crate::error::PickleError::MalformedPickle {
            pos,
            reason: format!(
                "the array data has {} bytes, its shape {shape:?} and dtype {dtype} need {need}",
                bytes.len()
            ),
        }));
    }
    AnyArray::read_data(&header, &mut Source::slice(bytes))
}

/// Reads the data that follows `header` from `source` into `out`, which must
/// have the header's shape: converting byte order, fields and memory order
/// (a C-order file into a Fortran-order view and the reverse), with memory
/// bounded by a constant, not by the data.
///
/// When `out` is contiguous in the file's order and the plan works in
/// place, the bytes land in `out`'s memory directly; otherwise they pass
/// through a cache-sized scratch buffer. On an error `out` holds valid
/// elements, some of them already overwritten.
pub(crate) fn read_into<T: LayoutElement, D: Dimension>(
    header: &Header,
    source: &mut Source<'_>,
    out: &mut ArrayViewMut<'_, T, D>,
) -> Result<()> {
    let plan = Plan::compile(&header.dtype, &T::layout_dtype(), type_name::<T>())?;
    if out.shape() != header.shape.as_slice() {
        return Err(Error::ShapeMismatch {
            expected: out.shape().to_vec(),
            found: header.shape.clone(),
        });
    }
    header.data_len()?;
    let n = header.num_elements()?;
    // Whether `out`'s memory, in order, is the file's order of elements.
    let in_file_order = if header.fortran_order && out.ndim() > 1 {
        out.t().is_standard_layout()
    } else {
        out.is_standard_layout()
    };
    if plan.in_place() && in_file_order {
        if let Some(slice) = out.as_slice_memory_order_mut() {
            let fix = |bytes: &mut [u8]| plan.fix_in_place(bytes);
            let fix: Option<Fix<'_>> = if plan.has_fixups() { Some(&fix) } else { None };
            // SAFETY: as in `read_planned`: after the in-place fix-ups the
            // file's bytes are valid `T`s by `LayoutElement`'s contract,
            // which also makes all-zero bytes valid.
            return unsafe { source.read_items_into(slice, fix) };
        }
    }
    let size = std::mem::size_of::<T>();
    // A 2-D array in the other order: the blocked transposition, for
    // lanes (the file's contiguous runs) of up to 256 KiB, so that a block
    // of 8 to 64 of them stays within 2 MiB.
    let lane = header
        .shape
        .get(usize::from(!header.fortran_order))
        .copied();
    let short_lanes = lane.is_some_and(|l| l.saturating_mul(size) <= 256 << 10);
    if out.ndim() == 2 && n > 0 && size > 0 && plan.src_size() > 0 && short_lanes {
        let two = out.view_mut().into_dimensionality::<ndarray::Ix2>();
        let two = two.expect("two dimensions");
        let lanes = if header.fortran_order {
            two.reversed_axes()
        } else {
            two
        };
        return crate::array::transpose::read_lanes(&plan, source, lanes);
    }
    let per_chunk = (SCRATCH_BYTES / size.max(1)).max(1).min(n.max(1));
    let mut scratch: Vec<T> = Vec::new();
    reserve(&mut scratch, per_chunk, per_chunk.saturating_mul(size))?;
    // The file's order of elements: C order of `out`, or C order of its
    // transpose (Fortran order of `out`).
    let mut targets: Box<dyn Iterator<Item = &mut T>> = if header.fortran_order {
        Box::new(out.view_mut().reversed_axes().into_iter())
    } else {
        Box::new(out.iter_mut())
    };
    let mut filled = 0usize;
    source.read_chunks(n, plan.src_size(), |chunk, count| {
        for part in chunk.chunks(per_chunk * plan.src_size().max(1)) {
            let items = if plan.src_size() == 0 {
                count
            } else {
                part.len() / plan.src_size()
            };
            scratch.clear();
            let spare = &mut scratch.spare_capacity_mut()[..items];
            // SAFETY: `spare` is `items` uninitialised `T`s (`items` is at
            // most the capacity reserved above); the byte slice covers
            // exactly their memory and `write_bytes` initialises it first.
            let bytes: &mut [u8] = unsafe {
                let ptr = spare.as_mut_ptr().cast::<u8>();
                std::ptr::write_bytes(ptr, 0, items * size);
                std::slice::from_raw_parts_mut(ptr, items * size)
            };
            plan.convert_slice(part, bytes);
            // SAFETY: as in `read_converted`: every field was written from
            // a source field of its type, in native order, `bool` bytes
            // normalised, padding zero; valid `T`s by `LayoutElement`'s
            // contract.
            unsafe { scratch.set_len(items) };
            for (value, target) in scratch.drain(..).zip(&mut targets) {
                *target = value;
            }
            filled += items;
            if plan.src_size() == 0 {
                break;
            }
        }
        Ok(())
    })?;
    debug_assert!(filled == n || size == 0);
    Ok(())
}

/// Elements read into an existing array through a scratch buffer pass
/// through pieces of about this many bytes.
const SCRATCH_BYTES: usize = 256 << 10;
