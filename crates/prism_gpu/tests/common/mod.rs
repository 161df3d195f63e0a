//! The one policy for tests that need an installed tool (nvcc, cuobjdump): without it the
//! test is reported as ignored, with a line on stderr saying why and how to install it,
//! except under CI (`CI` set), where it runs and fails, so CI can never pass by skipping.

/// A test that needs the tools: it gets them, and returns an error message or nothing.
pub type Trial<T> = (&'static str, Box<dyn FnOnce(T) -> Result<(), String> + Send>);

/// Runs one libtest-mimic trial named `name` that needs `tools` (found or not); `missing`
/// names what is missing, for the messages.
pub fn run_with_tools<T: Clone + Send + 'static>(
    name: &'static str,
    tools: Option<T>,
    missing: &str,
    test: impl FnOnce(T) -> Result<(), String> + Send + 'static,
) -> ! {
    run_trials(tools, missing, "run scripts/install-nvcc.sh, or set PRISM_NVCC", vec![(name, Box::new(test))])
}

/// Runs libtest-mimic trials that each need `tools`; `hint` says how to get them.
pub fn run_trials<T: Clone + Send + 'static>(tools: Option<T>, missing: &str, hint: &str, tests: Vec<Trial<T>>) -> ! {
    use std::io::Write;
    let args = libtest_mimic::Arguments::from_args();
    let ci = std::env::var_os("CI").is_some();
    let ignored = tools.is_none() && !ci;
    let mut trials = Vec::new();
    for (name, test) in tests {
        if ignored {
            // Not captured: this harness is the program, so the user sees why.
            let _ = writeln!(std::io::stderr(), "{missing} not found: `{name}` is ignored ({hint})");
        }
        let (missing, hint) = (missing.to_string(), hint.to_string());
        let tools = tools.clone();
        trials.push(
            libtest_mimic::Trial::test(name, move || match tools {
                Some(t) => test(t).map_err(Into::into),
                None => Err(format!("{missing} not found under CI: .ci/run must install it first ({hint})").into()),
            })
            .with_ignored_flag(ignored),
        );
    }
    libtest_mimic::run(&args, trials).exit()
}

/// The CUDA of the accepted program `tests/ui/accept/{rel}.prism` with its host launchers
/// (`--emit-host`), for the tests that compile launchers (`launchers.rs`, `names.rs`).
/// Not every test binary that shares this module calls it.
#[allow(dead_code)]
pub fn emit_with_host(rel: &str) -> Result<prism_cuda::Output, String> {
    emit_accepted(rel, |_| prism_cuda::Options { host: true, ..prism_cuda::Options::default() })
}

/// The CUDA of the accepted program `tests/ui/accept/{rel}.prism` with the options `opts`
/// makes from its source text (`names.rs` prints its comments, `folding.rs` one kernel).
#[allow(dead_code)]
pub fn emit_accepted(rel: &str, opts: impl FnOnce(&str) -> prism_cuda::Options) -> Result<prism_cuda::Output, String> {
    let src = std::fs::read_to_string(prism_test::repo_root().join("tests/ui/accept").join(format!("{rel}.prism")))
        .map_err(|e| e.to_string())?;
    let s = prism_test::synced(rel, &src, &prism_driver::Options::default())?;
    let out = prism_cuda::emit(&s, &opts(&src));
    if out.errors.is_empty() { Ok(out) } else { Err(format!("{rel}: {:?}", out.errors)) }
}
