//! Proving that a node repeated by a loop touches, in each thread, only that thread's elements.
//!
//! A node inside a loop is its own successor through the loop's back edge. Staging a tile
//! with `for j in range(4): with partition(S, p=thread[1], f=lambda x: id() * 4 + j + x) ...`
//! makes every iteration a write node, and the naive rule puts a block barrier inside the
//! loop. It is not needed when no element one thread touches in any iteration is touched by
//! another thread in any iteration: then the iterations of different threads never conflict,
//! and each thread orders its own iterations.
//!
//! The proof is deliberately narrow. Every access of the node (loads, stores and atomics on
//! one element; anything else gives up) must compute its element index, through the root
//! pointer, as the affine form `W·u + base + r` where
//! - `u` is `id()` of a single thread inside a unit `K` with `S ⊑ K` (`S` the barrier scope),
//!   so distinct participants have distinct `u`;
//! - `W > 0` is the same constant for every access;
//! - `base` is the same sum for every access of values uniform over `S` and fixed while the
//!   loop repeats the node: constants, `id()` of units broader than `S`, and counters of
//!   loops outside the repeating ones;
//! - `r` is everything else: constants and counters of the repeating loops (and of loops
//!   inside the node), whose value range comes from constant `for` bounds.
//!
//! Each thread then owns its elements when every `r` lies in `[0, W)` (blocked layouts,
//! `4·t + j`) or when `r` moves only in steps of some `g > W·(n − 1)`, `n` the threads of an
//! `S`-unit (interleaved layouts, `t + 32·j` with 32 threads). An element then determines
//! `u`, hence the thread, and the edge needs no barrier. The same proof serves an edge
//! between two different nodes whose accesses have the same shape (two partitions with one
//! index function), with the counters of loops around only one of them counted in `r`.
//! Values are followed through registers with a single definition (a source variable assigned
//! once, or a temporary), so a value read at the access is the one computed there in the same
//! iteration. Anything else (parameters, loads, divisions, registers assigned twice) makes the
//! proof fail, and the barrier stays.

use crate::Ctx;
use crate::cfg::{FrameId, InstId};
use crate::graph::{operands, root};
use prism_ir::Reg;
use prism_ir::ir::{InstKind, IntrArg, ScopeKind, Type};
use prism_types::intrinsics::Family;
use prism_types::perspective::{Level, Persp};
use prism_types::tir::{BinOp, ConstValue, UnOp};
use prism_types::ty::Scalar;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A symbolic value in an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Term {
    /// `id()` of `target` (level, count) inside `code` (level, count).
    Rel((Level, u64), (Level, u64)),
    /// The counter of a loop.
    Iv(InstId),
    /// The index the source wrote through a partition (see `cross.rs`).
    Sym,
    /// `id() / k` for `id()` of `target` inside `code` (a non-negative value, `k > 0`).
    Quot((Level, u64), (Level, u64), i128),
    /// `id() % k`, likewise.
    Mod((Level, u64), (Level, u64), i128),
    /// `i % k` for the counter `i` of a pipeline's loop (`prism_ir::lower`), which starts
    /// at 0, steps by 1 and stops before it could overflow, and is the same in every thread
    /// that runs the loop (the block's, or a warp-specialised case's): the current slot of a
    /// ring with `k` slots ([`Ctx::pipeline_counter`]).
    Ring(InstId, i128),
}

/// `Σ coefficient · term + constant`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Affine {
    pub(crate) terms: BTreeMap<Term, i128>,
    pub(crate) c: i128,
}

impl Affine {
    pub(crate) fn constant(c: i128) -> Affine {
        Affine { terms: BTreeMap::new(), c }
    }

    pub(crate) fn term(t: Term) -> Affine {
        Affine { terms: BTreeMap::from([(t, 1)]), c: 0 }
    }

    pub(crate) fn add(mut self, o: &Affine, sign: i128) -> Option<Affine> {
        for (t, k) in &o.terms {
            let e = self.terms.entry(*t).or_insert(0);
            *e = e.checked_add(k.checked_mul(sign)?)?;
        }
        self.terms.retain(|_, k| *k != 0);
        self.c = self.c.checked_add(o.c.checked_mul(sign)?)?;
        Some(self)
    }

    pub(crate) fn scale(mut self, k: i128) -> Option<Affine> {
        for v in self.terms.values_mut() {
            *v = v.checked_mul(k)?;
        }
        self.terms.retain(|_, v| *v != 0);
        self.c = self.c.checked_mul(k)?;
        Some(self)
    }

    fn as_const(&self) -> Option<i128> {
        self.terms.is_empty().then_some(self.c)
    }

    /// `id()` itself, when the form is exactly one `id()` term.
    fn as_id(&self) -> Option<((Level, u64), (Level, u64))> {
        match (self.c, self.terms.iter().next(), self.terms.len()) {
            (0, Some((Term::Rel(c, t), 1)), 1) => Some((*c, *t)),
            _ => None,
        }
    }

    /// Folds `a·(u / k) + b·(u % k)` with `a = k·b` back into `b·u` (`u = k·(u / k) + u % k`
    /// for `u ≥ 0`): a thread's chunk written as a row and a column of a `k`-wide tile,
    /// `(t / 4) * 16 + (t % 4) * 4`, is `4·t`.
    fn fold_div_mod(mut self) -> Affine {
        let pairs: Vec<(Term, Term, i128, i128)> = self
            .terms
            .iter()
            .filter_map(|(t, &a)| match t {
                Term::Quot(c, g, k) => {
                    let m = Term::Mod(*c, *g, *k);
                    self.terms.get(&m).map(|&b| (*t, m, a, b))
                }
                _ => None,
            })
            .collect();
        for (q, m, a, b) in pairs {
            let Term::Quot(c, g, k) = q else { continue };
            if a == k.saturating_mul(b) {
                self.terms.remove(&q);
                self.terms.remove(&m);
                *self.terms.entry(Term::Rel(c, g)).or_insert(0) += b;
                self.terms.retain(|_, v| *v != 0);
            }
        }
        self
    }
}

/// The padding of a padded shape (see [`Ctx::shape_of`]): the coefficient `p` of its
/// `id() / k` term and `k`, when the shape has one.
fn padding(shape: &Shape) -> Option<(i128, i128)> {
    let mut quots = shape.3.iter().filter_map(|(t, &p)| match t {
        Term::Quot(_, g, k) if *g == (Level::Thread, 1) => Some((p, *k)),
        _ => None,
    });
    let first = quots.next()?;
    quots.next().is_none().then_some(first)
}

/// A counted loop: its counter register, the counter's range inside the body, and the
/// distance between consecutive values (positive, whichever way the loop counts): the
/// counter takes exactly the values `lo, lo + step, …, hi`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counter {
    reg: Reg,
    pub(crate) lo: i128,
    pub(crate) hi: i128,
    pub(crate) step: i128,
}

/// Where an access starts from its pointer: an index register, or a constant (a call,
/// whose callee touches its parameter from that element on, [`Ctx::param_ranges`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Index {
    Reg(Reg),
    Const(i128),
}

/// An element access: instruction, pointer, index, and the elements it touches from there.
pub(crate) type Site = (InstId, Reg, Index, i128);

/// The root a node's accesses use, and the accesses ([`Ctx::sites`]).
pub(crate) type Sites = (prism_ir::MemId, Vec<Site>);

/// An access's instruction, pointer and index, and the launch limit assumed
/// ([`Ctx::access_form`]).
pub(crate) type AccessKey = (InstId, Reg, Index, u128);

/// Where loop counters were read: (loop, block of the reading instruction).
pub(crate) type Reads = Vec<(InstId, FrameId)>;

pub(crate) fn key(p: Persp) -> (Level, u64) {
    (p.level, p.n)
}

/// What every access of an owned node must agree on: the root, the unit `K` of `u`, the
/// stride `W` and the base.
pub(crate) type Shape = (prism_ir::MemId, (Level, u64), i128, BTreeMap<Term, i128>);

/// The rest `r` of one access's index: its constant, and the coefficients and ranges of the
/// varying counters in it.
#[derive(Clone, Debug)]
pub(crate) struct Rest {
    c: i128,
    terms: Vec<(i128, i128, i128)>,
    /// How many consecutive elements the access touches (1, or an asynchronous copy's).
    width: i128,
    /// The unit's position is padded (see [`Ctx::shape_of`]): only the blocked proofs hold
    /// (the plain one, and blocks at a stride beyond their span).
    padded: bool,
}

impl Rest {
    /// The constant with the one-valued counters' contribution.
    fn fixed(&self) -> i128 {
        self.c + self.terms.iter().filter(|t| t.1 == t.2).map(|t| t.0 * t.1).sum::<i128>()
    }

    /// Whether `base` plus the terms `keep` selects, over their ranges, and the access's
    /// width stay inside `[0, w)`.
    fn inside(&self, base: i128, keep: impl Fn(&(i128, i128, i128)) -> bool, w: i128) -> bool {
        let (mut lo, mut hi) = (base, base);
        for &(k, l, h) in self.terms.iter().filter(|t| keep(t)) {
            lo += (k * l).min(k * h);
            hi += (k * l).max(k * h);
        }
        lo >= 0 && hi + self.width.max(1) - 1 < w
    }
}

impl Ctx<'_> {
    /// Whether, on the edge from node `a` to node `b` (paths from `a` take the back edges of
    /// `loops`), each thread of an `s`-unit touches only elements no other thread of that
    /// unit touches in either node.
    ///
    /// With the indices `W·u + base + r` of all accesses of both nodes, two threads `u ≠ u'`
    /// meet when `W·(u − u') = r' − r`. That is impossible when every `r` lies in `[0, W)`
    /// (each thread owns a block of `W` elements), or when every difference `r' − r` is a
    /// multiple of some `g` larger than `W·(n − 1)`, `n` the threads of an `s`-unit (the
    /// threads interleave with stride `W` inside blocks of `g`, as in `t + 32·j`).
    ///
    /// This uses the launch limit already assumed: CUDA's, or one an earlier proof of this
    /// function needed. [`Ctx::owned_if_limited`] tries tighter ones.
    pub(crate) fn owned(&self, a: usize, b: usize, s: Persp, loops: &BTreeSet<InstId>) -> bool {
        let assumed = self.max_blocks.get().unwrap_or(MAX_GRID_BLOCKS as u128);
        self.blocks.set(assumed);
        self.owned_under(a, b, s, loops)
    }

    /// [`Ctx::owned`] under a tighter launch limit than assumed so far: an index such as
    /// `b * 32` stays inside its `int` only for at most 2^26 blocks. A proof that needs a
    /// limit records it, and the launchers refuse larger launches (`Function::max_blocks`).
    /// Only worth it for an edge no written barrier already covers.
    pub(crate) fn owned_if_limited(&self, a: usize, b: usize, s: Persp, loops: &BTreeSet<InstId>) -> bool {
        self.under_tighter_limit(|| self.owned_under(a, b, s, loops))
    }

    /// Whether `proof` holds under some launch limit tighter than the one assumed so far,
    /// which is then recorded (the launchers refuse larger launches) and left assumed; else
    /// the assumed limit is restored.
    ///
    /// Every limit is tried, loosest first: the proofs are not monotone in the limit. A
    /// tighter one can make `x % k` fold to `x` (its range below `k`), which breaks the folds
    /// that need the remainder (`(x / k)·k + x % k`, a padded tile), so a pair proved at
    /// 2^24 blocks may fail at 2^16 (review R50 found accepted programs refused when only
    /// the tightest was tried).
    fn under_tighter_limit(&self, proof: impl Fn() -> bool) -> bool {
        let assumed = self.max_blocks.get().unwrap_or(MAX_GRID_BLOCKS as u128);
        for shift in (MIN_BLOCKS_SHIFT..=30).rev() {
            let cap = 1u128 << shift;
            if cap >= assumed {
                continue;
            }
            self.blocks.set(cap);
            if proof() {
                self.max_blocks.set(Some(cap));
                self.blocks.set(cap);
                return true;
            }
        }
        self.blocks.set(assumed);
        false
    }

    /// Whether every element nodes `a` and `b` touch is touched by the threads of one
    /// block only: each access's index is `K·B + r`, with `B` the block's `id()` in the
    /// grid, `K > 0` the same for every access of both nodes, and `r` (everything else, over
    /// its whole range where the access runs, plus the access's width) inside `[0, K)`.
    /// An element `e` then determines its block, `B = ⌊e / K⌋`, so two threads of different
    /// blocks never touch a common element and every conflict of the edge is between
    /// threads of one block: a block barrier orders it, where the region's unit alone asks
    /// for a grid-wide one (docs/soundness.md §4.4, "Conflicts inside one block").
    ///
    /// As [`Ctx::owned_if_limited`], an index that fits its type only for fewer blocks
    /// (`b * 256 + t` in an `int`) is proved under the loosest launch limit that makes it
    /// fit, which is recorded and which the launchers then enforce.
    pub(crate) fn within_one_block(&self, a: usize, b: usize) -> bool {
        self.blocks.set(self.max_blocks.get().unwrap_or(MAX_GRID_BLOCKS as u128));
        self.blocks_apart(a, b) || self.under_tighter_limit(|| self.blocks_apart(a, b))
    }

    /// [`Ctx::within_one_block`] with block ids bounded by `self.blocks`.
    fn blocks_apart(&self, a: usize, b: usize) -> bool {
        let block = Term::Rel(key(Persp::GRID), key(Persp::BLOCK));
        let (Some((ra, sa)), Some((rb, sb))) = (self.sites(a), self.sites(b)) else { return false };
        if ra != rb {
            return false;
        }
        let mut stride = None;
        for &(id, ptr, index, width) in sa.iter().chain(&sb) {
            let Some((mut form, reads)) = self.access_form(id, ptr, index) else { return false };
            // A counter's range holds inside its loop's body only.
            if !self.reads_inside(&reads) {
                return false;
            }
            let Some(k) = form.terms.remove(&block) else { return false };
            if k <= 0 || stride.is_some_and(|s| s != k) {
                return false;
            }
            stride = Some(k);
            let Some((lo, hi)) = self.range_at(&form, id) else { return false };
            if lo < 0 || hi.checked_add(width - 1).is_none_or(|h| h >= k) {
                return false;
            }
        }
        stride.is_some()
    }

    /// [`Ctx::owned`] with block ids bounded by `self.blocks`.
    fn owned_under(&self, a: usize, b: usize, s: Persp, loops: &BTreeSet<InstId>) -> bool {
        let Some((shape, mut rests)) = self.shape(a, (a, b), s, loops) else { return false };
        if a != b {
            match self.shape(b, (a, b), s, loops) {
                Some((sb, rb)) if sb == shape => rests.extend(rb),
                _ => return false,
            }
        }
        self.disjoint(&shape, &rests, s)
    }

    /// Whether threads `u ≠ u'` of an `s`-unit never touch a common element, when every
    /// access is `W·u + base + r` with the rests `rests` (each over its `width` elements).
    ///
    /// Blocked: every `r` and its width lie in `[0, W)`. Interleaved: every difference
    /// `r' − r` is a multiple of some `g`; then `W·(u − u') = r' − r + j' − j` (`j`, `j'`
    /// inside the widths) needs either `r' = r`, impossible when `W` is at least the widest
    /// access, or `|W·(u − u')| ≥ g − (width − 1)`, impossible when that exceeds
    /// `W·(n − 1)`, `n` the threads of an `s`-unit.
    ///
    /// A negative `W` (threads placed in reverse, `4·(127 − t)`) is `|W|·(−u)`: distinct
    /// threads have distinct `−u`, no farther apart than their `u`, and both proofs above
    /// depend on `u` only through `|u − u'|`, so they hold with `|W|` (since 2026-12-02;
    /// before, such accesses were never proved apart). The blocked proof within strides
    /// below also needs each unit's ids to start at 0, which `−u` does not, so it is not
    /// tried for them.
    pub(crate) fn disjoint(&self, shape: &Shape, rests: &[Rest], s: Persp) -> bool {
        let reversed = shape.2 < 0;
        let w = shape.2.checked_abs().unwrap_or(0);
        let width = rests.iter().map(|r| r.width).max().unwrap_or(1).max(1);
        let padded = rests.iter().any(|r| r.padded);
        // A padded position is `W·u + p·(u / k)` with one padding `p ≥ 0` and nothing else
        // of `u`, which `shape_of` makes sure of; without that, not even the blocked proof
        // holds (the threads' blocks need not be disjoint).
        if padded && !padding(shape).is_some_and(|(p, k)| p >= 0 && k > 0) {
            return false;
        }
        if rests.iter().all(|r| r.inside(r.c, |_| true, w)) {
            return true;
        }
        if w < width {
            return false;
        }
        let threads = match s.level {
            Level::Thread => Some(u128::from(s.n)),
            Level::Block => self.f.launch_bounds.map(|t| u128::from(t) * u128::from(s.n)),
            Level::Grid => None,
        };
        // A padded position holds only the blocked proofs: the one above, and blocks at a
        // stride below.
        if !padded {
            // A counter with one value is a constant; the others move `r` by multiples of
            // their coefficient.
            let c0 = rests.first().map_or(0, Rest::fixed);
            let g = rests.iter().fold(0u128, |g, r| {
                let g = gcd(g, (r.fixed() - c0).unsigned_abs());
                r.terms.iter().filter(|t| t.1 != t.2).fold(g, |g, t| gcd(g, t.0.unsigned_abs()))
            });
            // A constant rest (no counter moves, every access the same offset) needs only
            // `W ≥ width`.
            let reach = (width - 1).unsigned_abs();
            if g == 0 || threads.is_some_and(|n| g > reach && g - reach > w.unsigned_abs() * (n.max(1) - 1)) {
                return true;
            }
        }
        // The unit's ids start at 0 in each `s`-unit only when `u` is `id()` in the code of
        // `s` itself.
        let from_zero = shape.1 == key(s);
        !reversed && threads.is_some_and(|n| self.blocked_in_strides(w, padding(shape), from_zero, rests, n))
    }

    /// Blocked inside interleaved: every rest is `G·j + q` with `q` (and the access's
    /// width) in `[0, W)` and `G ≥ W·n`, as in `4·t + 1024·k + e` (`e < 4`, 256 threads:
    /// thread `t`'s chunks of four, one per stride of 1,024). Two threads `u ≠ u'` meet
    /// when `W·(u − u') + (q + i) − (q' + i') = G·(j' − j)` (`i`, `i'` inside the widths);
    /// the left side is at most `W·(n − 1) + W − 1 < G` in magnitude, so both sides are
    /// 0, and then `|W·(u − u')| < W` gives `u = u'`.
    ///
    /// `G` is the greatest common divisor of the coefficients at least `W·n` of the
    /// varying counters; each rest's constant (with its one-valued counters) splits into a
    /// multiple of `G` and a remainder in `[0, G)` that joins `q`.
    ///
    /// A padded position (`padding` = `(p, k)`: thread `u` at `P(u) = W·u + p·(u / k)`, see
    /// [`Ctx::shape_of`]) works the same with the span of the padded blocks for `W·n`: `P`
    /// grows by at least `W` from each thread to the next (`p ≥ 0`), so the blocks
    /// `[P(u), P(u) + W)` are disjoint and lie in `[0, S)` with `S = P(n − 1) + W`; two
    /// threads then meet when `P(u) − P(u') + q − q' = G·(j' − j)`, whose left side is less
    /// than `S ≤ G` in magnitude, so `j = j'`, and then the blocks give `u = u'`. As in
    /// `(t / 16) * 136 + (t % 16) * 8 + 2176 * c` (rows of 128 padded to 136, 256 threads:
    /// `S` = 2,168).
    ///
    /// That span assumes the unit's ids start at 0 (`from_zero`: `u` is `id()` in the code
    /// of `s` itself). An `s`-unit whose ids are `n` consecutive values from some `u₀` of a
    /// broader code (the grid's thread index inside one block) spans `P(u₀ + n − 1) −
    /// P(u₀) + W = W·n + p·(⌊(u₀ + n − 1)/k⌋ − ⌊u₀/k⌋)`, at most `W·n + p·⌈(n − 1)/k⌉`
    /// (`u₀ mod k = k − 1` is the worst), which is the span taken then.
    fn blocked_in_strides(
        &self,
        w: i128,
        padding: Option<(i128, i128)>,
        from_zero: bool,
        rests: &[Rest],
        n: u128,
    ) -> bool {
        if w <= 0 || n == 0 || rests.iter().any(|r| r.padded) != padding.is_some() {
            return false;
        }
        let Ok(n) = i128::try_from(n) else { return false };
        // The span of the threads' blocks: `W·n`, plus the padding up to the last thread
        // (over the worst window of ids when they need not start at 0).
        let pad = match padding {
            Some((p, k)) if p >= 0 && k > 0 => {
                let rows = if from_zero { (n - 1) / k } else { (n - 1 + k - 1) / k };
                p.checked_mul(rows)
            }
            Some(_) => None,
            None => Some(0),
        };
        let Some(stride) = w.checked_mul(n).and_then(|s| s.checked_add(pad?)) else { return false };
        let big = |k: i128| k.unsigned_abs() >= stride.unsigned_abs();
        let g = rests
            .iter()
            .flat_map(|r| r.terms.iter())
            .filter(|t| t.1 != t.2 && big(t.0))
            .fold(0u128, |g, t| gcd(g, t.0.unsigned_abs()));
        // Without a large coefficient any `G ≥ W·n` will do: take `W·n` itself.
        let g = if g == 0 { stride.unsigned_abs() } else { g };
        let Ok(g) = i128::try_from(g) else { return false };
        if g < stride {
            return false;
        }
        // The large terms are multiples of `G` (it divides every large coefficient): they
        // stay out of `q`.
        rests.iter().all(|r| r.inside(r.fixed().rem_euclid(g), |t| t.1 != t.2 && !big(t.0), w))
    }

    /// The shape of node `n`'s accesses and the rest of each, if every access has the form.
    fn shape(
        &self,
        n: usize,
        (a, b): (usize, usize),
        s: Persp,
        loops: &BTreeSet<InstId>,
    ) -> Option<(Shape, Vec<Rest>)> {
        let (root_of_node, sites) = self.sites(n)?;
        let (ia, ib) = (self.graph.nodes[a].inst, self.graph.nodes[b].inst);
        // A counter keeps its value from `a` to `b` only when its loop encloses both and no path
        // between them takes the back edge of that loop or of a loop around it. Every other
        // counter (of a loop repeating the nodes, or inside one of them) varies.
        let varying = |l: InstId| {
            !(self.cfg.inside(ia, l) && self.cfg.inside(ib, l))
                || loops.iter().any(|&m| m == l || self.cfg.inside(l, m))
        };
        self.shape_of(root_of_node, &sites, s, &varying)
    }

    /// The shape shared by accesses `sites` (instruction, pointer, index, width) to root
    /// `root` and the rest of each, if every access has the form `W·u + base + r`;
    /// `varying` says which loops' counters change between the accesses.
    pub(crate) fn shape_of(
        &self,
        root_of_node: prism_ir::MemId,
        sites: &[Site],
        s: Persp,
        varying: &dyn Fn(InstId) -> bool,
    ) -> Option<(Shape, Vec<Rest>)> {
        let mut shape: Option<Shape> = None;
        let mut rests = Vec::new();
        for &(id, ptr, index, width) in sites {
            let (mut idx, reads) = self.access_form(id, ptr, index)?;
            // A padded tile: `a·(u / k) + b·(u % k)` with `a ≥ k·b` and `b > 0` places thread
            // `u` at `b·u + (a − k·b)·(u / k)`, which grows by at least `b` from each thread
            // to the next (`u ≥ 0`). So the threads' blocks `[P(u), P(u) + b)` are disjoint,
            // and the blocked proof holds with `W = b` (the interleaved one does not). The
            // `(a − k·b)·(u / k)` part joins the base, marking the shape as padded, so only
            // accesses with the same padding share the shape.
            //
            // Only that one quotient joins the base: the position is `P(u)` above only when
            // the index holds no other term of the thread's `id()` (a second quotient
            // `−2·(u / 4)` would make it non-monotone), so any other `Quot` or `Mod` term
            // makes the proof fail below. Until 2026-11-29 every quotient of the thread's
            // `id()` joined the base (docs/soundness.md §4.4).
            let mut padded = None;
            let quot = idx.terms.iter().find_map(|(t, &a)| match t {
                Term::Quot(c, g, k) if *g == (Level::Thread, 1) => Some((*c, *g, *k, a)),
                _ => None,
            });
            if let Some((c, g, k, a)) = quot
                && let Some(&b) = idx.terms.get(&Term::Mod(c, g, k))
                && b > 0
                && a >= k.checked_mul(b)?
                && !idx.terms.contains_key(&Term::Rel(c, g))
            {
                idx.terms.remove(&Term::Mod(c, g, k));
                idx.terms.insert(Term::Rel(c, g), b);
                idx.terms.insert(Term::Quot(c, g, k), a - k * b);
                padded = Some(Term::Quot(c, g, k));
            }
            // The grid-wide position of a thread written by hand: `T·b + t`, `b` the block's
            // `id()` in a code broader than a block and `t` the thread's `id()` in its block,
            // with `T` the most threads a block may have (`@launch_bounds`, enforced at every
            // launch). Since `t < T`, distinct threads of the broader unit have distinct
            // `u = T·b + t` even when the block has fewer than `T` threads, and the `u` of
            // the threads of `m` consecutive blocks lie in `m·T` consecutive values, which is
            // all the proofs below assume of `u` for a unit of `m` blocks. When the barrier
            // scope is a block or narrower, `b` is a base instead (the usual proof). The
            // block's term stays in the base as a mark, so that such an index never shares
            // its shape with one of the grid's own `id()` (`g = blockDim·b + t`), which
            // differs from `T·b + t` when a block has fewer than `T` threads. Until
            // 2026-11-30 no index with both terms was proved, so block-uniform branches over
            // memory indexed `b * 64 + t` were `branch-conflict` where `g` passed.
            let mut unit = None;
            let mut base = BTreeMap::new();
            if padded.is_none() && !self.facts.narrower_eq(s, Persp { level: Level::Block, n: 1 }) {
                let thread = Term::Rel((Level::Block, 1), (Level::Thread, 1));
                let most = i128::from(self.f.launch_bounds.unwrap_or(MAX_BLOCK_THREADS));
                if let Some(&kt) = idx.terms.get(&thread)
                    && kt > 0
                    && let Some((block, kb)) = idx.terms.iter().find_map(|(t, &k)| match t {
                        Term::Rel(code, (Level::Block, 1))
                            if (code.0 == Level::Grid || (code.0 == Level::Block && code.1 > 1))
                                && Some(k) == kt.checked_mul(most) =>
                        {
                            Some((*t, k))
                        }
                        _ => None,
                    })
                    && let Term::Rel(code, _) = block
                {
                    idx.terms.remove(&thread);
                    idx.terms.remove(&block);
                    unit = Some((code, kt));
                    base.insert(block, kb);
                }
            }
            let mut rest = Rest { c: idx.c, terms: Vec::new(), width, padded: padded.is_some() };
            for (t, k) in idx.terms {
                match t {
                    // `Rel` terms sort before `Quot` ones: the unit is known here.
                    Term::Quot(c, ..) if padded == Some(t) && unit.is_some_and(|(u, _)| u == c) => {
                        base.insert(t, k);
                    }
                    Term::Rel(code, (Level::Thread, 1)) => {
                        if unit.is_some() {
                            return None;
                        }
                        unit = Some((code, k));
                    }
                    Term::Rel(_, target) => {
                        (self.facts.narrower_eq(s, Persp { level: target.0, n: target.1 })).then_some(())?;
                        base.insert(t, k);
                    }
                    Term::Iv(l) if varying(l) => {
                        let c = self.counter(l)?;
                        // The counter's range holds inside the loop's body only.
                        let body = self.cfg.insts[l].children[1];
                        reads.iter().all(|&(m, at)| m != l || self.cfg.frame_within(at, body)).then_some(())?;
                        // Keep the products small enough to add without overflow.
                        (k.checked_mul(c.lo)?.abs() < 1 << 60 && k.checked_mul(c.hi)?.abs() < 1 << 60).then_some(())?;
                        rest.terms.push((k, c.lo, c.hi));
                    }
                    Term::Iv(l) => {
                        let code = self.cfg.frames[self.cfg.insts[l].frame].code;
                        self.facts.narrower_eq(s, code).then_some(())?;
                        base.insert(t, k);
                    }
                    // The slot is fixed while its pipeline's body runs once: a base,
                    // like a counter of an enclosing loop.
                    Term::Ring(l, _) if !varying(l) => {
                        let code = self.cfg.frames[self.cfg.insts[l].frame].code;
                        self.facts.narrower_eq(s, code).then_some(())?;
                        base.insert(t, k);
                    }
                    Term::Sym | Term::Quot(..) | Term::Mod(..) | Term::Ring(..) => return None,
                }
            }
            // A negative `W` places the threads in reverse; [`Ctx::disjoint`] says why its
            // proofs hold for it too.
            let (code, w) = unit?;
            if w == 0 || rest.c.abs() >= 1 << 60 || !self.facts.narrower_eq(s, Persp { level: code.0, n: code.1 }) {
                return None;
            }
            let this = (root_of_node, code, w, base);
            match &shape {
                None => shape = Some(this),
                Some(sh) => (*sh == this).then_some(())?,
            }
            rests.push(rest);
        }
        Some((shape?, rests))
    }

    /// The single-element accesses of node `n` to its memory, each with its instruction,
    /// pointer register and index register, and the root they all use; `None` when some
    /// access is not one element (a call, a copy) or goes to another root.
    fn sites(&self, n: usize) -> Option<Sites> {
        crate::kept(&self.memo.sites, n, || self.find_sites(n))
    }

    /// [`Ctx::sites`], found.
    fn find_sites(&self, n: usize) -> Option<Sites> {
        let node = &self.graph.nodes[n];
        let info = &self.cfg.insts[node.inst];
        // The access sites, each with the register holding its element index.
        let mut sites = Vec::new();
        let candidates: Vec<InstId> = match &info.inst.kind {
            InstKind::Scope { kind, .. } => {
                if matches!(kind, ScopeKind::Async | ScopeKind::Pipeline) {
                    return None;
                }
                self.cfg.descendants(node.inst).collect()
            }
            _ => vec![node.inst],
        };
        let root_of_node = match node.mem {
            crate::graph::MemRef::Mem(m) => m,
            crate::graph::MemRef::Callee(_) => return None,
        };
        for id in candidates {
            let kind = &self.cfg.insts[id].inst.kind;
            if self.graph.footprint_of.contains_key(&id) && matches!(kind, InstKind::Call { .. }) {
                let fp = self.graph.footprint_of[&id];
                if matches!(&self.graph.regions[node.region].kind, crate::graph::RegionKind::Top(set) if set.contains(&fp))
                {
                    return None;
                }
            }
            for (n, (a, ptr, index)) in operands(self.f, kind).into_iter().enumerate() {
                let acc = &self.f.accesses[a.index()];
                if acc.kind == prism_ir::ir::AccessKind::Volatile {
                    continue;
                }
                let r = root(self.f, acc.mem);
                let relevant = match &self.graph.regions[node.region].kind {
                    crate::graph::RegionKind::Top(set) => {
                        self.graph.item(self.f, acc.mem).is_some_and(|i| set.contains(&i))
                    }
                    crate::graph::RegionKind::View(v) => r == root(self.f, *v),
                };
                if !relevant {
                    continue;
                }
                // Element accesses: loads and stores (vector ones over their width) and
                // atomics; and calls, over the range of elements their callee touches.
                let single = match kind {
                    InstKind::Load { .. }
                    | InstKind::Store { .. }
                    | InstKind::LoadVec { .. }
                    | InstKind::StoreVec { .. }
                    | InstKind::Call { .. } => true,
                    InstKind::Intrinsic { intrinsic, .. } => intrinsic.sig().family == Family::Atomics,
                    _ => false,
                };
                if !single || r != root_of_node {
                    return None;
                }
                sites.push(self.site(id, n, ptr, index)?);
            }
        }
        Some((root_of_node, sites))
    }

    /// Whether nodes `a` and `b` touch only elements given by constants, and no element
    /// in both: then no thread of one can meet a thread of the other, whatever the
    /// modes (`counters[0]` and `counters[1]`).
    pub(crate) fn disjoint_constants(&self, a: usize, b: usize) -> bool {
        let elements = |n: usize| -> Option<(prism_ir::MemId, BTreeSet<i128>)> {
            let (root, sites) = self.sites(n)?;
            let mut out = BTreeSet::new();
            for (id, ptr, index, width) in sites {
                let first = self.access_form(id, ptr, index)?.0.as_const()?;
                // A call may stand for a wide range of elements: enumerate few only.
                if width > 4096 {
                    return None;
                }
                out.extend((0..width).map(|k| first + k));
            }
            Some((root, out))
        };
        match (elements(a), elements(b)) {
            (Some((ra, x)), Some((rb, y))) => ra == rb && !x.is_empty() && !y.is_empty() && x.is_disjoint(&y),
            _ => false,
        }
    }

    /// Operand `n` (pointer `ptr`, index `index`) of instruction `id` as a [`Site`]: an
    /// element access from its index over its width, or a call over the elements its
    /// callee's accesses of the parameter reach (`n` counts the memory arguments as the
    /// callee counts its pointer parameters, [`Ctx::param_ranges`]).
    fn site(&self, id: InstId, n: usize, ptr: Reg, index: Option<Reg>) -> Option<Site> {
        let kind = &self.cfg.insts[id].inst.kind;
        match (kind, index) {
            (_, Some(ix)) => Some((id, ptr, Index::Reg(ix), crate::graph::width(self.f, &self.cfg, &self.defs, kind)?)),
            (InstKind::Call { func, .. }, None) => {
                let (lo, hi) = self.summaries[func.index()].as_ref()?.range(n)?;
                Some((id, ptr, Index::Const(lo), hi - lo + 1))
            }
            _ => None,
        }
    }

    /// The affine form of an access's starting index.
    /// The element access `id` starts at, relative to its root: the pointer's offset plus
    /// the index, as an affine form, with the loop counters it read. Every pair of nodes
    /// asks again of the same accesses, so the answer is kept, per launch limit assumed
    /// (`Ctx::blocks`, which bounds the ranges [`Ctx::eval`] checks the forms against).
    fn access_form(&self, id: InstId, ptr: Reg, index: Index) -> Option<(Affine, Reads)> {
        crate::kept(&self.memo.access_form, (id, ptr, index, self.blocks.get()), || {
            let mut reads = Vec::new();
            self.pointer_offset(ptr, &mut reads, 0)
                .and_then(|off| self.index_form(index, self.cfg.insts[id].frame, &mut reads)?.add(&off, 1))
                .map(|form| (form, reads))
        })
    }

    fn index_form(&self, index: Index, frame: FrameId, reads: &mut Reads) -> Option<Affine> {
        match index {
            Index::Reg(r) => self.eval(r, frame, reads, 0),
            Index::Const(c) => Some(Affine::constant(c)),
        }
    }

    /// For each of this function's pointer parameters `params` (by position, as
    /// [`crate::summary::Key::Param`] counts them), the least and greatest element index,
    /// relative to the parameter, of every element any access of it touches here (its own
    /// loads, stores and atomics over their widths, and its callees' ranges through the
    /// pointers it passes them); a parameter missing from the map has an access that could
    /// not be bounded. A caller's ownership proof takes a call as an access of those
    /// elements of its argument ([`Ctx::sites`]): `thread_inclusive_sum(s_t, 4, 0)` touches
    /// `s_t[0]` to `s_t[3]`. Every index is the affine form the proofs use (its value
    /// checked against its type, with every term over its whole range), and a loop
    /// counter's range counts only for reads inside the loop's body, where it holds.
    pub(crate) fn param_ranges(&self, params: &[prism_ir::MemId]) -> HashMap<usize, (i128, i128)> {
        // The widest launch: ranges of `id()` terms over it hold for every launch.
        let assumed = self.blocks.replace(MAX_GRID_BLOCKS as u128);
        let mut out: HashMap<usize, Option<(i128, i128)>> = HashMap::new();
        for (id, info) in self.cfg.insts.iter().enumerate() {
            for (n, (a, ptr, index)) in operands(self.f, &info.inst.kind).into_iter().enumerate() {
                let r = root(self.f, self.f.accesses[a.index()].mem);
                let Some(k) = params.iter().position(|&m| m == r) else { continue };
                let got = self.site(id, n, ptr, index).and_then(|site| self.site_range(site));
                let e = out.entry(k).or_insert(got);
                *e = match (*e, got) {
                    (Some((l0, h0)), Some((l1, h1))) => Some((l0.min(l1), h0.max(h1))),
                    _ => None,
                };
            }
        }
        self.blocks.set(assumed);
        out.into_iter().filter_map(|(k, r)| Some((k, r?))).collect()
    }

    /// Whether every loop counter in `reads` was read inside its loop's body: only there
    /// does a counter take the values [`Ctx::counter`] gives it (after the loop it holds one
    /// step more, and a loop that never runs leaves it at its start). The language scopes a
    /// `for` variable to its body, so today no read lies outside; every use of a counter's
    /// range asks anyway, so that the proof does not rest on that rule (review R34).
    pub(crate) fn reads_inside(&self, reads: &Reads) -> bool {
        reads.iter().all(|&(l, at)| self.cfg.frame_within(at, self.cfg.insts[l].children[1]))
    }

    /// The least and greatest element, relative to its root's pointer, that `site` touches.
    fn site_range(&self, (id, ptr, index, width): Site) -> Option<(i128, i128)> {
        let (form, reads) = self.access_form(id, ptr, index)?;
        let inside = self.reads_inside(&reads);
        let (lo, hi) = self.range(&form).filter(|_| inside)?;
        let hi = hi.checked_add(width.checked_sub(1)?)?;
        (lo.abs() < 1 << 60 && hi.abs() < 1 << 60).then_some((lo, hi))
    }

    /// The element offset of a pointer from its root's pointer.
    pub(crate) fn pointer_offset(&self, r: Reg, reads: &mut Reads, depth: u32) -> Option<Affine> {
        if depth > 64 {
            return None;
        }
        match self.defs.get(&r).map(Vec::as_slice) {
            None if self.f.params.contains(&r) && self.f.reg_ty(r) == Type::Ptr => Some(Affine::constant(0)),
            Some([d]) => match &self.cfg.insts[*d].inst.kind {
                InstKind::SharedAddr { .. } => Some(Affine::constant(0)),
                InstKind::PtrOffset { base, offset, .. } => {
                    let at = self.cfg.insts[*d].frame;
                    let b = self.pointer_offset(*base, reads, depth + 1)?;
                    b.add(&self.eval(*offset, at, reads, depth + 1)?, 1)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The affine form of an integer register read at `frame`; records where loop counters
    /// are read in `reads`.
    pub(crate) fn eval(&self, r: Reg, frame: FrameId, reads: &mut Reads, depth: u32) -> Option<Affine> {
        if depth > 64 {
            return None;
        }
        if let Some(l) = self.counter_of(r) {
            reads.push((l, frame));
            return Some(Affine::term(Term::Iv(l)));
        }
        let [d] = self.defs.get(&r)?.as_slice() else { return None };
        let at = self.cfg.insts[*d].frame;
        let int = |x: Reg| matches!(self.f.reg_ty(x), Type::Scalar(s) if s.is_int());
        let form = match &self.cfg.insts[*d].inst.kind {
            InstKind::Const { value: ConstValue::Int(v), .. } => Some(Affine::constant(*v)),
            InstKind::Copy { src, .. } => self.eval(*src, at, reads, depth + 1),
            // A conversion between integer types keeps the value when the value fits the new
            // type, which the range check below makes sure of.
            k if let Some(a) = self.int_conversion(k) => self.eval(a, at, reads, depth + 1),
            InstKind::RelId { code, target, .. } => Some(Affine::term(Term::Rel(key(*code), key(*target)))),
            // Negation never wraps where the form fits the type, which is checked below.
            InstKind::Unary { op: UnOp::Neg, arg, .. } if int(*arg) => self.eval(*arg, at, reads, depth + 1)?.scale(-1),
            InstKind::Binary { op: BinOp::Rem, lhs, rhs, .. }
                if let Some(l) = self.pipeline_counter(*lhs)
                    && let Some(k) = self.eval(*rhs, at, reads, depth + 1).and_then(|b| b.as_const())
                    && k > 0 =>
            {
                reads.push((l, frame));
                Some(Affine::term(Term::Ring(l, k)))
            }
            InstKind::Binary { op, lhs, rhs, .. } => {
                let a = self.eval(*lhs, at, reads, depth + 1)?;
                let b = self.eval(*rhs, at, reads, depth + 1)?;
                match op {
                    BinOp::Add => a.add(&b, 1).map(Affine::fold_div_mod),
                    BinOp::Sub => a.add(&b, -1).map(Affine::fold_div_mod),
                    BinOp::Mul => match (a.as_const(), b.as_const()) {
                        (Some(k), _) => b.scale(k),
                        (_, Some(k)) => a.scale(k),
                        _ => None,
                    },
                    BinOp::Shl => match b.as_const() {
                        Some(k) if (0..31).contains(&k) => a.scale(1 << k),
                        _ => None,
                    },
                    // Of an `id()`, which is never negative, by a positive constant.
                    BinOp::Div => match (a.as_id(), b.as_const()) {
                        (Some((c, t)), Some(k)) if k > 0 => Some(Affine::term(Term::Quot(c, t, k))),
                        _ => None,
                    },
                    // `x % k` and `x & (2^j - 1)` are `x` itself when `x` already lies in
                    // `[0, k)`: `t & 31` with at most 32 threads.
                    BinOp::Rem => match (self.range(&a), b.as_const()) {
                        (Some((lo, hi)), Some(k)) if k > 0 && lo >= 0 && hi < k => Some(a),
                        _ => match (a.as_id(), b.as_const()) {
                            (Some((c, t)), Some(k)) if k > 0 => Some(Affine::term(Term::Mod(c, t, k))),
                            _ => None,
                        },
                    },
                    BinOp::BitAnd => match (self.range(&a), b.as_const()) {
                        (Some((lo, hi)), Some(m)) if m >= 0 && (m + 1) & m == 0 && lo >= 0 && hi <= m => Some(a),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        }?;
        // The backends compute in the register's type, wrapping on overflow: the affine form
        // is the value only when no value it can take leaves that type.
        self.fits(&form, self.f.reg_ty(r)).then_some(form)
    }

    /// The operand of a conversion between integer types: an implicit `cast`, or one the
    /// source writes (`uint(t)`, `int64(i)`), which lowers to a cast intrinsic. The simulator
    /// and the CUDA convert integers by value when the value fits (`value::cast`, C's
    /// conversions), so the affine forms follow both alike ([`Ctx::eval`], `Ctx::open`;
    /// review R43 found `open` missing the intrinsic).
    pub(crate) fn int_conversion(&self, k: &InstKind) -> Option<Reg> {
        let int = |x: Reg| matches!(self.f.reg_ty(x), Type::Scalar(s) if s.is_int());
        match k {
            InstKind::Cast { dst, arg } if int(*dst) && int(*arg) => Some(*arg),
            InstKind::Intrinsic { dsts, intrinsic, args, .. }
                if intrinsic.sig().family == Family::Cast
                    && let ([d], [IntrArg::Val(a)]) = (dsts.as_slice(), args.as_slice())
                    && int(*d)
                    && int(*a) =>
            {
                Some(*a)
            }
            _ => None,
        }
    }

    /// Whether every value `form` can take lies in the range of type `ty`, with every term
    /// over its whole range (`id()` over the units of its code, a counter over its bounds).
    fn fits(&self, form: &Affine, ty: Type) -> bool {
        let Type::Scalar(s) = ty else { return false };
        let Some((min, max)) = int_range(s) else { return false };
        self.range(form).is_some_and(|(lo, hi)| min <= lo && hi <= max)
    }

    /// The least and greatest value of `form`.
    pub(crate) fn range(&self, form: &Affine) -> Option<(i128, i128)> {
        self.range_under(form, &[])
    }

    /// The least and greatest value of `form` where instruction `inst` runs: its terms over
    /// their ranges ([`Ctx::range`]), narrowed by the conditions of the `if`s around `inst`
    /// ([`Ctx::branch_bounds`]).
    pub(crate) fn range_at(&self, form: &Affine, inst: InstId) -> Option<(i128, i128)> {
        self.range_under(form, &self.branch_bounds(inst))
    }

    /// The least and greatest value of `form` with its terms narrowed by `bounds`
    /// ([`Ctx::term_range_under`], which with no bounds is [`Ctx::term_range`]).
    fn range_under(&self, form: &Affine, bounds: &[(Term, i128, i128)]) -> Option<(i128, i128)> {
        let (mut lo, mut hi) = (form.c, form.c);
        for (t, &k) in &form.terms {
            let (a, b) = self.term_range_under(*t, bounds)?;
            let (x, y) = (k.checked_mul(a)?, k.checked_mul(b)?);
            lo = lo.checked_add(x.min(y))?;
            hi = hi.checked_add(x.max(y))?;
        }
        Some((lo, hi))
    }

    /// [`Ctx::term_range`] narrowed by `bounds`: a term's own bound, and an `id()`'s for its
    /// quotient and remainder.
    fn term_range_under(&self, t: Term, bounds: &[(Term, i128, i128)]) -> Option<(i128, i128)> {
        let (lo, hi) = match t {
            Term::Quot(c, u, k) => self.term_range_under(Term::Rel(c, u), bounds).map(|(lo, hi)| (lo / k, hi / k))?,
            Term::Mod(c, u, k) => self.term_range_under(Term::Rel(c, u), bounds).map(|(_, hi)| (0, hi.min(k - 1)))?,
            _ => self.term_range(t)?,
        };
        let (lo, hi) = bounds.iter().filter(|b| b.0 == t).fold((lo, hi), |(lo, hi), b| (lo.max(b.1), hi.min(b.2)));
        // An empty range is a branch no thread takes: left unnarrowed rather than reasoned
        // about.
        if lo > hi { self.term_range(t) } else { Some((lo, hi)) }
    }

    /// What the `if`s around instruction `inst` say of its terms: for each comparison of two
    /// affine values (`<`, `<=`, `>`, `>=`) that differ by one term and that the branch
    /// `inst` lies in knows the outcome of ([`Ctx::condition_facts`]: the condition itself,
    /// or a term of an `and` in its `then` branch or of an `or` in its `else` branch, through
    /// `not` and flags), the bound that outcome puts on that term. Sound because a value's affine form
    /// is its value wherever the register is read ([`Ctx::eval`]: one definition, never
    /// wrapping), an `id()` is fixed for its thread, and a loop counter the condition reads
    /// is read inside its loop's body, where `inst` then lies too, in the same iteration
    /// (the counter changes at the latch only). Until 2026-11-30 an index that only a branch
    /// kept inside a pipeline slot (`if t < 32:` around `slot[4 * t + 512]`) was refused
    /// (docs/soundness.md §4.3.2, "Several copies per slot"), and until 2026-12-01 one that
    /// a term of an `and` kept there (`if t < 32 and k < n:`).
    pub(crate) fn branch_bounds(&self, inst: InstId) -> Vec<(Term, i128, i128)> {
        let mut out = Vec::new();
        for f in self.cfg.ancestors(self.cfg.insts[inst].frame) {
            let Some(o) = self.cfg.frames[f].owner else { continue };
            let InstKind::If { cond, .. } = &self.cfg.insts[o].inst.kind else { continue };
            let then = match self.cfg.insts[o].children.iter().position(|&c| c == f) {
                Some(0) => true,
                Some(1) => false,
                _ => continue,
            };
            let mut facts = Vec::new();
            self.condition_facts((*cond, o), then, &mut facts, 0);
            for (d, holds) in facts {
                if let Some(b) = self.comparison_bound(d, holds, inst) {
                    out.push(b);
                }
            }
        }
        out
    }

    /// The comparisons whose outcome is known where register `cond`, read by instruction
    /// `reader`, is `truth`: each definition's instruction and the outcome it had, pushed on
    /// `out`. `cond` must be defined once as a comparison, as a copy of a register that is
    /// (the lowering's `expr_into`), or as `not` of one (the outcome turned round); or be
    /// the register of an `and` or an `or`, which the lowering computes as `r = a` and then
    /// `if r: r = b` (`and`; `or` puts the second copy in the `else` branch), both copies in
    /// the frame of `reader` and that `if` between them and `reader`. Where `r` is true
    /// after an `and`, both copies ran and copied true: the `if` runs its branch only when
    /// `a` was true, and `r` is otherwise `a`; so both terms' facts hold, and likewise both
    /// negations where an `or` is false. A flag assigned more than once (`ok = ok and t <
    /// 32`) is followed through the definition that ran last before `reader`
    /// ([`Ctx::last_def_before`]). Anything else (a branch of the `if` that is not empty, an
    /// `and` that is false, a definition between) says nothing, and nothing is pushed.
    fn condition_facts(&self, (cond, reader): (Reg, InstId), truth: bool, out: &mut Vec<(InstId, bool)>, depth: u32) {
        if depth > 16 {
            return;
        }
        let Some(defs) = self.defs.get(&cond) else { return };
        if let [first, second] = defs.as_slice()
            && let Some((sa, sb, arm)) = self.and_or_shape((cond, reader), (*first, *second))
        {
            // `and` (the copy in `then`) known true, or `or` (in `else`) known false.
            if (arm == 0) == truth {
                self.condition_facts((sa, *first), truth, out, depth + 1);
                self.condition_facts((sb, *second), truth, out, depth + 1);
            }
            return;
        }
        let d = match defs.as_slice() {
            [d] => *d,
            defs => match self.last_def_before(defs, reader) {
                Some(d) => d,
                None => return,
            },
        };
        match &self.cfg.insts[d].inst.kind {
            InstKind::Binary { op: BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, .. } => out.push((d, truth)),
            InstKind::Copy { src, .. } => self.condition_facts((*src, d), truth, out, depth + 1),
            InstKind::Unary { op: UnOp::Not, arg, .. } => self.condition_facts((*arg, d), !truth, out, depth + 1),
            _ => {}
        }
    }

    /// Of a register's definitions `defs`, the one that ran last before instruction
    /// `reader`: the last that stands in `reader`'s own block before it, when no other lies
    /// between them (in that block, or nested in an instruction of it). Every pass through
    /// the block that reaches `reader` runs that definition first and no other after it, so
    /// `reader` reads its value; a definition outside the block cannot run in between
    /// (registers are the thread's own, and a call writes none of the caller's).
    fn last_def_before(&self, defs: &[InstId], reader: InstId) -> Option<InstId> {
        let at = &self.cfg.insts[reader];
        let d = *defs
            .iter()
            .filter(|&&d| self.cfg.insts[d].frame == at.frame && self.cfg.insts[d].index < at.index)
            .max_by_key(|&&d| self.cfg.insts[d].index)?;
        let di = self.cfg.insts[d].index;
        let between =
            defs.iter().any(|&x| x != d && self.cfg.index_in(x, at.frame).is_some_and(|i| di < i && i < at.index));
        (!between).then_some(d)
    }

    /// The lowering's shape of `cond = a and b` (or `or`) read by `reader`: the sources of
    /// the two copies `first` and `second` and the branch of the `if` that holds the second
    /// (0: `then`, an `and`; 1: `else`, an `or`), when they are in that shape: the `if` on
    /// `cond` standing in the first copy's block between it and `reader`, the second copy
    /// the last instruction of one of its branches and the other branch empty.
    fn and_or_shape(
        &self,
        (cond, reader): (Reg, InstId),
        (first, second): (InstId, InstId),
    ) -> Option<(Reg, Reg, usize)> {
        let (a, b) = (&self.cfg.insts[first], &self.cfg.insts[second]);
        let (InstKind::Copy { src: sa, .. }, InstKind::Copy { src: sb, .. }) = (&a.inst.kind, &b.inst.kind) else {
            return None;
        };
        let i = self.cfg.frames[b.frame].owner?;
        let branch = &self.cfg.insts[i];
        let InstKind::If { cond: c, .. } = &branch.inst.kind else { return None };
        let arm = branch.children.iter().position(|&f| f == b.frame)?;
        let other = branch.children.get(1 - arm.min(1));
        let reader_frame = self.cfg.insts[reader].frame;
        let in_order = branch.frame == a.frame
            && reader_frame == a.frame
            && a.index < branch.index
            && branch.index < self.cfg.insts[reader].index;
        let last_of_arm = self.cfg.frames[b.frame].insts.last() == Some(&second);
        let other_empty = other.is_some_and(|&f| self.cfg.frames[f].insts.is_empty());
        (*c == cond && in_order && last_of_arm && other_empty).then_some((*sa, *sb, arm))
    }

    /// The bound comparison `d` (`<`, `<=`, `>`, `>=` of two affine values that differ by
    /// one term) puts on that term where its outcome is `holds`, for instruction `inst`.
    ///
    /// A side that is the `min` of two integers where the fact bounds it from above (`t <
    /// min(w, 32)`), or their `max` where it bounds it from below, bounds each of them alike
    /// (`t < min(w, 32)` holds only where `t < 32` does), so the bound is taken through the
    /// operand that gives one (review R33's over-approximation, since 2026-12-02).
    fn comparison_bound(&self, d: InstId, holds: bool, inst: InstId) -> Option<(Term, i128, i128)> {
        let InstKind::Binary { op, lhs, rhs, .. } = &self.cfg.insts[d].inst.kind else { return None };
        // Whether the fact bounds `lhs` from above (`lhs - rhs <= u`).
        let (below, _) = fact(*op, holds)?;
        // The upper side may be a `min`, the lower one a `max`: each operand in turn.
        let (upper, lower) = if below { (*rhs, *lhs) } else { (*lhs, *rhs) };
        let at = self.cfg.insts[d].frame;
        let uppers = self.min_max_operands((upper, at), "min");
        let lowers = self.min_max_operands((lower, at), "max");
        uppers.iter().find_map(|&up| {
            lowers.iter().find_map(|&lo| {
                let (l, r) = if below { (lo, up) } else { (up, lo) };
                self.comparison_bound_of((*op, l, r), holds, inst)
            })
        })
    }

    /// The values a side of a comparison, register `r` read in block `at`, may stand for:
    /// itself, and when it is defined once by the integer intrinsic `which` (`min` or `max`)
    /// of two values, those two, read where that intrinsic reads them (so that a loop
    /// counter among them is checked where it is read, as [`Ctx::eval`] checks the operands
    /// of any definition it follows).
    fn min_max_operands(&self, (r, at): (Reg, FrameId), which: &str) -> Vec<(Reg, FrameId)> {
        let mut out = vec![(r, at)];
        if let Some([d]) = self.defs.get(&r).map(Vec::as_slice)
            && let InstKind::Intrinsic { intrinsic, args, dsts, .. } = &self.cfg.insts[*d].inst.kind
            && intrinsic.sig().name == which
            && let ([_], [IntrArg::Val(a), IntrArg::Val(b)]) = (dsts.as_slice(), args.as_slice())
            && [r, *a, *b].iter().all(|&x| matches!(self.f.reg_ty(x), Type::Scalar(s) if s.is_int()))
        {
            let frame = self.cfg.insts[*d].frame;
            out.extend([(*a, frame), (*b, frame)]);
        }
        out
    }

    /// [`Ctx::comparison_bound`] of a comparison read as `lhs op rhs`, each side a value and
    /// the block it is read in.
    fn comparison_bound_of(
        &self,
        (op, (lhs, lat), (rhs, rat)): (BinOp, (Reg, FrameId), (Reg, FrameId)),
        holds: bool,
        inst: InstId,
    ) -> Option<(Term, i128, i128)> {
        let mut reads = Vec::new();
        let (a, b) = (self.eval(lhs, lat, &mut reads, 0)?, self.eval(rhs, rat, &mut reads, 0)?);
        // A counter read outside its loop's body (or in another iteration) says nothing
        // of `inst`.
        if !reads.iter().all(|&(l, fr)| {
            let body = self.cfg.insts[l].children[1];
            self.cfg.frame_within(fr, body) && self.cfg.frame_within(self.cfg.insts[inst].frame, body)
        }) {
            return None;
        }
        let diff = a.add(&b, -1)?;
        let (below, u) = fact(op, holds)?;
        let [(&t, &k)] = diff.terms.iter().collect::<Vec<_>>()[..] else { return None };
        let r = u.checked_sub(diff.c)?;
        // `k t <= r` or `k t >= r`; dividing by a negative `k` turns it round.
        let (upper, bound) = if k > 0 { (below, r) } else { (!below, r) };
        let bound = if upper { floor_div(bound, k) } else { ceil_div(bound, k) };
        Some(if upper { (t, i128::MIN, bound) } else { (t, bound, i128::MAX) })
    }

    /// The values a term takes: `id()` of a target unit counts the target's units in one
    /// unit of the code (threads per block at most `@launch_bounds`, or CUDA's 1024; blocks
    /// per grid at most CUDA's 2^31 - 1; threads per launch at most 2^31 - 1, which every
    /// launcher enforces so that `id()` over the grid fits its `int`); a counter its
    /// constant bounds.
    fn term_range(&self, t: Term) -> Option<(i128, i128)> {
        match t {
            Term::Iv(l) => self.counter(l).map(|c| (c.lo, c.hi)),
            Term::Sym => None,
            Term::Quot(c, t, k) => self.term_range(Term::Rel(c, t)).map(|(lo, hi)| (lo / k, hi / k)),
            Term::Mod(c, t, k) => self.term_range(Term::Rel(c, t)).map(|(_, hi)| (0, hi.min(k - 1))),
            Term::Ring(_, k) => Some((0, k - 1)),
            Term::Rel((cl, cn), (tl, tn)) => {
                let threads_per_block = i128::from(self.f.launch_bounds.unwrap_or(MAX_BLOCK_THREADS));
                let blocks = i128::try_from(self.blocks.get()).unwrap_or(MAX_GRID_BLOCKS);
                // The threads, or blocks, in one unit of the code.
                let size = |level: Level, n: u64| -> i128 {
                    let n = i128::from(n);
                    match (level, tl) {
                        (Level::Thread, _) => n,
                        (Level::Block, Level::Thread) => n * threads_per_block,
                        (Level::Block, _) => n,
                        // Launches are refused beyond 2^31 - 1 threads
                        // (`prism_ir::ir::MAX_LAUNCH_THREADS`).
                        (Level::Grid, Level::Thread) => {
                            (blocks * threads_per_block).min(i128::from(prism_ir::ir::MAX_LAUNCH_THREADS))
                        }
                        (Level::Grid, _) => blocks,
                    }
                };
                let units = size(cl, cn) / i128::from(tn.max(1));
                Some((0, (units - 1).max(0)))
            }
        }
    }

    /// The pipeline loop whose counter `r` is, if any: the loop that is the only
    /// instruction besides the counter's setup in a pipeline scope, or, in a warp-specialised
    /// pipeline, the loop of one case of the split that is the pipeline scope's body
    /// (`prism_ir::lower`, `Cx::pipeline` and `Cx::specialised`, build them so; nothing else
    /// makes `pipeline` scopes, and user code in a specialised pipeline lies inside a case's
    /// loop, never beside it). Both counters start at 0, step by 1 and stop at the count, an
    /// `int`, so they never wrap: `i % k` lies in `[0, k)`. A specialised case's counter is
    /// the same in the case's threads only, which the loop's frame's code says (and
    /// [`Ctx::shape_of`] asks of a `Term::Ring` in a base).
    pub(crate) fn pipeline_counter(&self, r: Reg) -> Option<InstId> {
        crate::kept(&self.memo.pipeline_counter, r, || self.find_pipeline_counter(r))
    }

    /// [`Ctx::pipeline_counter`], searched.
    fn find_pipeline_counter(&self, r: Reg) -> Option<InstId> {
        self.cfg.insts.iter().enumerate().find_map(|(id, info)| {
            let InstKind::Loop { counter: Some(c), .. } = &info.inst.kind else { return None };
            (*c == r && self.is_pipeline_loop(id)).then_some(id)
        })
    }

    /// Whether loop `l` is a pipeline's loop over its tiles ([`Ctx::pipeline_counter`]).
    pub(crate) fn is_pipeline_loop(&self, l: InstId) -> bool {
        let pipeline_scope =
            |i: InstId| matches!(self.cfg.insts[i].inst.kind, InstKind::Scope { kind: ScopeKind::Pipeline, .. });
        let frame = &self.cfg.frames[self.cfg.insts[l].frame];
        let Some(owner) = frame.owner else { return false };
        match (&self.cfg.insts[owner].inst.kind, frame.kind) {
            // A plain pipeline: the loop stands in the scope's body.
            (InstKind::Scope { .. }, _) => pipeline_scope(owner),
            // A warp-specialised one: in a case of the split that stands in the scope's body.
            (InstKind::Split { .. }, crate::cfg::FrameKind::Case { .. }) => {
                self.cfg.frames[self.cfg.insts[owner].frame].owner.is_some_and(pipeline_scope)
            }
            _ => false,
        }
    }

    /// The loop whose counter `r` is, if any.
    pub(crate) fn counter_of(&self, r: Reg) -> Option<InstId> {
        crate::kept(&self.memo.counter_of, r, || self.find_counter_of(r))
    }

    /// [`Ctx::counter_of`], searched.
    fn find_counter_of(&self, r: Reg) -> Option<InstId> {
        let ds = self.defs.get(&r)?;
        ds.iter()
            .copied()
            .find(|&d| {
                let fr = self.cfg.insts[d].frame;
                self.cfg.frames[fr].owner.is_some_and(|l| {
                    matches!(self.cfg.insts[l].inst.kind, InstKind::Loop { .. })
                        && self.cfg.insts[l].children.get(2) == Some(&fr)
                        && self.counter(l).is_some_and(|c| c.reg == r)
                })
            })
            .and_then(|d| self.cfg.frames[self.cfg.insts[d].frame].owner)
    }

    /// The counter of a `for` loop with constant bounds and step: `header` tests
    /// `i < end` (or `i > end` counting down), `latch` adds the step, and `i` is set once
    /// before the loop.
    pub(crate) fn counter(&self, l: InstId) -> Option<Counter> {
        crate::kept(&self.memo.counter, l, || self.find_counter(l))
    }

    /// [`Ctx::counter`], searched.
    fn find_counter(&self, l: InstId) -> Option<Counter> {
        let InstKind::Loop { header, cond, latch, .. } = &self.cfg.insts[l].inst.kind else { return None };
        let (op, iv, end) = header.insts.iter().find_map(|i| match &i.kind {
            InstKind::Binary { dst, op: op @ (BinOp::Lt | BinOp::Gt), lhs, rhs } if dst == cond => {
                Some((*op, *lhs, *rhs))
            }
            _ => None,
        })?;
        let step = latch.insts.iter().find_map(|i| match &i.kind {
            InstKind::Binary { dst, op: BinOp::Add, lhs, rhs } if *dst == iv && *lhs == iv => Some(*rhs),
            _ => None,
        })?;
        let defs = self.defs.get(&iv)?;
        if defs.len() != 2 {
            return None;
        }
        let init = defs.iter().copied().find(|&d| !self.cfg.inside(d, l))?;
        let init = match &self.cfg.insts[init].inst.kind {
            InstKind::Copy { src, .. } => self.konst(*src)?,
            InstKind::Const { value: ConstValue::Int(v), .. } => *v,
            _ => return None,
        };
        let (end, step) = (self.konst(end)?, self.konst(step)?);
        let (lo, hi) = match op {
            BinOp::Lt if step > 0 && init < end => (init, init + (end - 1 - init) / step * step),
            BinOp::Gt if step < 0 && init > end => (init - (init - end - 1) / -step * -step, init),
            _ => return None,
        };
        // The counter takes the values lo..=hi only if the step that leaves the range does
        // not wrap around in the counter's type (`range(2147483600, 2147483647, 100)` on an
        // `int` would wrap to a negative value and go on).
        let Type::Scalar(s) = self.f.reg_ty(iv) else { return None };
        let (min, max) = int_range(s)?;
        let last = if step > 0 { hi + step } else { lo + step };
        if !(min <= lo && hi <= max && min <= last && last <= max) {
            return None;
        }
        Some(Counter { reg: iv, lo, hi, step: step.abs() })
    }

    /// The value of a register defined once by an integer constant.
    fn konst(&self, r: Reg) -> Option<i128> {
        crate::graph::constant(&self.cfg, &self.defs, r)
    }
}

/// The fact comparison `lhs op rhs` states where its outcome is `holds`, as `lhs - rhs <= u`
/// (`below`) or `lhs - rhs >= u`: `(below, u)`, for `<`, `<=`, `>` and `>=` of integers.
fn fact(op: BinOp, holds: bool) -> Option<(bool, i128)> {
    Some(match (op, holds) {
        (BinOp::Lt, true) | (BinOp::Ge, false) => (true, -1),
        (BinOp::Le, true) | (BinOp::Gt, false) => (true, 0),
        (BinOp::Gt, true) | (BinOp::Le, false) => (false, 1),
        (BinOp::Ge, true) | (BinOp::Lt, false) => (false, 0),
        _ => return None,
    })
}

/// CUDA's most threads per block.
const MAX_BLOCK_THREADS: u64 = 1024;

/// CUDA's most blocks per grid (`gridDim.x`).
const MAX_GRID_BLOCKS: i128 = (1 << 31) - 1;

/// The tightest launch limit a proof may assume, as a power of two: 65536 blocks. Below
/// that, a barrier is cheaper than refusing ordinary launches.
const MIN_BLOCKS_SHIFT: u32 = 16;

/// The values of an integer type.
fn int_range(s: Scalar) -> Option<(i128, i128)> {
    Some(match s {
        Scalar::I32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
        Scalar::U32 => (0, i128::from(u32::MAX)),
        Scalar::I64 => (i128::from(i64::MIN), i128::from(i64::MAX)),
        Scalar::U64 => (0, i128::from(u64::MAX)),
        _ => return None,
    })
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// `a / b` rounded down (`b != 0`).
fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) { q - 1 } else { q }
}

/// `a / b` rounded up (`b != 0`).
fn ceil_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) == (b < 0)) { q + 1 } else { q }
}
