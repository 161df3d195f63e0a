//! Hopper features reach the machine code (no GPU needed): the corpus's Hopper programs,
//! compiled for sm_90a with `prism build`'s flags and disassembled with `cuobjdump -sass`,
//! contain the instructions they ask for. nvcc drops some silently, so compiling is not
//! enough: `setmaxnreg` without a register cap at entry is ignored (warning C7508), and a
//! wgmma that nvcc cannot prove well-formed falls back to serialised code.
//!
//! | program | must contain |
//! | --- | --- |
//! | `rules/wgmma_bf16_tile` | `HGMMA`, and `FENCE.VIEW.ASYNC.S` (the proxy fence before its barriers) |
//! | `rules/corner_intrinsics_wgmma` | `HGMMA`, `USETMAXREG` (both directions) |
//! | `review/tma_load` | `UTMALDG` |
//! | `rules/tma_tensor_map` | `UTMALDG.2D`, `UTMALDG.3D` |
//! | `rules/tma_store` | `UTMASTG.2D` |
//! | `rules/wgmma_swizzled` | `HGMMA` at N = 64, 32, 16 for bf16 and at 64 for f16, `UTMALDG.2D` |
//! | `kernels/38_hgemm_warp_specialised` | `HGMMA.64x256x16`, `UTMALDG.2D`, `USETMAXREG` both ways, the mbarrier waits (`SYNCS.PHASECHK`), one group left in flight (`WARPGROUP.DEPBAR.LE gsb0, 0x1`), and no spills |
//! | `rules/pipeline_late` | `HGMMA.64x8x16`, `UTMALDG.2D`, `WARPGROUP.DEPBAR.LE gsb0, 0x1` |
//! | `rules/wgmma_tf32` | `HGMMA ... .F32.TF32` at N = 8, 136, 256 (canonical layout) and 64, 32, 16 (swizzled) |
//! | `kernels/43_gemm_tf32_wgmma` | `HGMMA.64x128x8.F32.TF32`, `UTMALDG.2D`, `SYNCS.PHASECHK`, and no spills |
//! | `kernels/48_gemm_tf32_warp_specialised` | `HGMMA.64x256x8.F32.TF32`, `UTMALDG.2D`, `USETMAXREG` both ways, `SYNCS.PHASECHK`, and no spills |
//! | `seeds/036_parallax_appB_hgemm_h100_partial` | `USETMAXREG` |
//!
//! No program may have its wgmmas serialised by ptxas (its "Potential Performance Loss"
//! notes C7510 to C7515: accumulators read between a wgmma and its wait, too few registers
//! for the wgmma pipeline): kernel 48 with a bounds test around its stores was.
//!
//! The programs whose wgmmas read only a pipeline's stages (38, 43, 48, `pipeline_late`)
//! have no `MEMBAR` between the HGMMAs of a group: such a wgmma carries no proxy fence of
//! its own (docs/cuda.md, "wgmma and the async proxy").
//!
//! The launchers `--emit-host` appends for typed tensor maps (which encode the map on the
//! host) are compiled too, into an object file: host code nvcc never sees otherwise.

mod common;

use prism_gpu::toolchain::{self, Emit};
use prism_test::{repo_root, synced};
use std::path::Path;
use std::process::Command;

fn main() {
    let tools = toolchain::find_nvcc().zip(toolchain::find_cuobjdump());
    common::run_with_tools("hopper_features_reach_the_sass", tools, "nvcc or cuobjdump", |(nvcc, cuobjdump)| {
        check(&nvcc, &cuobjdump)
    })
}

fn emitted(rel: &str, host: bool) -> Result<String, String> {
    let src = std::fs::read_to_string(repo_root().join("tests/ui/accept").join(format!("{rel}.prism")))
        .map_err(|e| e.to_string())?;
    let s = synced(rel, &src, &prism_driver::Options::default())?;
    let out = prism_cuda::emit(&s, &prism_cuda::Options { host, ..prism_cuda::Options::default() });
    if !out.errors.is_empty() {
        return Err(format!("{rel}: {:?}", out.errors));
    }
    Ok(out.text)
}

fn sass_of(nvcc: &Path, cuobjdump: &Path, rel: &str) -> Result<(String, String), String> {
    let text = emitted(rel, false)?;
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hopper-sass");
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let stem = rel.replace('/', "_");
    let (cu, cubin) = (tmp.join(format!("{stem}.cu")), tmp.join(format!("{stem}.cubin")));
    std::fs::write(&cu, &text).map_err(|e| e.to_string())?;
    let built =
        toolchain::compile(nvcc, &cu, &cubin, "sm_90a", Emit::Cubin).map_err(|e| format!("cannot run nvcc: {e}"))?;
    let log = built.log;
    if !built.ok {
        return Err(format!("nvcc failed on {rel}:\n{log}"));
    }
    let dis = Command::new(cuobjdump).arg("-sass").arg(&cubin).output().map_err(|e| e.to_string())?;
    Ok((String::from_utf8_lossy(&dis.stdout).into_owned(), log))
}

/// The programs whose wgmmas read only pipeline stages.
const STAGE_READERS: [&str; 4] = [
    "kernels/38_hgemm_warp_specialised",
    "kernels/43_gemm_tf32_wgmma",
    "kernels/48_gemm_tf32_warp_specialised",
    "rules/pipeline_late",
];

/// Whether a `MEMBAR` stands between two HGMMAs of one group (an HGMMA without `gsb0` is
/// followed by more of its group; the one with `gsb0` ends it).
fn fenced_within_a_group(sass: &str) -> bool {
    let mut inside = false;
    for line in sass.lines() {
        if line.contains("HGMMA.") {
            inside = !line.contains("gsb0");
        } else if line.contains("MEMBAR") && inside {
            return true;
        }
    }
    false
}

fn check(nvcc: &Path, cuobjdump: &Path) -> Result<(), String> {
    let cases: [(&str, &[&str]); 12] = [
        ("rules/wgmma_bf16_tile", &["HGMMA.64x32x16.F32.BF16", "FENCE.VIEW.ASYNC.S"]),
        ("rules/corner_intrinsics_wgmma", &["HGMMA.64x64x16.F32.BF16", "USETMAXREG.DEALLOC", "USETMAXREG.TRY_ALLOC"]),
        ("review/tma_load", &["UTMALDG.2D"]),
        ("rules/tma_tensor_map", &["UTMALDG.2D", "UTMALDG.3D"]),
        ("rules/tma_store", &["UTMALDG.2D", "UTMASTG.2D"]),
        (
            "kernels/38_hgemm_warp_specialised",
            &[
                "HGMMA.64x256x16.F32.BF16",
                "UTMALDG.2D",
                "USETMAXREG.DEALLOC",
                "USETMAXREG.TRY_ALLOC",
                "SYNCS.PHASECHK",
                // Late stages: one group stays in flight (`wgmma_wait(1)`).
                "WARPGROUP.DEPBAR.LE gsb0, 0x1",
            ],
        ),
        ("rules/pipeline_late", &["HGMMA.64x8x16.F32.BF16", "UTMALDG.2D", "WARPGROUP.DEPBAR.LE gsb0, 0x1"]),
        (
            "rules/wgmma_swizzled",
            &[
                "HGMMA.64x64x16.F32.BF16",
                "HGMMA.64x32x16.F32.BF16",
                "HGMMA.64x16x16.F32.BF16",
                // f16 inputs: the type is the default, so no suffix.
                "HGMMA.64x64x16.F32 ",
                "UTMALDG.2D",
            ],
        ),
        ("seeds/036_parallax_appB_hgemm_h100_partial", &["USETMAXREG.DEALLOC"]),
        // tf32: k8, no transpose immediates (K-major only).
        (
            "rules/wgmma_tf32",
            &[
                "HGMMA.64x8x8.F32.TF32",
                "HGMMA.64x136x8.F32.TF32",
                "HGMMA.64x256x8.F32.TF32",
                "HGMMA.64x64x8.F32.TF32",
                "HGMMA.64x32x8.F32.TF32",
                "HGMMA.64x16x8.F32.TF32",
            ],
        ),
        ("kernels/43_gemm_tf32_wgmma", &["HGMMA.64x128x8.F32.TF32", "UTMALDG.2D", "SYNCS.PHASECHK"]),
        (
            "kernels/48_gemm_tf32_warp_specialised",
            &["HGMMA.64x256x8.F32.TF32", "UTMALDG.2D", "USETMAXREG.TRY_ALLOC", "USETMAXREG.DEALLOC", "SYNCS.PHASECHK"],
        ),
    ];
    let mut failures = Vec::new();
    for (rel, want) in cases {
        let (sass, log) = sass_of(nvcc, cuobjdump, rel)?;
        for w in want {
            if !sass.contains(w) {
                failures.push(format!("{rel}: no `{w}` in the SASS"));
            }
        }
        // A kernel whose registers were cut (setmaxnreg, launch bounds) must not spill:
        // ptxas reports every kernel's spills with -v, which `sass_of` does not pass, so the
        // SASS's local-memory traffic is the test.
        if sass.contains("STL") || sass.contains("LDL") {
            failures.push(format!("{rel}: local-memory traffic (spills) in the SASS"));
        }
        if log.contains("C7508") {
            failures.push(format!("{rel}: ptxas ignored setmaxnreg:\n{log}"));
        }
        if log.contains("wgmma.mma_async instructions are serialized") {
            failures.push(format!("{rel}: ptxas serialised the wgmmas:\n{log}"));
        }
        // The wgmmas of a pipeline's stages carry no proxy fence of their own (docs/cuda.md,
        // "wgmma and the async proxy"): no `MEMBAR` between the HGMMAs of one group.
        if STAGE_READERS.contains(&rel) && fenced_within_a_group(&sass) {
            failures.push(format!("{rel}: a MEMBAR between the HGMMAs of one group"));
        }
    }
    // The register count each reallocating kernel starts with is the one the
    // `register-reallocation` rule assumes (prism_sync::entry_count): ptxas gives such a
    // kernel the smaller of its launch bound's cap and its largest `setmaxnreg_inc`.
    for rel in [
        "rules/corner_intrinsics_wgmma",
        "rules/split-level",
        "kernels/38_hgemm_warp_specialised",
        "kernels/48_gemm_tf32_warp_specialised",
        "seeds/036_parallax_appB_hgemm_h100_partial",
    ] {
        // The cases above compiled most of these already; their cubins are still there.
        if !cases.iter().any(|(c, _)| *c == rel) {
            sass_of(nvcc, cuobjdump, rel)?;
        }
        let src = std::fs::read_to_string(repo_root().join("tests/ui/accept").join(format!("{rel}.prism")))
            .map_err(|e| e.to_string())?;
        let s = synced(rel, &src, &prism_driver::Options::default())?;
        let cubin =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("hopper-sass").join(format!("{}.cubin", rel.replace('/', "_")));
        let usage =
            Command::new(cuobjdump).arg("--dump-resource-usage").arg(&cubin).output().map_err(|e| e.to_string())?;
        let usage = String::from_utf8_lossy(&usage.stdout).into_owned();
        let mut checked = 0;
        for (i, f) in s.ir().functions.iter().enumerate() {
            let Some(want) = prism_sync::entry_count(s.ir(), i) else { continue };
            let regs = usage
                .split("Function ")
                .find(|part| part.starts_with(&format!("{}:", f.name)))
                .and_then(|part| part.split("REG:").nth(1))
                .and_then(|r| r.split_whitespace().next())
                .and_then(|r| r.parse::<u32>().ok());
            match regs {
                Some(got) if got == want => checked += 1,
                Some(got) => {
                    failures.push(format!("{rel}: `{}` starts with {got} registers, the rule assumes {want}", f.name))
                }
                None => failures.push(format!("{rel}: no register count for `{}` in:\n{usage}", f.name)),
            }
        }
        if checked == 0 && !failures.iter().any(|f| f.starts_with(rel)) {
            failures.push(format!("{rel}: no kernel that reallocates registers"));
        }
    }
    // The host launchers of typed tensor maps compile (the map is encoded on the host).
    let text = emitted("rules/tma_tensor_map", true)?;
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hopper-sass");
    let (cu, obj) = (tmp.join("tma_launchers.cu"), tmp.join("tma_launchers.o"));
    std::fs::write(&cu, &text).map_err(|e| e.to_string())?;
    let built =
        toolchain::compile(nvcc, &cu, &obj, "sm_90a", Emit::Object).map_err(|e| format!("cannot run nvcc: {e}"))?;
    if !built.ok {
        failures.push(format!("the tensor-map launchers do not compile:\n{}", built.log));
    }
    if !text.contains("prism_encode_tiled(&prism_a_map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, a, prism_dims, prism_strides, prism_box, CU_TENSOR_MAP_SWIZZLE_NONE)")
        || !text.contains("prism_encode_tiled(&prism_s128_map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, s128, prism_dims, prism_strides, prism_box, CU_TENSOR_MAP_SWIZZLE_128B)")
    {
        failures.push("the launchers do not encode the maps their parameters declare".into());
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n")) }
}
