//! The zero-size value limit across an archive (issue 30, review item 9).
//!
//! `ndnpy::ReadOptions::max_zero_size_elements` (2^20 by default) bounds
//! what one `.npy` header may declare in values that occupy no bytes of
//! the data (`<U0`: each an empty `String` of 24 bytes from nothing). The
//! conversions that hold every member of an archive at once
//! (`npz_to_batch`, `convert::read_npz`, which the CLI's npz -> Parquet
//! conversion uses) must hold the same limit across the members: a 4 KB
//! archive of 24 deflated `<U0` members of 2^20 elements each, every one
//! within the limit, took 602 MB. A counting global allocator records the
//! peak of live heap bytes; tests are serialised by a lock so that their
//! measurements do not mix.

use ndnpy::{dtype::DType, dtype::Header, dtype::Version, NpzWriter};
use ndnpy_parquet::Error;
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Cursor;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` unchanged; the counters are
// atomics and never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
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

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, SeqCst) + size;
    PEAK.fetch_max(live, SeqCst);
}

#[global_allocator]
static GLOBAL: Counting = Counting;

static SERIAL: Mutex<()> = Mutex::new(());

const MIB: usize = 1 << 20;

/// `f`'s result and the peak growth of live heap bytes while it ran.
fn peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(SeqCst);
    PEAK.store(base, SeqCst);
    let out = f();
    (out, PEAK.load(SeqCst).saturating_sub(base))
}

/// A deflated archive of `members` members `m0`, `m1` ..., each a `<U0`
/// array of `n` elements: a header and no data, written as raw `.npy`
/// data (ndnpy's typed writers give strings a width of at least 1, as
/// NumPy does).
fn empty_strings(members: usize, n: usize) -> Vec<u8> {
    let header = Header {
        dtype: DType::parse("<U0").unwrap(),
        shape: vec![n],
        fortran_order: false,
        version: Version::V1,
    };
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    for k in 0..members {
        w.add_npy_data(&format!("m{k}"), &header, |_| Ok(()))
            .unwrap();
    }
    w.finish_into_inner().unwrap().into_inner()
}

/// `bytes` saved as an `.npz` in a new temporary folder.
fn saved(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

fn is_zero_size_limit(e: &Error, claimed: u64) -> bool {
    matches!(
        e,
        Error::Npy(ndnpy::Error::Limit(ndnpy::error::LimitError::ZeroSizeLimit { claimed: c, max }))
            if *c == claimed && *max == ndnpy::npy::DEFAULT_MAX_ZERO_SIZE_ELEMENTS
    )
}

#[test]
fn members_each_within_the_limit_are_limited_together() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The review's archive: 24 members of 2^20 empty strings.
    let archive = empty_strings(24, 1 << 20);
    println!("{} members in {} bytes", 24, archive.len());
    assert!(archive.len() < 8 << 10, "{}", archive.len());
    let (_dir, path) = saved(&archive);
    // Each member alone is within the limit, as ndnpy reads it.
    let mut z = ndnpy::NpzReader::open(&path).unwrap();
    assert_eq!(z.header("m23").unwrap().zero_size_count(), 1 << 20);
    drop(z);

    let (r, bytes) = peak(|| ndnpy_parquet::arrow::npz_to_batch(&path).map(drop));
    println!("npz_to_batch: peak {bytes} B");
    let err = r.unwrap_err();
    assert!(is_zero_size_limit(&err, 24 << 20), "{err:?}");
    // Headers are read, no member: far below one member's 24 MiB of
    // `String`s.
    assert!(bytes < 4 * MIB, "{bytes}");

    let (r, bytes) = peak(|| ndnpy_parquet::convert::read_npz(&path).map(drop));
    println!("read_npz: peak {bytes} B");
    let err = r.unwrap_err();
    assert!(is_zero_size_limit(&err, 24 << 20), "{err:?}");
    assert!(bytes < 4 * MIB, "{bytes}");
}

#[test]
fn members_within_the_limit_together_still_load() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Four members of 2^18: 2^20 in all, exactly the limit.
    let (_dir, path) = saved(&empty_strings(4, 1 << 18));
    let (batch, bytes) = peak(|| ndnpy_parquet::arrow::npz_to_batch(&path).unwrap());
    println!("npz_to_batch at the limit: peak {bytes} B");
    assert_eq!((batch.num_columns(), batch.num_rows()), (4, 1 << 18));
    drop(batch);
    let (frame, bytes) = peak(|| ndnpy_parquet::convert::read_npz(&path).unwrap());
    println!("read_npz at the limit: peak {bytes} B");
    assert_eq!(frame.len(), 1 << 18);
    drop(frame);
    // Just past it in all (three columns of one length, as a batch
    // needs: 2^20 + 2 values) is refused.
    let (_dir, path) = saved(&empty_strings(3, 349_526));
    let err = ndnpy_parquet::arrow::npz_to_batch(&path).unwrap_err();
    assert!(is_zero_size_limit(&err, (1 << 20) + 2), "{err:?}");
    let err = ndnpy_parquet::convert::read_npz(&path).unwrap_err();
    assert!(is_zero_size_limit(&err, (1 << 20) + 2), "{err:?}");
}
