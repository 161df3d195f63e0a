// Shared pieces of the GPU benchmarks (bench/gpu/README.md): error checks, an L2 flush,
// timing with CUDA events (warm-up, then the median of repeated runs), deterministic
// inputs, and the row printer. Test data and tooling, not part of the product.
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                         cudaGetErrorString(e_));                                            \
            std::exit(2);                                                                    \
        }                                                                                    \
    } while (0)

// Evicts the L2 cache between timed runs of bandwidth-bound kernels: a memset of twice the
// L2's size touches every line.
struct L2Flush {
    void* buf = nullptr;
    size_t bytes = 0;
    L2Flush() {
        int dev = 0, l2 = 0;
        CHECK(cudaGetDevice(&dev));
        CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        bytes = size_t(l2) * 2;
        CHECK(cudaMalloc(&buf, bytes));
    }
    ~L2Flush() { cudaFree(buf); }
    void operator()() const { CHECK(cudaMemsetAsync(buf, 0, bytes)); }
};

// Median milliseconds of `reps` runs of `f` after `warmup` runs, each timed with events; with
// `flush`, the L2 is flushed before every run (outside the timed interval).
inline double time_ms(const std::function<void()>& f, int warmup, int reps, const L2Flush* flush) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < warmup; ++i) f();
    CHECK(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (int i = 0; i < reps; ++i) {
        if (flush) (*flush)();
        CHECK(cudaEventRecord(start));
        f();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, start, stop));
        ms.push_back(t);
    }
    CHECK(cudaGetLastError());
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

// Whether `got` is within `tol` of `want` in the relative Frobenius norm, elements read as
// doubles through `value`: gemm outputs summed in different orders differ in the last bits.
template <class T, class V>
bool close_in_norm(const std::vector<T>& got, const std::vector<T>& want, double tol, V value) {
    double diff = 0, norm = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        const double p = value(got[i]), q = value(want[i]);
        diff += (p - q) * (p - q);
        norm += q * q;
    }
    return std::sqrt(diff) <= tol * std::sqrt(norm);
}

template <class T>
bool close_in_norm(const std::vector<T>& got, const std::vector<T>& want, double tol) {
    return close_in_norm(got, want, tol, [](T x) { return double(x); });
}

// Whether a row's size is skipped: with `PRISM_BENCH_SIZES=targets` in the environment a
// harness runs only the sizes issue 10 sets targets at (4096^2 and 8192^2 for the gemms,
// 2^28 items for the scans and sums, the largest shapes of the row kernels), so that a
// GPU session's few minutes go to more kernels (bench/gpu/session.sh, `all`).
inline bool skip_size(bool is_target) {
    const char* sizes = std::getenv("PRISM_BENCH_SIZES");
    return sizes != nullptr && std::string(sizes) == "targets" && !is_target;
}

// SplitMix64: the same stream on every machine.
struct Rng {
    unsigned long long s;
    explicit Rng(unsigned long long seed) : s(seed) {}
    unsigned long long next() {
        unsigned long long z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [-1, 1) with 24 significant bits.
    float uniform() { return float(next() >> 40) / float(1 << 23) - 1.0f; }
};

inline void print_header(const char* unit) {
    std::printf("| kernel | size | Prism (%s) | baseline | baseline (%s) | Prism / baseline | output |\n", unit,
                unit);
    std::printf("| --- | --- | --: | --- | --: | --: | --- |\n");
}

inline void print_row(const char* kernel, const char* size, double prism, const char* base_name, double base,
                      bool same) {
    std::printf("| %s | %s | %.1f | %s | %.1f | %.1f%% | %s |\n", kernel, size, prism, base_name, base,
                100.0 * prism / base, same ? "matches" : "DIFFERS");
}
