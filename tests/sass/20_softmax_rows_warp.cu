// Hand-written CUDA reference for tests/ui/accept/kernels/20_softmax_rows_warp.prism: a
// numerically stable softmax of each row, one warp per row, three strided passes over the
// row (max, sum of exponentials, normalised output) with butterfly all-reductions between
// them, written as an expert would (test data for the SASS gate,
// crates/prism_gpu/tests/sass.rs; not part of the product).
__device__ __forceinline__ float warp_allreduce_max(float v)
{
    for (int k = 0; k < 5; ++k) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1 << k));
    return __shfl_sync(0xffffffffu, v, 0);
}

__device__ __forceinline__ float warp_allreduce_sum(float v)
{
    for (int k = 0; k < 5; ++k) v += __shfl_xor_sync(0xffffffffu, v, 1 << k);
    return __shfl_sync(0xffffffffu, v, 0);
}

extern "C" __global__ void softmax_rows(int rows, int cols, const float* __restrict__ x, float* __restrict__ y)
{
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (r >= rows) return;
    const int lane = threadIdx.x % 32;
    const float* row = x + r * cols;
    float m = row[0];
    for (int c = lane; c < cols; c += 32) m = fmaxf(m, row[c]);
    const float row_max = warp_allreduce_max(m);
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) s += expf(row[c] - row_max);
    const float inv = 1.0f / warp_allreduce_sum(s);
    for (int c = lane; c < cols; c += 32) y[r * cols + c] = expf(row[c] - row_max) * inv;
}
