// Reduce: Prism's device-wide sum (tests/ui/accept/kernels/33_reduce_sum_vectorized.prism,
// built by `prism build --emit-host` into PRISM_KERNELS, see run.sh) against
// cub::DeviceReduce::Sum, and a device-to-device copy of the input as the bandwidth limit,
// at 2^20 .. 2^28 ints, with the L2 flushed before every timed run. GB/s count the bytes read
// once (4 per item; the copy's row counts its read only too). Exits 1 if a sum differs. Test
// tooling, not part of the product.
#include "common.cuh"
#include <cub/device/device_reduce.cuh>
#include <string>

#include PRISM_KERNELS

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    int dev = 0, sms = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // Enough blocks to fill every SM several times over; the kernel's loop strides over the rest.
    const unsigned blocks = unsigned(sms) * 8;
    L2Flush flush;
    print_header("GB/s");
    bool all_same = true;
    for (int log_n = 20; log_n <= 28; log_n += 2) {
        if (skip_size(log_n == 28)) continue;
        const int n = 1 << log_n;
        std::vector<int> x(n);
        Rng rng(100 + log_n);
        for (auto& v : x) v = int(rng.next() % 2001) - 1000;
        int *dx, *dcopy, *dsum_prism, *dsum_cub;
        CHECK(cudaMalloc(&dx, size_t(n) * 4));
        CHECK(cudaMalloc(&dcopy, size_t(n) * 4));
        CHECK(cudaMalloc(&dsum_prism, 4));
        CHECK(cudaMalloc(&dsum_cub, 4));
        CHECK(cudaMemcpy(dx, x.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
        // The kernel adds into out[0], which must be zero first (its contract): timed with it.
        auto prism = [&] {
            CHECK(cudaMemsetAsync(dsum_prism, 0, 4));
            CHECK(prism_launch_reduce_sum(blocks, 256, n, dx, dsum_prism));
        };
        size_t temp_bytes = 0;
        CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, dx, dsum_cub, n));
        void* temp = nullptr;
        CHECK(cudaMalloc(&temp, temp_bytes));
        auto cub_sum = [&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, dx, dsum_cub, n)); };
        auto copy = [&] { CHECK(cudaMemcpyAsync(dcopy, dx, size_t(n) * 4, cudaMemcpyDeviceToDevice)); };
        const double t_prism = time_ms(prism, 3, reps, &flush);
        const double t_cub = time_ms(cub_sum, 3, reps, &flush);
        const double t_copy = time_ms(copy, 3, reps, &flush);
        int sp = 0, sc = 0;
        CHECK(cudaMemcpy(&sp, dsum_prism, 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&sc, dsum_cub, 4, cudaMemcpyDeviceToHost));
        const bool same = sp == sc;
        all_same = all_same && same;
        const double bytes = 4.0 * n;
        const std::string size = "2^" + std::to_string(log_n);
        print_row("sum (33_reduce_sum_vectorized)", size.c_str(), bytes / (t_prism * 1e6), "CUB DeviceReduce::Sum",
                  bytes / (t_cub * 1e6), same);
        print_row("sum (33_reduce_sum_vectorized)", size.c_str(), bytes / (t_prism * 1e6),
                  "cudaMemcpy device to device (read bytes)", bytes / (t_copy * 1e6), true);
        cudaFree(temp);
        cudaFree(dx);
        cudaFree(dcopy);
        cudaFree(dsum_prism);
        cudaFree(dsum_cub);
    }
    return all_same ? 0 : 1;
}
