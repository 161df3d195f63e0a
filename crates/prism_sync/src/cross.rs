//! Accesses through a partition to other units' elements, and the loops that carry them.
//!
//! Inside `with partition(x, p=P, f=fn) as y:` the language trusts each `P`-unit to use
//! its own elements, so accesses through `y` need no ordering against each other (their
//! region's sharing unit is one `P`-unit). A tree reduction breaks that trust on purpose:
//!
//! ```text
//! with partition(s, p=thread[1], f=lambda i: t + i) as s_t:
//!     while stride > 32:                 # block[1] code
//!         with group(thread[1]):
//!             if t < stride:
//!                 s_t[0] += s_t[stride]  # s[t + stride]: another thread's element
//!         __syncthreads()                # forgotten: the most common CUDA bug
//!         stride /= 2
//! ```
//!
//! Within one pass of the loop the read of `s_t[stride]` and the writes of `s_t[0]` do not
//! meet (no thread writes a slot another reads in the same step; that is the partition's
//! trust, and the simulator checks it), but the next pass reads what this pass wrote, and
//! only a barrier between the passes orders that. So:
//!
//! - An access through a one-dimensional partition whose indexing function is affine,
//!   `W·u + base + A·i` with `u` the unit's `id()` and `W > 0`, stays inside its unit's
//!   own block of `W` elements when `A·i` provably lies in `[0, W)` (constants, counters of
//!   constant loops). Otherwise it may reach other units' elements: it is *cross-unit*.
//!   An indexing function that is not of this form is trusted only when it does not read
//!   the unit's own `id()` (the bitonic sort's `lambda q: q`: every unit indexes the same
//!   elements, the non-injective use the language leaves to the simulator); one that reads
//!   it in a shape the forms do not follow (`t ^ i`, `min(t, 63) + i`, `(t * t) + i`) may
//!   reach other units, and counts as doing so (review R45). An `async`
//!   scope's copies are checked one by one (its view indexes the partition as the
//!   partition does); a call's pointer argument, an intrinsic's whole-view operand (a wgmma
//!   tile) and a scope narrowing the view again (whose own index function may shift into a
//!   neighbour's elements) have no index to check, so they count as cross-unit.
//! - An edge between two accesses through the partition, one of them cross-unit, that is
//!   carried by a loop run together by more than one unit of the partition (its code is
//!   broader than `P`) is ordered at the partition's parent: the barrier is inferred in the
//!   loop, or the program is rejected as unplaceable. A loop inside one unit's code (a
//!   grid-stride loop over the unit's own interleaved elements, `y_t[i - g]`) is that unit's
//!   business, and stays trusted.
//! - Within one pass (no such back edge between the two accesses), cross-unit accesses stay
//!   trusted: windows such as a stencil's `lambda k: t + k` overlap their neighbours by
//!   design, and ordering every pass would add barriers correct kernels do not need. A race
//!   there is the non-injective use the language leaves to the simulator.

use crate::Ctx;
use crate::cfg::{InstId, PointId};
use crate::graph::{RegionKind, operands};
use crate::owner::{Affine, Term, key};
use prism_ir::ir::{InstKind, MemKind, ScopeKind};
use prism_ir::{MemId, Reg};
use prism_types::perspective::Persp;
use prism_types::tir::{BinOp, ConstValue, UnOp};

impl Ctx<'_> {
    /// Whether node `n`, in a partition's region, may touch elements of other units of the
    /// partition (see the module documentation).
    pub(crate) fn cross_unit(&self, n: usize) -> bool {
        let node = &self.graph.nodes[n];
        let RegionKind::View(v) = self.graph.regions[node.region].kind else { return false };
        let view = &self.f.mems[v.index()];
        if view.kind != MemKind::Partition {
            return false;
        }
        match &self.cfg.insts[node.inst].inst.kind {
            // An `async` scope's copies write through its view, which indexes `v` as `v`
            // does: each copy is checked like a direct access.
            InstKind::Scope { kind: ScopeKind::Async, .. } => {
                self.cfg.descendants(node.inst).any(|d| self.reaches_out(d, v, |m| self.through_async(m, v)))
            }
            // A scope narrowing `v` again (a partition, claim or pipeline of it) indexes `v`
            // through an index function of its own, which may shift into another unit's
            // elements (`lambda i: i + 1` of a per-thread view): unknown, so it may.
            InstKind::Scope { .. } => true,
            _ => self.reaches_out(node.inst, v, |m| m == v),
        }
    }

    /// Whether instruction `at` accesses `v` (through a name `through` accepts) outside its
    /// unit's own elements, or where the extent is unknown: a call's pointer argument (the
    /// callee may index it anywhere), an intrinsic's whole-view operand (a wgmma tile), a
    /// copy of a byte count that is not a constant.
    fn reaches_out(&self, at: InstId, v: MemId, through: impl Fn(MemId) -> bool) -> bool {
        let kind = &self.cfg.insts[at].inst.kind;
        operands(self.f, kind).into_iter().any(|(a, ptr, index)| {
            let acc = &self.f.accesses[a.index()];
            if !through(acc.mem) {
                return false;
            }
            match (acc.view_index, index) {
                (Some(e), Some(index)) => match crate::graph::width(self.f, &self.cfg, &self.defs, kind) {
                    Some(w) => self.reaches_other_units(at, (ptr, index, w), e, self.f.mems[v.index()].persp),
                    None => true,
                },
                _ => true,
            }
        })
    }

    /// Whether `m` is `v` or an `async` view of it (a copy's destination inside an `async`
    /// scope on `v`, indexed as `v` is).
    fn through_async(&self, m: MemId, v: MemId) -> bool {
        let mut m = m;
        loop {
            if m == v {
                return true;
            }
            let info = &self.f.mems[m.index()];
            match (info.kind, info.parent) {
                (MemKind::Async, Some(p)) => m = p,
                _ => return false,
            }
        }
    }

    /// Whether an access at root elements `ptr[index .. index + width]`, written `view[e]`
    /// in the source, may leave its unit's own elements of a partition to `p`.
    ///
    /// Where the index is not of the affine shape the proof below needs, the access counts
    /// as staying inside only when the index function does not read the unit's own `id()`
    /// (`lambda q: q`, the bitonic sort's): every unit then indexes the same elements, which
    /// is the non-injective use the language leaves to the simulator. A function that does
    /// read it but that the forms do not follow (`t - (-i)`, `(t & 63) + i`, `t + (i & 63)`)
    /// may well be a tree reduction's window, so it counts as reaching other units (review
    /// R45: such spellings were trusted and lost the barrier between the passes).
    fn reaches_other_units(&self, at: InstId, (ptr, index, width): (Reg, Reg, i128), e: Reg, p: Persp) -> bool {
        let frame = self.cfg.insts[at].frame;
        let mut reads = Vec::new();
        let Some(off) = self.pointer_offset(ptr, &mut reads, 0) else { return false };
        let unknown = || self.reads_unit_id(index, e, p, 0);
        // The root index with the source's index as a symbol: `base + W·u + A·Sym`.
        let Some(form) = self.open(index, e, frame, 0).and_then(|f| f.add(&off, 1)) else { return unknown() };
        let a = form.terms.get(&Term::Sym).copied().unwrap_or(0);
        let mut w = None;
        for (t, &k) in &form.terms {
            match t {
                Term::Sym => {}
                Term::Rel(_, target) if *target == key(p) => {
                    if w.is_some() {
                        return unknown();
                    }
                    w = Some(k);
                }
                Term::Rel(_, target) => {
                    // Anything else must be uniform over the unit (the checker makes
                    // indexing functions so); a narrower term means another shape.
                    let tp = Persp { level: target.0, n: target.1 };
                    if !self.facts.narrower_eq(p, tp) {
                        return unknown();
                    }
                }
                Term::Iv(_) => {}
                Term::Quot(..) | Term::Mod(..) | Term::Ring(..) => return unknown(),
            }
        }
        let Some(w) = w else { return unknown() };
        if w <= 0 {
            return unknown();
        }
        let mut reads = Vec::new();
        // A counter's range holds inside its loop's body only ([`Ctx::reads_inside`]).
        match self.eval(e, frame, &mut reads, 0).and_then(|f| self.range(&f)).filter(|_| self.reads_inside(&reads)) {
            // The unit's block is `[0, W)` from its start when the index counts up
            // (`A > 0`), `(-W, 0]` when it counts down (`lambda i: t + 1 - i`); a vector
            // access covers `width` elements from its index, upwards.
            Some((lo, hi)) if a >= 0 => !(a * lo >= 0 && a * hi + (width - 1) < w),
            Some((lo, hi)) => !(a * hi > -w && a * lo + (width - 1) <= 0),
            None => true,
        }
    }

    /// Whether the root index `r` (with `e`, the source's index, as a leaf) reads an `id()`
    /// that differs between the units of a partition to `p`: one of `p` itself or of a
    /// narrower perspective. Everything else an index function reads is uniform over the
    /// unit (the checker makes captured values so) or is the source's index. Unknown
    /// shapes (several definitions are all followed; too deep) count as reading it.
    fn reads_unit_id(&self, r: Reg, e: Reg, p: Persp, depth: u32) -> bool {
        if r == e || self.counter_of(r).is_some() {
            return false;
        }
        if depth > 64 {
            return true;
        }
        let Some(defs) = self.defs.get(&r) else { return false };
        defs.iter().any(|d| match &self.cfg.insts[*d].inst.kind {
            InstKind::RelId { target, .. } => {
                let tp = Persp { level: key(*target).0, n: key(*target).1 };
                key(tp) == key(p) || !self.facts.narrower_eq(p, tp)
            }
            k => k.uses().into_iter().any(|a| self.reads_unit_id(a, e, p, depth + 1)),
        })
    }

    /// The affine form of register `r` with register `e` as the symbol `Sym`; `None` when
    /// some part is not affine. A part that does not read `e` takes the ownership proof's
    /// form ([`Ctx::eval`], at `frame`, the access's), which also knows `t % 64` and `t &
    /// 63` for `t < 64`; its counters' ranges hold only inside their loops' bodies.
    fn open(&self, r: Reg, e: Reg, frame: crate::cfg::FrameId, depth: u32) -> Option<Affine> {
        if r == e {
            return Some(Affine::term(Term::Sym));
        }
        if depth > 64 {
            return None;
        }
        if let Some(l) = self.counter_of(r) {
            return Some(Affine::term(Term::Iv(l)));
        }
        let [d] = self.defs.get(&r)?.as_slice() else { return None };
        let int = |x: Reg| matches!(self.f.reg_ty(x), prism_ir::ir::Type::Scalar(s) if s.is_int());
        let opened = match &self.cfg.insts[*d].inst.kind {
            InstKind::Const { value: ConstValue::Int(v), .. } => Some(Affine::constant(*v)),
            InstKind::Copy { src, .. } => self.open(*src, e, frame, depth + 1),
            // An index function spelled through a conversion (`int(uint(t)) + i`) reaches
            // other units exactly as without it (review R43).
            k if let Some(a) = self.int_conversion(k) => self.open(a, e, frame, depth + 1),
            InstKind::RelId { code, target, .. } => Some(Affine::term(Term::Rel(key(*code), key(*target)))),
            // `t - (-i)` is `t + i` (review R45).
            InstKind::Unary { op: UnOp::Neg, arg, .. } if int(*arg) => self.open(*arg, e, frame, depth + 1)?.scale(-1),
            InstKind::Binary { op, lhs, rhs, .. } => {
                let x = self.open(*lhs, e, frame, depth + 1);
                let y = self.open(*rhs, e, frame, depth + 1);
                let konst = |f: &Affine| f.terms.is_empty().then_some(f.c);
                match (op, x, y) {
                    (BinOp::Add, Some(x), Some(y)) => x.add(&y, 1),
                    (BinOp::Sub, Some(x), Some(y)) => x.add(&y, -1),
                    // `x << k` is `x * 2^k`, for a constant `k` that keeps the factor small.
                    (BinOp::Shl, Some(x), Some(y)) => match konst(&y) {
                        Some(k) if (0..32).contains(&k) => x.scale(1 << k),
                        _ => None,
                    },
                    (BinOp::Mul, Some(x), Some(y)) => match (konst(&x), konst(&y)) {
                        (Some(k), _) => y.scale(k),
                        (_, Some(k)) => x.scale(k),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        };
        opened.or_else(|| {
            if self.reads_reg(r, e, 0) {
                return None;
            }
            let mut reads = Vec::new();
            self.eval(r, frame, &mut reads, 0).filter(|_| self.reads_inside(&reads))
        })
    }

    /// Whether register `r` is, or is computed from, register `e` (unknown: it is).
    fn reads_reg(&self, r: Reg, e: Reg, depth: u32) -> bool {
        if r == e || depth > 64 {
            return true;
        }
        if self.counter_of(r).is_some() {
            return false;
        }
        let Some(defs) = self.defs.get(&r) else { return false };
        defs.iter().any(|d| self.cfg.insts[*d].inst.kind.uses().into_iter().any(|a| self.reads_reg(a, e, depth + 1)))
    }

    /// Whether the step from point `from` to point `to` is the back edge of a loop whose
    /// code is broader than `p`.
    pub(crate) fn shared_back_edge(&self, from: PointId, to: PointId, p: Persp) -> bool {
        match self.cfg.loop_head.get(&to) {
            Some(&l) if self.cfg.insts[l].enter != from => {
                let code = self.cfg.frames[self.cfg.insts[l].frame].code;
                self.facts.strictly_narrower(p, code)
            }
            _ => false,
        }
    }

    /// Whether some path from the end of node `a` to node `b` takes the back edge of a loop
    /// whose code is broader than `p`: a loop run together by several units of a partition
    /// to `p`.
    ///
    /// The search from `a` depends on `b` only through where it may stop early, so one
    /// search from `a` without that stop answers every `b`: it records the instruction of
    /// each node start it reaches after such a back edge ([`Memo::carried`]). Asking each
    /// pair its own search made a kernel of `n` phases in a view cubic in `n` (review R50).
    ///
    /// [`Memo::carried`]: crate::Memo
    pub(crate) fn carried_by_shared_loop(&self, a: usize, b: usize, p: Persp) -> bool {
        let target = self.graph.nodes[b].inst;
        let reached = crate::kept(&self.memo.carried, (a, p), || std::rc::Rc::new(self.carried_starts(a, p, None)));
        let carried = reached.binary_search(&target).is_ok();
        if self.check_searches || cfg!(debug_assertions) {
            assert_eq!(
                carried,
                !self.carried_starts(a, p, Some(target)).is_empty(),
                "a kept search for loops carrying {a} -> {b} disagrees"
            );
        }
        carried
    }

    /// The instructions of the nodes of `a`'s region whose start some path from the end of
    /// `a` reaches after taking the back edge of a loop whose code is broader than `p`,
    /// sorted; with `target`, only that instruction, and the search stops when it finds it
    /// (the search of one pair, which checks the kept one).
    fn carried_starts(&self, a: usize, p: Persp, target: Option<InstId>) -> Vec<InstId> {
        let node = &self.graph.nodes[a];
        let region = &self.graph.regions[node.region];
        let starts = &self.graph.starts[node.region];
        let mut seen = vec![[false; 2]; self.cfg.succ.len()];
        let mut found = Vec::new();
        let back = |from: PointId, to: PointId| self.shared_back_edge(from, to, p);
        // Seed the search with the node's own successors, noting back edges taken there.
        let mut stack: Vec<(PointId, bool)> = self.cfg.succ[node.end].iter().map(|&q| (q, back(node.end, q))).collect();
        while let Some((pt, carried)) = stack.pop() {
            if seen[pt][usize::from(carried)] || pt == region.stop {
                continue;
            }
            seen[pt][usize::from(carried)] = true;
            // Paths go on past other accesses, as edges do (`paths.rs`).
            if carried && let Some(&m) = starts.get(&pt) {
                let inst = self.graph.nodes[m].inst;
                if target.is_none_or(|t| t == inst) {
                    found.push(inst);
                    if target.is_some() {
                        return found;
                    }
                }
            }
            for &q in &self.cfg.succ[pt] {
                stack.push((q, carried || back(pt, q)));
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}
