// Hand-written CUDA reference for tests/ui/accept/kernels/46_sgemm_deep_k.prism: the
// same algorithm, tiles and loop order, written as an expert would (test data for the SASS
// gate, crates/prism_gpu/tests/sass.rs; not part of the product). Kernel 36's reference
// (128 x 128 block tile, 8 x 8 register tile per thread, three-stage cp.async ring, two
// blocks per SM) with K steps of BK = 32: each thread issues BK / 8 16-byte copies of A (its
// half of its row's step, k .. k + 15 or k + 16 .. k + 31, as four-byte copies when K is not
// a multiple of 4) and BK / 8 of B (rows t / 32 + 8q) per step, and computes the step in
// unrolled parts of KH = 8 k, holding 8 x 8 values of A at a time.
#define BM 128
#define BN 128
#define BK 32
#define KH 8
#define TM 8
#define TN 8
#define STAGES 3

__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

extern "C" __global__ void __launch_bounds__(256, 2) sgemm_deep_k(int M, int N, int K, float alpha,
                                                                   const float* __restrict__ A,
                                                                   const float* __restrict__ B,
                                                                   float beta, float* __restrict__ C)
{
    __shared__ __align__(128) float As[STAGES][BM * BK];
    __shared__ __align__(128) float Bs[STAGES][BK * BN];
    const int tiles_n = (N + BN - 1) / BN;
    const int b = blockIdx.x;
    const int tile_row = (b / tiles_n) * BM;
    const int tile_col = (b % tiles_n) * BN;
    const int t = threadIdx.x;
    const int thread_row = t / (BN / TN);
    const int thread_col = t % (BN / TN);
    const int a_m = t / 2;
    const int a_k = (t % 2) * (BK / 2);
    const int a_row = min(tile_row + a_m, M - 1);
    const int b_k = t / 32;
    const int b_n = (t % 32) * 4;
    const int b_col = tile_col + b_n;
    const int b_have = max(0, min(4, N - b_col));
    const bool vec_a = K % 4 == 0;
    const bool vec_n = N % 4 == 0;
    const int steps = (K + BK - 1) / BK;
    float acc[TM][TN] = {};
    // Issue i fills step i and computes step i - (STAGES - 1): the fill is written once.
    for (int i = 0; i < steps + STAGES - 1; ++i) {
        if (i >= STAGES - 1) {
            asm volatile("cp.async.wait_group 1;" ::: "memory");
            __syncthreads();
        }
        if (i < steps) {
            const int f = i % STAGES;
            // One test per fill (ptxas predicates a test per copy, and both paths issue).
            if (vec_a && vec_n) {
                for (int q = 0; q < BK / 8; ++q) {
                    const int ka = i * BK + a_k + 4 * q;
                    const int kb = i * BK + b_k + 8 * q;
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(&As[f][a_m * BK + a_k + 4 * q])),
                                 "l"(&A[a_row * K + ka]), "r"(4 * max(0, min(4, K - ka)))
                                 : "memory");
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(&Bs[f][(b_k + 8 * q) * BN + b_n])),
                                 "l"(&B[kb * N + b_col]), "r"(kb < K ? 4 * b_have : 0)
                                 : "memory");
                }
            } else {
                for (int q = 0; q < BK / 8; ++q) {
                    const int ka = i * BK + a_k + 4 * q;
                    const int kb = i * BK + b_k + 8 * q;
                    for (int e = 0; e < 4; ++e)
                        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(
                                         smem_addr(&As[f][a_m * BK + a_k + 4 * q + e])),
                                     "l"(&A[a_row * K + ka + e]), "r"(ka + e < K ? 4 : 0)
                                     : "memory");
                    for (int e = 0; e < 4; ++e)
                        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(
                                         smem_addr(&Bs[f][(b_k + 8 * q) * BN + b_n + e])),
                                     "l"(&B[kb * N + b_col + e]), "r"(kb < K && e < b_have ? 4 : 0)
                                     : "memory");
                }
            }
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        if (i >= STAGES - 1) {
            const int s = (i - (STAGES - 1)) % STAGES;
            #pragma unroll
            for (int h0 = 0; h0 < BK; h0 += KH) {
            float ra[TM][KH];
            for (int r = 0; r < TM; ++r) {
                const float4 lo = *reinterpret_cast<const float4*>(&As[s][(thread_row * TM + r) * BK + h0]);
                const float4 hi = *reinterpret_cast<const float4*>(&As[s][(thread_row * TM + r) * BK + h0 + 4]);
                ra[r][0] = lo.x; ra[r][1] = lo.y; ra[r][2] = lo.z; ra[r][3] = lo.w;
                ra[r][4] = hi.x; ra[r][5] = hi.y; ra[r][6] = hi.z; ra[r][7] = hi.w;
            }
            for (int kk = 0; kk < KH; ++kk) {
                const float4 lo = *reinterpret_cast<const float4*>(&Bs[s][(h0 + kk) * BN + thread_col * 4]);
                const float4 hi = *reinterpret_cast<const float4*>(&Bs[s][(h0 + kk) * BN + BN / 2 + thread_col * 4]);
                const float rb[TN] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
                for (int r = 0; r < TM; ++r)
                    for (int j = 0; j < TN; ++j) acc[r][j] = fmaf(ra[r][kk], rb[j], acc[r][j]);
            }
            }
        }
    }
    for (int r = 0; r < TM; ++r) {
        const int row = tile_row + thread_row * TM + r;
        for (int h = 0; h < TN; h += 4) {
            const int c = tile_col + thread_col * 4 + h * 16;
            if (row < M && c < N) {
                if (vec_n) {
                    float4* p = reinterpret_cast<float4*>(&C[row * N + c]);
                    float4 v = *p;
                    v.x = fmaf(alpha, acc[r][h + 0], beta * v.x);
                    v.y = fmaf(alpha, acc[r][h + 1], beta * v.y);
                    v.z = fmaf(alpha, acc[r][h + 2], beta * v.z);
                    v.w = fmaf(alpha, acc[r][h + 3], beta * v.w);
                    *p = v;
                } else {
                    for (int j = 0; j < 4; ++j)
                        if (c + j < N) C[row * N + c + j] = fmaf(alpha, acc[r][h + j], beta * C[row * N + c + j]);
                }
            }
        }
    }
}
