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
use prism_ir::FuncId;
use prism_ir::ir::{BarrierOrigin, Block, InstKind, Program};
use prism_span::Span;
use prism_types::perspective::{Level, Persp};
use std::collections::BTreeMap;

/// The named barrier ids and unit mbarriers of a program.
#[derive(Clone, Debug, Default)]
pub struct NamedBarriers {
    /// First id per unit size (in threads).
    pub base: BTreeMap<u64, u64>,
    /// How many ids each unit size of [`NamedBarriers::base`] has: one per unit of the
    /// largest block the program's kernels may be launched with.
    pub ids: BTreeMap<u64, u64>,
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
            plan.ids.insert(n, units);
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

/// The ids of a function's split barriers (`prism_sync::motion`), in order: an id's index is
/// the slot of its mbarrier in the kernel's `prism_split` array.
pub fn split_ids(b: &Block) -> Vec<u32> {
    let mut ids = Vec::new();
    b.walk(&mut |k| {
        if let InstKind::BarrierArrive { id, .. } = k {
            ids.push(*id);
        }
    });
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The arrive half of split barrier `id`, whose mbarrier is `prism_split[slot]`: it keeps
/// the phase token the wait needs.
pub fn split_arrive(id: u32, slot: usize) -> Stmt {
    Stmt::Raw(format!("prism_tok{id} = prism_split_arrive(prism_smem_addr(&prism_split[{slot}]));"))
}

/// The wait half of split barrier `id`, whose mbarrier is `prism_split[slot]`.
pub fn split_wait(id: u32, slot: usize) -> Stmt {
    Stmt::Raw(format!("prism_split_wait(prism_smem_addr(&prism_split[{slot}]), prism_tok{id});"))
}

/// The CUDA a barrier instruction of the final IR becomes, as the emitter produces it
/// (without the proxy fence programs with wgmma put before every barrier): `None` for an
/// instruction that is not a barrier, and for a split half outside a kernel, which the
/// emitter refuses. `splits` are the function's [`split_ids`].
pub fn stmts(kind: &InstKind, named: &NamedBarriers, splits: &[u32]) -> Option<Vec<Stmt>> {
    let slot = |id: &u32| splits.iter().position(|s| s == id);
    match kind {
        InstKind::Barrier { scope, .. } => Some(lower(*scope, named)),
        InstKind::BarrierArrive { id, scope, .. } if *scope == Persp::BLOCK => Some(vec![split_arrive(*id, slot(id)?)]),
        InstKind::BarrierWait { id, scope } if *scope == Persp::BLOCK => Some(vec![split_wait(*id, slot(id)?)]),
        _ => None,
    }
}

/// Barrier statements as one line for an editor: calls and raw statements as printed
/// without their `;`, inline assembly as its instruction with the operands written in
/// (`bar.sync 1 + threadIdx.x / 64u, 64`), comments as they are.
pub fn one_line(stmts: &[Stmt]) -> String {
    fn text(s: &Stmt) -> String {
        match s {
            Stmt::Expr(e) => crate::cpp::expr(e),
            Stmt::Raw(r) => r.trim_end_matches(';').to_string(),
            Stmt::Comment(c) => format!("/* {c} */"),
            Stmt::Asm(a) => {
                let mut t: String = a.lines.concat().replace("\\n", " ").trim_end_matches(';').to_string();
                let operands: Vec<&Expr> = a.outputs.iter().chain(&a.inputs).map(|(_, e)| e).collect();
                // From the highest operand number down, so that `%1` does not match `%10`.
                for (k, e) in operands.iter().enumerate().rev() {
                    t = t.replace(&format!("%{k}"), &crate::cpp::expr(e));
                }
                t
            }
            Stmt::Noted(s, _) => text(s),
            other => format!("{other:?}"),
        }
    }
    stmts.iter().map(text).collect::<Vec<_>>().join("; ")
}

/// What the CUDA of a barrier over `scope` units does, in words, for an editor: which
/// named barrier ids or which lanes' mask it uses. `None` where the text says it all.
pub fn describe(scope: Persp, named: &NamedBarriers) -> Option<String> {
    match (scope.level, scope.n) {
        (Level::Thread, n) if n > 1 && n < 32 && 32 % n == 0 => Some(format!(
            "the mask holds the {n} lanes of the thread's unit: lanes {n}k to {n}k + {} of its warp for unit k",
            n - 1
        )),
        (Level::Thread, n) if named.mbar.contains_key(&n) => Some(format!(
            "units of {n} threads have no named barrier ids left (or straddle warps): each waits on its own mbarrier, `prism_ubar{n}[{} / {n}]`",
            tid(named)
        )),
        (Level::Thread, n) if n > 32 => {
            let base = named.base.get(&n).copied().unwrap_or(1);
            let ids = named.ids.get(&n).copied().unwrap_or(1);
            Some(format!(
                "named barrier {base} + k for the k-th unit of {n} threads of the block: ids {base} to {} are this unit size's, and {n} threads arrive at each",
                base + ids.max(1) - 1
            ))
        }
        _ => None,
    }
}

/// What one barrier instruction of the final IR is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierHalf {
    /// A whole barrier.
    Whole,
    /// The arrive half of a barrier barrier motion split.
    Arrive,
    /// The wait half of a barrier barrier motion split.
    Wait,
}

/// One barrier of the program the CUDA backend prints, with the text it becomes.
#[derive(Clone, Debug)]
pub struct BarrierText {
    /// The function it is in.
    pub func: FuncId,
    /// The instruction's span: where inference placed the barrier (motion keeps it on the
    /// halves it moves).
    pub span: Span,
    /// The unit that synchronises.
    pub scope: Persp,
    /// Whole, or which half of a split barrier.
    pub half: BarrierHalf,
    /// The split barrier's id (pairs the halves); 0 for a whole barrier.
    pub id: u32,
    /// Why it is there; `None` for a wait (its arrive carries it).
    pub origin: Option<BarrierOrigin>,
    /// The CUDA, on one line ([`one_line`]).
    pub text: String,
    /// What that CUDA does, in words ([`describe`]), where the text alone does not say it.
    pub detail: Option<String>,
    /// The span of the instruction that follows it in its block, if any: the statement the
    /// barrier now stands before.
    pub next: Option<Span>,
    /// The span of the instruction before it in its block, if any.
    pub prev: Option<Span>,
    /// For a pipeline loop's barrier (`prism_ir::lower`, `Cx::pipeline`), the wait before it.
    pub pipeline: Option<PipelineSync>,
}

/// A pipeline loop's wait and barrier, which the lowering places (docs/language.md,
/// "Pipelines"): at the top of each tile's iteration, or at the turn of a body that reads
/// the next tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipelineSync {
    /// The groups the wait leaves in flight (`cp.async.wait_group N`).
    pub pending: u32,
    /// At the turn of the body (its `span` is the turning `stage(ring, next=True)`), not at
    /// the top of the iteration (its `span` is the loop's).
    pub turn: bool,
}

/// Every barrier of the program `emit` prints, in the order of its functions and
/// instructions, with the CUDA text the emitter produces for it from the same plan of named
/// barrier ids and split slots: what an editor shows where each barrier stands.
pub fn texts(synced: &prism_driver::Synced) -> Vec<BarrierText> {
    fn walk(
        f: &prism_ir::ir::Function,
        b: &Block,
        func: FuncId,
        named: &NamedBarriers,
        splits: &[u32],
        out: &mut Vec<BarrierText>,
    ) {
        for (i, inst) in b.insts.iter().enumerate() {
            let (scope, half, id, origin) = match &inst.kind {
                InstKind::Barrier { scope, origin } => (*scope, BarrierHalf::Whole, 0, Some(origin.clone())),
                InstKind::BarrierArrive { scope, id, origin } => {
                    (*scope, BarrierHalf::Arrive, *id, Some(origin.clone()))
                }
                InstKind::BarrierWait { scope, id } => (*scope, BarrierHalf::Wait, *id, None),
                k => {
                    for nb in k.blocks() {
                        walk(f, nb, func, named, splits, out);
                    }
                    continue;
                }
            };
            let Some(s) = stmts(&inst.kind, named, splits) else { continue };
            // A pipeline's wait completes its fills' copies: views of its rings' slots.
            let pipeline = match i.checked_sub(1).map(|p| &b.insts[p].kind) {
                Some(InstKind::AsyncWait { pending, views })
                    if views.iter().any(|v| {
                        f.mems[v.index()]
                            .parent
                            .is_some_and(|p| f.mems[p.index()].kind == prism_ir::ir::MemKind::Pipeline)
                    }) =>
                {
                    Some(PipelineSync { pending: *pending, turn: b.insts.len() > 2 })
                }
                _ => None,
            };
            out.push(BarrierText {
                func,
                span: inst.span,
                scope,
                half,
                id,
                origin,
                text: one_line(&s),
                detail: match half {
                    BarrierHalf::Whole => describe(scope, named),
                    _ => None,
                },
                next: b.insts.get(i + 1).map(|n| n.span),
                prev: i.checked_sub(1).map(|p| b.insts[p].span),
                pipeline,
            });
        }
    }
    let program = synced.ir();
    let (named, _) = plan(program);
    let mut out = Vec::new();
    for (i, f) in program.functions.iter().enumerate() {
        let splits = if f.kind == prism_types::tir::FnKind::Kernel { split_ids(&f.body) } else { Vec::new() };
        walk(f, &f.body, FuncId(i as u32), &named, &splits, &mut out);
    }
    out
}

/// The barrier instructions of `texts` that one inferred barrier became (inference's
/// report names it by its function and its origin): the whole barrier, or the arrive and
/// the wait motion split it into; none when the optimiser removed it.
pub fn of_origin<'a>(texts: &'a [BarrierText], func: FuncId, origin: &BarrierOrigin) -> Vec<&'a BarrierText> {
    let mine: Vec<&BarrierText> =
        texts.iter().filter(|t| t.func == func && t.origin.as_ref() == Some(origin)).collect();
    let waits = texts.iter().filter(|w| {
        w.func == func
            && w.half == BarrierHalf::Wait
            && mine.iter().any(|a| a.half == BarrierHalf::Arrive && a.id == w.id)
    });
    mine.iter().copied().chain(waits).collect()
}

/// A sentence saying what an inferred barrier became in the CUDA, from its [`of_origin`]
/// instructions; `line` gives a span's line number.
pub fn fate(found: &[&BarrierText], line: impl Fn(Span) -> u32) -> String {
    let half = |h: BarrierHalf| found.iter().find(|t| t.half == h);
    if let (Some(a), Some(w)) = (half(BarrierHalf::Arrive), half(BarrierHalf::Wait)) {
        let after = a.prev.map(|p| format!(" after line {}", line(p))).unwrap_or_default();
        let before = w.next.map(|n| format!(" before line {}", line(n))).unwrap_or_default();
        return format!("in the CUDA, barrier motion split it into `{}`{after} and `{}`{before}", a.text, w.text);
    }
    let wholes: Vec<String> = found.iter().map(|t| format!("`{}`", t.text)).collect();
    match wholes.is_empty() {
        true => "in the CUDA, nothing: the barrier optimiser removed it, as an earlier barrier covers it".into(),
        false => format!("in the CUDA: {}", wholes.join(", ")),
    }
}

/// Whether a barrier over `scope` needs a cooperative launch.
pub fn is_grid(scope: Persp) -> bool {
    scope.level == Level::Grid || (scope.level == Level::Block && scope.n > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan with named ids for units of 64 threads from 1 on, as [`plan`] makes it.
    fn named() -> NamedBarriers {
        NamedBarriers { base: [(64, 1)].into_iter().collect(), ..NamedBarriers::default() }
    }

    #[test]
    fn one_line_shows_each_primitive_as_emitted() {
        let text = |scope| one_line(&lower(scope, &named()));
        assert_eq!(text(Persp::BLOCK), "__syncthreads()");
        assert_eq!(text(Persp::WARP), "__syncwarp()");
        assert_eq!(text(Persp::thread(8)), "__syncwarp(0xffu << (threadIdx.x & 24u))");
        assert_eq!(text(Persp::thread(64)), "bar.sync 1 + threadIdx.x / 64u, 64");
    }

    #[test]
    fn the_plan_gives_each_unit_size_its_own_ids() {
        let mut named = NamedBarriers::default();
        named.base.insert(64, 1);
        named.ids.insert(64, 4);
        named.base.insert(128, 5);
        named.ids.insert(128, 2);
        let d = describe(Persp::thread(128), &named).unwrap();
        assert!(d.contains("ids 5 to 6"), "{d}");
        let d = describe(Persp::thread(8), &named).unwrap();
        assert!(d.contains("lanes 8k to 8k + 7"), "{d}");
        assert_eq!(describe(Persp::BLOCK, &named), None);
    }

    #[test]
    fn split_halves_name_their_slot_and_token() {
        let arrive = InstKind::BarrierArrive { scope: Persp::BLOCK, id: 3, origin: BarrierOrigin::Explicit };
        let wait = InstKind::BarrierWait { scope: Persp::BLOCK, id: 3 };
        let text = |k: &InstKind| stmts(k, &named(), &[1, 3]).map(|s| one_line(&s));
        assert_eq!(text(&arrive).unwrap(), "prism_tok3 = prism_split_arrive(prism_smem_addr(&prism_split[1]))");
        assert_eq!(text(&wait).unwrap(), "prism_split_wait(prism_smem_addr(&prism_split[1]), prism_tok3)");
        // A half whose id has no slot (outside a kernel) is something the emitter refuses.
        assert_eq!(stmts(&wait, &named(), &[]).map(|s| one_line(&s)), None);
    }
}
