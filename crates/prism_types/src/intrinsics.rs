//! The intrinsic table: every built-in operation with its perspective signature.
//!
//! An intrinsic is checked exactly like a call to a Prism function: its [`CodeReq`] is the
//! entry perspective it needs (`__syncthreads` needs `block[1]`, `shfl` needs `thread[32]`),
//! each operand has a kind, a type class and the perspective its value must be uniform over,
//! and the result has a type and perspective. Calling a collective from broader code is an
//! implicit `group`, as for functions. Adding an intrinsic is adding a row to [`TABLE`]; the
//! simulator and the CUDA backend look rows up by name.

use crate::perspective::Persp;
use crate::ty::Scalar;

/// Index of a row of [`TABLE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntrinsicId(pub u16);

impl IntrinsicId {
    /// The row.
    pub fn sig(self) -> &'static IntrinsicSig {
        &TABLE[self.0 as usize]
    }

    /// Whether this is one of the `cp.async` copies (`cp_async`, `cp_async_zfill`): a
    /// per-thread copy of 4, 8 or 16 bytes into shared memory, committed and waited for
    /// in groups.
    pub fn is_cp_async(self) -> bool {
        matches!(self.sig().name, "cp_async" | "cp_async_zfill")
    }

    /// Whether this is a TMA tensor copy (`tma_load_2d`, `tma_load_3d`, and their `_mbar`
    /// forms): one thread moves a whole box described by a tensor map.
    pub fn is_tma(self) -> bool {
        matches!(self.sig().name, "tma_load_2d" | "tma_load_3d" | "tma_load_2d_mbar" | "tma_load_3d_mbar")
    }

    /// Whether this is a TMA store (`tma_store_2d`, `tma_store_3d`): one thread writes a
    /// box from shared memory into a typed tensor map's array.
    pub fn is_tma_store(self) -> bool {
        matches!(self.sig().name, "tma_store_2d" | "tma_store_3d")
    }

    /// Whether this is a TMA copy that completes on an mbarrier operand of its own
    /// (`tma_load_2d_mbar`, `tma_load_3d_mbar`) rather than on the block's.
    pub fn is_tma_mbar(self) -> bool {
        matches!(self.sig().name, "tma_load_2d_mbar" | "tma_load_3d_mbar")
    }

    /// Whether this is a `wgmma.mma_async` (`wgmma_bf16`, `wgmma_f16`, `wgmma_tf32` and their
    /// `_sw` forms): a warpgroup's product whose shared-memory tiles the tensor cores read
    /// until a `wgmma_wait`.
    pub fn is_wgmma(self) -> bool {
        self.wgmma_input().is_some()
    }

    /// The element type a `wgmma.mma_async` reads its tiles as: `BF16`, `F16`, or `F32` for
    /// tf32 (the tiles hold `float`s, of which the tensor cores use the tf32 bits); `None`
    /// for every other intrinsic. Each instruction reads 32 bytes of every row of A and B,
    /// so its K is 16 for the 16-bit types and 8 for tf32.
    pub fn wgmma_input(self) -> Option<Scalar> {
        match self.sig().name {
            "wgmma_bf16" | "wgmma_bf16_sw" => Some(Scalar::BF16),
            "wgmma_f16" | "wgmma_f16_sw" => Some(Scalar::F16),
            "wgmma_tf32" | "wgmma_tf32_sw" => Some(Scalar::F32),
            _ => None,
        }
    }
}

/// Which code may call an intrinsic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeReq {
    /// Code at this perspective, or broader code (then every unit of it runs the intrinsic).
    At(Persp),
    /// Any code: a pure function of its operands; the result is as uniform as they are.
    Pure,
    /// Only inside `with unsafe:` (raw indices, volatile accesses).
    UnsafeOnly,
}

/// The type an operand or result may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TyClass {
    /// Exactly this scalar (implicit conversions apply).
    S(Scalar),
    /// Any scalar, `bool` included (explicit conversions).
    AnyScalar,
    /// Any numeric scalar; the first such operand fixes the type `T` of the call.
    Numeric,
    /// Any integer; fixes `T`.
    Int,
    /// Any floating-point type; fixes `T`.
    Float,
    /// Any integer or float that atomics support; fixes `T`.
    Atomic,
    /// Any integer that the bitwise atomics support (`int`, `uint`, `int64`, `uint64`):
    /// CUDA has no bitwise atomics on floats, and Prism's `&`, `|` and `^` take integers
    /// only (review R72 found `atomic_and` on a `float` accepted, simulated on its bits,
    /// and refused by nvcc); fixes `T`.
    AtomicBits,
    /// Any numeric scalar of at most 32 bits (`bits32`); fixes `T`.
    Bits32,
    /// The type `T` fixed by an earlier operand (converted to it).
    T,
    /// A compile-time integer constant.
    ConstInt,
    /// An opaque handle with this type name.
    Opaque(&'static str),
}

/// How an operand is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A value.
    Value,
    /// `out=[...]` list of this many thread-local places the intrinsic writes.
    OutList(usize),
    /// The address of an element `p[i]` of memory; `mutable` if the intrinsic writes it.
    Ref {
        /// Whether the element is written.
        mutable: bool,
    },
    /// The address of an element of an `async` name: the destination of an asynchronous copy.
    AsyncRef,
    /// An element `a[j]` of a thread-local array: the first of the consecutive elements a
    /// vector access reads (`mutable: false`) or writes.
    LocalRef {
        /// Whether the elements are written.
        mutable: bool,
    },
    /// Whole memory by reference (a local array or pointer).
    Mem {
        /// Whether it is written.
        mutable: bool,
    },
}

/// One operand.
#[derive(Clone, Copy, Debug)]
pub struct ParamSig {
    /// Its name (keyword arguments use it).
    pub name: &'static str,
    /// How it is passed.
    pub kind: ParamKind,
    /// Its type.
    pub ty: TyClass,
    /// The perspective its value must be uniform over (for values), or its places must
    /// live at (for outputs).
    pub persp: Persp,
}

/// The result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetSig {
    /// No value.
    Void,
    /// A value of this class at this perspective (`None`: as uniform as the operands).
    Value(TyClass, Option<Persp>),
    /// A value of this class at `thread[1]`, or at the intrinsic's own perspective when the
    /// operand with this index is uniform over it (`shfl(v, 0)` broadcasts lane 0).
    UniformIf(TyClass, usize),
}

/// What the simulator and backend need to know about an intrinsic's family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// A barrier over the calling unit.
    Barrier,
    /// A warp collective (shuffles and votes).
    Warp,
    /// A tensor-core matrix multiply-accumulate.
    Mma,
    /// Hopper warpgroup operations (wgmma, register reallocation).
    Warpgroup,
    /// Atomic read-modify-write.
    Atomics,
    /// Asynchronous copies (cp.async, TMA).
    AsyncCopy,
    /// Vector loads and stores: several consecutive elements in one access (LDG.128).
    Vector,
    /// Memory fences, sleeps and `trap`.
    Fence,
    /// Pure math.
    Math,
    /// Conversions.
    Cast,
    /// Raw indices and volatile accesses (unsafe only).
    Raw,
    /// Hopper-style `mbarrier` objects in shared memory: arrive, transaction counts, phase
    /// waits (unsafe only: they synchronise by themselves, outside inference).
    Mbarrier,
}

/// One intrinsic.
#[derive(Clone, Copy, Debug)]
pub struct IntrinsicSig {
    /// The name as called (`__syncthreads`, `shfl`, `intrinsic.mma`).
    pub name: &'static str,
    /// Which code may call it.
    pub code: CodeReq,
    /// Operands in order.
    pub params: &'static [ParamSig],
    /// The result.
    pub ret: RetSig,
    /// Its family.
    pub family: Family,
    /// One line for `prism explain` and docs.
    pub doc: &'static str,
}

const T1: Persp = Persp::THREAD;
const W: Persp = Persp::WARP;

const fn v(name: &'static str, ty: TyClass) -> ParamSig {
    ParamSig { name, kind: ParamKind::Value, ty, persp: T1 }
}

const fn r(name: &'static str, mutable: bool, ty: TyClass) -> ParamSig {
    ParamSig { name, kind: ParamKind::Ref { mutable }, ty, persp: T1 }
}

use Family::*;
use Scalar::*;
use TyClass::*;

const NONE: &[ParamSig] = &[];
const F32X4_TF32: &[ParamSig] = &[
    v("a0", S(F32)),
    v("a1", S(F32)),
    v("a2", S(F32)),
    v("a3", S(F32)),
    v("b0", S(F32)),
    v("b1", S(F32)),
    v("c0", S(F32)),
    v("c1", S(F32)),
    v("c2", S(F32)),
    v("c3", S(F32)),
    ParamSig { name: "out", kind: ParamKind::OutList(4), ty: S(F32), persp: T1 },
];

macro_rules! mma16 {
    ($t:expr) => {
        &[
            v("a0", S($t)),
            v("a1", S($t)),
            v("a2", S($t)),
            v("a3", S($t)),
            v("a4", S($t)),
            v("a5", S($t)),
            v("a6", S($t)),
            v("a7", S($t)),
            v("b0", S($t)),
            v("b1", S($t)),
            v("b2", S($t)),
            v("b3", S($t)),
            v("c0", S(F32)),
            v("c1", S(F32)),
            v("c2", S(F32)),
            v("c3", S(F32)),
            ParamSig { name: "out", kind: ParamKind::OutList(4), ty: S(F32), persp: T1 },
        ]
    };
}

const fn row(
    name: &'static str,
    code: CodeReq,
    params: &'static [ParamSig],
    ret: RetSig,
    family: Family,
    doc: &'static str,
) -> IntrinsicSig {
    IntrinsicSig { name, code, params, ret, family, doc }
}

const AT_T1: CodeReq = CodeReq::At(T1);
const AT_W: CodeReq = CodeReq::At(W);
const AT_WG: CodeReq = CodeReq::At(Persp::WARPGROUP);
const ATOMIC2: &[ParamSig] = &[r("addr", true, Atomic), v("value", T)];
const ATOMIC_BITS2: &[ParamSig] = &[r("addr", true, AtomicBits), v("value", T)];
const RET_T: RetSig = RetSig::Value(T, Some(T1));
const PURE1: &[ParamSig] = &[v("x", Float)];
const PURE_T: RetSig = RetSig::Value(T, None);

/// Every intrinsic. Rows are looked up by name; order is not significant but ids are
/// stable within one build.
pub static TABLE: &[IntrinsicSig] = &[
    // Barriers.
    row("__syncthreads", CodeReq::At(Persp::BLOCK), NONE, RetSig::Void, Barrier, "barrier over the block"),
    row("__syncwarp", AT_W, NONE, RetSig::Void, Barrier, "barrier over the warp"),
    // Warp collectives: every lane of the warp takes part, so they need thread[32] code.
    row(
        "shfl",
        AT_W,
        &[v("value", Numeric), v("src_lane", S(I32))],
        RetSig::UniformIf(T, 1),
        Warp,
        "value of `value` in lane `src_lane` (warp-uniform when `src_lane` is)",
    ),
    row(
        "shfl_up",
        AT_W,
        &[v("value", Numeric), v("delta", S(U32))],
        RET_T,
        Warp,
        "value from lane `lane - delta` (own value in the lowest lanes)",
    ),
    row(
        "shfl_down",
        AT_W,
        &[v("value", Numeric), v("delta", S(U32))],
        RET_T,
        Warp,
        "value from lane `lane + delta` (own value in the highest lanes)",
    ),
    row(
        "shfl_xor",
        AT_W,
        &[v("value", Numeric), v("lane_mask", S(I32))],
        RET_T,
        Warp,
        "value from lane `lane ^ lane_mask`",
    ),
    row("reduce_add", AT_W, &[v("value", Int)], RetSig::Value(T, Some(W)), Warp, "sum over the warp (integers)"),
    row("reduce_min", AT_W, &[v("value", Int)], RetSig::Value(T, Some(W)), Warp, "minimum over the warp (integers)"),
    row("reduce_max", AT_W, &[v("value", Int)], RetSig::Value(T, Some(W)), Warp, "maximum over the warp (integers)"),
    row("reduce_and", AT_W, &[v("value", Int)], RetSig::Value(T, Some(W)), Warp, "bitwise and over the warp"),
    row("reduce_or", AT_W, &[v("value", Int)], RetSig::Value(T, Some(W)), Warp, "bitwise or over the warp"),
    row("reduce_xor", AT_W, &[v("value", Int)], RetSig::Value(T, Some(W)), Warp, "bitwise xor over the warp"),
    row(
        "ballot",
        AT_W,
        &[v("pred", S(Bool))],
        RetSig::Value(S(U32), Some(W)),
        Warp,
        "bit i set iff `pred` holds in lane i",
    ),
    row(
        "any",
        AT_W,
        &[v("pred", S(Bool))],
        RetSig::Value(S(Bool), Some(W)),
        Warp,
        "true iff `pred` holds in some lane",
    ),
    row(
        "all",
        AT_W,
        &[v("pred", S(Bool))],
        RetSig::Value(S(Bool), Some(W)),
        Warp,
        "true iff `pred` holds in every lane",
    ),
    // Tensor cores: mma.sync.aligned with the PTX ISA fragment layouts.
    row("intrinsic.mma", AT_W, F32X4_TF32, RetSig::Void, Mma, "mma.sync m16n8k8 tf32 x tf32 + f32 -> f32"),
    row("intrinsic.mma_tf32", AT_W, F32X4_TF32, RetSig::Void, Mma, "mma.sync m16n8k8 tf32 x tf32 + f32 -> f32"),
    row(
        "intrinsic.mma_tf32_rz",
        AT_W,
        F32X4_TF32,
        RetSig::Void,
        Mma,
        "mma.sync m16n8k8 tf32 x tf32 + f32 -> f32, inputs truncated to tf32 (no cvt.rna)",
    ),
    row("intrinsic.mma_bf16", AT_W, mma16!(BF16), RetSig::Void, Mma, "mma.sync m16n8k16 bf16 x bf16 + f32 -> f32"),
    row("intrinsic.mma_f16", AT_W, mma16!(F16), RetSig::Void, Mma, "mma.sync m16n8k16 f16 x f16 + f32 -> f32"),
    // Tensor-core operands from shared memory: ldmatrix.sync.aligned.m8n8 with 16-bit
    // elements. Lane l gives the address of row l % 8 of matrix l / 8 (16 bytes, aligned);
    // each lane receives two elements of each matrix, in the mma fragment order.
    row(
        "ldmatrix_x4_bf16",
        AT_W,
        &[r("src", false, S(BF16)), ParamSig { name: "out", kind: ParamKind::OutList(8), ty: S(BF16), persp: T1 }],
        RetSig::Void,
        Warp,
        "ldmatrix .x4: four 8x8 bf16 matrices; out[2j], out[2j+1] = row l/4, columns 2(l%4), +1 of matrix j",
    ),
    row(
        "ldmatrix_x4_f16",
        AT_W,
        &[r("src", false, S(F16)), ParamSig { name: "out", kind: ParamKind::OutList(8), ty: S(F16), persp: T1 }],
        RetSig::Void,
        Warp,
        "ldmatrix .x4: four 8x8 half matrices; out[2j], out[2j+1] = row l/4, columns 2(l%4), +1 of matrix j",
    ),
    row(
        "ldmatrix_x2_trans_bf16",
        AT_W,
        &[r("src", false, S(BF16)), ParamSig { name: "out", kind: ParamKind::OutList(4), ty: S(BF16), persp: T1 }],
        RetSig::Void,
        Warp,
        "ldmatrix .x2 .trans: two 8x8 bf16 matrices transposed; out[2j], out[2j+1] = rows 2(l%4), +1, column l/4 of matrix j",
    ),
    row(
        "ldmatrix_x2_trans_f16",
        AT_W,
        &[r("src", false, S(F16)), ParamSig { name: "out", kind: ParamKind::OutList(4), ty: S(F16), persp: T1 }],
        RetSig::Void,
        Warp,
        "ldmatrix .x2 .trans: two 8x8 half matrices transposed; out[2j], out[2j+1] = rows 2(l%4), +1, column l/4 of matrix j",
    ),
    row(
        "ldmatrix_x4_trans_bf16",
        AT_W,
        &[r("src", false, S(BF16)), ParamSig { name: "out", kind: ParamKind::OutList(8), ty: S(BF16), persp: T1 }],
        RetSig::Void,
        Warp,
        "ldmatrix .x4 .trans: four 8x8 bf16 matrices transposed; out[2j], out[2j+1] = rows 2(l%4), +1, column l/4 of matrix j",
    ),
    row(
        "ldmatrix_x4_trans_f16",
        AT_W,
        &[r("src", false, S(F16)), ParamSig { name: "out", kind: ParamKind::OutList(8), ty: S(F16), persp: T1 }],
        RetSig::Void,
        Warp,
        "ldmatrix .x4 .trans: four 8x8 half matrices transposed; out[2j], out[2j+1] = rows 2(l%4), +1, column l/4 of matrix j",
    ),
    // The same instruction over 32-bit elements: ldmatrix moves b16 pairs, so an 8x8 b16
    // matrix is an 8-row x 4-float matrix and each lane receives one whole 32-bit word of
    // it, word l%4 of row l/4. That is the mma m16n8k8 tf32 fragment order: `.x4` over a
    // row-major 16x8 float tile gives a0..a3, `.x2` over an 8x8 tile stored [n][k] gives b0,
    // b1. There is no `.trans` form: it would move 16-bit halves, not floats.
    row(
        "ldmatrix_x4_tf32",
        AT_W,
        &[r("src", false, S(F32)), ParamSig { name: "out", kind: ParamKind::OutList(4), ty: S(F32), persp: T1 }],
        RetSig::Void,
        Warp,
        "ldmatrix .x4 on floats: four 8x4 float matrices; out[j] = row l/4, column l%4 of matrix j",
    ),
    row(
        "ldmatrix_x2_tf32",
        AT_W,
        &[r("src", false, S(F32)), ParamSig { name: "out", kind: ParamKind::OutList(2), ty: S(F32), persp: T1 }],
        RetSig::Void,
        Warp,
        "ldmatrix .x2 on floats: two 8x4 float matrices; out[j] = row l/4, column l%4 of matrix j",
    ),
    row(
        "elect_sync",
        AT_W,
        NONE,
        RetSig::Value(S(Bool), Some(T1)),
        Warp,
        "elect.sync: true in exactly one lane of the warp (which one is unspecified)",
    ),
    // Hopper warpgroup operations.
    row("wgmma_fence", AT_WG, NONE, RetSig::Void, Warpgroup, "wgmma.fence: order register accesses before wgmma"),
    row(
        "wgmma_commit_group",
        AT_WG,
        NONE,
        RetSig::Void,
        Warpgroup,
        "wgmma.commit_group: close a group of wgmma operations",
    ),
    row(
        "wgmma_wait",
        AT_WG,
        &[v("pending", ConstInt)],
        RetSig::Void,
        Warpgroup,
        "wgmma.wait_group: wait until at most `pending` groups are in flight",
    ),
    row(
        "wgmma_bf16",
        AT_WG,
        &[
            ParamSig { name: "acc", kind: ParamKind::Mem { mutable: true }, ty: S(F32), persp: T1 },
            ParamSig { name: "a", kind: ParamKind::Mem { mutable: false }, ty: S(BF16), persp: Persp::WARPGROUP },
            ParamSig { name: "b", kind: ParamKind::Mem { mutable: false }, ty: S(BF16), persp: Persp::WARPGROUP },
            v("n", ConstInt),
        ],
        RetSig::Void,
        Warpgroup,
        "wgmma.mma_async m64nNk16 bf16 from shared memory, f32 accumulators in `acc`",
    ),
    row(
        "wgmma_bf16_sw",
        AT_WG,
        &[
            ParamSig { name: "acc", kind: ParamKind::Mem { mutable: true }, ty: S(F32), persp: T1 },
            ParamSig { name: "a", kind: ParamKind::Ref { mutable: false }, ty: S(BF16), persp: Persp::WARPGROUP },
            ParamSig { name: "b", kind: ParamKind::Ref { mutable: false }, ty: S(BF16), persp: Persp::WARPGROUP },
            v("n", ConstInt),
            v("span", ConstInt),
        ],
        RetSig::Void,
        Warpgroup,
        "wgmma.mma_async m64nNk16 bf16 from K-major tiles swizzled over `span` bytes (as TMA writes them), starting at `a[i]` and `b[j]`",
    ),
    row(
        "wgmma_f16",
        AT_WG,
        &[
            ParamSig { name: "acc", kind: ParamKind::Mem { mutable: true }, ty: S(F32), persp: T1 },
            ParamSig { name: "a", kind: ParamKind::Mem { mutable: false }, ty: S(F16), persp: Persp::WARPGROUP },
            ParamSig { name: "b", kind: ParamKind::Mem { mutable: false }, ty: S(F16), persp: Persp::WARPGROUP },
            v("n", ConstInt),
        ],
        RetSig::Void,
        Warpgroup,
        "wgmma.mma_async m64nNk16 f16 from shared memory, f32 accumulators in `acc`",
    ),
    row(
        "wgmma_f16_sw",
        AT_WG,
        &[
            ParamSig { name: "acc", kind: ParamKind::Mem { mutable: true }, ty: S(F32), persp: T1 },
            ParamSig { name: "a", kind: ParamKind::Ref { mutable: false }, ty: S(F16), persp: Persp::WARPGROUP },
            ParamSig { name: "b", kind: ParamKind::Ref { mutable: false }, ty: S(F16), persp: Persp::WARPGROUP },
            v("n", ConstInt),
            v("span", ConstInt),
        ],
        RetSig::Void,
        Warpgroup,
        "wgmma.mma_async m64nNk16 f16 from K-major tiles swizzled over `span` bytes, starting at `a[i]` and `b[j]`",
    ),
    // tf32: `float` tiles (K-major only: the PTX ISA has no transposed tf32 wgmma), k8.
    row(
        "wgmma_tf32",
        AT_WG,
        &[
            ParamSig { name: "acc", kind: ParamKind::Mem { mutable: true }, ty: S(F32), persp: T1 },
            ParamSig { name: "a", kind: ParamKind::Mem { mutable: false }, ty: S(F32), persp: Persp::WARPGROUP },
            ParamSig { name: "b", kind: ParamKind::Mem { mutable: false }, ty: S(F32), persp: Persp::WARPGROUP },
            v("n", ConstInt),
        ],
        RetSig::Void,
        Warpgroup,
        "wgmma.mma_async m64nNk8 tf32 from `float` tiles in shared memory (K-major), f32 accumulators in `acc`",
    ),
    row(
        "wgmma_tf32_sw",
        AT_WG,
        &[
            ParamSig { name: "acc", kind: ParamKind::Mem { mutable: true }, ty: S(F32), persp: T1 },
            ParamSig { name: "a", kind: ParamKind::Ref { mutable: false }, ty: S(F32), persp: Persp::WARPGROUP },
            ParamSig { name: "b", kind: ParamKind::Ref { mutable: false }, ty: S(F32), persp: Persp::WARPGROUP },
            v("n", ConstInt),
            v("span", ConstInt),
        ],
        RetSig::Void,
        Warpgroup,
        "wgmma.mma_async m64nNk8 tf32 from K-major `float` tiles swizzled over `span` bytes, starting at `a[i]` and `b[j]`",
    ),
    row(
        "setmaxnreg_inc",
        AT_WG,
        &[v("regs", ConstInt)],
        RetSig::Void,
        Warpgroup,
        "setmaxnreg.inc: raise the warpgroup's register budget",
    ),
    row(
        "setmaxnreg_dec",
        AT_WG,
        &[v("regs", ConstInt)],
        RetSig::Void,
        Warpgroup,
        "setmaxnreg.dec: lower the warpgroup's register budget",
    ),
    // Atomics: per thread, on memory of any perspective.
    row("atomic_add", AT_T1, ATOMIC2, RET_T, Atomics, "atomically add; returns the old value"),
    row("atomic_sub", AT_T1, ATOMIC2, RET_T, Atomics, "atomically subtract; returns the old value"),
    row("atomic_min", AT_T1, ATOMIC2, RET_T, Atomics, "atomic minimum; returns the old value"),
    row("atomic_max", AT_T1, ATOMIC2, RET_T, Atomics, "atomic maximum; returns the old value"),
    row("atomic_and", AT_T1, ATOMIC_BITS2, RET_T, Atomics, "atomic bitwise and; returns the old value"),
    row("atomic_or", AT_T1, ATOMIC_BITS2, RET_T, Atomics, "atomic bitwise or; returns the old value"),
    row("atomic_xor", AT_T1, ATOMIC_BITS2, RET_T, Atomics, "atomic bitwise xor; returns the old value"),
    row("atomic_exch", AT_T1, ATOMIC2, RET_T, Atomics, "atomic exchange; returns the old value"),
    row(
        "atomic_cas",
        AT_T1,
        &[r("addr", true, Atomic), v("compare", T), v("value", T)],
        RET_T,
        Atomics,
        "compare and swap; returns the old value",
    ),
    row("atomic_load", AT_T1, &[r("addr", false, Atomic)], RET_T, Atomics, "atomic (relaxed) load"),
    row(
        "atomic_store",
        AT_T1,
        &[r("addr", true, Atomic), v("value", T)],
        RetSig::Void,
        Atomics,
        "atomic (relaxed) store",
    ),
    // Vector memory access: `n` consecutive elements in one instruction (`n` times the
    // element size is 4, 8 or 16 bytes, and the first element is aligned to that size).
    row(
        "load_vec",
        AT_T1,
        &[
            ParamSig { name: "dst", kind: ParamKind::LocalRef { mutable: true }, ty: Numeric, persp: T1 },
            r("src", false, T),
            v("n", ConstInt),
        ],
        RetSig::Void,
        Vector,
        "vector load: `dst[j + k] = src[i + k]` for `k < n` in one 4-, 8- or 16-byte access",
    ),
    row(
        "store_vec",
        AT_T1,
        &[
            r("dst", true, Numeric),
            ParamSig { name: "src", kind: ParamKind::LocalRef { mutable: false }, ty: T, persp: T1 },
            v("n", ConstInt),
        ],
        RetSig::Void,
        Vector,
        "vector store: `dst[i + k] = src[j + k]` for `k < n` in one 4-, 8- or 16-byte access",
    ),
    // Asynchronous copies.
    row(
        "cp_async",
        AT_T1,
        &[
            ParamSig { name: "dst", kind: ParamKind::AsyncRef, ty: Numeric, persp: T1 },
            r("src", false, T),
            v("bytes", ConstInt),
        ],
        RetSig::Void,
        AsyncCopy,
        "cp.async: copy 4, 8 or 16 bytes from `src` to `dst` asynchronously",
    ),
    row(
        "cp_async_zfill",
        AT_T1,
        &[
            ParamSig { name: "dst", kind: ParamKind::AsyncRef, ty: Numeric, persp: T1 },
            r("src", false, T),
            v("bytes", ConstInt),
            v("src_bytes", S(I32)),
        ],
        RetSig::Void,
        AsyncCopy,
        "cp.async with src-size: copy the first `src_bytes` of 4, 8 or 16 bytes from `src`, zero the rest of `dst`",
    ),
    row(
        "tma_load_2d",
        AT_T1,
        &[
            ParamSig { name: "dst", kind: ParamKind::AsyncRef, ty: Numeric, persp: T1 },
            v("map", Opaque("CUTensorMap")),
            v("x", S(I32)),
            v("y", S(I32)),
        ],
        RetSig::Void,
        AsyncCopy,
        "cp.async.bulk.tensor.2d: copy a tile described by `map` at (x, y) into `dst`",
    ),
    row(
        "tma_load_3d",
        AT_T1,
        &[
            ParamSig { name: "dst", kind: ParamKind::AsyncRef, ty: Numeric, persp: T1 },
            v("map", Opaque("CUTensorMap")),
            v("x", S(I32)),
            v("y", S(I32)),
            v("z", S(I32)),
        ],
        RetSig::Void,
        AsyncCopy,
        "cp.async.bulk.tensor.3d: copy a box described by `map` at (x, y, z) into `dst`",
    ),
    // TMA stores: one thread writes a box from shared memory (laid out and swizzled as the
    // map's loads lay it out) into the map's array, clipped to the array; complete when the
    // call returns. The map is a view the thread owns (docs/language.md §5).
    row(
        "tma_store_2d",
        AT_T1,
        &[v("map", Opaque("CUTensorMap")), v("x", S(I32)), v("y", S(I32)), r("src", false, Numeric)],
        RetSig::Void,
        AsyncCopy,
        "cp.async.bulk.tensor.2d.global.shared: store the box at `src` into `map` at (x, y)",
    ),
    row(
        "tma_store_3d",
        AT_T1,
        &[v("map", Opaque("CUTensorMap")), v("x", S(I32)), v("y", S(I32)), v("z", S(I32)), r("src", false, Numeric)],
        RetSig::Void,
        AsyncCopy,
        "cp.async.bulk.tensor.3d.global.shared: store the box at `src` into `map` at (x, y, z)",
    ),
    // Fences.
    row("__threadfence", AT_T1, NONE, RetSig::Void, Fence, "order this thread's memory accesses device-wide"),
    row("__threadfence_block", AT_T1, NONE, RetSig::Void, Fence, "order this thread's memory accesses block-wide"),
    row("__nanosleep", AT_T1, &[v("ns", S(U32))], RetSig::Void, Fence, "sleep for about `ns` nanoseconds"),
    // A failed run-time check: on the GPU the launch fails with an error (`__trap()`), in the
    // simulator the run stops with `trap` at the call. Any code may reach it; it changes no
    // memory and no value, so it needs nothing from the checker or inference.
    row(
        "trap",
        AT_T1,
        NONE,
        RetSig::Void,
        Fence,
        "stop the kernel with an error: the launch fails (`__trap()`); the simulator reports `trap`",
    ),
    row(
        "fence_proxy_async",
        AT_T1,
        NONE,
        RetSig::Void,
        Fence,
        "fence.proxy.async.shared::cta: this thread's shared-memory stores become visible to the async proxy (wgmma, TMA)",
    ),
    // Pure math: any perspective, as uniform as the operands.
    row("sqrt", CodeReq::Pure, PURE1, PURE_T, Math, "square root"),
    row("rsqrt", CodeReq::Pure, PURE1, PURE_T, Math, "reciprocal square root"),
    row("exp", CodeReq::Pure, PURE1, PURE_T, Math, "e to the x"),
    row("exp2", CodeReq::Pure, PURE1, PURE_T, Math, "2 to the x"),
    row("log", CodeReq::Pure, PURE1, PURE_T, Math, "natural logarithm"),
    row("log2", CodeReq::Pure, PURE1, PURE_T, Math, "base-2 logarithm"),
    row("sin", CodeReq::Pure, PURE1, PURE_T, Math, "sine"),
    row("cos", CodeReq::Pure, PURE1, PURE_T, Math, "cosine"),
    row("tanh", CodeReq::Pure, PURE1, PURE_T, Math, "hyperbolic tangent"),
    row("floor", CodeReq::Pure, PURE1, PURE_T, Math, "round down"),
    row("ceil", CodeReq::Pure, PURE1, PURE_T, Math, "round up"),
    row("popc", CodeReq::Pure, &[v("x", Int)], RetSig::Value(S(I32), None), Math, "number of set bits"),
    row("clz", CodeReq::Pure, &[v("x", Int)], RetSig::Value(S(I32), None), Math, "number of leading zero bits"),
    row(
        "ffs",
        CodeReq::Pure,
        &[v("x", Int)],
        RetSig::Value(S(I32), None),
        Math,
        "1 + index of the lowest set bit, or 0",
    ),
    row("brev", CodeReq::Pure, &[v("x", Int)], PURE_T, Math, "bits in reverse order"),
    row(
        "bits32",
        CodeReq::Pure,
        &[v("x", Bits32)],
        RetSig::Value(S(U32), None),
        Math,
        "the bits of a scalar of at most 32 bits as a `uint` (16-bit types zero-extended): `__float_as_uint`",
    ),
    row("abs", CodeReq::Pure, &[v("x", Numeric)], PURE_T, Math, "absolute value"),
    row("min", CodeReq::Pure, &[v("a", Numeric), v("b", T)], PURE_T, Math, "minimum"),
    row("max", CodeReq::Pure, &[v("a", Numeric), v("b", T)], PURE_T, Math, "maximum"),
    row("pow", CodeReq::Pure, &[v("x", Float), v("y", T)], PURE_T, Math, "x to the y"),
    row("fmod", CodeReq::Pure, &[v("x", Float), v("y", T)], PURE_T, Math, "floating-point remainder"),
    row("fma", CodeReq::Pure, &[v("a", Float), v("b", T), v("c", T)], PURE_T, Math, "a * b + c, rounded once"),
    // Conversions.
    row(
        "int",
        CodeReq::Pure,
        &[v("x", AnyScalar)],
        RetSig::Value(S(I32), None),
        Cast,
        "convert to int (truncates toward zero)",
    ),
    row("uint", CodeReq::Pure, &[v("x", AnyScalar)], RetSig::Value(S(U32), None), Cast, "convert to uint"),
    row("int64", CodeReq::Pure, &[v("x", AnyScalar)], RetSig::Value(S(I64), None), Cast, "convert to int64"),
    row("uint64", CodeReq::Pure, &[v("x", AnyScalar)], RetSig::Value(S(U64), None), Cast, "convert to uint64"),
    row("float", CodeReq::Pure, &[v("x", AnyScalar)], RetSig::Value(S(F32), None), Cast, "convert to float"),
    row("double", CodeReq::Pure, &[v("x", AnyScalar)], RetSig::Value(S(F64), None), Cast, "convert to double"),
    row(
        "half",
        CodeReq::Pure,
        &[v("x", AnyScalar)],
        RetSig::Value(S(F16), None),
        Cast,
        "convert to half (round to nearest even)",
    ),
    row(
        "bf16",
        CodeReq::Pure,
        &[v("x", AnyScalar)],
        RetSig::Value(S(BF16), None),
        Cast,
        "convert to bf16 (round to nearest even)",
    ),
    // Unsafe only: raw indices and volatile accesses.
    row("thread_idx", CodeReq::UnsafeOnly, NONE, RetSig::Value(S(I32), Some(T1)), Raw, "threadIdx.x"),
    row("block_idx", CodeReq::UnsafeOnly, NONE, RetSig::Value(S(I32), Some(Persp::BLOCK)), Raw, "blockIdx.x"),
    // The launch's sizes are the same in every thread of the launch, so they are safe
    // anywhere (a grid-stride loop needs them); as pure functions without operands they are
    // uniform over every perspective.
    row("block_dim", CodeReq::Pure, NONE, RetSig::Value(S(I32), Some(Persp::GRID)), Raw, "blockDim.x"),
    row("grid_dim", CodeReq::Pure, NONE, RetSig::Value(S(I32), Some(Persp::GRID)), Raw, "gridDim.x"),
    row(
        "volatile_load",
        CodeReq::UnsafeOnly,
        &[r("addr", false, Numeric)],
        RetSig::Value(T, Some(T1)),
        Raw,
        "volatile load (spin-waits)",
    ),
    row(
        "volatile_store",
        CodeReq::UnsafeOnly,
        &[r("addr", true, Numeric), v("value", T)],
        RetSig::Void,
        Raw,
        "volatile store",
    ),
    // mbarriers (unsafe only): an element of a `shared(uint64[...])` array is the barrier.
    row(
        "mbarrier_init",
        CodeReq::UnsafeOnly,
        &[r("bar", true, S(U64)), v("count", S(I32))],
        RetSig::Void,
        Mbarrier,
        "mbarrier.init: a barrier expecting `count` arrivals per phase",
    ),
    row(
        "mbarrier_arrive",
        CodeReq::UnsafeOnly,
        &[r("bar", true, S(U64))],
        RetSig::Value(S(U64), Some(T1)),
        Mbarrier,
        "mbarrier.arrive (release): one arrival; returns the phase's token",
    ),
    row(
        "mbarrier_arrive_expect_tx",
        CodeReq::UnsafeOnly,
        &[r("bar", true, S(U64)), v("bytes", S(I32))],
        RetSig::Value(S(U64), Some(T1)),
        Mbarrier,
        "mbarrier.arrive.expect_tx: expect `bytes` more transaction bytes this phase, and arrive",
    ),
    row(
        "mbarrier_expect_tx",
        CodeReq::UnsafeOnly,
        &[r("bar", true, S(U64)), v("bytes", S(I32))],
        RetSig::Void,
        Mbarrier,
        "mbarrier.expect_tx: expect `bytes` more transaction bytes this phase, without arriving",
    ),
    // TMA copies that complete on an mbarrier the program manages (unsafe only): they land
    // with `complete_tx` of the box's bytes on `bar`. Warp-specialised pipelines lower their
    // fills' copies to these.
    row(
        "tma_load_2d_mbar",
        CodeReq::UnsafeOnly,
        &[
            r("dst", true, Numeric),
            v("map", Opaque("CUTensorMap")),
            v("x", S(I32)),
            v("y", S(I32)),
            r("bar", true, S(U64)),
        ],
        RetSig::Void,
        AsyncCopy,
        "cp.async.bulk.tensor.2d with mbarrier::complete_tx: the box of `map` at (x, y) into `dst`, completing on `bar`",
    ),
    row(
        "tma_load_3d_mbar",
        CodeReq::UnsafeOnly,
        &[
            r("dst", true, Numeric),
            v("map", Opaque("CUTensorMap")),
            v("x", S(I32)),
            v("y", S(I32)),
            v("z", S(I32)),
            r("bar", true, S(U64)),
        ],
        RetSig::Void,
        AsyncCopy,
        "cp.async.bulk.tensor.3d with mbarrier::complete_tx: the box of `map` at (x, y, z) into `dst`, completing on `bar`",
    ),
    row(
        "mbarrier_complete_tx",
        CodeReq::UnsafeOnly,
        &[r("bar", true, S(U64)), v("bytes", S(I32))],
        RetSig::Void,
        Mbarrier,
        "mbarrier.complete_tx: `bytes` of the phase's transactions are done",
    ),
    row(
        "mbarrier_wait_parity",
        CodeReq::UnsafeOnly,
        &[r("bar", true, S(U64)), v("parity", S(U32))],
        RetSig::Void,
        Mbarrier,
        "mbarrier.try_wait.parity in a loop (acquire): until the phase of parity `parity` has completed",
    ),
    row(
        "mbarrier_inval",
        CodeReq::UnsafeOnly,
        &[r("bar", true, S(U64))],
        RetSig::Void,
        Mbarrier,
        "mbarrier.inval: the barrier's memory may be reused",
    ),
];

/// The operations of atomic updates, as bits: synchronisation inference's conflict rule
/// (`prism_sync`, `Mode`) and the simulator's check of it (`prism_interp`, `Phase`) both
/// read them, so the two agree on which updates commute.
pub mod atomic_op {
    /// `atomic_add` and `atomic_sub` (both add, modulo the type's range).
    pub const ADD: u8 = 1;
    /// `atomic_min`.
    pub const MIN: u8 = 2;
    /// `atomic_max`.
    pub const MAX: u8 = 4;
    /// `atomic_and`.
    pub const AND: u8 = 8;
    /// `atomic_or`.
    pub const OR: u8 = 16;
    /// `atomic_xor`.
    pub const XOR: u8 = 32;
    /// `atomic_store`, `atomic_exch`, `atomic_cas`: they overwrite, so their order shows.
    pub const OVERWRITE: u8 = 64;

    /// The operation of the atomic intrinsic `name` (0 for `atomic_load`, which updates
    /// nothing).
    pub fn of(name: &str) -> u8 {
        match name {
            "atomic_load" => 0,
            "atomic_add" | "atomic_sub" => ADD,
            "atomic_min" => MIN,
            "atomic_max" => MAX,
            "atomic_and" => AND,
            "atomic_or" => OR,
            "atomic_xor" => XOR,
            _ => OVERWRITE,
        }
    }
}

/// Looks an intrinsic up by name.
pub fn lookup(name: &str) -> Option<IntrinsicId> {
    TABLE.iter().position(|s| s.name == name).map(|i| IntrinsicId(i as u16))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert_ne!(a.name, b.name, "duplicate intrinsic");
            }
        }
    }

    #[test]
    fn generic_params_bind_before_use() {
        // A `T` operand must follow an operand that fixes `T`.
        for s in TABLE {
            let mut bound = false;
            for p in s.params {
                match p.ty {
                    TyClass::Numeric
                    | TyClass::Int
                    | TyClass::Float
                    | TyClass::Atomic
                    | TyClass::AtomicBits
                    | TyClass::Bits32
                    | TyClass::AnyScalar => bound = true,
                    TyClass::T => assert!(bound, "{}: `{}` uses T before it is fixed", s.name, p.name),
                    _ => {}
                }
            }
            if let RetSig::Value(TyClass::T, _) | RetSig::UniformIf(TyClass::T, _) = s.ret {
                assert!(bound, "{} returns T without fixing it", s.name);
            }
        }
    }
}
