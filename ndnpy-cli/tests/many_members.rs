//! Every command on an archive of 65 536 deflated members (made here, not
//! committed): each reads the archive's central directory once
//! (`NDNPY_COUNT_OPENS`), visits the members in directory order, and agrees
//! with NumPy on a sample of members. Timings are in BENCHMARKS.md (no
//! timing thresholds here).

mod common;

use common::{code, ndnpy_env, stderr, stdout};
use std::process::Command;

const MEMBERS: usize = 65_536;

/// The archive: member `a{i}` is `[i, i + 0.5, i + 1, i + 1.5]`.
fn archive(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("many.npz");
    let mut w = ndnpy::NpzWriter::create(&path)
        .unwrap()
        .codec(ndnpy::npz::Codec::deflate());
    for i in 0..MEMBERS {
        let a = ndarray::Array1::from_iter((0..4).map(|k| i as f64 + k as f64 / 2.0));
        w.add(&format!("a{i}"), &a).unwrap();
    }
    w.finish().unwrap();
    path
}

/// Runs `ndnpy args`, checks the exit code and that `opens` archives were
/// opened, and returns stdout.
fn run(args: &[&str], opens: usize) -> String {
    let out = ndnpy_env(args, &[("NDNPY_COUNT_OPENS", "1")]);
    assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    let counted = format!("archives opened: {opens}");
    assert!(
        stderr(&out).contains(&counted),
        "{args:?}: expected '{counted}', stderr: {}",
        stderr(&out)
    );
    stdout(&out)
}

#[test]
fn every_command_reads_the_directory_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = archive(dir.path());
    let p = path.to_str().unwrap();

    let info = run(&["info", p], 1);
    assert_eq!(info.lines().count(), 3 + MEMBERS);
    assert!(info.contains(&format!(".npz archive, {MEMBERS} members")));
    let names: Vec<&str> = info
        .lines()
        .skip(3)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names[..3], ["a0", "a1", "a2"], "directory order");
    assert_eq!(names[MEMBERS - 1], format!("a{}", MEMBERS - 1));

    let show = run(&["show", p], 1);
    assert_eq!(show.lines().count(), 2 * MEMBERS);
    assert!(show.contains(&format!(
        "{p}:a65535:\narray([65535. , 65535.5, 65536. , 65536.5])"
    )));

    let stats = run(&["--json", "stats", p], 1);
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats.as_array().unwrap().len(), MEMBERS);
    assert_eq!(stats[7]["columns"][0]["max"], 8.5);

    run(&["check", p], 1);
    let diff = run(&["diff", p, p], 2);
    assert_eq!(diff.lines().count(), MEMBERS);

    let out = dir.path().join("copy.npz");
    let o = out.to_str().unwrap();
    run(&["convert", "--compress", p, o], 1);
    let mut copy = ndnpy::NpzReader::open(&out).unwrap();
    assert_eq!(copy.len(), MEMBERS);
    assert_eq!(
        copy.read::<f64, ndarray::Ix1>("a4321").unwrap(),
        ndarray::array![4321.0, 4321.5, 4322.0, 4322.5]
    );

    // A sample of members as NumPy shows them.
    let Some(python) =
        common::numpy_python("every_command_reads_the_directory_once (NumPy sample)")
    else {
        return;
    };
    let sample = ["a0", "a777", "a65535"];
    let script =
        format!("import numpy as np\nz = np.load({p:?})\nfor k in {sample:?}: print(repr(z[k]))");
    let numpy = Command::new(python).args(["-c", &script]).output().unwrap();
    assert!(
        numpy.status.success(),
        "{}",
        String::from_utf8_lossy(&numpy.stderr)
    );
    let numpy = String::from_utf8(numpy.stdout).unwrap();
    let ours: String = sample
        .iter()
        .map(|k| {
            let v: serde_json::Value =
                serde_json::from_str(&run(&["--json", "show", "--key", k, p], 1)).unwrap();
            format!("{}\n", v[0]["repr"].as_str().unwrap())
        })
        .collect();
    assert_eq!(ours, numpy);
}
