//! Compile-time arithmetic on constants.
//!
//! The checker folds every operation whose operands are constants, so `constexpr` names,
//! array sizes, perspective sizes, split cases and `smem=` can use ordinary arithmetic.
//! Integer results must fit their type (an overflowing constant is an error, not a silent
//! wrap); division truncates toward zero and `%` takes the sign of the dividend, as in C.
//! Floating-point constants are folded with the run-time rules themselves, on the register
//! bits of their type ([`crate::value`]: `float_arith`, `min_max`, `int_to_float_bits`), so a
//! folded operation gives the bits the same operation on variables gives at run time, a NaN's
//! included (review R46, 2026-12-01: folding in the host's `double` gave the host's NaN,
//! ignored PTX's `min`/`max` rules and rounded `int64` to `float` twice). `half` and `bf16`
//! arithmetic is left to run time.

use crate::tir::{BinOp, ConstValue, UnOp};
use crate::ty::Scalar;
use crate::value;

/// Why compile-time evaluation failed. The words are in `diagnostics.rs` (`const-eval`).
#[derive(Clone, Debug, PartialEq)]
pub enum ConstError {
    /// An integer outside the range of its type.
    DoesNotFit { value: i128, ty: Scalar },
    /// An infinite or NaN float converted to an integer type.
    NotConvertible { value: f64, ty: Scalar },
    /// Integer division or remainder by zero.
    DivisionByZero,
    /// A shift by a negative amount or at least the width.
    ShiftRange { amount: i128, ty: Scalar },
    /// `and`/`or` on non-booleans.
    NeedsBools,
    /// An integer-only operator on floats.
    NotOnFloat { op: &'static str },
    /// An arithmetic operator on booleans.
    NotOnBool { op: &'static str },
    /// Operands of different kinds.
    MixedKinds,
    /// A unary operator on an operand it does not apply to.
    NotApplicable { op: &'static str },
    /// `range` with a zero step.
    ZeroStep,
    /// A multiplication whose exact result does not fit in 128 bits.
    MulOverflow,
    /// A split case of fewer than one unit.
    CaseUnits { n: i128 },
    /// An alignment that is not a power of two from 1 to 4096.
    Alignment,
    /// An array size outside 1 to 2^32.
    ArraySize { n: i128 },
    /// A literal (an integer or a float, in the source or given as `-D NAME=VALUE`) too
    /// large for the float type it takes: it would round to an infinity.
    FloatRange { value: f64, ty: Scalar },
}

/// The range of an integer type.
pub fn int_range(s: Scalar) -> (i128, i128) {
    match s {
        Scalar::I32 => (i32::MIN as i128, i32::MAX as i128),
        Scalar::U32 => (0, u32::MAX as i128),
        Scalar::I64 => (i64::MIN as i128, i64::MAX as i128),
        Scalar::U64 => (0, u64::MAX as i128),
        _ => (i128::MIN, i128::MAX),
    }
}

/// Checks that a literal's value `c` stays finite in the float type `ty` it takes. C++
/// makes a float literal out of its type's range ill-formed, and Prism already refuses one
/// out of `double`'s (`1e400` is `invalid-number`) and an integer literal that does not fit
/// its type: `1e39` for a `float`, or `70000` for a `half`, is refused the same way rather
/// than silently becoming an infinity. Underflow (`1e-50` for a `float`) rounds to zero, as
/// in C. Anything but a finite literal for a float type passes.
pub fn literal_range(c: ConstValue, ty: Scalar) -> Result<(), ConstError> {
    if !ty.is_float() {
        return Ok(());
    }
    let (value, bits) = match c {
        ConstValue::Float(x) => (x, value::from_f64(ty, x)),
        ConstValue::Int(i) => (i as f64, value::int_to_float_bits(ty, i)),
        ConstValue::Bool(_) => return Ok(()),
    };
    if value.is_finite() && value::to_f64(ty, bits).is_infinite() {
        return Err(ConstError::FloatRange { value, ty });
    }
    Ok(())
}

/// The largest finite value of the float type `ty`, as text for messages.
pub fn float_max_text(ty: Scalar) -> &'static str {
    match ty {
        Scalar::F32 => "3.4028235e38",
        Scalar::F64 => "1.7976931348623157e308",
        Scalar::F16 => "65504",
        Scalar::BF16 => "3.3895314e38",
        _ => "",
    }
}

/// The type of an integer literal (or of exact literal arithmetic) of value `v`: `int` when
/// it fits, else `int64`, else `uint64`. Its value always lies in its type, as every integer
/// constant must (review R46: a literal above 2^63 - 1 was an `int64` holding 2^63, which a
/// store to an `int64` took without a conversion, so it wrapped silently instead of being
/// `const-eval`). Its context converts it, with the range check of a literal.
pub fn literal_type(v: i128) -> Scalar {
    if (i32::MIN as i128..=i32::MAX as i128).contains(&v) {
        Scalar::I32
    } else if (i64::MIN as i128..=i64::MAX as i128).contains(&v) {
        Scalar::I64
    } else {
        Scalar::U64
    }
}

fn fit(v: i128, s: Scalar) -> Result<ConstValue, ConstError> {
    let (lo, hi) = int_range(s);
    if v < lo || v > hi { Err(ConstError::DoesNotFit { value: v, ty: s }) } else { Ok(ConstValue::Int(v)) }
}

/// The constant of float type `s` whose register bits are `bits`: a `float` is held as the
/// `f64` of the same value, a NaN with its payload (`value::f32_bits_to_f64`), so that
/// `value::const_bits` gives `bits` back on every host.
fn float_const(bits: u64, s: Scalar) -> ConstValue {
    ConstValue::Float(match s {
        Scalar::F32 => value::f32_bits_to_f64(bits as u32),
        Scalar::F64 => f64::from_bits(bits),
        _ => value::to_f64(s, bits),
    })
}

/// A float value rounded once to type `s` (`cvt.rn`), held exactly (a `half` constant is
/// the `f64` of its rounded value, so a later conversion starts from the `half`).
fn round(v: f64, s: Scalar) -> ConstValue {
    float_const(value::from_f64(s, v), s)
}

/// Whether folding applies to operands of type `s` (everything but 16-bit floats).
pub fn foldable(s: Scalar) -> bool {
    !matches!(s, Scalar::F16 | Scalar::BF16)
}

/// Folds `a op b` where both operands have type `operand` (for shifts, the left operand's).
pub fn binary(op: BinOp, a: ConstValue, b: ConstValue, operand: Scalar) -> Result<ConstValue, ConstError> {
    use BinOp::*;
    use ConstValue::*;
    Ok(match (a, b) {
        (Int(x), Int(y)) => match op {
            Add => fit(x + y, operand)?,
            Sub => fit(x - y, operand)?,
            Mul => fit(x.checked_mul(y).ok_or(ConstError::MulOverflow)?, operand)?,
            Div | Rem if y == 0 => return Err(ConstError::DivisionByZero),
            Div => fit(x / y, operand)?,
            Rem => fit(x % y, operand)?,
            BitAnd => fit(x & y, operand)?,
            BitOr => fit(x | y, operand)?,
            BitXor => fit(x ^ y, operand)?,
            Shl | Shr => {
                let width = operand.size() as i128 * 8;
                if y < 0 || y >= width {
                    return Err(ConstError::ShiftRange { amount: y, ty: operand });
                }
                if op == Shl { fit(x << y, operand)? } else { Int(x >> y) }
            }
            Eq => Bool(x == y),
            Ne => Bool(x != y),
            Lt => Bool(x < y),
            Le => Bool(x <= y),
            Gt => Bool(x > y),
            Ge => Bool(x >= y),
            And | Or => return Err(ConstError::NeedsBools),
        },
        (Float(x), Float(y)) => {
            // A literal operand is held exactly until its register's bits are made; it is a
            // `float` (language.md §3), so compare and compute with its rounded value, as run
            // time does (`float(0.1) == 0.1` holds there).
            let (Float(x), Float(y)) = (round(x, operand), round(y, operand)) else {
                unreachable!("floats round to floats")
            };
            match op {
                // The run-time arithmetic on the operands' bits: a literal operand is a `float`
                // (language.md §3), and a NaN result is the GPU's canonical one.
                Add | Sub | Mul | Div => {
                    let bits = |v| value::const_bits(operand, Float(v));
                    float_const(value::float_arith(op, operand, bits(x), bits(y)), operand)
                }
                Eq => Bool(x == y),
                Ne => Bool(x != y),
                Lt => Bool(x < y),
                Le => Bool(x <= y),
                Gt => Bool(x > y),
                Ge => Bool(x >= y),
                _ => return Err(ConstError::NotOnFloat { op: op.as_str() }),
            }
        }
        (Bool(x), Bool(y)) => match op {
            And => Bool(x && y),
            Or => Bool(x || y),
            Eq => Bool(x == y),
            Ne => Bool(x != y),
            BitAnd => Bool(x & y),
            BitOr => Bool(x | y),
            BitXor => Bool(x ^ y),
            _ => return Err(ConstError::NotOnBool { op: op.as_str() }),
        },
        _ => return Err(ConstError::MixedKinds),
    })
}

/// Folds `op a` for an operand of type `ty`.
pub fn unary(op: UnOp, a: ConstValue, ty: Scalar) -> Result<ConstValue, ConstError> {
    use ConstValue::*;
    Ok(match (op, a) {
        (UnOp::Neg, Int(x)) => {
            if ty.is_signed_int() {
                fit(-x, ty)?
            } else {
                // C semantics: negating an unsigned value wraps.
                let (_, hi) = int_range(ty);
                Int((hi + 1 - x) % (hi + 1))
            }
        }
        (UnOp::Neg, Float(x)) => Float(-x),
        (UnOp::BitNot, Int(x)) => {
            if ty.is_signed_int() {
                Int(!x)
            } else {
                let (_, hi) = int_range(ty);
                Int(hi ^ x)
            }
        }
        (UnOp::Not, Bool(b)) => Bool(!b),
        _ => return Err(ConstError::NotApplicable { op: op.as_str() }),
    })
}

/// Folds `min(a, b)` (`max` when `max`) of two constants of type `ty` with the run-time
/// rule (`value::min_max`: for floats PTX's, where a NaN operand is ignored and -0 is below
/// +0), shared by the checker's folding of calls and of `constexpr` initialisers.
pub fn min_max(max: bool, a: ConstValue, b: ConstValue, ty: Scalar) -> Result<ConstValue, ConstError> {
    use ConstValue::*;
    Ok(match (a, b) {
        (Int(x), Int(y)) => {
            if (x < y) == max {
                Int(y)
            } else {
                Int(x)
            }
        }
        (Float(_), Float(_)) if ty.is_float() => {
            let r = value::min_max(max, ty, value::const_bits(ty, a), value::const_bits(ty, b));
            float_const(r, ty)
        }
        (Bool(_), _) | (_, Bool(_)) => return Err(ConstError::NotApplicable { op: if max { "max" } else { "min" } }),
        _ => return Err(ConstError::MixedKinds),
    })
}

/// Folds `abs(a)` for a constant of type `ty`. A float's sign bit is cleared, a NaN's too,
/// as at run time. An integer's absolute value must fit its type, like every other integer
/// fold: `abs(INT_MIN)` is `const-eval`, as `-(-2147483648)` is (review R46: it folded to
/// 2147483648, a constant outside `int` that the simulator's loop analysis then read as the
/// end of a loop whose counter could wrap; at run time `abs` of INT_MIN wraps to INT_MIN).
pub fn abs(a: ConstValue, ty: Scalar) -> Result<ConstValue, ConstError> {
    use ConstValue::*;
    match a {
        Int(x) => fit(x.abs(), ty),
        Float(x) if ty.is_float() => Ok(round(x.abs(), ty)),
        Float(_) => Err(ConstError::MixedKinds),
        Bool(_) => Err(ConstError::NotApplicable { op: "abs" }),
    }
}

/// Converts a constant from type `from` to type `to`, with C's conversions (float to int
/// truncates toward zero and must fit; int to unsigned wraps modulo 2^n).
pub fn cast(a: ConstValue, from: Scalar, to: Scalar) -> Result<ConstValue, ConstError> {
    use ConstValue::*;
    Ok(match (a, to) {
        (Bool(b), t) if t.is_int() => Int(b as i128),
        (Bool(b), t) if t.is_float() => round(b as u8 as f64, t),
        (Bool(b), _) => Bool(b),
        (Int(x), Scalar::Bool) => Bool(x != 0),
        (Int(x), t) if t.is_int() => {
            let (lo, hi) = int_range(t);
            if t.is_signed_int() {
                let bits = t.size() * 8;
                let m = 1i128 << bits;
                let mut r = x.rem_euclid(m);
                if r > hi {
                    r -= m;
                }
                let _ = lo;
                Int(r)
            } else {
                Int(x.rem_euclid(hi + 1))
            }
        }
        // Rounded once from the exact integer, as run time does (through `f64`, an `int64`
        // above 2^53 rounded twice: review R46).
        (Int(x), t) => float_const(value::int_to_float_bits(t, x), t),
        // A conversion between float types rounds once from the exact value (a literal
        // converted to `double` keeps its digits).
        (Float(x), t) if t.is_float() => round(x, t),
        (Float(x), t) => {
            // To an integer or `bool`: the operand rounded to its own type first, since a
            // literal held exactly is a `float` (language.md §3): `int(16777217.0)` is
            // 16777216 at run time.
            let x = match round(x, from) {
                Float(r) if from.is_float() => r,
                _ => x,
            };
            if t == Scalar::Bool {
                Bool(x != 0.0)
            } else {
                if !x.is_finite() {
                    return Err(ConstError::NotConvertible { value: x, ty: t });
                }
                fit(x.trunc() as i128, t)?
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ConstValue::*;

    #[test]
    fn c_division() {
        assert_eq!(binary(BinOp::Div, Int(-7), Int(2), Scalar::I32), Ok(Int(-3)));
        assert_eq!(binary(BinOp::Rem, Int(-7), Int(2), Scalar::I32), Ok(Int(-1)));
        assert!(binary(BinOp::Div, Int(1), Int(0), Scalar::I32).is_err());
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(binary(BinOp::Mul, Int(1 << 20), Int(1 << 20), Scalar::I32).is_err());
        assert_eq!(binary(BinOp::Mul, Int(1 << 20), Int(1 << 20), Scalar::I64), Ok(Int(1 << 40)));
    }

    /// The bits a `float` constant has in a register.
    fn f32_bits(c: Result<ConstValue, ConstError>) -> u64 {
        crate::value::const_bits(Scalar::F32, c.expect("folds"))
    }

    /// Review R46: float folds give the run-time bits (PTX min/max, the canonical NaN,
    /// one rounding from an `int64`), and `abs` of the least `int` does not fit.
    #[test]
    fn folds_give_the_run_time_bits() {
        let f = Scalar::F32;
        assert_eq!(f32_bits(min_max(false, Float(-0.0), Float(0.0), f)), 0x8000_0000);
        assert_eq!(f32_bits(min_max(true, Float(0.0), Float(-0.0), f)), 0);
        let nan = binary(BinOp::Div, Float(0.0), Float(0.0), f).expect("folds");
        assert_eq!(f32_bits(Ok(nan)), crate::value::CANONICAL_NAN_F32);
        assert_eq!(f32_bits(unary(UnOp::Neg, nan, f)), 0xFFFF_FFFF);
        assert_eq!(f32_bits(abs(Float(-f64::NAN), f)) & 0x8000_0000, 0);
        assert_eq!(f32_bits(min_max(false, Float(1.0), nan, f)), 1.0f32.to_bits() as u64);
        assert_eq!(f32_bits(min_max(true, nan, nan, f)), crate::value::CANONICAL_NAN_F32);
        let big = (1i128 << 60) + (1 << 36) + 1;
        assert_eq!(f32_bits(cast(Int(big), Scalar::I64, f)), (big as i64 as f32).to_bits() as u64);
        assert_eq!(binary(BinOp::Eq, Float(0.1f32 as f64), Float(0.1), f), Ok(Bool(true)));
        assert_eq!(cast(Float(16777217.0), f, Scalar::I32), Ok(Int(16777216)));
        assert!(abs(Int(i32::MIN as i128), Scalar::I32).is_err());
        assert_eq!(abs(Int(i32::MIN as i128), Scalar::I64), Ok(Int(1 << 31)));
        assert_eq!(literal_type(1 << 63), Scalar::U64);
    }

    #[test]
    fn casts() {
        assert_eq!(cast(Int(-1), Scalar::I32, Scalar::U32), Ok(Int(u32::MAX as i128)));
        assert_eq!(cast(Float(-2.7), Scalar::F32, Scalar::I32), Ok(Int(-2)));
        assert_eq!(cast(Int(3), Scalar::I32, Scalar::F32), Ok(Float(3.0)));
        assert_eq!(unary(UnOp::Neg, Int(1), Scalar::U32), Ok(Int(u32::MAX as i128)));
    }
}
