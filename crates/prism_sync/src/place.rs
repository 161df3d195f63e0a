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
use std::collections::HashMap;

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
            map.add(b.before, b.scope);
        }
        map
    }
}

/// The edges planning resolved, each with the instructions whose planned barriers stopped
/// its last coverage search (`Ctx::covered_by`), and for each instruction the edges that
/// listed it (some perhaps no longer).
#[derive(Default)]
struct Resolved {
    edges: Vec<(Edge, Vec<InstId>)>,
    by_stop: HashMap<InstId, Vec<usize>>,
}

impl Resolved {
    /// Records a new edge (`k` none) or edge `k`'s new stops.
    fn set(&mut self, k: Option<usize>, e: Edge, mut stops: Vec<InstId>) {
        stops.sort_unstable();
        stops.dedup();
        let k = k.unwrap_or(self.edges.len());
        for &i in &stops {
            self.by_stop.entry(i).or_default().push(k);
        }
        if k == self.edges.len() {
            self.edges.push((e, stops));
        } else {
            self.edges[k].1 = stops;
        }
    }

    /// The edges whose last search a barrier before `inst` stopped.
    fn stopped_at(&self, inst: InstId) -> Vec<usize> {
        let mut ks: Vec<usize> = self.by_stop.get(&inst).map_or(Vec::new(), |ks| {
            ks.iter().copied().filter(|&k| self.edges[k].1.binary_search(&inst).is_ok()).collect()
        });
        ks.sort_unstable();
        ks.dedup();
        ks
    }
}

impl Ctx<'_> {
    /// Every edge that needs ordering, in program order of its later end.
    pub(crate) fn needed_edges(&self) -> Vec<Edge> {
        let mut edges = Vec::new();
        let cross: Vec<bool> = (0..self.graph.nodes.len()).map(|n| self.cross_unit(n)).collect();
        // One empty map for every question, so that its searches are kept (`Ctx::reach`).
        let nothing = Planned::new();
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
                // Conflicts that never leave a block need only the block's barrier.
                let scope = if carried.is_none() && grid_wide(scope) && self.within_one_block(a, b) {
                    Persp::BLOCK
                } else {
                    scope
                };

                // One thread is ordered with itself.
                if scope == Persp::THREAD {
                    continue;
                }
                if self.owned(a, b, scope, loops) {
                    continue;
                }
                let edge = Edge { a, b, scope, carried };
                if !self.covered(&edge, &nothing) && self.owned_if_limited(a, b, scope, loops) {
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
        let mut resolved = Resolved::default();
        for e in edges {
            let mut stops = Vec::new();
            if self.covered_by(&e, &map, &mut stops) {
                resolved.set(None, e, stops);
                continue;
            }
            let Some(before) = self.place(&e) else {
                plan.unresolved.push(e);
                continue;
            };
            map.add(before, e.scope);
            stops.clear();
            if self.covered_by(&e, &map, &mut stops) {
                plan.barriers.push(PlannedBarrier { before, scope: e.scope, edge: e });
                resolved.set(None, e, stops);
            } else {
                map.remove(before, e.scope);
                plan.unresolved.push(e);
            }
        }
        // Dropping a barrier can uncover only the edges whose search it stopped; the others
        // would search the same points without it. Those are searched again, and keep their
        // new stops if the barrier goes.
        for i in (0..plan.barriers.len()).rev() {
            let b = plan.barriers[i];
            map.remove(b.before, b.scope);
            let mut again = Vec::new();
            let still = resolved.stopped_at(b.before).into_iter().all(|k| {
                let mut stops = Vec::new();
                let ok = self.covered_by(&resolved.edges[k].0, &map, &mut stops);
                again.push((k, stops));
                ok
            });
            if still {
                plan.barriers.remove(i);
                for (k, stops) in again {
                    let e = resolved.edges[k].0;
                    resolved.set(Some(k), e, stops);
                }
            } else {
                map.add(b.before, b.scope);
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
        frame.in_unsafe
            || matches!(frame.kind, FrameKind::Branch { uniform: false })
            || !self.facts.narrower_eq(s, frame.code)
            || (grid_wide(s)
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

/// Whether a barrier over `s`-units runs as a grid-wide barrier: over the grid, or over
/// groups of blocks (`block[k]`, k > 1).
pub(crate) fn grid_wide(s: Persp) -> bool {
    s.level == Level::Grid || (s.level == Level::Block && s.n > 1)
}
