//! Overwrites over the spare (`src/io/spare.rs`), opt-in with
//! `WriteOptions::spare(true)`: a large file replaced by a large version
//! keeps the old one as `.<name>.ndnpy-spare`, and the next write goes over
//! it and swaps it in. The target is always one whole version; a spare
//! someone holds (open or mapped) is never written over; spares of another
//! owner, locked spares and concurrent writers are handled; small writes
//! and default writes remove the spare; a spare is never more readable
//! than the versions whose data it holds, and a failed write removes it.
//! Default writes keep no spare at all.
#![cfg(target_os = "linux")]

use ndarray::Array1;
use ndnpy::{ReadNpy, WriteNpy, WriteOptions};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Elements of a version: a little over 16 MiB of `f64`, the smallest
/// size that gets a spare.
const N: usize = 2_100_000;

/// The options that keep a spare.
fn on() -> WriteOptions {
    WriteOptions::default().spare(true)
}

fn version(k: u32) -> Array1<f64> {
    Array1::from_elem(N, k as f64)
}

fn spare(target: &Path) -> PathBuf {
    target.with_file_name(format!(
        ".{}.ndnpy-spare",
        target.file_name().unwrap().to_str().unwrap()
    ))
}

fn ino(path: &Path) -> u64 {
    fs::symlink_metadata(path).unwrap().ino()
}

/// The version `path` holds, checking it is one whole version.
fn which(path: &Path) -> u32 {
    let a = Array1::<f64>::read_npy(path).unwrap();
    assert_eq!(a.len(), N);
    let k = a[0];
    assert!(a.iter().all(|&x| x == k), "a mix of versions");
    k as u32
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Leases (and so spares) work on this file system: checked by the first
/// overwrite leaving a spare.
fn spares_work(dir: &Path) -> bool {
    let t = dir.join("probe.npy");
    version(0).write_npy_with(&t, &on()).unwrap();
    version(1).write_npy_with(&t, &on()).unwrap();
    let works = spare(&t).exists();
    let _ = fs::remove_file(spare(&t));
    fs::remove_file(&t).unwrap();
    if !works {
        eprintln!("no spares on this file system (no leases or RENAME_EXCHANGE): skipped");
    }
    works
}

/// A folder holding `a.npy` written twice (versions 1 then 2), so that
/// version 1 is its spare; `None` where spares do not work.
fn target_with_spare() -> Option<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().unwrap();
    if !spares_work(dir.path()) {
        return None;
    }
    let t = dir.path().join("a.npy");
    version(1).write_npy_with(&t, &on()).unwrap();
    version(2).write_npy_with(&t, &on()).unwrap();
    Some((dir, t))
}

#[test]
fn the_spare_is_reused_and_rotates() {
    let dir = tempfile::tempdir().unwrap();
    if !spares_work(dir.path()) {
        return;
    }
    let t = dir.path().join("a.npy");
    version(1).write_npy_with(&t, &on()).unwrap();
    let first = ino(&t);
    assert!(!spare(&t).exists(), "no spare after a first write");
    version(2).write_npy_with(&t, &on()).unwrap();
    let second = ino(&t);
    assert_eq!(ino(&spare(&t)), first, "the replaced version is the spare");
    assert_eq!(which(&spare(&t)), 1);
    // The third write goes over the first version's file and swaps it in.
    fs::set_permissions(&t, fs::Permissions::from_mode(0o640)).unwrap();
    version(3).write_npy_with(&t, &on()).unwrap();
    assert_eq!(ino(&t), first);
    assert_eq!(ino(&spare(&t)), second);
    assert_eq!(which(&t), 3);
    assert_eq!(which(&spare(&t)), 2);
    assert_eq!(
        fs::metadata(&t).unwrap().mode() & 0o777,
        0o640,
        "the target's mode kept"
    );
    // A shorter (still large) version: the spare is cut to it.
    let shorter = Array1::from_elem(N - 1000, 4.0);
    shorter.write_npy_with(&t, &on()).unwrap();
    assert_eq!(ino(&t), second);
    assert_eq!(Array1::<f64>::read_npy(&t).unwrap(), shorter);
    assert_eq!(listing(dir.path()), [".a.npy.ndnpy-spare", "a.npy"]);
    // Durable writes use it too.
    version(5).write_npy_with(&t, &on().durable(true)).unwrap();
    assert_eq!(ino(&t), first);
    assert_eq!(which(&t), 5);
}

#[test]
fn a_spare_someone_holds_is_never_written_over() {
    let dir = tempfile::tempdir().unwrap();
    if !spares_work(dir.path()) {
        return;
    }
    let t = dir.path().join("a.npy");
    version(1).write_npy_with(&t, &on()).unwrap();
    // A reader opens version 1 and maps it (then closes the file: the
    // mapping alone holds it).
    let mapped = {
        let f = fs::File::open(&t).unwrap();
        // SAFETY: the test never writes the file through another name
        // while the map is alive; checking that the library does not is
        // the point.
        unsafe { memmap2::Mmap::map(&f).unwrap() }
    };
    let held = fs::File::open(&t).unwrap();
    let original = mapped.to_vec();
    version(2).write_npy_with(&t, &on()).unwrap();
    assert_eq!(ino(&spare(&t)), held.metadata().unwrap().ino());
    // Version 1 is the spare now, held: the next write goes elsewhere.
    version(3).write_npy_with(&t, &on()).unwrap();
    assert_eq!(which(&t), 3);
    assert!(mapped[..] == original[..], "the mapped version changed");
    assert_ne!(ino(&t), held.metadata().unwrap().ino());
    // Its name went (the reader keeps the file); version 2 is the spare.
    assert_eq!(which(&spare(&t)), 2);
    drop(held);
    version(4).write_npy_with(&t, &on()).unwrap();
    assert!(mapped[..] == original[..], "the mapping alone holds it too");
    assert_eq!(which(&t), 4);
    drop(mapped);
    version(5).write_npy_with(&t, &on()).unwrap();
    assert_eq!(which(&t), 5);
    assert_eq!(which(&spare(&t)), 4);
}

#[test]
fn spares_of_another_owner_or_with_attributes_are_not_written_over() {
    let Some((_dir, t)) = target_with_spare() else {
        return;
    };
    let s = spare(&t);
    // SAFETY: `geteuid` has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Another user's file under the spare's name: left alone by the
        // write (replaced by the version retired, not written over).
        std::os::unix::fs::chown(&s, Some(65534), Some(65534)).unwrap();
        let foreign = ino(&s);
        version(3).write_npy_with(&t, &on()).unwrap();
        assert_ne!(ino(&t), foreign);
        assert_eq!(which(&t), 3);
        assert_eq!(fs::metadata(&t).unwrap().uid(), 0);
        assert_eq!(which(&s), 2, "the retired version parked instead");
    }
    // No write permission on the spare: of no use to a non-root writer;
    // root writes it and gives it the target's mode.
    fs::set_permissions(&s, fs::Permissions::from_mode(0o000)).unwrap();
    let mode = fs::metadata(&t).unwrap().mode();
    version(4).write_npy_with(&t, &on()).unwrap();
    assert_eq!(which(&t), 4);
    assert_eq!(
        fs::metadata(&t).unwrap().mode(),
        mode,
        "the target's mode kept"
    );
    // User attributes: a fresh file would not have them, and neither may
    // the new version (inode numbers may be reused, so the attribute is
    // what is checked).
    if xattr_set(&s) {
        assert!(has_xattr(&s));
        version(5).write_npy_with(&t, &on()).unwrap();
        assert!(!has_xattr(&t), "the spare's attribute came along");
        assert_eq!(which(&t), 5);
    }
}

/// Whether `path` has the `user.test` attribute.
fn has_xattr(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let mut value = [0u8; 8];
    // SAFETY: valid NUL-terminated strings and a buffer of the length
    // passed.
    unsafe {
        libc::getxattr(
            c.as_ptr(),
            c"user.test".as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        ) >= 0
    }
}

/// Sets a `user.` attribute on `path`; false where the file system has
/// none.
fn xattr_set(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: valid NUL-terminated strings and a value buffer of the
    // length passed.
    unsafe {
        libc::setxattr(
            c.as_ptr(),
            c"user.test".as_ptr(),
            b"1".as_ptr().cast(),
            1,
            0,
        ) == 0
    }
}

#[test]
fn small_writes_and_default_writes_remove_the_spare() {
    let Some((dir, t)) = target_with_spare() else {
        return;
    };
    assert!(spare(&t).exists());
    Array1::<f64>::zeros(10).write_npy_with(&t, &on()).unwrap();
    assert_eq!(listing(dir.path()), ["a.npy"]);
    version(3).write_npy_with(&t, &on()).unwrap();
    version(4).write_npy_with(&t, &on()).unwrap();
    assert!(spare(&t).exists());
    // The default keeps no spare, and removes one an earlier write left.
    version(5).write_npy(&t).unwrap();
    assert_eq!(listing(dir.path()), ["a.npy"]);
    version(6).write_npy(&t).unwrap();
    assert_eq!(listing(dir.path()), ["a.npy"]);
    assert_eq!(which(&t), 6);
    // Hard-linked targets are written in place, as before: no spare.
    fs::hard_link(&t, dir.path().join("b.npy")).unwrap();
    version(7).write_npy_with(&t, &on()).unwrap();
    version(8).write_npy_with(&t, &on()).unwrap();
    assert_eq!(listing(dir.path()), ["a.npy", "b.npy"]);
    assert_eq!(which(&dir.path().join("b.npy")), 8);
}

#[test]
fn concurrent_writers_and_readers_see_whole_versions() {
    let dir = tempfile::tempdir().unwrap();
    if !spares_work(dir.path()) {
        return;
    }
    let t = dir.path().join("a.npy");
    version(0).write_npy_with(&t, &on()).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..3u32)
            .map(|w| {
                let t = &t;
                s.spawn(move || {
                    for k in 0..6 {
                        version(100 * (w + 1) + k).write_npy_with(t, &on()).unwrap();
                    }
                })
            })
            .collect();
        s.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                which(&t);
            }
        });
        for w in writers {
            w.join().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let last = which(&t);
    assert!(
        last >= 100 && last % 100 == 5,
        "one writer's last version: {last}"
    );
    which(&spare(&t));
    assert_eq!(listing(dir.path()), [".a.npy.ndnpy-spare", "a.npy"]);
}

#[test]
fn a_write_over_the_spare_removes_what_a_killed_writer_left() {
    // A writer killed between its exchange and its park leaves the old
    // version under a temporary name, locked by nobody.
    let Some((dir, t)) = target_with_spare() else {
        return;
    };
    let left = dir.path().join(".a.npy.3.ndnpy-tmp");
    fs::copy(&t, &left).unwrap();
    let spare_before = ino(&spare(&t));
    version(3).write_npy_with(&t, &on()).unwrap();
    assert_eq!(ino(&t), spare_before, "written over the spare");
    assert_eq!(listing(dir.path()), [".a.npy.ndnpy-spare", "a.npy"]);
}

const CHILD_ENV: &str = "NDNPY_SPARE_CHILD";

/// In the child (run by the test of the same name): writes versions to
/// the target in a loop until killed.
#[test]
fn killed_writers_leave_a_whole_version() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        let t = Path::new(&dir).join("a.npy");
        for k in 10.. {
            version(k).write_npy_with(&t, &on()).unwrap();
        }
        return;
    }
    let Some((dir, t)) = target_with_spare() else {
        return;
    };
    let exe = std::env::current_exe().unwrap();
    for delay in [40u64, 95, 150, 230, 330] {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "killed_writers_leave_a_whole_version",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay));
        child.kill().unwrap();
        child.wait().unwrap();
        // One whole version; the next write works and reuses the spare.
        which(&t);
        version(3).write_npy_with(&t, &on()).unwrap();
        assert_eq!(which(&t), 3);
        let names = listing(dir.path());
        assert!(
            names
                .iter()
                .all(|n| n == "a.npy" || n == ".a.npy.ndnpy-spare"),
            "{names:?}"
        );
    }
}

/// A write over the spare that fails part way (`ulimit -f`: the file may
/// not grow past 128 KiB, so the spare's first bytes go and then `EFBIG`)
/// leaves the target as it was.
#[test]
fn a_failed_write_over_the_spare_keeps_the_target() {
    if let Some(dir) = std::env::var_os("NDNPY_SPARE_LIMITED") {
        let t = Path::new(&dir).join("a.npy");
        let err = version(9).write_npy_with(&t, &on()).unwrap_err();
        assert!(
            err.io_error()
                .is_some_and(|e| e.raw_os_error() == Some(libc::EFBIG)),
            "{err:?}"
        );
        return;
    }
    let Some((dir, t)) = target_with_spare() else {
        return;
    };
    let out = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 128 && exec \"$0\" --exact \"$1\" --test-threads=1")
        .arg(std::env::current_exe().unwrap())
        .arg("a_failed_write_over_the_spare_keeps_the_target")
        .env("NDNPY_SPARE_LIMITED", dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(which(&t), 2);
    // The spare, half written over, went with the failure.
    assert_eq!(listing(dir.path()), ["a.npy"]);
    version(3).write_npy_with(&t, &on()).unwrap();
    assert_eq!(which(&t), 3);
}

#[test]
fn default_writes_keep_no_spare() {
    let dir = tempfile::tempdir().unwrap();
    if !spares_work(dir.path()) {
        return;
    }
    let t = dir.path().join("a.npy");
    for k in 1..4 {
        version(k).write_npy(&t).unwrap();
        assert_eq!(listing(dir.path()), ["a.npy"], "after version {k}");
    }
    assert_eq!(which(&t), 3);
    assert!(!WriteOptions::default().keeps_spare());
}

/// A default write that fails part way (`ulimit -f`, `EFBIG`) over a
/// target with a spare from an earlier opt-in write leaves only the target.
#[test]
fn a_failed_default_write_leaves_only_the_target() {
    if let Some(dir) = std::env::var_os("NDNPY_DEFAULT_LIMITED") {
        let t = Path::new(&dir).join("a.npy");
        let err = version(9).write_npy(&t).unwrap_err();
        assert!(
            err.io_error()
                .is_some_and(|e| e.raw_os_error() == Some(libc::EFBIG)),
            "{err:?}"
        );
        return;
    }
    let Some((dir, t)) = target_with_spare() else {
        return;
    };
    let out = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 128 && exec \"$0\" --exact \"$1\" --test-threads=1")
        .arg(std::env::current_exe().unwrap())
        .arg("a_failed_default_write_leaves_only_the_target")
        .env("NDNPY_DEFAULT_LIMITED", dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(which(&t), 2);
    assert_eq!(listing(dir.path()), ["a.npy"]);
}

/// The reproduction of issue 37 item 2: version 1 made private (0600),
/// version 2 made public (0644), and a write of version 3 over the spare
/// (which holds version 1) killed part way (`SIGXFSZ`, so that nothing
/// cleans up): the spare, half version 1, must not be readable by others.
#[test]
fn the_spare_is_never_wider_than_the_versions_it_holds() {
    if let Some(dir) = std::env::var_os("NDNPY_SPARE_KILLED") {
        let t = Path::new(&dir).join("a.npy");
        let _ = version(3).write_npy_with(&t, &on());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    if !spares_work(dir.path()) {
        return;
    }
    let t = dir.path().join("a.npy");
    let mode = |p: &Path| fs::metadata(p).unwrap().mode() & 0o7777;
    version(1).write_npy_with(&t, &on()).unwrap();
    fs::set_permissions(&t, fs::Permissions::from_mode(0o600)).unwrap();
    version(2).write_npy_with(&t, &on()).unwrap();
    assert_eq!(which(&spare(&t)), 1);
    assert_eq!(mode(&spare(&t)), 0o600);
    fs::set_permissions(&t, fs::Permissions::from_mode(0o644)).unwrap();
    let status = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 128 && exec \"$0\" --exact \"$1\" --test-threads=1")
        .arg(std::env::current_exe().unwrap())
        .arg("the_spare_is_never_wider_than_the_versions_it_holds")
        .env("NDNPY_SPARE_KILLED", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the child was to be killed part way");
    assert_eq!(which(&t), 2);
    assert_eq!(mode(&t), 0o644);
    // Killed, the writer could not remove the spare it was writing over.
    assert_eq!(
        mode(&spare(&t)),
        0o600,
        "a spare holding part of version 1 is as private as version 1"
    );
    // A successful write gives the new version the target's mode.
    version(4).write_npy_with(&t, &on()).unwrap();
    assert_eq!(which(&t), 4);
    assert_eq!(mode(&t), 0o644);
}

/// Files on disk: links planted under the spare's name are never followed
/// nor written through: a symbolic link is left alone (the retired version
/// is removed instead of parked), a hard link loses only that name.
#[test]
fn links_planted_as_the_spare_are_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    if !spares_work(dir.path()) {
        return;
    }
    let t = dir.path().join("a.npy");
    let victim = dir.path().join("victim.npy");
    version(7).write_npy(&victim).unwrap();
    std::os::unix::fs::symlink(&victim, spare(&t)).unwrap();
    for k in 1..4 {
        version(k).write_npy_with(&t, &on()).unwrap();
    }
    version(4).write_npy(&t).unwrap();
    assert_eq!(which(&t), 4);
    assert_eq!(which(&victim), 7);
    assert!(fs::symlink_metadata(spare(&t)).unwrap().is_symlink());
    fs::remove_file(spare(&t)).unwrap();
    fs::hard_link(&victim, spare(&t)).unwrap();
    for k in 5..8 {
        version(k).write_npy_with(&t, &on()).unwrap();
    }
    assert_eq!(which(&t), 7);
    assert_eq!(which(&victim), 7, "the linked file was not written over");
    assert_eq!(fs::metadata(&victim).unwrap().nlink(), 1);
}

/// Files on disk: the documented cost of `spare(true)`: deleting the
/// target leaves the spare; the next default write to the path removes it.
#[test]
fn deleting_the_target_leaves_the_spare_until_the_next_write() {
    let Some((dir, t)) = target_with_spare() else {
        return;
    };
    fs::remove_file(&t).unwrap();
    assert_eq!(listing(dir.path()), [".a.npy.ndnpy-spare"]);
    Array1::<f64>::zeros(4).write_npy(&t).unwrap();
    assert_eq!(listing(dir.path()), ["a.npy"]);
}
