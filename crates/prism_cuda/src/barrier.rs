//! Lowering of barriers to the cheapest CUDA primitive that synchronises their unit.
//!
//! A `barrier` over `S`-units placed in code at perspective `C ⊒ S` makes every `S`-unit of
//! the `C`-unit wait for its own threads:
//!
//! | unit `S` | CUDA |
//! | --- | --- |
//! | `thread[1]` | nothing |
//! | `thread[n]`, `n` dividing 32 | `__syncwarp(mask)`: the n lanes of the thread's unit |
//! | `thread[32]` | `__syncwarp()` |
//! | `thread[32k]`, k > 1 | `bar.sync id, 32k` with one named barrier id per unit of the block |
//! | `block[1]` | `__syncthreads()` |
//! | `block[k]`, `grid[1]` | `cooperative_groups::this_grid().sync()` (cooperative launch) |
//!
//! Named barrier ids are planned for the whole program: each unit size `32k` used anywhere
//! gets a range of `ceil(T_max / 32k)` ids, where `T_max` is the largest `@launch_bounds`
//! of the program's kernels (1024 without one). Id 0 is `__syncthreads()`'s, so at most 15
//! ids exist; a program needing more is an error that names the fix (`@launch_bounds`).

use crate::cpp::{Asm, Expr, Stmt};
use prism_ir::ir::{InstKind, Program};
use prism_types::perspective::{Level, Persp};
use std::collections::BTreeMap;

/// The named barrier ids of a program.
#[derive(Clone, Debug, Default)]
pub struct NamedBarriers {
    /// First id per unit size (in threads).
    pub base: BTreeMap<u64, u64>,
}

/// Plans named barrier ids; returns the plan and an error for sizes that cannot be served.
pub fn plan(p: &Program) -> (NamedBarriers, Vec<crate::Unsupported>) {
    // Each unit size wider than a warp, with the first barrier that uses it (for messages).
    fn sizes_in(b: &prism_ir::ir::Block, out: &mut std::collections::BTreeMap<u64, prism_span::Span>) {
        for i in &b.insts {
            if let InstKind::Barrier { scope, .. } = &i.kind
                && scope.level == Level::Thread
                && scope.n > 32
            {
                out.entry(scope.n).or_insert(i.span);
            }
            for nb in i.kind.blocks() {
                sizes_in(nb, out);
            }
        }
    }
    let mut sizes = std::collections::BTreeMap::new();
    for f in &p.functions {
        sizes_in(&f.body, &mut sizes);
    }
    let t_max = p
        .functions
        .iter()
        .filter(|f| f.kind == prism_types::tir::FnKind::Kernel)
        .map(|f| f.launch_bounds.unwrap_or(1024))
        .max()
        .unwrap_or(1024)
        .min(1024);
    let mut plan = NamedBarriers::default();
    let mut errors = Vec::new();
    let mut next = 1;
    for (n, span) in sizes {
        if n % 32 != 0 {
            errors.push(crate::Unsupported { span, message: format!(
                "a barrier over `thread[{n}]` units cannot be lowered: named barriers synchronise whole warps, so the unit must be a multiple of 32 threads or divide 32"
            )});
            continue;
        }
        let units = t_max.div_ceil(n);
        if next + units > 16 {
            errors.push(crate::Unsupported { span, message: format!(
                "barriers over `thread[{n}]` units need {units} named barrier ids for blocks of up to {t_max} threads, more than the 15 left; declare `@launch_bounds` with fewer threads"
            )});
            continue;
        }
        plan.base.insert(n, next);
        next += units;
    }
    (plan, errors)
}

/// The statements of a barrier over `scope`-units.
pub fn lower(scope: Persp, named: &NamedBarriers) -> Vec<Stmt> {
    match (scope.level, scope.n) {
        (Level::Thread, 1) => vec![Stmt::Comment("barrier over single threads: nothing to do".into())],
        (Level::Thread, 32) => vec![Stmt::Expr(Expr::call("__syncwarp", vec![]))],
        (Level::Thread, n) if n < 32 && 32 % n == 0 => {
            let mask = (1u64 << n) - 1;
            let lane_base = Expr::bin("&", Expr::id("threadIdx.x"), Expr::id(format!("{}u", 32 - n)));
            vec![Stmt::Expr(Expr::call(
                "__syncwarp",
                vec![Expr::bin("<<", Expr::id(format!("0x{mask:x}u")), lane_base)],
            ))]
        }
        (Level::Thread, n) => {
            let base = named.base.get(&n).copied().unwrap_or(1);
            let id = Expr::bin(
                "+",
                Expr::id(base.to_string()),
                Expr::bin("/", Expr::id("threadIdx.x"), Expr::id(format!("{n}u"))),
            );
            vec![Stmt::Asm(Asm {
                volatile: true,
                lines: vec!["bar.sync %0, %1;".into()],
                outputs: Vec::new(),
                inputs: vec![("r".into(), id), ("n".into(), Expr::id(n.to_string()))],
                clobbers: vec!["memory".into()],
            })]
        }
        (Level::Block, 1) => vec![Stmt::Expr(Expr::call("__syncthreads", vec![]))],
        _ => vec![Stmt::Expr(Expr::call("cooperative_groups::this_grid().sync", vec![]))],
    }
}

/// Whether a barrier over `scope` needs a cooperative launch.
pub fn is_grid(scope: Persp) -> bool {
    scope.level == Level::Grid || (scope.level == Level::Block && scope.n > 1)
}
