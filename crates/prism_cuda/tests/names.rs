//! The printer's names, without nvcc (which `prism_gpu`'s `names.rs` runs on
//! `tests/ui/accept/rules/cpp_names.prism`): no declaration takes the name of a function
//! the program defines, parameters that sanitise alike stay apart, and names C++ reads as
//! keywords or macros are renamed (review R39; docs/cuda.md, "Names").

mod common;

fn cuda(src: &str) -> String {
    let synced = common::synced("names.prism", src);
    let opts = prism_cuda::Options { prelude: false, ..prism_cuda::Options::default() };
    prism_cuda::emit(&synced, &opts).text
}

/// The names a line declares (`const int x = ...`, `int x = ...`, `float x[4]`).
fn declared(line: &str) -> Option<&str> {
    let l = line.trim_start().strip_prefix("const ").unwrap_or(line.trim_start());
    let (ty, rest) = l.split_once(' ')?;
    if !["int", "float", "unsigned", "bool", "double", "long"].contains(&ty) {
        return None;
    }
    rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next()
}

#[test]
fn no_temporary_takes_the_name_of_a_function() {
    // Functions named like every temporary the kernel could have; the kernel's expression
    // keeps temporaries (two calls with effects, R38's shape).
    let mut src = String::new();
    for k in 0..80 {
        src.push_str(&format!(
            "@prism(\"device\")\n@requires(thread[1])\ndef t{k}(x : int @ thread[1]) -> int @ thread[1]:\n    return x + {k}\n\n"
        ));
    }
    src.push_str(
        r#"@prism("device")
@requires(thread[1])
def bump(c : ptr(int) @ thread[1]) -> int @ thread[1]:
    return atomic_add(c[0], 1)

@prism("global")
@requires(grid[1], block[1], thread[32])
def k(c : ptr(int) @ grid[1], out : ptr(int) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(c, p=thread[1], f=lambda i: g + i) as mine:
        with partition(out, p=thread[1], f=lambda i: g + i) as o:
            with group(thread[1]):
                o[0] = t5(bump(mine) * 2 + bump(mine)) + t7(bump(mine) * 3 + t6(bump(mine)))
"#,
    );
    let text = cuda(&src);
    let body = &text[text.find("void k(").expect("the kernel")..];
    let temps: Vec<&str> = body.lines().filter_map(declared).collect();
    assert!(temps.iter().any(|n| n.starts_with('t') && n.contains('_')), "no renamed temporary:\n{body}");
    for n in temps {
        let clash = n.strip_prefix('t').and_then(|d| d.parse::<u32>().ok()).is_some_and(|d| d < 80);
        assert!(!clash, "`{n}` hides the function `{n}`:\n{body}");
    }
}

#[test]
fn parameters_that_sanitise_alike_stay_apart() {
    let text = cuda(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32])
def k(new : int, new_ : int, out : ptr(int) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as o:
        with group(thread[1]):
            o[0] = new * 10 + new_
"#,
    );
    assert!(text.contains("void k(int new_,\n") || text.contains("void k(int new_, int new__"), "{text}");
    assert!(text.contains("int new__"), "{text}");
    assert!(text.contains("prism_mul(new_, 10), new__)"), "{text}");
}

#[test]
fn keywords_macros_and_math_functions_are_renamed() {
    for name in [
        "static_cast",
        "bitand",
        "decltype",
        "INT_MAX",
        "NULL",
        "EOF",
        "unix",
        "stdin",
        "M_PIf",
        "sqrtf",
        "exp",
        "size_t",
        "float4",
        "int8_t",
        "uint_fast32_t",
        "std",
    ] {
        let text = cuda(&format!(
            r#"
@prism("global")
@requires(grid[1], block[1], thread[32])
def k(out : ptr(int) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as o:
        with group(thread[1]):
            {name} : int = g * 3
            o[0] = {name} + 1
"#
        ));
        assert!(text.contains(&format!("const int {name}_ = ")), "{name}:\n{text}");
    }
    // Single letters and ordinary mixed-case names keep theirs.
    assert_eq!(prism_cuda::analysis::sanitize("N"), "N");
    assert_eq!(prism_cuda::analysis::sanitize("A_smem"), "A_smem");
    assert_eq!(prism_cuda::analysis::sanitize("tile_row"), "tile_row");
    assert_eq!(prism_cuda::analysis::sanitize("y_t"), "y_t");
    assert_eq!(prism_cuda::analysis::kernel_symbol("expf"), "expf_");
    for name in ["atan2f", "fabsf", "roundl", "strnlen", "clock64", "cuInit", "cuMemAlloc"] {
        assert_eq!(prism_cuda::analysis::kernel_symbol(name), format!("{name}_"));
    }
    assert_eq!(prism_cuda::analysis::kernel_symbol("sgemm"), "sgemm");
    // Generated from the headers (`header_names/`): C-linkage functions only for kernels,
    // global variables and types for every function.
    for name in ["asctime", "fmaximum_num", "acosf32x", "bcmp"] {
        assert_eq!(prism_cuda::analysis::kernel_symbol(name), format!("{name}_"));
        assert_eq!(prism_cuda::analysis::sanitize(name), name);
    }
    for name in ["timezone", "daylight", "tzname", "signgam", "u_int", "nv_half"] {
        assert_eq!(prism_cuda::analysis::sanitize(name), format!("{name}_"));
    }
}

/// The lists in `src/header_names/` are looked up by binary search: each must be sorted,
/// without repeats, one identifier per line.
#[test]
fn header_name_lists_are_sorted_identifiers() {
    for (file, text) in [
        ("c_linkage.txt", include_str!("../src/header_names/c_linkage.txt")),
        ("globals.txt", include_str!("../src/header_names/globals.txt")),
    ] {
        let names: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(names.len() > 50, "{file}: {} names", names.len());
        for n in &names {
            assert!(
                n.starts_with(|c: char| c.is_ascii_alphabetic())
                    && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{file}: `{n}` is not an identifier"
            );
        }
        for w in names.windows(2) {
            assert!(w[0] < w[1], "{file}: `{}` before `{}` (sorted, no repeats)", w[0], w[1]);
        }
    }
}
