//! `prism.std` (issue 12): every module checks on its own, `docs/std.md` lists exactly the
//! functions the code defines with their signatures, and each function runs against a
//! plain-Rust reference.

use prism_interp::{Arg, Config, Module};
use prism_test::repo_root;

/// `(module, "@requires(...) def f(...) -> ...")` for every function of the library.
fn signatures() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (module, src) in prism_std::MODULES {
        let lines: Vec<&str> = src.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(def) = line.strip_prefix("def ") else { continue };
            let requires =
                lines[..i].iter().rev().take_while(|l| l.starts_with('@')).find(|l| l.starts_with("@requires"));
            let sig =
                format!("{} def {}", requires.expect("every std function has `@requires`"), def.trim_end_matches(':'));
            out.push((module.to_string(), sig));
        }
    }
    out
}

#[test]
fn every_module_checks_on_its_own() {
    for (module, _) in prism_std::MODULES {
        let root = format!("import prism.std.{module}\n");
        let (map, problems, synced) =
            prism_driver::compile_text("main.prism", &root, &prism_driver::Options::default());
        assert!(
            synced.is_some() && problems.diagnostics().is_empty(),
            "prism.std.{module}:\n{}",
            prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never)
        );
    }
}

#[test]
fn the_documentation_lists_exactly_the_functions_with_their_signatures() {
    let doc = std::fs::read_to_string(repo_root().join("docs/std.md")).expect("docs/std.md");
    let mut failures = Vec::new();
    let sigs = signatures();
    for (module, sig) in &sigs {
        let section =
            doc.split(&format!("## `prism.std.{module}`")).nth(1).map(|s| s.split("\n## ").next().unwrap_or(s));
        match section {
            None => failures.push(format!("docs/std.md has no section for `prism.std.{module}`")),
            Some(s) if !s.contains(&format!("`{sig}`")) => {
                failures.push(format!("docs/std.md does not give `{sig}` under `prism.std.{module}`"))
            }
            Some(_) => {}
        }
    }
    // Every row names a function that exists.
    for row in doc.lines().filter(|l| l.starts_with("| `") && l.contains(" def ")) {
        if !sigs.iter().any(|(_, s)| row.contains(&format!("`{s}`"))) {
            failures.push(format!("docs/std.md lists a function the library does not define: {row}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn warp_sum_sums_the_warp_in_every_lane() {
    let src = r#"
from prism.std.warp import warp_sum

@prism("global")
@requires(grid[1], block[1], thread[32])
def k(x : ptr(const(float)), out : ptr(float)):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as o:
        with group(thread[32]):
            s : float @ thread[32] = warp_sum(x[g])
            with group(thread[1]):
                o[0] = s
"#;
    let (_, problems, synced) = prism_driver::compile_text("main.prism", src, &prism_driver::Options::default());
    let synced = synced.unwrap_or_else(|| panic!("{:?}", problems.diagnostics()));
    let x: Vec<f32> = (0..96).map(|i| (i % 7) as f32 - 3.0).collect();
    let args = [Arg::buffer(&x), Arg::buffer(&[0.0f32; 96])];
    let o = Module::new(&synced).launch("k", 1, 96, &args, Config::default()).expect("launch");
    assert!(o.is_clean(), "{:?}", o.reports);
    let want: Vec<u64> =
        (0..96).map(|i| u64::from((x[i / 32 * 32..i / 32 * 32 + 32].iter().sum::<f32>()).to_bits())).collect();
    assert_eq!(args[1].as_buffer().expect("buffer").to_bits(), want);
}
