//! Constructs that change perspectives: `group` and `split` on code, `partition`, `claim`
//! and `async` on memory.

use super::ctx::{Binding, Checker, ClaimFrame, ClaimState, Frame, HiddenEntry};
use crate::error::{IndexFnProblem, NarrowProblem, TypeError};
use crate::perspective::{Level, Persp};
use crate::tir::{self, ExprKind, StmtKind, VarId, VarKind, ViewKind};
use crate::ty::{Scalar, Ty};
use prism_span::Span;
use prism_syntax::ast;

/// The parameter of the index function a legacy `offset=e` stands for: not an identifier,
/// so that no name a program declares can be captured by it.
const OFFSET_PARAM: &str = "offset index";

impl Checker<'_> {
    pub fn group(&mut self, p: &ast::Persp, body: &ast::Block, span: Span) -> Option<StmtKind> {
        let target = self.persp(p)?;
        let code = self.code;
        if !self.facts.narrower_eq(target, code) {
            let broadens = target.level > code.level || (target.level == code.level && target.n > code.n);
            if broadens {
                self.error(TypeError::GroupBroadens { target, code, span: p.span, code_origin: self.code_origin });
            } else {
                let help = (target.level == Level::Thread && code.level != Level::Thread).then(|| {
                    format!(
                        "add thread[{}] to the function's `@requires` to guarantee threads per block is a multiple of {}",
                        target.n, target.n
                    )
                });
                let help = help.or_else(|| {
                    (target.level == Level::Block && code.level == Level::Grid)
                        .then(|| format!("add block[{}] to the kernel's `@requires`", target.n))
                });
                self.error(TypeError::GroupIndivisible {
                    target,
                    code,
                    span: p.span,
                    code_origin: self.code_origin,
                    help,
                });
            }
            // Check the body anyway, at the requested perspective, to report its problems.
        }
        let narrowing = target != code;
        let saved = if narrowing { Some(self.group_claims()) } else { None };
        self.frames.push(Frame::Group { narrowing, span });
        let body = self.with_code(target, p.span, |cx| cx.block(body));
        self.frames.pop();
        if let Some(s) = saved {
            self.restore_claims(s);
        }
        Some(StmtKind::Group { persp: target, body })
    }

    pub fn split(
        &mut self,
        level: ast::LevelName,
        level_span: Span,
        cases: &[ast::Case],
        span: Span,
    ) -> Option<StmtKind> {
        let code = self.code;
        let Some(unit) = Self::split_unit(level) else {
            self.error(TypeError::SplitLevel {
                unit: Persp::GRID,
                code,
                span: level_span,
                help: Some("a launch has one grid; split `block` or `thread` instead".into()),
            });
            return None;
        };
        let available = if self.facts.narrower_eq(unit, code) { self.facts.units_in(unit, code) } else { 0 };
        if available == 0 {
            let help = (unit.level == Level::Thread && code.level != Level::Thread)
                .then(|| format!("add thread[{}] to the function's `@requires`", unit.n));
            self.error(TypeError::SplitLevel { unit, code, span: level_span, help });
            // Check the bodies at the requested perspectives anyway.
        }
        let mut offset = 0u64;
        let mut out = Vec::new();
        let mut ok = true;
        // Claims still unowned at the split: each may be used in one branch only.
        let watched: Vec<VarId> =
            self.claims.iter().filter(|c| c.state == ClaimState::Unowned).map(|c| c.view).collect();
        let mut first_branch_use: Vec<Option<Span>> = vec![None; watched.len()];
        if cases.is_empty() {
            self.error(TypeError::Unsupported {
                what: "a split with no cases".into(),
                span,
                help: Some("add `case n:` arms".into()),
            });
        }
        // Cases past the units the code has, from `offset` on (saturating: a case may be as
        // large as `uint64` allows).
        let exceeds = |offset: u64, count: u64, last_case: Span| TypeError::SplitExceeds {
            total: offset.saturating_add(count),
            available,
            unit,
            code,
            span: level_span,
            last_case,
        };
        for c in cases {
            let errors_before = self.errors.len();
            let count = match self.const_int(&c.count, "a split case") {
                Some(n) if n >= 1 => n as u64,
                Some(n) => {
                    self.error(TypeError::ConstEval {
                        reason: crate::consts::ConstError::CaseUnits { n },
                        span: c.count.span,
                    });
                    ok = false;
                    continue;
                }
                None => {
                    ok = false;
                    continue;
                }
            };
            let persp = match unit.n.checked_mul(count) {
                Some(n) => Persp { level: unit.level, n },
                None => {
                    // A case of more threads than `uint64` counts exceeds any unit; without
                    // this report the case was dropped, body and all, and the program
                    // accepted (review R65). Where `available` is 0, `split-level` said so.
                    if ok && available > 0 {
                        self.error(exceeds(offset, count, c.count.span));
                    }
                    ok = false;
                    continue;
                }
            };
            // Thread units split from block or grid code must also fit in one block.
            if available > 0 && persp.level != code.level && !self.facts.narrower_eq(persp, code) {
                let help = (persp.level == Level::Thread)
                    .then(|| format!("add thread[{}] to the function's `@requires`", persp.n));
                self.error(TypeError::SplitStraddles { persp, span: c.count.span, help });
                ok = false;
            } else if available > 0 {
                // Saturating: a case may be as large as `uint64` allows.
                if offset.saturating_add(count) > available {
                    if ok {
                        self.error(exceeds(offset, count, c.count.span));
                    }
                    ok = false;
                } else if available % count != 0 {
                    self.error(TypeError::SplitMisaligned {
                        count,
                        offset,
                        available,
                        unit,
                        span: c.count.span,
                        size_divides: false,
                    });
                    ok = false;
                } else if !offset.is_multiple_of(count) {
                    self.error(TypeError::SplitMisaligned {
                        count,
                        offset,
                        available,
                        unit,
                        span: c.count.span,
                        size_divides: true,
                    });
                    ok = false;
                }
            }
            // Branch bodies: the code perspective is the case's; claims whose unit contains
            // the branch's become owned.
            let saved: Vec<ClaimState> = self.claims.iter().map(|cl| cl.state).collect();
            for cl in &mut self.claims {
                if cl.state == ClaimState::Unowned && self.facts.narrower_eq(persp, cl.persp) {
                    cl.state = ClaimState::Owned;
                }
            }
            let uses_before: Vec<usize> =
                watched.iter().map(|v| self.claim_uses.get(v).map_or(0, |u| u.len())).collect();
            // The split of a warp-specialised pipeline: its producer's case is the fill.
            let pipe_case = self.pipes.last().is_some_and(|p| p.split == Some(span));
            if pipe_case && let Some(p) = self.pipes.last_mut() {
                p.in_fill = c
                    .body
                    .stmts
                    .iter()
                    .find(|s| !super::pipeline::is_realloc(s))
                    .is_some_and(|s| matches!(s.kind, ast::StmtKind::Fill { .. }));
            }
            self.frames.push(Frame::Split { span });
            // The body of a case that was just reported is checked without perspective
            // errors: they would follow from the bad case, not from the body.
            let bad_case = self.errors.len() > errors_before;
            self.unsafe_depth += u32::from(bad_case);
            let body = self.with_code(persp, c.span, |cx| cx.block(&c.body));
            self.unsafe_depth -= u32::from(bad_case);
            self.frames.pop();
            if pipe_case && let Some(p) = self.pipes.last_mut() {
                p.in_fill = false;
            }
            self.restore_claims(saved);
            for (i, v) in watched.iter().enumerate() {
                let uses = self.claim_uses.get(v).map(|u| u[uses_before[i]..].to_vec()).unwrap_or_default();
                if let Some(&first_here) = uses.first() {
                    match first_branch_use[i] {
                        None => first_branch_use[i] = Some(first_here),
                        Some(first) => {
                            let e = TypeError::ClaimMultipleBranches {
                                name: self.var(*v).name.clone(),
                                span: first_here,
                                first,
                            };
                            self.persp_error(e);
                        }
                    }
                }
            }
            out.push(tir::SplitCase { offset, count, persp, body, span: c.span });
            offset = offset.saturating_add(count);
        }
        let _ = ok;
        Some(StmtKind::Split { unit, cases: out })
    }

    /// Resolves the name a partition, claim or async narrows.
    fn scope_source(&mut self, src: &ast::Ident, construct: &'static str) -> Option<VarId> {
        let v = match self.resolve(&src.name) {
            super::expr::Resolved::Var(v) => v,
            super::expr::Resolved::Unknown => {
                self.unknown_name(&src.name, src.span);
                return None;
            }
            super::expr::Resolved::Poisoned => return None,
            _ => {
                self.error(TypeError::NotPartitionable {
                    name: src.name.clone(),
                    construct,
                    found: "not a variable".into(),
                    span: src.span,
                    origin: None,
                });
                return None;
            }
        };
        if !self.check_visible(v, src.span) {
            return None;
        }
        let var = self.var(v).clone();
        // A typed tensor map is memory too (its array, which TMA stores write): partitions
        // and claims of it give stores an owner.
        let map_view = matches!(var.ty, Ty::TensorMap(_)) && construct != "async";
        if !matches!(var.ty, Ty::Ptr { .. }) && !map_view {
            let found = match var.ty {
                Ty::Array { .. } => "a thread-local array".to_string(),
                Ty::Scalar(s) => format!("a scalar of type `{}`", s.name()),
                _ => format!("a `{}`", var.ty),
            };
            self.error(TypeError::NotPartitionable {
                name: src.name.clone(),
                construct,
                found,
                span: src.span,
                origin: Some(var.span),
            });
            return None;
        }
        self.use_memory(v, src.span, construct == "async");
        Some(v)
    }

    /// The number of indices of the partition a view hands its indices to (through claims
    /// and asyncs, which pass them on) and its function's span, when that is more than one.
    fn multi_index_view(&self, v: VarId) -> Option<(usize, Span)> {
        match &self.var(v).kind {
            VarKind::View { how: ViewKind::Partition(l), .. } => {
                (l.params.len() > 1).then_some((l.params.len(), l.body.span))
            }
            // A ring slot takes one linear index (row-major over the ring's other dimensions).
            VarKind::View { how: ViewKind::Slot { .. }, .. } => None,
            VarKind::View { parent, .. } => self.multi_index_view(*parent),
            _ => None,
        }
    }

    /// Checks that memory at `var_persp` may be narrowed to `target` by code at the current
    /// perspective.
    fn narrowing_fits(
        &mut self,
        construct: &'static str,
        v: VarId,
        target: Persp,
        persp_span: Span,
        src_span: Span,
    ) -> bool {
        let var = self.var(v).clone();
        let code = self.code;
        if var.persp != code {
            self.persp_error(TypeError::PartitionPerspective {
                construct,
                problem: NarrowProblem::LivesElsewhere { name: var.name.clone(), lives: var.persp, code },
                span: src_span,
                origin: Some(var.span),
                help: Some(format!(
                    "`{construct}` narrows memory that lives at exactly the code's perspective; {}",
                    if self.facts.strictly_narrower(code, var.persp) {
                        format!("narrow `{}` to {code} first", var.name)
                    } else {
                        format!("do this in {} code", var.persp)
                    }
                )),
            });
            return false;
        }
        if !self.facts.strictly_narrower(target, code) {
            let problem = if target == code {
                NarrowProblem::NothingNarrowed { target }
            } else if self.facts.narrower_eq(code, target) || target.level > code.level {
                NarrowProblem::Broader { target, code }
            } else {
                NarrowProblem::Indivisible { target, code }
            };
            let help =
                (target.level == Level::Thread && code.level != Level::Thread && !self.facts.narrower_eq(target, code))
                    .then(|| format!("add thread[{}] to the function's `@requires`", target.n));
            self.persp_error(TypeError::PartitionPerspective {
                construct,
                problem,
                span: persp_span,
                origin: None,
                help,
            });
            return false;
        }
        true
    }

    fn hide_and_bind(&mut self, src: VarId, view: VarId, at: Span, construct: &'static str, name: &ast::Ident) {
        self.hidden.push(HiddenEntry { var: src, at, construct, new_name: name.name.clone() });
        self.push_scope();
        self.bind(&name.name, Binding::Var(view));
    }

    fn unhide(&mut self) {
        self.pop_scope();
        self.hidden.pop();
    }

    pub fn partition(
        &mut self,
        src: &ast::Ident,
        persp: &ast::Persp,
        index: &ast::IndexFn,
        name: &ast::Ident,
        body: &ast::Block,
        span: Span,
    ) -> Option<StmtKind> {
        let v = self.scope_source(src, "partition")?;
        let target = self.persp(persp)?;
        // The new view's function gives one linear index into `v` (`prism_ir::lower`,
        // `resolve`), which a view of several indices cannot take.
        if let Some((params, origin)) = self.multi_index_view(v) {
            self.error(TypeError::PartitionOfMultiIndexView {
                name: self.var(v).name.clone(),
                params,
                span: src.span,
                origin,
            });
            return None;
        }
        self.narrowing_fits("partition", v, target, persp.span, src.span);
        let lambda = self.index_fn(index, target)?;
        if matches!(self.var(v).ty, Ty::TensorMap(_))
            && !matches!((lambda.params.as_slice(), &lambda.body.kind), ([p], ExprKind::Var(b)) if p == b)
        {
            self.error(TypeError::PartitionIndexFn {
                problem: IndexFnProblem::MapView { name: self.var(v).name.clone() },
                span: lambda.body.span,
                culprit: None,
            });
            return None;
        }
        // The function is evaluated again at every access through the view, so what it reads
        // must keep its value while the view lives: otherwise the elements a unit owns would
        // change mid-scope, and the ownership the synchronisation analysis relies on with it.
        let mut captured = Vec::new();
        reads(&lambda.body, &mut captured);
        let fn_span = match index {
            ast::IndexFn::Lambda(l) => l.span,
            ast::IndexFn::Name(n) => n.span,
            ast::IndexFn::Offset(e) => e.span,
        };
        let frozen_before = self.frozen.len();
        self.frozen.extend(captured.into_iter().map(|c| (c, fn_span, name.name.clone())));
        let var = self.var(v).clone();
        let view = self.new_var(
            &name.name,
            var.ty.clone(),
            target,
            VarKind::View { parent: v, how: ViewKind::Partition(lambda) },
            name.span,
        );
        self.hide_and_bind(v, view, span, "partition", name);
        self.frames.push(Frame::Scope { construct: "partition", span });
        let body = self.block(body);
        self.frames.pop();
        self.frozen.truncate(frozen_before);
        self.unhide();
        Some(StmtKind::Partition { src: v, view, body })
    }

    /// Checks an indexing function for a partition to `target`: an integer function of its
    /// parameters that reads only values uniform over `target`.
    fn index_fn(&mut self, f: &ast::IndexFn, target: Persp) -> Option<tir::Lambda> {
        let (params, body, captures): (Vec<ast::Ident>, ast::Expr, Vec<(String, Binding)>) = match f {
            ast::IndexFn::Lambda(l) => (l.params.clone(), (*l.body).clone(), Vec::new()),
            ast::IndexFn::Name(n) => match self.lookup(&n.name) {
                Some(Binding::Lambda(def)) => {
                    (def.lambda.params.clone(), (*def.lambda.body).clone(), def.captures.clone())
                }
                Some(Binding::Poisoned(_)) => return None,
                Some(_) => {
                    self.error(TypeError::PartitionIndexFn {
                        problem: IndexFnProblem::NotALambda { name: n.name.clone() },
                        span: n.span,
                        culprit: None,
                    });
                    return None;
                }
                None => {
                    self.unknown_name(&n.name, n.span);
                    return None;
                }
            },
            ast::IndexFn::Offset(e) => {
                // Legacy `offset=e` means `f=lambda i: e + i`. The parameter's name is one
                // no source can spell, so that no name in `e` resolves to it: `__i`, which a
                // program may declare, made `offset=__i` the non-injective `2 * i`
                // (review R65).
                let i = ast::Ident { name: OFFSET_PARAM.into(), span: e.span };
                let body = ast::Expr {
                    kind: ast::ExprKind::Binary(
                        ast::BinOp::Add,
                        Box::new(e.clone()),
                        Box::new(ast::Expr {
                            kind: ast::ExprKind::Name(OFFSET_PARAM.into()),
                            span: e.span.shrink_to_end(),
                        }),
                    ),
                    span: e.span,
                };
                (vec![i], body, Vec::new())
            }
        };
        let span = match f {
            ast::IndexFn::Lambda(l) => l.span,
            ast::IndexFn::Name(n) => n.span,
            ast::IndexFn::Offset(e) => e.span,
        };
        if params.is_empty() {
            self.error(TypeError::PartitionIndexFn { problem: IndexFnProblem::NoParameters, span, culprit: None });
            return None;
        }
        self.push_scope();
        for (n, b) in captures {
            self.bind(&n, b);
        }
        let mut pvars = Vec::new();
        for p in &params {
            let pv = self.new_var(&p.name, Ty::Scalar(Scalar::I32), target, VarKind::LambdaParam, p.span);
            self.bind(&p.name, Binding::Var(pv));
            pvars.push(pv);
        }
        let was = self.in_index_fn;
        self.in_index_fn = true;
        let v = self.expr(&body, Some(target));
        self.in_index_fn = was;
        self.pop_scope();
        if v.err {
            return None;
        }
        let e = match v.scalar() {
            Some(s) if s.is_int() => {
                if v.lit != super::ctx::Lit::No {
                    self.coerce(v, Scalar::I32, "index")
                } else {
                    v.e
                }
            }
            _ => {
                self.error(TypeError::PartitionIndexFn {
                    problem: IndexFnProblem::NotInteger { ty: v.e.ty.clone() },
                    span: body.span,
                    culprit: None,
                });
                return None;
            }
        };
        if let Some(c) = self.culprit(&e, target) {
            self.persp_error(TypeError::PartitionIndexFn {
                problem: IndexFnProblem::Varies { target, what: c.what.clone() },
                span: e.span,
                culprit: Some(c),
            });
        }
        if let Some((mem, at)) = first_load(&e) {
            // Memory may change while the view lives (other threads write it), and the
            // function is evaluated at every access: the elements a unit owns would move.
            let name = self.var(mem).name.clone();
            self.error(TypeError::PartitionIndexFn {
                problem: IndexFnProblem::ReadsMemory { name },
                span: at,
                culprit: None,
            });
            return None;
        }
        Some(tir::Lambda { params: pvars, body: e })
    }

    pub fn claim(
        &mut self,
        src: &ast::Ident,
        persp: &ast::Persp,
        name: &ast::Ident,
        body: &ast::Block,
        span: Span,
    ) -> Option<StmtKind> {
        let v = self.scope_source(src, "claim")?;
        let target = self.persp(persp)?;
        self.narrowing_fits("claim", v, target, persp.span, src.span);
        let var = self.var(v).clone();
        let view = self.new_var(
            &name.name,
            var.ty.clone(),
            target,
            VarKind::View { parent: v, how: ViewKind::Claim },
            name.span,
        );
        self.hide_and_bind(v, view, span, "claim", name);
        self.claims.push(ClaimFrame { view, persp: target, span, state: ClaimState::Unowned });
        self.frames.push(Frame::Scope { construct: "claim", span });
        let body = self.block(body);
        self.frames.pop();
        self.claims.pop();
        self.unhide();
        Some(StmtKind::Claim { src: v, view, body })
    }

    pub fn async_scope(
        &mut self,
        src: &ast::Ident,
        name: &ast::Ident,
        body: &ast::Block,
        span: Span,
    ) -> Option<StmtKind> {
        let v = self.scope_source(src, "async")?;
        let var = self.var(v).clone();
        if let Ty::Ptr { mutable: false, .. } = var.ty {
            self.error(TypeError::StoreThroughConst { name: var.name.clone(), span: src.span, origin: var.span });
        }
        if !self.facts.narrower_eq(self.code, var.persp) {
            let e = TypeError::ReadUpMemory {
                name: var.name.clone(),
                persp: var.persp,
                code: self.code,
                span: src.span,
                origin: var.span,
            };
            self.persp_error(e);
        }
        let view = self.new_var(
            &name.name,
            var.ty.clone(),
            var.persp,
            VarKind::View { parent: v, how: ViewKind::Async },
            name.span,
        );
        self.async_code.insert(view, self.code);
        self.hide_and_bind(v, view, span, "async", name);
        self.frames.push(Frame::Scope { construct: "async", span });
        let body = self.block(body);
        self.frames.pop();
        self.unhide();
        Some(StmtKind::Async { src: v, view, body })
    }
}

/// The variables (scalars and local arrays) an expression reads.
fn reads(e: &tir::Expr, out: &mut Vec<VarId>) {
    match &e.kind {
        ExprKind::Var(v) => out.push(*v),
        ExprKind::Elem { array, index } => {
            out.push(*array);
            index.iter().for_each(|i| reads(i, out));
        }
        ExprKind::Load { index, .. } => index.iter().for_each(|i| reads(i, out)),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => reads(a, out),
        ExprKind::Binary(_, a, b) => {
            reads(a, out);
            reads(b, out);
        }
        ExprKind::Select { cond, then, otherwise } => {
            reads(cond, out);
            reads(then, out);
            reads(otherwise, out);
        }
        ExprKind::Call(c) => {
            for a in &c.args {
                match a {
                    tir::CallArg::Value(e) => reads(e, out),
                    tir::CallArg::ElemRef { index, .. } => index.iter().for_each(|i| reads(i, out)),
                    _ => {}
                }
            }
        }
        ExprKind::Const(_) | ExprKind::RelId { .. } | ExprKind::Raw(_) => {}
    }
}

/// The first read of memory in an expression, with its span.
fn first_load(e: &tir::Expr) -> Option<(VarId, Span)> {
    match &e.kind {
        ExprKind::Load { mem, .. } => Some((*mem, e.span)),
        ExprKind::Elem { index, .. } => index.iter().find_map(first_load),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => first_load(a),
        ExprKind::Binary(_, a, b) => first_load(a).or_else(|| first_load(b)),
        ExprKind::Select { cond, then, otherwise } => {
            first_load(cond).or_else(|| first_load(then)).or_else(|| first_load(otherwise))
        }
        ExprKind::Call(c) => c.args.iter().find_map(|a| match a {
            tir::CallArg::Value(e) => first_load(e),
            _ => None,
        }),
        ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::RelId { .. } | ExprKind::Raw(_) => None,
    }
}
