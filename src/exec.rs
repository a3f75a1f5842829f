//! The one place in the library that starts threads and asks how many
//! cores there are, and the one budget of cores that every parallel part
//! draws from: members inflated ahead (`npz/pool.rs`), pieces read ahead
//! (`npz/codec/deflate/ahead.rs`), pieces decoded at once (`npz/codec/parallel.rs`), one
//! stream's chunks (`npz/codec/deflate/pinflate/`), the writer's compression blocks
//! (`npz/sink.rs`).
//!
//! Why one place: each of those once asked `available_parallelism` for
//! itself and took every core, so that work started from inside other
//! parallel work (a member inflated on every core by a read-ahead job, a
//! reader and a writer on two threads of the caller) ran twice as many
//! threads as cores. Here a thread that computes holds a [`Core`] of the
//! budget: `cores - 1` of them, the caller's own thread being the last
//! core. Work that asks for helpers while others hold the budget gets what
//! is left, possibly none: it then runs on the caller's thread alone,
//! which every user here supports (the caller always takes part).
//!
//! What a worker shares with its caller ends it: a closed flag or a stop
//! flag the caller sets when it is dropped (each user's own state); a panic
//! in a worker is caught here and given to the caller as an error
//! ([`scope`], [`Thread::join`]), never passed on as a panic.
//!
//! Imports: only `std`.

use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;

/// The budget: cores not held now, the callers' own threads aside.
struct Budget {
    cores: usize,
    free: AtomicUsize,
}

fn budget() -> &'static Budget {
    static BUDGET: OnceLock<Budget> = OnceLock::new();
    BUDGET.get_or_init(|| {
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        Budget {
            cores,
            free: AtomicUsize::new(cores - 1),
        }
    })
}

/// The cores of the machine (as the operating system lets this process
/// use them), asked once.
pub(crate) fn cores() -> usize {
    budget().cores
}

/// How many threads a task could run on now: the caller's, and the cores
/// of the budget nobody holds.
pub(crate) fn free_threads() -> usize {
    budget().free.load(Ordering::Relaxed) + 1
}

/// One core of the budget, held by a thread while it computes; given back
/// when dropped.
pub(crate) struct Core(());

/// A core of the budget, if one is free.
pub(crate) fn try_core() -> Option<Core> {
    let free = &budget().free;
    free.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
        .ok()
        .map(|_| Core(()))
}

impl Drop for Core {
    fn drop(&mut self) {
        budget().free.fetch_add(1, Ordering::AcqRel);
    }
}

/// Runs `f` with a [`Workers`] that starts helpers borrowing from the
/// caller's stack, and returns once every helper has returned. A helper
/// that panicked makes this an error (after all have returned); a panic of
/// `f` itself is passed on, as `std::thread::scope` does.
pub(crate) fn scope<'env, T>(f: impl for<'s> FnOnce(&Workers<'s, 'env>) -> T) -> io::Result<T> {
    let panicked = Arc::new(AtomicBool::new(false));
    let out = thread::scope(|scope| {
        f(&Workers {
            scope,
            panicked: Arc::clone(&panicked),
        })
    });
    if panicked.load(Ordering::Acquire) {
        return Err(io::Error::other("a worker thread panicked"));
    }
    Ok(out)
}

/// Starts helper threads inside a [`scope`].
pub(crate) struct Workers<'s, 'env> {
    scope: &'s thread::Scope<'s, 'env>,
    panicked: Arc<AtomicBool>,
}

impl<'s> Workers<'s, '_> {
    /// Runs `f` on a new thread named `name` holding a core of the budget
    /// until it returns; `false` (and `f` dropped, not run) when no core is
    /// free or the system gives no thread, so that the caller does the
    /// work itself.
    pub(crate) fn spawn(&self, name: &str, f: impl FnOnce() + Send + 's) -> bool {
        let Some(core) = try_core() else {
            return false;
        };
        let panicked = Arc::clone(&self.panicked);
        thread::Builder::new()
            .name(name.into())
            .spawn_scoped(self.scope, move || {
                let _core = core;
                if catch_unwind(AssertUnwindSafe(f)).is_err() {
                    panicked.store(true, Ordering::Release);
                }
            })
            .is_ok()
    }
}

/// A thread that outlives the call that started it (a pool's worker, a
/// file closed in the background). It holds no core: one that computes
/// takes a [`Core`] for each piece of work ([`try_core`]) and leaves the
/// work to its caller when none is free.
pub(crate) struct Thread(thread::JoinHandle<bool>);

/// Starts `f` on a new thread named `name`; `None` if the system gives no
/// thread (the caller then does the work itself). Dropping the [`Thread`]
/// detaches it.
pub(crate) fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Option<Thread> {
    thread::Builder::new()
        .name(name.into())
        .spawn(move || catch_unwind(AssertUnwindSafe(f)).is_ok())
        .ok()
        .map(Thread)
}

impl Thread {
    /// Waits for the thread to return; an error if it panicked.
    pub(crate) fn join(self) -> io::Result<()> {
        match self.0.join() {
            Ok(true) => Ok(()),
            _ => Err(io::Error::other("a worker thread panicked")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    // The budget is the process's: these tests only check what holds
    // whatever other tests hold meanwhile.

    #[test]
    fn cores_held_are_not_given_twice_and_come_back() {
        let mut held = Vec::new();
        while let Some(core) = try_core() {
            held.push(core);
        }
        assert!(held.len() < cores());
        assert!(try_core().is_none());
        // Nested work gets nothing more: it runs on the caller alone.
        let ran = scope(|w| w.spawn("t", || {})).unwrap();
        assert!(!ran);
        drop(held);
    }

    #[test]
    fn a_helper_panic_is_the_callers_error() {
        // A core may be busy with another test: then the helper does not
        // run, and the caller sees no panic.
        let ran = Mutex::new(false);
        let result = scope(|w| {
            w.spawn("t", || {
                *ran.lock().unwrap() = true;
                panic!("helper");
            })
        });
        if *ran.lock().unwrap_or_else(|e| e.into_inner()) {
            assert!(result.is_err());
        }
        let t = spawn("t", || panic!("background")).unwrap();
        assert!(t.join().is_err());
        assert!(spawn("t", || {}).unwrap().join().is_ok());
    }
}
