//! The soundness search: random well-typed programs, run under many schedules with every
//! dynamic check on, looking for accepted programs that go wrong.
//!
//! Prism promises that a program accepted without `unsafe` never races (unless a
//! partition's index function is non-injective), never diverges at a collective, never
//! leaves a perspective-typed value non-uniform, and computes the same result on every
//! schedule. The search tests that promise on programs nobody wrote by hand:
//!
//! 1. [`gen`] writes a random kernel that follows the typing rules; the pipeline
//!    (`prism_driver`) checks it. Rejected programs are counted and dropped.
//! 2. An accepted program runs on the simulator under the deterministic schedule and
//!    [`Options::schedules`] random ones. Any dynamic-check report, or outputs that differ
//!    between schedules, is a *finding*: a soundness bug. (A program the generator marked as
//!    relying on a partition's trust may race: that is the documented exception, and only
//!    its other failures count.)
//! 3. A finding is minimised by removing statements while the program stays accepted and
//!    keeps failing the same way ([`minimise`]).
//! 4. The simulator checks itself: a clean program's deterministic run must show the same
//!    outputs, reports and step count on the plain simulator (`Module::new_unfused`) as on
//!    its fast paths ([`Failure::FastPaths`]).
//! 5. Mutation testing: each barrier inference inserted into a clean program is removed in
//!    turn; some schedule must then report a race or compute something else, or the barrier
//!    was redundant (counted, not a bug: the optimiser could have removed it).
//!
//! `cargo run --release -p prism_test --bin soundness -- --seconds N --seed S` runs a long
//! search; `crates/prism_test/tests/soundness.rs` runs a short one in CI.

pub mod r#gen;

use prism_interp::{Arg, Buffer, Config, Module};
use prism_types::ty::Scalar;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

pub use prism_interp::rng::Rng;

/// How to search.
#[derive(Clone, Debug)]
pub struct Options {
    /// The first program's seed; program `i` uses `seed + i`.
    pub seed: u64,
    /// Stop after this many programs.
    pub programs: usize,
    /// Or after this long.
    pub time: Duration,
    /// Random schedules per accepted program (besides the deterministic one).
    pub schedules: u64,
    /// Remove each inferred barrier in turn and check it mattered.
    pub mutate: bool,
    /// Minimise findings.
    pub minimise: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { seed: 1, programs: 200, time: Duration::from_secs(60), schedules: 4, mutate: true, minimise: true }
    }
}

/// How an accepted program went wrong.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Failure {
    /// A dynamic check fired (its code).
    Report(&'static str),
    /// Two schedules left different outputs.
    Nondeterministic,
    /// The simulator's fast paths (superinstructions, registers known to be uniform,
    /// inlined calls) and its plain ops disagree on the deterministic schedule: outputs,
    /// reports or step counts (`Module::new_unfused`, docs/simulator.md, Speed). A bug of
    /// the simulator, whose runs are the reference semantics.
    FastPaths,
}

impl Failure {
    /// Words for a report.
    pub fn describe(&self) -> String {
        match self {
            Failure::Report(code) => format!("[{code}]"),
            Failure::Nondeterministic => "outputs differ between schedules".into(),
            Failure::FastPaths => "the simulator's fast paths and its plain ops disagree".into(),
        }
    }
}

/// One soundness bug found.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The program's seed.
    pub seed: u64,
    /// What went wrong.
    pub failure: Failure,
    /// The (minimised) program, with its launch line.
    pub src: String,
    /// The library modules it imports, `(path, text)`.
    pub files: Vec<(String, String)>,
}

/// What a search did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Programs generated.
    pub programs: usize,
    /// Of which the pipeline accepted.
    pub accepted: usize,
    /// Launches run (programs times schedules, mutants included).
    pub runs: usize,
    /// Inferred barriers removed one at a time.
    pub mutants: usize,
    /// Of which no schedule noticed (redundant barriers), with the program's seed.
    pub redundant: Vec<(u64, usize)>,
    /// Programs whose races are the trusted exception.
    pub trusted: usize,
    /// How many accepted programs used each construct.
    pub constructs: BTreeMap<&'static str, usize>,
    /// Soundness bugs.
    pub findings: Vec<Finding>,
    /// Wall time.
    pub elapsed: Duration,
}

impl Summary {
    /// A human-readable report.
    pub fn render(&self) -> String {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let mut s = format!(
            "{} programs in {:.1} s ({:.1} programs/s), {} accepted ({:.0}%), {} runs, {} trusted\n",
            self.programs,
            secs,
            self.programs as f64 / secs,
            self.accepted,
            100.0 * self.accepted as f64 / self.programs.max(1) as f64,
            self.runs,
            self.trusted
        );
        s.push_str(&format!(
            "mutation: {} inferred barriers removed one at a time, {} not noticed by any schedule\n",
            self.mutants,
            self.redundant.len()
        ));
        let per: Vec<String> = self.constructs.iter().map(|(k, v)| format!("{k} {v}")).collect();
        s.push_str(&format!("constructs in accepted programs: {}\n", per.join(", ")));
        s.push_str(&format!("findings: {}\n", self.findings.len()));
        for f in &self.findings {
            s.push_str(&format!("  seed {}: {}\n", f.seed, f.failure.describe()));
        }
        s
    }
}

/// The constructs a program uses, by the text that names them.
const CONSTRUCTS: [(&str, &str); 60] = [
    ("partition", "with partition("),
    ("claim", "with claim("),
    ("async", "with async("),
    ("async-padded-strides", "as cp"),
    ("async-from-gx", "], gx[(b * "),
    ("split", "match split("),
    ("group", "with group("),
    ("for", "for "),
    ("while", "while "),
    ("if", "if "),
    ("atomic", "atomic_"),
    ("shuffle", "shfl"),
    ("call", "warp_total(acc)"),
    ("call-pointers", "rotate("),
    ("call-shared-params", "rotate_s("),
    ("barrier", "__syncthreads()"),
    ("half-block", "thread[64]"),
    ("vector-store", "store_vec("),
    ("vector-2d-view", "lambda q, e:"),
    ("vector-load", "load_vec("),
    ("copy-groups", "as cg"),
    ("tma", "tma_load_2d("),
    ("warp-specialised-pipeline", ") as sl"),
    ("warp-specialised-pipeline-bytes-reused", "with partition(after"),
    ("pipeline", "as pf"),
    ("pipeline-turn", "next=True) as pn"),
    ("pipeline-branch-copies", "4 * t + 128 + 256"),
    ("pipeline-case-copies", "+ 4 * cq"),
    ("generic-sizes", "gshift["),
    ("generic-op", "fold[int, op_"),
    ("generic-op-divergent", "gscan["),
    ("std-warp", "acc + warp_"),
    ("std-block", "acc + block_"),
    ("std-exchange", "block_load_transpose[int]("),
    ("std-scatter-sort", "block_[rs]"),
    ("library", "lib_"),
    ("dynamic-shared", "dyn : shared("),
    ("device-reduce", "total)"),
    ("narrow-branches", "        else:"),
    ("atomic-max", "atomic_max("),
    ("index-fn-call", "f=lambda i: op_"),
    ("call-ranges", "bumpn(v"),
    ("flat-index", "atomic_add(gx[b * "),
    ("one-block", "], acc & 5)"),
    ("wgmma", "wgmma_commit_group()"),
    ("wgmma-two-groups", "wgmma_wait(1)"),
    ("mma", "intrinsic.mma_"),
    ("ldmatrix", "ldmatrix_x"),
    ("ldmatrix-x4-trans", "ldmatrix_x4_trans_"),
    ("mma-call", "= mma_from("),
    ("tma-store-2d", "tma_store_2d("),
    ("tma-store-3d", "tma_store_3d("),
    ("tma-3d", "tma_load_3d("),
    ("block-pairs", "with group(block[2]):"),
    ("block-pairs-split", "match split(block):"),
    ("block-pairs-call", "= pair_bump(g2"),
    ("block-pairs-atomic", "atomic_add(g2["),
    ("block-pairs-loop", "for pr"),
    ("block-pairs-branch", "if ((u2 + q"),
    ("block-pairs-while", "while pk"),
];

/// Runs a search.
pub fn search(opts: &Options) -> Summary {
    let start = Instant::now();
    let mut sum = Summary::default();
    for i in 0..opts.programs {
        if start.elapsed() > opts.time {
            break;
        }
        let seed = opts.seed.wrapping_add(i as u64);
        let p = r#gen::Gen::new(seed).program();
        sum.programs += 1;
        let Some((module, plain)) = modules(&p.src, &p.files) else { continue };
        sum.accepted += 1;
        sum.trusted += usize::from(p.trusted);
        // The helpers mention every construct; count the kernel's own uses.
        let kernel = p.src.split("def fuzz").nth(1).unwrap_or("");
        if let Some(entry) = &p.entry {
            let name: &'static str = match entry.as_str() {
                "entry-block-writer" => "entry-block-writer",
                "entry-block-readonly" => "entry-block-readonly",
                "entry-thread-writer" => "entry-thread-writer",
                "entry-thread-readonly" => "entry-thread-readonly",
                _ => "entry-thread-readonly-shared-block",
            };
            *sum.constructs.entry(name).or_default() += 1;
        }
        for (name, text) in CONSTRUCTS {
            let used = if text == "block_[rs]" {
                kernel.contains("block_scatter_to_blocked[") || kernel.contains("block_radix_sort[")
            } else {
                kernel.contains(text)
            };
            if used {
                *sum.constructs.entry(name).or_default() += 1;
            }
        }
        let (mut failure, outputs, runs) = verdict(&module, &p, opts.schedules);
        sum.runs += runs;
        if failure.is_none() {
            sum.runs += 2;
            if !fast_paths_agree(&module, &plain, &p) {
                failure = Some(Failure::FastPaths);
            }
        }
        if let Some(failure) = failure {
            let src = if opts.minimise { minimise(&p, &failure, opts.schedules) } else { p.src.clone() };
            sum.findings.push(Finding { seed, failure, src, files: p.files.clone() });
            continue;
        }
        if opts.mutate {
            let barriers = module_barriers(&p.src, &p.files);
            for b in 0..barriers {
                sum.mutants += 1;
                let Some(m) = compile_with(&p.src, &p.files, &[b]) else { continue };
                let (f, outs, runs) = verdict(&m, &p, opts.schedules);
                sum.runs += runs;
                if f.is_none() && outs == outputs {
                    sum.redundant.push((seed, b));
                }
            }
        }
    }
    sum.elapsed = start.elapsed();
    sum
}

/// Whether a program's deterministic run with every check on shows the same thing (every
/// output bit, every report, the step count) on the simulator's fast paths and on its plain
/// ops: random programs put the superinstructions, the uniform-register paths and the
/// inlined calls (the generic folds' operators are leaves) where no hand-written test did.
fn fast_paths_agree(fast: &Module, plain: &Module, p: &r#gen::Program) -> bool {
    let run = |m: &Module| {
        let args = arguments(p);
        let cfg = Config { fuel: 20_000_000, ..Config::default() };
        let out = m.launch("fuzz", p.grid, p.block, &args, cfg);
        let bufs: Vec<Vec<u64>> = args.iter().filter_map(|a| a.as_buffer().map(|b| b.to_bits())).collect();
        (format!("{out:?}"), bufs)
    };
    run(fast) == run(plain)
}

/// The pipeline's module for a source (with its library modules), if it is accepted, with
/// and without the simulator's fast paths (one compilation for both).
fn modules(src: &str, files: &[(String, String)]) -> Option<(Module, Module)> {
    synced(src, files, &prism_driver::Options::default()).map(|s| (Module::new(&s), Module::new_unfused(&s)))
}

/// The pipeline's module for a source (with its library modules) with the inferred barriers
/// `skip` left out (mutation testing), if it is accepted.
fn compile_with(src: &str, files: &[(String, String)], skip: &[usize]) -> Option<Module> {
    let opts = prism_driver::Options { skip_barriers: skip.to_vec(), ..prism_driver::Options::default() };
    synced(src, files, &opts).map(|s| Module::new(&s))
}

/// Runs the pipeline on a generated program, `fuzz.prism`, whose imports find `files`
/// (paths relative to it) through `prism_driver::MemoryFiles`; the map and problems too, for
/// rendering.
pub fn compile_generated(
    src: &str,
    files: &[(String, String)],
    opts: &prism_driver::Options,
) -> (prism_span::SourceMap, prism_diag::Problems, Option<prism_driver::Synced>) {
    let mut mem = prism_driver::MemoryFiles::default();
    for (path, text) in files {
        mem.add(path, text.as_str());
    }
    let mut map = prism_span::SourceMap::default();
    let file = map.add("fuzz.prism", src);
    let mut problems = prism_diag::Problems::default();
    let mut search = prism_driver::Search { files: &mut mem, include: Vec::new(), base: None };
    let synced = prism_driver::compile_with(&mut map, file, &mut search, opts, &mut problems);
    (map, problems, synced)
}

/// Runs the pipeline on a generated program ([`compile_generated`]).
pub fn synced(src: &str, files: &[(String, String)], opts: &prism_driver::Options) -> Option<prism_driver::Synced> {
    compile_generated(src, files, opts).2
}

/// The rendered diagnostics of a generated program (with its library modules), for
/// looking at why the pipeline rejects it (`soundness --show SEED`).
pub fn diagnostics(src: &str, files: &[(String, String)]) -> String {
    let (map, mut problems, _) = compile_generated(src, files, &prism_driver::Options::default());
    problems.sort();
    prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never)
}

/// How many barriers inference inserts into an accepted program.
fn module_barriers(src: &str, files: &[(String, String)]) -> usize {
    synced(src, files, &prism_driver::Options::default()).map_or(0, |s| s.report().barriers.len())
}

/// The arguments of a generated program's launch.
fn arguments(p: &r#gen::Program) -> Vec<Arg> {
    let mut rng = Rng::new(7);
    let inp: Vec<i32> = (0..r#gen::INPUT).map(|_| (rng.next_u64() % 2001) as i32 - 1000).collect();
    let mut args = vec![
        Arg::buffer(&inp),
        Arg::Buffer(Buffer::zeroed(Scalar::I32, (p.grid * p.block) as usize)),
        Arg::Buffer(Buffer::zeroed(Scalar::I32, 4)),
        Arg::value(r#gen::INPUT as i32),
        Arg::Tensor {
            buffer: Buffer::from_slice(&(0..r#gen::TILES * 32).map(|i| (i % 997) as i32 - 300).collect::<Vec<i32>>()),
            dims: vec![u64::from(r#gen::TILES), 32],
        },
        Arg::Buffer(Buffer::zeroed(Scalar::I32, r#gen::gx_len(p.grid, p.block) as usize)),
        // `to`: the boxes the blocks store, and what is not stored stays zero.
        Arg::Tensor {
            buffer: Buffer::zeroed(Scalar::I32, (r#gen::TILES * 32) as usize),
            dims: vec![u64::from(r#gen::TILES), 32],
        },
        // `t3`, read by 3-D boxes, and `o3`, which 3-D boxes are stored into.
        Arg::Tensor {
            buffer: Buffer::from_slice(
                &(0..r#gen::PLANES * 8 * 32).map(|i| (i % 883) as i32 - 400).collect::<Vec<i32>>(),
            ),
            dims: vec![u64::from(r#gen::PLANES), 8, 32],
        },
        Arg::Tensor {
            buffer: Buffer::zeroed(Scalar::I32, (r#gen::PLANES * 8 * 32) as usize),
            dims: vec![u64::from(r#gen::PLANES), 8, 32],
        },
    ];
    if p.reduce {
        // `parts` (one per block), `tick`, `total`.
        args.push(Arg::Buffer(Buffer::zeroed(Scalar::I32, 4)));
        args.push(Arg::Buffer(Buffer::zeroed(Scalar::I32, 1)));
        args.push(Arg::Buffer(Buffer::zeroed(Scalar::I32, 1)));
    }
    if let Some(len) = p.dyn_len {
        args.push(Arg::value(len as i32));
    }
    args
}

/// The indices of the arguments a generated kernel writes.
fn written(p: &r#gen::Program) -> Vec<usize> {
    // `out`, `counters`, `gx`, `to`, `o3`, and the reduction's `parts`, `tick`, `total`.
    if p.reduce { vec![1, 2, 5, 6, 8, 9, 10, 11] } else { vec![1, 2, 5, 6, 8] }
}

/// Runs a program under the deterministic schedule and `schedules` random ones: the first
/// failure (a report, or outputs that differ), the outputs of the deterministic run, and
/// how many runs it took.
fn verdict(m: &Module, p: &r#gen::Program, schedules: u64) -> (Option<Failure>, Vec<Vec<i32>>, usize) {
    let mut first: Option<Vec<Vec<i32>>> = None;
    let mut runs = 0;
    for seed in std::iter::once(None).chain((1..=schedules).map(Some)) {
        let args = arguments(p);
        let cfg = Config { seed, fuel: 20_000_000, ..Config::default() };
        runs += 1;
        let out = match m.launch("fuzz", p.grid, p.block, &args, cfg) {
            Ok(o) => o,
            Err(e) => return (Some(Failure::Report(e.code)), Vec::new(), runs),
        };
        let races_trusted = p.trusted;
        // Reading shared memory no thread wrote is outside the guarantee (the generator
        // does it freely; the simulator's poison makes it deterministic): not a finding.
        let reports: Vec<_> = out.reports.iter().filter(|r| r.kind.code() != "uninitialized-read").collect();
        if let Some(r) = reports.iter().find(|r| !(races_trusted && r.kind.code() == "data-race")) {
            return (Some(Failure::Report(r.kind.code())), Vec::new(), runs);
        }
        if !reports.is_empty() {
            // A trusted race: the outputs may differ too, and that is the same exception.
            return (None, Vec::new(), runs);
        }
        // A read of bytes another array wrote (a fresh array over an earlier scope's or a
        // callee's scratch) reads what that array left, which may depend on the schedule:
        // reported, so outside the guarantee like a trusted race (docs/soundness.md §8,
        // "Fresh arrays"). Only reads of bytes no thread wrote see the poison on every
        // schedule, and their outputs are still compared.
        if out.reports.iter().any(|r| r.kind.code() == "uninitialized-read" && r.message.contains("another array had"))
        {
            return (None, Vec::new(), runs);
        }
        let outputs: Vec<Vec<i32>> = written(p)
            .into_iter()
            .map(|i| args[i].as_buffer().and_then(|b| b.to_vec::<i32>()).unwrap_or_default())
            .collect();
        match &first {
            None => first = Some(outputs),
            Some(f) if *f != outputs && !p.trusted => return (Some(Failure::Nondeterministic), Vec::new(), runs),
            Some(_) => {}
        }
    }
    (None, first.unwrap_or_default(), runs)
}

/// Removes statements (a line with the block it opens) while the program stays accepted
/// and fails the same way; returns the smallest program found.
pub fn minimise(p: &r#gen::Program, failure: &Failure, schedules: u64) -> String {
    let mut lines: Vec<String> = p.src.lines().map(str::to_string).collect();
    let fails = |lines: &[String]| -> bool {
        let src = lines.join("\n") + "\n";
        let Some((m, plain)) = modules(&src, &p.files) else { return false };
        let q = r#gen::Program { src, ..p.clone() };
        match failure {
            Failure::FastPaths => verdict(&m, &q, schedules).0.is_none() && !fast_paths_agree(&m, &plain, &q),
            _ => verdict(&m, &q, schedules).0.as_ref() == Some(failure),
        }
    };
    loop {
        let mut progress = false;
        let mut i = 0;
        while i < lines.len() {
            let indent = lines[i].len() - lines[i].trim_start().len();
            let text = lines[i].trim();
            // Only statements inside function bodies; keep decorators, headers and launches.
            if indent == 0 || text.is_empty() || text.starts_with('#') || text.starts_with("def ") {
                i += 1;
                continue;
            }
            let mut end = i + 1;
            while end < lines.len()
                && (lines[end].trim().is_empty() || lines[end].len() - lines[end].trim_start().len() > indent)
            {
                end += 1;
            }
            let mut candidate = lines.clone();
            candidate.drain(i..end);
            if fails(&candidate) {
                lines = candidate;
                progress = true;
            } else {
                i += 1;
            }
        }
        if !progress {
            break;
        }
    }
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_mostly_accepted() {
        let a = r#gen::Gen::new(5).program().src;
        let b = r#gen::Gen::new(5).program().src;
        assert_eq!(a, b);
        let accepted = (0..40)
            .filter(|&s| {
                let p = r#gen::Gen::new(s).program();
                modules(&p.src, &p.files).is_some()
            })
            .count();
        assert!(accepted >= 20, "only {accepted} of 40 generated programs are accepted");
    }

    /// The messages of a deterministic run's reads of unwritten shared memory that `about`
    /// picks out.
    fn unwritten_reads(m: &Module, p: &r#gen::Program, about: impl Fn(&str) -> bool) -> Vec<String> {
        let out = m.launch("fuzz", p.grid, p.block, &arguments(p), Config::default()).expect("launch");
        out.reports
            .iter()
            .filter(|r| r.kind.code() == "uninitialized-read" && about(&r.message))
            .map(|r| r.message.clone())
            .collect()
    }

    /// The wgmma phase's tiles are filled before the wgmma reads them, for both types: the
    /// search's verdict leaves reads of unwritten bytes to their own check, so a tile the
    /// generator forgot (review R58: the tf32 B tile, 64 floats, got `64 / 128 = 0`
    /// elements per thread) would feed every product poison unnoticed.
    #[test]
    fn the_wgmma_phases_read_only_filled_tiles() {
        let mut seen = [0usize; 2];
        for seed in 0..2000u64 {
            if seen.iter().all(|&n| n >= 3) {
                break;
            }
            let p = r#gen::Gen::new(seed).program();
            if !p.src.contains("wgmma_commit_group()") {
                continue;
            }
            let Some((m, _)) = modules(&p.src, &p.files) else { continue };
            let ty = usize::from(p.src.contains("wgmma_tf32("));
            seen[ty] += 1;
            let unwritten = unwritten_reads(&m, &p, |msg| msg.contains("wgmma"));
            assert!(unwritten.is_empty(), "seed {seed}: {unwritten:?}\n{}", p.src);
        }
        assert!(seen.iter().all(|&n| n >= 3), "accepted wgmma programs (bf16, tf32): {seen:?}");
    }

    /// The same for the warp-level mma phase: each type's tiles (`maN`, `mbN`) are filled
    /// before a warp loads fragments from them, by `ldmatrix` or by plain reads, from its
    /// own tile or the next warp's, in the kernel or in the `mma_from` helper.
    #[test]
    fn the_mma_phases_read_only_filled_tiles() {
        let kinds = ["mma_bf16(", "mma_f16(", "mma_tf32(", "= mma_from("];
        let mut seen = [0usize; 5];
        for seed in 0..3000u64 {
            if seen.iter().all(|&n| n >= 3) {
                break;
            }
            let p = r#gen::Gen::new(seed).program();
            // The helpers hold a bf16 mma (`mma_from`): look at the kernel's own.
            let kernel = p.src.split("def fuzz").nth(1).unwrap_or("");
            let Some(k) = kinds.iter().position(|k| kernel.contains(k)) else { continue };
            let Some((m, _)) = modules(&p.src, &p.files) else { continue };
            seen[k] += 1;
            if kernel.contains("ldmatrix_x4_trans_") {
                seen[4] += 1;
            }
            // The tiles by name, or, inside `mma_from`, its parameters' rows (review R61:
            // the helper's reads name `a` and `b`).
            let unwritten = unwritten_reads(&m, &p, |msg| {
                msg.contains("`ma") || msg.contains("`mb") || msg.contains("`ldmatrix` row read")
            });
            assert!(unwritten.is_empty(), "seed {seed}: {unwritten:?}\n{}", p.src);
        }
        assert!(seen.iter().all(|&n| n >= 3), "accepted mma programs (bf16, f16, tf32, mma_from, x4 trans): {seen:?}");
    }

    /// The pair programs exchange data between the two blocks of a pair, so inference puts
    /// barriers over `block[2]` (grid-wide barriers) in them, and those barriers matter:
    /// without one, some schedule reports a race between blocks. A generator whose pair
    /// phases never reached the other block's elements would test nothing of §7.
    #[test]
    fn the_pair_programs_need_their_grid_barriers() {
        let (mut placed, mut needed) = (0, 0);
        for seed in 0..6000u64 {
            if needed >= 3 {
                break;
            }
            let p = r#gen::Gen::new(seed).program();
            if !p.src.contains("with group(block[2]):") {
                continue;
            }
            let Some(synced) = synced(&p.src, &p.files, &prism_driver::Options::default()) else { continue };
            let pairs: Vec<usize> = synced
                .report()
                .barriers
                .iter()
                .enumerate()
                .filter(|(_, b)| b.scope.level == prism_types::perspective::Level::Block && b.scope.n > 1)
                .map(|(i, _)| i)
                .collect();
            placed += usize::from(!pairs.is_empty());
            let Some(&first) = pairs.first() else { continue };
            let m = compile_with(&p.src, &p.files, &[first]).expect("accepted with the barrier");
            let between_blocks = (0..5).any(|seed| {
                let cfg = Config { seed: (seed > 0).then_some(seed), fuel: 20_000_000, ..Config::default() };
                let reports = match m.launch("fuzz", p.grid, p.block, &arguments(&p), cfg) {
                    Ok(out) => out.reports,
                    Err(_) => return false,
                };
                reports.iter().any(|r| r.kind.code() == "data-race" && r.message.contains("different blocks"))
            });
            needed += usize::from(between_blocks);
        }
        assert!(needed >= 3, "pair programs with a grid barrier: {placed}, of which its removal raced: {needed}");
    }

    /// The TMA store phases store: accepted programs with 2-D and with 3-D stores leave
    /// stored values in `to` and `o3` (which start zero), so the search's comparison of
    /// those outputs between schedules has something to compare.
    #[test]
    fn the_tma_store_phases_write_their_boxes() {
        let mut stored = [0usize; 2];
        for seed in 0..4000u64 {
            if stored.iter().all(|&n| n >= 3) {
                break;
            }
            let p = r#gen::Gen::new(seed).program();
            let kind = [p.src.contains("tma_store_2d("), p.src.contains("tma_store_3d(")];
            if !kind.iter().any(|&k| k) {
                continue;
            }
            let Some((m, _)) = modules(&p.src, &p.files) else { continue };
            let args = arguments(&p);
            m.launch("fuzz", p.grid, p.block, &args, Config::default()).expect("launch");
            for (k, at) in [(0, 6), (1, 8)] {
                let vals = args[at].as_buffer().and_then(|b| b.to_vec::<i32>()).unwrap_or_default();
                if kind[k] && vals.iter().any(|&v| v != 0) {
                    stored[k] += 1;
                }
            }
        }
        assert!(stored.iter().all(|&n| n >= 3), "programs whose stores wrote `to`, `o3`: {stored:?}");
    }
}
