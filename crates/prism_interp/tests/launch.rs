//! Launch validation: what a launch must satisfy before anything runs.

use prism_interp::{Arg, Config, Module};

fn module(src: &str) -> Module {
    let (_, problems, synced) = prism_driver::compile_text("test.prism", src, &prism_driver::Options::default());
    Module::new(&synced.unwrap_or_else(|| panic!("errors: {problems:?}")))
}

/// Kernels entered below `grid[1]` (issue 7, hole 3): every unit of the entry perspective
/// gets the same pointers, so a kernel that writes through one may run as one unit only.
const BELOW_GRID: &str = r#"
@prism("global")
@requires(block[1], thread[1])
def fill_block(out : ptr(int)):
    t : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: t + i) as o:
        with group(thread[1]):
            o[0] = t

@prism("global")
@requires(block[2], thread[1])
def fill_pair(out : ptr(int)):
    b : int @ block[1] = id()
    with partition(out, p=block[1], f=lambda i: b * 32 + i) as ob:
        with group(block[1]):
            t : int @ thread[1] = id()
            with partition(ob, p=thread[1], f=lambda i: t + i) as o:
                with group(thread[1]):
                    o[0] = b

@prism("global")
@requires(thread[32])
def fill_warp(out : ptr(int)):
    l : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: l + i) as o:
        with group(thread[1]):
            o[0] = l

@prism("global")
@requires(block[1], thread[1])
def count_block(counter : ptr(int)):
    with group(thread[1]):
        atomic_add(counter[0], 1)

@prism("global")
@requires(block[1], thread[1])
def read_only(x : ptr(const(int)), n : int):
    with group(thread[1]):
        v : int = x[0] + n

@prism("global")
@requires(block[1], thread[1])
def load_atomically(x : ptr(const(int)), n : int):
    with group(thread[1]):
        v : int = atomic_load(x[0]) + n

@prism("global")
@requires(block[1], thread[1])
def swap_block(x : ptr(int)):
    with group(thread[1]):
        old : int = atomic_cas(x[0], 0, 1)

@prism("global")
@requires(block[1], thread[1])
def exchange_block(x : ptr(int)):
    with group(thread[1]):
        old : int = atomic_exch(x[0], 1)

@prism("global")
@requires(block[1], thread[1])
def store_block(x : ptr(int)):
    with group(thread[1]):
        atomic_store(x[0], 1)
"#;

fn launch(m: &Module, kernel: &str, grid: u32, block: u32, args: &[Arg]) -> Result<(), String> {
    m.launch(kernel, grid, block, args, Config::default())
        .map(|o| assert!(o.is_clean(), "{:?}", o.reports))
        .map_err(|e| e.message)
}

#[test]
fn kernels_entered_below_grid_that_write_run_as_one_unit() {
    let m = module(BELOW_GRID);
    let buf = || [Arg::buffer(&[0i32; 64])];
    launch(&m, "fill_block", 1, 64, &buf()).expect("one block is the one launch allowed");
    let e = launch(&m, "fill_block", 2, 64, &buf()).expect_err("two blocks write the same memory");
    assert!(e.contains("exactly 1 block") && e.contains("partition"), "{e}");

    launch(&m, "fill_pair", 2, 32, &buf()).expect("block[2]: two blocks are one unit");
    let e = launch(&m, "fill_pair", 4, 32, &buf()).expect_err("two block[2] units");
    assert!(e.contains("exactly 2 blocks"), "{e}");

    launch(&m, "fill_warp", 1, 32, &buf()).expect("one warp");
    for (g, t) in [(1, 64), (2, 32)] {
        let e = launch(&m, "fill_warp", g, t, &buf()).expect_err("two warps write the same memory");
        assert!(e.contains("exactly 1 block of exactly 32 threads"), "{e}");
    }
    // Atomics change memory too: two blocks would count into one counter unordered against
    // whatever the caller reads afterwards, and nothing in the kernel can tell them apart.
    // So do the other atomics that update, however they are spelled.
    for k in ["count_block", "swap_block", "exchange_block", "store_block"] {
        let e = launch(&m, k, 2, 32, &[Arg::buffer(&[0i32])]).expect_err(k);
        assert!(e.contains("exactly 1 block"), "{k}: {e}");
    }
}

#[test]
fn read_only_kernels_entered_below_grid_may_run_on_many_units() {
    let m = module(BELOW_GRID);
    launch(&m, "read_only", 3, 32, &[Arg::buffer(&[1i32]), Arg::value(2i32)]).expect("reads never conflict");
    // An atomic load is a read too (it was counted as a write until 2026-12-02, which held
    // this kernel to one block).
    launch(&m, "load_atomically", 3, 32, &[Arg::buffer(&[1i32]), Arg::value(2i32)]).expect("atomic loads only read");
}

/// A kernel whose synchronisation relies on `b * 32 + t` staying inside its `int` records
/// how many blocks that holds for (issue 7, hole 2); the launch validation refuses more,
/// before anything runs. So does any launch of more than 2^31 - 1 threads, whose global
/// thread index would not fit `id()`'s `int`.
#[test]
fn launches_beyond_the_limits_the_proofs_assume_are_refused() {
    let m = module(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[1], smem=128)
def rewrite(out : ptr(int)):
    b : int @ block[1] = id()
    with partition(out, p=block[1], f=lambda i: b * 32 + i) as out_b:
        with group(block[1]):
            t : int @ thread[1] = id()
            for k in range(2):
                with partition(out_b, p=thread[1], f=lambda i: t + i) as o:
                    with group(thread[1]):
                        o[0] = o[0] + k
"#,
    );
    assert_eq!(m.kernel("rewrite").expect("kernel").max_blocks, Some(1 << 25));
    launch(&m, "rewrite", 2, 32, &[Arg::buffer(&[0i32; 64])]).expect("a small grid");
    let e = launch(&m, "rewrite", (1 << 25) + 1, 32, &[Arg::buffer(&[0i32; 64])]).expect_err("too many blocks");
    assert!(e.contains("at most 33554432 blocks"), "{e}");
    let e = launch(&m, "rewrite", 1 << 22, 1024, &[Arg::buffer(&[0i32; 64])]).expect_err("too many threads");
    assert!(e.contains("more than 2147483647"), "{e}");
}

/// Multi-dimensional launches (issue 12): a kernel that reads a coordinate takes any shape
/// within CUDA's limits; one that reads none computes `id()` from the x indices and takes
/// 1-D launches only, since a 2-D launch of it would give two threads one index.
#[test]
fn multi_dimensional_launches_need_a_kernel_that_reads_coordinates() {
    let m = module(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[1])
def with_coords(out : ptr(int)):
    g : int @ thread[1] = id()
    by : int @ block[1] = id(y)
    with partition(out, p=thread[1], f=lambda i: g + i) as o:
        with group(thread[1]):
            o[0] = by

@prism("device")
@requires(block[1], thread[1])
def row() -> int @ thread[1]:
    r : int @ thread[1] = id(y)
    return r

@prism("global")
@requires(grid[1], block[1], thread[1])
def through_call(out : ptr(int)):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as o:
        with group(block[1]):
            r : int @ thread[1] = row()
            with group(thread[1]):
                o[0] = r

@prism("global")
@requires(grid[1], block[1], thread[1])
def plain(out : ptr(int)):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as o:
        with group(thread[1]):
            o[0] = g
"#,
    );
    let buf = || [Arg::buffer(&[0i32; 4096])];
    let go = |k: &str, grid: (u32, u32, u32), block: (u32, u32, u32)| {
        m.launch(k, grid, block, &buf(), Config::default())
            .map(|o| assert!(o.is_clean(), "{:?}", o.reports))
            .map_err(|e| e.message)
    };
    go("with_coords", (2, 3, 1), (4, 2, 2)).expect("a kernel that reads coordinates");
    go("with_coords", (6, 1, 1), (16, 1, 1)).expect("and 1-D");
    // Reading a coordinate in a device function counts: the callee's `id(y)` needs it.
    go("through_call", (1, 2, 1), (8, 4, 1)).expect("a callee reads coordinates");
    go("plain", (4, 1, 1), (32, 1, 1)).expect("1-D");
    for (grid, block) in [((2, 2, 1), (32, 1, 1)), ((4, 1, 1), (16, 2, 1)), ((1, 1, 2), (8, 1, 1))] {
        let e = go("plain", grid, block).expect_err("a kernel without coordinates, launched 2-D");
        assert!(e.contains("reads no coordinate") && e.contains("launch it with one dimension"), "{e}");
    }
    // A fixed block shape admits that shape only, whatever the thread count.
    let fixed = module(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], block=[32, 8])
def tile(out : ptr(int)):
    b : int @ block[1] = id()
    with partition(out, p=block[1], f=lambda i: b * 256 + i) as ob:
        with group(block[1]):
            t : int @ thread[1] = id()
            with partition(ob, p=thread[1], f=lambda i: t + i) as o:
                with group(thread[1]):
                    o[0] = t
"#,
    );
    let tile = |grid: (u32, u32, u32), block: (u32, u32, u32)| {
        fixed.launch("tile", grid, block, &buf(), Config::default()).map(|_| ()).map_err(|e| e.message)
    };
    tile((2, 1, 1), (32, 8, 1)).expect("the shape it is written for");
    tile((1, 2, 1), (32, 8, 1)).expect("in a 2-D grid too");
    for block in [(256, 1, 1), (16, 16, 1), (8, 32, 1), (32, 4, 2)] {
        let e = tile((2, 1, 1), block).expect_err("another shape");
        assert!(e.contains("exactly 32x8x1 threads"), "{e}");
    }
    // CUDA's limits on each dimension.
    let e = go("with_coords", (1, 1, 1), (1, 1, 65)).expect_err("block z");
    assert!(e.contains("64 along z"), "{e}");
    let e = go("with_coords", (1, 1, 1), (64, 17, 1)).expect_err("1088 threads");
    assert!(e.contains("1024 in all"), "{e}");
    let e = go("with_coords", (1, 65_536, 1), (1, 1, 1)).expect_err("grid y");
    assert!(e.contains("65,535 along y and z"), "{e}");
    let e = go("with_coords", (1, 0, 1), (1, 1, 1)).expect_err("an empty dimension");
    assert!(e.contains("at least one block"), "{e}");
}

/// A dynamic shared array's count is a launch argument: negative counts and counts whose
/// bytes pass the largest block allocation any GPU has are refused before anything runs.
#[test]
fn dynamic_shared_counts_are_checked_at_launch() {
    let m = module(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32])
def k(out : ptr(int), n : int, buf : shared(double[n])):
    pass
"#,
    );
    let go = |n: i32| {
        m.launch("k", 1, 32, &[Arg::buffer(&[0i32; 1]), Arg::value(n)], Config::default())
            .map(|o| assert!(o.is_clean(), "{:?}", o.reports))
            .map_err(|e| e.message)
    };
    go(0).expect("an empty array");
    go(29_056).expect("227 KiB exactly: the array starts at 0 in a kernel without static shared memory");
    let e = go(-1).expect_err("a negative count");
    assert!(e.contains("cannot have -1 items"), "{e}");
    let e = go(29_057).expect_err("one item past the limit");
    assert!(e.contains("more than the 232448 bytes"), "{e}");
    let e = go(i32::MAX).expect_err("a count whose bytes overflow 32 bits");
    assert!(e.contains("more than the 232448 bytes"), "{e}");
    // The shared array is not an argument.
    let e = m
        .launch("k", 1, 32, &[Arg::buffer(&[0i32; 1]), Arg::value(4i32), Arg::buffer(&[0.0f64; 4])], Config::default())
        .expect_err("three arguments");
    assert!(e.message.contains("takes 2 arguments"), "{}", e.message);
}
