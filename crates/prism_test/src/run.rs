//! Running programs on the simulator from tests: launch headers, arguments, and expected
//! reports.
//!
//! A program to run says how in a comment, with the flags of `prism run`:
//!
//! ```text
//! # launch: KERNEL --grid 2 --block 64 --arg n=128 --arg x=iota:f32:128 [--fuel N] [--seed N]
//! ```
//!
//! A program that cannot run on the simulator, or cannot run clean, says why instead (TMA,
//! `wgmma`, verbatim CUDA text, a race by design):
//!
//! ```text
//! # launch: none -- REASON
//! ```
//!
//! A line where the run must report a dynamic check carries `# report: [code]`.

use prism_interp::args;
use prism_interp::{Arg, Config, KernelInfo, Module, Outcome};
use prism_types::Target;
use std::path::Path;

/// A parsed `# launch:` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// The kernel.
    pub kernel: String,
    /// Blocks (`--grid X[,Y[,Z]]`).
    pub grid: prism_ir::ir::Dim3,
    /// Threads per block (`--block X[,Y[,Z]]`).
    pub block: prism_ir::ir::Dim3,
    /// `--arg NAME=VALUE`, in order.
    pub args: Vec<(String, String)>,
    /// `--fuel`.
    pub fuel: Option<u64>,
    /// `--seed`.
    pub seed: Option<u64>,
}

/// What a `# launch:` line says: a launch, or why the program has none.
#[derive(Clone, Debug, PartialEq)]
pub enum LaunchLine {
    /// `# launch: KERNEL --grid ...`.
    Run(Launch),
    /// `# launch: none -- REASON`, with the reason.
    None(String),
}

/// Parses the text after `# launch:`, which may be `none -- REASON`.
pub fn parse_launch_line(text: &str) -> Result<LaunchLine, String> {
    let rest = text.trim();
    if rest.split_whitespace().next() != Some("none") {
        return parse_launch(text).map(LaunchLine::Run);
    }
    let reason = rest["none".len()..].trim_start().strip_prefix("--").map(str::trim).unwrap_or("");
    if reason.is_empty() {
        return Err("`# launch: none` needs a reason: `# launch: none -- REASON`".into());
    }
    Ok(LaunchLine::None(reason.to_string()))
}

/// Parses the text after `# launch:`. `none` is not a kernel: see [`parse_launch_line`].
pub fn parse_launch(text: &str) -> Result<Launch, String> {
    let mut words = text.split_whitespace();
    let kernel = words.next().ok_or("a launch line names the kernel first")?.to_string();
    if kernel == "none" {
        return Err("`none` marks a program without a launch (`# launch: none -- REASON`), not a kernel".into());
    }
    let mut l = Launch { kernel, grid: 0.into(), block: 0.into(), args: Vec::new(), fuel: None, seed: None };
    while let Some(flag) = words.next() {
        let value = words.next().ok_or_else(|| format!("`{flag}` needs a value"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|_| format!("`{flag} {v}`: not a number"));
        let dims = |v: &str| -> Result<prism_ir::ir::Dim3, String> {
            let mut d = [1u32; 3];
            let parts: Vec<&str> = v.split(',').collect();
            if parts.len() > 3 {
                return Err(format!("`{flag} {v}`: at most three dimensions"));
            }
            for (k, p) in parts.iter().enumerate() {
                d[k] = p.parse().map_err(|_| format!("`{flag} {v}`: not a count"))?;
            }
            Ok(prism_ir::ir::Dim3 { x: d[0], y: d[1], z: d[2] })
        };
        match flag {
            "--grid" => l.grid = dims(value)?,
            "--block" => l.block = dims(value)?,
            "--fuel" => l.fuel = Some(num(value)?),
            "--seed" => l.seed = Some(num(value)?),
            "--arg" => {
                let (n, v) = value.split_once('=').ok_or_else(|| format!("`--arg {value}`: expected NAME=VALUE"))?;
                l.args.push((n.to_string(), v.to_string()));
            }
            _ => return Err(format!("unknown launch flag `{flag}`")),
        }
    }
    Ok(l)
}

/// Every `# launch:` line of a source file, `none` lines included.
pub fn launch_lines(src: &str) -> Result<Vec<LaunchLine>, String> {
    src.lines().filter_map(|l| l.trim_start().strip_prefix("# launch:")).map(parse_launch_line).collect()
}

/// The launches of a source file (`# launch: none -- ...` lines are skipped).
pub fn launches(src: &str) -> Result<Vec<Launch>, String> {
    let lines = launch_lines(src)?;
    Ok(lines
        .into_iter()
        .filter_map(|l| match l {
            LaunchLine::Run(launch) => Some(launch),
            LaunchLine::None(_) => None,
        })
        .collect())
}

/// The launches of a source file that must run clean: all but `none` lines and `buggy_*`
/// kernels.
pub fn clean_launches(src: &str) -> Result<Vec<Launch>, String> {
    Ok(launches(src)?.into_iter().filter(|l| !is_buggy(l)).collect())
}

/// Lines (1-based) annotated `# report: [code]` (or `[code, code]`, for a line that
/// reports two), with their codes.
pub fn report_annotations(src: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        if let Some(at) = line.find("# report: [") {
            let rest = &line[at + "# report: [".len()..];
            if let Some(end) = rest.find(']') {
                out.extend(rest[..end].split(',').map(|code| (i as u32 + 1, code.trim().to_string())));
            }
        }
    }
    out
}

/// Compiles a program through the whole pipeline; `Err` holds the errors.
pub fn compile(src: &str) -> Result<Module, String> {
    compile_with(src, &prism_driver::Options::default())
}

/// [`compile`] with pipeline options (`skip_barriers` leaves inferred barriers out).
pub fn compile_with(src: &str, opts: &prism_driver::Options) -> Result<Module, String> {
    crate::synced("program", src, opts).map(|s| Module::new(&s))
}

/// Builds the arguments of a launch, in parameter order. `.npy` paths are relative to `dir`.
pub fn build_args(k: &KernelInfo, launch: &Launch, dir: &Path) -> Result<Vec<Arg>, String> {
    let mut out = Vec::new();
    for p in &k.params {
        let given: Vec<&String> = launch.args.iter().filter(|(n, _)| *n == p.name).map(|(_, v)| v).collect();
        let [value] = given[..] else {
            return Err(format!("parameter `{}` needs exactly one `--arg {}=...`", p.name, p.name));
        };
        let mut read = |path: &str| std::fs::read(dir.join(path)).map_err(|e| format!("{path}: {e}"));
        out.push(args::build(p, value, &mut read)?.0);
    }
    for (n, _) in &launch.args {
        if !k.params.iter().any(|p| &p.name == n) {
            return Err(format!("`{}` has no parameter `{n}`", k.name));
        }
    }
    Ok(out)
}

/// Runs one launch of a compiled module.
pub fn run(m: &Module, launch: &Launch, dir: &Path, cfg: Config) -> Result<(Vec<Arg>, Outcome), String> {
    let k = m.kernel(&launch.kernel).ok_or_else(|| format!("no kernel `{}`", launch.kernel))?;
    let args = build_args(&k, launch, dir)?;
    let cfg = Config { fuel: launch.fuel.unwrap_or(cfg.fuel), seed: launch.seed.or(cfg.seed), ..cfg };
    let out = m.launch(&launch.kernel, launch.grid, launch.block, &args, cfg).map_err(|e| e.to_string())?;
    Ok((args, out))
}

/// The default target, for callers that do not read directives.
pub fn default_target() -> Target {
    Target::default()
}

/// Launches that are race-free but whose results depend on the schedule by design: (file
/// relative to the repository root, kernel, why). They must still run clean under every
/// schedule, but their buffers are not compared between schedules.
pub const SCHEDULE_DEPENDENT: [(&str, &str, &str); 4] = [
    (
        "tests/ui/accept/rules/elect_sync.prism",
        "which_lane",
        "marks the lane elect_sync elects, which PTX leaves unspecified and the simulator varies between schedules",
    ),
    (
        "tests/ui/accept/rules/corner_intrinsics_thread.prism",
        "thread_ops",
        "stores what atomic_exch, atomic_cas and atomic_load return, which is the order the atomics ran in",
    ),
    (
        "tests/ui/accept/rules/atomic_cas_election.prism",
        "cas_first_wins",
        "every thread's atomic_cas tries to claim one word: the first compare to land decides what it holds",
    ),
    (
        "tests/ui/run/checks/data_race.prism",
        "fixed_atomic_plain",
        "each thread reads, with atomic_load, a counter the others increment: the value is the interleaving's",
    ),
];

/// Whether `SCHEDULE_DEPENDENT` lists this launch of `file` (relative to the repository root).
pub fn schedule_dependent(file: &str, launch: &Launch) -> bool {
    SCHEDULE_DEPENDENT.iter().any(|(f, k, _)| *f == file && *k == launch.kernel)
}

/// The programs whose launches the corpus tests run: `tests/ui/accept/**` and
/// `tests/ui/run/**`, sorted.
pub fn corpus_files(root: &Path) -> Vec<std::path::PathBuf> {
    let mut files = crate::prism_files(&root.join("tests/ui/accept"));
    files.extend(crate::prism_files(&root.join("tests/ui/run")));
    files
}

/// Whether a launch runs a kernel that is wrong on purpose (`buggy_*` in `tests/ui/run/checks`).
pub fn is_buggy(launch: &Launch) -> bool {
    launch.kernel.starts_with("buggy")
}

/// The 1-based line of a byte offset.
pub fn line_of(src: &str, offset: u32) -> usize {
    src.as_bytes()[..(offset as usize).min(src.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// A one-line description of a dynamic-check report: `[code] message at line L (block b
/// thread t)`.
pub fn describe_report(src: &str, r: &prism_interp::Report) -> String {
    format!("[{}] {} at line {} ({})", r.kind.code(), r.message, line_of(src, r.span.start), r.thread)
}

/// The register bits of every buffer argument, with its parameter's name.
pub fn buffer_bits(k: &KernelInfo, args: &[Arg]) -> Vec<(String, Vec<u64>)> {
    k.params.iter().zip(args).filter_map(|(p, a)| Some((p.name.clone(), a.as_buffer()?.to_bits()))).collect()
}

/// The first difference between two sets of buffers from [`buffer_bits`], if any.
pub fn first_difference(a: &[(String, Vec<u64>)], b: &[(String, Vec<u64>)]) -> Option<String> {
    for ((name, x), (_, y)) in a.iter().zip(b) {
        if x.len() != y.len() {
            return Some(format!("`{name}` has {} elements, not {}", y.len(), x.len()));
        }
        if let Some(i) = (0..x.len()).find(|&i| x[i] != y[i]) {
            return Some(format!("`{name}`[{i}] is {:#x}, not {:#x}", y[i], x[i]));
        }
    }
    None
}

/// `f` of every item, computed on all cores (items are taken in order by whichever thread is
/// free); the results in the items' order.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new((0..items.len()).map(|_| None).collect::<Vec<Option<R>>>());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    results.lock().expect("no worker panicked holding the lock")[i] = Some(r);
                }
            });
        }
    });
    results.into_inner().expect("no worker panicked").into_iter().map(|r| r.expect("every item ran")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_launch_lines() {
        let src = "x\n# launch: k --grid 2 --block 64 --arg n=3\n# launch: none -- needs TMA\n";
        let lines = launch_lines(src).expect("valid");
        assert_eq!(lines[1], LaunchLine::None("needs TMA".into()));
        let LaunchLine::Run(l) = &lines[0] else { panic!("a launch") };
        assert_eq!((l.kernel.as_str(), l.grid, l.block), ("k", 2.into(), 64.into()));
        assert_eq!(l.args, vec![("n".to_string(), "3".to_string())]);
        assert_eq!(launches(src).expect("valid").len(), 1);
        assert!(parse_launch_line("none").is_err());
        assert!(parse_launch_line("none --").is_err());
        assert!(parse_launch("none -- why").is_err());
    }

    #[test]
    fn par_map_keeps_order() {
        let items: Vec<u32> = (0..50).collect();
        assert_eq!(par_map(&items, |x| x * 2), items.iter().map(|x| x * 2).collect::<Vec<_>>());
    }
}
