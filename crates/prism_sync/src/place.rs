//! Which edges need a barrier, and where each barrier goes.
//!
//! An edge `A → B` needs a barrier when one end writes (docs/references.md S.2 item 5) and its
//! participants are more than one thread. The barrier's unit comes from the participants
//! ([`crate::graph::barrier_scope`]). Edges are handled in program order of `B`; an edge
//! already covered by an explicit barrier, a callee's barriers or a barrier planned for an
//! earlier edge needs nothing more.
//!
//! Placement starts immediately before `B` and moves outwards, to just before an enclosing
//! construct, in two cases. It must leave code that not every thread of the barrier's units
//! runs: a `group` or `split` case narrower than the barrier's unit, a branch of a
//! non-uniform `if` (from `and`, `or` or a conditional expression), and unsafe code. And it
//! may leave a construct that does not contain `A`: every path from `A` enters that construct
//! through its start, so a barrier there is on every path, and out of a loop it runs once
//! instead of every iteration (this is what puts the Fig. 6 barrier before the write-back
//! loop rather than inside it). Each placement is checked by the coverage search; an edge no
//! legal barrier can cover (both ends inside the same narrow `group`, say, in unsafe code)
//! is reported instead of synchronised.
//!
//! Finally every barrier whose edges stay covered without it is dropped, latest first, so a
//! barrier made redundant by a broader one at the same place, or by one planned later, goes.

use crate::Ctx;
use crate::cfg::{FrameId, FrameKind, InstId};
use crate::graph::{RegionKind, barrier_scope};
use crate::paths::{Edge, Planned};
use prism_ir::ir::InstKind;
use prism_types::perspective::{Level, Persp};

/// A barrier to insert.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlannedBarrier {
    /// It goes immediately before this instruction.
    pub before: InstId,
    /// Its unit.
    pub scope: Persp,
    /// The edge it was placed for.
    pub edge: Edge,
}

/// The barriers of one function, and the edges no barrier could cover.
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
    /// Barriers in the order they were planned.
    pub barriers: Vec<PlannedBarrier>,
    /// Edges left unsynchronised.
    pub unresolved: Vec<Edge>,
}

impl Plan {
    /// The barriers by instruction.
    pub fn planned(&self) -> Planned {
        let mut map = Planned::new();
        for b in &self.barriers {
            map.entry(b.before).or_default().push(b.scope);
        }
        map
    }
}

fn remove(map: &mut Planned, before: InstId, scope: Persp) {
    if let Some(v) = map.get_mut(&before)
        && let Some(i) = v.iter().position(|&s| s == scope)
    {
        v.remove(i);
    }
}

impl Ctx<'_> {
    /// Every edge that needs ordering, in program order of its later end.
    pub(crate) fn needed_edges(&self) -> Vec<Edge> {
        let mut edges = Vec::new();
        let cross: Vec<bool> = (0..self.graph.nodes.len()).map(|n| self.cross_unit(n)).collect();
        for a in 0..self.graph.nodes.len() {
            let (succs, loops) = self.successors(a);
            let na = &self.graph.nodes[a];

            let region = &self.graph.regions[na.region];
            for &b in succs {
                let nb = &self.graph.nodes[b];
                // Only a single atomic instruction repeated by a loop is concurrent on
                // purpose; a scope or call node repeated by a loop may hold several phases
                // of atomics (an update, then a load of the count), whose passes must be
                // ordered like two nodes' (docs/soundness.md §4.3).
                let same = a == b
                    && !matches!(self.cfg.insts[na.inst].inst.kind, InstKind::Scope { .. } | InstKind::Call { .. });
                if !na.mode.conflicts(nb.mode, same) || self.disjoint_constants(a, b) {
                    continue;
                }
                // Accesses through a partition to other units' elements, carried by a loop
                // several units run together, are ordered at the partition's parent
                // (`cross.rs`).
                let (d, carried) = match region.kind {
                    RegionKind::View(v)
                        if (cross[a] || cross[b])
                            && self.carried_by_shared_loop(a, b, self.f.mems[v.index()].persp) =>
                    {
                        (region.c0, Some(self.f.mems[v.index()].persp))
                    }
                    _ => (region.d, None),
                };
                let scope = barrier_scope(self.facts, region.c0, d, &na.chain, &nb.chain);

                // One thread is ordered with itself.
                if scope == Persp::THREAD {
                    continue;
                }
                if self.owned(a, b, scope, loops) {
                    continue;
                }
                let edge = Edge { a, b, scope, carried };
                if !self.covered(&edge, &Planned::new()) && self.owned_if_limited(a, b, scope, loops) {
                    continue;
                }
                edges.push(edge);
            }
        }
        let nodes = &self.graph.nodes;
        edges.sort_by_key(|e| (nodes[e.b].inst, nodes[e.a].inst, e.b, e.a));
        edges
    }

    /// Plans the barriers of this function.
    pub(crate) fn plan(&self) -> Plan {
        let edges = self.needed_edges();
        let mut plan = Plan::default();
        let mut map = Planned::new();
        let mut resolved = Vec::new();
        for e in edges {
            if self.covered(&e, &map) {
                resolved.push(e);
                continue;
            }
            let Some(before) = self.place(&e) else {
                plan.unresolved.push(e);
                continue;
            };
            map.entry(before).or_default().push(e.scope);
            if self.covered(&e, &map) {
                plan.barriers.push(PlannedBarrier { before, scope: e.scope, edge: e });
                resolved.push(e);
            } else {
                remove(&mut map, before, e.scope);
                plan.unresolved.push(e);
            }
        }
        for i in (0..plan.barriers.len()).rev() {
            let b = plan.barriers[i];
            remove(&mut map, b.before, b.scope);
            if resolved.iter().all(|e| self.covered(e, &map)) {
                plan.barriers.remove(i);
            } else {
                map.entry(b.before).or_default().push(b.scope);
            }
        }
        plan
    }

    /// Whether a barrier over `s`-units cannot sit in block `fr`: not every thread of such a
    /// unit runs it together.
    ///
    /// A barrier over groups of blocks (`block[k]`, k > 1) is run by the backends as a
    /// grid-wide barrier, which every thread of the launch must reach the same number of
    /// times: it may stand only where all blocks run together, in grid code and in `group`
    /// and memory-scope bodies (which every unit runs), never inside a `split` case, a
    /// branch or a loop whose condition is uniform over less than the grid, or the body of
    /// a function entered below `grid[1]`.
    fn divergent(&self, fr: FrameId, s: Persp) -> bool {
        let frame = &self.cfg.frames[fr];
        let grid_wide = s.level == Level::Grid || (s.level == Level::Block && s.n > 1);
        frame.in_unsafe
            || matches!(frame.kind, FrameKind::Branch { uniform: false })
            || !self.facts.narrower_eq(s, frame.code)
            || (grid_wide
                && frame.code.level != Level::Grid
                && !matches!(frame.kind, FrameKind::Group | FrameKind::Scope { .. }))
    }

    /// The instruction the barrier for edge `e` goes before, if any legal place exists.
    fn place(&self, e: &Edge) -> Option<InstId> {
        let (a, b) = (&self.graph.nodes[e.a], &self.graph.nodes[e.b]);
        let base = self.graph.regions[b.region].base;
        let mut target = None;
        for fr in self.cfg.ancestors(self.cfg.insts[b.inst].frame).take_while(|&x| x != base) {
            let owner = self.cfg.frames[fr].owner?;
            let contains_a = owner == a.inst || self.cfg.inside(a.inst, owner);
            if self.divergent(fr, e.scope) || !contains_a {
                target = Some(owner);
            }
        }
        let before = target.unwrap_or(b.inst);
        if self.cfg.ancestors(self.cfg.insts[before].frame).any(|fr| self.divergent(fr, e.scope)) {
            return None;
        }
        Some(before)
    }
}
