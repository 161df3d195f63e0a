//! Running the `prism` binary from the CLI tests.

#![allow(dead_code)] // Each test file uses its own subset.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `prism` in the repository root, without colour, with extra environment variables.
pub fn prism_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_prism"));
    c.args(args).current_dir(root()).env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the binary runs")
}

/// Runs `prism` in the repository root, without colour.
pub fn prism(args: &[&str]) -> Output {
    prism_env(args, &[])
}

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A fresh scratch directory of this test process's own.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("prism-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The saxpy kernel of the corpus, which both test files run.
pub const SAXPY: &str = "tests/ui/accept/kernels/01_saxpy_grid_stride.prism";
