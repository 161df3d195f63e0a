//! The kernels of `tests/ui/accept/kernels/`, each against a plain-Rust reference of what
//! its header comment says it computes.
//!
//! Float inputs are multiples of 1/8 (`Rng::eighths`) wherever the kernel only adds and
//! multiplies: every partial sum is then representable in f32, so results are exact whatever
//! the order of operations, and are compared exactly. Kernels with `exp`, `sqrt` of inexact
//! values or tensor cores are compared with the tolerance stated in the case.

use crate::support::{
    Program, Rng, abs_product_sums, assert_close, assert_same, assert_tf32_gemm, bf16_buffer, program, program_with,
    sgemm, tf32_gemm_by, to_bf16, to_tf32, truncate_tf32,
};
use prism_interp::Arg;

const K: &str = "accept/kernels/";

fn file(name: &str) -> String {
    format!("{K}{name}")
}

#[test]
fn k01_saxpy_grid_stride() {
    // n = 1000 over 3 x 64 threads: each thread loops 5 or 6 times.
    let (n, a) = (1000, 1.5f32);
    let mut rng = Rng::new(1);
    let (x, y) = (rng.eighths(n, -4, 4), rng.eighths(n, -4, 4));
    let p = program(&file("01_saxpy_grid_stride.prism"));
    let out = p.launch("saxpy", 3, 64, || vec![Arg::value(n as i32), Arg::value(a), Arg::buffer(&x), Arg::buffer(&y)]);
    let want: Vec<f32> = (0..n).map(|i| a * x[i] + y[i]).collect();
    assert_same("y", &out.f32("y"), &want);
}

#[test]
fn k02_axpby_blocked() {
    // n = 2500: three tiles (the last one partial) plus a surplus fourth block; `out` has 16
    // extra elements that must stay untouched.
    let (n, alpha, beta) = (2500, 0.75f32, -1.25f32);
    let mut rng = Rng::new(2);
    let (x, y) = (rng.eighths(n, -4, 4), rng.eighths(n, -4, 4));
    let p = program(&file("02_axpby_blocked.prism"));
    let out = p.launch("axpby", 4, 256, || {
        vec![
            Arg::value(n as i32),
            Arg::value(alpha),
            Arg::buffer(&x),
            Arg::value(beta),
            Arg::buffer(&y),
            Arg::buffer(&vec![-7.0f32; n + 16]),
        ]
    });
    let mut want: Vec<f32> = (0..n).map(|i| alpha * x[i] + beta * y[i]).collect();
    want.extend([-7.0; 16]);
    assert_same("out", &out.f32("out"), &want);
}

/// The sgemm variants share a signature: `(M, N, K, alpha, A, B, beta, C)`. Inputs are
/// multiples of 1/8 in [-2, 2], so every result is exact. Each variant runs the case's shape
/// and two edge shapes: a 1 x 1 x 1 product, and a 3 x 70 x 5 one (one row of partial tiles
/// across three tile columns, a single partial K step).
fn check_sgemm(name: &str, kernel: &str, shape: (usize, usize, usize), tile: (usize, usize), block: u32) {
    check_sgemm_shapes(name, kernel, &[shape, (1, 1, 1), (3, 70, 5)], tile, block);
}

/// [`check_sgemm`] on the given shapes only.
fn check_sgemm_shapes(name: &str, kernel: &str, shapes: &[(usize, usize, usize)], tile: (usize, usize), block: u32) {
    check_sgemm_variant(name, &[], kernel, shapes, tile, block);
}

/// [`check_sgemm_shapes`] on the variant `prism build -D` makes with `defines`.
fn check_sgemm_variant(
    name: &str,
    defines: &[&str],
    kernel: &str,
    shapes: &[(usize, usize, usize)],
    tile: (usize, usize),
    block: u32,
) {
    let p = program_with(&file(name), defines);
    let (alpha, beta) = (1.5f32, -0.5f32);
    for &(m, n, k) in shapes {
        let mut rng = Rng::new((m * 1000 + n * 10 + k) as u64);
        let (a, b, c) = (rng.eighths(m * k, -2, 2), rng.eighths(k * n, -2, 2), rng.eighths(m * n, -2, 2));
        let grid = (m.div_ceil(tile.0) * n.div_ceil(tile.1)) as u32;
        let out = p.launch(kernel, grid, block, || {
            vec![
                Arg::value(m as i32),
                Arg::value(n as i32),
                Arg::value(k as i32),
                Arg::value(alpha),
                Arg::buffer(&a),
                Arg::buffer(&b),
                Arg::value(beta),
                Arg::buffer(&c),
            ]
        });
        let what = format!("C ({m} x {n} x {k})");
        assert_same(&what, &out.f32("C"), &sgemm((m, n, k), alpha, &a, &b, beta, &c));
    }
}

#[test]
fn k03_sgemm_naive() {
    // 40 x 36 x 20: 2 x 2 tiles of 32 x 32, three of them partial.
    check_sgemm("03_sgemm_1_naive.prism", "sgemm_naive", (40, 36, 20), (32, 32), 1024);
}

#[test]
fn k04_sgemm_coalesced() {
    check_sgemm("04_sgemm_2_coalesced.prism", "sgemm_coalesced", (40, 36, 20), (32, 32), 1024);
}

#[test]
fn k05_sgemm_smem_tiling() {
    // K = 40: two K steps of 32, the second partial.
    check_sgemm("05_sgemm_3_smem_tiling.prism", "sgemm_smem", (40, 36, 40), (32, 32), 1024);
}

#[test]
fn k06_sgemm_register_tiling() {
    // 80 x 72 x 20: 2 x 2 tiles of 64 x 64 (partial), three K steps of 8 (the last partial).
    check_sgemm("06_sgemm_4_register_tiling.prism", "sgemm_register_tiles", (80, 72, 20), (64, 64), 256);
}

#[test]
fn k07_sgemm_warp_tiling() {
    check_sgemm("07_sgemm_5_warp_tiling.prism", "sgemm_warp_tiles", (80, 72, 20), (64, 64), 128);
}

#[test]
fn k08_block_sum_smem_tree() {
    // n = 3000 over 4 blocks: tile 2 is partial, block 3 has no items and writes 0.
    let n = 3000;
    let x = Rng::new(8).eighths(n, -4, 4);
    let p = program(&file("08_block_sum_smem_tree.prism"));
    let out =
        p.launch("block_sum_tree", 4, 256, || vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&[9.0f32; 4])]);
    let want: Vec<f32> = (0..4).map(|b| x.iter().skip(b * 1024).take(1024).sum()).collect();
    assert_same("partial", &out.f32("partial"), &want);
}

#[test]
fn k09_warp_mean_m2_shfl() {
    // 3 segments over 2 x 64 threads (4 warps, the last idle). The mean is exact (a multiple
    // of 1/8 over 256); M2's squares are not, and the kernel sums them in a tree while the
    // reference sums them in order: relative tolerance 1e-6.
    let n = 768;
    let x = Rng::new(9).eighths(n, -2, 2);
    let p = program(&file("09_warp_mean_m2_shfl.prism"));
    let out = p.launch("warp_mean_m2", 2, 64, || {
        vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&[0.0f32; 3]), Arg::buffer(&[0.0f32; 3])]
    });
    let seg = |w: usize| &x[w * 256..(w + 1) * 256];
    let mean: Vec<f32> = (0..3).map(|w| seg(w).iter().sum::<f32>() / 256.0).collect();
    let m2: Vec<f64> =
        (0..3).map(|w| seg(w).iter().map(|&v| (f64::from(v) - f64::from(mean[w])).powi(2)).sum()).collect();
    assert_same("mean", &out.f32("mean"), &mean);
    assert_close("m2", &out.f32("m2"), &m2, 1e-6, 0.0);
}

#[test]
fn k10_block_sum_return_normalize() {
    // n = 2500, 3 blocks. The sums of squares are exact; sqrt and the division are correctly
    // rounded f32 operations on the same values in kernel and reference, so the result is
    // compared exactly.
    let (n, eps) = (2500, 0.5f32);
    let x = Rng::new(10).eighths(n, -2, 2);
    let p = program(&file("10_block_sum_return_normalize.prism"));
    let out = p.launch("tile_l2_normalize", 3, 256, || {
        vec![Arg::value(n as i32), Arg::value(eps), Arg::buffer(&x), Arg::buffer(&vec![0.0f32; n])]
    });
    let want: Vec<f32> = (0..n)
        .map(|i| {
            let tile = &x[i / 1024 * 1024..((i / 1024 + 1) * 1024).min(n)];
            x[i] / (eps + tile.iter().map(|v| v * v).sum::<f32>()).sqrt()
        })
        .collect();
    assert_same("out", &out.f32("out"), &want);
}

#[test]
fn k11_grid_dot_atomic() {
    // n = 3000 over 4 blocks (one surplus). About a quarter of the products are zero. The
    // per-block float sums reach `atomic_add` in a schedule-dependent order, but every partial
    // sum is exact, so the result is exact and the same under every schedule.
    let n = 3000;
    let mut rng = Rng::new(11);
    let x: Vec<f32> = rng.eighths(n, -2, 2).into_iter().map(|v| if rng.int(0, 3) == 0 { 0.0 } else { v }).collect();
    let y = rng.eighths(n, -2, 2);
    let p = program(&file("11_grid_dot_atomic.prism"));
    let out = p.launch("grid_dot", 4, 256, || {
        vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&y), Arg::buffer(&[0.0f32]), Arg::buffer(&[0i32])]
    });
    let dot: f32 = (0..n).map(|i| x[i] * y[i]).sum();
    let nonzero = (0..n).filter(|&i| x[i] * y[i] != 0.0).count() as i32;
    assert_same("result", &out.f32("result"), &[dot]);
    assert_same("nonzero", &out.i32("nonzero"), &[nonzero]);
}

#[test]
fn k12_minmax_negcount_int() {
    // n = 1000 over 3 x 64 threads: 6 grid-stride passes, the last partial.
    let (n, grid, block) = (1000, 3, 64);
    let x = Rng::new(12).ints(n, -1_000_000, 1_000_000);
    let p = program(&file("12_minmax_negcount_int.prism"));
    let out = p.launch("minmax_negcount", grid, block, || {
        vec![
            Arg::value(n as i32),
            Arg::buffer(&x),
            Arg::value((grid * block) as i32),
            Arg::buffer(&[i32::MAX, i32::MIN, 0]),
        ]
    });
    let want = [*x.iter().min().unwrap(), *x.iter().max().unwrap(), x.iter().filter(|&&v| v < 0).count() as i32];
    assert_same("stats", &out.i32("stats"), &want);
}

#[test]
fn k13_row_argmax_warp() {
    // 10 rows of 70 columns (3 columns per lane for some lanes) over 3 x 128 threads (12
    // warps, 2 idle). Values are small integers, so rows have ties: the smallest index wins.
    let (rows, cols) = (10, 70);
    let x: Vec<f32> = Rng::new(13).ints(rows * cols, -20, 20).into_iter().map(|v| v as f32).collect();
    let p = program(&file("13_row_argmax_warp.prism"));
    let out = p.launch("row_argmax", 3, 128, || {
        vec![
            Arg::value(rows as i32),
            Arg::value(cols as i32),
            Arg::buffer(&x),
            Arg::buffer(&vec![0.0f32; rows]),
            Arg::buffer(&vec![0i32; rows]),
        ]
    });
    let row = |r: usize| &x[r * cols..(r + 1) * cols];
    let max: Vec<f32> = (0..rows).map(|r| row(r).iter().copied().fold(f32::MIN, f32::max)).collect();
    let arg: Vec<i32> = (0..rows).map(|r| row(r).iter().position(|&v| v == max[r]).unwrap() as i32).collect();
    assert_same("row_max", &out.f32("row_max"), &max);
    assert_same("row_arg", &out.i32("row_arg"), &arg);
}

/// Values large enough that 32-bit sums wrap.
fn wrapping_ints(seed: u64, n: usize) -> Vec<i32> {
    Rng::new(seed).ints(n, -(1 << 30), 1 << 30)
}

/// Exclusive scan within tiles of `tile` items, wrapping.
/// The wrapping inclusive prefix sums of `x`, starting from `start`.
fn inclusive_scan(start: i32, x: &[i32]) -> Vec<i32> {
    x.iter()
        .scan(start, |acc, v| {
            *acc = acc.wrapping_add(*v);
            Some(*acc)
        })
        .collect()
}

fn tile_exclusive_scan(x: &[i32], tile: usize) -> Vec<i32> {
    let mut out = vec![0; x.len()];
    for (t, chunk) in x.chunks(tile).enumerate() {
        let mut acc = 0i32;
        for (i, v) in chunk.iter().enumerate() {
            out[t * tile + i] = acc;
            acc = acc.wrapping_add(*v);
        }
    }
    out
}

fn tile_sums(x: &[i32], tile: usize) -> Vec<i32> {
    x.chunks(tile).map(|c| c.iter().fold(0i32, |a, v| a.wrapping_add(*v))).collect()
}

#[test]
fn k14_warp_inclusive_scan() {
    // n = 200 over 4 x 64 threads: the 7th warp is partial, the 8th has no items.
    let n = 200;
    let x = wrapping_ints(14, n);
    let p = program(&file("14_warp_inclusive_scan.prism"));
    let out = p
        .launch("segmented_scan32", 4, 64, || vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&vec![0i32; n])]);
    let want: Vec<i32> = x.chunks(32).flat_map(|c| inclusive_scan(0, c)).collect();
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn k15_block_exclusive_scan() {
    // n = 2500: 3 tiles of 1024, the last partial.
    let n = 2500;
    let x = wrapping_ints(15, n);
    let p = program(&file("15_block_exclusive_scan.prism"));
    let out = p.launch("tile_exclusive_scan", 3, 256, || {
        vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&vec![0i32; n]), Arg::buffer(&[0i32; 3])]
    });
    assert_same("out", &out.i32("out"), &tile_exclusive_scan(&x, 1024));
    assert_same("totals", &out.i32("totals"), &tile_sums(&x, 1024));
}

#[test]
fn k16_scan_decoupled_lookback() {
    // n = 5000: 5 tiles (the last partial), so four blocks look back, each to tile 0, the
    // only anchor (`lookback_prefix` publishes inclusive prefixes every 256 tiles). Every
    // tile publishes its aggregate (the -1s are overwritten); only tile 0 its inclusive
    // prefix (the others' stay 0). A status word holds the flag in its high half and the
    // bits of the value it published in its low half.
    let (n, blocks) = (5000, 5);
    let x = wrapping_ints(16, n);
    let p = program(&file("16_scan_decoupled_lookback.prism"));
    let out = p.launch("scan_decoupled_lookback", blocks as u32, 256, || {
        vec![
            Arg::value(n as i32),
            Arg::buffer(&x),
            Arg::buffer(&vec![0i32; n]),
            Arg::buffer(&[0i32]),
            Arg::buffer(&vec![0u64; blocks]),
            Arg::buffer(&vec![-1i32; blocks]),
            Arg::buffer(&vec![0i32; blocks]),
        ]
    });
    let scan = inclusive_scan(0, &x);
    let aggregates = tile_sums(&x, 1024);
    let mut inclusive = vec![0i32; blocks];
    inclusive[0] = scan[1023];
    let word = |flag: u64, value: i32| flag << 32 | u64::from(value as u32);
    let mut flags: Vec<u64> = aggregates.iter().map(|&a| word(1, a)).collect();
    flags[0] = word(2, inclusive[0]);
    assert_same("out", &out.i32("out"), &scan);
    assert_same("tile_counter", &out.i32("tile_counter"), &[blocks as i32]);
    assert_same("flags", &out.get::<u64>("flags"), &flags);
    assert_same("aggregates", &out.i32("aggregates"), &aggregates);
    assert_same("inclusive", &out.i32("inclusive"), &inclusive);
}

#[test]
fn k17_transpose_smem_padded() {
    // 40 x 70: 2 x 3 tiles of 32 x 32, all but one partial.
    let (rows, cols) = (40, 70);
    let a = Rng::new(17).eighths(rows * cols, -8, 8);
    let p = program(&file("17_transpose_smem_padded.prism"));
    let out = p.launch("transpose", 6, 256, || {
        vec![Arg::value(rows as i32), Arg::value(cols as i32), Arg::buffer(&a), Arg::buffer(&vec![0.0f32; rows * cols])]
    });
    let mut want = vec![0.0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            want[c * rows + r] = a[r * cols + c];
        }
    }
    assert_same("at", &out.f32("at"), &want);
}

#[test]
fn k18_histogram_smem_atomics() {
    // n = 3000 over 3 x 256 threads (4 grid-stride passes); half the values fall in 8 bins,
    // so the atomics contend.
    let (n, grid) = (3000usize, 3);
    let mut rng = Rng::new(18);
    let data: Vec<i32> =
        (0..n).map(|_| if rng.int(0, 1) == 0 { rng.int(100, 107) } else { rng.int(0, 255) } as i32).collect();
    let p = program(&file("18_histogram_smem_atomics.prism"));
    let out = p.launch("histogram256", grid, 256, || {
        vec![Arg::value(n as i32), Arg::buffer(&data), Arg::value((grid * 256) as i32), Arg::buffer(&[0i32; 256])]
    });
    let mut want = vec![0i32; 256];
    for v in &data {
        want[*v as usize] += 1;
    }
    assert_same("hist", &out.i32("hist"), &want);
}

#[test]
fn k19_stencil1d_halo() {
    // n = 600: 3 blocks, the last partial; both ends exercise the zero padding.
    let n = 600;
    let mut rng = Rng::new(19);
    let (inp, w) = (rng.eighths(n, -4, 4), rng.eighths(9, -1, 1));
    let p = program(&file("19_stencil1d_halo.prism"));
    let out = p.launch("stencil9", 3, 256, || {
        vec![Arg::value(n as i32), Arg::buffer(&inp), Arg::buffer(&w), Arg::buffer(&vec![0.0f32; n])]
    });
    let at = |j: i64| if (0..n as i64).contains(&j) { inp[j as usize] } else { 0.0 };
    let want: Vec<f32> = (0..n as i64).map(|i| (0..9).map(|k| w[k as usize] * at(i + k - 4)).sum()).collect();
    assert_same("out", &out.f32("out"), &want);
}

#[test]
fn k20_softmax_rows_warp() {
    // 5 rows of 100 columns over 3 x 64 threads (6 warps, 1 idle). `exp` and the butterfly
    // sum round differently from the f64 reference: relative tolerance 1e-5.
    let (rows, cols) = (5, 100);
    let x = Rng::new(20).eighths(rows * cols, -3, 3);
    let p = program(&file("20_softmax_rows_warp.prism"));
    let out = p.launch("softmax_rows", 3, 64, || {
        vec![Arg::value(rows as i32), Arg::value(cols as i32), Arg::buffer(&x), Arg::buffer(&vec![0.0f32; rows * cols])]
    });
    assert_close("y", &out.f32("y"), &softmax_reference(&x, rows, cols), 1e-5, 0.0);
}

/// The softmax of each row of a `rows` x `cols` matrix, in double.
fn softmax_reference(x: &[f32], rows: usize, cols: usize) -> Vec<f64> {
    let mut want = vec![0.0f64; rows * cols];
    for r in 0..rows {
        let row: Vec<f64> = x[r * cols..(r + 1) * cols].iter().map(|&v| f64::from(v)).collect();
        let m = row.iter().copied().fold(f64::MIN, f64::max);
        let s: f64 = row.iter().map(|v| (v - m).exp()).sum();
        for c in 0..cols {
            want[r * cols + c] = (row[c] - m).exp() / s;
        }
    }
    want
}

#[test]
fn k49_softmax_rows_block() {
    // One block per row, the row in registers: rows with cols a multiple of 4 (16-byte
    // loads) and not, short rows (most threads hold nothing; one column), a row of exactly
    // the 4096 held columns, and rows longer than that (the rest re-read from memory, a
    // ragged last pass). Relative tolerance 1e-5, as for kernel 20. With the GPU sweep's
    // shapes too (bench/gpu/variants.txt: 256 threads x 16 held values, 512 x 8, 1024 x 4).
    // The inputs are eighths in [-24, 24] and row 0's last column is 200: a maximum that
    // misses it overflows `exp` (e^176 is past float's range) and the row turns to NaN; the
    // other values underflow to (near) zero, hence the absolute tolerance.
    for (defines, threads, cap) in [
        (&[][..], 128u32, 4096usize),
        (&["THREADS=256", "HELD=16"], 256, 4096),
        (&["THREADS=512", "HELD=8"], 512, 4096),
        (&["THREADS=1024", "HELD=4"], 1024, 4096),
    ] {
        let p = program_with(&file("49_softmax_rows_block.prism"), defines);
        for (rows, cols) in
            [(3usize, 100usize), (2, 1), (3, 7), (2, cap), (2, cap + 3), (2, cap + 900), (1, 2 * cap + 4)]
        {
            let mut x = Rng::new((rows * cols) as u64 + 49).eighths(rows * cols, -24, 24);
            x[cols - 1] = 200.0;
            let out = p.launch("softmax_rows_block", rows as u32, threads, || {
                vec![
                    Arg::value(rows as i32),
                    Arg::value(cols as i32),
                    Arg::buffer(&x),
                    Arg::buffer(&vec![0.0f32; rows * cols]),
                ]
            });
            assert_close(
                &format!("y ({rows} x {cols}, {threads} threads)"),
                &out.f32("y"),
                &softmax_reference(&x, rows, cols),
                1e-5,
                1e-30,
            );
        }
    }
}

#[test]
fn k21_gemv_warp_specialized_cp_async() {
    // K = 768: 3 chunks, so the pipeline's guards for a missing odd chunk run. Inputs in
    // [-1, 1] by 1/8 keep every partial sum exact.
    let (rows, k) = (3, 768);
    let mut rng = Rng::new(21);
    let (a, v) = (rng.eighths(rows * k, -1, 1), rng.eighths(k, -1, 1));
    let p = program(&file("21_gemv_warp_specialized_cp_async.prism"));
    let out = p.launch("gemv_pipelined", rows as u32, 64, || {
        vec![Arg::value(k as i32), Arg::buffer(&a), Arg::buffer(&v), Arg::buffer(&vec![0.0f32; rows])]
    });
    let want: Vec<f32> = (0..rows).map(|r| (0..k).map(|j| a[r * k + j] * v[j]).sum()).collect();
    assert_same("y", &out.f32("y"), &want);
}

#[test]
fn k22_cub_like_library_tile_scan() {
    // n = 1200: 3 tiles of 512, the last partial (`valid` < a tile inside one warp).
    let n = 1200;
    let x = wrapping_ints(22, n);
    let p = program(&file("22_cub_like_library_tile_scan.prism"));
    let out = p.launch("tile_scan", 3, 128, || {
        vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&vec![0i32; n]), Arg::buffer(&[0i32; 3])]
    });
    assert_same("out", &out.i32("out"), &tile_exclusive_scan(&x, 512));
    assert_same("totals", &out.i32("totals"), &tile_sums(&x, 512));
}

#[test]
fn k23_gemm_mma_bf16() {
    // 40 x 20 x 40: 2 x 2 block tiles of 32 x 16 (partial) and 3 K steps of 16 (the last
    // partial). Inputs are random bf16 values in [-1, 1): products are exact, and each mma
    // rounds its 16-term sum to f32, which the f64 reference does not: tolerance
    // 1e-6 * sum |alpha * a * b| + 1e-6.
    let (m, n, k, alpha, beta) = (40, 20, 40, 1.5f32, -0.5f32);
    let mut rng = Rng::new(23);
    let a: Vec<f32> = rng.uniform(m * k, -1.0, 1.0).into_iter().map(to_bf16).collect();
    let b: Vec<f32> = rng.uniform(k * n, -1.0, 1.0).into_iter().map(to_bf16).collect();
    let c = rng.eighths(m * n, -2, 2);
    let p = program(&file("23_gemm_mma_bf16.prism"));
    let out = p.launch("gemm_bf16_mma", 4, 128, || {
        vec![
            Arg::value(m as i32),
            Arg::value(n as i32),
            Arg::value(k as i32),
            Arg::value(alpha),
            bf16_buffer(&a),
            bf16_buffer(&b),
            Arg::value(beta),
            Arg::buffer(&c),
        ]
    });
    let want: Vec<f64> = sgemm((m, n, k), alpha, &a, &b, beta, &c).iter().map(|&v| f64::from(v)).collect();
    let got = out.f32("C");
    let scale = |i: usize, j: usize| (0..k).map(|kk| f64::from(a[i * k + kk] * b[kk * n + j]).abs()).sum::<f64>();
    for i in 0..m {
        for j in 0..n {
            let tol = 1e-6 * (1.5 * scale(i, j)) + 1e-6;
            let (g, w) = (f64::from(got[i * n + j]), want[i * n + j]);
            assert!((g - w).abs() <= tol, "C[{i}, {j}]: got {g}, want {w} (tolerance {tol})");
        }
    }
}

#[test]
fn k24_binary_search_while_break() {
    // 100 sorted keys with random gaps; 150 queries over 3 x 64 threads, half of them hits.
    let (n, m) = (100, 150);
    let mut rng = Rng::new(24);
    let mut keys = Vec::with_capacity(n);
    let mut k = -300i32;
    for _ in 0..n {
        k += rng.int(1, 6) as i32;
        keys.push(k);
    }
    let queries: Vec<i32> = (0..m)
        .map(|_| if rng.int(0, 1) == 0 { keys[rng.int(0, n as i64 - 1) as usize] } else { rng.int(-310, 300) as i32 })
        .collect();
    let p = program(&file("24_binary_search_while_break.prism"));
    let out = p.launch("batched_search", 3, 64, || {
        vec![
            Arg::value(n as i32),
            Arg::buffer(&keys),
            Arg::value(m as i32),
            Arg::buffer(&queries),
            Arg::buffer(&vec![7i32; m]),
        ]
    });
    let want: Vec<i32> = queries.iter().map(|q| keys.iter().position(|k| k == q).map_or(-1, |i| i as i32)).collect();
    assert_same("pos", &out.i32("pos"), &want);
}

#[test]
fn k25_row_col_sums_block_pairs() {
    // 20 x 300: 3 block pairs (ceil(20 / 8) = 3 >= ceil(300 / 256) = 2); the last row block
    // and the last column block are partial, and pair 2's column block has no columns.
    let (rows, cols) = (20, 300);
    let x = Rng::new(25).eighths(rows * cols, -4, 4);
    let p = program(&file("25_row_col_sums_block_pairs.prism"));
    let out = p.launch("row_col_sums", 6, 256, || {
        vec![
            Arg::value(rows as i32),
            Arg::value(cols as i32),
            Arg::buffer(&x),
            Arg::buffer(&vec![0.0f32; rows]),
            Arg::buffer(&vec![0.0f32; cols]),
        ]
    });
    let row: Vec<f32> = (0..rows).map(|r| x[r * cols..(r + 1) * cols].iter().sum()).collect();
    let col: Vec<f32> = (0..cols).map(|c| (0..rows).map(|r| x[r * cols + c]).sum()).collect();
    assert_same("row_sum", &out.f32("row_sum"), &row);
    assert_same("col_sum", &out.f32("col_sum"), &col);
}

#[test]
fn k26_stream_compaction_ballot() {
    // n = 2500: 3 tiles, the last partial. `out` starts as i32::MIN, which must survive past
    // each tile's kept items.
    let (n, blocks) = (2500, 3);
    let x = Rng::new(26).ints(n, -50, 50);
    let p = program(&file("26_stream_compaction_ballot.prism"));
    let out = p.launch("compact_positive", blocks as u32, 256, || {
        vec![
            Arg::value(n as i32),
            Arg::buffer(&x),
            Arg::buffer(&vec![i32::MIN; blocks * 1024]),
            Arg::buffer(&vec![-1i32; blocks]),
        ]
    });
    let mut want = vec![i32::MIN; blocks * 1024];
    let mut count = vec![0i32; blocks];
    for (b, tile) in x.chunks(1024).enumerate() {
        for v in tile.iter().filter(|&&v| v > 0) {
            want[b * 1024 + count[b] as usize] = *v;
            count[b] += 1;
        }
    }
    assert_same("out", &out.i32("out"), &want);
    assert_same("count", &out.i32("count"), &count);
}

#[test]
fn k27_layernorm_rows_block() {
    // 4 rows of 300 columns, 128 threads per block (each thread loops 2 or 3 times). The mean
    // (a division by 300), sqrt and the products round differently from the f64 reference:
    // relative tolerance 1e-5, plus 1e-5 absolute for outputs near zero.
    let (rows, cols, eps) = (4, 300, 1e-3f32);
    let mut rng = Rng::new(27);
    let x = rng.eighths(rows * cols, -3, 3);
    let (gamma, beta) = (rng.eighths(cols, -2, 2), rng.eighths(cols, -1, 1));
    let p = program(&file("27_layernorm_rows_block.prism"));
    let out = p.launch("layernorm_rows", rows as u32, 128, || {
        vec![
            Arg::value(rows as i32),
            Arg::value(cols as i32),
            Arg::value(eps),
            Arg::buffer(&x),
            Arg::buffer(&gamma),
            Arg::buffer(&beta),
            Arg::buffer(&vec![0.0f32; rows * cols]),
        ]
    });
    let mut want = vec![0.0f64; rows * cols];
    for r in 0..rows {
        let row: Vec<f64> = x[r * cols..(r + 1) * cols].iter().map(|&v| f64::from(v)).collect();
        let mean = row.iter().sum::<f64>() / cols as f64;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
        for c in 0..cols {
            want[r * cols + c] =
                (row[c] - mean) / (var + f64::from(eps)).sqrt() * f64::from(gamma[c]) + f64::from(beta[c]);
        }
    }
    assert_close("y", &out.f32("y"), &want, 1e-5, 1e-5);
}

#[test]
fn k28_persistent_work_queue() {
    // n = 5000: 5 tiles (the last partial) for 2 persistent blocks. Every block draws one
    // ticket past the end, so the queue ends at tiles + blocks.
    let (n, blocks, tiles) = (5000, 2, 5);
    let x = wrapping_ints(28, n);
    let p = program(&file("28_persistent_work_queue.prism"));
    let out = p.launch("persistent_tile_stats", blocks, 256, || {
        vec![
            Arg::value(n as i32),
            Arg::buffer(&x),
            Arg::buffer(&[0i32]),
            Arg::buffer(&vec![0i32; tiles]),
            Arg::buffer(&vec![0i32; tiles]),
        ]
    });
    let max: Vec<i32> = x.chunks(1024).map(|c| *c.iter().max().unwrap()).collect();
    assert_same("tile_sum", &out.i32("tile_sum"), &tile_sums(&x, 1024));
    assert_same("tile_max", &out.i32("tile_max"), &max);
    assert_same("queue", &out.i32("queue"), &[tiles as i32 + blocks as i32]);
}

#[test]
fn k29_sgemm_cp_async_double_buffer() {
    // 128 x 64 x 48: 2 blocks, 3 K steps of 16 (an odd count, so the second half of the last
    // pipeline iteration is skipped).
    // The kernel needs M, N multiples of 64 and K a multiple of 16, so no edge shapes.
    let (m, n, k, alpha, beta) = (128, 64, 48, 1.5f32, -0.5f32);
    let mut rng = Rng::new(29);
    let (a, b, c) = (rng.eighths(m * k, -2, 2), rng.eighths(k * n, -2, 2), rng.eighths(m * n, -2, 2));
    let p = program(&file("29_sgemm_cp_async_double_buffer.prism"));
    let out = p.launch("sgemm_cp_async", 2, 256, || {
        vec![
            Arg::value(m as i32),
            Arg::value(n as i32),
            Arg::value(k as i32),
            Arg::value(alpha),
            Arg::buffer(&a),
            Arg::buffer(&b),
            Arg::value(beta),
            Arg::buffer(&c),
        ]
    });
    assert_same("C", &out.f32("C"), &sgemm((m, n, k), alpha, &a, &b, beta, &c));
}

#[test]
fn k30_bitonic_sort_block_entry() {
    // 1000 keys (24 padding slots), with duplicates and negatives.
    let n = 1000;
    let keys = Rng::new(30).ints(n, -500, 500);
    let p = program(&file("30_bitonic_sort_block_entry.prism"));
    let out = p.launch("bitonic_sort_1024", 1, 512, || {
        vec![Arg::value(n as i32), Arg::buffer(&keys), Arg::buffer(&vec![0i32; n])]
    });
    let mut want = keys.clone();
    want.sort();
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn k31_gemm_mma_tf32_warp_tiles() {
    // 32 x 24 x 24: 6 warp tiles over 2 x 128 threads (8 warps, 2 idle), 3 K steps. Inputs
    // have full f32 mantissas, so the tf32 rounding matters (an unrounded product differs by
    // ~1e-3): tolerance as in `assert_tf32_gemm`.
    let (m, n, k) = (32, 24, 24);
    let mut rng = Rng::new(31);
    let (a, b) = (rng.uniform(m * k, -1.0, 1.0), rng.uniform(k * n, -1.0, 1.0));
    let p = program(&file("31_gemm_mma_tf32_warp_tiles.prism"));
    let out = p.launch("gemm_tf32_warp_tiles", 2, 128, || {
        vec![
            Arg::value(m as i32),
            Arg::value(n as i32),
            Arg::value(k as i32),
            Arg::buffer(&a),
            Arg::buffer(&b),
            Arg::buffer(&vec![f32::NAN; m * n]),
        ]
    });
    assert_tf32_gemm(&out.f32("C"), m, n, k, &a, &b);
}

#[test]
fn k32_sgemm_vectorized() {
    // 200 x 136 x 36: 2 x 2 tiles of 128 x 128 (three partial), the vector paths for A, B and
    // C (K and N multiples of 4) with ragged edges; then the element-by-element paths (odd N
    // and K), and the corner cases of `check_sgemm`.
    check_sgemm("32_sgemm_6_vectorized.prism", "sgemm_vectorized", (200, 136, 36), (128, 128), 256);
    check_sgemm("32_sgemm_6_vectorized.prism", "sgemm_vectorized", (130, 131, 19), (128, 128), 256);
}

/// The shapes every three-stage pipelined sgemm runs: 200 x 136 x 40 (five K steps, more
/// than the three slots, so every slot is reused; ragged M and N), a single K step (the fill
/// of the other stages empty), no K step at all (C = beta C), and 1 x 4 x 16; then the tails:
/// K a multiple of 4 but not of 8 (16-byte copies, the last step half zero-filled), K and N
/// odd (4-byte copies, C element by element), N smaller than one 4-column copy, K smaller
/// than one step, and odd N with K a multiple of 4 (16-byte A copies, 4-byte B copies, or
/// 4-byte copies of both in the kernels that test K and N once per fill), and the other way
/// round (40 x 64 x 13).
const PIPELINED_SGEMM_SHAPES: [(usize, usize, usize); 10] = [
    (200, 136, 40),
    (40, 64, 13),
    (130, 132, 8),
    (5, 8, 0),
    (1, 4, 16),
    (129, 8, 12),
    (70, 131, 37),
    (3, 2, 5),
    (9, 130, 3),
    (33, 45, 20),
];

#[test]
fn k36_sgemm_pipelined() {
    check_sgemm_shapes("36_sgemm_pipelined.prism", "sgemm_pipelined", &PIPELINED_SGEMM_SHAPES, (128, 128), 256);
}

#[test]
fn k44_sgemm_warp_tiled() {
    // Kernel 36's shapes (every slot of the ring reused, one K step, none, the 16-byte and
    // 4-byte tails of B and C, N narrower than one copy, K shorter than one step), then the
    // warp tiling's own: 256 x 256 x 24, four whole tiles where every thread of every block
    // stores all 64 of its outputs (the simulator's race check fails any two threads
    // sharing one); 150 x 202 x 17, where the last tiles end inside a lane's 4 x 4 outputs:
    // row 150 is the third of lane row 1 in sub-tile 1 of warp row 0, column 202 the third
    // of lane column 2 in sub-tile 0 of warp column 1 (C element by element, the last K
    // step one element); 150 x 200 x 16, the same rows with the 16-byte paths; and
    // 129 x 129 x 9, one row and one column in the last tiles, two K steps.
    let mut shapes = PIPELINED_SGEMM_SHAPES.to_vec();
    shapes.extend([(256, 256, 24), (150, 202, 17), (150, 200, 16), (129, 129, 9)]);
    check_sgemm_shapes("44_sgemm_warp_tiled.prism", "sgemm_warp_tiled", &shapes, (128, 128), 256);
}

#[test]
fn k46_sgemm_deep_k() {
    // Kernel 36's shapes with K steps of 32: 200 x 136 x 40 is two steps (the last with 8 k,
    // the rest zero-filled), 130 x 132 x 8 one step a quarter full, 1 x 4 x 16 one half
    // step; then the step's parts against the tails: 64 x 64 x 49 (two steps, the last with
    // 17 k), 100 x 129 x 24 (the third part of the only step partly there, N odd: 4-byte
    // copies of B and C element by element), and 128 x 128 x 224 (whole tiles, seven steps,
    // every slot of the ring reused twice).
    let mut shapes = PIPELINED_SGEMM_SHAPES.to_vec();
    shapes.extend([(64, 64, 49), (100, 129, 24), (128, 128, 224)]);
    check_sgemm_shapes("46_sgemm_deep_k.prism", "sgemm_deep_k", &shapes, (128, 128), 256);
}

#[test]
fn k46_variants_a_gpu_sweep_builds() {
    // The variants of kernel 46 that `-D` makes for a tuning sweep compute the same product:
    // K steps of 16 and 24 (two and three copies per operand and thread; 32, the default,
    // makes four), four stages, parts of 4 k, and K steps of 8 (kernel 36's depth). Shapes
    // with a ragged last step for each depth, N odd (4-byte copies), and a whole tile.
    let shapes = [(200, 136, 40), (70, 131, 37), (128, 128, 96), (33, 45, 20), (5, 8, 0)];
    for defines in [&["BK=16"][..], &["BK=24", "STAGES=4"], &["STAGES=4"], &["KH=4"], &["BK=8"], &["KH=4", "STAGES=2"]]
    {
        check_sgemm_variant("46_sgemm_deep_k.prism", defines, "sgemm_deep_k", &shapes, (128, 128), 256);
    }
}

#[test]
fn k50_sgemm_wide_tiles() {
    // Kernel 36's shapes with 128 threads of 8 x 16 outputs: 200 x 136 x 40 (five steps,
    // the last tiles ragged), 70 x 131 x 37 (N odd: 4-byte copies of B and C element by
    // element; K odd: A's 4-byte copies); then the thread arrangement's own: 256 x 256 x 24,
    // four whole tiles where every thread of every block stores all 128 of its outputs (the
    // simulator's race check fails any two threads sharing one); 150 x 202 x 17, where the
    // last tiles end inside a thread's rows (row 150 is thread row 6's second, i = 1) and
    // column groups (column 202 the third of group 2 of thread column 2); 150 x 200 x 16
    // with the 16-byte paths; 129 x 129 x 9, one row and one column in the last tiles and
    // a step with one k; and 128 x 128 x 96, twelve steps, every slot of the ring reused.
    let mut shapes = PIPELINED_SGEMM_SHAPES.to_vec();
    shapes.extend([(256, 256, 24), (150, 202, 17), (150, 200, 16), (129, 129, 9), (128, 128, 96)]);
    check_sgemm_shapes("50_sgemm_wide_tiles.prism", "sgemm_wide", &shapes, (128, 128), 128);
}

#[test]
fn k50_variants_a_gpu_sweep_builds() {
    // The variants of kernel 50 that `-D` makes for a tuning sweep compute the same product:
    // K steps of 16 (four copies per operand and thread), four stages, two stages, and one
    // block per SM (a bound nvcc reads, the same code here).
    let shapes = [(200, 136, 40), (70, 131, 37), (128, 128, 96), (33, 45, 20), (5, 8, 0)];
    for defines in [&["BK=16"][..], &["STAGES=4"], &["STAGES=2"], &["BK=16", "STAGES=4"], &["MIN_BLOCKS=1"]] {
        check_sgemm_variant("50_sgemm_wide_tiles.prism", defines, "sgemm_wide", &shapes, (128, 128), 128);
    }
    // cuBLAS's other two large tiles, 256 threads of 8 x 16 outputs: 128 x 256 (16 threads
    // across, column groups 64 apart, two threads per row of A's copy) and 256 x 128 (32
    // thread rows, rows 32 apart), on shapes that end inside their last tiles' rows and
    // column groups, N odd, and whole tiles where every thread stores all its outputs.
    let shapes = [(200, 300, 40), (70, 131, 37), (256, 256, 24), (300, 520, 17), (5, 8, 0)];
    for (defines, tile) in [
        (&["THREADS=256", "BN=256", "MIN_BLOCKS=1"][..], (128, 256)),
        (&["THREADS=256", "BM=256", "MIN_BLOCKS=1"], (256, 128)),
        (&["THREADS=256", "BN=256", "MIN_BLOCKS=1", "BK=16", "STAGES=4"], (128, 256)),
    ] {
        check_sgemm_variant("50_sgemm_wide_tiles.prism", defines, "sgemm_wide", &shapes, tile, 256);
    }
}

#[test]
fn k51_sgemm_prefetch() {
    // Kernel 50's shapes on kernel 50's structure with the turning body: each step's k = 0
    // operands come from the step before (tile 0's from itself), the last step's turn
    // reloads its own slot. Also one step (K = 8: the first step is the last), two steps
    // (fewer than the ring's three slots), a ragged single step (K = 3) and none (K = 0).
    let mut shapes = PIPELINED_SGEMM_SHAPES.to_vec();
    shapes.extend([
        (256, 256, 24),
        (150, 202, 17),
        (150, 200, 16),
        (129, 129, 9),
        (128, 128, 96),
        (64, 136, 8),
        (40, 72, 3),
        (8, 8, 0),
    ]);
    check_sgemm_shapes("51_sgemm_prefetch.prism", "sgemm_prefetch", &shapes, (128, 128), 128);
}

#[test]
fn k51_variants_a_gpu_sweep_builds() {
    // Kernel 51's sweep: K steps of 16 (four halves, the buffers alternating twice), rings
    // of two and four slots (the turn's wait is `wait_group 0` and `2`), and cuBLAS's
    // 128 x 256 and 256 x 128 tiles of 256 threads.
    let shapes = [(200, 136, 40), (70, 131, 37), (128, 128, 96), (33, 45, 20), (64, 64, 16), (5, 8, 0)];
    for defines in [&["BK=16"][..], &["STAGES=4"], &["STAGES=2"], &["BK=16", "STAGES=4"]] {
        check_sgemm_variant("51_sgemm_prefetch.prism", defines, "sgemm_prefetch", &shapes, (128, 128), 128);
    }
    let shapes = [(200, 300, 40), (70, 131, 37), (256, 256, 24), (5, 8, 0)];
    for (defines, tile) in [
        (&["THREADS=256", "BN=256", "MIN_BLOCKS=1"][..], (128, 256)),
        (&["THREADS=256", "BM=256", "MIN_BLOCKS=1"], (256, 128)),
    ] {
        check_sgemm_variant("51_sgemm_prefetch.prism", defines, "sgemm_prefetch", &shapes, tile, 256);
    }
}

#[test]
fn k33_reduce_sum_vectorized() {
    // A tail (n not a multiple of 8), fewer vectors than threads, an exact multiple, several
    // grid-stride passes (1 block over 20,000 items), and n = 0.
    let p = program(&file("33_reduce_sum_vectorized.prism"));
    for (n, blocks) in [(10_003usize, 3u32), (13, 2), (4096, 1), (20_000, 1), (0, 2)] {
        let x = Rng::new(33 + n as u64).ints(n, -(1 << 30), 1 << 30);
        let out =
            p.launch("reduce_sum", blocks, 256, || vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&[0i32])]);
        let want = x.iter().fold(0i32, |a, v| a.wrapping_add(*v));
        assert_same(&format!("out (n = {n})"), &out.i32("out"), &[want]);
    }
}

#[test]
fn k34_gemm_bf16_ldmatrix() {
    // 72 x 80 x 48: 2 x 2 block tiles of 64 x 64 (three partial) with the vector staging
    // (K and N multiples of 8); then 70 x 75 x 21 with element-by-element staging and a
    // partial last K step.
    let shapes = [(72, 80, 48, 1.5, -0.5), (70, 75, 21, 1.0, 0.25)];
    check_bf16_gemm("34_gemm_bf16_ldmatrix.prism", "gemm_bf16_ldmatrix", &shapes, (64, 64), 128);
}

/// Runs a bf16 gemm kernel (M, N, K, alpha, A, B, beta, C; block tiles of `tile` = (rows,
/// columns), `block` threads) on each shape against the float reference. Random bf16 inputs in
/// [-1, 1): products are exact, and each mma rounds its 16-term sum to f32: tolerance
/// 1e-6 * sum |alpha * a * b| + 1e-6.
fn check_bf16_gemm(
    name: &str,
    kernel: &str,
    shapes: &[(usize, usize, usize, f32, f32)],
    tile: (usize, usize),
    block: u32,
) {
    check_bf16_gemm_variant(name, &[], kernel, shapes, tile, block);
}

/// [`check_bf16_gemm`] on the variant `-D` makes with `defines`.
fn check_bf16_gemm_variant(
    name: &str,
    defines: &[&str],
    kernel: &str,
    shapes: &[(usize, usize, usize, f32, f32)],
    (bm, bn): (usize, usize),
    block: u32,
) {
    let p = program_with(&file(name), defines);
    for &(m, n, k, alpha, beta) in shapes {
        let mut rng = Rng::new((m * n + k) as u64 + 34);
        let a: Vec<f32> = rng.uniform(m * k, -1.0, 1.0).into_iter().map(to_bf16).collect();
        let b: Vec<f32> = rng.uniform(k * n, -1.0, 1.0).into_iter().map(to_bf16).collect();
        let c = rng.eighths(m * n, -2, 2);
        let grid = (m.div_ceil(bm) * n.div_ceil(bn)) as u32;
        let out = p.launch(kernel, grid, block, || {
            vec![
                Arg::value(m as i32),
                Arg::value(n as i32),
                Arg::value(k as i32),
                Arg::value(alpha),
                bf16_buffer(&a),
                bf16_buffer(&b),
                Arg::value(beta),
                Arg::buffer(&c),
            ]
        });
        let want = sgemm((m, n, k), alpha, &a, &b, beta, &c);
        let got = out.f32("C");
        let scale = |i: usize, j: usize| (0..k).map(|kk| f64::from(a[i * k + kk] * b[kk * n + j]).abs()).sum::<f64>();
        for i in 0..m {
            for j in 0..n {
                let tol = 1e-6 * (f64::from(alpha) * scale(i, j)) + 1e-6;
                let (g, w) = (f64::from(got[i * n + j]), f64::from(want[i * n + j]));
                assert!((g - w).abs() <= tol, "C[{i}, {j}] ({m} x {n} x {k}): got {g}, want {w} (tolerance {tol})");
            }
        }
    }
}

#[test]
fn k37_gemm_bf16_pipelined() {
    // The four-stage pipeline: 136 x 200 x 72 (2 x 2 block tiles of 128 x 128, three
    // partial; five K steps, more than the four slots, the last half past K), one K step,
    // none (C = beta C), and 1 x 8 x 8. N and K are multiples of 8 (16-byte rows).
    let shapes = [(136, 200, 72, 1.5, -0.5), (130, 8, 16, 1.0, 0.25), (5, 16, 0, 2.0, -1.0), (1, 8, 8, 1.0, 0.0)];
    check_bf16_gemm("37_gemm_bf16_pipelined.prism", "gemm_bf16_pipelined", &shapes, (128, 128), 256);
}

#[test]
fn k37_variants_a_gpu_sweep_builds() {
    // K steps of 32 and 64 per stage (two and four slices of A, two and four copies per
    // thread and operand): several steps with the last one ragged (K = 72 and 40 are not
    // multiples of 32), one partial step, none, and K = 200 through three slots.
    let shapes = [
        (136, 200, 72, 1.5, -0.5),
        (130, 8, 16, 1.0, 0.25),
        (5, 16, 0, 2.0, -1.0),
        (70, 136, 40, 1.0, 0.0),
        (64, 64, 200, 0.5, 1.0),
    ];
    for defines in [&["BK=32"][..], &["BK=64", "STAGES=3"]] {
        check_bf16_gemm_variant(
            "37_gemm_bf16_pipelined.prism",
            defines,
            "gemm_bf16_pipelined",
            &shapes,
            (128, 128),
            256,
        );
    }
}

#[test]
fn k37_wide_warp_tiles_a_gpu_sweep_builds() {
    // Warp tiles of 64 x 64 (eight mma tiles across, B through four `ldmatrix_x4_trans`):
    // 128 x 256 blocks of 8 warps (B's copies in two passes of 8 rows), 128 x 128 blocks of
    // 4 warps (A's and B's copies in two passes each) and 256 x 128 blocks (A in two
    // passes). Shapes: ragged tiles in both directions (N = 264 and M = 270 put a second
    // block tile one mma tile deep), several K steps with a ragged last one, none, one
    // partial step, and N smaller than a warp's tile.
    let shapes = [
        (136, 264, 72, 1.5, -0.5),
        (270, 136, 40, 1.0, 0.25),
        (5, 16, 0, 2.0, -1.0),
        (64, 72, 8, 0.5, 1.0),
        (70, 8, 200, 1.0, 0.0),
    ];
    let variants: [(&[&str], (usize, usize), u32); 4] = [
        (&["WN=64", "BN=256", "BK=32"], (128, 256), 256),
        (&["WN=64", "BN=256", "BK=32", "STAGES=3"], (128, 256), 256),
        (&["WN=64", "BK=32"], (128, 128), 128),
        (&["WN=64", "BM=256", "BK=32"], (256, 128), 256),
    ];
    for (defines, tile, block) in variants {
        check_bf16_gemm_variant("37_gemm_bf16_pipelined.prism", defines, "gemm_bf16_pipelined", &shapes, tile, block);
    }
}

#[test]
fn k45_gemm_tf32_pipelined() {
    // C = alpha A B^T + beta C with B given N x K, on the four-stage pipeline: 136 x 200 x 36
    // (2 x 2 block tiles of 128 x 128, three partial; five K steps of 8, more than the four
    // slots, the last half past K and zero-filled), 129 x 129 x 12 (one row and one column
    // past a tile, two steps), one K step, none (C = beta C), 1 x 4 x 4 (one half-empty step,
    // N smaller than one mma tile), and 1 x 1 x 0. The inputs are f32 with full mantissas, so
    // the tf32 rounding matters; the reference (`tf32_gemm`, inputs rounded as `cvt.rna`
    // does, one f32 rounding per k8 step) runs on A and B^T padded with zeros to a multiple
    // of 8 along k, as the zero-filled slots are. Tolerance: 1e-6 of the sum of |alpha a b|,
    // plus the f32 rounding of alpha acc + beta c.
    let shapes = [
        (136usize, 200usize, 36usize, 1.5f32, -0.5f32),
        (129, 129, 12, 0.5, 2.0),
        (130, 8, 8, 1.0, 0.25),
        (5, 16, 0, 2.0, -1.0),
        (1, 4, 4, 1.0, 0.0),
        (1, 1, 0, 1.0, 3.0),
    ];
    check_tf32_pipelined(&program(&file("45_gemm_tf32_pipelined.prism")), &shapes, (128, 128), 256, false);
}

#[test]
fn k45_variants_a_gpu_sweep_builds() {
    // K steps of 16 and 32 per stage (two and four slices of A and B, as many copies per
    // thread and operand): ragged last steps (K = 36 and 12 are not multiples of 16), one
    // partial step, none, K = 100 through three slots, and N smaller than one mma tile.
    let shapes = [
        (136usize, 200usize, 36usize, 1.5f32, -0.5f32),
        (129, 129, 12, 0.5, 2.0),
        (5, 16, 0, 2.0, -1.0),
        (64, 64, 100, 1.0, 0.0),
        (1, 4, 4, 1.0, 0.0),
    ];
    for defines in [&["BK=16"][..], &["BK=32", "STAGES=3"]] {
        check_tf32_pipelined(
            &program_with(&file("45_gemm_tf32_pipelined.prism"), defines),
            &shapes,
            (128, 128),
            256,
            false,
        );
    }
    // `intrinsic.mma_tf32_rz`: the inputs truncated to tf32, not rounded. The tolerance is
    // far below what rounding instead would change, so the reference tells them apart.
    let rz = program_with(&file("45_gemm_tf32_pipelined.prism"), &["RZ=True"]);
    check_tf32_pipelined(&rz, &shapes, (128, 128), 256, true);
}

#[test]
fn k45_wide_warp_tiles_a_gpu_sweep_builds() {
    // Warp tiles of 64 x 64 (eight mma tiles across, B two tiles per `ldmatrix_x4_tf32`):
    // 128 x 256 blocks of 8 warps (B's copies in two passes), 128 x 128 blocks of 4 warps
    // (A's and B's in two passes each) and 256 x 128 blocks (A's in two passes). Shapes:
    // ragged tiles both ways (N = 264 and M = 270 put a second block tile one mma tile
    // deep), ragged last K steps, none, and N smaller than one mma tile.
    let shapes = [
        (136usize, 264usize, 36usize, 1.5f32, -0.5f32),
        (270, 136, 20, 0.5, 2.0),
        (5, 16, 0, 2.0, -1.0),
        (64, 72, 100, 1.0, 0.0),
        (1, 4, 4, 1.0, 0.0),
    ];
    let variants: [(&[&str], (usize, usize), u32); 5] = [
        (&["WN=64", "BN=256", "BK=16"], (128, 256), 256),
        (&["WN=64", "BN=256", "BK=32", "STAGES=3"], (128, 256), 256),
        (&["WN=64", "BK=16"], (128, 128), 128),
        (&["WN=64", "BM=256", "BK=16"], (256, 128), 256),
        (&["WN=64", "BN=256", "BK=16", "RZ=True"], (128, 256), 256),
    ];
    for (defines, tile, block) in variants {
        let rz = defines.contains(&"RZ=True");
        check_tf32_pipelined(&program_with(&file("45_gemm_tf32_pipelined.prism"), defines), &shapes, tile, block, rz);
    }
}

/// Runs kernel 45 (or a variant: block tiles of `tile` = (rows, columns), `block` threads)
/// on `shapes` and checks C against the tf32 reference (see `k45_gemm_tf32_pipelined`).
fn check_tf32_pipelined(
    p: &Program,
    shapes: &[(usize, usize, usize, f32, f32)],
    (bm, bn): (usize, usize),
    block: u32,
    rz: bool,
) {
    for &(m, n, k, alpha, beta) in shapes {
        let mut rng = Rng::new((m * n + k) as u64 + 45);
        let a = rng.uniform(m * k, -1.0, 1.0);
        let b = rng.uniform(n * k, -1.0, 1.0);
        let c = rng.uniform(m * n, -1.0, 1.0);
        let grid = (m.div_ceil(bm) * n.div_ceil(bn)) as u32;
        let out = p.launch("gemm_tf32_pipelined", grid, block, || {
            vec![
                Arg::value(m as i32),
                Arg::value(n as i32),
                Arg::value(k as i32),
                Arg::value(alpha),
                Arg::buffer(&a),
                Arg::buffer(&b),
                Arg::value(beta),
                Arg::buffer(&c),
            ]
        });
        // A (M x K8) and B^T (K8 x N), zero past K.
        let k8 = k.div_ceil(8) * 8;
        let mut ap = vec![0.0f32; m * k8];
        let mut bt = vec![0.0f32; k8 * n];
        for i in 0..m {
            ap[i * k8..i * k8 + k].copy_from_slice(&a[i * k..(i + 1) * k]);
        }
        for j in 0..n {
            for kk in 0..k {
                bt[kk * n + j] = b[j * k + kk];
            }
        }
        let conv = if rz { truncate_tf32 } else { to_tf32 };
        let prod = tf32_gemm_by(m, n, k8, &ap, &bt, conv);
        let scale = abs_product_sums(m, n, k8, &ap, &bt);
        let got = out.f32("C");
        for i in 0..m {
            for j in 0..n {
                let x = i * n + j;
                let (al, be) = (f64::from(alpha), f64::from(beta));
                let want = al * prod[x] + be * f64::from(c[x]);
                let tol = 1e-6 * al.abs() * scale[x]
                    + 1e-6 * (al * prod[x]).abs()
                    + 1e-6 * (be * f64::from(c[x])).abs()
                    + 1e-7;
                let g = f64::from(got[x]);
                assert!(
                    (g - want).abs() <= tol,
                    "C[{i}, {j}] ({m} x {n} x {k}): got {g}, want {want} (tolerance {tol})"
                );
            }
        }
    }
}

#[test]
fn k35_scan_lookback_packed() {
    // 9000 items: 3 tiles of 4096 (the last partial, and not a multiple of 16 per thread);
    // 140,000 items: 35 tiles, so the last blocks' windows of 32 predecessors end before an
    // inclusive prefix under some schedules and the window moves back; an exact multiple of
    // the tile; and one item. The status words end as inclusive prefixes (flag 2) of every
    // tile.
    check_packed_scan("35_scan_lookback_packed.prism", "scan_lookback_packed", &[9000, 140_000, 8192, 1]);
}

#[test]
fn k47_scan_warp_transposed() {
    // Kernel 35's sizes, and tails that end inside a warp's segment: 4096 + 700 (the second
    // tile's warp 1 partly there, warps 2 to 7 reading nothing), 511 and 513 (one item short
    // of and past warp 0's segment), and 4096 - 1.
    check_packed_scan(
        "47_scan_warp_transposed.prism",
        "scan_warp_transposed",
        &[9000, 140_000, 8192, 1, 4796, 511, 513, 4095],
    );
}

#[test]
fn k47_variants_a_gpu_sweep_builds() {
    // CUB's sm_90 shape (128 threads x 24 items), wide blocks of few items, narrow blocks of
    // many: 40 and more tiles (the window moves back), a tail inside a warp's segment, one
    // item. With CUB's look-back delays, from two blocks on (so the simulator runs the
    // sleeps, which change no result).
    for (defines, shape) in [
        (&["THREADS=128", "ITEMS=24"][..], (128u32, 24usize)),
        (&["THREADS=128", "ITEMS=24", "DELAY_FIRST=1245", "DELAY_POLL=648", "DELAY_GRID=2"], (128, 24)),
        (&["THREADS=512", "ITEMS=8"], (512, 8)),
        (&["THREADS=64", "ITEMS=32"], (64, 32)),
    ] {
        let tile = shape.0 as usize * shape.1;
        check_packed_scan_variant(
            "47_scan_warp_transposed.prism",
            defines,
            shape,
            "scan_warp_transposed",
            &[41 * tile + 700, tile + 33, 1],
        );
    }
}

/// Runs a packed look-back scan of 4096-item tiles (256 threads) on `sizes` items and checks
/// the output and the final status words against a sequential scan.
fn check_packed_scan(file_name: &str, kernel: &str, sizes: &[usize]) {
    check_packed_scan_variant(file_name, &[], (256, 16), kernel, sizes);
}

/// [`check_packed_scan`] on the variant `-D` makes with `defines`, whose tiles are `threads`
/// x `items`.
fn check_packed_scan_variant(
    file_name: &str,
    defines: &[&str],
    (threads, items): (u32, usize),
    kernel: &str,
    sizes: &[usize],
) {
    let p = program_with(&file(file_name), defines);
    let tile = threads as usize * items;
    for &n in sizes {
        let blocks = n.div_ceil(tile);
        let x = Rng::new(35 + n as u64).ints(n, -(1 << 30), 1 << 30);
        let out = p.launch(kernel, blocks as u32, threads, || {
            vec![
                Arg::value(n as i32),
                Arg::buffer(&x),
                Arg::buffer(&vec![0i32; n]),
                Arg::buffer(&[0i32]),
                Arg::buffer(&vec![0u64; blocks]),
            ]
        });
        let scan = inclusive_scan(0, &x);
        assert_same(&format!("out (n = {n})"), &out.i32("out"), &scan);
        let status: Vec<u64> =
            (0..blocks).map(|j| (2u64 << 32) | u64::from(scan[((j + 1) * tile).min(n) - 1] as u32)).collect();
        assert_same(&format!("status (n = {n})"), &out.get::<u64>("status"), &status);
    }
}

#[test]
fn k35_scan_lookback_window_moves_back() {
    // One block draws ticket 40 over status words prepared as if tiles 1..39 had published
    // only their aggregates and tile 0 its inclusive prefix: the first window (tiles 39..8)
    // holds no inclusive prefix, so it moves 32 tiles back; the second (7..-24) finds tile 0
    // in lane 7, and lanes past tile 0 read nothing. Tile 40's prefix is the sum of all.
    let p = program(&file("35_scan_lookback_packed.prism"));
    let n = 41 * 4096;
    let x = Rng::new(3540).ints(n, -(1 << 30), 1 << 30);
    let aggregates: Vec<i32> = (0..40i32).map(|j| 1000 * j + 7).collect();
    let mut status: Vec<u64> =
        aggregates.iter().map(|a| (1u64 << 32) | u64::from(*a as u32)).chain(std::iter::once(0)).collect();
    status[0] = (2u64 << 32) | u64::from(aggregates[0] as u32);
    let out = p.launch("scan_lookback_packed", 1, 256, || {
        vec![
            Arg::value(n as i32),
            Arg::buffer(&x),
            Arg::buffer(&vec![0i32; n]),
            Arg::buffer(&[40i32]),
            Arg::buffer(&status),
        ]
    });
    let prefix = aggregates.iter().fold(0i32, |a, v| a.wrapping_add(*v));
    let tile = inclusive_scan(prefix, &x[40 * 4096..]);
    assert_same("out (tile 40)", &out.i32("out")[40 * 4096..], &tile);
    let mut want = status.clone();
    want[40] = (2u64 << 32) | u64::from(*tile.last().expect("a full tile") as u32);
    assert_same("status", &out.get::<u64>("status"), &want);
}

#[test]
fn k38_hgemm_warp_specialised() {
    // C = A B^T in bf16 with f32 accumulation, on the warp-specialised pipeline: one tile
    // and one K step; 2 x 2 tiles on 3 persistent blocks (block 0 does two tiles, so its
    // pipeline crosses a tile boundary and the consumers store and clear mid-loop) with two
    // K steps; five K steps through four slots (the ring wraps) with a second, idle block;
    // and 2 x 1 tiles of three steps on 2 blocks. The inputs are random bf16 in [-1, 1):
    // products are exact, each k16 step rounds the f32 sum once, and C is rounded to bf16
    // once, so the result is within half a bf16 unit of the exact sum plus 1e-6 of the sum of
    // magnitudes (tolerance 2^-8 |exact| + 2e-6 sum |a b| + 1e-6).
    let p = program(&file("38_hgemm_warp_specialised.prism"));
    check_hgemm_ws(&p, &[(128, 256, 64, 1), (256, 512, 128, 3), (128, 256, 320, 2), (256, 256, 192, 2)]);
}

#[test]
fn k38_variants_a_gpu_sweep_builds() {
    // `-D LATE=False` (bench/gpu/variants.txt: `hgemm_ws_early`): each step completes its
    // own group before its slot is released. The shapes where the pipeline crosses a tile
    // boundary and where the ring wraps.
    let p = program_with(&file("38_hgemm_warp_specialised.prism"), &["LATE=False"]);
    check_hgemm_ws(&p, &[(256, 512, 128, 3), (128, 256, 320, 2)]);
}

/// Launches kernel 38 (or a variant) at each `(m, n, k, blocks)` and checks C (see
/// `k38_hgemm_warp_specialised`).
fn check_hgemm_ws(p: &Program, shapes: &[(usize, usize, usize, u32)]) {
    for &(m, n, k, blocks) in shapes {
        let mut rng = Rng::new((m * n + k) as u64 + 38);
        let a: Vec<f32> = rng.uniform(m * k, -1.0, 1.0).into_iter().map(to_bf16).collect();
        let b: Vec<f32> = rng.uniform(n * k, -1.0, 1.0).into_iter().map(to_bf16).collect();
        let cols = k as u64;
        let tensor = |v: &[f32], rows: usize| {
            let Arg::Buffer(buffer) = bf16_buffer(v) else { unreachable!("bf16_buffer makes a buffer") };
            Arg::Tensor { buffer, dims: vec![rows as u64, cols] }
        };
        let out = p.launch("hgemm", blocks, 384, || {
            vec![
                tensor(&a, m),
                tensor(&b, n),
                bf16_buffer(&vec![7.0; m * n]),
                Arg::value(m as i32),
                Arg::value(n as i32),
                Arg::value(k as i32),
            ]
        });
        let got: Vec<f32> = out.bits("c").iter().map(|&x| f32::from_bits((x as u32) << 16)).collect();
        for i in 0..m {
            for j in 0..n {
                let exact: f64 = (0..k).map(|q| f64::from(a[i * k + q]) * f64::from(b[j * k + q])).sum();
                let mag: f64 = (0..k).map(|q| (f64::from(a[i * k + q]) * f64::from(b[j * k + q])).abs()).sum();
                let g = f64::from(got[i * n + j]);
                let tol = exact.abs() / 256.0 + 2e-6 * mag + 1e-6;
                assert!((g - exact).abs() <= tol, "C[{i}, {j}] ({m} x {n} x {k}): got {g}, want {exact}");
            }
        }
    }
}

#[test]
fn k43_gemm_tf32_wgmma() {
    // C = A B^T in tf32 with f32 accumulation on the warp-specialised TMA pipeline: one
    // exact tile; 100 x 200 with K = 36 (ragged M and N tiles, a K that is not a multiple
    // of 8: the last step's columns past K are TMA's zeros); 130 x 130 x 100 on 6 blocks; N
    // = 8 with K = 4 (the boxes are larger than B); and K = 200, seven steps through the
    // three slots (the ring wraps twice).
    let p = program(&file("43_gemm_tf32_wgmma.prism"));
    // 586 x 130: ten tile rows, so the grouped tile order has a full group of eight and a
    // ragged one of two.
    for (m, n, k) in
        [(64usize, 128usize, 32usize), (100, 200, 36), (130, 130, 100), (64, 8, 4), (64, 128, 200), (586, 130, 8)]
    {
        let blocks = (m.div_ceil(64) * n.div_ceil(128)) as u32;
        check_tf32_abt(&p, "gemm_tf32", (m, n, k), (blocks, 256), 43);
    }
}

/// Launches a tf32 gemm `C = A B^T` taking tensor maps of A (m x k) and B (n x k), C and
/// m, n, k, on random full-mantissa inputs, C starting at 7s (an element never stored
/// shows), and checks C against the exact sum of the inputs' truncated (tf32) products:
/// products are exact and each k8 step rounds the f32 sum once, so C is within (k / 8 + 1)
/// 2^-23 of the sum of magnitudes.
pub(crate) fn check_tf32_abt(
    p: &Program,
    kernel: &str,
    (m, n, k): (usize, usize, usize),
    (blocks, threads): (u32, u32),
    seed: u64,
) {
    let trunc = |x: f32| f64::from(f32::from_bits(x.to_bits() & !0x1FFF));
    let mut rng = Rng::new((m * n + k) as u64 + seed);
    let a = rng.uniform(m * k, -1.0, 1.0);
    let b = rng.uniform(n * k, -1.0, 1.0);
    let tensor = |v: &[f32], rows: usize| {
        let Arg::Buffer(buffer) = Arg::buffer(v) else { unreachable!("Arg::buffer makes a buffer") };
        Arg::Tensor { buffer, dims: vec![rows as u64, k as u64] }
    };
    let out = p.launch(kernel, blocks, threads, || {
        vec![
            tensor(&a, m),
            tensor(&b, n),
            Arg::buffer(&vec![7.0f32; m * n]),
            Arg::value(m as i32),
            Arg::value(n as i32),
            Arg::value(k as i32),
        ]
    });
    let got = out.f32("c");
    for i in 0..m {
        for j in 0..n {
            let exact: f64 = (0..k).map(|q| trunc(a[i * k + q]) * trunc(b[j * k + q])).sum();
            let mag: f64 = (0..k).map(|q| (trunc(a[i * k + q]) * trunc(b[j * k + q])).abs()).sum();
            let g = f64::from(got[i * n + j]);
            let tol = (k / 8 + 1) as f64 * mag / f64::from(1u32 << 23) + 1e-6;
            assert!(
                (g - exact).abs() <= tol,
                "{kernel}: C[{i}, {j}] ({m} x {n} x {k}, {blocks} blocks): got {g}, want {exact}"
            );
        }
    }
}

#[test]
fn k48_gemm_tf32_warp_specialised() {
    // Kernel 43's checks on kernel 38's structure: C = A B^T in tf32 with f32 accumulation,
    // 128 x 256 tiles, two consumer warpgroups and a producer, persistent blocks that take
    // tiles b, b + blocks, ... in the grouped order. One tile on one block; 256 x 512 x 68
    // (a ragged last K step) on two blocks for four tiles; 384 x 768 x 36 on four blocks
    // for nine tiles (blocks with two and three tiles); K = 200 on one block, seven steps
    // through the four slots; a 1152 x 512 x 4 grid of nine tile rows (a full group of
    // eight and a ragged one) on five blocks. An element stored twice by two consumers or
    // two blocks would be a race the simulator reports.
    let p = program(&file("48_gemm_tf32_warp_specialised.prism"));
    for (m, n, k, blocks) in [
        (128usize, 256usize, 32usize, 1u32),
        (256, 512, 68, 2),
        (384, 768, 36, 4),
        (128, 256, 200, 1),
        (1152, 512, 4, 5),
    ] {
        check_tf32_abt(&p, "gemm_tf32_ws", (m, n, k), (blocks, 384), 48);
    }
}

#[test]
fn k48_variants_a_gpu_sweep_builds() {
    // `-D LATE=True` (bench/gpu/variants.txt: `tf32gemm_ws_late`): kernel 38's late stages,
    // one step's group kept in flight. Tiles in sequence on one block with the ring
    // wrapping, and blocks of two and three tiles.
    let p = program_with(&file("48_gemm_tf32_warp_specialised.prism"), &["LATE=True"]);
    for (m, n, k, blocks) in [(128usize, 256usize, 200usize, 1u32), (384, 768, 36, 4)] {
        check_tf32_abt(&p, "gemm_tf32_ws", (m, n, k), (blocks, 384), 48);
    }
}

#[test]
fn k39_transpose_2d() {
    // 40 x 70 on a 3 x 2 grid of 32 x 8 blocks: every tile on the right and bottom edge is
    // partial. Other block shapes are refused at launch (`block=[32, 8]`; see
    // `prism_interp`'s launch tests).
    let (rows, cols) = (40, 70);
    let a = Rng::new(39).eighths(rows * cols, -8, 8);
    let p = program(&file("39_transpose_2d.prism"));
    let out = p.launch("transpose2d", (3, 2), (32, 8), || {
        vec![Arg::buffer(&a), Arg::buffer(&vec![0.0f32; rows * cols]), Arg::value(rows as i32), Arg::value(cols as i32)]
    });
    let mut want = vec![0.0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            want[c * rows + r] = a[r * cols + c];
        }
    }
    assert_same("dst", &out.f32("dst"), &want);
}

#[test]
fn k40_stencil_2d() {
    // 20 x 40 on a 3 x 2 grid of 16 x 16 blocks (the last block column and row are partial),
    // 33 x 17 on 2 x 3 (a single partial column) and 33 x 17 again on 1 x 5 blocks of 32 x 8
    // (warps that are whole block rows). Inputs are eighths: exact.
    let p = program(&file("40_stencil_2d.prism"));
    for (rows, cols, grid, block) in
        [(20usize, 40usize, (3u32, 2u32), (16u32, 16u32)), (33, 17, (2, 3), (16, 16)), (33, 17, (1, 5), (32, 8))]
    {
        let inp = Rng::new((rows * cols) as u64).eighths(rows * cols, -8, 8);
        let out = p.launch("stencil2d", grid, block, || {
            vec![
                Arg::buffer(&inp),
                Arg::buffer(&vec![0.0f32; rows * cols]),
                Arg::value(rows as i32),
                Arg::value(cols as i32),
            ]
        });
        let at = |r: i64, c: i64| {
            if (0..rows as i64).contains(&r) && (0..cols as i64).contains(&c) {
                inp[r as usize * cols + c as usize]
            } else {
                0.0
            }
        };
        let mut want = vec![0.0f32; rows * cols];
        for r in 0..rows as i64 {
            for c in 0..cols as i64 {
                want[r as usize * cols + c as usize] =
                    4.0 * at(r, c) - at(r - 1, c) - at(r + 1, c) - at(r, c - 1) - at(r, c + 1);
            }
        }
        assert_same("out", &out.f32("out"), &want);
    }
}

#[test]
fn k41_block_radix_sort_tiles() {
    // 1300 keys over the whole int range, with repeats (so stability shows in `origin`): two
    // whole tiles of 512 and a partial one whose fill must not be stored.
    let n = 1300;
    let mut rng = Rng::new(41);
    let keys: Vec<i32> =
        (0..n).map(|i| if i % 5 == 0 { rng.int(-3, 3) as i32 } else { rng.next_u64() as i32 }).collect();
    let p = program(&file("41_block_radix_sort_tiles.prism"));
    let out = p.launch("sort_tiles", 3, 128, || {
        vec![Arg::value(n), Arg::buffer(&keys), Arg::buffer(&vec![-7i32; 1536]), Arg::buffer(&vec![-7i32; 1536])]
    });
    let (mut sorted, mut origin) = (vec![-7i32; 1536], vec![-7i32; 1536]);
    for (b, tile) in keys.chunks(512).enumerate() {
        let mut order: Vec<usize> = (0..tile.len()).collect();
        order.sort_by_key(|&i| tile[i]);
        for (j, &i) in order.iter().enumerate() {
            sorted[b * 512 + j] = tile[i];
            origin[b * 512 + j] = i as i32;
        }
    }
    assert_same("sorted", &out.i32("sorted"), &sorted);
    assert_same("origin", &out.i32("origin"), &origin);
}

#[test]
fn k42_device_sum_and_max() {
    // Fewer blocks than tiles (blocks stride), a ragged end, and one item; the sums of
    // eighths are exact. Every schedule makes a different block the last, yet the result and
    // the counter's reset are the same.
    // The GPU sweep's variants (more items per thread) too.
    for defines in [&[][..], &["ITEMS=4"], &["ITEMS=8"]] {
        check_device_sum_and_max(&program_with(&file("42_device_sum_and_max.prism"), defines));
    }
}

fn check_device_sum_and_max(p: &Program) {
    for (n, grid, block) in [(5000usize, 4u32, 128u32), (777, 3, 64), (1, 2, 32)] {
        let x = Rng::new(42 + n as u64).eighths(n, -8, 8);
        let args = || {
            vec![
                Arg::value(n as i32),
                Arg::buffer(&x),
                Arg::buffer(&vec![0.0f32; grid as usize]),
                Arg::buffer(&[0i32]),
                Arg::buffer(&[3.0f32]),
            ]
        };
        let sum = p.launch("sum_all", grid, block, args);
        assert_same(&format!("total (n = {n})"), &sum.f32("total"), &[x.iter().sum::<f32>()]);
        assert_same("counter", &sum.i32("counter"), &[0]);
        let max = p.launch("max_all", grid, block, args);
        assert_same(&format!("biggest (n = {n})"), &max.f32("biggest"), &[x.iter().copied().fold(-1e30, f32::max)]);
        assert_same("counter", &max.i32("counter"), &[0]);
    }
}
