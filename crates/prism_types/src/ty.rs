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

/// A TMA tensor map: `tensor_map(T[R][C], swizzle=S)` (or `T[D][R][C]`). It describes a
/// row-major array of `T` in global memory, whose dimensions the launcher takes from the
/// argument, and the box one `tma_load_*d` copies into shared memory: `box` elements,
/// outermost first, written densely in row-major order and then swizzled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorMapTy {
    /// Element type.
    pub elem: Scalar,
    /// 2 or 3.
    pub rank: u8,
    /// Box dimensions, outermost first; only the first `rank` are used.
    pub boxd: [u32; 3],
    /// The swizzle span in bytes: 0 (none), 32, 64 or 128.
    pub swizzle: u32,
}

impl TensorMapTy {
    /// The box dimensions, outermost first.
    pub fn box_dims(&self) -> &[u32] {
        &self.boxd[..self.rank as usize]
    }

    /// Bytes one copy of the box writes (the transaction count of its mbarrier).
    pub fn box_bytes(&self) -> u64 {
        self.box_dims().iter().map(|&d| u64::from(d)).product::<u64>() * self.elem.size()
    }

    /// The byte offset of element `linear` (row-major in the box) in shared memory, from a
    /// base aligned to the swizzle's repeat: the dense offset with the 16-byte chunk index
    /// (bits 4 and up) XORed with the 128-byte row index (bits 7 and up) modulo the span's
    /// chunks (CUTLASS's `Swizzle<B, 4, 3>`, B = 1, 2, 3 for 32, 64, 128 bytes).
    pub fn smem_offset(&self, linear: u64) -> u64 {
        let off = linear * self.elem.size();
        swizzle_offset(off, self.swizzle)
    }

    /// The alignment the destination of a copy needs: 128 bytes, or the swizzle pattern's
    /// repeat (8 rows of the span: 256, 512 or 1024 bytes), where the pattern starts.
    pub fn dst_align(&self) -> u64 {
        if self.swizzle == 0 { 128 } else { u64::from(self.swizzle) * 8 }
    }

    /// Checks the dimensions (outermost first) of the row-major array a map is built from
    /// against what `cuTensorMapEncodeTiled` accepts, so the simulator refuses exactly the
    /// arrays the GPU launcher cannot describe: one dimension per box dimension, each from 1
    /// to 2^31 elements, and every stride (the bytes from one row, or plane, to the next) a
    /// multiple of 16 below 2^40. The strides are multiples of the innermost row's bytes, so
    /// that row must be a multiple of 16 bytes. The message is a sentence fragment that
    /// starts after the parameter's name.
    pub fn check_dims(&self, dims: &[u64]) -> Result<(), String> {
        if dims.len() != usize::from(self.rank) {
            return Err(format!(
                "describes a {}-dimensional array, but the argument has {} dimension{}",
                self.rank,
                dims.len(),
                if dims.len() == 1 { "" } else { "s" }
            ));
        }
        if let Some(d) = dims.iter().find(|&&d| d == 0 || d > 1 << 31) {
            return Err(format!("has a dimension of {d} elements; TMA takes 1 to 2^31"));
        }
        let row = dims[dims.len() - 1] * self.elem.size();
        if !row.is_multiple_of(16) {
            return Err(format!(
                "has rows of {row} bytes; TMA needs a multiple of 16 (pad the rows to {} elements)",
                row.next_multiple_of(16) / self.elem.size()
            ));
        }
        let mut stride = row;
        for &d in dims[1..dims.len() - 1].iter().rev() {
            stride = stride.saturating_mul(d);
        }
        if stride >= 1 << 40 {
            return Err(format!("has a stride of {stride} bytes; TMA takes strides below 2^40"));
        }
        Ok(())
    }
}

/// A byte offset under a TMA / wgmma swizzle of `span` bytes (0: none): bits 4 .. 4 + B of
/// the offset XORed with bits 7 .. 7 + B, B = log2(span / 16).
pub fn swizzle_offset(off: u64, span: u32) -> u64 {
    let b = match span {
        32 => 1,
        64 => 2,
        128 => 3,
        _ => return off,
    };
    let mask = ((1u64 << b) - 1) << 4;
    off ^ ((off >> 3) & mask)
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
    /// A typed TMA tensor map (`tensor_map(T[R][C], swizzle=S)`).
    TensorMap(TensorMapTy),
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
            Ty::TensorMap(m) => {
                write!(f, "tensor_map({}", m.elem.name())?;
                for d in m.box_dims() {
                    write!(f, "[{d}]")?;
                }
                if m.swizzle != 0 {
                    write!(f, ", swizzle={}", m.swizzle)?;
                }
                f.write_str(")")
            }
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
