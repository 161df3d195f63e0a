//! The CUDA backend over every accepted program of `tests/ui/accept`:
//!
//! - each emits without errors, deterministically, and matches the `.cu` snapshot next to
//!   its source (`foo.prism` → `foo.cu`; rewrite with `PRISM_BLESS=1`);
//! - the barrier counts before and after optimisation match `tests/corpus_barriers.txt`,
//!   so a change in what the optimiser removes shows in review.
//!
//! nvcc compiles these snapshots in `prism_gpu`'s `nvcc` test.

mod common;

use common::emit_file;
use prism_test::{prism_files, repo_root, snapshot};
use std::path::Path;

#[test]
fn every_accepted_program_emits_and_matches_its_snapshot() {
    let root = repo_root();
    let mut failures = Vec::new();
    let mut counts = String::from(
        "# Barriers per accepted program (tests/ui/accept): as inferred -> after prism_sync::opt.\n\
         # Rewrite with `PRISM_BLESS=1 cargo test -p prism_cuda --test corpus`.\n",
    );
    let (mut before, mut after) = (0, 0);
    for path in prism_files(&root.join("tests/ui/accept")) {
        let (rel, out) = emit_file(&path);
        if !out.errors.is_empty() {
            let msgs: Vec<String> = out.errors.iter().map(|e| e.message.clone()).collect();
            failures.push(format!("{rel}: {}", msgs.join("; ")));
        }
        let (_, again) = emit_file(&path);
        if again.text != out.text {
            failures.push(format!("{rel}: output differs between two runs"));
        }
        if let Err(e) = snapshot(&path.with_extension("cu"), &out.text) {
            failures.push(e);
        }
        let short = rel.trim_start_matches("tests/ui/accept/");
        counts.push_str(&format!("{short}: {} -> {}\n", out.barriers.before, out.barriers.after));
        before += out.barriers.before;
        after += out.barriers.after;
    }
    counts.push_str(&format!("total: {before} -> {after}\n"));
    let counts_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus_barriers.txt");
    if let Err(e) = snapshot(&counts_path, &counts) {
        failures.push(e);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
