//! Scalars: C++ types, literals, conversions, operators and math functions, each lowered so
//! that the GPU computes what the simulator computes (`prism_interp::ops`, `value`).
//!
//! - Signed `+ - *` and negation go through the `prism_add`-style helpers of the prelude
//!   (C++ signed overflow is undefined; the simulator wraps), unless the operands are
//!   literals small enough that no overflow is possible. Unsigned arithmetic is native.
//! - Signed `/` and `%` are native when the divisor is a literal other than 0 and -1,
//!   otherwise `prism_div`/`prism_rem` (the most negative value over -1 wraps).
//! - Shifts are native only for a literal amount below the width (and never a signed `<<`);
//!   otherwise `prism_shl`/`prism_shr`, which clamp like PTX.
//! - Float to integer conversions use the `__float2int_rz` family (truncating, saturating,
//!   NaN to 0, like the simulator); conversions to `half`/`bf16` round to nearest even once.
//! - `half`/`bf16` math goes through `float`, as the simulator's does; `rsqrt` is `1 / sqrt`
//!   (CUDA's `rsqrtf` is approximate).

use crate::cpp::Expr;
use prism_types::tir::{BinOp, ConstValue, UnOp};
use prism_types::ty::Scalar;

/// The C++ spelling of a scalar type.
pub fn c_type(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "bool",
        Scalar::I32 => "int",
        Scalar::U32 => "unsigned",
        Scalar::I64 => "long long",
        Scalar::U64 => "unsigned long long",
        Scalar::F16 => "__half",
        Scalar::BF16 => "__nv_bfloat16",
        Scalar::F32 => "float",
        Scalar::F64 => "double",
    }
}

/// A constant of type `ty` as a C++ expression with exactly the simulator's value.
pub fn literal(ty: Scalar, v: ConstValue) -> Expr {
    match ty {
        Scalar::Bool => Expr::id(
            match v {
                ConstValue::Bool(b) => b,
                ConstValue::Int(i) => i != 0,
                ConstValue::Float(x) => x != 0.0,
            }
            .to_string(),
        ),
        t if t.is_int() => {
            let i = match v {
                ConstValue::Int(i) => i,
                ConstValue::Bool(b) => b as i128,
                ConstValue::Float(x) => x as i128,
            };
            int_literal(t, i)
        }
        t => match v {
            ConstValue::Float(x) => float_literal(t, x),
            // Rounded once from the integer, as the simulator's constants are (through `f64`
            // a 64-bit integer above 2^53 would round twice).
            ConstValue::Int(i) => {
                float_literal(t, prism_types::value::to_f64(t, prism_types::value::int_to_float_bits(t, i)))
            }
            ConstValue::Bool(b) => float_literal(t, b as u8 as f64),
        },
    }
}

/// An integer literal of type `ty`, wrapped to its width like the simulator's constants.
pub fn int_literal(ty: Scalar, i: i128) -> Expr {
    let (bits, signed, suffix) = match ty {
        Scalar::I32 => (32, true, ""),
        Scalar::U32 => (32, false, "u"),
        Scalar::I64 => (64, true, "ll"),
        _ => (64, false, "ull"),
    };
    let m = 1i128 << bits;
    let mut v = i.rem_euclid(m);
    if signed && v >= m / 2 {
        v -= m;
    }
    if signed && v == -(m / 2) {
        // `-2147483648` is the negation of a literal too large for `int`.
        return Expr::id(format!("({}{suffix} - 1)", v + 1));
    }
    Expr::id(format!("{v}{suffix}"))
}

/// A floating-point literal: the value rounded once to `ty`, spelled so that the C++ compiler
/// reads back exactly that value. `half` and `bf16` go through an exact `float`.
pub fn float_literal(ty: Scalar, x: f64) -> Expr {
    match ty {
        Scalar::F64 => {
            if x.is_finite() {
                Expr::id(format!("{x:?}"))
            } else {
                Expr::call("__longlong_as_double", vec![Expr::id(format!("0x{:016x}ll", x.to_bits()))])
            }
        }
        // Through `value::from_f64`, whose NaN bits do not depend on the host (review R46).
        Scalar::F32 => f32_literal(f32::from_bits(prism_types::value::from_f64(Scalar::F32, x) as u32)),
        // A NaN by its bits: through a `float` NaN, the conversion gives the canonical
        // 16-bit NaN (ptxas folds `__float2half_rn` of any NaN constant to 0x7FFF), not
        // the simulator's constant (review R74: `-(half(0.0) / half(0.0))`, 0xFFFF in the
        // simulator, stored 0x7FFF).
        _ if x.is_nan() => {
            let bits = prism_types::value::from_f64(ty, x);
            let name = if ty == Scalar::F16 { "__ushort_as_half" } else { "__ushort_as_bfloat16" };
            Expr::call(name, vec![Expr::cast("unsigned short", Expr::id(format!("0x{bits:04x}")))])
        }
        // The simulator's correctly rounded conversion (`prism_types::value`), then the
        // exact `float` of those bits.
        _ => {
            let exact = prism_types::value::to_f64(ty, prism_types::value::from_f64(ty, x)) as f32;
            let name = if ty == Scalar::F16 { "__float2half_rn" } else { "__float2bfloat16_rn" };
            Expr::call(name, vec![f32_literal(exact)])
        }
    }
}

fn f32_literal(x: f32) -> Expr {
    if x.is_finite() {
        Expr::id(format!("{x:?}f"))
    } else {
        Expr::call("__int_as_float", vec![Expr::id(format!("0x{:08x}", x.to_bits()))])
    }
}

/// The value of an integer literal expression, if `e` is one (for overflow-free fast paths).
pub fn literal_value(e: &Expr) -> Option<i128> {
    let Expr::Id(s) = e else { return None };
    let t = s.trim_end_matches(['u', 'l']);
    t.parse::<i128>().ok()
}

fn f(name: &str, a: Expr) -> Expr {
    Expr::call(name, vec![a])
}

/// Widens a 16-bit float to `float` (exact).
fn to_f32(from: Scalar, a: Expr) -> Expr {
    match from {
        Scalar::F16 => f("__half2float", a),
        Scalar::BF16 => f("__bfloat162float", a),
        Scalar::F32 => a,
        _ => Expr::cast("float", a),
    }
}

/// Converts `a` of type `from` to `to`, as `prism_types::value::cast` does.
pub fn cast(from: Scalar, to: Scalar, a: Expr) -> Expr {
    use Scalar::*;
    if from == to {
        return a;
    }
    if to == Bool {
        let zero = match from {
            F16 | BF16 => return Expr::bin("!=", to_f32(from, a), Expr::id("0.0f")),
            F32 => "0.0f",
            F64 => "0.0",
            _ => "0",
        };
        return Expr::bin("!=", a, Expr::id(zero));
    }
    match (from, to) {
        (Bool, F16) | (Bool, BF16) => cast(F32, to, Expr::cast("float", a)),
        (Bool, _) => Expr::cast(c_type(to), a),
        (F16 | BF16, F16 | BF16 | F64) | (F16 | BF16, I32 | U32 | I64 | U64) => cast(F32, to, to_f32(from, a)),
        (F16 | BF16, F32) => to_f32(from, a),
        (F32, F64) | (F64, F32) => Expr::cast(c_type(to), a),
        (F32, F16) => f("__float2half_rn", a),
        (F32, BF16) => f("__float2bfloat16_rn", a),
        (F64, F16) => f("__double2half", a),
        (F64, BF16) => f("__double2bfloat16", a),
        (F32, I32) => f("__float2int_rz", a),
        (F32, U32) => f("__float2uint_rz", a),
        (F32, I64) => f("__float2ll_rz", a),
        (F32, U64) => f("__float2ull_rz", a),
        (F64, I32) => f("__double2int_rz", a),
        (F64, U32) => f("__double2uint_rz", a),
        (F64, I64) => f("__double2ll_rz", a),
        (F64, U64) => f("__double2ull_rz", a),
        (I32, F16) => f("__int2half_rn", a),
        (U32, F16) => f("__uint2half_rn", a),
        (I64, F16) => f("__ll2half_rn", a),
        (U64, F16) => f("__ull2half_rn", a),
        (I32, BF16) => f("__int2bfloat16_rn", a),
        (U32, BF16) => f("__uint2bfloat16_rn", a),
        (I64, BF16) => f("__ll2bfloat16_rn", a),
        (U64, BF16) => f("__ull2bfloat16_rn", a),
        // Integer to integer wraps; integer to float rounds to nearest (C's conversions).
        _ => Expr::cast(c_type(to), a),
    }
}

/// `a op b` for operands of type `ty` (`b` of type `b_ty` for shifts). `exact`: the
/// operands' ranges make the exact result fit the type (`crate::interval`), so signed
/// `+ - *` need not wrap.
pub fn binary(op: BinOp, ty: Scalar, a: Expr, b: Expr, b_ty: Scalar, exact: bool) -> Expr {
    use BinOp::*;
    let sym = match op {
        Add => "+",
        Sub => "-",
        Mul => "*",
        Div => "/",
        Rem => "%",
        BitAnd | And => "&",
        BitOr | Or => "|",
        BitXor => "^",
        Shl => "<<",
        Shr => ">>",
        Eq => "==",
        Ne => "!=",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
    };
    if ty.is_float() {
        let (a, b) = (arith_operand(ty, a), arith_operand(ty, b));
        return match op {
            Rem => match ty {
                Scalar::F32 => Expr::call("fmodf", vec![a, b]),
                Scalar::F64 => Expr::call("fmod", vec![a, b]),
                _ => cast(Scalar::F32, ty, Expr::call("fmodf", vec![to_f32(ty, a), to_f32(ty, b)])),
            },
            // `float` and `double` arithmetic through the rounding intrinsics, which nvcc
            // does not evaluate at compile time: it folds `pz / pz` with `pz` a known zero
            // to the host's NaN (`0xFFC00000` on x86), where the GPU and the simulator make
            // `0x7FFFFFFF` (review R72). They compile to the same FADD, FMUL and division,
            // and are never contracted, as `--fmad=false` already ensures.
            Add | Sub | Mul | Div if matches!(ty, Scalar::F32 | Scalar::F64) => {
                // `1 / x` is the correctly rounded reciprocal, one `rcp.rn` where a division
                // is a subroutine call: nvcc makes the same choice for `1.0f / x`.
                if op == Div && matches!(&a, Expr::Id(one) if one == "1.0f" || one == "1.0") {
                    return Expr::call(if ty == Scalar::F32 { "__frcp_rn" } else { "__drcp_rn" }, vec![b]);
                }
                let name = match (op, ty) {
                    (Add, Scalar::F32) => "__fadd_rn",
                    (Sub, Scalar::F32) => "__fsub_rn",
                    (Mul, Scalar::F32) => "__fmul_rn",
                    (Div, Scalar::F32) => "__fdiv_rn",
                    (Add, _) => "__dadd_rn",
                    (Sub, _) => "__dsub_rn",
                    (Mul, _) => "__dmul_rn",
                    _ => "__ddiv_rn",
                };
                Expr::call(name, vec![a, b])
            }
            _ => Expr::bin(sym, a, b),
        };
    }
    if ty == Scalar::Bool {
        return Expr::bin(sym, a, b);
    }
    // Identities: `x + 0`, `x - 0`, `x * 1`, `0 + x`, `1 * x` (exact for integers).
    match (op, literal_value(&a), literal_value(&b)) {
        (Add | Sub | BitOr | BitXor | Shl | Shr, _, Some(0)) | (Mul | Div, _, Some(1)) => return a,
        (Add | BitOr | BitXor, Some(0), _) | (Mul, Some(1), _) => return b,
        _ => {}
    }
    let signed = ty.is_signed_int();
    let width: i128 = if ty.size() == 4 { 32 } else { 64 };
    match op {
        Add | Sub | Mul if signed => {
            if exact {
                return Expr::bin(sym, a, b);
            }
            if let (Some(x), Some(y)) = (literal_value(&a), literal_value(&b)) {
                let r = match op {
                    Add => x + y,
                    Sub => x - y,
                    _ => x * y,
                };
                let lim = 1i128 << (width - 1);
                if (-lim..lim).contains(&r) {
                    return Expr::bin(sym, a, b);
                }
            }
            let name = match op {
                Add => "prism_add",
                Sub => "prism_sub",
                _ => "prism_mul",
            };
            Expr::call(name, vec![a, b])
        }
        Div | Rem if signed => match literal_value(&b) {
            Some(d) if d != 0 && d != -1 => Expr::bin(sym, a, b),
            _ => Expr::call(if op == Div { "prism_div" } else { "prism_rem" }, vec![a, b]),
        },
        Shl | Shr => {
            let amount = literal_value(&b).filter(|_| b_ty.is_int());
            match amount {
                Some(n) if (0..width).contains(&n) && !(signed && op == Shl) => Expr::bin(sym, a, b),
                _ => Expr::call(if op == Shl { "prism_shl" } else { "prism_shr" }, vec![a, b]),
            }
        }
        _ => Expr::bin(sym, a, b),
    }
}

/// An operand of `float` or `double` arithmetic (an operator, a comparison, a math function
/// other than `abs`): a negation's bit operation (`prism_fneg(x)`) becomes C++'s `-x`, which
/// nvcc folds into the instruction's operand modifier. Only a NaN's bits could tell the two
/// apart, and such arithmetic returns the canonical NaN (or, for `min`/`max`, the other
/// operand) whatever the NaN operand's sign, in the simulator and on the GPU.
fn arith_operand(ty: Scalar, e: Expr) -> Expr {
    match e {
        Expr::Call(name, mut args)
            if name == "prism_fneg" && args.len() == 1 && matches!(ty, Scalar::F32 | Scalar::F64) =>
        {
            Expr::Un("-", Box::new(args.remove(0)))
        }
        e => e,
    }
}

/// `op a` for an operand of type `ty`.
pub fn unary(op: UnOp, ty: Scalar, a: Expr) -> Expr {
    match op {
        UnOp::Not => Expr::Un("!", Box::new(a)),
        UnOp::BitNot => Expr::Un("~", Box::new(a)),
        UnOp::Neg if ty.is_signed_int() => match literal_value(&a) {
            Some(v) if v > 0 => Expr::Un("-", Box::new(a)),
            _ => Expr::call("prism_neg", vec![a]),
        },
        // A bit operation, also on a NaN (the prelude's `prism_fneg`), as the simulator's.
        UnOp::Neg if ty.is_float() => Expr::call("prism_fneg", vec![a]),
        UnOp::Neg => Expr::Un("-", Box::new(a)),
    }
}

/// A pure math intrinsic with result type `ty` on operands of type `arg_ty`.
pub fn math(name: &str, ty: Scalar, arg_ty: Scalar, args: Vec<Expr>) -> Expr {
    use Scalar::*;
    match name {
        "popc" | "clz" | "ffs" | "brev" => {
            let wide = arg_ty.size() == 8;
            let a = args.into_iter().next().expect("one operand");
            return match (name, wide) {
                ("popc", false) => f("__popc", Expr::cast("unsigned", a)),
                ("popc", true) => f("__popcll", Expr::cast("unsigned long long", a)),
                ("clz", false) => f("__clz", Expr::cast("int", a)),
                ("clz", true) => f("__clzll", Expr::cast("long long", a)),
                ("ffs", false) => f("__ffs", Expr::cast("int", a)),
                ("ffs", true) => f("__ffsll", Expr::cast("long long", a)),
                (_, false) => cast(U32, ty, f("__brev", Expr::cast("unsigned", a))),
                (_, true) => cast(U64, ty, f("__brevll", Expr::cast("unsigned long long", a))),
            };
        }
        // The operand's bits as an `unsigned`: a reinterpretation, never a conversion.
        "bits32" => {
            let a = args.into_iter().next().expect("one operand");
            return match arg_ty {
                F32 => f("__float_as_uint", a),
                F16 => Expr::cast("unsigned", f("__half_as_ushort", a)),
                BF16 => Expr::cast("unsigned", f("__bfloat16_as_ushort", a)),
                _ => Expr::cast("unsigned", a),
            };
        }
        _ => {}
    }
    if ty.is_int() {
        let helper = match name {
            "abs" => "prism_abs",
            "min" => "prism_min",
            _ => "prism_max",
        };
        return Expr::call(helper, args);
    }
    if name == "abs" {
        // Clears the sign bit, also of a NaN (the prelude's `prism_fabs`), as the simulator does.
        return Expr::call("prism_fabs", args);
    }
    match ty {
        F32 | F64 => {
            let args: Vec<Expr> = args.into_iter().map(|a| arith_operand(ty, a)).collect();
            let d = ty == F64;
            let pick = |s: &str, dbl: &str| if d { dbl.to_string() } else { s.to_string() };
            // The correctly rounded operations through their rounding intrinsics, and `min`
            // and `max` through the prelude's PTX `min`/`max`: nvcc evaluates `sqrtf`,
            // `fmaf`, `fminf` and `fmaxf` of known operands at compile time with the host's
            // rules (a NaN's bits, `fminf(+0, -0)` = `+0` where PTX's `min` gives `-0`;
            // review R72), and these it does not.
            if name == "rsqrt" {
                return Expr::call(
                    pick("__frcp_rn", "__drcp_rn"),
                    vec![Expr::call(pick("__fsqrt_rn", "__dsqrt_rn"), args)],
                );
            }
            let fname = match name {
                "min" => "prism_fmin".to_string(),
                "max" => "prism_fmax".to_string(),
                "sqrt" => pick("__fsqrt_rn", "__dsqrt_rn"),
                "fma" => pick("__fmaf_rn", "__fma_rn"),
                n => {
                    if d {
                        n.to_string()
                    } else {
                        format!("{n}f")
                    }
                }
            };
            Expr::call(fname, args)
        }
        _ => {
            // half and bf16: compute in float, round once.
            let wide: Vec<Expr> = args.into_iter().map(|a| to_f32(arg_ty, a)).collect();
            cast(F32, ty, math(name, F32, F32, wide))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpp::expr;

    #[test]
    fn literals_read_back_exactly() {
        assert_eq!(expr(&int_literal(Scalar::I32, -2147483648)), "(-2147483647 - 1)");
        assert_eq!(expr(&int_literal(Scalar::U32, -1)), "4294967295u");
        assert_eq!(expr(&int_literal(Scalar::I64, 5)), "5ll");
        assert_eq!(expr(&float_literal(Scalar::F32, 0.1)), "0.1f");
        assert_eq!(expr(&float_literal(Scalar::F32, 1.0)), "1.0f");
        assert_eq!(expr(&float_literal(Scalar::F32, f64::INFINITY)), "__int_as_float(0x7f800000)");
        assert_eq!(expr(&float_literal(Scalar::F16, 0.1)), "__float2half_rn(0.099975586f)");
        assert_eq!(expr(&float_literal(Scalar::F64, 1e300)), "1e300");
    }

    #[test]
    fn signed_arithmetic_wraps_through_helpers() {
        let (a, b) = (Expr::id("a"), Expr::id("b"));
        assert_eq!(expr(&binary(BinOp::Add, Scalar::I32, a.clone(), b.clone(), Scalar::I32, false)), "prism_add(a, b)");
        assert_eq!(expr(&binary(BinOp::Add, Scalar::I32, a.clone(), b.clone(), Scalar::I32, true)), "a + b");
        assert_eq!(expr(&binary(BinOp::Add, Scalar::U32, a.clone(), b.clone(), Scalar::U32, false)), "a + b");
        assert_eq!(expr(&binary(BinOp::Div, Scalar::I32, a.clone(), Expr::id("4"), Scalar::I32, false)), "a / 4");
        assert_eq!(expr(&binary(BinOp::Div, Scalar::I32, a.clone(), b.clone(), Scalar::I32, false)), "prism_div(a, b)");
        assert_eq!(expr(&binary(BinOp::Shr, Scalar::I32, a.clone(), Expr::id("3"), Scalar::I32, false)), "a >> 3");
        assert_eq!(
            expr(&binary(BinOp::Shl, Scalar::I32, a.clone(), Expr::id("3"), Scalar::I32, false)),
            "prism_shl(a, 3)"
        );
        assert_eq!(expr(&binary(BinOp::Shl, Scalar::U32, a, Expr::id("40"), Scalar::I32, false)), "prism_shl(a, 40)");
    }

    #[test]
    fn conversions() {
        let x = Expr::id("x");
        assert_eq!(expr(&cast(Scalar::F32, Scalar::I32, x.clone())), "__float2int_rz(x)");
        assert_eq!(expr(&cast(Scalar::BF16, Scalar::F16, x.clone())), "__float2half_rn(__bfloat162float(x))");
        assert_eq!(expr(&cast(Scalar::F16, Scalar::Bool, x.clone())), "__half2float(x) != 0.0f");
        assert_eq!(
            expr(&math("sqrt", Scalar::F16, Scalar::F16, vec![x])),
            "__float2half_rn(__fsqrt_rn(__half2float(x)))"
        );
    }

    /// `float` and `double` operations print as forms nvcc does not evaluate at compile time
    /// with the host's rules (review R72): the rounding intrinsics, PTX's `min`/`max`.
    #[test]
    fn float_operations_nvcc_cannot_fold() {
        let (a, b) = (Expr::id("a"), Expr::id("b"));
        let bin = |op, ty, x: &Expr, y: &Expr| expr(&binary(op, ty, x.clone(), y.clone(), ty, false));
        assert_eq!(bin(BinOp::Add, Scalar::F32, &a, &b), "__fadd_rn(a, b)");
        assert_eq!(bin(BinOp::Sub, Scalar::F32, &a, &b), "__fsub_rn(a, b)");
        assert_eq!(bin(BinOp::Mul, Scalar::F64, &a, &b), "__dmul_rn(a, b)");
        assert_eq!(bin(BinOp::Div, Scalar::F64, &a, &b), "__ddiv_rn(a, b)");
        assert_eq!(bin(BinOp::Div, Scalar::F32, &Expr::id("1.0f"), &b), "__frcp_rn(b)");
        assert_eq!(bin(BinOp::Div, Scalar::F32, &Expr::id("2.0f"), &b), "__fdiv_rn(2.0f, b)");
        assert_eq!(bin(BinOp::Lt, Scalar::F32, &a, &b), "a < b");
        let m = |name, ty| expr(&math(name, ty, ty, vec![a.clone(), b.clone()]));
        assert_eq!(m("min", Scalar::F32), "prism_fmin(a, b)");
        assert_eq!(m("max", Scalar::F64), "prism_fmax(a, b)");
        assert_eq!(
            expr(&math("fma", Scalar::F32, Scalar::F32, vec![a.clone(), b.clone(), a.clone()])),
            "__fmaf_rn(a, b, a)"
        );
        assert_eq!(expr(&math("rsqrt", Scalar::F64, Scalar::F64, vec![a.clone()])), "__drcp_rn(__dsqrt_rn(a))");
    }
}
