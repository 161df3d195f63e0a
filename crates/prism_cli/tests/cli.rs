//! The `prism` binary end to end: exit codes, output files, and the errors users see.

mod common;

use common::{SAXPY, prism, scratch, stderr, stdout};
use std::process::Output;

fn saxpy(extra: &[&str]) -> Output {
    let mut args = vec!["run", SAXPY, "--kernel", "saxpy", "--grid", "2", "--block", "64", "--color", "never"];
    args.extend_from_slice(extra);
    prism(&args)
}

#[test]
fn a_clean_run_writes_outputs_that_numpy_can_read() {
    let d = scratch("clean");
    let out = d.join("y.npy");
    let o = saxpy(&[
        "--arg",
        "n=100",
        "--arg",
        "a=2",
        "--arg",
        "x=iota:f32:100",
        "--arg",
        "y=iota:f32:100",
        "--out",
        &format!("y={}", out.display()),
        "--print",
        "y",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("y = [0.0, 3.0, 6.0, 9.0,"), "{}", stdout(&o));
    let bytes = std::fs::read(&out).expect("the output exists");
    let arr = prism_interp::npy::parse(&bytes).expect("a valid .npy");
    assert_eq!(arr.shape, vec![100]);
    let y = arr.buffer.to_vec::<f32>().expect("f32");
    assert!(y.iter().enumerate().all(|(i, &v)| v == 3.0 * i as f32));
    // Reading it back as an input works too.
    let o = saxpy(&[
        "--arg",
        "n=100",
        "--arg",
        "a=1",
        "--arg",
        "x=zeros:f32:100",
        "--arg",
        &format!("y={}", out.display()),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_failed_check_exits_3_and_writes_nothing() {
    let d = scratch("oob");
    let out = d.join("y.npy");
    // n is larger than the buffers: the kernel reads past the end of `x`.
    let o = saxpy(&[
        "--arg",
        "n=200",
        "--arg",
        "a=2",
        "--arg",
        "x=iota:f32:100",
        "--arg",
        "y=iota:f32:100",
        "--out",
        &format!("y={}", out.display()),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("error[out-of-bounds]"), "{}", stderr(&o));
    assert!(stderr(&o).contains("element 128 is outside the 100 elements"), "{}", stderr(&o));
    assert!(!out.exists(), "no output after a failed run");
    assert_eq!(std::fs::read_dir(&d).expect("dir").count(), 0, "no temporary files either");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn json_reports_carry_code_and_position() {
    let o = saxpy(&[
        "--message-format",
        "json",
        "--arg",
        "n=200",
        "--arg",
        "a=2",
        "--arg",
        "x=iota:f32:100",
        "--arg",
        "y=iota:f32:100",
    ]);
    assert_eq!(o.status.code(), Some(3));
    let line = stdout(&o).lines().next().expect("one diagnostic").to_string();
    assert!(line.contains(r#""code":"out-of-bounds""#), "{line}");
    assert!(line.contains(r#""line":16"#), "{line}");
}

#[test]
fn bad_launches_and_arguments_exit_2_with_a_span() {
    let cases: &[(&[&str], &str)] = &[
        (&["--arg", "n=1", "--arg", "a=1", "--arg", "x=zeros:f32:1"], "missing `--arg y=...`"),
        (&["--arg", "n=1.5", "--arg", "a=1", "--arg", "x=zeros:f32:1", "--arg", "y=zeros:f32:1"], "not an integer"),
        (&["--arg", "n=1", "--arg", "a=1", "--arg", "x=zeros:f64:1", "--arg", "y=zeros:f32:1"], "holds f64"),
        (
            &["--arg", "n=1", "--arg", "a=1", "--arg", "x=zeros:f32:1", "--arg", "y=zeros:f32:1", "--arg", "z=1"],
            "no parameter `z`",
        ),
        (&["--arg", "n=1", "--arg", "a=1", "--arg", "x=/nonexistent.npy", "--arg", "y=zeros:f32:1"], "cannot read"),
        (
            &["--arg", "n=1", "--arg", "n=2", "--arg", "a=1", "--arg", "x=zeros:f32:1", "--arg", "y=zeros:f32:1"],
            "twice",
        ),
    ];
    for (extra, want) in cases {
        let o = saxpy(extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{extra:?}: expected `{want}` in\n{}", stderr(&o));
        assert!(stderr(&o).contains("error[bad-argument]"), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("01_saxpy_grid_stride.prism:9:1"), "{extra:?}: points at the kernel");
    }
    // A block size the bound does not admit.
    let o = prism(&[
        "run",
        "tests/ui/run/checks/barrier_divergence.prism",
        "--kernel",
        "fixed_partial",
        "--grid",
        "1",
        "--block",
        "48",
        "--arg",
        "out=zeros:i32:64",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("error[bad-launch]") && stderr(&o).contains("multiple of 32"), "{}", stderr(&o));
    // An unknown kernel.
    let o = saxpy(&["--kernel", "nope"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn malformed_npy_inputs_are_rejected() {
    let d = scratch("npy");
    let bad = d.join("bad.npy");
    std::fs::write(&bad, b"\x93NUMPY\x01\x00garbage").expect("write");
    let o =
        saxpy(&["--arg", "n=1", "--arg", "a=1", "--arg", &format!("x={}", bad.display()), "--arg", "y=zeros:f32:1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.npy"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn npy_headers_past_64_kib_are_read_and_written() {
    // A version 2.0 file, laid out by hand, whose shape (30,000 dimensions of 1, then 4) makes
    // a header of about 90,000 bytes: more than version 1.0's two-byte length holds.
    let d = scratch("npy-v2");
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}4), }}", "1, ".repeat(30_000));
    let total = 12 + dict.len() + 1;
    let header = format!("{dict}{}\n", " ".repeat(total.next_multiple_of(64) - total));
    let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    [1.0f32, 2.0, 3.0, 4.0].iter().for_each(|x| bytes.extend_from_slice(&x.to_le_bytes()));
    let input = d.join("y.npy");
    std::fs::write(&input, &bytes).expect("write");
    let out = d.join("out.npy");
    let o = saxpy(&[
        "--arg",
        "n=4",
        "--arg",
        "a=2",
        "--arg",
        "x=iota:f32:4",
        "--arg",
        &format!("y={}", input.display()),
        "--out",
        &format!("y={}", out.display()),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Written back with its shape, so as version 2.0 (version 1.0 would cut the length).
    let written = std::fs::read(&out).expect("the output exists");
    assert_eq!(&written[..8], b"\x93NUMPY\x02\x00");
    let arr = prism_interp::npy::parse(&written).expect("a valid .npy");
    assert_eq!(arr.shape.len(), 30_001);
    assert_eq!(arr.buffer.to_vec::<f32>(), Some(vec![1.0, 4.0, 7.0, 10.0]));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn compile_errors_exit_1_and_missing_files_exit_2() {
    let d = scratch("compile");
    let f = d.join("bad.prism");
    std::fs::write(&f, "@prism(\"global\")\ndef k(x : ptr(float)):\n    y = 1 +\n").expect("write");
    let o = prism(&["run", f.to_str().expect("utf-8"), "--kernel", "k", "--grid", "1", "--block", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = prism(&["run", "/nonexistent.prism", "--kernel", "k", "--grid", "1", "--block", "1"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn seeds_do_not_change_the_result_of_a_race_free_kernel() {
    let d = scratch("seeds");
    let mut outputs = Vec::new();
    for seed in ["1", "2", "3"] {
        let out = d.join(format!("c{seed}.npy"));
        let o = prism(&[
            "run",
            "examples/mma_tf32.prism",
            "--kernel",
            "mmaTF32NaiveKernel",
            "--grid",
            "2",
            "--block",
            "32",
            "--seed",
            seed,
            "--arg",
            "A=rand:f32:16x16:7",
            "--arg",
            "B=rand:f32:16x16:8",
            "--arg",
            "C=zeros:f32:16x16",
            "--arg",
            "M=16",
            "--arg",
            "N=16",
            "--arg",
            "K=16",
            "--out",
            &format!("C={}", out.display()),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        outputs.push(std::fs::read(&out).expect("output"));
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn multi_dimensional_launches_on_the_command_line() {
    let d = scratch("dims");
    let out = d.join("dims.npy");
    let base = ["run", "tests/ui/accept/rules/launch_coords.prism", "--kernel", "coords", "--color", "never"];
    let args = ["--arg", "out=zeros:i32:576", "--arg", "dims=zeros:i32:2304"];
    let mut ok: Vec<&str> = base.to_vec();
    let dims_out = format!("dims={}", out.display());
    ok.extend(["--grid", "3,2,2", "--block", "4, 3, 2", "--out", &dims_out]);
    ok.extend(args);
    let o = prism(&ok);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("3x2x2 block(s) of 4x3x2 thread(s)"), "{}", stderr(&o));
    assert!(out.exists());
    // Malformed shapes are usage errors, before anything is read.
    for bad in ["2,x", "1,2,3,4", "", "2,,1", "-1"] {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(["--grid", bad, "--block", "32"]);
        a.extend(args);
        let o = prism(&a);
        assert_eq!(o.status.code(), Some(2), "`{bad}`: {}", stderr(&o));
        assert!(stderr(&o).contains("--grid"), "`{bad}`: {}", stderr(&o));
    }
    // A kernel that reads no coordinate refuses a 2-D launch, with the kernel's span.
    let o = prism(&[
        "run",
        "tests/ui/accept/rules/launch_coords.prism",
        "--kernel",
        "plain",
        "--grid",
        "2,2",
        "--block",
        "32",
        "--arg",
        "out=zeros:i32:128",
        "--color",
        "never",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("error[bad-launch]") && e.contains("reads no coordinate") && e.contains("launch_coords.prism:"),
        "{e}"
    );
}

#[test]
fn print_shows_two_dimensional_buffers_as_matrices() {
    let d = scratch("matrix");
    let npy = d.join("y.npy");
    let run = |y: &str, extra: &[&str]| {
        let mut args = vec!["--arg", "n=100", "--arg", "a=1", "--arg", "x=iota:f32:100", "--arg", y, "--print", "y"];
        args.extend_from_slice(extra);
        saxpy(&args)
    };
    // A shape on the command line: the matrix under its shape, columns aligned.
    let out_arg = format!("y={}", npy.display());
    let o = run("y=zeros:f32:4x25", &["--out", &out_arg]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "y: f32[4x25]", "{text}");
    assert!(lines[1].starts_with("[[ 0.0,  1.0,  2.0,"), "{text}");
    assert!(lines[4].starts_with(" [75.0, 76.0,") && lines[4].ends_with("99.0]]"), "{text}");
    assert_eq!(lines.len(), 5, "{text}");
    // The 2-D `.npy` it wrote prints the same way when read back.
    let input = format!("y={}", npy.display());
    let o = run(&input, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("y: f32[4x25]\n[[  0.0,   2.0,"), "{}", stdout(&o));
    // A large matrix is elided like NumPy's: three rows and columns at each end.
    let o = saxpy(&[
        "--arg",
        "n=2000",
        "--arg",
        "a=0",
        "--arg",
        "x=zeros:f32:2000",
        "--arg",
        "y=iota:f32:40x50",
        "--print",
        "y",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("y: f32[40x50]\n[[   0.0,    1.0,    2.0, ...,   47.0,   48.0,   49.0],\n"), "{text}");
    assert!(text.contains("\n ...,\n [1850.0,"), "{text}");
    assert_eq!(text.lines().count(), 8, "{text}");
    let _ = std::fs::remove_dir_all(&d);
}
