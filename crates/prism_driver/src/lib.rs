//! The one Prism pipeline, from source text to the IR both backends consume.
//!
//! ```text
//! .prism text --prism_types::check_source--> tir::Program   (stop on errors)
//!             --prism_ir::lower------------> ir::Program    verify
//!             --prism_ir::asyncwait--------> waits moved    verify
//!             --prism_ir::contract---------> fused fma      verify   (unless turned off)
//!             --prism_sync::infer----------> + barriers     verify   (sync errors: stop)
//!             --prism_sync::motion---------> split barriers verify
//!             --prism_sync::opt::optimize--> fewer barriers verify
//!             = Synced
//! ```
//!
//! [`compile`] is the only function that makes a [`Synced`], and the backends
//! (`prism_interp::Module::new`, `prism_cuda::emit`) take nothing else, so IR that skipped
//! a pass cannot reach either of them: the type system enforces the pipeline. Every caller
//! (the CLI, the tests, the benchmarks, the examples) goes through here.
//!
//! The simulator runs exactly what the CUDA backend prints: the optimised IR. The one step
//! in which they differ is explicit: [`Synced::for_cuda`] drops the uniformity assertions
//! the simulator checks after unsafe code.
//!
//! ```compile_fail
//! // IR that did not go through the pipeline is not a `Synced`.
//! let ir = prism_ir::ir::Program::default();
//! let _ = prism_driver::Synced::from(ir);
//! ```
//!
//! The IR verifier runs after every pass that changes the IR. It is cheap (linear in the
//! IR), so it stays on in release builds; a failure is a compiler bug, not a user error,
//! and panics with the pass and the broken invariant, like an internal compiler error.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod modules;

pub use modules::{Files, MemoryFiles, NoFiles, Search, normalise};
use prism_diag::Problems;
use prism_ir::ir::Program;
use prism_span::{FileId, SourceMap};
pub use prism_sync::SyncReport;
pub use prism_sync::opt::Counts;
use prism_types::Target;

/// Everything that changes what the pipeline produces. One struct, so that every caller
/// states its choices in one place.
#[derive(Clone, Debug)]
pub struct Options {
    /// The device the program is checked for (shared-memory limit, Hopper features).
    pub target: Target,
    /// Split inferred block barriers into arrive/wait halves moved towards their accesses.
    pub motion: bool,
    /// Remove barriers that an earlier one covers (`prism_sync::opt`).
    pub optimize: bool,
    /// Fuse a `float`/`double` product into the addition it feeds (`prism_ir::contract`):
    /// one rounding, the same in the simulator and on the GPU. Off for `--fp-contract off`.
    pub contract: bool,
    /// Also report every inferred barrier as an `inferred-barrier` note
    /// (`prism check --explain-sync`).
    pub explain_sync: bool,
    /// Test-only: leave out the inferred barriers with these indices (in the order of
    /// [`SyncReport::barriers`]), to check that each one matters.
    pub skip_barriers: Vec<usize>,
    /// Test-only: check every answer inference takes from a kept search against a search of
    /// its own (`prism_sync::Options::check_searches`).
    pub check_sync_searches: bool,
    /// Test-only: weaken every pipeline loop's synchronisation this way, to check that the
    /// simulator notices (the pipeline's wait and barrier are all needed).
    pub weaken_pipelines: Option<Weaken>,
    /// `-D NAME=VALUE`: values for the root file's `constexpr` items (see
    /// [`prism_types::Define`]); both backends see the program they make.
    pub defines: Vec<prism_types::Define>,
}

/// A way to break a pipeline loop's synchronisation ([`Options::weaken_pipelines`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weaken {
    /// Leave out the barrier after the wait.
    NoBarrier,
    /// Wait for one group less (`wait_group S-1`): the tile used may still be in flight.
    WaitOneLess,
    /// A warp-specialised pipeline's consumers use a tile without waiting for its full
    /// mbarrier: it may not have landed.
    NoFullWait,
    /// A warp-specialised pipeline's producer fills a slot without waiting for its empty
    /// mbarrier: the consumers may still be using the tile it held.
    NoEmptyWait,
    /// In a body that turns at `stage(ring, next=True)`, leave out the barrier at the turn.
    NoTurnBarrier,
    /// In a body that turns, wait at the turn for one group less: the next tile may still
    /// be in flight.
    TurnWaitOneLess,
    /// In a body that turns, move the turn's wait and barrier up before the last scope
    /// above them (a current-tile stage): its reads then run while a faster thread may
    /// already copy the next fill into the same slot.
    EarlyTurn,
    /// In a warp-specialised pipeline's consumer case whose stages are `late=True`, release
    /// each tile's slot at the end of its own iteration instead of the next one's: its
    /// wgmmas, left in flight by `wgmma_wait(1)`, may still read it while the producer
    /// refills it.
    EarlyRelease,
    /// Leave out the block barrier a warp-specialised pipeline ends with, after one thread
    /// invalidates its mbarriers: a later scope's use of their bytes may then run before
    /// the invalidation.
    NoInvalBarrier,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            target: Target::default(),
            motion: true,
            optimize: true,
            contract: true,
            explain_sync: false,
            skip_barriers: Vec::new(),
            check_sync_searches: false,
            weaken_pipelines: None,
            defines: Vec::new(),
        }
    }
}

/// A program that went through the whole pipeline: checked, lowered, synchronised,
/// optimised and verified. Only [`compile`] makes one.
#[derive(Clone, Debug)]
pub struct Synced {
    ir: Program,
    report: SyncReport,
    barriers: Counts,
}

impl Synced {
    /// The IR the simulator runs (with its uniformity assertions).
    pub fn ir(&self) -> &Program {
        &self.ir
    }

    /// What synchronisation inference and barrier motion did.
    pub fn report(&self) -> &SyncReport {
        &self.report
    }

    /// Barrier counts before and after optimisation.
    pub fn barrier_counts(&self) -> Counts {
        self.barriers
    }

    /// The IR the CUDA backend prints: [`Synced::ir`] without the simulator's uniformity
    /// assertions, which are no code on the GPU.
    pub fn for_cuda(&self) -> Program {
        let mut ir = self.ir.clone();
        prism_sync::opt::strip_asserts(&mut ir);
        ir
    }
}

/// Runs the whole pipeline on file `file` of `map`, whose imports may name the standard
/// library only ([`compile_with`] finds other files). Modules it imports are added to
/// `map`. Diagnostics go to `problems`; `None` when there are errors (from the checker, or
/// orderings synchronisation cannot provide).
pub fn compile(map: &mut SourceMap, file: FileId, opts: &Options, problems: &mut Problems) -> Option<Synced> {
    compile_with(map, file, &mut Search { files: &mut NoFiles, include: Vec::new(), base: None }, opts, problems)
}

/// [`compile`], finding imported files through `search`.
pub fn compile_with(
    map: &mut SourceMap,
    file: FileId,
    search: &mut Search<'_>,
    opts: &Options,
    problems: &mut Problems,
) -> Option<Synced> {
    let errors_before = problems.error_count();
    let tir = checked_defs(map, file, search, &opts.target, &opts.defines, problems)?;
    let mut ir = lower_checked(&tir);
    if opts.contract {
        prism_ir::contract::contract(&mut ir);
        verify(&ir, "floating-point contraction");
    }
    if let Some(w) = opts.weaken_pipelines {
        for f in &mut ir.functions {
            weaken(&mut f.body, w, false);
        }
    }
    let sync_opts = prism_sync::Options { skip: opts.skip_barriers.clone(), check_searches: opts.check_sync_searches };
    let report = prism_sync::infer(&mut ir, &sync_opts);
    ir.number_blocks();
    verify(&ir, "synchronisation inference");
    for d in prism_sync::problems(&ir, &report, map) {
        problems.push(d);
    }
    if opts.explain_sync {
        for d in prism_sync::notes(&ir, &report, map) {
            problems.push(d);
        }
    }
    if problems.error_count() > errors_before {
        return None;
    }
    Some(after_inference(ir, report, opts))
}

/// The passes after synchronisation inference, as `opts` asks: barrier motion, then the
/// barrier optimiser. [`compile_with`] and [`infer`] (for editors) both end here, so an
/// editor shows the barriers the backends get.
fn after_inference(mut ir: Program, mut report: SyncReport, opts: &Options) -> Synced {
    if opts.motion {
        report.motion = prism_sync::motion::motion(&mut ir);
        ir.number_blocks();
        verify(&ir, "barrier motion");
    }
    let barriers = if opts.optimize { prism_sync::opt::optimize(&mut ir) } else { Counts::of(&ir) };
    ir.number_blocks();
    verify(&ir, "barrier optimisation");
    Synced { ir, report, barriers }
}

/// Applies `w` to the wait-and-barrier blocks of the pipeline loops in `b` (test-only).
fn weaken(b: &mut prism_ir::ir::Block, w: Weaken, in_pipeline: bool) {
    use prism_ir::ir::{InstKind, ScopeKind};
    if in_pipeline && matches!(w, Weaken::NoFullWait | Weaken::NoEmptyWait) {
        weaken_roles(b, w);
        return;
    }
    if in_pipeline && w == Weaken::EarlyRelease {
        release_early(b);
        return;
    }
    if in_pipeline && w == Weaken::NoInvalBarrier {
        // The pipeline's last three instructions: barrier, the invalidation (unsafe code),
        // barrier.
        let n = b.insts.len();
        if n >= 3
            && matches!(b.insts[n - 3].kind, InstKind::Barrier { .. })
            && matches!(b.insts[n - 2].kind, InstKind::Unsafe { .. })
            && matches!(b.insts[n - 1].kind, InstKind::Barrier { .. })
        {
            b.insts.pop();
            return;
        }
    }
    let is_pipe_wait = |b: &prism_ir::ir::Block| matches!(b.insts.as_slice(), [x, y] if matches!(x.kind, InstKind::AsyncWait { .. }) && matches!(y.kind, InstKind::Barrier { .. }));
    if in_pipeline && matches!(w, Weaken::NoTurnBarrier | Weaken::TurnWaitOneLess | Weaken::EarlyTurn) {
        // A turn's wait and barrier stand in the body's block, among its statements.
        let turn = (1..b.insts.len()).find(|&k| {
            matches!(b.insts[k - 1].kind, InstKind::AsyncWait { .. })
                && matches!(b.insts[k].kind, InstKind::Barrier { .. })
        });
        if let Some(k) = turn.filter(|_| b.insts.len() > 2) {
            match (&mut b.insts[k - 1].kind, w) {
                (_, Weaken::NoTurnBarrier) => {
                    b.insts.remove(k);
                }
                (_, Weaken::EarlyTurn) => {
                    if let Some(at) = b.insts[..k - 1].iter().rposition(|i| matches!(i.kind, InstKind::Scope { .. })) {
                        let pair: Vec<_> = b.insts.drain(k - 1..=k).collect();
                        b.insts.splice(at..at, pair);
                    }
                }
                (InstKind::AsyncWait { pending, .. }, _) => *pending += 1,
                _ => {}
            }
            return;
        }
    }
    for inst in &mut b.insts {
        let inside = in_pipeline || matches!(inst.kind, InstKind::Scope { kind: ScopeKind::Pipeline, .. });
        if let InstKind::If { then, .. } = &mut inst.kind
            && in_pipeline
            && is_pipe_wait(then)
        {
            match w {
                Weaken::NoBarrier => {
                    then.insts.pop();
                }
                Weaken::WaitOneLess => {
                    if let InstKind::AsyncWait { pending, .. } = &mut then.insts[0].kind {
                        *pending += 1;
                    }
                }
                // Handled by `weaken_roles` and the turn's case above.
                Weaken::NoFullWait
                | Weaken::NoEmptyWait
                | Weaken::NoTurnBarrier
                | Weaken::TurnWaitOneLess
                | Weaken::EarlyTurn
                | Weaken::EarlyRelease
                | Weaken::NoInvalBarrier => {}
            }
            continue;
        }
        for nb in inst.kind.blocks_mut() {
            weaken(nb, w, inside);
        }
    }
}

/// In a warp-specialised pipeline (`prism_ir::lower`, `specialised`), drops the mbarrier
/// wait that starts each tile of the consumers' loops (`NoFullWait`) or of the producer's,
/// the loop that holds the fill's `async` scope (`NoEmptyWait`).
fn weaken_roles(b: &mut prism_ir::ir::Block, w: Weaken) {
    use prism_ir::ir::{InstKind, ScopeKind};
    for inst in &mut b.insts {
        if let InstKind::Loop { body, .. } = &mut inst.kind {
            let producer = body.insts.iter().any(|i| matches!(i.kind, InstKind::Scope { kind: ScopeKind::Async, .. }));
            let wait = body.insts.iter().position(|i| {
                matches!(&i.kind, InstKind::Unsafe { body } if body.insts.iter().any(|x| matches!(&x.kind, InstKind::Intrinsic { intrinsic, .. } if intrinsic.sig().name == "mbarrier_wait_parity")))
            });
            if let Some(k) = wait
                && producer == (w == Weaken::NoEmptyWait)
            {
                body.insts.remove(k);
            }
            continue;
        }
        for nb in inst.kind.blocks_mut() {
            weaken_roles(nb, w);
        }
    }
}

/// In a late consumer case (`prism_ir::lower`, `specialised`), the release that ends each
/// iteration of the case's loop is `if t > 0: arrive(empty[2 ((t - 1) % S) + 1])`: made
/// `if t >= 0: arrive(empty[2 ((t * 1) % S) + 1])`, it releases the iteration's own tile.
/// (The release of the last tile after the loop has the same form and is left alone.)
fn release_early(b: &mut prism_ir::ir::Block) {
    use prism_ir::ir::InstKind;
    use prism_types::tir::BinOp;
    for inst in &mut b.insts {
        if let InstKind::Loop { body, .. } = &mut inst.kind
            && let Some((last, before)) = body.insts.split_last_mut()
            && let InstKind::If { cond, then, .. } = &mut last.kind
            && matches!(then.insts.first().map(|i| &i.kind), Some(InstKind::Binary { op: BinOp::Sub, .. }))
            && matches!(then.insts.last().map(|i| &i.kind), Some(InstKind::Unsafe { .. }))
        {
            if let InstKind::Binary { op, .. } = &mut then.insts[0].kind {
                *op = BinOp::Mul;
            }
            for i in before {
                if let InstKind::Binary { dst, op: op @ BinOp::Gt, .. } = &mut i.kind
                    && *dst == *cond
                {
                    *op = BinOp::Ge;
                }
            }
            continue;
        }
        for nb in inst.kind.blocks_mut() {
            release_early(nb);
        }
    }
}

/// [`compile`] for a source text that is not in a map yet (tests, the Rust API): adds it
/// under `name` and returns the map too, for rendering the diagnostics.
pub fn compile_text(name: &str, src: &str, opts: &Options) -> (SourceMap, Problems, Option<Synced>) {
    let mut map = SourceMap::default();
    let file = map.add(name, src);
    let mut problems = Problems::default();
    let synced = compile(&mut map, file, opts, &mut problems);
    (map, problems, synced)
}

/// The IR of a checked program before synchronisation inference, for IR dumps and pass
/// tests. No backend takes it: only [`compile`]'s [`Synced`] runs.
pub fn lowered(map: &mut SourceMap, file: FileId, target: &Target, problems: &mut Problems) -> Option<Program> {
    lowered_with(map, file, &mut Search { files: &mut NoFiles, include: Vec::new(), base: None }, target, problems)
}

/// [`lowered`], finding imported files through `search`: loads the modules, checks them
/// (each after those it imports) and lowers the whole program.
pub fn lowered_with(
    map: &mut SourceMap,
    file: FileId,
    search: &mut Search<'_>,
    target: &Target,
    problems: &mut Problems,
) -> Option<Program> {
    let tir = checked_with(map, file, search, target, problems)?;
    Some(lower_checked(&tir))
}

/// Lowers a checked program and places its asynchronous waits: the IR every later pass
/// starts from.
fn lower_checked(tir: &prism_types::tir::Program) -> Program {
    let mut ir = prism_ir::lower(tir);
    verify(&ir, "lowering");
    prism_ir::asyncwait::place_waits(&mut ir);
    verify(&ir, "placing asynchronous waits");
    ir
}

/// The front end: loads the modules of the program rooted at `file` through `search`,
/// parses them and checks them, each after those it imports. `None` on errors. (The
/// checker's benchmark times this; every other caller wants [`compile_with`].)
pub fn checked_with(
    map: &mut SourceMap,
    file: FileId,
    search: &mut Search<'_>,
    target: &Target,
    problems: &mut Problems,
) -> Option<prism_types::tir::Program> {
    checked_defs(map, file, search, target, &[], problems)
}

/// [`checked_with`] with `-D` defines for the root file.
fn checked_defs(
    map: &mut SourceMap,
    file: FileId,
    search: &mut Search<'_>,
    target: &Target,
    defines: &[prism_types::Define],
    problems: &mut Problems,
) -> Option<prism_types::tir::Program> {
    let errors_before = problems.error_count();
    let (_, tir) = front(map, file, search, target, defines, problems);
    if problems.error_count() > errors_before {
        return None;
    }
    Some(tir)
}

/// Loads, parses and checks the program rooted at `file`; returns its modules and its
/// typed IR, which is complete only when no error went to `problems`.
fn front(
    map: &mut SourceMap,
    file: FileId,
    search: &mut Search<'_>,
    target: &Target,
    defines: &[prism_types::Define],
    problems: &mut Problems,
) -> (Vec<modules::Loaded>, prism_types::tir::Program) {
    let mut syntax = Problems::default();
    let mut found = Problems::default();
    let loaded = modules::load(map, file, search, &mut syntax, &mut found);
    let units: Vec<prism_types::Unit<'_>> = loaded
        .iter()
        .map(|l| prism_types::Unit {
            ast: &l.ast,
            path: l.path.clone(),
            imports: l.imports.clone(),
            // The root is the one unit with no module path.
            defines: if l.path.is_empty() { defines } else { &[] },
        })
        .collect();
    let mut checked = Problems::default();
    let tir = prism_types::check_units(&units, syntax, target, &mut checked);
    checked.extend(found);
    // A problem in an imported module also points at the line that imported it.
    let imported_at: std::collections::HashMap<FileId, prism_span::Span> =
        loaded.iter().filter_map(|l| Some((l.file, l.imported_at?))).collect();
    for mut d in checked.into_vec() {
        if let Some(&at) = imported_at.get(&d.primary.span.file) {
            d = d.with_secondary(at, "imported here");
        }
        problems.push(d);
    }
    (loaded, tir)
}

/// One module of an [`Analysis`]: a file of the program, parsed.
#[derive(Clone, Debug)]
pub struct Module {
    /// Its file in the source map.
    pub file: FileId,
    /// Its syntax tree (what parsed of it, when it has syntax errors).
    pub ast: prism_syntax::ast::Module,
    /// Its dotted path; empty for the root.
    pub path: Vec<String>,
    /// For each `import` item of `ast`, in order: the index in [`Analysis::modules`] of the
    /// module it names, or `None` when it could not be loaded.
    pub imports: Vec<Option<usize>>,
}

/// Everything an editor shows about a program ([`analyse`]): its modules' syntax trees and
/// its typed IR. Nothing here reaches a backend.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// The modules in dependency order, the root last.
    pub modules: Vec<Module>,
    /// The typed IR of every function of every module (generic functions once per
    /// instance). Complete only when [`Analysis::clean`]; with errors it still holds what
    /// the checker made of each function, which is what an editor wants to show.
    pub tir: prism_types::tir::Program,
    /// Whether the front end reported no errors: only then may [`infer`] run.
    pub clean: bool,
}

/// What synchronisation inference did to an analysed program ([`infer`]).
#[derive(Clone, Debug)]
pub struct Inferred {
    /// The barriers inserted and the orderings that could not be provided.
    pub report: SyncReport,
    /// One `inferred-barrier` note per barrier of the report, in the same order: what
    /// `prism check --explain-sync` prints.
    pub notes: Vec<prism_diag::Diagnostic>,
    /// The program after barrier motion and the optimiser, exactly what [`compile_with`]
    /// hands the backends with the same options: where the barriers really are, which
    /// ones motion split and which ones the optimiser removed. `None` when inference
    /// reported an error (then [`compile_with`] makes nothing either).
    pub synced: Option<Synced>,
}

/// The front end for an editor: loads, parses and checks the program rooted at `file`,
/// and keeps the syntax trees and the typed IR whatever the errors. [`infer`] goes on to
/// synchronisation inference; together they report exactly what [`compile_with`] does
/// without `explain_sync` (barrier motion and the optimiser report nothing).
pub fn analyse(
    map: &mut SourceMap,
    file: FileId,
    search: &mut Search<'_>,
    target: &Target,
    problems: &mut Problems,
) -> Analysis {
    let errors_before = problems.error_count();
    let (loaded, tir) = front(map, file, search, target, &[], problems);
    Analysis {
        modules: loaded
            .into_iter()
            .map(|l| Module { file: l.file, ast: l.ast, path: l.path, imports: l.imports })
            .collect(),
        tir,
        clean: problems.error_count() == errors_before,
    }
}

/// Lowers an analysed program and runs synchronisation inference on it, as [`compile_with`]
/// does: its errors go to `problems`. `None`, and nothing reported, when the program had
/// errors ([`Analysis::clean`] is false): its typed IR is not trustworthy.
pub fn infer(analysis: &Analysis, map: &SourceMap, opts: &Options, problems: &mut Problems) -> Option<Inferred> {
    if !analysis.clean {
        return None;
    }
    let mut ir = prism_ir::lower(&analysis.tir);
    verify(&ir, "lowering");
    prism_ir::asyncwait::place_waits(&mut ir);
    verify(&ir, "placing asynchronous waits");
    if opts.contract {
        prism_ir::contract::contract(&mut ir);
        verify(&ir, "floating-point contraction");
    }
    let report = prism_sync::infer(&mut ir, &prism_sync::Options::default());
    ir.number_blocks();
    verify(&ir, "synchronisation inference");
    let errors_before = problems.error_count();
    for d in prism_sync::problems(&ir, &report, map) {
        problems.push(d);
    }
    let notes = prism_sync::notes(&ir, &report, map);
    // The rest of `compile_with`'s passes, so that an editor shows the barriers the
    // backends get rather than inference's first placement.
    let synced = (problems.error_count() == errors_before).then(|| after_inference(ir, report.clone(), opts));
    Some(Inferred { report, notes, synced })
}

/// IR written as text (`prism_ir::parse`), verified, and taken as it is: no pass runs.
///
/// This is for tests of the backends themselves, which need IR no pass would produce (a
/// split barrier's half moved past the access it orders, to see the simulator catch the
/// race) and for IR filetests. It still has to pass the verifier; what it skips is
/// inference, so a program assembled this way carries no guarantee from the checker.
pub fn assemble(text: &str) -> Result<Synced, String> {
    let ir = prism_ir::parse(text).map_err(|e| e.to_string())?;
    let errors = prism_ir::verify(&ir);
    if !errors.is_empty() {
        return Err(errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"));
    }
    let barriers = Counts::of(&ir);
    Ok(Synced { ir, report: SyncReport::default(), barriers })
}

/// Checks the IR's invariants after a pass (see `prism_ir::verify` for the list).
fn verify(ir: &Program, after: &str) {
    let errors = prism_ir::verify(ir);
    assert!(
        errors.is_empty(),
        "internal compiler error: the IR is malformed after {after}:\n  {}",
        errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  ")
    );
}
