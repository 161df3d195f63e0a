//! The Hopper rules the backend enforces where nvcc is silent (docs/cuda.md, after the
//! mapping table): register reallocation needs a register cap at entry, and a program whose
//! wgmma reads staged tiles fences the async proxy before its barriers.

mod common;

fn emit(src: &str) -> prism_cuda::Output {
    let synced = common::synced("hopper.prism", src);
    prism_cuda::emit(&synced, &prism_cuda::Options { prelude: false, ..prism_cuda::Options::default() })
}

const ROLES: &str = r#"
@prism("device")
@requires(warpgroup[1])
def give() -> int @ warpgroup[1]:
    setmaxnreg_dec(40)
    return 0

@prism("global")
@requires(grid[1], block[1], warpgroup[2])
LAUNCH
def roles(out : ptr(int)):
    with group(block[1]):
        match split(warpgroup):
            case 1:
                v : int @ warpgroup[1] = give()
            case 1:
                setmaxnreg_inc(232)
"#;

#[test]
fn setmaxnreg_needs_launch_bounds_even_through_a_call() {
    // Without a bound, or with room for two blocks per multiprocessor, the checker refuses
    // the kernel (`register-reallocation`; before 2026-12-01 only the backend did, review
    // R49), so the backend's own guard is never reached from source.
    for launch in ["", "@launch_bounds(256, 2)"] {
        let err = prism_test::synced("hopper.prism", &ROLES.replace("LAUNCH", launch), &Default::default())
            .err()
            .unwrap_or_else(|| panic!("`{launch}` accepted"));
        assert!(err.contains("register-reallocation"), "{launch}: {err}");
    }
    let out = emit(&ROLES.replace("LAUNCH", "@launch_bounds(256)"));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(out.text.contains("__launch_bounds__(256, 1) roles"), "{}", out.text);
    let out = emit(&ROLES.replace("LAUNCH", "@launch_bounds(256, 1)"));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(out.text.contains("__launch_bounds__(256, 1) roles"), "{}", out.text);
}

#[test]
fn barriers_fence_the_async_proxy_only_where_wgmma_reads() {
    let src = std::fs::read_to_string(prism_test::repo_root().join("tests/ui/accept/rules/wgmma_bf16_tile.prism"))
        .expect("the corpus is there");
    let text = emit(&src).text;
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    // The body's barriers (the prologue's, after initialising split barriers, follows no
    // stores).
    let body = lines.iter().position(|l| l.contains("// partition")).expect("a body");
    for (i, l) in lines.iter().enumerate().skip(body) {
        if l.starts_with("__syncthreads()") || l.contains("= prism_split_arrive(") {
            assert_eq!(lines[i - 1], "prism_fence_proxy_async();", "barrier at line {i} without a fence:\n{text}");
        }
    }
    assert!(
        lines[body..].iter().any(|l| l.starts_with("__syncthreads()") || l.contains("prism_split_arrive")),
        "{text}"
    );
    // A program without wgmma has no proxy fences.
    let plain =
        std::fs::read_to_string(prism_test::repo_root().join("tests/ui/accept/kernels/05_sgemm_3_smem_tiling.prism"))
            .expect("the corpus is there");
    assert!(!emit(&plain).text.contains("prism_fence_proxy_async"));
}

#[test]
fn only_the_wait_of_a_tma_scope_arrives_at_its_mbarrier() {
    // A scope of cp.async copies nested in a TMA scope: each thread must arrive at the
    // block's TMA mbarrier once per TMA scope, or the extra arrival opens a phase that no
    // other thread completes and the block hangs.
    let src = std::fs::read_to_string(prism_test::repo_root().join("tests/ui/accept/soundness/tma_nested_async.prism"))
        .expect("the corpus is there");
    let text = emit(&src).text;
    for kernel in ["nested(", "nested_if("] {
        let start = text.find(&format!(") {kernel}")).unwrap_or_else(|| panic!("no {kernel} in:\n{text}"));
        let end = text[start..].find("\n}\n").map_or(text.len(), |e| start + e);
        let arrivals = text[start..end].matches("prism_mbar_arrive_wait(prism_smem_addr(&prism_tma_bar))").count();
        assert_eq!(arrivals, 1, "{kernel}: {arrivals} arrivals at the TMA mbarrier:\n{}", &text[start..end]);
        assert!(text[start..end].contains("cp.async.wait_all;"), "{kernel}: the nested scope is not waited for");
    }
}

/// A grid barrier in a program with TMA copies is fenced for global memory on both sides:
/// PTX orders a TMA store and another block's TMA load of the box only across a proxy fence
/// (review R42). Without TMA, a grid barrier has no such fence.
#[test]
fn grid_barriers_fence_global_memory_for_tma() {
    let path = prism_test::repo_root().join("tests/ui/accept/rules/tma_store_grid_reload.prism");
    let out = emit(&std::fs::read_to_string(path).expect("readable source"));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let fenced = "prism_fence_proxy_async_global();\n    cooperative_groups::this_grid().sync();\n    prism_fence_proxy_async_global();";
    assert!(out.text.contains(fenced), "{}", out.text);
    let plain = emit(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32])
def k(x : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(x, p=thread[1], f=lambda i: g + i) as mine:
        with group(thread[1]):
            mine[0] = 1.0
    with partition(x, p=thread[1], f=lambda i: (g + 1) % 64 + i) as next:
        with group(thread[1]):
            next[0] += 1.0
"#,
    );
    assert!(plain.text.contains("this_grid().sync()"), "{}", plain.text);
    assert!(!plain.text.contains("prism_fence_proxy_async_global"), "{}", plain.text);
}
