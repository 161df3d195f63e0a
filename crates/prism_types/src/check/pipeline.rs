//! Software pipelines: `for t in pipeline(count, stages=S):` with `with fill(ring) as slot:`
//! first in its body and `with stage(ring) as slot:` in the rest (docs/language.md,
//! "Pipelines").
//!
//! The loop means: for each tile `t` in order, run the fill (which issues asynchronous
//! copies into the rings' slot `t % S`), then the rest of the body, where the slot holds
//! tile `t`. The implementation runs each fill `S - 1` tiles early, while earlier tiles are
//! used. That is only the same program when the fill cannot observe or be observed by
//! the code it overtakes, which the rules here make so:
//!
//! - the fill computes only from values that do not change during the loop (constants,
//!   parameters, loop variables, its own locals) and touches memory only by issuing
//!   copies into its slots: no loads, stores, calls or collectives;
//! - the rings are hidden in the loop except through `fill` and `stage`, and `stage` views
//!   are read-only, so nothing else in the loop reads or writes a slot;
//! - nothing in the loop writes memory a fill's copy reads (`async-source-write`, checked
//!   with the synchronisation analysis).
//!
//! The lowering (`prism_ir::lower`) places the waits and the one barrier per tile; the
//! argument that they order every access is in docs/soundness.md §4.3.1 (with bodies that
//! turn at `stage(ring, next=True)`).

use super::ctx::{Binding, Checker, Frame, HiddenEntry};
use crate::error::Sink;
use crate::error::TypeError;
use crate::perspective::Persp;
use crate::tir::{self, CallArg, Callee, ExprKind, Place, StmtKind, VarId, VarKind, ViewKind};
use crate::ty::{Scalar, Ty};
use prism_span::Span;
use prism_syntax::ast;

/// The most slots a ring may have (`cp.async` keeps at most this many groups apart).
pub const MAX_STAGES: i128 = 8;

/// An enclosing pipeline loop.
#[derive(Clone, Debug)]
pub(crate) struct PipeCtx {
    /// The slot count.
    pub stages: u64,
    /// Its rings.
    pub rings: Vec<VarId>,
    /// While its fill is being checked.
    pub in_fill: bool,
    /// For a warp-specialised pipeline, the span of its body's `match split`: the case
    /// holding the fill is the producer (`in_fill` while it is checked).
    pub split: Option<Span>,
    /// Once the body's statements have reached the first `stage(ring, next=True)` among
    /// them (its head): the pipeline's barrier stands there, so from it on the body reads
    /// only the next tile's slots.
    pub turned: Option<Span>,
}

impl Checker<'_> {
    /// `for var in pipeline(count, stages=S): body`.
    #[allow(clippy::too_many_arguments)]
    pub fn pipeline_loop(
        &mut self,
        var: &ast::Ident,
        count: &ast::Expr,
        stages: &ast::Expr,
        body: &ast::Block,
        span: Span,
        out: &mut Vec<tir::Stmt>,
    ) {
        let head = span.shrink_to_start().to(stages.span);
        if self.code != Persp::BLOCK {
            self.form_error(
                format!("a pipeline runs in block[1] code, not {} code", self.code),
                head,
                None,
                Some("every thread of the block waits for each tile and meets at its barrier; put the loop in `with group(block[1]):`".into()),
            );
        }
        let n = self.const_int(stages, "a pipeline's stage count");
        let stages_n = match n {
            Some(s) if (2..=MAX_STAGES).contains(&s) => s as u64,
            Some(s) => {
                self.form_error(format!("a pipeline has 2 to {MAX_STAGES} stages, not {s}"), stages.span, None, None);
                2
            }
            None => 2,
        };
        let vc = self.expr(count, None);
        let c = self.coerce(vc, Scalar::I32, "pipeline tile count");
        self.check_uniform_sink(&c, Sink::LoopBound);

        if let Some(first) = body.stmts.first()
            && let ast::StmtKind::Split { cases, .. } = &first.kind
        {
            self.specialised_pipeline(var, c, stages_n, head, first, cases, body, span, out);
            return;
        }
        let Some(first) = body.stmts.first().filter(|s| matches!(s.kind, ast::StmtKind::Fill { .. })) else {
            let at = body.stmts.first().map_or(head, |s| s.span);
            self.form_error(
                "a pipeline's body starts with `with fill(ring) as slot:`".into(),
                at,
                Some(head),
                Some("the fill issues the copies of a tile; the rest of the body uses it".into()),
            );
            return;
        };
        // The rings: every `fill` in the fill statement, resolved before the body so that
        // they are hidden in all of it.
        let rings = self.rings_of(first, stages_n);

        let (lv, saved) = self.enter_pipeline(
            var,
            head,
            PipeCtx { stages: stages_n, rings: rings.clone(), in_fill: true, split: None, turned: None },
        );
        let first_var = self.vars.len();
        let mut fill = Vec::new();
        self.stmt(first, &mut fill);
        let fill = tir::Block { stmts: fill };
        let fill_head = fill_head(first);
        let outer_reads = self.fill_reads.take();
        self.fill_pure(&fill, first_var, lv, fill_head, false);
        let reads = self.fill_reads.replace(outer_reads);
        if let Some(p) = self.pipes.last_mut() {
            p.in_fill = false;
        }
        // The rest of the body, statement by statement: the first `stage(ring, next=True)`
        // among them is where the lowering puts the pipeline's wait and barrier.
        self.push_scope();
        let saved_smem = self.smem_cur;
        let mut stmts = Vec::new();
        for s in &body.stmts[1..] {
            if let ast::StmtKind::Stage { src, next: true, .. } = &s.kind
                && let super::expr::Resolved::Var(r) = self.resolve(&src.name)
                && rings.contains(&r)
                && let Some(p) = self.pipes.last_mut()
                && p.turned.is_none()
            {
                p.turned = Some(s.span.shrink_to_start().to(src.span));
            }
            self.stmt(s, &mut stmts);
        }
        self.smem_cur = saved_smem;
        self.pop_scope();
        let body = tir::Block { stmts };
        self.frames.pop();
        self.pipes.pop();
        self.fill_reads_unassigned(reads, &[&fill, &body], fill_head);
        self.leave_pipeline(&rings, saved);
        out.push(tir::Stmt {
            kind: StmtKind::Pipeline { var: lv, count: c, stages: stages_n, rings, fill, body, bars: None },
            code: self.code,
            span,
        });
    }

    /// Enters a pipeline loop's body: binds the loop variable, hides the rings (reachable
    /// only through `fill` and `stage`) and pushes the pipeline. Returns the variable and
    /// the shared-memory offset to restore.
    fn enter_pipeline(&mut self, var: &ast::Ident, head: Span, pipe: PipeCtx) -> (VarId, u64) {
        self.push_scope();
        let saved = self.smem_cur;
        let lv = self.new_var(&var.name, Ty::Scalar(Scalar::I32), self.code, VarKind::LoopVar, var.span);
        self.bind(&var.name, Binding::Var(lv));
        for &r in &pipe.rings {
            let name = self.var(r).name.clone();
            self.hidden.push(HiddenEntry {
                var: r,
                at: head,
                construct: "pipeline",
                new_name: format!("fill({name})` and `stage({name})"),
            });
        }
        self.pipes.push(pipe);
        self.frames.push(Frame::Scope { construct: "pipeline", span: head });
        (lv, saved)
    }

    /// Leaves what [`Self::enter_pipeline`] entered (the frame and the pipeline are popped
    /// by the caller once its body is checked).
    fn leave_pipeline(&mut self, rings: &[VarId], saved: u64) {
        for _ in rings {
            self.hidden.pop();
        }
        self.smem_cur = saved;
        self.pop_scope();
    }

    /// The fill may read a variable declared outside it only if the loop (`blocks`) never
    /// changes it: it runs tiles early, before the bodies of the tiles between.
    fn fill_reads_unassigned(&mut self, reads: Vec<(VarId, Span)>, blocks: &[&tir::Block], fill: Span) {
        let mut assigned = Vec::new();
        for b in blocks {
            tir::assigned_in(b, &mut Default::default(), &mut assigned);
        }
        for (v, at) in reads {
            if assigned.iter().any(|(x, _)| *x == v) {
                let what = format!("reads `{}`, which the loop assigns", self.var(v).name);
                self.error(TypeError::PipelineFill { what, span: at, fill });
            }
        }
    }

    /// The rings a fill statement names, checked as rings of `stages` slots not already
    /// in an enclosing pipeline, each once.
    fn rings_of(&mut self, fill: &ast::Stmt, stages: u64) -> Vec<VarId> {
        let (mut names, mut looped) = (Vec::new(), Vec::new());
        fill_names_in(fill, false, &mut names, &mut looped);
        // A fill has no wait of its own (the pipeline's wait comes tiles later), so a nested
        // fill opened by every iteration of a loop would have all its iterations' copies in
        // flight into one slot at once, unordered (a cp.async group, or TMA copies of one
        // mbarrier phase): found by an adversarial review on 2026-11-29.
        for id in &looped {
            self.form_error(
                format!("`fill({})` inside a loop of the pipeline's fill: the loop's copies would all be in flight into one slot", id.name),
                id.span,
                None,
                Some("fill each ring once per tile, and put the loop inside that fill (where overlapping copies are refused)".into()),
            );
        }
        let mut rings: Vec<VarId> = Vec::new();
        for id in names {
            // A ring of the wrong shape is reported once and still taken as a ring, so that
            // its `fill` and `stage` do not report again.
            let Some(r) = self.ring(id, stages) else { continue };
            if self.pipes.iter().any(|p| p.rings.contains(&r)) {
                // Its slots hold the outer pipeline's tiles in flight; still this
                // pipeline's ring for the rest of the check (one error is enough).
                self.form_error(
                    format!("`{}` is already a ring of an enclosing pipeline", id.name),
                    id.span,
                    None,
                    Some("give the inner pipeline a ring of its own".into()),
                );
                if !rings.contains(&r) {
                    rings.push(r);
                }
                continue;
            }
            // `fill` and `stage` look rings up past hiding (the pipeline hides its own), but
            // an array that an enclosing partition, claim or async already hides cannot
            // become a ring: its view stays visible in the loop and would reach the slots
            // beside the fill's copies and the stages, which inference orders as one
            // access to the ring (review R59: three programs that raced). Still taken as a
            // ring for the rest of the check (one error is enough).
            if !self.check_visible(r, id.span) {
                if !rings.contains(&r) {
                    rings.push(r);
                }
                continue;
            }
            if rings.contains(&r) {
                self.form_error(format!("`{}` is filled twice in one pipeline", id.name), id.span, None, None);
                continue;
            }
            rings.push(r);
        }
        rings
    }

    /// `for t in pipeline(count, stages=S):` whose body is one `match split(...)`: a
    /// warp-specialised pipeline. The case whose body is a `fill` is the producer: it runs
    /// the fills of every tile in order, up to `S` tiles ahead, each once its slot is free;
    /// the other cases are the consumers, each running its body for every tile in order once
    /// the tile has landed. The lowering synchronises the two sides through a full and an
    /// empty mbarrier per slot (`prism_ir::lower`, docs/soundness.md §4.3.2), so the fill's
    /// copies must complete on an mbarrier: they are TMA copies of typed tensor maps.
    #[allow(clippy::too_many_arguments)]
    fn specialised_pipeline(
        &mut self,
        var: &ast::Ident,
        count: tir::Expr,
        stages: u64,
        head: Span,
        split: &ast::Stmt,
        cases: &[ast::Case],
        body: &ast::Block,
        span: Span,
        out: &mut Vec<tir::Stmt>,
    ) {
        // Each case may start with register reallocations (`setmaxnreg_*`), which run once
        // before its loop (they change no value, and every thread of the case runs them).
        let prologue = |c: &ast::Case| c.body.stmts.iter().take_while(|s| is_realloc(s)).count();
        let is_fill =
            |c: &ast::Case| c.body.stmts.get(prologue(c)).is_some_and(|s| matches!(s.kind, ast::StmtKind::Fill { .. }));
        if let Some(extra) = body.stmts.get(1) {
            self.form_error(
                "a warp-specialised pipeline's body is one `match split(...)`: nothing may follow it".into(),
                extra.span,
                Some(head),
                Some("move the statement into the consumers' case".into()),
            );
        }
        let producers: Vec<&ast::Case> = cases.iter().filter(|c| is_fill(c)).collect();
        let Some(producer) = producers.first() else {
            self.form_error(
                "a warp-specialised pipeline has one case whose body is `with fill(ring) as slot:`, the producer"
                    .into(),
                split.span,
                Some(head),
                Some("the producer's case issues each tile's copies; the other cases use the tile with `stage`".into()),
            );
            return;
        };
        if let Some(second) = producers.get(1) {
            self.form_error(
                "a warp-specialised pipeline has one producer case, not two".into(),
                second.span,
                Some(producer.span),
                None,
            );
        }
        if let Some(extra) = producer.body.stmts.get(prologue(producer) + 1) {
            self.form_error(
                "the producer's case holds only its fill: it runs up to a whole ring of tiles ahead of the consumers"
                    .into(),
                extra.span,
                Some(producer.span),
                None,
            );
        }
        if !cases.iter().any(|c| !is_fill(c)) {
            self.form_error(
                "a warp-specialised pipeline has at least one consumer case besides the producer".into(),
                split.span,
                Some(head),
                None,
            );
        }
        for c in cases.iter().filter(|c| !is_fill(c)) {
            let mut names = Vec::new();
            for st in &c.body.stmts {
                fill_names(st, &mut names);
            }
            if let Some(id) = names.first() {
                self.form_error(
                    format!("`fill({})` outside the producer's case", id.name),
                    id.span,
                    Some(producer.span),
                    Some("a warp-specialised pipeline fills its rings in the case whose body is the fill".into()),
                );
            }
        }
        let fill_stmt = &producer.body.stmts[prologue(producer)];
        let rings = self.rings_of(fill_stmt, stages);
        // A full and an empty mbarrier per slot, in shared memory the loop owns.
        let bars_bytes = 16 * stages;
        let offset = super::call::align_up(self.smem_cur, 16);
        self.smem_cur = offset.saturating_add(bars_bytes);
        self.smem_need = self.smem_need.max(self.smem_cur);
        let bars = self.new_var(
            "pipeline mbarriers",
            Ty::Ptr { elem: Scalar::U64, mutable: true },
            Persp::BLOCK,
            VarKind::Shared { dims: vec![2 * stages], offset, bytes: bars_bytes },
            head,
        );
        out.push(tir::Stmt { kind: StmtKind::Decl { var: bars, init: None }, code: self.code, span: head });

        let (lv, saved) = self.enter_pipeline(
            var,
            head,
            PipeCtx { stages, rings: rings.clone(), in_fill: false, split: Some(split.span), turned: None },
        );
        let first_var = self.vars.len();
        let mut stmts = Vec::new();
        self.stmt(split, &mut stmts);
        self.frames.pop();
        self.pipes.pop();
        if let Some(tir::Stmt { kind: StmtKind::Split { cases, .. }, .. }) = stmts.first() {
            for c in cases {
                self.late_case(c);
            }
        }
        // The producer's fill runs tiles ahead of the consumers: the plain pipeline's fill
        // rules, with TMA copies in place of `cp.async` ones.
        let fill_head = fill_head(fill_stmt);
        let producer_index = cases.iter().position(is_fill);
        let fill = match (stmts.first(), producer_index) {
            (Some(tir::Stmt { kind: StmtKind::Split { cases, .. }, .. }), Some(i)) => cases.get(i).and_then(|c| {
                let fill = c.body.stmts.iter().find(|s| matches!(s.kind, StmtKind::Fill { .. }))?;
                Some(tir::Block { stmts: vec![fill.clone()] })
            }),
            _ => None,
        };
        if let Some(fill) = &fill {
            let outer_reads = self.fill_reads.take();
            self.fill_pure(fill, first_var, lv, fill_head, true);
            let reads = self.fill_reads.replace(outer_reads);
            self.fill_reads_unassigned(reads, &[&tir::Block { stmts: stmts.clone() }], fill_head);
        }
        self.leave_pipeline(&rings, saved);
        out.push(tir::Stmt {
            kind: StmtKind::Pipeline {
                var: lv,
                count,
                stages,
                rings,
                fill: tir::Block::default(),
                body: tir::Block { stmts },
                bars: Some(bars),
            },
            code: self.code,
            span,
        });
    }

    /// A consumer case releases its slot once per tile, for all its rings together: either
    /// at the end of the tile's iteration, or, when its stages say `late=True`, at the end
    /// of the next tile's (docs/language.md, "Warp-specialised pipelines"). So its stages
    /// agree, and a late case is whole warpgroups, where the lowering completes the last
    /// tile's wgmmas after the loop with a `wgmma_wait(0)`.
    fn late_case(&mut self, c: &tir::SplitCase) {
        let mut stages = Vec::new();
        tir::stages_in(&c.body, &mut stages);
        let Some(&(first_late, first)) = stages.first() else { return };
        if let Some(&(late, other)) = stages.iter().find(|(l, _)| *l != first_late) {
            let (late_at, plain_at) = if late { (other, first) } else { (first, other) };
            self.form_error(
                "a consumer case's stages are all `late=True` or none is: the case releases its slot once per tile"
                    .into(),
                plain_at,
                Some(late_at),
                Some("add `late=True` to every `stage` of the case".into()),
            );
            return;
        }
        let whole_warpgroups =
            c.persp.level == crate::perspective::Level::Thread && c.persp.n.is_multiple_of(Persp::WARPGROUP.n);
        if first_late && !whole_warpgroups {
            self.form_error(
                format!("a consumer case with `late=True` stages runs as whole warpgroups, not {}", c.persp),
                first,
                Some(c.span),
                Some("its last tile's wgmmas are completed after the loop by `wgmma_wait(0)`, a warpgroup's instruction; split by warpgroup".into()),
            );
        }
    }

    /// `with fill(ring) as name:` or `with stage(ring) as name:` (`next`: `with stage(ring,
    /// next=True) as name:`; `late`: `with stage(ring, late=True) as name:`).
    #[allow(clippy::too_many_arguments)]
    pub fn slot_scope(
        &mut self,
        fill: bool,
        next: bool,
        late: bool,
        src: &ast::Ident,
        name: &ast::Ident,
        body: &ast::Block,
        span: Span,
    ) -> Option<StmtKind> {
        let construct = if fill { "fill" } else { "stage" };
        let ring = self.resolve_var(src)?;
        // The innermost pipeline that owns the ring.
        let Some(pi) = self.pipes.iter().rposition(|p| p.rings.contains(&ring)) else {
            let problem = if fill {
                format!("`with fill({})` is only the first statement of a pipeline loop", src.name)
            } else {
                format!("`{}` is not a ring of an enclosing pipeline", src.name)
            };
            self.form_error(
                problem,
                span.shrink_to_start().to(src.span),
                None,
                Some("a ring is a shared array `s : shared(T[S, ...])` filled by the first statement of `for t in pipeline(n, stages=S):`".into()),
            );
            return None;
        };
        let p = self.pipes[pi].clone();
        if fill != p.in_fill || (fill && pi + 1 != self.pipes.len()) {
            let problem = if fill {
                format!("`with fill({})` is only the first statement of its pipeline loop", src.name)
            } else {
                format!("the fill of a pipeline cannot read its ring `{}`", src.name)
            };
            self.form_error(problem, span.shrink_to_start().to(src.span), None, None);
            return None;
        }
        if !fill && !self.stage_in_order(&p, next, src, span) {
            return None;
        }
        if late && p.split.is_none() {
            self.form_error(
                format!("`stage({}, late=True)` outside a warp-specialised pipeline", src.name),
                span.shrink_to_start().to(src.span),
                None,
                Some("a pipeline's barrier frees every slot of the block at once; releasing a slot one tile late is for the consumer cases of a `match split(...)` body, whose wgmmas stay in flight".into()),
            );
            return None;
        }
        let var = self.var(ring).clone();
        let Ty::Ptr { elem, .. } = var.ty else { return None };
        let view = self.new_var(
            &name.name,
            Ty::Ptr { elem, mutable: fill },
            var.persp,
            VarKind::View { parent: ring, how: ViewKind::Slot { fill, stages: p.stages } },
            name.span,
        );
        self.push_scope();
        self.bind(&name.name, Binding::Var(view));
        self.frames.push(Frame::Scope { construct, span });
        let body = self.block(body);
        self.frames.pop();
        self.pop_scope();
        Some(if fill { StmtKind::Fill { ring, view, body } } else { StmtKind::Stage { ring, next, late, view, body } })
    }

    /// Whether a `stage` stands where its pipeline's barrier allows (docs/soundness.md
    /// §4.3.1): the lowering puts the barrier before the first `stage(ring, next=True)` of
    /// the body's own statements, so a next-tile stage must be that statement or come after
    /// it, and a current-tile stage must come before it (past the barrier, the next fill
    /// may overwrite the current tile's slot while this thread still reads it).
    fn stage_in_order(&mut self, p: &PipeCtx, next: bool, src: &ast::Ident, span: Span) -> bool {
        let head = span.shrink_to_start().to(src.span);
        if next && p.split.is_some() {
            self.form_error(
                format!("`stage({}, next=True)` in a warp-specialised pipeline", src.name),
                head,
                p.split,
                Some("its consumers wait for each tile on the slot's mbarrier; read the tile in its own iteration with `stage(ring)`".into()),
            );
            return false;
        }
        match (next, p.turned) {
            (true, None) => {
                self.form_error(
                    format!("`stage({}, next=True)` is a statement of the pipeline's body itself, after its `stage({})` reads", src.name, src.name),
                    head,
                    None,
                    Some("the pipeline's barrier goes just before the first `stage(ring, next=True)` of the body, where every thread of the block meets; it cannot stand inside other code".into()),
                );
                false
            }
            (false, Some(turn)) => {
                self.form_error(
                    format!("`stage({})` reads the current tile after the pipeline's barrier", src.name),
                    head,
                    Some(turn),
                    Some("past the barrier before the first `stage(ring, next=True)`, the next fill may overwrite the current tile's slot; read it before that statement".into()),
                );
                false
            }
            _ => true,
        }
    }

    /// Resolves a name to a variable, reporting unknown names (hidden names are looked up
    /// all the same: `fill` and `stage` are how the rings are reached).
    fn resolve_var(&mut self, id: &ast::Ident) -> Option<VarId> {
        match self.resolve(&id.name) {
            super::expr::Resolved::Var(v) => Some(v),
            super::expr::Resolved::Unknown => {
                self.unknown_name(&id.name, id.span);
                None
            }
            _ => {
                self.form_error(format!("`{}` is not a shared array", id.name), id.span, None, None);
                None
            }
        }
    }

    /// Checks that `id` names a ring of `stages` slots.
    fn ring(&mut self, id: &ast::Ident, stages: u64) -> Option<VarId> {
        let v = self.resolve_var(id)?;
        let var = self.var(v).clone();
        let ok = matches!(&var.kind, VarKind::Shared { dims, .. } if dims.len() >= 2 && dims[0] == stages)
            && var.persp == Persp::BLOCK;
        if !ok {
            let elem = match var.ty {
                Ty::Ptr { elem, .. } => elem.name(),
                _ => "?",
            };
            let found = match &var.kind {
                VarKind::Shared { dims, .. } => format!(
                    "shared({elem}[{}]) @ {}",
                    // The dynamic shared array's length is known only at launch.
                    dims.iter()
                        .map(|&d| if d == crate::tir::DYNAMIC_LEN { "dynamic".to_string() } else { d.to_string() })
                        .collect::<Vec<_>>()
                        .join(", "),
                    var.persp
                ),
                _ => format!("a {}", var.ty),
            };
            self.form_error(
                format!("a ring of {stages} slots is a block[1] shared array whose first dimension is {stages}; `{}` is {found}", id.name),
                id.span,
                Some(var.span),
                Some(format!("declare it `{} : shared(T[{stages}, ...]) @ block[1]`", id.name)),
            );
            // Pointers are still rings for the rest of the check (one error is enough);
            // nothing is lowered after an error.
            let rank_ok = matches!(&var.kind, VarKind::Shared { dims, .. } if dims.len() >= 2);
            return (matches!(var.ty, Ty::Ptr { .. }) && rank_ok).then_some(v);
        }
        Some(v)
    }

    fn form_error(&mut self, problem: String, span: Span, origin: Option<Span>, help: Option<String>) {
        self.error(TypeError::PipelineForm { problem, span, origin, help });
    }

    /// The fill runs tiles early: it may compute only from values that cannot change
    /// during the loop and may touch memory only through its copies.
    fn fill_pure(&mut self, b: &tir::Block, first_var: usize, lv: VarId, fill: Span, specialised: bool) {
        for s in &b.stmts {
            let bad = |what: String| Some((what, s.span));
            let problem: Option<(String, Span)> = match &s.kind {
                StmtKind::Decl { var, init } => {
                    if matches!(self.var(*var).kind, VarKind::Shared { .. }) {
                        bad("declares shared memory".into())
                    } else {
                        init.as_ref().and_then(|e| self.pure_expr(e, first_var, lv))
                    }
                }
                StmtKind::Assign { place, value, .. } => {
                    let target = match place {
                        Place::Var(v) | Place::Elem { array: v, .. } => *v,
                    };
                    if (target.0 as usize) < first_var {
                        bad(format!("assigns `{}`, declared outside the fill", self.var(target).name))
                    } else if let Place::Elem { index, .. } = place {
                        index
                            .iter()
                            .find_map(|e| self.pure_expr(e, first_var, lv))
                            .or_else(|| self.pure_expr(value, first_var, lv))
                    } else {
                        self.pure_expr(value, first_var, lv)
                    }
                }
                StmtKind::Store { mem, .. } => bad(format!("stores through `{}`", self.var(*mem).name)),
                StmtKind::Expr(e) => self.pure_stmt_call(e, first_var, lv, specialised),
                StmtKind::If { cond, then, otherwise } => {
                    self.fill_pure(then, first_var, lv, fill, specialised);
                    self.fill_pure(otherwise, first_var, lv, fill, specialised);
                    self.pure_expr(cond, first_var, lv)
                }
                StmtKind::For { start, end, step, body, .. } => {
                    self.fill_pure(body, first_var, lv, fill, specialised);
                    [start, end, step].into_iter().find_map(|e| self.pure_expr(e, first_var, lv))
                }
                StmtKind::While { cond, body } => {
                    self.fill_pure(body, first_var, lv, fill, specialised);
                    self.pure_expr(cond, first_var, lv)
                }
                StmtKind::Group { body, .. } | StmtKind::Fill { body, .. } => {
                    self.fill_pure(body, first_var, lv, fill, specialised);
                    None
                }
                StmtKind::Split { cases, .. } => {
                    for c in cases {
                        self.fill_pure(&c.body, first_var, lv, fill, specialised);
                    }
                    None
                }
                StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => None,
                StmtKind::Partition { .. } => bad("opens a `partition`".into()),
                StmtKind::Claim { .. } => bad("opens a `claim`".into()),
                StmtKind::Async { .. } => bad("opens an `async` scope".into()),
                StmtKind::Stage { .. } => bad("opens a `stage`".into()),
                StmtKind::Pipeline { .. } => bad("runs a pipeline".into()),
                StmtKind::Unsafe { .. } | StmtKind::UnsafeText(_) => bad("runs unsafe code".into()),
            };
            if let Some((what, span)) = problem {
                self.error(TypeError::PipelineFill { what, span, fill });
            }
        }
    }

    /// A statement-level call in a fill: a copy into a slot (`cp_async` in a pipeline whose
    /// barrier publishes the tile, a TMA copy of a typed tensor map in a warp-specialised
    /// one, whose copies complete on the slot's mbarrier), or a pure intrinsic.
    fn pure_stmt_call(&self, e: &tir::Expr, first_var: usize, lv: VarId, specialised: bool) -> Option<(String, Span)> {
        if let ExprKind::Call(c) = &e.kind
            && let Callee::Intrinsic(id) = c.callee
            && (id.is_cp_async() || id.is_tma())
        {
            if specialised && !id.is_tma() {
                return Some((
                    format!(
                        "calls `{}`; a warp-specialised pipeline's fill copies with TMA, whose copies complete on the slot's mbarrier",
                        id.sig().name
                    ),
                    e.span,
                ));
            }
            if !specialised && id.is_tma() {
                return Some((
                    format!(
                        "calls `{}`; a pipeline whose fill is not in a producer's case copies with `cp_async`",
                        id.sig().name
                    ),
                    e.span,
                ));
            }
            if id.is_tma()
                && let Some(CallArg::Opaque(m)) = c.args.get(1)
                && !matches!(self.var(*m).ty, Ty::TensorMap(_))
            {
                return Some((
                    format!(
                        "copies through the untyped `{}`; the pipeline announces each box's bytes, which only a `tensor_map(...)` says",
                        self.var(*m).name
                    ),
                    e.span,
                ));
            }
            // The destination is a fill slot (the call's own check) and the source is read
            // by the copy; only the indices and the byte count are computed here.
            return c.args.iter().find_map(|a| match a {
                CallArg::Value(v) => self.pure_expr(v, first_var, lv),
                CallArg::ElemRef { index, .. } => index.iter().find_map(|x| self.pure_expr(x, first_var, lv)),
                _ => None,
            });
        }
        self.pure_expr(e, first_var, lv)
    }

    /// The first thing in `e` a fill may not do, if any.
    fn pure_expr(&self, e: &tir::Expr, first_var: usize, lv: VarId) -> Option<(String, Span)> {
        // Any variable from outside the fill: reported when the loop assigns it.
        let outer_mutable = |v: VarId| (v.0 as usize) < first_var && v != lv;
        match &e.kind {
            ExprKind::Const(_) | ExprKind::RelId { .. } | ExprKind::Raw(_) => None,
            ExprKind::Var(v) => {
                if outer_mutable(*v) {
                    self.fill_reads.borrow_mut().push((*v, e.span));
                }
                None
            }
            ExprKind::Elem { array, index } => {
                if outer_mutable(*array) {
                    self.fill_reads.borrow_mut().push((*array, e.span));
                }
                index.iter().find_map(|x| self.pure_expr(x, first_var, lv))
            }
            // Reading a fill's own slot is `async-misuse` already.
            ExprKind::Load { mem, .. }
                if matches!(self.var(*mem).kind, VarKind::View { how: ViewKind::Slot { fill: true, .. }, .. }) =>
            {
                None
            }
            ExprKind::Load { mem, .. } => Some((format!("reads memory through `{}`", self.var(*mem).name), e.span)),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.pure_expr(a, first_var, lv),
            ExprKind::Binary(_, a, b) => self.pure_expr(a, first_var, lv).or_else(|| self.pure_expr(b, first_var, lv)),
            ExprKind::Select { cond, then, otherwise } => {
                [cond, then, otherwise].into_iter().find_map(|x| self.pure_expr(x, first_var, lv))
            }
            ExprKind::Call(c) => match c.callee {
                Callee::Intrinsic(id) if id.sig().code == crate::intrinsics::CodeReq::Pure => {
                    c.args.iter().find_map(|a| match a {
                        CallArg::Value(v) => self.pure_expr(v, first_var, lv),
                        _ => Some((format!("passes memory to `{}`", id.sig().name), e.span)),
                    })
                }
                Callee::Intrinsic(id) => Some((format!("calls `{}`", id.sig().name), e.span)),
                Callee::Fn(_) => Some(("calls a function".into(), e.span)),
            },
        }
    }
}

/// The head of a fill statement, `with fill(ring) as name`, for messages.
fn fill_head(s: &ast::Stmt) -> Span {
    match &s.kind {
        ast::StmtKind::Fill { name, .. } => s.span.shrink_to_start().to(name.span),
        _ => s.span,
    }
}

/// Whether `s` is a call of `setmaxnreg_inc` or `setmaxnreg_dec`. The names are exact: no
/// function or import alias may take an intrinsic's name (`reserved-name`), so they are
/// the intrinsics, as the lowering (which looks at the resolved callee) takes them; a
/// function merely named like them (`setmaxnreg_mine`) is an ordinary statement.
pub(crate) fn is_realloc(s: &ast::Stmt) -> bool {
    let ast::StmtKind::Expr(e) = &s.kind else { return false };
    let ast::ExprKind::Call { callee, .. } = &e.kind else { return false };
    matches!(&callee.kind, ast::ExprKind::Name(n) if n == "setmaxnreg_inc" || n == "setmaxnreg_dec")
}

/// The rings named by the `fill` statements in `s` (at any depth), in order.
fn fill_names<'a>(s: &'a ast::Stmt, out: &mut Vec<&'a ast::Ident>) {
    let mut looped = Vec::new();
    fill_names_in(s, false, out, &mut looped);
}

/// [`fill_names`], also collecting in `looped` the fills that lie inside a loop of `s`.
fn fill_names_in<'a>(s: &'a ast::Stmt, in_loop: bool, out: &mut Vec<&'a ast::Ident>, looped: &mut Vec<&'a ast::Ident>) {
    use ast::StmtKind as A;
    let mut in_loop = in_loop;
    let blocks: Vec<&ast::Block> = match &s.kind {
        A::Fill { src, body, .. } => {
            out.push(src);
            if in_loop {
                looped.push(src);
            }
            vec![body]
        }
        A::If { branches, else_block } => branches.iter().map(|(_, b)| b).chain(else_block).collect(),
        A::For { body, .. } | A::While { body, .. } => {
            in_loop = true;
            vec![body]
        }
        A::Group { body, .. }
        | A::Partition { body, .. }
        | A::Claim { body, .. }
        | A::Async { body, .. }
        | A::Unsafe { body, .. }
        | A::Stage { body, .. } => vec![body],
        A::Split { cases, .. } => cases.iter().map(|c| &c.body).collect(),
        _ => Vec::new(),
    };
    for b in blocks {
        for t in &b.stmts {
            fill_names_in(t, in_loop, out, looped);
        }
    }
}
