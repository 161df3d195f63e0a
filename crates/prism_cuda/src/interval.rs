//! Value ranges of integer registers, so that signed arithmetic that cannot overflow is
//! printed as C's native operators.
//!
//! Prism's integer arithmetic wraps (docs/language.md §2), and C leaves signed overflow
//! undefined, so the backend prints signed `+ - *` through the `prism_add`-style helpers,
//! which compute in the unsigned type. That costs nvcc knowledge it uses: `e / 8` on an `int`
//! that might be negative needs a sign fix-up, where on a value nvcc knows to be
//! non-negative it is one shift. When both operands lie in known ranges and the exact result
//! fits the type, wrapping and C's arithmetic give the same bits, and the native operator
//! is exact (docs/cuda.md, "Arithmetic").
//!
//! The ranges are deliberately simple and sound by construction:
//!
//! - A register defined by exactly one instruction has the range of that instruction's
//!   result: constants, copies, `+ - *` of ranged operands whose exact result fits,
//!   division and remainder by a positive constant, `&` with a non-negative operand, `>>` by
//!   a constant, conversions that keep the value, and the hardware indices, which the launch
//!   validation bounds (at most 1024 threads per block, at most 2^31 - 1 threads per grid,
//!   docs/simulator.md "Arguments").
//! - A `range` loop's counter (two definitions: before the loop and the step) has, where the
//!   loop body reads it, the values from its start to one before its end, and never more
//!   than the type's limit minus the step: a counter does not wrap, the step after the last
//!   iteration included (docs/language.md §6; the simulator reports `counter-overflow`
//!   otherwise, so no accepted run leaves these bounds). Only a constant step counts; the
//!   header reads the counter only to compare it. The range is the register's, so it rests
//!   on the language scoping a `for` variable to its loop: nothing reads the counter after
//!   the loop, where it holds one step more (review R34; `prism_sync`'s proof checks where
//!   each counter is read instead, `Ctx::reads_inside`).
//! - Every other register (a variable assigned more than once, a load, a parameter) has no
//!   range of its own; as an operand it has its type's (every value it can hold), which is
//!   enough for `/ c`, `% c`, `& c` and `>> c` to bound a result.
//! - Guards: an instruction inside the branch of an `if` on `a < b` (`<=`, `>`, `>=`) reads
//!   `a` and `b` narrowed by what the branch knows, when neither changes between the
//!   comparison and the end of the branch: the comparison stands in the same block before
//!   the `if`, and nothing between them or inside the branch assigns `a` or `b`. A
//!   pipeline's fill (`if kt_issue < n`) thus knows its tile is below `n`, and its body
//!   (`if kt_issue >= stages - 1`) that its tile `kt_issue - (stages - 1)` is not negative.

use prism_ir::Reg;
use prism_ir::ir::{Block, Function, Inst, InstKind, Type};
use prism_types::perspective::Level;
use prism_types::tir::{BinOp, ConstValue, FnKind, RawIndex};
use prism_types::ty::Scalar;
use std::collections::HashMap;

/// An inclusive range of values.
pub type Range = (i128, i128);

/// Threads per block at most (CUDA's limit, checked at every launch).
const MAX_THREADS: i128 = 1024;
/// Threads (and blocks) per grid at most: `id()` over the grid is an `int`, and launches are
/// validated against it.
const MAX_GRID: i128 = (1 << 31) - 1;

/// The values of an integer type.
pub fn type_range(s: Scalar) -> Option<Range> {
    match s {
        Scalar::Bool => Some((0, 1)),
        s if s.is_int() => Some(prism_types::consts::int_range(s)),
        _ => None,
    }
}

fn within(r: Range, s: Scalar) -> Option<Range> {
    let (lo, hi) = type_range(s)?;
    (lo <= r.0 && r.1 <= hi).then_some(r)
}

/// The exact range of `a op b` on `ty` values in ranges `a` and `b`, if it fits `ty` (so
/// wrapping arithmetic and C's agree on it).
pub fn binary(op: BinOp, ty: Scalar, a: Range, b: Range) -> Option<Range> {
    let hull = |xs: [i128; 4]| (xs.iter().copied().min().unwrap_or(0), xs.iter().copied().max().unwrap_or(0));
    let r = match op {
        BinOp::Add => (a.0.checked_add(b.0)?, a.1.checked_add(b.1)?),
        BinOp::Sub => (a.0.checked_sub(b.1)?, a.1.checked_sub(b.0)?),
        BinOp::Mul => {
            hull([a.0.checked_mul(b.0)?, a.0.checked_mul(b.1)?, a.1.checked_mul(b.0)?, a.1.checked_mul(b.1)?])
        }
        // Truncating division by a positive constant is monotonic in the dividend.
        BinOp::Div if b.0 == b.1 && b.0 > 0 => (a.0 / b.0, a.1 / b.0),
        BinOp::Rem if b.0 == b.1 && b.0 > 0 => {
            let d = b.0 - 1;
            if a.0 >= 0 {
                (0, a.1.min(d))
            } else if a.1 <= 0 {
                (a.0.max(-d), 0)
            } else {
                (-d, d)
            }
        }
        // `x & y` with `y >= 0` lies in [0, y] whatever `x` is (two's complement).
        BinOp::BitAnd if b.0 >= 0 => (0, b.1),
        BinOp::BitAnd if a.0 >= 0 => (0, a.1),
        BinOp::Shr if b.0 == b.1 && (0..i128::from(ty.size()) * 8).contains(&b.0) && ty.is_int() => {
            (a.0 >> b.0, a.1 >> b.0)
        }
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => return Some((0, 1)),
        _ => return None,
    };
    within(r, ty)
}

/// The ranges of the integer registers of `f` that have one (see the module documentation).
pub fn of(f: &Function) -> HashMap<Reg, Range> {
    // Verbatim CUDA may assign any variable behind the IR's back: no ranges at all then.
    let mut verbatim = false;
    f.body.walk(&mut |k| verbatim |= matches!(k, InstKind::Verbatim { .. }));
    if verbatim {
        return HashMap::new();
    }
    // A kernel's launches are validated against its `@launch_bounds`; a device function may
    // be called from any kernel, so only CUDA's limit holds there.
    let threads = match (f.kind, f.launch_bounds) {
        (FnKind::Kernel, Some(n)) => i128::from(n).min(MAX_THREADS),
        _ => MAX_THREADS,
    };
    let mut cx = Cx { f, threads, defs: HashMap::new(), counters: HashMap::new(), memo: HashMap::new() };
    cx.collect(&f.body, false, &[]);
    let regs: Vec<Reg> = cx.defs.keys().copied().collect();
    for r in regs {
        cx.range(r, 0);
    }
    cx.memo.into_iter().filter_map(|(r, v)| v.map(|v| (r, v))).collect()
}

/// A `range` loop: its counter's step and the header's comparison.
struct Counter {
    step: Reg,
    /// `Lt` counting up, `Gt` counting down, with the end register.
    test: Option<(BinOp, Reg)>,
}

/// A definition: the instruction, whether it is a loop's step, the guards around it.
type Def = (InstKind, bool, Vec<Guard>);

/// What a branch knows: `lhs op rhs` holds (both registers unchanged since the test).
#[derive(Clone, Copy, Debug)]
struct Guard {
    op: BinOp,
    lhs: Reg,
    rhs: Reg,
}

struct Cx<'f> {
    f: &'f Function,
    /// Threads per block at most.
    threads: i128,
    /// Every defining instruction of each register, whether it is a loop's step, and the
    /// guards that hold where it stands.
    defs: HashMap<Reg, Vec<Def>>,
    counters: HashMap<Reg, Counter>,
    memo: HashMap<Reg, Option<Range>>,
}

impl Cx<'_> {
    fn collect(&mut self, b: &Block, in_latch: bool, guards: &[Guard]) {
        for (at, inst) in b.insts.iter().enumerate() {
            for d in inst.kind.defs() {
                self.defs.entry(d).or_default().push((inst.kind.clone(), in_latch, guards.to_vec()));
            }
            if let InstKind::Loop { header, cond, body, latch, counter, .. } = &inst.kind {
                if let Some(c) = counter {
                    let step = latch.insts.iter().find_map(|i| match &i.kind {
                        InstKind::Binary { dst, op: BinOp::Add, lhs, rhs } if dst == c && lhs == c => Some(*rhs),
                        _ => None,
                    });
                    let test = header.insts.iter().find_map(|i| match &i.kind {
                        InstKind::Binary { dst, op: op @ (BinOp::Lt | BinOp::Gt), lhs, rhs }
                            if dst == cond && lhs == c =>
                        {
                            Some((*op, *rhs))
                        }
                        _ => None,
                    });
                    // The header must do nothing else with the counter than compare it.
                    let only_test = header.insts.len() == 1;
                    if let Some(step) = step {
                        self.counters.insert(*c, Counter { step, test: test.filter(|_| only_test) });
                    }
                }
                // A loop's blocks run again after its latch: no guard from outside the loop
                // is lost, since the guarded registers are assigned nowhere inside the
                // guarded branch, the loop included.
                self.collect(header, false, guards);
                self.collect(body, false, guards);
                self.collect(latch, true, guards);
            } else if let InstKind::If { cond, then, otherwise, .. } = &inst.kind {
                let test = guard(&b.insts[..at], *cond);
                for (branch, negate) in [(then, false), (otherwise, true)] {
                    let mut inner = guards.to_vec();
                    if let Some(g) = test
                        && !assigns(branch, g.lhs)
                        && !assigns(branch, g.rhs)
                    {
                        inner.push(if negate { g.negated() } else { g });
                    }
                    self.collect(branch, in_latch, &inner);
                }
            } else {
                for nb in inst.kind.blocks() {
                    self.collect(nb, in_latch, guards);
                }
            }
        }
    }

    fn scalar(&self, r: Reg) -> Option<Scalar> {
        match self.f.reg_ty(r) {
            Type::Scalar(s) => Some(s),
            _ => None,
        }
    }

    fn range(&mut self, r: Reg, depth: u32) -> Option<Range> {
        if let Some(v) = self.memo.get(&r) {
            return *v;
        }
        // A cycle (or a very deep chain) has no range; the entry is overwritten below.
        if depth > 64 {
            return None;
        }
        self.memo.insert(r, None);
        let defs = self.defs.get(&r).cloned().unwrap_or_default();
        let v = if self.counters.contains_key(&r) {
            self.counter(r, &defs, depth)
        } else {
            match defs.as_slice() {
                [(k, _, guards)] => self.def(k, guards, depth),
                _ => None,
            }
        };
        let v = v.and_then(|v| within(v, self.scalar(r)?));
        self.memo.insert(r, v);
        v
    }

    /// Where the body reads counter `c`: from the start to before the end, and never past
    /// the type's limit less the step.
    fn counter(&mut self, c: Reg, defs: &[Def], depth: u32) -> Option<Range> {
        let [init, step_def] = defs else { return None };
        let (init, step_def) = if init.1 { (step_def, init) } else { (init, step_def) };
        if init.1 || !step_def.1 {
            return None;
        }
        let (step, test) = {
            let k = &self.counters[&c];
            (k.step, k.test)
        };
        let (op, end) = test?;
        let s = self.range(step, depth + 1)?;
        if s.0 != s.1 || s.0 == 0 {
            return None;
        }
        let s = s.0;
        let (tmin, tmax) = type_range(self.scalar(c)?)?;
        let start = self.def(&init.0, &init.2, depth + 1).unwrap_or((tmin, tmax));
        let end = self.range(end, depth + 1).unwrap_or((tmin, tmax));
        match op {
            BinOp::Lt if s > 0 => Some((start.0, (end.1 - 1).min(tmax - s).max(start.0))),
            BinOp::Gt if s < 0 => Some(((end.0 + 1).max(tmin - s).min(start.1), start.1)),
            _ => None,
        }
    }

    /// The range of what `k` defines, where `guards` hold.
    fn def(&mut self, k: &InstKind, guards: &[Guard], depth: u32) -> Option<Range> {
        match k {
            InstKind::Const { value: ConstValue::Int(v), .. } => Some((*v, *v)),
            InstKind::Const { value: ConstValue::Bool(b), .. } => Some((i128::from(*b), i128::from(*b))),
            InstKind::Copy { src, .. } => self.operand(*src, guards, depth),
            InstKind::Binary { lhs, rhs, op, .. } => {
                let ty = self.scalar(*lhs)?;
                let a = self.operand(*lhs, guards, depth)?;
                let b = self.operand(*rhs, guards, depth)?;
                binary(*op, ty, a, b)
            }
            // Either operand: both are values of the select's own place.
            InstKind::Select { then, otherwise, .. } => {
                let a = self.operand(*then, guards, depth)?;
                let b = self.operand(*otherwise, guards, depth)?;
                Some((a.0.min(b.0), a.1.max(b.1)))
            }
            InstKind::Cast { dst, arg } => {
                let to = self.scalar(*dst)?;
                let from = self.scalar(*arg)?;
                if from.is_float() || to.is_float() {
                    return None;
                }
                within(self.operand(*arg, guards, depth)?, to)
            }
            InstKind::Raw { index, .. } => Some(match index {
                RawIndex::ThreadIdx => (0, self.threads - 1),
                RawIndex::BlockIdx => (0, MAX_GRID - 1),
                RawIndex::BlockDim => (1, self.threads),
                RawIndex::GridDim => (1, MAX_GRID),
                RawIndex::ThreadCoord(_) => (0, self.threads - 1),
                RawIndex::BlockCoord(_) => (0, MAX_GRID - 1),
                RawIndex::BlockExtent(_) => (1, self.threads),
                RawIndex::GridExtent(_) => (1, MAX_GRID),
            }),
            InstKind::RelId { code, target, .. } => {
                let n = i128::from(target.n.max(1));
                // `id()` of a `target` unit within the `code` unit: how many fit, less one.
                let units = match (code.level, target.level) {
                    (Level::Thread, _) => i128::from(code.n).min(self.threads),
                    (Level::Block, Level::Thread) if code.n == 1 => self.threads,
                    (Level::Block | Level::Grid, Level::Thread) => MAX_GRID,
                    (Level::Block, _) => i128::from(code.n),
                    (Level::Grid, _) => MAX_GRID,
                };
                Some((0, ((units - 1) / n).max(0)))
            }
            _ => None,
        }
    }
}

impl Cx<'_> {
    /// The values of `r` read where `guards` hold: its range, or its type's, narrowed by
    /// every guard on it.
    fn operand(&mut self, r: Reg, guards: &[Guard], depth: u32) -> Option<Range> {
        let ty = type_range(self.scalar(r)?)?;
        let mut v = self.range(r, depth + 1).unwrap_or(ty);
        for g in guards {
            // `r op other` (or `other op r`, read the other way round).
            let (op, other) = if g.lhs == r && g.rhs != r {
                (g.op, g.rhs)
            } else if g.rhs == r && g.lhs != r {
                (swapped(g.op), g.lhs)
            } else {
                continue;
            };
            let Some(o_ty) = self.scalar(other).and_then(type_range) else { continue };
            let o = self.range(other, depth + 1).unwrap_or(o_ty);
            v = match op {
                BinOp::Lt => (v.0, v.1.min(o.1 - 1)),
                BinOp::Le => (v.0, v.1.min(o.1)),
                BinOp::Gt => (v.0.max(o.0 + 1), v.1),
                BinOp::Ge => (v.0.max(o.0), v.1),
                _ => v,
            };
            // A branch no value reaches: nothing to promise (and nothing runs there).
            if v.0 > v.1 {
                return None;
            }
        }
        Some(v)
    }
}

impl Guard {
    /// What the `else` branch knows.
    fn negated(self) -> Guard {
        let op = match self.op {
            BinOp::Lt => BinOp::Ge,
            BinOp::Le => BinOp::Gt,
            BinOp::Gt => BinOp::Le,
            _ => BinOp::Lt,
        };
        Guard { op, ..self }
    }
}

/// `a op b` as `b op' a`.
fn swapped(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        op => op,
    }
}

/// The guard an `if` on `cond` gives, where `before` is what precedes the `if` in its
/// block: the last definition of `cond` there is an integer comparison, and nothing after
/// it (nested blocks included) assigns `cond` or either operand.
fn guard(before: &[Inst], cond: Reg) -> Option<Guard> {
    let at = before.iter().rposition(|i| i.kind.defs().contains(&cond))?;
    let InstKind::Binary { op: op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge), lhs, rhs, .. } = before[at].kind
    else {
        return None;
    };
    // Nested blocks of the comparison itself cannot exist (a `Binary` has none); everything
    // after it up to the `if` must leave the three registers alone.
    let rest = Block { insts: before[at + 1..].to_vec(), ..Block::default() };
    if assigns(&rest, cond) || assigns(&rest, lhs) || assigns(&rest, rhs) {
        return None;
    }
    Some(Guard { op, lhs, rhs })
}

/// Whether anything in `b`, nested blocks included, assigns `r`.
fn assigns(b: &Block, r: Reg) -> bool {
    let mut found = false;
    b.walk(&mut |k| found |= k.defs().contains(&r));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_is_exact_or_nothing() {
        let i = Scalar::I32;
        assert_eq!(binary(BinOp::Add, i, (0, 1023), (0, 256)), Some((0, 1279)));
        assert_eq!(binary(BinOp::Add, i, (0, i128::from(i32::MAX)), (1, 1)), None);
        assert_eq!(binary(BinOp::Sub, i, (0, 10), (0, 20)), Some((-20, 10)));
        assert_eq!(binary(BinOp::Mul, i, (-3, 2), (-5, 7)), Some((-21, 15)));
        assert_eq!(binary(BinOp::Mul, i, (0, 65536), (0, 65536)), None);
        assert_eq!(binary(BinOp::Div, i, (-17, 17), (8, 8)), Some((-2, 2)));
        assert_eq!(binary(BinOp::Div, i, (0, 17), (0, 8)), None, "a divisor range is no constant");
        assert_eq!(binary(BinOp::Rem, i, (0, 1279), (8, 8)), Some((0, 7)));
        assert_eq!(binary(BinOp::Rem, i, (-9, 3), (8, 8)), Some((-7, 7)));
        assert_eq!(binary(BinOp::Rem, i, (-9, 0), (8, 8)), Some((-7, 0)));
        assert_eq!(binary(BinOp::BitAnd, i, (i128::from(i32::MIN), -1), (0, 31)), Some((0, 31)));
        assert_eq!(binary(BinOp::Shr, i, (-64, 64), (3, 3)), Some((-8, 8)));
        assert_eq!(binary(BinOp::Shl, i, (0, 1), (3, 3)), None);
        let u = Scalar::U32;
        assert_eq!(binary(BinOp::Sub, u, (0, 10), (0, 20)), None, "unsigned results below 0 wrap");
    }

    /// Every value the ranges promise is the value the wrapping arithmetic computes: a brute
    /// force over small ranges of `int` and `uint` against `prism_interp`-style semantics.
    #[test]
    fn ranges_contain_every_result() {
        let wrap32 = |x: i128| x as i32 as i128;
        for op in [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Rem, BinOp::BitAnd, BinOp::Shr] {
            for a in [(-5i128, 7i128), (0, 9), (-9, -1), (3, 3)] {
                for b in [(1i128, 1i128), (3, 3), (0, 6), (-4, 4), (8, 8)] {
                    let Some((lo, hi)) = binary(op, Scalar::I32, a, b) else { continue };
                    for x in a.0..=a.1 {
                        for y in b.0..=b.1 {
                            let v = match op {
                                BinOp::Add => wrap32(x + y),
                                BinOp::Sub => wrap32(x - y),
                                BinOp::Mul => wrap32(x * y),
                                BinOp::Div if y != 0 => x / y,
                                BinOp::Rem if y != 0 => x % y,
                                BinOp::BitAnd => ((x as i32) & (y as i32)) as i128,
                                BinOp::Shr => ((x as i32) >> y) as i128,
                                _ => continue,
                            };
                            assert!((lo..=hi).contains(&v), "{op:?} {x} {y} = {v} outside {lo}..={hi}");
                        }
                    }
                }
            }
        }
    }
}
