//! `ARCHIVE.npz:MEMBER`, the way the output names a member, is accepted
//! wherever `--key` is (`show`, `stats`, `convert`, `diff`), on paths and
//! URLs, and gives what `--key` gives.

mod common;

use common::{code, ndnpy, stderr, stdout};

const PAIR: &str = "fixtures/cli/pair.npz";

#[test]
fn a_member_named_as_the_output_names_it_reads_as_key_does() {
    for command in ["show", "stats"] {
        let by_key = ndnpy(&[command, "--key", "a", PAIR]);
        let by_name = ndnpy(&[command, &format!("{PAIR}:a")]);
        assert_eq!(code(&by_key), 0, "{}", stderr(&by_key));
        assert_eq!(code(&by_name), 0, "{}", stderr(&by_name));
        assert_eq!(stdout(&by_key), stdout(&by_name), "{command}");
    }
    // The same through a URL.
    let url = format!(
        "file://{}/{PAIR}:b",
        common::root().canonicalize().unwrap().display()
    );
    let out = ndnpy(&["show", url.as_str()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("array([0, 1, 2, 3], dtype=int16)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn convert_and_diff_take_members_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.npy");
    let run = ndnpy(&["convert", &format!("{PAIR}:a"), out.to_str().unwrap()]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let shown = ndnpy(&["show", out.to_str().unwrap()]);
    assert!(
        stdout(&shown).contains("[3., 4., 5.]"),
        "{}",
        stdout(&shown)
    );
    // One member against a .npy, and against the member of the same name.
    let d = ndnpy(&["diff", &format!("{PAIR}:a"), out.to_str().unwrap()]);
    assert_eq!(code(&d), 0, "{}{}", stdout(&d), stderr(&d));
    let d = ndnpy(&[
        "diff",
        &format!("{PAIR}:a"),
        "fixtures/cli/pair_compressed.npz",
    ]);
    assert_eq!(code(&d), 0, "{}{}", stdout(&d), stderr(&d));
    // Different members compared: they differ (dtype and shape).
    let d = ndnpy(&["diff", &format!("{PAIR}:a"), &format!("{PAIR}:b")]);
    assert_eq!(code(&d), 1, "{}{}", stdout(&d), stderr(&d));
    // A name and a --key that disagree is a usage error.
    let bad = ndnpy(&["show", "--key", "b", &format!("{PAIR}:a")]);
    assert_eq!(code(&bad), 2);
    assert!(stderr(&bad).contains("--key"), "{}", stderr(&bad));
    // A member that is not there is named.
    let missing = ndnpy(&["show", &format!("{PAIR}:zz")]);
    assert_ne!(code(&missing), 0);
    assert!(stderr(&missing).contains("zz"), "{}", stderr(&missing));
}

#[test]
fn help_shows_examples_and_hints_name_flags() {
    for command in ["info", "show", "stats", "convert", "check", "diff"] {
        let out = ndnpy(&[command, "--help"]);
        assert!(stdout(&out).contains("Examples:\n  ndnpy "), "{command}");
    }
    // A header over NumPy's limit: the hint names the command's flag.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.npy");
    let fields: Vec<String> = (0..600)
        .map(|i| format!("('field_{i:04}', '<f8')"))
        .collect();
    let text = format!(
        "{{'descr': [{}], 'fortran_order': False, 'shape': (0,), }}",
        fields.join(", ")
    );
    let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
    let mut header = text.into_bytes();
    while (12 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&header);
    std::fs::write(&path, bytes).unwrap();
    let out = ndnpy(&["info", path.to_str().unwrap()]);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("--max-header-size"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("ReadOptions"), "{}", stderr(&out));
    let out = ndnpy(&[
        "--max-header-size",
        "100000",
        "info",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}
