//! Synchronisation inference at scale: compiles kernels of 100 to 800 shared-memory phases
//! (`prism_test::gen::phases`, in each of its shapes) through the whole pipeline and prints
//! the median time of each, with the growth from the size before (4.0 when doubling the
//! phases quadruples the time: quadratic).
//!
//! Run with `cargo bench -p prism_sync --bench sync`. Review R48 found inference cubic in
//! the phases (200 phases in a row took 7 s); results are in BENCHMARKS.md, "Synchronisation
//! inference at scale". The pipeline's other stages are linear in the program and take a
//! small part of each time.

#![allow(clippy::print_stdout)]

use prism_test::r#gen::phases::{Shape, phases};
use std::time::{Duration, Instant};

/// Phases per kernel.
const SIZES: [usize; 4] = [100, 200, 400, 800];
/// Timed runs per kernel (after one untimed run that checks it compiles).
const RUNS: usize = 3;

fn compile(src: &str) -> Duration {
    let start = Instant::now();
    let (_, problems, synced) = prism_driver::compile_text("phases.prism", src, &prism_driver::Options::default());
    let took = start.elapsed();
    assert!(synced.is_some(), "the kernel has errors: {:#?}", problems.diagnostics());
    took
}

fn main() {
    println!("| shape | phases | barriers | median | best | growth |");
    println!("| --- | --: | --: | --: | --: | --: |");
    for shape in Shape::ALL {
        let mut before: Option<Duration> = None;
        for n in SIZES {
            let src = phases(shape, n);
            let (_, _, synced) = prism_driver::compile_text("phases.prism", &src, &prism_driver::Options::default());
            let barriers = synced.expect("the generated kernel compiles").report().barriers.len();
            let mut times: Vec<Duration> = (0..RUNS).map(|_| compile(&src)).collect();
            times.sort();
            let median = times[RUNS / 2];
            let growth = before.map_or(String::new(), |b| format!("{:.1}", median.as_secs_f64() / b.as_secs_f64()));
            println!(
                "| {shape:?} | {n} | {barriers} | {:.3} s | {:.3} s | {growth} |",
                median.as_secs_f64(),
                times[0].as_secs_f64()
            );
            before = Some(median);
        }
    }
}
