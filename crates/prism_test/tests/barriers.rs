//! Every barrier synchronisation inference inserts is needed.
//!
//! For every program of the corpus (`tests/ui/accept/**`, `tests/ui/run/**`) with launches and
//! inferred barriers, and for each of its inferred barriers in turn: compile the program
//! without that barrier (`prism_driver::Options::skip_barriers`), run each launch under the
//! deterministic schedule and a few random ones, and compare with the whole program. The
//! barrier is needed when some run reports a dynamic check (a `data-race`, mostly) or leaves
//! different buffers.
//!
//! Every inferred barrier must be needed, except the few in [`REDUNDANT`], which the analysis
//! inserts because it is conservative. A listed barrier must go unnoticed on its own, and all
//! the listed barriers of a program together too; an entry that turns out to be needed fails
//! the test, so the list stays honest. Since a redundant barrier can do the work of another
//! (a warp barrier in a callee orders a block of one warp), every other barrier is removed
//! together with the program's listed ones: it must be needed once only the redundant ones
//! are gone.
//!
//! A barrier that no run misses can also mean the launch is too small to exercise it (a loop
//! that runs once never takes its back edge): fix the launch, not the list.
//!
//! Most accepted kernels write their barriers out, and inference adds none where a written
//! one already orders the accesses; `tests/ui/run/inferred/` holds copies of some of them
//! with the written barriers removed, so that this test exercises real inferred barriers.

use prism_interp::{Config, Module};
use prism_ir::ir::{Block, InstKind};
use prism_sync::InsertedBarrier;
use prism_test::repo_root;
use prism_test::run::{
    Launch, buffer_bits, clean_launches, corpus_files, describe_report, first_difference, line_of, par_map, run,
    schedule_dependent,
};
use std::path::{Path, PathBuf};

/// Random schedules each launch runs under without a barrier, besides the deterministic one.
const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

/// Inferred barriers known to be redundant in the corpus: (file, line of the instruction the
/// barrier is placed before, why). Each is needed by the function it stands in for some
/// call its signature allows, since functions are analysed on their own (docs/language.md,
/// "Synchronisation inference"), but not for the calls the corpus makes.
const REDUNDANT: &[(&str, usize, &str)] = &[
    ("tests/ui/accept/seeds/005_snap_fig6_mma_tf32_naive.prism", 38, FIG6_WARP_BARRIER),
    ("tests/ui/accept/seeds/019_parallax_fig6_mma_tf32_naive_partial.prism", 37, FIG6_WARP_BARRIER),
    ("tests/ui/accept/seeds/041_prism_fig6_mma_tf32_naive.prism", 41, FIG6_WARP_BARRIER),
    (
        "tests/ui/accept/seeds/014_snap_s64_load_signature.prism",
        35,
        "`load` reads back exactly the elements each thread wrote (`t * 2 + i`, `i < 2`); the \
         caller is analysed against `load`'s signature, which allows reading any element of \
         the tile",
    ),
    ("tests/ui/accept/kernels/38_hgemm_warp_specialised.prism", 59, HGEMM_STORE),
    ("tests/ui/accept/kernels/38_hgemm_warp_specialised.prism", 71, HGEMM_STORE),
    ("tests/ui/accept/kernels/43_gemm_tf32_wgmma.prism", 56, TF32_GEMM_STORE),
    // Kernel 43's store again, in its variant with K steps of 64 in two boxes per stage.
    ("tests/ui/accept/rules/pipeline_specialised_boxes.prism", 208, TF32_GEMM_STORE),
    // Kernel 48 is kernel 38's pipeline in tf32: the same two stores.
    ("tests/ui/accept/kernels/48_gemm_tf32_warp_specialised.prism", 69, HGEMM_STORE),
    ("tests/ui/accept/kernels/48_gemm_tf32_warp_specialised.prism", 81, HGEMM_STORE),
    ("tests/ui/accept/rules/tma_store_grid_reload.prism", 21, TMA_LOAD_THEN_STORE),
    ("tests/ui/accept/soundness/cast_index_fn.prism", 26, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/cast_index_fn.prism", 47, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 32, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 53, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 74, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 95, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 116, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 137, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 158, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 179, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 200, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 221, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 242, REDUCTION_OWN_RESULT),
    ("tests/ui/accept/soundness/spelled_index_fn.prism", 264, REDUCTION_OWN_RESULT),
    // Not redundant: needed, but by a conflict the simulator cannot see (listed here so that
    // the test says so if it ever learns to). The same file's barrier between two sums (line
    // 24) was listed until the simulator learned to see it (2026-11-29, atomic phases).
    ("tests/ui/accept/soundness/std_shared_scratch.prism", 17, STD_SHARED_SCRATCH),
];

const STD_SHARED_SCRATCH: &str = "the grid barrier between two device-wide scans sharing the standard library's \
     scratch: without it a block of the second call may overwrite an aggregate a late block of the first has not \
     read yet, but the writes are atomic stores and the reads the look-back's volatile loads (unsafe code), which \
     never race with atomics in the simulator's model (docs/soundness.md §8, `lookback_prefix`). The look-back \
     then stops with `trap` when a read meets the other call's value, which the launches here do not hit. (Two sums \
     sharing `partials` are seen: the second call's atomic store of a part and the first call's last block's \
     atomic load of it are atomics of safe code at different places in no order, `atomic-phase`.)";

const REDUCTION_OWN_RESULT: &str = "the block barrier after a tree reduction, before thread 0 stores `s[0]`: the \
     last pass's only write is thread 0's own `s_t[0]`, so its program order suffices; inference orders every \
     thread's writes of the partition before the block-level read (the kernel guarantees one thread only, so no \
     other thread can be the reader here)";

const TMA_LOAD_THEN_STORE: &str = "the block barrier between a TMA load of `tile` and the TMA store of `tile`: \
     one thread issues both, and it waited for the load's landing itself, so its program order already orders \
     them; inference orders an `async` scope's writes before any thread's later reads, as another thread's \
     store would need";

const TF32_GEMM_STORE: &str = "the warpgroup barrier before the consumer's `store_tile` call in kernel 43's pipeline \
     loop: the call runs once per block, at the last K step (`q == steps - 1`), so no two calls by one warpgroup \
     exist to order; inference sees a write of the whole warpgroup view of `c` in every iteration, and \
     `store_tile`'s fragment view is not affine (as `HGEMM_STORE`)";

const HGEMM_STORE: &str = "the warpgroup barrier before a consumer's `store_tile` call: consecutive calls by one \
     warpgroup store different output tiles (`bid + blocks * (q / steps)` grows with `q`), but each call is a write \
     of the whole warpgroup view of `c`, and `store_tile` is analysed on its own: its fragment view \
     (`(row + 8 (q / 2 % 2)) n + col + ...`) is not affine, so no ownership proof separates two calls";

const FIG6_WARP_BARRIER: &str = "the `__syncwarp()` in `simple_mma` between loading the C fragment from `c` and \
     storing it back: with the `n` = 8 the kernel passes, each lane reads and writes only its own four elements of \
     `c` (`(x/4 + ro) * n + 2 * (x % 4) + co`), but `simple_mma` is analysed on its own, and for a smaller `n` \
     lanes would share elements (the ownership proof does not follow `/` and `%` either)";

/// The fewest inferred barriers the corpus must exercise, so that the test cannot pass by
/// finding nothing to remove.
const AT_LEAST: usize = 50;

/// A program's path relative to the repository root.
fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

/// A program with inferred barriers and launches.
struct Program {
    path: PathBuf,
    name: String,
    src: String,
    launches: Vec<Launch>,
    barriers: Vec<InsertedBarrier>,
    /// Indices (into `barriers`) of the ones [`REDUNDANT`] lists.
    redundant: Vec<usize>,
}

impl Program {
    /// The line of the instruction barrier `i` is placed before.
    fn line(&self, i: usize) -> usize {
        line_of(&self.src, self.barriers[i].at.start)
    }

    /// Barrier `i`, for messages.
    fn describe(&self, i: usize) -> String {
        let b = &self.barriers[i];
        format!(
            "barrier {i} ({} barrier before line {}, ordering line {} -> line {})",
            prism_sync::describe_scope(b.scope),
            self.line(i),
            line_of(&self.src, b.before.start),
            line_of(&self.src, b.after.start)
        )
    }

    /// The program compiled without the inferred barriers `removed`.
    fn without(&self, removed: &[usize]) -> Result<Module, String> {
        let opts = prism_driver::Options { skip_barriers: removed.to_vec(), ..Default::default() };
        let synced = prism_test::synced(&self.name, &self.src, &opts)?;
        if synced.report().barriers != self.barriers {
            return Err("synchronisation inference is not deterministic".into());
        }
        Ok(Module::new(&synced))
    }
}

/// The program at `path`, if it has runnable launches and inferred barriers.
fn program(root: &Path, path: &Path) -> Result<Option<Program>, String> {
    let name = rel(root, path);
    let src = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let launches: Vec<Launch> = clean_launches(&src).map_err(|e| format!("{name}: {e}"))?;
    if launches.is_empty() {
        return Ok(None);
    }
    let synced = prism_test::synced(&name, &src, &prism_driver::Options::default())?;
    let barriers = synced.report().barriers.clone();
    if barriers.is_empty() {
        return Ok(None);
    }
    let mut p = Program { path: path.to_path_buf(), name, src, launches, barriers, redundant: vec![] };
    p.redundant = (0..p.barriers.len())
        .filter(|&i| REDUNDANT.iter().any(|(f, line, _)| *f == p.name && *line == p.line(i)))
        .collect();
    Ok(Some(p))
}

/// What removing some barriers did.
enum Verdict {
    /// Some run noticed, as this says.
    Needed(String),
    /// Every run was clean and left the same buffers.
    Unnoticed,
    /// The test could not run (a compile or launch error).
    Broken(String),
    /// Only `buggy_*` kernels reach the barrier: their runs fail by design, so nothing can
    /// judge it (tests/ui/run/checks holds such kernels next to their fixed versions).
    OnlyBuggy,
}

/// Runs every launch of `p` without the barriers `removed` and compares with the whole
/// program.
fn verdict(p: &Program, removed: &[usize]) -> Verdict {
    let dir = p.path.parent().expect("a file has a directory");
    let (whole, without) = match (p.without(&[]), p.without(removed)) {
        (Ok(w), Ok(o)) => (w, o),
        (Err(e), _) | (_, Err(e)) => return Verdict::Broken(e),
    };
    let funcs: Vec<usize> = removed.iter().map(|&i| p.barriers[i].func.index()).collect();
    let mut exercised = false;
    for launch in &p.launches {
        let k = &launch.kernel;
        let Some(kernel) = whole.ir.functions.iter().position(|f| f.name == *k) else {
            return Verdict::Broken(format!("no kernel `{k}`"));
        };
        // Only launches of kernels that can reach a removed barrier can miss it.
        if !funcs.iter().any(|&f| reaches(&whole.ir, kernel, f)) {
            continue;
        }
        exercised = true;
        let Some(info) = whole.kernel(k) else { return Verdict::Broken(format!("no kernel `{k}`")) };
        let compare = !schedule_dependent(&p.name, launch);
        let (expected, steps) = match run(&whole, launch, dir, Config::default()) {
            Ok((args, out)) if out.is_clean() => (buffer_bits(&info, &args), out.steps),
            Ok((_, out)) => return Verdict::Broken(format!("`{k}`: {}", describe_report(&p.src, &out.reports[0]))),
            Err(e) => return Verdict::Broken(format!("`{k}`: {e}")),
        };
        // A missing barrier may turn a wait into an endless loop: bound the work generously.
        let fuel = steps.saturating_mul(50).max(1_000_000);
        for seed in std::iter::once(None).chain(SEEDS.map(Some)) {
            let sched = seed.map_or("the deterministic schedule".to_string(), |s| format!("seed {s}"));
            let (args, out) = match run(&without, launch, dir, Config { seed, fuel, ..Config::default() }) {
                Ok(r) => r,
                Err(e) => return Verdict::Broken(format!("`{k}`: {e}")),
            };
            if let Some(r) = out.reports.first() {
                return Verdict::Needed(format!("`{k}` under {sched}: {}", describe_report(&p.src, r)));
            }
            if let Some(d) = first_difference(&expected, &buffer_bits(&info, &args)).filter(|_| compare) {
                return Verdict::Needed(format!("`{k}` under {sched}: {d}"));
            }
        }
    }
    if !exercised {
        let buggy = prism_test::run::launches(&p.src).unwrap_or_default().into_iter().any(|l| {
            prism_test::run::is_buggy(&l)
                && whole
                    .ir
                    .functions
                    .iter()
                    .position(|f| f.name == l.kernel)
                    .is_some_and(|k| funcs.iter().any(|&f| reaches(&whole.ir, k, f)))
        });
        if buggy {
            return Verdict::OnlyBuggy;
        }
        return Verdict::Broken("no launch runs a kernel that reaches the barrier".into());
    }
    Verdict::Unnoticed
}

/// Whether function `from` is, or calls (directly or not), function `to`.
fn reaches(ir: &prism_ir::ir::Program, from: usize, to: usize) -> bool {
    fn calls(block: &Block, out: &mut Vec<usize>) {
        for inst in &block.insts {
            if let InstKind::Call { func, .. } = &inst.kind {
                out.push(func.index());
            }
            for inner in inst.kind.blocks() {
                calls(inner, out);
            }
        }
    }
    let mut seen = vec![false; ir.functions.len()];
    let mut stack = vec![from];
    while let Some(f) = stack.pop() {
        if f == to {
            return true;
        }
        if !std::mem::replace(&mut seen[f], true) {
            calls(&ir.functions[f].body, &mut stack);
        }
    }
    false
}

/// One experiment: a program without some of its barriers.
struct Job {
    program: usize,
    removed: Vec<usize>,
}

#[test]
fn every_inferred_barrier_is_needed() {
    let root = repo_root();
    let mut failures = Vec::new();
    let mut programs = Vec::new();
    for path in corpus_files(&root) {
        match program(&root, &path) {
            Ok(Some(p)) => programs.push(p),
            Ok(None) => {}
            Err(e) => failures.push(e),
        }
    }
    // Each barrier alone; each unlisted one also with the program's listed ones; the listed
    // ones all together.
    let mut jobs = Vec::new();
    for (pi, p) in programs.iter().enumerate() {
        for i in 0..p.barriers.len() {
            jobs.push(Job { program: pi, removed: vec![i] });
            if !p.redundant.is_empty() && !p.redundant.contains(&i) {
                jobs.push(Job { program: pi, removed: [vec![i], p.redundant.clone()].concat() });
            }
        }
        if p.redundant.len() > 1 {
            jobs.push(Job { program: pi, removed: p.redundant.clone() });
        }
    }
    let verdicts = par_map(&jobs, |j| verdict(&programs[j.program], &j.removed));
    for (j, v) in jobs.iter().zip(&verdicts) {
        let p = &programs[j.program];
        let what = if j.removed.len() == 1 {
            p.describe(j.removed[0])
        } else if p.redundant.contains(&j.removed[0]) {
            format!("the redundant barriers {:?} together", j.removed)
        } else {
            format!("{} with the redundant barriers {:?}", p.describe(j.removed[0]), p.redundant)
        };
        let listed = j.removed.iter().all(|i| p.redundant.contains(i));
        let alone = j.removed.len() == 1 && !listed && !p.redundant.is_empty();
        match v {
            Verdict::Broken(e) => failures.push(format!("{}: {what}: {e}", p.name)),
            Verdict::OnlyBuggy => {}
            Verdict::Needed(how) if listed => {
                failures.push(format!("{}: {what} is listed as redundant, but it is needed: {how}", p.name))
            }
            // Another, redundant barrier may do its work: the job with those removed decides.
            Verdict::Needed(_) | Verdict::Unnoticed if alone => {}
            Verdict::Needed(_) => {}
            Verdict::Unnoticed if listed => {}
            Verdict::Unnoticed => failures.push(format!(
                "{}: {what} is not needed: every run without it was clean and left the same buffers (a launch \
                 too small to exercise it, a redundant barrier, or a race the simulator misses)",
                p.name
            )),
        }
    }
    for (f, line, _) in REDUNDANT {
        if !programs.iter().any(|p| p.name == *f && p.redundant.iter().any(|&i| p.line(i) == *line)) {
            failures.push(format!("{f}:{line}: listed as a redundant barrier, but no inferred barrier is there"));
        }
    }
    assert!(failures.is_empty(), "{} problems:\n  {}", failures.len(), failures.join("\n  "));
    let total: usize = programs.iter().map(|p| p.barriers.len()).sum();
    assert!(total >= AT_LEAST, "only {total} inferred barriers in the corpus (at least {AT_LEAST} expected)");
}

/// Every barrier the optimiser removes is redundant: for each corpus program where
/// `prism_sync::opt` removed some, each launch runs clean, with every check on, under the
/// deterministic schedule and random ones, both with and without the optimiser, and leaves
/// the same buffers. The optimiser is trusted code (the simulator and the CUDA backend both
/// run its output), so what it removes must be shown unneeded where the corpus can show it.
#[test]
fn every_barrier_the_optimiser_removes_is_redundant_on_the_corpus_launches() {
    use prism_test::run::{buffer_bits, clean_launches, compile_with, corpus_files, first_difference, run};
    let root = repo_root();
    let (mut programs, mut removed, mut runs) = (0, 0, 0);
    let mut failures = Vec::new();
    for path in corpus_files(&root) {
        let src = std::fs::read_to_string(&path).expect("readable");
        let name = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
        let Ok(synced) = prism_test::synced(&name, &src, &prism_driver::Options::default()) else { continue };
        let counts = synced.barrier_counts();
        let Ok(launches) = clean_launches(&src) else { continue };
        if counts.before == counts.after || launches.is_empty() {
            continue;
        }
        programs += 1;
        removed += counts.before - counts.after;
        // `.npy` arguments are relative to the program's folder.
        let dir = path.parent().expect("a file has a folder").to_path_buf();
        let optimised = prism_interp::Module::new(&synced);
        let plain = compile_with(&src, &prism_driver::Options { optimize: false, ..prism_driver::Options::default() })
            .expect("compiles without the optimiser too");
        for launch in &launches {
            for seed in [None, Some(1), Some(2), Some(3), Some(4), Some(5)] {
                let cfg = prism_interp::Config { seed, ..prism_interp::Config::default() };
                let (a, ra) = run(&optimised, launch, &dir, cfg).expect("the launch runs");
                let (b, rb) = run(&plain, launch, &dir, cfg).expect("the launch runs");
                runs += 1;
                if !ra.is_clean() || !rb.is_clean() {
                    failures.push(format!(
                        "{name}: `{}` under {seed:?}: {:?} / {:?}",
                        launch.kernel, ra.reports, rb.reports
                    ));
                    continue;
                }
                let k = optimised.kernel(&launch.kernel).expect("kernel");
                if let Some(d) = first_difference(&buffer_bits(&k, &a), &buffer_bits(&k, &b)) {
                    failures.push(format!("{name}: `{}` under {seed:?}: optimised and not differ: {d}", launch.kernel));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The corpus has such programs (`tests/ui/accept/rules/corner_elif_chains.prism`): the
    // test must not pass by finding nothing to check.
    assert!(programs > 0 && removed > 0 && runs > 0, "no program lost a barrier to the optimiser");
}
