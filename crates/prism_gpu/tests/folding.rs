//! nvcc does not evaluate Prism's float arithmetic at compile time. Where it knows the
//! operands (a variable holding a constant, a device function inlined with one, an unrolled
//! counter) nvcc folds C++'s `/`, `fminf` and `fmaxf` with the host's rules: review R72
//! (2026-12-03) found `0.0 / 0.0` of two variables folded to the x86 NaN `0xFFC00000`, and
//! `fminf(+0, -0)` to `+0`, where the GPU at run time and the simulator give `0x7FFFFFFF`
//! and `-0`. The backend prints the rounding intrinsics and PTX's `min`/`max` instead
//! (docs/cuda.md, "Float operations nvcc cannot fold").
//!
//! The check: the PTX of `tests/ui/accept/rules/fold_agrees_with_run_time.prism`, whose
//! `floats` kernel makes NaNs and zeros of both signs from variables, holds no constant with
//! the bits of a host NaN (`0xFFC00000`, `0x7FC00000`, or the `double` ones), and its
//! `min`/`max` are left to PTX's `min`/`max`. With `fminf` and `/` printed, the PTX held
//! `mov.u32 %r4, -4194304` and no `min.f32` at all.

mod common;

use prism_gpu::toolchain::{self, Emit};
use std::path::{Path, PathBuf};

fn main() {
    common::run_with_tools("nvcc_folds_no_float_operation", toolchain::find_nvcc(), "nvcc", |nvcc: PathBuf| {
        no_folding(&nvcc)
    })
}

fn no_folding(nvcc: &Path) -> Result<(), String> {
    let rel = "rules/fold_agrees_with_run_time";
    let out = common::emit_accepted(rel, |_| prism_cuda::Options {
        kernels: Some(vec!["floats".to_string()]),
        ..prism_cuda::Options::default()
    })?;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("folding");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let cu = dir.join("floats.cu");
    std::fs::write(&cu, &out.text).map_err(|e| e.to_string())?;
    let ptx = cu.with_extension("ptx");
    let built =
        toolchain::compile(nvcc, &cu, &ptx, "sm_90a", Emit::Ptx).map_err(|e| format!("cannot run nvcc: {e}"))?;
    if !built.ok {
        return Err(format!("nvcc refuses the CUDA of {rel}:\n{}", built.log));
    }
    let text = std::fs::read_to_string(&ptx).map_err(|e| e.to_string())?;
    // The host's NaNs as PTX writes them: float and double constants, and the words of a
    // `bits32` as signed decimals.
    let host_nans =
        ["0fFFC00000", "0f7FC00000", "0dFFF8000000000000", "0d7FF8000000000000", " -4194304;", " 2143289344;"];
    for nan in host_nans {
        if let Some(line) = text.lines().find(|l| l.contains(nan)) {
            return Err(format!("nvcc folded a NaN with the host's bits: `{}`\n{text}", line.trim()));
        }
    }
    let min_max = text.lines().filter(|l| l.contains("min.f32") || l.contains("max.f32")).count();
    if min_max < 4 {
        return Err(format!("only {min_max} `min.f32`/`max.f32` left: nvcc folded the others\n{text}"));
    }
    Ok(())
}
