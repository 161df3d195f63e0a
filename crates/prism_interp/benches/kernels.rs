//! Simulator speed on more than the naive sgemm: the tiled sgemm with register tiles
//! (`tests/ui/accept/kernels/06_sgemm_4_register_tiling.prism`, 256 x 256 x 256) and the
//! decoupled look-back scans (`16_scan_decoupled_lookback.prism` and the CUB-class
//! `35_scan_lookback_packed.prism`, 2^20 items), each against
//! a plain-Rust version on one core (the same loop nest for the gemm, a sequential prefix
//! sum for the scan), with checks off and on. Outputs must agree bit for bit.
//!
//! `cargo bench -p prism_interp --bench kernels`. Issue 10's target is at most 10x native
//! with checks off and all checks at most 3x the unchecked run; the figures say how far
//! the simulator is.

#![allow(clippy::print_stdout)]

use prism_interp::{Arg, Checks, Config, Module};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn module(name: &str) -> Module {
    let path = format!("{}/../../tests/ui/accept/kernels/{name}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).expect("the corpus is there");
    let (_, _, synced) = prism_driver::compile_text(name, &src, &prism_driver::Options::default());
    Module::new(&synced.expect("it checks"))
}

fn best(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().expect("at least one run")
}

fn row(what: &str, d: Duration, native: Duration) {
    println!("  {what:<44} {:9.2} ms  {:7.1}x", d.as_secs_f64() * 1e3, d.as_secs_f64() / native.as_secs_f64());
}

fn sgemm() {
    const N: usize = 256;
    let a: Vec<f32> = (0..N * N).map(|i| ((i * 7) % 13) as f32 * 0.25 - 1.5).collect();
    let b: Vec<f32> = (0..N * N).map(|i| ((i * 5) % 11) as f32 * 0.5 - 2.5).collect();
    let c0: Vec<f32> = (0..N * N).map(|i| (i % 3) as f32).collect();
    // The inputs are small multiples of 1/4: every product and sum is exact, so the order
    // and the contraction of the kernel do not change the bits.
    let native = |c: &mut [f32]| {
        for (a_row, c_row) in a.chunks_exact(N).zip(c.chunks_exact_mut(N)) {
            for (col, c_el) in c_row.iter_mut().enumerate() {
                let acc = a_row.iter().zip(b[col..].iter().step_by(N)).fold(0f32, |acc, (x, y)| acc + x * y);
                *c_el = 1.5 * acc + 0.5 * *c_el;
            }
        }
    };
    let t_native = best(5, || {
        let mut c = c0.clone();
        let t = Instant::now();
        native(black_box(&mut c));
        black_box(&c);
        t.elapsed()
    });
    let mut want = c0.clone();
    native(&mut want);
    let m = module("06_sgemm_4_register_tiling.prism");
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
        let t = Instant::now();
        let out =
            m.launch("sgemm_register_tiles", ((N / 64) * (N / 64)) as u32, 256, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        assert_eq!(args[7].as_buffer().expect("buffer").to_vec::<f32>().expect("f32"), want);
        d
    };
    println!("tiled sgemm (06, 64x64 tiles, 4x4 per thread) {N}x{N}x{N}");
    row("native loop nest (Rust, release, 1 core)", t_native, t_native);
    row("simulator, checks off, 1 worker", best(3, || run(Checks::NONE, 1)), t_native);
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    row(&format!("simulator, checks off, {cores} workers"), best(3, || run(Checks::NONE, cores)), t_native);
    row("simulator, all checks on", best(2, || run(Checks::ALL, 1)), t_native);
}

/// A look-back scan of 2^20 items (`file`'s `kernel`, `block` threads per block, one block
/// per `tile` items) against a sequential prefix sum; `args` makes its arguments from the
/// input, the output buffer and the tile count (the scratch layout differs between scans).
fn scan(
    what: &str,
    (file, kernel): (&str, &str),
    (tile, block): (usize, u32),
    args: impl Fn(&[i32], usize) -> Vec<Arg>,
) {
    const N: usize = 1 << 20;
    let tiles = N.div_ceil(tile);
    let x: Vec<i32> = (0..N).map(|i| ((i as u64).wrapping_mul(2_654_435_761) >> 7) as i32).collect();
    let native = |out: &mut [i32]| {
        let mut s = 0i32;
        for (o, v) in out.iter_mut().zip(&x) {
            s = s.wrapping_add(*v);
            *o = s;
        }
    };
    let t_native = best(5, || {
        let mut out = vec![0i32; N];
        let t = Instant::now();
        native(black_box(&mut out));
        black_box(&out);
        t.elapsed()
    });
    let mut want = vec![0i32; N];
    native(&mut want);
    let m = module(file);
    let run = |checks: Checks| {
        let args = args(&x, tiles);
        let cfg = Config { checks, ..Config::default() };
        let t = Instant::now();
        let out = m.launch(kernel, tiles as u32, block, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        assert_eq!(args[2].as_buffer().expect("buffer").to_vec::<i32>().expect("i32"), want);
        d
    };
    println!("{what}, {N} items, {tiles} tiles (polling: one core, co-resident)");
    row("native sequential prefix sum (Rust, release)", t_native, t_native);
    row("simulator, checks off", best(3, || run(Checks::NONE)), t_native);
    row("simulator, all checks on", best(2, || run(Checks::ALL)), t_native);
}

fn main() {
    sgemm();
    scan(
        "decoupled look-back scan (16)",
        ("16_scan_decoupled_lookback.prism", "scan_decoupled_lookback"),
        (1024, 256),
        |x, tiles| {
            let zeros = vec![0i32; tiles];
            vec![
                Arg::value(x.len() as i32),
                Arg::buffer(x),
                Arg::buffer(&vec![0i32; x.len()]),
                Arg::buffer(&[0i32]),
                Arg::buffer(&zeros),
                Arg::buffer(&zeros),
                Arg::buffer(&zeros),
            ]
        },
    );
    scan(
        "packed look-back scan (35)",
        ("35_scan_lookback_packed.prism", "scan_lookback_packed"),
        (2048, 128),
        |x, tiles| {
            vec![
                Arg::value(x.len() as i32),
                Arg::buffer(x),
                Arg::buffer(&vec![0i32; x.len()]),
                Arg::buffer(&[0i32]),
                Arg::buffer(&vec![0u64; tiles]),
            ]
        },
    );
}
