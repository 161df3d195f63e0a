//! Paths between nodes: which nodes follow which, and whether a barrier lies on every path.
//!
//! Both questions are graph searches from the end of a node over the function's points, to
//! the region's end. Unlike docs/references.md S.2 item 4 (an edge passes no other node), a search
//! goes on past other nodes: that rule relies on every consecutive pair getting a barrier,
//! and with the ownership proof, read-read pairs and commuting atomics, some do not, so the
//! ordering of a later pair cannot be taken from the barrier of an earlier one. For coverage it also stops where a barrier orders
//! the participants: an inferred barrier already planned before an instruction, an explicit
//! `__syncthreads()`/`__syncwarp()`, or a call whose callee synchronises on every path through
//! it. A barrier over `E`-units covers an edge whose participants lie in one `S`-unit when
//! `S ⊑ E`. A barrier in unsafe code never covers anything: control there may diverge.

use crate::Ctx;
use crate::cfg::{InstId, PointId};
use prism_ir::ir::InstKind;
use prism_types::perspective::Persp;
use std::collections::{BTreeSet, HashMap};

/// Barriers planned so far: each goes before an instruction.
pub(crate) type Planned = HashMap<InstId, Vec<Persp>>;

/// An edge of the graph that needs ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Edge {
    /// The earlier node.
    pub a: usize,
    /// The later node.
    pub b: usize,
    /// The unit that must synchronise.
    pub scope: Persp,
    /// For accesses through a partition to other units' elements (`cross.rs`): only the
    /// paths that take the back edge of a loop broader than this partition perspective
    /// need the barrier (within one pass the partition is trusted).
    pub carried: Option<Persp>,
}

impl Ctx<'_> {
    /// Whether passing point `p` orders everything before it against everything after it for
    /// threads within one `s`-unit (planned barriers are checked separately, at `enter`).
    pub(crate) fn orders(&self, p: PointId, s: Persp) -> bool {
        let Some(id) = self.cfg.point_inst[p] else { return false };
        let info = &self.cfg.insts[id];
        if info.enter != p || info.exit != p || self.cfg.frames[info.frame].in_unsafe {
            return false;
        }
        match &info.inst.kind {
            InstKind::Barrier { scope, .. } => self.facts.narrower_eq(s, *scope),
            InstKind::Call { func, .. } => {
                self.summaries[func.index()].as_ref().is_some_and(|sum| sum.through.covers(self.facts, s))
            }
            _ => false,
        }
    }

    /// Whether a barrier planned before the instruction that starts at `p` covers scope `s`.
    pub(crate) fn planned_at(&self, planned: &Planned, p: PointId, s: Persp) -> bool {
        let Some(id) = self.cfg.point_inst[p] else { return false };
        self.cfg.insts[id].enter == p
            && planned.get(&id).is_some_and(|v| v.iter().any(|&e| self.facts.narrower_eq(s, e)))
    }

    /// The nodes reached from the end of node `a` without passing another node of its
    /// region, and the loops whose back edge such a path takes (found for every node once).
    pub(crate) fn successors(&self, a: usize) -> &(Vec<usize>, BTreeSet<InstId>) {
        &self.reach.get_or_init(|| (0..self.graph.nodes.len()).map(|n| self.find_successors(n)).collect())[a]
    }

    /// [`Ctx::successors`] of one node, searched.
    fn find_successors(&self, a: usize) -> (Vec<usize>, BTreeSet<InstId>) {
        let node = &self.graph.nodes[a];
        let region = &self.graph.regions[node.region];
        let starts = &self.graph.starts[node.region];
        let mut seen = vec![false; self.cfg.succ.len()];
        let mut reached = BTreeSet::new();
        let mut loops = BTreeSet::new();
        let mut stack = vec![node.end];
        let mut first = true;
        while let Some(p) = stack.pop() {
            if !first {
                if seen[p] || p == region.stop {
                    continue;
                }
                seen[p] = true;
                // Keep going past the node: it orders nothing by itself. An edge to a later
                // node through it is ordered only if a barrier lies on the way, and whether
                // one does depends on every pair, not only on consecutive ones (a read of
                // the thread's own element needs no barrier after a write, but the read of
                // a neighbour's element after it does).
                if let Some(&n) = starts.get(&p) {
                    reached.insert(n);
                }
            }
            first = false;
            for &q in &self.cfg.succ[p] {
                if let Some(&l) = self.cfg.loop_head.get(&q)
                    && self.cfg.insts[l].enter != p
                {
                    loops.insert(l);
                }
                stack.push(q);
            }
        }
        (reached.into_iter().collect(), loops)
    }

    /// Whether every path from `e.a` to `e.b` that passes no other node of their region
    /// passes a barrier covering `e.scope`.
    ///
    /// A `partition` or `claim` scope is a node as a whole, but what matters is its memory
    /// accesses: paths are followed from each access inside `A` and end at each access inside
    /// `B`, so an explicit barrier inside a scope after its last access (or before its first)
    /// counts. When `A` is `B`, a path must first leave the scope: accesses of one run of a
    /// scope are ordered by its own region.
    pub(crate) fn covered(&self, e: &Edge, planned: &Planned) -> bool {
        let (a, b) = (&self.graph.nodes[e.a], &self.graph.nodes[e.b]);
        if self.call_covers(a, e.scope, false) {
            return true;
        }
        let region = &self.graph.regions[a.region];
        let targets: Vec<PointId> = if b.inner.is_empty() {
            vec![self.cfg.insts[b.inst].enter]
        } else {
            b.inner.iter().map(|&i| self.cfg.insts[i].enter).collect()
        };
        let sources: Vec<PointId> =
            if a.inner.is_empty() { vec![a.end] } else { a.inner.iter().map(|&i| self.cfg.insts[i].exit).collect() };
        let n = self.cfg.succ.len();
        // `left`: the path has passed the end of `A` (always, for a node of one step).
        // `carried`: it has taken the back edge of a loop the edge is about (or there is none).
        let carried0 = e.carried.is_none();
        let back = |from: PointId, to: PointId| e.carried.is_some_and(|p| self.shared_back_edge(from, to, p));
        let mut seen = vec![[[false; 2]; 2]; n];
        let mut stack: Vec<(PointId, bool, bool)> = Vec::new();
        for &src in &sources {
            let left = a.inner.is_empty();
            stack.extend(self.cfg.succ[src].iter().map(|&q| (q, left, carried0 || back(src, q))));
        }
        while let Some((p, left, carried)) = stack.pop() {
            let left = left || p == a.end;
            if seen[p][usize::from(left)][usize::from(carried)] || p == region.stop {
                continue;
            }
            seen[p][usize::from(left)][usize::from(carried)] = true;
            if self.planned_at(planned, p, e.scope) {
                continue;
            }
            if targets.contains(&p) && (left || e.a != e.b) && carried {
                if self.call_covers(b, e.scope, true) {
                    continue;
                }
                return false;
            }
            if self.orders(p, e.scope) {
                continue;
            }
            stack.extend(self.cfg.succ[p].iter().map(|&q| (q, left, carried || back(p, q))));
        }
        true
    }

    /// Whether a call node's callee synchronises (over units covering `s`) before its first
    /// use (`entry`) or after its last use (otherwise) of every memory the node stands for.
    fn call_covers(&self, node: &crate::graph::Node, s: Persp, entry: bool) -> bool {
        !node.calls.is_empty()
            && node.calls.iter().all(|&(func, key)| {
                self.summaries[func.index()].as_ref().is_some_and(|sum| {
                    let cover = if entry { sum.entry(key) } else { sum.exit(key) };
                    cover.covers(self.facts, s)
                })
            })
    }
}
