//! [`NpzReader::read_ahead`] and the array iterator's plan: the reader's
//! side of the read-ahead (`prefetch.rs` holds its state, `pool.rs` its
//! threads). Here, not in `prefetch.rs`, so that the reader's fields can
//! hold that state without a circle of files.

use super::compressed::Compressed;
use super::held;
use super::pool::{Output, Pool, Want, Work};
use super::prefetch::{kind, Kind, MAX_DISTANCE};
use super::reader::NpzReader;
use crate::error::Result;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

impl<R: Read + Seek> NpzReader<R> {
    /// Announces the members about to be read, in order (names as
    /// [`NpzReader::read`] takes them), so that while the caller reads one,
    /// the next are inflated on the other cores.
    ///
    /// Each read of a planned member ([`NpzReader::read`],
    /// [`NpzReader::read_any`], [`NpzReader::member_reader`],
    /// [`NpzReader::raw`], ...) moves the plan on: the compressed bytes of
    /// the next deflated members are read then, on the calling thread, and
    /// inflated whole (with libdeflate, CRC-32 checked) by worker threads;
    /// the planned member's own read then takes its bytes from memory. A
    /// member read out of order skips the plan to it (the jobs of the
    /// members skipped are dropped); a member not in the plan leaves it as
    /// it is. A new call replaces the plan; an empty list ends it.
    ///
    /// Memory: besides the member being read, at most `threads + 1`
    /// members (each at most 64 MiB) and 256 MiB of what they hold are
    /// held ahead: their compressed bytes and their decompressed bytes or,
    /// for [`NpzReader::arrays`], their values as they are held in memory
    /// (strings as `String`s, byte strings as `Vec<u8>`s; estimated from
    /// each member's header before it is decoded; members of Python objects
    /// or of values of zero size are decoded by the caller, not ahead; a
    /// member that alone would hold more than the bound is not read ahead).
    /// At most 256 MiB of buffers are kept for reuse until the plan ends. Stored members,
    /// members under 64 KiB, and members read on every core by themselves
    /// (ndnpy's piece tables, NumPy members over 64 MiB) are not read ahead;
    /// nothing is read ahead while one of the latter is being read. On a
    /// single core the caller inflates the planned members itself, in
    /// order, into buffers reused from one member to the next.
    /// [`NpzReader::arrays`] plans every member itself, and so does a plain
    /// loop: when no plan is set, a member read whole (`read`, `read_any`,
    /// `raw`, …) right after the one before it in archive order starts a
    /// plan of the members after it, within the same bounds, as an
    /// operating system reads a file ahead once reads follow each other
    /// (the archive's first member, read before any other, starts one with
    /// a single member ahead until the next is read); a read elsewhere
    /// drops that plan and its jobs.
    ///
    /// Errors: [`crate::Error::MemberNotFound`] for a name that is not a
    /// member (the plan is then left as it was).
    ///
    /// ```
    /// use ndarray::Array1;
    /// use ndnpy::{NpzReader, NpzWriter};
    /// use std::io::Cursor;
    ///
    /// let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    /// for k in 0..4 {
    ///     w.add(&format!("a{k}"), &Array1::from_elem(100_000, k as f64))?;
    /// }
    /// let mut npz = NpzReader::new(w.finish_into_inner()?)?;
    /// let names = npz.names();
    /// npz.read_ahead(&names)?;
    /// for name in &names {
    ///     let a: Array1<f64> = npz.read(name)?;
    ///     assert_eq!(a.len(), 100_000);
    /// }
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn read_ahead<I, S>(&mut self, names: I) -> Result<()>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let plan = names
            .into_iter()
            .map(|n| self.index(n.as_ref()))
            .collect::<Result<Vec<usize>>>()?;
        self.ahead.set(plan, Want::Bytes);
        Ok(())
    }

    /// For tests of the read-ahead's bounds, not a public API: the threads
    /// it uses (more than the machine's cores, to force them) and the
    /// bytes it may hold ahead (256 MiB by default). Takes effect with the
    /// next plan.
    #[doc(hidden)]
    pub fn __read_ahead_limits(&mut self, threads: usize, bytes: u64) {
        self.ahead.clear();
        self.ahead.threads = threads.max(1);
        self.ahead.limit = bytes;
    }

    /// Plans every member in archive order (the one NumPy reads for each
    /// name), decoded on the workers with `read_any`: the array iterator.
    pub(super) fn plan_arrays(&mut self) {
        let plan = self
            .members
            .iter()
            .filter_map(|m| self.index(super::zip::names::key_of(m)).ok())
            .collect();
        let options = self.options;
        self.ahead.set(plan, Want::Any(options));
    }

    /// Ends the plan.
    pub(super) fn end_plan(&mut self) {
        self.ahead.clear();
    }

    /// Called as member `index` is opened to be read whole: moves the plan
    /// on, starts jobs for the next members, and gives this member's job
    /// result if it had one (its own errors already name the member).
    /// `guess`: a member read with no plan may start one
    /// ([`NpzReader::guess`]), whose jobs give back what `guess` says.
    pub(super) fn planned(&mut self, index: usize, guess: Option<Want>) -> Option<Result<Output>> {
        let pos = match self.ahead.advance(index) {
            Some(pos) => pos,
            None => self.guess(index, guess?)?,
        };
        self.ahead.last = Some(index);
        let mut job = self.ahead.job_at(pos);
        let kind = kind(&self.directory.entries[index]);
        if !matches!(kind, Kind::Alone) {
            self.top_up();
        }
        if let (None, Kind::Job) = (job, kind) {
            // Not read ahead (the plan's first member, or one after a
            // member read alone): a job all the same, run here, so that it
            // too is inflated into reused memory while the next ones run.
            // The member being read: not counted against the bound.
            let want = self.ahead.want;
            if let Some(work) = self.read_compressed(index, want) {
                let ahead = &mut self.ahead;
                let pool = ahead.pool.get_or_insert_with(|| Pool::new(ahead.threads));
                job = Some(pool.submit(work));
            }
        }
        let result = job.map(|id| self.ahead.pool.as_ref().expect("jobs have a pool").take(id));
        if self.ahead.finished() {
            self.ahead.clear();
        }
        result
    }

    /// Member `index` is read whole and no plan has it. As an operating
    /// system reads a file ahead once reads follow each other, a member
    /// read right after the one before it in archive order (a plain loop
    /// over [`NpzReader::names`]) starts a plan of the members after it,
    /// as the array iterator's, within the same bounds; a read elsewhere
    /// drops that plan, and a plan the caller made is left alone. And as
    /// a system reads a little ahead of a file's first read, the archive's
    /// first member read before any other starts the plan too, one member
    /// ahead only until the next one in order is read (a plain loop's
    /// first member then overlaps the next, as the array iterator's does;
    /// a reader that goes elsewhere wastes one member's inflating on
    /// another core). Gives the member's plan position.
    fn guess(&mut self, index: usize, want: Want) -> Option<usize> {
        let first = index == 0 && self.ahead.last.is_none();
        let follows = self.ahead.last.is_some_and(|last| last + 1 == index);
        self.ahead.last = Some(index);
        if self.ahead.guessed {
            self.ahead.clear();
        }
        if !(first || follows) || !self.ahead.plan.is_empty() {
            return None;
        }
        // The member NumPy reads for each name (the last of a repeated
        // one); never more than the scheduler looks at, so that guessing
        // again and again costs in proportion to the members read.
        let end = self.members.len().min(index.saturating_add(MAX_DISTANCE));
        let plan: Vec<usize> = (index..end)
            .filter(|&i| self.index(super::zip::names::key_of(&self.members[i])).ok() == Some(i))
            .collect();
        if plan.len() < 2 {
            return None;
        }
        self.ahead.set(plan, want);
        self.ahead.guessed = true;
        let pos = self.ahead.advance(index);
        self.ahead.tentative = first;
        pos
    }

    /// Gives a buffer of a planned member's bytes back for reuse.
    pub(super) fn recycle(&self, buf: Vec<u8>) {
        if let Some(pool) = &self.ahead.pool {
            pool.recycle(buf);
        }
    }

    /// Starts jobs for the planned members after the one being opened,
    /// within the bounds: what the jobs hold (their compressed bytes and
    /// what they give back, [`NpzReader::job_cost`]) stays within the
    /// limit, and a member that alone would pass it is left to the caller.
    fn top_up(&mut self) {
        let mut count = self.ahead.jobs.len();
        let mut bytes: u64 = self.ahead.jobs.iter().map(|j| j.2).sum();
        let end = self.ahead.plan.len().min(self.ahead.next + MAX_DISTANCE);
        self.ahead.scheduled = self.ahead.scheduled.max(self.ahead.next);
        while self.ahead.scheduled < end {
            let pos = self.ahead.scheduled;
            let index = self.ahead.plan[pos];
            match kind(&self.directory.entries[index]) {
                Kind::Skip => {
                    self.ahead.scheduled += 1;
                    continue;
                }
                Kind::Alone => break,
                Kind::Job => {}
            }
            if count >= self.ahead.depth() {
                break;
            }
            let (cost, want) = self.job_cost(pos, index);
            if cost > self.ahead.limit {
                // Read by the caller when its turn comes, as the member
                // being read.
                self.ahead.scheduled += 1;
                continue;
            }
            if bytes + cost > self.ahead.limit {
                break;
            }
            self.ahead.scheduled += 1;
            if let Some(work) = self.read_compressed(index, want) {
                let ahead = &mut self.ahead;
                let pool = ahead.pool.get_or_insert_with(|| Pool::new(ahead.threads));
                let id = pool.submit(work);
                ahead.jobs.push_back((pos, id, cost));
                count += 1;
                bytes += cost;
            }
        }
    }

    /// What a job for member `index` (at plan position `pos`) holds at
    /// most, and what it gives back. Bytes: the member's bytes and its
    /// compressed bytes. Arrays: the compressed bytes and the larger of
    /// the member's bytes and its values as they are held in memory
    /// (`held.rs`, estimated from the header, which is inflated from the
    /// member's first bytes); a member whose values that does not bound
    /// (Python objects, values of zero size, a header not found) is given
    /// back as bytes and decoded by the caller when it takes it.
    fn job_cost(&mut self, pos: usize, index: usize) -> (u64, Want) {
        if let Some((at, cost, want)) = self.ahead.costed {
            if at == pos {
                return (cost, want);
            }
        }
        let entry = &self.directory.entries[index];
        let (size, compressed) = (entry.size, entry.compressed_size);
        let bytes = (size + compressed, Want::Bytes);
        let (cost, want) = match self.ahead.want {
            Want::Bytes => bytes,
            Want::Any(options) => match self
                .peek(index)
                .and_then(|prefix| held::peek_header(&prefix, &options))
                .and_then(|header| held::decoded_bytes(&header))
            {
                Some(held) => (
                    compressed.saturating_add(held.max(size)),
                    Want::Any(options),
                ),
                None => bytes,
            },
        };
        self.ahead.costed = Some((pos, cost, want));
        (cost, want)
    }

    /// The first compressed bytes of member `index` (up to
    /// [`held::PEEK_IN`]), `None` if they cannot be read.
    fn peek(&mut self, index: usize) -> Option<Vec<u8>> {
        let entry = &self.directory.entries[index];
        let start = entry.data_start(&mut self.input, self.archive_len).ok()?;
        let len = entry.compressed_size.min(held::PEEK_IN);
        let mut buf = vec![0u8; len as usize];
        match &self.file {
            Some(file) => {
                let mut done = 0;
                while done < buf.len() {
                    match crate::io::fs::read_at(file, &mut buf[done..], start + done as u64) {
                        Ok(0) => break,
                        Ok(n) => done += n.min(buf.len() - done),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => return None,
                    }
                }
                buf.truncate(done);
            }
            None => {
                self.input.seek(SeekFrom::Start(start)).ok()?;
                buf.clear();
                (&mut self.input).take(len).read_to_end(&mut buf).ok()?;
            }
        }
        Some(buf)
    }

    /// The job for member `index`: its compressed bytes, read now. `None`
    /// if they cannot be had (the member's own read then meets and reports
    /// the problem).
    fn read_compressed(&mut self, index: usize, want: Want) -> Option<Work> {
        let entry = &self.directory.entries[index];
        let start = entry.data_start(&mut self.input, self.archive_len).ok()?;
        let len = entry.compressed_size;
        let compressed = match &self.file {
            // The job reads them itself, when it runs.
            Some(file) => Compressed::File {
                file: Arc::clone(file),
                start,
                len,
            },
            None => {
                self.input.seek(SeekFrom::Start(start)).ok()?;
                let threads = self.ahead.threads;
                let pool = self.ahead.pool.get_or_insert_with(|| Pool::new(threads));
                // Inside the archive (`data_start` checked), so no larger
                // than it.
                let mut buf = pool.buffer(len as usize).ok()?;
                let got = (&mut self.input).take(len).read_to_end(&mut buf);
                if got.is_err() || buf.len() as u64 != len {
                    pool.recycle(buf);
                    return None;
                }
                Compressed::Bytes(buf)
            }
        };
        Some(Work {
            name: entry.key().to_owned(),
            compressed,
            size: entry.size as usize,
            crc: entry.crc,
            want,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::npz::prefetch::AHEAD_BYTES;
    use crate::WriteNpy;
    use std::io::{Cursor, Write};

    /// A NumPy-style archive (single streams) of members of `lengths`
    /// `u32`s, and then, if `pieces`, one of ndnpy's members with a piece
    /// table in the middle.
    fn archive(lengths: &[usize], pieces_at: Option<usize>) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let deflated = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (k, &n) in lengths.iter().enumerate() {
            let a = ndarray::Array1::from_iter((0..n as u32).map(|i| i.wrapping_mul(2654435761)));
            zip.start_file(format!("m{k}.npy"), deflated).unwrap();
            zip.write_all(&a.to_npy_bytes().unwrap()).unwrap();
        }
        let bytes = zip.finish().unwrap().into_inner();
        let Some(at) = pieces_at else {
            return bytes;
        };
        // Rewritten by ndnpy with one large member in between.
        let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
        let mut w =
            crate::NpzWriter::new(Cursor::new(Vec::new())).codec(crate::npz::Codec::deflate());
        for (k, name) in npz.names().into_iter().enumerate() {
            if k == at {
                w.add("big", &ndarray::Array1::<u64>::from_iter(0..600_000))
                    .unwrap();
            }
            let a = npz.read::<u32, ndarray::Ix1>(&name).unwrap();
            // ndnpy writes members under 1 MiB as one piece: single
            // streams, as NumPy's.
            w.add(&name, &a).unwrap();
        }
        w.finish_into_inner().unwrap().into_inner()
    }

    fn reader(bytes: Vec<u8>, threads: usize) -> NpzReader<Cursor<Vec<u8>>> {
        let mut npz = NpzReader::new(Cursor::new(bytes)).unwrap();
        npz.ahead.threads = threads;
        npz
    }

    fn held(npz: &NpzReader<Cursor<Vec<u8>>>) -> (usize, u64) {
        let jobs = &npz.ahead.jobs;
        (jobs.len(), jobs.iter().map(|j| j.2).sum())
    }

    #[test]
    fn jobs_stay_within_the_count_and_start_after_the_current_member() {
        let lengths = [50_000; 12];
        let mut npz = reader(archive(&lengths, None), 3);
        let names = npz.names();
        npz.read_ahead(&names).unwrap();
        assert_eq!(held(&npz).0, 0, "nothing before the first read");
        for (k, name) in names.iter().enumerate() {
            npz.read_any(name).unwrap();
            let (count, bytes) = held(&npz);
            assert!(count <= 4, "{count} jobs after m{k}");
            assert!(bytes <= AHEAD_BYTES);
            assert_eq!(count, 4.min(names.len() - k - 1), "after m{k}");
            assert!(npz.ahead.jobs.iter().all(|j| j.0 > k));
        }
        assert!(npz.ahead.plan.is_empty(), "a used-up plan is dropped");
        assert!(npz.ahead.pool.is_none(), "and its threads with it");
        // One core: two members ahead, inflated by the caller.
        let mut npz = reader(archive(&lengths, None), 1);
        npz.read_ahead(&names).unwrap();
        npz.read_any("m0").unwrap();
        assert_eq!(held(&npz).0, 2);
        assert_eq!(npz.ahead.pool.as_ref().unwrap().workers.len(), 0);
    }

    #[test]
    fn a_member_read_on_every_core_ends_the_window() {
        let lengths = [40_000; 6];
        let mut npz = reader(archive(&lengths, Some(3)), 2);
        let names = npz.names();
        assert_eq!(names[3], "big");
        npz.read_ahead(&names).unwrap();
        npz.read_any("m0").unwrap();
        // m1 and m2, not past "big".
        assert_eq!(
            npz.ahead.jobs.iter().map(|j| j.0).collect::<Vec<_>>(),
            [1, 2]
        );
        npz.read_any("m1").unwrap();
        npz.read_any("m2").unwrap();
        assert_eq!(held(&npz).0, 0);
        // Nothing is started while "big" is read; the next read goes on.
        npz.read_any("big").unwrap();
        assert_eq!(held(&npz).0, 0);
        npz.read_any("m3").unwrap();
        assert_eq!(
            npz.ahead.jobs.iter().map(|j| j.0).collect::<Vec<_>>(),
            [5, 6]
        );
    }

    #[test]
    fn the_bytes_bound_holds_for_large_members() {
        // Members of 24 MiB (48 MiB with their compressed bytes, which
        // random-looking words barely shrink): 256 MiB hold five.
        let lengths = [6 << 20; 8];
        let mut npz = reader(archive(&lengths, None), 8);
        let names = npz.names();
        npz.read_ahead(&names).unwrap();
        npz.read_any("m0").unwrap();
        let (count, bytes) = held(&npz);
        assert!(bytes <= AHEAD_BYTES, "{bytes}");
        assert!((4..=6).contains(&count), "{count}");
    }

    #[test]
    fn the_first_members_guess_is_dropped_by_a_read_elsewhere() {
        let lengths = [50_000; 6];
        let bytes = archive(&lengths, None);
        let mut npz = reader(bytes.clone(), 2);
        let mut plain = NpzReader::new(Cursor::new(bytes)).unwrap();
        npz.read_any("m0").unwrap();
        assert_eq!(held(&npz).0, 1);
        // Back to the first member: not the next one, so no loop.
        npz.read_any("m0").unwrap();
        assert!(npz.ahead.plan.is_empty());
        assert_eq!(held(&npz).0, 0);
        // A member not first in the archive, read first, starts nothing;
        // values as read with no plan.
        let mut other = reader(archive(&lengths, None), 2);
        let got = other.read::<u32, ndarray::Ix1>("m3").unwrap();
        assert!(other.ahead.plan.is_empty());
        assert_eq!(got, plain.read::<u32, ndarray::Ix1>("m3").unwrap());
    }

    #[test]
    fn a_plain_loop_in_archive_order_reads_ahead_and_a_jump_stops_it() {
        let lengths = [50_000; 8];
        let bytes = archive(&lengths, None);
        let mut npz = reader(bytes.clone(), 2);
        let mut plain = NpzReader::new(Cursor::new(bytes)).unwrap();
        let names = npz.names();
        // The first member read first: one member ahead, not a window.
        npz.read_any("m0").unwrap();
        assert!(npz.ahead.guessed && npz.ahead.tentative);
        assert_eq!(
            npz.ahead
                .jobs
                .iter()
                .map(|j| npz.ahead.plan[j.0])
                .collect::<Vec<_>>(),
            [1]
        );
        // The next in archive order: the members after it are.
        npz.read_any("m1").unwrap();
        assert!(npz.ahead.guessed && !npz.ahead.tentative);
        assert_eq!(
            npz.ahead
                .jobs
                .iter()
                .map(|j| npz.ahead.plan[j.0])
                .collect::<Vec<_>>(),
            [2, 3, 4]
        );
        // Same values as a reader with no plan, member by member.
        for name in &names[2..4] {
            let got = npz.read::<u32, ndarray::Ix1>(name).unwrap();
            let want = plain.read::<u32, ndarray::Ix1>(name).unwrap();
            assert_eq!(got, want, "{name}");
        }
        // A read elsewhere drops the guess and its jobs.
        npz.read_any("m0").unwrap();
        assert!(npz.ahead.plan.is_empty());
        assert_eq!(held(&npz).0, 0);
        assert!(npz.ahead.pool.is_none());
        // Only the first read of the first member is a guess.
        npz.read_any("m0").unwrap();
        assert!(npz.ahead.plan.is_empty());
        // A plan the caller made is not replaced by a guess.
        npz.read_ahead(["m7", "m6"]).unwrap();
        npz.read_any("m1").unwrap();
        npz.read_any("m2").unwrap();
        assert!(!npz.ahead.guessed);
        assert_eq!(npz.ahead.plan, [7, 6]);
    }
}
