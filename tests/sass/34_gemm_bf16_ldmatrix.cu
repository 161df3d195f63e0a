// Hand-written CUDA reference for tests/ui/accept/kernels/34_gemm_bf16_ldmatrix.prism: the
// same algorithm, tiles and loop order, written as an expert would with inline PTX for
// ldmatrix and mma (test data for the SASS gate, crates/prism_gpu/tests/sass.rs; not part of
// the product). 64 x 64 block tile, BK = 16, 4 warps of 32 x 32 (2 x 4 mma tiles of
// m16n8k16); 16-byte staging loads when K (for A) or N (for B) is a multiple of 8, element
// by element (zeros outside) otherwise; rows padded to 24 and 72 elements.
#include <cuda_bf16.h>
#define BM 64
#define BN 64
#define BK 16
#define AS 24
#define BS 72

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

extern "C" __global__ void __launch_bounds__(128) gemm_bf16_ldmatrix(int M, int N, int K, float alpha,
                                                                      const __nv_bfloat16* __restrict__ A,
                                                                      const __nv_bfloat16* __restrict__ B,
                                                                      float beta, float* __restrict__ C)
{
    __shared__ __align__(16) __nv_bfloat16 As[BM * AS];
    __shared__ __align__(16) __nv_bfloat16 Bs[BK * BS];
    const int tiles_n = (N + BN - 1) / BN;
    const int b = blockIdx.x;
    const int tile_row = (b / tiles_n) * BM;
    const int tile_col = (b % tiles_n) * BN;
    const int t = threadIdx.x;
    const int w = t / 32, l = t % 32;
    const int wm = w / 2, wn = w % 2;
    const int a_r = t / 2, a_k = (t % 2) * 8;
    const int b_k = t / 8, b_c = (t % 8) * 8;
    float acc[2][4][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int r = tile_row + a_r;
        uint4 av;
        if (K % 8 == 0 && r < M && k0 + a_k < K) {
            av = *reinterpret_cast<const uint4*>(&A[r * K + k0 + a_k]);
        } else {
            __nv_bfloat16 e[8];
            for (int s = 0; s < 8; ++s) e[s] = (r < M && k0 + a_k + s < K) ? A[r * K + k0 + a_k + s] : __float2bfloat16(0.0f);
            av = *reinterpret_cast<const uint4*>(e);
        }
        *reinterpret_cast<uint4*>(&As[a_r * AS + a_k]) = av;
        const int k = k0 + b_k, c = tile_col + b_c;
        uint4 bv;
        if (N % 8 == 0 && k < K && c < N) {
            bv = *reinterpret_cast<const uint4*>(&B[k * N + c]);
        } else {
            __nv_bfloat16 e[8];
            for (int s = 0; s < 8; ++s) e[s] = (k < K && c + s < N) ? B[k * N + c + s] : __float2bfloat16(0.0f);
            bv = *reinterpret_cast<const uint4*>(e);
        }
        *reinterpret_cast<uint4*>(&Bs[b_k * BS + b_c]) = bv;
        __syncthreads();
        unsigned fa[2][4], fb[4][2];
        for (int mi = 0; mi < 2; ++mi) {
            const __nv_bfloat16* p = &As[(wm * 32 + mi * 16 + l % 8 + 8 * ((l / 8) % 2)) * AS + 8 * (l / 16)];
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                         : "=r"(fa[mi][0]), "=r"(fa[mi][1]), "=r"(fa[mi][2]), "=r"(fa[mi][3])
                         : "r"(smem_addr(p)));
        }
        for (int ni = 0; ni < 4; ++ni) {
            const __nv_bfloat16* p = &Bs[(l % 16) * BS + wn * 32 + ni * 8];
            asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                         : "=r"(fb[ni][0]), "=r"(fb[ni][1])
                         : "r"(smem_addr(p)));
        }
        for (int mi = 0; mi < 2; ++mi)
            for (int ni = 0; ni < 4; ++ni)
                asm volatile(
                    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                    "{%0, %1, %2, %3};"
                    : "+f"(acc[mi][ni][0]), "+f"(acc[mi][ni][1]), "+f"(acc[mi][ni][2]), "+f"(acc[mi][ni][3])
                    : "r"(fa[mi][0]), "r"(fa[mi][1]), "r"(fa[mi][2]), "r"(fa[mi][3]), "r"(fb[ni][0]), "r"(fb[ni][1]));
        __syncthreads();
    }
    const int g = l / 4, q = l % 4;
    float* Cw = C + (tile_row + wm * 32 + g) * N + tile_col + wn * 32 + 2 * q;
    for (int mi = 0; mi < 2; ++mi)
        for (int ni = 0; ni < 4; ++ni)
            for (int e = 0; e < 4; ++e) {
                const int i = mi * 16 + 8 * (e / 2), j = ni * 8 + e % 2;
                if (tile_row + wm * 32 + g + i < M && tile_col + wn * 32 + 2 * q + j < N)
                    Cw[i * N + j] = fmaf(alpha, acc[mi][ni][e], beta * Cw[i * N + j]);
            }
}
