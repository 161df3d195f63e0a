// Hand-written CUDA reference for tests/ui/accept/kernels/37_gemm_bf16_pipelined.prism: the
// same algorithm, tiles and loop order, written as an expert would with inline PTX for
// cp.async, ldmatrix and mma (test data for the SASS gate, crates/prism_gpu/tests/sass.rs;
// not part of the product). 128 x 128 block tile, BK = 16, 8 warps of 64 x 32 (4 x 4 mma
// tiles of m16n8k16), a four-stage cp.async ring in one loop: per issue wait_group 2 and
// one __syncthreads (once three steps are in flight), the fill three steps ahead (an empty
// commit past the end) with 16-byte zero-filling copies, and the multiplication of the step
// that landed: A's fragments through ldmatrix.x4, B's two mma tiles at a time through
// ldmatrix.x4.trans. Rows padded to 24 and 136 elements.
#include <cuda_bf16.h>
#define BM 128
#define BN 128
#define BK 16
#define AS 24
#define BS 136
#define STAGES 4

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

extern "C" __global__ void __launch_bounds__(256) gemm_bf16_pipelined(int M, int N, int K, float alpha,
                                                                       const __nv_bfloat16* __restrict__ A,
                                                                       const __nv_bfloat16* __restrict__ B,
                                                                       float beta, float* __restrict__ C)
{
    __shared__ __align__(16) __nv_bfloat16 As[STAGES][BM * AS];
    __shared__ __align__(16) __nv_bfloat16 Bs[STAGES][BK * BS];
    const int tiles_n = (N + BN - 1) / BN;
    const int b = blockIdx.x;
    const int tile_row = (b / tiles_n) * BM;
    const int tile_col = (b % tiles_n) * BN;
    const int t = threadIdx.x;
    const int w = t / 32, l = t % 32;
    const int wm = w / 4, wn = w % 4;
    const int a_r = t / 2, a_k = (t % 2) * 8;
    const int a_row = min(tile_row + a_r, M - 1);
    const int b_k = t / 16, b_c = (t % 16) * 8;
    const int b_col = tile_col + b_c;
    const int b_have = 2 * max(0, min(8, N - b_col));
    const int steps = (K + BK - 1) / BK;
    float acc[4][4][4] = {};
    for (int i = 0; i < steps + STAGES - 1; ++i) {
        if (i >= STAGES - 1) {
            asm volatile("cp.async.wait_group 2;" ::: "memory");
            __syncthreads();
        }
        if (i < steps) {
            const int f = i % STAGES;
            const int ka = i * BK + a_k, kb = i * BK + b_k;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(&As[f][a_r * AS + a_k])),
                         "l"(&A[a_row * K + ka]), "r"(2 * max(0, min(8, K - ka)))
                         : "memory");
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(&Bs[f][b_k * BS + b_c])),
                         "l"(&B[kb * N + b_col]), "r"(kb < K ? b_have : 0)
                         : "memory");
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        if (i >= STAGES - 1) {
            const int s = (i - (STAGES - 1)) % STAGES;
            unsigned fa[4][4], fb[4][2];
            for (int mi = 0; mi < 4; ++mi) {
                const __nv_bfloat16* p = &As[s][(wm * 64 + mi * 16 + l % 8 + 8 * ((l / 8) % 2)) * AS + 8 * (l / 16)];
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                             : "=r"(fa[mi][0]), "=r"(fa[mi][1]), "=r"(fa[mi][2]), "=r"(fa[mi][3])
                             : "r"(smem_addr(p)));
            }
            for (int nj = 0; nj < 2; ++nj) {
                const __nv_bfloat16* p = &Bs[s][(l % 16) * BS + wn * 32 + nj * 16 + 8 * (l / 16)];
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                             : "=r"(fb[2 * nj][0]), "=r"(fb[2 * nj][1]), "=r"(fb[2 * nj + 1][0]), "=r"(fb[2 * nj + 1][1])
                             : "r"(smem_addr(p)));
            }
            for (int mi = 0; mi < 4; ++mi)
                for (int ni = 0; ni < 4; ++ni)
                    asm volatile(
                        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                        "{%8, %9}, {%0, %1, %2, %3};"
                        : "+f"(acc[mi][ni][0]), "+f"(acc[mi][ni][1]), "+f"(acc[mi][ni][2]), "+f"(acc[mi][ni][3])
                        : "r"(fa[mi][0]), "r"(fa[mi][1]), "r"(fa[mi][2]), "r"(fa[mi][3]), "r"(fb[ni][0]),
                          "r"(fb[ni][1]));
        }
    }
    const int g = l / 4, q = l % 4;
    float* Cw = C + (tile_row + wm * 64 + g) * N + tile_col + wn * 32 + 2 * q;
    for (int mi = 0; mi < 4; ++mi)
        for (int ni = 0; ni < 4; ++ni)
            for (int e = 0; e < 4; ++e) {
                const int i = mi * 16 + 8 * (e / 2), j = ni * 8 + e % 2;
                if (tile_row + wm * 64 + g + i < M && tile_col + wn * 32 + 2 * q + j < N)
                    Cw[i * N + j] = fmaf(alpha, acc[mi][ni][e], beta * Cw[i * N + j]);
            }
}
