//! Executing a fragment: one op at a time for all its lanes, with the dynamic checks.
//!
//! The hot loop keeps the fragment and its current frame out of the block's tables, so the
//! straight-line ops touch only locals. Ops that involve other fragments (joins that park,
//! barriers, collectives that wait for the rest of the warp, calls and returns) put them
//! back first and continue through the block's bookkeeping.

use super::access::{Lane, Operand, Site, race_kind};
use super::block::{
    BarState, BlockSim, CollState, FULL, Loc, Mbar, PendingCopy, RET, ReadBy, Rec, Wait, WgPending, lanes_of,
};
use super::flags::{PhaseReleases, PhaseSet, comparable};
use super::intr;
use super::lanes;
use super::regs::Regs;
use super::wgmma::{
    TileAt, TileElem, Tiles, WarpRead, interleaved_start, lane_col, operand_value, place, swizzled_start,
};
use super::{GCtx, Shared};
use crate::code::{FuncCode, Intr, Latch, MbarOp, Op, R, Scalars, WgmmaLayout};
use crate::memory::{Ptr, Space};
use crate::ops;
use crate::report::{Report, ReportKind, Thread};
use crate::shadow::ReadAt;
use crate::value::{self, to_i128};
use prism_ir::ir::Checked;
use prism_span::Span;
use prism_types::perspective::{Level, Persp};
use prism_types::tir::BinOp;
use prism_types::ty::Scalar;
use std::sync::Arc;

/// The report of an mbarrier operation by a thread not ordered after the barrier's latest
/// completed phase (`BlockSim::saw_last_landing`).
/// How many emptied lists of wgmma reads a block keeps for the next wgmmas
/// ([`BlockSim::spare_reads`]): one per lane of two warpgroups with a few groups in flight.
const SPARE_READS: usize = 1024;

/// How many warp tile reads the waits keep for later wgmmas ([`BlockSim::spare_tiles`]):
/// one per warp of two warpgroups with a few groups of several wgmmas in flight.
const SPARE_TILES: usize = 256;

/// An operation on an mbarrier through an array other than the one that initialised it.
const MBAR_OTHER_ARRAY: &str = "an operation on an mbarrier through an array that never initialised it: these bytes hold a barrier another array initialised (an earlier scope's, or a called function's scratch, which reuse them), and a new array's elements hold nothing until written as its own (docs/language.md §5); initialise the barrier through this array, after invalidating the old one with `mbarrier_inval`";
const UNSEEN_COPIES: &str = "an operation on this mbarrier by a thread not ordered after its previous phase's completion: on the GPU that phase may still be waiting, for other threads' arrivals or for the bytes of TMA copies in flight, so the arrival or the bytes count towards it (wait for the phase first, or be ordered after a thread that did)";

/// The report of an operation on an mbarrier's bytes that may have come after its phase
/// completed on the GPU (`super::block::BytesOp`): `surely` bytes were announced before it,
/// and `completed` may have completed by then.
fn early_phase(surely: i64, completed: i64) -> String {
    format!(
        "bytes announced or completed on this mbarrier after which its phase may already have completed on the GPU: none of the phase's arrivals is ordered after this, and the bytes announced for the phase before it ({surely}) may all have completed by then ({completed} by operations not ordered after it), so this counts towards the next phase (announce the bytes before this thread's own arrival, or with it: `mbarrier_arrive_expect_tx`)"
    )
}

/// Whether an mbarrier's transaction bytes (`bytes`, one operation's operand) or the bytes
/// its phase has had announced, or completed, so far with it (`total`) leave PTX's range
/// of the transaction count, -(2^20 - 1) to 2^20 - 1: the GPU applies a phase's
/// announcements and completions in any order that nothing forbids (a TMA copy completes
/// its bytes whenever it finishes), so the count may reach either sum. Until review R16
/// (F3, F4) a thread's `complete_tx` was subtracted from the announcements as it ran, so a
/// count driven down, or up with another thread's completions between, ran clean. The PTX
/// ISA leaves the operation undefined.
fn tx_out_of_range(bytes: i64, total: i64) -> Option<String> {
    const MAX: i64 = (1 << 20) - 1;
    if bytes > MAX {
        Some(format!("mbarrier transaction count {bytes} out of range (0 to 2^20 - 1)"))
    } else if total > MAX {
        Some(format!(
            "the bytes announced, or completed, on this mbarrier's phase reach {total}, past the transaction count's range (2^20 - 1 either way): on the GPU nothing keeps them from all coming before the other side's"
        ))
    } else {
        None
    }
}

/// Runs `f(lane)` for each lane of `mask`.
#[inline(always)]
fn each(mask: u32, mut f: impl FnMut(usize)) {
    if mask == FULL {
        for l in 0..32 {
            f(l);
        }
    } else {
        for l in lanes_of(mask) {
            f(l);
        }
    }
}

/// The low 32 bits of a `u64`.
const LOW32: u64 = 0xFFFF_FFFF;

/// The low 32 bits of `v` as an `i32`, sign-extended to 64 bits (the canonical bits of an
/// `int`): `t ^ 2^31 - 2^31` is `t` below 2^31 and `t - 2^32` from there, in 64-bit
/// operations that SSE2 has.
#[inline(always)]
fn sext32(v: u64) -> u64 {
    ((v & LOW32) ^ 0x8000_0000).wrapping_sub(0x8000_0000)
}

/// `out = x op y` in all `N` lanes (32, or one for operands known to be uniform) for the
/// common operations, as a straight loop over fixed-size arrays (no bounds checks, so the
/// compiler can vectorise it); `false`, having written nothing, for the others.
#[inline(always)]
fn bin_fast<const N: usize>(op: BinOp, ty: Scalar, out: &mut [u64; N], x: &[u64; N], y: &[u64; N]) -> bool {
    #[inline(always)]
    fn map<const N: usize>(out: &mut [u64; N], x: &[u64; N], y: &[u64; N], f: impl Fn(u64, u64) -> u64) {
        for l in 0..N {
            out[l] = f(x[l], y[l]);
        }
    }
    let f32of = |v: u64| f32::from_bits(v as u32);
    let f64of = f64::from_bits;
    let i32of = |v: u64| v as u32 as i32;
    use BinOp::*;
    match (ty, op) {
        (Scalar::F32, Add) => map(out, x, y, |a, b| value::f32_result(f32of(a) + f32of(b))),
        (Scalar::F32, Sub) => map(out, x, y, |a, b| value::f32_result(f32of(a) - f32of(b))),
        (Scalar::F32, Mul) => map(out, x, y, |a, b| value::f32_result(f32of(a) * f32of(b))),
        (Scalar::F32, Div) => map(out, x, y, |a, b| value::f32_result(f32of(a) / f32of(b))),
        (Scalar::F32, Lt) => map(out, x, y, |a, b| (f32of(a) < f32of(b)) as u64),
        (Scalar::F32, Le) => map(out, x, y, |a, b| (f32of(a) <= f32of(b)) as u64),
        (Scalar::F32, Gt) => map(out, x, y, |a, b| (f32of(a) > f32of(b)) as u64),
        (Scalar::F32, Ge) => map(out, x, y, |a, b| (f32of(a) >= f32of(b)) as u64),
        (Scalar::F64, Add) => map(out, x, y, |a, b| value::f64_result(f64of(a) + f64of(b))),
        (Scalar::F64, Sub) => map(out, x, y, |a, b| value::f64_result(f64of(a) - f64of(b))),
        (Scalar::F64, Mul) => map(out, x, y, |a, b| value::f64_result(f64of(a) * f64of(b))),
        // The low 32 bits of the 64-bit sum, difference or product are those of the 32-bit
        // one; `sext32` sign-extends them with 64-bit operations only, so these loops run
        // two lanes per SSE2 instruction (a sign extension through `i32` does not vectorise
        // without SSE4.1).
        (Scalar::I32, Add) => map(out, x, y, |a, b| sext32(a.wrapping_add(b))),
        (Scalar::I32, Sub) => map(out, x, y, |a, b| sext32(a.wrapping_sub(b))),
        (Scalar::I32, Mul) => map(out, x, y, |a, b| sext32((a & LOW32).wrapping_mul(b & LOW32))),
        (Scalar::I32, Lt) => map(out, x, y, |a, b| (i32of(a) < i32of(b)) as u64),
        (Scalar::I32, Le) => map(out, x, y, |a, b| (i32of(a) <= i32of(b)) as u64),
        (Scalar::I32, Gt) => map(out, x, y, |a, b| (i32of(a) > i32of(b)) as u64),
        (Scalar::I32, Ge) => map(out, x, y, |a, b| (i32of(a) >= i32of(b)) as u64),
        (Scalar::I32, Eq) | (Scalar::U32, Eq) => map(out, x, y, |a, b| (a == b) as u64),
        (Scalar::I32, Ne) | (Scalar::U32, Ne) => map(out, x, y, |a, b| (a != b) as u64),
        (Scalar::I32 | Scalar::U32, BitAnd) => map(out, x, y, |a, b| a & b),
        (Scalar::I32 | Scalar::U32, BitOr) => map(out, x, y, |a, b| a | b),
        (Scalar::I32 | Scalar::U32, BitXor) => map(out, x, y, |a, b| a ^ b),
        (Scalar::U32, Add) => map(out, x, y, |a, b| (a as u32).wrapping_add(b as u32) as u64),
        (Scalar::U32, Sub) => map(out, x, y, |a, b| (a as u32).wrapping_sub(b as u32) as u64),
        (Scalar::U32, Mul) => map(out, x, y, |a, b| (a as u32).wrapping_mul(b as u32) as u64),
        (Scalar::U32, Lt) => map(out, x, y, |a, b| (a < b) as u64),
        (Scalar::Bool, And) => map(out, x, y, |a, b| a & b & 1),
        (Scalar::Bool, Or) => map(out, x, y, |a, b| (a | b) & 1),
        _ => return false,
    }
    true
}

/// `dst = a op b` over the lanes of `mask`; the lane of a division by zero if any. The
/// common operations ([`bin_fast`]) write a whole warp's result straight into `dst` when it
/// is neither operand (a copy through a temporary was a fifth of their cost); the rest go
/// through [`ops::bin`] lane by lane, into a temporary that is stored only when no lane
/// divided by zero.
#[inline(always)]
fn bin_lanes(
    regs: &mut Regs,
    mask: u32,
    (op, ty, b_ty): (BinOp, Scalar, Scalar),
    (dst, a, b): (R, R, R),
) -> Option<usize> {
    // Operands known to hold one value each: one lane computed, the same code as the 32 (a
    // division by zero goes on to the lanes, which find the lane to report).
    if mask == FULL
        && regs.uniform(a)
        && regs.uniform(b)
        && let Some(v) = bin_one((op, ty, b_ty), regs.src(a)[0], regs.src(b)[0])
    {
        regs.put_uniform(dst, FULL, v);
        return None;
    }
    if mask == FULL
        && let Some((out, x, y)) = regs.dst_src2(dst, a, b)
        && bin_fast(op, ty, out, x, y)
    {
        return None;
    }
    if let Some(out) = div_pow2(op, ty, regs.uniform(b).then(|| regs.src(b)[0]), regs.src(a)) {
        regs.put(dst, mask, &out);
        return None;
    }
    let x = regs.src(a);
    let y = regs.src(b);
    let mut out = [0u64; 32];
    if !bin_fast(op, ty, &mut out, x, y) {
        let mut zero = None;
        for l in lanes_of(mask) {
            match ops::bin(op, ty, x[l], y[l], b_ty) {
                Some(v) => out[l] = v,
                None => {
                    zero.get_or_insert(l);
                }
            }
        }
        if zero.is_some() {
            return zero;
        }
    }
    regs.put(dst, mask, &out);
    None
}

/// `dst = src` over the lanes of `mask`: one value written when `src` holds one (`Copy`,
/// and each pair of an inlined call's `Moves`).
#[inline(always)]
fn copy_reg(regs: &mut Regs, mask: u32, dst: R, src: R) {
    if regs.uniform(src) {
        let v = regs.src(src)[0];
        regs.put_uniform(dst, mask, v);
    } else {
        let mut x = [0u64; 32];
        lanes::copy32(&mut x, regs.src(src));
        regs.put(dst, mask, &x);
    }
}

/// An integer division or remainder by a divisor that holds one value in every lane, a
/// positive power of two `2^k` (the index arithmetic of transposes and exchanges: `i / 32`,
/// `i % 32`), over all 32 lanes as shifts and masks instead of a hardware division per lane
/// (a tenth of a look-back scan's run went there). Truncating toward zero, as C and PTX do
/// and [`ops::bin`] computes: a negative dividend is biased by `2^k - 1` before the
/// arithmetic shift. `None` for every other operation, type or divisor.
#[inline(always)]
fn div_pow2(op: BinOp, ty: Scalar, divisor: Option<u64>, x: &[u64; 32]) -> Option<[u64; 32]> {
    if !matches!(op, BinOp::Div | BinOp::Rem) || !ty.is_int() {
        return None;
    }
    // Signed divisors are sign-extended bits: a negative one reads as huge and fails the
    // range test, as do zero and `2^63` and up.
    let d = divisor?;
    let max = if ty.is_signed_int() { 1u64 << (ty.size() * 8 - 2) } else { 1u64 << (ty.size() * 8 - 1) };
    if !d.is_power_of_two() || d > max {
        return None;
    }
    let k = d.trailing_zeros();
    let mut out = [0u64; 32];
    for l in 0..32 {
        // Canonical bits: signed values sign-extended, so `as i64` is the value.
        let q = if ty.is_signed_int() {
            let v = x[l] as i64;
            (v.wrapping_add((v >> 63) & (d as i64 - 1)) >> k) as u64
        } else {
            x[l] >> k
        };
        let v = if op == BinOp::Div { q } else { x[l].wrapping_sub(q << k) };
        out[l] = value::norm(ty, v);
    }
    Some(out)
}

/// `a op b` on one lane of operands known to hold one value each: the straight-lane code
/// where it has the operation, else [`ops::bin`], as the lanes compute it; `None` for a
/// division by zero (which the op run over its lanes reports).
#[inline(always)]
fn bin_one((op, ty, b_ty): (BinOp, Scalar, Scalar), a: u64, b: u64) -> Option<u64> {
    let mut out = [0u64; 1];
    if bin_fast(op, ty, &mut out, &[a], &[b]) { Some(out[0]) } else { ops::bin(op, ty, a, b, b_ty) }
}

/// What register op `op` computes when every register it reads holds one value in all
/// lanes (its one-lane path): its destination and the value, for the whole warp. `None`
/// for any other op, when a register it reads may differ between lanes, or when the op
/// would be reported (a division by zero, a counter leaving its type's range): the op's
/// lanes then compute it, and find the lane to report. The ops' own arms, [`Latch`] and
/// [`Scalars`] all take this one path, so a fused op computes what the op alone does.
#[inline(always)]
fn uniform_result(regs: &Regs, op: &Op) -> Option<(R, u64)> {
    let one = |r: R| regs.uniform(r).then(|| regs.src(r)[0]);
    Some(match *op {
        Op::Const { dst, bits } => (dst, bits),
        Op::Copy { dst, src } => (dst, one(src)?),
        Op::Un { dst, op, ty, a } => (dst, ops::un(op, ty, one(a)?)),
        Op::Bin { dst, op, ty, a, b, b_ty } => (dst, bin_one((op, ty, b_ty), one(a)?, one(b)?)?),
        Op::Step { iv, step, ty } => (iv, step_lane(ty, one(iv)?, one(step)?)?),
        Op::Select { dst, c, a, b } => {
            let (c, a, b) = (one(c)?, one(a)?, one(b)?);
            (dst, if c != 0 { a } else { b })
        }
        Op::Cast { dst, from, to, a } => (dst, cast_lane(from, to, one(a)?)),
        _ => return None,
    })
}

/// Runs the ops of a [`Scalars`] run in turn, under a full mask, while `room` allows (how
/// many ops may run after the first before the fragment yields or the fuel runs out) and
/// each has a one-lane result ([`uniform_result`]) or is a binary operation or a copy,
/// which run over the 32 lanes through the function each runs alone ([`bin_lanes`],
/// [`copy_reg`]): the index arithmetic of a register tile mixes values that differ between
/// lanes (`thread_row * TM`) with loop counters, and a run cut at its first such value
/// dispatched the rest one by one. Stops before any other op, and before a binary
/// operation that would be reported (a division by zero: `bin_lanes` then writes
/// nothing), which then runs alone and reports. Returns how many ran: zero when the first
/// did not, and then nothing was written.
#[inline(always)]
fn run_scalars(regs: &mut Regs, sc: &Scalars, room: u64) -> u32 {
    let mut ran = 0;
    for op in sc.ops.iter() {
        if u64::from(ran) > room {
            break;
        }
        match uniform_result(regs, op) {
            Some((dst, v)) => regs.put_uniform(dst, FULL, v),
            None => match *op {
                Op::Bin { dst, op, ty, a, b, b_ty } => {
                    if bin_lanes(regs, FULL, (op, ty, b_ty), (dst, a, b)).is_some() {
                        break;
                    }
                }
                Op::Copy { dst, src } => copy_reg(regs, FULL, dst, src),
                _ => break,
            },
        }
        ran += 1;
    }
    ran
}

/// What a [`Latch`] computes when every register it reads holds one value: the step's
/// register, its new value and the condition's value. `None` when a register it reads may
/// differ between lanes, or the step would be reported (a division by zero, a counter
/// leaving its type's range): the ops then run one by one.
#[inline(always)]
fn latch_values(regs: &Regs, la: &Latch) -> Option<(R, u64, u64)> {
    let one = |r: R| regs.uniform(r).then(|| regs.src(r)[0]);
    let (dst, v) = match la.first {
        Op::Bin { .. } | Op::Step { .. } => uniform_result(regs, &la.first)?,
        _ => return None,
    };
    // The condition reads the stepped register's new value.
    let read = |r: R| if r == dst { Some(v) } else { one(r) };
    let (_, op, ty, a, b, b_ty) = la.cond;
    Some((dst, v, bin_one((op, ty, b_ty), read(a)?, read(b)?)?))
}

/// A cast of one lane, for the casts with a straight-lane formula (the same integer in the
/// same canonical bits, `int` to `float`); [`value::cast`] for the others.
#[inline(always)]
fn cast_lane(from: Scalar, to: Scalar, v: u64) -> u64 {
    match (from, to) {
        (Scalar::I32, Scalar::I64) => v as u32 as i32 as i64 as u64,
        (Scalar::U32, Scalar::U64 | Scalar::I64) => v & 0xFFFF_FFFF,
        (Scalar::I32, Scalar::F32) => u64::from((v as u32 as i32 as f32).to_bits()),
        _ => value::cast(from, to, v),
    }
}

/// `iv + step` on integers of type `ty`, or `None` if it leaves the type's range.
#[inline(always)]
fn step_lane(ty: Scalar, iv: u64, step: u64) -> Option<u64> {
    let (lo, hi) = prism_types::consts::int_range(ty);
    let v = to_i128(ty, iv) + to_i128(ty, step);
    (lo..=hi).contains(&v).then(|| value::norm(ty, v as u64))
}

/// Coordinate `d` of linear index `i` in extents `dims` (x fastest).
fn coord(i: u32, dims: [u32; 3], d: u8) -> u32 {
    match d {
        0 => i % dims[0],
        1 => i / dims[0] % dims[1],
        _ => i / (dims[0] * dims[1]),
    }
}

/// A wgmma's shape `m64nNkK` as (N, K): K is 8 for tf32 tiles (`float`), 16 for 16-bit ones.
fn wgmma_shape(n: usize, elem: Scalar) -> (u32, u32) {
    (n as u32, if elem == Scalar::F32 { 8 } else { 16 })
}

/// The report of a use of accumulators a wgmma still owns.
fn wgmma_pending(fc: &FuncCode, local: u32, what: &str) -> String {
    let name = fc.local_names.get(local as usize).map_or("the accumulators", String::as_str);
    format!("`{name}` {what} while a wgmma still writes it: wait for its group with `wgmma_wait` first")
}

/// The report of an operation on an mbarrier that is not valid.
fn mbar_invalid(what: &str) -> String {
    format!("mbarrier {what} before `mbarrier_init`, or after `mbarrier_inval`")
}

/// What a uniformity check is about, for its report.
#[derive(Clone, Copy)]
enum Uniform<'n> {
    /// A branch or loop condition.
    Condition(&'n str),
    /// A variable (its name and type) after unsafe code assigned it.
    Variable(&'n str, Scalar),
    /// An element of a local array (its name, element type and index) after unsafe code.
    Element(&'n str, Scalar, usize),
    /// A value returned from inside unsafe code.
    Returned(Scalar),
    /// Whether a thread left the loop (`break`, the flag holding the iteration it left in)
    /// or the iteration (`continue`, `continued`) by a way out of unsafe code.
    Left { continued: bool },
    /// A value unsafe code passes for a function's parameter.
    Argument { callee: &'n str, param: &'n str, ty: Scalar },
    /// An element of a local array unsafe code passes for a function's pointer parameter.
    ArgElement { callee: &'n str, param: &'n str, array: &'n str, ty: Scalar, index: usize },
    /// The value a call of a function with unsafe code returned, in the caller.
    Result { callee: &'n str, ty: Scalar },
    /// A memory name (a pointer or a view) unsafe code passes for a function's pointer
    /// parameter, compared as [`pointer_key`]s; `block` when the unit spans blocks.
    Pointer { callee: &'n str, param: &'n str, block: bool },
    /// An operand unsafe code passes to an intrinsic that its unit issues as one operation
    /// (a wgmma's tiles): a value of type `ty`, or with `ty` `None` the memory it names or
    /// the element it addresses, compared as [`pointer_key`]s (`block` as for `Pointer`).
    Operand { intrinsic: &'n str, operand: &'n str, ty: Option<Scalar>, block: bool },
    /// An element of a thread-local array unsafe code passes whole for such an operand.
    OperandElement { intrinsic: &'n str, operand: &'n str, array: &'n str, ty: Scalar, index: usize },
}

/// What identifies the memory a pointer argument names, for comparing it between the
/// threads of a unit: the callee sees nothing else of a view (the lowering folds every
/// partition's offset into the pointer), so equal keys are one view. A thread-local array's
/// pointer names the frame it lives in, which differs between warps although each thread
/// means its own copy of the same array: the frame is left out (the copies' elements are
/// compared separately). A shared array's pointer is the same bits in every block although
/// each block has its own shared memory: for a unit that spans blocks, `block` (the block's
/// index, in the field that holds the array's length) tells them apart.
fn pointer_key(bits: u64, block: Option<u32>) -> u64 {
    let p = Ptr::decode(bits);
    match (p.space, block) {
        (Space::Local, _) => Ptr { a: 0, ..p }.encode(),
        (Space::Shared, Some(b)) => Ptr { b: u64::from(b), ..p }.encode(),
        _ => bits,
    }
}

/// The most uniformity checks in progress a table keeps ([`BlockSim::utable`],
/// `Shared::across`). An entry waits for every thread of its unit, and some never come: they
/// left the loop or the function by another way, so their part of the unit never makes that
/// evaluation. A full table is emptied, which loses the comparisons in progress but never
/// compares two different evaluations.
const UNIFORM_TABLE_LIMIT: usize = 1 << 16;

/// Compares the value `lanes` threads (the first `me`) gave at the check evaluation `key`
/// with the first value any thread of the unit gave there; the entry goes once `total`
/// threads have compared. Returns the other thread and its value if they differ.
fn join_check<K: std::hash::Hash + Eq>(
    table: &mut std::collections::HashMap<K, (u64, u64, Thread)>,
    key: K,
    (value, lanes, me): (u64, u64, Thread),
    total: u64,
) -> Option<(Thread, u64)> {
    match table.get_mut(&key) {
        None => {
            if lanes < total {
                if table.len() >= UNIFORM_TABLE_LIMIT {
                    table.clear();
                }
                table.insert(key, (value, lanes, me));
            }
            None
        }
        Some(e) if e.0 != value => Some((e.2, e.0)),
        Some(e) => {
            e.1 += lanes;
            if e.1 >= total {
                table.remove(&key);
            }
            None
        }
    }
}

/// The name of function `func` and of its parameter `index`, for a report.
fn param_name<'s>(s: &'s Shared<'_>, func: u32, index: u32) -> (&'s str, &'s str) {
    let fc = &s.code.funcs[func as usize];
    let param = fc.params.get(index as usize).and_then(|&r| fc.reg_names.get(r as usize)).and_then(|n| n.as_deref());
    (&fc.name, param.unwrap_or("?"))
}

/// The names of an intrinsic and of its operand `index` (its position in the table's
/// signature), for a report.
fn operand_name(intrinsic: prism_types::intrinsics::IntrinsicId, index: u32) -> (&'static str, &'static str) {
    let sig = intrinsic.sig();
    (sig.name, sig.params.get(index as usize).map_or("?", |p| p.name))
}

/// A pointer argument's [`pointer_key`] as a report shows it: the memory and the element
/// it starts at, in elements (`block`: the key carries a shared array's block).
fn show_pointer(s: &Shared<'_>, key: u64, block: bool) -> String {
    let p = Ptr::decode(key);
    match p.space {
        Space::Null => "null".into(),
        Space::Global => {
            let name = s.buffer_names.get(p.a as usize).map(String::as_str).unwrap_or("?");
            format!("{name} + {}", p.offset)
        }
        Space::Shared if block => format!("block {}'s shared array at byte {} + {}", p.b, p.a, p.offset),
        Space::Shared => format!("the shared array at byte {} + {}", p.a, p.offset),
        Space::Local => format!("its own local array + {}", p.offset),
    }
}

/// A condition register's lanes as 0 or 1.
fn bools(cond: &[u64]) -> [u64; 32] {
    std::array::from_fn(|l| u64::from(cond[l] != 0))
}

/// The lanes of register `r`.
#[inline(always)]
fn lanes(regs: &[u64], r: R) -> &[u64] {
    &regs[r as usize * 32..r as usize * 32 + 32]
}

impl<'a> BlockSim<'a> {
    /// Runs fragment `id` for at most `budget` ops, then requeues it if it can still run.
    pub fn run_frag(&mut self, g: &mut GCtx, id: u32, mut budget: u32) {
        let s: &'a Shared<'a> = self.s;
        'outer: loop {
            let Some(mut f) = self.frags[id as usize].take() else { return };
            let w = f.warp as usize;
            let fid = *f.frames.last().expect("a fragment has a frame");
            let mut fr = self.warps[w].frames[fid as usize].take().expect("the current frame is live");
            let func = fr.func;
            let fc: &'a FuncCode = &s.code.funcs[func as usize];
            let tid0 = f.warp * 32;
            macro_rules! put_back {
                () => {{
                    self.warps[w].frames[fid as usize] = Some(fr);
                    self.frags[id as usize] = Some(f);
                }};
            }
            macro_rules! fatal {
                ($kind:expr, $msg:expr, $lane:expr) => {{
                    let span = fc.info[f.pc as usize].span;
                    let thread = self.thread(f.warp, $lane as u32);
                    put_back!();
                    self.fatal(g, Report { kind: $kind, message: $msg, span, thread, other: None, notes: Vec::new() });
                    return;
                }};
            }
            // The element lane `$l` accesses, checked for bounds and recorded for races.
            macro_rules! elem {
                ($ptr:expr, $index:expr, $index_ty:expr, $size:expr, $access:expr, $writes:expr, $what:expr, $l:expr) => {
                    match self.access(
                        g,
                        &fr,
                        Lane { fid, w, l: $l },
                        fc,
                        Site { func, access: $access },
                        Operand { ptr: $ptr, index: $index, index_ty: $index_ty, size: $size, writes: $writes },
                    ) {
                        Ok(loc) => {
                            let how = if $writes { "written" } else { "read" };
                            if !self.wgmma.is_empty()
                                && let Some(msg) = self.wgmma_busy_at((&fr, fid), (w, $l), loc, how)
                            {
                                fatal!(ReportKind::WgmmaPending, msg, $l);
                            }
                            loc
                        }
                        Err(why) => fatal!(ReportKind::OutOfBounds, oob(fc, $access, $what, &why), $l),
                    }
                };
            }
            loop {
                if budget == 0 || self.stopped {
                    put_back!();
                    if !self.stopped {
                        self.runnable.push_back(id);
                    }
                    return;
                }
                budget -= 1;
                self.steps += 1;
                if self.steps > s.cfg.fuel {
                    let (what, span) = super::block::stuck_at(fc, f.pc);
                    let msg = format!(
                        "the block ran more than {} steps (`--fuel`) in {what} without finishing: an endless loop, or a spin-wait whose condition never changes",
                        s.cfg.fuel
                    );
                    let thread = self.thread(f.warp, f.mask.trailing_zeros());
                    put_back!();
                    self.fatal(
                        g,
                        Report {
                            kind: ReportKind::FuelExhausted,
                            message: msg,
                            span,
                            thread,
                            other: None,
                            notes: Vec::new(),
                        },
                    );
                    return;
                }
                let pc = f.pc;
                let mask = f.mask;
                let mut op = &fc.ops[pc as usize];
                if let Op::LocalFma(fu) = op {
                    // The superinstruction counts as the ops it covers, for the scheduler's
                    // budget and for fuel, so it runs only when they would all have run
                    // before the fragment yields or the fuel runs out; it needs the whole
                    // warp and no wgmma in flight (which the loads and the store check).
                    // Otherwise, or when an index differs between lanes or is out of
                    // bounds, its first load runs alone and the others follow one by one.
                    let more = fu.ops_covered() - 1;
                    if mask == FULL
                        && self.wgmma.is_empty()
                        && budget >= more
                        && self.steps + u64::from(more) <= s.cfg.fuel
                        && lanes::local_fma(&mut fr.regs, &mut fr.locals, fu)
                    {
                        budget -= more;
                        self.steps += u64::from(more);
                        f.pc += fu.ops_covered();
                        continue;
                    }
                    op = &fu.first;
                }
                if let Op::Latch(la) = op {
                    // Like the superinstruction above: it counts as the four ops it covers
                    // and runs only when they all would have, on the whole warp, with every
                    // register it reads known to hold one value (so the test sends the whole
                    // warp one way). The jump's unwinding and the test's uniformity check
                    // (at the test's pc, for its span and perspective) run as they would.
                    let more = Latch::OPS_COVERED - 1;
                    if mask == FULL
                        && budget >= more
                        && self.steps + u64::from(more) <= s.cfg.fuel
                        && let Some((step, stepped, holds)) = latch_values(&fr.regs, la)
                    {
                        budget -= more;
                        self.steps += u64::from(more);
                        fr.regs.put_uniform(step, FULL, stepped);
                        fr.regs.put_uniform(la.cond.0, FULL, holds);
                        self.unwind(&mut f, fid, la.head);
                        self.next_iteration(&f, la.exit);
                        f.pc = la.head + 1;
                        let c = la.cond.0 as usize * 32;
                        if la.uniform && !self.condition_uniform(g, &f, &fr.regs[c..c + 32], fc, func, "loop condition")
                        {
                            put_back!();
                            return;
                        }
                        f.pc = if holds != 0 { la.head + 2 } else { la.exit };
                        continue;
                    }
                    op = &la.first;
                }
                if let Op::Scalars(sc) = op {
                    // Like the superinstructions above, it counts as the ops it runs, for
                    // the budget and for fuel, and runs only as many as would have run
                    // before the fragment yields or the fuel runs out (the first is
                    // counted already). Under a partial mask, or when `run_scalars`
                    // does not take the first op, the first op runs alone.
                    if mask == FULL {
                        let room = u64::from(budget).min(s.cfg.fuel - self.steps);
                        let ran = run_scalars(&mut fr.regs, sc, room);
                        if ran > 0 {
                            budget -= ran - 1;
                            self.steps += u64::from(ran - 1);
                            f.pc += ran;
                            continue;
                        }
                    }
                    op = &sc.ops[0];
                }
                let regs = &mut fr.regs;
                match op {
                    Op::Const { dst, bits } => regs.put_uniform(*dst, mask, *bits),
                    Op::Copy { dst, src } => copy_reg(regs, mask, *dst, *src),
                    Op::Moves { moves } => {
                        for &(dst, src) in moves {
                            copy_reg(regs, mask, dst, src);
                        }
                    }
                    // The register ops whose operands each hold one value: one lane
                    // computed ([`uniform_result`], as the fused ops compute them).
                    Op::Un { .. } | Op::Step { .. } | Op::Select { .. } | Op::Cast { .. }
                        if mask == FULL
                            && let Some((dst, v)) = uniform_result(regs, op) =>
                    {
                        regs.put_uniform(dst, FULL, v);
                    }
                    Op::Un { dst, op, ty, a } => {
                        let x = regs.src(*a);
                        let out: [u64; 32] = std::array::from_fn(|l| ops::un(*op, *ty, x[l]));
                        regs.put(*dst, mask, &out);
                    }
                    Op::Bin { dst, op, ty, a, b, b_ty } => {
                        if let Some(l) = bin_lanes(regs, mask, (*op, *ty, *b_ty), (*dst, *a, *b)) {
                            fatal!(ReportKind::DivisionByZero, "integer division by zero".into(), l);
                        }
                    }
                    Op::Step { iv, step, ty } => {
                        let (d, st, ty) = (*iv as usize * 32, *step as usize * 32, *ty);
                        let mut over = None;
                        if ty == Scalar::I32 {
                            // The common case, in a loop the compiler can vectorise: the sum
                            // in 64 bits, and whether any lane left the `int` range.
                            let x = regs.src(*iv);
                            let y = regs.src(*step);
                            let mut out = [0u64; 32];
                            let mut bad = 0u32;
                            for l in 0..32 {
                                let v = i64::from(x[l] as u32 as i32) + i64::from(y[l] as u32 as i32);
                                bad |= u32::from(v != i64::from(v as i32)) << l;
                                out[l] = v as i32 as i64 as u64;
                            }
                            regs.put(*iv, mask, &out);
                            bad &= mask;
                            if bad != 0 {
                                let l = bad.trailing_zeros() as usize;
                                // Undo the lane's step for the report.
                                regs[d + l] =
                                    (regs[d + l] as u32).wrapping_sub(regs[st + l] as u32) as i32 as i64 as u64;
                                over = Some(l);
                            }
                        } else {
                            each(mask, |l| match step_lane(ty, regs[d + l], regs[st + l]) {
                                Some(v) => regs[d + l] = v,
                                None => {
                                    over.get_or_insert(l);
                                }
                            });
                        }
                        if let Some(l) = over {
                            let (v, by) = (to_i128(ty, regs[d + l]), to_i128(ty, regs[st + l]));
                            fatal!(
                                ReportKind::CounterOverflow,
                                format!(
                                    "the loop counter's step from {v} by {by} leaves `{}`'s range (a `range` loop's counter does not wrap)",
                                    ty.name()
                                ),
                                l
                            );
                        }
                    }
                    Op::Fma { dst, ty, a, b, c } => {
                        let xyz = (regs.src(*a), regs.src(*b), regs.src(*c));
                        let out = lanes::fma_lanes(*ty, xyz, mask);
                        regs.put(*dst, mask, &out);
                    }
                    Op::Select { dst, c, a, b } => {
                        let (c, x, y) = (regs.src(*c), regs.src(*a), regs.src(*b));
                        let out: [u64; 32] = std::array::from_fn(|l| if c[l] != 0 { x[l] } else { y[l] });
                        regs.put(*dst, mask, &out);
                    }
                    Op::Cast { dst, from, to, a } => {
                        let x = regs.src(*a);
                        let mut out = [0u64; 32];
                        match (*from, *to) {
                            // The casts `cast_lane` has a formula for, as straight loops.
                            (Scalar::I32, Scalar::I64)
                            | (Scalar::U32, Scalar::U64 | Scalar::I64)
                            | (Scalar::I32, Scalar::F32) => out = x.map(|v| cast_lane(*from, *to, v)),
                            _ => {
                                for l in lanes_of(mask) {
                                    out[l] = value::cast(*from, *to, x[l]);
                                }
                            }
                        }
                        regs.put(*dst, mask, &out);
                    }
                    Op::RelId { dst, code, target } => {
                        let (t, b) = (u64::from(s.block), u64::from(s.grid));
                        let (cs, ts) = (code.threads(t, b).max(1), target.threads(t, b).max(1));
                        let base = u64::from(self.block) * t + u64::from(tid0);
                        let d = *dst as usize * 32;
                        each(mask, |l| regs[d + l] = value::norm(Scalar::I32, ((base + l as u64) % cs) / ts));
                    }
                    Op::Raw { dst, which } => {
                        use prism_types::tir::RawIndex::*;
                        let d = *dst as usize * 32;
                        let block = self.block;
                        // Everything but a thread's own index is the same in every lane
                        // (`block_dim()` is read in the body of most loops): one value.
                        let same = match which {
                            ThreadIdx => {
                                each(mask, |l| regs[d + l] = u64::from(tid0 + l as u32));
                                None
                            }
                            // The coordinates the linear index stands for, `x + X (y + Y z)`.
                            ThreadCoord(c) => {
                                each(mask, |l| regs[d + l] = u64::from(coord(tid0 + l as u32, s.block_dims, *c)));
                                None
                            }
                            BlockIdx => Some(block),
                            BlockDim => Some(s.block),
                            GridDim => Some(s.grid),
                            BlockCoord(c) => Some(coord(block, s.grid_dims, *c)),
                            BlockExtent(c) => Some(s.block_dims[usize::from(*c)]),
                            GridExtent(c) => Some(s.grid_dims[usize::from(*c)]),
                        };
                        if let Some(v) = same {
                            regs.put_uniform(*dst, mask, u64::from(v));
                        }
                    }
                    Op::SharedAddr { dst, offset, len } => {
                        // The dynamic array runs to the end of the block's shared memory,
                        // which the launch sized to hold exactly its items.
                        let len = if *len == prism_ir::ir::DYNAMIC_LEN {
                            s.smem_bytes - (fr.smem_base + offset)
                        } else {
                            *len
                        };
                        let p = Ptr { space: Space::Shared, a: fr.smem_base + offset, b: len, offset: 0 }.encode();
                        regs.put_uniform(*dst, mask, p);
                    }
                    Op::LocalAddr { dst, local } => {
                        let p =
                            Ptr { space: Space::Local, a: u64::from(fid), b: u64::from(*local), offset: 0 }.encode();
                        regs.put_uniform(*dst, mask, p);
                    }
                    Op::PtrAdd { dst, base, off, .. } if mask == FULL && regs.uniform(*base) && regs.uniform(*off) => {
                        let v = lanes::ptr_add(regs.src(*base)[0], regs.src(*off)[0]);
                        regs.put_uniform(*dst, FULL, v);
                    }
                    Op::PtrAdd { dst, base, off, off_ty } => {
                        // `to_i128(off_ty, v) as i64` is `v as i64` for every integer type.
                        let _ = off_ty;
                        let (b, o) = (regs.src(*base), regs.src(*off));
                        let out: [u64; 32] = std::array::from_fn(|l| lanes::ptr_add(b[l], o[l]));
                        regs.put(*dst, mask, &out);
                    }
                    Op::PtrSlot { dst, base, off, len, size } => {
                        let (b, o) = (*regs.src(*base), *regs.src(*off));
                        let mut out = [0u64; 32];
                        for l in lanes_of(mask) {
                            match lanes::ptr_slot(b[l], o[l], *len, *size) {
                                Ok(p) => out[l] = p,
                                Err(why) => fatal!(ReportKind::OutOfBounds, why, l),
                            }
                        }
                        regs.put(*dst, mask, &out);
                    }
                    Op::Load { dst, ty, ptr, index, index_ty, access } => {
                        let (d, p, x) = (*dst as usize * 32, *ptr as usize * 32, *index as usize * 32);
                        let kind = race_kind(fc, *access, false);
                        let checked = kind.filter(|_| s.cfg.checks.races);
                        {
                            // The common case: every lane reads one global buffer, or shared
                            // memory (with race checks, recorded lane by lane as the general
                            // path records them). When a lane is out of bounds, the general
                            // path below says where.
                            let operands = (fr.regs.src(*ptr), fr.regs.src(*index), *index_ty);
                            if let Some((place, at)) =
                                lanes::resolve(s, self.shared.len(), operands, mask, ty.size(), 1, 1)
                            {
                                if let Some(k) = checked {
                                    let global = place.buffer_index();
                                    let site = Site { func, access: *access };
                                    self.race_lanes(g, global, (&at, mask, 1, ty.size()), k, (fid, w), site, true);
                                }
                                let mut out = [0u64; 32];
                                match place {
                                    lanes::Place::Global(buf, _) => lanes::load_global(buf, mask, &at, 0, &mut out),
                                    lanes::Place::Shared => {
                                        self.note_lanes_if_unwritten(
                                            (func, *access, self.array_tag(&fr, *access)),
                                            w,
                                            mask,
                                            &at,
                                            0,
                                            ty.size(),
                                        );
                                        lanes::load_shared(&self.shared, *ty, mask, &at, 0, &mut out)
                                    }
                                }
                                fr.regs.put(*dst, mask, &out);
                                f.pc += 1;
                                continue;
                            }
                            // A thread-local array through a pointer (a library function's
                            // array parameter). Race checks have nothing to record there
                            // (`race` returns at once for thread-local memory), so this runs
                            // with them too; a wgmma in flight sends the lanes the general way,
                            // which checks its accumulators (`wgmma_busy_at`).
                            if let Some((frame, array, at)) =
                                lanes::local_place(operands, mask).filter(|_| self.wgmma.is_empty())
                            {
                                let owner = if frame == fid {
                                    Some(&fr)
                                } else {
                                    self.warps[w].frames.get(frame as usize).and_then(Option::as_ref)
                                };
                                if let Some(arr) = owner.and_then(|o| o.locals.get(array as usize)) {
                                    let n = (arr.len() / 32) as u64;
                                    if lanes_of(mask).all(|l| at[l] < n) {
                                        let mut out = [0u64; 32];
                                        for l in lanes_of(mask) {
                                            out[l] = arr[at[l] as usize * 32 + l];
                                        }
                                        fr.regs.put(*dst, mask, &out);
                                        f.pc += 1;
                                        continue;
                                    }
                                }
                            }
                        }
                        // Lanes reading the element the previous two lanes read (a broadcast)
                        // need no race bookkeeping when ordered alike
                        // (`BlockSim::broadcast_skips`).
                        let mut prev = super::access::Broadcast::default();
                        for l in lanes_of(mask) {
                            let idx = to_i128(*index_ty, fr.regs[x + l]);
                            let loc = match self.locate(&fr, Lane { fid, w, l }, fr.regs[p + l], idx, ty.size()) {
                                Ok(loc) => loc,
                                Err(why) => fatal!(ReportKind::OutOfBounds, oob(fc, *access, "read", &why), l),
                            };
                            if !self.wgmma.is_empty()
                                && let Some(msg) = self.wgmma_busy_at((&fr, fid), (w, l), loc, "read")
                            {
                                fatal!(ReportKind::WgmmaPending, msg, l);
                            }
                            let skip = kind.is_some() && self.broadcast_skips(&mut prev, loc, w, l);
                            if let Some(k) = kind
                                && !skip
                            {
                                self.race(g, loc, k, Lane { fid, w, l }, Site { func, access: *access }, None);
                            }
                            if let Loc::Shared(b) = loc {
                                self.note_if_unwritten(
                                    (func, *access, self.array_tag(&fr, *access)),
                                    (w, l),
                                    b as u64,
                                    ty.size(),
                                );
                            }
                            fr.regs[d + l] = self.read_loc(&fr, Lane { fid, w, l }, loc, *ty);
                        }
                    }
                    Op::Store { ty, ptr, index, index_ty, value, access } => {
                        g.writes += 1;
                        let checked = race_kind(fc, *access, true).filter(|_| s.cfg.checks.races);
                        {
                            let operands = (fr.regs.src(*ptr), fr.regs.src(*index), *index_ty);
                            if let Some((place, at)) =
                                lanes::resolve(s, self.shared.len(), operands, mask, ty.size(), 1, 1)
                            {
                                // Recording first changes no memory the stores depend on.
                                if let Some(k) = checked {
                                    let global = place.buffer_index();
                                    let site = Site { func, access: *access };
                                    self.race_lanes(g, global, (&at, mask, 1, ty.size()), k, (fid, w), site, false);
                                }
                                let vals = fr.regs.src(*value);
                                match place {
                                    lanes::Place::Global(buf, _) => lanes::store_global(buf, mask, &at, 0, vals),
                                    lanes::Place::Shared => {
                                        lanes::store_shared(&mut self.shared, *ty, mask, &at, 0, vals);
                                        let tag = self.array_tag(&fr, *access);
                                        for l in lanes_of(mask) {
                                            self.mark_written(at[l] as usize, ty.size() as usize, tag);
                                        }
                                    }
                                }
                                f.pc += 1;
                                continue;
                            }
                            if let Some((frame, array, at)) =
                                lanes::local_place(operands, mask).filter(|_| self.wgmma.is_empty())
                            {
                                let vals = fr.regs.src(*value);
                                let owner = if frame == fid {
                                    Some(&mut fr.locals)
                                } else {
                                    self.warps[w]
                                        .frames
                                        .get_mut(frame as usize)
                                        .and_then(Option::as_mut)
                                        .map(|o| &mut o.locals)
                                };
                                if let Some(arr) = owner.and_then(|o| o.get_mut(array as usize)) {
                                    let n = (arr.len() / 32) as u64;
                                    if lanes_of(mask).all(|l| at[l] < n) {
                                        for l in lanes_of(mask) {
                                            arr[at[l] as usize * 32 + l] = vals[l];
                                        }
                                        f.pc += 1;
                                        continue;
                                    }
                                }
                            }
                        }
                        let v = *value as usize * 32;
                        let tag = self.array_tag(&fr, *access);
                        for l in lanes_of(mask) {
                            let loc = elem!(*ptr, *index, *index_ty, ty.size(), *access, true, "write", l);
                            let bits = fr.regs[v + l];
                            self.write_loc(&mut fr, Lane { fid, w, l }, loc, *ty, bits, tag);
                        }
                    }
                    Op::LocalDecl { local } => {
                        let arr = &mut fr.locals[*local as usize];
                        if mask == FULL {
                            arr.fill(0);
                        } else {
                            let n = arr.len() / 32;
                            for i in 0..n {
                                each(mask, |l| arr[i * 32 + l] = 0);
                            }
                        }
                    }
                    Op::LocalLoad { dst, local, index, index_ty } => {
                        if !self.wgmma.is_empty()
                            && let Some(l) = self.wgmma_busy(w, mask, fid, *local)
                        {
                            fatal!(ReportKind::WgmmaPending, wgmma_pending(fc, *local, "read"), l);
                        }
                        let arr = &fr.locals[*local as usize];
                        match lanes::local_index((fr.regs.src(*index), fr.regs.uniform(*index)), mask, arr.len() / 32) {
                            Some(Ok(i)) => {
                                let row: &[u64; 32] = arr[i * 32..i * 32 + 32].try_into().expect("32 lanes");
                                fr.regs.put(*dst, mask, row);
                                f.pc += 1;
                                continue;
                            }
                            Some(Err(at)) => {
                                let out: [u64; 32] = std::array::from_fn(|l| {
                                    if mask >> l & 1 != 0 { arr[at[l] as usize * 32 + l] } else { 0 }
                                });
                                fr.regs.put(*dst, mask, &out);
                                f.pc += 1;
                                continue;
                            }
                            None => {}
                        }
                        let (d, x) = (*dst as usize * 32, *index as usize * 32);
                        let n = (arr.len() / 32) as i128;
                        for l in lanes_of(mask) {
                            let i = to_i128(*index_ty, fr.regs[x + l]);
                            if !(0..n).contains(&i) {
                                let msg = local_oob(fc, *local, "read", i, n);
                                fatal!(ReportKind::OutOfBounds, msg, l);
                            }
                            fr.regs[d + l] = arr[i as usize * 32 + l];
                        }
                    }
                    Op::LocalFma(_) => unreachable!("a superinstruction's first op is a load"),
                    Op::Latch(_) => unreachable!("a superinstruction's first op is a step"),
                    Op::Scalars(_) => unreachable!("a superinstruction's first op is a register op"),
                    Op::LocalStore { local, index, index_ty, value } => {
                        if !self.wgmma.is_empty()
                            && let Some(l) = self.wgmma_busy(w, mask, fid, *local)
                        {
                            fatal!(ReportKind::WgmmaPending, wgmma_pending(fc, *local, "written"), l);
                        }
                        let arr = &mut fr.locals[*local as usize];
                        match lanes::local_index((fr.regs.src(*index), fr.regs.uniform(*index)), mask, arr.len() / 32) {
                            Some(Ok(i)) => {
                                let vals = fr.regs.src(*value);
                                let row: &mut [u64; 32] = (&mut arr[i * 32..i * 32 + 32]).try_into().expect("32 lanes");
                                if mask == FULL {
                                    lanes::copy32(row, vals);
                                } else {
                                    for l in lanes_of(mask) {
                                        row[l] = vals[l];
                                    }
                                }
                                f.pc += 1;
                                continue;
                            }
                            Some(Err(at)) => {
                                let vals = fr.regs.src(*value);
                                for l in lanes_of(mask) {
                                    arr[at[l] as usize * 32 + l] = vals[l];
                                }
                                f.pc += 1;
                                continue;
                            }
                            None => {}
                        }
                        let (v, x) = (*value as usize * 32, *index as usize * 32);
                        let n = (fr.locals[*local as usize].len() / 32) as i128;
                        for l in lanes_of(mask) {
                            let i = to_i128(*index_ty, fr.regs[x + l]);
                            if !(0..n).contains(&i) {
                                let msg = local_oob(fc, *local, "write", i, n);
                                fatal!(ReportKind::OutOfBounds, msg, l);
                            }
                            fr.locals[*local as usize][i as usize * 32 + l] = fr.regs[v + l];
                        }
                    }
                    Op::Intr(ins) => match &**ins {
                        Intr::Shfl { .. }
                        | Intr::Vote { .. }
                        | Intr::Reduce { .. }
                        | Intr::Mma { .. }
                        | Intr::LdMatrix { .. } => {
                            let warp = &self.warps[w];
                            if mask == warp.live && warp.exited == 0 && self.colls[w].is_none() {
                                let regs = &fr.regs;
                                let mut read = |r: R| -> intr::Lanes {
                                    let mut out = [0; 32];
                                    out.copy_from_slice(lanes(regs, r));
                                    out
                                };
                                let outs = intr::collective(ins, mask, intr::elect_key(self.s.cfg.seed), &mut read);
                                for (d, vals) in outs {
                                    let d = d as usize * 32;
                                    each(mask, |l| fr.regs[d + l] = vals[l]);
                                }
                            } else {
                                put_back!();
                                self.collective_arrive(g, id);
                                return;
                            }
                        }
                        Intr::Atomic { op, ty, dst, ptr, index, index_ty, value, access } => {
                            g.writes += 1;
                            let tag = self.array_tag(&fr, *access);
                            for l in self.lane_order(g, mask) {
                                let loc = elem!(*ptr, *index, *index_ty, ty.size(), *access, true, "atomic", l);
                                if let Loc::Shared(b) = loc {
                                    let site = (func, *access, tag);
                                    self.note_read_if_unwritten(ReadBy::Update, site, (w, l), b as u64, ty.size());
                                }
                                let v = fr.regs[*value as usize * 32 + l];
                                // A float `atomic_add` on global memory flushes subnormals (FTZ).
                                let ftz =
                                    *op == 0 && *ty == prism_types::ty::Scalar::F32 && matches!(loc, Loc::Global(..));
                                let old = self.update_loc(&mut fr, (Lane { fid, w, l }, tag), loc, *ty, &|old| {
                                    if ftz {
                                        ops::atomic_add_f32_global(old, v)
                                    } else {
                                        ops::atomic_apply(*op, *ty, old, v)
                                    }
                                });
                                fr.regs[*dst as usize * 32 + l] = old;
                                if self.s.cfg.checks.races {
                                    let new = self.read_loc(&fr, Lane { fid, w, l }, loc, *ty);
                                    self.flag_rmw(g, w, l, loc, (comparable(*ty, old), comparable(*ty, new)));
                                }
                            }
                        }
                        Intr::Cas { ty, dst, ptr, index, index_ty, compare, value, access } => {
                            g.writes += 1;
                            let tag = self.array_tag(&fr, *access);
                            for l in self.lane_order(g, mask) {
                                let loc = elem!(*ptr, *index, *index_ty, ty.size(), *access, true, "atomic", l);
                                if let Loc::Shared(b) = loc {
                                    let site = (func, *access, tag);
                                    self.note_read_if_unwritten(ReadBy::Update, site, (w, l), b as u64, ty.size());
                                }
                                let (c, v) = (fr.regs[*compare as usize * 32 + l], fr.regs[*value as usize * 32 + l]);
                                let old = self.update_loc(&mut fr, (Lane { fid, w, l }, tag), loc, *ty, &|old| {
                                    if old == c { v } else { old }
                                });
                                fr.regs[*dst as usize * 32 + l] = old;
                                // A failed compare-and-swap writes nothing: a load.
                                if self.s.cfg.checks.races {
                                    let new = self.read_loc(&fr, Lane { fid, w, l }, loc, *ty);
                                    self.flag_rmw(g, w, l, loc, (comparable(*ty, old), comparable(*ty, new)));
                                }
                            }
                        }
                        Intr::AtomicLoad { ty, dst, ptr, index, index_ty, access } => {
                            for l in lanes_of(mask) {
                                let loc = elem!(*ptr, *index, *index_ty, ty.size(), *access, false, "read", l);
                                if let Loc::Shared(b) = loc {
                                    let site = (func, *access, self.array_tag(&fr, *access));
                                    self.note_read_if_unwritten(ReadBy::AtomicLoad, site, (w, l), b as u64, ty.size());
                                }
                                fr.regs[*dst as usize * 32 + l] = self.read_loc(&fr, Lane { fid, w, l }, loc, *ty);
                                self.flag_load(g, w, l, loc);
                            }
                            // A thread polling memory lets the others run: spin-waits make progress.
                            budget = 0;
                            self.polled = true;
                        }
                        Intr::AtomicStore { ty, ptr, index, index_ty, value, access } => {
                            g.writes += 1;
                            let tag = self.array_tag(&fr, *access);
                            for l in lanes_of(mask) {
                                let loc = elem!(*ptr, *index, *index_ty, ty.size(), *access, true, "write", l);
                                let bits = value::norm(*ty, fr.regs[*value as usize * 32 + l]);
                                let old = if self.s.cfg.checks.races {
                                    self.read_loc(&fr, Lane { fid, w, l }, loc, *ty)
                                } else {
                                    0
                                };
                                self.write_loc(&mut fr, Lane { fid, w, l }, loc, *ty, bits, tag);
                                self.flag_store(g, w, l, loc, (comparable(*ty, old), comparable(*ty, bits)));
                            }
                        }
                        Intr::LdRows { ptr, index, index_ty, rows, lanes, access } => {
                            let kind = race_kind(fc, *access, false);
                            let elem = fc.mems[fc.accesses[*access as usize].mem.index()].elem;
                            for l in lanes_of(mask & *lanes) {
                                let at = Lane { fid, w, l };
                                let i = to_i128(*index_ty, fr.regs[*index as usize * 32 + l]);
                                let p = fr.regs[*ptr as usize * 32 + l];
                                // 16 bytes: 8 16-bit or 4 32-bit elements, packed into
                                // 32-bit words in memory order (the lower element lower).
                                let size = elem.size();
                                let mut words = [0u64; 4];
                                for k in 0..(16 / size) as usize {
                                    let loc = match self.locate(&fr, at, p, i + k as i128, size) {
                                        Ok(loc) => loc,
                                        Err(why) => fatal!(
                                            ReportKind::OutOfBounds,
                                            oob(fc, *access, "ldmatrix row read", &why),
                                            l
                                        ),
                                    };
                                    if let Some(kind) = kind {
                                        self.race(g, loc, kind, at, Site { func, access: *access }, None);
                                    }
                                    if let Loc::Shared(b) = loc {
                                        let site = (func, *access, self.array_tag(&fr, *access));
                                        self.note_read_if_unwritten(ReadBy::Ldmatrix, site, (w, l), b as u64, size);
                                    }
                                    let bits = self.read_loc(&fr, at, loc, elem) & ((1u64 << (8 * size)) - 1);
                                    let bit = k * 8 * size as usize;
                                    words[bit / 32] |= bits << (bit % 32);
                                }
                                // The hardware reads each row as one 16-byte access.
                                if let Some(why) = BlockSim::misaligned(p, i, size, 16) {
                                    fatal!(
                                        ReportKind::Misaligned,
                                        misaligned(fc, *access, "ldmatrix row read", &why),
                                        l
                                    );
                                }
                                for (k, r) in rows.iter().enumerate() {
                                    fr.regs[*r as usize * 32 + l] = words[k];
                                }
                            }
                        }
                        Intr::LoadVec { ty, dsts, ptr, index, index_ty, access }
                        | Intr::StoreVec { ty, values: dsts, ptr, index, index_ty, access } => {
                            let store = matches!(&**ins, Intr::StoreVec { .. });
                            if store {
                                g.writes += 1;
                            }
                            let size = ty.size();
                            let bytes = size * dsts.len() as u64;
                            let kind = race_kind(fc, *access, store);
                            {
                                let operands = (fr.regs.src(*ptr), fr.regs.src(*index), *index_ty);
                                let count = dsts.len() as u64;
                                if let Some((place, at)) =
                                    lanes::resolve(s, self.shared.len(), operands, mask, size, count, bytes)
                                {
                                    // Every lane in bounds and aligned: record them for race
                                    // checks (lane by lane, element by element, as the general
                                    // path does), then access memory.
                                    if let Some(k) = kind.filter(|_| s.cfg.checks.races) {
                                        let global = place.buffer_index();
                                        let site = Site { func, access: *access };
                                        self.race_lanes(g, global, (&at, mask, count, size), k, (fid, w), site, false);
                                    }
                                    if store {
                                        // Lane by lane, as the general path writes: where
                                        // lanes' vectors overlap, the last lane's value stays.
                                        for l in lanes_of(mask) {
                                            for (k, &d) in dsts.iter().enumerate() {
                                                let bits = fr.regs[d as usize * 32 + l];
                                                match &place {
                                                    lanes::Place::Global(buf, _) => buf.store(at[l] as usize + k, bits),
                                                    lanes::Place::Shared => {
                                                        let b = (at[l] + k as u64 * size) as usize;
                                                        lanes::write_shared(&mut self.shared, size, b, bits);
                                                        self.mark_written(
                                                            b,
                                                            size as usize,
                                                            self.array_tag(&fr, *access),
                                                        );
                                                    }
                                                }
                                            }
                                        }
                                    } else {
                                        for (k, &d) in dsts.iter().enumerate() {
                                            let k = k as u64;
                                            let mut out = [0u64; 32];
                                            match &place {
                                                lanes::Place::Global(buf, _) => {
                                                    lanes::load_global(buf, mask, &at, k, &mut out)
                                                }
                                                lanes::Place::Shared => {
                                                    self.note_lanes_if_unwritten(
                                                        (func, *access, self.array_tag(&fr, *access)),
                                                        w,
                                                        mask,
                                                        &at,
                                                        k * size,
                                                        size,
                                                    );
                                                    lanes::load_shared(&self.shared, *ty, mask, &at, k * size, &mut out)
                                                }
                                            }
                                            fr.regs.put(d, mask, &out);
                                        }
                                    }
                                    f.pc += 1;
                                    continue;
                                }
                            }
                            let tag = self.array_tag(&fr, *access);
                            for l in lanes_of(mask) {
                                let at = Lane { fid, w, l };
                                let i = to_i128(*index_ty, fr.regs[*index as usize * 32 + l]);
                                let p = fr.regs[*ptr as usize * 32 + l];
                                // Bounds first: an access past the end is that, whatever its alignment.
                                let mut locs = [None; 16];
                                for (k, slot) in locs.iter_mut().enumerate().take(dsts.len()) {
                                    match self.locate(&fr, at, p, i + k as i128, size) {
                                        Ok(loc) => *slot = Some(loc),
                                        Err(why) => {
                                            let what = if store { "vector write" } else { "vector read" };
                                            fatal!(ReportKind::OutOfBounds, oob(fc, *access, what, &why), l)
                                        }
                                    }
                                }
                                if !self.wgmma.is_empty() {
                                    let how = if store { "written" } else { "read" };
                                    for loc in locs.iter().take(dsts.len()).flatten() {
                                        if let Some(msg) = self.wgmma_busy_at((&fr, fid), (w, l), *loc, how) {
                                            fatal!(ReportKind::WgmmaPending, msg, l);
                                        }
                                    }
                                }
                                if let Some(why) = BlockSim::misaligned(p, i, size, bytes) {
                                    let what = if store { "vector write" } else { "vector read" };
                                    fatal!(ReportKind::Misaligned, misaligned(fc, *access, what, &why), l);
                                }
                                for (k, &d) in dsts.iter().enumerate() {
                                    let loc = locs[k].expect("located above");
                                    if let Some(kind) = kind {
                                        self.race(g, loc, kind, at, Site { func, access: *access }, None);
                                    }
                                    if store {
                                        let bits = fr.regs[d as usize * 32 + l];
                                        self.write_loc(&mut fr, at, loc, *ty, bits, tag);
                                    } else {
                                        if let Loc::Shared(b) = loc {
                                            self.note_if_unwritten((func, *access, tag), (w, l), b as u64, size);
                                        }
                                        fr.regs[d as usize * 32 + l] = self.read_loc(&fr, at, loc, *ty);
                                    }
                                }
                            }
                        }
                        Intr::CpAsync {
                            elem,
                            dst,
                            dst_index,
                            dst_index_ty,
                            src,
                            src_index,
                            src_index_ty,
                            bytes,
                            src_bytes,
                            access,
                            src_access,
                        } => {
                            let size = elem.size();
                            for l in lanes_of(mask) {
                                let n = fr.regs[*bytes as usize * 32 + l];
                                if !matches!(n, 4 | 8 | 16) || !n.is_multiple_of(size) {
                                    let msg = format!("`cp_async` copies 4, 8 or 16 bytes of whole elements, not {n}");
                                    fatal!(ReportKind::OutOfBounds, msg, l);
                                }
                                let count = (n / size) as i128;
                                // `cp_async_zfill` reads its first `src_bytes` bytes and
                                // zeroes the rest (PTX's `src-size`): only the bytes read
                                // must lie in the source, and they are whole elements here.
                                let read = match src_bytes {
                                    None => count,
                                    Some(r) => {
                                        let s = fr.regs[*r as usize * 32 + l] as u32 as i32;
                                        if s < 0 || s as u64 > n || !(s as u64).is_multiple_of(size) {
                                            let msg = format!(
                                                "`cp_async_zfill` reads 0 to {n} bytes of whole {}-byte elements from its source, not {s}",
                                                size
                                            );
                                            fatal!(ReportKind::OutOfBounds, msg, l);
                                        }
                                        i128::from(s) / size as i128
                                    }
                                };
                                let di = to_i128(*dst_index_ty, fr.regs[*dst_index as usize * 32 + l]);
                                let si = to_i128(*src_index_ty, fr.regs[*src_index as usize * 32 + l]);
                                let (dp, sp) = (fr.regs[*dst as usize * 32 + l], fr.regs[*src as usize * 32 + l]);
                                // cp.async moves its bytes as one aligned unit at both ends.
                                if let Some(why) = BlockSim::misaligned(dp, di, size, n) {
                                    fatal!(
                                        ReportKind::Misaligned,
                                        misaligned(fc, *access, "asynchronous copy's write", &why),
                                        l
                                    );
                                }
                                if let Some(why) = BlockSim::misaligned(sp, si, size, n) {
                                    let msg = misaligned(fc, *src_access, "asynchronous copy's read", &why);
                                    fatal!(ReportKind::Misaligned, msg, l);
                                }
                                let mut vals = [0u64; 16];
                                let mut first = None;
                                for k in 0..count {
                                    let dloc = match self.locate(&fr, Lane { fid, w, l }, dp, di + k, size) {
                                        Ok(loc) => loc,
                                        Err(why) => fatal!(
                                            ReportKind::OutOfBounds,
                                            oob(fc, *access, "asynchronous copy's write", &why),
                                            l
                                        ),
                                    };
                                    first.get_or_insert(dloc);
                                    if k >= read {
                                        continue;
                                    }
                                    let sloc = match self.locate(&fr, Lane { fid, w, l }, sp, si + k, size) {
                                        Ok(loc) => loc,
                                        Err(why) => {
                                            fatal!(
                                                ReportKind::OutOfBounds,
                                                oob(fc, *src_access, "asynchronous copy's read", &why),
                                                l
                                            )
                                        }
                                    };
                                    if let Some(kind) = race_kind(fc, *src_access, false) {
                                        self.race(
                                            g,
                                            sloc,
                                            kind,
                                            Lane { fid, w, l },
                                            Site { func, access: *src_access },
                                            None,
                                        );
                                    }
                                    if let Loc::Shared(b) = sloc {
                                        let site = (func, *src_access, self.array_tag(&fr, *src_access));
                                        self.note_read_if_unwritten(ReadBy::CopySource, site, (w, l), b as u64, size);
                                    }
                                    vals[k as usize] = self.read_loc(&fr, Lane { fid, w, l }, sloc, *elem);
                                }
                                let dst = first.expect("at least one element");
                                // A copy that reads nothing has no source location (its
                                // address may lie anywhere); the destination stands in.
                                let src = if read == 0 {
                                    dst
                                } else {
                                    match self.locate(&fr, Lane { fid, w, l }, sp, si, size) {
                                        Ok(loc) => loc,
                                        Err(why) => fatal!(
                                            ReportKind::OutOfBounds,
                                            oob(fc, *src_access, "asynchronous copy's read", &why),
                                            l
                                        ),
                                    }
                                };
                                self.copy_started(
                                    g,
                                    src,
                                    read as usize,
                                    size,
                                    Lane { fid, w, l },
                                    Site { func, access: *src_access },
                                );
                                if race_kind(fc, *access, true).is_some() {
                                    self.dest_started(
                                        g,
                                        dst,
                                        count as usize,
                                        elem.size(),
                                        Lane { fid, w, l },
                                        Site { func, access: *access },
                                    );
                                }
                                let tag = self.array_tag(&fr, *access);
                                self.pending[tid0 as usize + l].push(PendingCopy {
                                    dst,
                                    count: count as u8,
                                    elem: *elem,
                                    vals,
                                    func,
                                    access: *access,
                                    tag,
                                    src,
                                    src_count: read as u8,
                                    group: u32::MAX,
                                });
                            }
                        }
                        Intr::Tma { ty, map, dst, dst_index, dst_index_ty, coords, access, now, map_access } => {
                            let size = ty.elem.size();
                            let boxd = ty.box_dims();
                            let elems: u64 = boxd.iter().map(|&d| u64::from(d)).product();
                            let per_chunk = (16 / size) as usize;
                            for l in lanes_of(mask) {
                                let at = Lane { fid, w, l };
                                let dp = fr.regs[*dst as usize * 32 + l];
                                let di = to_i128(*dst_index_ty, fr.regs[*dst_index as usize * 32 + l]);
                                if Ptr::decode(dp).space != Space::Shared {
                                    let msg = format!("`tma_load_{}d` copies into shared memory only", ty.rank);
                                    fatal!(ReportKind::OutOfBounds, msg, l);
                                }
                                // The copy engine writes the box whole, so the destination
                                // starts where the swizzle pattern repeats (128 bytes without
                                // one): only there is the layout the one Prism promises.
                                if let Some(why) = BlockSim::misaligned(dp, di, size, ty.dst_align()) {
                                    fatal!(
                                        ReportKind::Misaligned,
                                        misaligned(fc, *access, "TMA copy's write", &why),
                                        l
                                    );
                                }
                                for k in [0, elems as i128 - 1] {
                                    if let Err(why) = self.locate(&fr, at, dp, di + k, size) {
                                        let msg = format!(
                                            "{} (the box of {} elements does not fit)",
                                            oob(fc, *access, "TMA copy's write", &why),
                                            elems
                                        );
                                        fatal!(ReportKind::OutOfBounds, msg, l);
                                    }
                                }
                                let src = Ptr::decode(fr.regs[*map as usize * 32 + l]);
                                let buf = src.a as usize;
                                let dims = s.tensor_dims[buf];
                                // Box coordinates are innermost first, as PTX takes them.
                                let start: Vec<i64> = (0..boxd.len())
                                    .map(|d| {
                                        let r = coords[boxd.len() - 1 - d];
                                        i64::from(fr.regs[r as usize * 32 + l] as u32 as i32)
                                    })
                                    .collect();
                                let mut index = vec![0u64; boxd.len()];
                                for chunk in 0..(elems as usize / per_chunk) {
                                    let mut vals = [0u64; 16];
                                    for (v, slot) in vals.iter_mut().enumerate().take(per_chunk) {
                                        let e = (chunk * per_chunk + v) as u64;
                                        let mut rest = e;
                                        for d in (0..boxd.len()).rev() {
                                            index[d] = rest % u64::from(boxd[d]);
                                            rest /= u64::from(boxd[d]);
                                        }
                                        // Elements outside the array read as zero.
                                        let mut linear = 0u64;
                                        let mut inside = true;
                                        for d in 0..boxd.len() {
                                            let c = start[d] + index[d] as i64;
                                            inside &= c >= 0 && (c as u64) < dims[d];
                                            linear = linear.wrapping_mul(dims[d]).wrapping_add(c as u64);
                                        }
                                        if inside {
                                            // The array may be written too (TMA stores): the
                                            // read is checked like any other.
                                            let loc = Loc::Global(buf, linear as usize);
                                            if let Some(kind) = race_kind(fc, *map_access, false) {
                                                self.race(g, loc, kind, at, Site { func, access: *map_access }, None);
                                            }
                                            *slot = s.buffers[buf].load(linear as usize);
                                        }
                                    }
                                    let off = prism_types::ty::swizzle_offset(chunk as u64 * 16, ty.swizzle);
                                    let dloc = match self.locate(&fr, at, dp, di + i128::from(off / size), size) {
                                        Ok(loc) => loc,
                                        Err(why) => fatal!(
                                            ReportKind::OutOfBounds,
                                            oob(fc, *access, "TMA copy's write", &why),
                                            l
                                        ),
                                    };
                                    if race_kind(fc, *access, true).is_some() {
                                        self.dest_started(g, dloc, per_chunk, size, at, Site { func, access: *access });
                                    }
                                    let copy = PendingCopy {
                                        dst: dloc,
                                        count: per_chunk as u8,
                                        elem: ty.elem,
                                        vals,
                                        func,
                                        access: *access,
                                        tag: self.array_tag(&fr, *access),
                                        // The source cannot change: nothing in a kernel
                                        // writes a tensor map's array.
                                        src: dloc,
                                        src_count: 0,
                                        group: u32::MAX,
                                    };
                                    if *now {
                                        // Completing on an mbarrier, the copy is in flight
                                        // until the phase its `complete_tx` (the next
                                        // operation) belongs to completes, and lands then
                                        // (`complete_mbar_phase`). Until 2026-11-29 it landed
                                        // here, as this thread's write, and a read that a
                                        // barrier ordered after the issue but that did not
                                        // wait for the phase ran clean.
                                        self.mbar_issued.entry(tid0 + l as u32).or_default().push(copy);
                                    } else {
                                        self.pending[tid0 as usize + l].push(copy);
                                    }
                                }
                            }
                        }
                        Intr::TmaStore { ty, map, src, src_index, src_index_ty, coords, map_access, access } => {
                            let size = ty.elem.size();
                            let boxd = ty.box_dims();
                            let elems: u64 = boxd.iter().map(|&d| u64::from(d)).product();
                            for l in lanes_of(mask) {
                                let at = Lane { fid, w, l };
                                let sp = fr.regs[*src as usize * 32 + l];
                                let si = to_i128(*src_index_ty, fr.regs[*src_index as usize * 32 + l]);
                                if Ptr::decode(sp).space != Space::Shared {
                                    let msg = format!("`tma_store_{}d` stores from shared memory only", ty.rank);
                                    fatal!(ReportKind::OutOfBounds, msg, l);
                                }
                                if let Some(why) = BlockSim::misaligned(sp, si, size, ty.dst_align()) {
                                    fatal!(
                                        ReportKind::Misaligned,
                                        misaligned(fc, *access, "TMA store's read", &why),
                                        l
                                    );
                                }
                                let dst = Ptr::decode(fr.regs[*map as usize * 32 + l]);
                                let buf = dst.a as usize;
                                let dims = s.tensor_dims[buf];
                                let start: Vec<i64> = (0..boxd.len())
                                    .map(|d| {
                                        i64::from(fr.regs[coords[boxd.len() - 1 - d] as usize * 32 + l] as u32 as i32)
                                    })
                                    .collect();
                                let mut index = vec![0u64; boxd.len()];
                                for e in 0..elems {
                                    let mut rest = e;
                                    for d in (0..boxd.len()).rev() {
                                        index[d] = rest % u64::from(boxd[d]);
                                        rest /= u64::from(boxd[d]);
                                    }
                                    // The element's place in the box as a load lays it out.
                                    let off = prism_types::ty::swizzle_offset(e * size, ty.swizzle);
                                    let sloc = match self.locate(&fr, at, sp, si + i128::from(off / size), size) {
                                        Ok(loc) => loc,
                                        Err(why) => {
                                            let msg = format!(
                                                "{} (the box of {elems} elements does not fit)",
                                                oob(fc, *access, "TMA store's read", &why)
                                            );
                                            fatal!(ReportKind::OutOfBounds, msg, l)
                                        }
                                    };
                                    if let Some(kind) = race_kind(fc, *access, false) {
                                        self.race(g, sloc, kind, at, Site { func, access: *access }, None);
                                    }
                                    if let Loc::Shared(b) = sloc {
                                        let site = (func, *access, self.array_tag(&fr, *access));
                                        self.note_read_if_unwritten(ReadBy::TmaStore, site, (w, l), b as u64, size);
                                    }
                                    let bits = self.read_loc(&fr, at, sloc, ty.elem);
                                    // Elements outside the array are not written.
                                    let mut linear = 0u64;
                                    let mut inside = true;
                                    for d in 0..boxd.len() {
                                        let c = start[d] + index[d] as i64;
                                        inside &= c >= 0 && (c as u64) < dims[d];
                                        linear = linear.wrapping_mul(dims[d]).wrapping_add(c as u64);
                                    }
                                    if inside {
                                        let loc = Loc::Global(buf, linear as usize);
                                        if let Some(kind) = race_kind(fc, *map_access, true) {
                                            self.race(g, loc, kind, at, Site { func, access: *map_access }, None);
                                        }
                                        let tag = self.array_tag(&fr, *map_access);
                                        self.write_loc(&mut fr, at, loc, ty.elem, bits, tag);
                                    }
                                }
                            }
                        }
                        Intr::Fence { device } => {
                            for l in lanes_of(mask) {
                                self.fence(w, l, *device);
                            }
                        }
                        Intr::Wgmma { n, elem, acc, a, b, layout, accesses } => {
                            // D fragment (CUTLASS's CLayout_64xN, the PTX ISA's figure): warp
                            // w of the warpgroup holds rows 16w + l/4 (+ 8), columns
                            // 8j + 2(l % 4) (+ 1), register 4j + 2 * (row half) + column.
                            // Each row of a slice of A or B is 32 bytes: K = 16 two-byte
                            // elements (bf16, f16) or 8 tf32 ones (read from `float`s).
                            let (n, wi) = (*n as usize, w % 4);
                            let esz = elem.size() as usize;
                            let kk = 32 / esz;
                            let kacc = race_kind(fc, accesses[0], true);
                            // The warp's rows of A and all of B, read once when its lanes
                            // pass the same operands (sim/wgmma.rs); else each lane reads its
                            // own into `mine`, and reports what is wrong.
                            let warp = self.wgmma_warp_tiles(&fr, mask, (*a, *b), *layout, *elem, n, wi).map(|tiles| {
                                Arc::new(WarpRead { tiles, elem: *elem, access: [accesses[1], accesses[2]] })
                            });
                            let mut mine = if warp.is_none() { Some(Tiles::new(n)) } else { None };
                            // Whether some element the warp read was never written (then its
                            // lanes note their reads one by one, to name the first).
                            let unwritten = !self.swritten.is_empty()
                                && warp.as_ref().is_none_or(|x| {
                                    // A's and B's accesses name one array each. Their tags
                                    // are compared over each tile's byte range at once;
                                    // element by element only when a byte there was last
                                    // written as another array's (or never), with tag 0
                                    // (no comparison) otherwise.
                                    let tags = [self.array_tag(&fr, accesses[1]), self.array_tag(&fr, accesses[2])];
                                    let ranges = x.ranges();
                                    let exact = [0, 1].map(|k| !self.tagged_all(ranges[k], tags[k]));
                                    x.elems().any(|(e, _, access)| {
                                        let k = usize::from(access != accesses[1]);
                                        self.unwritten(e.byte as usize, esz, if exact[k] { tags[k] } else { 0 })
                                    })
                                });
                            // Before a lane stops the block, the issue checks that lane by lane
                            // would have made for the lanes before it (a warp read checks them
                            // all after the loop below; review R28 F1).
                            macro_rules! issue_checks_before {
                                ($l:expr) => {
                                    if let Some(x) = &warp {
                                        self.warp_read_issue_lanes(g, (fid, w, func), mask & ((1u32 << $l) - 1), x);
                                    }
                                };
                            }
                            for l in lanes_of(mask) {
                                let at = Lane { fid, w, l };
                                if let Some(t) = mine.as_mut() {
                                    // The tile starts, checked as the warp's read checks them.
                                    let (a_at, b_at): (TileAt, TileAt) = match *layout {
                                        WgmmaLayout::Interleaved => {
                                            for (p, which) in [(*a, "A"), (*b, "B")] {
                                                if let Some(why) =
                                                    interleaved_start(fr.regs[p as usize * 32 + l], esz, which)
                                                {
                                                    fatal!(ReportKind::Misaligned, why, l)
                                                }
                                            }
                                            (None, None)
                                        }
                                        WgmmaLayout::Swizzled { span, a_index, a_ty, b_index, b_ty } => {
                                            let at = |p: R, i: R, ty: Scalar| {
                                                let i = to_i128(ty, fr.regs[i as usize * 32 + l]);
                                                swizzled_start(fr.regs[p as usize * 32 + l], i, esz, span)
                                            };
                                            match (at(*a, a_index, a_ty), at(*b, b_index, b_ty)) {
                                                (Ok(x), Ok(y)) => (Some((x, span)), Some((y, span))),
                                                (Err((kind, why)), _) => fatal!(kind, format!("wgmma A: {why}"), l),
                                                (_, Err((kind, why))) => fatal!(kind, format!("wgmma B: {why}"), l),
                                            }
                                        }
                                    };
                                    let read =
                                        |this: &Self, p: R, tile: TileAt, row: usize, out: &mut [TileElem; 16]| {
                                            let bits = fr.regs[p as usize * 32 + l];
                                            for (k, x) in out.iter_mut().enumerate().take(kk) {
                                                let loc =
                                                    this.locate(&fr, at, bits, place(tile, esz, row, k), esz as u64)?;
                                                let v = this.read_loc(&fr, at, loc, *elem);
                                                let Loc::Shared(byte) = loc else {
                                                    unreachable!("tile starts are shared")
                                                };
                                                *x = TileElem {
                                                    byte: byte as u32,
                                                    bits: v as u32,
                                                    val: operand_value(*elem, v),
                                                };
                                            }
                                            Ok::<(), String>(())
                                        };
                                    for h in 0..2 {
                                        let r = l / 4 + 8 * h;
                                        if let Err(why) = read(self, *a, a_at, 16 * wi + r, &mut t.a[r]) {
                                            fatal!(ReportKind::OutOfBounds, format!("wgmma A read: {why}"), l)
                                        }
                                    }
                                    for q in 0..n / 4 {
                                        let c = lane_col(l, q);
                                        if let Err(why) = read(self, *b, b_at, c, &mut t.b[c]) {
                                            fatal!(ReportKind::OutOfBounds, format!("wgmma B read: {why}"), l)
                                        }
                                    }
                                }
                                let t = warp.as_ref().map(|x| &x.tiles).or(mine.as_ref()).expect("one of the two");
                                // The lane's reads, in the order it makes them: its two rows of
                                // A, then its columns of B, listed when race checks need them
                                // (they are recorded at the wait that completes this wgmma:
                                // the tensor cores may read until then) or when the lane read
                                // them itself (they are compared there); the warp's read
                                // stands for them otherwise. In a list the waits hand back: a
                                // lane's list is some kilobytes, and allocating it anew for
                                // every wgmma of every lane (growing it one push at a time)
                                // took a sixth of a wgmma gemm's checked run, in the allocator
                                // and page faults.
                                let list = warp.is_none();
                                let mut reads: Vec<(Loc, u64, u32)> = if list {
                                    let mut v = self.spare_reads.pop().unwrap_or_default();
                                    v.reserve((2 + n / 4) * kk);
                                    v
                                } else {
                                    Vec::new()
                                };
                                if list || unwritten {
                                    let rows = (0..2).map(|h| (&t.a[l / 4 + 8 * h], ReadBy::WgmmaA, accesses[1]));
                                    let cols = (0..n / 4).map(|q| (&t.b[lane_col(l, q)], ReadBy::WgmmaB, accesses[2]));
                                    for (x, by, access) in rows.chain(cols) {
                                        for e in &x[..kk] {
                                            self.note_read_if_unwritten(
                                                by,
                                                (func, access, self.array_tag(&fr, access)),
                                                (w, l),
                                                u64::from(e.byte),
                                                esz as u64,
                                            );
                                            if list {
                                                reads.push((Loc::Shared(e.byte as usize), u64::from(e.bits), access));
                                            }
                                        }
                                    }
                                }
                                // The accumulators: registers `4 j + 2 h + c` of a thread-local
                                // array, bounds-checked at both ends (they are consecutive);
                                // out of bounds, the first register out in the order they
                                // are written is reported.
                                let regs = (0..n / 8)
                                    .flat_map(|j| (0..2).flat_map(move |c| (0..2).map(move |h| 4 * j + 2 * h + c)));
                                let accs = fr.regs[*acc as usize * 32 + l];
                                let ends = (
                                    self.locate(&fr, at, accs, 0, 4),
                                    self.locate(&fr, at, accs, (n / 2 - 1) as i128, 4),
                                );
                                let first = match ends {
                                    (Ok(first), Ok(_)) => first,
                                    _ => {
                                        // The registers before the first one out of bounds
                                        // were each checked for races, as one by one (review
                                        // R29: memory that is not thread-local, through a
                                        // pointer parameter, may be written by others).
                                        let mut why = String::new();
                                        for reg in regs.clone() {
                                            match self.locate(&fr, at, accs, reg as i128, 4) {
                                                Ok(loc) => {
                                                    if let Some(kind) = kacc
                                                        && !matches!(loc, Loc::Local(..))
                                                    {
                                                        let site = Site { func, access: accesses[0] };
                                                        self.race(g, loc, kind, at, site, None);
                                                    }
                                                }
                                                Err(e) => {
                                                    why = e;
                                                    break;
                                                }
                                            }
                                        }
                                        issue_checks_before!(l);
                                        fatal!(ReportKind::OutOfBounds, format!("wgmma accumulator: {why}"), l)
                                    }
                                };
                                // Only a wgmma of the same shape may take accumulators that
                                // another still writes (PTX ISA, `wgmma.fence`: the
                                // same-shape exception); any other use waits first.
                                let shape = wgmma_shape(n, *elem);
                                if let Loc::Local(owner, array, _) = first
                                    && let Some((open, groups)) = self.wgmma.get(&((w * 32 + l) as u32))
                                    && let Some(other) = open
                                        .iter()
                                        .chain(groups.iter().flatten())
                                        .find(|p| p.acc == (owner, array) && p.shape != shape)
                                {
                                    let msg = format!(
                                        "{} (a wgmma of shape m64n{}k{} given them while one of m64n{}k{} is in flight: only wgmmas of the same shape may share accumulators before the wait)",
                                        self.wgmma_busy_at((&fr, fid), (w, l), first, "written").unwrap_or_default(),
                                        shape.0,
                                        shape.1,
                                        other.shape.0,
                                        other.shape.1,
                                    );
                                    issue_checks_before!(l);
                                    fatal!(ReportKind::WgmmaPending, msg, l)
                                }
                                let reg_loc = |reg: usize| match first {
                                    Loc::Local(f, arr, i) => Loc::Local(f, arr, i + reg),
                                    Loc::Shared(b) => Loc::Shared(b + 4 * reg),
                                    Loc::Global(buf, i) => Loc::Global(buf, i + reg),
                                };
                                let acc_tag = self.array_tag(&fr, accesses[0]);
                                for reg in regs {
                                    // Register 4 j + 2 h + c: row h of the lane's two, column
                                    // 8 j + 2 (l % 4) + c.
                                    let (j, h, c) = (reg / 4, reg / 2 % 2, reg % 2);
                                    let row = &t.a[l / 4 + 8 * h];
                                    let bcol = &t.b[8 * j + 2 * (l % 4) + c];
                                    let loc = reg_loc(reg);
                                    // (A thread-local accumulator takes part in no race.)
                                    if let Some(kind) = kacc
                                        && !matches!(loc, Loc::Local(..))
                                    {
                                        self.race(g, loc, kind, at, Site { func, access: accesses[0] }, None);
                                    }
                                    let old = f32::from_bits(self.read_loc(&fr, at, loc, Scalar::F32) as u32);
                                    // Products of bf16, f16 and tf32 values are exact in f64;
                                    // the sum is rounded to f32 once, as `mma` is, and a NaN is
                                    // the GPU's arithmetic NaN (review R23).
                                    let sum = row[..kk]
                                        .iter()
                                        .zip(&bcol[..kk])
                                        .fold(f64::from(old), |s, (x, y)| s + x.val * y.val);
                                    let bits = prism_types::value::f32_result(sum as f32);
                                    self.write_loc(&mut fr, at, loc, Scalar::F32, bits, acc_tag);
                                }
                                // The accumulators stay the hardware's until `wgmma_wait`. They
                                // are registers: the checker takes a thread-local array, directly
                                // or through parameters every call gives one
                                // (`check::accumulators`); IR that reaches here with other
                                // memory is reported (review R27).
                                let Ok(Loc::Local(frame, array, _)) =
                                    self.locate(&fr, at, fr.regs[*acc as usize * 32 + l], 0, 4)
                                else {
                                    issue_checks_before!(l);
                                    fatal!(
                                        ReportKind::WgmmaPending,
                                        "the wgmma's accumulators are not a thread-local array (shared or global memory passed for a pointer parameter): the tensor cores write registers".to_string(),
                                        l
                                    )
                                };
                                // The tensor cores read the tiles from the issue on: every write
                                // they meet must be ordered before the issue, not only before
                                // the wait, where the reads are recorded (a thread that
                                // acquires a slot's landing or passes a barrier between the two
                                // would take the write as ordered: review R25 F1). So they are
                                // checked here too, with the lane's state at the issue, and
                                // from here to the wait a write to them races with the tensor
                                // cores whatever orders it (`WgFlight`).
                                // A warp read is checked for all the lanes below.
                                if warp.is_none() {
                                    let (now, passed) = self.lane_acc(w, l, Site { func, access: 0 });
                                    self.race_reads(g, (now, &passed), (at, func), (&reads, esz), ReadAt::Issue);
                                }
                                let pending = WgPending {
                                    acc: (frame, array),
                                    func,
                                    elem: *elem,
                                    shape,
                                    reads,
                                    warp: warp.clone(),
                                };
                                self.wgmma.entry((w * 32 + l) as u32).or_default().0.push(pending);
                            }
                            // A warp read's issue check: at once for the warp when nothing is
                            // to report, else lane by lane as above (nothing the loop did
                            // touches what it looks at: the accumulators are thread-local).
                            if let Some(x) = &warp
                                && !self.race_reads_warp_issue(w, mask, func, x)
                            {
                                self.warp_read_issue_lanes(g, (fid, w, func), mask, x);
                            }
                        }
                        Intr::WgmmaCommit => {
                            for l in lanes_of(mask) {
                                if let Some((open, groups)) = self.wgmma.get_mut(&((w * 32 + l) as u32)) {
                                    groups.push_back(std::mem::take(open));
                                }
                            }
                        }
                        Intr::WgmmaWait { pending } => {
                            // Whether each warp read met here changed, judged once for all the
                            // lanes (nothing below writes shared memory).
                            let mut judged: Vec<(*const WarpRead, bool)> = Vec::new();
                            let mut changed_any = |x: &Arc<WarpRead>, sh: &[u8]| {
                                let key = Arc::as_ptr(x);
                                match judged.iter().find(|(k, _)| *k == key) {
                                    Some(&(_, any)) => any,
                                    None => {
                                        let any = x.changed(sh);
                                        judged.push((key, any));
                                        any
                                    }
                                }
                            };
                            // Each lane's completed wgmmas, oldest first.
                            let mut dones: Vec<(usize, Vec<WgPending>)> = Vec::new();
                            for l in lanes_of(mask) {
                                let tid = (w * 32 + l) as u32;
                                let mut done = Vec::new();
                                if let Some((open, groups)) = self.wgmma.get_mut(&tid) {
                                    while groups.len() > *pending as usize {
                                        done.extend(groups.pop_front().unwrap_or_default());
                                    }
                                    if open.is_empty() && groups.is_empty() {
                                        self.wgmma.remove(&tid);
                                    }
                                }
                                dones.push((l, done));
                            }
                            // When every lane completes the same warp reads and none changed,
                            // their reads are recorded for the warp at once
                            // ([`BlockSim::race_reads_warp_wait`]); else lane by lane.
                            let batched = match dones.first() {
                                Some((_, first)) if !first.is_empty() => {
                                    let same = dones.iter().all(|(_, d)| {
                                        d.len() == first.len()
                                            && d.iter().zip(first).all(|(p, q)| match (&p.warp, &q.warp) {
                                                (Some(x), Some(y)) => Arc::ptr_eq(x, y) && p.func == q.func,
                                                _ => false,
                                            })
                                    });
                                    let xs: Vec<(u32, &WarpRead)> = if same {
                                        first.iter().filter_map(|p| Some((p.func, p.warp.as_deref()?))).collect()
                                    } else {
                                        Vec::new()
                                    };
                                    same && !first
                                        .iter()
                                        .any(|p| p.warp.as_ref().is_some_and(|x| changed_any(x, &self.shared)))
                                        && self.race_reads_warp_wait(w, mask, &xs)
                                }
                                _ => false,
                            };
                            for (l, done) in dones {
                                let at = Lane { fid, w, l };
                                // Nothing the reads record changes the lane's access.
                                let (now, passed) = self.lane_acc(w, l, Site { func, access: 0 });
                                for mut p in done {
                                    if !batched {
                                        let wfc = &s.code.funcs[p.func as usize];
                                        // A and B are of the group's element type.
                                        let width = p.elem.size() as usize;
                                        let listed = match &p.warp {
                                            Some(x) if self.s.cfg.checks.races => x.lane_list(l),
                                            _ => std::mem::take(&mut p.reads),
                                        };
                                        self.race_reads(
                                            g,
                                            (now, &passed),
                                            (at, p.func),
                                            (&listed, width),
                                            ReadAt::Wait,
                                        );
                                        p.reads = listed;
                                        // The lane's first read that changed by now, if any.
                                        let changed = match &p.warp {
                                            Some(x) => {
                                                if changed_any(x, &self.shared) {
                                                    x.lane_changed(&self.shared, l)
                                                } else {
                                                    None
                                                }
                                            }
                                            None => p
                                                .reads
                                                .iter()
                                                .find(|&&(loc, bits, _)| self.read_loc(&fr, at, loc, p.elem) != bits)
                                                .map(|&(_, _, access)| access),
                                        };
                                        if let Some(access) = changed {
                                            let mem = &wfc.mems[wfc.accesses[access as usize].mem.index()].name;
                                            let msg = format!(
                                                "`{mem}` changed while a wgmma could still read it: wait for its group with `wgmma_wait` before writing the tile"
                                            );
                                            fatal!(ReportKind::WgmmaPending, msg, l);
                                        }
                                    }
                                    if self.spare_reads.len() < SPARE_READS && p.reads.capacity() > 0 {
                                        p.reads.clear();
                                        self.spare_reads.push(std::mem::take(&mut p.reads));
                                    }
                                    // The last lane to finish with a warp read hands its tiles back.
                                    if let Some(x) = p.warp.take()
                                        && let Ok(x) = Arc::try_unwrap(x)
                                        && self.spare_tiles.len() < SPARE_TILES
                                    {
                                        self.spare_tiles.push(x.tiles);
                                    }
                                }
                            }
                        }
                        Intr::Mbar { op, dst, ptr, index, index_ty, arg, bytes, access } => {
                            // Every lane's barrier, as a shared-memory byte.
                            let mut keys = [0usize; 32];
                            for l in lanes_of(mask) {
                                let at = Lane { fid, w, l };
                                let i = to_i128(*index_ty, fr.regs[*index as usize * 32 + l]);
                                match self.locate(&fr, at, fr.regs[*ptr as usize * 32 + l], i, 8) {
                                    Ok(Loc::Shared(b)) => keys[l] = b,
                                    Ok(_) => fatal!(
                                        ReportKind::MbarrierMisuse,
                                        "an mbarrier must live in shared memory".into(),
                                        l
                                    ),
                                    Err(why) => fatal!(ReportKind::OutOfBounds, format!("mbarrier access: {why}"), l),
                                }
                            }
                            // A barrier initialised as another array's (an earlier scope's, a
                            // callee's scratch): a new array's elements hold nothing until it
                            // writes them, and `mbarrier_init` is that write.
                            if self.s.cfg.checks.races && *op != MbarOp::Init {
                                let tag = self.array_tag(&fr, *access);
                                for l in lanes_of(mask) {
                                    if let Some(m) = self.mbars.get(&keys[l])
                                        && m.valid
                                        && tag != 0
                                        && m.tag != tag
                                    {
                                        fatal!(ReportKind::MbarrierMisuse, MBAR_OTHER_ARRAY.to_string(), l)
                                    }
                                }
                            }
                            let mut argvs = [bytes.unwrap_or(0); 32];
                            if let Some(a) = arg {
                                for l in lanes_of(mask) {
                                    argvs[l] = fr.regs[*a as usize * 32 + l];
                                }
                            }
                            let argv = |l: usize| argvs[l];
                            if *op == MbarOp::WaitParity {
                                let mut blocked = Vec::new();
                                for l in lanes_of(mask) {
                                    let Some(m) = self.mbars.get(&keys[l]).filter(|m| m.valid) else {
                                        fatal!(ReportKind::MbarrierMisuse, mbar_invalid("waited on"), l)
                                    };
                                    // The phase of parity `p` has completed when the current
                                    // (incomplete) phase has the other parity.
                                    if m.phase & 1 == argv(l) & 1 {
                                        blocked.push(keys[l]);
                                    }
                                }
                                if !blocked.is_empty() {
                                    f.wait = Wait::Mbarrier;
                                    put_back!();
                                    for k in blocked {
                                        if let Some(m) = self.mbars.get_mut(&k) {
                                            m.waiters.push(id);
                                        }
                                    }
                                    return;
                                }
                                // Acquire the arrivals of the phase each lane waited for. The
                                // PTX ISA's parity names the current phase or the one before,
                                // so on the GPU the wait may have been satisfied by the oldest
                                // completed phase of that parity that the thread is not
                                // already ordered past: after `k` known phases, phase `k - 1`
                                // or `k`, whichever has the parity (phase -1, before the
                                // first, has parity 1: a wait for parity 1 on a fresh
                                // barrier passes at once and acquires nothing). Until review
                                // R17 (F1, F2) the latest completed phase of the parity was
                                // acquired, and a thread told of later phases by a relaxed
                                // flag was credited with them. The releases of the latest three
                                // phases are kept; a wait for an older phase acquires nothing,
                                // which can only report more.
                                if self.s.cfg.checks.races {
                                    let mut memo = None;
                                    for l in lanes_of(mask) {
                                        let tid = (w * 32 + l) as u32;
                                        // An atomic update for the race check, not a read:
                                        // reads are kept four per location, and every
                                        // consumer warp waits on every full barrier, so a
                                        // wait that nothing orders before the barrier's
                                        // invalidation was dropped by later ones (review R18
                                        // F2); a thread's latest update is kept exactly.
                                        self.mbar_operated(g, keys[l], Lane { fid, w, l }, func, *access);
                                        // The wait passed, so the latest completed phase has
                                        // the parity, and `q` is it exactly when the thread
                                        // knows of every phase before it: the search for what
                                        // the thread knows can stop there (review R18 F4: a
                                        // bound one higher scanned every waiter's waits).
                                        let m = &self.mbars[&keys[l]];
                                        let latest = i64::try_from(m.phase).unwrap_or(i64::MAX) - 1;
                                        let (base, parity) = (m.base_generation, i64::from(argv(l) as u32 & 1));
                                        let enough = base.saturating_add(u32::try_from(latest).unwrap_or(0));
                                        let known =
                                            i64::from(self.known_generation(keys[l], tid, enough).saturating_sub(base));
                                        let q = if (known - 1).rem_euclid(2) == parity { known - 1 } else { known };
                                        let block = self.block;
                                        let m = self.mbars.get_mut(&keys[l]).expect("waited on above");
                                        let rel = if q == latest {
                                            m.done.get(block)
                                        } else if q == latest - 2 {
                                            // Two phases before the latest (the one just before
                                            // has the other parity): the thread knew of every
                                            // phase before it. Until 2026-11-30 nothing was
                                            // acquired here, a false report.
                                            m.earlier_done[1].get(block)
                                        } else {
                                            PhaseReleases::default()
                                        };
                                        self.acquire(w, l, &rel, &mut memo);
                                    }
                                }
                            } else {
                                // What the lanes' arrivals carry on, computed once for the warp
                                // when they all arrive at one mbarrier in one phase (the phase
                                // takes the union of what each carries: `warp_carried`); the
                                // first lane's arrival carries it, the others nothing more.
                                // (Lane by lane in the plain simulator, `Module::new_unfused`,
                                // which the tests compare with.)
                                let mut warp_carry = None;
                                let key = keys[mask.trailing_zeros() as usize];
                                if self.s.cfg.checks.races
                                    && s.code.fast
                                    && matches!(op, MbarOp::Arrive | MbarOp::ArriveExpectTx)
                                    && lanes_of(mask).all(|l| keys[l] == key)
                                    && self.mbars.get(&key).is_some_and(|m| m.valid && m.pending >= mask.count_ones())
                                {
                                    warp_carry = self.warp_carried(w, mask);
                                }
                                for l in lanes_of(mask) {
                                    let tid = w * 32 + l;
                                    let v = argv(l);
                                    // The simulator completes a TMA copy's bytes when it is
                                    // issued, the GPU when the copy finishes: a phase that
                                    // landed copies may still be waiting for them on the GPU
                                    // when a thread not ordered after its completion operates
                                    // on the barrier, and the operation then counts towards
                                    // that phase (an arrival beyond its count, bytes it never
                                    // gets). No schedule shows it, so it is checked here: the
                                    // thread must have seen the landing (review R14 F1). The
                                    // copies a thread issues are checked below, against any
                                    // phase.
                                    let unseen_copies = self.s.cfg.checks.races
                                        && matches!(
                                            op,
                                            MbarOp::Arrive
                                                | MbarOp::ArriveExpectTx
                                                | MbarOp::ExpectTx
                                                | MbarOp::CompleteTx
                                                | MbarOp::Inval
                                        )
                                        && self.landings.get(&keys[l]).is_some_and(|x| x.generation > 0)
                                        && !self.saw_last_landing(keys[l], tid as u32);
                                    // Every other operation on the barrier is an atomic
                                    // access of its 8 bytes, so that its initialisation (a
                                    // plain write, `mbar_bytes_written`) must be ordered before
                                    // it, and so must its invalidation after it (review R17 F3,
                                    // F4: a thread told of the `mbarrier_init` by a relaxed
                                    // flag operated on a barrier that the GPU may not have
                                    // initialised yet).
                                    if self.s.cfg.checks.races && !matches!(op, MbarOp::Init | MbarOp::Inval) {
                                        self.mbar_operated(g, keys[l], Lane { fid, w, l }, func, *access);
                                    }
                                    let here = self.thread(f.warp, l as u32);
                                    let init_tag = if *op == MbarOp::Init && self.s.cfg.checks.races {
                                        self.array_tag(&fr, *access)
                                    } else {
                                        0
                                    };
                                    let m = self.mbars.entry(keys[l]).or_default();
                                    match op {
                                        MbarOp::Init => {
                                            let count = v as u32 as i32;
                                            if m.valid {
                                                fatal!(
                                                    ReportKind::MbarrierMisuse,
                                                    "mbarrier initialised again while valid (invalidate it first)"
                                                        .into(),
                                                    l
                                                );
                                            }
                                            if !(1..(1 << 20)).contains(&count) {
                                                fatal!(
                                                    ReportKind::MbarrierMisuse,
                                                    format!(
                                                        "mbarrier arrival count {count} out of range (1 to 2^20 - 1)"
                                                    ),
                                                    l
                                                );
                                            }
                                            let waiters = std::mem::take(&mut m.waiters);
                                            // Its phases are counted from here among the
                                            // generations of the memory's landings.
                                            let base_generation =
                                                self.landings.get(&keys[l]).map_or(0, |x| x.generation);
                                            // The old barrier's landings stay: a copy of it
                                            // still in flight on the GPU completes its bytes on
                                            // whatever barrier is at that address then, so the
                                            // new barrier's operations must follow it too (an
                                            // `mbarrier_inval` before it is checked so; until
                                            // review R15 F3 a re-initialisation cleared it).
                                            *m = Mbar {
                                                expected: count as u32,
                                                pending: count as u32,
                                                valid: true,
                                                waiters,
                                                base_generation,
                                                tag: init_tag,
                                                ..Mbar::default()
                                            };
                                            self.note_mbar_validity(keys[l], true);
                                            self.mbar_bytes_written(g, keys[l], Lane { fid, w, l }, func, *access);
                                        }
                                        MbarOp::Inval => {
                                            if !m.valid {
                                                fatal!(ReportKind::MbarrierMisuse, mbar_invalid("invalidated"), l);
                                            }
                                            // Invalidating a barrier whose copies may still be
                                            // in flight leaves their bytes to whatever comes
                                            // next at its address (review R15 F3).
                                            if unseen_copies {
                                                fatal!(ReportKind::MbarrierMisuse, UNSEEN_COPIES.to_string(), l);
                                            }
                                            // Nor may copies of its current phase be in flight
                                            // (review R15 c3: invalidated, initialised again and
                                            // completed by hand before the copy landed).
                                            if !m.copies.is_empty() {
                                                fatal!(
                                                    ReportKind::MbarrierMisuse,
                                                    "mbarrier invalidated while TMA copies that complete on its current phase are in flight: their bytes complete on whatever barrier is at its address when they finish (wait for the phase first)".to_string(),
                                                    l
                                                );
                                            }
                                            m.valid = false;
                                            self.note_mbar_validity(keys[l], false);
                                            self.mbar_bytes_written(g, keys[l], Lane { fid, w, l }, func, *access);
                                        }
                                        // More bytes to come this phase, and no arrival: the
                                        // phase cannot complete here.
                                        MbarOp::ExpectTx => {
                                            if !m.valid {
                                                fatal!(
                                                    ReportKind::MbarrierMisuse,
                                                    mbar_invalid("expected bytes on"),
                                                    l
                                                );
                                            }
                                            if unseen_copies {
                                                fatal!(ReportKind::MbarrierMisuse, UNSEEN_COPIES.to_string(), l);
                                            }
                                            let bytes = i64::from(v as u32);
                                            if let Some(msg) = tx_out_of_range(bytes, m.announced + bytes) {
                                                fatal!(ReportKind::MbarrierMisuse, msg, l);
                                            }
                                            m.announced += bytes;
                                            m.tx += bytes;
                                            if self.s.cfg.checks.races {
                                                m.ops.push(super::block::PhaseOp {
                                                    tid: tid as u32,
                                                    arrived: self.warps[w].arrived[l],
                                                    fences: self.fences[tid],
                                                });
                                                self.note_bytes_op(
                                                    keys[l],
                                                    (w, l),
                                                    (bytes, 0),
                                                    (fc.info[f.pc as usize].span, here),
                                                );
                                            }
                                        }
                                        _ => {
                                            if !m.valid {
                                                fatal!(ReportKind::MbarrierMisuse, mbar_invalid("arrived at"), l);
                                            }
                                            // A phase whose arrivals are all in but whose bytes
                                            // are not takes no more arrivals: the PTX ISA leaves
                                            // an arrival beyond the count undefined (until
                                            // 2026-11-29 the count underflowed, a panic; R9).
                                            if *op != MbarOp::CompleteTx && m.pending == 0 {
                                                let msg = format!(
                                                    "more arrivals at this mbarrier than its count ({}) in one phase: the phase still waits for {} transaction bytes",
                                                    m.expected, m.tx
                                                );
                                                fatal!(ReportKind::MbarrierMisuse, msg, l);
                                            }
                                            if let Some(d) = dst {
                                                fr.regs[*d as usize * 32 + l] = m.phase;
                                            }
                                            let bytes = i64::from(v as u32);
                                            match op {
                                                MbarOp::ArriveExpectTx => {
                                                    if let Some(msg) = tx_out_of_range(bytes, m.announced + bytes) {
                                                        fatal!(ReportKind::MbarrierMisuse, msg, l);
                                                    }
                                                    m.announced += bytes;
                                                    m.arrival_bytes += bytes;
                                                    m.tx += bytes;
                                                }
                                                MbarOp::CompleteTx => {
                                                    if let Some(msg) = tx_out_of_range(bytes, m.completed + bytes) {
                                                        fatal!(ReportKind::MbarrierMisuse, msg, l);
                                                    }
                                                    m.completed += bytes;
                                                    m.tx -= bytes;
                                                }
                                                _ => {}
                                            }
                                            // An arrival releases the thread's earlier accesses
                                            // to whoever waits for the phase, and passes on the
                                            // TMA copies it acquired. `mbarrier.complete_tx` is
                                            // only `.relaxed` in the PTX ISA: it releases nothing,
                                            // neither the thread's own accesses nor other
                                            // threads' (until 2026-11-29 it released the
                                            // thread's own, and a producer that wrote data and
                                            // completed bytes without arriving ran clean). The
                                            // copies of `tma_load_*_mbar` it completes land as the
                                            // barrier's own pseudo-thread (`complete_mbar_phase`),
                                            // which the phase releases by itself.
                                            let complete_only = *op == MbarOp::CompleteTx;
                                            // What a release of the thread must come after
                                            // to be ordered after this operation.
                                            let op_fences = self.fences[tid];
                                            let races = self.s.cfg.checks.races;
                                            let carried = if complete_only {
                                                super::flags::Releases::default()
                                            } else {
                                                self.fences[tid].bump(false);
                                                match (races, &mut warp_carry) {
                                                    (false, _) => Default::default(),
                                                    (true, Some(c)) => std::mem::take(c),
                                                    (true, None) => self.acquired_by(tid as u32),
                                                }
                                            };
                                            let fences = self.fences[tid];
                                            // The TMA copies this thread has just issued (the
                                            // `complete_tx` of `tma_load_*_mbar`) belong to this
                                            // phase: they land when it completes.
                                            let issued = if complete_only {
                                                self.mbar_issued.remove(&(tid as u32)).unwrap_or_default()
                                            } else {
                                                Vec::new()
                                            };
                                            if issued.is_empty() && unseen_copies {
                                                fatal!(ReportKind::MbarrierMisuse, UNSEEN_COPIES.to_string(), l);
                                            }
                                            if !issued.is_empty()
                                                && self.s.cfg.checks.races
                                                && !self.saw_last_landing(keys[l], tid as u32)
                                            {
                                                fatal!(
                                                    ReportKind::MbarrierMisuse,
                                                    "a TMA copy completes on this mbarrier before its thread has seen the barrier's previous phase complete: on the GPU a copy's bytes complete when it finishes, in any order, so they may count towards that earlier phase instead of the one announced for them (wait for the phase, or order the copy after every arrival of it)".to_string(),
                                                    l
                                                );
                                            }
                                            // The phase's operations on bytes (checked at its
                                            // completion): bytes completed by the thread or by
                                            // the TMA copies it issues, or an arrival, which
                                            // may be ordered after earlier ones.
                                            if self.s.cfg.checks.races {
                                                if complete_only {
                                                    self.note_bytes_op(
                                                        keys[l],
                                                        (w, l),
                                                        (0, bytes),
                                                        (fc.info[f.pc as usize].span, here),
                                                    );
                                                } else {
                                                    self.follow_bytes_ops(keys[l], tid as u32);
                                                }
                                            }
                                            let m = self.mbars.get_mut(&keys[l]).expect("entered above");
                                            // The barriers the thread has passed: an arrival is a
                                            // release cumulative over them, so other threads'
                                            // accesses that one of them ordered before it are
                                            // released too (a consumer warp's reads, `__syncwarp()`,
                                            // one elected lane's arrival, as CUTLASS's consumers
                                            // arrive).
                                            // (For the race check only, as is what the phase
                                            // releases: review R20 F1.)
                                            if !complete_only && races {
                                                m.arrivals.push(crate::shadow::Release {
                                                    block: self.block,
                                                    tid: tid as u32,
                                                    fences,
                                                    counts: self.warps[w].counts[l],
                                                    reach: crate::shadow::EVERY_BLOCK,
                                                    via: self.block,
                                                    gbar: 0,
                                                    relayed: false,
                                                    left: false,
                                                });
                                            }
                                            // One per writer (or per mbarrier whose copies it
                                            // releases) and reach, the latest: every consumer
                                            // of a pipeline carries the same ones. A sorted set
                                            // ([`super::flags::Releases`]): a list searched
                                            // linearly for each one took a tenth of kernel 48's
                                            // checked run, and combined releases of one writer
                                            // that reach different blocks.
                                            if !carried.is_empty() {
                                                m.carried.merge_all(&carried);
                                            }
                                            // An operation that ran on the mbarrier now (not
                                            // the bytes of TMA copies, which complete later).
                                            if self.s.cfg.checks.races && issued.is_empty() {
                                                m.ops.push(super::block::PhaseOp {
                                                    tid: tid as u32,
                                                    arrived: self.warps[w].arrived[l],
                                                    fences: op_fences,
                                                });
                                            }
                                            m.copies.extend(issued.into_iter().map(|c| (tid as u32, c)));
                                            if *op != MbarOp::CompleteTx {
                                                m.pending -= 1;
                                            }
                                            if m.pending == 0 && m.tx == 0 {
                                                // Each operation on bytes made while the phase
                                                // waited for arrivals only must be followed by
                                                // one of those arrivals: else all of them may
                                                // come first on the GPU, completing the phase
                                                // without it (review R14 F2). An arrival is
                                                // ordered after it by the thread's program
                                                // order, a barrier, or a release its thread
                                                // acquired: both are operations on the one
                                                // mbarrier, which happens-before orders (until
                                                // 2026-11-30 only the first two counted, and a
                                                // relay through another mbarrier or a fenced flag
                                                // was a false report; review R15 F4).
                                                if let Some((x, surely, may)) = m.early_bytes_op() {
                                                    let (x, message) = (x.clone(), early_phase(surely, may));
                                                    let span = fc.info[f.pc as usize].span;
                                                    put_back!();
                                                    self.fatal(
                                                        g,
                                                        Report {
                                                            kind: ReportKind::MbarrierMisuse,
                                                            message,
                                                            span: x.span,
                                                            thread: x.thread,
                                                            other: Some((
                                                                span,
                                                                Some(here),
                                                                "the arrival that completed the phase, which nothing orders after it".to_string(),
                                                            )),
                                                            notes: Vec::new(),
                                                        },
                                                    );
                                                    return;
                                                }
                                                m.bytes_ops.clear();
                                                m.arrival_bytes = 0;
                                                m.late_completed = 0;
                                                m.announced = 0;
                                                m.completed = 0;
                                                m.phase += 1;
                                                m.pending = m.expected;
                                                if races {
                                                    let mut done = std::mem::take(&mut m.arrivals);
                                                    done.extend(std::mem::take(&mut m.carried).iter().copied());
                                                    m.earlier_done[1] = std::mem::take(&mut m.earlier_done[0]);
                                                    m.earlier_done[0] =
                                                        std::mem::replace(&mut m.done, PhaseSet::completed(done));
                                                }
                                                let landed = std::mem::take(&mut m.copies);
                                                let ops = std::mem::take(&mut m.ops);
                                                for waiter in std::mem::take(&mut m.waiters) {
                                                    if self.frags[waiter as usize]
                                                        .as_ref()
                                                        .is_some_and(|x| x.wait == Wait::Mbarrier)
                                                    {
                                                        self.make_runnable(waiter);
                                                    }
                                                }
                                                if !landed.is_empty() || self.s.cfg.checks.races {
                                                    self.complete_mbar_phase(g, keys[l], landed, ops);
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                        Intr::Nop => {}
                        Intr::Trap => {
                            // A trap in a library function is about what its caller passed, so
                            // the report also shows the outermost call, the kernel's own line.
                            let outer = f.recs.iter().filter_map(|&r| self.recs[r as usize].as_ref()).find_map(|r| {
                                let (pc, _) = r.call?;
                                let caller = self.warps[w].frames[r.frame as usize].as_ref()?.func;
                                Some(s.code.funcs[caller as usize].info[pc as usize].span)
                            });
                            let span = fc.info[f.pc as usize].span;
                            let thread = self.thread(f.warp, mask.trailing_zeros());
                            put_back!();
                            let report = Report {
                                kind: ReportKind::Trap,
                                message: "the kernel called `trap()`: on the GPU the launch fails".into(),
                                span,
                                thread,
                                other: outer.map(|at| (at, None, "called from here".to_string())),
                                notes: Vec::new(),
                            };
                            self.fatal(g, report);
                            return;
                        }
                        Intr::Math { f: which, ty, dst, args, arg_ty } => {
                            let d = *dst as usize * 32;
                            let whole = (mask == FULL && *ty == Scalar::F32 && *arg_ty == Scalar::F32)
                                .then(|| {
                                    let a = fr.regs.src(args[0]);
                                    ops::math_f32_lanes(*which, a, args.get(1).map_or(a, |&r| fr.regs.src(r)))
                                })
                                .flatten();
                            if let Some(out) = whole {
                                *fr.regs.dst(*dst) = out;
                            } else {
                                let mut vals = [0u64; 3];
                                for l in lanes_of(mask) {
                                    for (k, a) in args.iter().enumerate() {
                                        vals[k] = fr.regs[*a as usize * 32 + l];
                                    }
                                    fr.regs[d + l] = ops::math(*which, *ty, *arg_ty, &vals[..args.len()]);
                                }
                            }
                        }
                    },
                    Op::AsyncCommit => {
                        for l in lanes_of(mask) {
                            let t = tid0 as usize + l;
                            let group = self.commits[t];
                            for c in self.pending[t].iter_mut().filter(|c| c.group == u32::MAX) {
                                c.group = group;
                            }
                            // An empty group is still a group: PTX counts it.
                            self.commits[t] += 1;
                        }
                    }
                    Op::AsyncWait { pending } => {
                        g.writes += 1;
                        for l in lanes_of(mask) {
                            let t = tid0 as usize + l;
                            // Groups older than the `pending` newest complete; 0 completes
                            // every copy, committed or not.
                            let keep_from = self.commits[t].saturating_sub(*pending);
                            // The completed copies move to a buffer the block reuses, in
                            // order, and the thread keeps the rest in its own vector (its
                            // capacity kept for the next stage's copies): two allocations per
                            // lane and wait before, a few percent of a cp.async gemm's run.
                            let mut copies = std::mem::take(&mut self.done_copies);
                            copies.clear();
                            self.pending[t].retain(|c| {
                                let done = *pending == 0 || (c.group != u32::MAX && c.group < keep_from);
                                if done {
                                    copies.push(*c);
                                }
                                !done
                            });
                            for c in copies.drain(..) {
                                self.copy_done(g, c.src, c.src_count as usize, c.elem.size());
                                self.dest_done(c.dst, c.count as usize, c.elem.size());
                                for k in 0..c.count as usize {
                                    let loc = c.dst.advance(k, c.elem.size());
                                    if let Some(kind) = race_kind(&s.code.funcs[c.func as usize], c.access, true) {
                                        self.race(
                                            g,
                                            loc,
                                            kind,
                                            Lane { fid, w, l },
                                            Site { func: c.func, access: c.access },
                                            // The copy lands at the latest here: its write
                                            // is ordered by the barriers the thread has
                                            // passed at the wait, not at the issue.
                                            None,
                                        );
                                    }
                                    self.write_loc(&mut fr, Lane { fid, w, l }, loc, c.elem, c.vals[k], c.tag);
                                }
                            }
                            self.done_copies = copies;
                        }
                    }
                    Op::Jump { target } => {
                        self.unwind(&mut f, fid, *target);
                        f.pc = *target;
                        continue;
                    }
                    Op::Branch { cond, else_pc, join, uniform } => {
                        let c = *cond as usize * 32;
                        let taken = lanes::true_lanes((fr.regs.src(*cond), fr.regs.uniform(*cond)), mask);
                        if *uniform && !self.condition_uniform(g, &f, &fr.regs[c..c + 32], fc, func, "condition") {
                            put_back!();
                            return;
                        }
                        if taken == mask {
                            f.pc += 1;
                        } else if taken == 0 {
                            f.pc = *else_pc;
                        } else {
                            let rec = self.add_rec(Rec::open(*join, fid, mask));
                            f.recs.push(rec);
                            self.fork(&f, mask & !taken, *else_pc);
                            f.mask = taken;
                            f.pc += 1;
                        }
                        continue;
                    }
                    Op::LoopEnter { exit } => {
                        let rec = self.add_rec(Rec::looping(*exit, fid, mask));
                        f.recs.push(rec);
                    }
                    Op::Iterate { join } => {
                        let rec = self.add_rec(Rec::open(*join, fid, mask));
                        f.recs.push(rec);
                    }
                    Op::LoopTest { cond, exit, uniform } => {
                        self.next_iteration(&f, *exit);
                        let c = *cond as usize * 32;
                        let stay = lanes::true_lanes((fr.regs.src(*cond), fr.regs.uniform(*cond)), mask);
                        if *uniform && !self.condition_uniform(g, &f, &fr.regs[c..c + 32], fc, func, "loop condition") {
                            put_back!();
                            return;
                        }
                        if stay == mask {
                            f.pc += 1;
                        } else if stay == 0 {
                            f.pc = *exit;
                        } else {
                            self.fork(&f, mask & !stay, *exit);
                            f.mask = stay;
                            f.pc += 1;
                        }
                        continue;
                    }
                    Op::Split { unit, cases, end } => {
                        let code = fc.info[pc as usize].code;
                        let (t, b) = (u64::from(s.block), u64::from(s.grid));
                        let (cs, us) = (code.threads(t, b).max(1), unit.threads(t, b).max(1));
                        let base = u64::from(self.block) * t + u64::from(tid0);
                        // Lanes grouped by destination, in case order.
                        let mut groups: Vec<(u32, u32)> = Vec::new();
                        for l in lanes_of(mask) {
                            let pos = ((base + l as u64) % cs) / us;
                            let to =
                                cases.iter().find(|c| (c.0..c.0 + c.1).contains(&pos)).map(|c| c.2).unwrap_or(*end);
                            match groups.iter_mut().find(|g| g.0 == to) {
                                Some(g) => g.1 |= 1 << l,
                                None => groups.push((to, 1 << l)),
                            }
                        }
                        if groups.len() > 1 {
                            let rec = self.add_rec(Rec::open(*end, fid, mask));
                            f.recs.push(rec);
                            for &(to, m) in &groups[1..] {
                                self.fork(&f, m, to);
                            }
                        }
                        f.mask = groups[0].1;
                        f.pc = groups[0].0;
                        continue;
                    }
                    Op::Join => {
                        let top = f.recs.last().copied();
                        if let Some(top) = top {
                            let r = self.recs[top as usize].as_mut().expect("live record");
                            if r.frame == fid && r.call.is_none() && r.join == pc {
                                r.arrived |= mask;
                                if r.arrived == r.expected && r.parked.is_empty() {
                                    f.recs.pop();
                                    self.free_rec(top);
                                } else {
                                    f.wait = Wait::Join(top);
                                    put_back!();
                                    self.park_at(top, id);
                                    return;
                                }
                            }
                        }
                    }
                    Op::Call { func: callee, args, dst, smem_offset, arrays } => {
                        if f.frames.len() >= 256 {
                            fatal!(
                                ReportKind::FuelExhausted,
                                "calls nest deeper than 256 frames".into(),
                                mask.trailing_zeros()
                            );
                        }
                        let cc = &s.code.funcs[*callee as usize];
                        let mut frame = self.warps[w].frame(*callee, cc, s.code.fast, fr.smem_base + smem_offset);
                        if !self.swritten.is_empty() {
                            frame.ptags.extend(arrays.iter().map(|&a| self.array_tag(&fr, a)));
                        }
                        for (p, a) in cc.params.iter().zip(args.iter()) {
                            let (d, a) = (*p as usize * 32, *a as usize * 32);
                            each(mask, |l| frame.regs[d + l] = fr.regs[a + l]);
                        }
                        let new = self.warps[w].alloc(frame);
                        let rec = self.add_rec(Rec {
                            join: RET,
                            frame: fid,
                            expected: mask,
                            arrived: 0,
                            parked: Vec::new(),
                            call: Some((pc, *dst)),
                            iteration: None,
                        });
                        f.recs.push(rec);
                        f.frames.push(new);
                        f.pc = 0;
                        put_back!();
                        continue 'outer;
                    }
                    Op::Ret { value } => {
                        if let Some(v) = value {
                            let v = *v as usize * 32;
                            each(mask, |l| fr.ret[l] = fr.regs[v + l]);
                        }
                        put_back!();
                        if self.ret(g, id) {
                            continue 'outer;
                        }
                        return;
                    }
                    Op::End => {
                        put_back!();
                        if self.ret(g, id) {
                            continue 'outer;
                        }
                        return;
                    }
                    Op::Barrier { scope, order } => {
                        let (scope, order) = (*scope, *order);
                        put_back!();
                        if self.barrier(g, id, (scope, order), func, pc) {
                            continue 'outer;
                        }
                        return;
                    }
                    Op::AssertUniformLocal { local, persp, what: checked } => {
                        if s.cfg.checks.uniformity {
                            let (ty, len) = fc.locals[*local as usize];
                            let name = fc.local_names[*local as usize].clone();
                            for e in 0..len as usize {
                                let vals: Vec<u64> = fr.locals[*local as usize][e * 32..e * 32 + 32].to_vec();
                                let what = match *checked {
                                    Checked::Argument { func: callee, index } => {
                                        let (callee, param) = param_name(s, callee.0, index);
                                        Uniform::ArgElement { callee, param, array: &name, ty, index: e }
                                    }
                                    Checked::Operand { intrinsic, index } => {
                                        let (intrinsic, operand) = operand_name(intrinsic, index);
                                        Uniform::OperandElement { intrinsic, operand, array: &name, ty, index: e }
                                    }
                                    _ => Uniform::Element(&name, ty, e),
                                };
                                if !self.uniform(g, &f, &vals, *persp, func, what, checked.whole_unit()) {
                                    put_back!();
                                    return;
                                }
                            }
                        }
                    }
                    Op::AssertUniform { reg, persp, ty, what: checked } => {
                        let r = *reg as usize * 32;
                        let name = || fc.reg_names.get(*reg as usize).and_then(|n| n.as_deref()).unwrap_or("?");
                        let what = match *checked {
                            Checked::Variable | Checked::Exit => Uniform::Variable(name(), *ty),
                            Checked::Break => Uniform::Left { continued: false },
                            Checked::Continue => Uniform::Left { continued: true },
                            Checked::Returned => Uniform::Returned(*ty),
                            Checked::Argument { func: callee, index } => {
                                let (callee, param) = param_name(s, callee.0, index);
                                Uniform::Argument { callee, param, ty: *ty }
                            }
                            Checked::Result { func: callee } => {
                                Uniform::Result { callee: &s.code.funcs[callee.0 as usize].name, ty: *ty }
                            }
                            Checked::Operand { intrinsic, index } => {
                                let (intrinsic, operand) = operand_name(intrinsic, index);
                                Uniform::Operand { intrinsic, operand, ty: Some(*ty), block: false }
                            }
                        };
                        let whole_unit = checked.whole_unit();
                        if s.cfg.checks.uniformity
                            && !self.uniform(g, &f, &fr.regs[r..r + 32], *persp, func, what, whole_unit)
                        {
                            put_back!();
                            return;
                        }
                    }
                    Op::AssertUniformPtr { reg, persp, what: checked } => {
                        if s.cfg.checks.uniformity {
                            let r = *reg as usize * 32;
                            let t = u64::from(s.block);
                            let block = (persp.threads(t, u64::from(s.grid)) > t).then_some(self.block);
                            let keys: [u64; 32] = std::array::from_fn(|l| pointer_key(fr.regs[r + l], block));
                            let (callee, param) = match *checked {
                                Checked::Argument { func: callee, index } => param_name(s, callee.0, index),
                                Checked::Operand { intrinsic, index } => operand_name(intrinsic, index),
                                _ => ("?", "?"),
                            };
                            let operand = matches!(checked, Checked::Operand { .. });
                            let what = if operand {
                                Uniform::Operand { intrinsic: callee, operand: param, ty: None, block: block.is_some() }
                            } else {
                                Uniform::Pointer { callee, param, block: block.is_some() }
                            };
                            let whole_unit = checked.whole_unit();
                            if !self.uniform(g, &f, &keys, *persp, func, what, whole_unit) {
                                put_back!();
                                return;
                            }
                            // A pointer into thread-local arrays (a caller's array reached
                            // through a `thread[1]` pointer parameter) means each thread's own
                            // copy: the callee reads its own, so every copy must hold the
                            // same elements, as for a local array passed directly.
                            let elems = self.local_copies(&fr, fid, w, f.mask, &fr.regs[r..r + 32]);
                            if let Some((array, ty, elems)) = elems {
                                for (e, vals) in elems.iter().enumerate() {
                                    let what = if operand {
                                        let (intrinsic, operand) = (callee, param);
                                        Uniform::OperandElement { intrinsic, operand, array: &array, ty, index: e }
                                    } else {
                                        Uniform::ArgElement { callee, param, array: &array, ty, index: e }
                                    };
                                    if !self.uniform(g, &f, vals, *persp, func, what, whole_unit) {
                                        put_back!();
                                        return;
                                    }
                                }
                            }
                        }
                    }
                    Op::Arrive { scope, id: sid } => {
                        let size = self.unit_size(*scope);
                        self.split_arrive(size, func, *sid, w, mask);
                    }
                    Op::Wait { scope, id: sid } => {
                        let size = self.unit_size(*scope);
                        if !self.split_wait(size, func, *sid, w, mask) {
                            f.wait = Wait::Split;
                            put_back!();
                            self.split_park(size, func, *sid, w, mask, id);
                            return;
                        }
                    }
                    Op::NotSimulated { what } => {
                        let msg = format!("{what} is not simulated yet");
                        fatal!(ReportKind::NotSimulated, msg, mask.trailing_zeros());
                    }
                }
                f.pc += 1;
            }
        }
    }

    /// Files a report that ends the run.
    pub fn fatal(&mut self, g: &mut GCtx, r: Report) {
        g.report(self.s, r);
        self.stopped = true;
    }

    /// Lanes of `mask` in the order an atomic applies them: lane order, or a random order
    /// under a seeded schedule.
    fn lane_order(&self, g: &mut GCtx, mask: u32) -> Vec<usize> {
        let mut v: Vec<usize> = lanes_of(mask).collect();
        if self.s.cfg.seed.is_some() {
            for i in (1..v.len()).rev() {
                let j = g.rng.below(i + 1);
                v.swap(i, j);
            }
        }
        v
    }

    /// A new fragment with the lanes `mask` of `f`, at `pc`, in the same constructs.
    fn fork(&mut self, f: &super::block::Frag, mask: u32, pc: u32) {
        let new = super::block::Frag {
            warp: f.warp,
            mask,
            pc,
            frames: f.frames.clone(),
            recs: f.recs.clone(),
            wait: Wait::None,
            poll: (0, 0, 0),
        };
        let id = self.add_frag(new);
        self.runnable.push_back(id);
    }

    /// Leaves the reconvergence records of constructs that a jump to `target` exits. A
    /// loop's back edge usually exits none (its top record is the loop's own, which joins
    /// after it): that test stays inline, and the loop that pops is out of line, where its
    /// frame setup costs only the jumps that leave something (2% of a register-tiled
    /// gemm's unchecked run when every back edge paid it).
    #[inline(always)]
    fn unwind(&mut self, f: &mut super::block::Frag, fid: u32, target: u32) {
        if let Some(&top) = f.recs.last()
            && let Some(r) = self.recs[top as usize].as_ref()
            && !r.left_by(fid, target)
        {
            return;
        }
        self.unwind_slow(f, fid, target);
    }

    #[inline(never)]
    fn unwind_slow(&mut self, f: &mut super::block::Frag, fid: u32, target: u32) {
        while let Some(&top) = f.recs.last() {
            let r = self.recs[top as usize].as_ref().expect("live record");
            if r.left_by(fid, target) {
                f.recs.pop();
                self.leave(top, f.mask);
            } else {
                break;
            }
        }
    }

    /// Parks fragment `id` (already marked waiting) at record `rec`; completes it if all its
    /// lanes are there.
    fn park_at(&mut self, rec: u32, id: u32) {
        let r = self.rec(rec);
        r.parked.push(id);
        if r.arrived == r.expected {
            self.complete(rec);
        }
    }

    /// Returns from the current function of fragment `id` (its return values are in the
    /// frame). True when the fragment can go on running at once.
    fn ret(&mut self, g: &mut GCtx, id: u32) -> bool {
        let f = self.frags[id as usize].as_mut().expect("fragment");
        let (mask, w, pc) = (f.mask, f.warp, f.pc);
        let fid = *f.frames.last().expect("frame");
        let mut left = Vec::new();
        while let Some(&top) = f.recs.last() {
            let r = self.recs[top as usize].as_ref().expect("live record");
            if r.frame == fid && r.call.is_none() {
                f.recs.pop();
                left.push(top);
            } else {
                break;
            }
        }
        let depth = f.frames.len();
        for r in left {
            self.leave(r, mask);
        }
        if depth == 1 {
            // The kernel's own frame: these threads are done.
            self.drop_frag(id);
            self.exit_lanes(g, w, mask, pc);
            return false;
        }
        let f = self.frags[id as usize].as_mut().expect("fragment");
        let top = *f.recs.last().expect("a call record below the callee's records");
        f.wait = Wait::Join(top);
        let r = self.rec(top);
        debug_assert!(r.call.is_some(), "the record below a callee's is its call");
        r.arrived |= mask;
        if r.arrived == r.expected && r.parked.is_empty() {
            let (call_pc, dst) = r.call.expect("call record");
            self.free_rec(top);
            let f = self.frags[id as usize].as_mut().expect("fragment");
            f.wait = Wait::None;
            // finish_call pops the record id from the fragment's list.
            self.finish_call(id, mask, call_pc, dst);
            return true;
        }
        self.park_at(top, id);
        false
    }

    /// Fragment `id` reached a barrier over `scope`. True when it passes at once.
    fn barrier(&mut self, g: &mut GCtx, id: u32, (scope, order): (Persp, bool), func: u32, pc: u32) -> bool {
        let s = self.s;
        let f = self.frags[id as usize].as_ref().expect("fragment");
        let (mask, w) = (f.mask, f.warp);
        let size = match scope.level {
            Level::Thread => self.unit_size(scope),
            Level::Block if scope.n == 1 => u64::from(s.block),
            _ => {
                let f = self.frags[id as usize].as_mut().expect("fragment");
                f.wait = Wait::Grid;
                return false;
            }
        };
        if size <= 1 {
            self.frags[id as usize].as_mut().expect("fragment").pc += 1;
            return true;
        }
        let level = s.levels.level_of(size);
        // The units this fragment's lanes belong to, with their lanes.
        let mut units: Vec<(u64, u32)> = Vec::new();
        for l in lanes_of(mask) {
            let unit = u64::from(w * 32 + l as u32) / size;
            match units.last_mut() {
                Some(u) if u.0 == unit => u.1 |= 1 << l,
                _ => units.push((unit, 1 << l)),
            }
        }
        let span = s.code.funcs[func as usize].info[pc as usize].span;
        // The CUDA backend inlines every device function (`__forceinline__`), so a barrier
        // or a warpgroup operation in a function is one instruction per call site, and the
        // PTX ISA's `.aligned` forms (`bar.sync`, `barrier.sync.aligned`, every `wgmma`)
        // need every thread of the unit at the same instruction: a unit broader than a warp
        // must reach it through the same calls. (`__syncwarp()` is `bar.warp.sync`, which is
        // not `.aligned`: a warp may meet at it from different call sites.)
        // A warpgroup operation (a rendezvous that orders nothing) is compared by its whole
        // dynamic instance, loop iterations included: warps that unsafe control flow (a
        // `continue` some of them take) sends to it from different iterations would join
        // into one wgmma operands the checker made uniform only within each iteration
        // (review R7 F1), and PTX's `.aligned` wgmma needs every thread of the warpgroup to
        // evaluate the conditions around it alike. Barriers keep counting arrivals across
        // iterations, as `bar.sync` does.
        let path = match (size > 32, order) {
            (false, _) => 0,
            (true, true) => self.call_path(self.frags[id as usize].as_ref().expect("fragment")),
            (true, false) => self.instance(self.frags[id as usize].as_ref().expect("fragment"), 0),
        };
        for &(unit, lm) in &units {
            if let Some(b) = self.barriers.get(&(size, unit))
                && (b.site != (func, pc) || b.path != path)
            {
                let other = (b.span, Some(b.first), "other threads of the unit wait at this barrier".to_string());
                let thread = self.thread(w, lm.trailing_zeros());
                let mut notes =
                    vec![format!("the unit is threads {}..{} of the block", unit * size, (unit + 1) * size)];
                let message = if b.site == (func, pc) && !order {
                    notes.push(
                        "a warpgroup operation is `.aligned` in PTX: every thread of the warpgroup must reach the same instruction in the same iteration of every loop around it, through the same calls (the CUDA code inlines every device function)"
                            .into(),
                    );
                    "threads of one warpgroup reached this operation from different iterations or calls"
                } else if b.site == (func, pc) {
                    notes.push(
                        "the CUDA code inlines every device function, so each call makes its own barrier instruction, and every thread of the unit must reach the same one (PTX `.aligned`)"
                            .into(),
                    );
                    "threads of one unit reached a barrier through different calls"
                } else {
                    "threads of one unit reached different barriers"
                };
                self.fatal(
                    g,
                    Report {
                        kind: ReportKind::Divergence,
                        message: message.into(),
                        span,
                        thread,
                        other: Some(other),
                        notes,
                    },
                );
                return false;
            }
            if let Some(gone) = self.exited_in(size, unit) {
                let thread = self.thread(w, lm.trailing_zeros());
                self.fatal(
                    g,
                    Report {
                        kind: ReportKind::Divergence,
                        message: "a barrier was reached after other threads of its unit left the kernel".into(),
                        span,
                        thread,
                        other: None,
                        notes: vec![format!(
                            "{gone} had already returned; every thread of the unit must reach the barrier"
                        )],
                    },
                );
                return false;
            }
        }
        let whole = units.iter().all(|&(unit, lm)| {
            !self.barriers.contains_key(&(size, unit)) && u64::from(lm.count_ones()) == self.unit_threads(size, unit)
        });
        if whole {
            let warp = &mut self.warps[w as usize];
            for l in lanes_of(mask) {
                if order {
                    count_barrier(&mut warp.counts[l], level);
                    count_barrier(&mut warp.arrived[l], level);
                }
            }
            self.frags[id as usize].as_mut().expect("fragment").pc += 1;
            return true;
        }
        self.frags[id as usize].as_mut().expect("fragment").wait = Wait::Barrier(units.len() as u32);
        let mut done = Vec::new();
        for &(unit, lm) in &units {
            let expected = self.unit_threads(size, unit);
            let first = self.thread(w, lm.trailing_zeros());
            let b = self.barriers.entry((size, unit)).or_insert_with(|| BarState {
                site: (func, pc),
                path,
                span,
                first,
                arrived: 0,
                expected,
                parked: Vec::new(),
                lanes: Vec::new(),
                order,
            });
            b.arrived += u64::from(lm.count_ones());
            b.lanes.push((w, lm));
            b.parked.push(id);
            if b.arrived == b.expected {
                done.push(unit);
            }
        }
        for unit in done {
            self.release_barrier(size, unit, level);
        }
        false
    }

    /// The threads in one unit of a barrier over `scope` (the block for block and grid
    /// scopes, which split barriers never have).
    fn unit_size(&self, scope: Persp) -> u64 {
        let t = u64::from(self.s.block);
        match scope.level {
            Level::Thread => scope.n.clamp(1, t),
            _ => t,
        }
    }

    /// The first lane of `mask` (warp `w`) whose local array `local` of frame `fid` is the
    /// accumulator of a wgmma it has not waited for.
    fn wgmma_busy(&self, w: usize, mask: u32, fid: u32, local: u32) -> Option<usize> {
        lanes_of(mask).find(|&l| {
            self.wgmma
                .get(&((w * 32 + l) as u32))
                .is_some_and(|(open, groups)| open.iter().chain(groups.iter().flatten()).any(|p| p.acc == (fid, local)))
        })
    }

    /// The `wgmma-pending` report of lane `l` of warp `w` reaching `loc` through a pointer
    /// (a callee's parameter, a view), when `loc` is an element of a thread-local array that
    /// a wgmma of the lane's thread still writes: what [`Self::wgmma_busy`] checks for a
    /// direct access, for the array's owner (`fr` is frame `fid`, the running one, taken out
    /// of the warp's arena). `what` says whether it was read or written.
    fn wgmma_busy_at(
        &self,
        (fr, fid): (&super::block::Frame, u32),
        (w, l): (usize, usize),
        loc: Loc,
        what: &str,
    ) -> Option<String> {
        let Loc::Local(owner, local, _) = loc else { return None };
        self.wgmma_busy(w, 1 << l, owner, local)?;
        let func = if owner == fid { fr.func } else { self.warps[w].frames.get(owner as usize)?.as_ref()?.func };
        Some(wgmma_pending(&self.s.code.funcs[func as usize], local, what))
    }

    /// Lanes `mask` of warp `w` arrive at split barrier `id` of `func`: each lane's next
    /// phase gains an arrival, and waiters whose phase is now complete wake up.
    fn split_arrive(&mut self, size: u64, func: u32, id: u32, w: usize, mask: u32) {
        let level = self.s.levels.level_of(size);
        let mut touched = Vec::new();
        for l in lanes_of(mask) {
            let warp = &mut self.warps[w];
            count_barrier(&mut warp.arrived[l], level);
            let phase = {
                let st = warp.splits.entry((func, id)).or_insert([(0, 0); 32]);
                st[l].0 += 1;
                st[l].0
            };
            let unit = (w as u64 * 32 + l as u64) / size;
            *self.split_units.entry((size, unit, func, id)).or_default().arrived.entry(phase).or_insert(0) += 1;
            if touched.last() != Some(&unit) {
                touched.push(unit);
            }
        }
        for unit in touched {
            let waiters = self.split_units.get_mut(&(size, unit, func, id)).map(|u| std::mem::take(&mut u.waiters));
            // Waiters re-run their wait, and park again if their phase is still incomplete. A
            // fragment parked at several units may already have been woken by another.
            for f in waiters.unwrap_or_default() {
                if self.frags[f as usize].as_ref().is_some_and(|x| x.wait == Wait::Split) {
                    self.make_runnable(f);
                }
            }
        }
    }

    /// Lanes `mask` of warp `w` wait at split barrier `id`: if every lane's phase has all its
    /// unit's arrivals, they pass (true); otherwise nothing changes (false).
    fn split_wait(&mut self, size: u64, func: u32, id: u32, w: usize, mask: u32) -> bool {
        let st = self.warps[w].splits.get(&(func, id)).copied().unwrap_or([(0, 0); 32]);
        for l in lanes_of(mask) {
            let unit = (w as u64 * 32 + l as u64) / size;
            let phase = st[l].1 + 1;
            let arrived =
                self.split_units.get(&(size, unit, func, id)).and_then(|u| u.arrived.get(&phase)).copied().unwrap_or(0);
            if arrived < self.unit_threads(size, unit) {
                return false;
            }
        }
        let level = self.s.levels.level_of(size);
        for l in lanes_of(mask) {
            let unit = (w as u64 * 32 + l as u64) / size;
            let warp = &mut self.warps[w];
            count_barrier(&mut warp.counts[l], level);
            let phase = {
                let st = warp.splits.entry((func, id)).or_insert([(0, 0); 32]);
                st[l].1 += 1;
                st[l].1
            };
            let expected = self.unit_threads(size, unit);
            if let Some(u) = self.split_units.get_mut(&(size, unit, func, id)) {
                let passed = u.passed.entry(phase).or_insert(0);
                *passed += 1;
                if *passed == expected {
                    u.passed.remove(&phase);
                    u.arrived.remove(&phase);
                }
            }
        }
        true
    }

    /// Parks fragment `frag` until an arrival at a unit of its lanes.
    fn split_park(&mut self, size: u64, func: u32, id: u32, w: usize, mask: u32, frag: u32) {
        let mut last = None;
        for l in lanes_of(mask) {
            let unit = (w as u64 * 32 + l as u64) / size;
            if last != Some(unit) {
                self.split_units.entry((size, unit, func, id)).or_default().waiters.push(frag);
                last = Some(unit);
            }
        }
    }

    /// A thread of unit `unit` (of `size` threads) that has left the kernel, if any.
    fn exited_in(&self, size: u64, unit: u64) -> Option<Thread> {
        let (start, end) = (unit * size, (unit + 1) * size);
        for w in (start / 32)..end.div_ceil(32).min(self.warps.len() as u64) {
            let warp = &self.warps[w as usize];
            for l in lanes_of(warp.exited) {
                let tid = w * 32 + l as u64;
                if (start..end).contains(&tid) {
                    return Some(self.thread(w as u32, l as u32));
                }
            }
        }
        None
    }

    /// Every thread of a unit has arrived: count the barrier and let them go.
    fn release_barrier(&mut self, size: u64, unit: u64, level: usize) {
        let b = self.barriers.remove(&(size, unit)).expect("a waiting unit");
        for &(w, lm) in b.lanes.iter().filter(|_| b.order) {
            let warp = &mut self.warps[w as usize];
            for l in lanes_of(lm) {
                count_barrier(&mut warp.counts[l], level);
                count_barrier(&mut warp.arrived[l], level);
            }
        }
        for p in b.parked {
            let Some(f) = self.frags[p as usize].as_mut() else { continue };
            if let Wait::Barrier(n) = f.wait {
                if n <= 1 {
                    f.pc += 1;
                    self.make_runnable(p);
                } else {
                    f.wait = Wait::Barrier(n - 1);
                }
            }
        }
    }

    /// Fragment `id` reached a warp collective without the rest of its warp: it waits for
    /// the other lanes, which must reach the same collective.
    fn collective_arrive(&mut self, g: &mut GCtx, id: u32) {
        let f = self.frags[id as usize].as_mut().expect("fragment");
        let (w, mask, pc) = (f.warp as usize, f.mask, f.pc);
        f.wait = Wait::Collective;
        let func = self.func_of(self.frags[id as usize].as_ref().expect("fragment"));
        let site = (func, pc);
        let span = self.s.code.funcs[func as usize].info[pc as usize].span;
        let thread = self.thread(w as u32, mask.trailing_zeros());
        let live = self.warps[w].live;
        if self.warps[w].exited & live != 0 {
            let gone = self.thread(w as u32, (self.warps[w].exited & live).trailing_zeros());
            self.fatal(
                g,
                Report {
                    kind: ReportKind::Divergence,
                    message: "a warp collective was reached after other lanes of the warp left the kernel".into(),
                    span,
                    thread,
                    other: None,
                    notes: vec![format!("{gone} had already returned; all 32 lanes must take part")],
                },
            );
            return;
        }
        let clash = self.colls[w].as_ref().filter(|c| c.site != site).map(|c| {
            let other_span = self.s.code.funcs[c.site.0 as usize].info[c.site.1 as usize].span;
            (other_span, self.thread(w as u32, c.arrived.trailing_zeros()))
        });
        match &mut self.colls[w] {
            Some(_) if clash.is_some() => {
                let (other_span, other_thread) = clash.expect("checked");
                self.fatal(
                    g,
                    Report {
                        kind: ReportKind::Divergence,
                        message: "lanes of one warp reached different warp collectives".into(),
                        span,
                        thread,
                        other: Some((other_span, Some(other_thread), "other lanes wait here".into())),
                        notes: Vec::new(),
                    },
                );
                return;
            }
            Some(c) => {
                c.arrived |= mask;
                c.parked.push(id);
            }
            None => self.colls[w] = Some(CollState { site, arrived: mask, parked: vec![id] }),
        }
        if self.colls[w].as_ref().is_some_and(|c| c.arrived == live) {
            self.finish_collective(w);
        }
    }

    /// Runs a collective whose lanes all arrived, possibly in several fragments.
    fn finish_collective(&mut self, w: usize) {
        let c = self.colls[w].take().expect("a waiting collective");
        let Op::Intr(ins) = &self.s.code.funcs[c.site.0 as usize].ops[c.site.1 as usize] else {
            unreachable!("collectives are intrinsics")
        };
        let mut frame_of = [u32::MAX; 32];
        for &p in &c.parked {
            let f = self.frags[p as usize].as_ref().expect("parked fragment");
            let fid = *f.frames.last().expect("frame");
            for l in lanes_of(f.mask) {
                frame_of[l] = fid;
            }
        }
        let elect = intr::elect_key(self.s.cfg.seed);
        let warp = &mut self.warps[w];
        let outs = {
            let frames = &warp.frames;
            let mut read = |r: R| -> intr::Lanes {
                let mut out = [0; 32];
                for (l, &fid) in frame_of.iter().enumerate() {
                    if fid != u32::MAX {
                        out[l] = frames[fid as usize].as_ref().expect("frame").regs[r as usize * 32 + l];
                    }
                }
                out
            };
            intr::collective(ins, c.arrived, elect, &mut read)
        };
        for (d, vals) in outs {
            for (l, &fid) in frame_of.iter().enumerate() {
                if fid != u32::MAX {
                    warp.frames[fid as usize].as_mut().expect("frame").regs[d as usize * 32 + l] = vals[l];
                }
            }
        }
        for p in c.parked {
            if let Some(f) = self.frags[p as usize].as_mut() {
                f.pc += 1;
            }
            self.make_runnable(p);
        }
    }

    /// Checks that `vals` (a condition, a variable, a value crossing a call) are the same in
    /// every thread of each `persp`-unit. The fragment's own lanes are compared directly;
    /// with `whole_unit` (a check that every thread of the unit makes), the rest of the unit
    /// too: each part that reaches the check in another fragment (other warps, other blocks,
    /// lanes of this warp that got here by another path) compares its value with the first
    /// one any part gave at the same dynamic instance of the check ([`Self::instance`]).
    /// Reports with `what` and returns false if not.
    #[allow(clippy::too_many_arguments)]
    fn uniform(
        &mut self,
        g: &mut GCtx,
        f: &super::block::Frag,
        vals: &[u64],
        persp: Persp,
        func: u32,
        what: Uniform<'_>,
        whole_unit: bool,
    ) -> bool {
        let s = self.s;
        let span = s.code.funcs[func as usize].info[f.pc as usize].span;
        let t = u64::from(s.block);
        // Units broader than a block (`block[k]`, `grid[1]`): compared across blocks (below)
        // for values unsafe code left; conditions are compared within each block only (code
        // broader than a block branches on values the checker or these checks made uniform).
        let whole = persp.threads(t, u64::from(s.grid));
        let across = whole > t && !matches!(what, Uniform::Condition(_));
        let n = whole.clamp(1, t);
        if n == 1 && !across {
            return true;
        }
        let w = f.warp;
        // The fragment's lanes by unit (units are aligned ranges of threads, so a unit's
        // lanes are consecutive): the unit, its first lane here and how many lanes.
        let mut units = [(0u64, 0usize, 0u64); 32];
        let mut count = 0;
        for l in lanes_of(f.mask) {
            let unit = u64::from(w * 32 + l as u32) / n;
            if count > 0 && units[count - 1].0 == unit {
                let first = units[count - 1].1;
                if vals[l] != vals[first] {
                    let (a, b) = ((self.thread(w, first as u32), vals[first]), (self.thread(w, l as u32), vals[l]));
                    self.non_uniform(g, span, persp, what, a, b);
                    return false;
                }
                units[count - 1].2 += 1;
            } else {
                units[count] = (unit, l, 1);
                count += 1;
            }
        }
        if !whole_unit {
            return true;
        }
        // An array's elements are checked one after the other at the same op: each is an
        // evaluation of its own.
        let elem = match what {
            Uniform::Element(_, _, i)
            | Uniform::ArgElement { index: i, .. }
            | Uniform::OperandElement { index: i, .. } => i as u64 + 1,
            _ => 0,
        };
        let mut instance = None;
        for &(unit, lane, lanes) in &units[..count] {
            let (value, me) = (vals[lane], self.thread(w, lane as u32));
            let mismatch = if across {
                // Every thread of every block of the unit compares with the first value seen
                // at this instance (docs/simulator.md, Uniformity).
                let blocks = whole / t;
                let inst = *instance.get_or_insert_with(|| self.instance(f, elem));
                let key = (whole, u64::from(self.block) / blocks, func, f.pc, inst);
                let mut table = s.across.lock().unwrap_or_else(|e| e.into_inner());
                join_check(&mut table, key, (value, lanes, me), whole)
            } else {
                let total = self.unit_threads(n, unit);
                if lanes >= total {
                    // This fragment holds the whole unit.
                    continue;
                }
                let inst = *instance.get_or_insert_with(|| self.instance(f, elem));
                join_check(&mut self.utable, (n, unit, func, f.pc, inst), (value, lanes, me), total)
            };
            if let Some(other) = mismatch {
                self.non_uniform(g, span, persp, what, other, (me, value));
                return false;
            }
        }
        true
    }

    /// The dynamic instance of the op fragment `f` is at, as a number: the calls its lanes
    /// are in (by their call ops) and the loops (by their exits, with the iteration), from
    /// the kernel inwards, and `elem` (an array's element, which one op checks in turn). Within one iteration of its innermost loop a thread runs an op at
    /// most once, so the threads of a unit that reach a check with the same number are at
    /// the same evaluation of it, wherever and whenever each gets there. (Counting each
    /// warp's evaluations instead, as until 2026-11-29, pairs different evaluations once
    /// some threads of the unit skip one: a `break`, `continue` or `return` out of unsafe
    /// code taken by some of them.)
    fn instance(&self, f: &super::block::Frag, elem: u64) -> u64 {
        let mut h = super::lanes::WordHash::default();
        h.add(elem);
        for &r in &f.recs {
            let Some(rec) = self.recs[r as usize].as_ref() else { continue };
            match (rec.call, rec.iteration) {
                (Some((pc, _)), _) => h.add(u64::from(pc) << 1),
                (None, Some(i)) => {
                    h.add((u64::from(rec.join) << 1) | 1);
                    h.add(u64::from(i));
                }
                _ => {}
            }
        }
        h.finish()
    }

    /// The calls fragment `f`'s lanes are in, from the kernel inwards, as a number (their
    /// call ops; loop iterations do not count): threads in one function with equal numbers
    /// got there through the same call sites.
    fn call_path(&self, f: &super::block::Frag) -> u64 {
        let mut h = super::lanes::WordHash::default();
        for &r in &f.recs {
            if let Some(Some((pc, _))) = self.recs[r as usize].as_ref().map(|rec| rec.call) {
                h.add(u64::from(pc));
            }
        }
        h.finish()
    }

    /// Counts a test of the condition of the loop whose exit is `exit`, on the loop's record
    /// (fragment `f`'s innermost there): its lanes go on to the next iteration, a new
    /// dynamic instance of every check in the loop.
    fn next_iteration(&mut self, f: &super::block::Frag, exit: u32) {
        if let Some(&top) = f.recs.last()
            && let Some(r) = self.recs[top as usize].as_mut()
            && r.join == exit
            && let Some(i) = r.iteration.as_mut()
        {
            *i = i.wrapping_add(1);
        }
    }

    /// Checks (when uniformity checks are on) that a condition of code at its perspective is
    /// the same in every thread of each unit; reports and returns false if not.
    fn condition_uniform(
        &mut self,
        g: &mut GCtx,
        f: &super::block::Frag,
        cond: &[u64],
        fc: &FuncCode,
        func: u32,
        kind: &str,
    ) -> bool {
        !self.s.cfg.checks.uniformity
            || self.uniform(g, f, &bools(cond), fc.info[f.pc as usize].code, func, Uniform::Condition(kind), true)
    }

    /// When pointer argument `ptrs` (its lanes) points into thread-local arrays: the array's
    /// name and element type, and each element's value in each lane's own copy (zero for a
    /// lane outside `mask` or pointing elsewhere: the pointers' check compared those, and a
    /// unit whose lanes all point elsewhere compares zeros). All the lanes of one op point
    /// into the same array (a local array's address is taken once for the whole warp and
    /// pointers cannot be chosen per thread), so its length and type hold for every lane.
    /// `fr` is the current frame, `fid` its id, out of warp `w`'s arena while it runs.
    fn local_copies(
        &self,
        fr: &super::block::Frame,
        fid: u32,
        w: usize,
        mask: u32,
        ptrs: &[u64],
    ) -> Option<(String, Scalar, Vec<[u64; 32]>)> {
        let first = lanes_of(mask).map(|l| Ptr::decode(ptrs[l])).find(|p| p.space == Space::Local)?;
        let frame_of = |a: u64| {
            if a == u64::from(fid) { Some(fr) } else { self.warps[w].frames.get(a as usize).and_then(|f| f.as_deref()) }
        };
        let frame = frame_of(first.a)?;
        let fc = &self.s.code.funcs[frame.func as usize];
        let (ty, len) = *fc.locals.get(first.b as usize)?;
        let name = fc.local_names.get(first.b as usize).cloned().unwrap_or_else(|| "?".into());
        let mut elems = vec![[0u64; 32]; len as usize];
        for l in lanes_of(mask) {
            let p = Ptr::decode(ptrs[l]);
            let Some(copy) =
                (p.space == Space::Local).then(|| frame_of(p.a)).flatten().and_then(|f| f.locals.get(p.b as usize))
            else {
                continue;
            };
            for (e, vals) in elems.iter_mut().enumerate() {
                vals[l] = copy.get(e * 32 + l).copied().unwrap_or(0);
            }
        }
        Some((name, ty, elems))
    }

    fn non_uniform(
        &mut self,
        g: &mut GCtx,
        span: Span,
        persp: Persp,
        what: Uniform<'_>,
        a: (Thread, u64),
        b: (Thread, u64),
    ) {
        let s = self.s;
        let p = persp_text(persp);
        // A way out of a loop is something a thread did, not a value it has.
        let did = matches!(what, Uniform::Left { .. });
        let (message, show, rule): (String, &dyn Fn(u64) -> String, String) = match what {
            Uniform::Condition(kind) => (
                format!("this {kind} differs between threads of one `{p}` unit"),
                &|v| (v != 0).to_string(),
                format!("code at `{p}` must take the same path in all threads of each unit"),
            ),
            Uniform::Element(name, ty, i) => (
                format!(
                    "`{name}` is at `{p}`, but this `with unsafe:` code left its element {i} different in threads of one unit"
                ),
                &move |v| value::show(ty, v),
                format!(
                    "an array at `{p}` holds the same elements in every thread of a `{p}` unit; unsafe code is trusted to keep that promise"
                ),
            ),
            Uniform::Left { continued: false } => (
                format!(
                    "the threads of one `{p}` unit left this loop at different iterations: this `break` out of `with unsafe:` code was taken by only some of them"
                ),
                &|v| {
                    if v == 0 {
                        "ran the loop to its end".to_string()
                    } else {
                        format!("broke out in its {} iteration", ordinal(v))
                    }
                },
                format!(
                    "code at `{p}` runs by whole `{p}` units: the loop's threads must leave it together; unsafe code is trusted to keep that promise, by its control flow as by its values"
                ),
            ),
            Uniform::Left { continued: true } => (
                format!(
                    "this `continue` out of `with unsafe:` code was taken by only some threads of one `{p}` unit in the same iteration"
                ),
                &|v| if v == 0 { "went on with the iteration".to_string() } else { "continued".to_string() },
                format!(
                    "code at `{p}` runs by whole `{p}` units: the rest of the iteration must be run by all the loop's threads or by none; unsafe code is trusted to keep that promise, by its control flow as by its values"
                ),
            ),
            Uniform::Returned(ty) => (
                format!("this `with unsafe:` code returns a value that differs between threads of one `{p}` unit"),
                &move |v| value::show(ty, v),
                format!(
                    "the function's return type promises one value per `{p}` unit; unsafe code is trusted to keep that promise"
                ),
            ),
            Uniform::Argument { callee, param, ty } => (
                format!(
                    "this `with unsafe:` code passes `{callee}` a value for `{param}` that differs between threads of one `{p}` unit"
                ),
                &move |v| value::show(ty, v),
                format!(
                    "`{param}` is at `{p}`: `{callee}` relies on one value per `{p}` unit; unsafe code is trusted to keep that promise"
                ),
            ),
            Uniform::ArgElement { callee, param, array, ty, index } => (
                format!(
                    "this `with unsafe:` code passes `{callee}` the array `{array}` for `{param}`, and its element {index} differs between threads of one `{p}` unit"
                ),
                &move |v| value::show(ty, v),
                format!(
                    "`{param}` is at `{p}`: each thread reads its own copy of a thread-local array, so every copy must hold the same elements; unsafe code is trusted to keep that promise"
                ),
            ),
            Uniform::Pointer { callee, param, block } => (
                format!(
                    "this `with unsafe:` code passes `{callee}` a pointer or view for `{param}` that differs between threads of one `{p}` unit"
                ),
                &move |v| show_pointer(s, v, block),
                format!(
                    "`{param}` is at `{p}`: `{callee}` relies on one view of memory per `{p}` unit (the same base and offset, so whatever a view's index function captured must be uniform over the unit); unsafe code is trusted to keep that promise"
                ),
            ),
            Uniform::Operand { intrinsic, operand, ty, block } => (
                format!(
                    "operand `{operand}` of `{intrinsic}` differs between threads of one `{p}` unit that issue it together"
                ),
                &move |v| match ty {
                    Some(ty) => value::show(ty, v),
                    None => show_pointer(s, v, block),
                },
                format!(
                    "`{operand}` is at `{p}`: the unit issues `{intrinsic}` as one operation, which takes one `{operand}` for all its threads (for memory, one address: the same base and offset); on the GPU, threads that disagree make the result undefined, where the simulator would use each thread's own; unsafe code is trusted to keep that promise, both by what it passes and by its control flow (a `continue` or `break` that some warps of the unit take makes them issue it from different iterations)"
                ),
            ),
            Uniform::OperandElement { intrinsic, operand, array, ty, index } => (
                format!(
                    "operand `{operand}` of `{intrinsic}` is the array `{array}`, and its element {index} differs between threads of one `{p}` unit that issue it together"
                ),
                &move |v| value::show(ty, v),
                format!(
                    "`{operand}` is at `{p}`: the unit issues `{intrinsic}` as one operation, which reads one copy of a thread-local array for all its threads, so every copy must hold the same elements; unsafe code is trusted to keep that promise"
                ),
            ),
            Uniform::Result { callee, ty } => (
                format!("`{callee}` returned a value that differs between threads of one `{p}` unit"),
                &move |v| value::show(ty, v),
                format!(
                    "`{callee}` promises one value per `{p}` unit, whichever `return` each thread takes; its unsafe code is trusted to keep that promise"
                ),
            ),
            Uniform::Variable(name, ty) => (
                format!("`{name}` is at `{p}`, but this `with unsafe:` code left it different in threads of one unit"),
                &move |v| value::show(ty, v),
                format!(
                    "a variable at `{p}` holds one value per `{p}` unit; unsafe code is trusted to keep that promise"
                ),
            ),
        };
        self.fatal(
            g,
            Report {
                kind: ReportKind::NonUniform,
                message,
                span,
                thread: b.0,
                other: None,
                notes: vec![
                    if did {
                        format!("{} {} but {} {}", a.0, show(a.1), b.0, show(b.1))
                    } else {
                        format!("{} has `{}` but {} has `{}`", a.0, show(a.1), b.0, show(b.1))
                    },
                    rule,
                ],
            },
        );
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, … `11th`, `21st`.
fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The message for an out-of-bounds access.
fn oob(fc: &FuncCode, access: u32, what: &str, why: &str) -> String {
    match fc.accesses.get(access as usize) {
        Some(a) => format!("out-of-bounds {what} of `{}`: {why}", fc.mems[a.mem.index()].name),
        None => format!("out-of-bounds {what}: {why}"),
    }
}

fn misaligned(fc: &FuncCode, access: u32, what: &str, why: &str) -> String {
    match fc.accesses.get(access as usize) {
        Some(a) => format!("misaligned {what} of `{}`: {why}", fc.mems[a.mem.index()].name),
        None => format!("misaligned {what}: {why}"),
    }
}

fn local_oob(fc: &FuncCode, local: u32, what: &str, i: i128, n: i128) -> String {
    let name = fc.local_names.get(local as usize).map(String::as_str).unwrap_or("?");
    format!("out-of-bounds {what} of the local array `{name}`: index {i} is outside 0..{n}")
}

fn persp_text(p: Persp) -> String {
    let level = match p.level {
        Level::Thread => "thread",
        Level::Block => "block",
        Level::Grid => "grid",
    };
    format!("{level}[{}]", p.n)
}

/// Counts a barrier at `level` in one thread's counts, unless it is a level the shadow does
/// not keep (`shadow::Levels::level_of`): such barriers order nothing in the race checks.
fn count_barrier(counts: &mut [u32; crate::shadow::LEVELS], level: usize) {
    if let Some(c) = counts.get_mut(level) {
        *c += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::{BinOp, Scalar, bin_fast, div_pow2, ordinal};
    use crate::{ops, value};

    #[test]
    fn ordinals_take_the_suffix_of_their_last_digits() {
        let got: Vec<String> = [1, 2, 3, 4, 10, 11, 12, 13, 21, 22, 23, 101, 111, 112].map(ordinal).to_vec();
        let want = [
            "1st", "2nd", "3rd", "4th", "10th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st", "111th",
            "112th",
        ];
        assert_eq!(got, want);
    }

    /// Division and remainder by a power of two as shifts give, lane by lane, what
    /// [`ops::bin`] gives: for every power of two a type admits, on dividends at the
    /// wraparound points (the most negative value, -1, multiples of the divisor and their
    /// neighbours) and random ones; other divisors (zero, negative, not a power of two,
    /// beyond the positive range) are left to the general path.
    #[test]
    fn div_pow2_gives_the_bits_of_ops_bin() {
        let mut r = crate::rng::Rng::new(11);
        for ty in [Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64] {
            let bits = ty.size() as u32 * 8;
            for k in 0..bits {
                let d = value::norm(ty, 1u64 << k);
                let positive = !ty.is_signed_int() || k < bits - 1;
                for op in [BinOp::Div, BinOp::Rem] {
                    let mut edges =
                        vec![0u64, 1, u64::MAX, 1u64 << (bits - 1), (1u64 << (bits - 1)) - 1, d, d - 1, d + 1];
                    edges.extend([
                        d.wrapping_neg(),
                        d.wrapping_neg().wrapping_sub(1),
                        d.wrapping_neg().wrapping_add(1),
                    ]);
                    let x: [u64; 32] = std::array::from_fn(|l| {
                        value::norm(ty, if l < edges.len() { edges[l] } else { r.next_u64() >> (r.next_u64() % 64) })
                    });
                    let got = div_pow2(op, ty, Some(d), &x);
                    assert_eq!(got.is_some(), positive, "{op:?} {ty:?} by {d:#x}");
                    let Some(got) = got else { continue };
                    for l in 0..32 {
                        let want = ops::bin(op, ty, x[l], d, ty).expect("nonzero divisor");
                        assert_eq!(got[l], want, "{op:?} {ty:?} {:#x} by {d:#x}", x[l]);
                    }
                }
            }
            for d in [0u64, 3, 6, 12, u64::MAX, value::norm(ty, u64::MAX - 7)] {
                assert!(div_pow2(BinOp::Div, ty, Some(value::norm(ty, d)), &[5; 32]).is_none(), "{ty:?} by {d:#x}");
            }
            assert!(div_pow2(BinOp::Div, ty, None, &[5; 32]).is_none());
            assert!(div_pow2(BinOp::Add, ty, Some(4), &[5; 32]).is_none());
        }
        assert!(div_pow2(BinOp::Div, Scalar::F32, Some(4), &[5; 32]).is_none());
    }

    /// The straight-lane binary operations give, lane by lane, what [`ops::bin`] gives (the
    /// reference): on canonical operands of each type, near the wraparound points and on
    /// random ones, 32 lanes at once and one.
    #[test]
    fn bin_fast_gives_the_bits_of_ops_bin() {
        use BinOp::*;
        let mut r = crate::rng::Rng::new(5);
        let edges: [u64; 10] = [0, 1, 2, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF, 0x1_0000, 46341, 3];
        let ops_of = [Add, Sub, Mul, Div, Lt, Le, Gt, Ge, Eq, Ne, BitAnd, BitOr, BitXor, And, Or];
        for ty in [Scalar::I32, Scalar::U32, Scalar::F32, Scalar::F64, Scalar::Bool] {
            for _ in 0..200 {
                let mut draw = || {
                    let v = if r.chance(30) { *r.pick(&edges) } else { r.next_u64() };
                    let v = if r.chance(50) { v.wrapping_neg() } else { v };
                    let v = if ty == Scalar::Bool { v & 1 } else { v };
                    value::norm(ty, v)
                };
                let x: [u64; 32] = std::array::from_fn(|_| draw());
                let y: [u64; 32] = std::array::from_fn(|_| draw());
                for op in ops_of {
                    let mut out = [0u64; 32];
                    if !bin_fast(op, ty, &mut out, &x, &y) {
                        continue;
                    }
                    for l in 0..32 {
                        let want = ops::bin(op, ty, x[l], y[l], ty).expect("no division in the fast set");
                        let mut one = [0u64; 1];
                        assert!(bin_fast(op, ty, &mut one, &[x[l]], &[y[l]]));
                        // Which operand's NaN payload an operation passes on is the host's
                        // choice (the compiler may swap a sum's operands), and a GPU returns
                        // its own canonical NaN: results that are NaN are compared as NaN.
                        let nan = |v: u64| match ty {
                            Scalar::F32 => f32::from_bits(v as u32).is_nan(),
                            Scalar::F64 => f64::from_bits(v).is_nan(),
                            _ => false,
                        };
                        for got in [out[l], one[0]] {
                            assert!(
                                got == want || (nan(got) && nan(want)),
                                "{op:?} {ty:?} {:#x} {:#x}: {got:#x}, want {want:#x}",
                                x[l],
                                y[l]
                            );
                        }
                    }
                }
            }
        }
    }
}
