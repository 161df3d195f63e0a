//! `prism build` and `prism run --device cuda` end to end: outputs, exit codes, and the
//! errors users see on a machine without nvcc or a CUDA driver.

mod common;

use common::{SAXPY, prism_env as prism, root, scratch, stderr};

#[test]
fn build_writes_the_snapshotted_cuda() {
    let d = scratch("ok");
    let out = d.join("saxpy.cu");
    let o = prism(&["build", SAXPY, "-o", out.to_str().expect("utf-8")], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).expect("written");
    // The prelude's helpers, without the 16-bit float headers saxpy does not use.
    assert!(text.contains("#define PRISM_HELPERS"));
    assert!(!text.contains("#include <cuda_fp16.h>"), "a lean prelude");
    assert!(text.contains("extern \"C\" __global__ void saxpy("));
    // The snapshot is the same text after the prelude.
    let snap =
        std::fs::read_to_string(root().join("tests/ui/accept/kernels/01_saxpy_grid_stride.cu")).expect("snapshot");
    let body = snap.split_once("\n\n").expect("header").1;
    assert!(text.ends_with(body), "prism build differs from the snapshot");
    let names: Vec<_> = std::fs::read_dir(&d).expect("dir").flatten().map(|e| e.file_name()).collect();
    assert_eq!(names.len(), 1, "no temporary files are left: {names:?}");
}

#[test]
fn host_launchers_check_the_bound() {
    let d = scratch("host");
    let out = d.join("k.cu");
    let file = "tests/ui/accept/seeds/041_prism_fig6_mma_tf32_naive.prism";
    let o = prism(&["build", file, "-o", out.to_str().expect("utf-8"), "--emit-host"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.contains("inline cudaError_t prism_launch_mmaTF32NaiveKernel(dim3 grid, dim3 block"));
    assert!(text.contains("threads % 32 != 0"));
}

#[test]
fn host_launchers_run_block_entered_writers_as_one_block() {
    let d = scratch("host1");
    let out = d.join("k.cu");
    let file = "tests/ui/accept/kernels/30_bitonic_sort_block_entry.prism";
    let o = prism(&["build", file, "-o", out.to_str().expect("utf-8"), "--emit-host"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.contains("|| blocks != 1"), "the launcher refuses more than one block");
}

#[test]
fn a_program_with_errors_writes_nothing() {
    let d = scratch("err");
    let out = d.join("x.cu");
    let o = prism(&["build", "tests/ui/reject/rules/read-up.prism", "-o", out.to_str().expect("utf-8")], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!out.exists());
}

#[test]
fn an_output_name_of_another_kind_is_refused_before_anything_is_written() {
    // `-o` names the CUDA C++ file: a name for a cubin, a PTX file, another source or data
    // is a usage error, and the files already there keep their contents.
    let d = scratch("names");
    std::fs::write(d.join("other.prism"), "keep").expect("write");
    std::fs::write(d.join("keep.npy"), "keep").expect("write");
    let cases: [(&str, &[&str], &str); 7] = [
        ("x.cubin", &[], "write `-o"),
        ("x.ptx", &["--ptx"], "for a PTX file write `-o"),
        ("x.cubin", &["--cubin"], "for a cubin write `-o"),
        ("other.prism", &[], "must end in `.cu`"),
        ("keep.npy", &[], "must end in `.cu`"),
        ("noext", &["--ptx"], "must end in `.cu`"),
        ("/dev/null", &["--cubin"], "is not a regular file"),
    ];
    for (name, extra, says) in cases {
        let out = if name.starts_with('/') { name.to_string() } else { d.join(name).display().to_string() };
        let mut args = vec!["build", SAXPY, "-o", &out];
        args.extend_from_slice(extra);
        let o = prism(&args, &[]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{name}: {}", stderr(&o));
        let names: Vec<_> = std::fs::read_dir(&d).expect("dir").flatten().map(|e| e.file_name()).collect();
        assert_eq!(names.len(), 2, "{name}: nothing written: {names:?}");
    }
    assert_eq!(std::fs::read(d.join("other.prism")).expect("read"), b"keep");
    assert_eq!(std::fs::read(d.join("keep.npy")).expect("read"), b"keep");
    // A device takes the CUDA under any name.
    let o = prism(&["build", SAXPY, "-o", "/dev/null"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_missing_nvcc_is_a_clear_error() {
    let d = scratch("nvcc");
    let out = d.join("s.cu");
    let o =
        prism(&["build", SAXPY, "-o", out.to_str().expect("utf-8"), "--cubin"], &[("PRISM_NVCC", "/nonexistent/nvcc")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot run `/nonexistent/nvcc`"), "{}", stderr(&o));
    assert!(!d.join("s.cubin").exists());
}

#[test]
fn running_on_cuda_without_a_driver_exits_2() {
    let o = prism(
        &[
            "run",
            SAXPY,
            "--kernel",
            "saxpy",
            "--grid",
            "2",
            "--block",
            "64",
            "--arg",
            "n=100",
            "--arg",
            "a=2",
            "--arg",
            "x=iota:f32:100",
            "--arg",
            "y=zeros:f32:100",
            "--device",
            "cuda",
        ],
        &[],
    );
    if prism_gpu::device::driver_present() {
        return;
    }
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no CUDA driver found"), "{}", stderr(&o));
}

/// `prism run` of saxpy on the GPU with `extra` options and environment.
fn saxpy_on_cuda(extra: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut args = vec!["run", SAXPY, "--kernel", "saxpy", "--grid", "1", "--block", "32", "--arg", "n=32"];
    args.extend_from_slice(&["--arg", "a=2", "--arg", "x=iota:f32:32", "--arg", "y=zeros:f32:32"]);
    args.extend_from_slice(extra);
    prism(&args, env)
}

#[test]
fn the_compiler_is_chosen_and_a_missing_one_is_a_clear_error() {
    // An explicit compiler is looked for before the GPU, so its absence shows everywhere.
    let o =
        saxpy_on_cuda(&["--device", "cuda", "--compiler", "nvrtc"], &[("PRISM_NVRTC", "/nonexistent/libnvrtc.so.13")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "error: cannot compile the generated CUDA: PRISM_NVRTC=/nonexistent/libnvrtc.so.13 is not an NVRTC library"
        ),
        "{}",
        stderr(&o)
    );
    // The same choice through the environment.
    let o = saxpy_on_cuda(
        &["--device", "cuda"],
        &[("PRISM_COMPILER", "nvrtc"), ("PRISM_NVRTC", "/nonexistent/libnvrtc.so.13")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("PRISM_NVRTC=/nonexistent/libnvrtc.so.13 is not"), "{}", stderr(&o));
    let o = saxpy_on_cuda(&["--device", "cuda", "--compiler", "nvcc"], &[("PRISM_NVCC", "/nonexistent/nvcc")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Bad values, and a compiler for the simulator, are usage errors.
    let o = saxpy_on_cuda(&["--device", "cuda"], &[("PRISM_COMPILER", "clang")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("PRISM_COMPILER: `clang` is not a compiler (expected auto, nvcc or nvrtc)"),
        "{}",
        stderr(&o)
    );
    let o = saxpy_on_cuda(&["--device", "cuda", "--compiler", "clang"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("`clang` is not a compiler"), "{}", stderr(&o));
    let o = saxpy_on_cuda(&["--compiler", "nvrtc"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("`--compiler` chooses how `--device cuda` compiles"), "{}", stderr(&o));
    // With NVRTC present (CI installs it) and no GPU, the run gets as far as the driver.
    if prism_gpu::nvrtc::load().is_ok() && !prism_gpu::device::driver_present() {
        let o = saxpy_on_cuda(&["--device", "cuda", "--compiler", "nvrtc"], &[]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("no CUDA driver found"), "{}", stderr(&o));
    }
}
