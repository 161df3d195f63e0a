// Hand-written CUDA reference for tests/ui/accept/kernels/44_sgemm_warp_tiled.prism: the
// same algorithm, tiles and loop order, written as an expert would (test data for the SASS
// gate, crates/prism_gpu/tests/sass.rs; not part of the product). Kernel 36's three-stage
// cp.async ring (per issue wait_group 1 and one __syncthreads once two steps are in flight,
// the fill two steps ahead, an empty commit past the end) with warp tiling as in CUTLASS's
// SIMT gemm: 128 x 128 x 8 block tile, 8 warps of 32 x 64 (4 along M, 2 along N), each
// warp tile 2 x 2 sub-tiles of 16 x 32 in which the lanes stand as 4 x 8 and own 4 x 4
// outputs. Per k a thread reads its A fragment (two float4 from the k-major A slab) and its
// B fragment (two float4): a warp reads 64 and 128 contiguous bytes, broadcast, no bank
// conflicts. A is transposed into the slab by 4-byte copies (thread t: row t % 128, k =
// t / 128 + 2e); B is copied as in 36. Tails: every copy passes cp.async's src-size (zero
// fill), B in 16-byte copies when N is a multiple of 4 and four 4-byte copies otherwise;
// C is updated as float4 when N is a multiple of 4 and element by element otherwise. Two
// blocks per SM.
#define BM 128
#define BN 128
#define BK 8
#define WM 32
#define WN 64
#define WMITER 2
#define WNITER 2
#define WSUBM (WM / WMITER)
#define WSUBN (WN / WNITER)
#define TM 4
#define TN 4
#define STAGES 3

__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

extern "C" __global__ void __launch_bounds__(256, 2) sgemm_warp_tiled(int M, int N, int K, float alpha,
                                                                    const float* __restrict__ A,
                                                                    const float* __restrict__ B,
                                                                    float beta, float* __restrict__ C)
{
    __shared__ __align__(128) float As[STAGES][BK * BM];
    __shared__ __align__(128) float Bs[STAGES][BK * BN];
    const int tiles_n = (N + BN - 1) / BN;
    const int b = blockIdx.x;
    const int tile_row = (b / tiles_n) * BM;
    const int tile_col = (b % tiles_n) * BN;
    const int t = threadIdx.x;
    const int w = t / 32;
    const int warp_row = w / (BN / WN);
    const int warp_col = w % (BN / WN);
    const int lane = t % 32;
    const int lr = lane / (WSUBN / TN);
    const int lc = lane % (WSUBN / TN);
    const int a_m = t % BM;
    const int a_k = t / BM;
    const int a_row = min(tile_row + a_m, M - 1);
    const int b_k = t / 32;
    const int b_n = (t % 32) * 4;
    const int b_col = tile_col + b_n;
    const int b_have = max(0, min(4, N - b_col));
    const bool vec_n = N % 4 == 0;
    const int a_frag = warp_row * WM + lr * TM;
    const int b_frag = warp_col * WN + lc * TN;
    const int steps = (K + BK - 1) / BK;
    float acc[WMITER * TM][WNITER * TN] = {};
    // Issue i fills step i and computes step i - (STAGES - 1): the fill is written once.
    for (int i = 0; i < steps + STAGES - 1; ++i) {
        if (i >= STAGES - 1) {
            asm volatile("cp.async.wait_group 1;" ::: "memory");
            __syncthreads();
        }
        if (i < steps) {
            const int f = i % STAGES;
            const int kb = i * BK + b_k;
            for (int e = 0; e < 4; ++e) {
                const int ka = i * BK + a_k + 2 * e;
                asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(
                                 smem_addr(&As[f][(a_k + 2 * e) * BM + a_m])),
                             "l"(&A[a_row * K + ka]), "r"(ka < K ? 4 : 0)
                             : "memory");
            }
            if (vec_n) {
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(&Bs[f][b_k * BN + b_n])),
                             "l"(&B[kb * N + b_col]), "r"(kb < K ? 4 * b_have : 0)
                             : "memory");
            } else {
                for (int e = 0; e < 4; ++e)
                    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(
                                     smem_addr(&Bs[f][b_k * BN + b_n + e])),
                                 "l"(&B[kb * N + b_col + e]), "r"(kb < K && e < b_have ? 4 : 0)
                                 : "memory");
            }
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        if (i >= STAGES - 1) {
            const int s = (i - (STAGES - 1)) % STAGES;
            float ra[BK][WMITER * TM];
            for (int kk = 0; kk < BK; ++kk)
                for (int wm = 0; wm < WMITER; ++wm) {
                    const float4 v = *reinterpret_cast<const float4*>(&As[s][kk * BM + a_frag + wm * WSUBM]);
                    ra[kk][wm * TM + 0] = v.x; ra[kk][wm * TM + 1] = v.y; ra[kk][wm * TM + 2] = v.z; ra[kk][wm * TM + 3] = v.w;
                }
            for (int kk = 0; kk < BK; ++kk) {
                float rb[WNITER * TN];
                for (int wn = 0; wn < WNITER; ++wn) {
                    const float4 v = *reinterpret_cast<const float4*>(&Bs[s][kk * BN + b_frag + wn * WSUBN]);
                    rb[wn * TN + 0] = v.x; rb[wn * TN + 1] = v.y; rb[wn * TN + 2] = v.z; rb[wn * TN + 3] = v.w;
                }
                for (int x = 0; x < WMITER * TM; ++x)
                    for (int y = 0; y < WNITER * TN; ++y) acc[x][y] = fmaf(ra[kk][x], rb[y], acc[x][y]);
            }
        }
    }
    for (int wm = 0; wm < WMITER; ++wm) {
        for (int r = 0; r < TM; ++r) {
            const int row = tile_row + a_frag + wm * WSUBM + r;
            for (int wn = 0; wn < WNITER; ++wn) {
                const int c = tile_col + b_frag + wn * WSUBN;
                if (row < M && c < N) {
                    const float* a = acc[wm * TM + r] + wn * TN;
                    if (vec_n) {
                        float4* p = reinterpret_cast<float4*>(&C[row * N + c]);
                        float4 v = *p;
                        v.x = fmaf(alpha, a[0], beta * v.x);
                        v.y = fmaf(alpha, a[1], beta * v.y);
                        v.z = fmaf(alpha, a[2], beta * v.z);
                        v.w = fmaf(alpha, a[3], beta * v.w);
                        *p = v;
                    } else {
                        for (int j = 0; j < 4; ++j)
                            if (c + j < N) C[row * N + c + j] = fmaf(alpha, a[j], beta * C[row * N + c + j]);
                    }
                }
            }
        }
    }
}
