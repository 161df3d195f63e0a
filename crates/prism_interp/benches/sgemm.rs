//! Simulator speed: the naive sgemm of the corpus at 256 x 256 x 256, with checks off and
//! on, against the same loop nest compiled natively. Prints the ratios.
//!
//! Run with `cargo bench -p prism_interp --bench sgemm`. Targets (issue 3): at most 30x the
//! native time with checks off, 100x with every check on.

#![allow(clippy::print_stdout)]

use prism_interp::{Arg, Checks, Config, Module};
use std::hint::black_box;
use std::time::{Duration, Instant};

const N: usize = 256;

fn module() -> Module {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/ui/accept/kernels/03_sgemm_1_naive.prism");
    let src = std::fs::read_to_string(path).expect("the corpus is there");
    let (_, _, synced) = prism_driver::compile_text("03_sgemm_1_naive.prism", &src, &prism_driver::Options::default());
    Module::new(&synced.expect("it checks"))
}

fn inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let a = (0..N * N).map(|i| ((i * 7) % 13) as f32 * 0.25 - 1.5).collect();
    let b = (0..N * N).map(|i| ((i * 5) % 11) as f32 * 0.5 - 2.5).collect();
    let c = (0..N * N).map(|i| (i % 3) as f32).collect();
    (a, b, c)
}

/// The kernel's loop nest: one output element per (row, col), k innermost, summed in the
/// same order as the kernel. Written with iterators so that, like C at -O2, it carries no
/// per-access bounds or overflow checks. The kernel fuses each product into the addition it
/// feeds (Prism's contraction rule); the inputs are small multiples of 1/4, so every product
/// and sum is exact and one rounding or two give the same bits, and the native loop can use
/// plain `*` and `+`, the fastest code without the FMA target feature.
fn native(a: &[f32], b: &[f32], c: &mut [f32], alpha: f32, beta: f32) {
    for (a_row, c_row) in a.chunks_exact(N).zip(c.chunks_exact_mut(N)) {
        for (col, c_el) in c_row.iter_mut().enumerate() {
            let acc = a_row.iter().zip(b[col..].iter().step_by(N)).fold(0f32, |acc, (x, y)| acc + x * y);
            *c_el = alpha * acc + beta * *c_el;
        }
    }
}

fn best(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().expect("at least one run")
}

fn main() {
    let (a, b, c0) = inputs();
    let t_native = best(5, || {
        let mut c = c0.clone();
        let t = Instant::now();
        native(black_box(&a), black_box(&b), black_box(&mut c), 1.5, 0.5);
        black_box(&c);
        t.elapsed()
    });
    let mut reference = c0.clone();
    native(&a, &b, &mut reference, 1.5, 0.5);
    let m = module();
    let run = |checks: Checks, workers: usize| {
        let args = [
            Arg::value(N as i32),
            Arg::value(N as i32),
            Arg::value(N as i32),
            Arg::value(1.5f32),
            Arg::buffer(&a),
            Arg::buffer(&b),
            Arg::value(0.5f32),
            Arg::buffer(&c0),
        ];
        let cfg = Config { checks, workers, ..Config::default() };
        let blocks = (N / 32 * (N / 32)) as u32;
        let t = Instant::now();
        let out = m.launch("sgemm_naive", blocks, 1024, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        let got = args[7].as_buffer().expect("buffer").to_vec::<f32>().expect("f32");
        assert_eq!(got, reference, "the simulator and the native loop agree");
        d
    };
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let off_par = best(3, || run(Checks::NONE, cores));
    let off_one = best(3, || run(Checks::NONE, 1));
    let on = best(2, || run(Checks::ALL, 1));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ratio = |d: Duration| d.as_secs_f64() / t_native.as_secs_f64();
    println!("naive sgemm {N}x{N}x{N} ({} cores)", cores);
    println!("  native loop nest (Rust, release)      {:9.2} ms", ms(t_native));
    println!(
        "  simulator, checks off, {cores} workers      {:9.2} ms  {:6.1}x  (target <= 30x)",
        ms(off_par),
        ratio(off_par)
    );
    println!("  simulator, checks off, 1 worker       {:9.2} ms  {:6.1}x", ms(off_one), ratio(off_one));
    println!("  simulator, all checks on (1 worker)   {:9.2} ms  {:6.1}x  (target <= 100x)", ms(on), ratio(on));
}
