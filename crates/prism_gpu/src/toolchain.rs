//! Finding `nvcc` and compiling generated CUDA with it, and choosing between nvcc and NVRTC
//! ([`Compiler`]) for running on a GPU.
//!
//! The search order is `$PRISM_NVCC`, then `nvcc` on `PATH`, then the cache
//! `${PRISM_CACHE:-$HOME/.cache/prism}/nvcc` that `scripts/install-nvcc.sh` installs NVIDIA's
//! PyPI wheels into. Every compile passes `--fmad=false`, so nvcc contracts nothing on its
//! own: the products Prism's contraction rule fuses are already `fmaf` calls in the text, and
//! the simulator rounds exactly as the GPU does. `cuobjdump` (for the SASS gate) is looked for
//! beside nvcc.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What nvcc produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// PTX text.
    Ptx,
    /// A cubin for one architecture.
    Cubin,
    /// A host object file (device code and host code, such as `--emit-host` launchers).
    Object,
    /// A linked host program (with the CUDA runtime linked statically, so it runs where the
    /// toolchain was installed from wheels and no system CUDA is).
    Executable,
}

/// The cache directory of the install script.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(c) = std::env::var_os("PRISM_CACHE").filter(|c| !c.is_empty()) {
        return Some(PathBuf::from(c));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/prism"))
}

/// Where `nvcc` is, if anywhere.
pub fn find_nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PRISM_NVCC").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let c = dir.join("nvcc");
            if c.is_file() {
                return Some(c);
            }
        }
    }
    let cached = cache_dir()?.join("nvcc/nvidia/cu13/bin/nvcc");
    cached.is_file().then_some(cached)
}

/// Where `cuobjdump` is: beside nvcc (the install script puts it there), or on `PATH`.
pub fn find_cuobjdump() -> Option<PathBuf> {
    let beside = find_nvcc().and_then(|n| n.parent().map(|d| d.join("cuobjdump"))).filter(|p| p.is_file());
    beside.or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join("cuobjdump")).find(|p| p.is_file())
    })
}

/// The message for a missing nvcc.
pub const NO_NVCC: &str =
    "nvcc not found: set PRISM_NVCC, put nvcc on PATH, or run scripts/install-nvcc.sh (installs it from PyPI)";

/// The result of one nvcc run.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// Whether nvcc succeeded.
    pub ok: bool,
    /// What it printed (warnings, errors).
    pub log: String,
}

/// The flags every compile uses, nvcc's and NVRTC's alike: no contraction (see above), C++17,
/// and line information for profilers and `compute-sanitizer`.
pub const COMMON_FLAGS: [&str; 3] = ["--fmad=false", "-std=c++17", "-lineinfo"];

/// The flags every nvcc compile uses. The target is named in the `-gencode` form: with the
/// `-arch=sm_90a` shorthand, nvcc 13.0 (the GPU machines') also runs a plain `sm_90` pass
/// that rejects wgmma and setmaxnreg; `-gencode=arch=compute_90a,code=sm_90a` assembles
/// with every version.
pub fn flags(arch: &str) -> Vec<String> {
    let target = match arch.strip_prefix("sm_") {
        Some(num) => format!("-gencode=arch=compute_{num},code={arch}"),
        None => format!("-arch={arch}"),
    };
    let mut f = vec![target];
    f.extend(COMMON_FLAGS.iter().map(|s| s.to_string()));
    f
}

/// Which compiler turns generated CUDA into a cubin to run (`prism run --device cuda
/// --compiler`, `$PRISM_COMPILER`, `device::launch`). `prism build --ptx/--cubin` always
/// uses nvcc.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compiler {
    /// nvcc when it is found, else NVRTC.
    #[default]
    Auto,
    /// nvcc (a process per compile).
    Nvcc,
    /// NVRTC, in-process (`crate::nvrtc`).
    Nvrtc,
}

impl Compiler {
    /// The environment variable that chooses the compiler when the command line does not.
    pub const ENV: &str = "PRISM_COMPILER";

    /// `$PRISM_COMPILER`, or [`Compiler::Auto`] when unset or empty.
    pub fn from_env() -> Result<Compiler, String> {
        match std::env::var(Self::ENV) {
            Ok(v) if !v.is_empty() => v.parse().map_err(|e| format!("{}: {e}", Self::ENV)),
            Err(std::env::VarError::NotUnicode(v)) => {
                Err(format!("{}={}: expected auto, nvcc or nvrtc", Self::ENV, v.to_string_lossy()))
            }
            _ => Ok(Compiler::Auto),
        }
    }
}

impl std::str::FromStr for Compiler {
    type Err = String;
    fn from_str(s: &str) -> Result<Compiler, String> {
        match s {
            "auto" => Ok(Compiler::Auto),
            "nvcc" => Ok(Compiler::Nvcc),
            "nvrtc" => Ok(Compiler::Nvrtc),
            _ => Err(format!("`{s}` is not a compiler (expected auto, nvcc or nvrtc)")),
        }
    }
}

impl std::fmt::Display for Compiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Compiler::Auto => "auto",
            Compiler::Nvcc => "nvcc",
            Compiler::Nvrtc => "nvrtc",
        })
    }
}

/// Compiles the `.cu` file at `input` to `output`.
pub fn compile(nvcc: &Path, input: &Path, output: &Path, arch: &str, emit: Emit) -> std::io::Result<Compiled> {
    let mut cmd = Command::new(nvcc);
    cmd.args(flags(arch));
    cmd.arg(match emit {
        Emit::Ptx => "-ptx",
        Emit::Cubin => "-cubin",
        Emit::Object => "-c",
        Emit::Executable => "-cudart=static",
    });
    cmd.arg("-o").arg(output).arg(input);
    let out = cmd.output()?;
    let mut log = String::from_utf8_lossy(&out.stdout).into_owned();
    log.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok(Compiled { ok: out.status.success(), log })
}
