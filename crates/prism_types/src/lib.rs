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
pub mod value;

pub use check::{Define, Target, Unit};

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

/// Parses and checks one source file on its own: the whole front end for a file without
/// imports (each import is an `unresolved-import` error; the driver loads imported
/// modules and calls [`check_units`]).
///
/// Checker errors inside a function that also has syntax errors are dropped: the statements
/// that failed to parse are missing from it, so what the checker says there (a missing
/// `return`, an unknown name whose declaration did not parse) would mislead.
pub fn check_source(file: prism_span::FileId, src: &str, target: &Target, problems: &mut Problems) -> tir::Program {
    let mut syntax = Problems::default();
    let module = prism_syntax::parse(file, src, &mut syntax);
    // Imports are the driver's to load; here each is an error, so that no program that
    // uses an imported name can pass for checked.
    let mut imports = Vec::new();
    for item in &module.items {
        if let ast::Item::Import(i) = item {
            imports.push(None);
            problems.push(
                prism_diag::Diagnostic::error(
                    "unresolved-import",
                    format!("`{}` is not loaded: `check_source` checks one file", i.path_text()),
                    i.span,
                )
                .with_help("compile through `prism_driver`, which loads imported modules"),
            );
        }
    }
    check_units(&[Unit { ast: &module, path: Vec::new(), imports, defines: &[] }], syntax, target, problems)
}

/// Checks the parsed modules of a program (each after those it imports, the root last;
/// see [`Unit`]) given the syntax problems of all of them, which go to `problems` first.
/// Checker errors inside a function with a syntax error are dropped (see [`check_source`]).
pub fn check_units(units: &[Unit<'_>], syntax: Problems, target: &Target, problems: &mut Problems) -> tir::Program {
    let mut errors = Vec::new();
    let program = check::check_units(units, target, &mut errors);
    let broken: Vec<prism_span::Span> = units
        .iter()
        .flat_map(|u| &u.ast.items)
        .filter_map(|i| match i {
            ast::Item::Function(f)
                if syntax.diagnostics().iter().any(|d| {
                    d.is_error()
                        && d.primary.span.file == f.span.file
                        && f.span.start <= d.primary.span.start
                        && d.primary.span.start <= f.span.end
                }) =>
            {
                Some(f.span)
            }
            _ => None,
        })
        .collect();
    problems.extend(syntax);
    for e in errors.iter().filter(|e| !e.is_silent()) {
        let d = e.to_diagnostic();
        let s = d.primary.span;
        if !broken.iter().any(|f| f.file == s.file && f.start <= s.start && s.start <= f.end) {
            problems.push(d);
        }
    }
    program
}
