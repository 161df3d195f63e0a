//! Statements: declarations, assignments and stores, control flow, and exits.
//!
//! The perspective rules here are the information-flow discipline of language.md §3:
//! conditions and loop bounds must be uniform over the code's perspective (read up); a
//! variable at P is written only by code at C with P ⊑ C, with a value uniform over P
//! (write down); stores through memory happen only in `thread[1]` code through a
//! `thread[1]` name.

use super::ctx::{Binding, Checker, ClaimState, Frame, LambdaDef, Val};
use crate::error::{Expected, Found, IndexProblem, ReturnProblem, Sink, TypeError};
use crate::perspective::Persp;
use crate::tir::{self, ConstValue, ExprKind, Place, StmtKind, VarId, VarKind};
use crate::ty::{Scalar, Ty};
use prism_span::Span;
use prism_syntax::ast;
use std::rc::Rc;

/// A declared type, resolved.
pub(crate) enum DeclTy {
    Scalar(Scalar),
    Const(Scalar),
    Constexpr(Scalar),
    Array(Scalar, Vec<u64>),
    Shared { elem: Scalar, dims: Vec<u64>, align: u64 },
    Bad,
}

/// The most elements a local array may have (256 KiB of registers and local memory per
/// thread is already far beyond what a kernel can use).
const MAX_LOCAL_ELEMS: u64 = 1 << 16;

impl Checker<'_> {
    /// Checks a block in a new scope; shared allocations inside it end with it.
    pub fn block(&mut self, b: &ast::Block) -> tir::Block {
        self.push_scope();
        let saved = self.smem_cur;
        let r = self.block_no_scope(b);
        self.smem_cur = saved;
        self.pop_scope();
        r
    }

    pub fn block_no_scope(&mut self, b: &ast::Block) -> tir::Block {
        let mut stmts = Vec::new();
        for s in &b.stmts {
            self.stmt(s, &mut stmts);
        }
        tir::Block { stmts }
    }

    fn push(&self, out: &mut Vec<tir::Stmt>, kind: StmtKind, span: Span) {
        out.push(tir::Stmt { kind, code: self.code, span });
    }

    pub(crate) fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<tir::Stmt>) {
        use ast::StmtKind as A;
        let span = s.span;
        match &s.kind {
            A::Decl { name, ty, persp, init } => self.decl(name, ty, persp.as_ref(), init.as_ref(), span, out),
            A::LambdaDef { name, lambda } => {
                let captures = self.captures(lambda);
                self.bind(&name.name, Binding::Lambda(Rc::new(LambdaDef { lambda: lambda.clone(), captures })));
            }
            A::Assign { target, op, value } => {
                if let Some(k) = self.assign(target, *op, value) {
                    self.push(out, k, span);
                }
            }
            A::Expr(e) => {
                let v = self.expr(e, None);
                if !v.err && !matches!(v.e.kind, ExprKind::Call(_)) {
                    self.error(TypeError::Unsupported {
                        what: "an expression statement that is not a call".into(),
                        span: e.span,
                        help: Some("the value is computed and thrown away; assign it or remove it".into()),
                    });
                }
                self.push(out, StmtKind::Expr(v.e), span);
            }
            A::If { branches, else_block } => {
                let k = self.if_chain(branches, else_block.as_ref());
                self.push(out, k, span);
            }
            A::While { cond, body } => {
                let c = self.condition(cond, Sink::WhileCondition);
                self.frames.push(Frame::Loop);
                let body = self.block(body);
                self.frames.pop();
                self.push(out, StmtKind::While { cond: c, body }, span);
            }
            A::For { var, start, end, step, unroll, body } => {
                self.for_loop(var, start.as_ref(), end, step.as_ref(), unroll.as_ref(), body, span, out)
            }
            A::Break => {
                self.exit_loop("break", span);
                self.push(out, StmtKind::Break, span);
            }
            A::Continue => {
                self.exit_loop("continue", span);
                self.push(out, StmtKind::Continue, span);
            }
            A::Return(value) => {
                let k = self.ret(value.as_ref(), span);
                self.push(out, k, span);
            }
            A::Pass => {}
            A::Group { persp, body } => {
                if let Some(k) = self.group(persp, body, span) {
                    self.push(out, k, span);
                }
            }
            A::Split { level, level_span, cases } => {
                if let Some(k) = self.split(*level, *level_span, cases, span) {
                    self.push(out, k, span);
                }
            }
            A::Partition { src, persp, index, name, body } => {
                if let Some(k) = self.partition(src, persp, index, name, body, span) {
                    self.push(out, k, span);
                }
            }
            A::Claim { src, persp, name, body } => {
                if let Some(k) = self.claim(src, persp, name, body, span) {
                    self.push(out, k, span);
                }
            }
            A::Pipeline { var, count, stages, body } => self.pipeline_loop(var, count, stages, body, span, out),
            A::Fill { src, name, body } | A::Stage { src, name, body, .. } => {
                let fill = matches!(s.kind, A::Fill { .. });
                let next = matches!(s.kind, A::Stage { next: true, .. });
                let late = match &s.kind {
                    A::Stage { late: Some(e), .. } => match self.const_bool(e, "a stage's `late=`") {
                        Some(b) => b,
                        None => return,
                    },
                    _ => false,
                };
                if let Some(k) = self.slot_scope(fill, next, late, src, name, body, span) {
                    self.push(out, k, span);
                }
            }
            A::Async { src, name, body } => {
                if let Some(k) = self.async_scope(src, name, body, span) {
                    self.push(out, k, span);
                }
            }
            A::Unsafe { cuda, body } => {
                self.unsafe_depth += 1;
                self.frames.push(Frame::Unsafe);
                let body = self.block(body);
                self.frames.pop();
                self.unsafe_depth -= 1;
                self.push(out, StmtKind::Unsafe { cuda: cuda.as_ref().map(|c| c.value.clone()), body }, span);
            }
            A::UnsafeText(text) => self.push(out, StmtKind::UnsafeText(text.value.clone()), span),
        }
    }

    /// Evaluates a constant integer (a size, count or alignment) in the function's scope.
    pub fn const_int(&mut self, e: &ast::Expr, what: &str) -> Option<i128> {
        self.constant(e, what, Expected::Integer, |c, s| match c {
            ConstValue::Int(n) if s.is_some_and(|s| s.is_int()) => Some(n),
            _ => None,
        })
    }

    /// Evaluates a compile-time boolean (a literal or a `constexpr`) in the function's scope.
    pub fn const_bool(&mut self, e: &ast::Expr, what: &str) -> Option<bool> {
        self.constant(e, what, Expected::Scalar(Scalar::Bool), |c, _| match c {
            ConstValue::Bool(b) => Some(b),
            _ => None,
        })
    }

    /// Evaluates `e` at compile time and takes what `pick` finds in the constant (given its
    /// scalar type); a run-time value is `not-constant`, a constant `pick` refuses a
    /// mismatch with `expected`.
    fn constant<T>(
        &mut self,
        e: &ast::Expr,
        what: &str,
        expected: Expected,
        pick: impl Fn(ConstValue, Option<Scalar>) -> Option<T>,
    ) -> Option<T> {
        let v = self.expr(e, None);
        if v.err {
            return None;
        }
        let ExprKind::Const(c) = &v.e.kind else {
            let culprit = self.first_runtime_leaf(&v.e);
            self.error(TypeError::NotConstant { what: what.to_string(), span: e.span, culprit });
            return None;
        };
        let picked = pick(*c, v.scalar());
        if picked.is_none() {
            self.error(TypeError::Mismatch {
                expected,
                found: Found::Type(v.e.ty.clone()),
                span: e.span,
                context: what.to_string(),
                help: None,
            });
        }
        picked
    }

    /// Evaluates a perspective written in the body.
    pub fn persp(&mut self, p: &ast::Persp) -> Option<Persp> {
        let n = self.const_int(&p.size, "a perspective's unit count")?;
        match super::make_persp(p.level, n, p.span) {
            Ok(x) => Some(x),
            Err(e) => {
                self.error(e);
                None
            }
        }
    }

    fn decl_ty(&mut self, t: &ast::TypeExpr) -> DeclTy {
        use ast::TypeKind as K;
        match &t.kind {
            K::Named(n) => match Scalar::from_name(n) {
                Some(s) => DeclTy::Scalar(s),
                None => {
                    if n == "CUTensorMap" {
                        self.error(TypeError::Unsupported {
                            what: "a local `CUTensorMap`".into(),
                            span: t.span,
                            help: Some("tensor maps are kernel parameters".into()),
                        });
                    } else {
                        self.error(TypeError::UnknownType { name: n.clone(), span: t.span });
                    }
                    DeclTy::Bad
                }
            },
            K::Const(inner) => match super::scalar_of(inner) {
                Some(s) => DeclTy::Const(s),
                None => {
                    self.error(TypeError::Unsupported {
                        what: format!("`{}`", super::type_text(t)),
                        span: t.span,
                        help: Some("`const(T)` takes a scalar T".into()),
                    });
                    DeclTy::Bad
                }
            },
            K::Constexpr(inner) => match super::scalar_of(inner) {
                Some(s) => DeclTy::Constexpr(s),
                None => {
                    self.error(TypeError::Unsupported {
                        what: format!("`{}`", super::type_text(t)),
                        span: t.span,
                        help: Some("`constexpr(T)` takes a scalar T".into()),
                    });
                    DeclTy::Bad
                }
            },
            K::Array(elem, dims) => {
                let Some(s) = self.elem_scalar(elem) else { return DeclTy::Bad };
                match self.dims(dims) {
                    Some(d) => {
                        // Saturating: sizes go up to 2^32, so two of them can overflow `u64`.
                        let elems = d.iter().fold(1u64, |n, &k| n.saturating_mul(k));
                        if elems > MAX_LOCAL_ELEMS {
                            self.error(TypeError::Unsupported {
                                what: format!("a local array of {elems} elements"),
                                span: t.span,
                                help: Some(format!("local arrays live in registers and local memory; keep them under {MAX_LOCAL_ELEMS} elements, or use shared memory")),
                            });
                            return DeclTy::Bad;
                        }
                        DeclTy::Array(s, d)
                    }
                    None => DeclTy::Bad,
                }
            }
            K::Shared { elem, align } => {
                let K::Array(inner, dims) = &elem.kind else {
                    self.error(TypeError::Unsupported {
                        what: format!("`{}`", super::type_text(t)),
                        span: t.span,
                        help: Some("shared memory holds arrays of static size: `shared(float[128])`".into()),
                    });
                    return DeclTy::Bad;
                };
                let Some(s) = self.elem_scalar(inner) else { return DeclTy::Bad };
                let Some(d) = self.dims(dims) else { return DeclTy::Bad };
                let align = match align {
                    Some(a) => match self.const_int(a, "an alignment") {
                        Some(a) if a > 0 && (a as u64).is_power_of_two() && a <= 4096 => a as u64,
                        Some(_) => {
                            self.error(TypeError::ConstEval {
                                reason: crate::consts::ConstError::Alignment,
                                span: a.span,
                            });
                            16
                        }
                        None => 16,
                    },
                    None => 16,
                };
                DeclTy::Shared { elem: s, dims: d, align }
            }
            K::Ptr(..) => DeclTy::Bad,
            K::TensorMap { .. } => {
                self.error(TypeError::Unsupported {
                    what: "a local tensor map".into(),
                    span: t.span,
                    help: Some(
                        "tensor maps are kernel parameters; the launcher builds them from the argument array".into(),
                    ),
                });
                DeclTy::Bad
            }
        }
    }

    fn elem_scalar(&mut self, t: &ast::TypeExpr) -> Option<Scalar> {
        match super::scalar_of(t) {
            Some(s) => Some(s),
            None => {
                match &t.kind {
                    ast::TypeKind::Named(n) => self.error(TypeError::UnknownType { name: n.clone(), span: t.span }),
                    _ => self.error(TypeError::Unsupported {
                        what: format!("arrays of `{}`", super::type_text(t)),
                        span: t.span,
                        help: Some("array elements are scalars".into()),
                    }),
                }
                None
            }
        }
    }

    fn dims(&mut self, dims: &[ast::Expr]) -> Option<Vec<u64>> {
        let mut out = Vec::new();
        for d in dims {
            let n = self.const_int(d, "an array size")?;
            if !(1..=(1 << 32)).contains(&n) {
                self.error(TypeError::ConstEval { reason: crate::consts::ConstError::ArraySize { n }, span: d.span });
                return None;
            }
            out.push(n as u64);
        }
        Some(out)
    }

    fn check_duplicate(&mut self, name: &ast::Ident) {
        if let Some(b) = self.lookup_here(&name.name) {
            let first = match b {
                Binding::Var(v) => self.var(*v).span,
                Binding::Lambda(l) => l.lambda.span,
                Binding::Poisoned(s) => *s,
            };
            self.error(TypeError::Duplicate { name: name.name.clone(), span: name.span, first });
        }
    }

    fn decl(
        &mut self,
        name: &ast::Ident,
        ty: &ast::TypeExpr,
        persp: Option<&ast::Persp>,
        init: Option<&ast::Expr>,
        span: Span,
        out: &mut Vec<tir::Stmt>,
    ) {
        self.check_duplicate(name);
        let declared = match persp {
            Some(p) => match self.persp(p) {
                Some(x) => Some(x),
                None => return,
            },
            None => None,
        };
        let p = declared.unwrap_or(self.code);
        if let ast::TypeKind::Ptr(..) = ty.kind {
            self.error(TypeError::PointerAlias {
                name: name.name.clone(),
                span: ty.span,
                help: "pointers are parameters; narrow them with `partition`, `claim` or `async` instead of copying"
                    .into(),
            });
            self.bind(&name.name, Binding::Poisoned(name.span));
            return;
        }
        let dty = self.decl_ty(ty);
        // A declaration broader than the code is one mistake: report it, then check the
        // initialiser without perspective errors, which would only restate it.
        let too_broad = !self.facts.narrower_eq(p, self.code);
        let broader = |cx: &mut Self| {
            if too_broad {
                let e = TypeError::DeclBroader {
                    name: name.name.clone(),
                    var_persp: p,
                    code: cx.code,
                    span: persp.map(|x| x.span).unwrap_or(name.span),
                };
                cx.persp_error(e);
                cx.unsafe_depth += 1;
            }
        };
        let unbroader = |cx: &mut Self| {
            if too_broad {
                cx.unsafe_depth -= 1;
            }
        };
        let (v, init) = match dty {
            DeclTy::Bad => {
                if let Some(i) = init {
                    self.expr(i, Some(p));
                }
                self.bind(&name.name, Binding::Poisoned(name.span));
                return;
            }
            DeclTy::Scalar(s) | DeclTy::Const(s) => {
                broader(self);
                let is_const = matches!(dty, DeclTy::Const(_));
                let e = match init {
                    Some(i) => {
                        let v = self.expr(i, Some(p));
                        let e = self.coerce(v, s, &format!("initialiser of `{}`", name.name));
                        self.check_value(&format!("`{}`", name.name), p, &e, Some(name.span));
                        Some(e)
                    }
                    None => {
                        if is_const {
                            self.error(TypeError::ConstWithoutInit {
                                name: name.name.clone(),
                                kind: "const",
                                span: name.span,
                            });
                        }
                        None
                    }
                };
                unbroader(self);
                let kind = if is_const { VarKind::Const } else { VarKind::Local };
                (self.new_var(&name.name, Ty::Scalar(s), p, kind, name.span), e)
            }
            DeclTy::Constexpr(s) => {
                let Some(i) = init else {
                    self.error(TypeError::ConstWithoutInit {
                        name: name.name.clone(),
                        kind: "constexpr",
                        span: name.span,
                    });
                    return;
                };
                let v = self.expr(i, None);
                if v.err {
                    return;
                }
                let e = self.coerce(v, s, &format!("value of `{}`", name.name));
                let ExprKind::Const(c) = e.kind else {
                    let culprit = self.first_runtime_leaf(&e);
                    self.error(TypeError::NotConstant {
                        what: format!("the value of constexpr `{}`", name.name),
                        span: i.span,
                        culprit,
                    });
                    return;
                };
                let v = self.new_var(&name.name, Ty::Scalar(s), p, VarKind::Constexpr(c), name.span);
                self.bind(&name.name, Binding::Var(v));
                return;
            }
            DeclTy::Array(s, dims) => {
                broader(self);
                unbroader(self);
                if let Some(i) = init {
                    self.error(TypeError::Unsupported {
                        what: "initialising a local array in its declaration".into(),
                        span: i.span,
                        help: Some("local arrays start zeroed; assign elements, e.g. in a `for` loop".into()),
                    });
                }
                (self.new_var(&name.name, Ty::Array { elem: s, dims }, p, VarKind::Local, name.span), None)
            }
            DeclTy::Shared { elem, dims, align } => {
                let misplaced = self.code != Persp::BLOCK || declared.is_some_and(|d| d != Persp::BLOCK);
                if misplaced {
                    self.error(TypeError::SharedOutsideBlock {
                        code: self.code,
                        declared,
                        span: persp.map(|x| x.span).unwrap_or(ty.span).to(name.span),
                    });
                }
                if let Some(i) = init {
                    self.error(TypeError::Unsupported {
                        what: "initialising shared memory in its declaration".into(),
                        span: i.span,
                        help: Some("write it through a `partition(..., p=thread[1], ...)` view".into()),
                    });
                }
                // Saturating, here and in the sum below: an absurd size must fail the budget
                // check, not overflow (a panic in debug builds, a wrap past it in release).
                let bytes = dims.iter().fold(elem.size(), |n, &k| n.saturating_mul(k));
                let offset = super::call::align_up(self.smem_cur, align);
                // A misplaced allocation is one mistake; do not also charge it to the budget.
                if !misplaced {
                    self.smem_cur = offset.saturating_add(bytes);
                    self.smem_need = self.smem_need.max(self.smem_cur);
                }
                let v = self.new_var(
                    &name.name,
                    Ty::Ptr { elem, mutable: true },
                    Persp::BLOCK,
                    VarKind::Shared { dims, offset, bytes },
                    name.span,
                );
                (v, None)
            }
        };
        self.bind(&name.name, Binding::Var(v));
        self.push(out, StmtKind::Decl { var: v, init }, span);
    }

    /// Names a lambda reads that are bound locally where it is defined.
    fn captures(&mut self, l: &ast::Lambda) -> Vec<(String, Binding)> {
        let mut names = Vec::new();
        free_names(&l.body, &mut names);
        let mut out = Vec::new();
        for (n, span) in names {
            if l.params.iter().any(|p| p.name == n) || out.iter().any(|(m, _)| *m == n) {
                continue;
            }
            match self.lookup(&n) {
                Some(b) => out.push((n, b)),
                None => {
                    if !self.g.consts.contains_key(&n)
                        && !self.g.fns.contains_key(&n)
                        && crate::intrinsics::lookup(&n).is_none()
                        && n != "id"
                    {
                        self.unknown_name(&n, span);
                    }
                }
            }
        }
        out
    }

    /// Reports a value that is not uniform over the perspective of what it is written to.
    pub fn check_value(&mut self, target: &str, persp: Persp, e: &tir::Expr, origin: Option<Span>) {
        if let Some(culprit) = self.culprit(e, persp) {
            self.persp_error(TypeError::NarrowValue {
                target: target.to_string(),
                target_persp: persp,
                culprit,
                span: e.span,
                origin,
            });
        }
    }

    /// Checks that code at the current perspective may write a place at `persp`; false
    /// (after reporting) when it may not.
    pub fn check_write(&mut self, place: &Place, persp: Persp, origin: Span, span: Span) -> bool {
        if !self.facts.narrower_eq(persp, self.code) {
            let name = self.place_name(place);
            self.persp_error(TypeError::WriteBroader { name, var_persp: persp, code: self.code, span, origin });
            return false;
        }
        true
    }

    /// A variable an enclosing partition's indexing function reads may not be assigned
    /// while the view lives (see `partition` in scope.rs). Called for every way a place is
    /// written: assignments, `out=` places and vector loads here, and local arrays passed
    /// for writable pointer parameters in `Checker::mem_arg` (call.rs).
    pub(super) fn check_not_frozen(&mut self, v: VarId, span: Span) {
        if let Some((_, lambda, view)) = self.frozen.iter().find(|(f, _, _)| *f == v).cloned() {
            let name = self.var(v).name.clone();
            let decl = self.var(v).span;
            self.error(TypeError::CaptureAssigned { name, view, span, lambda, decl });
        }
    }

    pub fn place_name(&self, p: &Place) -> String {
        match p {
            Place::Var(v) | Place::Elem { array: v, .. } => self.var(*v).name.clone(),
        }
    }

    /// Resolves an assignable thread-local place: a scalar variable or a local array
    /// element. Returns the place, its element type, its perspective and declaration span.
    pub fn place(&mut self, e: &ast::Expr, target: Option<Persp>) -> Option<(Place, Scalar, Persp, Span)> {
        match &e.kind {
            ast::ExprKind::Name(n) => {
                let v = match self.resolve(n) {
                    super::expr::Resolved::Var(v) => v,
                    super::expr::Resolved::Unknown => {
                        self.unknown_name(n, e.span);
                        return None;
                    }
                    _ => {
                        self.error(TypeError::Unsupported {
                            what: format!("assigning to `{n}`"),
                            span: e.span,
                            help: None,
                        });
                        return None;
                    }
                };
                if !self.check_visible(v, e.span) {
                    return None;
                }
                let var = self.var(v).clone();
                let kind = match var.kind {
                    VarKind::Const => Some("const"),
                    VarKind::Constexpr(_) => Some("constexpr"),
                    VarKind::LoopVar => Some("loop variable"),
                    VarKind::LambdaParam => Some("lambda parameter"),
                    _ => None,
                };
                if let Some(kind) = kind {
                    self.error(TypeError::AssignToConst { name: n.clone(), kind, span: e.span, decl: var.span });
                    return None;
                }
                self.check_not_frozen(v, e.span);
                match var.ty {
                    Ty::Scalar(s) => Some((Place::Var(v), s, var.persp, var.span)),
                    Ty::Array { .. } => {
                        self.error(TypeError::Mismatch {
                            expected: Expected::ScalarPlace,
                            found: Found::Array(n.to_string()),
                            span: e.span,
                            context: "arrays are assigned element by element".into(),
                            help: Some(format!("write `{n}[i] = ...`")),
                        });
                        None
                    }
                    _ => {
                        self.error(TypeError::PointerAlias {
                            name: n.clone(),
                            span: e.span,
                            help: format!("store through it instead: `{n}[i] = ...`"),
                        });
                        None
                    }
                }
            }
            ast::ExprKind::Index { base, indices } => {
                let (v, all) = self.index_base(base, indices, e.span)?;
                let var = self.var(v).clone();
                if matches!(var.ty, Ty::Array { .. }) {
                    self.check_not_frozen(v, e.span);
                }
                let Ty::Array { elem, dims } = &var.ty else {
                    self.error(TypeError::Unsupported {
                        what: "an output into memory".into(),
                        span: e.span,
                        help: Some("outputs go to local variables and arrays; store them afterwards".into()),
                    });
                    return None;
                };
                if all.len() != dims.len() {
                    self.error(TypeError::BadIndex {
                        problem: IndexProblem::Rank { name: var.name.clone(), rank: dims.len(), given: all.len() },
                        span: e.span,
                        help: None,
                    });
                    return None;
                }
                let index: Vec<tir::Expr> =
                    all.iter().map(|i| self.int_expr(i, target.or(Some(var.persp)), "index")).collect();
                for (i, d) in index.iter().zip(dims) {
                    if let ExprKind::Const(ConstValue::Int(x)) = i.kind
                        && (x < 0 || x as u64 >= *d)
                    {
                        self.error(TypeError::BadIndex {
                            problem: IndexProblem::OutOfBounds { name: var.name.clone(), index: x, dim: *d },
                            span: i.span,
                            help: None,
                        });
                    }
                }
                // An element index that varies within the array's units would make the
                // threads of a unit write different elements.
                for i in &index {
                    self.check_value(&format!("an index of `{}`", var.name), var.persp, i, Some(var.span));
                }
                Some((Place::Elem { array: v, index }, *elem, var.persp, var.span))
            }
            _ => {
                self.error(TypeError::Unsupported {
                    what: "assigning to this expression".into(),
                    span: e.span,
                    help: Some("assign to a variable, an array element, or memory (`p[i] = ...`)".into()),
                });
                None
            }
        }
    }

    fn assign(&mut self, target: &ast::Expr, op: Option<ast::BinOp>, value: &ast::Expr) -> Option<StmtKind> {
        // A store through memory?
        if let ast::ExprKind::Index { base, indices } = &target.kind {
            let (v, all) = self.index_base(base, indices, target.span)?;
            if matches!(self.var(v).ty, Ty::Ptr { .. }) {
                return self.store(v, base, &all, op, value, target.span);
            }
        }
        let (place, s, persp, origin) = self.place(target, None)?;
        let writable = self.check_write(&place, persp, origin, target.span);
        let v = self.expr(value, Some(persp));
        if let Some(op) = op {
            self.check_op_on(op, s, target.span);
        }
        let e = if matches!(op, Some(ast::BinOp::Shl | ast::BinOp::Shr)) {
            self.int_expr(value, Some(persp), "shift amount")
        } else {
            self.coerce(v, s, "assigned value")
        };
        // A write from too narrow code is one mistake; do not also report its value.
        if writable {
            let name = self.place_name(&place);
            self.check_value(&format!("`{name}`"), persp, &e, Some(origin));
        }
        Some(StmtKind::Assign { place, op, value: e })
    }

    fn check_op_on(&mut self, op: ast::BinOp, s: Scalar, span: Span) {
        use ast::BinOp::*;
        let ok = match op {
            Add | Sub | Mul | Div => s.is_numeric(),
            Rem | Shl | Shr => s.is_int(),
            BitAnd | BitOr | BitXor => s.is_int() || s == Scalar::Bool,
            _ => false,
        };
        if !ok {
            self.error(TypeError::Mismatch {
                expected: Expected::OperatorOperand,
                found: s.into(),
                span,
                context: format!("`{}=`", op.as_str()),
                help: None,
            });
        }
    }

    fn store(
        &mut self,
        v: VarId,
        base: &ast::Expr,
        all: &[&ast::Expr],
        op: Option<ast::BinOp>,
        value: &ast::Expr,
        span: Span,
    ) -> Option<StmtKind> {
        let var = self.var(v).clone();
        let Ty::Ptr { elem, mutable } = var.ty else { unreachable!("checked by the caller") };
        self.use_memory(v, base.span, false);
        if !mutable {
            self.error(TypeError::StoreThroughConst { name: var.name.clone(), span, origin: var.span });
        } else if var.persp != Persp::THREAD || self.code != Persp::THREAD {
            self.persp_error(TypeError::StorePerspective {
                name: var.name.clone(),
                ptr_persp: var.persp,
                code: self.code,
                span,
                origin: var.span,
            });
        }
        let rank = self.rank(v);
        if all.len() != rank {
            self.error(TypeError::BadIndex {
                problem: IndexProblem::Rank { name: var.name.clone(), rank, given: all.len() },
                span,
                help: None,
            });
            return None;
        }
        let index = all.iter().map(|i| self.int_expr(i, Some(var.persp), "index")).collect();
        let val = self.expr(value, Some(var.persp));
        if let Some(op) = op {
            self.check_op_on(op, elem, span);
        }
        let value = self.coerce(val, elem, "stored value");
        Some(StmtKind::Store { mem: v, index, op, value })
    }

    /// Checks a condition: a `bool` uniform over the code's perspective.
    pub fn condition(&mut self, e: &ast::Expr, sink: Sink) -> tir::Expr {
        let v = self.expr(e, None);
        let c = self.coerce(v, Scalar::Bool, sink.describe());
        self.check_uniform_sink(&c, sink);
        c
    }

    pub(crate) fn check_uniform_sink(&mut self, e: &tir::Expr, sink: Sink) {
        if let Some(culprit) = self.culprit(e, self.code) {
            self.persp_error(TypeError::ReadUp { sink, code: self.code, culprit, span: e.span });
        }
    }

    fn if_chain(&mut self, branches: &[(ast::Expr, ast::Block)], else_block: Option<&ast::Block>) -> StmtKind {
        let (cond, body) = &branches[0];
        let c = self.condition(cond, Sink::IfCondition);
        let then = self.block(body);
        let otherwise = if branches.len() > 1 {
            let k = self.if_chain(&branches[1..], else_block);
            let span = branches[1].0.span.to(branches[1].1.span);
            tir::Block { stmts: vec![tir::Stmt { kind: k, code: self.code, span }] }
        } else {
            match else_block {
                Some(b) => self.block(b),
                None => tir::Block::default(),
            }
        };
        StmtKind::If { cond: c, then, otherwise }
    }

    #[allow(clippy::too_many_arguments)]
    fn for_loop(
        &mut self,
        var: &ast::Ident,
        start: Option<&ast::Expr>,
        end: &ast::Expr,
        step: Option<&ast::Expr>,
        unroll: Option<&ast::Expr>,
        body: &ast::Block,
        span: Span,
        out: &mut Vec<tir::Stmt>,
    ) {
        let one = |s: Span| Val {
            e: super::expr::konst(ConstValue::Int(1), Scalar::I32, s),
            lit: super::ctx::Lit::Int,
            err: false,
        };
        let zero = |s: Span| Val {
            e: super::expr::konst(ConstValue::Int(0), Scalar::I32, s),
            lit: super::ctx::Lit::Int,
            err: false,
        };
        let vs = start.map(|e| self.expr(e, None)).unwrap_or_else(|| zero(end.span.shrink_to_start()));
        let ve = self.expr(end, None);
        let vst = step.map(|e| self.expr(e, None)).unwrap_or_else(|| one(end.span.shrink_to_end()));
        let mut ty = Scalar::I32;
        for v in [&vs, &ve, &vst] {
            if v.err || v.lit != super::ctx::Lit::No {
                continue;
            }
            match v.scalar() {
                Some(s) if s.is_int() => ty = Scalar::common(ty, s).unwrap_or(ty),
                _ => {}
            }
        }
        let s = self.coerce(vs, ty, "loop start");
        let e = self.coerce(ve, ty, "loop bound");
        let st = self.coerce(vst, ty, "loop step");
        for x in [&s, &e, &st] {
            self.check_uniform_sink(x, Sink::LoopBound);
        }
        if let ExprKind::Const(ConstValue::Int(0)) = st.kind {
            self.error(TypeError::ConstEval { reason: crate::consts::ConstError::ZeroStep, span: st.span });
        }
        // The trip count, when the bounds and step are constants (a zero step is reported above).
        let trips = match (&s.kind, &e.kind, &st.kind) {
            (
                ExprKind::Const(ConstValue::Int(a)),
                ExprKind::Const(ConstValue::Int(b)),
                ExprKind::Const(ConstValue::Int(k)),
            ) if *k != 0 => {
                let span = if *k > 0 { b - a } else { a - b };
                Some(if span <= 0 { 0 } else { (span + k.abs() - 1) / k.abs() })
            }
            _ => None,
        };
        let unroll = unroll.map_or(tir::Unroll::Auto, |u| self.unroll(u, trips));
        self.push_scope();
        let saved = self.smem_cur;
        let lv = self.new_var(&var.name, Ty::Scalar(ty), self.code, VarKind::LoopVar, var.span);
        self.bind(&var.name, Binding::Var(lv));
        self.frames.push(Frame::Loop);
        let body = self.block(body);
        self.frames.pop();
        self.smem_cur = saved;
        self.pop_scope();
        self.push(out, StmtKind::For { var: lv, start: s, end: e, step: st, unroll, body }, span);
    }

    /// A `range` loop's `unroll=`: `True` (every iteration, which needs constant bounds and
    /// step, `trips` known, and at most 1024 of them, or nvcc would quietly unroll less),
    /// `False` (never: `Count(1)`) or a constant count from 1 to 1024 (what `#pragma unroll
    /// N` accepts with sense).
    fn unroll(&mut self, u: &ast::Expr, trips: Option<i128>) -> tir::Unroll {
        let v = self.expr(u, None);
        if v.err {
            return tir::Unroll::Auto;
        }
        let bad = |problem: String| TypeError::BadUnroll { problem, span: u.span };
        match &v.e.kind {
            ExprKind::Const(ConstValue::Bool(true)) => match trips {
                Some(n) if n <= 1024 => tir::Unroll::Full,
                Some(n) => {
                    self.error(bad(format!(
                        "`unroll=True` on a loop of {n} iterations: at most 1024 are unrolled whole; give a count such as `unroll=8`"
                    )));
                    tir::Unroll::Auto
                }
                None => {
                    self.error(bad(
                        "`unroll=True` needs a loop whose start, bound and step are compile-time constants".into(),
                    ));
                    tir::Unroll::Auto
                }
            },
            ExprKind::Const(ConstValue::Bool(false)) => tir::Unroll::Count(1),
            ExprKind::Const(ConstValue::Int(n)) if v.scalar().is_some_and(|s| s.is_int()) => match u32::try_from(*n) {
                Ok(n @ 1..=1024) => tir::Unroll::Count(n),
                _ => {
                    self.error(bad(format!("`unroll={n}`: the count must be from 1 to 1024")));
                    tir::Unroll::Auto
                }
            },
            ExprKind::Const(_) => {
                self.error(bad("`unroll=` takes `True`, `False` or an integer count".into()));
                tir::Unroll::Auto
            }
            _ => {
                let culprit = self.first_runtime_leaf(&v.e);
                self.error(TypeError::NotConstant { what: "a loop's `unroll=`".into(), span: u.span, culprit });
                tir::Unroll::Auto
            }
        }
    }

    /// Finds the frame a `break`/`continue` leaves through and reports crossings.
    fn exit_loop(&mut self, what: &'static str, span: Span) {
        let pipeline = |f: &Frame| matches!(f, Frame::Scope { construct: "pipeline", .. });
        if !self.frames.iter().any(|f| matches!(f, Frame::Loop) || pipeline(f)) {
            return self.error(TypeError::BreakOutsideLoop { what, span });
        }
        for f in self.frames.iter().rev() {
            match *f {
                Frame::Loop => return,
                Frame::Group { narrowing: false, .. } | Frame::Unsafe => {}
                Frame::Group { span: scope, .. } => return self.divergent(what, "group", span, scope),
                Frame::Split { span: scope } => return self.divergent(what, "split", span, scope),
                Frame::Scope { construct: "pipeline", span: scope } => return self.leaves_pipeline(what, span, scope),
                Frame::Scope { construct, span: scope } => return self.divergent(what, construct, span, scope),
            }
        }
        self.error(TypeError::BreakOutsideLoop { what, span });
    }

    /// A `break`, `continue` or `return` that would leave (or skip the rest of) a pipeline
    /// loop's tile: the loop's waits and barrier are structured around whole tiles.
    fn leaves_pipeline(&mut self, what: &'static str, span: Span, scope: Span) {
        self.error(TypeError::PipelineForm {
            problem: format!("`{what}` cannot leave a pipeline loop's body"),
            span,
            origin: Some(scope),
            help: Some(
                "the loop waits for every tile it fills; run the remaining tiles, or guard the body's work with `if`"
                    .into(),
            ),
        });
    }

    fn divergent(&mut self, what: &'static str, crossing: &'static str, span: Span, scope: Span) {
        self.error(TypeError::DivergentExit { what, crossing, span, scope });
    }

    fn ret(&mut self, value: Option<&ast::Expr>, span: Span) -> StmtKind {
        for f in self.frames.iter().rev() {
            let (crossing, scope) = match *f {
                Frame::Loop | Frame::Unsafe | Frame::Group { narrowing: false, .. } => continue,
                Frame::Group { span, .. } => ("group", span),
                Frame::Split { span } => ("split", span),
                Frame::Scope { construct: "pipeline", span: scope } => {
                    self.leaves_pipeline("return", span, scope);
                    break;
                }
                Frame::Scope { construct, span } => (construct, span),
            };
            self.divergent("return", crossing, span, scope);
            break;
        }
        match (self.sig.ret, value) {
            (None, None) => StmtKind::Return(None),
            (None, Some(v)) => {
                self.error(TypeError::ReturnValue {
                    problem: ReturnProblem::Unexpected { function: self.sig.name.clone() },
                    span: v.span,
                });
                self.expr(v, None);
                StmtKind::Return(None)
            }
            (Some((s, _)), None) => {
                self.error(TypeError::ReturnValue {
                    problem: ReturnProblem::Missing { function: self.sig.name.clone(), ty: s },
                    span,
                });
                StmtKind::Return(None)
            }
            (Some((s, p)), Some(v)) => {
                let val = self.expr(v, Some(p));
                let e = self.coerce(val, s, "return value");
                self.check_value("the return value", p, &e, None);
                StmtKind::Return(Some(e))
            }
        }
    }

    /// Enters a narrower code perspective for a `group` body, poisoning unowned claims.
    pub fn group_claims(&mut self) -> Vec<ClaimState> {
        let saved: Vec<ClaimState> = self.claims.iter().map(|c| c.state).collect();
        for c in &mut self.claims {
            if c.state == ClaimState::Unowned {
                c.state = ClaimState::Poisoned;
            }
        }
        saved
    }

    pub fn restore_claims(&mut self, saved: Vec<ClaimState>) {
        for (c, s) in self.claims.iter_mut().zip(saved) {
            c.state = s;
        }
    }

    /// The unit a split on `level` counts in.
    pub fn split_unit(level: ast::LevelName) -> Option<Persp> {
        Some(match level {
            ast::LevelName::Thread => Persp::THREAD,
            ast::LevelName::Warp => Persp::WARP,
            ast::LevelName::Warpgroup => Persp::WARPGROUP,
            ast::LevelName::Block => Persp::BLOCK,
            ast::LevelName::Grid => return None,
        })
    }
}

/// Collects names read by an expression (for lambda captures).
fn free_names(e: &ast::Expr, out: &mut Vec<(String, Span)>) {
    use ast::ExprKind as E;
    match &e.kind {
        E::Name(n) => out.push((n.clone(), e.span)),
        E::Unary(_, x) => free_names(x, out),
        E::Binary(_, a, b) => {
            free_names(a, out);
            free_names(b, out);
        }
        E::Ternary { cond, then, otherwise } => {
            free_names(cond, out);
            free_names(then, out);
            free_names(otherwise, out);
        }
        E::Call { callee, args } => {
            if !matches!(callee.kind, E::Name(_)) {
                free_names(callee, out);
            }
            for a in args {
                free_names(&a.value, out);
            }
        }
        E::Index { base, indices } => {
            free_names(base, out);
            for i in indices {
                free_names(i, out);
            }
        }
        E::Attr { .. } => {}
        E::List(xs) => xs.iter().for_each(|x| free_names(x, out)),
        E::Lambda(l) => free_names(&l.body, out),
        _ => {}
    }
}

impl Checker<'_> {
    /// The first run-time leaf of an expression that should have been constant, named.
    pub(crate) fn first_runtime_leaf(&self, e: &tir::Expr) -> Option<(String, Span)> {
        match &e.kind {
            ExprKind::Const(_) => None,
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.first_runtime_leaf(a),
            ExprKind::Binary(_, a, b) => self.first_runtime_leaf(a).or_else(|| self.first_runtime_leaf(b)),
            ExprKind::Select { cond, then, otherwise } => self
                .first_runtime_leaf(cond)
                .or_else(|| self.first_runtime_leaf(then))
                .or_else(|| self.first_runtime_leaf(otherwise)),
            ExprKind::Var(v) | ExprKind::Elem { array: v, .. } | ExprKind::Load { mem: v, .. } => {
                Some((format!("`{}`", self.var(*v).name), e.span))
            }
            ExprKind::RelId { .. } => Some(("`id()`".into(), e.span)),
            _ => Some(("this".into(), e.span)),
        }
    }
}
