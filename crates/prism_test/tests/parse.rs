//! Parse-tree snapshots: `tests/parse/ok/NAME.prism` must parse without a problem and
//! `tests/parse/err/NAME.prism` with at least one error; the tree the parser returns (after
//! recovery, for `err/`), preceded by the rendered problems, must equal `NAME.tree` beside it
//! (`PRISM_BLESS=1 cargo test -p prism_test --test parse` rewrites the snapshots).
//!
//! The tree is the AST's `Debug` form, one node per line, with each span shortened to
//! `@start..end` (byte offsets): a change in what the parser builds, or in where it recovers
//! after an error, shows as a small diff.

use libtest_mimic::{Arguments, Failed, Trial};
use prism_diag::{Color, Problems, render};
use prism_span::SourceMap;
use prism_test::{prism_files, repo_root, snapshot};
use std::path::Path;

fn main() {
    let args = Arguments::from_args();
    let root = repo_root().join("tests/parse");
    let mut trials = Vec::new();
    for (dir, ok) in [("ok", true), ("err", false)] {
        for path in prism_files(&root.join(dir)) {
            let name = format!("{dir}/{}", path.file_stem().expect("a file").to_string_lossy());
            trials.push(Trial::test(name, move || run(&path, ok)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

fn run(path: &Path, ok: bool) -> Result<(), Failed> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut map = SourceMap::default();
    let name = path.file_name().expect("a file").to_string_lossy().into_owned();
    let file = map.add(name, src.clone());
    let mut problems = Problems::default();
    let module = prism_syntax::parse(file, &src, &mut problems);
    if ok && !problems.diagnostics().is_empty() {
        return Err(format!("expected a clean parse:\n{}", render(&map, problems.diagnostics(), Color::Never)).into());
    }
    if !ok && problems.error_count() == 0 {
        return Err("expected a syntax error, the file parsed".into());
    }
    let mut text = render(&map, problems.diagnostics(), Color::Never);
    text.push_str(&tree(&format!("{module:?}")));
    snapshot(&path.with_extension("tree"), &text).map_err(Into::into)
}

/// Lays out a one-line `Debug` string one node per line, indented by nesting, with spans
/// shortened.
fn tree(debug: &str) -> String {
    let short = shorten_spans(debug);
    let mut out = String::new();
    let mut depth = 0usize;
    let mut in_str = false;
    let mut chars = short.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        while out.ends_with(' ') {
            out.pop();
        }
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push(c);
            }
            '{' | '[' | '(' if chars.peek().is_some_and(|n| !matches!(n, '}' | ']' | ')')) => {
                out.push(c);
                depth += 1;
                if chars.peek() == Some(&' ') {
                    chars.next();
                }
                newline(&mut out, depth);
            }
            '}' | ']' | ')' if !out.ends_with(['{', '[', '(']) => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                if chars.peek() == Some(&' ') {
                    chars.next();
                }
                newline(&mut out, depth);
            }
            _ => out.push(c),
        }
    }
    out.push('\n');
    out
}

/// `Span { file: FileId(0), start: 3, end: 9 }` becomes `@3..9`.
fn shorten_spans(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("Span { file: FileId(") {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let end = tail.find('}').map_or(tail.len(), |e| e + 1);
        let inner = &tail[..end];
        let num = |key: &str| {
            inner
                .split(key)
                .nth(1)
                .map(|t| t.chars().take_while(char::is_ascii_digit).collect::<String>())
                .unwrap_or_default()
        };
        out.push_str(&format!("@{}..{}", num("start: "), num("end: ")));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}
