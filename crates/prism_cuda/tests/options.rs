//! `Options::kernels`: a launch emits just the kernel it runs and what that kernel calls.

mod common;

use prism_test::repo_root;

/// `tests/ui/run/checks/warpgroup.prism` holds buggy kernels (they reach their faults only on
/// the simulator) next to `fixed_roles`: the GPU comparison of 2026-11-26 could not launch
/// `fixed_roles` while the whole file was emitted, because the backend then refused the buggy
/// ones. The checker now refuses what the backend refused, so emitting every kernel succeeds;
/// a launch still emits just the kernel it runs.
#[test]
fn emitting_one_kernel_leaves_the_others_out() {
    let rel = "tests/ui/run/checks/warpgroup.prism";
    let src = std::fs::read_to_string(repo_root().join(rel)).expect("readable source");
    let synced = common::synced(rel, &src);
    let all = prism_cuda::emit(&synced, &prism_cuda::Options::default());
    assert!(all.errors.is_empty(), "{:?}", all.errors);
    assert!(all.text.contains("buggy_partial_warpgroup("), "every kernel is emitted by default");
    let one = prism_cuda::emit(
        &synced,
        &prism_cuda::Options { kernels: Some(vec!["fixed_roles".into()]), ..prism_cuda::Options::default() },
    );
    assert!(one.errors.is_empty(), "{:?}", one.errors);
    let names: Vec<&str> = one.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["fixed_roles"]);
    assert!(one.text.contains("fixed_roles("), "{}", one.text);
    assert!(!one.text.contains("buggy_partial_warpgroup("), "{}", one.text);
}

/// The device functions a kernel calls come along; those of other kernels do not.
#[test]
fn a_kernel_brings_its_callees_only() {
    let src = r#"
@prism("device")
@requires(thread[1])
def twice(v : int @ thread[1]) -> int @ thread[1]:
    return v * 2

@prism("device")
@requires(thread[1])
def thrice(v : int @ thread[1]) -> int @ thread[1]:
    return v * 3

@prism("global")
@requires(grid[1], block[1], thread[1])
def a(out : ptr(int)):
    t : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: t + i) as mine:
        with group(thread[1]):
            mine[0] = twice(t)

@prism("global")
@requires(grid[1], block[1], thread[1])
def b(out : ptr(int)):
    t : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: t + i) as mine:
        with group(thread[1]):
            mine[0] = thrice(t)
"#;
    let synced = common::synced("options.prism", src);
    let out = prism_cuda::emit(
        &synced,
        &prism_cuda::Options { kernels: Some(vec!["a".into()]), ..prism_cuda::Options::default() },
    );
    assert!(out.text.contains("twice("), "{}", out.text);
    assert!(!out.text.contains("thrice("), "{}", out.text);
    assert!(!out.text.contains("void b("), "{}", out.text);
    let none = prism_cuda::emit(
        &synced,
        &prism_cuda::Options { kernels: Some(vec!["c".into()]), ..prism_cuda::Options::default() },
    );
    assert!(none.kernels.is_empty());
}
