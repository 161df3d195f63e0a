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
    /// A device address (`CUdeviceptr`) of `len` elements of `elem`, in memory the caller
    /// allocated on the device [`launch`] runs on. The launch cannot check the kernel's
    /// accesses against the extent (CUDA does not bound accesses); it uses it to refuse
    /// arguments that overlap ([`check_args`]).
    Pointer {
        /// The element type.
        elem: Scalar,
        /// The device address of the first element.
        ptr: u64,
        /// How many elements the caller's array holds from `ptr` on.
        len: u64,
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
    // Everything that can be refused without a GPU is refused first, so that a wrong call
    // says what is wrong on any machine.
    let out = prism_cuda::emit(program, &crate::device::launch_options(kernel));
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
    if !driver_present() {
        return Err(DeviceError::NoDriver);
    }
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

/// Checks that `args` fit `params`: count, kinds, element and scalar types, and that no two
/// pointer arguments overlap where either parameter is written.
///
/// The checker proves a kernel race-free, and inference places its barriers, assuming that
/// different pointer parameters are different memory (`docs/soundness.md` §4.1), and the
/// generated CUDA declares them `__restrict__`. Launches from host buffers make one device
/// buffer per argument, so that holds by construction; here the caller chooses the
/// addresses, so the launch checks it. Two read-only parameters may share memory, as at a
/// call (`argument-alias`).
pub fn check_args(params: &[AbiParam], args: &[DeviceArg]) -> Result<(), DeviceError> {
    check_kinds(params, args)?;
    let arrays: Vec<(&str, bool, std::ops::Range<u128>)> = params
        .iter()
        .zip(args)
        .filter_map(|(p, a)| match (p, *a) {
            (AbiParam::Pointer { name, read_only, .. }, DeviceArg::Pointer { elem, ptr, len }) => {
                // In u128 so that no address and extent can wrap around.
                let end = u128::from(ptr) + u128::from(len) * elem.size() as u128;
                Some((name.as_str(), *read_only, u128::from(ptr)..end))
            }
            _ => None,
        })
        .collect();
    if let Some((a, _, r)) = arrays.iter().find(|(_, _, r)| r.end > 1u128 << 64) {
        return Err(DeviceError::Arguments(format!(
            "argument `{a}` at {:#x} would extend past the end of the address space: its extent is wrong",
            r.start
        )));
    }
    for (i, (a, a_ro, ra)) in arrays.iter().enumerate() {
        for (b, b_ro, rb) in &arrays[i + 1..] {
            // Empty arrays hold no memory, so they share none.
            let overlap = ra.start < rb.end && rb.start < ra.end && !ra.is_empty() && !rb.is_empty();
            if overlap && !(*a_ro && *b_ro) {
                let written = match (a_ro, b_ro) {
                    (false, false) => "the kernel writes both".to_string(),
                    (false, true) => format!("the kernel writes `{a}`"),
                    _ => format!("the kernel writes `{b}`"),
                };
                return Err(DeviceError::Arguments(format!(
                    "arguments `{a}` and `{b}` overlap in device memory (bytes {:#x}..{:#x} and {:#x}..{:#x}) and {written}: \
                     a kernel's pointer parameters must be distinct memory unless both are only read (argument-alias); \
                     pass separate arrays",
                    ra.start, ra.end, rb.start, rb.end
                )));
            }
        }
    }
    Ok(())
}

/// Checks the count, kinds and types of `args` against `params`.
fn check_kinds(params: &[AbiParam], args: &[DeviceArg]) -> Result<(), DeviceError> {
    if params.len() != args.len() {
        return Err(DeviceError::Arguments(format!(
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
                return Err(DeviceError::Arguments(format!("argument `{name}` must be a `{}` scalar", ty.name())));
            }
            (AbiParam::Pointer { name, elem, .. }, _) => {
                return Err(DeviceError::Arguments(format!(
                    "argument `{name}` must be a device array of `{}`",
                    elem.name()
                )));
            }
            (AbiParam::TensorMap { name, .. }, _) => {
                return Err(DeviceError::Arguments(format!(
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
        let ok = [DeviceArg::Scalar(Scalar::I32, 4), DeviceArg::Pointer { elem: Scalar::F32, ptr: 0x1000, len: 4 }];
        assert_eq!(check_args(&params, &ok), Ok(()));
        let err = check_args(&params, &ok[..1]).unwrap_err().to_string();
        assert!(err.contains("takes 2 arguments, but 1 were given"), "{err}");
        let wrong = [DeviceArg::Scalar(Scalar::I32, 4), DeviceArg::Pointer { elem: Scalar::F64, ptr: 0x1000, len: 4 }];
        assert!(check_args(&params, &wrong).unwrap_err().to_string().contains("`x` must be a device array of `float`"));
    }

    /// A kernel reading `x` and writing `out`, one element per thread.
    const COPY: &str = "@prism(\"global\")\n@requires(grid[1], block[1], thread[1])\ndef copy(x : ptr(const(int)), y : ptr(const(int)), out : ptr(int)):\n    t : int @ thread[1] = id()\n    with partition(out, p=thread[1], f=lambda i: t + i) as o:\n        with group(thread[1]):\n            o[0] = x[t] + y[t]\n";

    fn copy_program() -> prism_driver::Synced {
        let (_, problems, synced) = prism_driver::compile_text("copy.prism", COPY, &prism_driver::Options::default());
        assert!(!problems.has_errors(), "{problems:?}");
        synced.expect("the copy kernel compiles")
    }

    fn int_array(ptr: u64, len: u64) -> DeviceArg {
        DeviceArg::Pointer { elem: Scalar::I32, ptr, len }
    }

    #[test]
    fn a_missing_driver_is_an_error_not_a_panic() {
        if driver_present() {
            return;
        }
        let p = copy_program();
        let args = [int_array(0x1000, 32), int_array(0x1000, 32), int_array(0x2000, 32)];
        let err = launch(&p, "copy", 1.into(), 32.into(), &args, 0, std::path::Path::new("/nonexistent")).unwrap_err();
        assert_eq!(err, DeviceError::NoDriver);
    }

    /// The checker's proofs assume distinct pointer parameters are distinct memory; a launch
    /// with the caller's addresses must not let an overlap through, however it is arranged.
    #[test]
    fn overlapping_arrays_are_refused_when_one_is_written() {
        let params = vec![
            AbiParam::Pointer { name: "x".into(), elem: Scalar::I32, read_only: true },
            AbiParam::Pointer { name: "y".into(), elem: Scalar::I32, read_only: true },
            AbiParam::Pointer { name: "out".into(), elem: Scalar::I32, read_only: false },
        ];
        let check = |x: DeviceArg, y: DeviceArg, out: DeviceArg| check_args(&params, &[x, y, out]);
        // Distinct, adjacent arrays; and two read-only arguments sharing memory.
        assert_eq!(check(int_array(0x1000, 64), int_array(0x1100, 64), int_array(0x1200, 64)), Ok(()));
        assert_eq!(check(int_array(0x1000, 64), int_array(0x1000, 64), int_array(0x1100, 64)), Ok(()));
        assert_eq!(check(int_array(0x1000, 64), int_array(0x1004, 8), int_array(0x1100, 64)), Ok(()));
        // The same array for an input and the output, in either order of parameters.
        let err = check(int_array(0x1000, 64), int_array(0x2000, 64), int_array(0x1000, 64)).unwrap_err();
        assert!(err.to_string().contains("`x` and `out` overlap"), "{err}");
        assert!(err.to_string().contains("argument-alias"), "{err}");
        let err = check(int_array(0x2000, 64), int_array(0x1000, 64), int_array(0x1000, 64)).unwrap_err();
        assert!(err.to_string().contains("`y` and `out` overlap"), "{err}");
        // A view into the middle of the output, and one reaching its first byte from below.
        assert!(check(int_array(0x1010, 1), int_array(0x3000, 1), int_array(0x1000, 64)).is_err());
        assert!(check(int_array(0x0f00, 65), int_array(0x3000, 1), int_array(0x1000, 64)).is_err());
        // One byte short of touching: fine.
        assert_eq!(check(int_array(0x0f00, 64), int_array(0x3000, 1), int_array(0x1000, 64)), Ok(()));
        // An extent past the top of the address space cannot wrap around to look disjoint.
        let err = check(int_array(u64::MAX - 3, u64::MAX), int_array(0x3000, 1), int_array(0x1000, 64)).unwrap_err();
        assert!(err.to_string().contains("past the end of the address space"), "{err}");
        assert_eq!(check(int_array(u64::MAX - 3, 1), int_array(0x3000, 1), int_array(0x1000, 64)), Ok(()));
        // An empty array holds no memory, wherever it points.
        assert_eq!(check(int_array(0x1000, 0), int_array(0x3000, 1), int_array(0x1000, 64)), Ok(()));
    }

    #[test]
    fn overlaps_are_refused_before_the_driver_is_asked() {
        let p = copy_program();
        let args = [int_array(0x1000, 32), int_array(0x3000, 32), int_array(0x1040, 32)];
        let err = launch(&p, "copy", 1.into(), 32.into(), &args, 0, std::path::Path::new("/nonexistent")).unwrap_err();
        assert!(err.to_string().contains("`x` and `out` overlap in device memory"), "{err}");
    }
}
