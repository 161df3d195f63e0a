//! Issue 8: what a hostile or unlucky user meets. Each test checks the exit code, the
//! message and the file system afterwards.

mod common;

use common::{SAXPY, prism, prism_env, root, scratch, stderr, stdout};
use std::path::Path;
use std::process::{Command, Stdio};

/// `prism ARGS REDIRECT` in bash (`2>&-` closes stderr).
fn with_stderr(args: &str, redirect: &str) -> std::process::ExitStatus {
    Command::new("bash")
        .arg("-c")
        .arg(format!("'{}' {args} {redirect}", env!("CARGO_BIN_EXE_prism")))
        .current_dir(root())
        .stdout(Stdio::null())
        .status()
        .expect("sh runs")
}

#[test]
fn a_closed_or_full_stderr_is_not_a_panic() {
    let bad = "tests/ui/reject/rules/read-up.prism";
    for redirect in ["2>&-", "2>/dev/full", "2>&1 | head -c 1 >/dev/null; exit ${PIPESTATUS[0]}"] {
        let status = with_stderr(&format!("check {bad}"), redirect);
        assert_ne!(status.code(), Some(101), "`{redirect}` panicked");
    }
    assert_eq!(with_stderr(&format!("check {bad}"), "2>/dev/full").code(), Some(1), "errors still exit 1");
    assert_eq!(with_stderr("explain --list", ">/dev/full").code(), Some(0));
}

/// A run of saxpy with `--out` arguments.
fn saxpy_out(outs: &[String]) -> std::process::Output {
    let mut args: Vec<String> = [
        "run",
        SAXPY,
        "--kernel",
        "saxpy",
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "n=8",
        "--arg",
        "a=2",
        "--arg",
        "x=iota:f32:8",
        "--arg",
        "y=iota:f32:8",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for o in outs {
        args.push("--out".into());
        args.push(o.clone());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    prism(&refs)
}

#[test]
fn outputs_are_validated_before_anything_is_written() {
    let d = scratch("outs");
    let y = d.join("y.npy");
    let adir = d.join("adir");
    std::fs::create_dir(&adir).expect("dir");
    let o = saxpy_out(&[format!("y={}", y.display()), format!("x={}", adir.display())]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
    assert!(!y.exists(), "nothing is written when one output is bad");
    // A directory as the output itself: refused, and no temporary lands beside it.
    let o = saxpy_out(&[format!("y={}", d.display())]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let parent = d.parent().expect("parent");
    let stray = std::fs::read_dir(parent).expect("ls").flatten().any(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        n.starts_with('.') && n.contains(".tmp")
    });
    assert!(!stray, "a temporary was left beside the directory");
    // The good case writes the file.
    let o = saxpy_out(&[format!("y={}", y.display())]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(y.exists());
}

#[test]
fn two_outputs_to_one_file_are_refused_however_spelled() {
    let d = scratch("outs-twice");
    let y = d.join("y.npy");
    std::os::unix::fs::symlink(&y, d.join("link.npy")).expect("symlink");
    // The same file as `y.npy`, `./y.npy`, `sub/../y.npy` and through a link to it (which does
    // not exist yet either); each would silently replace the other's buffer.
    std::fs::create_dir(d.join("sub")).expect("dir");
    let spellings = [d.join(".").join("y.npy"), d.join("sub/../y.npy"), d.join("link.npy"), y.clone()];
    for other in &spellings {
        let o = saxpy_out(&[format!("y={}", y.display()), format!("x={}", other.display())]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("name the same file"), "{}", stderr(&o));
        let left: Vec<_> = std::fs::read_dir(&d).expect("ls").flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 2, "nothing written, no temporary left: {left:?}");
    }
    // Two outputs to two files, and one buffer to two files, are fine.
    let o = saxpy_out(&[format!("y={}", y.display()), format!("x={}", d.join("x.npy").display())]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = saxpy_out(&[format!("y={}", y.display()), format!("y={}", d.join("y2.npy").display())]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(&y).expect("y"), std::fs::read(d.join("y2.npy")).expect("y2"));
}

#[test]
fn build_outputs_never_clobber_what_they_should_not() {
    let d = scratch("build-out");
    // Its own source: refused, the source unchanged.
    let src = d.join("k.prism");
    std::fs::copy(root().join(SAXPY), &src).expect("copy");
    let before = std::fs::read(&src).expect("read");
    let s = src.to_str().expect("utf-8");
    let o = prism(&["build", s, "-o", s]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("must end in `.cu`"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&src).expect("read"), before);
    // A source whose own name ends in `.cu` is its default output, and refused as the input.
    let cu_src = d.join("odd.cu");
    std::fs::copy(&src, &cu_src).expect("copy");
    let o = prism(&["build", cu_src.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("refusing to overwrite"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&cu_src).expect("read"), before);
    // Through a symbolic link: the file it points to is written, the link stays a link.
    let target = d.join("real.cu");
    std::fs::write(&target, "old").expect("write");
    let link = d.join("link.cu");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let o = prism(&["build", s, "-o", link.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).expect("meta").file_type().is_symlink(), "the link is kept");
    assert!(std::fs::read_to_string(&target).expect("read").contains("__global__"));
    // A device is written through, not replaced.
    let o = prism(&["build", s, "-o", "/dev/null"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(Path::new("/dev/null").exists() && !std::fs::metadata("/dev/null").expect("meta").is_file());
    // A directory is refused.
    let o = prism(&["build", s, "-o", d.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // It says what it wrote.
    let out = d.join("named.cu");
    let o = prism(&["build", s, "-o", out.to_str().expect("utf-8")]);
    assert!(stderr(&o).contains(&format!("wrote `{}`", out.display())), "{}", stderr(&o));
}

#[test]
fn a_fifo_output_is_written_through() {
    let d = scratch("fifo");
    let fifo = d.join("out.cu");
    let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).expect("read the fifo"))
    };
    let o = prism(&["build", SAXPY, "-o", fifo.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = reader.join().expect("reader");
    assert!(text.contains("__global__"));
    assert!(!std::fs::metadata(&fifo).expect("meta").is_file(), "still a FIFO");
}

#[test]
fn source_text_edge_cases() {
    let d = scratch("text");
    // CR-only line endings: read as lines, so the error is on line 3.
    let cr = d.join("cr.prism");
    std::fs::write(&cr, "@prism(\"global\")\rdef k(out : ptr(int)):\r    y : int = zz\r").expect("write");
    let o = prism(&["check", cr.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cr.prism:3:15"), "{}", stderr(&o));
    // A UTF-8 byte-order mark is not an invalid character.
    let bom = d.join("bom.prism");
    std::fs::write(&bom, "\u{feff}@prism(\"global\")\ndef k(out : ptr(int)):\n    pass\n").expect("write");
    let o = prism(&["check", bom.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A very long line is shown as a window, not echoed whole.
    let long = d.join("long.prism");
    let line = format!("    y : int = {}zz\n", "1 + ".repeat(5000));
    std::fs::write(&long, format!("@prism(\"global\")\ndef k(out : ptr(int)):\n{line}")).expect("write");
    let o = prism(&["check", long.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).len() < 4000, "{} bytes of diagnostics", stderr(&o).len());
    assert!(stderr(&o).contains('…'), "{}", stderr(&o));
}

#[test]
fn small_things_users_trip_on() {
    // `--fuel 0` is a bad option, not a run fault.
    let o = prism(&["run", SAXPY, "--kernel", "saxpy", "--grid", "1", "--block", "1", "--fuel", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--fuel"), "{}", stderr(&o));
    // The help shows the shape syntax the README uses.
    let o = prism(&["run", "--help"]);
    assert!(stdout(&o).contains("RxC"), "{}", stdout(&o));
    // `an int literal`.
    let o = prism(&["run", SAXPY, "--kernel", "saxpy", "--grid", "1", "--block", "1"]);
    assert!(stderr(&o).contains("an `int` literal"), "{}", stderr(&o));
    // Hopper code built for `sm_90` (not `sm_90a`): prism's own message, before nvcc.
    let d = scratch("hopper");
    let o = prism(&[
        "build",
        "tests/ui/accept/seeds/036_parallax_appB_hgemm_h100_partial.prism",
        "-o",
        d.join("h.cu").to_str().expect("utf-8"),
        "--arch",
        "sm_90",
        "--ptx",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--arch sm_90a"), "{}", stderr(&o));
    // JSON labels without words have a null message.
    let o = prism(&["check", "--message-format", "json", "tests/ui/reject/rules/read-up.prism"]);
    assert!(!stdout(&o).contains(r#""message":"""#), "{}", stdout(&o));
    // An inconsistent dedent is one error, not two.
    let ind = d.join("ind.prism");
    std::fs::write(&ind, "@prism(\"global\")\ndef k(x : ptr(int)):\n    y : int = 1\n  z : int = 2\n").expect("write");
    let o = prism(&["check", ind.to_str().expect("utf-8")]);
    assert!(stderr(&o).contains("inconsistent-indent"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("top-level-statement"), "{}", stderr(&o));
}

/// Writes a kernel file into a scratch directory and returns its path.
fn kernel_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("scratch is writable");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_huge_grid_costs_nothing_before_its_first_block() {
    // Block 4 writes past the end of a 4-element buffer: the run must reach it in
    // milliseconds and in little memory, with the whole 2^31-1 block launch still ahead.
    let dir = scratch("huge-grid");
    let file = kernel_file(
        &dir,
        "huge.prism",
        "@prism(\"global\")\n@requires(grid[1], block[1], thread[1])\ndef k(out : ptr(int)):\n    with unsafe:\n        out[block_idx()] = 1\n",
    );
    for extra in ["", "--checks none", "--seed 7"] {
        let start = std::time::Instant::now();
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "ulimit -v 1000000; exec '{}' run '{file}' --kernel k --grid 2147483647 --block 1 --arg out=zeros:i32:4 {extra}",
                env!("CARGO_BIN_EXE_prism")
            ))
            .output()
            .expect("bash runs");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{extra}: {err}");
        assert!(err.contains("error[out-of-bounds]"), "{extra}: {err}");
        assert!(start.elapsed() < std::time::Duration::from_secs(30), "{extra}: took {:?}", start.elapsed());
    }
}

#[test]
fn a_spin_deadlock_is_reported_under_every_check_set() {
    for checks in ["all", "races", "uniformity", "none"] {
        for kernel in ["buggy_blocks", "buggy_later_blocks"] {
            let start = std::time::Instant::now();
            let out = prism(&[
                "run",
                "tests/ui/run/checks/deadlock.prism",
                "--kernel",
                kernel,
                "--grid",
                "100",
                "--block",
                "32",
                "--arg",
                "flags=zeros:i32:100",
                "--checks",
                checks,
            ]);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{kernel} --checks {checks}: {err}");
            assert!(err.contains("error[deadlock]"), "{kernel} --checks {checks}: {err}");
            assert!(start.elapsed() < std::time::Duration::from_secs(20), "{kernel} --checks {checks}: slow");
        }
    }
}

const ENDLESS: &str = "@prism(\"global\")\n@requires(grid[1], block[1], thread[1])\ndef spin(out : ptr(int)):\n    with group(thread[1]):\n        i : int @ thread[1] = 0\n        while i >= 0:\n            i = i + 1 - 1\n";

/// `prism run` of the endless kernel in `file`, with extra options and environment.
fn run_endless(file: &str, extra: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut args = vec!["run", file, "--kernel", "spin", "--grid", "1", "--block", "1", "--arg", "out=zeros:i32:1"];
    args.extend_from_slice(extra);
    prism_env(&args, env)
}

#[test]
fn an_endless_loop_is_stopped_by_the_wall_clock_and_named() {
    let dir = scratch("endless");
    let file = kernel_file(&dir, "endless.prism", ENDLESS);
    let start = std::time::Instant::now();
    let out = run_endless(&file, &["--stall-limit", "1.5"], &[("PRISM_PROGRESS", "1")]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("error[time-limit]: no block finished for 1.5 s while block 0 ran this loop"), "{err}");
    assert!(err.contains("endless.prism:6:9"), "the loop's line is named: {err}");
    assert!(err.contains("--stall-limit"), "{err}");
    assert!(err.contains("running: blocks 0/1"), "progress is drawn when asked for: {err}");
    assert!(start.elapsed() < std::time::Duration::from_secs(15), "took {:?}", start.elapsed());

    // The step limit names the loop too.
    let out = run_endless(&file, &["--fuel", "100000"], &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("error[fuel-exhausted]: the block ran more than 100000 steps (`--fuel`) in this loop"),
        "{err}"
    );
    assert!(err.contains("endless.prism:6:9"), "{err}");

    // Without a terminal or PRISM_PROGRESS, nothing is drawn.
    let out = run_endless(&file, &["--stall-limit", "1.2"], &[]);
    assert!(!stderr(&out).contains("running: blocks"), "{}", stderr(&out));

    for bad in ["inf", "-1", "NaN", "1e12", "soon"] {
        let opt = format!("--stall-limit={bad}");
        let out = run_endless(&file, &[&opt], &[]);
        assert_eq!(out.status.code(), Some(2), "--stall-limit {bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("is not a number of seconds"), "{}", stderr(&out));
    }
}

#[test]
fn a_long_run_that_keeps_finishing_blocks_is_not_stopped_by_the_stall_limit() {
    // 64 blocks of about 25 ms each with every check on: the run takes far longer than the
    // 0.4 s limit, but some block finishes every few tens of milliseconds. (K is 2048: the
    // race checker records no reads of A and B, which nothing writes, so at K = 256 the
    // whole run took a fifth of a second.)
    let start = std::time::Instant::now();
    let out = prism_env(
        &[
            "run",
            "tests/ui/accept/kernels/03_sgemm_1_naive.prism",
            "--kernel",
            "sgemm_naive",
            "--grid",
            "64",
            "--block",
            "1024",
            "--arg",
            "M=256",
            "--arg",
            "N=256",
            "--arg",
            "K=2048",
            "--arg",
            "alpha=1.5",
            "--arg",
            "A=rand:f32:256x2048:1",
            "--arg",
            "B=rand:f32:2048x256:2",
            "--arg",
            "beta=0.5",
            "--arg",
            "C=zeros:f32:256x256",
            "--stall-limit",
            "0.4",
        ],
        &[("PRISM_PROGRESS", "1")],
    );
    let elapsed = start.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // The property is only exercised when the run outlasted the limit; say so if it did not.
    assert!(elapsed > std::time::Duration::from_millis(400), "the run was too short to test the limit");
    // The progress line, asked for: drawn in place after a second, counting finished blocks
    // out of 64, and erased before the summary.
    if elapsed > std::time::Duration::from_millis(1500) {
        assert!(err.starts_with("\rrunning: blocks "), "{err:?}");
        let (line, rest) = err.rsplit_once("\rrunning: blocks ").expect("drawn");
        assert!(line.is_empty() || line.contains("/64 ("), "{err:?}");
        assert!(rest.contains("/64 (") && rest.contains("\x1b[K\r\x1b[Kran `sgemm_naive`"), "{err:?}");
    }
}

#[test]
fn a_short_run_draws_no_progress_even_when_asked() {
    let args = ["run", SAXPY, "--kernel", "saxpy", "--grid", "2", "--block", "64", "--arg", "n=128", "--arg", "a=2"];
    let mut args = args.to_vec();
    args.extend_from_slice(&["--arg", "x=iota:f32:128", "--arg", "y=zeros:f32:128"]);
    let out = prism_env(&args, &[("PRISM_PROGRESS", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("ran `saxpy`"), "nothing drawn within the first second: {:?}", stderr(&out));
}
