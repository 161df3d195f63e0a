//! A test that needs a missing tool says so: `common::run_with_tools` reports it ignored with
//! a line on stderr in a normal run, and fails under CI. This harness runs itself again as
//! the child under test (`PRISM_SKIP_PROBE=1`), without and with `CI`.

mod common;

use std::process::Command;

fn main() {
    if std::env::var_os("PRISM_SKIP_PROBE").is_some() {
        common::run_with_tools("probe", None::<()>, "probe-tool", |()| Ok(()));
    }
    let me = std::env::current_exe().expect("the test binary's path");
    let child = |ci: bool| {
        let mut c = Command::new(&me);
        c.env("PRISM_SKIP_PROBE", "1").env_remove("CI");
        if ci {
            c.env("CI", "1");
        }
        let out = c.output().expect("the harness runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, stdout, stderr) = child(false);
    assert!(ok, "an ignored test does not fail the run: {stdout}{stderr}");
    assert!(stdout.contains("test probe ... ignored"), "{stdout}");
    assert!(stderr.contains("probe-tool not found: `probe` is ignored (run scripts/install-nvcc.sh"), "{stderr}");
    let (ok, stdout, _) = child(true);
    assert!(!ok, "under CI a missing tool fails: {stdout}");
    assert!(stdout.contains("probe-tool not found under CI"), "{stdout}");
    #[allow(clippy::print_stdout)]
    {
        println!("test a_missing_tool_is_ignored_visibly_and_fails_under_ci ... ok");
    }
}
