//! Pending wgmma groups, path by path, for the wgmmas of a consumer case that releases its
//! slots one tile late (`with stage(ring, late=True)`, docs/language.md, "Warp-specialised
//! pipelines").
//!
//! Such a case keeps one group in flight from one tile to the next, as CUTLASS's Hopper
//! gemms do: tile `t` issues its wgmmas, commits them and waits with `wgmma_wait(1)`, which
//! completes tile `t - 1`'s group, whose slot the case then releases. The block-structured
//! search of `graph::wgmma_wait_after` cannot see that wait (it is in the next iteration),
//! so these wgmmas are checked by a forward dataflow over the control-flow graph instead,
//! which follows the back edge. Its state, at each program point, over-approximates where
//! the wgmma's instances may still be in flight:
//!
//! - `open`: an instance no `wgmma_commit_group` has closed yet, which no wait completes;
//! - `ages`: the ages of the committed groups that may hold an unfinished instance (age 0
//!   is the newest group), one bit each, the last bit for every age from [`LAST`] on;
//! - `old_open` and `old`: the same for the instances issued in earlier iterations of the
//!   consumer loop, moved there at the top of each iteration.
//!
//! A commit makes every group one older and the open instances a group of age 0; a
//! `wgmma_wait(n)` completes every group of age `n` or more (PTX ISA, `wgmma.wait_group`:
//! all but the `n` newest committed groups). Joins take the union, so a state says "may".
//! Commits and waits in callees are not seen: a missed commit makes the groups look younger
//! and keeps an open instance open, a missed wait leaves groups pending, and each only
//! makes the analysis report more. A wait whose count is not a constant completes nothing.
//!
//! The promises checked, each an error in safe code:
//!
//! 1. *The slot is not released under a running wgmma*: at the end of each iteration of
//!    the consumer loop, where the lowering releases the previous tile's slot, no instance
//!    of an earlier iteration may be pending (`old` and `old_open` empty). The instance of
//!    tile `t` was issued in iteration `t`, so it is complete when tile `t`'s slot is
//!    released at the end of iteration `t + 1` (docs/soundness.md §4.3.2).
//! 2. *The accumulators are not used while the wgmma may write them*: no instruction that
//!    touches the accumulators, other than a wgmma of the same shape, runs where any
//!    instance may be pending (the tile-end store waits with `wgmma_wait(0)` first).
//! 3. *The tiles are not written meanwhile* (stage views are read-only; checked anyway),
//!    and nothing is pending where the function returns (the lowering completes the last
//!    tile with a `wgmma_wait(0)` after the loop).

use crate::Ctx;
use crate::cfg::{FrameKind, InstId, PointId};
use crate::graph::constant;
use prism_ir::MemId;
use prism_ir::ir::{InstKind, IntrArg, ScopeKind};

/// The last age tracked one by one; the bit for it stands for every older age too.
const LAST: u32 = 7;

/// Where the instances of one wgmma may be in flight (see the module's documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct State {
    open: bool,
    ages: u8,
    old_open: bool,
    old: u8,
}

impl State {
    fn any(self) -> bool {
        self.open || self.ages != 0 || self.old_open || self.old != 0
    }

    fn join(self, o: State) -> State {
        State {
            open: self.open || o.open,
            ages: self.ages | o.ages,
            old_open: self.old_open || o.old_open,
            old: self.old | o.old,
        }
    }

    /// `wgmma_commit_group()`: every group one older (the oldest bit keeps its own), the
    /// open instances the newest group.
    fn commit(self) -> State {
        let older = |a: u8, open: bool| (a << 1) | (a & (1 << LAST)) | u8::from(open);
        State { open: false, ages: older(self.ages, self.open), old_open: false, old: older(self.old, self.old_open) }
    }

    /// `wgmma_wait(n)`: the groups of age `n` and more are complete.
    fn wait(self, n: i128) -> State {
        let keep = match u32::try_from(n) {
            Ok(n) if n <= LAST => (1u8 << n).wrapping_sub(1),
            // The last bit may stand for an age below `n`: keep everything.
            _ => u8::MAX,
        };
        State { ages: self.ages & keep, old: self.old & keep, ..self }
    }

    /// The top of an iteration of the consumer loop: what is in flight is now earlier
    /// iterations' business.
    fn turn(self) -> State {
        State { open: false, ages: 0, old_open: self.old_open || self.open, old: self.old | self.ages }
    }
}

/// What the analysis found wrong with one late wgmma.
pub(crate) enum LateFault {
    /// This instruction touches the accumulators while an instance may be pending.
    Used(InstId),
    /// This instruction writes a tile while an instance may read it.
    Written(InstId, MemId),
    /// An instance may still be pending where its slot is released, or at the return.
    Unwaited,
}

impl Ctx<'_> {
    /// The consumer loop of the wgmma at `id`, when every tile it reads (`reads`: the
    /// memory names of its read accesses) is a view of a `stage(ring, late=True)` around
    /// it: the loop the lowering of the warp-specialised pipeline made for the stage's
    /// case, whose iterations are the tiles and at the end of whose body the lowering
    /// releases the previous tile's slot. That is the outermost loop between the stage and
    /// the pipeline's own scope over the ring (`ScopeKind::Pipeline`, whose view is the
    /// memory the stage's slot is taken from): the lowering puts nothing but the case of
    /// the split between the two, while the case's body may hold loops of its own, nested
    /// splits among them, which are not the tile loop (a late stage in a `for` of a nested
    /// split's case was once taken for one, and the release checked at that loop's end;
    /// `tests/ui/reject/rules/wgmma-unwaited_5.prism`). `None` when the tiles are not all
    /// late stages of one such loop: the wgmma is then checked as any other, waited for
    /// in its own block, which is sound for a slot released at any later point.
    pub(crate) fn late_loop(&self, id: InstId, reads: &[MemId]) -> Option<InstId> {
        let late_views: Vec<(MemId, MemId, usize)> = self
            .cfg
            .ancestors(self.cfg.insts[id].frame)
            .filter_map(|a| match self.cfg.frames[a].kind {
                FrameKind::Scope { kind: ScopeKind::LateStage, mem, view } => Some((view, mem, a)),
                _ => None,
            })
            .collect();
        let mut consumer = None;
        for &m in reads {
            let mut at = Some(m);
            let (ring, frame) = loop {
                let x = at?;
                if let Some(&(_, ring, frame)) = late_views.iter().find(|(v, _, _)| *v == x) {
                    break (ring, frame);
                }
                at = self.f.mems[x.index()].parent;
            };
            let lp = self.tile_loop(frame, ring)?;
            if consumer.is_some_and(|c| c != lp) {
                return None;
            }
            consumer = Some(lp);
        }
        consumer
    }

    /// The outermost loop around `frame` inside the pipeline scope whose view is `ring`.
    fn tile_loop(&self, frame: usize, ring: MemId) -> Option<InstId> {
        let mut outermost = None;
        for a in self.cfg.ancestors(frame) {
            match self.cfg.frames[a].kind {
                FrameKind::Loop => outermost = self.cfg.frames[a].owner,
                FrameKind::Scope { kind: ScopeKind::Pipeline, view, .. } if view == ring => return outermost,
                _ => {}
            }
        }
        None
    }

    /// The faults of the late wgmma at `id` in consumer loop `lp`, with accumulators `acc`
    /// and tiles `tiles` (root memory names).
    pub(crate) fn late_faults(
        &self,
        id: InstId,
        lp: InstId,
        acc: &crate::asyncs::Acc,
        tiles: &[MemId],
    ) -> Vec<LateFault> {
        let cfg = &self.cfg;
        let turn_at = cfg.insts[lp].cond;
        let mut state: Vec<Option<State>> = vec![None; cfg.succ.len()];
        state[cfg.entry] = Some(State::default());
        let mut work: Vec<PointId> = vec![cfg.entry];
        while let Some(p) = work.pop() {
            let Some(s) = state[p] else { continue };
            let out = if Some(p) == turn_at { s.turn() } else { self.step(p, s, id) };
            for &q in &cfg.succ[p] {
                let joined = state[q].map_or(out, |old| old.join(out));
                if state[q] != Some(joined) {
                    state[q] = Some(joined);
                    work.push(q);
                }
            }
        }
        let mut faults = Vec::new();
        for (w, info) in cfg.insts.iter().enumerate() {
            if info.enter != info.exit || w == id {
                continue;
            }
            if !state[info.enter].is_some_and(State::any) {
                continue;
            }
            if self.touches(w, acc) {
                faults.push(LateFault::Used(w));
            }
            if !cfg.frames[info.frame].in_unsafe
                && let Some(mem) = self.tile_written(w, tiles)
            {
                faults.push(LateFault::Written(w, mem));
            }
        }
        // The end of the loop body, where the lowering releases the previous tile's slot:
        // the first point of the latch (the body falls into it, and `continue` jumps there).
        let latch = cfg.insts[lp].children.get(2).and_then(|&l| cfg.frames[l].insts.first());
        let released = latch.map(|&l| state[cfg.insts[l].enter]);
        let early = match released {
            Some(Some(s)) => s.old_open || s.old != 0,
            // An end that is never reached releases nothing.
            Some(None) => false,
            // No latch to stand for the release: nothing is proved.
            None => true,
        };
        if early || state[cfg.exit].is_some_and(State::any) {
            faults.push(LateFault::Unwaited);
        }
        faults
    }

    /// The state after point `p` for the wgmma at `id`: the effect of the instruction that
    /// runs at `p` (only instructions without nested blocks run at a single point).
    fn step(&self, p: PointId, s: State, id: InstId) -> State {
        let Some(w) = self.cfg.point_inst[p] else { return s };
        let info = &self.cfg.insts[w];
        if info.enter != p || info.exit != p {
            return s;
        }
        if w == id {
            return State { open: true, ..s };
        }
        let InstKind::Intrinsic { intrinsic, args, .. } = &info.inst.kind else { return s };
        match intrinsic.sig().name {
            "wgmma_commit_group" => s.commit(),
            "wgmma_wait" => match args.first() {
                Some(IntrArg::Val(r)) => constant(&self.cfg, &self.defs, *r).map_or(s, |n| s.wait(n)),
                _ => s,
            },
            _ => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::State;

    #[test]
    fn commits_age_groups_and_waits_complete_the_old_ones() {
        let s = State { open: true, ..State::default() };
        // wgmma; commit: one group of age 0; wait(1) keeps it, wait(0) completes it.
        let c = s.commit();
        assert_eq!(c.ages, 0b1);
        assert!(c.wait(1).any());
        assert!(!c.wait(0).any());
        // A second commit ages it to 1: wait(1) completes it now.
        assert!(!c.commit().wait(1).any());
        // Without a commit the instance stays open through any wait.
        assert!(s.wait(0).open);
    }

    #[test]
    fn the_oldest_bit_stands_for_every_older_age() {
        let mut s = State { open: true, ..State::default() }.commit();
        for _ in 0..20 {
            s = s.commit();
        }
        assert_eq!(s.ages, 0x80);
        // A wait for 7 or fewer completes it; one for more cannot tell, so keeps it.
        assert!(!s.wait(7).any());
        assert!(s.wait(8).any());
        assert!(s.wait(-1).any());
    }

    #[test]
    fn a_turn_makes_the_pending_instances_old() {
        let s = State { open: true, ..State::default() }.commit().turn();
        assert_eq!((s.ages, s.old), (0, 1));
        // The next iteration's commit and wait(1) complete the earlier iteration's group.
        let next = State { open: true, ..s }.commit();
        assert_eq!((next.ages, next.old), (1, 2));
        let done = next.wait(1);
        assert_eq!((done.ages, done.old), (1, 0));
        // A wait(1) with no commit in the iteration does not.
        assert_eq!(s.wait(1).old, 1);
    }
}
