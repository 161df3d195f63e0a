//! The test harness for the `tests/ui` corpus.
//!
//! The directory a file is in states what is expected of it:
//! - `accept/**.prism`: no errors.
//! - `reject/**.prism`: at least one error; the rendered diagnostics are snapshotted in a
//!   sibling `.stderr` file.
//! - `regress/**.prism`: bugs and fuzz crashes; each must not panic and must match its
//!   annotations (with or without errors).
//!
//! In every directory, each diagnostic must match an inline annotation on the line where it
//! starts, and each annotation must match a diagnostic:
//!
//! ```text
//! if (flag):   # error: [read-up]
//! @cuda("device")   # warning: [legacy-syntax]
//! ```
//!
//! A file may start with directives: `# arch: sm_80` sets the target architecture.
//! `PRISM_BLESS=1 cargo test` rewrites the `.stderr` snapshots instead of comparing them.
//! This crate may read and write files: it is a test harness, not a compiler stage.

#![allow(clippy::print_stdout, clippy::print_stderr)]

/// Large generated programs for the checking-speed benchmark and scale tests. Spelled
/// `r#gen` because `gen` is reserved in Rust 2024.
pub mod r#gen;

/// Running programs on the simulator: launch headers and expected reports.
pub mod run;

/// The soundness search: random well-typed programs under many schedules.
pub mod soundness;

use prism_diag::{Color, Diagnostic, Severity, render};
use prism_span::SourceMap;
use prism_types::Target;
use std::path::{Path, PathBuf};

/// What a corpus directory expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// No errors.
    Accept,
    /// At least one error, snapshotted.
    Reject,
    /// Whatever the annotations say.
    Regress,
}

/// An inline expectation: `# error: [code]` on line `line`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    /// 1-based line.
    pub line: u32,
    /// Error or warning.
    pub severity: Severity,
    /// The code.
    pub code: String,
}

/// Reads the annotations of a source file.
pub fn annotations(src: &str) -> Vec<Annotation> {
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let Some(hash) = comment_start(line) else { continue };
        let mut rest = &line[hash..];
        while let Some(pos) = rest.find(": [") {
            let before = &rest[..pos];
            let severity = if before.ends_with("error") {
                Some(Severity::Error)
            } else if before.ends_with("warning") {
                Some(Severity::Warning)
            } else {
                None
            };
            let after = &rest[pos + 3..];
            let Some(end) = after.find(']') else { break };
            if let Some(severity) = severity {
                out.push(Annotation { line: i as u32 + 1, severity, code: after[..end].trim().to_string() });
            }
            rest = &after[end..];
        }
    }
    out
}

/// The byte offset of the `#` starting a comment on this line, ignoring `#` in strings.
fn comment_start(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '#' => return Some(i),
                _ => {}
            },
        }
    }
    None
}

/// The target a file's directives select.
pub fn target_for(src: &str) -> Result<Target, String> {
    for line in src.lines().take_while(|l| l.starts_with('#') || l.trim().is_empty()) {
        if let Some(arch) = line.strip_prefix("# arch:") {
            return Target::from_arch(arch.trim())
                .ok_or_else(|| format!("unknown arch `{}` in directive", arch.trim()));
        }
    }
    Ok(Target::default())
}

/// The `-D` defines a file's header asks for: `# define: NAME=VALUE` lines, as `prism check
/// -D NAME=VALUE` would give them.
pub fn defines_for(src: &str) -> Result<Vec<prism_types::Define>, String> {
    src.lines()
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .filter_map(|l| l.strip_prefix("# define:"))
        .map(|d| prism_types::Define::parse(d.trim()))
        .collect()
}

/// Runs the whole pipeline (`prism_driver`) on one source text, as `prism check` does,
/// returning the sorted diagnostics and the source map they refer to.
pub fn check_text(display_name: &str, src: &str, target: &Target) -> (SourceMap, Vec<Diagnostic>) {
    check_text_with(display_name, src, target, &[])
}

/// [`check_text`] with `-D` defines.
pub fn check_text_with(
    display_name: &str,
    src: &str,
    target: &Target,
    defines: &[prism_types::Define],
) -> (SourceMap, Vec<Diagnostic>) {
    let opts =
        prism_driver::Options { target: target.clone(), defines: defines.to_vec(), ..prism_driver::Options::default() };
    let (map, mut problems, _) = prism_driver::compile_text(display_name, src, &opts);
    problems.sort();
    (map, problems.into_vec())
}

/// Compiles a source text through the whole pipeline with the target its `# arch:`
/// directive selects (`opts.target` is replaced); `Err` lists the errors.
pub fn synced(display_name: &str, src: &str, opts: &prism_driver::Options) -> Result<prism_driver::Synced, String> {
    let opts = prism_driver::Options { target: target_for(src)?, defines: defines_for(src)?, ..opts.clone() };
    let (_, problems, synced) = prism_driver::compile_text(display_name, src, &opts);
    synced.ok_or_else(|| {
        let msgs: Vec<String> = problems
            .diagnostics()
            .iter()
            .filter(|d| d.severity == prism_diag::Severity::Error)
            .map(|d| format!("[{}] {}", d.code, d.message))
            .collect();
        format!("{display_name} does not compile: {}", msgs.join("; "))
    })
}

/// Compares diagnostics with annotations; returns a description of every mismatch.
pub fn match_annotations(map: &SourceMap, diags: &[Diagnostic], anns: &[Annotation]) -> Vec<String> {
    let mut unmatched: Vec<&Annotation> = anns.iter().collect();
    let mut problems = Vec::new();
    for d in diags {
        let (start, _) = map.span_lines(d.primary.span);
        match unmatched.iter().position(|a| a.line == start.line && a.severity == d.severity && a.code == d.code) {
            Some(i) => {
                unmatched.remove(i);
            }
            None => problems.push(format!(
                "unexpected {}[{}] at line {}: {}",
                d.severity.as_str(),
                d.code,
                start.line,
                d.message
            )),
        }
    }
    for a in unmatched {
        problems.push(format!("expected {}[{}] at line {} was not reported", a.severity.as_str(), a.code, a.line));
    }
    problems
}

/// Whether `PRISM_BLESS` asks for snapshots to be rewritten.
pub fn blessing() -> bool {
    std::env::var_os("PRISM_BLESS").is_some_and(|v| v != "0" && !v.is_empty())
}

/// Compares `actual` with the snapshot at `path`, or writes it when blessing.
pub fn snapshot(path: &Path, actual: &str) -> Result<(), String> {
    if blessing() {
        std::fs::write(path, actual).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        return Ok(());
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    if expected == actual {
        return Ok(());
    }
    Err(format!(
        "snapshot {} differs (rerun with PRISM_BLESS=1 to accept the new output):\n{}",
        path.display(),
        diff(&expected, actual)
    ))
}

/// A small unified-style line diff: lines only in `old` start with `-`, only in `new` with
/// `+` (longest common subsequence; inputs are snapshot-sized).
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push_str(&format!(" {}\n", a[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] > lcs[i + 1][j]) {
            out.push_str(&format!("+{}\n", b[j]));
            j += 1;
        } else {
            out.push_str(&format!("-{}\n", a[i]));
            i += 1;
        }
    }
    out
}

/// Checks one corpus file; `root` is the repository root (names in snapshots are relative
/// to it).
pub fn run_ui_file(root: &Path, path: &Path, expect: Expect) -> Result<(), String> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let rel = path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/");
    let target = target_for(&src)?;
    let (map, diags) = check_text_with(&rel, &src, &target, &defines_for(&src)?);
    let anns = annotations(&src);
    let mut problems = match_annotations(&map, &diags, &anns);
    let errors = diags.iter().filter(|d| d.severity == Severity::Error).count();
    match expect {
        Expect::Accept if errors > 0 => problems.push(format!("expected no errors, found {errors}")),
        Expect::Reject if errors == 0 => problems.push("expected at least one error, found none".into()),
        _ => {}
    }
    let stderr_path = path.with_extension("stderr");
    if expect == Expect::Reject || (!diags.is_empty() && expect == Expect::Regress) {
        let rendered = render(&map, &diags, Color::Never);
        if let Err(e) = snapshot(&stderr_path, &rendered) {
            problems.push(e);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        let rendered = render(&map, &diags, Color::Never);
        Err(format!("{}:\n  {}\n\nfull output:\n{rendered}", rel, problems.join("\n  ")))
    }
}

/// Every `.prism` file under `dir`, sorted.
pub fn prism_files(dir: &Path) -> Vec<PathBuf> {
    files_with_extension(dir, "prism")
}

/// Every file under `dir` (recursively) whose extension is `ext`, sorted.
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root exists")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_annotations() {
        let a = annotations("x = 1  # error: [read-up] and warning: [legacy-syntax]\ns = \"# error: [no]\"\n");
        assert_eq!(
            a,
            vec![
                Annotation { line: 1, severity: Severity::Error, code: "read-up".into() },
                Annotation { line: 1, severity: Severity::Warning, code: "legacy-syntax".into() },
            ]
        );
    }

    #[test]
    fn diffs() {
        assert_eq!(diff("a\nb\nc\n", "a\nx\nc\n"), " a\n-b\n+x\n c\n");
    }
}
