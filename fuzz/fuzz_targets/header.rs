//! `Header::read_from` over arbitrary bytes: never panics, and any header it
//! accepts can be written back and re-read to the same dtype, shape and order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndnpy::{dtype::Header, ReadOptions};

fuzz_target!(|data: &[u8]| {
    // A tight limit takes the refuse-before-allocating path on most inputs.
    let tight = ReadOptions::default().max_header_len(data.len() / 2);
    let _ = Header::read_from_with(data, &tight);

    let Ok(header) = Header::read_from(data) else {
        return;
    };
    // The parser only accepts shapes whose sizes fit.
    let n = header
        .num_elements()
        .expect("accepted header has an element count");
    let len = header.data_len().expect("accepted header has a byte count");
    assert!(len >= n || header.dtype.itemsize() == Some(0));
    let _ = header.dtype.to_string();

    if let Ok(bytes) = header.to_bytes() {
        assert_eq!(bytes.len() % 64, 0, "written header is 64-byte aligned");
        let any_len = ReadOptions::default().max_header_len(usize::MAX);
        let again = Header::read_from_with(&bytes[..], &any_len).expect("written header re-reads");
        assert_eq!(again.dtype, header.dtype);
        assert_eq!(again.shape, header.shape);
        assert_eq!(again.fortran_order, header.fortran_order);
    }
});
