//! Multi-file programs from the command line (issue 12): a kernel importing a user library
//! that imports the standard library and a module found through `-I`, checked, run and
//! built from disk. `tests/modules/README.md` describes the programs.

mod common;

use common::{prism, scratch, stderr, stdout};

const MAIN: &str = "tests/modules/warp_scale/main.prism";
const INCLUDE: &str = "tests/modules/include";

#[test]
fn a_two_file_program_checks_runs_and_builds() {
    let o = prism(&["check", MAIN, "-I", INCLUDE]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // x = 0, 1, ..., 127: warp w sums 32 w * 32 + 496; `scaled_sum` triples it.
    let o = prism(&[
        "run",
        MAIN,
        "-I",
        INCLUDE,
        "--kernel",
        "warp_sums",
        "--grid",
        "2",
        "--block",
        "64",
        "--arg",
        "x=iota:f32:128",
        "--arg",
        "out=zeros:f32:8",
        "--arg",
        "warps=4",
        "--print",
        "out",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let sums: Vec<f32> = (0..4).map(|w| (0..32).map(|l| (32 * w + l) as f32).sum()).collect();
    let want: Vec<String> =
        sums.iter().map(|s| 3.0 * s).chain(sums.iter().copied()).map(|v| format!("{v:.1}")).collect();
    assert!(stdout(&o).contains(&format!("out = [{}]", want.join(", "))), "{}", stdout(&o));
    // One `.cu` holds every module's functions.
    let d = scratch("modules");
    let out = d.join("m.cu");
    let o = prism(&["build", MAIN, "-I", INCLUDE, "-o", out.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let cu = std::fs::read_to_string(&out).expect("written");
    for f in ["lib_util_scaled_sum(", "prism_std_warp_warp_sum_float_(", "void warp_sums("] {
        assert!(cu.contains(f), "no `{f}` in the CUDA");
    }
}

#[test]
fn a_missing_include_directory_is_an_unresolved_import_with_both_spans() {
    // Without `-I`, `lib/util.prism`'s `import scale` finds nothing: the error is in the
    // library, and the line of `main.prism` that imported it is shown too. Nothing is
    // written.
    let d = scratch("modules-missing");
    let out = d.join("m.cu");
    let o = prism(&["build", MAIN, "-o", out.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("error[unresolved-import]: no module `scale`"), "{e}");
    assert!(e.contains("tests/modules/warp_scale/lib/util.prism:4:1"), "{e}");
    assert!(e.contains("tests/modules/warp_scale/main.prism:4:1") && e.contains("imported here"), "{e}");
    // The constant that used it is not reported again.
    assert!(!e.contains("not-constant"), "{e}");
    assert!(!out.exists());
}

#[test]
fn json_diagnostics_name_the_imported_file() {
    let o = prism(&["check", MAIN, "--message-format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(text.contains("\"code\":\"unresolved-import\"") && text.contains("lib/util.prism"), "{text}");
}

#[test]
fn a_root_file_importing_itself_from_disk_is_one_clear_error() {
    // However the root is spelled on the command line (here `./`), its import of itself is
    // found to be the root: one `unresolved-import`, no second copy of the file with
    // clashing definitions.
    let d = scratch("self-import");
    let text = "from selfish import f\n\n@prism(\"device\")\n@requires(thread[1])\ndef f(x : int @ thread[1]) -> int @ thread[1]:\n    return x\n";
    std::fs::write(d.join("selfish.prism"), text).expect("write");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_prism"))
        .args(["check", "./selfish.prism", "--color", "never"])
        .current_dir(&d)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("error[unresolved-import]: `selfish` is this file itself"), "{e}");
    assert_eq!(e.matches("error[").count(), 1, "{e}");
}
