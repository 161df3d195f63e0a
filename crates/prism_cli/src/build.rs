//! `prism build FILE [-o OUT.cu] [--arch sm_80|sm_90a|...] [--ptx|--cubin] [--emit-host]`
//!
//! Checks the file, infers synchronisation and writes the CUDA C++ the backend generates
//! (`docs/cuda.md`). With `--ptx` or `--cubin` it also runs nvcc (`$PRISM_NVCC`, `nvcc` on
//! `PATH`, or the cache `scripts/install-nvcc.sh` fills) and writes `OUT.ptx`/`OUT.cubin`.
//! `-o` must name a `.cu` file (or a device or pipe, without `--ptx`/`--cubin`): any other
//! name is a usage error before anything is compiled, never a file of the wrong kind.
//! Exit codes as `prism check`: 1 for compile errors, 2 for usage, IO or nvcc failures.
//! Every output is written to a temporary file and renamed into place, so a failure never
//! leaves a partial file.

use crate::MessageFormat;
use crate::check::{emit, read_source, target};
use crate::files::{temp_path, write_atomic};
use crate::usage as fail;
use prism_diag::Problems;
use prism_span::SourceMap;
use std::path::{Path, PathBuf};

/// Arguments of `prism build`.
#[derive(clap::Args)]
pub struct BuildArgs {
    /// The `.prism` file.
    pub file: String,
    /// Where to write the CUDA C++: a `.cu` file (default: the input with `.cu`), or a
    /// device or pipe (`/dev/null`). `--ptx`/`--cubin` write `OUT.ptx`/`OUT.cubin` beside it.
    #[arg(short = 'o', long = "output", value_name = "OUT.cu")]
    pub output: Option<String>,
    /// Also compile to PTX with nvcc (`OUT.ptx`).
    #[arg(long, conflicts_with = "cubin")]
    pub ptx: bool,
    /// Also compile to a cubin with nvcc (`OUT.cubin`).
    #[arg(long)]
    pub cubin: bool,
    /// Append host launchers (one C++ function per kernel that checks the launch).
    #[arg(long)]
    pub emit_host: bool,
    /// Keep every barrier inference inserted (no barrier optimisation).
    #[arg(long)]
    pub no_opt: bool,
    #[command(flatten)]
    pub common: crate::check::Common,
}

pub fn run(a: &BuildArgs) -> u8 {
    let target = match target(&a.common.arch, a.common.smem_limit) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    let cu = match &a.output {
        Some(o) => PathBuf::from(o),
        None => Path::new(&a.file).with_extension("cu"),
    };
    if let Err(e) = cuda_name(&cu, a) {
        return fail(&e);
    }
    let text = match read_source(&a.file) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    let mut map = SourceMap::default();
    let file = map.add(a.file.clone(), text.clone());
    let mut problems = Problems::default();
    let opts = prism_driver::Options {
        target,
        optimize: !a.no_opt,
        contract: a.common.fp_contract == crate::check::Switch::On,
        ..prism_driver::Options::default()
    };
    let synced = a.common.compile(&mut map, file, &opts, &mut problems);
    problems.sort();
    emit(&map, &problems, a.common.message_format, a.common.color);
    let Some(synced) = synced else {
        if a.common.message_format == MessageFormat::Human {
            errln!("error: `{}` has {} error(s); nothing was written", a.file, problems.error_count());
        }
        return 1;
    };
    let opts = prism_cuda::Options {
        file_name: Path::new(&a.file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        source: Some(text),
        extern_c: true,
        prelude: true,
        host: a.emit_host,
        kernels: None,
    };
    let out = prism_cuda::emit(&synced, &opts);
    if !out.errors.is_empty() {
        let mut p = Problems::default();
        for e in &out.errors {
            p.push(prism_diag::Diagnostic::error("cuda-unsupported", e.message.clone(), e.span));
        }
        emit(&map, &p, a.common.message_format, a.common.color);
        errln!("error: `{}` cannot be lowered to CUDA; nothing was written", a.file);
        return 1;
    }
    // Every output is checked before anything is written. `OUT.ptx`/`OUT.cubin` are named
    // after `-o` as written, not after the file a link to it names, and nvcc reads that name
    // (its `.cu` tells nvcc the language).
    let source = Path::new(&a.file);
    let real = match crate::files::output_path(&cu, &[source]) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let dest = if a.ptx || a.cubin {
        let dest = match crate::files::output_path(&cu.with_extension(if a.ptx { "ptx" } else { "cubin" }), &[source]) {
            Ok(p) => p,
            Err(e) => return fail(&e),
        };
        // wgmma and setmaxnreg exist only on the architecture-specific targets (`sm_90a`,
        // not `sm_90`): say so rather than let ptxas fail.
        if out.needs_sm90a && !(a.common.arch.starts_with("sm_") && a.common.arch.ends_with('a')) {
            return fail(&format!(
                "`{}` uses Hopper features (wgmma, setmaxnreg or TMA) that `{}` does not have; build with `--arch sm_90a`",
                a.file, a.common.arch
            ));
        }
        Some(dest)
    } else {
        None
    };
    if let Err(e) = write_atomic(&real, out.text.as_bytes()) {
        return fail(&e);
    }
    if a.common.message_format == MessageFormat::Human {
        errln!("wrote `{}`", real.display());
    }
    let Some(dest) = dest else {
        return 0;
    };
    let Some(nvcc) = prism_gpu::toolchain::find_nvcc() else {
        return fail(prism_gpu::toolchain::NO_NVCC);
    };
    let emit_kind = if a.ptx { prism_gpu::toolchain::Emit::Ptx } else { prism_gpu::toolchain::Emit::Cubin };
    let tmp = temp_path(&dest);
    let res = prism_gpu::toolchain::compile(&nvcc, &cu, &tmp, &a.common.arch, emit_kind);
    match res {
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            fail(&format!("cannot run `{}`: {e}", nvcc.display()))
        }
        Ok(c) if !c.ok => {
            let _ = std::fs::remove_file(&tmp);
            err!("{}", c.log);
            fail(&format!("nvcc failed on `{}`", cu.display()))
        }
        Ok(c) => {
            err!("{}", c.log);
            if let Err(e) = std::fs::rename(&tmp, &dest) {
                let _ = std::fs::remove_file(&tmp);
                return fail(&format!("cannot write `{}`: {e}", dest.display()));
            }
            if a.common.message_format == MessageFormat::Human {
                errln!("wrote `{}`", dest.display());
            }
            0
        }
    }
}

/// Checks that `-o` (or the default, the input with `.cu`) names a CUDA C++ file: it ends
/// in `.cu`, since that is what is written, nvcc chooses the language of `--ptx`/`--cubin`
/// by the extension, and anything else is a name the user meant for another file (`-o
/// x.cubin` would get C++ text, `-o other.prism` would replace a source). A device or FIFO
/// (`/dev/null`, a pipe) may have any name, but has no directory for `OUT.ptx`/`OUT.cubin`.
fn cuda_name(cu: &Path, a: &BuildArgs) -> Result<(), String> {
    let compiled = a.ptx || a.cubin;
    let shown = cu.display();
    if crate::files::is_special(cu) {
        if compiled {
            return Err(format!(
                "`-o {shown}` is not a regular file, so `--{}` has no place beside it for its output; name a `.cu` file",
                if a.ptx { "ptx" } else { "cubin" }
            ));
        }
        return Ok(());
    }
    match cu.extension().and_then(|e| e.to_str()) {
        Some("cu") => Ok(()),
        Some(ext @ ("ptx" | "cubin")) => Err(format!(
            "`-o {shown}` names the CUDA C++ file, which must end in `.cu`; for a {} write `-o {} --{ext}`, which writes `{}` beside it",
            if ext == "ptx" { "PTX file" } else { "cubin" },
            cu.with_extension("cu").display(),
            cu.display()
        )),
        _ => Err(format!("`-o {shown}` names the CUDA C++ file `prism build` writes, which must end in `.cu`")),
    }
}
