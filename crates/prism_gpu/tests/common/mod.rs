//! The one policy for tests that need an installed tool (nvcc, cuobjdump): without it the
//! test is reported as ignored, with a line on stderr saying why and how to install it,
//! except under CI (`CI` set), where it runs and fails, so CI can never pass by skipping.

/// Runs one libtest-mimic trial named `name` that needs `tools` (found or not); `missing`
/// names what is missing, for the messages.
pub fn run_with_tools<T: Send + 'static>(
    name: &str,
    tools: Option<T>,
    missing: &str,
    test: impl FnOnce(T) -> Result<(), String> + Send + 'static,
) -> ! {
    use std::io::Write;
    let args = libtest_mimic::Arguments::from_args();
    let ci = std::env::var_os("CI").is_some();
    let ignored = tools.is_none() && !ci;
    if ignored {
        // Not captured: this harness is the program, so the user sees why.
        let _ = writeln!(
            std::io::stderr(),
            "{missing} not found: `{name}` is ignored (run scripts/install-nvcc.sh, or set PRISM_NVCC)"
        );
    }
    let missing = missing.to_string();
    let trial = libtest_mimic::Trial::test(name, move || match tools {
        Some(t) => test(t).map_err(Into::into),
        None => Err(format!("{missing} not found under CI: .ci/run must run scripts/install-nvcc.sh first").into()),
    })
    .with_ignored_flag(ignored);
    libtest_mimic::run(&args, vec![trial]).exit()
}
