//! The typed IR (TIR): what the checker produces and the later stages consume.
//!
//! It is a tree, like the AST, but every name is resolved to a [`VarId`] or [`FnId`], every
//! expression has a type and a value perspective, every statement records the code
//! perspective it runs at, implicit conversions are explicit [`ExprKind::Cast`]s, legacy
//! forms are gone, `elif` chains are nested `If`s, constant expressions are folded, `id()`
//! carries the two perspectives that give it meaning, and every shared allocation has a
//! static byte offset. A program reaches TIR only if the checker reported no errors, so
//! consumers may assume the perspective rules hold.
//!
//! Invariant: `VarId`s index `Function::vars` of the function they occur in; `FnId`s index
//! `Program::functions`.

use crate::intrinsics::IntrinsicId;
use crate::perspective::{Facts, Persp};
use crate::ty::{Scalar, Ty};
use prism_span::Span;
pub use prism_syntax::ast::{BinOp, FnKind, UnOp};
use std::fmt;

/// Index of a function in [`Program::functions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FnId(pub u32);

/// Index of a variable in [`Function::vars`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

impl fmt::Display for FnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fn{}", self.0)
    }
}

impl fmt::Display for VarId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// A checked program: every function of one file.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// Functions in source order.
    pub functions: Vec<Function>,
}

impl Program {
    /// The function with id `id`.
    pub fn function(&self, id: FnId) -> &Function {
        &self.functions[id.0 as usize]
    }

    /// Looks a function up by name.
    pub fn find(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
}

/// A checked function.
#[derive(Clone, Debug)]
pub struct Function {
    /// Its id.
    pub id: FnId,
    /// Its name.
    pub name: String,
    /// Kernel or device function.
    pub kind: FnKind,
    /// `def name(...)`.
    pub header_span: Span,
    /// The broadest perspective of the bound: what the body starts at.
    pub entry: Persp,
    /// Every perspective of the `@requires` bound (desugared).
    pub bound: Vec<Persp>,
    /// What the bound guarantees about threads per block and blocks per grid.
    pub facts: Facts,
    /// The declared shared-memory budget (`smem=`), in bytes.
    pub smem_budget: u64,
    /// The shared memory the body needs, in bytes (at most the budget).
    pub smem_need: u64,
    /// `@launch_bounds(n)`: the most threads per block a launch may use (the block shape's
    /// threads when only `block=` is given).
    pub launch_bounds: Option<u64>,
    /// `block=[X, Y, Z]` in `@requires`: the one block shape a launch may have.
    pub block_shape: Option<[u32; 3]>,
    /// The kernel's dynamic shared array (a `shared(T[n])` parameter), if it has one.
    pub dyn_shared: Option<DynShared>,
    /// `@launch_bounds(n, m)`: `m`, the blocks that must fit on a multiprocessor at once
    /// (a register cap for ptxas; no effect on the semantics).
    pub min_blocks: Option<u64>,
    /// Parameters in order.
    pub params: Vec<VarId>,
    /// The return type and perspective, if the function returns a value.
    pub ret: Option<(Scalar, Persp)>,
    /// Every variable of the function, including parameters, locals, loop variables,
    /// shared arrays and the names made by partition, claim and async.
    pub vars: Vec<Var>,
    /// The body.
    pub body: Block,
}

impl Function {
    /// The variable with id `id`.
    pub fn var(&self, id: VarId) -> &Var {
        &self.vars[id.0 as usize]
    }
}

/// A variable.
#[derive(Clone, Debug)]
pub struct Var {
    /// The source name.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Its perspective: its value is the same in every thread of a unit of it. For memory
    /// (`Ty::Ptr`), the perspective of the pointer: which units may use it.
    pub persp: Persp,
    /// What kind of variable it is.
    pub kind: VarKind,
    /// Where it was declared.
    pub span: Span,
}

/// Kinds of variables.
#[derive(Clone, Debug)]
pub enum VarKind {
    /// A function parameter; `shared` for `ptr(T, shared)`, which points into shared
    /// memory (every caller passes shared memory).
    Param { shared: bool },
    /// A mutable scalar or local array.
    Local,
    /// A `const(T)` scalar: assigned once, by its initialiser.
    Const,
    /// A `constexpr(T)` scalar; its value is folded into every use.
    Constexpr(ConstValue),
    /// A `for` loop variable.
    LoopVar,
    /// A lambda parameter of a partition's indexing function.
    LambdaParam,
    /// A shared array.
    Shared {
        /// Dimensions, outermost first.
        dims: Vec<u64>,
        /// Byte offset from the function's shared-memory base.
        offset: u64,
        /// Size in bytes.
        bytes: u64,
    },
    /// A name made by `partition`, `claim` or `async` from `parent`.
    View {
        /// The name narrowed.
        parent: VarId,
        /// How.
        how: ViewKind,
    },
}

/// How a view maps to its parent.
#[derive(Clone, Debug)]
pub enum ViewKind {
    /// `partition(parent, p=P, f=index)`: `view[i...]` is `parent[index(i...)]`.
    Partition(Lambda),
    /// `claim(parent, p=P)`: `view[i]` is `parent[i]`.
    Claim,
    /// `async(parent)`: `view[i]` is `parent[i]`, usable only by asynchronous copies.
    Async,
    /// `fill(parent)` / `stage(parent)` in a pipeline: `view[i...]` is
    /// `parent[t % stages, i...]` for the current tile `t`; with `fill`, usable only by
    /// asynchronous copies, otherwise read-only.
    Slot {
        /// Made by `fill`.
        fill: bool,
        /// The ring's slot count.
        stages: u64,
    },
}

/// A partition's indexing function, inlined at every access.
#[derive(Clone, Debug)]
pub struct Lambda {
    /// Parameters (variables of kind [`VarKind::LambdaParam`], type `int`).
    pub params: Vec<VarId>,
    /// The body, an integer expression.
    pub body: Expr,
}

/// A compile-time constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    /// A boolean.
    Bool(bool),
    /// An integer (stored wide; its type says how to interpret it).
    Int(i128),
    /// A floating-point number.
    Float(f64),
}

impl fmt::Display for ConstValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstValue::Bool(b) => write!(f, "{b}"),
            ConstValue::Int(i) => write!(f, "{i}"),
            ConstValue::Float(x) => write!(f, "{x:?}"),
        }
    }
}

/// A sequence of statements.
#[derive(Clone, Debug, Default)]
pub struct Block {
    /// The statements.
    pub stmts: Vec<Stmt>,
}

/// A statement, with the code perspective it runs at.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// The code perspective: the statement is executed together by every thread of a unit
    /// of this perspective.
    pub code: Persp,
    /// Where it was written.
    pub span: Span,
}

/// A place a scalar value can be stored: a scalar variable or an element of a local array.
#[derive(Clone, Debug)]
pub enum Place {
    /// A scalar variable.
    Var(VarId),
    /// An element of a thread-local array.
    Elem {
        /// The array.
        array: VarId,
        /// One index per dimension.
        index: Vec<Expr>,
    },
}

/// A `range` loop's `unroll=`: a request to nvcc (`#pragma unroll`), not part of what the
/// loop computes; the simulator runs every loop the same way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Unroll {
    /// No `unroll=`: nvcc decides.
    #[default]
    Auto,
    /// `unroll=True`: every iteration (the bounds and step are compile-time constants).
    Full,
    /// `unroll=N`: `N` iterations per copy of the body; `unroll=False` is `Count(1)`.
    Count(u32),
}

/// Statement forms.
// The tree is built once and walked a few times; boxing the larger variants would cost
// more allocations than the padding costs memory.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum StmtKind {
    /// Declares a scalar, local array or shared array; without an initialiser the value is
    /// zero (shared arrays are not initialised).
    Decl {
        /// The variable.
        var: VarId,
        /// Its initial value, converted to its type.
        init: Option<Expr>,
    },
    /// `place = value` or `place op= value`.
    Assign {
        /// Where to.
        place: Place,
        /// The operator of `op=`.
        op: Option<BinOp>,
        /// The value (converted to the place's type for `=`; for `op=`, of the operation's
        /// common type).
        value: Expr,
    },
    /// A store through memory: `mem[index] = value` (or `op=`).
    Store {
        /// The pointer, shared array or view.
        mem: VarId,
        /// One index per dimension of the name.
        index: Vec<Expr>,
        /// The operator of `op=`.
        op: Option<BinOp>,
        /// The value.
        value: Expr,
    },
    /// An expression evaluated for its effects (a call).
    Expr(Expr),
    /// `if cond: then else: otherwise`
    If {
        /// A condition uniform over the code perspective.
        cond: Expr,
        /// Taken when true.
        then: Block,
        /// Taken when false (possibly empty).
        otherwise: Block,
    },
    /// `for var in range(start, end, step)`
    For {
        /// The loop variable.
        var: VarId,
        /// First value.
        start: Expr,
        /// Exclusive bound.
        end: Expr,
        /// Increment (a nonzero value; negative counts down).
        step: Expr,
        /// How the CUDA backend asks nvcc to unroll the loop.
        unroll: Unroll,
        /// The body.
        body: Block,
    },
    /// `while cond: body`
    While {
        /// A condition uniform over the code perspective.
        cond: Expr,
        /// The body.
        body: Block,
    },
    /// `break`
    Break,
    /// `continue`
    Continue,
    /// `return [value]`
    Return(Option<Expr>),
    /// `with group(persp)`: each `persp`-unit of the current unit runs the body.
    Group {
        /// The new code perspective.
        persp: Persp,
        /// The body.
        body: Block,
    },
    /// `match split(level)`: branch `i` runs on units `[offset, offset + count)`.
    Split {
        /// The unit the counts are measured in (`thread[1]`, `thread[32]` for `warp`, ...).
        unit: Persp,
        /// The branches in source order.
        cases: Vec<SplitCase>,
    },
    /// `with partition(src, ...) as view`.
    Partition {
        /// The name partitioned (hidden in the body).
        src: VarId,
        /// The new name (a [`VarKind::View`]).
        view: VarId,
        /// The body.
        body: Block,
    },
    /// `with claim(src, ...) as view`.
    Claim {
        /// The name claimed (hidden in the body).
        src: VarId,
        /// The new name.
        view: VarId,
        /// The body.
        body: Block,
    },
    /// `for var in pipeline(count, stages=stages)`: the fill (`Fill` statements) of tile `t`
    /// and then the use of tile `t`, for `t` in `0 .. count`; the implementation issues each
    /// fill `stages - 1` tiles ahead (`docs/language.md`, pipelines).
    Pipeline {
        /// The loop variable (the tile index, `int`).
        var: VarId,
        /// The tile count, uniform over the block.
        count: Expr,
        /// The number of ring slots.
        stages: u64,
        /// The rings the fill writes, outermost first.
        rings: Vec<VarId>,
        /// The fill: one `Fill` statement (others nested in it); empty in a warp-specialised
        /// pipeline, whose fill is the producer's case of `body`.
        fill: Block,
        /// The rest of the body: the use of the tile. In a warp-specialised pipeline, one
        /// `Split` whose case beginning with a `Fill` is the producer.
        body: Block,
        /// A warp-specialised pipeline's shared `uint64[2 * stages]` array (declared just
        /// before it): the full (`2s`) and empty (`2s + 1`) mbarriers of slot `s`.
        bars: Option<VarId>,
    },
    /// `with fill(ring) as view`: `view` is the current tile's slot of `ring`, usable only
    /// as the destination of asynchronous copies.
    Fill {
        /// The ring (hidden in the pipeline).
        ring: VarId,
        /// The slot view ([`ViewKind::Slot`] with `fill`).
        view: VarId,
        /// The body.
        body: Block,
    },
    /// `with stage(ring) as view`: `view` is the current tile's slot of `ring`, read-only;
    /// with `next`, the next tile's (`stage(ring, next=True)`, after the pipeline's barrier).
    Stage {
        /// The ring (hidden in the pipeline).
        ring: VarId,
        /// `next=True`: the slot of the tile after the current one (of the last tile, on
        /// the last: docs/language.md, "Pipelines").
        next: bool,
        /// `late=True`: in a warp-specialised pipeline's consumer case, the case releases
        /// the slot at the end of the next tile's iteration, not of this one's, so this
        /// tile's wgmmas may still read it until then (docs/soundness.md §4.3.2).
        late: bool,
        /// The slot view ([`ViewKind::Slot`] without `fill`).
        view: VarId,
        /// The body.
        body: Block,
    },
    /// `with async(src) as view`: copies into `view` complete before `src` is used again.
    Async {
        /// The name (hidden in the body).
        src: VarId,
        /// The new name.
        view: VarId,
        /// The body.
        body: Block,
    },
    /// `with unsafe[("cuda")]:` — checked for types but not perspectives.
    Unsafe {
        /// CUDA text the CUDA backend emits instead of `body`.
        cuda: Option<String>,
        /// Prism statements (what the simulator runs).
        body: Block,
    },
    /// `unsafe("cuda")` — verbatim CUDA; the simulator cannot run it.
    UnsafeText(String),
}

/// One branch of a split.
#[derive(Clone, Debug)]
pub struct SplitCase {
    /// First unit of the branch (in units of the split's `unit`).
    pub offset: u64,
    /// Number of units.
    pub count: u64,
    /// The branch's code perspective.
    pub persp: Persp,
    /// The body.
    pub body: Block,
    /// The `case n:` header.
    pub span: Span,
}

/// An expression with its type and value perspective.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Its type (a scalar, or `Void` for calls without a value).
    pub ty: Ty,
    /// Its value is the same in every thread of a unit of this perspective; `None` for
    /// constants.
    pub persp: Option<Persp>,
    /// Where.
    pub span: Span,
}

/// Expression forms.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A constant (literal or folded constexpr), of the expression's type.
    Const(ConstValue),
    /// Reads a scalar variable.
    Var(VarId),
    /// Reads an element of a thread-local array.
    Elem {
        /// The array.
        array: VarId,
        /// One index per dimension.
        index: Vec<Expr>,
    },
    /// Reads through memory: a pointer, shared array or view.
    Load {
        /// The name.
        mem: VarId,
        /// One index per dimension of the name.
        index: Vec<Expr>,
    },
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation; both operands already have the operation's type (for
    /// comparisons, the common operand type; for shifts, the left operand's type).
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `then if cond else otherwise`
    Select {
        /// Condition.
        cond: Box<Expr>,
        /// Value when true.
        then: Box<Expr>,
        /// Value when false.
        otherwise: Box<Expr>,
    },
    /// Converts the operand to the expression's type.
    Cast(Box<Expr>),
    /// A call.
    Call(Box<Call>),
    /// `id()`: the index of the `target`-unit containing this thread within its
    /// `code`-unit, `(g mod size(code)) / size(target)` for global thread index `g`.
    RelId {
        /// The code perspective `id()` is relative to.
        code: Persp,
        /// The perspective of the variable receiving the value.
        target: Persp,
    },
    /// A raw hardware index (only in `with unsafe:`).
    Raw(RawIndex),
}

/// Raw indices available in unsafe code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawIndex {
    /// `thread_idx()`: thread index in the block.
    ThreadIdx,
    /// `block_idx()`: block index in the grid.
    BlockIdx,
    /// `block_dim()`: threads per block.
    BlockDim,
    /// `grid_dim()`: blocks per grid.
    GridDim,
    /// `id(x)`, `id(y)`, `id(z)` for a `thread[1]` target in `block[1]` code: the thread's
    /// coordinate along dimension 0, 1 or 2 of a multi-dimensional block (`threadIdx`).
    ThreadCoord(u8),
    /// The same for a `block[1]` target in `grid[1]` code: the block's coordinate in the
    /// grid (`blockIdx`).
    BlockCoord(u8),
    /// `block_dim(x)` (`y`, `z`): the block's extent along one dimension (`blockDim`).
    BlockExtent(u8),
    /// `grid_dim(x)` (`y`, `z`): the grid's extent along one dimension (`gridDim`).
    GridExtent(u8),
}

/// A call.
#[derive(Clone, Debug)]
pub struct Call {
    /// What is called.
    pub callee: Callee,
    /// Arguments in parameter order.
    pub args: Vec<CallArg>,
    /// The callee's entry perspective when it is narrower than the calling code: every unit
    /// of it runs the callee (an implicit `group`).
    pub implicit_group: Option<Persp>,
    /// For user functions: the byte offset, from the caller's shared-memory base, where the
    /// callee's shared memory starts.
    pub smem_offset: u64,
}

/// The target of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callee {
    /// A Prism function.
    Fn(FnId),
    /// An intrinsic.
    Intrinsic(IntrinsicId),
}

/// An argument.
#[derive(Clone, Debug)]
pub enum CallArg {
    /// A scalar value, converted to the parameter's type.
    Value(Expr),
    /// Memory passed by reference: a pointer, shared array, view or local array.
    Mem(VarId),
    /// A place the callee writes (`out=` operands).
    Out(Place),
    /// The address of one element: `mem[index]` (atomics, asynchronous copies).
    ElemRef {
        /// The memory.
        mem: VarId,
        /// One index per dimension of the name.
        index: Vec<Expr>,
    },
    /// An opaque handle.
    Opaque(VarId),
}

/// The variables and local arrays declared outside `b` that statements in it may change
/// (assignments, `out=` operands, arrays passed by pointer), each with the span of its last
/// change, in order of first change. Memory names passed by pointer come along and are
/// skipped by the caller.
///
/// Every expression of every statement is looked at, wherever a call may stand: conditions
/// of `if`/`elif`/`while`, `for` bounds, a nested pipeline's count, indices of places and
/// stores, returned values. The pipeline-fill rule relies on it (a fill may read only what
/// the loop never changes), and until 2026-11-29 a call in a condition or a bound that
/// wrote a local array through a pointer (`if bump(offs):`) was missed.
pub fn assigned_in(b: &Block, declared: &mut std::collections::HashSet<VarId>, out: &mut Vec<(VarId, Span)>) {
    for s in &b.stmts {
        let calls = |e: &Expr, declared: &std::collections::HashSet<VarId>, out: &mut Vec<(VarId, Span)>| {
            written_by_calls(e, declared, out, s.span)
        };
        match &s.kind {
            StmtKind::Decl { var, init } => {
                if let Some(e) = init {
                    calls(e, declared, out);
                }
                declared.insert(*var);
            }
            StmtKind::For { var, start, end, step, body, .. } => {
                for e in [start, end, step] {
                    calls(e, declared, out);
                }
                declared.insert(*var);
                assigned_in(body, declared, out);
            }
            StmtKind::Assign { place, value, .. } => {
                let (Place::Var(v) | Place::Elem { array: v, .. }) = place;
                if let Place::Elem { index, .. } = place {
                    index.iter().for_each(|i| calls(i, declared, out));
                }
                if !declared.contains(v) {
                    note(out, *v, s.span);
                }
                calls(value, declared, out);
            }
            StmtKind::Store { index, value, .. } => {
                index.iter().for_each(|i| calls(i, declared, out));
                calls(value, declared, out);
            }
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => calls(e, declared, out),
            StmtKind::If { cond, then, otherwise } => {
                calls(cond, declared, out);
                assigned_in(then, declared, out);
                assigned_in(otherwise, declared, out);
            }
            StmtKind::While { cond, body } => {
                calls(cond, declared, out);
                assigned_in(body, declared, out);
            }
            StmtKind::Group { body, .. }
            | StmtKind::Partition { body, .. }
            | StmtKind::Claim { body, .. }
            | StmtKind::Async { body, .. }
            | StmtKind::Fill { body, .. }
            | StmtKind::Stage { body, .. }
            | StmtKind::Unsafe { body, .. } => assigned_in(body, declared, out),
            StmtKind::Pipeline { var, count, fill, body, .. } => {
                calls(count, declared, out);
                declared.insert(*var);
                assigned_in(fill, declared, out);
                assigned_in(body, declared, out);
            }
            StmtKind::Split { cases, .. } => {
                for c in cases {
                    assigned_in(&c.body, declared, out);
                }
            }
            // No expressions.
            StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) | StmtKind::UnsafeText(_) => {}
        }
    }
}

/// The `stage` statements of a pipeline body `b`, at any depth but not in nested pipelines
/// (whose stages are theirs): whether each says `late=True`, and its span.
pub fn stages_in(b: &Block, out: &mut Vec<(bool, Span)>) {
    for s in &b.stmts {
        match &s.kind {
            StmtKind::Stage { late, body, .. } => {
                out.push((*late, s.span));
                stages_in(body, out);
            }
            StmtKind::If { then, otherwise, .. } => {
                stages_in(then, out);
                stages_in(otherwise, out);
            }
            StmtKind::Split { cases, .. } => cases.iter().for_each(|c| stages_in(&c.body, out)),
            StmtKind::For { body, .. }
            | StmtKind::While { body, .. }
            | StmtKind::Group { body, .. }
            | StmtKind::Partition { body, .. }
            | StmtKind::Claim { body, .. }
            | StmtKind::Async { body, .. }
            | StmtKind::Fill { body, .. }
            | StmtKind::Unsafe { body, .. } => stages_in(body, out),
            _ => {}
        }
    }
}

/// Records that `v` is assigned at `at` (the last assignment's span is kept).
fn note(out: &mut Vec<(VarId, Span)>, v: VarId, at: Span) {
    match out.iter_mut().find(|(x, _)| *x == v) {
        Some(e) => e.1 = at,
        None => out.push((v, at)),
    }
}

/// Records the variables and arrays the calls in `e` write: `out=` places and local arrays
/// passed by pointer (a callee may write through it).
fn written_by_calls(e: &Expr, declared: &std::collections::HashSet<VarId>, out: &mut Vec<(VarId, Span)>, at: Span) {
    use ExprKind as E;
    match &e.kind {
        E::Call(c) => {
            // `load_vec` writes the thread-local array of its first operand.
            if let Callee::Intrinsic(id) = c.callee
                && id.sig().name == "load_vec"
                && let Some(CallArg::ElemRef { mem, .. }) = c.args.first()
                && !declared.contains(mem)
            {
                note(out, *mem, at);
            }
            for a in &c.args {
                match a {
                    CallArg::Value(x) => written_by_calls(x, declared, out, at),
                    CallArg::Out(place) => {
                        let (Place::Var(v) | Place::Elem { array: v, .. }) = place;
                        if let Place::Elem { index, .. } = place {
                            index.iter().for_each(|i| written_by_calls(i, declared, out, at));
                        }
                        if !declared.contains(v) {
                            note(out, *v, at);
                        }
                    }
                    CallArg::Mem(v) if !declared.contains(v) => note(out, *v, at),
                    CallArg::ElemRef { index, .. } => index.iter().for_each(|i| written_by_calls(i, declared, out, at)),
                    CallArg::Mem(_) | CallArg::Opaque(_) => {}
                }
            }
        }
        E::Elem { index, .. } | E::Load { index, .. } => {
            index.iter().for_each(|i| written_by_calls(i, declared, out, at))
        }
        E::Unary(_, a) | E::Cast(a) => written_by_calls(a, declared, out, at),
        E::Binary(_, a, b) => {
            written_by_calls(a, declared, out, at);
            written_by_calls(b, declared, out, at);
        }
        E::Select { cond, then, otherwise } => {
            written_by_calls(cond, declared, out, at);
            written_by_calls(then, declared, out, at);
            written_by_calls(otherwise, declared, out, at);
        }
        E::Const(_) | E::Var(_) | E::RelId { .. } | E::Raw(_) => {}
    }
}

/// A kernel's dynamic shared array: `var` (a shared array, not among the parameters: the
/// launch gives its bytes, not a value) holds `params[count]` items of `elem`, from byte
/// `offset` of the block's shared memory, after everything the kernel allocates
/// statically. Its length is [`DYNAMIC_LEN`] wherever a static one would be.
#[derive(Clone, Copy, Debug)]
pub struct DynShared {
    pub var: VarId,
    pub count: usize,
    pub elem: Scalar,
    pub offset: u64,
}

/// The length, in bytes or items, of the dynamic shared array wherever a static array's
/// would be: only the launch knows it.
pub const DYNAMIC_LEN: u64 = u64::MAX;

/// Where the dynamic shared array starts: aligned as the block's shared memory is, so
/// every layout (TMA boxes, swizzled wgmma tiles) may use it.
pub const DYNAMIC_ALIGN: u64 = 1024;
