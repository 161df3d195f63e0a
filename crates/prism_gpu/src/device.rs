//! Running a kernel on an NVIDIA GPU: generate CUDA for the program, compile it with nvcc or
//! NVRTC ([`Compiler`]) to a cubin for the device's architecture, load it through the CUDA driver (cudarc, loaded at
//! run time), upload the arguments the simulator would get (`prism_interp::Arg`, built by
//! `prism_interp::args`), launch (cooperatively when the kernel has a grid barrier), and
//! download every buffer back into the arguments.
//!
//! A machine without the driver library or without a GPU gets a [`DeviceError`], never a
//! panic: the driver's presence is checked before cudarc touches it.

use crate::nvrtc;
use crate::toolchain::{self, Compiler, Emit};
use prism_cuda::{AbiParam, KernelAbi};
use prism_interp::{Arg, Buffer};
use prism_types::ty::Scalar;
use std::path::PathBuf;

/// Why a run on the GPU did not happen or failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceError {
    /// The CUDA driver library (`libcuda`) cannot be loaded.
    NoDriver,
    /// The driver loads but reports no usable GPU (or fails to start).
    NoDevice(String),
    /// The compiler (nvcc or NVRTC) is missing or failed; its log, in nvcc's format.
    Compile(String),
    /// The launch does not fit the kernel, or the program cannot run on a GPU.
    Launch(String),
    /// The arguments of a launch with device pointers do not fit the kernel's parameters,
    /// or overlap where the kernel writes ([`crate::pointers::check_args`]).
    Arguments(String),
    /// The driver reported an error while loading, copying or running.
    Driver(String),
}

impl std::fmt::Display for DeviceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceError::NoDriver => write!(
                f,
                "no CUDA driver found (libcuda could not be loaded); run on the simulator with `--device sim`"
            ),
            DeviceError::NoDevice(e) => write!(f, "no usable CUDA device: {e}"),
            DeviceError::Compile(e) => write!(f, "cannot compile the generated CUDA: {e}"),
            DeviceError::Launch(e) | DeviceError::Arguments(e) => write!(f, "{e}"),
            DeviceError::Driver(e) => write!(f, "CUDA driver error: {e}"),
        }
    }
}

impl std::error::Error for DeviceError {}

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_present() -> bool {
    #[allow(unsafe_code)]
    // SAFETY: `is_culib_present` only tries to open the driver library with libloading; it
    // calls no driver function and has no precondition.
    unsafe {
        cudarc::driver::sys::is_culib_present()
    }
}

/// The nvcc `-arch` for a compute capability: the `a` variant on Hopper, so that wgmma,
/// setmaxnreg and TMA are available.
pub fn arch_for(major: i32, minor: i32) -> String {
    if major == 9 && minor == 0 { "sm_90a".to_string() } else { format!("sm_{major}{minor}") }
}

/// The bytes of a buffer as the GPU stores it (little-endian, the element's size).
pub fn to_bytes(b: &Buffer) -> Vec<u8> {
    let size = b.elem.size() as usize;
    b.to_bits().iter().flat_map(|v| v.to_le_bytes().into_iter().take(size)).collect()
}

/// A buffer of `elem` from device bytes.
pub fn from_bytes(elem: Scalar, bytes: &[u8]) -> Buffer {
    let size = elem.size() as usize;
    let bits: Vec<u64> = bytes
        .chunks_exact(size)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..size].copy_from_slice(c);
            prism_interp::value::norm(elem, u64::from_le_bytes(w))
        })
        .collect();
    Buffer::from_bits(elem, &bits)
}

/// The backend's options for a launch: just the launched kernel and what it calls, so that
/// another kernel of the file that the backend refuses does not stop this one (and nvcc
/// compiles less).
pub(crate) fn launch_options(kernel: &str) -> prism_cuda::Options {
    prism_cuda::Options { kernels: Some(vec![kernel.to_string()]), ..prism_cuda::Options::default() }
}

/// Runs `kernel` of `program` on GPU 0 over `grid` blocks of `block` threads; buffers in
/// `args` are replaced by their contents after the run. `work` is a directory for the
/// generated files. The compiler is `$PRISM_COMPILER`'s (nvcc when found, else NVRTC).
pub fn launch(
    program: &prism_driver::Synced,
    kernel: &str,
    grid: prism_ir::ir::Dim3,
    block: prism_ir::ir::Dim3,
    args: &mut [Arg],
    work: &std::path::Path,
) -> Result<(), DeviceError> {
    let compiler = Compiler::from_env().map_err(DeviceError::Compile)?;
    launch_with(program, kernel, grid, block, args, work, compiler)
}

/// [`launch`] with the compiler chosen by the caller. An explicit choice (`Nvcc`, `Nvrtc`) is
/// looked for first, so a missing compiler is reported even where there is no GPU; `Auto`
/// looks once there is a device to compile for.
pub fn launch_with(
    program: &prism_driver::Synced,
    kernel: &str,
    grid: prism_ir::ir::Dim3,
    block: prism_ir::ir::Dim3,
    args: &mut [Arg],
    work: &std::path::Path,
    compiler: Compiler,
) -> Result<(), DeviceError> {
    let found = if compiler == Compiler::Auto { None } else { Some(find_compiler(compiler)?) };
    if !driver_present() {
        return Err(DeviceError::NoDriver);
    }
    let out = prism_cuda::emit(program, &launch_options(kernel));
    if !out.errors.is_empty() {
        let msgs: Vec<String> = out.errors.iter().map(|e| e.message.clone()).collect();
        return Err(DeviceError::Launch(msgs.join("; ")));
    }
    let abi = out
        .kernels
        .iter()
        .find(|k| k.name == kernel)
        .ok_or_else(|| DeviceError::Launch(format!("no kernel named `{kernel}`")))?
        .clone();
    abi.check_launch(grid, block).map_err(DeviceError::Launch)?;
    let ctx = cudarc::driver::CudaContext::new(0).map_err(|e| DeviceError::NoDevice(e.to_string()))?;
    let (major, minor) = ctx.compute_capability().map_err(|e| DeviceError::NoDevice(e.to_string()))?;
    let arch = arch_for(major, minor);
    let found = match found {
        Some(f) => f,
        None => find_compiler(compiler)?,
    };
    let cubin = found.compile(&out.text, &arch, work)?;
    run_cubin(&ctx, &cubin, &abi, grid, block, args)
}

/// Compiles generated CUDA `text` to a cubin for `arch` in `work`, with `$PRISM_COMPILER`'s
/// compiler ([`compile_with`]).
pub fn compile(text: &str, arch: &str, work: &std::path::Path) -> Result<PathBuf, DeviceError> {
    let compiler = Compiler::from_env().map_err(DeviceError::Compile)?;
    compile_with(text, arch, work, compiler)
}

/// Compiles generated CUDA `text` to a cubin for `arch` in `work` with `compiler`
/// ([`Found::compile`]). Needs no GPU.
pub fn compile_with(
    text: &str,
    arch: &str,
    work: &std::path::Path,
    compiler: Compiler,
) -> Result<PathBuf, DeviceError> {
    find_compiler(compiler)?.compile(text, arch, work)
}

/// A compiler that was found (and, for NVRTC, loaded).
#[derive(Clone, Debug)]
pub enum Found {
    /// nvcc, at this path.
    Nvcc(PathBuf),
    /// NVRTC, loaded.
    Nvrtc(&'static nvrtc::Nvrtc),
}

/// Finds `compiler`: `Auto` is nvcc when found, else NVRTC; a missing one is
/// [`DeviceError::Compile`] saying how to install it (both, under `Auto`).
pub fn find_compiler(compiler: Compiler) -> Result<Found, DeviceError> {
    match (compiler, toolchain::find_nvcc()) {
        (Compiler::Nvcc | Compiler::Auto, Some(nvcc)) => Ok(Found::Nvcc(nvcc)),
        (Compiler::Nvcc, None) => Err(DeviceError::Compile(toolchain::NO_NVCC.into())),
        (Compiler::Nvrtc, _) | (Compiler::Auto, None) => nvrtc::load().map(Found::Nvrtc).map_err(|e| {
            DeviceError::Compile(match compiler {
                Compiler::Auto => format!("{}; and {e}", toolchain::NO_NVCC),
                _ => e.to_string(),
            })
        }),
    }
}

impl Found {
    /// Compiles generated CUDA `text` to a cubin for `arch`: writes `work/kernel.cu` and
    /// returns `work/kernel.ARCH.cubin`. Both compilers name the source `work/kernel.cu` in
    /// their messages, and a failed compile is [`DeviceError::Compile`] with the log, in the
    /// same format, either way.
    pub fn compile(&self, text: &str, arch: &str, work: &std::path::Path) -> Result<PathBuf, DeviceError> {
        let fail = DeviceError::Compile;
        std::fs::create_dir_all(work).map_err(|e| fail(e.to_string()))?;
        let cu = work.join("kernel.cu");
        std::fs::write(&cu, text).map_err(|e| fail(e.to_string()))?;
        let cubin = work.join(format!("kernel.{arch}.cubin"));
        let nvrtc = match self {
            Found::Nvrtc(nvrtc) => nvrtc,
            Found::Nvcc(nvcc) => {
                let c = toolchain::compile(nvcc, &cu, &cubin, arch, Emit::Cubin).map_err(|e| fail(e.to_string()))?;
                return if c.ok { Ok(cubin) } else { Err(fail(c.log)) };
            }
        };
        let c = nvrtc.compile(text, &cu.display().to_string(), arch, nvrtc::Image::Cubin).map_err(fail)?;
        if !c.ok {
            let mut log = c.log;
            if log.contains("open source file") {
                let dirs: Vec<String> = nvrtc.include.iter().map(|d| d.display().to_string()).collect();
                log.push_str(&format!(
                    "{} looked for CUDA headers in: {} (scripts/install-nvrtc.sh installs them beside the library)\n",
                    nvrtc.describe(),
                    if dirs.is_empty() { "no directory".to_string() } else { dirs.join(", ") }
                ));
            }
            return Err(fail(log));
        }
        std::fs::write(&cubin, &c.image).map_err(|e| fail(e.to_string()))?;
        Ok(cubin)
    }

    /// The compiler, for messages: `nvcc (PATH)` or `NVRTC 13.5 (PATH)`.
    pub fn describe(&self) -> String {
        match self {
            Found::Nvcc(p) => format!("nvcc ({})", p.display()),
            Found::Nvrtc(n) => n.describe(),
        }
    }
}

/// A scalar argument with the width the kernel takes it at.
enum Scalar_ {
    B8(u8),
    B16(u16),
    B32(u32),
    B64(u64),
}

fn run_cubin(
    ctx: &std::sync::Arc<cudarc::driver::CudaContext>,
    cubin: &std::path::Path,
    abi: &KernelAbi,
    grid: prism_ir::ir::Dim3,
    block: prism_ir::ir::Dim3,
    args: &mut [Arg],
) -> Result<(), DeviceError> {
    use cudarc::driver::{LaunchConfig, PushKernelArg};
    let drv = |e: cudarc::driver::DriverError| DeviceError::Driver(e.to_string());
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_file(cubin)).map_err(drv)?;
    let func = module.load_function(&abi.symbol).map_err(drv)?;
    // With a dynamic shared array the count argument sizes the block's shared memory (the
    // simulator's launch check has refused negative and oversized counts already).
    let smem_bytes = match abi.dyn_array {
        Some(d) => {
            let n = match args.get(d.count) {
                Some(Arg::Scalar(_, bits)) => i64::from(*bits as u32 as i32),
                _ => 0,
            };
            d.bytes(n, prism_ir::ir::MAX_BLOCK_SMEM).map_err(DeviceError::Launch)?
        }
        None => abi.smem_bytes,
    };
    if abi.dynamic_smem {
        func.set_attribute(
            cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            smem_bytes as i32,
        )
        .map_err(drv)?;
    }
    let stream = ctx.default_stream();
    // Every buffer is uploaded first (pointer and tensor-map arguments alike), then each
    // typed tensor map is encoded over its array, then the arguments are pushed in order.
    let mut slices = Vec::new();
    for (p, a) in abi.params.iter().zip(args.iter()) {
        match (p, a) {
            (AbiParam::Pointer { .. }, Arg::Buffer(b))
            | (AbiParam::TensorMap { map: Some(_), .. }, Arg::Tensor { buffer: b, .. }) => {
                if let Arg::Tensor { dims, .. } = a
                    && dims.iter().try_fold(1u64, |x, &d| x.checked_mul(d)) != Some(b.len() as u64)
                {
                    return Err(DeviceError::Launch(format!(
                        "the array for tensor map `{}` has {} elements, not what its dimensions {dims:?} hold",
                        p.name(),
                        b.len()
                    )));
                }
                let bytes = to_bytes(b);
                // A zero-length buffer still needs a valid pointer.
                let bytes = if bytes.is_empty() { vec![0u8; 1] } else { bytes };
                slices.push(stream.clone_htod(&bytes).map_err(drv)?);
            }
            (AbiParam::Scalar { .. }, Arg::Scalar(..)) => {}
            (AbiParam::TensorMap { map: None, .. }, _) => {
                return Err(DeviceError::Launch(format!(
                    "argument `{}` is an untyped `CUTensorMap`; declare it `tensor_map(T[rows][cols])` so the launcher builds it",
                    p.name()
                )));
            }
            (p, _) => {
                return Err(DeviceError::Launch(format!("argument `{}` does not match its parameter", p.name())));
            }
        }
    }
    let mut values = Vec::new();
    let mut si = 0;
    for (p, a) in abi.params.iter().zip(args.iter()) {
        values.push(match (p, a) {
            (AbiParam::Pointer { .. }, _) => {
                si += 1;
                Value::Slice(si - 1)
            }
            (AbiParam::TensorMap { map: Some(m), .. }, Arg::Tensor { dims, .. }) => {
                use cudarc::driver::DevicePtr;
                let (ptr, _sync) = slices[si].device_ptr(&stream);
                si += 1;
                Value::Map(Box::new(encode_map(m, dims, ptr)?))
            }
            (AbiParam::Scalar { ty, .. }, Arg::Scalar(_, bits)) => Value::Scalar(match ty.size() {
                1 => Scalar_::B8(*bits as u8),
                2 => Scalar_::B16(*bits as u16),
                4 => Scalar_::B32(*bits as u32),
                _ => Scalar_::B64(*bits),
            }),
            (p, _) => return Err(DeviceError::Launch(format!("argument `{}` does not match its parameter", p.name()))),
        });
    }
    let mut builder = stream.launch_builder(&func);
    for v in &values {
        match v {
            Value::Slice(i) => builder.arg(&slices[*i]),
            Value::Map(m) => builder.arg(&**m),
            Value::Scalar(Scalar_::B8(v)) => builder.arg(v),
            Value::Scalar(Scalar_::B16(v)) => builder.arg(v),
            Value::Scalar(Scalar_::B32(v)) => builder.arg(v),
            Value::Scalar(Scalar_::B64(v)) => builder.arg(v),
        };
    }
    let cfg = LaunchConfig {
        grid_dim: (grid.x, grid.y, grid.z),
        block_dim: (block.x, block.y, block.z),
        shared_mem_bytes: if abi.dynamic_smem { smem_bytes as u32 } else { 0 },
    };
    #[allow(unsafe_code)]
    // SAFETY: the kernel's parameters are exactly `abi.params` in order (the backend
    // generated both), each pointer argument is a device allocation of the buffer's full
    // size, and each scalar has the parameter's width. Out-of-bounds accesses by the kernel
    // are the program's own (the simulator checks bounds; CUDA does not).
    let launched = unsafe {
        if abi.cooperative { builder.launch_cooperative(cfg).map(|_| ()) } else { builder.launch(cfg).map(|_| ()) }
    };
    launched.map_err(drv)?;
    stream.synchronize().map_err(drv)?;
    let mut si = 0;
    for (p, a) in abi.params.iter().zip(args.iter_mut()) {
        match (p, &*a) {
            (AbiParam::Pointer { elem, .. }, Arg::Buffer(b)) => {
                let len = b.len();
                let bytes = stream.clone_dtoh(&slices[si]).map_err(drv)?;
                let bytes = &bytes[..len * elem.size() as usize];
                *a = Arg::Buffer(from_bytes(*elem, bytes));
                si += 1;
            }
            // A tensor map's array, which TMA stores may have written.
            (AbiParam::TensorMap { map: Some(m), .. }, Arg::Tensor { buffer, dims }) => {
                let len = buffer.len();
                let bytes = stream.clone_dtoh(&slices[si]).map_err(drv)?;
                let bytes = &bytes[..len * m.elem.size() as usize];
                *a = Arg::Tensor { buffer: from_bytes(m.elem, bytes), dims: dims.clone() };
                si += 1;
            }
            _ => {}
        }
    }
    Ok(())
}

/// A kernel argument as it is pushed.
enum Value {
    /// The uploaded buffer of this index.
    Slice(usize),
    /// A tensor map, passed by value.
    Map(Box<TensorMapArg>),
    /// A scalar.
    Scalar(Scalar_),
}

/// A `CUtensorMap` as the kernel takes it: 128 bytes, passed by value as a
/// `__grid_constant__` parameter (`prism_tensor_map` in the generated CUDA).
#[repr(C, align(64))]
struct TensorMapArg(cudarc::driver::sys::CUtensorMap);

#[allow(unsafe_code)]
// SAFETY: a `CUtensorMap` is plain bytes with the C layout the kernel parameter has; the
// driver copies the 128 bytes into the parameter space.
unsafe impl cudarc::driver::DeviceRepr for TensorMapArg {}

/// Encodes the tiled tensor map `m` over the row-major array at device address `ptr` with
/// dimensions `dims` (outermost first), as the generated launchers do.
fn encode_map(
    m: &prism_types::ty::TensorMapTy,
    dims: &[u64],
    ptr: cudarc::driver::sys::CUdeviceptr,
) -> Result<TensorMapArg, DeviceError> {
    use cudarc::driver::sys::{
        CUresult, CUtensorMapDataType as T, CUtensorMapFloatOOBfill, CUtensorMapInterleave, CUtensorMapL2promotion,
        CUtensorMapSwizzle as S,
    };
    m.check_dims(dims).map_err(|e| DeviceError::Launch(format!("the tensor map's array {e}")))?;
    let ty = match m.elem {
        Scalar::F16 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        Scalar::BF16 => T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        Scalar::F32 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        Scalar::F64 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        Scalar::I32 => T::CU_TENSOR_MAP_DATA_TYPE_INT32,
        Scalar::U32 => T::CU_TENSOR_MAP_DATA_TYPE_UINT32,
        Scalar::I64 => T::CU_TENSOR_MAP_DATA_TYPE_INT64,
        Scalar::U64 => T::CU_TENSOR_MAP_DATA_TYPE_UINT64,
        other => return Err(DeviceError::Launch(format!("TMA cannot copy `{}`", other.name()))),
    };
    let swizzle = match m.swizzle {
        32 => S::CU_TENSOR_MAP_SWIZZLE_32B,
        64 => S::CU_TENSOR_MAP_SWIZZLE_64B,
        128 => S::CU_TENSOR_MAP_SWIZZLE_128B,
        _ => S::CU_TENSOR_MAP_SWIZZLE_NONE,
    };
    // The driver takes dimensions innermost first, and the byte strides of the others.
    let global: Vec<u64> = dims.iter().rev().copied().collect();
    let mut strides = Vec::new();
    let mut stride = m.elem.size();
    for d in &global[..global.len() - 1] {
        stride *= d;
        strides.push(stride);
    }
    let boxd: Vec<u32> = m.box_dims().iter().rev().copied().collect();
    let ones = [1u32; 5];
    let mut map = TensorMapArg(cudarc::driver::sys::CUtensorMap { opaque: [0; 16] });
    #[allow(unsafe_code)]
    // SAFETY: every array has `rank` entries (`rank - 1` for the strides), `map` is a live,
    // 64-byte aligned `CUtensorMap`, and `ptr` is a device allocation holding the whole
    // array (its length is the product of `dims`, checked by `Module::validate`'s rules).
    let r = unsafe {
        cudarc::driver::sys::cuTensorMapEncodeTiled(
            &mut map.0,
            ty,
            u32::from(m.rank),
            ptr as *mut std::ffi::c_void,
            global.as_ptr(),
            strides.as_ptr(),
            boxd.as_ptr(),
            ones.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != CUresult::CUDA_SUCCESS {
        return Err(DeviceError::Driver(format!("cuTensorMapEncodeTiled: {r:?}")));
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_round_trip_through_device_bytes() {
        let b = Buffer::from_slice(&[-1i32, 2, i32::MIN]);
        let bytes = to_bytes(&b);
        assert_eq!(bytes.len(), 12);
        assert_eq!(from_bytes(Scalar::I32, &bytes).to_vec::<i32>(), Some(vec![-1, 2, i32::MIN]));
        let h = Buffer::from_slice(&[half::f16::from_f32(1.5), half::f16::from_f32(-2.0)]);
        assert_eq!(from_bytes(Scalar::F16, &to_bytes(&h)).to_bits(), h.to_bits());
        let t = Buffer::from_slice(&[true, false]);
        assert_eq!(to_bytes(&t), vec![1, 0]);
    }

    #[test]
    fn architectures() {
        assert_eq!(arch_for(9, 0), "sm_90a");
        assert_eq!(arch_for(8, 0), "sm_80");
        assert_eq!(arch_for(8, 9), "sm_89");
    }

    #[test]
    fn a_missing_driver_is_an_error_not_a_panic() {
        if driver_present() {
            return;
        }
        let p = prism_driver::assemble("").expect("an empty program");
        let err = launch(&p, "k", 1.into(), 32.into(), &mut [], std::path::Path::new("/nonexistent")).unwrap_err();
        assert_eq!(err, DeviceError::NoDriver);
        assert!(err.to_string().contains("no CUDA driver found"));
    }
}
