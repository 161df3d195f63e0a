//! Every launch of the corpus is independent of the schedule.
//!
//! Every accepted program (`tests/ui/accept/**`) with a kernel says how to run it, with
//! `# launch:` lines at its end (`crates/prism_test/src/run.rs` has the format), or says
//! `# launch: none -- REASON` when it cannot run on the simulator. The run-only programs in
//! `tests/ui/run/**` have launch lines too (`buggy_*` kernels, which are wrong on purpose,
//! are tested by `run_checks.rs` instead).
//!
//! Each launch must run clean with every dynamic check on under the deterministic schedule
//! and under 20 random ones (seeds 1 to 20), and leave the same bits in every buffer under
//! all 21: the results of a race-free program cannot depend on the schedule.
//!
//! Programs in `tests/ui/run/` that name an `# original:` are copies of an accepted kernel
//! with their written `__syncthreads()`/`__syncwarp()` removed, so that they rely only on
//! inferred barriers; each of their launches must also leave the same buffers as the same
//! launch of the original (`tests/barriers.rs` removes those inferred barriers one at a time).

use prism_interp::{Config, Module};
use prism_test::repo_root;
use prism_test::run::{
    LaunchLine, buffer_bits, clean_launches, compile, corpus_files, describe_report, first_difference, launch_lines,
    par_map, run, schedule_dependent,
};
use std::path::{Path, PathBuf};

/// The random schedules every launch runs under, besides the deterministic one.
const SEEDS: std::ops::RangeInclusive<u64> = 1..=20;

/// A program's path relative to the repository root.
fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

/// The `# original: PATH` a run-only copy names, if any.
fn original_of(src: &str) -> Option<&str> {
    src.lines().find_map(|l| l.strip_prefix("# original:")).map(str::trim)
}

#[test]
fn every_accepted_kernel_has_a_launch_or_a_reason() {
    let root = repo_root();
    let mut failures = Vec::new();
    let (mut programs, mut launches, mut none) = (0, 0, 0);
    for path in prism_test::prism_files(&root.join("tests/ui/accept")) {
        let name = rel(&root, &path);
        let src = std::fs::read_to_string(&path).expect("readable");
        let lines = match launch_lines(&src) {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let module = match compile(&src) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let kernels = module.kernels();
        let reasons = lines.iter().filter(|l| matches!(l, LaunchLine::None(_))).count();
        let runs: Vec<&str> = lines
            .iter()
            .filter_map(|l| match l {
                LaunchLine::Run(l) => Some(l.kernel.as_str()),
                LaunchLine::None(_) => None,
            })
            .collect();
        if kernels.is_empty() {
            if !lines.is_empty() {
                failures.push(format!("{name}: has `# launch:` lines but no kernel"));
            }
            continue;
        }
        programs += 1;
        launches += runs.len();
        if reasons > 0 {
            none += 1;
            if reasons > 1 || !runs.is_empty() {
                failures.push(format!("{name}: `# launch: none` must be the file's only launch line"));
            }
            continue;
        }
        for k in &kernels {
            if !runs.contains(&k.name.as_str()) {
                failures.push(format!(
                    "{name}: kernel `{}` has no `# launch:` line (or `# launch: none -- REASON`)",
                    k.name
                ));
            }
        }
        for r in runs {
            if module.kernel(r).is_none() {
                failures.push(format!("{name}: `# launch: {r}`: no such kernel"));
            }
        }
        // Launch lines go at the end of the file, after the code: other tests refer to line
        // numbers of the programs, which appended lines cannot move.
        let lines_of: Vec<&str> = src.lines().collect();
        let last_code = lines_of.iter().rposition(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        let first_launch = lines_of.iter().position(|l| l.trim_start().starts_with("# launch:"));
        if let (Some(code), Some(launch)) = (last_code, first_launch)
            && launch < code
        {
            failures.push(format!("{name}:{}: launch lines belong after the last line of code", launch + 1));
        }
    }
    assert!(failures.is_empty(), "{} problems:\n  {}", failures.len(), failures.join("\n  "));
    assert!(programs >= 90, "only {programs} accepted programs with kernels: the corpus went missing");
    assert!(launches >= 90, "only {launches} launches");
    assert!(none <= 10, "{none} programs cannot run: keep `# launch: none` for what the simulator cannot do");
}

/// What one program's launches found.
#[derive(Default)]
struct Found {
    launches: usize,
    failures: Vec<String>,
}

fn check_program(root: &Path, path: &PathBuf) -> Found {
    let name = rel(root, path);
    let dir = path.parent().expect("a file has a directory");
    let src = std::fs::read_to_string(path).expect("readable");
    let mut found = Found::default();
    let fail = |found: &mut Found, msg: String| found.failures.push(format!("{name}: {msg}"));
    let launches = match clean_launches(&src) {
        Ok(l) => l,
        Err(e) => {
            fail(&mut found, e);
            return found;
        }
    };
    if launches.is_empty() {
        return found;
    }
    let module = match compile(&src) {
        Ok(m) => m,
        Err(e) => {
            fail(&mut found, e);
            return found;
        }
    };
    let original: Option<Module> = match original_of(&src) {
        None => None,
        Some(o) => match std::fs::read_to_string(root.join(o)).map_err(|e| e.to_string()).and_then(|s| compile(&s)) {
            Ok(m) => Some(m),
            Err(e) => {
                fail(&mut found, format!("original {o}: {e}"));
                return found;
            }
        },
    };
    for launch in &launches {
        found.launches += 1;
        let k = &launch.kernel;
        let Some(info) = module.kernel(k) else {
            fail(&mut found, format!("no kernel `{k}`"));
            continue;
        };
        let compare = !schedule_dependent(&name, launch);
        let mut base: Option<Vec<(String, Vec<u64>)>> = None;
        let mut differed = false;
        for seed in std::iter::once(None).chain(SEEDS.map(Some)) {
            let sched = seed.map_or("the deterministic schedule".to_string(), |s| format!("seed {s}"));
            let (args, out) = match run(&module, launch, dir, Config { seed, ..Config::default() }) {
                Ok(r) => r,
                Err(e) => {
                    fail(&mut found, format!("`{k}`: {e}"));
                    break;
                }
            };
            if let Some(r) = out.reports.first() {
                let more = if out.reports.len() > 1 {
                    format!(" (and {} more)", out.reports.len() - 1)
                } else {
                    String::new()
                };
                fail(&mut found, format!("`{k}` under {sched}: {}{more}", describe_report(&src, r)));
                break;
            }
            let bits = buffer_bits(&info, &args);
            match &base {
                Some(b) if !compare => differed |= first_difference(b, &bits).is_some(),
                None => base = Some(bits),
                Some(b) => {
                    if let Some(d) = first_difference(b, &bits) {
                        fail(&mut found, format!("`{k}` depends on the schedule: under {sched}, {d}"));
                        break;
                    }
                }
            }
        }
        if !compare && !differed && found.failures.is_empty() {
            fail(&mut found, format!("`{k}` is listed as schedule-dependent but gave the same buffers 21 times"));
        }
        if let (Some(orig), Some(base)) = (&original, &base) {
            match run(orig, launch, dir, Config::default()) {
                Ok((args, out)) if out.is_clean() => {
                    let info = orig.kernel(k).expect("ran");
                    if let Some(d) = first_difference(&buffer_bits(&info, &args), base) {
                        fail(&mut found, format!("`{k}` differs from the original: {d}"));
                    }
                }
                Ok((_, out)) => {
                    fail(&mut found, format!("`{k}` of the original: {}", describe_report(&src, &out.reports[0])))
                }
                Err(e) => fail(&mut found, format!("`{k}` of the original: {e}")),
            }
        }
    }
    found
}

#[test]
fn every_launch_runs_clean_and_the_same_under_21_schedules() {
    let root = repo_root();
    let files = corpus_files(&root);
    let results = par_map(&files, |p| check_program(&root, p));
    let launches: usize = results.iter().map(|f| f.launches).sum();
    let failures: Vec<String> = results.into_iter().flat_map(|f| f.failures).collect();
    assert!(failures.is_empty(), "{} problems:\n  {}", failures.len(), failures.join("\n  "));
    assert!(launches >= 130, "only {launches} launches ran");
}

#[test]
fn copies_without_written_barriers_rely_on_inferred_ones() {
    let root = repo_root();
    let mut copies = 0;
    let mut failures = Vec::new();
    for path in prism_test::prism_files(&root.join("tests/ui/run")) {
        let name = rel(&root, &path);
        let src = std::fs::read_to_string(&path).expect("readable");
        let Some(original) = original_of(&src) else { continue };
        copies += 1;
        if !root.join(original).is_file() {
            failures.push(format!("{name}: the original {original} does not exist"));
        }
        let code = |l: &str| l.split('#').next().unwrap_or("").to_string();
        if src.lines().any(|l| code(l).contains("__syncthreads()") || code(l).contains("__syncwarp()")) {
            failures.push(format!("{name}: a copy that relies on inferred barriers writes a barrier"));
        }
        if prism_test::run::launches(&src).map_or(true, |l| l.is_empty()) {
            failures.push(format!("{name}: no `# launch:` line"));
        }
        match prism_test::synced(&name, &src, &prism_driver::Options::default()) {
            Err(e) => failures.push(e),
            Ok(s) if s.report().barriers.is_empty() => {
                failures.push(format!("{name}: inference inserts no barrier, so the copy tests nothing"))
            }
            Ok(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(copies >= 10, "only {copies} copies without written barriers");
}
