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
//!
//! Every pair of nodes asks, so a search from one node is shared by every later node and
//! kept while the planned barriers change only where it never looked ([`Ctx::reach`]);
//! docs/soundness.md §4.3, "Asking the pair questions at scale", argues that the answers
//! are those of a search per pair.

use crate::Ctx;
use crate::cfg::{InstId, PointId};
use prism_ir::ir::InstKind;
use prism_types::perspective::Persp;
use std::collections::{BTreeSet, HashMap};

/// Visited marks for searches over the points, cleared in constant time: a mark counts
/// only if it holds the current search's stamp.
#[derive(Default)]
pub(crate) struct Marks {
    stamp: u32,
    marks: Vec<u32>,
}

impl Marks {
    /// Starts a search over `n` marks, none set.
    fn clear(&mut self, n: usize) {
        if self.marks.len() != n || self.stamp == u32::MAX {
            self.marks = vec![0; n];
            self.stamp = 0;
        }
        self.stamp += 1;
    }

    /// Sets mark `i`; whether it was already set in this search.
    fn test_and_set(&mut self, i: usize) -> bool {
        let was = self.marks[i] == self.stamp;
        self.marks[i] = self.stamp;
        was
    }
}

/// Barriers planned so far: each goes before an instruction.
///
/// Each map has an identity of its own and a log of its changes, so that a search made with
/// one state of one map can be kept while the changes since leave it as it was
/// ([`Ctx::reach`]).
#[derive(Debug)]
pub(crate) struct Planned {
    at: HashMap<InstId, Vec<Persp>>,
    id: u64,
    /// Every change: the instruction, the barrier's unit, and whether it was added.
    log: Vec<(InstId, Persp, bool)>,
}

impl Default for Planned {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Planned { at: HashMap::new(), id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed), log: Vec::new() }
    }
}

impl Planned {
    /// No barrier planned.
    pub fn new() -> Self {
        Self::default()
    }

    /// Plans a barrier over `scope`-units before `before`.
    pub fn add(&mut self, before: InstId, scope: Persp) {
        self.at.entry(before).or_default().push(scope);
        self.log.push((before, scope, true));
    }

    /// Takes back one barrier over `scope`-units before `before`, if planned.
    pub fn remove(&mut self, before: InstId, scope: Persp) {
        if let Some(v) = self.at.get_mut(&before)
            && let Some(i) = v.iter().position(|&s| s == scope)
        {
            v.remove(i);
            self.log.push((before, scope, false));
        }
    }

    /// The units of the barriers planned before `inst`.
    pub fn get(&self, inst: &InstId) -> Option<&Vec<Persp>> {
        self.at.get(inst)
    }

    /// The units of every planned barrier, by instruction.
    pub fn values(&self) -> impl Iterator<Item = &Vec<Persp>> {
        self.at.values()
    }
}

/// A search of [`Ctx::reach`], kept.
#[derive(Debug)]
pub(crate) struct Reach {
    /// The map it was made with.
    map: u64,
    /// The length of that map's log it is known to agree with.
    agrees: std::cell::Cell<usize>,
    /// The starts of nodes it reached, sorted.
    reached: Vec<PointId>,
    /// The instructions whose planned barriers ended a path, sorted.
    stops: Vec<InstId>,
    /// Every point it visited, one bit each.
    seen: Vec<u64>,
}

impl Reach {
    fn saw(&self, p: PointId) -> bool {
        bit(&self.seen, p)
    }
}

/// Bit `p` of a set of points kept one bit each.
fn bit(set: &[u64], p: PointId) -> bool {
    set[p / 64] >> (p % 64) & 1 == 1
}

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
        self.covered_by(e, planned, &mut Vec::new())
    }

    /// [`Ctx::covered`], also collecting in `stops` the instructions where a planned barrier
    /// ended a path. The answer depends on `planned` only through those: without a barrier
    /// the search never stopped at, it would search the same points and answer the same.
    pub(crate) fn covered_by(&self, e: &Edge, planned: &Planned, stops: &mut Vec<InstId>) -> bool {
        if e.a == e.b {
            return self.search_covered(e, planned, stops);
        }
        // For two different nodes the search does not depend on `B` except where it ends, so
        // one search per earlier node, unit, loop condition and state of the planned barriers
        // ([`Ctx::reach`]) answers every later node: the edge is open when a path reaches one
        // of `B`'s starts (after a back edge the condition asks for). This keeps a function of
        // `n` phases quadratic instead of cubic in `n`, in a row (review R48) and in a view
        // repeated by a loop (review R50). When `A` is `B` a path must first leave the
        // scope, a state the kept search does not follow.
        let (a, b) = (&self.graph.nodes[e.a], &self.graph.nodes[e.b]);
        // The search answers yes at once for the first; for the second, every start of `B`
        // it reaches lets the path end there, so it never answers no. Neither depends on
        // what is planned.
        if self.call_covers(a, e.scope, false) || self.call_covers(b, e.scope, true) {
            return true;
        }
        // A whole search costs more than one that ends at `B`: made only when a second edge
        // from `A` asks with the same barriers planned.
        let Some(reach) = self.reach(e.a, e.scope, e.carried, planned) else {
            return self.search_covered(e, planned, stops);
        };
        let covered = {
            let open = self.entries(b).iter().any(|p| reach.reached.binary_search(p).is_ok());
            // Where the whole search stopped at a planned barrier: the stops of one that ends
            // at `B` are among them.
            stops.extend_from_slice(&reach.stops);
            !open
        };
        if self.check_searches || cfg!(debug_assertions) {
            assert_eq!(covered, self.search_covered(e, planned, &mut Vec::new()), "a kept search disagrees on {e:?}");
        }
        covered
    }

    /// [`Ctx::covered_by`], searched for the edge alone.
    fn search_covered(&self, e: &Edge, planned: &Planned, stops: &mut Vec<InstId>) -> bool {
        let (a, b) = (&self.graph.nodes[e.a], &self.graph.nodes[e.b]);
        if self.call_covers(a, e.scope, false) {
            return true;
        }
        let region = &self.graph.regions[a.region];
        let targets = self.entries(b);
        let sources = self.exits(a);
        let n = self.cfg.succ.len();
        // `left`: the path has passed the end of `A` (always, for a node of one step).
        // `carried`: it has taken the back edge of a loop the edge is about (or there is none).
        let carried0 = e.carried.is_none();
        let back = |from: PointId, to: PointId| e.carried.is_some_and(|p| self.shared_back_edge(from, to, p));
        // One mark per point and state (`left`, `carried`). The marks are borrowed for the
        // whole search: nothing it calls searches again.
        let mut seen = self.memo.marks.borrow_mut();
        seen.clear(4 * n);
        let mut stack: Vec<(PointId, bool, bool)> = Vec::new();
        for &(src, past) in &sources {
            let left = a.inner.is_empty() || past;
            stack.extend(self.cfg.succ[src].iter().map(|&q| (q, left, carried0 || back(src, q))));
        }
        while let Some((p, left, carried)) = stack.pop() {
            let left = left || p == a.end;
            if p == region.stop || seen.test_and_set(4 * p + 2 * usize::from(left) + usize::from(carried)) {
                continue;
            }
            if self.planned_at(planned, p, e.scope) {
                stops.extend(self.cfg.point_inst[p]);
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

    /// The starts of nodes (or of the accesses inside scope nodes) that paths from the end
    /// of node `a` reach without passing the end of its region, a barrier `planned` covering
    /// `s`-units or an instruction that orders `s`-units (a written barrier or a
    /// synchronising call); and the instructions whose planned barriers ended a path. With
    /// `carried`, only starts a path reaches after taking the back edge of a loop broader
    /// than `carried` count (the condition of [`Edge::carried`]); the search follows each
    /// point in both states, as [`Ctx::search_covered`] does. This is the search of
    /// [`Ctx::covered_by`] without a target, which passes other nodes' starts as it does.
    ///
    /// A search is kept per node, unit and condition while `planned` changes in ways that
    /// leave it as it was: a barrier added before an instruction whose start it never
    /// visited, or one over units that do not cover `s`; a barrier taken back where no path
    /// of it stopped. It
    /// asks `planned` nothing anywhere else, so it would visit the same points and find the
    /// same (a barrier before a point visited in either state counts as seen). The first
    /// question for a node, unit and condition answers `None`, and the caller searches
    /// for its one edge instead: a whole search costs more than one that ends at `B`, and
    /// pays only when asked again.
    fn reach(&self, a: usize, s: Persp, carried: Option<Persp>, planned: &Planned) -> Option<std::rc::Rc<Reach>> {
        let key = (a, s, carried);
        {
            let mut memo = self.memo.reach.borrow_mut();
            match memo.get_mut(&key) {
                None => {
                    memo.insert(key, None);
                    return None;
                }
                Some(None) => {}
                Some(Some(r)) if r.map == planned.id => {
                    let since = &planned.log[r.agrees.get()..];
                    let same = since.iter().all(|&(inst, scope, added)| {
                        if added {
                            !self.facts.narrower_eq(s, scope) || !r.saw(self.cfg.insts[inst].enter)
                        } else {
                            r.stops.binary_search(&inst).is_err()
                        }
                    });
                    if same {
                        r.agrees.set(planned.log.len());
                        return Some(r.clone());
                    }
                }
                // Made with another map, or changed since: asked once for this state.
                Some(Some(_)) => {
                    memo.insert(key, None);
                    return None;
                }
            }
        }
        let starts = self.memo.starts.get_or_init(|| {
            let mut starts = vec![false; self.cfg.succ.len()];
            for p in self.graph.nodes.iter().flat_map(|node| self.entries(node)) {
                starts[p] = true;
            }
            starts
        });
        let node = &self.graph.nodes[a];
        let region = &self.graph.regions[node.region];
        let sources = self.exits(node);
        let n = self.cfg.succ.len();
        // The points visited in either state, and by state (`2p` before a back edge the
        // condition asks for, `2p + 1` after one; every path counts as after one when there
        // is no condition).
        let mut seen = vec![0u64; n.div_ceil(64)];
        let mut states = vec![0u64; (2 * n).div_ceil(64)];
        let back = |from: PointId, to: PointId| carried.is_some_and(|c| self.shared_back_edge(from, to, c));
        let mut reached = Vec::new();
        let mut stops = Vec::new();
        let mut stack: Vec<(PointId, bool)> = sources
            .iter()
            .flat_map(|&(src, _)| self.cfg.succ[src].iter().map(move |&q| (q, carried.is_none() || back(src, q))))
            .collect();
        while let Some((p, after)) = stack.pop() {
            let state = 2 * p + usize::from(after);
            if p == region.stop || bit(&states, state) {
                continue;
            }
            states[state / 64] |= 1 << (state % 64);
            seen[p / 64] |= 1 << (p % 64);
            // A planned barrier before the instruction at `p` ends the path before it, so
            // that instruction's start is not reached (an instruction that orders by itself
            // still is: it may be `B`).
            if self.planned_at(planned, p, s) {
                stops.extend(self.cfg.point_inst[p]);
                continue;
            }
            if after && starts[p] {
                reached.push(p);
            }
            if self.orders(p, s) {
                continue;
            }
            stack.extend(self.cfg.succ[p].iter().map(|&q| (q, after || back(p, q))));
        }
        reached.sort_unstable();
        stops.sort_unstable();
        stops.dedup();
        let r = std::rc::Rc::new(Reach {
            map: planned.id,
            agrees: std::cell::Cell::new(planned.log.len()),
            reached,
            stops,
            seen,
        });
        self.memo.reach.borrow_mut().insert(key, Some(r.clone()));
        Some(r)
    }

    /// Where paths into node `n` end: its start, or for a scope node the starts of the
    /// accesses inside it.
    fn entries(&self, n: &crate::graph::Node) -> Vec<PointId> {
        if n.inner.is_empty() {
            vec![self.cfg.insts[n.inst].enter]
        } else {
            n.inner.iter().map(|i| self.cfg.insts[i.inst].enter).collect()
        }
    }

    /// Where paths out of node `n` start: its end, or for a scope node the ends of the
    /// accesses inside it (an asynchronous copy's or a wgmma's at its wait, perhaps past
    /// the scope), each with whether it lies past the scope.
    fn exits(&self, n: &crate::graph::Node) -> Vec<(PointId, bool)> {
        if n.inner.is_empty() { vec![(n.end, true)] } else { n.inner.iter().map(|i| (i.end, i.past)).collect() }
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
