//! The IR text form.
//!
//! Deterministic and complete except for source spans, so that
//! `print(parse(print(p))) == print(p)`. Example:
//!
//! ```text
//! device @f(%0, %1) entry thread[32] facts 32 1 smem 0 {
//!   reg %0: ptr "a"
//!   reg %1: i32 "n"
//!   reg %2: i32
//!   mem #0 param "a" thread[32] f32
//!   access !0 read #0 index %4
//!   body {
//!     %2 = relid thread[1] in thread[32]
//!     %3 = load %0[%2] !0
//!   }
//! }
//! ```

use crate::entities::FuncId;
use crate::ir::*;
use prism_types::tir::{BinOp, ConstValue, FnKind, RawIndex, UnOp, Unroll};
use prism_types::ty::Scalar;
use std::fmt::Write;

/// The text name of a type. A typed tensor map is one word, `tmap.ELEM.BOX.swS`
/// (`tmap.bf16.64x64.sw128`), which the IR parser reads back.
pub fn type_name(t: Type) -> std::borrow::Cow<'static, str> {
    match t {
        Type::Scalar(s) => scalar_name(s).into(),
        Type::Ptr => "ptr".into(),
        Type::Opaque => "tmap".into(),
        Type::TensorMap(m) => {
            let dims: Vec<String> = m.box_dims().iter().map(|d| d.to_string()).collect();
            format!("tmap.{}.{}.sw{}", scalar_name(m.elem), dims.join("x"), m.swizzle).into()
        }
    }
}

/// The text name of a scalar type.
pub fn scalar_name(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "bool",
        Scalar::I32 => "i32",
        Scalar::U32 => "u32",
        Scalar::I64 => "i64",
        Scalar::U64 => "u64",
        Scalar::F16 => "f16",
        Scalar::BF16 => "bf16",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
    }
}

/// The text name of a binary operator.
pub fn binop_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "add",
        BinOp::Sub => "sub",
        BinOp::Mul => "mul",
        BinOp::Div => "div",
        BinOp::Rem => "rem",
        BinOp::BitAnd => "band",
        BinOp::BitOr => "bor",
        BinOp::BitXor => "bxor",
        BinOp::Shl => "shl",
        BinOp::Shr => "shr",
        BinOp::Eq => "eq",
        BinOp::Ne => "ne",
        BinOp::Lt => "lt",
        BinOp::Le => "le",
        BinOp::Gt => "gt",
        BinOp::Ge => "ge",
        BinOp::And => "and",
        BinOp::Or => "or",
    }
}

/// The text name of a unary operator.
pub fn unop_name(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => "neg",
        UnOp::BitNot => "bnot",
        UnOp::Not => "not",
    }
}

/// The text name of a raw index.
pub fn raw_name(r: RawIndex) -> &'static str {
    match r {
        RawIndex::ThreadIdx => "thread_idx",
        RawIndex::BlockIdx => "block_idx",
        RawIndex::BlockDim => "block_dim",
        RawIndex::GridDim => "grid_dim",
        RawIndex::ThreadCoord(0) => "thread_x",
        RawIndex::ThreadCoord(1) => "thread_y",
        RawIndex::ThreadCoord(_) => "thread_z",
        RawIndex::BlockCoord(0) => "block_x",
        RawIndex::BlockCoord(1) => "block_y",
        RawIndex::BlockCoord(_) => "block_z",
        RawIndex::BlockExtent(0) => "block_dim_x",
        RawIndex::BlockExtent(1) => "block_dim_y",
        RawIndex::BlockExtent(_) => "block_dim_z",
        RawIndex::GridExtent(0) => "grid_dim_x",
        RawIndex::GridExtent(1) => "grid_dim_y",
        RawIndex::GridExtent(_) => "grid_dim_z",
    }
}

/// Prints a constant so that it reads back exactly, a NaN's bits included: `nan` is the
/// host's quiet NaN (`f64::NAN`), any other is `nan_0x` and its sixteen hex digits. Folding
/// computes NaNs with the simulator's bits (the GPU's `0x7fffffff` for a `float`, carried in
/// a double without Rust's `as`), and IR text read back must run the same NaN (review R46).
pub fn const_text(v: ConstValue) -> String {
    match v {
        ConstValue::Bool(b) => b.to_string(),
        ConstValue::Int(i) => i.to_string(),
        ConstValue::Float(x) => {
            if x.is_nan() {
                if x.to_bits() == f64::NAN.to_bits() { "nan".into() } else { format!("nan_{:#018x}", x.to_bits()) }
            } else if x.is_infinite() {
                if x > 0.0 { "inf".into() } else { "-inf".into() }
            } else {
                format!("{x:?}")
            }
        }
    }
}

/// Prints a whole program.
pub fn print(p: &Program) -> String {
    let mut out = String::new();
    for (i, f) in p.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        print_function(p, f, &mut out);
    }
    out
}

/// Prints one function.
pub fn print_function(p: &Program, f: &Function, out: &mut String) {
    let kind = match f.kind {
        FnKind::Kernel => "kernel",
        FnKind::Device => "device",
    };
    let params: Vec<String> = f.params.iter().map(|r| r.to_string()).collect();
    let _ = write!(
        out,
        "{kind} @{}({}) entry {} facts {} {} smem {}",
        f.name,
        params.join(", "),
        f.entry,
        f.facts.t_mult,
        f.facts.b_mult,
        f.smem_size
    );
    if let Some(lb) = f.launch_bounds {
        let _ = write!(out, " launch_bounds {lb}");
    }
    if let Some(d) = f.block_shape {
        let _ = write!(out, " block_shape {} {} {}", d.x, d.y, d.z);
    }
    if let Some(d) = f.dyn_smem {
        let _ = write!(out, " dyn_smem {} {} {}", d.count, scalar_name(d.elem), d.offset);
    }
    if let Some(m) = f.min_blocks {
        let _ = write!(out, " min_blocks {m}");
    }
    if let Some(mb) = f.max_blocks {
        let _ = write!(out, " max_blocks {mb}");
    }
    if let Some(t) = f.ret {
        let _ = write!(out, " -> {}", type_name(t));
    }
    out.push_str(" {\n");
    for (i, r) in f.regs.iter().enumerate() {
        let _ = write!(out, "  reg %{i}: {}", type_name(r.ty));
        if let Some(n) = &r.name {
            let _ = write!(out, " {n:?}");
        }
        out.push('\n');
    }
    for (i, l) in f.locals.iter().enumerate() {
        let _ = writeln!(out, "  local ${i}: {}[{}] {:?}", scalar_name(l.elem), l.len, l.name);
    }
    for (i, m) in f.mems.iter().enumerate() {
        let _ = write!(out, "  mem #{i} {} {:?} {} {}", m.kind.as_str(), m.name, m.persp, scalar_name(m.elem));
        if let Some(parent) = m.parent {
            let _ = write!(out, " of {parent}");
        }
        out.push('\n');
    }
    for (i, a) in f.accesses.iter().enumerate() {
        let _ = write!(out, "  access !{i} {} {}", a.kind.as_str(), a.mem);
        if let Some(r) = a.view_index {
            let _ = write!(out, " index {r}");
        }
        out.push('\n');
    }
    out.push_str("  body {\n");
    block(p, &f.body, 2, out);
    out.push_str("  }\n}\n");
}

fn indent(depth: usize, out: &mut String) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn block(p: &Program, b: &Block, depth: usize, out: &mut String) {
    for i in &b.insts {
        inst(p, &i.kind, depth, out);
    }
}

fn func_name(p: &Program, id: FuncId) -> String {
    p.functions.get(id.index()).map(|f| format!("@{}", f.name)).unwrap_or_else(|| format!("@{id}"))
}

/// The suffix of a uniformity assertion's name that says what it checks (none for a
/// variable).
pub(crate) fn checked_suffix(what: Checked) -> &'static str {
    match what {
        Checked::Variable => "",
        Checked::Exit => ".exit",
        Checked::Break => ".break",
        Checked::Continue => ".continue",
        Checked::Returned => ".returned",
        Checked::Argument { .. } => ".arg",
        Checked::Result { .. } => ".result",
        Checked::Operand { .. } => ".operand",
    }
}

/// The call a uniformity assertion is about: ` @f 1` for argument 1 of `f`, ` @f` for its
/// result, ` wgmma_bf16 1` for operand 1 of an intrinsic.
fn checked_call(p: &Program, what: Checked) -> String {
    match what {
        Checked::Argument { func, index } => format!(" {} {index}", func_name(p, func)),
        Checked::Result { func } => format!(" {}", func_name(p, func)),
        Checked::Operand { intrinsic, index } => format!(" {} {index}", intrinsic.sig().name),
        _ => String::new(),
    }
}

fn intr_arg(a: &IntrArg) -> String {
    match a {
        IntrArg::Val(r) => r.to_string(),
        IntrArg::Elem { ptr, index } => format!("{ptr}[{index}]"),
    }
}

fn inst(p: &Program, k: &InstKind, depth: usize, out: &mut String) {
    use InstKind::*;
    indent(depth, out);
    match k {
        Const { dst, value } => {
            let _ = writeln!(out, "{dst} = const {}", const_text(*value));
        }
        Copy { dst, src } => {
            let _ = writeln!(out, "{dst} = copy {src}");
        }
        Unary { dst, op, arg } => {
            let _ = writeln!(out, "{dst} = {} {arg}", unop_name(*op));
        }
        Binary { dst, op, lhs, rhs } => {
            let _ = writeln!(out, "{dst} = {} {lhs}, {rhs}", binop_name(*op));
        }
        Select { dst, cond, then, otherwise } => {
            let _ = writeln!(out, "{dst} = select {cond}, {then}, {otherwise}");
        }
        Cast { dst, arg } => {
            let _ = writeln!(out, "{dst} = cast {arg}");
        }
        RelId { dst, code, target } => {
            let _ = writeln!(out, "{dst} = relid {target} in {code}");
        }
        Raw { dst, index } => {
            let _ = writeln!(out, "{dst} = raw {}", raw_name(*index));
        }
        SharedAddr { dst, offset, len, elem } => {
            let _ = writeln!(out, "{dst} = shared {offset} {len} {}", scalar_name(*elem));
        }
        LocalAddr { dst, local } => {
            let _ = writeln!(out, "{dst} = localaddr {local}");
        }
        PtrOffset { dst, base, offset, bound } => match bound {
            None => {
                let _ = writeln!(out, "{dst} = ptradd {base}, {offset}");
            }
            Some((len, elem)) => {
                let _ = writeln!(out, "{dst} = ptradd {base}, {offset} slot {len} {}", scalar_name(*elem));
            }
        },
        Load { dst, ptr, index, access } => {
            let _ = writeln!(out, "{dst} = load {ptr}[{index}] {access}");
        }
        Store { ptr, index, value, access } => {
            let _ = writeln!(out, "store {ptr}[{index}], {value} {access}");
        }
        LoadVec { dsts, ptr, index, access } => {
            let d: Vec<String> = dsts.iter().map(|r| r.to_string()).collect();
            let _ = writeln!(out, "{} = loadvec {ptr}[{index}] {access}", d.join(", "));
        }
        StoreVec { ptr, index, values, access } => {
            let v: Vec<String> = values.iter().map(|r| r.to_string()).collect();
            let _ = writeln!(out, "storevec {ptr}[{index}], {} {access}", v.join(", "));
        }
        LocalDecl { local } => {
            let _ = writeln!(out, "decl {local}");
        }
        LocalLoad { dst, local, index } => {
            let _ = writeln!(out, "{dst} = lload {local}[{index}]");
        }
        LocalStore { local, index, value } => {
            let _ = writeln!(out, "lstore {local}[{index}], {value}");
        }
        Call { dst, func, args, smem_offset, accesses } => {
            if let Some(d) = dst {
                let _ = write!(out, "{d} = ");
            }
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            let _ = write!(out, "call {}({}) smem {smem_offset}", func_name(p, *func), args.join(", "));
            for a in accesses {
                let _ = write!(out, " {a}");
            }
            out.push('\n');
        }
        Intrinsic { dsts, intrinsic, args, accesses } => {
            if !dsts.is_empty() {
                let d: Vec<String> = dsts.iter().map(|r| r.to_string()).collect();
                let _ = write!(out, "{} = ", d.join(", "));
            }
            let a: Vec<String> = args.iter().map(intr_arg).collect();
            let _ = write!(out, "intrinsic {}({})", intrinsic.sig().name, a.join(", "));
            for a in accesses {
                let _ = write!(out, " {a}");
            }
            out.push('\n');
        }
        AsyncCommit => out.push_str("asynccommit\n"),
        AsyncWait { pending, views } => {
            let _ = write!(out, "asyncwait {pending}");
            for v in views {
                let _ = write!(out, " {v}");
            }
            out.push('\n');
        }
        Barrier { scope, origin } => match origin {
            BarrierOrigin::Explicit => {
                let _ = writeln!(out, "barrier {scope} explicit");
            }
            BarrierOrigin::Inferred { mem, .. } => {
                let _ = writeln!(out, "barrier {scope} inferred {mem}");
            }
        },
        BarrierArrive { scope, id, origin } => match origin {
            BarrierOrigin::Explicit => {
                let _ = writeln!(out, "arrive {scope} s{id} explicit");
            }
            BarrierOrigin::Inferred { mem, .. } => {
                let _ = writeln!(out, "arrive {scope} s{id} inferred {mem}");
            }
        },
        AssertUniform { reg, persp, what } => {
            let _ = writeln!(out, "assert.uniform{} {reg} {persp}{}", checked_suffix(*what), checked_call(p, *what));
        }
        AssertUniformLocal { local, persp, what } => {
            let _ = writeln!(
                out,
                "assert.uniform.local{} {local} {persp}{}",
                checked_suffix(*what),
                checked_call(p, *what)
            );
        }
        BarrierWait { scope, id } => {
            let _ = writeln!(out, "wait {scope} s{id}");
        }
        If { cond, then, otherwise, uniform } => {
            let _ = writeln!(out, "{} {cond} {{", if *uniform { "if" } else { "if.any" });
            block(p, then, depth + 1, out);
            indent(depth, out);
            if otherwise.insts.is_empty() {
                out.push_str("}\n");
            } else {
                out.push_str("} else {\n");
                block(p, otherwise, depth + 1, out);
                indent(depth, out);
                out.push_str("}\n");
            }
        }
        Loop { header, cond, body, latch, counter, unroll } => {
            out.push_str("loop ");
            if let Some(c) = counter {
                let _ = write!(out, "counter {c} ");
            }
            match unroll {
                Unroll::Auto => {}
                Unroll::Full => out.push_str("unroll full "),
                Unroll::Count(n) => {
                    let _ = write!(out, "unroll {n} ");
                }
            }
            out.push_str("{\n");
            block(p, header, depth + 1, out);
            indent(depth, out);
            let _ = writeln!(out, "}} while {cond} {{");
            block(p, body, depth + 1, out);
            indent(depth, out);
            out.push_str("} latch {\n");
            block(p, latch, depth + 1, out);
            indent(depth, out);
            out.push_str("}\n");
        }
        Break => out.push_str("break\n"),
        Continue => out.push_str("continue\n"),
        Return { value } => match value {
            Some(v) => {
                let _ = writeln!(out, "return {v}");
            }
            None => out.push_str("return\n"),
        },
        Group { persp, body } => {
            let _ = writeln!(out, "group {persp} {{");
            block(p, body, depth + 1, out);
            indent(depth, out);
            out.push_str("}\n");
        }
        Split { unit, cases } => {
            let _ = writeln!(out, "split {unit} {{");
            for c in cases {
                indent(depth + 1, out);
                let _ = writeln!(out, "case {} {} {} {{", c.offset, c.count, c.persp);
                block(p, &c.body, depth + 2, out);
                indent(depth + 1, out);
                out.push_str("}\n");
            }
            indent(depth, out);
            out.push_str("}\n");
        }
        Scope { kind, mem, view, body } => {
            let _ = writeln!(out, "scope {} {mem} -> {view} {{", kind.as_str());
            block(p, body, depth + 1, out);
            indent(depth, out);
            out.push_str("}\n");
        }
        Unsafe { body } => {
            out.push_str("unsafe {\n");
            block(p, body, depth + 1, out);
            indent(depth, out);
            out.push_str("}\n");
        }
        Verbatim { text, sim } => {
            let _ = write!(out, "verbatim {text:?}");
            match sim {
                Some(b) => {
                    out.push_str(" {\n");
                    block(p, b, depth + 1, out);
                    indent(depth, out);
                    out.push_str("}\n");
                }
                None => out.push('\n'),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::InstKind;
    use prism_types::tir::ConstValue;

    /// Every float constant reads back with its bits: NaNs with any payload and sign, the
    /// host's NaN, signed zeros, infinities, a subnormal. The corpus round trip compares
    /// texts, which only shows this once the text tells NaNs apart.
    #[test]
    fn float_constants_read_back_bit_for_bit() {
        let bits: [u64; 10] = [
            f64::NAN.to_bits(),
            0x7fff_ffff_e000_0000, // the GPU's float NaN 0x7fffffff, carried in a double
            0xfff8_0000_0000_0000, // the host's NaN with the sign set
            0x7ff0_0000_0000_0001, // signalling
            (-0.0f64).to_bits(),
            0.0f64.to_bits(),
            f64::INFINITY.to_bits(),
            f64::NEG_INFINITY.to_bits(),
            1.5f64.to_bits(),
            1,
        ];
        for b in bits {
            let text = super::const_text(ConstValue::Float(f64::from_bits(b)));
            let src = format!(
                "kernel @k() entry grid[1] facts 32 1 smem 0 {{\n  reg %0: f64\n  body {{\n    %0 = const {text}\n  }}\n}}\n"
            );
            let p = crate::parse(&src).unwrap_or_else(|e| panic!("{text}: {e}\n{src}"));
            let InstKind::Const { value: ConstValue::Float(x), .. } = p.functions[0].body.insts[0].kind else {
                panic!("{text}: not a float constant");
            };
            assert_eq!(x.to_bits(), b, "{text} read back as {:#018x}", x.to_bits());
        }
        for bad in ["nan_0x1", "nan_0x0000000000000001", "nan_0xzz"] {
            let src = format!(
                "kernel @k() entry grid[1] facts 32 1 smem 0 {{\n  reg %0: f64\n  body {{\n    %0 = const {bad}\n  }}\n}}\n"
            );
            assert!(crate::parse(&src).is_err(), "{bad} was read");
        }
    }
}
