// Hand-written CUDA reference for tests/ui/accept/kernels/49_softmax_rows_block.prism: a
// numerically stable softmax of each row, one block of 256 threads per row. The row is cut
// in slots of W columns (W = 4, float4s, when the row is a whole number of them, else 1);
// thread t has the slots t, t + 256, ... and holds the first 16 / W of them in registers,
// the rest (rows past 4096 columns) read again from memory; the maximum and the sum are
// block all-reductions (warp butterflies, one slot per warp, the warps' totals combined by
// every thread in warp order). Written as an expert would with the same algorithm (test
// data for the SASS gate, crates/prism_gpu/tests/sass.rs; not part of the product).
#define THREADS 128
#define HELD 32

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
    __shared__ float red[32];
    const int t = threadIdx.x;
    const bool vec = cols % 4 == 0;
    const int width = vec ? 4 : 1;
    const int slots = (cols / width - t + THREADS - 1) / THREADS;
    const float* xr = x + blockIdx.x * cols;
    float* yr = y + blockIdx.x * cols;
    float v[HELD];
    const int held = slots * width;
    float m = xr[0];
    if (vec) {
#pragma unroll
        for (int q = 0; q < HELD / 4; ++q) {
            if (q < slots) {
                const float4 f = *reinterpret_cast<const float4*>(xr + (t + q * THREADS) * 4);
                v[4 * q] = f.x;
                v[4 * q + 1] = f.y;
                v[4 * q + 2] = f.z;
                v[4 * q + 3] = f.w;
#pragma unroll
                for (int e = 0; e < 4; ++e) m = fmaxf(m, v[4 * q + e]);
            }
        }
        for (int q = HELD / 4; q < slots; ++q) {
            const float4 f = *reinterpret_cast<const float4*>(xr + (t + q * THREADS) * 4);
            m = fmaxf(fmaxf(fmaxf(fmaxf(m, f.x), f.y), f.z), f.w);
        }
    } else {
#pragma unroll
        for (int k = 0; k < HELD; ++k) {
            if (k < slots) {
                v[k] = xr[t + k * THREADS];
                m = fmaxf(m, v[k]);
            }
        }
        for (int q = HELD; q < slots; ++q) m = fmaxf(m, xr[t + q * THREADS]);
    }
    const float row_max = block_allreduce_max(red, m);
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < HELD; ++k) {
        if (k < held) {
            v[k] = expf(v[k] - row_max);
            s += v[k];
        }
    }
    if (vec) {
        for (int q = HELD / 4; q < slots; ++q) {
            const float4 f = *reinterpret_cast<const float4*>(xr + (t + q * THREADS) * 4);
            s += expf(f.x - row_max);
            s += expf(f.y - row_max);
            s += expf(f.z - row_max);
            s += expf(f.w - row_max);
        }
    } else {
        for (int q = HELD; q < slots; ++q) s += expf(xr[t + q * THREADS] - row_max);
    }
    const float inv = 1.0f / block_allreduce_sum(red, s);
    if (vec) {
#pragma unroll
        for (int q = 0; q < HELD / 4; ++q) {
            if (q < slots) {
                *reinterpret_cast<float4*>(yr + (t + q * THREADS) * 4) =
                    make_float4(v[4 * q] * inv, v[4 * q + 1] * inv, v[4 * q + 2] * inv, v[4 * q + 3] * inv);
            }
        }
        for (int q = HELD / 4; q < slots; ++q) {
            const float4 f = *reinterpret_cast<const float4*>(xr + (t + q * THREADS) * 4);
            *reinterpret_cast<float4*>(yr + (t + q * THREADS) * 4) =
                make_float4(expf(f.x - row_max) * inv, expf(f.y - row_max) * inv, expf(f.z - row_max) * inv,
                            expf(f.w - row_max) * inv);
        }
    } else {
#pragma unroll
        for (int k = 0; k < HELD; ++k) {
            if (k < slots) yr[t + k * THREADS] = v[k] * inv;
        }
        for (int q = HELD; q < slots; ++q) yr[t + q * THREADS] = expf(xr[t + q * THREADS] - row_max) * inv;
    }
}
