//! The CUDA printer's names: every Prism identifier becomes a C++ name nvcc accepts and
//! that hides nothing the printed code uses (docs/cuda.md, "Names"). Review R39 found
//! programs `prism check` accepts whose CUDA nvcc refused: variables named like C++
//! keywords (`static_cast`), like macros of the headers nvcc includes (`INT_MAX` expanded
//! to `0x7fffffff`), like the math functions the printer calls (`sqrtf`), a function named
//! like a printer temporary (`t11`), a kernel named like a C library function (`expf`, an
//! `extern "C"` clash), and parameters that sanitise to one name (`new`, `new_`).
//!
//! Two checks with nvcc: the program of `tests/ui/accept/rules/cpp_names.prism`, which
//! holds one of each, compiles with its host launchers to an object; and every macro the
//! prelude's headers define (`nvcc -E -dM`, which differs between hosts and CUDA versions)
//! is a name `analysis::sanitize` renames, so no Prism identifier can be one. And every
//! identifier of those headers (`nvcc -E`), as a kernel's name and as a device function's,
//! compiles: the C-linkage functions, variables and types they declare at global scope
//! (`asctime`, `extern long timezone`) are in `prism_cuda`'s `src/header_names/` lists.

// `run_with_tools`, for the one-trial harnesses, is not used here.
#[allow(dead_code)]
mod common;

use prism_gpu::toolchain::{self, Emit};

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    common::run_trials(
        toolchain::find_nvcc(),
        "nvcc",
        "run scripts/install-nvcc.sh, or set PRISM_NVCC",
        vec![
            ("unusual_source_names_compile", Box::new(|nvcc: PathBuf| unusual_names_compile(&nvcc))),
            ("every_header_macro_is_renamed", Box::new(|nvcc: PathBuf| every_macro_is_renamed(&nvcc))),
            ("every_header_name_is_renamed", Box::new(|nvcc: PathBuf| every_header_name_is_renamed(&nvcc))),
            ("copied_comments_swallow_no_statement", Box::new(|nvcc: PathBuf| comments_swallow_nothing(&nvcc))),
        ],
    )
}

fn tmp() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("names");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    Ok(dir)
}

fn unusual_names_compile(nvcc: &Path) -> Result<(), String> {
    let rel = "rules/cpp_names";
    let out = common::emit_with_host(rel)?;
    // The kernels' symbols are not the C library's `expf` and `atan2f`; the launcher's
    // parameters avoid the map's dimension parameters.
    for want in [
        "extern \"C\" __global__ void __launch_bounds__(64) expf_(",
        "__global__ void atan2f_(",
        "unsigned long long dims_rows, unsigned long long dims_cols, int dims_rows_, int err,",
    ] {
        if !out.text.contains(want) {
            return Err(format!("no `{want}` in\n{}", out.text));
        }
    }
    let cu = tmp()?.join("cpp_names.cu");
    std::fs::write(&cu, &out.text).map_err(|e| e.to_string())?;
    let built = toolchain::compile(nvcc, &cu, &cu.with_extension("o"), "sm_90a", Emit::Object)
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    if built.ok { Ok(()) } else { Err(format!("nvcc refuses the CUDA of {rel}:\n{}", built.log)) }
}

/// The program of `tests/ui/accept/rules/cpp_comments.prism`, printed with its comments,
/// keeps every statement of its kernels through nvcc's preprocessor: each line of code of a
/// kernel's body (with its `// line N` note cut off) is still in the preprocessed body. A
/// comment ending in a backslash took the next line into it (review R72): the written
/// `__syncthreads()` and the store `o[1] = 2` were gone from the preprocessed code.
fn comments_swallow_nothing(nvcc: &Path) -> Result<(), String> {
    let out = common::emit_accepted("rules/cpp_comments", |src| prism_cuda::Options {
        source: Some(src.to_string()),
        ..prism_cuda::Options::default()
    })?;
    let cu = tmp()?.join("cpp_comments.cu");
    std::fs::write(&cu, &out.text).map_err(|e| e.to_string())?;
    let run = Command::new(nvcc)
        .args(["-arch=sm_90a", "-std=c++17", "-E"])
        .arg(&cu)
        .output()
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    if !run.status.success() {
        return Err(format!("nvcc -E failed:\n{}", String::from_utf8_lossy(&run.stderr)));
    }
    let pre = String::from_utf8_lossy(&run.stdout);
    // The body of kernel `k` in a text: from its signature to the first `}` in column 0.
    let body = |text: &str, k: &str| -> Option<String> {
        let start = text.find(&format!("void {k}("))?;
        let len = text[start..].find("\n}")?;
        Some(text[start..start + len].to_string())
    };
    for k in ["barrier_after", "store_after"] {
        let printed = body(&out.text, k).ok_or_else(|| format!("no kernel `{k}` in\n{}", out.text))?;
        let kept = body(&pre, k).ok_or_else(|| format!("no kernel `{k}` in the preprocessed CUDA"))?;
        // Lines with the macros `__shared__` and `__align__` are expanded, and left out.
        let code = printed
            .lines()
            .skip(1)
            .map(|l| l.split("//").next().unwrap_or("").trim())
            .filter(|c| !c.is_empty() && !c.contains("__shared__"));
        let mut statements = 0;
        for c in code {
            statements += 1;
            if !kept.contains(c) {
                return Err(format!("`{c}` of `{k}` is gone after preprocessing:\n{printed}\n---\n{kept}"));
            }
        }
        if statements < 4 {
            return Err(format!("only {statements} lines of code in `{k}`:\n{printed}"));
        }
    }
    Ok(())
}

fn every_macro_is_renamed(nvcc: &Path) -> Result<(), String> {
    let includes: String =
        prism_cuda::prelude::PRELUDE.lines().filter(|l| l.starts_with("#include")).map(|l| format!("{l}\n")).collect();
    let cu = tmp()?.join("macros.cu");
    std::fs::write(&cu, includes).map_err(|e| e.to_string())?;
    let out = Command::new(nvcc)
        .args(["-arch=sm_90a", "-E", "-Xcompiler", "-dM"])
        .arg(&cu)
        .output()
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    if !out.status.success() {
        return Err(format!("nvcc -E -dM failed:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .map(|l| l.split(|c: char| c == '(' || c.is_whitespace()).next().unwrap_or(""))
        // Names a Prism identifier could be: `sanitize` renames every name with `__` or a
        // leading `_` anyway.
        .filter(|n| {
            n.starts_with(|c: char| c.is_ascii_alphabetic())
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !n.contains("__")
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.len() < 100 {
        return Err(format!("only {} macros: is the output of `nvcc -E -dM` as expected?\n{text}", names.len()));
    }
    let kept: Vec<&str> = names.iter().copied().filter(|n| prism_cuda::analysis::sanitize(n) == *n).collect();
    if kept.is_empty() {
        Ok(())
    } else {
        Err(format!("macros a Prism variable could be named and the printer would not rename: {kept:?}"))
    }
}

/// The headers printed CUDA may include: the prelude's, `cuda_runtime.h` (which nvcc
/// includes in every file) and `cuda.h` (the launchers of typed tensor maps).
fn header_includes() -> String {
    let mut s: String =
        prism_cuda::prelude::PRELUDE.lines().filter(|l| l.starts_with("#include")).map(|l| format!("{l}\n")).collect();
    s.push_str("#include <cuda_runtime.h>\n#include <cuda.h>\n");
    s
}

/// Every identifier of the preprocessed headers that a Prism function could be named: not
/// a Prism keyword or built-in, and without `__` or a leading `_` (`sanitize` renames
/// those anyway).
fn header_identifiers(nvcc: &Path) -> Result<Vec<String>, String> {
    let cu = tmp()?.join("headers.cu");
    std::fs::write(&cu, header_includes()).map_err(|e| e.to_string())?;
    let out = Command::new(nvcc)
        .args(["-arch=sm_90a", "-E"])
        .arg(&cu)
        .output()
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    if !out.status.success() {
        return Err(format!("nvcc -E failed:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut names: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .filter(|n| n.starts_with(|c: char| c.is_ascii_alphabetic()) && !n.contains("__"))
        .filter(|n| {
            prism_syntax::token::Keyword::from_word(n).is_none()
                && prism_types::intrinsics::lookup(n).is_none()
                && *n != "id"
        })
        .map(str::to_string)
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.len() < 1000 {
        return Err(format!("only {} identifiers: is the output of `nvcc -E` as expected?", names.len()));
    }
    Ok(names)
}

/// The name a printed function declaration or definition line declares: the identifier
/// before its first `(`, past `__launch_bounds__(...)`.
fn declared_name(line: &str) -> Option<String> {
    line.split('(')
        .filter_map(|seg| {
            let seg = seg.trim_end();
            let start = seg.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            let id = &seg[start..];
            (!id.is_empty() && id != "__launch_bounds__").then(|| id.to_string())
        })
        .next()
}

/// Compiles one function per name (`kind` "global": kernels; "device": device functions
/// called from nowhere) through nvcc's front end; returns the printed names nvcc refuses.
fn refused_names(nvcc: &Path, names: &[String], kind: &str) -> Result<Vec<String>, String> {
    let mut src = String::new();
    for n in names {
        if kind == "global" {
            src.push_str(&format!(
                "@prism(\"global\")\n@requires(grid[1], block[1], thread[32])\ndef {n}(x : ptr(float)):\n    with partition(x, p=thread[1], f=lambda i: i) as mine:\n        with group(thread[1]):\n            mine[0] = 1.0\n\n"
            ));
        } else {
            src.push_str(&format!(
                "@prism(\"device\")\n@requires(thread[1])\ndef {n}(a : float) -> float:\n    return a * 2.0\n\n"
            ));
        }
    }
    if kind != "global" {
        src.push_str("@prism(\"global\")\n@requires(grid[1], block[1], thread[32])\ndef the_kernel(x : ptr(float)):\n    with partition(x, p=thread[1], f=lambda i: i) as mine:\n        with group(thread[1]):\n            mine[0] = 1.0\n");
    }
    let s = prism_test::synced(&format!("{kind}_names"), &src, &prism_driver::Options::default())?;
    let out = prism_cuda::emit(&s, &prism_cuda::Options::default());
    if !out.errors.is_empty() {
        return Err(format!("{kind} names: {:?}", out.errors));
    }
    let cu = tmp()?.join(format!("{kind}_names.cu"));
    std::fs::write(&cu, &out.text).map_err(|e| e.to_string())?;
    // The front end only (`--cuda`): the clashes are its errors, and it reports them all.
    let run = Command::new(nvcc)
        .args(["-arch=sm_90a", "--cuda", "-Xcudafe", "--error_limit=100000", "-o"])
        .arg(cu.with_extension("ii"))
        .arg(&cu)
        .output()
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    if run.status.success() {
        return Ok(Vec::new());
    }
    let log = String::from_utf8_lossy(&run.stderr).into_owned() + &String::from_utf8_lossy(&run.stdout);
    let lines: Vec<&str> = out.text.lines().collect();
    let tag = format!("{}(", cu.file_name().and_then(|f| f.to_str()).unwrap_or_default());
    let mut refused: Vec<String> = log
        .lines()
        .filter(|l| l.contains("error"))
        .filter_map(|l| l.split(&tag).nth(1)?.split(')').next()?.parse::<usize>().ok())
        .filter_map(|n| declared_name(lines.get(n.checked_sub(1)?)?))
        .collect();
    refused.sort_unstable();
    refused.dedup();
    if refused.is_empty() {
        return Err(format!("nvcc refused the {kind} names' CUDA ({}) for another reason:\n{log}", cu.display()));
    }
    Ok(refused)
}

/// Adds `names` to a list of `prism_cuda`'s `src/header_names/`, keeping its comment lines
/// first and the names sorted and unique.
fn bless_list(file: &str, names: &[String]) -> Result<(), String> {
    let path = prism_test::repo_root().join("crates/prism_cuda/src/header_names").join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (comments, listed): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with('#'));
    let mut all: Vec<&str> = listed.into_iter().chain(names.iter().map(String::as_str)).collect();
    all.sort_unstable();
    all.dedup();
    let out: String = comments.iter().chain(all.iter()).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, out).map_err(|e| format!("{}: {e}", path.display()))
}

fn every_header_name_is_renamed(nvcc: &Path) -> Result<(), String> {
    let names = header_identifiers(nvcc)?;
    let mut problems = Vec::new();
    // Device functions first: a name they cannot take is a global (a variable or a type),
    // which kernels cannot take either; what kernels refuse beyond those has C linkage.
    for (kind, file) in [("device", "globals.txt"), ("global", "c_linkage.txt")] {
        let refused = refused_names(nvcc, &names, kind)?;
        if refused.is_empty() {
            continue;
        }
        // A refused name the printer renamed already (`x_`) cannot be fixed by the list.
        let (unrenamed, renamed): (Vec<String>, Vec<String>) =
            refused.into_iter().partition(|n| names.binary_search(n).is_ok());
        if !renamed.is_empty() {
            problems.push(format!("{kind} functions nvcc refuses although renamed: {renamed:?}"));
        }
        if unrenamed.is_empty() {
            continue;
        }
        if prism_test::blessing() {
            bless_list(file, &unrenamed)?;
            problems.push(format!("added {} names to {file}: rebuild and run again", unrenamed.len()));
        } else {
            problems.push(format!(
                "{kind} functions nvcc refuses, to add to crates/prism_cuda/src/header_names/{file} (or run with PRISM_BLESS=1): {unrenamed:?}"
            ));
        }
        // Kernels would repeat the globals' refusals: fix those first.
        break;
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
}
