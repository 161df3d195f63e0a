//! Compilation of IR functions to flat code for the interpreter.
//!
//! The structured IR becomes a vector of [`Op`]s with explicit jumps. Every construct that
//! can split a warp (an `if`, a loop, a `split`) names its reconvergence point, a [`Op::Join`]:
//! lanes that take different paths continue as separate fragments and merge again there.
//! Types are resolved here, so each op knows the scalar type it works on.
//!
//! Invariant: join points of nested constructs come before the join points of the constructs
//! that enclose them. The scheduler relies on it to unwind reconvergence records on `break`,
//! `continue` and `return` (a jump to `t` leaves every record whose join is before `t`).

use prism_ir::ir::{self, InstKind, IntrArg, Type};
use prism_ir::{FuncId, Reg};
use prism_span::Span;
use prism_types::intrinsics::{Family, IntrinsicId};
use prism_types::perspective::Persp;
use prism_types::tir::{BinOp, RawIndex, UnOp};
use prism_types::ty::Scalar;

/// A register index.
pub type R = u32;

/// An intrinsic, resolved to what the interpreter does.
#[derive(Clone, Debug)]
pub enum Intr {
    /// The first half of `ldmatrix`: each lane of `lanes` that runs reads the elements of
    /// its row (16 bytes, aligned: 8 16-bit or 4 32-bit elements) into `rows`, one 32-bit
    /// word per register as memory holds them.
    LdRows { ptr: R, index: R, index_ty: Scalar, rows: [R; 4], lanes: u32, access: u32 },
    /// The second half, a warp collective: `count` matrices from the lanes' rows, plain or
    /// transposed, into `dsts` in the mma fragment order; `wide`: the elements are 32-bit,
    /// one output per matrix instead of two 16-bit halves.
    LdMatrix { rows: [R; 4], dsts: Vec<R>, count: u8, trans: bool, wide: bool },
    /// `dsts[k] = ptr[index + k]`: one aligned vector access.
    LoadVec { ty: Scalar, dsts: Vec<R>, ptr: R, index: R, index_ty: Scalar, access: u32 },
    /// `ptr[index + k] = values[k]`: one aligned vector access.
    StoreVec { ty: Scalar, values: Vec<R>, ptr: R, index: R, index_ty: Scalar, access: u32 },
    /// `shfl*`: kind 0 = index, 1 = up, 2 = down, 3 = xor.
    Shfl { kind: u8, ty: Scalar, dst: R, value: R, lane: R, lane_ty: Scalar },
    /// `ballot`, `any`, `all`.
    Vote { kind: u8, dst: R, pred: R },
    /// `reduce_*` over the warp: op 0 add, 1 min, 2 max, 3 and, 4 or, 5 xor.
    Reduce { op: u8, ty: Scalar, dst: R, value: R },
    /// Tensor-core `mma`: `shape` 0 = m16n8k8 tf32, 1 = m16n8k16 bf16, 2 = m16n8k16 f16.
    Mma { shape: u8, rz: bool, a: Vec<R>, b: Vec<R>, c: Vec<R>, d: Vec<R> },
    /// Atomic read-modify-write: op 0 add, 1 sub, 2 min, 3 max, 4 and, 5 or, 6 xor, 7 exch.
    Atomic { op: u8, ty: Scalar, dst: R, ptr: R, index: R, index_ty: Scalar, value: R, access: u32 },
    /// `atomic_cas`.
    Cas { ty: Scalar, dst: R, ptr: R, index: R, index_ty: Scalar, compare: R, value: R, access: u32 },
    /// `atomic_load` / `volatile_load`.
    AtomicLoad { ty: Scalar, dst: R, ptr: R, index: R, index_ty: Scalar, access: u32 },
    /// `atomic_store` / `volatile_store`.
    AtomicStore { ty: Scalar, ptr: R, index: R, index_ty: Scalar, value: R, access: u32 },
    /// `cp_async(dst[i], src[j], bytes)`, or `cp_async_zfill(dst[i], src[j], bytes,
    /// src_bytes)` when `src_bytes` is set.
    CpAsync {
        elem: Scalar,
        dst: R,
        dst_index: R,
        dst_index_ty: Scalar,
        src: R,
        src_index: R,
        src_index_ty: Scalar,
        bytes: R,
        src_bytes: Option<R>,
        access: u32,
        src_access: u32,
    },
    /// `tma_load_2d(dst[i], map, x, y)` / `tma_load_3d(..., z)`: the box of the typed map
    /// `ty` at `coords` (innermost first, as PTX takes them) of the array the register `map`
    /// points to, zero outside it, into shared memory at `dst[dst_index]`, swizzled.
    Tma {
        ty: prism_types::ty::TensorMapTy,
        map: R,
        dst: R,
        dst_index: R,
        dst_index_ty: Scalar,
        coords: Vec<R>,
        access: u32,
        /// Lands at once (`tma_load_*_mbar`: the `complete_tx` that follows publishes it),
        /// instead of at the thread's wait for its `async` scope.
        now: bool,
        /// The read of the map's array.
        map_access: u32,
    },
    /// `tma_store_2d(map, x, y, src[i])` / `tma_store_3d`: the box of the typed map `ty`,
    /// laid out in shared memory from `src[src_index]` as a load would lay it out, written
    /// into the array the register `map` points to at `coords` (innermost first), the
    /// elements outside the array left alone; complete when it returns.
    TmaStore {
        ty: prism_types::ty::TensorMapTy,
        map: R,
        src: R,
        src_index: R,
        src_index_ty: Scalar,
        coords: Vec<R>,
        map_access: u32,
        access: u32,
    },
    /// `__threadfence()` (`device`) or `__threadfence_block()`: the acquire and release
    /// points of the race detector's message passing ([`crate::shadow::Release`]).
    Fence { device: bool },
    /// Sleeps: no effect on the simulated result.
    Nop,
    /// `trap()`: the run stops with a `trap` report, as the GPU launch fails.
    Trap,
    /// `wgmma.mma_async.m64nNkK.f32` with `elem` A and B K-major in shared memory: bf16 or
    /// f16 (K = 16), or f32 read as tf32 (K = 8): each row of a slice is 32 bytes. Without
    /// swizzling, core matrices of 8 rows of 16 bytes, 128 bytes apart along K and 256 along
    /// M or N, as `prism_wgmma_desc` describes them; the thread's accumulator fragment in the
    /// local array `acc`. `accesses`: acc, a, b.
    Wgmma { n: u32, elem: Scalar, acc: R, a: R, b: R, layout: WgmmaLayout, accesses: [u32; 3] },
    /// `wgmma_commit_group`: this thread's uncommitted wgmmas become a group.
    WgmmaCommit,
    /// `wgmma_wait(pending)`: this thread's groups but the `pending` most recent complete.
    WgmmaWait { pending: u32 },
    /// An mbarrier operation on the barrier at `ptr[index]` (shared memory), with its
    /// operand (count, bytes or parity: the register `arg`, or the constant `bytes` of a
    /// TMA copy's completion) and result `dst` (the token).
    Mbar {
        op: MbarOp,
        dst: Option<R>,
        ptr: R,
        index: R,
        index_ty: Scalar,
        arg: Option<R>,
        bytes: Option<u64>,
        /// The barrier's access (its memory name and span, for reports).
        access: u32,
    },
    /// A pure math function on `ty` values.
    Math { f: crate::ops::MathFn, ty: Scalar, dst: R, args: Vec<R>, arg_ty: Scalar },
}

/// How an [`Intr::Wgmma`]'s tiles are laid out in shared memory (K-major both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgmmaLayout {
    /// `wgmma_bf16`: the canonical layout without swizzling from the start of `a` and `b`
    /// (core matrices of 8 rows of 16 bytes, 128 bytes apart along K and 256 along M or N).
    Interleaved,
    /// `wgmma_bf16_sw`: rows of `span` bytes, 8-row groups `8 * span` bytes apart, from
    /// elements `a[a_index]` and `b[b_index]`, with the hardware's swizzle of that span on
    /// the shared address.
    Swizzled { span: u32, a_index: R, a_ty: Scalar, b_index: R, b_ty: Scalar },
}

/// What an [`Intr::Mbar`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbarOp {
    /// `mbarrier_init(bar, count)`.
    Init,
    /// `mbarrier_arrive(bar)`.
    Arrive,
    /// `mbarrier_arrive_expect_tx(bar, bytes)`.
    ArriveExpectTx,
    /// `mbarrier_expect_tx(bar, bytes)`: no arrival.
    ExpectTx,
    /// `mbarrier_complete_tx(bar, bytes)`.
    CompleteTx,
    /// `mbarrier_wait_parity(bar, parity)`.
    WaitParity,
    /// `mbarrier_inval(bar)`.
    Inval,
}

/// A flat instruction.
#[derive(Clone, Debug)]
pub enum Op {
    /// `dst = bits`.
    Const { dst: R, bits: u64 },
    /// `dst = src`.
    Copy { dst: R, src: R },
    /// Unary operation on `ty`.
    Un { dst: R, op: UnOp, ty: Scalar, a: R },
    /// Binary operation with operands of type `ty` (result bool for comparisons).
    Bin { dst: R, op: BinOp, ty: Scalar, a: R, b: R, b_ty: Scalar },
    /// A `range` loop's step, `iv = iv + step` on integers of type `ty`, which must not
    /// leave the type's range.
    Step { iv: R, step: R, ty: Scalar },
    /// `dst = a * b + c` rounded once, for `float` or `double` `ty`.
    Fma { dst: R, ty: Scalar, a: R, b: R, c: R },
    /// `dst = c ? a : b`.
    Select { dst: R, c: R, a: R, b: R },
    /// Conversion.
    Cast { dst: R, from: Scalar, to: Scalar, a: R },
    /// `id()`.
    RelId { dst: R, code: Persp, target: Persp },
    /// Raw hardware index.
    Raw { dst: R, which: RawIndex },
    /// Pointer to this function's shared memory at `offset`, `len` bytes.
    SharedAddr { dst: R, offset: u64, len: u64 },
    /// Pointer to a thread-local array of the current frame.
    LocalAddr { dst: R, local: u32 },
    /// Pointer plus element offset.
    PtrAdd { dst: R, base: R, off: R, off_ty: Scalar },
    /// Pointer plus element offset, bounded to `len` elements of `size` bytes from there: a
    /// pipeline slot's view (`PtrOffset`'s `bound`). A shared pointer becomes one to the
    /// slot's bytes alone, so accesses through it are checked against the slot; the slot
    /// must lie inside the base's region (`out-of-bounds` otherwise).
    PtrSlot { dst: R, base: R, off: R, len: u64, size: u64 },
    /// `dst = ptr[index]`.
    Load { dst: R, ty: Scalar, ptr: R, index: R, index_ty: Scalar, access: u32 },
    /// `ptr[index] = value`.
    Store { ty: Scalar, ptr: R, index: R, index_ty: Scalar, value: R, access: u32 },
    /// Zeroes a local array.
    LocalDecl { local: u32 },
    /// `dst = local[index]`.
    LocalLoad { dst: R, local: u32, index: R, index_ty: Scalar },
    /// `local[index] = value`.
    LocalStore { local: u32, index: R, index_ty: Scalar, value: R },
    /// A superinstruction: the `LocalLoad`s at this op and the ones after it, the `Fma`
    /// after them and the `LocalStore` after that, run as one op when every index is the
    /// same in all lanes and in bounds ([`LocalFma`]); otherwise this op is its first load.
    LocalFma(Box<LocalFma>),
    /// A superinstruction: a loop's back edge, the latch's step at this op, the `Jump` after
    /// it to the loop's head, the head's condition and its `LoopTest`, run as one op when
    /// every register they read holds one value in all lanes ([`Latch`]); otherwise this op
    /// is the step.
    Latch(Box<Latch>),
    /// A superinstruction: this op and the register ops after it ([`Scalars`]), run in
    /// turn without a dispatch each as long as every register each reads holds one value
    /// in all lanes; otherwise this op is the first of them.
    Scalars(Box<Scalars>),
    /// `dst = src` for each pair, in order (no destination is a source: the destinations of
    /// an entry are the inlined body's registers, its sources the caller's): the entry
    /// (argument copies) or the return (result copy) of an inlined call ([`Leaf`]), one op
    /// each as the call and the return it stands for were.
    Moves { moves: Box<[(R, R)]> },
    /// Calls `func`. `arrays`: the access site of each pointer (or tensor-map) argument, in
    /// order, which names the array the callee's parameter memory is
    /// (`Frame::ptags` in the simulator).
    Call { func: u32, args: Box<[R]>, dst: Option<R>, smem_offset: u64, arrays: Box<[u32]> },
    /// Returns from the function.
    Ret { value: Option<R> },
    /// An intrinsic.
    Intr(Box<Intr>),
    /// A barrier over each `scope`-unit. `order`: it orders memory (a barrier); otherwise
    /// it is a rendezvous of an aligned collective that does not (`setmaxnreg`, the wgmma
    /// fences and groups over a warpgroup): every thread of the unit must reach the same
    /// one, but no access is ordered by it.
    Barrier { scope: Persp, order: bool },
    /// Checks that register `reg` is uniform over `persp`-units (`what`: which value, and
    /// whether the check compares the whole unit or only the threads that run it).
    AssertUniform { reg: R, persp: Persp, ty: Scalar, what: ir::Checked },
    /// Checks that pointer register `reg`, an argument unsafe code passes for a pointer
    /// parameter at `persp` (`what`), points to the same memory in every thread of a
    /// `persp`-unit: the same base and offset, so the same view.
    AssertUniformPtr { reg: R, persp: Persp, what: ir::Checked },
    /// Every element of a local array is uniform over `persp`.
    AssertUniformLocal { local: u32, persp: Persp, what: ir::Checked },
    /// A split barrier's arrive (never blocks).
    Arrive { scope: Persp, id: u32 },
    /// A split barrier's wait.
    Wait { scope: Persp, id: u32 },
    /// Closes this thread's group of uncommitted asynchronous copies.
    AsyncCommit,
    /// Completes this thread's asynchronous copies except the `pending` most recent groups
    /// (all of them, committed or not, for 0).
    AsyncWait { pending: u32 },
    /// Goes to `target`, leaving reconvergence records of constructs it jumps out of.
    Jump { target: u32 },
    /// Goes to the next op if `cond`, else to `else_pc`; lanes that disagree split and
    /// rejoin at `join`.
    Branch { cond: R, else_pc: u32, join: u32, uniform: bool },
    /// Enters a loop whose exit (a join) is `exit`.
    LoopEnter { exit: u32 },
    /// Starts an iteration of a loop whose body has a `continue`: the lanes that run it
    /// meet again at `join`, the `Join` at the start of the latch, whether they got there by
    /// a `continue` or by the end of the body. Without it, lanes that `continue` and lanes
    /// that do not would go round the loop apart until it ends, and every check in it would
    /// compare each part with itself.
    Iterate { join: u32 },
    /// Lanes whose `cond` is false leave the loop for `exit`.
    LoopTest { cond: R, exit: u32, uniform: bool },
    /// Sends each lane to the case containing its position, or to `end`.
    Split { unit: Persp, cases: Box<[(u64, u64, u32)]>, end: u32 },
    /// A reconvergence point.
    Join,
    /// Something the simulator cannot run.
    NotSimulated { what: Box<str> },
    /// The end of the function body.
    End,
}

/// The ops a [`Op::LocalFma`] stands for: the inner step of a register tile, `acc[i] +=
/// a[k] * b[j]`, is a load of each local operand, a fused multiply-add and a store of the
/// sum. The ops it covers stay in place after it, so jumps and spans are unchanged and the
/// interpreter can always run them one by one instead.
///
/// Invariant: no register it writes (a load's or the fma's destination) is an index of its
/// loads or of its store, so every index has at the start the value it has when its op
/// runs, and the interpreter can check all of them before it writes anything.
#[derive(Clone, Debug)]
pub struct LocalFma {
    /// The loads, in order: destination, local array, index register.
    pub loads: Box<[(R, u32, R)]>,
    /// The `Fma`'s destination, type and operands.
    pub fma: (R, Scalar, [R; 3]),
    /// The store: local array, index register, value register.
    pub store: (u32, R, R),
    /// The op this one replaces (the first load), for when a lane's index differs or is
    /// out of bounds, or only some lanes run.
    pub first: Op,
}

impl LocalFma {
    /// How many ops of the flat code it covers.
    pub fn ops_covered(&self) -> u32 {
        self.loads.len() as u32 + 2
    }
}

/// The most loads a [`LocalFma`] covers: the three operands of its fma.
pub const FUSED_LOADS: usize = 3;

/// Forms the [`Op::LocalFma`] superinstructions of `ops`: each `Fma` followed by a
/// `LocalStore` and preceded by one to three `LocalLoad`s whose destinations and the
/// fma's are none of the indices. Only the first load is replaced; the others stay.
fn fuse_local_fma(ops: &mut [Op]) {
    for q in 1..ops.len().saturating_sub(1) {
        let (Op::Fma { dst, ty, a, b, c }, Op::LocalStore { local, index, value, .. }) = (&ops[q], &ops[q + 1]) else {
            continue;
        };
        let (fma, store) = ((*dst, *ty, [*a, *b, *c]), (*local, *index, *value));
        let mut loads = Vec::new();
        let mut p = q;
        while p > 0 && loads.len() < FUSED_LOADS {
            let Op::LocalLoad { dst, local, index, .. } = &ops[p - 1] else { break };
            loads.insert(0, (*dst, *local, *index));
            p -= 1;
        }
        // Drop leading loads until no written register is an index: a load whose index an
        // earlier load of the group redefines would see a different value when it runs.
        while !loads.is_empty() {
            let indices: Vec<R> = loads.iter().map(|l| l.2).chain([store.1]).collect();
            let written = loads.iter().map(|l| l.0).chain([fma.0]);
            if written.clone().any(|w| indices.contains(&w)) {
                loads.remove(0);
                p += 1;
            } else {
                break;
            }
        }
        if loads.is_empty() {
            continue;
        }
        let first = ops[p].clone();
        ops[p] = Op::LocalFma(Box::new(LocalFma { loads: loads.into_boxed_slice(), fma, store, first }));
    }
}

/// The ops a [`Op::Latch`] stands for: the back edge of a loop whose latch is one step
/// (`i = i + s`, a `Bin` or a checked `Step`) and whose head is one condition (`c = i < n`)
/// and its test. These are a fifth to a third of the ops a register-tiled gemm runs, each
/// through the interpreter's dispatch on its own; as one op they are two lane-0
/// computations (the step and the condition) and two uniform writes. The ops it covers stay in place after it (the jump
/// at `at + 1`, the condition at `head`, the test at `head + 1`), so jumps, spans and the
/// fallback are unchanged.
#[derive(Clone, Debug)]
pub struct Latch {
    /// The step, as it runs on its own (a `Bin` or a `Step`).
    pub first: Op,
    /// The pc of the head's condition (the jump's target).
    pub head: u32,
    /// The condition: destination, operation, types and operands, as in [`Op::Bin`].
    pub cond: (R, BinOp, Scalar, R, R, Scalar),
    /// The test's exit (the loop's join).
    pub exit: u32,
    /// Whether the test checks that the condition is uniform (`LoopTest`'s `uniform`).
    pub uniform: bool,
}

impl Latch {
    /// How many ops of the flat code it covers: the step, the jump, the condition, the test.
    pub const OPS_COVERED: u32 = 4;
}

/// Forms the [`Op::Latch`] superinstructions of `ops`: a `Bin` or `Step` followed by a
/// backward `Jump` to a loop head (the op after a `LoopEnter`) that is a `Bin` followed by
/// the `LoopTest` of its result.
fn fuse_latches(ops: &mut [Op]) {
    for q in 0..ops.len().saturating_sub(1) {
        if !matches!(ops[q], Op::Bin { .. } | Op::Step { .. }) {
            continue;
        }
        let Op::Jump { target: head } = ops[q + 1] else { continue };
        let h = head as usize;
        if h == 0 || h + 1 >= q || !matches!(ops[h - 1], Op::LoopEnter { .. }) {
            continue;
        }
        let (Op::Bin { dst, op, ty, a, b, b_ty }, Op::LoopTest { cond, exit, uniform }) = (&ops[h], &ops[h + 1]) else {
            continue;
        };
        if cond != dst {
            continue;
        }
        let latch = Latch {
            first: ops[q].clone(),
            head,
            cond: (*dst, *op, *ty, *a, *b, *b_ty),
            exit: *exit,
            uniform: *uniform,
        };
        ops[q] = Op::Latch(Box::new(latch));
    }
}

/// The ops a [`Op::Scalars`] stands for: a run of two or more register ops (`Const`,
/// `Copy`, `Un`, `Bin`, `Step`, `Select`, `Cast`) with nothing else between them. A
/// register-tiled gemm's inner loops compute their indices (`acc[i * TN + j]`, `reg_m[kk *
/// TM + i]`) from constants and loop counters in such runs, up to six ops per fma, each
/// dispatched on its own; every one holds one value in all lanes. The interpreter runs the
/// run's ops in turn, each through its own one-lane path, and stops at the first whose
/// operands may differ between lanes (or that would be reported, or that the budget or the
/// fuel does not reach): that op and the rest then run one by one. The ops it covers stay
/// in place after it, so jumps, spans and the fallback are unchanged.
#[derive(Clone, Debug)]
pub struct Scalars {
    /// The ops, this one first (also what runs when its own operands may differ).
    pub ops: Box<[Op]>,
}

/// Whether `op` may be part of a [`Scalars`] run: a register op with a one-lane path.
fn scalar_op(op: &Op) -> bool {
    matches!(
        op,
        Op::Const { .. }
            | Op::Copy { .. }
            | Op::Un { .. }
            | Op::Bin { .. }
            | Op::Step { .. }
            | Op::Select { .. }
            | Op::Cast { .. }
    )
}

/// Forms the [`Op::Scalars`] superinstructions of `ops`: each maximal run of two or more
/// [`scalar_op`]s. Runs after the other fusions, whose first ops (a `LocalFma`'s load, a
/// `Latch`'s step) it then sees as what they became and leaves alone.
fn fuse_scalars(ops: &mut [Op]) {
    let mut p = 0;
    while p < ops.len() {
        let n = ops[p..].iter().take_while(|op| scalar_op(op)).count();
        if n >= 2 {
            ops[p] = Op::Scalars(Box::new(Scalars { ops: ops[p..p + n].to_vec().into_boxed_slice() }));
        }
        p += n.max(1);
    }
}

/// Whether a loop body has a `continue` of its own loop (not of a loop nested in it).
fn continues(b: &ir::Block) -> bool {
    b.insts.iter().any(|i| match &i.kind {
        InstKind::Continue => true,
        InstKind::Loop { .. } => false,
        k => k.blocks().into_iter().any(continues),
    })
}

/// What the checks need to know about an op.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// Its source span.
    pub span: Span,
    /// The code perspective it runs at.
    pub code: Persp,
    /// Whether it is inside `with unsafe:` (no uniformity checks).
    pub in_unsafe: bool,
    /// Whether it is the body of an inlined call ([`Leaf`]): reports place it as the
    /// callee's code, not in the caller's loops.
    pub inlined: bool,
}

/// One compiled function.
#[derive(Clone, Debug)]
pub struct FuncCode {
    /// Its name.
    pub name: String,
    /// The ops.
    pub ops: Vec<Op>,
    /// One entry per op.
    pub info: Vec<OpInfo>,
    /// Number of registers.
    pub nregs: usize,
    /// Register types.
    pub reg_tys: Vec<Type>,
    /// Parameter registers.
    pub params: Vec<R>,
    /// Local arrays: element type and length.
    pub locals: Vec<(Scalar, u64)>,
    /// Local array names (for messages).
    pub local_names: Vec<String>,
    /// Register names: the source variable a register holds, if any (for messages).
    pub reg_names: Vec<Option<String>>,
    /// Access sites: memory name, whether it writes, span.
    pub accesses: Vec<ir::AccessInfo>,
    /// Per access site, what its atomic does if it is one of safe code
    /// ([`crate::shadow::Phase`], for the race detector's check of atomic phases; see
    /// [`access_phases`]).
    pub phases: Vec<crate::shadow::Phase>,
    /// Memory names (for messages).
    pub mems: Vec<ir::MemInfo>,
    /// Per pointer or tensor-map parameter, in parameter order (a launch's buffers come in
    /// this order), whether the function's access sites may change its memory
    /// ([`ir::Function::writes_param`]): the race detector records no reads of a kernel's
    /// buffer that nothing writes (docs/simulator.md, Speed).
    pub param_written: Vec<bool>,
    /// Per access site, the shared array it reaches ([`ArrayOf`]): `uninitialized-read`
    /// counts a byte as written for a read only when it was last written as the same
    /// array's (docs/soundness.md §8, "Fresh arrays").
    pub array_of: Vec<ArrayOf>,
    /// The entry perspective.
    pub entry: Persp,
    /// The function's span.
    pub span: Span,
}

impl FuncCode {
    /// Whether the buffer of a launch's `i`-th pointer or tensor-map argument is one that no
    /// access site of this kernel writes ([`Self::param_written`]).
    pub fn read_only(&self, i: usize) -> bool {
        self.param_written.get(i) == Some(&false)
    }
}

/// The shared array an access site reaches, named so that two instances of one
/// declaration at different places, and two declarations at one place, differ
/// (`BlockSim::array_tag` adds the frame's shared base).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayOf {
    /// A shared array the function declares (its dynamic one too), by a number no other
    /// declaration of the program has.
    Decl(u32),
    /// The memory of the function's `k`-th pointer (or tensor-map) parameter: whichever
    /// array the caller passed, whose tag the frame keeps (`Frame::ptags` in the simulator).
    Param(u32),
    /// Thread-local memory, which no shared array reaches.
    None,
}

/// A compiled program.
#[derive(Clone, Debug)]
pub struct Code {
    /// Functions by [`FuncId`].
    pub funcs: Vec<FuncCode>,
    /// Whether the interpreter uses its superinstructions, its knowledge of which
    /// registers hold one value in all lanes, and one computation for a warp's mbarrier
    /// arrivals of what they carry on (`BlockSim::warp_carried`); off only in tests that
    /// compare the two.
    pub fast: bool,
    /// Whether only barriers order threads here: no function has a fence or an mbarrier
    /// operation, which order threads one by one (release and acquire). The race check's
    /// broadcast reads skip lanes ordered alike only then (`BlockSim::broadcast_skips`).
    pub lanes_alike: bool,
}

/// Compiles every function of a program.
pub fn compile(p: &ir::Program) -> Code {
    compile_with(p, true)
}

/// Compiles every function of a program, with or without superinstructions and the
/// interpreter's knowledge of uniform registers (`fuse`): the tests run both and compare.
pub fn compile_with(p: &ir::Program, fuse: bool) -> Code {
    // Leaves first: each function compiled on its own, kept when its code is straight-line
    // register arithmetic that ends in its return ([`Leaf`]). With `fuse`, calls to them
    // are then compiled inline.
    // Each function's declarations are numbered from the count of memory names of the
    // functions before it, so that no two declarations of the program share a number.
    let first: Vec<u32> = p
        .functions
        .iter()
        .scan(0u32, |n, f| {
            let at = *n;
            *n = n.saturating_add(f.mems.len() as u32);
            Some(at)
        })
        .collect();
    let leaves: Vec<Option<Leaf>> = if fuse {
        p.functions.iter().zip(&first).map(|(f, &d)| Leaf::of(compile_function(p, f, &[], false, d))).collect()
    } else {
        Vec::new()
    };
    let funcs: Vec<FuncCode> =
        p.functions.iter().zip(&first).map(|(f, &d)| compile_function(p, f, &leaves, fuse, d)).collect();
    let lanes_alike = !funcs
        .iter()
        .flat_map(|f| &f.ops)
        .any(|op| matches!(op, Op::Intr(i) if matches!(**i, Intr::Fence { .. } | Intr::Mbar { .. })));
    Code { funcs, fast: fuse, lanes_alike }
}

/// A function whose calls the interpreter runs inline: its code is straight-line register
/// arithmetic (constants, copies, unary and binary operations, fused multiply-adds,
/// selects, conversions, thread and block indices, pure math functions) ending in its one
/// return, and reads no register before writing it except its parameters. Such a call has
/// no effect but its result, cannot diverge, wait or touch memory, and its frame would
/// start as zeros that the body never reads, so running the body on registers of the
/// caller's frame (after copying the arguments in, with the caller's lanes) computes the
/// same values as the call, without a frame, a reconvergence record and two dispatches
/// through the scheduler. Small index helpers (`exchange_slot`, a status word's packing)
/// are a tenth of the ops a look-back scan runs, and each was a call.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// The body, without its return and end.
    body: Vec<Op>,
    info: Vec<OpInfo>,
    params: Vec<R>,
    /// The register the return reads, if it returns a value, and the return's own
    /// information (its span).
    ret: Option<R>,
    ret_info: OpInfo,
    nregs: usize,
}

impl Leaf {
    fn of(c: FuncCode) -> Option<Leaf> {
        let ret = leaf_return(&c.ops, &c.params, c.nregs)?;
        let n = c.ops.len();
        Some(Leaf {
            body: c.ops[..n - 2].to_vec(),
            info: c.info[..n - 2].to_vec(),
            params: c.params,
            ret,
            ret_info: c.info[n - 2],
            nregs: c.nregs,
        })
    }
}

/// Whether `ops` (of a function of `nregs` registers with parameters `params`) are a
/// [`Leaf`]'s: ops that [`leaf_regs`] admits, each reading only parameters and registers
/// written before it, then one return of such a register (or of nothing) and the end.
/// `Some` of what the return reads.
fn leaf_return(ops: &[Op], params: &[R], nregs: usize) -> Option<Option<R>> {
    let n = ops.len();
    if n < 2 || !matches!(ops[n - 1], Op::End) {
        return None;
    }
    let Op::Ret { value: ret } = ops[n - 2] else { return None };
    let mut written = vec![false; nregs];
    for &p in params {
        written[p as usize] = true;
    }
    for op in &ops[..n - 2] {
        let (dst, srcs) = leaf_regs(op)?;
        if srcs.iter().any(|&r| !written[r as usize]) {
            return None;
        }
        written[dst as usize] = true;
    }
    if ret.is_some_and(|r| !written[r as usize]) {
        return None;
    }
    Some(ret)
}

/// The register an op of a [`Leaf`] writes and those it reads; `None` for every op that
/// may not appear in one.
fn leaf_regs(op: &Op) -> Option<(R, Vec<R>)> {
    Some(match op {
        Op::Const { dst, .. } | Op::Raw { dst, .. } | Op::RelId { dst, .. } => (*dst, vec![]),
        Op::Copy { dst, src } => (*dst, vec![*src]),
        Op::Un { dst, a, .. } | Op::Cast { dst, a, .. } => (*dst, vec![*a]),
        Op::Bin { dst, a, b, .. } => (*dst, vec![*a, *b]),
        Op::Fma { dst, a, b, c, .. } => (*dst, vec![*a, *b, *c]),
        Op::Select { dst, c, a, b } => (*dst, vec![*c, *a, *b]),
        Op::Intr(i) => match &**i {
            Intr::Math { dst, args, .. } => (*dst, args.clone()),
            _ => return None,
        },
        _ => return None,
    })
}

/// `op` of a [`Leaf`] with every register `r` renamed `base + r`.
fn leaf_op_at(op: &Op, base: R) -> Op {
    let m = |r: &R| r + base;
    match op {
        Op::Const { dst, bits } => Op::Const { dst: m(dst), bits: *bits },
        Op::Raw { dst, which } => Op::Raw { dst: m(dst), which: *which },
        Op::RelId { dst, code, target } => Op::RelId { dst: m(dst), code: *code, target: *target },
        Op::Copy { dst, src } => Op::Copy { dst: m(dst), src: m(src) },
        Op::Un { dst, op, ty, a } => Op::Un { dst: m(dst), op: *op, ty: *ty, a: m(a) },
        Op::Cast { dst, from, to, a } => Op::Cast { dst: m(dst), from: *from, to: *to, a: m(a) },
        Op::Bin { dst, op, ty, a, b, b_ty } => Op::Bin { dst: m(dst), op: *op, ty: *ty, a: m(a), b: m(b), b_ty: *b_ty },
        Op::Fma { dst, ty, a, b, c } => Op::Fma { dst: m(dst), ty: *ty, a: m(a), b: m(b), c: m(c) },
        Op::Select { dst, c, a, b } => Op::Select { dst: m(dst), c: m(c), a: m(a), b: m(b) },
        Op::Intr(i) => match &**i {
            Intr::Math { f, ty, dst, args, arg_ty } => Op::Intr(Box::new(Intr::Math {
                f: *f,
                ty: *ty,
                dst: m(dst),
                args: args.iter().map(m).collect(),
                arg_ty: *arg_ty,
            })),
            _ => unreachable!("`leaf_regs` admits no other intrinsic"),
        },
        _ => unreachable!("`leaf_regs` admits no other op"),
    }
}

struct Cx<'a> {
    f: &'a ir::Function,
    /// The functions whose calls run inline, by function id (empty: none).
    leaves: &'a [Option<Leaf>],
    /// The first of the scratch registers inlined calls run on, and how many there are:
    /// every inlined body uses the same ones (a leaf calls nothing, so no two are live at
    /// once; fragments of a warp that run two of them at once run disjoint lanes).
    inline_regs: Option<(R, usize)>,
    ops: Vec<Op>,
    info: Vec<OpInfo>,
    /// Enclosing loops: (latch pc placeholders to patch, exit pc placeholders).
    loops: Vec<LoopCx>,
    unsafe_depth: u32,
    /// Registers the simulator adds after the function's own (`ldmatrix`'s rows).
    scratch: usize,
    /// Integer constants of registers defined once, by a constant.
    consts: std::collections::HashMap<Reg, i128>,
}

struct LoopCx {
    continues: Vec<usize>,
    breaks: Vec<usize>,
}

/// [`FuncCode::param_written`] of `f`. Each pointer or tensor-map parameter has a parameter
/// memory, in parameter order (`prism_ir::lower`); a parameter without one counts as
/// written.
fn param_writes(f: &ir::Function) -> Vec<bool> {
    let mut mems = f.mems.iter().enumerate().filter(|(_, m)| m.kind == ir::MemKind::Param).map(|(i, _)| i);
    f.params
        .iter()
        .filter(|&&p| matches!(f.reg_ty(p), Type::Ptr | Type::TensorMap(_)))
        .map(|_| mems.next().is_none_or(|m| f.writes_param(prism_ir::MemId(m as u32))))
        .collect()
}

/// Which shared array each access site of `f` reaches ([`ArrayOf`]): the root of its
/// memory name through views, numbered from `first` for the function's declarations, or
/// the position of a pointer parameter among the function's parameter memories (the order
/// of a call's argument accesses, `ir::InstKind::Call`).
fn arrays_of(f: &ir::Function, first: u32) -> Vec<ArrayOf> {
    let params: Vec<usize> = (0..f.mems.len()).filter(|&m| f.mems[m].kind == ir::MemKind::Param).collect();
    f.accesses
        .iter()
        .map(|a| {
            let root = f.mem_root(a.mem).index();
            match f.mems[root].kind {
                ir::MemKind::Shared => ArrayOf::Decl(first.saturating_add(root as u32)),
                ir::MemKind::Param => {
                    params.iter().position(|&m| m == root).map_or(ArrayOf::None, |k| ArrayOf::Param(k as u32))
                }
                _ => ArrayOf::None,
            }
        })
        .collect()
}

fn compile_function(_p: &ir::Program, f: &ir::Function, leaves: &[Option<Leaf>], fuse: bool, first: u32) -> FuncCode {
    let mut defs: std::collections::HashMap<Reg, (u32, Option<i128>)> = std::collections::HashMap::new();
    f.body.walk(&mut |k| {
        for d in k.defs() {
            let e = defs.entry(d).or_insert((0, None));
            e.0 += 1;
            if let InstKind::Const { value: prism_types::tir::ConstValue::Int(v), .. } = k {
                e.1 = Some(*v);
            }
        }
    });
    // Each constant as its register holds it: wrapped to the register's type, so a loop's end
    // or step is the value run time compares with even if a constant outside the type ever
    // reached the IR (review R46: the checker folded `abs(-2147483648)` to 2147483648 in an
    // `int`, and `step_fits` dropped the counter-overflow check of a loop whose real end was
    // INT_MIN; `prism_ir::verify` now rejects such a constant too).
    let consts = defs
        .into_iter()
        .filter_map(|(r, (n, v))| if n == 1 { v.map(|v| (r, v)) } else { None })
        .map(|(r, v)| match f.reg_ty(r) {
            Type::Scalar(s) if s.is_int() => (r, prism_types::value::to_i128(s, prism_types::value::norm(s, v as u64))),
            _ => (r, v),
        })
        .collect();
    let mut cx = Cx {
        f,
        leaves,
        inline_regs: None,
        ops: Vec::new(),
        info: Vec::new(),
        loops: Vec::new(),
        unsafe_depth: 0,
        scratch: 0,
        consts,
    };
    cx.block(&f.body, f.entry);
    cx.push(Op::End, f.span, f.entry);
    if fuse {
        fuse_local_fma(&mut cx.ops);
        fuse_latches(&mut cx.ops);
        fuse_scalars(&mut cx.ops);
    }
    let scratch = cx.scratch;
    let phases = access_phases(f, &cx.ops, &cx.info);
    let param_written = param_writes(f);
    FuncCode {
        name: f.name.clone(),
        ops: cx.ops,
        info: cx.info,
        nregs: f.regs.len() + scratch,
        reg_tys: f.regs.iter().map(|r| r.ty).chain((0..scratch).map(|_| Type::Scalar(Scalar::U32))).collect(),
        params: f.params.iter().map(|r| r.0).collect(),
        locals: f.locals.iter().map(|l| (l.elem, l.len)).collect(),
        local_names: f.locals.iter().map(|l| l.name.clone()).collect(),
        reg_names: f.regs.iter().map(|r| r.name.clone()).chain((0..scratch).map(|_| None)).collect(),
        accesses: f.accesses.clone(),
        phases,
        mems: f.mems.clone(),
        param_written,
        array_of: arrays_of(f, first),
        entry: f.entry,
        span: f.span,
    }
}

/// What each access site's atomic does, as synchronisation inference sees it (`prism_sync`'s
/// `Mode::add`, `crates/prism_sync/src/graph.rs`), for the atomics of safe code: an update
/// for every atomic but `atomic_load`, observing for `atomic_load`, `atomic_cas` and an
/// update whose result some instruction of the function reads (inference's `used`: every
/// register an instruction reads, a loop's condition included), and the update's
/// operation. [`crate::shadow::Phase::NONE`] for every other site: plain and volatile
/// accesses, and atomics inside `with unsafe:`, which inference leaves out.
fn access_phases(f: &ir::Function, ops: &[Op], info: &[OpInfo]) -> Vec<crate::shadow::Phase> {
    use crate::shadow::Phase;
    let mut used = std::collections::HashSet::new();
    f.body.walk(&mut |k| {
        used.extend(k.uses());
        if let InstKind::Loop { cond, .. } = k {
            used.insert(*cond);
        }
    });
    let read = |r: R| used.contains(&Reg(r));
    let mut phases = vec![Phase::NONE; f.accesses.len()];
    for (op, info) in ops.iter().zip(info) {
        let Op::Intr(i) = op else { continue };
        let (access, phase) = match &**i {
            Intr::Atomic { op, dst, access, .. } => {
                let op = match op {
                    0 | 1 => prism_types::intrinsics::atomic_op::ADD,
                    2 => prism_types::intrinsics::atomic_op::MIN,
                    3 => prism_types::intrinsics::atomic_op::MAX,
                    4 => prism_types::intrinsics::atomic_op::AND,
                    5 => prism_types::intrinsics::atomic_op::OR,
                    6 => prism_types::intrinsics::atomic_op::XOR,
                    _ => prism_types::intrinsics::atomic_op::OVERWRITE,
                };
                (*access, Phase::new(true, read(*dst), op))
            }
            Intr::Cas { access, .. } => {
                (*access, Phase::new(true, true, prism_types::intrinsics::atomic_op::OVERWRITE))
            }
            Intr::AtomicLoad { access, .. } => (*access, Phase::new(false, true, 0)),
            Intr::AtomicStore { access, .. } => {
                (*access, Phase::new(true, false, prism_types::intrinsics::atomic_op::OVERWRITE))
            }
            _ => continue,
        };
        // `volatile_load` and `volatile_store` run as atomic loads and stores.
        let atomic = f.accesses.get(access as usize).is_some_and(|a| a.kind == ir::AccessKind::Atomic);
        if atomic && !info.in_unsafe {
            phases[access as usize] = phase;
        }
    }
    phases
}

impl Cx<'_> {
    fn pc(&self) -> u32 {
        self.ops.len() as u32
    }

    fn push(&mut self, op: Op, span: Span, code: Persp) -> usize {
        self.ops.push(op);
        self.info.push(OpInfo { span, code, in_unsafe: self.unsafe_depth > 0, inlined: false });
        self.ops.len() - 1
    }

    /// A new register after the function's own.
    fn scratch(&mut self) -> R {
        self.scratch += 1;
        (self.f.regs.len() + self.scratch - 1) as R
    }

    /// Whether counter `c`'s step can never leave its type: a constant step towards a
    /// constant end that the step after the last iteration cannot carry past the type's
    /// limit (`for i in range(4)`). Those steps need no check (the common case in inner
    /// loops, where a checked step costs about 6% of a tiled gemm's run).
    fn step_fits(&self, c: Reg, (header, cond): (&ir::Block, R), latch: &ir::Block) -> bool {
        let Some(step) = latch.insts.iter().find_map(|i| match &i.kind {
            InstKind::Binary { dst, op: BinOp::Add, lhs, rhs } if *dst == c && *lhs == c => self.consts.get(rhs),
            _ => None,
        }) else {
            return false;
        };
        let Some((op, end)) = header.insts.iter().find_map(|i| match &i.kind {
            InstKind::Binary { dst, op: op @ (BinOp::Lt | BinOp::Gt), lhs, rhs } if *lhs == c && dst.0 == cond => {
                self.consts.get(rhs).map(|e| (*op, *e))
            }
            _ => None,
        }) else {
            return false;
        };
        let ty = self.scalar(c);
        if !ty.is_int() {
            return false;
        }
        let (lo, hi) = prism_types::consts::int_range(ty);
        match op {
            BinOp::Lt if *step > 0 => end - 1 + step <= hi,
            BinOp::Gt if *step < 0 => end + 1 + step >= lo,
            _ => false,
        }
    }

    fn scalar(&self, r: Reg) -> Scalar {
        match self.f.reg_ty(r) {
            Type::Scalar(s) => s,
            // Pointers and handles are 64-bit values.
            _ => Scalar::U64,
        }
    }

    fn block(&mut self, b: &ir::Block, code: Persp) {
        for i in &b.insts {
            self.inst(i, code);
        }
    }

    fn patch(&mut self, at: usize, target: u32) {
        match &mut self.ops[at] {
            Op::Jump { target: t } => *t = target,
            Op::Branch { else_pc, .. } => *else_pc = target,
            _ => unreachable!("only jumps and branches are patched"),
        }
    }

    fn inst(&mut self, i: &ir::Inst, code: Persp) {
        let span = i.span;
        use InstKind as K;
        match &i.kind {
            K::Const { dst, value } => {
                let bits = crate::value::const_bits(self.scalar(*dst), *value);
                self.push(Op::Const { dst: dst.0, bits }, span, code);
            }
            K::Copy { dst, src } => {
                self.push(Op::Copy { dst: dst.0, src: src.0 }, span, code);
            }
            K::Unary { dst, op, arg } => {
                let ty = self.scalar(*arg);
                self.push(Op::Un { dst: dst.0, op: *op, ty, a: arg.0 }, span, code);
            }
            K::Binary { dst, op, lhs, rhs } => {
                let (ty, b_ty) = (self.scalar(*lhs), self.scalar(*rhs));
                self.push(Op::Bin { dst: dst.0, op: *op, ty, a: lhs.0, b: rhs.0, b_ty }, span, code);
            }
            K::Select { dst, cond, then, otherwise } => {
                self.push(Op::Select { dst: dst.0, c: cond.0, a: then.0, b: otherwise.0 }, span, code);
            }
            K::Cast { dst, arg } => {
                let (from, to) = (self.scalar(*arg), self.scalar(*dst));
                self.push(Op::Cast { dst: dst.0, from, to, a: arg.0 }, span, code);
            }
            K::RelId { dst, code: c, target } => {
                self.push(Op::RelId { dst: dst.0, code: *c, target: *target }, span, code);
            }
            K::Raw { dst, index } => {
                self.push(Op::Raw { dst: dst.0, which: *index }, span, code);
            }
            K::SharedAddr { dst, offset, len, .. } => {
                self.push(Op::SharedAddr { dst: dst.0, offset: *offset, len: *len }, span, code);
            }
            K::LocalAddr { dst, local } => {
                self.push(Op::LocalAddr { dst: dst.0, local: local.0 }, span, code);
            }
            K::PtrOffset { dst, base, offset, bound: None } => {
                let off_ty = self.scalar(*offset);
                self.push(Op::PtrAdd { dst: dst.0, base: base.0, off: offset.0, off_ty }, span, code);
            }
            K::PtrOffset { dst, base, offset, bound: Some((len, elem)) } => {
                let size = elem.size().max(1);
                self.push(Op::PtrSlot { dst: dst.0, base: base.0, off: offset.0, len: *len, size }, span, code);
            }
            K::Load { dst, ptr, index, access } => {
                let (ty, index_ty) = (self.scalar(*dst), self.scalar(*index));
                self.push(
                    Op::Load { dst: dst.0, ty, ptr: ptr.0, index: index.0, index_ty, access: access.0 },
                    span,
                    code,
                );
            }
            K::Store { ptr, index, value, access } => {
                let (ty, index_ty) = (self.scalar(*value), self.scalar(*index));
                let op = Op::Store { ty, ptr: ptr.0, index: index.0, index_ty, value: value.0, access: access.0 };
                self.push(op, span, code);
            }
            K::LoadVec { dsts, ptr, index, access } => {
                let (ty, index_ty) = (self.scalar(dsts[0]), self.scalar(*index));
                let dsts = dsts.iter().map(|r| r.0).collect();
                let intr = Intr::LoadVec { ty, dsts, ptr: ptr.0, index: index.0, index_ty, access: access.0 };
                self.push(Op::Intr(Box::new(intr)), span, code);
            }
            K::StoreVec { ptr, index, values, access } => {
                let (ty, index_ty) = (self.scalar(values[0]), self.scalar(*index));
                let values = values.iter().map(|r| r.0).collect();
                let intr = Intr::StoreVec { ty, values, ptr: ptr.0, index: index.0, index_ty, access: access.0 };
                self.push(Op::Intr(Box::new(intr)), span, code);
            }
            K::LocalDecl { local } => {
                self.push(Op::LocalDecl { local: local.0 }, span, code);
            }
            K::LocalLoad { dst, local, index } => {
                let index_ty = self.scalar(*index);
                self.push(Op::LocalLoad { dst: dst.0, local: local.0, index: index.0, index_ty }, span, code);
            }
            K::LocalStore { local, index, value } => {
                let index_ty = self.scalar(*index);
                self.push(Op::LocalStore { local: local.0, index: index.0, index_ty, value: value.0 }, span, code);
            }
            K::Call { dst, func, args, .. } if self.leaves.get(func.0 as usize).is_some_and(Option::is_some) => {
                let leaf = self.leaves[func.0 as usize].as_ref().expect("checked above");
                let base = match self.inline_regs {
                    Some((base, n)) if n >= leaf.nregs => base,
                    _ => {
                        let base = self.scratch();
                        for _ in 1..leaf.nregs {
                            self.scratch();
                        }
                        self.inline_regs = Some((base, leaf.nregs));
                        base
                    }
                };
                // As many ops as the call ran (the call, the body, the return), so that
                // fuel and the scheduler's slices count the same steps either way.
                let moves = leaf.params.iter().zip(args).map(|(p, a)| (base + p, a.0)).collect();
                self.push(Op::Moves { moves }, span, code);
                let inlined = |info: &OpInfo| OpInfo {
                    in_unsafe: info.in_unsafe || self.unsafe_depth > 0,
                    inlined: true,
                    ..*info
                };
                for (op, info) in leaf.body.iter().zip(&leaf.info) {
                    self.ops.push(leaf_op_at(op, base));
                    self.info.push(inlined(info));
                }
                let ret = match (dst, leaf.ret) {
                    (Some(d), Some(r)) => vec![(d.0, base + r)],
                    _ => Vec::new(),
                };
                self.ops.push(Op::Moves { moves: ret.into_boxed_slice() });
                self.info.push(inlined(&leaf.ret_info));
            }
            K::Call { dst, func, args, smem_offset, accesses } => {
                let op = Op::Call {
                    func: func.0,
                    args: args.iter().map(|r| r.0).collect(),
                    dst: dst.map(|d| d.0),
                    smem_offset: *smem_offset,
                    arrays: accesses.iter().map(|a| a.0).collect(),
                };
                self.push(op, span, code);
            }
            K::Intrinsic { dsts, intrinsic, args, accesses } if intrinsic.sig().name.starts_with("ldmatrix") => {
                // Two ops: each lane reads its own row (memory checks per lane), then the warp
                // exchanges rows like a shuffle (a collective over registers only). The rows
                // travel in four scratch registers of the function.
                let ir::IntrArg::Elem { ptr, index } = args[0] else { unreachable!("ldmatrix takes an element") };
                let rows = [0, 1, 2, 3].map(|_| self.scratch());
                let name = intrinsic.sig().name;
                let count = if name.starts_with("ldmatrix_x4") { 4u8 } else { 2 };
                let (trans, wide) = (name.contains("_trans"), name.ends_with("tf32"));
                let lanes = if count == 4 { u32::MAX } else { 0xffff };
                let index_ty = self.scalar(index);
                let load = Intr::LdRows { ptr: ptr.0, index: index.0, index_ty, rows, lanes, access: accesses[0].0 };
                self.push(Op::Intr(Box::new(load)), span, code);
                let dsts = dsts.iter().map(|r| r.0).collect();
                self.push(Op::Intr(Box::new(Intr::LdMatrix { rows, dsts, count, trans, wide })), span, code);
            }
            K::Intrinsic { dsts, intrinsic, args, accesses } => {
                self.intrinsic(*intrinsic, dsts, args, accesses, span, code)
            }
            K::Barrier { scope, .. } => {
                self.push(Op::Barrier { scope: *scope, order: true }, span, code);
            }
            K::AssertUniform { reg, persp, what } if self.f.reg_ty(*reg) == Type::Ptr => {
                self.push(Op::AssertUniformPtr { reg: reg.0, persp: *persp, what: *what }, span, code);
            }
            K::AssertUniform { reg, persp, what } => {
                let ty = self.scalar(*reg);
                self.push(Op::AssertUniform { reg: reg.0, persp: *persp, ty, what: *what }, span, code);
            }
            K::AssertUniformLocal { local, persp, what } => {
                self.push(Op::AssertUniformLocal { local: local.0, persp: *persp, what: *what }, span, code);
            }
            K::BarrierArrive { scope, id, .. } => {
                self.push(Op::Arrive { scope: *scope, id: *id }, span, code);
            }
            K::BarrierWait { scope, id } => {
                self.push(Op::Wait { scope: *scope, id: *id }, span, code);
            }
            K::AsyncCommit => {
                self.push(Op::AsyncCommit, span, code);
            }
            K::AsyncWait { pending, .. } => {
                self.push(Op::AsyncWait { pending: *pending }, span, code);
            }
            K::If { cond, then, otherwise, uniform } => {
                let uniform = *uniform && self.unsafe_depth == 0;
                let br = self.push(Op::Branch { cond: cond.0, else_pc: 0, join: 0, uniform }, span, code);
                self.block(then, code);
                let jump = self.push(Op::Jump { target: 0 }, span, code);
                let else_pc = self.pc();
                self.block(otherwise, code);
                let join = self.pc();
                self.push(Op::Join, span, code);
                self.patch(br, else_pc);
                if let Op::Branch { join: j, .. } = &mut self.ops[br] {
                    *j = join;
                }
                self.patch(jump, join);
            }
            K::Loop { header, cond, body, latch, counter, .. } => {
                let enter = self.push(Op::LoopEnter { exit: 0 }, span, code);
                let head = self.pc();
                self.block(header, code);
                let uniform = self.unsafe_depth == 0;
                let test = self.push(Op::LoopTest { cond: cond.0, exit: 0, uniform }, span, code);
                // Only a loop with a `continue` needs its lanes to meet at the latch: without
                // one, lanes that part in the body meet again before it (or leave the loop).
                let iterate = continues(body).then(|| self.push(Op::Iterate { join: 0 }, span, code));
                self.loops.push(LoopCx { continues: Vec::new(), breaks: Vec::new() });
                self.block(body, code);
                let l = self.loops.pop().expect("pushed above");
                let latch_pc = self.pc();
                if let Some(at) = iterate {
                    self.push(Op::Join, span, code);
                    self.ops[at] = Op::Iterate { join: latch_pc };
                }
                let checked = counter.is_some_and(|c| !self.step_fits(c, (header, cond.0), latch));
                for i in &latch.insts {
                    match &i.kind {
                        // The counter's step is checked: it must not wrap (`counter-overflow`).
                        K::Binary { dst, op: BinOp::Add, lhs, rhs }
                            if checked && Some(*dst) == *counter && lhs == dst =>
                        {
                            let ty = self.scalar(*dst);
                            self.push(Op::Step { iv: dst.0, step: rhs.0, ty }, i.span, code);
                        }
                        _ => self.inst(i, code),
                    }
                }
                self.push(Op::Jump { target: head }, span, code);
                let exit = self.pc();
                self.push(Op::Join, span, code);
                if let Op::LoopEnter { exit: e } = &mut self.ops[enter] {
                    *e = exit;
                }
                if let Op::LoopTest { exit: e, .. } = &mut self.ops[test] {
                    *e = exit;
                }
                for c in l.continues {
                    self.patch(c, latch_pc);
                }
                for b in l.breaks {
                    self.patch(b, exit);
                }
            }
            K::Break => {
                let at = self.push(Op::Jump { target: 0 }, span, code);
                self.loops.last_mut().expect("verified: break inside a loop").breaks.push(at);
            }
            K::Continue => {
                let at = self.push(Op::Jump { target: 0 }, span, code);
                self.loops.last_mut().expect("verified: continue inside a loop").continues.push(at);
            }
            K::Return { value } => {
                self.push(Op::Ret { value: value.map(|v| v.0) }, span, code);
            }
            K::Group { persp, body } => self.block(body, *persp),
            K::Split { unit, cases } => {
                let at = self.push(Op::Split { unit: *unit, cases: Box::new([]), end: 0 }, span, code);
                let mut targets = Vec::new();
                let mut jumps = Vec::new();
                for c in cases {
                    targets.push((c.offset, c.count, self.pc()));
                    self.block(&c.body, c.persp);
                    jumps.push(self.push(Op::Jump { target: 0 }, span, code));
                }
                let end = self.pc();
                self.push(Op::Join, span, code);
                for j in jumps {
                    self.patch(j, end);
                }
                self.ops[at] = Op::Split { unit: *unit, cases: targets.into_boxed_slice(), end };
            }
            K::Scope { body, .. } => self.block(body, code),
            K::Unsafe { body } => {
                self.unsafe_depth += 1;
                self.block(body, code);
                self.unsafe_depth -= 1;
            }
            K::Verbatim { text, sim } => match sim {
                Some(b) => {
                    self.unsafe_depth += 1;
                    self.block(b, code);
                    self.unsafe_depth -= 1;
                }
                None => {
                    let what = format!("verbatim CUDA `unsafe(\"{}\")`", text.escape_debug());
                    self.push(Op::NotSimulated { what: what.into_boxed_str() }, span, code);
                }
            },
        }
    }

    fn intrinsic(
        &mut self,
        id: IntrinsicId,
        dsts: &[Reg],
        args: &[IntrArg],
        accesses: &[prism_ir::AccessId],
        span: Span,
        code: Persp,
    ) {
        let sig = id.sig();
        let val = |i: usize| match args[i] {
            IntrArg::Val(r) => r,
            IntrArg::Elem { ptr, .. } => ptr,
        };
        let elem = |i: usize| match args[i] {
            IntrArg::Elem { ptr, index } => (ptr, index),
            IntrArg::Val(r) => (r, r),
        };
        let acc = |i: usize| accesses.get(i).map(|a| a.0).unwrap_or(0);
        // A fused multiply-add (contraction makes one of every product feeding an addition)
        // is as common as a multiplication in float kernels: it gets its own op with a
        // straight lane loop, like `Bin`, instead of the generic math path.
        if sig.name == "fma" {
            let ty = self.scalar(dsts[0]);
            if matches!(ty, Scalar::F32 | Scalar::F64) && args.len() == 3 {
                let (a, b, c) = (val(0).0, val(1).0, val(2).0);
                self.push(Op::Fma { dst: dsts[0].0, ty, a, b, c }, span, code);
                return;
            }
        }
        let intr = match (sig.family, sig.name) {
            (Family::Cast, _) => {
                let (from, to) = (self.scalar(val(0)), self.scalar(dsts[0]));
                self.push(Op::Cast { dst: dsts[0].0, from, to, a: val(0).0 }, span, code);
                return;
            }
            (Family::Warp, name @ ("shfl" | "shfl_up" | "shfl_down" | "shfl_xor")) => {
                let kind = match name {
                    "shfl" => 0,
                    "shfl_up" => 1,
                    "shfl_down" => 2,
                    _ => 3,
                };
                Intr::Shfl {
                    kind,
                    ty: self.scalar(dsts[0]),
                    dst: dsts[0].0,
                    value: val(0).0,
                    lane: val(1).0,
                    lane_ty: self.scalar(val(1)),
                }
            }
            (Family::Warp, name @ ("ballot" | "any" | "all")) => {
                let kind = match name {
                    "ballot" => 0,
                    "any" => 1,
                    _ => 2,
                };
                Intr::Vote { kind, dst: dsts[0].0, pred: val(0).0 }
            }
            // The PTX ISA elects some lane, the same one every time: the simulator the
            // lowest (kind 3; no operand).
            (Family::Warp, "elect_sync") => Intr::Vote { kind: 3, dst: dsts[0].0, pred: dsts[0].0 },
            (Family::Warp, name) => {
                let op = match name {
                    "reduce_add" => 0,
                    "reduce_min" => 1,
                    "reduce_max" => 2,
                    "reduce_and" => 3,
                    "reduce_or" => 4,
                    _ => 5,
                };
                Intr::Reduce { op, ty: self.scalar(dsts[0]), dst: dsts[0].0, value: val(0).0 }
            }
            (Family::Mma, name) => {
                let (shape, na, nb) = match name {
                    "intrinsic.mma" | "intrinsic.mma_tf32" | "intrinsic.mma_tf32_rz" => (0, 4, 2),
                    "intrinsic.mma_bf16" => (1, 8, 4),
                    _ => (2, 8, 4),
                };
                let regs: Vec<R> = (0..args.len()).map(|i| val(i).0).collect();
                Intr::Mma {
                    shape,
                    rz: name == "intrinsic.mma_tf32_rz",
                    a: regs[..na].to_vec(),
                    b: regs[na..na + nb].to_vec(),
                    c: regs[na + nb..na + nb + 4].to_vec(),
                    d: dsts.iter().map(|r| r.0).collect(),
                }
            }
            (Family::Atomics, name) => {
                let (ptr, index) = elem(0);
                let ty = self.scalar(dsts.first().copied().unwrap_or_else(|| val(1)));
                let index_ty = self.scalar(index);
                match name {
                    "atomic_cas" => Intr::Cas {
                        ty,
                        dst: dsts[0].0,
                        ptr: ptr.0,
                        index: index.0,
                        index_ty,
                        compare: val(1).0,
                        value: val(2).0,
                        access: acc(0),
                    },
                    "atomic_load" => {
                        Intr::AtomicLoad { ty, dst: dsts[0].0, ptr: ptr.0, index: index.0, index_ty, access: acc(0) }
                    }
                    "atomic_store" => {
                        let ty = self.scalar(val(1));
                        Intr::AtomicStore { ty, ptr: ptr.0, index: index.0, index_ty, value: val(1).0, access: acc(0) }
                    }
                    _ => {
                        let op = match name {
                            "atomic_add" => 0,
                            "atomic_sub" => 1,
                            "atomic_min" => 2,
                            "atomic_max" => 3,
                            "atomic_and" => 4,
                            "atomic_or" => 5,
                            "atomic_xor" => 6,
                            _ => 7,
                        };
                        Intr::Atomic {
                            op,
                            ty,
                            dst: dsts[0].0,
                            ptr: ptr.0,
                            index: index.0,
                            index_ty,
                            value: val(1).0,
                            access: acc(0),
                        }
                    }
                }
            }
            (Family::Raw, "volatile_load") => {
                let (ptr, index) = elem(0);
                let index_ty = self.scalar(index);
                Intr::AtomicLoad {
                    ty: self.scalar(dsts[0]),
                    dst: dsts[0].0,
                    ptr: ptr.0,
                    index: index.0,
                    index_ty,
                    access: acc(0),
                }
            }
            (Family::Raw, "volatile_store") => {
                let (ptr, index) = elem(0);
                let index_ty = self.scalar(index);
                let ty = self.scalar(val(1));
                Intr::AtomicStore { ty, ptr: ptr.0, index: index.0, index_ty, value: val(1).0, access: acc(0) }
            }
            (Family::AsyncCopy, "cp_async" | "cp_async_zfill") => {
                let (dst, dst_index) = elem(0);
                let (src, src_index) = elem(1);
                let elem_ty = self.f.mems[self.f.accesses[acc(0) as usize].mem.index()].elem;
                Intr::CpAsync {
                    elem: elem_ty,
                    dst: dst.0,
                    dst_index: dst_index.0,
                    dst_index_ty: self.scalar(dst_index),
                    src: src.0,
                    src_index: src_index.0,
                    src_index_ty: self.scalar(src_index),
                    bytes: val(2).0,
                    src_bytes: (sig.name == "cp_async_zfill").then(|| val(3).0),
                    access: acc(0),
                    src_access: acc(1),
                }
            }
            (Family::AsyncCopy, name) if id.is_tma_store() => {
                let Type::TensorMap(ty) = self.f.reg_ty(val(0)) else {
                    let what = format!("`{name}` of an untyped `CUTensorMap`");
                    self.push(Op::NotSimulated { what: what.into_boxed_str() }, span, code);
                    return;
                };
                let (src, src_index) = elem(args.len() - 1);
                Intr::TmaStore {
                    ty,
                    map: val(0).0,
                    src: src.0,
                    src_index: src_index.0,
                    src_index_ty: self.scalar(src_index),
                    coords: (1..args.len() - 1).map(|i| val(i).0).collect(),
                    map_access: acc(0),
                    access: acc(1),
                }
            }
            (Family::AsyncCopy, name) if id.is_tma() => {
                // Only a typed map says what the copy moves; an untyped `CUTensorMap` is the
                // caller's business, which the simulator cannot know.
                let Type::TensorMap(ty) = self.f.reg_ty(val(1)) else {
                    let what = format!("`{name}` of an untyped `CUTensorMap` (declare it `tensor_map(...)`)");
                    self.push(Op::NotSimulated { what: what.into_boxed_str() }, span, code);
                    return;
                };
                let (dst, dst_index) = elem(0);
                let now = id.is_tma_mbar();
                let coords_end = if now { args.len() - 1 } else { args.len() };
                let copy = Intr::Tma {
                    ty,
                    map: val(1).0,
                    dst: dst.0,
                    dst_index: dst_index.0,
                    dst_index_ty: self.scalar(dst_index),
                    coords: (2..coords_end).map(|i| val(i).0).collect(),
                    access: acc(0),
                    now,
                    map_access: acc(1),
                };
                if !now {
                    copy
                } else {
                    // The copy lands, then completes its box's bytes on the mbarrier, which
                    // releases the write to the barrier's waiters.
                    self.push(Op::Intr(Box::new(copy)), span, code);
                    let (bar, bar_index) = elem(args.len() - 1);
                    Intr::Mbar {
                        op: MbarOp::CompleteTx,
                        dst: None,
                        ptr: bar.0,
                        index: bar_index.0,
                        index_ty: self.scalar(bar_index),
                        arg: None,
                        bytes: Some(ty.box_bytes()),
                        // The barrier is the copy's last memory operand.
                        access: acc(accesses.len().saturating_sub(1)),
                    }
                }
            }
            (Family::Mbarrier, name) => {
                let (ptr, index) = elem(0);
                let op = match name {
                    "mbarrier_init" => MbarOp::Init,
                    "mbarrier_arrive" => MbarOp::Arrive,
                    "mbarrier_arrive_expect_tx" => MbarOp::ArriveExpectTx,
                    "mbarrier_expect_tx" => MbarOp::ExpectTx,
                    "mbarrier_complete_tx" => MbarOp::CompleteTx,
                    "mbarrier_wait_parity" => MbarOp::WaitParity,
                    _ => MbarOp::Inval,
                };
                Intr::Mbar {
                    op,
                    dst: dsts.first().map(|d| d.0),
                    ptr: ptr.0,
                    index: index.0,
                    index_ty: self.scalar(index),
                    arg: (args.len() > 1).then(|| val(1).0),
                    bytes: None,
                    access: acc(0),
                }
            }
            (Family::Fence, "__threadfence") => Intr::Fence { device: true },
            (Family::Fence, "__threadfence_block") => Intr::Fence { device: false },
            (Family::Fence, "trap") => Intr::Trap,
            (Family::Fence, _) => Intr::Nop,
            (Family::Math, name) => {
                let arg_ty = self.scalar(val(0));
                Intr::Math {
                    f: crate::ops::MathFn::from_name(name),
                    ty: self.scalar(dsts[0]),
                    dst: dsts[0].0,
                    args: (0..args.len()).map(|i| val(i).0).collect(),
                    arg_ty,
                }
            }
            // Aligned warpgroup operations without a simulated effect on values: every
            // thread of the warpgroup must reach the same one together (a partial or
            // diverged warpgroup is `barrier-divergence`); they order no memory.
            (Family::Warpgroup, name) if id.is_wgmma() => {
                // The warpgroup meets first (every thread of it must issue the same wgmma);
                // then each thread computes its own fragment of D from shared memory.
                let Some(&n) = self.consts.get(&val(3)) else {
                    self.push(Op::NotSimulated { what: "a wgmma whose N is not a constant".into() }, span, code);
                    return;
                };
                let layout = if name.ends_with("_sw") {
                    let Some(&span_bytes) = self.consts.get(&val(4)) else {
                        self.push(Op::NotSimulated { what: "a wgmma whose span is not a constant".into() }, span, code);
                        return;
                    };
                    let ((_, ai), (_, bi)) = (elem(1), elem(2));
                    WgmmaLayout::Swizzled {
                        span: span_bytes as u32,
                        a_index: ai.0,
                        a_ty: self.scalar(ai),
                        b_index: bi.0,
                        b_ty: self.scalar(bi),
                    }
                } else {
                    WgmmaLayout::Interleaved
                };
                self.push(Op::Barrier { scope: Persp::WARPGROUP, order: false }, span, code);
                Intr::Wgmma {
                    n: n as u32,
                    elem: id.wgmma_input().unwrap_or(Scalar::BF16),
                    acc: val(0).0,
                    a: val(1).0,
                    b: val(2).0,
                    layout,
                    accesses: [acc(0), acc(1), acc(2)],
                }
            }
            (Family::Warpgroup, name) if !id.is_wgmma() => {
                self.push(Op::Barrier { scope: Persp::WARPGROUP, order: false }, span, code);
                // Then each thread's own bookkeeping of its wgmma groups.
                match name {
                    "wgmma_commit_group" => Intr::WgmmaCommit,
                    "wgmma_wait" => match self.consts.get(&val(0)) {
                        Some(&pending) => Intr::WgmmaWait { pending: pending.max(0) as u32 },
                        None => return,
                    },
                    _ => return,
                }
            }
            (family, name) => {
                let what = match family {
                    Family::Warpgroup => format!("the Hopper warpgroup operation `{name}`"),
                    Family::AsyncCopy => format!("the TMA copy `{name}`"),
                    _ => format!("the intrinsic `{name}`"),
                };
                self.push(Op::NotSimulated { what: what.into_boxed_str() }, span, code);
                return;
            }
        };
        self.push(Op::Intr(Box::new(intr)), span, code);
    }
}

/// The function id of a compiled function (for messages).
pub fn func_id(i: u32) -> FuncId {
    FuncId(i)
}

#[cfg(test)]
mod tests {
    use super::{BinOp, Op, fuse_latches, fuse_local_fma};
    use prism_types::perspective::Persp;
    use prism_types::ty::Scalar;

    fn load(dst: u32, local: u32, index: u32) -> Op {
        Op::LocalLoad { dst, local, index, index_ty: Scalar::I32 }
    }

    fn fma(dst: u32, a: u32, b: u32, c: u32) -> Op {
        Op::Fma { dst, ty: Scalar::F32, a, b, c }
    }

    fn store(local: u32, index: u32, value: u32) -> Op {
        Op::LocalStore { local, index, index_ty: Scalar::I32, value }
    }

    /// The number of loads of the superinstruction at `at`, if there is one.
    fn fused_loads(ops: &[Op], at: usize) -> Option<usize> {
        match &ops[at] {
            Op::LocalFma(f) => Some(f.loads.len()),
            _ => None,
        }
    }

    #[test]
    fn leaves_are_straight_line_register_code_that_writes_before_it_reads() {
        use super::leaf_return;
        let bin = |dst, a, b| Op::Bin { dst, op: BinOp::Add, ty: Scalar::I32, a, b, b_ty: Scalar::I32 };
        let ret = |value| Op::Ret { value };
        // `r2 = r0 + r1; r3 = 7; r4 = r2 + r3; return r4` with parameters r0 and r1.
        let body = [bin(2, 0, 1), Op::Const { dst: 3, bits: 7 }, bin(4, 2, 3)];
        let with = |tail: &[Op]| body.iter().chain(tail).cloned().collect::<Vec<Op>>();
        assert_eq!(leaf_return(&with(&[ret(Some(4)), Op::End]), &[0, 1], 5), Some(Some(4)));
        assert_eq!(leaf_return(&with(&[ret(None), Op::End]), &[0, 1], 5), Some(None));
        // A register read before anything wrote it (its frame's zero), in the body or by
        // the return.
        assert_eq!(leaf_return(&with(&[ret(Some(4)), Op::End]), &[0], 5), None);
        assert_eq!(leaf_return(&[bin(2, 0, 0), ret(Some(3)), Op::End], &[0], 5), None);
        // Memory, control flow, calls and checks are not a leaf's; nor is a missing return
        // or one before the end.
        let load = Op::Load { dst: 2, ty: Scalar::I32, ptr: 0, index: 1, index_ty: Scalar::I32, access: 0 };
        for op in [
            load,
            Op::Jump { target: 3 },
            Op::Call { func: 0, args: Box::new([0]), dst: Some(2), smem_offset: 0, arrays: Box::new([]) },
            Op::AssertUniform { reg: 0, persp: Persp::THREAD, ty: Scalar::I32, what: prism_ir::ir::Checked::Variable },
            Op::AssertUniformPtr {
                reg: 0,
                persp: Persp::BLOCK,
                what: prism_ir::ir::Checked::Argument { func: prism_ir::FuncId(0), index: 0 },
            },
            Op::Barrier { scope: Persp::THREAD, order: true },
        ] {
            assert_eq!(leaf_return(&[op, ret(Some(0)), Op::End], &[0, 1], 5), None);
        }
        assert_eq!(leaf_return(&with(&[Op::End]), &[0, 1], 5), None);
        assert_eq!(leaf_return(&[ret(Some(0)), bin(2, 0, 1), Op::End], &[0, 1], 5), None);
    }

    #[test]
    fn a_register_tile_step_is_fused_and_its_ops_stay_in_place() {
        let mut ops = vec![load(1, 0, 10), load(2, 1, 11), load(3, 2, 12), fma(4, 1, 2, 3), store(2, 12, 4), Op::End];
        let before = format!("{:?}", &ops[1..]);
        fuse_local_fma(&mut ops);
        assert_eq!(fused_loads(&ops, 0), Some(3));
        // Jumps into the group and the fallback still find the original ops.
        assert_eq!(format!("{:?}", &ops[1..]), before);
        let Op::LocalFma(f) = &ops[0] else { unreachable!() };
        assert!(matches!(f.first, Op::LocalLoad { dst: 1, local: 0, index: 10, .. }));
    }

    #[test]
    fn a_group_whose_writes_redefine_an_index_is_not_fused() {
        // The fma's result is the store's index.
        let mut ops = vec![load(1, 0, 10), fma(10, 1, 1, 1), store(0, 10, 1), Op::End];
        fuse_local_fma(&mut ops);
        assert_eq!(fused_loads(&ops, 0), None);
        // The loaded value is the store's index.
        let mut ops = vec![load(12, 0, 10), fma(4, 12, 12, 12), store(0, 12, 4), Op::End];
        fuse_local_fma(&mut ops);
        assert_eq!(fused_loads(&ops, 0), None);
        // The first load redefines the second load's index: the group starts after it.
        let mut ops = vec![load(11, 0, 10), load(2, 1, 11), fma(4, 2, 2, 2), store(1, 13, 4), Op::End];
        fuse_local_fma(&mut ops);
        assert_eq!(fused_loads(&ops, 0), None);
        assert_eq!(fused_loads(&ops, 1), Some(1));
    }

    #[test]
    fn only_an_fma_between_loads_and_a_store_is_fused() {
        let mut ops = vec![load(1, 0, 10), Op::Copy { dst: 4, src: 1 }, store(0, 10, 4), Op::End];
        fuse_local_fma(&mut ops);
        assert_eq!(fused_loads(&ops, 0), None);
        let mut ops = vec![fma(4, 1, 2, 3), store(0, 10, 4), Op::End];
        fuse_local_fma(&mut ops);
        assert!(ops.iter().all(|op| !matches!(op, Op::LocalFma(_))));
        // At most three loads: the one before them stays a plain load.
        let mut ops =
            vec![load(5, 0, 10), load(1, 0, 10), load(2, 1, 11), load(3, 2, 12), fma(4, 1, 2, 3), store(2, 12, 4)];
        fuse_local_fma(&mut ops);
        assert_eq!(fused_loads(&ops, 0), None);
        assert_eq!(fused_loads(&ops, 1), Some(3));
    }

    fn bin(dst: u32, op: BinOp, a: u32, b: u32) -> Op {
        Op::Bin { dst, op, ty: Scalar::I32, a, b, b_ty: Scalar::I32 }
    }

    #[test]
    fn a_loop_back_edge_is_fused_and_its_ops_stay_in_place() {
        // 0 LoopEnter, 1 head: c = i < n, 2 test, 3 body, 4 latch: i = i + s, 5 jump 1, 6 join.
        let mut ops = vec![
            Op::LoopEnter { exit: 6 },
            bin(9, BinOp::Lt, 1, 2),
            Op::LoopTest { cond: 9, exit: 6, uniform: true },
            Op::Copy { dst: 3, src: 1 },
            bin(1, BinOp::Add, 1, 4),
            Op::Jump { target: 1 },
            Op::Join,
        ];
        let before = format!("{:?}", &ops[5..]);
        fuse_latches(&mut ops);
        let Op::Latch(l) = &ops[4] else { panic!("no latch: {ops:?}") };
        assert!(matches!(l.first, Op::Bin { dst: 1, op: BinOp::Add, .. }));
        assert_eq!((l.head, l.exit, l.uniform, l.cond.0), (1, 6, true, 9));
        assert_eq!(format!("{:?}", &ops[5..]), before);
    }

    #[test]
    fn only_a_one_op_head_testing_its_result_is_fused() {
        // The head computes two ops: not fused.
        let mut ops = vec![
            Op::LoopEnter { exit: 7 },
            bin(8, BinOp::Add, 1, 2),
            bin(9, BinOp::Lt, 8, 2),
            Op::LoopTest { cond: 9, exit: 7, uniform: true },
            bin(1, BinOp::Add, 1, 4),
            Op::Jump { target: 1 },
            Op::Join,
        ];
        fuse_latches(&mut ops);
        assert!(ops.iter().all(|op| !matches!(op, Op::Latch(_))));
        // The test reads another register than the head computes: not fused.
        let mut ops = vec![
            Op::LoopEnter { exit: 5 },
            bin(9, BinOp::Lt, 1, 2),
            Op::LoopTest { cond: 8, exit: 5, uniform: true },
            bin(1, BinOp::Add, 1, 4),
            Op::Jump { target: 1 },
            Op::Join,
        ];
        fuse_latches(&mut ops);
        assert!(ops.iter().all(|op| !matches!(op, Op::Latch(_))));
        // A forward jump (a `break`) after a binary op: not a back edge.
        let mut ops = vec![bin(1, BinOp::Add, 1, 4), Op::Jump { target: 3 }, Op::LoopEnter { exit: 5 }, Op::Join];
        fuse_latches(&mut ops);
        assert!(ops.iter().all(|op| !matches!(op, Op::Latch(_))));
    }
}
