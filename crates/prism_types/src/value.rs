//! Scalar values as register bits, and the conversions between them.
//!
//! The language's scalar semantics, shared by the simulator (`prism_interp`, which runs on
//! these bits) and the CUDA backend (`prism_cuda`, whose `half`/`bf16` literals are these
//! roundings), so that both compute the same bits.
//!
//! A register lane holds 64 bits. Each scalar type keeps its natural bit pattern in the low
//! bits: signed integers sign-extended to 64 bits, unsigned ones zero-extended, `float` as its
//! IEEE bits, `half` and `bf16` as their 16-bit patterns, `bool` as 0 or 1. Arithmetic on
//! integers wraps (two's complement), as on the GPU.

use crate::tir::{BinOp, ConstValue};
use crate::ty::Scalar;
use half::{bf16, f16};

/// Normalises bits to the canonical form of `ty` (sign- or zero-extension).
#[inline(always)]
pub fn norm(ty: Scalar, v: u64) -> u64 {
    match ty {
        Scalar::I32 => v as i32 as i64 as u64,
        Scalar::U32 | Scalar::F32 => v & 0xFFFF_FFFF,
        Scalar::F16 | Scalar::BF16 => v & 0xFFFF,
        Scalar::Bool => (v != 0) as u64,
        Scalar::I64 | Scalar::U64 | Scalar::F64 => v,
    }
}

/// The value of a float-typed register as `f64`.
#[inline(always)]
pub fn to_f64(ty: Scalar, v: u64) -> f64 {
    match ty {
        Scalar::F32 => f32::from_bits(v as u32) as f64,
        Scalar::F64 => f64::from_bits(v),
        Scalar::F16 => f16::from_bits(v as u16).to_f64(),
        Scalar::BF16 => bf16::from_bits(v as u16).to_f64(),
        Scalar::I32 | Scalar::I64 => v as i64 as f64,
        Scalar::U32 | Scalar::U64 => v as f64,
        Scalar::Bool => (v != 0) as u8 as f64,
    }
}

/// The NaN a GPU's `float` arithmetic returns: all payload bits set, sign clear. Measured on
/// an H200 (BENCHMARKS.md, 2026-11-28 probes): `0 / 0`, `inf - inf`, `NaN + 1` and `NaN * 0`
/// all give `0x7fffffff`, where the host's SSE arithmetic gives `0xffc00000` or passes an
/// operand's payload on. PTX's `min`/`max` return the same canonical NaN.
pub const CANONICAL_NAN_F32: u64 = 0x7FFF_FFFF;

/// The bits of a `float` result of arithmetic (`+ - * / %`, `fma`, the math functions):
/// a NaN becomes the GPU's canonical NaN, so a NaN output is the same bits in the simulator
/// and on the GPU. Moves of bits (loads, shuffles, `abs`, negation, conversions) keep a NaN's
/// payload and do not come through here.
#[inline(always)]
pub fn f32_result(x: f32) -> u64 {
    if x.is_nan() { CANONICAL_NAN_F32 } else { x.to_bits() as u64 }
}

/// The NaN a GPU's `double` arithmetic returns: sign set, quiet bit only. Measured on an
/// H200 for `0 / 0`, `inf - inf`, `NaN + 1`, `NaN * 0`, `sqrt`, `fma`, `log` and `exp`
/// (BENCHMARKS.md, 2026-11-28 probes). x86's SSE makes the same NaN, other hosts (AArch64:
/// `0x7ff8000000000000`) do not, so the simulator sets it.
pub const CANONICAL_NAN_F64: u64 = 0xFFF8_0000_0000_0000;

/// [`f32_result`] for `double`.
#[inline(always)]
pub fn f64_result(x: f64) -> u64 {
    if x.is_nan() { CANONICAL_NAN_F64 } else { x.to_bits() }
}

/// The NaN a GPU's `half` and `bf16` arithmetic returns: sign clear, every other bit set.
/// The CUDA computes the 16-bit math functions and `__hdiv` in `float`, whose NaN is
/// [`CANONICAL_NAN_F32`], and converting that gives `0x7fff` in both formats; `HADD2` and
/// `HMUL2` return NVIDIA's canonical `0x7fff` too (not yet probed: `nan_half` in
/// bench/gpu/probes.prism). Until 2026-12-01 the simulator kept the host's NaN here
/// (`0xfe00` and `0xffc0` on x86, other bits on AArch64; review R40).
pub const CANONICAL_NAN_16: u64 = 0x7FFF;

/// The bits of a result of arithmetic on floats of type `ty` computed in `f64`: a NaN is
/// the GPU's ([`f64_result`], [`CANONICAL_NAN_16`]); other values round as [`from_f64`] does.
#[inline(always)]
pub fn arith_result(ty: Scalar, x: f64) -> u64 {
    match ty {
        Scalar::F64 => f64_result(x),
        Scalar::F16 | Scalar::BF16 if x.is_nan() => CANONICAL_NAN_16,
        _ => from_f64(ty, x),
    }
}

/// `a op b` for the arithmetic operators (`+ - * / %`) on floats of type `ty`, as bits: the
/// run-time rule, which the simulator runs and the checker folds constants with (review R46:
/// folding in the host's `double` kept the host's NaN, `0xffc00000` on x86, where run time
/// gives [`CANONICAL_NAN_F32`]). `float` computes in `f32` and canonicalises a NaN; the other
/// types compute exactly in `f64` and round once ([`arith_result`]).
#[inline(always)]
pub fn float_arith(op: BinOp, ty: Scalar, a: u64, b: u64) -> u64 {
    if ty == Scalar::F32 {
        let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
        return f32_result(match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            _ => x % y,
        });
    }
    let (x, y) = (to_f64(ty, a), to_f64(ty, b));
    arith_result(
        ty,
        match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            _ => x % y,
        },
    )
}

/// `min(a, b)` or `max(a, b)` of two values of type `ty`, as bits. Integers compare by
/// value; floats follow PTX's `min`/`max` (IEEE 754-2019 minimumNumber/maximumNumber): a NaN
/// operand is ignored, two NaNs give [`min_max_nan`], and -0 is below +0. Every case is
/// decided here, not by `f64::max`, which may return either zero and any NaN's bits depending
/// on how the compiler vectorised the loop around it. The simulator runs it and the checker
/// folds `min`/`max` of constants with it, so a literal operand and a variable holding the
/// same value give the same bits (review R46: the folding used `<` and returned `+0.0` for
/// `min(-0.0, 0.0)` and a NaN for `min(1.0, nan)`).
#[inline(always)]
pub fn min_max(max: bool, ty: Scalar, a: u64, b: u64) -> u64 {
    if ty.is_float() {
        let (x, y) = (to_f64(ty, a), to_f64(ty, b));
        return match (x.is_nan(), y.is_nan()) {
            (true, true) => min_max_nan(ty),
            (true, false) => b,
            (false, true) => a,
            // Equal values have equal bits except for zeros of both signs.
            _ if x == y => {
                if x.is_sign_negative() == max {
                    b
                } else {
                    a
                }
            }
            _ => {
                if (x > y) == max {
                    a
                } else {
                    b
                }
            }
        };
    }
    let less = if ty.is_signed_int() { (a as i64) < (b as i64) } else { a < b };
    if less == max { b } else { a }
}

/// The NaN PTX's `min`/`max` return for two NaN operands (its canonical NaN: all payload
/// bits set, sign clear). For `float` it is the NaN the H200 returned from arithmetic too
/// ([`CANONICAL_NAN_F32`]); the 16- and 64-bit ones have not been probed on a GPU (`double`
/// arithmetic returned `0xfff8000000000000` there, see [`f64_result`]).
pub fn min_max_nan(ty: Scalar) -> u64 {
    match ty.size() {
        2 => 0x7FFF,
        4 => CANONICAL_NAN_F32,
        _ => 0x7FFF_FFFF_FFFF_FFFF,
    }
}

/// The `float` nearest `x`, as bits (`cvt.rn.f32.f64`). A NaN keeps its sign and the top 22
/// bits of its payload with the quiet bit set, as x86's and AArch64's conversions do, written
/// out because Rust leaves the NaN bits of an `as` conversion to the host: the checker's
/// `float` constants are held as `f64` and come back to bits through here.
#[inline(always)]
pub fn f64_to_f32_bits(x: f64) -> u32 {
    if x.is_nan() {
        let b = x.to_bits();
        return ((b >> 32) as u32 & 0x8000_0000) | 0x7FC0_0000 | ((b >> 29) as u32 & 0x003F_FFFF);
    }
    (x as f32).to_bits()
}

/// The `f64` equal to the `float` with bits `v`; a NaN keeps its sign and its payload in the
/// top bits of the `double`'s, so that [`f64_to_f32_bits`] gives `v` back. How the checker
/// holds a `float` constant computed as bits (a NaN of [`float_arith`] included), whatever
/// the host does with the NaN of an `as` conversion.
pub fn f32_bits_to_f64(v: u32) -> f64 {
    let x = f32::from_bits(v);
    if !x.is_nan() {
        return x as f64;
    }
    let sign = u64::from(v >> 31) << 63;
    f64::from_bits(sign | 0x7FF0_0000_0000_0000 | (u64::from(v & 0x007F_FFFF) << 29))
}

/// Bits of a float value of type `ty` (rounding to nearest even, once: `cvt.rn`).
#[inline(always)]
pub fn from_f64(ty: Scalar, x: f64) -> u64 {
    match ty {
        Scalar::F32 => f64_to_f32_bits(x) as u64,
        Scalar::F64 => x.to_bits(),
        Scalar::F16 => f64_to_f16_bits(x) as u64,
        Scalar::BF16 => f64_to_bf16_bits(x) as u64,
        _ => from_f64_int(ty, x),
    }
}

/// Rounds `(-1)^neg * m * 2^e` (`m > 0`) to nearest even in the binary format with `exp`
/// exponent bits and `man` stored significand bits, with gradual underflow and overflow to
/// infinity, as `cvt.rn` does; the result is the format's bits. Exact integer arithmetic,
/// independent of the host's floating point.
fn round_to_format(neg: bool, m: u128, e: i32, exp: u32, man: u32) -> u64 {
    let bias = (1i32 << (exp - 1)) - 1;
    let emin = 1 - bias;
    let n = 128 - m.leading_zeros() as i32; // significant bits of m
    // The exponent of the result's last place: the value's own binade, or the subnormals'.
    let q = (e + n - 1).max(emin) - man as i32;
    let shift = q - e;
    let kept = if shift <= 0 {
        m << (-shift) as u32
    } else if shift > n {
        0 // below half of the last place (only reached when the last place is above m)
    } else {
        let kept = m >> shift;
        let rest = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rest > half || (rest == half && kept & 1 == 1) { kept + 1 } else { kept }
    };
    // Normal and subnormal encodings in one: the significand's leading bit carries into the
    // exponent field (and a rounding carry moves to the next binade).
    let inf = ((1u128 << exp) - 1) << man;
    let bits = (((q - (emin - man as i32)) as u128) << man) + kept;
    let sign = (neg as u64) << (exp + man);
    sign | bits.min(inf) as u64
}

/// A 16-bit float's bits from `x`, rounded once to nearest even (`cvt.rn.f16.f64` /
/// `cvt.rn.bf16.f64`). A NaN keeps its sign and the top bits of its payload with the quiet
/// bit set, as the conversions through `float` of x86 hosts and the GPU do.
fn f64_to_16(x: f64, exp: u32, man: u32) -> u16 {
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let sign = (neg as u16) << 15;
    let field = (bits >> 52) & 0x7FF;
    let frac = bits & ((1 << 52) - 1);
    let inf = (((1u16 << exp) - 1) << man) | sign;
    if field == 0x7FF {
        return if frac == 0 { inf } else { inf | (1 << (man - 1)) | (frac >> (52 - man)) as u16 };
    }
    if field == 0 && frac == 0 {
        return sign;
    }
    let (m, e) = if field == 0 { (frac, -1074) } else { (frac | 1 << 52, field as i32 - 1075) };
    round_to_format(neg, m as u128, e, exp, man) as u16
}

/// `half` bits of `x`, correctly rounded (the `half` crate's `f16::from_f64` rounds twice,
/// through `f32`, on x86 hosts, and drops the low 32 bits elsewhere).
pub fn f64_to_f16_bits(x: f64) -> u16 {
    f64_to_16(x, 5, 10)
}

/// `bf16` bits of `x`, correctly rounded (the `half` crate's `bf16::from_f64` drops the low
/// 32 bits of the `double` first, so a value just above a midpoint became the midpoint).
pub fn f64_to_bf16_bits(x: f64) -> u16 {
    f64_to_16(x, 8, 7)
}

/// The bits of float type `ty` nearest the integer `i`, rounded once (`cvt.rn.f16.s64`,
/// `cvt.rn.bf16.u64`, ...; going through `f64` first would round twice above 2^53).
pub fn int_to_float_bits(ty: Scalar, i: i128) -> u64 {
    match ty {
        Scalar::F32 => (i as f32).to_bits() as u64,
        Scalar::F64 => (i as f64).to_bits(),
        Scalar::F16 | Scalar::BF16 if i == 0 => 0,
        Scalar::F16 => round_to_format(i < 0, i.unsigned_abs(), 0, 5, 10),
        Scalar::BF16 => round_to_format(i < 0, i.unsigned_abs(), 0, 8, 7),
        _ => unreachable!("integer to float only"),
    }
}

/// Float to integer, truncating toward zero and saturating (what `cvt.rzi` does on the GPU
/// for out-of-range values; NaN becomes 0).
fn from_f64_int(ty: Scalar, x: f64) -> u64 {
    match ty {
        Scalar::I32 => (x as i32) as i64 as u64,
        Scalar::U32 => (x as u32) as u64,
        Scalar::I64 => (x as i64) as u64,
        Scalar::U64 => x as u64,
        Scalar::Bool => (x != 0.0) as u64,
        _ => unreachable!("float types handled by from_f64"),
    }
}

/// The value of an integer register as `i128` (exact for every integer type).
#[inline(always)]
pub fn to_i128(ty: Scalar, v: u64) -> i128 {
    match ty {
        Scalar::I32 | Scalar::I64 => v as i64 as i128,
        _ => v as i128,
    }
}

/// Converts bits of type `from` to type `to` with C's conversions.
pub fn cast(from: Scalar, to: Scalar, v: u64) -> u64 {
    if from == to {
        return v;
    }
    if to == Scalar::Bool {
        return if from.is_float() { (to_f64(from, v) != 0.0) as u64 } else { (norm(from, v) != 0) as u64 };
    }
    if from.is_float() || to.is_float() {
        if from.is_float() {
            let x = to_f64(from, v);
            // A NaN converted to `half` or `bf16` is the canonical 16-bit NaN, and a `half`
            // NaN converted to `float` or `double` the canonical `float` NaN (widened, for
            // `double`, as a `float` NaN is): `cvt.rn.f16.f32` and `cvt.rn.bf16.f32` of a
            // NaN give 0x7FFF (ptxas folds every NaN constant so), and `__half2float` is
            // an HADD2.F32 (`-0 + x`), arithmetic. `bf16` to `float` is a shift, which keeps
            // the bits, and `float` to and from `double` keep the payload (measured on an
            // H200). Until review R74 (2026-12-03) every conversion kept the sign and the
            // top of the payload (docs/simulator.md, "NaN bits").
            if x.is_nan() {
                match (from, to) {
                    (_, Scalar::F16 | Scalar::BF16) => return CANONICAL_NAN_16,
                    (Scalar::F16, _) => return from_f64(to, to_f64(Scalar::F32, CANONICAL_NAN_F32)),
                    _ => {}
                }
            }
            return from_f64(to, x);
        }
        // Integer to float: rounded once, from the exact integer (not through `f64`, which
        // rounds 64-bit values above 2^53 first).
        return int_to_float_bits(to, to_i128(from, norm(from, v)));
    }
    // Integer to integer: wrap to the target width.
    norm(to, to_i128(from, norm(from, v)) as u64)
}

/// The register bits of a constant of type `ty`.
pub fn const_bits(ty: Scalar, c: ConstValue) -> u64 {
    match c {
        ConstValue::Bool(b) => b as u64,
        ConstValue::Int(i) => {
            if ty.is_float() {
                int_to_float_bits(ty, i)
            } else {
                norm(ty, i as u64)
            }
        }
        ConstValue::Float(x) => from_f64(ty, x),
    }
}

/// Rounds an `f32` to tf32 (10 mantissa bits), to nearest with ties away from zero, as
/// `cvt.rna.tf32.f32` does before a tensor-core multiply.
pub fn round_tf32(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    let bits = x.to_bits();
    let rounded = bits.wrapping_add(0x1000) & !0x1FFF;
    f32::from_bits(rounded)
}

/// An `f32` as a tf32 tensor-core operand read straight from memory (wgmma's tiles): the
/// low 13 mantissa bits are dropped, rounding toward zero. The PTX ISA leaves what the
/// tensor cores do with them unspecified; Hopper ignores them, and no instruction rounds
/// shared memory on the way in (`mma.sync` operands are rounded with `cvt.rna` first, which
/// [`round_tf32`] models). NaNs stay NaNs (a payload only in the low bits would otherwise
/// become an infinity).
pub fn truncate_tf32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    f32::from_bits(x.to_bits() & !0x1FFF)
}

/// Renders register bits of type `ty` for messages.
pub fn show(ty: Scalar, v: u64) -> String {
    match ty {
        Scalar::Bool => ((v != 0) as u8 != 0).to_string(),
        Scalar::F64 => format!("{:?}", f64::from_bits(v)),
        t if t.is_float() => format!("{:?}", to_f64(t, v) as f32),
        t => to_i128(t, v).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `float` NaN held as an `f64` comes back with its bits, whatever the host's `as`
    /// does with NaNs (review R46: the checker holds folded `float`s this way).
    #[test]
    fn float_nans_round_trip_through_f64() {
        for v in [0x7FFF_FFFFu32, 0xFFFF_FFFF, 0x7FC0_0000, 0xFFC0_0001, 0x7FC1_2345] {
            assert_eq!(f64_to_f32_bits(f32_bits_to_f64(v)), v, "{v:#x}");
        }
        assert_eq!(f64_to_f32_bits(f64::from_bits(0xFFF8_0000_0000_0000)), 0xFFC0_0000);
        assert_eq!(f64_to_f32_bits(0.1), 0.1f32.to_bits());
        assert_eq!(f32_bits_to_f64(0.1f32.to_bits()), 0.1f32 as f64);
    }

    /// NaN conversions as the GPU's instructions make them (review R74): to `half` and
    /// `bf16` the canonical 16-bit NaN, from `half` the canonical `float` NaN (an HADD2.F32),
    /// from `bf16` (a shift) and between `float` and `double` the payload kept.
    #[test]
    fn nan_conversions_follow_the_gpu() {
        use Scalar::*;
        for (from, v) in [(F32, 0xFFFF_FFFFu64), (F32, 0x7F80_2000), (F64, 0xFFF8_0000_0000_0001), (BF16, 0xFFC1)] {
            assert_eq!(cast(from, F16, v), CANONICAL_NAN_16, "{from:?} {v:#x}");
            assert_eq!(cast(from, BF16, v), if from == BF16 { v } else { CANONICAL_NAN_16 }, "{from:?} {v:#x}");
        }
        assert_eq!(cast(F16, BF16, 0xFE01), CANONICAL_NAN_16);
        assert_eq!(cast(F16, F32, 0xFE01), CANONICAL_NAN_F32);
        assert_eq!(cast(F16, F64, 0xFFFF), 0x7FFF_FFFF_E000_0000);
        assert_eq!(cast(BF16, F32, 0xFFC1), 0xFFC1_0000);
        assert_eq!(cast(F32, F64, 0xFFC0_0001), 0xFFF8_0000_2000_0000);
        assert_eq!(cast(F64, F32, 0xFFF8_0000_0000_0000), 0xFFC0_0000);
        // Numbers are untouched.
        assert_eq!(cast(F32, F16, from_f64(F32, 1.5)), from_f64(F16, 1.5));
        assert_eq!(cast(F16, F32, from_f64(F16, -2.0)), from_f64(F32, -2.0));
    }

    #[test]
    fn casts_follow_c() {
        let m1 = norm(Scalar::I32, (-1i64) as u64);
        assert_eq!(cast(Scalar::I32, Scalar::U32, m1), 0xFFFF_FFFF);
        assert_eq!(cast(Scalar::U32, Scalar::I64, 0xFFFF_FFFF), 0xFFFF_FFFF);
        assert_eq!(to_i128(Scalar::I64, cast(Scalar::I32, Scalar::I64, m1)), -1);
        let f = from_f64(Scalar::F32, -2.7);
        assert_eq!(to_i128(Scalar::I32, cast(Scalar::F32, Scalar::I32, f)), -2);
        assert_eq!(to_f64(Scalar::BF16, cast(Scalar::F32, Scalar::BF16, from_f64(Scalar::F32, 1.5))), 1.5);
    }

    /// The 16-bit value nearest `x` by search over every finite value of the format (ties to
    /// the even bits), an oracle independent of [`round_to_format`]. `values[k]` is the value
    /// of bits `k`, up to the largest finite one; `top` is the value infinity stands for in
    /// rounding (the next power of two above the largest finite value).
    fn nearest(values: &[f64], top: f64, x: f64) -> u16 {
        let a = x.abs();
        let k = values.partition_point(|&v| v <= a) - 1;
        let next = values.get(k + 1).copied().unwrap_or(top);
        let mid = (values[k] + next) / 2.0; // exact: one bit more than the format
        let bits = if a < mid || (a == mid && k % 2 == 0) { k } else { k + 1 };
        bits as u16 | if x.is_sign_negative() { 0x8000 } else { 0 }
    }

    #[test]
    fn sixteen_bit_conversions_round_once_to_nearest_even() {
        // The reviewer's cases (2026-11-29): a float just above a bf16 midpoint, a double
        // just above a bf16 and a half midpoint; the `half` crate gave the values below.
        let x = f32::from_bits(0x3F80_8001); // 1 + 2^-8 + 2^-23
        assert_eq!(cast(Scalar::F32, Scalar::BF16, x.to_bits() as u64), 0x3F81); // not 1.0
        assert_eq!(cast(Scalar::F32, Scalar::BF16, (-x).to_bits() as u64), 0xBF81);
        assert_eq!(cast(Scalar::F32, Scalar::BF16, 0x3F80_8000), 0x3F80); // the tie: even
        let p = |e: i32| 2f64.powi(e);
        assert_eq!(from_f64(Scalar::BF16, 1.0 + p(-8) + p(-40)), 0x3F81);
        assert_eq!(from_f64(Scalar::F16, 1.0 + p(-11) + p(-40)), 0x3C01); // not 1.0 (via f32)
        assert_eq!(from_f64(Scalar::F16, 1.0 + p(-11)), 0x3C00);
        assert_eq!(from_f64(Scalar::F16, 1.0 + 3.0 * p(-11)), 0x3C02);
        // Overflow, the largest finite values, subnormals, zeros, infinities, NaNs.
        assert_eq!(from_f64(Scalar::F16, 65519.99), 0x7BFF);
        assert_eq!(from_f64(Scalar::F16, 65520.0), 0x7C00);
        assert_eq!(from_f64(Scalar::F16, -1e10), 0xFC00);
        assert_eq!(from_f64(Scalar::F16, p(-24)), 0x0001);
        assert_eq!(from_f64(Scalar::F16, p(-25)), 0x0000);
        assert_eq!(from_f64(Scalar::F16, p(-25) + p(-60)), 0x0001);
        assert_eq!(from_f64(Scalar::F16, -p(-26)), 0x8000);
        assert_eq!(from_f64(Scalar::F16, p(-14) - p(-25)), 0x0400); // carries into the normals
        assert_eq!(from_f64(Scalar::BF16, f64::from(f32::MAX)), 0x7F80);
        assert_eq!(from_f64(Scalar::BF16, 1e-45), 0x0000);
        assert_eq!(from_f64(Scalar::BF16, f64::from(f32::from_bits(0x0001_8000))), 0x0002);
        assert_eq!(from_f64(Scalar::BF16, -0.0), 0x8000);
        assert_eq!(from_f64(Scalar::BF16, f64::INFINITY), 0x7F80);
        assert_eq!(from_f64(Scalar::F16, f64::NEG_INFINITY), 0xFC00);
        // NaNs keep the sign and the top payload bits, quiet (x86's conversions through float).
        assert_eq!(from_f64(Scalar::BF16, f64::from_bits(0xFFF8_0000_0000_0000)), 0xFFC0);
        assert_eq!(from_f64(Scalar::F16, f64::from_bits(0x7FF0_0000_0000_0001)), 0x7E00);
        assert_eq!(from_f64(Scalar::BF16, f64::from_bits(0x7FFF_FFFF_E000_0000)), 0x7FFF);
        assert_eq!(cast(Scalar::F32, Scalar::F16, 0x7FFF_FFFF), 0x7FFF);
    }

    #[test]
    fn sixteen_bit_conversions_match_a_search_over_every_value() {
        for (ty, exp, man) in [(Scalar::F16, 5u32, 10u32), (Scalar::BF16, 8, 7)] {
            let max = (((1u64 << exp) - 1) << man) - 1;
            let values: Vec<f64> = (0..=max).map(|k| to_f64(ty, k)).collect();
            let top = 2f64.powi(1 << (exp - 1));
            let check = |x: f64| {
                assert_eq!(from_f64(ty, x), nearest(&values, top, x) as u64, "{ty:?} of {x:e} ({:#x})", x.to_bits());
            };
            // Every midpoint, and the doubles on either side of it.
            for k in 0..max as usize {
                let mid = (values[k] + values[k + 1]) / 2.0;
                for x in [mid, f64::from_bits(mid.to_bits() - 1), f64::from_bits(mid.to_bits() + 1)] {
                    check(x);
                    check(-x);
                }
            }
            // Random doubles over the format's range and a little beyond.
            let mut r = 0x9E37_79B9_7F4A_7C15u64;
            let span = (1i64 << (exp - 1)) + man as i64 + 4;
            for _ in 0..200_000 {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                let e = (1023 + (r >> 52) as i64 % (2 * span) - span) as u64;
                let x = f64::from_bits((r & (1 << 63)) | e << 52 | (r & ((1 << 52) - 1)) >> (r % 50));
                check(x);
            }
        }
    }

    #[test]
    fn the_generic_rounding_is_rusts_f32_rounding() {
        let mut r = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..200_000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            let e = 1023 + (r >> 52) as i64 % 320 - 160;
            let x = f64::from_bits((e as u64) << 52 | (r & ((1 << 52) - 1)) >> (r % 40));
            let (m, e2) = (x.to_bits() & ((1 << 52) - 1) | 1 << 52, e as i32 - 1075);
            assert_eq!(round_to_format(false, m as u128, e2, 8, 23), (x as f32).to_bits() as u64, "{x:e}");
        }
    }

    #[test]
    fn integers_round_once() {
        let bf = |ty: Scalar, i: i128| to_f64(Scalar::BF16, cast(ty, Scalar::BF16, norm(ty, i as u64)));
        // Just above a midpoint: the `+ 1` decides (2026-11-29: the simulator lost it).
        assert_eq!(bf(Scalar::I32, (1 << 30) + (1 << 22) + 1), ((1u64 << 30) + (1 << 23)) as f64);
        assert_eq!(bf(Scalar::U32, (1 << 31) + (1 << 23) + 1), ((1u64 << 31) + (1 << 24)) as f64);
        assert_eq!(bf(Scalar::I64, (1 << 60) + (1 << 52) + 1), ((1u64 << 60) + (1 << 53)) as f64);
        assert_eq!(bf(Scalar::I64, -(1 << 60) - (1 << 52) - 1), -(((1u64 << 60) + (1 << 53)) as f64));
        assert_eq!(bf(Scalar::U64, (1 << 63) + (1 << 55) + 1), ((1u64 << 63) + (1 << 56)) as f64);
        assert_eq!(bf(Scalar::U64, (1 << 63) + (1 << 55)), (1u64 << 63) as f64); // the tie: even
        assert_eq!(bf(Scalar::I64, i64::MIN as i128), i64::MIN as f64);
        assert_eq!(bf(Scalar::U64, u64::MAX as i128), 2f64.powi(64));
        assert_eq!(cast(Scalar::I32, Scalar::F16, norm(Scalar::I32, -65520i64 as u64)), 0xFC00);
        assert_eq!(cast(Scalar::I32, Scalar::F16, 65519), 0x7BFF);
        assert_eq!(cast(Scalar::I32, Scalar::F16, 0), 0);
        assert_eq!(const_bits(Scalar::BF16, ConstValue::Int((1 << 60) + (1 << 52) + 1)), 0x5D81);
        // Every integer below 2^53 is an exact double, and rounds as the double does.
        let mut r = 0x1234_5678_9ABC_DEF1u64;
        for _ in 0..100_000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            let i = (r >> (11 + r % 53)) as i64 * if r & 1 == 1 { -1 } else { 1 };
            for ty in [Scalar::F16, Scalar::BF16] {
                assert_eq!(int_to_float_bits(ty, i as i128), from_f64(ty, i as f64), "{ty:?} of {i}");
            }
        }
    }

    #[test]
    fn tf32_truncation() {
        assert_eq!(truncate_tf32(1.0), 1.0);
        // Halfway and above still go toward zero: only the top 10 mantissa bits count.
        assert_eq!(truncate_tf32(1.0 + f32::EPSILON * 4096.0), 1.0);
        assert_eq!(truncate_tf32(1.0 + f32::EPSILON * 8191.0), 1.0);
        assert_eq!(truncate_tf32(-(1.0 + f32::EPSILON * 8192.0)), -(1.0 + 2f32.powi(-10)));
        assert!(truncate_tf32(f32::from_bits(0x7f80_0001)).is_nan());
        assert_eq!(truncate_tf32(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn tf32_rounding() {
        assert_eq!(round_tf32(1.0), 1.0);
        // 1 + 2^-11 is exactly halfway between tf32 neighbours 1 and 1 + 2^-10: ties go away.
        assert_eq!(round_tf32(1.0 + f32::EPSILON * 4096.0), 1.0 + 2f32.powi(-10));
        assert_eq!(round_tf32(1.0 + f32::EPSILON), 1.0);
    }
}
