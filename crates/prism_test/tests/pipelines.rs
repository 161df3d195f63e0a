//! Every part of a pipeline loop's synchronisation is needed.
//!
//! A `for t in pipeline(n, stages=S)` loop (docs/language.md, "Pipelines") is ordered by
//! what the lowering puts at the top of each iteration: `cp.async.wait_group S-2`, which
//! completes the copies of the tile about to be used, and a block barrier, which makes
//! every thread's copies visible and frees the slot the next fill reuses. Synchronisation
//! inference does not look inside the loop, so nothing else would catch a mistake there.
//!
//! A warp-specialised pipeline (its body one `match split`) is ordered instead by a full
//! and an empty mbarrier per slot, which the consumers and the producer wait for.
//!
//! A body that turns at `stage(ring, next=True)` waits at the top of the first tile only,
//! and for every later tile at the turn of the iteration before: both pairs are needed.
//!
//! A consumer case whose stages are `late=True` releases each slot at the end of the next
//! tile's iteration, after the `wgmma_wait(1)` that completes the tile's wgmmas: releasing
//! it at the end of its own iteration lets the producer refill it under them.
//!
//! For every program of the corpus with a pipeline and launches: the program runs clean,
//! and with each weakening that applies to it ([`prism_driver::Weaken`]: no barrier, a wait
//! that leaves one more group in flight, at the top or at the turn; no wait for a full
//! slot, no wait for an empty one)
//! some run, under the deterministic schedule or a random one, reports a dynamic check or
//! leaves different buffers.

use prism_driver::Weaken;
use prism_interp::{Config, Module};
use prism_test::repo_root;
use prism_test::run::{buffer_bits, clean_launches, corpus_files, describe_report, first_difference, run};

const SEEDS: [u64; 3] = [1, 2, 3];

/// What a weakened program did on the launches of `src`: `Ok(how)` when a run noticed.
/// `Ok(None)` when the weakening does not apply to the program (a plain pipeline has no
/// mbarriers, a warp-specialised one no `wait_group`).
fn noticed(name: &str, src: &str, dir: &std::path::Path, w: Weaken) -> Result<Option<String>, String> {
    let whole = Module::new(&prism_test::synced(name, src, &prism_driver::Options::default())?);
    let opts = prism_driver::Options { weaken_pipelines: Some(w), ..Default::default() };
    let weak = Module::new(&prism_test::synced(name, src, &opts)?);
    if prism_ir::print::print(&whole.ir) == prism_ir::print::print(&weak.ir) {
        return Ok(None);
    }
    for launch in clean_launches(src)? {
        let k = &launch.kernel;
        let info = whole.kernel(k).ok_or_else(|| format!("no kernel `{k}`"))?;
        let (expected, steps) = match run(&whole, &launch, dir, Config::default())? {
            (args, out) if out.is_clean() => (buffer_bits(&info, &args), out.steps),
            (_, out) => return Err(format!("`{k}` is not clean: {}", describe_report(src, &out.reports[0]))),
        };
        let fuel = steps.saturating_mul(50).max(1_000_000);
        for seed in std::iter::once(None).chain(SEEDS.map(Some)) {
            let (args, out) = run(&weak, &launch, dir, Config { seed, fuel, ..Config::default() })?;
            if let Some(r) = out.reports.first() {
                return Ok(Some(format!("`{k}` (seed {seed:?}): {}", describe_report(src, r))));
            }
            if let Some(d) = first_difference(&expected, &buffer_bits(&info, &args)) {
                return Ok(Some(format!("`{k}` (seed {seed:?}): {d}")));
            }
        }
    }
    Err("no run noticed".into())
}

/// Every report of a launch under the deterministic schedule and each of [`SEEDS`].
fn reports(module: &Module, src: &str, launch: &prism_test::run::Launch, dir: &std::path::Path) -> Vec<String> {
    let mut seen = Vec::new();
    for seed in std::iter::once(None).chain(SEEDS.map(Some)) {
        let (_, out) = run(module, launch, dir, Config { seed, ..Config::default() }).expect("runs");
        seen.extend(out.reports.iter().map(|r| describe_report(src, r)));
    }
    seen
}

#[test]
fn every_pipeline_wait_and_barrier_is_needed() {
    let root = repo_root();
    let mut checked = 0;
    let mut specialised = 0;
    let mut turning = 0;
    let mut late = 0;
    let mut failures = Vec::new();
    for path in corpus_files(&root) {
        let src = std::fs::read_to_string(&path).expect("corpus file");
        if !src.contains("in pipeline(") || clean_launches(&src).map_or(true, |l| l.is_empty()) {
            continue;
        }
        let name = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
        let dir = path.parent().expect("a directory");
        let mut applied = 0;
        for w in [
            Weaken::NoBarrier,
            Weaken::WaitOneLess,
            Weaken::NoFullWait,
            Weaken::NoEmptyWait,
            Weaken::NoTurnBarrier,
            Weaken::TurnWaitOneLess,
            Weaken::EarlyTurn,
            Weaken::EarlyRelease,
        ] {
            match noticed(&name, &src, dir, w) {
                Ok(Some(_)) => {
                    applied += 1;
                    specialised += usize::from(w == Weaken::NoFullWait);
                }
                Ok(None) => {}
                Err(e) => failures.push(format!("{name}: {w:?}: {e}")),
            }
        }
        // Each kind of pipeline has two ways to break: its two waits, or its wait and barrier;
        // a body that turns has a second wait and barrier, at the turn.
        let want = if src.contains("next=True") { 5 } else { 2 } + usize::from(src.contains("late=True"));
        if applied < want {
            failures.push(format!("{name}: only {applied} weakening(s) applied, {want} expected"));
        }
        turning += usize::from(src.contains("next=True"));
        late += usize::from(src.contains("late=True"));
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} corpus programs have pipelines");
    assert!(specialised >= 1, "no warp-specialised pipeline was weakened");
    assert!(turning >= 1, "no pipeline that turns was weakened");
    assert!(late >= 1, "no pipeline with late stages was weakened");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A current-tile read moved past the turn, in a ring of three slots: the fill that
/// overwrites its slot is waited for two iterations later, after another barrier, so a
/// copy's write checked only at its wait is ordered after the read. The simulator checks
/// the write at the issue too, and any access to the destination between issue and wait
/// (docs/simulator.md, races), and so sees a faster thread's copy land under a slower
/// thread's read.
#[test]
fn a_read_of_a_slot_being_refilled_is_a_race() {
    let root = repo_root();
    let name = "tests/ui/accept/rules/pipeline_next.prism";
    let src = std::fs::read_to_string(root.join(name)).expect("corpus file");
    let opts = prism_driver::Options { weaken_pipelines: Some(Weaken::EarlyTurn), ..Default::default() };
    let weak = Module::new(&prism_test::synced(name, &src, &opts).expect("compiles"));
    let launch = clean_launches(&src)
        .expect("launches")
        .into_iter()
        .find(|l| l.kernel == "next3" && l.args.iter().any(|(k, v)| k == "n" && v == "7"))
        .expect("a launch of next3 over 7 tiles");
    let seen = reports(&weak, &src, &launch, &root.join("tests/ui/accept/rules"));
    assert!(
        seen.iter().any(|r| r.starts_with("[data-race]") && (r.contains("`slot`") || r.contains("`s`"))),
        "no run reported the read of a slot being refilled: {seen:?}"
    );
}

/// A warp-specialised pipeline's mbarriers are invalidated by one thread after the
/// pipeline's last barrier, and their bytes belong to the enclosing scope, which a later
/// scope reuses. Without the barrier the lowering puts after the invalidation, the other
/// threads' stores to the reused bytes race with it: the simulator takes an mbarrier's
/// initialisation and invalidation for writes of its 8 bytes.
#[test]
fn reused_mbarrier_bytes_race_with_their_invalidation_without_the_last_barrier() {
    let root = repo_root();
    let name = "tests/ui/accept/rules/pipeline_specialised.prism";
    let src = std::fs::read_to_string(root.join(name)).expect("corpus file");
    let opts = prism_driver::Options { weaken_pipelines: Some(Weaken::NoInvalBarrier), ..Default::default() };
    let weak = Module::new(&prism_test::synced(name, &src, &opts).expect("compiles"));
    let launch = clean_launches(&src)
        .expect("launches")
        .into_iter()
        .find(|l| l.kernel == "mbarrier_reuse")
        .expect("a launch of mbarrier_reuse");
    let seen = reports(&weak, &src, &launch, &root.join("tests/ui/accept/rules"));
    assert!(
        seen.iter().any(|r| r.starts_with("[data-race]")),
        "no run reported the reuse of the invalidated mbarriers' bytes: {seen:?}"
    );
}

/// Kernel 38's consumers keep a stage's wgmmas in flight with `wgmma_wait(1)` and release
/// its slot one tile late. Released at the end of its own tile instead, the slot is refilled
/// by TMA while the tensor cores may still read it: the simulator, which holds a wgmma's
/// reads of its tiles open until the wait that completes its group, reports the copy's
/// write into them.
#[test]
fn a_slot_released_under_a_pending_wgmma_is_refilled_under_it() {
    let root = repo_root();
    let name = "tests/ui/accept/kernels/38_hgemm_warp_specialised.prism";
    let src = std::fs::read_to_string(root.join(name)).expect("corpus file");
    let opts = prism_driver::Options { weaken_pipelines: Some(Weaken::EarlyRelease), ..Default::default() };
    let weak = Module::new(&prism_test::synced(name, &src, &opts).expect("compiles"));
    let launch = clean_launches(&src).expect("launches").into_iter().next().expect("a launch");
    let seen = reports(&weak, &src, &launch, &root.join("tests/ui/accept/kernels"));
    assert!(
        seen.iter().any(|r| r.starts_with("[wgmma-pending]") && r.contains("`ta`")),
        "no run reported the refill of a slot a wgmma still reads: {seen:?}"
    );
}
