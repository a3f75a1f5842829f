//! One field of an array of records, read as if it were an array of its
//! own: the bytes of `Source::Gather`.

use std::mem::MaybeUninit;

/// Copies the field column of `records` from byte `*pos` of the column into
/// `dst`, as far as both go; returns the count and advances `*pos`.
pub(crate) fn gather(
    records: &[u8],
    itemsize: usize,
    offset: usize,
    size: usize,
    pos: &mut usize,
    dst: &mut [MaybeUninit<u8>],
) -> usize {
    if size == 0 || itemsize == 0 {
        return 0;
    }
    let total = records.len() / itemsize * size;
    let want = dst.len().min(total - *pos);
    let mut done = 0;
    // A partial field first, then whole fields (the common case: the reader
    // asks for whole items).
    while done < want && !(*pos).is_multiple_of(size) {
        done += copy_piece(records, itemsize, offset, size, pos, &mut dst[done..want]);
    }
    let whole = (want - done) / size;
    let first = *pos / size;
    let column = records[first * itemsize..(first + whole) * itemsize].chunks_exact(itemsize);
    let out = dst[done..done + whole * size].chunks_exact_mut(size);
    match size {
        8 => column.zip(out).for_each(|(r, d)| {
            let v: [u8; 8] = r[offset..offset + 8].try_into().unwrap_or([0; 8]);
            d.iter_mut()
                .zip(v)
                .for_each(|(d, b)| *d = MaybeUninit::new(b));
        }),
        4 => column.zip(out).for_each(|(r, d)| {
            let v: [u8; 4] = r[offset..offset + 4].try_into().unwrap_or([0; 4]);
            d.iter_mut()
                .zip(v)
                .for_each(|(d, b)| *d = MaybeUninit::new(b));
        }),
        _ => column.zip(out).for_each(|(r, d)| {
            d.iter_mut()
                .zip(&r[offset..offset + size])
                .for_each(|(d, &b)| *d = MaybeUninit::new(b));
        }),
    }
    done += whole * size;
    *pos += whole * size;
    while done < want {
        done += copy_piece(records, itemsize, offset, size, pos, &mut dst[done..want]);
    }
    done
}

/// Copies the rest of the field that column byte `*pos` falls in (as much of
/// it as `dst` holds) and advances `*pos`; returns the count.
fn copy_piece(
    records: &[u8],
    itemsize: usize,
    offset: usize,
    size: usize,
    pos: &mut usize,
    dst: &mut [MaybeUninit<u8>],
) -> usize {
    let (rec, within) = (*pos / size, *pos % size);
    let take = (size - within).min(dst.len());
    let at = rec * itemsize + offset + within;
    for (d, &b) in dst[..take].iter_mut().zip(&records[at..at + take]) {
        *d = MaybeUninit::new(b);
    }
    *pos += take;
    take
}
