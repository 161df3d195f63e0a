//! What the analysis tracks: memory items, regions, nodes, and who takes part in a node.
//!
//! **Items.** Synchronisation is about memory, and the unit of memory is an *item*: a shared
//! array, a pointer parameter, or the shared memory a callee uses at a call (its
//! *footprint*). Names made by `partition`, `claim` and `async` belong to the item of their
//! root (docs/references.md S.2 item 1). Thread-local arrays are private to a thread and are not
//! items. Pointer parameters never alias one another (the language has no pointer
//! arithmetic and no aliasing of names; a caller passing overlapping buffers to a kernel is
//! outside the model). Shared memory is different: the allocator reuses bytes between
//! sequential scopes and gives every callee the caller's current offset, so two shared items
//! whose byte ranges overlap are the same memory. Each item is therefore analysed together
//! with every item that overlaps it.
//!
//! **Regions.** A `partition` or `claim` scope is one node where it is opened, and its body
//! is analysed on its own: the scope's own barriers (before it starts, after it ends) order
//! everything inside against everything outside, so inside only the accesses through the new
//! name need ordering against each other. A region is the function body for a set of
//! overlapping items, or the body of one `partition`/`claim` scope for its name. Within a
//! region, conflicts only happen inside one *sharing unit* `D`: a shared array is per block;
//! a parameter is shared by the units of its perspective; a partition gives each unit of its
//! perspective its own elements (the language leaves non-injective index functions to the
//! simulator, docs/references.md U); a claimed name may be used by any unit of the code that
//! claimed it, since two different splits may hand it to two different units. An `async`
//! scope's body is not a region: its only uses are asynchronous copies, which complete at
//! the scope's end, and no barrier inside could order them.
//!
//! **Nodes** (docs/references.md S.2 item 2). In a region, a node is a memory scope on the region's
//! memory, or one instruction that accesses it directly (a load, a store, an intrinsic's
//! memory operand, a call's pointer argument or shared footprint) outside such scopes. The
//! rules name maximal straight-line runs of direct accesses; one node per instruction is the
//! same graph cut finer, and it also separates an atomic from a plain access in one run,
//! which race. Volatile accesses are never nodes: unsafe code that uses them synchronises by
//! itself.
//!
//! **Participants.** A node is executed by the threads that reach it, described by the
//! `group`s and `split` cases between the region's start and the node: an [`Elem`] chain. The
//! barrier for an edge synchronises the smallest aligned unit that holds the participants of
//! both ends, within one sharing unit ([`barrier_scope`]).

use crate::Key;
use crate::cfg::{Cfg, FrameId, FrameKind, InstId, PointId};
use prism_ir::ir::{AccessKind, Function, InstKind, IntrArg, MemKind, Program, ScopeKind, Type};
use prism_ir::{AccessId, FuncId, MemId, Reg};
use prism_span::Span;
use prism_types::perspective::{Facts, Level, Persp, lcm};
use std::collections::{BTreeSet, HashMap, HashSet};

/// A unit of memory the analysis tracks.
#[derive(Clone, Debug)]
pub(crate) struct Item {
    /// Whether it is shared memory (and may overlap other shared items).
    pub shared: bool,
    /// Its bytes from the function's shared base, when known (shared items only).
    pub range: Option<(u64, u64)>,
    /// The units that share it.
    pub persp: Persp,
}

/// Which memory a region analyses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RegionKind {
    /// The function body, for a set of mutually relevant items.
    Top(Vec<usize>),
    /// The body of the `partition` or `claim` scope that made this name.
    View(MemId),
}

/// A part of the function analysed on its own.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    /// Which memory.
    pub kind: RegionKind,
    /// The block the region is (the function body, or a scope body).
    pub base: FrameId,
    /// Where paths leave the region: the function's exit or the scope's end.
    pub stop: PointId,
    /// The code perspective at the region's start.
    pub c0: Persp,
    /// The sharing unit: threads in different `d`-units never touch the same elements here.
    pub d: Persp,
    /// For a scope's region: the scope instruction.
    pub scope: Option<InstId>,
}

/// How a node touches its memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Mode {
    /// Some plain read.
    pub read: bool,
    /// Some plain write (a store, an asynchronous copy, a writable argument, a footprint).
    pub write: bool,
    /// Some atomic.
    pub atomic: bool,
    /// Some atomic that changes memory (every atomic but `atomic_load`).
    pub update: bool,
    /// Some atomic whose result the program uses (`atomic_load`, or an update whose old
    /// value is read): what it sees depends on which other updates came first.
    pub observe: bool,
    /// Which operations its atomic updates are ([`prism_types::intrinsics::atomic_op`]): updates
    /// commute only with updates of the same commutative operation.
    pub ops: u8,
}

impl Mode {
    /// Whether the node touches memory at all.
    pub fn is_empty(self) -> bool {
        !(self.read || self.write || self.atomic)
    }

    /// Adds an access of `kind` made by instruction `inst`; `used` holds every register
    /// the function reads.
    pub(crate) fn add(&mut self, kind: AccessKind, inst: &InstKind, used: &HashSet<Reg>) {
        match kind {
            AccessKind::Read => self.read = true,
            AccessKind::Write | AccessKind::AsyncWrite => self.write = true,
            AccessKind::Atomic => {
                self.atomic = true;
                let (update, observe, op) = match inst {
                    InstKind::Intrinsic { intrinsic, dsts, .. } => {
                        let name = intrinsic.sig().name;
                        let load = name == "atomic_load";
                        let op = prism_types::intrinsics::atomic_op::of(name);
                        // A compare-and-swap reads the old value to decide whether it
                        // writes: what it leaves depends on the updates before it, as a
                        // used result's does.
                        let cas = name == "atomic_cas";
                        (!load, load || cas || dsts.iter().any(|d| used.contains(d)), op)
                    }
                    // Not produced today; the conservative reading.
                    _ => (true, true, prism_types::intrinsics::atomic_op::OVERWRITE),
                };
                self.update |= update;
                self.observe |= observe;
                self.ops |= op;
            }
            AccessKind::Volatile => {}
        }
    }

    /// Whether an edge from a node like `self` to a node like `other` needs a barrier
    /// (`same`: the edge goes from a node to itself, around a loop).
    ///
    /// Two plain reads never conflict. A plain write conflicts with everything, and a plain
    /// read with any atomic that changes memory (a race). Atomics never race with atomics,
    /// but phases of them still need ordering when one phase observes what the other
    /// changes: a histogram's bins flushed with `atomic_exch` after being counted with
    /// `atomic_add` must not see a bin before every count reached it. Updates whose results
    /// are unused commute when they are all one commutative operation (two phases of
    /// `atomic_add`, or of `atomic_max`), so such phases need nothing; an add and a max, or
    /// an add and an overwriting update (`atomic_store`, `atomic_exch`, `atomic_cas`),
    /// leave a value that depends on their order, so their phases are ordered. Overwriting
    /// updates among themselves are not: the last store wins whatever the phases. One atomic instruction
    /// repeated by a loop (a work queue's ticket counter) is concurrent on purpose: its
    /// threads are meant to interleave, and no phase boundary lies inside it; the caller
    /// passes `same` only for such a node, not for a scope or call, which may hold two
    /// phases.
    pub fn conflicts(self, other: Mode, same: bool) -> bool {
        let plain = |m: Mode| m.read || m.write;
        if self.write || other.write {
            return true;
        }
        if (self.read && other.update) || (self.update && other.read) {
            return true;
        }
        if !plain(self) && !plain(other) && same {
            return false;
        }
        if self.update && other.update {
            // Overwriting updates among themselves are left unordered: one element stored
            // by several threads keeps whichever store lands last, which no barrier between
            // phases would fix (it is schedule-dependent by design, docs/soundness.md §1),
            // and a look-back's status words are republished by the thread that owns them.
            let one = |m: Mode| m.ops.count_ones() == 1;
            if !(one(self) && self.ops == other.ops) {
                return true;
            }
        }
        (self.update && other.observe) || (self.observe && other.update)
    }
}

/// Which memory a node is reported against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemRef {
    /// A root memory name.
    Mem(MemId),
    /// A callee's shared memory.
    Callee(FuncId),
}

/// One step narrowing a node's participants: a `group` (every unit of `persp` runs the body:
/// `index` is `None`) or a `split` case (unit number `index` of `persp` runs it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Elem {
    /// The perspective of the units.
    pub persp: Persp,
    /// Which unit, counted in units of `persp` from the start of the enclosing unit.
    pub index: Option<u64>,
}

/// A node of the data-control-flow graph.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// The region it belongs to.
    pub region: usize,
    /// The scope or accessing instruction.
    pub inst: InstId,
    /// Where it ends.
    pub end: PointId,
    /// What it does to the region's memory.
    pub mode: Mode,
    /// Its participants, from the region's start.
    pub chain: Vec<Elem>,
    /// The memory to name in reports.
    pub mem: MemRef,
    /// The source of the scope or access.
    pub span: Span,
    /// For a call: the callee and which of its memories this node stands for.
    pub calls: Vec<(FuncId, Key)>,
    /// For a `partition` or `claim` scope: the accesses inside it that touch the memory.
    /// Empty for a single instruction and for an `async` scope, which act as one step (the
    /// copies of an `async` scope are complete only at its end).
    pub inner: Vec<Inner>,
}

/// An access inside a `partition` or `claim` scope node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inner {
    /// Its instruction.
    pub inst: InstId,
    /// Where its access ends ([`access_end`]): the instruction's exit, or for an
    /// asynchronous copy or a wgmma the wait that completes it.
    pub end: PointId,
    /// Whether that end lies past the scope (the wait of an `async` scope around the
    /// `partition`, say): a path from it has left this run of the scope.
    pub past: bool,
}

/// Items, regions and nodes of one function.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    /// Every item.
    pub items: Vec<Item>,
    /// The item of each root memory name.
    pub item_of: HashMap<MemId, usize>,
    /// The footprint item of each call with one.
    pub footprint_of: HashMap<InstId, usize>,
    /// Every region.
    pub regions: Vec<Region>,
    /// Every node; those of one region are contiguous.
    pub nodes: Vec<Node>,
    /// For each region, its nodes by start point.
    pub starts: Vec<HashMap<PointId, usize>>,
    /// Every register some instruction of the function reads.
    pub used: HashSet<Reg>,
}

/// The root of a memory name (following the names it narrows).
pub(crate) fn root(f: &Function, m: MemId) -> MemId {
    let mut m = m;
    while let Some(p) = f.mems[m.index()].parent {
        m = p;
    }
    m
}

/// Registers with their defining instructions.
pub(crate) type Defs = HashMap<Reg, Vec<InstId>>;

/// Collects the defining instructions of every register.
pub(crate) fn defs(cfg: &Cfg<'_>) -> Defs {
    let mut out: Defs = HashMap::new();
    for (id, info) in cfg.insts.iter().enumerate() {
        for r in info.inst.kind.defs() {
            out.entry(r).or_default().push(id);
        }
    }
    out
}

/// The memory operands of an instruction: each access with its pointer register and, for an
/// element operand, its index register.
pub(crate) fn operands(f: &Function, kind: &InstKind) -> Vec<(AccessId, Reg, Option<Reg>)> {
    match kind {
        InstKind::Load { ptr, index, access, .. }
        | InstKind::Store { ptr, index, access, .. }
        | InstKind::LoadVec { ptr, index, access, .. }
        | InstKind::StoreVec { ptr, index, access, .. } => vec![(*access, *ptr, Some(*index))],
        InstKind::Intrinsic { args, accesses, .. } => {
            let mem = args.iter().filter_map(|a| match a {
                IntrArg::Elem { ptr, index } => Some((*ptr, Some(*index))),
                IntrArg::Val(r) if is_memory(f.reg_ty(*r)) => Some((*r, None)),
                IntrArg::Val(_) => None,
            });
            accesses.iter().zip(mem).map(|(a, (p, i))| (*a, p, i)).collect()
        }
        InstKind::Call { args, accesses, .. } => {
            let ptrs = args.iter().filter(|r| is_memory(f.reg_ty(**r)));
            accesses.iter().zip(ptrs).map(|(a, p)| (*a, *p, None)).collect()
        }
        _ => Vec::new(),
    }
}

/// Whether a register of this type names memory: a pointer, or a typed tensor map (the
/// array its TMA copies read and stores write).
fn is_memory(t: Type) -> bool {
    matches!(t, Type::Ptr | Type::TensorMap(_))
}

/// How many consecutive elements, from its index, each element operand of `kind` touches:
/// a vector access's width, the elements of a `cp.async` copy's bytes (both ends), the 16
/// bytes of an `ldmatrix` row, 1 for every other access with an index; `None` where the
/// count is not known (a copy whose byte count is not a constant, a TMA box).
pub(crate) fn width(f: &Function, cfg: &Cfg<'_>, defs: &Defs, kind: &InstKind) -> Option<i128> {
    match kind {
        InstKind::LoadVec { dsts: v, .. } | InstKind::StoreVec { values: v, .. } => Some(v.len() as i128),
        InstKind::Intrinsic { intrinsic, args, accesses, .. } => {
            let elem = || {
                let a = accesses.first()?;
                Some(i128::from(f.mems[f.accesses[a.index()].mem.index()].elem.size().max(1)))
            };
            let name = intrinsic.sig().name;
            // A width is whole elements, at least one: a copy of part of an element (four
            // bytes into a `double` slot) has none the proofs could use, and counted as 0 it
            // made every interval empty and two such copies into one element disjoint
            // (review R21 F1; the simulator refuses it at run time).
            let whole = |bytes: i128, e: i128| (bytes > 0 && e > 0 && bytes % e == 0).then(|| bytes / e);
            if intrinsic.is_cp_async() {
                let Some(IntrArg::Val(b)) = args.get(2) else { return None };
                whole(constant(cfg, defs, *b)?, elem()?)
            } else if name.starts_with("ldmatrix") {
                Some(16 / elem()?)
            } else if intrinsic.is_tma_store() {
                // The box a store reads from its source, as a load writes it.
                let Some(IntrArg::Val(map)) = args.first() else { return None };
                match f.reg_ty(*map) {
                    prism_ir::ir::Type::TensorMap(m) => Some(i128::from(m.box_bytes()) / i128::from(m.elem.size())),
                    _ => None,
                }
            } else if intrinsic.is_tma() {
                // A typed map's box: its elements from the destination on (the swizzle
                // permutes 16-byte chunks within them).
                let Some(IntrArg::Val(map)) = args.get(1) else { return None };
                match f.reg_ty(*map) {
                    prism_ir::ir::Type::TensorMap(m) => whole(i128::from(m.box_bytes()), elem()?),
                    _ => None,
                }
            } else if intrinsic.sig().family == prism_types::intrinsics::Family::AsyncCopy || intrinsic.is_wgmma() {
                // A wgmma's tile (`view[i]` of the swizzled forms) is a whole 64-row or
                // N-row slice, whose extent depends on the layout: unknown here.
                None
            } else {
                Some(1)
            }
        }
        _ => Some(1),
    }
}

/// The value of a register defined once by an integer constant.
pub(crate) fn constant(cfg: &Cfg<'_>, defs: &Defs, r: Reg) -> Option<i128> {
    let mut r = r;
    for _ in 0..64 {
        let [d] = defs.get(&r)?.as_slice() else { return None };
        match &cfg.insts[*d].inst.kind {
            InstKind::Const { value: prism_types::tir::ConstValue::Int(v), .. } => return Some(*v),
            InstKind::Copy { src, .. } => r = *src,
            _ => return None,
        }
    }
    None
}

/// The shared bytes a pointer register points into, when it comes from a shared address.
fn shared_range(cfg: &Cfg<'_>, defs: &Defs, mut r: Reg) -> Option<(u64, u64)> {
    for _ in 0..64 {
        let [d] = defs.get(&r)?.as_slice() else { return None };
        match &cfg.insts[*d].inst.kind {
            InstKind::SharedAddr { offset, len, .. } => return Some((*offset, offset.saturating_add(*len))),
            InstKind::PtrOffset { base, .. } => r = *base,
            InstKind::Copy { src, .. } => r = *src,
            _ => return None,
        }
    }
    None
}

impl Graph {
    /// Builds the items, regions and nodes of function `f`.
    pub fn build(p: &Program, f: &Function, cfg: &Cfg<'_>, defs: &Defs) -> Graph {
        // A loop's condition is read at the end of its header, so `uses` leaves it out.
        let used = cfg.insts.iter().flat_map(|i| {
            let mut u = i.inst.kind.uses();
            if let InstKind::Loop { cond, .. } = &i.inst.kind {
                u.push(*cond);
            }
            u
        });
        let mut g = Graph { used: used.collect(), ..Graph::default() };
        g.items_of(p, f, cfg, defs);
        g.regions_of(f, cfg);
        for r in 0..g.regions.len() {
            g.nodes_of(r, f, cfg, defs);
        }
        g
    }

    fn items_of(&mut self, p: &Program, f: &Function, cfg: &Cfg<'_>, defs: &Defs) {
        for (i, m) in f.mems.iter().enumerate() {
            let shared = match m.kind {
                MemKind::Shared => true,
                MemKind::Param => false,
                _ => continue,
            };
            let persp = if shared { Persp::BLOCK } else { m.persp };
            self.item_of.insert(MemId(i as u32), self.items.len());
            self.items.push(Item { shared, range: None, persp });
        }
        for (id, info) in cfg.insts.iter().enumerate() {
            // The bytes of a shared array are those of the shared address its accesses use.
            for (a, ptr, _) in operands(f, &info.inst.kind) {
                let r = root(f, f.accesses[a.index()].mem);
                if let Some(&it) = self.item_of.get(&r)
                    && self.items[it].shared
                    && self.items[it].range.is_none()
                {
                    self.items[it].range = shared_range(cfg, defs, ptr);
                }
            }
            if let InstKind::Call { func, smem_offset, .. } = &info.inst.kind {
                let size = p.func(*func).smem_size;
                if size > 0 {
                    self.footprint_of.insert(id, self.items.len());
                    self.items.push(Item {
                        shared: true,
                        range: Some((*smem_offset, smem_offset + size)),
                        persp: Persp::BLOCK,
                    });
                }
            }
        }
    }

    pub(crate) fn overlap(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.items[a], &self.items[b]);
        a == b
            || (x.shared
                && y.shared
                && match (x.range, y.range) {
                    (Some((s1, e1)), Some((s2, e2))) => s1 < e2 && s2 < e1,
                    // A shared array whose bytes are unknown may be any shared memory.
                    _ => true,
                })
    }

    fn regions_of(&mut self, f: &Function, cfg: &Cfg<'_>) {
        let mut sets = BTreeSet::new();
        for a in 0..self.items.len() {
            let set: Vec<usize> = (0..self.items.len()).filter(|&b| self.overlap(a, b)).collect();
            sets.insert(set);
        }
        for set in sets {
            let d = self.items[set[0]].persp;
            let (base, stop, c0) = (0, cfg.exit, f.entry);
            self.regions.push(Region { kind: RegionKind::Top(set), base, stop, c0, d, scope: None });
        }
        for (id, info) in cfg.insts.iter().enumerate() {
            if let InstKind::Scope { kind, mem, view, .. } = &info.inst.kind {
                // Async scopes, pipelines and their stages are opaque: their insides are
                // ordered by their waits and the pipeline's barrier, not by inference.
                if matches!(kind, ScopeKind::Async | ScopeKind::Pipeline | ScopeKind::Stage | ScopeKind::LateStage)
                    || !self.item_of.contains_key(&root(f, *mem))
                {
                    continue;
                }
                let c0 = cfg.frames[info.frame].code;
                let d = if *kind == ScopeKind::Partition { f.mems[view.index()].persp } else { c0 };
                self.regions.push(Region {
                    kind: RegionKind::View(*view),
                    base: info.children[0],
                    stop: info.exit,
                    c0,
                    d,
                    scope: Some(id),
                });
            }
        }
    }

    /// The item of the root of memory name `m`, if it is tracked.
    pub fn item(&self, f: &Function, m: MemId) -> Option<usize> {
        self.item_of.get(&root(f, m)).copied()
    }

    /// Whether access `a` is one region `r` orders directly (when not inside a nested scope
    /// on the same memory).
    pub fn touches(&self, f: &Function, r: usize, a: AccessId) -> bool {
        let info = &f.accesses[a.index()];
        if info.kind == AccessKind::Volatile {
            return false;
        }
        match &self.regions[r].kind {
            RegionKind::Top(set) => self.item(f, info.mem).is_some_and(|i| set.contains(&i)),
            RegionKind::View(v) => info.mem == *v,
        }
    }

    /// Whether a scope on `mem` is a node of region `r`.
    fn scope_in(&self, f: &Function, r: usize, mem: MemId) -> bool {
        match &self.regions[r].kind {
            RegionKind::Top(set) => self.item(f, mem).is_some_and(|i| set.contains(&i)),
            RegionKind::View(v) => mem == *v,
        }
    }

    /// Whether access `a` inside a scope node of region `r` counts for the node: any access to
    /// the region's memory, through any name.
    fn counts_inside(&self, f: &Function, r: usize, a: AccessId) -> bool {
        let info = &f.accesses[a.index()];
        if info.kind == AccessKind::Volatile {
            return false;
        }
        match &self.regions[r].kind {
            RegionKind::Top(set) => self.item(f, info.mem).is_some_and(|i| set.contains(&i)),
            RegionKind::View(v) => root(f, info.mem) == root(f, *v),
        }
    }

    /// Whether instruction `d` inside a scope node of region `r` touches the region's memory.
    fn touches_inside(&self, f: &Function, r: usize, d: InstId, cfg: &Cfg<'_>) -> bool {
        self.footprint_in(r, d)
            || operands(f, &cfg.insts[d].inst.kind).iter().any(|(a, _, _)| self.counts_inside(f, r, *a))
    }

    /// Whether the call at `inst` has a footprint in region `r`.
    fn footprint_in(&self, r: usize, inst: InstId) -> bool {
        match (&self.regions[r].kind, self.footprint_of.get(&inst)) {
            (RegionKind::Top(set), Some(i)) => set.contains(i),
            _ => false,
        }
    }

    fn nodes_of(&mut self, r: usize, f: &Function, cfg: &Cfg<'_>, defs: &Defs) {
        let region = self.regions[r].clone();
        let mut starts = HashMap::new();
        let range = match region.scope {
            Some(s) => cfg.descendants(s),
            None => 0..cfg.insts.len(),
        };
        for id in range {
            let info = &cfg.insts[id];
            if !cfg.frame_within(info.frame, region.base) || self.nested(f, r, cfg, info.frame, region.base) {
                continue;
            }
            let mut mode = Mode::default();
            let mut mem = None;
            let mut calls = Vec::new();
            let mut inner = Vec::new();
            let (start, end) = match &info.inst.kind {
                InstKind::Scope { kind, mem: m, .. } if self.scope_in(f, r, *m) => {
                    for d in cfg.descendants(id) {
                        let k = &cfg.insts[d].inst.kind;
                        for (a, _, _) in operands(f, k) {
                            if self.counts_inside(f, r, a) {
                                mode.add(f.accesses[a.index()].kind, k, &self.used);
                            }
                        }
                        if self.footprint_in(r, d) {
                            mode.write = true;
                        }
                        if self.touches_inside(f, r, d, cfg) {
                            let (end, at) = access_end(cfg, defs, d);
                            // The exit of the function, or of an instruction outside the
                            // scope (the scope's own exit included), is past it.
                            let past = at.is_none_or(|w| w != d && (w == id || !cfg.inside(w, id)));
                            inner.push(Inner { inst: d, end, past });
                        }
                    }
                    let mut end = info.exit;
                    if *kind == ScopeKind::Pipeline {
                        // The pipeline's slots are ordered inside it (docs/soundness.md §4.3.1):
                        // to the rest of the program the loop is one access that writes
                        // the ring, with no place for a barrier inside.
                        mode.write = true;
                        inner.clear();
                    }
                    if *kind == ScopeKind::Async {
                        mode.write = true;
                        inner.clear();
                        // The copies complete at the wait `prism_ir::asyncwait` placed for
                        // them, which may be after the scope: the node lasts until then, so
                        // the barriers that publish the copies come after the wait.
                        end = cfg.insts[async_end(cfg, id)].exit;
                    }
                    mem = Some(MemRef::Mem(root(f, *m)));
                    (info.enter, end)
                }
                k => {
                    for (n, (a, _, _)) in operands(f, k).into_iter().enumerate() {
                        if self.touches(f, r, a) {
                            let acc = &f.accesses[a.index()];
                            mode.add(acc.kind, k, &self.used);
                            mem.get_or_insert(MemRef::Mem(root(f, acc.mem)));
                            if let InstKind::Call { func, .. } = k {
                                calls.push((*func, Key::Param(n)));
                            }
                        }
                    }
                    if let (true, InstKind::Call { func, .. }) = (self.footprint_in(r, id), k) {
                        mode.write = true;
                        mem.get_or_insert(MemRef::Callee(*func));
                        calls.push((*func, Key::Smem));
                    }
                    (info.enter, access_end(cfg, defs, id).0)
                }
            };
            let Some(mem) = mem else { continue };
            if mode.is_empty() {
                continue;
            }
            let chain = chain(cfg, info.frame, region.base);
            starts.insert(start, self.nodes.len());
            self.nodes.push(Node { region: r, inst: id, end, mode, chain, mem, span: info.inst.span, calls, inner });
        }
        self.starts.push(starts);
    }

    /// Whether a frame lies inside a scope that is itself a node of region `r` (its accesses
    /// belong to that node).
    fn nested(&self, f: &Function, r: usize, cfg: &Cfg<'_>, frame: FrameId, base: FrameId) -> bool {
        cfg.ancestors(frame).take_while(|&a| a != base).any(|a| match cfg.frames[a].kind {
            FrameKind::Scope { mem, .. } => self.scope_in(f, r, mem),
            _ => false,
        })
    }
}

/// Where the memory access of instruction `id` ends, with the instruction whose exit that
/// is (`None` for the function's exit). A wgmma's tile reads last until the tensor cores
/// are done with them, and an asynchronous copy reads its source until the wait for its
/// scope: a barrier inside the scope after the copy orders nothing of that read (review
/// R66, a race with a later write to the source). The same holds for a copy inside a
/// `partition` or `claim` scope node of the source, which the scope's exit does not end
/// (review R70: a view of the source opened inside the `async` scope).
fn access_end(cfg: &Cfg<'_>, defs: &Defs, id: InstId) -> (PointId, Option<InstId>) {
    let w = match &cfg.insts[id].inst.kind {
        InstKind::Intrinsic { intrinsic, .. } if intrinsic.is_wgmma() => wgmma_end(cfg, defs, id),
        InstKind::Intrinsic { intrinsic, .. } if intrinsic.is_cp_async() || intrinsic.is_tma() => {
            Some(copy_end(cfg, id))
        }
        _ => Some(id),
    };
    (w.map_or(cfg.exit, |w| cfg.insts[w].exit), w)
}

/// Where the `async` scope at instruction `id` ends for what it orders: at the wait
/// `prism_ir::asyncwait` placed for its copies when that is after the scope, else at its
/// end (TMA copies complete at the scope's end, where every thread waits on its mbarrier).
/// The instruction whose exit that is.
fn async_end(cfg: &Cfg<'_>, id: InstId) -> InstId {
    let InstKind::Scope { view, .. } = &cfg.insts[id].inst.kind else { return id };
    cfg.insts
        .iter()
        .position(|w| matches!(&w.inst.kind, InstKind::AsyncWait { views, .. } if views.contains(view)))
        .filter(|&w| !cfg.inside(w, id))
        .unwrap_or(id)
}

/// Where the source read of the asynchronous copy at instruction `id` ends: the hardware
/// reads the source until the copy completes, at the end of the nearest `async` scope
/// around it ([`async_end`]). A copy in a pipeline's fill keeps its instruction's end: the
/// pipeline orders its own slots, and its last wait and barrier come before anything after
/// the loop (docs/soundness.md §4.3.1). The instruction whose exit that is.
fn copy_end(cfg: &Cfg<'_>, id: InstId) -> InstId {
    let scope = cfg.ancestors(cfg.insts[id].frame).find_map(|fr| match cfg.frames[fr].kind {
        FrameKind::Scope { kind: ScopeKind::Async, .. } => cfg.frames[fr].owner,
        _ => None,
    });
    scope.map_or(id, |s| async_end(cfg, s))
}

/// Where the shared-memory reads of the wgmma at instruction `id` end: `wgmma.mma_async`
/// reads its tiles asynchronously, until a `wgmma.wait_group` completes its group. The
/// first wait that completes it on every path ([`wgmma_wait_after`]: after a commit that
/// closes its group, in its block or after the loops around it) certainly does; without
/// one the reads last to the function's end (`None`). The barriers that order the tiles'
/// next writes after the reads are placed after that point (docs/soundness.md §4.3, §8).
/// A wait in the wgmma's own block, or after the loops around it: an interval that leaves a
/// loop body hides the back edge from the analysis, so safe code may not write the tiles
/// anywhere in those loops (`asyncs.rs`, `wgmma-unwaited`, which also rejects safe code
/// without a wait).
fn wgmma_end(cfg: &Cfg<'_>, defs: &Defs, id: InstId) -> Option<InstId> {
    wgmma_wait_after(cfg, defs, id).map(|(_, w)| w)
}

/// The first wait that completes the wgmma at instruction `id` on every path: in its own
/// block, or, when its block is a loop's with none after it, the first after that loop in
/// the loop's block (every iteration's wgmma is complete there), and so on outwards through
/// loops. With the first instruction whose writes to the tiles would land before the wait:
/// the outermost loop crossed (later iterations run its earlier instructions again), or
/// `id`.
///
/// A `wgmma.wait_group(n)` waits only for *committed* groups, all but the `n` newest: a
/// wgmma no `wgmma_commit_group` has closed is not waited for at all (PTX ISA,
/// `wgmma.wait_group`). So a wait counts only after a commit that follows the wgmma in the
/// blocks walked (its group's), and `wgmma_wait(n)` with `n > 0` only in the wgmma's own
/// block and after `n` further commits there (groups newer than the wgmma's; commits in
/// nested code are not counted, which can only make the wgmma's group older than counted).
/// Every path from the wgmma must reach the wait and one of those commits: no `return`
/// anywhere between them, and no `break` or `continue` there that leaves the wait's block,
/// or leaves a loop crossed on the way while every counted commit is inside that loop (one
/// that ends a loop nested wholly between them is harmless).
pub(crate) fn wgmma_wait_after(cfg: &Cfg<'_>, defs: &Defs, id: InstId) -> Option<(InstId, InstId)> {
    let (mut frame, mut from) = (cfg.insts[id].frame, id);
    // Commits after the wgmma in the blocks walked so far: the first closes its group.
    let mut commits: Vec<InstId> = Vec::new();
    // The loops crossed, innermost first.
    let mut crossed: Vec<InstId> = Vec::new();
    loop {
        for w in (from + 1..cfg.insts.len()).filter(|&w| cfg.insts[w].frame == frame) {
            let InstKind::Intrinsic { intrinsic, args, .. } = &cfg.insts[w].inst.kind else { continue };
            match intrinsic.sig().name {
                "wgmma_commit_group" => commits.push(w),
                "wgmma_wait" => {
                    let Some(IntrArg::Val(r)) = args.first() else { continue };
                    let Some(n) = constant(cfg, defs, *r) else { continue };
                    let newer = commits.len().saturating_sub(1) as i128;
                    if !commits.is_empty() && (n == 0 || (crossed.is_empty() && newer >= n)) {
                        return (!escapes(cfg, from, w, &crossed, &commits)).then_some((from, w));
                    }
                }
                _ => {}
            }
        }
        let fr = &cfg.frames[frame];
        let owner = fr.owner?;
        if fr.kind != FrameKind::Loop {
            return None;
        }
        crossed.push(owner);
        (frame, from) = (cfg.insts[owner].frame, owner);
    }
}

/// Whether a path from instruction `from` may miss the wait `to`, a later instruction of
/// the same block (`from` is the wgmma or the outermost loop around it that the walk left),
/// or every commit of `commits` (those counted after the wgmma): a `return` anywhere in
/// between; a `break` or `continue` in between whose loop encloses `from` (it leaves the
/// wait's block); or one whose loop is one of `crossed` (the loops walked out of) and holds
/// every counted commit. Leaving a crossed loop early lands after it, on the way to the
/// wait, so a commit after that loop still closes the wgmma's group (in the last
/// iteration, `continue` leaves the loop too); one nested wholly in between is harmless.
fn escapes(cfg: &Cfg<'_>, from: InstId, to: InstId, crossed: &[InstId], commits: &[InstId]) -> bool {
    (from..to).any(|x| match cfg.insts[x].inst.kind {
        InstKind::Return { .. } => true,
        InstKind::Break | InstKind::Continue => {
            // The innermost loop around it.
            let target = cfg.ancestors(cfg.insts[x].frame).find_map(|a| {
                let fr = &cfg.frames[a];
                if fr.kind == FrameKind::Loop { fr.owner } else { None }
            });
            match target {
                Some(l) if crossed.contains(&l) => commits.iter().all(|&c| cfg.inside(c, l)),
                Some(l) => l <= from,
                None => true,
            }
        }
        _ => false,
    })
}

/// The shape of the wgmma `k` (its intrinsic without `_sw`, which fixes the input type and
/// K, and its N), when `k` is a wgmma whose N is a constant.
pub(crate) fn wgmma_shape(cfg: &Cfg<'_>, defs: &Defs, k: &InstKind) -> Option<(&'static str, i128)> {
    let InstKind::Intrinsic { intrinsic, args, .. } = k else { return None };
    if !intrinsic.is_wgmma() {
        return None;
    }
    let Some(IntrArg::Val(n)) = args.get(3) else { return None };
    let name = intrinsic.sig().name;
    Some((name.strip_suffix("_sw").unwrap_or(name), constant(cfg, defs, *n)?))
}

/// The participants of code in `frame`, from the start of the region whose block is `base`.
pub(crate) fn chain(cfg: &Cfg<'_>, frame: FrameId, base: FrameId) -> Vec<Elem> {
    let mut out = Vec::new();
    for a in cfg.ancestors(frame).take_while(|&a| a != base) {
        let fr = &cfg.frames[a];
        let parent_code = fr.parent.map(|p| cfg.frames[p].code);
        match fr.kind {
            FrameKind::Group if parent_code != Some(fr.code) => out.push(Elem { persp: fr.code, index: None }),
            FrameKind::Case { offset, count } => out.push(Elem { persp: fr.code, index: Some(offset / count) }),
            _ => {}
        }
    }
    out.reverse();
    out
}

/// The barrier perspective for an edge between nodes with participants `a` and `b` in a
/// region starting at code `c0` whose sharing unit is `d`.
///
/// Walk both chains from the region's start while they agree: the same split case narrows
/// both to one unit; the same `group` replicates both over its units, which keeps conflicts
/// inside one unit only when the sharing unit already lies within it. Where the chains part,
/// the smallest aligned unit holding both positions is the answer; when one chain ends first,
/// its node involves the whole current unit. Finally, conflicts never cross a sharing unit,
/// so when `d` fits inside the answer, `d` is enough.
pub(crate) fn barrier_scope(facts: Facts, c0: Persp, d: Persp, a: &[Elem], b: &[Elem]) -> Persp {
    let mut unit = c0;
    for (x, y) in a.iter().zip(b) {
        if x == y {
            if x.index.is_none() && !facts.narrower_eq(d, x.persp) {
                break;
            }
            unit = x.persp;
            continue;
        }
        if let Some(u) = smallest_aligned(facts, unit, x, y) {
            unit = u;
        }
        break;
    }
    if facts.narrower_eq(d, unit) { d } else { unit }
}

/// The smallest unit inside `unit` that holds both split cases `x` and `y` (units of one
/// level), if one narrower than `unit` exists.
fn smallest_aligned(facts: Facts, unit: Persp, x: &Elem, y: &Elem) -> Option<Persp> {
    let (Some(i), Some(j)) = (x.index, y.index) else { return None };
    if x.persp.level != y.persp.level || x.persp.level == Level::Grid {
        return None;
    }
    let level = x.persp.level;
    let (nx, ny) = (u128::from(x.persp.n), u128::from(y.persp.n));
    let lo = (u128::from(i) * nx).min(u128::from(j) * ny);
    let hi = ((u128::from(i) + 1) * nx).max((u128::from(j) + 1) * ny);
    let step = u128::from(lcm(x.persp.n, y.persp.n)?);
    let limit = u128::from(facts.units_in(Persp { level, n: 1 }, unit)).min(1 << 24);
    let mut m = step;
    while m <= limit {
        let p = Persp { level, n: u64::try_from(m).ok()? };
        if lo / m == (hi - 1) / m && facts.narrower_eq(p, unit) {
            return (p != unit).then_some(p);
        }
        m += step;
    }
    None
}
