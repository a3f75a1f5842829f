//! `NpzReader` over arbitrary bytes: opening, listing, reading every member
//! as typed arrays, runtime-typed arrays, headers and raw bytes never panics
//! and never allocates what the archive merely claims.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarray::{Ix1, IxDyn};
use ndnpy::NpzReader;
use std::io::Cursor;

fuzz_target!(|data: &[u8]| {
    let Ok(mut npz) = NpzReader::new(Cursor::new(data)) else {
        return;
    };
    let names = npz.names();
    assert_eq!(names.len(), npz.len());
    let _ = npz.comment();
    for name in names.iter().take(16) {
        let header = npz.header(name);
        let any = npz.read_any(name);
        if let (Ok(any), Err(e)) = (&any, &header) {
            panic!(
                "member {name:?} read ({:?}) but its header did not: {e}",
                any.shape()
            );
        }
        if let (Ok(any), Ok(header)) = (&any, &header) {
            assert_eq!(any.shape(), &header.shape[..]);
        }
        let _ = npz.read::<f64, IxDyn>(name);
        let _ = npz.read::<u8, Ix1>(name);
        let _ = npz.read::<bool, IxDyn>(name);
        let _ = npz.raw(name);
    }
    for (_name, result) in npz.arrays().take(16) {
        let _ = result;
    }
    let _ = npz.read_any("no such member");
});
