//! Branches of one `split` run at the same time, so no barrier can order them: memory one
//! branch changes must not be touched by another.
//!
//! The checker's hiding and claim rules keep two branches from both narrowing the same
//! memory, but they let one branch write through a view (or update with atomics, which need
//! no view) while another reads the same array directly: the reads race with the writes,
//! and a value read at `thread[32]` may differ within the warp. This pass looks at every
//! `split` and, for every pair of branches, at the memory items (shared arrays, pointer
//! parameters, callees' shared footprints; overlapping shared bytes are one memory) each
//! branch touches. A pair conflicts by the same rule as an edge between two nodes that no
//! barrier orders ([`Mode::conflicts`](crate::graph::Mode::conflicts)): a plain write
//! against anything, a plain read against an atomic update, an atomic update against an
//! atomic whose result is used. Reads against reads and commuting atomic updates are fine.
//!
//! A partition made before the split and used by both branches is fine when its units are
//! no broader than the branches': each thread then uses its own elements, as the language
//! trusts partitions to give (a stencil's halo loads, in two branches, through one
//! per-thread view).
//!
//! Unsafe code is trusted to order its own accesses (the simulator reports what it does
//! not), so its accesses are left out; volatile accesses are never counted.
//!
//! The branches of an `if` run at the same time too, in one case: code at perspective `C`
//! narrower than the unit `S` that must synchronise for two accesses (a `group(thread[64])`
//! of a block, over shared memory) tests its conditions per `C`-unit, so different
//! `C`-units of one `S`-unit may take different branches, or leave early on different
//! paths, at the same time. Inference orders pairs of nodes that a path joins; two nodes no
//! path joins (the two branches of such an `if`, a node before a `return` and one after
//! it) are ordered by nothing, and no barrier over `S` can stand in `C` code anyway. So such
//! a pair of nodes, in one region, conflicting by the same rule and not proven to touch
//! only each thread's own elements, is an error (`branch-conflict`), unless the code where
//! their paths part is as broad as `S` (every `S`-unit then takes one way) or they lie in
//! two cases of one `split` (reported as `split-conflict` above).

use crate::Ctx;
use crate::cfg::{FrameId, FrameKind, InstId};
use crate::graph::{MemRef, Mode, barrier_scope, operands};
use prism_ir::MemId;
use prism_ir::ir::{AccessKind, InstKind, MemKind};
use prism_span::Span;
use prism_types::perspective::Persp;
use std::collections::{BTreeMap, BTreeSet};

/// Two branches of one `split` that touch the same memory, one of them changing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Conflict {
    /// The item (as the earlier branch touches it).
    pub item: usize,
    /// The first access in the earlier branch.
    pub first: Span,
    /// The first conflicting access in the later branch.
    pub second: Span,
}

/// Two nodes no path joins that different units of the code where their paths part may
/// run at the same time, one of them changing the memory the other touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Parted {
    /// The memory (as the later node names it).
    pub mem: MemRef,
    /// The earlier node, in program order.
    pub first: Span,
    /// The later node.
    pub second: Span,
    /// The code perspective where their paths part.
    pub code: Persp,
    /// The unit that would have to synchronise.
    pub scope: Persp,
}

/// What one branch does to each item: its mode, its first access, and the names it used
/// (`None` for a callee's shared memory, which has no name).
type Touches = BTreeMap<usize, (Mode, Span, BTreeSet<Option<MemId>>)>;

impl Ctx<'_> {
    /// Every conflict between branches of the function's splits.
    pub(crate) fn concurrent_conflicts(&self) -> Vec<Conflict> {
        let mut out = Vec::new();
        for (id, info) in self.cfg.insts.iter().enumerate() {
            if !matches!(info.inst.kind, InstKind::Split { .. }) || self.cfg.frames[info.frame].in_unsafe {
                continue;
            }
            let cases: Vec<(Touches, Persp)> =
                info.children.iter().map(|&case| (self.touches_in(id, case), self.cfg.frames[case].code)).collect();
            for (j, later) in cases.iter().enumerate() {
                for earlier in &cases[..j] {
                    if let Some(c) = self.conflict(earlier, later) {
                        out.push(c);
                    }
                }
            }
        }
        out
    }

    /// Every pair of nodes that different units may run at the same time on paths that part
    /// in code narrower than the unit that would have to order them (see the module
    /// documentation).
    pub(crate) fn branch_conflicts(&self) -> Vec<Parted> {
        let n = self.graph.nodes.len();
        let reach: Vec<BTreeSet<usize>> = (0..n).map(|a| self.successors(a).0.iter().copied().collect()).collect();
        let mut out = Vec::new();
        for b in 0..n {
            for a in 0..b {
                let (na, nb) = (&self.graph.nodes[a], &self.graph.nodes[b]);
                if na.region != nb.region {
                    continue;
                }
                let Some((code, branches)) = self.parting(na.inst, nb.inst) else { continue };
                // Two branches of one `if` are run at once by units that tested its
                // condition differently, even when a loop around it also joins them by a
                // path (then of one pass, else of the next: a barrier there orders only
                // that). Otherwise, nodes a path joins are inference's (and refused as
                // unplaceable when no barrier fits between them).
                if !branches && (reach[a].contains(&b) || reach[b].contains(&a)) {
                    continue;
                }
                let unsafe_code = |i: InstId| self.cfg.frames[self.cfg.insts[i].frame].in_unsafe;
                if unsafe_code(na.inst) || unsafe_code(nb.inst) {
                    continue;
                }
                if !na.mode.conflicts(nb.mode, false) || self.disjoint_constants(a, b) {
                    continue;
                }
                let region = &self.graph.regions[na.region];
                let scope = barrier_scope(self.facts, region.c0, region.d, &na.chain, &nb.chain);
                // Conflicts that never leave a block are between units of the block only.
                let scope =
                    if crate::place::grid_wide(scope) && self.within_one_block(a, b) { Persp::BLOCK } else { scope };
                // An index that fits its type only for fewer blocks (`b * 64 + t` in an
                // `int`) is proved under that launch limit, which the launchers then enforce:
                // the alternative is refusing the program.
                if scope == Persp::THREAD
                    || self.facts.narrower_eq(scope, code)
                    || self.owned(a, b, scope, &BTreeSet::new())
                    || self.owned_if_limited(a, b, scope, &BTreeSet::new())
                {
                    continue;
                }
                let (first, second) = if na.inst < nb.inst { (na, nb) } else { (nb, na) };
                out.push(Parted { mem: second.mem, first: first.span, second: second.span, code, scope });
            }
        }
        out
    }

    /// Where the paths to two instructions part: the code perspective of the innermost
    /// block holding both, and whether they lie in two branches of one `if` there; `None`
    /// when they lie in two cases of one `split` (`split-conflict`'s business).
    fn parting(&self, x: InstId, y: InstId) -> Option<(Persp, bool)> {
        let (fx, fy) = (self.cfg.insts[x].frame, self.cfg.insts[y].frame);
        let above_x: Vec<FrameId> = self.cfg.ancestors(fx).collect();
        let mut below_y: Option<FrameId> = None;
        for f in self.cfg.ancestors(fy) {
            if let Some(i) = above_x.iter().position(|&g| g == f) {
                // The blocks just below the meeting one, on each side.
                let side_x = i.checked_sub(1).map(|j| above_x[j]);
                let mut branches = false;
                if let (Some(sx), Some(sy)) = (side_x, below_y) {
                    let (bx, by) = (&self.cfg.frames[sx], &self.cfg.frames[sy]);
                    if bx.owner == by.owner && sx != sy {
                        match (bx.kind, by.kind) {
                            (FrameKind::Case { .. }, FrameKind::Case { .. }) => return None,
                            (FrameKind::Branch { .. }, FrameKind::Branch { .. }) => branches = true,
                            _ => {}
                        }
                    }
                }
                return Some((self.cfg.frames[f].code, branches));
            }
            below_y = Some(f);
        }
        None
    }

    /// The first conflict between two branches' touches, if any (each with its branch's
    /// code perspective).
    fn conflict(&self, (a, pa): &(Touches, Persp), (b, pb): &(Touches, Persp)) -> Option<Conflict> {
        for (&x, (ma, sa, va)) in a {
            for (&y, (mb, sb, vb)) in b {
                if self.graph.overlap(x, y) && ma.conflicts(*mb, false) && !self.own_elements(va, vb, *pa, *pb) {
                    return Some(Conflict { item: x, first: *sa, second: *sb });
                }
            }
        }
        None
    }

    /// Whether both branches reach the memory only through one partition made before the
    /// split whose units are no broader than either branch's: then every unit of the
    /// partition, hence every thread, uses its own elements (the language trusts a
    /// partition's index function, like everywhere else), and the branches hold different
    /// units.
    fn own_elements(&self, va: &BTreeSet<Option<MemId>>, vb: &BTreeSet<Option<MemId>>, pa: Persp, pb: Persp) -> bool {
        let (Some(&Some(m)), 1) = (va.first(), va.len()) else { return false };
        if va != vb {
            return false;
        }
        let info = &self.f.mems[m.index()];
        info.kind == MemKind::Partition
            && self.facts.narrower_eq(info.persp, pa)
            && self.facts.narrower_eq(info.persp, pb)
    }

    /// Whether `m` is a pipeline's slot view (a `fill` or a `stage`): the branches of a
    /// warp-specialised pipeline's split fill and use the ring at once, ordered by the
    /// pipeline's mbarriers (docs/soundness.md §4.3.2), and no other branch of any split
    /// can reach a ring (hidden inside its loop), so such accesses never conflict here.
    fn through_pipeline(&self, m: MemId) -> bool {
        let mut m = Some(m);
        while let Some(x) = m {
            let info = &self.f.mems[x.index()];
            if info.kind == MemKind::Pipeline {
                return true;
            }
            m = info.parent;
        }
        false
    }

    /// What the instructions of split `split`'s branch `case` do to memory.
    fn touches_in(&self, split: InstId, case: FrameId) -> Touches {
        let mut t = Touches::new();
        for d in self.cfg.descendants(split) {
            let info = &self.cfg.insts[d];
            if !self.cfg.frame_within(info.frame, case) || self.cfg.frames[info.frame].in_unsafe {
                continue;
            }
            for (a, _, _) in operands(self.f, &info.inst.kind) {
                let acc = &self.f.accesses[a.index()];
                if acc.kind == AccessKind::Volatile || self.through_pipeline(acc.mem) {
                    continue;
                }
                if let Some(item) = self.graph.item(self.f, acc.mem) {
                    let e = t.entry(item).or_insert((Mode::default(), info.inst.span, BTreeSet::new()));
                    e.0.add(acc.kind, &info.inst.kind, &self.graph.used);
                    e.2.insert(Some(acc.mem));
                }
            }
            // A callee's shared memory is written by the call (see graph.rs).
            if let Some(&item) = self.graph.footprint_of.get(&d) {
                let e = t.entry(item).or_insert((Mode::default(), info.inst.span, BTreeSet::new()));
                e.0.write = true;
                e.2.insert(None);
            }
        }
        t
    }
}
