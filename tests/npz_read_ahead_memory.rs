//! The read-ahead's memory bound counts what it holds: members whose
//! values take more memory than their bytes (`<U1`: a 24-byte `String`
//! and an allocation for every 4 bytes of the file) stay within the bound
//! through the array iterator, with more threads than the machine has
//! cores.
//!
//! This test binary installs a counting global allocator (the peak of live
//! heap bytes); it has one test, so nothing else allocates meanwhile.

use ndarray::Array1;
use ndnpy::{AnyArray, NpzReader, WriteNpy};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Cursor, Write};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, SeqCst) + size;
    PEAK.fetch_max(live, SeqCst);
}

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

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The peak growth of live heap bytes while `f` runs, with its result.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(SeqCst);
    PEAK.store(base, SeqCst);
    let out = f();
    (out, PEAK.load(SeqCst).saturating_sub(base))
}

const MIB: usize = 1 << 20;

/// Members of `n` one-letter strings (`<U1`, 4 bytes each in the file),
/// deflated one stream each as `np.savez_compressed` writes them.
fn letters(members: usize, n: usize) -> (Vec<u8>, Vec<Array1<String>>) {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(false);
    let mut x = 7u64;
    let mut arrays = Vec::new();
    for k in 0..members {
        let a = Array1::from_shape_fn(n, |_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            char::from(b'a' + (x >> 59) as u8).to_string()
        });
        zip.start_file(format!("s{k}.npy"), options).unwrap();
        zip.write_all(&a.to_npy_bytes().unwrap()).unwrap();
        arrays.push(a);
    }
    (zip.finish().unwrap().into_inner(), arrays)
}

#[test]
fn the_iterator_holds_decoded_strings_within_the_bound() {
    // Twelve members of 256 Ki strings: 1 MiB each in the file, about
    // 6.5 MB each as `String`s.
    let (bytes, arrays) = letters(12, 1 << 18);
    // A plain read of one member, for the memory it takes by itself.
    let mut npz = NpzReader::new(Cursor::new(bytes.clone())).unwrap();
    let (one, alone) = measure(|| npz.read_any("s0").unwrap());
    assert_eq!(one, AnyArray::Str(arrays[0].clone().into_dyn()));
    drop(one);
    // The iterator with 8 threads (whatever the cores) and 16 MiB ahead.
    let bound = 16 * MIB;
    npz.__read_ahead_limits(8, bound as u64);
    let (count, peak) = measure(|| {
        let mut count = 0;
        for (k, (name, a)) in npz.arrays().enumerate() {
            assert_eq!(name, format!("s{k}"));
            // Compared and dropped at once: the caller holds one member.
            assert!(a.unwrap() == AnyArray::Str(arrays[k].clone().into_dyn()));
            count += 1;
        }
        count
    });
    assert_eq!(count, arrays.len());
    // Besides the member being read (and the copy of it compared here):
    // the bound, and a few compressed buffers kept for reuse.
    let allowed = 2 * alone + bound + 4 * MIB;
    assert!(
        peak <= allowed,
        "the iterator held {} MiB at the peak; one member alone {} MiB, bound {} MiB",
        peak / MIB,
        alone / MIB,
        bound / MIB
    );
}
