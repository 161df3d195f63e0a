// Hand-written CUDA reference for tests/ui/accept/kernels/42_device_sum_and_max.prism:
// device-wide sum and maximum in one launch each (prism.std.device's `device_sum` and
// `device_reduce`, CUB's `DeviceReduce::Sum` and `::Max` in a single pass). Each thread
// folds ITEMS striped items per tile of a grid-stride loop; the block combines its threads'
// values (warp butterflies, one shared slot per warp: the sum's warp totals added by every
// thread, the maximum's combined by thread 0 and broadcast); thread 0 publishes the block's
// part, fences and takes a ticket; the block that takes the last ticket resets the counter
// and combines every block's part the same way. Written as an expert would with the same
// algorithm (test data for the SASS gate, crates/prism_gpu/tests/sass.rs; not part of the
// product).
#define ITEMS 16

__device__ __forceinline__ float warp_sum(float v)
{
    for (int k = 0; k < 5; ++k) v += __shfl_xor_sync(0xffffffffu, v, 1 << k);
    return __shfl_sync(0xffffffffu, v, 0);
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int k = 0; k < 5; ++k) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1 << k));
    return __shfl_sync(0xffffffffu, v, 0);
}

__device__ __forceinline__ float block_sum(float* slots, float v)
{
    const float s = warp_sum(v);
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = s;
    __syncthreads();
    float total = slots[0];
    for (int i = 1; i < (int)blockDim.x / 32; ++i) total += slots[i];
    __syncthreads();
    return total;
}

__device__ __forceinline__ float block_max(float* slots, float v)
{
    const float s = warp_max(v);
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float acc = slots[0];
        for (int i = 1; i < (int)blockDim.x / 32; ++i) acc = fmaxf(acc, slots[i]);
        slots[32] = acc;
    }
    __syncthreads();
    const float total = slots[32];
    __syncthreads();
    return total;
}

// Thread 0 publishes the block's part and takes a ticket; true in every thread of the block
// that took the last one.
__device__ __forceinline__ bool publish(int* last, float part, float* parts, int* counter)
{
    if (threadIdx.x == 0) {
        *(volatile float*)&parts[blockIdx.x] = part;
        __threadfence();
        const int ticket = atomicAdd(counter, 1);
        *last = 0;
        if (ticket == (int)gridDim.x - 1) {
            *(volatile int*)counter = 0;
            __threadfence();
            *last = 1;
        }
    }
    __syncthreads();
    const bool is_last = *last == 1;
    __syncthreads();
    return is_last;
}

extern "C" __global__ void sum_all(int n, const float* __restrict__ x, float* __restrict__ parts,
                                   int* __restrict__ counter, float* __restrict__ total)
{
    __shared__ float slots[33];
    __shared__ int last;
    const int t = threadIdx.x;
    const int tile = blockDim.x * ITEMS;
    float acc = 0.0f;
    for (int base = blockIdx.x * tile; base < n; base += gridDim.x * tile) {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const int at = base + i * blockDim.x + t;
            if (at < n) acc += x[at];
        }
    }
    const float part = block_sum(slots, acc);
    if (publish(&last, part, parts, counter)) {
        float mine = 0.0f;
        for (int j = t; j < (int)gridDim.x; j += blockDim.x) mine += *(volatile float*)&parts[j];
        const float all = block_sum(slots, mine);
        if (t == 0) total[0] = all;
    }
}

extern "C" __global__ void max_all(int n, const float* __restrict__ x, float* __restrict__ parts,
                                   int* __restrict__ counter, float* __restrict__ biggest)
{
    __shared__ float slots[33];
    __shared__ int last;
    const int t = threadIdx.x;
    const int tile = blockDim.x * ITEMS;
    float acc = -1e30f;
    for (int base = blockIdx.x * tile; base < n; base += gridDim.x * tile) {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const int at = base + i * blockDim.x + t;
            if (at < n) acc = fmaxf(acc, x[at]);
        }
    }
    const float part = block_max(slots, acc);
    if (publish(&last, part, parts, counter)) {
        float mine = -1e30f;
        for (int j = t; j < (int)gridDim.x; j += blockDim.x) mine = fmaxf(mine, *(volatile float*)&parts[j]);
        const float all = block_max(slots, mine);
        if (t == 0) biggest[0] = all;
    }
}
