//! Syntax errors and warnings, as structured values.
//!
//! The lexer and parser record these; `diagnostics.rs` turns each variant into a
//! [`prism_diag::Diagnostic`] with a stable code. Keeping them structured lets tests match on
//! what went wrong without parsing message text.

use crate::token::{Punct, TokenKind};
use prism_span::Span;

/// A problem found while lexing or parsing.
#[derive(Clone, Debug, PartialEq)]
pub enum SyntaxError {
    /// A character that starts no token.
    ///
    /// ```text
    /// x = a $ b
    ///       ^ invalid character
    /// ```
    InvalidChar {
        /// The character (the first of a run of them).
        ch: char,
        /// Where it is: a run of invalid characters next to each other is one error.
        span: Span,
    },
    /// A C operator that Prism spells with a word (`&&`, `||`, `!`).
    CStyleOperator {
        /// What was written.
        found: &'static str,
        /// The Prism spelling.
        canonical: &'static str,
        /// Where.
        span: Span,
    },
    /// A string literal with no closing quote.
    UnterminatedString {
        /// From the opening quote to where the lexer gave up.
        span: Span,
    },
    /// A malformed numeric literal.
    InvalidNumber {
        /// Why it is invalid.
        reason: String,
        /// Where.
        span: Span,
    },
    /// A tab in the indentation of a line.
    TabIndent {
        /// The tab.
        span: Span,
    },
    /// A dedent to a column that no enclosing block started at.
    InconsistentDedent {
        /// The first token of the line.
        span: Span,
    },
    /// An indented line where no block was opened.
    UnexpectedIndent {
        /// The first token of the line.
        span: Span,
    },
    /// A bracket that is never closed, or closed by a different bracket.
    UnclosedDelimiter {
        /// The opening bracket.
        open: Punct,
        /// Where it was opened.
        open_span: Span,
        /// Where the problem was noticed (the wrong closer, or end of file).
        span: Span,
        /// The wrong closing bracket, if that is what was found.
        found: Option<Punct>,
    },
    /// A closing bracket with no opening bracket.
    UnmatchedCloser {
        /// The closer.
        punct: Punct,
        /// Where.
        span: Span,
    },
    /// The parser expected something else.
    Expected {
        /// What it expected, in words.
        expected: String,
        /// What it found.
        found: TokenKind,
        /// Where.
        span: Span,
        /// An optional hint.
        help: Option<String>,
    },
    /// Something already parsed (an expression, a keyword argument) is not what this
    /// position needs.
    Misplaced {
        /// What the position needs, in words.
        expected: String,
        /// What was written instead.
        span: Span,
        /// An optional hint.
        help: Option<String>,
    },
    /// An older draft's spelling; accepted, with a warning naming the canonical form.
    Legacy {
        /// What was written.
        what: String,
        /// The canonical spelling.
        canonical: String,
        /// Where.
        span: Span,
    },
    /// A statement outside any function.
    TopLevelStatement {
        /// The statement.
        span: Span,
    },
    /// A decorator problem.
    BadDecorator {
        /// What is wrong.
        reason: String,
        /// Where.
        span: Span,
        /// Another relevant place (e.g. the first of two repeated decorators).
        other: Option<(Span, String)>,
        /// An optional hint.
        help: Option<String>,
    },
    /// `...` or `..`: code the paper elided.
    Elided {
        /// The placeholder.
        span: Span,
    },
}
