//! `-D NAME=VALUE` from the command line: the file's `constexpr` replaced for every command
//! that compiles, checked like the written value, and refused with a clear error when it
//! names nothing, does not fit, or is malformed.

mod common;

use common::{prism, scratch, stderr, stdout};

/// A kernel whose output and shared memory depend on two constants.
const SRC: &str = "TILE : constexpr(int) = 128
SCALE : constexpr(float) = 2.0

@prism(\"global\")
@requires(grid[1], block[1], thread[32], smem=TILE * 4)
def fill(out : ptr(float)):
    b : int @ block[1] = id()
    with partition(out, p=block[1], f=lambda i: b * 32 + i) as ob:
        with group(block[1]):
            stage : shared(float[TILE]) @ block[1]
            t : int @ thread[1] = id()
            with partition(ob, p=thread[1], f=lambda i: t + i) as o:
                with group(thread[1]):
                    o[0] = float(TILE) * SCALE
";

fn file(name: &str) -> String {
    let d = scratch(name);
    let path = d.join("fill.prism");
    std::fs::write(&path, SRC).expect("written");
    path.to_str().expect("utf-8").to_string()
}

fn run(path: &str, defines: &[&str]) -> std::process::Output {
    let mut args = vec!["run", path, "--kernel", "fill", "--grid", "1", "--block", "32"];
    args.extend(["--arg", "out=zeros:f32:32", "--print", "out"]);
    for d in defines {
        args.extend(["-D", d]);
    }
    prism(&args)
}

#[test]
fn a_define_replaces_the_constant_in_the_simulator_and_the_cuda() {
    let path = file("defines-run");
    let o = run(&path, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("out = [256.0,"), "{}", stdout(&o));
    let o = run(&path, &["TILE=64", "SCALE=0.5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("out = [32.0,"), "{}", stdout(&o));
    // The CUDA has the defined values: the folded product and the shared array's size.
    let out = scratch("defines-build").join("fill.cu");
    let o = prism(&["build", &path, "-D", "TILE=64", "-D", "SCALE=0.5", "-o", out.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let cu = std::fs::read_to_string(&out).expect("written");
    assert!(cu.contains("= 32.0f;"), "{cu}");
    assert!(!cu.contains("256.0f"), "{cu}");
}

#[test]
fn a_define_is_checked_like_the_written_value() {
    // 100,000 floats of shared memory are over the target's limit: the variant is refused.
    let path = file("defines-smem");
    let o = prism(&["check", &path, "-D", "TILE=100000"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("error[smem-device-limit]") && !stderr(&o).contains("bad-define"), "{}", stderr(&o));
    // A float for an int, a value past `int`, and a name the file does not declare.
    for (d, says) in [
        ("TILE=1.5", "`-D TILE=1.5` does not fit `TILE`"),
        ("TILE=3000000000", "`-D TILE=3000000000` does not fit `TILE`"),
        // A float past `float`'s range would be an infinity: it does not fit either.
        ("SCALE=1e39", "`-D SCALE=1e39` does not fit `SCALE`"),
        ("SCALE=-4e38", "`-D SCALE=-4e38` does not fit `SCALE`"),
        ("TILES=64", "declares no `constexpr` named `TILES` (it declares `TILE`, `SCALE`)"),
    ] {
        let o = prism(&["check", &path, "-D", d]);
        assert_eq!(o.status.code(), Some(1), "-D {d}: {}", stderr(&o));
        assert!(stderr(&o).contains("error[bad-define]") && stderr(&o).contains(says), "-D {d}: {}", stderr(&o));
    }
    // Nothing is written for a build that a define breaks.
    let out = scratch("defines-nothing").join("fill.cu");
    let o = prism(&["build", &path, "-D", "NOPE=1", "-o", out.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!out.exists(), "a partial output was written");
}

#[test]
fn a_malformed_define_is_a_usage_error() {
    let path = file("defines-usage");
    for d in ["TILE", "=3", "9X=3", "TILE=abc", "TILE=", "TILE=1e999"] {
        let o = prism(&["check", &path, "-D", d]);
        assert_eq!(o.status.code(), Some(2), "-D {d}: {}", stderr(&o));
        assert!(stderr(&o).contains("--define"), "-D {d}: {}", stderr(&o));
    }
    // A float beyond every float type is named as such, not as no number at all.
    let o = prism(&["check", &path, "-D", "SCALE=1e400"]);
    assert!(stderr(&o).contains("`1e400` does not fit in any float type"), "{}", stderr(&o));
}

#[test]
fn a_float_argument_out_of_its_types_range_is_refused() {
    // `--arg` for a `float` scalar: past `float`'s range is an error naming the argument and
    // its type, as an integer past `int`'s is; `inf` asks for an infinity.
    let d = scratch("float-args");
    let path = d.join("k.prism");
    std::fs::write(
        &path,
        "@prism(\"global\")
@requires(grid[1], block[1], thread[32])
def k(out : ptr(float), s : float, w : double, n : int):
    t : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: t + i) as o:
        with group(thread[1]):
            o[0] = s + float(w) + float(n)
",
    )
    .expect("written");
    let p = path.to_str().expect("utf-8");
    let run = |s: &str, w: &str, n: &str| {
        let (s, w, n) = (format!("s={s}"), format!("w={w}"), format!("n={n}"));
        let args = ["run", p, "--kernel", "k", "--grid", "1", "--block", "32", "--arg", "out=zeros:f32:32"];
        let mut args: Vec<&str> = args.to_vec();
        args.extend(["--arg", &s, "--arg", &w, "--arg", &n, "--print", "out"]);
        prism(&args)
    };
    for (s, w, n, says) in [
        ("1e39", "0", "0", "argument `s`: `1e39` does not fit in `float`"),
        ("0", "1e400", "0", "argument `w`: `1e400` does not fit in `double`"),
        ("0", "0", "3000000000", "argument `n`: 3000000000 does not fit in `int`"),
    ] {
        let o = run(s, w, n);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("error[bad-argument]") && stderr(&o).contains(says), "{}", stderr(&o));
    }
    let o = run("inf", "1e300", "1");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("out = [inf, inf,"), "{}", stdout(&o));
}
