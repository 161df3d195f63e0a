//! The bounded soundness search of CI (`docs/soundness.md` §10): a fixed seed and 1500
//! generated programs, every accepted one run under several schedules with every
//! check on and with each inferred barrier removed in turn. Fails on any finding not listed
//! in `tests/ui/soundness/known.txt`, printing the minimised program, and on a listed one
//! that no longer fails. The long search is the `soundness` binary.

#![allow(clippy::print_stdout)]

use prism_test::repo_root;
use prism_test::soundness::{Options, search};
use std::time::Duration;

#[test]
fn bounded_soundness_search_finds_nothing_new() {
    // 1500: programs with library calls take longer to check and run than the ones before
    // generics, modules and the standard library were generated, and CI's time stays where
    // it was (BENCHMARKS.md, "Soundness search").
    let programs = std::env::var("PRISM_SOUNDNESS_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(1500);
    let opts = Options { seed: 20261123, programs, time: Duration::from_secs(600), ..Options::default() };
    let summary = search(&opts);
    println!("{}", summary.render());
    let known_text = std::fs::read_to_string(repo_root().join("tests/ui/soundness/known.txt")).expect("the known list");
    let known: Vec<u64> = known_text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next().and_then(|s| s.parse().ok()))
        .collect();
    let mut problems = Vec::new();
    for f in &summary.findings {
        if !known.contains(&f.seed) {
            problems.push(format!("seed {}: {} (not in known.txt):\n{}", f.seed, f.failure.describe(), f.src));
        }
    }
    for k in &known {
        if *k >= opts.seed && *k < opts.seed + summary.programs as u64 && !summary.findings.iter().any(|f| f.seed == *k)
        {
            problems.push(format!("seed {k} is listed in known.txt but no longer fails: move it to a regression test"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    // The search must keep testing something: most programs accepted, barriers inferred.
    assert!(summary.accepted * 2 > summary.programs, "only {} of {} accepted", summary.accepted, summary.programs);
    assert!(summary.mutants > summary.programs / 2, "only {} inferred barriers to remove", summary.mutants);
}
