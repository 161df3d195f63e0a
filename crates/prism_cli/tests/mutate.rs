//! The command-line mutation fuzzer (`prism-mutate`) finds nothing in a short run, and does
//! find a fault when the binary it drives misbehaves: a fuzzer that cannot fail proves nothing.

mod common;

use common::{root, scratch, stdout};
use std::process::Command;

fn mutate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_prism-mutate")).args(args).current_dir(root()).output().expect("prism-mutate runs")
}

#[test]
fn a_short_run_finds_no_fault() {
    let out = mutate(&["--mutants", "300", "--seconds", "600", "--seed", "7", "--prism", env!("CARGO_BIN_EXE_prism")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("prism-mutate: 300 mutants"), "{text}");
    assert!(text.contains("faults: 0"), "{text}");
    // The mutants reach every command and both outcomes.
    for seen in ["check exit 0", "check exit 1", "run exit 0", "run exit 2", "build exit"] {
        assert!(text.contains(seen), "no `{seen}` in {text}");
    }
}

#[test]
fn a_misbehaving_binary_is_caught() {
    let dir = scratch("mutate-fake");
    for (name, body, expect) in [
        ("panics", "echo \"thread 'main' panicked at src/x.rs\" >&2; exit 101", "FAULT: panic"),
        ("silent", "exit 1", "FAULT: exit code 1 with nothing on stderr"),
        ("aborts", "kill -ABRT $$", "FAULT: killed by a signal"),
        ("hangs", "sleep 30", "FAULT: still running after 1s (killed) with no block finishing"),
        ("slow", "printf 'running: blocks 1/9\\r' >&2; sleep 0.3; printf 'running: blocks 2/9\\r' >&2; sleep 30", ""),
        ("clobbers", "for a; do :; done; printf x > \"$2\"; echo bad >&2; exit 1", "FAULT: changed its source file"),
    ] {
        let fake = dir.join(name);
        std::fs::write(&fake, format!("#!/bin/sh\n{body}\n")).expect("scratch is writable");
        let chmod = Command::new("chmod").arg("+x").arg(&fake).status().expect("chmod runs");
        assert!(chmod.success());
        let out = mutate(&["--mutants", "1", "--timeout", "1", "--prism", fake.to_str().expect("utf-8 path")]);
        let text = stdout(&out);
        if expect.is_empty() {
            // A big launch still finishing blocks at the timeout is not a hang.
            assert!(text.contains("faults: 0"), "{name}: {text}");
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{name}: {text}");
        assert!(text.contains(expect), "{name}: {text}");
    }
}
