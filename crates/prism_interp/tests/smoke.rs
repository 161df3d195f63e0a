//! First end-to-end runs: source -> IR -> simulator.

use prism_interp::{Arg, Config, Module};

fn module(path: &str) -> Module {
    let src = std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).expect("readable");
    let (_, _, synced) = prism_driver::compile_text(path, &src, &prism_driver::Options::default());
    Module::new(&synced.unwrap_or_else(|| panic!("{path} has errors")))
}

#[test]
fn saxpy() {
    let m = module("tests/ui/accept/kernels/01_saxpy_grid_stride.prism");
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| 1.0 + i as f32 * 0.5).collect();
    let args = [Arg::value(n as i32), Arg::value(2.0f32), Arg::buffer(&x), Arg::buffer(&y)];
    let out = m.launch("saxpy", 3, 64, &args, Config::default()).expect("valid launch");
    assert!(out.is_clean(), "{:?}", out.reports);
    let got = args[3].as_buffer().expect("buffer").to_vec::<f32>().expect("f32");
    for i in 0..n {
        assert_eq!(got[i], 2.0 * x[i] + y[i], "element {i}");
    }
}

#[test]
fn sgemm_naive() {
    let m = module("tests/ui/accept/kernels/03_sgemm_1_naive.prism");
    let (mm, nn, kk) = (40usize, 36usize, 20usize);
    let a: Vec<f32> = (0..mm * kk).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..kk * nn).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
    let c: Vec<f32> = (0..mm * nn).map(|i| (i % 3) as f32).collect();
    let args = [
        Arg::value(mm as i32),
        Arg::value(nn as i32),
        Arg::value(kk as i32),
        Arg::value(1.5f32),
        Arg::buffer(&a),
        Arg::buffer(&b),
        Arg::value(0.5f32),
        Arg::buffer(&c),
    ];
    let blocks = (mm.div_ceil(32) * nn.div_ceil(32)) as u32;
    let out = m.launch("sgemm_naive", blocks, 1024, &args, Config::default()).expect("valid launch");
    assert!(out.is_clean(), "{:?}", out.reports);
    let got = args[7].as_buffer().expect("buffer").to_vec::<f32>().expect("f32");
    for i in 0..mm {
        for j in 0..nn {
            let mut acc = 0f32;
            for k in 0..kk {
                acc += a[i * kk + k] * b[k * nn + j];
            }
            assert_eq!(got[i * nn + j], 1.5 * acc + 0.5 * c[i * nn + j], "C[{i}][{j}]");
        }
    }
}

/// The simulator runs the optimised IR, the same the CUDA backend prints: for a program
/// whose barrier the optimiser removes (a written `__syncthreads()` right after another),
/// the module holds the pipeline's IR with one barrier fewer than inference left.
#[test]
fn the_simulator_runs_the_optimised_ir() {
    let path = "tests/ui/accept/rules/corner_elif_chains.prism";
    let src = std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).expect("readable");
    let (_, _, synced) = prism_driver::compile_text(path, &src, &prism_driver::Options::default());
    let synced = synced.expect("it checks");
    let counts = synced.barrier_counts();
    assert!(counts.after < counts.before, "{counts:?}");
    let m = Module::new(&synced);
    assert_eq!(prism_ir::print(&m.ir), prism_ir::print(synced.ir()));
    let barriers = |p: &prism_ir::ir::Program| {
        let mut n = 0;
        for f in &p.functions {
            f.body.walk(&mut |k| n += usize::from(matches!(k, prism_ir::ir::InstKind::Barrier { .. })));
        }
        n
    };
    assert_eq!(barriers(&m.ir), counts.after);
}
