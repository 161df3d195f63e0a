//! Register reallocation (`setmaxnreg_inc`/`setmaxnreg_dec`): what PTX requires of it that
//! the checker's per-call rules (a constant multiple of 8 from 24 to 256, executed by a whole
//! warpgroup) do not see.
//!
//! The PTX ISA says that after a `setmaxnreg` all warps of the warpgroup must synchronise
//! explicitly before any of them executes another, and that `.dec` lowers the per-thread
//! register count from its current value and `.inc` raises it. Prism has no way to write that
//! synchronisation, so a thread may reach at most one reallocation in a kernel: none inside a
//! loop (every iteration would reallocate again; a warp-specialised pipeline's case prologue
//! is lowered before its loop and runs once), and at most one on any path through a function
//! and its callees. The count before that one reallocation is then the kernel's count at
//! entry: at most the cap `__launch_bounds__(n, 1)` gives (65,536 registers over `n` threads
//! rounded up to warps, in steps of 8, at most 255), and what ptxas gives a kernel that
//! reallocates is the smaller of the cap and its largest `setmaxnreg_inc` ([`direction`]).
//! A `setmaxnreg_dec(r)` above that count cannot lower it, and a `setmaxnreg_inc(r)` below
//! it would lower it: both are refused. The argument is in docs/soundness.md §2.

use prism_ir::ir::{Block, Function, InstKind, IntrArg, Program};
use prism_ir::{FuncId, Reg};
use prism_span::Span;
use prism_types::tir::{ConstValue, FnKind};
use std::collections::HashMap;

/// What is wrong with a reallocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReallocFault {
    /// A reallocation (or a call that reallocates) inside a loop.
    InLoop,
    /// A second reallocation on one path, `other` the first.
    Twice,
    /// A kernel that reallocates (itself or through a call) without a register cap at
    /// entry: no `@launch_bounds(n)` (`min_blocks` `None`), or one that allows more than one
    /// block per multiprocessor (`min_blocks` that count). ptxas ignores `setmaxnreg` then,
    /// and the CUDA backend refuses the kernel, so the checker refuses it first (review
    /// R49: `prism check` and `prism run` accepted kernels `prism build` refused).
    Bounds {
        /// The launch bound's second number, when it has one above 1.
        min_blocks: Option<u64>,
    },
    /// `setmaxnreg_dec(regs)` above the register count at entry, or `setmaxnreg_inc(regs)`
    /// below it.
    Direction {
        /// The count asked for.
        regs: u32,
        /// The count at entry.
        cap: u32,
        /// Whether it is `setmaxnreg_inc`.
        inc: bool,
    },
}

/// One problem found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReallocIssue {
    /// The function.
    pub func: FuncId,
    /// What is wrong.
    pub fault: ReallocFault,
    /// The reallocation (or the call reaching one).
    pub at: Span,
    /// The loop around it, or the earlier reallocation on the same path.
    pub other: Option<Span>,
}

/// The register cap at entry of a kernel launched with at most `threads` threads per block
/// and one block per multiprocessor: the register file's 65,536 registers over the block's
/// warps, allocated per thread in steps of 8, at most 255 (the most a thread can name).
pub fn entry_cap(threads: u64) -> u32 {
    let warps = threads.div_ceil(32).max(1);
    let per_thread = 65_536 / (warps * 32);
    (per_thread / 8 * 8).min(255) as u32
}

/// The problems of every function of `p`.
pub fn check(p: &Program) -> Vec<ReallocIssue> {
    let mut counts: HashMap<usize, u32> = HashMap::new();
    let mut out = Vec::new();
    for (i, f) in p.functions.iter().enumerate() {
        let mut w = Walk { p, func: FuncId(i as u32), counts: &mut counts, out: &mut out };
        w.block(&f.body, None, &mut None);
        if f.kind != FnKind::Kernel {
            continue;
        }
        let mut all = Vec::new();
        reallocs(p, i, &mut vec![false; p.functions.len()], &mut all);
        let Some(first) = all.first() else { continue };
        let bad = match (f.launch_bounds, f.min_blocks) {
            (None, _) => Some(None),
            (Some(_), Some(m)) if m != 1 => Some(Some(m)),
            _ => None,
        };
        if let Some(min_blocks) = bad {
            out.push(ReallocIssue {
                func: FuncId(i as u32),
                fault: ReallocFault::Bounds { min_blocks },
                at: f.span,
                other: Some(first.at),
            });
        } else if let Some(threads) = f.launch_bounds {
            direction(p, i, entry_cap(threads), &mut out);
        }
    }
    out
}

/// A kernel's reallocations that cannot move the register count the way they say. The
/// count at entry is at most the cap; ptxas (nvcc 13.0) gives a kernel that reallocates
/// the smaller of the cap and its largest `setmaxnreg_inc` (or the cap when it has none:
/// `crates/prism_gpu/tests/hopper_sass.rs` checks this on every such kernel of the corpus).
/// So a `dec` above that count cannot lower it, and an `inc` below it (a smaller `inc` than
/// another of the kernel's, under the cap) would lower it.
fn direction(p: &Program, kernel: usize, cap: u32, out: &mut Vec<ReallocIssue>) {
    let mut all = Vec::new();
    let mut seen = vec![false; p.functions.len()];
    reallocs(p, kernel, &mut seen, &mut all);
    let entry = entry_of(&all, cap);
    for r in all {
        if (r.inc && r.regs < entry) || (!r.inc && r.regs > entry) {
            out.push(ReallocIssue {
                func: r.func,
                fault: ReallocFault::Direction { regs: r.regs, cap: entry, inc: r.inc },
                at: r.at,
                other: None,
            });
        }
    }
}

fn entry_of(all: &[Realloc], cap: u32) -> u32 {
    all.iter().filter(|r| r.inc).map(|r| r.regs).max().map_or(cap, |m| m.min(cap))
}

/// The register count each thread of kernel `kernel` starts with, when it reallocates
/// registers and has a launch bound: the count [`direction`] assumes, which the SASS test
/// compares with what ptxas reports.
pub fn entry_count(p: &Program, kernel: usize) -> Option<u32> {
    let f = &p.functions[kernel];
    let (FnKind::Kernel, Some(threads)) = (f.kind, f.launch_bounds) else { return None };
    let mut all = Vec::new();
    reallocs(p, kernel, &mut vec![false; p.functions.len()], &mut all);
    (!all.is_empty()).then(|| entry_of(&all, entry_cap(threads)))
}

/// One reallocation with a constant count.
struct Realloc {
    func: FuncId,
    inc: bool,
    regs: u32,
    at: Span,
}

/// The reallocations of function `fid` and its callees, each function once.
fn reallocs(p: &Program, fid: usize, seen: &mut [bool], out: &mut Vec<Realloc>) {
    if std::mem::replace(&mut seen[fid], true) {
        return;
    }
    let f: &Function = &p.functions[fid];
    let consts = consts(&f.body);
    let mut calls = Vec::new();
    walk_insts(&f.body, &mut |inst| match &inst.kind {
        InstKind::Intrinsic { intrinsic, args, .. } if is_realloc(intrinsic.sig().name) => {
            if let Some(IntrArg::Val(r)) = args.first()
                && let Some(&regs) = consts.get(r)
            {
                let regs = regs.clamp(0, u32::MAX as i128) as u32;
                out.push(Realloc {
                    func: FuncId(fid as u32),
                    inc: intrinsic.sig().name == "setmaxnreg_inc",
                    regs,
                    at: inst.span,
                });
            }
        }
        InstKind::Call { func, .. } => calls.push(func.index()),
        _ => {}
    });
    for c in calls {
        reallocs(p, c, seen, out);
    }
}

/// Visits every instruction of `b`, nested ones included.
fn walk_insts(b: &Block, visit: &mut dyn FnMut(&prism_ir::ir::Inst)) {
    for inst in &b.insts {
        visit(inst);
        for sub in inst.kind.blocks() {
            walk_insts(sub, visit);
        }
    }
}

/// How many reallocations a thread running `f` may reach on one path (callees included).
fn count_of(p: &Program, fid: usize, counts: &mut HashMap<usize, u32>) -> u32 {
    if let Some(&c) = counts.get(&fid) {
        return c;
    }
    // Recursion is refused by the checker; a cycle here would only mean a program the
    // checker already refused.
    counts.insert(fid, 0);
    let c = max_path(p, &p.functions[fid].body, counts);
    counts.insert(fid, c);
    c
}

/// The most reallocations on one path through `b` (sequential statements add up, branches
/// take the larger; a loop's body counts once, since a loop holding one is refused anyway).
fn max_path(p: &Program, b: &Block, counts: &mut HashMap<usize, u32>) -> u32 {
    let mut n = 0u32;
    for inst in &b.insts {
        n = n.saturating_add(match &inst.kind {
            InstKind::Intrinsic { intrinsic, .. } if is_realloc(intrinsic.sig().name) => 1,
            InstKind::Call { func, .. } => count_of(p, func.index(), counts),
            InstKind::If { then, otherwise, .. } => max_path(p, then, counts).max(max_path(p, otherwise, counts)),
            InstKind::Split { cases, .. } => cases.iter().map(|c| max_path(p, &c.body, counts)).max().unwrap_or(0),
            k => k.blocks().into_iter().map(|sub| max_path(p, sub, counts)).sum(),
        });
    }
    n
}

fn is_realloc(name: &str) -> bool {
    name == "setmaxnreg_inc" || name == "setmaxnreg_dec"
}

/// The constant registers of a body.
fn consts(b: &Block) -> HashMap<Reg, i128> {
    let mut out = HashMap::new();
    b.walk(&mut |k| {
        if let InstKind::Const { dst, value: ConstValue::Int(v) } = k {
            out.insert(*dst, *v);
        }
    });
    out
}

struct Walk<'a> {
    p: &'a Program,
    func: FuncId,
    counts: &'a mut HashMap<usize, u32>,
    out: &'a mut Vec<ReallocIssue>,
}

impl Walk<'_> {
    /// Walks `b` inside the loop `in_loop` (if any), `last` the reallocation the path has
    /// already passed. Returns false when every path through `b` returns from the function
    /// (a branch that reallocates and returns leaves nothing after it to reallocate again).
    fn block(&mut self, b: &Block, in_loop: Option<Span>, last: &mut Option<Span>) -> bool {
        for inst in &b.insts {
            if matches!(inst.kind, InstKind::Return { .. }) {
                return false;
            }
            let reaches = match &inst.kind {
                InstKind::Intrinsic { intrinsic, .. } if is_realloc(intrinsic.sig().name) => true,
                InstKind::Call { func, .. } => count_of(self.p, func.index(), self.counts) > 0,
                _ => false,
            };
            if reaches {
                if let Some(l) = in_loop {
                    self.push(ReallocFault::InLoop, inst.span, Some(l));
                } else if let Some(first) = *last {
                    self.push(ReallocFault::Twice, inst.span, Some(first));
                }
                *last = Some(inst.span);
                continue;
            }
            match &inst.kind {
                InstKind::Loop { header, body, latch, .. } => {
                    let here = in_loop.or(Some(inst.span));
                    // A loop holding a reallocation is refused whatever came before it; the
                    // path after it counts the loop's reallocation once.
                    let mut inner = *last;
                    for sub in [header, body, latch] {
                        self.block(sub, here, &mut inner);
                    }
                    *last = inner;
                }
                InstKind::If { then, otherwise, .. } => {
                    let (mut a, mut b2) = (*last, *last);
                    let on_a = self.block(then, in_loop, &mut a);
                    let on_b = self.block(otherwise, in_loop, &mut b2);
                    if !on_a && !on_b {
                        return false;
                    }
                    // Only the branches that go on carry their reallocation onwards.
                    *last = [(on_a, a), (on_b, b2)].into_iter().filter(|&(on, _)| on).find_map(|(_, l)| l).or(*last);
                }
                InstKind::Split { cases, .. } => {
                    let mut any = *last;
                    for c in cases {
                        let mut mine = *last;
                        if self.block(&c.body, in_loop, &mut mine) {
                            any = any.or(mine);
                        }
                    }
                    *last = any;
                }
                k => {
                    for sub in k.blocks() {
                        if !self.block(sub, in_loop, last) && !matches!(k, InstKind::Loop { .. }) {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    fn push(&mut self, fault: ReallocFault, at: Span, other: Option<Span>) {
        self.out.push(ReallocIssue { func: self.func, fault, at, other });
    }
}

#[cfg(test)]
mod tests {
    use super::entry_cap;

    #[test]
    fn the_cap_is_the_register_file_over_the_block_in_steps_of_eight() {
        // CUTLASS's warp-specialised gemms: 384 threads start at 168 registers.
        assert_eq!(entry_cap(384), 168);
        assert_eq!(entry_cap(256), 255);
        assert_eq!(entry_cap(512), 128);
        assert_eq!(entry_cap(96), 255);
        // A partial warp takes a whole warp's registers.
        assert_eq!(entry_cap(400), 152);
    }
}
