//! Barrier motion (seed 003 §5, docs/references.md S.2 item 7): an inferred block barrier becomes
//! a split barrier whose arrive moves up to just after the last access it may order and
//! whose wait moves down to just before the first. Work in between (index arithmetic, loads
//! of read-only inputs into registers) then overlaps with the other threads reaching the
//! barrier instead of waiting behind it.
//!
//! A half moves past an instruction only when the instruction cannot be one of the accesses
//! the barrier orders. A barrier may order more memory than the edge it was placed for (it
//! also covers the edges it happens to lie on), so the test does not look at the barrier's
//! memory: an instruction is passable if it touches no shared or global memory at all, or
//! only reads memory nothing in the function writes (read-only inputs; like inference, this
//! assumes pointer parameters do not alias). What a function writes includes what its
//! calls may write: their writable pointer arguments, and any shared memory when a callee
//! has shared arrays of its own (`written_roots`). Two reads never need ordering, so
//! moving a half past such a read keeps every ordering the barrier gave.
//!
//! A half may enter the body of a `group` or a memory scope (every thread of the block runs
//! those) to reach the first or last access inside; it never enters an `if`, a loop, a
//! `split`, unsafe code or verbatim CUDA, and never leaves the block of instructions the
//! barrier stands in, so both halves are still reached by every thread, once per time the
//! barrier was. Constructs that are passable as a whole are skipped over. Only kernels'
//! block barriers are split: the CUDA backend gives each one an mbarrier in shared memory.
//! When neither half can move, or the halves would have nothing between them but constants
//! and register copies (the split's mbarrier, its initialisation and two instructions would
//! then cost more than the whole barrier), the barrier stays whole.

use prism_ir::MemId;
use prism_ir::ir::{AccessKind, BarrierOrigin, Block, Function, Inst, InstKind, MemKind, Program, ScopeKind};
use prism_types::perspective::Persp;
use prism_types::tir::FnKind;
use std::collections::HashSet;

/// What motion did to a program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MotionReport {
    /// Barriers split into an arrive and a wait.
    pub split: usize,
    /// Barriers left whole (nothing to move past).
    pub kept: usize,
}

/// Splits and moves the inferred block barriers of every kernel.
///
/// Barriers are handled last to first: a half never moves past another barrier, so what
/// handling one changes lies after every earlier barrier, whose paths stay valid.
pub fn motion(p: &mut Program) -> MotionReport {
    let mut report = MotionReport::default();
    let written: Vec<HashSet<Root>> = p.functions.iter().map(|f| written_roots(p, f)).collect();
    for (f, written) in p.functions.iter_mut().zip(&written) {
        if f.kind != FnKind::Kernel {
            continue;
        }
        let mut paths = Vec::new();
        find_barriers(&f.body, &mut Vec::new(), &mut paths);
        let mut next_id = 0;
        for path in paths.into_iter().rev() {
            let (block_path, at) = path.split_at(path.len() - 1);
            let at = at[0].0;
            let cx = Cx { f, written };
            let b = block_at(&f.body, block_path);
            let mut worth = false;
            let arrive = cx.arrive_pos(b, at, &mut worth);
            let wait = cx.wait_pos(b, at + 1, &mut worth);
            // A split barrier costs an mbarrier (initialised in the prologue behind a block
            // barrier) and two instructions instead of one: worth it only when the halves
            // let something with latency run between them, not just a few register moves.
            if !worth {
                report.kept += 1;
                continue;
            }
            let b = block_at_mut(&mut f.body, block_path);
            let inst = b.insts.remove(at);
            let InstKind::Barrier { scope, origin } = inst.kind else { unreachable!("found a barrier") };
            let id = next_id;
            next_id += 1;
            // Positions are relative to the block before the barrier was taken out. Insert
            // the wait first: it comes later, so the arrive's position stays right.
            insert(b, &shift(wait, at), Inst { kind: InstKind::BarrierWait { scope, id }, span: inst.span });
            insert(
                b,
                &shift(arrive, at),
                Inst { kind: InstKind::BarrierArrive { scope, id, origin }, span: inst.span },
            );
            report.split += 1;
        }
    }
    report
}

/// A position inside a block: the path of (instruction, nested block) steps to descend, and
/// the index in the innermost block.
type Pos = (Vec<(usize, usize)>, usize);

struct Cx<'a> {
    f: &'a Function,
    written: &'a HashSet<Root>,
}

/// The memory an access reaches in the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Root {
    /// A pointer parameter (or the view of one).
    Param(MemId),
    /// Any shared memory: shared arrays may reuse each other's bytes, so they count as one.
    Shared,
}

fn root(f: &Function, mut m: MemId) -> Root {
    for _ in 0..f.mems.len() {
        let info = &f.mems[m.index()];
        match (info.kind, info.parent) {
            (MemKind::Param, _) => return Root::Param(m),
            (MemKind::Shared, _) => return Root::Shared,
            (_, Some(p)) => m = p,
            (_, None) => break,
        }
    }
    Root::Shared
}

/// The roots something in the function writes (or may write, through a call).
///
/// A call's pointer arguments are accesses of the call (writes when the parameter is
/// writable), but a callee's own shared arrays, its *footprint*, are not accesses of the
/// caller at all: shared memory counts as written as soon as some callee, directly or
/// through its own calls, has a footprint or writes shared memory. Without that, a kernel
/// whose only shared writes are its callees' took every shared load for a read of
/// read-only memory, and moved a wait past the very read the barrier was placed for (until
/// 2026-11-29, docs/soundness.md §4.3).
fn written_roots(p: &Program, f: &Function) -> HashSet<Root> {
    let writes = f.access_writes();
    let mut written: HashSet<Root> =
        f.accesses.iter().zip(writes).filter(|(_, w)| *w).map(|(a, _)| root(f, a.mem)).collect();
    if !written.contains(&Root::Shared) && callees_write_shared(p, f) {
        written.insert(Root::Shared);
    }
    written
}

/// Whether a function `f` calls (directly or not) may write shared memory other than through
/// `f`'s pointer arguments: it has shared memory of its own, or writes shared memory.
fn callees_write_shared(p: &Program, f: &Function) -> bool {
    let mut seen = HashSet::new();
    let mut stack = Vec::new();
    let calls = |b: &Block, stack: &mut Vec<_>| {
        b.walk(&mut |k| {
            if let InstKind::Call { func, .. } = k {
                stack.push(*func);
            }
        });
    };
    calls(&f.body, &mut stack);
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let g = p.func(id);
        if g.smem_size > 0
            || g.dyn_smem.is_some()
            || g.accesses.iter().zip(g.access_writes()).any(|(a, w)| w && root(g, a.mem) == Root::Shared)
        {
            return true;
        }
        calls(&g.body, &mut stack);
    }
    false
}

impl Cx<'_> {
    /// Whether a half may move past `k`: it reads at most memory nothing writes.
    fn passable(&self, k: &InstKind) -> bool {
        use InstKind::*;
        match k {
            k if k.is_thread_private() => true,
            Load { access, .. } | LoadVec { access, .. } => {
                let a = &self.f.accesses[access.index()];
                a.kind == AccessKind::Read && !self.written.contains(&root(self.f, a.mem))
            }
            If { then, otherwise, .. } => self.all_passable(then) && self.all_passable(otherwise),
            Loop { header, body, latch, .. } => {
                self.all_passable(header) && self.all_passable(body) && self.all_passable(latch)
            }
            Group { body, .. } => self.all_passable(body),
            Scope { kind, body, .. } => *kind != ScopeKind::Async && self.all_passable(body),
            _ => false,
        }
    }

    fn all_passable(&self, b: &Block) -> bool {
        b.insts.iter().all(|i| self.passable(&i.kind))
    }

    /// Where the wait goes: before the first instruction from `start` on that it may not
    /// pass, entering `group`s and memory scopes that are not passable as a whole. Sets
    /// `worth` when it passes work with latency ([`has_latency`]).
    fn wait_pos(&self, b: &Block, start: usize, worth: &mut bool) -> Pos {
        let mut i = start;
        while let Some(inst) = b.insts.get(i) {
            if self.passable(&inst.kind) {
                *worth |= has_latency(&inst.kind);
                i += 1;
                continue;
            }
            if let Some(body) = enterable(&inst.kind) {
                let (mut path, at) = self.wait_pos(body, 0, worth);
                path.insert(0, (i, 0));
                return (path, at);
            }
            break;
        }
        (Vec::new(), i)
    }

    /// Where the arrive goes: after the last instruction before `end` that it may not pass,
    /// entering `group`s and memory scopes that are not passable as a whole. Sets `worth`
    /// like [`Cx::wait_pos`].
    fn arrive_pos(&self, b: &Block, end: usize, worth: &mut bool) -> Pos {
        let mut i = end;
        while i > 0 {
            let inst = &b.insts[i - 1];
            if self.passable(&inst.kind) {
                *worth |= has_latency(&inst.kind);
                i -= 1;
                continue;
            }
            if let Some(body) = enterable(&inst.kind) {
                let (mut path, at) = self.arrive_pos(body, body.insts.len(), worth);
                path.insert(0, (i - 1, 0));
                return (path, at);
            }
            break;
        }
        (Vec::new(), i)
    }
}

/// Whether `k` (or something nested in it) is work worth overlapping with a barrier:
/// anything but setting a register to a constant or another register's value, and
/// declaring a local array.
fn has_latency(k: &InstKind) -> bool {
    match k {
        InstKind::Const { .. } | InstKind::Copy { .. } | InstKind::LocalDecl { .. } => false,
        k if k.blocks().is_empty() => true,
        k => k.blocks().iter().any(|b| b.insts.iter().any(|i| has_latency(&i.kind))),
    }
}

/// The body a half may enter: a `group`'s or a memory scope's.
fn enterable(k: &InstKind) -> Option<&Block> {
    match k {
        InstKind::Group { body, .. } | InstKind::Scope { body, .. } => Some(body),
        _ => None,
    }
}

/// The paths to every inferred block barrier, in document order (the last step of each is
/// the barrier's own index).
fn find_barriers(b: &Block, path: &mut Vec<(usize, usize)>, out: &mut Vec<Vec<(usize, usize)>>) {
    for (i, inst) in b.insts.iter().enumerate() {
        match &inst.kind {
            InstKind::Barrier { scope, origin: BarrierOrigin::Inferred { .. } } if *scope == Persp::BLOCK => {
                let mut p = path.clone();
                p.push((i, 0));
                out.push(p);
            }
            // Inference never places barriers in unsafe code or verbatim bodies.
            InstKind::Unsafe { .. } | InstKind::Verbatim { .. } => {}
            k => {
                for (j, nb) in k.blocks().into_iter().enumerate() {
                    path.push((i, j));
                    find_barriers(nb, path, out);
                    path.pop();
                }
            }
        }
    }
}

fn block_at<'b>(mut b: &'b Block, path: &[(usize, usize)]) -> &'b Block {
    for &(i, j) in path {
        b = b.insts[i].kind.blocks()[j];
    }
    b
}

fn block_at_mut<'b>(mut b: &'b mut Block, path: &[(usize, usize)]) -> &'b mut Block {
    for &(i, j) in path {
        b = b.insts[i].kind.blocks_mut().swap_remove(j);
    }
    b
}

/// A position computed before the instruction at `removed` was taken out of the block.
fn shift(mut p: Pos, removed: usize) -> Pos {
    match p.0.first_mut() {
        Some(step) if step.0 > removed => step.0 -= 1,
        None if p.1 > removed => p.1 -= 1,
        _ => {}
    }
    p
}

fn insert(b: &mut Block, p: &Pos, inst: Inst) {
    let target = block_at_mut(b, &p.0);
    target.insts.insert(p.1, inst);
}
