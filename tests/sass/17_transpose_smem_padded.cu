// Hand-written CUDA reference for tests/ui/accept/kernels/17_transpose_smem_padded.prism: the
// classic transpose through a padded 32 x 33 shared tile, 32 x 8 threads, four rows per
// thread each way, edges guarded, written as an expert would (test data for the SASS gate,
// crates/prism_gpu/tests/sass.rs; not part of the product).
#define TILE 32
#define ROWS_PER_PASS 8
#define PAD (TILE + 1)

extern "C" __global__ void __launch_bounds__(256) transpose(int rows, int cols, const float* __restrict__ a,
                                                             float* __restrict__ at)
{
    __shared__ float tile[TILE * PAD];
    const int tiles_c = (cols + TILE - 1) / TILE;
    const int b = blockIdx.x;
    const int r0 = (b / tiles_c) * TILE;
    const int c0 = (b % tiles_c) * TILE;
    const int t = threadIdx.x;
    const int tx = t % TILE, ty = t / TILE;
    for (int j = 0; j < TILE / ROWS_PER_PASS; ++j) {
        const int r = r0 + ty + j * ROWS_PER_PASS, c = c0 + tx;
        if (r < rows && c < cols) tile[(ty + j * ROWS_PER_PASS) * PAD + tx] = a[r * cols + c];
    }
    __syncthreads();
    for (int j = 0; j < TILE / ROWS_PER_PASS; ++j) {
        const int c = c0 + ty + j * ROWS_PER_PASS, r = r0 + tx;
        if (c < cols && r < rows) at[c * rows + r] = tile[tx * PAD + ty + j * ROWS_PER_PASS];
    }
}
