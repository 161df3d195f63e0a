//! Ordinary types: scalars, local arrays, pointers, opaque handles, and the implicit
//! conversions between them.
//!
//! Conversions follow C where C is safe and ask for a cast where it is not: integers widen
//! and change sign implicitly, integers convert to floating point, floating-point types widen;
//! anything that can lose information (`float` to `int`, `double` to `float`, `int64` to
//! `int`) needs an explicit cast such as `int(x)`. Untyped literals take the type their
//! context needs. `bool` never converts implicitly: conditions are `bool`, and `x != 0` says
//! what is meant. These choices are recorded in `docs/language.md`.

use std::fmt;

/// A scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// `bool`
    Bool,
    /// `int` (32-bit signed)
    I32,
    /// `uint` (32-bit unsigned)
    U32,
    /// `int64`
    I64,
    /// `uint64`
    U64,
    /// `half` (IEEE binary16)
    F16,
    /// `bf16` (bfloat16)
    BF16,
    /// `float` (binary32)
    F32,
    /// `double` (binary64)
    F64,
}

impl Scalar {
    /// The Prism spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "int",
            Scalar::U32 => "uint",
            Scalar::I64 => "int64",
            Scalar::U64 => "uint64",
            Scalar::F16 => "half",
            Scalar::BF16 => "bf16",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        }
    }

    /// The scalar a type name denotes.
    pub fn from_name(name: &str) -> Option<Scalar> {
        Some(match name {
            "bool" => Scalar::Bool,
            "int" => Scalar::I32,
            "uint" => Scalar::U32,
            "int64" => Scalar::I64,
            "uint64" => Scalar::U64,
            "half" => Scalar::F16,
            "bf16" => Scalar::BF16,
            "float" => Scalar::F32,
            "double" => Scalar::F64,
            _ => return None,
        })
    }

    /// Size in bytes.
    pub fn size(self) -> u64 {
        match self {
            Scalar::Bool => 1,
            Scalar::F16 | Scalar::BF16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    /// True for the integer types.
    pub fn is_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64)
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64)
    }

    /// True for integers and floats.
    pub fn is_numeric(self) -> bool {
        self.is_int() || self.is_float()
    }

    /// True for the signed integer types.
    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::I64)
    }

    fn int_width(self) -> u32 {
        match self {
            Scalar::I32 | Scalar::U32 => 32,
            _ => 64,
        }
    }

    fn float_rank(self) -> u32 {
        match self {
            Scalar::F16 | Scalar::BF16 => 16,
            Scalar::F32 => 32,
            _ => 64,
        }
    }

    /// Whether a value of type `self` converts implicitly to `to` (without a cast).
    pub fn converts_to(self, to: Scalar) -> bool {
        if self == to {
            return true;
        }
        match (self.is_int(), to.is_int(), self.is_float(), to.is_float()) {
            // Integers: widen, or change sign at the same width.
            (true, true, _, _) => self.int_width() <= to.int_width(),
            // Integers to floating point, as C does.
            (true, _, _, true) => true,
            // Floating point widens; half and bf16 only to float and double.
            (_, _, true, true) => self.float_rank() < to.float_rank(),
            _ => false,
        }
    }

    /// The type of `a op b` for arithmetic and comparison operands (C's usual arithmetic
    /// conversions; `half op half` stays `half`, mixed 16-bit formats compute in `float`).
    pub fn common(a: Scalar, b: Scalar) -> Option<Scalar> {
        if a == b {
            return Some(a);
        }
        if !a.is_numeric() || !b.is_numeric() {
            return None;
        }
        if a.is_float() || b.is_float() {
            let fa = if a.is_float() { a.float_rank() } else { 0 };
            let fb = if b.is_float() { b.float_rank() } else { 0 };
            let r = fa.max(fb);
            return Some(match r {
                64 => Scalar::F64,
                32 => Scalar::F32,
                // Mixed half/bf16, or a 16-bit float with an integer: compute in float.
                _ => {
                    if a.is_float() && !b.is_float() {
                        a
                    } else if b.is_float() && !a.is_float() {
                        b
                    } else {
                        Scalar::F32
                    }
                }
            });
        }
        // Both integers: the wider wins; at equal width unsigned wins (C).
        let (wa, wb) = (a.int_width(), b.int_width());
        let b_wins = wb > wa || (wa == wb && a.is_signed_int());
        Some(if b_wins { b } else { a })
    }
}

/// A type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// A scalar value.
    Scalar(Scalar),
    /// A thread-local array with static dimensions, outermost first.
    Array {
        /// Element type.
        elem: Scalar,
        /// Dimensions.
        dims: Vec<u64>,
    },
    /// A reference to memory other threads may share: a pointer parameter, a shared array,
    /// or a name made by `partition`/`claim`/`async`.
    Ptr {
        /// Element type.
        elem: Scalar,
        /// False for `ptr(const(T))`.
        mutable: bool,
    },
    /// An opaque handle passed through to intrinsics (`CUTensorMap`).
    Opaque(String),
    /// No value (a call to a function without a return type).
    Void,
}

impl Ty {
    /// The scalar inside, for scalar types.
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Ty::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// `bool`
    pub const BOOL: Ty = Ty::Scalar(Scalar::Bool);
    /// `int`
    pub const INT: Ty = Ty::Scalar(Scalar::I32);
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Scalar(s) => f.write_str(s.name()),
            Ty::Array { elem, dims } => {
                f.write_str(elem.name())?;
                for d in dims {
                    write!(f, "[{d}]")?;
                }
                Ok(())
            }
            Ty::Ptr { elem, mutable: true } => write!(f, "ptr({})", elem.name()),
            Ty::Ptr { elem, mutable: false } => write!(f, "ptr(const({}))", elem.name()),
            Ty::Opaque(n) => f.write_str(n),
            Ty::Void => f.write_str("no value"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Scalar::*;
    use super::*;

    #[test]
    fn conversions() {
        assert!(I32.converts_to(I64));
        assert!(I32.converts_to(U32));
        assert!(!I64.converts_to(I32));
        assert!(I32.converts_to(F32));
        assert!(!F32.converts_to(I32));
        assert!(BF16.converts_to(F32));
        assert!(!F32.converts_to(BF16));
        assert!(!F16.converts_to(BF16));
        assert!(!Bool.converts_to(I32));
        assert!(!I32.converts_to(Bool));
    }

    #[test]
    fn common_types() {
        assert_eq!(Scalar::common(I32, U32), Some(U32));
        assert_eq!(Scalar::common(I32, I64), Some(I64));
        assert_eq!(Scalar::common(U32, I64), Some(I64));
        assert_eq!(Scalar::common(I32, F32), Some(F32));
        assert_eq!(Scalar::common(F16, BF16), Some(F32));
        assert_eq!(Scalar::common(BF16, BF16), Some(BF16));
        assert_eq!(Scalar::common(BF16, I32), Some(BF16));
        assert_eq!(Scalar::common(F32, F64), Some(F64));
        assert_eq!(Scalar::common(Bool, I32), None);
    }
}
