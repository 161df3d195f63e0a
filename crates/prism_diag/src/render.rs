//! Turning diagnostics into text: the human form and the JSON-lines form.
//!
//! Both are pure functions of the source map and the diagnostics, so tests can snapshot them
//! byte for byte. Colour is a parameter; tests always pass [`Color::Never`].

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term;
use prism_span::{FileId, SourceMap};
use serde_json::json;

use crate::{Diagnostic, Severity};

/// Whether rendered text contains ANSI colour codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    /// Plain text (tests, pipes, files).
    Never,
    /// ANSI colours (a terminal).
    Always,
}

/// Adapts our [`SourceMap`] to the `Files` trait `codespan-reporting` reads from.
struct Adapter<'a>(&'a SourceMap);

impl<'a> Files<'a> for Adapter<'a> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        Ok(self.0.file(id).name())
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        Ok(self.0.file(id).text())
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.0.file(id).line_index(byte_index as u32))
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<std::ops::Range<usize>, FilesError> {
        let file = self.0.file(id);
        let starts = file.line_starts();
        let start = *starts
            .get(line_index)
            .ok_or(FilesError::LineTooLarge { given: line_index, max: starts.len() - 1 })? as usize;
        let end = starts.get(line_index + 1).map(|&e| e as usize).unwrap_or(file.text().len());
        Ok(start..end)
    }
}

fn to_codespan(d: &Diagnostic) -> cs::Diagnostic<FileId> {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
        Severity::Note => cs::Severity::Note,
    };
    let range = |s: prism_span::Span| s.start as usize..s.end as usize;
    let mut labels =
        vec![cs::Label::primary(d.primary.span.file, range(d.primary.span)).with_message(&d.primary.message)];
    for l in &d.secondary {
        labels.push(cs::Label::secondary(l.span.file, range(l.span)).with_message(&l.message));
    }
    let mut notes: Vec<String> = d.notes.iter().map(|n| format!("note: {n}")).collect();
    if let Some(h) = &d.help {
        notes.push(format!("help: {h}"));
    }
    cs::Diagnostic::new(severity).with_code(d.code).with_message(&d.message).with_labels(labels).with_notes(notes)
}

/// Renders diagnostics the way `prism check` prints them: rustc-style source excerpts with
/// labels, then a summary line when there were errors or warnings.
pub fn render(map: &SourceMap, diagnostics: &[Diagnostic], color: Color) -> String {
    let files = Adapter(map);
    let config = term::Config::default();
    let mut out = String::new();
    for d in diagnostics {
        let diag = to_codespan(d);
        match color {
            Color::Never => {
                // Rendering can only fail on spans outside their file, which the stages never
                // produce; fall back to a one-line form rather than losing the diagnostic.
                if term::emit_to_string(&mut out, &config, &files, &diag).is_err() {
                    out.push_str(&format!("{}[{}]: {}\n", d.severity.as_str(), d.code, d.message));
                }
            }
            Color::Always => {
                let mut buf = term::termcolor::Buffer::ansi();
                let styles = term::Styles::default();
                let mut writer = term::StylesWriter::new(&mut buf, &styles);
                if term::emit_to_write_style(&mut writer, &config, &files, &diag).is_ok() {
                    out.push_str(&String::from_utf8_lossy(buf.as_slice()));
                } else {
                    out.push_str(&format!("{}[{}]: {}\n", d.severity.as_str(), d.code, d.message));
                }
            }
        }
    }
    out
}

/// Renders each diagnostic as one JSON object on its own line.
///
/// Fields: `severity`, `code`, `message`, `file`, `line`, `column`, `end_line`, `end_column`
/// (1-based; columns count characters), `labels` (each with the same position fields, a
/// `message` and `primary`), `notes` and `help` (a string or null).
pub fn render_json(map: &SourceMap, diagnostics: &[Diagnostic]) -> String {
    let pos = |span: prism_span::Span| {
        let (s, e) = map.span_lines(span);
        (map.file(span.file).name().to_string(), s, e)
    };
    let mut out = String::new();
    for d in diagnostics {
        let (file, s, e) = pos(d.primary.span);
        let mut labels = Vec::new();
        for (l, primary) in std::iter::once((&d.primary, true)).chain(d.secondary.iter().map(|l| (l, false))) {
            let (lf, ls, le) = pos(l.span);
            labels.push(json!({
                "file": lf,
                "line": ls.line,
                "column": ls.column,
                "end_line": le.line,
                "end_column": le.column,
                "message": l.message,
                "primary": primary,
            }));
        }
        let obj = json!({
            "severity": d.severity.as_str(),
            "code": d.code,
            "message": d.message,
            "file": file,
            "line": s.line,
            "column": s.column,
            "end_line": e.line,
            "end_column": e.column,
            "labels": labels,
            "notes": d.notes,
            "help": d.help,
        });
        out.push_str(&obj.to_string());
        out.push('\n');
    }
    out
}
