//! Every `.prism` file of the repository (the ui corpus, the module tests, the examples,
//! the standard library) through every feature of the server, at positions all over the
//! file and past its end: nothing panics, and on accepted programs the name index agrees
//! with the checker (every variable a name refers to is one the checker declared there,
//! so every hover on a variable shows its type and perspective).

use lsp_types::{Position, Range, Url};
use prism_lsp::analysis::{self, Settings, Snapshot};
use prism_lsp::features;
use prism_lsp::files::Overlay;
use prism_lsp::index::DefKind;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn corpus() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for dir in ["tests", "examples", "crates/prism_std/std"] {
        walk(&root.join(dir), &mut out);
    }
    out.sort();
    assert!(out.len() > 300, "the corpus is missing: {} files", out.len());
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "prism") {
            out.push(p);
        }
    }
}

fn analyse(path: &Path) -> Option<Snapshot> {
    let path = prism_lsp::files::normalise(&std::fs::canonicalize(path).ok()?);
    // Some regression files are deliberately not UTF-8 text.
    let text = String::from_utf8(std::fs::read(&path).ok()?).ok()?;
    let docs = HashMap::new();
    let mut files = Overlay { docs: &docs };
    Some(analysis::analyse(&path.display().to_string(), true, &text, &mut files, &Settings::default()))
}

#[test]
fn every_feature_answers_everywhere_in_the_corpus() {
    let (mut files, mut hovers, mut barriers) = (0, 0, 0);
    for path in corpus() {
        let Some(snap) = analyse(&path) else { continue };
        files += 1;
        let uri = Url::from_file_path(&path).expect("an absolute path");
        let file = snap.map.file(snap.root);
        let lines = file.line_starts().len() as u32;
        let ctx = || format!("in {}", path.display());
        let _ = features::diagnostics(&snap, &uri);
        let _ = features::symbols(&snap);
        let whole = Range { start: Position::new(0, 0), end: Position::new(lines + 5, 0) };
        barriers += features::inlay_hints(&snap, whole).iter().filter(|h| h.kind.is_none()).count();
        // After inference has run, the diagnostics include its problems.
        let _ = features::diagnostics(&snap, &uri);
        for line in (0..lines + 2).step_by(3) {
            for character in [0, 4, 9, 17, 30, 200] {
                let p = Position::new(line, character);
                hovers += usize::from(features::hover(&snap, p).is_some());
                let _ = features::definition(&snap, &uri, p);
                if let Some(k) = features::def_key_at(&snap, p) {
                    assert!(!features::references(&snap, &uri, &k, true).is_empty(), "{}", ctx());
                }
            }
        }
    }
    // The walk did reach the programs: most positions are in code, and the accepted
    // kernels have inferred barriers.
    assert!(files > 300 && hovers > 5000 && barriers > 100, "{files} files, {hovers} hovers, {barriers} barriers");
}

#[test]
fn the_index_agrees_with_the_checker_on_accepted_programs() {
    let accept = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ui/accept");
    let mut checked = 0;
    for path in corpus().into_iter().filter(|p| p.starts_with(&accept)) {
        let Some(snap) = analyse(&path) else { continue };
        if !snap.problems.iter().all(|d| !d.is_error()) {
            continue;
        }
        checked += 1;
        let vars = snap.vars_by_span();
        for (span, d) in &snap.index.refs {
            let def = &snap.index.defs[*d];
            // A lambda's parameters become variables only where the lambda is used as an
            // indexing function; `name = lambda ...` alone is not checked.
            if span.file != snap.root || !def.kind.is_var() || def.kind == DefKind::LambdaParam {
                continue;
            }
            // A function no instance of which was checked (an unused generic) has no
            // variables; every other variable must be known to the checker.
            let in_generic = snap.analysis.modules[def.module].ast.items.iter().any(|i| {
                matches!(i, prism_syntax::ast::Item::Function(f)
                    if !f.type_params.is_empty() && f.span.start <= def.span.start && def.span.end <= f.span.end)
            });
            if in_generic {
                continue;
            }
            let v = vars.get(&(def.span.file, def.span.start));
            let text = snap.map.file(def.span.file).slice(def.span);
            assert!(
                v.is_some_and(|v| v.name == def.name),
                "{}: `{text}` (used at byte {}) refers to a declaration the checker does not know",
                path.display(),
                span.start
            );
        }
    }
    assert!(checked > 100, "only {checked} accepted programs");
}

#[test]
fn a_stage_late_argument_refers_to_its_constexpr() {
    // Kernel 38 chooses its stages' form with `late=LATE` (a constexpr `-D` sets): the name
    // in each `stage(...)` is a reference, so finding references from the declaration
    // gives the declaration and its uses, the four stages among them.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ui/accept/kernels/38_hgemm_warp_specialised.prism");
    let snap = analyse(&path).expect("kernel 38 reads");
    let uri = Url::from_file_path(std::fs::canonicalize(&path).expect("the file exists")).expect("an absolute path");
    let text = std::fs::read_to_string(&path).expect("the file reads");
    let line = text.lines().position(|l| l.starts_with("LATE : constexpr")).expect("the declaration") as u32;
    let key = features::def_key_at(&snap, Position::new(line, 1)).expect("a definition at the declaration");
    let refs = features::references(&snap, &uri, &key, true);
    let in_stages = refs
        .iter()
        .filter(|r| text.lines().nth(r.range.start.line as usize).is_some_and(|l| l.contains("late=LATE")))
        .count();
    assert_eq!(in_stages, 4, "{refs:?}");
}
