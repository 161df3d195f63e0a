//! Every diagnostic code has an explanation, and every example in an explanation does what
//! it says: a ```` ```prism,reject ```` block produces the code it explains, a
//! ```` ```prism,accept ```` block produces no errors (and, given a `# launch:` line, runs
//! clean on the simulator), a ```` ```prism,run ```` block is accepted but its run
//! reports the code, a ```` ```prism,build ```` block is accepted but the CUDA backend
//! refuses it, and a ```` ```prism,sync ```` block is accepted and synchronisation
//! inference reports the code (an accept example of a `sync` code must not report it).

use prism_diag::{Severity, codes::CODES};
use prism_test::{check_text, repo_root};
use prism_types::Target;

/// The fenced blocks of a Markdown text with their info strings.
fn blocks(md: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for line in md.lines() {
        match (&mut cur, line.trim_start().strip_prefix("```")) {
            (None, Some(info)) => cur = Some((info.trim().to_string(), String::new())),
            (Some(_), Some(_)) => out.push(cur.take().expect("open block")),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

#[test]
fn every_code_is_explained_with_checked_examples() {
    let mut failures = Vec::new();
    for info in CODES {
        let text = info.explanation;
        if !text.starts_with(&format!("# {}", info.code)) {
            failures.push(format!("{}: explanation must start with `# {}`", info.code, info.code));
        }
        let bs = blocks(text);
        let rejects: Vec<&String> = bs.iter().filter(|(i, _)| i == "prism,reject").map(|(_, b)| b).collect();
        let accepts: Vec<&String> = bs.iter().filter(|(i, _)| i == "prism,accept").map(|(_, b)| b).collect();
        let runs: Vec<&String> = bs.iter().filter(|(i, _)| i == "prism,run").map(|(_, b)| b).collect();
        let syncs: Vec<&String> = bs.iter().filter(|(i, _)| i == "prism,sync").map(|(_, b)| b).collect();
        let builds: Vec<&String> = bs.iter().filter(|(i, _)| i == "prism,build").map(|(_, b)| b).collect();
        match info.stage {
            "syntax" | "check" if rejects.is_empty() => {
                failures.push(format!("{}: no ```prism,reject example", info.code))
            }
            "run" if runs.is_empty() => failures.push(format!("{}: no ```prism,run example", info.code)),
            // Synchronisation reports notes and warnings on accepted programs (a `prism,sync`
            // example) and errors that reject a program (a `prism,reject` example).
            "sync" if syncs.is_empty() && rejects.is_empty() => {
                failures.push(format!("{}: no ```prism,sync or ```prism,reject example", info.code))
            }
            // A backend guard that no accepted program reaches (the checker refuses each
            // construct first) says so instead of showing one.
            "build" if builds.is_empty() && !text.contains("No program the checker accepts reaches this code") => {
                failures.push(format!("{}: no ```prism,build example", info.code))
            }
            _ => {}
        }
        for (n, b) in runs.iter().enumerate() {
            match run_example(b) {
                Ok(codes) if codes.contains(&info.code) => {}
                Ok(codes) => failures.push(format!("{}: run example {} reports {codes:?}", info.code, n + 1)),
                Err(e) => failures.push(format!("{}: run example {}: {e}", info.code, n + 1)),
            }
        }
        for (n, b) in accepts.iter().enumerate().filter(|(_, b)| b.contains("# launch:")) {
            match run_example(b) {
                Ok(codes) if codes.is_empty() => {}
                Ok(codes) => {
                    failures.push(format!("{}: accept example {} reports {codes:?} when run", info.code, n + 1))
                }
                Err(e) => failures.push(format!("{}: accept example {}: {e}", info.code, n + 1)),
            }
        }
        for (n, b) in builds.iter().enumerate() {
            match build_example(b) {
                Ok(true) => {}
                Ok(false) => failures.push(format!("{}: build example {} lowers to CUDA", info.code, n + 1)),
                Err(e) => failures.push(format!("{}: build example {}: {e}", info.code, n + 1)),
            }
        }
        for (n, b) in syncs.iter().enumerate() {
            match sync_example(b) {
                Ok(codes) if codes.contains(&info.code) => {}
                Ok(codes) => failures.push(format!("{}: sync example {} reports {codes:?}", info.code, n + 1)),
                Err(e) => failures.push(format!("{}: sync example {}: {e}", info.code, n + 1)),
            }
        }
        if info.stage == "sync" {
            for (n, b) in accepts.iter().enumerate() {
                match sync_example(b) {
                    Ok(codes) if !codes.contains(&info.code) => {}
                    Ok(codes) => failures.push(format!("{}: accept example {} reports {codes:?}", info.code, n + 1)),
                    Err(e) => failures.push(format!("{}: accept example {}: {e}", info.code, n + 1)),
                }
            }
        }
        for (n, b) in rejects.iter().enumerate() {
            let diags = match reject_example(b) {
                Ok(d) => d,
                Err(e) => {
                    failures.push(format!("{}: reject example {}: {e}", info.code, n + 1));
                    continue;
                }
            };
            if !diags.iter().any(|d| d.code == info.code) {
                let got: Vec<&str> = diags.iter().map(|d| d.code).collect();
                failures.push(format!("{}: reject example {} does not produce it (got {got:?})", info.code, n + 1));
            }
        }
        for (n, b) in accepts.iter().enumerate() {
            let (_, diags) = check_text("example.prism", b, &Target::default());
            let errors: Vec<&str> = diags.iter().filter(|d| d.severity == Severity::Error).map(|d| d.code).collect();
            if !errors.is_empty() {
                failures.push(format!("{}: accept example {} has errors {errors:?}", info.code, n + 1));
            }
        }
    }
    assert!(failures.is_empty(), "explanation problems:\n  {}", failures.join("\n  "));
}

/// The diagnostics of a reject example, with the defines of its `# define:` lines (as the
/// corpus files take them; `bad-define` needs one).
fn reject_example(src: &str) -> Result<Vec<prism_diag::Diagnostic>, String> {
    Ok(prism_test::check_text_with("example.prism", src, &Target::default(), &prism_test::defines_for(src)?).1)
}

/// Checks an example, which must have no errors, and infers its synchronisation; the codes
/// of what `prism check --explain-sync` would print about it.
fn sync_example(src: &str) -> Result<Vec<&'static str>, String> {
    let opts = prism_driver::Options { explain_sync: true, ..prism_driver::Options::default() };
    let (_, problems, synced) = prism_driver::compile_text("example.prism", src, &opts);
    let codes: Vec<&'static str> = problems.diagnostics().iter().map(|d| d.code).collect();
    if synced.is_none() {
        return Err(format!("has errors {codes:?}"));
    }
    Ok(codes)
}

/// Whether the CUDA backend refuses an accepted example.
fn build_example(src: &str) -> Result<bool, String> {
    let synced = prism_test::synced("example.prism", src, &prism_driver::Options::default())?;
    Ok(!prism_cuda::emit(&synced, &prism_cuda::Options::default()).errors.is_empty())
}

/// Compiles an example and runs its `# launch:` line; the codes of the reports.
fn run_example(src: &str) -> Result<Vec<&'static str>, String> {
    let m = prism_test::run::compile(src)?;
    let launches = prism_test::run::launches(src)?;
    let launch = launches.first().ok_or("no `# launch:` line")?;
    let (_, out) = prism_test::run::run(&m, launch, &repo_root(), prism_interp::Config::default())?;
    Ok(out.reports.iter().map(|r| r.kind.code()).collect())
}

#[test]
fn every_explanation_file_is_registered() {
    let dir = repo_root().join("crates/prism_diag/explain");
    for entry in std::fs::read_dir(&dir).expect("explain directory") {
        let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
        let code = name.strip_suffix(".md").expect("only .md files");
        assert!(CODES.iter().any(|c| c.code == code), "{name} is not a registered code");
    }
}

/// Each code that a `.prism` program can trigger has at least one rejected program in the
/// corpus annotated with it, so every rule has a test.
#[test]
fn every_code_has_a_reject_test() {
    let root = repo_root().join("tests/ui");
    let mut seen = std::collections::HashSet::new();
    for dir in ["reject", "regress", "accept"] {
        for p in prism_test::prism_files(&root.join(dir)) {
            let src = std::fs::read_to_string(&p).expect("readable");
            for a in prism_test::annotations(&src) {
                seen.insert(a.code);
            }
        }
    }
    let missing: Vec<&str> = CODES
        .iter()
        .filter(|c| matches!(c.stage, "syntax" | "check"))
        .map(|c| c.code)
        .filter(|c| !seen.contains(*c))
        .collect();
    assert!(missing.is_empty(), "codes with no annotated test in tests/ui: {missing:?}");
}
