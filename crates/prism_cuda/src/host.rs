//! Host launchers (`prism build --emit-host`): one C++ function per kernel that checks the
//! launch against the kernel's `@requires` bound, raises the dynamic shared-memory limit when
//! the kernel needs more than 48 KiB, and launches, cooperatively when the kernel has a grid
//! barrier. They are appended to the `.cu` file behind `#ifndef __CUDACC_RTC__`.

use crate::abi::{AbiParam, KernelAbi};
use crate::ops::c_type;
use prism_types::ty::{Scalar, TensorMapTy};

/// The launcher's refusal of one array passed for two parameters of which the kernel
/// writes one. The kernel's proofs and its `__restrict__` parameters assume distinct
/// pointer parameters are distinct memory (`docs/soundness.md` §4.1); a launcher sees no
/// extents, so it can refuse equal addresses only, and a partial overlap stays the C++
/// caller's to avoid (`docs/cuda.md`). Null pointers are left to the kernel, as CUDA does.
fn alias_check(params: &[AbiParam], names: &[String]) -> String {
    let arrays: Vec<(String, bool)> = params
        .iter()
        .zip(names)
        .filter_map(|(p, n)| match p {
            AbiParam::Pointer { read_only, .. } => Some((n.clone(), *read_only)),
            // A typed map's array: a TMA store writes through it.
            AbiParam::TensorMap { map: Some(_), .. } => Some((n.clone(), false)),
            _ => None,
        })
        .collect();
    let mut conds = Vec::new();
    for (i, (a, a_ro)) in arrays.iter().enumerate() {
        for (b, b_ro) in &arrays[i + 1..] {
            if !(*a_ro && *b_ro) {
                conds.push(format!("((const void*){a} != nullptr && (const void*){a} == (const void*){b})"));
            }
        }
    }
    if conds.is_empty() {
        return String::new();
    }
    format!(
        "    // One array for two parameters of which the kernel writes one (argument-alias).\n    if ({}) {{\n        return cudaErrorInvalidValue;\n    }}\n",
        conds.join(" ||\n        ")
    )
}

/// The launcher text for `kernels`.
pub fn launchers(kernels: &[KernelAbi]) -> String {
    let mut s = String::new();
    s.push_str("#ifndef __CUDACC_RTC__\n");
    s.push_str("// ---- Host launchers: each checks the launch against the kernel's bound ----------------------\n");
    s.push_str("#include <cuda_runtime.h>\n");
    let typed_maps =
        kernels.iter().flat_map(|k| &k.params).any(|p| matches!(p, AbiParam::TensorMap { map: Some(_), .. }));
    if typed_maps {
        s.push_str(ENCODE);
    }
    s.push('\n');
    for k in kernels {
        let pn = launcher_param_names(k);
        let params: Vec<String> = k
            .params
            .iter()
            .zip(&pn)
            .map(|(p, n)| match p {
                AbiParam::Scalar { ty, .. } => format!("{} {n}", c_type(*ty)),
                AbiParam::Pointer { elem, read_only, .. } => {
                    format!("{}{}* {n}", if *read_only { "const " } else { "" }, c_type(*elem))
                }
                AbiParam::TensorMap { map: None, .. } => format!("const prism_tensor_map& {n}"),
                // A typed map is built here from the array and its dimensions.
                AbiParam::TensorMap { map: Some(m), .. } => {
                    let mut ps = vec![format!("const {}* {n}", c_type(m.elem))];
                    ps.extend(dim_names(n, m.rank).iter().map(|d| format!("unsigned long long {d}")));
                    ps.join(", ")
                }
            })
            .collect();
        let names: Vec<String> = k
            .params
            .iter()
            .zip(&pn)
            .map(|(p, n)| match p {
                AbiParam::TensorMap { map: Some(_), .. } => format!("prism_{n}_map"),
                _ => n.clone(),
            })
            .collect();
        let sym = &k.symbol;
        let dims = match k.shape.block {
            Some(b) => format!("(blocks of exactly {} x {} x {} threads)", b.x, b.y, b.z),
            None if k.shape.multi_dim => "(it reads coordinates: any dimensions)".into(),
            None => "(1-D: it reads no coordinate, so y and z must be 1)".into(),
        };
        s.push_str(&format!(
            "// Launches `{}` on `grid` blocks of `block` threads {dims}. Returns\n// cudaErrorInvalidConfiguration when the launch breaks the kernel's bound, and\n// cudaErrorInvalidValue when one array is passed for two parameters the kernel writes one of.\n",
            k.name
        ));
        let mut sig = vec!["dim3 grid".to_string(), "dim3 block".to_string()];
        sig.extend(params);
        sig.push("cudaStream_t stream = 0".into());
        s.push_str(&format!("inline cudaError_t prism_launch_{sym}({})\n{{\n", sig.join(", ")));
        // The linear counts the bound speaks of.
        s.push_str("    const unsigned long long blocks = (unsigned long long)grid.x * grid.y * grid.z;\n");
        s.push_str("    const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;\n");
        let mut conds = vec![
            "blocks == 0".to_string(),
            "threads == 0".into(),
            "threads > 1024".into(),
            "block.z > 64".into(),
            "grid.x > 2147483647u".into(),
            "grid.y > 65535".into(),
            "grid.z > 65535".into(),
            // With the limits above `blocks` cannot wrap, and with this one neither can the
            // product below (the conditions are tried in order).
            "blocks > 4294967295ull".into(),
            // `id()` over the grid is an `int`: at most 2^31 - 1 threads.
            format!("blocks * threads > {}ull", prism_ir::ir::MAX_LAUNCH_THREADS),
        ];
        if !k.shape.multi_dim {
            conds.push("grid.y != 1 || grid.z != 1 || block.y != 1 || block.z != 1".into());
        }
        if let Some(b) = k.shape.block {
            conds.push(format!("block.x != {} || block.y != {} || block.z != {}", b.x, b.y, b.z));
        }
        if k.t_mult > 1 {
            conds.push(format!("threads % {} != 0", k.t_mult));
        }
        if k.b_mult > 1 {
            conds.push(format!("blocks % {} != 0", k.b_mult));
        }
        if let Some(lb) = k.launch_bounds {
            conds.push(format!("threads > {lb}"));
        }
        // Index arithmetic the synchronisation relies on stays in its type up to this many
        // blocks.
        if let Some(max) = k.max_blocks {
            conds.push(format!("blocks > {max}u"));
        }
        // A kernel entered below grid[1] that writes memory allows one entry unit only.
        if let Some((b, t)) = k.exact_launch {
            conds.push(format!("blocks != {b}"));
            if let Some(t) = t {
                conds.push(format!("threads != {t}"));
            }
        }
        s.push_str(&format!(
            "    if ({}) {{\n        return cudaErrorInvalidConfiguration;\n    }}\n",
            conds.join(" || ")
        ));
        s.push_str(&alias_check(&k.params, &pn));
        for (p, n) in k.params.iter().zip(&pn) {
            if let AbiParam::TensorMap { map: Some(m), .. } = p {
                s.push_str(&encode_map(n, m));
            }
        }
        let dyn_smem = if let Some(d) = k.dyn_array {
            // A dynamic shared array: its bytes come from the count argument, checked
            // against the largest block allocation any GPU has before the device's own
            // opt-in limit is asked (so bad counts are refused without a device).
            let count = &names[d.count];
            s.push_str(&format!(
                "    if ((long long){count} < 0 || {off}ull + (unsigned long long)(long long){count} * {size}ull > {max}ull) {{\n        return cudaErrorInvalidConfiguration;\n    }}\n",
                off = d.offset,
                size = d.elem.size(),
                max = prism_ir::ir::MAX_BLOCK_SMEM,
            ));
            s.push_str(&format!(
                "    const size_t prism_dyn_bytes = {}ull + (size_t){count} * {}ull;\n",
                d.offset,
                d.elem.size()
            ));
            s.push_str("    int prism_dev = 0, prism_optin = 0;\n");
            s.push_str("    cudaError_t prism_dev_err = cudaGetDevice(&prism_dev);\n    if (prism_dev_err == cudaSuccess) prism_dev_err = cudaDeviceGetAttribute(&prism_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, prism_dev);\n    if (prism_dev_err != cudaSuccess) {\n        return prism_dev_err;\n    }\n");
            s.push_str("    if (prism_dyn_bytes > (size_t)prism_optin) {\n        return cudaErrorInvalidConfiguration;\n    }\n");
            "prism_dyn_bytes".to_string()
        } else if k.dynamic_smem {
            k.smem_bytes.to_string()
        } else {
            "0".to_string()
        };
        if k.dynamic_smem {
            s.push_str(&format!(
                "    cudaError_t prism_err = cudaFuncSetAttribute({sym}, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)({dyn_smem}));\n    if (prism_err != cudaSuccess) {{\n        return prism_err;\n    }}\n"
            ));
        }
        if k.cooperative {
            let args: Vec<String> = names.iter().map(|n| format!("(void*)&{n}")).collect();
            s.push_str(&format!(
                "    void* prism_args[] = {{{}}};\n",
                if args.is_empty() { "nullptr".into() } else { args.join(", ") }
            ));
            s.push_str(&format!(
                "    return cudaLaunchCooperativeKernel((const void*){sym}, grid, block, prism_args, {dyn_smem}, stream);\n"
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

/// The C++ names of a launcher's parameters: distinct from each other, from the launcher's
/// own parameters and locals that are not `prism_` names (`grid`, `block`, `stream`,
/// `blocks`, `threads`; a parameter of the name would hide them, review R39) and from the
/// dimension parameters of its typed maps (`a_rows` beside a map `a`; review R41). The
/// launcher's other locals all start with `prism_`, which no source name prints as.
fn launcher_param_names(k: &KernelAbi) -> Vec<String> {
    let mut taken: Vec<String> = ["grid", "block", "stream", "blocks", "threads"]
        .iter()
        .map(|n| n.to_string())
        .chain([k.symbol.clone()])
        .collect();
    let mut names = vec![String::new(); k.params.len()];
    // The maps first: a map's name decides its dimension parameters, which the others then
    // avoid, and which must not meet a name taken before them either.
    let maps = k.params.iter().enumerate().filter(|(_, p)| matches!(p, AbiParam::TensorMap { map: Some(_), .. }));
    let others = k.params.iter().enumerate().filter(|(_, p)| !matches!(p, AbiParam::TensorMap { map: Some(_), .. }));
    for (i, p) in maps.chain(others) {
        let dims = |n: &str| match p {
            AbiParam::TensorMap { map: Some(m), .. } => dim_names(n, m.rank),
            _ => Vec::new(),
        };
        let mut n = crate::analysis::sanitize(p.name());
        while taken.contains(&n) || dims(&n).iter().any(|d| taken.contains(d)) {
            n.push('_');
        }
        taken.extend(dims(&n));
        taken.push(n.clone());
        names[i] = n;
    }
    names
}

/// The launcher's parameter names for a map's dimensions, outermost first.
fn dim_names(name: &str, rank: u8) -> Vec<String> {
    let dims: &[&str] = if rank == 3 { &["depth", "rows", "cols"] } else { &["rows", "cols"] };
    dims.iter().map(|d| format!("{name}_{d}")).collect()
}

/// `cuTensorMapEncodeTiled`'s name for an element type.
fn data_type(elem: Scalar) -> &'static str {
    match elem {
        Scalar::F16 => "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
        Scalar::BF16 => "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
        Scalar::F32 => "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
        Scalar::F64 => "CU_TENSOR_MAP_DATA_TYPE_FLOAT64",
        Scalar::I32 => "CU_TENSOR_MAP_DATA_TYPE_INT32",
        Scalar::U32 => "CU_TENSOR_MAP_DATA_TYPE_UINT32",
        Scalar::I64 => "CU_TENSOR_MAP_DATA_TYPE_INT64",
        // The checker admits no other element type (`tensor-map`): `bool` is not copied.
        _ => "CU_TENSOR_MAP_DATA_TYPE_UINT64",
    }
}

/// The statements that build the typed map `name` from its array and dimensions into
/// `name_map`, returning the encoder's error from the launcher.
fn encode_map(name: &str, m: &TensorMapTy) -> String {
    let dims = dim_names(name, m.rank);
    // The driver takes dimensions innermost first and the strides of all but the innermost
    // in bytes.
    let inner: Vec<String> = dims.iter().rev().cloned().collect();
    let size = m.elem.size();
    let mut strides = Vec::new();
    let mut stride = format!("{}ull * {}", size, inner[0]);
    for d in &inner[1..] {
        strides.push(stride.clone());
        stride = format!("{stride} * {d}");
    }
    let boxd: Vec<String> = m.box_dims().iter().rev().map(|d| format!("{d}u")).collect();
    let swizzle = match m.swizzle {
        32 => "CU_TENSOR_MAP_SWIZZLE_32B",
        64 => "CU_TENSOR_MAP_SWIZZLE_64B",
        128 => "CU_TENSOR_MAP_SWIZZLE_128B",
        _ => "CU_TENSOR_MAP_SWIZZLE_NONE",
    };
    format!(
        "    prism_tensor_map prism_{name}_map;\n    {{\n        const cuuint64_t prism_dims[{r}] = {{{}}};\n        const cuuint64_t prism_strides[{s}] = {{{}}};\n        const cuuint32_t prism_box[{r}] = {{{}}};\n        cudaError_t prism_err = prism_encode_tiled(&prism_{name}_map, {}, {r}, {name}, prism_dims, prism_strides, prism_box, {swizzle});\n        if (prism_err != cudaSuccess) {{\n            return prism_err;\n        }}\n    }}\n",
        inner.join(", "),
        strides.join(", "),
        boxd.join(", "),
        data_type(m.elem),
        r = m.rank,
        s = m.rank - 1,
    )
}

/// The encoder the launchers of typed tensor maps call: `cuTensorMapEncodeTiled`, found
/// through the runtime's driver entry points so that a program links without `-lcuda`.
const ENCODE: &str = r#"#include <cuda.h>

// Builds a tiled TMA descriptor for a row-major array: elements of one box row are
// consecutive, out-of-bounds elements read as zero.
inline cudaError_t prism_encode_tiled(prism_tensor_map* map, CUtensorMapDataType type, cuuint32_t rank,
                                      const void* data, const cuuint64_t* dims, const cuuint64_t* strides,
                                      const cuuint32_t* box, CUtensorMapSwizzle swizzle)
{
    static decltype(&cuTensorMapEncodeTiled) encode = nullptr;
    if (encode == nullptr) {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult found;
        cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
        if (err != cudaSuccess || found != cudaDriverEntryPointSuccess) {
            return err != cudaSuccess ? err : cudaErrorNotSupported;
        }
        encode = reinterpret_cast<decltype(&cuTensorMapEncodeTiled)>(fn);
    }
    const cuuint32_t ones[5] = {1, 1, 1, 1, 1};
    CUresult r = encode(reinterpret_cast<CUtensorMap*>(map), type, rank, const_cast<void*>(data), dims, strides, box,
                        ones, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn ptr(name: &str, read_only: bool) -> AbiParam {
        AbiParam::Pointer { name: name.into(), elem: Scalar::F32, read_only }
    }

    /// `alias_check` with the parameters' own names.
    fn check_of(params: &[AbiParam]) -> String {
        let names: Vec<String> = params.iter().map(|p| p.name().to_string()).collect();
        alias_check(params, &names)
    }

    #[test]
    fn one_array_for_two_parameters_is_refused_when_one_is_written() {
        let check = check_of(&[
            ptr("x", true),
            ptr("y", true),
            AbiParam::Scalar { name: "n".into(), ty: Scalar::I32 },
            ptr("out", false),
        ]);
        assert!(check.contains("(const void*)x == (const void*)out"), "{check}");
        assert!(check.contains("(const void*)y == (const void*)out"), "{check}");
        // Two read-only parameters may share an array, as at a call.
        assert!(!check.contains("(const void*)x == (const void*)y"), "{check}");
        assert!(check.contains("cudaErrorInvalidValue"), "{check}");
        assert_eq!(check_of(&[ptr("x", true), ptr("y", true)]), "");
        assert!(check_of(&[ptr("a", false), ptr("b", false)]).contains("(const void*)a == (const void*)b"));
    }

    /// Parameters that sanitise alike, or take a name of the launcher's own, get distinct
    /// names in the launcher (review R39).
    #[test]
    fn launcher_parameters_have_distinct_names() {
        let abi = KernelAbi {
            params: vec![
                AbiParam::Scalar { name: "new".into(), ty: Scalar::I32 },
                AbiParam::Scalar { name: "new_".into(), ty: Scalar::I32 },
                AbiParam::Scalar { name: "blocks".into(), ty: Scalar::I32 },
                ptr("grid", false),
            ],
            name: "k".into(),
            symbol: "k".into(),
            smem_bytes: 0,
            dynamic_smem: false,
            dyn_array: None,
            cooperative: false,
            t_mult: 1,
            b_mult: 1,
            launch_bounds: None,
            needs_sm90a: false,
            exact_launch: None,
            max_blocks: None,
            shape: prism_ir::ir::ShapeRule { multi_dim: false, block: None },
        };
        let text = launchers(&[abi]);
        let sig = text.lines().find(|l| l.contains("prism_launch_k(")).expect("the launcher");
        assert!(sig.contains("int new_, int new__, int blocks_, float* grid_,"), "{sig}");
        assert!(text.contains("k<<<grid, block, 0, stream>>>(new_, new__, blocks_, grid_)"), "{text}");
    }
}
