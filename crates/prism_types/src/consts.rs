//! Compile-time arithmetic on constants.
//!
//! The checker folds every operation whose operands are constants, so `constexpr` names,
//! array sizes, perspective sizes, split cases and `smem=` can use ordinary arithmetic.
//! Integer results must fit their type (an overflowing constant is an error, not a silent
//! wrap); division truncates toward zero and `%` takes the sign of the dividend, as in C.
//! Floating-point constants are folded in `double` and rounded to `float` where the type
//! is `float`; `half` and `bf16` arithmetic is left to run time.

use crate::tir::{BinOp, ConstValue, UnOp};
use crate::ty::Scalar;

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

fn fit(v: i128, s: Scalar) -> Result<ConstValue, ConstError> {
    let (lo, hi) = int_range(s);
    if v < lo || v > hi { Err(ConstError::DoesNotFit { value: v, ty: s }) } else { Ok(ConstValue::Int(v)) }
}

fn round(v: f64, s: Scalar) -> ConstValue {
    ConstValue::Float(if s == Scalar::F32 { v as f32 as f64 } else { v })
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
        (Float(x), Float(y)) => match op {
            Add => round(x + y, operand),
            Sub => round(x - y, operand),
            Mul => round(x * y, operand),
            Div => round(x / y, operand),
            Eq => Bool(x == y),
            Ne => Bool(x != y),
            Lt => Bool(x < y),
            Le => Bool(x <= y),
            Gt => Bool(x > y),
            Ge => Bool(x >= y),
            _ => return Err(ConstError::NotOnFloat { op: op.as_str() }),
        },
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

/// Converts a constant from type `from` to type `to`, with C's conversions (float to int
/// truncates toward zero and must fit; int to unsigned wraps modulo 2^n).
pub fn cast(a: ConstValue, from: Scalar, to: Scalar) -> Result<ConstValue, ConstError> {
    use ConstValue::*;
    let _ = from;
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
        (Int(x), t) => round(x as f64, t),
        (Float(x), Scalar::Bool) => Bool(x != 0.0),
        (Float(x), t) if t.is_int() => {
            if !x.is_finite() {
                return Err(ConstError::NotConvertible { value: x, ty: t });
            }
            fit(x.trunc() as i128, t)?
        }
        (Float(x), t) => round(x, t),
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

    #[test]
    fn casts() {
        assert_eq!(cast(Int(-1), Scalar::I32, Scalar::U32), Ok(Int(u32::MAX as i128)));
        assert_eq!(cast(Float(-2.7), Scalar::F32, Scalar::I32), Ok(Int(-2)));
        assert_eq!(cast(Int(3), Scalar::I32, Scalar::F32), Ok(Float(3.0)));
        assert_eq!(unary(UnOp::Neg, Int(1), Scalar::U32), Ok(Int(u32::MAX as i128)));
    }
}
