// Hand-written CUDA reference for tests/ui/accept/kernels/06_sgemm_4_register_tiling.prism:
// the same algorithm, tiles and loop order, written as an expert would (test data for the
// SASS gate, crates/prism_gpu/tests/sass.rs; not part of the product). 64 x 64 block tile,
// BK = 8, a 4 x 4 register tile per thread, A staged transposed (k-major), zeros staged
// outside A and B, stores outside C skipped. Products feed additions through fmaf, as
// Prism's contraction rule makes them, so both kernels compute the same bits.
#define BM 64
#define BN 64
#define BK 8
#define TM 4
#define TN 4
#define THREADS ((BM / TM) * (BN / TN))

extern "C" __global__ void __launch_bounds__(256) sgemm_register_tiles(int M, int N, int K, float alpha,
                                                                        const float* __restrict__ A,
                                                                        const float* __restrict__ B,
                                                                        float beta, float* __restrict__ C)
{
    __shared__ float As[BK * BM];
    __shared__ float Bs[BK * BN];
    const int tiles_n = (N + BN - 1) / BN;
    const int b = blockIdx.x;
    const int tile_row = (b / tiles_n) * BM;
    const int tile_col = (b % tiles_n) * BN;
    const int t = threadIdx.x;
    const int thread_row = t / (BN / TN);
    const int thread_col = t % (BN / TN);
    float acc[TM][TN] = {};
    float reg_m[TM];
    float reg_n[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int s = 0; s < BM * BK / THREADS; ++s) {
            const int e = t + s * THREADS;
            const int m = tile_row + e / BK;
            const int k = k0 + e % BK;
            As[(e % BK) * BM + e / BK] = (m < M && k < K) ? A[m * K + k] : 0.0f;
        }
        for (int s = 0; s < BK * BN / THREADS; ++s) {
            const int e = t + s * THREADS;
            const int k = k0 + e / BN;
            const int n = tile_col + e % BN;
            Bs[e] = (k < K && n < N) ? B[k * N + n] : 0.0f;
        }
        __syncthreads();
        for (int kk = 0; kk < BK; ++kk) {
            for (int i = 0; i < TM; ++i) reg_m[i] = As[kk * BM + thread_row * TM + i];
            for (int j = 0; j < TN; ++j) reg_n[j] = Bs[kk * BN + thread_col * TN + j];
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(reg_m[i], reg_n[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) {
            const int r = tile_row + thread_row * TM + i;
            const int c = tile_col + thread_col * TN + j;
            if (r < M && c < N) C[r * N + c] = fmaf(alpha, acc[i][j], beta * C[r * N + c]);
        }
}
