//! Scalar arithmetic on register bits: operators, math functions and atomic updates.
//!
//! These define the arithmetic of the reference semantics; the CUDA backend must emit code
//! that computes the same values:
//! - Integers wrap (two's complement); `/` truncates toward zero and `%` takes the sign of
//!   the dividend, as in C. Division by zero has no value (the caller reports it).
//! - Shifts by an amount at least the operand's width (or negative) give 0, or the sign for
//!   `>>` of a negative signed value: PTX's `shl`/`shr` clamp the amount, and the backend
//!   emits the same clamp.
//! - Floating point is IEEE with round-to-nearest-even. `half` and `bf16` arithmetic is done
//!   exactly in `f64` and rounded once, which is what the hardware's 16-bit instructions do.
//!   Math functions use the host's libm and may differ from CUDA's in the last bits. A NaN
//!   made by `float` arithmetic or a `float` math function is the GPU's canonical NaN,
//!   `0x7fffffff` ([`crate::value::f32_result`]), not the host's.

use crate::value::{arith_result, f32_result, float_arith, min_max, norm, to_f64};
use prism_types::tir::{BinOp, UnOp};
use prism_types::ty::Scalar;

/// `a op b` for operands of type `ty` (`b` of type `b_ty` for shifts). Comparisons give a
/// `bool`. `None` for an integer division by zero.
#[inline(always)]
pub fn bin(op: BinOp, ty: Scalar, a: u64, b: u64, b_ty: Scalar) -> Option<u64> {
    use BinOp::*;
    Some(match ty {
        // The arithmetic is shared with the checker's constant folding (`value::float_arith`).
        Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16 => match op {
            Add | Sub | Mul | Div | Rem => float_arith(op, ty, a, b),
            _ => fcmp(op, to_f64(ty, a), to_f64(ty, b)),
        },
        Scalar::Bool => match op {
            And | BitAnd => a & b & 1,
            Or | BitOr => (a | b) & 1,
            BitXor | Ne => (a ^ b) & 1,
            Eq => (a == b) as u64,
            Lt => (a < b) as u64,
            Le => (a <= b) as u64,
            Gt => (a > b) as u64,
            Ge => (a >= b) as u64,
            _ => 0,
        },
        _ => {
            let signed = ty.is_signed_int();
            match op {
                Add => norm(ty, a.wrapping_add(b)),
                Sub => norm(ty, a.wrapping_sub(b)),
                Mul => norm(ty, a.wrapping_mul(b)),
                Div | Rem if b == 0 => return None,
                Div if signed => norm(ty, (a as i64).wrapping_div(b as i64) as u64),
                Div => norm(ty, a / b),
                Rem if signed => norm(ty, (a as i64).wrapping_rem(b as i64) as u64),
                Rem => norm(ty, a % b),
                BitAnd | And => a & b,
                BitOr | Or => a | b,
                BitXor => a ^ b,
                Shl | Shr => {
                    let width = ty.size() * 8;
                    // A negative amount is huge once read as unsigned, like PTX's `.u32` shift operand.
                    let amount = if b_ty.is_signed_int() && (b as i64) < 0 { u64::MAX } else { b };
                    match (op, amount >= width) {
                        (Shl, true) => 0,
                        (Shl, false) => norm(ty, a << amount),
                        (_, true) if signed => norm(ty, ((a as i64) >> 63) as u64),
                        (_, true) => 0,
                        (_, false) if signed => norm(ty, ((a as i64) >> amount) as u64),
                        (_, false) => a >> amount,
                    }
                }
                Eq => (a == b) as u64,
                Ne => (a != b) as u64,
                Lt | Le | Gt | Ge if signed => icmp(op, (a as i64).cmp(&(b as i64))),
                Lt | Le | Gt | Ge => icmp(op, a.cmp(&b)),
            }
        }
    })
}

#[inline(always)]
fn fcmp(op: BinOp, x: f64, y: f64) -> u64 {
    use BinOp::*;
    (match op {
        Eq => x == y,
        Ne => x != y,
        Lt => x < y,
        Le => x <= y,
        Gt => x > y,
        Ge => x >= y,
        _ => false,
    }) as u64
}

#[inline(always)]
fn icmp(op: BinOp, o: std::cmp::Ordering) -> u64 {
    use std::cmp::Ordering::*;
    (match op {
        BinOp::Lt => o == Less,
        BinOp::Le => o != Greater,
        BinOp::Gt => o == Greater,
        _ => o != Less,
    }) as u64
}

/// `op a` for an operand of type `ty`.
#[inline(always)]
pub fn un(op: UnOp, ty: Scalar, a: u64) -> u64 {
    match op {
        UnOp::Not => (a ^ 1) & 1,
        UnOp::BitNot => norm(ty, !a),
        UnOp::Neg => match ty {
            Scalar::F32 => a ^ 0x8000_0000,
            Scalar::F64 => a ^ (1 << 63),
            Scalar::F16 | Scalar::BF16 => a ^ 0x8000,
            _ => norm(ty, a.wrapping_neg()),
        },
    }
}

/// An atomic operation's new value from the old one: op 0 add, 1 sub, 2 min, 3 max, 4 and,
/// 5 or, 6 xor, 7 exchange.
pub fn atomic_apply(op: u8, ty: Scalar, old: u64, v: u64) -> u64 {
    match op {
        0 => bin(BinOp::Add, ty, old, v, ty).unwrap_or(old),
        1 => bin(BinOp::Sub, ty, old, v, ty).unwrap_or(old),
        2 | 3 => min_max(op == 3, ty, old, v),
        4 => old & v,
        5 => old | v,
        6 => old ^ v,
        _ => v,
    }
}

/// `atomic_add` of a `float` on global memory: CUDA's `atomicAdd(float*, float)` is
/// `atom.global.add.f32` (or `red.global.add.f32`) without `.noftz`, which flushes subnormal
/// operands and a subnormal result to zero of the same sign (PTX ISA, `atom`; SASS
/// `ATOMG.E.ADD.F32.FTZ.RN`, `REDG.E.ADD.F32.FTZ.RN`). On shared memory the same instruction
/// keeps subnormals, and [`atomic_apply`] applies there. The caller returns the old value as
/// the memory held it, unflushed, as the hardware does.
pub fn atomic_add_f32_global(old: u64, v: u64) -> u64 {
    let ftz = |x: f32| if x.is_subnormal() { f32::from_bits(x.to_bits() & 0x8000_0000) } else { x };
    let sum = ftz(f32::from_bits(old as u32)) + ftz(f32::from_bits(v as u32));
    f32_result(ftz(sum))
}

/// A pure math intrinsic, resolved from its name once when the interpreter compiles the IR
/// (matching the name per lane was a tenth of a softmax's simulated time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFn {
    Popc,
    Clz,
    Ffs,
    Brev,
    Bits32,
    Abs,
    Min,
    Max,
    Fma,
    Sqrt,
    Rsqrt,
    Exp,
    Exp2,
    Log,
    Log2,
    Sin,
    Cos,
    Tanh,
    Floor,
    Ceil,
    Pow,
    Fmod,
    /// A name this table does not know: NaN for floats, as before.
    Other,
}

impl MathFn {
    /// The function an intrinsic's name stands for.
    pub fn from_name(name: &str) -> MathFn {
        use MathFn::*;
        match name {
            "popc" => Popc,
            "clz" => Clz,
            "ffs" => Ffs,
            "brev" => Brev,
            "bits32" => Bits32,
            "abs" => Abs,
            "min" => Min,
            "max" => Max,
            "fma" => Fma,
            "sqrt" => Sqrt,
            "rsqrt" => Rsqrt,
            "exp" => Exp,
            "exp2" => Exp2,
            "log" => Log,
            "log2" => Log2,
            "sin" => Sin,
            "cos" => Cos,
            "tanh" => Tanh,
            "floor" => Floor,
            "ceil" => Ceil,
            "pow" => Pow,
            "fmod" => Fmod,
            _ => Other,
        }
    }
}

/// The math function `f` of `$t` applied to the operands `$arg(0)`, `$arg(1)`, ...
macro_rules! float_fn {
    ($f:expr, $arg:expr, $t:ty) => {{
        let arg = $arg;
        let x: $t = arg(0);
        match $f {
            MathFn::Sqrt => x.sqrt(),
            MathFn::Rsqrt => 1.0 / x.sqrt(),
            MathFn::Exp => x.exp(),
            MathFn::Exp2 => x.exp2(),
            MathFn::Log => x.ln(),
            MathFn::Log2 => x.log2(),
            MathFn::Sin => x.sin(),
            MathFn::Cos => x.cos(),
            MathFn::Tanh => x.tanh(),
            MathFn::Floor => x.floor(),
            MathFn::Ceil => x.ceil(),
            MathFn::Abs => x.abs(),
            MathFn::Pow => x.powf(arg(1)),
            MathFn::Fmod => x % arg(1),
            MathFn::Fma => x.mul_add(arg(1), arg(2)),
            _ => <$t>::NAN,
        }
    }};
}

/// `a * b + c` on `float`s, rounded once, without a call into libm (which is what
/// `f32::mul_add` is without the FMA target feature, and too slow for the inner loop of
/// every gemm). The product of two floats is exact in `double`; the sum is rounded to odd
/// in `double` (rounded to nearest, then moved one unit towards the exact sum when inexact
/// with an even last bit) and then rounded to nearest `float`. Rounding to odd with at least
/// two extra bits of precision and then to nearest is correct rounding (Boldo and
/// Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding
/// to odd", IEEE TC 2008); `double` has 29 extra bits. The test compares it with
/// `f32::mul_add` on special values and a million random operands.
#[inline(always)]
pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    let p = f64::from(a) * f64::from(b);
    let c = f64::from(c);
    let s = p + c;
    // The exact error of the sum (Knuth's TwoSum); NaN when `s` is infinite.
    let z = s - p;
    let e = (p - (s - z)) + (c - z);
    let bits = s.to_bits();
    let to_odd = e != 0.0 && s.is_finite() && bits & 1 == 0;
    // One unit away from zero when the exact sum is farther from zero than `s`, else one
    // towards it, as a wrapping add of 1 or -1 with no branch: the 32-lane loops of the
    // `Fma` op then run two lanes per vector instruction. The last bit is 0 when `to_odd`
    // holds, and `s` is not zero then (an inexact sum is not zero), so neither step wraps.
    let step = if (e > 0.0) == (s > 0.0) { 1 } else { u64::MAX };
    let bits = bits.wrapping_add(if to_odd { step } else { 0 });
    f64::from_bits(bits) as f32
}

/// [`fma_f32`] in each of 32 lanes of `float` bits, with the same results. The rounding to
/// odd only matters when the sum in `double` is exactly halfway between two neighbouring
/// floats: the `double` sum `s` is the `double` nearest the exact sum `x`, and every such
/// midpoint (and the overflow threshold, the midpoint above `f32::MAX`) is a `double`, so a
/// midpoint strictly between `x` and `s` would be nearer to `x` than `s` is; when `s` is none
/// of them, `x` and `s` round to the same float. A midpoint of normal floats has its `double`
/// significand's low 29 bits equal to `0x1000_0000`; below `f32::MIN_POSITIVE` the floats are
/// spaced differently, and NaNs and infinities are left to the exact path as well, but not
/// zero: the product is exact and the operands are multiples of 2^-298, so a sum that
/// rounds to zero is zero, which both paths return as it is (a warp of gemm sums often
/// holds one). So all 32
/// sums are computed first, and only when some lane is a midpoint or outside the normal
/// range does the whole warp take the exact path (a straight loop that vectorises either way).
#[inline(always)]
pub fn fma_f32_lanes(x: &[u64; 32], y: &[u64; 32], z: &[u64; 32]) -> [u64; 32] {
    let f = |v: u64| f64::from(f32::from_bits(v as u32));
    let mut sum = [0f64; 32];
    let mut hard = false;
    for l in 0..32 {
        let s = f(x[l]) * f(y[l]) + f(z[l]);
        sum[l] = s;
        let a = s.abs();
        let normal = (a >= f64::from(f32::MIN_POSITIVE) && a <= f64::MAX) || a == 0.0;
        hard |= !normal | (s.to_bits() & 0x1FFF_FFFF == 0x1000_0000);
    }
    if hard {
        let g = |v: u64| f32::from_bits(v as u32);
        return std::array::from_fn(|l| f32_result(fma_f32(g(x[l]), g(y[l]), g(z[l]))));
    }
    sum.map(|s| (s as f32).to_bits() as u64)
}

/// [`math`] over the 32 lanes of a warp for the `float` functions a softmax applies per
/// element (`max`, `min`, `exp`): the same computation lane by lane, without matching the
/// function and the type per lane. `None` for the other functions.
#[inline]
pub fn math_f32_lanes(f: MathFn, a: &[u64; 32], b: &[u64; 32]) -> Option<[u64; 32]> {
    match f {
        MathFn::Max | MathFn::Min => {
            let max = f == MathFn::Max;
            Some(std::array::from_fn(|l| min_max(max, Scalar::F32, a[l], b[l])))
        }
        MathFn::Exp => Some(std::array::from_fn(|l| f32_result(f32::from_bits(a[l] as u32).exp()))),
        _ => None,
    }
}

/// A pure math intrinsic applied to `args` (of type `arg_ty`); the result has type `ty`.
pub fn math(f: MathFn, ty: Scalar, arg_ty: Scalar, args: &[u64]) -> u64 {
    let a = args.first().copied().unwrap_or(0);
    match f {
        MathFn::Popc => norm(ty, u64::from(norm_width(arg_ty, a).count_ones())),
        MathFn::Clz => {
            let width = arg_ty.size() as u32 * 8;
            norm(ty, u64::from(norm_width(arg_ty, a).leading_zeros() - (64 - width)))
        }
        MathFn::Ffs => {
            let x = norm_width(arg_ty, a);
            norm(ty, if x == 0 { 0 } else { u64::from(x.trailing_zeros() + 1) })
        }
        MathFn::Brev => {
            let width = arg_ty.size() as u32 * 8;
            norm(ty, norm_width(arg_ty, a).reverse_bits() >> (64 - width))
        }
        // The operand's own bits, zero-extended: values are kept as their bit patterns,
        // so this only drops a signed integer's sign extension.
        MathFn::Bits32 => norm_width(arg_ty, a),
        MathFn::Abs if !ty.is_float() => {
            if ty.is_signed_int() {
                norm(ty, (a as i64).wrapping_abs() as u64)
            } else {
                a
            }
        }
        MathFn::Min | MathFn::Max => min_max(f == MathFn::Max, ty, a, args[1]),
        MathFn::Fma if ty == Scalar::F32 => {
            let arg = |i: usize| f32::from_bits(args[i] as u32);
            f32_result(fma_f32(arg(0), arg(1), arg(2)))
        }
        // `abs` of every float type clears the sign bit and keeps every other bit, a NaN's
        // included, as does the bit operation the CUDA backend prints (`prism_fabs`, docs/cuda.md).
        // Until 2026-11-29 the backend printed `fabsf`/`fabs`, which nvcc compiles to an
        // FADD/DADD with an absolute-value operand modifier that the H200 does not apply to a
        // NaN (0xfff8000000000000 stayed 0xfff8000000000000), and this returned a double NaN
        // unchanged to match; the `float` and 16-bit NaNs were then unknown.
        MathFn::Abs if ty == Scalar::F32 => a & 0x7FFF_FFFF,
        MathFn::Abs if ty == Scalar::F64 => a & !(1 << 63),
        MathFn::Abs if matches!(ty, Scalar::F16 | Scalar::BF16) => a & 0x7FFF,
        _ if ty == Scalar::F32 => {
            let arg = |i: usize| f32::from_bits(args[i] as u32);
            f32_result(float_fn!(f, arg, f32))
        }
        _ => {
            // f64 directly; half and bf16 through f32, as CUDA's half math does.
            let x = float_fn!(f, |i: usize| to_f64(arg_ty, args[i]), f64);
            arith_result(ty, if ty == Scalar::F64 { x } else { x as f32 as f64 })
        }
    }
}

/// The bits of an integer as an unsigned value of its own width.
fn norm_width(ty: Scalar, v: u64) -> u64 {
    match ty.size() {
        1 => v & 0xFF,
        2 => v & 0xFFFF,
        4 => v & 0xFFFF_FFFF,
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fma_f32_is_correctly_rounded() {
        let special = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.5,
            3.0,
            1.0 + f32::EPSILON,
            1.0 - f32::EPSILON / 2.0,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            f32::MIN_POSITIVE / 8.0,
            1e-45,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e20,
            -1e-20,
            16777217.0,
        ];
        let check = |a: f32, b: f32, c: f32| {
            let (got, want) = (super::fma_f32(a, b, c), a.mul_add(b, c));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "fma({a:e}, {b:e}, {c:e}) = {got:e}, want {want:e}"
            );
        };
        for &a in &special {
            for &b in &special {
                for &c in &special {
                    check(a, b, c);
                }
            }
        }
        // Random bit patterns (every exponent), and operands near cancellation, where double
        // rounding would show.
        let mut r = crate::rng::Rng::new(42);
        for _ in 0..1_000_000 {
            let x = f32::from_bits(r.next_u64() as u32);
            let y = f32::from_bits(r.next_u64() as u32);
            check(x, y, f32::from_bits(r.next_u64() as u32));
            let near = -(x * y) * (1.0 + (r.below(64) as f32 - 32.0) * f32::EPSILON);
            check(x, y, near);
            let small = f32::from_bits((r.next_u64() as u32 & 0x807f_ffff) | 0x3f00_0000);
            check(
                small,
                1.0 + f32::EPSILON * r.below(8) as f32,
                f32::from_bits((r.next_u64() as u32 & 0x807f_ffff) | 0x3380_0000),
            );
        }
    }

    /// `fma_f32` as it was written with a branch, before the branch-free form: the two must
    /// give the same bits for every input, NaN payloads included (the simulator's results
    /// must not change).
    fn fma_f32_branching(a: f32, b: f32, c: f32) -> f32 {
        let p = f64::from(a) * f64::from(b);
        let c = f64::from(c);
        let s = p + c;
        let z = s - p;
        let e = (p - (s - z)) + (c - z);
        let bits = s.to_bits();
        let to_odd = e != 0.0 && s.is_finite() && bits & 1 == 0;
        let bits = match (to_odd, (e > 0.0) == (s > 0.0)) {
            (false, _) => bits,
            (true, true) => bits + 1,
            (true, false) => bits - 1,
        };
        f64::from_bits(bits) as f32
    }

    #[test]
    fn fma_f32_gives_the_bits_of_its_branching_form() {
        let mut r = crate::rng::Rng::new(7);
        let specials = [0.0f32, -0.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-45, f32::MAX, 1.0];
        let check = |a: f32, b: f32, c: f32| {
            let (got, want) = (super::fma_f32(a, b, c), fma_f32_branching(a, b, c));
            assert_eq!(got.to_bits(), want.to_bits(), "fma({a:e}, {b:e}, {c:e})");
        };
        for &a in &specials {
            for &b in &specials {
                for &c in &specials {
                    check(a, b, c);
                }
            }
        }
        for _ in 0..1_000_000 {
            let x = f32::from_bits(r.next_u64() as u32);
            let y = f32::from_bits(r.next_u64() as u32);
            check(x, y, f32::from_bits(r.next_u64() as u32));
            check(x, y, -(x * y) * (1.0 + (r.below(64) as f32 - 32.0) * f32::EPSILON));
        }
    }

    /// The 32-lane fma gives, lane by lane, the bits of `fma_f32`: on random operands, on
    /// sums that cancel, on sums that land on a midpoint of two floats (where rounding to
    /// odd matters), in the subnormal range and on specials, one odd lane in a warp of
    /// ordinary ones and whole warps of them.
    #[test]
    fn fma_f32_lanes_gives_the_bits_of_fma_f32() {
        let mut r = crate::rng::Rng::new(11);
        let specials = [0.0f32, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-45, f32::MAX, f32::MIN_POSITIVE];
        let operands = |r: &mut crate::rng::Rng| -> (f32, f32, f32) {
            let x = f32::from_bits(r.next_u64() as u32);
            let y = f32::from_bits(r.next_u64() as u32);
            match r.below(9) {
                0 => (x, y, f32::from_bits(r.next_u64() as u32)),
                1 => (x, y, -(x * y) * (1.0 + (r.below(64) as f32 - 32.0) * f32::EPSILON)),
                // 1 + 2^-24 (a midpoint) plus a tiny term: the double sum is inexact near it.
                2 => (
                    1.0 + f32::EPSILON * r.below(4) as f32,
                    1.0 + f32::EPSILON / 2.0 * r.below(3) as f32,
                    2f32.powi(-24 - r.below(30) as i32) * if r.below(2) == 0 { 1.0 } else { -1.0 },
                ),
                // 97/128 * 172961/2^17 is 1 + 2^-24 exactly, the midpoint between 1 and the
                // next float; a term far below the double's precision leaves the double sum
                // on the midpoint while the exact sum is off it (zero: exactly on it).
                3 => {
                    let scale = 2f32.powi(r.below(40) as i32 - 20);
                    let sign = if r.below(2) == 0 { 1.0 } else { -1.0 };
                    let tiny = [0.0, 2f32.powi(-60), -(2f32.powi(-60)), 2f32.powi(-53), -(2f32.powi(-53))][r.below(5)];
                    (97.0 / 128.0 * scale * sign, 172961.0 / 131072.0 * scale, tiny * scale * scale * sign)
                }
                7 => (*r.pick(&specials), y, f32::from_bits(r.next_u64() as u32)),
                // Sums that are exactly zero, of either sign (zero takes the fast path).
                8 => {
                    let (k, m) = (r.below(9) as f32 - 4.0, r.below(9) as f32 - 4.0);
                    let zero = if r.below(2) == 0 { 0.0 } else { -0.0 };
                    (k * 0.25, m * 0.5, if k * m == 0.0 { zero } else { -(k * m * 0.125) })
                }
                4 => (x * 1e-30, y * 1e-10, f32::from_bits((r.next_u64() as u32 & 0x807f_ffff) | 0x0080_0000)),
                _ => {
                    let small = f32::from_bits((r.next_u64() as u32 & 0x807f_ffff) | 0x3f00_0000);
                    (
                        small,
                        1.0 + f32::EPSILON * r.below(8) as f32,
                        f32::from_bits((r.next_u64() as u32 & 0x807f_ffff) | 0x3380_0000),
                    )
                }
            }
        };
        let ordinary = |l: usize| ((l * 7 % 13) as f32 * 0.25 - 1.5, (l % 5) as f32 + 0.5, l as f32);
        for round in 0..60_000 {
            let mut lanes = [(0f32, 0f32, 0f32); 32];
            for (l, lane) in lanes.iter_mut().enumerate() {
                *lane = if round % 2 == 0 { operands(&mut r) } else { ordinary(l) };
            }
            if round % 2 == 1 {
                lanes[r.below(32)] = operands(&mut r);
            }
            let bits = |k: usize| -> [u64; 32] {
                std::array::from_fn(|l| [lanes[l].0, lanes[l].1, lanes[l].2][k].to_bits() as u64)
            };
            let (x, y, z) = (bits(0), bits(1), bits(2));
            let got = super::fma_f32_lanes(&x, &y, &z);
            for l in 0..32 {
                let (a, b, c) = lanes[l];
                assert_eq!(got[l], crate::value::f32_result(super::fma_f32(a, b, c)), "fma({a:e}, {b:e}, {c:e})");
            }
        }
        // Warps of ordinary values only: the fast path alone.
        let x: [u64; 32] = std::array::from_fn(|l| ordinary(l).0.to_bits() as u64);
        let y: [u64; 32] = std::array::from_fn(|l| ordinary(l).1.to_bits() as u64);
        let z: [u64; 32] = std::array::from_fn(|l| ordinary(l).2.to_bits() as u64);
        let got = super::fma_f32_lanes(&x, &y, &z);
        for (l, bits) in got.iter().enumerate() {
            let (a, b, c) = ordinary(l);
            assert_eq!(*bits, super::fma_f32(a, b, c).to_bits() as u64);
        }
    }

    use super::*;
    use crate::value::{from_f64, to_i128};

    fn i32b(x: i32) -> u64 {
        x as i64 as u64
    }

    #[test]
    fn integer_division_follows_c() {
        let d = bin(BinOp::Div, Scalar::I32, i32b(-7), i32b(2), Scalar::I32).expect("nonzero");
        assert_eq!(to_i128(Scalar::I32, d), -3);
        let r = bin(BinOp::Rem, Scalar::I32, i32b(-7), i32b(2), Scalar::I32).expect("nonzero");
        assert_eq!(to_i128(Scalar::I32, r), -1);
        assert_eq!(bin(BinOp::Div, Scalar::I32, 1, 0, Scalar::I32), None);
        let m = bin(BinOp::Div, Scalar::I32, i32b(i32::MIN), i32b(-1), Scalar::I32).expect("nonzero");
        assert_eq!(to_i128(Scalar::I32, m), i32::MIN as i128);
    }

    #[test]
    fn arithmetic_wraps_at_the_type_width() {
        let s = bin(BinOp::Add, Scalar::I32, i32b(i32::MAX), 1, Scalar::I32).expect("add");
        assert_eq!(to_i128(Scalar::I32, s), i32::MIN as i128);
        let u = bin(BinOp::Sub, Scalar::U32, 0, 1, Scalar::U32).expect("sub");
        assert_eq!(u, 0xFFFF_FFFF);
        assert_eq!(bin(BinOp::Lt, Scalar::I32, i32b(-1), 1, Scalar::I32), Some(1));
        assert_eq!(bin(BinOp::Lt, Scalar::U32, 0xFFFF_FFFF, 1, Scalar::U32), Some(0));
    }

    #[test]
    fn shifts_clamp() {
        assert_eq!(bin(BinOp::Shl, Scalar::U32, 1, 31, Scalar::I32), Some(0x8000_0000));
        assert_eq!(bin(BinOp::Shl, Scalar::U32, 1, 32, Scalar::I32), Some(0));
        let neg = bin(BinOp::Shr, Scalar::I32, i32b(-8), 40, Scalar::I32).expect("shift");
        assert_eq!(to_i128(Scalar::I32, neg), -1);
        let s = bin(BinOp::Shr, Scalar::I32, i32b(-8), 1, Scalar::I32).expect("shift");
        assert_eq!(to_i128(Scalar::I32, s), -4);
        assert_eq!(bin(BinOp::Shl, Scalar::I32, 1, i32b(-1), Scalar::I32), Some(0));
    }

    #[test]
    fn half_arithmetic_rounds_once() {
        let a = from_f64(Scalar::F16, 1.0);
        let b = from_f64(Scalar::F16, 0.0004);
        let s = bin(BinOp::Add, Scalar::F16, a, b, Scalar::F16).expect("add");
        assert_eq!(to_f64(Scalar::F16, s), 1.0);
    }

    #[test]
    fn math_and_bits() {
        assert_eq!(math(MathFn::from_name("popc"), Scalar::I32, Scalar::U32, &[0xF0F0]), 8);
        assert_eq!(math(MathFn::from_name("clz"), Scalar::I32, Scalar::U32, &[1]), 31);
        assert_eq!(math(MathFn::from_name("ffs"), Scalar::I32, Scalar::I32, &[8]), 4);
        assert_eq!(math(MathFn::from_name("brev"), Scalar::U32, Scalar::U32, &[1]), 0x8000_0000);
        let bits32 = MathFn::from_name("bits32");
        assert_eq!(math(bits32, Scalar::U32, Scalar::F32, &[u64::from((-1.5f32).to_bits())]), 0xBFC0_0000);
        assert_eq!(math(bits32, Scalar::U32, Scalar::I32, &[(-1i64) as u64]), 0xFFFF_FFFF);
        assert_eq!(math(bits32, Scalar::U32, Scalar::F16, &[0xBC00]), 0xBC00);
        assert_eq!(
            to_i128(Scalar::I32, math(MathFn::from_name("max"), Scalar::I32, Scalar::I32, &[i32b(-3), i32b(2)])),
            2
        );
        let nan = f32::NAN.to_bits() as u64;
        let one = 1f32.to_bits() as u64;
        assert_eq!(math(MathFn::from_name("min"), Scalar::F32, Scalar::F32, &[nan, one]), one);
        assert_eq!(atomic_apply(3, Scalar::U32, 5, 0xFFFF_FFFF), 0xFFFF_FFFF);
    }

    /// Every math intrinsic of the language is a function the simulator knows (a name
    /// missing from `MathFn::from_name` would compute NaN).
    #[test]
    fn every_math_intrinsic_resolves() {
        use prism_types::intrinsics::{Family, TABLE};
        for sig in TABLE.iter().filter(|s| s.family == Family::Math) {
            assert_ne!(MathFn::from_name(sig.name), MathFn::Other, "`{}`", sig.name);
        }
    }

    /// The whole-warp path computes what `math` computes lane by lane, bit for bit, on
    /// the values where `max`, `min` and `exp` are delicate: NaNs (quiet, signalling, with
    /// payloads), zeros of both signs against each other, infinities, subnormals, the
    /// largest finite values and values where `exp` overflows or underflows.
    #[test]
    fn whole_warp_math_is_lane_math() {
        let specials: [u32; 16] = [
            0x7FC0_0000,
            0xFFC0_0001,
            0x7F80_0001,
            0x0000_0000,
            0x8000_0000,
            0x7F80_0000,
            0xFF80_0000,
            0x0000_0001,
            0x8070_0000,
            0x7F7F_FFFF,
            0xFF7F_FFFF,
            0x42B2_0000,
            0xC2D0_0000,
            0x3F80_0000,
            0xBF80_0000,
            0x3380_0000,
        ];
        for f in [MathFn::Max, MathFn::Min, MathFn::Exp] {
            for shift in 0..16 {
                let a: [u64; 32] = std::array::from_fn(|l| u64::from(specials[l % 16]));
                let b: [u64; 32] = std::array::from_fn(|l| u64::from(specials[(l / 2 + shift) % 16]));
                let got = math_f32_lanes(f, &a, &b).expect("a whole-warp function");
                for l in 0..32 {
                    let want = math(f, Scalar::F32, Scalar::F32, &[a[l], b[l]]);
                    assert_eq!(got[l], want, "{f:?} of {:#x}, {:#x}", a[l], b[l]);
                }
            }
        }
        assert!(math_f32_lanes(MathFn::Sqrt, &[0; 32], &[0; 32]).is_none());
    }

    /// `max`/`min` on floats as PTX defines them, for every float type: a NaN operand is
    /// ignored, two NaNs give the canonical NaN, and -0 is below +0 in either order.
    #[test]
    fn float_min_max_is_ptx_min_max() {
        let f = |x: f32| u64::from(x.to_bits());
        let nan = f(f32::NAN);
        for (max, a, b, want) in [
            (true, nan, f(1.5), f(1.5)),
            (true, f(1.5), nan, f(1.5)),
            (false, nan, f(-2.0), f(-2.0)),
            (true, nan, nan | 1, 0x7FFF_FFFF),
            (false, nan, nan, 0x7FFF_FFFF),
            (true, f(-0.0), f(0.0), f(0.0)),
            (true, f(0.0), f(-0.0), f(0.0)),
            (false, f(-0.0), f(0.0), f(-0.0)),
            (false, f(0.0), f(-0.0), f(-0.0)),
            (true, f(-3.0), f(2.0), f(2.0)),
            (false, f(-3.0), f(2.0), f(-3.0)),
            (true, f(f32::NEG_INFINITY), f(f32::MIN), f(f32::MIN)),
        ] {
            assert_eq!(min_max(max, Scalar::F32, a, b), want, "max {max}: {a:#x}, {b:#x}");
        }
        assert_eq!(min_max(true, Scalar::F64, f64::NAN.to_bits(), f64::NAN.to_bits()), 0x7FFF_FFFF_FFFF_FFFF);
        assert_eq!(min_max(true, Scalar::F64, (-0f64).to_bits(), 0), 0);
        let h = |x: f64| from_f64(Scalar::F16, x);
        assert_eq!(min_max(false, Scalar::F16, h(0.0), h(-0.0)), h(-0.0));
        assert_eq!(min_max(true, Scalar::BF16, 0x7FC1, 0x7FC2), 0x7FFF);
    }

    #[test]
    fn float_math() {
        let f = |x: f32| x.to_bits() as u64;
        assert_eq!(math(MathFn::from_name("sqrt"), Scalar::F32, Scalar::F32, &[f(4.0)]), f(2.0));
        assert_eq!(math(MathFn::from_name("fma"), Scalar::F32, Scalar::F32, &[f(2.0), f(3.0), f(1.0)]), f(7.0));
        assert_eq!(
            math(MathFn::from_name("pow"), Scalar::F64, Scalar::F64, &[2f64.to_bits(), 10f64.to_bits()]),
            1024f64.to_bits()
        );
        let h = |x: f64| from_f64(Scalar::F16, x);
        assert_eq!(math(MathFn::from_name("floor"), Scalar::F16, Scalar::F16, &[h(2.75)]), h(2.0));
        assert_eq!(
            math(MathFn::from_name("abs"), Scalar::BF16, Scalar::BF16, &[from_f64(Scalar::BF16, -3.0)]),
            from_f64(Scalar::BF16, 3.0)
        );
    }

    #[test]
    fn negation_and_abs_change_only_the_sign_bit_of_every_float_nan() {
        // 2026-11-29: the CUDA backend prints both as bit operations (`prism_fneg`,
        // `prism_fabs`), so a NaN keeps its payload and only its sign changes.
        let abs = |ty: Scalar, a: u64| math(MathFn::from_name("abs"), ty, ty, &[a]);
        assert_eq!(un(UnOp::Neg, Scalar::F32, 0x7FFF_FFFF), 0xFFFF_FFFF);
        assert_eq!(un(UnOp::Neg, Scalar::F64, 0xFFF8_0000_0000_0000), 0x7FF8_0000_0000_0000);
        assert_eq!(un(UnOp::Neg, Scalar::BF16, 0x7FC1), 0xFFC1);
        assert_eq!(abs(Scalar::F32, 0xFFC0_0000), 0x7FC0_0000);
        assert_eq!(abs(Scalar::F32, 0xFF80_0001), 0x7F80_0001); // a signalling NaN stays one
        assert_eq!(abs(Scalar::F64, 0xFFF8_0000_0000_0000), 0x7FF8_0000_0000_0000);
        assert_eq!(abs(Scalar::F64, (-2.5f64).to_bits()), 2.5f64.to_bits());
        assert_eq!(abs(Scalar::F16, 0xFC01), 0x7C01);
        assert_eq!(abs(Scalar::BF16, 0xFF81), 0x7F81);
        assert_eq!(abs(Scalar::F16, from_f64(Scalar::F16, -0.0)), 0);
    }

    #[test]
    fn global_float_atomic_add_flushes_subnormals() {
        let f = |x: f32| x.to_bits() as u64;
        let g = atomic_add_f32_global;
        // The reviewer's buffers (2026-11-29): the GPU computed 0, 0, 1.0, 0.
        assert_eq!(g(f(0.0), f(1e-40)), f(0.0));
        assert_eq!(g(f(1e-39), f(1e-39)), f(0.0));
        assert_eq!(g(f(1e-40), f(1.0)), f(1.0));
        assert_eq!(g(f(0.0), f(1e-45)), f(0.0));
        // Signs are kept; a subnormal result of normal operands is flushed too.
        assert_eq!(g(f(-0.0), f(-1e-40)), f(-0.0));
        let m = f32::MIN_POSITIVE;
        assert_eq!(g(f(1.5 * m), f(-m)), f(0.0));
        assert_eq!(g(f(-1.5 * m), f(m)), f(-0.0));
        assert_eq!(g(f(2.0 * m), f(-m)), f(m));
        assert_eq!(g(f(1.0), f(2.0)), f(3.0));
        assert_eq!(g(f(f32::INFINITY), f(f32::NEG_INFINITY)), 0x7FFF_FFFF);
        // Elsewhere (shared memory) `atomic_add` keeps subnormals.
        assert_eq!(atomic_apply(0, Scalar::F32, f(1e-39), f(1e-39)), f(2e-39));
    }
}
