// Hand-written CUDA reference for tests/ui/accept/kernels/49_softmax_rows_block.prism: a
// numerically stable softmax of each row, one block of 256 threads per row, each thread
// holding 16 values of the row in registers (float4s t, t + 256, t + 512, t + 768 when the
// row is a whole number of float4s, else columns t, t + 256, ...), columns past 4096 read
// again from memory; the maximum and the sum are block all-reductions (warp butterflies,
// one slot per warp, the warps' totals combined by every thread in warp order), written as
// an expert would with the same algorithm (test data
// for the SASS gate, crates/prism_gpu/tests/sass.rs; not part of the product).
// Pending (compared and printed, not gated; BENCHMARKS.md, SASS gate, 2026-11-26 night): the
// same memory instructions, FFMAs, barriers and registers, but 7% more instructions, from
// the zeroed local arrays (the language's semantics; 16 CS2R) and the index arithmetic of
// the held columns.
#define THREADS 256
#define HELD 16
#define CAP (THREADS * HELD)

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

__device__ __forceinline__ float block_allreduce_max(float* slots, float v)
{
    const float s = warp_allreduce_max(v);
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = s;
    __syncthreads();
    float total = slots[0];
    for (int i = 1; i < (int)blockDim.x / 32; ++i) total = fmaxf(total, slots[i]);
    __syncthreads();
    return total;
}

__device__ __forceinline__ float block_allreduce_sum(float* slots, float v)
{
    const float s = warp_allreduce_sum(v);
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = s;
    __syncthreads();
    float total = slots[0];
    for (int i = 1; i < (int)blockDim.x / 32; ++i) total += slots[i];
    __syncthreads();
    return total;
}

extern "C" __global__ void __launch_bounds__(THREADS)
    softmax_rows_block(int rows, int cols, const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float slots[32];
    const int t = threadIdx.x;
    const bool vec = cols % 4 == 0;
    const float* xr = x + blockIdx.x * cols;
    float* yr = y + blockIdx.x * cols;
    // The column of held value k.
    int at[HELD];
#pragma unroll
    for (int k = 0; k < HELD; ++k) at[k] = vec ? (t + k / 4 * THREADS) * 4 + k % 4 : t + k * THREADS;
    float v[HELD];
    float m = xr[0];
#pragma unroll
    for (int q = 0; q < HELD / 4; ++q) {
        if (vec) {
            if (at[4 * q] < cols) {
                const float4 f = *reinterpret_cast<const float4*>(xr + at[4 * q]);
                v[4 * q] = f.x;
                v[4 * q + 1] = f.y;
                v[4 * q + 2] = f.z;
                v[4 * q + 3] = f.w;
#pragma unroll
                for (int e = 0; e < 4; ++e) m = fmaxf(m, v[4 * q + e]);
            }
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if (at[4 * q + e] < cols) {
                    v[4 * q + e] = xr[at[4 * q + e]];
                    m = fmaxf(m, v[4 * q + e]);
                }
            }
        }
    }
    for (int c = CAP + t; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
    const float row_max = block_allreduce_max(slots, m);
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < HELD; ++k) {
        if (at[k] < cols) {
            v[k] = expf(v[k] - row_max);
            s += v[k];
        }
    }
    for (int c = CAP + t; c < cols; c += THREADS) s += expf(xr[c] - row_max);
    const float inv = 1.0f / block_allreduce_sum(slots, s);
    if (vec) {
#pragma unroll
        for (int q = 0; q < HELD / 4; ++q) {
            if (at[4 * q] < cols) {
                *reinterpret_cast<float4*>(yr + at[4 * q]) =
                    make_float4(v[4 * q] * inv, v[4 * q + 1] * inv, v[4 * q + 2] * inv, v[4 * q + 3] * inv);
            }
        }
    } else {
#pragma unroll
        for (int k = 0; k < HELD; ++k) {
            if (at[k] < cols) yr[at[k]] = v[k] * inv;
        }
    }
    for (int c = CAP + t; c < cols; c += THREADS) yr[c] = expf(xr[c] - row_max) * inv;
}
