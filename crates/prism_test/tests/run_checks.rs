//! The simulator's dynamic checks, tested with paired programs in `tests/ui/run/checks/`.
//!
//! Each file holds `buggy_*` and `fixed_*` kernels and a `# launch:` line for each. The
//! checker accepts them all (the bugs hide in `with unsafe:` code or in index functions the
//! checker cannot judge). A buggy launch must report, and every report must land on a line
//! annotated `# report: [code]` with its code; every annotation must be hit by some launch.
//! A fixed launch must run clean under the default schedule and several random ones.

use prism_interp::Config;
use prism_test::repo_root;
use prism_test::run::{compile, launches, report_annotations, run};
use std::collections::BTreeSet;

const SEEDS: [u64; 5] = [1, 2, 3, 17, 99];

#[test]
fn buggy_programs_are_caught_and_fixed_ones_run_clean() {
    let dir = repo_root().join("tests/ui/run/checks");
    let mut failures = Vec::new();
    let mut files = prism_test::prism_files(&dir);
    files.sort();
    assert!(files.len() >= 5, "the check corpus is missing");
    let mut codes_seen = BTreeSet::new();
    for path in files {
        let name = path.file_name().expect("file name").to_string_lossy().into_owned();
        let src = std::fs::read_to_string(&path).expect("readable");
        let module = match compile(&src) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let mut map = prism_span::SourceMap::default();
        let file = map.add(name.clone(), src.clone());
        let line_of = |span: prism_span::Span| map.file(file).line_index(span.start) as u32 + 1;
        // A report inside the standard library (a `trap()` guarding a precondition) names
        // the program's own call as its second label: that is the line to annotate.
        let report_line = |r: &prism_interp::Report| {
            let own = |s: &prism_span::Span| s.file == file;
            let span = if own(&r.span) { r.span } else { r.other.as_ref().map(|o| o.0).filter(own).unwrap_or(r.span) };
            line_of(span)
        };
        let annotations = report_annotations(&src);
        let mut hit = BTreeSet::new();
        let launches = match launches(&src) {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        for launch in &launches {
            let k = &launch.kernel;
            let buggy = k.starts_with("buggy");
            let mut configs = vec![Config::default()];
            configs.extend(SEEDS.iter().map(|&s| Config { seed: Some(s), ..Config::default() }));
            for cfg in configs {
                let sched = cfg.seed.map_or("the default schedule".to_string(), |s| format!("seed {s}"));
                let outcome = match run(&module, launch, &dir, cfg) {
                    Ok((_, o)) => o,
                    Err(e) => {
                        failures.push(format!("{name}: `{k}`: {e}"));
                        break;
                    }
                };
                if buggy && outcome.is_clean() {
                    failures.push(format!("{name}: `{k}` ran clean under {sched}, but it has a bug"));
                }
                if !buggy && !outcome.is_clean() {
                    let r = &outcome.reports[0];
                    failures.push(format!(
                        "{name}: `{k}` reported [{}] {} at line {} under {sched}",
                        r.kind.code(),
                        r.message,
                        report_line(r)
                    ));
                }
                for r in &outcome.reports {
                    let line = report_line(r);
                    let code = r.kind.code();
                    match annotations.iter().position(|(l, c)| *l == line && c == code) {
                        Some(i) => {
                            hit.insert(i);
                            codes_seen.insert(code);
                        }
                        None if buggy => failures.push(format!(
                            "{name}: `{k}` reported [{code}] {} at line {line}, which has no `# report: [{code}]` ({sched})",
                            r.message
                        )),
                        None => {}
                    }
                }
            }
        }
        for (i, (line, code)) in annotations.iter().enumerate() {
            if !hit.contains(&i) {
                failures.push(format!("{name}:{line}: `# report: [{code}]` was never reported"));
            }
        }
    }
    for code in [
        "data-race",
        "barrier-divergence",
        "out-of-bounds",
        "deadlock",
        "non-uniform",
        "division-by-zero",
        "trap",
        "fuel-exhausted",
        "uninitialized-read",
    ] {
        if !codes_seen.contains(code) {
            failures.push(format!("no buggy program is caught with [{code}]"));
        }
    }
    assert!(failures.is_empty(), "{} problems:\n  {}", failures.len(), failures.join("\n  "));
}
