//! A randomised search over the rules that keep a wgmma's asynchrony out of safe code
//! (docs/soundness.md §8: `wgmma-unwaited`, `wgmma-unfenced`). Each program is one block of
//! one warpgroup that fills two shared tiles and then runs a random sequence of fences,
//! wgmmas into two accumulator arrays (two shapes), commits, waits of 0 and 1, reads and
//! clears of the accumulators, restagings of the tiles, loops with and without `break`, and
//! branches. The simulator is the oracle: it tracks every wgmma until the wait that
//! completes its committed group, and reports a use of its accumulators or a change of its
//! tiles before then (`wgmma-pending`), races and unwritten reads. So every program the
//! checker accepts must run clean on every schedule; the search also requires that it
//! generates both accepted and refused programs, so it keeps testing both sides.
//!
//! A second search does the same for late stages (docs/soundness.md §4.3.2): consumer cases
//! of a warp-specialised pipeline whose groups stay in flight from one tile to the next,
//! with random fences, wgmmas, commits, waits of 0 to 2, branches, loops and uses of the
//! accumulators around a mostly well-formed tile, launched over 0, 1 and 5 tiles so that
//! the producer refills slots a pending wgmma may read. With the release check of
//! `prism_sync`'s `pending.rs` dropped, 4 of its 240 programs go wrong; with the
//! accumulator check dropped, 57.

#![allow(clippy::print_stdout)]

use prism_interp::Config;
use prism_interp::rng::Rng;
use prism_test::run::{compile, parse_launch, run};

/// Programs generated (each is small: the search runs in seconds).
const PROGRAMS: u64 = 600;

/// The random schedules each accepted program also runs under.
const SEEDS: [u64; 3] = [1, 0x5eed, 0xdead_beef];

struct Gen {
    rng: Rng,
    out: String,
    /// Loops around the current statement (a `break` needs one).
    loops: usize,
}

/// Appends `text` to `out` as a line indented `depth` levels.
fn put(out: &mut String, depth: usize, text: &str) {
    out.push_str(&"    ".repeat(depth));
    out.push_str(text);
    out.push('\n');
}

impl Gen {
    fn line(&mut self, depth: usize, text: &str) {
        put(&mut self.out, depth, text);
    }

    /// One statement at warpgroup level (the block is one warpgroup).
    fn statement(&mut self, d: usize, nest: usize) {
        let acc = if self.rng.chance(60) { "acc0" } else { "acc1" };
        match self.rng.below(20) {
            0..=2 => self.line(d, "wgmma_fence()"),
            3..=6 => {
                // Mostly N = 8; sometimes N = 16, another shape into the same array.
                let n = if self.rng.chance(85) { 8 } else { 16 };
                self.line(d, &format!("wgmma_bf16({acc}, a_s, b_s, {n})"));
            }
            7..=9 => self.line(d, "wgmma_commit_group()"),
            10..=11 => {
                let n = if self.rng.chance(70) { 0 } else { 1 };
                self.line(d, &format!("wgmma_wait({n})"));
            }
            12 => {
                self.line(d, "with group(thread[1]):");
                let j = self.rng.below(4);
                self.line(d + 1, &format!("x = x + {acc}[{j}]"));
            }
            13 => {
                self.line(d, "with group(thread[1]):");
                let j = self.rng.below(4);
                self.line(d + 1, &format!("{acc}[{j}] = 0.5"));
            }
            14 => {
                // Restage B (every thread of the warpgroup writes two elements).
                self.line(d, "with partition(b_s, p=thread[1], f=lambda s: 2 * t + s) as rb:");
                self.line(d + 1, "with group(thread[1]):");
                self.line(d + 2, "rb[0] = bf16(float(t % 3))");
                self.line(d + 2, "rb[1] = bf16(1.0)");
            }
            15 | 16 if nest < 2 => {
                self.line(d, "for k in range(2):");
                self.loops += 1;
                self.block(d + 1, nest + 1);
                self.loops -= 1;
                // Read right after the loop: a wait in the loop that a `break` or
                // `continue` can skip leaves a wgmma pending here.
                if self.rng.chance(50) {
                    self.line(d, "with group(thread[1]):");
                    self.line(d + 1, &format!("x = x + {acc}[3]"));
                }
            }
            17 if nest < 2 => {
                self.line(d, "if n > 0:");
                self.block(d + 1, nest + 1);
            }
            18 if self.loops > 0 => {
                self.line(d, "if n > 1:");
                let exit = if self.rng.chance(50) { "break" } else { "continue" };
                self.line(d + 1, exit);
            }
            _ => self.line(d, "wgmma_fence()"),
        }
    }

    /// A block of one to four statements.
    fn block(&mut self, d: usize, nest: usize) {
        for _ in 0..1 + self.rng.below(4) {
            self.statement(d, nest);
        }
    }

    /// A well-formed step (fence, wgmmas of one shape, commit, wait, then reads), which a
    /// few random statements around and inside disturb.
    fn step(&mut self, d: usize) {
        let acc = if self.rng.chance(50) { "acc0" } else { "acc1" };
        self.line(d, "wgmma_fence()");
        for _ in 0..1 + self.rng.below(2) {
            self.line(d, &format!("wgmma_bf16({acc}, a_s, b_s, 8)"));
        }
        if self.rng.chance(30) {
            self.statement(d, 1);
        }
        self.line(d, "wgmma_commit_group()");
        if self.rng.chance(30) {
            self.statement(d, 1);
        }
        self.line(d, "wgmma_wait(0)");
        self.line(d, "with group(thread[1]):");
        self.line(d + 1, &format!("x = x + {acc}[1]"));
    }

    /// A step in a loop whose iterations may leave early: the `break` or `continue` lands
    /// after the wgmma, after the commit or after the wait, each of which may be in the loop
    /// or after it (an exit is safe when it skips neither a commit nor a wait the wgmma
    /// needs), and the accumulators are read right after the loop.
    fn loop_step(&mut self, d: usize) {
        let acc = if self.rng.chance(50) { "acc0" } else { "acc1" };
        let exit = if self.rng.chance(50) { "break" } else { "continue" };
        let at = self.rng.below(3);
        // Sometimes the commit and the wait come after the loop, where an early exit lands
        // before them (safe), sometimes the commit is in the loop and the wait after it.
        let (commit_in, wait_in) = match self.rng.below(4) {
            0 => (false, false),
            1 => (true, false),
            _ => (true, true),
        };
        self.line(d, "for k in range(2):");
        self.line(d + 1, "wgmma_fence()");
        self.line(d + 1, &format!("wgmma_bf16({acc}, a_s, b_s, 8)"));
        let leave = |g: &mut Gen| {
            g.line(d + 1, "if n > 1:");
            g.line(d + 2, exit);
        };
        if at == 0 {
            leave(self);
        }
        if commit_in {
            self.line(d + 1, "wgmma_commit_group()");
        }
        if at == 1 {
            leave(self);
        }
        if wait_in {
            self.line(d + 1, "wgmma_wait(0)");
        }
        if at == 2 {
            leave(self);
        }
        if !commit_in {
            self.line(d, "wgmma_commit_group()");
        }
        if !wait_in {
            self.line(d, "wgmma_wait(0)");
        }
        self.line(d, "with group(thread[1]):");
        self.line(d + 1, &format!("x = x + {acc}[3]"));
    }

    fn program(mut self) -> String {
        self.out.push_str(
            r#"@prism("global")
@requires(grid[1], block[1], warpgroup[1], smem=8192)
@launch_bounds(128)
def search(out : ptr(float), n : int):
    with partition(out, p=block[1], f=lambda i: i) as out_b:
        with group(block[1]):
            a_s : shared(bf16[1024]) @ block[1]
            b_s : shared(bf16[256]) @ block[1]
            t : int @ thread[1] = id()
            x : float @ thread[1] = 0.0
            acc0 : float[8] @ thread[1]
            acc1 : float[8] @ thread[1]
            with partition(a_s, p=thread[1], f=lambda s: t + 128 * s) as fa:
                with group(thread[1]):
                    for s in range(8):
                        fa[s] = bf16(float((t + s) % 5))
            with partition(b_s, p=thread[1], f=lambda s: 2 * t + s) as fb:
                with group(thread[1]):
                    fb[0] = bf16(float(t % 3))
                    fb[1] = bf16(2.0)
"#,
        );
        for _ in 0..1 + self.rng.below(3) {
            match self.rng.below(10) {
                0..=3 => self.step(3),
                4..=5 => self.loop_step(3),
                _ => self.block(3, 0),
            }
        }
        if self.rng.chance(85) {
            self.line(3, "wgmma_wait(0)");
        }
        self.line(3, "with partition(out_b, p=thread[1], f=lambda i: t + i) as mine:");
        self.line(4, "with group(thread[1]):");
        self.line(5, "mine[0] = x + acc0[0] + acc1[2]");
        self.out
    }
}

/// Runs an accepted program's launches under the deterministic schedule and the seeded
/// ones; each run that reports anything (or fails to run) is a failure, once per launch.
fn runs_clean(
    module: &prism_interp::Module,
    src: &str,
    seed: u64,
    launches: &[String],
    seeds: &[u64],
    failures: &mut Vec<String>,
) {
    for line in launches {
        let launch = parse_launch(line).expect("a launch line");
        let configs = std::iter::once(Config::default())
            .chain(seeds.iter().map(|&s| Config { seed: Some(s), ..Config::default() }));
        for cfg in configs {
            match run(module, &launch, std::path::Path::new("."), cfg) {
                Ok((_, o)) if o.is_clean() => {}
                Ok((_, o)) => {
                    let r = &o.reports[0];
                    failures.push(format!(
                        "seed {seed}, `{line}`: accepted but [{}] {}\n{src}",
                        r.kind.code(),
                        r.message
                    ));
                    break;
                }
                Err(e) => {
                    failures.push(format!("seed {seed}: {e}\n{src}"));
                    break;
                }
            }
        }
    }
}

#[test]
fn accepted_wgmma_programs_run_clean() {
    let (mut accepted, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for seed in 0..PROGRAMS {
        let src = Gen { rng: Rng::new(seed), out: String::new(), loops: 0 }.program();
        let Ok(module) = compile(&src) else {
            refused += 1;
            continue;
        };
        accepted += 1;
        let launches: Vec<String> =
            [0, 2].iter().map(|n| format!("search --grid 1 --block 128 --arg out=zeros:f32:128 --arg n={n}")).collect();
        runs_clean(&module, &src, seed, &launches, &SEEDS, &mut failures);
    }
    assert!(failures.is_empty(), "{} accepted programs went wrong:\n{}", failures.len(), failures.join("\n"));
    // Both sides stay tested: the rules accept well-formed steps and refuse the hazards.
    assert!(accepted >= PROGRAMS / 10, "only {accepted} of {PROGRAMS} programs accepted");
    assert!(refused >= PROGRAMS / 10, "only {refused} of {PROGRAMS} programs refused");
    println!("{accepted} accepted, {refused} refused");
}

/// Late consumers generated ([`accepted_late_consumers_run_clean`]).
const LATE_PROGRAMS: u64 = 240;

/// A consumer case of a warp-specialised pipeline whose stages are `late=True`: random
/// statements around a mostly well-formed tile (fence, wgmmas, commit, `wgmma_wait(1)`),
/// and a tile-end read of the accumulators, mostly after a `wgmma_wait(0)`.
struct LateGen {
    rng: Rng,
    out: String,
}

impl LateGen {
    fn line(&mut self, depth: usize, text: &str) {
        put(&mut self.out, depth, text);
    }

    /// One statement of the consumer case (warpgroup code).
    fn statement(&mut self, d: usize, nest: usize) {
        match self.rng.below(14) {
            0 => self.line(d, "wgmma_fence()"),
            1..=2 => self.line(d, "wgmma_bf16(acc, ta, tb, 8)"),
            3..=4 => self.line(d, "wgmma_commit_group()"),
            5..=7 => {
                let n = self.rng.below(3);
                self.line(d, &format!("wgmma_wait({n})"));
            }
            8 => {
                self.line(d, "with group(thread[1]):");
                let j = self.rng.below(4);
                self.line(d + 1, &format!("x = x + acc[{j}]"));
            }
            9 => {
                self.line(d, "with group(thread[1]):");
                let j = self.rng.below(4);
                self.line(d + 1, &format!("acc[{j}] = 0.25"));
            }
            10 | 11 if nest < 2 => {
                let cond = if self.rng.chance(50) { "k % 2 == 0" } else { "k == n - 1" };
                self.line(d, &format!("if {cond}:"));
                self.block(d + 1, nest + 1);
            }
            12 if nest < 2 => {
                self.line(d, "for j in range(2):");
                self.block(d + 1, nest + 1);
            }
            _ => self.line(d, "wgmma_fence()"),
        }
    }

    fn block(&mut self, d: usize, nest: usize) {
        for _ in 0..1 + self.rng.below(3) {
            self.statement(d, nest);
        }
    }

    /// Sometimes a random statement here.
    fn maybe(&mut self, d: usize, percent: usize) {
        if self.rng.chance(percent) {
            self.statement(d, 1);
        }
    }

    fn program(mut self) -> String {
        let stages = 2 + self.rng.below(2);
        self.out.push_str(&format!(
            r#"@prism("global")
@requires(grid[1], block[1], warpgroup[2], smem=16384)
@launch_bounds(256, 1)
def late(a : tensor_map(bf16[64][16]), b : tensor_map(bf16[8][16]), n : int, out : ptr(float)):
    with partition(out, p=block[1], f=lambda i: i) as out_b:
        with group(block[1]):
            ra : shared(bf16[{stages}][1024], align=128) @ block[1]
            rb : shared(bf16[{stages}][128], align=128) @ block[1]
            t : int @ thread[1] = id()
            acc : float[4] @ thread[1]
            x : float @ thread[1] = 0.0
            for k in pipeline(n, stages={stages}):
                match split(warpgroup):
                    case 1:
"#
        ));
        self.maybe(6, 15);
        // Sometimes the stages sit in a nested split's case, in a loop of the case (which
        // may run no iteration, or be left by `break`), or both: none of these is the
        // pipeline's tile loop, at whose end the slot is released.
        let mut d = 6;
        if self.rng.chance(30) {
            self.line(d, "match split(warpgroup):");
            self.line(d + 1, "case 1:");
            d += 2;
        }
        if self.rng.chance(35) {
            match self.rng.below(3) {
                0 => self.line(d, "for j in range(k % 2):"),
                1 => self.line(d, "for j in range(2):"),
                _ => {
                    self.line(d, "for j in range(1):");
                    self.line(d + 1, "if k % 2 == 1:");
                    self.line(d + 2, "break");
                }
            }
            d += 1;
        }
        self.line(d, "with stage(ra, late=True) as ta:");
        self.line(d + 1, "with stage(rb, late=True) as tb:");
        let d = d + 2;
        if self.rng.chance(20) {
            self.block(d, 0);
        } else {
            self.maybe(d, 10);
            self.line(d, "wgmma_fence()");
            for _ in 0..1 + self.rng.below(2) {
                self.line(d, "wgmma_bf16(acc, ta, tb, 8)");
            }
            self.maybe(d, 15);
            self.line(d, "wgmma_commit_group()");
            self.maybe(d, 15);
            let n = if self.rng.chance(80) { 1 } else { self.rng.below(3) };
            self.line(d, &format!("wgmma_wait({n})"));
            self.maybe(d, 10);
        }
        let cond = if self.rng.chance(50) { "k % 2 == 1" } else { "k == n - 1" };
        self.line(6, &format!("if {cond}:"));
        if self.rng.chance(85) {
            self.line(7, "wgmma_wait(0)");
        }
        self.maybe(7, 10);
        self.line(7, "with group(thread[1]):");
        self.line(8, "x = x + acc[1]");
        if self.rng.chance(50) {
            self.line(8, "acc[1] = 0.0");
        }
        self.maybe(6, 10);
        self.out.push_str(
            r#"                    case 1:
                        with fill(ra) as sa:
                            with fill(rb) as sb:
                                match split(thread):
                                    case 1:
                                        tma_load_2d(sa[0], a, 0, 64 * k)
                                        tma_load_2d(sb[0], b, 0, 8 * k)
            with partition(out_b, p=thread[1], f=lambda i: t + i) as mine:
                with group(thread[1]):
                    mine[0] = x
"#,
        );
        self.out
    }
}

/// The late-stage rules (docs/soundness.md §4.3.2, "Late stages"), searched the same way:
/// every consumer the checker accepts runs clean, its slots refilled under the schedules
/// the simulator tries (a refill under a pending wgmma is `wgmma-pending`, as is a use of
/// the accumulators while a group may write them).
#[test]
fn accepted_late_consumers_run_clean() {
    let (mut accepted, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for seed in 0..LATE_PROGRAMS {
        let src = LateGen { rng: Rng::new(seed), out: String::new() }.program();
        let Ok(module) = compile(&src) else {
            refused += 1;
            continue;
        };
        accepted += 1;
        let launches: Vec<String> = [0u64, 1, 5]
            .iter()
            .map(|&n| {
                let rows = 64 * n.max(1);
                format!(
                    "late --grid 1 --block 256 --arg a=rand:bf16:{rows}x16 --arg b=rand:bf16:{}x16:1 --arg n={n} --arg out=zeros:f32:256",
                    rows / 8
                )
            })
            .collect();
        runs_clean(&module, &src, seed, &launches, &SEEDS[..2], &mut failures);
    }
    assert!(failures.is_empty(), "{} accepted programs went wrong:\n{}", failures.len(), failures.join("\n"));
    assert!(accepted >= LATE_PROGRAMS / 10, "only {accepted} of {LATE_PROGRAMS} programs accepted");
    assert!(refused >= LATE_PROGRAMS / 10, "only {refused} of {LATE_PROGRAMS} programs refused");
    println!("{accepted} accepted, {refused} refused");
}
