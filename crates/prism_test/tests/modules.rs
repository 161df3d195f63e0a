//! Modules and imports (issue 12): multi-file programs held in memory ([`MemoryFiles`]),
//! compiled through the one pipeline. Each test is a program an adversary could write to
//! get an import wrong: cycles, shadowing, re-exports, two files with one name, errors
//! inside an imported file, calls that break an imported signature.

use prism_diag::{Color, Problems, render};
use prism_driver::{MemoryFiles, Options, Search, Synced, compile_with};
use prism_span::SourceMap;

/// Compiles `root` (`main.prism`) with `files` around it and include directories
/// `include`; returns the rendered diagnostics and the program if it compiled.
fn compile(files: &[(&str, &str)], root: &str, include: &[&str]) -> (String, Option<Synced>, Problems) {
    let mut mem = MemoryFiles::default();
    for (p, t) in files {
        mem.add(p, *t);
    }
    let mut map = SourceMap::default();
    let file = map.add("main.prism", root);
    let mut problems = Problems::default();
    let mut search = Search { files: &mut mem, include: include.iter().map(Into::into).collect(), base: None };
    let synced = compile_with(&mut map, file, &mut search, &Options::default(), &mut problems);
    problems.sort();
    (render(&map, problems.diagnostics(), Color::Never), synced, problems)
}

fn codes(p: &Problems) -> Vec<&'static str> {
    p.diagnostics().iter().filter(|d| d.is_error()).map(|d| d.code).collect()
}

const UTIL: &str = r#"
from prism.std.warp import warp_sum

SCALE : constexpr(int) = 3

@prism("device")
@requires(thread[32])
def scaled_sum(v : float @ thread[1]) -> float @ thread[32]:
    return warp_sum(v) * float(SCALE)
"#;

/// A kernel of the root module writing `f(x)` per warp through whatever `call` is.
fn kernel(imports: &str, call: &str) -> String {
    format!(
        r#"{imports}

@prism("global")
@requires(grid[1], block[1], thread[32])
def k(x : ptr(const(float)), out : ptr(float)):
    w : int @ thread[32] = id()
    with partition(out, p=thread[32], f=lambda i: w + i) as o:
        with group(thread[32]):
            l : int @ thread[1] = id()
            s : float @ thread[32] = {call}(x[32 * w + l])
            with claim(o, p=thread[1]) as c:
                match split(thread):
                    case 1:
                        c[0] = s
"#
    )
}

#[test]
fn every_import_form_names_the_same_function() {
    for (imports, call) in [
        ("import lib.util", "lib.util.scaled_sum"),
        ("import lib.util as u", "u.scaled_sum"),
        ("from lib.util import scaled_sum", "scaled_sum"),
        ("from lib.util import scaled_sum as ss", "ss"),
        ("from lib.util import (\n    SCALE,\n    scaled_sum,\n)", "scaled_sum"),
    ] {
        let (out, synced, _) = compile(&[("lib/util.prism", UTIL)], &kernel(imports, call), &[]);
        let synced = synced.unwrap_or_else(|| panic!("`{imports}`:\n{out}"));
        let names: Vec<&str> = synced.ir().functions.iter().map(|f| f.name.as_str()).collect();
        // Imported functions are named by their module's path, whatever the importer
        // calls them; the root's keep their plain names; instances of generic functions
        // (the library's `warp_sum[T]`) come last, named by their arguments.
        assert_eq!(names, ["lib.util.scaled_sum", "k", "prism.std.warp.warp_sum.float"], "`{imports}`");
    }
}

#[test]
fn a_file_imported_by_two_paths_is_loaded_once() {
    // `main` imports `lib.util` and `lib.both`; `lib/both.prism` imports `util` (its own
    // directory): one file, one copy of its functions.
    let both = r#"
import util

@prism("device")
@requires(thread[32])
def twice(v : float @ thread[1]) -> float @ thread[32]:
    return util.scaled_sum(v) * 2.0
"#;
    let root = kernel("import lib.util\nimport lib.both", "lib.both.twice");
    let (out, synced, _) = compile(&[("lib/util.prism", UTIL), ("lib/both.prism", both)], &root, &[]);
    let synced = synced.unwrap_or_else(|| panic!("{out}"));
    let scaled = synced.ir().functions.iter().filter(|f| f.name.ends_with("scaled_sum")).count();
    assert_eq!(scaled, 1, "{:?}", synced.ir().functions.iter().map(|f| &f.name).collect::<Vec<_>>());
}

#[test]
fn two_files_imported_by_one_path_stay_apart() {
    // `a/x.prism` and `b/x.prism` are both `x` to the module that imports them (`a/m`
    // imports `x` from `a/`, the root imports `x` from the include directory `b/`).
    let ax = "@prism(\"device\")\n@requires(thread[1])\ndef f() -> int @ thread[1]:\n    return 1\n";
    let bx = "@prism(\"device\")\n@requires(thread[1])\ndef f() -> int @ thread[1]:\n    return 2\n";
    let am = "import x\n@prism(\"device\")\n@requires(thread[1])\ndef g() -> int @ thread[1]:\n    return x.f() * 10\n";
    let root = r#"
import a.m
import x

@prism("global")
@requires(grid[1], block[1], thread[1])
def k(out : ptr(int)):
    t : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: t + i) as o:
        with group(thread[1]):
            o[0] = a.m.g() + x.f()
"#;
    let (out, synced, _) = compile(&[("a/x.prism", ax), ("b/x.prism", bx), ("a/m.prism", am)], root, &["b"]);
    let synced = synced.unwrap_or_else(|| panic!("{out}"));
    let m = prism_interp::Module::new(&synced);
    let args = [prism_interp::Arg::buffer(&[0i32; 4])];
    let o = m.launch("k", 1, 4, &args, prism_interp::Config::default()).expect("launch");
    assert!(o.is_clean(), "{:?}", o.reports);
    assert_eq!(args[0].as_buffer().expect("buffer").to_bits(), vec![12u64; 4]);
}

#[test]
fn missing_modules_and_names_are_unresolved_imports_on_the_import_line() {
    let (out, synced, p) =
        compile(&[("lib/util.prism", UTIL)], &kernel("import lib.utils", "lib.utils.scaled_sum"), &["inc"]);
    assert!(synced.is_none());
    // One error: the uses of a module that failed to load are not reported again.
    assert_eq!(codes(&p), ["unresolved-import"], "{out}");
    assert!(out.contains("main.prism:1:1") && out.contains("`lib/utils.prism`, `inc/lib/utils.prism`"), "{out}");

    let (out, _, p) = compile(&[("lib/util.prism", UTIL)], &kernel("from lib.util import scaled", "scaled"), &[]);
    assert_eq!(codes(&p), ["unresolved-import"], "{out}");
    assert!(out.contains("defines no `scaled`") && out.contains("`SCALE`, `scaled_sum`"), "{out}");
}

#[test]
fn imported_names_are_not_re_exported() {
    // `lib.util` imports `warp_sum` from the standard library; it does not export it.
    let (out, _, p) = compile(&[("lib/util.prism", UTIL)], &kernel("from lib.util import warp_sum", "warp_sum"), &[]);
    assert_eq!(codes(&p), ["unresolved-import"], "{out}");
    let (out, _, p) = compile(&[("lib/util.prism", UTIL)], &kernel("import lib.util as u", "u.warp_sum"), &[]);
    assert_eq!(codes(&p), ["unknown-name"], "{out}");
    assert!(out.contains("`u` defines: `SCALE`, `scaled_sum`"), "{out}");
}

#[test]
fn cycles_are_refused_wherever_they_close() {
    let a = "import b\n@prism(\"device\")\n@requires(thread[1])\ndef fa() -> int @ thread[1]:\n    return 1\n";
    let b = "import c\n";
    let c = "import a\n";
    let (out, synced, p) = compile(&[("a.prism", a), ("b.prism", b), ("c.prism", c)], "import a\n", &[]);
    assert!(synced.is_none());
    assert_eq!(codes(&p), ["unresolved-import"], "{out}");
    assert!(out.contains("import cycle") && out.contains("`a` -> `b` -> `c` -> `a`"), "{out}");
    // A file that imports itself.
    let (out, _, p) = compile(&[("main.prism", "import main\n")], "import main\n", &[]);
    assert_eq!(codes(&p), ["unresolved-import"], "{out}");
}

#[test]
fn the_root_importing_itself_is_one_clear_error() {
    // The root is known by its key, so importing it (directly, by `from`, or through a
    // module it imports) is a cycle at the import, not a second copy of the root loaded as
    // a module whose `k` then clashed with the root's (until 2026-12-02: a
    // `duplicate-definition` beside a cycle reported inside the copy).
    let root = kernel("from main import k", "k_sum");
    let root = format!(
        "{root}\n@prism(\"device\")\n@requires(thread[32])\ndef k_sum(v : float @ thread[1]) -> float @ thread[32]:\n    return 0.0\n"
    );
    let (out, synced, p) = compile(&[("main.prism", &root)], &root, &[]);
    assert!(synced.is_none());
    assert_eq!(codes(&p), ["unresolved-import"], "{out}");
    assert!(out.contains("`main` is this file itself: a module cannot import itself"), "{out}");
    assert!(out.contains("main.prism:1:1"), "{out}");
    let root = root.replace("from main import k", "import back");
    let back = "import main\n";
    let (out, _, p) = compile(&[("main.prism", &root), ("back.prism", back)], &root, &[]);
    assert_eq!(codes(&p), ["unresolved-import"], "{out}");
    assert!(out.contains("the chain is `main.prism` -> `back` -> `main`;"), "{out}");
}

#[test]
fn a_module_imported_twice_is_loaded_once() {
    // `import m` and `from m import f` bind different names to one module's functions.
    let root = kernel("import lib.util\nfrom lib.util import scaled_sum", "scaled_sum");
    let (out, synced, _) = compile(&[("lib/util.prism", UTIL)], &root, &[]);
    let synced = synced.unwrap_or_else(|| panic!("{out}"));
    let scaled = synced.ir().functions.iter().filter(|f| f.name.ends_with("scaled_sum")).count();
    assert_eq!(scaled, 1);
    // The same import twice binds one name twice: refused, saying so (not with the help for
    // a variable declared twice), and nothing else is reported.
    for imports in
        ["import lib.util\nimport lib.util", "from lib.util import scaled_sum\nfrom lib.util import scaled_sum"]
    {
        let call = if imports.starts_with("from") { "scaled_sum" } else { "lib.util.scaled_sum" };
        let (out, synced, p) = compile(&[("lib/util.prism", UTIL)], &kernel(imports, call), &[]);
        assert!(synced.is_none());
        assert_eq!(codes(&p), ["duplicate-definition"], "{out}");
        assert!(out.contains("this import binds it again") && out.contains("first bound here"), "{out}");
        assert!(!out.contains("without `: type`"), "{out}");
    }
}

#[test]
fn deep_import_chains_are_refused_without_overflowing() {
    let files: Vec<(String, String)> =
        (0..200).map(|i| (format!("m{i}.prism"), format!("import m{}\n", i + 1))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let (out, synced, p) = compile(&refs, "import m0\n", &[]);
    assert!(synced.is_none());
    assert!(codes(&p).contains(&"unresolved-import") && out.contains("nest more than 64"), "{out}");
}

#[test]
fn errors_in_an_imported_file_point_at_it_and_at_the_import() {
    // A perspective error inside the library, and a syntax error in another.
    let bad = r#"
@prism("device")
@requires(thread[32])
def leak(v : float @ thread[1]) -> float @ thread[32]:
    return v
"#;
    let broken = "@prism(\"device\")\ndef oops(:\n";
    let (out, synced, p) = compile(
        &[("lib/bad.prism", bad), ("lib/broken.prism", broken)],
        &kernel("import lib.bad\nimport lib.broken", "lib.bad.leak"),
        &[],
    );
    assert!(synced.is_none());
    assert!(codes(&p).contains(&"write-down") && codes(&p).contains(&"unclosed-delimiter"), "{out}");
    assert!(out.contains("lib/bad.prism:5:12") && out.contains("imported here"), "{out}");
    assert!(out.contains("lib/broken.prism:2"), "{out}");
}

#[test]
fn calls_into_a_module_are_checked_against_its_signatures() {
    // `scaled_sum` needs a whole warp: calling it from thread[1] code is
    // `call-perspective` at the call, in the root file.
    let root = r#"
from lib.util import scaled_sum

@prism("global")
@requires(grid[1], block[1], thread[32])
def k(x : ptr(const(float))):
    with group(thread[1]):
        s : float @ thread[1] = scaled_sum(x[0])
"#;
    let (out, _, p) = compile(&[("lib/util.prism", UTIL)], root, &[]);
    assert_eq!(codes(&p), ["call-perspective"], "{out}");
    assert!(out.contains("main.prism:8"), "{out}");
}

#[test]
fn a_name_bound_twice_is_a_duplicate_definition() {
    let own = r#"
from lib.util import scaled_sum

@prism("device")
@requires(thread[32])
def scaled_sum(v : float @ thread[1]) -> float @ thread[32]:
    return 0.0
"#;
    let (out, _, p) = compile(&[("lib/util.prism", UTIL)], own, &[]);
    assert_eq!(codes(&p), ["duplicate-definition"], "{out}");
    let (out, _, p) =
        compile(&[("lib/util.prism", UTIL)], "from lib.util import SCALE\nSCALE : constexpr(int) = 4\n", &[]);
    assert_eq!(codes(&p), ["duplicate-definition"], "{out}");
    let (out, _, p) = compile(
        &[("lib/util.prism", UTIL)],
        "from lib.util import SCALE\nfrom lib.util import scaled_sum as SCALE\n",
        &[],
    );
    assert_eq!(codes(&p), ["duplicate-definition"], "{out}");
    let (out, _, p) = compile(&[("lib/util.prism", UTIL)], "import lib.util as u\nimport prism.std.warp as u\n", &[]);
    assert_eq!(codes(&p), ["duplicate-definition"], "{out}");
}

#[test]
fn imported_constants_are_constants() {
    // `u.SCALE` sizes an array and a loop; `SCALE` is typed `int`.
    let root = r#"
import lib.util as u

@prism("global")
@requires(grid[1], block[1], thread[1])
def k(out : ptr(int)):
    t : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: u.SCALE * t + i) as o:
        with group(thread[1]):
            a : int[u.SCALE] @ thread[1]
            for j in range(u.SCALE):
                a[j] = j * u.SCALE
            for j in range(u.SCALE):
                o[j] = a[j]
"#;
    let (out, synced, _) = compile(&[("lib/util.prism", UTIL)], root, &[]);
    let synced = synced.unwrap_or_else(|| panic!("{out}"));
    let m = prism_interp::Module::new(&synced);
    let args = [prism_interp::Arg::buffer(&[0i32; 6])];
    let o = m.launch("k", 1, 2, &args, prism_interp::Config::default()).expect("launch");
    assert!(o.is_clean(), "{:?}", o.reports);
    assert_eq!(args[0].as_buffer().expect("buffer").to_bits(), vec![0, 3, 6, 0, 3, 6]);
}

#[test]
fn imported_kernels_are_launched_by_their_path_and_printed_apart() {
    let lib = r#"
@prism("global")
@requires(grid[1], block[1], thread[1])
def k(out : ptr(int)):
    t : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: t + i) as o:
        with group(thread[1]):
            o[0] = 7
"#;
    let root = r#"
import lib.kernels

@prism("global")
@requires(grid[1], block[1], thread[1])
def k(out : ptr(int)):
    t : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: t + i) as o:
        with group(thread[1]):
            o[0] = 1
"#;
    let (out, synced, _) = compile(&[("lib/kernels.prism", lib)], root, &[]);
    let synced = synced.unwrap_or_else(|| panic!("{out}"));
    let m = prism_interp::Module::new(&synced);
    for (name, want) in [("k", 1u64), ("lib.kernels.k", 7)] {
        let args = [prism_interp::Arg::buffer(&[0i32; 2])];
        m.launch(name, 1, 2, &args, prism_interp::Config::default()).expect("launch");
        assert_eq!(args[0].as_buffer().expect("buffer").to_bits(), vec![want; 2], "{name}");
    }
    // The root's kernel keeps its symbol; the imported one is named by its path.
    let cuda = prism_cuda::emit(&synced, &prism_cuda::Options::default());
    assert!(cuda.text.contains("extern \"C\" __global__ void k(") && cuda.text.contains("void lib_kernels_k("));
}

#[test]
fn an_imported_functions_shared_memory_overlaps_no_array_of_its_caller() {
    // Adversarial (docs/soundness.md §10): a generic of one user module, instantiated in
    // another, whose shared array is live while the caller's static array and its
    // launch-sized one hold values the caller reads afterwards. The callee's array starts
    // at the caller's current offset (past `s`), the dynamic one after the kernel's static
    // peak (which counts the callee), so nothing is clobbered and nothing races, under any
    // schedule.
    let ops = r#"
@prism("device")
@requires(block[1], thread[32], smem=N * 4)
def rotate_through[T](v : T @ thread[1], N : constexpr(int)) -> T @ thread[1]:
    sc : shared(T[N]) @ block[1]
    t : int @ thread[1] = id()
    with partition(sc, p=thread[1], f=lambda i: t + i) as m:
        with group(thread[1]):
            m[0] = v
    r : T @ thread[1] = T(0)
    with group(thread[1]):
        r = sc[(t + 1) % block_dim()]
    return r
"#;
    let uses = r#"
from ops import rotate_through

@prism("device")
@requires(block[1], thread[32], smem=512)
def twice(v : int @ thread[1]) -> int @ thread[1]:
    once : int @ thread[1] = rotate_through[int](v, 128)
    return rotate_through[int](once * 2, 128)
"#;
    let root = r#"
from lib.use import twice

@prism("global")
@requires(grid[1], block[1], thread[32], smem=1024)
@launch_bounds(128)
def k(x : ptr(const(int)), out : ptr(int), dn : int, dyn : shared(int[dn])):
    b : int @ block[1] = id()
    with partition(out, p=block[1], f=lambda i: b * 3 * block_dim() + i) as ob:
        with group(block[1]):
            t : int @ thread[1] = id()
            s : shared(int[128]) @ block[1]
            with partition(s, p=thread[1], f=lambda i: t + i) as sm:
                with group(thread[1]):
                    sm[0] = x[b * block_dim() + t]
            with partition(dyn, p=thread[1], f=lambda i: t + i) as dm:
                with group(thread[1]):
                    dm[0] = 0 - x[b * block_dim() + t]
            r : int @ thread[1] = twice(t)
            with partition(ob, p=thread[1], f=lambda i: 3 * t + i) as o:
                with group(thread[1]):
                    o[0] = s[t]
                    o[1] = dyn[t]
                    o[2] = r
"#;
    let (out, synced, _) = compile(&[("lib/ops.prism", ops), ("lib/use.prism", uses)], root, &[]);
    let synced = synced.unwrap_or_else(|| panic!("{out}"));
    let m = prism_interp::Module::new(&synced);
    for threads in [64usize, 128] {
        let x: Vec<i32> = (0..2 * threads as i32).map(|i| i * 7 + 1).collect();
        let mut want = Vec::new();
        for b in 0..2 {
            for t in 0..threads {
                want.extend([x[b * threads + t], -x[b * threads + t], 2 * ((t + 2) % threads) as i32]);
            }
        }
        for seed in [None, Some(1), Some(2), Some(3)] {
            let args = [
                prism_interp::Arg::buffer(&x),
                prism_interp::Arg::buffer(&vec![0i32; 6 * threads]),
                prism_interp::Arg::value(threads as i32),
            ];
            let cfg = prism_interp::Config { seed, ..prism_interp::Config::default() };
            let o = m.launch("k", 2, threads as u32, &args, cfg).expect("launch");
            assert!(o.is_clean(), "{threads} threads, seed {seed:?}: {:?}", o.reports);
            let got = args[1].as_buffer().and_then(|b| b.to_vec::<i32>()).expect("ints");
            assert_eq!(got, want, "{threads} threads, seed {seed:?}");
        }
    }
}
