//! Running Prism kernels on NVIDIA GPUs, and the CUDA toolchain around it.
//!
//! - [`toolchain`]: finding `nvcc` (`$PRISM_NVCC`, `nvcc` on `PATH`, or the cache that
//!   `scripts/install-nvcc.sh` fills) and compiling generated `.cu` text to PTX or cubin;
//!   [`toolchain::Compiler`] chooses nvcc or NVRTC for running.
//!
//! - [`nvrtc`]: compiling in-process with NVRTC (cudarc, loaded at run time from
//!   `$PRISM_NVRTC` or the cache `scripts/install-nvrtc.sh` fills) where nvcc is absent.
//!
//! - [`device`]: running a kernel on a GPU through the CUDA driver (cudarc with dynamic
//!   loading, so the crate builds and its tests run where there is no CUDA).
//!
//! - [`pointers`]: the same launch with arguments already on the GPU (device addresses
//!   another library owns), for the Python package's CuPy/PyTorch/DLPack arrays.
//!
//! Like `prism_cli` and `prism_test`, this crate does IO (files, processes, the driver).

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod device;
pub mod nvrtc;
pub mod pointers;
pub mod toolchain;
