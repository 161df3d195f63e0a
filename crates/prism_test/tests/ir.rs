//! The kernel IR over the whole accepted corpus (and the run corpus): lowering, and lowering
//! plus synchronisation inference and barrier motion, produce IR the verifier accepts, and the
//! text form round-trips (`print(parse(print(ir))) == print(ir)`).

use prism_diag::Problems;
use prism_test::{prism_files, repo_root, target_for};

#[test]
fn lowering_verifies_and_round_trips() {
    let mut failures = Vec::new();
    let mut n = 0;
    let mut files = prism_files(&repo_root().join("tests/ui/accept"));
    files.extend(prism_files(&repo_root().join("tests/ui/run")));
    for path in files {
        let src = std::fs::read_to_string(&path).expect("readable");
        let target = target_for(&src).expect("directive");
        let mut map = prism_span::SourceMap::default();
        let file = map.add(path.display().to_string(), src.clone());
        let mut problems = Problems::default();
        let Some(lowered) = prism_driver::lowered(&mut map, file, &target, &mut problems) else { continue };
        let opts = prism_driver::Options { target, ..prism_driver::Options::default() };
        let Some(synced) = prism_driver::compile(&mut map, file, &opts, &mut problems) else { continue };
        n += 1;
        for ir in [lowered, synced.ir().clone()] {
            check(&path, &ir, &mut failures);
        }
    }
    assert!(n > 0, "no accepted programs found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn check(path: &std::path::Path, ir: &prism_ir::ir::Program, failures: &mut Vec<String>) {
    {
        let errs = prism_ir::verify(ir);
        if !errs.is_empty() {
            failures.push(format!(
                "{}: verifier: {}",
                path.display(),
                errs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")
            ));
            return;
        }
        let text = prism_ir::print(ir);
        match prism_ir::parse(&text) {
            Err(e) => failures.push(format!("{}: parse: {e}", path.display())),
            Ok(back) => {
                let again = prism_ir::print(&back);
                if again != text {
                    failures.push(format!(
                        "{}: round trip differs:\n{}",
                        path.display(),
                        prism_test::diff(&text, &again)
                    ));
                }
                let errs = prism_ir::verify(&back);
                if !errs.is_empty() {
                    failures.push(format!("{}: verifier after parse: {:?}", path.display(), errs));
                }
            }
        }
    }
}
