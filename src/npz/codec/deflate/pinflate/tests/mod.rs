//! Differential tests of the parallel inflater against flate2 (zlib-rs):
//! streams from zlib (levels 0-9), libdeflate (levels 1-12) and our test
//! encoder (stored, fixed and dynamic blocks in any order), cut into tiny
//! chunks so that every stream spans many of them; corrupted streams,
//! wrong sizes, and random inputs.

mod encoder;
mod hostile;

use super::super::inflate_core::{Inflater, Stop, Tables};
use super::driver::{inflate, Plan};
use super::key::Key;
use encoder::{encode, Kind};
use std::io::Read;

/// `data` deflated raw by flate2 at `level`.
pub(super) fn deflate(data: &[u8], level: u32) -> Vec<u8> {
    let mut e = flate2::read::DeflateEncoder::new(data, flate2::Compression::new(level));
    let mut out = Vec::new();
    e.read_to_end(&mut out).unwrap();
    out
}

/// `data` deflated raw by libdeflate at `level`.
fn libdeflate(data: &[u8], level: i32) -> Vec<u8> {
    let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(level).unwrap());
    let mut out = vec![0; c.deflate_compress_bound(data.len())];
    let n = c.deflate_compress(data, &mut out).unwrap();
    out.truncate(n);
    out
}

/// What flate2 inflates `stream` to (everything up to its last block).
fn reference(stream: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::DeflateDecoder::new(stream)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// Inflates with `threads` threads and chunks of `chunk` bytes.
fn ours(stream: &[u8], size: usize, threads: usize, chunk: usize) -> std::io::Result<Vec<u8>> {
    ours_reading(stream, size, threads, chunk, 1 << 20)
}

/// [`ours`], reading `slack` bytes past each range (`input.rs`).
pub(super) fn ours_reading(
    stream: &[u8],
    size: usize,
    threads: usize,
    chunk: usize,
    slack: u64,
) -> std::io::Result<Vec<u8>> {
    let plan = Plan::new(stream.len(), size, threads)
        .with_chunk(chunk)
        .with_slack(slack);
    let (out, crc) = inflate(stream, size, plan)?;
    assert_eq!(crc, crc32fast::hash(&out), "CRC of the output");
    Ok(out)
}

/// Checks that `stream` inflates to `data` at several chunk sizes,
/// thread counts and windows read past a range (tiny ones: chunks and
/// the resolver run past their windows and read on), and that a size one
/// off either way is refused.
fn check(stream: &[u8], data: &[u8], what: &str) {
    for (chunk, threads, slack) in [
        (97, 3, 1 << 20),
        (1000, 2, 1 << 20),
        (4096, 1, 1 << 20),
        (40_000, 2, 1 << 20),
        (1 << 20, 2, 1 << 20),
        (97, 2, 5),
        (1000, 3, 300),
        (40_000, 2, 4000),
    ] {
        let got = ours_reading(stream, data.len(), threads, chunk, slack)
            .unwrap_or_else(|e| panic!("{what}, chunk {chunk}, slack {slack}: {e}"));
        assert!(
            got == data,
            "{what}, chunk {chunk}, slack {slack}: wrong bytes"
        );
    }
    assert!(
        ours(stream, data.len() + 1, 2, 1000).is_err(),
        "{what}: one byte more"
    );
    if !data.is_empty() {
        assert!(
            ours(stream, data.len() - 1, 2, 1000).is_err(),
            "{what}: one byte less"
        );
    }
}

/// A generator of test data (xorshift).
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Test inputs: random, runs, text, float arrays, long-distance repeats.
fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let random: Vec<u8> = (0..150_000).map(|_| rng.next() as u8).collect();
    let zeros = vec![0u8; 300_000];
    let words = [
        "the ", "deflate ", "stream ", "block ", "window ", "of ", "marker ", "\n",
    ];
    let text: Vec<u8> = (0..40_000)
        .flat_map(|_| words[(rng.next() % 8) as usize].bytes())
        .collect();
    let smooth: Vec<u8> = (0..30_000)
        .flat_map(|i| (i as f64 * 0.001).sin().to_le_bytes())
        .collect();
    let noisy: Vec<u8> = (0..20_000)
        .flat_map(|_| ((rng.next() >> 11) as f64 / (1u64 << 53) as f64).to_le_bytes())
        .collect();
    // A random 30 000-byte block repeated: every match reaches about
    // 30 000 bytes back, across any chunk boundary into the window.
    let period: Vec<u8> = (0..30_000).map(|_| rng.next() as u8).collect();
    let far: Vec<u8> = period.iter().cycle().take(200_000).copied().collect();
    vec![
        ("random", random),
        ("zeros", zeros),
        ("text", text),
        ("smooth f64", smooth),
        ("random f64", noisy),
        ("far repeats", far),
        ("empty", Vec::new()),
        ("one byte", vec![42]),
    ]
}

#[test]
fn zlib_streams_of_every_level() {
    for (what, data) in inputs() {
        for level in 0..=9 {
            check(
                &deflate(&data, level),
                &data,
                &format!("{what}, zlib {level}"),
            );
        }
    }
}

#[test]
fn libdeflate_streams_of_every_level() {
    for (what, data) in inputs() {
        for level in 1..=12 {
            let stream = libdeflate(&data, level);
            check(&stream, &data, &format!("{what}, libdeflate {level}"));
        }
    }
}

#[test]
fn stored_fixed_and_dynamic_blocks_mixed() {
    let mut rng = Rng(7);
    for (what, data) in inputs() {
        if data.len() < 1000 {
            continue;
        }
        for round in 0..4 {
            let mut blocks = Vec::new();
            let mut total = 0;
            while total < data.len() {
                let kind = match (rng.next() % 3, round) {
                    (_, 0) => Kind::Stored,
                    (_, 1) => Kind::Fixed,
                    (0, _) => Kind::Stored,
                    (1, _) => Kind::Fixed,
                    _ => Kind::Dynamic,
                };
                let size = 1 + (rng.next() % 40_000) as usize;
                blocks.push((kind, size));
                total += size;
            }
            let stream = encode(&data, &blocks);
            assert_eq!(reference(&stream).as_deref(), Some(&data[..]), "{what}");
            check(&stream, &data, &format!("{what}, mixed blocks {round}"));
        }
    }
}

/// Every boundary of a valid stream after its start, as keys, with
/// whether a chunk may start there.
pub(super) fn block_starts(stream: &[u8]) -> Vec<(Key, bool)> {
    let size = reference(stream).unwrap().len();
    let mut out = vec![0u8; size];
    let mut pos = 0;
    let mut inflater = Inflater::at_header(stream, 0, Tables::new());
    let mut keys = Vec::new();
    loop {
        match inflater.run(&mut out, &mut pos, usize::MAX).unwrap() {
            Stop::End => return keys,
            Stop::Full => {}
            Stop::Boundary => {
                keys.push(Key::at_boundary(&mut inflater));
                inflater.begin_block().unwrap();
            }
        }
    }
}

#[test]
fn chunks_start_exactly_at_boundaries_of_every_kind() {
    // A chunk boundary right at, and a bit around, each block start: the
    // chunk before must end exactly where the next begins.
    let mut rng = Rng(99);
    let data: Vec<u8> = (0..120_000)
        .map(|i| (i / 7 % 13) as u8 ^ (rng.next() % 3) as u8)
        .collect();
    let blocks: Vec<(Kind, usize)> = [Kind::Dynamic, Kind::Stored, Kind::Fixed]
        .iter()
        .cycle()
        .take(24)
        .map(|&k| (k, 5_000))
        .collect();
    let stream = encode(&data, &blocks);
    for (key, _) in block_starts(&stream) {
        let byte = (key.pos() / 8) as usize;
        for chunk in [byte.max(1), byte + 1, (byte.max(2)) - 1] {
            let got = ours(&stream, data.len(), 2, chunk).unwrap();
            assert!(got == data, "chunk {chunk} around {key:?}");
        }
    }
}

#[test]
fn the_default_plan_and_the_hidden_entry_agree() {
    let data: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i % 251) as u8 ^ (i >> 12) as u8)
        .collect();
    let stream = deflate(&data, 6);
    let (out, crc) = super::inflate_parallel(&stream, data.len(), 2).unwrap();
    assert!(out == data);
    assert_eq!(crc, crc32fast::hash(&data));
    let (out, _) = super::__inflate_parallel(&stream, data.len(), 2, 5000).unwrap();
    assert!(out == data);
}

#[test]
fn chunks_switch_to_bytes_when_the_window_is_known() {
    // A random walk's bytes (as NumPy stores float64): matches copy the
    // window's bytes on and on, so markers never die out by themselves;
    // the chunks must take the window from the resolver.
    let mut rng = Rng(3);
    let mut x = 0f64;
    let data: Vec<u8> = (0..200_000)
        .flat_map(|_| {
            x += (rng.next() % 2001) as f64 / 1000.0 - 1.0;
            ((x * 1000.0).round() / 1000.0).to_le_bytes()
        })
        .collect();
    let stream = deflate(&data, 6);
    let before = super::chunk::SWITCHES.load(std::sync::atomic::Ordering::Relaxed);
    for (chunk, threads) in [(20_000, 2), (50_000, 3), (7_000, 1)] {
        assert!(ours(&stream, data.len(), threads, chunk).unwrap() == data);
    }
    assert!(super::chunk::SWITCHES.load(std::sync::atomic::Ordering::Relaxed) > before);
}

/// `data` deflated by flate2 with a sync (or full) flush every `every`
/// bytes: empty stored blocks between the pieces, as pigz and zlib's
/// flushing writers leave them.
fn flushed(data: &[u8], every: usize, full: bool) -> Vec<u8> {
    let mut c = flate2::Compress::new(flate2::Compression::new(6), false);
    let mut out = Vec::with_capacity(data.len() + 1024);
    let flush = if full {
        flate2::FlushCompress::Full
    } else {
        flate2::FlushCompress::Sync
    };
    for piece in data.chunks(every) {
        out.reserve(piece.len() + 1024);
        c.compress_vec(piece, &mut out, flush).unwrap();
    }
    out.reserve(1024);
    c.compress_vec(&[], &mut out, flate2::FlushCompress::Finish)
        .unwrap();
    out
}

#[test]
fn flushed_streams_and_many_threads() {
    for (what, data) in inputs() {
        if data.len() < 1000 {
            continue;
        }
        for (every, full) in [(5000, false), (777, true), (40_000, false)] {
            let stream = flushed(&data, every, full);
            assert_eq!(reference(&stream).as_deref(), Some(&data[..]), "{what}");
            check(&stream, &data, &format!("{what}, flushed every {every}"));
            // More threads than cores, tiny chunks: the scheduling under
            // contention.
            assert!(ours(&stream, data.len(), 8, 300).unwrap() == data);
        }
    }
}

#[test]
fn chunks_over_their_cap_are_finished_by_the_resolver() {
    // 24 MiB that deflate to a few KiB: every chunk's output passes its
    // cap (1 MiB at least), within a block or at a boundary.
    let mut data = vec![0u8; 24 << 20];
    for i in (0..data.len()).step_by(1 << 16) {
        data[i] = (i >> 16) as u8;
    }
    for stream in [deflate(&data, 6), libdeflate(&data, 12)] {
        for chunk in [300, 2000] {
            assert!(ours(&stream, data.len(), 2, chunk).unwrap() == data);
        }
    }
}

#[test]
fn inflating_into_the_callers_buffer() {
    let data: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i % 251) as u8 ^ (i >> 12) as u8)
        .collect();
    let stream = deflate(&data, 6);
    let mut out = vec![0xAAu8; data.len()];
    let input = super::Input::Bytes(&stream);
    let crc = super::inflate_parallel_into(&input, &mut out, 2).unwrap();
    assert!(out == data);
    assert_eq!(crc, crc32fast::hash(&data));
    let mut short = vec![0u8; data.len() - 1];
    assert!(super::inflate_parallel_into(&input, &mut short, 2).is_err());
}

#[test]
fn a_stream_read_from_a_file_a_window_at_a_time() {
    use std::io::Write;
    let data: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i % 251) as u8 ^ (i >> 12) as u8)
        .collect();
    let stream = deflate(&data, 6);
    // The stream between other bytes, as a member inside an archive.
    // In a folder of its own, removed however the test ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("member.deflate");
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&[0x55; 100]).unwrap();
    file.write_all(&stream).unwrap();
    file.write_all(&[0xAA; 50]).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let input = |len: usize| super::Input::File {
        file: &file,
        start: 100,
        len: len as u64,
    };
    for (chunk, slack) in [(40_000, 1 << 20), (5000, 700), (1 << 20, 64)] {
        let plan = Plan::new(stream.len(), data.len(), 2)
            .with_chunk(chunk)
            .with_slack(slack);
        let mut out = vec![0u8; data.len()];
        let crc = super::driver::inflate_into(&input(stream.len()), &mut out, plan).unwrap();
        assert!(out == data, "chunk {chunk}, slack {slack}");
        assert_eq!(crc, crc32fast::hash(&data));
        // The member said longer than the stream: the bytes after it are
        // not deflate (ignored after the last block, as the sequential
        // inflaters ignore them); said shorter: the stream is cut.
        let mut out = vec![0u8; data.len()];
        let crc = super::driver::inflate_into(&input(stream.len() + 50), &mut out, plan).unwrap();
        assert_eq!(crc, crc32fast::hash(&data));
        let cut = super::driver::inflate_into(&input(stream.len() / 2), &mut out, plan);
        assert!(cut.is_err(), "chunk {chunk}, slack {slack}");
    }
    // A file that ends inside the member: an error, not bytes.
    let short = std::fs::File::options().write(true).open(&path).unwrap();
    short.set_len(100 + stream.len() as u64 - 1000).unwrap();
    for slack in [u64::MAX, 1 << 20, 700, 5] {
        let mut out = vec![0u8; data.len()];
        let plan = Plan::new(stream.len(), data.len(), 2)
            .with_chunk(40_000)
            .with_slack(slack);
        assert!(super::driver::inflate_into(&input(stream.len()), &mut out, plan).is_err());
    }
}

#[test]
fn real_block_starts_are_found() {
    // A stream with many dynamic blocks (zlib level 6 ends a block
    // every 16 K symbols): every dynamic block's start is among the
    // candidates of the whole range.
    let mut rng = Rng(5);
    let data: Vec<u8> = (0..400_000).map(|_| (rng.next() % 61) as u8).collect();
    let stream = deflate(&data, 6);
    let starts = block_starts(&stream);
    assert!(
        starts.len() > 5,
        "{} blocks in {} bytes",
        starts.len(),
        stream.len()
    );
    let mut finder = super::finder::Finder::new(
        &stream,
        1,
        stream.len() as u64 * 8,
        usize::MAX,
        Tables::new(),
    );
    let mut found = Vec::new();
    while let Some(c) = finder.next_candidate() {
        found.push(c);
    }
    let dynamic = starts
        .iter()
        .filter(|(k, may)| *may && matches!(k, Key::Header(b) if *b > 0));
    for (key, _) in dynamic {
        assert!(found.contains(key), "{key:?} not found");
    }
}
