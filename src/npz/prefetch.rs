//! Members read ahead on other cores: when the reader knows which members
//! come next ([`NpzReader::read_ahead`], the array iterator, or its guess
//! when members are read one after another in archive order), it reads
//! their compressed bytes as it opens the current one and hands them to
//! worker threads (`pool.rs`), which inflate them whole (and, for the
//! iterator, decode them) while the caller takes the current member.
//!
//! Which members: deflated ones of 64 KiB to 64 MiB without a piece table
//! of several pieces (NumPy's members: one zlib stream each). Stored and
//! small members are read by the caller as before (the window goes on past
//! them). A member that is read on every core by itself (ndnpy's piece
//! tables, `codec/deflate/inflate.rs`/`ahead.rs`; larger NumPy members, `pinflate`) ends
//! the window, and nothing is read ahead while it is being read, so that
//! the cores are not taken twice.
//!
//! Memory: besides the member being read, at most `threads + 1` members
//! and [`AHEAD_BYTES`] of what their jobs hold: compressed bytes, and the
//! inflated bytes or (the iterator) the decoded values as Rust holds them
//! (`held.rs`: a `<U1` member holds a `String` per 4 bytes), estimated
//! before a job starts; a member that alone would pass the bound is left
//! to the caller. Besides, at most 256 MiB of buffers kept for reuse while
//! a plan is being read.

use super::pool::{JobId, Pool, Want};
use super::zip::directory::{Entry, DEFLATED};
use crate::npz::codec::deflate::inflate::{inflate_whole, MAX_RATIO};
use std::collections::VecDeque;

/// Members from this size are worth a job (below, the hand-over costs
/// more than inflating on the caller's thread).
const JOB_MIN: u64 = 64 << 10;

/// Members up to this size are inflated whole by a job, one member per
/// thread; larger ones by the caller, on every core.
pub(super) const JOB_MAX: u64 = 64 << 20;

/// At most this many bytes are held by the jobs ahead of the member being
/// read: their compressed bytes and what they give back (inflated bytes,
/// or decoded values as held in memory).
pub(super) const AHEAD_BYTES: u64 = 256 << 20;

/// At most this many threads, as for the other parallel inflaters.
const MAX_THREADS: usize = 8;

/// Jobs are never scheduled further than this many members ahead in the
/// plan (past small and stored members), so that their memory is not
/// held across a long run of other reads.
pub(super) const MAX_DISTANCE: usize = 1024;

/// A reader's plan: the members it will read, in order, and the jobs
/// started for the next ones.
pub(super) struct ReadAhead {
    pub(super) plan: Vec<usize>,
    /// The plan position of the member expected next.
    pub(super) next: usize,
    /// Plan positions before this have been considered for jobs.
    pub(super) scheduled: usize,
    /// Jobs by plan position, in plan order: position, job, bytes held.
    pub(super) jobs: VecDeque<(usize, JobId, u64)>,
    pub(super) want: Want,
    pub(super) pool: Option<Pool>,
    pub(super) threads: usize,
    /// The bound on what jobs hold ([`AHEAD_BYTES`] but in tests).
    pub(super) limit: u64,
    /// The cost of the plan position last costed and what its job gives
    /// back (a member that does not fit yet is costed once).
    pub(super) costed: Option<(usize, u64, Want)>,
    /// Whether the plan is the reader's guess (`read_ahead.rs`, `guess`)
    /// rather than the caller's: a read off it drops it.
    pub(super) guessed: bool,
    /// The member last read whole, for that guess.
    pub(super) last: Option<usize>,
    /// The guess started by the archive's first member read first, not
    /// yet followed by the next: one job ahead, not a full window, until
    /// the next member in order is read.
    pub(super) tentative: bool,
}

impl ReadAhead {
    pub(super) fn new() -> ReadAhead {
        let cores = crate::exec::cores();
        ReadAhead {
            plan: Vec::new(),
            next: 0,
            scheduled: 0,
            jobs: VecDeque::new(),
            want: Want::Bytes,
            pool: None,
            threads: cores.min(MAX_THREADS),
            limit: AHEAD_BYTES,
            costed: None,
            guessed: false,
            last: None,
            tentative: false,
        }
    }

    /// Replaces the plan (cancelling the jobs of the old one). On one core
    /// the caller runs the jobs itself, in order: members are still read
    /// whole into buffers reused from one to the next.
    pub(super) fn set(&mut self, plan: Vec<usize>, want: Want) {
        self.clear();
        self.plan = plan;
        self.want = want;
    }

    /// Drops the plan and its jobs, and the pool with its threads and the
    /// buffers kept for reuse: nothing is left to do (a new plan starts
    /// threads again as its jobs come).
    pub(super) fn clear(&mut self) {
        self.cancel_before(usize::MAX);
        self.plan = Vec::new();
        self.next = 0;
        self.scheduled = 0;
        self.costed = None;
        self.guessed = false;
        self.tentative = false;
        if let Some(pool) = self.pool.take() {
            pool.retire();
        }
    }

    /// Cancels the jobs of plan positions before `pos`.
    fn cancel_before(&mut self, pos: usize) {
        while self.jobs.front().is_some_and(|j| j.0 < pos) {
            let (_, id, _) = self.jobs.pop_front().expect("checked");
            if let Some(pool) = &self.pool {
                pool.cancel(id);
            }
        }
    }

    /// Moves the plan to member `index`, being opened: the plan position
    /// it has (the next one, or one a little further, skipping members the
    /// caller did not read), or `None` if it is not in the plan's way.
    pub(super) fn advance(&mut self, index: usize) -> Option<usize> {
        let end = self.plan.len().min(self.next.saturating_add(64));
        let pos = (self.next..end).find(|&p| self.plan[p] == index)?;
        // The member after the one before: a loop, as guessed.
        self.tentative &= pos != self.next;
        self.cancel_before(pos);
        self.next = pos + 1;
        Some(pos)
    }

    /// The job of plan position `pos`, taken out of the plan.
    pub(super) fn job_at(&mut self, pos: usize) -> Option<JobId> {
        if self.jobs.front().is_some_and(|j| j.0 == pos) {
            return self.jobs.pop_front().map(|j| j.1);
        }
        None
    }

    /// How many jobs may run ahead of the member being read: one for a
    /// tentative guess, else one per thread and one more.
    pub(super) fn depth(&self) -> usize {
        match self.tentative {
            true => 1,
            false => self.threads + 1,
        }
    }

    /// Whether the plan is used up: then buffers kept for it are freed.
    pub(super) fn finished(&self) -> bool {
        self.next >= self.plan.len() && self.jobs.is_empty()
    }
}

/// What the read-ahead does with a member.
pub(super) enum Kind {
    /// Nothing: read by the caller as before; the window goes on.
    Skip,
    /// A job (if what it holds fits, `NpzReader::job_cost`).
    Job,
    /// Read on every core by itself: the window ends before it.
    Alone,
}

pub(super) fn kind(entry: &Entry) -> Kind {
    if entry.method != DEFLATED || entry.check_supported().is_err() {
        return Kind::Skip;
    }
    let pieces = entry
        .pieces
        .as_ref()
        .is_some_and(|p| p.lengths.len() > 1 && p.fits(entry.size, entry.compressed_size));
    if pieces || entry.size > JOB_MAX {
        return Kind::Alone;
    }
    // Not more than deflate can give from the bytes present (the
    // directory checked that they lie inside the archive).
    if entry.size < JOB_MIN || !inflate_whole(entry.size, entry.compressed_size, JOB_MAX) {
        return Kind::Skip;
    }
    debug_assert!(entry.size <= entry.compressed_size.saturating_mul(MAX_RATIO) + (1 << 10));
    Kind::Job
}
