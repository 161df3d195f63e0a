//! NVRTC (in-process, `prism_gpu::nvrtc`) compiles what nvcc compiles, and says what nvcc
//! says:
//!
//! - the corpus: the same translation units as the nvcc test (`corpus_jobs`), to cubins for
//!   `sm_80` and `sm_90a`, with zero errors and exactly the warnings nvcc gives
//!   (`tests/nvcc_warnings.txt`, which the nvcc test snapshots);
//! - PTX for the virtual architecture;
//! - a compile error through `device::compile_with`: `DeviceError::Compile` with the same
//!   `kernel.cu(LINE): error: ...` line as nvcc's (compared when nvcc is there too);
//! - a whole program as `prism run --device cuda` compiles it, to an ELF cubin.
//!
//! NVRTC is found as `prism run` finds it (`$PRISM_NVRTC`, the cache of
//! `scripts/install-nvrtc.sh`, ...). Without it the tests are reported as ignored with a line
//! on stderr; under CI (`CI` set) they fail: `.ci/run` installs NVRTC first.

// `run_with_tools`, for the one-trial harnesses, is not used here.
#[allow(dead_code)]
mod common;
mod corpus_jobs;

use prism_gpu::device::{self, DeviceError};
use prism_gpu::nvrtc::{self, Image, Nvrtc};
use prism_gpu::toolchain::{self, Compiler};
use std::path::{Path, PathBuf};

fn main() {
    let trials: Vec<common::Trial<&'static Nvrtc>> = vec![
        ("nvrtc_compiles_the_corpus_with_nvccs_warnings", Box::new(corpus)),
        ("nvrtc_makes_ptx_for_the_virtual_architecture", Box::new(ptx)),
        ("nvrtc_compile_errors_read_as_nvccs", Box::new(errors)),
        ("nvrtc_compiles_a_program_as_prism_run_does", Box::new(program)),
    ];
    let loaded = nvrtc::load();
    if let Err(e) = &loaded {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("{e}");
        }
    }
    common::run_trials(
        loaded.ok(),
        "NVRTC",
        "run scripts/install-nvrtc.sh, or set PRISM_NVRTC to libnvrtc.so.13",
        trials,
    )
}

fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn corpus(nv: &'static Nvrtc) -> Result<(), String> {
    let tmp = scratch("nvrtc-corpus");
    let jobs = corpus_jobs::jobs(&tmp);
    let start = std::time::Instant::now();
    let results = corpus_jobs::on_two_threads(&jobs, |j| {
        nv.compile(&j.text, &j.file.display().to_string(), j.arch, Image::Cubin)
    });
    let elapsed = start.elapsed();
    let mut failures = Vec::new();
    let mut logs = Vec::new();
    for (j, r) in &results {
        match r {
            Ok(c) if c.ok && c.image.starts_with(b"\x7fELF") => logs.push(c.log.as_str()),
            Ok(c) if c.ok => failures.push(format!("NVRTC gave no ELF cubin for {}", j.what)),
            Ok(c) => failures.push(format!("NVRTC failed on {}:\n{}", j.what, c.log)),
            Err(e) => failures.push(format!("NVRTC failed on {}: {e}", j.what)),
        }
    }
    if !failures.is_empty() {
        return Err(failures.join("\n\n"));
    }
    let got = corpus_jobs::warnings(&tmp, logs);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvcc_warnings.txt");
    let record = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let nvcc: std::collections::BTreeSet<String> =
        record.lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect();
    if got != nvcc {
        let only = |a: &std::collections::BTreeSet<String>, b: &std::collections::BTreeSet<String>| {
            a.difference(b).cloned().collect::<Vec<_>>().join("\n  ")
        };
        return Err(format!(
            "NVRTC's warnings differ from nvcc's ({}):\nonly NVRTC:\n  {}\nonly nvcc:\n  {}",
            path.display(),
            only(&got, &nvcc),
            only(&nvcc, &got)
        ));
    }
    #[allow(clippy::print_stderr)]
    {
        eprintln!("{} compiled {} translation units to cubins in {elapsed:.1?}", nv.describe(), jobs.len());
    }
    Ok(())
}

/// A small kernel in the shape `prism build` prints.
const SMALL: &str = "extern \"C\" __global__ void k(float* x)\n{\n    x[threadIdx.x] = 2.0f * x[threadIdx.x];\n}\n";

fn ptx(nv: &'static Nvrtc) -> Result<(), String> {
    let c = nv.compile(SMALL, "small.cu", "sm_80", Image::Ptx)?;
    let text = String::from_utf8(c.image).map_err(|e| e.to_string())?;
    if !(c.ok && text.contains(".target sm_80") && text.contains(".entry k(")) {
        return Err(format!("expected PTX for sm_80 with entry `k`:\n{}\n{text}", c.log));
    }
    Ok(())
}

/// The lines of a compile log that say `error`, with the work directory's path removed.
fn error_lines(log: &str, work: &Path) -> Vec<String> {
    let prefix = format!("{}/", work.display());
    log.lines().filter(|l| l.contains("error")).map(|l| l.replace(&prefix, "")).collect()
}

fn errors(_: &'static Nvrtc) -> Result<(), String> {
    let bad = format!("{SMALL}__device__ int f() {{ return undefined_name; }}\n");
    let work = scratch("nvrtc-errors");
    let nvrtc_log = match device::compile_with(&bad, "sm_80", &work, Compiler::Nvrtc) {
        Err(DeviceError::Compile(log)) => log,
        other => return Err(format!("expected a compile error, got {other:?}")),
    };
    let expected = "kernel.cu(5): error: identifier \"undefined_name\" is undefined";
    let lines = error_lines(&nvrtc_log, &work);
    if !lines.iter().any(|l| l == expected) {
        return Err(format!("expected `{expected}` in NVRTC's log:\n{nvrtc_log}"));
    }
    // The same message as nvcc's, when nvcc is here to compare with.
    if toolchain::find_nvcc().is_some() {
        let nvcc_log = match device::compile_with(&bad, "sm_80", &work, Compiler::Nvcc) {
            Err(DeviceError::Compile(log)) => log,
            other => return Err(format!("expected a compile error from nvcc, got {other:?}")),
        };
        let nvcc_lines = error_lines(&nvcc_log, &work);
        if !nvcc_lines.iter().any(|l| l == expected) {
            return Err(format!("nvcc's log differs from NVRTC's:\nnvcc:\n{nvcc_log}\nNVRTC:\n{nvrtc_log}"));
        }
    }
    Ok(())
}

fn program(_: &'static Nvrtc) -> Result<(), String> {
    let root = prism_test::repo_root();
    let rel = "examples/mma_tf32.prism";
    let src = std::fs::read_to_string(root.join(rel)).map_err(|e| e.to_string())?;
    let synced = prism_test::synced(rel, &src, &prism_driver::Options::default())?;
    let out = prism_cuda::emit(&synced, &prism_cuda::Options::default());
    let work = scratch("nvrtc-program");
    let cubin = device::compile_with(&out.text, "sm_90a", &work, Compiler::Nvrtc).map_err(|e| e.to_string())?;
    let bytes = std::fs::read(&cubin).map_err(|e| e.to_string())?;
    if !bytes.starts_with(b"\x7fELF") {
        return Err(format!("{} is not an ELF cubin", cubin.display()));
    }
    Ok(())
}
