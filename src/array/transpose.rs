//! Reading a 2-D file into an array whose memory runs in the other order
//! (a Fortran file into a C-order array, or the reverse): a blocked
//! transposition. Whole lanes of the file (its contiguous runs) are
//! converted into a scratch block of up to 64 lanes, then copied out
//! walking the array's memory in order, so that every store lands next to
//! the previous one and the scratch reads stay within a few cache lines.

use crate::array::element::LayoutElement;
use crate::error::Result;
use crate::io::source::{reserve, Source};
use crate::plan::Plan;
use ndarray::{s, ArrayView1, ArrayViewMut2};

/// Scratch bytes per block (a block holds at most 64 lanes; callers pass
/// lanes of at most 256 KiB, so at least 8 fit).
const BLOCK_BYTES: usize = 2 << 20;

/// Reads the file's elements into `lanes`, the array seen in the file's
/// order: row `j` of `lanes` is the file's `j`-th contiguous run.
pub(crate) fn read_lanes<T: LayoutElement>(
    plan: &Plan,
    source: &mut Source<'_>,
    mut lanes: ArrayViewMut2<'_, T>,
) -> Result<()> {
    let (count, len) = lanes.dim();
    let n = count * len;
    let size = std::mem::size_of::<T>();
    let item = plan.src_size();
    debug_assert!(size > 0 && item > 0 && n > 0);
    let per_block = (BLOCK_BYTES / (len * size)).clamp(1, 64);
    // Lanes sit `pitch` elements apart in the scratch block: a power-of-two
    // lane length would put every lane's i-th element in the same cache
    // set, and the copy reads those together.
    let pitch = len + PAD;
    let capacity = per_block * pitch;
    let mut scratch: Vec<T> = Vec::new();
    reserve(&mut scratch, capacity, capacity * size)?;
    // SAFETY: the capacity holds `capacity` `T`s (reserved above); the
    // bytes are zeroed before the length covers them, and all-zero bytes
    // are a valid `T` by `LayoutElement`'s contract.
    unsafe {
        std::ptr::write_bytes(scratch.as_mut_ptr(), 0, capacity);
        scratch.set_len(capacity);
    }
    let mut first = 0usize; // the block's first lane
    let mut filled = 0usize; // elements in the block
    source.read_chunks(n, item, |chunk, _| {
        let mut rest = chunk;
        while !rest.is_empty() {
            let (lane, pos) = (filled / len, filled % len);
            let items = (rest.len() / item).min(len - pos);
            let (part, tail) = rest.split_at(items * item);
            let at = lane * pitch + pos;
            let dst = &mut scratch[at..at + items];
            // SAFETY: `dst` is `items` initialised `T`s; the byte slice
            // covers exactly their memory, which `convert_slice` overwrites
            // field by field from source fields of their types, in native
            // order, `bool` bytes normalised, padding zero: valid `T`s by
            // `LayoutElement`'s contract (as in `decode::read_into`).
            let bytes: &mut [u8] = unsafe {
                std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u8>(), items * size)
            };
            plan.convert_slice(part, bytes);
            rest = tail;
            filled += items;
            if filled == per_block * len || first * len + filled == n {
                let here = filled / len;
                copy_block(
                    &scratch,
                    pitch,
                    len,
                    lanes.slice_mut(s![first..first + here, ..]),
                );
                first += here;
                filled = 0;
            }
        }
        Ok(())
    })
}

/// Elements between two lanes in the scratch block.
const PAD: usize = 16;

/// Copies `block` (lanes of `len` elements, `pitch` apart) into `out` (one
/// row per lane), walking `out`'s memory in order.
fn copy_block<T: Copy>(block: &[T], pitch: usize, len: usize, mut out: ArrayViewMut2<'_, T>) {
    let [lane_stride, step] = [out.strides()[0], out.strides()[1]];
    if lane_stride.unsigned_abs() < step.unsigned_abs() {
        // Lanes lie side by side in memory: for each position along the
        // lanes, the block's elements are one short run of `out`.
        for i in 0..len {
            let mut run = out.column_mut(i);
            match run.as_slice_mut() {
                Some(run) => {
                    for (b, x) in run.iter_mut().enumerate() {
                        *x = block[b * pitch + i];
                    }
                }
                None => {
                    for (b, x) in run.iter_mut().enumerate() {
                        *x = block[b * pitch + i];
                    }
                }
            }
        }
    } else {
        for (b, mut row) in out.rows_mut().into_iter().enumerate() {
            row.assign(&ArrayView1::from(&block[b * pitch..b * pitch + len]));
        }
    }
}
