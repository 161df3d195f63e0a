//! What a caller may assume about the barriers inside a callee.
//!
//! Functions are analysed on their own, callees first: each starts with its memory already
//! synchronised by its caller, and a call appears in the caller as a node for every memory it
//! touches (its pointer arguments and its shared footprint). That alone would make a caller
//! put a barrier between two calls of `block_sum` that reuse the same shared bytes, although
//! `block_sum` ends with `__syncthreads()` for exactly that reason. So after a callee's
//! barriers are known, its [`Summary`] records, per memory ([`Key`]), which barrier scopes lie
//! on every path from its entry to the first use of that memory (`entry`) and on every path
//! from its last use to its return (`exit`), and which lie on every path through it
//! (`through`). The caller counts those barriers like its own.

use crate::Ctx;
use crate::cfg::{InstId, PointId};
use crate::graph::{operands, root};
use crate::paths::Planned;
use prism_ir::ir::{AccessKind, InstKind, MemKind};
use prism_types::perspective::{Facts, Persp};
use std::collections::HashMap;

/// A memory of a function as its callers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    /// Its shared memory (its own arrays and its callees' footprints).
    Smem,
    /// Its `n`-th pointer parameter.
    Param(usize),
}

/// Which barrier scopes are known to lie on every path in question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Cover {
    /// There is no such path: the memory is never used.
    All,
    /// Barriers over units of these perspectives lie on every path.
    Scopes(Vec<Persp>),
}

impl Cover {
    /// Whether the barriers cover participants inside one `s`-unit.
    pub fn covers(&self, facts: Facts, s: Persp) -> bool {
        match self {
            Cover::All => true,
            Cover::Scopes(v) => v.iter().any(|&e| facts.narrower_eq(s, e)),
        }
    }
}

/// The barriers of a function, as its callers may count them.
#[derive(Clone, Debug)]
pub(crate) struct Summary {
    /// Scopes of barriers on every path from entry to return.
    pub through: Cover,
    entry: HashMap<Key, Cover>,
    exit: HashMap<Key, Cover>,
    /// Per pointer parameter, the elements (least and greatest index) its accesses touch,
    /// where bounded ([`Ctx::param_ranges`]).
    ranges: HashMap<usize, (i128, i128)>,
}

impl Summary {
    /// Barriers before the first use of `key`.
    pub fn entry(&self, key: Key) -> &Cover {
        self.entry.get(&key).unwrap_or(&Cover::All)
    }

    /// Barriers after the last use of `key`.
    pub fn exit(&self, key: Key) -> &Cover {
        self.exit.get(&key).unwrap_or(&Cover::All)
    }

    /// The elements of its `n`-th pointer parameter the function touches, if bounded.
    pub fn range(&self, n: usize) -> Option<(i128, i128)> {
        self.ranges.get(&n).copied()
    }
}

impl Ctx<'_> {
    /// Summarises this function with its planned barriers.
    pub(crate) fn summarise(&self, planned: &Planned) -> Summary {
        let mut candidates: Vec<Persp> = Vec::new();
        let mut add = |p: Persp| {
            if !candidates.contains(&p) {
                candidates.push(p);
            }
        };
        for v in planned.values() {
            v.iter().copied().for_each(&mut add);
        }
        for info in &self.cfg.insts {
            match &info.inst.kind {
                InstKind::Barrier { scope, .. } => add(*scope),
                InstKind::Call { func, .. } => {
                    if let Some(Cover::Scopes(v)) = self.summaries[func.index()].as_ref().map(|s| &s.through) {
                        v.iter().copied().for_each(&mut add);
                    }
                }
                _ => {}
            }
        }
        let through = Cover::Scopes(
            candidates
                .iter()
                .copied()
                .filter(|&e| !self.reaches(&[self.cfg.entry], planned, e, true, &|_| None))
                .collect(),
        );
        let mut keys: HashMap<Key, Vec<InstId>> = HashMap::new();
        let params: Vec<_> = (0..self.f.mems.len())
            .filter(|&i| self.f.mems[i].kind == MemKind::Param)
            .map(|i| prism_ir::MemId(i as u32))
            .collect();
        for (id, info) in self.cfg.insts.iter().enumerate() {
            for (a, _, _) in operands(self.f, &info.inst.kind) {
                let acc = &self.f.accesses[a.index()];
                if acc.kind == AccessKind::Volatile {
                    continue;
                }
                let r = root(self.f, acc.mem);
                let key = match self.f.mems[r.index()].kind {
                    MemKind::Shared => Key::Smem,
                    MemKind::Param => Key::Param(params.iter().position(|&m| m == r).unwrap_or(usize::MAX)),
                    _ => continue,
                };
                keys.entry(key).or_default().push(id);
            }
            if self.graph.footprint_of.contains_key(&id) {
                keys.entry(Key::Smem).or_default().push(id);
            }
        }
        let mut entry = HashMap::new();
        let mut exit = HashMap::new();
        for (key, mut users) in keys {
            users.dedup();
            // A use at a call is covered on its near side when the callee synchronises there.
            let callee_cover = |id: InstId, e: Persp, at_entry: bool| -> bool {
                let InstKind::Call { func, .. } = &self.cfg.insts[id].inst.kind else { return false };
                let Some(sum) = self.summaries[func.index()].as_ref() else { return false };
                self.callee_keys(id, key).iter().all(|&k| {
                    let c = if at_entry { sum.entry(k) } else { sum.exit(k) };
                    c.covers(self.facts, e)
                })
            };
            let at: HashMap<PointId, InstId> = users.iter().map(|&u| (self.cfg.insts[u].enter, u)).collect();
            let ent: Vec<Persp> = candidates
                .iter()
                .copied()
                .filter(|&e| {
                    let hit = |p: PointId| at.get(&p).map(|&u| !callee_cover(u, e, true));
                    !self.reaches(&[self.cfg.entry], planned, e, false, &hit)
                })
                .collect();
            let ex: Vec<Persp> = candidates
                .iter()
                .copied()
                .filter(|&e| {
                    let sources: Vec<PointId> = users
                        .iter()
                        .filter(|&&u| !callee_cover(u, e, false))
                        .flat_map(|&u| self.cfg.succ[self.cfg.insts[u].exit].iter().copied())
                        .collect();
                    !self.reaches(&sources, planned, e, true, &|_| None)
                })
                .collect();
            entry.insert(key, Cover::Scopes(ent));
            exit.insert(key, Cover::Scopes(ex));
        }
        Summary { through, entry, exit, ranges: self.param_ranges(&params) }
    }

    /// The callee's keys that a call's use of this function's `key` stands for.
    fn callee_keys(&self, call: InstId, key: Key) -> Vec<Key> {
        let kind = &self.cfg.insts[call].inst.kind;
        let mut out = Vec::new();
        if key == Key::Smem && self.graph.footprint_of.contains_key(&call) {
            out.push(Key::Smem);
        }
        for (n, (a, _, _)) in operands(self.f, kind).into_iter().enumerate() {
            let r = root(self.f, self.f.accesses[a.index()].mem);
            let mine = match (self.f.mems[r.index()].kind, key) {
                (MemKind::Shared, Key::Smem) => true,
                (MemKind::Param, Key::Param(k)) => {
                    self.f.mems.iter().take(r.index()).filter(|m| m.kind == MemKind::Param).count() == k
                }
                _ => false,
            };
            if mine {
                out.push(Key::Param(n));
            }
        }
        out
    }

    /// Whether a path from `sources` that passes no barrier over `e` reaches the function's
    /// exit (when `to_exit`) or a point where `hit` says `Some(true)`; `Some(false)` ends a
    /// path there as covered.
    fn reaches(
        &self,
        sources: &[PointId],
        planned: &Planned,
        e: Persp,
        to_exit: bool,
        hit: &dyn Fn(PointId) -> Option<bool>,
    ) -> bool {
        let mut seen = vec![false; self.cfg.succ.len()];
        let mut stack: Vec<PointId> = sources.to_vec();
        while let Some(p) = stack.pop() {
            if seen[p] {
                continue;
            }
            seen[p] = true;
            if p == self.cfg.exit {
                if to_exit {
                    return true;
                }
                continue;
            }
            if self.planned_at(planned, p, e) {
                continue;
            }
            match hit(p) {
                Some(true) => return true,
                Some(false) => continue,
                None => {}
            }
            if self.orders(p, e) {
                continue;
            }
            stack.extend(self.cfg.succ[p].iter().copied());
        }
        false
    }
}
