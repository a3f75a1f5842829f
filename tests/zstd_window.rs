//! A streamed Zstandard member's window is not capped by the member's
//! size: a compressor that is not told the size (Python's `zipfile`
//! streams each member) declares its level's window whatever the data, so
//! a member of a few hundred bytes can declare 8 MiB, and `zipfile` and
//! `zstd` read it. The window's memory is what is written into it: the
//! bytes decoded, which stop at the member's declared size.
#![cfg(feature = "zstd")]

use ndnpy::{NpzReader, WriteNpy};
use std::io::Cursor;

/// `data` as one Zstandard frame compressed at `level` as a stream whose
/// size is not known in advance (no content size in the frame header).
fn streamed(data: &[u8], level: i32) -> Vec<u8> {
    let mut cctx = zstd_safe::CCtx::create();
    cctx.set_parameter(zstd_safe::CParameter::CompressionLevel(level))
        .unwrap();
    let mut out = vec![0u8; zstd_safe::compress_bound(data.len()) + 64];
    let mut output = zstd_safe::OutBuffer::around(&mut out[..]);
    let mut input = zstd_safe::InBuffer::around(data);
    // Given in pieces (`Continue`), then ended: the size is never pledged.
    cctx.compress_stream2(
        &mut output,
        &mut input,
        zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_continue,
    )
    .unwrap();
    let mut empty = zstd_safe::InBuffer::around(&[][..]);
    while cctx
        .compress_stream2(
            &mut output,
            &mut empty,
            zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_end,
        )
        .unwrap()
        > 0
    {}
    let n = output.pos();
    out.truncate(n);
    out
}

/// A zip of one member `name` of method 93 holding `frame` (`raw` before
/// compression), as Python's `zipfile` writes it.
fn zip_of(name: &str, frame: &[u8], raw: &[u8]) -> Vec<u8> {
    let crc = crc32fast::hash(raw);
    let mut fields = Vec::new();
    fields.extend_from_slice(&63u16.to_le_bytes()); // version needed
    fields.extend_from_slice(&0u16.to_le_bytes()); // flags
    fields.extend_from_slice(&93u16.to_le_bytes()); // method
    fields.extend_from_slice(&[0, 0, 0x21, 0]); // time, date
    fields.extend_from_slice(&crc.to_le_bytes());
    fields.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    fields.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    fields.extend_from_slice(&(name.len() as u16).to_le_bytes());
    fields.extend_from_slice(&0u16.to_le_bytes()); // extra
    let mut zip = b"PK\x03\x04".to_vec();
    zip.extend_from_slice(&fields);
    zip.extend_from_slice(name.as_bytes());
    zip.extend_from_slice(frame);
    let cd_start = zip.len();
    zip.extend_from_slice(b"PK\x01\x02");
    zip.extend_from_slice(&63u16.to_le_bytes()); // made by
    zip.extend_from_slice(&fields);
    zip.extend_from_slice(&[0; 10]); // comment, disk, attributes
    zip.extend_from_slice(&0u32.to_le_bytes()); // local header offset
    zip.extend_from_slice(name.as_bytes());
    let cd_len = zip.len() - cd_start;
    zip.extend_from_slice(b"PK\x05\x06\0\0\0\0\x01\0\x01\0");
    zip.extend_from_slice(&(cd_len as u32).to_le_bytes());
    zip.extend_from_slice(&(cd_start as u32).to_le_bytes());
    zip.extend_from_slice(&[0, 0]);
    zip
}

#[test]
fn a_small_member_that_declares_a_large_window_reads() {
    let a = ndarray::array![1u8, 2, 3, 4];
    let npy = a.to_npy_bytes().unwrap();
    // Level 19 without a known size: an 8 MiB window for 132 bytes.
    let frame = streamed(&npy, 19);
    let descriptor = frame[5];
    let window_log = 10 + (descriptor >> 3) as u32;
    assert!(1u64 << window_log >= 8 << 20, "window 2^{window_log}");
    assert!((1u64 << window_log) > 1000 * npy.len() as u64);
    let mut npz = NpzReader::new(Cursor::new(zip_of("a.npy", &frame, &npy))).unwrap();
    assert_eq!(npz.read::<u8, ndarray::Ix1>("a").unwrap(), a);
    assert_eq!(npz.raw("a").unwrap(), npy);
}
