//! Running programs on the simulator from tests: launch headers, arguments, and expected
//! reports.
//!
//! A program to run says how in a comment, with the flags of `prism run`:
//!
//! ```text
//! # launch: KERNEL --grid 2 --block 64 --arg n=128 --arg x=iota:f32:128 [--fuel N] [--seed N]
//! ```
//!
//! A line where the run must report a dynamic check carries `# report: [code]`.

use prism_diag::Problems;
use prism_interp::args::{self, Source};
use prism_interp::{Arg, Config, KernelInfo, Module, Outcome, ParamKind};
use prism_types::Target;
use std::path::Path;

/// A parsed `# launch:` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// The kernel.
    pub kernel: String,
    /// Blocks.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// `--arg NAME=VALUE`, in order.
    pub args: Vec<(String, String)>,
    /// `--fuel`.
    pub fuel: Option<u64>,
    /// `--seed`.
    pub seed: Option<u64>,
}

/// Parses the text after `# launch:`.
pub fn parse_launch(text: &str) -> Result<Launch, String> {
    let mut words = text.split_whitespace();
    let kernel = words.next().ok_or("a launch line names the kernel first")?.to_string();
    let mut l = Launch { kernel, grid: 0, block: 0, args: Vec::new(), fuel: None, seed: None };
    while let Some(flag) = words.next() {
        let value = words.next().ok_or_else(|| format!("`{flag}` needs a value"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|_| format!("`{flag} {v}`: not a number"));
        match flag {
            "--grid" => l.grid = num(value)? as u32,
            "--block" => l.block = num(value)? as u32,
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

/// The `# launch:` lines of a source file.
pub fn launches(src: &str) -> Result<Vec<Launch>, String> {
    src.lines().filter_map(|l| l.trim_start().strip_prefix("# launch:")).map(parse_launch).collect()
}

/// Lines (1-based) annotated `# report: [code]`, with their codes.
pub fn report_annotations(src: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        if let Some(at) = line.find("# report: [") {
            let rest = &line[at + "# report: [".len()..];
            if let Some(end) = rest.find(']') {
                out.push((i as u32 + 1, rest[..end].to_string()));
            }
        }
    }
    out
}

/// Checks, lowers and synchronises a program; `Err` holds the rendered errors.
pub fn compile(src: &str) -> Result<Module, String> {
    let mut problems = Problems::default();
    let target = crate::target_for(src)?;
    match Module::compile(prism_span::FileId(0), src, &target, &mut problems) {
        Some(m) => Ok(m),
        None => {
            let msgs: Vec<String> =
                problems.diagnostics().iter().map(|d| format!("[{}] {}", d.code, d.message)).collect();
            Err(format!("the program does not compile: {}", msgs.join("; ")))
        }
    }
}

/// Builds the arguments of a launch, in parameter order. `.npy` paths are relative to `dir`.
pub fn build_args(k: &KernelInfo, launch: &Launch, dir: &Path) -> Result<Vec<Arg>, String> {
    let mut out = Vec::new();
    for p in &k.params {
        let given: Vec<&String> = launch.args.iter().filter(|(n, _)| *n == p.name).map(|(_, v)| v).collect();
        let [value] = given[..] else {
            return Err(format!("parameter `{}` needs exactly one `--arg {}=...`", p.name, p.name));
        };
        out.push(match &p.kind {
            ParamKind::Scalar(t) => args::parse_scalar(value, *t)?,
            ParamKind::Pointer(_) | ParamKind::Opaque => {
                let buffer = match args::parse_source(value)? {
                    Source::Gen { kind, elem, shape, seed } => args::generate(kind, elem, shape.iter().product(), seed),
                    Source::Npy(path) => {
                        let bytes = std::fs::read(dir.join(&path)).map_err(|e| format!("{path}: {e}"))?;
                        prism_interp::npy::parse(&bytes).map_err(|e| format!("{path}: {e}"))?.buffer
                    }
                };
                args::check_buffer(&p.name, &p.kind, &buffer, value)?;
                Arg::Buffer(buffer)
            }
        });
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
