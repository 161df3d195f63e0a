//! One analysis of one document: the driver's pipeline up to synchronisation inference
//! ([`prism_driver::analyse`], [`prism_driver::infer`]), the diagnostics `prism check`
//! would print, and the name index; and the questions an editor asks of it (the variable declared here, the code
//! perspective there). Everything here is pure but for the [`prism_driver::Files`] the
//! caller passes, through which imports are read.

use crate::index::{self, Index};
use prism_diag::{Diagnostic, Problems};
use prism_driver::{Analysis, Files, Search};
use prism_span::{FileId, SourceMap, Span};
use prism_types::perspective::Persp;
use prism_types::tir::{self, VarKind};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What the client configured (`initializationOptions`), as `prism check`'s options.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// The target (`--arch`).
    pub target: prism_types::Target,
    /// Include directories (`-I`), searched after the importing file's directory.
    pub include: Vec<PathBuf>,
    /// The workspace root, if the client named one: where a document that is not a file
    /// (an untitled buffer) looks for its imports first.
    pub root: Option<PathBuf>,
}

/// A document analysed: the program rooted at it, with everything it imports.
///
/// The front end runs when the snapshot is made; synchronisation inference runs the first
/// time something asks for it ([`Snapshot::sync`]), because it costs as much again and
/// only the barrier hints and its own (rare) errors need it (`docs/editors.md`).
pub struct Snapshot {
    /// Every file of the program: the document first, then the modules it loaded.
    pub map: SourceMap,
    /// The document's file.
    pub root: FileId,
    /// The driver's analysis.
    pub analysis: Analysis,
    /// What the front end reports, sorted.
    pub problems: Vec<Diagnostic>,
    /// Names and their definitions, in every module.
    pub index: Index,
    /// Every path an import was looked for at, found or not, [`prism_driver::normalise`]d:
    /// a file created at one of them can change the program ([`Snapshot::depends_on`]).
    pub looked_at: Vec<PathBuf>,
    opts: prism_driver::Options,
    sync: OnceCell<SyncPart>,
}

/// What synchronisation inference adds to a snapshot.
pub struct SyncPart {
    /// The barriers and their notes; `None` when the program has errors (inference does
    /// not run on it).
    pub inferred: Option<prism_driver::Inferred>,
    /// Inference's own errors and warnings, sorted.
    pub problems: Vec<Diagnostic>,
}

/// Analyses the document `name` (its path, or its URI when it has none) with text `text`,
/// reading imports through `files`: the front end now, inference when asked. A document
/// that is not a file (`is_file` false) has no directory of its own: its imports are
/// looked for in the workspace root first, or without one in the server's working
/// directory, then in the include directories.
pub fn analyse(name: &str, is_file: bool, text: &str, files: &mut dyn Files, settings: &Settings) -> Snapshot {
    let mut map = SourceMap::default();
    let root = map.add(name, text);
    let mut problems = Problems::default();
    let opts = prism_driver::Options { target: settings.target.clone(), ..prism_driver::Options::default() };
    let mut recording = Recording { files, looked_at: Vec::new() };
    let base = (!is_file).then(|| settings.root.clone().or_else(|| std::env::current_dir().ok()).unwrap_or_default());
    let mut search = Search { files: &mut recording, include: settings.include.clone(), base };
    let analysis = prism_driver::analyse(&mut map, root, &mut search, &opts.target, &mut problems);
    let looked_at = recording.looked_at;
    problems.sort();
    let index = index::index(&analysis.modules);
    Snapshot { map, root, analysis, problems: problems.into_vec(), index, looked_at, opts, sync: OnceCell::new() }
}

/// Files that remember every path asked for.
struct Recording<'a> {
    files: &'a mut dyn Files,
    looked_at: Vec<PathBuf>,
}

impl Files for Recording<'_> {
    fn read(&mut self, path: &Path) -> Result<Option<(String, String)>, String> {
        let norm = prism_driver::normalise(path);
        if !self.looked_at.contains(&norm) {
            self.looked_at.push(norm);
        }
        self.files.read(path)
    }
}

impl Snapshot {
    /// Synchronisation inference over the program, run now if it has not run yet.
    pub fn sync(&self) -> &SyncPart {
        self.sync.get_or_init(|| {
            let mut problems = Problems::default();
            let inferred = prism_driver::infer(&self.analysis, &self.map, &self.opts, &mut problems);
            problems.sort();
            SyncPart { inferred, problems: problems.into_vec() }
        })
    }

    /// Whether inference has run.
    pub fn synced(&self) -> bool {
        self.sync.get().is_some()
    }

    /// Everything known to be wrong: the front end's problems and, once inference has run,
    /// its own; what `prism check` prints when both are there.
    pub fn all_problems(&self) -> Vec<&Diagnostic> {
        let mut all: Vec<&Diagnostic> = self.problems.iter().collect();
        if let Some(s) = self.sync.get() {
            all.extend(&s.problems);
            all.sort_by_key(|d| (d.primary.span.file, d.primary.span.start, d.primary.span.end));
        }
        all
    }

    /// The names of the files the program loaded besides the document (paths on disk,
    /// or `<prism.std>/...`).
    pub fn imported_files(&self) -> impl Iterator<Item = &str> {
        self.map.files().filter(|(id, _)| *id != self.root).map(|(_, f)| f.name())
    }

    /// Whether a change to the file at `path` ([`prism_driver::normalise`]d) can change
    /// this analysis: the program loaded it, or an import was looked for there and not
    /// found (a module the client creates, or opens before saving it, resolves it).
    pub fn depends_on(&self, path: &Path) -> bool {
        self.looked_at.iter().any(|p| p == path)
            || self.imported_files().any(|f| prism_driver::normalise(f.as_ref()) == path)
    }

    /// The index in [`Analysis::modules`] of the document's own module (the root, last).
    pub fn root_module(&self) -> Option<&prism_driver::Module> {
        self.analysis.modules.iter().find(|m| m.file == self.root)
    }

    /// The checked function whose header is in `whole` (a function's span), if any.
    pub fn function_in(&self, whole: Span) -> Option<&tir::Function> {
        self.analysis.tir.functions.iter().find(|f| {
            f.header_span.file == whole.file && whole.start <= f.header_span.start && f.header_span.end <= whole.end
        })
    }

    /// The code perspective at byte `offset` of `file`: that of the innermost statement
    /// there, or the entry perspective of the function whose header it is in.
    pub fn code_at(&self, file: FileId, offset: u32) -> Option<Persp> {
        let mut best: Option<(u32, Persp)> = None;
        for f in &self.analysis.tir.functions {
            if f.header_span.file != file {
                continue;
            }
            if f.header_span.start <= offset && offset <= f.header_span.end {
                consider(&mut best, f.header_span, f.entry);
            }
            innermost(&f.body, file, offset, &mut best);
        }
        best.map(|(_, p)| p)
    }

    /// `x : float @ thread[32]` for a checked variable.
    pub fn describe_var(v: &tir::Var) -> String {
        let ty = match &v.kind {
            VarKind::Const => format!("const({})", v.ty),
            VarKind::Constexpr(c) => return format!("{} : constexpr({}) @ {} = {c}", v.name, v.ty, v.persp),
            VarKind::Shared { dims, .. } => {
                let elem = match &v.ty {
                    prism_types::ty::Ty::Ptr { elem, .. } => elem.name().to_string(),
                    other => other.to_string(),
                };
                let dims: String = dims
                    .iter()
                    .map(|d| if *d == tir::DYNAMIC_LEN { "[n]".to_string() } else { format!("[{d}]") })
                    .collect();
                format!("shared({elem}{dims})")
            }
            // `ptr(T, shared)`: the type's text without the space, which is the parameter's.
            VarKind::Param { shared: true } => match v.ty.to_string().strip_suffix(')') {
                Some(inner) => format!("{inner}, shared)"),
                None => v.ty.to_string(),
            },
            _ => v.ty.to_string(),
        };
        format!("{} : {ty} @ {}", v.name, v.persp)
    }

    /// The problems to show on the document, each with the span it is shown at: its own
    /// place when it is in the document, else the document's import through which the file
    /// it is in was loaded.
    pub fn document_problems(&self) -> Vec<(Span, &Diagnostic)> {
        let root = self.root_module();
        let mut out = Vec::new();
        for d in self.all_problems() {
            if d.primary.span.file == self.root {
                out.push((d.primary.span, d));
                continue;
            }
            let at = root.and_then(|m| self.import_leading_to(m, d.primary.span.file));
            out.push((at.unwrap_or(Span::new(self.root, 0, 0)), d));
        }
        out
    }

    /// The import item of `m` through which `file` was loaded (directly or further down).
    fn import_leading_to(&self, m: &prism_driver::Module, file: FileId) -> Option<Span> {
        let imports = m.ast.items.iter().filter_map(|i| match i {
            prism_syntax::ast::Item::Import(imp) => Some(imp.span),
            _ => None,
        });
        for (span, target) in imports.zip(&m.imports) {
            let Some(t) = *target else { continue };
            let mut seen = vec![false; self.analysis.modules.len()];
            if self.reaches(t, file, &mut seen) {
                return Some(span);
            }
        }
        None
    }

    fn reaches(&self, m: usize, file: FileId, seen: &mut [bool]) -> bool {
        let Some(module) = self.analysis.modules.get(m) else { return false };
        if seen[m] {
            return false;
        }
        seen[m] = true;
        module.file == file || module.imports.iter().flatten().any(|&i| self.reaches(i, file, seen))
    }

    /// The checked variables of every function by where their name is declared (in a
    /// generic function, the first instance's).
    pub fn vars_by_span(&self) -> HashMap<(FileId, u32), &tir::Var> {
        let mut out = HashMap::new();
        for v in self.analysis.tir.functions.iter().flat_map(|f| &f.vars) {
            out.entry((v.span.file, v.span.start)).or_insert(v);
        }
        out
    }
}

fn consider(best: &mut Option<(u32, Persp)>, span: Span, p: Persp) {
    if best.is_none_or(|(len, _)| span.len() <= len) {
        *best = Some((span.len(), p));
    }
}

/// Finds the smallest statement of `b` (at any depth) around `offset`.
fn innermost(b: &tir::Block, file: FileId, offset: u32, best: &mut Option<(u32, Persp)>) {
    use tir::StmtKind as S;
    for s in &b.stmts {
        if s.span.file != file || offset < s.span.start || s.span.end < offset {
            continue;
        }
        consider(best, s.span, s.code);
        match &s.kind {
            S::If { then, otherwise, .. } => {
                innermost(then, file, offset, best);
                innermost(otherwise, file, offset, best);
            }
            S::For { body, .. }
            | S::While { body, .. }
            | S::Group { body, .. }
            | S::Partition { body, .. }
            | S::Claim { body, .. }
            | S::Fill { body, .. }
            | S::Stage { body, .. }
            | S::Async { body, .. }
            | S::Unsafe { body, .. } => innermost(body, file, offset, best),
            S::Pipeline { fill, body, .. } => {
                innermost(fill, file, offset, best);
                innermost(body, file, offset, best);
            }
            S::Split { cases, .. } => {
                for c in cases {
                    if c.span.start <= offset && offset <= c.span.end {
                        consider(best, c.span, c.persp);
                    }
                    innermost(&c.body, file, offset, best);
                }
            }
            S::Decl { .. }
            | S::Assign { .. }
            | S::Store { .. }
            | S::Expr(_)
            | S::Break
            | S::Continue
            | S::Return(_)
            | S::UnsafeText(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prism_types::ty::{Scalar, Ty};

    #[test]
    fn a_shared_parameter_shows_its_space() {
        let var = |shared| tir::Var {
            name: "a_s".into(),
            ty: Ty::Ptr { elem: Scalar::BF16, mutable: false },
            persp: Persp::BLOCK,
            kind: VarKind::Param { shared },
            span: Span::default(),
        };
        assert_eq!(Snapshot::describe_var(&var(true)), "a_s : ptr(const(bf16), shared) @ block[1]");
        assert_eq!(Snapshot::describe_var(&var(false)), "a_s : ptr(const(bf16)) @ block[1]");
    }
}
