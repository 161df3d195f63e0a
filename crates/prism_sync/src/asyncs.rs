//! Asynchronous copies: what an `async` scope's copies may write and read while in flight.
//!
//! Every copy an `async` scope issues is in flight until the scope ends (the wait), all at
//! once and unordered: no barrier inside the scope can order them against each other or
//! against the scope's other accesses. Two rules follow, both errors in safe code:
//!
//! - **Destinations are disjoint** (`async-overlap`). Two copies issued by different
//!   threads must not write a common element. Copies issued by one thread (a `split` case
//!   of one thread, or code whose participants are one thread) are one thread's business.
//!   Otherwise the ownership proof of `owner.rs` must show, over every counter of a loop
//!   inside the scope (all iterations are in flight together), that the destinations
//!   `W·u + base + r`, each `bytes / element size` elements wide, never meet.
//! - **Sources are not changed while in flight** (`async-source-write`). The hardware may
//!   read a copy's source at any time until the wait, so nothing inside the scope may write
//!   memory a copy in it reads (a store, an atomic, a writable argument, a callee's shared
//!   memory). A barrier would not help. Writes outside the scope are ordered against the
//!   copy's read by inference, like any other access.
//!
//! Unsafe code is trusted (the simulator reports what it gets wrong).

use crate::Ctx;
use crate::cfg::{FrameKind, InstId};
use crate::graph::{barrier_scope, chain, operands, root, wgmma_shape};
use crate::pending::LateFault;
use prism_ir::ir::{AccessKind, InstKind, IntrArg};
use prism_ir::{MemId, Reg};
use prism_span::Span;
use prism_types::perspective::Persp;

/// What is wrong in an `async` scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsyncFault {
    /// Two threads' copies may write a common element.
    Overlap,
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

/// A copy's destination: the instruction, pointer and index registers, and elements.
struct Dest {
    inst: InstId,
    ptr: Reg,
    index: Reg,
    width: Option<i128>,
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
                for (a, _, _) in operands(self.f, &self.cfg.insts[w].inst.kind) {
                    let access = &self.f.accesses[a.index()];
                    let mem = root(self.f, access.mem);
                    let writes = matches!(access.kind, AccessKind::Write | AccessKind::AsyncWrite | AccessKind::Atomic);
                    if writes && tiles.contains(&mem) {
                        out.push(problem(AsyncFault::WgmmaTileWritten, mem, w));
                    }
                }
                if self.touches(w, &acc) {
                    out.push(problem(AsyncFault::WgmmaAccumulatorUsed, acc.mem, w));
                }
            }
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
        let c0 = self.cfg.frames[base].code;
        let d = self.f.mems[view.index()].persp;
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
            dests.push(Dest { inst: id, ptr: *ptr, index: *index, width });
        }
        let root_of = root(self.f, view);
        // Every iteration of a loop inside the scope is in flight with every other.
        let varying = |l: InstId| self.cfg.inside(l, scope);
        for (j, y) in dests.iter().enumerate() {
            for x in &dests[..=j] {
                let (cx, cy) = (
                    chain(&self.cfg, self.cfg.insts[x.inst].frame, base),
                    chain(&self.cfg, self.cfg.insts[y.inst].frame, base),
                );
                let s = barrier_scope(self.facts, c0, d, &cx, &cy);
                if s == Persp::THREAD {
                    continue;
                }
                let ok = match (x.width, y.width) {
                    (Some(wx), Some(wy)) if x.inst != y.inst && self.apart(x, wx, y, wy) => true,
                    (Some(wx), Some(wy)) => {
                        let sites = [(x.inst, x.ptr, x.index, wx), (y.inst, y.ptr, y.index, wy)];
                        let sites = if x.inst == y.inst { &sites[..1] } else { &sites[..] };
                        self.shape_of(root_of, sites, s, &varying)
                            .is_some_and(|(shape, rests)| self.disjoint(&shape, &rests, s))
                    }
                    _ => false,
                };
                if !ok {
                    out.push(AsyncProblem {
                        fault: AsyncFault::Overlap,
                        mem: root_of,
                        at: self.cfg.insts[y.inst].inst.span,
                        other: self.cfg.insts[x.inst].inst.span,
                    });
                    return;
                }
            }
        }
    }

    fn sources(&self, scope: InstId, out: &mut Vec<AsyncProblem>) {
        // The items the scope's copies read, with the copy.
        let mut reads: Vec<(usize, Span, MemId)> = Vec::new();
        for id in self.cfg.descendants(scope) {
            let info = &self.cfg.insts[id];
            let InstKind::Intrinsic { intrinsic, accesses, .. } = &info.inst.kind else { continue };
            if !intrinsic.is_cp_async() || self.cfg.frames[info.frame].in_unsafe {
                continue;
            }
            for a in accesses.iter().skip(1) {
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
        let span = |d: &Dest, w: i128| -> Option<(i128, i128)> {
            let frame = self.cfg.insts[d.inst].frame;
            let mut reads = Vec::new();
            let off = self.pointer_offset(d.ptr, &mut reads, 0)?;
            let form = self.eval(d.index, frame, &mut reads, 0)?.add(&off, 1)?;
            let (lo, hi) = self.range(&form)?;
            Some((lo, hi + w - 1))
        };
        match (span(x, wx), span(y, wy)) {
            (Some((a0, a1)), Some((b0, b1))) => a1 < b0 || b1 < a0,
            _ => false,
        }
    }
}
