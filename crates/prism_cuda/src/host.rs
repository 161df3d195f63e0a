//! Host launchers (`prism build --emit-host`): one C++ function per kernel that checks the
//! launch against the kernel's `@requires` bound, raises the dynamic shared-memory limit when
//! the kernel needs more than 48 KiB, and launches, cooperatively when the kernel has a grid
//! barrier. They are appended to the `.cu` file behind `#ifndef __CUDACC_RTC__`.

use crate::abi::{AbiParam, KernelAbi};
use crate::ops::c_type;

/// The launcher text for `kernels`.
pub fn launchers(kernels: &[KernelAbi]) -> String {
    let mut s = String::new();
    s.push_str("#ifndef __CUDACC_RTC__\n");
    s.push_str("// ---- Host launchers: each checks the launch against the kernel's bound ----------------------\n");
    s.push_str("#include <cuda_runtime.h>\n\n");
    for k in kernels {
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| match p {
                AbiParam::Scalar { name, ty } => format!("{} {}", c_type(*ty), crate::analysis::sanitize(name)),
                AbiParam::Pointer { name, elem, read_only } => format!(
                    "{}{}* {}",
                    if *read_only { "const " } else { "" },
                    c_type(*elem),
                    crate::analysis::sanitize(name)
                ),
                AbiParam::TensorMap { name } => format!("const prism_tensor_map& {}", crate::analysis::sanitize(name)),
            })
            .collect();
        let names: Vec<String> = k.params.iter().map(|p| crate::analysis::sanitize(p.name())).collect();
        let sym = &k.symbol;
        s.push_str(&format!(
            "// Launches `{}` on `grid` blocks of `block` threads (1-D). Returns\n// cudaErrorInvalidConfiguration when the launch breaks the kernel's bound.\n",
            k.name
        ));
        let mut sig = vec!["unsigned grid".to_string(), "unsigned block".to_string()];
        sig.extend(params);
        sig.push("cudaStream_t stream = 0".into());
        s.push_str(&format!("inline cudaError_t prism_launch_{sym}({})\n{{\n", sig.join(", ")));
        let mut conds = vec![
            "grid == 0".to_string(),
            "block == 0".into(),
            "block > 1024".into(),
            // `id()` over the grid is an `int`: at most 2^31 - 1 threads.
            format!("(unsigned long long)grid * block > {}ull", prism_ir::ir::MAX_LAUNCH_THREADS),
        ];
        if k.t_mult > 1 {
            conds.push(format!("block % {} != 0", k.t_mult));
        }
        if k.b_mult > 1 {
            conds.push(format!("grid % {} != 0", k.b_mult));
        }
        if let Some(lb) = k.launch_bounds {
            conds.push(format!("block > {lb}"));
        }
        // Index arithmetic the synchronisation relies on stays in its type up to this many
        // blocks.
        if let Some(max) = k.max_blocks {
            conds.push(format!("grid > {max}u"));
        }
        // A kernel entered below grid[1] that writes memory allows one entry unit only.
        if let Some((blocks, threads)) = k.exact_launch {
            conds.push(format!("grid != {blocks}"));
            if let Some(t) = threads {
                conds.push(format!("block != {t}"));
            }
        }
        s.push_str(&format!(
            "    if ({}) {{\n        return cudaErrorInvalidConfiguration;\n    }}\n",
            conds.join(" || ")
        ));
        let dyn_smem = if k.dynamic_smem { k.smem_bytes } else { 0 };
        if k.dynamic_smem {
            s.push_str(&format!(
                "    cudaError_t err = cudaFuncSetAttribute({sym}, cudaFuncAttributeMaxDynamicSharedMemorySize, {dyn_smem});\n    if (err != cudaSuccess) {{\n        return err;\n    }}\n"
            ));
        }
        if k.cooperative {
            let args: Vec<String> = names.iter().map(|n| format!("(void*)&{n}")).collect();
            s.push_str(&format!(
                "    void* args[] = {{{}}};\n",
                if args.is_empty() { "nullptr".into() } else { args.join(", ") }
            ));
            s.push_str(&format!(
                "    return cudaLaunchCooperativeKernel((const void*){sym}, dim3(grid), dim3(block), args, {dyn_smem}, stream);\n"
            ));
        } else {
            s.push_str(&format!("    {sym}<<<grid, block, {dyn_smem}, stream>>>({});\n", names.join(", ")));
            s.push_str("    return cudaGetLastError();\n");
        }
        s.push_str("}\n\n");
    }
    s.push_str("#endif\n");
    s
}
