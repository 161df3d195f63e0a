//! The Prism front end's first half: lexing and parsing `.prism` source into an untyped AST.
//!
//! ```text
//! &str --lexer--> Vec<Token> (with Newline/Indent/Dedent) --parser--> ast::Module
//! ```
//!
//! [`parse`] runs both and records problems in a [`prism_diag::Problems`]; it always returns
//! a module, possibly missing the statements that failed to parse.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod ast;
mod diagnostics;
pub mod error;
pub mod lexer;
pub mod parser;
pub mod token;

use error::SyntaxError;
use prism_diag::Problems;
use prism_span::FileId;

/// Lexes and parses one file. Syntax errors and legacy-spelling warnings go to `problems`.
pub fn parse(file: FileId, src: &str, problems: &mut Problems) -> ast::Module {
    let mut errors = Vec::new();
    let tokens = lexer::lex(file, src, &mut errors);
    let lexed = errors.len();
    let module = parser::parse_tokens(file, tokens, &mut errors);
    for e in drop_cascades(src, &errors, lexed) {
        problems.push(e.to_diagnostic());
    }
    module
}

/// Drops parser errors that only restate a lexer error: a parse error on a line where the
/// lexer already found a bad token, string, number or bracket, and a parse error at the end
/// of the file when a bracket was left open.
fn drop_cascades<'e>(src: &str, errors: &'e [SyntaxError], lexed: usize) -> Vec<&'e SyntaxError> {
    // Line numbers by binary search over the line starts: errors can be many on hostile input.
    let starts: Vec<usize> = std::iter::once(0).chain(src.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let line_of = |offset: u32| starts.partition_point(|&s| s <= offset as usize);
    let mut bad_lines = std::collections::HashSet::new();
    let mut unclosed_at_eof = false;
    for e in &errors[..lexed] {
        match e {
            SyntaxError::InvalidChar { span, .. }
            | SyntaxError::CStyleOperator { span, .. }
            | SyntaxError::UnterminatedString { span }
            | SyntaxError::InvalidNumber { span, .. }
            | SyntaxError::UnmatchedCloser { span, .. } => {
                bad_lines.insert(line_of(span.start));
            }
            SyntaxError::UnclosedDelimiter { span, found, open_span, .. } => {
                bad_lines.insert(line_of(span.start));
                bad_lines.insert(line_of(open_span.start));
                if found.is_none() {
                    unclosed_at_eof = true;
                }
            }
            _ => {}
        }
    }
    errors
        .iter()
        .enumerate()
        .filter(|(i, e)| {
            if *i < lexed {
                return true;
            }
            match e {
                SyntaxError::Expected { span, .. } | SyntaxError::Misplaced { span, .. } => {
                    let at_eof = span.start as usize >= src.trim_end().len();
                    !(bad_lines.contains(&line_of(span.start)) || (unclosed_at_eof && at_eof))
                }
                _ => true,
            }
        })
        .map(|(_, e)| e)
        .collect()
}
