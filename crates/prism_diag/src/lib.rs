//! Structured diagnostics shared by every stage of the toolchain.
//!
//! A stage never prints. It records [`Diagnostic`]s in a [`Problems`] collector and the CLI
//! decides how to show them: [`render`] produces the human form (rustc-like, built on
//! `codespan-reporting`) and [`render_json`] produces one JSON object per diagnostic for
//! editors and CI. Every diagnostic carries a stable kebab-case code from [`codes`]; tests
//! match on codes, and `prism explain CODE` prints the long explanation stored with it.
//!
//! Invariant: every `code` used in a [`Diagnostic`] is listed in [`codes::CODES`]; a test in
//! `prism_test` checks this for every code the checker can emit, and runs the example in each
//! explanation.

#![deny(missing_docs)]

pub mod codes;
mod render;

pub use render::{Color, render, render_json};

use prism_span::Span;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The program is rejected.
    Error,
    /// The program is accepted, but something deserves attention (e.g. a legacy spelling).
    Warning,
    /// Information about what the compiler did (e.g. a barrier synchronisation inference
    /// inserted); never a problem.
    Note,
}

impl Severity {
    /// The lowercase name used in output (`error`, `warning`, `note`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// A span with a message attached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Where the label points.
    pub span: Span,
    /// What it says; may be empty.
    pub message: String,
}

impl Label {
    /// A label on `span` saying `message`.
    pub fn new(span: Span, message: impl Into<String>) -> Label {
        Label { span, message: message.into() }
    }
}

/// One problem found in a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Stable kebab-case code, listed in [`codes::CODES`].
    pub code: &'static str,
    /// Short lowercase title.
    pub message: String,
    /// The exact place of the problem.
    pub primary: Label,
    /// Related places: where a variable got its perspective, where a group began, ...
    pub secondary: Vec<Label>,
    /// Extra prose, one paragraph each.
    pub notes: Vec<String>,
    /// A suggested fix, when one is known.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error with code `code` and title `message`, pointing at `span`.
    pub fn error(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic::new(Severity::Error, code, message, span)
    }

    /// A warning with code `code` and title `message`, pointing at `span`.
    pub fn warning(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic::new(Severity::Warning, code, message, span)
    }

    /// A note with code `code` and title `message`, pointing at `span`.
    pub fn note(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic::new(Severity::Note, code, message, span)
    }

    fn new(severity: Severity, code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        debug_assert!(codes::lookup(code).is_some(), "diagnostic code `{code}` is not registered in prism_diag::codes");
        Diagnostic {
            severity,
            code,
            message: message.into(),
            primary: Label::new(span, ""),
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    /// Sets the message of the primary label.
    pub fn with_label(mut self, message: impl Into<String>) -> Diagnostic {
        self.primary.message = message.into();
        self
    }

    /// Adds a secondary label.
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label::new(span, message));
        self
    }

    /// Adds a note paragraph.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Sets the help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Collects the diagnostics of one or more stages.
#[derive(Clone, Debug, Default)]
pub struct Problems {
    diagnostics: Vec<Diagnostic>,
}

impl Problems {
    /// Records a diagnostic.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// Number of errors recorded so far.
    pub fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// True if any error was recorded.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// All diagnostics in the order they were recorded.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Sorts by file and position so output is stable whatever order stages ran in; exact
    /// duplicates (same code, message and span) are dropped.
    pub fn sort(&mut self) {
        self.diagnostics.sort_by(|a, b| {
            (a.primary.span.file, a.primary.span.start, a.primary.span.end)
                .cmp(&(b.primary.span.file, b.primary.span.start, b.primary.span.end))
                .then(a.severity.cmp(&b.severity))
                .then(a.code.cmp(b.code))
        });
        self.diagnostics
            .dedup_by(|a, b| a.code == b.code && a.primary.span == b.primary.span && a.message == b.message);
    }

    /// Takes the diagnostics out.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.diagnostics
    }

    /// Moves every diagnostic of `other` into `self`.
    pub fn extend(&mut self, other: Problems) {
        self.diagnostics.extend(other.diagnostics);
    }
}
