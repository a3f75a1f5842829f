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
