//! Launching with memory that is already on the GPU: device pointers another library owns
//! (CuPy, PyTorch, Numba, JAX arrays, through `__cuda_array_interface__` or DLPack in the
//! Python package). Nothing is copied: the kernel reads and writes the caller's memory.
//!
//! [`crate::device::launch`] takes host buffers (the simulator's arguments), uploads them and
//! downloads them after the run; [`launch`] here takes device addresses instead. The rest is
//! the same pipeline: the program's CUDA compiled with nvcc for the device's architecture,
//! loaded through the driver (cudarc, loaded at run time), launched cooperatively when it has
//! a grid barrier.
//!
//! Ordering with the caller's streams: the launch waits for the whole device to be idle
//! before it starts (so work other streams queued on the arrays is done) and for its own
//! stream after, so the memory is complete when [`launch`] returns. That is coarser than
//! the CUDA array interface's stream handshake, and always correct.
//!
//! What is left for later: typed tensor-map parameters (`tensor_map(T[..][..])`) would need
//! the map encoded over the caller's pointer with its dimensions; they are refused with a
//! [`DeviceError::Launch`] that says so.

use crate::device::{DeviceError, arch_for, driver_present};
use prism_cuda::AbiParam;
use prism_types::ty::Scalar;

/// A kernel argument for [`launch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceArg {
    /// A scalar of this type, as register bits (`prism_interp::Arg::Scalar`'s encoding).
    Scalar(Scalar, u64),
    /// A device address (`CUdeviceptr`) of elements of `elem`, in memory the caller
    /// allocated on the device [`launch`] runs on. Its extent is the caller's business, as
    /// in CUDA: the launch cannot check accesses against it.
    Pointer {
        /// The element type.
        elem: Scalar,
        /// The device address of the first element.
        ptr: u64,
    },
}

/// Runs `kernel` of `program` on GPU `ordinal` over `grid` blocks of `block` threads, with
/// pointer arguments that are device addresses. `work` is a directory for the generated
/// files. The arguments must match the kernel's parameters in order and type.
pub fn launch(
    program: &prism_driver::Synced,
    kernel: &str,
    grid: prism_ir::ir::Dim3,
    block: prism_ir::ir::Dim3,
    args: &[DeviceArg],
    ordinal: usize,
    work: &std::path::Path,
) -> Result<(), DeviceError> {
    if !driver_present() {
        return Err(DeviceError::NoDriver);
    }
    let out = prism_cuda::emit(program, &prism_cuda::Options::default());
    if !out.errors.is_empty() {
        let msgs: Vec<String> = out.errors.iter().map(|e| e.message.clone()).collect();
        return Err(DeviceError::Launch(msgs.join("; ")));
    }
    let abi = out
        .kernels
        .iter()
        .find(|k| k.name == kernel)
        .ok_or_else(|| DeviceError::Launch(format!("no kernel named `{kernel}`")))?;
    abi.check_launch(grid, block).map_err(DeviceError::Launch)?;
    check_args(&abi.params, args)?;
    let smem_bytes = match abi.dyn_array {
        Some(d) => {
            let n = match args.get(d.count) {
                Some(DeviceArg::Scalar(_, bits)) => i64::from(*bits as u32 as i32),
                _ => 0,
            };
            d.bytes(n, prism_ir::ir::MAX_BLOCK_SMEM).map_err(DeviceError::Launch)?
        }
        None => abi.smem_bytes,
    };
    let ctx = cudarc::driver::CudaContext::new(ordinal).map_err(|e| DeviceError::NoDevice(e.to_string()))?;
    let (major, minor) = ctx.compute_capability().map_err(|e| DeviceError::NoDevice(e.to_string()))?;
    let cubin = crate::device::compile(&out.text, &arch_for(major, minor), work)?;

    use cudarc::driver::{LaunchConfig, PushKernelArg};
    let drv = |e: cudarc::driver::DriverError| DeviceError::Driver(e.to_string());
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_file(cubin)).map_err(drv)?;
    let func = module.load_function(&abi.symbol).map_err(drv)?;
    if abi.dynamic_smem {
        func.set_attribute(
            cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            smem_bytes as i32,
        )
        .map_err(drv)?;
    }
    // Each argument at the width the kernel takes it: a pointer is 8 bytes, a scalar its
    // type's size.
    let values: Vec<Value> = args
        .iter()
        .map(|a| match *a {
            DeviceArg::Pointer { ptr, .. } => Value::B64(ptr),
            DeviceArg::Scalar(ty, bits) => match ty.size() {
                1 => Value::B8(bits as u8),
                2 => Value::B16(bits as u16),
                4 => Value::B32(bits as u32),
                _ => Value::B64(bits),
            },
        })
        .collect();
    // Work queued on other streams (the caller's library filling the arrays) finishes first.
    ctx.synchronize().map_err(drv)?;
    let stream = ctx.default_stream();
    let mut builder = stream.launch_builder(&func);
    for v in &values {
        match v {
            Value::B8(v) => builder.arg(v),
            Value::B16(v) => builder.arg(v),
            Value::B32(v) => builder.arg(v),
            Value::B64(v) => builder.arg(v),
        };
    }
    let cfg = LaunchConfig {
        grid_dim: (grid.x, grid.y, grid.z),
        block_dim: (block.x, block.y, block.z),
        shared_mem_bytes: if abi.dynamic_smem { smem_bytes as u32 } else { 0 },
    };
    #[allow(unsafe_code)]
    // SAFETY: the kernel's parameters are `abi.params` in order and `check_args` matched each
    // argument to its parameter: a scalar of the parameter's type pushed at its width, an
    // 8-byte device address for each pointer. The addresses are the caller's promise (an
    // array interface's `data`): a wrong one faults on the device and comes back as a driver
    // error, it cannot touch host memory. Out-of-bounds accesses by the kernel are the
    // program's own (the simulator checks bounds; CUDA does not).
    let launched = unsafe {
        if abi.cooperative { builder.launch_cooperative(cfg).map(|_| ()) } else { builder.launch(cfg).map(|_| ()) }
    };
    launched.map_err(drv)?;
    stream.synchronize().map_err(drv)
}

/// An argument as it is pushed.
enum Value {
    B8(u8),
    B16(u16),
    B32(u32),
    B64(u64),
}

/// Checks that `args` fit `params`: count, kinds, element and scalar types.
pub fn check_args(params: &[AbiParam], args: &[DeviceArg]) -> Result<(), DeviceError> {
    if params.len() != args.len() {
        return Err(DeviceError::Launch(format!(
            "the kernel takes {} arguments, but {} were given",
            params.len(),
            args.len()
        )));
    }
    for (p, a) in params.iter().zip(args) {
        match (p, a) {
            (AbiParam::Scalar { ty, .. }, DeviceArg::Scalar(t, _)) if ty == t => {}
            (AbiParam::Pointer { elem, .. }, DeviceArg::Pointer { elem: e, .. }) if elem == e => {}
            (AbiParam::Scalar { name, ty }, _) => {
                return Err(DeviceError::Launch(format!("argument `{name}` must be a `{}` scalar", ty.name())));
            }
            (AbiParam::Pointer { name, elem, .. }, _) => {
                return Err(DeviceError::Launch(format!(
                    "argument `{name}` must be a device array of `{}`",
                    elem.name()
                )));
            }
            (AbiParam::TensorMap { name, .. }, _) => {
                return Err(DeviceError::Launch(format!(
                    "argument `{name}` is a tensor map, which a launch with device pointers cannot build yet; pass host arrays (they are copied to the GPU and back)"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_matched_to_parameters() {
        let params = vec![
            AbiParam::Scalar { name: "n".into(), ty: Scalar::I32 },
            AbiParam::Pointer { name: "x".into(), elem: Scalar::F32, read_only: false },
        ];
        let ok = [DeviceArg::Scalar(Scalar::I32, 4), DeviceArg::Pointer { elem: Scalar::F32, ptr: 0x1000 }];
        assert_eq!(check_args(&params, &ok), Ok(()));
        let err = check_args(&params, &ok[..1]).unwrap_err().to_string();
        assert!(err.contains("takes 2 arguments, but 1 were given"), "{err}");
        let wrong = [DeviceArg::Scalar(Scalar::I32, 4), DeviceArg::Pointer { elem: Scalar::F64, ptr: 0x1000 }];
        assert!(check_args(&params, &wrong).unwrap_err().to_string().contains("`x` must be a device array of `float`"));
    }

    #[test]
    fn a_missing_driver_is_an_error_not_a_panic() {
        if driver_present() {
            return;
        }
        let p = prism_driver::assemble("").expect("an empty program");
        let err = launch(&p, "k", 1.into(), 32.into(), &[], 0, std::path::Path::new("/nonexistent")).unwrap_err();
        assert_eq!(err, DeviceError::NoDriver);
    }
}
