//! The machinery of the run corpus: compiling a corpus file, launching a kernel under the
//! deterministic schedule and under [`SEEDS`], deterministic inputs, plain-Rust helpers the
//! references share, and the comparisons.
//!
//! Invariant: every launch runs with all dynamic checks on (`Config::default()`), must come
//! back clean, and must leave the same bits in every buffer under every schedule; only then
//! are the results compared with a reference.

use prism_diag::{Color, Diagnostic, render};
use prism_interp::{Arg, Buffer, Config, Dim3, Elem, Module};
use prism_span::SourceMap;
use prism_types::ty::Scalar;
use std::fmt::Debug;

/// The random schedules every case also runs under.
pub const SEEDS: [u64; 3] = [1, 0x5eed, 0xdead_beef];

/// [`SEEDS`], or seeds 1..=N when `PRISM_RUN_SEEDS=N` asks for a longer sweep.
fn seeds() -> Vec<u64> {
    match std::env::var("PRISM_RUN_SEEDS") {
        Ok(n) => (1..=n.parse::<u64>().expect("PRISM_RUN_SEEDS is a number")).collect(),
        Err(_) => SEEDS.to_vec(),
    }
}

/// A compiled corpus file.
pub struct Program {
    path: String,
    map: SourceMap,
    pub module: Module,
}

/// The buffers of one launch after it ran, by parameter name.
pub struct Outputs {
    names: Vec<String>,
    args: Vec<Arg>,
}

/// Deterministic pseudo-random inputs: the project's SplitMix64, with helpers for kernel data.
pub struct Rng(prism_interp::rng::Rng);

/// Reads and compiles `tests/ui/<rel>`; panics with the rendered errors if it does not compile.
pub fn program(rel: &str) -> Program {
    program_with(rel, &[])
}

/// [`program`] built with `-D` defines (`NAME=VALUE`), as `prism build -D` builds a variant.
pub fn program_with(rel: &str, defines: &[&str]) -> Program {
    let path = prism_test::repo_root().join("tests/ui").join(rel);
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let target = prism_test::target_for(&src).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let defines = defines.iter().map(|d| prism_types::Define::parse(d).unwrap_or_else(|e| panic!("{e}"))).collect();
    let opts = prism_driver::Options { target, defines, ..prism_driver::Options::default() };
    let (map, mut problems, synced) = prism_driver::compile_text(rel, &src, &opts);
    problems.sort();
    let Some(synced) = synced else {
        panic!("{rel} does not compile:\n{}", render(&map, problems.diagnostics(), Color::Never));
    };
    Program { path: rel.to_string(), map, module: Module::new(&synced) }
}

impl Program {
    /// Launches `kernel` on `grid` blocks of `block` threads with the arguments `args` builds
    /// (called once per run), under the deterministic schedule and each of [`seeds`]. Panics
    /// unless every run is clean and all runs leave identical buffers; returns the buffers of
    /// the deterministic run.
    pub fn launch(
        &self,
        kernel: &str,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: impl Fn() -> Vec<Arg>,
    ) -> Outputs {
        let (grid, block): (Dim3, Dim3) = (grid.into(), block.into());
        let info = self.module.kernel(kernel).unwrap_or_else(|| panic!("{}: no kernel `{kernel}`", self.path));
        let names: Vec<String> = info.params.iter().map(|p| p.name.clone()).collect();
        let run = |seed: Option<u64>| {
            let args = args();
            let cfg = Config { seed, ..Config::default() };
            let schedule = seed.map_or("the deterministic schedule".to_string(), |s| format!("seed {s}"));
            let out = self
                .module
                .launch(kernel, grid, block, &args, cfg)
                .unwrap_or_else(|e| panic!("{}: launching `{kernel}`: [{}] {}", self.path, e.code, e.message));
            if !out.is_clean() {
                let diags: Vec<Diagnostic> = out.reports.iter().map(|r| r.to_diagnostic()).collect();
                panic!(
                    "{}: `{kernel}` on {grid} x {block} under {schedule} is not clean:\n{}",
                    self.path,
                    render(&self.map, &diags, Color::Never)
                );
            }
            args
        };
        let base = run(None);
        for seed in seeds() {
            let other = run(Some(seed));
            for ((name, a), b) in names.iter().zip(&base).zip(&other) {
                if let (Some(a), Some(b)) = (a.as_buffer(), b.as_buffer()) {
                    let (a, b) = (a.to_bits(), b.to_bits());
                    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
                        panic!(
                            "{}: `{kernel}`: `{name}` depends on the schedule: element {i} is {:#x} under the \
                             deterministic schedule and {:#x} under seed {seed}",
                            self.path, a[i], b[i]
                        );
                    }
                }
            }
        }
        Outputs { names, args: base }
    }
}

impl Outputs {
    /// The contents of pointer parameter `name`.
    pub fn get<T: Elem>(&self, name: &str) -> Vec<T> {
        let i = self.names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no parameter `{name}`"));
        let buf = self.args[i].as_buffer().unwrap_or_else(|| panic!("`{name}` is not a buffer"));
        buf.to_vec::<T>().unwrap_or_else(|| panic!("`{name}` holds {:?}", buf.elem))
    }

    /// The raw element bits of pointer parameter `name` (for 16-bit floats).
    pub fn bits(&self, name: &str) -> Vec<u64> {
        let i = self.names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no parameter `{name}`"));
        self.args[i].as_buffer().unwrap_or_else(|| panic!("`{name}` is not a buffer")).to_bits()
    }

    /// [`Outputs::get`] for `float` buffers.
    pub fn f32(&self, name: &str) -> Vec<f32> {
        self.get(name)
    }

    /// [`Outputs::get`] for `int` buffers.
    pub fn i32(&self, name: &str) -> Vec<i32> {
        self.get(name)
    }
}

impl Rng {
    /// A generator for one case; different seeds give unrelated streams.
    pub fn new(seed: u64) -> Rng {
        Rng(prism_interp::rng::Rng::new(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// An integer in `lo..=hi`.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    /// `n` integers in `lo..=hi`.
    pub fn ints(&mut self, n: usize, lo: i64, hi: i64) -> Vec<i32> {
        (0..n).map(|_| self.int(lo, hi) as i32).collect()
    }

    /// `n` multiples of 1/8 in `lo..=hi`: sums and products of a few of them are exact in f32.
    pub fn eighths(&mut self, n: usize, lo: i64, hi: i64) -> Vec<f32> {
        (0..n).map(|_| self.int(lo * 8, hi * 8) as f32 / 8.0).collect()
    }

    /// `n` floats uniform in `[lo, hi)` with a full 24-bit mantissa (not tf32- or bf16-exact).
    pub fn uniform(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)).collect()
    }
}

/// A `bf16` buffer of `values`, which must be exactly representable (8 significant bits).
pub fn bf16_buffer(values: &[f32]) -> Arg {
    let bits: Vec<u64> = values
        .iter()
        .map(|v| {
            assert_eq!(v.to_bits() & 0xFFFF, 0, "{v} is not a bf16 value");
            u64::from(v.to_bits() >> 16)
        })
        .collect();
    Arg::Buffer(Buffer::from_bits(Scalar::BF16, &bits))
}

/// A `half` buffer of `values`, which must be zero or normal halves exactly (11 significant
/// bits, exponents -14..=15).
pub fn f16_buffer(values: &[f32]) -> Arg {
    let bits: Vec<u64> = values
        .iter()
        .map(|v| {
            let b = v.to_bits();
            let (sign, exp, mant) = ((b >> 16) & 0x8000, ((b >> 23) & 0xFF) as i32, b & 0x7F_FFFF);
            if *v == 0.0 {
                return u64::from(sign);
            }
            assert!(mant & 0x1FFF == 0 && (-14..=15).contains(&(exp - 127)), "{v} is not a normal half value");
            u64::from(sign | (((exp - 127 + 15) as u32) << 10) | (mant >> 13))
        })
        .collect();
    Arg::Buffer(Buffer::from_bits(Scalar::F16, &bits))
}

/// `x` rounded to bf16, to nearest even (what an input generator does once).
pub fn to_bf16(x: f32) -> f32 {
    let b = x.to_bits();
    let rounded = b.wrapping_add(0x7FFF + ((b >> 16) & 1)) & 0xFFFF_0000;
    f32::from_bits(rounded)
}

/// `x` rounded to tf32 (10 mantissa bits), to nearest with ties away from zero: `cvt.rna`.
pub fn to_tf32(x: f32) -> f32 {
    f32::from_bits(x.to_bits().wrapping_add(0x1000) & !0x1FFF)
}

/// `C = alpha * A @ B + beta * C` for row-major `A` (m x k), `B` (k x n), `C` (m x n),
/// accumulated in f64 in k order and rounded once.
pub fn sgemm((m, n, k): (usize, usize, usize), alpha: f32, a: &[f32], b: &[f32], beta: f32, c: &[f32]) -> Vec<f32> {
    let mut out = c.to_vec();
    for i in 0..m {
        for j in 0..n {
            let acc: f64 = (0..k).map(|kk| f64::from(a[i * k + kk]) * f64::from(b[kk * n + j])).sum();
            out[i * n + j] = (f64::from(alpha) * acc + f64::from(beta) * f64::from(c[i * n + j])) as f32;
        }
    }
    out
}

/// The reference of a tf32 tensor-core product `A @ B` in steps of 8 along k: inputs rounded
/// to tf32 (round to nearest, ties away), products exact, each step's sum accumulated in f64
/// onto the f32 accumulator and rounded to f32 once, as `mma.sync` m16n8k8 does.
pub fn tf32_gemm(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
    tf32_gemm_by(m, n, k, a, b, to_tf32)
}

/// `f32` to tf32 by dropping the low 13 mantissa bits (toward zero), as the tensor cores
/// take the floats `intrinsic.mma_tf32_rz` and `wgmma_tf32` give them.
pub fn truncate_tf32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & !0x1FFF)
}

/// [`tf32_gemm`] with the inputs converted to tf32 by `conv`.
pub fn tf32_gemm_by(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], conv: fn(f32) -> f32) -> Vec<f64> {
    let to_tf32 = conv;
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for k0 in (0..k).step_by(8) {
                let mut s = f64::from(acc);
                for kk in k0..k0 + 8 {
                    s += f64::from(to_tf32(a[i * k + kk])) * f64::from(to_tf32(b[kk * n + j]));
                }
                acc = s as f32;
            }
            out[i * n + j] = f64::from(acc);
        }
    }
    out
}

/// `sum |a * b|` over k for each element of `A @ B`: the scale of its rounding error.
pub fn abs_product_sums(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|kk| f64::from(a[i * k + kk] * b[kk * n + j]).abs()).sum();
        }
    }
    out
}

/// Asserts a tensor-core result against [`tf32_gemm`]: each element within 1e-6 of its
/// `sum |a * b|` (the order of the hardware's internal sum is unspecified).
#[track_caller]
pub fn assert_tf32_gemm(got: &[f32], m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) {
    let want = tf32_gemm(m, n, k, a, b);
    let scale = abs_product_sums(m, n, k, a, b);
    for i in 0..m * n {
        let tol = 1e-6 * scale[i] + 1e-7;
        assert!(
            (f64::from(got[i]) - want[i]).abs() <= tol,
            "C[{}, {}]: got {}, want {} (tolerance {tol})",
            i / n,
            i % n,
            got[i],
            want[i]
        );
    }
}

/// Asserts `got == want` element by element (for floats: by value, so the inputs must make
/// the result exact), naming the first mismatches.
#[track_caller]
pub fn assert_same<T: PartialEq + Debug>(what: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    if !bad.is_empty() {
        let shown: Vec<String> =
            bad.iter().take(8).map(|&i| format!("[{i}] got {:?}, want {:?}", got[i], want[i])).collect();
        panic!("{what}: {} of {} elements differ: {}", bad.len(), got.len(), shown.join("; "));
    }
}

/// Asserts `|got - want| <= rel * |want| + abs` element by element.
#[track_caller]
pub fn assert_close(what: &str, got: &[f32], want: &[f64], rel: f64, abs: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let within = |i: usize| (f64::from(got[i]) - want[i]).abs() <= rel * want[i].abs() + abs;
    let bad: Vec<usize> = (0..got.len()).filter(|&i| !within(i)).collect();
    if !bad.is_empty() {
        let shown: Vec<String> =
            bad.iter().take(8).map(|&i| format!("[{i}] got {:?}, want {:?}", got[i], want[i])).collect();
        panic!(
            "{what}: {} of {} elements are off by more than {rel} * |want| + {abs}: {}",
            bad.len(),
            got.len(),
            shown.join("; ")
        );
    }
}
