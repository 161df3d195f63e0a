// Hand-written CUDA reference for tests/ui/accept/kernels/05_sgemm_3_smem_tiling.prism: the
// same algorithm and tiles, written as an expert would (test data for the SASS gate,
// crates/prism_gpu/tests/sass.rs). A 32 x 32 tile of C per block of 1024 threads; each K
// step stages a 32 x 32 tile of A and of B (zeros outside the matrices), synchronises,
// accumulates, synchronises. Products feed additions through fmaf, as Prism's contraction
// rule makes them.
#define BS 32

extern "C" __global__ void __launch_bounds__(1024) sgemm_smem(int M, int N, int K, float alpha,
                                                              const float* __restrict__ A,
                                                              const float* __restrict__ B,
                                                              float beta, float* __restrict__ C)
{
    __shared__ float As[BS * BS];
    __shared__ float Bs[BS * BS];
    const int tiles_n = (N + BS - 1) / BS;
    const int b = blockIdx.x;
    const int tile_row = (b / tiles_n) * BS;
    const int tile_col = (b % tiles_n) * BS;
    const int t = threadIdx.x;
    const int r = t / BS;
    const int c = t % BS;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BS) {
        const int a_row = tile_row + r, a_col = k0 + c;
        As[t] = (a_row < M && a_col < K) ? A[a_row * K + a_col] : 0.0f;
        const int b_row = k0 + r, b_col = tile_col + c;
        Bs[t] = (b_row < K && b_col < N) ? B[b_row * N + b_col] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < BS; ++kk) acc = fmaf(As[r * BS + kk], Bs[kk * BS + c], acc);
        __syncthreads();
    }
    if (tile_row + r < M && tile_col + c < N) {
        float* out = &C[(tile_row + r) * N + tile_col + c];
        *out = fmaf(alpha, acc, beta * *out);
    }
}
