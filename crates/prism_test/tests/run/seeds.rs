//! The seed ports of `tests/ui/accept/seeds/` that compute something: the paper's sgemm,
//! the CUB-like load/store library with the kernels that complete it, the tensor-core
//! examples (figures 2, 5, 6), the split of figure 8 and the `cp.async` of figure 13.
//! Seeds that are drafts of one another run the same case.

use crate::support::{Rng, assert_same, assert_tf32_gemm, program, sgemm};
use prism_interp::Arg;

fn file(name: &str) -> String {
    format!("accept/seeds/{name}")
}

#[test]
fn s032_appb_sgemm_kernel_1() {
    // 10 x 12 x 7 over 4 x 32 threads (128 threads for 120 elements: the `x < M` guard
    // runs). Inputs are multiples of 1/8: exact.
    let (m, n, k, alpha, beta) = (10, 12, 7, 1.5f32, -0.5f32);
    let mut rng = Rng::new(32);
    let (a, b, c) = (rng.eighths(m * k, -2, 2), rng.eighths(k * n, -2, 2), rng.eighths(m * n, -2, 2));
    let p = program(&file("032_parallax_appB_sgemm_kernel_1.prism"));
    let out = p.launch("my_sgemm_kernel_1", 4, 32, || {
        vec![
            Arg::value(m as i32),
            Arg::value(n as i32),
            Arg::value(k as i32),
            Arg::value(alpha),
            Arg::buffer(&a),
            Arg::buffer(&b),
            Arg::value(beta),
            Arg::buffer(&c),
            Arg::value(32i32),
        ]
    });
    assert_same("C", &out.f32("C"), &sgemm((m, n, k), alpha, &a, &b, beta, &c));
}

#[test]
fn s014_load_from_shared() {
    // `stage_and_load`: each block stages 128 ints in shared memory and loads them back
    // through `load`, 2 per thread; out[g * 2 + i] = input[g * 2 + i]. 3 blocks of 64 threads.
    let x = Rng::new(14).ints(384, -1000, 1000);
    let p = program(&file("014_snap_s64_load_signature.prism"));
    let out = p.launch("stage_and_load", 3, 64, || vec![Arg::buffer(&x), Arg::buffer(&[0i32; 384])]);
    assert_same("out", &out.i32("out"), &x);
}

/// `sum_items(input, sums, block_items)`: block b loads its `block_items` items through
/// `block_load` (4 per thread, blocked), and thread g writes the sum of its 4 items:
/// sums[g] = input[4g] + ... + input[4g + 3] when block_items = 4 * T. 3 blocks of 64.
fn check_block_load(name: &str) {
    let x = Rng::new(30).ints(768, -1000, 1000);
    let p = program(&file(name));
    let out = p.launch("sum_items", 3, 64, || vec![Arg::buffer(&x), Arg::buffer(&[0i32; 192]), Arg::value(256i32)]);
    let want: Vec<i32> = x.chunks(4).map(|c| c.iter().sum()).collect();
    assert_same("sums", &out.i32("sums"), &want);
}

#[test]
fn s030_block_load() {
    check_block_load("030_parallax_s612_block_load_signature.prism");
}

#[test]
fn s033_appb_block_load() {
    check_block_load("033_parallax_appB_block_load.prism");
}

#[test]
fn s051_block_load() {
    check_block_load("051_prism_fig18_block_load_signature.prism");
}

/// `warp_sums(input, sums)`: warp w loads input[w * 128 ..] through `warp_load`, 4 per lane;
/// sums[g] = input[4g] + ... + input[4g + 3]. 2 blocks of 64 threads (4 warps).
fn check_warp_load(name: &str) {
    let x = Rng::new(31).ints(512, -1000, 1000);
    let p = program(&file(name));
    let out = p.launch("warp_sums", 2, 64, || vec![Arg::buffer(&x), Arg::buffer(&[0i32; 128])]);
    let want: Vec<i32> = x.chunks(4).map(|c| c.iter().sum()).collect();
    assert_same("sums", &out.i32("sums"), &want);
}

#[test]
fn s031_warp_load() {
    check_warp_load("031_parallax_s612_warp_thread_load_signatures.prism");
}

#[test]
fn s034_appb_warp_load() {
    check_warp_load("034_parallax_appB_warp_load.prism");
}

#[test]
fn s052_warp_load() {
    check_warp_load("052_prism_fig19_warp_load_signature.prism");
}

#[test]
fn s053_thread_load() {
    // `copy4`: thread g copies items 4g .. 4g + 3 through `thread_load`. 2 blocks of 32.
    let x = Rng::new(53).ints(256, -1000, 1000);
    let p = program(&file("053_prism_fig20_thread_load_signature.prism"));
    let out = p.launch("copy4", 2, 32, || vec![Arg::buffer(&x), Arg::buffer(&[0i32; 256])]);
    assert_same("output", &out.i32("output"), &x);
}

#[test]
fn s035_appb_thread_store() {
    // `store_iota`: thread g stores 4g .. 4g + 3 through `thread_store`. 2 blocks of 32.
    let p = program(&file("035_parallax_appB_thread_store.prism"));
    let out = p.launch("store_iota", 2, 32, || vec![Arg::buffer(&[-1i32; 256])]);
    assert_same("out", &out.i32("out"), &(0..256).collect::<Vec<i32>>());
}

/// Figure 8: in each `thread[4]` unit, threads 0 and 1 write 2, thread 2 writes 10, thread
/// 3 writes 11. 2 blocks of 8 threads.
fn check_fig8(name: &str) {
    let p = program(&file(name));
    let out = p.launch("fig8_split", 2, 8, || vec![Arg::buffer(&[0i32; 16])]);
    let want: Vec<i32> = (0..16).map(|g| [2, 2, 10, 11][g % 4]).collect();
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn s022_fig8_split() {
    check_fig8("022_parallax_fig8_split_example.prism");
}

#[test]
fn s044_fig8_split() {
    check_fig8("044_prism_fig8_split_example.prism");
}

/// Figure 13: thread 0 of each block copies src[0..4] (16 bytes) into shared memory with
/// `cp_async`; after the `async` scope every thread t reads element t % 4:
/// out[g] = src[g % 32 % 4]. 2 blocks of 32 threads.
fn check_fig13(name: &str) {
    let src = [1.5f32, -2.25, 3.0, 4.125, 99.0, 99.0, 99.0, 99.0];
    let p = program(&file(name));
    let out = p.launch("fig13_async", 2, 32, || vec![Arg::buffer(&src), Arg::buffer(&[0.0f32; 64])]);
    let want: Vec<f32> = (0..64).map(|g| src[g % 4]).collect();
    assert_same("out", &out.f32("out"), &want);
}

#[test]
fn s027_fig13_cp_async() {
    check_fig13("027_parallax_fig13_async_cp_async.prism");
}

#[test]
fn s049_fig13_cp_async() {
    check_fig13("049_prism_fig13_async_cp_async.prism");
}

/// Figure 2: every warp fills its fragments and issues one `mma` whose result stays in
/// registers. Nothing reaches memory, so the case checks only that the run is clean
/// (uniform, converged collectives) under every schedule. 2 blocks of 64 threads.
fn check_fig2(name: &str) {
    let p = program(&file(name));
    p.launch("fig2_mma_warp", 2, 64, || vec![Arg::value(0i32)]);
}

#[test]
fn s002_fig2_mma_warp() {
    check_fig2("002_snap_fig2_mma_warp.prism");
}

#[test]
fn s016_fig2_mma_warp() {
    check_fig2("016_parallax_fig2_mma_warp.prism");
}

#[test]
fn s038_fig2_mma_warp() {
    check_fig2("038_prism_fig2_mma_warp.prism");
}

#[test]
fn s040_fig5_simple_mma() {
    // `one_tile`: the first warp of one block computes c = a @ b for a 16 x 8 `a` and an
    // 8 x 8 `b` (the second warp is masked off). Inputs with full mantissas; tf32 tolerance.
    let mut rng = Rng::new(40);
    let (a, b) = (rng.uniform(128, -1.0, 1.0), rng.uniform(64, -1.0, 1.0));
    let p = program(&file("040_prism_fig5_simple_mma.prism"));
    let out = p.launch("one_tile", 1, 64, || vec![Arg::buffer(&a), Arg::buffer(&b), Arg::buffer(&[f32::NAN; 128])]);
    assert_tf32_gemm(&out.f32("c"), 16, 8, 8, &a, &b);
}

/// Figure 6, `mmaTF32NaiveKernel(A, B, C, M, N, K)`: one block of exactly 32 threads per
/// 16 x 8 tile of C (the staging loops cover the tiles with 32 threads; M, N, K multiples
/// of 16, 8, 8). 32 x 16 x 24: 4 blocks, 3 K tiles accumulated through `C_smem`.
fn check_fig6(name: &str) {
    let (m, n, k) = (32, 16, 24);
    let mut rng = Rng::new(41);
    let (a, b) = (rng.uniform(m * k, -1.0, 1.0), rng.uniform(k * n, -1.0, 1.0));
    let p = program(&file(name));
    let out = p.launch("mmaTF32NaiveKernel", ((m / 16) * (n / 8)) as u32, 32, || {
        vec![
            Arg::buffer(&a),
            Arg::buffer(&b),
            Arg::buffer(&vec![f32::NAN; m * n]),
            Arg::value(m as i32),
            Arg::value(n as i32),
            Arg::value(k as i32),
        ]
    });
    assert_tf32_gemm(&out.f32("C"), m, n, k, &a, &b);
}

#[test]
fn s005_fig6_mma_tf32_naive() {
    check_fig6("005_snap_fig6_mma_tf32_naive.prism");
}

#[test]
fn s019_fig6_mma_tf32_naive() {
    check_fig6("019_parallax_fig6_mma_tf32_naive_partial.prism");
}

#[test]
fn s041_fig6_mma_tf32_naive() {
    check_fig6("041_prism_fig6_mma_tf32_naive.prism");
}
