//! Streams that try to fool the parallel inflater: corrupted, cut short,
//! too long, full of valid-looking block headers that are not block
//! starts, reaching before their own start; and random ones. The answer
//! is always the reference's bytes or an error, never other bytes, never
//! a panic.

use super::super::driver::{inflate_counting, Plan};
use super::encoder::{encode, write_fixed, write_stored, BitWriter, Kind, Token};
use super::{deflate, ours, ours_reading, reference, Rng};
use proptest::prelude::*;
use std::io::Read;

/// Inflates `stream` at `size` on a few plans: each gives flate2's bytes
/// (when flate2 gives exactly `size`) or an error.
fn agrees(stream: &[u8], size: usize, what: &str) {
    let want = reference(stream).filter(|w| w.len() == size);
    // Tiny windows too: an error near a window's end (zeros read past
    // it) must not be taken for the stream's.
    for (chunk, threads, slack) in [
        (61, 2, 1 << 20),
        (700, 3, 1 << 20),
        (5000, 1, 1 << 20),
        (61, 2, 7),
        (700, 2, 90),
    ] {
        match (ours_reading(stream, size, threads, chunk, slack), &want) {
            (Ok(got), Some(want)) => assert!(got == *want, "{what}, chunk {chunk}: wrong bytes"),
            (Ok(_), None) => panic!("{what}, chunk {chunk}: accepted what flate2 refuses"),
            (Err(e), Some(_)) => panic!("{what}, chunk {chunk}: refused what flate2 reads: {e}"),
            (Err(_), None) => {}
        }
    }
}

#[test]
fn flipped_bits_give_the_reference_or_an_error() {
    let mut rng = Rng(12345);
    let data: Vec<u8> = (0..60_000)
        .map(|i| (i as u64 * 31 % 97) as u8 ^ (rng.next() % 4) as u8)
        .collect();
    let streams = [
        deflate(&data, 6),
        deflate(&data, 1),
        encode(
            &data,
            &[
                (Kind::Fixed, 9000),
                (Kind::Stored, 7000),
                (Kind::Dynamic, 1),
            ],
        ),
    ];
    for (n, stream) in streams.iter().enumerate() {
        for _ in 0..150 {
            let mut bad = stream.clone();
            for _ in 0..1 + rng.next() % 3 {
                let bit = rng.next() as usize % (bad.len() * 8);
                bad[bit / 8] ^= 1 << (bit % 8);
            }
            agrees(&bad, data.len(), &format!("stream {n}, flipped"));
        }
    }
}

#[test]
fn streams_cut_short_are_errors() {
    let data: Vec<u8> = (0..80_000u64).map(|i| ((i * i) >> 9) as u8).collect();
    for stream in [deflate(&data, 6), deflate(&data, 0)] {
        for cut in [
            1,
            2,
            7,
            100,
            stream.len() / 3,
            stream.len() / 2,
            stream.len() - 1,
        ] {
            let short = &stream[..stream.len() - cut];
            assert!(ours(short, data.len(), 2, 500).is_err(), "cut by {cut}");
            agrees(short, data.len(), &format!("cut by {cut}"));
        }
        // Bytes after the last block are ignored, as zlib and libdeflate
        // ignore them.
        let mut long = stream.clone();
        long.extend_from_slice(&[0xFF; 3000]);
        assert!(ours(&long, data.len(), 2, 500).unwrap() == data);
    }
}

#[test]
fn declared_sizes_are_exact_and_bounded() {
    let data = vec![7u8; 1 << 20];
    let stream = deflate(&data, 9);
    assert!(ours(&stream, data.len(), 2, 100).unwrap() == data);
    for size in [0, 1, data.len() / 2, data.len() - 1, data.len() + 1] {
        assert!(ours(&stream, size, 2, 100).is_err(), "size {size}");
    }
    // More than deflate's largest expansion of the input: refused before
    // allocating it.
    assert!(ours(&stream, stream.len() * 1032 + 2048, 2, 100).is_err());
}

#[test]
fn a_deflate_stream_hidden_in_stored_blocks_is_not_decoded() {
    // The stored bytes are themselves a deflate stream of many dynamic
    // blocks: the block finder finds its headers (real ones, of the
    // inner stream), and chunks decoded from them must all be refused.
    let mut rng = Rng(31);
    let inner: Vec<u8> = (0..400_000).map(|_| (rng.next() % 29) as u8).collect();
    let hidden = deflate(&inner, 6);
    assert!(super::block_starts(&hidden).len() > 10);
    let mut w = BitWriter::default();
    write_stored(&mut w, &hidden, true);
    let outer = w.finish();
    for chunk in [300, 5000, 70_000] {
        let got = ours(&outer, hidden.len(), 2, chunk).unwrap();
        assert!(got == hidden, "chunk {chunk}");
    }
    // Also with the hidden stream's bytes behind a dynamic block.
    let mut data = inner[..50_000].to_vec();
    data.extend_from_slice(&hidden);
    let outer = encode(&data, &[(Kind::Dynamic, 50_000), (Kind::Stored, 1)]);
    let got = ours(&outer, data.len(), 3, 4000).unwrap();
    assert!(got == data);
}

#[test]
fn a_distance_before_the_stream_start_is_an_error() {
    // 20 000 literals, a stored block (where the finder can start a
    // chunk), then a match 24 000 bytes back: past the stream's start.
    // The chunk holding it decodes (the window is unknown to it); the
    // resolver must refuse the marker.
    let mut w = BitWriter::default();
    let lits: Vec<Token> = (0..20_000u32)
        .map(|i| Token::Lit((i % 200) as u8))
        .collect();
    write_fixed(&mut w, &lits, false);
    write_stored(&mut w, &[1; 1000], false);
    write_fixed(&mut w, &[Token::Match(3, 24_000), Token::Lit(9)], true);
    let stream = w.finish();
    assert!(reference(&stream).is_none());
    for chunk in [50, 500, 2500] {
        let err = ours(&stream, 21_004, 2, chunk).unwrap_err();
        assert!(err.to_string().contains("too far back"), "{err}");
    }
}

/// Random streams: segments of random bytes, runs, and copies of earlier
/// bytes at random distances.
fn data_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((0u8..3, 1usize..5000, any::<u64>()), 1..40).prop_map(|parts| {
        let mut data = Vec::new();
        for (kind, len, seed) in parts {
            let mut rng = Rng(seed | 1);
            match kind {
                0 => data.extend((0..len).map(|_| rng.next() as u8)),
                1 => data.extend(std::iter::repeat_n(seed as u8, len)),
                _ if !data.is_empty() => {
                    let back = 1 + (seed as usize % data.len().min(40_000));
                    for _ in 0..len {
                        data.push(data[data.len() - back]);
                    }
                }
                _ => {}
            }
        }
        data
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_streams_inflate_exactly(
        data in data_strategy(),
        level in 0u32..10,
        chunk in 40usize..30_000,
        threads in 1usize..4,
    ) {
        let stream = deflate(&data, level);
        let got = ours(&stream, data.len(), threads, chunk).unwrap();
        prop_assert!(got == data);
    }

    #[test]
    fn random_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..20_000),
        size in 0usize..100_000,
    ) {
        // Mostly invalid: an error, or flate2's very bytes.
        agrees(&bytes, size, "random bytes");
    }
}

/// The work the chunks spend on `stream` (inflating to `data`) with
/// chunks of `chunk` bytes, after checking the bytes.
fn work_for(stream: &[u8], data: &[u8], threads: usize, chunk: usize) -> usize {
    let plan = Plan::new(stream.len(), data.len(), threads).with_chunk(chunk);
    let mut out = vec![0u8; data.len()];
    let (crc, work) = inflate_counting(&super::super::Input::Bytes(stream), &mut out, plan);
    assert_eq!(crc.expect("inflates"), crc32fast::hash(data));
    assert!(out == data, "wrong bytes");
    work
}

#[test]
fn false_block_starts_cost_at_most_about_the_output() {
    // Every fifth byte starts what looks like a stored block (`LEN = 0`,
    // the byte before it with three zero bits) followed by an invalid
    // header: a stream of stored blocks of these bytes (zlib level 0) is
    // a candidate every 5 bytes. Each rejected candidate used to cost a
    // fill of 32 768 markers: 66x the sequential time on 64 MiB. Now the
    // chunks' work, decoded symbols and candidates tried, stays within
    // about the output's size (the sequential path's work), whatever the
    // threads and chunks.
    let data: Vec<u8> = [7u8, 0, 0, 0xFF, 0xFF]
        .iter()
        .copied()
        .cycle()
        .take(6 << 20)
        .collect();
    let stream = deflate(&data, 0);
    for (threads, chunk) in [(2, 256 << 10), (4, 1 << 20), (3, 97_000)] {
        let work = work_for(&stream, &data, threads, chunk);
        assert!(
            work <= 2 * data.len(),
            "{threads} threads, chunks of {chunk}: work {work} for {} bytes",
            data.len()
        );
    }
}

#[test]
fn ordinary_streams_waste_little() {
    // The bound does not make ordinary streams sequential: most of the
    // work is chunks' output that the resolver takes (the rest, the
    // search for each chunk's first block, is a few percent with the
    // default chunks of 4 MiB; a quarter here, with chunks of 256 KiB).
    let mut rng = Rng(99);
    let data: Vec<u8> = (0..6 << 20)
        .map(|i| (i / 7) as u8 ^ (rng.next() % 8) as u8)
        .collect();
    let stream = deflate(&data, 6);
    let work = work_for(&stream, &data, 2, 256 << 10);
    assert!(work <= data.len() + data.len() / 2, "work {work}");
    assert!(work >= data.len() / 2, "chunks did little: work {work}");
}

/// A gzipped stream of `fixtures/pinflate/`.
fn crafted(name: &str) -> Vec<u8> {
    let path = format!("{}/fixtures/pinflate/{name}", env!("CARGO_MANIFEST_DIR"));
    let gz = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut stream = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut stream)
        .expect("gunzips");
    stream
}

#[test]
fn streams_crafted_against_the_block_finder_cost_about_a_sequential_inflate() {
    // scripts/gen_false_starts.py: compressed bytes that are a false
    // stored-block start every 5 bytes, with the real boundaries 32 KiB
    // before each chunk's end (chunks of 512 KiB here), or none at all.
    // 64 MiB of the first took 14 s (21 s of CPU) on 2 threads where
    // flate2 takes 0.27 s; now 0.33 s (BENCHMARKS.md).
    for name in [
        "false_starts.deflate.gz",
        "false_starts_one_block.deflate.gz",
    ] {
        let stream = crafted(name);
        let data = reference(&stream).expect("flate2 inflates it");
        for (threads, chunk) in [(2, 512 << 10), (3, 300_000), (2, 0)] {
            let chunk = if chunk == 0 { stream.len() / 3 } else { chunk };
            let work = work_for(&stream, &data, threads, chunk);
            assert!(
                work <= 2 * data.len(),
                "{name}, {threads} threads, chunks of {chunk}: work {work} for {}",
                data.len()
            );
        }
    }
}
