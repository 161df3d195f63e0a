//! Synchronisation inference: the barriers that `partition`, `claim` and `async` imply.
//!
//! ```text
//! tir::Program --prism_ir::lower--> ir::Program --infer--> ir::Program with barriers
//! ```
//!
//! Prism programs do not write barriers: a thread writes shared or global memory only
//! through a name that `partition`, `claim` or `async` gave it, and the compiler orders those
//! writes against the next use of the memory (docs/references.md S). [`infer`] inserts
//! `InstKind::Barrier { origin: BarrierOrigin::Inferred { .. } }` instructions into a lowered
//! program so that the simulator and the CUDA backend, which both consume the IR afterwards,
//! see every ordering explicitly. It follows docs/references.md S.2: [`infer`] places a full
//! barrier per edge, correct before fast; [`motion`] then splits kernels' block barriers into
//! arrive/wait pairs moved towards their accesses, and [`opt`] removes the barriers every
//! edge can do without. The driver (`prism_driver`) runs the three in order.
//!
//! 1. **Memory** (`graph.rs`): items are shared arrays, pointer parameters and callees' shared
//!    footprints; views belong to their root. Shared items whose bytes overlap are analysed
//!    together, because the allocator reuses shared memory between sequential scopes and
//!    between calls. Thread-local arrays need nothing.
//! 2. **Nodes**: each memory scope, and each instruction accessing the memory directly, in a
//!    region: the function body, or the body of a `partition`/`claim` scope for its new name
//!    (the scope's own barriers order its inside against its outside).
//! 3. **Edges** (`paths.rs`): `A → B` when a path leads from the end of `A` to the start of
//!    `B`, loop back edges included, also past other nodes of the region (a node in between
//!    that other threads run orders nothing between `A`'s and `B`'s threads). It needs a barrier
//!    when either end writes, unless both are atomics only.
//! 4. **Scope**: the smallest aligned unit holding the threads that run `A` and `B`, within
//!    one sharing unit of the memory: `block[1]` for shared memory staged by a whole block,
//!    `thread[32]` for a warp's claim, `grid[1]` for global memory reused across a launch. A
//!    single thread needs no barrier; nor do two nodes (or a loop repeating one node) in
//!    which every thread provably touches only its own elements (`owner.rs`).
//! 5. **Placement** (`place.rs`): immediately before `B`, moved out of code that not every
//!    thread of the unit runs (narrower `group`s and `split` cases, non-uniform `if`s, unsafe
//!    code) and out of constructs that do not contain `A` (so that a barrier before a loop
//!    runs once). An explicit `__syncthreads()`/`__syncwarp()`, a barrier planned for an
//!    earlier edge, or a callee's barriers (`summary.rs`) on every path from `A`'s last
//!    accesses to `B`'s first cover an edge; every barrier no edge needs is dropped at the end.
//!
//! A barrier over `S`-units placed in code at perspective `C ⊒ S` means every `S`-unit of the
//! `C`-unit synchronises: `__syncthreads()` for `block[1]`, `__syncwarp()` for `thread[32]`,
//! a named barrier for other thread counts, a grid barrier for `grid[1]` (the backends decide
//! how to run it).
//!
//! **What is assumed, not checked** (the simulator reports the races these leave): a
//! partition's units use only their own elements, as the language trusts its index functions
//! (docs/references.md U), so accesses through a partition to other units' elements need written
//! barriers; pointer parameters do not alias each other; concurrent branches of one `split`
//! share no memory (no barrier could order them); verbatim CUDA text without a simulated body
//! touches nothing; the source of an asynchronous copy is not written inside the `async`
//! scope that reads it. Orderings that only a barrier in divergent code could provide are
//! reported as [`Unresolved`], not synchronised.
//!
//! **What is imprecise, on the safe side**: paths are those of the structured control flow,
//! so a loop whose bounds are not constants may run zero times; the ownership proof knows
//! only affine indices with constant ranges; barriers go before the later node whole (no
//! split arrive/wait, no motion towards the first access).
//!
//! Invariant: the result passes `prism_ir::verify` whenever the input did: barriers are only
//! placed where their unit is narrower than or equal to the code perspective, outside unsafe
//! code.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod asyncs;
mod cfg;
mod concurrent;
mod cross;
mod diagnostics;
mod graph;
pub mod motion;
pub mod opt;
mod owner;
mod paths;
mod pending;
mod place;
mod realloc;
mod summary;

pub use asyncs::AsyncFault;
pub use diagnostics::{notes, problems};

use cfg::Cfg;
use graph::{Defs, Graph, MemRef, Mode};
use prism_ir::ir::{BarrierOrigin, Function, Inst, InstKind, MemInfo, MemKind, Program};
use prism_ir::{FuncId, MemId};
use prism_span::Span;
use prism_types::perspective::{Facts, Level, Persp};
use std::cell::Cell;
pub(crate) use summary::Key;
use summary::Summary;

/// CUDA's most blocks per grid.
const MAX_GRID: u64 = (1 << 31) - 1;

/// An edge no barrier could cover, detached from the analysis: (unit, memory, earlier span,
/// later span, whether either end is unsafe code).
type UnresolvedEdge = (Persp, MemRef, Span, Span, bool);

/// Options of [`infer`].
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Test and debug switch: do not insert the inferred barriers with these indices (in the
    /// order of [`SyncReport::barriers`]). The report still lists them. Used to check that
    /// every inferred barrier matters: without it, the simulator should see a race.
    pub skip: Vec<usize>,
    /// Test switch: check every answer the kept searches give (`paths.rs`, `Ctx::reach`)
    /// against a search of its own edge, and panic where they differ.
    pub check_searches: bool,
}

/// How a node uses its memory, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// Only plain reads.
    Read,
    /// Some plain write (a store, an asynchronous copy, a writable argument).
    Write,
    /// Atomics (and perhaps reads), no plain write.
    Atomic,
}

impl Use {
    fn of(m: Mode) -> Use {
        if m.write {
            Use::Write
        } else if m.atomic {
            Use::Atomic
        } else {
            Use::Read
        }
    }
}

/// One barrier [`infer`] inserted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsertedBarrier {
    /// The function it is in.
    pub func: FuncId,
    /// The unit that synchronises.
    pub scope: Persp,
    /// The memory it orders, as the later node names it (a root name; for a callee's shared
    /// memory, a name [`infer`] added to the function's memory table).
    pub mem: MemId,
    /// The memory as the earlier node names it: `mem`, or another shared array (or callee
    /// footprint) occupying the same bytes.
    pub before_mem: MemId,
    /// The earlier access or scope.
    pub before: Span,
    /// How the earlier node uses the memory.
    pub before_use: Use,
    /// The later access or scope.
    pub after: Span,
    /// How the later node uses the memory.
    pub after_use: Use,
    /// The instruction the barrier was placed immediately before.
    pub at: Span,
}

/// An ordering no legal barrier could provide, left to the programmer (and the simulator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unresolved {
    /// The function.
    pub func: FuncId,
    /// The unit that would have to synchronise.
    pub scope: Persp,
    /// The memory (none for a callee's shared memory).
    pub mem: Option<MemId>,
    /// The earlier access or scope.
    pub before: Span,
    /// The later access or scope.
    pub after: Span,
    /// Whether either access is in unsafe code, which is trusted to order its own accesses
    /// (a warning); otherwise safe code needs an ordering no barrier can give (an error).
    pub in_unsafe: bool,
}

/// Two branches of one `split`, which run at the same time, touching the same memory with
/// at least one of them changing it: no barrier can order them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitConflict {
    /// The function.
    pub func: FuncId,
    /// The memory (none for a callee's shared memory).
    pub mem: Option<MemId>,
    /// The first access to it in the earlier branch.
    pub first: Span,
    /// The first conflicting access in the later branch.
    pub second: Span,
}

/// Two accesses no path joins that different units of the code around them may run at the
/// same time (the branches of an `if` whose condition is uniform only over units narrower
/// than the memory's sharing), one of them changing the memory: no barrier can order them
/// (`concurrent.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchConflict {
    /// The function.
    pub func: FuncId,
    /// The memory (none for a callee's shared memory).
    pub mem: Option<MemId>,
    /// The earlier access or scope, in program order.
    pub first: Span,
    /// The later one.
    pub second: Span,
    /// The code perspective where their paths part.
    pub code: Persp,
    /// The unit that would have to synchronise them.
    pub scope: Persp,
}

pub use realloc::{ReallocFault, ReallocIssue, entry_cap, entry_count};

/// A problem of an `async` scope's copies (`asyncs.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncIssue {
    /// The function.
    pub func: FuncId,
    /// What is wrong.
    pub fault: AsyncFault,
    /// The memory.
    pub mem: MemId,
    /// The later access.
    pub at: Span,
    /// The copy (or other access) it conflicts with.
    pub other: Span,
}

/// What [`infer`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Inserted barriers, by function and then in program order.
    pub barriers: Vec<InsertedBarrier>,
    /// Edges that needed a barrier no legal placement could provide (only unsafe code or
    /// atomics mixed with plain accesses in one narrow block produce these).
    pub unresolved: Vec<Unresolved>,
    /// Branches of a split that touch the same memory, one changing it (an error).
    pub split_conflicts: Vec<SplitConflict>,
    /// Accesses on paths that different units may take at the same time, one changing the
    /// other's memory (an error).
    pub branch_conflicts: Vec<BranchConflict>,
    /// Problems of asynchronous copies (errors).
    pub async_issues: Vec<AsyncIssue>,
    /// Register reallocations PTX leaves undefined (errors; [`realloc`](mod@realloc)).
    pub realloc_issues: Vec<ReallocIssue>,
    /// What barrier motion did (after inference, when the pipeline runs [`motion`](mod@motion)).
    pub motion: motion::MotionReport,
}

/// Inserts the inferred barriers into `p` and says where they went.
///
/// Functions are analysed callees first, each on its own: a function starts with its memory
/// synchronised by its caller, and a call is a node of the caller for the memory it touches.
pub fn infer(p: &mut Program, opts: &Options) -> SyncReport {
    let n = p.functions.len();
    let mut summaries: Vec<Option<Summary>> = vec![None; n];
    let mut plans: Vec<Vec<Pending>> = vec![Vec::new(); n];
    let mut unresolved: Vec<Vec<UnresolvedEdge>> = vec![Vec::new(); n];
    let mut limits: Vec<Option<u64>> = vec![None; n];
    let mut conflicts = Vec::new();
    let mut parted = Vec::new();
    let mut asyncs = Vec::new();
    for fid in callees_first(p) {
        let f = &p.functions[fid];
        let cfg = Cfg::build(f);
        let defs = graph::defs(&cfg);
        let graph = Graph::build(p, f, &cfg, &defs);
        let mut cx = Ctx {
            f,
            facts: f.facts,
            cfg,
            defs,
            graph,
            summaries: &summaries,
            blocks: Cell::new(MAX_GRID as u128),
            max_blocks: Cell::new(None),
            reach: std::cell::OnceCell::new(),
            memo: Memo::default(),
            check_searches: opts.check_searches,
        };
        cx.counted_loops_run();
        let plan = cx.plan();
        for a in cx.async_problems() {
            asyncs.push(AsyncIssue { func: FuncId(fid as u32), fault: a.fault, mem: a.mem, at: a.at, other: a.other });
        }
        for c in cx.branch_conflicts() {
            let mem = match c.mem {
                MemRef::Mem(m) => Some(m),
                MemRef::Callee(_) => None,
            };
            parted.push(BranchConflict {
                func: FuncId(fid as u32),
                mem,
                first: c.first,
                second: c.second,
                code: c.code,
                scope: c.scope,
            });
        }
        for c in cx.concurrent_conflicts() {
            let mem = cx.graph.item_of.iter().find(|&(_, &i)| i == c.item).map(|(&m, _)| m);
            conflicts.push(SplitConflict { func: FuncId(fid as u32), mem, first: c.first, second: c.second });
        }
        let summary = cx.summarise(&plan.planned());
        plans[fid] = plan.barriers.iter().map(|b| cx.pending(b)).collect();
        unresolved[fid] = plan
            .unresolved
            .iter()
            .map(|e| {
                let (a, b) = (&cx.graph.nodes[e.a], &cx.graph.nodes[e.b]);
                let in_unsafe = [a.inst, b.inst].iter().any(|&i| cx.cfg.frames[cx.cfg.insts[i].frame].in_unsafe);
                (e.scope, pick(b.mem, a.mem), a.span, b.span, in_unsafe)
            })
            .collect();
        // A function's launch limit includes its callees' (analysed before it).
        let mut callees = Vec::new();
        collect_calls(&p.functions[fid].body, &mut callees);
        let own = cx.max_blocks.get().map(|b| b as u64);
        limits[fid] = callees.iter().filter_map(|&c| limits.get(c).copied().flatten()).chain(own).min();
        summaries[fid] = Some(summary);
    }
    let names: Vec<String> = p.functions.iter().map(|f| f.name.clone()).collect();
    let mut report = SyncReport::default();
    conflicts.sort_by_key(|c: &SplitConflict| (c.func, c.second.start));
    report.split_conflicts = conflicts;
    parted.sort_by_key(|c: &BranchConflict| (c.func, c.second.start));
    report.branch_conflicts = parted;
    asyncs.sort_by_key(|a: &AsyncIssue| (a.func, a.at.start));
    report.async_issues = asyncs;
    report.realloc_issues = realloc::check(p);
    for (fid, mut pending) in plans.into_iter().enumerate() {
        pending.sort_by_key(|b| b.order);
        let func = FuncId(fid as u32);
        let mut inserts = Vec::new();
        for b in pending {
            let mem = mem_id(&mut p.functions[fid], b.mem, &names, b.span_at);
            let before_mem = mem_id(&mut p.functions[fid], b.mem_before, &names, b.span_at);
            let index = report.barriers.len();
            report.barriers.push(InsertedBarrier {
                func,
                scope: b.scope,
                mem,
                before_mem,
                before: b.before,
                before_use: b.before_use,
                after: b.after,
                after_use: b.after_use,
                at: b.span_at,
            });
            if !opts.skip.contains(&index) {
                let origin = BarrierOrigin::Inferred { mem, before: b.before, after: b.after };
                let inst = Inst { kind: InstKind::Barrier { scope: b.scope, origin }, span: b.span_at };
                inserts.push((b.key, inst));
            }
        }
        insert(&mut p.functions[fid], inserts);
        p.functions[fid].max_blocks = limits[fid];
        for (scope, mem, before, after, in_unsafe) in std::mem::take(&mut unresolved[fid]) {
            let mem = match mem {
                MemRef::Mem(m) => Some(m),
                MemRef::Callee(_) => None,
            };
            report.unresolved.push(Unresolved { func, scope, mem, before, after, in_unsafe });
        }
    }
    report
}

/// A short description of a barrier's unit, for messages: `block` (`__syncthreads()`),
/// `warp` (`__syncwarp()`), `grid`, or the perspective.
pub fn describe_scope(scope: Persp) -> String {
    match (scope.level, scope.n) {
        (Level::Block, 1) => "block".into(),
        (Level::Thread, 32) => "warp".into(),
        (Level::Grid, _) => "grid".into(),
        _ => format!("{scope}"),
    }
}

/// What the analysis of one function works with.
pub(crate) struct Ctx<'a> {
    /// The function.
    pub f: &'a Function,
    /// What its bound guarantees.
    pub facts: Facts,
    /// Its control-flow graph.
    pub cfg: Cfg<'a>,
    /// Its registers' definitions.
    pub defs: Defs,
    /// Its memory, regions and nodes.
    pub graph: Graph,
    /// Summaries of the functions analysed so far (every callee).
    pub summaries: &'a [Option<Summary>],
    /// The most blocks the ownership proof now assumes a launch has (`owner.rs`).
    pub blocks: Cell<u128>,
    /// The tightest such limit a successful proof needed, if any.
    pub max_blocks: Cell<Option<u128>>,
    /// Each node's successors and the loops on the way (`paths.rs`), found once for
    /// inference and the concurrency checks, after `counted_loops_run` fixed the graph.
    pub reach: std::cell::OnceCell<Vec<(Vec<usize>, std::collections::BTreeSet<cfg::InstId>)>>,
    /// Answers about loops and counters, which every pair of nodes asks again.
    pub memo: Memo,
    /// [`Options::check_searches`].
    pub check_searches: bool,
}

/// Answers kept by key for the analysis of one function.
type Kept<K, V> = std::cell::RefCell<std::collections::HashMap<K, V>>;

/// The answer `cell` keeps for `key`, or else `find`'s, then kept. The cell is not borrowed
/// while `find` runs, which may ask other kept questions.
fn kept<K: std::hash::Hash + Eq + Copy, V: Clone>(cell: &Kept<K, V>, key: K, find: impl FnOnce() -> V) -> V {
    if let Some(v) = cell.borrow().get(&key) {
        return v.clone();
    }
    let v = find();
    cell.borrow_mut().insert(key, v.clone());
    v
}

/// Answers kept during the analysis of one function, because every pair of nodes asks
/// them again (review R48: without them a function of `n` phases took time cubic in `n`).
/// All but [`Memo::reach`] answer questions whose inputs do not change during the analysis:
/// they read instructions, frames and definitions, never the edges `counted_loops_run`
/// rewrites; `reach` says when its searches still hold (`paths.rs`).
#[derive(Default)]
pub(crate) struct Memo {
    /// [`Ctx::counter`] by loop.
    pub counter: Kept<cfg::InstId, Option<owner::Counter>>,
    /// [`Ctx::counter_of`] by register.
    pub counter_of: Kept<prism_ir::Reg, Option<cfg::InstId>>,
    /// [`Ctx::pipeline_counter`] by register.
    pub pipeline_counter: Kept<prism_ir::Reg, Option<cfg::InstId>>,
    /// The marks of [`Ctx::covered`]'s searches, reused so that a short search does not pay
    /// for clearing one mark per point of the function.
    pub marks: std::cell::RefCell<paths::Marks>,
    /// [`Ctx::sites`] by node.
    pub sites: Kept<usize, Option<owner::Sites>>,
    /// [`Ctx::access_form`] by access and launch limit.
    pub access_form: Kept<owner::AccessKey, Option<(owner::Affine, owner::Reads)>>,
    /// [`Ctx::reach`] by node, unit and loop condition: `None` once asked, then the search.
    pub reach: Kept<(usize, Persp, Option<Persp>), Option<std::rc::Rc<paths::Reach>>>,
    /// The node instructions a loop shared by several units of a partition carries a node's
    /// accesses to ([`Ctx::carried_by_shared_loop`]), by node and unit.
    pub carried: Kept<(usize, Persp), std::rc::Rc<Vec<cfg::InstId>>>,
    /// The points where a node, or an access inside a scope node, starts.
    pub starts: std::cell::OnceCell<Vec<bool>>,
}

/// A planned barrier, detached from the analysis so the program can be changed.
#[derive(Clone, Debug)]
struct Pending {
    /// Program order of the instruction it goes before.
    order: usize,
    /// Where it goes: the block's path flattened, then the index in the block.
    key: Vec<usize>,
    scope: Persp,
    mem: MemRef,
    mem_before: MemRef,
    before: Span,
    before_use: Use,
    after: Span,
    after_use: Use,
    span_at: Span,
}

impl Ctx<'_> {
    /// A `for` loop with constant bounds that admit an iteration runs its body at least once,
    /// so the path that skips the body (the first test of the condition failing) does not
    /// exist. Without this, a staging loop followed by `for kk in range(32): ... As[...]`
    /// would seem to let the next tile's writes follow the last ones without the reads in
    /// between. The header of such a loop only compares the counter, so the first iteration
    /// goes straight to the body.
    fn counted_loops_run(&mut self) {
        let loops: Vec<cfg::InstId> = (0..self.cfg.insts.len())
            .filter(|&l| match &self.cfg.insts[l].inst.kind {
                InstKind::Loop { header, .. } => {
                    header
                        .insts
                        .iter()
                        .all(|i| i.kind.blocks().is_empty() && graph::operands(self.f, &i.kind).is_empty())
                        && self.counter(l).is_some()
                }
                _ => false,
            })
            .collect();
        for l in loops {
            let info = &self.cfg.insts[l];
            let cond = info.cond.expect("loops have a condition point");
            let body = self.cfg.succ[cond][0];
            self.cfg.succ[info.enter] = vec![body];
        }
    }

    fn pending(&self, b: &place::PlannedBarrier) -> Pending {
        let info = &self.cfg.insts[b.before];
        let mut key: Vec<usize> = self.cfg.frames[info.frame].path.iter().flat_map(|&(i, s)| [i, s]).collect();
        key.push(info.index);
        let (na, nb) = (&self.graph.nodes[b.edge.a], &self.graph.nodes[b.edge.b]);
        Pending {
            order: b.before,
            key,
            scope: b.scope,
            mem: pick(nb.mem, na.mem),
            mem_before: pick(na.mem, nb.mem),
            before: na.span,
            before_use: Use::of(na.mode),
            after: nb.span,
            after_use: Use::of(nb.mode),
            span_at: info.inst.span,
        }
    }
}

/// The memory to report for an edge: a real name when either end has one.
fn pick(b: MemRef, a: MemRef) -> MemRef {
    match (b, a) {
        (MemRef::Mem(_), _) => b,
        (_, MemRef::Mem(_)) => a,
        _ => b,
    }
}

/// The memory name for a report; a callee's shared memory gets a name of its own, added to
/// the function's memory table once.
fn mem_id(f: &mut Function, m: MemRef, names: &[String], span: Span) -> MemId {
    match m {
        MemRef::Mem(id) => id,
        MemRef::Callee(callee) => {
            let name = format!("@{}.smem", names[callee.index()]);
            if let Some(i) = f.mems.iter().position(|x| x.name == name && x.kind == MemKind::Shared) {
                return MemId(i as u32);
            }
            f.mems.push(MemInfo {
                name,
                kind: MemKind::Shared,
                persp: Persp::BLOCK,
                parent: None,
                elem: prism_types::ty::Scalar::U32,
                span,
            });
            MemId(f.mems.len() as u32 - 1)
        }
    }
}

/// Inserts barriers at their places. Later places go first, so that no insertion moves an
/// instruction a later one still has to find (a place is the flattened path of its block and
/// its index: a deeper or later place compares greater).
fn insert(f: &mut Function, mut inserts: Vec<(Vec<usize>, Inst)>) {
    inserts.sort_by(|a, b| b.0.cmp(&a.0));
    for (key, inst) in inserts {
        let (index, path) = key.split_last().expect("a place has an index");
        let mut block = &mut f.body;
        for step in path.chunks(2) {
            block = block.insts[step[0]].kind.blocks_mut().swap_remove(step[1]);
        }
        block.insts.insert(*index, inst);
    }
}

/// Function indices with every callee before its callers.
fn callees_first(p: &Program) -> Vec<usize> {
    fn visit(p: &Program, i: usize, state: &mut [u8], out: &mut Vec<usize>) {
        if state[i] != 0 {
            return;
        }
        state[i] = 1;
        let mut callees = Vec::new();
        collect_calls(&p.functions[i].body, &mut callees);
        for c in callees {
            if c < state.len() {
                visit(p, c, state, out);
            }
        }
        state[i] = 2;
        out.push(i);
    }
    let mut state = vec![0u8; p.functions.len()];
    let mut out = Vec::new();
    for i in 0..p.functions.len() {
        visit(p, i, &mut state, &mut out);
    }
    out
}

fn collect_calls(b: &prism_ir::ir::Block, out: &mut Vec<usize>) {
    for i in &b.insts {
        if let InstKind::Call { func, .. } = &i.kind {
            out.push(func.index());
        }
        for sub in i.kind.blocks() {
            collect_calls(sub, out);
        }
    }
}
