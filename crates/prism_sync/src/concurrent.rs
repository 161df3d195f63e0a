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

use crate::Ctx;
use crate::cfg::{FrameId, InstId};
use crate::graph::{Mode, operands};
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
