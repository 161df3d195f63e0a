//! Type and perspective errors, as structured values.
//!
//! Each variant carries the spans and perspectives a good message needs; `diagnostics.rs`
//! turns them into [`prism_diag::Diagnostic`]s with stable codes. The doc comment of each
//! variant shows a minimal program that produces it.

use crate::perspective::Persp;
use crate::ty::{Scalar, Ty};
use prism_span::Span;

/// Where a value that must be uniform is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// The condition of an `if`.
    IfCondition,
    /// The condition of a `while`.
    WhileCondition,
    /// A bound or step of a `for`.
    LoopBound,
    /// The condition of a `... if c else ...` that selects a collective's operand.
    Selector,
}

impl Sink {
    /// Words for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Sink::IfCondition => "`if` condition",
            Sink::WhileCondition => "`while` condition",
            Sink::LoopBound => "loop bound",
            Sink::Selector => "selector",
        }
    }
}

/// What a `type-mismatch` expected. The words for each are in `diagnostics.rs`, once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// A value of this type.
    Scalar(Scalar),
    /// An assignable element of this type (an intrinsic's output).
    Place(Scalar),
    /// Memory whose elements have this type.
    Memory(Scalar),
    /// Memory of a type atomics support.
    AtomicMemory,
    /// A value of a type atomics support.
    AtomicType,
    /// Memory of a type the bitwise atomics support (integers of 32 or 64 bits).
    AtomicBitsMemory,
    /// A value of a type the bitwise atomics support.
    AtomicBitsType,
    /// A numeric value of at most 32 bits.
    Bits32,
    /// An opaque handle of this kind.
    Opaque(String),
    /// An integer value.
    Integer,
    /// Integer operands.
    Integers,
    /// A floating-point value.
    Float,
    /// A numeric value.
    Number,
    /// Numeric operands.
    Numbers,
    /// Any value (not an array, a string or nothing).
    Value,
    /// A scalar value (not an array or a handle).
    ScalarValue,
    /// A scalar place (not an array).
    ScalarPlace,
    /// A type the compound-assignment operator applies to.
    OperatorOperand,
}

/// What a `type-mismatch` found instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// A value of this type.
    Type(Ty),
    /// Memory whose elements have this type.
    Memory(Scalar),
    /// A string literal.
    Str,
    /// The array with this name.
    Array(String),
    /// The opaque handle with this name.
    Handle(String),
}

impl From<Scalar> for Found {
    fn from(s: Scalar) -> Found {
        Found::Type(Ty::Scalar(s))
    }
}

/// Why indexing failed, for `bad-index`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexProblem {
    /// `name` takes `rank` indices but `given` were written.
    Rank { name: String, rank: usize, given: usize },
    /// A constant index outside dimension `dim` of the array `name`.
    OutOfBounds { name: String, index: i128, dim: u64 },
    /// Indexing an expression that is not a name.
    NotAName,
    /// Indexing a name that is not an array or pointer (`ty` when it is a variable).
    NotIndexable { name: String, ty: Option<Ty> },
}

/// Why a pointer argument does not fit its parameter, for `pointer-argument`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PointerProblem {
    /// An expression that is not a name.
    NotAName,
    /// The name is not memory (`ty` when it is a variable of another type).
    NotMemory { name: String, ty: Option<Ty> },
    /// Memory of another element type.
    Element { name: String, holds: Scalar, wants: Scalar },
    /// Read-only memory for a writable parameter.
    ReadOnly { name: String },
    /// A writable parameter at another perspective than the memory's.
    WritableElsewhere { name: String, lives: Persp, param: Persp },
    /// Memory at a narrower perspective than the parameter's.
    Narrower { name: String, lives: Persp, param: Persp },
    /// A thread-local array declared broader than `thread[1]` for a writable parameter at
    /// its perspective: every thread has its own copy, so it is writable memory of one
    /// thread only.
    LocalBroader { name: String, param: Persp },
    /// Memory that is not shared for a `ptr(T, shared)` parameter.
    NotShared { name: String },
    /// Memory that is not a thread-local array for a parameter the callee (`callee`, or a
    /// function it calls) gives a wgmma as its accumulators.
    NotThreadLocal { name: String, callee: String },
}

/// Why a `return` does not fit the signature, for `return-value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReturnProblem {
    /// A kernel returning a value.
    FromKernel,
    /// A value returned from a function without a return type.
    Unexpected { function: String },
    /// A bare `return` in a function that returns a `ty`.
    Missing { function: String, ty: Scalar },
}

/// Why a `partition`/`claim` does not fit the code, for `partition-perspective`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NarrowProblem {
    /// The memory lives at another perspective than the code's.
    LivesElsewhere { name: String, lives: Persp, code: Persp },
    /// The target is the code's own perspective.
    NothingNarrowed { target: Persp },
    /// The target is broader than the code.
    Broader { target: Persp, code: Persp },
    /// The code does not divide into target units.
    Indivisible { target: Persp, code: Persp },
}

/// What is wrong with an indexing function, for `partition-index-fn`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexFnProblem {
    /// A name that is not a lambda.
    NotALambda { name: String },
    /// A lambda without parameters.
    NoParameters,
    /// A lambda computing something other than an integer.
    NotInteger { ty: Ty },
    /// A value that differs within the target's units (the culprit says which).
    Varies { target: Persp, what: String },
    /// A read of memory.
    ReadsMemory { name: String },
    /// A call of a non-pure intrinsic.
    Calls { name: String },
    /// A partition of a tensor map whose function is not the identity.
    MapView { name: String },
}

/// Why a claimed name is not owned where it is used, for `claim-not-owned`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimProblem {
    /// An enclosing `group` runs the use in every unit.
    Grouped,
    /// Every unit of the code can reach the use.
    EveryUnit { code: Persp },
}

/// What is wrong with a `@requires` bound or launch bound, for `invalid-bound`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoundProblem {
    /// `smem=` not a non-negative integer.
    Smem,
    /// `@requires()` with no perspective.
    Empty,
    /// Sizes whose product overflows.
    TooLarge,
    /// A perspective that does not divide the entry perspective.
    Indivisible { persp: Persp, entry: Persp },
    /// `@launch_bounds` on a device function.
    LaunchBoundsOnDevice,
    /// A launch bound that is not a positive integer.
    LaunchBoundsValue,
    /// A second launch-bounds operand that is not a constant from 1 to 32.
    MinBlocksValue,
    /// A launch bound the bound's thread multiple does not divide.
    LaunchBoundsMultiple { bound: u64, multiple: u64 },
    /// `block=` that is not a list of one to three positive constants within CUDA's limits.
    BlockShape,
    /// `block=` on a device function.
    BlockShapeOnDevice,
    /// A block shape whose thread count the bound's thread multiple does not divide, or
    /// that exceeds `@launch_bounds`.
    BlockShapeThreads { threads: u64, multiple: u64, launch_bounds: Option<u64> },
}

/// What is wrong with a perspective, for `invalid-perspective`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerspProblem {
    /// A unit count that is not an integer.
    NotInteger,
    /// Zero units.
    NoUnits,
    /// `grid[n]` with `n != 1`.
    OneGrid,
    /// A unit count too large to represent.
    TooMany,
}

/// What is wrong with a call's arguments, for `wrong-arguments`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgsProblem {
    /// Arguments to `id()`, `block_dim()` or `grid_dim()` other than one of `x`, `y`, `z`.
    NoneOrDimension,
    /// `id(x)` where the target and code are not a thread in a block or a block in the grid.
    IdCoordinate { code: Persp, target: Persp },
    /// `f[T, ...]` with the wrong number of type arguments.
    TypeArguments { params: usize, given: usize },
    /// A type argument that is not a scalar type.
    NotAType,
    /// A type parameter no argument determines.
    CannotInfer { param: String },
    /// More positional arguments than parameters.
    TooMany { params: usize },
    /// A parameter given twice.
    Twice { name: String },
    /// A keyword that names no parameter.
    NoSuchParameter { name: String },
    /// Parameters without arguments.
    Missing { names: Vec<String> },
    /// `cp_async` with another byte count.
    CopyBytes,
    /// `cp_async` of a byte count that is not a whole number of its destination's elements.
    CopyPartElement { bytes: i128, elem: String, size: u64 },
    /// `out=` that is not a list of `n` places.
    OutList { n: usize },
    /// `out=` with another number of places.
    OutCount { n: usize, given: usize },
    /// A value where an element of memory is needed.
    NotAnElement { param: String },
    /// A local array where thread-shared memory is needed.
    LocalArray { name: String, param: String },
    /// An asynchronous copy into a name not made by `async`.
    NotAsync { name: String },
    /// Memory or a value where an element of a thread-local array is needed.
    NotLocalElement { param: String },
    /// Global memory where shared memory is needed.
    NotShared { name: String },
    /// A `cp.async` source that is not known to be global memory: a shared array, or a
    /// device function's pointer parameter (`in_device`), which may point into shared or
    /// local memory.
    CopySource { name: String, in_device: bool },
    /// A `setmaxnreg` register count PTX does not allow.
    RegisterCount { regs: i128 },
    /// A negative `wgmma_wait` count (ptxas rejects it).
    PendingCount { n: i128 },
    /// A `wgmma` N that is not a multiple of 8 from 8 to 256.
    WgmmaN { n: i128 },
    /// A wgmma's accumulators that are not a thread-local array.
    WgmmaAccumulator { name: String },
    /// A swizzled wgmma's span that is not 32, 64 or 128 bytes.
    WgmmaSpan { span: i128 },
    /// A wgmma operand smaller than what one instruction reads or writes: `what` names it
    /// (the accumulators, tile A or tile B), `has` and `needs` count its elements.
    WgmmaSize { name: String, what: &'static str, has: u64, needs: u64 },
    /// A `tma_load_Nd` of a tensor map with another number of dimensions.
    MapRank { map: String, rank: u8, copy: u8 },
    /// A TMA copy into memory of another element type than the map's.
    MapElem { map: String, elem: Scalar, dst: Scalar },
    /// A TMA copy into an `async` scope opened in code narrower than `block[1]`.
    TmaScope { view: String, code: Persp },
    /// A TMA store through a map rooted at a device function's parameter.
    MapStoreParam { map: String },
    /// A TMA store through an untyped `CUTensorMap`.
    MapUntyped { map: String },
}

/// Why a vector access (`load_vec`, `store_vec`) is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VectorProblem {
    /// `n` elements of `elem` are not 4, 8 or 16 bytes (or `n < 2`).
    Width { n: i128, elem: Scalar },
    /// Through a partition whose consecutive elements are not consecutive in memory.
    View { name: String },
    /// Elements `first .. first + n` of a local array of `len` elements.
    Bounds { name: String, first: i128, n: i128, len: i128 },
}

/// The narrowest thing an expression reads: the reason it is not uniform enough.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Culprit {
    /// What it is, in words (``variable `tid` ``, `` `id()` ``).
    pub what: String,
    /// Its perspective.
    pub persp: Persp,
    /// Where it is read.
    pub span: Span,
    /// Where it got its perspective (a declaration), if elsewhere.
    pub origin: Option<Span>,
}

/// A problem found by the checker.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeError {
    /// ```text
    /// with partition(s, p=thread[1], f=lambda i: k + i) as v:
    ///     k += 1      # the view's elements would move
    /// ```
    CaptureAssigned { name: String, view: String, span: Span, lambda: Span, decl: Span },
    /// ```text
    /// swap_halves(s, s)     # both parameters name `s`, one is written
    ///                ^ the same memory as the first argument
    /// ```
    ArgumentAlias { callee: String, root: String, written: String, params: (String, String), span: Span, first: Span },
    /// ```text
    /// y = x + 1      # x is not declared
    ///     ^ unknown name
    /// ```
    UnknownName { name: String, span: Span, help: Option<String> },
    /// `x : integer = 0`
    UnknownType { name: String, span: Span },
    /// ```text
    /// load_vec(v[0], x_t[0], 4)   # x_t made with `lambda i: t + 32 * i`
    /// ```
    VectorAccess { callee: String, problem: VectorProblem, span: Span, lambda: Option<Span> },
    /// A function named like a built-in.
    ReservedName { name: String, span: Span },
    /// Two definitions of one name in one scope.
    Duplicate { name: String, span: Span, first: Span },
    /// An import binding a name the module already binds (`first`: an earlier import, or a
    /// definition above it), including the same import written twice:
    /// ```text
    /// import lib.util
    /// import lib.util
    /// ^^^^^^^^^^^^^^^ `lib.util` is already bound
    /// ```
    DuplicateImport { name: String, span: Span, first: Span },
    /// An error inside an instance of a generic function, with the calls that made it:
    /// the instance's own call first, then the call of the instance whose body made that
    /// call, and so on out to code that is not generic (the user's call of a library
    /// function whose body instantiates another).
    InInstance { inner: Box<TypeError>, calls: Vec<(String, Span)> },
    /// A use of a name whose definition already failed (a constant that could not be
    /// computed, a name from a module that could not be loaded): never shown, since the
    /// error that caused it was.
    Poisoned { span: Span },
    /// `from m import x` where module `m` defines no `x` (`known`: what it defines).
    UnresolvedImport { name: String, module: String, span: Span, known: Vec<String> },
    /// A value of the wrong type.
    Mismatch { expected: Expected, found: Found, span: Span, context: String, help: Option<String> },
    /// A call with the wrong arguments.
    WrongArguments { callee: String, problem: ArgsProblem, span: Span, help: Option<String> },
    /// Indexing a non-array, or with the wrong number of indices.
    BadIndex { problem: IndexProblem, span: Span, help: Option<String> },
    /// A size, bound or `constexpr` value that is not a compile-time constant.
    NotConstant { what: String, span: Span, culprit: Option<(String, Span)> },
    /// Compile-time arithmetic overflowed or divided by zero.
    ConstEval { reason: crate::consts::ConstError, span: Span },
    /// Assigning a const, constexpr or loop variable.
    AssignToConst { name: String, kind: &'static str, span: Span, decl: Span },
    /// A `const` or `constexpr` declaration without a value.
    ConstWithoutInit { name: String, kind: &'static str, span: Span },
    /// A recognised construct Prism does not support.
    Unsupported { what: String, span: Span, help: Option<String> },
    /// A `range` loop's `unroll=` that is not `True`, `False` or a count from 1 to 1024,
    /// or `unroll=True` on a loop whose trip count is not a compile-time constant.
    BadUnroll { problem: String, span: Span },
    /// A `-D NAME=VALUE` for a name the root file does not declare `constexpr`, or whose
    /// value does not fit the declared type.
    BadDefine { problem: String, span: Span },
    /// Copying or comparing a pointer.
    PointerAlias { name: String, span: Span, help: String },
    /// `grid[2]`, `thread[0]`, ...
    InvalidPerspective { text: String, problem: PerspProblem, span: Span },
    /// A `tensor_map(...)` type the TMA unit cannot copy (its box, swizzle or element type).
    TensorMap { problem: String, span: Span },
    /// A malformed `@requires`.
    InvalidBound { problem: BoundProblem, span: Span, help: Option<String> },
    /// A parameter or return perspective broader than the entry perspective.
    ParamPerspective { what: String, persp: Persp, entry: Persp, span: Span },
    /// A kernel's writable pointer parameter narrower than the kernel's entry perspective:
    /// every unit of the entry gets the same buffer (`param-perspective`). With `map_decl`
    /// (the parameter's span), a TMA store (at `span`) through such a tensor map.
    KernelPointerNarrower { name: String, persp: Persp, entry: Persp, span: Span, map_decl: Option<Span> },
    /// `with group(block[1])` inside `thread[2]` code.
    GroupBroadens { target: Persp, code: Persp, span: Span, code_origin: Option<Span> },
    /// `with group(block[5])` inside `block[6]` code.
    GroupIndivisible { target: Persp, code: Persp, span: Span, code_origin: Option<Span>, help: Option<String> },
    /// Split cases need more units than there are.
    SplitExceeds { total: u64, available: u64, unit: Persp, code: Persp, span: Span, last_case: Span },
    /// A split case not aligned to its size.
    SplitMisaligned { count: u64, offset: u64, available: u64, unit: Persp, span: Span, size_divides: bool },
    /// Splitting a level the code cannot be divided into.
    SplitLevel { unit: Persp, code: Persp, span: Span, help: Option<String> },
    /// A non-uniform value where a uniform one is needed (read up).
    ReadUp { sink: Sink, code: Persp, culprit: Culprit, span: Span },
    /// Reading memory through a name that lives at a narrower perspective than the code.
    ReadUpMemory { name: String, persp: Persp, code: Persp, span: Span, origin: Span },
    /// Writing a variable that lives at a broader perspective than the code.
    WriteBroader { name: String, var_persp: Persp, code: Persp, span: Span, origin: Span },
    /// Declaring a variable at a broader perspective than the code.
    DeclBroader { name: String, var_persp: Persp, code: Persp, span: Span },
    /// A value that varies within the units of the variable it is written to.
    NarrowValue { target: String, target_persp: Persp, culprit: Culprit, span: Span, origin: Option<Span> },
    /// `id()` with no variable to give it a perspective.
    IdWithoutTarget { span: Span },
    /// `id()` whose target is not strictly narrower than the code.
    IdNotNarrower { target: Persp, code: Persp, span: Span },
    /// A raw index or volatile access outside `with unsafe:`.
    RawIndex { name: String, span: Span },
    /// A shared allocation outside `block[1]` code.
    SharedOutsideBlock { code: Persp, declared: Option<Persp>, span: Span },
    /// A function needs more shared memory than declared.
    SmemBudget { function: String, need: u64, budget: u64, span: Span, biggest: Option<(Span, String)> },
    /// A kernel needs more shared memory than the device has.
    SmemDeviceLimit { function: String, need: u64, limit: u64, arch: String, span: Span },
    /// A store through a pointer not at `thread[1]`, or from code not at `thread[1]`.
    StorePerspective { name: String, ptr_persp: Persp, code: Persp, span: Span, origin: Span },
    /// A store through a const pointer.
    StoreThroughConst { name: String, span: Span, origin: Span },
    /// A name hidden by an enclosing partition, claim or async.
    Hidden { name: String, span: Span, hidden_at: Span, construct: &'static str, new_name: String },
    /// partition/claim/async on something that is not thread-shared memory.
    NotPartitionable { name: String, construct: &'static str, found: String, span: Span, origin: Option<Span> },
    /// A partition of a view whose indexing function takes several indices: the new
    /// view's function returns one.
    PartitionOfMultiIndexView { name: String, params: usize, span: Span, origin: Span },
    /// A partition/claim whose perspectives do not fit.
    PartitionPerspective {
        construct: &'static str,
        problem: NarrowProblem,
        span: Span,
        origin: Option<Span>,
        help: Option<String>,
    },
    /// A bad indexing function.
    PartitionIndexFn { problem: IndexFnProblem, span: Span, culprit: Option<Culprit> },
    /// A claimed name used where several units of the claim could reach it.
    ClaimNotOwned { name: String, persp: Persp, span: Span, claim: Span, problem: ClaimProblem },
    /// A claimed name used in two branches of one split.
    ClaimMultipleBranches { name: String, span: Span, first: Span },
    /// An async name used other than as an async copy destination.
    AsyncMisuse { name: String, span: Span, origin: Span },
    /// A pipeline, `fill` or `stage` written where it cannot be, or a ring of the wrong
    /// shape.
    PipelineForm { problem: String, span: Span, origin: Option<Span>, help: Option<String> },
    /// A pipeline's fill doing what it may not while it runs ahead of the loop.
    PipelineFill { what: String, span: Span, fill: Span },
    /// A call from code at the wrong perspective.
    CallPerspective { callee: String, required: Persp, code: Persp, span: Span, broadens: bool, help: Option<String> },
    /// A callee whose bound the caller's bound does not guarantee.
    CallGuarantee { callee: String, what: &'static str, need: u64, span: Span, help: String },
    /// A division by a literal zero at run time.
    DivByZero { span: Span },
    /// A split case whose units may span two blocks.
    SplitStraddles { persp: Persp, span: Span, help: Option<String> },
    /// An argument that varies within its parameter's units.
    ArgumentPerspective { param: String, param_persp: Persp, culprit: Culprit, span: Span },
    /// A pointer argument that does not fit its parameter.
    PointerArgument { param: String, problem: PointerProblem, span: Span, help: Option<String> },
    /// A partition with a non-offset indexing function passed where a pointer is needed.
    NotAPointer { param: String, name: String, span: Span, lambda: Span },
    /// A call cycle.
    Recursion { cycle: Vec<String>, span: Span },
    /// Calling a kernel from device code.
    KernelCall { name: String, span: Span, def: Span },
    /// A `return` that does not fit the signature.
    ReturnValue { problem: ReturnProblem, span: Span },
    /// A value-returning function that can fall off its end.
    MissingReturn { function: String, span: Span },
    /// `return`/`break`/`continue` leaving only part of a group.
    DivergentExit { what: &'static str, crossing: &'static str, span: Span, scope: Span },
    /// `break`/`continue` outside a loop.
    BreakOutsideLoop { what: &'static str, span: Span },
    /// A collective call in a sub-expression only some threads evaluate.
    CollectiveInCondition { callee: String, span: Span, guard: Span },
}

impl TypeError {
    /// This error as found while checking instance `instance`, made by the call at `call`.
    pub fn in_instance(self, instance: &str, call: Span) -> TypeError {
        match self {
            // Poisoned uses stay silent. An error of a nested instance keeps its own call
            // and gains the outer instance's, which made the nested one.
            TypeError::Poisoned { .. } => self,
            TypeError::InInstance { inner, mut calls } => {
                calls.push((instance.to_string(), call));
                TypeError::InInstance { inner, calls }
            }
            e => TypeError::InInstance { inner: Box::new(e), calls: vec![(instance.to_string(), call)] },
        }
    }

    /// Whether it is never shown ([`TypeError::Poisoned`]).
    pub fn is_silent(&self) -> bool {
        matches!(self, TypeError::Poisoned { .. })
    }
}
