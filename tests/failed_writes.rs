//! No data lost on failed writes.
//!
//! - `write_npy_to` into a writer that fails partway reports the writer's
//!   error, whatever the layout and wherever the failure falls;
//! - `write_npy(path)` into a missing folder, under a regular file, onto a
//!   directory, or onto a file system that refuses to grow the file (a file
//!   size limit, `RLIMIT_FSIZE`, set in a child process: tests run as root,
//!   where permission bits stop nothing) reports the error, leaves an
//!   existing target byte-for-byte unchanged and leaves no temporary file;
//! - `NpzWriter`: a failed `add` makes `finish` fail with
//!   `IncompleteArchive`, an unfinished or failed archive never replaces the
//!   target, and a failing underlying writer is reported.

use ndarray::{s, Array1, Array2, Array3, ArrayD};
use ndnpy::{Error, NpzReader, NpzWriter, ReadNpy, WriteNpy};
use std::io::{self, Cursor, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Accepts `budget` bytes, then fails every write (and flush).
struct FailAfter {
    written: Vec<u8>,
    budget: usize,
}

impl FailAfter {
    fn new(budget: usize) -> Self {
        FailAfter {
            written: Vec::new(),
            budget,
        }
    }
}

fn disk_full() -> io::Error {
    io::Error::new(io::ErrorKind::StorageFull, "simulated: no space left")
}

impl Write for FailAfter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.budget - self.written.len();
        if room == 0 {
            return Err(disk_full());
        }
        let n = buf.len().min(room);
        self.written.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.written.len() >= self.budget {
            Err(disk_full())
        } else {
            Ok(())
        }
    }
}

/// `FailAfter` that can also seek (for `NpzWriter`).
struct SeekFailAfter {
    inner: Cursor<Vec<u8>>,
    budget: u64,
}

impl Write for SeekFailAfter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let pos = self.inner.position();
        if pos >= self.budget {
            return Err(disk_full());
        }
        let n = buf.len().min((self.budget - pos) as usize);
        self.inner.write(&buf[..n])
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for SeekFailAfter {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

fn is_disk_full(e: &Error) -> bool {
    e.io_error()
        .is_some_and(|io| io.kind() == io::ErrorKind::StorageFull)
}

/// Writes one array into a test writer.
type WriteFn<'a> = Box<dyn Fn(&mut FailAfter) -> ndnpy::Result<()> + 'a>;

#[test]
fn writer_failing_partway_reports_the_error() {
    let c = Array2::<f64>::from_shape_fn((300, 500), |(i, j)| (i * 500 + j) as f64);
    let f = c.t().to_owned(); // F-contiguous after the transpose
    let f = f.t();
    let strided = c.slice(s![..;2, ..;-3]);
    let sources: Vec<(&str, Vec<u8>, WriteFn<'_>)> = vec![
        (
            "C",
            c.to_npy_bytes().unwrap(),
            Box::new(|w| c.write_npy_to(w)),
        ),
        (
            "F",
            f.to_npy_bytes().unwrap(),
            Box::new(|w| f.write_npy_to(w)),
        ),
        (
            "strided",
            strided.to_npy_bytes().unwrap(),
            Box::new(|w| strided.write_npy_to(w)),
        ),
    ];
    for (name, full, write) in &sources {
        // Fail in the magic, the header, the first data byte, mid-data, at
        // the last byte.
        for budget in [0, 3, 100, 128, 129, full.len() / 2, full.len() - 1] {
            let mut w = FailAfter::new(budget);
            let err = write(&mut w).unwrap_err();
            assert!(is_disk_full(&err), "{name} @ {budget}: {err:?}");
            assert_eq!(w.written.len(), budget, "{name}");
            assert_eq!(
                &w.written[..],
                &full[..budget],
                "{name}: a prefix of the file"
            );
        }
        // Exactly enough room: success, and the same bytes.
        let mut w = FailAfter::new(full.len() + 1);
        write(&mut w).unwrap();
        assert_eq!(&w.written, full, "{name}");
    }
}

/// A writer that reports success while writing nothing.
struct Zero;

impl Write for Zero {
    fn write(&mut self, _buf: &[u8]) -> io::Result<usize> {
        Ok(0)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn writer_accepting_nothing_is_an_error() {
    let err = Array1::<u8>::zeros(10).write_npy_to(Zero).unwrap_err();
    assert!(err
        .io_error()
        .is_some_and(|e| e.kind() == io::ErrorKind::WriteZero));
}

// ---------------------------------------------------------------- paths

/// Files in `dir` (names), sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

const OLD: &[u8] = b"the old contents, which must survive";

#[test]
fn missing_folder() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("no/such/folder/a.npy");
    let err = Array1::<f64>::zeros(4).write_npy(&target).unwrap_err();
    assert!(
        err.io_error()
            .is_some_and(|e| e.kind() == io::ErrorKind::NotFound),
        "{err:?}"
    );
    assert!(listing(dir.path()).is_empty());

    let err = NpzWriter::create(&target).unwrap_err();
    assert!(
        err.io_error()
            .is_some_and(|e| e.kind() == io::ErrorKind::NotFound),
        "{err:?}"
    );
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn parent_is_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, OLD).unwrap();
    let target = file.join("a.npy");
    let err = Array1::<f64>::zeros(4).write_npy(&target).unwrap_err();
    assert!(
        err.io_error()
            .is_some_and(|e| e.kind() == io::ErrorKind::NotADirectory),
        "{err:?}"
    );
    assert!(NpzWriter::create(&target).is_err());
    assert_eq!(std::fs::read(&file).unwrap(), OLD);
    assert_eq!(listing(dir.path()), ["file"]);
}

#[test]
fn target_is_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a.npy");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("inside"), OLD).unwrap();
    let err = Array1::<f64>::zeros(4).write_npy(&target).unwrap_err();
    assert!(err.io_error().is_some(), "{err:?}");
    assert_eq!(std::fs::read(target.join("inside")).unwrap(), OLD);
    assert_eq!(listing(dir.path()), ["a.npy"], "temporary file removed");

    // Refused when created (a directory cannot be opened for writing), as
    // `np.savez`'s `open` raises `IsADirectoryError`.
    assert!(NpzWriter::create(&target).unwrap_err().io_error().is_some());
    assert_eq!(std::fs::read(target.join("inside")).unwrap(), OLD);
    assert_eq!(listing(dir.path()), ["a.npy"], "temporary file removed");
}

#[test]
fn successful_write_replaces_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a.npy");
    std::fs::write(&target, OLD).unwrap();
    let a = Array3::<i32>::from_shape_fn((3, 4, 5), |(i, j, k)| (i * 100 + j * 10 + k) as i32);
    a.write_npy(&target).unwrap();
    assert_eq!(Array3::<i32>::read_npy(&target).unwrap(), a);
    assert_eq!(listing(dir.path()), ["a.npy"]);
}

// ---------------------------------------------------------------- file size limit (child process)

const CHILD_ENV: &str = "NDNPY_FAILED_WRITES_CHILD";

/// Runs test `name` of this binary in a child process whose files may not
/// grow beyond ~64 KiB (`ulimit -f`), with `SIGXFSZ` ignored so that the
/// write fails with `EFBIG` instead of killing the process.
fn run_limited_child(name: &str, dir: &Path) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 128 && exec \"$0\" --exact \"$1\" --nocapture --test-threads=1")
        .arg(exe)
        .arg(name)
        .env(CHILD_ENV, dir)
        .output()
        .expect("run sh");
    assert!(
        out.status.success(),
        "child test {name} failed: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// In the child: the folder to write into, or `None` in the parent run.
fn child_dir() -> Option<PathBuf> {
    std::env::var_os(CHILD_ENV).map(PathBuf::from)
}

/// 8 MB of data: far beyond the child's file size limit.
fn big() -> Array2<f64> {
    Array2::from_shape_fn((1000, 1000), |(i, j)| (i + j) as f64)
}

#[test]
fn write_npy_failing_on_a_full_disk_keeps_the_old_file() {
    if let Some(dir) = child_dir() {
        let target = dir.join("a.npy");
        for result in [
            big().write_npy(&target),
            big().t().write_npy(&target),
            big().slice(s![..;-1, ..;3]).write_npy(&target),
        ] {
            let err = result.unwrap_err();
            assert!(
                err.io_error().is_some_and(|e| e.raw_os_error() == Some(27)),
                "EFBIG: {err:?}"
            );
        }
        // Small writes still succeed under the limit.
        let small = dir.join("small.npy");
        Array1::<u8>::zeros(10).write_npy(&small).unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a.npy");
    std::fs::write(&target, OLD).unwrap();
    run_limited_child(
        "write_npy_failing_on_a_full_disk_keeps_the_old_file",
        dir.path(),
    );
    assert_eq!(std::fs::read(&target).unwrap(), OLD, "old file unchanged");
    assert_eq!(
        listing(dir.path()),
        ["a.npy", "small.npy"],
        "no temporary file left"
    );
}

#[test]
fn npz_failing_on_a_full_disk_keeps_the_old_file() {
    if let Some(dir) = child_dir() {
        let target = dir.join("a.npz");
        for compressed in [false, true] {
            let mut npz = NpzWriter::create(&target).unwrap().codec(if compressed {
                ndnpy::npz::Codec::deflate()
            } else {
                ndnpy::npz::Codec::Stored
            });
            npz.add("small", &Array1::<u8>::zeros(10)).unwrap();
            // Random-looking data, so that deflate cannot shrink it under
            // the limit either.
            let noise = ArrayD::from_shape_fn(vec![1000, 1000], |d| {
                ((d[0] * 7919 + d[1] * 104729) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            });
            let err = npz.add("big", &noise).unwrap_err();
            assert!(
                err.io_error().is_some_and(|e| e.raw_os_error() == Some(27)),
                "EFBIG: {err:?}"
            );
            // The failure poisons the writer: no further members, and
            // finish reports it rather than passing off a partial archive.
            let err = npz.add("after", &Array1::<u8>::zeros(1)).unwrap_err();
            assert!(
                matches!(&err, Error::Write(ndnpy::error::WriteError::IncompleteArchive { name }) if name == "big"),
                "{err:?}"
            );
            let err = npz.finish().unwrap_err();
            assert!(
                matches!(&err, Error::Write(ndnpy::error::WriteError::IncompleteArchive { name }) if name == "big"),
                "{err:?}"
            );
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a.npz");
    std::fs::write(&target, OLD).unwrap();
    run_limited_child("npz_failing_on_a_full_disk_keeps_the_old_file", dir.path());
    assert_eq!(
        std::fs::read(&target).unwrap(),
        OLD,
        "old archive unchanged"
    );
    assert_eq!(listing(dir.path()), ["a.npz"], "no temporary file left");
}

// ---------------------------------------------------------------- npz without a child

#[test]
fn npz_finish_reports_an_earlier_failure_and_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a.npz");
    std::fs::write(&target, OLD).unwrap();

    let mut npz = NpzWriter::create(&target).unwrap();
    npz.add("x", &Array1::<f64>::zeros(5)).unwrap();
    let err = npz.add("x", &Array1::<f64>::ones(5)).unwrap_err();
    assert!(
        matches!(&err, Error::Write(ndnpy::error::WriteError::DuplicateMember { name }) if name == "x"),
        "{err:?}"
    );
    let err = npz.finish().unwrap_err();
    assert!(
        matches!(&err, Error::Write(ndnpy::error::WriteError::IncompleteArchive { name }) if name == "x"),
        "{err:?}"
    );
    assert_eq!(std::fs::read(&target).unwrap(), OLD);
    assert_eq!(listing(dir.path()), ["a.npz"]);
}

#[test]
fn npz_dropped_unfinished_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a.npz");
    std::fs::write(&target, OLD).unwrap();
    {
        let mut npz = NpzWriter::create(&target)
            .unwrap()
            .codec(ndnpy::npz::Codec::deflate());
        npz.add("x", &Array1::<f64>::zeros(5)).unwrap();
        // Dropped without finish (for example by an early `?` return).
    }
    assert_eq!(std::fs::read(&target).unwrap(), OLD);
    assert_eq!(listing(dir.path()), ["a.npz"]);

    // The same archive, finished, replaces the target and reads back.
    let mut npz = NpzWriter::create(&target)
        .unwrap()
        .codec(ndnpy::npz::Codec::deflate());
    npz.add("x", &Array1::<f64>::zeros(5)).unwrap();
    npz.finish().unwrap();
    let mut back = NpzReader::open(&target).unwrap();
    assert_eq!(
        back.read::<f64, ndarray::Ix1>("x").unwrap(),
        Array1::<f64>::zeros(5)
    );
    assert_eq!(listing(dir.path()), ["a.npz"]);
}

#[test]
fn npz_over_a_failing_writer() {
    let a = Array2::<f32>::from_shape_fn((100, 100), |(i, j)| (i * j) as f32);
    for compressed in [false, true] {
        for budget in [0u64, 10, 200, 5_000, 30_000] {
            let w = SeekFailAfter {
                inner: Cursor::new(Vec::new()),
                budget,
            };
            let mut npz = NpzWriter::new(w).codec(if compressed {
                ndnpy::npz::Codec::deflate()
            } else {
                ndnpy::npz::Codec::Stored
            });
            let added = npz.add("a", &a).and_then(|()| npz.add("b", &a.t()));
            let finished = npz.finish();
            match added {
                Err(e) => {
                    assert!(is_disk_full(&e), "{compressed} @ {budget}: add: {e:?}");
                    assert!(
                        matches!(
                            finished,
                            Err(Error::Write(
                                ndnpy::error::WriteError::IncompleteArchive { .. }
                            ))
                        ),
                        "{compressed} @ {budget}: finish: {finished:?}"
                    );
                }
                // Buffered (compressed) data may fail only at finish.
                Ok(()) => assert!(
                    finished.is_err(),
                    "{compressed} @ {budget}: an archive that did not fit was finished"
                ),
            }
        }
    }
}

/// 24 MiB: large enough that an overwrite could keep a spare.
fn large(k: f64) -> Array1<f64> {
    Array1::from_elem(3 << 20, k)
}

/// Issue 37 item 9: with the default options, overwrites of a large file,
/// and one killed part way (`SIGXFSZ` from `ulimit -f`: the process dies
/// inside the write, nothing of ours cleans up), leave only the target.
#[test]
fn killed_default_overwrites_leave_only_the_target() {
    if let Some(dir) = std::env::var_os("NDNPY_KILLED_OVERWRITE") {
        let _ = large(3.0).write_npy(Path::new(&dir).join("a.npy"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a.npy");
    large(1.0).write_npy(&target).unwrap();
    large(2.0).write_npy(&target).unwrap();
    assert_eq!(listing(dir.path()), ["a.npy"], "no spare by default");
    let status = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 128 && exec \"$0\" --exact \"$1\" --test-threads=1")
        .arg(std::env::current_exe().unwrap())
        .arg("killed_default_overwrites_leave_only_the_target")
        .env("NDNPY_KILLED_OVERWRITE", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the child was to be killed part way");
    assert_eq!(listing(dir.path()), ["a.npy"], "nothing left beside it");
    assert_eq!(Array1::<f64>::read_npy(&target).unwrap(), large(2.0));
}

/// A streamed path write (`NpyWriter::create`: length unknown, so the
/// temporary file grows as rows come) killed with `SIGKILL` between two
/// blocks leaves only the target.
#[test]
fn killed_streamed_write_leaves_only_the_target() {
    use std::io::Read as _;
    if let Some(dir) = std::env::var_os("NDNPY_KILLED_STREAM") {
        let path = Path::new(&dir).join("a.npy");
        let mut w = ndnpy::NpyWriter::<f64>::create(&path, &[], ndnpy::Order::C).unwrap();
        w.write(&large(3.0)).unwrap();
        println!("written");
        std::thread::sleep(std::time::Duration::from_secs(600));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a.npy");
    large(1.0).write_npy(&target).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "killed_streamed_write_leaves_only_the_target",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("NDNPY_KILLED_STREAM", dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Killed once it has written a block (and is sleeping before the next).
    let mut out = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&seen).contains("written") {
        assert_eq!(out.read(&mut byte).unwrap(), 1, "the child ended early");
        seen.push(byte[0]);
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(listing(dir.path()), ["a.npy"], "nothing left beside it");
    assert_eq!(Array1::<f64>::read_npy(&target).unwrap(), large(1.0));
}
