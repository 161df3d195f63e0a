//! Warp collectives: shuffles, votes, reductions and tensor-core `mma`, over the 32 lanes of
//! a warp at once. Inputs are per-lane register bits; `present` is the mask of lanes that
//! take part (every live lane of the warp: the scheduler only runs a collective once all of
//! them have arrived).

use crate::code::Intr;
use crate::ops;
use crate::value::{round_tf32, to_f64, truncate_tf32};
use prism_types::tir::BinOp;
use prism_types::ty::Scalar;

/// Per-lane values of one register.
pub type Lanes = [u64; 32];

/// Which lane `elect_sync` elects, as a key: the present lane `l` with the smallest
/// `l ^ key`. PTX promises only that the same mask elects the same lane every time, not
/// which, so the deterministic schedule elects the lowest lane (key 0; no GPU run has yet
/// shown which lane the hardware elects) and a randomised schedule another, fixed for the
/// run: a program whose output depends on which lane is elected then differs between
/// schedules.
pub fn elect_key(seed: Option<u64>) -> u32 {
    seed.map_or(0, |s| (s.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 59) as u32)
}

/// Runs collective `intr`; `read(r)` gives the lanes of register `r`; `elect` is the run's
/// [`elect_key`]. Returns the values to write, per destination register.
pub fn collective(intr: &Intr, present: u32, elect: u32, read: &mut dyn FnMut(u32) -> Lanes) -> Vec<(u32, Lanes)> {
    match intr {
        Intr::Shfl { kind, dst, value, lane, lane_ty, .. } => {
            let (v, l) = (read(*value), read(*lane));
            vec![(*dst, shfl(*kind, &v, &l, *lane_ty, present))]
        }
        Intr::Vote { kind, dst, pred } => vec![(*dst, vote(*kind, &read(*pred), present, elect))],
        Intr::Reduce { op, ty, dst, value } => vec![(*dst, reduce(*op, *ty, &read(*value), present))],
        Intr::Mma { shape, rz, a, b, c, d } => {
            let a: Vec<Lanes> = a.iter().map(|&r| read(r)).collect();
            let b: Vec<Lanes> = b.iter().map(|&r| read(r)).collect();
            let c: Vec<Lanes> = c.iter().map(|&r| read(r)).collect();
            let out = mma(*shape, *rz, &a, &b, &c);
            d.iter().copied().zip(out).collect()
        }
        Intr::LdMatrix { rows, dsts, count, trans, wide } => {
            let rows = rows.map(read);
            let out = if *wide { ldmatrix_b32(&rows, *count) } else { ldmatrix(&rows, *count, *trans) };
            out.into_iter().zip(dsts).map(|(v, d)| (*d, v)).collect()
        }
        _ => unreachable!("only warp collectives reach the rendezvous"),
    }
}

/// The second half of `ldmatrix.sync.aligned.m8n8` (PTX ISA, "Warp-level matrix load
/// instruction: ldmatrix"): `rows[k]` holds, in each lane, elements 2k and 2k + 1 of the
/// 8-element row that lane's address named (the lower index in the lower 16 bits). Row `r`
/// of matrix `j` comes from lane `8j + r`. Plain: lane `l` receives elements `2(l % 4)` and
/// `2(l % 4) + 1` of row `l / 4` of each matrix. Transposed: it receives column `l / 4` of
/// rows `2(l % 4)` and `2(l % 4) + 1`. Outputs `2j` and `2j + 1` are matrix `j`'s, each a
/// 16-bit value.
pub fn ldmatrix(rows: &[Lanes; 4], count: u8, trans: bool) -> Vec<Lanes> {
    let elem = |lane: usize, col: usize| -> u64 { (rows[col / 2][lane] >> (16 * (col % 2))) & 0xffff };
    let mut out = vec![[0u64; 32]; 2 * count as usize];
    for j in 0..count as usize {
        let (first, rest) = out[2 * j..].split_at_mut(1);
        for (l, (lo, hi)) in first[0].iter_mut().zip(rest[0].iter_mut()).enumerate() {
            let (g, t) = (l / 4, l % 4);
            (*lo, *hi) = if trans {
                (elem(8 * j + 2 * t, g), elem(8 * j + 2 * t + 1, g))
            } else {
                (elem(8 * j + g, 2 * t), elem(8 * j + g, 2 * t + 1))
            };
        }
    }
    out
}

/// `ldmatrix` over 32-bit elements: the instruction moves the same b16 pairs, so each
/// lane's register is the whole 32-bit word it would hold as a pair. `rows[k]` holds word
/// (element) `k` of the lane's 4-element row; lane `l` receives element `l % 4` of row
/// `l / 4` of each matrix `j` (row `r` of matrix `j` from lane `8j + r`). Output `j` is
/// matrix `j`'s.
pub fn ldmatrix_b32(rows: &[Lanes; 4], count: u8) -> Vec<Lanes> {
    (0..count as usize).map(|j| std::array::from_fn(|l| rows[l % 4][8 * j + l / 4] & 0xffff_ffff)).collect()
}

/// `shfl` (kind 0: from lane `l`), `shfl_up` (1: from `lane - l`), `shfl_down` (2: from
/// `lane + l`), `shfl_xor` (3: from `lane ^ l`), with CUDA's width of 32.
///
/// As `shfl.sync` does (PTX ISA, `shfl.sync`: `bval[4:0] = b[4:0]`), only the low five bits
/// of the lane or offset operand count: `shfl_down(v, 33)` moves by 1 and `shfl_up(v, -1)`
/// by 31, whatever the operand's type (CUDA's intrinsics take it as an `unsigned`, whose low
/// bits are the same). A lane whose source is outside the warp, or not taking part, gets its
/// own value (what `shfl.sync` does for an out-of-range source; for an absent source CUDA
/// leaves the value undefined, and safe code cannot reach that).
pub fn shfl(kind: u8, v: &Lanes, l: &Lanes, _lane_ty: Scalar, present: u32) -> Lanes {
    let mut out = *v;
    for lane in 0..32i64 {
        let arg = (l[lane as usize] & 31) as i64;
        let src = match kind {
            0 => arg,
            1 => lane - arg,
            2 => lane + arg,
            _ => lane ^ arg,
        };
        if (0..32).contains(&src) && present & (1 << src) != 0 {
            out[lane as usize] = v[src as usize];
        }
    }
    out
}

/// `ballot` (0), `any` (1), `all` (2) over the lanes taking part; `elect_sync` (3) by the
/// key `elect` ([`elect_key`]).
pub fn vote(kind: u8, p: &Lanes, present: u32, elect: u32) -> Lanes {
    let mut ballot = 0u32;
    for (lane, &x) in p.iter().enumerate() {
        if present & (1 << lane) != 0 && x != 0 {
            ballot |= 1 << lane;
        }
    }
    let r = match kind {
        0 => u64::from(ballot),
        1 => u64::from(ballot != 0),
        2 => u64::from(ballot == present),
        // `elect_sync`: the lane taking part with the smallest `lane ^ elect` (the lowest
        // for key 0).
        _ => {
            let leader = (0..32u32).filter(|l| present & (1 << l) != 0).min_by_key(|l| l ^ elect).unwrap_or(0);
            return std::array::from_fn(|l| u64::from(l as u32 == leader));
        }
    };
    [r; 32]
}

/// `reduce_*` over the lanes taking part: op 0 add, 1 min, 2 max, 3 and, 4 or, 5 xor. Every
/// lane gets the result. The combination order is a butterfly (`shfl_xor` by 16, 8, 4, 2, 1),
/// the same as the CUDA backend emits, so floating-point sums agree bit for bit.
pub fn reduce(op: u8, ty: Scalar, v: &Lanes, present: u32) -> Lanes {
    let combine = |a: u64, b: u64| match op {
        0 => ops::bin(BinOp::Add, ty, a, b, ty).unwrap_or(a),
        1 => ops::atomic_apply(2, ty, a, b),
        2 => ops::atomic_apply(3, ty, a, b),
        3 => a & b,
        4 => a | b,
        _ => a ^ b,
    };
    if present == u32::MAX {
        let mut x = *v;
        for off in [16, 8, 4, 2, 1] {
            let prev = x;
            for lane in 0..32 {
                x[lane] = combine(prev[lane], prev[lane ^ off]);
            }
        }
        return x;
    }
    // A partial warp (a block size that is not a multiple of 32, in unsafe code): combine the
    // lanes that exist in lane order.
    let mut acc: Option<u64> = None;
    for (lane, &x) in v.iter().enumerate() {
        if present & (1 << lane) != 0 {
            acc = Some(match acc {
                None => x,
                Some(a) => combine(a, x),
            });
        }
    }
    [acc.unwrap_or(0); 32]
}

/// Tensor-core `mma.sync.aligned` with the PTX ISA's fragment layouts (§9.7.14.5). `shape` 0
/// is m16n8k8 with tf32 inputs (given as f32, rounded to tf32 with `cvt.rna`, which the
/// CUDA backend emits too; with `rz`, `intrinsic.mma_tf32_rz`, truncated: the backend gives
/// the floats' bits as they are and the tensor cores ignore the low 13 mantissa bits, as
/// for wgmma); 1 is m16n8k16 bf16; 2 is m16n8k16 f16. Accumulators are f32.
/// Each product is exact in f64; the sum over k runs in f64 from the accumulator in k order
/// and is rounded to f32 once. (The hardware's internal order and precision are not
/// specified; results may differ from it in the last bits.)
pub fn mma(shape: u8, rz: bool, a: &[Lanes], b: &[Lanes], c: &[Lanes]) -> Vec<Lanes> {
    let k = if shape == 0 { 8 } else { 16 };
    let in_ty = match shape {
        0 => Scalar::F32,
        1 => Scalar::BF16,
        _ => Scalar::F16,
    };
    let input = |bits: u64| {
        let x = f32::from_bits(bits as u32);
        match (shape, rz) {
            (0, false) => f64::from(round_tf32(x)),
            (0, true) => f64::from(truncate_tf32(x)),
            _ => to_f64(in_ty, bits),
        }
    };
    let mut am = vec![[0f64; 16]; 16];
    let mut bm = vec![[0f64; 8]; 16];
    let mut cm = [[0f64; 8]; 16];
    for lane in 0..32usize {
        let (g, q) = (lane / 4, lane % 4);
        for (i, r) in a.iter().enumerate() {
            let (row, col) = a_pos(shape, i, g, q);
            am[row][col] = input(r[lane]);
        }
        for (i, r) in b.iter().enumerate() {
            let (row, col) = b_pos(shape, i, g, q);
            bm[row][col] = input(r[lane]);
        }
        for (i, r) in c.iter().enumerate() {
            let (row, col) = c_pos(i, g, q);
            cm[row][col] = f64::from(f32::from_bits(r[lane] as u32));
        }
    }
    let mut d = vec![[0u64; 32]; 4];
    for lane in 0..32usize {
        let (g, q) = (lane / 4, lane % 4);
        for (i, out) in d.iter_mut().enumerate() {
            let (row, col) = c_pos(i, g, q);
            let mut acc = cm[row][col];
            for (kk, brow) in bm.iter().enumerate().take(k) {
                acc += am[row][kk] * brow[col];
            }
            // A NaN is the GPU's arithmetic NaN, as for every other float result; until
            // 2026-11-30 it kept the host's bits (review R23 F1; not yet probed on a GPU).
            out[lane] = prism_types::value::f32_result(acc as f32);
        }
    }
    d
}

/// Row and column of A element `i` held by lane (g = lane / 4, q = lane % 4).
pub fn a_pos(shape: u8, i: usize, g: usize, q: usize) -> (usize, usize) {
    if shape == 0 {
        // m16n8k8 tf32: a0 (g, q), a1 (g + 8, q), a2 (g, q + 4), a3 (g + 8, q + 4).
        (g + 8 * (i & 1), q + 4 * (i >> 1))
    } else {
        // m16n8k16: pairs a0a1 (g, 2q..), a2a3 (g + 8, 2q..), a4a5 (g, 2q + 8..), a6a7 (g + 8, 2q + 8..).
        (g + 8 * ((i >> 1) & 1), 2 * q + (i & 1) + 8 * (i >> 2))
    }
}

/// Row (k) and column (n) of B element `i`.
pub fn b_pos(shape: u8, i: usize, g: usize, q: usize) -> (usize, usize) {
    if shape == 0 {
        // m16n8k8 tf32: b0 (q, g), b1 (q + 4, g).
        (q + 4 * i, g)
    } else {
        // m16n8k16: b0b1 (2q.., g), b2b3 (2q + 8.., g).
        (2 * q + (i & 1) + 8 * (i >> 1), g)
    }
}

/// Row and column of C/D element `i`: c0c1 (g, 2q..), c2c3 (g + 8, 2q..).
pub fn c_pos(i: usize, g: usize, q: usize) -> (usize, usize) {
    (g + 8 * (i >> 1), 2 * q + (i & 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::from_f64;

    fn f(x: f32) -> u64 {
        x.to_bits() as u64
    }

    #[test]
    fn shuffles() {
        let v: Lanes = std::array::from_fn(|i| i as u64 * 10);
        let d: Lanes = [1; 32];
        let down = shfl(2, &v, &d, Scalar::I32, u32::MAX);
        assert_eq!(down[0], 10);
        assert_eq!(down[31], 310, "out of range keeps its own value");
        let up = shfl(1, &v, &d, Scalar::I32, u32::MAX);
        assert_eq!(up[0], 0);
        assert_eq!(up[5], 40);
        let x = shfl(3, &v, &[16; 32], Scalar::I32, u32::MAX);
        assert_eq!(x[3], 190);
        let b = shfl(0, &v, &[7; 32], Scalar::I32, u32::MAX);
        assert!(b.iter().all(|&y| y == 70));
    }

    #[test]
    fn shuffle_offsets_use_their_low_five_bits() {
        let v: Lanes = std::array::from_fn(|i| i as u64 * 10);
        let same = |kind: u8, a: u64, b: u64| {
            shfl(kind, &v, &[a; 32], Scalar::I32, u32::MAX) == shfl(kind, &v, &[b; 32], Scalar::I32, u32::MAX)
        };
        for kind in 0..4 {
            assert!(same(kind, 33, 1), "kind {kind}: 33 is 1");
            assert!(same(kind, 32, 0), "kind {kind}: 32 is 0");
            // -1 as an `int` (sign-extended in the lane value) is 31.
            assert!(same(kind, (-1i64) as u64, 31), "kind {kind}: -1 is 31");
            assert!(same(kind, 0xFFFF_FFE1, 1), "kind {kind}: large values keep their low bits");
        }
        let down = shfl(2, &v, &[33; 32], Scalar::I32, u32::MAX);
        assert_eq!((down[0], down[31]), (10, 310));
        let up = shfl(1, &v, &[(-1i64) as u64; 32], Scalar::I32, u32::MAX);
        assert_eq!((up[31], up[30]), (0, 300), "up by 31: lane 31 reads lane 0, others keep");
    }

    #[test]
    fn votes_and_reductions() {
        let p: Lanes = std::array::from_fn(|i| (i % 2) as u64);
        assert_eq!(vote(0, &p, u32::MAX, 0)[0], 0xAAAA_AAAA);
        assert_eq!(vote(1, &p, u32::MAX, 0)[0], 1);
        assert_eq!(vote(2, &p, u32::MAX, 0)[0], 0);
        let elected = vote(3, &p, 0xF0, 0);
        assert_eq!((elected[4], elected.iter().sum::<u64>()), (1, 1), "one lane, the lowest present");
        // Another key elects another present lane, always exactly one, never an absent one.
        let elected = vote(3, &p, 0xF0, 0b00110);
        assert_eq!((elected[6], elected.iter().sum::<u64>()), (1, 1), "6 ^ 6 is the smallest key");
        for key in 0..32 {
            for present in [1u32, 0x8000_0000, 0xF0, 0x0101_0000, u32::MAX] {
                let elected = vote(3, &p, present, key);
                let leader = elected.iter().position(|&x| x == 1).expect("a leader");
                assert_eq!(elected.iter().sum::<u64>(), 1, "key {key}, present {present:#x}");
                assert!(present & (1 << leader) != 0, "key {key}, present {present:#x}: lane {leader} is absent");
            }
        }
        // Seeds give different keys (the deterministic schedule key 0).
        assert_eq!(elect_key(None), 0);
        let keys: std::collections::BTreeSet<u32> = (0..64).map(|s| elect_key(Some(s))).collect();
        assert!(keys.len() > 16 && keys.iter().all(|&k| k < 32), "{keys:?}");
        let v: Lanes = std::array::from_fn(|i| i as u64);
        assert_eq!(reduce(0, Scalar::I32, &v, u32::MAX)[7], 496);
        assert_eq!(reduce(2, Scalar::I32, &v, u32::MAX)[0], 31);
        assert_eq!(reduce(0, Scalar::I32, &v, 0xF)[0], 6);
    }

    /// D = A·B + C with A[r][k] = r + k, B[k][n] = k - n, C = 1, against a direct product.
    #[test]
    fn mma_layouts_compute_the_product() {
        for shape in [0u8, 1] {
            let (na, nb, k) = if shape == 0 { (4, 2, 8) } else { (8, 4, 16) };
            let enc = |x: f64| if shape == 0 { f(x as f32) } else { from_f64(Scalar::BF16, x) };
            let mut a = vec![[0u64; 32]; na];
            let mut b = vec![[0u64; 32]; nb];
            let c = vec![[f(1.0); 32]; 4];
            for lane in 0..32 {
                let (g, q) = (lane / 4, lane % 4);
                for (i, r) in a.iter_mut().enumerate() {
                    let (row, col) = a_pos(shape, i, g, q);
                    r[lane] = enc((row + col) as f64);
                }
                for (i, r) in b.iter_mut().enumerate() {
                    let (row, col) = b_pos(shape, i, g, q);
                    r[lane] = enc(row as f64 - col as f64);
                }
            }
            let d = mma(shape, false, &a, &b, &c);
            for lane in 0..32 {
                let (g, q) = (lane / 4, lane % 4);
                for (i, out) in d.iter().enumerate() {
                    let (row, col) = c_pos(i, g, q);
                    let want: f64 = 1.0 + (0..k).map(|kk| ((row + kk) as f64) * (kk as f64 - col as f64)).sum::<f64>();
                    assert_eq!(f32::from_bits(out[lane] as u32) as f64, want, "shape {shape} lane {lane} d{i}");
                }
            }
        }
    }

    /// tf32 inputs with bits below tf32's last: `mma_tf32` rounds them to nearest
    /// (`cvt.rna`), `mma_tf32_rz` drops them. A = 1 + 3·2^-12 everywhere, B = 1, C = 0:
    /// each of D's elements sums 8 products.
    #[test]
    fn mma_tf32_rounds_and_rz_truncates() {
        let a = vec![[u64::from((1.0f32 + 3.0 * 2f32.powi(-12)).to_bits()); 32]; 4];
        let b = vec![[f(1.0); 32]; 2];
        let c = vec![[f(0.0); 32]; 4];
        for (rz, want) in [(false, 8.0 * (1.0 + 2f32.powi(-10))), (true, 8.0)] {
            for out in mma(0, rz, &a, &b, &c) {
                assert!(
                    out.iter().all(|&x| f32::from_bits(x as u32) == want),
                    "rz {rz}: {:?}",
                    f32::from_bits(out[0] as u32)
                );
            }
        }
    }

    /// A NaN result is the GPU's arithmetic NaN, whatever the host's arithmetic made of it:
    /// Inf times 0, and a NaN input's payload.
    #[test]
    fn mma_nan_results_are_the_gpus() {
        let c = vec![[f(0.0); 32]; 4];
        for (a, b) in [(f32::INFINITY, 0.0f32), (f32::from_bits(0x7fc0_0001), 1.0)] {
            let a = vec![[u64::from(a.to_bits()); 32]; 4];
            let b = vec![[u64::from(b.to_bits()); 32]; 2];
            for out in mma(0, false, &a, &b, &c) {
                assert!(out.iter().all(|&x| x == prism_types::value::CANONICAL_NAN_F32), "{:#x}", out[0]);
            }
        }
    }

    #[test]
    fn every_matrix_element_has_one_owner() {
        for shape in [0u8, 1] {
            let (na, rows, cols) = if shape == 0 { (4, 16, 8) } else { (8, 16, 16) };
            let mut seen = vec![vec![0; cols]; rows];
            for lane in 0..32 {
                for i in 0..na {
                    let (r, c) = a_pos(shape, i, lane / 4, lane % 4);
                    seen[r][c] += 1;
                }
            }
            assert!(seen.iter().flatten().all(|&n| n == 1), "shape {shape}");
        }
    }
}
