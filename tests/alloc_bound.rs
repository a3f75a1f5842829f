//! Memory follows the bytes present, not the size a header claims.
//!
//! This test binary installs a counting global allocator. It records the
//! peak of live heap bytes and the largest single request (even a request the
//! allocator refuses counts, so `try_reserve` of a claimed size would show
//! up). Tests in this file are serialised by a lock so that their
//! measurements do not mix.

use ndarray::{Array1, ArrayD, ArrayView1};
use ndnpy::{dtype::Header, AnyArray, Error, ReadNpy, ReadOptions, ViewNpy};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;

mod common;
use common::npy_v1;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, SeqCst) + size;
    PEAK.fetch_max(live, SeqCst);
}

// SAFETY: every method forwards to `System` unchanged; the counters are
// atomics and never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), SeqCst);
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), SeqCst);
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), SeqCst);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, SeqCst);
        // SAFETY: forwarded with the caller's arguments.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, SeqCst);
            }
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `f` and returns its result with the peak growth of live heap bytes
/// and the largest single allocation request made while it ran.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    let base = LIVE.load(SeqCst);
    PEAK.store(base, SeqCst);
    LARGEST.store(0, SeqCst);
    let out = f();
    let peak = PEAK.load(SeqCst).saturating_sub(base);
    (out, peak, LARGEST.load(SeqCst))
}

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// A ~200-byte file whose header claims 4·10⁹ `f64` (32 GB).
fn tiny_file_claiming_32_gb() -> Vec<u8> {
    let text = "{'descr': '<f8', 'fortran_order': False, 'shape': (4000000000,), }";
    let file = npy_v1(text, &[0u8; 128]);
    assert!(file.len() <= 256, "{}", file.len());
    file
}

fn is_truncated(e: &Error) -> bool {
    matches!(
        e,
        Error::Data(ndnpy::error::DataError::TruncatedData {
            expected: 32_000_000_000,
            ..
        })
    )
}

#[test]
fn tiny_file_claiming_huge_shape() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let file = tiny_file_claiming_32_gb();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.npy");
    std::fs::write(&path, &file).unwrap();

    let (r, peak, largest) = measure(|| Array1::<f64>::from_npy_bytes(&file));
    assert!(is_truncated(&r.unwrap_err()));
    println!("from_npy_bytes: peak {peak} B, largest request {largest} B");
    assert!(peak < 64 * KIB && largest < 64 * KIB, "{peak} / {largest}");

    let (r, peak, largest) = measure(|| Array1::<f64>::read_npy(&path));
    assert!(is_truncated(&r.unwrap_err()));
    println!("read_npy(path): peak {peak} B, largest request {largest} B");
    assert!(peak < 64 * KIB && largest < 64 * KIB, "{peak} / {largest}");

    let (r, peak, largest) = measure(|| AnyArray::read_npy(&path));
    assert!(is_truncated(&r.unwrap_err()));
    assert!(peak < 64 * KIB && largest < 64 * KIB, "{peak} / {largest}");

    let (r, peak, largest) = measure(|| ArrayView1::<f64>::view_npy(&file).map(drop));
    assert!(is_truncated(&r.unwrap_err()));
    assert!(peak < 64 * KIB && largest < 64 * KIB, "{peak} / {largest}");
}

/// A reader that hands out `data` and then ends (or fails), a piece at a time.
struct Stream {
    data: Vec<u8>,
    pos: usize,
    fail_at_end: bool,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.data.len() - self.pos).min(64 * KIB);
        if n == 0 && self.fail_at_end && !buf.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "peer went away",
            ));
        }
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn stream_claiming_32_gb(present: usize, fail_at_end: bool) -> Stream {
    let mut data = tiny_file_claiming_32_gb();
    data.resize(data.len() - 128 + present, 7);
    Stream {
        data,
        pos: 0,
        fail_at_end,
    }
}

#[test]
fn stream_that_ends_early() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());

    // A few KB present.
    let mut s = stream_claiming_32_gb(4 * KIB, false);
    let (r, peak, largest) = measure(|| Array1::<f64>::read_npy_from(&mut s));
    match r.unwrap_err() {
        Error::Data(ndnpy::error::DataError::TruncatedData { expected, found }) => {
            assert_eq!(expected, 32_000_000_000);
            assert_eq!(found, 4096);
        }
        e => panic!("{e:?}"),
    }
    println!("stream, 4 KiB present: peak {peak} B, largest request {largest} B");
    assert!(peak < 64 * MIB, "{peak}");
    assert!(largest < 64 * MIB, "{largest}");

    let mut s = stream_claiming_32_gb(4 * KIB, false);
    let (r, peak, _) = measure(|| AnyArray::read_npy_from(&mut s));
    assert!(is_truncated(&r.unwrap_err()));
    assert!(peak < 64 * MIB, "{peak}");

    // The stream fails instead of ending: the I/O error comes through.
    let mut s = stream_claiming_32_gb(4 * KIB, true);
    let (r, peak, _) = measure(|| ArrayD::<f64>::read_npy_from(&mut s));
    assert!(matches!(r.unwrap_err(), Error::Io(e) if e.kind() == io::ErrorKind::ConnectionReset));
    assert!(peak < 64 * MIB, "{peak}");
}

#[test]
fn stream_memory_is_proportional_to_bytes_present() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 80 MB present of 32 GB claimed: memory grows with the data, at most
    // about twice what arrived plus one bounded step.
    let present = 80 * MIB;
    let mut s = stream_claiming_32_gb(present, false);
    let (r, peak, largest) = measure(|| Array1::<f64>::read_npy_from(&mut s));
    assert!(is_truncated(&r.unwrap_err()));
    println!("stream, 80 MiB present: peak {peak} B, largest request {largest} B");
    assert!(peak < 2 * present + 64 * MIB, "{peak}");
    assert!(largest < 2 * present + 64 * MIB, "{largest}");
}

#[test]
fn header_length_claim_is_not_allocated() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // v2 length field says 4 GiB; the caller lifted the limit.
    let mut file = b"\x93NUMPY\x02\x00".to_vec();
    file.extend_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    file.extend_from_slice(b"{'descr': '<f8', ");
    let unlimited = ReadOptions::default().max_header_len(usize::MAX);
    let (r, peak, largest) = measure(|| Header::read_from_with(&file[..], &unlimited));
    assert!(matches!(
        r.unwrap_err(),
        Error::Header(ndnpy::error::HeaderError::TruncatedHeader { .. })
    ));
    println!("4 GiB header claim: peak {peak} B, largest request {largest} B");
    assert!(peak < MIB && largest < MIB, "{peak} / {largest}");

    let (r, peak, _) = measure(|| Array1::<f64>::read_npy_from_with(&file[..], &unlimited));
    assert!(matches!(
        r.unwrap_err(),
        Error::Header(ndnpy::error::HeaderError::TruncatedHeader { .. })
    ));
    assert!(peak < MIB, "{peak}");
}

/// An archive with one deflated member `x.npy` holding `member`, whose
/// recorded uncompressed size is then replaced by `declared`.
fn npz_with_lying_member(member: &[u8], declared: u32) -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("x.npy", options).unwrap();
    zip.write_all(member).unwrap();
    let mut archive = zip.finish().unwrap().into_inner();
    archive[22..26].copy_from_slice(&declared.to_le_bytes());
    let cd = archive
        .windows(4)
        .rposition(|w| w == b"PK\x01\x02")
        .unwrap();
    archive[cd + 24..cd + 28].copy_from_slice(&declared.to_le_bytes());
    archive
}

#[test]
fn npz_member_that_lies_about_its_size() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The member declares ~4 GiB, its header claims 5·10⁸ f64 (4 GB), and
    // its deflate stream holds 4 KiB of data.
    let text = "{'descr': '<f8', 'fortran_order': False, 'shape': (500000000,), }";
    let member = npy_v1(text, &[3u8; 4 * KIB]);
    let archive = npz_with_lying_member(&member, u32::MAX - 1);
    let mut npz = ndnpy::NpzReader::new(io::Cursor::new(&archive[..])).unwrap();

    let (r, peak, largest) = measure(|| npz.read::<f64, ndarray::Ix1>("x"));
    let err = r.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData { .. })
                | Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
        ),
        "{err:?}"
    );
    println!("npz member claiming 4 GB: peak {peak} B, largest request {largest} B");
    assert!(peak < 64 * MIB && largest < 64 * MIB, "{peak} / {largest}");

    let (r, peak, _) = measure(|| npz.read_any("x"));
    assert!(r.is_err());
    assert!(peak < 64 * MIB, "{peak}");

    // Raw bytes of the lying member: memory follows what decompresses.
    let (r, peak, largest) = measure(|| npz.raw("x"));
    println!(
        "npz raw of lying member: {:?}, peak {peak} B, largest request {largest} B",
        r.as_ref().map(Vec::len).map_err(|e| e.to_string())
    );
    assert!(peak < 64 * MIB && largest < 64 * MIB, "{peak} / {largest}");

    // The whole archive: opening and listing cost nothing like the claim.
    let (r, peak, _) =
        measure(|| ndnpy::NpzReader::new(io::Cursor::new(&archive[..])).map(|z| z.names()));
    assert_eq!(r.unwrap(), ["x"]);
    assert!(peak < MIB, "{peak}");
}

/// A stored member whose directory entry claims 2 GiB, in an archive whose
/// next entry's local header offset lies past the end of the file: the
/// member's data cannot reach past the file, whatever the next entry says.
#[test]
fn npz_member_claiming_data_past_the_end_of_the_file() {
    use std::io::Write;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = "{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }";
    let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for name in ["a.npy", "b.npy"] {
        zip.start_file(name, options).unwrap();
        zip.write_all(&npy_v1(text, &[0u8; 80])).unwrap();
    }
    let mut archive = zip.finish().unwrap().into_inner();
    let a = archive.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    let b = archive
        .windows(4)
        .rposition(|w| w == b"PK\x01\x02")
        .unwrap();
    assert_ne!(a, b);
    for field in [a + 20, a + 24] {
        archive[field..field + 4].copy_from_slice(&(2u32 << 30).to_le_bytes());
    }
    archive[b + 42..b + 46].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());

    let mut npz = ndnpy::NpzReader::new(io::Cursor::new(&archive[..])).unwrap();
    let (r, peak, largest) = measure(|| npz.read_any("a"));
    let err = r.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Archive(ndnpy::error::ArchiveError::InvalidArchive { .. })
        ),
        "{err:?}"
    );
    assert!(peak < MIB && largest < MIB, "{peak} / {largest}");
    let (r, peak, _) = measure(|| npz.raw("a"));
    assert!(
        matches!(
            r,
            Err(Error::Archive(
                ndnpy::error::ArchiveError::InvalidArchive { .. }
            ))
        ),
        "{r:?}"
    );
    assert!(peak < MIB, "{peak}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("past_the_end.npz");
    std::fs::write(&path, &archive).unwrap();
    // SAFETY: the file is this test's own and nothing modifies it while
    // it is mapped.
    let map = unsafe { ndnpy::NpzMmap::open(&path) }.unwrap();
    let err = map.header("a").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Archive(ndnpy::error::ArchiveError::InvalidArchive { .. })
        ),
        "{err:?}"
    );
    let err = map.view::<f64, ndarray::Ix1>("a").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Archive(ndnpy::error::ArchiveError::InvalidArchive { .. })
        ),
        "{err:?}"
    );
}

/// Reading into an array the caller has allocates nothing in proportion to
/// the data: a constant for the fast path (same layout, in-place plan) and
/// a cache-sized scratch buffer for the converting path (a Fortran file into
/// a C-order array, big-endian records ...).
#[test]
fn reading_into_an_existing_array_allocates_no_copy_of_the_data() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use ndarray::{Array2, ShapeBuilder};
    use ndnpy::{npy::ReadNpyInto, WriteNpy};
    let rows = 1024;
    let cols = 1024; // 8 MiB of f64
    let c = Array2::from_shape_fn((rows, cols), |(i, j)| (i * cols + j) as f64);
    let c_bytes = c.to_npy_bytes().unwrap();
    let mut f = Array2::<f64>::zeros((rows, cols).f());
    f.assign(&c);
    let f_bytes = f.to_npy_bytes().unwrap();
    let mut out = Array2::<f64>::zeros((rows, cols));
    let (result, peak, _) = measure(|| out.view_mut().fill_from_npy_bytes(&c_bytes));
    result.unwrap();
    assert_eq!(out, c);
    assert!(peak < 4096, "{peak} bytes at the peak for the fast path");
    out.fill(0.0);
    let (result, peak, _) = measure(|| out.view_mut().fill_from_npy_bytes(&f_bytes));
    result.unwrap();
    assert_eq!(out, c);
    // The blocked transposition's scratch (up to 2 MiB: 64 lanes of 8 KiB
    // here) and the read buffer: a constant, a tenth of the data.
    assert!(
        peak < 1 << 20,
        "{peak} bytes at the peak for the converting path"
    );
}
