//! The kernel templates of [`super::generate`]: one method per kernel shape, each writing one
//! `@prism("global")` function of module `k` that uses the module's libraries.

use super::{Gen, Module};
use std::fmt::Write;

impl Gen {
    pub(super) fn sum_items(&mut self, m: &Module) {
        let k = m.k;
        let t = m.elem;
        let fold = if t == "int" && self.rng.chance(50) { "acc = max(acc, items[j])" } else { "acc += items[j]" };
        self.emit(&format!(
            r#"
# Each block loads ITEMS_{k} items per thread and writes their sum per thread.
@prism("global")
@requires(grid[1], block[1], thread[32])
def sum_items_{k}(input : ptr(const({t})) @ grid[1], sums : ptr({t}) @ grid[1], block_items : int @ grid[1]):
    with group(grid[1]):
        b : int @ block[1] = id()
        g : int @ thread[1] = id()
        with partition(input, p=block[1], f=lambda i: b * block_items + i) as tile:
            with partition(sums, p=thread[1], f=lambda i: g + i) as my_sum:
                with group(block[1]):
                    items : {t}[ITEMS_{k}] @ thread[1]
                    block_load_{k}(tile, items, ITEMS_{k})
                    with group(thread[1]):
                        acc : {t} = 0
                        for j in range(0, ITEMS_{k}, 1):
                            {fold}
                        my_sum[0] = acc
"#
        ));
    }

    pub(super) fn sgemm_naive(&mut self, m: &Module) {
        let k = m.k;
        let j = self.callee_module(k);
        let epi = match self.rng.below(3) {
            0 => "alpha * tmp + beta * C_thrd[x * N + y]".to_string(),
            1 => format!("act_{j}(alpha * tmp) + beta * C_thrd[x * N + y]"),
            _ => {
                let vars = vec!["tmp".to_string(), "alpha".to_string(), "beta".to_string()];
                self.float_rhs(&vars, 3, k)
            }
        };
        self.emit(&format!(
            r#"
# C = alpha * A @ B + beta * C, one element per thread.
@prism("global")
@requires(grid[1], block[1], thread[1])
def sgemm_naive_{k}(
    M : int @ grid[1],
    N : int @ grid[1],
    K : int @ grid[1],
    alpha : float @ grid[1],
    A : ptr(const(float)) @ grid[1],
    B : ptr(const(float)) @ grid[1],
    beta : float @ grid[1],
    C : ptr(float) @ grid[1],
    block_size : int @ grid[1]):
    with group(grid[1]):
        bid : int @ block[1] = id()
        with partition(C, p=block[1], f=lambda i: i) as C_blk:
            with group(block[1]):
                tid : int @ thread[1] = bid * block_size + id()
                with partition(C_blk, p=thread[1], f=lambda i: i) as C_thrd:
                    x : const(int) @ thread[1] = tid / N
                    y : const(int) @ thread[1] = tid % N
                    with group(thread[1]):
                        if x < M:
                            tmp : float @ thread[1] = 0
                            for i in range(0, K, 1):
                                tmp += A[x * K + i] * B[i * N + y]
                            C_thrd[x * N + y] = {epi}
    return
"#
        ));
    }

    pub(super) fn sgemm_tiled(&mut self, m: &Module) {
        let k = m.k;
        let j = self.callee_module(k);
        let index = self.rng.chance(50);
        let out_idx = if index { format!("index_{j}(row, col, N)") } else { "row * N + col".to_string() };
        let acc_update = if self.rng.chance(50) {
            "acc += As[ty * TILE_K + kk] * Bs[kk * TILE_K + tx]".replace("TILE_K", &format!("TILE_{k}"))
        } else {
            "acc = fma(As[ty * TILE_K + kk], Bs[kk * TILE_K + tx], acc)".replace("TILE_K", &format!("TILE_{k}"))
        };
        self.emit(&format!(
            r#"
# Shared-memory tiled sgemm: each block computes a TILE_{k} x TILE_{k} tile of C.
@prism("global")
@requires(grid[1], block[1], thread[TILE_{k} * TILE_{k}], smem=2 * TILE_{k} * TILE_{k} * 4)
def sgemm_tiled_{k}(
    M : int @ grid[1], N : int @ grid[1], K : int @ grid[1],
    A : ptr(const(float)) @ grid[1],
    B : ptr(const(float)) @ grid[1],
    C : ptr(float) @ grid[1]):
    with group(grid[1]):
        bid : int @ block[1] = id()
        blocks_n : const(int) = (N + TILE_{k} - 1) / TILE_{k}
        brow : int @ block[1] = bid / blocks_n
        bcol : int @ block[1] = bid % blocks_n
        with partition(C, p=block[1], f=lambda i: i) as C_blk:
            with group(block[1]):
                As : shared(float[TILE_{k} * TILE_{k}]) @ block[1]
                Bs : shared(float[TILE_{k} * TILE_{k}]) @ block[1]
                t : int @ thread[1] = id() % (TILE_{k} * TILE_{k})
                ty : int @ thread[1] = t / TILE_{k}
                tx : int @ thread[1] = t % TILE_{k}
                acc : float @ thread[1] = 0.0
                for kt in range(0, (K + TILE_{k} - 1) / TILE_{k}, 1):
                    with partition(As, p=thread[1], f=lambda i: t + i) as As_t:
                        with group(thread[1]):
                            As_t[0] = A[(brow * TILE_{k} + ty) * K + kt * TILE_{k} + tx]
                    with partition(Bs, p=thread[1], f=lambda i: t + i) as Bs_t:
                        with group(thread[1]):
                            Bs_t[0] = B[(kt * TILE_{k} + ty) * N + bcol * TILE_{k} + tx]
                    with group(thread[1]):
                        for kk in range(0, TILE_{k}, 1):
                            {acc_update}
                with partition(C_blk, p=thread[1], f=lambda i: i) as C_t:
                    with group(thread[1]):
                        row : int = brow * TILE_{k} + ty
                        col : int = bcol * TILE_{k} + tx
                        if row < M and col < N:
                            C_t[{out_idx}] = acc
"#
        ));
    }

    pub(super) fn mma_kernel(&mut self, m: &Module) {
        let k = m.k;
        let (et, mk, a_per, b_per) = if m.f16 { ("half", 16, 8, 4) } else { ("float", 8, 4, 2) };
        let zero = if self.rng.chance(50) { "0" } else { "0.0" };
        self.emit(&format!(
            r#"
# A naive tensor-core matmul: each block computes one 16x8 tile of C through mma_tile_{k}.
@prism("global")
@requires(grid[1], block[1], thread[32], smem=1280)
def mma_matmul_{k}(
    A : ptr(const({et})) @ grid[1],
    B : ptr(const({et})) @ grid[1],
    C : ptr(float) @ grid[1],
    M : int @ grid[1],
    N : int @ grid[1],
    K : int @ grid[1]):
    MMA_K : constexpr(int) = {mk}
    MMA_N : constexpr(int) = 8
    with group(grid[1]):
        num_blocks_n : const(int) = (N + 8 - 1) / 8
        blk_row : const(int) @ block[1] = (id() / num_blocks_n) * 16
        blk_col : const(int) @ block[1] = (id() % num_blocks_n) * 8
        offset = lambda x: blk_row * N + blk_col + x
        with partition(C, p=block[1], f=offset) as C_blk:
            with group(block[1]):
                A_smem : shared({et}[16 * MMA_K]) @ block[1]
                B_smem : shared({et}[MMA_K * 8]) @ block[1]
                C_smem : shared(float[16 * 8]) @ block[1]
                idx = lambda x: id() * 4 + x
                with partition(C_smem, p=thread[1], f=idx) as C_th:
                    for i in range(0, 4, 1):
                        with group(thread[1]):
                            C_th[i] = {zero}
                for kt in range(0, K / MMA_K, 1):
                    for j in range(0, {a_per}, 1):
                        flat_a : int @ thread[1] = id() * {a_per} + j
                        row : int @ thread[1] = flat_a / MMA_K
                        col : int @ thread[1] = flat_a % MMA_K
                        global_row : int @ thread[1] = blk_row + row
                        global_col : int @ thread[1] = kt * MMA_K + col
                        with partition(A_smem, p=thread[1], f=lambda x: flat_a + x) as A_th:
                            with group(thread[1]):
                                A_th[0] = A[global_row * K + global_col]
                    for j in range(0, {b_per}, 1):
                        flat_b : int @ thread[1] = id() * {b_per} + j
                        global_row_b : int @ thread[1] = kt * MMA_K + flat_b / MMA_N
                        global_col_b : int @ thread[1] = blk_col + flat_b % MMA_N
                        with partition(B_smem, p=thread[1], f=lambda x: flat_b + x) as B_th:
                            with group(thread[1]):
                                B_th[0] = B[global_row_b * N + global_col_b]
                    with claim(C_smem, p=thread[32]) as Cs_warp:
                        match split(thread):
                            case 32:
                                mma_tile_{k}(A_smem, B_smem, Cs_warp, MMA_K, MMA_N)
                for j in range(0, 4, 1):
                    flat_idx_c : int @ thread[1] = id() * 4 + j
                    row_c : int @ thread[1] = flat_idx_c / MMA_N
                    col_c : int @ thread[1] = flat_idx_c % MMA_N
                    idx = lambda x: row_c * N + col_c + x
                    with partition(C_blk, p=thread[1], f=idx) as C_th:
                        with group(thread[1]):
                            C_th[0] = C_smem[row_c * MMA_N + col_c]
    return
"#
        ));
    }

    pub(super) fn histogram(&mut self, m: &Module) {
        let k = m.k;
        let key = match self.rng.below(3) {
            0 => format!("v & (BINS_{k} - 1)"),
            1 => format!("abs(v) % BINS_{k}"),
            _ => format!("(v >> {}) & (BINS_{k} - 1)", self.rng.range(1, 4)),
        };
        let cap = self.rng.range(4, 64);
        self.emit(&format!(
            r#"
# A histogram: per-block bins in shared memory, merged into the global bins with atomics.
@prism("global")
@requires(grid[1], block[1], thread[32], smem=BINS_{k} * 4)
def histogram_{k}(
    data : ptr(const(int)) @ grid[1],
    hist : ptr(int) @ grid[1],
    n : int @ grid[1],
    stride : int @ grid[1]):
    with group(grid[1]):
        g : int @ thread[1] = id()
        with group(block[1]):
            bins : shared(int[BINS_{k}]) @ block[1]
            t : int @ thread[1] = id()
            with partition(bins, p=thread[1], f=lambda i: t + i) as mine:
                with group(thread[1]):
                    if t < BINS_{k}:
                        mine[0] = 0
            with group(thread[1]):
                i : int = g
                rounds : int = 0
                while i < n:
                    v : int = data[i]
                    atomic_add(bins[{key}], 1)
                    i += stride
                    rounds += 1
                    if rounds > {cap}:
                        break
            with group(thread[1]):
                if t < BINS_{k}:
                    old : int = atomic_add(hist[t], bins[t])
"#
        ));
    }

    pub(super) fn pipeline(&mut self, m: &Module) {
        let k = m.k;
        let j = self.callee_module(k);
        let per = self.rng.pick(&["1", "2", "4"]);
        let slots = 64;
        self.emit(&format!(
            r#"
# Warp roles: warp 0 stages a tile into shared memory (it owns the claimed buffer), warp 1
# counts; then every thread writes one staged value back out.
@prism("global")
@requires(grid[1], block[1], thread[32], warp[2], smem={bytes})
def pipeline_{k}(
    src : ptr(const(float)) @ grid[1],
    dst : ptr(float) @ grid[1],
    counts : ptr(int) @ grid[1],
    limit : int @ grid[1]):
    with group(grid[1]):
        b : int @ block[1] = id()
        with partition(dst, p=block[1], f=lambda i: b * {slots} + i) as out_blk:
            with group(block[1]):
                stage : shared(float[{slots}]) @ block[1]
                with claim(stage, p=thread[32]) as producer_buf:
                    match split(warp):
                        case 1:
                            lane : int @ thread[1] = id()
                            with partition(producer_buf, p=thread[1], f=lambda i: lane * {per} + i) as mine:
                                with group(thread[1]):
                                    for q in range(0, {per}, 1):
                                        mine[q] = act_{j}(src[b * {slots} + lane * {per} + q] * SCALE_{k})
                        case 1:
                            l2 : int @ thread[1] = id()
                            c : int @ thread[32] = warp_count_{k}(l2 + b, limit)
                            with group(thread[1]):
                                if l2 == 0:
                                    atomic_add(counts[b], c)
                t : int @ thread[1] = id()
                with partition(out_blk, p=thread[1], f=lambda i: t + i) as out_t:
                    with group(thread[1]):
                        if t < {slots}:
                            out_t[0] = stage[t]
"#,
            bytes = slots * 4
        ));
    }

    pub(super) fn fused(&mut self, m: &Module) {
        let k = m.k;
        let tpb = self.rng.pick(&["32", "64", "128", "256"]);
        let mut vars = vec!["v0".to_string(), "alpha".to_string(), format!("SCALE_{k}")];
        let mut body = String::new();
        let ind = "                    ";
        for i in 1..self.rng.range(3, 10) {
            if self.rng.chance(25) {
                let a = self.rng.below(vars.len());
                let b = (a + 1 + self.rng.below(vars.len() - 1)) % vars.len();
                let (a, b) = (vars[a].clone(), vars[b].clone());
                let e1 = self.float_rhs(&vars, 2, k);
                let e2 = self.float_rhs(&vars, 2, k);
                let _ = writeln!(body, "{ind}v{i} : float = 0.0");
                let _ = writeln!(body, "{ind}if {a} > {b}:");
                let _ = writeln!(body, "{ind}    v{i} = {e1}");
                let _ = writeln!(body, "{ind}else:");
                let _ = writeln!(body, "{ind}    v{i} += {e2}");
            } else if self.rng.chance(20) {
                let e = self.float_rhs(&vars, 2, k);
                let n = self.rng.range(2, 8);
                let _ = writeln!(body, "{ind}v{i} : float = 0.0");
                let _ = writeln!(body, "{ind}for r in range(0, {n}, 1):");
                let _ = writeln!(body, "{ind}    v{i} = v{i} * 0.5 + {e}");
            } else {
                let e = self.float_rhs(&vars, 3, k);
                let _ = writeln!(body, "{ind}v{i} : float = {e}");
            }
            vars.push(format!("v{i}"));
        }
        let last = vars.last().expect("a value").clone();
        let other = vars[self.rng.below(vars.len() - 1)].clone();
        let hint =
            if self.rng.chance(30) { format!("\n{ind}unsafe(\"__builtin_assume(n > 0);\")") } else { String::new() };
        self.emit(&format!(
            r#"
# A fused element-wise chain, one element per thread.
@prism("global")
@requires(grid[1], block[1], thread[{tpb}])
@launch_bounds({tpb})
def fused_{k}(x : ptr(const(float)) @ grid[1], y : ptr(float) @ grid[1], n : int @ grid[1], alpha : float @ grid[1]):
    with group(grid[1]):
        g : int @ thread[1] = id()
        with partition(y, p=thread[1], f=lambda i: g + i) as y_t:
            with group(thread[1]):
                if g < n:{hint}
                    v0 : float = x[g]
{body}                    y_t[0] = {last} * alpha + {other}
"#
        ));
    }

    pub(super) fn stencil(&mut self, m: &Module) {
        let k = m.k;
        let r = self.rng.range(1, 3);
        let taps = 2 * r + 1;
        let mut weights = String::new();
        for d in 0..taps {
            let w = self.float_lit();
            let _ = writeln!(weights, "                w[{d}] = {w}");
        }
        self.emit(&format!(
            r#"
# A {taps}-point stencil, ITEMS_{k} outputs per thread, with a squared term per output.
@prism("global")
@requires(grid[1], block[1], thread[32])
def stencil_{k}(u : ptr(const(float)) @ grid[1], v : ptr(float) @ grid[1], n : int @ grid[1]):
    with group(grid[1]):
        g : int @ thread[1] = id()
        with partition(v, p=thread[1], f=lambda i: g * ITEMS_{k} + i) as out:
            with group(thread[1]):
                w : float[{taps}] @ thread[1]
{weights}                vals : float[ITEMS_{k}][2] @ thread[1]
                base : int = g * ITEMS_{k}
                for i in range(0, ITEMS_{k}, 1):
                    s : float = 0.0
                    for d in range(0, {taps}, 1):
                        j : int = base + i + d - {r}
                        if j < 0 or j >= n:
                            continue
                        s += w[d] * u[j]
                    vals[i, 0] = s
                    vals[i, 1] = s * s
                for i in range(0, ITEMS_{k}, 1):
                    if base + i < n:
                        out[i] = vals[i, 0] + SCALE_{k} * vals[i, 1]
"#
        ));
    }

    pub(super) fn transpose(&mut self, m: &Module) {
        let k = m.k;
        self.emit(&format!(
            r#"
# A transpose through a padded shared tile.
@prism("global")
@requires(grid[1], block[1], thread[TILE_{k} * TILE_{k}], smem=TILE_{k} * (TILE_{k} + 1) * 4)
def transpose_{k}(
    src : ptr(const(float)) @ grid[1],
    dst : ptr(float) @ grid[1],
    rows : int @ grid[1],
    cols : int @ grid[1]):
    with group(grid[1]):
        b : int @ block[1] = id()
        tiles_x : const(int) = (cols + TILE_{k} - 1) / TILE_{k}
        bx : int @ block[1] = b % tiles_x
        by : int @ block[1] = b / tiles_x
        with partition(dst, p=thread[1], f=lambda i: i) as dst_t:
            with group(block[1]):
                tile : shared(float[TILE_{k} * (TILE_{k} + 1)]) @ block[1]
                t : int @ thread[1] = id() % (TILE_{k} * TILE_{k})
                tx : int @ thread[1] = t % TILE_{k}
                ty : int @ thread[1] = t / TILE_{k}
                pitch = lambda r, c: (ty + r) * (TILE_{k} + 1) + tx + c
                with partition(tile, p=thread[1], f=pitch) as mine:
                    with group(thread[1]):
                        in_row : int = by * TILE_{k} + ty
                        in_col : int = bx * TILE_{k} + tx
                        if in_row < rows and in_col < cols:
                            mine[0, 0] = src[in_row * cols + in_col]
                with group(thread[1]):
                    out_row : int = bx * TILE_{k} + ty
                    out_col : int = by * TILE_{k} + tx
                    if out_row < cols and out_col < rows:
                        dst_t[out_row * rows + out_col] = tile[tx * (TILE_{k} + 1) + ty]
"#
        ));
    }

    pub(super) fn reduce(&mut self, m: &Module) {
        let k = m.k;
        let j = self.callee_module(k);
        let pre = if self.rng.chance(50) { format!("act_{j}(x[g])") } else { "x[g] * x[g]".to_string() };
        self.emit(&format!(
            r#"
# One partial sum per block, written by the block's first thread.
@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
def reduce_{k}(x : ptr(const(float)) @ grid[1], out : ptr(float) @ grid[1], n : int @ grid[1], warps : int @ grid[1]):
    with group(grid[1]):
        b : int @ block[1] = id()
        g : int @ thread[1] = id()
        with partition(out, p=block[1], f=lambda i: b + i) as out_b:
            with group(block[1]):
                v : float @ thread[1] = 0.0
                with group(thread[1]):
                    if g < n:
                        v = {pre}
                total : float @ block[1] = block_sum_{k}(v, warps)
                with claim(out_b, p=thread[1]) as writer:
                    match split(thread):
                        case 1:
                            writer[0] = total
"#
        ));
    }

    pub(super) fn warp_sums(&mut self, m: &Module) {
        let k = m.k;
        let t = m.elem;
        self.emit(&format!(
            r#"
# Each warp loads ITEMS_{k} items per lane and writes their sum per lane.
@prism("global")
@requires(grid[1], block[1], thread[32])
def warp_sums_{k}(input : ptr(const({t})) @ grid[1], sums : ptr({t}) @ grid[1]):
    with group(grid[1]):
        w : int @ thread[32] = id()
        g : int @ thread[1] = id()
        with partition(input, p=thread[32], f=lambda i: w * 32 * ITEMS_{k} + i) as tile:
            with partition(sums, p=thread[1], f=lambda i: g + i) as my_sum:
                with group(thread[32]):
                    items : {t}[ITEMS_{k}] @ thread[1]
                    warp_load_{k}(tile, items, ITEMS_{k})
                    with group(thread[1]):
                        total : {t} = 0
                        for j in range(0, ITEMS_{k}, 1):
                            total += items[j]
                        my_sum[0] = total
"#
        ));
    }
}
