//! Front-end throughput: checks generated programs of 25k to 200k lines and prints lines per
//! second, with a linearity ratio (time per line relative to the smallest size).
//!
//! Run with `cargo bench -p prism_test --bench check`. Each program comes from
//! [`prism_test::r#gen::generate`] (realistic kernel libraries and kernels) and is checked to
//! have no diagnostics before timing. A timed run is the whole front end,
//! `prism_types::check_source` (lex, parse, check), plus dropping the typed IR it returns.
//! Each size runs [`RUNS`] times, round-robin over the sizes so that a busy spell of the
//! shared machine hits every size alike; the median is reported, with the best run beside
//! it. A second table splits separate runs into lexing, parsing, checking and freeing the
//! trees, so a size-dependent slowdown points at its stage.
//!
//! The target from the issue: 100k lines in under one second on the 2-core development
//! machine, with time growing linearly in size. Results are recorded in `BENCHMARKS.md`.
//!
//! A last table times the same front end on a program split into modules (issue 12): a
//! root of 10k lines importing ten generated 10k-line libraries (110k lines in all),
//! through `prism_driver::checked_with` (loading, parsing and checking every module, with
//! the files in memory), against the target of 100k lines per second.

#![allow(clippy::print_stdout)]

use prism_diag::Problems;
use prism_span::FileId;
use prism_types::Target;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Program sizes, in lines.
const SIZES: [usize; 4] = [25_000, 50_000, 100_000, 200_000];
/// Timed runs per size (after one untimed run that checks the program has no errors).
const RUNS: usize = 9;
/// The size the one-second target is about.
const TARGET_LINES: usize = 100_000;
/// A per-line time this much above the smallest size's counts as non-linear growth.
const LINEAR_TOLERANCE: f64 = 1.25;

struct Row {
    lines: usize,
    median: Duration,
    best: Duration,
    /// Median lex, parse, check and drop (freeing the AST and the typed IR) times.
    stages: [Duration; 4],
}

fn main() {
    let target = Target::default();
    let file = FileId(0);
    let programs: Vec<String> = SIZES
        .iter()
        .map(|&size| {
            let src = prism_test::r#gen::generate(size, 1);
            let (_, diags) = prism_test::check_text("bench.prism", &src, &target);
            assert!(diags.is_empty(), "the generated {size}-line program has {} diagnostics", diags.len());
            src
        })
        .collect();

    // Runs go round-robin over the sizes, so that a slow spell of a shared machine slows
    // every size alike instead of skewing the linearity ratio.
    let mut totals: Vec<Vec<Duration>> = vec![Vec::new(); SIZES.len()];
    let mut stage_runs: Vec<Vec<[Duration; 4]>> = vec![Vec::new(); SIZES.len()];
    for _ in 0..RUNS {
        for (i, src) in programs.iter().enumerate() {
            let start = Instant::now();
            let mut problems = Problems::default();
            let program = prism_types::check_source(file, black_box(src), &target, &mut problems);
            drop(black_box(program));
            totals[i].push(start.elapsed());
            stage_runs[i].push(stages(file, src, &target));
        }
    }
    let rows: Vec<Row> = programs
        .iter()
        .zip(totals.iter_mut().zip(&stage_runs))
        .map(|(src, (totals, stage_runs))| Row {
            lines: src.lines().count(),
            median: median(totals),
            best: *totals.iter().min().expect("runs"),
            stages: [0, 1, 2, 3].map(|s| median(&mut stage_runs.iter().map(|r| r[s]).collect::<Vec<_>>())),
        })
        .collect();

    let per_line = |r: &Row| r.median.as_secs_f64() / r.lines as f64;
    let per_line_best = |r: &Row| r.best.as_secs_f64() / r.lines as f64;
    let (base, base_best) = (per_line(&rows[0]), per_line_best(&rows[0]));
    println!();
    println!("Front end (lex + parse + check + drop), {RUNS} runs per size:");
    println!();
    println!("| lines   | median ms | best ms | lines/s (median) | time/line vs 25k (median) | (best) |");
    println!("|--------:|----------:|--------:|-----------------:|--------------------------:|-------:|");
    for r in &rows {
        println!(
            "| {:>7} | {:>9.1} | {:>7.1} | {:>16.0} | {:>25.2} | {:>6.2} |",
            r.lines,
            ms(r.median),
            ms(r.best),
            r.lines as f64 / r.median.as_secs_f64(),
            per_line(r) / base,
            per_line_best(r) / base_best,
        );
    }
    println!();
    println!("By stage, median ms (measured in separate runs):");
    println!();
    println!("| lines   | lex     | parse   | check   | drop    |");
    println!("|--------:|--------:|--------:|--------:|--------:|");
    for r in &rows {
        let [lex, parse, check, drop] = r.stages.map(ms);
        println!("| {:>7} | {lex:>7.1} | {parse:>7.1} | {check:>7.1} | {drop:>7.1} |", r.lines);
    }
    println!();
    let worst = rows.iter().map(|r| per_line(r) / base).fold(0.0, f64::max);
    let worst_best = rows.iter().map(|r| per_line_best(r) / base_best).fold(0.0, f64::max);
    let linear = worst.min(worst_best) <= LINEAR_TOLERANCE;
    println!(
        "linearity: time per line is at most {worst:.2}x (median) / {worst_best:.2}x (best) the 25k case: {}",
        if linear { "linear" } else { "NOT linear" }
    );
    let at_target = rows.iter().find(|r| r.lines >= TARGET_LINES).expect("a size of at least 100k lines");
    println!(
        "100k lines ({} lines) checked in {:.1} ms (median): {}",
        at_target.lines,
        ms(at_target.median),
        if at_target.median < Duration::from_secs(1) { "under 1 s, target met" } else { "over 1 s, target MISSED" }
    );
    modules(&target);
}

/// The front end on a program of eleven modules: a root importing ten libraries.
fn modules(target: &Target) {
    const LIBS: usize = 10;
    const LINES: usize = 10_000;
    let mut files = prism_driver::MemoryFiles::default();
    let mut lines = 0;
    let mut root = String::new();
    for k in 0..LIBS {
        let src = prism_test::r#gen::generate(LINES, 100 + k as u64);
        lines += src.lines().count();
        files.add(format!("lib/m{k}.prism"), src);
        root.push_str(&format!("import lib.m{k}\n"));
    }
    root.push_str(&prism_test::r#gen::generate(LINES, 99));
    lines += root.lines().count();
    let mut times = Vec::new();
    for run in 0..=RUNS {
        let mut map = prism_span::SourceMap::default();
        let file = map.add("main.prism", root.as_str());
        let mut problems = Problems::default();
        let mut search = prism_driver::Search { files: &mut files, include: Vec::new(), base: None };
        let start = Instant::now();
        let program = prism_driver::checked_with(&mut map, file, &mut search, target, &mut problems);
        assert!(problems.diagnostics().is_empty(), "the module program has diagnostics");
        drop(black_box(program));
        // The first run only checks that the program is clean.
        if run > 0 {
            times.push(start.elapsed());
        }
    }
    let m = median(&mut times);
    println!();
    println!("Modules: a root importing {LIBS} libraries, {lines} lines in all, {RUNS} runs:");
    println!();
    println!("| modules | lines   | median ms | best ms | lines/s (median) |");
    println!("|--------:|--------:|----------:|--------:|-----------------:|");
    println!(
        "| {:>7} | {lines:>7} | {:>9.1} | {:>7.1} | {:>16.0} |",
        LIBS + 1,
        ms(m),
        ms(*times.iter().min().expect("runs")),
        lines as f64 / m.as_secs_f64()
    );
    let rate = lines as f64 / m.as_secs_f64();
    println!(
        "with imports: {rate:.0} lines/s: {}",
        if rate >= TARGET_LINES as f64 {
            "at least 100k lines/s, target met"
        } else {
            "under 100k lines/s, target MISSED"
        }
    );
}

/// One run split into lexing, parsing, checking, and freeing the AST and typed IR.
fn stages(file: FileId, src: &str, target: &Target) -> [Duration; 4] {
    let mut syntax_errors = Vec::new();
    let start = Instant::now();
    let tokens = prism_syntax::lexer::lex(file, black_box(src), &mut syntax_errors);
    let lexed = Instant::now();
    let module = prism_syntax::parser::parse_tokens(file, tokens, &mut syntax_errors);
    let parsed = Instant::now();
    let mut problems = Problems::default();
    let program = prism_types::check(&module, target, &mut problems);
    let checked = Instant::now();
    drop(black_box(module));
    drop(black_box(program));
    let dropped = Instant::now();
    [lexed - start, parsed - lexed, checked - parsed, dropped - checked]
}

fn median(xs: &mut [Duration]) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
