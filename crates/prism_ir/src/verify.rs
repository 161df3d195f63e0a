//! The IR verifier: checks the invariants every pass after lowering relies on.
//!
//! The pipeline (`prism_driver`) runs it after lowering and after every pass that changes the
//! IR, in every build (it is linear in the IR); a failure is a compiler bug, reported with the
//! function and entity (`@f: %3: ...`), and the driver stops with an internal error. What it
//! checks, function by function:
//!
//! - **Entities.** Every register, local array, memory name and access an instruction names
//!   exists in the function; a view's parent is declared before it; a call names a function
//!   of the program.
//! - **Blocks** are numbered in pre-order from 0 (`Block::id`), as analyses that key facts by
//!   block expect.
//! - **Types.** Constants fit their type (an integer constant in an integer register lies in
//!   that type's range, review R46); copies, selects and binary operations have operand
//!   types that fit; casts are between scalars; `relid` and raw indices define `i32`; shared
//!   and local addresses and `ptradd` define pointers with integer offsets; loads define
//!   scalars through pointers at integer indices; local loads and stores match the array's
//!   element type; call arguments and results match the callee's signature; intrinsic
//!   operands match the intrinsic's signature; `if` and loop conditions are `bool`;
//!   `assert.uniform` checks a scalar, `assert.uniform.local` a local array; a
//!   `.returned` one stands in a function returning its type, an `.arg` one names an
//!   existing parameter of its callee of its type (a pointer for a local array), a
//!   `.result` one has its callee's return type, a `.break` or `.continue` one a `u32`
//!   register.
//! - **Parameters.** No instruction writes a parameter's register, so a register's
//!   definitions are all the values it holds (a parameter's is the launch's or the
//!   caller's); the lowering copies a parameter the body changes into a register of its
//!   own. The analyses take a register defined once to hold that value wherever it is read.
//! - **Accesses.** An access's `view_index` is an integer register, only on accesses
//!   through a partition.
//! - **Shared memory.** A shared address's bytes lie inside the function's shared memory.
//! - **Perspectives.** `relid` targets are narrower than their code; a call's callee is
//!   entered at a perspective no broader than the calling code; a `group` narrows the code;
//!   split cases fit the units available; a barrier's unit is no broader than the code where
//!   it stands, except in unsafe code.
//! - **Control.** `break` and `continue` are inside a loop, and neither they nor `return`
//!   leave a `group`, split case or memory scope.
//! - **Scopes.** A memory scope's view is a view of the memory it narrows.
//! - **Split barriers.** Each split barrier id has one arrive and one wait over the same unit;
//!   the arrive comes first in the same straight-line code, and below the block they share
//!   each is reached only through `group` bodies and memory scopes (which every thread of the
//!   unit runs), in code where a barrier over the unit could stand.

use crate::entities::{FuncId, Reg};
use crate::ir::*;
use prism_types::intrinsics::ParamKind;
use prism_types::perspective::Persp;
use prism_types::tir::{BinOp, ConstValue, UnOp};
use prism_types::ty::Scalar;
use std::fmt;

/// A broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// The function.
    pub function: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}: {}", self.function, self.message)
    }
}

/// Checks a program; returns every problem found.
pub fn verify(p: &Program) -> Vec<VerifyError> {
    let mut errors = Vec::new();
    for f in &p.functions {
        let mut v = V { p, f, errors: Vec::new(), loops: Vec::new(), unsafe_depth: 0 };
        v.function();
        errors.extend(v.errors.into_iter().map(|message| VerifyError { function: f.name.clone(), message }));
    }
    errors
}

struct V<'a> {
    p: &'a Program,
    f: &'a Function,
    errors: Vec<String>,
    /// For each enclosing loop: whether a `break`/`continue` may reach it from here.
    loops: Vec<bool>,
    /// Inside `unsafe` or a verbatim block's simulation body, perspectives are unchecked.
    unsafe_depth: u32,
}

/// One step from a block into an instruction: (instruction index, nested block index,
/// whether every thread passes it (a `group` or memory scope, or the half itself), the code
/// perspective of the block).
type Step = (usize, usize, bool, Persp);

/// Where a split barrier's half stands.
struct Half {
    scope: Persp,
    path: Vec<Step>,
}

fn collect_halves(
    b: &Block,
    code: Persp,
    path: &mut Vec<Step>,
    out: &mut std::collections::BTreeMap<u32, [Vec<Half>; 2]>,
) {
    for (i, inst) in b.insts.iter().enumerate() {
        match &inst.kind {
            InstKind::BarrierArrive { scope, id, .. } | InstKind::BarrierWait { scope, id } => {
                let mut p = path.clone();
                p.push((i, 0, true, code));
                let which = usize::from(matches!(inst.kind, InstKind::BarrierWait { .. }));
                out.entry(*id).or_default()[which].push(Half { scope: *scope, path: p });
            }
            k => {
                let (all, inner) = match k {
                    InstKind::Group { persp, .. } => (true, *persp),
                    InstKind::Scope { .. } => (true, code),
                    InstKind::Split { cases, .. } => (false, cases.first().map(|c| c.persp).unwrap_or(code)),
                    _ => (false, code),
                };
                for (j, nb) in k.blocks().into_iter().enumerate() {
                    let inner = match k {
                        InstKind::Split { cases, .. } => cases[j].persp,
                        _ => inner,
                    };
                    path.push((i, j, all, code));
                    collect_halves(nb, inner, path, out);
                    path.pop();
                }
            }
        }
    }
}

fn is_int(t: Type) -> bool {
    matches!(t, Type::Scalar(s) if s.is_int())
}

impl V<'_> {
    fn err(&mut self, m: String) {
        self.errors.push(m);
    }

    fn ty(&mut self, r: Reg) -> Option<Type> {
        match self.f.regs.get(r.index()) {
            Some(i) => Some(i.ty),
            None => {
                self.err(format!("{r} is not a register of this function"));
                None
            }
        }
    }

    fn function(&mut self) {
        for &p in &self.f.params {
            self.ty(p);
        }
        for (i, m) in self.f.mems.iter().enumerate() {
            if let Some(parent) = m.parent
                && parent.index() >= i
            {
                self.err(format!("#{i}: parent {parent} is not declared before it"));
            }
        }
        for (i, a) in self.f.accesses.iter().enumerate() {
            if a.mem.index() >= self.f.mems.len() {
                self.err(format!("!{i}: {} is not a memory name", a.mem));
            }
            if let Some(r) = a.view_index {
                match self.f.regs.get(r.index()).map(|x| x.ty) {
                    Some(Type::Scalar(s)) if s.is_int() => {}
                    _ => self.err(format!("!{i}: view index {r} is not an integer register")),
                }
                if !matches!(self.f.mems.get(a.mem.index()).map(|m| m.kind), Some(MemKind::Partition)) {
                    self.err(format!("!{i}: a view index on an access not through a partition"));
                }
            }
        }
        let mut next = 0;
        self.numbering(&self.f.body, &mut next);
        let body = &self.f.body;
        self.block(body, self.f.entry);
        self.split_barriers();
    }

    /// Every split barrier id has one arrive and one wait over the same unit; the arrive
    /// comes first in the same straight-line code, and below the block they share each is
    /// reached only through `group` bodies and memory scopes (which every thread of the
    /// unit runs), in code where a barrier over the unit could stand.
    fn split_barriers(&mut self) {
        let mut halves: std::collections::BTreeMap<u32, [Vec<Half>; 2]> = Default::default();
        collect_halves(&self.f.body, self.f.entry, &mut Vec::new(), &mut halves);
        for (id, [arrives, waits]) in halves {
            let ([a], [w]) = (&arrives[..], &waits[..]) else {
                self.err(format!("split barrier s{id} has {} arrives and {} waits", arrives.len(), waits.len()));
                continue;
            };
            if a.scope != w.scope {
                self.err(format!("split barrier s{id}: arrive over {} but wait over {}", a.scope, w.scope));
            }
            let d = a.path.iter().zip(&w.path).take_while(|(x, y)| x.0 == y.0 && x.1 == y.1).count();
            let (Some(pa), Some(pw)) = (a.path.get(d), w.path.get(d)) else {
                self.err(format!("split barrier s{id}: the halves are nested in one another"));
                continue;
            };
            if pa.0 >= pw.0 {
                self.err(format!("split barrier s{id}: the wait does not come after the arrive"));
            }
            // Below the shared block, only constructs every thread passes.
            if a.path[d..].iter().chain(&w.path[d..]).any(|s| !s.2) {
                self.err(format!("split barrier s{id}: a half is inside a branch, loop, split or unsafe code"));
            }
            if !self.f.facts.narrower_eq(a.scope, pa.3) {
                self.err(format!("split barrier s{id} over {} in {} code", a.scope, pa.3));
            }
        }
    }

    fn block(&mut self, b: &Block, code: Persp) {
        for i in &b.insts {
            self.inst(&i.kind, code);
        }
    }

    /// Runs `f` with `break`/`continue` blocked (inside a group, split or scope).
    fn sealed(&mut self, f: impl FnOnce(&mut Self)) {
        let saved: Vec<bool> = self.loops.clone();
        for l in &mut self.loops {
            *l = false;
        }
        f(self);
        self.loops = saved;
    }

    fn access(&mut self, a: crate::entities::AccessId, writes: Option<bool>) {
        match self.f.accesses.get(a.index()) {
            None => self.err(format!("{a} is not an access of this function")),
            Some(info) => {
                if let Some(w) = writes
                    && info.kind.writes() != w
                    && info.kind != AccessKind::Volatile
                {
                    self.err(format!(
                        "{a}: a {} access used for a {}",
                        info.kind.as_str(),
                        if w { "store" } else { "load" }
                    ));
                }
            }
        }
    }

    fn inst(&mut self, k: &InstKind, code: Persp) {
        use InstKind::*;
        // A parameter's register holds the launch's (or the caller's) value: no instruction
        // defines it, so that every register's definitions are all the values it takes (the
        // lowering copies a parameter the body changes into a register of its own). The
        // analyses rely on it: a register defined once holds that value wherever it is read.
        for d in k.defs() {
            if self.f.params.contains(&d) {
                self.err(format!("{d} is a parameter, which no instruction may write"));
            }
        }
        let facts = self.f.facts;
        match k {
            Const { dst, value } => {
                if let Some(t) = self.ty(*dst) {
                    let ok = match (t, value) {
                        (Type::Scalar(Scalar::Bool), ConstValue::Bool(_)) => true,
                        // An integer constant lies in its register's type: every reader (the
                        // simulator's loop analysis, the CUDA backend's ranges, inference's
                        // affine indices) takes the value as it is written (review R46).
                        (Type::Scalar(s), ConstValue::Int(v)) if s.is_int() => {
                            let (lo, hi) = prism_types::consts::int_range(s);
                            (lo..=hi).contains(v)
                        }
                        (Type::Scalar(s), ConstValue::Int(_)) => s != Scalar::Bool,
                        (Type::Scalar(s), ConstValue::Float(_)) => s.is_float(),
                        _ => false,
                    };
                    if !ok {
                        self.err(format!("{dst}: constant {value} does not fit its type"));
                    }
                }
            }
            Copy { dst, src } => {
                if self.ty(*dst) != self.ty(*src) {
                    self.err(format!("{dst} = copy {src}: types differ"));
                }
            }
            Unary { dst, op, arg } => {
                let (d, a) = (self.ty(*dst), self.ty(*arg));
                let ok = d == a
                    && match (op, d) {
                        (UnOp::Neg, Some(Type::Scalar(s))) => s.is_numeric(),
                        (UnOp::BitNot, Some(Type::Scalar(s))) => s.is_int(),
                        (UnOp::Not, Some(Type::Scalar(s))) => s == Scalar::Bool,
                        _ => false,
                    };
                if !ok {
                    self.err(format!("{dst}: bad operand type for {op:?}"));
                }
            }
            Binary { dst, op, lhs, rhs } => {
                let (d, l, r) = (self.ty(*dst), self.ty(*lhs), self.ty(*rhs));
                let ok = match op {
                    BinOp::Shl | BinOp::Shr => d == l && l.is_some_and(is_int) && r.is_some_and(is_int),
                    op if op.is_comparison() => l == r && d == Some(Type::Scalar(Scalar::Bool)),
                    BinOp::And | BinOp::Or => false,
                    _ => d == l && l == r && matches!(l, Some(Type::Scalar(_))),
                };
                if !ok {
                    self.err(format!("{dst} = {op:?} {lhs}, {rhs}: operand types do not fit"));
                }
            }
            Select { dst, cond, then, otherwise } => {
                if self.ty(*cond) != Some(Type::Scalar(Scalar::Bool)) {
                    self.err(format!("{dst}: select condition {cond} is not bool"));
                }
                let (d, t, o) = (self.ty(*dst), self.ty(*then), self.ty(*otherwise));
                if d != t || t != o {
                    self.err(format!("{dst}: select operand types differ"));
                }
            }
            Cast { dst, arg } => {
                let (d, a) = (self.ty(*dst), self.ty(*arg));
                if !matches!((d, a), (Some(Type::Scalar(_)), Some(Type::Scalar(_)))) {
                    self.err(format!("{dst}: cast between non-scalars"));
                }
            }
            RelId { dst, code: c, target } => {
                if self.ty(*dst) != Some(Type::Scalar(Scalar::I32)) {
                    self.err(format!("{dst}: relid defines an i32"));
                }
                if !facts.narrower_eq(*target, *c) {
                    self.err(format!("{dst}: relid target {target} is not narrower than {c}"));
                }
            }
            Raw { dst, .. } => {
                if self.ty(*dst) != Some(Type::Scalar(Scalar::I32)) {
                    self.err(format!("{dst}: raw index defines an i32"));
                }
            }
            SharedAddr { dst, offset, len, .. } => {
                if self.ty(*dst) != Some(Type::Ptr) {
                    self.err(format!("{dst}: shared address defines a ptr"));
                }
                // The dynamic shared array lies past every static allocation; the launch
                // gives its length.
                let dynamic = *len == DYNAMIC_LEN
                    && self.f.dyn_smem.is_some_and(|d| d.offset == *offset && d.offset >= self.f.smem_size);
                if *len == DYNAMIC_LEN && !dynamic {
                    self.err(format!("{dst}: a dynamic-length shared address that is not the kernel's dynamic array"));
                } else if !dynamic && offset + len > self.f.smem_size {
                    self.err(format!(
                        "{dst}: shared bytes {offset}..{} exceed the function's {}",
                        offset + len,
                        self.f.smem_size
                    ));
                }
            }
            LocalAddr { dst, local } => {
                if self.ty(*dst) != Some(Type::Ptr) {
                    self.err(format!("{dst}: local address defines a ptr"));
                }
                if local.index() >= self.f.locals.len() {
                    self.err(format!("{local} is not a local array"));
                }
            }
            PtrOffset { dst, base, offset, .. } => {
                if self.ty(*dst) != Some(Type::Ptr) || self.ty(*base) != Some(Type::Ptr) {
                    self.err(format!("{dst}: ptradd needs pointers"));
                }
                if !self.ty(*offset).is_some_and(is_int) {
                    self.err(format!("{dst}: ptradd offset {offset} is not an integer"));
                }
            }
            Load { dst, ptr, index, access } => {
                if !matches!(self.ty(*dst), Some(Type::Scalar(_))) {
                    self.err(format!("{dst}: load defines a scalar"));
                }
                if self.ty(*ptr) != Some(Type::Ptr) {
                    self.err(format!("{dst}: load through {ptr}, which is not a ptr"));
                }
                if !self.ty(*index).is_some_and(is_int) {
                    self.err(format!("{dst}: load index {index} is not an integer"));
                }
                self.access(*access, Some(false));
            }
            Store { ptr, index, value, access } => {
                if self.ty(*ptr) != Some(Type::Ptr) {
                    self.err(format!("store through {ptr}, which is not a ptr"));
                }
                if !self.ty(*index).is_some_and(is_int) {
                    self.err(format!("store index {index} is not an integer"));
                }
                self.ty(*value);
                self.access(*access, Some(true));
            }
            LoadVec { dsts, ptr, index, access } | StoreVec { ptr, index, values: dsts, access } => {
                let store = matches!(k, StoreVec { .. });
                let what = if store { "storevec" } else { "loadvec" };
                if self.ty(*ptr) != Some(Type::Ptr) {
                    self.err(format!("{what} through {ptr}, which is not a ptr"));
                }
                if !self.ty(*index).is_some_and(is_int) {
                    self.err(format!("{what} index {index} is not an integer"));
                }
                // Every element is of the memory's type, and together they are one access
                // the hardware has: 4, 8 or 16 bytes of at least two elements.
                let elem = self.f.accesses.get(access.index()).map(|a| self.f.mems[a.mem.index()].elem);
                for r in dsts.iter() {
                    if self.ty(*r).is_some() && elem.is_some_and(|e| self.ty(*r) != Some(Type::Scalar(e))) {
                        self.err(format!("{what}: {r} is not of the memory's element type"));
                    }
                }
                let bytes = elem.map_or(0, |e| e.size() * dsts.len() as u64);
                if dsts.len() < 2 || !matches!(bytes, 4 | 8 | 16) {
                    self.err(format!("{what} of {} elements ({bytes} bytes)", dsts.len()));
                }
                self.access(*access, Some(store));
            }
            LocalDecl { local } => {
                if local.index() >= self.f.locals.len() {
                    self.err(format!("{local} is not a local array"));
                }
            }
            LocalLoad { dst, local, index } | LocalStore { value: dst, local, index } => {
                match self.f.locals.get(local.index()) {
                    None => self.err(format!("{local} is not a local array")),
                    Some(l) => {
                        let elem = l.elem;
                        if self.ty(*dst) != Some(Type::Scalar(elem)) {
                            self.err(format!("{dst}: type differs from {local}'s elements"));
                        }
                    }
                }
                if !self.ty(*index).is_some_and(is_int) {
                    self.err(format!("{local}: index {index} is not an integer"));
                }
            }
            Call { dst, func, args, accesses, .. } => match self.p.functions.get(func.index()) {
                None => self.err(format!("call to unknown function {func}")),
                Some(callee) => {
                    if callee.params.len() != args.len() {
                        self.err(format!(
                            "call @{}: {} arguments for {} parameters",
                            callee.name,
                            args.len(),
                            callee.params.len()
                        ));
                    } else {
                        for (a, p) in args.iter().zip(&callee.params) {
                            let want = callee.regs.get(p.index()).map(|r| r.ty);
                            if self.ty(*a) != want {
                                self.err(format!("call @{}: argument {a} has the wrong type", callee.name));
                            }
                        }
                    }
                    let got = dst.and_then(|d| self.ty(d));
                    if got != callee.ret {
                        self.err(format!("call @{}: result type mismatch", callee.name));
                    }
                    if !facts.narrower_eq(callee.entry, code) && !self.in_unsafe_code() {
                        self.err(format!("call @{} ({}) from {code} code", callee.name, callee.entry));
                    }
                    // Pointers and typed tensor maps are memory: one access each.
                    let ptrs = args
                        .iter()
                        .filter(|a| {
                            matches!(self.f.regs.get(a.index()).map(|r| r.ty), Some(Type::Ptr | Type::TensorMap(_)))
                        })
                        .count();
                    if ptrs != accesses.len() {
                        self.err(format!(
                            "call @{}: {} accesses for {ptrs} pointer arguments",
                            callee.name,
                            accesses.len()
                        ));
                    }
                    for a in accesses {
                        self.access(*a, None);
                    }
                }
            },
            Intrinsic { dsts, intrinsic, args, accesses } => {
                let sig = intrinsic.sig();
                let outs: usize =
                    sig.params.iter().map(|p| if let ParamKind::OutList(n) = p.kind { n } else { 0 }).sum();
                let ins = sig.params.iter().filter(|p| !matches!(p.kind, ParamKind::OutList(_))).count();
                if args.len() != ins {
                    self.err(format!("intrinsic {}: {} operands for {ins}", sig.name, args.len()));
                }
                let has_ret = !matches!(sig.ret, prism_types::intrinsics::RetSig::Void);
                if dsts.len() != outs + usize::from(has_ret) {
                    self.err(format!(
                        "intrinsic {}: {} results, expected {}",
                        sig.name,
                        dsts.len(),
                        outs + usize::from(has_ret)
                    ));
                }
                for d in dsts {
                    self.ty(*d);
                }
                for a in args {
                    match a {
                        IntrArg::Val(r) => {
                            self.ty(*r);
                        }
                        IntrArg::Elem { ptr, index } => {
                            if self.ty(*ptr) != Some(Type::Ptr) || !self.ty(*index).is_some_and(is_int) {
                                self.err(format!(
                                    "intrinsic {}: element operand {ptr}[{index}] is malformed",
                                    sig.name
                                ));
                            }
                        }
                    }
                }
                for a in accesses {
                    self.access(*a, None);
                }
            }
            Barrier { scope, .. } => {
                if !facts.narrower_eq(*scope, code) && !self.in_unsafe_code() {
                    self.err(format!("barrier over {scope} in {code} code"));
                }
            }
            AssertUniform { reg, persp, what } => {
                // A pointer is checked only as an argument or an intrinsic's operand: a memory
                // name passed from unsafe code for a broader pointer parameter or operand,
                // where the pointer is all the callee sees of the view, or the address of an
                // element operand. Variables, returns and results are scalars.
                match (self.ty(*reg), what) {
                    (Some(Type::Scalar(_)), _)
                    | (Some(Type::Ptr), Checked::Argument { .. } | Checked::Operand { .. }) => {}
                    (Some(Type::Ptr), _) => {
                        self.err(format!("assert.uniform of {reg}, a pointer that is not an argument"))
                    }
                    _ => self.err(format!("assert.uniform of {reg}, which is neither a scalar nor a pointer")),
                }
                let ty = self.ty(*reg);
                self.checked(*what, *persp, Some(ty));
            }
            AssertUniformLocal { local, persp, what } => {
                if local.index() >= self.f.locals.len() {
                    self.err(format!("assert.uniform.local of {local}, which is not a local array"));
                }
                self.checked(*what, *persp, None);
            }
            // Checked as pairs by `split_barriers`.
            BarrierArrive { .. } | BarrierWait { .. } => {
                if self.in_unsafe_code() {
                    self.err("a split barrier in unsafe code".into());
                }
            }
            If { cond, then, otherwise, .. } => {
                if self.ty(*cond) != Some(Type::Scalar(Scalar::Bool)) {
                    self.err(format!("if condition {cond} is not bool"));
                }
                self.block(then, code);
                self.block(otherwise, code);
            }
            Loop { header, cond, body, latch, counter, unroll } => {
                self.block(header, code);
                if *unroll == prism_types::tir::Unroll::Count(0) {
                    self.err("loop unroll count 0 (the least is 1, never unroll)".to_string());
                }
                if self.ty(*cond) != Some(Type::Scalar(Scalar::Bool)) {
                    self.err(format!("loop condition {cond} is not bool"));
                }
                // The simulator checks the counter's step for overflow and the CUDA backend
                // prints it as C's `+=`: both find it as the latch's one add to the counter.
                if let Some(c) = counter {
                    let steps = latch
                        .insts
                        .iter()
                        .filter(|i| matches!(&i.kind, Binary { dst, op: BinOp::Add, lhs, .. } if dst == c && lhs == c))
                        .count();
                    let writes = latch.insts.iter().filter(|i| i.kind.defs().contains(c)).count();
                    if steps != 1 || writes != 1 {
                        self.err(format!("loop counter {c} is not stepped by one `{c} = {c} + step` in the latch"));
                    }
                    if !matches!(self.ty(*c), Some(Type::Scalar(s)) if s.is_int()) {
                        self.err(format!("loop counter {c} is not an integer"));
                    }
                }
                self.loops.push(true);
                self.block(body, code);
                self.loops.pop();
                self.block(latch, code);
            }
            Break | Continue => match self.loops.last() {
                None => self.err(format!("{k:?} outside a loop")),
                Some(false) => self.err(format!("{k:?} leaves a group, split or scope")),
                Some(true) => {}
            },
            Return { value } => {
                let got = value.and_then(|v| self.ty(v));
                if got != self.f.ret {
                    self.err("return value does not match the function's type".into());
                }
            }
            Group { persp, body } => {
                if !facts.narrower_eq(*persp, code) {
                    self.err(format!("group {persp} in {code} code"));
                }
                if *persp == code {
                    self.block(body, *persp);
                } else {
                    self.sealed(|v| v.block(body, *persp));
                }
            }
            Split { unit, cases } => {
                let avail = if facts.narrower_eq(*unit, code) { facts.units_in(*unit, code) } else { 0 };
                let mut next = 0;
                for c in cases {
                    if c.offset != next
                        || c.count == 0
                        || c.offset + c.count > avail
                        || avail % c.count != 0
                        || c.offset % c.count != 0
                    {
                        self.err(format!("split case {} {} does not fit {avail} units of {unit}", c.offset, c.count));
                    }
                    next = c.offset + c.count;
                    self.sealed(|v| v.block(&c.body, c.persp));
                }
            }
            Scope { mem, view, body, .. } => {
                match self.f.mems.get(view.index()) {
                    Some(m) if m.parent == Some(*mem) => {}
                    _ => self.err(format!("scope {mem} -> {view}: {view} is not a view of {mem}")),
                }
                self.sealed(|v| v.block(body, code));
            }
            Unsafe { body } => self.unsafe_block(body, code),
            AsyncCommit => {}
            AsyncWait { views, .. } => {
                for v in views {
                    if self.f.mems.get(v.index()).is_none_or(|m| m.kind != crate::ir::MemKind::Async) {
                        self.err(format!("asyncwait completes {v}, which is not an async view"));
                    }
                }
            }
            Verbatim { sim, .. } => {
                if let Some(b) = sim {
                    self.unsafe_block(b, code);
                }
            }
        }
    }

    /// Blocks carry their pre-order numbers.
    fn numbering(&mut self, b: &Block, next: &mut u32) {
        if b.id != *next {
            self.err(format!("block {} where pre-order numbering gives {next}", b.id));
        }
        *next += 1;
        for i in &b.insts {
            for nb in i.kind.blocks() {
                self.numbering(nb, next);
            }
        }
    }

    fn unsafe_block(&mut self, b: &Block, code: Persp) {
        self.unsafe_depth += 1;
        self.block(b, code);
        self.unsafe_depth -= 1;
    }

    /// What a uniformity assertion says it checks fits the program: a returned value in a
    /// function that returns one of its type; an argument of a callee's parameter that
    /// exists, of its type (a pointer for a local array, `ty` `None`); a callee's result
    /// of its return type; an intrinsic's operand that exists and is broader than
    /// `thread[1]`, over its own perspective `persp`, a scalar for a value and a pointer
    /// (or a local array) for memory or an element. A local array is a variable, an
    /// exit's, an argument or an operand. The flag of a `break` or `continue` out of unsafe
    /// code is a `u32` register.
    fn checked(&mut self, what: Checked, persp: Persp, ty: Option<Option<Type>>) {
        let prog = self.p;
        let callee = |func: FuncId| prog.functions.get(func.index());
        match what {
            Checked::Variable | Checked::Exit => {}
            // The flag of a way out of unsafe code is an iteration number or a mark the
            // lowering makes, a `u32` register.
            Checked::Break | Checked::Continue => {
                if ty != Some(Some(Type::Scalar(Scalar::U32))) {
                    self.err(format!(
                        "assert.uniform{} of something other than a u32 register",
                        crate::print::checked_suffix(what)
                    ));
                }
            }
            Checked::Returned => {
                if ty.is_none() || ty != Some(self.f.ret) {
                    self.err("assert.uniform.returned of a value the function does not return".to_string());
                }
            }
            Checked::Argument { func, index } => match callee(func) {
                None => self.err(format!("assert.uniform.arg of unknown function {func}")),
                Some(c) => match c.params.get(index as usize) {
                    None => self.err(format!("assert.uniform.arg @{}: no parameter {index}", c.name)),
                    Some(p) => {
                        let want = c.regs.get(p.index()).map(|r| r.ty);
                        let fits = match ty {
                            Some(t) => t == want,
                            None => want == Some(Type::Ptr),
                        };
                        if !fits {
                            self.err(format!("assert.uniform.arg @{}: parameter {index} has another type", c.name));
                        }
                    }
                },
            },
            Checked::Result { func } => match callee(func) {
                None => self.err(format!("assert.uniform.result of unknown function {func}")),
                Some(c) => {
                    if ty.is_none() || ty != Some(c.ret) {
                        self.err(format!("assert.uniform.result @{}: not its result type", c.name));
                    }
                }
            },
            Checked::Operand { intrinsic, index } => {
                let sig = intrinsic.sig();
                let Some(p) = sig.params.get(index as usize) else {
                    self.err(format!("assert.uniform.operand {}: no operand {index}", sig.name));
                    return;
                };
                if p.persp == Persp::THREAD {
                    self.err(format!("assert.uniform.operand {}: operand {index} is at thread[1]", sig.name));
                } else if p.persp != persp {
                    self.err(format!(
                        "assert.uniform.operand {}: operand {index} is at {}, not {persp}",
                        sig.name, p.persp
                    ));
                }
                let fits = matches!(
                    (p.kind, ty),
                    (ParamKind::Value, Some(Some(Type::Scalar(_))))
                        | (ParamKind::Mem { .. }, Some(Some(Type::Ptr)) | None)
                        | (ParamKind::Ref { .. } | ParamKind::AsyncRef, Some(Some(Type::Ptr)))
                );
                if !fits {
                    self.err(format!("assert.uniform.operand {}: operand {index} is of another kind", sig.name));
                }
            }
        }
    }

    fn in_unsafe_code(&self) -> bool {
        self.unsafe_depth > 0
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse, print, verify};

    /// A device function with unsafe code returning a `block[1]` value, and a kernel calling
    /// it from unsafe code in a loop it `continue`s: every kind of uniformity assertion.
    const CHECKS: &str = r#"device @f(%0, %1) entry block[1] facts 1 1 smem 0 -> i32 {
  reg %0: i32 "x"
  reg %1: ptr "tab"
  reg %2: i32
  reg %3: i32
  reg %4: bool
  mem #0 param "tab" block[1] i32
  body {
    unsafe {
      %2 = raw thread_idx
      %3 = const 16
      %4 = lt %2, %3
      if.any %4 {
        assert.uniform.returned %0 block[1]
        return %0
      }
    }
    return %0
  }
}

kernel @k(%0) entry grid[1] facts 1 1 smem 0 {
  reg %0: ptr "out"
  reg %1: i32 "v"
  reg %2: i32
  reg %3: i32 "i"
  reg %4: i32
  reg %5: i32
  reg %6: i32
  reg %7: bool
  reg %8: i32
  reg %9: ptr "tab"
  reg %10: i32
  local $0: i32[2] "tab"
  mem #0 param "out" grid[1] i32
  mem #1 local "tab" thread[1] i32
  access !0 read #1
  body {
    group block[1] {
      decl $0
      %2 = const 0
      %1 = copy %2
      %4 = const 0
      %3 = copy %4
      %5 = const 2
      %6 = const 1
      loop counter %3 {
        %7 = lt %3, %5
      } while %7 {
        unsafe {
          %8 = raw thread_idx
          %9 = localaddr $0
          assert.uniform.arg %8 block[1] @f 0
          assert.uniform.local.arg $0 block[1] @f 1
          %10 = call @f(%8, %9) smem 0 !0
          assert.uniform.result %10 block[1] @f
          %1 = copy %10
          assert.uniform.exit %1 block[1]
          continue
        }
        assert.uniform %1 block[1]
      } latch {
        assert.uniform %1 block[1]
        %3 = add %3, %6
      }
      assert.uniform %1 block[1]
    }
  }
}
"#;

    fn errors(text: &str) -> Vec<String> {
        verify(&parse(text).expect("parses")).into_iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn uniformity_assertions_round_trip_and_verify() {
        let p = parse(CHECKS).expect("parses");
        assert_eq!(print(&p), CHECKS);
        assert_eq!(errors(CHECKS), Vec::<String>::new());
    }

    /// A view or pointer passed from unsafe code for a broader pointer parameter is checked
    /// as its pointer register (R5 F4): accepted as an argument of a pointer parameter only.
    #[test]
    fn pointer_arguments_are_checked_as_pointers() {
        let local = "assert.uniform.local.arg $0 block[1] @f 1";
        assert!(CHECKS.contains(local));
        let ptr = CHECKS.replace(local, "assert.uniform.arg %9 block[1] @f 1");
        assert_eq!(errors(&ptr), Vec::<String>::new());
        assert_eq!(print(&parse(&ptr).expect("parses")), ptr);
        let cases = [
            ("assert.uniform.arg %9 block[1] @f 0", "parameter 0 has another type"),
            ("assert.uniform %9 block[1]", "a pointer that is not an argument"),
            ("assert.uniform.exit %9 block[1]", "a pointer that is not an argument"),
        ];
        for (to, want) in cases {
            let errs = errors(&CHECKS.replace(local, to));
            assert!(errs.iter().any(|e| e.contains(want)), "{to}: {errs:?}");
        }
    }

    /// The flag of a `break` or `continue` out of unsafe code is a `u32` register the
    /// lowering makes (review R44); the corpus's programs check the accepted form.
    #[test]
    fn exit_flags_are_u32_registers() {
        let exit = "assert.uniform.exit %1 block[1]";
        assert!(CHECKS.contains(exit));
        for to in ["assert.uniform.break %1 block[1]", "assert.uniform.continue %1 block[1]"] {
            let text = CHECKS.replace(exit, to);
            assert_eq!(print(&parse(&text).expect("parses")), text);
            let errs = errors(&text);
            assert!(errs.iter().any(|e| e.contains("other than a u32 register")), "{to}: {errs:?}");
        }
    }

    /// No instruction may write a parameter's register (the lowering copies a parameter
    /// the body changes into a register of its own): the analyses take a register's
    /// definitions to be all the values it holds (review R33).
    /// Review R46: an integer constant outside its register's type (the checker once folded
    /// `abs(-2147483648)` to 2147483648 in an `i32`) is malformed, since the readers of
    /// constants (the simulator's loop analysis, the CUDA ranges) take it as written.
    #[test]
    fn integer_constants_lie_in_their_type() {
        let from = "      %3 = const 16\n";
        assert!(CHECKS.contains(from));
        for (value, ok) in [("2147483647", true), ("-2147483648", true), ("2147483648", false), ("-2147483649", false)]
        {
            let errs = errors(&CHECKS.replacen(from, &format!("      %3 = const {value}\n"), 1));
            let bad = errs.iter().any(|e| e.contains("constant") && e.contains("does not fit its type"));
            assert_eq!(bad, !ok, "const {value}: {errs:?}");
        }
    }

    #[test]
    fn parameters_are_never_written() {
        let from = "      %1 = copy %2\n";
        assert!(CHECKS.contains(from));
        assert!(errors(CHECKS).is_empty(), "{:?}", errors(CHECKS));
        let errs = errors(&CHECKS.replacen(from, "      %1 = copy %2\n      %0 = copy %9\n", 1));
        assert!(errs.iter().any(|e| e.contains("%0 is a parameter, which no instruction may write")), "{errs:?}");
    }

    #[test]
    fn uniformity_assertions_must_fit_their_call() {
        let cases = [
            ("assert.uniform.arg %8 block[1] @f 0", "assert.uniform.arg %8 block[1] @f 2", "no parameter 2"),
            (
                "assert.uniform.arg %8 block[1] @f 0",
                "assert.uniform.arg %8 block[1] @f 1",
                "parameter 1 has another type",
            ),
            ("assert.uniform.local.arg $0 block[1] @f 1", "assert.uniform.local.arg $0 block[1] @f 0", "parameter 0"),
            ("assert.uniform.result %10 block[1] @f", "assert.uniform.result %10 block[1] @k", "not its result type"),
            ("assert.uniform.exit %1 block[1]", "assert.uniform.returned %1 block[1]", "does not return"),
        ];
        for (from, to, want) in cases {
            assert!(CHECKS.contains(from), "{from}");
            let errs = errors(&CHECKS.replace(from, to));
            assert!(errs.iter().any(|e| e.contains(want)), "{to}: {errs:?}");
        }
    }

    /// An intrinsic's operand passed from unsafe code (`assert.uniform.operand`): a pointer
    /// for a whole-memory operand or an element's address (or a local array for memory),
    /// over the operand's own perspective, of an operand the intrinsic has that is broader
    /// than `thread[1]` (the wgmma's tiles).
    #[test]
    fn intrinsic_operands_must_fit_the_table() {
        let at = "          %9 = localaddr $0\n";
        assert!(CHECKS.contains(at));
        let with = |line: &str| CHECKS.replace(at, &format!("{at}          {line}\n"));
        for good in [
            "assert.uniform.operand %9 thread[128] wgmma_bf16 1",
            "assert.uniform.operand %9 thread[128] wgmma_tf32_sw 2",
            "assert.uniform.local.operand $0 thread[128] wgmma_bf16 2",
        ] {
            let text = with(good);
            assert_eq!(errors(&text), Vec::<String>::new(), "{good}");
            assert_eq!(print(&parse(&text).expect("parses")), text);
        }
        let cases = [
            ("assert.uniform.operand %9 thread[128] wgmma_bf16 7", "no operand 7"),
            ("assert.uniform.operand %9 thread[128] wgmma_bf16 0", "operand 0 is at thread[1]"),
            ("assert.uniform.operand %9 block[1] wgmma_bf16 1", "not block[1]"),
            ("assert.uniform.operand %8 thread[128] wgmma_bf16 1", "operand 1 is of another kind"),
            ("assert.uniform.local.operand $0 thread[128] wgmma_bf16_sw 1", "operand 1 is of another kind"),
        ];
        for (line, want) in cases {
            let errs = errors(&with(line));
            assert!(errs.iter().any(|e| e.contains(want)), "{line}: {errs:?}");
        }
        assert!(parse(&with("assert.uniform.operand %9 thread[128] no_such_intrinsic 1")).is_err());
    }
}
