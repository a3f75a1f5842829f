//! The counting global allocator of `tests/claimed_sizes.rs`, and the
//! bound every reader is held to.

use ndnpy::Error;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);
static COUNT: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, SeqCst) + size;
    PEAK.fetch_max(live, SeqCst);
}

// SAFETY: every method forwards to `System` unchanged; the counters are
// atomics and never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), SeqCst);
        COUNT.fetch_add(1, SeqCst);
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), SeqCst);
        COUNT.fetch_add(1, SeqCst);
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
        COUNT.fetch_add(1, SeqCst);
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

pub static SERIAL: Mutex<()> = Mutex::new(());

pub const MIB: usize = 1 << 20;

/// The bound of the issue: no reader allocates more than this for an
/// input of a few KiB, at once or in all, nor makes more allocations.
pub const BOUND: usize = 64 * MIB;
pub const MOST_ALLOCATIONS: usize = 100_000;

/// What `f` cost: the peak growth of live heap bytes, the largest single
/// request and the number of allocations made while it ran.
pub struct Cost {
    pub peak: usize,
    pub largest: usize,
    pub count: usize,
}

pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Cost) {
    let base = LIVE.load(SeqCst);
    PEAK.store(base, SeqCst);
    LARGEST.store(0, SeqCst);
    let count = COUNT.load(SeqCst);
    let out = f();
    let cost = Cost {
        peak: PEAK.load(SeqCst).saturating_sub(base),
        largest: LARGEST.load(SeqCst),
        count: COUNT.load(SeqCst) - count,
    };
    (out, cost)
}

/// Runs one reader, checks its cost against [`BOUND`] and gives its
/// answer: `"ok"` or the error's variant name.
pub fn bounded<T>(what: &str, f: impl FnOnce() -> ndnpy::Result<T>) -> String {
    let (result, cost) = measure(|| f().map(drop));
    assert!(
        cost.peak < BOUND && cost.largest < BOUND && cost.count < MOST_ALLOCATIONS,
        "{what}: peak {} B, largest request {} B, {} allocations",
        cost.peak,
        cost.largest,
        cost.count
    );
    match result {
        Ok(()) => "ok".to_owned(),
        Err(e) => variant(&e),
    }
}

/// The name of an error's variant (`ZeroSizeLimit`, `InvalidSparse` ...).
pub fn variant(e: &Error) -> String {
    let debug = format!("{e:?}");
    let end = debug.find([' ', '(', '{']).unwrap_or(debug.len());
    debug[..end].to_owned()
}
