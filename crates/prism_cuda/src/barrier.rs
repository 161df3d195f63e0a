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
//! | other `thread[n]` (units straddling warps), or named ids exhausted | one mbarrier per unit: arrive, then wait for the phase |
//!
//! Named barrier ids are planned for the whole program: each unit size `32k` used anywhere
//! gets a range of `ceil(T_max / 32k)` ids, where `T_max` is the largest `@launch_bounds`
//! of the program's kernels (1024 without one). Id 0 is `__syncthreads()`'s, so at most 15
//! ids exist; sizes that do not get ids use mbarriers, declared at file scope and
//! initialised in every kernel's prologue.

use crate::cpp::{Asm, Expr, Stmt};
use prism_ir::ir::{InstKind, Program};
use prism_types::perspective::{Level, Persp};
use std::collections::BTreeMap;

/// The named barrier ids and unit mbarriers of a program.
#[derive(Clone, Debug, Default)]
pub struct NamedBarriers {
    /// First id per unit size (in threads).
    pub base: BTreeMap<u64, u64>,
    /// Unit sizes served by mbarriers, with the number of units of the largest block.
    pub mbar: BTreeMap<u64, u64>,
    /// Whether a kernel of the program takes multi-dimensional launches (`id(x)`, ...):
    /// then the thread's index and the block's size are computed from all three dimensions
    /// ([`tid`], [`block_threads`]).
    pub multi_dim: bool,
}

/// The thread's linear index in its block, as C++.
pub fn tid(named: &NamedBarriers) -> &'static str {
    if named.multi_dim { "prism_linear_tid()" } else { "threadIdx.x" }
}

/// The threads of a block, as C++.
pub fn block_threads(named: &NamedBarriers) -> &'static str {
    if named.multi_dim { "prism_block_threads()" } else { "blockDim.x" }
}

/// Plans named barrier ids and unit mbarriers for every barrier unit size the program uses.
/// Sizes that are multiples of 32 get named barriers while ids last; sizes whose units
/// straddle warps (neither dividing 32 nor a multiple of it) and sizes left without ids get
/// one mbarrier per unit instead. Nothing here fails any more; the `Vec` stays for symmetry
/// with the other planning steps.
pub fn plan(p: &Program) -> (NamedBarriers, Vec<crate::Unsupported>) {
    fn sizes_in(b: &prism_ir::ir::Block, out: &mut std::collections::BTreeSet<u64>) {
        for i in &b.insts {
            if let InstKind::Barrier { scope, .. } = &i.kind
                && scope.level == Level::Thread
                && scope.n > 1
                && 32 % scope.n != 0
            {
                out.insert(scope.n);
            }
            for nb in i.kind.blocks() {
                sizes_in(nb, out);
            }
        }
    }
    let mut sizes = std::collections::BTreeSet::new();
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
    let mut plan = NamedBarriers {
        multi_dim: p
            .functions
            .iter()
            .enumerate()
            .any(|(i, f)| f.kind == prism_types::tir::FnKind::Kernel && p.multi_dim(prism_ir::FuncId(i as u32))),
        ..NamedBarriers::default()
    };
    let mut next = 1;
    for n in sizes {
        let units = t_max.div_ceil(n);
        if n % 32 == 0 && next + units <= 16 {
            plan.base.insert(n, next);
            next += units;
        } else {
            plan.mbar.insert(n, units);
        }
    }
    (plan, Vec::new())
}

/// The file-scope declarations of the unit mbarriers a plan needs.
pub fn mbar_decls(named: &NamedBarriers) -> String {
    let mut out = String::new();
    for (n, units) in &named.mbar {
        out.push_str(&format!(
            "// Barriers over units of {n} threads: one mbarrier per unit of the block.\nstatic __shared__ __align__(8) unsigned long long prism_ubar{n}[{units}];\n"
        ));
    }
    out
}

/// The kernel prologue that initialises the unit mbarriers: each expects the threads of its
/// unit that the launch has (the last unit may be partial).
pub fn mbar_init(named: &NamedBarriers) -> Vec<Stmt> {
    named
        .mbar
        .iter()
        .map(|(n, units)| {
            let t = block_threads(named);
            Stmt::Raw(format!(
                "for (unsigned u = 0; u < {units}u && u * {n}u < {t}; ++u) prism_split_init(prism_smem_addr(&prism_ubar{n}[u]), min({n}u, {t} - u * {n}u));"
            ))
        })
        .collect()
}

/// The statements of a barrier over `scope`-units.
pub fn lower(scope: Persp, named: &NamedBarriers) -> Vec<Stmt> {
    match (scope.level, scope.n) {
        (Level::Thread, 1) => vec![Stmt::Comment("barrier over single threads: nothing to do".into())],
        (Level::Thread, 32) => vec![Stmt::Expr(Expr::call("__syncwarp", vec![]))],
        (Level::Thread, n) if n < 32 && 32 % n == 0 => {
            let mask = (1u64 << n) - 1;
            let lane_base = Expr::bin("&", Expr::id(tid(named)), Expr::id(format!("{}u", 32 - n)));
            vec![Stmt::Expr(Expr::call(
                "__syncwarp",
                vec![Expr::bin("<<", Expr::id(format!("0x{mask:x}u")), lane_base)],
            ))]
        }
        (Level::Thread, n) if named.mbar.contains_key(&n) => {
            vec![Stmt::Raw(format!("prism_unit_sync(prism_smem_addr(&prism_ubar{n}[{} / {n}u]));", tid(named)))]
        }
        (Level::Thread, n) => {
            let base = named.base.get(&n).copied().unwrap_or(1);
            let id = Expr::bin(
                "+",
                Expr::id(base.to_string()),
                Expr::bin("/", Expr::id(tid(named)), Expr::id(format!("{n}u"))),
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
