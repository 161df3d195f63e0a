//! Kernels over pairs of blocks (docs/soundness.md §7): `@requires(grid[1], block[2], ...)`,
//! code at `block[2]` that exchanges data between the two blocks of a pair through global
//! memory, so that synchronisation inference must place grid-wide barriers (a barrier over
//! `block[2]` runs as `this_grid().sync()` with a cooperative launch), and may place them only
//! where every block of the grid reaches them.
//!
//! A pair owns `2 * T * K` elements of `gx` (`g2`, a `block[2]` view; `T` threads per block,
//! `K` of 1 or 2). Pair phases write them through `thread[1]` views of the pair (each thread
//! of the pair its own elements) or through a block view of either block's half, read any
//! of them, update them with commuting atomics, let one block of the pair write them all in
//! a `split(block)` case through a claim, run atomics in both blocks' cases of a split (or
//! atomics in one and reads in the other), or call a function entered at `block[2]` on them.
//! Between them come segments of block code, each with shared arrays of its own and the
//! phases of [`Gen::phase`], so that the block barriers of the ordinary phases and the grid
//! barriers of the pair phases meet. Forms that must be refused: atomics against reads in
//! two cases of one split (`split-conflict`); pair phases that need a grid barrier inside a
//! branch or `while` loop uniform over the pair only (or a `for` loop of constant count,
//! which placement also refuses, conservatively), and a callee entered at `block[2]` that
//! reads what the other block of the pair wrote (`unplaceable-barrier` in each). Review
//! R68 found the first version's refusals mostly masked (a read of a name its claim hid, a
//! refused callee written into programs that never called it, pair-uniform conditions
//! that were one constant) and fixed them.

use super::{Cx, Gen, Program, put};

/// What the pair phases of one program share.
struct Pair {
    /// Threads per block.
    tb: u32,
    /// Elements of `g2` per thread of the pair.
    k: u32,
    /// Nesting of loops and branches around the pair phase (kept small).
    depth: u32,
    /// The body of `pair_bump`, once a phase calls it (none: the function is not written,
    /// since a body that must be refused would refuse the program without a call).
    bump: Option<Bump>,
}

/// The body of the function entered at `block[2]` ([`Gen::pair_helper`]).
#[derive(Clone, Copy)]
enum Bump {
    /// Commuting atomics over the pair's elements (accepted; the caller orders them against
    /// its own accesses).
    Atomics,
    /// A write of each thread's own element, then a read of it (accepted: one thread's).
    OwnRead,
    /// A write of each thread's own element, then a read of another block's (refused: a
    /// grid barrier inside a function entered below `grid[1]`, `unplaceable-barrier`).
    OtherRead,
}

impl Pair {
    /// Elements of a pair's view `g2`.
    fn span(&self) -> u32 {
        2 * self.tb * self.k
    }
}

impl Gen {
    /// A kernel over pairs of blocks, launched on two or four blocks.
    pub(super) fn pair_program(&mut self) -> Program {
        let tb = [32u32, 64, 128][self.rng.below(3)];
        let grid = if self.rng.chance(60) { 2 } else { 4 };
        let mut pc = Pair { tb, k: 1 + self.rng.below(2) as u32, depth: 0, bump: None };
        let span = pc.span();
        // Half-block units (as in `program`), so that the ordinary phases' two-warp splits
        // and named barriers have room in the block segments (review R68).
        let narrow = if tb >= 64 && self.rng.chance(30) { 64 } else { 32 };
        put(&mut self.out, 0, "@prism(\"global\")");
        put(&mut self.out, 0, &format!("@requires(grid[1], block[2], thread[{narrow}], smem=16384)"));
        put(&mut self.out, 0, &format!("@launch_bounds({tb})"));
        put(&mut self.out, 0, &format!("def fuzz({}):", super::PARAMS));
        put(&mut self.out, 1, "q : int @ block[2] = id()");
        put(&mut self.out, 1, &format!("with partition(out, p=block[2], f=lambda i: q * {} + i) as out_q:", 2 * tb));
        put(&mut self.out, 2, &format!("with partition(gx, p=block[2], f=lambda i: q * {span} + i) as g2:"));
        put(&mut self.out, 3, "with group(block[2]):");
        let d = 4;
        put(&mut self.out, d, "bb : int @ block[1] = id()");
        put(&mut self.out, d, "b : int @ block[1] = q * 2 + bb");
        // The thread's index in the pair; block code declares its own `t` in the block.
        put(&mut self.out, d, "tp : int @ thread[1] = id()");
        put(&mut self.out, d, &format!("acc : int @ thread[1] = inp[(q * {} + tp) % n]", 2 * tb));
        put(&mut self.out, d, "u : int @ block[1] = inp[b % n]");
        // Pairs read different elements, and branches on `u2` add the pair's index, so that
        // with two pairs they take different arms (with `inp[q % n]` alone every pair's
        // conditions were one constant, review R68).
        put(&mut self.out, d, "u2 : int @ block[2] = inp[(q * 5 + 3) % n]");
        // Start from known contents: every thread of the pair writes its own elements.
        put(&mut self.out, d, &format!("with partition(g2, p=thread[1], f=lambda i: tp * {} + i) as gz:", pc.k));
        put(&mut self.out, d + 1, "with group(thread[1]):");
        put(&mut self.out, d + 2, &format!("for j in range({}):", pc.k));
        put(&mut self.out, d + 3, "gz[j] = tp + j");
        let mut cx =
            Cx { tb, shared: Vec::new(), fresh: 0, depth: 0, narrow, wg: false, maps: false, grid, pair: true };
        for _ in 0..2 + self.rng.below(5) {
            self.pair_phase(&mut cx, &mut pc, d);
        }
        put(&mut self.out, d, &format!("with partition(out_q, p=block[1], f=lambda i: bb * {tb} + i) as ob:"));
        put(&mut self.out, d + 1, "with group(block[1]):");
        put(&mut self.out, d + 2, "t : int @ thread[1] = id()");
        put(&mut self.out, d + 2, "with partition(ob, p=thread[1], f=lambda i: t + i) as o:");
        put(&mut self.out, d + 3, "with group(thread[1]):");
        put(&mut self.out, d + 4, "o[0] = acc");
        put(&mut self.out, 0, "");
        put(&mut self.out, 0, &super::launch_head(grid, tb));
        let kernel = std::mem::take(&mut self.out);
        if let Some(bump) = pc.bump {
            self.pair_helper(&pc, bump);
        }
        // The helper that only pair programs call goes before the kernel.
        let code = std::mem::take(&mut self.out) + &kernel;
        let files = self.assemble(&format!("pairs of blocks of {tb} threads"), &code);
        Program {
            src: self.out.clone(),
            grid,
            block: tb,
            trusted: self.trusted,
            files,
            dyn_len: None,
            reduce: false,
            entry: None,
        }
    }

    /// The function entered at `block[2]` that pair phases call on `g2` ([`Bump`]). Its
    /// indices keep to the pair's elements whatever `m` is (`m & 255`), and the refused
    /// form reads the mirror element, `span - 1 - t * k`, without a remainder that would
    /// hide it from the ownership proof: it is refused because it reaches the other block.
    fn pair_helper(&mut self, pc: &Pair, bump: Bump) {
        let (span, k) = (pc.span(), pc.k);
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(block[2], thread[32])");
        put(&mut self.out, 0, "def pair_bump(p : ptr(int) @ block[2], m : int @ block[2]) -> int @ thread[1]:");
        put(&mut self.out, 1, "t : int @ thread[1] = id()");
        put(&mut self.out, 1, "r : int @ thread[1] = 0");
        match bump {
            Bump::Atomics => {
                put(&mut self.out, 1, "with group(thread[1]):");
                put(&mut self.out, 2, &format!("atomic_add(p[(t * 5 + (m & 255)) % {span}], 1)"));
                put(&mut self.out, 2, &format!("atomic_add(p[(t + (m & 255)) % {span}], m & 255)"));
            }
            Bump::OwnRead | Bump::OtherRead => {
                put(&mut self.out, 1, &format!("with partition(p, p=thread[1], f=lambda i: t * {k} + i) as pt:"));
                put(&mut self.out, 2, "with group(thread[1]):");
                put(&mut self.out, 3, "pt[0] = pt[0] + m");
                put(&mut self.out, 1, "with group(thread[1]):");
                let at =
                    if matches!(bump, Bump::OwnRead) { format!("t * {k}") } else { format!("{} - t * {k}", span - 1) };
                put(&mut self.out, 2, &format!("r = p[{at}]"));
            }
        }
        put(&mut self.out, 1, "return r");
        put(&mut self.out, 0, "");
    }

    /// One phase at `block[2]` code, indented `d`.
    fn pair_phase(&mut self, cx: &mut Cx, pc: &mut Pair, d: u32) {
        let (tb, k, span) = (pc.tb, pc.k, pc.span());
        let id = cx.fresh;
        cx.fresh += 1;
        match self.rng.below(14) {
            // Block code: shared arrays of its own and the ordinary phases.
            0..=2 => self.block_segment(cx, d),
            // Each thread of the pair writes its own elements (blocked or interleaved over
            // the pair): the other block's threads read them later.
            3 | 4 => {
                let f = if self.rng.chance(50) { format!("tp * {k} + i") } else { format!("tp + {} * i", 2 * tb) };
                put(&mut self.out, d, &format!("with partition(g2, p=thread[1], f=lambda i: {f}) as pw{id}:"));
                put(&mut self.out, d + 1, "with group(thread[1]):");
                let j = self.rng.below(k as usize);
                put(&mut self.out, d + 2, &format!("pw{id}[{j}] = acc + {}", self.rng.below(9)));
            }
            // Each block writes its half through a block view, each thread its own elements.
            5 => {
                // Its own half, or the other block's (so that the writes cross blocks).
                let half = if self.rng.chance(40) { "(1 - bb)" } else { "bb" };
                put(
                    &mut self.out,
                    d,
                    &format!("with partition(g2, p=block[1], f=lambda i: {half} * {} + i) as h{id}:", tb * k),
                );
                put(&mut self.out, d + 1, "with group(block[1]):");
                put(&mut self.out, d + 2, "t : int @ thread[1] = id()");
                put(
                    &mut self.out,
                    d + 2,
                    &format!("with partition(h{id}, p=thread[1], f=lambda i: t + {tb} * i) as hv{id}:"),
                );
                put(&mut self.out, d + 3, "with group(thread[1]):");
                put(&mut self.out, d + 4, &format!("for j in range({k}):"));
                put(&mut self.out, d + 5, &format!("hv{id}[j] = hv{id}[j] ^ (acc + j)"));
            }
            // Reads of any element of the pair's: the other block's too.
            6 | 7 => {
                let off = self.rng.below(span as usize);
                if self.rng.chance(50) {
                    put(&mut self.out, d, "with group(thread[1]):");
                    let f = self.fold(&format!("g2[(tp + {off}) % {span}]"));
                    put(&mut self.out, d + 1, &f);
                } else {
                    put(&mut self.out, d, "with group(block[1]):");
                    put(&mut self.out, d + 1, "t : int @ thread[1] = id()");
                    put(&mut self.out, d + 1, "with group(thread[1]):");
                    let f = self.fold(&format!("g2[((1 - bb) * {} + t * {k} + {off}) % {span}]", tb * k));
                    put(&mut self.out, d + 2, &f);
                }
            }
            // Commuting atomics over the pair's elements, results unused.
            8 => {
                put(&mut self.out, d, "with group(thread[1]):");
                put(
                    &mut self.out,
                    d + 1,
                    &format!("atomic_add(g2[(tp * 3 + {}) % {span}], acc & 7)", self.rng.below(4)),
                );
            }
            // One block of the pair writes all of the pair's elements through a claim (which
            // hides `g2` from both cases); the other runs its own case.
            9 if self.rng.chance(60) => {
                let first = self.rng.chance(50);
                put(&mut self.out, d, &format!("with claim(g2, p=block[1]) as c{id}:"));
                put(&mut self.out, d + 1, "match split(block):");
                let writer = |g: &mut Gen, d: u32| {
                    put(&mut g.out, d, "case 1:");
                    put(&mut g.out, d + 1, "t : int @ thread[1] = id()");
                    put(
                        &mut g.out,
                        d + 1,
                        &format!("with partition(c{id}, p=thread[1], f=lambda i: t + {tb} * i) as cv{id}:"),
                    );
                    put(&mut g.out, d + 2, "with group(thread[1]):");
                    put(&mut g.out, d + 3, &format!("for j in range({}):", 2 * k));
                    put(&mut g.out, d + 4, &format!("cv{id}[j] = acc + j"));
                };
                let other = |g: &mut Gen, d: u32| {
                    put(&mut g.out, d, "case 1:");
                    put(&mut g.out, d + 1, "t : int @ thread[1] = id()");
                    put(&mut g.out, d + 1, "with group(thread[1]):");
                    put(&mut g.out, d + 2, "acc = acc + t");
                };
                if first {
                    writer(self, d + 2);
                    other(self, d + 2);
                } else {
                    other(self, d + 2);
                    writer(self, d + 2);
                }
            }
            // The two blocks of the pair in one `split(block)` each: commuting atomics in both
            // (accepted), or atomics in one and plain reads in the other, which run at the
            // same time (refused, `split-conflict`).
            9 => {
                put(&mut self.out, d, "match split(block):");
                put(&mut self.out, d + 1, "case 1:");
                put(&mut self.out, d + 2, "t : int @ thread[1] = id()");
                put(&mut self.out, d + 2, "with group(thread[1]):");
                put(
                    &mut self.out,
                    d + 3,
                    &format!("atomic_add(g2[(t * 3 + {}) % {span}], acc & 7)", self.rng.below(4)),
                );
                put(&mut self.out, d + 1, "case 1:");
                put(&mut self.out, d + 2, "t : int @ thread[1] = id()");
                put(&mut self.out, d + 2, "with group(thread[1]):");
                if self.rng.chance(70) {
                    put(&mut self.out, d + 3, &format!("atomic_add(g2[(t * 7) % {span}], 1)"));
                } else {
                    let f = self.fold(&format!("g2[(t * 7) % {span}]"));
                    put(&mut self.out, d + 3, &f);
                }
            }
            // A call of the function entered at `block[2]`.
            10 => {
                // The body is drawn at the first call, so that only programs that call it
                // carry it (one that must be refused refuses the program, call or not).
                pc.bump.get_or_insert_with(|| match self.rng.below(10) {
                    0..=4 => Bump::Atomics,
                    5..=7 => Bump::OwnRead,
                    _ => Bump::OtherRead,
                });
                put(&mut self.out, d, &format!("pr{id} : int @ thread[1] = pair_bump(g2, u2 + {})", self.rng.below(5)));
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("acc = acc + pr{id}"));
            }
            // A loop of constant count around pair phases. Every block runs it alike, but
            // placement takes any loop below grid code for one some blocks may leave early
            // (docs/soundness.md §7, conservative): a grid barrier needed inside is refused,
            // one needed only around it is placed outside.
            11 if pc.depth < 2 => {
                pc.depth += 1;
                put(&mut self.out, d, &format!("for pr{id} in range({}):", 1 + self.rng.below(3)));
                self.pair_phase(cx, pc, d + 1);
                if self.rng.chance(50) {
                    self.pair_phase(cx, pc, d + 1);
                }
                pc.depth -= 1;
            }
            // A branch uniform over the pair only: a grid barrier cannot stand in it.
            12 if pc.depth < 2 => {
                pc.depth += 1;
                put(&mut self.out, d, &format!("if ((u2 + q + {}) & 1) == 0:", self.rng.below(2)));
                self.pair_phase(cx, pc, d + 1);
                if self.rng.chance(50) {
                    put(&mut self.out, d, "else:");
                    self.pair_phase(cx, pc, d + 1);
                }
                pc.depth -= 1;
            }
            // A `while` loop counted by a pair-uniform variable: the same.
            13 if pc.depth < 2 => {
                pc.depth += 1;
                put(&mut self.out, d, &format!("pk{id} : int @ block[2] = 0"));
                put(&mut self.out, d, &format!("while pk{id} < {}:", 1 + self.rng.below(2)));
                self.pair_phase(cx, pc, d + 1);
                put(&mut self.out, d + 1, &format!("pk{id} += 1"));
                pc.depth -= 1;
            }
            _ => self.block_segment(cx, d),
        }
    }

    /// Block code inside the pair code: one or two shared arrays of its own, filled, then
    /// one to three ordinary phases over them.
    fn block_segment(&mut self, cx: &mut Cx, d: u32) {
        let tb = cx.tb;
        put(&mut self.out, d, "with group(block[1]):");
        let d = d + 1;
        put(&mut self.out, d, "t : int @ thread[1] = id()");
        put(&mut self.out, d, "w : int @ thread[32] = id()");
        cx.shared.clear();
        for _ in 0..1 + self.rng.below(2) {
            let len = tb * [1u32, 2, 4][self.rng.below(3)];
            let name = format!("s{}", cx.fresh);
            cx.fresh += 1;
            put(&mut self.out, d, &format!("{name} : shared(int[{len}], align=128) @ block[1]"));
            cx.shared.push((name, len));
        }
        self.fill_shared(cx, d);
        for _ in 0..1 + self.rng.below(3) {
            self.phase(cx, d);
        }
    }
}
