//! The CUDA printer's names: every Prism identifier becomes a C++ name nvcc accepts and
//! that hides nothing the printed code uses (docs/cuda.md, "Names"). Review R39 found
//! programs `prism check` accepts whose CUDA nvcc refused: variables named like C++
//! keywords (`static_cast`), like macros of the headers nvcc includes (`INT_MAX` expanded
//! to `0x7fffffff`), like the math functions the printer calls (`sqrtf`), a function named
//! like a printer temporary (`t11`), a kernel named like a C library function (`expf`, an
//! `extern "C"` clash), and parameters that sanitise to one name (`new`, `new_`).
//!
//! Two checks with nvcc: the program of `tests/ui/accept/rules/cpp_names.prism`, which
//! holds one of each, compiles with its host launchers to an object; and every macro the
//! prelude's headers define (`nvcc -E -dM`, which differs between hosts and CUDA versions)
//! is a name `analysis::sanitize` renames, so no Prism identifier can be one.

// `run_with_tools`, for the one-trial harnesses, is not used here.
#[allow(dead_code)]
mod common;

use prism_gpu::toolchain::{self, Emit};

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    common::run_trials(
        toolchain::find_nvcc(),
        "nvcc",
        "run scripts/install-nvcc.sh, or set PRISM_NVCC",
        vec![
            ("unusual_source_names_compile", Box::new(|nvcc: PathBuf| unusual_names_compile(&nvcc))),
            ("every_header_macro_is_renamed", Box::new(|nvcc: PathBuf| every_macro_is_renamed(&nvcc))),
        ],
    )
}

fn tmp() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("names");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    Ok(dir)
}

fn unusual_names_compile(nvcc: &Path) -> Result<(), String> {
    let rel = "rules/cpp_names";
    let out = common::emit_with_host(rel)?;
    // The kernels' symbols are not the C library's `expf` and `atan2f`; the launcher's
    // parameters avoid the map's dimension parameters.
    for want in [
        "extern \"C\" __global__ void __launch_bounds__(64) expf_(",
        "__global__ void atan2f_(",
        "unsigned long long dims_rows, unsigned long long dims_cols, int dims_rows_, int err,",
    ] {
        if !out.text.contains(want) {
            return Err(format!("no `{want}` in\n{}", out.text));
        }
    }
    let cu = tmp()?.join("cpp_names.cu");
    std::fs::write(&cu, &out.text).map_err(|e| e.to_string())?;
    let built = toolchain::compile(nvcc, &cu, &cu.with_extension("o"), "sm_90a", Emit::Object)
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    if built.ok { Ok(()) } else { Err(format!("nvcc refuses the CUDA of {rel}:\n{}", built.log)) }
}

fn every_macro_is_renamed(nvcc: &Path) -> Result<(), String> {
    let includes: String =
        prism_cuda::prelude::PRELUDE.lines().filter(|l| l.starts_with("#include")).map(|l| format!("{l}\n")).collect();
    let cu = tmp()?.join("macros.cu");
    std::fs::write(&cu, includes).map_err(|e| e.to_string())?;
    let out = Command::new(nvcc)
        .args(["-arch=sm_90a", "-E", "-Xcompiler", "-dM"])
        .arg(&cu)
        .output()
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    if !out.status.success() {
        return Err(format!("nvcc -E -dM failed:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .map(|l| l.split(|c: char| c == '(' || c.is_whitespace()).next().unwrap_or(""))
        // Names a Prism identifier could be: `sanitize` renames every name with `__` or a
        // leading `_` anyway.
        .filter(|n| {
            n.starts_with(|c: char| c.is_ascii_alphabetic())
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !n.contains("__")
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.len() < 100 {
        return Err(format!("only {} macros: is the output of `nvcc -E -dM` as expected?\n{text}", names.len()));
    }
    let kept: Vec<&str> = names.iter().copied().filter(|n| prism_cuda::analysis::sanitize(n) == *n).collect();
    if kept.is_empty() {
        Ok(())
    } else {
        Err(format!("macros a Prism variable could be named and the printer would not rename: {kept:?}"))
    }
}
