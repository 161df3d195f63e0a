//! The answers to an editor's questions, from a [`Snapshot`]: diagnostics, hovers,
//! definitions, references, document symbols and inlay hints, as `lsp_types` values.
//! Every function takes positions as the client sent them and clamps them ([`crate::pos`]),
//! so no request can make one panic.

use crate::analysis::Snapshot;
use crate::index::{Def, DefKind};
use crate::pos;
use lsp_types as lsp;
use lsp_types::Url;
use prism_cuda::barrier::BarrierHalf;
use prism_diag::Severity;
use prism_ir::ir::BarrierOrigin;
use prism_span::{FileId, Span};
use prism_syntax::ast;
use std::path::Path;

/// Where a definition is, independent of the analysis that found it: the normalised name
/// of its file and the byte offset of its name. Two documents' analyses that load one
/// module agree on its definitions' keys, so references can be gathered across them.
pub type DefKey = (String, u32);

/// The URI of file `file` of `snap`, whose document is `uri`: the document itself, a
/// module read from disk, or a standard library module, written to the cache for it
/// ([`crate::stdlib`]).
pub fn uri_of(snap: &Snapshot, uri: &Url, file: FileId) -> Option<Url> {
    if file == snap.root {
        return Some(uri.clone());
    }
    Url::from_file_path(disk_path(snap, file)?).ok()
}

/// Where file `file` of `snap` is on disk: its name when that is a path, the cache file of
/// a standard library module.
fn disk_path(snap: &Snapshot, file: FileId) -> Option<std::path::PathBuf> {
    let f = snap.map.file(file);
    if f.name().starts_with(crate::stdlib::PREFIX) {
        return crate::stdlib::file_of(f.name(), f.text());
    }
    Some(Path::new(f.name()).to_path_buf()).filter(|p| p.is_absolute())
}

fn location(snap: &Snapshot, uri: &Url, span: Span) -> Option<lsp::Location> {
    Some(lsp::Location { uri: uri_of(snap, uri, span.file)?, range: pos::range(snap.map.file(span.file), span) })
}

/// The byte offset of `p` in the document.
fn offset(snap: &Snapshot, p: lsp::Position) -> u32 {
    pos::offset(snap.map.file(snap.root), p)
}

/// The document's diagnostics, as `prism check` reports them: the code, the title, the
/// primary label, notes and help in the message; secondary labels as related information.
/// A problem in an imported module is shown on the import that loaded it, and points at
/// its real place as related information.
pub fn diagnostics(snap: &Snapshot, uri: &Url) -> Vec<lsp::Diagnostic> {
    let root = snap.map.file(snap.root);
    let mut cursor = pos::Cursor::new(root);
    snap.document_problems()
        .into_iter()
        .map(|(at, d)| {
            let mut message = d.message.clone();
            let elsewhere = d.primary.span.file != snap.root;
            if elsewhere {
                let file = snap.map.file(d.primary.span.file);
                let lc = file.line_col(d.primary.span.start);
                message = format!("in `{}` ({}:{}): {message}", file.name(), lc.line, lc.column);
            }
            if !d.primary.message.is_empty() {
                message.push_str(&format!("\n{}", d.primary.message));
            }
            for n in &d.notes {
                message.push_str(&format!("\nnote: {n}"));
            }
            if let Some(h) = &d.help {
                message.push_str(&format!("\nhelp: {h}"));
            }
            let mut related = Vec::new();
            if elsewhere && let Some(l) = location(snap, uri, d.primary.span) {
                related.push(lsp::DiagnosticRelatedInformation { location: l, message: d.primary.message.clone() });
            }
            for l in &d.secondary {
                // The import line is where the diagnostic already stands.
                if elsewhere && l.span == at {
                    continue;
                }
                if let Some(loc) = location(snap, uri, l.span) {
                    related.push(lsp::DiagnosticRelatedInformation { location: loc, message: l.message.clone() });
                }
            }
            lsp::Diagnostic {
                range: cursor.range(at),
                severity: Some(match d.severity {
                    Severity::Error => lsp::DiagnosticSeverity::ERROR,
                    Severity::Warning => lsp::DiagnosticSeverity::WARNING,
                    Severity::Note => lsp::DiagnosticSeverity::INFORMATION,
                }),
                code: Some(lsp::NumberOrString::String(d.code.to_string())),
                source: Some("prism".into()),
                message,
                related_information: if related.is_empty() { None } else { Some(related) },
                ..lsp::Diagnostic::default()
            }
        })
        .collect()
}

/// The hover at `p`: a name's type and perspective (or a function's signature), and the
/// code perspective there.
pub fn hover(snap: &Snapshot, p: lsp::Position) -> Option<lsp::Hover> {
    let off = offset(snap, p);
    let code = snap.code_at(snap.root, off);
    let found = snap.index.at(snap.root, off);
    let mut parts = Vec::new();
    if let Some((_, def)) = found {
        parts.push(format!("```prism\n{}\n```", describe(snap, def)));
    }
    if let Some(c) = code {
        parts.push(format!("code at {c}"));
    }
    if parts.is_empty() {
        return None;
    }
    Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: parts.join("\n\n"),
        }),
        range: found.map(|(s, _)| pos::range(snap.map.file(snap.root), s)),
    })
}

/// What a hover says about a definition.
fn describe(snap: &Snapshot, def: &Def) -> String {
    let text = |s: Span| snap.map.file(s.file).slice(s).to_string();
    let first_line = |s: Span| text(s).lines().next().unwrap_or_default().trim_end_matches(':').to_string();
    match def.kind {
        k if k.is_var() => match snap.vars_by_span().get(&(def.span.file, def.span.start)) {
            Some(v) => Snapshot::describe_var(v),
            // The checker made nothing of it (its declaration has an error): show what was
            // written.
            None => first_line(def.whole),
        },
        DefKind::Kernel | DefKind::Function => {
            let Some(f) = function_ast(snap, def) else { return first_line(def.whole) };
            let mut lines = vec![text(f.kind_span)];
            if let Some(r) = &f.requires {
                lines.push(text(r.span));
            }
            lines.push(text(f.header_span).trim_end_matches(':').to_string());
            lines.join("\n")
        }
        _ => first_line(def.whole),
    }
}

/// The syntax tree of the function `def` names.
fn function_ast<'a>(snap: &'a Snapshot, def: &Def) -> Option<&'a ast::Function> {
    snap.analysis.modules.get(def.module)?.ast.items.iter().find_map(|i| match i {
        ast::Item::Function(f) if f.name.span == def.span => Some(&**f),
        _ => None,
    })
}

/// Where the name at `p` is defined.
pub fn definition(snap: &Snapshot, uri: &Url, p: lsp::Position) -> Option<lsp::Location> {
    let (_, def) = snap.index.at(snap.root, offset(snap, p))?;
    location(snap, uri, def.span)
}

/// The key of the definition of the name at `p`, for [`references`].
pub fn def_key_at(snap: &Snapshot, p: lsp::Position) -> Option<DefKey> {
    let (_, def) = snap.index.at(snap.root, offset(snap, p))?;
    Some(key(snap, def.span))
}

fn key(snap: &Snapshot, span: Span) -> DefKey {
    let name = snap.map.file(span.file).name();
    // A standard module is keyed by its cache file, so that a definition in it, seen from
    // a program that imports it, and the same definition in the cache file open as a
    // document have one key.
    let path = match name.starts_with(crate::stdlib::PREFIX) {
        true => disk_path(snap, span.file).unwrap_or_else(|| Path::new(name).to_path_buf()),
        false => Path::new(name).to_path_buf(),
    };
    (crate::files::normalise(&path).display().to_string(), span.start)
}

/// Every occurrence, in `snap`'s program, of the definition with key `k` (with its own
/// name when `declaration` is true).
pub fn references(snap: &Snapshot, uri: &Url, k: &DefKey, declaration: bool) -> Vec<lsp::Location> {
    let Some(d) = snap.index.defs.iter().position(|d| key(snap, d.span) == *k) else { return Vec::new() };
    let def_span = snap.index.defs[d].span;
    snap.index.refs_of(d).filter(|s| declaration || *s != def_span).filter_map(|s| location(snap, uri, s)).collect()
}

/// The document's functions, kernels and file-level constants.
#[allow(deprecated)] // `DocumentSymbol::deprecated` must be written, though it is deprecated.
pub fn symbols(snap: &Snapshot) -> Vec<lsp::DocumentSymbol> {
    let Some(m) = snap.root_module() else { return Vec::new() };
    let file = snap.map.file(snap.root);
    m.ast
        .items
        .iter()
        .filter_map(|item| {
            let (name, kind, detail, whole) = match item {
                ast::Item::Function(f) => {
                    let detail = if f.kind == ast::FnKind::Kernel { "kernel" } else { "device function" };
                    (&f.name, lsp::SymbolKind::FUNCTION, detail.to_string(), f.span)
                }
                ast::Item::Const(c) => (&c.name, lsp::SymbolKind::CONSTANT, "constexpr".to_string(), c.span),
                ast::Item::Import(_) => return None,
            };
            Some(lsp::DocumentSymbol {
                name: name.name.clone(),
                detail: Some(detail),
                kind,
                tags: None,
                deprecated: None,
                range: pos::range(file, whole),
                selection_range: pos::range(file, name.span),
                children: None,
            })
        })
        .collect()
}

/// Inlay hints in `range`: each barrier inference inserted and each pipeline's wait and
/// barrier, where they go, and the perspective of each declaration written without `@`.
pub fn inlay_hints(snap: &Snapshot, range: lsp::Range) -> Vec<lsp::InlayHint> {
    let file = snap.map.file(snap.root);
    let (lo, hi) = (pos::offset(file, range.start), pos::offset(file, range.end));
    let mut out: Vec<lsp::InlayHint> = Vec::new();
    let hint = |at: u32, label: String, kind: Option<lsp::InlayHintKind>, tooltip: Option<String>, right: bool| {
        lsp::InlayHint {
            position: pos::position(file, at),
            label: lsp::InlayHintLabel::String(label),
            kind,
            text_edits: None,
            tooltip: tooltip.map(lsp::InlayHintTooltip::String),
            padding_left: Some(!right),
            padding_right: Some(right),
            data: None,
        }
    };
    for b in barrier_hints(snap) {
        if b.at < lo || b.at > hi {
            continue;
        }
        let position = pos::position(file, b.at);
        // Two memories ordered at one place may share one barrier, and a generic function's
        // instances each have their own: one hint, every reason.
        if let Some(h) = out
            .iter_mut()
            .find(|h| h.position == position && matches!(&h.label, lsp::InlayHintLabel::String(s) if *s == b.label))
        {
            if let Some(lsp::InlayHintTooltip::String(t)) = &mut h.tooltip
                && !t.contains(&b.tooltip)
            {
                t.push_str(&format!("\n\n{}", b.tooltip));
            }
            continue;
        }
        out.push(hint(b.at, b.label, None, Some(b.tooltip), b.before));
    }
    let Some(m) = snap.root_module() else { return out };
    let vars = snap.vars_by_span();
    let persp_of = |name: &ast::Ident| vars.get(&(name.span.file, name.span.start)).map(|v| v.persp);
    let inside = |at: u32| lo <= at && at <= hi;
    for item in &m.ast.items {
        let ast::Item::Function(f) = item else { continue };
        if f.span.end < lo || f.span.start > hi {
            continue;
        }
        for p in f.params.iter().filter(|p| p.persp.is_none()) {
            if let Some(pp) = persp_of(&p.name)
                && inside(p.ty.span.end)
            {
                out.push(hint(p.ty.span.end, format!("@ {pp}"), Some(lsp::InlayHintKind::TYPE), None, false));
            }
        }
        if let Some(r) = &f.ret
            && r.persp.is_none()
            && let Some((_, pp)) = snap.function_in(f.span).and_then(|t| t.ret)
            && inside(r.ty.span.end)
        {
            out.push(hint(r.ty.span.end, format!("@ {pp}"), Some(lsp::InlayHintKind::TYPE), None, false));
        }
        each_stmt(&f.body, &mut |s| {
            let (at, label) = match &s.kind {
                ast::StmtKind::Decl { name, ty, persp: None, .. } => match persp_of(name) {
                    Some(pp) => (ty.span.end, format!("@ {pp}")),
                    None => return,
                },
                // The names `with ... as name` makes take their perspective from the
                // construct (`p=` of a partition or a claim, the code's otherwise).
                ast::StmtKind::Partition { name, .. }
                | ast::StmtKind::Claim { name, .. }
                | ast::StmtKind::Fill { name, .. }
                | ast::StmtKind::Stage { name, .. }
                | ast::StmtKind::Async { name, .. } => match persp_of(name) {
                    Some(pp) => (name.span.end, format!("@ {pp}")),
                    None => return,
                },
                ast::StmtKind::For { var, .. } | ast::StmtKind::Pipeline { var, .. } => {
                    match vars.get(&(var.span.file, var.span.start)) {
                        Some(v) => (var.span.end, format!(": {} @ {}", v.ty, v.persp)),
                        None => return,
                    }
                }
                _ => return,
            };
            if inside(at) {
                out.push(hint(at, label, Some(lsp::InlayHintKind::TYPE), None, false));
            }
        });
    }
    out.sort_by_key(|h| (h.position.line, h.position.character));
    out
}

/// The hint of one barrier of the final IR in the document.
struct BarrierHint {
    /// Where it is shown: the start of the text of the line it stands before, or the end
    /// of the line it stands after.
    at: u32,
    /// Whether it stands before `at`'s line (else after the line it ends).
    before: bool,
    /// The CUDA the backend prints for it.
    label: String,
    /// Why it is there and what became of it.
    tooltip: String,
}

/// The inferred barriers the backends get (after barrier motion and the optimiser, so that
/// removed barriers have no hint and split ones show both halves where they stand), and
/// the waits and barriers of pipeline loops, each as the CUDA `prism_cuda` prints for it:
/// the same functions make the hint's text and the `.cu` file's. Barriers of imported modules' functions stand in their own files and are
/// shown there, when that module is the document.
fn barrier_hints(snap: &Snapshot) -> Vec<BarrierHint> {
    let Some(inferred) = &snap.sync().inferred else { return Vec::new() };
    let Some(synced) = &inferred.synced else { return Vec::new() };
    let file = snap.map.file(snap.root);
    let texts = prism_cuda::barrier::texts(synced);
    let start_of_line = |offset: u32| {
        let line = file.line_index(offset);
        let text = file.line_text(line);
        file.line_starts()[line] + (text.len() - text.trim_start().len()) as u32
    };
    let end_of_line = |offset: u32| {
        let line = file.line_index(offset);
        file.line_starts()[line] + file.line_text(line).trim_end().len() as u32
    };
    let line_of = |offset: u32| file.line_col(offset).line;
    let note_of = |func: prism_ir::FuncId, origin: &BarrierOrigin| {
        let BarrierOrigin::Inferred { mem, before, after } = origin else { return None };
        let i = inferred
            .report
            .barriers
            .iter()
            .position(|r| r.func == func && r.mem == *mem && r.before == *before && r.after == *after)?;
        let n = inferred.notes.get(i)?;
        let mut t = n.message.clone();
        for l in &n.secondary {
            if l.span.file == snap.root {
                t.push_str(&format!("\nline {}: {}", line_of(l.span.start), l.message));
            }
        }
        for note in &n.notes {
            t.push_str(&format!("\n{note}"));
        }
        Some(t)
    };
    let mut out = Vec::new();
    for b in &texts {
        if b.span.file != snap.root {
            continue;
        }
        // A wait carries no origin: its arrive, the other half with its id, does.
        let arrive = texts.iter().find(|a| a.func == b.func && a.id == b.id && a.half == BarrierHalf::Arrive);
        let origin = match b.half {
            BarrierHalf::Wait => arrive.and_then(|a| a.origin.as_ref()),
            _ => b.origin.as_ref(),
        };
        // A pipeline's wait and barrier, which the source does not spell out either.
        if let Some(p) = b.pipeline {
            let tooltip = if p.turn {
                "The pipeline's wait and barrier, where its body turns: the next tile's copies have landed (the newest groups stay in flight) and every thread is done with this tile's slots, which the next fill overwrites. From here on the body reads the next tile (docs/language.md, \"Bodies that turn\")."
            } else {
                "The pipeline's wait and barrier at the top of each tile's iteration (of the first tile only when the body turns at `stage(ring, next=True)`): the tile's copies have landed and the slot the next fill overwrites is free (docs/language.md, \"Pipelines\")."
            };
            out.push(BarrierHint {
                at: start_of_line(b.span.start),
                before: true,
                label: format!("cp.async.wait_group {}; {}", p.pending, b.text),
                tooltip: tooltip.to_string(),
            });
            continue;
        }
        // Barriers written in the source are in plain sight.
        let Some(origin @ BarrierOrigin::Inferred { .. }) = origin else { continue };
        let note = note_of(b.func, origin).unwrap_or_default();
        let (at, before, tooltip) = match b.half {
            // Inference placed it immediately before the instruction of `span`.
            BarrierHalf::Whole => {
                let tip = match &b.detail {
                    Some(d) => format!("{}: {d}.\n\n{note}", b.text),
                    None => note,
                };
                (start_of_line(b.span.start), true, tip)
            }
            // Motion moved the half: it stands before the next instruction of its block, or
            // at the end of the block, after the previous one.
            half => {
                let (at, before) = match (b.next, b.prev) {
                    (Some(n), _) if n.file == snap.root => (start_of_line(n.start), true),
                    (_, Some(p)) if p.file == snap.root => (end_of_line(p.end.saturating_sub(1).max(p.start)), false),
                    _ => (start_of_line(b.span.start), true),
                };
                let other = match half {
                    BarrierHalf::Arrive => {
                        texts.iter().find(|w| w.func == b.func && w.id == b.id && w.half == BarrierHalf::Wait)
                    }
                    _ => arrive,
                };
                let other_line = other
                    .and_then(|o| o.next.filter(|n| n.file == snap.root).or(o.prev.filter(|p| p.file == snap.root)))
                    .map(|s| format!(" on line {}", line_of(s.start)))
                    .unwrap_or_default();
                let what = if half == BarrierHalf::Arrive {
                    format!("the arrive half of split {} barrier s{}: its wait is{other_line}", b.scope, b.id)
                } else {
                    format!("the wait half of split {} barrier s{}: its arrive is{other_line}", b.scope, b.id)
                };
                let tip = format!(
                    "{what}. Barrier motion split the barrier inference placed on line {} so that the work between the halves overlaps the other threads' arrival.\n\n{note}",
                    line_of(b.span.start)
                );
                (at, before, tip)
            }
        };
        out.push(BarrierHint { at, before, label: b.text.clone(), tooltip: tooltip.trim_end().to_string() });
    }
    out
}

/// Calls `f` on every statement of `b`, nested ones included.
fn each_stmt(b: &ast::Block, f: &mut dyn FnMut(&ast::Stmt)) {
    use ast::StmtKind as S;
    for s in &b.stmts {
        f(s);
        match &s.kind {
            S::If { branches, else_block } => {
                branches.iter().for_each(|(_, b)| each_stmt(b, f));
                if let Some(b) = else_block {
                    each_stmt(b, f);
                }
            }
            S::For { body, .. }
            | S::While { body, .. }
            | S::Group { body, .. }
            | S::Partition { body, .. }
            | S::Claim { body, .. }
            | S::Pipeline { body, .. }
            | S::Fill { body, .. }
            | S::Stage { body, .. }
            | S::Async { body, .. }
            | S::Unsafe { body, .. } => each_stmt(body, f),
            S::Split { cases, .. } => cases.iter().for_each(|c| each_stmt(&c.body, f)),
            S::Decl { .. }
            | S::LambdaDef { .. }
            | S::Assign { .. }
            | S::Expr(_)
            | S::Break
            | S::Continue
            | S::Return(_)
            | S::Pass
            | S::UnsafeText(_) => {}
        }
    }
}
