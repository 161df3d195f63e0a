// Device-wide float sum from the standard library: Prism's `42_device_sum_and_max` (`sum_all`:
// prism.std's device_sum, one launch, the last block combining the parts; built by `prism
// build --emit-host` into PRISM_KERNELS, see run.sh) against cub::DeviceReduce::Sum on
// floats, and a device-to-device copy of the input as the bandwidth limit, at 2^20 .. 2^28
// floats, the L2 flushed before every timed run. GB/s count the bytes read once (4 per
// item). Exits 1 if a sum differs by more than the rounding of a float sum allows
// (1e-5 of the sum of magnitudes: the orders differ). Test tooling, not part of the product.
#include "common.cuh"
#include <cub/device/device_reduce.cuh>
#include <cmath>
#include <string>

#include PRISM_KERNELS

// The row label: a variant built with `prism build -D` names itself (variants.txt).
#ifndef PRISM_DSUM_BLOCKS_PER_SM
#define PRISM_DSUM_BLOCKS_PER_SM 8
#endif
#ifndef PRISM_DSUM_LABEL
#define PRISM_DSUM_LABEL "42_device_sum_and_max"
#endif

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    int dev = 0, sms = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // Blocks of 256 threads per SM (8 by default: all the threads an SM holds, so that as
    // many loads as it can hold are in flight; the variants with `_b4` launch half).
    const unsigned blocks = unsigned(sms) * PRISM_DSUM_BLOCKS_PER_SM;
    L2Flush flush;
    print_header("GB/s");
    bool all_same = true;
    for (int log_n = 20; log_n <= 28; log_n += 2) {
        if (skip_size(log_n == 28)) continue;
        const int n = 1 << log_n;
        std::vector<float> x(n);
        Rng rng(200 + log_n);
        double magnitude = 0;
        for (auto& v : x) {
            v = rng.uniform();
            magnitude += std::fabs(v);
        }
        float *dx, *dcopy, *dparts, *dsum_prism, *dsum_cub;
        int* dcounter;
        CHECK(cudaMalloc(&dx, size_t(n) * 4));
        CHECK(cudaMalloc(&dcopy, size_t(n) * 4));
        CHECK(cudaMalloc(&dparts, size_t(blocks) * 4));
        CHECK(cudaMalloc(&dcounter, 4));
        CHECK(cudaMalloc(&dsum_prism, 4));
        CHECK(cudaMalloc(&dsum_cub, 4));
        CHECK(cudaMemcpy(dx, x.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
        // The counter is zero before the first launch; each launch leaves it zero again.
        CHECK(cudaMemset(dcounter, 0, 4));
        auto prism = [&] { CHECK(prism_launch_sum_all(blocks, 256, n, dx, dparts, dcounter, dsum_prism)); };
        size_t temp_bytes = 0;
        CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, dx, dsum_cub, n));
        void* temp = nullptr;
        CHECK(cudaMalloc(&temp, temp_bytes));
        auto cub_sum = [&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, dx, dsum_cub, n)); };
        auto copy = [&] { CHECK(cudaMemcpyAsync(dcopy, dx, size_t(n) * 4, cudaMemcpyDeviceToDevice)); };
        const double t_prism = time_ms(prism, 3, reps, &flush);
        const double t_cub = time_ms(cub_sum, 3, reps, &flush);
        const double t_copy = time_ms(copy, 3, reps, &flush);
        float sp = 0, sc = 0;
        CHECK(cudaMemcpy(&sp, dsum_prism, 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&sc, dsum_cub, 4, cudaMemcpyDeviceToHost));
        const bool same = std::fabs(double(sp) - double(sc)) <= 1e-5 * magnitude;
        all_same = all_same && same;
        const double bytes = 4.0 * n;
        const std::string size = "2^" + std::to_string(log_n);
        print_row("float sum (" PRISM_DSUM_LABEL ", prism.std device_sum)", size.c_str(), bytes / (t_prism * 1e6),
                  "CUB DeviceReduce::Sum", bytes / (t_cub * 1e6), same);
        print_row("float sum (" PRISM_DSUM_LABEL ", prism.std device_sum)", size.c_str(), bytes / (t_prism * 1e6),
                  "cudaMemcpy device to device (read bytes)", bytes / (t_copy * 1e6), true);
        cudaFree(temp);
        cudaFree(dx);
        cudaFree(dcopy);
        cudaFree(dparts);
        cudaFree(dcounter);
        cudaFree(dsum_prism);
        cudaFree(dsum_cub);
    }
    return all_same ? 0 : 1;
}
