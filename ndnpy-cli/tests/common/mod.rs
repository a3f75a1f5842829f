//! Running the `ndnpy` binary from the integration tests.
// Each test file uses its own subset of these helpers.
#![allow(dead_code)]

use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root, where the fixtures are.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `ndnpy` with `args` from the repository's root.
pub fn ndnpy<S: AsRef<OsStr>>(args: &[S]) -> Output {
    ndnpy_env(args, &[])
}

/// [`ndnpy`] with extra environment variables.
pub fn ndnpy_env<S: AsRef<OsStr>>(args: &[S], env: &[(&str, &str)]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_ndnpy"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root())
        .output()
        .expect("run ndnpy");
    // A panic exits with 101: never acceptable, whatever the input.
    assert_ne!(
        out.status.code(),
        Some(101),
        "panic: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn code(out: &Output) -> i32 {
    out.status.code().expect("exit code")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// The Python with NumPy that checks outputs: `$NDNPY_PYTHON` or `python3`.
///
/// `None` (with a line on stderr saying why the check is skipped) where
/// that Python has no NumPy, so that the README's test command passes on
/// a fresh machine; where `CI` is set the check is required and a missing
/// NumPy fails the test.
pub fn numpy_python(test: &str) -> Option<String> {
    let python = std::env::var("NDNPY_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let probe = Command::new(&python).args(["-c", "import numpy"]).output();
    match probe {
        Ok(o) if o.status.success() => Some(python),
        other => {
            let why = match other {
                Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_owned(),
                Err(e) => e.to_string(),
            };
            if std::env::var_os("CI").is_some() {
                panic!("{test}: {python} with NumPy is required where CI is set: {why}");
            }
            eprintln!("SKIPPED {test}: {python} has no NumPy ({why})");
            None
        }
    }
}

/// The item of a `--json` output array whose `name` ends with `:NAME`.
pub fn named(all: &Value, name: &str) -> Value {
    all.as_array()
        .expect("a JSON array")
        .iter()
        .find(|v| {
            v["name"]
                .as_str()
                .unwrap_or("")
                .ends_with(&format!(":{name}"))
        })
        .unwrap_or_else(|| panic!("no {name}"))
        .clone()
}
