//! Intrinsics of the checker's table (`prism_types::intrinsics::TABLE`) as CUDA.
//!
//! Warp collectives use the full mask (every lane of the warp takes part: the checker puts
//! them in `thread[32]` code). `mma` is inline PTX `mma.sync.aligned` with the PTX ISA's
//! fragment order, tf32 operands rounded with `cvt.rna.tf32.f32` and 16-bit operands packed
//! in pairs (the lower index in the lower half). Atomics go through the prelude's
//! `prism_atomic_*` overloads. Hopper operations (`wgmma_*`, `setmaxnreg_*`, TMA) are inline
//! PTX for `sm_90a`.

use crate::cpp::{Asm, Expr, Stmt};
use crate::ops::{self, c_type};
use prism_types::ty::Scalar;

/// An operand, evaluated.
#[derive(Clone, Debug)]
pub enum Operand {
    /// A value of this type.
    Val(Expr, Scalar),
    /// An element `ptr[index]` of memory with elements of this type.
    Elem(Expr, Scalar),
}

impl Operand {
    fn expr(&self) -> Expr {
        match self {
            Operand::Val(e, _) | Operand::Elem(e, _) => e.clone(),
        }
    }
    fn ty(&self) -> Scalar {
        match self {
            Operand::Val(_, t) | Operand::Elem(_, t) => *t,
        }
    }
    fn addr(&self) -> Expr {
        Expr::AddrOf(Box::new(self.expr()))
    }
}

const FULL: &str = "0xffffffffu";

/// The value of a single-result intrinsic (`ty` is the result type), or `None` if it has
/// no expression form.
pub fn value(name: &str, ty: Scalar, ops: &[Operand]) -> Option<Expr> {
    let v = |i: usize| ops[i].expr();
    let full = || Expr::id(FULL);
    Some(match name {
        "shfl" => Expr::call("__shfl_sync", vec![full(), v(0), v(1)]),
        "shfl_up" => Expr::call("__shfl_up_sync", vec![full(), v(0), v(1)]),
        "shfl_down" => Expr::call("__shfl_down_sync", vec![full(), v(0), v(1)]),
        "shfl_xor" => Expr::call("__shfl_xor_sync", vec![full(), v(0), v(1)]),
        "ballot" => Expr::call("__ballot_sync", vec![full(), v(0)]),
        "elect_sync" => Expr::call("prism_elect_sync", vec![]),
        "any" => Expr::bin("!=", Expr::call("__any_sync", vec![full(), v(0)]), Expr::id("0")),
        "all" => Expr::bin("!=", Expr::call("__all_sync", vec![full(), v(0)]), Expr::id("0")),
        n if n.starts_with("reduce_") => Expr::call(format!("prism_{n}"), vec![v(0)]),
        "atomic_add" | "atomic_sub" | "atomic_min" | "atomic_max" | "atomic_and" | "atomic_or" | "atomic_xor"
        | "atomic_exch" => Expr::call(format!("prism_{name}"), vec![ops[0].addr(), v(1)]),
        "atomic_cas" => Expr::call("prism_atomic_cas", vec![ops[0].addr(), v(1), v(2)]),
        "atomic_load" | "volatile_load" => Expr::call("prism_atomic_load", vec![ops[0].addr()]),
        "mbarrier_arrive" => Expr::call("prism_mbar_arrive", vec![ops[0].addr()]),
        "mbarrier_arrive_expect_tx" => Expr::call("prism_mbar_arrive_expect_tx", vec![ops[0].addr(), v(1)]),
        _ => {
            let sig = prism_types::intrinsics::lookup(name)?.sig();
            match sig.family {
                prism_types::intrinsics::Family::Math => {
                    let arg_ty = ops.first().map(Operand::ty).unwrap_or(ty);
                    ops::math(name, ty, arg_ty, ops.iter().map(Operand::expr).collect())
                }
                prism_types::intrinsics::Family::Cast => ops::cast(ops[0].ty(), ty, v(0)),
                _ => return None,
            }
        }
    })
}

/// The statements of an intrinsic without a single result; `outs` are the places written
/// (the four accumulators of `mma`). `smem_bytes` is, for a TMA copy, the byte count the
/// copy brings in; `scratch` names registers the statements declare (unique in the function).
pub fn statements(
    name: &str,
    ops: &[Operand],
    outs: &[Expr],
    tma_bytes: Option<Expr>,
    scratch: &str,
    own_stores: bool,
) -> Vec<Stmt> {
    let v = |i: usize| ops[i].expr();
    let asm = |lines: &[&str], inputs: Vec<(&str, Expr)>| {
        Stmt::Asm(Asm {
            volatile: true,
            lines: lines.iter().map(|s| s.to_string()).collect(),
            outputs: Vec::new(),
            inputs: inputs.into_iter().map(|(c, e)| (c.to_string(), e)).collect(),
            clobbers: vec!["memory".into()],
        })
    };
    match name {
        "atomic_store" | "volatile_store" => {
            vec![Stmt::Expr(Expr::call("prism_atomic_store", vec![ops[0].addr(), v(1)]))]
        }
        "__threadfence" | "__threadfence_block" => vec![Stmt::Expr(Expr::call(name, vec![]))],
        "fence_proxy_async" => vec![Stmt::Expr(Expr::call("prism_fence_proxy_async", vec![]))],
        "mbarrier_init" | "mbarrier_complete_tx" | "mbarrier_expect_tx" | "mbarrier_wait_parity" => {
            let helper = name.replace("mbarrier_", "prism_mbar_");
            vec![Stmt::Expr(Expr::call(helper, vec![ops[0].addr(), v(1)]))]
        }
        "mbarrier_inval" => vec![Stmt::Expr(Expr::call("prism_mbar_inval", vec![ops[0].addr()]))],
        // An arrival whose token the program does not keep.
        "mbarrier_arrive" => vec![Stmt::Expr(Expr::call("prism_mbar_arrive", vec![ops[0].addr()]))],
        "mbarrier_arrive_expect_tx" => {
            vec![Stmt::Expr(Expr::call("prism_mbar_arrive_expect_tx", vec![ops[0].addr(), v(1)]))]
        }
        "__nanosleep" => vec![Stmt::Expr(Expr::call("__nanosleep", vec![v(0)]))],
        "trap" => vec![Stmt::Expr(Expr::call("__trap", vec![]))],
        "cp_async" | "cp_async_zfill" => {
            let bytes = ops::literal_value(&v(2)).unwrap_or(16);
            // 16-byte copies bypass L1 (`.cg`, as CUTLASS's); smaller ones may only `.ca`.
            let cache = if bytes == 16 { "cg" } else { "ca" };
            // The zero-filling form passes PTX's `src-size`: the bytes read from `src`.
            let src_size = if name == "cp_async_zfill" { ", %2" } else { "" };
            let mut inputs =
                vec![("r".into(), Expr::call("prism_smem_addr", vec![ops[0].addr()])), ("l".into(), ops[1].addr())];
            if name == "cp_async_zfill" {
                inputs.push(("r".into(), v(3)));
            }
            vec![Stmt::Asm(Asm {
                volatile: true,
                lines: vec![format!("cp.async.{cache}.shared.global [%0], [%1], {bytes}{src_size};")],
                outputs: Vec::new(),
                inputs,
                clobbers: vec!["memory".into()],
            })]
        }
        "tma_load_2d" | "tma_load_3d" => {
            // The copy's bytes are announced on the block's TMA mbarrier first, so the wait
            // at the end of the `async` scope completes only when they have landed.
            let bytes = tma_bytes.unwrap_or_else(|| Expr::id("0"));
            let rank = ops.len() - 2;
            let coords: Vec<String> = (0..rank).map(|k| format!("%{}", k + 2)).collect();
            let mut inputs =
                vec![("r", Expr::call("prism_smem_addr", vec![ops[0].addr()])), ("l", Expr::AddrOf(Box::new(v(1))))];
            inputs.extend((2..ops.len()).map(|k| ("r", v(k))));
            inputs.push(("r", Expr::call("prism_smem_addr", vec![Expr::id("&prism_tma_bar")])));
            let line = format!(
                "cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {{{}}}], [%{}];",
                coords.join(", "),
                rank + 2
            );
            vec![
                asm(
                    &["mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;"],
                    vec![("r", Expr::call("prism_smem_addr", vec![Expr::id("&prism_tma_bar")])), ("r", bytes)],
                ),
                asm(&[line.as_str()], inputs),
            ]
        }
        "tma_load_2d_mbar" | "tma_load_3d_mbar" => {
            // The program announced the bytes on `bar` (`mbarrier_expect_tx`); the copy
            // completes them there.
            let rank = ops.len() - 3;
            let coords: Vec<String> = (0..rank).map(|k| format!("%{}", k + 2)).collect();
            let mut inputs =
                vec![("r", Expr::call("prism_smem_addr", vec![ops[0].addr()])), ("l", Expr::AddrOf(Box::new(v(1))))];
            inputs.extend((2..2 + rank).map(|k| ("r", v(k))));
            inputs.push(("r", Expr::call("prism_smem_addr", vec![ops[ops.len() - 1].addr()])));
            let line = format!(
                "cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {{{}}}], [%{}];",
                coords.join(", "),
                rank + 2
            );
            vec![asm(&[line.as_str()], inputs)]
        }
        "tma_store_2d" | "tma_store_3d" => {
            // The storing thread's own plain stores to the box reach the async proxy the copy
            // reads through (other threads' are fenced before the barrier that ordered them);
            // the store is complete, its reads and writes, when the call returns.
            let rank = ops.len() - 2;
            let coords: Vec<String> = (0..rank).map(|k| format!("%{}", k + 1)).collect();
            let mut inputs = vec![("l", Expr::AddrOf(Box::new(v(0))))];
            inputs.extend((1..=rank).map(|k| ("r", v(k))));
            inputs.push(("r", Expr::call("prism_smem_addr", vec![ops[ops.len() - 1].addr()])));
            let line = format!(
                "cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group [%0, {{{}}}], [%{}];",
                coords.join(", "),
                rank + 1
            );
            vec![
                asm(&["fence.proxy.async.shared::cta;"], vec![]),
                asm(&[line.as_str()], inputs),
                asm(&["cp.async.bulk.commit_group;"], vec![]),
                asm(&["cp.async.bulk.wait_group 0;"], vec![]),
            ]
        }
        "wgmma_fence" => vec![asm(&["wgmma.fence.sync.aligned;"], vec![])],
        "wgmma_commit_group" => vec![asm(&["wgmma.commit_group.sync.aligned;"], vec![])],
        "wgmma_wait" => vec![asm(&["wgmma.wait_group.sync.aligned %0;"], vec![("n", v(0))])],
        "setmaxnreg_inc" => vec![asm(&["setmaxnreg.inc.sync.aligned.u32 %0;"], vec![("n", v(0))])],
        "setmaxnreg_dec" => vec![asm(&["setmaxnreg.dec.sync.aligned.u32 %0;"], vec![("n", v(0))])],
        "wgmma_bf16" | "wgmma_bf16_sw" => wgmma(ops, "bf16", own_stores),
        "wgmma_f16" | "wgmma_f16_sw" => wgmma(ops, "f16", own_stores),
        "wgmma_tf32" | "wgmma_tf32_sw" => wgmma(ops, "tf32", own_stores),
        "intrinsic.mma" | "intrinsic.mma_tf32" => mma_tf32(ops, outs, true, scratch),
        "intrinsic.mma_tf32_rz" => mma_tf32(ops, outs, false, scratch),
        n if n.starts_with("ldmatrix") => ldmatrix(n, ops, outs, scratch),
        "intrinsic.mma_bf16" => mma_16(ops, outs, "bf16", scratch),
        "intrinsic.mma_f16" => mma_16(ops, outs, "f16", scratch),
        _ => vec![Stmt::Comment(format!("unsupported intrinsic `{name}`"))],
    }
}

/// The float results of an `mma.sync`: the asm writes them into the scratch array
/// `scratch`, then C++ stores them to the `out=` places in list order. Binding the places
/// themselves as the asm's outputs left it to nvcc which result lands when two places name
/// one element (`out=[C[0], C[0], C[0], C[0]]`, or `C[i]` and `C[j]` with `i == j`), where
/// the simulator stores them in list order (review R37). The copies cost nothing: the
/// scratch array and the places are registers after nvcc's promotion of local arrays.
/// Returns the declaration, the asm's outputs and the stores.
fn float_results(outs: &[Expr], scratch: &str) -> (Stmt, Vec<(String, Expr)>, Vec<Stmt>) {
    let reg = |i: usize| Expr::index(Expr::id(scratch.to_string()), Expr::id(i.to_string()));
    let decl = Stmt::Decl {
        quals: String::new(),
        ty: "float".into(),
        name: scratch.to_string(),
        dims: vec![outs.len() as u64],
        init: None,
    };
    let outputs = (0..outs.len()).map(|i| ("=f".to_string(), reg(i))).collect();
    let stores = outs.iter().enumerate().map(|(i, o)| Stmt::Assign { lhs: o.clone(), op: None, rhs: reg(i) }).collect();
    (decl, outputs, stores)
}

/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: operands 0..4 are A, 4..6 B,
/// 6..10 C; A and B are rounded to tf32 first (`round`), or given as the floats' bits, of
/// which the tensor cores use the tf32 part (`intrinsic.mma_tf32_rz`: a `mov` per register,
/// which ptxas drops, where the rounding is a CVT or two integer ops per register in SASS).
fn mma_tf32(ops: &[Operand], outs: &[Expr], round: bool, scratch: &str) -> Vec<Stmt> {
    let conv = if round { "cvt.rna.tf32.f32" } else { "mov.b32" };
    let regs = [("a0", 4), ("a1", 5), ("a2", 6), ("a3", 7), ("b0", 8), ("b1", 9)];
    let mut lines = vec!["{".to_string(), ".reg .b32 a<4>, b<2>;".to_string()];
    lines.extend(regs.iter().map(|(r, i)| format!("{conv} {r}, %{i};")));
    lines.push(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {a0, a1, a2, a3}, {b0, b1}, {%10, %11, %12, %13};"
            .to_string(),
    );
    lines.push("}".to_string());
    let (decl, outputs, stores) = float_results(outs, scratch);
    let mut out = vec![
        decl,
        Stmt::Asm(Asm {
            volatile: true,
            lines: lines.iter().map(|l| format!("{l}\\n")).collect(),
            outputs,
            inputs: ops[..10].iter().map(|o| ("f".to_string(), o.expr())).collect(),
            clobbers: Vec::new(),
        }),
    ];
    out.extend(stores);
    out
}

/// `ldmatrix.sync.aligned.m8n8.{x4,x4.trans,x2.trans}.shared.b16` into `.b32` registers, each
/// holding two 16-bit elements, the lower in the lower half, which C++ then splits into the
/// `out=` places. The split is C++, not PTX (`mov.b32 {lo, hi}`), so that nvcc sees through
/// it: where the places are a packed local array's halves (`Fx::packed`) and go straight
/// back into an `mma`, the register stays whole.
///
/// The `_tf32` forms are the same instruction over 32-bit elements: each `.b32` register is
/// one whole float (the pair of 16-bit halves the hardware moves), reinterpreted in C++.
fn ldmatrix(name: &str, ops: &[Operand], outs: &[Expr], scratch: &str) -> Vec<Stmt> {
    let wide = name.ends_with("tf32");
    let trans = name.contains("_trans");
    let (shape, regs): (_, usize) = match (name.starts_with("ldmatrix_x4"), wide) {
        (true, _) if trans => ("x4.trans", 4),
        (true, _) => ("x4", 4),
        (false, true) => ("x2", 2),
        (false, false) => ("x2.trans", 2),
    };
    let ty = if name.ends_with("bf16") { "__nv_bfloat16" } else { "__half" };
    let names: Vec<String> = (0..regs).map(|i| format!("%{i}")).collect();
    let line = format!("ldmatrix.sync.aligned.m8n8.{shape}.shared.b16 {{{}}}, [%{regs}];", names.join(", "));
    let tmp = scratch.to_string();
    let mut out = vec![Stmt::Decl {
        quals: String::new(),
        ty: "unsigned".into(),
        name: tmp.clone(),
        dims: vec![regs as u64],
        init: None,
    }];
    let reg = |i: usize| Expr::index(Expr::id(tmp.clone()), Expr::id(i.to_string()));
    out.push(Stmt::Asm(Asm {
        volatile: true,
        lines: vec![line],
        outputs: (0..regs).map(|i| ("=r".to_string(), reg(i))).collect(),
        inputs: vec![("r".into(), Expr::call("prism_smem_addr", vec![ops[0].addr()]))],
        clobbers: vec!["memory".into()],
    }));
    if wide {
        for (k, o) in outs.iter().enumerate() {
            out.push(Stmt::Assign { lhs: o.clone(), op: None, rhs: Expr::call("__uint_as_float", vec![reg(k)]) });
        }
        return out;
    }
    for (k, o) in outs.iter().enumerate() {
        let word = if k % 2 == 0 { reg(k / 2) } else { Expr::bin(">>", reg(k / 2), Expr::id("16")) };
        let half = Expr::call(format!("prism_from_bits<{ty}>"), vec![Expr::cast("unsigned short", word)]);
        out.push(Stmt::Assign { lhs: o.clone(), op: None, rhs: half });
    }
    out
}

/// `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32`: operands 0..8 are A,
/// 8..12 B, 12..16 C. Pairs pack into `.b32` registers with the lower index in the lower
/// half: a0a1, a2a3, a4a5, a6a7, b0b1, b2b3. The packing is C++ (`lo | hi << 16`), which
/// nvcc folds into the register a packed local array already holds.
fn mma_16(ops: &[Operand], outs: &[Expr], ty: &str, scratch: &str) -> Vec<Stmt> {
    let line = format!(
        "mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32 {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%10, %11, %12, %13}};"
    );
    let bits = |o: &Operand| Expr::cast("unsigned", Expr::call("prism_to_bits", vec![o.expr()]));
    let mut inputs: Vec<(String, Expr)> = (0..6)
        .map(|k| {
            let hi = Expr::bin("<<", bits(&ops[2 * k + 1]), Expr::id("16"));
            ("r".to_string(), Expr::bin("|", bits(&ops[2 * k]), hi))
        })
        .collect();
    inputs.extend(ops[12..16].iter().map(|o| ("f".to_string(), o.expr())));
    let (decl, outputs, stores) = float_results(outs, scratch);
    let mut out =
        vec![decl, Stmt::Asm(Asm { volatile: true, lines: vec![line], outputs, inputs, clobbers: Vec::new() })];
    out.extend(stores);
    out
}

/// `wgmma.mma_async m64nNk16` with `ty` (`bf16` or `f16`) inputs, or `m64nNk8` with `tf32`
/// inputs (`float` tiles), and f32 accumulators in the local array `acc`: A and B are
/// shared-memory tiles in the canonical K-major layout without swizzling (core matrices of
/// 8 rows of 16 bytes, 128 contiguous bytes; core matrices adjacent in K 128 bytes apart,
/// in M/N 256 bytes apart), or swizzled ones from an element (`_sw`). The byte layout, and
/// so the descriptor, is the same for every element type: a slice's rows are 32 bytes. See
/// docs/cuda.md.
/// `own_stores`: the issuing thread may have stored to the tiles through the generic proxy
/// since the last barrier, so the asm fences first (not so for a pipeline's stages).
fn wgmma(ops: &[Operand], ty: &str, own_stores: bool) -> Vec<Stmt> {
    let n = ops::literal_value(&ops[3].expr()).unwrap_or(64).clamp(8, 256) as usize;
    let n_acc = n / 2;
    // tf32 has no transpose immediates (only K-major exists for it); the 16-bit types take
    // `imm-trans-a, imm-trans-b` = 0, 0 (K-major).
    let (k, trans) = if ty == "tf32" { (8, "") } else { (16, ", 0, 0") };
    let acc = ops[0].expr();
    let mut regs: Vec<String> = (0..n_acc).map(|i| format!("%{i}")).collect();
    let d = regs.join(", ");
    regs.clear();
    // The tiles were written through the generic proxy: the writers fenced before the
    // barrier that ordered their stores before this (`Fx::proxy_fence`); this fence covers
    // the issuing thread's own stores since. A stage of a pipeline has none (`MEMBAR.ALL.CTA`
    // in SASS, between every two HGMMAs of a step otherwise).
    let mut lines = vec!["{\\n".to_string()];
    if own_stores {
        lines.push("fence.proxy.async.shared::cta;\\n".to_string());
    }
    lines.extend([
        ".reg .pred p;\\n".to_string(),
        "setp.ne.b32 p, 1, 0;\\n".to_string(),
        format!(
            "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ty}.{ty} {{{d}}}, %{}, %{}, p, 1, 1{trans};\\n",
            n_acc,
            n_acc + 1
        ),
        "}\\n".to_string(),
    ]);
    let outputs = (0..n_acc).map(|i| ("+f".to_string(), Expr::index(acc.clone(), Expr::id(i.to_string())))).collect();
    // `wgmma_bf16` passes whole tiles (their names), `wgmma_bf16_sw` the element where
    // each swizzled slice starts and the span.
    let descs = if ops.len() == 5 {
        let desc = |o: &Operand| Expr::call("prism_wgmma_desc_sw", vec![o.addr(), ops[4].expr()]);
        [desc(&ops[1]), desc(&ops[2])]
    } else {
        let desc = |e: Expr| Expr::call("prism_wgmma_desc", vec![e]);
        [desc(ops[1].expr()), desc(ops[2].expr())]
    };
    let [da, db] = descs;
    vec![Stmt::Asm(Asm {
        volatile: true,
        lines,
        outputs,
        inputs: vec![("l".into(), da), ("l".into(), db)],
        clobbers: vec!["memory".into()],
    })]
}

/// The C++ type of an operand's element, for declarations.
pub fn elem_type(o: &Operand) -> &'static str {
    c_type(o.ty())
}
