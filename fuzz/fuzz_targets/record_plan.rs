//! Record plans: any file descr (mutated from the record fixtures) against
//! fixed Rust structs. Reading by copy, viewing and the runtime-typed path
//! must give an error or values, never a panic; when a view succeeds, the
//! copy must hold the same values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarray::{ArrayD, ArrayViewD};
use ndnpy::{AnyArray, ReadNpy, ViewNpy, WriteNpy};

ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Simple { x: f64, y: i32, flag: bool }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    #[repr(C, packed)]
    struct Packed { x: f64, y: i32, flag: bool }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Pos { x: f32, y: f32 }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Deep { id: u16, pos: Pos, m: [[f64; 3]; 2], s: ndnpy::types::FixedUnicode<2>, t: ndnpy::types::Datetime64<ndnpy::types::unit::ns> }
}

fn check<T: ndnpy::types::LayoutElement + PartialEq + std::fmt::Debug>(data: &[u8]) {
    let copy = ArrayD::<T>::from_npy_bytes(data);
    if let Ok(view) = ArrayViewD::<T>::view_npy(data) {
        let copy = copy.expect("a file that views also reads");
        // Compare through bytes: NaN fields are not equal to themselves.
        assert_eq!(
            view.to_owned().to_npy_bytes().ok(),
            copy.to_npy_bytes().ok()
        );
    }
}

fuzz_target!(|data: &[u8]| {
    check::<Simple>(data);
    check::<Packed>(data);
    check::<Deep>(data);
    if let Ok(AnyArray::Record(records)) = AnyArray::from_npy_bytes(data) {
        for name in records.names() {
            let _ = records.field(name);
        }
        let _ = records.to_array::<Simple, ndarray::IxDyn>();
        let _ = records.to_npy_bytes();
    }
});
