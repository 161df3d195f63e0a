//! A handful of rule-by-rule programs (`tests/ui/accept/rules/`) whose kernels compute
//! something meaningful, and the run-only programs of `tests/ui/run/`.

use crate::support::{Rng, assert_same, bf16_buffer, f16_buffer, program};
use prism_interp::Arg;
use prism_interp::Buffer;
use prism_types::ty::Scalar;

fn file(name: &str) -> String {
    format!("accept/rules/{name}")
}

#[test]
fn r_corner_block_reduction() {
    // out[b] = sum of vals[b * T .. (b + 1) * T] through warp sums staged in shared memory
    // (the barrier between the slot writes and the reads is inferred). 3 blocks of 128
    // threads, warps = 4.
    let vals = Rng::new(101).ints(384, -1000, 1000);
    let p = program(&file("corner_block_reduction.prism"));
    let out = p.launch("reduce_kernel", 3, 128, || vec![Arg::buffer(&vals), Arg::buffer(&[0i32; 3]), Arg::value(4i32)]);
    let want: Vec<i32> = vals.chunks(128).map(|c| c.iter().sum()).collect();
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn r_corner_nested_partitions() {
    // out[b * 128 + w * 32 + l] = l through grid -> block -> warp -> thread views. 2 blocks of
    // exactly 128 threads (the views assume 4 warps per block).
    let p = program(&file("corner_nested_partitions.prism"));
    let out = p.launch("nested", 2, 128, || vec![Arg::buffer(&[-1.0f32; 256])]);
    let want: Vec<f32> = (0..256).map(|g| (g % 32) as f32).collect();
    assert_same("out", &out.f32("out"), &want);
}

#[test]
fn r_corner_kernel_block_entry() {
    // A kernel entered at block[1], meant for one block: out[t] = src[(t + n) % 32] through a
    // shared tile. 1 block of 32 threads, n = 5.
    let src = Rng::new(102).eighths(32, -4, 4);
    let p = program(&file("corner_kernel_block_entry.prism"));
    let out = p.launch("per_block", 1, 32, || vec![Arg::buffer(&src), Arg::buffer(&[0.0f32; 32]), Arg::value(5i32)]);
    let want: Vec<f32> = (0..32).map(|t| src[(t + 5) % 32]).collect();
    assert_same("out", &out.f32("out"), &want);
}

#[test]
fn r_corner_split_single_case() {
    // Lane 0 of each block's first warp writes 1, then the first thread of every pair writes
    // 2; odd threads are masked off and keep the initial -1. 2 blocks of 128 threads.
    let p = program(&file("corner_split_single_case.prism"));
    let out = p.launch("leaders", 2, 128, || vec![Arg::buffer(&[-1i32; 256])]);
    let want: Vec<i32> = (0..256).map(|g| if g % 2 == 0 { 2 } else { -1 }).collect();
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn r_corner_local_array_ptr() {
    // Every warp loads src[lane * 4 .. + 3] into a local array through `warp_load`, and every
    // thread src[0..4] through `thread_load`: out[g] = src[(g % 32) * 4] + src[3]. 2 blocks
    // of 64 threads.
    let src = Rng::new(103).ints(128, -1000, 1000);
    let p = program(&file("corner_local_array_ptr.prism"));
    let out = p.launch("loads", 2, 64, || vec![Arg::buffer(&src), Arg::buffer(&[0i32; 128])]);
    let want: Vec<i32> = (0..128).map(|g| src[(g % 32) * 4] + src[3]).collect();
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn r_write_down() {
    // Thread t of a block (warp w, lane l) writes 2 * total + leader + first + vals[t], where
    // total = sum of vals[32w .. 32w + 31], leader = vals[32w] and first = vals[0]. 2 blocks
    // of 64 threads.
    let vals = Rng::new(104).ints(64, -1000, 1000);
    let p = program(&file("write-down.prism"));
    let out = p.launch("reductions", 2, 64, || vec![Arg::buffer(&vals), Arg::buffer(&[0i32; 128])]);
    let want: Vec<i32> = (0..128)
        .map(|g| {
            let t = g % 64;
            let w = t / 32 * 32;
            let total: i32 = vals[w..w + 32].iter().sum();
            2 * total + vals[w] + vals[0] + vals[t]
        })
        .collect();
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn r_store_perspective() {
    // out[g] = 2 * src[g] through a shared tile; every thread adds 1 to hist[t % 8]. 3 blocks
    // of exactly 32 threads (the tile has 32 slots).
    let src = Rng::new(105).eighths(96, -4, 4);
    let p = program(&file("store-perspective.prism"));
    let out = p.launch("fill", 3, 32, || vec![Arg::buffer(&src), Arg::buffer(&[0.0f32; 96]), Arg::buffer(&[0i32; 8])]);
    let want: Vec<f32> = src.iter().map(|v| v * 2.0).collect();
    assert_same("out", &out.f32("out"), &want);
    assert_same("hist", &out.i32("hist"), &[12; 8]);
}

#[test]
fn run_bits32() {
    // tests/ui/run/bits32.prism: the special floats (zeros of both signs, infinities, NaNs
    // with payloads and sign, subnormals) and negative ints, whose bits a conversion would
    // not keep.
    let n = 128;
    let mut rng = Rng::new(107);
    let specials = [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(0x7FC0_0001),
        f32::from_bits(0xFFA0_0000),
        1e-40,
        -1.5,
    ];
    let x: Vec<f32> =
        (0..n).map(|i| specials.get(i).copied().unwrap_or_else(|| rng.int(-1000, 1000) as f32 / 7.0)).collect();
    let y: Vec<i32> = (0..n)
        .map(|i| if i < 4 { [i32::MIN, -1, 0, i32::MAX][i] } else { rng.int(-100_000, 100_000) as i32 })
        .collect();
    let h: Vec<u16> =
        (0..n).map(|i| if i < 3 { [0x8000, 0xFC00, 0x7E01][i] } else { rng.int(0, 0xFFFF) as u16 }).collect();
    let b: Vec<u16> =
        (0..n).map(|i| if i < 3 { [0x8000, 0xFF80, 0x7FC1][i] } else { rng.int(0, 0xFFFF) as u16 }).collect();
    let p = program("run/bits32.prism");
    let out = p.launch("bits", 2, 64, || {
        vec![
            Arg::buffer(&x),
            Arg::buffer(&y),
            Arg::Buffer(Buffer::from_bits(Scalar::F16, &h.iter().map(|&v| u64::from(v)).collect::<Vec<_>>())),
            Arg::Buffer(Buffer::from_bits(Scalar::BF16, &b.iter().map(|&v| u64::from(v)).collect::<Vec<_>>())),
            Arg::buffer(&vec![0u32; 4 * n]),
        ]
    });
    let want: Vec<u32> = (0..n).flat_map(|i| [x[i].to_bits(), y[i] as u32, u32::from(h[i]), u32::from(b[i])]).collect();
    assert_same("out", &out.get::<u32>("out"), &want);
}

#[test]
fn run_warp_collectives() {
    // tests/ui/run/warp_collectives.prism: 2 blocks of 96 threads (6 warps). Warps cycle
    // through all-positive, none-positive and mixed values, so the votes take both values.
    let (blocks, threads) = (2, 96);
    let n = blocks * threads;
    let mut rng = Rng::new(106);
    let v: Vec<i32> = (0..n)
        .map(|g| match (g / 32) % 3 {
            0 => rng.int(1, 50),
            1 => rng.int(-30, 0),
            _ => rng.int(-50, 50),
        } as i32)
        .collect();
    let p = program("run/warp_collectives.prism");
    let out = p.launch("warp_collectives", blocks as u32, threads as u32, || {
        vec![Arg::buffer(&v), Arg::buffer(&vec![0i32; n * 16])]
    });
    let mut want = Vec::with_capacity(n * 16);
    for g in 0..n {
        let (l, w) = (g % 32, g - g % 32);
        let warp = &v[w..w + 32];
        let mask = (0..32).filter(|&i| warp[i] > 0).fold(0u32, |m, i| m | 1 << i);
        want.extend([
            warp[0],
            warp[(l + 3) % 32],
            if l >= 1 { v[g - 1] } else { v[g] },
            if l < 16 { v[g + 16] } else { v[g] },
            warp[l ^ 5],
            mask as i32,
            warp.iter().any(|&x| x > 0) as i32,
            warp.iter().all(|&x| x > -40) as i32,
            warp.iter().sum(),
            *warp.iter().min().unwrap(),
            *warp.iter().max().unwrap(),
            warp.iter().fold(-1, |a, x| a & x),
            warp.iter().fold(0, |a, x| a | x),
            warp.iter().fold(0, |a, x| a ^ x),
            mask.count_ones() as i32,
            if mask == 0 { 0 } else { mask.trailing_zeros() as i32 + 1 },
        ]);
    }
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn r_minmax_conversions() {
    // min/max of an int and a uint compute in uint whatever the operand order; int with
    // int64 computes in int64 (issue 7: the first operand used to decide the type). 2 blocks
    // of 32 threads, n = 64, with negative ints so that the conversion matters.
    let a = Rng::new(105).ints(64, -1000, 1000);
    let b: Vec<u32> = Rng::new(106).ints(64, 0, 2000).into_iter().map(|x| x as u32).collect();
    let p = program("accept/soundness/minmax_conversions.prism");
    let out = p.launch("minmax", 2, 32, || {
        vec![Arg::value(64i32), Arg::buffer(&a), Arg::buffer(&b), Arg::buffer(&[0u32; 256]), Arg::buffer(&[0i64; 64])]
    });
    let mut want = Vec::new();
    for i in 0..64 {
        let (x, y) = (a[i] as u32, b[i]);
        want.extend([x.min(y), x.min(y), x.max(y), x.max(y)]);
    }
    assert_same("out", &out.get::<u32>("out"), &want);
    let wide: Vec<i64> = a.iter().map(|&x| (x as i64).max(x as i64 * 3)).collect();
    assert_same("wide", &out.get::<i64>("wide"), &wide);
}

#[test]
fn r_atomic_phases() {
    // Shared-memory histogram counted with atomics in two phases and flushed with
    // atomic_exch: out[b * 64 + v] counts data items of block b equal to v and to v - 1
    // (mod 64). The barrier before the flush is inferred (issue 7: atomics are ordered
    // across phases). 3 blocks of 64 threads.
    let data = Rng::new(107).ints(768, 0, 1000);
    let p = program("accept/soundness/atomic_phases.prism");
    let out = p.launch("histogram64", 3, 64, || vec![Arg::buffer(&data), Arg::buffer(&[0i32; 192])]);
    let mut want = vec![0i32; 192];
    for (i, &x) in data.iter().enumerate() {
        let b = i / 256;
        want[b * 64 + (x % 64) as usize] += 1;
        want[b * 64 + ((x + 1) % 64) as usize] += 1;
    }
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn r_split_conflict_allowed() {
    // Branches of a split sharing memory safely: reads, commuting atomics, one per-thread
    // partition. 2 blocks of 64 threads.
    let p = program("accept/soundness/split_conflict.prism");
    let out = p.launch("shared_safely", 2, 64, || vec![Arg::buffer(&[7i32, 0, 0, 0]), Arg::buffer(&[0i32; 128])]);
    let want: Vec<i32> = (0..128)
        .map(|g| {
            let t = g % 64;
            2 * t + 7 + i32::from(t < 32) + 224
        })
        .collect();
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn r_block_group_barrier() {
    // Pairs of blocks exchange halves of a tile through global memory, ordered by an inferred
    // barrier over block[2] units that runs as a grid barrier (issue 7, hole 7). 4 blocks of
    // 32 threads.
    let p = program("accept/soundness/block_group_barrier.prism");
    let out = p.launch("swap_halves", 4, 32, || vec![Arg::buffer(&[0i32; 128]), Arg::buffer(&[0i32; 128])]);
    let tile: Vec<i32> = (0..128).map(|g| (g / 32 % 2) * 100 + g % 32).collect();
    let mirror: Vec<i32> = (0..128).map(|g| (1 - g / 32 % 2) * 100 + g % 32).collect();
    assert_same("tile", &out.i32("tile"), &tile);
    assert_same("mirror", &out.i32("mirror"), &mirror);
}

#[test]
fn r_async_copies() {
    // A copy through shared memory with asynchronous copies whose destinations are proven
    // disjoint (issue 7, hole 5). 2 blocks of 32 threads, 260 floats each.
    let src = Rng::new(108).eighths(520, -4, 4);
    let p = program("accept/soundness/async_copies.prism");
    let out = p.launch("stage_copy", 2, 32, || vec![Arg::buffer(&src), Arg::buffer(&[0.0f32; 520])]);
    assert_same("out", &out.f32("out"), &src);
}

#[test]
fn r_shuffle_offsets() {
    // Shuffle offsets beyond 0..31 use their low five bits, as shfl.sync does (issue 7).
    // 2 blocks of 64 threads.
    let p = program("accept/soundness/shuffle_offsets.prism");
    let out = p.launch("odd_offsets", 2, 64, || vec![Arg::buffer(&[0i32; 512])]);
    let mut want = Vec::new();
    for g in 0..128i32 {
        let (w, l) = (g / 32, g % 32);
        let v = |lane: i32| 100 * w + lane;
        want.push(if l + 1 < 32 { v(l + 1) } else { v(l) });
        want.push(if l >= 31 { v(l - 31) } else { v(l) });
        want.push(v(l ^ 3));
        want.push(v(8));
    }
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn r_search_tree_reduction() {
    // The soundness search's tree reduction: out[b * 64 + t] = the sum of the first 64 of
    // the block's 128 inputs (the loop starts at stride 32 over 64 slots) plus nothing else:
    // slot 0 ends with inputs 0..64 summed. 2 blocks of 64 threads.
    let inp = Rng::new(109).ints(4096, -1000, 1000);
    let p = program("accept/soundness/search_tree_reduction.prism");
    let out = p.launch("tree", 2, 64, || vec![Arg::buffer(&inp), Arg::buffer(&[0i32; 128]), Arg::value(4096i32)]);
    let want: Vec<i32> = (0..128).map(|g| inp[(g / 64) * 128..(g / 64) * 128 + 64].iter().sum()).collect();
    assert_same("out", &out.i32("out"), &want);
}

/// The bits of the `half` holding the integer `k` (exact up to 2048).
fn half_bits(k: u32) -> u64 {
    if k == 0 {
        return 0;
    }
    let e = 31 - k.leading_zeros();
    let mantissa = (k - (1 << e)) << (10 - e);
    u64::from(((e + 15) << 10) | mantissa)
}

#[test]
fn r_vector_access() {
    let p = program(&file("vector_access.prism"));
    // scale4: y = 2x, four floats per thread; 3 blocks of 32 threads.
    let x = Rng::new(105).eighths(384, -100, 100);
    let out = p.launch("scale4", 3, 32, || vec![Arg::buffer(&x), Arg::buffer(&[0.0f32; 384])]);
    let want: Vec<f32> = x.iter().map(|v| 2.0 * v).collect();
    assert_same("y", &out.f32("y"), &want);
    // rotate: y[256b + 4t + k] = x[256b + 4((t + 1) % 64) + k]; 2 blocks of 64 threads.
    let x = Rng::new(106).eighths(512, -100, 100);
    let out = p.launch("rotate", 2, 64, || vec![Arg::buffer(&x), Arg::buffer(&[0.0f32; 512])]);
    let want: Vec<f32> = (0..512)
        .map(|g| {
            let (b, t, k) = (g / 256, g % 256 / 4, g % 4);
            x[256 * b + 4 * ((t + 1) % 64) + k]
        })
        .collect();
    assert_same("y", &out.f32("y"), &want);
    // mixed: halves + 1, doubles * 2, int pairs swapped and negated; 2 blocks of 32 threads.
    let h: Vec<u32> = Rng::new(107).ints(512, 0, 1000).into_iter().map(|v| v as u32).collect();
    let hbits: Vec<u64> = h.iter().map(|&k| half_bits(k)).collect();
    let d: Vec<f64> = Rng::new(108).eighths(128, -100, 100).into_iter().map(f64::from).collect();
    let n = Rng::new(109).ints(128, -1000, 1000);
    let out = p.launch("mixed", 2, 32, || {
        vec![
            Arg::Buffer(prism_interp::Buffer::from_bits(prism_types::ty::Scalar::F16, &hbits)),
            Arg::buffer(&d),
            Arg::buffer(&n),
        ]
    });
    let want: Vec<u64> = h.iter().map(|&k| half_bits(k + 1)).collect();
    assert_same("h", &out.bits("h"), &want);
    let want: Vec<f64> = d.iter().map(|v| 2.0 * v).collect();
    assert_same("d", &out.get::<f64>("d"), &want);
    let want: Vec<i32> = (0..128).map(|g| -n[g ^ 1]).collect();
    assert_same("n", &out.i32("n"), &want);
    // striped: views of two indices offset in the last. Element 4(t + 32q) + e of block b's
    // 384 is y = 2x + q; z holds what thread (t + 1) % 32 staged; 3 blocks of 32 threads.
    let x = Rng::new(110).eighths(1152, -100, 100);
    let out = p
        .launch("striped", 3, 32, || vec![Arg::buffer(&x), Arg::buffer(&[0.0f32; 1152]), Arg::buffer(&[0.0f32; 1152])]);
    let at = |b: usize, t: usize, q: usize, e: usize| 384 * b + 4 * (t + 32 * q) + e;
    let mut want_y = vec![0.0f32; 1152];
    let mut want_z = vec![0.0f32; 1152];
    for b in 0..3 {
        for t in 0..32 {
            for q in 0..3 {
                for e in 0..4 {
                    want_y[at(b, t, q, e)] = 2.0 * x[at(b, t, q, e)] + q as f32;
                    want_z[at(b, t, q, e)] = 2.0 * x[at(b, (t + 1) % 32, q, e)] + q as f32;
                }
            }
        }
    }
    assert_same("y", &out.f32("y"), &want_y);
    assert_same("z", &out.f32("z"), &want_z);
}

#[test]
fn r_async_pipeline() {
    // y[32b + t] = sum over slots s and k < 4 of x[384b + 128s + (4t + 4 + 33k) % 128], with
    // three commit groups in flight; 3 blocks of 32 threads.
    let x = Rng::new(110).eighths(1152, -50, 50);
    let p = program(&file("async_pipeline.prism"));
    let out = p.launch("pipeline3", 3, 32, || vec![Arg::buffer(&x), Arg::buffer(&[0.0f32; 96])]);
    let want: Vec<f32> = (0..96)
        .map(|g| {
            let (b, t) = (g / 32, g % 32);
            let mut acc = 0.0f32;
            for s in 0..3 {
                for k in 0..4 {
                    acc += x[384 * b + 128 * s + (4 * t + 4 + 33 * k) % 128];
                }
            }
            acc
        })
        .collect();
    assert_same("y", &out.f32("y"), &want);
}

#[test]
fn r_ldmatrix() {
    // Each lane's fragments are the mma.m16n8k16 A and B operands, written here from the PTX
    // ISA's fragment figures (not from the simulator's ldmatrix): lane l = 4g + t holds
    // A[g][2t], A[g][2t+1], A[g+8][2t], A[g+8][2t+1], A[g][2t+8], A[g][2t+9], A[g+8][2t+8],
    // A[g+8][2t+9] and B[2t][g], B[2t+1][g], B[2t+8][g], B[2t+9][g]. Inputs are distinct
    // bf16-exact values, so a misplaced element shows.
    let a: Vec<f32> = (0..256).map(|i| (i as f32) - 100.0).collect();
    let b: Vec<f32> = (0..128).map(|i| 2.0 * i as f32 + 1.0).collect();
    let p = program(&file("ldmatrix.prism"));
    let out = p.launch("fragments", 1, 32, || {
        vec![bf16_buffer(&a), bf16_buffer(&b), Arg::buffer(&[0.0f32; 256]), Arg::buffer(&[0.0f32; 128])]
    });
    let at = |r: usize, c: usize| a[16 * r + c];
    let bt = |k: usize, n: usize| b[8 * k + n];
    let mut want_a = Vec::new();
    let mut want_b = Vec::new();
    for l in 0..32 {
        let (g, t) = (l / 4, l % 4);
        want_a.extend([
            at(g, 2 * t),
            at(g, 2 * t + 1),
            at(g + 8, 2 * t),
            at(g + 8, 2 * t + 1),
            at(g, 2 * t + 8),
            at(g, 2 * t + 9),
            at(g + 8, 2 * t + 8),
            at(g + 8, 2 * t + 9),
        ]);
        want_b.extend([bt(2 * t, g), bt(2 * t + 1, g), bt(2 * t + 8, g), bt(2 * t + 9, g)]);
    }
    assert_same("out_a", &out.f32("out_a"), &want_a);
    assert_same("out_b", &out.f32("out_b"), &want_b);
}

#[test]
fn r_ldmatrix_x4_trans() {
    // `.x4.trans` gives the B operands of two mma.m16n8k16 side by side, written here from
    // the PTX ISA's fragment figures (not from the simulator's ldmatrix): lane l = 4g + t
    // holds B[2t][g], B[2t+1][g], B[2t+8][g], B[2t+9][g] of columns 0-7, then the same of
    // columns 8-15, in bf16 and in half. Distinct values exact in both types (integers below
    // 2^8), so a misplaced element or a swapped pair of matrices shows.
    let b: Vec<f32> = (0..256).map(|i| (i as f32) - 128.0).collect();
    let p = program(&file("ldmatrix_x4_trans.prism"));
    let out = p.launch("fragments", 1, 32, || {
        vec![bf16_buffer(&b), f16_buffer(&b), Arg::buffer(&[0.0f32; 256]), Arg::buffer(&[0.0f32; 256])]
    });
    let bt = |k: usize, n: usize| b[16 * k + n];
    let mut want = Vec::new();
    for l in 0..32 {
        let (g, t) = (l / 4, l % 4);
        for n in [g, g + 8] {
            want.extend([bt(2 * t, n), bt(2 * t + 1, n), bt(2 * t + 8, n), bt(2 * t + 9, n)]);
        }
    }
    assert_same("out_b", &out.f32("out_b"), &want);
    assert_same("out_h", &out.f32("out_h"), &want);
}

#[test]
fn r_ldmatrix_tf32() {
    // Each lane's fragments are the mma.m16n8k8 tf32 A and B operands, written here from the
    // PTX ISA's fragment figures (not from the simulator's ldmatrix): lane l = 4g + q holds
    // A[g][q], A[g+8][q], A[g][q+4], A[g+8][q+4] of the row-major 16x8 tile A and B[q][g],
    // B[q+4][g] of the 8x8 tile B (K x N), which the kernel stages N x K (`b[8n + k]`).
    // The inputs are random floats with full mantissas: ldmatrix moves bits, so they must
    // arrive exactly, and a misplaced element or a swapped 16-bit half shows.
    let mut rng = Rng::new(4532);
    let a = rng.uniform(128, -1.0, 1.0);
    let b = rng.uniform(64, -1.0, 1.0);
    let p = program(&file("ldmatrix_tf32.prism"));
    let out = p.launch("fragments_tf32", 1, 32, || {
        vec![Arg::buffer(&a), Arg::buffer(&b), Arg::buffer(&[0.0f32; 128]), Arg::buffer(&[0.0f32; 64])]
    });
    let at = |r: usize, c: usize| a[8 * r + c];
    let bt = |k: usize, n: usize| b[8 * n + k];
    let mut want_a = Vec::new();
    let mut want_b = Vec::new();
    for l in 0..32 {
        let (g, q) = (l / 4, l % 4);
        want_a.extend([at(g, q), at(g + 8, q), at(g, q + 4), at(g + 8, q + 4)]);
        want_b.extend([bt(q, g), bt(q + 4, g)]);
    }
    assert_same("out_a", &out.f32("out_a"), &want_a);
    assert_same("out_b", &out.f32("out_b"), &want_b);
}

/// Two random 64 x 32 and 32 x 32 bf16 matrices (as `f32`s) from `seed`, for the wgmma
/// tile products.
fn bf16_tile_inputs(seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng::new(seed);
    let a: Vec<f32> = rng.uniform(64 * 32, -1.0, 1.0).into_iter().map(crate::support::to_bf16).collect();
    let b: Vec<f32> = rng.uniform(32 * 32, -1.0, 1.0).into_iter().map(crate::support::to_bf16).collect();
    (a, b)
}

/// `got` (64 x 32) is A x B within the wgmma tile products' tolerance: every product is
/// exact and each k16 step rounds once, so 1e-6 * sum |a * b| + 1e-6 of the exact sum.
fn assert_tile_product(a: &[f32], b: &[f32], got: &[f32]) {
    for m in 0..64 {
        for n in 0..32 {
            let exact: f64 = (0..32).map(|k| f64::from(a[m * 32 + k]) * f64::from(b[k * 32 + n])).sum();
            let mag: f64 = (0..32).map(|k| (f64::from(a[m * 32 + k]) * f64::from(b[k * 32 + n])).abs()).sum();
            let g = f64::from(got[m * 32 + n]);
            assert!((g - exact).abs() <= 1e-6 * mag + 1e-6, "C[{m}, {n}]: got {g}, want {exact}");
        }
    }
}

#[test]
fn r_wgmma_bf16_tile() {
    // C = A x B, 64 x 32 x 32, against a plain product. The kernel stages A and B in the
    // canonical K-major layout and reads C back through the D fragment layout (both written
    // in it from the PTX ISA and CUTLASS's CLayout_64xN); the simulator's wgmma reads the
    // same layout. A misplaced element, row or column shows: the inputs are random bf16
    // values in [-1, 1), every product is exact and each k16 step rounds once, so the result
    // is within 1e-6 of the exact sum (tolerance: 1e-6 * sum |a * b| + 1e-6).
    let (a, b) = bf16_tile_inputs(90);
    let p = program(&file("wgmma_bf16_tile.prism"));
    let out =
        p.launch("wgmma_tile", 1, 128, || vec![bf16_buffer(&a), bf16_buffer(&b), Arg::buffer(&[0.0f32; 64 * 32])]);
    assert_tile_product(&a, &b, &out.f32("c"));
}

#[test]
fn r_shared_params() {
    // `r_wgmma_bf16_tile`'s product with the wgmma in a device function that takes the tiles
    // as `ptr(const(bf16), shared)` and passes them on to another, from static shared arrays
    // (`wgmma_helper`) and from the dynamic shared array (`dyn_helper`): the same result,
    // bit for bit, as the kernel that issues the wgmma itself, and within the tolerance of
    // the exact product.
    let (a, b) = bf16_tile_inputs(91);
    let args = || vec![bf16_buffer(&a), bf16_buffer(&b), Arg::buffer(&[0.0f32; 64 * 32])];
    let want = program(&file("wgmma_bf16_tile.prism")).launch("wgmma_tile", 1, 128, args).f32("c");
    assert_tile_product(&a, &b, &want);
    let p = program(&file("shared_params.prism"));
    assert_same("c (wgmma_helper)", &p.launch("wgmma_helper", 1, 128, args).f32("c"), &want);
    let with_n = || {
        let mut v = args();
        v.push(Arg::value(1024i32));
        v
    };
    assert_same("c (dyn_helper)", &p.launch("dyn_helper", 1, 128, with_n).f32("c"), &want);
}

#[test]
fn r_elect_sync() {
    // One lane of every warp is elected: 3 blocks of 4 warps count 12, under every schedule.
    let p = program(&file("elect_sync.prism"));
    let out = p.launch("count_warps", 3, 128, || vec![Arg::buffer(&[0i32])]);
    assert_same("count", &out.i32("count"), &[12]);
}

#[test]
fn r_cp_async_zfill() {
    // The chunks past `n` read nothing and land as zeros; the one that straddles `n` reads
    // its first elements only. Sizes: a ragged end in the last block, an exact end, and
    // nothing to read at all.
    let p = program(&file("cp_async_zfill.prism"));
    for (blocks, n) in [(3usize, 70usize), (2, 64), (2, 0), (1, 3)] {
        let x = Rng::new(n as u64 + 11).eighths(n.max(1), -4, 4);
        let out = p.launch("tail", blocks as u32, 8, || {
            vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&vec![7.0f32; 32 * blocks])]
        });
        let s = |b: usize, i: usize| if 32 * b + i < n { x[32 * b + i] } else { 0.0 };
        let want: Vec<f32> = (0..32 * blocks).map(|g| s(g / 32, 31 - g % 32) + s(g / 32, g % 32)).collect();
        assert_same(&format!("y (n = {n}, {blocks} blocks)"), &out.f32("y"), &want);
    }
}

#[test]
fn r_pipeline_ring() {
    // y[128b + t] = sum over k < n of x[(b n + k) 128 + 127 - t] * w[(b n + k) 4 + t % 4], for
    // rings of 2 and 4 slots, with more tiles than slots, one tile, and none (y untouched
    // but for the zero sum). Inputs are eighths, so the sums are exact in any order.
    let p = program(&file("pipeline_ring.prism"));
    for (kernel, blocks, n) in
        [("ring2", 2usize, 5usize), ("ring2", 1, 1), ("ring2", 1, 0), ("ring4", 2, 7), ("ring4", 3, 2)]
    {
        let mut rng = Rng::new((blocks * 100 + n) as u64);
        let x = rng.eighths((128 * n * blocks).max(4), -4, 4);
        let w = rng.eighths((4 * n * blocks).max(4), -4, 4);
        let out = p.launch(kernel, blocks as u32, 128, || {
            vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&w), Arg::buffer(&vec![7.0f32; 128 * blocks])]
        });
        let want: Vec<f32> = (0..128 * blocks)
            .map(|g| {
                let (b, t) = (g / 128, g % 128);
                (0..n).map(|k| x[(b * n + k) * 128 + 127 - t] * w[(b * n + k) * 4 + t % 4]).sum()
            })
            .collect();
        assert_same(&format!("{kernel} y (n = {n}, {blocks} blocks)"), &out.f32("y"), &want);
    }
}

#[test]
fn r_pipeline_next() {
    // Bodies that turn at `stage(ring, next=True)`: each tile's first operand comes from the
    // iteration before (or, for tile 0, from the tile itself), and the next tile's scale is
    // added after the turn, the last tile's again on the last tile (the next stage is then
    // the last tile's slot). z keeps the last operand loaded: the last tile's. Rings of 2
    // and 3 slots, with more tiles than slots, as many, fewer, one and none. Inputs are
    // eighths, so the sums are exact in any order (every sum here stays below 2^10).
    let p = program(&file("pipeline_next.prism"));
    for (kernel, blocks, n) in [
        ("next2", 2usize, 5usize),
        ("next2", 1, 2),
        ("next2", 1, 1),
        ("next2", 1, 0),
        ("next3", 2, 7),
        ("next3", 1, 3),
        ("next3", 3, 2),
        ("next3", 1, 1),
        ("next3", 2, 0),
    ] {
        let mut rng = Rng::new((blocks * 100 + n + 50) as u64);
        let x = rng.eighths((128 * n * blocks).max(4), -4, 4);
        let w = rng.eighths((4 * n * blocks).max(4), -4, 4);
        let out = p.launch(kernel, blocks as u32, 128, || {
            vec![
                Arg::value(n as i32),
                Arg::buffer(&x),
                Arg::buffer(&w),
                Arg::buffer(&vec![7.0f32; 128 * blocks]),
                Arg::buffer(&vec![7.0f32; 128 * blocks]),
            ]
        });
        let tile = |b: usize, k: usize, e: usize| x[(b * n + k) * 128 + e];
        let (mut y, mut z) = (Vec::new(), Vec::new());
        for g in 0..128 * blocks {
            let (b, t) = (g / 128, g % 128);
            let mut acc = 0.0f32;
            for k in 0..n {
                acc += tile(b, k, (t + 1) % 128) * tile(b, k, 127 - t);
                acc += w[(b * n + (k + 1).min(n - 1)) * 4 + t % 4];
            }
            y.push(acc);
            z.push(if n == 0 { 0.0 } else { tile(b, n - 1, (t + 1) % 128) });
        }
        assert_same(&format!("{kernel} y (n = {n}, {blocks} blocks)"), &out.f32("y"), &y);
        assert_same(&format!("{kernel} z (n = {n}, {blocks} blocks)"), &out.f32("z"), &z);
    }
    // Nested turning pipelines: the inner one reads its own next tile and the outer one's.
    // Outer tiles of 2 slots, inner of 3: none, one of each, fewer inner tiles than slots,
    // and more of both than slots.
    for (blocks, n, m) in [(1usize, 0usize, 2usize), (1, 1, 1), (2, 3, 2), (2, 4, 5), (1, 2, 0)] {
        let mut rng = Rng::new((blocks * 1000 + n * 10 + m) as u64);
        let x = rng.eighths((128 * n * blocks).max(4), -4, 4);
        let w = rng.eighths((128 * n * m * blocks).max(4), -4, 4);
        let out = p.launch("nested", blocks as u32, 128, || {
            vec![
                Arg::value(n as i32),
                Arg::value(m as i32),
                Arg::buffer(&x),
                Arg::buffer(&w),
                Arg::buffer(&vec![7.0f32; 128 * blocks]),
                Arg::buffer(&vec![7.0f32; 128 * blocks]),
            ]
        });
        let (mut y, mut z) = (Vec::new(), Vec::new());
        for g in 0..128 * blocks {
            let (b, t) = (g / 128, g % 128);
            let xk = |k: usize, e: usize| x[(b * n + k) * 128 + e];
            let wq = |k: usize, q: usize, e: usize| w[((b * n + k) * m + q) * 128 + e];
            let mut acc = 0.0f32;
            for k in 0..n {
                acc += xk(k, 127 - t);
                for q in 0..m {
                    acc += wq(k, q, (t + 3) % 128);
                    acc += wq(k, (q + 1).min(m - 1), t);
                    acc += xk((k + 1).min(n - 1), (t + 5) % 128);
                }
            }
            y.push(acc);
            z.push(if n == 0 { 0.0 } else { xk(n - 1, (t + 1) % 128) });
        }
        assert_same(&format!("nested y (n = {n}, m = {m}, {blocks} blocks)"), &out.f32("y"), &y);
        assert_same(&format!("nested z (n = {n}, m = {m}, {blocks} blocks)"), &out.f32("z"), &z);
    }
}

/// A tensor-map argument: the row-major array `values` with dimensions `dims`, outermost
/// first.
fn tensor<T: prism_interp::Elem>(values: &[T], dims: &[u64]) -> Arg {
    Arg::Tensor { buffer: prism_interp::Buffer::from_slice(values), dims: dims.to_vec() }
}

#[test]
fn r_tma_store_grid_reload() {
    // Block k stores box k of `b` with TMA, then after the inferred grid barrier loads the box
    // block (k + 1) % g stored (review R42: the CUDA now fences global memory for the async
    // proxy around the barrier). Two and four blocks.
    let p = program(&file("tma_store_grid_reload.prism"));
    for g in [2usize, 4] {
        let a = Rng::new(g as u64 + 4200).eighths(512 * g, -8, 8);
        let out = p.launch("rt", g as u32, 32, || {
            vec![
                tensor(&a, &[16 * g as u64, 32]),
                tensor(&vec![0.0f32; 512 * g], &[16 * g as u64, 32]),
                Arg::buffer(&vec![0.0f32; 512 * g]),
                Arg::value(g as i32),
            ]
        });
        let want: Vec<f32> = (0..512 * g).map(|e| a[512 * ((e / 512 + 1) % g) + e % 512]).collect();
        assert_same(&format!("out ({g} blocks)"), &out.f32("out"), &want);
    }
}

#[test]
fn r_cast_index_fn() {
    // Tree reductions through index functions written with conversions (review R43: the
    // barrier between passes was not inferred, and the passes raced).
    let p = program("accept/soundness/cast_index_fn.prism");
    let x = Rng::new(4343).ints(192, -1000, 1000);
    for kernel in ["through_cast", "through_cast64"] {
        let out = p.launch(kernel, 3, 64, || vec![Arg::buffer(&x), Arg::buffer(&[0i32; 3])]);
        let want: Vec<i32> = (0..3).map(|b| x[64 * b..64 * b + 64].iter().sum()).collect();
        assert_eq!(out.i32("out"), want, "{kernel}");
    }
}

#[test]
fn r_spelled_index_fn() {
    // Tree reductions through index functions equal to `t + i` (or `t ^ i`) but spelled so
    // that the affine forms did not follow them (review R45: no barrier between passes, and
    // the passes raced). Every seeded schedule gives the sums.
    let p = program("accept/soundness/spelled_index_fn.prism");
    let x = Rng::new(4545).ints(192, -1000, 1000);
    let want: Vec<i32> = (0..3).map(|b| x[64 * b..64 * b + 64].iter().sum()).collect();
    for kernel in [
        "neg_inside",
        "neg_down",
        "neg_t",
        "masked_t",
        "rem_t",
        "masked_i",
        "rem_i",
        "div_i",
        "xor_i",
        "min_t",
        "select_t",
    ] {
        let out = p.launch(kernel, 3, 64, || vec![Arg::buffer(&x), Arg::buffer(&[0i32; 3])]);
        assert_eq!(out.i32("out"), want, "{kernel}");
    }
    // `two_ids` reads the block's index as `g - 64 b`, which needs blocks of exactly 64.
    let out = p.launch("two_ids", 3, 64, || vec![Arg::buffer(&x), Arg::buffer(&[0i32; 3])]);
    assert_eq!(out.i32("out"), want, "two_ids");
}

#[test]
fn r_tma_box2d() {
    // Block b copies the 16 x 32 box at row y0 + 16 (b / 3), column x0 + 32 (b % 3) of a
    // 40 x 96 array: corners before the array (x0 = -8, y0 = -4) and boxes reaching past
    // its last row read zeros there. Then an exactly covering launch (x0 = y0 = 0 over a
    // 32 x 96 array: every element once), and a box wholly outside the array (all zeros).
    let p = program(&file("tma_tensor_map.prism"));
    for (rows, x0, y0, blocks) in [(40usize, -8i32, -4i32, 9u32), (32, 0, 0, 6), (40, 200, 0, 3)] {
        let a = Rng::new(rows as u64 + 7).eighths(rows * 96, -4, 4);
        let out = p.launch("box2d", blocks, 32, || {
            vec![
                tensor(&a, &[rows as u64, 96]),
                Arg::value(x0),
                Arg::value(y0),
                Arg::value(3i32),
                Arg::buffer(&vec![f32::NAN; 512 * blocks as usize]),
            ]
        });
        let want: Vec<f32> = (0..512 * blocks as usize)
            .map(|g| {
                let (b, r, c) = (g / 512, g % 512 / 32, g % 32);
                let y = y0 as i64 + 16 * (b as i64 / 3) + r as i64;
                let x = x0 as i64 + 32 * (b as i64 % 3) + c as i64;
                if (0..rows as i64).contains(&y) && (0..96).contains(&x) {
                    a[y as usize * 96 + x as usize]
                } else {
                    0.0
                }
            })
            .collect();
        assert_same(&format!("out ({rows} rows, corner {x0}, {y0})"), &out.f32("out"), &want);
    }
}

/// Where a TMA copy with a `span`-byte swizzle puts byte `offset` of its dense box, written
/// from the PTX ISA's description of the modes rather than from the simulator's bit masks:
/// shared memory is seen as lines of 128 bytes holding eight 16-byte chunks, and within
/// each line the chunk index is XORed with the line's index modulo the number of chunks a
/// span holds (2, 4 or 8), so a pattern repeats every 2, 4 or 8 lines.
fn swizzled_at(offset: usize, span: usize) -> usize {
    let chunks = span / 16;
    let (line, chunk, byte) = (offset / 128, offset % 128 / 16, offset % 16);
    let moved = chunk ^ (line % chunks);
    line * 128 + moved * 16 + byte
}

#[test]
fn r_tma_swizzle() {
    // Three boxes with the 128-, 64- and 32-byte swizzles, each written out as shared memory
    // holds it. Element e of a box (row-major) lands at element swizzled_at(2e, span) / 2;
    // the inputs are distinct bf16 bit patterns, so a misplaced chunk shows.
    let p = program(&file("tma_tensor_map.prism"));
    let pattern = |n: usize, base: u64| -> Vec<u64> { (0..n as u64).map(|i| base + i).collect() };
    let (s128, s64, s32) = (pattern(512, 0x3c00), pattern(512, 0x4400), pattern(256, 0x4c00));
    let bf16 = |bits: &[u64], dims: &[u64]| Arg::Tensor {
        buffer: prism_interp::Buffer::from_bits(prism_types::ty::Scalar::BF16, bits),
        dims: dims.to_vec(),
    };
    let out = p.launch("swizzled", 1, 32, || {
        vec![
            bf16(&s128, &[8, 64]),
            bf16(&s64, &[16, 32]),
            bf16(&s32, &[16, 16]),
            Arg::Buffer(prism_interp::Buffer::from_bits(prism_types::ty::Scalar::BF16, &[0; 1280])),
        ]
    });
    let place = |src: &[u64], span: usize| {
        let mut smem = vec![0u64; src.len()];
        for (e, v) in src.iter().enumerate() {
            smem[swizzled_at(2 * e, span) / 2] = *v;
        }
        smem
    };
    let (t128, t64, t32) = (place(&s128, 128), place(&s64, 64), place(&s32, 32));
    // Thread t wrote 16 elements of each big tile and 8 of the small one, 40 in all.
    let mut want = Vec::new();
    for t in 0..32 {
        want.extend_from_slice(&t128[16 * t..16 * t + 16]);
        want.extend_from_slice(&t64[16 * t..16 * t + 16]);
        want.extend_from_slice(&t32[8 * t..8 * t + 8]);
    }
    assert_same("out (raw swizzled tiles)", &out.bits("out"), &want);
    // The reference is not the identity: the 128-byte mode moves chunk 0 of line 1.
    assert_eq!(swizzled_at(128, 128), 144);
}

#[test]
fn r_tma_box3d() {
    // One 2 x 4 x 8 box of a 3 x 5 x 8 int array at (x, y, z) = (0, 2, 1): the rows past the
    // fifth and the planes past the third read zeros. Then a corner before the array.
    let p = program(&file("tma_tensor_map.prism"));
    let a = Rng::new(33).ints(3 * 5 * 8, -100, 100);
    for (x0, y0, z0) in [(0i32, 2i32, 1i32), (-3, -1, -1), (0, 0, 0)] {
        let out = p.launch("box3d", 1, 32, || {
            vec![tensor(&a, &[3, 5, 8]), Arg::value(x0), Arg::value(y0), Arg::value(z0), Arg::buffer(&[7i32; 64])]
        });
        let want: Vec<i32> = (0..64)
            .map(|g| {
                let (z, y, x) = (z0 + g / 32, y0 + g % 32 / 8, x0 + g % 8);
                if (0..3).contains(&z) && (0..5).contains(&y) && (0..8).contains(&x) {
                    a[(z * 40 + y * 8 + x) as usize]
                } else {
                    0
                }
            })
            .collect();
        assert_same(&format!("out (corner {x0}, {y0}, {z0})"), &out.i32("out"), &want);
    }
}

#[test]
fn r_wgmma_swizzled() {
    // C = A B^T (A 64 x 64, B N x 64, K-major both) from tiles TMA swizzled over 128, 64 and
    // 32 bytes, against a plain product. TMA writes the swizzled layout (checked on its own
    // against the PTX ISA's description in `r_tma_swizzle`) and the swizzled wgmma reads it
    // back: a wrong row pitch, group stride, start step or swizzle in either shows as wrong
    // products. Tolerance as in `r_wgmma_bf16_tile`: each k16 step rounds once.
    let p = program(&file("wgmma_swizzled.prism"));
    for (kernel, n) in [("sw128", 64usize), ("sw64", 32), ("sw32", 16)] {
        let mut rng = Rng::new(n as u64 + 500);
        let a: Vec<f32> = rng.uniform(64 * 64, -1.0, 1.0).into_iter().map(crate::support::to_bf16).collect();
        let b: Vec<f32> = rng.uniform(n * 64, -1.0, 1.0).into_iter().map(crate::support::to_bf16).collect();
        let bf16_tensor = |v: &[f32], rows: u64| {
            let Arg::Buffer(buffer) = bf16_buffer(v) else { unreachable!("bf16_buffer makes a buffer") };
            Arg::Tensor { buffer, dims: vec![rows, 64] }
        };
        let out = p.launch(kernel, 1, 128, || {
            vec![bf16_tensor(&a, 64), bf16_tensor(&b, n as u64), Arg::buffer(&vec![0.0f32; 64 * n])]
        });
        let got = out.f32("c");
        for m in 0..64 {
            for j in 0..n {
                let exact: f64 = (0..64).map(|k| f64::from(a[m * 64 + k]) * f64::from(b[j * 64 + k])).sum();
                let mag: f64 = (0..64).map(|k| (f64::from(a[m * 64 + k]) * f64::from(b[j * 64 + k])).abs()).sum();
                let g = f64::from(got[m * n + j]);
                assert!((g - exact).abs() <= 1e-6 * mag + 1e-6, "{kernel}: C[{m}, {j}]: got {g}, want {exact}");
            }
        }
    }
    // f16 tiles (`wgmma_f16_sw`): values that f16 holds exactly (multiples of 1/64 in [-1, 1)).
    let mut rng = Rng::new(516);
    let a: Vec<f32> = rng.ints(64 * 64, -64, 64).into_iter().map(|x| x as f32 / 64.0).collect();
    let b: Vec<f32> = rng.ints(64 * 64, -64, 64).into_iter().map(|x| x as f32 / 64.0).collect();
    let f16_tensor = |v: &[f32]| {
        let bits: Vec<u64> =
            v.iter().map(|&x| prism_interp::value::from_f64(prism_types::ty::Scalar::F16, f64::from(x))).collect();
        Arg::Tensor { buffer: prism_interp::Buffer::from_bits(prism_types::ty::Scalar::F16, &bits), dims: vec![64, 64] }
    };
    let out =
        p.launch("sw128_f16", 1, 128, || vec![f16_tensor(&a), f16_tensor(&b), Arg::buffer(&vec![0.0f32; 64 * 64])]);
    let want: Vec<f32> = (0..64 * 64).map(|g| (0..64).map(|k| a[g / 64 * 64 + k] * b[g % 64 * 64 + k]).sum()).collect();
    assert_same("sw128_f16: C", &out.f32("c"), &want);
}

/// Byte offset of element (row, k), k < 8, of one k8 slice of a K-major tf32 operand in the
/// canonical layout without swizzling, from the PTX ISA's shared-memory matrix layout
/// figures for wgmma: the slice is made of core matrices of 8 rows of 16 bytes (4 tf32
/// elements), each stored as 128 contiguous bytes, row after row; the two core matrices
/// along K are the leading byte offset (128) apart, those along M or N the stride byte
/// offset (256) apart. (The same bytes as bf16's k16 slice: the layouts are in bytes.)
fn tf32_canonical_at(row: usize, k: usize) -> usize {
    (row / 8) * 256 + (k / 4) * 128 + (row % 8) * 16 + (k % 4) * 4
}

/// Byte offset of element (row, k) of a `rows x K` K-major tf32 operand swizzled over `span`
/// bytes, from the PTX ISA's swizzling-mode figures: K is cut into boxes of `span / 4`
/// columns, box j at byte `j * rows * span`; in a box, row r is `span` bytes at `r * span`
/// (so 8-row groups are `8 * span` apart, the stride byte offset), and then the 16-byte
/// chunks move as [`swizzled_at`] says.
fn tf32_swizzled_at(rows: usize, span: usize, row: usize, k: usize) -> usize {
    let w = span / 4;
    (k / w) * rows * span + swizzled_at(row * span + 4 * (k % w), span)
}

/// (row, column) of D that thread `t`'s accumulator register `r` holds, from the PTX ISA's
/// wgmma D fragment figure for m64nNk8 with f32 accumulators: warp w = t / 32 of the
/// warpgroup owns rows 16w .. 16w + 15; lane l holds rows l / 4 and l / 4 + 8 of them and,
/// in each 8-column block j, columns 2 (l % 4) and + 1; registers run d0, d1 (row l / 4),
/// d2, d3 (row l / 4 + 8) per block.
fn wgmma_d_at(t: usize, r: usize) -> (usize, usize) {
    let (w, l) = (t / 32, t % 32);
    let (j, h, c) = (r / 4, r % 4 / 2, r % 2);
    (16 * w + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + c)
}

#[test]
fn r_wgmma_tf32() {
    // C = A B^T (A 64 x K, B N x K, both K-major) from raw shared-memory images the test lays
    // out with the references above, at N = 8, 136, 256 (canonical layout) and with the 128-,
    // 64- and 32-byte swizzles; the kernels copy the images verbatim and write the
    // accumulator registers out raw, so the shared-memory layouts and the D fragment layout
    // are all the references'. The inputs are f32 with full mantissas: the tensor cores use
    // their tf32 bits (the low 13 mantissa bits dropped, rounding toward zero: see
    // `truncate_tf32` in the simulator), products are exact and each k8 step rounds once, so
    // the result is within 1e-6 of the sum of the truncated products (tolerance as in
    // `r_wgmma_bf16_tile`); rounding the inputs to nearest instead is off by far more.
    let p = program(&file("wgmma_tf32.prism"));
    let trunc = |x: f32| f64::from(f32::from_bits(x.to_bits() & !0x1FFF));
    enum Layout {
        Canonical,
        Swizzled(usize),
    }
    let cases = [
        ("canon_n8", 8usize, 8usize, Layout::Canonical),
        ("canon_n136", 136, 8, Layout::Canonical),
        ("canon_n256", 256, 16, Layout::Canonical),
        ("sw128", 64, 64, Layout::Swizzled(128)),
        ("sw64", 32, 32, Layout::Swizzled(64)),
        ("sw32", 16, 16, Layout::Swizzled(32)),
    ];
    for (kernel, n, k, layout) in cases {
        let mut rng = Rng::new((n * 7 + k) as u64);
        let a = rng.uniform(64 * k, -1.0, 1.0);
        let b = rng.uniform(n * k, -1.0, 1.0);
        // The image of a `rows x k` operand: byte offsets in floats.
        let image = |v: &[f32], rows: usize| -> Vec<f32> {
            let mut img = vec![f32::NAN; rows * k];
            for row in 0..rows {
                for kk in 0..k {
                    let at = match layout {
                        // Each k8 slice is a whole tile of its own, one after the other.
                        Layout::Canonical => (kk / 8) * rows * 32 + tf32_canonical_at(row, kk % 8),
                        Layout::Swizzled(span) => tf32_swizzled_at(rows, span, row, kk),
                    };
                    assert!(img[at / 4].is_nan(), "{kernel}: two elements at byte {at}");
                    img[at / 4] = v[row * k + kk];
                }
            }
            img
        };
        let (ia, ib) = (image(&a, 64), image(&b, n));
        let out =
            p.launch(kernel, 1, 128, || vec![Arg::buffer(&ia), Arg::buffer(&ib), Arg::buffer(&vec![0.0f32; 64 * n])]);
        let raw = out.f32("c");
        let mut got = vec![f32::NAN; 64 * n];
        for t in 0..128 {
            for r in 0..n / 2 {
                let (row, col) = wgmma_d_at(t, r);
                assert!(got[row * n + col].is_nan(), "{kernel}: D[{row}, {col}] held twice");
                got[row * n + col] = raw[t * n / 2 + r];
            }
        }
        let mut off_nearest = 0.0f64;
        for m in 0..64 {
            for j in 0..n {
                let dot = |f: &dyn Fn(f32) -> f64| -> f64 { (0..k).map(|q| f(a[m * k + q]) * f(b[j * k + q])).sum() };
                let exact = dot(&trunc);
                let mag: f64 = (0..k).map(|q| (trunc(a[m * k + q]) * trunc(b[j * k + q])).abs()).sum();
                let g = f64::from(got[m * n + j]);
                assert!((g - exact).abs() <= 1e-6 * mag + 1e-6, "{kernel}: C[{m}, {j}]: got {g}, want {exact}");
                let nearest = dot(&|x| f64::from(crate::support::to_tf32(x)));
                off_nearest = off_nearest.max((g - nearest).abs());
            }
        }
        assert!(off_nearest > 1e-4, "{kernel}: the result does not tell truncation from rounding");
    }
}

#[test]
fn r_wgmma_lane_paths() {
    // One tf32 wgmma product reached through the same elements named once for the
    // warpgroup, and through a view of each lane's own (run/wgmma_lane_paths.prism): the
    // simulator reads the first once per warp and the second lane by lane, and both must
    // leave the same bits in every accumulator register.
    let p = program("run/wgmma_lane_paths.prism");
    let mut rng = Rng::new(20_261_130);
    let (a, b) = (rng.uniform(2048, -1.0, 1.0), rng.uniform(2048, -1.0, 1.0));
    let run = |kernel: &str| {
        let args = vec![Arg::buffer(&a), Arg::buffer(&b), Arg::buffer(&vec![0.0f32; 4096])];
        let checks = prism_interp::Checks { races: true, uniformity: false };
        let out = p.module.launch(kernel, 1, 128, &args, prism_interp::Config { checks, ..Default::default() });
        let out = out.unwrap_or_else(|e| panic!("{kernel}: {}", e.message));
        assert!(out.is_clean(), "{kernel}: {:?}", out.reports);
        args[2].as_buffer().expect("c is a buffer").to_vec::<f32>().expect("floats")
    };
    let (once, per_lane) = (run("named_once"), run("buggy_named_per_lane"));
    assert!(once.iter().filter(|x| **x != 0.0).count() > 4000, "the product is not trivial");
    assert_same("c (lane by lane against once per warp)", &per_lane, &once);
}

#[test]
fn r_wgmma_tile_changed_without_race_checks() {
    // With race checks off nothing reports a write to a tile in flight as a race, and the
    // comparison at the wait is what catches it: the warp's read of the tiles, compared
    // once for the warp, must still name the lane and the tile (run/checks/wgmma_pending's
    // restaging kernels; with checks on they are data races, `tests/run_checks.rs`).
    let p = program("run/checks/wgmma_pending.prism");
    let mut rng = Rng::new(77);
    let bf = |v: Vec<f32>| bf16_buffer(&v.into_iter().map(crate::support::to_bf16).collect::<Vec<_>>());
    let cases = [
        ("buggy_restage_before_wait", vec![bf(rng.uniform(2048, -1.0, 1.0)), bf(rng.uniform(256, -1.0, 1.0))]),
        ("buggy_tf32_restage_before_wait", vec![Arg::buffer(&rng.uniform(2048, -1.0, 1.0))]),
    ];
    for (kernel, mut args) in cases {
        args.push(Arg::buffer(&[0.0f32; 128]));
        let out = p.module.launch(
            kernel,
            1,
            128,
            &args,
            prism_interp::Config { checks: prism_interp::Checks::NONE, ..Default::default() },
        );
        let out = out.unwrap_or_else(|e| panic!("{kernel}: {}", e.message));
        let kinds: Vec<_> = out.reports.iter().map(|r| (r.kind, r.message.clone())).collect();
        assert!(
            matches!(&kinds[..], [(prism_interp::ReportKind::WgmmaPending, m)] if m.starts_with("`a_s` changed while a wgmma")),
            "{kernel}: {kinds:?}"
        );
    }
}

#[test]
fn r_pipeline_specialised() {
    // A producer warp fills a three-slot ring with TMA copies while two consumer warps add
    // each tile into per-thread sums: no tiles, fewer tiles than slots, exactly a ring, and
    // more than two rounds of the ring (so both waits wrap their parity), on 1 to 3 blocks.
    // Inputs are eighths, so the sums are exact.
    let p = program(&file("pipeline_specialised.prism"));
    for (blocks, n) in [(1usize, 0usize), (2, 1), (1, 3), (3, 4), (2, 7)] {
        let rows = (8 * n * blocks).max(8);
        let a = Rng::new((blocks * 10 + n) as u64).eighths(rows * 32, -4, 4);
        let out = p.launch("column_sums", blocks as u32, 96, || {
            vec![tensor(&a, &[rows as u64, 32]), Arg::value(n as i32), Arg::buffer(&vec![7.0f32; 96 * blocks])]
        });
        let want = column_sums(&a, blocks, n, 1.0);
        assert_same(&format!("out ({blocks} blocks, {n} tiles)"), &out.f32("out"), &want);
    }
}

/// What the column-sum pipelines of `pipeline_specialised.prism` and
/// `pipeline_specialised_boxes.prism` write for `n` tiles of 8 x 32 floats per block: for
/// each of `blocks` blocks of 96 threads, zeros for the producer warp, and for consumer
/// thread `c` the sum of elements `4c .. 4c + 3` of each of its block's tiles, times
/// `scale`.
fn column_sums(a: &[f32], blocks: usize, n: usize, scale: f32) -> Vec<f32> {
    (0..96 * blocks)
        .map(|g| {
            let (b, i) = (g / 96, g % 96);
            if i < 32 {
                return 0.0;
            }
            let c = i - 32;
            let sum: f32 = (0..n)
                .flat_map(|t| (0..4).map(move |j| (t, 4 * c + j)))
                .map(|(t, e)| a[(8 * (b * n + t) + e / 32) * 32 + e % 32])
                .sum();
            scale * sum
        })
        .collect()
}

#[test]
fn r_pipeline_specialised_boxes() {
    // Warp-specialised fills of several TMA boxes per slot: two halves from one thread and
    // from two, four quarters from a loop through three slots, two rings of two halves each
    // (the second swapped, so out is twice the sums). No tiles, one, fewer than the slots,
    // and several rounds of the ring, on 1 to 3 blocks. Every box must land before its
    // consumers read (the slot's full mbarrier counts all their bytes) and none may land on
    // another: the sums would differ, and the simulator would report the race. Inputs are
    // eighths, so the sums are exact.
    let p = program(&file("pipeline_specialised_boxes.prism"));
    for (kernel, rows_per_box, twice) in
        [("halves", 4usize, false), ("halves_two_threads", 4, false), ("quarters", 2, false), ("two_rings", 4, true)]
    {
        for (blocks, n) in [(1usize, 0usize), (2, 1), (1, 2), (3, 4), (2, 7)] {
            let rows = (8 * n * blocks).max(rows_per_box);
            let a = Rng::new((blocks * 10 + n + 300) as u64).eighths(rows * 32, -4, 4);
            let out = p.launch(kernel, blocks as u32, 96, || {
                vec![tensor(&a, &[rows as u64, 32]), Arg::value(n as i32), Arg::buffer(&vec![7.0f32; 96 * blocks])]
            });
            let want = column_sums(&a, blocks, n, if twice { 2.0 } else { 1.0 });
            assert_same(&format!("{kernel} out ({blocks} blocks, {n} tiles)"), &out.f32("out"), &want);
        }
    }
    // The tf32 gemm with K steps of 64, two 128-byte-swizzled boxes per operand and stage:
    // one exact tile; ragged M and N with a K step whose second panel is half past K (100);
    // K = 36, whose second panel lies wholly past K (TMA's zeros); and K = 452, eight steps
    // through the three slots.
    for (m, n, k) in [(64usize, 128usize, 64usize), (100, 200, 100), (70, 130, 36), (64, 128, 452)] {
        let blocks = (m.div_ceil(64) * n.div_ceil(128)) as u32;
        crate::kernels::check_tf32_abt(&p, "gemm_tf32_k64", (m, n, k), (blocks, 256), 64);
    }
}

#[test]
fn r_pipeline_branch_slots() {
    // Fills whose two copies per thread only a branch keeps inside a slot of 640 floats
    // (`if t < 32:`, its opposite's `else`, scaled and negated tests, a lower bound from
    // `-t < -95`, the test through `uint` and `int64` conversions, through `min` and `max`,
    // threads placed in reverse):
    // every kernel copies elements 0 .. 127 and 512 .. 639 of each tile, and
    // thread t adds elements t and 512 + t % 128 of every tile. No tiles, one, and several
    // rounds of the two-slot ring. Inputs are eighths, so the sums are exact.
    let p = program(&file("pipeline_branch_slots.prism"));
    let kernels =
        ["under_if", "under_else_and_scaled", "from_above", "under_casts", "under_min", "under_max", "reversed"];
    for kernel in kernels {
        for (blocks, n) in [(1usize, 0usize), (2, 1), (1, 3), (3, 6)] {
            let x = Rng::new((blocks * 10 + n + 700) as u64).eighths((640 * n * blocks).max(4), -4, 4);
            let out = p.launch(kernel, blocks as u32, 128, || {
                vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&vec![7.0f32; 128 * blocks])]
            });
            let want: Vec<f32> = (0..128 * blocks)
                .map(|g| {
                    let (b, t) = (g / 128, g % 128);
                    (0..n).map(|k| x[(b * n + k) * 640 + t] + x[(b * n + k) * 640 + 512 + t]).sum()
                })
                .collect();
            assert_same(&format!("{kernel} y ({blocks} blocks, {n} tiles)"), &out.f32("y"), &want);
        }
    }
    // Two producer threads of a warp-specialised fill, chosen by `if p < 2:`.
    for (blocks, n) in [(1usize, 0usize), (2, 1), (1, 2), (3, 5)] {
        let rows = (8 * n * blocks).max(4);
        let a = Rng::new((blocks * 10 + n + 800) as u64).eighths(rows * 32, -4, 4);
        let out = p.launch("producers_under_if", blocks as u32, 96, || {
            vec![tensor(&a, &[rows as u64, 32]), Arg::value(n as i32), Arg::buffer(&vec![7.0f32; 96 * blocks])]
        });
        let want = column_sums(&a, blocks, n, 1.0);
        assert_same(&format!("producers_under_if out ({blocks} blocks, {n} tiles)"), &out.f32("out"), &want);
    }
}

#[test]
fn r_pipeline_count_assigned() {
    // Pipelines whose body raises or lowers the variable their count was read from: the
    // count is read once, so every kernel fills and sums exactly `n` tiles (review R35: a
    // raised count filled one tile more, past `x`; a lowered one stopped early). Thread t
    // adds element t of each tile, then 12 ones from `late`. Inputs are eighths (exact).
    let p = program(&file("pipeline_count_assigned.prism"));
    for kernel in ["count_raised", "count_lowered"] {
        for (blocks, n) in [(1usize, 0usize), (2, 1), (1, 2), (2, 3), (1, 7)] {
            let x = Rng::new((blocks * 10 + n + 1000) as u64).eighths((512 * n * blocks).max(4), -4, 4);
            let out = p.launch(kernel, blocks as u32, 128, || {
                vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&vec![7.0f32; 128 * blocks])]
            });
            let want: Vec<f32> = (0..128 * blocks)
                .map(|g| {
                    let (b, t) = (g / 128, g % 128);
                    12.0 + (0..n).map(|k| x[(b * n + k) * 512 + t]).sum::<f32>()
                })
                .collect();
            assert_same(&format!("{kernel} y ({blocks} blocks, {n} tiles)"), &out.f32("y"), &want);
        }
    }
}

#[test]
fn r_range_bounds_assigned() {
    // `range` loops whose body assigns the variable of their bound or step, and a device
    // function's loop over its own parameter: each bound and step is read once (review R36:
    // `range(m)` re-read `m` at every test). Thread t gets [n, n, ceil(n / 2), f(n + t)]
    // with f(v) = 1000 v for v > 0 (the loop counts v down to 0) and v otherwise.
    let p = program(&file("range_bounds_assigned.prism"));
    for n in [-3i32, 0, 1, 2, 7, 10] {
        let out = p.launch("bounds_assigned", 1, 32, || vec![Arg::value(n), Arg::buffer(&[0i32; 128])]);
        let want: Vec<i32> = (0..32)
            .flat_map(|t| {
                let v = n + t;
                let pos = n.max(0);
                [pos, pos, (pos + 1) / 2, if v > 0 { 1000 * v } else { v }]
            })
            .collect();
        assert_eq!(out.i32("out"), want, "n = {n}");
    }
}

#[test]
fn r_fold_order() {
    // Expressions the CUDA backend prints as one C++ expression, whose loads or calls it
    // used to move past a barrier, an arrive or each other (review R38). The simulator runs
    // the IR's order; these are the results of that order, which the GPU comparison checks
    // the printed CUDA against.
    let p = program("accept/soundness/fold_order.prism");
    for n in [-5i32, 0, 7, 1000] {
        let out = p.launch("fold_load_before_barrier", 2, 64, || vec![Arg::value(n), Arg::buffer(&[0i32; 128])]);
        let v = |r: i32| 2 * (n + r) + r;
        let want = 27 * v(0) + 9 * v(1) + 3 * v(2) + v(3);
        assert_eq!(out.i32("out"), vec![want; 128], "fold_load_before_barrier, n = {n}");
        let out = p.launch("fold_load_before_arrive", 2, 64, || vec![Arg::value(n), Arg::buffer(&[0i32; 128])]);
        let want: Vec<i32> = (0..128).map(|g| (g % 64 + 1) * (4 * n - 6) + 6 * n + 2).collect();
        assert_eq!(out.i32("out"), want, "fold_load_before_arrive, n = {n}");
    }
    let out = p.launch("fold_calls_in_order", 2, 32, || vec![Arg::buffer(&[0i32; 64]), Arg::buffer(&[0i32; 64])]);
    assert_eq!(out.i32("out"), vec![1; 64], "fold_calls_in_order out");
    assert_eq!(out.i32("c"), vec![2; 64], "fold_calls_in_order c");
}

#[test]
fn r_mma_out_places() {
    // `out=` places naming one element keep the last result (list order), whether they are
    // spelled alike or only equal at run time; the others keep their inputs (review R37:
    // the CUDA left it to nvcc). The distinct kernel gives the four results to compare with.
    let p = program("accept/soundness/mma_out_places.prism");
    let a = Rng::new(4242).eighths(64, -8, 8);
    let d = p.launch("mma_distinct", 1, 32, || vec![Arg::buffer(&a), Arg::buffer(&[0.0f32; 128])]).f32("out");
    let want: Vec<f32> = (0..128)
        .map(|e| {
            let (t, i) = (e / 4, e % 4);
            if i == 0 { d[4 * t + 3] } else { a[(t * 3 + i) % 64] }
        })
        .collect();
    let same = p.launch("mma_same_place", 1, 32, || vec![Arg::buffer(&a), Arg::buffer(&[0.0f32; 128])]);
    assert_same("mma_same_place", &same.f32("out"), &want);
    let index =
        p.launch("mma_same_index", 1, 32, || vec![Arg::buffer(&a), Arg::value(0i32), Arg::buffer(&[0.0f32; 128])]);
    assert_same("mma_same_index", &index.f32("out"), &want);
    assert!(d.iter().any(|&v| v != 0.0), "the products are not all zero");
}

#[test]
fn r_cpp_names() {
    // Source names the CUDA printer renames (C++ keywords, header macros, math functions,
    // a function named like a printer temporary, a kernel named like a C library function,
    // parameters that sanitise alike: review R39). The simulator runs them as any names.
    let p = program(&file("cpp_names.prism"));
    let x = Rng::new(77).eighths(128, 0, 64);
    let (new, new_, int_max) = (1i32, 2i32, 5i32);
    let out = p.launch("expf", 2, 64, || {
        vec![
            Arg::value(new),
            Arg::value(new_),
            Arg::value(int_max),
            Arg::buffer(&x),
            Arg::buffer(&[0.0f32; 128]),
            Arg::buffer(&[0i32; 128]),
        ]
    });
    let want: Vec<i32> = (0..128).map(|g| 2 * (3 * g + new + 10 * new_ + int_max + 1)).collect();
    assert_eq!(out.i32("iout"), want);
    let want: Vec<f32> = x
        .iter()
        .map(|&v| {
            let s = v.sqrt();
            s * 2.0 + (s + s.max(1.0))
        })
        .collect();
    assert_same("out", &out.f32("out"), &want);
    // The kernel `atan2f`: a tensor map named `dims` beside a parameter `dims_rows`.
    let x = Rng::new(78).eighths(1024, -8, 8);
    let out = p.launch("atan2f", 2, 32, || {
        vec![tensor(&x, &[32, 32]), Arg::value(1i32), Arg::value(2i32), Arg::buffer(&[0.0f32; 1024])]
    });
    let want: Vec<f32> = x.iter().map(|v| v + 3.0).collect();
    assert_same("atan2f out", &out.f32("out"), &want);
}

#[test]
fn r_pipeline_cases_slots() {
    // Fills issued by two one-thread cases of a split: TMA halves of a warp-specialised
    // pipeline's slots, and a plain pipeline's halves in 16-byte cp.async runs. No tiles,
    // one, and several rounds of the two-slot rings; inputs are eighths (exact sums).
    let p = program(&file("pipeline_cases_slots.prism"));
    for (blocks, n) in [(1usize, 0usize), (2, 1), (1, 2), (3, 5)] {
        let rows = (8 * n * blocks).max(4);
        let a = Rng::new((blocks * 10 + n + 900) as u64).eighths(rows * 32, -4, 4);
        let out = p.launch("two_cases", blocks as u32, 96, || {
            vec![tensor(&a, &[rows as u64, 32]), Arg::value(n as i32), Arg::buffer(&vec![7.0f32; 96 * blocks])]
        });
        assert_same(
            &format!("two_cases out ({blocks} blocks, {n} tiles)"),
            &out.f32("out"),
            &column_sums(&a, blocks, n, 1.0),
        );
        let x = Rng::new((blocks * 10 + n + 950) as u64).eighths((128 * n * blocks).max(4), -4, 4);
        let out = p.launch("plain_two_cases", blocks as u32, 128, || {
            vec![Arg::value(n as i32), Arg::buffer(&x), Arg::buffer(&vec![7.0f32; 128 * blocks])]
        });
        let want: Vec<f32> = (0..128 * blocks)
            .map(|g| {
                let (b, t) = (g / 128, g % 128);
                (0..n).map(|k| x[(b * n + k) * 128 + (t + 5) % 128]).sum()
            })
            .collect();
        assert_same(&format!("plain_two_cases y ({blocks} blocks, {n} tiles)"), &out.f32("y"), &want);
    }
}

#[test]
fn r_mma_tf32_rz() {
    // One m16n8k8 tf32 mma per block, with A and B rounded (`mma_tf32`) and truncated
    // (`mma_tf32_rz`) to tf32: bit for bit against references that convert the inputs so,
    // multiply exactly and round the sum of C and the 8 products to f32 once. The inputs
    // have full mantissas, so the two results differ (checked), and each reference fails
    // the other's output.
    let p = program(&file("mma_tf32_rz.prism"));
    let blocks = 3usize;
    let mut rng = Rng::new(1130);
    let (a, bm, c) = (
        rng.uniform(128 * blocks, -2.0, 2.0),
        rng.uniform(64 * blocks, -2.0, 2.0),
        rng.uniform(128 * blocks, -1.0, 1.0),
    );
    let out = p.launch("mma_both", blocks as u32, 32, || {
        vec![
            Arg::buffer(&a),
            Arg::buffer(&bm),
            Arg::buffer(&c),
            Arg::buffer(&vec![0.0f32; 128 * blocks]),
            Arg::buffer(&vec![0.0f32; 128 * blocks]),
        ]
    });
    let reference = |conv: fn(f32) -> f32| -> Vec<f32> {
        (0..128 * blocks)
            .map(|g| {
                let (b, row, n) = (g / 128, (g % 128) / 8, g % 8);
                let mut s = f64::from(c[g]);
                for k in 0..8 {
                    s += f64::from(conv(a[128 * b + 8 * row + k])) * f64::from(conv(bm[64 * b + 8 * k + n]));
                }
                s as f32
            })
            .collect()
    };
    let (rn, rz) = (reference(crate::support::to_tf32), reference(crate::support::truncate_tf32));
    assert_ne!(rn, rz, "the inputs must tell rounding from truncation");
    assert_same("d_rn (mma_tf32)", &out.f32("d_rn"), &rn);
    assert_same("d_rz (mma_tf32_rz)", &out.f32("d_rz"), &rz);
}

#[test]
fn r_tma_store() {
    // Each block loads a box by TMA, doubles it and stores it back into `b` at the same place:
    // 6 blocks of 16 x 32 boxes over a 40 x 96 array (the last row of boxes reaches past the
    // array, whose rows 40 .. 47 are not written), then 128-byte swizzled bf16 boxes, which
    // the store reads back through the same swizzle. The rest of `b` keeps its 7s.
    let p = program(&file("tma_store.prism"));
    let a = Rng::new(81).eighths(40 * 96, -4, 4);
    let out = p.launch("boxes", 6, 32, || {
        vec![tensor(&a, &[40, 96]), tensor(&vec![7.0f32; 40 * 96], &[40, 96]), Arg::value(3i32)]
    });
    let want: Vec<f32> = (0..40 * 96).map(|g| if g / 96 < 32 { 2.0 * a[g] } else { 7.0 }).collect();
    assert_same("b (boxes)", &out.f32("b"), &want);
    // bf16: doubling is exact.
    let bits: Vec<u64> = (0..24 * 64).map(|i| 0x3c00 + (i % 700) as u64).collect();
    let bf16 = |bits: &[u64]| Arg::Tensor {
        buffer: prism_interp::Buffer::from_bits(prism_types::ty::Scalar::BF16, bits),
        dims: vec![24, 64],
    };
    let out = p.launch("swizzled", 2, 32, || vec![bf16(&bits), bf16(&vec![0x40e0; 24 * 64])]);
    let want: Vec<u64> =
        (0..24 * 64).map(|g| if g / 64 < 16 { u64::from(bf16_double(bits[g] as u16)) } else { 0x40e0 }).collect();
    assert_same("b (swizzled)", &out.bits("b"), &want);
}

/// The bf16 with bits `x` doubled (its exponent plus one, for these normal values).
fn bf16_double(x: u16) -> u16 {
    x + 0x80
}

#[test]
fn r_launch_coords() {
    // Each thread writes its coordinates and its block's at its linear index `id()`, and the
    // extents: the linear order must be x fastest, then y, then z, for threads in blocks and
    // blocks in grids alike, with odd extents along every dimension.
    let p = program(&file("launch_coords.prism"));
    for (grid, block) in [((3u32, 2u32, 2u32), (4u32, 3u32, 2u32)), ((1, 5, 1), (7, 1, 3)), ((2, 1, 3), (32, 2, 1))] {
        let (bn, tn) = (grid.0 * grid.1 * grid.2, block.0 * block.1 * block.2);
        let n = (bn * tn) as usize;
        let out = p
            .launch("coords", grid, block, || vec![Arg::buffer(&vec![-1i32; 2 * n]), Arg::buffer(&vec![-1i32; 8 * n])]);
        let mut want = Vec::new();
        for (bz, by, bx) in linear_order(grid) {
            for (tz, ty, tx) in linear_order(block) {
                want.push((tx + 100 * ty + 10000 * tz) as i32);
                want.push((bx + 100 * by + 10000 * bz) as i32);
            }
        }
        assert_same("out", &out.i32("out"), &want);
        let extents = [block.0, block.1, block.2, grid.0, grid.1, grid.2, tn, bn].map(|v| v as i32);
        assert_same("dims", &out.i32("dims"), &extents.repeat(n));
    }
    // `fixed` (blocks of exactly 16 x 4) reads no coordinate: `id()` is the linear index,
    // and its block extent, a constant in the CUDA, is the launch's.
    let out = p.launch("fixed", 3, (16, 4), || vec![Arg::buffer(&[-1i32; 192])]);
    let want: Vec<i32> = (0..192).map(|i| i % 64 + 1000 * (i / 64) + 400_000).collect();
    assert_same("out", &out.i32("out"), &want);
}

/// `(z, y, x)` over extents `(X, Y, Z)` in CUDA's linear order, x fastest.
fn linear_order((x, y, z): (u32, u32, u32)) -> Vec<(u32, u32, u32)> {
    (0..z).flat_map(|k| (0..y).flat_map(move |j| (0..x).map(move |i| (k, j, i)))).collect()
}

#[test]
fn r_dynamic_shared() {
    // Tiles of 200, 37 and 1 items staged through the launch-sized shared array, at two
    // block sizes: out[b] is the sum of tile b (eighths: exact in any order).
    let p = program(&file("dynamic_shared.prism"));
    for (tile, threads) in [(200usize, 64u32), (37, 96), (1, 32)] {
        let x = Rng::new(tile as u64).eighths(3 * tile, -8, 8);
        let out = p.launch("staged_sums", 3, threads, || {
            vec![Arg::buffer(&x), Arg::buffer(&[0.0f32; 3]), Arg::value(tile as i32)]
        });
        let want: Vec<f32> = x.chunks(tile).map(|c| c.iter().sum()).collect();
        assert_same("out", &out.f32("out"), &want);
    }
}

#[test]
fn r_flat_thread_index() {
    // Block-uniform branches over global memory indexed `b * 64 + t` (docs/soundness.md
    // §4.4): even blocks add to their elements, odd ones read theirs. Blocks of 64 and of
    // 48 threads (fewer than `@launch_bounds`, so the elements past 48 in each block's 64
    // are left alone).
    let p = program("accept/soundness/flat_thread_index.prism");
    for threads in [64usize, 48] {
        let acc: Vec<i32> = (0..256).collect();
        let out = p.launch("flat_branches", 4, threads as u32, || vec![Arg::buffer(&acc), Arg::buffer(&[-1i32; 256])]);
        let mut want_acc = acc.clone();
        let mut want_out = vec![-1i32; 256];
        for b in 0..4 {
            for t in 0..threads {
                let i = b * 64 + t;
                if b % 2 == 0 {
                    want_acc[i] += 1000;
                    want_out[i] = 0;
                } else {
                    want_out[i] = acc[i];
                }
            }
        }
        assert_same("acc", &out.i32("acc"), &want_acc);
        assert_same("out", &out.i32("out"), &want_out);
    }
    let acc: Vec<i32> = (0..512).collect();
    let out = p.launch("flat_pairs", 4, 64, || vec![Arg::buffer(&acc), Arg::buffer(&[-1i32; 256])]);
    let mut want_acc = acc.clone();
    let mut want_out = vec![-1i32; 256];
    for b in 0..4 {
        for t in 0..64 {
            let (i, j) = (128 * b + 2 * t, 128 * b + 2 * t + 1);
            if b % 2 == 0 {
                want_acc[i] += 1000;
                want_acc[j] += 1000;
                want_out[b * 64 + t] = 0;
            } else {
                want_out[b * 64 + t] = acc[i] + acc[j];
            }
        }
    }
    assert_same("acc", &out.i32("acc"), &want_acc);
    assert_same("out", &out.i32("out"), &want_out);
}

#[test]
fn r_callee_ranges() {
    // Calls in a warp's loop over each thread's own four elements (docs/soundness.md §4.4,
    // "Calls"): no barrier inside the loop, and none needed. 2 blocks of 64 threads.
    let p = program("accept/soundness/callee_ranges.prism");
    let out = p.launch("scan_in_warp_loop", 2, 64, || vec![Arg::buffer(&[0i32; 512])]);
    let mut want = vec![0i32; 512];
    for b in 0..2 {
        for t in 0..64 {
            let mut v: Vec<i32> = (0..4).map(|k| k + t as i32).collect();
            for _ in 0..2 {
                for k in 1..4 {
                    v[k] += v[k - 1];
                }
                for x in &mut v {
                    *x += 1;
                }
                v[3] *= 2;
            }
            want[b * 256 + 4 * t..b * 256 + 4 * t + 4].copy_from_slice(&v);
        }
    }
    assert_same("out", &out.i32("out"), &want);
}

#[test]
fn r_fold_agrees_with_run_time() {
    // Review R46: a constant operation and the same operation on variables give the same
    // bits. `floats` writes each folded spelling at an even index and its run-time twin
    // after it; before the fix, `min(-0.0, 0.0)` folded to +0, `min(1.0, 0.0 / 0.0)` to a
    // NaN, `0.0 / 0.0` to the host's NaN 0xffc00000, `float(int64)` rounded twice, and a
    // float literal was compared and added unrounded.
    let p = program(&file("fold_agrees_with_run_time.prism"));
    let out = p.launch("floats", 1, 1, || vec![Arg::buffer(&[0u32; 32])]);
    let got: Vec<u32> = out.get("out");
    let big = 1152921573326323713i64;
    let want: [u32; 16] = [
        0x8000_0000,            // min(-0.0, 0.0) = -0.0
        0,                      // max(0.0, -0.0) = +0.0
        0x8000_0000,            // min(0.0, -0.0) = -0.0
        1.0f32.to_bits(),       // min(1.0, NaN) = 1.0
        2.0f32.to_bits(),       // max(NaN, 2.0) = 2.0
        0x7FFF_FFFF,            // min(NaN, NaN): the canonical NaN
        0x7FFF_FFFF,            // 0 / 0
        0x7FFF_FFFF,            // inf - inf
        0xFFFF_FFFF,            // -(0 / 0): the sign bit only
        0x7FFF_FFFF,            // abs(-(0 / 0))
        (big as f32).to_bits(), // float(int64), rounded once
        0x8000_0000,            // a file-level min(-0.0, 0.0)
        0,                      // a file-level max(0.0, -0.0)
        1,                      // float(0.1) == 0.1
        (0.3f32 + 0.6f32).to_bits(),
        16777216, // int(16777217.0): the literal is a float
    ];
    for (k, w) in want.iter().enumerate() {
        assert_eq!((got[2 * k], got[2 * k + 1]), (*w, *w), "pair {k} (out[{}], out[{}]): {got:x?}", 2 * k, 2 * k + 1);
    }

    // Packed `half` pairs at indices that are wrapping sums of constants: hv = 1..8, so the
    // stores copy hv[2..4], hv[4..6], hv[4..6], hv[6..8] and hv[2..4]; the loads put
    // h[0..2] at lv[2..4] and h[4..6] at lv[6..8].
    let h: Vec<f32> = (0..8).map(|k| k as f32).collect();
    let out = p.launch("pairs", 1, 1, || vec![f16_buffer(&h), f16_buffer(&[0.0; 48])]);
    let mut want = [0.0f32; 48];
    want[..10].copy_from_slice(&[3.0, 4.0, 5.0, 6.0, 5.0, 6.0, 7.0, 8.0, 3.0, 4.0]);
    want[16..24].copy_from_slice(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 4.0, 5.0]);
    let want: Vec<u64> = want.iter().map(|&x| prism_types::value::from_f64(Scalar::F16, f64::from(x))).collect();
    assert_same("o", &out.bits("o"), &want);
}
