//! `prism._prism`, the native half of the Prism Python package (`python/prism/` is the
//! other half; `docs/python.md` is the user's guide).
//!
//! ```text
//! Prism text ──compile──> Program ──launch────────> simulator (prism_interp)
//!                             ├─────launch_cuda───> GPU, host arrays copied (prism_gpu::device)
//!                             └─────launch_device─> GPU, device pointers   (prism_gpu::pointers)
//! ```
//!
//! This layer is thin on purpose. It runs the one pipeline (`prism_driver::compile_with`)
//! and the one simulator, and hands back plain data: diagnostics and dynamic-check reports
//! as `prism_diag::render_json` lines with the rendered text, buffers as little-endian
//! bytes. The Python half turns those into exceptions (`prism.CompileError`,
//! `prism.KernelFault`) and writes results back into NumPy arrays, so this crate needs no
//! NumPy headers and builds against the stable ABI (one wheel for CPython 3.9 and later).
//!
//! Invariant: bad input from Python (wrong types, sizes, missing files, malformed source)
//! is a Python exception, never a panic. Arguments are checked here against the kernel's
//! signature before anything runs, each error naming the parameter: a value of the wrong
//! kind or element type is a `TypeError`, a value out of range or a launch of the wrong
//! shape a `ValueError`. A panic inside the compiler or the simulator would be a bug; it is
//! caught at this boundary and raised as `prism.InternalError`.

mod args;

use args::Marshalled;
use prism_diag::{Color, Diagnostic, Problems, render, render_json};
use prism_gpu::pointers::DeviceArg;
use prism_interp::{Arg, Checks, Config, KernelInfo, ParamKind};
use prism_ir::ir::Dim3;
use prism_span::SourceMap;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::panic::{AssertUnwindSafe, catch_unwind};

pyo3::create_exception!(
    _prism,
    DeviceError,
    PyRuntimeError,
    "A GPU launch could not happen or failed: no CUDA driver, no device, nvcc missing, or a driver error."
);
pyo3::create_exception!(
    _prism,
    InternalError,
    PyRuntimeError,
    "A bug in Prism (a panic in the compiler or the simulator); please report it with the program."
);

/// The native module.
#[pymodule]
fn _prism(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Program>()?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(std_modules, m)?)?;
    m.add_function(wrap_pyfunction!(driver_present, m)?)?;
    m.add("DeviceError", m.py().get_type::<DeviceError>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// A compiled program: the pipeline's output, ready for the simulator and the GPU, with
/// its sources for rendering reports.
#[pyclass(frozen, module = "prism._prism")]
struct Program {
    map: SourceMap,
    synced: prism_driver::Synced,
    module: prism_interp::Module,
}

/// What compiling gave: the program (`None` when there are errors), the diagnostics rendered
/// for people, and the same as JSON lines (`prism_diag::render_json`).
type Compiled = (Option<Program>, String, String);

/// A kernel's name, the file and line it is declared at, and its parameters as `(name,
/// kind, dtype)`.
type Signature = (String, String, u32, Vec<(String, &'static str, &'static str)>);

/// The contents of each array argument after a run (`None` for the other arguments).
type Buffers<'py> = Vec<Option<Bound<'py, PyBytes>>>;

/// Runs the whole pipeline on `text`, named `name` (a path: imports are looked for in its
/// directory, then in each of `include`; `prism.std.*` is bundled).
#[pyfunction]
#[pyo3(signature = (name, text, include = Vec::new(), arch = "sm_90a", smem_limit = None, fp_contract = true, defines = Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn compile(
    py: Python<'_>,
    name: String,
    text: String,
    include: Vec<String>,
    arch: &str,
    smem_limit: Option<u64>,
    fp_contract: bool,
    defines: Vec<String>,
) -> PyResult<Compiled> {
    let mut target = prism_types::Target::from_arch(arch).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown architecture `{arch}`; known: {}",
            prism_types::Target::KNOWN.join(", ")
        ))
    })?;
    if let Some(l) = smem_limit {
        target.smem_limit = l;
        target.smem_limit_overridden = true;
    }
    let defines = defines
        .iter()
        .map(|d| prism_types::Define::parse(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(PyValueError::new_err)?;
    let opts = prism_driver::Options { target, contract: fp_contract, defines, ..prism_driver::Options::default() };
    let res = py.detach(|| {
        guarded(|| {
            let mut map = SourceMap::default();
            let file = map.add(name, text);
            let mut problems = Problems::default();
            let mut files = DiskFiles;
            let include = include.iter().map(std::path::PathBuf::from).collect();
            let mut search = prism_driver::Search { files: &mut files, include, base: None };
            let synced = prism_driver::compile_with(&mut map, file, &mut search, &opts, &mut problems);
            problems.sort();
            let rendered = render(&map, problems.diagnostics(), Color::Never);
            let json = render_json(&map, problems.diagnostics());
            let program = synced.map(|synced| {
                let module = prism_interp::Module::new(&synced);
                Program { map, synced, module }
            });
            (program, rendered, json)
        })
    })?;
    Ok(res)
}

/// The standard library's module names (`thread`, `warp`, ...): `prism.std.NAME`.
#[pyfunction]
fn std_modules() -> Vec<&'static str> {
    prism_std::MODULES.iter().map(|(m, _)| *m).collect()
}

/// Whether the CUDA driver library can be loaded here.
#[pyfunction]
fn driver_present() -> bool {
    prism_gpu::device::driver_present()
}

#[pymethods]
impl Program {
    /// The kernels: for each, its name, the file and line it is declared at, and its
    /// parameters as `(name, kind, dtype)`, kind being `scalar`, `pointer`, `tensor_map` or
    /// `opaque` and dtype the NumPy name of the element or scalar type (empty for `opaque`).
    fn kernels(&self) -> Vec<Signature> {
        self.module
            .kernels()
            .into_iter()
            .map(|k| {
                let (start, _) = self.map.span_lines(k.span);
                let file = self.map.file(k.span.file).name().to_string();
                let params =
                    k.params.iter().map(|p| (p.name.clone(), kind_name(&p.kind), param_dtype(&p.kind))).collect();
                (k.name, file, start.line, params)
            })
            .collect()
    }

    /// Runs `kernel` on the simulator. `args` are the marshalled arguments (see `args.rs`).
    /// Returns the buffers after the run (bytes for each array argument, `None` for the
    /// others), the reports rendered and as JSON lines (empty for a clean run), and the
    /// steps the run took.
    #[pyo3(signature = (kernel, grid, block, args, checks = "all", seed = None, fuel = None, stall_limit = None))]
    #[allow(clippy::too_many_arguments)]
    fn launch<'py>(
        &self,
        py: Python<'py>,
        kernel: &str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: Vec<Bound<'py, PyAny>>,
        checks: &str,
        seed: Option<u64>,
        fuel: Option<u64>,
        stall_limit: Option<f64>,
    ) -> PyResult<(Buffers<'py>, String, String, u64)> {
        let checks = match checks {
            "all" => Checks::ALL,
            "races" => Checks { races: true, uniformity: false },
            "uniformity" => Checks { races: false, uniformity: true },
            "none" => Checks::NONE,
            other => {
                return Err(PyValueError::new_err(format!(
                    "checks={other:?}: expected \"all\", \"races\", \"uniformity\" or \"none\""
                )));
            }
        };
        let defaults = Config::default();
        let stall_limit = match stall_limit {
            None => Some(std::time::Duration::from_secs(20)),
            Some(s) if s.is_finite() && (0.0..=31_536_000.0).contains(&s) => {
                (s > 0.0).then(|| std::time::Duration::from_secs_f64(s))
            }
            Some(s) => return Err(PyValueError::new_err(format!("stall_limit={s}: expected 0 to 31536000 seconds"))),
        };
        if fuel == Some(0) {
            return Err(PyValueError::new_err("fuel=0: a run needs at least one step"));
        }
        let cfg = Config { checks, seed, fuel: fuel.unwrap_or(defaults.fuel), stall_limit, ..defaults };
        let k = self.kernel(kernel)?;
        let (grid, block) = (dim3(grid), dim3(block));
        let m = args::marshal(&k, &args, false)?;
        let Marshalled::Host(host) = m else { unreachable!("host marshalling gives host arguments") };
        self.module.validate(&k.name, grid, block, &host).map_err(launch_error)?;
        // What validation let through can still be too big to check (race checking's shadow
        // memory): a value problem, whatever its code.
        let outcome = py
            .detach(|| guarded(|| self.module.launch(&k.name, grid, block, &host, cfg)))?
            .map_err(|e| PyValueError::new_err(e.message))?;
        let buffers =
            host.iter().map(|a| a.as_buffer().map(|b| PyBytes::new(py, &prism_gpu::device::to_bytes(b)))).collect();
        let (rendered, json) = self.reports(&outcome.reports);
        Ok((buffers, rendered, json, outcome.steps))
    }

    /// Runs `kernel` on GPU 0 with host arrays, copied there and back (no dynamic checks).
    /// Returns the buffers after the run, as [`Program::launch`] does.
    fn launch_cuda<'py>(
        &self,
        py: Python<'py>,
        kernel: &str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Buffers<'py>> {
        let k = self.kernel(kernel)?;
        let (grid, block) = (dim3(grid), dim3(block));
        let Marshalled::Host(mut host) = args::marshal(&k, &args, false)? else {
            unreachable!("host marshalling gives host arguments")
        };
        self.module.validate(&k.name, grid, block, &host).map_err(launch_error)?;
        let work = work_dir();
        let res =
            py.detach(|| guarded(|| prism_gpu::device::launch(&self.synced, &k.name, grid, block, &mut host, &work)));
        let _ = std::fs::remove_dir_all(&work);
        res?.map_err(|e| DeviceError::new_err(e.to_string()))?;
        Ok(host.iter().map(|a| a.as_buffer().map(|b| PyBytes::new(py, &prism_gpu::device::to_bytes(b)))).collect())
    }

    /// The names of `kernel`'s parameters it may write through: its pointer parameters the
    /// generated CUDA does not declare `const` (the ABI's `read_only`, one source for both
    /// backends' launchers), and its tensor maps (a TMA store writes through one). Asked
    /// only when two arrays of a launch share memory. When the backend cannot print the
    /// program, every pointer counts as written.
    fn written_params(&self, kernel: &str) -> PyResult<Vec<String>> {
        let k = self.kernel(kernel)?;
        let out = prism_cuda::emit(&self.synced, &prism_cuda::Options::default());
        let abi = out.kernels.iter().find(|a| a.name == k.name).filter(|_| out.errors.is_empty());
        Ok(match abi {
            Some(abi) => abi
                .params
                .iter()
                .filter(|p| match p {
                    prism_cuda::AbiParam::Pointer { read_only, .. } => !read_only,
                    prism_cuda::AbiParam::TensorMap { .. } => true,
                    prism_cuda::AbiParam::Scalar { .. } => false,
                })
                .map(|p| p.name().to_string())
                .collect(),
            None => {
                k.params.iter().filter(|p| !matches!(p.kind, ParamKind::Scalar(_))).map(|p| p.name.clone()).collect()
            }
        })
    }

    /// Runs `kernel` on GPU `ordinal` with arrays already there: each array argument is a
    /// device address (`("device", dtype, address, count)`), read and written in place.
    fn launch_device(
        &self,
        py: Python<'_>,
        kernel: &str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: Vec<Bound<'_, PyAny>>,
        ordinal: usize,
    ) -> PyResult<()> {
        let k = self.kernel(kernel)?;
        let (grid, block) = (dim3(grid), dim3(block));
        let Marshalled::Device(dev) = args::marshal(&k, &args, true)? else {
            unreachable!("device marshalling gives device arguments")
        };
        // The simulator's launch rules hold on the GPU too; they look at the scalars and the
        // element types only, so empty buffers stand in for the device arrays.
        let stand_ins: Vec<Arg> = dev
            .iter()
            .map(|a| match *a {
                DeviceArg::Scalar(t, bits) => Arg::Scalar(t, bits),
                DeviceArg::Pointer { elem, .. } => Arg::Buffer(prism_interp::Buffer::zeroed(elem, 0)),
            })
            .collect();
        self.module.validate(&k.name, grid, block, &stand_ins).map_err(launch_error)?;
        let work = work_dir();
        let res = py.detach(|| {
            guarded(|| prism_gpu::pointers::launch(&self.synced, &k.name, grid, block, &dev, ordinal, &work))
        });
        let _ = std::fs::remove_dir_all(&work);
        res?.map_err(|e| match e {
            prism_gpu::device::DeviceError::Arguments(m) => PyValueError::new_err(m),
            prism_gpu::device::DeviceError::NoDriver => DeviceError::new_err(
                "no CUDA driver found (libcuda could not be loaded), so nothing can run on a GPU here; \
                 run on the simulator with the default device='sim'",
            ),
            e => DeviceError::new_err(e.to_string()),
        })
    }

    /// The generated CUDA C++ of the whole program (what `prism build` writes).
    /// Fails with `ValueError` when the program uses something the backend cannot print.
    fn cuda(&self) -> PyResult<String> {
        let out = prism_cuda::emit(&self.synced, &prism_cuda::Options::default());
        if !out.errors.is_empty() {
            let msgs: Vec<String> = out.errors.iter().map(|e| e.message.clone()).collect();
            return Err(PyValueError::new_err(msgs.join("; ")));
        }
        Ok(out.text)
    }
}

impl Program {
    fn kernel(&self, name: &str) -> PyResult<KernelInfo> {
        self.module.kernel(name).ok_or_else(|| {
            let names: Vec<String> = self.module.kernels().into_iter().map(|k| k.name).collect();
            PyValueError::new_err(format!("no kernel named `{name}` (kernels: {})", names.join(", ")))
        })
    }

    /// Reports as rendered text and JSON lines. Each JSON object has `render_json`'s fields
    /// and the thread that found it (`block`, `thread`).
    fn reports(&self, reports: &[prism_interp::Report]) -> (String, String) {
        let diags: Vec<Diagnostic> = reports.iter().map(prism_interp::Report::to_diagnostic).collect();
        let rendered = render(&self.map, &diags, Color::Never);
        let mut json = String::new();
        for (r, d) in reports.iter().zip(&diags) {
            let line = render_json(&self.map, std::slice::from_ref(d));
            let mut v: serde_json::Value = serde_json::from_str(line.trim()).unwrap_or(serde_json::Value::Null);
            if let Some(o) = v.as_object_mut() {
                o.insert("block".into(), r.thread.block.into());
                o.insert("thread".into(), r.thread.thread.into());
            }
            json.push_str(&v.to_string());
            json.push('\n');
        }
        (rendered, json)
    }
}

/// A `(x, y, z)` from Python as a launch extent.
fn dim3((x, y, z): (u32, u32, u32)) -> Dim3 {
    Dim3 { x, y, z }
}

/// A launch the simulator's validation refused: the shape (`bad-launch`) is a value
/// problem, an argument (`bad-argument`) a type problem.
fn launch_error(e: prism_interp::LaunchError) -> PyErr {
    if e.code == "bad-argument" { PyTypeError::new_err(e.message) } else { PyValueError::new_err(e.message) }
}

/// Runs `f`, turning a panic into `prism.InternalError`.
fn guarded<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let what = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        InternalError::new_err(format!("internal error in Prism: {what}"))
    })
}

/// A fresh directory name for a GPU launch's generated files.
fn work_dir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!("prism-py-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)))
}

fn kind_name(k: &ParamKind) -> &'static str {
    match k {
        ParamKind::Scalar(_) => "scalar",
        ParamKind::Pointer(_) => "pointer",
        ParamKind::TensorMap(_) => "tensor_map",
        ParamKind::Opaque => "opaque",
    }
}

fn param_dtype(k: &ParamKind) -> &'static str {
    match k {
        ParamKind::Scalar(t) | ParamKind::Pointer(t) => args::dtype_name(*t),
        ParamKind::TensorMap(m) => args::dtype_name(m.elem),
        ParamKind::Opaque => "",
    }
}

/// Imported modules read from the file system, keyed by canonical path (as the CLI does).
struct DiskFiles;

impl prism_driver::Files for DiskFiles {
    fn read(&mut self, path: &std::path::Path) -> Result<Option<(String, String)>, String> {
        if !path.is_file() {
            return Ok(None);
        }
        let key = std::fs::canonicalize(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            format!("`{}` is not UTF-8 text (invalid byte at offset {})", path.display(), e.utf8_error().valid_up_to())
        })?;
        Ok(Some((key.display().to_string(), text)))
    }
}
