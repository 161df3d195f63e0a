//! `prism run FILE --kernel NAME --grid B --block T [--arg NAME=VALUE]... [--out NAME=PATH]...`
//!
//! Runs a kernel on the CPU simulator, or with `--device cuda` on a GPU (compiled with nvcc
//! or NVRTC, `--compiler`). Exit codes: 0 for a clean run, 1 when the program has
//! compile errors, 2 for usage and IO errors (a bad launch, bad arguments, unreadable or
//! malformed `.npy` files, unwritable outputs), 3 when a dynamic check fired. Outputs are
//! written only after a clean run, each to a temporary file renamed into place, so no
//! partial output file is ever left behind.

use crate::check::{emit, read_source, target};
use crate::{MessageFormat, usage};
use prism_diag::{Diagnostic, Problems};
use prism_interp::args;
use prism_interp::{Arg, Checks, Config, KernelInfo, Module, ParamKind, Progress};
use prism_ir::ir::Dim3;
use prism_span::{SourceMap, Span};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Where the kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Device {
    /// The CPU simulator, with dynamic checks (the reference semantics).
    Sim,
    /// An NVIDIA GPU through the CUDA driver.
    Cuda,
}

/// Which dynamic checks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckSet {
    /// Races (with reads of shared memory never written) and uniformity too (bounds, divergence and deadlock are always checked).
    All,
    /// Data races and reads of shared memory never written, but not uniformity.
    Races,
    /// Uniformity, but not data races.
    Uniformity,
    /// Only what the run needs: bounds, divergence, deadlock. Fastest; uses every core.
    None,
}

/// Arguments of `prism run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The `.prism` file.
    pub file: String,
    /// The kernel to launch.
    #[arg(long)]
    pub kernel: String,
    /// Blocks: a count, or `X,Y` or `X,Y,Z` for a multi-dimensional grid (only for kernels
    /// that read coordinates with `id(x)`, `id(y)`, `id(z)`).
    #[arg(long, value_parser = parse_dims, value_name = "X[,Y[,Z]]")]
    pub grid: Dim3,
    /// Threads per block: a count, or `X,Y` or `X,Y,Z`.
    #[arg(long, value_parser = parse_dims, value_name = "X[,Y[,Z]]")]
    pub block: Dim3,
    /// A kernel argument: a literal for scalars; `zeros:DTYPE:N`, `iota:DTYPE:N`,
    /// `rand:DTYPE:N[:SEED]` or a `.npy` path for pointers. `N` may be a shape, `RxC` (or
    /// `AxBxC`), which `--out` writes back. DTYPE: f32 f64 i32 u32 i64 u64 f16 bf16 bool.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Write a pointer argument's buffer after the run, as `.npy`.
    #[arg(long = "out", value_name = "NAME=PATH")]
    pub outs: Vec<String>,
    /// Print a pointer argument's buffer after the run.
    #[arg(long = "print", value_name = "NAME")]
    pub prints: Vec<String>,
    /// Randomise the schedule (warp interleaving, block order, atomic order, the lane
    /// `elect_sync` elects) with this seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Which dynamic checks run.
    #[arg(long, value_enum, default_value = "all")]
    pub checks: CheckSet,
    /// The most warp instructions one block may execute before the run is stopped (at least 1).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub fuel: Option<u64>,
    /// Stop the run when no block has finished for this many seconds: the wall-clock
    /// companion of `--fuel`, so an endless loop is reported promptly (0 turns it off).
    #[arg(long, value_name = "SECONDS", default_value_t = 20.0, value_parser = seconds)]
    pub stall_limit: f64,
    /// Where to run.
    #[arg(long, value_enum, default_value = "sim")]
    pub device: Device,
    /// With `--device cuda`: the compiler of the generated CUDA. `auto` is nvcc when found,
    /// else NVRTC (in-process); default `$PRISM_COMPILER`, else `auto`.
    #[arg(long, value_name = "auto|nvcc|nvrtc", value_parser = parse_compiler)]
    pub compiler: Option<prism_gpu::toolchain::Compiler>,
    #[command(flatten)]
    pub common: crate::check::Common,
}

fn parse_compiler(v: &str) -> Result<prism_gpu::toolchain::Compiler, String> {
    v.parse()
}

/// Parses a number of seconds: finite, not negative, at most a year.
fn seconds(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=31_536_000.0).contains(&x) => Ok(x),
        _ => Err(format!("`{v}` is not a number of seconds from 0 to 31536000")),
    }
}

/// A failure before or after the run: usage, IO, launch or argument problems (exit 2).
struct Fail(Vec<Diagnostic>, Vec<String>);

impl Fail {
    fn plain(msg: impl Into<String>) -> Fail {
        Fail(Vec::new(), vec![msg.into()])
    }
    fn diag(d: Diagnostic) -> Fail {
        Fail(vec![d], Vec::new())
    }
}

pub fn run(a: &RunArgs) -> u8 {
    if a.compiler.is_some() && a.device != Device::Cuda {
        return usage("`--compiler` chooses how `--device cuda` compiles; the simulator compiles nothing");
    }
    let target = match target(&a.common.arch, a.common.smem_limit) {
        Ok(t) => t,
        Err(e) => return usage(&e),
    };
    let text = match read_source(&a.file) {
        Ok(t) => t,
        Err(e) => return usage(&e),
    };
    let mut map = SourceMap::default();
    let file = map.add(a.file.clone(), text.clone());
    let mut problems = Problems::default();
    let contract = a.common.fp_contract == crate::check::Switch::On;
    let opts = prism_driver::Options { target, contract, ..prism_driver::Options::default() };
    let synced = a.common.compile(&mut map, file, &opts, &mut problems);
    problems.sort();
    let Some(synced) = synced else {
        emit(&map, &problems, a.common.message_format, a.common.color);
        if a.common.message_format == MessageFormat::Human {
            errln!("error: `{}` has {} error(s); nothing ran", a.file, problems.error_count());
        }
        return 1;
    };
    // Warnings from checking are shown but do not stop the run.
    emit(&map, &problems, a.common.message_format, a.common.color);
    let module = Module::new(&synced);
    match prepare(a, &module, file) {
        Err(Fail(diags, msgs)) => {
            report(&map, diags, a);
            for m in msgs {
                errln!("error: {m}");
            }
            2
        }
        Ok(prep) if a.device == Device::Cuda => execute_cuda(a, &synced, prep),
        Ok(prep) => execute(a, &module, &map, prep),
    }
}

fn report(map: &SourceMap, diags: Vec<Diagnostic>, a: &RunArgs) {
    let mut p = Problems::default();
    for d in diags {
        p.push(d);
    }
    emit(map, &p, a.common.message_format, a.common.color);
}

/// Everything the run needs, validated.
struct Prepared {
    kernel: KernelInfo,
    args: Vec<Arg>,
    shapes: Vec<Vec<usize>>,
    outs: Vec<(usize, PathBuf)>,
    prints: Vec<usize>,
}

fn prepare(a: &RunArgs, m: &Module, file: prism_span::FileId) -> Result<Prepared, Fail> {
    let Some(k) = m.kernel(&a.kernel) else {
        let names: Vec<String> = m.kernels().iter().map(|k| format!("`{}`", k.name)).collect();
        let d = Diagnostic::error(
            "bad-launch",
            format!("no kernel named `{}` in this file", a.kernel),
            Span::new(file, 0, 0),
        )
        .with_label("the file")
        .with_note(if names.is_empty() {
            "the file defines no `@prism(\"global\")` kernels".to_string()
        } else {
            format!("kernels: {}", names.join(", "))
        });
        return Err(Fail::diag(d));
    };
    let at_kernel = |code: &'static str, msg: String| {
        Fail::diag(Diagnostic::error(code, msg, k.span).with_label(format!("`{}` is declared here", k.name)))
    };
    // Arguments by name.
    let mut given: Vec<(String, String)> = Vec::new();
    for s in &a.args {
        let Some((n, v)) = s.split_once('=') else {
            return Err(at_kernel("bad-argument", format!("`--arg {s}`: expected NAME=VALUE")));
        };
        if given.iter().any(|(g, _)| g == n) {
            return Err(at_kernel("bad-argument", format!("argument `{n}` is given twice")));
        }
        if !k.params.iter().any(|p| p.name == n) {
            let names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
            return Err(at_kernel(
                "bad-argument",
                format!("`{}` has no parameter `{n}` (its parameters: {})", k.name, names.join(", ")),
            ));
        }
        given.push((n.to_string(), v.to_string()));
    }
    let mut args = Vec::new();
    let mut shapes = Vec::new();
    for p in &k.params {
        let Some((_, v)) = given.iter().find(|(n, _)| *n == p.name) else {
            let hint = match &p.kind {
                ParamKind::Scalar(t) => {
                    let n = t.name();
                    let article = if n.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
                    format!("{article} `{n}` literal")
                }
                ParamKind::Pointer(t) => format!("e.g. `zeros:{}:N` or a .npy file", args::dtype_name(*t)),
                ParamKind::Opaque => "an untyped `CUTensorMap`, which only the caller of the CUDA can build".into(),
                ParamKind::TensorMap(m) => {
                    let dims: Vec<&str> = if m.rank == 3 { vec!["D", "R", "C"] } else { vec!["R", "C"] };
                    format!(
                        "the array the map describes, e.g. `rand:{}:{}` or a .npy file",
                        args::dtype_name(m.elem),
                        dims.join("x")
                    )
                }
            };
            return Err(at_kernel("bad-argument", format!("missing `--arg {}=...` ({hint})", p.name)));
        };
        let mut read = |path: &str| std::fs::read(path).map_err(|e| format!("cannot read `{path}`: {e}"));
        let (arg, shape) = args::build(p, v, &mut read).map_err(|e| at_kernel("bad-argument", e))?;
        args.push(arg);
        shapes.push(shape);
    }
    // Outputs: pointer parameters, each written once, to a directory that exists.
    let mut outs: Vec<(usize, PathBuf)> = Vec::new();
    for s in &a.outs {
        let Some((n, path)) = s.split_once('=') else {
            return Err(at_kernel("bad-argument", format!("`--out {s}`: expected NAME=PATH")));
        };
        let i = pointer_param(&k, n).map_err(|e| at_kernel("bad-argument", format!("`--out {s}`: {e}")))?;
        let path = crate::files::output_path(Path::new(path), &[Path::new(&a.file)])
            .map_err(|e| Fail::plain(format!("`--out {s}`: {e}")))?;
        // However it is spelled: both would go through one temporary file, and the second
        // buffer would silently replace the first. (`outs` keeps `a.outs`'s order.)
        if let Some(before) = outs.iter().position(|(_, p)| crate::files::same_output(p, &path)) {
            return Err(Fail::plain(format!(
                "`--out {}` and `--out {s}` name the same file; give each output its own",
                a.outs[before]
            )));
        }
        outs.push((i, path));
    }
    let mut prints = Vec::new();
    for n in &a.prints {
        prints.push(pointer_param(&k, n).map_err(|e| at_kernel("bad-argument", format!("`--print {n}`: {e}")))?);
    }
    m.validate(&k.name, a.grid, a.block, &args).map_err(|e| at_kernel(e.code, e.message))?;
    Ok(Prepared { kernel: k, args, shapes, outs, prints })
}

fn pointer_param(k: &KernelInfo, name: &str) -> Result<usize, String> {
    match k.params.iter().position(|p| p.name == name) {
        Some(i) if matches!(k.params[i].kind, ParamKind::Pointer(_) | ParamKind::TensorMap(_)) => Ok(i),
        Some(_) => Err(format!("`{name}` is not a pointer or tensor-map parameter")),
        None => Err(format!("`{}` has no parameter `{name}`", k.name)),
    }
}

/// `X`, `X,Y` or `X,Y,Z`: the extents of a launch, each at least 1.
fn parse_dims(text: &str) -> Result<Dim3, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!("`{text}`: at most three dimensions, `X,Y,Z`"));
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = p.parse().map_err(|_| format!("`{text}`: `{p}` is not a count (expected `X`, `X,Y` or `X,Y,Z`)"))?;
    }
    Ok(Dim3 { x: d[0], y: d[1], z: d[2] })
}

/// Draws `blocks done/total` on stderr while a run that has taken more than a second goes
/// on, when stderr is a terminal (or `PRISM_PROGRESS=1` asks for it, for tests), and clears
/// it when the run ends. The simulator only counts; drawing is the CLI's job.
fn show_progress(progress: &Progress, finished: &AtomicBool, grid: u32) {
    use std::io::IsTerminal;
    use std::time::{Duration, Instant};
    let wanted = std::io::stderr().is_terminal() || std::env::var_os("PRISM_PROGRESS").is_some_and(|v| v == "1");
    let start = Instant::now();
    let mut drawn: Option<Instant> = None;
    while !finished.load(Ordering::Relaxed) {
        // Parked rather than asleep: the launcher unparks this thread when the run ends, so a
        // short run does not wait out the interval.
        std::thread::park_timeout(Duration::from_millis(50));
        // Redraw four times a second after the first second: often enough to look alive,
        // rarely enough to cost nothing.
        if wanted
            && start.elapsed() >= Duration::from_secs(1)
            && drawn.is_none_or(|t| t.elapsed() >= Duration::from_millis(250))
        {
            let done = progress.blocks_done();
            let pct = done as f64 * 100.0 / f64::from(grid.max(1));
            crate::write_err(&format!("\rrunning: blocks {done}/{grid} ({pct:.1}%), {:.0?}\x1b[K", start.elapsed()));
            drawn = Some(Instant::now());
        }
    }
    if drawn.is_some() {
        crate::write_err("\r\x1b[K");
    }
}

/// Ends the progress drawer when dropped.
struct Finish<'a>(&'a AtomicBool, std::thread::Thread);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        self.1.unpark();
    }
}

fn execute(a: &RunArgs, m: &Module, map: &SourceMap, p: Prepared) -> u8 {
    let checks = match a.checks {
        CheckSet::All => Checks::ALL,
        CheckSet::Races => Checks { races: true, uniformity: false },
        CheckSet::Uniformity => Checks { races: false, uniformity: true },
        CheckSet::None => Checks::NONE,
    };
    let defaults = Config::default();
    let stall_limit = (a.stall_limit > 0.0).then(|| std::time::Duration::from_secs_f64(a.stall_limit));
    let cfg = Config { checks, seed: a.seed, fuel: a.fuel.unwrap_or(defaults.fuel), stall_limit, ..defaults };
    let start = std::time::Instant::now();
    let progress = Progress::new();
    let finished = AtomicBool::new(false);
    let blocks = u32::try_from(a.grid.count()).unwrap_or(u32::MAX);
    let launched = std::thread::scope(|scope| {
        let drawer = scope.spawn(|| show_progress(&progress, &finished, blocks));
        // Set even while unwinding: the scope joins the drawer before it passes a panic on,
        // and a drawer left waiting would turn a simulator bug into a hang.
        let _finish = Finish(&finished, drawer.thread().clone());
        m.launch_observed(&p.kernel.name, a.grid, a.block, &p.args, cfg, &progress)
    });
    let outcome = match launched {
        Ok(o) => o,
        Err(e) => {
            errln!("error[{}]: {}", e.code, e.message);
            return 2;
        }
    };
    let elapsed = start.elapsed();
    if !outcome.is_clean() {
        let diags: Vec<Diagnostic> = outcome.reports.iter().map(|r| r.to_diagnostic()).collect();
        let n = diags.len();
        report(map, diags, a);
        if a.common.message_format == MessageFormat::Human {
            errln!("error: the run of `{}` failed {n} dynamic check(s); no outputs were written", p.kernel.name);
        }
        return 3;
    }
    let code = write_outputs(&p);
    if code != 0 {
        return code;
    }
    if a.common.message_format == MessageFormat::Human {
        errln!(
            "ran `{}` on {} block(s) of {} thread(s): clean, {} warp instructions in {:.2?}",
            p.kernel.name,
            a.grid,
            a.block,
            outcome.steps,
            elapsed
        );
    }
    0
}

/// Runs the kernel on GPU 0 through the CUDA backend; outputs as for the simulator.
fn execute_cuda(a: &RunArgs, synced: &prism_driver::Synced, mut p: Prepared) -> u8 {
    let work = std::env::temp_dir().join(format!("prism-cuda-{}", std::process::id()));
    let start = std::time::Instant::now();
    let compiler = match a.compiler.map_or_else(prism_gpu::toolchain::Compiler::from_env, Ok) {
        Ok(c) => c,
        Err(e) => return usage(&e),
    };
    let res = prism_gpu::device::launch_with(synced, &p.kernel.name, a.grid, a.block, &mut p.args, &work, compiler);
    let _ = std::fs::remove_dir_all(&work);
    if let Err(e) = res {
        errln!("error: {e}");
        return 2;
    }
    let elapsed = start.elapsed();
    let code = write_outputs(&p);
    if code == 0 && a.common.message_format == MessageFormat::Human {
        errln!(
            "ran `{}` on the GPU on {} block(s) of {} thread(s) in {:.2?} (compile included); no dynamic checks",
            p.kernel.name,
            a.grid,
            a.block,
            elapsed
        );
    }
    code
}

/// Writes the `--out` buffers (each to a temporary file first, then all moved into place)
/// and prints the `--print` ones. Returns the exit code.
fn write_outputs(p: &Prepared) -> u8 {
    let mut temps = Vec::new();
    for (i, path) in &p.outs {
        let buffer = p.args[*i].as_buffer().expect("validated pointer argument");
        let shape = if p.shapes[*i].iter().product::<usize>() == buffer.len() {
            p.shapes[*i].clone()
        } else {
            vec![buffer.len()]
        };
        match prism_interp::npy::write(buffer, &shape) {
            Ok(bytes) => temps.push((path.as_path(), bytes)),
            Err(e) => return usage(&format!("cannot write `{}`: {e}", path.display())),
        }
    }
    let files: Vec<(&Path, &[u8])> = temps.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    if let Err(e) = crate::files::write_all_atomic(&files) {
        return usage(&e);
    }
    for &i in &p.prints {
        let b = p.args[i].as_buffer().expect("validated pointer argument");
        crate::out(&crate::show::buffer(&p.kernel.params[i].name, b, &p.shapes[i]));
    }
    0
}
