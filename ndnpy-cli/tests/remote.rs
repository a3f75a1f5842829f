//! Every command on a URL gives what it gives on the path of the same
//! bytes: the same stdout, stderr and exit code (with the URL in place of
//! the path), and the same output files. Run here on `file://` URLs (read
//! through `object_store`'s ranged GETs, as S3 objects are);
//! `scripts/interop_s3.py` runs the same comparison on a local S3 server.

mod common;

use common::{code, ndnpy};
use ndarray::{Array, Array2};
use std::path::{Path, PathBuf};

/// One run's result, with `url` written back as `path` wherever it
/// appears, and the bytes of the output it wrote.
#[derive(Debug, PartialEq)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    written: Vec<(String, Vec<u8>)>,
}

fn url_of(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The files an output path holds (itself, or a folder's files, sorted,
/// with their paths inside it).
fn written(out: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, base: &Path, into: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, base, into);
            } else {
                let name = p.strip_prefix(base).unwrap().display().to_string();
                into.push((name, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    if out.is_dir() {
        walk(out, out, &mut files);
    } else if out.exists() {
        files.push((String::new(), std::fs::read(out).unwrap()));
    }
    files
}

fn run(args: &[String], output: Option<&Path>, replace: &[(String, String)]) -> Run {
    if let Some(out) = output {
        let _ = std::fs::remove_dir_all(out);
        let _ = std::fs::remove_file(out);
    }
    let out = ndnpy(args);
    let back = |text: &[u8]| {
        let mut text = String::from_utf8_lossy(text).into_owned();
        for (url, path) in replace {
            text = text.replace(url.as_str(), path);
        }
        text
    };
    Run {
        code: code(&out),
        stdout: back(&out.stdout),
        stderr: back(&out.stderr),
        written: output.map(written).unwrap_or_default(),
    }
}

/// The command lines run on each input (`{}` is the input).
fn commands(name: &str) -> Vec<Vec<&'static str>> {
    let mut all = vec![
        vec!["info", "{}"],
        vec!["--json", "info", "{}"],
        vec!["show", "{}"],
        vec!["show", "--slice", "1:3", "{}"],
        vec!["show", "--slice", "-1", "{}"],
        vec!["--json", "show", "{}"],
        vec!["show", "--full", "{}"],
        vec!["stats", "{}"],
        vec!["--json", "stats", "{}"],
        vec!["check", "{}"],
        vec!["--json", "check", "{}"],
        vec!["check", "--allow-pickle", "{}"],
        vec!["diff", "{}", "{}"],
        vec!["--json", "diff", "{}", "{}"],
    ];
    if name.ends_with(".npz") {
        all.push(vec!["show", "--key", "a", "{}"]);
    }
    all
}

/// Conversions: arguments before the input, and the output's name.
const CONVERSIONS: &[(&[&str], &str)] = &[
    (&["convert"], "out.npz"),
    (&["convert", "--compress"], "out.npz"),
    (&["convert"], "out.npy"),
    (&["convert", "--split"], "out_dir"),
    (
        &["convert", "--order", "F", "--byteorder", "big"],
        "out.npy",
    ),
    (&["convert"], "out.parquet"),
];

/// Runs every command on `path` and on its `file://` URL and compares.
fn compare(path: &Path, scratch: &Path, failures: &mut Vec<String>) {
    let local = path.display().to_string();
    let url = url_of(path);
    let replace = [(url.clone(), local.clone())];
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut check = |args_local: Vec<String>, args_url: Vec<String>, out: Option<&Path>| {
        let a = run(&args_local, out, &[]);
        let b = run(&args_url, out, &replace);
        if a != b {
            failures.push(format!(
                "{args_url:?}\n  path: {a:?}\n  url:  {b:?}",
                a = summary(&a),
                b = summary(&b)
            ));
        }
    };
    for command in commands(&name) {
        let with = |input: &str| -> Vec<String> {
            command
                .iter()
                .map(|a| {
                    if *a == "{}" {
                        input.to_owned()
                    } else {
                        (*a).to_owned()
                    }
                })
                .collect()
        };
        check(with(&local), with(&url), None);
    }
    for (args, out_name) in CONVERSIONS {
        let out = scratch.join(out_name);
        let with = |input: &str| -> Vec<String> {
            let mut v: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            v.push(input.to_owned());
            v.push(out.display().to_string());
            v
        };
        check(with(&local), with(&url), Some(&out));
    }
}

fn summary(r: &Run) -> String {
    let cut = |s: &str| s.chars().take(600).collect::<String>();
    format!(
        "code {} stdout {:?} stderr {:?} written {:?}",
        r.code,
        cut(&r.stdout),
        cut(&r.stderr),
        r.written
            .iter()
            .map(|(n, b)| (n.clone(), b.len()))
            .collect::<Vec<_>>()
    )
}

/// Files of every kind: `.npy` of many dtypes and orders (valid, invalid,
/// truncated), archives stored and compressed (NumPy's and hostile ones),
/// object arrays, scipy.sparse and Parquet frames.
fn fixtures() -> Vec<PathBuf> {
    let root = common::root().join("fixtures");
    let list = |dir: &str, take: usize, ext: &[&str]| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| ext.contains(&e))
            })
            .collect();
        files.sort();
        // Every n-th file, so that a sample spans the folder.
        let step = files.len().div_ceil(take.max(1)).max(1);
        files.into_iter().step_by(step).collect()
    };
    let mut all = Vec::new();
    all.extend(list("cli", 100, &["npy", "npz"]));
    all.extend(list("npy/valid", 12, &["npy"]));
    all.extend(list("npy/invalid", 8, &["npy"]));
    all.extend(list("npy/invalid_data", 6, &["npy"]));
    all.extend(list("npz/valid", 100, &["npz"]));
    all.extend(list("npz/invalid", 100, &["npz"]));
    all.extend(list("pickle", 6, &["npy"]));
    all.extend(list("wild/pandas", 6, &["npz", "npy"]));
    all.extend(list("sparse", 3, &["npz"]));
    all.extend(list("parquet/valid", 3, &["parquet"]));
    all
}

#[test]
fn every_command_on_a_file_url_matches_the_path() {
    let scratch = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for path in fixtures() {
        compare(&path, scratch.path(), &mut failures);
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The report's case: `show --full` of a 20 000 × 10 array printed zeros
/// for every row but the first and last three, with exit code 0. And
/// archives whose members lie beyond one download: several members of a
/// few MiB, stored and compressed, read one after the other.
#[test]
fn large_arrays_and_archives_on_a_file_url_match_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.npy");
    let a = Array2::from_shape_fn((20_000, 10), |(i, j)| (i * 10 + j) as i64);
    ndnpy::WriteNpy::write_npy(&a, &big).unwrap();
    let url = url_of(&big);
    let out = ndnpy(&["show", "--full", url.as_str()]);
    assert_eq!(code(&out), 0);
    let text = common::stdout(&out);
    assert!(
        text.contains("[199990, 199991"),
        "{}",
        &text[text.len() - 300..]
    );
    assert!(text.contains("[100000, 100001"), "a middle row is missing");

    for compress in [false, true] {
        let name = if compress { "many_z.npz" } else { "many.npz" };
        let path = dir.path().join(name);
        let file = std::fs::File::create(&path).unwrap();
        let mut w = if compress {
            ndnpy::NpzWriter::new(file).codec(ndnpy::npz::Codec::deflate())
        } else {
            ndnpy::NpzWriter::new(file)
        };
        for (i, key) in ["a", "b", "c", "d"].iter().enumerate() {
            // 1.5 MiB each, and 6 MiB for `d` (pieces read ahead when
            // compressed); values that do not compress to nothing.
            let n = if i == 3 { 786_432 } else { 196_608 };
            let v = Array::from_shape_fn(n, |k| ((k * 2_654_435_761 + i) % 1_000_003) as f64);
            w.add(key, &v).unwrap();
        }
        w.finish().unwrap();
    }
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let mut failures = Vec::new();
    for name in ["big.npy", "many.npz", "many_z.npz"] {
        compare(&dir.path().join(name), &scratch, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// An output URL: the object holds what the local output holds.
#[test]
fn convert_to_a_file_url_writes_what_a_path_gets() {
    let dir = tempfile::tempdir().unwrap();
    let input = common::root().join("fixtures/cli/pair.npz");
    for (args, name) in [(&["--compress"][..], "z.npz"), (&[][..], "s.npz")] {
        let local = dir.path().join(format!("local_{name}"));
        let remote = dir.path().join(format!("remote_{name}"));
        let mut a: Vec<String> = vec!["convert".into()];
        a.extend(args.iter().map(|s| s.to_string()));
        let mut b = a.clone();
        a.push(input.display().to_string());
        a.push(local.display().to_string());
        b.push(url_of(&input));
        b.push(url_of(&remote));
        assert_eq!(code(&ndnpy(&a)), 0);
        assert_eq!(code(&ndnpy(&b)), 0);
        assert_eq!(
            std::fs::read(&local).unwrap(),
            std::fs::read(&remote).unwrap()
        );
    }
}

/// What a command fetches of an object is what it reads: `info` of an
/// archive of 24 MiB fetches its directory and the members' headers, `show`
/// of a `.npy` the header and the rows it prints; `stats` all of it once.
#[test]
fn commands_fetch_what_they_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.npz");
    let mut w = ndnpy::NpzWriter::create(&path).unwrap();
    for i in 0..24 {
        w.add(&format!("m{i}"), &Array::from_elem(1 << 17, i as f64))
            .unwrap();
    }
    w.finish().unwrap();
    let npy = dir.path().join("big.npy");
    ndnpy::WriteNpy::write_npy(&Array2::<f64>::zeros((200_000, 16)), &npy).unwrap();
    let fetched = |args: &[&str]| -> u64 {
        let out = common::ndnpy_env(args, &[("NDNPY_COUNT_OPENS", "1")]);
        assert_eq!(code(&out), 0, "{}", common::stderr(&out));
        let err = common::stderr(&out);
        let line = err
            .lines()
            .find_map(|l| l.strip_prefix("ndnpy: bytes fetched: "))
            .expect("the count");
        line.parse().unwrap()
    };
    let (npz_url, npy_url) = (url_of(&path), url_of(&npy));
    let npz_len = std::fs::metadata(&path).unwrap().len();
    let npy_len = std::fs::metadata(&npy).unwrap().len();
    let info = fetched(&["info", &npz_url]);
    // The tail with the directory, then one small read (a 64 KiB window)
    // at each member's header: 24 of them.
    assert!(
        info <= (24 + 2) * (64 << 10),
        "info fetched {info} of {npz_len} bytes"
    );
    // A member ndnpy compressed in pieces: its header is read from its
    // first bytes, never its first pieces or the read-ahead's.
    let packed = dir.path().join("packed.npz");
    let mut w = ndnpy::NpzWriter::create(&packed)
        .unwrap()
        .codec(ndnpy::npz::Codec::deflate());
    let noise = Array::from_shape_fn(3 << 20, |k| {
        ((k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f32
    });
    w.add("noise", &noise).unwrap();
    w.finish().unwrap();
    let info = fetched(&["info", &url_of(&packed)]);
    assert!(
        info <= 3 * (64 << 10),
        "info fetched {info} bytes of a compressed member"
    );
    let info = fetched(&["info", &npy_url]);
    assert!(info <= 64 << 10, "info fetched {info} of {npy_len} bytes");
    let show = fetched(&["show", "--slice", "100000:100002", &npy_url]);
    assert!(show < 4 << 20, "show fetched {show} of {npy_len} bytes");
    let stats = fetched(&["stats", &npy_url]);
    assert!(
        (npy_len..npy_len + (2 << 20)).contains(&stats),
        "stats fetched {stats} of {npy_len} bytes"
    );
}

/// `info` of an archive of 65 536 small members reads every member's local
/// header and `.npy` header: all of the object, which is fetched in a few
/// large GETs (its first bytes, its tail, its directory, the members), no
/// byte twice, and gives what the local read gives.
#[test]
fn info_of_many_small_members_fetches_the_object_once_in_few_requests() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.npz");
    let mut w = ndnpy::NpzWriter::create(&path).unwrap();
    let a = Array::from_vec(vec![0.5f64, 1.5, 2.5, 3.5]);
    for i in 0..65_536 {
        w.add(&format!("a{i}"), &a).unwrap();
    }
    w.finish().unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let url = url_of(&path);
    let out = common::ndnpy_env(&["info", &url], &[("NDNPY_COUNT_OPENS", "1")]);
    assert_eq!(code(&out), 0, "{}", common::stderr(&out));
    let err = common::stderr(&out);
    let count = |what: &str| -> u64 {
        err.lines()
            .find_map(|l| l.strip_prefix(what))
            .expect("the count")
            .parse()
            .unwrap()
    };
    let (requests, fetched) = (count("ndnpy: requests: "), count("ndnpy: bytes fetched: "));
    assert!(requests <= 4, "{requests} requests");
    assert!(
        fetched as f64 <= 1.1 * len as f64,
        "fetched {fetched} bytes of {len}"
    );
    // The same output as the local read.
    let local = ndnpy(&["info".to_string(), path.display().to_string()]);
    let remote = String::from_utf8_lossy(&out.stdout).replace(&url, &path.display().to_string());
    assert_eq!(remote, String::from_utf8_lossy(&local.stdout));
}

/// A name with `.npz:` in it that is itself a file or an object is read as
/// it is, on a path and on a URL alike; only a name that is neither is an
/// archive's member.
#[test]
fn a_colon_in_a_name_is_a_member_only_when_the_name_is_not_an_object() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("x.npz:m");
    ndnpy::WriteNpy::write_npy(&ndarray::arr1(&[0i64, 1, 2]), &odd).unwrap();
    let mut w = ndnpy::NpzWriter::create(dir.path().join("x.npz")).unwrap();
    w.add("m", &ndarray::arr1(&[100i64, 101, 102])).unwrap();
    w.finish().unwrap();
    let shown = |arg: &str| common::stdout(&ndnpy(&["show", arg]));
    for arg in [odd.display().to_string(), url_of(&odd)] {
        assert!(
            shown(&arg).contains("array([0, 1, 2])"),
            "{arg}: {}",
            shown(&arg)
        );
    }
    std::fs::remove_file(&odd).unwrap();
    for arg in [odd.display().to_string(), url_of(&odd)] {
        assert!(
            shown(&arg).contains("array([100, 101, 102])"),
            "{arg}: {}",
            shown(&arg)
        );
    }
}

/// `convert --split` to a folder URL uploads one object per member.
#[test]
fn split_to_a_folder_url_writes_each_member() {
    let dir = tempfile::tempdir().unwrap();
    let input = common::root().join("fixtures/cli/pair.npz");
    let (local, remote) = (dir.path().join("local"), dir.path().join("remote"));
    std::fs::create_dir(&remote).unwrap();
    let a = ndnpy(&[
        "convert",
        "--split",
        input.to_str().unwrap(),
        local.to_str().unwrap(),
    ]);
    assert_eq!(code(&a), 0, "{}", common::stderr(&a));
    let url = format!("{}/", url_of(&remote));
    let b = ndnpy(&["convert", "--split", input.to_str().unwrap(), &url]);
    assert_eq!(code(&b), 0, "{}", common::stderr(&b));
    assert_eq!(written(&local), written(&remote));
    assert!(!written(&remote).is_empty());
    let said = common::stdout(&b);
    assert!(
        said.contains(&format!("wrote {}/a.npy", url_of(&remote))),
        "{said}"
    );
}

/// Readers of inputs a command is done with are let go: many URLs in one
/// command keep no more files (or connections) open than a few.
#[test]
fn many_urls_in_one_command_hold_a_few_readers() {
    let dir = tempfile::tempdir().unwrap();
    let mut urls = Vec::new();
    for i in 0..80 {
        let path = dir.path().join(format!("f{i}.npz"));
        let mut w = ndnpy::NpzWriter::create(&path).unwrap();
        w.add("a", &Array::from_elem(1 << 16, i as f64)).unwrap();
        w.add("b", &Array::from_elem(1 << 16, 1.0f32)).unwrap();
        w.finish().unwrap();
        urls.push(url_of(&path));
    }
    for command in ["stats", "check", "info"] {
        let script = format!(
            "ulimit -n 48 && exec {} {command} {}",
            env!("CARGO_BIN_EXE_ndnpy"),
            urls.join(" ")
        );
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `check` of a folder walks it; of a folder's URL, it lists the objects
/// below the URL and checks them in the same order, with the same report
/// (other files skipped, problems found, the exit code).
#[test]
fn check_of_a_folder_url_walks_it_as_the_path_is_walked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("runs");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let npy = |a: &Array2<f64>| ndnpy::WriteNpy::to_npy_bytes(a).unwrap();
    let a = Array2::<f64>::from_shape_fn((4, 3), |(i, j)| (i * 3 + j) as f64);
    std::fs::write(root.join("a.npy"), npy(&a)).unwrap();
    std::fs::write(root.join("sub").join("b.npy"), npy(&a)).unwrap();
    // `sub-x` sorts after `sub/` in a folder walk, before it as text.
    std::fs::write(root.join("sub-x.npy"), npy(&a)).unwrap();
    let cut = npy(&a);
    std::fs::write(root.join("sub").join("cut.npy"), &cut[..cut.len() - 5]).unwrap();
    std::fs::write(root.join("notes.txt"), b"not an array").unwrap();
    let mut z = ndnpy::NpzWriter::create(root.join("c.npz")).unwrap();
    z.add("x", &a).unwrap();
    z.finish().unwrap();

    let local = root.display().to_string();
    let url = url_of(&root);
    let mut failures = Vec::new();
    for (local, url) in [
        (local.clone(), url.clone()),
        (format!("{local}/"), format!("{url}/")),
    ] {
        let replace = [(url.clone(), local.clone())];
        for json in [false, true] {
            let args = |input: &str| {
                let mut v: Vec<String> = Vec::new();
                if json {
                    v.push("--json".into());
                }
                v.extend(["check".to_owned(), input.to_owned()]);
                v
            };
            let (p, u) = (
                run(&args(&local), None, &[]),
                run(&args(&url), None, &replace),
            );
            assert_eq!(p.code, 1, "a cut file is a problem: {}", summary(&p));
            assert!(
                p.stderr.contains("checked 5 files") || json,
                "{}",
                summary(&p)
            );
            if p != u {
                failures.push(format!(
                    "{url} json {json}\n  path: {}\n  url:  {}",
                    summary(&p),
                    summary(&u)
                ));
            }
        }
    }
    // The other commands refuse a folder, and its URL, in the same words.
    let replace = [(url.clone(), local.clone())];
    let out = dir.path().join("out.npz");
    for args in [
        vec!["info"],
        vec!["--json", "info"],
        vec!["show"],
        vec!["stats"],
        vec!["convert"],
    ] {
        let with = |input: &str| -> Vec<String> {
            let mut v: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            v.push(input.to_owned());
            if args == ["convert"] {
                v.push(out.display().to_string());
            }
            v
        };
        let (p, u) = (
            run(&with(&local), Some(&out), &[]),
            run(&with(&url), Some(&out), &replace),
        );
        assert_ne!(p.code, 0, "{}", summary(&p));
        if p != u {
            failures.push(format!(
                "{args:?}\n  path: {}\n  url:  {}",
                summary(&p),
                summary(&u)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
