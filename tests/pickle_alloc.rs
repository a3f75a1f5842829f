//! Object arrays: the pickle reader's memory follows the input's size.
//!
//! A counting global allocator (as in tests/alloc_bound.rs) records the peak
//! of live heap bytes and the largest single request while a pickle is read.
//! The bound checked: peak ≤ 256 × input + 2 MiB, where the reader's own
//! budget for values is 64 × input + 1 MiB and the rest is the machine's
//! per-opcode bookkeeping (stack, arena, memo).

use ndarray::Array1;
use ndnpy::pickle::{self, PyValue};
use ndnpy::{AnyArray, Error, ReadOptions};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;

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

/// The bound every read must meet.
fn bound(input: usize) -> usize {
    256 * input + 2 * MIB
}

fn check<T>(what: &str, input: &[u8], f: impl FnOnce(&[u8]) -> T) -> T {
    let (out, peak, largest) = measure(|| f(input));
    println!(
        "{what}: input {} B, peak {peak} B ({:.1}x), largest request {largest} B",
        input.len(),
        peak as f64 / input.len() as f64
    );
    assert!(peak <= bound(input.len()), "{what}: peak {peak}");
    assert!(largest <= bound(input.len()), "{what}: largest {largest}");
    out
}

#[test]
fn numpy_fixtures_stay_proportional() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pickle");
    for name in [
        "strings_p4.npy",
        "nested_p2.npy",
        "ragged_float_p5.npy",
        "repeated_p3.npy",
        "dates_np1_p4.npy",
        "record_fields_p2.npy",
        "record_with_object_p5.npy",
    ] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        check(name, &bytes, |b| AnyArray::from_npy_bytes(b).unwrap());
    }
}

#[test]
fn wild_fixtures_and_opaque_objects_stay_proportional() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let wild = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/wild");
    let opaque = ReadOptions::default()
        .opaque_objects(true)
        .pickle_encoding(ndnpy::pickle::PickleEncoding::Latin1);
    for name in [
        "numpy_testdata/py2-objarr.npy",
        "stringdtype/sd_na_pdna.npy",
        "pandas/mixed_df.npy",
        "pandas/ts_paris.npy",
        "opaque/all_p0.npy",
        "opaque/namespace_p4.npy",
        "nested_objects/subarray_of_records.npy",
    ] {
        let bytes = std::fs::read(wild.join(name)).unwrap();
        check(name, &bytes, |b| {
            AnyArray::from_npy_bytes_with(b, &opaque).unwrap()
        });
    }
    // Opaque objects that share one state through the memo, 100 000
    // times: the budget stops the copies, as for any shared value.
    let mut p = b"\x80\x02cfractions\nFraction\n)\x81q\x00]q\x01(X".to_vec();
    p.extend_from_slice(&60_000u32.to_le_bytes());
    p.extend(std::iter::repeat_n(b'a', 60_000));
    p.extend_from_slice(b"q\x02h\x00h\x02b");
    for _ in 0..100_000 {
        p.extend_from_slice(b"h\x00");
    }
    p.extend_from_slice(b"e.");
    let r = check("shared opaque state", &p, |b| {
        pickle::loads_with(b, &opaque)
    });
    assert!(
        matches!(
            r,
            Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
        ),
        "{r:?}"
    );
    // One zone with a 60 KB key, or one StringDType array with a 60 KB
    // string, referenced 100 000 times: each copy is charged its heap bytes.
    let mut key =
        b"\x80\x02]q\x00(cbuiltins\ngetattr\nczoneinfo\nZoneInfo\nX\x09\x00\x00\x00_unpickle\x86RX"
            .to_vec();
    key.extend_from_slice(&60_000u32.to_le_bytes());
    key.extend(std::iter::repeat_n(b'k', 60_000));
    key.extend_from_slice(b"K\x01\x86Rq\x01");
    for _ in 0..100_000 {
        key.extend_from_slice(b"h\x01");
    }
    key.extend_from_slice(b"e.");
    let r = check("shared zone key", &key, pickle::loads);
    assert!(
        matches!(
            r,
            Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
        ),
        "{r:?}"
    );
    let strings = AnyArray::StringDType(ndnpy::pickle::StringDTypeArray {
        values: ndarray::arr1(&[Some("s".repeat(60_000))]).into_dyn(),
        na_object: None,
        coerce: true,
    });
    let one = pickle::dumps(&PyValue::Array(std::sync::Arc::new(strings))).unwrap();
    let mut p = b"\x80\x03]q\x00(".to_vec();
    p.extend_from_slice(&one[2..one.len() - 1]);
    p.extend_from_slice(b"q\x01");
    for _ in 0..100_000 {
        p.extend_from_slice(b"h\x01");
    }
    p.extend_from_slice(b"e.");
    let r = check("shared StringDType array", &p, pickle::loads);
    assert!(
        matches!(
            r,
            Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
        ),
        "{r:?}"
    );
    // Opaque objects in proportion to their number.
    let mut ratios = Vec::new();
    for n in [1_000usize, 10_000, 100_000] {
        let mut p = b"\x80\x02]q\x00(".to_vec();
        for i in 0..n {
            p.extend_from_slice(b"cfractions\nFraction\nJ");
            p.extend_from_slice(&(i as i32).to_le_bytes());
            p.extend_from_slice(b"K\x07\x86R");
        }
        p.extend_from_slice(b"e.");
        let (r, peak, _) = measure(|| pickle::loads_with(&p, &opaque));
        assert!(
            matches!(r, Ok(PyValue::List(ref x)) if x.len() == n),
            "{r:?}"
        );
        drop(r);
        assert!(peak <= bound(p.len()));
        ratios.push(peak as f64 / p.len() as f64);
    }
    assert!(ratios[2] <= ratios[1] * 1.5, "{ratios:?}");
}

#[test]
fn memory_grows_linearly_with_the_array() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut ratios = Vec::new();
    for n in [1_000usize, 10_000, 100_000] {
        let a: Array1<PyValue> = (0..n)
            .map(|i| match i % 4 {
                0 => PyValue::Str(format!("label {i}")),
                1 => PyValue::Int(i as i64),
                2 => PyValue::None,
                _ => PyValue::List(vec![PyValue::Float(i as f64)]),
            })
            .collect();
        let bytes = ndnpy::WriteNpy::to_npy_bytes(&a).unwrap();
        let (r, peak, _) = measure(|| AnyArray::from_npy_bytes(&bytes));
        assert!(matches!(r, Ok(AnyArray::Object(ref x)) if x.len() == n));
        drop(r);
        let ratio = peak as f64 / bytes.len() as f64;
        println!(
            "{n} elements: input {} B, peak {peak} B ({ratio:.1}x)",
            bytes.len()
        );
        assert!(peak <= bound(bytes.len()));
        ratios.push(ratio);
    }
    // Proportional: the largest file costs no more per byte than the
    // middle one (plus slack for allocator rounding).
    assert!(ratios[2] <= ratios[1] * 1.5, "{ratios:?}");
}

#[test]
fn hostile_pickles_stay_within_the_bound() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Doubling a list 64 times through the memo.
    let mut p = b"\x80\x02(K\x01K\x01lq\x00".to_vec();
    for _ in 0..64 {
        p.extend_from_slice(b"(h\x00h\x00lq\x00");
    }
    p.push(b'.');
    let r = check("doubling lists", &p, pickle::loads);
    assert!(matches!(
        r,
        Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
    ));
    // One 60 KiB string fetched 100 000 times.
    let mut p = vec![0x80, 2, b'X'];
    p.extend_from_slice(&60_000u32.to_le_bytes());
    p.extend(std::iter::repeat_n(b'a', 60_000));
    p.extend_from_slice(b"q\x00](");
    for _ in 0..100_000 {
        p.extend_from_slice(b"h\x00");
    }
    p.extend_from_slice(b"e.");
    let r = check("shared string", &p, pickle::loads);
    assert!(matches!(
        r,
        Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
    ));
    // A nested array fetched 100 000 times from the memo.
    let mut p = b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R(K\x01(J\x00\x00\x01\x00tcnumpy\ndtype\nX\x02\x00\x00\x00u1\x89\x88\x87R(K\x03X\x01\x00\x00\x00|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb\x89B\x00\x00\x01\x00".to_vec();
    p.extend(std::iter::repeat_n(7u8, 65536));
    p.extend_from_slice(b"tbq\x00](");
    for _ in 0..100_000 {
        p.extend_from_slice(b"h\x00");
    }
    p.extend_from_slice(b"e.");
    let r = check("shared array", &p, pickle::loads);
    assert!(matches!(
        r,
        Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
    ));
    // Short pickles claiming 4 GiB: nothing of that size is requested.
    let mut p = vec![0x80, 4, 0x8d];
    p.extend_from_slice(&(4u64 << 30).to_le_bytes());
    p.extend_from_slice(b"abc.");
    let (r, peak, largest) = measure(|| pickle::loads(&p));
    assert!(matches!(
        r,
        Err(Error::Pickle(
            ndnpy::error::PickleError::MalformedPickle { .. }
        ))
    ));
    assert!(peak < 64 * KIB && largest < 64 * KIB, "{peak} / {largest}");
    // 100 000 nested lists.
    let mut p = vec![b']'; 100_000];
    p.extend(std::iter::repeat_n(b'a', 99_999));
    p.push(b'.');
    let r = check("nested lists", &p, pickle::loads);
    assert!(matches!(
        r,
        Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
    ));
}

#[test]
fn record_pickles_claiming_much_stay_within_the_bound() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pickle_bad/records");
    // A 100 MB record type; one tuple memoized for 4 000 wide records.
    for name in ["wide_record_claim.npy", "shared_record_tuples.npy"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let r = check(name, &bytes, AnyArray::from_npy_bytes);
        assert!(
            matches!(
                r,
                Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
            ),
            "{name}: {r:?}"
        );
    }
}
