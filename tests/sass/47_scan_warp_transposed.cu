// Hand-written CUDA reference for tests/ui/accept/kernels/47_scan_warp_transposed.prism:
// kernel 35's reference (single-pass decoupled look-back, packed 64-bit status words, a
// warp-wide look-back window, 256 threads x 16 items) with CUB's warp transposes: each warp
// loads and stores its own 512-item segment striped through its own padded region of the
// exchange array, ordered by __syncwarp instead of __syncthreads, written as an expert would
// (test data for the SASS gate, crates/prism_gpu/tests/sass.rs; not part of the product).
// Wrapping adds: the unsigned arithmetic Prism defines.
#define THREADS 256
#define ITEMS 16
#define TILE (THREADS * ITEMS)
#define WARPS (THREADS / 32)
#define SEGMENT (32 * ITEMS)
#define REGION (SEGMENT + SEGMENT / 32)
#define SLOT(i) ((i) + (i) / 32)
// CUB's look-back delays (sm_90 tuning for 4-byte sums), for grids of at least DELAY_GRID
// blocks: sleep before the first look, and before each load of a word again.
#define DELAY_FIRST 1245
#define DELAY_POLL 648
#define DELAY_GRID 500

__device__ __forceinline__ unsigned long long pack(unsigned flag, unsigned value)
{
    return ((unsigned long long)flag << 32) | value;
}

extern "C" __global__ void __launch_bounds__(THREADS) scan_warp_transposed(int n, const int* __restrict__ x,
                                                                           int* __restrict__ out,
                                                                           int* __restrict__ tile_counter,
                                                                           unsigned long long* __restrict__ status)
{
    __shared__ int ticket_s;
    __shared__ int prefix_s;
    __shared__ __align__(16) unsigned warp_s[WARPS];
    __shared__ unsigned exchange[WARPS * REGION];
    if (threadIdx.x == 0) ticket_s = atomicAdd(tile_counter, 1);
    __syncthreads();
    const int tile = ticket_s;
    const int base = tile * TILE;
    const unsigned lane = threadIdx.x % 32, w = threadIdx.x / 32;
    const int seg = base + (int)w * SEGMENT;
    unsigned* region = &exchange[w * REGION];
    for (int i = 0; i < ITEMS; ++i) {
        const int g = seg + i * 32 + (int)lane;
        region[SLOT(i * 32 + lane)] = g < n ? x[g] : 0;
    }
    __syncwarp();
    unsigned items[ITEMS];
    for (int i = 0; i < ITEMS; ++i) items[i] = region[SLOT(lane * ITEMS + i)];
    for (int k = 1; k < ITEMS; ++k) items[k] += items[k - 1];
    unsigned incl = items[ITEMS - 1];
    for (int k = 0; k < 5; ++k) {
        const unsigned up = __shfl_up_sync(0xffffffffu, incl, 1 << k);
        if (lane >= (1u << k)) incl += up;
    }
    if (lane == 31) warp_s[w] = incl;
    __syncthreads();
    unsigned aggregate = 0, warp_prefix = 0;
    for (int k = 0; k < WARPS; ++k) {
        aggregate += warp_s[k];
        if (k < w) warp_prefix += warp_s[k];
    }
    if (w == 0) {
        unsigned exclusive = 0;
        if (tile == 0) {
            if (lane == 0) *(volatile unsigned long long*)&status[0] = pack(2, aggregate);
        } else {
            if (lane == 0) *(volatile unsigned long long*)&status[tile] = pack(1, aggregate);
            int base = tile - 1;
            const bool sleeps = gridDim.x >= DELAY_GRID;
            if (sleeps) __nanosleep(DELAY_FIRST);
            while (true) {
                const int j = base - (int)lane;
                unsigned long long word = pack(2, 0);
                if (j >= 0) {
                    word = *(volatile unsigned long long*)&status[j];
                    while (word == 0) {
                        if (sleeps) __nanosleep(DELAY_POLL);
                        word = *(volatile unsigned long long*)&status[j];
                    }
                }
                const unsigned value = (unsigned)word;
                const unsigned found = __ballot_sync(0xffffffffu, (word >> 32) == 2);
                if (found != 0) {
                    const unsigned stop = __ffs(found) - 1;
                    exclusive += __reduce_add_sync(0xffffffffu, lane <= stop ? value : 0);
                    break;
                }
                exclusive += __reduce_add_sync(0xffffffffu, value);
                base -= 32;
            }
            if (lane == 0) *(volatile unsigned long long*)&status[tile] = pack(2, exclusive + aggregate);
        }
        if (lane == 0) prefix_s = exclusive;
    }
    __syncthreads();
    const unsigned offset = prefix_s + warp_prefix + incl - items[ITEMS - 1];
    for (int k = 0; k < ITEMS; ++k) items[k] += offset;
    // The barriers above also end the blocked reads of the region: it can be rewritten.
    for (int k = 0; k < ITEMS; ++k) region[SLOT(lane * ITEMS + k)] = items[k];
    __syncwarp();
    for (int i = 0; i < ITEMS; ++i) {
        const int g = seg + i * 32 + (int)lane;
        if (g < n) out[g] = region[SLOT(i * 32 + lane)];
    }
}
