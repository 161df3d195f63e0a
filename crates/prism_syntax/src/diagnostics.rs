//! Conversion of [`SyntaxError`]s into diagnostics with stable codes.

use crate::error::SyntaxError;
use prism_diag::Diagnostic;

impl SyntaxError {
    /// The diagnostic users see for this error.
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            // Diagnostic: invalid-token
            SyntaxError::InvalidChar { ch, span } if span.len() as usize > ch.len_utf8() => Diagnostic::error(
                "invalid-token",
                format!("invalid characters, starting with `{}`", ch.escape_debug()),
                *span,
            )
            .with_label("no token starts with any of these characters"),
            SyntaxError::InvalidChar { ch, span } => {
                Diagnostic::error("invalid-token", format!("invalid character `{}`", ch.escape_debug()), *span)
                    .with_label("no token starts with this character")
            }
            SyntaxError::CStyleOperator { found, canonical, span } => {
                Diagnostic::error("invalid-token", format!("`{found}` is not a Prism operator"), *span)
                    .with_label("C spelling")
                    .with_help(format!("write `{canonical}`"))
            }
            // Diagnostic: unterminated-string
            SyntaxError::UnterminatedString { span } => {
                Diagnostic::error("unterminated-string", "unterminated string literal", *span)
                    .with_label("this string has no closing quote")
            }
            // Diagnostic: invalid-number
            SyntaxError::InvalidNumber { reason, span } => {
                Diagnostic::error("invalid-number", format!("invalid number: {reason}"), *span)
            }
            // Diagnostic: tab-indent
            SyntaxError::TabIndent { span } => Diagnostic::error("tab-indent", "tab in indentation", *span)
                .with_label("tab character")
                .with_help("indent with spaces; a tab's width is ambiguous"),
            // Diagnostic: inconsistent-indent
            SyntaxError::InconsistentDedent { span } => {
                Diagnostic::error("inconsistent-indent", "this line's indentation matches no enclosing block", *span)
                    .with_label("dedented to a column no block started at")
            }
            SyntaxError::UnexpectedIndent { span } => {
                Diagnostic::error("inconsistent-indent", "unexpected indentation", *span)
                    .with_label("this line is indented but no block was opened")
                    .with_help("only a line ending in `:` opens an indented block")
            }
            // Diagnostic: unclosed-delimiter
            SyntaxError::UnclosedDelimiter { open, open_span, span, found } => {
                let d = match found {
                    Some(closer) => Diagnostic::error(
                        "unclosed-delimiter",
                        format!("mismatched closing `{}`", closer.as_str()),
                        *span,
                    )
                    .with_label(format!("expected a match for `{}`", open.as_str())),
                    None => {
                        Diagnostic::error("unclosed-delimiter", format!("unclosed `{}`", open.as_str()), *open_span)
                            .with_label("opened here and never closed")
                    }
                };
                if found.is_some() { d.with_secondary(*open_span, "opened here") } else { d }
            }
            SyntaxError::UnmatchedCloser { punct, span } => {
                Diagnostic::error("unclosed-delimiter", format!("unexpected closing `{}`", punct.as_str()), *span)
                    .with_label("no bracket is open here")
            }
            // Diagnostic: syntax-error
            SyntaxError::Expected { expected, found, span, help } => {
                let d = Diagnostic::error("syntax-error", format!("expected {expected}, found {found}"), *span)
                    .with_label(format!("expected {expected}"));
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            SyntaxError::Misplaced { expected, span, help } => {
                let d = Diagnostic::error("syntax-error", format!("expected {expected}"), *span)
                    .with_label(format!("expected {expected}"));
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: legacy-syntax
            SyntaxError::Legacy { what, canonical, span } => {
                Diagnostic::warning("legacy-syntax", format!("legacy spelling `{what}`"), *span)
                    .with_label("from an earlier draft of the language")
                    .with_help(format!("write `{canonical}`"))
            }
            // Diagnostic: top-level-statement
            SyntaxError::TopLevelStatement { span } => {
                Diagnostic::error("top-level-statement", "statements must be inside a function", *span)
                    .with_label("statement at top level")
                    .with_help(
                        "put it in a kernel: `@prism(\"global\")`, `@requires(grid[1], block[1], thread[1])`, \
                 `def k(...):`; only `NAME : constexpr(T) = value` may stand at top level",
                    )
            }
            // Diagnostic: bad-decorator
            SyntaxError::BadDecorator { reason, span, other, help } => {
                let mut d = Diagnostic::error("bad-decorator", reason.clone(), *span);
                if let Some((s, m)) = other {
                    d = d.with_secondary(*s, m.clone());
                }
                if let Some(h) = help {
                    d = d.with_help(h.clone());
                }
                d
            }
            // Diagnostic: elided-code
            SyntaxError::Elided { span } => {
                Diagnostic::error("elided-code", "elided code cannot be checked or run", *span)
                    .with_label("placeholder for code the paper left out")
                    .with_help("write the code; an empty block is `pass`")
            }
        }
    }
}
