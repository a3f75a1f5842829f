//! `ViewNpy::view_npy` and `ViewMutNpy::view_npy_mut` over arbitrary bytes at
//! every alignment: never panic, never form a misaligned or invalid
//! reference, and give what an owned read gives whenever they succeed.
//!
//! The input is the file; its length modulo 8 picks how far it is shifted
//! from 8-byte alignment, so fixture files are seeds as they are.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarray::{Array, ArrayView, ArrayViewMut, Dimension, Ix0, Ix1, Ix2, Ix3, IxDyn};
use ndnpy::types::half::f16;
use ndnpy::types::num_complex::Complex;
use ndnpy::{Error, types::LayoutElement, ReadNpy, ViewMutNpy, ViewNpy, WriteNpy};

fn check<T: LayoutElement, D: Dimension>(bytes: &[u8], copy: &mut [u8]) {
    let owned = Array::<T, D>::from_npy_bytes(bytes);
    match ArrayView::<T, D>::view_npy(bytes) {
        Ok(view) => {
            // The pointer handed out is aligned and inside the buffer.
            let ptr = view.as_ptr() as usize;
            assert_eq!(ptr % std::mem::align_of::<T>(), 0);
            if view.len() > 0 {
                let start = bytes.as_ptr() as usize;
                assert!(ptr >= start && ptr < start + bytes.len());
            }
            let owned = owned.expect("a file that views also reads");
            assert_eq!(view.to_npy_bytes().unwrap(), owned.to_npy_bytes().unwrap());
        }
        Err(
            Error::View(ndnpy::error::ViewError::Misaligned { .. })
            | Error::View(ndnpy::error::ViewError::NonNativeByteOrder { .. })
            | Error::Data(ndnpy::error::DataError::InvalidBool { .. })
            | Error::View(ndnpy::error::ViewError::LayoutMismatch { .. }),
        ) => {}
        Err(e) => {
            // Any other refusal is one the owned read shares.
            let Err(o) = owned else {
                panic!("view refused ({e}) what a read accepts");
            };
            assert_eq!(
                std::mem::discriminant(&e),
                std::mem::discriminant(&o),
                "{e} / {o}"
            );
        }
    }
    copy.copy_from_slice(bytes);
    if let Ok(mut view) = ArrayViewMut::<T, D>::view_npy_mut(copy) {
        // Writing a valid value through the view keeps the bytes valid.
        if let Some(x) = view.iter().next().copied() {
            view.fill(x);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let file = data;
    let shift = data.len() % 8;
    // u64 backing store: 8-byte aligned, then shifted.
    let words = (shift + file.len()).div_ceil(8);
    let mut store = vec![0u64; words];
    let mut scratch = vec![0u64; words];
    let buf: &mut [u8] = bytemuck_bytes(&mut store);
    buf[shift..shift + file.len()].copy_from_slice(file);
    let bytes = &buf[shift..shift + file.len()];
    let copy = &mut bytemuck_bytes(&mut scratch)[shift..shift + file.len()];

    check::<f64, Ix2>(bytes, copy);
    check::<f32, IxDyn>(bytes, copy);
    check::<u8, Ix1>(bytes, copy);
    check::<bool, IxDyn>(bytes, copy);
    check::<i16, Ix0>(bytes, copy);
    check::<u64, Ix3>(bytes, copy);
    check::<Complex<f64>, Ix1>(bytes, copy);
    check::<f16, Ix2>(bytes, copy);
});

fn bytemuck_bytes(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: u64 has no padding and u8 has alignment 1; the byte slice
    // covers exactly the words' memory and borrows it mutably.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8) }
}
