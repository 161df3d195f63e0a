//! Every kernel of every accepted program, through the whole pipeline, runs without a panic
//! with arbitrary arguments, whatever it reports.

use prism_interp::{Arg, Buffer, Config, Module, ParamKind};
use prism_types::ty::Scalar;

fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("corpus dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "prism") {
            out.push(p);
        }
    }
}

#[test]
fn every_accepted_kernel_runs_without_panicking() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ui/accept");
    let mut all = Vec::new();
    files(&root, &mut all);
    all.sort();
    let mut ran = 0;
    for path in all {
        let src = std::fs::read_to_string(&path).expect("readable");
        let name = path.display().to_string();
        let (_, _, synced) = prism_driver::compile_text(&name, &src, &prism_driver::Options::default());
        let Some(synced) = synced else { continue };
        let m = Module::new(&synced);
        for k in m.kernels() {
            let mut t = k.t_mult;
            while t % 32 != 0 && t < 1024 {
                t += k.t_mult;
            }
            if t > 1024 || k.launch_bounds.is_some_and(|lb| t > lb) {
                t = k.t_mult;
            }
            let g = k.b_mult * 2;
            let args: Vec<Arg> = k
                .params
                .iter()
                .map(|p| match p.kind {
                    ParamKind::Scalar(s) if s.is_float() => Arg::Scalar(s, prism_interp::value::from_f64(s, 1.0)),
                    ParamKind::Scalar(Scalar::Bool) => Arg::Scalar(Scalar::Bool, 1),
                    ParamKind::Scalar(s) => Arg::Scalar(s, 16),
                    ParamKind::Pointer(s) => Arg::Buffer(Buffer::zeroed(s, 1 << 14)),
                    ParamKind::Opaque => Arg::Scalar(Scalar::U64, 0),
                    // A 128 x 128 array: boxes may reach past it, which reads zeros.
                    ParamKind::TensorMap(m) => {
                        let dims: Vec<u64> = if m.rank == 3 { vec![2, 128, 128] } else { vec![128, 128] };
                        let n = dims.iter().product::<u64>() as usize;
                        Arg::Tensor { buffer: Buffer::zeroed(m.elem, n), dims }
                    }
                })
                .collect();
            let cfg = Config { fuel: 2_000_000, ..Config::default() };
            let name = format!("{}::{}", path.display(), k.name);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                m.launch(&k.name, g as u32, t as u32, &args, cfg)
            }));
            match r {
                // Whatever the arbitrary arguments make the kernel report is fine here.
                Ok(Ok(_)) => ran += 1,
                Ok(Err(_)) => {}
                Err(_) => panic!("the simulator panicked on {name}"),
            }
        }
    }
    assert!(ran > 50, "only {ran} kernels ran");
}
