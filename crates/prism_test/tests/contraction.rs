//! Floating-point contraction (`prism_ir::contract`, docs/language.md §3): a `float` product
//! that feeds an addition is one fused multiply-add in the simulator and in the CUDA the
//! backend prints, and `contract: false` (`--fp-contract off`) gives two roundings in both.
//! The inputs make the difference visible: for `x = 1 + 2^-12`, `x * x - 1` is `2^-11`
//! with two roundings and `2^-11 + 2^-24` with one.

use prism_interp::{Arg, Config, Module};

const SRC: &str = "\
@prism(\"global\")
@requires(grid[1], block[1], thread[1])
def k(x : ptr(const(float)), y : ptr(const(float)), out : ptr(float), acc : ptr(float)):
    i : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda j: i + j) as o:
        with partition(acc, p=thread[1], f=lambda j: i + j) as a:
            with group(thread[1]):
                o[0] = x[i] * x[i] - 1.0
                s : float = y[i]
                s += x[i] * x[i]
                s -= y[i] * 3.0
                a[0] = s
";

fn synced(contract: bool) -> prism_driver::Synced {
    let opts = prism_driver::Options { contract, ..prism_driver::Options::default() };
    let (_, problems, synced) = prism_driver::compile_text("contraction.prism", SRC, &opts);
    synced.unwrap_or_else(|| panic!("does not compile: {:?}", problems.diagnostics()))
}

fn run(contract: bool, x: &[f32], y: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let m = Module::new(&synced(contract));
    let n = x.len();
    let args = vec![Arg::buffer(x), Arg::buffer(y), Arg::buffer(&vec![0f32; n]), Arg::buffer(&vec![0f32; n])];
    let out = m.launch("k", 1, n as u32, &args, Config::default()).expect("launches");
    assert!(out.is_clean(), "{:?}", out.reports);
    let get = |a: &Arg| a.as_buffer().expect("a buffer").to_vec::<f32>().expect("float");
    (get(&args[2]), get(&args[3]))
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

#[test]
fn a_product_feeding_an_addition_is_rounded_once_unless_contraction_is_off() {
    let x: Vec<f32> = vec![1.0 + 2f32.powi(-12), 1.1, -3.3, 0.1, 7.77, 1e-3, 12345.678, -0.5];
    let y: Vec<f32> = vec![0.3, -2.2, 1e-7, 5.5, 0.1, -9.0, 3.0, 2.5];
    let (o, a) = run(true, &x, &y);
    let want_o: Vec<f32> = x.iter().map(|v| v.mul_add(*v, -1.0)).collect();
    let want_a: Vec<f32> = x.iter().zip(&y).map(|(x, y)| (-y).mul_add(3.0, x.mul_add(*x, *y))).collect();
    assert_eq!(bits(&o), bits(&want_o));
    assert_eq!(bits(&a), bits(&want_a));
    let (o2, a2) = run(false, &x, &y);
    let plain_o: Vec<f32> = x.iter().map(|v| v * v - 1.0).collect();
    let plain_a: Vec<f32> = x.iter().zip(&y).map(|(x, y)| (y + x * x) - y * 3.0).collect();
    assert_eq!(bits(&o2), bits(&plain_o));
    assert_eq!(bits(&a2), bits(&plain_a));
    // The first input tells the two apart, so this test can fail.
    assert_eq!(o[0], 2f32.powi(-11) + 2f32.powi(-24));
    assert_eq!(o2[0], 2f32.powi(-11));
}

#[test]
fn the_cuda_backend_prints_the_fusion_the_simulator_runs() {
    let fused = prism_cuda::emit(&synced(true), &prism_cuda::Options::default()).text;
    let plain = prism_cuda::emit(&synced(false), &prism_cuda::Options::default()).text;
    // A fused product prints as `__fmaf_rn`, which nvcc neither folds nor splits
    // (docs/cuda.md, "Float operations nvcc cannot fold").
    let count =
        |t: &str| t.matches("__fmaf_rn(").count() - prism_cuda::prelude::prelude_for(t).matches("__fmaf_rn(").count();
    assert_eq!(count(&fused), 3, "{fused}");
    assert_eq!(count(&plain), 0, "{plain}");
}
