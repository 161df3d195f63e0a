//! The Prism checker: perspectives, ordinary types, and the typed IR.
//!
//! ```text
//! ast::Module --check--> tir::Program
//! ```
//!
//! [`check`] runs every rule of `docs/language.md` over a parsed module and records problems
//! in a [`prism_diag::Problems`]. The result is a [`tir::Program`] that the simulator and
//! the CUDA backend consume; it is complete and trustworthy only when no error was
//! reported. The perspective algebra is in [`perspective`], the intrinsic signatures in
//! [`intrinsics`].

#![deny(clippy::print_stdout, clippy::print_stderr)]
// Errors are built once, on the rare failing path, and moved straight into a list; boxing
// them to shrink `Result` would only add allocations to that path.
#![allow(clippy::result_large_err)]

mod check;
pub mod consts;
mod diagnostics;
pub mod error;
pub mod intrinsics;
pub mod perspective;
pub mod tir;
pub mod ty;

pub use check::Target;

use prism_diag::Problems;
use prism_syntax::ast;

/// Checks a parsed module for `target`. Errors go to `problems`.
pub fn check(module: &ast::Module, target: &Target, problems: &mut Problems) -> tir::Program {
    let mut errors = Vec::new();
    let program = check::check_module(module, target, &mut errors);
    for e in &errors {
        problems.push(e.to_diagnostic());
    }
    program
}

/// Parses and checks one source file: the whole front end.
///
/// Checker errors inside a function that also has syntax errors are dropped: the statements
/// that failed to parse are missing from it, so what the checker says there (a missing
/// `return`, an unknown name whose declaration did not parse) would mislead.
pub fn check_source(file: prism_span::FileId, src: &str, target: &Target, problems: &mut Problems) -> tir::Program {
    let mut syntax = Problems::default();
    let module = prism_syntax::parse(file, src, &mut syntax);
    let mut checked = Problems::default();
    let program = check(&module, target, &mut checked);
    let broken: Vec<prism_span::Span> = module
        .items
        .iter()
        .filter_map(|i| match i {
            ast::Item::Function(f)
                if syntax.diagnostics().iter().any(|d| {
                    d.is_error() && f.span.start <= d.primary.span.start && d.primary.span.start <= f.span.end
                }) =>
            {
                Some(f.span)
            }
            _ => None,
        })
        .collect();
    problems.extend(syntax);
    for d in checked.into_vec() {
        let s = d.primary.span.start;
        if !broken.iter().any(|f| f.start <= s && s <= f.end) {
            problems.push(d);
        }
    }
    program
}
