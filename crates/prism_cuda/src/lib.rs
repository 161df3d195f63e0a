//! The CUDA backend: synchronised kernel IR to readable CUDA C++.
//!
//! ```text
//! prism_driver::Synced --emit--> cpp::Unit --cpp::print--> .cu text
//!                                     └--> KernelAbi per kernel (for launchers and the runtime)
//! ```
//!
//! - [`cpp`]: a small C++ syntax tree and its deterministic printer (no external formatter).
//! - [`emit`](mod@emit): functions, `id()`, `split`, memory scopes, loops, calls.
//! - [`ops`]: scalar types, literals, conversions and operators with the simulator's
//!   arithmetic; [`prelude`]: the helpers the generated code calls for it.
//! - [`intrinsics`]: shuffles, votes, reductions, `mma.sync`, atomics, `cp.async`, fences,
//!   Hopper operations; [`barrier`]: barrier lowering and named barrier ids.
//! - [`abi`]: what a launcher needs to know; [`host`]: C++ launchers.
//!
//! Perspectives are erased and the output has no run-time checks (seed 003 §5). It is meant
//! to be read: source names survive, source comments are copied, and each statement notes
//! the `.prism` line it comes from. `docs/cuda.md` has the mapping of every construct.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod abi;
pub mod analysis;
pub mod barrier;
pub mod cpp;
pub mod emit;
pub mod host;
pub mod interval;
pub mod intrinsics;
pub mod ops;
pub mod prelude;

pub use abi::{AbiParam, KernelAbi};

/// Options of [`emit`].
#[derive(Clone, Debug)]
pub struct Options {
    /// The source file's name, for the banner.
    pub file_name: String,
    /// The source text, for `// line N` notes and copied comments (none without it).
    pub source: Option<String>,
    /// Declare kernels `extern "C"` (unmangled names, for the driver API). Off when several
    /// programs share one translation unit.
    pub extern_c: bool,
    /// Start with the banner, includes and helpers. Off for all but the first program of a
    /// shared translation unit.
    pub prelude: bool,
    /// Append host launchers.
    pub host: bool,
    /// Emit only these kernels and the device functions they call (`None`: every kernel).
    /// A launch compiles just the kernel it runs, so that another kernel of the file the
    /// backend refuses (a deliberate bug in a test file, say) does not stop it.
    pub kernels: Option<Vec<String>>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            file_name: "input.prism".into(),
            source: None,
            extern_c: true,
            prelude: true,
            host: false,
            kernels: None,
        }
    }
}

/// A construct the backend cannot lower (the `cuda-unsupported` diagnostic).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// Where it is.
    pub span: prism_span::Span,
    /// What cannot be done, and what to do instead.
    pub message: String,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The result of [`emit`].
#[derive(Clone, Debug)]
pub struct Output {
    /// The CUDA C++ text.
    pub text: String,
    /// One entry per kernel, in source order.
    pub kernels: Vec<KernelAbi>,
    /// Constructs that could not be lowered (the text then does not compile).
    pub errors: Vec<Unsupported>,
    /// True when some kernel uses `sm_90a`-only features.
    pub needs_sm90a: bool,
    /// Barrier counts before and after optimisation (`prism_sync::opt`).
    pub barriers: prism_driver::Counts,
}

/// Emits CUDA for a program that went through the whole pipeline (`prism_driver`): the
/// same optimised IR the simulator runs, less its uniformity assertions.
///
/// ```compile_fail
/// // IR that did not go through the pipeline cannot be printed.
/// let ir = prism_ir::ir::Program::default();
/// let _ = prism_cuda::emit(&ir, &prism_cuda::Options::default());
/// ```
pub fn emit(synced: &prism_driver::Synced, opts: &Options) -> Output {
    let program = synced.for_cuda();
    let barriers = synced.barrier_counts();
    // `source` is the root file's text; the root file is the one whose functions have
    // undotted names (imported ones are named by their module's path). A program without
    // one gets no line notes.
    let root = program.functions.iter().find(|f| !f.name.contains('.')).map(|f| f.span.file);
    let lines = root.and_then(|file| opts.source.as_deref().map(|s| emit::Lines::new(s).of_file(file)));
    let (g, mut errors) = emit::global(&program, lines, opts.extern_c, opts.kernels.as_deref());
    let (items, kernels, errs) = emit::program_items(&g);
    errors.extend(errs);
    // The kernels first, so that the prelude can hold just what they use.
    let mut body = cpp::Unit::default();
    for e in &errors {
        body.items.push(cpp::Item::Raw(format!("#error \"{}\"", e.message.replace('"', "'"))));
    }
    body.items.extend(items);
    let body = cpp::print(&body);
    let mut unit = cpp::Unit::default();
    if opts.prelude {
        unit.items.push(cpp::Item::Comment(format!(
            "Generated by `prism build` from {}. Do not edit.\nCompile with nvcc --fmad=false (no FMA contraction) to match the simulator's arithmetic.",
            opts.file_name
        )));
        unit.items.push(cpp::Item::Raw(prelude::prelude_for(&body)));
    } else {
        unit.items.push(cpp::Item::Comment(format!(
            "Generated by `prism build` from {}; the includes and helpers of prism_cuda::prelude::PRELUDE come first.",
            opts.file_name
        )));
    }
    unit.items.push(cpp::Item::Blank);
    unit.items.push(cpp::Item::Raw(body));
    let mut text = cpp::print(&unit);
    while text.ends_with("\n\n") {
        text.pop();
    }
    if opts.host {
        text.push('\n');
        text.push_str(&host::launchers(&kernels));
    }
    let needs_sm90a = g.sm90.iter().any(|&b| b);
    Output { text, kernels, errors, needs_sm90a, barriers }
}
