//! bzip2, LZMA and Zstandard members (issue 33), with the features
//! `bzip2`, `lzma` and `zstd`:
//!
//! - archives Python's `zipfile` wrote with each method (and `backports.zstd`
//!   for Zstandard), members of every kind, compressed and mixed
//!   (`fixtures/zip_methods/valid`, from `scripts/interop_zip_methods.py`),
//!   read equal to the stored archive NumPy wrote of the same arrays, by
//!   every way in;
//! - archives ndnpy writes with `Codec::Zstd` read back equal, the same
//!   bytes for any number of threads, segments decoded on every core;
//! - hostile members (`fixtures/zip_methods/invalid`: truncated streams,
//!   wrong sizes, bombs) give their errors, never a panic or an allocation
//!   of the size they claim.

use ndarray::{Array1, Array2, Ix1, Ix2, IxDyn};
use ndnpy::{
    npz::Codec, npz::Compression, pickle::PyValue, AnyArray, Error, NpzMmap, NpzReader, NpzWriter,
    Order,
};
use serde_json::Value;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

/// Records the largest single allocation request per thread.
struct Counting;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every method forwards to `System` unchanged; the counter is a
// const-initialised thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LARGEST.try_with(|l| l.set(l.get().max(layout.size())));
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = LARGEST.try_with(|l| l.set(l.get().max(new_size)));
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|l| l.set(0));
    let r = f();
    (r, LARGEST.with(|l| l.get()))
}

fn fixtures(kind: &str) -> Vec<(PathBuf, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/zip_methods")
        .join(kind);
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            out.push((path.with_extension("npz"), json));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!out.is_empty(), "no fixtures in {}", dir.display());
    out
}

/// Every member of `npz`, read whole by `read_any` and as raw bytes.
fn members(npz: &mut NpzReader<impl Read + std::io::Seek>) -> Vec<(String, AnyArray, Vec<u8>)> {
    npz.names()
        .into_iter()
        .map(|name| {
            let any = npz
                .read_any(&name)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let raw = npz.raw(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, any, raw)
        })
        .collect()
}

fn compression_of(method: &str) -> Compression {
    match method {
        "stored" => Compression::Stored,
        "deflate" => Compression::Deflated,
        "bzip2" => Compression::Bzip2,
        "lzma" => Compression::Lzma,
        "zstd" => Compression::Zstd,
        other => panic!("unknown method {other}"),
    }
}

#[test]
fn python_archives_of_every_method_read_as_numpy_reads_them() {
    for (path, json) in fixtures("valid") {
        let context = path.file_name().unwrap().to_string_lossy().into_owned();
        let expected = path.with_file_name(json["expected"].as_str().unwrap());
        let want = members(&mut NpzReader::open(&expected).unwrap());
        let mut npz = NpzReader::open(&path).unwrap();
        let got = members(&mut npz);
        for (name, any, raw) in &got {
            let (_, want_any, want_raw) = want.iter().find(|(n, ..)| n == name).unwrap();
            assert_eq!(any, want_any, "{context}/{name}");
            assert!(raw == want_raw, "{context}/{name}: the member's bytes");
        }
        // What the archive says of each member, and the other ways in.
        let methods = json["methods"].as_object().unwrap();
        // SAFETY: nothing writes or truncates the fixture while it is mapped.
        let map = unsafe { NpzMmap::open(&path) }.unwrap();
        for (name, method) in methods {
            let method = compression_of(method.as_str().unwrap());
            let context = format!("{context}/{name}");
            assert_eq!(
                npz.member_info(name).unwrap().compression,
                method,
                "{context}"
            );
            assert_eq!(map.is_stored(name).unwrap(), method == Compression::Stored);
            let (_, any, raw) = want.iter().find(|(n, ..)| n == name).unwrap();
            let header = npz.header(name).unwrap();
            assert_eq!(header.shape, any.shape(), "{context}: header");
            let mut streamed = Vec::new();
            npz.member_reader(name)
                .unwrap()
                .read_to_end(&mut streamed)
                .unwrap();
            assert!(&streamed == raw, "{context}: member_reader");
            if let AnyArray::F64(a) = any {
                let view = map.view_or_copy::<f64, IxDyn>(name).unwrap();
                assert_eq!(view, a.view(), "{context}: view_or_copy");
                // Rows of a member `zipfile` wrote (no table: its codec
                // reads from the start, or seeks a stored member).
                if !header.fortran_order && a.ndim() >= 1 && a.shape()[0] > 1 {
                    let n = a.shape()[0];
                    let rows = npz.read_range::<f64, IxDyn>(name, 1..n).unwrap();
                    let want = a.slice_axis(ndarray::Axis(0), (1..n).into());
                    assert_eq!(rows, want, "{context}: read_range");
                }
            }
        }
    }
}

#[test]
fn hostile_members_give_their_errors_in_bounded_memory() {
    for (path, json) in fixtures("invalid") {
        let context = path.file_name().unwrap().to_string_lossy().into_owned();
        let accepted: Vec<&str> = match &json["error"] {
            Value::String(s) => vec![s.as_str()],
            Value::Array(list) => list.iter().map(|v| v.as_str().unwrap()).collect(),
            other => panic!("{context}: error {other}"),
        };
        let member = json["member"].as_str().unwrap();
        let mut npz = NpzReader::open(&path).unwrap();
        let (err, largest) = largest_allocation(|| {
            // Every way in fails without panicking.
            let _ = npz.header(member);
            let _ = npz.raw(member);
            if let Ok(mut m) = npz.member_reader(member) {
                let _ = m.read_to_end(&mut Vec::new());
            }
            npz.read_any(member)
                .map(|a| panic!("{context}: read {a:?}"))
                .unwrap_err()
        });
        eprintln!("{context}: {err} (largest allocation {largest})");
        assert!(
            accepted.contains(&variant(&err)),
            "{context}: expected {accepted:?}, got {err:?}"
        );
        // The message names the member, unless it is the array's own
        // (a `.npy` header or data error, as for `.npy` files).
        if !matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData { .. })
                | Error::Header(ndnpy::error::HeaderError::MalformedHeader { .. })
        ) {
            assert!(err.to_string().contains(member), "{context}: {err}");
        }
        // The claims in these archives reach gigabytes; what is allocated
        // stays in proportion to the archive's own bytes.
        assert!(largest < 64 << 20, "{context}: allocated {largest} bytes");
        // SAFETY: nothing writes or truncates the fixture while it is mapped.
        let map = unsafe { NpzMmap::open(&path) }.unwrap();
        assert!(map.view_or_copy::<f64, IxDyn>(member).is_err(), "{context}");
    }
}

fn variant(err: &Error) -> &'static str {
    match err {
        Error::Archive(ndnpy::error::ArchiveError::CorruptMember { .. }) => "CorruptMember",
        Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. }) => "BadCrc",
        Error::Data(ndnpy::error::DataError::TruncatedData { .. }) => "TruncatedData",
        Error::Archive(ndnpy::error::ArchiveError::UnsupportedMember { .. }) => "UnsupportedMember",
        Error::Archive(ndnpy::error::ArchiveError::InvalidArchive { .. }) => "InvalidArchive",
        Error::Header(ndnpy::error::HeaderError::MalformedHeader { .. }) => "MalformedHeader",
        Error::Archive(ndnpy::error::ArchiveError::NotNpy { .. }) => "NotNpy",
        _ => "other",
    }
}

/// Arrays of every kind: numbers (large enough for many segments, and
/// small), strings, records, objects.
fn sample(
    npz: &mut NpzWriter<impl std::io::Write + std::io::Seek>,
) -> Vec<(&'static str, AnyArray)> {
    let big = Array2::from_shape_fn((700, 1000), |(i, j)| ((i * 7 + j) % 1013) as f64 * 0.5);
    let noise = Array1::from_shape_fn(600_000, |i| {
        (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40
    });
    let words = ndarray::array!["alpha".to_string(), "β".into(), "".into()];
    let objects = ndarray::array![PyValue::Str("a".into()), PyValue::None, PyValue::Int(3)];
    npz.add("big", &big).unwrap();
    npz.add("noise", &noise).unwrap();
    npz.add("fortran", &big.t()).unwrap();
    npz.add("small", &ndarray::array![1u8, 2, 3]).unwrap();
    npz.add("words", &words).unwrap();
    npz.add("objects", &objects).unwrap();
    vec![
        ("big", AnyArray::F64(big.clone().into_dyn())),
        ("noise", AnyArray::U64(noise.into_dyn())),
        ("fortran", AnyArray::F64(big.t().to_owned().into_dyn())),
        ("small", AnyArray::U8(ndarray::array![1u8, 2, 3].into_dyn())),
        ("words", AnyArray::Str(words.into_dyn())),
        ("objects", AnyArray::Object(objects.into_dyn())),
    ]
}

fn zstd_archive(threads: usize, level: i32) -> (Vec<u8>, Vec<(&'static str, AnyArray)>) {
    let mut npz = NpzWriter::new(Cursor::new(Vec::new()))
        .codec(Codec::Zstd { level })
        .threads(threads);
    let arrays = sample(&mut npz);
    (npz.finish_into_inner().unwrap().into_inner(), arrays)
}

#[test]
fn zstd_archives_read_back_by_every_way_in() {
    let (bytes, arrays) = zstd_archive(4, 3);
    let mut npz = NpzReader::new(Cursor::new(bytes.clone())).unwrap();
    for (name, want) in &arrays {
        assert_eq!(&npz.read_any(name).unwrap(), want, "{name}");
        let info = npz.member_info(name).unwrap();
        assert_eq!(info.compression, Compression::Zstd, "{name}");
        let mut streamed = Vec::new();
        npz.member_reader(name)
            .unwrap()
            .read_to_end(&mut streamed)
            .unwrap();
        assert_eq!(streamed, npz.raw(name).unwrap(), "{name}");
    }
    let big: Array2<f64> = npz.read("big").unwrap();
    assert_eq!(AnyArray::F64(big.into_dyn()), arrays[0].1);
    // Into the caller's array, through the segments decoded on every core.
    let mut into = Array2::<f64>::zeros((700, 1000));
    npz.read_into("big", &mut into.view_mut()).unwrap();
    assert_eq!(AnyArray::F64(into.into_dyn()), arrays[0].1);
    // A map copies them (compressed members cannot be viewed).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.npz");
    std::fs::write(&path, &bytes).unwrap();
    // SAFETY: nothing writes or truncates the file while it is mapped.
    let map = unsafe { NpzMmap::open(&path) }.unwrap();
    assert!(!map.is_stored("big").unwrap());
    let copy = map.view_or_copy::<f64, Ix2>("big").unwrap();
    assert!(!copy.is_view());
    assert_eq!(AnyArray::F64(copy.to_owned().into_dyn()), arrays[0].1);
}

#[test]
fn zstd_archives_are_the_same_bytes_for_any_number_of_threads_and_smaller() {
    let (one, _) = zstd_archive(1, 3);
    let (four, _) = zstd_archive(4, 3);
    assert!(one == four, "the bytes depend on the threads");
    let mut deflated = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    sample(&mut deflated);
    let deflated = deflated.finish_into_inner().unwrap().into_inner();
    assert!(
        four.len() < deflated.len(),
        "{} vs deflate's {}",
        four.len(),
        deflated.len()
    );
    // Higher levels compress smoother data smaller (not every kind: zstd's
    // level 19 makes the noise member larger than level 3 does).
    let big = |level| {
        let (bytes, _) = zstd_archive(2, level);
        let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
        npz.member_info("big").unwrap().compressed_size
    };
    assert!(big(19) < big(3) && big(3) < big(1));
}

#[test]
fn a_damaged_segment_is_an_error_not_wrong_values() {
    let (mut bytes, _) = zstd_archive(2, 3);
    // A byte in the middle of `big`'s compressed bytes.
    let info = NpzReader::new(Cursor::new(bytes.clone()))
        .unwrap()
        .member_info("big")
        .unwrap();
    let at = (info.data_start + info.compressed_size / 2) as usize;
    bytes[at] ^= 0x5A;
    let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
    let err = npz.read::<f64, Ix2>("big").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Archive(ndnpy::error::ArchiveError::CorruptMember { .. })
                | Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("big"), "{err}");
    // The other members still read.
    assert_eq!(
        npz.read::<u8, Ix1>("small").unwrap(),
        ndarray::array![1, 2, 3]
    );
}

#[test]
fn streamed_zstd_members_and_mixed_archives() {
    let mut npz = NpzWriter::new(Cursor::new(Vec::new())).codec(Codec::zstd());
    let mut m = npz.add_streaming::<i32>("rows", &[300], Order::C).unwrap();
    for block in 0..40 {
        let rows = Array2::from_shape_fn((100, 300), |(i, j)| (block * 100 + i) as i32 - j as i32);
        m.write(&rows).unwrap();
    }
    m.finish().unwrap();
    let mut empty = npz.add_streaming::<f32>("empty", &[4], Order::C).unwrap();
    empty.write(&Array2::<f32>::zeros((0, 4))).unwrap();
    empty.finish().unwrap();
    // Stored and deflated members beside Zstandard ones.
    let mut npz = npz.codec(ndnpy::npz::Codec::Stored);
    npz.add("stored", &ndarray::array![1.5f64, 2.5]).unwrap();
    let mut npz = npz.codec(Codec::deflate());
    npz.add("deflated", &Array1::<u16>::from_elem(100_000, 7))
        .unwrap();
    let bytes = npz.finish_into_inner().unwrap().into_inner();
    let mut back = NpzReader::new(Cursor::new(bytes)).unwrap();
    let rows: Array2<i32> = back.read("rows").unwrap();
    assert_eq!(rows.dim(), (4000, 300));
    assert_eq!(rows[[3999, 299]], 3999 - 299);
    assert_eq!(back.read::<f32, Ix2>("empty").unwrap().dim(), (0, 4));
    let methods: Vec<Compression> = ["rows", "empty", "stored", "deflated"]
        .iter()
        .map(|n| back.member_info(n).unwrap().compression)
        .collect();
    assert_eq!(
        methods,
        [
            Compression::Zstd,
            Compression::Zstd,
            Compression::Stored,
            Compression::Deflated
        ]
    );
    assert_eq!(back.read::<u16, Ix1>("deflated").unwrap().len(), 100_000);
}

#[test]
fn a_lying_segment_table_is_an_error_not_a_panic() {
    let (bytes, _) = zstd_archive(2, 3);
    // The `nd` field of `big`: "nd", its length, the segment size, then a
    // compressed length per segment.
    let block = (2u32 << 20).to_le_bytes();
    let at = bytes
        .windows(8)
        .position(|w| &w[..2] == b"nd" && w[4..8] == block)
        .expect("big's segment table");
    let len = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]) as usize;
    let first = at + 8;
    assert!(len >= 12, "at least two segments");
    for (name, lie) in [
        // Two lengths moved by a byte each, their sum kept: segments that
        // start inside blocks.
        ("shifted", {
            let mut b = bytes.clone();
            let a = u32::from_le_bytes(b[first..first + 4].try_into().unwrap());
            let c = u32::from_le_bytes(b[first + 4..first + 8].try_into().unwrap());
            b[first..first + 4].copy_from_slice(&(a + 1).to_le_bytes());
            b[first + 4..first + 8].copy_from_slice(&(c - 1).to_le_bytes());
            b
        }),
        // Lengths swapped.
        ("swapped", {
            let mut b = bytes.clone();
            let (x, y) = (
                b[first..first + 4].to_vec(),
                b[first + 4..first + 8].to_vec(),
            );
            b[first..first + 4].copy_from_slice(&y);
            b[first + 4..first + 8].copy_from_slice(&x);
            b
        }),
    ] {
        let mut npz = NpzReader::new(Cursor::new(lie)).unwrap();
        let err = npz.read::<f64, Ix2>("big").unwrap_err();
        assert!(
            matches!(
                err,
                Error::Archive(ndnpy::error::ArchiveError::CorruptMember { .. })
                    | Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
            ),
            "{name}: {err:?}"
        );
        // The header streams the frame, which is intact: the table is not
        // read for it.
        assert_eq!(npz.header("big").unwrap().shape, [700, 1000], "{name}");
        let mut streamed = Vec::new();
        let read = npz.member_reader("big").unwrap().read_to_end(&mut streamed);
        assert!(read.is_err(), "{name}: the table's segments do not decode");
    }
}

/// An archive of one member `name`, method `method`, its compressed bytes
/// `data`, with the given size and CRC-32, and a segment table (the `nd`
/// extra field in its central directory entry) of `block` bytes per
/// segment and these compressed lengths.
fn one_member_zip(
    name: &str,
    method: u16,
    data: &[u8],
    size: u32,
    crc: u32,
    table: (u32, &[u32]),
) -> Vec<u8> {
    let mut nd = b"nd".to_vec();
    nd.extend_from_slice(&((4 + 4 * table.1.len()) as u16).to_le_bytes());
    nd.extend_from_slice(&table.0.to_le_bytes());
    for l in table.1 {
        nd.extend_from_slice(&l.to_le_bytes());
    }
    let common = |out: &mut Vec<u8>| {
        for v in [0u16, method, 0, 0x21] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, data.len() as u32, size] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    };
    let mut out = 0x0403_4B50u32.to_le_bytes().to_vec();
    out.extend_from_slice(&63u16.to_le_bytes());
    common(&mut out);
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(data);
    let cd = out.len();
    out.extend_from_slice(&0x0201_4B50u32.to_le_bytes());
    out.extend_from_slice(&63u16.to_le_bytes());
    out.extend_from_slice(&63u16.to_le_bytes());
    common(&mut out);
    out.extend_from_slice(&(nd.len() as u16).to_le_bytes());
    out.extend_from_slice(&[0u8; 14]);
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&nd);
    let cd_len = out.len() - cd;
    out.extend_from_slice(&0x0605_4B50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
    out.extend_from_slice(&(cd_len as u32).to_le_bytes());
    out.extend_from_slice(&(cd as u32).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// One standard Zstandard frame of `first` then `second`, `first`'s
/// blocks flushed so that they end where it ends: any zstd writer that
/// does not reset its repeat offsets between the two. The frame and where
/// `second`'s blocks start.
fn flushed_frame(first: &[u8], second: &[u8]) -> (Vec<u8>, usize) {
    use zstd_safe::zstd_sys::ZSTD_EndDirective::{ZSTD_e_end, ZSTD_e_flush};
    use zstd_safe::{CParameter, InBuffer, OutBuffer};
    let mut cctx = zstd_safe::CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(3)).unwrap();
    cctx.set_parameter(CParameter::ContentSizeFlag(false))
        .unwrap();
    cctx.set_parameter(CParameter::ChecksumFlag(false)).unwrap();
    cctx.set_parameter(CParameter::DictIdFlag(false)).unwrap();
    let mut out = vec![0u8; zstd_safe::compress_bound(first.len() + second.len()) + 64];
    let mut split = 0;
    let mut output = OutBuffer::around(&mut out[..]);
    for (part, end) in [(first, ZSTD_e_flush), (second, ZSTD_e_end)] {
        let mut input = InBuffer::around(part);
        while cctx.compress_stream2(&mut output, &mut input, end).unwrap() != 0 {}
        if split == 0 {
            split = output.pos();
        }
    }
    let n = output.pos();
    out.truncate(n);
    (out, split)
}

/// A crafted Zstandard member and what decodes from it.
struct Crafted {
    array: Array1<u8>,
    frame: Vec<u8>,
    /// Bytes per segment, and each segment's compressed length.
    table: (u32, Vec<u32>),
    /// The `.npy` bytes as zstd decodes the frame.
    standard: Vec<u8>,
    /// As its segments decode alone.
    split_decoding: Vec<u8>,
}

/// The crafted member: a `uint8` array whose `.npy` bytes are two
/// segments of one frame, the second of which starts with a repeat of the
/// offset the first left (12), so that decoded alone (offsets 1, 4, 8) it
/// gives other bytes, without error.
fn repeat_offset_member() -> Crafted {
    const BLOCK: usize = 256 << 10;
    let probe = ndnpy::WriteNpy::to_npy_bytes(&Array1::<u8>::zeros(BLOCK + 100_000)).unwrap();
    let header = probe.len() - (BLOCK + 100_000);
    let a = Array1::from_iter((0..BLOCK - header + 100_000).map(|i| {
        if i < BLOCK - header {
            b'a' + (i % 12) as u8
        } else {
            b'A' + (i % 12) as u8
        }
    }));
    let npy = ndnpy::WriteNpy::to_npy_bytes(&a).unwrap();
    let (frame, split) = flushed_frame(&npy[..BLOCK], &npy[BLOCK..]);
    let mut standard = vec![0u8; npy.len() + 10];
    let n = zstd_safe::decompress(&mut standard[..], &frame).unwrap();
    standard.truncate(n);
    assert!(standard == npy, "zstd decodes the frame to the array");
    let mut alone = frame[..6].to_vec();
    alone.extend_from_slice(&frame[split..]);
    let mut second = vec![0u8; npy.len()];
    let n = zstd_safe::decompress(&mut second[..], &alone).unwrap();
    second.truncate(n);
    let mut split_decoding = npy[..BLOCK].to_vec();
    split_decoding.extend_from_slice(&second);
    assert_eq!(split_decoding.len(), npy.len());
    assert!(split_decoding != npy, "alone, the second segment differs");
    let table = (
        BLOCK as u32,
        vec![split as u32, (frame.len() - split) as u32],
    );
    Crafted {
        array: a,
        frame,
        table,
        standard,
        split_decoding,
    }
}

#[test]
fn a_segment_table_over_dependent_segments_gives_the_standard_bytes_or_an_error() {
    let Crafted {
        array: a,
        frame,
        table,
        standard,
        split_decoding,
    } = repeat_offset_member();
    let size = standard.len() as u32;
    let n = a.len();
    // The CRC-32 over the standard decoding (what Python's `zipfile` and
    // so NumPy read; checked once with NumPy and `backports.zstd` on this
    // very file): ndnpy reads the same, by every way in.
    let archive = one_member_zip(
        "a.npy",
        93,
        &frame,
        size,
        crc32fast::hash(&standard),
        (table.0, &table.1),
    );
    let mut npz = NpzReader::new(Cursor::new(archive)).unwrap();
    assert_eq!(npz.read::<u8, Ix1>("a").unwrap(), a);
    let mut streamed = Vec::new();
    npz.member_reader("a")
        .unwrap()
        .read_to_end(&mut streamed)
        .unwrap();
    assert!(streamed == standard);
    assert_eq!(npz.read_range::<u8, Ix1>("a", ..).unwrap(), a);
    assert_eq!(
        npz.read_range::<u8, Ix1>("a", n - 50_000..n - 10).unwrap(),
        a.slice(ndarray::s![n - 50_000..n - 10])
    );
    // The CRC-32 over the segments decoded alone (a crafted file): those
    // are bytes no standard decoder gives, so an error, never them.
    let archive = one_member_zip(
        "a.npy",
        93,
        &frame,
        size,
        crc32fast::hash(&split_decoding),
        (table.0, &table.1),
    );
    let mut npz = NpzReader::new(Cursor::new(archive)).unwrap();
    let err = npz.read::<u8, Ix1>("a").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
        ),
        "{err:?}"
    );
    let err = npz.read_range::<u8, Ix1>("a", ..).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
        ),
        "{err:?}"
    );
    // Some rows: the standard decoder's (it cannot check them).
    assert_eq!(
        npz.read_range::<u8, Ix1>("a", n - 50_000..n - 10).unwrap(),
        a.slice(ndarray::s![n - 50_000..n - 10])
    );
}

/// The compressed lengths of member `name`'s segments, from its `nd`
/// table ("nd", its length, the segment size, a length per segment), and
/// where the first of them lies in `bytes`.
fn segment_table(bytes: &[u8], block: u32) -> (Vec<u32>, usize) {
    let at = bytes
        .windows(8)
        .position(|w| &w[..2] == b"nd" && w[4..8] == block.to_le_bytes())
        .expect("a segment table");
    let len = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]) as usize;
    let lengths = bytes[at + 8..at + 4 + len]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (lengths, at + 8)
}

/// `big`'s rows: 8000 bytes each after a 128-byte header, so the 2 MiB
/// segments end inside rows 262 and 524.
const SEGMENT: u32 = 2 << 20;

#[test]
fn a_zstd_range_is_the_same_rows_as_a_whole_read_from_the_segments_that_hold_them() {
    let (bytes, _) = zstd_archive(2, 3);
    let mut npz = NpzReader::new(Cursor::new(bytes.clone())).unwrap();
    let (lengths, _) = segment_table(&bytes, SEGMENT);
    assert_eq!(lengths.len(), 3, "big has three segments");
    let big: Array2<f64> = npz.read("big").unwrap();
    let noise: Array1<u64> = npz.read("noise").unwrap();
    let fortran: Array2<f64> = npz.read("fortran").unwrap();
    for (from, to) in [
        (0, 5),     // first rows
        (300, 310), // the middle segment
        (695, 700), // last rows
        (250, 280), // across the first segment boundary
        (260, 530), // across both
        (400, 400), // empty
        (0, 700),   // all: the standard decoder, CRC-checked
        (1, 700),   // all but one
    ] {
        let got = npz.read_range::<f64, Ix2>("big", from..to).unwrap();
        assert_eq!(
            got,
            big.slice(ndarray::s![from..to, ..]),
            "big {from}..{to}"
        );
        // Fortran order: the rows are the last axis.
        let got = npz.read_range::<f64, Ix2>("fortran", from..to).unwrap();
        assert_eq!(
            got,
            fortran.slice(ndarray::s![.., from..to]),
            "fortran {from}..{to}"
        );
    }
    for (from, to) in [(0, 1), (262_000, 262_200), (599_990, 600_000), (0, 600_000)] {
        let got = npz.read_range::<u64, Ix1>("noise", from..to).unwrap();
        assert_eq!(
            got,
            noise.slice(ndarray::s![from..to]),
            "noise {from}..{to}"
        );
    }
    assert_eq!(npz.read_range::<f64, Ix2>("big", ..).unwrap(), big);
    // Memory in proportion to the rows (and one segment), not the member
    // (5.6 MB).
    let (got, largest) =
        largest_allocation(|| npz.read_range::<f64, Ix2>("big", 300..301).unwrap());
    assert_eq!(got, big.slice(ndarray::s![300..301, ..]));
    assert!(
        largest <= SEGMENT as usize + (64 << 10),
        "{largest} bytes at once"
    );
}

#[test]
fn a_zstd_range_decodes_only_the_segments_of_its_rows() {
    let (bytes, _) = zstd_archive(2, 3);
    let info = NpzReader::new(Cursor::new(bytes.clone()))
        .unwrap()
        .member_info("big")
        .unwrap();
    let big: Array2<f64> = NpzReader::new(Cursor::new(bytes.clone()))
        .unwrap()
        .read("big")
        .unwrap();
    let (lengths, _) = segment_table(&bytes, SEGMENT);
    let start = info.data_start as usize;
    let last = start + lengths[..2].iter().map(|&l| l as usize).sum::<usize>();
    // The first segment damaged after the frame's header: a whole read
    // fails, and so would any decoding from the member's start; rows of
    // the last segment do not touch it.
    let early = {
        let mut b = bytes.clone();
        b[start + lengths[0] as usize / 2] ^= 0x5A;
        b
    };
    let mut npz = NpzReader::new(Cursor::new(early)).unwrap();
    assert!(npz.read::<f64, Ix2>("big").is_err());
    assert!(npz.read_range::<f64, Ix2>("big", ..).is_err());
    assert_eq!(
        npz.read_range::<f64, Ix2>("big", 600..610).unwrap(),
        big.slice(ndarray::s![600..610, ..])
    );
    // The last segment damaged: the rows before it never reach it.
    let late = {
        let mut b = bytes.clone();
        b[last + lengths[2] as usize / 2] ^= 0x5A;
        b
    };
    let mut npz = NpzReader::new(Cursor::new(late)).unwrap();
    assert!(npz.read::<f64, Ix2>("big").is_err());
    assert_eq!(
        npz.read_range::<f64, Ix2>("big", 10..20).unwrap(),
        big.slice(ndarray::s![10..20, ..])
    );
    assert_eq!(
        npz.read_range::<f64, Ix2>("big", 250..280).unwrap(),
        big.slice(ndarray::s![250..280, ..])
    );
}

#[test]
fn a_lying_segment_table_is_an_error_for_a_range_too() {
    let (bytes, _) = zstd_archive(2, 3);
    let (lengths, first) = segment_table(&bytes, SEGMENT);
    let (a, c) = (lengths[0], lengths[1]);
    let with = |x: u32, y: u32| {
        let mut b = bytes.clone();
        b[first..first + 4].copy_from_slice(&x.to_le_bytes());
        b[first + 4..first + 8].copy_from_slice(&y.to_le_bytes());
        b
    };
    for (name, lie) in [
        // Segments that start inside blocks, their sum kept.
        ("shifted", with(a + 1, c - 1)),
        ("swapped", with(c, a)),
    ] {
        let mut npz = NpzReader::new(Cursor::new(lie)).unwrap();
        for rows in [0..10, 300..310, 250..280] {
            let got = npz.read_range::<f64, Ix2>("big", rows.clone());
            assert!(
                matches!(
                    got,
                    Err(Error::Archive(
                        ndnpy::error::ArchiveError::CorruptMember { .. }
                    ))
                ),
                "{name} {rows:?}: {got:?}"
            );
        }
    }
    // A segment that decodes to other than the size declared: the last
    // one's share of the member, made a byte longer.
    let mut longer = bytes.clone();
    let info = NpzReader::new(Cursor::new(bytes.clone()))
        .unwrap()
        .member_info("big")
        .unwrap();
    let size = info.size as u32;
    let mut changed = 0;
    for at in 0..longer.len() - 4 {
        if longer[at..at + 4] == size.to_le_bytes() {
            longer[at..at + 4].copy_from_slice(&(size + 1).to_le_bytes());
            changed += 1;
        }
    }
    // `big`'s and `fortran`'s (the same size), each in its local header
    // and the directory.
    assert_eq!(changed, 4);
    let mut npz = NpzReader::new(Cursor::new(longer)).unwrap();
    let got = npz.read_range::<f64, Ix2>("big", 690..700);
    assert!(got.is_err(), "{got:?}");
}

#[test]
fn a_zstd_range_of_all_rows_checks_the_crc() {
    let (bytes, _) = zstd_archive(2, 3);
    let mut npz = NpzReader::new(Cursor::new(bytes.clone())).unwrap();
    let crc = crc32fast::hash(&npz.raw("big").unwrap()).to_le_bytes();
    let mut wrong = bytes.clone();
    let mut changed = 0;
    for at in 0..wrong.len() - 4 {
        if wrong[at..at + 4] == crc {
            wrong[at] ^= 1;
            changed += 1;
        }
    }
    assert_eq!(changed, 2, "the local header's and the directory's");
    let mut npz = NpzReader::new(Cursor::new(wrong)).unwrap();
    let bad_crc = |got: &Result<Array2<f64>, Error>| {
        matches!(
            got,
            Err(Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. }))
        )
    };
    let got = npz.read::<f64, Ix2>("big");
    assert!(bad_crc(&got), "{got:?}");
    for got in [
        npz.read_range::<f64, Ix2>("big", ..),
        npz.read_range::<f64, Ix2>("big", 0..700),
    ] {
        assert!(bad_crc(&got), "{got:?}");
    }
    // Some rows cannot be checked against it (as for deflate): the values.
    let want: Array2<f64> = NpzReader::new(Cursor::new(bytes))
        .unwrap()
        .read("big")
        .unwrap();
    assert_eq!(
        npz.read_range::<f64, Ix2>("big", 300..310).unwrap(),
        want.slice(ndarray::s![300..310, ..])
    );
}

#[test]
fn a_zstd_member_without_a_segment_table_is_read_from_its_start() {
    // One frame, as Python's zipfile writes it: no table to start inside.
    let a = Array1::from_iter((0..300_000u32).map(|i| i.wrapping_mul(2_654_435_761) >> 7));
    let npy = ndnpy::WriteNpy::to_npy_bytes(&a).unwrap();
    let mut frame = vec![0u8; zstd_safe::compress_bound(npy.len())];
    let n = zstd_safe::compress(&mut frame[..], &npy, 3).unwrap();
    frame.truncate(n);
    let archive = one_member_zip(
        "a.npy",
        93,
        &frame,
        npy.len() as u32,
        crc32fast::hash(&npy),
        (0, &[]),
    );
    let mut npz = NpzReader::new(Cursor::new(archive)).unwrap();
    assert_eq!(npz.read::<u32, Ix1>("a").unwrap(), a);
    for (from, to) in [
        (0, 10),
        (150_000, 150_100),
        (299_990, 300_000),
        (7, 7),
        (0, 300_000),
    ] {
        assert_eq!(
            npz.read_range::<u32, Ix1>("a", from..to).unwrap(),
            a.slice(ndarray::s![from..to]),
            "{from}..{to}"
        );
    }
}
