//! The simulator: runs a kernel of compiled code over a launch.
//!
//! Semantics (seed 003 §4, seed 004): every thread runs the kernel independently; there is
//! no implicit lock-step, not even within a warp. For speed the interpreter executes one op
//! for all lanes of a *fragment* (lanes of one warp at the same point) under a mask. Lanes
//! that disagree at a branch split into fragments that rejoin at the branch's join point.
//! Barriers and warp collectives wait until their whole unit has arrived, with exact
//! arrival counts and phases; a unit that arrives at different barriers, or a thread that
//! leaves while its unit waits, is barrier divergence. When no fragment can run, the
//! remaining threads are deadlocked.
//!
//! Schedules: the default is deterministic (fragments in order, blocks in order). With a
//! seed, the scheduler picks fragments at random, preempts them after random time slices,
//! runs blocks in a random order and applies the lanes of an atomic in a random order.
//! Results of race-free programs do not depend on the schedule; the tests check that.
//!
//! Without race checks and without a seed, blocks run on all cores. A kernel that uses a
//! grid-wide barrier runs all its blocks co-resident, interleaved on one core.

mod access;
mod block;
mod exec;
mod flags;
pub mod intr;
mod lanes;
pub(crate) use lanes::FastMap;
mod regs;
mod wgmma;

use crate::code::{Code, Op};
use crate::memory::Buffer;
use crate::report::{Report, ReportKind};
use crate::shadow::{GCell, Global, Levels, SharedShadow};
use block::BlockSim;
use prism_types::perspective::Level;
use regs::Regs;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Which dynamic checks run. Bounds, divergence and deadlock are always checked: the run
/// cannot continue meaningfully past them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checks {
    /// Data races (intra-block per barrier interval, inter-block over the run), and plain
    /// reads of shared memory no thread of the block has written (`uninitialized-read`).
    pub races: bool,
    /// Conditions and variables that must be uniform over a unit.
    pub uniformity: bool,
}

impl Checks {
    /// Every check on.
    pub const ALL: Checks = Checks { races: true, uniformity: true };
    /// Only the checks the run needs to stay meaningful.
    pub const NONE: Checks = Checks { races: false, uniformity: false };
}

/// How to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Which checks run.
    pub checks: Checks,
    /// A seed for a randomised schedule; `None` for the deterministic one.
    pub seed: Option<u64>,
    /// The most ops one block may execute (per lane group), to turn hangs into a report.
    pub fuel: u64,
    /// Worker threads for independent blocks (used only without race checks and seed).
    pub workers: usize,
    /// How many race reports to collect before stopping.
    pub max_races: usize,
    /// The wall-clock companion of `fuel`: the run stops with a `time-limit` report when no
    /// block has finished (and no grid barrier has completed) for this long. `None` waits
    /// forever. It makes an endless loop a prompt report whatever the steps cost; a run
    /// that is merely long keeps finishing blocks and is never stopped by it.
    pub stall_limit: Option<Duration>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            checks: Checks::ALL,
            seed: None,
            fuel: 500_000_000,
            workers: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            max_races: 10,
            stall_limit: None,
        }
    }
}

/// The outcome of a launch.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Dynamic-check findings (empty for a clean run).
    pub reports: Vec<Report>,
    /// Ops executed (each counts once per fragment, whatever its lane count).
    pub steps: u64,
}

impl Outcome {
    /// True when no check fired.
    pub fn is_clean(&self) -> bool {
        self.reports.is_empty()
    }
}

/// How far a running launch has got, for a progress display on another thread.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
}

impl Progress {
    /// A counter at zero.
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Blocks that have finished so far.
    pub fn blocks_done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }
}

/// A cross-block uniformity check: unit size, unit, function, check pc, dynamic instance
/// (`BlockSim::instance`).
pub(crate) type AcrossKey = (u64, u64, u32, u32, u64);

/// Everything a launch shares between blocks (read-only).
pub(crate) struct Shared<'a> {
    pub code: &'a Code,
    pub kernel: u32,
    pub grid: u32,
    pub block: u32,
    pub buffers: &'a [&'a Buffer],
    /// Names of the buffers (the kernel parameters), for messages.
    pub buffer_names: &'a [String],
    /// Per buffer, a tensor map's dimensions (outermost first), or nothing.
    pub tensor_dims: &'a [&'a [u64]],
    /// Per buffer, whether the kernel's access sites never change it
    /// ([`crate::code::FuncCode::param_written`]): the race detector records no reads of it
    /// (docs/simulator.md, Speed).
    pub read_only: Vec<bool>,
    /// The launch's extents along x, y, z: the grid's and the block's.
    pub grid_dims: [u32; 3],
    pub block_dims: [u32; 3],
    /// Register bits of each kernel parameter.
    pub params: &'a [u64],
    pub smem_bytes: u64,
    pub levels: Levels,
    pub cfg: Config,
    /// Set when a worker found a fatal problem: the others stop too.
    pub stop: AtomicBool,
    /// Whether blocks run on several workers at once (then a block cannot tell whether
    /// another block will still write the memory it polls, so spin-waits are not judged).
    pub parallel: bool,
    /// Blocks finished so far, read by a progress display.
    pub progress: &'a Progress,
    /// When the launch started.
    pub start: Instant,
    /// Milliseconds after `start` when a block last finished or a grid barrier completed.
    pub last_progress: AtomicU64,
    /// Uniformity checks of values broader than a block (`block[k]`, `grid[1]`) that
    /// unsafe code left, across blocks: per unit size, unit, function, check and dynamic
    /// instance of it (the calls and loop iterations the threads are in), the first value
    /// seen, how many threads compared it, and whose it was. An entry goes when every
    /// thread of the unit has compared (or the table is full: `UNIFORM_TABLE_LIMIT`).
    pub across: Mutex<HashMap<AcrossKey, (u64, u64, crate::report::Thread)>>,
}

impl Shared<'_> {
    /// Counts a finished block and restarts the stall clock.
    pub fn block_done(&self) {
        self.progress.done.fetch_add(1, Ordering::Relaxed);
        self.made_progress();
    }

    /// Restarts the stall clock.
    pub fn made_progress(&self) {
        self.last_progress.store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// Whether no block has finished for longer than the stall limit.
    pub fn stalled(&self) -> bool {
        match self.cfg.stall_limit {
            None => false,
            Some(limit) => {
                let now = self.start.elapsed().as_millis() as u64;
                now.saturating_sub(self.last_progress.load(Ordering::Relaxed)) > limit.as_millis() as u64
            }
        }
    }
}

/// An asynchronous copy that reads a global element: its block, thread, function and
/// source access site.
pub(crate) type CopyAt = (u32, u32, u32, u32);

/// Per-worker mutable state.
pub(crate) struct GCtx {
    /// Global shadow (only with race checks, which run on one worker).
    pub shadow: Option<Global>,
    pub reports: Vec<Report>,
    pub grid_epoch: u32,
    pub rng: Rng,
    races: usize,
    /// Ops run so far by this worker.
    pub clock: u64,
    /// Memory-writing ops run so far by this worker (spin-wait detection).
    pub writes: u64,
    /// What the global elements written by atomic or volatile stores publish (`flags.rs`).
    /// Race checks only: they run on one worker, which sees every block.
    pub flags: flags::Flags<(usize, usize)>,
    /// Global elements that asynchronous copies still in flight read: the latest such
    /// copy's thread (block, thread), function and source access site, and how many copies
    /// of the element are in flight. Several threads may copy one source element at once;
    /// until review R75 (2026-12-03) the first to complete removed the element, and a write
    /// racing with another thread's copy still in flight went unreported.
    pub inflight: FastMap<(usize, usize), (CopyAt, u32)>,
    /// A finished block's shared-memory race shadow, every cell reset, for the next block.
    pub spare_sshadow: SharedShadow,
    /// A finished block's shared-memory array tags (`BlockSim::sarrays`), for the next
    /// block: they need no clearing, as only bytes the next block marks written are read.
    pub spare_sarrays: Vec<u64>,
    /// Finished blocks' register files, for the next blocks' warps: zeroing a file that is
    /// still in the cache costs less than allocating and filling a new one (each register
    /// is 256 bytes per warp).
    pub spare_regs: Vec<Regs>,
}

impl GCtx {
    /// A worker's state: race shadows for `buffers` when race checks run, and the schedule's
    /// random stream for `seed`.
    fn new(cfg: &Config, buffers: &[&Buffer]) -> GCtx {
        GCtx {
            shadow: cfg.checks.races.then(|| Global::new(buffers.iter().map(|b| b.len()))),
            reports: Vec::new(),
            grid_epoch: 0,
            rng: Rng::new(cfg.seed.unwrap_or(0)),
            races: 0,
            clock: 0,
            writes: 0,
            flags: flags::Flags::default(),
            inflight: FastMap::default(),
            spare_sshadow: SharedShadow::default(),
            spare_sarrays: Vec::new(),
            spare_regs: Vec::new(),
        }
    }

    pub fn report(&mut self, s: &Shared<'_>, r: Report) {
        if let ReportKind::Race(_) | ReportKind::UninitializedRead = r.kind {
            // One report per pair of sites is enough (per site for a read of unwritten
            // shared memory).
            let dup = self.reports.iter().any(|x| {
                x.kind == r.kind && x.span == r.span && x.other.as_ref().map(|o| o.0) == r.other.as_ref().map(|o| o.0)
            });
            if dup {
                return;
            }
            self.races += 1;
            if self.races >= s.cfg.max_races {
                s.stop.store(true, Ordering::Relaxed);
            }
        } else {
            s.stop.store(true, Ordering::Relaxed);
        }
        self.reports.push(r);
    }
}

pub use crate::rng::Rng;

/// One launch: `kernel` of `code` over `grid` blocks of `block` threads. `params` holds the
/// register bits of each kernel parameter (pointers made with
/// [`crate::memory::Ptr::global`]); `buffers` are the global buffers they point into, and
/// `buffer_names` their parameters' names, for messages.
#[derive(Clone, Copy)]
pub struct Launch<'a> {
    /// The compiled program.
    pub code: &'a Code,
    /// The kernel's function index.
    pub kernel: u32,
    /// Blocks.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Register bits of each parameter.
    pub params: &'a [u64],
    /// Global buffers.
    pub buffers: &'a [&'a Buffer],
    /// Their names.
    pub buffer_names: &'a [String],
    /// Per buffer, the dimensions of a tensor map's array (outermost first); empty for a
    /// pointer's buffer.
    pub tensor_dims: &'a [&'a [u64]],
    /// The grid's and the block's extents along x, y, z (their products are `grid` and
    /// `block`).
    pub grid_dims: [u32; 3],
    /// See `grid_dims`.
    pub block_dims: [u32; 3],
    /// With a dynamic shared array: the block's shared bytes, its end included.
    pub dyn_smem: Option<u64>,
}

/// Runs a launch the caller has validated against the kernel's bound, counting finished
/// blocks in `progress`.
pub fn run(launch: Launch<'_>, cfg: Config, progress: &Progress) -> Outcome {
    let Launch {
        code,
        kernel,
        grid,
        block,
        params,
        buffers,
        buffer_names,
        tensor_dims,
        grid_dims,
        block_dims,
        dyn_smem,
    } = launch;
    let smem_bytes = smem_of(code, kernel).max(dyn_smem.unwrap_or(0));
    let mut scopes = Vec::new();
    let mut grid_sync = false;
    collect_scopes(code, kernel, block, &mut scopes, &mut grid_sync, &mut vec![false; code.funcs.len()]);
    let shared = Shared {
        code,
        kernel,
        grid,
        block,
        buffers,
        buffer_names,
        tensor_dims,
        read_only: (0..buffers.len()).map(|b| code.funcs[kernel as usize].read_only(b)).collect(),
        grid_dims,
        block_dims,
        params,
        smem_bytes,
        levels: Levels::new(scopes, u64::from(block)),
        cfg,
        stop: AtomicBool::new(false),
        parallel: false,
        progress,
        start: Instant::now(),
        last_progress: AtomicU64::new(0),
        across: Mutex::new(HashMap::new()),
    };
    // A kernel that polls memory runs on one worker whatever the checks: only there can the
    // simulator tell that a spin-wait waits on memory no running block will ever write, and
    // report the deadlock at once instead of spinning until the fuel runs out.
    let polling = grid > 1 && polls(code, kernel);
    let single = cfg.checks.races || cfg.seed.is_some() || cfg.workers <= 1 || grid_sync || grid == 1 || polling;
    let shared = Shared { parallel: !single, ..shared };
    if single {
        let mut g = GCtx::new(&cfg, buffers);
        // The order is computed block by block: a launch of 2^31 blocks costs no memory
        // before its first block runs.
        let order = BlockOrder::new(grid, cfg.seed.map(|_| g.rng.next_u64()));
        // Blocks that poll memory another block writes (the look-back scan) need the other
        // block to make progress while they spin, as on a GPU where both are resident.
        if grid_sync {
            run_coresident(&shared, &mut g, order, None);
        } else if polling {
            run_coresident(&shared, &mut g, order, Some(RESIDENT_BLOCKS));
        } else {
            for b in order {
                if shared.stop.load(Ordering::Relaxed) {
                    break;
                }
                let mut sim = BlockSim::new(&shared, b, &mut g);
                sim.run_to_end(&mut g);
                sim.report_unwritten_reads(&mut g);
                sim.recycle(&mut g);
                shared.block_done();
            }
        }
        Outcome { reports: g.reports, steps: g.clock }
    } else {
        let next = AtomicU32::new(0);
        let results = Mutex::new(Outcome::default());
        std::thread::scope(|scope| {
            for _ in 0..cfg.workers.min(grid as usize) {
                scope.spawn(|| {
                    // Parallel workers run without race checks or a seed (see `single`).
                    let mut g = GCtx::new(&cfg, buffers);
                    loop {
                        let b = next.fetch_add(1, Ordering::Relaxed);
                        if b >= grid || shared.stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let mut sim = BlockSim::new(&shared, b, &mut g);
                        sim.run_to_end(&mut g);
                        sim.recycle(&mut g);
                        shared.block_done();
                    }
                    let mut r = results.lock().expect("no worker panics while holding the lock");
                    r.reports.extend(g.reports);
                    r.steps += g.clock;
                });
            }
        });
        let mut out = results.into_inner().expect("workers finished");
        // Workers finish in any order; sort so the report is stable.
        out.reports.sort_by_key(|r| (r.thread.block, r.thread.thread, r.span.start));
        out
    }
}

/// How many blocks a polling kernel keeps resident at once, as a GPU would: enough for
/// spin-waits on earlier blocks to make progress, few enough that any grid fits in memory.
pub const RESIDENT_BLOCKS: usize = 64;

/// Runs blocks interleaved on one core: all of them for kernels with grid-wide barriers
/// (`window` is `None`), or a window of resident blocks for kernels that poll memory,
/// admitting the next block in `order` whenever one finishes.
///
/// The deterministic schedule of a polling kernel is lazy (docs/simulator.md, "Blocks that
/// poll"): it keeps as few blocks resident as progress needs, each running a turn of up to
/// [`TURN`] slices, and doubles the resident blocks (up to `window`) when every resident
/// block is stuck (finished, blocked or spinning), or when they have run [`PATIENCE`] steps
/// (or a sixteenth of the fuel, if less) with no block finishing: they may wait for one
/// another, or for a block not yet admitted, in ways the spin test cannot see (blocks that
/// wake each other in turn, a poll loop that counts, a wait on an atomic update). Any
/// schedule is one a GPU may run, and a block gets the window's company before a spin or
/// deadlock is reported, so what a program can do and what is reported are the eager
/// schedule's; what it saves is the interleaving of 64 blocks' state in the cache, and the
/// spinning on predecessors that have not been run yet. A seeded schedule keeps the whole
/// window interleaved, a slice each, to explore interleavings.
fn run_coresident(s: &Shared<'_>, g: &mut GCtx, order: BlockOrder, window: Option<usize>) {
    let all = window.is_none();
    let window = window.unwrap_or(order.len());
    let lazy = !all && s.cfg.seed.is_none();
    let patience = (s.cfg.fuel / 16).clamp(1, PATIENCE);
    let mut pending = order;
    let mut sims: Vec<BlockSim<'_>> = Vec::new();
    // Lazy: whether to double the resident blocks, and the clock at the last admission or
    // finish.
    let mut more = true;
    let mut since = g.clock;
    loop {
        for b in &mut sims {
            if b.finished() && !std::mem::replace(&mut b.counted, true) {
                b.report_unwritten_reads(g);
                s.block_done();
                since = g.clock;
            }
        }
        if !all {
            for b in &mut sims {
                if b.finished() {
                    b.recycle(g);
                }
            }
            sims.retain(|b| !b.finished());
        }
        let room = if !lazy {
            window
        } else if sims.is_empty() || std::mem::take(&mut more) {
            (2 * sims.len()).clamp(1, window)
        } else {
            sims.len()
        };
        let resident = sims.len();
        while sims.len() < room {
            match pending.next() {
                Some(b) => sims.push(BlockSim::new(s, b, g)),
                None => break,
            }
        }
        if sims.len() > resident {
            since = g.clock;
        }
        if s.stop.load(Ordering::Relaxed) || sims.iter().all(|b| b.finished()) {
            return;
        }
        let can_admit = sims.len() < window && pending.len() > 0;
        if lazy && g.clock - since >= patience {
            if can_admit {
                more = true;
                continue;
            }
            // Every block that can be is resident: plain turns from here.
            since = g.clock;
        }
        let mut progressed = false;
        for sim in &mut sims {
            if !lazy {
                progressed |= sim.step_slice(g);
                continue;
            }
            // Every block's turn has a slice at least, so that a block waiting on another
            // resident one lets it run whatever the patience left.
            let mut turn = 0;
            while turn < TURN && (turn == 0 || g.clock - since < patience) {
                turn += 1;
                let ran = sim.step_slice(g);
                progressed |= ran;
                if !ran || sim.finished() || sim.spinning(g) {
                    break;
                }
            }
        }
        if sims.iter().all(|b| b.finished()) {
            continue;
        }
        // A grid barrier completes when every block's threads wait at it.
        if all && sims.iter().all(|b| b.finished() || b.waiting_only_at_grid_barrier()) {
            let sites: Vec<Option<(u32, u32)>> = sims.iter().map(|b| b.grid_barrier_consistent()).collect();
            if sims.iter().any(|b| b.finished()) || sites.iter().any(|x| x.is_none() || *x != sites[0]) {
                let waiting = sims.iter().find(|b| !b.finished()).expect("some block waits");
                waiting.report_grid_divergence(g);
                return;
            }
            g.grid_epoch += 1;
            s.made_progress();
            for sim in &mut sims {
                sim.release_grid_barrier();
            }
            continue;
        }
        // Every block blocked or spinning on memory nobody writes: nothing can change, unless
        // a block that has not started yet would (the lazy schedule admits one first).
        let stuck = sims.iter().all(|b| b.finished() || b.spinning(g) || b.runnable.is_empty());
        if lazy && (!progressed || stuck) && can_admit {
            more = true;
            continue;
        }
        if !progressed {
            let b = sims.iter().find(|b| !b.finished()).expect("some block is not finished");
            b.report_deadlock(g);
            return;
        }
        if stuck && let Some(b) = sims.iter().find(|b| !b.finished() && b.spinning(g)) {
            let waiting_to_start = pending.len();
            b.report_spin(g, waiting_to_start);
            return;
        }
    }
}

/// The most slices a block of a polling kernel runs in a row in the lazy schedule
/// ([`run_coresident`]) before the next resident block's turn.
const TURN: u32 = 256;

/// The most steps the lazy schedule's resident blocks run with no block finishing before
/// it doubles them ([`run_coresident`]): a look-back scan's block takes some ten thousand.
const PATIENCE: u64 = 1 << 18;

/// The order blocks start in: `0, 1, ...` for the deterministic schedule, a pseudo-random
/// permutation for a seeded one. Computed one block at a time, in constant memory: the
/// permutation is a four-round Feistel network on the smallest even-width power of two that
/// holds the grid, walked in cycles until it lands inside the grid (a bijection on a larger
/// set restricted this way is a bijection on the grid).
pub(crate) struct BlockOrder {
    grid: u32,
    next: u64,
    keys: Option<[u64; 4]>,
    half: u32,
}

impl BlockOrder {
    fn new(grid: u32, seed: Option<u64>) -> BlockOrder {
        let bits = 64 - u64::from(grid.max(2) - 1).leading_zeros();
        let half = bits.div_ceil(2);
        let keys = seed.map(|s| {
            let mut r = Rng::new(s);
            [r.next_u64(), r.next_u64(), r.next_u64(), r.next_u64()]
        });
        BlockOrder { grid, next: 0, keys, half }
    }

    fn len(&self) -> usize {
        (u64::from(self.grid) - self.next) as usize
    }

    fn permute(&self, keys: &[u64; 4], mut x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        loop {
            let (mut l, mut r) = (x >> self.half, x & mask);
            for k in keys {
                let f = (r ^ k).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) & mask;
                (l, r) = (r, l ^ f);
            }
            x = (l << self.half) | r;
            if x < u64::from(self.grid) {
                return x;
            }
        }
    }
}

impl Iterator for BlockOrder {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.next >= u64::from(self.grid) {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(match &self.keys {
            None => i as u32,
            Some(k) => self.permute(k, i) as u32,
        })
    }
}

/// The shared memory a kernel needs: the largest extent of any shared allocation of any
/// function it reaches, at the offsets its calls give.
fn smem_of(code: &Code, f: u32) -> u64 {
    fn walk(code: &Code, f: u32, base: u64, depth: u32) -> u64 {
        if depth > 64 {
            return base;
        }
        let mut need = base;
        for op in &code.funcs[f as usize].ops {
            match op {
                // The dynamic array's end is the launch's (`Launch::dyn_smem`).
                Op::SharedAddr { offset, len, .. } if *len == prism_ir::ir::DYNAMIC_LEN => {
                    need = need.max(base + offset)
                }
                Op::SharedAddr { offset, len, .. } => need = need.max(base + offset + len),
                Op::Call { func, smem_offset, .. } => need = need.max(walk(code, *func, base + smem_offset, depth + 1)),
                _ => {}
            }
        }
        need
    }
    walk(code, f, 0, 0)
}

/// Whether a kernel (or a function it calls) has a grid-wide barrier.
pub fn has_grid_barrier(code: &Code, kernel: u32, block: u32) -> bool {
    let mut grid = false;
    collect_scopes(code, kernel, block, &mut Vec::new(), &mut grid, &mut vec![false; code.funcs.len()]);
    grid
}

/// Whether a kernel (or a function it calls) polls memory with atomic or volatile loads.
fn polls(code: &Code, f: u32) -> bool {
    fn walk(code: &Code, f: u32, seen: &mut Vec<bool>) -> bool {
        if std::mem::replace(&mut seen[f as usize], true) {
            return false;
        }
        code.funcs[f as usize].ops.iter().any(|op| match op {
            Op::Intr(i) => matches!(**i, crate::code::Intr::AtomicLoad { .. }),
            Op::Call { func, .. } => walk(code, *func, seen),
            _ => false,
        })
    }
    walk(code, f, &mut vec![false; code.funcs.len()])
}

/// The barrier scopes (in threads) a kernel can reach, and whether it has grid barriers.
fn collect_scopes(code: &Code, f: u32, t: u32, out: &mut Vec<u64>, grid: &mut bool, seen: &mut Vec<bool>) {
    if seen[f as usize] {
        return;
    }
    seen[f as usize] = true;
    for op in &code.funcs[f as usize].ops {
        match op {
            Op::Barrier { scope, .. } => match scope.level {
                Level::Thread => out.push(scope.n),
                Level::Block if scope.n == 1 => out.push(u64::from(t)),
                _ => *grid = true,
            },
            Op::Call { func, .. } => collect_scopes(code, *func, t, out, grid, seen),
            _ => {}
        }
    }
}

/// The most memory the race shadow of global buffers may take, counted as a full cell per
/// element (about 260 bytes; the lazy shadow takes much less when elements are touched once).
pub const MAX_SHADOW_BYTES: u64 = 4 << 30;

/// The bytes race checking needs for buffers of `elements` elements in all.
pub fn shadow_bytes(elements: u64) -> u64 {
    elements.saturating_mul(std::mem::size_of::<GCell>() as u64)
}

#[cfg(test)]
mod tests {
    use super::BlockOrder;

    /// Every order visits each block exactly once, for grids around powers of two and odd
    /// half-widths, and a seed actually shuffles.
    #[test]
    fn block_orders_are_permutations() {
        for grid in [1u32, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 1000, 4095, 4096, 4097, 65_537] {
            for seed in [None, Some(1), Some(0xDEAD_BEEF)] {
                let order: Vec<u32> = BlockOrder::new(grid, seed).collect();
                assert_eq!(order.len(), grid as usize);
                let mut seen = vec![false; grid as usize];
                for b in &order {
                    assert!(!std::mem::replace(&mut seen[*b as usize], true), "grid {grid}: {b} twice");
                }
                if seed.is_some() && grid >= 64 {
                    assert!(order.iter().enumerate().filter(|(i, b)| *i as u32 != **b).count() > grid as usize / 2);
                }
            }
        }
        // The largest grid: the first blocks come at once, without materialising the order.
        let first: Vec<u32> = BlockOrder::new(u32::MAX, Some(3)).take(4).collect();
        assert!(first.iter().all(|&b| b < u32::MAX));
    }
}
