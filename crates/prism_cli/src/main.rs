//! The `prism` command line: the only part of the toolchain that reads files, prints, and
//! chooses exit codes.
//!
//! Exit codes: 0 when every file is accepted (warnings allowed) or a run is clean, 1 when a
//! program has errors, 2 on usage or IO errors (including a bad launch or bad arguments), 3
//! when a run's dynamic checks fired. `prism lsp` exits as the protocol asks: 0 after
//! `shutdown`, 1 when the session ended without it, 2 when the client's input broke.

// This crate is the one place that prints.
#![allow(clippy::print_stdout, clippy::print_stderr)]

/// Writes to stderr like `eprint!`, but never panics: a closed or full stderr (`2>&-`,
/// `2>/dev/full`, `| head` on `2>&1`) loses the text, as other command-line tools do.
macro_rules! err {
    ($($arg:tt)*) => { $crate::write_err(&format!($($arg)*)) };
}

/// [`err!`] with a newline, like `eprintln!`.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::write_err(&format!("{}\n", format!($($arg)*))) };
}

mod build;
mod check;
mod explain;
mod files;
mod run;
mod show;

use clap::{Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

/// Prism: GPU kernels with typed perspectives.
#[derive(Parser)]
#[command(name = "prism", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// How diagnostics are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MessageFormat {
    /// Source excerpts with labels, on stderr.
    Human,
    /// One JSON object per diagnostic per line, on stdout.
    Json,
}

/// Whether to colour human output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and perspective-check `.prism` files.
    Check(check::CheckArgs),
    /// Run a kernel on the CPU simulator, with dynamic checks (or on a GPU).
    Run(run::RunArgs),
    /// Generate CUDA C++ (and, with nvcc, PTX or a cubin).
    Build(build::BuildArgs),
    /// Run the language server on stdin and stdout (for editors; `docs/editors.md`).
    Lsp {
        /// Accepted for clients that pass it; stdio is the only transport.
        #[arg(long)]
        stdio: bool,
    },
    /// Print the long explanation of a diagnostic code, with examples.
    Explain {
        /// The code, e.g. `read-up` (`--list` prints all codes).
        code: Option<String>,
        /// List every code with its summary.
        #[arg(long)]
        list: bool,
    },
}

/// Prints a usage or IO error; its exit code, 2.
pub fn usage(msg: &str) -> u8 {
    errln!("error: {msg}");
    2
}

/// Writes to stdout, ignoring a closed pipe (`prism explain x | head` must not panic).
pub fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
}

/// Writes to stderr, ignoring errors (see [`err!`]).
pub fn write_err(text: &str) {
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(text.as_bytes()).and_then(|()| stderr.flush());
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Build(args) => build::run(&args),
        Command::Explain { code, list } => explain::run(code.as_deref(), list),
        // The protocol's exit codes: 0 after `shutdown`, 1 without it; 2 when the input's
        // framing broke or the client went away, as for other IO errors.
        Command::Lsp { stdio: _ } => match prism_lsp::run_stdio() {
            Ok(prism_lsp::Ending::ShutDown) => 0,
            Ok(prism_lsp::Ending::ExitWithoutShutdown) => {
                errln!("error: language server: `exit` came without `shutdown`");
                1
            }
            Ok(prism_lsp::Ending::InputEnded) => {
                errln!("error: language server: the input ended without `shutdown`");
                1
            }
            Err(e) => usage(&format!("language server: {e}")),
        },
    };
    ExitCode::from(code)
}
