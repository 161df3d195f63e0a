//! The kernel IR: a structured control-flow graph with explicit barriers and collectives.
//!
//! Each function body is a tree of blocks: straight-line instructions plus structured
//! instructions (`if`, `loop`, `group`, `split`, memory scopes) that own nested blocks. It is a
//! CFG in which every branch has a known join and every loop a known exit, which is what both
//! consumers want: the CUDA printer emits `if`/`for` directly, and the simulator compiles
//! blocks to flat code with explicit reconvergence points. Unlike TIR, there are no names,
//! views or nested expressions: every value is in a register, every memory access is a
//! `load`/`store` through a pointer register and an element index computed by instructions,
//! and synchronisation is explicit `barrier` instructions (inserted by `prism_sync`).
//!
//! Invariant: registers, locals, memory names and accesses index their function's tables.
//! Invariant: `break`/`continue` appear only inside a `loop` body (not crossing a `group`,
//! `split` or `scope`), which the verifier checks.

use crate::entities::{AccessId, FuncId, LocalId, MemId, Reg};
use prism_span::Span;
use prism_types::intrinsics::IntrinsicId;
use prism_types::perspective::{Facts, Level, Persp};
use prism_types::tir::{BinOp, ConstValue, FnKind, RawIndex, UnOp, Unroll};
use prism_types::ty::Scalar;

/// A register's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A scalar.
    Scalar(Scalar),
    /// A pointer to memory (global, shared or thread-local), with an element offset.
    Ptr,
    /// An opaque handle (`CUTensorMap`), passed through to intrinsics.
    Opaque,
    /// A typed TMA tensor map: the launcher builds it from an array argument.
    TensorMap(prism_types::ty::TensorMapTy),
}

/// A whole program: every function of one source file.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// Functions, indexed by [`FuncId`].
    pub functions: Vec<Function>,
}

impl Program {
    /// Numbers every function's blocks ([`Function::number_blocks`]).
    pub fn number_blocks(&mut self) {
        for f in &mut self.functions {
            f.number_blocks();
        }
    }

    /// The function with id `id`.
    pub fn func(&self, id: FuncId) -> &Function {
        &self.functions[id.index()]
    }

    /// A function by name.
    pub fn find(&self, name: &str) -> Option<(FuncId, &Function)> {
        self.functions.iter().enumerate().find(|(_, f)| f.name == name).map(|(i, f)| (FuncId(i as u32), f))
    }

    /// Whether kernel `id` may be launched with more than one dimension: it reads a
    /// coordinate, or its bound fixes a multi-dimensional block shape. Then the code must
    /// compute linear indices from all three dimensions.
    pub fn multi_dim(&self, id: FuncId) -> bool {
        self.uses_coords(id) || self.functions[id.index()].block_shape.is_some_and(Dim3::is_multi)
    }

    /// What kernel `id` allows of a launch's shape.
    pub fn shape_rule(&self, id: FuncId) -> ShapeRule {
        ShapeRule { multi_dim: self.multi_dim(id), block: self.functions[id.index()].block_shape }
    }

    /// Whether function `id`, or a function it calls, reads a coordinate or an extent of a
    /// multi-dimensional launch (`id(x)`, `block_dim(y)`, ...).
    pub fn uses_coords(&self, id: FuncId) -> bool {
        let mut seen = vec![false; self.functions.len()];
        let mut stack = vec![id];
        while let Some(f) = stack.pop() {
            if std::mem::replace(&mut seen[f.index()], true) {
                continue;
            }
            let mut found = false;
            self.functions[f.index()].body.walk(&mut |k| match k {
                InstKind::Raw {
                    index:
                        RawIndex::ThreadCoord(_)
                        | RawIndex::BlockCoord(_)
                        | RawIndex::BlockExtent(_)
                        | RawIndex::GridExtent(_),
                    ..
                } => found = true,
                InstKind::Call { func, .. } => stack.push(*func),
                _ => {}
            });
            if found {
                return true;
            }
        }
        false
    }
}

/// The extent of a launch along its three dimensions (CUDA's `dim3`). The perspectives are
/// defined on the linear order `x + X (y + Y z)`, which is CUDA's too: a 1-D launch is
/// `(n, 1, 1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Along x.
    pub x: u32,
    /// Along y.
    pub y: u32,
    /// Along z.
    pub z: u32,
}

impl Dim3 {
    /// The number of units: `x y z` (which may exceed `u32`).
    pub fn count(self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }

    /// Whether it has more than one dimension.
    pub fn is_multi(self) -> bool {
        self.y != 1 || self.z != 1
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3 { x, y, z }
    }
}

/// A shape written out in all three dimensions, for messages about shapes.
struct Shape(Dim3);

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}", self.0.x, self.0.y, self.0.z)
    }
}

impl std::fmt::Display for Dim3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_multi() { write!(f, "{}x{}x{}", self.x, self.y, self.z) } else { write!(f, "{}", self.x) }
    }
}

/// A kernel's dynamic shared array: `params[count]` items of `elem` from byte `offset` of
/// the block's shared memory (after every static allocation, [`DYNAMIC_ALIGN`]-aligned).
/// Its `SharedAddr` has length [`DYNAMIC_LEN`]: the launch decides it. Every launcher
/// sizes the block's shared memory as `offset + count * size(elem)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DynSmem {
    /// The index of the parameter that counts its items.
    pub count: usize,
    /// Its element type.
    pub elem: Scalar,
    /// Its first byte.
    pub offset: u64,
}

pub use prism_types::tir::{DYNAMIC_ALIGN, DYNAMIC_LEN};

/// The most shared memory one block may have on any GPU Prism targets (227 KiB, sm_90's
/// opt-in maximum): a dynamic shared array past it is refused at launch, before a device
/// is asked for its own limit.
pub const MAX_BLOCK_SMEM: u64 = 227 * 1024;

impl DynSmem {
    /// The block's shared bytes for a launch with `count` items, or why there are none:
    /// a negative count, or more than `limit` bytes.
    pub fn bytes(self, count: i64, limit: u64) -> Result<u64, String> {
        let n = u64::try_from(count).map_err(|_| format!("the dynamic shared array cannot have {count} items"))?;
        let total = n.checked_mul(self.elem.size()).and_then(|b| b.checked_add(self.offset));
        match total {
            Some(t) if t <= limit => Ok(t),
            _ => Err(format!(
                "{count} items of `{}` for the dynamic shared array make more than the {limit} bytes of shared memory a block may have",
                self.elem.name()
            )),
        }
    }
}

/// What a kernel allows of a launch's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeRule {
    /// Whether it may have more than one dimension ([`Program::multi_dim`]).
    pub multi_dim: bool,
    /// The one block shape it may have (`@requires(..., block=[X, Y, Z])`).
    pub block: Option<Dim3>,
}

/// Checks the shape of a launch against CUDA's limits (a block of at most 1024 threads and
/// 64 along z; a grid of at most 2^31 - 1 blocks along x and 65,535 along y and z), against
/// the kernel's fixed block shape if it has one and, for a kernel that reads no coordinate,
/// that it is 1-D: `id()` is then computed from the x indices alone. Returns the linear
/// block and thread counts.
pub fn check_shape(name: &str, rule: ShapeRule, grid: Dim3, block: Dim3) -> Result<(u32, u32), String> {
    if grid.count() == 0 || block.count() == 0 {
        return Err("a launch needs at least one block of at least one thread".into());
    }
    if block.count() > 1024 || block.z > 64 {
        return Err(format!("a block of {block} threads is more than the hardware's limit (1024 in all, 64 along z)"));
    }
    if grid.x > (1 << 31) - 1 || grid.y > 65_535 || grid.z > 65_535 {
        return Err(format!(
            "a grid of {grid} blocks is more than CUDA's limit (2^31 - 1 along x, 65,535 along y and z)"
        ));
    }
    if grid.count() > u64::from(u32::MAX) {
        return Err(format!("a grid of {grid} blocks has more than 2^32 - 1 blocks"));
    }
    if let Some(want) = rule.block
        && want != block
    {
        return Err(format!(
            "`{name}` is written for blocks of exactly {} threads (`block=` in its `@requires`), not {}",
            Shape(want),
            Shape(block)
        ));
    }
    if !rule.multi_dim && (grid.is_multi() || block.is_multi()) {
        return Err(format!(
            "`{name}` reads no coordinate (`id(x)`, `id(y)`, `id(z)`), so its code indexes threads and blocks along x only: launch it with one dimension ({} blocks of {} threads)",
            grid.count(),
            block.count()
        ));
    }
    Ok((grid.count() as u32, block.count() as u32))
}

/// A function.
#[derive(Clone, Debug)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// Kernel or device function.
    pub kind: FnKind,
    /// The perspective the body starts at.
    pub entry: Persp,
    /// What the bound guarantees about threads per block and blocks per grid.
    pub facts: Facts,
    /// Shared memory the body uses, in bytes, from the function's shared base.
    pub smem_size: u64,
    /// `@launch_bounds`, if given (or the block shape's threads).
    pub launch_bounds: Option<u64>,
    /// The block shape `@requires(..., block=[X, Y, Z])` fixes, if given.
    pub block_shape: Option<Dim3>,
    /// A kernel's dynamic shared array (a `shared(T[n])` parameter), if it has one.
    pub dyn_smem: Option<DynSmem>,
    /// `@launch_bounds(n, m)`'s `m`, if given.
    pub min_blocks: Option<u64>,
    /// The most blocks a launch may have for the index arithmetic that synchronisation
    /// inference proved free of wraparound (`prism_sync`'s ownership proof, when an index
    /// like `b * 32` stays inside its `int` only for that many blocks); `None` for no limit
    /// beyond CUDA's. For a kernel it includes every callee's limit. Launchers refuse
    /// larger launches.
    pub max_blocks: Option<u64>,
    /// Parameters: registers defined on entry.
    pub params: Vec<Reg>,
    /// The return type, if any.
    pub ret: Option<Type>,
    /// Register table.
    pub regs: Vec<RegInfo>,
    /// Thread-local arrays.
    pub locals: Vec<LocalInfo>,
    /// Memory names.
    pub mems: Vec<MemInfo>,
    /// Memory access sites.
    pub accesses: Vec<AccessInfo>,
    /// The body.
    pub body: Block,
    /// Where the function is declared.
    pub span: Span,
}

impl Function {
    /// The type of a register.
    pub fn reg_ty(&self, r: Reg) -> Type {
        self.regs[r.index()].ty
    }

    /// Numbers the function's blocks in pre-order (see [`Block::id`]).
    pub fn number_blocks(&mut self) {
        fn visit(b: &mut Block, next: &mut u32) {
            b.id = *next;
            *next += 1;
            for i in &mut b.insts {
                for nb in i.kind.blocks_mut() {
                    visit(nb, next);
                }
            }
        }
        let mut next = 0;
        visit(&mut self.body, &mut next);
    }

    /// The root of a memory name (following the names it narrows).
    pub fn mem_root(&self, m: MemId) -> MemId {
        let mut m = m;
        while let Some(p) = self.mems[m.index()].parent {
            m = p;
        }
        m
    }

    /// Whether the function may change memory behind one of its pointer parameters (a store,
    /// an atomic that updates, an asynchronous copy, a volatile store or a writable argument
    /// of a call).
    pub fn writes_params(&self) -> bool {
        let writes = self.access_writes();
        self.accesses
            .iter()
            .zip(writes)
            .any(|(a, w)| w && self.mems[self.mem_root(a.mem).index()].kind == MemKind::Param)
    }

    /// Whether the function may change the memory named `m` or a view of it, in the same
    /// sense as [`Function::writes_params`].
    pub fn writes_param(&self, m: MemId) -> bool {
        let writes = self.access_writes();
        self.accesses.iter().zip(writes).any(|(a, w)| w && self.mem_root(a.mem) == m)
    }

    /// Per access site, whether it may change memory: [`AccessKind::writes`], except for the
    /// one element an intrinsic reads through an immutable reference (`atomic_load`,
    /// `volatile_load`). Such a load keeps its atomic or volatile kind, which race detection
    /// and inference need (it orders against stores as an atomic does, and never races with
    /// other atomics), but it changes nothing: counting it as a write made a kernel that only
    /// loads a `ptr(const(T))` atomically lose the `const` in its CUDA and be held to one
    /// block when entered below `grid[1]`.
    pub fn access_writes(&self) -> Vec<bool> {
        use prism_types::intrinsics::ParamKind;
        let mut writes: Vec<bool> = self.accesses.iter().map(|a| a.kind.writes()).collect();
        self.body.walk(&mut |k| {
            let InstKind::Intrinsic { intrinsic, accesses, .. } = k else { return };
            let mut memory =
                intrinsic.sig().params.iter().filter(|p| !matches!(p.kind, ParamKind::Value | ParamKind::OutList(_)));
            // One memory operand, read through an immutable element reference: its one
            // access site only reads.
            if let (Some(p), None, [a]) = (memory.next(), memory.next(), accesses.as_slice())
                && p.kind == (ParamKind::Ref { mutable: false })
                && let Some(w) = writes.get_mut(a.index())
            {
                *w = false;
            }
        });
        writes
    }

    /// The one launch shape a kernel entered below `grid[1]` allows, as (blocks, threads per
    /// block if fixed), when it may write through a pointer parameter.
    ///
    /// Such a kernel is launched as if every unit of its entry perspective called it, and
    /// every unit receives the same pointers: with two units, both would write the same
    /// memory with nothing to tell them apart (safe code has no block or thread index
    /// broader than its entry) and nothing to order them. One unit in the whole launch is
    /// the only launch whose writes the checker's reasoning covers: exactly `n` blocks for a
    /// kernel entered at `block[n]`, one block of exactly `n` threads for `thread[n]`.
    pub fn exact_launch(&self) -> Option<(u64, Option<u64>)> {
        if self.kind != FnKind::Kernel || !self.writes_params() {
            return None;
        }
        match self.entry.level {
            Level::Grid => None,
            Level::Block => Some((self.entry.n, None)),
            Level::Thread => Some((1, Some(self.entry.n))),
        }
    }
}

/// The most threads a launch may have: `id()` of a thread in the grid is an `int`, so a
/// larger launch would give two threads the same index. Every launcher (the simulator,
/// `--device cuda`, the emitted host launchers) refuses larger launches.
pub const MAX_LAUNCH_THREADS: u64 = (1 << 31) - 1;

/// Checks that a launch of `grid` blocks of `block` threads has at most
/// [`MAX_LAUNCH_THREADS`] threads.
pub fn check_launch_threads(grid: u32, block: u32) -> Result<(), String> {
    let threads = u64::from(grid) * u64::from(block);
    if threads > MAX_LAUNCH_THREADS {
        return Err(format!(
            "{grid} blocks of {block} threads is {threads} threads, more than {MAX_LAUNCH_THREADS}: `id()` of a thread in the grid is an `int`, so no launch may have more threads than an `int` counts"
        ));
    }
    Ok(())
}

/// Checks a launch's block count against a kernel's [`Function::max_blocks`].
pub fn check_max_blocks(name: &str, max_blocks: Option<u64>, grid: u32) -> Result<(), String> {
    match max_blocks {
        Some(max) if u64::from(grid) > max => Err(format!(
            "`{name}` may be launched with at most {max} blocks, not {grid}: its synchronisation relies on index arithmetic (such as a block index times a tile size) that stays inside its integer type only up to {max} blocks; compute such indices in `int64` to lift the limit"
        )),
        _ => Ok(()),
    }
}

/// Checks a launch of a kernel entered below `grid[1]` that writes through a pointer
/// parameter against the one shape it allows (`prism_ir::ir::Function::exact_launch`); the
/// message says why and what to write instead. Shared by every launcher.
pub fn check_exact_launch(
    name: &str,
    (blocks, threads): (u64, Option<u64>),
    grid: u32,
    block: u32,
) -> Result<(), String> {
    let fits = u64::from(grid) == blocks && threads.is_none_or(|t| u64::from(block) == t);
    if fits {
        return Ok(());
    }
    let want = match threads {
        Some(t) => format!("exactly {blocks} block of exactly {t} threads"),
        None if blocks == 1 => "exactly 1 block".to_string(),
        None => format!("exactly {blocks} blocks"),
    };
    Err(format!(
        "`{name}` is entered below `grid[1]` and writes through a pointer parameter, so it must be launched as one unit of its entry perspective ({want}), not {grid} x {block}: every unit would get the same pointers and write the same memory; to use more blocks, enter the kernel at `grid[1]` and `partition` the memory between blocks"
    ))
}

/// A register.
#[derive(Clone, Debug, PartialEq)]
pub struct RegInfo {
    /// Its type.
    pub ty: Type,
    /// The source variable it holds, if any (kept for readable output).
    pub name: Option<String>,
}

/// A thread-local array.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalInfo {
    /// Element type.
    pub elem: Scalar,
    /// Number of elements (dimensions flattened row-major).
    pub len: u64,
    /// The source name.
    pub name: String,
}

/// What a memory name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// A pointer parameter.
    Param,
    /// A shared array.
    Shared,
    /// A thread-local array (named as memory when passed by pointer).
    Local,
    /// Made by `partition`.
    Partition,
    /// Made by `claim`.
    Claim,
    /// Made by `async`, or by a pipeline's `fill`.
    Async,
    /// A ring inside its pipeline loop (the loop's accesses to it are ordered by the
    /// pipeline's own waits and barrier).
    Pipeline,
    /// Made by a pipeline's `stage`: the slot of the current tile, read-only.
    Stage,
}

impl MemKind {
    /// The text-form keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            MemKind::Param => "param",
            MemKind::Shared => "shared",
            MemKind::Local => "local",
            MemKind::Partition => "partition",
            MemKind::Claim => "claim",
            MemKind::Async => "async",
            MemKind::Pipeline => "pipeline",
            MemKind::Stage => "stage",
        }
    }
}

/// A name of memory: the unit the synchronisation analysis tracks.
#[derive(Clone, Debug, PartialEq)]
pub struct MemInfo {
    /// The source name.
    pub name: String,
    /// What it is.
    pub kind: MemKind,
    /// Its perspective: the units that may use it.
    pub persp: Persp,
    /// The name it narrows, for views.
    pub parent: Option<MemId>,
    /// Element type.
    pub elem: Scalar,
    /// Where it was declared.
    pub span: Span,
}

/// How an access touches memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// A plain load.
    Read,
    /// A plain store.
    Write,
    /// An atomic read-modify-write (or atomic load/store).
    Atomic,
    /// The destination of an asynchronous copy.
    AsyncWrite,
    /// A volatile access in unsafe code (never reported as a race).
    Volatile,
}

impl AccessKind {
    /// The text-form keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Atomic => "atomic",
            AccessKind::AsyncWrite => "async",
            AccessKind::Volatile => "volatile",
        }
    }

    /// Whether the access may change memory.
    pub fn writes(self) -> bool {
        !matches!(self, AccessKind::Read)
    }
}

/// A memory access site.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessInfo {
    /// The name the source used.
    pub mem: MemId,
    /// How.
    pub kind: AccessKind,
    /// Where.
    pub span: Span,
    /// For an element access through a one-dimensional partition: the register holding the
    /// index the source wrote (`i` in `view[i]`), before the indexing function maps it.
    pub view_index: Option<Reg>,
}

/// A sequence of instructions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    /// The block's number in its function: blocks are numbered in pre-order (the body is 0,
    /// then each instruction's blocks before those of the next), by
    /// [`Function::number_blocks`]; passes that add or move blocks renumber. Analyses key
    /// per-block facts by it.
    pub id: u32,
    /// The instructions in order.
    pub insts: Vec<Inst>,
}

impl Block {
    /// Calls `visit` on every instruction of the block and its nested blocks, in program
    /// order (an instruction before the blocks it holds).
    pub fn walk(&self, visit: &mut dyn FnMut(&InstKind)) {
        for i in &self.insts {
            visit(&i.kind);
            for nb in i.kind.blocks() {
                nb.walk(visit);
            }
        }
    }
}

/// An instruction with its source span.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// What it does.
    pub kind: InstKind,
    /// The source it came from.
    pub span: Span,
}

/// One case of a split.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// First unit (in the split's unit).
    pub offset: u64,
    /// Number of units.
    pub count: u64,
    /// The branch's code perspective.
    pub persp: Persp,
    /// The branch.
    pub body: Block,
}

/// An operand of an intrinsic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntrArg {
    /// A value.
    Val(Reg),
    /// An element of memory: pointer and element index.
    Elem {
        /// The pointer.
        ptr: Reg,
        /// The element index.
        index: Reg,
    },
}

/// What an [`InstKind::AssertUniform`] (or [`InstKind::AssertUniformLocal`]) checks. A check
/// compares the threads that run it; the lowering places the ones that decide (`Variable`,
/// `Argument`, `Result`, `Operand`) where every thread of the unit runs them, and the
/// simulator joins the parts of a unit that run one at different times (other warps, other
/// blocks, lanes that took another path) by the dynamic instance of the check they are at
/// (an `Operand` check by how many times each thread has made it: the intrinsic's
/// rendezvous pairs its threads' k-th issues, whatever loop iteration each is in).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// A variable unsafe code may have changed, where the threads of its unit meet.
    Variable,
    /// The same on a way out of unsafe code (`break`, `continue`, `return`) that only some
    /// threads of the unit may take: compared among the threads that take it together, for
    /// an early report at the way out; the check where the unit meets again decides.
    Exit,
    /// Whether a thread left the loop this check follows by a `break` out of unsafe code,
    /// and in which iteration (zero: it did not), where the threads of the loop's unit meet
    /// after it: safe code after the loop, and the rest of the loop's iterations, are run by
    /// whole units only if they all left it together (docs/soundness.md §3).
    Break,
    /// Whether a thread left this iteration by a `continue` out of unsafe code (one: it
    /// did), at the loop's latch, where the threads of the loop's unit meet again.
    Continue,
    /// A value returned from inside unsafe code, at its `return`: compared among the threads
    /// that take that `return` together, like `Exit`; the caller's [`Checked::Result`]
    /// check decides.
    Returned,
    /// Argument `index` of the call of `func` that follows, made from unsafe code (which the
    /// checker does not hold to the parameter's perspective).
    Argument {
        /// The callee.
        func: FuncId,
        /// The parameter's position.
        index: u32,
    },
    /// The value the call of `func` just before returned, in the caller: `func` has unsafe
    /// code, so the unit's threads may have returned it from different places at
    /// different times; they all meet here, after the call.
    Result {
        /// The callee.
        func: FuncId,
    },
    /// Operand `index` (its position in the intrinsic table's signature, `out=` lists
    /// counted as one) of the call of `intrinsic` that follows, made from unsafe code: the
    /// intrinsic's unit issues it as one operation, which takes one value of an operand at
    /// a perspective broader than `thread[1]` (a wgmma's tiles). A memory operand is
    /// checked as its pointer, an element operand `m[i]` as the pointer to that element.
    Operand {
        /// The intrinsic.
        intrinsic: IntrinsicId,
        /// The operand's position in its signature.
        index: u32,
    },
}

impl Checked {
    /// Whether the check stands where every thread of the unit runs it, so that the
    /// simulator compares it over the whole unit; the others (`Exit`, `Returned`) compare
    /// only the threads that run them together.
    pub fn whole_unit(self) -> bool {
        !matches!(self, Checked::Exit | Checked::Returned)
    }
}

/// Why a barrier is there.
#[derive(Clone, Debug, PartialEq)]
pub enum BarrierOrigin {
    /// Written in the source (`__syncthreads()`, `__syncwarp()`).
    Explicit,
    /// Inserted by synchronisation inference: memory `mem` was accessed at `before` and is
    /// accessed again at `after`, one of them writing.
    Inferred {
        /// The memory name.
        mem: MemId,
        /// The earlier access (or scope).
        before: Span,
        /// The later access (or scope).
        after: Span,
    },
}

/// What a memory scope does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    /// `partition`
    Partition,
    /// `claim`
    Claim,
    /// `async`: copies into `view` complete before `mem` is used again; also a pipeline's
    /// `fill` (whose copies its pipeline waits for).
    Async,
    /// A pipeline loop over ring `mem`: synchronisation inference sees the whole scope as
    /// one access that writes the ring, and the accesses inside as ordered by the
    /// pipeline's waits and barrier (docs/soundness.md §4.3.1).
    Pipeline,
    /// A pipeline's `stage`: `view` is the current tile's slot, read-only.
    Stage,
    /// A warp-specialised pipeline's `stage(ring, late=True)`: as `Stage`, but its case
    /// releases the slot at the end of the next tile's iteration, so the wgmmas reading
    /// `view` may stay in flight until then (`prism_sync`'s pending-group analysis checks
    /// that they are complete there; docs/soundness.md §4.3.2).
    LateStage,
}

impl ScopeKind {
    /// The text-form keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeKind::Partition => "partition",
            ScopeKind::Claim => "claim",
            ScopeKind::Async => "async",
            ScopeKind::Pipeline => "pipeline",
            ScopeKind::Stage => "stage",
            ScopeKind::LateStage => "stage_late",
        }
    }
}

/// Instruction forms.
#[derive(Clone, Debug, PartialEq)]
pub enum InstKind {
    /// `dst = value` (of `dst`'s type).
    Const {
        /// Destination.
        dst: Reg,
        /// The constant.
        value: ConstValue,
    },
    /// `dst = src`.
    Copy {
        /// Destination.
        dst: Reg,
        /// Source (same type).
        src: Reg,
    },
    /// `dst = op arg` (of `dst`'s type).
    Unary {
        /// Destination.
        dst: Reg,
        /// Operator.
        op: UnOp,
        /// Operand.
        arg: Reg,
    },
    /// `dst = lhs op rhs`. Operands have the same type (the left one's, for shifts); a
    /// comparison's `dst` is `bool`. `and`/`or` never appear (they are lowered to `if`).
    Binary {
        /// Destination.
        dst: Reg,
        /// Operator.
        op: BinOp,
        /// Left operand.
        lhs: Reg,
        /// Right operand.
        rhs: Reg,
    },
    /// `dst = cond ? then : otherwise` (both evaluated; no side effects).
    Select {
        /// Destination.
        dst: Reg,
        /// Condition (`bool`).
        cond: Reg,
        /// Value when true.
        then: Reg,
        /// Value when false.
        otherwise: Reg,
    },
    /// `dst = (type of dst) arg`.
    Cast {
        /// Destination.
        dst: Reg,
        /// Operand.
        arg: Reg,
    },
    /// `dst = id()`: the index of this thread's `target`-unit inside its `code`-unit.
    RelId {
        /// Destination (`int`).
        dst: Reg,
        /// The code perspective.
        code: Persp,
        /// The target perspective.
        target: Persp,
    },
    /// `dst` = a raw hardware index (unsafe code).
    Raw {
        /// Destination (`int`).
        dst: Reg,
        /// Which index.
        index: RawIndex,
    },
    /// `dst` = a pointer to `len` bytes of shared memory at `offset` from this function's
    /// shared base.
    SharedAddr {
        /// Destination (`ptr`).
        dst: Reg,
        /// Byte offset.
        offset: u64,
        /// Byte length.
        len: u64,
        /// Element type.
        elem: Scalar,
    },
    /// `dst` = a pointer to a thread-local array.
    LocalAddr {
        /// Destination (`ptr`).
        dst: Reg,
        /// The array.
        local: LocalId,
    },
    /// `dst = base + offset` elements.
    PtrOffset {
        /// Destination (`ptr`).
        dst: Reg,
        /// Base pointer.
        base: Reg,
        /// Element offset (an integer).
        offset: Reg,
        /// A pipeline slot's view (`stage`, `fill`): `dst` addresses only these many
        /// elements of this type from where it points, the slot, and the simulator bounds
        /// every access through it (and through pointers made from it) to them, so an index
        /// past the slot is `out-of-bounds` rather than a read of the slot the producer is
        /// filling. Nothing in CUDA: the address is `base + offset` either way.
        bound: Option<(u64, Scalar)>,
    },
    /// `dst = ptr[index]`.
    Load {
        /// Destination (of the element type).
        dst: Reg,
        /// Pointer.
        ptr: Reg,
        /// Element index (an integer).
        index: Reg,
        /// The access site.
        access: AccessId,
    },
    /// `ptr[index] = value`.
    Store {
        /// Pointer.
        ptr: Reg,
        /// Element index.
        index: Reg,
        /// Value (of the element type).
        value: Reg,
        /// The access site.
        access: AccessId,
    },
    /// `dsts[k] = ptr[index + k]` for every `k`, as one vector access of `dsts.len()`
    /// elements (`load_vec`): the first element's address is a multiple of the access's
    /// size in bytes.
    LoadVec {
        /// Destinations (of the element type), one per element.
        dsts: Vec<Reg>,
        /// Pointer.
        ptr: Reg,
        /// Index of the first element.
        index: Reg,
        /// The access site.
        access: AccessId,
    },
    /// `ptr[index + k] = values[k]` for every `k`, as one vector access (`store_vec`).
    StoreVec {
        /// Pointer.
        ptr: Reg,
        /// Index of the first element.
        index: Reg,
        /// Values (of the element type), one per element.
        values: Vec<Reg>,
        /// The access site.
        access: AccessId,
    },
    /// Declares a thread-local array here and sets every element to zero.
    LocalDecl {
        /// The array.
        local: LocalId,
    },
    /// `dst = local[index]`.
    LocalLoad {
        /// Destination.
        dst: Reg,
        /// The array.
        local: LocalId,
        /// Element index (flattened).
        index: Reg,
    },
    /// `local[index] = value`.
    LocalStore {
        /// The array.
        local: LocalId,
        /// Element index (flattened).
        index: Reg,
        /// Value.
        value: Reg,
    },
    /// A call to a Prism function.
    Call {
        /// Destination for the return value.
        dst: Option<Reg>,
        /// Callee.
        func: FuncId,
        /// Arguments (scalars and pointers), in parameter order.
        args: Vec<Reg>,
        /// The callee's shared base, as an offset from the caller's.
        smem_offset: u64,
        /// One access per pointer argument, in order (a write when the parameter is
        /// writable), so that synchronisation sees what the callee may do to the memory.
        accesses: Vec<AccessId>,
    },
    /// An intrinsic (a collective, an atomic, math...).
    Intrinsic {
        /// Results (most have one or none; `mma` has four).
        dsts: Vec<Reg>,
        /// Which intrinsic.
        intrinsic: IntrinsicId,
        /// Operands in signature order.
        args: Vec<IntrArg>,
        /// One access per memory operand (element or whole memory), in order.
        accesses: Vec<AccessId>,
    },
    /// Closes the group of asynchronous copies this thread issued since the last commit
    /// (`cp.async.commit_group`): the end of an `async` scope of `cp_async` copies.
    AsyncCommit,
    /// Waits until all but the `pending` most recent groups of this thread's asynchronous
    /// copies have completed (`cp.async.wait_group pending`; with 0, every copy, committed
    /// or not). `views` are the `async` scopes whose copies it completes: synchronisation
    /// inference takes their writes to happen here. Lowering puts it at the end of its
    /// scope; `crate::asyncwait` moves it down to where the memory is next needed.
    AsyncWait {
        /// Groups that may stay in flight.
        pending: u32,
        /// The views of the scopes it completes.
        views: Vec<MemId>,
    },
    /// A barrier over each `scope`-unit of the executing threads.
    Barrier {
        /// The unit that synchronises.
        scope: Persp,
        /// Why.
        origin: BarrierOrigin,
    },
    /// A promise the simulator checks: `reg` holds the same value in every thread of each
    /// `persp`-unit. Placed where the checker's guarantee of uniformity ends (`what` says
    /// which value: a variable after `with unsafe:` code that assigns it, a value returned
    /// from or passed by unsafe code). The CUDA backend emits nothing for it.
    AssertUniform {
        /// The value's register: a scalar, or for a [`Checked::Argument`] or a
        /// [`Checked::Operand`] also a pointer (a memory name unsafe code passes for a
        /// broader pointer parameter or operand, or the address of an element operand: the
        /// simulator compares the memory and offset it points to, so one view per unit).
        reg: Reg,
        /// Its perspective.
        persp: Persp,
        /// What the value is, and so how far the simulator compares it.
        what: Checked,
    },
    /// The same check for every element of a thread-local array at a perspective broader
    /// than `thread[1]` that unsafe code may have changed (an element assignment, an `out=`
    /// operand, a writable pointer argument), or that unsafe code passes to a function's
    /// pointer parameter at such a perspective.
    AssertUniformLocal {
        /// The array.
        local: LocalId,
        /// Its perspective.
        persp: Persp,
        /// What the array is ([`Checked::Variable`], [`Checked::Exit`],
        /// [`Checked::Argument`] or [`Checked::Operand`]).
        what: Checked,
    },
    /// The first half of a split barrier over each `scope`-unit: this thread's memory accesses
    /// before it are ordered before the accesses of every thread of its unit after the
    /// matching [`InstKind::BarrierWait`]. It never blocks. Barrier motion makes split
    /// barriers from inferred ones (`prism_sync::motion`); `id` pairs the halves and is
    /// unique in its function.
    BarrierArrive {
        /// The unit that synchronises.
        scope: Persp,
        /// Pairs it with its wait.
        id: u32,
        /// Why (the inferred barrier it came from).
        origin: BarrierOrigin,
    },
    /// The second half of a split barrier: blocks until every thread of the unit has passed
    /// the [`InstKind::BarrierArrive`] with the same `id` (as many times as this thread has
    /// now waited). Invariant: the arrive comes before the wait in the same straight-line
    /// code, reached only through `group` and memory scopes, which every thread runs.
    BarrierWait {
        /// The unit that synchronises.
        scope: Persp,
        /// Pairs it with its arrive.
        id: u32,
    },
    /// `if cond { then } else { otherwise }`. With `uniform`, the condition must be the same
    /// in all threads of the code's unit (a source `if`); otherwise lanes may disagree (the
    /// lowering of `and`, `or` and conditional expressions).
    If {
        /// Condition (`bool`).
        cond: Reg,
        /// Taken when true.
        then: Block,
        /// Taken when false.
        otherwise: Block,
        /// Whether the condition must be uniform over the code perspective.
        uniform: bool,
    },
    /// `loop { header; if !cond break; body; latch }`; `continue` in `body` goes to `latch`.
    Loop {
        /// Computes `cond`.
        header: Block,
        /// The loop condition, uniform over the code perspective.
        cond: Reg,
        /// The body.
        body: Block,
        /// Runs after the body and after `continue` (a `for` loop's increment).
        latch: Block,
        /// A `for ... in range` loop's counter: the register the latch steps with one
        /// `counter = counter + step`. That step never wraps: one that would carry the
        /// counter past its type's range is a fault (`counter-overflow`), as C leaves the
        /// signed overflow undefined that lets nvcc count the iterations (docs/language.md
        /// §6). `None` for `while` loops, whose arithmetic wraps like any other.
        counter: Option<Reg>,
        /// `unroll=` of a `range` loop: what the CUDA backend asks nvcc for
        /// (`#pragma unroll`); nothing else reads it.
        unroll: Unroll,
    },
    /// Leaves the innermost loop.
    Break,
    /// Goes to the latch of the innermost loop.
    Continue,
    /// Returns from the function.
    Return {
        /// The value, if the function returns one.
        value: Option<Reg>,
    },
    /// Runs `body` at the narrower code perspective `persp` (every unit of it).
    Group {
        /// The new code perspective.
        persp: Persp,
        /// The body.
        body: Block,
    },
    /// Shards the current unit: case `i` runs on units `[offset, offset + count)` of `unit`.
    Split {
        /// The unit counts are measured in.
        unit: Persp,
        /// Cases in order.
        cases: Vec<Case>,
    },
    /// A `partition`/`claim`/`async` scope over memory name `mem`, made `view` inside.
    Scope {
        /// What kind.
        kind: ScopeKind,
        /// The name narrowed.
        mem: MemId,
        /// The name inside.
        view: MemId,
        /// The body.
        body: Block,
    },
    /// `with unsafe:`: perspective checks are off inside.
    Unsafe {
        /// The body.
        body: Block,
    },
    /// Verbatim CUDA text; `sim` is the Prism body the simulator runs instead, if given.
    Verbatim {
        /// The CUDA text.
        text: String,
        /// What the simulator runs.
        sim: Option<Block>,
    },
}

impl InstKind {
    /// Whether the instruction only computes a register from registers: no memory, no
    /// control flow, no effect (pointer arithmetic and `id()` included).
    pub fn is_register_only(&self) -> bool {
        use InstKind::*;
        matches!(
            self,
            Const { .. }
                | Copy { .. }
                | Unary { .. }
                | Binary { .. }
                | Select { .. }
                | Cast { .. }
                | RelId { .. }
                | Raw { .. }
                | SharedAddr { .. }
                | LocalAddr { .. }
                | PtrOffset { .. }
        )
    }

    /// Whether the instruction touches nothing other threads can see: it is register-only,
    /// or it uses this thread's local arrays.
    pub fn is_thread_private(&self) -> bool {
        use InstKind::*;
        self.is_register_only() || matches!(self, LocalDecl { .. } | LocalLoad { .. } | LocalStore { .. })
    }

    /// The registers this instruction defines.
    pub fn defs(&self) -> Vec<Reg> {
        use InstKind::*;
        match self {
            Const { dst, .. }
            | Copy { dst, .. }
            | Unary { dst, .. }
            | Binary { dst, .. }
            | Cast { dst, .. }
            | Select { dst, .. }
            | RelId { dst, .. }
            | Raw { dst, .. }
            | SharedAddr { dst, .. }
            | LocalAddr { dst, .. }
            | PtrOffset { dst, .. }
            | Load { dst, .. }
            | LocalLoad { dst, .. } => vec![*dst],
            Call { dst, .. } => dst.iter().copied().collect(),
            Intrinsic { dsts, .. } | LoadVec { dsts, .. } => dsts.clone(),
            _ => Vec::new(),
        }
    }

    /// The registers this instruction reads directly (not those of nested blocks).
    pub fn uses(&self) -> Vec<Reg> {
        use InstKind::*;
        match self {
            Copy { src, .. } => vec![*src],
            Unary { arg, .. } | Cast { arg, .. } => vec![*arg],
            Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
            Select { cond, then, otherwise, .. } => vec![*cond, *then, *otherwise],
            PtrOffset { base, offset, .. } => vec![*base, *offset],
            Load { ptr, index, .. } => vec![*ptr, *index],
            Store { ptr, index, value, .. } => vec![*ptr, *index, *value],
            LoadVec { ptr, index, .. } => vec![*ptr, *index],
            StoreVec { ptr, index, values, .. } => [*ptr, *index].into_iter().chain(values.iter().copied()).collect(),
            LocalLoad { index, .. } => vec![*index],
            LocalStore { index, value, .. } => vec![*index, *value],
            Call { args, .. } => args.clone(),
            Intrinsic { args, .. } => args
                .iter()
                .flat_map(|a| match a {
                    IntrArg::Val(r) => vec![*r],
                    IntrArg::Elem { ptr, index } => vec![*ptr, *index],
                })
                .collect(),
            If { cond, .. } => vec![*cond],
            AssertUniform { reg, .. } => vec![*reg],
            Return { value } => value.iter().copied().collect(),
            _ => Vec::new(),
        }
    }

    /// The nested blocks of a structured instruction.
    pub fn blocks(&self) -> Vec<&Block> {
        use InstKind::*;
        match self {
            If { then, otherwise, .. } => vec![then, otherwise],
            Loop { header, body, latch, .. } => vec![header, body, latch],
            Group { body, .. } | Scope { body, .. } | Unsafe { body } => vec![body],
            Split { cases, .. } => cases.iter().map(|c| &c.body).collect(),
            Verbatim { sim, .. } => sim.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The nested blocks, mutably.
    pub fn blocks_mut(&mut self) -> Vec<&mut Block> {
        use InstKind::*;
        match self {
            If { then, otherwise, .. } => vec![then, otherwise],
            Loop { header, body, latch, .. } => vec![header, body, latch],
            Group { body, .. } | Scope { body, .. } | Unsafe { body } => vec![body],
            Split { cases, .. } => cases.iter_mut().map(|c| &mut c.body).collect(),
            Verbatim { sim, .. } => sim.iter_mut().collect(),
            _ => Vec::new(),
        }
    }
}
