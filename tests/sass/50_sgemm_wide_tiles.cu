// Hand-written CUDA reference for tests/ui/accept/kernels/50_sgemm_wide_tiles.prism: the
// same algorithm, tiles and loop order, written as an expert would (test data for the SASS
// gate, crates/prism_gpu/tests/sass.rs; not part of the product). cuBLAS's FP32 structure
// on Hopper: a 128 x 128 block tile computed by 128 threads of 8 x 16 outputs each (rows
// t / 8 + 16 i, columns (t % 8) * 4 + 32 g .. +3), a three-stage cp.async ring of K steps
// of 8 (copy c = t + 128 q, q = 0, 1, of each operand lands at 4 c: A's row c / 2, k 4 (c %
// 2) .. +3, and B's k c / 32, columns 4 (c % 32) .. +3), computed 4 k at a time: eight
// 128-bit loads of A's rows, then per k four of B's column groups and 128 FMAs.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 16
#define STAGES 3

__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

extern "C" __global__ void __launch_bounds__(128, 2) sgemm_wide(int M, int N, int K, float alpha,
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
    const int thread_row = t / 8;
    const int thread_col = t % 8;
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
                for (int q = 0; q < BM * BK / (4 * 128); ++q) {
                    const int c = t + 128 * q;
                    const int a_m = c / (BK / 4);
                    const int ka = i * BK + (c % (BK / 4)) * 4;
                    const int a_row = min(tile_row + a_m, M - 1);
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(&As[f][4 * c])),
                                 "l"(&A[a_row * K + ka]), "r"(4 * max(0, min(4, K - ka)))
                                 : "memory");
                }
                for (int q = 0; q < BK * BN / (4 * 128); ++q) {
                    const int c = t + 128 * q;
                    const int kb = i * BK + c / (BN / 4);
                    const int b_col = tile_col + (c % (BN / 4)) * 4;
                    const int b_have = max(0, min(4, N - b_col));
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(&Bs[f][4 * c])),
                                 "l"(&B[kb * N + b_col]), "r"(kb < K ? 4 * b_have : 0)
                                 : "memory");
                }
            } else {
                for (int q = 0; q < BM * BK / (4 * 128); ++q) {
                    const int c = t + 128 * q;
                    const int a_m = c / (BK / 4);
                    const int ka = i * BK + (c % (BK / 4)) * 4;
                    const int a_row = min(tile_row + a_m, M - 1);
                    for (int e = 0; e < 4; ++e)
                        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_addr(&As[f][4 * c + e])),
                                     "l"(&A[a_row * K + ka + e]), "r"(ka + e < K ? 4 : 0)
                                     : "memory");
                }
                for (int q = 0; q < BK * BN / (4 * 128); ++q) {
                    const int c = t + 128 * q;
                    const int kb = i * BK + c / (BN / 4);
                    const int b_col = tile_col + (c % (BN / 4)) * 4;
                    const int b_have = max(0, min(4, N - b_col));
                    for (int e = 0; e < 4; ++e)
                        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_addr(&Bs[f][4 * c + e])),
                                     "l"(&B[kb * N + b_col + e]), "r"(kb < K && e < b_have ? 4 : 0)
                                     : "memory");
                }
            }
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        if (i >= STAGES - 1) {
            const int s = (i - (STAGES - 1)) % STAGES;
            #pragma unroll
            for (int h = 0; h < BK; h += 4) {
                float ra[TM][4];
                for (int r = 0; r < TM; ++r) {
                    const float4 v = *reinterpret_cast<const float4*>(&As[s][(thread_row + 16 * r) * BK + h]);
                    ra[r][0] = v.x; ra[r][1] = v.y; ra[r][2] = v.z; ra[r][3] = v.w;
                }
                for (int kk = 0; kk < 4; ++kk) {
                    float rb[TN];
                    for (int g = 0; g < TN / 4; ++g) {
                        const float4 v = *reinterpret_cast<const float4*>(&Bs[s][(h + kk) * BN + 32 * g + thread_col * 4]);
                        rb[4 * g + 0] = v.x; rb[4 * g + 1] = v.y; rb[4 * g + 2] = v.z; rb[4 * g + 3] = v.w;
                    }
                    for (int r = 0; r < TM; ++r)
                        for (int j = 0; j < TN; ++j) acc[r][j] = fmaf(ra[r][kk], rb[j], acc[r][j]);
                }
            }
        }
    }
    #pragma unroll
    for (int r = 0; r < TM; ++r) {
        const int row = tile_row + thread_row + 16 * r;
        #pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
            const int c = tile_col + thread_col * 4 + 32 * g;
            if (row < M && c < N) {
                if (vec_n) {
                    float4* p = reinterpret_cast<float4*>(&C[row * N + c]);
                    float4 v = *p;
                    v.x = fmaf(alpha, acc[r][4 * g + 0], beta * v.x);
                    v.y = fmaf(alpha, acc[r][4 * g + 1], beta * v.y);
                    v.z = fmaf(alpha, acc[r][4 * g + 2], beta * v.z);
                    v.w = fmaf(alpha, acc[r][4 * g + 3], beta * v.w);
                    *p = v;
                } else {
                    for (int j = 0; j < 4; ++j)
                        if (c + j < N) C[row * N + c + j] = fmaf(alpha, acc[r][4 * g + j], beta * C[row * N + c + j]);
                }
            }
        }
    }
}
