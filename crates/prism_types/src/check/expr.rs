//! Expressions: typing, literal adaptation, constant folding, and the value perspective of
//! every expression (the narrowest perspective of anything it reads; `None` for constants).
//!
//! Uniformity is not checked here but where a value is used (`stmt.rs`, `call.rs`): the same
//! expression may be fine as the initialiser of a `thread[1]` variable and wrong as a
//! `block[1]` condition.

use super::ctx::{Binding, Checker, Lit, Val};
use crate::consts;
use crate::error::{Expected, Found, IndexProblem, TypeError};
use crate::perspective::Persp;
use crate::tir::{self, BinOp, ConstValue, ExprKind, UnOp, VarId, VarKind};
use crate::ty::{Scalar, Ty};
use prism_span::Span;
use prism_syntax::ast;

/// What a name in an expression refers to.
pub(crate) enum Resolved {
    Var(VarId),
    Lambda,
    Const(Scalar, ConstValue),
    Function,
    /// A generic function: the index of its template.
    Generic(usize),
    Intrinsic,
    Unknown,
    /// A name whose declaration failed: uses are silently errors.
    Poisoned,
}

impl Checker<'_> {
    pub fn resolve(&self, name: &str) -> Resolved {
        match self.lookup(name) {
            Some(Binding::Var(v)) => Resolved::Var(v),
            Some(Binding::Lambda(_)) => Resolved::Lambda,
            Some(Binding::Poisoned(_)) => Resolved::Poisoned,
            None if self.g.poisoned(name) => Resolved::Poisoned,
            None => {
                if let Some((t, v, _)) = self.g.consts.get(name) {
                    Resolved::Const(*t, *v)
                } else if self.g.fns.contains_key(name) {
                    Resolved::Function
                } else if let Some(&t) = self.g.generics.get(name) {
                    Resolved::Generic(t)
                } else if crate::intrinsics::lookup(name).is_some() || name == "id" {
                    Resolved::Intrinsic
                } else {
                    Resolved::Unknown
                }
            }
        }
    }

    pub fn unknown_name(&mut self, name: &str, span: Span) {
        if self.g.module_of(name).is_none()
            && let Some((m, _)) = name.split_once('.')
        {
            self.error(TypeError::UnknownName {
                name: name.to_string(),
                span,
                help: Some(format!("no module `{m}` is imported: `import {m}` or `from {m} import ...`")),
            });
            return;
        }
        if let Some(m) = self.g.module_of(name) {
            let mut known: Vec<&str> = self
                .g
                .fns
                .keys()
                .chain(self.g.consts.keys())
                .filter_map(|k| k.strip_prefix(m).and_then(|k| k.strip_prefix('.')))
                .collect();
            known.sort_unstable();
            let help = if known.is_empty() {
                None
            } else {
                Some(format!(
                    "`{m}` defines: {}",
                    known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ))
            };
            self.error(TypeError::UnknownName { name: name.to_string(), span, help });
            return;
        }
        let help = match name {
            "threadIdx" | "blockIdx" | "blockDim" | "gridDim" | "laneid" => Some(
                "Prism has no raw indices outside `with unsafe:`; use `id()`, whose meaning follows the perspectives"
                    .to_string(),
            ),
            "True" | "False" | "None" => None,
            _ => {
                let best = self
                    .visible_names()
                    .chain(self.g.consts.keys().map(|s| s.as_str()))
                    .chain(self.g.fns.keys().map(|s| s.as_str()))
                    .chain(self.g.generics.keys().map(|s| s.as_str()))
                    .filter(|c| edit_distance(c, name) <= 2 && *c != name)
                    .min_by_key(|c| edit_distance(c, name));
                best.map(|b| format!("did you mean `{b}`?"))
            }
        };
        self.error(TypeError::UnknownName { name: name.to_string(), span, help });
    }

    /// Checks an expression. `target` is the perspective of the variable the value is for;
    /// it gives `id()` its meaning (None where there is no target, e.g. a condition).
    pub fn expr(&mut self, e: &ast::Expr, target: Option<Persp>) -> Val {
        use ast::ExprKind as E;
        let span = e.span;
        match &e.kind {
            E::Int(v) => {
                let ty = consts::literal_type(*v as i128);
                Val { e: konst(ConstValue::Int(*v as i128), ty, span), lit: Lit::Int, err: false }
            }
            E::Float(v) => Val { e: konst(ConstValue::Float(*v), Scalar::F32, span), lit: Lit::Float, err: false },
            E::Bool(b) => Val::new(konst(ConstValue::Bool(*b), Scalar::Bool, span)),
            E::Str(_) => {
                self.error(TypeError::Mismatch {
                    expected: Expected::Value,
                    found: Found::Str,
                    span,
                    context: "strings appear only in decorators and `unsafe(...)`".into(),
                    help: None,
                });
                Val::error(span)
            }
            E::Name(n) => self.name_expr(n, span),
            E::Unary(op, x) => {
                let v = self.expr(x, target);
                self.unary(*op, v, span)
            }
            E::Binary(op, a, b) => self.binary(*op, a, b, span, target),
            E::Ternary { cond, then, otherwise } => {
                let c = self.expr(cond, None);
                let c = self.coerce(c, Scalar::Bool, "condition of a conditional expression");
                self.guards.push(cond.span);
                let t = self.expr(then, target);
                let o = self.expr(otherwise, target);
                self.guards.pop();
                let (t, o, ty, lit) = match self.unify(t, o, span) {
                    Some(x) => x,
                    None => return Val::error(span),
                };
                if let ExprKind::Const(ConstValue::Bool(b)) = c.kind {
                    let mut r = if b { t } else { o };
                    r.span = span;
                    return Val { e: r, lit, err: false };
                }
                let persp = self.facts.meet_opt(c.persp, self.facts.meet_opt(t.persp, o.persp));
                Val {
                    e: tir::Expr {
                        kind: ExprKind::Select { cond: Box::new(c), then: Box::new(t), otherwise: Box::new(o) },
                        ty: Ty::Scalar(ty),
                        persp,
                        span,
                    },
                    lit,
                    err: false,
                }
            }
            E::Call { callee, args } => self.call(callee, args, span, target),
            E::Index { base, indices } => self.index_expr(base, indices, span, target),
            E::Attr { base, .. }
                if super::dotted(e).is_some() && !matches!(&base.kind, E::Name(b) if b == "intrinsic") =>
            {
                let n = super::dotted(e).expect("checked");
                self.name_expr(&n, span)
            }
            E::Attr { base, name } => {
                let what = match &base.kind {
                    E::Name(b) if b == "intrinsic" => format!("`intrinsic.{}` without a call", name.name),
                    _ => "attribute access".to_string(),
                };
                self.error(TypeError::Unsupported {
                    what,
                    span,
                    help: Some(
                        "the only attributes are the intrinsics `intrinsic.mma(...)` and friends, which must be called"
                            .into(),
                    ),
                });
                Val::error(span)
            }
            E::List(_) => {
                self.error(TypeError::Unsupported { what: "a list outside `out=[...]`".into(), span, help: None });
                Val::error(span)
            }
            E::Lambda(_) => {
                self.error(TypeError::Unsupported {
                    what: "a lambda here".into(),
                    span,
                    help: Some("lambdas are indexing functions: `f=lambda i: ...` in a partition, or `name = lambda ...` bound for one".into()),
                });
                Val::error(span)
            }
            E::Elided | E::Error => Val::error(span),
        }
    }

    fn name_expr(&mut self, n: &str, span: Span) -> Val {
        match self.resolve(n) {
            Resolved::Var(v) => {
                if !self.check_visible(v, span) {
                    return Val::error(span);
                }
                let var = self.var(v).clone();
                match (&var.ty, &var.kind) {
                    (Ty::Scalar(s), VarKind::Constexpr(c)) => Val::new(konst(*c, *s, span)),
                    (Ty::Scalar(s), VarKind::LambdaParam) => {
                        Val::new(tir::Expr { kind: ExprKind::Var(v), ty: Ty::Scalar(*s), persp: None, span })
                    }
                    (Ty::Scalar(s), _) => {
                        Val::new(tir::Expr { kind: ExprKind::Var(v), ty: Ty::Scalar(*s), persp: Some(var.persp), span })
                    }
                    (Ty::Array { .. }, _) => {
                        self.error(TypeError::Mismatch {
                            expected: Expected::ScalarValue,
                            found: Found::Array(n.to_string()),
                            span,
                            context: "an array is not a value".into(),
                            help: Some(format!("index it (`{n}[i]`), or pass it to a `ptr(T)` parameter")),
                        });
                        Val::error(span)
                    }
                    (Ty::Ptr { .. }, _) => {
                        self.error(TypeError::PointerAlias {
                            name: n.to_string(),
                            span,
                            help: format!("index it (`{n}[i]`), or pass it to a function"),
                        });
                        Val::error(span)
                    }
                    _ => {
                        self.error(TypeError::Mismatch {
                            expected: Expected::ScalarValue,
                            found: Found::Handle(n.to_string()),
                            span,
                            context: "opaque handles can only be passed to intrinsics".into(),
                            help: None,
                        });
                        Val::error(span)
                    }
                }
            }
            Resolved::Const(t, c) => Val::new(konst(c, t, span)),
            Resolved::Lambda => {
                self.error(TypeError::Unsupported {
                    what: format!("using the indexing function `{n}` as a value"),
                    span,
                    help: Some(format!("pass it to a partition: `f={n}`")),
                });
                Val::error(span)
            }
            Resolved::Function | Resolved::Generic(_) | Resolved::Intrinsic => {
                self.error(TypeError::Unsupported {
                    what: format!("using the function `{n}` as a value"),
                    span,
                    help: Some(format!("call it: `{n}(...)`")),
                });
                Val::error(span)
            }
            Resolved::Unknown => {
                self.unknown_name(n, span);
                Val::error(span)
            }
            Resolved::Poisoned => Val::error(span),
        }
    }

    fn unary(&mut self, op: UnOp, v: Val, span: Span) -> Val {
        if v.err {
            return Val::error(span);
        }
        let Some(s) = v.scalar() else {
            return Val::error(span);
        };
        let ok = match op {
            UnOp::Neg => s.is_numeric(),
            UnOp::BitNot => s.is_int(),
            UnOp::Not => s == Scalar::Bool,
        };
        if !ok {
            let expected = match op {
                UnOp::Neg => Expected::Number,
                UnOp::BitNot => Expected::Integer,
                UnOp::Not => Expected::Scalar(Scalar::Bool),
            };
            self.error(TypeError::Mismatch {
                expected,
                found: s.into(),
                span: v.e.span,
                context: format!("operand of `{}`", op.as_str()),
                help: (op == UnOp::Not).then(|| "compare explicitly, e.g. `x == 0`".to_string()),
            });
            return Val::error(span);
        }
        if let ExprKind::Const(c) = v.e.kind
            && consts::foldable(s)
        {
            match consts::unary(op, c, s) {
                Ok(r) => {
                    return Val { e: konst(r, s, span), lit: v.lit, err: false };
                }
                Err(reason) => {
                    self.error(TypeError::ConstEval { reason, span });
                    return Val::error(span);
                }
            }
        }
        let persp = v.e.persp;
        Val {
            e: tir::Expr { kind: ExprKind::Unary(op, Box::new(v.e)), ty: Ty::Scalar(s), persp, span },
            lit: v.lit,
            err: false,
        }
    }

    /// Brings two operands to a common type (adapting literals), for arithmetic,
    /// comparisons and the branches of a conditional expression.
    pub fn unify(&mut self, a: Val, b: Val, span: Span) -> Option<(tir::Expr, tir::Expr, Scalar, Lit)> {
        if a.err || b.err {
            return None;
        }
        let (Some(sa), Some(sb)) = (a.scalar(), b.scalar()) else {
            let bad = if a.scalar().is_none() { &a } else { &b };
            self.error(TypeError::Mismatch {
                expected: Expected::Value,
                found: Found::Type(bad.e.ty.clone()),
                span: bad.e.span,
                context: "operand".into(),
                help: None,
            });
            return None;
        };
        let common = match (a.lit, b.lit) {
            (Lit::Int, Lit::No) if sb.is_numeric() => sb,
            (Lit::No, Lit::Int) if sa.is_numeric() => sa,
            (Lit::Float, Lit::No) if sb.is_float() => sb,
            (Lit::No, Lit::Float) if sa.is_float() => sa,
            _ => match Scalar::common(sa, sb) {
                Some(c) => c,
                None => {
                    self.error(TypeError::Mismatch {
                        expected: Expected::Scalar(sa),
                        found: sb.into(),
                        span: b.e.span,
                        context: format!("operands of different types (`{}` and `{}`)", sa.name(), sb.name()),
                        help: Some("convert one explicitly".into()),
                    });
                    let _ = span;
                    return None;
                }
            },
        };
        let lit = if a.lit != Lit::No && b.lit != Lit::No {
            if a.lit == Lit::Float || b.lit == Lit::Float { Lit::Float } else { Lit::Int }
        } else {
            Lit::No
        };
        let ea = self.coerce(a, common, "operand");
        let eb = self.coerce(b, common, "operand");
        Some((ea, eb, common, lit))
    }

    fn binary(&mut self, op: BinOp, a: &ast::Expr, b: &ast::Expr, span: Span, target: Option<Persp>) -> Val {
        let va = self.expr(a, target);
        if op.is_logical() {
            self.guards.push(a.span);
            let vb = self.expr(b, target);
            self.guards.pop();
            let ea = self.coerce(va, Scalar::Bool, &format!("left operand of `{}`", op.as_str()));
            let eb = self.coerce(vb, Scalar::Bool, &format!("right operand of `{}`", op.as_str()));
            return self.finish_binary(op, ea, eb, Scalar::Bool, Scalar::Bool, Lit::No, span);
        }
        let vb = self.expr(b, target);
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            if va.err || vb.err {
                return Val::error(span);
            }
            let (Some(sa), Some(sb)) = (va.scalar(), vb.scalar()) else {
                return Val::error(span);
            };
            for (v, s) in [(&va, sa), (&vb, sb)] {
                if !s.is_int() {
                    self.error(TypeError::Mismatch {
                        expected: Expected::Integer,
                        found: s.into(),
                        span: v.e.span,
                        context: format!("operand of `{}`", op.as_str()),
                        help: None,
                    });
                    return Val::error(span);
                }
            }
            let lit = if va.lit != Lit::No && vb.lit != Lit::No { Lit::Int } else { Lit::No };
            let ea = va.e;
            let eb = vb.e;
            return self.finish_binary(op, ea, eb, sa, sa, lit, span);
        }
        let Some((ea, eb, common, lit)) = self.unify(va, vb, span) else {
            return Val::error(span);
        };
        let ok = match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => common.is_numeric(),
            BinOp::Rem => common.is_int(),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => common.is_int() || common == Scalar::Bool,
            BinOp::Eq | BinOp::Ne => true,
            _ => common.is_numeric(),
        };
        if !ok {
            let help = match (op, common.is_float()) {
                (BinOp::Rem, true) => Some("use `fmod(x, y)` for a floating-point remainder".to_string()),
                _ => None,
            };
            self.error(TypeError::Mismatch {
                expected: match op {
                    BinOp::Rem | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => Expected::Integers,
                    _ => Expected::Numbers,
                },
                found: common.into(),
                span,
                context: format!("operands of `{}`", op.as_str()),
                help,
            });
            return Val::error(span);
        }
        let result = if op.is_comparison() { Scalar::Bool } else { common };
        let lit = if op.is_comparison() { Lit::No } else { lit };
        self.finish_binary(op, ea, eb, common, result, lit, span)
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_binary(
        &mut self,
        op: BinOp,
        a: tir::Expr,
        b: tir::Expr,
        operand: Scalar,
        result: Scalar,
        lit: Lit,
        span: Span,
    ) -> Val {
        if let (ExprKind::Const(x), ExprKind::Const(y)) = (&a.kind, &b.kind)
            && let (Lit::Int, ConstValue::Int(_), ConstValue::Int(_), false) = (lit, x, y, op.is_comparison())
        {
            // Literal integer arithmetic is exact, as at file level: `4 * 1024 * 1024 * 1024`
            // is an `int64` literal, not an overflowing `int`.
            let wide = consts::binary(op, *x, *y, Scalar::I64).or_else(|_| consts::binary(op, *x, *y, Scalar::U64));
            return match wide {
                Ok(ConstValue::Int(v)) => {
                    let ty = consts::literal_type(v);
                    Val { e: konst(ConstValue::Int(v), ty, span), lit, err: false }
                }
                Ok(other) => Val { e: konst(other, result, span), lit, err: false },
                Err(reason) => {
                    self.error(TypeError::ConstEval { reason, span });
                    Val::error(span)
                }
            };
        }
        if let (ExprKind::Const(x), ExprKind::Const(y)) = (&a.kind, &b.kind)
            && consts::foldable(operand)
        {
            return match consts::binary(op, *x, *y, operand) {
                Ok(r) => Val { e: konst(r, result, span), lit, err: false },
                Err(reason) => {
                    self.error(TypeError::ConstEval { reason, span });
                    Val::error(span)
                }
            };
        }
        if let (BinOp::Div | BinOp::Rem, ExprKind::Const(ConstValue::Int(0))) = (op, &b.kind) {
            self.error(TypeError::DivByZero { span: b.span });
        }
        let persp = self.facts.meet_opt(a.persp, b.persp);
        Val {
            e: tir::Expr { kind: ExprKind::Binary(op, Box::new(a), Box::new(b)), ty: Ty::Scalar(result), persp, span },
            lit,
            err: false,
        }
    }

    /// Converts a value to `to`, adapting literals and inserting implicit conversions;
    /// reports a mismatch when no implicit conversion exists.
    pub fn coerce(&mut self, v: Val, to: Scalar, context: &str) -> tir::Expr {
        let span = v.e.span;
        if v.err {
            let mut e = v.e;
            e.ty = Ty::Scalar(to);
            e.kind = ExprKind::Const(match to {
                Scalar::Bool => ConstValue::Bool(false),
                s if s.is_float() => ConstValue::Float(0.0),
                _ => ConstValue::Int(0),
            });
            return e;
        }
        let Some(from) = v.scalar() else {
            self.error(TypeError::Mismatch {
                expected: Expected::Scalar(to),
                found: Found::Type(v.e.ty.clone()),
                span,
                context: context.to_string(),
                help: None,
            });
            return Val::error(span).e;
        };
        // A literal takes its type here: one too large for it is an error, not an infinity.
        // The infinity is kept as its value, so nothing computed from it is reported again.
        if v.lit != Lit::No
            && let ExprKind::Const(c) = v.e.kind
            && let Err(reason) = consts::literal_range(c, to)
        {
            self.error(TypeError::ConstEval { reason, span });
        }
        if from == to {
            return v.e;
        }
        let implicit = match v.lit {
            Lit::Int => to.is_numeric(),
            Lit::Float => to.is_float(),
            Lit::No => from.converts_to(to),
        };
        if !implicit {
            let help = if to == Scalar::Bool && from.is_numeric() {
                Some("compare explicitly, e.g. `x != 0`".to_string())
            } else if from == Scalar::Bool {
                Some(format!("write `{}(1) if b else {}(0)`", to.name(), to.name()))
            } else {
                Some(format!("convert explicitly: `{}(...)`", to.name()))
            };
            self.error(TypeError::Mismatch {
                expected: Expected::Scalar(to),
                found: from.into(),
                span,
                context: context.to_string(),
                help,
            });
            return Val::error(span).e;
        }
        self.convert(v.e, from, to, v.lit != Lit::No)
    }

    /// Converts `e` from `from` to `to` (folding constants); the caller decided it is allowed.
    pub fn convert(&mut self, e: tir::Expr, from: Scalar, to: Scalar, literal: bool) -> tir::Expr {
        if let ExprKind::Const(c) = e.kind
            && consts::foldable(from)
        {
            match consts::cast(c, from, to) {
                Ok(r) => {
                    if literal && let (ConstValue::Int(x), true) = (c, to.is_int()) {
                        let (lo, hi) = consts::int_range(to);
                        if x < lo || x > hi {
                            self.error(TypeError::ConstEval {
                                reason: crate::consts::ConstError::DoesNotFit { value: x, ty: to },
                                span: e.span,
                            });
                        }
                    }
                    if consts::foldable(to) {
                        return konst(r, to, e.span);
                    }
                }
                Err(reason) => {
                    self.error(TypeError::ConstEval { reason, span: e.span });
                    return Val::error(e.span).e;
                }
            }
        }
        let span = e.span;
        let persp = e.persp;
        tir::Expr { kind: ExprKind::Cast(Box::new(e)), ty: Ty::Scalar(to), persp, span }
    }

    /// Checks an integer expression (an index or a loop bound) and returns it as `int`-like.
    pub fn int_expr(&mut self, e: &ast::Expr, target: Option<Persp>, context: &str) -> tir::Expr {
        let v = self.expr(e, target);
        if v.err {
            return self.coerce(v, Scalar::I32, context);
        }
        match v.scalar() {
            Some(s) if s.is_int() => {
                if v.lit == Lit::Int {
                    self.coerce(v, Scalar::I32, context)
                } else {
                    v.e
                }
            }
            _ => self.coerce(v, Scalar::I32, context),
        }
    }

    fn index_expr(&mut self, base: &ast::Expr, indices: &[ast::Expr], span: Span, target: Option<Persp>) -> Val {
        let Some((v, all_indices)) = self.index_base(base, indices, span) else {
            return Val::error(span);
        };
        let var = self.var(v).clone();
        let rank = self.rank(v);
        if all_indices.len() != rank {
            self.error(TypeError::BadIndex {
                problem: IndexProblem::Rank { name: var.name.clone(), rank, given: all_indices.len() },
                span,
                help: (rank > 1).then(|| format!("write `{}[{}]`", var.name, vec!["i"; rank].join(", "))),
            });
            return Val::error(span);
        }
        let index: Vec<tir::Expr> = all_indices.iter().map(|i| self.int_expr(i, target, "index")).collect();
        let ipersp = index.iter().fold(None, |acc, i| self.facts.meet_opt(acc, i.persp));
        match &var.ty {
            Ty::Array { elem, dims } => {
                self.check_const_bounds(&var.name, &index, dims);
                Val::new(tir::Expr {
                    kind: ExprKind::Elem { array: v, index },
                    ty: Ty::Scalar(*elem),
                    persp: self.facts.meet_opt(Some(var.persp), ipersp),
                    span,
                })
            }
            Ty::Ptr { elem, .. } => {
                self.use_memory(v, span, false);
                if let VarKind::Shared { dims, .. } = &var.kind {
                    self.check_const_bounds(&var.name, &index, dims);
                }
                // Reading memory: every thread of the code's unit may read the name, so the
                // name must be at least as broad as the code.
                if !self.facts.narrower_eq(self.code, var.persp) {
                    let e = TypeError::ReadUpMemory {
                        name: var.name.clone(),
                        persp: var.persp,
                        code: self.code,
                        span: base_span(base),
                        origin: var.span,
                    };
                    self.persp_error(e);
                }
                Val::new(tir::Expr {
                    kind: ExprKind::Load { mem: v, index },
                    ty: Ty::Scalar(*elem),
                    persp: self.facts.meet_opt(Some(self.code), ipersp),
                    span,
                })
            }
            _ => Val::error(span),
        }
    }

    /// Resolves the base of an indexing expression to an array or memory variable,
    /// flattening `a[i][j]` into `a[i, j]`.
    pub fn index_base<'e>(
        &mut self,
        base: &'e ast::Expr,
        indices: &'e [ast::Expr],
        span: Span,
    ) -> Option<(VarId, Vec<&'e ast::Expr>)> {
        let mut chain: Vec<&[ast::Expr]> = vec![indices];
        let mut b = base;
        while let ast::ExprKind::Index { base: inner, indices } = &b.kind {
            chain.push(indices);
            b = inner;
        }
        let ast::ExprKind::Name(n) = &b.kind else {
            self.error(TypeError::BadIndex { problem: IndexProblem::NotAName, span, help: None });
            return None;
        };
        let v = match self.resolve(n) {
            Resolved::Var(v) => v,
            Resolved::Unknown => {
                self.unknown_name(n, b.span);
                return None;
            }
            Resolved::Poisoned => return None,
            _ => {
                self.error(TypeError::BadIndex {
                    problem: IndexProblem::NotIndexable { name: n.to_string(), ty: None },
                    span: b.span,
                    help: None,
                });
                return None;
            }
        };
        if !self.check_visible(v, b.span) {
            return None;
        }
        if !matches!(self.var(v).ty, Ty::Array { .. } | Ty::Ptr { .. }) {
            self.error(TypeError::BadIndex {
                problem: IndexProblem::NotIndexable { name: n.to_string(), ty: Some(self.var(v).ty.clone()) },
                span: b.span,
                help: None,
            });
            return None;
        }
        let all: Vec<&ast::Expr> = chain.iter().rev().flat_map(|ix| ix.iter()).collect();
        Some((v, all))
    }

    /// The number of indices a memory or array name takes.
    pub fn rank(&self, v: VarId) -> usize {
        let var = self.var(v);
        match (&var.ty, &var.kind) {
            (Ty::Array { dims, .. }, _) => dims.len(),
            (_, VarKind::Shared { dims, .. }) => dims.len(),
            (_, VarKind::View { how: tir::ViewKind::Partition(l), .. }) => l.params.len(),
            (_, VarKind::View { parent, how: tir::ViewKind::Slot { .. } }) => {
                self.rank(*parent).saturating_sub(1).max(1)
            }
            (_, VarKind::View { parent, .. }) => self.rank(*parent),
            _ => 1,
        }
    }

    fn check_const_bounds(&mut self, name: &str, index: &[tir::Expr], dims: &[u64]) {
        for (i, d) in index.iter().zip(dims) {
            if let ExprKind::Const(ConstValue::Int(x)) = i.kind
                && (x < 0 || x as u64 >= *d)
            {
                self.error(TypeError::BadIndex {
                    problem: IndexProblem::OutOfBounds { name: name.to_string(), index: x, dim: *d },
                    span: i.span,
                    help: None,
                });
            }
        }
    }
}

fn base_span(b: &ast::Expr) -> Span {
    match &b.kind {
        ast::ExprKind::Index { base, .. } => base_span(base),
        _ => b.span,
    }
}

/// A constant expression node.
pub(crate) fn konst(c: ConstValue, ty: Scalar, span: Span) -> tir::Expr {
    tir::Expr { kind: ExprKind::Const(c), ty: Ty::Scalar(ty), persp: None, span }
}

/// Levenshtein distance, for "did you mean" hints on short names.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 {
        return 3;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
