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

/// Lines longer than this are shown as a window around their labels.
const LONG_LINE: usize = 240;
/// Characters kept on each side of the labels in a long line.
const CONTEXT: usize = 60;

/// A source file cut down to the lines one diagnostic shows, each long line shortened to a
/// window around its labels (with `…` where text was left out), so that a huge one-line file
/// does not fill the terminal. Line numbers stay those of the real file.
struct Short<'m> {
    /// The real file's text and line starts, for real column numbers.
    real: &'m str,
    real_starts: &'m [u32],
    name: String,
    text: String,
    /// Real line index -> the line's range in `text`.
    lines: std::collections::BTreeMap<usize, std::ops::Range<usize>>,
    /// Real line index -> (real byte where the kept window starts, its end, the byte in
    /// `text` where it starts).
    windows: std::collections::BTreeMap<usize, (usize, usize, usize)>,
}

impl<'m> Short<'m> {
    /// The view for `d` (whose labels all lie in one file), if one of its lines is long.
    fn of(map: &'m SourceMap, d: &Diagnostic) -> Option<Short<'m>> {
        let spans: Vec<prism_span::Span> =
            std::iter::once(d.primary.span).chain(d.secondary.iter().map(|l| l.span)).collect();
        let file = spans[0].file;
        if spans.iter().any(|s| s.file != file) {
            return None;
        }
        let f = map.file(file);
        let text = f.text();
        let starts = f.line_starts();
        let range = |i: usize| starts[i] as usize..starts.get(i + 1).map_or(text.len(), |&e| e as usize);
        let mut wanted: std::collections::BTreeMap<usize, (usize, usize)> = std::collections::BTreeMap::new();
        for s in &spans {
            let (a, b) = (f.line_index(s.start), f.line_index(s.end.max(s.start)));
            for i in a..=b {
                let r = range(i);
                let (lo, hi) = ((s.start as usize).clamp(r.start, r.end), (s.end as usize).clamp(r.start, r.end));
                let e = wanted.entry(i).or_insert((lo, hi));
                e.0 = e.0.min(lo);
                e.1 = e.1.max(hi);
            }
        }
        if !wanted.keys().any(|&i| range(i).len() > LONG_LINE) {
            return None;
        }
        let mut out = Short {
            real: text,
            real_starts: starts,
            name: f.name().to_string(),
            text: String::new(),
            lines: Default::default(),
            windows: Default::default(),
        };
        for (&i, &(lo, hi)) in &wanted {
            let r = range(i);
            let line = &text[r.clone()];
            let start = out.text.len();
            if line.len() <= LONG_LINE {
                out.text.push_str(line);
                out.windows.insert(i, (r.start, r.end, start));
            } else {
                let floor = |mut b: usize| {
                    while !text.is_char_boundary(b) {
                        b -= 1;
                    }
                    b
                };
                let ws = floor(lo.saturating_sub(CONTEXT).max(r.start));
                let we = floor((hi + CONTEXT).min(r.end));
                if ws > r.start {
                    out.text.push('…');
                }
                let at = out.text.len();
                out.text.push_str(&text[ws..we]);
                if we < r.end {
                    out.text.push('…');
                }
                out.windows.insert(i, (ws, we, at));
            }
            if !out.text.ends_with('\n') {
                out.text.push('\n');
            }
            out.lines.insert(i, start..out.text.len());
        }
        Some(out)
    }

    /// Where real byte `b` (on real line `i`) is in the shortened text.
    fn at(&self, i: usize, b: usize) -> usize {
        let (ws, we, at) = self.windows[&i];
        at + b.clamp(ws, we) - ws
    }

    /// The diagnostic with its spans moved into the shortened text.
    fn remap(&self, map: &SourceMap, d: &Diagnostic) -> cs::Diagnostic<FileId> {
        let f = map.file(d.primary.span.file);
        let span = |s: prism_span::Span| {
            let (a, b) = (f.line_index(s.start), f.line_index(s.end.max(s.start)));
            self.at(a, s.start as usize)..self.at(b, s.end as usize)
        };
        let mut c = to_codespan(d);
        c.labels = std::iter::once((&d.primary, true))
            .chain(d.secondary.iter().map(|l| (l, false)))
            .map(|(l, primary)| {
                let r = span(l.span);
                let label =
                    if primary { cs::Label::primary(l.span.file, r) } else { cs::Label::secondary(l.span.file, r) };
                label.with_message(&l.message)
            })
            .collect();
        c
    }
}

impl<'a> Files<'a> for Short<'_> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, _: FileId) -> Result<&'a str, FilesError> {
        Ok(&self.name)
    }

    fn source(&'a self, _: FileId) -> Result<&'a str, FilesError> {
        Ok(&self.text)
    }

    fn line_index(&'a self, _: FileId, byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.lines.iter().rev().find(|(_, r)| r.start <= byte_index).map_or(0, |(&i, _)| i))
    }

    fn line_range(&'a self, _: FileId, line_index: usize) -> Result<std::ops::Range<usize>, FilesError> {
        self.lines.get(&line_index).cloned().ok_or(FilesError::LineTooLarge { given: line_index, max: line_index })
    }

    /// The column in the real line, not in the shortened one.
    fn column_number(&'a self, _: FileId, line_index: usize, byte_index: usize) -> Result<usize, FilesError> {
        let (ws, we, at) = self.windows[&line_index];
        let real = (ws + byte_index.saturating_sub(at)).min(we);
        let start = self.real_starts[line_index] as usize;
        Ok(self.real.get(start..real).map_or(0, |t| t.chars().count()) + 1)
    }
}

/// Renders diagnostics the way `prism check` prints them: rustc-style source excerpts with
/// labels, one after another (the summary line, `N error(s)`, is the CLI's). Lines longer than 240
/// characters are cut to a window around their labels.
pub fn render(map: &SourceMap, diagnostics: &[Diagnostic], color: Color) -> String {
    let files = Adapter(map);
    let config = term::Config::default();
    let mut out = String::new();
    for d in diagnostics {
        if let Some(short) = Short::of(map, d) {
            let diag = short.remap(map, d);
            emit(&mut out, &config, &short, &diag, d, color);
            continue;
        }
        let diag = to_codespan(d);
        emit(&mut out, &config, &files, &diag, d, color);
    }
    out
}

/// Prints one diagnostic through `files`, falling back to a one-line form.
fn emit<'f, F: Files<'f, FileId = FileId>>(
    out: &mut String,
    config: &term::Config,
    files: &'f F,
    diag: &cs::Diagnostic<FileId>,
    d: &Diagnostic,
    color: Color,
) {
    match color {
        Color::Never => {
            // Rendering can only fail on spans outside their file, which the stages never
            // produce; fall back to a one-line form rather than losing the diagnostic.
            if term::emit_to_string(out, config, files, diag).is_err() {
                out.push_str(&format!("{}[{}]: {}\n", d.severity.as_str(), d.code, d.message));
            }
        }
        Color::Always => {
            let mut buf = term::termcolor::Buffer::ansi();
            let styles = term::Styles::default();
            let mut writer = term::StylesWriter::new(&mut buf, &styles);
            if term::emit_to_write_style(&mut writer, config, files, diag).is_ok() {
                out.push_str(&String::from_utf8_lossy(buf.as_slice()));
            } else {
                out.push_str(&format!("{}[{}]: {}\n", d.severity.as_str(), d.code, d.message));
            }
        }
    }
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
                // A label without words is a position only: `null`, not an empty string.
                "message": if l.message.is_empty() { serde_json::Value::Null } else { l.message.clone().into() },
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
