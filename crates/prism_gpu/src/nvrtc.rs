//! Compiling generated CUDA in-process with NVRTC, NVIDIA's run-time compiler, through
//! cudarc's bindings (loaded at run time, like the driver): the path `prism run --device
//! cuda` takes where nvcc is absent (`toolchain::Compiler`, `docs/cuda.md` "NVRTC").
//!
//! **Finding the library.** cudarc opens `libnvrtc` by name only, so the system loader's
//! search path decides, and `LD_LIBRARY_PATH` is read once when the process starts. The
//! PyPI wheel `nvidia-cuda-nvrtc` (what `scripts/install-nvrtc.sh` installs) puts
//! `libnvrtc.so.13` under `nvidia/cu13/lib`, where no loader looks. So this module opens
//! the library itself, by path, before cudarc touches it: the first of
//!
//! 1. `$PRISM_NVRTC` (the library file, or a directory holding it; when set it must be
//!    right, it is never skipped),
//! 2. each directory of `LD_LIBRARY_PATH`,
//! 3. the caches `${PRISM_CACHE:-~/.cache/prism}/nvrtc` (the install script's) and `.../nvcc`,
//! 4. beside nvcc (`bin/../lib64`, `bin/../lib`), then `$CUDA_PATH/lib64`, `/usr/local/cuda/lib64`,
//! 5. whatever the system loader finds under cudarc's names.
//!
//! Once a library whose soname is `libnvrtc.so.13` is loaded, the loader hands that same
//! library to cudarc's `dlopen("libnvrtc.so.13")`; [`load`] checks that cudarc's first
//! candidate name resolves to it (and not to another NVRTC earlier on the search path), and
//! that it exports every function used here, so a wrong library is an error, never one of
//! cudarc's panics.
//!
//! **Headers.** NVRTC has no built-in CUDA headers and no host headers: `cuda_fp16.h`,
//! `cuda_bf16.h` and `cooperative_groups.h` (which includes CCCL's `<cuda/std/...>`) come
//! from `include/` and `include/cccl` beside the library's `lib/` (the wheels
//! `nvidia-cuda-runtime` and `nvidia-cuda-cccl`, or a toolkit), else from `$CUDA_PATH`,
//! `/usr/local/cuda` or nvcc's toolkit ([`include_dirs`]), passed as `-I`.
//!
//! **Output.** [`Image::Cubin`] for running: `--gpu-architecture=sm_XX` and
//! `nvrtcGetCUBIN` give SASS for the device's exact architecture, as nvcc's `-cubin` does,
//! so the driver compiles nothing and a toolkit newer than the driver (NVRTC 13.5 on a CUDA
//! 13.0 driver) still loads, which its PTX would not. [`Image::Ptx`] (`compute_XX`) for
//! looking at. The flags are nvcc's ([`crate::toolchain::COMMON_FLAGS`]).

use crate::toolchain::{self, cache_dir};
use cudarc::nvrtc::{result, sys};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What NVRTC produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Image {
    /// PTX text for the virtual architecture (`compute_90a` for `sm_90a`).
    Ptx,
    /// A cubin for one real architecture.
    Cubin,
}

/// A loaded NVRTC library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nvrtc {
    /// The library file, or `None` when the system loader found it by name.
    pub library: Option<PathBuf>,
    /// The header directories every compile gets as `-I`.
    pub include: Vec<PathBuf>,
    /// NVRTC's version, `(major, minor)`.
    pub version: (i32, i32),
}

/// The result of one NVRTC compile: like [`toolchain::Compiled`], with the image.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// Whether NVRTC succeeded.
    pub ok: bool,
    /// Its log (warnings, errors), in nvcc's format: `NAME(LINE): error: ...`.
    pub log: String,
    /// The PTX text or cubin bytes (empty on failure).
    pub image: Vec<u8>,
}

/// Why NVRTC cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// No library anywhere it was looked for.
    Missing {
        /// The directories searched, in order.
        searched: Vec<PathBuf>,
    },
    /// `$PRISM_NVRTC` names no NVRTC library.
    BadSetting {
        /// Its value.
        value: PathBuf,
    },
    /// The file is there but does not load as NVRTC.
    Unusable {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Missing { searched } => {
                let dirs: Vec<String> = searched.iter().map(|d| d.display().to_string()).collect();
                write!(
                    f,
                    "NVRTC (libnvrtc) not found: set PRISM_NVRTC to the library or its directory, or run \
                     scripts/install-nvrtc.sh (installs it from PyPI); searched {} and the system loader's path",
                    if dirs.is_empty() { "nothing else".to_string() } else { dirs.join(", ") }
                )
            }
            LoadError::BadSetting { value } => write!(
                f,
                "PRISM_NVRTC={} is not an NVRTC library nor a directory holding libnvrtc.so.13",
                value.display()
            ),
            LoadError::Unusable { path, reason } => write!(f, "cannot use NVRTC from {}: {reason}", path.display()),
        }
    }
}

impl std::error::Error for LoadError {}

/// The environment variable naming the library (or its directory).
pub const ENV: &str = "PRISM_NVRTC";

/// The library's file names, most wanted first.
const NAMES: [&str; 3] = ["libnvrtc.so.13", "libnvrtc.so", "libnvrtc.so.12"];

/// Every function this module calls: a library without one of them is refused before
/// cudarc (which panics on a missing symbol) calls it.
const SYMBOLS: [&str; 10] = [
    "nvrtcVersion",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcDestroyProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
];

/// The directories searched after `$PRISM_NVRTC`, in order (see the module's comment).
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(p) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&p).filter(|d| !d.as_os_str().is_empty()));
    }
    if let Some(c) = cache_dir() {
        dirs.push(c.join("nvrtc/nvidia/cu13/lib"));
        dirs.push(c.join("nvcc/nvidia/cu13/lib"));
    }
    if let Some(root) = toolchain::find_nvcc().and_then(|n| n.parent()?.parent().map(Path::to_path_buf)) {
        dirs.push(root.join("lib64"));
        dirs.push(root.join("lib"));
    }
    if let Some(c) = std::env::var_os("CUDA_PATH").filter(|c| !c.is_empty()) {
        dirs.push(PathBuf::from(c).join("lib64"));
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs
}

/// Where the library is: `Ok(Some(file))`, or `Ok(None)` to ask the system loader.
/// `explicit` is `$PRISM_NVRTC`'s value; a wrong one is an error, not a reason to look on.
pub fn locate(explicit: Option<&Path>, dirs: &[PathBuf]) -> Result<Option<PathBuf>, LoadError> {
    let in_dir = |d: &Path| NAMES.iter().map(|n| d.join(n)).find(|p| p.is_file());
    if let Some(e) = explicit {
        return match (e.is_file(), e.is_dir()) {
            (true, _) => Ok(Some(e.to_path_buf())),
            (_, true) => in_dir(e).map(Some).ok_or_else(|| LoadError::BadSetting { value: e.to_path_buf() }),
            _ => Err(LoadError::BadSetting { value: e.to_path_buf() }),
        };
    }
    Ok(dirs.iter().find_map(|d| in_dir(d)))
}

/// The header directories for a library at `library` (`None`: found by the system loader):
/// `include/` and `include/cccl` beside its `lib/` directory (after following links), or
/// else those of `$CUDA_PATH`, `/usr/local/cuda` or nvcc's toolkit: the first `include/`
/// that has `cuda_fp16.h`, and its `cccl/` when there is one.
pub fn include_dirs(library: Option<&Path>) -> Vec<PathBuf> {
    let up2 = |p: &Path| p.parent()?.parent().map(Path::to_path_buf);
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(l) = library {
        roots.extend(up2(&std::fs::canonicalize(l).unwrap_or_else(|_| l.to_path_buf())));
        roots.extend(up2(l));
    }
    roots.extend(std::env::var_os("CUDA_PATH").filter(|c| !c.is_empty()).map(PathBuf::from));
    roots.push(PathBuf::from("/usr/local/cuda"));
    roots.extend(toolchain::find_nvcc().and_then(|n| up2(&n)));
    let Some(inc) = roots.into_iter().map(|r| r.join("include")).find(|i| i.join("cuda_fp16.h").is_file()) else {
        return Vec::new();
    };
    let cccl = inc.join("cccl");
    if cccl.is_dir() { vec![inc, cccl] } else { vec![inc] }
}

/// NVRTC as this process found it: searched for and loaded once (the environment is read
/// the first time), then the same answer every time.
pub fn load() -> Result<&'static Nvrtc, LoadError> {
    static LOADED: OnceLock<Result<Nvrtc, LoadError>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let explicit = std::env::var_os(ENV).filter(|v| !v.is_empty()).map(PathBuf::from);
            let dirs = search_dirs();
            match locate(explicit.as_deref(), &dirs)? {
                Some(path) => load_path(&path),
                None => load_system().unwrap_or(Err(LoadError::Missing { searched: dirs })),
            }
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Loads the NVRTC library at `path` and checks that cudarc will call into it.
pub fn load_path(path: &Path) -> Result<Nvrtc, LoadError> {
    let unusable = |reason: String| LoadError::Unusable { path: path.to_path_buf(), reason };
    let handle = preload(path).map_err(unusable)?;
    if let Some(other) = cudarc_choice(handle) {
        return Err(unusable(format!(
            "cudarc would load `{other}` instead, found first on the system loader's path; remove that one from \
             LD_LIBRARY_PATH, or unset PRISM_NVRTC to use it"
        )));
    }
    let version = version().map_err(unusable)?;
    Ok(Nvrtc { library: Some(path.to_path_buf()), include: include_dirs(Some(path)), version })
}

/// NVRTC from the system loader's path: the first of cudarc's candidate names that opens
/// (the one cudarc will use), or `None` when none does.
fn load_system() -> Option<Result<Nvrtc, LoadError>> {
    let name = cudarc::get_lib_name_candidates("nvrtc").into_iter().find(|n| open(Path::new(n)).is_ok())?;
    let unusable = |reason: String| LoadError::Unusable { path: PathBuf::from(&name), reason };
    Some(
        preload(Path::new(&name))
            .and_then(|_| version())
            .map(|version| Nvrtc { library: None, include: include_dirs(None), version })
            .map_err(unusable),
    )
}

/// Opens the library at `path` (a file, or a bare name for the system loader).
fn open(path: &Path) -> Result<libloading::Library, String> {
    #[allow(unsafe_code)]
    // SAFETY: opening a library runs its initialisers; NVRTC's (and the C++ runtime's it
    // pulls in) have no preconditions. A file that is not a library is an `Err`.
    unsafe { libloading::Library::new(path) }.map_err(|e| match std::error::Error::source(&e) {
        Some(why) => format!("{e}: {why}"),
        None => e.to_string(),
    })
}

/// Opens the library at `path` for the life of the process, after checking that it exports
/// every function in [`SYMBOLS`]; returns the loader's handle.
fn preload(path: &Path) -> Result<usize, String> {
    let lib = open(path)?;
    for s in SYMBOLS {
        #[allow(unsafe_code)]
        // SAFETY: only the symbol's presence is checked; the pointer is never called or
        // dereferenced here.
        let found = unsafe { lib.get::<*const ()>(s.as_bytes()) }.is_ok();
        if !found {
            return Err(format!("it does not export `{s}` (not NVRTC, or an NVRTC older than CUDA 11.1)"));
        }
    }
    Ok(into_handle(lib))
}

/// The loader's handle of `lib`, which stays open for the rest of the process.
#[cfg(unix)]
fn into_handle(lib: libloading::Library) -> usize {
    libloading::os::unix::Library::from(lib).into_raw() as usize
}

#[cfg(not(unix))]
fn into_handle(lib: libloading::Library) -> usize {
    std::mem::forget(lib);
    0
}

/// The name of the library cudarc will load when it is not the one with `handle`, the way
/// cudarc looks for it (the first of its candidate names that opens).
#[cfg(unix)]
fn cudarc_choice(handle: usize) -> Option<String> {
    for name in cudarc::get_lib_name_candidates("nvrtc") {
        #[allow(unsafe_code)]
        // SAFETY: as in `preload`; a name already loaded only gains a reference.
        let Ok(lib) = (unsafe { libloading::os::unix::Library::new(&name) }) else { continue };
        let raw = lib.into_raw();
        #[allow(unsafe_code)]
        // SAFETY: `raw` came from `into_raw` just above and is closed once, here (the
        // loader keeps the library while the preloaded reference holds it).
        drop(unsafe { libloading::os::unix::Library::from_raw(raw) });
        return (raw as usize != handle).then_some(name);
    }
    None
}

#[cfg(not(unix))]
fn cudarc_choice(_handle: usize) -> Option<String> {
    None
}

/// NVRTC's version, through cudarc (which loads the library here if it has not yet).
fn version() -> Result<(i32, i32), String> {
    let (mut major, mut minor) = (0, 0);
    #[allow(unsafe_code)]
    // SAFETY: the library is loaded and exports `nvrtcVersion` (checked by `preload`); it
    // writes two ints through valid pointers.
    let r = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    r.result().map_err(|e| format!("nvrtcVersion failed: {e:?}"))?;
    Ok((major, minor))
}

/// The options of an NVRTC compile for `arch` (`sm_90a`): nvcc's common flags, the target
/// (the real architecture for a cubin, the virtual one for PTX) and the header directories.
pub fn flags(arch: &str, image: Image, include: &[PathBuf]) -> Vec<String> {
    let target = match (image, arch.strip_prefix("sm_")) {
        (Image::Ptx, Some(num)) => format!("compute_{num}"),
        _ => arch.to_string(),
    };
    let mut f = vec![format!("--gpu-architecture={target}")];
    f.extend(toolchain::COMMON_FLAGS.iter().map(|s| s.to_string()));
    f.extend(include.iter().map(|d| format!("-I{}", d.display())));
    f
}

impl Nvrtc {
    /// Compiles the CUDA `text` for `arch`, naming it `name` in the log (as nvcc names the
    /// file it was given). A compile error is `Ok` with `ok: false` and the log, as from
    /// nvcc; `Err` is for what no compile log explains (a NUL byte, an NVRTC failure).
    pub fn compile(&self, text: &str, name: &str, arch: &str, image: Image) -> Result<Compiled, String> {
        let src = CString::new(text).map_err(|_| "the CUDA text contains a NUL byte".to_string())?;
        let cname = CString::new(name).map_err(|_| "the file name contains a NUL byte".to_string())?;
        let opts = flags(arch, image, &self.include);
        if opts.iter().any(|o| o.contains('\0')) {
            return Err("an include directory contains a NUL byte".into());
        }
        let prog = Program(result::create_program(&src, Some(&cname)).map_err(|e| format!("nvrtcCreateProgram: {e}"))?);
        #[allow(unsafe_code)]
        // SAFETY: `prog` is a live program (destroyed only by `Program`'s drop) whose source
        // and name strings outlive it; the options have no NUL bytes (checked above).
        let compiled = unsafe { result::compile_program(prog.0, &opts) };
        #[allow(unsafe_code)]
        // SAFETY: as above; the log exists after a compile, successful or not.
        let log = unsafe { result::get_program_log(prog.0) }.map_err(|e| format!("nvrtcGetProgramLog: {e}"))?;
        let log = c_text(log.into_iter().map(|c| c as u8).collect());
        if let Err(e) = compiled {
            let log = if log.trim().is_empty() { format!("NVRTC failed: {e}") } else { log };
            return Ok(Compiled { ok: false, log, image: Vec::new() });
        }
        let image = match image {
            Image::Ptx => {
                #[allow(unsafe_code)]
                // SAFETY: `prog` is live and compiled.
                let ptx = unsafe { result::get_ptx(prog.0) }.map_err(|e| format!("nvrtcGetPTX: {e}"))?;
                c_text(ptx.into_iter().map(|c| c as u8).collect()).into_bytes()
            }
            Image::Cubin => {
                let mut size = 0usize;
                #[allow(unsafe_code)]
                // SAFETY: `prog` is live and compiled for a real architecture; `size` is a
                // valid place for the size.
                let r = unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) };
                r.result().map_err(|e| format!("nvrtcGetCUBINSize: {e}"))?;
                let mut bytes = vec![0u8; size];
                #[allow(unsafe_code)]
                // SAFETY: `bytes` holds the `size` bytes NVRTC said the cubin has.
                let r = unsafe { sys::nvrtcGetCUBIN(prog.0, bytes.as_mut_ptr().cast()) };
                r.result().map_err(|e| format!("nvrtcGetCUBIN: {e}"))?;
                bytes
            }
        };
        Ok(Compiled { ok: true, log, image })
    }

    /// Where the library came from, for messages.
    pub fn describe(&self) -> String {
        let from = self.library.as_ref().map_or("the system loader's path".to_string(), |p| p.display().to_string());
        format!("NVRTC {}.{} ({from})", self.version.0, self.version.1)
    }
}

/// A program, destroyed when dropped.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        #[allow(unsafe_code)]
        // SAFETY: the program was created by `create_program` and is destroyed once, here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

/// A NUL-terminated C string's text (lossy), without the terminator.
fn c_text(mut bytes: Vec<u8>) -> String {
    if let Some(end) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(end);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_nvccs_with_the_target_and_headers() {
        let inc = [PathBuf::from("/x/include"), PathBuf::from("/x/include/cccl")];
        assert_eq!(
            flags("sm_90a", Image::Cubin, &inc),
            [
                "--gpu-architecture=sm_90a",
                "--fmad=false",
                "-std=c++17",
                "-lineinfo",
                "-I/x/include",
                "-I/x/include/cccl"
            ]
        );
        assert_eq!(flags("sm_80", Image::Ptx, &[])[0], "--gpu-architecture=compute_80");
        for f in toolchain::COMMON_FLAGS {
            assert!(toolchain::flags("sm_80").iter().any(|g| g == f), "nvcc gets {f} too");
        }
    }

    #[test]
    fn a_wrong_setting_or_file_is_an_error_not_a_panic() {
        let nowhere = Path::new("/nonexistent/libnvrtc.so.13");
        let e = locate(Some(nowhere), &[]).unwrap_err();
        assert_eq!(e, LoadError::BadSetting { value: nowhere.to_path_buf() });
        assert!(e.to_string().contains("PRISM_NVRTC=/nonexistent/libnvrtc.so.13 is not an NVRTC library"));
        // A directory without the library.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert!(matches!(locate(Some(dir), &[]), Err(LoadError::BadSetting { .. })));
        // Nothing in the directories searched: the system loader is asked next.
        assert_eq!(locate(None, &[dir.to_path_buf()]), Ok(None));
        // A file that is not a library.
        let e = load_path(&dir.join("Cargo.toml")).unwrap_err();
        assert!(matches!(e, LoadError::Unusable { .. }), "{e:?}");
        assert!(e.to_string().starts_with("cannot use NVRTC from "), "{e}");
        let missing = LoadError::Missing { searched: vec![PathBuf::from("/a"), PathBuf::from("/b")] };
        assert!(missing.to_string().contains("run scripts/install-nvrtc.sh"), "{missing}");
        assert!(missing.to_string().contains("searched /a, /b"), "{missing}");
    }

    #[test]
    fn headers_are_found_beside_the_library() {
        let root = std::env::temp_dir().join(format!("prism-nvrtc-layout-{}", std::process::id()));
        std::fs::create_dir_all(root.join("lib")).expect("scratch");
        std::fs::create_dir_all(root.join("include/cccl")).expect("scratch");
        std::fs::write(root.join("include/cuda_fp16.h"), b"").expect("scratch");
        let lib = root.join("lib/libnvrtc.so.13");
        std::fs::write(&lib, b"").expect("scratch");
        assert_eq!(include_dirs(Some(&lib)), [root.join("include"), root.join("include/cccl")]);
        assert_eq!(locate(None, &[root.join("include"), root.join("lib")]), Ok(Some(lib.clone())));
        assert_eq!(locate(Some(&root.join("lib")), &[]), Ok(Some(lib)));
        let _ = std::fs::remove_dir_all(&root);
    }
}
