//! The front end never panics, hangs or overflows its stack, whatever the input.
//!
//! Property tests feed `check_source` (lex, parse, check) and the diagnostic renderer four
//! kinds of input: arbitrary text and byte soups; random sequences of Prism tokens and
//! indented lines; kernels generated from statement templates and random expressions; and
//! mutations of the `tests/ui` corpus (lines deleted, duplicated, swapped and re-indented,
//! numbers replaced by extreme values, truncation, stray brackets). Each case runs on a
//! thread with a large stack, as the ui harness does, so a failure is a real recursion bug
//! and not the test runner's small default stack; a case that runs for more than
//! [`HANG_LIMIT`] is reported as a hang. `PROPTEST_CASES=N` sets every property's case count,
//! for a longer search.
//!
//! The nesting tests then check the parser's nesting limit on every recursive path with
//! 10,000 levels on an 8 MiB stack, the size of a normal main thread (`prism check` runs
//! there), and `extreme_numbers` checks sizes and constants past the limits of their types.
//! A crash found here or by `fuzz/` becomes a file in `tests/ui/regress/`.
//!
//! A crash that kills the process (a SIGSEGV, or the abort after a stack overflow) takes
//! libtest's captured output and proptest's report with it. So before each case the test
//! writes what it is about to run under `target/tmp/no-panic/` ([`LastCase`]): a property's
//! input to `PROPERTY.last-case.prism` and its seed to `PROPERTY.seed`, a nesting test's case
//! to `TEST.last-case.txt`; each file is removed when its test finishes. The files left
//! after a crash are the cases that were running. `PROPTEST_RNG_SEED=N` replays a property's
//! cases in the same order (`docs/dev/recipes.md`).

use prism_diag::{Color, Problems, render};
use prism_span::SourceMap;
use prism_test::{prism_files, repo_root};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use std::hash::{BuildHasher, RandomState};
use std::path::PathBuf;
use std::sync::{Once, mpsc};
use std::time::Duration;

/// How long one case may run before it counts as a hang. Cases take milliseconds; the
/// margin is for a loaded 2-core CI machine running a debug build.
const HANG_LIMIT: Duration = Duration::from_secs(20);

/// The stack of the property-test threads, as in `tests/ui.rs`.
const BIG_STACK: usize = 64 << 20;

/// The stack of a normal main thread, for the nesting tests.
const MAIN_STACK: usize = 8 << 20;

/// Levels in the nesting tests: far past the parser's limit of 200.
const DEEP: usize = 10_000;

#[test]
fn arbitrary_text() {
    run("arbitrary_text", 64, "\\PC{0,400}");
    run("arbitrary_text_ascii", 64, "[ -~\n\t]{0,400}");
}

#[test]
fn byte_soup() {
    run(
        "byte_soup",
        64,
        proptest::collection::vec(any::<u8>(), 0..400).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    );
}

#[test]
fn token_soup() {
    run("token_soup", 256, token_soup_strategy());
}

#[test]
fn indented_lines() {
    run("indented_lines", 256, indented_lines_strategy());
}

#[test]
fn generated_programs() {
    run("generated_programs", 384, program_strategy());
}

#[test]
fn corpus_mutations() {
    let corpus = corpus();
    assert!(!corpus.is_empty(), "no .prism files under tests/ui");
    run("corpus_mutations", 2048, mutation_strategy(corpus));
}

#[test]
fn deep_expressions() {
    let r = |s: &str| s.repeat(DEEP);
    let cases = [
        ("parentheses", format!("{}1{}", r("("), r(")"))),
        ("lambdas", format!("{}1", r("lambda: "))),
        ("lambda parameters", format!("{}1", r("lambda i: "))),
        ("nested calls", format!("{}1{}", r("f("), r(")"))),
        ("keyword arguments", format!("{}1{}", r("f(k="), r(")"))),
        ("nested subscripts", format!("{}0{}", r("a["), r("]"))),
        ("nested lists", format!("{}{}", r("["), r("]"))),
        ("unary minus", format!("{}1", r("-"))),
        ("unary plus", format!("{}1", r("+"))),
        ("bit not", format!("{}1", r("~"))),
        ("c-style not", format!("{}1", r("!"))),
        ("not", format!("{}c", r("not "))),
        ("mixed unary", format!("{}1", r("- + ~ not "))),
        ("ternary else", format!("{}1", r("1 if c else "))),
        ("ternary then", format!("{}1{}", r("("), r(" if c else 1)"))),
        ("ternary condition", format!("1 if {}c{} else 1", r("(1 if "), r(" else 1)"))),
        ("call chain", format!("f{}", r("()"))),
        ("subscript chain", format!("a{}", r("[0]"))),
        ("attribute chain", format!("a{}", r(".b"))),
        ("sum", format!("1{}", r(" + 1"))),
        ("product", format!("1{}", r(" * 1"))),
        ("shifts", format!("1{}", r(" << 1"))),
        ("bit ops", format!("1{}", r(" | 1 ^ 1 & 1"))),
        ("or", format!("c{}", r(" or c"))),
        ("and", format!("c{}", r(" and c"))),
        ("c-style and", format!("c{}", r(" && c"))),
        ("comparisons", format!("1{}", r(" < 1"))),
        ("parenthesised comparisons", format!("{}1{}", r("("), r(" < 1)"))),
    ];
    // Chains build trees as tall as they are long; nested in parentheses, or in each other
    // by precedence, their heights add up.
    let mut sums = String::from("1");
    let mut ternaries = String::from("1");
    let mut postfix = String::from("f");
    for _ in 0..DEEP / 50 {
        sums = format!("({sums}){}", " + 1".repeat(50));
        ternaries = format!("({ternaries} if c else 1){}", " * 1".repeat(50));
        postfix = format!("({postfix}){}", "(1)[0].b".repeat(20));
    }
    let mut ladder = String::from("x");
    for op in ["*", "+", "<<", "&", "^", "|", "and", "or"] {
        ladder.push_str(&format!(" {op} x").repeat(DEEP / 8));
    }
    let cases = cases.into_iter().chain([
        ("parenthesised sums", sums),
        ("parenthesised ternaries", ternaries),
        ("parenthesised postfix chains", postfix),
        ("precedence ladder", ladder),
    ]);
    for (what, e) in cases {
        let body = format!("    y : int = {e}\n    return y\n");
        assert_survives(what, &function(&body));
        // The same expression in other positions: a statement, a condition, an argument.
        assert_survives(what, &function(&format!("    {e}\n")));
        assert_survives(what, &function(&format!("    if {e}:\n        pass\n")));
        assert_survives(
            what,
            &function(&format!("    with partition(a, p=thread[1], f=lambda i: {e}) as b:\n        pass\n")),
        );
        assert_survives(what, &format!("N : constexpr(int) = {e}\n"));
        assert_survives(what, &format!("@prism(\"global\")\n@requires(grid[1], thread[{e}])\ndef k():\n    pass\n"));
    }
}

#[test]
fn deep_types() {
    let r = |s: &str| s.repeat(DEEP);
    for (what, ty) in [
        ("pointers", format!("{}float{}", r("ptr("), r(")"))),
        ("consts", format!("{}float{}", r("const("), r(")"))),
        ("constexprs", format!("{}int{}", r("constexpr("), r(")"))),
        ("shared", format!("{}float{}", r("shared("), r(")"))),
        ("mixed", format!("{}float{}", r("ptr(const(shared("), r(")))"))),
        ("dimensions", format!("float{}", r("[1]"))),
        ("dimension expressions", format!("float[{}1{}]", r("("), r(")"))),
    ] {
        assert_survives(what, &format!("@prism(\"device\")\ndef g(p : {ty}) -> {ty}:\n    x : {ty}\n    return p\n"));
        assert_survives(what, &format!("N : {ty} = 1\n"));
    }
}

#[test]
fn deep_blocks() {
    // `if` nested `DEEP` times, one column of indentation per level (a 50 MB file).
    assert_survives("if", &nested_blocks("if c:", DEEP));
    // Every other kind of block statement, nested well past the limit.
    for head in [
        "while c:",
        "for i in range(4):",
        "with group(thread[1]):",
        "with unsafe:",
        "with unsafe(\"asm\"):",
        "with partition(a, p=thread[1], f=lambda i: i) as a:",
        "with claim(a, p=thread[1]) as a:",
        "with async(a) as b:",
        "match split(thread):\ncase 1:",
        "with split(thread):\ncase 1:",
        "if c:\npass\nelif c:",
        "if c:\npass\nelse:",
    ] {
        assert_survives(head, &nested_blocks(head, 1_000));
    }
    // Blocks closed and reopened on one line: `if c: if c: ...` is an error, not a crash.
    assert_survives("one-line blocks", &function(&format!("    {}pass\n", "if c: ".repeat(DEEP))));
    // Deep indentation without any block to open.
    let mut stairs = String::new();
    for i in 1..2_000 {
        stairs.push_str(&" ".repeat(i));
        stairs.push_str("x = 1\n");
    }
    assert_survives("indentation stairs", &function(&stairs));
}

/// `head` (one or more lines, the last ending in `:`) nested `levels` times inside
/// [`function`], one column of indentation per level.
fn nested_blocks(head: &str, levels: usize) -> String {
    let mut body = String::new();
    let mut level = 1;
    for _ in 0..levels {
        for line in head.lines() {
            body.push_str(&" ".repeat(level));
            body.push_str(line);
            body.push('\n');
            if line.ends_with(':') {
                level += 1;
            }
        }
    }
    body.push_str(&" ".repeat(level));
    body.push_str("pass\n");
    function(&body)
}

#[test]
fn long_flat_inputs() {
    // Long but shallow inputs: many statements, many arguments, many decorators, many
    // unclosed brackets. Each must be handled without recursion proportional to its size.
    let n = DEEP;
    assert_survives("statements", &function(&"    x = 1\n".repeat(n)));
    assert_survives("arguments", &function(&format!("    f({})\n", "1, ".repeat(n))));
    assert_survives("subscripts", &function(&format!("    a[{}]\n", "1, ".repeat(n))));
    assert_survives("list items", &function(&format!("    f(out=[{}])\n", "x, ".repeat(n))));
    assert_survives("decorators", &format!("{}def f():\n    pass\n", "@prism(\"device\")\n".repeat(n)));
    assert_survives("parameters", &format!("@prism(\"device\")\ndef f({}):\n    pass\n", "p : int, ".repeat(n)));
    assert_survives("unclosed brackets", &"([{".repeat(n));
    assert_survives("closing brackets", &")]}".repeat(n));
    assert_survives("dedents", &format!("{}\nx\n", "    ".repeat(n)));
    // An `elif` chain is checked as `if`s nested in `else`s, one level per arm.
    assert_survives(
        "elif chain",
        &function(&format!("    if c:\n        pass\n{}", "    elif c:\n        pass\n".repeat(n))),
    );
    // Call graphs as long as the input: the recursion check must not recurse per call.
    let call = |k: usize| format!("@prism(\"device\")\ndef f{k}():\n    f{}()\n", (k + 1) % n);
    assert_survives("call cycle", &(0..n).map(call).collect::<String>());
    assert_survives("call chain", &(0..n - 1).map(call).collect::<String>());
    assert_survives(
        "cases",
        &function(&format!("    match split(thread):\n{}", "        case 1:\n            pass\n".repeat(n))),
    );
}

#[test]
fn extreme_numbers() {
    // Sizes, counts and constants at and past the limits of the types that hold them: the
    // checker must report them, never overflow (a panic in a debug build, a wrong answer in
    // a release one). `tests/ui/regress/*-size-overflow.prism` are the ones that did.
    let kernel = |requires: &str, body: &str| {
        format!("@prism(\"global\")\n@requires({requires})\ndef k(a : ptr(float), n : int):\n{body}")
    };
    let block = |body: &str| kernel("block[1], thread[32], smem=1024", body);
    let mut cases = vec![
        block("    x : float[4294967296][4294967296][4294967296]\n"),
        block("    x : float[18446744073709551615][2]\n    y : float[-1]\n    z : float[0]\n"),
        block("    s : shared(double[4294967296][4294967296]) @ block[1]\n"),
        block("    s : shared(double[4294967296][536870912]) @ block[1]\n"),
        block("    s : shared(bool[4294967296][4294967295]) @ block[1]\n    t : shared(bool[1], align=4096) @ block[1]\n"),
        block("    s : shared(float[3], align=0) @ block[1]\n    t : shared(float[3], align=18446744073709551615) @ block[1]\n"),
        kernel("grid[1], thread[18446744073709551615]", "    with group(thread[0]):\n        pass\n"),
        kernel("grid[1], block[4294967296], thread[4294967296]", "    with group(thread[4294967296]):\n        pass\n"),
        kernel("grid[1], thread[0], smem=-1", "    pass\n"),
        kernel("grid[1], thread[32], smem=18446744073709551616", "    pass\n"),
        "@prism(\"global\")\n@requires(grid[1], thread[32])\n@launch_bounds(18446744073709551615)\ndef k():\n    pass\n".into(),
        "@prism(\"global\")\n@requires(grid[1], thread[32])\n@launch_bounds(0)\ndef k():\n    pass\n".into(),
        block("    for i in range(0, 10, 0):\n        pass\n    for i in range(-9223372036854775807, 9223372036854775807, 9223372036854775807):\n        pass\n"),
        block("    match split(warp):\n        case 18446744073709551615:\n            pass\n        case 0:\n            pass\n"),
        block("    match split(thread):\n        case 4294967296:\n            pass\n        case -1:\n            pass\n"),
        block("    match split(thread):\n        case 16:\n            pass\n        case 18446744073709551615:\n            pass\n"),
        kernel(
            "grid[1], block[4294967296], thread[4294967296]",
            "    with group(block[4294967296]):\n        match split(thread):\n            case 2:\n                pass\n",
        ),
        block("    with partition(a, p=thread[0], f=lambda i: i) as b:\n        pass\n"),
        block("    with partition(a, p=thread[18446744073709551615], f=lambda i: i * 18446744073709551615) as b:\n        pass\n"),
        block("    x : float[4][4] @ thread[1]\n    x[0, 18446744073709551615] = 1.0\n    x[-9223372036854775807 - 1, 4611686018427387904] = 1.0\n"),
        block("    v : float @ thread[1] = shfl_down(1.0, 18446744073709551615) + shfl_xor(1.0, -1) + shfl(1.0, 4294967296)\n"),
        "@prism(\"device\")\n@requires(block[1], smem=18446744073709551615)\ndef g():\n    pass\n\n".to_string()
            + &block("    s : shared(float[4]) @ block[1]\n    g()\n    g()\n"),
    ];
    for e in [
        "1 / 0",
        "1 % 0",
        "(-9223372036854775807 - 1) / -1",
        "(-9223372036854775807 - 1) % -1",
        "(-2147483647 - 1) / -1",
        "1 << 64",
        "1 << -1",
        "1 >> 70",
        "18446744073709551615 * 18446744073709551615",
        "-(-9223372036854775807 - 1)",
        "-18446744073709551615",
        "0 - 18446744073709551615 - 18446744073709551615",
        "int(1e300)",
        "int(-1e300)",
        "int(0.0 / 0.0)",
        "uint64(-1.0)",
        "1e308 * 1e308",
        "1.0 / 0.0",
    ] {
        for ty in ["int", "int64", "uint64", "float", "bool"] {
            cases.push(format!("N : constexpr({ty}) = {e}\n"));
        }
        cases.push(block(&format!(
            "    x : int @ thread[1] = {e}\n    y : float[{e}]\n    with group(thread[{e}]):\n        pass\n"
        )));
    }
    for (i, src) in cases.iter().enumerate() {
        assert_survives(&format!("extreme numbers, case {i}"), src);
    }
}

/// Runs `strategy`'s cases through the front end, each on a big-stack thread with a hang
/// watchdog. A panic fails the test with the input shrunk by proptest. `name` names the
/// files the cases are recorded in.
fn run<S>(name: &str, cases: u32, strategy: S)
where
    S: Strategy<Value = String>,
{
    // `PROPTEST_CASES=100000 cargo test --release --test no_panic` searches longer.
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(cases);
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    // A seed chosen here rather than inside proptest, so that it can be recorded; proptest
    // reads `PROPTEST_RNG_SEED` into `rng_seed` and then it is used as it is.
    let seed = match config.rng_seed {
        RngSeed::Fixed(seed) => seed,
        RngSeed::Random => RandomState::new().hash_one(std::time::SystemTime::now()),
    };
    let last = LastCase::new(name);
    last.record_seed(seed, cases);
    let mut runner = TestRunner::new(Config { rng_seed: RngSeed::Fixed(seed), ..config });
    // The first input that hangs. A failure (or a panic in this closure, which proptest
    // catches as one) would be shrunk, and shrinking reruns hanging cases, each for
    // `HANG_LIMIT` and each leaving a thread spinning; so a hang passes the case, every later
    // case is skipped, and the test fails after the run with the input as it was.
    let hung = std::sync::Mutex::new(None::<String>);
    let result = runner.run(&strategy, |src| {
        if hung.lock().is_ok_and(|h| h.is_some()) {
            return Ok(());
        }
        last.record(&src);
        match check_on_thread(src, BIG_STACK, true) {
            Ok(()) => Ok(()),
            Err(Outcome::Panicked(msg)) => Err(TestCaseError::fail(msg)),
            Err(Outcome::Hung(src)) => {
                if let Ok(mut h) = hung.lock() {
                    *h = Some(src);
                }
                Ok(())
            }
        }
    });
    if let Some(src) = hung.into_inner().ok().flatten() {
        panic!(
            "the front end ran for more than {HANG_LIMIT:?} on this input:\n{src:?}\nreplay with PROPTEST_RNG_SEED={seed}"
        );
    }
    if let Err(e) = result {
        panic!("{e}\nreplay with PROPTEST_RNG_SEED={seed}");
    }
}

/// The file a test writes the case it is about to run to, so that a crash that kills the
/// process leaves the case behind; removed, with the seed file, when the test is done
/// (normally or by a panic, which reports the case itself).
struct LastCase {
    case: PathBuf,
    seed: PathBuf,
}

impl LastCase {
    /// `target/tmp/no-panic/NAME.last-case.prism` and `NAME.seed`.
    fn new(name: &str) -> Self {
        Self::with_extension(name, "prism")
    }

    fn with_extension(name: &str, extension: &str) -> Self {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-panic");
        // The files an earlier crashed run left go at the first case of this one, so that
        // those left after it are all its own.
        static CLEAR: Once = Once::new();
        CLEAR.call_once(|| {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let _ = std::fs::remove_file(entry.path());
            }
        });
        let _ = std::fs::create_dir_all(&dir);
        LastCase { case: dir.join(format!("{name}.last-case.{extension}")), seed: dir.join(format!("{name}.seed")) }
    }

    /// Overwrites the case file with `contents`: a `write`, which outlives the process.
    /// Recording is best effort; a read-only target directory must not fail the test.
    fn record(&self, contents: &str) {
        let _ = std::fs::write(&self.case, contents);
    }

    fn record_seed(&self, seed: u64, cases: u32) {
        let _ = std::fs::write(&self.seed, format!("PROPTEST_RNG_SEED={seed} PROPTEST_CASES={cases}\n"));
    }
}

impl Drop for LastCase {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.case);
        let _ = std::fs::remove_file(&self.seed);
    }
}

/// What went wrong with one case.
enum Outcome {
    /// The front end panicked; the panic message.
    Panicked(String),
    /// The front end did not finish in [`HANG_LIMIT`]; the input.
    Hung(String),
}

/// Checks `src` on a new thread with a `stack`-byte stack, rendering the diagnostics if
/// `rendered`.
///
/// The thread is joined once it has sent its result, never detached: dropping its
/// `JoinHandle` calls `pthread_detach`, which in glibc (2.36 here) races with the thread's
/// exit. It marks the thread detached and then reads the thread's descriptor, which lies in
/// the thread's stack; if the thread has exited in between, it has released that stack, and
/// glibc unmaps a stack too big for its cache (40 MiB) as soon as any thread's stack is
/// released. The read is then a SIGSEGV that kills the test binary: the core dumps of
/// 100,000-case runs show it in `pthread_detach` under this function. A hung thread is left
/// joinable.
fn check_on_thread(src: String, stack: usize, rendered: bool) -> Result<(), Outcome> {
    let (tx, rx) = mpsc::channel();
    let input = src.clone();
    let checker = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let r = std::panic::catch_unwind(|| front_end(&src, rendered));
            let _ = tx.send(r);
        })
        .expect("spawn checker thread");
    let received = rx.recv_timeout(HANG_LIMIT);
    if received.is_ok() {
        // It has sent its result and is exiting; the join only waits for that.
        let _ = checker.join();
    } else {
        std::mem::forget(checker);
    }
    match received {
        Ok(Ok(())) => Ok(()),
        Ok(Err(payload)) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic with a non-string payload".into());
            Err(Outcome::Panicked(msg))
        }
        Err(_) => Err(Outcome::Hung(input)),
    }
}

/// The whole front end as `prism check` runs it: check, sort, and render when asked.
///
/// The nesting tests skip rendering: each diagnostic shows its source line, so thousands of
/// errors on one 10,000-level line make megabytes of output, slow but not a bug.
fn front_end(src: &str, rendered: bool) {
    let mut map = SourceMap::default();
    let id = map.add("input.prism", src);
    let mut problems = Problems::default();
    prism_types::check_source(id, src, &prism_types::Target::default(), &mut problems);
    problems.sort();
    if rendered {
        let _ = render(&map, &problems.into_vec(), Color::Never);
    }
}

/// Checks a hand-made input on a normal main-thread-sized stack; it must finish normally.
fn assert_survives(what: &str, src: &str) {
    // The inputs are made by the test's code, so naming the case is enough to replay it; the
    // test's thread is named after it by libtest.
    let test = std::thread::current().name().unwrap_or("nesting").replace(|c: char| !c.is_alphanumeric(), "_");
    let last = LastCase::with_extension(&test, "txt");
    last.record(&format!("{test}: {what} ({} bytes)\n", src.len()));
    // Rendering is quadratic in the worst case (see `front_end`), so only small inputs are
    // rendered.
    if let Err(e) = check_on_thread(src.to_string(), MAIN_STACK, src.len() <= 10_000) {
        let head: String = src.chars().take(300).collect();
        match e {
            Outcome::Panicked(msg) => panic!("{what}: the front end panicked: {msg}\ninput starts {head:?}"),
            Outcome::Hung(_) => panic!("{what}: the front end hung; input starts {head:?}"),
        }
    }
}

/// A device function with parameters the bodies above use, around `body`.
fn function(body: &str) -> String {
    format!("@prism(\"device\")\ndef f(a : ptr(float), c : bool, x : int) -> int:\n{body}")
}

/// Every `.prism` file of the ui corpus.
fn corpus() -> Vec<String> {
    prism_files(&repo_root().join("tests/ui"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display())))
        .collect()
}

/// Keywords, names, literals and operators of Prism, with a few strangers.
const TOKENS: &[&str] = &[
    "def",
    "with",
    "as",
    "match",
    "case",
    "for",
    "in",
    "while",
    "if",
    "elif",
    "else",
    "break",
    "continue",
    "return",
    "pass",
    "lambda",
    "and",
    "or",
    "not",
    "true",
    "false",
    "True",
    "async",
    "unsafe",
    "group",
    "partition",
    "claim",
    "split",
    "range",
    "id",
    "intrinsic",
    "ptr",
    "const",
    "constexpr",
    "shared",
    "align",
    "grid",
    "block",
    "thread",
    "warp",
    "warpgroup",
    "int",
    "uint",
    "int64",
    "half",
    "bf16",
    "float",
    "double",
    "bool",
    "CUTensorMap",
    "tensor_map",
    "swizzle",
    "tma_load_2d",
    "tma_load_3d",
    "p",
    "f",
    "offset",
    "dimension",
    "smem",
    "prism",
    "cuda",
    "requires",
    "launch_bounds",
    "__attribute__",
    "__launch_bounds__",
    "__syncthreads",
    "shfl",
    "atomic_add",
    "mma",
    "cp_async",
    "a",
    "b",
    "x",
    "i",
    "\"global\"",
    "\"device\"",
    "\"",
    "'",
    "\"\"\"",
    "0",
    "1",
    "32",
    "-1",
    "0x",
    "0xFFFFFFFF",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "1.5",
    ".5",
    "1e309",
    "1e",
    "1_0",
    "1f",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    ".",
    "..",
    "...",
    "@",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "<<",
    ">>",
    "<<=",
    ">>=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "^",
    "~",
    "!",
    "&&",
    "||",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "|=",
    "^=",
    "->",
    ";",
    "#",
    "\\",
    "\\\n",
    "\n",
    "\n    ",
    "\n        ",
    "\n  ",
    "\t",
    "\r",
    "$",
    "é",
    "\u{0}",
    "\u{feff}",
];

fn token() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(TOKENS)
}

/// Tokens joined by nothing, a space or a newline.
fn token_soup_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec((token(), proptest::sample::select(&["", " ", " ", "\n"][..])), 0..80).prop_map(|v| {
        let mut s = String::new();
        for (t, sep) in v {
            s.push_str(t);
            s.push_str(sep);
        }
        s
    })
}

/// Lines of tokens at random indentation, starting with a function header most of the time,
/// so the checker sees bodies and not just top-level errors.
fn indented_lines_strategy() -> impl Strategy<Value = String> {
    let line = (0..6usize, proptest::collection::vec(token(), 0..10), any::<bool>());
    (any::<bool>(), proptest::collection::vec(line, 0..30)).prop_map(|(header, lines)| {
        let mut s = String::new();
        if header {
            s.push_str("@prism(\"global\")\n@requires(grid[1], thread[32])\ndef k(a : ptr(float), n : int):\n");
        }
        for (indent, toks, colon) in lines {
            s.push_str(&"    ".repeat(indent));
            s.push_str(&toks.join(" "));
            if colon {
                s.push(':');
            }
            s.push('\n');
        }
        s
    })
}

/// Names a generated kernel can refer to (its parameters and a few locals), and some it
/// cannot.
const NAMES: &[&str] = &["n", "c", "a", "src", "x", "i", "s", "t", "v", "w", "b", "undefined", "id"];

/// Expressions over [`NAMES`], well formed, of any type.
fn expr_strategy() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => proptest::sample::select(NAMES).prop_map(str::to_string),
        4 => proptest::sample::select(&["0", "1", "2", "32", "0.5", "true", "id()", "N"][..]).prop_map(str::to_string),
        1 => proptest::sample::select(NUMBERS).prop_map(str::to_string),
    ];
    leaf.prop_recursive(3, 16, 3, |e| {
        let op = proptest::sample::select(
            &["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "==", "<", ">=", "and", "or"][..],
        );
        let func = proptest::sample::select(
            &["float", "int", "uint64", "half", "min", "max", "sqrt", "shfl_down", "atomic_add", "f", "range", "id"][..],
        );
        prop_oneof![
            (e.clone(), op, e.clone()).prop_map(|(a, o, b)| format!("({a} {o} {b})")),
            (proptest::sample::select(&["-", "~", "not "][..]), e.clone()).prop_map(|(o, a)| format!("{o}{a}")),
            (proptest::sample::select(&["a", "s", "v", "src", "n"][..]), proptest::collection::vec(e.clone(), 1..3))
                .prop_map(|(b, i)| format!("{b}[{}]", i.join(", "))),
            (func, proptest::collection::vec(e.clone(), 0..3)).prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
            (e.clone(), e.clone(), e).prop_map(|(a, c, b)| format!("({a} if {c} else {b})")),
        ]
    })
}

/// One line of a kernel body: a statement template filled in with generated expressions and
/// sizes, and whether it opens a block.
fn stmt_strategy() -> impl Strategy<Value = (String, bool)> {
    let persp = (proptest::sample::select(&["thread", "warp", "block", "grid", "warpgroup"][..]), 0..5usize)
        .prop_map(|(level, k)| format!("{level}[{}]", ["1", "2", "32", "128", "0"][k]));
    let ty = proptest::sample::select(
        &[
            "int",
            "float",
            "bool",
            "uint64",
            "half",
            "float[4]",
            "int[2][2]",
            "const(int)",
            "ptr(float)",
            "shared(float[64])",
        ][..],
    );
    (0..24usize, expr_strategy(), expr_strategy(), persp, ty, proptest::sample::select(NAMES)).prop_map(
        |(k, e, f, p, ty, name)| match k {
            0 => (format!("{name} : {ty} @ {p} = {e}"), false),
            1 => (format!("{name} : {ty}"), false),
            2 => (format!("{name} = {e}"), false),
            3 => (format!("{name}[{e}] += {f}"), false),
            4 => (e, false),
            5 => (format!("if {e}:"), true),
            6 => (format!("elif {e}:"), true),
            7 => ("else:".into(), true),
            8 => (format!("while {e}:"), true),
            9 => (format!("for {name} in range({e}, {f}):"), true),
            10 => (format!("with group({p}):"), true),
            11 => (format!("with partition(a, p={p}, f=lambda i: {e}) as {name}:"), true),
            12 => (format!("with claim(s, p={p}) as {name}:"), true),
            13 => (format!("match split({}):\ncase {e}:", p.split('[').next().unwrap_or("thread")), true),
            14 => (format!("case {e}:"), true),
            15 => ("with unsafe:".into(), true),
            16 => (format!("return {e}"), false),
            17 => ("break".into(), false),
            18 => ("continue".into(), false),
            19 => ("__syncthreads()".into(), false),
            20 => (format!("with async(s) as {name}:"), true),
            21 => (format!("{name} : int @ {p} = id()"), false),
            22 => (format!("v : float @ thread[1] = shfl_down({e}, {f})"), false),
            _ => ("pass".into(), false),
        },
    )
}

/// A kernel and a device function whose bodies are generated statements, each line indented
/// as deep as the block before it allows or shallower.
fn program_strategy() -> impl Strategy<Value = String> {
    let body = || proptest::collection::vec((stmt_strategy(), 0..4usize), 1..24);
    (body(), body()).prop_map(|(kernel, device)| {
        let mut src = String::from(
            "N : constexpr(int) = 4\n@prism(\"global\")\n@requires(block[1], thread[128], smem=1024)\n\
             def k(n : int, a : ptr(float), src : ptr(const(float))):\n\
             \x20   s : shared(float[128]) @ block[1]\n",
        );
        push_body(&mut src, kernel);
        src.push_str("\n@prism(\"device\")\n@requires(thread[32])\ndef f(x : float, c : bool) -> float:\n");
        push_body(&mut src, device);
        src
    })
}

/// Appends `lines` as a body at depth 1: a line after one that opens a block is indented
/// one step deeper, any other line goes back out `dedent` steps.
fn push_body(src: &mut String, lines: Vec<((String, bool), usize)>) {
    let mut depth = 1usize;
    let mut opened = false;
    for ((text, opens), dedent) in lines {
        if !opened {
            depth = depth.saturating_sub(dedent).max(1);
        }
        // A two-line template (`match` and its first `case`) nests its second line.
        for (k, line) in text.lines().enumerate() {
            src.push_str(&"    ".repeat(depth + k));
            src.push_str(line);
            src.push('\n');
        }
        depth += text.lines().count() - 1;
        opened = opens;
        if opens {
            depth += 1;
        }
    }
    src.push_str(&"    ".repeat(depth));
    src.push_str("pass\n");
}

/// One edit of a corpus file.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(Index),
    DuplicateLine(Index),
    SwapLines(Index, Index),
    Reindent(Index, usize),
    ReplaceNumber(Index, &'static str),
    ReplaceAllNumbers(&'static str),
    Truncate(Index),
    Insert(Index, &'static str),
    DeleteBytes(Index, usize),
}

/// Numbers that stress conversions, folding and size arithmetic.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "-2147483649",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "0x",
    "0xFFFFFFFFFFFFFFFF",
    "1e309",
    "-0.0",
    "0.0",
    "1.5",
    "(0-1)",
    "(1 << 63)",
    "(1 << 64)",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::DeleteLine),
        any::<Index>().prop_map(Mutation::DuplicateLine),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<Index>(), 0..13usize).prop_map(|(a, n)| Mutation::Reindent(a, n)),
        (any::<Index>(), proptest::sample::select(NUMBERS)).prop_map(|(a, n)| Mutation::ReplaceNumber(a, n)),
        proptest::sample::select(NUMBERS).prop_map(Mutation::ReplaceAllNumbers),
        any::<Index>().prop_map(Mutation::Truncate),
        (
            any::<Index>(),
            prop_oneof![proptest::sample::select(&["(", ")", "[", "]", "{", "}", ":", "\n"][..]), token()]
        )
            .prop_map(|(a, t)| Mutation::Insert(a, t)),
        (any::<Index>(), 1..40usize).prop_map(|(a, n)| Mutation::DeleteBytes(a, n)),
    ]
}

/// A corpus file with one to eight mutations applied in turn.
fn mutation_strategy(corpus: Vec<String>) -> impl Strategy<Value = String> {
    (proptest::sample::select(corpus), proptest::collection::vec(mutation(), 1..8))
        .prop_map(|(src, muts)| muts.iter().fold(src, |src, m| mutate(&src, m)))
}

fn mutate(src: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    let n = lines.len();
    match m {
        Mutation::DeleteLine(i) if n > 0 => {
            lines.remove(i.index(n));
        }
        Mutation::DuplicateLine(i) if n > 0 => {
            let i = i.index(n);
            lines.insert(i, lines[i].clone());
        }
        Mutation::SwapLines(a, b) if n > 0 => lines.swap(a.index(n), b.index(n)),
        Mutation::Reindent(i, width) if n > 0 => {
            let line = &mut lines[i.index(n)];
            *line = format!("{}{}", " ".repeat(*width), line.trim_start());
        }
        Mutation::ReplaceNumber(i, with) => {
            let spans = number_spans(src);
            if spans.is_empty() {
                return src.to_string();
            }
            let (start, end) = spans[i.index(spans.len())];
            return format!("{}{with}{}", &src[..start], &src[end..]);
        }
        Mutation::ReplaceAllNumbers(with) => {
            let mut out = String::new();
            let mut last = 0;
            for (start, end) in number_spans(src) {
                out.push_str(&src[last..start]);
                out.push_str(with);
                last = end;
            }
            out.push_str(&src[last..]);
            return out;
        }
        Mutation::Truncate(i) => return src[..char_floor(src, i.index(src.len() + 1))].to_string(),
        Mutation::Insert(i, text) => {
            let at = char_floor(src, i.index(src.len() + 1));
            return format!("{}{text}{}", &src[..at], &src[at..]);
        }
        Mutation::DeleteBytes(i, len) => {
            let start = char_floor(src, i.index(src.len() + 1));
            let end = char_floor(src, (start + len).min(src.len()));
            return format!("{}{}", &src[..start], &src[end..]);
        }
        _ => return src.to_string(),
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// The byte ranges of the digit runs in `src`.
fn number_spans(src: &str) -> Vec<(usize, usize)> {
    let bytes = src.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.') {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

/// The largest char boundary of `s` at or below `i`.
fn char_floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
