//! Barrier optimisations after synchronisation inference.
//!
//! Implemented (clearly correct, local): a barrier is **redundant** when an earlier barrier
//! of the same block of instructions covers its unit (the same or a broader one, by the
//! function's bound) and nothing between them touches memory other than thread-local arrays
//! or calls anything: every thread of the later barrier's unit then passed the earlier one
//! with nothing to order since. Such barriers arise where inferred and written barriers meet
//! (`__syncthreads(); __syncwarp()`, or a written barrier right after an inferred one).
//!
//! Split barriers with arrive- and wait-motion (seed 003 §5) are made earlier, by
//! `prism_sync::motion`, so that the simulator runs them too. Not implemented: removal
//! across control flow. `prism_sync` already drops barriers no edge needs; what is left here
//! is what its per-edge view cannot see.
//!
//! The counts before and after are snapshotted for the corpus in
//! `crates/prism_cuda/tests/corpus_barriers.txt`, so that a regression shows.
//!
//! [`strip_asserts`] is the one step that differs between the backends: the simulator
//! keeps the uniformity assertions after unsafe code, the CUDA backend drops them.

use prism_ir::ir::{Block, InstKind, Program};
use prism_types::perspective::Facts;

/// Barrier counts of a program, before and after optimisation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Barriers (explicit and inferred) before.
    pub before: usize,
    /// Barriers after.
    pub after: usize,
}

impl Counts {
    /// The counts of an unoptimised program.
    pub fn of(p: &Program) -> Counts {
        let n = count(p);
        Counts { before: n, after: n }
    }
}

/// The number of barrier instructions in a program.
pub fn count(p: &Program) -> usize {
    let mut n = 0;
    for f in &p.functions {
        f.body.walk(&mut |k| {
            if matches!(k, InstKind::Barrier { .. } | InstKind::BarrierArrive { .. }) {
                n += 1;
            }
        });
    }
    n
}

/// Removes the uniformity assertions (`assert.uniform`) the simulator checks after unsafe
/// code: they are no code on the GPU, and must not keep variables alive there.
pub fn strip_asserts(p: &mut Program) {
    fn block(b: &mut Block) {
        b.insts.retain(|i| !matches!(i.kind, InstKind::AssertUniform { .. } | InstKind::AssertUniformLocal { .. }));
        for i in &mut b.insts {
            for nb in i.kind.blocks_mut() {
                block(nb);
            }
        }
    }
    for f in &mut p.functions {
        block(&mut f.body);
    }
}

/// Optimises barriers in place; returns the counts.
pub fn optimize(p: &mut Program) -> Counts {
    let before = count(p);
    for f in &mut p.functions {
        let facts = f.facts;
        remove_redundant(&mut f.body, facts);
    }
    Counts { before, after: count(p) }
}

fn remove_redundant(b: &mut Block, facts: Facts) {
    for inst in &mut b.insts {
        for nb in inst.kind.blocks_mut() {
            remove_redundant(nb, facts);
        }
    }
    // The scope of the last barrier with only quiet instructions since.
    let mut covering = None;
    b.insts.retain(|inst| match &inst.kind {
        InstKind::Barrier { scope, .. } => match covering {
            Some(c) if facts.narrower_eq(*scope, c) => false,
            _ => {
                covering = Some(*scope);
                true
            }
        },
        // Nothing another thread can see happens between the barriers.
        k if k.is_thread_private() => true,
        _ => {
            covering = None;
            true
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use prism_ir::ir::{BarrierOrigin, Function, Inst};
    use prism_types::perspective::Persp;

    fn barrier(scope: Persp) -> Inst {
        Inst { kind: InstKind::Barrier { scope, origin: BarrierOrigin::Explicit }, span: Default::default() }
    }

    fn program(insts: Vec<Inst>) -> Program {
        let text = "kernel @k() entry block[1] facts 32 1 smem 0 {\n  body {\n  }\n}\n";
        let mut p = prism_ir::parse(text).expect("valid IR");
        let f: &mut Function = &mut p.functions[0];
        f.body.insts = insts;
        p
    }

    #[test]
    fn a_covered_barrier_goes() {
        let mut p = program(vec![barrier(Persp::BLOCK), barrier(Persp::WARP), barrier(Persp::BLOCK)]);
        assert_eq!(optimize(&mut p), Counts { before: 3, after: 1 });
    }

    #[test]
    fn a_broader_barrier_after_a_narrower_one_stays() {
        let mut p = program(vec![barrier(Persp::WARP), barrier(Persp::BLOCK)]);
        assert_eq!(optimize(&mut p), Counts { before: 2, after: 2 });
    }

    #[test]
    fn memory_in_between_keeps_both() {
        let ret = Inst { kind: InstKind::AsyncWait { pending: 0, views: Vec::new() }, span: Default::default() };
        let mut p = program(vec![barrier(Persp::BLOCK), ret, barrier(Persp::BLOCK)]);
        assert_eq!(optimize(&mut p), Counts { before: 2, after: 2 });
    }
}
