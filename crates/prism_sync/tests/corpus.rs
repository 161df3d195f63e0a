//! Synchronisation inference over every accepted program in `tests/ui/accept`: the result
//! passes the IR verifier, is deterministic, and inserts the number of barriers recorded in
//! `tests/corpus_barriers.txt` (a snapshot, so that a change in what the pass does shows up
//! in review). `PRISM_BLESS=1 cargo test -p prism_sync --test corpus` rewrites the snapshot.
//!
//! Many corpus kernels write their barriers out. For those, the snapshot also counts what
//! inference inserts once every statement `__syncthreads()` or `__syncwarp()` is replaced by
//! `pass`: the inferred barriers should then take the written ones' places.

use prism_driver::Options;
use prism_sync::SyncReport;
use prism_test::{prism_files, repo_root};
use std::collections::BTreeMap;
use std::path::Path;

/// The target a file's `# arch:` directive selects (the default when it names none).
fn target_for(src: &str) -> prism_types::Target {
    prism_test::target_for(src).unwrap_or_default()
}

/// The source with every barrier statement replaced by `pass`, if it has any.
fn without_barriers(src: &str) -> Option<String> {
    let mut changed = false;
    let out: Vec<String> = src
        .lines()
        .map(|l| match l.trim() {
            "__syncthreads()" | "__syncwarp()" => {
                changed = true;
                format!("{}pass", &l[..l.len() - l.trim_start().len()])
            }
            _ => l.to_string(),
        })
        .collect();
    changed.then(|| out.join("\n") + "\n")
}

/// `N (scope xK, ...)` and the unresolved edges, for the snapshot.
fn counts(report: &SyncReport) -> String {
    let mut scopes: BTreeMap<String, usize> = BTreeMap::new();
    for b in &report.barriers {
        *scopes.entry(b.scope.to_string()).or_default() += 1;
    }
    let mut out = report.barriers.len().to_string();
    if !scopes.is_empty() {
        let parts: Vec<String> = scopes.iter().map(|(s, n)| format!("{s} x{n}")).collect();
        out.push_str(&format!(" ({})", parts.join(", ")));
    }
    if !report.unresolved.is_empty() {
        out.push_str(&format!(", {} unresolved", report.unresolved.len()));
    }
    out
}

/// The IR after inference (before motion and optimisation: this snapshot counts what
/// inference places) and the report; `Err` with the error codes when the pipeline rejects.
///
/// Every answer inference takes from a kept search is checked against a search of its own
/// edge (`check_sync_searches`): the corpus is where those shortcuts meet loops, scopes,
/// calls and explicit barriers.
fn infer(rel: &str, src: &str) -> Result<(String, SyncReport), String> {
    let defines = prism_test::defines_for(src).unwrap_or_default();
    let opts = Options {
        target: target_for(src),
        defines,
        motion: false,
        optimize: false,
        check_sync_searches: true,
        ..Options::default()
    };
    let (_, problems, synced) = prism_driver::compile_text(rel, src, &opts);
    match synced {
        Some(s) => Ok((prism_ir::print(s.ir()), s.report().clone())),
        None => {
            let codes: Vec<&str> = problems
                .diagnostics()
                .iter()
                .filter(|d| d.severity == prism_diag::Severity::Error)
                .map(|d| d.code)
                .collect();
            Err(codes.join(", "))
        }
    }
}

#[test]
fn corpus_verifies_is_deterministic_and_matches_the_snapshot() {
    let root = repo_root();
    let accept = root.join("tests/ui/accept");
    let mut lines = Vec::new();
    let (mut total, mut files) = (0, 0);
    let mut failures = Vec::new();
    for path in prism_files(&accept) {
        let rel = path.strip_prefix(&accept).expect("under accept").to_string_lossy().replace('\\', "/");
        let src = std::fs::read_to_string(&path).expect("readable");
        let result = std::panic::catch_unwind(|| (infer(&rel, &src), infer(&rel, &src)));
        let ((first, report), (second, again)) = match result {
            Ok((Ok(a), Ok(b))) => (a, b),
            Ok((Err(e), _) | (_, Err(e))) => {
                failures.push(format!("{rel}: rejected: {e}"));
                continue;
            }
            Err(_) => {
                failures.push(format!("{rel}: inference panicked or failed verification"));
                continue;
            }
        };
        if first != second || report != again {
            failures.push(format!("{rel}: two runs differ"));
        }
        let mut line = format!("{rel}: {}", counts(&report));
        if let Some(stripped) = without_barriers(&src) {
            match std::panic::catch_unwind(|| infer(&rel, &stripped)) {
                Ok(Ok((_, r))) => line.push_str(&format!("; without its written barriers: {}", counts(&r))),
                // Some written barriers are not optional: without them the program is
                // rejected (an ordering no barrier can provide), or does not check.
                Ok(Err(e)) if e.contains("unplaceable-barrier") => {
                    line.push_str(&format!("; without its written barriers: rejected ({e})"))
                }
                Ok(Err(_)) => {}
                Err(_) => failures.push(format!("{rel}: inference failed without written barriers")),
            }
        }
        lines.push(line);
        total += report.barriers.len();
        files += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(files > 100, "the corpus went missing: {files} files");
    let mut text = String::from(
        "# Barriers inferred per accepted program (tests/ui/accept), with their scopes.\n\
         # Rewrite with `PRISM_BLESS=1 cargo test -p prism_sync --test corpus`.\n",
    );
    for l in lines {
        text.push_str(&l);
        text.push('\n');
    }
    text.push_str(&format!("total: {total} barriers in {files} programs\n"));
    let snap = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus_barriers.txt");
    if let Err(e) = prism_test::snapshot(&snap, &text) {
        panic!("{e}");
    }
}
