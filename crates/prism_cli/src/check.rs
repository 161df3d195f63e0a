//! `prism check FILE...`

use crate::{ColorChoice, MessageFormat};
use prism_diag::{Color, Problems, render, render_json};
use prism_span::SourceMap;
use prism_types::Target;
use std::io::IsTerminal;

/// Options every command that compiles shares: the target and how diagnostics look.
#[derive(clap::Args)]
pub struct Common {
    /// Output format for diagnostics.
    #[arg(long, value_enum, default_value = "human")]
    pub message_format: MessageFormat,
    /// The target architecture (sets the shared-memory limit; nvcc's `-arch` for builds).
    #[arg(long, default_value = "sm_90a")]
    pub arch: String,
    /// Override the target's shared-memory limit per block, in bytes.
    #[arg(long)]
    pub smem_limit: Option<u64>,
    /// Colour human output.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Fuse a `float`/`double` product into the addition it feeds (one rounding, the same
    /// on the simulator and the GPU; docs/language.md), or compute both roundings.
    #[arg(long, value_enum, default_value = "on")]
    pub fp_contract: Switch,
    /// A directory to look for imported modules in, after the importing file's own
    /// directory (repeatable; searched in order). `prism.std.*` is always the bundled
    /// standard library.
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub include: Vec<String>,
    /// Replace the value of the file's `NAME : constexpr(T) = ...` with VALUE (an integer,
    /// a float, `True` or `False`), as nvcc's `-D` does for a macro (repeatable). The
    /// program is checked with the new value.
    #[arg(short = 'D', long = "define", value_name = "NAME=VALUE", value_parser = parse_define)]
    pub define: Vec<prism_types::Define>,
}

/// `-D NAME=VALUE`, parsed (clap reports a malformed one as a usage error).
fn parse_define(text: &str) -> Result<prism_types::Define, String> {
    prism_types::Define::parse(text)
}

impl Common {
    /// Runs the pipeline on `file`, finding its imports on disk (the importing file's
    /// directory, then `-I` directories).
    pub fn compile(
        &self,
        map: &mut SourceMap,
        file: prism_span::FileId,
        opts: &prism_driver::Options,
        problems: &mut Problems,
    ) -> Option<prism_driver::Synced> {
        let mut files = DiskFiles;
        let include = self.include.iter().map(std::path::PathBuf::from).collect();
        let mut search = prism_driver::Search { files: &mut files, include, base: None };
        // The defines belong to the command line, so every command that compiles takes them
        // here rather than in its own options.
        let opts = prism_driver::Options { defines: self.define.clone(), ..opts.clone() };
        prism_driver::compile_with(map, file, &mut search, &opts, problems)
    }
}

/// Imported modules read from the file system. A module's key is its canonical path, so
/// one file imported by two paths is loaded once.
struct DiskFiles;

impl prism_driver::Files for DiskFiles {
    fn read(&mut self, path: &std::path::Path) -> Result<Option<(String, String)>, String> {
        if !path.is_file() {
            return Ok(None);
        }
        let key = std::fs::canonicalize(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        let text = read_source(&path.display().to_string())?;
        Ok(Some((key.display().to_string(), text)))
    }
}

/// On or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

/// Arguments of `prism check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// The files to check.
    #[arg(required = true)]
    pub files: Vec<String>,
    #[command(flatten)]
    pub common: crate::check::Common,
    /// After a clean check, print a note for every barrier synchronisation inference
    /// inserts, with the two accesses it orders.
    #[arg(long)]
    pub explain_sync: bool,
}

/// Reads a source file, or explains why it cannot.
pub fn read_source(path: &str) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{path}`: {e}"))?;
    String::from_utf8(bytes)
        .map_err(|e| format!("`{path}` is not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()))
}

/// Resolves `--arch` and `--smem-limit` into a target, or explains why not.
pub fn target(arch: &str, smem_limit: Option<u64>) -> Result<Target, String> {
    let mut t = Target::from_arch(arch)
        .ok_or_else(|| format!("unknown architecture `{arch}`; known: {}", Target::KNOWN.join(", ")))?;
    if let Some(l) = smem_limit {
        t.smem_limit = l;
        t.smem_limit_overridden = true;
    }
    Ok(t)
}

/// Prints diagnostics in the chosen format.
pub fn emit(map: &SourceMap, problems: &Problems, format: MessageFormat, color: ColorChoice) {
    match format {
        MessageFormat::Json => crate::out(&render_json(map, problems.diagnostics())),
        MessageFormat::Human => {
            let color = match color {
                ColorChoice::Always => Color::Always,
                ColorChoice::Never => Color::Never,
                ColorChoice::Auto if std::io::stderr().is_terminal() => Color::Always,
                ColorChoice::Auto => Color::Never,
            };
            err!("{}", render(map, problems.diagnostics(), color));
        }
    }
}

pub fn run(args: &CheckArgs) -> u8 {
    let target = match target(&args.common.arch, args.common.smem_limit) {
        Ok(t) => t,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    let mut map = SourceMap::default();
    let mut sources = Vec::new();
    for path in &args.files {
        match read_source(path) {
            Ok(text) => sources.push((map.add(path.clone(), text.clone()), text)),
            Err(e) => {
                errln!("error: {e}");
                return 2;
            }
        }
    }
    let mut problems = Problems::default();
    let opts = prism_driver::Options {
        target,
        explain_sync: args.explain_sync,
        contract: args.common.fp_contract == Switch::On,
        ..prism_driver::Options::default()
    };
    for (id, _) in &sources {
        // The whole pipeline: synchronisation inference can reject a program too (an
        // ordering no barrier can provide).
        let mut found = Problems::default();
        let synced = args.common.compile(&mut map, *id, &opts, &mut found);
        match synced {
            Some(s) if args.explain_sync => problems.extend(with_cuda(&map, &s, found)),
            _ => problems.extend(found),
        }
    }
    problems.sort();
    emit(&map, &problems, args.common.message_format, args.common.color);
    let errors = problems.error_count();
    let warnings = problems.diagnostics().iter().filter(|d| d.severity == prism_diag::Severity::Warning).count();
    if args.common.message_format == MessageFormat::Human && (errors > 0 || warnings > 0) {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        if errors > 0 {
            errln!(
                "error: {} and {} in {}",
                plural(errors, "error"),
                plural(warnings, "warning"),
                plural(sources.len(), "file")
            );
        } else {
            errln!("warning: {} in {}", plural(warnings, "warning"), plural(sources.len(), "file"));
        }
    }
    if errors > 0 { 1 } else { 0 }
}

/// `found` with a note on each `inferred-barrier` note saying what the barrier became in
/// the CUDA `prism build` writes (after barrier motion and the optimiser), in the text
/// `prism_cuda` emits and the editor's inlay hints show. The driver pushes those notes in
/// the order of inference's report, which is how they are matched to its barriers.
fn with_cuda(map: &SourceMap, synced: &prism_driver::Synced, found: Problems) -> Problems {
    let texts = prism_cuda::barrier::texts(synced);
    let mut report = synced.report().barriers.iter();
    let line = |s: prism_span::Span| map.file(s.file).line_col(s.start).line;
    let mut out = Problems::default();
    for mut d in found.into_vec() {
        if d.code == "inferred-barrier"
            && let Some(b) = report.next()
        {
            let origin = prism_ir::ir::BarrierOrigin::Inferred { mem: b.mem, before: b.before, after: b.after };
            let became = prism_cuda::barrier::of_origin(&texts, b.func, &origin);
            d = d.with_note(prism_cuda::barrier::fate(&became, line));
        }
        out.push(d);
    }
    out
}
