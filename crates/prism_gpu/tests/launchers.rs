//! The host launchers `--emit-host` writes refuse the launches the kernel's bound, CUDA's
//! limits and its dimensions rule out, before anything reaches the driver: a host program
//! (no GPU needed) calls them with bad shapes and expects `cudaErrorInvalidConfiguration`
//! from each, and with one array for two parameters the kernel writes one of, and expects
//! `cudaErrorInvalidValue`. The simulator's launch check refuses the same shapes
//! (`prism_interp/tests/launch.rs`); this is the same promise for programs launched from
//! C++.

mod common;

use prism_gpu::toolchain::{self, Emit};

use std::path::Path;
use std::process::Command;

fn main() {
    common::run_with_tools("host_launchers_refuse_bad_shapes", toolchain::find_nvcc(), "nvcc", |nvcc| check(&nvcc))
}

/// Calls of `dynamic_shared.prism`'s launcher that must be refused, each with why.
const REFUSED_DYNAMIC: &[(&str, &str)] = &[
    ("a negative dynamic shared count", "prism_launch_staged_sums(dim3(1), dim3(64), nullptr, nullptr, -1)"),
    ("a dynamic shared count past 227 KiB", "prism_launch_staged_sums(dim3(1), dim3(64), nullptr, nullptr, 100000)"),
    (
        "a dynamic shared count whose bytes pass 2^31",
        "prism_launch_staged_sums(dim3(1), dim3(64), nullptr, nullptr, 2147483647)",
    ),
];

/// Calls of `launch_coords.prism`'s launchers that must be refused, each with why.
const REFUSED: &[(&str, &str)] = &[
    ("a 2-D grid of a kernel that reads no coordinate", "prism_launch_plain(dim3(2, 2), dim3(32), nullptr)"),
    ("a 2-D block of it", "prism_launch_plain(dim3(4), dim3(16, 2), nullptr)"),
    ("a z extent of it", "prism_launch_plain(dim3(1, 1, 2), dim3(32), nullptr)"),
    ("threads not a whole number of warps (`thread[32]`)", "prism_launch_plain(dim3(1), dim3(48), nullptr)"),
    ("more threads than its launch bounds", "prism_launch_plain(dim3(1), dim3(160), nullptr)"),
    ("another block shape than `block=[16, 4]`", "prism_launch_fixed(dim3(2), dim3(4, 16), nullptr)"),
    ("its thread count in one dimension", "prism_launch_fixed(dim3(2), dim3(64), nullptr)"),
    ("no threads", "prism_launch_coords(dim3(1), dim3(0, 4), nullptr, nullptr)"),
    ("more than 1024 threads a block", "prism_launch_coords(dim3(1), dim3(64, 17), nullptr, nullptr)"),
    ("more than 64 along z", "prism_launch_coords(dim3(1), dim3(1, 1, 65), nullptr, nullptr)"),
    ("more than 65,535 blocks along y", "prism_launch_coords(dim3(1, 65536), dim3(1), nullptr, nullptr)"),
    ("more than 2^31 - 1 blocks along x", "prism_launch_coords(dim3(2147483648u), dim3(1), nullptr, nullptr)"),
    // 2^31 - 1 x 65,535 x 65,535 blocks of 1024 threads: about 2^72 threads, whose 64-bit
    // count wraps; the block count is refused before it is multiplied.
    (
        "a launch whose thread count wraps 64 bits",
        "prism_launch_coords(dim3(2147483647u, 65535, 65535), dim3(1024), nullptr, nullptr)",
    ),
    (
        "more than 2^31 - 1 threads (`id()` is an `int`)",
        "prism_launch_coords(dim3(65536, 64), dim3(1024), nullptr, nullptr)",
    ),
];

/// Calls passing one array for two parameters, with a good shape: refused with
/// `cudaErrorInvalidValue` when the kernel writes either parameter (`docs/soundness.md` §4.1).
const REFUSED_ALIAS: &[(&str, &str)] = &[(
    "the input array as the output",
    "prism_launch_staged_sums(dim3(1), dim3(64), (const float*)0x1000, (float*)0x1000, 64)",
)];

/// The same for `launch_coords.prism`, whose kernel writes both its arrays.
const REFUSED_ALIAS_BOTH_WRITTEN: &[(&str, &str)] =
    &[("one array for two written parameters", "prism_launch_coords(dim3(1), dim3(32), (int*)0x1000, (int*)0x1000)")];

fn check(nvcc: &Path) -> Result<(), String> {
    let mut failures = Vec::new();
    for (rel, calls, expect) in [
        ("rules/launch_coords", REFUSED, "cudaErrorInvalidConfiguration"),
        ("rules/dynamic_shared", REFUSED_DYNAMIC, "cudaErrorInvalidConfiguration"),
        ("rules/dynamic_shared", REFUSED_ALIAS, "cudaErrorInvalidValue"),
        ("rules/launch_coords", REFUSED_ALIAS_BOTH_WRITTEN, "cudaErrorInvalidValue"),
    ] {
        if let Err(e) = refused(nvcc, rel, calls, expect) {
            failures.push(e);
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n")) }
}

/// Builds a host program calling `rel`'s launchers as `calls` say, and runs it: each call
/// must return `expect`.
fn refused(nvcc: &Path, rel: &str, calls: &[(&str, &str)], expect: &str) -> Result<(), String> {
    let out = common::emit_with_host(rel)?;
    let mut main = out.text;
    main.push_str("\n#include <cstdio>\nint main() {\n    int bad = 0;\n");
    for (why, call) in calls {
        main.push_str(&format!(
            "    if (cudaError_t e = {call}; e != {expect}) {{ printf(\"not refused: {why} ({call}): %d\\n\", (int)e); ++bad; }}\n"
        ));
    }
    main.push_str("    return bad;\n}\n");
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("launchers");
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let stem = format!("{}_{expect}", rel.replace('/', "_"));
    let (cu, exe) = (tmp.join(format!("{stem}.cu")), tmp.join(stem));
    std::fs::write(&cu, &main).map_err(|e| e.to_string())?;
    let built =
        toolchain::compile(nvcc, &cu, &exe, "sm_90", Emit::Executable).map_err(|e| format!("cannot run nvcc: {e}"))?;
    if !built.ok {
        return Err(format!("the launcher test program for {rel} does not compile:\n{}", built.log));
    }
    let run = Command::new(&exe).output().map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if run.status.success() {
        Ok(())
    } else {
        Err(format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr)))
    }
}
