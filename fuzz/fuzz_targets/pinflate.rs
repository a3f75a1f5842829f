//! The parallel inflater of one deflate stream (`src/npz/codec/deflate/pinflate/`)
//! against flate2, on chunks of a few dozen to a few thousand bytes so
//! that every input spans many chunks. The first byte chooses:
//! - even: the rest is a raw deflate stream, inflated at a declared size
//!   (flate2's output length, or a size from the second byte); ndnpy gives
//!   flate2's very bytes or an error, and never refuses what flate2 reads
//!   at that size;
//! - odd: the rest is data, deflated by flate2 at a level from the first
//!   byte; it inflates back exactly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Read;

/// Runs the inflater once on two threads before fuzzing: the standard
/// library's one-time thread-local registrations in the main thread (32
/// bytes that live until the process exits) would otherwise count as a
/// leak of the first input that spawns threads.
fn warm_up() {
    let data = vec![7u8; 100_000];
    let mut stream = Vec::new();
    flate2::read::DeflateEncoder::new(&data[..], flate2::Compression::new(6))
        .read_to_end(&mut stream)
        .expect("deflates");
    let (out, _) = ndnpy::npz::__inflate_parallel(&stream, data.len(), 2, 64).expect("inflates");
    assert!(out == data);
}

fuzz_target!(init: warm_up(), |input: &[u8]| {
    let [mode, a, b, rest @ ..] = input else {
        return;
    };
    let chunk = 16 + (*a as usize * 37) % 4000;
    let threads = 1 + *b as usize % 3;
    if mode % 2 == 1 {
        let level = flate2::Compression::new(*mode as u32 / 2 % 10);
        let mut stream = Vec::new();
        flate2::read::DeflateEncoder::new(rest, level)
            .read_to_end(&mut stream)
            .expect("deflates");
        let (out, crc) = ndnpy::npz::__inflate_parallel(&stream, rest.len(), threads, chunk)
            .expect("a stream flate2 made inflates");
        assert!(out == rest, "wrong bytes");
        assert_eq!(crc, crc32fast::hash(rest));
        return;
    }
    let mut want = Vec::new();
    let reference = flate2::read::DeflateDecoder::new(rest)
        .read_to_end(&mut want)
        .is_ok();
    let size = if mode % 4 == 0 && reference {
        want.len()
    } else {
        *a as usize * 64 + *b as usize
    };
    let want = (reference && want.len() == size).then_some(want);
    match (ndnpy::npz::__inflate_parallel(rest, size, threads, chunk), want) {
        (Ok((out, crc)), Some(want)) => {
            assert!(out == want, "bytes other than flate2's");
            assert_eq!(crc, crc32fast::hash(&out));
        }
        (Ok(_), None) => panic!("accepted a stream flate2 refuses at this size"),
        (Err(e), Some(_)) => panic!("refused a stream flate2 reads: {e}"),
        (Err(_), None) => {}
    }
});
