//! Floating-point contraction: a `float` or `double` product that feeds one addition or
//! subtraction becomes one fused multiply-add, rounded once (`docs/language.md` §3,
//! "Floating-point contraction").
//!
//! The rule is decided here, on the IR both backends consume, so the simulator
//! (`f32::mul_add`) and the GPU (`fmaf`, an FFMA instruction) compute the same bits, while
//! nvcc itself still runs with `--fmad=false` and contracts nothing on its own. A product
//! `m = a * b` is fused into `d = m + c`, `d = c + m`, `d = m - c` or `d = c - m` when:
//!
//! - `m`, `a * b` and `d` have the same type, `float` or `double` (half-precision types are
//!   computed through `float` and are left alone);
//! - `m` is an unnamed temporary (not a source variable, which `unsafe("CUDA text")` could
//!   read by name), written by that multiplication only and read by that addition only, so
//!   no other reader sees the product disappear;
//! - both are in the same block, the multiplication first, and nothing between them
//!   (nested code included) writes `a` or `b`, so the operands the fused operation reads are
//!   the ones the product read.
//!
//! Subtractions use exact negations: `m - c` is `fma(a, b, -c)` and `c - m` is
//! `fma(-a, b, c)`. When both operands of an addition are fusable products, the left one
//! fuses. `prism_driver::Options::contract` (the CLI's `--fp-contract off`) turns the pass
//! off, for results that match a compiler without contraction.

use crate::Reg;
use crate::ir::{Block, Function, Inst, InstKind, IntrArg, Program, RegInfo, Type};
use prism_types::intrinsics::IntrinsicId;
use prism_types::tir::{BinOp, UnOp};
use prism_types::ty::Scalar;

/// Fuses every product the rule allows in `p`; returns how many it fused.
pub fn contract(p: &mut Program) -> usize {
    let fma = prism_types::intrinsics::lookup("fma").expect("the intrinsic table has `fma`");
    p.functions.iter_mut().map(|f| contract_function(f, fma)).sum()
}

fn contract_function(f: &mut Function, fma: IntrinsicId) -> usize {
    let mut uses = vec![0u32; f.regs.len()];
    let mut defs = vec![0u32; f.regs.len()];
    f.body.walk(&mut |k| {
        for r in k.uses() {
            uses[r.index()] += 1;
        }
        for r in k.defs() {
            defs[r.index()] += 1;
        }
    });
    let counts = Counts { uses, defs };
    let mut regs = std::mem::take(&mut f.regs);
    let n = block(&mut f.body, &mut regs, &counts, fma);
    f.regs = regs;
    n
}

/// How often each register is read and written in the whole function.
struct Counts {
    uses: Vec<u32>,
    defs: Vec<u32>,
}

fn float_ty(regs: &[RegInfo], r: Reg) -> Option<Scalar> {
    match regs[r.index()].ty {
        Type::Scalar(s @ (Scalar::F32 | Scalar::F64)) => Some(s),
        _ => None,
    }
}

fn block(b: &mut Block, regs: &mut Vec<RegInfo>, counts: &Counts, fma: IntrinsicId) -> usize {
    let mut n = 0;
    for inst in &mut b.insts {
        for nb in inst.kind.blocks_mut() {
            n += block(nb, regs, counts, fma);
        }
    }
    let mut i = 0;
    while i < b.insts.len() {
        if let Some((j, kind, neg)) = fusable(b, i, regs, counts, fma) {
            let span = b.insts[i].span;
            let mut at = i;
            if let Some((dst, src)) = neg {
                b.insts.insert(i, Inst { kind: InstKind::Unary { dst, op: UnOp::Neg, arg: src }, span });
                at += 1;
            }
            b.insts[at].kind = kind;
            b.insts.remove(j);
            n += 1;
            // Removing the product moved the fused instruction to `at - 1`: go on after it.
            i = at;
            continue;
        }
        i += 1;
    }
    n
}

/// The fused form of instruction `i` of `b`: the index of the product it absorbs, the new
/// instruction, and a negation to insert before it (a fresh register and its operand).
#[allow(clippy::type_complexity)]
fn fusable(
    b: &Block,
    i: usize,
    regs: &mut Vec<RegInfo>,
    counts: &Counts,
    fma: IntrinsicId,
) -> Option<(usize, InstKind, Option<(Reg, Reg)>)> {
    let InstKind::Binary { dst, op: op @ (BinOp::Add | BinOp::Sub), lhs, rhs } = b.insts[i].kind else {
        return None;
    };
    let ty = float_ty(regs, dst)?;
    for (m, other, m_left) in [(lhs, rhs, true), (rhs, lhs, false)] {
        // A named register is a source variable, which `unsafe("CUDA text")` may read by name
        // behind the IR's back: only unnamed temporaries fuse.
        if m == other
            || regs[m.index()].name.is_some()
            || float_ty(regs, m) != Some(ty)
            || counts.uses[m.index()] != 1
            || counts.defs[m.index()] != 1
        {
            continue;
        }
        let Some(j) = b.insts[..i].iter().rposition(|x| x.kind.defs().contains(&m)) else { continue };
        let InstKind::Binary { op: BinOp::Mul, lhs: a, rhs: bb, .. } = b.insts[j].kind else { continue };
        if float_ty(regs, a) != Some(ty) || float_ty(regs, bb) != Some(ty) {
            continue;
        }
        let mut clobbered = false;
        for x in &b.insts[j + 1..i] {
            let mut check = |k: &InstKind| clobbered |= k.defs().iter().any(|d| *d == a || *d == bb);
            check(&x.kind);
            for nb in x.kind.blocks() {
                nb.walk(&mut check);
            }
        }
        if clobbered {
            continue;
        }
        let fresh = |regs: &mut Vec<RegInfo>| {
            regs.push(RegInfo { ty: Type::Scalar(ty), name: None });
            Reg((regs.len() - 1) as u32)
        };
        let (args, neg) = match (op, m_left) {
            (BinOp::Add, _) => ([a, bb, other], None),
            (_, true) => {
                let nc = fresh(regs);
                ([a, bb, nc], Some((nc, other)))
            }
            (_, false) => {
                let na = fresh(regs);
                ([na, bb, other], Some((na, a)))
            }
        };
        let kind = InstKind::Intrinsic {
            dsts: vec![dst],
            intrinsic: fma,
            args: args.iter().map(|&r| IntrArg::Val(r)).collect(),
            accesses: Vec::new(),
        };
        return Some((j, kind, neg));
    }
    None
}
