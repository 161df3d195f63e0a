//! Filetests for the middle end: `tests/pir/<pass>/NAME.pir` is IR text, the pass named by
//! the folder (`contract`, `infer`, `motion`, `opt`) runs on it, and the IR after the pass, followed by
//! the pass's report as comments, must equal the snapshot `NAME.out` beside it
//! (`PRISM_BLESS=1 cargo test -p prism_test --test pir` rewrites the snapshots). The IR is
//! verified before and after the pass.
//!
//! A second check ties the files to the real pipeline: where one program has files for two
//! consecutive passes (`infer/X.pir` and `motion/X.pir`, or `motion/X.pir` and `opt/X.pir`),
//! the first pass's output must be exactly the second pass's input, which
//! `cargo run -p prism_sync --example sync_ir -- SOURCE --stage ...` made from the source.
//! So a pass gives the same result on parsed IR (no spans) as inside the pipeline.

use libtest_mimic::{Arguments, Failed, Trial};
use prism_ir::ir::Program;
use prism_test::{repo_root, snapshot};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const PASSES: [&str; 4] = ["contract", "infer", "motion", "opt"];

fn main() {
    let args = Arguments::from_args();
    let root = repo_root().join("tests/pir");
    let mut trials = Vec::new();
    for pass in PASSES {
        for path in pir_files(&root.join(pass)) {
            let name = format!("{pass}/{}", stem(&path));
            trials.push(Trial::test(name, move || run_file(pass, &path)));
        }
    }
    for pair in PASSES.windows(2) {
        let (first, second) = (pair[0], pair[1]);
        for path in pir_files(&root.join(first)) {
            let next = root.join(second).join(path.file_name().expect("a file"));
            if next.exists() {
                trials.push(Trial::test(format!("{first}/{} feeds {second}", stem(&path)), move || {
                    consecutive(first, &path, &next)
                }));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

fn pir_files(dir: &Path) -> Vec<PathBuf> {
    prism_test::files_with_extension(dir, "pir")
}

fn stem(p: &Path) -> String {
    p.file_stem().expect("a file name").to_string_lossy().into_owned()
}

fn load(path: &Path) -> Result<Program, Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let ir = prism_ir::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    verified(&ir, "as written")?;
    Ok(ir)
}

fn verified(ir: &Program, when: &str) -> Result<(), Failed> {
    let errors = prism_ir::verify(ir);
    if errors.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the IR {when} does not verify:\n  {}",
        errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  ")
    )
    .into())
}

/// Runs `pass` on `ir` and returns its report as comment lines.
fn run_pass(pass: &str, ir: &mut Program) -> String {
    let mut out = String::new();
    match pass {
        "contract" => {
            let n = prism_ir::contract::contract(ir);
            let _ = writeln!(out, "; fused {n} product(s)");
        }
        "infer" => {
            let r = prism_sync::infer(ir, &prism_sync::Options::default());
            let _ = writeln!(out, "; inferred {} barrier(s)", r.barriers.len());
            for b in &r.barriers {
                let f = &ir.functions[b.func.index()];
                let _ = writeln!(out, ";   @{}: {} for `{}`", f.name, b.scope, f.mems[b.mem.index()].name);
            }
            for u in &r.unresolved {
                let _ = writeln!(out, "; unresolved: @{} {}", ir.functions[u.func.index()].name, u.scope);
            }
            let _ =
                writeln!(out, "; split conflicts: {}, async issues: {}", r.split_conflicts.len(), r.async_issues.len());
        }
        "motion" => {
            let r = prism_sync::motion::motion(ir);
            let _ = writeln!(out, "; split {} barrier(s), kept {} whole", r.split, r.kept);
        }
        "opt" => {
            let c = prism_sync::opt::optimize(ir);
            let _ = writeln!(out, "; barriers: {} before, {} after", c.before, c.after);
        }
        _ => unreachable!("PASSES lists the folders"),
    }
    out
}

fn run_file(pass: &str, path: &Path) -> Result<(), Failed> {
    let mut ir = load(path)?;
    let report = run_pass(pass, &mut ir);
    verified(&ir, &format!("after {pass}"))?;
    let text = format!(
        "; {pass} of {}\n{}{report}",
        path.file_name().expect("a file").to_string_lossy(),
        prism_ir::print(&ir)
    );
    snapshot(&path.with_extension("out"), &text).map_err(Into::into)
}

fn consecutive(first: &str, path: &Path, next: &Path) -> Result<(), Failed> {
    let mut ir = load(path)?;
    run_pass(first, &mut ir);
    let want = prism_ir::print(&load(next)?);
    let got = prism_ir::print(&ir);
    if got == want {
        return Ok(());
    }
    Err(format!(
        "{first} on {} differs from {} (the pipeline's next input):\n{}",
        path.display(),
        next.display(),
        prism_test::diff(&want, &got)
    )
    .into())
}
