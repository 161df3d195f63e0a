//! Lowering: typed IR (TIR) to the kernel IR.
//!
//! Every TIR variable becomes a register (scalars), a thread-local array (`$n`), or a memory
//! name (`#n`) with a pointer register. Views made by `partition` have no run-time value:
//! each access through one evaluates the indexing function on the access's indices, in
//! place, and continues with the parent name, down to a root (a pointer parameter, a shared
//! array or a local array) whose pointer register is known. A partition passed to a function
//! is an offset view (`lambda i: e + i`, which the checker guarantees), so it becomes the
//! parent's pointer advanced by `e`.
//!
//! `and`, `or` and conditional expressions become non-uniform `if`s, so that the unevaluated
//! side has no effects (it may load out of bounds). `for v in range(a, b, s)` evaluates `a`,
//! `b` and `s` once, as Python does, and counts down when the step is negative.
//!
//! Invariant: lowering is total on programs the checker accepted; it never reports errors.

use crate::entities::{AccessId, FuncId, LocalId, MemId, Reg};
use crate::ir::*;
use prism_span::Span;
use prism_types::intrinsics::{Family, IntrinsicId, lookup};
use prism_types::perspective::Persp;
use prism_types::tir::{
    self, BinOp, CallArg, Callee, ConstValue, ExprKind, StmtKind, Unroll, VarId, VarKind, ViewKind,
};
use prism_types::ty::{Scalar, Ty};
use std::collections::HashMap;

/// Whether a statement of `blocks` may change variable `v` ([`tir::assigned_in`]: an
/// assignment, an `out=` operand).
fn assigns(blocks: &[&tir::Block], v: VarId) -> bool {
    let mut changed = Vec::new();
    for b in blocks {
        tir::assigned_in(b, &mut std::collections::HashSet::new(), &mut changed);
    }
    changed.iter().any(|&(c, _)| c == v)
}

/// Lowers a checked program.
pub fn lower(program: &tir::Program) -> Program {
    let mut p = Program { functions: program.functions.iter().map(|f| lower_function(program, f)).collect() };
    p.number_blocks();
    p
}

/// How a pipeline's slot view is used: filled, read for the current tile, read for the
/// next tile after the body's turn, or read for the current tile by a consumer case that
/// releases the slot one tile late.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Fill,
    Stage,
    Next,
    Late,
}

/// A uniformity check of `var` (assigned by unsafe code at `at`) not yet placed: it is
/// made after the first statement that ends with the code at a perspective at least the
/// variable's, with at most `loops` loops around it.
/// How a statement leaves unsafe code early.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Exit {
    Break,
    Continue,
    Return,
}

/// What the ways out of unsafe code inside one loop being lowered need (docs/soundness.md
/// §3): the checks its latch makes, and the flags that say whether each thread left the
/// loop or an iteration by a `break` or `continue` out of unsafe code.
struct LoopExits {
    /// The loop's code perspective: the unit whose threads must leave it together.
    code: Persp,
    /// Whether the loop is nothing but one `with unsafe:` block (and a condition without
    /// effects): a `break` out of it then skips only unsafe code, and needs no flag.
    only_unsafe: bool,
    /// The outermost `with unsafe:` statements nothing in the loop's body follows (the
    /// body's last statement, or the last of a branch of an `if` that is): a `continue` out
    /// of one skips only unsafe code, and needs no flag.
    finals: Vec<*const tir::Stmt>,
    /// Variables a `continue` out of unsafe code leaves for the latch to check.
    latch: Vec<(VarId, Span)>,
    /// For a `break` out of unsafe code: the loop's iteration counter, the flag each thread
    /// sets to the counter when it breaks, and the first such `break` (where a report
    /// points).
    broke: Option<(Reg, Reg, Span)>,
    /// For a `continue` out of unsafe code: the flag each thread sets when it continues,
    /// cleared at the start of every iteration, and the first such `continue`.
    continued: Option<(Reg, Span)>,
}

#[derive(Clone, Copy)]
struct Pending {
    var: VarId,
    at: Span,
    loops: usize,
}

struct Cx<'a> {
    prog: &'a tir::Program,
    tf: &'a tir::Function,
    f: Function,
    regs: HashMap<VarId, Reg>,
    locals: HashMap<VarId, LocalId>,
    mems: HashMap<VarId, MemId>,
    /// Pointer registers of root memory names.
    ptrs: HashMap<VarId, Reg>,
    /// Bindings of lambda parameters while an indexing function is evaluated.
    lambda_env: Vec<(VarId, Reg)>,
    unsafe_depth: u32,
    /// Uniformity checks of variables unsafe code assigned that wait for a point where
    /// they can be made (docs/soundness.md §3): code whose perspective is at least the
    /// variable's, outside the loops a `break` or `continue` left the unsafe code for.
    pending: Vec<Pending>,
    /// Loops (`for`, `while`) around the statement being lowered.
    loops: usize,
    /// Inside unsafe code: the loops around its outermost `with unsafe:`, and the variables
    /// that block assigns (what a `break`, `continue` or `return` out of it must check).
    unsafe_exit: (usize, Vec<(VarId, Span)>),
    /// Inside unsafe code: whether nothing follows its outermost `with unsafe:` in the
    /// iteration of the loop around it ([`LoopExits::finals`]).
    unsafe_final: bool,
    /// Per loop being lowered: what a `break` or `continue` that leaves unsafe code inside
    /// it needs checked.
    loop_exits: Vec<LoopExits>,
    /// The tile register each ring's slot is taken from, inside its pipeline: the fill's
    /// tile while the fill is lowered, the used tile after.
    tile_of: HashMap<VarId, Reg>,
    /// The tile register of each ring's `stage(ring, next=True)` views, in the part of its
    /// pipeline's body after the barrier: the next tile, or the last one on the last.
    next_of: HashMap<VarId, Reg>,
    /// The pointer to each pipeline slot view's slot, bounded to it (`PtrOffset`'s `bound`):
    /// every access through the view goes through it, so the simulator checks its index
    /// against the slot, not the ring.
    slot_ptr: HashMap<VarId, Reg>,
    /// The fill views made since the current pipeline's fill began.
    fill_views: Vec<MemId>,
    /// Inside a warp-specialised pipeline's fill: the slot's full mbarrier (pointer,
    /// element index, memory), on which the fill's TMA copies complete.
    fill_bar: Option<(Reg, Reg, MemId)>,
}

/// The `with unsafe:` statements that end `b` (its last statement, or the last of either
/// branch of an `if` that is its last): nothing runs after them in `b`. Any other construct
/// around one may do something where it ends (a scope's wait), so it does not count.
fn final_unsafe(b: &tir::Block, out: &mut Vec<*const tir::Stmt>) {
    let Some(last) = b.stmts.last() else { return };
    match &last.kind {
        StmtKind::Unsafe { .. } => out.push(last),
        StmtKind::If { then, otherwise, .. } => {
            final_unsafe(then, out);
            final_unsafe(otherwise, out);
        }
        _ => {}
    }
}

/// Whether an instruction of a loop's condition only computes a value (arithmetic and
/// reads), so that a thread that no longer evaluates it misses nothing.
fn without_effects(k: &InstKind) -> bool {
    matches!(
        k,
        InstKind::Const { .. }
            | InstKind::Copy { .. }
            | InstKind::Unary { .. }
            | InstKind::Binary { .. }
            | InstKind::Select { .. }
            | InstKind::Cast { .. }
            | InstKind::RelId { .. }
            | InstKind::Raw { .. }
            | InstKind::PtrOffset { .. }
            | InstKind::Load { .. }
            | InstKind::LocalLoad { .. }
    )
}

/// Whether a function body has unsafe code (`with unsafe:` or verbatim CUDA) anywhere.
fn has_unsafe(b: &tir::Block) -> bool {
    b.stmts.iter().any(|s| match &s.kind {
        StmtKind::Unsafe { .. } | StmtKind::UnsafeText(_) => true,
        StmtKind::If { then, otherwise, .. } => has_unsafe(then) || has_unsafe(otherwise),
        StmtKind::Split { cases, .. } => cases.iter().any(|c| has_unsafe(&c.body)),
        StmtKind::Pipeline { fill, body, .. } => has_unsafe(fill) || has_unsafe(body),
        StmtKind::For { body, .. }
        | StmtKind::While { body, .. }
        | StmtKind::Group { body, .. }
        | StmtKind::Partition { body, .. }
        | StmtKind::Claim { body, .. }
        | StmtKind::Async { body, .. }
        | StmtKind::Fill { body, .. }
        | StmtKind::Stage { body, .. } => has_unsafe(body),
        StmtKind::Decl { .. }
        | StmtKind::Assign { .. }
        | StmtKind::Store { .. }
        | StmtKind::Expr(_)
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Return(_) => false,
    })
}

fn ir_ty(t: &Ty) -> Type {
    match t {
        Ty::Scalar(s) => Type::Scalar(*s),
        Ty::Ptr { .. } => Type::Ptr,
        Ty::Opaque(_) => Type::Opaque,
        Ty::TensorMap(m) => Type::TensorMap(*m),
        // Arrays are not registers; void has no value. Neither reaches here.
        Ty::Array { .. } | Ty::Void => Type::Scalar(Scalar::I32),
    }
}

/// A function's name in the IR: an instance of a generic function, `f[float, -2, 1.5]`,
/// becomes `f.float.m2.1p5`, which the IR's text form reads back. No ordinary function's
/// name ends that way: a type name cannot name a function, and a number cannot start one.
pub fn ir_name(name: &str) -> String {
    let Some((base, args)) = name.strip_suffix(']').and_then(|n| n.split_once('[')) else {
        return name.to_string();
    };
    let mut out = base.to_string();
    for a in args.split(", ") {
        out.push('.');
        out.extend(a.chars().map(|c| match c {
            '-' => 'm',
            '.' => 'p',
            c => c,
        }));
    }
    out
}

fn lower_function(prog: &tir::Program, tf: &tir::Function) -> Function {
    let mut cx = Cx {
        prog,
        tf,
        f: Function {
            name: ir_name(&tf.name),
            kind: tf.kind,
            entry: tf.entry,
            facts: tf.facts,
            smem_size: tf.smem_need,
            launch_bounds: tf.launch_bounds,
            block_shape: tf.block_shape.map(|[x, y, z]| Dim3 { x, y, z }),
            dyn_smem: tf.dyn_shared.map(|d| DynSmem { count: d.count, elem: d.elem, offset: d.offset }),
            min_blocks: tf.min_blocks,
            max_blocks: None,
            params: Vec::new(),
            ret: tf.ret.map(|(s, _)| Type::Scalar(s)),
            regs: Vec::new(),
            locals: Vec::new(),
            mems: Vec::new(),
            accesses: Vec::new(),
            body: Block::default(),
            span: tf.header_span,
        },
        regs: HashMap::new(),
        locals: HashMap::new(),
        mems: HashMap::new(),
        ptrs: HashMap::new(),
        lambda_env: Vec::new(),
        unsafe_depth: 0,
        pending: Vec::new(),
        loops: 0,
        unsafe_exit: (0, Vec::new()),
        loop_exits: Vec::new(),
        unsafe_final: false,
        tile_of: HashMap::new(),
        next_of: HashMap::new(),
        fill_bar: None,
        slot_ptr: HashMap::new(),
        fill_views: Vec::new(),
    };
    // The scalar parameters the body changes: each is copied at entry into a register of
    // its own, which the body reads and writes, so that no instruction ever defines a
    // parameter's register. The analyses take a register defined by one instruction to
    // hold that instruction's value wherever it is read (`prism_sync`'s affine forms); a
    // parameter written once would otherwise pass for that value even where it still
    // held the launch's (review R33: `m = 32` after the copies that `if t < m:` guards
    // made them look bounded by 32). `verify` refuses IR that writes a parameter.
    let mut body = Block::default();
    for &p in &tf.params {
        let var = tf.var(p);
        let r = cx.new_reg(ir_ty(&var.ty), Some(&var.name));
        cx.f.params.push(r);
        match &var.ty {
            Ty::Ptr { elem, .. } => {
                cx.new_mem(p, MemKind::Param, None, *elem);
                cx.ptrs.insert(p, r);
            }
            // A typed tensor map describes global memory its copies read (and stores
            // write): a parameter memory like a pointer's, in parameter order.
            Ty::TensorMap(m) => {
                cx.new_mem(p, MemKind::Param, None, m.elem);
                cx.regs.insert(p, r);
            }
            _ if assigns(&[&tf.body], p) => {
                let local = cx.new_reg(ir_ty(&var.ty), Some(&var.name));
                cx.emit(&mut body, InstKind::Copy { dst: local, src: r }, var.span);
                cx.regs.insert(p, local);
            }
            _ => {
                cx.regs.insert(p, r);
            }
        }
    }
    // The dynamic shared array's address, at its offset after the static allocations; its
    // length is the launch's ([`DYNAMIC_LEN`]).
    if let Some(d) = tf.dyn_shared {
        cx.new_mem(d.var, MemKind::Shared, None, d.elem);
        let r = cx.new_reg(Type::Ptr, Some(&tf.var(d.var).name.clone()));
        cx.ptrs.insert(d.var, r);
        let inst = InstKind::SharedAddr { dst: r, offset: d.offset, len: DYNAMIC_LEN, elem: d.elem };
        cx.emit(&mut body, inst, tf.var(d.var).span);
    }
    cx.block(&tf.body, &mut body);
    cx.f.body = body;
    cx.f
}

impl Cx<'_> {
    fn new_reg(&mut self, ty: Type, name: Option<&str>) -> Reg {
        let r = Reg(self.f.regs.len() as u32);
        self.f.regs.push(RegInfo { ty, name: name.map(str::to_string) });
        r
    }

    fn new_mem(&mut self, v: VarId, kind: MemKind, parent: Option<MemId>, elem: Scalar) -> MemId {
        let var = self.tf.var(v);
        let m = MemId(self.f.mems.len() as u32);
        self.f.mems.push(MemInfo { name: var.name.clone(), kind, persp: var.persp, parent, elem, span: var.span });
        self.mems.insert(v, m);
        m
    }

    fn access(&mut self, mem: MemId, kind: AccessKind, span: Span) -> AccessId {
        self.access_at(mem, kind, span, None)
    }

    fn access_at(&mut self, mem: MemId, kind: AccessKind, span: Span, view_index: Option<Reg>) -> AccessId {
        let a = AccessId(self.f.accesses.len() as u32);
        self.f.accesses.push(AccessInfo { mem, kind, span, view_index });
        a
    }

    fn emit(&mut self, out: &mut Block, kind: InstKind, span: Span) {
        out.insts.push(Inst { kind, span });
    }

    fn konst(&mut self, out: &mut Block, s: Scalar, v: ConstValue, span: Span) -> Reg {
        let r = self.new_reg(Type::Scalar(s), None);
        self.emit(out, InstKind::Const { dst: r, value: v }, span);
        r
    }

    fn block(&mut self, b: &tir::Block, out: &mut Block) {
        for s in &b.stmts {
            let mark = self.pending.len();
            self.stmt(s, out);
            self.flush(mark, s.code, out);
        }
    }

    /// Whether a check of `v` is needed at all: variables at `thread[1]` are uniform by
    /// definition.
    fn checked(&self, v: VarId) -> bool {
        self.tf.var(v).persp != Persp::THREAD
    }

    /// Whether code at `code` runs every thread of each unit of `v`'s perspective together,
    /// so that a check there compares whole units.
    fn covers(&self, v: VarId, code: Persp) -> bool {
        self.tf.facts.narrower_eq(self.tf.var(v).persp, code)
    }

    /// Makes the pending checks from `mark` on that can be made after a statement at
    /// `code` (once per variable), and keeps the others for an enclosing statement.
    fn flush(&mut self, mark: usize, code: Persp, out: &mut Block) {
        if self.pending.len() <= mark {
            return;
        }
        let tail = self.pending.split_off(mark);
        let mut done: Vec<VarId> = Vec::new();
        for p in tail {
            if p.loops >= self.loops && self.covers(p.var, code) {
                if !done.contains(&p.var) {
                    done.push(p.var);
                    self.assert_uniform(p.var, p.at, Checked::Variable, out);
                }
            } else {
                self.pending.push(p);
            }
        }
    }

    /// The uniformity check of variable `v` (a scalar, or every element of a local array),
    /// reported at `at`: `what` is [`Checked::Variable`] where the variable's unit meets, or
    /// [`Checked::Exit`] on a way out of unsafe code.
    fn assert_uniform(&mut self, v: VarId, at: Span, what: Checked, out: &mut Block) {
        let var = self.tf.var(v);
        let persp = var.persp;
        match &var.ty {
            Ty::Scalar(_) => {
                if let Some(&reg) = self.regs.get(&v) {
                    self.emit(out, InstKind::AssertUniform { reg, persp, what }, at);
                }
            }
            Ty::Array { .. } if !matches!(var.kind, VarKind::Shared { .. }) => {
                if let Some(&local) = self.locals.get(&v) {
                    self.emit(out, InstKind::AssertUniformLocal { local, persp, what }, at);
                }
            }
            // Memory is not a value: its uniformity is not a question.
            _ => {}
        }
    }

    /// At a `break`, `continue` or `return` (`what`) in unsafe code at `code`: if it leaves
    /// the outermost `with unsafe:`, the checks of the variables that block assigns, on this
    /// exit edge (made here when the code covers their units; otherwise the fall-through's
    /// deferred check, after the narrower construct that no exit may leave, covers them),
    /// and for `break` and `continue` again where the loop's threads meet: after the loop
    /// (and for `continue` at its latch), since only some of them may take this exit.
    ///
    /// Variables are not all unsafe code can leave different: a `break` or `continue` that
    /// only some threads of the loop's unit take sends them on apart, so that safe code
    /// after the loop, or the rest of the iteration, runs with part of the unit (a
    /// `block[1]` counter that safe code increments in each iteration would come out
    /// different). Each such way out sets a flag (for `break`, the iteration it left in;
    /// for `continue`, a mark) that is compared where the unit meets: after the loop, and
    /// at the latch ([`Cx::loop_flags`]).
    fn unsafe_exit_checks(&mut self, what: Exit, code: Persp, span: Span, out: &mut Block) {
        if self.unsafe_depth == 0 {
            return;
        }
        let leaves = match what {
            Exit::Return => true,
            Exit::Break | Exit::Continue => self.loops == self.unsafe_exit.0,
        };
        if !leaves {
            return;
        }
        let vars = self.unsafe_exit.1.clone();
        for &(v, at) in &vars {
            if self.covers(v, code) {
                self.assert_uniform(v, at, Checked::Exit, out);
            }
        }
        if what == Exit::Return {
            return;
        }
        for &(var, at) in &vars {
            self.pending.push(Pending { var, at, loops: self.loops.saturating_sub(1) });
        }
        if what == Exit::Continue {
            let at_latch: Vec<(VarId, Span)> = vars.iter().copied().filter(|&(v, _)| self.covers(v, code)).collect();
            if let Some(l) = self.loop_exits.last_mut() {
                l.latch.extend(at_latch);
            }
        }
        let Some(l) = self.loop_exits.last() else { return };
        // Ways out that skip only unsafe code leave nothing to compare; a loop at
        // `thread[1]` has no unit to compare over.
        let skips_safe_code = match what {
            Exit::Break => !l.only_unsafe,
            Exit::Continue => !self.unsafe_final,
            Exit::Return => false,
        };
        if l.code == Persp::THREAD || !skips_safe_code {
            return;
        }
        let u32_ty = Type::Scalar(Scalar::U32);
        match what {
            Exit::Break => {
                let (counter, flag) = match l.broke {
                    Some((counter, flag, _)) => (counter, flag),
                    None => {
                        let counter = self.new_reg(u32_ty, None);
                        let flag = self.new_reg(u32_ty, None);
                        self.loop_exits.last_mut().expect("checked above").broke = Some((counter, flag, span));
                        (counter, flag)
                    }
                };
                self.emit(out, InstKind::Copy { dst: flag, src: counter }, span);
            }
            Exit::Continue => {
                let flag = match l.continued {
                    Some((flag, _)) => flag,
                    None => {
                        let flag = self.new_reg(u32_ty, None);
                        self.loop_exits.last_mut().expect("checked above").continued = Some((flag, span));
                        flag
                    }
                };
                self.emit(out, InstKind::Const { dst: flag, value: ConstValue::Int(1) }, span);
            }
            Exit::Return => {}
        }
    }

    fn sub(&mut self, b: &tir::Block) -> Block {
        let mut out = Block::default();
        self.block(b, &mut out);
        out
    }

    /// Lowers the body of a loop at code perspective `code`; returns it with its latch's
    /// checks (before the step, for `for`), and emits into `out` what goes before the loop:
    /// the initial values of its exit flags ([`Cx::unsafe_exit_checks`]). The loop itself
    /// follows in `out`; [`Cx::loop_flags`] then checks the `break` flag after it.
    /// `header` is the loop's condition, lowered: a `break` skips its later evaluations.
    fn loop_body(
        &mut self,
        b: &tir::Block,
        header: &Block,
        code: Persp,
        span: Span,
        out: &mut Block,
    ) -> (Block, Block, LoopExits) {
        self.loops += 1;
        let only_unsafe = matches!(&b.stmts[..], [s] if matches!(s.kind, StmtKind::Unsafe { .. }))
            && header.insts.iter().all(|i| without_effects(&i.kind));
        let mut finals = Vec::new();
        final_unsafe(b, &mut finals);
        self.loop_exits.push(LoopExits { code, only_unsafe, finals, latch: Vec::new(), broke: None, continued: None });
        let body = self.sub(b);
        let mut exits = self.loop_exits.pop().expect("pushed above");
        self.loops -= 1;
        let mut seen = std::collections::HashSet::new();
        exits.latch.retain(|&(v, _)| seen.insert(v));
        let mut latch = Block::default();
        for &(v, at) in &exits.latch {
            self.assert_uniform(v, at, Checked::Variable, &mut latch);
        }
        // The flags start every iteration clear (`continue`) or the loop at zero (`break`);
        // the counter counts iterations from one, so a thread that broke holds the
        // iteration it left in and one that did not holds zero.
        let mut head = Block::default();
        if let Some((counter, flag, _)) = exits.broke {
            self.emit(out, InstKind::Const { dst: counter, value: ConstValue::Int(0) }, span);
            self.emit(out, InstKind::Const { dst: flag, value: ConstValue::Int(0) }, span);
            let one = self.konst(&mut head, Scalar::U32, ConstValue::Int(1), span);
            self.emit(&mut head, InstKind::Binary { dst: counter, op: BinOp::Add, lhs: counter, rhs: one }, span);
        }
        if let Some((flag, at)) = exits.continued {
            self.emit(&mut head, InstKind::Const { dst: flag, value: ConstValue::Int(0) }, span);
            self.emit(&mut latch, InstKind::AssertUniform { reg: flag, persp: code, what: Checked::Continue }, at);
        }
        let body = if head.insts.is_empty() {
            body
        } else {
            head.insts.extend(body.insts);
            head
        };
        (body, latch, exits)
    }

    /// After a loop: the check that the threads of its unit left it together, where a
    /// `break` out of unsafe code may have sent some of them out early.
    fn loop_flags(&mut self, exits: &LoopExits, out: &mut Block) {
        if let Some((_, flag, at)) = exits.broke {
            self.emit(out, InstKind::AssertUniform { reg: flag, persp: exits.code, what: Checked::Break }, at);
        }
    }

    fn scalar_of(&self, v: VarId) -> Scalar {
        match &self.tf.var(v).ty {
            Ty::Scalar(s) => *s,
            Ty::Array { elem, .. } | Ty::Ptr { elem, .. } => *elem,
            Ty::TensorMap(m) => m.elem,
            _ => Scalar::I32,
        }
    }

    fn stmt(&mut self, s: &tir::Stmt, out: &mut Block) {
        let span = s.span;
        match &s.kind {
            StmtKind::Decl { var, init } => {
                let v = self.tf.var(*var);
                match (&v.ty, &v.kind) {
                    (Ty::Scalar(sc), _) => {
                        let r = self.new_reg(Type::Scalar(*sc), Some(&v.name));
                        self.regs.insert(*var, r);
                        match init {
                            Some(e) => self.expr_into(e, r, out),
                            None => {
                                let zero = zero_of(*sc);
                                self.emit(out, InstKind::Const { dst: r, value: zero }, span);
                            }
                        }
                    }
                    (Ty::Array { elem, dims }, _) => {
                        let l = LocalId(self.f.locals.len() as u32);
                        self.f.locals.push(LocalInfo { elem: *elem, len: dims.iter().product(), name: v.name.clone() });
                        self.locals.insert(*var, l);
                        self.emit(out, InstKind::LocalDecl { local: l }, span);
                    }
                    (Ty::Ptr { elem, .. }, VarKind::Shared { offset, bytes, .. }) => {
                        let (elem, offset, bytes) = (*elem, *offset, *bytes);
                        self.new_mem(*var, MemKind::Shared, None, elem);
                        let r = self.new_reg(Type::Ptr, Some(&self.tf.var(*var).name.clone()));
                        self.ptrs.insert(*var, r);
                        self.emit(out, InstKind::SharedAddr { dst: r, offset, len: bytes, elem }, span);
                    }
                    _ => {}
                }
            }
            StmtKind::Assign { place, op, value } => match place {
                tir::Place::Var(v) => {
                    let r = self.regs[v];
                    match op {
                        None => self.expr_into(value, r, out),
                        Some(op) => {
                            let rhs = self.expr(value, out);
                            self.emit(out, InstKind::Binary { dst: r, op: *op, lhs: r, rhs }, span);
                        }
                    }
                }
                tir::Place::Elem { array, index } => {
                    let l = self.locals[array];
                    let idx = self.local_index(*array, index, out);
                    let val = self.expr(value, out);
                    let val = match op {
                        None => val,
                        Some(op) => {
                            let elem = self.f.locals[l.index()].elem;
                            let old = self.new_reg(Type::Scalar(elem), None);
                            self.emit(out, InstKind::LocalLoad { dst: old, local: l, index: idx }, span);
                            let new = self.new_reg(Type::Scalar(elem), None);
                            self.emit(out, InstKind::Binary { dst: new, op: *op, lhs: old, rhs: val }, span);
                            new
                        }
                    };
                    self.emit(out, InstKind::LocalStore { local: l, index: idx, value: val }, span);
                }
            },
            StmtKind::Store { mem, index, op, value } => {
                let (ptr, idx, user) = self.resolve(*mem, Index::Multi(index), out);
                let m = self.mems[mem];
                let val = self.expr(value, out);
                let val = match op {
                    None => val,
                    Some(op) => {
                        let elem = self.scalar_of(*mem);
                        let old = self.new_reg(Type::Scalar(elem), None);
                        let a = self.access_at(m, AccessKind::Read, span, user);
                        self.emit(out, InstKind::Load { dst: old, ptr, index: idx, access: a }, span);
                        let new = self.new_reg(Type::Scalar(elem), None);
                        self.emit(out, InstKind::Binary { dst: new, op: *op, lhs: old, rhs: val }, span);
                        new
                    }
                };
                let a = self.access_at(m, AccessKind::Write, span, user);
                self.emit(out, InstKind::Store { ptr, index: idx, value: val, access: a }, span);
            }
            StmtKind::Expr(e) => {
                self.expr_effect(e, out);
            }
            StmtKind::If { cond, then, otherwise } => {
                let c = self.expr(cond, out);
                let then = self.sub(then);
                let otherwise = self.sub(otherwise);
                let uniform = self.unsafe_depth == 0;
                self.emit(out, InstKind::If { cond: c, then, otherwise, uniform }, span);
            }
            StmtKind::For { var, start, end, step, unroll, body } => {
                let ty = self.scalar_of(*var);
                let name = self.tf.var(*var).name.clone();
                let iv = self.new_reg(Type::Scalar(ty), Some(&name));
                self.regs.insert(*var, iv);
                self.expr_into(start, iv, out);
                // The bound and the step are read once, before the loop, as Python's
                // `range` reads them (docs/language.md §6).
                let e = self.expr(end, out);
                let e = self.read_once(end, e, &[body], out);
                let st = self.expr(step, out);
                let st = self.read_once(step, st, &[body], out);
                let mut header = Block::default();
                let cond = self.new_reg(Type::Scalar(Scalar::Bool), None);
                match step.kind {
                    ExprKind::Const(ConstValue::Int(k)) => {
                        let op = if k > 0 { BinOp::Lt } else { BinOp::Gt };
                        self.emit(&mut header, InstKind::Binary { dst: cond, op, lhs: iv, rhs: e }, span);
                    }
                    _ => {
                        let zero = self.konst(&mut header, ty, ConstValue::Int(0), span);
                        let up = self.new_reg(Type::Scalar(Scalar::Bool), None);
                        self.emit(&mut header, InstKind::Binary { dst: up, op: BinOp::Gt, lhs: st, rhs: zero }, span);
                        let lt = self.new_reg(Type::Scalar(Scalar::Bool), None);
                        self.emit(&mut header, InstKind::Binary { dst: lt, op: BinOp::Lt, lhs: iv, rhs: e }, span);
                        let gt = self.new_reg(Type::Scalar(Scalar::Bool), None);
                        self.emit(&mut header, InstKind::Binary { dst: gt, op: BinOp::Gt, lhs: iv, rhs: e }, span);
                        self.emit(&mut header, InstKind::Select { dst: cond, cond: up, then: lt, otherwise: gt }, span);
                    }
                }
                let (body, mut latch, exits) = self.loop_body(body, &header, s.code, span, out);
                // The step's span is the loop's header (`for v in range(...)`), which a
                // `counter-overflow` report points at.
                let head = span.shrink_to_start().to(end.span).to(step.span);
                self.emit(&mut latch, InstKind::Binary { dst: iv, op: BinOp::Add, lhs: iv, rhs: st }, head);
                self.emit(out, InstKind::Loop { header, cond, body, latch, counter: Some(iv), unroll: *unroll }, span);
                self.loop_flags(&exits, out);
            }
            StmtKind::While { cond, body } => {
                let mut header = Block::default();
                let c = self.expr(cond, &mut header);
                let (body, latch, exits) = self.loop_body(body, &header, s.code, span, out);
                self.emit(
                    out,
                    InstKind::Loop { header, cond: c, body, latch, counter: None, unroll: Unroll::Auto },
                    span,
                );
                self.loop_flags(&exits, out);
            }
            StmtKind::Break => {
                self.unsafe_exit_checks(Exit::Break, s.code, span, out);
                self.emit(out, InstKind::Break, span)
            }
            StmtKind::Continue => {
                self.unsafe_exit_checks(Exit::Continue, s.code, span, out);
                self.emit(out, InstKind::Continue, span)
            }
            StmtKind::Return(v) => {
                let value = v.as_ref().map(|e| self.expr(e, out));
                self.unsafe_exit_checks(Exit::Return, s.code, span, out);
                // A value returned from inside unsafe code leaves the checker's guarantee
                // there: check it is as uniform as the signature promises, among the threads
                // that take this `return` (an early report; the callers' checks after the
                // call compare the whole unit, which may return from several places).
                if let (true, Some(r), Some((_, persp))) = (self.unsafe_depth > 0, value, self.tf.ret)
                    && persp != Persp::THREAD
                {
                    self.emit(out, InstKind::AssertUniform { reg: r, persp, what: Checked::Returned }, span);
                }
                self.emit(out, InstKind::Return { value }, span);
            }
            StmtKind::Group { persp, body } => {
                let body = self.sub(body);
                self.emit(out, InstKind::Group { persp: *persp, body }, span);
            }
            StmtKind::Split { unit, cases } => {
                let cases = cases
                    .iter()
                    .map(|c| Case { offset: c.offset, count: c.count, persp: c.persp, body: self.sub(&c.body) })
                    .collect();
                self.emit(out, InstKind::Split { unit: *unit, cases }, span);
            }
            StmtKind::Partition { src, view, body } => self.scope(ScopeKind::Partition, *src, *view, body, span, out),
            StmtKind::Claim { src, view, body } => self.scope(ScopeKind::Claim, *src, *view, body, span, out),
            StmtKind::Async { src, view, body } => self.scope(ScopeKind::Async, *src, *view, body, span, out),
            StmtKind::Pipeline { var, count, stages, rings, fill, body, bars: None } => {
                self.pipeline(*var, count, *stages, rings, fill, body, span, out)
            }
            StmtKind::Pipeline { var, count, stages, rings, body, bars: Some(bars), .. } => {
                self.specialised(*var, count, *stages, rings, body, *bars, span, out)
            }
            StmtKind::Fill { ring, view, body } => self.slot(Slot::Fill, *ring, *view, body, span, out),
            StmtKind::Stage { ring, next, late, view, body } => {
                let how = match (*next, *late) {
                    (true, _) => Slot::Next,
                    (false, true) => Slot::Late,
                    (false, false) => Slot::Stage,
                };
                self.slot(how, *ring, *view, body, span, out)
            }
            StmtKind::Unsafe { cuda, body: tbody } => {
                // What the outermost unsafe block assigns (variables broader than
                // `thread[1]`): checked where it ends, on every way out.
                let outermost = self.unsafe_depth == 0;
                let mut assigned = Vec::new();
                if outermost {
                    tir::assigned_in(tbody, &mut std::collections::HashSet::new(), &mut assigned);
                    assigned.retain(|&(v, _)| self.checked(v));
                }
                let saved = outermost.then(|| std::mem::replace(&mut self.unsafe_exit, (self.loops, assigned.clone())));
                let last = self.loop_exits.last().is_some_and(|l| l.finals.iter().any(|&f| std::ptr::eq(f, s)));
                let saved_final = outermost.then(|| std::mem::replace(&mut self.unsafe_final, last));
                self.unsafe_depth += 1;
                let body = self.sub(tbody);
                self.unsafe_depth -= 1;
                if let Some(saved) = saved {
                    self.unsafe_exit = saved;
                }
                if let Some(saved) = saved_final {
                    self.unsafe_final = saved;
                }
                match cuda {
                    Some(text) => self.emit(out, InstKind::Verbatim { text: text.clone(), sim: Some(body) }, span),
                    None => self.emit(out, InstKind::Unsafe { body }, span),
                }
                // Where the trust ends, the simulator checks that variables this unsafe code
                // assigned are as uniform as their perspectives say: right after it when its
                // code runs whole units of the variable's perspective, otherwise after the
                // narrower construct around it (a thread-level `group`, a split case), where
                // the whole unit meets again (`flush`, after each statement).
                for (var, at) in assigned {
                    self.pending.push(Pending { var, at, loops: self.loops });
                }
            }
            StmtKind::UnsafeText(text) => self.emit(out, InstKind::Verbatim { text: text.clone(), sim: None }, span),
        }
    }

    /// The memory name of a variable that may be a view, a root or a local array.
    /// The register of a handle: a view of a tensor map (a claim or identity partition) is
    /// the map itself.
    fn map_reg(&self, mut v: VarId) -> Reg {
        while let VarKind::View { parent, .. } = self.tf.var(v).kind {
            v = parent;
        }
        self.regs[&v]
    }

    fn mem_of_any(&mut self, v: VarId) -> MemId {
        match self.mems.get(&v) {
            Some(&m) => m,
            None => {
                let elem = self.scalar_of(v);
                self.new_mem(v, MemKind::Local, None, elem)
            }
        }
    }

    fn scope(&mut self, kind: ScopeKind, src: VarId, view: VarId, body: &tir::Block, span: Span, out: &mut Block) {
        let mem = self.mem_of(src, out);
        let kind_m = match kind {
            ScopeKind::Partition => MemKind::Partition,
            ScopeKind::Claim => MemKind::Claim,
            ScopeKind::Async => MemKind::Async,
            ScopeKind::Pipeline => MemKind::Pipeline,
            ScopeKind::Stage | ScopeKind::LateStage => MemKind::Stage,
        };
        let elem = self.scalar_of(view);
        let vm = self.new_mem(view, kind_m, Some(mem), elem);
        let mut body = self.sub(body);
        if kind == ScopeKind::Async {
            // The copies are complete before the memory is used again (language.md §5): the
            // scope's `cp_async` copies are one group, waited for here; `crate::asyncwait`
            // then moves the wait down to where the memory is next needed.
            let mut copies = false;
            body.walk(&mut |k| copies |= matches!(k, InstKind::Intrinsic { intrinsic, .. } if intrinsic.is_cp_async()));
            if copies {
                body.insts.push(Inst { kind: InstKind::AsyncCommit, span });
            }
            body.insts.push(Inst { kind: InstKind::AsyncWait { pending: 0, views: vec![vm] }, span });
        }
        self.emit(out, InstKind::Scope { kind, mem, view: vm, body }, span);
    }

    /// A pipeline loop (docs/language.md, "Pipelines"). Iteration `i` of `0 .. n + S - 1`
    /// runs, for the tile `j = i - (S - 1)` it uses:
    ///
    /// ```text
    /// if i >= S - 1: cp.async.wait_group S-2; __syncthreads()   # tile j landed, tile j-1 used
    /// if i < n: fill tile i into slot i % S                        # the slot of tile j - 1
    /// cp.async.commit_group                                        # also when empty
    /// if i >= S - 1: the body, for tile j, from slot j % S
    /// ```
    ///
    /// Every iteration commits one group, so when iteration `i` waits, `i` groups are
    /// committed and tile `j`'s is followed by `S - 2`: `wait_group S-2` completes it, and
    /// the barrier publishes every thread's copies of it. The same barrier orders the body
    /// of tile `j - 1` (the last reads of its slot) before the fill of tile `i`, which
    /// reuses that slot. The proof is in docs/soundness.md §4.3.1.
    ///
    /// A body whose statements include a `stage(ring, next=True)` turns there: the wait and
    /// barrier move from the top of each iteration to just before that statement (the
    /// first tile's stay at the top, in iteration `S - 1` only), where they complete and
    /// publish tile `j + 1` and end the reads of tile `j`'s slots; the statements from the
    /// turn on read the next tile's slot, `min(j + 1, n - 1) % S`, so the body loads the
    /// next tile's first operands while it computes its last (§4.3.1, "Bodies that turn").
    #[allow(clippy::too_many_arguments)]
    fn pipeline(
        &mut self,
        var: VarId,
        count: &tir::Expr,
        stages: u64,
        rings: &[VarId],
        fill: &tir::Block,
        body: &tir::Block,
        span: Span,
        out: &mut Block,
    ) {
        let i32_ = Scalar::I32;
        // The count before the rings' scopes: inference sees a pipeline as one node that
        // writes its rings and does not look inside, so a count that reads a ring must be
        // read outside it, where inference orders the read before the fills (a thread's
        // first copy could otherwise land under another's read of the count, which might
        // then differ between threads; `count_reads_ring` in
        // tests/ui/accept/rules/pipeline_ring.prism).
        let n = self.pipeline_count(count, &[fill, body], span, out);
        let scopes = self.open_rings(rings, out);
        let mut inner = Block::default();
        let name = self.tf.var(var).name.clone();
        let i = self.new_reg(Type::Scalar(i32_), Some(&format!("{name}_issue")));
        self.emit(&mut inner, InstKind::Const { dst: i, value: ConstValue::Int(0) }, span);
        let ahead = self.konst(&mut inner, i32_, ConstValue::Int(stages as i128 - 1), span);
        let total = self.new_reg(Type::Scalar(i32_), None);
        self.emit(&mut inner, InstKind::Binary { dst: total, op: BinOp::Add, lhs: n, rhs: ahead }, span);
        let mut header = Block::default();
        let cond = self.new_reg(Type::Scalar(Scalar::Bool), None);
        self.emit(&mut header, InstKind::Binary { dst: cond, op: BinOp::Lt, lhs: i, rhs: total }, span);

        let mut lb = Block::default();
        let ge = self.new_reg(Type::Scalar(Scalar::Bool), None);
        self.emit(&mut lb, InstKind::Binary { dst: ge, op: BinOp::Ge, lhs: i, rhs: ahead }, span);
        let j = self.new_reg(Type::Scalar(i32_), Some(&name));
        let lt = self.new_reg(Type::Scalar(Scalar::Bool), None);
        self.emit(&mut lb, InstKind::Binary { dst: lt, op: BinOp::Lt, lhs: i, rhs: n }, span);
        // The fill, for tile `i`.
        self.regs.insert(var, i);
        for &r in rings {
            self.tile_of.insert(r, i);
        }
        let outer_fills = std::mem::take(&mut self.fill_views);
        let fill_b = self.sub(fill);
        let views = std::mem::replace(&mut self.fill_views, outer_fills);
        // The statement the body turns at, if any (the checker puts every current-tile
        // stage before it and every next-tile one from it on).
        let turn = body
            .stmts
            .iter()
            .position(|s| matches!(&s.kind, StmtKind::Stage { ring, next: true, .. } if rings.contains(ring)));
        let mut wait = Block::default();
        self.emit(&mut wait, InstKind::AsyncWait { pending: stages as u32 - 2, views: views.clone() }, span);
        self.emit(&mut wait, InstKind::Barrier { scope: Persp::BLOCK, origin: BarrierOrigin::Explicit }, span);
        let top = if turn.is_some() {
            // Only the first tile is waited for at the top; the others, at the turn of
            // the iteration before.
            let first = self.new_reg(Type::Scalar(Scalar::Bool), None);
            self.emit(&mut lb, InstKind::Binary { dst: first, op: BinOp::Eq, lhs: i, rhs: ahead }, span);
            first
        } else {
            ge
        };
        self.emit(&mut lb, InstKind::If { cond: top, then: wait, otherwise: Block::default(), uniform: true }, span);
        self.emit(&mut lb, InstKind::If { cond: lt, then: fill_b, otherwise: Block::default(), uniform: true }, span);
        self.emit(&mut lb, InstKind::AsyncCommit, span);
        // The body, for tile `j`.
        self.regs.insert(var, j);
        for &r in rings {
            self.tile_of.insert(r, j);
        }
        // The body's tile is computed where the body runs, after the test `i >= ahead`,
        // so the CUDA backend's ranges see that it is not negative (its slot `j % stages`
        // is then a mask, as in an expert's loop).
        let mut use_b = Block::default();
        self.emit(&mut use_b, InstKind::Binary { dst: j, op: BinOp::Sub, lhs: i, rhs: ahead }, span);
        match turn {
            None => self.block(body, &mut use_b),
            Some(at) => {
                for s in &body.stmts[..at] {
                    self.stmt(s, &mut use_b);
                }
                // Tile `j + 1` landed (the groups after its own are the `S - 2` newest)
                // and every thread is done with tile `j`'s slots.
                let turn_span = body.stmts[at].span;
                self.emit(&mut use_b, InstKind::AsyncWait { pending: stages as u32 - 2, views }, turn_span);
                self.emit(
                    &mut use_b,
                    InstKind::Barrier { scope: Persp::BLOCK, origin: BarrierOrigin::Explicit },
                    turn_span,
                );
                // The next tile, or on the last tile the last one again (its slot is
                // complete and no fill follows), so the reads need no branch.
                let one = self.konst(&mut use_b, i32_, ConstValue::Int(1), span);
                let after = self.new_reg(Type::Scalar(i32_), None);
                self.emit(&mut use_b, InstKind::Binary { dst: after, op: BinOp::Add, lhs: j, rhs: one }, span);
                let more = self.new_reg(Type::Scalar(Scalar::Bool), None);
                self.emit(&mut use_b, InstKind::Binary { dst: more, op: BinOp::Lt, lhs: after, rhs: n }, span);
                let next = self.new_reg(Type::Scalar(i32_), Some(&format!("{name}_next")));
                self.emit(&mut use_b, InstKind::Select { dst: next, cond: more, then: after, otherwise: j }, span);
                for &r in rings {
                    self.next_of.insert(r, next);
                }
                for s in &body.stmts[at..] {
                    self.stmt(s, &mut use_b);
                }
            }
        }
        self.emit(&mut lb, InstKind::If { cond: ge, then: use_b, otherwise: Block::default(), uniform: true }, span);
        let mut latch = Block::default();
        let one = self.konst(&mut latch, i32_, ConstValue::Int(1), span);
        let head = span.shrink_to_start().to(count.span);
        self.emit(&mut latch, InstKind::Binary { dst: i, op: BinOp::Add, lhs: i, rhs: one }, head);
        self.emit(
            &mut inner,
            InstKind::Loop { header, cond, body: lb, latch, counter: Some(i), unroll: Unroll::Auto },
            span,
        );
        self.close_rings(&scopes, inner, span, out);
    }

    /// A warp-specialised pipeline (docs/language.md, "Pipelines"; the argument is
    /// docs/soundness.md §4.3.2). Slot `s` has a full mbarrier `bars[2s]`, which the
    /// producer's threads arrive at once they have issued a tile's copies (each announcing
    /// its box's bytes, which the copy completes there), and an empty one `bars[2s + 1]`,
    /// which every consumer thread arrives at once it is done with a tile. Each case of the
    /// split becomes a loop over the tiles: the producer waits until the slot of tile `t` is
    /// empty (the phase of tile `t - S`; a fresh barrier's phase of parity 1 counts as
    /// complete, so the first `S` tiles do not wait), fills it and arrives at full; a
    /// consumer waits until it is full (parity `(t / S) & 1`), runs its body and arrives at
    /// empty. One thread initialises the barriers between two block barriers and
    /// invalidates them after a third, when every thread is done with them.
    #[allow(clippy::too_many_arguments)]
    fn specialised(
        &mut self,
        var: VarId,
        count: &tir::Expr,
        stages: u64,
        rings: &[VarId],
        body: &tir::Block,
        bars: VarId,
        span: Span,
        out: &mut Block,
    ) {
        let i32_ = Scalar::I32;
        let [tir::Stmt { kind: StmtKind::Split { unit, cases }, .. }] = body.stmts.as_slice() else {
            unreachable!("the checker makes a warp-specialised pipeline's body one split")
        };
        // A case's leading register reallocations run once, before its loop.
        let prologue = |c: &tir::SplitCase| c.body.stmts.iter().take_while(|s| is_realloc(s)).count();
        let is_fill =
            |c: &tir::SplitCase| matches!(c.body.stmts.get(prologue(c)).map(|s| &s.kind), Some(StmtKind::Fill { .. }));
        let producer_threads: u64 = cases.iter().filter(|c| is_fill(c)).map(|c| c.persp.n).sum();
        let consumer_threads: u64 = cases.iter().filter(|c| !is_fill(c)).map(|c| c.persp.n).sum();
        // The count before the rings' scopes, as for a plain pipeline.
        let n = self.pipeline_count(count, &[body], span, out);
        let scopes = self.open_rings(rings, out);
        let (bar_ptr, bar_mem) = (self.ptrs[&bars], self.mems[&bars]);
        let mut inner = Block::default();
        // One thread initialises every barrier while no thread uses them.
        let mut init = Block::default();
        for k in 0..2 * stages {
            let threads = if k % 2 == 0 { producer_threads } else { consumer_threads };
            let idx = self.konst(&mut init, i32_, ConstValue::Int(k as i128), span);
            let c = self.konst(&mut init, i32_, ConstValue::Int(threads as i128), span);
            self.mbar(&mut init, "mbarrier_init", (bar_ptr, idx, bar_mem), Some(c), span);
        }
        // The barriers are safe code, which inference counts like a written barrier: every
        // thread of the block passes them (the loop is in `block[1]` code), so they also
        // order the block's accesses before the loop against the cases' inside it.
        let mut guarded = Block::default();
        self.emit(&mut guarded, one_thread(init), span);
        self.emit(&mut inner, InstKind::Barrier { scope: Persp::BLOCK, origin: BarrierOrigin::Explicit }, span);
        self.emit(&mut inner, InstKind::Unsafe { body: guarded }, span);
        self.emit(&mut inner, InstKind::Barrier { scope: Persp::BLOCK, origin: BarrierOrigin::Explicit }, span);

        let mut new_cases = Vec::new();
        for c in cases {
            let producer = is_fill(c);
            let name = self.tf.var(var).name.clone();
            let t = self.new_reg(Type::Scalar(i32_), Some(&name));
            let mut case = Block::default();
            let lead = prologue(c);
            let pre = self.sub(&tir::Block { stmts: c.body.stmts[..lead].to_vec() });
            case.insts.extend(pre.insts);
            self.emit(&mut case, InstKind::Const { dst: t, value: ConstValue::Int(0) }, span);
            let mut header = Block::default();
            let cond = self.new_reg(Type::Scalar(Scalar::Bool), None);
            self.emit(&mut header, InstKind::Binary { dst: cond, op: BinOp::Lt, lhs: t, rhs: n }, span);
            let mut lb = Block::default();
            let s_reg = self.konst(&mut lb, i32_, ConstValue::Int(stages as i128), span);
            let slot = self.new_reg(Type::Scalar(i32_), None);
            self.emit(&mut lb, InstKind::Binary { dst: slot, op: BinOp::Rem, lhs: t, rhs: s_reg }, span);
            let round = self.new_reg(Type::Scalar(i32_), None);
            self.emit(&mut lb, InstKind::Binary { dst: round, op: BinOp::Div, lhs: t, rhs: s_reg }, span);
            let one = self.konst(&mut lb, i32_, ConstValue::Int(1), span);
            let par = self.new_reg(Type::Scalar(i32_), None);
            self.emit(&mut lb, InstKind::Binary { dst: par, op: BinOp::BitAnd, lhs: round, rhs: one }, span);
            let two = self.konst(&mut lb, i32_, ConstValue::Int(2), span);
            let full = self.new_reg(Type::Scalar(i32_), None);
            self.emit(&mut lb, InstKind::Binary { dst: full, op: BinOp::Mul, lhs: slot, rhs: two }, span);
            let empty = self.new_reg(Type::Scalar(i32_), None);
            self.emit(&mut lb, InstKind::Binary { dst: empty, op: BinOp::Add, lhs: full, rhs: one }, span);
            // The producer waits for the phase before the consumers' last use of the slot.
            let (wait_on, arrive_at) = if producer { (empty, full) } else { (full, empty) };
            let parity = if producer {
                let p = self.new_reg(Type::Scalar(i32_), None);
                self.emit(&mut lb, InstKind::Binary { dst: p, op: BinOp::BitXor, lhs: par, rhs: one }, span);
                p
            } else {
                par
            };
            let parity = self.as_ty(parity, Scalar::U32, span, &mut lb);
            let mut w = Block::default();
            self.mbar(&mut w, "mbarrier_wait_parity", (bar_ptr, wait_on, bar_mem), Some(parity), span);
            self.emit(&mut lb, InstKind::Unsafe { body: w }, span);
            self.regs.insert(var, t);
            for &r in rings {
                self.tile_of.insert(r, t);
            }
            let outer = self.fill_bar.replace((bar_ptr, full, bar_mem));
            if !producer {
                self.fill_bar = outer;
            }
            let outer_views = std::mem::take(&mut self.fill_views);
            let b = self.sub(&tir::Block { stmts: c.body.stmts[lead..].to_vec() });
            self.fill_views = outer_views;
            if producer {
                self.fill_bar = outer;
            }
            lb.insts.extend(b.insts);
            let late = !producer && has_late_stage(&c.body);
            if late {
                // A late case releases the previous tile's slot (from the second tile on):
                // this tile's wgmmas may still read its own.
                self.release_before(&mut lb, t, stages, (bar_ptr, bar_mem), span);
            } else {
                let mut a = Block::default();
                self.mbar(&mut a, "mbarrier_arrive", (bar_ptr, arrive_at, bar_mem), None, span);
                self.emit(&mut lb, InstKind::Unsafe { body: a }, span);
            }
            let mut latch = Block::default();
            let one = self.konst(&mut latch, i32_, ConstValue::Int(1), span);
            self.emit(&mut latch, InstKind::Binary { dst: t, op: BinOp::Add, lhs: t, rhs: one }, span);
            self.emit(
                &mut case,
                InstKind::Loop { header, cond, body: lb, latch, counter: Some(t), unroll: Unroll::Auto },
                span,
            );
            if late {
                self.late_tail(&mut case, c.persp, n, stages, (bar_ptr, bar_mem), span);
            }
            new_cases.push(Case { offset: c.offset, count: c.count, persp: c.persp, body: case });
        }
        self.emit(&mut inner, InstKind::Split { unit: *unit, cases: new_cases }, span);
        // Every thread is done with the barriers before they are invalidated.
        let mut fini = Block::default();
        for k in 0..2 * stages {
            let idx = self.konst(&mut fini, i32_, ConstValue::Int(k as i128), span);
            self.mbar(&mut fini, "mbarrier_inval", (bar_ptr, idx, bar_mem), None, span);
        }
        let mut guarded = Block::default();
        self.emit(&mut guarded, one_thread(fini), span);
        self.emit(&mut inner, InstKind::Barrier { scope: Persp::BLOCK, origin: BarrierOrigin::Explicit }, span);
        self.emit(&mut inner, InstKind::Unsafe { body: guarded }, span);
        // And after it: the barriers' bytes belong to the pipeline's enclosing scope, so a
        // later scope (or a caller, after a call) may reuse them, which PTX allows only
        // after `mbarrier.inval`; one thread invalidates, so every other thread waits for
        // it here. Inference does not see the invalidation (mbarrier operations are
        // volatile accesses), and the simulator reports the race without this barrier
        // (`mbarrier_reuse` in tests/ui/accept/rules/pipeline_specialised.prism).
        self.emit(&mut inner, InstKind::Barrier { scope: Persp::BLOCK, origin: BarrierOrigin::Explicit }, span);
        self.close_rings(&scopes, inner, span, out);
    }

    /// The index of the empty mbarrier of tile `t`'s slot: `2 (t % S) + 1`.
    fn empty_of(&mut self, t: Reg, stages: u64, out: &mut Block, span: Span) -> Reg {
        let i32_ = Scalar::I32;
        let s_reg = self.konst(out, i32_, ConstValue::Int(stages as i128), span);
        let slot = self.new_reg(Type::Scalar(i32_), None);
        self.emit(out, InstKind::Binary { dst: slot, op: BinOp::Rem, lhs: t, rhs: s_reg }, span);
        let two = self.konst(out, i32_, ConstValue::Int(2), span);
        let full = self.new_reg(Type::Scalar(i32_), None);
        self.emit(out, InstKind::Binary { dst: full, op: BinOp::Mul, lhs: slot, rhs: two }, span);
        let one = self.konst(out, i32_, ConstValue::Int(1), span);
        let empty = self.new_reg(Type::Scalar(i32_), None);
        self.emit(out, InstKind::Binary { dst: empty, op: BinOp::Add, lhs: full, rhs: one }, span);
        empty
    }

    /// After a late consumer case's loop: `wgmma_wait(0)` completes the last tile's wgmmas
    /// (each warpgroup of the case waits for its own), and the case releases the last
    /// tile's slot, so every tile is released once, as in a case that is not late.
    fn late_tail(&mut self, case: &mut Block, persp: Persp, n: Reg, stages: u64, bar: (Reg, MemId), span: Span) {
        let i32_ = Scalar::I32;
        let id = prism_types::intrinsics::lookup("wgmma_wait").expect("the wgmma_wait intrinsic");
        let mut wait = Block::default();
        let zero = self.konst(&mut wait, i32_, ConstValue::Int(0), span);
        self.emit(
            &mut wait,
            InstKind::Intrinsic { dsts: vec![], intrinsic: id, args: vec![IntrArg::Val(zero)], accesses: vec![] },
            span,
        );
        if persp == Persp::WARPGROUP {
            case.insts.extend(wait.insts);
        } else {
            self.emit(case, InstKind::Group { persp: Persp::WARPGROUP, body: wait }, span);
        }
        self.release_before(case, n, stages, bar, span);
    }

    /// `if x > 0: arrive at the empty mbarrier of tile x - 1`: a late case's release of the
    /// previous tile (`x` the current one) or, after its loop, of the last (`x` the count).
    fn release_before(&mut self, out: &mut Block, x: Reg, stages: u64, bar: (Reg, MemId), span: Span) {
        let i32_ = Scalar::I32;
        let pos = self.new_reg(Type::Scalar(Scalar::Bool), None);
        let zero = self.konst(out, i32_, ConstValue::Int(0), span);
        self.emit(out, InstKind::Binary { dst: pos, op: BinOp::Gt, lhs: x, rhs: zero }, span);
        let one = self.konst(out, i32_, ConstValue::Int(1), span);
        let mut then = Block::default();
        let prev = self.new_reg(Type::Scalar(i32_), None);
        self.emit(&mut then, InstKind::Binary { dst: prev, op: BinOp::Sub, lhs: x, rhs: one }, span);
        let at = self.empty_of(prev, stages, &mut then, span);
        let mut a = Block::default();
        self.mbar(&mut a, "mbarrier_arrive", (bar.0, at, bar.1), None, span);
        self.emit(&mut then, InstKind::Unsafe { body: a }, span);
        self.emit(out, InstKind::If { cond: pos, then, otherwise: Block::default(), uniform: true }, span);
    }

    /// A pipeline's memory name for each ring: (ring, its memory, the pipeline's view).
    fn open_rings(&mut self, rings: &[VarId], out: &mut Block) -> Vec<(VarId, MemId, MemId)> {
        let mut scopes = Vec::new();
        for &r in rings {
            let m = self.mem_of(r, out);
            let elem = self.scalar_of(r);
            let rv = self.new_mem(r, MemKind::Pipeline, Some(m), elem);
            scopes.push((r, m, rv));
        }
        scopes
    }

    /// Wraps a pipeline's code in one `Pipeline` scope per ring (the node inference sees),
    /// and gives the rings back their own memory names.
    fn close_rings(&mut self, scopes: &[(VarId, MemId, MemId)], mut inner: Block, span: Span, out: &mut Block) {
        for &(r, m, rv) in scopes.iter().rev() {
            let body = std::mem::take(&mut inner);
            self.emit(&mut inner, InstKind::Scope { kind: ScopeKind::Pipeline, mem: m, view: rv, body }, span);
            self.mems.insert(r, m);
            self.tile_of.remove(&r);
            self.next_of.remove(&r);
        }
        out.insts.extend(inner.insts);
    }

    /// An mbarrier intrinsic on `bar` (pointer, element index, memory) with an optional
    /// operand; an arrival's token is dropped.
    fn mbar(&mut self, out: &mut Block, name: &str, bar: (Reg, Reg, MemId), arg: Option<Reg>, span: Span) {
        let id = prism_types::intrinsics::lookup(name).expect("an mbarrier intrinsic");
        let (ptr, index, mem) = bar;
        let mut args = vec![IntrArg::Elem { ptr, index }];
        args.extend(arg.map(IntrArg::Val));
        let access = self.access(mem, AccessKind::Volatile, span);
        let dsts = if name == "mbarrier_arrive" { vec![self.new_reg(Type::Scalar(Scalar::U64), None)] } else { vec![] };
        self.emit(out, InstKind::Intrinsic { dsts, intrinsic: id, args, accesses: vec![access] }, span);
    }

    /// A pipeline's `fill` (an `async` scope over the slot, whose copies the pipeline waits
    /// for) or `stage` (a read-only view of the slot).
    fn slot(&mut self, how: Slot, ring: VarId, view: VarId, body: &tir::Block, span: Span, out: &mut Block) {
        let fill = how == Slot::Fill;
        let rv = self.mems[&ring];
        let elem = self.scalar_of(view);
        let vm = self.new_mem(view, if fill { MemKind::Async } else { MemKind::Stage }, Some(rv), elem);
        let (stages, slot_elems) = match (&self.tf.var(view).kind, &self.tf.var(ring).kind) {
            (VarKind::View { how: ViewKind::Slot { stages, .. }, .. }, VarKind::Shared { dims, .. }) => {
                (*stages, dims[1..].iter().product::<u64>())
            }
            _ => unreachable!("the checker makes slot views of shared rings"),
        };
        let t = if how == Slot::Next { self.next_of[&ring] } else { self.tile_of[&ring] };
        let s = self.konst(out, Scalar::I32, ConstValue::Int(stages as i128), span);
        let slot = self.new_reg(Type::Scalar(Scalar::I32), None);
        self.emit(out, InstKind::Binary { dst: slot, op: BinOp::Rem, lhs: t, rhs: s }, span);
        let w = self.konst(out, Scalar::I32, ConstValue::Int(slot_elems as i128), span);
        let base = self.new_reg(Type::Scalar(Scalar::I32), None);
        self.emit(out, InstKind::Binary { dst: base, op: BinOp::Mul, lhs: slot, rhs: w }, span);
        let ring_ptr = self.pointer_of(ring, out);
        let ptr = self.new_reg(Type::Ptr, Some(&self.tf.var(view).name.clone()));
        let bound = Some((slot_elems, elem));
        self.emit(out, InstKind::PtrOffset { dst: ptr, base: ring_ptr, offset: base, bound }, span);
        self.slot_ptr.insert(view, ptr);
        let body = self.sub(body);
        if fill {
            self.fill_views.push(vm);
        }
        let kind = match how {
            Slot::Fill => ScopeKind::Async,
            Slot::Late => ScopeKind::LateStage,
            Slot::Stage | Slot::Next => ScopeKind::Stage,
        };
        self.emit(out, InstKind::Scope { kind, mem: rv, view: vm, body }, span);
    }

    /// The memory name of a variable, creating one for a local array passed by pointer.
    fn mem_of(&mut self, v: VarId, _out: &mut Block) -> MemId {
        if let Some(&m) = self.mems.get(&v) {
            return m;
        }
        let elem = self.scalar_of(v);
        self.new_mem(v, MemKind::Local, None, elem)
    }

    /// The flattened element index of a local array access.
    fn local_index(&mut self, array: VarId, index: &[tir::Expr], out: &mut Block) -> Reg {
        let dims = match &self.tf.var(array).ty {
            Ty::Array { dims, .. } => dims.clone(),
            _ => vec![1],
        };
        let regs: Vec<Reg> = index.iter().map(|e| self.expr(e, out)).collect();
        self.linearize(&regs, &dims, index.first().map(|e| e.span).unwrap_or_default(), out)
    }

    /// Row-major linear index of `regs` in an array of `dims`.
    fn linearize(&mut self, regs: &[Reg], dims: &[u64], span: Span, out: &mut Block) -> Reg {
        let mut acc = regs[0];
        for (i, &r) in regs.iter().enumerate().skip(1) {
            let ty = self.f.reg_ty(acc);
            let Type::Scalar(s) = ty else { unreachable!("indices are integers") };
            let d = self.konst(out, s, ConstValue::Int(dims[i] as i128), span);
            let m = self.new_reg(ty, None);
            self.emit(out, InstKind::Binary { dst: m, op: BinOp::Mul, lhs: acc, rhs: d }, span);
            let r = self.as_ty(r, s, span, out);
            let a = self.new_reg(ty, None);
            self.emit(out, InstKind::Binary { dst: a, op: BinOp::Add, lhs: m, rhs: r }, span);
            acc = a;
        }
        acc
    }

    /// A pipeline's count, as an `int` read once before the loop (docs/language.md,
    /// "Pipelines"): the loop's length and its every test of whether an iteration still
    /// fills a tile read this register. A count that is a variable the loop's `fill` or
    /// `body` assigns is copied first: the test read the variable itself, so a body that
    /// raised it (`m += 1`) made the last iterations fill tiles that no stage waited for,
    /// whose copies then landed on memory a later scope reused (review R35). `blocks` are
    /// the loop's: its fill and body, or a warp-specialised pipeline's body.
    fn pipeline_count(&mut self, count: &tir::Expr, blocks: &[&tir::Block], span: Span, out: &mut Block) -> Reg {
        let n = self.expr(count, out);
        let n = self.as_ty(n, Scalar::I32, span, out);
        self.read_once(count, n, blocks, out)
    }

    /// Register `r`, the value of `e` before a loop over `blocks`, as a register none of
    /// `blocks` writes: `r` itself, unless `e` is a variable one of them assigns and `r` is
    /// that variable's register; then a copy of it. A loop's count, bound or step is read
    /// once, before the loop, whether it is written `m` or `m + 0` (review R36: a `range(m)`
    /// whose body assigned `m` re-read it at every test, and `range(m + 0)` did not).
    fn read_once(&mut self, e: &tir::Expr, r: Reg, blocks: &[&tir::Block], out: &mut Block) -> Reg {
        let ExprKind::Var(v) = e.kind else { return r };
        if self.regs.get(&v) != Some(&r) || !assigns(blocks, v) {
            return r;
        }
        let fixed = self.new_reg(self.f.reg_ty(r), None);
        self.emit(out, InstKind::Copy { dst: fixed, src: r }, e.span);
        fixed
    }

    fn as_ty(&mut self, r: Reg, s: Scalar, span: Span, out: &mut Block) -> Reg {
        if self.f.reg_ty(r) == Type::Scalar(s) {
            return r;
        }
        let c = self.new_reg(Type::Scalar(s), None);
        self.emit(out, InstKind::Cast { dst: c, arg: r }, span);
        c
    }

    /// Resolves an access through memory name `v` to a root pointer and element index, and,
    /// for an access through a one-dimensional partition, the index the source wrote (before
    /// the indexing function): synchronisation inference asks whether it stays inside the
    /// unit's own elements.
    fn resolve(&mut self, v: VarId, index: Index<'_>, out: &mut Block) -> (Reg, Reg, Option<Reg>) {
        let var = self.tf.var(v);
        match &var.kind {
            VarKind::View { parent, how: ViewKind::Partition(lambda) } => {
                let regs: Vec<Reg> = match index {
                    Index::Multi(es) => es.iter().map(|e| self.expr(e, out)).collect(),
                    Index::Regs(rs) => rs,
                };
                let lin = self.apply_lambda(lambda, &regs, out);
                let parent = *parent;
                let (ptr, idx, _) = self.resolve(parent, Index::Regs(vec![lin]), out);
                let user = if regs.len() == 1 { Some(regs[0]) } else { None };
                (ptr, idx, user)
            }
            VarKind::View { parent, how: ViewKind::Slot { .. } } => {
                // `view[i...]` is `ring[slot, i...]`: the slot's offset plus the index within
                // the slot, row-major over the ring's other dimensions.
                let parent = *parent;
                let dims = match &self.tf.var(parent).kind {
                    VarKind::Shared { dims, .. } => dims[1..].to_vec(),
                    _ => unreachable!("rings are shared arrays"),
                };
                let regs: Vec<Reg> = match index {
                    Index::Multi(es) => es.iter().map(|e| self.expr(e, out)).collect(),
                    Index::Regs(rs) => rs,
                };
                let span = var.span;
                let lin = if regs.len() == 1 { regs[0] } else { self.linearize(&regs, &dims, span, out) };
                let lin = self.as_ty(lin, Scalar::I32, span, out);
                (self.slot_ptr[&v], lin, None)
            }
            VarKind::View { parent, .. } => {
                // A claim or async view: the index it gets is the partition's own index only
                // when the access names the partition itself.
                let parent = *parent;
                let (ptr, idx, _) = self.resolve(parent, index, out);
                (ptr, idx, None)
            }
            _ => {
                let ptr = self.pointer_of(v, out);
                let dims = match &var.kind {
                    VarKind::Shared { dims, .. } => dims.clone(),
                    _ => match &var.ty {
                        Ty::Array { dims, .. } => dims.clone(),
                        _ => vec![u64::MAX],
                    },
                };
                let regs: Vec<Reg> = match index {
                    Index::Multi(es) => es.iter().map(|e| self.expr(e, out)).collect(),
                    Index::Regs(rs) => rs,
                };
                let span = var.span;
                let idx = if regs.len() == 1 { regs[0] } else { self.linearize(&regs, &dims, span, out) };
                (ptr, idx, None)
            }
        }
    }

    /// Evaluates a partition's indexing function on index registers.
    fn apply_lambda(&mut self, l: &tir::Lambda, args: &[Reg], out: &mut Block) -> Reg {
        let n = self.lambda_env.len();
        for (&p, &a) in l.params.iter().zip(args) {
            let a = self.as_ty(a, Scalar::I32, l.body.span, out);
            self.lambda_env.push((p, a));
        }
        let r = self.expr(&l.body, out);
        self.lambda_env.truncate(n);
        r
    }

    /// The pointer a memory name passes as an argument: its root's pointer, advanced by the
    /// offsets of the (offset) partitions in between.
    fn pointer_of(&mut self, v: VarId, out: &mut Block) -> Reg {
        let var = self.tf.var(v);
        match &var.kind {
            VarKind::View { parent, how } => {
                let parent = *parent;
                let base = self.pointer_of(parent, out);
                match how {
                    ViewKind::Partition(l) => {
                        let zero = self.konst(out, Scalar::I32, ConstValue::Int(0), l.body.span);
                        let off = self.apply_lambda(l, &[zero], out);
                        let p = self.new_reg(Type::Ptr, Some(&self.tf.var(v).name.clone()));
                        self.emit(out, InstKind::PtrOffset { dst: p, base, offset: off, bound: None }, l.body.span);
                        p
                    }
                    // The slot's own pointer, bounded to the slot (made where its scope opens).
                    ViewKind::Slot { .. } => self.slot_ptr[&v],
                    _ => base,
                }
            }
            _ => match self.ptrs.get(&v) {
                Some(&p) => p,
                None => {
                    // A thread-local array passed by pointer: take its address where it is
                    // used (a cached register might be defined only on another path).
                    self.mem_of(v, out);
                    let l = self.locals[&v];
                    let r = self.new_reg(Type::Ptr, Some(&var.name.clone()));
                    self.emit(out, InstKind::LocalAddr { dst: r, local: l }, var.span);
                    r
                }
            },
        }
    }

    fn expr_into(&mut self, e: &tir::Expr, dst: Reg, out: &mut Block) {
        let r = self.expr(e, out);
        if r != dst {
            self.emit(out, InstKind::Copy { dst, src: r }, e.span);
        }
    }

    fn expr_effect(&mut self, e: &tir::Expr, out: &mut Block) {
        self.expr_opt(e, out);
    }

    fn expr(&mut self, e: &tir::Expr, out: &mut Block) -> Reg {
        match self.expr_opt(e, out) {
            Some(r) => r,
            // Only calls without a value produce none, and they are never operands.
            None => self.konst(out, Scalar::I32, ConstValue::Int(0), e.span),
        }
    }

    fn expr_opt(&mut self, e: &tir::Expr, out: &mut Block) -> Option<Reg> {
        let span = e.span;
        let ty = ir_ty(&e.ty);
        Some(match &e.kind {
            ExprKind::Const(c) => {
                let r = self.new_reg(ty, None);
                self.emit(out, InstKind::Const { dst: r, value: *c }, span);
                r
            }
            ExprKind::Var(v) => {
                if let Some(&(_, r)) = self.lambda_env.iter().rev().find(|(p, _)| p == v) {
                    return Some(r);
                }
                self.regs[v]
            }
            ExprKind::Elem { array, index } => {
                let l = self.locals[array];
                let idx = self.local_index(*array, index, out);
                let r = self.new_reg(ty, None);
                self.emit(out, InstKind::LocalLoad { dst: r, local: l, index: idx }, span);
                r
            }
            ExprKind::Load { mem, index } => {
                let (ptr, idx, user) = self.resolve(*mem, Index::Multi(index), out);
                let m = self.mems[mem];
                let a = self.access_at(m, AccessKind::Read, span, user);
                let r = self.new_reg(ty, None);
                self.emit(out, InstKind::Load { dst: r, ptr, index: idx, access: a }, span);
                r
            }
            ExprKind::Unary(op, a) => {
                let a = self.expr(a, out);
                let r = self.new_reg(ty, None);
                self.emit(out, InstKind::Unary { dst: r, op: *op, arg: a }, span);
                r
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                let r = self.new_reg(ty, None);
                self.expr_into(a, r, out);
                let mut rhs = Block::default();
                self.expr_into(b, r, &mut rhs);
                let (then, otherwise) =
                    if *op == BinOp::And { (rhs, Block::default()) } else { (Block::default(), rhs) };
                self.emit(out, InstKind::If { cond: r, then, otherwise, uniform: false }, span);
                r
            }
            ExprKind::Binary(op, a, b) => {
                let a = self.expr(a, out);
                let b = self.expr(b, out);
                let r = self.new_reg(ty, None);
                self.emit(out, InstKind::Binary { dst: r, op: *op, lhs: a, rhs: b }, span);
                r
            }
            ExprKind::Select { cond, then, otherwise } => {
                let c = self.expr(cond, out);
                let r = self.new_reg(ty, None);
                let mut t = Block::default();
                self.expr_into(then, r, &mut t);
                let mut o = Block::default();
                self.expr_into(otherwise, r, &mut o);
                self.emit(out, InstKind::If { cond: c, then: t, otherwise: o, uniform: false }, span);
                r
            }
            ExprKind::Cast(a) => {
                let a = self.expr(a, out);
                let r = self.new_reg(ty, None);
                self.emit(out, InstKind::Cast { dst: r, arg: a }, span);
                r
            }
            ExprKind::RelId { code, target } => {
                let r = self.new_reg(ty, None);
                self.emit(out, InstKind::RelId { dst: r, code: *code, target: *target }, span);
                r
            }
            ExprKind::Raw(which) => {
                let r = self.new_reg(ty, None);
                self.emit(out, InstKind::Raw { dst: r, index: *which }, span);
                r
            }
            ExprKind::Call(c) => return self.call(c, e, out),
        })
    }

    fn call(&mut self, c: &tir::Call, e: &tir::Expr, out: &mut Block) -> Option<Reg> {
        let span = e.span;
        match c.callee {
            Callee::Fn(fid) => {
                let mut args = Vec::new();
                let mut accesses = Vec::new();
                let callee = self.prog.function(fid);
                for (i, a) in c.args.iter().enumerate() {
                    args.push(match a {
                        CallArg::Value(x) => self.expr(x, out),
                        CallArg::Mem(v) => {
                            let writable = matches!(callee.var(callee.params[i]).ty, Ty::Ptr { mutable: true, .. });
                            let kind = if writable { AccessKind::Write } else { AccessKind::Read };
                            let m = self.mem_of_any(*v);
                            accesses.push(self.access(m, kind, span));
                            self.pointer_of(*v, out)
                        }
                        // A typed map is read by the callee's copies (stores go only
                        // through a kernel's own maps: docs/language.md §5).
                        CallArg::Opaque(v) => {
                            if let Ty::TensorMap(_) = self.tf.var(*v).ty {
                                let m = self.mem_of_any(*v);
                                accesses.push(self.access(m, AccessKind::Read, span));
                            }
                            self.map_reg(*v)
                        }
                        CallArg::Out(_) | CallArg::ElemRef { .. } => {
                            unreachable!("user functions take values and memory")
                        }
                    });
                }
                let func = FuncId(fid.0);
                // Unsafe code may pass any value for a parameter broader than `thread[1]` (the
                // checker does not hold it to the parameter's perspective), and the callee's
                // safe code relies on it being uniform: check it here, where the threads
                // that make the call meet (every thread of the callee's entry unit, which
                // holds the parameter's unit).
                if self.unsafe_depth > 0 {
                    for (i, a) in c.args.iter().enumerate() {
                        let persp = callee.var(callee.params[i]).persp;
                        if persp == Persp::THREAD {
                            continue;
                        }
                        let what = Checked::Argument { func, index: i as u32 };
                        match a {
                            CallArg::Value(x) => {
                                self.emit(out, InstKind::AssertUniform { reg: args[i], persp, what }, x.span)
                            }
                            // A thread-local array is one copy per thread: the callee reads
                            // its own, so every copy must hold the same elements.
                            CallArg::Mem(v) => {
                                if let Some(&local) = self.locals.get(v) {
                                    self.emit(out, InstKind::AssertUniformLocal { local, persp, what }, span);
                                } else {
                                    // Any other memory name (a pointer, a shared array, a view
                                    // of either, through any nesting of partitions, claims and
                                    // slots) reaches the callee as the one pointer register
                                    // `pointer_of` computed: its root's pointer advanced by
                                    // every partition's offset on the way, each evaluated with
                                    // the values its index function captured. The callee sees
                                    // nothing else of the view, so one pointer per unit is
                                    // exactly one view per unit, whatever the index functions
                                    // captured (docs/soundness.md §3).
                                    self.emit(out, InstKind::AssertUniform { reg: args[i], persp, what }, span);
                                }
                            }
                            // A handle (a tensor map) is passed as the name its caller was
                            // given, with no view or arithmetic on the way, so it is one of the
                            // kernel's parameters whichever thread passes it.
                            CallArg::Opaque(_) | CallArg::Out(_) | CallArg::ElemRef { .. } => {}
                        }
                    }
                }
                let dst = match &e.ty {
                    Ty::Scalar(s) => Some(self.new_reg(Type::Scalar(*s), None)),
                    _ => None,
                };
                self.emit(out, InstKind::Call { dst, func, args, smem_offset: c.smem_offset, accesses }, span);
                // A callee with unsafe code may return from different places in different
                // threads of its unit (a `return` inside the unsafe code taken by some of
                // them, the others later), where no check sees them together; they all meet
                // again here, after the call, which the whole unit of the return's
                // perspective makes (it is at most the callee's entry perspective).
                if let (Some(reg), Some((_, persp))) = (dst, callee.ret)
                    && persp != Persp::THREAD
                    && has_unsafe(&callee.body)
                {
                    self.emit(out, InstKind::AssertUniform { reg, persp, what: Checked::Result { func } }, span);
                }
                dst
            }
            Callee::Intrinsic(id) => self.intrinsic(id, c, e, out),
        }
    }

    fn intrinsic(&mut self, id: IntrinsicId, c: &tir::Call, e: &tir::Expr, out: &mut Block) -> Option<Reg> {
        let span = e.span;
        let sig = id.sig();
        match sig.name {
            "__syncthreads" => {
                self.emit(out, InstKind::Barrier { scope: Persp::BLOCK, origin: BarrierOrigin::Explicit }, span);
                return None;
            }
            "__syncwarp" => {
                self.emit(out, InstKind::Barrier { scope: Persp::WARP, origin: BarrierOrigin::Explicit }, span);
                return None;
            }
            "thread_idx" | "block_idx" | "block_dim" | "grid_dim" => {
                let which = match sig.name {
                    "thread_idx" => tir::RawIndex::ThreadIdx,
                    "block_idx" => tir::RawIndex::BlockIdx,
                    "block_dim" => tir::RawIndex::BlockDim,
                    _ => tir::RawIndex::GridDim,
                };
                let r = self.new_reg(Type::Scalar(Scalar::I32), None);
                self.emit(out, InstKind::Raw { dst: r, index: which }, span);
                return Some(r);
            }
            "load_vec" | "store_vec" => {
                self.vector(sig.name == "store_vec", c, span, out);
                return None;
            }
            _ => {}
        }
        let mut args = Vec::new();
        let mut outs: Vec<&tir::Place> = Vec::new();
        let mut accesses = Vec::new();
        let kind = match (sig.family, sig.name) {
            (Family::Raw | Family::Mbarrier, _) => AccessKind::Volatile,
            (Family::AsyncCopy, _) => AccessKind::AsyncWrite,
            (Family::Atomics, _) => AccessKind::Atomic,
            _ => AccessKind::Read,
        };
        for a in &c.args {
            match a {
                CallArg::Value(x) => {
                    let r = self.expr(x, out);
                    args.push(IntrArg::Val(r));
                }
                CallArg::Mem(v) => {
                    let writable = matches!(self.tf.var(*v).ty, Ty::Ptr { mutable: true, .. } | Ty::Array { .. })
                        && accesses.is_empty()
                        && sig
                            .params
                            .iter()
                            .any(|p| matches!(p.kind, prism_types::intrinsics::ParamKind::Mem { mutable: true }));
                    let m = self.mem_of_any(*v);
                    let k = if writable { AccessKind::Write } else { AccessKind::Read };
                    accesses.push(self.access(m, k, span));
                    let p = self.pointer_of(*v, out);
                    args.push(IntrArg::Val(p));
                }
                CallArg::Opaque(v) => {
                    // A TMA copy reads its typed map's array; a TMA store writes it.
                    if let Ty::TensorMap(_) = self.tf.var(*v).ty {
                        let m = self.mem_of_any(*v);
                        let k = if id.is_tma_store() { AccessKind::Write } else { AccessKind::Read };
                        accesses.push(self.access(m, k, span));
                    }
                    args.push(IntrArg::Val(self.map_reg(*v)));
                }
                CallArg::Out(p) => outs.push(p),
                CallArg::ElemRef { mem, index } => {
                    let (ptr, idx, user) = self.resolve(*mem, Index::Multi(index), out);
                    // The first element operand is the destination of a copy or an atomic's
                    // target; a copy's source is a read.
                    let m = self.mems[mem];
                    let k = if accesses.is_empty() { kind } else { AccessKind::Read };
                    accesses.push(self.access_at(m, k, span, user));
                    args.push(IntrArg::Elem { ptr, index: idx });
                }
            }
        }
        // Safe code's operands are uniform by the checker's rules within each dynamic
        // instance; warps that unsafe control flow sends to one safe wgmma from different
        // iterations are `barrier-divergence` at its rendezvous (the simulator's
        // `BlockSim::barrier`).
        if self.unsafe_depth > 0 {
            self.check_operands(id, c, &args, span, out);
        }
        let mut dsts = Vec::new();
        let mut result = None;
        if let Ty::Scalar(s) = &e.ty {
            let r = self.new_reg(Type::Scalar(*s), None);
            dsts.push(r);
            result = Some(r);
        }
        let out_regs: Vec<Reg> = outs
            .iter()
            .map(|p| {
                let s = self.place_scalar(p);
                self.new_reg(Type::Scalar(s), None)
            })
            .collect();
        dsts.extend(&out_regs);
        // In a warp-specialised pipeline's fill, a TMA copy completes on the slot's full
        // mbarrier: it announces its box's bytes there first.
        let mut id = id;
        if id.is_tma()
            && !id.is_tma_mbar()
            && let Some((bar, index, mem)) = self.fill_bar
            && let Some(IntrArg::Val(map)) = args.get(1)
            && let Type::TensorMap(m) = self.f.reg_ty(*map)
        {
            let bytes = self.konst(out, Scalar::I32, ConstValue::Int(i128::from(m.box_bytes() as u32)), span);
            self.mbar(out, "mbarrier_expect_tx", (bar, index, mem), Some(bytes), span);
            let name = if id.sig().name == "tma_load_3d" { "tma_load_3d_mbar" } else { "tma_load_2d_mbar" };
            id = prism_types::intrinsics::lookup(name).expect("the mbarrier form of a TMA copy");
            args.push(IntrArg::Elem { ptr: bar, index });
            accesses.push(self.access(mem, AccessKind::Volatile, span));
        }
        self.emit(out, InstKind::Intrinsic { dsts, intrinsic: id, args, accesses }, span);
        for (p, r) in outs.into_iter().zip(out_regs) {
            match p {
                tir::Place::Var(v) => {
                    let d = self.regs[v];
                    self.emit(out, InstKind::Copy { dst: d, src: r }, span);
                }
                tir::Place::Elem { array, index } => {
                    let l = self.locals[array];
                    let idx = self.local_index(*array, index, out);
                    self.emit(out, InstKind::LocalStore { local: l, index: idx, value: r }, span);
                }
            }
        }
        let _ = lookup;
        result
    }

    /// Unsafe code may pass an intrinsic any operand (the checker does not hold it to the
    /// operand's perspective), while the intrinsic's unit issues it as one operation that
    /// takes one value of each operand broader than `thread[1]`: a wgmma's tile descriptors
    /// are the warpgroup's, and the GPU reads them as if every thread gave the same ones,
    /// where the simulator would compute each thread's fragment from its own. Each such
    /// operand is checked here, just before the intrinsic, over the operand's perspective
    /// (`assert.uniform.operand`). `args` are the operands as lowered, in order (`out=`
    /// lists are not among them).
    fn check_operands(&mut self, id: IntrinsicId, c: &tir::Call, args: &[IntrArg], span: Span, out: &mut Block) {
        let sig = id.sig();
        // The table's operand each call argument stands for: an `out=[...]` list is one
        // operand of several places, and lowers to no argument.
        let operands = sig.params.iter().enumerate().flat_map(|(i, p)| match p.kind {
            prism_types::intrinsics::ParamKind::OutList(n) => std::iter::repeat_n(i, n),
            _ => std::iter::repeat_n(i, 1),
        });
        let mut lowered = args.iter();
        for (a, index) in c.args.iter().zip(operands) {
            let arg = match a {
                CallArg::Out(_) => continue,
                _ => lowered.next().copied(),
            };
            let persp = sig.params[index].persp;
            let (Some(arg), false) = (arg, persp == Persp::THREAD) else { continue };
            let what = Checked::Operand { intrinsic: id, index: index as u32 };
            match (a, arg) {
                (CallArg::Value(_), IntrArg::Val(reg)) => {
                    self.emit(out, InstKind::AssertUniform { reg, persp, what }, span);
                }
                // A thread-local array is one copy per thread, each read by its own thread:
                // every copy must hold the same elements.
                (CallArg::Mem(v), _) if self.locals.contains_key(v) => {
                    let local = self.locals[v];
                    self.emit(out, InstKind::AssertUniformLocal { local, persp, what }, span);
                }
                // Any other memory name reaches the intrinsic as the one pointer
                // `pointer_of` computed, which holds every partition's offset on the way (as
                // for a function's pointer argument): one pointer per unit is one view.
                (CallArg::Mem(_), IntrArg::Val(reg)) => {
                    self.emit(out, InstKind::AssertUniform { reg, persp, what }, span);
                }
                // An element `m[i]` is the address of its element, compared as one pointer:
                // `p + 1` with index 0 and `p` with index 1 are the same tile, which comparing
                // the pointer and the index apart would report. The pointer is made for the
                // check alone; the CUDA backend drops it with the check.
                (CallArg::ElemRef { .. }, IntrArg::Elem { ptr, index }) => {
                    let at = self.new_reg(Type::Ptr, None);
                    self.emit(out, InstKind::PtrOffset { dst: at, base: ptr, offset: index, bound: None }, span);
                    self.emit(out, InstKind::AssertUniform { reg: at, persp, what }, span);
                }
                // A handle (a tensor map) is passed as the name its caller was given, with no
                // view or arithmetic on the way: one of the kernel's parameters whichever
                // thread passes it.
                _ => {}
            }
        }
    }

    /// `load_vec(v[j], m[i], n)` or `store_vec(m[i], v[j], n)`: one vector access to memory,
    /// and `n` element accesses to the local array (registers, once nvcc has unrolled them).
    /// Operands are evaluated in the order they are written, as for every call.
    fn vector(&mut self, store: bool, c: &tir::Call, span: Span, out: &mut Block) {
        let [first, second, CallArg::Value(n)] = c.args.as_slice() else {
            unreachable!("the checker gives vector accesses three operands")
        };
        let ExprKind::Const(ConstValue::Int(n)) = n.kind else { unreachable!("the width is a constant") };
        let n = n as usize;
        let mut mem_side = None;
        let mut local_side = None;
        for (a, is_mem) in [(first, store), (second, !store)] {
            let CallArg::ElemRef { mem, index } = a else { unreachable!("both operands are elements") };
            if is_mem {
                let (ptr, idx, user) = self.resolve(*mem, Index::Multi(index), out);
                let kind = if store { AccessKind::Write } else { AccessKind::Read };
                let acc = self.access_at(self.mems[mem], kind, span, user);
                mem_side = Some((ptr, idx, acc, self.scalar_of(*mem)));
            } else {
                let j = self.local_index(*mem, index, out);
                local_side = Some((self.locals[mem], j));
            }
        }
        let (Some((ptr, index, access, elem)), Some((local, j))) = (mem_side, local_side) else {
            unreachable!("one operand of each side")
        };
        // The local elements `j + k`.
        let jty = self.f.reg_ty(j);
        let Type::Scalar(js) = jty else { unreachable!("indices are integers") };
        let elems: Vec<Reg> = (0..n)
            .map(|k| {
                if k == 0 {
                    return j;
                }
                let kr = self.konst(out, js, ConstValue::Int(k as i128), span);
                let r = self.new_reg(jty, None);
                self.emit(out, InstKind::Binary { dst: r, op: BinOp::Add, lhs: j, rhs: kr }, span);
                r
            })
            .collect();
        if store {
            let values: Vec<Reg> = elems
                .iter()
                .map(|&at| {
                    let r = self.new_reg(Type::Scalar(elem), None);
                    self.emit(out, InstKind::LocalLoad { dst: r, local, index: at }, span);
                    r
                })
                .collect();
            self.emit(out, InstKind::StoreVec { ptr, index, values, access }, span);
        } else {
            let dsts: Vec<Reg> = (0..n).map(|_| self.new_reg(Type::Scalar(elem), None)).collect();
            self.emit(out, InstKind::LoadVec { dsts: dsts.clone(), ptr, index, access }, span);
            for (at, r) in elems.into_iter().zip(dsts) {
                self.emit(out, InstKind::LocalStore { local, index: at, value: r }, span);
            }
        }
    }

    fn place_scalar(&self, p: &tir::Place) -> Scalar {
        match p {
            tir::Place::Var(v) | tir::Place::Elem { array: v, .. } => self.scalar_of(*v),
        }
    }
}

/// Indices of an access: expressions to evaluate, or registers already computed.
enum Index<'e> {
    Multi(&'e [tir::Expr]),
    Regs(Vec<Reg>),
}

fn zero_of(s: Scalar) -> ConstValue {
    match s {
        Scalar::Bool => ConstValue::Bool(false),
        s if s.is_float() => ConstValue::Float(0.0),
        _ => ConstValue::Int(0),
    }
}

/// Whether a consumer case's body holds a `stage(ring, late=True)` (the checker makes its
/// stages agree).
fn has_late_stage(b: &tir::Block) -> bool {
    let mut stages = Vec::new();
    tir::stages_in(b, &mut stages);
    stages.iter().any(|&(late, _)| late)
}

/// Whether `s` is a call of `setmaxnreg_inc` or `setmaxnreg_dec`.
fn is_realloc(s: &tir::Stmt) -> bool {
    matches!(&s.kind, StmtKind::Expr(e)
        if matches!(&e.kind, tir::ExprKind::Call(c)
            if matches!(c.callee, tir::Callee::Intrinsic(id) if id.sig().name.starts_with("setmaxnreg"))))
}

/// `body` run by the first thread of the current unit alone (a split of one thread).
fn one_thread(body: Block) -> InstKind {
    InstKind::Split { unit: Persp::THREAD, cases: vec![Case { offset: 0, count: 1, persp: Persp::THREAD, body }] }
}
