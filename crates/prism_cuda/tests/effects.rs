//! Effects survive the backend's expression folding. `analysis::inline` folds a
//! single-use value into its use and dead registers are not emitted; an atomic whose old
//! value is bound to a name nobody reads (`old = atomic_add(h[i], 1)`, the histogram idiom)
//! was folded into the dead copy and vanished from the CUDA while the simulator ran it. The
//! GPU comparison of 2026-11-26 found it (BENCHMARKS.md, "GPU runs"). These are the
//! programs an adversary would write against the folding: unused results of every kind of
//! effect, chains of pure arithmetic over an effect, effects in loops and branches, calls
//! with effects, and the whole corpus counted.

mod common;

use prism_ir::ir::InstKind;
use prism_test::{prism_files, repo_root};
use prism_types::intrinsics::Family;

fn cuda(src: &str) -> String {
    let synced = common::synced("effects.prism", src);
    let opts = prism_cuda::Options { prelude: false, ..prism_cuda::Options::default() };
    prism_cuda::emit(&synced, &opts).text
}

fn kernel(params: &str, body: &str) -> String {
    format!(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32])
def k(n : int, {params}):
    with group(thread[1]):
{body}
"#
    )
}

/// Every accepted program of the corpus: its path from the repository root, the program
/// and its CUDA without the prelude.
fn corpus_cuda() -> Vec<(String, prism_driver::Synced, String)> {
    let root = repo_root();
    prism_files(&root.join("tests/ui/accept"))
        .into_iter()
        .map(|path| {
            let src = std::fs::read_to_string(&path).expect("readable source");
            let rel = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().into_owned();
            let synced = common::synced(&rel, &src);
            let opts = prism_cuda::Options { prelude: false, ..prism_cuda::Options::default() };
            let text = prism_cuda::emit(&synced, &opts).text;
            (rel, synced, text)
        })
        .collect()
}

fn count(text: &str, what: &str) -> usize {
    text.matches(what).count()
}

#[test]
fn an_atomic_whose_old_value_is_unused_is_emitted() {
    for (ty, one) in [("float", "1.5"), ("int", "1"), ("uint", "uint(1)"), ("double", "2.0")] {
        let text = cuda(&kernel(
            &format!("h : ptr({ty}) @ grid[1]"),
            &format!("        old : {ty} = atomic_add(h[0], {one})"),
        ));
        assert_eq!(count(&text, "prism_atomic_add(&h[0]"), 1, "{ty}:\n{text}");
    }
}

#[test]
fn every_read_modify_write_with_an_unused_result_is_emitted() {
    let body = [
        "        a : int = atomic_add(c[0], 1)",
        "        b : int = atomic_sub(c[1], 1)",
        "        d : int = atomic_min(c[2], n)",
        "        e : int = atomic_max(c[3], n)",
        "        f : int = atomic_and(c[4], 7)",
        "        g : int = atomic_or(c[5], 8)",
        "        x : int = atomic_xor(c[6], n)",
        "        y : int = atomic_exch(c[7], n)",
        "        z : int = atomic_cas(c[8], 0, n)",
        "        s : float = atomic_sub(f32s[0], 1.0)",
        "        m : float = atomic_max(f32s[1], 1.0)",
    ]
    .join("\n");
    let text = cuda(&kernel("c : ptr(int) @ grid[1], f32s : ptr(float) @ grid[1]", &body));
    for (op, at) in [
        ("add", "c[0]"),
        ("sub", "c[1]"),
        ("min", "c[2]"),
        ("max", "c[3]"),
        ("and", "c[4]"),
        ("or", "c[5]"),
        ("xor", "c[6]"),
        ("exch", "c[7]"),
        ("cas", "c[8]"),
        ("sub", "f32s[0]"),
        ("max", "f32s[1]"),
    ] {
        assert_eq!(count(&text, &format!("prism_atomic_{op}(&{at}")), 1, "atomic_{op} on {at}:\n{text}");
    }
}

#[test]
fn pure_arithmetic_over_an_unused_atomic_keeps_the_atomic() {
    // The atomic folds into `x + 1`, which folds into the dead copy `y`.
    let body = "        x : int = atomic_add(c[0], 1) + 1\n        y : int = x * 2 - n";
    let text = cuda(&kernel("c : ptr(int) @ grid[1]", body));
    assert_eq!(count(&text, "prism_atomic_add(&c[0]"), 1, "{text}");
}

#[test]
fn unused_atomics_in_loops_and_branches_are_emitted() {
    let body = "        for i in range(n):\n            old : int = atomic_add(c[0], 1)\n        if n > 3:\n            o2 : int = atomic_exch(c[1], n)\n        else:\n            o3 : int = atomic_or(c[2], 2)";
    let text = cuda(&kernel("c : ptr(int) @ grid[1]", body));
    for what in ["prism_atomic_add(&c[0]", "prism_atomic_exch(&c[1]", "prism_atomic_or(&c[2]"] {
        assert_eq!(count(&text, what), 1, "{what}:\n{text}");
    }
}

#[test]
fn a_call_with_an_effect_whose_result_is_unused_is_emitted() {
    let src = r#"
@prism("device")
@requires(thread[1])
def bump(c : ptr(int) @ thread[1]) -> int @ thread[1]:
    return atomic_add(c[0], 1)

@prism("global")
@requires(grid[1], block[1], thread[32])
def k(c : ptr(int) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(c, p=thread[1], f=lambda i: g + i) as mine:
        with group(thread[1]):
            unused : int = bump(mine)
            also : int = bump(mine) + 1
"#;
    let text = cuda(src);
    let body = &text[text.find("void k(").expect("kernel k")..];
    assert_eq!(count(body, "bump("), 2, "{text}");
}

/// Over the whole corpus: every atomic of the IR appears in the CUDA. (The CUDA may hold
/// more: a device function is printed once per specialisation.)
#[test]
fn every_atomic_of_the_corpus_reaches_the_cuda() {
    let mut failures = Vec::new();
    for (rel, synced, text) in corpus_cuda() {
        let mut atomics = 0;
        // Only functions the kernels reach are printed (an imported module's others are not).
        let printed = |name: &str| {
            let c: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
            text.contains(&format!(" {c}("))
        };
        for f in synced.ir().functions.iter().filter(|f| printed(&f.name)) {
            f.body.walk(&mut |k| {
                if let InstKind::Intrinsic { intrinsic, .. } = k
                    && intrinsic.sig().family == Family::Atomics
                {
                    atomics += 1;
                }
            });
        }
        let emitted = count(&text, "prism_atomic_");
        if emitted < atomics {
            failures.push(format!("{rel}: {atomics} atomics in the IR, {emitted} in the CUDA"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A select prints as C's `c ? a : b`, which evaluates one side only: an atomic folded into
/// it would run only when chosen. The IR (text: no source construct makes such a select
/// today) runs the atomic always, so the CUDA must too, whether the select's result is used
/// or not.
#[test]
fn an_atomic_under_a_select_runs_unconditionally() {
    let src = r#"
@prism("global")
@requires(grid[1], block[1], thread[32])
def k(n : int, c : ptr(int) @ grid[1], out : ptr(int) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(thread[1]):
            old : int = atomic_add(c[0], 1)
            mine[0] = old
"#;
    let ir = prism_ir::print(common::synced("select.prism", src).ir());
    // `old = copy %atomic` becomes `old = select %flag, %atomic, %seven` with new
    // registers `%flag` (true) and `%seven` (what matters is that C evaluates one side).
    let atomic = ir.lines().find(|l| l.contains("intrinsic atomic_add")).expect("the atomic").trim();
    let result = atomic.split_once(" = ").expect("a result").0;
    let copy = ir.lines().find(|l| l.trim().ends_with(&format!("= copy {result}"))).expect("its copy").trim();
    let (dst, from) = copy.split_once(" = copy ").expect("a copy");
    let regs = ir.lines().filter(|l| l.trim_start().starts_with("reg %")).count();
    let (flag, seven) = (format!("%{regs}"), format!("%{}", regs + 1));
    let last_reg = ir.lines().rfind(|l| l.trim_start().starts_with("reg %")).expect("registers").to_string();
    let text = ir.replacen(&last_reg, &format!("{last_reg}\n  reg {flag}: bool\n  reg {seven}: i32"), 1).replacen(
        copy,
        &format!("{flag} = const true\n        {seven} = const 7\n        {dst} = select {flag}, {from}, {seven}"),
        1,
    );
    assert_ne!(text, ir);
    let synced = prism_driver::assemble(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let opts = prism_cuda::Options { prelude: false, ..prism_cuda::Options::default() };
    let cuda = prism_cuda::emit(&synced, &opts).text;
    let line = cuda.lines().find(|l| l.contains("prism_atomic_add(")).unwrap_or_else(|| panic!("no atomic in\n{cuda}"));
    assert!(!line.contains('?'), "the atomic is inside a select:\n{cuda}");
}

/// The byte offset of `what` in `text`, which must hold it.
fn at(text: &str, what: &str) -> usize {
    text.find(what).unwrap_or_else(|| panic!("no `{what}` in\n{text}"))
}

/// The program of `tests/ui/accept/soundness/fold_order.prism`, printed.
fn fold_order() -> String {
    let path = repo_root().join("tests/ui/accept/soundness/fold_order.prism");
    cuda(&std::fs::read_to_string(path).expect("readable source"))
}

/// A load folded into arithmetic moves with it: `s2[0] * 2 + s[0]` with the barrier for `s`
/// between the two loads must read `s2[0]` before the barrier, where the IR reads it (review
/// R38: the pure `*` carried the load past `__syncthreads()`).
#[test]
fn a_load_folded_into_arithmetic_stays_before_the_barrier() {
    let text = fold_order();
    let step = &text[at(&text, "int step(")..];
    let step = &step[..at(step, "\n}")];
    assert!(at(step, "s2[0]") < at(step, "__syncthreads()"), "{step}");
}

/// The same with the split barrier that motion makes: the load of `s[0]` in `acc + s[0] *
/// (t + 1) + s[1]` stays before the arrive.
#[test]
fn a_load_folded_into_arithmetic_stays_before_the_arrive() {
    let text = fold_order();
    let k = &text[at(&text, "void __launch_bounds__(64) fold_load_before_arrive(")..];
    assert!(at(k, "prism_mul(s[0]") < at(k, "prism_split_arrive("), "{k}");
}

/// Two calls with effects never share one C++ expression, whose operands C++ evaluates in an
/// unspecified order: `bump(c) * 2 + bump(c)` prints the first call in a statement of its
/// own, before the second.
#[test]
fn calls_with_effects_are_printed_in_program_order() {
    let text = fold_order();
    let k = &text[at(&text, "fold_calls_in_order(")..];
    let lines: Vec<&str> = k.lines().filter(|l| l.contains("bump(")).collect();
    assert_eq!(lines.len(), 2, "{k}");
    assert!(lines[0].contains("prism_mul(bump("), "{k}");
    assert!(!lines[1].contains("prism_mul(bump("), "{k}");
}

/// The spans (opening parenthesis to closing one) of the calls in `line` of functions that
/// may have effects: the program's own functions (called with `prism_tid` first) and atomics.
fn effect_calls(line: &str) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut spans = Vec::new();
    for (open, _) in line.match_indices('(') {
        let name_start = line[..open].rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let name = &line[name_start..open];
        if !(line[open..].starts_with("(prism_tid") || name.starts_with("prism_atomic_")) {
            continue;
        }
        let mut depth = 0;
        let close = (open..bytes.len()).find(|&i| {
            match bytes[i] {
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            depth == 0
        });
        spans.push((open, close.unwrap_or(bytes.len())));
    }
    spans
}

/// Over the whole corpus: no printed statement holds two calls with effects side by side
/// (neither inside the other's arguments), whose order C++ leaves unspecified. A call
/// inside another's arguments runs first, as in the IR.
#[test]
fn no_statement_of_the_corpus_holds_two_unsequenced_calls() {
    assert_eq!(effect_calls("x = f(prism_tid, g(prism_tid)) + prism_atomic_add(&a[0], 1);").len(), 3);
    let mut failures = Vec::new();
    for (rel, _, text) in corpus_cuda() {
        for l in text.lines().filter(|l| !l.trim_start().starts_with("__device__")) {
            let spans = effect_calls(l);
            let side_by_side =
                spans.iter().enumerate().any(|(i, a)| spans[i + 1..].iter().any(|b| a.1 < b.0 || b.1 < a.0));
            if side_by_side {
                failures.push(format!("{rel}: {}", l.trim()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `intrinsic.mma` writes its results into a scratch array and stores them to the `out=`
/// places in list order, so places naming one element keep the last result, as in the
/// simulator (review R37: the places were the asm's outputs, and nvcc chose).
#[test]
fn mma_results_are_stored_to_their_places_in_list_order() {
    let path = repo_root().join("tests/ui/accept/soundness/mma_out_places.prism");
    let text = cuda(&std::fs::read_to_string(path).expect("readable source"));
    let k = &text[at(&text, "void mma_same_place(")..];
    let k = &k[..at(k, "\n}")];
    let outputs = k.lines().find(|l| l.contains(": \"=f\"(")).unwrap_or_else(|| panic!("no asm outputs in\n{k}"));
    assert!(!outputs.contains("C["), "the places are the asm's outputs:\n{k}");
    let stores: Vec<&str> = k.lines().map(str::trim).filter(|l| l.starts_with("C[0] = prism_w")).collect();
    assert_eq!(stores.len(), 4, "{k}");
    for (i, l) in stores.iter().enumerate() {
        assert!(l.ends_with(&format!("[{i}];")), "store {i} is `{l}`:\n{k}");
    }
}

/// A value the backend prints as a constant where it is used (a packed `half` array's word
/// at a folded index) is not declared either: nvcc warned "#177: variable declared but
/// never referenced" for `u = ua + 7` in `hv[u]`. The effects around such values stay: an
/// atomic whose result feeds only the folded index is still emitted.
#[test]
fn values_printed_as_constants_are_not_declared() {
    let src = r#"
@prism("global")
@requires(grid[1], block[1], thread[1])
def pairs(c : ptr(int) @ grid[1], o : ptr(half)):
    g : int @ thread[1] = id()
    with partition(o, p=thread[1], f=lambda i: 16 * g + i) as o_t:
        with group(thread[1]):
            hv : half[8] @ thread[1]
            for k in range(8):
                hv[k] = half(k + 1)
            ua : uint = 4294967295
            u : uint = ua + 7
            store_vec(o_t[0], hv[u], 2)
            old : int = atomic_add(c[0], 1)
            j0 : int = 2
            j1 : int = j0 + 2
            store_vec(o_t[2], hv[j1], 2)
            # Kept: printed in an index that does not fold.
            w : int = old + 2
            hv[w % 8] = half(0)
            store_vec(o_t[4], hv[4], 2)
"#;
    let text = cuda(src);
    for gone in ["ua =", " u =", "j0 =", "j1 ="] {
        assert!(!text.contains(gone), "`{gone}` is declared:\n{text}");
    }
    assert_eq!(count(&text, "prism_atomic_add(&c[0]"), 1, "{text}");
    assert!(text.contains("hv[3]") && text.contains("hv[2]"), "{text}");
}

/// In the CUDA of every accepted program of the corpus, each `const` value declared is
/// mentioned again (nvcc warns otherwise).
#[test]
fn every_declared_value_of_the_corpus_is_mentioned() {
    for (path, _, text) in corpus_cuda() {
        for line in text.lines() {
            let Some(rest) = line.trim_start().strip_prefix("const ") else { continue };
            let Some((lhs, _)) = rest.split_once(" = ") else { continue };
            let Some(name) = lhs.rsplit(' ').next() else { continue };
            if name.contains('[') || name.contains('*') || name.contains('&') {
                continue;
            }
            let mentions =
                text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| *w == name).count();
            assert!(mentions >= 2, "{path}: `{name}` is declared and never mentioned:\n{line}");
        }
    }
}
