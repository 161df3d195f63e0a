//! Asynchronous copies: what an `async` scope's copies may write and read while in flight.
//!
//! Every copy an `async` scope issues is in flight until the scope ends (the wait), all at
//! once and unordered: no barrier inside the scope can order them against each other or
//! against the scope's other accesses. Two rules follow, both errors in safe code:
//!
//! - **Destinations are disjoint** (`async-overlap`). Two copies issued by different
//!   threads must not write a common element: unless the participants are one thread (a
//!   `split` case of one thread, or code whose participants are one thread), the ownership
//!   proof of `owner.rs` must show, over every counter of a loop inside the scope (all
//!   iterations are in flight together), that the destinations `W·u + base + r`, each
//!   `bytes / element size` elements wide, never meet. And the copies *one* thread has in
//!   flight together (different instructions, or one instruction in different iterations
//!   of a loop inside the scope) must not write a common element either: PTX orders the
//!   writes of one `cp.async` among themselves but not against another `cp.async` of the
//!   same thread that no wait separates, so the bytes would be whichever landed last
//!   (`Ctx::one_thread`). A pipeline's fill is such a scope for one tile, while the copies
//!   of the tiles before may still be in flight in the other slots: where the proof leans
//!   on the slot being one value (one thread's several copies, or several threads' copies
//!   in a warp-specialised fill, whose producer threads need not be at one tile), each copy
//!   must also provably stay inside the slot (`Ctx::in_slot`).
//! - **Sources are not changed while in flight** (`async-source-write`). The hardware may
//!   read a copy's source at any time until the wait, so nothing inside the scope may write
//!   memory a copy in it reads (a store, an atomic, a writable argument, a callee's shared
//!   memory, a TMA store into the tensor map a TMA load reads: one thread's two bulk copies
//!   are not ordered with each other). A barrier would not help. Writes outside the scope are ordered against the
//!   copy's read by inference, like any other access.
//!
//! Unsafe code is trusted (the simulator reports what it gets wrong).

use crate::Ctx;
use crate::cfg::{FrameId, FrameKind, InstId};
use crate::graph::{Elem, barrier_scope, chain, operands, root, wgmma_shape};
use crate::owner::{Affine, Term};
use crate::pending::LateFault;
use prism_ir::ir::{AccessKind, InstKind, IntrArg};
use prism_ir::{MemId, Reg};
use prism_span::Span;
use prism_types::perspective::Persp;
use std::collections::BTreeMap;

/// What is wrong in an `async` scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsyncFault {
    /// Two threads' copies may write a common element.
    Overlap,
    /// Two copies one thread has in flight together (two instructions, or two iterations
    /// of a loop inside the scope) may write a common element.
    OverlapOneThread,
    /// A copy in a pipeline's fill that one thread issues with others (or, in a
    /// warp-specialised fill, one of several threads' copies) may leave the slot, where
    /// copies of the tiles before may still be in flight.
    OutsideSlot,
    /// Memory a copy reads is written inside the scope.
    SourceWritten,
    /// A wgmma that no later wait completes on every path (`graph::wgmma_wait_after`).
    WgmmaUnwaited,
    /// A wgmma read through `stage(ring, late=True)` that may still be in flight where its
    /// case releases the slot, at the end of the next tile's iteration (`pending.rs`).
    WgmmaLateUnwaited,
    /// A tile a wgmma reads is written before the wait that completes it.
    WgmmaTileWritten,
    /// A wgmma's accumulators are read or written, other than by a wgmma of the same shape,
    /// before the wait that completes it.
    WgmmaAccumulatorUsed,
    /// No `wgmma_fence()` precedes a wgmma on every path.
    WgmmaUnfenced,
    /// A wgmma's accumulators are touched between the nearest `wgmma_fence()` and it.
    WgmmaTouchedBeforeFence,
}

/// A wgmma's accumulators: the memory its access names, the thread-local array it is (when
/// it is one), and the wgmma's shape (whose wgmmas may accumulate into it meanwhile).
pub(crate) struct Acc {
    pub mem: MemId,
    local: Option<prism_ir::LocalId>,
    shape: Option<(&'static str, i128)>,
}

/// Why a wgmma is not fenced (`Ctx::unfenced`).
enum Unfenced {
    /// No `wgmma_fence()` precedes it on every path.
    NoFence,
    /// This instruction touches its accumulators after the nearest fence.
    Touched(InstId),
}

/// One problem found, as spans: the later access and the earlier one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AsyncProblem {
    pub fault: AsyncFault,
    pub mem: MemId,
    pub at: Span,
    pub other: Span,
}

/// A copy's destination: the instruction, pointer and index registers, elements, and the
/// bytes of one element.
struct Dest {
    inst: InstId,
    ptr: Reg,
    index: Reg,
    width: Option<i128>,
    elem: i128,
    /// The frames from the code the copies are compared from down to the copy
    /// ([`Ctx::destinations`]), for `barrier_scope`.
    chain: Vec<Elem>,
}

/// One copy as the thread that issues it sees it: each time it is issued inside the scope,
/// its destination is `fixed + c + Σ k·i`, `width` elements from there on, where `fixed`
/// holds the terms that keep their value for one thread while the scope runs (its `id()`s,
/// counters of loops around the scope, the pipeline's slot) and `i` runs over the values
/// of the counter of each loop inside the scope around the copy (`k` = 0 when the index
/// does not read it: the copy is issued again to the same place).
struct Issue {
    fixed: BTreeMap<Term, i128>,
    c: i128,
    /// `(k, lo, hi, step)`: the counter takes the values `lo, lo + step, …, hi`.
    loops: Vec<(i128, i128, i128, i128)>,
    width: i128,
}

/// The most destinations [`Ctx::one_thread`] lists for one pair of copies; a thread has at
/// most a few thousand copies of 16 bytes in flight in the shared memory there is.
const MAX_ISSUES: u128 = 1 << 16;

impl Issue {
    /// How many times the copy is issued in the scope (counting every iteration).
    fn times(&self) -> Option<u128> {
        self.loops.iter().try_fold(1u128, |n, &(_, lo, hi, step)| {
            n.checked_mul(u128::try_from((hi - lo) / step).ok()?.checked_add(1)?)
        })
    }

    /// The least and greatest value of `c + Σ k·i`.
    fn span(&self) -> Option<(i128, i128)> {
        self.loops.iter().try_fold((self.c, self.c), |(lo, hi), &(k, a, b, _)| {
            let (x, y) = (k.checked_mul(a)?, k.checked_mul(b)?);
            Some((lo.checked_add(x.min(y))?, hi.checked_add(x.max(y))?))
        })
    }

    /// Whether the issues of the copy never meet each other, by the radix argument: with
    /// the counters that take more than one value ordered by `|k|·step`, each one's step
    /// `|k|·step` is at least the reach `Σ |k|·(hi − lo)` of the ones before it plus the
    /// width. Two different iterations then differ, at the last counter in that order where
    /// they differ, by at least its step less the reach before it: by `width` or more (the
    /// counters are the digits of a mixed-radix number).
    fn nested(&self) -> bool {
        let mut moving: Vec<(i128, i128)> = self
            .loops
            .iter()
            .filter(|l| l.1 != l.2)
            .map(|&(k, lo, hi, step)| (k.abs() * step, k.abs() * (hi - lo)))
            .collect();
        moving.sort_unstable();
        let mut reach = 0i128;
        for (step, extent) in moving {
            if step < reach + self.width {
                return false;
            }
            reach += extent;
        }
        true
    }

    /// Every destination's first element `c + Σ k·i` (relative to `fixed`), when there are
    /// at most [`MAX_ISSUES`].
    fn starts(&self) -> Option<Vec<i128>> {
        if self.times()? > MAX_ISSUES {
            return None;
        }
        let mut out = vec![self.c];
        for &(k, lo, hi, step) in &self.loops {
            let values: Vec<i128> = (0..=(hi - lo) / step).map(|m| k * (lo + m * step)).collect();
            out = out.iter().flat_map(|&s| values.iter().map(move |&v| s + v)).collect();
        }
        Some(out)
    }
}

/// Whether intervals `(start, width)` are pairwise disjoint.
fn disjoint_intervals(mut v: Vec<(i128, i128)>) -> bool {
    v.sort_unstable();
    v.windows(2).all(|p| p[0].0 + p[0].1 <= p[1].0)
}

impl Ctx<'_> {
    /// The problems of every `async` scope of the function.
    pub(crate) fn async_problems(&self) -> Vec<AsyncProblem> {
        let mut out = Vec::new();
        for (id, info) in self.cfg.insts.iter().enumerate() {
            if self.cfg.frames[info.frame].in_unsafe {
                continue;
            }
            // A pipeline's copies are in flight across its whole loop: nothing in it may
            // write what they read.
            if let InstKind::Scope { kind: prism_ir::ir::ScopeKind::Pipeline, .. } = &info.inst.kind {
                self.sources(id, &mut out);
                continue;
            }
            let InstKind::Scope { kind: prism_ir::ir::ScopeKind::Async, view, .. } = &info.inst.kind else { continue };
            self.destinations(id, *view, &mut out);
            self.sources(id, &mut out);
        }
        self.wgmmas(&mut out);
        out
    }

    /// `wgmma.mma_async` reads its shared tiles until a `wgmma.wait_group` completes its
    /// group. Inference orders the tiles' later writes after the first wait that completes
    /// the wgmma, in its own block or after the loops around it (`graph::wgmma_wait_after`:
    /// a commit must close its group first, and nothing may skip the commit or the wait),
    /// so safe code must have one there, and must not write the tiles before it, in those
    /// loops included (no barrier could order that write after the tensor cores' reads).
    ///
    /// The wgmma also writes its accumulators asynchronously, until the same wait: a read
    /// before it may see the old value or the new one, a write may be overwritten (PTX ISA,
    /// `wgmma.mma_async`: the accumulators may not be accessed until the wait). So nothing
    /// in the same interval may touch the accumulator array but a wgmma of the same shape,
    /// whose accesses to it the hardware orders after the first's (PTX ISA, `wgmma.fence`:
    /// accumulator accesses across wgmma instructions of the same shape are ordered).
    ///
    /// And before the wgmma, a `wgmma_fence()` must order the thread's own accesses to the
    /// accumulators (their declaration, which zeroes them, included) before the tensor
    /// cores' (PTX ISA, `wgmma.fence`: required before the first wgmma and between any
    /// register access and a wgmma that accesses the same registers): on every path to the
    /// wgmma, a fence in its block or an enclosing one, with nothing between them (loops
    /// crossed on the way whole) touching the accumulators but wgmmas of the same shape.
    fn wgmmas(&self, out: &mut Vec<AsyncProblem>) {
        for (id, info) in self.cfg.insts.iter().enumerate() {
            let InstKind::Intrinsic { intrinsic, accesses, .. } = &info.inst.kind else { continue };
            if !intrinsic.is_wgmma() || self.cfg.frames[info.frame].in_unsafe {
                continue;
            }
            // The tiles: the memory names of its read operands (`a`, `b`), and their roots.
            let reads: Vec<MemId> = accesses
                .iter()
                .filter(|a| self.f.accesses[a.index()].kind == AccessKind::Read)
                .map(|a| self.f.accesses[a.index()].mem)
                .collect();
            let tiles: Vec<MemId> = reads.iter().map(|&m| root(self.f, m)).collect();
            let acc = self.accumulators(id);
            let Some(&first) = tiles.first() else { continue };
            let problem = |fault, mem, at: InstId| AsyncProblem {
                fault,
                mem,
                at: self.cfg.insts[at].inst.span,
                other: info.inst.span,
            };
            match self.unfenced(id, &acc) {
                Some(Unfenced::NoFence) => out.push(problem(AsyncFault::WgmmaUnfenced, acc.mem, id)),
                Some(Unfenced::Touched(w)) => out.push(problem(AsyncFault::WgmmaTouchedBeforeFence, acc.mem, w)),
                None => {}
            }
            // Read through `stage(ring, late=True)`: its case keeps groups in flight from one
            // tile to the next, which only a dataflow around the loop can follow.
            if let Some(lp) = self.late_loop(id, &reads) {
                for fault in self.late_faults(id, lp, &acc, &tiles) {
                    out.push(match fault {
                        LateFault::Used(w) => problem(AsyncFault::WgmmaAccumulatorUsed, acc.mem, w),
                        LateFault::Written(w, mem) => problem(AsyncFault::WgmmaTileWritten, mem, w),
                        LateFault::Unwaited => problem(AsyncFault::WgmmaLateUnwaited, first, id),
                    });
                }
                continue;
            }
            let Some((from, wait)) = crate::graph::wgmma_wait_after(&self.cfg, &self.defs, id) else {
                out.push(problem(AsyncFault::WgmmaUnwaited, first, id));
                continue;
            };
            // Every instruction that may run between the wgmma and its wait: the rest of
            // its block, and all of each loop the wait is after (their next iterations).
            for w in (from..wait).filter(|&w| w != id) {
                if let Some(mem) = self.tile_written(w, &tiles) {
                    out.push(problem(AsyncFault::WgmmaTileWritten, mem, w));
                }
                if self.touches(w, &acc) {
                    out.push(problem(AsyncFault::WgmmaAccumulatorUsed, acc.mem, w));
                }
            }
        }
    }

    /// The memory through which instruction `w` changes bytes of one of a wgmma's `tiles`
    /// (their roots), if it does: a write, copy or atomic through any name whose bytes
    /// overlap a tile's, or a call whose callee's own shared arrays (its footprint) do.
    /// Shared arrays of sequential scopes share bytes, and a callee's start at the caller's
    /// current offset, so a tile's name is not enough: review R49 found an array of an
    /// earlier scope in the loop body, a callee's scratch and a TMA copy overwriting a tile
    /// whose wgmma waited after the loop.
    pub(crate) fn tile_written(&self, w: InstId, tiles: &[MemId]) -> Option<MemId> {
        let items: Vec<usize> = tiles.iter().filter_map(|&m| self.graph.item(self.f, m)).collect();
        let hits = |it: usize| items.iter().any(|&t| self.graph.overlap(t, it));
        let kind = &self.cfg.insts[w].inst.kind;
        for (a, _, _) in operands(self.f, kind) {
            let access = &self.f.accesses[a.index()];
            let mem = root(self.f, access.mem);
            let writes = matches!(access.kind, AccessKind::Write | AccessKind::AsyncWrite | AccessKind::Atomic);
            if writes && (tiles.contains(&mem) || self.graph.item(self.f, mem).is_some_and(hits)) {
                return Some(mem);
            }
        }
        match self.graph.footprint_of.get(&w) {
            Some(&it) if hits(it) => tiles.first().copied(),
            _ => None,
        }
    }

    /// The accumulators of the wgmma at `id`.
    fn accumulators(&self, id: InstId) -> Acc {
        let kind = &self.cfg.insts[id].inst.kind;
        let InstKind::Intrinsic { accesses, .. } = kind else { unreachable!("a wgmma is an intrinsic") };
        // The memory `acc` names (the first operand, so the first access), and the
        // thread-local array it is, when it is one (read and written by local loads and
        // stores, which name the array rather than the memory).
        let mem = root(self.f, self.f.accesses[accesses[0].index()].mem);
        let local = kind.uses().first().and_then(|&r| self.local_of(r));
        Acc { mem, local, shape: wgmma_shape(&self.cfg, &self.defs, kind) }
    }

    /// Whether instruction `w` reads or writes the accumulators `acc`, other than as a wgmma
    /// of the same (known) shape accumulating into them, which the hardware orders. Unsafe
    /// code is trusted (the simulator checks its uses at run time, `wgmma-pending`).
    pub(crate) fn touches(&self, w: InstId, acc: &Acc) -> bool {
        if self.cfg.frames[self.cfg.insts[w].frame].in_unsafe {
            return false;
        }
        let k = &self.cfg.insts[w].inst.kind;
        if acc.shape.is_some() && wgmma_shape(&self.cfg, &self.defs, k) == acc.shape {
            return false;
        }
        let through_memory =
            operands(self.f, k).into_iter().any(|(a, _, _)| root(self.f, self.f.accesses[a.index()].mem) == acc.mem);
        let Some(local) = acc.local else { return through_memory };
        through_memory
            || match k {
                InstKind::LocalLoad { local: l, .. }
                | InstKind::LocalStore { local: l, .. }
                | InstKind::LocalDecl { local: l }
                | InstKind::AssertUniformLocal { local: l, .. } => *l == local,
                _ => k.uses().into_iter().any(|r| self.local_of(r) == Some(local)),
            }
    }

    /// Why the wgmma at `id` is not fenced: no `wgmma_fence()` precedes it on every path (in
    /// its block or an enclosing one), or an instruction between the nearest one and the
    /// wgmma touches its accumulators (the loops crossed on the way count whole: their
    /// later iterations run before the wgmma's next issue).
    fn unfenced(&self, id: InstId, acc: &Acc) -> Option<Unfenced> {
        let mut crossed: Vec<InstId> = Vec::new();
        let (mut frame, mut at) = (self.cfg.insts[id].frame, id);
        loop {
            let fence = (0..at).rev().find(|&w| {
                self.cfg.insts[w].frame == frame
                    && matches!(&self.cfg.insts[w].inst.kind,
                        InstKind::Intrinsic { intrinsic, .. } if intrinsic.sig().name == "wgmma_fence")
            });
            if let Some(fence) = fence {
                let between = (fence + 1..id).chain(crossed.iter().flat_map(|&l| self.cfg.descendants(l)));
                return between.filter(|&w| w != id).find(|&w| self.touches(w, acc)).map(Unfenced::Touched);
            }
            let fr = &self.cfg.frames[frame];
            let Some(owner) = fr.owner else { return Some(Unfenced::NoFence) };
            if fr.kind == FrameKind::Loop {
                crossed.push(owner);
            }
            (frame, at) = (self.cfg.insts[owner].frame, owner);
        }
    }

    /// The thread-local array a pointer register points into, when every definition of it
    /// takes that array's address (through offsets and copies).
    fn local_of(&self, r: Reg) -> Option<prism_ir::LocalId> {
        let mut r = r;
        for _ in 0..self.cfg.insts.len() {
            let [d] = self.defs.get(&r).map(Vec::as_slice)? else { return None };
            match &self.cfg.insts[*d].inst.kind {
                InstKind::LocalAddr { local, .. } => return Some(*local),
                InstKind::PtrOffset { base, .. } => r = *base,
                InstKind::Copy { src, .. } => r = *src,
                _ => return None,
            }
        }
        None
    }

    fn destinations(&self, scope: InstId, view: MemId, out: &mut Vec<AsyncProblem>) {
        let base = self.cfg.insts[scope].children[0];
        let d = self.f.mems[view.index()].persp;
        // A scope opened in code narrower than its memory (`async(s)` in thread code, `s` a
        // block's array) is opened by every unit of that code that reaches it, and their
        // copies land in the same memory together. Comparing them from the scope's own code
        // took every pair for one thread's and proved nothing across threads (review R62).
        // Such copies are compared from the nearest code at the memory's perspective
        // instead, through the frames between (`outer`): a `group` there replicates the
        // scope over its units, so the proof spans the memory's unit, while a `split` case
        // keeps it to the case's units (only they open the scope).
        // Where no enclosing code is at the memory's perspective, every frame up to the
        // function's body is walked, which can only widen the unit compared over.
        let (c0, outer) = if self.facts.narrower_eq(d, self.cfg.frames[base].code) {
            (self.cfg.frames[base].code, Vec::new())
        } else {
            let at = self.cfg.insts[scope].frame;
            let top = self.cfg.ancestors(at).find(|&a| self.facts.narrower_eq(d, self.cfg.frames[a].code));
            let top = top.unwrap_or_else(|| self.cfg.ancestors(at).last().unwrap_or(at));
            (d, chain(&self.cfg, at, top))
        };
        let mut dests = Vec::new();
        for id in self.cfg.descendants(scope) {
            let info = &self.cfg.insts[id];
            if self.cfg.frames[info.frame].in_unsafe {
                continue;
            }
            let InstKind::Intrinsic { intrinsic, args, accesses, .. } = &info.inst.kind else { continue };
            if !intrinsic.is_cp_async() && !intrinsic.is_tma() {
                continue;
            }
            let (Some(IntrArg::Elem { ptr, index }), Some(a)) = (args.first(), accesses.first()) else { continue };
            // Copies into other memory belong to the scope of their own view (nested `async`
            // scopes, or a pipeline filling two rings), which checks them; memory names
            // alive at once have disjoint bytes.
            if root(self.f, self.f.accesses[a.index()].mem) != root(self.f, view) {
                continue;
            }
            // A zero-filling copy writes all its bytes too (the zeros); a typed TMA map's
            // box writes its elements from the destination on, swizzled among themselves,
            // and an untyped one has no width here.
            let width = crate::graph::width(self.f, &self.cfg, &self.defs, &info.inst.kind);
            let elem = i128::from(self.f.mems[self.f.accesses[a.index()].mem.index()].elem.size().max(1));
            let chain = [outer.as_slice(), &chain(&self.cfg, info.frame, base)].concat();
            dests.push(Dest { inst: id, ptr: *ptr, index: *index, width, elem, chain });
        }
        let root_of = root(self.f, view);
        // Every iteration of a loop inside the scope is in flight with every other.
        let varying = |l: InstId| self.cfg.inside(l, scope);
        // A warp-specialised producer's threads need not be at one tile: one may fill the
        // next slot while another's copies of this tile are in flight. The proof below
        // compares copies of one tile only (the slot term is one base for both), so copies
        // of several threads there must also stay inside the slot, as one thread's several
        // copies must in any fill ([`Ctx::one_thread`]).
        let specialised = self.specialised_fill(scope, view);
        for (j, y) in dests.iter().enumerate() {
            for x in &dests[..=j] {
                let s = barrier_scope(self.facts, c0, d, &x.chain, &y.chain);
                // One thread's copies are checked against each other below.
                if s == Persp::THREAD {
                    continue;
                }
                let ok = match (x.width, y.width) {
                    (Some(wx), Some(wy)) if x.inst != y.inst && self.apart(x, wx, y, wy) => true,
                    (Some(wx), Some(wy)) => {
                        let sites = [
                            (x.inst, x.ptr, crate::owner::Index::Reg(x.index), wx),
                            (y.inst, y.ptr, crate::owner::Index::Reg(y.index), wy),
                        ];
                        let sites = if x.inst == y.inst { &sites[..1] } else { &sites[..] };
                        self.shape_of(root_of, sites, s, &varying)
                            .is_some_and(|(shape, rests)| self.disjoint(&shape, &rests, s))
                    }
                    _ => false,
                };
                let problem = |fault, at: &Dest, other: &Dest| AsyncProblem {
                    fault,
                    mem: root_of,
                    at: self.cfg.insts[at.inst].inst.span,
                    other: self.cfg.insts[other.inst].inst.span,
                };
                if !ok {
                    out.push(problem(AsyncFault::Overlap, y, x));
                    return;
                }
                if specialised && !(self.in_slot(x) && self.in_slot(y)) {
                    let (at, other) = if self.in_slot(y) { (x, y) } else { (y, x) };
                    out.push(problem(AsyncFault::OutsideSlot, at, other));
                    return;
                }
            }
        }
        if let Some((x, y, fault)) = self.one_thread(scope, view, &dests) {
            out.push(AsyncProblem {
                fault,
                mem: root_of,
                at: self.cfg.insts[y].inst.span,
                other: self.cfg.insts[x].inst.span,
            });
        }
    }

    /// Two copies of `dests` (the later one second) that one thread may have in flight
    /// together with destinations not provably disjoint, if any, with the fault: the same
    /// copy issued in two iterations of a loop inside the scope, or two copies that one
    /// thread can both issue (not in different cases of one `split`, nor in the two branches
    /// of an `if` that the thread takes the same way throughout the scope,
    /// [`Ctx::exclusive`]).
    ///
    /// For one thread, the terms of [`Issue::fixed`] have one value throughout the scope,
    /// so two copies with the same fixed terms meet exactly when their rests `c + Σ k·i`,
    /// each over its width, do: proved by the radix argument ([`Issue::nested`]) or by
    /// listing them ([`Issue::starts`]). Copies whose fixed terms differ are apart only when
    /// the difference of their destinations, over every value of every term, keeps them
    /// apart by the widths.
    ///
    /// In a pipeline's fill (`view` the slot of a ring), the thread's copies of the tiles
    /// before may still be in flight too, in the other slots: the fill has no wait of its
    /// own (a plain pipeline waits `S - 2` groups behind, a warp-specialised producer only
    /// for the consumers to release the slot it fills). So a thread's several issues there,
    /// two copies or one copy in several iterations, are apart only when each also provably
    /// stays inside its slot ([`Ctx::in_slot`]): then no copy of another tile, in another
    /// slot, can meet one (`AsyncFault::OutsideSlot` otherwise). One copy issued once that
    /// may leave its slot stays the bounds exception the simulator reports
    /// (docs/soundness.md §8, `tests/ui/run/checks/slot_bounds.prism`).
    fn one_thread(&self, scope: InstId, view: MemId, dests: &[Dest]) -> Option<(InstId, InstId, AsyncFault)> {
        let issues: Vec<Option<Issue>> = dests.iter().map(|d| self.issue(scope, d)).collect();
        let parent = self.f.mems[view.index()].parent;
        let fill = parent.is_some_and(|p| self.f.mems[p.index()].kind == prism_ir::ir::MemKind::Pipeline);
        let slotted = |d: &Dest| !fill || self.in_slot(d);
        // Each copy against its own other issues.
        for (d, i) in dests.iter().zip(&issues) {
            let alone = match i {
                Some(i) if i.times() == Some(1) => true,
                Some(i) => {
                    let apart = i.nested()
                        || i.starts()
                            .is_some_and(|v| disjoint_intervals(v.into_iter().map(|s| (s, i.width)).collect()));
                    if apart && !slotted(d) {
                        return Some((d.inst, d.inst, AsyncFault::OutsideSlot));
                    }
                    apart
                }
                // Not analysable: fine only when it is issued once.
                None => self
                    .loops_around(scope, d.inst)
                    .is_some_and(|ls| ls.iter().all(|&l| self.counter(l).is_some_and(|c| c.lo == c.hi))),
            };
            if !alone {
                return Some((d.inst, d.inst, AsyncFault::OverlapOneThread));
            }
        }
        for (j, y) in dests.iter().enumerate() {
            for (i, x) in dests[..j].iter().enumerate() {
                if self.exclusive(scope, x.inst, y.inst) {
                    continue;
                }
                let apart = match (&issues[i], &issues[j]) {
                    (Some(a), Some(b)) => self.issues_apart(a, b),
                    _ => false,
                };
                if !apart {
                    return Some((x.inst, y.inst, AsyncFault::OverlapOneThread));
                }
                // The copy that may leave the slot second, where the diagnostic points.
                if !slotted(y) {
                    return Some((x.inst, y.inst, AsyncFault::OutsideSlot));
                }
                if !slotted(x) {
                    return Some((y.inst, x.inst, AsyncFault::OutsideSlot));
                }
            }
        }
        None
    }

    /// Whether copy `d`, whose pointer is a pipeline slot's view, lies inside the slot every
    /// time it is issued: its index through the view, over every value of its terms, is at
    /// least 0 and leaves the copy's width before the slot's end. A copy through any other
    /// pointer, of no known width, or with an index the affine forms do not follow is not
    /// known to.
    fn in_slot(&self, d: &Dest) -> bool {
        let Some(width) = d.width.filter(|&w| w > 0) else { return false };
        let Some(slot) = self.slot_bytes(d.ptr) else { return false };
        let Some((lo, hi)) = self.index_range(d) else { return false };
        let end = hi.checked_add(width).and_then(|e| e.checked_mul(d.elem));
        lo >= 0 && end.is_some_and(|e| e <= slot)
    }

    /// The least and greatest index of copy `d` through its pointer where it runs, over
    /// every value of its terms ([`Ctx::range_at`]), when the affine forms follow it.
    fn index_range(&self, d: &Dest) -> Option<(i128, i128)> {
        let mut reads = Vec::new();
        let form = self.eval(d.index, self.cfg.insts[d.inst].frame, &mut reads, 0)?;
        // A counter's range holds inside its loop's body only.
        self.reads_inside(&reads).then(|| self.range_at(&form, d.inst))?
    }

    /// Whether the `async` scope at `scope` over `view` is the fill of a warp-specialised
    /// pipeline: `view` a slot of a ring, and the pipeline's loop around the scope one case's
    /// ([`Ctx::pipeline_counter`]).
    fn specialised_fill(&self, scope: InstId, view: MemId) -> bool {
        let parent = self.f.mems[view.index()].parent;
        if !parent.is_some_and(|p| self.f.mems[p.index()].kind == prism_ir::ir::MemKind::Pipeline) {
            return false;
        }
        self.cfg
            .ancestors(self.cfg.insts[scope].frame)
            .filter_map(|f| self.cfg.frames[f].owner)
            .find(|&o| matches!(self.cfg.insts[o].inst.kind, InstKind::Loop { .. }) && self.is_pipeline_loop(o))
            .is_some_and(|l| matches!(self.cfg.frames[self.cfg.insts[l].frame].kind, FrameKind::Case { .. }))
    }

    /// The bytes of the slot a pointer register is the view of: a `ptradd` that bounds its
    /// accesses to one slot (`InstKind::PtrOffset::bound`), through copies.
    fn slot_bytes(&self, r: Reg) -> Option<i128> {
        let d = self.slot_def(r)?;
        let InstKind::PtrOffset { bound: Some((n, s)), .. } = &self.cfg.insts[d].inst.kind else { return None };
        i128::from(*n).checked_mul(i128::from(s.size()))
    }

    /// The `ptradd` that makes the slot view a pointer register is ([`Ctx::slot_bytes`]).
    fn slot_def(&self, mut r: Reg) -> Option<InstId> {
        for _ in 0..64 {
            let [d] = self.defs.get(&r)?.as_slice() else { return None };
            match &self.cfg.insts[*d].inst.kind {
                InstKind::PtrOffset { bound: Some(_), .. } => return Some(*d),
                InstKind::Copy { src, .. } => r = *src,
                _ => return None,
            }
        }
        None
    }

    /// Whether the issues of two different copies never meet (each copy's own issues are
    /// already known apart).
    fn issues_apart(&self, a: &Issue, b: &Issue) -> bool {
        // The destinations' difference `a − b`, over every value: apart when it is at least
        // `b`'s width or at most minus `a`'s.
        let mut diff = Affine::default();
        for (t, &k) in &a.fixed {
            diff.terms.insert(*t, k);
        }
        let Some(diff) = diff.add(&Affine { terms: b.fixed.clone(), c: 0 }, -1) else { return false };
        let (Some((flo, fhi)), Some((alo, ahi)), Some((blo, bhi))) = (self.range(&diff), a.span(), b.span()) else {
            return false;
        };
        let (Some(lo), Some(hi)) = (
            flo.checked_add(alo).and_then(|v| v.checked_sub(bhi)),
            fhi.checked_add(ahi).and_then(|v| v.checked_sub(blo)),
        ) else {
            return false;
        };
        if lo >= b.width || hi <= -a.width {
            return true;
        }
        // With the same fixed terms, which cancel for one thread, list the destinations.
        if a.fixed != b.fixed {
            return false;
        }
        match (a.starts(), b.starts()) {
            (Some(x), Some(y)) if (x.len() + y.len()) as u128 <= MAX_ISSUES => disjoint_intervals(
                x.into_iter().map(|s| (s, a.width)).chain(y.into_iter().map(|s| (s, b.width))).collect(),
            ),
            _ => false,
        }
    }

    /// The copy `d` of the scope at `scope` as its thread sees it ([`Issue`]), when its
    /// destination is affine, its width known, and every loop around it inside the scope
    /// counted (constant bounds).
    fn issue(&self, scope: InstId, d: &Dest) -> Option<Issue> {
        let width = d.width.filter(|&w| w > 0)?;
        let loops = self.loops_around(scope, d.inst)?;
        let counters: Vec<crate::owner::Counter> = loops.iter().map(|&l| self.counter(l)).collect::<Option<_>>()?;
        let frame = self.cfg.insts[d.inst].frame;
        let mut reads = Vec::new();
        let off = self.pointer_offset(d.ptr, &mut reads, 0)?;
        let form = self.eval(d.index, frame, &mut reads, 0)?.add(&off, 1)?;
        let mut coef = vec![0i128; loops.len()];
        let mut fixed = BTreeMap::new();
        for (t, k) in form.terms {
            // A counter's range holds inside its loop's body only (after the loop it has
            // one more value, which [`Ctx::range`] does not count).
            if let Term::Iv(l) = t {
                let body = self.cfg.insts[l].children[1];
                reads.iter().all(|&(m, at)| m != l || self.cfg.frame_within(at, body)).then_some(())?;
            }
            match t {
                Term::Iv(l) if let Some(p) = loops.iter().position(|&m| m == l) => coef[p] = k,
                // A counter of a loop inside the scope that is not around the copy (its
                // value after the loop), the slot of a pipeline inside the scope, or a
                // partition's index: not fixed, and not one of the copy's iterations.
                Term::Iv(l) | Term::Ring(l, _) if self.cfg.inside(l, scope) => return None,
                Term::Sym => return None,
                _ => {
                    fixed.insert(t, k);
                }
            }
        }
        let loops = coef
            .into_iter()
            .zip(counters)
            .map(|(k, c)| {
                // Keep the sums of products far from overflow.
                let small = k.checked_mul(c.lo)?.abs() < 1 << 60 && k.checked_mul(c.hi)?.abs() < 1 << 60;
                small.then_some((k, c.lo, c.hi, c.step))
            })
            .collect::<Option<Vec<_>>>()?;
        (form.c.abs() < 1 << 60).then_some(Issue { fixed, c: form.c, loops, width })
    }

    /// The loops inside the scope at `scope` around instruction `inst`, innermost first;
    /// `None` when `inst` is not inside it.
    fn loops_around(&self, scope: InstId, inst: InstId) -> Option<Vec<InstId>> {
        let mut out = Vec::new();
        for f in self.cfg.ancestors(self.cfg.insts[inst].frame) {
            let fr = &self.cfg.frames[f];
            let Some(owner) = fr.owner else { break };
            if owner == scope {
                return Some(out);
            }
            if fr.kind == FrameKind::Loop {
                if !matches!(self.cfg.insts[owner].inst.kind, InstKind::Loop { .. }) {
                    return None;
                }
                out.push(owner);
            }
        }
        None
    }

    /// Whether no thread of the scope at `scope` issues both instructions: they lie in
    /// cases of one `split` whose units do not meet (a thread's unit, hence its case, is
    /// the same every time it reaches the split), or in the two branches of one `if` whose
    /// condition keeps its value while the scope runs (so a thread takes the same branch
    /// every time it reaches the `if`, and reaches it once when no loop inside the scope
    /// repeats it).
    fn exclusive(&self, scope: InstId, a: InstId, b: InstId) -> bool {
        // The innermost instruction around both, and the sub-block each lies in.
        let owners = |i: InstId| -> Vec<(InstId, FrameId)> {
            self.cfg
                .ancestors(self.cfg.insts[i].frame)
                .filter_map(|f| self.cfg.frames[f].owner.map(|o| (o, f)))
                .collect()
        };
        let (oa, ob) = (owners(a), owners(b));
        let Some(&(at, fa)) = oa.iter().find(|(o, _)| ob.iter().any(|(p, _)| p == o)) else { return false };
        let Some(&(_, fb)) = ob.iter().find(|(p, _)| *p == at) else { return false };
        if fa == fb {
            return false;
        }
        match (self.cfg.frames[fa].kind, self.cfg.frames[fb].kind, &self.cfg.insts[at].inst.kind) {
            (FrameKind::Case { offset: x, count: n }, FrameKind::Case { offset: y, count: m }, _) => {
                x.saturating_add(n) <= y || y.saturating_add(m) <= x
            }
            (FrameKind::Branch { .. }, FrameKind::Branch { .. }, InstKind::If { cond, .. }) => {
                // Reached once per scope outside loops; inside them, with one condition.
                self.loops_around(scope, at).is_some_and(|loops| loops.is_empty() || self.invariant(*cond, &loops, 0))
            }
            _ => false,
        }
    }

    /// Whether register `r` has the same value in every iteration of `loops`: defined once,
    /// outside them or inside by arithmetic on such values.
    fn invariant(&self, r: Reg, loops: &[InstId], depth: u32) -> bool {
        let Some([d]) = self.defs.get(&r).map(Vec::as_slice) else { return false };
        if !loops.iter().any(|&l| self.cfg.inside(*d, l)) {
            return true;
        }
        let kind = &self.cfg.insts[*d].inst.kind;
        depth < 64
            && matches!(
                kind,
                InstKind::Const { .. }
                    | InstKind::Copy { .. }
                    | InstKind::Cast { .. }
                    | InstKind::Unary { .. }
                    | InstKind::Binary { .. }
                    | InstKind::Select { .. }
            )
            && kind.uses().into_iter().all(|u| self.invariant(u, loops, depth + 1))
    }

    fn sources(&self, scope: InstId, out: &mut Vec<AsyncProblem>) {
        // The items the scope's copies read, with the copy.
        let mut reads: Vec<(usize, Span, MemId)> = Vec::new();
        for id in self.cfg.descendants(scope) {
            let info = &self.cfg.insts[id];
            let InstKind::Intrinsic { intrinsic, accesses, .. } = &info.inst.kind else { continue };
            if self.cfg.frames[info.frame].in_unsafe {
                continue;
            }
            // A `cp.async` reads its source operand; a TMA load reads its tensor map's
            // array, which a TMA store of the kernel may write (its mbarrier operand, if
            // any, is not a source).
            let sources: Vec<prism_ir::AccessId> = if intrinsic.is_cp_async() {
                accesses.iter().skip(1).copied().collect()
            } else if intrinsic.is_tma() {
                operands(self.f, &info.inst.kind)
                    .into_iter()
                    .filter(|&(_, ptr, _)| matches!(self.f.reg_ty(ptr), prism_ir::ir::Type::TensorMap(_)))
                    .map(|(a, _, _)| a)
                    .collect()
            } else {
                continue;
            };
            for a in sources {
                let acc = &self.f.accesses[a.index()];
                if let Some(item) = self.graph.item(self.f, acc.mem) {
                    reads.push((item, info.inst.span, root(self.f, acc.mem)));
                }
            }
        }
        if reads.is_empty() {
            return;
        }
        for id in self.cfg.descendants(scope) {
            let info = &self.cfg.insts[id];
            if self.cfg.frames[info.frame].in_unsafe {
                continue;
            }
            let mut written: Vec<usize> = operands(self.f, &info.inst.kind)
                .into_iter()
                .map(|(a, _, _)| &self.f.accesses[a.index()])
                .filter(|acc| !matches!(acc.kind, AccessKind::Read | AccessKind::Volatile))
                .filter_map(|acc| self.graph.item(self.f, acc.mem))
                .collect();
            written.extend(self.graph.footprint_of.get(&id));
            for w in written {
                if let Some(&(_, copy, mem)) = reads.iter().find(|(r, _, _)| self.graph.overlap(*r, w)) {
                    out.push(AsyncProblem { fault: AsyncFault::SourceWritten, mem, at: info.inst.span, other: copy });
                    return;
                }
            }
        }
    }

    /// Whether two different copies' destinations lie in ranges of elements that do not
    /// meet, whatever thread issues them (a single thread's tail copy past the others').
    fn apart(&self, x: &Dest, wx: i128, y: &Dest, wy: i128) -> bool {
        // An empty copy would make an empty interval, apart from anything (review R21 F1).
        if wx < 1 || wy < 1 {
            return false;
        }
        // Two copies through one pipeline slot's view, each provably inside the slot: a
        // copy of another tile lies in another slot (docs/soundness.md §4.3.2, "Several
        // copies per slot"), so only copies of one tile can meet, and their slot offset is
        // the same: the indices through the view decide, over every value of their terms
        // where each copy runs. Until 2026-11-30 the slot's offset was counted in, over
        // every slot, and two one-thread cases of a split that fill the two halves of a
        // slot were refused.
        // The view's offset must be the ring's slot alone (`(k % S) * slot`, as lowering
        // makes it), the same for every thread at one tile.
        let ring_only = |d: &Dest| {
            let mut reads = Vec::new();
            self.pointer_offset(d.ptr, &mut reads, 0)
                .is_some_and(|f| f.terms.keys().all(|t| matches!(t, crate::owner::Term::Ring(..))))
        };
        if let (Some(sx), Some(sy)) = (self.slot_def(x.ptr), self.slot_def(y.ptr))
            && sx == sy
            && ring_only(x)
            && self.in_slot(x)
            && self.in_slot(y)
        {
            let within = |d: &Dest, w: i128| self.index_range(d).map(|(lo, hi)| (lo, hi + w - 1));
            if let (Some((a0, a1)), Some((b0, b1))) = (within(x, wx), within(y, wy))
                && (a1 < b0 || b1 < a0)
            {
                return true;
            }
        }
        let span = |d: &Dest, w: i128| -> Option<(i128, i128)> {
            let frame = self.cfg.insts[d.inst].frame;
            let mut reads = Vec::new();
            let off = self.pointer_offset(d.ptr, &mut reads, 0)?;
            let form = self.eval(d.index, frame, &mut reads, 0)?.add(&off, 1)?;
            let (lo, hi) = self.range(&form).filter(|_| self.reads_inside(&reads))?;
            Some((lo, hi + w - 1))
        };
        match (span(x, wx), span(y, wy)) {
            (Some((a0, a1)), Some((b0, b1))) => a1 < b0 || b1 < a0,
            _ => false,
        }
    }
}
