//! Writing to a path keeps what the path is (issue 8 §3), as `np.save` does:
//!
//! - a symbolic link stays a link and its target is updated (also through a
//!   chain of links, a relative link and a dangling one);
//! - a file with two hard links is updated under both names;
//! - a file the caller may not write (mode `0444`, as a non-root user) is
//!   refused with `PermissionDenied` and left as it was;
//! - mode bits and (as root) the owner are kept;
//! - a character device and a FIFO are written through, never replaced;
//!   an `.npz` to a FIFO is refused (a zip archive needs to seek);
//! - temporary files of dead writers are removed by the next write to the
//!   same target, those of live ones (holding their lock) are not;
//! - `WriteOptions::durable` writes the same bytes.
//!
//! Tests run as root here; the permission test reruns itself as `nobody`.
#![cfg(unix)]

use ndarray::{array, Array1, Array2};
use ndnpy::{NpzReader, NpzWriter, ReadNpy, WriteNpy, WriteOptions};
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{symlink, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn old() -> Array1<f64> {
    array![1.0, 2.0, 3.0]
}

fn new() -> Array2<i32> {
    array![[7, 8], [9, 10]]
}

fn is_root() -> bool {
    // SAFETY-free: `id -u` instead of libc in the tests.
    let out = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

#[test]
fn symlink_stays_a_link_and_its_target_is_updated() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.npy");
    let link = dir.path().join("link.npy");
    old().write_npy(&real).unwrap();
    symlink("real.npy", &link).unwrap();

    new().write_npy(&link).unwrap();

    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("real.npy"));
    assert_eq!(Array2::<i32>::read_npy(&real).unwrap(), new());
    assert_eq!(listing(dir.path()), ["link.npy", "real.npy"]);
}

#[test]
fn chain_of_links_into_another_folder() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let links = dir.path().join("links");
    fs::create_dir_all(&data).unwrap();
    fs::create_dir_all(&links).unwrap();
    let real = data.join("real.npy");
    old().write_npy(&real).unwrap();
    symlink("../data/real.npy", links.join("a.npy")).unwrap();
    symlink(links.join("a.npy"), links.join("b.npy")).unwrap();

    new().write_npy(links.join("b.npy")).unwrap();

    assert_eq!(Array2::<i32>::read_npy(&real).unwrap(), new());
    assert_eq!(listing(&links), ["a.npy", "b.npy"]);
    assert_eq!(listing(&data), ["real.npy"]);
    for name in ["a.npy", "b.npy"] {
        assert!(fs::symlink_metadata(links.join(name))
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

#[test]
fn dangling_link_creates_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("link.npy");
    symlink("made.npy", &link).unwrap();
    new().write_npy(&link).unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        Array2::<i32>::read_npy(dir.path().join("made.npy")).unwrap(),
        new()
    );
}

#[test]
fn symlink_loop_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    symlink("b.npy", dir.path().join("a.npy")).unwrap();
    symlink("a.npy", dir.path().join("b.npy")).unwrap();
    let err = new().write_npy(dir.path().join("a.npy")).unwrap_err();
    assert!(err.io_error().is_some(), "{err}");
    assert_eq!(listing(dir.path()), ["a.npy", "b.npy"]);
}

#[test]
fn hard_links_are_both_updated() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.npy");
    let b = dir.path().join("b.npy");
    old().write_npy(&a).unwrap();
    fs::hard_link(&a, &b).unwrap();
    let ino = fs::metadata(&a).unwrap().ino();

    new().write_npy(&a).unwrap();

    for p in [&a, &b] {
        assert_eq!(Array2::<i32>::read_npy(p).unwrap(), new());
        assert_eq!(fs::metadata(p).unwrap().ino(), ino);
        assert_eq!(fs::metadata(p).unwrap().nlink(), 2);
    }
    assert_eq!(listing(dir.path()), ["a.npy", "b.npy"]);
}

#[test]
fn hard_linked_npz_is_updated_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.npz");
    let b = dir.path().join("b.npz");
    fs::write(&a, b"old").unwrap();
    fs::hard_link(&a, &b).unwrap();
    let mut npz = NpzWriter::create(&a)
        .unwrap()
        .codec(ndnpy::npz::Codec::deflate());
    npz.add("x", &new()).unwrap();
    npz.finish().unwrap();
    let mut back = NpzReader::open(&b).unwrap();
    assert_eq!(back.read::<i32, ndarray::Ix2>("x").unwrap(), new());
    assert_eq!(fs::metadata(&b).unwrap().nlink(), 2);
}

/// Set in the copy of this binary that runs as `nobody`.
const UNPRIVILEGED_ENV: &str = "NDNPY_TEST_UNPRIVILEGED";

/// As root, reruns test `name` as `nobody` (uid/gid 65534) and returns
/// `true` (the caller stops there); otherwise `false`.
fn rerun_unprivileged(name: &str) -> bool {
    if !is_root() {
        return false;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(UNPRIVILEGED_ENV, "1")
        .env("TMPDIR", "/tmp")
        .uid(65534)
        .gid(65534)
        .output()
        .expect("rerun the test as nobody");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} as nobody: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

#[test]
fn read_only_file_is_refused() {
    if rerun_unprivileged("read_only_file_is_refused") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    old().write_npy(&path).unwrap();
    let before = fs::read(&path).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();

    let err = new().write_npy(&path).unwrap_err();
    match err.io_error() {
        Some(e) => assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{err}"),
        None => panic!("expected a permission error, got {err:?}"),
    }
    let mut npz_err = NpzWriter::create(&path).unwrap_err().to_string();
    npz_err.make_ascii_lowercase();
    assert!(npz_err.contains("permission denied"), "{npz_err}");

    assert_eq!(fs::read(&path).unwrap(), before);
    assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o444);
    assert_eq!(listing(dir.path()), ["a.npy"]);
}

#[test]
fn root_overwrites_read_only_and_keeps_the_mode() {
    // np.save as root opens a 0444 file for writing too.
    if !is_root() || std::env::var_os(UNPRIVILEGED_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    old().write_npy(&path).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    new().write_npy(&path).unwrap();
    assert_eq!(Array2::<i32>::read_npy(&path).unwrap(), new());
    assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o444);
}

#[test]
fn mode_bits_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [0o600, 0o640, 0o755, 0o664] {
        let path = dir.path().join(format!("m{mode:o}.npy"));
        old().write_npy(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        new().write_npy(&path).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, mode);

        let npz = dir.path().join(format!("m{mode:o}.npz"));
        NpzWriter::create(&npz).unwrap().finish().unwrap();
        fs::set_permissions(&npz, fs::Permissions::from_mode(mode)).unwrap();
        let mut w = NpzWriter::create(&npz).unwrap();
        w.add("x", &new()).unwrap();
        w.finish().unwrap();
        assert_eq!(fs::metadata(&npz).unwrap().mode() & 0o7777, mode);
    }
}

#[test]
fn owner_is_kept_by_root() {
    if !is_root() || std::env::var_os(UNPRIVILEGED_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    old().write_npy(&path).unwrap();
    std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o6755)).unwrap();
    new().write_npy(&path).unwrap();
    let meta = fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    // Owner kept, so the set-ID bits may stay.
    assert_eq!(meta.mode() & 0o7777, 0o6755);
    assert_eq!(Array2::<i32>::read_npy(&path).unwrap(), new());
}

/// A private character device with `/dev/null`'s numbers (1, 3), so that a
/// regression could only ever replace a node in a temporary folder.
fn null_device(dir: &Path) -> Option<PathBuf> {
    let path = dir.join("null");
    let ok = Command::new("mknod")
        .arg(&path)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(path)
}

#[test]
fn character_device_is_written_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let Some(dev) = null_device(dir.path()) else {
        eprintln!("skipped: cannot mknod");
        return;
    };
    let before = fs::symlink_metadata(&dev).unwrap();
    new().write_npy(&dev).unwrap();
    let mut npz = NpzWriter::create(&dev)
        .unwrap()
        .codec(ndnpy::npz::Codec::deflate());
    npz.add("x", &new()).unwrap();
    npz.finish().unwrap();
    // And through a link to it, as /dev/stdout is.
    symlink(&dev, dir.path().join("out")).unwrap();
    new().write_npy(dir.path().join("out")).unwrap();

    let after = fs::symlink_metadata(&dev).unwrap();
    assert!(after.file_type().is_char_device());
    assert_eq!((after.ino(), after.rdev()), (before.ino(), before.rdev()));
    assert_eq!(listing(dir.path()), ["null", "out"]);
}

#[test]
fn dev_null_stays_a_device() {
    // The real /dev/null is touched only once a private node with the same
    // numbers was written through and stayed a device: a regression must
    // never replace the system's /dev/null (tests run as root).
    let dir = tempfile::tempdir().unwrap();
    let Some(dev) = null_device(dir.path()) else {
        eprintln!("skipped: cannot mknod");
        return;
    };
    new().write_npy(&dev).unwrap();
    assert!(fs::symlink_metadata(&dev)
        .unwrap()
        .file_type()
        .is_char_device());
    let before = fs::symlink_metadata("/dev/null").unwrap();
    new().write_npy("/dev/null").unwrap();
    let after = fs::symlink_metadata("/dev/null").unwrap();
    assert!(after.file_type().is_char_device());
    assert_eq!(after.rdev(), before.rdev());
    assert_eq!(after.ino(), before.ino());
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Reads everything written into the FIFO at `path`, on a thread.
fn drain(path: PathBuf) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        fs::File::open(path).unwrap().read_to_end(&mut out).unwrap();
        out
    })
}

#[test]
fn fifo_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.npy");
    mkfifo(&fifo);
    let reader = drain(fifo.clone());
    let a = Array2::from_shape_fn((300, 700), |(i, j)| (i * 700 + j) as f64);
    a.write_npy(&fifo).unwrap();
    assert_eq!(reader.join().unwrap(), a.to_npy_bytes().unwrap());
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(listing(dir.path()), ["pipe.npy"]);
}

#[test]
fn npz_to_a_fifo_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.npz");
    mkfifo(&fifo);
    let reader = drain(fifo.clone());
    let err = NpzWriter::create(&fifo).unwrap_err();
    assert!(err.to_string().contains("cannot seek"), "{err}");
    assert!(reader.join().unwrap().is_empty());
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

/// Holds an exclusive lock on `path` in a child process group (`flock(1)`
/// and its command), as a live writer holds one on its temporary file.
fn hold_lock(path: &Path) -> Option<std::process::Child> {
    // `-o`: only `flock` itself holds the lock, so once it is reaped the
    // lock is gone.
    let mut child = Command::new("flock")
        .arg("-o")
        .arg(path)
        .args(["sh", "-c", "echo locked; exec sleep 60"])
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .ok()?;
    let mut line = [0u8; 7];
    child.stdout.as_mut()?.read_exact(&mut line).ok()?;
    Some(child)
}

/// Kills the lock holder's whole group, as if the writer died.
fn kill_group(mut child: std::process::Child) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    child.wait().unwrap();
}

#[test]
fn stale_temporary_files_are_removed_live_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    // Left by writers that died: nobody holds their lock.
    let stale0 = dir.path().join(".a.npy.0.ndnpy-tmp");
    let stale5 = dir.path().join(".a.npy.5.ndnpy-tmp");
    fs::write(&stale0, vec![0u8; 4096]).unwrap();
    fs::write(&stale5, vec![0u8; 4096]).unwrap();
    // A writer that died while holding the lock: the kernel released it.
    let killed = dir.path().join(".a.npy.2.ndnpy-tmp");
    fs::write(&killed, b"partial").unwrap();
    if let Some(child) = hold_lock(&killed) {
        kill_group(child);
    }
    // A live writer of the same target.
    let live = dir.path().join(".a.npy.1.ndnpy-tmp");
    fs::write(&live, b"in progress").unwrap();
    let holder = hold_lock(&live);
    // Another target's temporary file is none of our business.
    let other = dir.path().join(".b.npy.0.ndnpy-tmp");
    fs::write(&other, b"other").unwrap();

    new().write_npy(&path).unwrap();

    let mut expect = vec![".b.npy.0.ndnpy-tmp", "a.npy"];
    if holder.is_some() {
        expect.insert(0, ".a.npy.1.ndnpy-tmp");
    }
    assert_eq!(listing(dir.path()), expect);
    if let Some(child) = holder {
        kill_group(child);
        // Now it is stale too.
        new().write_npy(&path).unwrap();
        assert_eq!(listing(dir.path()), [".b.npy.0.ndnpy-tmp", "a.npy"]);
    }
    assert_eq!(Array2::<i32>::read_npy(&path).unwrap(), new());
}

#[test]
fn stale_files_are_removed_by_npz_writes_too() {
    let dir = tempfile::tempdir().unwrap();
    let stale = dir.path().join(".a.npz.0.ndnpy-tmp");
    fs::write(&stale, b"stale").unwrap();
    NpzWriter::create(dir.path().join("a.npz"))
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(listing(dir.path()), ["a.npz"]);
}

#[test]
fn slot_that_is_not_a_regular_file_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(".a.npy.0.ndnpy-tmp")).unwrap();
    symlink("a.npy", dir.path().join(".a.npy.1.ndnpy-tmp")).unwrap();
    new().write_npy(dir.path().join("a.npy")).unwrap();
    assert_eq!(
        listing(dir.path()),
        [".a.npy.0.ndnpy-tmp", ".a.npy.1.ndnpy-tmp", "a.npy"]
    );
    assert_eq!(
        Array2::<i32>::read_npy(dir.path().join("a.npy")).unwrap(),
        new()
    );
}

#[test]
fn durable_writes_give_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    let durable = WriteOptions::default().durable(true);
    let a = dir.path().join("a.npy");
    old().write_npy_with(&a, &durable).unwrap();
    new().write_npy_with(&a, &durable).unwrap();
    assert_eq!(fs::read(&a).unwrap(), new().to_npy_bytes().unwrap());

    for compressed in [false, true] {
        let z = dir.path().join(format!("z{compressed}.npz"));
        let mut npz = if compressed {
            NpzWriter::create_with(&z, &durable)
                .unwrap()
                .codec(ndnpy::npz::Codec::deflate())
        } else {
            NpzWriter::create_with(&z, &durable).unwrap()
        };
        npz.add("x", &new()).unwrap();
        npz.finish().unwrap();
        let mut back = NpzReader::open(&z).unwrap();
        assert_eq!(back.read::<i32, ndarray::Ix2>("x").unwrap(), new());
    }
    // In place, where fsync may not apply (a private node, never the
    // system's /dev/null).
    let mut expect = vec!["a.npy", "zfalse.npz", "ztrue.npz"];
    if let Some(dev) = null_device(dir.path()) {
        new().write_npy_with(&dev, &durable).unwrap();
        assert!(fs::symlink_metadata(&dev)
            .unwrap()
            .file_type()
            .is_char_device());
        expect.insert(1, "null");
    }
    assert_eq!(listing(dir.path()), expect);
}

#[test]
fn killed_writer_leaves_no_temporary_file() {
    // O_TMPFILE: a writer killed mid-write leaves nothing behind.
    if let Some(dir) = std::env::var_os("NDNPY_TEST_KILLED_DIR") {
        let a = Array1::from_shape_fn(64 << 20, |i| i as f64);
        println!("writing");
        a.write_npy(Path::new(&dir).join("big.npy")).unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "killed_writer_leaves_no_temporary_file",
            "--exact",
            "--nocapture",
        ])
        .env("NDNPY_TEST_KILLED_DIR", dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the child is about to write, then until its file (named
    // or not) has grown, then kill it.
    let mut out = child.stdout.take().unwrap();
    let mut buf = [0u8; 1];
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("writing") {
        if out.read(&mut buf).unwrap() == 0 {
            break;
        }
        seen.push(buf[0]);
    }
    std::thread::sleep(std::time::Duration::from_millis(150));
    child.kill().unwrap();
    child.wait().unwrap();
    let left = listing(dir.path());
    assert!(
        left.is_empty() || left == ["big.npy"],
        "left behind: {left:?}"
    );
}

/// The files this process has open whose path lies in `dir`, other than
/// `except`: through `/proc/self/fd`, which names anonymous (`O_TMPFILE`)
/// files too.
fn open_files_in(dir: &Path, except: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc/self/fd").unwrap() {
        let fd = entry.unwrap().path();
        let Ok(to) = fs::read_link(&fd) else { continue };
        if to.starts_with(dir) && to != except {
            found.push(fd);
        }
    }
    found
}

/// Files on disk: the temporary file has the target's mode (and owner)
/// before any data goes into it, so it is never more readable than the
/// file it replaces.
#[test]
fn a_temporary_file_has_the_targets_mode_before_any_data() {
    if !Path::new("/proc/self/fd").is_dir() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    old().write_npy(&path).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let mut w = ndnpy::NpyWriter::<f64>::create(&path, &[], ndnpy::Order::C).unwrap();
    w.write(&old()).unwrap();
    let mut temps: Vec<fs::Metadata> = open_files_in(dir.path(), &path)
        .iter()
        .map(|fd| fs::metadata(fd).unwrap())
        .collect();
    temps.dedup_by_key(|m| m.ino());
    assert_eq!(temps.len(), 1, "one temporary file");
    let meta = &temps[0];
    let target = fs::metadata(&path).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o600);
    assert_eq!((meta.uid(), meta.gid()), (target.uid(), target.gid()));
    w.finish().unwrap();
    assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o600);
}

/// Files on disk: a hard link planted under a temporary name (a slot
/// nobody holds) loses only that name; the file it links to is untouched.
#[test]
fn a_hard_link_planted_at_a_temporary_name_is_only_unlinked() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.npy");
    old().write_npy(&victim).unwrap();
    fs::hard_link(&victim, dir.path().join(".a.npy.0.ndnpy-tmp")).unwrap();
    new().write_npy(dir.path().join("a.npy")).unwrap();
    assert_eq!(listing(dir.path()), ["a.npy", "victim.npy"]);
    assert_eq!(Array1::<f64>::read_npy(&victim).unwrap(), old());
    assert_eq!(fs::metadata(&victim).unwrap().nlink(), 1);
}

/// Files on disk: a new target gets the mode and group `open(2)` with mode
/// `0666` gives (the umask, a set-group-ID folder), as a sibling made with
/// `File::create` does; a replaced one keeps no user extended attribute.
#[test]
fn a_new_file_gets_the_mode_open_gives() {
    let dir = tempfile::tempdir().unwrap();
    let folder_mode = fs::metadata(dir.path()).unwrap().mode() & 0o7777;
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(folder_mode | 0o2000)).unwrap();
    let path = dir.path().join("a.npy");
    old().write_npy(&path).unwrap();
    let sibling = dir.path().join("b");
    fs::File::create(&sibling).unwrap();
    let (a, b) = (
        fs::metadata(&path).unwrap(),
        fs::metadata(&sibling).unwrap(),
    );
    assert_eq!(a.mode() & 0o7777, b.mode() & 0o7777);
    assert_eq!((a.uid(), a.gid()), (b.uid(), b.gid()));
    // A user attribute on the old file is not carried over.
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: valid NUL-terminated strings and a value of the length passed.
    let set = unsafe {
        libc::setxattr(
            c.as_ptr(),
            c"user.test".as_ptr(),
            b"1".as_ptr().cast(),
            1,
            0,
        ) == 0
    };
    new().write_npy(&path).unwrap();
    if set {
        let mut value = [0u8; 8];
        // SAFETY: as above, with a buffer of the length passed.
        let got = unsafe {
            libc::getxattr(
                c.as_ptr(),
                c"user.test".as_ptr(),
                value.as_mut_ptr().cast(),
                value.len(),
            )
        };
        assert!(got < 0, "the attribute came along");
    }
}

/// Writers of one path never take each other for an appender: each holds
/// its new file's lock for an instant after its rename, and a write that
/// meets it then waits for it rather than report `ndnpy::error::RowsError::Locked`.
#[test]
fn concurrent_path_writes_never_report_an_appender() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    old().write_npy(&path).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..300 {
                    new().write_npy(&path).unwrap();
                }
            });
        }
    });
    assert_eq!(listing(dir.path()), ["a.npy"]);
    assert_eq!(Array2::<i32>::read_npy(&path).unwrap(), new());
}
