//! Scalar values as register bits, and the conversions between them.
//!
//! A register lane holds 64 bits. Each scalar type keeps its natural bit pattern in the low
//! bits: signed integers sign-extended to 64 bits, unsigned ones zero-extended, `float` as its
//! IEEE bits, `half` and `bf16` as their 16-bit patterns, `bool` as 0 or 1. Arithmetic on
//! integers wraps (two's complement), as on the GPU.

use half::{bf16, f16};
use prism_types::tir::ConstValue;
use prism_types::ty::Scalar;

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

/// The bits of a result of arithmetic on floats of type `ty` computed in `f64`: a `double`
/// NaN is the GPU's ([`f64_result`]); `half` and `bf16` round as [`from_f64`] does (their NaN
/// bits have not been probed on a GPU).
#[inline(always)]
pub fn arith_result(ty: Scalar, x: f64) -> u64 {
    if ty == Scalar::F64 { f64_result(x) } else { from_f64(ty, x) }
}

/// Bits of a float value of type `ty` (rounding to nearest even).
#[inline(always)]
pub fn from_f64(ty: Scalar, x: f64) -> u64 {
    match ty {
        Scalar::F32 => (x as f32).to_bits() as u64,
        Scalar::F64 => x.to_bits(),
        Scalar::F16 => f16::from_f64(x).to_bits() as u64,
        Scalar::BF16 => bf16::from_f64(x).to_bits() as u64,
        _ => from_f64_int(ty, x),
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
            return from_f64(to, to_f64(from, v));
        }
        // Integer to float: exact through i128/f64 for 64-bit values is close enough except
        // past 2^53; use the correctly rounded path for the 32-bit float.
        let i = to_i128(from, norm(from, v));
        return match to {
            Scalar::F32 => (i as f32).to_bits() as u64,
            Scalar::F64 => (i as f64).to_bits(),
            _ => from_f64(to, i as f64),
        };
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
                from_f64(ty, i as f64)
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
