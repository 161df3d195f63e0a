// Hand-written CUDA reference for tests/ui/accept/kernels/33_reduce_sum_vectorized.prism:
// the same algorithm written as an expert would (test data for the SASS gate,
// crates/prism_gpu/tests/sass.rs; not part of the product). A grid-stride loop of four int4
// loads per pass while four remain (the items per thread written out, as CUB does, rather
// than left to the compiler's unrolling), then one per pass, then the tail; the warp's sum with __reduce_add_sync, the warps' sums through shared
// memory, and one atomicAdd per block. Wrapping adds: the unsigned arithmetic Prism defines.
#define THREADS 256
#define WARPS (THREADS / 32)

extern "C" __global__ void __launch_bounds__(256) reduce_sum(int n, const int* __restrict__ x, int* __restrict__ out)
{
    __shared__ int warp_sums[WARPS];
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    unsigned acc = 0;
    int i = g;
    const int4* x4 = reinterpret_cast<const int4*>(x);
#pragma unroll 1
    while (i < n / 4 - 3 * stride) {
        int4 v[4];
        for (int u = 0; u < 4; ++u) v[u] = x4[i + u * stride];
        for (int u = 0; u < 4; ++u) acc += (unsigned)v[u].x + (unsigned)v[u].y + (unsigned)v[u].z + (unsigned)v[u].w;
        i += 4 * stride;
    }
#pragma unroll 1
    while (i < n / 4) {
        const int4 v = x4[i];
        acc += (unsigned)v.x + (unsigned)v.y + (unsigned)v.z + (unsigned)v.w;
        i += stride;
    }
    if (4 * (n / 4) + g < n) acc += (unsigned)x[4 * (n / 4) + g];
    const unsigned s = __reduce_add_sync(0xffffffffu, acc);
    const int w = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) warp_sums[w] = (int)s;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned total = 0;
        for (int k = 0; k < WARPS; ++k) total += (unsigned)warp_sums[k];
        atomicAdd(out, (int)total);
    }
}
