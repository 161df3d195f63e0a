//! Simulator speed on the fast kernels of the corpus (issue 10, item 8): each kernel runs on
//! the simulator with checks off (one worker, then every core) and with all checks on,
//! against a plain-Rust version of the same loop nest or algorithm on one core (release
//! profile); outputs are compared with the native ones (bit for bit where the inputs make
//! every sum exact, else within a stated tolerance).
//!
//! `cargo bench -p prism_interp --bench kernels [-- [--runs N] [--configs LIST] [CASE]...]`:
//! CASE is a kernel number of the corpus (`06`, `32`, ...; all when none is given), LIST a
//! comma-separated subset of `off1,off2,all`. `--runs 1 --configs off1 35` is what a
//! profiler wants (`valgrind --tool=callgrind target/release/deps/kernels-* ...`). The
//! table at the end is the one `BENCHMARKS.md` records. Issue 10's targets: at most 10x
//! native with checks off (one worker), all checks at most 3x the unchecked run.

#![allow(clippy::print_stdout)]

use half::bf16;
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
    (0..runs.max(1)).map(|_| f()).min().expect("at least one run")
}

/// Times `f` on a fresh copy of `init` (the copy not timed).
fn timed<T: Clone>(init: &T, f: impl Fn(&mut T)) -> Duration {
    let mut x = init.clone();
    let t = Instant::now();
    f(black_box(&mut x));
    black_box(&x);
    t.elapsed()
}

/// The launches' settings.
struct Opts {
    runs: usize,
    configs: Vec<String>,
    cores: usize,
}

/// One kernel of the table: what it is, its native time, and a launch that checks its
/// output and returns the simulated time.
struct Case<'a> {
    id: &'static str,
    what: String,
    native: Duration,
    /// Polling kernels run on one core whatever the worker count.
    polls: bool,
    launch: Box<dyn Fn(Checks, usize) -> Duration + 'a>,
}

/// A table row: native, checks off on 1 and all workers, all checks.
struct Row {
    id: &'static str,
    what: String,
    native: Duration,
    off1: Option<Duration>,
    off_n: Option<Duration>,
    all: Option<Duration>,
}

fn measure(o: &Opts, c: Case<'_>) -> Row {
    let on = |k: &str| o.configs.iter().any(|c| c == k);
    let off1 = on("off1").then(|| best(o.runs, || (c.launch)(Checks::NONE, 1)));
    let off_n = (on("off2") && !c.polls && o.cores > 1).then(|| best(o.runs, || (c.launch)(Checks::NONE, o.cores)));
    let all = on("all").then(|| best(o.runs.min(2), || (c.launch)(Checks::ALL, 1)));
    let row = Row { id: c.id, what: c.what, native: c.native, off1, off_n, all };
    print_row(&row, o.cores);
    row
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 10.0 { format!("{ms:.2} ms") } else { format!("{ms:.0} ms") }
}

fn ratio(d: Duration, by: Duration) -> f64 {
    d.as_secs_f64() / by.as_secs_f64()
}

fn print_row(r: &Row, cores: usize) {
    println!("{} {}", r.id, r.what);
    println!("  native (Rust, release, 1 core)   {:>10}", ms(r.native));
    let show = |what: &str, d: Option<Duration>| {
        if let Some(d) = d {
            println!("  {what:<32} {:>10}  {:8.1}x native", ms(d), ratio(d, r.native));
        }
    };
    show("checks off, 1 worker", r.off1);
    show(&format!("checks off, {cores} workers"), r.off_n);
    show("all checks (1 worker)", r.all);
    if let (Some(a), Some(o)) = (r.all, r.off1) {
        println!("  all checks / checks off          {:>10.2}x", ratio(a, o));
    }
}

fn table(rows: &[Row], cores: usize) {
    println!();
    println!("| kernel | native | checks off, 1 worker | checks off, {cores} workers | all checks | all / off |");
    println!("| --- | --: | --: | --: | --: | --: |");
    for r in rows {
        let cell = |d: Option<Duration>| match d {
            Some(d) => format!("{} ({:.1}×)", ms(d), ratio(d, r.native)),
            None => "—".into(),
        };
        let over = match (r.all, r.off1) {
            (Some(a), Some(o)) => format!("{:.2}×", ratio(a, o)),
            _ => "—".into(),
        };
        println!(
            "| {} {} | {} | {} | {} | {} | {over} |",
            r.id,
            r.what,
            ms(r.native),
            cell(r.off1),
            cell(r.off_n),
            cell(r.all)
        );
    }
}

// ---------------------------------------------------------------------------------------
// GEMMs

const N: usize = 256;

/// Inputs of the gemms: small multiples of 1/4 (A, B) and small integers (C), so every
/// product and partial sum is exact in f32 (and A, B in bf16): the order of the additions
/// and the contraction of the kernel do not change the bits.
fn gemm_inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let a = (0..N * N).map(|i| ((i * 7) % 13) as f32 * 0.25 - 1.5).collect();
    let b = (0..N * N).map(|i| ((i * 5) % 11) as f32 * 0.5 - 2.5).collect();
    let c = (0..N * N).map(|i| (i % 3) as f32).collect();
    (a, b, c)
}

/// The gemms' native loop nest: one output element per (row, col), k innermost, summed in
/// k order, iterators so that (like C at -O2) no access is bounds-checked.
fn native_gemm(a: &[f32], b: &[f32], c: &mut [f32]) {
    for (a_row, c_row) in a.chunks_exact(N).zip(c.chunks_exact_mut(N)) {
        for (col, c_el) in c_row.iter_mut().enumerate() {
            let acc = a_row.iter().zip(b[col..].iter().step_by(N)).fold(0f32, |acc, (x, y)| acc + x * y);
            *c_el = 1.5 * acc + 0.5 * *c_el;
        }
    }
}

/// How a gemm kernel takes A and B.
#[derive(Clone, Copy, PartialEq)]
enum GemmIn {
    /// f32, B row-major K x N.
    F32,
    /// bf16, B row-major K x N.
    Bf16,
    /// f32, B row-major N x K (`C = A B^T`, the tf32 tensor-core gemms).
    F32Nk,
}

/// A gemm kernel with the corpus's signature `(M, N, K, alpha, A, B, beta, C)` on 256^3;
/// `tile` is its block tile's side. The inputs are small multiples of 1/4 and 1/2, exact in
/// bf16 and tf32, so every kernel's result equals the native loop's.
fn gemm(
    o: &Opts,
    (id, what, file, kernel): (&'static str, &str, &str, &str),
    (tile, block): (usize, u32),
    input_kind: GemmIn,
) -> Row {
    let (a, b, c0) = gemm_inputs();
    let native = best(o.runs + 2, || timed(&c0, |c| native_gemm(&a, &b, c)));
    let mut want = c0.clone();
    native_gemm(&a, &b, &mut want);
    let m = module(file);
    // The kernel's B: the same matrix, stored N x K where the kernel takes it so.
    let b = if input_kind == GemmIn::F32Nk { (0..N * N).map(|i| b[(i % N) * N + i / N]).collect() } else { b };
    let bf16_in = input_kind == GemmIn::Bf16;
    let (m, a, b, c0, want) = (&m, &a, &b, &c0, &want);
    let launch = move |checks: Checks, workers: usize| {
        let input = |v: &[f32]| {
            if bf16_in {
                Arg::buffer(&v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>())
            } else {
                Arg::buffer(v)
            }
        };
        let args = [
            Arg::value(N as i32),
            Arg::value(N as i32),
            Arg::value(N as i32),
            Arg::value(1.5f32),
            input(a),
            input(b),
            Arg::value(0.5f32),
            Arg::buffer(c0),
        ];
        let cfg = Config { checks, workers, ..Config::default() };
        let t = Instant::now();
        let out = m.launch(kernel, ((N / tile) * (N / tile)) as u32, block, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        assert!(args[7].as_buffer().expect("buffer").to_vec::<f32>().expect("f32") == *want, "{id}: C differs");
        d
    };
    let what = format!("{what} {N}³");
    measure(o, Case { id, what, native, polls: false, launch: Box::new(launch) })
}

/// The Hopper gemms' native loop nest: `C = A B^T` with B stored N x K (K contiguous, the
/// layout tf32 wgmma reads), one output element per (row, col), k innermost.
fn native_gemm_nt(a: &[f32], b: &[f32], c: &mut [f32]) {
    for (a_row, c_row) in a.chunks_exact(N).zip(c.chunks_exact_mut(N)) {
        for (b_row, c_el) in b.chunks_exact(N).zip(c_row.iter_mut()) {
            *c_el = a_row.iter().zip(b_row).fold(0f32, |acc, (x, y)| acc + x * y);
        }
    }
}

/// A Hopper gemm (TMA and wgmma) with the signature `(A, B, C, M, N, K)`, `C = A B^T` on
/// 256^3, A and B passed as tensor maps; `grid` blocks of `block` threads. `bf16`: A, B
/// and C in bf16 (kernel 38), else f32 (tf32 on the tensor cores). The inputs are
/// [`gemm_inputs`]'s, exact in tf32 and bf16, and the sums exact in f32, so the result is
/// the native loop's (rounded to bf16 once, as the kernel's store does).
fn wgmma_gemm(
    o: &Opts,
    (id, what, file, kernel): (&'static str, &str, &str, &str),
    (grid, block): (u32, u32),
    bf16_io: bool,
) -> Row {
    let (a, b, _) = gemm_inputs();
    let c0 = vec![0f32; N * N];
    let native = best(o.runs + 2, || timed(&c0, |c| native_gemm_nt(&a, &b, c)));
    let mut want = c0.clone();
    native_gemm_nt(&a, &b, &mut want);
    let m = module(file);
    let (m, a, b, want) = (&m, &a, &b, &want);
    let launch = move |checks: Checks, workers: usize| {
        let dims = vec![N as u64, N as u64];
        let map = |v: &[f32]| {
            let buffer = if bf16_io {
                prism_interp::Buffer::from_slice(&v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>())
            } else {
                prism_interp::Buffer::from_slice(v)
            };
            Arg::Tensor { buffer, dims: dims.clone() }
        };
        let c = if bf16_io { Arg::buffer(&vec![bf16::ZERO; N * N]) } else { Arg::buffer(&vec![0f32; N * N]) };
        let args = [map(a), map(b), c, Arg::value(N as i32), Arg::value(N as i32), Arg::value(N as i32)];
        let cfg = Config { checks, workers, ..Config::default() };
        let t = Instant::now();
        let out = m.launch(kernel, grid, block, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        let c = args[2].as_buffer().expect("buffer");
        let same = if bf16_io {
            c.to_vec::<bf16>().expect("bf16") == want.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>()
        } else {
            c.to_vec::<f32>().expect("f32") == *want
        };
        assert!(same, "{id}: C differs");
        d
    };
    let what = format!("{what} {N}³");
    measure(o, Case { id, what, native, polls: false, launch: Box::new(launch) })
}

// ---------------------------------------------------------------------------------------
// Scans

const SCAN_N: usize = 1 << 20;

fn scan_input() -> Vec<i32> {
    (0..SCAN_N).map(|i| ((i as u64).wrapping_mul(2_654_435_761) >> 7) as i32).collect()
}

/// The native scan: a sequential inclusive prefix sum (wrapping), what a look-back scan
/// computes with one thread.
fn native_scan(x: &[i32], out: &mut [i32]) {
    let mut s = 0i32;
    for (o, v) in out.iter_mut().zip(x) {
        s = s.wrapping_add(*v);
        *o = s;
    }
}

/// A look-back scan of 2^20 items (`kernel`, `block` threads per block, one block per `tile`
/// items); `args` makes its arguments from the input and the tile count (the scratch layout
/// differs between scans); the output is argument 2.
fn scan<'a>(
    o: &Opts,
    (id, what, file, kernel): (&'static str, &str, &str, &'a str),
    (tile, block): (usize, u32),
    args: impl Fn(&[i32], usize) -> Vec<Arg> + 'a,
) -> Row {
    let x = scan_input();
    let zeros = vec![0i32; SCAN_N];
    let native = best(o.runs + 10, || timed(&zeros, |out| native_scan(&x, out)));
    let mut want = zeros.clone();
    native_scan(&x, &mut want);
    let tiles = SCAN_N.div_ceil(tile);
    let m = module(file);
    let launch = move |checks: Checks, workers: usize| {
        let args = args(&x, tiles);
        let cfg = Config { checks, workers, ..Config::default() };
        let t = Instant::now();
        let out = m.launch(kernel, tiles as u32, block, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        assert!(args[2].as_buffer().expect("buffer").to_vec::<i32>().expect("i32") == want, "{id}: out differs");
        d
    };
    let what = format!("{what}, 2^20 items");
    measure(o, Case { id, what, native, polls: true, launch: Box::new(launch) })
}

// ---------------------------------------------------------------------------------------
// Reductions

/// Kernel 33: the sum of 2^22 ints, 64 blocks of 256 threads, against a sequential
/// wrapping sum (memory-bound natively: 16 MB).
fn reduce(o: &Opts) -> Row {
    const LEN: usize = 1 << 22;
    let x: Vec<i32> = (0..LEN).map(|i| ((i as u64).wrapping_mul(2_654_435_761) >> 3) as i32).collect();
    let native = best(o.runs + 10, || timed(&0i32, |s| *s = x.iter().fold(0i32, |a, v| a.wrapping_add(*v))));
    let want = x.iter().fold(0i32, |a, v| a.wrapping_add(*v));
    let m = module("33_reduce_sum_vectorized.prism");
    let launch = |checks: Checks, workers: usize| {
        let args = [Arg::value(LEN as i32), Arg::buffer(&x), Arg::buffer(&[0i32])];
        let cfg = Config { checks, workers, ..Config::default() };
        let t = Instant::now();
        let out = m.launch("reduce_sum", 64, 256, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        assert_eq!(args[2].as_buffer().expect("buffer").to_vec::<i32>().expect("i32"), [want]);
        d
    };
    let what = "vectorised sum (reduce_sum), 2^22 ints".into();
    measure(o, Case { id: "33", what, native, polls: false, launch: Box::new(launch) })
}

/// Kernel 42's `sum_all`: 2^20 floats (small integers, so every order gives the same exact
/// sum), 64 blocks of 128 threads, against a sequential sum.
fn device_sum(o: &Opts) -> Row {
    const LEN: usize = 1 << 20;
    let x: Vec<f32> = (0..LEN).map(|i| ((i * 7919) % 17) as f32 - 8.0).collect();
    let native = best(o.runs + 10, || timed(&0f32, |s| *s = x.iter().sum::<f32>()));
    let want: f32 = x.iter().sum();
    let m = module("42_device_sum_and_max.prism");
    let launch = |checks: Checks, workers: usize| {
        let args = [
            Arg::value(LEN as i32),
            Arg::buffer(&x),
            Arg::buffer(&[0f32; 64]),
            Arg::buffer(&[0i32]),
            Arg::buffer(&[0f32]),
        ];
        let cfg = Config { checks, workers, ..Config::default() };
        let t = Instant::now();
        let out = m.launch("sum_all", 64, 128, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        assert_eq!(args[4].as_buffer().expect("buffer").to_vec::<f32>().expect("f32"), [want]);
        d
    };
    let what = "device sum (sum_all), 2^20 floats".into();
    measure(o, Case { id: "42", what, native, polls: false, launch: Box::new(launch) })
}

// ---------------------------------------------------------------------------------------
// Transpose, softmax, sort

/// Kernel 17: a 1024 x 1024 transpose against the same 32 x 32 tiling in Rust.
fn transpose(o: &Opts) -> Row {
    const R: usize = 1024;
    const C: usize = 1024;
    let a: Vec<f32> = (0..R * C).map(|i| i as f32).collect();
    let native_t = |out: &mut Vec<f32>| {
        for r0 in (0..R).step_by(32) {
            for c0 in (0..C).step_by(32) {
                for r in r0..r0 + 32 {
                    let row = &a[r * C + c0..r * C + c0 + 32];
                    for (c, v) in (c0..c0 + 32).zip(row) {
                        out[c * R + r] = *v;
                    }
                }
            }
        }
    };
    let zeros = vec![0f32; R * C];
    let native = best(o.runs + 10, || timed(&zeros, native_t));
    let mut want = zeros.clone();
    native_t(&mut want);
    let m = module("17_transpose_smem_padded.prism");
    let launch = |checks: Checks, workers: usize| {
        let args = [Arg::value(R as i32), Arg::value(C as i32), Arg::buffer(&a), Arg::buffer(&zeros)];
        let cfg = Config { checks, workers, ..Config::default() };
        let t = Instant::now();
        let out = m.launch("transpose", ((R / 32) * (C / 32)) as u32, 256, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        assert!(args[3].as_buffer().expect("buffer").to_vec::<f32>().expect("f32") == want, "17: at differs");
        d
    };
    let what = "transpose through shared memory, 1024²".into();
    measure(o, Case { id: "17", what, native, polls: false, launch: Box::new(launch) })
}

/// A warp's `shfl_xor` butterfly over its 32 lanes' values with `f` (`prism.std`'s warp
/// reductions and kernel 20's): lane 0's result.
fn butterfly(v: &mut [f32; 32], f: fn(f32, f32) -> f32) -> f32 {
    for k in 0..5 {
        let old = *v;
        for l in 0..32 {
            v[l] = f(old[l], old[l ^ (1 << k)]);
        }
    }
    v[0]
}

/// The softmax benches' input: `rows` x `cols` floats, multiples of 1/16 in [-3, 3.25).
fn softmax_input(rows: usize, cols: usize) -> Vec<f32> {
    (0..rows * cols).map(|i| ((i * 37) % 101) as f32 / 16.0 - 3.0).collect()
}

/// Kernel 20: softmax of 1024 rows of 1024 floats, one warp per row, against the same
/// algorithm in Rust (per row: lane-strided partial maxima and sums, butterflies over the
/// 32 partials, then the outputs), which gives the same bits.
fn softmax(o: &Opts) -> Row {
    const R: usize = 1024;
    const C: usize = 1024;
    let x = softmax_input(R, C);
    let native_s = |y: &mut Vec<f32>| {
        for (row, out) in x.chunks_exact(C).zip(y.chunks_exact_mut(C)) {
            let mut m = [0f32; 32];
            let mut s = [0f32; 32];
            for l in 0..32 {
                m[l] = row[l..].iter().step_by(32).fold(row[0], |a, &v| a.max(v));
            }
            let mx = butterfly(&mut m, f32::max);
            for l in 0..32 {
                s[l] = row[l..].iter().step_by(32).fold(0f32, |a, &v| a + (v - mx).exp());
            }
            let inv = 1.0 / butterfly(&mut s, |a, b| a + b);
            for (o, &v) in out.iter_mut().zip(row) {
                *o = (v - mx).exp() * inv;
            }
        }
    };
    let zeros = vec![0f32; R * C];
    let native = best(o.runs + 2, || timed(&zeros, native_s));
    let mut want = zeros.clone();
    native_s(&mut want);
    let m = module("20_softmax_rows_warp.prism");
    let launch = |checks: Checks, workers: usize| {
        let args = [Arg::value(R as i32), Arg::value(C as i32), Arg::buffer(&x), Arg::buffer(&zeros)];
        let cfg = Config { checks, workers, ..Config::default() };
        let t = Instant::now();
        let out = m.launch("softmax_rows", (R / 4) as u32, 128, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        assert!(args[3].as_buffer().expect("buffer").to_vec::<f32>().expect("f32") == want, "20: y differs");
        d
    };
    let what = "softmax, one warp per row, 1024 x 1024".into();
    measure(o, Case { id: "20", what, native, polls: false, launch: Box::new(launch) })
}

/// Kernel 49: softmax of 256 rows of 4096 floats (the same number as kernel 20's bench) with
/// one block of 128 threads per row (the kernel's default), the row held in registers,
/// against its algorithm in Rust: thread t holds the float4 slots t, t + 128, ...; its partial maximum (from column 0)
/// and sum over its columns in order; the butterflies of `prism.std`'s warp reductions; the
/// warps' results combined in warp order.
fn softmax_block(o: &Opts) -> Row {
    // Rows of 4096 columns, what the kernel is built for: each thread holds eight float4
    // slots (at 1024 columns it would hold two and skip six in every loop).
    const R: usize = 256;
    const C: usize = 4096;
    const T: usize = 128;
    let x = softmax_input(R, C);
    // A block reduction: each warp's butterfly, then the warps' results in order.
    fn block(parts: &[f32; T], f: fn(f32, f32) -> f32) -> f32 {
        let warps: Vec<f32> =
            parts.chunks_exact(32).map(|w| butterfly(&mut w.try_into().expect("32 lanes"), f)).collect();
        warps[1..].iter().fold(warps[0], |a, &b| f(a, b))
    }
    // Thread t's columns in order: its slots t, t + T, ... of four.
    let cols = |t: usize| (0..C / (4 * T)).flat_map(move |q| (0..4).map(move |e| (t + q * T) * 4 + e));
    let native_s = |y: &mut Vec<f32>| {
        for (row, out) in x.chunks_exact(C).zip(y.chunks_exact_mut(C)) {
            let m: [f32; T] = std::array::from_fn(|t| cols(t).fold(row[0], |a, c| a.max(row[c])));
            let mx = block(&m, f32::max);
            let mut e = [0f32; C];
            for (held, r) in e.iter_mut().zip(row) {
                *held = (r - mx).exp();
            }
            let s: [f32; T] = std::array::from_fn(|t| cols(t).fold(0f32, |a, c| a + e[c]));
            let inv = 1.0 / block(&s, |a, b| a + b);
            for (o, v) in out.iter_mut().zip(e) {
                *o = v * inv;
            }
        }
    };
    let zeros = vec![0f32; R * C];
    let native = best(o.runs + 2, || timed(&zeros, native_s));
    let mut want = zeros.clone();
    native_s(&mut want);
    let m = module("49_softmax_rows_block.prism");
    let launch = |checks: Checks, workers: usize| {
        let args = [Arg::value(R as i32), Arg::value(C as i32), Arg::buffer(&x), Arg::buffer(&zeros)];
        let cfg = Config { checks, workers, ..Config::default() };
        let t = Instant::now();
        let out = m.launch("softmax_rows_block", R as u32, T as u32, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        assert!(args[3].as_buffer().expect("buffer").to_vec::<f32>().expect("f32") == want, "49: y differs");
        d
    };
    let what = "softmax, one block per row, 256 x 4096".into();
    measure(o, Case { id: "49", what, native, polls: false, launch: Box::new(launch) })
}

/// Kernel 41: 2^16 keys sorted in tiles of 512 with their origins, against a stable LSD
/// radix sort of (key, position) pairs per tile in Rust (4 bits per pass, as the kernel's
/// `block_radix_sort_pairs` over bits 0..32, the sign bit flipped).
fn radix_sort(o: &Opts) -> Row {
    const LEN: usize = 1 << 16;
    const TILE: usize = 512;
    let keys: Vec<i32> = (0..LEN).map(|i| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as i32).collect();
    let native_sort = |(sorted, origin): &mut (Vec<i32>, Vec<i32>)| {
        let mut k = [0u32; TILE];
        let mut v = [0i32; TILE];
        let (mut k2, mut v2) = ([0u32; TILE], [0i32; TILE]);
        for (b, tile) in keys.chunks_exact(TILE).enumerate() {
            for (i, key) in tile.iter().enumerate() {
                k[i] = (*key as u32) ^ 0x8000_0000;
                v[i] = i as i32;
            }
            for shift in (0..32).step_by(4) {
                let mut count = [0usize; 17];
                for key in &k {
                    count[((key >> shift) & 15) as usize + 1] += 1;
                }
                for d in 0..16 {
                    count[d + 1] += count[d];
                }
                for (key, val) in k.iter().zip(&v) {
                    let d = ((key >> shift) & 15) as usize;
                    k2[count[d]] = *key;
                    v2[count[d]] = *val;
                    count[d] += 1;
                }
                std::mem::swap(&mut k, &mut k2);
                std::mem::swap(&mut v, &mut v2);
            }
            for i in 0..TILE {
                sorted[b * TILE + i] = (k[i] ^ 0x8000_0000) as i32;
                origin[b * TILE + i] = v[i];
            }
        }
    };
    let zeros = (vec![0i32; LEN], vec![0i32; LEN]);
    let native = best(o.runs + 5, || timed(&zeros, native_sort));
    let mut want = zeros.clone();
    native_sort(&mut want);
    let m = module("41_block_radix_sort_tiles.prism");
    let launch = |checks: Checks, workers: usize| {
        let args = [Arg::value(LEN as i32), Arg::buffer(&keys), Arg::buffer(&zeros.0), Arg::buffer(&zeros.1)];
        let cfg = Config { checks, workers, ..Config::default() };
        let t = Instant::now();
        let out = m.launch("sort_tiles", (LEN / TILE) as u32, 128, &args, cfg).expect("valid launch");
        let d = t.elapsed();
        assert!(out.is_clean(), "{:?}", out.reports);
        let got = |i: usize| args[i].as_buffer().expect("buffer").to_vec::<i32>().expect("i32");
        assert!(got(2) == want.0 && got(3) == want.1, "41: sorted or origin differs");
        d
    };
    let what = "block radix sort of tiles of 512, 2^16 keys".into();
    measure(o, Case { id: "41", what, native, polls: false, launch: Box::new(launch) })
}

fn main() {
    let mut o = Opts {
        runs: 3,
        configs: vec!["off1".into(), "off2".into(), "all".into()],
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    let mut only = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => o.runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "--configs" => o.configs = args.next().expect("--configs LIST").split(',').map(String::from).collect(),
            "--bench" => {}
            _ => only.push(a),
        }
    }
    let want = |id: &str| only.is_empty() || only.iter().any(|o| o == id);
    let mut rows = Vec::new();
    if want("06") {
        rows.push(gemm(
            &o,
            ("06", "register-tiled sgemm", "06_sgemm_4_register_tiling.prism", "sgemm_register_tiles"),
            (64, 256),
            GemmIn::F32,
        ));
    }
    if want("32") {
        rows.push(gemm(
            &o,
            ("32", "vectorised sgemm", "32_sgemm_6_vectorized.prism", "sgemm_vectorized"),
            (128, 256),
            GemmIn::F32,
        ));
    }
    if want("36") {
        rows.push(gemm(
            &o,
            ("36", "pipelined sgemm (cp.async)", "36_sgemm_pipelined.prism", "sgemm_pipelined"),
            (128, 256),
            GemmIn::F32,
        ));
    }
    if want("44") {
        rows.push(gemm(
            &o,
            ("44", "warp-tiled sgemm (cp.async)", "44_sgemm_warp_tiled.prism", "sgemm_warp_tiled"),
            (128, 256),
            GemmIn::F32,
        ));
    }
    if want("46") {
        rows.push(gemm(
            &o,
            ("46", "sgemm with K steps of 16 (cp.async)", "46_sgemm_deep_k.prism", "sgemm_deep_k"),
            (128, 256),
            GemmIn::F32,
        ));
    }
    if want("50") {
        rows.push(gemm(
            &o,
            ("50", "sgemm, 128 threads of 8 x 16 (cp.async)", "50_sgemm_wide_tiles.prism", "sgemm_wide"),
            (128, 128),
            GemmIn::F32,
        ));
    }
    if want("51") {
        rows.push(gemm(
            &o,
            (
                "51",
                "sgemm, 50 with operands loaded a k ahead (turning pipeline)",
                "51_sgemm_prefetch.prism",
                "sgemm_prefetch",
            ),
            (128, 128),
            GemmIn::F32,
        ));
    }
    if want("37") {
        rows.push(gemm(
            &o,
            ("37", "bf16 mma gemm, pipelined", "37_gemm_bf16_pipelined.prism", "gemm_bf16_pipelined"),
            (128, 256),
            GemmIn::Bf16,
        ));
    }
    if want("45") {
        rows.push(gemm(
            &o,
            ("45", "tf32 mma gemm, pipelined", "45_gemm_tf32_pipelined.prism", "gemm_tf32_pipelined"),
            (128, 256),
            GemmIn::F32Nk,
        ));
    }
    if want("43") {
        rows.push(wgmma_gemm(
            &o,
            ("43", "Hopper tf32 gemm (TMA, wgmma)", "43_gemm_tf32_wgmma.prism", "gemm_tf32"),
            (((N / 64) * (N / 128)) as u32, 256),
            false,
        ));
    }
    if want("48") {
        rows.push(wgmma_gemm(
            &o,
            ("48", "Hopper tf32 gemm, warp-specialised", "48_gemm_tf32_warp_specialised.prism", "gemm_tf32_ws"),
            (((N / 128) * (N / 256)) as u32, 384),
            false,
        ));
    }
    if want("38") {
        rows.push(wgmma_gemm(
            &o,
            ("38", "Hopper bf16 gemm, warp-specialised", "38_hgemm_warp_specialised.prism", "hgemm"),
            (((N / 128) * (N / 256)) as u32, 384),
            true,
        ));
    }
    if want("33") {
        rows.push(reduce(&o));
    }
    if want("42") {
        rows.push(device_sum(&o));
    }
    if want("16") {
        rows.push(scan(
            &o,
            ("16", "decoupled look-back scan", "16_scan_decoupled_lookback.prism", "scan_decoupled_lookback"),
            (1024, 256),
            |x, tiles| {
                // The status words are `uint64` (flag and value bits, docs/std.md) since
                // 2026-11-29; the values are `int`.
                let zeros = vec![0i32; tiles];
                vec![
                    Arg::value(x.len() as i32),
                    Arg::buffer(x),
                    Arg::buffer(&vec![0i32; x.len()]),
                    Arg::buffer(&[0i32]),
                    Arg::buffer(&vec![0u64; tiles]),
                    Arg::buffer(&zeros),
                    Arg::buffer(&zeros),
                ]
            },
        ));
    }
    // The packed look-back scans, 35 and its warp-transposed twin 47, take the same arguments.
    let packed = |x: &[i32], tiles: usize| {
        vec![
            Arg::value(x.len() as i32),
            Arg::buffer(x),
            Arg::buffer(&vec![0i32; x.len()]),
            Arg::buffer(&[0i32]),
            Arg::buffer(&vec![0u64; tiles]),
        ]
    };
    if want("35") {
        rows.push(scan(
            &o,
            ("35", "packed look-back scan", "35_scan_lookback_packed.prism", "scan_lookback_packed"),
            (4096, 256),
            packed,
        ));
    }
    if want("47") {
        rows.push(scan(
            &o,
            ("47", "packed look-back scan, warp transposes", "47_scan_warp_transposed.prism", "scan_warp_transposed"),
            (4096, 256),
            packed,
        ));
    }
    if want("17") {
        rows.push(transpose(&o));
    }
    if want("20") {
        rows.push(softmax(&o));
    }
    if want("49") {
        rows.push(softmax_block(&o));
    }
    if want("41") {
        rows.push(radix_sort(&o));
    }
    table(&rows, o.cores);
}
