//! Runs the `tests/ui` corpus: one test per file.

use libtest_mimic::{Arguments, Trial};
use prism_test::{Expect, prism_files, repo_root, run_ui_file};

fn main() {
    let args = Arguments::from_args();
    let root = repo_root();
    let mut trials = Vec::new();
    for (dir, expect) in [("accept", Expect::Accept), ("reject", Expect::Reject), ("regress", Expect::Regress)] {
        for path in prism_files(&root.join("tests/ui").join(dir)) {
            let name = path.strip_prefix(root.join("tests/ui")).expect("under tests/ui").to_string_lossy().into_owned();
            let root = root.clone();
            trials.push(Trial::test(name, move || {
                // Check on a thread with a generous stack so deeply nested regressions test
                // the parser's limits, not the test runner's default stack.
                let r = std::thread::Builder::new()
                    .stack_size(64 << 20)
                    .spawn(move || run_ui_file(&root, &path, expect))
                    .expect("spawn checker thread")
                    .join();
                match r {
                    Ok(r) => r.map_err(Into::into),
                    Err(_) => Err("the checker panicked".into()),
                }
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
