//! Bytes into the form safetensors holds: little-endian items in C order,
//! `bool`s as 0 or 1.

use ndarray::{ArrayView, IxDyn, ShapeBuilder};

/// Reverses the bytes of every `unit`-byte group of `data` (big-endian
/// items to little-endian).
pub(super) fn swap_bytes(data: &mut [u8], unit: usize) {
    // Fixed sizes let the compiler turn each group into one `bswap`.
    fn swap<const N: usize>(data: &mut [u8]) {
        for chunk in data.chunks_exact_mut(N) {
            chunk.reverse();
        }
    }
    match unit {
        2 => swap::<2>(data),
        4 => swap::<4>(data),
        8 => swap::<8>(data),
        _ => data.chunks_exact_mut(unit.max(1)).for_each(<[u8]>::reverse),
    }
}

/// Whether every byte is 0 or 1.
pub(super) fn bools_are_canonical(data: &[u8]) -> bool {
    data.iter().all(|&b| b <= 1)
}

/// Turns every nonzero byte into 1, as NumPy reads `bool` bytes.
pub(super) fn canonical_bools(data: &mut [u8]) {
    for b in data {
        *b = (*b != 0) as u8;
    }
}

/// The items of `data`, `itemsize` bytes each, laid out in Fortran order
/// for `shape`, rearranged into C order. `data` holds exactly the items of
/// `shape`.
pub(super) fn fortran_to_c(data: &[u8], shape: &[usize], itemsize: usize) -> Vec<u8> {
    fn items<const N: usize>(data: &[u8], shape: &[usize]) -> Vec<u8> {
        // `[u8; N]` has alignment 1, so any byte slice of the right length
        // is a slice of items: no alignment requirement on `data`.
        let (items, rest) = data.as_chunks::<N>();
        debug_assert!(rest.is_empty());
        let view = ArrayView::from_shape(IxDyn(shape).f(), items)
            .expect("the caller passes exactly the items of the shape");
        view.iter()
            .copied()
            .collect::<Vec<[u8; N]>>()
            .into_flattened()
    }
    match itemsize {
        1 => items::<1>(data, shape),
        2 => items::<2>(data, shape),
        4 => items::<4>(data, shape),
        8 => items::<8>(data, shape),
        16 => items::<16>(data, shape),
        _ => {
            // Any other size: the item's bytes as one more, innermost axis
            // of stride 1.
            let mut dims = shape.to_vec();
            dims.push(itemsize);
            let mut strides = Vec::with_capacity(dims.len());
            let mut stride = itemsize;
            for &d in shape {
                strides.push(stride);
                stride *= d;
            }
            strides.push(1);
            ArrayView::from_shape(IxDyn(&dims).strides(IxDyn(&strides)), data)
                .expect("the caller passes exactly the items of the shape")
                .iter()
                .copied()
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_each_unit() {
        let mut d = [1, 2, 3, 4, 5, 6, 7, 8];
        swap_bytes(&mut d, 4);
        assert_eq!(d, [4, 3, 2, 1, 8, 7, 6, 5]);
        swap_bytes(&mut d, 8);
        assert_eq!(d, [5, 6, 7, 8, 1, 2, 3, 4]);
        let mut d = [1, 2, 3, 4, 5, 6];
        swap_bytes(&mut d, 3);
        assert_eq!(d, [3, 2, 1, 6, 5, 4]);
    }

    #[test]
    fn bools() {
        let mut d = [0, 1, 2, 255];
        assert!(!bools_are_canonical(&d));
        canonical_bools(&mut d);
        assert_eq!(d, [0, 1, 1, 1]);
        assert!(bools_are_canonical(&d));
    }

    #[test]
    fn fortran_order_becomes_c_order_for_every_item_size() {
        // A (2, 3) array [[0, 1, 2], [3, 4, 5]], Fortran order: 0 3 1 4 2 5.
        for itemsize in [1, 2, 3, 4, 8, 16] {
            let item = |v: u8| vec![v; itemsize];
            let f: Vec<u8> = [0, 3, 1, 4, 2, 5].into_iter().flat_map(item).collect();
            let c: Vec<u8> = (0..6).flat_map(item).collect();
            assert_eq!(fortran_to_c(&f, &[2, 3], itemsize), c, "{itemsize}");
        }
        // Three dimensions, (2, 2, 2): element (i, j, k) holds 4i + 2j + k.
        let f = [0u8, 4, 2, 6, 1, 5, 3, 7];
        assert_eq!(fortran_to_c(&f, &[2, 2, 2], 1), (0..8).collect::<Vec<u8>>());
    }
}
