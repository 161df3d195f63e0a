//! Barrier optimisations after synchronisation inference.
//!
//! For now only counting: the optimisation passes are added below.

use prism_ir::ir::{InstKind, Program};

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
        crate::analysis::walk(&f.body, &mut |k| {
            if matches!(k, InstKind::Barrier { .. }) {
                n += 1;
            }
        });
    }
    n
}

/// Optimises barriers in place; returns the counts.
pub fn optimize(p: &mut Program) -> Counts {
    Counts::of(p)
}
