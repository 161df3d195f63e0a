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

use prism_diag::Problems;
use prism_span::FileId;

/// Lexes and parses one file. Syntax errors and legacy-spelling warnings go to `problems`.
pub fn parse(file: FileId, src: &str, problems: &mut Problems) -> ast::Module {
    let mut errors = Vec::new();
    let tokens = lexer::lex(file, src, &mut errors);
    let module = parser::parse_tokens(file, tokens, &mut errors);
    for e in &errors {
        problems.push(e.to_diagnostic());
    }
    module
}
