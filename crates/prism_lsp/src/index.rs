//! Which name means what: every definition of a program's modules (functions, constants,
//! parameters, locals, loop variables, the names `with ... as` makes, lambdas and their
//! parameters) and every occurrence of a name that refers to one.
//!
//! The index is built from the syntax trees, with the scoping rules of the checker
//! (`prism_types::check`): a block opens a scope, a declaration binds from the next
//! statement on, a module's functions and constants are visible everywhere in it, and an
//! import binds names of another module (`from m import f as g`, or `m.f` and `u.f` after
//! `import m [as u]`). It works on what parsed of a file with errors, which is when an
//! editor needs it most; types and perspectives come from the typed IR
//! ([`crate::analysis`]), which the checker makes even then.

use prism_span::Span;
use prism_syntax::ast;
use std::collections::HashMap;

/// What kind of thing a definition is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefKind {
    /// A kernel (`@prism("global")`).
    Kernel,
    /// A device function.
    Function,
    /// A file-level `constexpr` constant.
    Const,
    /// A function parameter.
    Param,
    /// A local declaration (`x : T @ P = ...`).
    Local,
    /// A `for` or pipeline loop variable.
    Loop,
    /// A name made by `with partition/claim/fill/stage/async(...) as name`.
    View,
    /// `name = lambda ...`.
    Lambda,
    /// A lambda's parameter.
    LambdaParam,
}

impl DefKind {
    /// Whether the definition is a variable the checker gives a type and perspective.
    pub fn is_var(self) -> bool {
        matches!(self, DefKind::Param | DefKind::Local | DefKind::Loop | DefKind::View | DefKind::LambdaParam)
    }
}

/// One definition.
#[derive(Clone, Debug)]
pub struct Def {
    /// The name as written.
    pub name: String,
    /// The name where it is defined.
    pub span: Span,
    /// What it is.
    pub kind: DefKind,
    /// The whole construct that defines it (the declaration, the function, the `with`
    /// line), for hovers and document symbols.
    pub whole: Span,
    /// The index of its module in the analysis.
    pub module: usize,
}

/// The definitions of a program and the occurrences of names that refer to them.
#[derive(Clone, Debug, Default)]
pub struct Index {
    /// Every definition.
    pub defs: Vec<Def>,
    /// Every occurrence of a name, its definition's own included: the span and the index
    /// of the definition in [`Index::defs`].
    pub refs: Vec<(Span, usize)>,
}

impl Index {
    /// The occurrence of a name at byte `offset` of `file` (the end of a name counts, so a
    /// cursor just after a name finds it), with its definition.
    pub fn at(&self, file: prism_span::FileId, offset: u32) -> Option<(Span, &Def)> {
        self.refs
            .iter()
            .filter(|(s, _)| s.file == file && s.start <= offset && offset <= s.end)
            .min_by_key(|(s, _)| s.len())
            .map(|&(s, d)| (s, &self.defs[d]))
    }

    /// The occurrences of definition `def`.
    pub fn refs_of(&self, def: usize) -> impl Iterator<Item = Span> + '_ {
        self.refs.iter().filter(move |(_, d)| *d == def).map(|(s, _)| *s)
    }
}

/// Indexes `modules` (an analysis's, in dependency order: each module's imports come
/// before it).
pub fn index(modules: &[prism_driver::Module]) -> Index {
    let mut ix = Index::default();
    // Per module: what it defines, which is what others import from it.
    let mut exports: Vec<HashMap<String, usize>> = Vec::new();
    for (m, module) in modules.iter().enumerate() {
        let mut top: HashMap<String, usize> = HashMap::new();
        for item in &module.ast.items {
            let (name, kind, whole) = match item {
                ast::Item::Function(f) => {
                    let kind = if f.kind == ast::FnKind::Kernel { DefKind::Kernel } else { DefKind::Function };
                    (&f.name, kind, f.span)
                }
                ast::Item::Const(c) => (&c.name, DefKind::Const, c.span),
                ast::Item::Import(_) => continue,
            };
            let d = ix.define(name, kind, whole, m);
            // A duplicate is an error the checker reports; the first one is the name.
            top.entry(name.name.clone()).or_insert(d);
        }
        exports.push(top.clone());
        // Module prefixes (`u` of `import lib.util as u`, `lib.util` without `as`).
        let mut prefixes: HashMap<String, usize> = HashMap::new();
        let mut imports = module.imports.iter();
        for item in &module.ast.items {
            let ast::Item::Import(imp) = item else { continue };
            let Some(Some(target)) = imports.next().copied() else { continue };
            let Some(from) = exports.get(target) else { continue };
            match &imp.kind {
                ast::ImportKind::Module { alias } => {
                    let prefix = alias.as_ref().map_or_else(|| imp.path_text(), |a| a.name.clone());
                    prefixes.insert(prefix, target);
                }
                ast::ImportKind::Names(names) => {
                    for (name, alias) in names {
                        let Some(&d) = from.get(&name.name) else { continue };
                        ix.refs.push((name.span, d));
                        if let Some(a) = alias {
                            ix.refs.push((a.span, d));
                        }
                        let local = alias.as_ref().unwrap_or(name);
                        top.entry(local.name.clone()).or_insert(d);
                    }
                }
            }
        }
        let mut w =
            Walker { ix: &mut ix, module: m, top: &top, prefixes: &prefixes, exports: &exports, scopes: Vec::new() };
        for item in &module.ast.items {
            match item {
                ast::Item::Function(f) => w.function(f),
                ast::Item::Const(c) => {
                    w.ty(&c.ty);
                    w.expr(&c.value);
                }
                ast::Item::Import(_) => {}
            }
        }
    }
    ix
}

impl Index {
    fn define(&mut self, name: &ast::Ident, kind: DefKind, whole: Span, module: usize) -> usize {
        let d = self.defs.len();
        self.defs.push(Def { name: name.name.clone(), span: name.span, kind, whole, module });
        self.refs.push((name.span, d));
        d
    }
}

/// The walk over one module's bodies.
struct Walker<'a> {
    ix: &'a mut Index,
    module: usize,
    top: &'a HashMap<String, usize>,
    prefixes: &'a HashMap<String, usize>,
    exports: &'a [HashMap<String, usize>],
    scopes: Vec<Vec<(String, usize)>>,
}

impl Walker<'_> {
    fn bind(&mut self, name: &ast::Ident, kind: DefKind, whole: Span) {
        let d = self.ix.define(name, kind, whole, self.module);
        if let Some(s) = self.scopes.last_mut() {
            s.push((name.name.clone(), d));
        }
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        for s in self.scopes.iter().rev() {
            if let Some((_, d)) = s.iter().rev().find(|(n, _)| n == name) {
                return Some(*d);
            }
        }
        self.top.get(name).copied()
    }

    fn use_name(&mut self, name: &str, span: Span) {
        if let Some(d) = self.lookup(name) {
            self.ix.refs.push((span, d));
        }
    }

    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        self.scopes.push(Vec::new());
        f(self);
        self.scopes.pop();
    }

    fn function(&mut self, f: &ast::Function) {
        self.scoped(|w| {
            if let Some(r) = &f.requires {
                r.entries.iter().for_each(|p| w.persp(p));
                r.smem.iter().chain(&r.block).for_each(|e| w.expr(e));
            }
            f.launch_bounds.iter().chain(&f.min_blocks).for_each(|e| w.expr(e));
            for p in &f.params {
                w.ty(&p.ty);
                if let Some(pp) = &p.persp {
                    w.persp(pp);
                }
                w.bind(&p.name, DefKind::Param, p.span);
            }
            if let Some(r) = &f.ret {
                w.ty(&r.ty);
                if let Some(p) = &r.persp {
                    w.persp(p);
                }
            }
            w.block_no_scope(&f.body);
        });
    }

    fn block(&mut self, b: &ast::Block) {
        self.scoped(|w| w.block_no_scope(b));
    }

    fn block_no_scope(&mut self, b: &ast::Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    /// A `with ... as name:` body: `name` is bound inside it.
    fn with_name(&mut self, name: &ast::Ident, whole: Span, body: &ast::Block) {
        self.scoped(|w| {
            w.bind(name, DefKind::View, whole);
            w.block_no_scope(body);
        });
    }

    fn stmt(&mut self, s: &ast::Stmt) {
        use ast::StmtKind as S;
        match &s.kind {
            S::Decl { name, ty, persp, init } => {
                self.ty(ty);
                if let Some(p) = persp {
                    self.persp(p);
                }
                if let Some(e) = init {
                    self.expr(e);
                }
                self.bind(name, DefKind::Local, s.span);
            }
            S::LambdaDef { name, lambda } => {
                self.lambda(lambda);
                self.bind(name, DefKind::Lambda, s.span);
            }
            S::Assign { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            S::Expr(e) | S::Return(Some(e)) => self.expr(e),
            S::If { branches, else_block } => {
                for (c, b) in branches {
                    self.expr(c);
                    self.block(b);
                }
                if let Some(b) = else_block {
                    self.block(b);
                }
            }
            S::For { var, start, end, step, unroll, body } => {
                start.iter().chain(Some(end)).chain(step).chain(unroll).for_each(|e| self.expr(e));
                self.scoped(|w| {
                    w.bind(var, DefKind::Loop, s.span);
                    w.block_no_scope(body);
                });
            }
            S::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            S::Break | S::Continue | S::Return(None) | S::Pass | S::UnsafeText(_) => {}
            S::Group { persp, body } => {
                self.persp(persp);
                self.block(body);
            }
            S::Partition { src, persp, index, name, body } => {
                self.use_name(&src.name, src.span);
                self.persp(persp);
                match index {
                    ast::IndexFn::Lambda(l) => self.lambda(l),
                    ast::IndexFn::Name(n) => self.use_name(&n.name, n.span),
                    ast::IndexFn::Offset(e) => self.expr(e),
                }
                self.with_name(name, s.span, body);
            }
            S::Claim { src, persp, name, body } => {
                self.use_name(&src.name, src.span);
                self.persp(persp);
                self.with_name(name, s.span, body);
            }
            S::Pipeline { var, count, stages, body } => {
                self.expr(count);
                self.expr(stages);
                self.scoped(|w| {
                    w.bind(var, DefKind::Loop, s.span);
                    w.block_no_scope(body);
                });
            }
            S::Stage { src, late, name, body, .. } => {
                self.use_name(&src.name, src.span);
                // `late=` may name a constexpr.
                if let Some(e) = late {
                    self.expr(e);
                }
                self.with_name(name, s.span, body);
            }
            S::Fill { src, name, body } | S::Async { src, name, body } => {
                self.use_name(&src.name, src.span);
                self.with_name(name, s.span, body);
            }
            S::Unsafe { body, .. } => self.block(body),
            S::Split { cases, .. } => {
                for c in cases {
                    self.expr(&c.count);
                    self.block(&c.body);
                }
            }
        }
    }

    fn lambda(&mut self, l: &ast::Lambda) {
        self.scoped(|w| {
            for p in &l.params {
                w.bind(p, DefKind::LambdaParam, l.span);
            }
            w.expr(&l.body);
        });
    }

    fn persp(&mut self, p: &ast::Persp) {
        self.expr(&p.size);
    }

    fn ty(&mut self, t: &ast::TypeExpr) {
        match &t.kind {
            ast::TypeKind::Named(_) => {}
            ast::TypeKind::Array(elem, dims) => {
                self.ty(elem);
                dims.iter().for_each(|d| self.expr(d));
            }
            ast::TypeKind::Ptr(elem, _) | ast::TypeKind::Const(elem) | ast::TypeKind::Constexpr(elem) => self.ty(elem),
            ast::TypeKind::Shared { elem, align } => {
                self.ty(elem);
                align.iter().for_each(|e| self.expr(e));
            }
            ast::TypeKind::TensorMap { elem, swizzle } => {
                self.ty(elem);
                swizzle.iter().for_each(|e| self.expr(e));
            }
        }
    }

    fn expr(&mut self, e: &ast::Expr) {
        use ast::ExprKind as E;
        match &e.kind {
            E::Name(n) => self.use_name(n, e.span),
            E::Attr { base, name } => {
                // `u.f` or `lib.util.f`: a name of an imported module.
                match dotted(base).and_then(|p| self.prefixes.get(&p)) {
                    Some(&m) => {
                        if let Some(&d) = self.exports.get(m).and_then(|x| x.get(&name.name)) {
                            self.ix.refs.push((name.span, d));
                        }
                    }
                    None => self.expr(base),
                }
            }
            E::Call { callee, args } => {
                self.expr(callee);
                args.iter().for_each(|a| self.expr(&a.value));
            }
            E::Index { base, indices } => {
                self.expr(base);
                indices.iter().for_each(|i| self.expr(i));
            }
            E::Unary(_, a) => self.expr(a),
            E::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            E::Ternary { cond, then, otherwise } => {
                self.expr(cond);
                self.expr(then);
                self.expr(otherwise);
            }
            E::List(xs) => xs.iter().for_each(|x| self.expr(x)),
            E::Lambda(l) => self.lambda(l),
            E::Int(_) | E::Float(_) | E::Bool(_) | E::Str(_) | E::Elided | E::Error => {}
        }
    }
}

/// `a.b.c` as text, for a name or a chain of attributes on a name.
fn dotted(e: &ast::Expr) -> Option<String> {
    match &e.kind {
        ast::ExprKind::Name(n) => Some(n.clone()),
        ast::ExprKind::Attr { base, name } => Some(format!("{}.{}", dotted(base)?, name.name)),
        _ => None,
    }
}
